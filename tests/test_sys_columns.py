"""Every column of the sys tables against workloads whose answers are known
(issue 9).

sys.query_progress and sys.state: a datagen stream at 2,000 rows/s with a
share of late rows, a windowed query over it, and a stateless copy of the
same rows from which the test computes, batch by batch, what the engine
must report (late rows, event times, watermark, open groups, oldest
window).  Then the state's bytes: exact against RocksDB's own keys (read
with librocksdb's C API through ctypes after the server stopped), kept
across a restart, and sized on disk once flushed; a join's and a
DISTINCT's own rows in sys.state; and a query made slow on purpose (a
batch that outlasts its trigger) that shows falling_behind.  sys.queries
through a query's life (paused, running, failed, finished, a restart),
sys.settings against the options the server was started with,
sys.connections against this session's own socket.

Rates and durations depend on the machine: they are checked against their
formulas exactly and against the known rate only within a wide band.
"""
import ctypes
import ctypes.util
import socket
import statistics
import struct
import time
from datetime import datetime, timedelta, timezone

import urllib.request

import psycopg
import pytest

from test_http import http_port, parse_metrics, value

WAIT = 120
RATE = 2000                 # rows per second, wall clock and event time
ROWS = 12000                # six seconds of rows
DELAY_US = 2_000_000        # WATERMARK FOR ts AS ts - INTERVAL '2 seconds'
WINDOW_US = 1_000_000
T0 = datetime(2026, 1, 1)
EPOCH = datetime(1970, 1, 1)
PG_EPOCH = datetime(2000, 1, 1)


def us(dt):
    """Microseconds since the Unix epoch of a naive (UTC) or aware datetime."""
    if dt.tzinfo is not None:
        dt = dt.astimezone(timezone.utc).replace(tzinfo=None)
    return (dt - EPOCH) // timedelta(microseconds=1)


T0_US = us(T0)


def connect(server):
    c = psycopg.connect(server.dsn, autocommit=True, connect_timeout=10)
    c.execute("SET TimeZone = 'UTC'")
    return c


def wait_for(fn, check, timeout=WAIT):
    deadline = time.monotonic() + timeout
    got = fn()
    while not check(got):
        assert time.monotonic() < deadline, f"timed out: last {got!r}"
        time.sleep(0.1)
        got = fn()
    return got


PROGRESS_COLS = ("batch_id, started_at, duration_ms, plan_ms, read_ms, execute_ms, "
                 "sink_commit_ms, state_commit_ms, commit_log_ms, trigger_ms, input_rows, "
                 "input_rows_per_second, processed_rows_per_second, watermark, "
                 "min_event_time, max_event_time, state_rows, state_bytes, evicted_rows, "
                 "late_rows, output_rows, backlog_rows")


def progress(c, query):
    names = [n.strip() for n in PROGRESS_COLS.split(",")]
    rows = c.execute(f"SELECT {PROGRESS_COLS} FROM sys.query_progress WHERE query = %s "
                     "ORDER BY batch_id", (query,)).fetchall()
    return [dict(zip(names, r)) for r in rows]


def floor_window(t):
    return t - (t % WINDOW_US)


def test_every_progress_and_state_column_against_a_datagen_stream(sluiced):
    server = sluiced()
    with connect(server) as c:
        start_pg_us = (T0 - PG_EPOCH) // timedelta(microseconds=1)
        c.execute(f"""CREATE STREAM gen (id bigint, k int, ts timestamp,
            WATERMARK FOR ts AS ts - INTERVAL '2 seconds')
            WITH (connector = 'datagen', rows_per_second = {RATE}, number_of_rows = {ROWS},
                  seed = 3, start_time_us = {start_pg_us},
                  "fields.id.kind" = 'sequence', "fields.id.start" = 0,
                  "fields.id.step" = 1,
                  "fields.k.min" = 0, "fields.k.max" = 9,
                  "fields.ts.late_share" = 0.05, "fields.ts.late_by" = '30 seconds')""")
        # The same rows, kept as they are: the test's own copy of the input.
        c.execute("CREATE CONTINUOUS QUERY raw WITH (trigger = '200 milliseconds') AS "
                  "SELECT id, k, ts FROM gen")
        c.execute("CREATE CONTINUOUS QUERY win WITH (trigger = '200 milliseconds', "
                  "output_mode = 'append') AS SELECT window_start, k, count(*) AS n "
                  "FROM gen GROUP BY WINDOW(ts, INTERVAL '1 second'), k")
        for q in ("raw", "win"):
            wait_for(lambda q=q: c.execute("SELECT input_rows FROM sys.queries WHERE name = %s",
                                           (q,)).fetchone()[0],
                     lambda n: n == ROWS)
        # sys.source_lag: the generated stream is read to its end.
        lag = c.execute("SELECT source, topic, partition, committed_offset, latest_offset, lag, "
                        "last_poll IS NOT NULL FROM sys.source_lag WHERE query = 'win'"
                        ).fetchall()
        assert lag == [("gen", None, 0, ROWS, ROWS, 0, True)], lag

        raw = {i: (k, us(ts)) for i, k, ts in c.execute("SELECT id, k, ts FROM raw")}
        assert sorted(raw) == list(range(ROWS))
        # row i's event time is T0 + i / RATE s, or 30 s before for the late share
        injected = [i for i, (_, t) in raw.items() if t != T0_US + i * 1_000_000 // RATE]
        assert all(raw[i][1] == T0_US + i * 1_000_000 // RATE - 30_000_000 for i in injected)
        assert 0.02 * ROWS < len(injected) < 0.1 * ROWS

        batches = progress(c, "win")
        result = c.execute("SELECT count(*) FROM win").fetchone()[0]
        state = c.execute("SELECT operator, state_rows, state_bytes, bytes_on_disk, "
                          "bytes_in_cache, evicted_rows, oldest_window, last_batch_id, "
                          "watermark FROM sys.state WHERE query = 'win'").fetchall()
        assert c.execute("SELECT count(*) FROM sys.state WHERE query = 'raw'"
                         ).fetchone()[0] == 0   # stateless: no operator keeps state

    # Batch ids run from 0 without a gap (the ring keeps the last 100).
    assert len(batches) < 100
    assert [b["batch_id"] for b in batches] == list(range(len(batches)))
    assert sum(b["input_rows"] for b in batches) == ROWS

    # Replay the batches over the copy: offsets are dense, so batch n read
    # ids [sum of the earlier input_rows, + its own).
    offset, wm, groups, late_total = 0, None, {}, 0
    closed = set()
    for b in batches:
        ids = range(offset, offset + b["input_rows"])
        offset += b["input_rows"]
        # Phases: none negative, together no more than the whole batch.
        phases = [b[p] for p in ("plan_ms", "read_ms", "execute_ms", "sink_commit_ms",
                                 "state_commit_ms", "commit_log_ms")]
        assert all(p >= 0 for p in phases), b
        assert b["duration_ms"] >= sum(phases) * 0.999, b
        assert b["sink_commit_ms"] == 0         # no files sink
        assert b["trigger_ms"] == 200
        assert b["backlog_rows"] == 0           # no max_offsets_per_trigger
        # processed rate: the batch's rows over its duration
        if b["duration_ms"] > 0:
            assert b["processed_rows_per_second"] == pytest.approx(
                b["input_rows"] * 1000 / b["duration_ms"], rel=1e-6)
        if not ids:
            assert b["min_event_time"] is None and b["max_event_time"] is None
        else:
            times = [raw[i][1] for i in ids]
            assert us(b["min_event_time"]) == min(times), b
            assert us(b["max_event_time"]) == max(times), b
            assert T0_US - 30_000_000 <= min(times) and max(times) < T0_US + 6_000_000
        # Late: every window holding the row closed by the watermark the
        # batch was judged by (the previous batch's).
        late = [i for i in ids
                if wm is not None and floor_window(raw[i][1]) + WINDOW_US <= wm]
        assert b["late_rows"] == len(late), b
        late_total += len(late)
        for i in ids:
            if i not in late:
                k, t = raw[i]
                groups[(floor_window(t), k)] = True
        # The watermark after the batch: max event time so far - 2 s.
        if ids:
            new = max(raw[i][1] for i in ids) - DELAY_US
            wm = new if wm is None else max(wm, new)
        assert (b["watermark"] is None and wm is None) or us(b["watermark"]) == wm, b
        # Append mode: the groups whose window the watermark closed are
        # emitted once and leave the state (evicted); the rest stay.
        now_closed = {g for g in groups if g[0] + WINDOW_US <= wm}
        assert b["output_rows"] == len(now_closed), b
        assert b["evicted_rows"] == len(now_closed), b
        closed |= now_closed
        for g in now_closed:
            del groups[g]
        assert b["state_rows"] == len(groups), b
        assert b["state_bytes"] > 0 if groups else b["state_bytes"] == 0, b

    # The injected late rows after the first batch with rows were all
    # dropped and counted (those in it came before any watermark).
    first = next(n for n, b in enumerate(batches) if b["input_rows"] > 0)
    seen_first = sum(b["input_rows"] for b in batches[:first + 1])
    assert late_total == len([i for i in injected if i >= seen_first]) > 0
    # output_rows: the rows that appeared in the result table.
    assert result == sum(b["output_rows"] for b in batches) == len(closed)

    # Input rate: rows over the time since the previous batch started,
    # exactly; and, while the generator ran, near its 2,000 rows/s.
    starts = [us(b["started_at"]) for b in batches]
    assert batches[0]["input_rows_per_second"] is None
    for prev, b, s in zip(starts, batches[1:], starts[1:]):
        assert s > prev
        assert b["input_rows_per_second"] == pytest.approx(
            b["input_rows"] * 1e6 / (s - prev), rel=1e-6)
    running = [b["input_rows_per_second"] for b in batches[1:]
               if b["input_rows"] > 0 and us(b["started_at"]) < starts[0] + 5_000_000]
    assert len(running) >= 2, batches
    assert 0.3 * RATE <= statistics.median(running) <= 3 * RATE, running

    # sys.state: one operator, the last batch's figures.
    assert len(state) == 1, state
    op, rows, nbytes, disk, cache, evicted, oldest, last, swm = state[0]
    assert op == "aggregate"
    assert rows == len(groups) > 0
    assert nbytes == batches[-1]["state_bytes"] > 0
    assert evicted == sum(b["evicted_rows"] for b in batches) == len(closed)
    assert us(oldest) == min(w for w, _ in groups)
    assert last == batches[-1]["batch_id"]
    assert us(swm) == wm
    assert disk >= 0 and cache >= 0


# ------------------------------------------------- the state's bytes, exact

class RocksDB:
    """The state store read with librocksdb's C API (read-only, the server
    stopped): the keys and values under a prefix."""

    def __init__(self, path):
        name = ctypes.util.find_library("rocksdb")
        if name is None:
            pytest.fail("librocksdb is not installed (Debian's librocksdb-dev)")
        lib = self.lib = ctypes.CDLL(name)
        lib.rocksdb_options_create.restype = ctypes.c_void_p
        lib.rocksdb_open_for_read_only.restype = ctypes.c_void_p
        lib.rocksdb_open_for_read_only.argtypes = [ctypes.c_void_p, ctypes.c_char_p,
                                                   ctypes.c_ubyte,
                                                   ctypes.POINTER(ctypes.c_char_p)]
        lib.rocksdb_readoptions_create.restype = ctypes.c_void_p
        lib.rocksdb_create_iterator.restype = ctypes.c_void_p
        lib.rocksdb_create_iterator.argtypes = [ctypes.c_void_p, ctypes.c_void_p]
        lib.rocksdb_iter_seek.argtypes = [ctypes.c_void_p, ctypes.c_char_p, ctypes.c_size_t]
        lib.rocksdb_iter_valid.argtypes = [ctypes.c_void_p]
        lib.rocksdb_iter_valid.restype = ctypes.c_ubyte
        lib.rocksdb_iter_next.argtypes = [ctypes.c_void_p]
        for f in (lib.rocksdb_iter_key, lib.rocksdb_iter_value):
            f.argtypes = [ctypes.c_void_p, ctypes.POINTER(ctypes.c_size_t)]
            f.restype = ctypes.POINTER(ctypes.c_char)
        lib.rocksdb_iter_destroy.argtypes = [ctypes.c_void_p]
        lib.rocksdb_close.argtypes = [ctypes.c_void_p]
        self.opts = lib.rocksdb_options_create()
        err = ctypes.c_char_p()
        self.db = lib.rocksdb_open_for_read_only(self.opts, str(path).encode(), 0,
                                                 ctypes.byref(err))
        assert not err.value, err.value
        self.ropts = lib.rocksdb_readoptions_create()

    def scan(self, prefix):
        lib = self.lib
        it = lib.rocksdb_create_iterator(self.db, self.ropts)
        lib.rocksdb_iter_seek(it, prefix, len(prefix))
        n = ctypes.c_size_t()
        try:
            while lib.rocksdb_iter_valid(it):
                k = ctypes.string_at(lib.rocksdb_iter_key(it, ctypes.byref(n)), n.value)
                if not k.startswith(prefix):
                    break
                v = ctypes.string_at(lib.rocksdb_iter_value(it, ctypes.byref(n)), n.value)
                yield k, v
                lib.rocksdb_iter_next(it)
        finally:
            lib.rocksdb_iter_destroy(it)

    def close(self):
        self.lib.rocksdb_close(self.db)


def key_rows(space, k, v):
    """The rows one state key holds: a session's index entry (0xFF after
    the prefix) none; a join's chunk (26-byte key, value tagged 0xC7) its
    row count, a join row kept alone (before chunks) one, a join's mark
    (30-byte key) none; any other key one."""
    if space == b"Q":
        return int(not (len(k) > 5 and k[5] == 0xFF))
    if space == b"J":
        if len(k) != 26:
            return 0
        return struct.unpack(">I", v[1:5])[0] if v[:1] == b"\xc7" else 1
    return 1


def operator_keys(data_dir, space, oid):
    """(rows, bytes) of one operator's key space ('Q' or 'J' + the query's
    oid, big-endian), read from RocksDB (key_rows)."""
    db = RocksDB(data_dir / "state")
    try:
        prefix = space + struct.pack(">I", oid)
        rows = nbytes = 0
        for k, v in db.scan(prefix):
            nbytes += len(k) + len(v)
            rows += key_rows(space, k, v)
        return rows, nbytes
    finally:
        db.close()


STATE_SQL = ("SELECT operator, state_rows, state_bytes, bytes_on_disk, bytes_in_cache, "
             "evicted_rows FROM sys.state WHERE query = %s ORDER BY operator")


def test_state_bytes_are_exact_survive_a_restart_and_reach_the_disk(sluiced):
    server = sluiced()
    with connect(server) as c:
        c.execute("CREATE STREAM ev (k int, v text)")
        c.execute("CREATE CONTINUOUS QUERY per_k WITH (trigger = '0', output_mode = 'update') "
                  "AS SELECT k, count(*) AS n, max(v) AS m FROM ev GROUP BY k")
        oid = c.execute("SELECT oid FROM sys.queries WHERE name = 'per_k'").fetchone()[0]
        sizes, total = [], 0
        for keys, vlen in ((1000, 10), (3000, 10), (3000, 40)):
            c.execute("INSERT INTO ev SELECT g, left(repeat(md5(g::text), 2), %s) "
                      "FROM generate_series(1, %s) g", (vlen, keys))
            total += keys
            wait_for(lambda: c.execute("SELECT input_rows FROM sys.queries").fetchone()[0],
                     lambda n, t=total: n == t)
            got = c.execute(STATE_SQL, ("per_k",)).fetchall()
            assert got[0][1] == keys, got
            sizes.append(got[0][2])
        # More keys, more bytes; longer values in the same keys, more bytes.
        assert 0 < sizes[0] < sizes[1] < sizes[2], sizes
        before = c.execute(STATE_SQL, ("per_k",)).fetchall()
    server.stop()
    # The engine's count is the keys' and values' bytes RocksDB holds.
    rows, nbytes = operator_keys(server.data_dir, b"Q", oid)
    assert (rows, nbytes) == before[0][1:3], (rows, nbytes, before)

    server.start()
    with connect(server) as c:
        after = c.execute(STATE_SQL, ("per_k",)).fetchall()
        # Kept with the state: the same after a restart.
        assert after[0][:3] == before[0][:3], (before, after)
        # The restart flushed the state into table files: on disk it takes
        # about its size (compressed, with per-block overhead).
        disk = after[0][3]
        assert 0.05 * nbytes < disk < 3 * nbytes, (disk, nbytes)
        # A batch that reads every group brings their blocks into the cache.
        c.execute("INSERT INTO ev SELECT g, 'y' FROM generate_series(1, 3000) g")
        wait_for(lambda: c.execute("SELECT input_rows FROM sys.queries").fetchone()[0],
                 lambda n: n == 3000)
        got = c.execute(STATE_SQL, ("per_k",)).fetchall()
        assert 0 < got[0][4] <= 8 << 20, got
        assert got[0][5] == 0       # nothing bounds these groups: none evicted


def test_state_of_a_join_and_of_distinct_per_operator(sluiced):
    server = sluiced("--http-port", "0")
    with connect(server) as c:
        for s in ("l", "r"):
            c.execute(f"CREATE STREAM {s} (ts timestamp, k int, "
                      "WATERMARK FOR ts AS ts - INTERVAL '5 seconds')")
        c.execute("CREATE CONTINUOUS QUERY jn WITH (trigger = '0', output_mode = 'update') AS "
                  "SELECT l.k, count(*) AS n FROM l JOIN r ON l.k = r.k "
                  "AND r.ts BETWEEN l.ts AND l.ts + INTERVAL '10 seconds' GROUP BY l.k")
        c.execute("CREATE CONTINUOUS QUERY ds WITH (trigger = '0') AS "
                  "SELECT DISTINCT k, ts FROM l")
        ins = ("INSERT INTO {} SELECT TIMESTAMP '2026-01-01' + g * INTERVAL '1 second', g % 3 "
               "FROM generate_series({}, {}) g")
        c.execute(ins.format("l", 0, 99))
        wait_for(lambda: c.execute("SELECT sum(input_rows) FROM sys.queries").fetchone()[0],
                 lambda n: n == 200)
        # Every left row is kept (no right watermark yet); DISTINCT keeps
        # the keys above its watermark (99 - 5 s): 95..99.
        assert c.execute(STATE_SQL, ("jn",)).fetchall()[1][:2] == ("join", 100)
        assert c.execute(STATE_SQL, ("ds",)).fetchall()[0][:2] == ("distinct", 5)
        c.execute(ins.format("r", 0, 120))
        got = wait_for(lambda: c.execute(STATE_SQL, ("jn",)).fetchall(),
                       lambda r: r[1][5] > 0)
        # The right watermark (115 s) evicts left rows older than 105 s: all
        # 100; right rows from the left watermark (94 s) on stay: 94..120.
        assert [g[:2] for g in got] == [("aggregate", 3), ("join", 27)], got
        assert got[1][5] == 100
        ds = c.execute(STATE_SQL, ("ds",)).fetchall()[0]
        assert ds[5] == 95
        oids = dict(c.execute("SELECT name, oid FROM sys.queries").fetchall())
        before = {q: c.execute(STATE_SQL, (q,)).fetchall() for q in ("jn", "ds")}
        # /metrics: per query, the operators' rows and bytes together
        with urllib.request.urlopen(f"http://127.0.0.1:{http_port(server)}/metrics",
                                    timeout=30) as r:
            fam = parse_metrics(r.read().decode())
        for q in ("jn", "ds"):
            assert value(fam, "sluice_query_state_rows", query=q) == \
                sum(op[1] for op in before[q])
            assert value(fam, "sluice_query_state_bytes", query=q) == \
                sum(op[2] for op in before[q])
    server.stop()
    assert operator_keys(server.data_dir, b"J", oids["jn"]) == before["jn"][1][1:3]
    assert operator_keys(server.data_dir, b"Q", oids["jn"]) == before["jn"][0][1:3]
    assert operator_keys(server.data_dir, b"Q", oids["ds"]) == before["ds"][0][1:3]


def test_sessions_and_sliding_windows_count_their_bytes_exactly(sluiced):
    """Sessions merge, move and close; sliding windows keep slices: the
    byte count follows every put and delete."""
    server = sluiced()
    with connect(server) as c:
        c.execute("CREATE STREAM ev (ts timestamp, k int, "
                  "WATERMARK FOR ts AS ts - INTERVAL '5 minutes')")
        c.execute("CREATE CONTINUOUS QUERY se WITH (trigger = '0', output_mode = 'update') AS "
                  "SELECT window_start, k, count(*) AS n FROM ev "
                  "GROUP BY SESSION(ts, INTERVAL '30 seconds'), k")
        c.execute("CREATE CONTINUOUS QUERY sl WITH (trigger = '0', output_mode = 'append') AS "
                  "SELECT window_start, k, count(*) AS n FROM ev "
                  "GROUP BY WINDOW(ts, INTERVAL '1 minute', INTERVAL '20 seconds'), k")
        total = 0
        steps = [
            # sessions [t, t + 30 s): key 0 at 0, 200, 400; key 1 at 100, 300;
            # the watermark (100 s) closes [0, 30)
            [(0, 0), (100, 1), (200, 0), (300, 1), (400, 0)],
            # key 0: a row at 190 moves [200, 230) to start at 190; rows every
            # 20 s from 210 to 390 merge it with [400, 430)
            [(190, 0)] + [(t, 0) for t in range(210, 391, 20)],
            # time moves on (watermark 710 s): every earlier session closes
            [(1000, 1), (1010, 1)],
        ]
        for rows in steps:
            values = ", ".join(f"(TIMESTAMP '2026-01-01' + INTERVAL '{t} seconds', {k})"
                               for t, k in rows)
            c.execute(f"INSERT INTO ev VALUES {values}")
            total += len(rows)
            wait_for(lambda: c.execute("SELECT sum(input_rows) FROM sys.queries"
                                       ).fetchone()[0], lambda n, t=total: n == 2 * t)
        oids = dict(c.execute("SELECT name, oid FROM sys.queries").fetchall())
        before = {q: c.execute(STATE_SQL, (q,)).fetchone() for q in ("se", "sl")}
        assert before["se"][1] == 1     # key 1's [1000, 1040)
        # The oldest window of the sliding query: the slice [1000, 1020) is
        # in the windows from 960 s on, all still open.
        oldest = c.execute("SELECT oldest_window FROM sys.state WHERE query = 'sl'").fetchone()
        assert us(oldest[0]) == T0_US + 960 * 1_000_000
        assert before["sl"][5] > 0 and before["se"][5] > 0     # both evicted some
    server.stop()
    for q in ("se", "sl"):
        assert operator_keys(server.data_dir, b"Q", oids[q]) == before[q][1:3], q


def test_a_batch_slower_than_its_trigger_falls_behind(sluiced):
    """A query made slow on purpose: each batch sleeps 300 ms (pg_sleep in
    its one output row) against a 50 ms trigger, so every batch overruns."""
    server = sluiced()
    with connect(server) as c:
        c.execute("CREATE STREAM ticks (id bigint) WITH (connector = 'datagen', "
                  "rows_per_second = 200)")
        c.execute("CREATE CONTINUOUS QUERY slow WITH (trigger = '50 milliseconds', "
                  "output_mode = 'complete') AS "
                  "SELECT count(*) AS n, pg_sleep(0.3) AS nap FROM ticks")
        got = wait_for(lambda: c.execute("SELECT falling_behind FROM sys.queries "
                                         "WHERE name = 'slow'").fetchone()[0],
                       lambda b: b is True)
        assert got is True
        last = c.execute("SELECT duration_ms, trigger_ms, backlog_rows FROM sys.query_progress "
                         "WHERE query = 'slow' ORDER BY batch_id DESC LIMIT 3").fetchall()
        assert all(d > t == 50 and b == 0 for d, t, b in last), last
        c.execute("ALTER CONTINUOUS QUERY slow PAUSE")
        assert c.execute("SELECT falling_behind FROM sys.queries WHERE name = 'slow'"
                         ).fetchone()[0] is False


# ------------------------------------------- sys.queries, settings, sessions

QUERIES_COLS = ("oid, name, status, sql, trigger, output_mode, last_batch_id, last_error, "
                "falling_behind, created_at, started_at, input_rows, watermark")


def query_row(c, name):
    names = [n.strip() for n in QUERIES_COLS.split(",")]
    row = c.execute(f"SELECT {QUERIES_COLS} FROM sys.queries WHERE name = %s",
                    (name,)).fetchone()
    return dict(zip(names, row))


def test_every_column_of_sys_queries_through_its_life(sluiced):
    server = sluiced()
    with connect(server) as c:
        c.execute("CREATE STREAM ev (ts timestamp, k int, "
                  "WATERMARK FOR ts AS ts - INTERVAL '3 seconds')")
        before = c.execute("SELECT now()").fetchone()[0]
        sql = ("CREATE CONTINUOUS QUERY q1 WITH (trigger = '100 milliseconds', "
               "output_mode = 'update') AS SELECT k, count(*) AS n, sum(10 / k) AS s "
               "FROM ev GROUP BY k")
        c.execute(sql)
        c.execute("CREATE CONTINUOUS QUERY q2 AS SELECT k FROM ev")
        after = c.execute("SELECT now()").fetchone()[0]
        q = query_row(c, "q1")
        # its result table's oid; the text as given; the options as written
        assert q["oid"] == c.execute("SELECT oid FROM pg_class WHERE relname = 'q1'"
                                     ).fetchone()[0]
        assert (q["name"], q["status"], q["sql"]) == ("q1", "running", sql)
        assert (q["trigger"], q["output_mode"]) == ("100 milliseconds", "update")
        assert (q["last_batch_id"], q["last_error"], q["falling_behind"]) == (None, None, False)
        assert before <= q["created_at"] <= q["started_at"] <= after
        assert (q["input_rows"], q["watermark"]) == (0, None)
        # the defaults, spelled out
        q2 = query_row(c, "q2")
        assert (q2["trigger"], q2["output_mode"]) == ("1 second", "append")

        c.execute("INSERT INTO ev SELECT TIMESTAMP '2026-01-01' + g * INTERVAL '1 second', "
                  "1 + g % 4 FROM generate_series(0, 59) g")
        q = wait_for(lambda: query_row(c, "q1"), lambda r: r["input_rows"] == 60)
        last = c.execute("SELECT max(batch_id) FROM sys.query_progress WHERE query = 'q1'"
                         ).fetchone()[0]
        assert q["last_batch_id"] == last >= 0
        assert us(q["watermark"]) == us(T0) + (59 - 3) * 1_000_000   # max(ts) - 3 s
        assert q["falling_behind"] is False

        c.execute("ALTER CONTINUOUS QUERY q1 PAUSE")
        assert query_row(c, "q1")["status"] == "paused"
        c.execute("INSERT INTO ev VALUES ('2026-01-01 00:02:00', 1)")
        time.sleep(0.5)     # paused: the row waits
        assert query_row(c, "q1")["input_rows"] == 60
        c.execute("ALTER CONTINUOUS QUERY q1 RESUME")
        q = wait_for(lambda: query_row(c, "q1"), lambda r: r["input_rows"] == 61)
        assert q["status"] == "running"

        # a row that fails the batch: failed, with its error, not behind
        c.execute("INSERT INTO ev VALUES ('2026-01-01 00:02:01', 0)")
        q = wait_for(lambda: query_row(c, "q1"), lambda r: r["status"] == "failed")
        assert q["last_error"] == "division by zero"
        assert q["falling_behind"] is False
        created, started = q["created_at"], q["started_at"]

        c.execute("CREATE STREAM fin (k int)")
        c.execute("INSERT INTO fin VALUES (1), (2)")
        c.execute("CREATE CONTINUOUS QUERY q3 WITH (trigger = 'available_now') "
                  "AS SELECT k FROM fin")
        q3 = wait_for(lambda: query_row(c, "q3"), lambda r: r["status"] == "finished")
        assert (q3["trigger"], q3["input_rows"], q3["last_batch_id"]) == \
            ("available_now", 2, 0)

    # After a restart: created_at is kept, started_at is the new start; the
    # failed query stays failed with its error; input_rows counts afresh.
    server.restart()
    with connect(server) as c:
        q = query_row(c, "q1")
        assert (q["status"], q["last_error"]) == ("failed", "division by zero")
        assert q["created_at"] == created and q["started_at"] > started
        q2 = query_row(c, "q2")
        assert q2["status"] == "running" and q2["input_rows"] == 0
        assert query_row(c, "q3")["status"] == "finished"


def test_sys_settings_shows_the_values_set(sluiced):
    server = sluiced("--max-connections", "77", "--log-level", "debug", "--commit-mode",
                     "group", "--http-port", "0")
    with connect(server) as c:
        got = {n: (v, d) for n, v, d in
               c.execute("SELECT name, setting, description FROM sys.settings")}
        assert all(d for _, d in got.values()), got
        http = int(got["http_port"][0])
        assert http > 0 and http != server.port
        assert {n: got[n][0] for n in ("listen", "port", "data_dir", "max_connections",
                                       "log_level", "log_format", "commit_mode", "ssl")} == {
            "listen": "127.0.0.1", "port": str(server.port), "data_dir": str(server.data_dir),
            "max_connections": "77", "log_level": "debug", "log_format": "text",
            "commit_mode": "group", "ssl": "off"}
        # pg_settings shows the same
        assert c.execute("SELECT setting FROM pg_settings WHERE name = 'max_connections'"
                         ).fetchone()[0] == "77"


def test_sys_connections_shows_this_session(sluiced):
    server = sluiced()
    t0 = datetime.now(timezone.utc)
    with psycopg.connect(server.dsn, autocommit=True, application_name="col check",
                         connect_timeout=10) as c, \
            psycopg.connect(server.dsn, autocommit=True, application_name="idle one") as other:
        sock = socket.socket(fileno=c.pgconn.socket)
        try:
            port = sock.getsockname()[1]
        finally:
            sock.detach()
        row = c.execute("SELECT pid, usename, datname, application_name, client_addr, "
                        "client_port, connected_at, state FROM sys.connections "
                        "WHERE pid = pg_backend_pid()").fetchone()
        pid, user, db, app, addr, cport, at, state = row
        assert pid == c.info.backend_pid
        assert (user, db, app, addr, cport, state) == \
            ("sluice", "sluice", "col check", "127.0.0.1", port, "active")
        assert t0 - timedelta(seconds=1) <= at <= datetime.now(timezone.utc)
        assert c.execute("SELECT state FROM sys.connections WHERE pid = %s",
                         (other.info.backend_pid,)).fetchone() == ("idle",)
        assert c.execute("SELECT count(*) FROM sys.connections").fetchone() == (2,)
