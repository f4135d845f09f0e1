"""A full disk recovers without a restart (docs/operations.md, "Disk full").

The data directory is on a 160 MiB tmpfs made for the test (mount needs root;
the test is skipped otherwise) and unmounted at the end even when it fails.
Covers: a file fills the disk; INSERTs into a table and into a stream fail
with 53100 disk_full (the server stays up, reads go on); the file is removed;
INSERTs then succeed without a restart, as the role u, and every
acknowledged row is there once -- also after a restart.  A server killed
while the disk is full (40 MiB left, under the 64 MiB reserve) starts again
with every acknowledged row (its WAL replays).  A continuous query whose
batch is refused shows `retrying` with the error and catches up once space
is freed.  In group commit mode, appends refused for a full disk resume
too, also when the store refuses a group's write after its appends took
their offsets (the disk filled up in between: that group and the one
queued behind it fail with 53100 and give their offsets back, instead of
breaking appends with 58030 until a restart).  Before the fix, RocksDB met the full disk itself and the server
aborted (RocksDB 7.8's assertion on its failed WAL writer) or kept failing
with 58030 until a restart.
"""

import os
import subprocess
import threading
import time

import psycopg
import pytest

PASSWORD = "pw-u-1"


@pytest.fixture
def tmpfs(tmp_path):
    if os.geteuid() != 0:
        pytest.fail("mounting a tmpfs needs root: run the disk-full tests as root "
                    "(./tools/test and CI do); they are never skipped")
    mnt = tmp_path / "mnt"
    mnt.mkdir()
    subprocess.run(["mount", "-t", "tmpfs", "-o", "size=160m", "tmpfs", str(mnt)],
                   check=True)
    try:
        yield mnt
    finally:
        subprocess.run(["umount", "-l", str(mnt)], check=False)


def fill(path):
    """Writes zeros into path until the filesystem is full."""
    fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
    try:
        for size in (1 << 20, 4096, 1):
            try:
                while True:
                    os.write(fd, b"\0" * size)
            except OSError:
                pass
    finally:
        os.close(fd)


def sqlstate(conn, sql):
    try:
        conn.execute(sql)
    except psycopg.Error as e:
        return e.sqlstate
    return None


def test_writes_resume_after_space_is_freed(sluiced, tmpfs):
    server = sluiced("--data-dir", str(tmpfs / "data"))
    with psycopg.connect(server.dsn, autocommit=True) as c:
        c.execute(f"CREATE ROLE u LOGIN PASSWORD '{PASSWORD}'")
        c.execute("CREATE TABLE t (id bigint PRIMARY KEY, v text)")
        c.execute("CREATE STREAM s (a bigint, b text)")
        c.execute("GRANT SELECT, INSERT ON t, s TO u")
    udsn = server.dsn.replace("user=sluice", "user=u")
    with psycopg.connect(udsn, password=PASSWORD, autocommit=True) as c:
        c.execute("INSERT INTO t SELECT g, md5(g::text) FROM generate_series(1, 1000) g")
        c.execute("INSERT INTO s SELECT g, md5(g::text) FROM generate_series(1, 1000) g")
        filler = tmpfs / "filler"
        fill(filler)
        # write until a write fails (RocksDB preallocates its WAL, so a
        # server without a reserve takes some first): that failure, and the
        # next writes', must be 53100
        big = "SELECT g, repeat(md5(g::text), 16) FROM generate_series({}, {}) g"
        rows, state = 1000, None
        for i in range(150):
            state = sqlstate(c, "INSERT INTO t " + big.format(10_000 + 2000 * i,
                                                             11_999 + 2000 * i))
            if state is not None:
                break
            rows += 2000
        assert state == "53100"
        assert sqlstate(c, "INSERT INTO t " + big.format(1_000_000, 1_000_099)) == "53100"
        assert sqlstate(c, "INSERT INTO s " + big.format(1, 100)) == "53100"
        # reads go on
        assert c.execute("SELECT count(*) FROM t").fetchone()[0] == rows
        filler.unlink()
        # RocksDB's own recovery polls every 5 s: let it run first, as it
        # would in a real outage, then write
        time.sleep(6)
        c.execute("INSERT INTO t SELECT g, 'after' FROM generate_series(5001, 6000) g")
        c.execute("INSERT INTO s SELECT g, 'after' FROM generate_series(5001, 6000) g")
        assert c.execute("SELECT count(*) FROM t").fetchone()[0] == rows + 1000
        assert c.execute("SELECT count(*) FROM s").fetchone()[0] == 2000
    server.restart()
    with psycopg.connect(server.dsn, autocommit=True) as c:
        assert c.execute("SELECT count(*), count(DISTINCT id) FROM t").fetchone() == (
            rows + 1000, rows + 1000)
        assert c.execute("SELECT count(*) FROM s").fetchone()[0] == 2000


def fill_leaving(path, left):
    """Writes zeros into path until only about left bytes are free."""
    st = os.statvfs(path.parent)
    size = st.f_bavail * st.f_frsize - left
    fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
    try:
        block = b"\0" * (1 << 20)
        while size > 0:
            size -= os.write(fd, block[:min(size, len(block))])
    finally:
        os.close(fd)


def test_restart_after_a_full_disk_replays_its_wal(sluiced, tmpfs):
    """Writes stop while room is left for the WAL's replay: a server killed
    on a full disk starts again with every acknowledged row."""
    server = sluiced("--data-dir", str(tmpfs / "data"))
    with psycopg.connect(server.dsn, autocommit=True) as c:
        c.execute("CREATE TABLE t (id bigint PRIMARY KEY, v text)")
        # about 20 MB in the WAL and the memtable, in no table file yet
        c.execute("INSERT INTO t SELECT g, repeat(md5(g::text), 8) "
                  "FROM generate_series(1, 60000) g")
        fill_leaving(tmpfs / "filler", 40 << 20)
        acked = 60000
        for i in range(200):
            first = 100_000 + 1000 * i
            state = sqlstate(c, f"INSERT INTO t SELECT g, repeat(md5(g::text), 8) "
                                f"FROM generate_series({first}, {first + 999}) g")
            if state is not None:
                break
            acked += 1000
        assert state == "53100"
    server.kill()
    server.start()
    with psycopg.connect(server.dsn, autocommit=True) as c:
        assert c.execute("SELECT count(*) FROM t").fetchone()[0] == acked


def test_query_retries_while_the_disk_is_full(sluiced, tmpfs):
    """A continuous query's batch refused for want of space: sys.queries says
    retrying, with the error; once space is freed the query catches up."""
    server = sluiced("--data-dir", str(tmpfs / "data"))
    with psycopg.connect(server.dsn, autocommit=True) as c:
        c.execute("CREATE STREAM s (a bigint, b text)")
        c.execute("CREATE CONTINUOUS QUERY q WITH (trigger = '2 seconds') AS "
                  "SELECT a % 10 AS k, count(*) AS n FROM s GROUP BY a % 10")
        c.execute("INSERT INTO s SELECT g, 'x' FROM generate_series(1, 100) g")
        wait = time.monotonic() + 60
        while c.execute("SELECT coalesce(sum(n), 0) FROM q").fetchone()[0] != 100:
            assert time.monotonic() < wait, "q never counted the first rows"
            time.sleep(0.2)
        c.execute("INSERT INTO s SELECT g, 'y' FROM generate_series(101, 200) g")
        fill_leaving(tmpfs / "filler", 40 << 20)
        wait = time.monotonic() + 60
        while True:
            status, error = c.execute(
                "SELECT status, last_error FROM sys.queries WHERE name = 'q'").fetchone()
            if status == "retrying":
                break
            assert status == "running" and time.monotonic() < wait, (status, error)
            time.sleep(0.2)
        assert "the disk is full" in error, error
        (tmpfs / "filler").unlink()
        wait = time.monotonic() + 90
        while c.execute("SELECT sum(n) FROM q").fetchone()[0] != 200:
            assert time.monotonic() < wait, "q did not catch up after space was freed"
            time.sleep(0.5)
        assert c.execute("SELECT status FROM sys.queries WHERE name = 'q'").fetchone() == (
            "running",)


def test_group_commit_appends_resume(sluiced, tmpfs):
    """In group commit mode a full disk refuses the append before it takes
    offsets: appends go on once space is freed, without a restart."""
    server = sluiced("--data-dir", str(tmpfs / "data"), "--commit-mode=group")
    with psycopg.connect(server.dsn, autocommit=True) as c:
        c.execute("CREATE STREAM s (a bigint, b text)")
        c.execute("INSERT INTO s SELECT g, 'x' FROM generate_series(1, 100) g")
        fill_leaving(tmpfs / "filler", 40 << 20)
        assert sqlstate(c, "INSERT INTO s VALUES (101, 'y')") == "53100"
        assert sqlstate(c, "INSERT INTO s VALUES (102, 'y')") == "53100"
        (tmpfs / "filler").unlink()
        c.execute("INSERT INTO s SELECT g, 'z' FROM generate_series(201, 300) g")
        assert c.execute("SELECT count(*), min(a), max(a) FROM s").fetchone() == (200, 1, 300)


@pytest.mark.parametrize("mode", ["group", "sync"])
def test_append_refused_at_its_write_does_not_break_appends(sluiced, tmpfs, tmp_path, mode):
    """The disk fills up between an append's own check and its write: the
    store refuses the write before writing anything (53100), so the append
    and the one queued behind it fail with 53100, their offsets are given
    back, and appends go on once space is freed.  Before the fix, in group
    mode, such a refusal broke every later append with 58030 until a
    restart."""
    hold = tmp_path / "hold"
    hold.write_text("")
    server = sluiced("--data-dir", str(tmpfs / "data"), f"--commit-mode={mode}",
                     env={"SLUICE_FAULT": "stream_append_before_write:2:hold",
                          "SLUICE_FAULT_HOLD": str(hold)})
    with psycopg.connect(server.dsn, autocommit=True) as c:
        c.execute(f"CREATE ROLE u LOGIN PASSWORD '{PASSWORD}'")
        c.execute("CREATE STREAM s (a bigint, b text)")
        c.execute("GRANT SELECT, INSERT ON s TO u")
        c.execute("INSERT INTO s SELECT g, 'x' FROM generate_series(1, 100) g")
    udsn = server.dsn.replace("user=sluice", "user=u")
    states = {}

    def insert(name, first):
        with psycopg.connect(udsn, password=PASSWORD, autocommit=True) as conn:
            states[name] = sqlstate(conn, "INSERT INTO s SELECT g, 'y' FROM "
                                          f"generate_series({first}, {first + 9}) g")

    held = threading.Thread(target=insert, args=("held", 101))
    held.start()
    wait = time.monotonic() + 30
    while "fault point stream_append_before_write reached, holding" not in server.log_text():
        assert time.monotonic() < wait, "the append never reached its write"
        time.sleep(0.05)
    # a second append queues behind the held one (group mode: in the next
    # group, its offsets after the held group's)
    queued = threading.Thread(target=insert, args=("queued", 111))
    queued.start()
    time.sleep(1)
    fill_leaving(tmpfs / "filler", 40 << 20)
    hold.unlink()
    held.join(30)
    queued.join(30)
    assert states == {"held": "53100", "queued": "53100"}
    (tmpfs / "filler").unlink()
    with psycopg.connect(udsn, password=PASSWORD, autocommit=True) as c:
        c.execute("INSERT INTO s SELECT g, 'z' FROM generate_series(201, 300) g")
        c.execute("INSERT INTO s SELECT g, 'z' FROM generate_series(301, 310) g")
        assert c.execute("SELECT count(*), count(DISTINCT a), min(a), max(a) FROM s"
                         ).fetchone() == (210, 210, 1, 310)
    server.restart()
    with psycopg.connect(server.dsn, autocommit=True) as c:
        assert c.execute("SELECT count(*), count(DISTINCT a), min(a), max(a) FROM s"
                         ).fetchone() == (210, 210, 1, 310)
