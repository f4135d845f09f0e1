"""EXPLAIN CONTINUOUS QUERY: each operator, the state it keeps, what bounds
it, and live figures (issue 9)."""
import time

import psycopg
import pytest


def explain(conn, name):
    return [r[0] for r in conn.execute(f"EXPLAIN CONTINUOUS QUERY {name}").fetchall()]


def wait_input(conn, name, want, timeout=120):
    deadline = time.time() + timeout
    while conn.execute("SELECT input_rows FROM sys.queries WHERE name = %s",
                       (name,)).fetchone()[0] != want:
        assert time.time() < deadline
        time.sleep(0.1)


def test_explain_windowed_query_shows_state_bound_and_live_figures(sluiced):
    server = sluiced()
    with psycopg.connect(server.dsn, autocommit=True) as conn:
        conn.execute("CREATE STREAM clicks (user_id bigint, url text, ts timestamp, "
                     "WATERMARK FOR ts AS ts - INTERVAL '10 seconds')")
        conn.execute("CREATE STREAM late_clicks (user_id bigint, url text, ts timestamp)")
        conn.execute("CREATE CONTINUOUS QUERY per_min WITH (trigger = '0', output_mode = 'append', "
                     "late_rows = 'late_clicks') AS SELECT window_start, user_id, count(*) AS n "
                     "FROM clicks WHERE url <> '/health' "
                     "GROUP BY WINDOW(ts, INTERVAL '1 minute'), user_id")
        conn.execute("INSERT INTO clicks VALUES (1, '/a', '2026-01-01 00:00:01'), "
                     "(2, '/b', '2026-01-01 00:00:30'), (1, '/c', '2026-01-01 00:02:00')")
        wait_input(conn, "per_min", 3)
        lines = explain(conn, "per_min")
        state = conn.execute("SELECT state_rows, state_bytes FROM sys.state "
                             "WHERE query = 'per_min'").fetchone()
    text = "\n".join(lines)
    assert lines[0].startswith("Continuous Query per_min: running, trigger 0 ms")
    assert "Sink: result table per_min (keyed by the group keys)" in text
    assert "Output mode: append" in text
    assert "-> Aggregate (tumbling window)" in text
    assert "Window: WINDOW(" in text and "60000000 us)" in text
    assert "Group keys: (" in text and "user_id" in text
    assert "Aggregates: (count(*))" in text
    assert "Bounded by: the watermark: a window's state is evicted when its row is emitted" in text
    assert "-> Filter (on the stream's rows, stateless)" in text
    assert "-> Source: stream clicks (internal)" in text
    assert "Watermark: max(ts) - 10 s" in text
    assert "Late rows: appended to stream late_clicks" in text
    live = lines[-1]
    assert live.startswith("Live: last batch 0, input rows 3, late rows 0, state rows ")
    # the state figures are sys.state's
    assert f"state rows {state[0]}, state bytes {state[1]}, " in live and state[1] > 0
    assert "watermark 2026-01-01 00:01:50, falling behind: no" in live
    # operators are indented under the sink, the source deepest
    assert text.index("-> Aggregate") < text.index("-> Filter") < text.index("-> Source")


def test_explain_warns_about_unbounded_state(sluiced):
    server = sluiced()
    with psycopg.connect(server.dsn, autocommit=True) as conn:
        conn.execute("CREATE STREAM ev (k int, v int)")
        conn.execute("CREATE CONTINUOUS QUERY totals WITH (output_mode = 'update') AS "
                     "SELECT k, sum(v) AS s FROM ev GROUP BY k")
        conn.execute("CREATE CONTINUOUS QUERY ttl WITH (output_mode = 'update', "
                     "state_ttl = '1 hour') AS SELECT k, sum(v) AS s FROM ev GROUP BY k")
        totals = "\n".join(explain(conn, "totals"))
        ttl = "\n".join(explain(conn, "ttl"))
        with pytest.raises(psycopg.errors.UndefinedObject):
            conn.execute("EXPLAIN CONTINUOUS QUERY nope")
    assert "Sink: result table totals (keyed by the group keys)" in totals
    assert "-> Aggregate (no window)" in totals
    assert "Bounded by: unbounded: one row per group for ever (WARNING" in totals
    assert "Watermark: none" in totals
    assert "Bounded by: state_ttl 1 h: groups idle that long are evicted" in ttl


def test_complete_mode_over_unbounded_groups_warns(sluiced):
    """Issue 6: complete mode over an unbounded number of groups is created
    with a WARNING (a NoticeResponse) that says what to change; a windowed
    one is not."""
    server = sluiced()
    with psycopg.connect(server.dsn, autocommit=True) as conn:
        notices = []
        # the Diagnostic is only valid inside the handler: copy its fields
        conn.add_notice_handler(lambda d: notices.append(
            (d.severity_nonlocalized, d.sqlstate, d.message_primary)))
        conn.execute("CREATE STREAM ev (k int, ts timestamp, "
                     "WATERMARK FOR ts AS ts - INTERVAL '1 second')")
        conn.execute("CREATE CONTINUOUS QUERY all_keys WITH (output_mode = 'complete') AS "
                     "SELECT k, count(*) AS n FROM ev GROUP BY k")
        assert len(notices) == 1
        severity, sqlstate, message = notices[0]
        assert (severity, sqlstate) == ("WARNING", "01000")
        assert "complete mode over groups without a window" in message
        assert "group by a WINDOW, or use update mode with state_ttl" in message
        conn.execute("CREATE CONTINUOUS QUERY per_min WITH (output_mode = 'complete') AS "
                     "SELECT window_start, k, count(*) AS n FROM ev "
                     "GROUP BY WINDOW(ts, INTERVAL '1 minute'), k")
        conn.execute("CREATE CONTINUOUS QUERY upd WITH (output_mode = 'update') AS "
                     "SELECT k, count(*) AS n FROM ev GROUP BY k")
        assert len(notices) == 1
