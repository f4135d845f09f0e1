"""Continuous queries on the operator graph against DuckDB, over random rows
in random batch splits (issue 21; docs/engine.md, "Queries on the operator
graph").

Two streams of (k, v, ts) rows get random inserts in several batches (one
INSERT per stream per step, of 1 to 40 rows, keys and values from small
ranges so that groups change, appear and vanish from the answers); DuckDB
holds the same rows in two tables.  After every step each query's result
table must equal DuckDB's answer to the same SELECT over the tables
(WINDOW(ts, size) written as the window's start).  The watermark delay is
a day, so no row is late and the answers are the batch answers.  A fixed
list of seeds runs here; SLUICE_GRAPH_SEEDS=N runs N more (a longer run).
"""

import os
import random
import time
from datetime import datetime, timedelta

import duckdb
import psycopg
import pytest

T0 = datetime(2026, 1, 1, 12, 0, 0)
STEPS = 8
WAIT = 60

# name: (the continuous query's SELECT over s and s2, DuckDB's over t and t2)
QUERIES = {
    "max_of_window_counts": (
        "SELECT k, max(c) AS m FROM (SELECT window_start, k, count(*) AS c FROM s "
        "GROUP BY WINDOW(ts, INTERVAL '10 seconds'), k) x GROUP BY k",
        "SELECT k, max(c) FROM (SELECT time_bucket(INTERVAL 10 SECOND, ts) AS w, k, "
        "count(*) AS c FROM t GROUP BY w, k) x GROUP BY k"),
    "histogram": (
        "SELECT n, count(*) AS keys FROM (SELECT k, count(*) AS n FROM s GROUP BY k) x "
        "GROUP BY n",
        "SELECT n, count(*) FROM (SELECT k, count(*) AS n FROM t GROUP BY k) x GROUP BY n"),
    "join_of_aggregates": (
        "SELECT a.k, a.n, b.total FROM (SELECT k, count(*) AS n FROM s GROUP BY k) a "
        "JOIN (SELECT k, sum(v) AS total FROM s2 GROUP BY k) b ON a.k = b.k",
        "SELECT a.k, a.n, b.total FROM (SELECT k, count(*) AS n FROM t GROUP BY k) a "
        "JOIN (SELECT k, sum(v) AS total FROM t2 GROUP BY k) b ON a.k = b.k"),
    "count_distinct": (
        "SELECT k, count(DISTINCT v) AS d, min(v) AS lo FROM s GROUP BY k",
        "SELECT k, count(DISTINCT v), min(v) FROM t GROUP BY k"),
    "except_all_rows": (
        "SELECT k, v FROM s EXCEPT ALL SELECT k, v FROM s2",
        "SELECT k, v FROM t EXCEPT ALL SELECT k, v FROM t2"),
    "intersect_keys": (
        "SELECT k FROM s INTERSECT SELECT k FROM s2",
        "SELECT k FROM t INTERSECT SELECT k FROM t2"),
    "filtered_sum_of_counts": (
        "SELECT sum(n) AS total, count(*) AS big FROM (SELECT k, count(*) AS n FROM s "
        "WHERE v > 2 GROUP BY k) x WHERE n >= 2",
        "SELECT sum(n), count(*) FROM (SELECT k, count(*) AS n FROM t WHERE v > 2 "
        "GROUP BY k) x WHERE n >= 2"),
}

SEEDS = [1, 2, 3] + list(range(100, 100 + int(os.environ.get("SLUICE_GRAPH_SEEDS", "0"))))


def rows(rng, n):
    return [(rng.randrange(6), rng.randrange(8),
             T0 + timedelta(milliseconds=rng.randrange(60_000))) for _ in range(n)]


def normal(rs):
    """Rows as comparable tuples: integers as int (sum over BIGINT is
    NUMERIC in sluice, HUGEINT in DuckDB), NULL kept."""
    return sorted(tuple(None if x is None else int(x) for x in r) for r in rs)


@pytest.mark.parametrize("seed", SEEDS)
def test_graph_queries_equal_duckdb_after_every_batch(sluiced, seed):
    rng = random.Random(seed)
    server = sluiced()
    duck = duckdb.connect()
    duck.execute("CREATE TABLE t (k BIGINT, v BIGINT, ts TIMESTAMP)")
    duck.execute("CREATE TABLE t2 (k BIGINT, v BIGINT, ts TIMESTAMP)")
    with psycopg.connect(server.dsn, autocommit=True) as c:
        for s in ("s", "s2"):
            c.execute(f"CREATE STREAM {s} (k BIGINT, v BIGINT, ts TIMESTAMP,"
                      " WATERMARK FOR ts AS ts - INTERVAL '1 day')")
        for name, (sql, _) in QUERIES.items():
            c.execute(f"CREATE CONTINUOUS QUERY {name} WITH (trigger = '0') AS {sql}")
        for step in range(STEPS):
            for stream, table in (("s", "t"), ("s2", "t2")):
                batch = rows(rng, rng.randrange(1, 41))
                with c.cursor().copy(f"COPY {stream} (k, v, ts) FROM STDIN") as cp:
                    for r in batch:
                        cp.write_row(r)
                duck.executemany(f"INSERT INTO {table} VALUES (?, ?, ?)", batch)
            for name, (_, oracle) in QUERIES.items():
                want = normal(duck.execute(oracle).fetchall())
                deadline = time.monotonic() + WAIT
                while True:
                    got = normal(c.execute(f"SELECT * FROM {name}").fetchall())
                    if got == want or time.monotonic() > deadline:
                        break
                    time.sleep(0.1)
                assert got == want, f"seed {seed}, step {step}, query {name}"
