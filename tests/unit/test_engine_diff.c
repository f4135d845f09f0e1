/*
 * test_engine_diff.c -- the operator graph against the batch engine: for
 * each seed of a fixed list, random inserts, deletes and updates of a
 * table t (a few int, text, numeric and timestamp columns, NULLs, NaN)
 * in batches of random size, fed to the graphs of a list of queries --
 * aggregates over aggregates two and three levels deep, filters and
 * projections between them, HAVING, tumbling windows, FILTER clauses,
 * count(DISTINCT), joins, distinct and set operations, OVER (every
 * frame kind, the ranking and value functions, over an aggregate) and
 * Top-N (row_number and rank, N = 1) --
 * as deltas (an update: the old row retracted and the new one inserted in
 * the same delta), each batch's state committed to a real StateStore.
 * After every batch, each graph's output summed over the batches (rows
 * with their weights, none negative) must equal the batch engine's answer
 * to the same query over t's contents then (the same SQL through the
 * Runtime, as test_query.c runs it).
 *
 * The seed decides how the graphs live between batches: kept in memory,
 * restored (cache dropped) after every batch, built anew every third
 * batch (a restart), or each batch run once and thrown away before its
 * commit, then run again.  SLUICE_ENGINE_DIFF_SEEDS=n runs n seeds instead
 * of the fixed list's (the longer run, docs/engine-graph.md).
 */
#include "unit_engine.h"

#include <inttypes.h>

static UeEnv env;

static const char *const queries[] = {
    "SELECT g2, count(*), sum(s), min(s), max(s) FROM (SELECT a % 3 AS g2, b AS g1, sum(c) AS s "
    "FROM t WHERE c > 10 GROUP BY 1, 2) x GROUP BY g2",
    "SELECT count(*), sum(n), max(n), min(k) FROM (SELECT b AS k, count(*) AS n FROM t "
    "GROUP BY b) x",
    "SELECT n, count(*) FROM (SELECT a, count(*) AS n FROM t GROUP BY a) x GROUP BY n",
    "SELECT m, count(*) FROM (SELECT g, max(s) AS m FROM (SELECT a % 4 AS g, b, sum(c) AS s "
    "FROM t GROUP BY a % 4, b) y GROUP BY g) z GROUP BY m",
    "SELECT b, sum(c), avg(c), count(d), sum(d), avg(d), min(d), max(d) FROM t GROUP BY b "
    "HAVING count(*) > 1",
    "SELECT a + 1 AS x, min(b), max(b), bool_or(c > 50), bool_and(c > 0) FROM t "
    "WHERE b <> 'k3' GROUP BY a + 1",
    "SELECT count(*), sum(c), avg(c) FROM t WHERE c < 0",
    "SELECT g, sum(s), avg(s), min(s), max(s), count(*) FROM (SELECT a % 2 AS g, b, sum(d) AS s "
    "FROM t GROUP BY 1, 2) x GROUP BY g",
    "SELECT id, a, b FROM t WHERE a < 3",
    "SELECT a, count(*) FILTER (WHERE c > 20), count(d), sum(c::bigint) FROM t GROUP BY a",
    "SELECT window_end, n, count(*) FROM (SELECT window_start, window_end, b, count(*) AS n "
    "FROM t GROUP BY WINDOW(ts, INTERVAL '1 minute'), b) w GROUP BY window_end, n",
    "SELECT k2, max(total), min(total), sum(cnt) FROM (SELECT b AS k2, a, sum(c) AS total, "
    "count(*) AS cnt FROM (SELECT * FROM t WHERE d IS NOT NULL) s GROUP BY b, a "
    "HAVING sum(c) IS NOT NULL) x GROUP BY k2",
    "SELECT b, count(DISTINCT a), count(DISTINCT c) FILTER (WHERE a > 1), count(DISTINCT d) "
    "FROM t GROUP BY b",
    "SELECT nd, count(*), count(DISTINCT b) FROM (SELECT b, count(DISTINCT a % 3) AS nd FROM t "
    "GROUP BY b) x GROUP BY nd",
    /* joins: of aggregates (Nexmark q5's shape), inner and outer */
    "SELECT x.k, x.n, y.m FROM (SELECT a AS k, count(*) AS n FROM t GROUP BY a) x "
    "JOIN (SELECT a AS k, max(c) AS m FROM u GROUP BY a) y ON x.k = y.k",
    "SELECT x.k, x.n, y.m FROM (SELECT a AS k, count(*) AS n FROM t GROUP BY a) x "
    "LEFT JOIN (SELECT a AS k, max(c) AS m FROM u WHERE c > 40 GROUP BY a) y ON x.k = y.k",
    "SELECT x.k, x.n, y.s FROM (SELECT b AS k, count(*) AS n FROM t WHERE c > 30 GROUP BY b) x "
    "FULL JOIN (SELECT b AS k, sum(d) AS s FROM u GROUP BY b) y ON x.k = y.k",
    /* an aggregate over a join */
    "SELECT t.b, count(*), sum(u.c), min(u.d), max(t.c) FROM t JOIN u ON t.a = u.a GROUP BY t.b",
    /* residual conditions, outer sides, NULL keys, two keys */
    "SELECT t.id, u.id, t.c, u.c FROM t JOIN u ON t.a = u.a AND t.c < u.c",
    "SELECT t.id, u.id FROM t RIGHT JOIN u ON t.b = u.b AND t.c > u.c + 50",
    "SELECT t.id, u.id, t.a FROM t FULL JOIN u ON t.a = u.a AND t.b = u.b",
    /* a self-join, a cross join of one-row aggregates */
    "SELECT x.a, count(*) FROM t x JOIN t y ON x.a = y.a AND x.id < y.id GROUP BY x.a",
    "SELECT x.n, y.m FROM (SELECT count(*) AS n FROM t) x CROSS JOIN "
    "(SELECT count(*) AS m, sum(c) AS s FROM u) y",
    /* each group's rows of its maximum (Nexmark q7's shape) */
    "SELECT u.id, u.a, u.c FROM u JOIN (SELECT a, max(c) AS m FROM u GROUP BY a) mx "
    "ON u.a = mx.a AND u.c = mx.m",
    /* three inputs, an outer join over an inner one */
    "SELECT z.id, x.n, w.m FROM (SELECT a, count(*) AS n FROM t GROUP BY a) x JOIN u z "
    "ON x.a = z.a LEFT JOIN (SELECT b, max(c) AS m FROM t GROUP BY b) w ON z.b = w.b AND z.c < w.m",
    /* distinct and the set operations, over rows and over aggregates */
    "SELECT DISTINCT a, b FROM t",
    "SELECT DISTINCT n FROM (SELECT a, count(*) AS n FROM t GROUP BY a) x",
    "SELECT a, d FROM t UNION SELECT a, d FROM u",
    "SELECT a, b FROM t UNION ALL SELECT a, b FROM u",
    "SELECT a FROM t INTERSECT ALL SELECT a FROM u",
    "SELECT b FROM t EXCEPT ALL SELECT b FROM u",
    "SELECT b, count(*) FROM (SELECT a, b FROM t EXCEPT SELECT a, b FROM u) x GROUP BY b",
    "SELECT a, count(*) FROM t GROUP BY a INTERSECT SELECT a, count(*) FROM u GROUP BY a",
    /* OVER: orders made total by id where the function follows the order
     * among peers (row_number, lag, lead, first/last/nth_value, ntile,
     * ROWS frames); ties allowed where peers get equal values (rank,
     * dense_rank, percent_rank, cume_dist, RANGE frames, PARTITION BY
     * alone) */
    "SELECT id, a, row_number() OVER (PARTITION BY a ORDER BY c, id) FROM t",
    "SELECT id, b, rank() OVER (PARTITION BY b ORDER BY c), dense_rank() OVER (PARTITION BY b "
    "ORDER BY c DESC NULLS LAST) FROM t",
    "SELECT id, sum(c) OVER (PARTITION BY a ORDER BY c RANGE BETWEEN 10 PRECEDING AND 5 "
    "FOLLOWING), count(*) OVER (PARTITION BY a ORDER BY c) FROM t",
    "SELECT id, sum(d) OVER (PARTITION BY b ORDER BY c, id ROWS BETWEEN 2 PRECEDING AND 1 "
    "FOLLOWING), count(*) OVER (PARTITION BY b), min(c) OVER () FROM t",
    "SELECT id, lag(c) OVER w, lead(b, 2, 'none') OVER w, first_value(d) OVER w, last_value(c) "
    "OVER w FROM t WINDOW w AS (PARTITION BY a ORDER BY ts, id)",
    "SELECT id, percent_rank() OVER (ORDER BY a), cume_dist() OVER (ORDER BY a) FROM t",
    "SELECT id, ntile(3) OVER (PARTITION BY b ORDER BY c, id), nth_value(c, 2) OVER "
    "(PARTITION BY b ORDER BY c, id ROWS BETWEEN UNBOUNDED PRECEDING AND UNBOUNDED FOLLOWING) "
    "FROM t",
    "SELECT id, max(c) OVER (PARTITION BY a ORDER BY ts RANGE BETWEEN INTERVAL '30 seconds' "
    "PRECEDING AND CURRENT ROW), avg(d) OVER (ORDER BY c GROUPS BETWEEN 1 PRECEDING AND 1 "
    "FOLLOWING EXCLUDE GROUP) FROM t",
    "SELECT a, n, rank() OVER (ORDER BY n DESC), sum(n) OVER (ORDER BY a) FROM "
    "(SELECT a, count(*) AS n FROM t GROUP BY a) x",
    "SELECT b, count(*), max(rn) FROM (SELECT b, row_number() OVER (PARTITION BY b ORDER BY id) "
    "AS rn FROM t) x GROUP BY b",
    /* Top-N: row_number and rank, `<=`, `<`, `= 1` (dedup), over an aggregate */
    "SELECT * FROM (SELECT id, a, c, row_number() OVER (PARTITION BY a ORDER BY c DESC, id) AS rn "
    "FROM t) s WHERE rn <= 2",
    "SELECT b, c FROM (SELECT b, c, rank() OVER (PARTITION BY b ORDER BY c) AS r FROM t) s "
    "WHERE r < 3",
    "SELECT a, id, ts FROM (SELECT a, id, ts, row_number() OVER (PARTITION BY a ORDER BY ts DESC, "
    "id) AS rn FROM t) s WHERE rn = 1",
    "SELECT * FROM (SELECT b, a, s, row_number() OVER (PARTITION BY b ORDER BY s DESC, a) AS rn "
    "FROM (SELECT b, a, sum(c) AS s FROM t GROUP BY b, a) y) x WHERE rn <= 1",
    "SELECT id, d FROM (SELECT id, d, rank() OVER (ORDER BY d) AS r FROM u) s WHERE r <= 3",
};
#define NQ ((int)(sizeof(queries) / sizeof(queries[0])))

static const uint64_t seeds[] = {1, 2, 3, 4, 5, 6, 7, 8, 42, 1234, 777, 2026};

#define NIDS    40
#define NBATCH  12

typedef struct Row {
    bool present;
    char text[128];         /* id|a|b|c|d|ts */
    char values[160];       /* the same as an INSERT's VALUES list */
} Row;

static uint64_t rng;

static uint32_t rnd(uint32_t n)
{
    rng ^= rng << 13;
    rng ^= rng >> 7;
    rng ^= rng << 17;
    return (uint32_t)(rng % n);
}

static void make_row(Row *r, int id)
{
    char a[16] = "NULL", b[16] = "NULL", c[16] = "NULL", d[24] = "NULL", ts[40];
    char qb[20] = "NULL", qd[32] = "NULL";
    if (rnd(20) != 0)
        snprintf(a, sizeof(a), "%d", (int)rnd(7) - 1);
    if (rnd(20) != 0) {
        snprintf(b, sizeof(b), "k%u", rnd(5));
        snprintf(qb, sizeof(qb), "'%s'", b);
    }
    if (rnd(10) != 0)
        snprintf(c, sizeof(c), "%d", (int)rnd(120) - 10);
    uint32_t dk = rnd(30);
    if (dk == 0) {
        snprintf(d, sizeof(d), "NaN");
    } else if (dk > 3) {
        int v = (int)rnd(4000) - 1000;
        if (dk % 2)
            snprintf(d, sizeof(d), "%s%d.%02d", v < 0 ? "-" : "", abs(v) / 100, abs(v) % 100);
        else
            snprintf(d, sizeof(d), "%d.5", v / 10);
    }
    if (strcmp(d, "NULL") != 0)
        snprintf(qd, sizeof(qd), "'%s'", d);
    snprintf(ts, sizeof(ts), "2026-01-01 10:%02u:%02u", rnd(5), rnd(60));
    snprintf(r->text, sizeof(r->text), "%d|%s|%s|%s|%s|%s", id, a, b, c, d, ts);
    snprintf(r->values, sizeof(r->values), "(%d, %s, %s, %s, %s, '%s')", id, a, qb, c, qd, ts);
    r->present = true;
}

typedef struct Change {
    const char *rows[2 * 16];
    int64_t     w[2 * 16];
    int         n;
    char        text[2 * 16][128];
} Change;

/* One batch of changes: the model, the table (SQL: the touched rows
 * deleted, then their new versions inserted, two statements) and the
 * delta's rows. */
static void make_batch(Row *model, Change *ch, StrBuf *sql, const char *table)
{
    int k = 1 + (int)rnd(12);
    bool touched[NIDS] = {false};
    ch->n = 0;
    for (int i = 0; i < k; i++) {
        int id = (int)rnd(NIDS);
        Row *r = &model[id];
        touched[id] = true;
        if (r->present) {
            snprintf(ch->text[ch->n], 128, "%s", r->text);
            ch->rows[ch->n] = ch->text[ch->n];
            ch->w[ch->n++] = -1;
            r->present = false;
            if (rnd(2) == 0)
                continue;           /* a delete; else an update */
        }
        make_row(r, id);
        snprintf(ch->text[ch->n], 128, "%s", r->text);
        ch->rows[ch->n] = ch->text[ch->n];
        ch->w[ch->n++] = 1;
    }
    strbuf_reset(sql);
    strbuf_printf(sql, "DELETE FROM %s WHERE id IN (-1", table);
    for (int id = 0; id < NIDS; id++)
        if (touched[id])
            strbuf_printf(sql, ", %d", id);
    strbuf_puts(sql, ");");
    char ins[32];
    snprintf(ins, sizeof(ins), "INSERT INTO %s VALUES ", table);
    const char *sep = ins;
    for (int id = 0; id < NIDS; id++)
        if (touched[id] && model[id].present) {
            strbuf_printf(sql, "%s%s", sep, model[id].values);
            sep = ", ";
        }
    strbuf_puts(sql, ";");
}

enum { KEEP, RESTORE, REBUILD, DISCARD };

static int failures_shown;

#define MAXSRC 4

static void run_seed(uint64_t seed, int si)
{
    int mode = si % 4;
    rng = seed * 0x9E3779B97F4A7C15ull + 1;
    Row model[2][NIDS];             /* t's rows, u's */
    memset(model, 0, sizeof(model));
    StrBuf sql, all, out, want, got, err;
    strbuf_init(&sql);
    strbuf_init(&all);
    strbuf_init(&out);
    strbuf_init(&want);
    strbuf_init(&got);
    strbuf_init(&err);
    ue_sql(&env, "DELETE FROM t; DELETE FROM u", &out);
    EngGraph *g[NQ];
    UeOut o[NQ];
    int src[NQ][MAXSRC];            /* which table source s reads: 0 t, 1 u */
    int nsrc[NQ];
    const ColumnDesc *scol[NQ][MAXSRC];
    uint32_t oid0 = 1000 + (uint32_t)si * 64;
    for (int q = 0; q < NQ; q++) {
        g[q] = ue_compile(&env, queries[q], oid0 + (uint32_t)q, &err);
        CHECK(g[q] != NULL, "%s: %s", queries[q], err.data);
        nsrc[q] = g[q] ? env.nscans : 0;
        CHECK(nsrc[q] <= MAXSRC, "%s: %d sources", queries[q], nsrc[q]);
        for (int s = 0; s < nsrc[q] && s < MAXSRC; s++) {
            CHECK(env.scans[s]->ncols == 6, "%s: a scan has %d columns", queries[q],
                  env.scans[s]->ncols);
            scol[q][s] = env.scans[s]->cols;
            src[q][s] = strcmp(env.scans[s]->u.scan.rel->name, "u") == 0;
        }
        ue_out_init(&o[q]);
    }
    for (int b = 0; b < NBATCH; b++) {
        /* t's changes, u's, or both: each table's own statements */
        Change ch[2];
        uint32_t which = rnd(4);
        strbuf_reset(&all);
        for (int tb = 0; tb < 2; tb++) {
            ch[tb].n = 0;
            if (which == (uint32_t)(1 - tb))
                continue;
            make_batch(model[tb], &ch[tb], &sql, tb ? "u" : "t");
            strbuf_puts(&all, sql.data);
        }
        ue_sql(&env, all.data, &out);
        CHECK(strncmp(out.data ? out.data : "", "ERROR", 5) != 0, "%s: %s", all.data, out.data);
        for (int q = 0; q < NQ; q++) {
            if (g[q] == NULL)
                continue;
            Arena a;
            arena_init(&a, 0);
            EngDelta d[MAXSRC];
            const EngDelta *ds[MAXSRC] = {NULL};
            for (int s = 0; s < nsrc[q] && s < MAXSRC; s++) {
                const Change *c = &ch[src[q][s]];
                d[s] = ue_delta(&a, scol[q][s], 6, c->rows, c->w, c->n);
                ds[s] = c->n > 0 ? &d[s] : NULL;
            }
            strbuf_reset(&err);
            if (mode == DISCARD)
                CHECK(ue_run(&env, g[q], ds, &a, &o[q], false, &err) == 0, "%s", err.data);
            CHECK(ue_run(&env, g[q], ds, &a, &o[q], true, &err) == 0, "seed %" PRIu64
                  " batch %d, %s: %s", seed, b, queries[q], err.data);
            arena_reset(&a);
            SlError e = {0};
            EngCtx cx = {.arena = &a, .err = &e, .st = env.d.st};
            if (mode == RESTORE)
                CHECK(eng_graph_restore(g[q], &cx) == 0);
            arena_destroy(&a);
            if (mode == REBUILD && b % 3 == 2) {
                eng_graph_free(g[q]);
                g[q] = ue_compile(&env, queries[q], oid0 + (uint32_t)q, &err);
            }
            ue_out_lines(&o[q], &got);
            ue_sql(&env, queries[q], &want);
            bool same = strcmp(got.data ? got.data : "", want.data ? want.data : "") == 0;
            CHECK(same || failures_shown > 5, "seed %" PRIu64 " (mode %d) batch %d: %s\n"
                  "  graph:\n%s  batch engine:\n%s", seed, mode, b, queries[q],
                  got.data ? got.data : "", want.data ? want.data : "");
            failures_shown += !same;
        }
    }
    for (int q = 0; q < NQ; q++) {
        eng_graph_free(g[q]);
        ue_out_free(&o[q]);
    }
    strbuf_free(&sql);
    strbuf_free(&all);
    strbuf_free(&out);
    strbuf_free(&want);
    strbuf_free(&got);
    strbuf_free(&err);
}

int main(void)
{
    ue_open(&env, "engine-diff");
    StrBuf out;
    strbuf_init(&out);
    ue_sql(&env, "CREATE TABLE t (id int PRIMARY KEY, a int, b text, c int, d numeric, "
                 "ts timestamp)", &out);
    CHECK(out.len == 0, "%s", out.data);
    ue_sql(&env, "CREATE TABLE u (id int PRIMARY KEY, a int, b text, c int, d numeric, "
                 "ts timestamp)", &out);
    CHECK(out.len == 0, "%s", out.data);
    const char *more = getenv("SLUICE_ENGINE_DIFF_SEEDS");
    int n = more ? atoi(more) : (int)(sizeof(seeds) / sizeof(seeds[0]));
    for (int i = 0; i < n; i++)
        run_seed(more ? 100000 + (uint64_t)i : seeds[i], i);
    strbuf_free(&out);
    ue_close(&env);
    return unit_done("engine_diff");
}
