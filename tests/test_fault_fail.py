"""Failures that the server survives: fault points armed to FAIL
(SLUICE_FAULT=name[:N]:fail or :failall, docs/development.md) instead of
killing, and what a continuous query does about them (docs/engine.md,
"When a batch fails").

Covers: the state commit of an interval join's batch (rows of both sides,
in slices, the kept rows in memory) failing once: the batch is retried, the
copy in memory is dropped and loaded again from RocksDB, and the output and
the kept rows are the oracle's, every row once; the state commit of an
append-only query failing every time: the query retries with status
'retrying' and the error, fails after 5 tries with the error in
sys.queries.last_error and nothing of the batch visible, and a restart
replays the batch once; a result file's fdatasync failing once (the retried
batch writes its region again: the segment file is byte for byte the one a
server without the failure writes) and every time (the failed attempts'
bytes are in the segment file, readers never see them, and the replay after
a restart cuts them away); the synced write of a batch that appends to its
INTO stream failing once (its staged offsets are taken back: the stream
stays dense, a query over it reads every row once) and, with
--commit-mode=group, failing for good (appends refused until a restart,
the query failed after 5 tries, the restart replays it); a SUBSCRIBE client
of an aggregation whose batch fails once gets the retry's changes once.
"""

import psycopg

from test_continuous_queries import connect, wait_for
from test_join_chunks import Oracle
from test_join_memory import committed, finish, plan_groups, run_group, set_up
from test_result_files import segments, wide
from test_result_log import load_paused, progress, resume_until, table
from test_subscribe import start_stream, take, wait_subscribed
from test_sys_columns import operator_keys

# 500 ms, 1 s, 2 s and 4 s between the 5 tries of a batch that fails on an
# I/O error (cq.c, STORAGE_TRIES): the whole run well under this.
FAIL_WAIT = 120


def status(c, q):
    return tuple(c.execute("SELECT status, last_error FROM sys.queries WHERE name = %s",
                           (q,)).fetchone())


def test_a_failed_state_commit_of_a_join_batch_reloads_the_copy_in_memory(sluiced):
    """The state commit of the join's K-th batch (rows of both sides, read in
    slices, the kept rows in memory) fails once: the batch is run again, its
    rows are added once, and the copy in memory -- dropped when the write
    failed -- is loaded again from RocksDB with the kept rows of the batches
    before (checks builds compare it with RocksDB after every batch)."""
    groups = plan_groups(21, 1500)
    half = len(groups) // 2
    # groups[half] and groups[half + 1] go in as one batch, the (half + 1)-th
    merged = [(0, []), (1, [])]
    for side, chunk in groups[half] + groups[half + 1]:
        merged[side][1].extend(chunk)
    assert merged[0][1] and merged[1][1]
    groups = groups[:half] + [merged] + groups[half + 2:]
    oracle = Oracle()
    srv = sluiced(env={"SLUICE_FAULT": f"batch_state_commit:{half + 1}:fail"})
    fed = 0
    with connect(srv) as c:
        oid = set_up(c, ", join_slice_rows = 53")
        for i, group in enumerate(groups):
            fed = run_group(c, oracle, group, fed)
            if i == half:
                # the batch that failed, once, and ran again
                log = srv.log_text()
                assert "fault point batch_state_commit reached, failing" in log
                assert "micro-batch succeeded after retries" in log
            assert committed(c) == fed
        st = finish(c, oracle, fed)
        assert status(c, "j") == ("running", None)
    srv.stop()
    assert operator_keys(srv.data_dir, b"J", oid) == st[1:3]
    log = srv.log_text()
    assert log.count("reached, failing") == 1
    after = log[log.index("fault point batch_state_commit reached, failing"):]
    # loaded again: both sides, with what the batches before kept
    loads = [x for x in after.splitlines() if "join kept rows loaded" in x]
    assert len(loads) == 2, loads
    assert all("in_memory=yes" in x for x in loads), loads
    assert any("side=0" in x and "bytes=0 " not in x for x in loads), loads
    # and only then: once at the first batch, once after the failure
    assert log.count("join kept rows loaded") == 4


def test_a_state_commit_that_keeps_failing_fails_the_query_after_5_tries(sluiced):
    """Every state commit from the second batch on fails (58030): the query
    is 'retrying' with the error while the batch is tried again, then
    'failed' with it after the 5th try; nothing of the batch is visible and
    the other queries go on.  A restart without the fault replays the batch:
    every row once."""
    srv = sluiced(env={"SLUICE_FAULT": "batch_state_commit:2:failall"})
    with connect(srv) as c:
        c.execute("CREATE STREAM ev (i bigint, t text)")
        c.execute("CREATE CONTINUOUS QUERY r WITH (trigger = '0') AS SELECT i, t FROM ev")
        c.execute("INSERT INTO ev SELECT g, 'a' FROM generate_series(1, 10) g")
        assert wait_for(lambda: c.execute("SELECT count(*) FROM r").fetchone()[0], 10) == 10
        c.execute("INSERT INTO ev SELECT g, 'b' FROM generate_series(11, 30) g")
        got = wait_for(lambda: status(c, "r")[0], "retrying", timeout=FAIL_WAIT)
        assert got == "retrying"
        st = status(c, "r")
        assert "state store: write" in st[1] and "batch_state_commit" in st[1], st
        assert table(c, "SELECT count(*), sum(i) FROM r") == [(10, 55)]
        got = wait_for(lambda: status(c, "r")[0], "failed", timeout=FAIL_WAIT)
        assert got == "failed"
        st = status(c, "r")
        assert "state store: write" in st[1] and "failed 5 times" in st[1], st
        assert table(c, "SELECT count(*), sum(i) FROM r") == [(10, 55)]
        # a query failed alone: the server answers and another query runs
        c.execute("CREATE TABLE t (x int)")
        c.execute("INSERT INTO t VALUES (1)")
        assert c.execute("SELECT x FROM t").fetchall() == [(1,)]
    log = srv.log_text()
    assert log.count("fault point batch_state_commit reached, failing") == 5
    srv.stop()
    del srv.env["SLUICE_FAULT"]
    srv.start()
    with connect(srv) as c:
        want = [(i, "a" if i <= 10 else "b") for i in range(1, 31)]
        assert wait_for(lambda: table(c, "SELECT i, t FROM r ORDER BY i"), want) == want
        assert status(c, "r") == ("running", None)


def without_failure(sluiced):
    """The rows of tests/test_result_files.py's three batches of wide rows,
    and the segment file a server that never fails writes for them."""
    want = [(i, None if wide(i) is None else wide(i) + "!") for i in range(8000) if i % 7 != 0]
    ref = sluiced()
    load_paused(ref, wide)
    resume_until(ref, want)
    (seg,) = segments(ref)
    ref.stop()
    return want, seg


def test_a_failed_result_file_sync_is_retried_and_writes_the_region_again(sluiced):
    """The fdatasync of the second batch's result file fails once: the batch
    is run again and writes its region again at the same place, so the
    segment file is byte for byte the one written without the failure, and
    the result has every row once."""
    want, ref_seg = without_failure(sluiced)

    server = sluiced(env={"SLUICE_FAULT": "result_file_sync:2:fail"})
    load_paused(server, wide)
    resume_until(server, want)
    with connect(server) as c:
        assert progress(c, "r") == [3000, 3000, 2000]
    log = server.log_text()
    assert "fault point result_file_sync reached, failing" in log
    assert "fdatasync" in log and "micro-batch succeeded after retries" in log
    (seg,) = segments(server)
    assert seg.name == ref_seg.name
    assert seg.read_bytes() == ref_seg.read_bytes()


def test_a_result_file_sync_that_keeps_failing_leaves_bytes_no_reader_sees(sluiced):
    """Every fdatasync from the second batch's on fails: each try writes the
    batch's region past the committed end again, the query fails after 5
    tries, and readers see only the first batch while the file holds the
    failed tries' bytes.  The replay after a restart cuts them away and
    writes the region once: the file is the one a server without the
    failure writes."""
    want, ref_seg = without_failure(sluiced)

    server = sluiced(env={"SLUICE_FAULT": "result_file_sync:2:failall"})
    load_paused(server, wide)
    first = [r for r in want if r[0] < 3000]
    with connect(server) as c:
        c.execute("ALTER CONTINUOUS QUERY r RESUME")
        got = wait_for(lambda: status(c, "r")[0], "failed", timeout=FAIL_WAIT)
        assert got == "failed"
        st = status(c, "r")
        assert "fdatasync" in st[1] and "failed 5 times" in st[1], st
        assert table(c, "SELECT * FROM r") == first
        assert table(c, "SELECT * FROM r", binary=True) == first
        (seg,) = segments(server)
        data = seg.read_bytes()
        # the failed tries' region is in the file, past the committed end
        assert b"r3001:" in data and len(data) > len(ref_seg.read_bytes()) // 3
        assert table(c, "SELECT count(*) FROM r WHERE i >= 3000") == [(0,)]
    server.stop()
    del server.env["SLUICE_FAULT"]
    server.start()
    with connect(server) as c:
        assert wait_for(lambda: c.execute("SELECT count(*) FROM r").fetchone()[0],
                        len(want), timeout=FAIL_WAIT) == len(want)
        assert table(c, "SELECT * FROM r") == want
        assert status(c, "r") == ("running", None)
    (seg,) = segments(server)
    assert seg.read_bytes() == ref_seg.read_bytes()


def silver(c):
    """silver's rows, and its row_count and next_offset in sys.streams."""
    got = table(c, "SELECT user_id, url FROM silver ORDER BY user_id")
    n = c.execute("SELECT row_count, next_offset FROM sys.streams "
                  "WHERE name = 'silver'").fetchone()
    return got, tuple(n)


def chain(c):
    """bronze -> clean INTO silver, and bronze's first rows through it (the
    INSERT is the first stream append, clean's batch the second)."""
    c.execute("CREATE STREAM bronze (user_id BIGINT, url TEXT)")
    c.execute("CREATE STREAM silver (user_id BIGINT, url TEXT)")
    c.execute("CREATE CONTINUOUS QUERY clean INTO silver WITH (trigger = '0') AS "
              "SELECT user_id, lower(url) FROM bronze")
    c.execute("INSERT INTO bronze SELECT g, '/A' || g FROM generate_series(1, 5) g")
    want = [(i, f"/a{i}") for i in range(1, 6)]
    assert wait_for(lambda: silver(c), (want, (5, 5))) == (want, (5, 5))


ALL = [(i, f"/a{i}") for i in range(1, 13)]


def test_a_failed_append_write_gives_the_into_stream_its_offsets_back(sluiced):
    """The synced write of a batch that appends to its INTO stream fails once
    (the 4th stream append: INSERT, batch, INSERT, batch): the stream's next
    offset, staged for the write, is taken back, so the retried batch appends
    at the same offsets -- no hole, no row twice -- and a query over the
    stream reads every row once."""
    srv = sluiced(env={"SLUICE_FAULT": "stream_append_write:4:fail"})
    with connect(srv) as c:
        chain(c)
        c.execute("INSERT INTO bronze SELECT g, '/A' || g FROM generate_series(6, 12) g")
        assert wait_for(lambda: silver(c), (ALL, (12, 12))) == (ALL, (12, 12))
        assert status(c, "clean") == ("running", None)
        c.execute("CREATE CONTINUOUS QUERY gold WITH (trigger = '0') AS "
                  "SELECT user_id, url FROM silver")
        assert wait_for(lambda: table(c, "SELECT * FROM gold ORDER BY user_id"), ALL) == ALL
    log = srv.log_text()
    assert "fault point stream_append_write reached, failing (4)" in log
    assert "micro-batch succeeded after retries" in log


def test_a_failed_group_write_refuses_appends_until_a_restart(sluiced):
    """With --commit-mode=group a failed synced write of a group refuses every
    later stream append (58030) until the server restarts: the query's
    retries fail the same way and it fails after 5 tries, an INSERT gets the
    error, nothing of the batch is visible.  The restart replays the batch:
    every row once, at dense offsets."""
    srv = sluiced("--commit-mode=group", env={"SLUICE_FAULT": "stream_append_write:4:fail"})
    with connect(srv) as c:
        chain(c)
        c.execute("INSERT INTO bronze SELECT g, '/A' || g FROM generate_series(6, 12) g")
        assert wait_for(lambda: status(c, "clean")[0], "failed", timeout=FAIL_WAIT) == "failed"
        st = status(c, "clean")
        assert "an earlier write of the state store failed" in st[1], st
        assert "failed 5 times" in st[1], st
        try:
            c.execute("INSERT INTO bronze VALUES (99, '/late')")
            raise AssertionError("an append after a failed group write was accepted")
        except psycopg.Error as e:
            assert e.sqlstate == "58030", e
            assert "until the server restarts" in str(e)
        assert silver(c)[0] == ALL[:5]
    assert srv.log_text().count("fault point stream_append_write reached, failing") == 1
    srv.stop()
    del srv.env["SLUICE_FAULT"]
    srv.start()
    with connect(srv) as c:
        assert wait_for(lambda: silver(c), (ALL, (12, 12))) == (ALL, (12, 12))
        assert status(c, "clean") == ("running", None)


def test_a_subscriber_gets_a_retried_batch_changes_once(sluiced):
    """SUBSCRIBE to an aggregation whose second batch's state commit fails
    once: the failed try's changes never reach the subscriber, the retry's
    do, once, under the batch's one id."""
    srv = sluiced(env={"SLUICE_FAULT": "batch_state_commit:2:fail"})
    with connect(srv) as c:
        c.execute("CREATE STREAM clicks (user_id BIGINT, url TEXT)")
        c.execute("CREATE CONTINUOUS QUERY per_user WITH (trigger = '0') AS "
                  "SELECT user_id, count(*) AS n FROM clicks GROUP BY user_id")
        sub, rows, ended, t = start_stream(srv.dsn, "SUBSCRIBE per_user")
        try:
            wait_subscribed(srv)
            c.execute("INSERT INTO clicks VALUES (1, 'a')")
            first = take(rows, 1)
            assert [r[1:] for r in first] == [("insert", 1, 1)]
            c.execute("INSERT INTO clicks VALUES (1, 'b'), (2, 'c')")
            second = sorted(take(rows, 2), key=lambda r: r[2])
            assert [r[1:] for r in second] == [("update", 1, 2), ("insert", 2, 1)]
            assert second[0][0] == second[1][0] > first[0][0]
            assert "micro-batch succeeded after retries" in srv.log_text()
            c.execute("INSERT INTO clicks VALUES (3, 'd')")
            third = take(rows, 1)
            assert [r[1:] for r in third] == [("insert", 3, 1)]
            assert take(rows, 1, timeout=1) == []
        finally:
            sub.cancel()
            t.join(30)
            sub.close()
        assert table(c, "SELECT * FROM per_user ORDER BY user_id") == [(1, 2), (2, 1), (3, 1)]
