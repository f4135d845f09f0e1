"""Continuous queries over several inputs: a stream joined to a table (INNER
and LEFT, the table read at its current version per batch, no retraction),
UNION ALL of streams with a filter per arm and an aggregation above, the
watermark of a multi-input query (the minimum of its inputs'), and the
refusals with what to do instead.
"""

import random
import re
import time

import psycopg
import pytest

from test_continuous_queries import WAIT, connect, ts, tsp, wait_for
from helpers import wait_read_through


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
        wait_read_through(c, "per_window")
        assert rows(c, "SELECT * FROM per_window") == []
        # web moves to 25 but app holds the combined watermark at 7.
        c.execute("INSERT INTO web VALUES (4, 'click', %s)", (tsp(30),))
        wait_read_through(c, "per_window")
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
        # UNION without ALL runs on the operator graph (sql-tests/cq_graph.slt).
        c.execute("CREATE CONTINUOUS QUERY q_union AS SELECT id FROM s UNION SELECT id FROM s2")
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


IMPRESSIONS = ("CREATE STREAM imps (id BIGINT, ad TEXT, ts TIMESTAMP,"
               " WATERMARK FOR ts AS ts - INTERVAL '5 seconds')")
CLICKS = ("CREATE STREAM clks (ad TEXT, ts TIMESTAMP, cost INT,"
          " WATERMARK FOR ts AS ts - INTERVAL '5 seconds')")
# A click matches an impression of the same ad in the 10 seconds after it.
ON = "ON c.ad = i.ad AND c.ts BETWEEN i.ts AND i.ts + INTERVAL '10 seconds'"


def test_interval_join_inner(server):
    with connect(server) as c:
        c.execute(IMPRESSIONS)
        c.execute(CLICKS)
        c.execute("CREATE CONTINUOUS QUERY matched WITH (trigger = '0') AS "
                  f"SELECT i.id, i.ad, c.cost FROM imps i JOIN clks c {ON}")
        c.execute("INSERT INTO imps VALUES (1, 'x', %s), (2, 'y', %s)", (tsp(0), tsp(1)))
        # In bound for 1 (x at 5), out of bound (x at 11), other key (z).
        c.execute("INSERT INTO clks VALUES ('x', %s, 10), ('x', %s, 11), ('z', %s, 12)",
                  (tsp(5), tsp(11), tsp(2)))
        want = [(1, "x", 10)]
        assert wait_for(lambda: rows(c, "SELECT * FROM matched"), want) == want
        # A later impression matches a click already kept (x at 11).
        c.execute("INSERT INTO imps VALUES (3, 'x', %s)", (tsp(4),))
        want = [(1, "x", 10), (3, "x", 10), (3, "x", 11)]
        assert wait_for(lambda: rows(c, "SELECT * FROM matched"), want) == want


def test_interval_join_left_emits_unmatched_once_watermark_passes(server):
    with connect(server) as c:
        c.execute(IMPRESSIONS)
        c.execute(CLICKS)
        c.execute("CREATE CONTINUOUS QUERY all_imps WITH (trigger = '0') AS "
                  f"SELECT i.id, c.cost FROM imps i LEFT JOIN clks c {ON}")
        c.execute("INSERT INTO imps VALUES (1, 'x', %s), (2, 'y', %s)", (tsp(0), tsp(1)))
        c.execute("INSERT INTO clks VALUES ('x', %s, 10)", (tsp(3),))
        want = [(1, 10)]
        assert wait_for(lambda: rows(c, "SELECT * FROM all_imps"), want) == want
        # Impression 2 (y at 1) can match until clicks' watermark passes 11.
        c.execute("INSERT INTO clks VALUES ('q', %s, 0)", (tsp(15),))    # watermark 10
        wait_read_through(c, "all_imps")
        assert rows(c, "SELECT * FROM all_imps") == want
        c.execute("INSERT INTO clks VALUES ('q', %s, 0)", (tsp(17),))    # watermark 12
        want = [(1, 10), (2, None)]
        assert wait_for(lambda: rows(c, "SELECT * FROM all_imps"), want) == want
        # Impression 1 matched: evicted without a NULL-padded row; and 2's
        # padded row is emitted once, whatever comes later.
        c.execute("INSERT INTO clks VALUES ('y', %s, 5)", (tsp(9),))      # late
        c.execute("INSERT INTO clks VALUES ('q', %s, 0)", (tsp(60),))
        c.execute("INSERT INTO imps VALUES (4, 'y', %s)", (tsp(50),))
        c.execute("INSERT INTO clks VALUES ('q', %s, 0)", (tsp(80),))
        c.execute("INSERT INTO imps VALUES (5, 'y', %s)", (tsp(90),))
        want = [(1, 10), (2, None), (4, None)]
        assert wait_for(lambda: rows(c, "SELECT * FROM all_imps"), want) == want


def test_interval_join_right_outer_and_state_eviction(server):
    with connect(server) as c:
        c.execute(IMPRESSIONS)
        c.execute(CLICKS)
        c.execute("CREATE CONTINUOUS QUERY all_clicks WITH (trigger = '0') AS "
                  f"SELECT i.id, c.ad, c.cost FROM imps i RIGHT JOIN clks c {ON}")
        c.execute("INSERT INTO clks VALUES ('x', %s, 10), ('w', %s, 20)", (tsp(5), tsp(6)))
        c.execute("INSERT INTO imps VALUES (1, 'x', %s)", (tsp(0),))
        want = [(1, "x", 10)]
        assert wait_for(lambda: rows(c, "SELECT * FROM all_clicks"), want) == want
        # The click w at 6 could match an impression at [-4, 6]: once the
        # impressions' watermark passes 6 it is emitted with NULLs.
        c.execute("INSERT INTO imps VALUES (2, 'k', %s)", (tsp(12),))
        want = [(1, "x", 10), (None, "w", 20)]
        assert wait_for(lambda: rows(c, "SELECT * FROM all_clicks"), want) == want


def test_interval_join_refusals(server):
    with connect(server) as c:
        c.execute(IMPRESSIONS)
        c.execute(CLICKS)
        c.execute("CREATE STREAM raw (ad TEXT, ts TIMESTAMP)")
        with pytest.raises(psycopg.errors.FeatureNotSupported) as e:
            c.execute("CREATE CONTINUOUS QUERY q AS "
                      "SELECT i.id FROM imps i JOIN clks c ON c.ad = i.ad")
        assert "needs a time bound" in str(e.value)
        assert "BETWEEN" in e.value.diag.message_hint
        with pytest.raises(psycopg.errors.FeatureNotSupported) as e:
            c.execute("CREATE CONTINUOUS QUERY q AS SELECT i.id FROM imps i JOIN clks c "
                      "ON c.ad = i.ad AND c.ts >= i.ts")
        assert "needs a time bound" in str(e.value)
        with pytest.raises(psycopg.errors.FeatureNotSupported) as e:
            c.execute("CREATE CONTINUOUS QUERY q AS SELECT i.id FROM imps i JOIN raw c "
                      "ON c.ad = i.ad AND c.ts BETWEEN i.ts AND i.ts + INTERVAL '1 minute'")
        assert "needs a watermark" in str(e.value)
        assert "WATERMARK FOR ts" in e.value.diag.message_hint
        c.execute("CREATE CONTINUOUS QUERY q AS SELECT i.id FROM imps i JOIN clks c "
                  "ON c.ad = i.ad AND c.ts BETWEEN i.ts - INTERVAL '1 minute' AND i.ts")


BATCH_LINE = re.compile(r'msg="batch committed" query=(\S+) batch=(\d+) input_rows=(\d+) '
                        r'output_rows=(\d+) late_rows=(\d+) state_rows=(\d+)')


def batches(srv, query):
    """The committed batches of a query, from the server's debug log:
    (batch, input_rows, output_rows, late_rows, state_rows) each."""
    return [tuple(int(x) for x in m.groups()[1:])
            for m in BATCH_LINE.finditer(srv.log_text()) if m.group(1) == query]


def wait_input(srv, query, total):
    """Waits until the query's batches have read `total` rows in all."""
    deadline = time.monotonic() + WAIT
    while time.monotonic() < deadline:
        if sum(b[1] for b in batches(srv, query)) >= total:
            return
        time.sleep(0.05)
    raise AssertionError(f"{query} did not read {total} rows")


@pytest.mark.parametrize("seed", [1, 2, 3])
def test_oracle_interval_join_equals_batch_join_over_rows_not_late(sluiced, seed):
    """For seeded random out-of-order impressions and clicks fed in chunks
    (each chunk its own batch), the LEFT interval join's final output equals
    a batch join over the rows that were not late; the late-row count and
    the kept state after the watermarks pass match too."""
    rng = random.Random(seed)
    delay, bound = 5000, 8000     # ms

    def events(n):
        out, t = [], 0
        for i in range(n):
            t += rng.randint(0, 900)
            jitter = rng.randint(0, 6000) if rng.random() < 0.85 else rng.randint(0, 20000)
            out.append((i, rng.choice("abcdefgh"), max(0, t - jitter)))
        return out

    imps, clks = events(150), events(150)
    srv = sluiced("--log-level", "debug")
    with connect(srv) as c:
        c.execute(f"CREATE STREAM imps (id BIGINT, ad TEXT, ts TIMESTAMP,"
                  f" WATERMARK FOR ts AS ts - INTERVAL '{delay // 1000} seconds')")
        c.execute(f"CREATE STREAM clks (id BIGINT, ad TEXT, ts TIMESTAMP,"
                  f" WATERMARK FOR ts AS ts - INTERVAL '{delay // 1000} seconds')")
        c.execute("CREATE CONTINUOUS QUERY j WITH (trigger = '0') AS "
                  "SELECT i.id AS imp, c.id AS clk FROM imps i LEFT JOIN clks c ON c.ad = i.ad AND "
                  f"c.ts BETWEEN i.ts AND i.ts + INTERVAL '{bound // 1000} seconds'")
        wm = {"imps": None, "clks": None}
        kept = {"imps": [], "clks": []}
        late = 0
        fed = 0
        pos = {"imps": 0, "clks": 0}
        src = {"imps": imps, "clks": clks}
        flush = {"imps": (1000, "flush-i", 10 ** 6), "clks": (1000, "flush-c", 10 ** 6)}
        plan = []
        while pos["imps"] < len(imps) or pos["clks"] < len(clks):
            name = rng.choice([n for n in ("imps", "clks") if pos[n] < len(src[n])])
            k = rng.randint(3, 20)
            plan.append((name, src[name][pos[name]:pos[name] + k]))
            pos[name] += k
        plan += [("imps", [flush["imps"]]), ("clks", [flush["clks"]])]
        for name, chunk in plan:
            values = ", ".join(["(%s, %s, %s)"] * len(chunk))
            c.execute(f"INSERT INTO {name} VALUES " + values,
                      [v for i, ad, t in chunk for v in (i, ad, tsp(t / 1000))])
            fed += len(chunk)
            wait_input(srv, "j", fed)
            for row in chunk:
                if wm[name] is not None and row[2] < wm[name]:
                    late += 1
                else:
                    kept[name].append(row)
            m = max(t for _, _, t in chunk) - delay
            wm[name] = m if wm[name] is None else max(wm[name], m)
        want = []
        for i, ad, t in kept["imps"]:
            if ad == "flush-i":
                continue        # still open: the clicks' watermark is before its end
            matches = [ci for ci, cad, ct in kept["clks"] if cad == ad and t <= ct <= t + bound]
            want += [(i, ci) for ci in matches] or [(i, None)]
        want.sort(key=lambda r: (r[0], r[1] is None, r[1]))
        got = wait_for(lambda: rows(c, "SELECT * FROM j"), want)
        assert got == want
        done = batches(srv, "j")
        assert sum(b[3] for b in done) == late
        # Everything but the two flush rows has been evicted.
        assert done[-1][4] == 2


def test_windowed_count_over_interval_join(server):
    with connect(server) as c:
        c.execute(IMPRESSIONS)
        c.execute(CLICKS)
        c.execute("CREATE CONTINUOUS QUERY per_ad WITH (trigger = '0', output_mode = 'append') AS "
                  "SELECT window_start, i.ad, count(*) AS n, sum(c.cost) AS cost "
                  f"FROM imps i JOIN clks c {ON} "
                  "GROUP BY WINDOW(i.ts, INTERVAL '10 seconds'), i.ad")
        c.execute("INSERT INTO imps VALUES (1, 'x', %s), (2, 'x', %s), (3, 'y', %s)",
                  (tsp(1), tsp(2), tsp(3)))
        c.execute("INSERT INTO clks VALUES ('x', %s, 10), ('y', %s, 5), ('y', %s, 7)",
                  (tsp(4), tsp(20), tsp(12)))
        # Both watermarks pass 10 once each side has seen 16: [0, 10) closes.
        c.execute("INSERT INTO imps VALUES (9, 'q', %s)", (tsp(40),))
        c.execute("INSERT INTO clks VALUES ('q', %s, 0)", (tsp(40),))
        want = [(ts(0), "x", 2, 20), (ts(0), "y", 1, 7)]
        assert wait_for(lambda: rows(c, "SELECT * FROM per_ad"), want) == want


def test_interval_join_full_outer(server):
    with connect(server) as c:
        c.execute(IMPRESSIONS)
        c.execute(CLICKS)
        c.execute("CREATE CONTINUOUS QUERY everything WITH (trigger = '0') AS "
                  f"SELECT i.id, c.ad, c.cost FROM imps i FULL JOIN clks c {ON}")
        c.execute("INSERT INTO imps VALUES (1, 'x', %s), (2, 'y', %s)", (tsp(0), tsp(1)))
        c.execute("INSERT INTO clks VALUES ('x', %s, 10), ('z', %s, 20)", (tsp(2), tsp(3)))
        want = [(1, "x", 10)]
        assert wait_for(lambda: rows(c, "SELECT * FROM everything"), want) == want
        # Both watermarks reach 25: impression 2 and click z can match no more.
        c.execute("INSERT INTO imps VALUES (9, 'q', %s)", (tsp(30),))
        c.execute("INSERT INTO clks VALUES ('r', %s, 0)", (tsp(30),))
        want = [(1, "x", 10), (2, None, None), (None, "z", 20)]
        assert wait_for(lambda: rows(c, "SELECT * FROM everything"), want) == want


def test_interval_join_state_survives_restart(sluiced):
    srv = sluiced()
    with connect(srv) as c:
        c.execute(IMPRESSIONS)
        c.execute(CLICKS)
        c.execute("CREATE CONTINUOUS QUERY all_imps WITH (trigger = '0') AS "
                  f"SELECT i.id, c.cost FROM imps i LEFT JOIN clks c {ON}")
        c.execute("INSERT INTO imps VALUES (1, 'x', %s), (2, 'y', %s)", (tsp(0), tsp(1)))
        c.execute("INSERT INTO clks VALUES ('x', %s, 10)", (tsp(3),))
        want = [(1, 10)]
        assert wait_for(lambda: rows(c, "SELECT * FROM all_imps"), want) == want
    srv.restart()
    with connect(srv) as c:
        # The kept impression 2 matches a click after the restart; both are
        # then evicted without a NULL-padded row.
        c.execute("INSERT INTO clks VALUES ('y', %s, 7)", (tsp(6),))
        c.execute("INSERT INTO clks VALUES ('q', %s, 0)", (tsp(40),))
        want = [(1, 10), (2, 7)]
        assert wait_for(lambda: rows(c, "SELECT * FROM all_imps"), want) == want
        c.execute("INSERT INTO imps VALUES (3, 'x', %s)", (tsp(50),))
        c.execute("INSERT INTO clks VALUES ('q', %s, 0)", (tsp(90),))
        want = [(1, 10), (2, 7), (3, None)]
        assert wait_for(lambda: rows(c, "SELECT * FROM all_imps"), want) == want


def test_interval_join_with_huge_bounds_and_extreme_times(server):
    """Bounds and event times near the ends of the timestamp range: the
    state's time ranges saturate instead of overflowing (the sanitizer
    build would stop the server)."""
    with connect(server) as c:
        c.execute(IMPRESSIONS)
        c.execute(CLICKS)
        c.execute("CREATE CONTINUOUS QUERY wide WITH (trigger = '0') AS "
                  "SELECT i.id, c.cost FROM imps i LEFT JOIN clks c ON c.ad = i.ad AND "
                  "c.ts BETWEEN i.ts AND i.ts + INTERVAL '100000000 days'")
        c.execute("INSERT INTO imps VALUES (1, 'x', '2026-01-01'), "
                  "(2, 'lonely', '294276-12-31 00:00:00')")
        c.execute("INSERT INTO clks VALUES ('x', '2026-01-02', 5), ('y', '294276-12-30', 6)")
        want = [(1, 5)]
        assert wait_for(lambda: rows(c, "SELECT * FROM wide"), want) == want
        # Both watermarks are now near the end of time: a later 2026 row is
        # late, dropped and counted; the query goes on.
        c.execute("INSERT INTO imps VALUES (3, 'x', '2026-01-01')")
        c.execute("INSERT INTO clks VALUES ('w', '294276-12-31 00:00:02', 7)")
        wait_read_through(c, "wide")
        assert rows(c, "SELECT * FROM wide") == want
        assert "continuous query failed" not in server.log_text()


def test_interval_join_into_stream_chains(server):
    with connect(server) as c:
        c.execute(IMPRESSIONS)
        c.execute(CLICKS)
        c.execute("CREATE STREAM matches (id BIGINT, cost INT)")
        c.execute("CREATE CONTINUOUS QUERY m INTO matches WITH (trigger = '0') AS "
                  f"SELECT i.id, c.cost FROM imps i LEFT JOIN clks c {ON}")
        c.execute("CREATE CONTINUOUS QUERY spend WITH (trigger = '0') AS "
                  "SELECT count(*) AS n, sum(cost) AS total FROM matches")
        c.execute("INSERT INTO imps VALUES (1, 'x', %s), (2, 'y', %s)", (tsp(0), tsp(1)))
        c.execute("INSERT INTO clks VALUES ('x', %s, 10), ('q', %s, 0)", (tsp(2), tsp(30)))
        want = [(2, 10)]
        assert wait_for(lambda: rows(c, "SELECT * FROM spend"), want) == want
        assert rows(c, "SELECT * FROM matches") == [(1, 10), (2, None)]
