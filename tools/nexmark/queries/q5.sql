-- Nexmark q5: hot items, the auctions with the most bids in each sliding
-- window (10 seconds, every 2 seconds).
-- Differs from Flink: only the first stage runs: the count of bids per
-- auction and window (Flink's AuctionBids).  Flink's second stage (the
-- maximum count per window, MaxBids) and the join of the two need a
-- subquery over a continuous result and a join, which sluice's continuous
-- queries do not have yet; SELECT over the result table gives the top
-- auctions of a window meanwhile:
--   SELECT * FROM q5 WHERE (window_start, num) IN
--     (SELECT window_start, max(num) FROM q5 GROUP BY window_start);
-- Flink's HOP(dateTime, INTERVAL '2' SECOND, INTERVAL '10' SECOND) is
-- WINDOW(date_time, size, slide) here (size first).
CREATE CONTINUOUS QUERY q5 WITH (trigger = 'available_now', output_mode = 'update') AS
SELECT auction, count(*) AS num, window_start, window_end
  FROM bid
 GROUP BY WINDOW(date_time, INTERVAL '10 seconds', INTERVAL '2 seconds'), auction;
