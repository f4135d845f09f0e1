"""Exactly once through SIGKILL for continuous queries on the operator graph
(issue 21; docs/engine.md, "Queries on the operator graph").

Three queries the fixed plan refuses, over streams of the same 20,000
events (in ev, with a watermark: 0.5% of them later than it allows):

    g_max   an aggregate over a windowed aggregate: per key, the largest
            count of a 10-second window (the inner counts change, the outer
            max retracts and re-inserts)
    g_hist  an aggregate over an aggregate: how many keys have each count
    g_into  UNION of a stream without a watermark (raw) with itself, INTO
            the stream out_k: no operator retracts, so each distinct row
            is appended once, with the state, never twice

For each fault point of tests/test_crash_recovery.py but the files
sink's (docs/architecture.md, "Recovery"), the server is started with SLUICE_FAULT=point:N, dies there
with SIGKILL, is restarted without it, and the outputs are compared
with what a Python model computes by the engine's rules (batches of
max_offsets_per_trigger rows; a row whose event time is below the watermark
its batch was planned with is late and dropped): no contribution lost, none
counted twice.  Then one data directory goes through 20 SIGKILLs at random
moments and the tables are compared again.  The events are loaded while
the queries are paused, so every run cuts the same batches.
"""

import random
import time
from collections import Counter
from datetime import datetime, timedelta

import psycopg
import pytest
from conftest import crash_at_fault_point, kill_at_random
from test_crash_recovery import FAULT_POINTS as CRASH_POINTS

N_EVENTS = 20_000
BATCH = 2_000               # max_offsets_per_trigger
WIN_US = 10_000_000         # 10-second tumbling windows
DELAY_US = 5_000_000        # WATERMARK FOR ts AS ts - INTERVAL '5 seconds'
EPOCH = datetime(2000, 1, 1)
T0_US = int((datetime(2026, 1, 1, 12, 0, 0) - EPOCH).total_seconds()) * 1_000_000
CONVERGE = 240              # seconds the restarted server has to catch up
NKEYS = 20

QUERIES = {
    "g_max": ("SELECT k, max(c) AS m FROM (SELECT window_start, k, count(*) AS c FROM ev "
              "GROUP BY WINDOW(ts, INTERVAL '10 seconds'), k) x GROUP BY k"),
    "g_hist": ("SELECT n, count(*) AS keys FROM (SELECT k, count(*) AS n FROM ev GROUP BY k) x "
               "GROUP BY n"),
    # INTO a stream (no operator retracts): a stream without a watermark
    # read twice, UNION: each distinct row appended exactly once
    "g_into": "SELECT k, ts FROM raw UNION SELECT k, ts FROM raw",
}
INTO = {"g_into": "out_k"}

# test_crash_recovery's fault points but its files sink's: each is reached
# once per batch of each query (offsets_before_write, offsets_after_write,
# batch_middle, batch_before_state_commit, ...).
FAULT_POINTS = [(p, n) for p, n in CRASH_POINTS if not p.startswith("sink_")]


def make_events(seed):
    """(k, ts in microseconds since 2000-01-01) in stream order: event times
    50 ms apart, each up to 3 s early; 0.5% are 30 s early (late for a 5 s
    watermark)."""
    rng = random.Random(seed)
    events = []
    for i in range(N_EVENTS):
        t = T0_US + i * 50_000 - rng.randrange(3_000_000)
        if rng.random() < 0.005:
            t -= 30_000_000
        events.append((rng.randrange(NKEYS), t))
    return events


def expected(events, batch):
    """The two result tables by the engine's rules, as sorted row lists."""
    kept = []
    wm = None
    for b0 in range(0, len(events), batch):
        max_ev = None
        for k, t in events[b0:b0 + batch]:
            max_ev = t if max_ev is None else max(max_ev, t)
            if wm is not None and t < wm:
                continue        # late: below the watermark its batch started with
            kept.append((k, t))
        if max_ev is not None and (wm is None or max_ev - DELAY_US > wm):
            wm = max_ev - DELAY_US
    per_window = Counter((k, t // WIN_US) for k, t in kept)
    best = {}
    for (k, _), c in per_window.items():
        best[k] = max(best.get(k, 0), c)
    per_key = Counter(k for k, _ in kept)
    hist = Counter(per_key.values())
    return sorted(best.items()), sorted(hist.items()), len(events) - len(kept)


def ts_text(t):
    return (EPOCH + timedelta(microseconds=t)).isoformat(sep=" ")


def connect(server):
    return psycopg.connect(server.dsn, autocommit=True)


def set_up(server, events, batch):
    with connect(server) as c:
        c.execute("CREATE STREAM ev (k BIGINT, ts TIMESTAMP,"
                  " WATERMARK FOR ts AS ts - INTERVAL '5 seconds')")
        c.execute("CREATE STREAM raw (k BIGINT, ts TIMESTAMP)")
        c.execute("CREATE STREAM out_k (k BIGINT, ts TIMESTAMP)")
        for name, sql in QUERIES.items():
            into = f" INTO {INTO[name]}" if name in INTO else ""
            c.execute(f"CREATE CONTINUOUS QUERY {name}{into} WITH (trigger = '0',"
                      f" max_offsets_per_trigger = {batch}) AS {sql}")
            c.execute(f"ALTER CONTINUOUS QUERY {name} PAUSE")
        for stream in ("ev", "raw"):
            for i in range(0, len(events), 1_000):
                with c.cursor().copy(f"COPY {stream} (k, ts) FROM STDIN") as cp:
                    for k, t in events[i:i + 1_000]:
                        cp.write_row((k, ts_text(t)))


def resume_all(server):
    with connect(server) as c:
        for name in QUERIES:
            c.execute(f"ALTER CONTINUOUS QUERY {name} RESUME")


def outputs(server):
    with connect(server) as c:
        return (sorted(c.execute("SELECT k, m FROM g_max").fetchall()),
                sorted(c.execute("SELECT n, keys FROM g_hist").fetchall()),
                sorted((k, ts_text_of(t)) for k, t in
                       c.execute("SELECT k, ts FROM out_k").fetchall()))


def ts_text_of(value):
    return value.isoformat(sep=" ")


def want_of(events, batch):
    """The three outputs the model expects: g_max's and g_hist's tables and
    the rows g_into appends (each distinct event once)."""
    best, hist, _ = expected(events, batch)
    return best, hist, sorted({(k, ts_text(t)) for k, t in events})


def converge(server, want):
    deadline = time.monotonic() + CONVERGE
    while True:
        got = outputs(server)
        if got == want or time.monotonic() > deadline:
            return got
        time.sleep(0.25)


@pytest.fixture(scope="module")
def events():
    ev = make_events(21)
    best, hist, late = expected(ev, BATCH)
    # The data must exercise what it claims to: late rows dropped, every key.
    assert late > 20 and len(best) == NKEYS
    return ev


def test_graph_queries_answer(sluiced, events):
    """Without faults: both tables equal the model once every batch ran."""
    server = sluiced()
    set_up(server, events, BATCH)
    resume_all(server)
    want = want_of(events, BATCH)
    assert converge(server, want) == want
    with connect(server) as c:
        # EXPLAIN: the graph's operators, each stateful one with its bound.
        plan = "\n".join(r[0] for r in c.execute("EXPLAIN CONTINUOUS QUERY g_max").fetchall())
        for line in ("Aggregate: count(*) by k per tumbling window (state: evicts by watermark)"
                     " [op 0, from stream ev]",
                     "Aggregate: max(c) by k (state: unbounded) [op 2, from op 1]",
                     "Source: stream ev, watermark max(ts) - 5000000 us"):
            assert line in plan, plan
        # sys.state: one row per stateful operator (the graph's order:
        # the windowed count, then the max); the max keeps a group per key.
        ops = c.execute("SELECT operator, state_rows FROM sys.state WHERE query = 'g_max'"
                        ).fetchall()
        assert [op for op, _ in ops] == ["aggregate", "aggregate"], ops
        assert ops[1][1] == NKEYS, ops


@pytest.mark.parametrize("point,hit", FAULT_POINTS, ids=[p for p, _ in FAULT_POINTS])
def test_crash_at_fault_point(sluiced, events, point, hit):
    want = want_of(events, BATCH)
    server = sluiced()
    set_up(server, events, BATCH)
    server.stop()
    crash_at_fault_point(server, point, hit, resume_all, CONVERGE)
    assert converge(server, want) == want


def test_twenty_random_kills(sluiced, events):
    batch = 500             # more, smaller batches: kills land in more places
    want = want_of(events, batch)
    server = sluiced()
    set_up(server, events, batch)
    server.stop()
    kill_at_random(server, 20, random.Random(20), resume_all)
    assert converge(server, want) == want


def test_unbounded_state_warns(sluiced):
    """CREATE warns when an operator of the graph keeps state no watermark
    bounds (here the outer aggregate's groups), naming it; a query whose
    operators are all bounded gets no warning."""
    server = sluiced()
    with connect(server) as c:
        notices = []
        c.add_notice_handler(lambda d: notices.append((d.severity, d.message_primary)))
        c.execute("CREATE STREAM ev (k BIGINT, ts TIMESTAMP,"
                  " WATERMARK FOR ts AS ts - INTERVAL '5 seconds')")
        c.execute(f"CREATE CONTINUOUS QUERY g_hist AS {QUERIES['g_hist']}")
        assert len(notices) == 1 and notices[0][0] == "WARNING", notices
        assert "grows with every new key in aggregate (op 0), aggregate (op 2)" in notices[0][1]
        notices.clear()
        c.execute("CREATE CONTINUOUS QUERY g_win AS SELECT window_start, max(c) AS m FROM"
                  " (SELECT window_start, k, count(*) AS c FROM ev"
                  " GROUP BY WINDOW(ts, INTERVAL '10 seconds'), k) x GROUP BY window_start")
        assert notices == []
