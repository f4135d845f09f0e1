"""Continuous queries end to end: a stream fed by INSERT, a continuous query,
its result table read back with SELECT -- over the PostgreSQL protocol.

Covers: stateless (append) queries, windowed aggregation in update and append
mode with late rows dropped and counted, PAUSE/RESUME, DROP, a restart in the
middle (the query resumes after its last committed batch), refusals at CREATE
with their message, and the oracle: for a seeded random out-of-order stream,
the incremental result equals the same aggregation recomputed in batch over
the rows that were not late, and the late rows (routed to a late_rows stream)
are exactly the ones the oracle found late.  Sliding and session windows get
the same oracle in tests/test_continuous_windows.py.
"""

import random
import time
from datetime import datetime, timedelta

import psycopg
import pytest

from helpers import wait_for, wait_read_through

WAIT = 30   # seconds a result may take to appear


def connect(server):
    return psycopg.connect(server.dsn, autocommit=True)


def rows(conn, sql):
    return sorted(tuple(r) for r in conn.execute(sql).fetchall())


T0 = datetime(2026, 1, 1, 12, 0, 0)


def ts(seconds):
    return T0 + timedelta(seconds=seconds)


def tsp(seconds):
    """A timestamp parameter, as text (sent in text format)."""
    return ts(seconds).isoformat(sep=" ")


def test_stateless_query_appends_filtered_rows(server):
    with connect(server) as c:
        c.execute("CREATE STREAM clicks (user_id BIGINT, url TEXT, ts TIMESTAMP)")
        c.execute("CREATE CONTINUOUS QUERY big_users WITH (trigger = '0') AS "
                  "SELECT user_id, upper(url) AS url FROM clicks WHERE user_id > 10")
        c.execute("INSERT INTO clicks VALUES (1, 'a', %s), (11, 'b', %s), (12, 'c', %s)",
                  (tsp(0), tsp(1), tsp(2)))
        c.execute("INSERT INTO clicks VALUES (20, 'd', %s)", (tsp(3),))
        want = [(11, "B"), (12, "C"), (20, "D")]
        assert wait_for(lambda: rows(c, "SELECT user_id, url FROM big_users"), want) == want


def test_tumbling_window_update_mode(server):
    with connect(server) as c:
        c.execute("CREATE STREAM clicks (user_id BIGINT, url TEXT, ts TIMESTAMP,"
                  " WATERMARK FOR ts AS ts - INTERVAL '10 seconds')")
        c.execute("CREATE CONTINUOUS QUERY per_user WITH (trigger = '0', output_mode = 'update') AS "
                  "SELECT window_start, window_end, user_id, count(*) AS n, sum(user_id) AS s "
                  "FROM clicks GROUP BY WINDOW(ts, INTERVAL '1 minute'), user_id")
        c.execute("INSERT INTO clicks VALUES (1, 'a', %s), (1, 'b', %s), (2, 'c', %s)",
                  (tsp(1), tsp(2), tsp(61)))
        want = [(ts(0), ts(60), 1, 2, 2), (ts(60), ts(120), 2, 1, 2)]
        assert wait_for(lambda: rows(c, "SELECT * FROM per_user"), want) == want
        # A later batch updates the same window's row in place.
        c.execute("INSERT INTO clicks VALUES (1, 'x', %s)", (tsp(30),))
        want = [(ts(0), ts(60), 1, 3, 3), (ts(60), ts(120), 2, 1, 2)]
        assert wait_for(lambda: rows(c, "SELECT * FROM per_user"), want) == want


def test_append_mode_emits_closed_windows_once_and_drops_late_rows(server):
    with connect(server) as c:
        c.execute("CREATE STREAM ev (k TEXT, ts TIMESTAMP,"
                  " WATERMARK FOR ts AS ts - INTERVAL '5 seconds')")
        c.execute("CREATE CONTINUOUS QUERY counts WITH (trigger = '0', output_mode = 'append') AS "
                  "SELECT window_start, k, count(*) AS n FROM ev "
                  "GROUP BY WINDOW(ts, INTERVAL '10 seconds'), k")
        c.execute("INSERT INTO ev VALUES ('a', %s), ('a', %s), ('b', %s)", (tsp(1), tsp(2), tsp(3)))
        # The window [0, 10) is still open: once a batch has read the rows,
        # nothing is emitted yet.
        wait_read_through(c, "counts")
        assert rows(c, "SELECT * FROM counts") == []
        # Event time 16 moves the watermark to 11: [0, 10) closes.
        c.execute("INSERT INTO ev VALUES ('a', %s)", (tsp(16),))
        want = [(ts(0), "a", 2), (ts(0), "b", 1)]
        assert wait_for(lambda: rows(c, "SELECT * FROM counts"), want) == want
        # A row for the closed window is late: dropped, the output stays.
        c.execute("INSERT INTO ev VALUES ('a', %s)", (tsp(4),))
        c.execute("INSERT INTO ev VALUES ('c', %s)", (tsp(40),))
        want = [(ts(0), "a", 2), (ts(0), "b", 1), (ts(10), "a", 1)]
        assert wait_for(lambda: rows(c, "SELECT * FROM counts"), want) == want


def test_refusals_say_what_to_add(server):
    with connect(server) as c:
        c.execute("CREATE STREAM s (k TEXT, ts TIMESTAMP)")
        with pytest.raises(psycopg.errors.FeatureNotSupported) as e:
            c.execute("CREATE CONTINUOUS QUERY q WITH (output_mode = 'append') AS "
                      "SELECT k, count(*) FROM s GROUP BY k")
        assert "append mode needs an event-time window" in str(e.value)
        with pytest.raises(psycopg.errors.FeatureNotSupported) as e:
            c.execute("CREATE CONTINUOUS QUERY q WITH (output_mode = 'append') AS "
                      "SELECT window_start, count(*) FROM s GROUP BY WINDOW(ts, INTERVAL '1 minute')")
        assert "watermark" in str(e.value) and "WATERMARK FOR ts" in e.value.diag.message_hint
        with pytest.raises(psycopg.errors.FeatureNotSupported) as e:
            c.execute("CREATE CONTINUOUS QUERY q AS SELECT k FROM s ORDER BY k")
        assert "ORDER BY" in str(e.value)
        # Nothing was left behind by the refused statements.
        c.execute("CREATE CONTINUOUS QUERY q AS SELECT k FROM s")


def test_pause_resume_drop(server):
    with connect(server) as c:
        c.execute("CREATE STREAM s (v BIGINT)")
        c.execute("CREATE CONTINUOUS QUERY q WITH (trigger = '0') AS SELECT v FROM s")
        # a running query over the same stream: it reading row 2 is the event
        # after which the paused one would have read it too
        c.execute("CREATE CONTINUOUS QUERY witness WITH (trigger = '0') AS SELECT v FROM s")
        c.execute("INSERT INTO s VALUES (1)")
        assert wait_for(lambda: rows(c, "SELECT v FROM q"), [(1,)]) == [(1,)]
        c.execute("ALTER CONTINUOUS QUERY q PAUSE")
        c.execute("INSERT INTO s VALUES (2)")
        wait_read_through(c, "witness")
        assert rows(c, "SELECT v FROM witness") == [(1,), (2,)]
        assert rows(c, "SELECT v FROM q") == [(1,)]
        assert c.execute("SELECT status FROM sys.queries WHERE name = 'q'").fetchone() == \
            ("paused",)
        assert c.execute("SELECT committed_offset, latest_offset FROM sys.source_lag "
                         "WHERE query = 'q'").fetchall() == [(1, 2)]
        c.execute("ALTER CONTINUOUS QUERY q RESUME")
        assert wait_for(lambda: rows(c, "SELECT v FROM q"), [(1,), (2,)]) == [(1,), (2,)]
        c.execute("DROP CONTINUOUS QUERY q")
        with pytest.raises(psycopg.errors.UndefinedTable):
            c.execute("SELECT * FROM q")


def test_query_resumes_after_restart(server):
    with connect(server) as c:
        c.execute("CREATE STREAM s (k TEXT, v BIGINT)")
        c.execute("CREATE CONTINUOUS QUERY totals WITH (trigger = '0') AS "
                  "SELECT k, sum(v) AS total, count(*) AS n FROM s GROUP BY k")
        c.execute("INSERT INTO s VALUES ('a', 1), ('b', 2), ('a', 3)")
        want = [("a", 4, 2), ("b", 2, 1)]
        assert wait_for(lambda: rows(c, "SELECT * FROM totals"), want) == want
    server.restart()
    with connect(server) as c:
        assert rows(c, "SELECT * FROM totals") == want
        c.execute("INSERT INTO s VALUES ('a', 10)")
        want = [("a", 14, 3), ("b", 2, 1)]
        assert wait_for(lambda: rows(c, "SELECT * FROM totals"), want) == want


@pytest.mark.parametrize("seed", [1, 2, 3])
def test_oracle_windowed_counts_equal_batch_recomputation(server, seed):
    """Random out-of-order events in many small INSERTs (so they span many
    micro-batches): the final append-mode output equals the same grouping
    recomputed over the rows that were not late when they arrived."""
    rng = random.Random(seed)
    delay, size = 5, 10
    events = []
    t = 0.0
    for _ in range(300):
        t += rng.random()
        jitter = rng.random() * 8 if rng.random() < 0.8 else rng.random() * 30
        events.append((rng.choice("abc"), max(0.0, t - jitter)))
    with connect(server) as c:
        c.execute(f"CREATE STREAM ev (k TEXT, ts TIMESTAMP,"
                  f" WATERMARK FOR ts AS ts - INTERVAL '{delay} seconds')")
        c.execute("CREATE STREAM ev_late (k TEXT, ts TIMESTAMP)")
        c.execute(f"CREATE CONTINUOUS QUERY w WITH (trigger = '0', output_mode = 'append', "
                  f"late_rows = 'ev_late') AS "
                  f"SELECT window_start, k, count(*) AS n FROM ev "
                  f"GROUP BY WINDOW(ts, INTERVAL '{size} seconds'), k")
        # Feed in chunks and wait for each to be processed, so the oracle knows
        # which watermark judged each chunk.
        expected = {}
        late = []
        watermark = None
        pos = 0
        while pos < len(events):
            chunk = events[pos:pos + rng.randint(5, 40)]
            pos += len(chunk)
            # One INSERT is one atomic append, so a micro-batch reads all of a
            # chunk or none of it; the pause lets each chunk be its own batch,
            # judged by the watermark the previous chunks made.
            values = ", ".join(["(%s, %s)"] * len(chunk))
            c.execute("INSERT INTO ev VALUES " + values,
                      [v for k, s in chunk for v in (k, tsp(s))])
            for k, s in chunk:
                start = int(s // size) * size
                if watermark is None or start + size > watermark:
                    expected[(start, k)] = expected.get((start, k), 0) + 1
                else:
                    late.append((k, ts(s)))
            m = max(s for _, s in chunk) - delay
            watermark = m if watermark is None else max(watermark, m)
            time.sleep(0.5)
        final_wm = watermark
        want = sorted((ts(start), k, n) for (start, k), n in expected.items()
                      if start + size <= final_wm)
        got = wait_for(lambda: rows(c, "SELECT * FROM w"), want)
        assert got == want
        # The late rows, routed to ev_late, are exactly those the oracle
        # left out (so the late-row counts match too).
        want_late = sorted(late)
        assert wait_for(lambda: rows(c, "SELECT k, ts FROM ev_late"), want_late) == want_late


def test_into_stream_chains_queries(server):
    """bronze -> silver (INTO a stream) -> gold (an aggregation over it)."""
    with connect(server) as c:
        c.execute("CREATE STREAM bronze (user_id BIGINT, url TEXT)")
        c.execute("CREATE STREAM silver (user_id BIGINT, url TEXT)")
        c.execute("CREATE CONTINUOUS QUERY clean INTO silver WITH (trigger = '0') AS "
                  "SELECT user_id, lower(url) FROM bronze WHERE url IS NOT NULL")
        c.execute("CREATE CONTINUOUS QUERY gold WITH (trigger = '0') AS "
                  "SELECT url, count(*) AS n FROM silver GROUP BY url")
        c.execute("INSERT INTO bronze VALUES (1, '/A'), (2, NULL), (3, '/a'), (4, '/B')")
        want = [("/a", 2), ("/b", 1)]
        assert wait_for(lambda: rows(c, "SELECT * FROM gold"), want) == want
        assert rows(c, "SELECT * FROM silver") == [(1, "/a"), (3, "/a"), (4, "/b")]
        # The INTO query's own result table stays empty.
        assert rows(c, "SELECT * FROM clean") == []
        with pytest.raises(psycopg.errors.DatatypeMismatch):
            c.execute("CREATE CONTINUOUS QUERY bad INTO silver AS SELECT url, user_id FROM bronze")
        with pytest.raises(psycopg.errors.UndefinedTable):
            c.execute("CREATE CONTINUOUS QUERY bad INTO nowhere AS SELECT * FROM bronze")
