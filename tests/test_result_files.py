"""Result files (docs/engine.md, "Result logs"): a batch of an append-only
continuous query whose output chunks come to 256 KiB or more writes them to
a segment file of the query's own under <data_dir>/state/results,
fdatasync'ed before the batch's RocksDB write, which holds only a reference;
smaller batches stay inline chunks in RocksDB.

Covers: batches of every size (inline and file, one row wider than a chunk)
with every column type, read back exactly through SELECT (text and binary),
COPY TO, SUBSCRIBE WITH (snapshot) and after a restart; a SIGKILL before the
file write, after its fdatasync (before the RocksDB write) and before/after
the RocksDB write -- every row once after the replay, and no uncommitted
bytes left in the file; a damaged byte in a segment file gives SQLSTATE
XX001, never rows, and the server goes on; a file that cannot be written
fails the query with the error and nothing of the batch visible, and the
restart replays it; DROP and re-CREATE remove the files.

Each region starts on a 4,096-byte boundary and is padded with zeros to
one, written with O_DIRECT; SLUICE_RESULT_DIRECT_IO=off writes the same
bytes through the page cache, and (fault-injection builds) refuse-open /
refuse-write make O_DIRECT fail with EINVAL as on a filesystem that
refuses it.  The key cases run on every path (`io`), and each checks from
the server's log which path it took.  The data directories are under
pytest's tmp_path (ext4 on the project machine: there O_DIRECT is taken;
on a filesystem that refuses it, the default case checks the fallback).
"""

import errno
import mmap
import os

import psycopg
import pytest

from test_continuous_queries import WAIT, connect, wait_for
from test_result_log import (FILTER, STREAM, copy_out, copy_rows, kill_at, load_paused,
                             progress, resume_until, table)
from test_subscribe import start_stream, take, wait_subscribed


def segments(server):
    return sorted((server.data_dir / "state" / "results").glob("*.seg"))


# How result files are written: O_DIRECT (the default), through the page
# cache (forced), and the fallbacks when O_DIRECT is refused at open or at
# the first write.
IOS = ["direct", "buffered", "refuse-open", "refuse-write"]
IO_ENV = {"direct": {}, "buffered": {"SLUICE_RESULT_DIRECT_IO": "off"},
          "refuse-open": {"SLUICE_RESULT_DIRECT_IO": "refuse-open"},
          "refuse-write": {"SLUICE_RESULT_DIRECT_IO": "refuse-write"}}
DIRECT_MSG = 'msg="result files written with direct I/O"'
BUFFERED_MSG = 'msg="result files written through the page cache"'


def start_io(sluiced, io):
    return sluiced(env=dict(IO_ENV[io]))


def direct_io_works(directory):
    """Whether the filesystem of directory takes O_DIRECT writes (ext4 and,
    since Linux 6.6, tmpfs do; older tmpfs refuses them with EINVAL)."""
    path = directory / ".odirect-probe"
    try:
        fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_DIRECT, 0o644)
    except OSError as e:
        if e.errno == errno.EINVAL:
            return False
        raise
    try:
        buf = mmap.mmap(-1, 4096)       # page-aligned, as O_DIRECT wants
        try:
            os.pwrite(fd, buf, 0)
        except OSError as e:
            if e.errno == errno.EINVAL:
                return False
            raise
        return True
    finally:
        os.close(fd)
        path.unlink()


def check_io(server, io):
    """The server's log says result files were written the way io asks --
    by default with O_DIRECT, or, where the data directory's filesystem
    refuses it, through the page cache with the reason logged."""
    log = server.log_text()
    if io == "direct" and not direct_io_works(server.data_dir):
        assert BUFFERED_MSG in log and "the filesystem refuses O_DIRECT" in log, log[-3000:]
    elif io == "direct":
        assert DIRECT_MSG in log and BUFFERED_MSG not in log, log[-3000:]
    elif io == "buffered":
        assert BUFFERED_MSG in log and DIRECT_MSG not in log
        assert "SLUICE_RESULT_DIRECT_IO=off" in log
    elif io == "refuse-open":
        assert BUFFERED_MSG in log and DIRECT_MSG not in log
        assert "the filesystem refuses O_DIRECT" in log
    elif not direct_io_works(server.data_dir):
        assert BUFFERED_MSG in log and "the filesystem refuses O_DIRECT" in log
    else:
        assert DIRECT_MSG in log and "a direct write was refused (EINVAL)" in log


def check_padding(seg):
    """A segment ends on a 4,096-byte boundary, in zeros after its last
    region's bytes."""
    data = seg.read_bytes()
    assert len(data) % 4096 == 0, len(data)
    assert len(data) - len(data.rstrip(b"\0")) < 4096


@pytest.mark.parametrize("io", IOS)
def test_inline_and_file_batches_every_type(sluiced, io):
    server = start_io(sluiced, io)
    with connect(server) as c:
        c.execute(STREAM)
        c.execute("CREATE CONTINUOUS QUERY r WITH (trigger = '0', "
                  f"max_offsets_per_trigger = 4000) AS SELECT * FROM ev WHERE {FILTER}")
        # batches of 4000 rows (file), 7 (inline), 4000 + 1500 (files),
        # 1 (inline), then 3 rows of which one is 600 KB of text (a file,
        # the wide row a chunk of its own)
        pieces = [(0, 4000), (4000, 7), (4007, 5500), (9507, 1)]
        done = 0
        for first, n in pieces:
            c.execute("ALTER CONTINUOUS QUERY r PAUSE")
            copy_rows(c, first, n)
            c.execute("ALTER CONTINUOUS QUERY r RESUME")
            done += n
            want_n = sum(1 for i in range(done) if i % 10 != 3)
            assert wait_for(lambda: c.execute("SELECT count(*) FROM r").fetchone()[0],
                            want_n, timeout=120) == want_n
        assert not segments(server) or len(segments(server)) == 1
        c.execute("ALTER CONTINUOUS QUERY r PAUSE")
        c.execute("INSERT INTO ev (i, t) VALUES (9508, %s), (9509, 'small'), (9510, %s)",
                  ("w" * 600_000, "v" * 100))
        c.execute("ALTER CONTINUOUS QUERY r RESUME")
        assert wait_for(lambda: progress(c, "r"), [4000, 7, 4000, 1500, 1, 3]) == \
            [4000, 7, 4000, 1500, 1, 3]
        assert len(segments(server)) == 1
        seg_bytes = segments(server)[0].stat().st_size
        assert seg_bytes > 1_200_000, seg_bytes
        check_padding(segments(server)[0])

        want = table(c, f"SELECT * FROM ev WHERE {FILTER}")
        assert table(c, "SELECT * FROM r") == want
        assert any(r[7] == "w" * 600_000 for r in want)
        assert table(c, "SELECT * FROM r", binary=True) == \
            table(c, f"SELECT * FROM ev WHERE {FILTER}", binary=True)
        assert copy_out(c, "(SELECT * FROM r)") == \
            copy_out(c, f"(SELECT * FROM ev WHERE {FILTER})")
        sub, rows, ended, t = start_stream(server.dsn, "SUBSCRIBE r WITH (snapshot)")
        snap = take(rows, len(want), timeout=120)
        sub.cancel()
        t.join(WAIT)
        sub.close()
        assert [tuple(r[2:]) for r in snap] == want

    server.stop()
    server.start()
    with connect(server) as c:
        assert table(c, "SELECT * FROM r") == want
        # the next batch appends to the same segment; a subscriber reads it
        # as it commits (the region written past the page cache, read
        # through it)
        sub, rows, ended, t = start_stream(server.dsn, "SUBSCRIBE r")
        wait_subscribed(server, 2)
        c.execute("ALTER CONTINUOUS QUERY r PAUSE")
        copy_rows(c, 20_000, 3000)
        c.execute("ALTER CONTINUOUS QUERY r RESUME")
        n = len(want) + sum(1 for i in range(20_000, 23_000) if i % 10 != 3)
        assert wait_for(lambda: c.execute("SELECT count(*) FROM r").fetchone()[0],
                        n, timeout=120) == n
        live = take(rows, n - len(want), timeout=120)
        sub.cancel()
        t.join(WAIT)
        sub.close()
        assert [tuple(r[2:]) for r in live] == \
            table(c, f"SELECT * FROM ev WHERE {FILTER} AND i >= 20000")
        assert len(segments(server)) == 1 and segments(server)[0].stat().st_size > seg_bytes
        check_padding(segments(server)[0])
        assert table(c, "SELECT * FROM r") == table(c, f"SELECT * FROM ev WHERE {FILTER}")
        # DROP removes the files; a new query of the same name starts afresh
        c.execute("DROP CONTINUOUS QUERY r")
        assert segments(server) == []
        c.execute("CREATE CONTINUOUS QUERY r WITH (trigger = '0') AS "
                  "SELECT i, t FROM ev WHERE i >= 30000")
        c.execute("ALTER CONTINUOUS QUERY r PAUSE")
        with c.cursor().copy("COPY ev (i, t) FROM STDIN") as cp:
            for i in range(30_000, 32_000):
                cp.write_row((i, "z" * 300))
        c.execute("ALTER CONTINUOUS QUERY r RESUME")
        assert wait_for(lambda: c.execute("SELECT count(*) FROM r").fetchone()[0],
                        2000, timeout=120) == 2000
        assert len(segments(server)) == 1
        assert table(c, "SELECT i FROM r") == [(i,) for i in range(30_000, 32_000)]
    check_io(server, io)


def wide(i):
    """Rows of 150-350 bytes: each batch of 2000-3000 is a result file."""
    return None if i % 13 == 0 else f"r{i}:" + "x" * (150 + i % 200)


# (fault point, the hit that kills): each is reached once per batch that
# writes a result file; the second batch dies.
FAULTS = [
    ("result_file_before_write", 2),
    ("result_file_after_sync", 2),
    ("batch_before_state_commit", 2),
    ("batch_after_state_commit", 2),
]


@pytest.mark.parametrize("io", ["direct", "buffered"])
@pytest.mark.parametrize("point,hit", FAULTS, ids=[p for p, _ in FAULTS])
def test_kill_at_each_durable_step_writes_each_row_once(sluiced, point, hit, io):
    want = [(i, None if wide(i) is None else wide(i) + "!") for i in range(8000) if i % 7 != 0]
    # the same input on a server that is never killed, writing with
    # O_DIRECT: its segment file (both paths write the same bytes)
    ref = sluiced()
    load_paused(ref, wide)
    resume_until(ref, want)
    (ref_seg,) = segments(ref)
    ref.stop()
    check_io(ref, "direct")

    server = start_io(sluiced, io)
    load_paused(server, wide)
    server.stop()
    kill_at(server, point, hit)
    resume_until(server, want)
    with connect(server) as c:
        assert progress(c, "r")[-1] == 2000
    # The same segment, byte for byte: a region written but not committed
    # was cut away, and the replay wrote the batch's region again.
    (seg,) = segments(server)
    assert seg.name == ref_seg.name
    assert seg.read_bytes() == ref_seg.read_bytes()
    check_padding(seg)
    check_io(server, io)


@pytest.mark.parametrize("io", ["direct", "buffered"])
def test_a_damaged_byte_is_xx001_not_rows(sluiced, io):
    server = start_io(sluiced, io)
    with connect(server) as c:
        c.execute("CREATE STREAM ev (i bigint, t text)")
        c.execute("CREATE CONTINUOUS QUERY r WITH (trigger = '0') AS SELECT i, t FROM ev")
        c.execute("CREATE CONTINUOUS QUERY other WITH (trigger = '0') AS "
                  "SELECT i FROM ev WHERE i = 5")
        c.execute("ALTER CONTINUOUS QUERY r PAUSE")
        with c.cursor().copy("COPY ev FROM STDIN") as cp:
            for i in range(2000):
                cp.write_row((i, f"row {i} " + "y" * 300))
        c.execute("ALTER CONTINUOUS QUERY r RESUME")
        assert wait_for(lambda: c.execute("SELECT count(*) FROM r").fetchone()[0],
                        2000, timeout=120) == 2000
        want = table(c, "SELECT * FROM r")
    server.stop()
    (seg,) = segments(server)
    data = bytearray(seg.read_bytes())
    at = data.index(b"row 1234 ")
    # a byte in a row, in a chunk's frame header, in the region header
    for off in (at + 2, 16 + 3, 2):
        bad = bytearray(data)
        bad[off] ^= 0x5A
        seg.write_bytes(bad)
        server.start()
        with connect(server) as c:
            with pytest.raises(psycopg.Error) as e:
                c.execute("SELECT * FROM r").fetchall()
            assert e.value.sqlstate == "XX001", e.value
            assert "result file" in str(e.value)
            with pytest.raises(psycopg.Error) as e:
                c.execute("SELECT count(*) FROM r WHERE t LIKE 'row 1234 %'").fetchall()
            assert e.value.sqlstate == "XX001"
            # the server and the other queries go on
            assert c.execute("SELECT * FROM other").fetchall() == [(5,)]
        server.stop()
    check_io(server, io)
    # the padding is never read: without it the rows are all there
    real = len(data.rstrip(b"\0"))
    assert len(data) - real < 4096
    seg.write_bytes(bytes(data[:real]))
    server.start()
    with connect(server) as c:
        assert table(c, "SELECT * FROM r") == want
    server.stop()
    # torn: the last bytes of the region missing
    seg.write_bytes(bytes(data[:real - 20]))
    server.start()
    with connect(server) as c:
        with pytest.raises(psycopg.Error) as e:
            c.execute("SELECT * FROM r").fetchall()
        assert e.value.sqlstate == "XX001"
    server.stop()
    seg.write_bytes(bytes(data))
    server.start()
    with connect(server) as c:
        assert table(c, "SELECT * FROM r") == want


def test_a_write_error_fails_the_query_and_a_restart_replays_the_batch(sluiced):
    server = sluiced()
    with connect(server) as c:
        c.execute("CREATE STREAM ev (i bigint, t text)")
        c.execute("CREATE CONTINUOUS QUERY r WITH (trigger = '0') AS SELECT i, t FROM ev")
        c.execute("INSERT INTO ev VALUES (-1, 'inline')")
        assert wait_for(lambda: c.execute("SELECT count(*) FROM r").fetchone()[0], 1) == 1
        # where the result files go, a plain file: the next large batch
        # cannot make its segment
        blocker = server.data_dir / "state" / "results"
        assert not blocker.exists()
        blocker.write_text("in the way")
        c.execute("ALTER CONTINUOUS QUERY r PAUSE")
        with c.cursor().copy("COPY ev FROM STDIN") as cp:
            for i in range(2000):
                cp.write_row((i, wide(i)))
        c.execute("ALTER CONTINUOUS QUERY r RESUME")
        assert wait_for(lambda: c.execute("SELECT status FROM sys.queries "
                                          "WHERE name = 'r'").fetchone()[0],
                        "failed", timeout=120) == "failed"
        got = c.execute("SELECT status, last_error FROM sys.queries WHERE name = 'r'").fetchone()
        assert got[0] == "failed" and "result file" in got[1], got
        # nothing of the failed batch is visible
        assert table(c, "SELECT * FROM r") == [(-1, "inline")]
    server.stop()
    blocker.unlink()
    server.start()
    want = [(-1, "inline")] + [(i, wide(i)) for i in range(2000)]
    with connect(server) as c:
        assert wait_for(lambda: c.execute("SELECT count(*) FROM r").fetchone()[0],
                        len(want), timeout=120) == len(want)
        assert table(c, "SELECT * FROM r") == want
    assert len(segments(server)) == 1
