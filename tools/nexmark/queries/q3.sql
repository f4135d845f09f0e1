-- Nexmark q3: local item suggestion, the auctions of category 10 with the
-- name, city and state of their seller when the seller lives in Oregon,
-- Idaho or California (auction JOIN person).
-- Differs from Flink: Flink's is a regular (unbounded) join, whose state
-- keeps every person and auction forever.  sluice joins two streams only
-- with a time bound (docs/engine.md, "Stream-stream interval joins"): a
-- seller is a person the generator has already made, at most 1,000 persons
-- back (num_active_people) or 10 ahead, so the person registered within
-- 10 minutes before the auction or 1 minute after it at any first_event_rate
-- of 84 events/s or more (the default is 10,000).  With that bound the
-- result is Flink's, row for row (tests/test_nexmark.py checks it against
-- DuckDB's unbounded join), and state holds 11 minutes of persons and
-- auctions.
CREATE CONTINUOUS QUERY q3 WITH (trigger = 'available_now') AS
SELECT p.name, p.city, p.state, a.id
  FROM auction AS a JOIN person AS p
    ON a.seller = p.id
   AND p.date_time BETWEEN a.date_time - INTERVAL '10 minutes'
                       AND a.date_time + INTERVAL '1 minute'
 WHERE a.category = 10 AND (p.state = 'OR' OR p.state = 'ID' OR p.state = 'CA');
