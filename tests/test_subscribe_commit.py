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
"""

import pytest

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
