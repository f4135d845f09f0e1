"""Joins, UNION ALL and SUBSCRIBE together with what main added beside them:
CREATE OR REPLACE refuses a change of join keys or inputs (the fingerprint's
source part is the input tree), EXPLAIN CONTINUOUS QUERY shows the inputs,
sys.query_progress is filled for join queries with the backlog summed over
inputs, DROP of any input is refused, privileges cover every input and
SUBSCRIBE, a CancelRequest ends a SUBSCRIBE with 57014 through
session_cancel, an input's watermark is per partition with idle_timeout,
and late_rows (not supported over several inputs yet) is refused with
0A000.
"""

import time

import psycopg
import pytest

from test_continuous_queries import connect, ts, tsp, wait_for
from test_cq_joins import CLICKS, IMPRESSIONS, ON, rows
from test_roles import connect_as, sqlstate_of
from test_subscribe import start_stream, take, wait_subscribed

JOINED = f"SELECT i.id, i.ad, c.cost FROM imps i JOIN clks c {ON}"


def make_join(c, name="matched"):
    c.execute(IMPRESSIONS)
    c.execute(CLICKS)
    c.execute(f"CREATE CONTINUOUS QUERY {name} WITH (trigger = '0') AS {JOINED}")
    c.execute("INSERT INTO imps VALUES (1, 'x', %s)", (tsp(0),))
    c.execute("INSERT INTO clks VALUES ('x', %s, 10)", (tsp(5),))
    want = [(1, "x", 10)]
    assert wait_for(lambda: rows(c, f"SELECT * FROM {name}"), want) == want


@pytest.mark.parametrize("change,detail", [
    # another join key
    ("SELECT i.id, i.ad, c.cost FROM imps i JOIN clks c ON c.cost = i.id "
     "AND c.ts BETWEEN i.ts AND i.ts + INTERVAL '10 seconds'", "c.cost"),
    # another input: a third stream in a UNION ALL arm
    ("SELECT i.id, i.ad, c.cost FROM imps i JOIN "
     "(SELECT ad, ts, cost FROM clks UNION ALL SELECT ad, ts, cost FROM clks2) c "
     "ON c.ad = i.ad AND c.ts BETWEEN i.ts AND i.ts + INTERVAL '10 seconds'", "clks2"),
])
def test_replace_refuses_a_change_of_join_keys_or_inputs(server, change, detail):
    with connect(server) as c:
        make_join(c)
        c.execute("CREATE STREAM clks2 (ad TEXT, ts TIMESTAMP, cost INT,"
                  " WATERMARK FOR ts AS ts - INTERVAL '5 seconds')")
        with pytest.raises(psycopg.errors.InvalidTableDefinition) as e:
            c.execute(f"CREATE OR REPLACE CONTINUOUS QUERY matched WITH (trigger = '0') "
                      f"AS {change}")
        assert 'cannot replace continuous query "matched": its source stream changed' \
            in str(e.value)
        assert "imps" in e.value.diag.message_detail
        assert detail in e.value.diag.message_detail.split(" before, ")[1]
        # Refused: the query runs on as it was.
        c.execute("INSERT INTO imps VALUES (2, 'x', %s)", (tsp(1),))
        want = [(1, "x", 10), (2, "x", 10)]
        assert wait_for(lambda: rows(c, "SELECT * FROM matched"), want) == want


def test_compatible_replace_of_a_join_keeps_its_state(server):
    with connect(server) as c:
        make_join(c)
        # A projection change: same inputs and keys, the kept rows go on.
        c.execute("CREATE OR REPLACE CONTINUOUS QUERY matched WITH (trigger = '0') AS "
                  f"SELECT i.id, i.ad, c.cost FROM imps i JOIN clks c {ON} WHERE c.cost > 0")
        # Matches the impression kept in the join state before the replace.
        c.execute("INSERT INTO clks VALUES ('x', %s, 11)", (tsp(6),))
        want = [(1, "x", 10), (1, "x", 11)]
        assert wait_for(lambda: rows(c, "SELECT * FROM matched"), want) == want


def test_explain_shows_join_inputs_bound_and_union_arms(server):
    with connect(server) as c:
        make_join(c)
        c.execute("CREATE TABLE ads (ad TEXT PRIMARY KEY, owner TEXT)")
        c.execute("CREATE CONTINUOUS QUERY owned WITH (trigger = '0') AS "
                  "SELECT c.ad, a.owner FROM clks c LEFT JOIN ads a ON a.ad = c.ad")
        c.execute("CREATE CONTINUOUS QUERY both_arms WITH (trigger = '0', "
                  "output_mode = 'update') AS SELECT ad, count(*) AS n FROM "
                  "(SELECT ad FROM imps UNION ALL SELECT ad FROM clks) u GROUP BY ad")
        text = "\n".join(r[0] for r in c.execute("EXPLAIN CONTINUOUS QUERY matched"))
        assert "-> Interval join (inner, stream-stream)" in text
        assert "Keys: i.ad = c.ad" in text or "Keys: c.ad = i.ad" in text, text
        assert "Time bound: 0 s <= right.ts - left.ts <= 10 s" in text, text
        assert "State: the rows of each side, in RocksDB ('J' + query oid), a chunk per " \
               "156250 us of event time and batch" in text, text      # 10 s / 64
        assert "right watermark passes its time + 10 s" in text
        assert "-> Source: stream imps (internal)" in text
        assert "-> Source: stream clks (internal)" in text
        assert text.count("Watermark: max(ts) - 5 s") == 2
        assert text.index("-> Interval join") < text.index("-> Source: stream imps") \
            < text.index("-> Source: stream clks")
        text = "\n".join(r[0] for r in c.execute("EXPLAIN CONTINUOUS QUERY owned"))
        assert "-> Join (left, stream-table" in text
        assert "-> Table: ads (read as it is at each batch" in text
        text = "\n".join(r[0] for r in c.execute("EXPLAIN CONTINUOUS QUERY both_arms"))
        assert "-> Union all" in text
        assert "stream imps" in text and "stream clks" in text


def test_progress_of_a_join_query_and_late_rows_counted(server):
    with connect(server) as c:
        make_join(c)
        # A click far older than the impressions' watermark side: late.
        c.execute("INSERT INTO imps VALUES (5, 'y', %s)", (tsp(100),))
        assert wait_for(lambda: c.execute(
            "SELECT sum(input_rows) FROM sys.query_progress WHERE query = 'matched'"
        ).fetchone()[0], 3) == 3
        c.execute("INSERT INTO clks VALUES ('y', %s, 1)", (tsp(200),))
        c.execute("INSERT INTO imps VALUES (6, 'y', %s)", (tsp(0),))      # late on its side
        assert wait_for(lambda: c.execute(
            "SELECT sum(input_rows), sum(late_rows) FROM sys.query_progress "
            "WHERE query = 'matched'").fetchone(), (5, 1)) == (5, 1)
        got = c.execute("SELECT count(*), min(backlog_rows), max(state_rows) "
                        "FROM sys.query_progress WHERE query = 'matched'").fetchone()
        assert got[0] >= 2 and got[1] == 0 and got[2] >= 1


def test_drop_of_any_input_is_refused(server):
    with connect(server) as c:
        make_join(c)
        for s in ("imps", "clks"):
            with pytest.raises(psycopg.errors.DependentObjectsStillExist) as e:
                c.execute(f"DROP STREAM {s}")
            assert "matched" in str(e.value) + (e.value.diag.message_detail or "")


def test_late_rows_are_refused_over_several_inputs(server):
    with connect(server) as c:
        c.execute(IMPRESSIONS)
        c.execute(CLICKS)
        c.execute("CREATE STREAM late_imps (id BIGINT, ad TEXT, ts TIMESTAMP)")
        with pytest.raises(psycopg.errors.FeatureNotSupported) as e:
            c.execute("CREATE CONTINUOUS QUERY q WITH (late_rows = 'late_imps') AS "
                      "SELECT window_start, count(*) AS n FROM imps i JOIN clks c "
                      f"{ON} GROUP BY WINDOW(i.ts, INTERVAL '1 minute')")
        assert "late_rows" in str(e.value)


def test_privileges_cover_every_input_and_subscribe(server):
    with connect(server) as admin:
        make_join(admin)
        admin.execute("CREATE ROLE bob LOGIN")
        admin.execute("GRANT SELECT ON imps TO bob")
        with connect_as(server, "bob") as bob:
            create = (f"CREATE CONTINUOUS QUERY bobs WITH (trigger = '0') AS {JOINED}")
            with pytest.raises(psycopg.errors.InsufficientPrivilege) as e:
                bob.execute(create)
            assert "clks" in str(e.value)
            # SUBSCRIBE reads the result: SELECT on the query.
            assert sqlstate_of(lambda: bob.execute("SUBSCRIBE matched").fetchone()) == "42501"
            admin.execute("GRANT SELECT ON clks TO bob")
            bob.execute(create)


def test_cancel_request_ends_subscribe_to_a_join_with_57014(server):
    with connect(server) as c:
        make_join(c)
        sub, got, ended, t = start_stream(server.dsn, "SUBSCRIBE matched")
        wait_subscribed(server)
        c.execute("INSERT INTO clks VALUES ('x', %s, 12)", (tsp(7),))
        first = take(got, 1)
        assert [r[1:] for r in first] == [("insert", 1, "x", 12)]
        sub.cancel()            # a CancelRequest: session_cancel -> subscribe_cancel
        t.join(30)
        assert not t.is_alive()
        assert len(ended) == 1 and isinstance(ended[0], psycopg.errors.QueryCanceled)
        assert ended[0].sqlstate == "57014"
        # The same connection runs statements on the thread pool again, and
        # a cancel of nothing running leaves it alone.
        assert sub.execute("SELECT count(*) FROM matched").fetchone() == (2,)
        sub.cancel()
        assert sub.execute("SELECT 1").fetchone() == (1,)
        sub.close()


def test_sliding_and_session_windows_over_union_all(server):
    with connect(server) as c:
        for s in ("a", "b"):
            c.execute(f"CREATE STREAM {s} (k INT, ts TIMESTAMP, "
                      "WATERMARK FOR ts AS ts - INTERVAL '1 second')")
        arms = "(SELECT k, ts FROM a UNION ALL SELECT k, ts FROM b) u"
        c.execute("CREATE CONTINUOUS QUERY sess WITH (trigger = '0', output_mode = 'update') "
                  f"AS SELECT window_start, window_end, k, count(*) AS n FROM {arms} "
                  "GROUP BY SESSION(ts, INTERVAL '5 seconds'), k")
        c.execute("CREATE CONTINUOUS QUERY slid WITH (trigger = '0', output_mode = 'append') "
                  f"AS SELECT window_start, k, count(*) AS n FROM {arms} "
                  "GROUP BY WINDOW(ts, INTERVAL '10 seconds', INTERVAL '5 seconds'), k")
        c.execute("INSERT INTO a VALUES (1, %s), (1, %s)", (tsp(0), tsp(3)))
        # b's row bridges a's rows' gaps: one session 0..16 s.
        c.execute("INSERT INTO b VALUES (1, %s), (1, %s)", (tsp(7), tsp(40)))
        c.execute("INSERT INTO a VALUES (1, %s), (1, %s)", (tsp(11), tsp(41)))
        want = [(ts(0), ts(16), 1, 4), (ts(40), ts(46), 1, 2)]
        assert wait_for(lambda: rows(c, "SELECT * FROM sess"), want) == want
        # Sliding windows closed by the watermark (min of a's and b's: 39 s).
        want = [(ts(-5), 1, 2), (ts(0), 1, 3), (ts(5), 1, 2), (ts(10), 1, 1)]
        assert wait_for(lambda: rows(c, "SELECT * FROM slid"), want) == want


def test_partitioned_input_of_a_union_holds_the_watermark_until_idle(server):
    """The query's watermark is the minimum over its inputs and, for a
    partitioned input, over its partitions: a silent partition holds the
    windows open until idle_timeout, then no longer counts."""
    idle = 6
    with connect(server) as c:
        c.execute("CREATE STREAM ev (p INT, ts TIMESTAMP,"
                  " WATERMARK FOR ts AS ts - INTERVAL '1 second')"
                  f" WITH (partitions = 2, partition_key = 'p', idle_timeout = '{idle} seconds')")
        c.execute("CREATE STREAM other (p INT, ts TIMESTAMP,"
                  " WATERMARK FOR ts AS ts - INTERVAL '1 second')")
        c.execute("CREATE CONTINUOUS QUERY w WITH (trigger = '100 ms', output_mode = 'append') "
                  "AS SELECT window_start, count(*) AS n FROM "
                  "(SELECT p, ts FROM ev UNION ALL SELECT p, ts FROM other) u "
                  "GROUP BY WINDOW(ts, INTERVAL '10 seconds')")
        text = "\n".join(r[0] for r in c.execute("EXPLAIN CONTINUOUS QUERY w"))
        assert "Watermark: max(ts) - 1 s, the minimum over partitions" in text
        assert f"Partitions: 2, idle_timeout {idle} s" in text
        c.execute("INSERT INTO other VALUES (9, %s)", (tsp(30),))
        c.execute("INSERT INTO ev VALUES (0, %s), (1, %s)", (tsp(1), tsp(2)))
        silent_since = time.monotonic()     # partition 1's last row
        c.execute("INSERT INTO ev VALUES (0, %s)", (tsp(15),))
        c.execute("INSERT INTO ev VALUES (2, %s)", (tsp(25),))   # partition 0
        time.sleep(1.5)
        # ev's max is 25 s, but its partition 1 is at 2 s: nothing closed.
        assert rows(c, "SELECT * FROM w") == []
        want = [(ts(0), 2), (ts(10), 1)]
        assert wait_for(lambda: rows(c, "SELECT * FROM w"), want) == want
        assert time.monotonic() - silent_since >= idle
        # [20, 30) waits for the other input (its watermark is 29 s) ... and
        # for ev: partition 0 at 25 s.
        time.sleep(1)
        assert rows(c, "SELECT * FROM w") == want
