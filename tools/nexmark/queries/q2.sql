-- Nexmark q2: selection, the bids of some auctions.
-- Differs from Flink: the % operator for MOD(auction, 123); same result.
CREATE CONTINUOUS QUERY q2 WITH (trigger = 'available_now') AS
SELECT auction, price FROM bid WHERE auction % 123 = 0;
