"""The result table of an append-only continuous query is a log of chunks
(docs/engine.md, "Result tables"): one RocksDB key per up to 1,024 rows,
keyed (batch id, chunk number), written in the batch's atomic write.

Covers: rows of every type, NULLs in every column, read back exactly and in
order (batch id, row) after batches that span several chunks, an empty
batch and a one-row batch -- through SELECT in text and binary format, COPY
TO STDOUT, SUBSCRIBE WITH (snapshot) and after a restart (from RocksDB's
blob files); EXPLAIN's sink
line; DROP and a new query of the same name; and a SIGKILL at the batch's
durable steps, then a restart: every row once, in order.
"""

import signal

import psycopg
import pytest

from test_continuous_queries import WAIT, connect, wait_for
from test_subscribe import start_stream, take

COLUMNS = [
    ("i", "bigint"), ("b", "boolean"), ("s2", "smallint"), ("i4", "integer"),
    ("f4", "real"), ("f8", "double precision"), ("n", "numeric"), ("t", "text"),
    ("v", "varchar(20)"), ("by", "bytea"), ("d", "date"), ("ts", "timestamp"),
    ("tz", "timestamptz"), ("iv", "interval"), ("j", "jsonb"),
]
STREAM = "CREATE STREAM ev (" + ", ".join(f"{n} {t}" for n, t in COLUMNS) + ")"
FILTER = "i % 10 <> 3"      # the result differs from the stream


def value(col, i):
    """Column col of row i as COPY text, NULL (\\N) on a pattern that puts
    NULLs in every column."""
    if col > 0 and (i + col) % 11 == 0:
        return r"\N"
    name = COLUMNS[col][0]
    return {
        "i": str(i),
        "b": "t" if i % 3 else "f",
        "s2": str(i % 30000 - 15000),
        "i4": str(i * 7919 - 1_000_000),
        "f4": f"{i / 8}",
        "f8": f"{i / 3:.15g}",
        "n": f"{i}.{i % 1000:03d}" if i % 5 else f"-{i}e10",
        "t": f"row {i} " + "x" * (i % 50) + " ünï",
        "v": f"v{i}",
        "by": "\\\\x" + f"{i:08x}",
        "d": f"20{i % 100:02d}-0{1 + i % 9}-1{i % 10}",
        "ts": f"2026-01-01 12:{i // 60 % 60:02d}:{i % 60:02d}.{i % 1000:03d}",
        "tz": f"2026-06-01 00:00:{i % 60:02d}+0{i % 10}",
        "iv": f"{i % 400} days {i % 24} hours",
        "j": f'{{"i": {i}, "a": [1, "two", null]}}',
    }[name]


def copy_rows(c, first, n):
    with c.cursor().copy("COPY ev FROM STDIN") as cp:
        for i in range(first, first + n):
            cp.write("\t".join(value(col, i) for col in range(len(COLUMNS))) + "\n")


def table(c, sql, binary=False):
    return [tuple(r) for r in c.cursor(binary=binary).execute(sql).fetchall()]


def copy_out(c, sql):
    with c.cursor().copy(f"COPY {sql} TO STDOUT") as cp:
        return b"".join(bytes(chunk) for chunk in cp)


def progress(c, q):
    return [n for (n,) in c.execute(
        "SELECT input_rows FROM sys.query_progress WHERE query = %s AND input_rows > 0 "
        "ORDER BY batch_id", (q,)).fetchall()]


def test_every_type_across_chunks_and_batches(sluiced):
    server = sluiced()
    want_ids = [i for i in range(10_001) if i % 10 != 3]
    with connect(server) as c:
        c.execute(STREAM)
        c.execute("CREATE CONTINUOUS QUERY r WITH (trigger = '0', "
                  f"max_offsets_per_trigger = 2500) AS SELECT * FROM ev WHERE {FILTER}")
        c.execute("ALTER CONTINUOUS QUERY r PAUSE")
        copy_rows(c, 0, 6000)      # batches of 2500, 2500, 1000 rows
        c.execute("ALTER CONTINUOUS QUERY r RESUME")
        assert wait_for(lambda: c.execute("SELECT count(*) FROM r").fetchone()[0],
                        5400, timeout=120) == 5400
        c.execute("ALTER CONTINUOUS QUERY r PAUSE")
        copy_rows(c, 6000, 1)      # a batch of one row
        c.execute("ALTER CONTINUOUS QUERY r RESUME")
        assert wait_for(lambda: c.execute("SELECT count(*) FROM r").fetchone()[0],
                        5401) == 5401
        c.execute("ALTER CONTINUOUS QUERY r PAUSE")
        copy_rows(c, 6001, 3)      # a batch whose rows are all filtered out
        c.execute("ALTER CONTINUOUS QUERY r RESUME")
        assert wait_for(lambda: progress(c, "r")[-1:], [3]) == [3]
        c.execute("ALTER CONTINUOUS QUERY r PAUSE")
        copy_rows(c, 6004, 3997)   # 2500 + 1497
        c.execute("ALTER CONTINUOUS QUERY r RESUME")
        assert wait_for(lambda: c.execute("SELECT count(*) FROM r").fetchone()[0],
                        len(want_ids), timeout=120) == len(want_ids)
        assert progress(c, "r") == [2500, 2500, 1000, 1, 3, 2500, 1497]

        # The batch engine over the stream reads it in offset order: the
        # same rows, in the same order, for every reader of the result.
        want = table(c, f"SELECT * FROM ev WHERE {FILTER}")
        assert [r[0] for r in want] == want_ids
        assert all(any(r[k] is None for r in want) for k in range(1, len(COLUMNS)))
        assert table(c, "SELECT * FROM r") == want
        assert table(c, "SELECT * FROM r", binary=True) == \
            table(c, f"SELECT * FROM ev WHERE {FILTER}", binary=True)
        assert copy_out(c, "(SELECT * FROM r)") == copy_out(c, f"(SELECT * FROM ev WHERE {FILTER})")
        assert c.execute("SELECT count(*), sum(i), count(t), count(j) FROM r").fetchone() == \
            c.execute(f"SELECT count(*), sum(i), count(t), count(j) FROM ev "
                      f"WHERE {FILTER}").fetchone()
        explain = "\n".join(r[0] for r in c.execute("EXPLAIN CONTINUOUS QUERY r").fetchall())
        assert "Sink: result table r (an append log of chunks keyed by batch)" in explain

        sub, rows, ended, t = start_stream(server.dsn, "SUBSCRIBE r WITH (snapshot)")
        snap = take(rows, len(want), timeout=120)
        sub.cancel()
        t.join(WAIT)
        sub.close()
        assert [r[1] for r in snap] == ["insert"] * len(want)
        assert [tuple(r[2:]) for r in snap] == want

    server.stop()
    server.start()
    # The restart flushed the memtable: the chunks (16 KiB and more) went
    # to RocksDB's blob files, and are read back from there.
    assert list((server.data_dir / "state").glob("*.blob")), "no blob file"
    with connect(server) as c:
        assert table(c, "SELECT * FROM r") == want
        # DROP takes the log with it; a new query of the same name starts empty.
        c.execute("DROP CONTINUOUS QUERY r")
        c.execute("CREATE CONTINUOUS QUERY r WITH (trigger = '0') AS "
                  "SELECT i, t FROM ev WHERE i < 0")
        c.execute("INSERT INTO ev (i, t) VALUES (-1, 'new')")
        assert wait_for(lambda: table(c, "SELECT * FROM r"), [(-1, "new")]) == [(-1, "new")]


def load_paused(server, text):
    """Stream ev (i, t) with rows i = 0..7999, t = text(i), and query r
    over it, paused: its batches will be 3000, 3000 and 2000 rows."""
    with connect(server) as c:
        c.execute("CREATE STREAM ev (i bigint, t text)")
        c.execute("CREATE CONTINUOUS QUERY r WITH (trigger = '0', "
                  "max_offsets_per_trigger = 3000) AS SELECT i, t || '!' AS t FROM ev "
                  "WHERE i % 7 <> 0")
        c.execute("ALTER CONTINUOUS QUERY r PAUSE")
        with c.cursor().copy("COPY ev FROM STDIN") as cp:
            for i in range(8000):
                cp.write_row((i, text(i)))


def kill_at(server, point, hit):
    """Restarts the stopped server with fault point `point` set to kill at
    its hit-th arrival, resumes r, waits for the kill, and starts it again
    without the fault."""
    server.env["SLUICE_FAULT"] = f"{point}:{hit}"
    server.start()
    with connect(server) as c:
        c.execute("ALTER CONTINUOUS QUERY r RESUME")
    assert server.wait_exit(WAIT * 4) == -signal.SIGKILL
    assert f"fault point {point} reached" in server.log_text()
    del server.env["SLUICE_FAULT"]
    server.start()


def resume_until(server, want):
    """Resumes r and waits until its table is want, r still running."""
    with connect(server) as c:
        c.execute("ALTER CONTINUOUS QUERY r RESUME")
        assert wait_for(lambda: c.execute("SELECT count(*) FROM r").fetchone()[0],
                        len(want), timeout=120) == len(want)
        assert table(c, "SELECT * FROM r") == want
        status = c.execute("SELECT status, last_error FROM sys.queries "
                           "WHERE name = 'r'").fetchone()
        assert status[0] == "running", status


# (fault point, the hit that kills): every point is reached once per batch;
# the second batch dies with its first chunks staged (or, after the state
# commit, with its rows written and its commit-log entry missing).
FAULTS = [
    ("batch_middle", 2),
    ("batch_before_state_commit", 2),
    ("batch_after_state_commit", 2),
    ("commit_log_before_write", 2),
]


@pytest.mark.parametrize("point,hit", FAULTS, ids=[p for p, _ in FAULTS])
def test_kill_and_replay_writes_each_row_once(sluiced, point, hit):
    server = sluiced()
    load_paused(server, lambda i: None if i % 13 == 0 else f"r{i}")
    server.stop()

    kill_at(server, point, hit)
    resume_until(server, [(i, None if i % 13 == 0 else f"r{i}!")
                          for i in range(8000) if i % 7 != 0])
