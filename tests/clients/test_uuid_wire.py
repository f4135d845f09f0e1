"""uuid over the wire with real drivers: psycopg 3 reads and sends uuid in
text and in binary (uuid_send's 16 bytes) as Python's uuid.UUID, asyncpg
(binary only) likewise (not uuid[]: asyncpg looks that type up with
WITH RECURSIVE, which sluice does not run yet); a table keyed by uuid, gen_random_uuid(), and a
malformed binary uuid parameter refused with 22P03; and character(n) in
binary (bpcharsend's padded text, read back as it is).

The expected values are Python's own uuid module's, not sluice's.
"""

import asyncio
import uuid

import asyncpg
import psycopg
import pytest

U1 = uuid.UUID("a0eebc99-9c0b-4ef8-bb6d-6bb9bd380a11")
U2 = uuid.UUID("00000000-0000-0000-0000-000000000001")


@pytest.fixture(scope="module")
def srv(sluiced_module):
    return sluiced_module()


def connect(srv):
    return psycopg.connect(host="127.0.0.1", port=srv.port, user="sluice", dbname="sluice",
                           sslmode="disable", connect_timeout=10, autocommit=True)


@pytest.mark.parametrize("binary", [False, True])
@pytest.mark.parametrize("fmt", ["%t", "%b"])
def test_psycopg_uuid_round_trip(srv, binary, fmt):
    with connect(srv) as conn:
        cur = conn.cursor(binary=binary)
        got = cur.execute(f"SELECT {fmt}::uuid", (U1,)).fetchone()[0]
        assert got == U1 and isinstance(got, uuid.UUID)
        cur.execute("SELECT %s::uuid < %s::uuid, %s::uuid = %s", (U2, U1, U1, str(U1).upper()))
        assert cur.fetchone() == (True, True)
        cur.execute("SELECT ARRAY[%s::uuid, NULL]", (U1,))
        assert cur.fetchone()[0] == [U1, None]


def test_psycopg_uuid_table_binary(srv):
    with connect(srv) as conn:
        conn.execute("CREATE TABLE wire_u (id uuid PRIMARY KEY, n int)")
        try:
            ids = [uuid.uuid4() for _ in range(20)]
            with conn.cursor(binary=True) as cur:
                for i, u in enumerate(ids):
                    cur.execute("INSERT INTO wire_u VALUES (%b, %b)", (u, i))
                got = cur.execute("SELECT id, n FROM wire_u ORDER BY id").fetchall()
            # uuid_cmp is a byte-wise comparison: Python's bytes order
            assert got == sorted(((u, i) for i, u in enumerate(ids)), key=lambda r: r[0].bytes)
            with conn.cursor(binary=True) as cur:
                cur.execute("INSERT INTO wire_u SELECT gen_random_uuid(), 100 FROM generate_series(1, 5)")
                rows = cur.execute("SELECT id FROM wire_u WHERE n = 100").fetchall()
            assert len({r[0] for r in rows}) == 5
            assert all(r[0].version == 4 and r[0].variant == uuid.RFC_4122 for r in rows)
        finally:
            conn.execute("DROP TABLE wire_u")


def test_psycopg_uuid_bad_binary_parameter(srv):
    with connect(srv) as conn:
        # 15 bytes where uuid_recv wants 16
        res = conn.pgconn.exec_params(b"SELECT $1::uuid", [b"\x00" * 15], [2950], [1], 1)
        assert res.status == psycopg.pq.ExecStatus.FATAL_ERROR
        assert res.error_field(psycopg.pq.DiagnosticField.SQLSTATE) == b"22P03"
        # and the session goes on
        assert conn.execute("SELECT 1").fetchone() == (1,)


def test_asyncpg_uuid_binary(srv):
    async def run():
        conn = await asyncpg.connect(host="127.0.0.1", port=srv.port, user="sluice",
                                     database="sluice", ssl=False, timeout=10)
        try:
            assert await conn.fetchval("SELECT $1::uuid", U1) == U1
            assert await conn.fetchval("SELECT 'A0EEBC99-9C0B-4EF8-BB6D-6BB9BD380A11'::uuid") == U1
            got = await conn.fetchval("SELECT gen_random_uuid()")
            assert isinstance(got, uuid.UUID) and got.version == 4
        finally:
            await conn.close()
    asyncio.run(run())


def test_psycopg_bpchar_binary(srv):
    with connect(srv) as conn:
        for binary in (False, True):
            cur = conn.cursor(binary=binary)
            got = cur.execute("SELECT 'ab'::char(4), %b::char(3), 'x'::char", ("q",)).fetchone()
            assert got == ("ab  ", "q  ", "x"), (binary, got)
