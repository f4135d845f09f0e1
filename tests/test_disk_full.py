"""A full disk recovers without a restart (docs/operations.md, "Disk full").

The data directory is on a 160 MiB tmpfs made for the test (400 MiB for the
open-scan test; mount needs root: the test fails otherwise) and unmounted at
the end even when it fails.
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
aborted (RocksDB 7.8's assertion on a file writer that failed) or kept failing
with 58030 until a restart.  A disk that stays full past a flush of
RocksDB's info log, or on which RocksDB itself meets the full disk (a
DELETE), leaves the server up, stopping cleanly (before the fix the log's
next line aborted it).  An offset-log or commit-log write (SQLite)
refused for a full disk makes the query `retrying`, not `failed`, and it
goes on once space is freed, the logs without a gap or a batch twice; a
`once` query finishes only when its commit entry is written.
SQLite's I/O error whose errno is ENOSPC (a fault point: a tmpfs gives
SQLITE_FULL) is a full disk too: the query retries.
An open scan (a suspended portal in an idle transaction) does not hold up
the store's reopen after RocksDB met the full disk: the scan ends, its
next fetch fails with 53100.
"""

import json
import os
import sqlite3
import subprocess
import threading
import time

import psycopg
import pytest

from helpers import sqlstate
from pgwire_raw import Raw, bind, data_row, error_fields, execute, parse, query, sync

PASSWORD = "pw-u-1"


def mount_tmpfs(tmp_path, size):
    if os.geteuid() != 0:
        pytest.fail("mounting a tmpfs needs root: run the disk-full tests as root "
                    "(./tools/test and CI do); they are never skipped")
    mnt = tmp_path / "mnt"
    mnt.mkdir()
    subprocess.run(["mount", "-t", "tmpfs", "-o", f"size={size}", "tmpfs", str(mnt)],
                   check=True)
    try:
        yield mnt
    finally:
        subprocess.run(["umount", "-l", str(mnt)], check=False)


@pytest.fixture
def tmpfs(tmp_path):
    yield from mount_tmpfs(tmp_path, "160m")


@pytest.fixture
def tmpfs_400m(tmp_path):
    """Room for a WAL record larger than the WAL's preallocated 72 MB and
    the 64 MiB reserve together
    (test_write_past_the_room_left_is_refused_before_rocksdb)."""
    yield from mount_tmpfs(tmp_path, "400m")


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


def wait_retrying(c, want, timeout=60):
    """Waits until query q is `retrying` with want in its last_error, and
    never `failed` meanwhile; returns the error."""
    wait = time.monotonic() + timeout
    while True:
        status, error = c.execute(
            "SELECT status, last_error FROM sys.queries WHERE name = 'q'").fetchone()
        if status == "retrying" and want in error:
            return error
        assert status in ("running", "retrying") and time.monotonic() < wait, (status, error)
        time.sleep(0.2)


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
        wait_retrying(c, "the disk is full")
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


def wait_log(server, text, timeout=30):
    wait = time.monotonic() + timeout
    while text not in server.log_text():
        assert time.monotonic() < wait, f"never logged: {text}"
        time.sleep(0.05)


def files_sink_rows(out):
    """The rows a files sink wrote, as its manifest lists them (csv)."""
    rows = []
    manifest = out / "_manifest.jsonl"
    for line in manifest.read_text().splitlines() if manifest.exists() else []:
        entry = json.loads(line)
        rows += (out / entry["file"]).read_text().splitlines()[1:]
    return sorted(int(r) for r in rows)


def check_logs(catalog, name):
    """The offset and commit logs of the query: one entry per batch, no
    gap, each batch's range starting where the one before ended, and a
    commit entry for every batch; returns where the last range ends."""
    db = sqlite3.connect(f"file:{catalog}?mode=ro", uri=True)
    try:
        (oid,) = db.execute("SELECT oid FROM relations WHERE name = ?", (name,)).fetchone()
        offsets = db.execute("SELECT batch_id, sources FROM cq_offsets WHERE query_oid = ? "
                             "ORDER BY batch_id", (oid,)).fetchall()
        commits = [r[0] for r in db.execute(
            "SELECT batch_id FROM cq_commits WHERE query_oid = ? ORDER BY batch_id", (oid,))]
    finally:
        db.close()
    assert [b for b, _ in offsets] == list(range(len(offsets))), offsets
    assert commits == [b for b, _ in offsets], (commits, offsets)
    end = 0
    for _, sources in offsets:
        (part,) = json.loads(sources)
        assert part["start"] == end, offsets
        end = part["end"]
    return end


@pytest.mark.parametrize("point,into", [
    # the offset-log entry of a query whose output is in the state store:
    # written while its batch runs
    ("offsets_before_write", "table"),
    # a files sink commits before the state: the entry is written before
    # the batch runs, which waits for it
    ("offsets_before_write", "files"),
    # the commit-log entry of a batch that ran
    ("commit_log_before_write", "table"),
])
def test_log_write_refused_for_a_full_disk_retries(sluiced, tmpfs, tmp_path, point, into):
    """The catalog's offset or commit log cannot be written for a full disk
    (the disk fills to its last byte while the write is held at its fault
    point): the query shows `retrying` with the error, writes the entry once
    space is freed and goes on -- every row once, the logs without a gap or
    a batch twice, also after a restart.  Before the fix the query failed."""
    hold = tmp_path / "hold"
    hold.write_text("")
    server = sluiced("--data-dir", str(tmpfs / "data"),
                     env={"SLUICE_FAULT": f"{point}:2:hold", "SLUICE_FAULT_HOLD": str(hold)})
    out = tmp_path / "out"
    with psycopg.connect(server.dsn, autocommit=True) as c:
        c.execute("CREATE STREAM s (a bigint, b text)")
        if into == "files":
            c.execute(f"CREATE SINK f WITH (connector = 'files', path = '{out}', format = 'csv')")
            c.execute("CREATE CONTINUOUS QUERY q INTO f WITH (trigger = '1 second') AS "
                      "SELECT a FROM s")

            def done():
                return len(files_sink_rows(out))
        else:
            c.execute("CREATE CONTINUOUS QUERY q WITH (trigger = '1 second') AS "
                      "SELECT a % 10 AS k, count(*) AS n FROM s GROUP BY a % 10")

            def done():
                return c.execute("SELECT coalesce(sum(n), 0) FROM q").fetchone()[0]
        c.execute("INSERT INTO s SELECT g, 'x' FROM generate_series(1, 100) g")
        wait = time.monotonic() + 60
        while done() != 100:
            assert time.monotonic() < wait, "q never took the first rows"
            time.sleep(0.2)
        # the second batch's log write holds at its fault point; meanwhile
        # the disk fills up to its last byte
        c.execute("INSERT INTO s SELECT g, 'y' FROM generate_series(101, 200) g")
        wait_log(server, f"fault point {point} reached, holding")
        fill(tmpfs / "filler")
        hold.unlink()
        wait_retrying(c, "catalog: database or disk is full")
        assert "log write refused for a full disk" in server.log_text()
        (tmpfs / "filler").unlink()
        wait = time.monotonic() + 90
        while done() != 200 or c.execute(
                "SELECT status FROM sys.queries WHERE name = 'q'").fetchone()[0] != "running":
            assert time.monotonic() < wait, "q did not go on after space was freed"
            time.sleep(0.5)
        c.execute("INSERT INTO s SELECT g, 'z' FROM generate_series(201, 300) g")
        wait = time.monotonic() + 60
        while done() != 300:
            assert time.monotonic() < wait, "q did not take the rows after the full disk"
            time.sleep(0.2)
        if into == "files":
            assert files_sink_rows(out) == list(range(1, 301))
        else:
            assert c.execute("SELECT count(*), min(n), max(n) FROM q").fetchone() == (10, 30, 30)
    server.stop()
    assert check_logs(tmpfs / "data" / "catalog.db", "q") == 300
    server.start()
    with psycopg.connect(server.dsn, autocommit=True) as c:
        time.sleep(2)
        assert c.execute("SELECT status FROM sys.queries WHERE name = 'q'").fetchone() == (
            "running",)
        if into == "files":
            assert files_sink_rows(out) == list(range(1, 301))
        else:
            assert c.execute("SELECT count(*), min(n), max(n) FROM q").fetchone() == (10, 30, 30)


def test_write_past_the_room_left_is_refused_before_rocksdb(sluiced, tmpfs_400m):
    """A write larger than the space left above the reserve is refused (53100,
    nothing written) before RocksDB sees it: RocksDB's own out-of-space failure
    leaves its WAL writer broken, and its automatic recovery from it (the
    default SstFileManager's) fails an assertion of that writer and aborted
    the server (seen in the full suite).  The server answers on, and the
    write goes through once space is freed."""
    tmpfs = tmpfs_400m
    server = sluiced("--data-dir", str(tmpfs / "data"))
    with psycopg.connect(server.dsn, autocommit=True) as c:
        c.execute("CREATE TABLE t (id bigint PRIMARY KEY, v text)")
        c.execute("INSERT INTO t SELECT g, md5(g::text) FROM generate_series(1, 5000) g")
        # 65 MiB above the reserve: a 160 MB write does not fit
        fill_leaving(tmpfs / "filler", (64 << 20) + (65 << 20))
        for _ in range(3):
            with pytest.raises(psycopg.Error) as e:
                c.execute("INSERT INTO t SELECT g, repeat(md5(g::text), 256) "
                          "FROM generate_series(10001, 30000) g")
            assert e.value.sqlstate == "53100", e.value
            assert "could not write" in str(e.value), e.value
            time.sleep(2)
        assert c.execute("SELECT count(*) FROM t").fetchone() == (5000,)
        (tmpfs / "filler").unlink()
        c.execute("INSERT INTO t SELECT g, repeat(md5(g::text), 256) "
                  "FROM generate_series(10001, 30000) g")
        assert c.execute("SELECT count(*) FROM t").fetchone() == (25000,)
    assert "No space left on device" not in server.log_text()


def table_of_u(server, privileges):
    """Makes the role u and a table t of 1000 rows (as u) on which u has
    the privileges; returns u's connection string."""
    with psycopg.connect(server.dsn, autocommit=True) as c:
        c.execute(f"CREATE ROLE u LOGIN PASSWORD '{PASSWORD}'")
        c.execute("CREATE TABLE t (id bigint PRIMARY KEY, v text)")
        c.execute(f"GRANT {privileges} ON t TO u")
    udsn = server.dsn.replace("user=sluice", "user=u")
    with psycopg.connect(udsn, password=PASSWORD, autocommit=True) as c:
        c.execute("INSERT INTO t SELECT g, md5(g::text) FROM generate_series(1, 1000) g")
    return udsn


def test_rocksdb_meeting_the_full_disk_keeps_the_server_up(sluiced, tmpfs):
    """RocksDB itself meets the full disk (a DELETE -- writes that only
    delete are not held to the reserve -- into a WAL that could not be
    preallocated, the disk filled up to its last byte by something else),
    and the disk stays full while RocksDB's recovery polls for space: the
    server answers on, reads go on, it stops cleanly and, once space is
    freed, writes go on and every acknowledged row is kept.  Before the
    fix RocksDB's info log (state/LOG) failed a flush on the full disk and
    its next line aborted the server (`writable_file_writer.h:312
    AssertFalseAndGetStatusForPrevError`): here at the DELETE's own error,
    else in RocksDB's recovery or at shutdown."""
    # under 70 MiB free at the WAL's first write: its 70 MiB preallocation
    # fails and it grows as it is written
    fill_leaving(tmpfs / "filler0", 70 << 20)
    server = sluiced("--data-dir", str(tmpfs / "data"))
    udsn = table_of_u(server, "SELECT, INSERT, DELETE")
    with psycopg.connect(udsn, password=PASSWORD, autocommit=True) as c:
        fill(tmpfs / "filler")
        with pytest.raises(psycopg.Error) as e:
            c.execute("DELETE FROM t WHERE id <= 500")
        assert e.value.sqlstate == "53100", e.value
        assert "No space left on device" in str(e.value), e.value
        # RocksDB's recovery tries every 5 s and logs each try; its info
        # log flushes at most 5 s apart and every 10 s
        wait = time.monotonic() + 16
        while time.monotonic() < wait:
            assert server.alive(), server.log_text()[-3000:]
            assert c.execute("SELECT count(*) FROM t").fetchone() == (1000,)
            time.sleep(1)
        assert sqlstate(c, "INSERT INTO t VALUES (2000, 'refused')") == "53100"
    assert server.stop() == 0, server.log_text()[-3000:]
    (tmpfs / "filler").unlink()
    server.start()
    with psycopg.connect(udsn, password=PASSWORD, autocommit=True) as c:
        c.execute("DELETE FROM t WHERE id <= 500")
        c.execute("INSERT INTO t VALUES (2000, 'after')")
        assert c.execute("SELECT count(*), min(id), max(id) FROM t").fetchone() == (
            501, 501, 2000)
    server.restart()
    with psycopg.connect(server.dsn, autocommit=True) as c:
        assert c.execute("SELECT count(*), min(id), max(id) FROM t").fetchone() == (
            501, 501, 2000)


def test_server_stops_cleanly_after_the_disk_stayed_full(sluiced, tmpfs):
    """The disk stays full for longer than RocksDB's info log takes to flush
    (every 10 s), with every write refused before RocksDB sees it: the
    server answers on and stops cleanly (exit 0), and once space is freed
    writes go on.  Before the fix the log's failed flush left its file
    writer broken and the next line -- at shutdown -- aborted the server
    (`writable_file_writer.h:312 AssertFalseAndGetStatusForPrevError`):
    test_writes_resume_after_space_is_freed did so when load stretched its
    full disk past a flush."""
    server = sluiced("--data-dir", str(tmpfs / "data"))
    udsn = table_of_u(server, "SELECT, INSERT")
    with psycopg.connect(udsn, password=PASSWORD, autocommit=True) as c:
        fill(tmpfs / "filler")
        wait = time.monotonic() + 12
        while time.monotonic() < wait:
            assert sqlstate(c, "INSERT INTO t VALUES (2000, 'refused')") == "53100"
            assert c.execute("SELECT count(*) FROM t").fetchone() == (1000,)
            time.sleep(1)
        (tmpfs / "filler").unlink()
        c.execute("INSERT INTO t VALUES (2001, 'after')")
    assert server.stop() == 0, server.log_text()[-3000:]
    server.start()
    with psycopg.connect(udsn, password=PASSWORD, autocommit=True) as c:
        assert c.execute("SELECT count(*), max(id) FROM t").fetchone() == (1001, 2001)


def test_open_scan_does_not_block_the_reopen(sluiced, tmp_path):
    """RocksDB meets the full disk (a write fails with its out-of-space error,
    here from the fault point state_write_no_space in front of rocksdb_write:
    sluice refuses the writes it can tell will not fit before RocksDB sees
    them), so the store must be closed and opened again before the next
    write -- while a suspended portal of a SELECT holds a scan of it open in
    an idle transaction.  The reopen ends the scan: writes go on at once, and
    the portal's next Execute fails with 53100 (run the statement again),
    not with rows of another store.  Before the fix every write failed with
    53100 ("the store is in use") until the client closed its portal."""
    # the second state write (the INSERT of 6000 below) fails as RocksDB's would
    server = sluiced("--data-dir", str(tmp_path / "data"),
                     env={"SLUICE_FAULT": "state_write_no_space:2:fail"})
    with psycopg.connect(server.dsn, autocommit=True) as c:
        c.execute(f"CREATE ROLE u LOGIN PASSWORD '{PASSWORD}'")
        c.execute("CREATE TABLE t (id bigint PRIMARY KEY, v text)")
        c.execute("GRANT SELECT, INSERT ON t TO u")
    udsn = server.dsn.replace("user=sluice", "user=u")
    with Raw(server.port) as raw, psycopg.connect(udsn, password=PASSWORD,
                                                   autocommit=True) as c:
        c.execute("INSERT INTO t SELECT g, md5(g::text) FROM generate_series(1, 5000) g")
        assert raw.startup(user="u", password=PASSWORD)[-1] == (b"Z", b"I")
        raw.send(query("BEGIN"))
        assert raw.until_ready()[-1] == (b"Z", b"T")
        raw.send(parse("SELECT id FROM t"), bind(portal="p"), execute("p", maxrows=10), sync())
        msgs = raw.until_ready()
        assert b"".join(k for k, _ in msgs) == b"12" + b"D" * 10 + b"sZ", msgs
        first = [int(data_row(body)[0]) for k, body in msgs if k == b"D"]
        with pytest.raises(psycopg.Error) as e:
            c.execute("INSERT INTO t VALUES (6000, 'refused')")
        assert e.value.sqlstate == "53100", e.value
        assert "No space left on device" in str(e.value), e.value
        # the portal's scan is still open: the reopen ends it
        c.execute("INSERT INTO t VALUES (6001, 'after')")
        assert "state store reopened" in server.log_text()
        assert c.execute("SELECT count(*), max(id) FROM t").fetchone() == (5001, 6001)
        # the rows the portal read before the reopen come, then the error
        # where it would read the store again: never a row of the new store
        raw.send(execute("p"), sync())
        msgs = raw.until_ready()
        assert [k for k, _ in msgs[-2:]] == [b"E", b"Z"], msgs[-2:]
        rest = [int(data_row(body)[0]) for k, body in msgs if k == b"D"]
        assert len(rest) + 2 == len(msgs), [k for k, _ in msgs]
        assert first + rest == list(range(1, len(first) + len(rest) + 1))
        assert len(first) + len(rest) < 5000
        fields = error_fields(msgs[-2][1])
        assert fields["C"] == "53100" and "the scan was ended" in fields["M"], fields
        assert msgs[-1] == (b"Z", b"E")
        raw.send(query("ROLLBACK"))
        assert raw.until_ready()[-1] == (b"Z", b"I")
        raw.send(query("SELECT count(*) FROM t"))
        msgs = raw.until_ready()
        assert [data_row(body) for k, body in msgs if k == b"D"] == [[b"5001"]]
    server.restart()
    with psycopg.connect(server.dsn, autocommit=True) as c:
        assert c.execute("SELECT count(*), count(DISTINCT id), max(id) FROM t").fetchone() == (
            5001, 5001, 6001)


def test_once_query_finishes_when_its_commit_entry_is_written(sluiced, tmpfs, tmp_path):
    """A `once` query's commit-log entry is refused for a full disk: the
    query is `retrying`, not `finished` (nor `failed`, as before the fix),
    until the entry is written once space is freed."""
    hold = tmp_path / "hold"
    hold.write_text("")
    server = sluiced("--data-dir", str(tmpfs / "data"),
                     env={"SLUICE_FAULT": "commit_log_before_write:1:hold",
                          "SLUICE_FAULT_HOLD": str(hold)})
    with psycopg.connect(server.dsn, autocommit=True) as c:
        c.execute("CREATE STREAM s (a bigint, b text)")
        c.execute("INSERT INTO s SELECT g, 'x' FROM generate_series(1, 100) g")
        c.execute("CREATE CONTINUOUS QUERY q WITH (trigger = 'once') AS "
                  "SELECT a % 10 AS k, count(*) AS n FROM s GROUP BY a % 10")
        wait_log(server, "fault point commit_log_before_write reached, holding")
        fill(tmpfs / "filler")
        hold.unlink()
        wait_retrying(c, "catalog: database or disk is full (commit log entry of batch 0")
        (tmpfs / "filler").unlink()
        wait = time.monotonic() + 30
        while c.execute("SELECT status FROM sys.queries WHERE name = 'q'").fetchone()[0] != (
                "finished"):
            assert time.monotonic() < wait, "q did not finish after space was freed"
            time.sleep(0.2)
        assert c.execute("SELECT sum(n) FROM q").fetchone()[0] == 100
    server.stop()
    assert check_logs(tmpfs / "data" / "catalog.db", "q") == 100


def test_log_io_error_for_want_of_space_retries(sluiced):
    """SQLite's I/O error with errno ENOSPC (SQLITE_IOERR, not SQLITE_FULL:
    a tmpfs never gives it) on an offset-log write is a full disk too
    (53100): the fault point log_write_no_space fails the third log write
    (batch 1's offset entry) that way, once.  The query retries (the log
    says so, with the error), never fails, and goes on with the logs whole.
    Mapped as an ordinary I/O error (58030), the query failed."""
    server = sluiced(env={"SLUICE_FAULT": "log_write_no_space:3:fail"})
    with psycopg.connect(server.dsn, autocommit=True) as c:
        c.execute("CREATE STREAM s (a bigint, b text)")
        c.execute("CREATE CONTINUOUS QUERY q WITH (trigger = '1 second') AS "
                  "SELECT a % 10 AS k, count(*) AS n FROM s GROUP BY a % 10")
        for first in (1, 101):
            c.execute(f"INSERT INTO s SELECT g, 'x' FROM generate_series({first}, {first + 99}) g")
            wait = time.monotonic() + 60
            while c.execute("SELECT coalesce(sum(n), 0) FROM q").fetchone()[0] != first + 99:
                status = c.execute("SELECT status, last_error FROM sys.queries "
                                   "WHERE name = 'q'").fetchone()
                assert status[0] != "failed" and time.monotonic() < wait, status
                time.sleep(0.2)
        wait_log(server, "log write succeeded after retries")
        log = server.log_text()
        assert "fault point log_write_no_space reached, failing (3)" in log
        assert ('msg="log write refused for a full disk, retrying" query=q log="offset log" '
                'batch=1 attempt=1') in log, log
        assert "catalog: disk I/O error (fault point log_write_no_space)" in log
        assert c.execute("SELECT status, last_error FROM sys.queries "
                         "WHERE name = 'q'").fetchone() == ("running", None)
    server.stop()
    assert check_logs(server.data_dir / "catalog.db", "q") == 200


@pytest.mark.parametrize("crash", ["commit_missing", "offsets_in_state_only"])
def test_recovery_log_write_refused_for_a_full_disk_retries(sluiced, tmp_path, crash):
    """The log writes that recovery does at start take the same retry path
    as those of a running query: a server killed where recovery must write
    a log entry (commit_missing: after batch 0's state write, before its
    commit entry; offsets_in_state_only: the batch's state written while
    the loop held before its offset entry, which the state keeps) starts
    with that write refused for want of space (log_write_no_space, once).
    The query is `retrying`, not `failed` (as before the fix), writes the
    entry on its next try and goes on: every row once, the logs whole."""
    hold = tmp_path / "hold"
    hold.write_text("")
    env = ({"SLUICE_FAULT": "batch_after_deliver:1"} if crash == "commit_missing" else
           {"SLUICE_FAULT": "offsets_before_write:1:hold", "SLUICE_FAULT_HOLD": str(hold),
            "SLUICE_FAULT_TRACE": "1"})
    server = sluiced(env=env)
    with psycopg.connect(server.dsn, autocommit=True) as c:
        c.execute("CREATE STREAM s (a bigint, b text)")
        c.execute("INSERT INTO s SELECT g, 'x' FROM generate_series(1, 100) g")
    # the query's first batch starts at its CREATE: a raw connection, as
    # the loop may hold before the answer goes out
    raw = Raw(server.port)
    raw.startup()
    raw.send(query("CREATE CONTINUOUS QUERY q WITH (trigger = '1 second') AS "
                   "SELECT a % 10 AS k, count(*) AS n FROM s GROUP BY a % 10"))
    if crash == "commit_missing":
        assert server.wait_exit(30) == -9, "the fault point did not kill the server"
    else:
        wait_log(server, "fault point batch_after_state_commit passed")
        assert server.kill() == -9
    raw.close()
    server.env = {"SLUICE_FAULT": "log_write_no_space:1:fail"}
    server.start()
    with psycopg.connect(server.dsn, autocommit=True) as c:
        wait_log(server, "log write succeeded after retries")
        log = server.log_text()
        assert "fault point log_write_no_space reached, failing (1)" in log
        what = "commit log" if crash == "commit_missing" else "offset log"
        assert (f'msg="log write refused for a full disk, retrying" query=q log="{what}" '
                'batch=0 attempt=1') in log, log
        c.execute("INSERT INTO s SELECT g, 'y' FROM generate_series(101, 200) g")
        wait = time.monotonic() + 60
        while c.execute("SELECT coalesce(sum(n), 0) FROM q").fetchone()[0] != 200:
            status = c.execute("SELECT status, last_error FROM sys.queries "
                               "WHERE name = 'q'").fetchone()
            assert status[0] != "failed" and time.monotonic() < wait, status
            time.sleep(0.2)
        assert c.execute("SELECT count(*), min(n), max(n) FROM q").fetchone() == (10, 20, 20)
        assert c.execute("SELECT status, last_error FROM sys.queries "
                         "WHERE name = 'q'").fetchone() == ("running", None)
    server.stop()
    assert check_logs(server.data_dir / "catalog.db", "q") == 200
