-- Nexmark q8: monitor new users, the persons who opened an auction in the
-- same 10-second tumbling window in which they registered.
-- Differs from Flink: Flink groups each stream by its window first (persons
-- by id, name and window; auctions by seller and window) and joins the two
-- windowed results on id = seller and the window.  Here one query joins the
-- streams on id = seller within the same window (the two event times fall in
-- the same 10-second window, which also bounds the join in time) and groups
-- the matches by the person's window, id and name: one row per person and
-- window, as Flink's join of one person row with one seller row gives.
-- Append mode: a window's rows are written once the watermark passes its end
-- (at the end of a bounded stream, every window closes; Flink's window join
-- emits at the window's end too).  Flink's starttime is window_start.
CREATE CONTINUOUS QUERY q8 WITH (trigger = 'available_now', output_mode = 'append') AS
SELECT p.id, p.name, window_start AS starttime
  FROM person AS p JOIN auction AS a
    ON p.id = a.seller
   AND a.date_time BETWEEN p.date_time - INTERVAL '10 seconds'
                       AND p.date_time + INTERVAL '10 seconds'
   AND floor(extract(epoch FROM a.date_time) / 10) = floor(extract(epoch FROM p.date_time) / 10)
 GROUP BY WINDOW(p.date_time, INTERVAL '10 seconds'), p.id, p.name;
