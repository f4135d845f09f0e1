"""asyncpg against sluiced: every authentication method over plain TCP and
TLS (verify-full), prepared statements with binary parameters and results of
every supported type, a cursor that fetches through Execute row limits
(PortalSuspended), and typed errors.

asyncpg always uses the extended protocol and the binary format.  It looks
types up in pg_catalog only for types it has no built-in codec for; every
type used here is built in, so no introspection query is sent (pg_catalog
is tested in tests/test_catalog_clients.py).
"""

import asyncio
import ssl
from decimal import Decimal

import asyncpg
import pytest

from matrix import CASE_IDS, CASES, client_server  # noqa: F401 (fixture)
from conftest import USERS

TYPED = [
    ("int2", 7), ("int4", -42), ("int8", 9_000_000_000), ("float4", 1.5),
    ("float8", 2.25), ("bool", True), ("text", "héllo"), ("varchar", "v"),
    ("numeric", Decimal("12.345")), ("numeric", Decimal("-0.0001")),
    ("numeric", Decimal("123456789012345678901234567890.5")),
]


async def connect(server, user, transport, password=None):
    pw = USERS[user][1] if password is None else password
    if transport == "tls":
        ctx = ssl.create_default_context(cafile=str(server.certs.ca))
        tls = ctx
    else:
        tls = False
    return await asyncpg.connect(host="127.0.0.1", port=server.port, user=user,
                                 password=pw or None, database="sluice", ssl=tls,
                                 timeout=10, statement_cache_size=100)


async def exercise(server, user, transport):
    conn = await connect(server, user, transport)
    try:
        assert await conn.fetchval("SELECT 1") == 1
        for typ, value in TYPED:
            assert await conn.fetchval(f"SELECT $1::{typ}", value) == value, typ
        # A prepared statement run several times with different parameters.
        stmt = await conn.prepare("SELECT $1::int4 + 1 AS n, 'x' || $2::text AS s")
        assert [a.name for a in stmt.get_attributes()] == ["n", "s"]
        for i in range(5):
            row = await stmt.fetchrow(i, str(i))
            assert (row["n"], row["s"]) == (i + 1, f"x{i}")
        # A cursor inside a transaction fetches through Execute with a row
        # limit: PortalSuspended, then the rest.
        async with conn.transaction():
            rows = [r async for r in conn.cursor("SELECT $1::int8 * 2", 21, prefetch=1)]
            assert [r[0] for r in rows] == [42]
            cur = await conn.cursor("SELECT 'one'::text")
            assert [r[0] for r in await cur.fetch(5)] == ["one"]
        with pytest.raises(asyncpg.exceptions.DivisionByZeroError) as exc:
            await conn.fetchval("SELECT $1::int4 / 0", 1)
        assert exc.value.sqlstate == "22012"
        with pytest.raises(asyncpg.exceptions.PostgresSyntaxError) as exc:
            await conn.fetchval("SELEC 1")
        assert exc.value.sqlstate == "42601"
        assert await conn.fetchval("SELECT $1::int2", 3) == 3
        # A failed transaction block: 25P02 until ROLLBACK.
        tr = conn.transaction()
        await tr.start()
        with pytest.raises(asyncpg.exceptions.DivisionByZeroError):
            await conn.execute("SELECT 1/0")
        with pytest.raises(asyncpg.exceptions.InFailedSQLTransactionError):
            await conn.fetchval("SELECT 1")
        await tr.rollback()
        assert await conn.fetchval("SELECT 2") == 2
    finally:
        await conn.close()


@pytest.mark.parametrize("user,transport", CASES, ids=CASE_IDS)
def test_asyncpg(client_server, user, transport):
    asyncio.run(asyncio.wait_for(exercise(client_server, user, transport), 60))


def test_asyncpg_many_concurrent_connections(client_server):
    async def one(i):
        conn = await connect(client_server, "scram_u", "tls" if i % 2 else "plain")
        try:
            return await conn.fetchval("SELECT $1::int4", i)
        finally:
            await conn.close()

    async def main():
        return await asyncio.gather(*(one(i) for i in range(40)))

    assert asyncio.run(asyncio.wait_for(main(), 120)) == list(range(40))


@pytest.mark.parametrize("user", [u for u in USERS if USERS[u][0] != "trust"])
def test_asyncpg_wrong_password(client_server, user):
    async def main():
        with pytest.raises(asyncpg.exceptions.InvalidPasswordError):
            await connect(client_server, user, "plain", password="wrong")
    asyncio.run(main())
