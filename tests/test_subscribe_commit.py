"""SUBSCRIBE sees a batch as soon as its RocksDB write is done: before the
commit-log entry (docs/architecture.md, "Recovery"), which may come later
and which recovery rewrites from the state when a crash lost it.

The commit-log write is held with SLUICE_FAULT=commit_log_before_write:hold
(the loop thread waits there while the hold file exists).  The subscriber
must already have the batch's rows -- written to its socket at once, not at
the end of the loop turn -- while the catalog shows the batch's offset-log
entry and no commit entry.  Then the server is killed right there, and
after a restart the batch is in the result table exactly once, its commit
entry was written back, and no batch was replayed.

trigger '1 second': the commit entry is written right after the delivery,
in the same loop callback (so the rows must have been flushed by then);
trigger '0': it goes with the next batch's offset-log entry, or alone when
the next plan finds nothing new.

A query whose output is all in the RocksDB write (result table, INTO
stream) writes its offset-log entry while the batch runs, and the write
keeps a copy of it.  With the loop held before that entry
(offsets_before_write:hold) and the worker past its RocksDB write
(SLUICE_FAULT_TRACE), a kill leaves the state one batch ahead of the
offset log: the restart writes the entry back from the state, runs
nothing again, and the output holds each row once.
"""

import pytest

from pgwire_raw import Raw, query
from test_checkpoints import logs
from test_continuous_queries import connect, wait_for
from test_subscribe import start_stream, take, wait_subscribed


def catalog_logs(server, name):
    """(offset-log batch ids, commit-log batch ids) of a query."""
    return logs(server, name)[1:]


@pytest.mark.parametrize("trigger", ["0", "1 second"])
def test_subscriber_sees_the_batch_before_its_commit_log_entry(sluiced, tmp_path, trigger):
    hold = tmp_path / "hold"
    hold.write_text("")
    server = sluiced(env={"SLUICE_FAULT": "commit_log_before_write:hold",
                          "SLUICE_FAULT_HOLD": str(hold)})
    with connect(server) as c:
        c.execute("CREATE STREAM ev (k BIGINT)")
        c.execute(f"CREATE CONTINUOUS QUERY q WITH (trigger = '{trigger}') AS "
                  "SELECT k, k * 2 AS k2 FROM ev")
        sub, rows, ended, t = start_stream(server.dsn, "SUBSCRIBE q")
        wait_subscribed(server)
        c.execute("INSERT INTO ev VALUES " + ", ".join(f"({i})" for i in range(1, 101)))
    assert wait_for(lambda: "fault point commit_log_before_write reached, holding"
                    in server.log_text(), True), "the commit-log write was never reached"
    # The loop is held before the commit entry: the rows are already here.
    got = take(rows, 100)
    assert sorted(r[2] for r in got) == list(range(1, 101))
    assert {r[0] for r in got} == {0} and {r[1] for r in got} == {"insert"}
    assert all(r[3] == 2 * r[2] for r in got)
    assert catalog_logs(server, "q") == ([0], [])
    assert ended == []

    # A crash right there: the batch is committed (RocksDB), its commit entry is not.
    assert server.kill() == -9
    t.join(30)
    sub.close()
    hold.unlink()
    server.env = {}
    server.start()
    with connect(server) as c:
        want = [(k, 2 * k) for k in range(1, 101)]
        assert wait_for(lambda: sorted(c.execute("SELECT k, k2 FROM q").fetchall()),
                        want) == want
        # Recovery wrote the missing entry from the state's batch id; no replay.
        assert catalog_logs(server, "q")[1] == [0]
        assert "replaying batch" not in server.log_text()
        c.execute("INSERT INTO ev VALUES " + ", ".join(f"({i})" for i in range(101, 111)))
        want = [(k, 2 * k) for k in range(1, 111)]
        assert wait_for(lambda: sorted(c.execute("SELECT k, k2 FROM q").fetchall()),
                        want) == want
        assert wait_for(lambda: catalog_logs(server, "q")[1][-1], 1) == 1


@pytest.mark.parametrize("first", [True, False], ids=["first batch", "later batch"])
def test_state_ahead_of_the_offset_log_is_written_back(sluiced, tmp_path, first):
    hold = tmp_path / "hold"
    hold.write_text("")
    server = sluiced()
    with connect(server) as c:
        c.execute("CREATE STREAM ev (k BIGINT)")
        c.execute("CREATE STREAM out_s (k BIGINT, n BIGINT)")
        c.execute("CREATE CONTINUOUS QUERY q WITH (trigger = '0') AS SELECT k FROM ev")
        c.execute("CREATE CONTINUOUS QUERY qs INTO out_s WITH (trigger = '0') AS "
                  "SELECT k, k * 10 AS n FROM ev")
        c.execute("ALTER CONTINUOUS QUERY qs PAUSE")     # one query reaches the hold
        before = []
        if not first:
            before = [(-1,)]
            c.execute("INSERT INTO ev VALUES (-1)")
            assert wait_for(lambda: c.execute("SELECT k FROM q").fetchall(), before) == before
            assert wait_for(lambda: logs(server, "q")[1:], ([0], [0])) == ([0], [0])
    server.stop()
    server.env = {"SLUICE_FAULT": "offsets_before_write:hold",
                  "SLUICE_FAULT_HOLD": str(hold), "SLUICE_FAULT_TRACE": "1"}
    server.start()
    # Raw: the loop may hold before the INSERT's answer goes out.
    raw = Raw(server.port)
    raw.startup()
    raw.send(query("INSERT INTO ev VALUES " + ", ".join(f"({i})" for i in range(1, 51))))
    assert wait_for(lambda: "fault point offsets_before_write reached, holding"
                    in server.log_text(), True), "the offset-log write was never reached"
    # The loop waits before the entry; the worker goes on to the state write.
    assert wait_for(lambda: "fault point batch_after_state_commit passed"
                    in server.log_text(), True), "the batch did not write its state"
    n = 1 if first else 2
    assert logs(server, "q")[1] == list(range(n - 1))
    assert server.kill() == -9
    raw.close()
    hold.unlink()
    server.env = {}
    server.start()
    with connect(server) as c:
        want = sorted(before + [(k,) for k in range(1, 51)])
        assert wait_for(lambda: sorted(c.execute("SELECT k FROM q").fetchall()), want) == want
        assert "offset log entry written back from the state" in server.log_text()
        assert "replaying batch" not in server.log_text()
        assert logs(server, "q")[1:] == (list(range(n)), list(range(n)))
        # The INTO-stream query was paused: it reads everything once now.
        c.execute("ALTER CONTINUOUS QUERY qs RESUME")
        c.execute("INSERT INTO ev VALUES (51)")
        want = sorted(want + [(51,)])
        assert wait_for(lambda: sorted(c.execute("SELECT k FROM q").fetchall()), want) == want
        want_s = sorted((k, k * 10) for (k,) in want)
        assert wait_for(lambda: sorted(c.execute("SELECT k, n FROM out_s").fetchall()),
                        want_s) == want_s
        assert wait_for(lambda: logs(server, "q")[1:], (list(range(n + 1)),
                                                       list(range(n + 1))))[0][-1] == n
