"""Issue 6 acceptance: a tumbling-window query over 10 million events that
span 10,000 windows keeps its state within a few windows' worth of keys.
The state row count is the engine's own (kept with each batch's state and
shown per batch in sys.query_progress and per query in sys.state)."""
import time

import psycopg

EVENTS = 10_000_000
USERS = 100             # group keys per window
WINDOWS = 10_000        # 1 ms of event time per event, 1 s windows
BATCH = 500_000


def test_tumbling_window_state_stays_within_a_few_windows(sluiced):
    server = sluiced()
    with psycopg.connect(server.dsn, autocommit=True) as c:
        # ts = row * 1 ms: 10,000 s of event time, 1,000 events per 1 s window.
        c.execute(f"""CREATE STREAM events (user_id BIGINT, ts TIMESTAMP,
            WATERMARK FOR ts AS ts - INTERVAL '5 seconds')
            WITH (connector = 'datagen', rows_per_second = 1000000000,
                  number_of_rows = {EVENTS}, seed = 7,
                  "fields.user_id.min" = 1, "fields.user_id.max" = {USERS},
                  "fields.ts.kind" = 'sequence', "fields.ts.start" = 0,
                  "fields.ts.step" = 1000)""")
        time.sleep(0.2)     # every row is available after EVENTS / 1e9 s
        c.execute(f"""CREATE CONTINUOUS QUERY per_second
            WITH (trigger = 'available_now', output_mode = 'append',
                  max_offsets_per_trigger = {BATCH})
            AS SELECT window_start, user_id, count(*) AS n FROM events
               GROUP BY WINDOW(ts, INTERVAL '1 second'), user_id""")
        deadline = time.time() + 1200
        seen = {}
        while True:
            for batch_id, state_rows, input_rows in c.execute(
                    "SELECT batch_id, state_rows, input_rows FROM sys.query_progress "
                    "WHERE query = 'per_second'").fetchall():
                seen[batch_id] = (state_rows, input_rows)
            status = c.execute("SELECT status FROM sys.queries WHERE name = 'per_second'"
                               ).fetchone()[0]
            if status == "finished":
                break
            assert status == "running", status
            assert time.time() < deadline, "the query did not finish"
            time.sleep(0.2)
        for batch_id, state_rows, input_rows in c.execute(
                "SELECT batch_id, state_rows, input_rows FROM sys.query_progress "
                "WHERE query = 'per_second'").fetchall():
            seen[batch_id] = (state_rows, input_rows)
        # every batch was seen (the ring keeps the last 100; there are 20)
        assert sorted(seen) == list(range(EVENTS // BATCH))
        assert sum(i for _, i in seen.values()) == EVENTS
        max_state = max(s for s, _ in seen.values())
        # All windows together hold WINDOWS * USERS = 1,000,000 keys; after
        # each batch only the windows the 5 s watermark delay keeps open
        # (and the one being filled) may remain.
        assert 0 < max_state <= 10 * USERS, max_state
        state = c.execute("SELECT state_rows FROM sys.state WHERE query = 'per_second'"
                          ).fetchone()[0]
        assert state <= 10 * USERS
        # Every closed window was emitted exactly once: the final watermark
        # (9,999.999 s - 5 s) closed the 9,994 windows ending by 9,994 s.
        total, windows = c.execute(
            "SELECT sum(n), count(DISTINCT window_start) FROM per_second").fetchone()
        assert windows == 9_994
        assert total == 9_994 * 1000
