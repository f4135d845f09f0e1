"""A window's kept rows probed by key hash and evicted with one range
deletion (docs/engine.md, "The probe by key hash" and "Eviction by range").

Nexmark q7's shape: one side gets rows in many small batches (a chunk
each, or two), the other side a few rows that match some of them by key,
then one row that moves its watermark past every kept row of the first:
one batch then evicts well over RANGE_MIN (64) chunk keys, with the marks
of the rows that matched, at once.  Checked against the batch oracle of
tests/test_join_chunks.py (the output, NULL-padded rows exactly once, the
rows kept batch by batch) and against the keys read back from RocksDB,
through restarts before and after the eviction (the range deletion is
replayed from the WAL), with every write alone and with --commit-mode=group
(the batch's write is appended to a group's: its range deletion with it),
and through a SIGKILL before the evicting batch's state commit.
"""

import random

import pytest

from test_continuous_queries import connect
from test_join_chunks import (Oracle, chunk_keys, insert, insert_killed, join_state, set_up,
                              wait_read)
from test_join_memory import finish
from test_sys_columns import operator_keys


def small_batches(rng, n, first_id, t0, keys):
    """n INSERTs of 3 rows each, 80 ms apart (a bucket is 62.5 ms): a chunk
    or two each."""
    out = []
    for b in range(n):
        t = t0 + b * 80_000
        out.append([(first_id + 3 * b + i, rng.randrange(keys), t + i * 20_000)
                    for i in range(3)])
    return out


def partners(rng, left, first_id, n):
    """n right rows, each in the bound of a left row of the first 25 INSERTs
    with its key (matches: its left row gets a mark), in time order: the
    right watermark (2 s behind, less 3 s of bound) stays before every
    left row."""
    picks = sorted(rng.sample([r for chunk in left[:25] for r in chunk], n),
                   key=lambda r: r[2])
    return [(first_id + i, k, t + rng.choice((-1_000_000, 0, 500_000, 3_000_000)))
            for i, (_, k, t) in enumerate(picks)]


def window(srv, oracle, rng, n, keys, matched):
    """The query, n small INSERTs into the left side, then `matched` right
    rows that match some of them: (the query's oid, rows fed)."""
    left = small_batches(rng, n, 0, 10_000_000, keys)
    with connect(srv) as c:
        oid = set_up(c)
        fed = 0
        for chunk in left:
            fed = feed(c, oracle, fed, 0, chunk)
        # Right rows that match kept left rows (marks on the outer side);
        # the right watermark stays before the left rows' cut.
        fed = feed(c, oracle, fed, 1, partners(rng, left, 10_000, matched))
    return oid, fed


def feed(c, oracle, fed, side, chunk):
    insert(c, side, chunk)
    fed += len(chunk)
    wait_read(c, fed)
    oracle.batch(side, chunk)
    assert join_state(c)[1] == oracle.state_rows(), (fed, join_state(c))
    return fed


@pytest.mark.parametrize("mode", ["sync", "group"])
def test_a_window_of_small_chunks_evicted_at_once_through_restarts(sluiced, mode):
    rng = random.Random(23)
    oracle = Oracle()
    srv = sluiced(*(["--commit-mode=group"] if mode == "group" else []))
    oid, fed = window(srv, oracle, rng, 150, 40, 30)
    with connect(srv) as c:
        kept = join_state(c)
    srv.stop()
    assert operator_keys(srv.data_dir, b"J", oid) == kept[1:3]
    chunks, marks = chunk_keys(srv.data_dir, oid)
    assert chunks >= 150 and marks > 0, (chunks, marks)

    srv.start()
    with connect(srv) as c:
        # One right row far ahead: every left chunk and mark goes in one
        # batch (a range deletion), the unmatched left rows NULL-padded.
        fed = feed(c, oracle, fed, 1, [(20_000, 7, 40_000_000)])
        evicted = c.execute("SELECT evicted_rows FROM sys.query_progress WHERE query = 'j' "
                            "ORDER BY batch_id DESC LIMIT 1").fetchone()[0]
        assert evicted >= 450, evicted
        after = join_state(c)
    srv.stop()
    assert operator_keys(srv.data_dir, b"J", oid) == after[1:3]
    assert chunk_keys(srv.data_dir, oid)[0] < 5

    srv.start()
    with connect(srv) as c:
        # Rows after the eviction: kept and matched as before.
        more = small_batches(rng, 30, 30_000, 41_000_000, 40)
        for chunk in more:
            fed = feed(c, oracle, fed, 0, chunk)
        fed = feed(c, oracle, fed, 1, partners(rng, more, 40_000, 10))
        st = finish(c, oracle, fed)
        want = oracle.output({99_000})
        assert sum(r[1] is not None for r in want) >= 40
        assert sum(r[1] is None for r in want) > 100
    srv.stop()
    assert operator_keys(srv.data_dir, b"J", oid) == st[1:3]
    assert chunk_keys(srv.data_dir, oid) == (2, 0)


def test_a_kill_before_the_state_commit_of_the_evicting_batch(sluiced):
    """SIGKILL at batch_before_state_commit in the batch whose range
    deletion evicts the window: its replay evicts it once, the unmatched
    rows are emitted once."""
    rng = random.Random(29)
    oracle = Oracle()
    srv = sluiced()
    oid, fed = window(srv, oracle, rng, 100, 30, 20)
    srv.stop()
    chunk = [(20_000, 3, 40_000_000)]
    insert_killed(srv, 1, chunk)
    fed += 1
    oracle.batch(1, chunk)
    with connect(srv) as c:
        wait_read(c, fed)
        assert join_state(c)[1] == oracle.state_rows()
        st = finish(c, oracle, fed)
        assert sum(r[1] is None for r in oracle.output({99_000})) > 100
    srv.stop()
    assert operator_keys(srv.data_dir, b"J", oid) == st[1:3]
    assert chunk_keys(srv.data_dir, oid) == (2, 0)
