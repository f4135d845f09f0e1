"""What DBeaver and Metabase send through pgJDBC (pinned in
tests/clients/jdbc/pom.xml) when they connect and browse a server
(tests/clients/jdbc/.../ToolIntrospection.java): the driver's
getSQLKeywords (pg_get_keywords() with "word <> ALL ('{...}'::text[])"),
getSchemas, getTables with Metabase's table types, getColumns, getTypeInfo,
and the tools' own SQL (SHOW search_path, pg_database by name as a
parameter, pg_settings, current_schema(), pg_conversion, privilege checks,
relation sizes), and the sync SQL of Metabase's PostgreSQL driver (pg_user,
pg_stat_user_tables, pg_tables / pg_views / pg_matviews with
has_table_privilege, a materialized view's fields, primary keys from
information_schema.table_constraints and key_column_usage, pg_enum).  Its
describe-fields query is not here yet: it calls format('%I.%I', ...),
which sluice refuses (0A000), and its foreign-key query casts to the bare
type char.  Each step's answer is compared with what the test set up.
"""

import psycopg
import pytest

from drivers import java_main


@pytest.fixture(scope="module")
def steps(sluiced_module):
    server = sluiced_module()
    with psycopg.connect(server.dsn, autocommit=True, connect_timeout=10) as c:
        c.execute("CREATE TABLE users (user_id BIGINT PRIMARY KEY, "
                  "country VARCHAR(2) NOT NULL, score NUMERIC(10,2))")
        c.execute("CREATE STREAM clicks (user_id BIGINT, url TEXT, ts TIMESTAMP)")
        c.execute("CREATE CONTINUOUS QUERY per_user WITH (trigger = '1 hour', "
                  "output_mode = 'update') AS SELECT user_id, count(*) AS n "
                  "FROM clicks GROUP BY user_id")
    out = {}
    for line in java_main("ToolIntrospection", server.port).splitlines():
        kind, name, rest = line.split("|", 2)
        out[name] = (kind, rest)
    return out


def ok(steps, name):
    assert name in steps, sorted(steps)
    kind, value = steps[name]
    assert kind == "ok", f"{name}: {value}"
    return value


def test_dbeaver_keywords(steps):
    # the words of pg_get_keywords() that SQL:2003 does not have already
    words = ok(steps, "keywords").split(",")
    assert "stream" in words and "watermark" in words
    assert "select" not in words and "absolute" not in words


def test_dbeaver_connect_queries(steps):
    assert ok(steps, "search_path") == '"$user", public'
    assert ok(steps, "database") == "sluice,6,t"
    assert ok(steps, "standard_conforming_strings") == "on"
    assert ok(steps, "current_schema") == "public,sluice"
    # sluice speaks UTF8 only: no conversions
    assert ok(steps, "encodings") == ""


def test_metadata_calls(steps):
    schemas = ok(steps, "schemas").split(";")
    assert "public" in schemas and "sys" in schemas
    # in the order JDBC gives: TABLE_TYPE, then the name
    assert ok(steps, "tables") == ("per_user,MATERIALIZED VIEW;clicks,TABLE;users,TABLE")
    assert ok(steps, "columns") == "user_id,int8,19,0;country,varchar,2,0;score,numeric,10,1"
    assert ok(steps, "type_info") == "int8,text,numeric,timestamptz,bool"


def test_metabase_driver_sync(steps):
    assert ok(steps, "mb_user") == "1"
    # no row estimates: n_live_tup is NULL
    assert ok(steps, "mb_tables") == ("public,clicks,r,null,null;public,per_user,m,null,null;"
                                      "public,users,r,null,null;public,users_pkey,i,null,null")
    assert ok(steps, "mb_table_privileges") == ("public,clicks,t;public,per_user,t;"
                                                "public,users,t;sys,queries,t")
    assert ok(steps, "mb_matview_fields") == "user_id,int8,0,public,per_user;n,int8,1,public,per_user"
    assert ok(steps, "mb_primary_keys") == "public,users,user_id"
    assert ok(steps, "mb_enums") == ""


def test_metabase_sync_queries(steps):
    assert ok(steps, "schema_privileges") == "public"
    assert ok(steps, "table_privileges") == "clicks;per_user;users"
    assert ok(steps, "table_sizes") == "clicks,t;users,t"
