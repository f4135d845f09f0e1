-- Nexmark q0 on Flink SQL: pass-through (nexmark-flink's q0, into CSV files
-- instead of a blackhole so that the result can be checked).
CREATE TABLE q0_out (auction BIGINT, bidder BIGINT, price BIGINT,
                     date_time TIMESTAMP(3), extra STRING)
WITH ('connector' = 'filesystem', 'path' = '${out}', 'format' = 'csv');
INSERT INTO q0_out SELECT auction, bidder, price, date_time, extra FROM bid;
