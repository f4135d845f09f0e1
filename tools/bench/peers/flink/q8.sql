-- Nexmark q8 on Flink SQL: new users, nexmark-flink's q8 as it is: persons
-- per tumbling 10-second window joined with sellers per window on the id
-- and the window, insert-only.
CREATE TABLE q8_out (id BIGINT, name STRING, starttime TIMESTAMP(3))
WITH ('connector' = 'filesystem', 'path' = '${out}', 'format' = 'csv');
INSERT INTO q8_out
SELECT P.id, P.name, P.starttime
  FROM (
    SELECT id, name, window_start AS starttime, window_end AS endtime
      FROM TABLE(TUMBLE(TABLE person, DESCRIPTOR(date_time), INTERVAL '10' SECOND))
     GROUP BY id, name, window_start, window_end
  ) P
  JOIN (
    SELECT seller, window_start AS starttime, window_end AS endtime
      FROM TABLE(TUMBLE(TABLE auction, DESCRIPTOR(date_time), INTERVAL '10' SECOND))
     GROUP BY seller, window_start, window_end
  ) A
  ON P.id = A.seller AND P.starttime = A.starttime AND P.endtime = A.endtime;
