"""Roles and privileges: CREATE / ALTER / DROP ROLE in the catalog, logging in
as a catalog role with SCRAM, md5 and password (hba rules), NOLOGIN, owners,
GRANT / REVOKE on tables, streams and continuous queries' result tables with
42501 before and after, the privilege functions, and a restart.

Clients: psycopg 3 (the statements and most logins), psql, and the raw
protocol (tests/pgwire_raw.py) where the authentication requests themselves
are checked.  docs/sql-reference.md (Roles and privileges) and
docs/operations.md (Authentication) describe what is tested here.
"""

import hashlib
import os
import sqlite3
import subprocess
import time

import psycopg
import pytest

from pgwire_raw import Raw, error_fields, scram_verifier

WAIT = 30


def su(server):
    """A connection as the bootstrap superuser."""
    return psycopg.connect(server.dsn, autocommit=True)


def connect_as(server, user, password=None, dbname="sluice"):
    kw = {"host": server.host, "port": server.port, "user": user, "dbname": dbname,
          "autocommit": True, "connect_timeout": 10, "sslmode": "disable"}
    if password is not None:
        kw["password"] = password
    return psycopg.connect(**kw)


def sqlstate_of(fn):
    """The SQLSTATE fn() fails with (None if it succeeds)."""
    try:
        fn()
    except psycopg.Error as e:
        return e.sqlstate
    return None


def login_error(server, user, password, dbname="sluice"):
    """The SQLSTATE and message a raw login ends with ('ok' when it works),
    and the authentication request codes the server sent."""
    with Raw(server.port) as raw:
        msgs = raw.startup(user=user, database=dbname, password=password)
    codes = [int.from_bytes(b[:4], "big") for k, b in msgs if k == b"R"]
    if msgs and msgs[-1][0] == b"Z":
        return "ok", None, codes
    errs = [error_fields(b) for k, b in msgs if k == b"E"]
    if not errs:
        return "closed", None, codes
    return errs[-1]["C"], errs[-1]["M"], codes


HBA = [
    "host all sluice 127.0.0.1/32 trust",
    "host scramdb all 127.0.0.1/32 scram-sha-256",
    "host md5db all 127.0.0.1/32 md5",
    "host pwdb all 127.0.0.1/32 password",
    "host all all 127.0.0.1/32 scram-sha-256",
]


@pytest.fixture
def auth_server(sluiced):
    config = "\n".join(f"hba = '{r}'" for r in HBA) + "\n"
    config += "user.cfguser.password = 'cfg-secret'\n"
    return sluiced(config=config)


# ------------------------------------------------------------ authentication

def test_fresh_catalog_has_the_bootstrap_superuser(server):
    with su(server) as c:
        assert c.execute("SELECT pg_get_userbyid(10)").fetchone() == ("sluice",)
        assert c.execute("SELECT pg_get_userbyid(12345)").fetchone() == (
            "unknown (OID=12345)",)
        assert c.info.parameter_status("is_superuser") == "on"
        # The bootstrap superuser cannot be dropped or lose SUPERUSER.
        assert sqlstate_of(lambda: c.execute("DROP ROLE sluice")) == "55006"
        c.execute("CREATE ROLE admin2 SUPERUSER LOGIN")
    with connect_as(server, "admin2") as c:
        assert sqlstate_of(lambda: c.execute("DROP ROLE sluice")) == "55006"
        assert sqlstate_of(lambda: c.execute("ALTER ROLE sluice NOSUPERUSER")) == "0A000"


@pytest.mark.parametrize("dbname,method_code", [("scramdb", 10), ("md5db", 5),
                                                ("pwdb", 3)])
def test_catalog_role_logs_in_with_each_method(auth_server, dbname, method_code):
    with su(auth_server) as c:
        c.execute("CREATE ROLE alice LOGIN PASSWORD 'alice pw'")
    state, msg, codes = login_error(auth_server, "alice", "alice pw", dbname)
    assert state == "ok", msg
    assert codes[0] == method_code and codes[-1] == 0
    # A real client too.
    with connect_as(auth_server, "alice", "alice pw", dbname) as c:
        assert c.execute("SELECT 1").fetchone() == (1,)
        assert c.info.parameter_status("is_superuser") == "off"
    # A wrong password is 28P01 with PostgreSQL's message.
    state, msg, _ = login_error(auth_server, "alice", "wrong", dbname)
    assert (state, msg) == ("28P01", 'password authentication failed for user "alice"')
    with pytest.raises(psycopg.OperationalError, match="password authentication failed"):
        connect_as(auth_server, "alice", "wrong", dbname)


def test_psql_logs_in_as_a_catalog_role_with_scram(auth_server):
    with su(auth_server) as c:
        c.execute("CREATE USER carol PASSWORD 'carol pw'")
    env = dict(os.environ, LC_ALL="C", PGPASSWORD="carol pw", PGCONNECT_TIMEOUT="10")
    dsn = f"host=127.0.0.1 port={auth_server.port} user=carol dbname=sluice sslmode=disable"
    res = subprocess.run(["psql", dsn, "-X", "-w", "-At", "-c", "SELECT 40 + 2"],
                         capture_output=True, text=True, env=env, timeout=60,
                         stdin=subprocess.DEVNULL)
    assert res.returncode == 0, res.stderr
    assert res.stdout.strip() == "42"
    env["PGPASSWORD"] = "nope"
    res = subprocess.run(["psql", dsn, "-X", "-w", "-At", "-c", "SELECT 1"],
                         capture_output=True, text=True, env=env, timeout=60,
                         stdin=subprocess.DEVNULL)
    assert res.returncode != 0
    assert 'password authentication failed for user "carol"' in res.stderr


def test_md5_rule_with_a_scram_only_role_runs_scram(auth_server):
    with su(auth_server) as c:
        c.execute(f"CREATE ROLE vera LOGIN PASSWORD '{scram_verifier('vera pw')}'")
    state, msg, codes = login_error(auth_server, "vera", "vera pw", "md5db")
    assert state == "ok", msg
    assert codes == [10, 11, 12, 0]


def test_prehashed_md5_password_is_stored_as_given(auth_server):
    hashed = "md5" + hashlib.md5(b"mpw" + b"mona").hexdigest()
    with su(auth_server) as c:
        c.execute(f"CREATE ROLE mona LOGIN PASSWORD '{hashed}'")
    assert login_error(auth_server, "mona", "mpw", "md5db")[0] == "ok"
    assert login_error(auth_server, "mona", "mpw", "pwdb")[0] == "ok"
    # An md5 hash cannot answer SCRAM, as in PostgreSQL.
    assert login_error(auth_server, "mona", "mpw", "scramdb")[0] == "28P01"


def test_nologin_role_is_refused(auth_server):
    with su(auth_server) as c:
        c.execute("CREATE ROLE nolog PASSWORD 'np'")          # NOLOGIN by default
    state, msg, _ = login_error(auth_server, "nolog", "np")
    assert (state, msg) == ("28000", 'role "nolog" is not permitted to log in')
    with su(auth_server) as c:
        c.execute("ALTER ROLE nolog LOGIN")
    assert login_error(auth_server, "nolog", "np")[0] == "ok"
    with su(auth_server) as c:
        c.execute("ALTER ROLE nolog WITH NOLOGIN")
    with pytest.raises(psycopg.OperationalError, match="not permitted to log in"):
        connect_as(auth_server, "nolog", "np")


def test_alter_role_password_takes_effect(auth_server):
    with su(auth_server) as c:
        c.execute("CREATE ROLE dave LOGIN PASSWORD 'old pw'")
    assert login_error(auth_server, "dave", "old pw")[0] == "ok"
    with su(auth_server) as c:
        c.execute("ALTER ROLE dave PASSWORD 'new pw'")
    for db in ("scramdb", "md5db", "pwdb"):
        assert login_error(auth_server, "dave", "old pw", db)[0] == "28P01"
        assert login_error(auth_server, "dave", "new pw", db)[0] == "ok"
    # A role may change its own password, and nothing else about itself.
    with connect_as(auth_server, "dave", "new pw") as c:
        c.execute("ALTER ROLE dave WITH ENCRYPTED PASSWORD 'own pw'")
        assert sqlstate_of(lambda: c.execute("ALTER ROLE dave CREATEROLE")) == "42501"
    assert login_error(auth_server, "dave", "own pw")[0] == "ok"
    # PASSWORD NULL: no password can succeed.
    with su(auth_server) as c:
        c.execute("ALTER ROLE dave PASSWORD NULL")
    assert login_error(auth_server, "dave", "own pw")[0] == "28P01"


def test_valid_until_in_the_past_refuses_the_password(auth_server):
    with su(auth_server) as c:
        c.execute("CREATE ROLE erin LOGIN PASSWORD 'e pw' VALID UNTIL '2001-01-01 00:00:00+00'")
        c.execute("CREATE ROLE fred LOGIN PASSWORD 'f pw' VALID UNTIL 'infinity'")
    assert login_error(auth_server, "erin", "e pw")[0] == "28P01"
    assert login_error(auth_server, "fred", "f pw")[0] == "ok"
    with su(auth_server) as c:
        c.execute("ALTER ROLE erin VALID UNTIL '2999-01-01'")
    assert login_error(auth_server, "erin", "e pw")[0] == "ok"


def test_rename_clears_the_md5_hash(auth_server):
    with su(auth_server) as c:
        c.execute("CREATE ROLE gina LOGIN PASSWORD 'g pw'")
    assert login_error(auth_server, "gina", "g pw", "md5db")[2][0] == 5
    with su(auth_server) as c:
        c.execute("ALTER ROLE gina RENAME TO gail")
    assert login_error(auth_server, "gina", "g pw")[0] == "28P01"
    # No md5 hash left: an md5 rule runs SCRAM with the verifier.
    state, _, codes = login_error(auth_server, "gail", "g pw", "md5db")
    assert state == "ok" and codes[0] == 10


def test_config_file_users_keep_working(auth_server):
    # A user from the config file logs in with its password and, having no
    # role yet, gets a plain LOGIN role (never a superuser: issue 19 item 7).
    with connect_as(auth_server, "cfguser", "cfg-secret") as c:
        assert c.info.parameter_status("is_superuser") == "off"
        assert sqlstate_of(lambda: c.execute("CREATE ROLE made_by_cfg")) == "42501"
        c.execute("CREATE TABLE cfg_own (a INT PRIMARY KEY)")
    assert login_error(auth_server, "cfguser", "bad")[0] == "28P01"


def test_passwords_are_never_stored_in_clear(sluiced):
    # With an md5 rule the md5 hash is kept too (without one, only the
    # verifier: tests/test_login_roles.py).
    server = sluiced("--hba", "host all sluice 127.0.0.1/32 trust",
                     "--hba", "host all all 127.0.0.1/32 md5")
    with su(server) as c:
        c.execute("CREATE ROLE hank LOGIN PASSWORD 'Cleartext-Sentinel-42'")
    server.stop()
    db = server.data_dir / "catalog.db"
    raw = b"".join(p.read_bytes() for p in server.data_dir.glob("catalog.db*"))
    assert b"Cleartext-Sentinel-42" not in raw
    con = sqlite3.connect(db)
    scram, md5 = con.execute(
        "SELECT password, password_md5 FROM roles WHERE name = 'hank'").fetchone()
    con.close()
    assert scram.startswith("SCRAM-SHA-256$4096:")
    assert md5 == "md5" + hashlib.md5(b"Cleartext-Sentinel-42hank").hexdigest()
    server.start()


# -------------------------------------------------------------- role DDL

def test_role_statement_errors(server):
    with su(server) as c:
        c.execute("CREATE ROLE ivy")
        assert sqlstate_of(lambda: c.execute("CREATE ROLE ivy")) == "42710"
        assert sqlstate_of(lambda: c.execute("CREATE ROLE public")) == "42939"
        assert sqlstate_of(lambda: c.execute("CREATE ROLE pg_mine")) == "42939"
        assert sqlstate_of(lambda: c.execute("CREATE ROLE x WITH FLY")) == "42601"
        assert sqlstate_of(lambda: c.execute("CREATE ROLE x LOGIN NOLOGIN")) == "42601"
        assert sqlstate_of(lambda: c.execute("ALTER ROLE nobody LOGIN")) == "42704"
        assert sqlstate_of(lambda: c.execute("DROP ROLE nobody")) == "42704"
        c.execute("DROP ROLE IF EXISTS nobody, ivy")
        assert sqlstate_of(lambda: c.execute("ALTER ROLE sluice RENAME TO boss")) == "0A000"
        assert sqlstate_of(lambda: c.execute("DROP ROLE sluice")) == "55006"
        c.execute("CREATE ROLE jay")
        c.execute("CREATE ROLE kay")
        assert sqlstate_of(lambda: c.execute("ALTER ROLE jay RENAME TO kay")) == "42710"


def test_create_role_needs_createrole(server):
    with su(server) as c:
        c.execute("CREATE ROLE plain LOGIN")
        c.execute("CREATE ROLE maker LOGIN CREATEROLE")
    with connect_as(server, "plain") as c:
        with pytest.raises(psycopg.errors.InsufficientPrivilege,
                           match="permission denied to create role"):
            c.execute("CREATE ROLE x")
        assert sqlstate_of(lambda: c.execute("DROP ROLE maker")) == "42501"
    with connect_as(server, "maker") as c:
        c.execute("CREATE ROLE made LOGIN")
        c.execute("ALTER ROLE made CREATEROLE")
        with pytest.raises(psycopg.errors.InsufficientPrivilege,
                           match="must be superuser to create superusers"):
            c.execute("CREATE ROLE boss SUPERUSER")
        assert sqlstate_of(lambda: c.execute("ALTER ROLE sluice PASSWORD 'x'")) == "42501"
        assert sqlstate_of(lambda: c.execute("DROP ROLE maker")) == "55006"
        c.execute("DROP ROLE made")


# ------------------------------------------------------------- privileges

def setup_objects(c):
    c.execute("CREATE TABLE t (id INT PRIMARY KEY, v TEXT)")
    c.execute("INSERT INTO t VALUES (1, 'one')")
    c.execute("CREATE STREAM s (user_id BIGINT, url TEXT)")
    c.execute("INSERT INTO s VALUES (1, 'a'), (20, 'b')")
    c.execute("CREATE CONTINUOUS QUERY q WITH (trigger = '0') AS "
              "SELECT user_id, url FROM s WHERE user_id > 10")
    c.execute("CREATE ROLE bob LOGIN")


def wait_rows(c, sql, want):
    deadline = time.monotonic() + WAIT
    got = None
    while time.monotonic() < deadline:
        got = c.execute(sql).fetchall()
        if got == want:
            break
        time.sleep(0.1)
    return got


def denied(fn):
    with pytest.raises(psycopg.errors.InsufficientPrivilege) as e:
        fn()
    return str(e.value).splitlines()[0]


def test_grant_and_revoke_select_on_a_table(server):
    with su(server) as admin:
        setup_objects(admin)
        with connect_as(server, "bob") as bob:
            assert denied(lambda: bob.execute("SELECT * FROM t")) == \
                "permission denied for table t"
            # with parameters (extended protocol) and in a subquery too
            assert denied(lambda: bob.execute("SELECT v FROM t WHERE id = %s", (1,))) == \
                "permission denied for table t"
            assert denied(lambda: bob.execute("SELECT 1 WHERE EXISTS (SELECT 1 FROM t)")) == \
                "permission denied for table t"
            admin.execute("GRANT SELECT ON TABLE t TO bob")
            assert bob.execute("SELECT v FROM t").fetchall() == [("one",)]
            assert bob.execute("SELECT v FROM t WHERE id = %s", (1,)).fetchall() == [("one",)]
            # SELECT does not give INSERT, UPDATE or DELETE.
            assert denied(lambda: bob.execute("INSERT INTO t VALUES (2, 'two')")) == \
                "permission denied for table t"
            assert denied(lambda: bob.execute("UPDATE t SET v = 'x'"))
            assert denied(lambda: bob.execute("DELETE FROM t WHERE id = 1"))
            admin.execute("GRANT INSERT, UPDATE ON t TO bob")
            bob.execute("INSERT INTO t VALUES (2, 'two')")
            bob.execute("UPDATE t SET v = 'uno' WHERE id = 1")
            assert denied(lambda: bob.execute("DELETE FROM t WHERE id = 1"))
            admin.execute("GRANT ALL PRIVILEGES ON t TO bob")
            bob.execute("DELETE FROM t WHERE id = 2")
            assert bob.execute("SELECT id, v FROM t").fetchall() == [(1, "uno")]
            admin.execute("REVOKE ALL ON t FROM bob")
            assert denied(lambda: bob.execute("SELECT * FROM t"))
            # PUBLIC counts for every role.
            admin.execute("GRANT SELECT ON t TO PUBLIC")
            assert bob.execute("SELECT count(*) FROM t").fetchone() == (1,)
            admin.execute("REVOKE SELECT ON t FROM public")
            assert denied(lambda: bob.execute("SELECT count(*) FROM t"))


def test_explain_upsert_and_update_without_where(server):
    with su(server) as admin:
        setup_objects(admin)
        with connect_as(server, "bob") as bob:
            assert denied(lambda: bob.execute("EXPLAIN SELECT * FROM t")) == \
                "permission denied for table t"
            admin.execute("GRANT INSERT ON t TO bob")
            bob.execute("INSERT INTO t VALUES (5, 'five') ON CONFLICT DO NOTHING")
            upsert = "INSERT INTO t VALUES (5, 'V') ON CONFLICT (id) DO UPDATE SET v = 'V'"
            assert denied(lambda: bob.execute(upsert))
            admin.execute("GRANT UPDATE, SELECT ON t TO bob")
            bob.execute(upsert)
            assert bob.execute("EXPLAIN SELECT * FROM t").fetchall()
            admin.execute("REVOKE SELECT ON t FROM bob")
            # UPDATE without WHERE or RETURNING reads nothing back: UPDATE suffices
            bob.execute("UPDATE t SET v = 'all'")
            assert admin.execute("SELECT DISTINCT v FROM t").fetchall() == [("all",)]
            assert denied(lambda: bob.execute("UPDATE t SET v = 'x' RETURNING id"))
            # reading the row's values needs SELECT, as in PostgreSQL
            assert denied(lambda: bob.execute("UPDATE t SET v = v || 'x'"))
            assert denied(lambda: bob.execute("INSERT INTO t SELECT id + 100, v FROM t"))
            assert denied(lambda: bob.execute(
                "INSERT INTO t SELECT 200, 'y' WHERE EXISTS (SELECT 1 FROM t)"))
            bob.execute("INSERT INTO t SELECT 300, upper('z')")
            admin.execute("GRANT SELECT ON t TO bob")
            bob.execute("UPDATE t SET v = v || 'x'")
            bob.execute("INSERT INTO t SELECT id + 100, v FROM t")
            assert admin.execute("SELECT count(*) FROM t").fetchone() == (6,)


def test_reserved_names_get_no_role_at_login(server):
    for name in ("public", "pg_signal_backend"):
        state, msg, _ = login_error(server, name, None)
        assert (state, msg) == ("28000", f'role "{name}" does not exist')


def test_trust_rule_still_refuses_a_nologin_role(server):
    with su(server) as admin:
        admin.execute("CREATE ROLE quiet")
    state, msg, codes = login_error(server, "quiet", None)
    assert (state, msg) == ("28000", 'role "quiet" is not permitted to log in')
    assert codes == []      # trust: no password asked, and no AuthenticationOk


def test_delete_with_where_also_needs_select(server):
    with su(server) as admin:
        setup_objects(admin)
        admin.execute("GRANT DELETE ON t TO bob")
        with connect_as(server, "bob") as bob:
            assert denied(lambda: bob.execute("DELETE FROM t WHERE id = 1"))
            admin.execute("GRANT SELECT ON t TO bob")
            bob.execute("DELETE FROM t WHERE id = 1")
            assert admin.execute("SELECT count(*) FROM t").fetchone() == (0,)


def test_grant_on_a_stream_and_copy(server):
    with su(server) as admin:
        setup_objects(admin)
        with connect_as(server, "bob") as bob:
            assert denied(lambda: bob.execute("SELECT * FROM s")) == \
                "permission denied for stream s"

            def copy_in():
                with bob.cursor().copy("COPY s FROM STDIN") as cp:
                    cp.write_row((5, "e"))
            assert denied(copy_in) == "permission denied for stream s"
            admin.execute("GRANT SELECT ON STREAM s TO bob")
            assert len(bob.execute("SELECT * FROM s").fetchall()) == 2
            assert denied(copy_in) == "permission denied for stream s"
            admin.execute("GRANT INSERT ON s TO bob")
            copy_in()
            bob.execute("INSERT INTO s VALUES (30, 'c')")
            assert len(bob.execute("SELECT * FROM s").fetchall()) == 4
            admin.execute("REVOKE SELECT ON STREAM s FROM bob")
            assert denied(lambda: bob.execute("SELECT * FROM s"))
            # ON STREAM names a stream
            assert sqlstate_of(lambda: admin.execute("GRANT SELECT ON STREAM t TO bob")) == \
                "42809"


def test_grant_on_a_continuous_query_result_table(server):
    with su(server) as admin:
        setup_objects(admin)
        assert wait_rows(admin, "SELECT user_id FROM q", [(20,)]) == [(20,)]
        with connect_as(server, "bob") as bob:
            assert denied(lambda: bob.execute("SELECT * FROM q")) == \
                "permission denied for continuous query q"
            admin.execute("GRANT SELECT ON q TO bob")
            assert bob.execute("SELECT user_id, url FROM q").fetchall() == [(20, "b")]
            admin.execute("REVOKE SELECT ON TABLE q FROM bob")
            assert denied(lambda: bob.execute("SELECT * FROM q"))


def test_creating_a_continuous_query_needs_select_on_its_stream(server):
    with su(server) as admin:
        setup_objects(admin)
        with connect_as(server, "bob") as bob:
            create = ("CREATE CONTINUOUS QUERY bobs WITH (trigger = '0') AS "
                      "SELECT user_id FROM s WHERE user_id > 1")
            assert denied(lambda: bob.execute(create)) == "permission denied for stream s"
            admin.execute("GRANT SELECT ON s TO bob")
            bob.execute(create)
            # bob owns the result table
            assert wait_rows(bob, "SELECT user_id FROM bobs", [(20,)]) == [(20,)]
            assert admin.execute("SELECT has_table_privilege('bob', 'bobs', 'SELECT'),"
                                 " has_table_privilege('bob', 'q', 'SELECT')").fetchone() == \
                (True, False)


def test_a_continuous_query_into_a_stream_needs_insert_on_it(server):
    with su(server) as admin:
        setup_objects(admin)
        admin.execute("CREATE STREAM silver (user_id BIGINT, url TEXT)")
        admin.execute("GRANT SELECT ON s TO bob")
        with connect_as(server, "bob") as bob:
            create = ("CREATE CONTINUOUS QUERY to_silver INTO silver WITH (trigger = '0') AS "
                      "SELECT user_id, url FROM s")
            assert denied(lambda: bob.execute(create)) == "permission denied for stream silver"
            admin.execute("GRANT INSERT ON silver TO bob")
            bob.execute(create)
        assert wait_rows(admin, "SELECT user_id FROM silver ORDER BY user_id",
                         [(1,), (20,)]) == [(1,), (20,)]


def test_owner_and_superuser_may_drop_others_may_not(server):
    with su(server) as admin:
        setup_objects(admin)
        admin.execute("CREATE ROLE carl LOGIN")
        with connect_as(server, "bob") as bob, connect_as(server, "carl") as carl:
            bob.execute("CREATE TABLE bt (a INT PRIMARY KEY)")
            bob.execute("INSERT INTO bt VALUES (1)")
            assert denied(lambda: carl.execute("DROP TABLE bt")) == "must be owner of table bt"
            assert denied(lambda: carl.execute("SELECT * FROM bt"))
            # only the owner grants
            assert denied(lambda: carl.execute("GRANT SELECT ON bt TO carl"))
            bob.execute("GRANT SELECT ON bt TO carl")
            assert carl.execute("SELECT a FROM bt").fetchall() == [(1,)]
            # a grant is not ownership
            assert denied(lambda: carl.execute("DROP TABLE bt"))
            assert denied(lambda: bob.execute("DROP STREAM s")) == "must be owner of stream s"
            assert denied(lambda: bob.execute("ALTER CONTINUOUS QUERY q PAUSE")) == \
                "must be owner of continuous query q"
            assert denied(lambda: bob.execute("DROP CONTINUOUS QUERY q"))
            bob.execute("CREATE STREAM bs (x INT)")
            bob.execute("DROP STREAM bs")
            # a superuser may drop anything
            admin.execute("DROP TABLE bt")


def test_drop_role_refused_while_it_owns_objects(server):
    with su(server) as admin:
        admin.execute("CREATE TABLE shared (a INT PRIMARY KEY)")
        admin.execute("CREATE ROLE olga LOGIN")
        admin.execute("GRANT SELECT ON shared TO olga")
        with connect_as(server, "olga") as olga:
            olga.execute("CREATE STREAM olgas (x INT)")
        with pytest.raises(psycopg.errors.DependentObjectsStillExist) as e:
            admin.execute("DROP ROLE olga")
        assert str(e.value).splitlines()[0] == \
            'role "olga" cannot be dropped because some objects depend on it'
        assert e.value.diag.message_detail == \
            "owner of stream olgas\nprivileges for table shared"
        # still there, still able to log in
        with connect_as(server, "olga") as olga:
            assert olga.execute("SELECT count(*) FROM shared").fetchone() == (0,)
        admin.execute("DROP STREAM olgas")
        admin.execute("REVOKE ALL ON shared FROM olga")
        admin.execute("DROP ROLE olga")
        assert admin.execute("SELECT pg_has_role('sluice', 'sluice', 'MEMBER')").fetchone() \
            == (True,)
        assert sqlstate_of(lambda: admin.execute(
            "SELECT pg_has_role('olga', 'sluice', 'MEMBER')")) == "42704"


def test_superuser_bypasses_checks(server):
    with su(server) as admin:
        admin.execute("CREATE ROLE owner1 LOGIN")
        admin.execute("CREATE ROLE super2 LOGIN SUPERUSER")
        with connect_as(server, "owner1") as o:
            o.execute("CREATE TABLE private (a INT PRIMARY KEY)")
            o.execute("INSERT INTO private VALUES (7)")
        with connect_as(server, "super2") as s:
            assert s.execute("SELECT a FROM private").fetchall() == [(7,)]
            s.execute("DELETE FROM private")
            s.execute("GRANT SELECT ON private TO PUBLIC")
        admin.execute("ALTER ROLE super2 NOSUPERUSER")
        with connect_as(server, "super2") as s:
            assert s.execute("SELECT count(*) FROM private").fetchone() == (0,)
            assert denied(lambda: s.execute("INSERT INTO private VALUES (1)"))


def test_privilege_functions(server):
    with su(server) as admin:
        setup_objects(admin)
        admin.execute("GRANT SELECT, INSERT ON t TO bob")
        one = lambda sql: admin.execute(sql).fetchone()  # noqa: E731
        assert one("SELECT has_table_privilege('bob', 't', 'SELECT'),"
                   " has_table_privilege('bob', 't', 'insert'),"
                   " has_table_privilege('bob', 't', 'UPDATE'),"
                   " has_table_privilege('bob', 'public.t', 'UPDATE, INSERT'),"
                   " has_table_privilege('bob', 's', 'SELECT'),"
                   " has_table_privilege('t', 'DELETE'),"
                   " has_table_privilege('public', 't', 'SELECT')") == \
            (True, True, False, True, False, True, False)
        assert one("SELECT has_table_privilege('bob', 't', 'SELECT WITH GRANT OPTION')") == \
            (False,)
        assert one("SELECT has_schema_privilege('public', 'USAGE'),"
                   " has_schema_privilege('bob', 'public', 'CREATE'),"
                   " has_schema_privilege('bob', 'pg_catalog', 'CREATE'),"
                   " has_database_privilege('sluice', 'CONNECT'),"
                   " has_database_privilege('bob', 'sluice', 'CREATE'),"
                   " pg_has_role('bob', 'bob', 'MEMBER'),"
                   " pg_has_role('bob', 'sluice', 'USAGE'),"
                   " pg_has_role('sluice', 'MEMBER')") == \
            (True, True, False, True, False, True, False, True)
        assert sqlstate_of(lambda: admin.execute(
            "SELECT has_table_privilege('nobody', 't', 'SELECT')")) == "42704"
        assert sqlstate_of(lambda: admin.execute(
            "SELECT has_table_privilege('bob', 'missing', 'SELECT')")) == "42P01"
        assert sqlstate_of(lambda: admin.execute(
            "SELECT has_table_privilege('bob', 't', 'FLY')")) == "22023"
        assert sqlstate_of(lambda: admin.execute(
            "SELECT has_schema_privilege('nope', 'USAGE')")) == "3F000"
        assert one("SELECT has_table_privilege(999999, 'SELECT')") == (None,)
    with connect_as(server, "bob") as bob:
        assert bob.execute("SELECT has_table_privilege('t', 'SELECT'),"
                           " has_table_privilege('t', 'DELETE'),"
                           " has_table_privilege('q', 'SELECT')").fetchone() == \
            (True, False, False)


def test_privilege_functions_in_copy_as_a_role(server):
    """COPY (query) TO STDOUT evaluates the privilege functions with the
    statement's answers, as a SELECT does, for the role that runs it."""
    with su(server) as admin:
        admin.execute("CREATE TABLE t (id BIGINT PRIMARY KEY)")
        admin.execute("CREATE ROLE bob LOGIN")
        admin.execute("GRANT SELECT ON t TO bob")
    with connect_as(server, "bob") as bob:
        sql = ("SELECT has_table_privilege('t', 'SELECT'), has_table_privilege('t', 'DELETE'), "
               "pg_get_userbyid(10)")
        assert bob.execute(sql).fetchone() == (True, False, "sluice")
        with bob.cursor().copy(f"COPY ({sql}) TO STDOUT") as cp:
            data = b"".join(bytes(chunk) for chunk in cp).decode()
        assert data == "t\tf\tsluice\n"


def test_privilege_and_stream_functions_in_continuous_queries(server):
    """A continuous query's batch evaluates the privilege functions and the
    stream counters' functions as a statement does: in its projection and
    WHERE, in a stream-table join's condition (the base executor's
    context) and in a stream-stream join's residual condition (the join's
    own).  The runtime hands the answers to each context (EvalCtx.fn)."""
    with su(server) as admin:
        admin.execute("CREATE TABLE t (id BIGINT PRIMARY KEY, v TEXT)")
        admin.execute("INSERT INTO t VALUES (1, 'one')")
        admin.execute("CREATE ROLE bob LOGIN")
        admin.execute("GRANT SELECT ON t TO bob")
        admin.execute("CREATE STREAM ev (k BIGINT, ts TIMESTAMP, "
                      "WATERMARK FOR ts AS ts - INTERVAL '5 seconds') "
                      "WITH (retention = '1 hour')")
        admin.execute("CREATE STREAM ev2 (k BIGINT, ts TIMESTAMP, "
                      "WATERMARK FOR ts AS ts - INTERVAL '5 seconds')")
        admin.execute("CREATE CONTINUOUS QUERY priv WITH (trigger = '0') AS "
                      "SELECT k, has_table_privilege('bob', 't', 'SELECT') AS sel, "
                      "pg_get_userbyid(10) AS owner, sluice_stream_status('ev') AS st "
                      "FROM ev WHERE NOT has_table_privilege('bob', 't', 'DELETE')")
        admin.execute("CREATE CONTINUOUS QUERY priv_tj WITH (trigger = '0') AS "
                      "SELECT e.k, t.v FROM ev e JOIN t ON t.id = e.k "
                      "AND pg_has_role('bob', 'bob', 'MEMBER')")
        admin.execute("CREATE CONTINUOUS QUERY priv_sj WITH (trigger = '0') AS "
                      "SELECT a.k, pg_get_userbyid(10) AS owner FROM ev a JOIN ev2 b "
                      "ON b.k = a.k AND b.ts BETWEEN a.ts AND a.ts + INTERVAL '1 minute' "
                      "AND has_table_privilege('bob', 't', 'SELECT')")
        admin.execute("INSERT INTO ev VALUES (1, '2026-01-01 00:00:00')")
        admin.execute("INSERT INTO ev2 VALUES (1, '2026-01-01 00:00:10')")
        assert wait_rows(admin, "SELECT k, sel, owner, st FROM priv",
                         [(1, True, "sluice", "running")]) == [(1, True, "sluice", "running")]
        assert wait_rows(admin, "SELECT k, v FROM priv_tj", [(1, "one")]) == [(1, "one")]
        assert wait_rows(admin, "SELECT k, owner FROM priv_sj", [(1, "sluice")]) == \
            [(1, "sluice")]
        # a batch after a revoke sees it
        admin.execute("REVOKE SELECT ON t FROM bob")
        admin.execute("INSERT INTO ev VALUES (2, '2026-01-01 00:00:01')")
        assert wait_rows(admin, "SELECT k, sel FROM priv ORDER BY k",
                         [(1, True), (2, False)]) == [(1, True), (2, False)]


def test_privilege_functions_in_a_continuous_query_answer_as_its_owner(server):
    """The forms without a role argument (has_table_privilege(table, priv)
    & co.) and current_user / session_user in a continuous query answer
    for its owner, as PostgreSQL's REFRESH MATERIALIZED VIEW runs as the
    view's owner -- not for the internal role that runs the batches (which
    answered as a superuser would: true for a table bob was not granted,
    and "sluice")."""
    with su(server) as admin:
        admin.execute("CREATE TABLE granted (id BIGINT PRIMARY KEY)")
        admin.execute("CREATE TABLE not_granted (id BIGINT PRIMARY KEY)")
        admin.execute("CREATE ROLE bob LOGIN")
        admin.execute("GRANT SELECT ON granted TO bob")
        admin.execute("CREATE STREAM ev (k BIGINT)")
        admin.execute("GRANT SELECT, INSERT ON ev TO bob")
        body = ("SELECT k, has_table_privilege('granted', 'SELECT') AS g, "
                "has_table_privilege('not_granted', 'SELECT') AS ng, "
                "pg_has_role('bob', 'MEMBER') AS bob_member, "
                "current_user AS cu, session_user AS su FROM ev")
        admin.execute(f"CREATE CONTINUOUS QUERY admins WITH (trigger = '0') AS {body}")
        with connect_as(server, "bob") as bob:
            bob.execute(f"CREATE CONTINUOUS QUERY bobs WITH (trigger = '0') AS {body}")
            bob.execute("INSERT INTO ev VALUES (1)")
            want = [(1, True, False, True, "bob", "bob")]
            assert wait_rows(bob, "SELECT * FROM bobs", want) == want
        want = [(1, True, True, True, "sluice", "sluice")]
        assert wait_rows(admin, "SELECT * FROM admins", want) == want


def test_grant_on_all_tables_in_schema(server):
    with su(server) as admin:
        setup_objects(admin)
        admin.execute("CREATE ROLE reader LOGIN")
        admin.execute("GRANT SELECT ON ALL TABLES IN SCHEMA public TO reader")
        with connect_as(server, "reader") as r:
            assert r.execute("SELECT count(*) FROM t").fetchone() == (1,)
            assert r.execute("SELECT count(*) FROM s").fetchone() == (2,)
            # relations made later are not included, as in PostgreSQL
            admin.execute("CREATE TABLE later (a INT PRIMARY KEY)")
            assert denied(lambda: r.execute("SELECT * FROM later"))
        # only for relations the granting role owns
        with connect_as(server, "bob") as bob:
            bob.execute("CREATE TABLE bobs (a INT PRIMARY KEY)")
            assert denied(lambda: bob.execute(
                "GRANT SELECT ON ALL TABLES IN SCHEMA public TO reader"))
        assert admin.execute("SELECT has_table_privilege('reader', 'bobs', 'SELECT')"
                             ).fetchone() == (False,)


def test_grant_errors(server):
    with su(server) as admin:
        setup_objects(admin)
        assert sqlstate_of(lambda: admin.execute("GRANT SELECT ON missing TO bob")) == "42P01"
        assert sqlstate_of(lambda: admin.execute("GRANT SELECT ON t TO nobody")) == "42704"
        assert sqlstate_of(lambda: admin.execute("GRANT FLY ON t TO bob")) == "42601"
        assert sqlstate_of(lambda: admin.execute("GRANT TRUNCATE ON t TO bob")) == "0A000"
        # a failed GRANT grants nothing
        assert sqlstate_of(lambda: admin.execute("GRANT SELECT ON t, missing TO bob")) == \
            "42P01"
        assert admin.execute("SELECT has_table_privilege('bob', 't', 'SELECT')").fetchone() \
            == (False,)


def test_a_dropped_roles_session_runs_nothing_more(server):
    with su(server) as admin:
        admin.execute("CREATE ROLE gone LOGIN")
        with connect_as(server, "gone") as gone:
            assert gone.execute("SELECT 1").fetchone() == (1,)
            admin.execute("DROP ROLE gone")
            with pytest.raises(psycopg.errors.UndefinedObject, match="role with OID"):
                gone.execute("CREATE TABLE orphan (a INT PRIMARY KEY)")
        assert sqlstate_of(lambda: admin.execute("SELECT * FROM orphan")) == "42P01"


# ---------------------------------------------------------------- restart

def test_roles_owners_and_grants_survive_a_restart(sluiced):
    config = "\n".join(f"hba = '{r}'" for r in HBA) + "\n"
    server = sluiced(config=config)
    with su(server) as admin:
        admin.execute("CREATE ROLE rita LOGIN CREATEROLE PASSWORD 'r pw'")
        admin.execute("CREATE ROLE ned PASSWORD 'n pw'")
        admin.execute("CREATE TABLE kept (a INT PRIMARY KEY)")
        admin.execute("CREATE TABLE closed (a INT PRIMARY KEY)")
        admin.execute("GRANT SELECT ON kept TO rita")
    with connect_as(server, "rita", "r pw") as rita:
        rita.execute("CREATE STREAM ritas (x INT)")
    server.restart()
    assert login_error(server, "rita", "r pw", "md5db")[0] == "ok"
    assert login_error(server, "rita", "bad")[0] == "28P01"
    assert login_error(server, "ned", "n pw")[0] == "28000"
    with connect_as(server, "rita", "r pw") as rita:
        assert rita.execute("SELECT count(*) FROM kept").fetchone() == (0,)
        assert denied(lambda: rita.execute("SELECT * FROM closed"))
        rita.execute("CREATE ROLE after_restart")
        rita.execute("DROP STREAM ritas")
    with su(server) as admin:
        assert sqlstate_of(lambda: admin.execute("CREATE ROLE rita")) == "42710"
        assert admin.execute("SELECT has_table_privilege('rita', 'kept', 'SELECT'),"
                             " has_table_privilege('rita', 'closed', 'SELECT')").fetchone() \
            == (True, False)
