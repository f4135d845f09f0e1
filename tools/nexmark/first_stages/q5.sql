-- Nexmark q5, its FIRST STAGE ONLY: bids per auction per sliding window (10 s
-- every 2 s), update mode.  For measuring that stage alone:
--   tools/bench/nexmark_bench.py --query-dir tools/nexmark/first_stages --queries q5
-- The whole query is tools/nexmark/queries/q5.sql.
CREATE CONTINUOUS QUERY q5 WITH (trigger = 'available_now', output_mode = 'update') AS
SELECT auction, count(*) AS num, window_start, window_end
  FROM bid
 GROUP BY WINDOW(date_time, INTERVAL '10 seconds', INTERVAL '2 seconds'), auction;
