-- Nexmark q7 on Spark, the stage sluice runs (tools/nexmark/queries/q7.sql):
-- the highest price per tumbling 10-second window, update mode.
SELECT window.start AS window_start, window.end AS window_end, max(price) AS maxprice
  FROM bid
 GROUP BY window(date_time, '10 seconds')
