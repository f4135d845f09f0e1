"""BACKUP TO 'dir' and the restore that resumes every continuous query
exactly once (issue 23, item 6; docs/operations.md, "Backup and restore").

The scenario: two internal streams, clicks and imps, loaded by COPY while
four continuous queries over them are paused, then resumed; BACKUP runs
while their batches run (the backup's offset log is checked to be mid-way
through the input); the original server finishes that input, gets more
(phase 2) and runs to its end.  A second server started on the backup --
the restore -- finishes the same input from where the backup left it, gets
the same phase 2 and runs to its end.  Every output of the restored server
equals the original's, and both equal a model computed here in Python from
the input alone:

    q_win    update mode: 10-second tumbling windows per key, count and sum
    q_app    append mode: the same, the windows the final watermark closed
    q_rows   a filter whose result log is large enough per batch for result
             files (state/results/*.seg), copied by the backup
    q_join   a stream-stream interval join, clicks within 2 s after an
             impression of the same key

Each phase's input is loaded while the queries are paused, so both servers
cut the same batches (max_offsets_per_trigger), whatever the timing.  The
event times increase with small jitter, so no row is late and the model is
plain SQL over all the input.

A batch held on its worker (fault points in hold mode) while BACKUP runs
makes the two in-flight cases deterministic: held before its state commit,
the backup's offset log is one batch ahead of its state and the restored
server replays that batch; held after it, the commit-log entry is what is
missing, and the restore writes it.  Both end equal to the model.

Also: the backup shares no file with the data directory (no hard link
left); BACKUP as a plain role (42501), into a non-empty directory or onto a
file (58P02), a relative path (42602), one whose parent is missing (58P01), the
data directory (42501), inside
a transaction block (25001) are refused and leave nothing; an empty
existing directory is taken; a crash mid-BACKUP leaves a staging directory
that the next start removes.
"""

import json
import os
import random
import signal
import sqlite3
from collections import Counter, defaultdict
from datetime import datetime, timedelta

import psycopg
import pytest

from conftest import Sluiced, sluiced_binary
from helpers import wait_for


def connect(server):
    return psycopg.connect(server.dsn, autocommit=True)

N1 = 24_000                 # events per stream in phase 1 (backed up)
N2 = 8_000                  # per stream in phase 2 (after the backup)
BATCH = 2_000               # max_offsets_per_trigger
STEP_US = 100_000           # event i at T0 + i * 0.1 s, minus jitter
JITTER_US = 2_000_000
WIN_US = 10_000_000
DELAY_US = 5_000_000        # WATERMARK ... - INTERVAL '5 seconds'
JOIN_US = 2_000_000
PAD = 300                   # bytes of text per q_rows row: result files
EPOCH = datetime(2000, 1, 1)
T0 = datetime(2026, 1, 1, 12, 0, 0)
WAIT = 600                  # seconds a server has to run its input

SETUP = [
    "CREATE STREAM clicks (k BIGINT, ts TIMESTAMP, v BIGINT, pad TEXT,"
    " WATERMARK FOR ts AS ts - INTERVAL '5 seconds')",
    "CREATE STREAM imps (id BIGINT, k BIGINT, ts TIMESTAMP,"
    " WATERMARK FOR ts AS ts - INTERVAL '5 seconds')",
    f"CREATE CONTINUOUS QUERY q_win WITH (trigger = '0', max_offsets_per_trigger = {BATCH}) AS"
    " SELECT window_start, window_end, k, count(*) AS n, sum(v) AS s FROM clicks"
    " GROUP BY WINDOW(ts, INTERVAL '10 seconds'), k",
    f"CREATE CONTINUOUS QUERY q_app WITH (trigger = '0', max_offsets_per_trigger = {BATCH},"
    " output_mode = 'append') AS"
    " SELECT window_start, window_end, k, count(*) AS n, sum(v) AS s FROM clicks"
    " GROUP BY WINDOW(ts, INTERVAL '10 seconds'), k",
    f"CREATE CONTINUOUS QUERY q_rows WITH (trigger = '0', max_offsets_per_trigger = {BATCH}) AS"
    " SELECT k, ts, v, pad FROM clicks WHERE v < 50",
    f"CREATE CONTINUOUS QUERY q_join WITH (trigger = '0', max_offsets_per_trigger = {BATCH}) AS"
    " SELECT i.id, c.k, c.v FROM imps i JOIN clicks c"
    " ON c.k = i.k AND c.ts BETWEEN i.ts AND i.ts + INTERVAL '2 seconds'",
]
QUERIES = ("q_win", "q_app", "q_rows", "q_join")
READS = {
    "q_win": "SELECT window_start, window_end, k, n, s FROM q_win",
    "q_app": "SELECT window_start, window_end, k, n, s FROM q_app",
    "q_rows": "SELECT k, ts, v, length(pad) FROM q_rows",
    "q_join": "SELECT id, k, v FROM q_join",
}


def us(value):
    d = value - EPOCH
    return (d.days * 86_400 + d.seconds) * 1_000_000 + d.microseconds


def make_input(seed):
    """(clicks, imps) for both phases: clicks (k, ts_us, v), imps (id, k,
    ts_us), event times T0 + i * STEP minus up to JITTER (less than the
    watermark's delay: no row is late)."""
    rng = random.Random(seed)
    t0 = us(T0)
    clicks = [(i % 20, t0 + i * STEP_US - rng.randrange(JITTER_US), rng.randrange(100))
              for i in range(N1 + N2)]
    imps = [(i, i % 20, t0 + i * STEP_US - rng.randrange(JITTER_US)) for i in range(N1 + N2)]
    return clicks, imps


def model(clicks, imps):
    """Each query's rows over all the input, as READS returns them (times
    in microseconds since 2000)."""
    groups = defaultdict(lambda: [0, 0])
    for k, t, v in clicks:
        g = groups[(t // WIN_US * WIN_US, k)]
        g[0] += 1
        g[1] += v
    win = sorted((ws, ws + WIN_US, k, n, s) for (ws, k), (n, s) in groups.items())
    wm = max(t for _, t, _ in clicks) - DELAY_US
    app = [r for r in win if r[1] <= wm]
    rows = sorted((k, t, v, PAD) for k, t, v in clicks if v < 50)
    by_key = defaultdict(list)
    for k, t, v in clicks:
        by_key[k].append((t, v))
    join = sorted((i, k, v) for i, k, it in imps for t, v in by_key[k] if it <= t <= it + JOIN_US)
    return {"q_win": win, "q_app": app, "q_rows": rows, "q_join": join}


def ts_text(t):
    return (EPOCH + timedelta(microseconds=t)).isoformat(sep=" ")


def load(c, clicks, imps):
    with c.cursor().copy("COPY clicks FROM STDIN") as cp:
        for k, t, v in clicks:
            cp.write(f"{k}\t{ts_text(t)}\t{v}\t{'x' * PAD}\n")
    with c.cursor().copy("COPY imps FROM STDIN") as cp:
        for i, k, t in imps:
            cp.write(f"{i}\t{k}\t{ts_text(t)}\n")


def pause(c, on):
    for q in QUERIES:
        c.execute(f"ALTER CONTINUOUS QUERY {q} {'PAUSE' if on else 'RESUME'}")


def consumed(c):
    """Per query: the input offsets its committed batches read, summed over
    its inputs (sys.source_lag's committed_offset moves at a commit)."""
    got = dict(c.execute("SELECT query, sum(committed_offset) FROM sys.source_lag "
                         "GROUP BY query").fetchall())
    return {q: int(got.get(q) or 0) for q in QUERIES}


def run_to(c, n):
    """Waits until every query has read n rows of each of its inputs."""
    want = {q: (2 * n if q == "q_join" else n) for q in QUERIES}
    assert wait_for(lambda: consumed(c), want, timeout=WAIT) == want


def outputs(c, queries=QUERIES):
    out = {}
    for q in queries:
        sql = READS[q]
        rows = []
        for r in c.execute(sql).fetchall():
            rows.append(tuple(us(x) if isinstance(x, datetime) else x for x in r))
        out[q] = sorted(rows)
    return out


def finish(c, clicks, imps):
    """Runs phase 1 to its end, then phase 2 (loaded while the queries are
    paused) to its end; returns the outputs."""
    run_to(c, N1)
    pause(c, True)
    load(c, clicks[N1:], imps[N1:])
    pause(c, False)
    run_to(c, N1 + N2)
    return outputs(c)


def backup_positions(catalog):
    """Per query oid: the offsets the last batch of the backup's offset log
    ends at, summed over its inputs, and the last batch id."""
    db = sqlite3.connect(f"file:{catalog}?mode=ro", uri=True)
    try:
        got = {}
        for oid, batch, sources in db.execute(
                "SELECT query_oid, batch_id, sources FROM cq_offsets o WHERE batch_id = "
                "(SELECT max(batch_id) FROM cq_offsets WHERE query_oid = o.query_oid)"):
            got[oid] = (batch, sum(s["end"] for s in json.loads(sources)))
        return got
    finally:
        db.close()


def linked_files(root):
    return [p for p in root.rglob("*") if p.is_file() and os.stat(p).st_nlink > 1]


def test_backup_while_running_restores_exactly_once(sluiced, tmp_path):
    clicks, imps = make_input(23)
    want = model(clicks, imps)
    assert want["q_app"] and want["q_join"] and len(want["q_rows"]) > 10_000
    server = sluiced()
    target = tmp_path / "restored" / "data"
    target.parent.mkdir()
    with connect(server) as c:
        for sql in SETUP:
            c.execute(sql)
        pause(c, True)
        load(c, clicks[:N1], imps[:N1])
        pause(c, False)
        # mid-run: a batch of each query committed, far from the end
        assert wait_for(lambda: min(consumed(c).values()) > 0, True, timeout=WAIT)
        c.execute(f"BACKUP TO '{target}'")
        original = finish(c, clicks, imps)

    # the backup: a data directory of its own, taken mid-run
    assert (target / "catalog.db").is_file() and (target / "state" / "CURRENT").is_file()
    assert not (target / "sluiced.lock").exists()
    assert not (server.data_dir / "backup.tmp").exists()
    assert linked_files(target) == [] and linked_files(server.data_dir) == []
    assert list((target / "state" / "results").glob("*.seg")), "no result file backed up"
    positions = backup_positions(target / "catalog.db")
    assert len(positions) == len(QUERIES)
    assert any(end < N1 for _, end in positions.values()), positions

    restored = Sluiced(sluiced_binary(), tmp_path / "restored")
    try:
        restored.start()
        with connect(restored) as c:
            again = finish(c, clicks, imps)
    finally:
        problems = restored.check()
    assert problems is None, problems

    # every row once: the same multiset as the uninterrupted run and the model
    for q in QUERIES:
        assert Counter(again[q]) == Counter(original[q]), q
        assert original[q] == want[q], q


def test_backup_refusals(sluiced, tmp_path):
    server = sluiced()
    full = tmp_path / "full"
    full.mkdir()
    (full / "x").write_text("x")
    a_file = tmp_path / "a_file"
    a_file.write_text("x")
    with connect(server) as c:
        c.execute("CREATE STREAM s (k BIGINT)")
        c.execute("INSERT INTO s VALUES (1)")
        c.execute("CREATE ROLE plain LOGIN")
        dsn = server.dsn.replace("user=sluice", "user=plain")
        with psycopg.connect(dsn, autocommit=True) as p:
            with pytest.raises(psycopg.errors.InsufficientPrivilege) as e:
                p.execute(f"BACKUP TO '{tmp_path / 'by_plain'}'")
            assert "permission denied to run BACKUP" in str(e.value)
        assert not (tmp_path / "by_plain").exists()
        with pytest.raises(psycopg.errors.DuplicateFile) as e:
            c.execute(f"BACKUP TO '{full}'")
        assert "exists and is not empty" in str(e.value)
        assert sorted(p.name for p in full.iterdir()) == ["x"]
        with pytest.raises(psycopg.errors.DuplicateFile):
            c.execute(f"BACKUP TO '{a_file}'")
        with pytest.raises(psycopg.errors.UndefinedFile):
            c.execute(f"BACKUP TO '{tmp_path / 'no_parent' / 'dir'}'")
        with pytest.raises(psycopg.errors.InvalidName):
            c.execute("BACKUP TO 'relative/dir'")
        with pytest.raises(psycopg.errors.InsufficientPrivilege):
            c.execute(f"BACKUP TO '{server.data_dir / 'inside'}'")
        with pytest.raises(psycopg.errors.InsufficientPrivilege):
            c.execute(f"BACKUP TO '{tmp_path / 'a' / '..' / 'b'}'")
        assert not (server.data_dir / "inside").exists()
        with psycopg.connect(server.dsn) as b:      # a transaction block
            with pytest.raises(psycopg.errors.ActiveSqlTransaction):
                b.execute(f"BACKUP TO '{tmp_path / 'in_block'}'")
        assert not (tmp_path / "in_block").exists()
        # an empty directory is taken, and holds a data directory after
        empty = tmp_path / "empty"
        empty.mkdir()
        c.execute(f"BACKUP TO '{empty}'")
        assert (empty / "catalog.db").is_file() and (empty / "state" / "CURRENT").is_file()
        assert not (server.data_dir / "backup.tmp").exists()
        # the next one runs (one at a time: the first is over)
        c.execute(f"BACKUP TO '{tmp_path / 'second'}'")
        assert (tmp_path / "second" / "catalog.db").is_file()
    # logged as DDL is, once as it starts
    assert 'kind=ddl pid=' in server.log_text()
    assert f"statement=\"BACKUP TO '{tmp_path / 'second'}'\"" in server.log_text()
    (tmp_path / "r").mkdir()
    restored = Sluiced(sluiced_binary(), tmp_path / "r")
    restored.data_dir = empty
    try:
        restored.start()
        with connect(restored) as c:
            assert c.execute("SELECT k FROM s").fetchall() == [(1,)]
            with pytest.raises(psycopg.errors.InsufficientPrivilege):
                with psycopg.connect(restored.dsn.replace("user=sluice", "user=plain"),
                                     autocommit=True) as p:
                    p.execute(f"BACKUP TO '{tmp_path / 'by_plain2'}'")
    finally:
        problems = restored.check()
    assert problems is None, problems


def test_crash_mid_backup_leaves_nothing(sluiced, tmp_path):
    """Killed between the snapshot and the copy: the staging directory is
    removed at the next start, the target was never made, and a BACKUP after
    works."""
    server = sluiced()
    with connect(server) as c:
        c.execute("CREATE STREAM s (k BIGINT)")
        c.execute("INSERT INTO s VALUES (7)")
    server.stop()
    server.env["SLUICE_FAULT"] = "backup_before_copy:1"
    server.start()
    with connect(server) as c:
        with pytest.raises(psycopg.OperationalError):
            c.execute(f"BACKUP TO '{tmp_path / 'cut'}'")
    assert server.wait_exit(60) == -signal.SIGKILL
    assert (server.data_dir / "backup.tmp" / "catalog.db").is_file()
    del server.env["SLUICE_FAULT"]
    server.start()
    assert not (server.data_dir / "backup.tmp").exists()
    assert "removing the staging directory of a BACKUP cut short" in server.log_text()
    assert not (tmp_path / "cut").exists()
    with connect(server) as c:
        c.execute(f"BACKUP TO '{tmp_path / 'after'}'")
        assert c.execute("SELECT k FROM s").fetchall() == [(7,)]
    assert (tmp_path / "after" / "catalog.db").is_file()


@pytest.mark.parametrize("point", ["batch_before_state_commit", "batch_after_state_commit"])
def test_backup_with_a_batch_in_flight(sluiced, tmp_path, point):
    """The third batch of q_win is held on its worker (fault point `point`,
    hold mode) while BACKUP runs: before its state commit the backup holds
    an offset log one batch ahead of the state, and the restored server
    replays that batch; after it, the state has the batch and the commit
    log not (the entry is written at the restore).  Either way the restored
    server's q_win equals the original's and the model."""
    clicks, imps = make_input(7)
    clicks = clicks[:10_000]
    hold = tmp_path / "hold"
    hold.write_text("")
    server = sluiced(env={"SLUICE_FAULT": f"{point}:3:hold", "SLUICE_FAULT_HOLD": str(hold)})
    target = tmp_path / "restored" / "data"
    target.parent.mkdir()
    with connect(server) as c:
        c.execute(SETUP[0])
        c.execute(SETUP[2])     # q_win alone: the third batch is its own
        c.execute("ALTER CONTINUOUS QUERY q_win PAUSE")
        with c.cursor().copy("COPY clicks FROM STDIN") as cp:
            for k, t, v in clicks:
                cp.write(f"{k}\t{ts_text(t)}\t{v}\t{'x' * PAD}\n")
        c.execute("ALTER CONTINUOUS QUERY q_win RESUME")
        assert wait_for(lambda: f"fault point {point} reached, holding" in server.log_text(),
                        True, timeout=WAIT)
        c.execute(f"BACKUP TO '{target}'")
        hold.unlink()
        assert wait_for(lambda: consumed(c)["q_win"], len(clicks), timeout=WAIT) == len(clicks)
        original = outputs(c, ["q_win"])["q_win"]
    (batch, end), = backup_positions(target / "catalog.db").values()
    assert (batch, end) == (2, 3 * BATCH), (batch, end)

    restored = Sluiced(sluiced_binary(), tmp_path / "restored")
    try:
        restored.start()
        with connect(restored) as c:
            assert wait_for(lambda: consumed(c)["q_win"], len(clicks),
                            timeout=WAIT) == len(clicks)
            again = outputs(c, ["q_win"])["q_win"]
        log = restored.log_text()
    finally:
        problems = restored.check()
    assert problems is None, problems
    replayed = 'msg="replaying batch" query=q_win batch=2' in log
    assert replayed == (point == "batch_before_state_commit"), log[-3000:]
    assert again == original == model(clicks, imps[:0])["q_win"]
