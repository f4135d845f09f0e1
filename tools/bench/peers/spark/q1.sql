-- Nexmark q1 on Spark: currency conversion; 0.908 * price is
-- DECIMAL(23, 3), as Flink's and sluice's numeric.
SELECT auction, bidder, 0.908 * price AS price, date_time, extra FROM bid
