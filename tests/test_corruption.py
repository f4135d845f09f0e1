"""A damaged data directory is an error, never a short answer
(docs/operations.md, "Damaged data").

Covers, each on a data directory whose right answer is known: 16 bytes
flipped in a table's SST (SELECT count(*) fails with XX001 data_corrupted, the
untouched stream still counts right); a stream's blob file flipped or
deleted (the scan fails); a byte flipped in the WAL after a SIGKILL (the
server refuses to start rather than lose acknowledged writes); catalog.db
truncated, emptied or deleted while the state store is there (refused), and
the state store deleted while the catalog is there (refused).  No case may
return a count other than the known one.
"""

import os
import shutil

import psycopg
import pytest

ROWS = 100_000


def try_start(server):
    """Start the server: True when it came up, False when it refused."""
    try:
        server.start()
        return True
    except pytest.fail.Exception:
        return False


def count(server, rel):
    """SELECT count(*) FROM rel: the count, or the SQLSTATE of its error."""
    with psycopg.connect(server.dsn, autocommit=True) as c:
        try:
            return c.execute(f"SELECT count(*) FROM {rel}").fetchone()[0]
        except psycopg.Error as e:
            return e.sqlstate


def flip(path, at, n=16):
    """Inverts n bytes of the file at fraction at of its length."""
    data = bytearray(path.read_bytes())
    off = int(len(data) * at)
    for i in range(off, min(off + n, len(data))):
        data[i] ^= 0xFF
    path.write_bytes(bytes(data))


def state_files(server, ext):
    return sorted((server.data_dir / "state").glob(f"*.{ext}"),
                  key=lambda p: p.stat().st_size)


@pytest.fixture
def loaded(sluiced):
    """A server whose table t and stream s hold ROWS rows each, in table and
    blob files (a restart replays the WAL into them), stopped."""
    server = sluiced()
    with psycopg.connect(server.dsn, autocommit=True) as c:
        c.execute("CREATE TABLE t (id bigint PRIMARY KEY, v text)")
        c.execute("CREATE STREAM s (a bigint, b text)")
        c.execute(f"INSERT INTO t SELECT g, md5(g::text) FROM generate_series(1, {ROWS}) g")
        c.execute(f"INSERT INTO s SELECT g, md5(g::text) FROM generate_series(1, {ROWS}) g")
    server.restart()
    assert count(server, "t") == ROWS and count(server, "s") == ROWS
    server.stop()
    assert state_files(server, "sst") and state_files(server, "blob")
    return server


def test_sst_flip_is_data_corrupted(loaded):
    flip(state_files(loaded, "sst")[-1], 1 / 3)
    assert try_start(loaded)
    assert count(loaded, "t") == "XX001"
    assert count(loaded, "s") == ROWS       # its chunks are in the blob file


@pytest.mark.parametrize("damage", ["flip", "delete"])
def test_blob_damage_is_an_error(loaded, damage):
    blob = state_files(loaded, "blob")[-1]
    if damage == "flip":
        flip(blob, 1 / 2)
    else:
        blob.unlink()
    if try_start(loaded):
        got = count(loaded, "s")
        assert isinstance(got, str), f"stream s counted {got} of {ROWS} rows"
        assert got == ("XX001" if damage == "flip" else "58030")


def test_wal_flip_refuses_to_start(sluiced):
    server = sluiced()
    with psycopg.connect(server.dsn, autocommit=True) as c:
        c.execute("CREATE TABLE w (id bigint PRIMARY KEY, v text)")
        for first in range(1, 10_001, 1000):
            c.execute(f"INSERT INTO w SELECT g, md5(g::text) "
                      f"FROM generate_series({first}, {first + 999}) g")
    server.kill()       # the acknowledged rows are only in the WAL
    wal = state_files(server, "log")[-1]
    assert wal.stat().st_size > 100_000
    data = bytearray(wal.read_bytes())
    data[len(data) // 4] ^= 0x01
    wal.write_bytes(bytes(data))
    started = try_start(server)
    if started:
        got = count(server, "w")
        assert got == 10_000, f"table w counted {got} of 10000 rows after a WAL flip"
    assert not started, "a damaged WAL record was skipped"
    assert "Corruption" in server.log_text()


@pytest.mark.parametrize("damage", ["truncate", "empty", "delete", "state"])
def test_damaged_catalog_refuses_to_start(sluiced, damage):
    server = sluiced()
    with psycopg.connect(server.dsn, autocommit=True) as c:
        for i in range(40):
            c.execute(f"CREATE TABLE t{i} (id bigint PRIMARY KEY, v text)")
        c.execute("INSERT INTO t0 VALUES (1, 'one')")
    server.stop()
    catalog = server.data_dir / "catalog.db"
    size = catalog.stat().st_size
    if damage == "truncate":
        os.truncate(catalog, size - 4096)
    elif damage == "empty":
        os.truncate(catalog, 0)
    elif damage == "delete":
        catalog.unlink()
    else:
        shutil.rmtree(server.data_dir / "state")
    started = try_start(server)
    if started:
        got = count(server, "t0")
        assert got == 1, f"table t0 answered {got} after the damage"
    assert not started, "a damaged data directory started"
    assert "refusing to start" in server.log_text() or "damaged" in server.log_text() \
        or "malformed" in server.log_text()
