-- Nexmark q7: highest bid in each 10-second window.
-- Differs from Flink: only the aggregate stage runs (the maximum price per
-- tumbling window); Flink then joins the bids with that maximum to return
-- the winning bids, which needs a stream join (not in sluice yet).
-- Flink's TUMBLE(dateTime, INTERVAL '10' SECOND) is WINDOW(date_time, size).
CREATE CONTINUOUS QUERY q7 WITH (trigger = 'available_now', output_mode = 'update') AS
SELECT window_start, window_end, max(price) AS maxprice
  FROM bid
 GROUP BY WINDOW(date_time, INTERVAL '10 seconds');
