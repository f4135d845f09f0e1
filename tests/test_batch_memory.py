"""Issue 19, item 10: a continuous query's micro-batch has a memory budget,
the query's batch_memory option (default 1GB).  A batch that grows past it
ends with 53200: the query is `failed` with the error in
sys.queries.last_error, nothing of the batch is committed, the server and
the other queries go on; replaced with a larger budget, it runs the batch.  The query runs as the plain role u."""

import time

import psycopg
import pytest


def wait_status(conn, name, want, timeout=60):
    deadline = time.monotonic() + timeout
    row = None
    while time.monotonic() < deadline:
        row = conn.execute("SELECT status, last_error, last_batch_id FROM sys.queries "
                           "WHERE name = %s", (name,)).fetchone()
        if row is not None and row[0] == want:
            return row
        time.sleep(0.2)
    raise AssertionError(f"{name} did not become {want}: {row}")


def assert_failed_for_batch_memory(conn, name, kb):
    """Waits for query name to fail with 53200 past its batch_memory of kb
    kB, nothing of the batch committed."""
    status, error, last = wait_status(conn, name, "failed")
    assert "53200" in error and f"batch_memory ({kb} kB)" in error, error
    assert last is None
    assert conn.execute(f"SELECT count(*) FROM {name}").fetchone() == (0,)


def connect_as_u(server):
    """Makes the plain role u and a stream s (k bigint, v text) it may read
    and insert into; returns u's connection."""
    with psycopg.connect(server.dsn, autocommit=True) as conn:
        conn.execute("CREATE ROLE u LOGIN PASSWORD 'pw-u'")
        conn.execute("CREATE STREAM s (k bigint, v text)")
        conn.execute("GRANT SELECT, INSERT ON s TO u")
    return psycopg.connect(f"host={server.host} port={server.port} user=u dbname=sluice "
                           "password=pw-u", autocommit=True)


@pytest.mark.timeout(180)
def test_batch_past_batch_memory_fails_the_query_with_53200(sluiced):
    server = sluiced()
    with connect_as_u(server) as u:
        # a wide GROUP BY with string_agg: one batch of 200,000 groups
        u.execute("CREATE CONTINUOUS QUERY big WITH (trigger = '0', batch_memory = '4MB') AS "
                  "SELECT k, string_agg(v, ',') AS vs, count(*) AS n FROM s GROUP BY k")
        # the same, within its budget (the default)
        u.execute("CREATE CONTINUOUS QUERY fine WITH (trigger = '0') AS "
                  "SELECT k % 10 AS k10, count(*) AS n FROM s GROUP BY k % 10")
        u.execute("INSERT INTO s SELECT g, repeat('x', 64) FROM generate_series(1, 200000) g")
        assert_failed_for_batch_memory(u, "big", 4096)
        deadline = time.monotonic() + 60
        while u.execute("SELECT sum(n) FROM fine").fetchone() != (200000,):
            assert time.monotonic() < deadline, "the other query did not go on"
            time.sleep(0.2)
        assert wait_status(u, "fine", "running")[1] is None
        # replaced with a larger budget (same definition), it runs the batch
        u.execute("CREATE OR REPLACE CONTINUOUS QUERY big WITH (trigger = '0', "
                  "batch_memory = '1GB') AS "
                  "SELECT k, string_agg(v, ',') AS vs, count(*) AS n FROM s GROUP BY k")
        deadline = time.monotonic() + 60
        while u.execute("SELECT count(*), sum(n) FROM big").fetchone() != (200000, 200000):
            assert time.monotonic() < deadline, "the replaced query did not run the batch"
            time.sleep(0.2)
        assert wait_status(u, "big", "running")[1] is None
        # a bad value is refused at CREATE
        with pytest.raises(psycopg.Error) as exc:
            u.execute("CREATE CONTINUOUS QUERY bad WITH (batch_memory = '10 parsecs') AS "
                      "SELECT k FROM s")
        assert exc.value.sqlstate == "22023"
        assert u.execute("SELECT 1").fetchone() == (1,)
    assert server.alive()


@pytest.mark.timeout(180)
def test_batch_memory_counts_the_state_write(sluiced):
    """The batch's RocksDB write (state and result rows) counts against
    batch_memory, not only its arenas: 150 groups keyed by a 2,000-byte
    text take about 1.4 MB of arenas and put about 1.2 MB into the write,
    so a 2MB budget that the arenas alone stay under is passed (53200);
    the same query with 4MB runs the batch."""
    server = sluiced()
    with connect_as_u(server) as u:
        u.execute("INSERT INTO s SELECT g, repeat('x', 2000) || g "
                  "FROM generate_series(1, 150) g")
        u.execute("CREATE CONTINUOUS QUERY w WITH (trigger = '0', batch_memory = '2MB') AS "
                  "SELECT v, count(*) AS n FROM s GROUP BY v")
        assert_failed_for_batch_memory(u, "w", 2048)
        u.execute("CREATE OR REPLACE CONTINUOUS QUERY w WITH (trigger = '0', "
                  "batch_memory = '4MB') AS SELECT v, count(*) AS n FROM s GROUP BY v")
        deadline = time.monotonic() + 60
        while u.execute("SELECT count(*), sum(n) FROM w").fetchone() != (150, 150):
            assert time.monotonic() < deadline, "the replaced query did not run the batch"
            time.sleep(0.2)
        assert wait_status(u, "w", "running")[1] is None
    assert server.alive()
