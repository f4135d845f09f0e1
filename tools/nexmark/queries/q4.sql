-- Nexmark q4: average price per category of the winning bids (an
-- auction's winning bid is its highest bid between its start and its
-- expiry).
-- Differs from Flink: Flink's one query aggregates an aggregate (the
-- maximum per auction, then the average per category), updating both as
-- bids come.  sluice runs a pipeline of two continuous queries over an
-- internal stream (docs/sql-reference.md, "Continuous queries"):
--   q4_winning  auction JOIN bid on Flink's condition, the maximum price
--               per auction, written INTO q4_winning_bids once the auction
--               is over;
--   q4          the average of those per category (update mode).
-- The join is bounded in time (docs/engine.md, "Stream-stream interval
-- joins"): Flink's b.date_time BETWEEN a.date_time AND a.expires, plus
-- b.date_time <= a.date_time + 1 minute, which loses nothing: an auction
-- expires within twice the event time its 100 in-flight auctions take
-- (about 333 ms at the default 10,000 events/s; within a minute at any
-- first_event_rate of 56 events/s or more).  "Once the auction is over" is a
-- session window on the bid time with a gap longer than that bound, so each
-- auction's matched bids make one session, closed when the watermark passes
-- its last bid plus the gap (at the end of a bounded stream, at once).
-- So the averages are over final maxima, as Flink's are once every auction
-- has ended.  avg() of bigint is numeric here (Flink: BIGINT, truncated).
CREATE STREAM q4_winning_bids (id bigint, category bigint, final bigint);
CREATE CONTINUOUS QUERY q4_winning INTO q4_winning_bids
  WITH (trigger = 'available_now', output_mode = 'append') AS
SELECT a.id, a.category, max(b.price) AS final
  FROM auction AS a JOIN bid AS b
    ON a.id = b.auction
   AND b.date_time BETWEEN a.date_time AND a.date_time + INTERVAL '1 minute'
   AND b.date_time <= a.expires
 GROUP BY SESSION(b.date_time, INTERVAL '61 seconds'), a.id, a.category;
CREATE CONTINUOUS QUERY q4 WITH (trigger = '0', output_mode = 'update') AS
SELECT category, avg(final) AS avg_final
  FROM q4_winning_bids
 GROUP BY category;
