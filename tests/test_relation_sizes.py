"""pg_relation_size and friends over real data (docs/sql-reference.md,
"Catalog functions"): a stream's size is the bytes of the chunks it keeps
(its chunk index, exact at once), so it is 0 while empty and grows with
each append; a table's and a result table's are RocksDB's estimate of their
keys in its table files, which counts rows once they are flushed out of the
memtable (here: after a restart, whose recovery flushes the log); psql's
\\d+ shows them through pg_size_pretty.  No value is compared with
PostgreSQL's: sluice stores rows otherwise.
"""

import psycopg


def sizes(c, rel):
    return c.execute("SELECT pg_relation_size(%s), pg_table_size(%s), "
                     "pg_total_relation_size(%s), pg_indexes_size(%s)",
                     (rel, rel, rel, rel)).fetchone()


def test_stream_and_table_sizes(server, psql):
    with psycopg.connect(server.dsn, autocommit=True) as c:
        c.execute("CREATE STREAM ev (id BIGINT, payload TEXT)")
        c.execute("CREATE TABLE kv (k BIGINT PRIMARY KEY, v TEXT)")
        assert sizes(c, "ev") == (0, 0, 0, 0)
        assert sizes(c, "kv") == (0, 0, 0, 0)
        c.execute("INSERT INTO ev SELECT g, repeat('x', 100) FROM generate_series(1, 1000) g")
        one = sizes(c, "ev")[0]
        # a thousand rows of more than 100 bytes each
        assert one > 100_000
        assert sizes(c, "ev") == (one, one, one, 0)
        c.execute("INSERT INTO ev SELECT g, repeat('y', 100) FROM generate_series(1, 1000) g")
        two = sizes(c, "ev")[0]
        assert one < two <= 2 * one + 1024
        pretty = c.execute("SELECT pg_size_pretty(pg_table_size('ev'))").fetchone()[0]
        assert pretty == f"{(two // 512 + 1) // 2} kB"
        c.execute("INSERT INTO kv SELECT g, repeat('z', 100) FROM generate_series(1, 2000) g")
        # the pk "index" is the table's own key order: no bytes of its own
        assert c.execute("SELECT pg_relation_size(indexrelid) FROM pg_index "
                         "WHERE indrelid = 'kv'::regclass").fetchall() == [(0,)]
        # a relation that is not there
        assert c.execute("SELECT pg_relation_size(424242)").fetchone() == (None,)
    server.restart()
    with psycopg.connect(server.dsn, autocommit=True) as c:
        assert sizes(c, "ev")[0] == two
        table = sizes(c, "kv")[0]
        assert table > 2000        # 2000 rows (of repeated letters: compressed)
        assert c.execute("SELECT pg_database_size('sluice') >= %s", (table,)).fetchone() == (True,)
    rc, out, err = psql(server, r"\d+")
    assert rc == 0, err
    row = [line for line in out.splitlines() if "| ev " in line]
    assert len(row) == 1 and f"| {(two // 512 + 1) // 2} kB " in row[0], out
