-- Nexmark q11 on Flink SQL: bids per bidder per session (10-second gap).
-- nexmark-flink's q11 writes the legacy GROUP BY SESSION(dateTime, ...)
-- with SESSION_START / SESSION_ROWTIME; this is the session window TVF of
-- Flink 1.19+, the same sessions.
CREATE TABLE q11_out (bidder BIGINT, bid_count BIGINT,
                      window_start TIMESTAMP(3), window_end TIMESTAMP(3))
WITH ('connector' = 'filesystem', 'path' = '${out}', 'format' = 'csv');
INSERT INTO q11_out
SELECT bidder, count(*) AS bid_count, window_start, window_end
  FROM TABLE(SESSION(TABLE bid PARTITION BY bidder, DESCRIPTOR(date_time), INTERVAL '10' SECOND))
 GROUP BY bidder, window_start, window_end;
