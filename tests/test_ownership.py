"""Ownership on every path that changes an object (issue 19, item 5).

The plain LOGIN role `u` tries each statement that changes, replaces or
drops an object against objects of the superuser and of another plain role
`v`: CREATE OR REPLACE CONTINUOUS QUERY (with and without reset), ALTER
CONTINUOUS QUERY PAUSE / RESUME, DROP of each kind, GRANT / REVOKE, DROP ...
CASCADE of a relation of its own that others' continuous queries use, and
writes into a continuous query's result table.  Each is refused with 42501
(or, for the result table, with the refusal every role gets) and leaves the
object as it was.  The owners themselves, and the superuser, still may.

docs/sql-reference.md ("Roles and privileges") describes the rules.
"""

import time

import psycopg
import pytest

from test_roles import connect_as, su
from test_subscribe import start_stream, take, wait_subscribed

WAIT = 30


def error_of(fn):
    """(SQLSTATE, primary message) fn() fails with; (None, None) if it succeeds."""
    try:
        fn()
    except psycopg.Error as e:
        return e.sqlstate, str(e).splitlines()[0]
    return None, None


def query_row(conn, name):
    return conn.execute("SELECT oid, sql, status FROM sys.queries WHERE name = %s",
                        (name,)).fetchone()


def wait_for(fetch, done):
    """fetch() until done(its value) or WAIT seconds; the last value."""
    deadline = time.monotonic() + WAIT
    while True:
        got = fetch()
        if done(got) or time.monotonic() > deadline:
            return got
        time.sleep(0.1)


def wait_rows(conn, sql, want):
    return wait_for(lambda: conn.execute(sql).fetchall(), lambda got: got == want)


@pytest.fixture
def setup(server):
    """The superuser's pipeline src -> sq INTO gold, its result-table query sr;
    v's query vq over src; u with SELECT on src (so that only ownership can
    stop it)."""
    with su(server) as admin:
        admin.execute("CREATE ROLE u LOGIN PASSWORD 'u-secret'")
        admin.execute("CREATE ROLE v LOGIN PASSWORD 'v-secret'")
        admin.execute("CREATE STREAM src (k INT, x INT)")
        admin.execute("CREATE STREAM gold (k INT, n BIGINT)")
        admin.execute("CREATE TABLE dim (k INT PRIMARY KEY, name TEXT)")
        admin.execute("CREATE CONTINUOUS QUERY sq INTO gold WITH (trigger = '0', append_updates = true) AS "
                      "SELECT k, count(*) AS n FROM src GROUP BY k")
        admin.execute("CREATE CONTINUOUS QUERY sr WITH (trigger = '0') AS "
                      "SELECT k, count(*) AS n FROM src GROUP BY k")
        admin.execute("GRANT SELECT ON src TO u, v")
        admin.execute("GRANT ALL ON gold TO u")
        admin.execute("GRANT ALL ON sr TO u")
        admin.execute("GRANT ALL ON dim TO u")
        with connect_as(server, "v") as v:
            v.execute("CREATE CONTINUOUS QUERY vq WITH (trigger = '0') AS "
                      "SELECT k, count(*) AS n FROM src GROUP BY k")
            v.execute("CREATE STREAM vs (k INT)")
            v.execute("GRANT ALL ON vs TO u")
    return server


REPLACE = ("CREATE OR REPLACE CONTINUOUS QUERY {name} WITH (trigger = '0'{reset}) AS "
           "SELECT k, count(*) AS n FROM src GROUP BY k")


@pytest.mark.parametrize("name, owner", [("sq", "sluice"), ("sr", "sluice"), ("vq", "v")])
@pytest.mark.parametrize("reset", [", reset = true", ""])
def test_create_or_replace_needs_the_owner(setup, name, owner, reset):
    server = setup
    with su(server) as admin, connect_as(server, "u") as u:
        before = query_row(admin, name)
        code, msg = error_of(lambda: u.execute(REPLACE.format(name=name, reset=reset)))
        assert (code, msg) == ("42501", f"must be owner of continuous query {name}")
        # the query is the same relation, with the same definition, running
        time.sleep(0.3)
        assert query_row(admin, name) == before
        assert admin.execute("SELECT r.rolname FROM pg_class c JOIN pg_roles r "
                             "ON r.oid = c.relowner WHERE c.relname = %s",
                             (name,)).fetchone() == (owner,)
    # the superuser's pipeline still writes INTO gold
    with su(server) as admin:
        admin.execute("INSERT INTO src VALUES (1, 1), (1, 2), (2, 3)")
        assert wait_rows(admin, "SELECT k, max(n) FROM gold GROUP BY k ORDER BY k",
                         [(1, 2), (2, 1)]) == [(1, 2), (2, 1)]


def test_owner_and_superuser_may_replace(setup):
    server = setup
    with connect_as(server, "v") as v:
        v.execute(REPLACE.format(name="vq", reset=", reset = true"))
    with su(server) as admin:
        admin.execute(REPLACE.format(name="vq", reset=""))
        # the superuser's replacement keeps v as the owner
        assert admin.execute("SELECT r.rolname FROM pg_class c JOIN pg_roles r "
                             "ON r.oid = c.relowner WHERE c.relname = 'vq'").fetchone() == \
            ("v",)


@pytest.mark.parametrize("sql, message", [
    ("DROP CONTINUOUS QUERY sq", "must be owner of continuous query sq"),
    ("DROP CONTINUOUS QUERY vq", "must be owner of continuous query vq"),
    ("ALTER CONTINUOUS QUERY sq PAUSE", "must be owner of continuous query sq"),
    ("ALTER CONTINUOUS QUERY vq PAUSE", "must be owner of continuous query vq"),
    ("ALTER CONTINUOUS QUERY vq RESUME", "must be owner of continuous query vq"),
    ("DROP STREAM src CASCADE", "must be owner of stream src"),
    ("DROP STREAM vs", "must be owner of stream vs"),
    ("DROP TABLE dim", "must be owner of table dim"),
    ("GRANT SELECT ON sr TO u", "permission denied for continuous query sr"),
    ("REVOKE SELECT ON src FROM v", "permission denied for stream src"),
    ("GRANT ALL ON vs TO PUBLIC", "permission denied for stream vs"),
])
def test_changes_of_others_objects_are_refused(setup, sql, message):
    server = setup
    with su(server) as admin, connect_as(server, "u") as u:
        before = admin.execute("SELECT name, status FROM sys.queries ORDER BY name").fetchall()
        assert error_of(lambda: u.execute(sql)) == ("42501", message)
        assert admin.execute("SELECT name, status FROM sys.queries "
                             "ORDER BY name").fetchall() == before
        assert admin.execute("SELECT count(*) FROM pg_class WHERE relname IN "
                             "('src', 'vs', 'dim', 'sr')").fetchone() == (4,)


@pytest.mark.parametrize("sql", [
    "INSERT INTO sr VALUES (1, 100)",
    "UPDATE sr SET n = 0",
    "DELETE FROM sr",
])
def test_a_result_table_takes_no_writes_even_with_grants(setup, sql):
    server = setup
    with connect_as(server, "u") as u:
        code, _ = error_of(lambda: u.execute(sql))
        assert code is not None


def test_drop_cascade_needs_the_owner_of_each_dependent_query(setup):
    server = setup
    with su(server) as admin, connect_as(server, "u") as u, connect_as(server, "v") as v:
        u.execute("CREATE STREAM us (k INT)")
        u.execute("CREATE TABLE ut (k INT PRIMARY KEY)")
        u.execute("GRANT SELECT ON us TO v")
        u.execute("GRANT SELECT ON ut TO PUBLIC")
        v.execute("CREATE CONTINUOUS QUERY vus WITH (trigger = '0') AS "
                  "SELECT k, count(*) AS n FROM us GROUP BY k")
        admin.execute("CREATE STREAM clicks (k INT)")
        admin.execute("CREATE CONTINUOUS QUERY joined WITH (trigger = '0') AS "
                      "SELECT clicks.k FROM clicks JOIN ut ON clicks.k = ut.k")
        for sql, query, rel in (("DROP STREAM us CASCADE", "vus", "us"),
                                ("DROP TABLE ut CASCADE", "joined", "ut")):
            with pytest.raises(psycopg.errors.InsufficientPrivilege) as e:
                u.execute(sql)
            assert str(e.value).splitlines()[0] == f"must be owner of continuous query {query}"
            assert e.value.diag.message_detail == (
                f"DROP ... CASCADE would drop continuous query {query}, which depends on "
                f"{rel} and belongs to another role.")
            assert e.value.diag.message_hint == "Its owner or a superuser must drop it first."
        assert admin.execute("SELECT name FROM sys.queries WHERE name IN ('vus', 'joined') "
                             "ORDER BY name").fetchall() == [("joined",), ("vus",)]
        # a query of u's own goes with CASCADE; once v dropped its own, u may
        u.execute("CREATE CONTINUOUS QUERY uus WITH (trigger = '0') AS "
                  "SELECT k, count(*) AS n FROM us GROUP BY k")
        v.execute("DROP CONTINUOUS QUERY vus")
        u.execute("DROP STREAM us CASCADE")
        assert admin.execute("SELECT count(*) FROM sys.queries WHERE name IN "
                             "('uus', 'vus')").fetchone() == (0,)
        # the superuser drops others' queries with CASCADE
        admin.execute("DROP TABLE ut CASCADE")
        assert admin.execute("SELECT count(*) FROM sys.queries "
                             "WHERE name = 'joined'").fetchone() == (0,)


def wait_status(conn, name, status):
    return wait_for(lambda: conn.execute("SELECT status, last_error FROM sys.queries "
                                         "WHERE name = %s", (name,)).fetchone(),
                    lambda row: row[0] == status)


@pytest.mark.parametrize("revoke, denied", [
    ("REVOKE SELECT ON src FROM u", "permission denied for stream src"),
    ("REVOKE SELECT ON dim FROM u", "permission denied for table dim"),
    ("REVOKE INSERT ON gold FROM u", "permission denied for stream gold"),
])
def test_a_revoke_stops_the_grantees_continuous_query(setup, revoke, denied):
    # A continuous query runs as its owner: once the owner loses a privilege
    # it needs, its next batch fails instead of reading (or writing) on.
    server = setup
    with su(server) as admin, connect_as(server, "u") as u:
        admin.execute("INSERT INTO dim VALUES (1, 'one'), (2, 'two')")
        u.execute("CREATE CONTINUOUS QUERY uq INTO gold WITH (trigger = '0', append_updates = true) AS "
                  "SELECT src.k, count(*) AS n FROM src JOIN dim ON src.k = dim.k "
                  "GROUP BY src.k")
        u.execute("CREATE CONTINUOUS QUERY ur WITH (trigger = '0') AS "
                  "SELECT src.k, dim.name FROM src JOIN dim ON src.k = dim.k")
        admin.execute("INSERT INTO src VALUES (1, 1)")
        assert wait_rows(u, "SELECT k, name FROM ur", [(1, "one")]) == [(1, "one")]
        admin.execute(revoke)
        admin.execute("INSERT INTO src VALUES (2, 2)")
        target = "uq" if "gold" in revoke else "ur"
        status, error = wait_status(admin, target, "failed")
        assert (status, error) == ("failed", denied)
        if target == "ur":
            # nothing read after the revoke reached u's result table
            assert u.execute("SELECT k, name FROM ur ORDER BY k").fetchall() == [(1, "one")]
        # the superuser's queries over the same relations go on
        assert wait_rows(admin, "SELECT k, n FROM sr ORDER BY k",
                         [(1, 1), (2, 1)]) == [(1, 1), (2, 1)]
        # granted again, the owner replaces the query and it runs on
        admin.execute(revoke.replace("REVOKE", "GRANT").replace("FROM", "TO"))
        sql = admin.execute("SELECT sql FROM sys.queries WHERE name = %s",
                            (target,)).fetchone()[0]
        u.execute(sql.replace("CREATE CONTINUOUS QUERY", "CREATE OR REPLACE CONTINUOUS QUERY",
                              1))
        assert wait_status(admin, target, "running")[0] == "running"


def test_resume_after_the_privilege_is_granted_back(setup):
    # A query that failed because its owner lost a privilege runs on at
    # RESUME once the privilege is back -- from where it stopped, the rows
    # that came meanwhile included; RESUME before that is refused (42501).
    server = setup
    with su(server) as admin, connect_as(server, "u") as u:
        admin.execute("INSERT INTO dim VALUES (1, 'one'), (2, 'two')")
        u.execute("CREATE CONTINUOUS QUERY ur WITH (trigger = '0') AS "
                  "SELECT src.k, dim.name FROM src JOIN dim ON src.k = dim.k")
        admin.execute("INSERT INTO src VALUES (1, 1)")
        assert wait_rows(u, "SELECT k, name FROM ur", [(1, "one")]) == [(1, "one")]
        admin.execute("REVOKE SELECT ON dim FROM u")
        admin.execute("INSERT INTO src VALUES (2, 2)")
        assert wait_status(admin, "ur", "failed") == \
            ("failed", "permission denied for table dim")
        with pytest.raises(psycopg.errors.InsufficientPrivilege):
            u.execute("ALTER CONTINUOUS QUERY ur RESUME")
        assert query_row(admin, "ur")[2] == "failed"
        admin.execute("GRANT SELECT ON dim TO u")
        u.execute("ALTER CONTINUOUS QUERY ur RESUME")
        assert wait_status(admin, "ur", "running") == ("running", None)
        assert wait_rows(u, "SELECT k, name FROM ur ORDER BY k",
                         [(1, "one"), (2, "two")]) == [(1, "one"), (2, "two")]


def test_dropping_a_stream_respects_queries_on_its_dead_letters(setup):
    # A stream's dead-letter stream goes with it: a continuous query over the
    # dead letters keeps the stream (2BP01) unless CASCADE, which drops the
    # query only for its owner or a superuser.
    server = setup
    with su(server) as admin, connect_as(server, "v") as v:
        admin.execute("CREATE STREAM ks (a INT) WITH (connector = 'kafka', topic = 't', "
                      "bootstrap_servers = '127.0.0.1:9', format = 'json')")
        admin.execute("GRANT SELECT ON ks_dead_letters TO v")
        v.execute("CREATE CONTINUOUS QUERY dl WITH (trigger = '0') AS "
                  "SELECT count(*) AS n FROM ks_dead_letters")
        with pytest.raises(psycopg.errors.DependentObjectsStillExist) as e:
            admin.execute("DROP STREAM ks")
        assert e.value.diag.message_detail == \
            "continuous query dl depends on stream ks_dead_letters"
        assert admin.execute("SELECT count(*) FROM pg_class WHERE relname IN "
                             "('ks', 'ks_dead_letters')").fetchone() == (2,)
        admin.execute("DROP STREAM ks CASCADE")
        assert admin.execute("SELECT count(*) FROM sys.queries "
                             "WHERE name = 'dl'").fetchone() == (0,)


def test_late_rows_into_anothers_stream_needs_insert(setup):
    server = setup
    with su(server) as admin, connect_as(server, "u") as u:
        admin.execute("CREATE STREAM ev (k INT, ts TIMESTAMP, "
                      "WATERMARK FOR ts AS ts - INTERVAL '1 second')")
        admin.execute("CREATE STREAM late_ev (k INT, ts TIMESTAMP)")
        admin.execute("GRANT SELECT ON ev TO u")
        create = ("CREATE CONTINUOUS QUERY lq WITH (trigger = '0', late_rows = 'late_ev') AS "
                  "SELECT window_start, count(*) AS n FROM ev "
                  "GROUP BY WINDOW(ts, INTERVAL '1 minute')")
        assert error_of(lambda: u.execute(create)) == \
            ("42501", "permission denied for stream late_ev")
        admin.execute("GRANT INSERT ON late_ev TO u")
        u.execute(create)
        admin.execute("INSERT INTO ev VALUES (1, '2020-01-01 10:00:00'), "
                      "(2, '2020-01-01 12:00:00')")
        time.sleep(0.5)
        # once the grant is gone, the query writes no more late rows there
        admin.execute("REVOKE INSERT ON late_ev FROM u")
        admin.execute("INSERT INTO ev VALUES (3, '2020-01-01 09:00:00')")
        assert wait_status(admin, "lq", "failed") == \
            ("failed", "permission denied for stream late_ev")
        assert admin.execute("SELECT count(*) FROM late_ev").fetchone() == (0,)


def test_a_stream_cannot_claim_to_be_anothers_dead_letters(setup):
    # Such a stream would be dropped with the other (DROP STREAM takes its
    # dead-letter stream along): dead_letters_of is the server's to set.
    server = setup
    with su(server) as admin, connect_as(server, "u") as u, connect_as(server, "v") as v:
        u.execute("CREATE STREAM us (a INT)")
        with pytest.raises(psycopg.errors.InvalidParameterValue) as e:
            v.execute("CREATE STREAM us_dead_letters (a INT) WITH (dead_letters_of = 'us')")
        assert str(e.value).splitlines()[0] == 'option "dead_letters_of" is reserved'
        u.execute("DROP STREAM us")
        assert admin.execute("SELECT count(*) FROM pg_class WHERE relname LIKE "
                             "'us%'").fetchone() == (0,)


def test_a_revoke_ends_the_grantees_subscribe(setup):
    server = setup
    with su(server) as admin:
        admin.execute("GRANT SELECT ON sr TO u")
        conn, rows, ended, thread = start_stream(
            f"host={server.host} port={server.port} user=u dbname=sluice", "SUBSCRIBE sr")
        try:
            wait_subscribed(server)
            admin.execute("INSERT INTO src VALUES (7, 1)")
            assert [r[2:] for r in take(rows, 1)] == [(7, 1)]
            admin.execute("REVOKE SELECT ON sr FROM u")
            admin.execute("INSERT INTO src VALUES (7, 2)")
            thread.join(WAIT)
            assert not thread.is_alive()
            assert rows.empty()
            assert isinstance(ended[0], psycopg.errors.InsufficientPrivilege)
            assert str(ended[0]).splitlines()[0] == \
                "permission denied for continuous query sr"
        finally:
            conn.close()
