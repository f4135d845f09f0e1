"""Windows, late rows, deduplication and state TTL in continuous queries
(docs/engine.md, docs/sql-reference.md "Continuous queries").

Each windowed case is checked against an oracle: the same grouping computed
in Python over the rows that were not late when their batch ran, so the
incremental result must equal the batch recomputation exactly, and the
late-row counts (read from the late_rows stream) must match too.

Covers: sliding windows (computed once per slice) in append, update and
complete mode; session windows (sessions extended, merged when a row bridges
two, emitted once the watermark passes their end) in append, update and
complete mode; late rows dropped or routed to a stream; DISTINCT and
DISTINCT ON bounded by the watermark or by state_ttl, and the refusal
without either; state_ttl evicting idle keys of an unwindowed aggregation.
"""

import random
import time

import psycopg
import pytest

from test_continuous_queries import T0, connect, rows, ts, tsp
from test_continuous_queries import wait_for as wait_for_30
from helpers import wait_read_through

WAIT = 60   # seconds a result may take to appear (a loaded 2-core machine)


def wait_for(fn, want, timeout=WAIT):
    return wait_for_30(fn, want, timeout)


def secs(t):
    return (t - T0).total_seconds()


CHUNK = 10  # rows per INSERT and per micro-batch (max_offsets_per_trigger)


def random_events(seed, n=200, late_share=0.15):
    rng = random.Random(seed)
    events = []
    t = 0.0
    for _ in range(n):
        t += rng.random()
        jitter = rng.random() * 4 if rng.random() > late_share else rng.random() * 25
        # whole milliseconds, so Python and the server agree on every bound
        events.append((rng.choice("abc"), round(max(0.0, t - jitter), 3)))
    return events


def feed(conn, events):
    """One INSERT per CHUNK rows.  With max_offsets_per_trigger = CHUNK each
    chunk is exactly one micro-batch whatever the timing, so the oracle knows
    the watermark that judged every row."""
    for pos in range(0, len(events), CHUNK):
        chunk = events[pos:pos + CHUNK]
        values = ", ".join(["(%s, %s)"] * len(chunk))
        conn.execute("INSERT INTO ev VALUES " + values,
                     [v for k, s in chunk for v in (k, tsp(s))])


def batches(events, delay):
    """(chunk, watermark judging it or None) per micro-batch, and the final
    watermark: max event time seen minus the delay, never backwards."""
    wm = None
    out = []
    for pos in range(0, len(events), CHUNK):
        chunk = events[pos:pos + CHUNK]
        out.append((chunk, wm))
        m = max(s for _, s in chunk) - delay
        wm = m if wm is None else max(wm, m)
    return out, wm


def floor_to(s, step):
    return (int(round(s * 1000)) // int(round(step * 1000))) * step


def window_oracle(events, delay, size, slide, mode):
    """Window counts and late rows of WINDOW(ts, size, slide): a row counts
    for each window holding it that had not closed when its batch began; it
    is late when all of them had."""
    counts, late = {}, []
    bs, final = batches(events, delay)
    for chunk, wm in bs:
        for k, s in chunk:
            last_start = floor_to(s, slide)
            if wm is not None and last_start + size <= wm:
                late.append((k, s))
                continue
            ws = last_start
            while ws + size > s:
                if wm is None or ws + size > wm:
                    counts[(ws, k)] = counts.get((ws, k), 0) + 1
                ws -= slide
    result = sorted((ts(ws), ts(ws + size), k, n) for (ws, k), n in counts.items()
                    if mode != "append" or ws + size <= final)
    return result, sorted(late)


def session_oracle(events, delay, gap, mode):
    """Sessions over the rows not late (event time below the watermark that
    judged the row's batch): [first, last + gap) per key, as the batch
    engine computes them."""
    kept, late = [], []
    bs, final = batches(events, delay)
    for chunk, wm in bs:
        for k, s in chunk:
            (late if wm is not None and s < wm else kept).append((k, s))
    out = []
    for key in sorted({k for k, _ in kept}):
        times = sorted(s for k, s in kept if k == key)
        start = end = None
        n = 0
        for s in times:
            if start is not None and s < end:
                end = max(end, s + gap)
                n += 1
                continue
            if start is not None:
                out.append((start, end, key, n))
            start, end, n = s, s + gap, 1
        out.append((start, end, key, n))
    result = sorted((ts(a), ts(b), k, n) for a, b, k, n in out
                    if mode != "append" or b <= final)
    return result, sorted(late)


def make_stream(c, delay):
    c.execute(f"CREATE STREAM ev (k TEXT, ts TIMESTAMP,"
              f" WATERMARK FOR ts AS ts - INTERVAL '{delay} seconds')")
    c.execute("CREATE STREAM ev_late (k TEXT, ts TIMESTAMP)")


def late_rows_of(c):
    return sorted((k, round(secs(t), 3)) for k, t in
                  c.execute("SELECT k, ts FROM ev_late").fetchall())


def check_result(c, want, want_late):
    got = wait_for(lambda: (rows(c, "SELECT * FROM w"), late_rows_of(c)), (want, want_late))
    assert got[0] == want
    assert got[1] == want_late


@pytest.mark.parametrize("mode", ["append", "update", "complete"])
@pytest.mark.parametrize("seed", [1, 2])
def test_sliding_windows_equal_batch_recomputation(server, mode, seed):
    events = random_events(seed)
    delay, size, slide = 3, 6, 2
    with connect(server) as c:
        make_stream(c, delay)
        c.execute(f"CREATE CONTINUOUS QUERY w WITH (trigger = '0', output_mode = '{mode}', "
                  f"max_offsets_per_trigger = {CHUNK}, late_rows = 'ev_late') AS "
                  f"SELECT window_start, window_end, k, count(*) AS n FROM ev "
                  f"GROUP BY WINDOW(ts, INTERVAL '{size} seconds', INTERVAL '{slide} seconds'), k")
        feed(c, events)
        want, want_late = window_oracle(events, delay, size, slide, mode)
        assert want_late, "the seed should make some rows late"
        check_result(c, want, want_late)


@pytest.mark.parametrize("mode", ["append", "update", "complete"])
def test_tumbling_windows_route_late_rows(server, mode):
    events = random_events(7)
    delay, size = 3, 5
    with connect(server) as c:
        make_stream(c, delay)
        c.execute(f"CREATE CONTINUOUS QUERY w WITH (trigger = '0', output_mode = '{mode}', "
                  f"max_offsets_per_trigger = {CHUNK}, late_rows = 'ev_late') AS "
                  f"SELECT window_start, window_end, k, count(*) AS n FROM ev "
                  f"GROUP BY WINDOW(ts, INTERVAL '{size} seconds'), k")
        feed(c, events)
        want, want_late = window_oracle(events, delay, size, size, mode)
        assert want_late
        check_result(c, want, want_late)


@pytest.mark.parametrize("mode", ["append", "update", "complete"])
@pytest.mark.parametrize("seed", [3, 4])
def test_session_windows_equal_batch_recomputation(server, mode, seed):
    events = random_events(seed)
    delay, gap = 4, 1.5
    with connect(server) as c:
        make_stream(c, delay)
        c.execute(f"CREATE CONTINUOUS QUERY w WITH (trigger = '0', output_mode = '{mode}', "
                  f"max_offsets_per_trigger = {CHUNK}, late_rows = 'ev_late') AS "
                  f"SELECT window_start, window_end, k, count(*) AS n FROM ev "
                  f"GROUP BY SESSION(ts, INTERVAL '1.5 seconds'), k")
        feed(c, events)
        want, want_late = session_oracle(events, delay, gap, mode)
        assert want_late
        check_result(c, want, want_late)


def test_late_rows_dropped_and_counted_without_a_stream(sluiced):
    """Without late_rows the late rows are dropped; the per-batch progress
    (cq_progress, printed in the debug log) counts them, with each phase's
    time."""
    server = sluiced("--log-level=debug")
    events = random_events(5)
    delay, size = 3, 5
    with connect(server) as c:
        make_stream(c, delay)
        c.execute(f"CREATE CONTINUOUS QUERY w WITH (trigger = '0', output_mode = 'append', "
                  f"max_offsets_per_trigger = {CHUNK}) AS "
                  f"SELECT window_start, window_end, k, count(*) AS n FROM ev "
                  f"GROUP BY WINDOW(ts, INTERVAL '{size} seconds'), k")
        feed(c, events)
        want, want_late = window_oracle(events, delay, size, size, "append")
        assert wait_for(lambda: rows(c, "SELECT * FROM w"), want) == want
        assert rows(c, "SELECT * FROM ev_late") == []

    n = len(events) // CHUNK
    assert wait_for(lambda: len(committed_batches(server, "w")), n) == n
    total_late = 0
    for fields in committed_batches(server, "w"):
        total_late += int(fields["late_rows"])
        for phase in ("plan_us", "read_us", "execute_us", "write_us", "commit_us", "total_us"):
            assert int(fields[phase]) >= 0
        assert int(fields["total_us"]) >= int(fields["write_us"]) + int(fields["commit_us"])
    assert total_late == len(want_late)


def test_late_rows_stream_must_fit(server):
    with connect(server) as c:
        make_stream(c, 3)
        c.execute("CREATE STREAM other (a BIGINT)")
        with pytest.raises(psycopg.errors.DatatypeMismatch) as e:
            c.execute("CREATE CONTINUOUS QUERY w WITH (output_mode = 'append', "
                      "late_rows = 'other') AS SELECT window_start, count(*) AS n FROM ev "
                      "GROUP BY WINDOW(ts, INTERVAL '5 seconds')")
        assert "must have the columns of stream \"ev\"" in str(e.value)
        with pytest.raises(psycopg.errors.UndefinedTable):
            c.execute("CREATE CONTINUOUS QUERY w WITH (late_rows = 'nowhere') AS "
                      "SELECT window_start, count(*) AS n FROM ev "
                      "GROUP BY WINDOW(ts, INTERVAL '5 seconds')")
        with pytest.raises(psycopg.errors.FeatureNotSupported) as e:
            c.execute("CREATE CONTINUOUS QUERY w WITH (late_rows = 'ev_late') AS "
                      "SELECT k, count(*) AS n FROM ev GROUP BY k")
        assert "late_rows needs an operator that can find rows late" in str(e.value)
        with pytest.raises(psycopg.errors.InvalidParameterValue):
            c.execute("CREATE CONTINUOUS QUERY w WITH (late_rows = 'ev') AS "
                      "SELECT window_start, count(*) AS n FROM ev "
                      "GROUP BY WINDOW(ts, INTERVAL '5 seconds')")
        # The late_rows stream cannot be dropped while a query writes it.
        c.execute("CREATE CONTINUOUS QUERY w WITH (late_rows = 'ev_late') AS "
                  "SELECT window_start, count(*) AS n FROM ev "
                  "GROUP BY WINDOW(ts, INTERVAL '5 seconds')")
        with pytest.raises(psycopg.errors.DependentObjectsStillExist):
            c.execute("DROP STREAM ev_late")


def dedup_oracle(events, delay):
    """DISTINCT (k, ts): the first of each pair, rows at or below the
    watermark judging their batch late."""
    seen, out, late = set(), [], []
    bs, _ = batches(events, delay)
    for chunk, wm in bs:
        for k, s in chunk:
            if wm is not None and s <= wm:
                late.append((k, s))
            elif (k, s) not in seen:
                seen.add((k, s))
                out.append((k, ts(s)))
    return sorted(out), sorted(late)


def test_distinct_bounded_by_the_watermark(server):
    rng = random.Random(11)
    base = random_events(11, n=120)
    # Each event twice, the copy a few rows later: duplicates within and
    # across batches.
    events = []
    for e in base:
        events.append(e)
        if rng.random() < 0.5:
            events.insert(len(events) - rng.randint(0, min(len(events) - 1, 15)), e)
    events = events[:len(events) - len(events) % CHUNK]
    delay = 3
    with connect(server) as c:
        make_stream(c, delay)
        c.execute(f"CREATE CONTINUOUS QUERY d WITH (trigger = '0', "
                  f"max_offsets_per_trigger = {CHUNK}, late_rows = 'ev_late') AS "
                  f"SELECT DISTINCT k, ts FROM ev")
        feed(c, events)
        want, want_late = dedup_oracle(events, delay)
        assert len(want) < len(events) - len(want_late), "the data should hold duplicates"
        got = wait_for(lambda: (rows(c, "SELECT * FROM d"), late_rows_of(c)), (want, want_late))
        assert got == (want, want_late)


def test_distinct_on_keys_with_state_ttl(server):
    """DISTINCT ON (id) with state_ttl: a key is emitted once while it is in
    state; once idle for state_ttl it is evicted and emitted again."""
    with connect(server) as c:
        c.execute("CREATE STREAM s (id BIGINT, v TEXT)")
        c.execute("CREATE CONTINUOUS QUERY d WITH (trigger = '0', state_ttl = '2 seconds') AS "
                  "SELECT DISTINCT ON (id) id, v FROM s")
        c.execute("INSERT INTO s VALUES (1, 'a'), (2, 'b'), (1, 'c')")
        want = [(1, "a"), (2, "b")]
        assert wait_for(lambda: rows(c, "SELECT * FROM d"), want) == want
        c.execute("INSERT INTO s VALUES (2, 'd')")     # a duplicate: dropped
        wait_read_through(c, "d")
        assert rows(c, "SELECT * FROM d") == want
        # After the ttl with no row for id 1, a later batch evicts it (the
        # eviction runs in a batch; this INSERT makes one).
        time.sleep(3)
        c.execute("INSERT INTO s VALUES (3, 'e')")
        want = [(1, "a"), (2, "b"), (3, "e")]
        assert wait_for(lambda: rows(c, "SELECT * FROM d"), want) == want
        c.execute("INSERT INTO s VALUES (1, 'f'), (3, 'g')")
        want = [(1, "a"), (1, "f"), (2, "b"), (3, "e")]
        assert wait_for(lambda: rows(c, "SELECT * FROM d"), want) == want


def test_distinct_refused_without_a_bound(server):
    with connect(server) as c:
        c.execute("CREATE STREAM s (id BIGINT, ts TIMESTAMP)")
        with pytest.raises(psycopg.errors.FeatureNotSupported) as e:
            c.execute("CREATE CONTINUOUS QUERY d AS SELECT DISTINCT id FROM s")
        assert "DISTINCT on a stream needs a bound on its state" in str(e.value)
        assert "WATERMARK" in e.value.diag.message_hint
        assert "state_ttl" in e.value.diag.message_hint
        make_stream(c, 3)
        with pytest.raises(psycopg.errors.FeatureNotSupported) as e:
            c.execute("CREATE CONTINUOUS QUERY d AS SELECT DISTINCT k FROM ev")
        assert 'Include the event-time column "ts"' in e.value.diag.message_hint
        with pytest.raises(psycopg.errors.FeatureNotSupported):
            c.execute("CREATE CONTINUOUS QUERY d WITH (output_mode = 'update', "
                      "state_ttl = '1 minute') AS SELECT DISTINCT k FROM ev")


def test_state_ttl_evicts_idle_keys_of_an_aggregation(server):
    """An unwindowed count with state_ttl: a key idle for the ttl leaves the
    state (its row stays); a later row for it starts from zero."""
    with connect(server) as c:
        c.execute("CREATE STREAM s (k TEXT)")
        c.execute("CREATE CONTINUOUS QUERY n WITH (trigger = '0', state_ttl = '2 seconds') AS "
                  "SELECT k, count(*) AS n FROM s GROUP BY k")
        c.execute("INSERT INTO s VALUES ('a'), ('a'), ('b')")
        want = [("a", 2), ("b", 1)]
        assert wait_for(lambda: rows(c, "SELECT * FROM n"), want) == want
        # 'b' stays busy, 'a' goes idle past the ttl.
        deadline = time.monotonic() + 3.5
        while time.monotonic() < deadline:
            c.execute("INSERT INTO s VALUES ('b')")
            time.sleep(0.5)
        nb = c.execute("SELECT count(*) FROM s WHERE k = 'b'").fetchone()[0]
        want = [("a", 2), ("b", nb)]
        assert wait_for(lambda: rows(c, "SELECT * FROM n"), want) == want
        c.execute("INSERT INTO s VALUES ('a'), ('b')")
        want = [("a", 1), ("b", nb + 1)]
        assert wait_for(lambda: rows(c, "SELECT * FROM n"), want) == want
        with pytest.raises(psycopg.errors.FeatureNotSupported) as e:
            c.execute("CREATE CONTINUOUS QUERY w WITH (state_ttl = '1 minute') AS "
                      "SELECT k FROM s")
        assert "state_ttl" in str(e.value)


def test_idle_partition_stops_holding_the_watermark_after_idle_timeout(server):
    """Two partitions: the watermark is the minimum of theirs, so a silent
    partition holds windows open; once it has been silent for idle_timeout
    it no longer counts, and the window closes -- not before."""
    idle = 6
    with connect(server) as c:
        c.execute("CREATE STREAM ev (p INT, ts TIMESTAMP,"
                  " WATERMARK FOR ts AS ts - INTERVAL '1 second')"
                  f" WITH (partitions = 2, partition_key = 'p', idle_timeout = '{idle} seconds')")
        c.execute("CREATE CONTINUOUS QUERY w WITH (trigger = '100 ms', output_mode = 'append') "
                  "AS SELECT window_start, count(*) AS n FROM ev "
                  "GROUP BY WINDOW(ts, INTERVAL '10 seconds')")
        checked_before_idle = False
        p1_sent = time.monotonic()          # before partition 1's last row
        c.execute("INSERT INTO ev VALUES (0, %s), (1, %s)", (tsp(1), tsp(2)))
        silent_since = time.monotonic()     # partition 1's last row
        # Partition 0 runs far ahead; partition 1 says nothing more.
        c.execute("INSERT INTO ev VALUES (0, %s)", (tsp(15),))
        c.execute("INSERT INTO ev VALUES (2, %s)", (tsp(25),))   # 2 mod 2: partition 0
        # Once a batch has read partition 0's rows, nothing has closed.  The
        # check counts only for a read ended before partition 1 can have
        # gone idle (timed from before its row was sent), so a slow machine
        # gives no false failure.
        wait_read_through(c, "w")
        got = rows(c, "SELECT * FROM w")
        if time.monotonic() - p1_sent < idle:
            assert got == []
            checked_before_idle = True
        want = [(ts(0), 2), (ts(10), 1)]
        assert wait_for(lambda: rows(c, "SELECT * FROM w"), want) == want
        assert time.monotonic() - silent_since >= idle
        # Partition 1 comes back: it counts again, and the watermark does not
        # go back.
        p1_sent = time.monotonic()
        c.execute("INSERT INTO ev VALUES (1, %s), (0, %s)", (tsp(31), tsp(45)))
        want = [(ts(0), 2), (ts(10), 1), (ts(20), 1)]
        assert wait_for(lambda: rows(c, "SELECT * FROM w"), want) == want
        wait_read_through(c, "w")
        got = rows(c, "SELECT * FROM w")
        if time.monotonic() - p1_sent < idle:
            assert got == want    # [30, 40) waits for partition 1
            checked_before_idle = True
        # on a machine so slow that both reads came after the idle timeout,
        # the "not before" half was never checked: that is a failure
        assert checked_before_idle, "neither read came before partition 1 went idle"


def test_partitioned_stream_options_are_checked(server):
    with connect(server) as c:
        with pytest.raises(psycopg.errors.InvalidParameterValue) as e:
            c.execute("CREATE STREAM s (p INT, ts TIMESTAMP) WITH (partitions = 4)")
        assert "partition_key" in e.value.diag.message_hint
        with pytest.raises(psycopg.errors.UndefinedColumn):
            c.execute("CREATE STREAM s (p INT) WITH (partitions = 4, partition_key = 'q')")
        with pytest.raises(psycopg.errors.InvalidParameterValue):
            c.execute("CREATE STREAM s (p INT) WITH (partitions = 0, partition_key = 'p')")
        with pytest.raises(psycopg.errors.InvalidParameterValue):
            c.execute("CREATE STREAM s (p INT) WITH (idle_timeout = 'soon')")
        c.execute("CREATE STREAM s (p INT) WITH (partitions = 4, partition_key = 'p')")


def committed_batches(server, query):
    """The fields of each "batch committed" debug log line of query."""
    out = []
    for ln in server.log_text().splitlines():
        if "batch committed" in ln and f"query={query} " in ln:
            out.append(dict(f.split("=", 1) for f in ln.split() if "=" in f))
    return out


@pytest.mark.parametrize("window", ["INTERVAL '10 seconds'",
                                    "INTERVAL '10 seconds', INTERVAL '5 seconds'"])
def test_update_mode_drops_the_state_of_closed_windows(sluiced, window):
    """In update mode too, a window's state (a sliding window's slices)
    leaves once the watermark has passed its end; the result rows stay."""
    server = sluiced("--log-level=debug")
    with connect(server) as c:
        make_stream(c, 1)
        c.execute("CREATE CONTINUOUS QUERY w WITH (trigger = '0', output_mode = 'update') AS "
                  "SELECT window_start, k, count(*) AS n FROM ev "
                  f"GROUP BY WINDOW(ts, {window}), k")
        c.execute("INSERT INTO ev VALUES ('a', %s), ('b', %s), ('a', %s)",
                  (tsp(1), tsp(2), tsp(7)))
        assert wait_for(lambda: len(committed_batches(server, "w")), 1) == 1
        assert int(committed_batches(server, "w")[-1]["state_rows"]) > 0
        # Event time 100: the watermark (99) passes every window so far.
        c.execute("INSERT INTO ev VALUES ('c', %s)", (tsp(100),))
        assert wait_for(lambda: len(committed_batches(server, "w")), 2) == 2
        # Only c's window (c's slice) is left.
        assert int(committed_batches(server, "w")[-1]["state_rows"]) == 1
        got = rows(c, "SELECT k, sum(n) FROM w GROUP BY k")
        assert got == [("a", 2 if "5 seconds" not in window else 4),
                       ("b", 1 if "5 seconds" not in window else 2),
                       ("c", 1 if "5 seconds" not in window else 2)]
        # A row for a closed window is late, and the rows stay as they were.
        c.execute("INSERT INTO ev VALUES ('a', %s), ('c', %s)", (tsp(3), tsp(101)))
        assert wait_for(lambda: len(committed_batches(server, "w")), 3) == 3
        assert committed_batches(server, "w")[-1]["late_rows"] == "1"


def test_sessions_slices_and_partitions_survive_a_restart(server):
    """The state of sessions and of sliding-window slices is in RocksDB:
    after a restart a row still bridges two sessions stored before it, and
    slices still assemble into windows (over a partitioned stream, whose
    per-partition watermark state is read back too)."""
    with connect(server) as c:
        c.execute("CREATE STREAM ev (k TEXT, ts TIMESTAMP,"
                  " WATERMARK FOR ts AS ts - INTERVAL '30 seconds')"
                  " WITH (partitions = 2, partition_key = 'k', idle_timeout = '1 hour')")
        c.execute("CREATE CONTINUOUS QUERY s WITH (trigger = '0', output_mode = 'update') AS "
                  "SELECT window_start, window_end, k, count(*) AS n FROM ev "
                  "GROUP BY SESSION(ts, INTERVAL '2 seconds'), k")
        c.execute("CREATE CONTINUOUS QUERY w WITH (trigger = '0', output_mode = 'update') AS "
                  "SELECT window_start, k, count(*) AS n FROM ev "
                  "GROUP BY WINDOW(ts, INTERVAL '6 seconds', INTERVAL '2 seconds'), k")
        c.execute("INSERT INTO ev VALUES ('a', %s), ('a', %s)", (tsp(1), tsp(4)))
        want = [(ts(1), ts(3), "a", 1), (ts(4), ts(6), "a", 1)]
        assert wait_for(lambda: rows(c, "SELECT * FROM s"), want) == want
        want_w = [(ts(-4), "a", 1), (ts(-2), "a", 1), (ts(0), "a", 2), (ts(2), "a", 1),
                  (ts(4), "a", 1)]
        assert wait_for(lambda: rows(c, "SELECT * FROM w"), want_w) == want_w
    server.restart()
    with connect(server) as c:
        c.execute("INSERT INTO ev VALUES ('a', %s)", (tsp(2.5),))
        want = [(ts(1), ts(6), "a", 3)]
        assert wait_for(lambda: rows(c, "SELECT * FROM s"), want) == want
        want_w = [(ts(-4), "a", 1), (ts(-2), "a", 2), (ts(0), "a", 3), (ts(2), "a", 2),
                  (ts(4), "a", 1)]
        assert wait_for(lambda: rows(c, "SELECT * FROM w"), want_w) == want_w


@pytest.mark.parametrize("mode", ["append", "update"])
def test_sessions_without_a_group_key(server, mode):
    with connect(server) as c:
        # a 5 s delay: however the inserts fall into batches, nothing closes
        # before the row at 20 s, so the bridging row is never late
        make_stream(c, 5)
        c.execute(f"CREATE CONTINUOUS QUERY s WITH (trigger = '0', output_mode = '{mode}') AS "
                  "SELECT window_start, window_end, count(*) AS n FROM ev "
                  "GROUP BY SESSION(ts, INTERVAL '2 seconds')")
        c.execute("INSERT INTO ev VALUES ('a', %s), ('b', %s)", (tsp(1), tsp(4)))
        c.execute("INSERT INTO ev VALUES ('a', %s)", (tsp(2.5),))    # bridges [1,3), [4,6)
        c.execute("INSERT INTO ev VALUES ('a', %s)", (tsp(20),))     # closes [1, 6)
        want = [(ts(1), ts(6), 3)] + ([] if mode == "append" else [(ts(20), ts(22), 1)])
        assert wait_for(lambda: rows(c, "SELECT * FROM s"), want) == want
