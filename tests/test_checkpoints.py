"""Checkpoints of continuous queries (issue 7): the retention of the offset
and commit logs, query evolution with CREATE OR REPLACE (the fingerprint of
the state-bearing plan, refusals that name the change, reset = true), and
the files sink's format.  The crash test is tests/test_crash_recovery.py.
"""

import csv
import io
import json
import sqlite3
import time
from datetime import datetime, timedelta

import psycopg
import pytest

WAIT = 60
T0 = datetime(2026, 1, 1, 12, 0, 0)


def ts(seconds):
    return T0 + timedelta(seconds=seconds)


def tsp(seconds):
    return ts(seconds).isoformat(sep=" ")


def connect(server):
    return psycopg.connect(server.dsn, autocommit=True)


def rows(conn, sql):
    return sorted(tuple(r) for r in conn.execute(sql).fetchall())


def wait_for(fn, want, timeout=WAIT):
    deadline = time.monotonic() + timeout
    got = None
    while time.monotonic() < deadline:
        try:
            got = fn()
        except psycopg.errors.DataCorrupted as e:   # a result table being rewritten
            got = e
        if got == want:
            return got
        time.sleep(0.1)
    return got


def logs(server, name):
    """(offset-log batch ids, commit-log batch ids) of a query, read from the
    catalog file while the server runs (WAL mode: readers do not block)."""
    db = sqlite3.connect(f"file:{server.data_dir / 'catalog.db'}?mode=ro", uri=True)
    try:
        (oid,) = db.execute("SELECT oid FROM relations WHERE name = ?", (name,)).fetchone()
        offs = [r[0] for r in db.execute(
            "SELECT batch_id FROM cq_offsets WHERE query_oid = ? ORDER BY 1", (oid,))]
        commits = [r[0] for r in db.execute(
            "SELECT batch_id FROM cq_commits WHERE query_oid = ? ORDER BY 1", (oid,))]
        return oid, offs, commits
    finally:
        db.close()


WINDOWED = ("SELECT window_start, window_end, k, count(*) AS n FROM s "
            "GROUP BY WINDOW(ts, INTERVAL '10 seconds'), k")


def make_stream(c):
    c.execute("CREATE STREAM s (k BIGINT, v INT, ts TIMESTAMP,"
              " WATERMARK FOR ts AS ts - INTERVAL '5 seconds')")


def test_logs_are_purged_past_the_retention(server):
    with connect(server) as c:
        c.execute("CREATE STREAM s (v BIGINT)")
        c.execute("CREATE CONTINUOUS QUERY q WITH (trigger = '0', max_offsets_per_trigger = 10,"
                  " min_batches_to_retain = 3) AS SELECT v FROM s")
        c.execute("INSERT INTO s SELECT * FROM (VALUES " +
                  ", ".join(f"({i})" for i in range(300)) + ") AS t(v)")
        assert wait_for(lambda: c.execute("SELECT count(*) FROM q").fetchone()[0], 300) == 300
        # The commit entry follows the result rows; the purge follows it.
        assert wait_for(lambda: logs(server, "q")[2][-1:], [29]) == [29]
        _, offs, commits = logs(server, "q")
    # 30 batches ran; the logs keep the newest 3 (purged every batch below 10).
    assert offs[-1] == 29 and commits[-1] == 29
    assert offs == [27, 28, 29] and commits == [27, 28, 29]
    with connect(server) as c:
        with pytest.raises(psycopg.errors.InvalidParameterValue) as e:
            c.execute("CREATE CONTINUOUS QUERY q2 WITH (min_batches_to_retain = 0)"
                      " AS SELECT v FROM s")
        assert "min_batches_to_retain must be at least 1" in str(e.value)
    # Recovery needs only the last entries: a restart goes on from batch 30.
    server.restart()
    with connect(server) as c:
        c.execute("INSERT INTO s VALUES (1000)")
        assert wait_for(lambda: c.execute("SELECT count(*) FROM q").fetchone()[0], 301) == 301
    assert logs(server, "q")[1][-1] == 30


@pytest.mark.parametrize("change,what,detail", [
    ("SELECT window_start, window_end, k, v, count(*) AS n FROM s "
     "GROUP BY WINDOW(ts, INTERVAL '10 seconds'), k, v",
     "grouping keys", "(s.k) before, (s.k, s.v) now"),
    ("SELECT window_start, window_end, k, count(*) AS n FROM s "
     "GROUP BY WINDOW(ts, INTERVAL '20 seconds'), k",
     "window", "WINDOW(s.ts, 10000000 us) before, WINDOW(s.ts, 20000000 us) now"),
    ("SELECT window_start, window_end, k, count(*) AS n, sum(v) AS total FROM s "
     "GROUP BY WINDOW(ts, INTERVAL '10 seconds'), k",
     "aggregates", "(count(*)) before, (count(*), sum(s.v)) now"),
    ("SELECT window_start, window_end, k, count(*) AS n FROM s2 "
     "GROUP BY WINDOW(ts, INTERVAL '10 seconds'), k",
     "source stream", "s before, s2 now"),
])
def test_replace_that_breaks_state_is_refused_naming_the_change(server, change, what, detail):
    with connect(server) as c:
        make_stream(c)
        c.execute("CREATE STREAM s2 (k BIGINT, v INT, ts TIMESTAMP)")
        c.execute(f"CREATE CONTINUOUS QUERY q WITH (trigger = '0') AS {WINDOWED}")
        c.execute("INSERT INTO s VALUES (1, 1, %s), (2, 1, %s)", (tsp(1), tsp(2)))
        want = [(ts(0), ts(10), 1, 1), (ts(0), ts(10), 2, 1)]
        assert wait_for(lambda: rows(c, "SELECT * FROM q"), want) == want
        with pytest.raises(psycopg.errors.InvalidTableDefinition) as e:
            c.execute(f"CREATE OR REPLACE CONTINUOUS QUERY q WITH (trigger = '0') AS {change}")
        assert f'cannot replace continuous query "q": its {what} changed' in str(e.value)
        assert detail in e.value.diag.message_detail
        assert "reset = true" in e.value.diag.message_hint
        # Refused: the query runs on as it was.
        c.execute("INSERT INTO s VALUES (1, 1, %s)", (tsp(3),))
        want = [(ts(0), ts(10), 1, 2), (ts(0), ts(10), 2, 1)]
        assert wait_for(lambda: rows(c, "SELECT * FROM q"), want) == want


def test_compatible_replace_keeps_state_and_offsets(server):
    with connect(server) as c:
        # No WATERMARK: no window's state is evicted, so the state holds
        # every row of the result table (tests/test_cq_consistency.py: the
        # refusal where it does not).
        c.execute("CREATE STREAM s (k BIGINT, v INT, ts TIMESTAMP)")
        c.execute(f"CREATE CONTINUOUS QUERY q WITH (trigger = '0') AS {WINDOWED}")
        c.execute("INSERT INTO s VALUES (1, 1, %s), (2, 1, %s), (1, 1, %s)",
                  (tsp(1), tsp(2), tsp(11)))
        want = [(ts(0), ts(10), 1, 1), (ts(0), ts(10), 2, 1), (ts(10), ts(20), 1, 1)]
        assert wait_for(lambda: rows(c, "SELECT * FROM q"), want) == want
        oid, offs, _ = logs(server, "q")
        # A filter and a projected column: the state stays, the offsets too
        # (the rows already counted are not read again), and every row of
        # the result table is rewritten with the new column.
        c.execute("CREATE OR REPLACE CONTINUOUS QUERY q WITH (trigger = '0') AS "
                  "SELECT window_start, window_end, k, count(*) AS n, count(*) * 10 AS n10 "
                  "FROM s WHERE k < 100 GROUP BY WINDOW(ts, INTERVAL '10 seconds'), k")
        want = [(ts(0), ts(10), 1, 1, 10), (ts(0), ts(10), 2, 1, 10),
                (ts(10), ts(20), 1, 1, 10)]
        assert wait_for(lambda: rows(c, "SELECT * FROM q"), want) == want
        c.execute("INSERT INTO s VALUES (1, 1, %s), (500, 1, %s)", (tsp(4), tsp(4)))
        want = [(ts(0), ts(10), 1, 2, 20), (ts(0), ts(10), 2, 1, 10),
                (ts(10), ts(20), 1, 1, 10)]
        assert wait_for(lambda: rows(c, "SELECT * FROM q"), want) == want
        oid2, offs2, _ = logs(server, "q")
        assert oid2 == oid and offs2[0] == offs[0] and offs2[-1] > offs[-1]
    server.restart()
    with connect(server) as c:
        assert rows(c, "SELECT * FROM q") == want
        c.execute("INSERT INTO s VALUES (2, 1, %s)", (tsp(5),))
        want[1] = (ts(0), ts(10), 2, 2, 20)
        assert wait_for(lambda: rows(c, "SELECT * FROM q"), want) == want


def test_replace_with_reset_starts_over(server):
    with connect(server) as c:
        make_stream(c)
        c.execute(f"CREATE CONTINUOUS QUERY q WITH (trigger = '0') AS {WINDOWED}")
        c.execute("INSERT INTO s VALUES (1, 5, %s), (2, 6, %s)", (tsp(1), tsp(12)))
        want = [(ts(0), ts(10), 1, 1), (ts(10), ts(20), 2, 1)]
        assert wait_for(lambda: rows(c, "SELECT * FROM q"), want) == want
        c.execute("CREATE OR REPLACE CONTINUOUS QUERY q WITH (trigger = '0', reset = true) AS "
                  "SELECT k, count(*) AS n, sum(v) AS total FROM s GROUP BY k")
        # From the starting offsets: both old rows are read again.
        want = [(1, 1, 5), (2, 1, 6)]
        assert wait_for(lambda: rows(c, "SELECT * FROM q"), want) == want
        # The log entries follow the result rows (docs/architecture.md, "Recovery").
        assert wait_for(lambda: [e[:1] for e in logs(server, "q")[1:]], [[0], [0]]) == [[0], [0]]
        oid = logs(server, "q")[0]
    # The old query's logs went with it (one catalog transaction).
    db = sqlite3.connect(f"file:{server.data_dir / 'catalog.db'}?mode=ro", uri=True)
    try:
        assert db.execute("SELECT DISTINCT query_oid FROM cq_offsets").fetchall() == [(oid,)]
    finally:
        db.close()
    server.restart()
    with connect(server) as c:
        c.execute("INSERT INTO s VALUES (1, 7, %s)", (tsp(30),))
        want = [(1, 2, 12), (2, 1, 6)]
        assert wait_for(lambda: rows(c, "SELECT * FROM q"), want) == want


def test_files_sink_csv_and_manifest(sluiced, tmp_path):
    server = sluiced()
    out = tmp_path / "out"
    with connect(server) as c:
        c.execute("CREATE STREAM s (k BIGINT, t TEXT, ts TIMESTAMP)")
        c.execute(f"CREATE SINK f WITH (connector = 'files', path = '{out}', format = 'csv')")
        c.execute("CREATE CONTINUOUS QUERY q INTO f WITH (trigger = '0') AS "
                  "SELECT k, t, ts FROM s WHERE k > 0")
        c.execute("INSERT INTO s VALUES (1, 'a,b', %s), (2, NULL, %s), (-1, 'x', %s)",
                  (tsp(1), tsp(2), tsp(3)))
        c.execute("INSERT INTO s VALUES (3, '', %s), (4, 'say \"hi\"', %s)", (tsp(4), tsp(5)))

        def read():
            got = []
            m = out / "_manifest.jsonl"
            for line in (m.read_text().splitlines() if m.exists() else []):
                entry = json.loads(line)
                assert entry["query"] == "q"
                text = (out / entry["file"]).read_text()
                r = list(csv.reader(io.StringIO(text)))
                assert r[0] == ["k", "t", "ts"] and len(r) - 1 == entry["rows"]
                got += [tuple(x) for x in r[1:]]
            return sorted(got)
        want = sorted([("1", "a,b", tsp(1)), ("2", "", tsp(2)), ("3", "", tsp(4)),
                       ("4", 'say "hi"', tsp(5))])
        assert wait_for(read, want) == want
        # NULL is an unquoted empty field, the empty string a quoted one.
        assert any(line.startswith('3,"",') for p in out.glob("part-*.csv")
                   for line in p.read_text().splitlines())
        assert any(line.startswith("2,,") for p in out.glob("part-*.csv")
                   for line in p.read_text().splitlines())
        with pytest.raises(psycopg.errors.DependentObjectsStillExist):
            c.execute("DROP SINK f")
        c.execute("DROP CONTINUOUS QUERY q")
        c.execute("DROP SINK f")
        assert (out / "_manifest.jsonl").exists()    # the files stay


def test_sink_path_that_cannot_be_made(server, tmp_path):
    blocker = tmp_path / "file"
    blocker.write_text("x")
    with connect(server) as c:
        with pytest.raises(psycopg.errors.IoError) as e:
            c.execute(f"CREATE SINK f WITH (connector = 'files', path = '{blocker}/sub')")
        assert "cannot create directory" in str(e.value)
        # Nothing was created.
        c.execute(f"CREATE SINK f WITH (connector = 'files', path = '{tmp_path}/ok')")


def test_files_sink_cuts_a_torn_manifest_line(sluiced, tmp_path):
    """A crash in the middle of a manifest append leaves a last line without
    its newline: the sink cuts it off when it opens, and the batch it was
    for (not committed: its state never was) is written and listed again."""
    server = sluiced()
    out = tmp_path / "out"
    with connect(server) as c:
        c.execute("CREATE STREAM s (k BIGINT)")
        c.execute(f"CREATE SINK f WITH (connector = 'files', path = '{out}')")
        c.execute("CREATE CONTINUOUS QUERY q INTO f WITH (trigger = '0') AS SELECT k FROM s")
        c.execute("INSERT INTO s VALUES (1), (2)")
        manifest = out / "_manifest.jsonl"
        assert wait_for(lambda: manifest.exists() and len(manifest.read_text().splitlines()),
                        1) == 1
    server.stop()
    entry = json.loads(manifest.read_text())
    torn = json.dumps(dict(entry, batch_id=entry["batch_id"] + 1))[:30]
    with open(manifest, "a") as m:
        m.write(torn)
    server.start()
    with connect(server) as c:
        c.execute("INSERT INTO s VALUES (3)")

        def listed():
            text = manifest.read_text()
            if not text.endswith("\n"):
                return None
            return [json.loads(line)["batch_id"] for line in text.splitlines()]
        assert wait_for(listed, [0, 1]) == [0, 1]
        rows = sorted(json.loads(r)["k"] for line in manifest.read_text().splitlines()
                      for r in (out / json.loads(line)["file"]).read_text().splitlines())
        assert rows == [1, 2, 3]
