"""Catalog migration 5 (views): a catalog at schema version 4 -- relations
whose kind CHECK does not know 'view' -- opens in this sluiced, which makes
the relations table again with foreign keys off: every relation keeps its
columns, rows and grants (nothing cascades), the foreign keys hold after,
the version is 5, and views can be made.  The version-4 catalog is made from
a fresh one by undoing migration 5 with Python's sqlite3 (the same SQL the
migration itself replaced)."""

import sqlite3

from test_roles import su


def test_version_4_catalog_migrates_to_views(sluiced):
    server = sluiced()
    with su(server) as c:
        c.execute("CREATE TABLE t (id INT PRIMARY KEY, v TEXT)")
        c.execute("INSERT INTO t VALUES (1, 'a'), (2, 'b')")
        c.execute("CREATE STREAM s (x INT)")
        c.execute("CREATE ROLE r1")
        c.execute("GRANT SELECT ON t TO r1")
    server.stop()
    db = sqlite3.connect(server.data_dir / "catalog.db", isolation_level=None)
    try:
        assert db.execute("PRAGMA user_version").fetchone()[0] == 5
        ncols = db.execute("SELECT count(*) FROM columns").fetchone()[0]
        db.execute("PRAGMA foreign_keys = OFF")
        db.execute("BEGIN")
        db.execute("CREATE TABLE r_old (oid INTEGER PRIMARY KEY, name TEXT NOT NULL UNIQUE, "
                   "kind TEXT NOT NULL CHECK (kind IN ('table', 'stream', 'sink', 'query')), "
                   "sql TEXT NOT NULL, options TEXT NOT NULL DEFAULT '{}', "
                   "created_at INTEGER NOT NULL, owner INTEGER NOT NULL DEFAULT 10)")
        db.execute("INSERT INTO r_old SELECT oid, name, kind, sql, options, created_at, owner "
                   "FROM relations")
        db.execute("DROP TABLE relations")
        db.execute("ALTER TABLE r_old RENAME TO relations")
        db.execute("PRAGMA user_version = 4")
        db.execute("COMMIT")
    finally:
        db.close()
    server.start()
    with su(server) as c:
        assert c.execute("SELECT id, v FROM t ORDER BY id").fetchall() == [(1, "a"), (2, "b")]
        assert c.execute("SELECT has_table_privilege('r1', 't', 'SELECT')").fetchone()[0]
        c.execute("CREATE VIEW tv AS SELECT v FROM t")
        assert c.execute("SELECT count(*) FROM tv").fetchone()[0] == 2
        assert c.execute("SELECT relkind FROM pg_class WHERE relname = 'tv'").fetchone()[0] == "v"
    server.stop()
    db = sqlite3.connect(server.data_dir / "catalog.db")
    try:
        assert db.execute("PRAGMA user_version").fetchone()[0] == 5
        assert db.execute("PRAGMA foreign_key_check").fetchall() == []
        assert db.execute("SELECT count(*) FROM columns").fetchone()[0] == ncols + 1
        assert db.execute("SELECT kind FROM relations WHERE name = 'tv'").fetchone()[0] == "view"
    finally:
        db.close()
