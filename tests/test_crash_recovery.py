"""Crash recovery and exactly-once, end to end (issue 7).

One stream of 100,000 out-of-order events (1% of them later than the
watermark allows) and three continuous queries over it, the same windowed
aggregation written to the three kinds of output:

    q_table   update mode, the result table (SELECT * FROM q_table)
    q_stream  append mode, INTO the internal stream out_s
    q_files   append mode, INTO a files sink (read through its manifest)

and a stateless one, q_rows (SELECT k, ts, v ... WHERE v < 10), whose result
table is a result log of chunks keyed by (batch id, chunk number).

For each fault point (docs/architecture.md, "Recovery") the server is
started with SLUICE_FAULT=point:N, dies there with SIGKILL, is restarted
without it, and every output is compared with the result computed here in
Python by the engine's rules (batches of max_offsets_per_trigger rows, rows
judged late against the watermark known when their batch was planned, a
window emitted in append mode in the batch that moves the watermark past
its end): no row lost, none duplicated.  Then one data directory goes
through 50 SIGKILLs at random moments and the outputs are compared again;
at least MIN_CUT of those kills must have cut a batch (planned in the
offset log, not committed: the next run logs "replaying batch"), or the
kills proved nothing.

The events are loaded while the queries are paused, so every run cuts the
same batches whatever the timing; the queries are resumed in the run that
is to crash.
"""

import json
import random
import time
from collections import Counter
from datetime import datetime, timedelta

import psycopg
import pytest
from conftest import crash_at_fault_point, kill_at_random

N_EVENTS = 100_000
BATCH = 10_000              # max_offsets_per_trigger
WIN_US = 10_000_000         # 10-second tumbling windows
DELAY_US = 5_000_000        # WATERMARK FOR ts AS ts - INTERVAL '5 seconds'
EPOCH = datetime(2000, 1, 1)
T0_US = int((datetime(2026, 1, 1, 12, 0, 0) - EPOCH).total_seconds()) * 1_000_000
CONVERGE = 240              # seconds the restarted server has to catch up

QUERY = ("SELECT window_start, window_end, k, count(*) AS n, sum(v) AS s FROM ev "
         "GROUP BY WINDOW(ts, INTERVAL '10 seconds'), k")
QUERIES = ("q_table", "q_stream", "q_files", "q_rows")

# (fault point, N: the hit that kills).  offsets_*, batch_*, commit_log_*
# are reached once per batch of each query; sink_* once per batch of q_files.
FAULT_POINTS = [
    ("offsets_before_write", 7),
    ("offsets_after_write", 7),
    ("batch_middle", 7),
    ("sink_before_commit", 5),
    ("sink_after_commit", 5),
    ("batch_before_state_commit", 7),
    ("batch_after_state_commit", 7),
    ("batch_after_deliver", 7),
    ("commit_log_before_write", 7),
    ("commit_log_after_write", 7),
]


def make_events(seed):
    """(k, ts in microseconds since 2000-01-01, v) in stream order: event
    times run 10 ms apart, each up to 3 s early; 1% are 30 s early (late for
    a 5 s watermark); the last event is an hour later and closes every
    window before it."""
    rng = random.Random(seed)
    events = []
    for i in range(N_EVENTS):
        t = T0_US + i * 10_000 - rng.randrange(3_000_000)
        if rng.random() < 0.01:
            t -= 30_000_000
        events.append((rng.randrange(10), t, rng.randrange(100)))
    events.append((99, T0_US + N_EVENTS * 10_000 + 3_600_000_000, 0))
    return events


def expected(events, batch):
    """The engine's result: (update-mode table, append-mode rows), each row
    (window_start, window_end, k, n, s) with times in microseconds."""
    groups = {}
    emitted, done = [], set()
    wm = None
    for b0 in range(0, len(events), batch):
        max_ev = None
        for k, t, v in events[b0:b0 + batch]:
            max_ev = t if max_ev is None else max(max_ev, t)
            ws = t // WIN_US * WIN_US
            if wm is not None and ws + WIN_US <= wm:
                continue        # late: its window closed before the batch
            g = groups.setdefault((ws, k), [0, 0])
            g[0] += 1
            g[1] += v
        if max_ev is not None and (wm is None or max_ev - DELAY_US > wm):
            wm = max_ev - DELAY_US
        for (ws, k), (n, s) in sorted(groups.items()):
            if ws + WIN_US <= wm and (ws, k) not in done:
                done.add((ws, k))
                emitted.append((ws, ws + WIN_US, k, n, s))
    table = sorted((ws, ws + WIN_US, k, n, s) for (ws, k), (n, s) in groups.items())
    return table, sorted(emitted)


def us(value):
    """A timestamp (datetime or PostgreSQL text) in microseconds since 2000."""
    if isinstance(value, str):
        value = datetime.fromisoformat(value)
    d = value - EPOCH
    return (d.days * 86_400 + d.seconds) * 1_000_000 + d.microseconds


def ts_text(t):
    return (EPOCH + timedelta(microseconds=t)).isoformat(sep=" ")


def connect(server):
    return psycopg.connect(server.dsn, autocommit=True)


def set_up(server, sink_dir, events, batch):
    """The stream, the output stream, the sink and the three queries, paused;
    then the events.  Batches will be cut the same way in every run."""
    with connect(server) as c:
        c.execute("CREATE STREAM ev (k BIGINT, ts TIMESTAMP, v INT,"
                  " WATERMARK FOR ts AS ts - INTERVAL '5 seconds')")
        c.execute("CREATE STREAM out_s (window_start TIMESTAMP, window_end TIMESTAMP,"
                  " k BIGINT, n BIGINT, s BIGINT)")
        c.execute(f"CREATE SINK out_f WITH (connector = 'files', path = '{sink_dir}',"
                  " format = 'json')")
        opts = f"trigger = '0', max_offsets_per_trigger = {batch}"
        c.execute(f"CREATE CONTINUOUS QUERY q_table WITH ({opts}, output_mode = 'update')"
                  f" AS {QUERY}")
        c.execute(f"CREATE CONTINUOUS QUERY q_stream INTO out_s WITH ({opts},"
                  f" output_mode = 'append') AS {QUERY}")
        c.execute(f"CREATE CONTINUOUS QUERY q_files INTO out_f WITH ({opts},"
                  f" output_mode = 'append') AS {QUERY}")
        c.execute(f"CREATE CONTINUOUS QUERY q_rows WITH ({opts}) AS"
                  " SELECT k, ts, v FROM ev WHERE v < 10")
        for q in QUERIES:
            c.execute(f"ALTER CONTINUOUS QUERY {q} PAUSE")
        # One append per COPY: chunks of 1,000 rows, so a batch reads only
        # the chunks its range touches.
        for i in range(0, len(events), 1_000):
            with c.cursor().copy("COPY ev (k, ts, v) FROM STDIN") as cp:
                for k, t, v in events[i:i + 1_000]:
                    cp.write_row((k, ts_text(t), v))


def resume_all(server):
    with connect(server) as c:
        for q in QUERIES:
            c.execute(f"ALTER CONTINUOUS QUERY {q} RESUME")


def read_files(sink_dir):
    """The rows of every file the manifest lists, and the manifest's batches."""
    rows, batches = [], []
    manifest = sink_dir / "_manifest.jsonl"
    if not manifest.exists():
        return rows, batches
    for line in manifest.read_text().splitlines():
        entry = json.loads(line)
        batches.append((entry["query"], entry["batch_id"]))
        for rec in (sink_dir / entry["file"]).read_text().splitlines():
            r = json.loads(rec)
            rows.append((us(r["window_start"]), us(r["window_end"]), r["k"], r["n"], r["s"]))
    return sorted(rows), batches


def outputs(server, sink_dir):
    with connect(server) as c:
        table = sorted((us(a), us(b), k, n, s) for a, b, k, n, s in
                       c.execute("SELECT * FROM q_table").fetchall())
        stream = sorted((us(a), us(b), k, n, s) for a, b, k, n, s in
                        c.execute("SELECT * FROM out_s").fetchall())
        plain = sorted((k, us(t), v) for k, t, v in
                       c.execute("SELECT k, ts, v FROM q_rows").fetchall())
    files, batches = read_files(sink_dir)
    return table, stream, files, batches, plain


def lost_and_duplicated(got, want):
    g, w = Counter(got), Counter(want)
    lost = sum((w - g).values())
    dup = sum((g - w).values())
    return lost, dup


def converge(server, sink_dir, want):
    """Polls until the four outputs equal the expected ones (or the deadline);
    returns the last outputs."""
    want_table, want_append, want_rows = want
    deadline = time.monotonic() + CONVERGE
    while True:
        got = outputs(server, sink_dir)
        if (got[0] == want_table and got[1] == want_append and got[2] == want_append
                and got[4] == want_rows) or time.monotonic() > deadline:
            return got
        time.sleep(0.25)


def check_outputs(got, want):
    want_table, want_append, want_rows = want
    table, stream, files, batches, plain = got
    report = {name: lost_and_duplicated(rows, w) for name, rows, w in
              (("result table", table, want_table), ("INTO stream", stream, want_append),
               ("files sink", files, want_append), ("stateless result table", plain, want_rows))}
    assert all(v == (0, 0) for v in report.values()), f"(lost, duplicated): {report}"
    assert len(batches) == len(set(batches)), "a batch is listed twice in the manifest"


def expected_rows(events):
    return sorted((k, t, v) for k, t, v in events if v < 10)


@pytest.fixture(scope="module")
def events():
    ev = make_events(7)
    table, append = expected(ev, BATCH)
    # The data must exercise what it claims to: late rows, windows that a
    # later batch still changes, output in many batches.
    assert len(append) > 900 and len(table) == len(append) + 1
    assert sum(n for *_, n, _ in table) < len(ev) - 100     # late rows dropped
    return ev, (table, append, expected_rows(ev))


@pytest.mark.parametrize("point,hit", FAULT_POINTS, ids=[p for p, _ in FAULT_POINTS])
def test_crash_at_fault_point(sluiced, tmp_path, events, point, hit):
    ev, want = events
    sink_dir = tmp_path / "sink"
    server = sluiced()
    set_up(server, sink_dir, ev, BATCH)
    server.stop()

    crash_at_fault_point(server, point, hit, resume_all, CONVERGE)
    check_outputs(converge(server, sink_dir, want), want)


KILLS = 50
MIN_CUT = 5         # kills that must leave a batch planned and not committed (idle:
                    # 21-26 of 50; 9 under four parallel workers' load; none when the
                    # kills land while the queries are paused)


def test_fifty_random_kills(sluiced, tmp_path, events):
    """One data directory, 50 runs each killed with SIGKILL at a random
    moment of its work; then one clean run; the outputs are exact, and at
    least MIN_CUT of the kills interrupted a batch: its offset-log entry
    written, its commit not, so the next run replayed it."""
    ev, _ = events
    batch = 100             # more, smaller batches: kills land in more places,
                            # and the work lasts through the 50 runs
    want = (*expected(ev, batch), expected_rows(ev))
    sink_dir = tmp_path / "sink"
    server = sluiced()
    set_up(server, sink_dir, ev, batch)
    server.stop()
    kill_at_random(server, KILLS, random.Random(50), resume_all)
    check_outputs(converge(server, sink_dir, want), want)
    # The kills landed mid-work: a batch whose offset-log entry a kill left
    # without its commit is replayed by a later run, which logs it.  Runs
    # are the log's parts after each "### started:" line: the first set up
    # and stopped cleanly, then the killed runs, then the clean one.
    runs = server.log_text().split("### started:")[1:]
    assert len(runs) == KILLS + 2
    cut = sum('msg="replaying batch"' in run for run in runs[2:])
    print(f"{cut} of {KILLS} kills left a batch to replay")
    assert cut >= MIN_CUT, f"only {cut} of {KILLS} kills left a batch to replay"
