-- Nexmark q5: hot items, the auctions with the most bids in each sliding
-- window (10 seconds, every 2 seconds).
-- Differs from Flink: Flink's one query counts the bids per auction and
-- window (AuctionBids), takes the maximum count per window (MaxBids) and
-- joins the two.  sluice runs it as a pipeline of three continuous queries
-- over two internal streams (docs/sql-reference.md, "Continuous queries"):
--   q5_count  the bids per auction and window, written INTO q5_auction_bids
--             once the watermark passes the window's end (append mode; at
--             the end of a bounded stream every window closes);
--   q5_max    the maximum count per window, INTO q5_max_bids;
--   q5        q5_auction_bids JOIN q5_max_bids on the window and
--             num >= maxn (Flink's condition).
-- q5_max runs in update mode and writes a window's maximum when it reads
-- the window's counts.  That is the window's final maximum, written once,
-- because q5_count writes all of a window's rows in one batch, in one
-- atomic append, and q5_max reads whole appends (no max_offsets_per_trigger
-- on q5_auction_bids: do not set one).  The windows of successive appends
-- are later and later, so the zero-delay watermarks on starttime drop no
-- row.  Output: Flink's auction and num, with the window's start and end.
-- An aggregation in update mode INTO a stream is refused unless it says
-- append_updates = true (docs/sql-reference.md, "INTO and output modes"):
-- here each window changes in one batch, so each is appended once.
-- Flink's HOP(dateTime, INTERVAL '2' SECOND, INTERVAL '10' SECOND) is
-- WINDOW(date_time, size, slide) here (size first).
CREATE STREAM q5_auction_bids (auction bigint, num bigint, starttime timestamp,
    endtime timestamp, WATERMARK FOR starttime AS starttime);
CREATE STREAM q5_max_bids (maxn bigint, starttime timestamp, endtime timestamp,
    WATERMARK FOR starttime AS starttime);
CREATE CONTINUOUS QUERY q5_count INTO q5_auction_bids
  WITH (trigger = 'available_now', output_mode = 'append') AS
SELECT auction, count(*) AS num, window_start AS starttime, window_end AS endtime
  FROM bid
 GROUP BY WINDOW(date_time, INTERVAL '10 seconds', INTERVAL '2 seconds'), auction;
CREATE CONTINUOUS QUERY q5_max INTO q5_max_bids
  WITH (trigger = '0', output_mode = 'update', append_updates = true) AS
SELECT max(num) AS maxn, starttime, endtime
  FROM q5_auction_bids
 GROUP BY starttime, endtime;
CREATE CONTINUOUS QUERY q5 WITH (trigger = '0') AS
SELECT a.auction, a.num, a.starttime, a.endtime
  FROM q5_auction_bids AS a JOIN q5_max_bids AS m
    ON a.starttime BETWEEN m.starttime AND m.starttime
   AND a.endtime = m.endtime AND a.num >= m.maxn;
