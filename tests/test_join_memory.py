"""The interval join's kept rows in memory and its input read in slices
(docs/engine.md, "The kept rows in memory" and "Slices").

The same data and batch oracle as tests/test_join_chunks.py, with batches
that bring rows of both sides at once (the query paused while both streams
get rows, then resumed: one batch), under the settings that change how the
join reads: slices smaller than a batch (join_slice_rows), the copy in
memory off (join_memory = 0), a cap the kept rows exceed and fall under
again, and the default.  Each must give the oracle's output and, batch by
batch, its kept rows; through a restart in the middle (the copy is loaded
again from RocksDB) and a SIGKILL before a batch's state commit (its replay
adds its rows to memory once).
"""

import random
import signal

import psycopg
import pytest

from test_continuous_queries import WAIT, connect, wait_for
from test_cq_joins import rows
from test_join_chunks import FLUSH, Oracle, insert, join_state, make_events, with_edges
from test_sys_columns import operator_keys

QUERY = ("CREATE CONTINUOUS QUERY j WITH (trigger = '0'{opts}) AS "
         "SELECT l.id AS lid, r.id AS rid FROM l LEFT JOIN r ON l.k = r.k "
         "AND r.ts BETWEEN l.ts - INTERVAL '1 second' AND l.ts + INTERVAL '3 seconds'")


def plan_groups(seed, n):
    """n left and n right rows in groups of 1-4 INSERTs of 50-250 rows into
    either side, each group one batch: [[(side, rows)]]."""
    rng = random.Random(seed)
    left = make_events(rng, n, 0)
    right = with_edges(rng, left, make_events(rng, n, 10000))
    pos, src, groups = [0, 0], (left, right), []
    while pos[0] < len(left) or pos[1] < len(right):
        group = []
        for _ in range(rng.randint(1, 4)):
            open_sides = [s for s in (0, 1) if pos[s] < len(src[s])]
            if not open_sides:
                break
            side = rng.choice(open_sides)
            k = rng.randint(50, 250)
            group.append((side, src[side][pos[side]:pos[side] + k]))
            pos[side] += k
        groups.append(group)
    return groups


def set_up(c, opts):
    for s in "lr":
        c.execute(f"CREATE STREAM {s} (id BIGINT, k INT, ts TIMESTAMP, "
                  "WATERMARK FOR ts AS ts - INTERVAL '2 seconds')")
    c.execute(QUERY.format(opts=opts))
    return c.execute("SELECT oid FROM sys.queries WHERE name = 'j'").fetchone()[0]


def committed(c):
    return c.execute("SELECT sum(committed_offset) FROM sys.source_lag "
                     "WHERE query = 'j'").fetchone()[0]


def run_group(c, oracle, group, fed):
    """One batch of the group's rows (the query paused while they go in)."""
    if len(group) > 1:
        c.execute("ALTER CONTINUOUS QUERY j PAUSE")
    for side, chunk in group:
        insert(c, side, chunk)
        fed += len(chunk)
    if len(group) > 1:
        c.execute("ALTER CONTINUOUS QUERY j RESUME")
    assert wait_for(lambda: committed(c), fed) == fed
    oracle.both(group)
    return fed


def finish(c, oracle, fed):
    """Both watermarks past everything: the output is the oracle's, and the
    two flush rows are all that is kept.  The sys.state row."""
    for side, chunk in ((0, [(99_000, -1, FLUSH)]), (1, [(99_001, -2, FLUSH)])):
        fed = run_group(c, oracle, [(side, chunk)], fed)
    want = oracle.output({99_000})
    assert sum(r[1] is None for r in want) > 10
    got = wait_for(lambda: rows(c, "SELECT * FROM j"), want)
    assert got == want
    st = join_state(c)
    assert st[1] == oracle.state_rows() == 2
    return st


SETTINGS = {
    # (WITH options, what the server log must show)
    "default": ("", "in_memory=yes"),
    "slices": (", join_slice_rows = 37", "in_memory=yes"),
    "rocksdb_only": (", join_memory = 0", None),
    "cap": (", join_slice_rows = 37, join_memory = 40000", "over join_memory"),
}


@pytest.mark.parametrize("setting", sorted(SETTINGS))
def test_slices_and_the_copy_in_memory_give_the_batch_oracle_through_a_restart(
        sluiced, setting):
    opts, shows = SETTINGS[setting]
    groups = plan_groups(5, 1500)
    oracle = Oracle()
    srv = sluiced()
    half = len(groups) // 2
    fed = 0
    with connect(srv) as c:
        oid = set_up(c, opts)
        for group in groups[:half]:
            fed = run_group(c, oracle, group, fed)
            assert join_state(c)[1] == oracle.state_rows(), (fed, join_state(c))
        before = join_state(c)
    # A restart with kept rows (and marks) in open buckets: the copy in
    # memory is loaded again from RocksDB by the next batch.
    srv.stop()
    srv.start()
    with connect(srv) as c:
        assert join_state(c)[:3] == before[:3]
        for group in groups[half:]:
            fed = run_group(c, oracle, group, fed)
            assert join_state(c)[1] == oracle.state_rows(), (fed, join_state(c))
        # Batches with rows of both sides ran, some larger than a slice.
        sizes = [r[0] for r in c.execute(
            "SELECT input_rows FROM sys.query_progress WHERE query = 'j'").fetchall()]
        assert max(sizes) > 250, sizes
        st = finish(c, oracle, fed)
    srv.stop()
    assert operator_keys(srv.data_dir, b"J", oid) == st[1:3]
    log = srv.log_text()
    if shows is None:
        assert "join kept rows loaded" not in log
    else:
        assert shows in log, log[-3000:]
    if setting in ("default", "slices"):
        # After the restart the copy was loaded from RocksDB, not empty.
        loads = [line for line in log.splitlines() if "join kept rows loaded" in line]
        assert any("side=0" in x and "bytes=0 " not in x and "in_memory=yes" in x
                   for x in loads), loads
    if setting == "cap":
        # Over the cap, then back under half of it: loaded into memory again.
        after = log[log.index("over join_memory"):]
        assert "in_memory=yes" in after, after[-3000:]


def test_a_kill_before_the_state_commit_of_a_two_sided_sliced_batch(sluiced):
    """SIGKILL at batch_before_state_commit in a batch with rows of both
    sides in several slices: the replay, with the copy in memory loaded
    again, adds the batch's rows once (the output and the kept rows are the
    oracle's)."""
    groups = plan_groups(13, 700)
    oracle = Oracle()
    srv = sluiced()
    half = len(groups) // 2
    fed = 0
    with connect(srv) as c:
        oid = set_up(c, ", join_slice_rows = 53")
        for group in groups[:half]:
            fed = run_group(c, oracle, group, fed)
        c.execute("ALTER CONTINUOUS QUERY j PAUSE")
        group = [(0, []), (1, [])]
        for side, chunk in groups[half] + groups[half + 1]:
            group[side][1].extend(chunk)
        group = [g for g in group if g[1]]
        for side, chunk in group:
            insert(c, side, chunk)
    srv.stop()
    srv.env["SLUICE_FAULT"] = "batch_before_state_commit:1"
    srv.start()
    try:
        with connect(srv) as c:
            c.execute("ALTER CONTINUOUS QUERY j RESUME")
    except psycopg.OperationalError:
        pass    # the batch can reach the fault point before the reply
    assert srv.wait_exit(WAIT) == -signal.SIGKILL
    assert "fault point batch_before_state_commit reached" in srv.log_text()
    del srv.env["SLUICE_FAULT"]
    srv.start()
    fed += sum(len(chunk) for _, chunk in group)
    oracle.both(group)
    with connect(srv) as c:
        assert wait_for(lambda: committed(c), fed) == fed
        assert join_state(c)[1] == oracle.state_rows()
        for g in groups[half + 2:]:
            fed = run_group(c, oracle, g, fed)
            assert join_state(c)[1] == oracle.state_rows()
        st = finish(c, oracle, fed)
    srv.stop()
    assert operator_keys(srv.data_dir, b"J", oid) == st[1:3]
