-- Nexmark q1: currency conversion, dollars to euros.
-- Differs from Flink: 0.908 * price is numeric (Flink: DECIMAL(23, 3)), the
-- same values.
CREATE CONTINUOUS QUERY q1 WITH (trigger = 'available_now') AS
SELECT auction, bidder, 0.908 * price AS price, date_time, extra FROM bid;
