-- Nexmark q5: hot items, the auctions with the most bids in each sliding
-- window (10 seconds, every 2 seconds).
-- As Flink's one query: the bids per auction and window (AuctionBids),
-- the maximum count per window (MaxBids, over the same counts) and their
-- join on the window and num >= maxn, in one statement.  It runs on the
-- operator graph (docs/engine.md, "Queries on the operator graph") with
-- output_mode = 'append': each aggregate emits a window's rows once, when
-- the watermark closes it (docs/sql-reference.md, "INTO and output
-- modes"), so the join takes each window's counts and maximum in the batch
-- that closes it and keeps them only while the interval (the window's
-- start, equal on both sides) needs them.  At the end of a bounded stream
-- every window closes.
-- Differs from Flink: Flink's HOP(dateTime, INTERVAL '2' SECOND,
-- INTERVAL '10' SECOND) is WINDOW(date_time, size, slide) here (size
-- first); the output adds the window's start and end to auction and num.
CREATE CONTINUOUS QUERY q5
  WITH (trigger = 'available_now', output_mode = 'append') AS
SELECT a.auction, a.num, a.starttime, a.endtime
  FROM (SELECT auction, count(*) AS num, window_start AS starttime,
               window_end AS endtime
          FROM bid
         GROUP BY WINDOW(date_time, INTERVAL '10 seconds', INTERVAL '2 seconds'),
                  auction) AS a
  JOIN (SELECT max(c.num) AS maxn, c.starttime, c.endtime
          FROM (SELECT count(*) AS num, window_start AS starttime,
                       window_end AS endtime
                  FROM bid
                 GROUP BY WINDOW(date_time, INTERVAL '10 seconds', INTERVAL '2 seconds'),
                          auction) AS c
         GROUP BY c.starttime, c.endtime) AS m
    ON a.starttime = m.starttime AND a.endtime = m.endtime AND a.num >= m.maxn;
