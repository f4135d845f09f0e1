-- Nexmark q7 on Flink SQL, the stage sluice runs
-- (tools/nexmark/queries/q7.sql): the highest price per tumbling 10-second
-- window (nexmark-flink's q7 then joins the bids back to it).
CREATE TABLE q7_out (window_start TIMESTAMP(3), window_end TIMESTAMP(3), maxprice BIGINT)
WITH ('connector' = 'filesystem', 'path' = '${out}', 'format' = 'csv');
INSERT INTO q7_out
SELECT window_start, window_end, max(price) AS maxprice
  FROM TABLE(TUMBLE(TABLE bid, DESCRIPTOR(date_time), INTERVAL '10' SECOND))
 GROUP BY window_start, window_end;
