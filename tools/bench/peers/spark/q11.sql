-- Nexmark q11 on Spark: bids per bidder per session (10-second gap).
-- output_mode: complete
-- sluice's file uses update mode, which Spark refuses for session windows;
-- append mode would leave out the sessions the watermark has not closed
-- when availableNow stops.  Complete mode writes every session each batch
-- (the last batch's rows are the result, the one sluice's result table
-- holds); with one batch (the bench's default) it costs what update would.
SELECT bidder, count(*) AS bid_count,
       session_window.start AS window_start, session_window.end AS window_end
  FROM bid
 GROUP BY session_window(date_time, '10 seconds'), bidder
