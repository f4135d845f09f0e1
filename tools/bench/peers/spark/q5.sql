-- Nexmark q5 on Spark, the stage sluice runs (tools/nexmark/queries/q5.sql):
-- bids per auction per sliding window of 10 seconds every 2 seconds
-- (Flink's AuctionBids), update mode.
SELECT auction, count(*) AS num, window.start AS window_start, window.end AS window_end
  FROM bid
 GROUP BY window(date_time, '10 seconds', '2 seconds'), auction
