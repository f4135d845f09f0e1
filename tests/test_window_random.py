"""Random window queries, compared with a real PostgreSQL 15.

    test_random_windows_match_postgresql   for fixed seeds: a random table
        (ties, NULLs in every column) and random window calls (every
        ranking, value and aggregate function; ROWS / RANGE / GROUPS frames
        with offsets and EXCLUDE; PARTITION BY; ASC / DESC, NULLS FIRST /
        LAST), run by psql on sluice and on PostgreSQL 15 (tools/pg_oracle.sh
        starts a throwaway one): the outputs must be the same text.

Queries are deterministic by construction: calls whose value depends on the
order of peers get the unique id as a last ORDER BY key; calls over peers
(RANGE with an offset takes one key) are ones peers cannot tell apart
(ranks, sums of integers, counts, min, max).  Float values are multiples of
1/4 so that sums do not depend on the order they are added in.  Needs
PostgreSQL 15 (Debian's postgresql-15) on this machine.
"""
import os
import random
import subprocess
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
PGBIN = os.environ.get("PGBIN", "/usr/lib/postgresql/15/bin")
SEEDS = [1, 2, 3]
QUERIES_PER_SEED = 70

# Calls that peers cannot tell apart, and calls that need a total order.
PEER_SAFE = ["rank()", "dense_rank()", "percent_rank()", "cume_dist()", "count(*)",
             "count(v)", "sum(v)", "min(v)", "max(s)", "avg(v)", "bool_or(b)", "bool_and(b)",
             "sum(v) FILTER (WHERE b)", "max(d)"]
ORDERED = ["row_number()", "ntile(3)", "lag(v)", "lead(s, 2, 'none')", "lag(v, 1, -1)",
           "first_value(s)", "last_value(v)", "nth_value(s, 2)", "string_agg(s, ',')",
           "sum(f)", "avg(f)", "first_value(d)"]


def table_sql(rng):
    rows = []
    for i in range(1, rng.randint(15, 40) + 1):
        def maybe(v):
            return "NULL" if rng.random() < 0.15 else v
        rows.append("(%d, %s, %s, %s, %s, %s, %s)" % (
            i, maybe(str(rng.randint(1, 3))), maybe(str(rng.randint(-5, 12))),
            maybe(str(rng.randint(-8, 8) / 4)), maybe("'%s'" % rng.choice("abcde")),
            maybe(rng.choice(["true", "false"])),
            maybe("DATE '2024-01-01' + %d" % rng.randint(0, 9))))
    return ("CREATE TABLE r (id int, k int, v int, f float8, s text, b boolean, d date);\n"
            "INSERT INTO r VALUES %s;\n" % ", ".join(rows))


def bound(rng, mode, start):
    kinds = ["UNBOUNDED PRECEDING", "n PRECEDING", "CURRENT ROW", "n FOLLOWING",
             "UNBOUNDED FOLLOWING"]
    lo, hi = (0, 3) if start else (1, 4)
    return kinds[rng.randint(lo, hi)], rng.randint(0, 3)


def frame(rng, mode, key_type):
    """A valid frame clause of mode: its bounds in order (gram.y's rules)."""
    order = ["UNBOUNDED PRECEDING", "n PRECEDING", "CURRENT ROW", "n FOLLOWING",
             "UNBOUNDED FOLLOWING"]
    while True:
        (s, sn), (e, en) = bound(rng, mode, True), bound(rng, mode, False)
        if order.index(s) <= order.index(e) and not (s == e == "n PRECEDING" and sn < en) \
                and not (s == e == "n FOLLOWING" and sn > en):
            break

    def text(kind, n):
        if not kind.startswith("n "):
            return kind
        if mode == "RANGE" and key_type == "date":
            return "'%d days' %s" % (n, kind[2:])
        return "%d %s" % (n, kind[2:])
    excl = rng.choice(["", "", "EXCLUDE CURRENT ROW", "EXCLUDE GROUP", "EXCLUDE TIES",
                       "EXCLUDE NO OTHERS"])
    return "%s BETWEEN %s AND %s %s" % (mode, text(s, sn), text(e, en), excl)


def window_call(rng):
    part = rng.choice(["", "", "PARTITION BY k", "PARTITION BY b"])
    key, key_type = rng.choice([("v", "int"), ("d", "date"), ("f", "float")])
    direction = rng.choice(["", " DESC", " NULLS FIRST", " DESC NULLS LAST"])
    if rng.random() < 0.5:
        # peers: one order key (or none), calls peers cannot tell apart
        fn = rng.choice(PEER_SAFE)
        order = "" if rng.random() < 0.15 else "ORDER BY %s%s" % (key, direction)
        mode = rng.choice(["ROWS", "RANGE", "GROUPS", None, None])
        fr = ""
        if order and mode == "RANGE" and key_type == "float":
            mode = "GROUPS"
        if mode == "ROWS" and not fn.split("(")[0] in ("rank", "dense_rank", "percent_rank",
                                                         "cume_dist"):
            mode = "GROUPS"     # ROWS over peers would depend on their order
        if order and mode:
            fr = frame(rng, mode, key_type)
        return "%s OVER (%s %s %s)" % (fn, part, order, fr)
    fn = rng.choice(ORDERED + PEER_SAFE)
    order = "ORDER BY %s%s, id" % (key, direction)
    mode = rng.choice(["ROWS", "GROUPS", None])
    fr = frame(rng, mode, key_type) if mode else ""
    return "%s OVER (%s %s %s)" % (fn, part, order, fr)


def script(seed):
    rng = random.Random(seed)
    lines = [table_sql(rng)]
    for q in range(QUERIES_PER_SEED):
        calls = [window_call(rng) for _ in range(rng.randint(1, 3))]
        lines.append("\\echo @@%d" % q)
        lines.append("SELECT id, %s FROM r ORDER BY id;" % ", ".join(calls))
    lines.append("\\echo @@end")
    return "\n".join(lines) + "\n"


@pytest.mark.skipif(not os.path.exists(os.path.join(PGBIN, "postgres")),
                    reason="PostgreSQL 15 is not installed (apt-get install postgresql-15)")
def test_random_windows_match_postgresql(server, tmp_path):
    sql = "".join("DROP TABLE IF EXISTS r;\n" + script(seed) for seed in SEEDS)
    path = tmp_path / "windows.sql"
    path.write_text(sql)
    pg = subprocess.run([str(ROOT / "tools/pg_oracle.sh"), str(path)], capture_output=True,
                        text=True, timeout=120)
    assert pg.returncode == 0, pg.stderr
    env = dict(os.environ, LC_ALL="C", LANG="C")
    ours = subprocess.run(["psql", server.dsn, "-X", "-w", "-A", "-t", "-v", "ON_ERROR_STOP=0",
                           "-f", str(path)], capture_output=True, text=True, env=env,
                          timeout=120, stdin=subprocess.DEVNULL)
    assert "ERROR" not in pg.stdout, pg.stdout[pg.stdout.index("ERROR") - 200:][:600]
    queries = [line for line in sql.splitlines() if line.startswith("SELECT id")]
    pg_list = list(_ordered(pg.stdout))
    our_list = list(_ordered(ours.stdout + ours.stderr))
    assert len(pg_list) == len(queries) == len(our_list)
    bad = [(queries[i], pg_list[i], our_list[i]) for i in range(len(queries))
           if pg_list[i] != our_list[i]]
    assert not bad, "%d of %d differ; first: %s\nPostgreSQL: %s\nsluice: %s" % (
        len(bad), len(queries), bad[0][0], bad[0][1], bad[0][2])


def _ordered(text):
    """The output of each query: the lines between its @@ marker and the next."""
    cur = None
    for line in text.splitlines():
        if line.startswith("@@"):
            if cur is not None:
                yield cur
            cur = [] if line != "@@end" else None
        elif cur is not None:
            cur.append(line)
