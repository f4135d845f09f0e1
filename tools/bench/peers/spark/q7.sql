-- Nexmark q7 on Spark: highest bid, nexmark-flink's q7 in one streaming
-- query: the maximum price per tumbling 10-second window (a streaming
-- aggregation, append mode: emitted when the watermark passes the window's
-- end) joined with the bids on price = maxprice and the bid's time in
-- [window_end - 10 seconds, window_end] (a stream-stream join with a time
-- bound; Spark 4 chains the two stateful operators in append mode).  Spark
-- reads the bid topic twice, once for each side.
-- output_mode: append
SELECT b.auction, b.bidder, b.price, b.date_time, b.extra
  FROM bid AS b
  JOIN (SELECT max(price) AS maxprice, window.end AS wend
          FROM bid
         GROUP BY window(date_time, '10 seconds')) AS m
    ON b.price = m.maxprice
   AND b.date_time BETWEEN m.wend - INTERVAL 10 SECONDS AND m.wend
