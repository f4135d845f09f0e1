-- Nexmark q8 on Spark: new users, nexmark-flink's q8 in one streaming query:
-- persons per tumbling 10-second window (id, name) and sellers per window,
-- each a streaming aggregation emitted when the watermark passes the
-- window's end, joined on id = seller and the window (a stream-stream join
-- after two aggregations; Spark 4 chains them in append mode).
-- output_mode: append
SELECT P.id, P.name, P.starttime
  FROM (SELECT id, name, window.start AS starttime, window.end AS endtime
          FROM person
         GROUP BY window(date_time, '10 seconds'), id, name) AS P
  JOIN (SELECT seller, window.start AS starttime, window.end AS endtime
          FROM auction
         GROUP BY window(date_time, '10 seconds'), seller) AS A
    ON P.id = A.seller AND P.starttime = A.starttime AND P.endtime = A.endtime
