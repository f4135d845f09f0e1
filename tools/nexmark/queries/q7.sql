-- Nexmark q7: highest bid, the bids with the highest price of each
-- 10-second tumbling window.
-- As Flink's one query: the bids joined with the maximum price of their
-- tumbling window (a subquery in FROM) on price = maxprice and the bid's
-- time in [window_end - 10 seconds, window_end] (both ends included, as
-- Flink's BETWEEN: a bid at exactly window_end with the same price also
-- matches).  It runs on the operator graph (docs/engine.md, "Queries on
-- the operator graph") with output_mode = 'append': the aggregate emits a
-- window's maximum once, when the watermark closes the window
-- (docs/sql-reference.md, "INTO and output modes"), and the interval join
-- keeps the bids only until no window's maximum can still match them.  At
-- the end of a bounded stream every window closes.
-- Differs from Flink: TUMBLE(dateTime, INTERVAL '10' SECOND) is
-- WINDOW(date_time, size).
CREATE CONTINUOUS QUERY q7
  WITH (trigger = 'available_now', output_mode = 'append') AS
SELECT b.auction, b.price, b.bidder, b.date_time, b.extra
  FROM bid AS b
  JOIN (SELECT max(price) AS maxprice, window_end AS date_time
          FROM bid
         GROUP BY WINDOW(date_time, INTERVAL '10 seconds')) AS m
    ON b.price = m.maxprice
   AND b.date_time BETWEEN m.date_time - INTERVAL '10 seconds' AND m.date_time;
