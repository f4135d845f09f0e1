-- Nexmark q1 on Flink SQL: currency conversion (nexmark-flink's q1).
CREATE TABLE q1_out (auction BIGINT, bidder BIGINT, price DECIMAL(23, 3),
                     date_time TIMESTAMP(3), extra STRING)
WITH ('connector' = 'filesystem', 'path' = '${out}', 'format' = 'csv');
INSERT INTO q1_out SELECT auction, bidder, 0.908 * price AS price, date_time, extra FROM bid;
