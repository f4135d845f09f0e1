-- Nexmark q5 on Flink SQL, the stage sluice runs
-- (tools/nexmark/queries/q5.sql): nexmark-flink's AuctionBids, the bids
-- per auction per hopping window of 10 seconds every 2 seconds.  Each
-- window's rows are emitted once, when the watermark passes its end (at
-- the end of the bounded scan for the last ones): the final values that
-- sluice's update mode leaves in its result table.
CREATE TABLE q5_out (auction BIGINT, num BIGINT,
                     window_start TIMESTAMP(3), window_end TIMESTAMP(3))
WITH ('connector' = 'filesystem', 'path' = '${out}', 'format' = 'csv');
INSERT INTO q5_out
SELECT auction, count(*) AS num, window_start, window_end
  FROM TABLE(HOP(TABLE bid, DESCRIPTOR(date_time), INTERVAL '2' SECOND, INTERVAL '10' SECOND))
 GROUP BY auction, window_start, window_end;
