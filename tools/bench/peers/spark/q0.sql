-- Nexmark q0 on Spark Structured Streaming: pass-through (as
-- tools/nexmark/queries/q0.sql).
SELECT auction, bidder, price, date_time, extra FROM bid
