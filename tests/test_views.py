"""Views as a plain role, and a continuous query that reads a view.

- A role needs SELECT on a view, not on what the view reads: the view reads
  its relations with its owner's rights (PostgreSQL's rule), also through a
  view over a view; a view made by a role without SELECT on a table fails
  when read (42501 naming the table), and works once the owner is granted it.
- Only the owner replaces or drops a view (42501 "must be owner of view"),
  and DROP ... CASCADE does not drop another role's view.
- A continuous query over a view over a stream runs the view's query
  inlined: its result equals the same aggregate computed in Python from the
  rows inserted; the view cannot be replaced or dropped while the query
  reads it (2BP01), and DROP VIEW ... CASCADE drops the query too.
- A view over a continuous query's result table: OR REPLACE of the query
  may not change the columns the view reads (2BP01).
- A restart keeps the views (the catalog) and what they answer, builds a
  continuous query over a view again, and keeps a table's DEFAULT and CHECK.
- UPDATE ... FROM and DELETE ... USING as a plain role need SELECT on the
  relations they join.
- Only the owner alters a table or view (ALTER TABLE / VIEW: 42501).
- DROP ... CASCADE drops the views over every continuous query it drops
  (a query over a query included), each only if the role owns it.
"""

import psycopg
import pytest

from helpers import wait_for
from test_roles import connect_as, denied, su, sqlstate_of

WAIT = 30


def test_a_role_reads_a_view_with_the_owners_rights(server):
    with su(server) as admin:
        admin.execute("CREATE TABLE pay (id INT PRIMARY KEY, name TEXT, salary INT)")
        admin.execute("INSERT INTO pay VALUES (1, 'ann', 100), (2, 'bob', 80)")
        admin.execute("CREATE VIEW names AS SELECT id, name FROM pay")
        admin.execute("CREATE ROLE bob LOGIN")
        with connect_as(server, "bob") as bob:
            assert denied(lambda: bob.execute("SELECT * FROM names")) == \
                "permission denied for view names"
            admin.execute("GRANT SELECT ON names TO bob")
            assert bob.execute("SELECT name FROM names ORDER BY id").fetchall() == \
                [("ann",), ("bob",)]
            # the table itself stays closed to bob
            assert denied(lambda: bob.execute("SELECT * FROM pay")) == \
                "permission denied for table pay"
            assert denied(lambda: bob.execute("SELECT n.name FROM names AS n JOIN pay "
                                              "USING (id)")) == "permission denied for table pay"
            # a view bob makes over the table reads it with bob's rights
            bob.execute("CREATE VIEW mine AS SELECT salary FROM pay")
            assert denied(lambda: bob.execute("SELECT * FROM mine")) == \
                "permission denied for table pay"
            admin.execute("GRANT SELECT ON pay TO bob")
            assert bob.execute("SELECT sum(salary) FROM mine").fetchone()[0] == 180
            admin.execute("REVOKE SELECT ON pay FROM bob")
            # a view over a view: each layer with its owner's rights
            bob.execute("CREATE VIEW upper_names AS SELECT upper(name) AS u FROM names")
            assert bob.execute("SELECT u FROM upper_names ORDER BY u").fetchall() == \
                [("ANN",), ("BOB",)]
            admin.execute("REVOKE SELECT ON names FROM bob")
            assert denied(lambda: bob.execute("SELECT * FROM upper_names")) == \
                "permission denied for view names"
            # the superuser reads bob's view, which still reads as bob
            assert denied(lambda: admin.execute("SELECT * FROM mine")) == \
                "permission denied for table pay"


def test_only_the_owner_replaces_or_drops_a_view(server):
    with su(server) as admin:
        admin.execute("CREATE TABLE t (a INT)")
        admin.execute("CREATE VIEW v AS SELECT a FROM t")
        admin.execute("CREATE ROLE bob LOGIN")
        admin.execute("GRANT SELECT ON t TO bob")
        admin.execute("GRANT SELECT ON v TO bob")
        with connect_as(server, "bob") as bob:
            assert denied(lambda: bob.execute("CREATE OR REPLACE VIEW v AS SELECT a FROM t")) == \
                "must be owner of view v"
            assert denied(lambda: bob.execute("DROP VIEW v")) == "must be owner of view v"
            bob.execute("CREATE VIEW bobs AS SELECT a FROM v")
            bob.execute("CREATE OR REPLACE VIEW bobs AS SELECT a, a + 1 AS b FROM v")
            assert [c.name for c in bob.execute("SELECT * FROM bobs").description] == \
                ["a", "b"]
        assert sqlstate_of(lambda: admin.execute("DROP VIEW v")) == "2BP01"
        admin.execute("DROP VIEW bobs")
        admin.execute("DROP VIEW v")


def test_cascade_needs_to_own_the_views_it_drops(server):
    with su(server) as admin:
        admin.execute("CREATE ROLE alice LOGIN")
        admin.execute("CREATE ROLE bob LOGIN")
        with connect_as(server, "alice") as alice, connect_as(server, "bob") as bob:
            alice.execute("CREATE TABLE t (a INT)")
            alice.execute("CREATE VIEW v AS SELECT a FROM t")
            alice.execute("GRANT SELECT ON v TO bob")
            bob.execute("CREATE VIEW w AS SELECT a FROM v")
            assert denied(lambda: alice.execute("DROP TABLE t CASCADE")) == "must be owner of view w"
            assert alice.execute("SELECT count(*) FROM v").fetchone()[0] == 0
            bob.execute("DROP VIEW w")
            alice.execute("DROP TABLE t CASCADE")
            assert sqlstate_of(lambda: alice.execute("SELECT * FROM v")) == "42P01"


def test_continuous_query_over_a_view(server):
    with su(server) as c:
        c.execute("CREATE STREAM clicks (user_id BIGINT, url TEXT)")
        c.execute("CREATE VIEW good AS SELECT user_id, url FROM clicks WHERE url IS NOT NULL")
        c.execute("CREATE CONTINUOUS QUERY per_user WITH (trigger = '0') AS "
                  "SELECT user_id, count(*) AS n FROM good GROUP BY user_id")
        rows = [(1, "a"), (1, None), (2, "b"), (1, "c"), (3, None), (2, "d"), (2, "e")]
        with c.cursor() as cur:
            cur.executemany("INSERT INTO clicks VALUES (%s, %s)", rows)
        want = {}
        for user, url in rows:
            if url is not None:
                want[user] = want.get(user, 0) + 1
        want = sorted(want.items())
        got = wait_for(lambda: sorted(tuple(r) for r in
                                      c.execute("SELECT user_id, n FROM per_user").fetchall()),
                       want, timeout=WAIT)
        assert got == want
        # the view as a batch query agrees
        assert c.execute("SELECT count(*) FROM good").fetchone()[0] == sum(n for _, n in want)
        e = pytest.raises(psycopg.Error, c.execute,
                          "CREATE OR REPLACE VIEW good AS SELECT user_id, url FROM clicks")
        assert e.value.sqlstate == "2BP01"
        assert "continuous query per_user reads it" in str(e.value)
        e = pytest.raises(psycopg.Error, c.execute, "DROP VIEW good")
        assert e.value.sqlstate == "2BP01"
        e = pytest.raises(psycopg.Error, c.execute, "DROP STREAM clicks")
        assert e.value.sqlstate == "2BP01"
        c.execute("DROP VIEW good CASCADE")
        assert c.execute("SELECT count(*) FROM sys.queries WHERE name = 'per_user'"
                         ).fetchone()[0] == 0
        c.execute("DROP STREAM clicks")


def test_views_survive_a_restart(sluiced):
    server = sluiced()
    with su(server) as c:
        c.execute("CREATE TABLE t (a INT PRIMARY KEY, b TEXT)")
        c.execute("INSERT INTO t VALUES (1, 'x'), (2, 'y')")
        c.execute("CREATE VIEW v (k, val) AS SELECT a, upper(b) FROM t WHERE a > 1")
        c.execute("CREATE VIEW w AS SELECT count(*) AS n FROM v")
        c.execute("CREATE TABLE d (id INT, qty INT DEFAULT 7 CHECK (qty > 0))")
        c.execute("CREATE STREAM s (k INT, v INT)")
        c.execute("CREATE VIEW pos AS SELECT k, v FROM s WHERE v > 0")
        c.execute("CREATE CONTINUOUS QUERY per_k WITH (trigger = '0') AS "
                  "SELECT k, count(*) AS n FROM pos GROUP BY k")
    server.restart()
    with su(server) as c:
        # the continuous query was built again over the view at start
        c.execute("INSERT INTO s VALUES (1, 1), (1, -1), (2, 5)")
        want = [(1, 1), (2, 1)]
        assert wait_for(lambda: sorted(tuple(r) for r in
                                       c.execute("SELECT k, n FROM per_k").fetchall()),
                        want, timeout=WAIT) == want
        # a table's DEFAULT and CHECK come back with it
        assert c.execute("INSERT INTO d (id) VALUES (1) RETURNING qty").fetchone()[0] == 7
        assert sqlstate_of(lambda: c.execute("INSERT INTO d VALUES (2, 0)")) == "23514"
        assert c.execute("SELECT k, val FROM v").fetchall() == [(2, "Y")]
        assert c.execute("SELECT n FROM w").fetchone()[0] == 1
        assert c.execute("SELECT relkind FROM pg_class WHERE relname = 'v'").fetchone()[0] == "v"
        assert sqlstate_of(lambda: c.execute("DROP TABLE t")) == "2BP01"


def test_update_from_and_delete_using_as_a_plain_role(server):
    """UPDATE ... FROM and DELETE ... USING need SELECT on the relations they
    join (and on the target, which they read), as in PostgreSQL."""
    with su(server) as admin:
        admin.execute("CREATE TABLE t (id INT PRIMARY KEY, v INT)")
        admin.execute("CREATE TABLE src (id INT, w INT)")
        admin.execute("INSERT INTO t VALUES (1, 1), (2, 2)")
        admin.execute("INSERT INTO src VALUES (1, 10)")
        admin.execute("CREATE ROLE bob LOGIN")
        admin.execute("GRANT SELECT, UPDATE, DELETE ON t TO bob")
        with connect_as(server, "bob") as bob:
            assert denied(lambda: bob.execute(
                "UPDATE t SET v = src.w FROM src WHERE t.id = src.id")) == \
                "permission denied for table src"
            assert denied(lambda: bob.execute(
                "DELETE FROM t USING src WHERE t.id = src.id")) == \
                "permission denied for table src"
            admin.execute("GRANT SELECT ON src TO bob")
            cur = bob.execute("UPDATE t SET v = src.w FROM src WHERE t.id = src.id")
            assert cur.rowcount == 1
            assert bob.execute("DELETE FROM t USING src WHERE t.id = src.id").rowcount == 1
            assert bob.execute("SELECT id, v FROM t").fetchall() == [(2, 2)]


def test_only_the_owner_alters_a_table_or_view(server):
    """ALTER TABLE / ALTER VIEW as a plain role: 42501 "must be owner of ..."
    for another role's relation, whatever was granted; the owner may."""
    with su(server) as admin:
        admin.execute("CREATE TABLE t (id INT PRIMARY KEY, v INT)")
        admin.execute("CREATE VIEW v AS SELECT id FROM t")
        admin.execute("CREATE ROLE bob LOGIN")
        admin.execute("GRANT ALL PRIVILEGES ON t TO bob")
        with connect_as(server, "bob") as bob:
            for sql in ("ALTER TABLE t RENAME TO t2", "ALTER TABLE t RENAME COLUMN v TO w",
                        "ALTER TABLE t ALTER COLUMN v SET NOT NULL"):
                assert denied(lambda: bob.execute(sql)) == "must be owner of table t"
            assert denied(lambda: bob.execute("ALTER VIEW v RENAME TO w")) == \
                "must be owner of view v"
            bob.execute("CREATE TABLE mine (a INT)")
            bob.execute("ALTER TABLE mine RENAME COLUMN a TO b")
            bob.execute("ALTER TABLE mine ALTER COLUMN b SET NOT NULL")
            bob.execute("ALTER TABLE mine RENAME TO ours")
            assert bob.execute("SELECT column_name, is_nullable FROM information_schema.columns "
                               "WHERE table_name = 'ours'").fetchall() == [("b", "NO")]
        assert admin.execute("SELECT relowner FROM pg_class WHERE relname = 'ours'"
                             ).fetchone()[0] != 10


def test_a_view_over_a_continuous_querys_result(server):
    """A view reads a continuous query's result table; OR REPLACE of the
    query that keeps its columns is allowed, one that changes them is 2BP01,
    and DROP of the query needs CASCADE."""
    with su(server) as c:
        c.execute("CREATE STREAM s (k INT, v INT)")
        c.execute("CREATE CONTINUOUS QUERY agg WITH (trigger = '0') AS "
                  "SELECT k, sum(v) AS total FROM s GROUP BY k")
        c.execute("CREATE VIEW doubled AS SELECT k, total * 2 AS dbl FROM agg")
        c.execute("INSERT INTO s VALUES (1, 5), (1, 6), (2, 1)")
        want = [(1, 22), (2, 2)]
        got = wait_for(lambda: sorted(tuple(r) for r in
                                      c.execute("SELECT k, dbl FROM doubled").fetchall()),
                       want, timeout=WAIT)
        assert got == want
        c.execute("CREATE OR REPLACE CONTINUOUS QUERY agg WITH (trigger = '0') AS "
                  "SELECT k, sum(v) AS total FROM s WHERE v > 0 GROUP BY k")
        e = pytest.raises(psycopg.Error, c.execute,
                          "CREATE OR REPLACE CONTINUOUS QUERY agg WITH (trigger = '0') AS "
                          "SELECT k, count(*) AS n FROM s GROUP BY k")
        assert e.value.sqlstate == "2BP01"
        assert sqlstate_of(lambda: c.execute("DROP CONTINUOUS QUERY agg")) == "2BP01"
        c.execute("DROP CONTINUOUS QUERY agg CASCADE")
        assert sqlstate_of(lambda: c.execute("SELECT * FROM doubled")) == "42P01"
        c.execute("DROP STREAM s")


def test_cascade_drops_the_views_over_the_queries_it_drops(server):
    """DROP ... CASCADE of a stream drops the continuous query over it, the
    query that reads that one's result table, and the views over either --
    never a view left reading a dropped query -- and refuses, as a plain
    role, when one of those views is another role's."""
    with su(server) as admin:
        admin.execute("CREATE ROLE alice LOGIN")
        admin.execute("CREATE ROLE bob LOGIN")
        with connect_as(server, "alice") as alice, connect_as(server, "bob") as bob:
            alice.execute("CREATE STREAM s (k INT, v INT)")
            alice.execute("CREATE CONTINUOUS QUERY a WITH (trigger = '0') AS "
                          "SELECT k, sum(v) AS total FROM s GROUP BY k")
            alice.execute("CREATE CONTINUOUS QUERY b WITH (trigger = '0') AS "
                          "SELECT count(*) AS groups FROM a")
            alice.execute("CREATE VIEW vb AS SELECT groups FROM b")
            alice.execute("GRANT SELECT ON b TO bob")
            bob.execute("CREATE VIEW wb AS SELECT groups * 2 AS g2 FROM b")
            alice.execute("INSERT INTO s VALUES (1, 5), (2, 6)")
            assert wait_for(lambda: alice.execute("SELECT groups FROM vb").fetchall(),
                            [(2,)], timeout=WAIT) == [(2,)]
            # bob's view over b, which the CASCADE would drop: refused
            assert denied(lambda: alice.execute("DROP STREAM s CASCADE")) == \
                "must be owner of view wb"
            assert alice.execute("SELECT groups FROM vb").fetchall() == [(2,)]
            bob.execute("DROP VIEW wb")
            alice.execute("DROP STREAM s CASCADE")
            for name in ("a", "b", "vb"):
                assert sqlstate_of(lambda: alice.execute(f"SELECT * FROM {name}")) == "42P01"
            names = alice.execute("SELECT relname FROM pg_class WHERE relname IN "
                                  "('s', 'a', 'b', 'vb', 'wb')").fetchall()
            assert names == []
