-- Nexmark q2 on Flink SQL: selection (nexmark-flink's q2).
CREATE TABLE q2_out (auction BIGINT, price BIGINT)
WITH ('connector' = 'filesystem', 'path' = '${out}', 'format' = 'csv');
INSERT INTO q2_out SELECT auction, price FROM bid WHERE MOD(auction, 123) = 0;
