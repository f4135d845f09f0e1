-- Nexmark q0: pass-through.  Measures the cost of reading and writing rows.
-- Differs from Flink: the result goes to the query's result table (Flink
-- writes to a blackhole sink).
CREATE CONTINUOUS QUERY q0 WITH (trigger = 'available_now') AS
SELECT auction, bidder, price, date_time, extra FROM bid;
