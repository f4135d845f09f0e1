"""approx_count_distinct: HyperLogLog with 4096 registers.

The documented bound (docs/sql-reference.md): a standard error of 1.6%; small
sets are counted exactly by linear counting.  The hash is fixed, so these
checks are deterministic.  In a continuous query the per-batch states merge
into exactly the state one pass over all rows makes, so the incremental
result equals the batch recomputation.
"""

import time

import psycopg


def copy_rows(conn, table, rows):
    with conn.cursor() as cur:
        with cur.copy(f"COPY {table} FROM STDIN") as cp:
            for r in rows:
                cp.write_row(r)


def test_error_within_the_bound_and_exact_for_small_sets(server):
    with psycopg.connect(server.dsn, autocommit=True) as c:
        c.execute("CREATE TABLE t (id BIGINT PRIMARY KEY, v BIGINT)")
        # 200,000 rows, 100,000 distinct values of v.
        copy_rows(c, "t", ((i, i % 100_000) for i in range(200_000)))
        est = c.execute("SELECT approx_count_distinct(v) FROM t").fetchone()[0]
        assert abs(est - 100_000) <= 0.05 * 100_000, est
        small = c.execute("SELECT approx_count_distinct(v) FROM t WHERE id < 50").fetchone()[0]
        assert small == 50
        assert c.execute("SELECT approx_count_distinct(v) FROM t WHERE id < 0").fetchone()[0] == 0


def test_continuous_query_equals_batch_recomputation(server):
    with psycopg.connect(server.dsn, autocommit=True) as c:
        c.execute("CREATE STREAM s (k TEXT, v BIGINT)")
        c.execute("CREATE CONTINUOUS QUERY d WITH (trigger = '0') AS "
                  "SELECT k, approx_count_distinct(v) AS n FROM s GROUP BY k")
        for chunk in range(4):
            copy_rows(c, "s", ((("a", "b")[i % 2], chunk * 7_000 + i) for i in range(20_000)))
            time.sleep(0.2)
        want = c.execute("SELECT k, approx_count_distinct(v) FROM s GROUP BY k ORDER BY k").fetchall()
        deadline = time.monotonic() + 30
        got = None
        while time.monotonic() < deadline:
            got = c.execute("SELECT k, n FROM d ORDER BY k").fetchall()
            if got == want:
                break
            time.sleep(0.1)
        assert got == want
        exact = c.execute("SELECT k, count(DISTINCT v) FROM s GROUP BY k ORDER BY k").fetchall()
        for (k, est), (_, n) in zip(got, exact):
            assert abs(est - n) <= 0.05 * n, (k, est, n)
