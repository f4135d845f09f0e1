/*
 * test_engine_diff.c -- the operator graph against the batch engine: for
 * each seed of a fixed list, random inserts, deletes and updates of a
 * table t (a few int, text, numeric and timestamp columns, NULLs, NaN)
 * in batches of random size, fed to the graphs of a list of queries --
 * aggregates over aggregates two and three levels deep, filters and
 * projections between them, HAVING, tumbling windows, FILTER clauses,
 * count(DISTINCT), joins, distinct and set operations, OVER (every
 * frame kind, the ranking and value functions, over an aggregate),
 * Top-N (row_number and rank, N = 1), CTEs read once and twice, derived
 * tables, uncorrelated scalar subqueries (InitPlans) in WHERE, HAVING and
 * the select list --
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
 *
 * Event time (run_seed_time): two more tables tt and uu whose ts column
 * is each source's event time (offset 0), fed as streams are: rows
 * inserted at random times around a clock that moves forward, some
 * retracted again (a delete) while not late, and after each batch a
 * watermark (the largest time taken less a random delay, never
 * backwards; some batches have none).  A row below the watermark given
 * after the previous batch is late: the test drops it, as the runtime
 * drops late rows before the graph, and neither the graph nor the table
 * sees it; nor is a late row ever deleted.  The queries: tumbling,
 * sliding and session windows with the aggregates the graph keeps,
 * aggregates over windows, windows over joins and a join of windows, so
 * that windows and sessions close, are evicted, merge and split.  After
 * every batch each graph's summed output must equal the batch engine's
 * answer over the tables (the rows taken so far), and over the run the
 * watermark must have evicted state.
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
    /* subqueries in FROM: derived tables, CTEs referenced once and twice, a
     * scalar subquery written as a join with a one-row aggregate */
    "WITH c AS (SELECT a, count(*) AS n, sum(c) AS s FROM t GROUP BY a) "
    "SELECT n, count(*), sum(s) FROM c GROUP BY n",
    "WITH c AS (SELECT a, b, count(*) AS n FROM t WHERE c > 0 GROUP BY a, b) "
    "SELECT x.a, x.b, y.b, x.n + y.n FROM c x JOIN c y ON x.a = y.a AND x.b < y.b",
    "WITH c AS (SELECT b, max(c) AS m FROM u GROUP BY b), d AS (SELECT b, min(c) AS m FROM t "
    "GROUP BY b) SELECT c.b, c.m, d.m FROM c FULL JOIN d ON c.b = d.b",
    "SELECT x.id, x.c, q.m FROM (SELECT id, c FROM (SELECT id, a, c FROM t WHERE a > 0) y "
    "WHERE c IS NOT NULL) x CROSS JOIN (SELECT avg(c) AS m FROM u) q WHERE x.c > q.m",
    "SELECT t.b, count(*) FROM t CROSS JOIN (SELECT max(c) AS m, count(*) AS n FROM u) q "
    "WHERE t.c * 2 >= q.m GROUP BY t.b",
    /* uncorrelated scalar subqueries (InitPlans) in WHERE, SELECT, HAVING */
    "SELECT id, c FROM t WHERE c > (SELECT avg(c) FROM u)",
    "SELECT b, count(*), (SELECT max(c) FROM u), sum(c) - (SELECT min(c) FROM t) FROM t "
    "GROUP BY b",
    "SELECT a, count(*) FROM t GROUP BY a HAVING count(*) * 4 >= (SELECT count(*) FROM u) "
    "AND sum(c) IS DISTINCT FROM (SELECT sum(c) FROM t WHERE a < 0)",
    "SELECT x.a, x.n, u.id FROM (SELECT a, count(*) AS n FROM t WHERE b <> (SELECT max(b) "
    "FROM u) GROUP BY a) x JOIN u ON x.a = u.a",
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

#define MAXSRC 4

/* Source s of a query (nsrc of them) reads table src[s] (0 or 1), whose
 * batch changes are ch[src[s]]: its delta into d[s] over columns scol[s]
 * (ncols of them), in a; ds[s] points to it, or NULL when it is empty. */
static void src_deltas(Arena *a, int nsrc, const int *src, const ColumnDesc *const *scol,
                       int ncols, const Change *ch, EngDelta *d, const EngDelta **ds)
{
    for (int s = 0; s < nsrc && s < MAXSRC; s++) {
        const Change *c = &ch[src[s]];
        d[s] = ue_delta(a, scol[s], ncols, c->rows, c->w, c->n);
        ds[s] = c->n > 0 ? &d[s] : NULL;
    }
}

enum { KEEP, RESTORE, REBUILD, DISCARD };

static int failures_shown;

/* One query's batch: which seed, mode and batch, the query and its oid,
 * its sources' time (NULL: none). */
typedef struct Step {
    uint64_t      seed;
    int           mode, b;
    const char   *sql;
    uint32_t      oid;
    EngScanTimeFn time_fn;
} Step;

/* Runs the batch's deltas (and watermarks: has_wm NULL, none) through *g
 * as the mode says (DISCARD: once thrown away first; RESTORE: restored
 * after; REBUILD: built anew every third batch), then checks the summed
 * output against the batch engine's answer to the same SQL.  a is the
 * batch's arena, destroyed here. */
static void step(const Step *st, EngGraph **g, const EngDelta *const *ds, const bool *has_wm,
                 const int64_t *wm, Arena *a, UeOut *o)
{
    StrBuf err, got, want;
    strbuf_init(&err);
    strbuf_init(&got);
    strbuf_init(&want);
    if (st->mode == DISCARD)
        CHECK(ue_run_wm(&env, *g, ds, has_wm, wm, a, o, false, &err) == 0, "%s", err.data);
    CHECK(ue_run_wm(&env, *g, ds, has_wm, wm, a, o, true, &err) == 0,
          "seed %" PRIu64 " batch %d, %s: %s", st->seed, st->b, st->sql, err.data);
    arena_reset(a);
    SlError e = {0};
    EngCtx cx = {.arena = a, .err = &e, .st = env.d.st};
    if (st->mode == RESTORE)
        CHECK(eng_graph_restore(*g, &cx) == 0);
    arena_destroy(a);
    if (st->mode == REBUILD && st->b % 3 == 2) {
        eng_graph_free(*g);
        *g = ue_compile_time(&env, st->sql, st->oid, st->time_fn, NULL, &err);
    }
    ue_out_lines(o, &got);
    ue_sql(&env, st->sql, &want);
    bool same = strcmp(got.data ? got.data : "", want.data ? want.data : "") == 0;
    CHECK(same || failures_shown > 5, "seed %" PRIu64 " (mode %d) batch %d: %s\n"
          "  graph:\n%s  batch engine:\n%s", st->seed, st->mode, st->b, st->sql,
          got.data ? got.data : "", want.data ? want.data : "");
    failures_shown += !same;
    strbuf_free(&err);
    strbuf_free(&got);
    strbuf_free(&want);
}


static void run_seed(uint64_t seed, int si)
{
    int mode = si % 4;
    rng = seed * 0x9E3779B97F4A7C15ull + 1;
    Row model[2][NIDS];             /* t's rows, u's */
    memset(model, 0, sizeof(model));
    StrBuf sql, all, out, err;
    strbuf_init(&sql);
    strbuf_init(&all);
    strbuf_init(&out);
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
            src_deltas(&a, nsrc[q], src[q], scol[q], 6, ch, d, ds);
            Step st = {seed, mode, b, queries[q], oid0 + (uint32_t)q, NULL};
            step(&st, &g[q], ds, NULL, NULL, &a, &o[q]);
        }
    }
    for (int q = 0; q < NQ; q++) {
        eng_graph_free(g[q]);
        ue_out_free(&o[q]);
    }
    strbuf_free(&sql);
    strbuf_free(&all);
    strbuf_free(&out);
    strbuf_free(&err);
}

/* ------------------------------------------------------------ event time */

static const char *const tqueries[] = {
    "SELECT window_start, window_end, a, count(*), sum(c), min(c), max(b) FROM tt "
    "GROUP BY WINDOW(ts, INTERVAL '1 minute'), a",
    "SELECT window_start, window_end, count(*), sum(c), max(c), min(b) FROM tt "
    "GROUP BY WINDOW(ts, INTERVAL '1 minute', INTERVAL '20 seconds')",
    "SELECT window_start, window_end, b, count(DISTINCT a), avg(c) FROM tt "
    "GROUP BY WINDOW(ts, INTERVAL '45 seconds', INTERVAL '15 seconds'), b",
    "SELECT window_start, window_end, a, count(*), sum(c), min(ts), max(ts) FROM tt "
    "GROUP BY SESSION(ts, INTERVAL '20 seconds'), a",
    "SELECT window_start, window_end, count(*), max(c), bool_or(c > 50) FROM tt "
    "WHERE b <> 'k1' GROUP BY SESSION(ts, INTERVAL '8 seconds')",
    /* aggregates over windows */
    "SELECT window_end, max(n), count(*) FROM (SELECT window_start, window_end, a, count(*) AS n "
    "FROM tt GROUP BY WINDOW(ts, INTERVAL '1 minute', INTERVAL '30 seconds'), a) w "
    "GROUP BY window_end",
    "SELECT n, count(*) FROM (SELECT a, window_end, count(*) AS n FROM tt "
    "GROUP BY SESSION(ts, INTERVAL '15 seconds'), a) s GROUP BY n",
    /* windows over an interval join, a join of windows */
    "SELECT window_start, window_end, count(*), sum(uu.c) FROM tt JOIN uu ON tt.a = uu.a "
    "AND uu.ts BETWEEN tt.ts - INTERVAL '20 seconds' AND tt.ts + INTERVAL '20 seconds' "
    "GROUP BY WINDOW(tt.ts, INTERVAL '1 minute', INTERVAL '30 seconds')",
    "SELECT tt.b, window_start, window_end, count(*) FROM tt JOIN uu ON tt.a = uu.a "
    "AND uu.ts BETWEEN tt.ts - INTERVAL '10 seconds' AND tt.ts "
    "GROUP BY SESSION(tt.ts, INTERVAL '12 seconds'), tt.b",
    "SELECT x.window_end, x.n, y.m FROM (SELECT window_end, count(*) AS n FROM tt "
    "GROUP BY WINDOW(ts, INTERVAL '30 seconds')) x JOIN (SELECT window_end, max(c) AS m FROM uu "
    "GROUP BY WINDOW(ts, INTERVAL '30 seconds')) y ON x.window_end = y.window_end",
    /* a window over rows compared with a value that changes: every row is
     * joined again, so nothing is timed or evicted, and nothing is late */
    "SELECT window_start, window_end, count(*) FROM tt WHERE c > (SELECT avg(c) FROM uu) "
    "GROUP BY WINDOW(ts, INTERVAL '30 seconds', INTERVAL '10 seconds')",
};
#define NTQ ((int)(sizeof(tqueries) / sizeof(tqueries[0])))

/* 2026-01-01 10:00:00 in microseconds since 2000-01-01 (9,497 days). */
#define T0_US ((INT64_C(9497) * 86400 + 10 * 3600) * INT64_C(1000000))
#define TROWS 400

typedef struct TRow {
    bool    present;
    int64_t sec;            /* since T0 */
    char    text[96];       /* id|a|b|c|ts */
} TRow;

static void trow_make(TRow *r, int id, int64_t sec)
{
    char a[16] = "NULL", b[16] = "NULL", c[16] = "NULL";
    if (rnd(15) != 0)
        snprintf(a, sizeof(a), "%u", rnd(4));
    if (rnd(15) != 0)
        snprintf(b, sizeof(b), "k%u", rnd(3));
    if (rnd(10) != 0)
        snprintf(c, sizeof(c), "%d", (int)rnd(100) - 5);
    r->present = true;
    r->sec = sec;
    snprintf(r->text, sizeof(r->text), "%d|%s|%s|%s|2026-01-01 %02d:%02d:%02d", id, a, b, c,
             10 + (int)(sec / 3600), (int)(sec / 60 % 60), (int)(sec % 60));
}

/* One table's batch of stream changes: new rows around the clock now
 * (seconds), the late ones (below wm, the previous batch's watermark)
 * dropped, some not-late rows deleted; the table's SQL appended to sql,
 * the delta's rows into ch.  The largest time taken into *maxsec. */
static void tbatch(TRow *rows, int *nrows, int64_t now, int64_t wm, Change *ch, StrBuf *sql,
                   const char *table, int64_t *maxsec, int *late)
{
    int k = (int)rnd(8);
    ch->n = 0;
    for (int i = 0; i < k && *nrows < TROWS && ch->n < 2 * 16; i++) {
        int64_t sec = now - 25 + (int64_t)rnd(35);
        if (sec < 0)
            sec = 0;
        if (wm != INT64_MIN && T0_US + sec * INT64_C(1000000) < wm) {
            (*late)++;      /* dropped before the graph */
            continue;
        }
        TRow *r = &rows[(*nrows)++];
        trow_make(r, *nrows - 1, sec);
        snprintf(ch->text[ch->n], 128, "%s", r->text);
        ch->rows[ch->n] = ch->text[ch->n];
        ch->w[ch->n++] = 1;
        if (sec > *maxsec)
            *maxsec = sec;
        strbuf_printf(sql, "INSERT INTO %s VALUES (%d, ", table, *nrows - 1);
        /* the text row as SQL: fields separated by | */
        char copy[96], *save = NULL;
        snprintf(copy, sizeof(copy), "%s", r->text);
        strtok_r(copy, "|", &save);
        for (int f = 0; f < 4; f++) {
            char *v = strtok_r(NULL, "|", &save);
            bool quote = (f == 1 || f == 3) && strcmp(v, "NULL") != 0;
            strbuf_printf(sql, "%s%s%s%s", quote ? "'" : "", v, quote ? "'" : "",
                          f < 3 ? ", " : ");");
        }
    }
    /* a few deletes of rows that are not late */
    for (int i = 0; i < 2 && *nrows > 0 && ch->n < 2 * 16; i++) {
        TRow *r = &rows[rnd((uint32_t)*nrows)];
        if (!r->present || rnd(3) != 0 ||
            (wm != INT64_MIN && T0_US + r->sec * INT64_C(1000000) < wm))
            continue;
        r->present = false;
        snprintf(ch->text[ch->n], 128, "%s", r->text);
        ch->rows[ch->n] = ch->text[ch->n];
        ch->w[ch->n++] = -1;
        strbuf_printf(sql, "DELETE FROM %s WHERE id = %d;", table, (int)(r - rows));
    }
}

static int64_t total_evicted;

static void run_seed_time(uint64_t seed, int si)
{
    int mode = si % 4;
    rng = seed * 0x2545F4914F6CDD1Dull + 7;
    static TRow trows[2][TROWS];
    int ntrows[2] = {0, 0};
    memset(trows, 0, sizeof(trows));
    StrBuf sql, out, err;
    strbuf_init(&sql);
    strbuf_init(&out);
    strbuf_init(&err);
    ue_sql(&env, "DELETE FROM tt; DELETE FROM uu", &out);
    EngGraph *g[NTQ];
    UeOut o[NTQ];
    int src[NTQ][MAXSRC], nsrc[NTQ];
    const ColumnDesc *scol[NTQ][MAXSRC];
    uint32_t oid0 = 500000 + (uint32_t)si * 64;
    for (int q = 0; q < NTQ; q++) {
        g[q] = ue_compile_time(&env, tqueries[q], oid0 + (uint32_t)q, ue_ts_time, NULL,
                               &err);
        CHECK(g[q] != NULL, "%s: %s", tqueries[q], err.data);
        nsrc[q] = g[q] ? env.nscans : 0;
        for (int s = 0; s < nsrc[q] && s < MAXSRC; s++) {
            scol[q][s] = env.scans[s]->cols;
            src[q][s] = strcmp(env.scans[s]->u.scan.rel->name, "uu") == 0;
        }
        ue_out_init(&o[q]);
    }
    int64_t now = 30, wm = INT64_MIN, maxsec = -1;
    int late = 0;
    for (int b = 0; b < 2 * NBATCH; b++) {
        Change ch[2];
        strbuf_reset(&sql);
        now += rnd(12);
        for (int tb = 0; tb < 2; tb++)
            tbatch(trows[tb], &ntrows[tb], now, wm, &ch[tb], &sql, tb ? "uu" : "tt", &maxsec,
                   &late);
        if (sql.len > 0) {
            ue_sql(&env, sql.data, &out);
            CHECK(strncmp(out.data ? out.data : "", "ERROR", 5) != 0, "%s: %s", sql.data,
                  out.data);
        }
        /* the watermark after this batch: the largest time less a delay */
        bool has = maxsec >= 0 && rnd(4) != 0;
        if (has) {
            int64_t w = T0_US + (maxsec - (int64_t)rnd(20)) * INT64_C(1000000);
            if (w > wm)
                wm = w;
        }
        for (int q = 0; q < NTQ; q++) {
            if (g[q] == NULL)
                continue;
            Arena a;
            arena_init(&a, 0);
            EngDelta d[MAXSRC];
            const EngDelta *ds[MAXSRC] = {NULL};
            bool hw[MAXSRC];
            int64_t wv[MAXSRC];
            src_deltas(&a, nsrc[q], src[q], scol[q], 5, ch, d, ds);
            for (int s = 0; s < nsrc[q] && s < MAXSRC; s++) {
                hw[s] = has;
                wv[s] = wm;
            }
            Step st = {seed, mode, b, tqueries[q], oid0 + (uint32_t)q, ue_ts_time};
            step(&st, &g[q], ds, hw, wv, &a, &o[q]);
            for (int i = 0; i < g[q]->nops; i++)
                if (g[q]->ops[i]->vt->stats) {
                    EngOpStats es = {0};
                    g[q]->ops[i]->vt->stats(g[q]->ops[i], &es);
                    total_evicted += es.evicted;
                }
        }
    }
    for (int q = 0; q < NTQ; q++) {
        eng_graph_free(g[q]);
        ue_out_free(&o[q]);
    }
    strbuf_free(&sql);
    strbuf_free(&out);
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
    for (int t = 0; t < 2; t++) {
        ue_sql(&env, t ? "CREATE TABLE uu (id int PRIMARY KEY, a int, b text, c int, ts timestamp)"
                       : "CREATE TABLE tt (id int PRIMARY KEY, a int, b text, c int, ts timestamp)",
               &out);
        CHECK(out.len == 0, "%s", out.data);
    }
    /* T0_US is the text time the rows are written in */
    {
        Arena a;
        arena_init(&a, 0);
        Vector v;
        SlError e = {0};
        vector_init(&v, &a, (SlType){.id = TYPE_TIMESTAMP}, 1, true);
        CHECK(value_parse_text(&a, v.type, "2026-01-01 10:00:00", 19, &v, 0, -1, &e) == 0 &&
              v.v.i64[0] == T0_US, "T0_US");
        arena_destroy(&a);
    }
    const char *more = getenv("SLUICE_ENGINE_DIFF_SEEDS");
    int n = more ? atoi(more) : (int)(sizeof(seeds) / sizeof(seeds[0]));
    for (int i = 0; i < n; i++)
        run_seed(more ? 100000 + (uint64_t)i : seeds[i], i);
    for (int i = 0; i < n; i++)
        run_seed_time(more ? 200000 + (uint64_t)i : seeds[i], i);
    CHECK(total_evicted > 0, "no window or session was ever evicted");
    strbuf_free(&out);
    ue_close(&env);
    return unit_done("engine_diff");
}
