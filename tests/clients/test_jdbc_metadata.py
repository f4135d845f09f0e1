"""pgJDBC's DatabaseMetaData (getTables, getColumns) lists
sluice's streams, tables, result tables and system tables with their
columns and types (tests/clients/jdbc/.../JdbcMetadata.java).

pgJDBC answers these from its own catalog queries: pg_class x pg_namespace
with 'pg_class'::regclass and pg_description, pg_attribute x pg_type with
row_number() OVER (PARTITION BY ...) for ordinal positions.  (getPrimaryKeys
needs information_schema._pg_expandarray and record field access: not yet.)
"""

import psycopg
import pytest

from drivers import java_main


@pytest.fixture(scope="module")
def metadata(sluiced_module):
    server = sluiced_module()
    with psycopg.connect(server.dsn, autocommit=True, connect_timeout=10) as c:
        c.execute("CREATE TABLE users (user_id BIGINT PRIMARY KEY, "
                  "country VARCHAR(2) NOT NULL, score NUMERIC(10,2))")
        c.execute("CREATE STREAM clicks (user_id BIGINT, url TEXT, ts TIMESTAMP, "
                  "WATERMARK FOR ts AS ts - INTERVAL '10 seconds')")
        c.execute("CREATE CONTINUOUS QUERY clicks_per_user WITH (trigger = '1 hour', "
                  "output_mode = 'update') AS SELECT user_id, count(*) AS n "
                  "FROM clicks GROUP BY user_id")
    rows = [line.split("|") for line in java_main("JdbcMetadata", server.port).splitlines()]
    return rows


def test_get_tables_lists_every_kind(metadata):
    tables = {(r[1], r[2]): r[3] for r in metadata if r[0] == "table"}
    assert tables[("public", "users")] == "TABLE"
    assert tables[("public", "clicks")] == "TABLE"
    assert tables[("public", "clicks_per_user")] == "MATERIALIZED VIEW"
    assert tables[("public", "users_pkey")] == "INDEX"
    for t in ("streams", "tables", "sinks", "queries", "state", "settings", "connections"):
        assert tables[("sys", t)] == "VIEW", t
    system = [int(r[1]) for r in metadata if r[0] == "system_tables"]
    assert system and system[0] >= 10


def test_get_columns_of_each_kind(metadata):
    cols = [r[1:] for r in metadata if r[0] == "column"]
    # TABLE, NAME, TYPE_NAME, DATA_TYPE (java.sql.Types), SIZE, DIGITS, NULLABLE, ORDINAL
    assert cols == [
        ["public.users", "user_id", "int8", "-5", "19", "0", "0", "1"],
        ["public.users", "country", "varchar", "12", "2", "0", "0", "2"],
        ["public.users", "score", "numeric", "2", "10", "2", "1", "3"],
        ["public.clicks", "user_id", "int8", "-5", "19", "0", "1", "1"],
        ["public.clicks", "url", "text", "12", "2147483647", "0", "1", "2"],
        ["public.clicks", "ts", "timestamp", "93", "29", "6", "1", "3"],
        ["public.clicks_per_user", "user_id", "int8", "-5", "19", "0", "1", "1"],
        ["public.clicks_per_user", "n", "int8", "-5", "19", "0", "1", "2"],
        ["sys.connections", "pid", "int4", "4", "10", "0", "1", "1"],
        ["sys.connections", "usename", "text", "12", "2147483647", "0", "1", "2"],
        ["sys.connections", "datname", "text", "12", "2147483647", "0", "1", "3"],
        ["sys.connections", "application_name", "text", "12", "2147483647", "0", "1", "4"],
        ["sys.connections", "client_addr", "text", "12", "2147483647", "0", "1", "5"],
        ["sys.connections", "client_port", "int4", "4", "10", "0", "1", "6"],
        ["sys.connections", "connected_at", "timestamptz", "93", "35", "6", "1", "7"],
        ["sys.connections", "state", "text", "12", "2147483647", "0", "1", "8"],
        ["sys.connections", "query", "text", "12", "2147483647", "0", "1", "9"],
        ["sys.connections", "query_start", "timestamptz", "93", "35", "6", "1", "10"],
    ]

