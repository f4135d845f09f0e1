-- Nexmark q3 on Flink SQL: local item suggestion, nexmark-flink's q3 as it
-- is: a regular (unbounded) join of auction and person, insert-only.
CREATE TABLE q3_out (name STRING, city STRING, state STRING, id BIGINT)
WITH ('connector' = 'filesystem', 'path' = '${out}', 'format' = 'csv');
INSERT INTO q3_out
SELECT P.name, P.city, P.state, A.id
  FROM auction AS A INNER JOIN person AS P ON A.seller = P.id
 WHERE A.category = 10 AND (P.state = 'OR' OR P.state = 'ID' OR P.state = 'CA');
