"""The kept rows of a stream-stream interval join in chunks (docs/engine.md,
"Stream-stream interval joins"): one RocksDB key per bucket of event time
((hi - lo) / 64) and batch, deleted whole once the other side's watermark
has passed the bucket; a kept row of an outer side that matches later gets
a mark key.  Checked against a batch computation over the rows that were not
late: the output (matches at both edges of the bound, NULL-padded rows
exactly once), the late rows, and the rows and bytes kept, against the keys
read back from RocksDB, through a restart and a SIGKILL at a fault point.
"""

import random
import signal
import struct

import psycopg

from test_continuous_queries import WAIT, connect, tsp, wait_for
from test_cq_joins import rows
from test_sys_columns import STATE_SQL, operator_keys

DELAY = 2_000_000                 # the watermark delay of both streams, µs
LO, HI = -1_000_000, 3_000_000    # r.ts - l.ts in [LO, HI]
BUCKET = (HI - LO) // 64          # the engine's chunk width for this bound
FLUSH = 10 ** 9                   # far ahead: moves both watermarks past everything

QUERY = ("CREATE CONTINUOUS QUERY j WITH (trigger = '0') AS "
         "SELECT l.id AS lid, r.id AS rid FROM l LEFT JOIN r ON l.k = r.k "
         "AND r.ts BETWEEN l.ts - INTERVAL '1 second' AND l.ts + INTERVAL '3 seconds'")


def make_events(rng, n, first_id):
    """n rows (id, k, t in µs), mostly in time order, many per millisecond;
    a few far out of order (late once the watermark has passed them)."""
    out, t = [], 10_000_000
    for i in range(n):
        t += rng.choice((0, 2000, 4000, 9000))
        jitter = rng.randint(0, 1_500_000) if rng.random() < 0.9 else rng.randint(0, 6_000_000)
        out.append((first_id + i, rng.randrange(2000), max(0, t - jitter) // 1000 * 1000))
    return out


def with_edges(rng, left, right):
    """Right rows at both edges of the bound of some left rows (they match)
    and one millisecond outside (they do not), mixed into right."""
    extra = []
    for lid, k, t in rng.sample(left, 40):
        for d in (LO, HI, LO - 1000, HI + 1000):
            extra.append((10 ** 6 + len(extra), k, max(0, t + d)))
    out = right + extra
    out.sort(key=lambda r: r[2] + rng.randint(0, 500_000))
    return out


class Oracle:
    """The batch computation: per batch (one INSERT into one side), which
    rows are late, the watermarks after, and which kept rows are stored
    (a row stays in its chunk until the other side's watermark passes the
    end of its bucket)."""

    def __init__(self):
        self.wm = [None, None]
        self.kept = [[], []]            # rows not late
        self.stored = [[], []]          # rows in state
        self.late = 0

    def cut(self, side):
        other = self.wm[1 - side]
        if other is None:
            return None
        return other - HI if side == 0 else other + LO

    def batch(self, side, chunk):
        self.both([(side, chunk)])

    def both(self, chunks):
        """One batch of [(side, rows)]: late rows are judged by the
        watermarks at its start, then both move."""
        new = {0: [], 1: []}
        for side, chunk in chunks:
            for row in chunk:
                if self.wm[side] is not None and row[2] < self.wm[side]:
                    self.late += 1
                else:
                    new[side].append(row)
                    self.kept[side].append(row)
        for side, chunk in chunks:
            m = max(t for _, _, t in chunk) - DELAY
            self.wm[side] = m if self.wm[side] is None else max(self.wm[side], m)
        for s in (0, 1):
            cut = self.cut(s)
            self.stored[s] += [r for r in new[s] if cut is None or r[2] >= cut]
        for s in (0, 1):
            c = self.cut(s)
            if c is not None:
                self.stored[s] = [r for r in self.stored[s]
                                  if r[2] // BUCKET * BUCKET + BUCKET > c]

    def output(self, skip_ids):
        want, by_key = [], {}
        for rid, rk, rt in self.kept[1]:
            by_key.setdefault(rk, []).append((rid, rt))
        for lid, k, t in self.kept[0]:
            if lid in skip_ids:
                continue
            m = [rid for rid, rt in by_key.get(k, ()) if LO <= rt - t <= HI]
            want += [(lid, rid) for rid in m] or [(lid, None)]
        return sorted(want, key=lambda r: (r[0], r[1] is None, r[1]))

    def state_rows(self):
        return len(self.stored[0]) + len(self.stored[1])


def chunk_keys(data_dir, oid):
    """The join's chunk keys (26 bytes) and mark keys (30) in RocksDB."""
    from test_sys_columns import RocksDB
    db = RocksDB(data_dir / "state")
    try:
        prefix = b"J" + struct.pack(">I", oid)
        lens = [len(k) for k, _ in db.scan(prefix)]
    finally:
        db.close()
    return lens.count(26), lens.count(30)


def insert(c, side, chunk):
    values = ", ".join(["(%s, %s, %s)"] * len(chunk))
    c.execute(f"INSERT INTO {'lr'[side]} VALUES " + values,
              [v for i, k, t in chunk for v in (i, k, tsp(t / 1e6))])


def insert_killed(srv, side, chunk):
    """Restarts the stopped server with a SIGKILL at the state commit of its
    next batch, inserts the rows (that batch's), and starts it again."""
    srv.env["SLUICE_FAULT"] = "batch_before_state_commit:1"
    srv.start()
    try:
        with connect(srv) as c:
            insert(c, side, chunk)
    except psycopg.OperationalError:
        pass    # the batch can reach the fault point before the INSERT's reply
    assert srv.wait_exit(WAIT) == -signal.SIGKILL
    assert "fault point batch_before_state_commit reached" in srv.log_text()
    del srv.env["SLUICE_FAULT"]
    srv.start()


def wait_read(c, total):
    """Waits until the query has committed the first `total` rows of its
    two streams (their offsets count rows), across restarts."""
    got = wait_for(lambda: c.execute("SELECT sum(committed_offset) FROM sys.source_lag "
                                     "WHERE query = 'j'").fetchone()[0], total)
    assert got == total


def plan_batches(seed, n):
    """n left and n right rows (with_edges), in INSERTs of 50-250 rows into
    one side or the other: [(side, rows)]."""
    rng = random.Random(seed)
    left = make_events(rng, n, 0)
    right = with_edges(rng, left, make_events(rng, n, 10000))
    pos, plan = [0, 0], []
    src = (left, right)
    while pos[0] < len(left) or pos[1] < len(right):
        side = rng.choice([s for s in (0, 1) if pos[s] < len(src[s])])
        k = rng.randint(50, 250)
        plan.append((side, src[side][pos[side]:pos[side] + k]))
        pos[side] += k
    return plan


def set_up(c):
    for s in "lr":
        c.execute(f"CREATE STREAM {s} (id BIGINT, k INT, ts TIMESTAMP, "
                  "WATERMARK FOR ts AS ts - INTERVAL '2 seconds')")
    c.execute(QUERY)
    return c.execute("SELECT oid FROM sys.queries WHERE name = 'j'").fetchone()[0]


def join_state(c):
    return c.execute(STATE_SQL, ("j",)).fetchone()


def test_many_rows_per_chunk_across_batches_edges_late_rows_and_eviction(sluiced):
    plan = plan_batches(7, 4000)
    oracle = Oracle()
    srv = sluiced()
    with connect(srv) as c:
        oid = set_up(c)
        fed = 0
        for side, chunk in plan:
            insert(c, side, chunk)
            fed += len(chunk)
            wait_read(c, fed)
            oracle.batch(side, chunk)
            # The rows kept, batch by batch: what the buckets still hold.
            assert join_state(c)[1] == oracle.state_rows(), (fed, join_state(c))
        kept = join_state(c)
        # The watermarks evicted chunks while rows came (not only at the end).
        assert kept[5] > 1000, kept
        late = c.execute("SELECT sum(late_rows) FROM sys.query_progress "
                         "WHERE query = 'j'").fetchone()[0]
    assert late == oracle.late > 0
    srv.stop()
    # Counted exactly: the rows and bytes of the keys RocksDB holds; many
    # rows to a key.
    assert operator_keys(srv.data_dir, b"J", oid) == kept[1:3], kept
    chunks, marks = chunk_keys(srv.data_dir, oid)
    assert kept[1] > 500 and chunks * 4 < kept[1], (kept, chunks)
    assert marks > 0        # kept left rows matched by a later right row

    srv.start()
    with connect(srv) as c:
        assert join_state(c)[:3] == kept[:3]
        for side, chunk in ((0, [(99_000, -1, FLUSH)]), (1, [(99_001, -2, FLUSH)])):
            insert(c, side, chunk)
            fed += 1
            wait_read(c, fed)
            oracle.batch(side, chunk)
        want = oracle.output({99_000})
        # The data exercises the edges: matches exactly at lo and at hi.
        lt = {r[0]: r[2] for r in oracle.kept[0]}
        rt = {r[0]: r[2] for r in oracle.kept[1]}
        gaps = {rt[rid] - lt[lid] for lid, rid in want if rid is not None}
        assert LO in gaps and HI in gaps
        assert sum(r[1] is None for r in want) > 10
        got = wait_for(lambda: rows(c, "SELECT * FROM j"), want)
        assert got == want
        # Both flush rows are left; every other chunk and mark is gone.
        st = join_state(c)
        assert st[1] == oracle.state_rows() == 2
        assert st[5] > 0
    srv.stop()
    assert operator_keys(srv.data_dir, b"J", oid) == st[1:3]
    assert chunk_keys(srv.data_dir, oid) == (2, 0)


def test_a_kill_before_the_state_commit_replays_the_join_batch(sluiced):
    """SIGKILL at batch_before_state_commit in a batch that writes chunks,
    marks and deletions: the replay gives the same output, once."""
    plan = plan_batches(11, 600)
    oracle = Oracle()
    srv = sluiced()
    half = len(plan) // 2
    with connect(srv) as c:
        oid = set_up(c)
        fed = 0
        for side, chunk in plan[:half]:
            insert(c, side, chunk)
            fed += len(chunk)
            wait_read(c, fed)
            oracle.batch(side, chunk)
    srv.stop()
    side, chunk = plan[half]
    insert_killed(srv, side, chunk)
    fed += len(chunk)
    oracle.batch(side, chunk)
    with connect(srv) as c:
        wait_read(c, fed)
        assert join_state(c)[1] == oracle.state_rows()
        for side, chunk in plan[half + 1:] + [(0, [(99_000, -1, FLUSH)]),
                                              (1, [(99_001, -2, FLUSH)])]:
            insert(c, side, chunk)
            fed += len(chunk)
            wait_read(c, fed)
            oracle.batch(side, chunk)
        want = oracle.output({99_000})
        got = wait_for(lambda: rows(c, "SELECT * FROM j"), want)
        assert got == want
        st = join_state(c)
        assert st[1] == 2
    srv.stop()
    assert operator_keys(srv.data_dir, b"J", oid) == st[1:3]
