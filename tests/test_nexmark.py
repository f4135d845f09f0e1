"""Nexmark (tools/nexmark): every query under tools/nexmark/queries, run by
sluice over the nexmark connector's events, equals an independent batch
computation in DuckDB over the same events written by
tools/nexmark/nexmark_gen.

nexmark_gen writes the events as JSON lines; DuckDB loads them into person,
auction and bid tables and runs each query in standard SQL as nexmark-flink
writes it (a regular join for q3, the max-of-aggregates for q4, the hop
windows of q5 as the five windows each bid falls in, and so on), with none
of sluice's streaming devices (time bounds, chained queries, sessions for
"the auction is over", windows emitted when they close).  The result tables
are compared row for row.

The streams and queries are the files under tools/nexmark/queries, with a
number_of_events of the issue's check (SLUICE_NEXMARK_EVENTS, default
1,000,000: about 40 s for every query under ASan), event time at 1,000 events/s so
there are many windows, and a fixed base time.  The single-stage queries
(q5 and q7 among them: one statement each in Flink's shape, on the
operator graph in output_mode 'append') run with trigger 'available_now'
and finish; the later stage of q4's pipeline (trigger '0') is waited for
until it has read everything its stream holds.  The nexmark streams are bounded, so once a query has
read them its watermark is 'infinity' and every window has closed.

Two more queries check what the end of a bounded stream emits (the
unmatched rows of a LEFT interval join, append-mode sessions); q5 and q7
run again in small batches through a SIGKILL and a restart, and in update
mode (every window's rows as they change, retracted and replaced).  Also: the
connector's options are checked (bad ones refused with a SQLSTATE
at CREATE CONTINUOUS QUERY), the JSON lines carry the 1:3:46 proportion, and
out-of-order events lose no row of a windowed query.
"""

import json
import os
import subprocess
import sys
import time
from decimal import ROUND_HALF_UP, Decimal, localcontext
from pathlib import Path

import duckdb
import psycopg
import pytest

REPO = Path(__file__).resolve().parents[1]
QUERIES = REPO / "tools" / "nexmark" / "queries"
sys.path.insert(0, str(REPO / "tools" / "nexmark"))

from nexmark_queries import queries_of, wait_done  # noqa: E402
from test_http import get, http_port, parse_metrics, value  # noqa: E402
EVENTS = int(os.environ.get("SLUICE_NEXMARK_EVENTS", "1000000"))
BASE_MS = 1767225600000          # 2026-01-01 00:00:00 UTC
RATE = 1000
WAIT = 600 + EVENTS // 500       # seconds for every query to finish under ASan
# The files, in the order they run; each one's result is the table of its name.
FILES = ["q0", "q1", "q2", "q3", "q4", "q5", "q7", "q8", "q11"]


def gen_binary():
    builds = []
    if os.environ.get("SLUICE_BIN"):
        builds.append(Path(os.environ["SLUICE_BIN"]).resolve().parents[1])
    builds += [REPO / "build-asan", REPO / "build"]
    for build in builds:
        path = build / "tools" / "nexmark" / "nexmark_gen"
        if path.exists():
            return str(path)
    pytest.fail("no nexmark_gen binary: build one (./tools/test)")


def gen_args(events, seed=1, *extra):
    return [gen_binary(), "--events", str(events), "--seed", str(seed),
            "--first-event-rate", str(RATE), "--base-time-ms", str(BASE_MS), *extra]


# ----------------------------------------------------------------- DuckDB

COLUMNS = {
    "event_type": "VARCHAR", "id": "BIGINT", "name": "VARCHAR", "email_address": "VARCHAR",
    "credit_card": "VARCHAR", "city": "VARCHAR", "state": "VARCHAR",
    "date_time": "TIMESTAMP", "extra": "VARCHAR", "item_name": "VARCHAR",
    "description": "VARCHAR", "initial_bid": "BIGINT", "reserve": "BIGINT",
    "expires": "TIMESTAMP", "seller": "BIGINT", "category": "BIGINT", "auction": "BIGINT",
    "bidder": "BIGINT", "price": "BIGINT", "channel": "VARCHAR", "url": "VARCHAR",
}
TABLES = {
    "person": "id, name, email_address, credit_card, city, state, date_time, extra",
    "auction": "id, item_name, description, initial_bid, reserve, date_time, expires, "
               "seller, category, extra",
    "bid": "auction, bidder, price, channel, url, date_time, extra",
}


def load_events(con, path):
    cols = ", ".join(f"{k}: '{v}'" for k, v in COLUMNS.items())
    con.execute(f"CREATE TABLE ev AS SELECT * FROM read_json('{path}', "
                f"format = 'newline_delimited', columns = {{{cols}}})")
    for table, columns in TABLES.items():
        con.execute(f"CREATE TABLE {table} AS SELECT {columns} FROM ev "
                    f"WHERE event_type = '{table}'")


# Each query as nexmark-flink writes it, in DuckDB's SQL.  A window is
# computed from the epoch milliseconds: start = floor(ms / size) * size.
def win(col, size_ms, k="0"):
    return f"epoch_ms((epoch_ms({col}) // {size_ms} - {k}) * {size_ms})"


ORACLE = {
    "q0": "SELECT auction, bidder, price, date_time, extra FROM bid",
    "q1": "SELECT auction, bidder, 0.908 * price, date_time, extra FROM bid",
    "q2": "SELECT auction, price FROM bid WHERE auction % 123 = 0",
    "q3": """
        SELECT P.name, P.city, P.state, A.id
          FROM auction AS A INNER JOIN person AS P ON A.seller = P.id
         WHERE A.category = 10 AND (P.state = 'OR' OR P.state = 'ID' OR P.state = 'CA')""",
    # The average as its exact sum and count (compared below).
    "q4": """
        SELECT Q.category, sum(Q.final)::HUGEINT, count(*)
          FROM (SELECT max(B.price) AS final, A.category
                  FROM auction A, bid B
                 WHERE A.id = B.auction AND B.date_time BETWEEN A.date_time AND A.expires
                 GROUP BY A.id, A.category) Q
         GROUP BY Q.category""",
    # HOP(2 s slide, 10 s size): a bid is in the 5 windows that start at its
    # 2-second slice's start and the 4 slices before.
    "q5": f"""
        WITH hop AS (
          SELECT B.auction, {win('B.date_time', 2000, 'K.k')} AS starttime
            FROM bid B, (SELECT range AS k FROM range(0, 5)) K),
        AuctionBids AS (
          SELECT auction, count(*) AS num, starttime,
                 starttime + INTERVAL 10 SECOND AS endtime
            FROM hop GROUP BY auction, starttime),
        MaxBids AS (
          SELECT max(num) AS maxn, starttime, endtime FROM AuctionBids
           GROUP BY starttime, endtime)
        SELECT A.auction, A.num, A.starttime, A.endtime
          FROM AuctionBids A JOIN MaxBids M
            ON A.starttime = M.starttime AND A.endtime = M.endtime AND A.num >= M.maxn""",
    "q7": f"""
        SELECT B.auction, B.price, B.bidder, B.date_time, B.extra
          FROM bid B
          JOIN (SELECT max(price) AS maxprice,
                       {win('date_time', 10000)} + INTERVAL 10 SECOND AS date_time
                  FROM bid GROUP BY 2) B1
            ON B.price = B1.maxprice
         WHERE B.date_time BETWEEN B1.date_time - INTERVAL 10 SECOND AND B1.date_time""",
    "q8": f"""
        SELECT P.id, P.name, P.starttime
          FROM (SELECT id, name, {win('date_time', 10000)} AS starttime
                  FROM person GROUP BY id, name, starttime) P
          JOIN (SELECT seller, {win('date_time', 10000)} AS starttime
                  FROM auction GROUP BY seller, starttime) A
            ON P.id = A.seller AND P.starttime = A.starttime""",
    # Sessions with a 10-second gap: a bid 10 seconds or more after the
    # bidder's previous one starts a new session, which ends 10 seconds
    # after its last bid.
    "q11": """
        WITH marked AS (
          SELECT bidder, date_time,
                 CASE WHEN date_time - lag(date_time) OVER w < INTERVAL 10 SECOND
                      THEN 0 ELSE 1 END AS first
            FROM bid WINDOW w AS (PARTITION BY bidder ORDER BY date_time)),
        numbered AS (
          SELECT bidder, date_time,
                 sum(first) OVER (PARTITION BY bidder ORDER BY date_time, first DESC
                                  ROWS UNBOUNDED PRECEDING) AS session
            FROM marked)
        SELECT bidder, count(*), min(date_time), max(date_time) + INTERVAL 10 SECOND
          FROM numbered GROUP BY bidder, session""",
}


# More queries over the same streams, for what the end of a bounded stream
# must emit: the unmatched rows of an outer join and sessions in append mode.
EXTRA = {
    "end_left": (
        "CREATE CONTINUOUS QUERY end_left WITH (trigger = 'available_now') AS "
        "SELECT p.id, a.id AS auction FROM person p LEFT JOIN auction a "
        "ON a.seller = p.id AND a.date_time BETWEEN p.date_time "
        "AND p.date_time + INTERVAL '10 seconds'",
        "SELECT p.id, a.id FROM person p LEFT JOIN auction a "
        "ON a.seller = p.id AND a.date_time BETWEEN p.date_time "
        "AND p.date_time + INTERVAL 10 SECOND"),
    "end_sessions": (
        "CREATE CONTINUOUS QUERY end_sessions WITH (trigger = 'available_now', "
        "output_mode = 'append') AS SELECT bidder, count(*) AS n, window_start, window_end "
        "FROM bid GROUP BY SESSION(date_time, INTERVAL '10 seconds'), bidder",
        ORACLE["q11"]),
}


# q5 and q7 of tools/nexmark/queries (one statement each, Flink's shape,
# output_mode 'append': each window's rows once, when it closes) again in
# update mode, on the operator graph (docs/engine.md, "Queries on the
# operator graph"): every window's rows as they change, retracted and
# replaced while it is open; at the end the same rows as DuckDB's.
def update_mode(q):
    sql = (QUERIES / f"{q}.sql").read_text()
    sql = sql.replace(f"CREATE CONTINUOUS QUERY {q}\n", f"CREATE CONTINUOUS QUERY {q}_update\n")
    sql = sql.replace("output_mode = 'append'", "output_mode = 'update'")
    assert f"{q}_update" in sql and "'update'" in sql
    return sql


GRAPH = {"q5_update": (update_mode("q5"), ORACLE["q5"]),
         "q7_update": (update_mode("q7"), ORACLE["q7"])}


@pytest.fixture(scope="module")
def duck(tmp_path_factory):
    path = tmp_path_factory.mktemp("nexmark") / "events.jsonl"
    with open(path, "wb") as out:
        subprocess.run(gen_args(EVENTS), check=True, stdout=out, timeout=600)
    con = duckdb.connect()
    load_events(con, path)
    yield con
    con.close()


def oracle(duck, q):
    return sorted(tuple(r) for r in duck.execute(ORACLE[q]).fetchall())


# ----------------------------------------------------------------- sluice

def streams_sql():
    sql = (QUERIES / "streams.sql").read_text()
    sql = sql.replace("number_of_events = 10000000", f"number_of_events = {EVENTS}")
    sql = sql.replace("seed = 1,", f"seed = 1, first_event_rate = {RATE}, base_time_ms = {BASE_MS},")
    assert sql.count(f"number_of_events = {EVENTS}") == 3
    return sql


@pytest.fixture(scope="module")
def results(sluiced_module):
    """Runs every query file; returns {name: sorted rows} of the result tables
    and {name: watermark text} from sys.queries."""
    server = sluiced_module()
    with psycopg.connect(server.dsn, autocommit=True) as c:
        c.execute(streams_sql())
        queries = []
        for q in FILES:
            sql = (QUERIES / f"{q}.sql").read_text()
            c.execute(sql)
            queries += queries_of(sql)
        assert [name for name, _ in queries] == [
            "q0", "q1", "q2", "q3", "q4_winning", "q4", "q5", "q7", "q8", "q11"]
        for name, (sql, _) in {**EXTRA, **GRAPH}.items():
            c.execute(sql)
            queries.append((name, "available_now"))
        wait_done(c, queries, WAIT)
        out = {q: sorted(tuple(r) for r in c.execute(f"SELECT * FROM {q}").fetchall())
               for q in FILES + list(EXTRA) + list(GRAPH)}
        out["watermarks"] = dict(c.execute(
            "SELECT name, watermark::text FROM sys.queries").fetchall())
        yield out
    server.check()


SLOW = pytest.mark.timeout(WAIT + 300)


@SLOW
@pytest.mark.parametrize("q", ["q0", "q1", "q2", "q3", "q5", "q7", "q8", "q11"])
def test_query_equals_duckdb(results, duck, q):
    want = oracle(duck, q)
    assert len(want) > 0
    got = results[q]
    assert len(got) == len(want), f"{q}: sluice {len(got)} rows, DuckDB {len(want)}"
    assert got == want


@SLOW
def test_q4_average_equals_duckdb(results, duck):
    """sluice's avg is numeric with PostgreSQL's scale; DuckDB gives the exact
    sum and count, whose quotient rounded to that scale must be it."""
    want = {cat: (Decimal(s), n) for cat, s, n in duck.execute(ORACLE["q4"]).fetchall()}
    got = dict(results["q4"])
    assert sorted(got) == sorted(want) == [10, 11, 12, 13, 14]
    for cat, avg in got.items():
        s, n = want[cat]
        with localcontext() as ctx:
            ctx.prec = 60
            exact = (s / n).quantize(Decimal(1).scaleb(avg.as_tuple().exponent),
                                     rounding=ROUND_HALF_UP)
        assert avg == exact, (cat, avg, s, n)


@SLOW
def test_bounded_streams_end_with_an_infinite_watermark(results):
    """A query that read its nexmark streams to their end has the watermark
    'infinity' (so its last windows closed)."""
    wm = results["watermarks"]
    for q in ["q3", "q4_winning", "q5", "q7", "q8", "q11", "q5_update", "q7_update"]:
        assert wm[q] == "infinity", (q, wm[q])


@SLOW
@pytest.mark.parametrize("q", list(EXTRA))
def test_end_of_stream_emits_what_the_watermark_held(results, duck, q):
    """At the end of the bounded streams, a LEFT interval join has emitted
    its unmatched persons (NULL-padded) and an append-mode session query its
    last sessions: both equal DuckDB's batch result."""
    want = sorted(tuple(r) for r in duck.execute(EXTRA[q][1]).fetchall())
    if q == "end_left":
        assert any(r[1] is None for r in want) and any(r[1] is not None for r in want)
    assert results[q] == want


@SLOW
@pytest.mark.parametrize("q", list(GRAPH))
def test_graph_query_in_flinks_shape_equals_duckdb(results, duck, q):
    """q5 and q7 in update mode (their aggregates' rows retracted and
    replaced as windows change, the joins over them following): at the
    end DuckDB's rows, none twice."""
    want = sorted(tuple(r) for r in duck.execute(GRAPH[q][1]).fetchall())
    assert len(want) > 0
    assert results[q] == want


def test_generator_proportion_and_ids(duck):
    kinds = dict(duck.execute("SELECT event_type, count(*) FROM ev GROUP BY 1").fetchall())
    assert kinds == {"person": EVENTS // 50, "auction": 3 * EVENTS // 50, "bid": 46 * EVENTS // 50}
    for table in ("person", "auction"):
        lo, hi, n, d = duck.execute(f"SELECT min(id), max(id), count(*), count(DISTINCT id) "
                                    f"FROM {table}").fetchone()
        assert (lo, hi, d) == (1000, 999 + n, n)
    # in event-time order, RATE events per second
    first, last, unordered = duck.execute(
        "SELECT min(date_time), max(date_time), "
        "count(*) FILTER (WHERE date_time < prev) FROM "
        "(SELECT date_time, lag(date_time) OVER (ORDER BY rowid) AS prev FROM ev)").fetchone()
    assert unordered == 0
    assert int((last - first).total_seconds() * 1000) == (EVENTS - 1) * 1000 // RATE
    # the same seed, a range generated on its own: the same events
    out = subprocess.run(gen_args(100, 1, "--from", "4321"), check=True, capture_output=True,
                         text=True).stdout
    again = [json.loads(line) for line in out.splitlines()]
    head = subprocess.run(gen_args(4421), check=True, capture_output=True,
                          text=True).stdout.splitlines()[4321:]
    assert again == [json.loads(line) for line in head]


def test_infinite_watermark_shown(sluiced):
    """The end-of-input watermark as each view shows it: sys.queries and
    sys.query_progress 'infinity', EXPLAIN CONTINUOUS QUERY "infinity", and
    /metrics +Inf (no int64 overflow adding the epoch to it)."""
    server = sluiced("--http-port", "0")
    with psycopg.connect(server.dsn, autocommit=True) as c:
        c.execute(f"""CREATE STREAM b (price bigint, date_time timestamp,
                        WATERMARK FOR date_time AS date_time - INTERVAL '4 seconds')
                      WITH (connector = 'nexmark', table = 'bid', seed = 1,
                            number_of_events = 5000, events_per_second = 0,
                            first_event_rate = {RATE}, base_time_ms = {BASE_MS})""")
        c.execute("CREATE CONTINUOUS QUERY w WITH (trigger = 'available_now', "
                  "output_mode = 'append') AS SELECT window_start, max(price) AS m "
                  "FROM b GROUP BY WINDOW(date_time, INTERVAL '1 second')")
        wait_done(c, [("w", "available_now")], WAIT)
        # 5 seconds of events: every 1-second window, the last ones too
        assert c.execute("SELECT count(*) FROM w").fetchone()[0] == 5
        assert c.execute("SELECT watermark::text FROM sys.queries "
                         "WHERE name = 'w'").fetchone()[0] == "infinity"
        assert c.execute("SELECT watermark::text FROM sys.query_progress WHERE query = 'w' "
                         "ORDER BY batch_id DESC LIMIT 1").fetchone()[0] == "infinity"
        plan = "\n".join(r[0] for r in c.execute("EXPLAIN CONTINUOUS QUERY w").fetchall())
        assert "watermark infinity" in plan, plan
    status, _, text = get(http_port(server), "/metrics")
    assert status == 200
    assert value(parse_metrics(text), "sluice_query_watermark_seconds", query="w") == float("inf")


def test_paced_output():
    """--events-per-second: the same lines, no faster than the pace (a lower
    bound only: a loaded machine may be slower)."""
    t0 = time.monotonic()
    paced = subprocess.run(gen_args(1500, 1, "--events-per-second", "1000"), check=True,
                           capture_output=True, text=True, timeout=300).stdout
    assert time.monotonic() - t0 >= 1.45
    assert paced == subprocess.run(gen_args(1500), check=True, capture_output=True,
                                   text=True).stdout


BAD = [
    ("", "22023"),                                      # no table
    ("table = 'bids'", "22023"),
    ("table = 'bid', events_per_second = 0", "22023"),  # unbounded and unpaced
    ("table = 'bid', first_event_rate = -5", "22023"),
    ("table = 'bid', seed = 'x'", "22023"),
    ("table = 'bid', out_of_order_group_size = 4", "22023"),  # not a multiple of 50
]


@pytest.mark.parametrize("options,sqlstate", BAD)
def test_bad_options_refused(sluiced_module, options, sqlstate):
    """The connector's options are read at CREATE STREAM, as a query will
    read them: a bad one fails the CREATE with its SQLSTATE and leaves no
    stream (before, it failed only the first CREATE CONTINUOUS QUERY)."""
    server = sluiced_module()
    name = f"bad{BAD.index((options, sqlstate))}"
    with psycopg.connect(server.dsn, autocommit=True) as c:
        opts = "connector = 'nexmark'" + (", " + options if options else "")
        with pytest.raises(psycopg.Error) as exc:
            c.execute(f"CREATE STREAM {name} (auction bigint, date_time timestamp) WITH ({opts})")
        assert exc.value.sqlstate == sqlstate, str(exc.value)
        assert c.execute("SELECT count(*) FROM sys.streams WHERE name = %s",
                         (name,)).fetchone() == (0,)
    server.check()


def test_wrong_column_refused(sluiced_module):
    server = sluiced_module()
    with psycopg.connect(server.dsn, autocommit=True) as c:
        with pytest.raises(psycopg.Error) as exc:
            c.execute("CREATE STREAM wrongcol (auction bigint, colour text) "
                      "WITH (connector = 'nexmark', table = 'bid', number_of_events = 100)")
        assert exc.value.sqlstate == "42703"
        assert "bidder" in (exc.value.diag.message_hint or "")


def test_out_of_order_groups(sluiced_module, tmp_path):
    """out_of_order_group_size = 1000: the stream holds nexmark_gen's bids
    (their order, shuffled within each group, is checked in
    tests/unit/test_nexmark.c), and a windowed query over them, with the
    4-second watermark, loses none (DuckDB computes the maxima)."""
    n = 50_000
    path = tmp_path / "ooo.jsonl"
    with open(path, "wb") as out:
        subprocess.run(gen_args(n, 3, "--table", "bid", "--out-of-order-group-size", "1000"),
                       check=True, stdout=out, timeout=300)
    con = duckdb.connect()
    load_events(con, path)
    bids = con.execute("SELECT auction, price, date_time FROM bid").fetchall()
    assert [b[2] for b in bids] != sorted(b[2] for b in bids)
    best = sorted(tuple(r) for r in con.execute(
        f"SELECT {win('date_time', 10000)} AS s, max(price) FROM bid GROUP BY s").fetchall())
    con.close()
    server = sluiced_module()
    with psycopg.connect(server.dsn, autocommit=True) as c:
        c.execute(f"""CREATE STREAM bid_ooo (auction bigint, price bigint, date_time timestamp,
                        WATERMARK FOR date_time AS date_time - INTERVAL '4 seconds')
                      WITH (connector = 'nexmark', table = 'bid', seed = 3,
                            number_of_events = {n}, events_per_second = 0,
                            first_event_rate = {RATE}, base_time_ms = {BASE_MS},
                            out_of_order_group_size = 1000)""")
        c.execute("CREATE CONTINUOUS QUERY ooo_rows WITH (trigger = 'available_now') "
                  "AS SELECT auction, price, date_time FROM bid_ooo")
        c.execute("CREATE CONTINUOUS QUERY ooo_max WITH (trigger = 'available_now', "
                  "output_mode = 'append') AS SELECT window_start, max(price) AS maxprice "
                  "FROM bid_ooo GROUP BY WINDOW(date_time, INTERVAL '10 seconds')")
        deadline = time.monotonic() + WAIT
        while time.monotonic() < deadline:
            st = dict(c.execute("SELECT name, status FROM sys.queries "
                                "WHERE name LIKE 'ooo%'").fetchall())
            if set(st.values()) <= {"finished", "failed"} and len(st) == 2:
                break
            time.sleep(0.5)
        assert st == {"ooo_rows": "finished", "ooo_max": "finished"}
        got = sorted(c.execute("SELECT auction, price, date_time FROM ooo_rows").fetchall())
        assert got == sorted(bids)
        assert sorted(c.execute("SELECT * FROM ooo_max").fetchall()) == best


@pytest.mark.timeout(900)
def test_q5_q7_survive_a_crash(sluiced, tmp_path):
    """q5 and q7 (one continuous query each, on the operator graph) in
    small batches, the server killed with SIGKILL while they run and started
    again: their results still equal DuckDB's, no row lost or doubled."""
    n = 40_000
    path = tmp_path / "events.jsonl"
    with open(path, "wb") as out:
        subprocess.run(gen_args(n), check=True, stdout=out, timeout=300)
    con = duckdb.connect()
    load_events(con, path)
    want = {q: sorted(tuple(r) for r in con.execute(ORACLE[q]).fetchall()) for q in ("q5", "q7")}
    con.close()
    server = sluiced()
    queries = []
    with psycopg.connect(server.dsn, autocommit=True) as c:
        c.execute(streams_sql().replace(f"number_of_events = {EVENTS}", f"number_of_events = {n}"))
        for q in ("q5", "q7"):
            # batches of 1,000 rows
            sql = (QUERIES / f"{q}.sql").read_text().replace(
                "trigger = 'available_now'", "trigger = 'available_now', max_offsets_per_trigger = 1000")
            assert "max_offsets_per_trigger = 1000" in sql
            c.execute(sql)
            queries += queries_of(sql)
        deadline = time.monotonic() + WAIT
        while time.monotonic() < deadline:
            done = c.execute("SELECT count(*) FROM sys.query_progress "
                             "WHERE query IN ('q5', 'q7')").fetchone()[0]
            if done >= 4:
                break
            time.sleep(0.1)
    server.kill()
    server.restart()
    with psycopg.connect(server.dsn, autocommit=True) as c:
        wait_done(c, queries, WAIT)
        # the kill came mid-run: batches ran after the restart (progress is
        # kept in memory, so these are the restarted server's)
        after = c.execute("SELECT count(*) FROM sys.query_progress "
                          "WHERE query IN ('q5', 'q7')").fetchone()[0]
        assert after > 0
        for q in ("q5", "q7"):
            got = sorted(tuple(r) for r in c.execute(f"SELECT * FROM {q}").fetchall())
            assert len(got) == len(want[q]) > 0, q
            assert got == want[q], q
