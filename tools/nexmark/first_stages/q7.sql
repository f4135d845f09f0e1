-- Nexmark q7, its FIRST STAGE ONLY: the maximum price per 10-second tumbling
-- window.  For measuring that stage alone:
--   tools/bench/nexmark_bench.py --query-dir tools/nexmark/first_stages --queries q7
-- The whole query is tools/nexmark/queries/q7.sql.
CREATE CONTINUOUS QUERY q7 WITH (trigger = 'available_now', output_mode = 'update') AS
SELECT window_start, window_end, max(price) AS maxprice
  FROM bid
 GROUP BY WINDOW(date_time, INTERVAL '10 seconds');
