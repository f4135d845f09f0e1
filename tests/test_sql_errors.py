"""What a client sees of SQL over tables: SQLSTATEs, positions, hints, details
and CommandComplete tags, through psycopg (the .slt files check messages
only).  Expectations are PostgreSQL 15's for the same statements.
"""

import psycopg
import pytest


@pytest.fixture
def conn(server):
    with psycopg.connect(server.dsn, connect_timeout=10, autocommit=True) as c:
        c.execute("CREATE TABLE users (user_id BIGINT PRIMARY KEY, country TEXT NOT NULL, "
                  "score DOUBLE PRECISION)")
        c.execute("CREATE TABLE orders (id int PRIMARY KEY, user_id bigint, amount numeric)")
        c.execute("INSERT INTO users VALUES (1, 'de', 1.5), (2, 'fr', NULL)")
        yield c


# (statement, SQLSTATE, 1-based character position or None, hint or None)
ERRORS = [
    ("SELECT * FROM nope", "42P01", 15, None),
    ("SELECT nope FROM users", "42703", 8, None),
    ("SELECT countr FROM users u", "42703", 8,
     'Perhaps you meant to reference the column "u.country".'),
    ("SELECT u.scor FROM users u", "42703", 8,
     'Perhaps you meant to reference the column "u.score".'),
    ("SELECT user_id FROM users u JOIN orders o ON u.user_id = o.user_id", "42702", 8, None),
    ("SELECT score FROM users GROUP BY country", "42803", 8, None),
    ("SELECT count(*) FROM users WHERE count(*) > 1", "42803", 34, None),
    ("SELECT * FORM users", "42601", 10, None),
    ("SELECT country + 1 FROM users", "42883", 16,
     "No operator matches the given name and argument types. You might need to add "
     "explicit type casts."),
    ("SELECT * FROM users WHERE user_id", "42804", 27, None),
    ("CREATE TABLE users (a int)", "42P07", None, None),
    ("INSERT INTO users VALUES (1, 'xx', 0)", "23505", None, None),
    ("INSERT INTO users VALUES (3, NULL, 0)", "23502", None, None),
    ("INSERT INTO users (nope) VALUES (1)", "42703", 20, None),
    ("SELECT * FROM users ORDER BY 9", "42P10", 30, None),
    ("SELECT (SELECT user_id FROM users)", "21000", None, None),
    ("SELECT * FROM (SELECT 1)", "42601", 15, "For example, FROM (SELECT ...) [AS] foo."),
    ("SUBSCRIBE q", "42704", None, None),
    ("WITH RECURSIVE t(n) AS (SELECT 1 UNION ALL SELECT n FROM t ORDER BY 1) SELECT * FROM t",
     "0A000", 69, None),
    ("SELECT (SELECT max(u.score)) FROM users u", "0A000", 16, None),
]


@pytest.mark.parametrize("sql,state,position,hint", ERRORS)
def test_error_fields(conn, sql, state, position, hint):
    with pytest.raises(psycopg.Error) as info:
        conn.execute(sql)
    diag = info.value.diag
    assert diag.sqlstate == state, diag.message_primary
    if position is None:
        assert diag.statement_position is None
    else:
        assert diag.statement_position == str(position)
    assert diag.message_hint == hint


def test_unique_violation_detail(conn):
    with pytest.raises(psycopg.errors.UniqueViolation) as info:
        conn.execute("INSERT INTO users VALUES (1, 'xx', 0)")
    assert info.value.diag.message_primary == \
        'duplicate key value violates unique constraint "users_pkey"'
    assert info.value.diag.message_detail == "Key (user_id)=(1) already exists."


def test_not_null_detail(conn):
    with pytest.raises(psycopg.errors.NotNullViolation) as info:
        conn.execute("INSERT INTO users VALUES (3, NULL, 0)")
    assert info.value.diag.message_detail == "Failing row contains (3, null, 0)."


@pytest.mark.parametrize("sql,tag", [
    ("INSERT INTO users VALUES (3, 'us', 1), (4, 'it', 2)", "INSERT 0 2"),
    ("INSERT INTO users VALUES (1, 'us', 1) ON CONFLICT DO NOTHING", "INSERT 0 0"),
    ("UPDATE users SET score = 0", "UPDATE 2"),
    ("UPDATE users SET score = 0 WHERE false", "UPDATE 0"),
    ("DELETE FROM users WHERE user_id = 1", "DELETE 1"),
    ("SELECT * FROM users", "SELECT 2"),
    ("CREATE TABLE t (a int)", "CREATE TABLE"),
    ("DROP TABLE IF EXISTS nope", "DROP TABLE"),
    ("CREATE STREAM s (a int)", "CREATE STREAM"),
    ("EXPLAIN SELECT 1", "EXPLAIN"),
])
def test_command_tags(conn, sql, tag):
    cur = conn.execute(sql)
    assert cur.statusmessage == tag


def test_drop_stream_tag(conn):
    conn.execute("CREATE STREAM s (a int)")
    assert conn.execute("DROP STREAM s").statusmessage == "DROP STREAM"


def test_parameters_take_column_types(conn):
    # psycopg 3 sends parameters with the server doing the binding
    conn.execute("INSERT INTO users VALUES (%s, %s, %s)", (7, "nl", 2.5))
    conn.execute("UPDATE users SET score = score + %s WHERE user_id = %s", (1, 7))
    assert conn.execute("SELECT country, score FROM users WHERE user_id = %s",
                        (7,)).fetchall() == [("nl", 3.5)]
    cur = conn.execute("SELECT user_id FROM users WHERE country = %s ORDER BY 1 LIMIT %s",
                       ("de", 1))
    assert cur.fetchall() == [(1,)]


def test_prepared_statement_sees_new_table(conn):
    # a statement prepared (extended protocol) over a table that is dropped
    # and recreated runs against the new one: it is analyzed again
    pg = conn.pgconn
    res = pg.prepare(b"s1", b"SELECT count(*) FROM orders WHERE id > $1", [23])
    assert res.status == psycopg.pq.ExecStatus.COMMAND_OK
    res = pg.exec_prepared(b"s1", [b"0"])
    assert res.get_value(0, 0) == b"0"
    conn.execute("DROP TABLE orders")
    conn.execute("CREATE TABLE orders (id int, note text)")
    conn.execute("INSERT INTO orders VALUES (1, 'x'), (2, 'y')")
    res = pg.exec_prepared(b"s1", [b"0"])
    assert res.status == psycopg.pq.ExecStatus.TUPLES_OK, res.error_message
    assert res.get_value(0, 0) == b"2"


def test_explain_text(conn):
    cur = conn.execute("EXPLAIN SELECT country, count(*) FROM users u WHERE score > 1 "
                       "GROUP BY country ORDER BY 2 DESC")
    assert [d.name for d in cur.description] == ["QUERY PLAN"]
    assert [r[0] for r in cur.fetchall()] == [
        "Sort",
        "  Sort Key: count(*) DESC",
        "  ->  Project",
        "        Output: u.country, count(*)",
        "        ->  HashAggregate",
        "              Group Key: u.country",
        "              Aggregates: count(*)",
        "              ->  Seq Scan on users u",
        "                    Filter: (u.score > 1)",
    ]
