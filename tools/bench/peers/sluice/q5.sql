-- Nexmark q5, FIRST STAGE ONLY, for the side-by-side benchmark (tools/bench/nexmark_peers.py):
-- the Spark and Flink versions beside it (../spark/q5.sql, ../flink/q5.sql) stop at this
-- stage for now, so sluice runs the same stage here and the three results can be
-- compared. The full query is tools/nexmark/queries/q5.sql (a pipeline).
CREATE CONTINUOUS QUERY q5 WITH (trigger = 'available_now', output_mode = 'update') AS
SELECT auction, count(*) AS num, window_start, window_end
  FROM bid
 GROUP BY WINDOW(date_time, INTERVAL '10 seconds', INTERVAL '2 seconds'), auction;
