-- Nexmark q3 on Spark: local item suggestion, as tools/nexmark/queries/q3.sql:
-- a stream-stream inner join with watermarks and sluice's time bound (the
-- person within 10 minutes before the auction or 1 minute after it), so
-- Spark can drop old state; append mode.
SELECT p.name, p.city, p.state, a.id
  FROM auction AS a JOIN person AS p
    ON a.seller = p.id
   AND p.date_time BETWEEN a.date_time - INTERVAL 10 MINUTES AND a.date_time + INTERVAL 1 MINUTE
 WHERE a.category = 10 AND p.state IN ('OR', 'ID', 'CA')
