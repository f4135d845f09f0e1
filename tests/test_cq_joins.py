"""Continuous queries over several inputs: a stream joined to a table (INNER
and LEFT, the table read at its current version per batch, no retraction),
UNION ALL of streams with a filter per arm and an aggregation above, the
watermark of a multi-input query (the minimum of its inputs'), and the
refusals with what to do instead.
"""

import time

import psycopg
import pytest

from test_continuous_queries import connect, ts, tsp, wait_for


def rows(conn, sql):
    """The rows sorted, NULLs last."""
    return sorted((tuple(r) for r in conn.execute(sql).fetchall()),
                  key=lambda r: tuple((x is None, x) for x in r))


def test_stream_table_inner_and_left_join(server):
    with connect(server) as c:
        c.execute("CREATE TABLE users (id BIGINT PRIMARY KEY, name TEXT, tier TEXT)")
        c.execute("INSERT INTO users VALUES (1, 'ann', 'gold'), (2, 'bob', 'free')")
        c.execute("CREATE STREAM clicks (user_id BIGINT, url TEXT, ts TIMESTAMP)")
        c.execute("CREATE CONTINUOUS QUERY enriched WITH (trigger = '0') AS "
                  "SELECT c.user_id, u.name, upper(c.url) AS url FROM clicks c "
                  "JOIN users u ON u.id = c.user_id WHERE u.tier = 'gold' OR c.url = 'x'")
        c.execute("CREATE CONTINUOUS QUERY all_clicks WITH (trigger = '0') AS "
                  "SELECT c.user_id, u.name, c.url FROM clicks c "
                  "LEFT JOIN users u ON u.id = c.user_id")
        c.execute("INSERT INTO clicks VALUES (1, 'a', %s), (2, 'b', %s), (3, 'c', %s), "
                  "(2, 'x', %s)", (tsp(0), tsp(1), tsp(2), tsp(3)))
        want = [(1, "ann", "A"), (2, "bob", "X")]
        assert wait_for(lambda: rows(c, "SELECT * FROM enriched"), want) == want
        want = [(1, "ann", "a"), (2, "bob", "b"), (2, "bob", "x"), (3, None, "c")]
        assert wait_for(lambda: rows(c, "SELECT * FROM all_clicks"), want) == want
        # The table changes: later batches see its new version; rows already
        # emitted stay as they were (no retraction).
        c.execute("INSERT INTO users VALUES (3, 'cid', 'gold')")
        c.execute("UPDATE users SET tier = 'gold', name = 'bobby' WHERE id = 2")
        c.execute("INSERT INTO clicks VALUES (2, 'd', %s), (3, 'e', %s)", (tsp(4), tsp(5)))
        want = [(1, "ann", "A"), (2, "bob", "X"), (2, "bobby", "D"), (3, "cid", "E")]
        assert wait_for(lambda: rows(c, "SELECT * FROM enriched"), want) == want
        want = [(1, "ann", "a"), (2, "bob", "b"), (2, "bob", "x"), (2, "bobby", "d"),
                (3, "cid", "e"), (3, None, "c")]
        assert wait_for(lambda: rows(c, "SELECT * FROM all_clicks"), want) == want


def test_stream_table_join_then_windowed_aggregation(server):
    with connect(server) as c:
        c.execute("CREATE TABLE users (id BIGINT PRIMARY KEY, tier TEXT)")
        c.execute("INSERT INTO users VALUES (1, 'gold'), (2, 'free'), (3, 'gold')")
        c.execute("CREATE STREAM clicks (user_id BIGINT, ts TIMESTAMP,"
                  " WATERMARK FOR ts AS ts - INTERVAL '5 seconds')")
        c.execute("CREATE CONTINUOUS QUERY per_tier WITH (trigger = '0', output_mode = 'append') AS "
                  "SELECT window_start, u.tier, count(*) AS n FROM clicks c "
                  "JOIN users u ON u.id = c.user_id "
                  "GROUP BY WINDOW(c.ts, INTERVAL '10 seconds'), u.tier")
        c.execute("INSERT INTO clicks VALUES (1, %s), (2, %s), (3, %s), (9, %s)",
                  (tsp(1), tsp(2), tsp(3), tsp(4)))
        c.execute("INSERT INTO clicks VALUES (1, %s)", (tsp(30),))
        want = [(ts(0), "free", 1), (ts(0), "gold", 2)]
        assert wait_for(lambda: rows(c, "SELECT * FROM per_tier"), want) == want


def test_union_all_of_streams_with_filters_and_aggregation(server):
    with connect(server) as c:
        c.execute("CREATE STREAM web (uid BIGINT, kind TEXT, ts TIMESTAMP,"
                  " WATERMARK FOR ts AS ts - INTERVAL '5 seconds')")
        c.execute("CREATE STREAM app (user_id BIGINT, ts TIMESTAMP, ok BOOLEAN,"
                  " WATERMARK FOR ts AS ts - INTERVAL '5 seconds')")
        c.execute("CREATE CONTINUOUS QUERY merged WITH (trigger = '0') AS "
                  "SELECT uid, 'web' AS src FROM web WHERE kind = 'click' "
                  "UNION ALL SELECT user_id, 'app' FROM app WHERE ok")
        c.execute("CREATE CONTINUOUS QUERY per_window WITH (trigger = '0', output_mode = 'append') AS "
                  "SELECT window_start, count(*) AS n, sum(u) AS s FROM "
                  "(SELECT uid AS u, ts FROM web UNION ALL SELECT user_id, ts FROM app WHERE ok) e "
                  "GROUP BY WINDOW(ts, INTERVAL '10 seconds')")
        c.execute("INSERT INTO web VALUES (1, 'click', %s), (2, 'view', %s), (3, 'click', %s)",
                  (tsp(1), tsp(2), tsp(11)))
        c.execute("INSERT INTO app VALUES (10, %s, true), (20, %s, false), (30, %s, true)",
                  (tsp(3), tsp(4), tsp(12)))
        want = [(1, "web"), (3, "web"), (10, "app"), (30, "app")]
        assert wait_for(lambda: rows(c, "SELECT * FROM merged"), want) == want
        # Both watermarks are at 7: nothing has closed yet.
        time.sleep(1)
        assert rows(c, "SELECT * FROM per_window") == []
        # web moves to 25 but app holds the combined watermark at 7.
        c.execute("INSERT INTO web VALUES (4, 'click', %s)", (tsp(30),))
        time.sleep(1)
        assert rows(c, "SELECT * FROM per_window") == []
        # app moves to 15: the minimum passes 10, window [0, 10) closes.
        c.execute("INSERT INTO app VALUES (40, %s, true)", (tsp(20),))
        want = [(ts(0), 3, 13)]
        assert wait_for(lambda: rows(c, "SELECT * FROM per_window"), want) == want
        # A row of app for [0, 10) is now late (dropped).  app moves to 35,
        # web holds the minimum at 25: [10, 20) closes, [20, 30) does not.
        c.execute("INSERT INTO app VALUES (50, %s, true)", (tsp(5),))
        c.execute("INSERT INTO app VALUES (60, %s, true)", (tsp(40),))
        want = [(ts(0), 3, 13), (ts(10), 2, 33)]
        assert wait_for(lambda: rows(c, "SELECT * FROM per_window"), want) == want
        # web moves to 35 too: [20, 30) closes.
        c.execute("INSERT INTO web VALUES (5, 'view', %s)", (tsp(40),))
        want = [(ts(0), 3, 13), (ts(10), 2, 33), (ts(20), 1, 40)]
        assert wait_for(lambda: rows(c, "SELECT * FROM per_window"), want) == want


def test_multi_input_query_resumes_after_restart(sluiced):
    srv = sluiced()
    with connect(srv) as c:
        c.execute("CREATE TABLE dim (k BIGINT PRIMARY KEY, v TEXT)")
        c.execute("INSERT INTO dim VALUES (1, 'one'), (2, 'two')")
        c.execute("CREATE STREAM a (k BIGINT)")
        c.execute("CREATE STREAM b (k BIGINT)")
        c.execute("CREATE CONTINUOUS QUERY j WITH (trigger = '0') AS "
                  "SELECT x.k, d.v FROM (SELECT k FROM a UNION ALL SELECT k FROM b) x "
                  "LEFT JOIN dim d ON d.k = x.k")
        c.execute("INSERT INTO a VALUES (1)")
        c.execute("INSERT INTO b VALUES (2), (3)")
        want = [(1, "one"), (2, "two"), (3, None)]
        assert wait_for(lambda: rows(c, "SELECT * FROM j"), want) == want
    srv.restart()
    with connect(srv) as c:
        c.execute("INSERT INTO b VALUES (1)")
        c.execute("INSERT INTO a VALUES (2)")
        want = [(1, "one"), (1, "one"), (2, "two"), (2, "two"), (3, None)]
        assert wait_for(lambda: rows(c, "SELECT * FROM j"), want) == want


def test_refusals_for_joins_and_set_operations(server):
    with connect(server) as c:
        c.execute("CREATE TABLE t (id BIGINT PRIMARY KEY, v TEXT)")
        c.execute("CREATE STREAM s (id BIGINT, ts TIMESTAMP)")
        c.execute("CREATE STREAM s2 (id BIGINT, ts TIMESTAMP)")
        with pytest.raises(psycopg.errors.FeatureNotSupported) as e:
            c.execute("CREATE CONTINUOUS QUERY q AS "
                      "SELECT s.id, t.v FROM s RIGHT JOIN t ON t.id = s.id")
        assert "unmatched rows of a table" in str(e.value)
        assert "LEFT JOIN" in e.value.diag.message_hint
        with pytest.raises(psycopg.errors.FeatureNotSupported) as e:
            c.execute("CREATE CONTINUOUS QUERY q AS SELECT id FROM s UNION SELECT id FROM s2")
        assert "only UNION ALL" in str(e.value)
        with pytest.raises(psycopg.errors.FeatureNotSupported) as e:
            c.execute("CREATE CONTINUOUS QUERY q AS SELECT id FROM s UNION ALL SELECT id FROM t")
        assert "every arm of a UNION ALL" in str(e.value)
        with pytest.raises(psycopg.errors.WrongObjectType):
            c.execute("CREATE CONTINUOUS QUERY q AS SELECT id FROM t")
        with pytest.raises(psycopg.errors.FeatureNotSupported) as e:
            c.execute("CREATE CONTINUOUS QUERY q WITH (output_mode = 'append') AS "
                      "SELECT window_start, count(*) FROM "
                      "(SELECT ts FROM s UNION ALL SELECT ts FROM s2) x "
                      "GROUP BY WINDOW(ts, INTERVAL '1 minute')")
        assert "every stream it reads" in str(e.value)
        # Nothing was left behind by the refused statements.
        c.execute("CREATE CONTINUOUS QUERY q AS SELECT id FROM s UNION ALL SELECT id FROM s2")
