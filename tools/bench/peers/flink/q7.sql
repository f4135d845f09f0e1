-- Nexmark q7 on Flink SQL: highest bid, nexmark-flink's q7 as it is: the
-- bids joined with the maximum price of each tumbling 10-second window
-- (a regular join: window_end is no time attribute), insert-only.
CREATE TABLE q7_out (auction BIGINT, bidder BIGINT, price BIGINT,
                     date_time TIMESTAMP(3), extra STRING)
WITH ('connector' = 'filesystem', 'path' = '${out}', 'format' = 'csv');
INSERT INTO q7_out
SELECT B.auction, B.bidder, B.price, B.date_time, B.extra
  FROM bid B
  JOIN (
    SELECT MAX(price) AS maxprice, window_end AS date_time
      FROM TABLE(TUMBLE(TABLE bid, DESCRIPTOR(date_time), INTERVAL '10' SECOND))
     GROUP BY window_start, window_end
  ) B1
  ON B.price = B1.maxprice
 WHERE B.date_time BETWEEN B1.date_time - INTERVAL '10' SECOND AND B1.date_time;
