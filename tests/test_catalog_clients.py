"""Drivers' catalog queries against sluice's pg_catalog emulation.

psycopg 3 looks types up with TypeInfo.fetch (pg_type, to_regtype(),
oid::regtype::text) and adapts values with what it found.  asyncpg's
set_type_codec knows pg_catalog's built-in type names itself and looks any
other name up with its TYPE_BY_NAME query (pg_type joined with
pg_namespace); its full introspection (WITH RECURSIVE over pg_type) runs
only for type oids it has no codec for, which sluice never sends.  Both
drivers also read sys.* and pg_catalog relations like any other.
"""

import asyncio
import json

import asyncpg
import psycopg
import pytest
from psycopg.types import TypeInfo
from psycopg.types.json import Jsonb


@pytest.fixture(scope="module")
def server(sluiced_module):
    s = sluiced_module()
    with psycopg.connect(s.dsn, autocommit=True, connect_timeout=10) as c:
        c.execute("CREATE TABLE docs (id INT PRIMARY KEY, body JSONB, tags TEXT)")
        c.execute("CREATE STREAM events (kind TEXT, n BIGINT)")
        c.execute("INSERT INTO events VALUES ('a', 1), ('b', 2)")
    return s


@pytest.mark.parametrize("name,oid,array_oid,regtype", [
    ("jsonb", 3802, 3807, "jsonb"),
    ("int4", 23, 1007, "integer"),
    ("integer", 23, 1007, "integer"),
    ("text", 25, 1009, "text"),
    ("numeric", 1700, 1231, "numeric"),
    ("timestamptz", 1184, 1185, "timestamp with time zone"),
    ("character varying", 1043, 1015, "character varying"),
])
def test_psycopg_typeinfo_fetch(server, name, oid, array_oid, regtype):
    with psycopg.connect(server.dsn, autocommit=True, connect_timeout=10) as c:
        info = TypeInfo.fetch(c, name)
        assert info is not None
        assert (info.oid, info.array_oid, info.regtype, info.delimiter) == \
            (oid, array_oid, regtype, ",")


def test_psycopg_typeinfo_unknown_type_is_none(server):
    with psycopg.connect(server.dsn, autocommit=True, connect_timeout=10) as c:
        assert TypeInfo.fetch(c, "no_such_type") is None


def test_psycopg_adapts_with_fetched_info(server):
    with psycopg.connect(server.dsn, autocommit=True, connect_timeout=10) as c:
        info = TypeInfo.fetch(c, "jsonb")
        info.register(c)
        c.execute("INSERT INTO docs VALUES (%s, %s, %s)", (1, Jsonb({"k": [1, 2]}), "x"))
        for binary in (False, True):
            with c.cursor(binary=binary) as cur:
                cur.execute("SELECT body FROM docs WHERE id = %s", (1,))
                assert cur.fetchone()[0] == {"k": [1, 2]}
                # the result's type, as psycopg describes it, is what pg_type says
                assert cur.description[0].type_code == info.oid


def test_asyncpg_set_type_codec_on_jsonb(server):
    async def run():
        conn = await asyncpg.connect(host=server.host, port=server.port, user="sluice",
                                     database="sluice", timeout=10)
        try:
            await conn.set_type_codec("jsonb", encoder=json.dumps, decoder=json.loads,
                                      schema="pg_catalog")
            await conn.execute("INSERT INTO docs VALUES (2, $1, 'y')", {"a": {"b": None}})
            got = await conn.fetchval("SELECT body FROM docs WHERE id = 2")
            assert got == {"a": {"b": None}}
            # a name outside pg_catalog: asyncpg runs its TYPE_BY_NAME query,
            # which finds nothing in schema public
            with pytest.raises(ValueError, match="unknown type: public.jsonb"):
                await conn.set_type_codec("jsonb", encoder=json.dumps, decoder=json.loads,
                                          schema="public")
            # the same query by hand, for pg_catalog: pg_type x pg_namespace
            row = await conn.fetchrow(
                "SELECT t.oid, t.typelem AS elemtype, t.typtype AS kind "
                "FROM pg_catalog.pg_type AS t INNER JOIN pg_catalog.pg_namespace AS ns "
                "ON (ns.oid = t.typnamespace) WHERE t.typname = $1 AND ns.nspname = $2",
                "jsonb", "pg_catalog")
            assert dict(row) == {"oid": 3802, "elemtype": 0, "kind": "b"}
        finally:
            await conn.close()
    asyncio.run(run())


def test_asyncpg_reads_system_tables(server):
    async def run():
        conn = await asyncpg.connect(host=server.host, port=server.port, user="sluice",
                                     database="sluice", timeout=10)
        try:
            rows = await conn.fetch(
                "SELECT s.name, s.row_count, c.relkind FROM sys.streams s "
                "JOIN pg_class c ON c.oid = s.oid ORDER BY 1")
            assert [tuple(r) for r in rows] == [("events", 2, "r")]
            me = await conn.fetchrow(
                "SELECT usename, state FROM sys.connections WHERE pid = pg_backend_pid()")
            assert tuple(me) == ("sluice", "active")
            cols = await conn.fetch(
                "SELECT column_name, data_type FROM information_schema.columns "
                "WHERE table_name = $1 ORDER BY ordinal_position", "docs")
            assert [tuple(r) for r in cols] == [("id", "integer"), ("body", "jsonb"),
                                                ("tags", "text")]
        finally:
            await conn.close()
    asyncio.run(run())


def test_sys_connections_shows_each_session(server):
    with psycopg.connect(server.dsn, autocommit=True, connect_timeout=10,
                         application_name="catalog-test") as c1, \
            psycopg.connect(server.dsn, autocommit=True, connect_timeout=10) as c2:
        rows = c1.execute("SELECT application_name, usename, datname, client_addr, state "
                          "FROM sys.connections ORDER BY application_name").fetchall()
        assert ("catalog-test", "sluice", "sluice", "127.0.0.1", "active") in rows
        others = [r for r in rows if r[0] != "catalog-test"]
        assert any(r[4] == "idle" for r in others), rows
        assert c2.execute("SELECT count(*) FROM sys.connections").fetchone()[0] >= 2
