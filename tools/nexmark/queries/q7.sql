-- Nexmark q7: highest bid, the bids with the highest price of each
-- 10-second tumbling window.
-- Differs from Flink: one Flink query joins the bids with a windowed
-- aggregate of the bids (the maximum price per window).  sluice's joins read
-- streams, so the aggregate is its own continuous query whose output goes
-- INTO a stream (a pipeline of two queries, docs/sql-reference.md,
-- "Continuous queries"): q7_max writes each window's maximum once the
-- watermark passes the window's end (append mode; at the end of a bounded
-- stream every window closes), and q7 joins the bids with that stream on
-- Flink's condition: price = maxprice and the bid's time in
-- [window_end - 10 seconds, window_end] (both ends included, as Flink's
-- BETWEEN: a bid at exactly window_end with the same price also matches).
-- Flink's TUMBLE(dateTime, INTERVAL '10' SECOND) is WINDOW(date_time, size).
CREATE STREAM q7_max_bids (date_time timestamp, maxprice bigint,
    WATERMARK FOR date_time AS date_time);
CREATE CONTINUOUS QUERY q7_max INTO q7_max_bids
  WITH (trigger = 'available_now', output_mode = 'append') AS
SELECT window_end AS date_time, max(price) AS maxprice
  FROM bid
 GROUP BY WINDOW(date_time, INTERVAL '10 seconds');
CREATE CONTINUOUS QUERY q7 WITH (trigger = '0') AS
SELECT b.auction, b.price, b.bidder, b.date_time, b.extra
  FROM bid AS b JOIN q7_max_bids AS m
    ON b.price = m.maxprice
   AND b.date_time BETWEEN m.date_time - INTERVAL '10 seconds' AND m.date_time;
