-- Nexmark q4 on Flink SQL: average price per category of the winning bids,
-- nexmark-flink's q4 as it is: a regular join of auction and bid, the
-- maximum per auction, the average per category, both aggregates updating
-- as bids come.  The result is a changelog (a filesystem sink refuses it),
-- so the runner collects it (the SELECT below) and applies the changes; the
-- final rows are the average of every auction's final maximum.  AVG of
-- BIGINT is BIGINT here (truncated): the check compares floor(avg_final).
SELECT Q.category, AVG(Q.final) AS avg_final
  FROM (
    SELECT MAX(B.price) AS final, A.category
      FROM auction A, bid B
     WHERE A.id = B.auction AND B.date_time BETWEEN A.date_time AND A.expires
     GROUP BY A.id, A.category
  ) Q
 GROUP BY Q.category;
