"""Grafana's PostgreSQL data source against sluiced: the SQL its query
editor sends for the server version and TimescaleDB check, the schema, table
and column pickers (grafana-postgresql-datasource/postgresMetaQuery.ts:
quote_ident, string_to_array over current_setting('search_path'),
generate_series with array_lower / array_upper, parse_ident, subscripts),
and time-series panels whose macros are expanded as Grafana's backend
expands them (pkg/tsdb/grafana-postgresql-datasource/macros.go: $__timeFilter
as col BETWEEN 'from' AND 'to' in RFC 3339 UTC, $__timeGroupAlias as
floor(extract(epoch from col)/N)*N AS "time", $__unixEpochFilter,
$__timeFrom / $__timeTo), run through psycopg as Grafana's pgx runs them
(the extended protocol, no parameters).

The expected rows are computed here from the rows the test inserted.
"""

import re
from datetime import datetime, timedelta, timezone

import psycopg
import pytest

# The query editor's SQL (postgresMetaQuery.ts), with its search_path test
# (whitespace and the order of the schema lists aside).
SCHEMA_CONSTRAINT = """
          quote_ident(table_schema) IN (
          SELECT
            CASE WHEN trim(s[i]) = '"$user"' THEN user ELSE trim(s[i]) END
          FROM
            generate_series(
              array_lower(string_to_array(current_setting('search_path'),','),1),
              array_upper(string_to_array(current_setting('search_path'),','),1)
            ) as i,
            string_to_array(current_setting('search_path'),',') s
          )"""

VERSION = "SELECT current_setting('server_version_num')::int/100 as version"
TIMESCALE = "SELECT extversion FROM pg_extension WHERE extname = 'timescaledb'"
# The schemas the pickers leave out (TimescaleDB's and the system's).
HIDDEN = ("'information_schema', 'pg_catalog', '_timescaledb_cache', '_timescaledb_catalog', "
          "'_timescaledb_internal', '_timescaledb_config', 'timescaledb_information', "
          "'timescaledb_experimental'")
SCHEMAS = f"""SELECT schema_name AS "name"
    FROM information_schema.schemata
    WHERE schema_name NOT IN ('pg_toast', {HIDDEN})
    ORDER BY schema_name"""
TABLES = f"""SELECT
    CASE WHEN {SCHEMA_CONSTRAINT}
      THEN quote_ident(table_name)
      ELSE quote_ident(table_schema) || '.' || quote_ident(table_name)
    END AS "table"
    FROM information_schema.tables
    WHERE quote_ident(table_schema) NOT IN ({HIDDEN})
    ORDER BY CASE WHEN {SCHEMA_CONSTRAINT} THEN 0 ELSE 1 END, 1"""


def tables_in(schema):
    part = "'" + schema.replace("'", "''") + "'"
    return f"""SELECT quote_ident(table_name) AS "table"
      FROM information_schema.tables
      WHERE quote_ident(table_schema) = {part}
      ORDER BY 1"""


def columns_of(table):
    part = "'" + table.replace("'", "''") + "'"
    return f"""SELECT quote_ident(column_name) AS "column", data_type AS "type"
    FROM information_schema.columns
    WHERE
      CASE WHEN array_length(parse_ident({part}),1) = 2
        THEN quote_ident(table_schema) = (parse_ident({part}))[1]
          AND quote_ident(table_name) = (parse_ident({part}))[2]
        ELSE quote_ident(table_name) = {part}
          AND {SCHEMA_CONSTRAINT}
      END"""


def rfc3339(t):
    """Go's time.RFC3339Nano of a UTC time (no trailing zeros, Z)."""
    s = t.strftime("%Y-%m-%dT%H:%M:%S")
    if t.microsecond:
        s += ("." + f"{t.microsecond:06d}").rstrip("0")
    return s + "Z"


def expand(sql, t_from, t_to):
    """Grafana's macro engine for the macros these panels use."""
    def macro(m):
        name, args = m.group(1), [a.strip() for a in m.group(2).split(",")]
        if name == "__timeFilter":
            return f"{args[0]} BETWEEN '{rfc3339(t_from)}' AND '{rfc3339(t_to)}'"
        if name == "__timeFrom":
            return f"'{rfc3339(t_from)}'"
        if name == "__timeTo":
            return f"'{rfc3339(t_to)}'"
        if name == "__time":
            return f'{args[0]} AS "time"'
        if name in ("__timeGroup", "__timeGroupAlias"):
            secs = int(args[1].strip("'").rstrip("s"))
            g = f"floor(extract(epoch from {args[0]})/{secs})*{secs}"
            return g + (' AS "time"' if name == "__timeGroupAlias" else "")
        if name == "__unixEpochFilter":
            return (f"{args[0]} >= {int(t_from.timestamp())} AND "
                    f"{args[0]} <= {int(t_to.timestamp())}")
        raise ValueError(name)
    return re.sub(r"\$([_a-zA-Z0-9]+)\(([^)]*)\)", macro, sql)


BASE = datetime(2024, 3, 1, 12, 0, 0, tzinfo=timezone.utc)
# (sensor, seconds after BASE, value)
READINGS = [(s, k * 3 + s, float(10 * s + k)) for s in (1, 2) for k in range(20)]


@pytest.fixture(scope="module")
def grafana_server(sluiced_module):
    server = sluiced_module()
    with psycopg.connect(server.dsn, autocommit=True) as c:
        c.execute("CREATE TABLE sensors (sensor_id INT PRIMARY KEY, name VARCHAR(20))")
        c.execute("CREATE STREAM readings (sensor_id INT, ts TIMESTAMPTZ, value DOUBLE PRECISION,"
                  " epoch BIGINT)")
        c.execute("INSERT INTO sensors VALUES (1, 'north'), (2, 'south')")
        with c.cursor() as cur:
            cur.executemany("INSERT INTO readings VALUES (%s, %s, %s, %s)",
                            [(s, BASE + timedelta(seconds=d), v,
                              int((BASE + timedelta(seconds=d)).timestamp()))
                             for s, d, v in READINGS])
    return server


def run(server, sql):
    with psycopg.connect(server.dsn, autocommit=True) as c:
        return c.execute(sql).fetchall()


def test_version_and_timescaledb(grafana_server):
    assert run(grafana_server, VERSION) == [(1500,)]
    assert run(grafana_server, TIMESCALE) == []


def test_schema_and_table_pickers(grafana_server):
    schemas = [r[0] for r in run(grafana_server, SCHEMAS)]
    assert "public" in schemas and "pg_catalog" not in schemas
    tables = [r[0] for r in run(grafana_server, TABLES)]
    # public (on the search path) first and unqualified, then the others qualified
    assert tables[:2] == ["readings", "sensors"]
    assert all("." in t for t in tables[2:]) and "sys.queries" in tables
    assert [r[0] for r in run(grafana_server, tables_in("public"))] == ["readings", "sensors"]


def test_column_picker(grafana_server):
    assert run(grafana_server, columns_of("readings")) == [
        ("sensor_id", "integer"), ("ts", "timestamp with time zone"),
        ("value", "double precision"), ("epoch", "bigint")]
    assert run(grafana_server, columns_of("public.sensors")) == [
        ("sensor_id", "integer"), ("name", "character varying")]
    assert ("name", "text") in run(grafana_server, columns_of("sys.queries"))
    assert run(grafana_server, columns_of("no_such_table")) == []


def test_time_series_panel(grafana_server):
    t_from, t_to = BASE + timedelta(seconds=5), BASE + timedelta(seconds=40)
    sql = expand("""SELECT
  $__timeGroupAlias(ts, '10s'),
  s.name AS metric,
  avg(value) AS value
FROM readings r JOIN sensors s ON s.sensor_id = r.sensor_id
WHERE $__timeFilter(ts)
GROUP BY 1, 2
ORDER BY 1, 2""", t_from, t_to)
    assert "ts BETWEEN '2024-03-01T12:00:05Z' AND '2024-03-01T12:00:40Z'" in sql
    assert 'floor(extract(epoch from ts)/10)*10 AS "time"' in sql
    want = {}
    for s, d, v in READINGS:
        t = BASE + timedelta(seconds=d)
        if t_from <= t <= t_to:
            bucket = int(t.timestamp()) // 10 * 10
            want.setdefault((bucket, "north" if s == 1 else "south"), []).append(v)
    got = run(grafana_server, sql)
    assert [(int(t), m, v) for t, m, v in got] == \
        [(b, m, sum(vs) / len(vs)) for (b, m), vs in sorted(want.items())]


def test_table_panel_with_epoch_filter(grafana_server):
    t_from, t_to = BASE + timedelta(seconds=30), BASE + timedelta(seconds=45)
    sql = expand("""SELECT $__time(ts), sensor_id, value
FROM readings
WHERE $__unixEpochFilter(epoch) AND ts >= $__timeFrom() AND ts <= $__timeTo()
ORDER BY 1, 2""", t_from, t_to)
    want = sorted((BASE + timedelta(seconds=d), s, v) for s, d, v in READINGS
                  if 30 <= d <= 45)
    assert run(grafana_server, sql) == want
