-- Nexmark q11: user sessions, the bids per bidder in each session (a
-- session ends after 10 seconds without a bid).
-- Differs from Flink: SESSION(date_time, gap) in GROUP BY with window_start
-- and window_end for Flink's SESSION_START / SESSION_ROWTIME; update mode,
-- so a session's row is rewritten as it grows (Flink emits it once it
-- closes: output_mode = 'append' does that here).
CREATE CONTINUOUS QUERY q11 WITH (trigger = 'available_now', output_mode = 'update') AS
SELECT bidder, count(*) AS bid_count, window_start, window_end
  FROM bid
 GROUP BY SESSION(date_time, INTERVAL '10 seconds'), bidder;
