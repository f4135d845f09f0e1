-- Nexmark q7, FIRST STAGE ONLY, for the side-by-side benchmark (tools/bench/nexmark_peers.py):
-- the Spark and Flink versions beside it (../spark/q7.sql, ../flink/q7.sql) stop at this
-- stage for now, so sluice runs the same stage here and the three results can be
-- compared. The full query is tools/nexmark/queries/q7.sql (a pipeline).
CREATE CONTINUOUS QUERY q7 WITH (trigger = 'available_now', output_mode = 'update') AS
SELECT window_start, window_end, max(price) AS maxprice
  FROM bid
 GROUP BY WINDOW(date_time, INTERVAL '10 seconds');
