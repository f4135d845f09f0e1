/*
 * test_engine_agg.c -- the operator graph's operators one case at a time
 * (src/engine/op_filter.c, op_project.c, op_aggregate.c, compile.c), each
 * expected answer worked out by hand from SQL's definition: deltas in
 * (rows as text with weights), the batch's output deltas out, exactly,
 * retractions included -- min and max after the min or max is retracted,
 * a group that vanishes, an unchanged group that emits nothing, weights
 * above 1, count(DISTINCT), the one row of an aggregate without GROUP BY,
 * tumbling windows, an aggregate over an aggregate, stddev and variance
 * of exact inputs -- through real state
 * commits (a StateStore in a temporary directory) with the in-memory
 * cache dropped (restore) and the graph built anew between batches, a
 * batch thrown away before its commit, a batch that fails (nothing of it
 * stays), the state keys the aggregate leaves, each operator's EXPLAIN
 * line and state figures, a stream joined to a table compiled as a lookup
 * join, and the rewriter's refusals (0A000) of what the graph does not
 * run.
 */
#include "unit_engine.h"
#include "sluice/bytes.h"

static UeEnv env;

/* One batch of rows (text) with weights into g; checks its output deltas
 * ("+1 a|2\n-1 b|1\n", in emission order).  commit false: the batch is
 * thrown away after it ran. */
static void batch(EngGraph *g, UeOut *o, const char *const *rows, const int64_t *w, int n,
                  bool commit, const char *want)
{
    Arena a;
    arena_init(&a, 0);
    EngDelta d = ue_delta(&a, env.scan_cols, env.scan_ncols, rows, w, n);
    const EngDelta *ds[1] = {n > 0 ? &d : NULL};
    StrBuf err;
    strbuf_init(&err);
    CHECK(ue_run(&env, g, ds, &a, o, commit, &err) == 0, "%s", err.data);
    const char *got = o->batch.data ? o->batch.data : "";
    CHECK(strcmp(got, want) == 0, "\n  got:  %s\n  want: %s", got, want);
    strbuf_free(&err);
    arena_destroy(&a);
}

/* How many state keys the graph's operator op has with kind byte k. */
static int nkeys(uint32_t oid, int op, char k)
{
    uint8_t p[ENG_PREFIX_LEN + 1] = {'G', 0, 0, 0, 0, 0, (uint8_t)op, (uint8_t)k};
    put_be32(p + 1, oid);
    StateScan *s = state_scan_open(env.d.st, p, sizeof(p));
    const void *key, *val;
    size_t klen, vlen;
    int n = 0;
    while (state_scan_next(s, &key, &klen, &val, &vlen))
        n++;
    state_scan_close(s, NULL);
    return n;
}

static int agg_index(const EngGraph *g)
{
    for (int i = 0; i < g->nops; i++)
        if (strcmp(g->ops[i]->vt->kind, "aggregate") == 0)
            return i;
    return -1;
}

static void test_group_minmax(void)
{
    const char *sql = "SELECT k, count(*), sum(v), min(v), max(v) FROM u GROUP BY k";
    StrBuf err;
    strbuf_init(&err);
    EngGraph *g = ue_compile(&env, sql, 101, &err);
    CHECK(g != NULL, "%s", err.data);
    if (g == NULL)
        return;
    UeOut o;
    ue_out_init(&o);
    int ai = agg_index(g);
    {
        const char *r[] = {"a|5|NULL|NULL", "a|7|NULL|NULL", "b|1|NULL|NULL"};
        int64_t w[] = {1, 1, 1};
        batch(g, &o, r, w, 3, true, "+1 a|2|12|5|7\n+1 b|1|1|1|1\n");
    }
    CHECK(nkeys(101, ai, 'g') == 2 && nkeys(101, ai, 'm') == 2 * 3,
          "groups %d, values %d", nkeys(101, ai, 'g'), nkeys(101, ai, 'm'));
    {   /* the max retracted: the next one */
        const char *r[] = {"a|7|NULL|NULL"};
        int64_t w[] = {-1};
        batch(g, &o, r, w, 1, true, "-1 a|2|12|5|7\n+1 a|1|5|5|5\n");
    }
    {   /* a group that vanishes: its row retracted, its keys deleted */
        const char *r[] = {"b|1|NULL|NULL"};
        int64_t w[] = {-1};
        batch(g, &o, r, w, 1, true, "-1 b|1|1|1|1\n");
    }
    CHECK(nkeys(101, ai, 'g') == 1 && nkeys(101, ai, 'm') == 2,
          "groups %d, values %d", nkeys(101, ai, 'g'), nkeys(101, ai, 'm'));
    /* the cache dropped: the next batch reads the state back */
    {
        SlError e = {0};
        EngCtx cx = {.err = &e, .st = env.d.st};
        CHECK(eng_graph_restore(g, &cx) == 0);
        const char *r[] = {"a|3|NULL|NULL"};
        int64_t w[] = {1};
        batch(g, &o, r, w, 1, true, "-1 a|1|5|5|5\n+1 a|2|8|3|5\n");
    }
    /* a graph built anew over the same state (a restart) */
    eng_graph_free(g);
    g = ue_compile(&env, sql, 101, &err);
    {
        const char *r[] = {"b|2|NULL|NULL", "a|5|NULL|NULL"};
        int64_t w[] = {1, -1};
        batch(g, &o, r, w, 2, true, "+1 b|1|2|2|2\n-1 a|2|8|3|5\n+1 a|1|3|3|3\n");
    }
    {   /* a batch thrown away before its commit leaves nothing behind */
        const char *r[] = {"a|100|NULL|NULL", "b|2|NULL|NULL"};
        int64_t w[] = {1, -1};
        batch(g, &o, r, w, 2, false, "-1 a|1|3|3|3\n+1 a|2|103|3|100\n-1 b|1|2|2|2\n");
        const char *r2[] = {"a|1|NULL|NULL"};
        int64_t w2[] = {1};
        batch(g, &o, r2, w2, 1, true, "-1 a|1|3|3|3\n+1 a|2|4|1|3\n");
    }
    {   /* an update that changes nothing of the group: no output */
        const char *r[] = {"a|3|NULL|NULL", "a|3|NULL|NULL"};
        int64_t w[] = {-1, 1};
        batch(g, &o, r, w, 2, true, "");
    }
    {   /* weights above 1, and the min retracted */
        const char *r[] = {"c|4|NULL|NULL", "a|1|NULL|NULL"};
        int64_t w[] = {3, -1};
        batch(g, &o, r, w, 2, true, "+1 c|3|12|4|4\n-1 a|2|4|1|3\n+1 a|1|3|3|3\n");
    }
    {   /* NULL arguments count in count(*) only */
        const char *r[] = {"c|NULL|NULL|NULL"};
        int64_t w[] = {1};
        batch(g, &o, r, w, 1, true, "-1 c|3|12|4|4\n+1 c|4|12|4|4\n");
    }
    {   /* the max retracted, a larger value inserted, the old max back, in
         * one batch: the max is the larger value */
        const char *r[] = {"d|5|NULL|NULL"};
        int64_t w[] = {1};
        batch(g, &o, r, w, 1, true, "+1 d|1|5|5|5\n");
        const char *r2[] = {"d|5|NULL|NULL", "d|9|NULL|NULL", "d|5|NULL|NULL"};
        int64_t w2[] = {-1, 1, 1};
        batch(g, &o, r2, w2, 3, true, "-1 d|1|5|5|5\n+1 d|2|14|5|9\n");
    }
    StrBuf lines;
    strbuf_init(&lines);
    ue_out_lines(&o, &lines);
    CHECK(strcmp(lines.data, "a|1|3|3|3\nb|1|2|2|2\nc|4|12|4|4\nd|2|14|5|9\n") == 0, "%s",
          lines.data);
    strbuf_free(&lines);
    strbuf_free(&err);
    ue_out_free(&o);
    eng_graph_free(g);
}

static void test_scalar(void)
{
    StrBuf err;
    strbuf_init(&err);
    EngGraph *g = ue_compile(&env, "SELECT count(*), sum(v), max(k) FROM u WHERE v > 0", 102,
                             &err);
    CHECK(g != NULL, "%s", err.data);
    if (g == NULL)
        return;
    UeOut o;
    ue_out_init(&o);
    /* the one row exists before any input */
    batch(g, &o, NULL, NULL, 0, true, "+1 0|NULL|NULL\n");
    batch(g, &o, NULL, NULL, 0, true, "");
    const char *r[] = {"x|2|NULL|NULL", "y|-1|NULL|NULL"};
    int64_t w[] = {1, 1};
    batch(g, &o, r, w, 2, true, "-1 0|NULL|NULL\n+1 1|2|x\n");
    eng_graph_free(g);
    g = ue_compile(&env, "SELECT count(*), sum(v), max(k) FROM u WHERE v > 0", 102, &err);
    int64_t wm[] = {-1, -1};
    batch(g, &o, r, wm, 2, true, "-1 1|2|x\n+1 0|NULL|NULL\n");
    ue_out_free(&o);
    eng_graph_free(g);
    strbuf_free(&err);
}

static void test_window(void)
{
    StrBuf err;
    strbuf_init(&err);
    const char *sql = "SELECT window_start, window_end, k, count(*) FROM u "
                      "GROUP BY WINDOW(ts, INTERVAL '1 minute'), k";
    EngGraph *g = ue_compile(&env, sql, 103, &err);
    CHECK(g != NULL, "%s", err.data);
    if (g == NULL)
        return;
    UeOut o;
    ue_out_init(&o);
    const char *r[] = {"a|1|NULL|2026-01-01 10:00:30", "a|1|NULL|2026-01-01 10:01:10",
                       "a|1|NULL|2026-01-01 10:00:59.999999", "a|1|NULL|NULL"};
    int64_t w[] = {1, 1, 1, 1};
    batch(g, &o, r, w, 4, true,
          "+1 2026-01-01 10:00:00|2026-01-01 10:01:00|a|2\n"
          "+1 2026-01-01 10:01:00|2026-01-01 10:02:00|a|1\n");
    int64_t w2[] = {-1};
    batch(g, &o, r + 1, w2, 1, true, "-1 2026-01-01 10:01:00|2026-01-01 10:02:00|a|1\n");
    ue_out_free(&o);
    eng_graph_free(g);
    strbuf_free(&err);
}

static void test_nested(void)
{
    StrBuf err, lines;
    strbuf_init(&err);
    strbuf_init(&lines);
    EngGraph *g = ue_compile(&env, "SELECT n, count(*) FROM (SELECT k, count(*) AS n FROM u "
                                   "GROUP BY k) x GROUP BY n", 104, &err);
    CHECK(g != NULL, "%s", err.data);
    if (g == NULL)
        return;
    UeOut o;
    ue_out_init(&o);
    const char *r[] = {"a|1|NULL|NULL", "a|2|NULL|NULL", "b|3|NULL|NULL", "b|4|NULL|NULL",
                       "c|5|NULL|NULL"};
    int64_t w[] = {1, 1, 1, 1, 1};
    /* a and b have 2 rows, c 1 */
    batch(g, &o, r, w, 5, true, "+1 2|2\n+1 1|1\n");
    /* b loses one: a 2, b 1, c 1 */
    int64_t w2[] = {-1};
    batch(g, &o, r + 2, w2, 1, true, "-1 2|2\n+1 2|1\n-1 1|1\n+1 1|2\n");
    /* a loses both: b 1, c 1 */
    int64_t w3[] = {-1, -1};
    batch(g, &o, r, w3, 2, true, "-1 2|1\n");
    ue_out_lines(&o, &lines);
    CHECK(strcmp(lines.data, "1|2\n") == 0, "%s", lines.data);
    ue_out_free(&o);
    eng_graph_free(g);
    strbuf_free(&err);
    strbuf_free(&lines);
}

/* A batch that fails (a group with more rows retracted than inserted)
 * commits nothing; after restore the graph goes on from the last commit. */
static void test_failed_batch(void)
{
    StrBuf err;
    strbuf_init(&err);
    EngGraph *g = ue_compile(&env, "SELECT k, sum(v) FROM u GROUP BY k", 105, &err);
    CHECK(g != NULL, "%s", err.data);
    if (g == NULL)
        return;
    UeOut o;
    ue_out_init(&o);
    const char *r[] = {"a|1|NULL|NULL", "b|2|NULL|NULL"};
    int64_t w[] = {1, 1};
    batch(g, &o, r, w, 2, true, "+1 a|1\n+1 b|2\n");
    Arena a;
    arena_init(&a, 0);
    int64_t bad[] = {1, -2};
    EngDelta d = ue_delta(&a, env.scan_cols, env.scan_ncols, r, bad, 2);
    const EngDelta *ds[1] = {&d};
    strbuf_reset(&err);
    CHECK(ue_run(&env, g, ds, &a, &o, true, &err) == -1);
    CHECK(strcmp(err.data ? err.data : "", "ERROR XX000 aggregate: a group has "
                 "more rows retracted than inserted") == 0, "%s", err.data);
    arena_destroy(&a);
    /* ue_run restored the graph: a's 1 is still there, b's 2 too */
    const char *r2[] = {"a|5|NULL|NULL"};
    int64_t w2[] = {1};
    batch(g, &o, r2, w2, 1, true, "-1 a|1\n+1 a|6\n");
    StrBuf lines;
    strbuf_init(&lines);
    ue_out_lines(&o, &lines);
    CHECK(strcmp(lines.data, "a|6\nb|2\n") == 0, "%s", lines.data);
    strbuf_free(&lines);
    ue_out_free(&o);
    eng_graph_free(g);
    strbuf_free(&err);
}

/* count(DISTINCT): a value counts while its weight is above 0; after
 * restore the count comes back from the stored values. */
static void test_count_distinct(void)
{
    StrBuf err;
    strbuf_init(&err);
    EngGraph *g = ue_compile(&env, "SELECT k, count(DISTINCT v) FROM u GROUP BY k", 107, &err);
    CHECK(g != NULL, "%s", err.data);
    if (g == NULL)
        return;
    UeOut o;
    ue_out_init(&o);
    const char *r[] = {"a|1|NULL|NULL", "a|1|NULL|NULL", "a|2|NULL|NULL", "a|NULL|NULL|NULL"};
    int64_t w[] = {1, 1, 1, 1};
    batch(g, &o, r, w, 4, true, "+1 a|2\n");
    int64_t w1[] = {-1};
    batch(g, &o, r, w1, 1, true, "");
    batch(g, &o, r, w1, 1, true, "-1 a|2\n+1 a|1\n");
    SlError e = {0};
    EngCtx cx = {.err = &e, .st = env.d.st};
    CHECK(eng_graph_restore(g, &cx) == 0);
    const char *r3[] = {"a|3|NULL|NULL"};
    int64_t w3[] = {1};
    batch(g, &o, r3, w3, 1, true, "-1 a|1\n+1 a|2\n");
    ue_out_free(&o);
    eng_graph_free(g);
    strbuf_free(&err);
}

/* Each operator's EXPLAIN line and state figures. */
static void test_explain(void)
{
    StrBuf err, text;
    strbuf_init(&err);
    strbuf_init(&text);
    EngGraph *g = ue_compile(&env, "SELECT k, count(*), max(v) FROM u WHERE v > 0 GROUP BY k",
                             106, &err);
    CHECK(g != NULL, "%s", err.data);
    if (g == NULL)
        return;
    for (int i = 0; i < g->nops; i++) {
        g->ops[i]->vt->explain(g->ops[i], &text);
        strbuf_putc(&text, '\n');
    }
    CHECK(strcmp(text.data, "Filter: (v > 0)\n"
                            "Aggregate: count(*), max(v) by k (state: unbounded)\n"
                            "Project: k, count(*), max(u.v)\n") == 0, "%s", text.data);
    UeOut o;
    ue_out_init(&o);
    const char *r[] = {"a|1|NULL|NULL", "b|2|NULL|NULL", "b|-2|NULL|NULL"};
    int64_t w[] = {1, 1, 1};
    batch(g, &o, r, w, 3, true, "+1 a|1|1\n+1 b|1|2\n");
    EngOpStats st = {0};
    int ai = agg_index(g);
    g->ops[ai]->vt->stats(g->ops[ai], &st);
    CHECK(st.rows == 2 && st.bytes > 0 && st.evicted == 0, "%lld groups", (long long)st.rows);
    CHECK(g->ops[ai]->bound == ENG_BOUND_UNBOUNDED);
    ue_out_free(&o);
    eng_graph_free(g);
    strbuf_free(&err);
    strbuf_free(&text);
}

/* One batch of a two-source graph: rows l into source 0, r into source 1
 * (n 0: no delta), each of weight w; checks the output deltas. */
static void batch2(EngGraph *g, UeOut *o, const char *const *l, int nl, const char *const *r,
                   int nr, const int64_t *w, const char *want)
{
    Arena a;
    arena_init(&a, 0);
    EngDelta dl = ue_delta(&a, env.scans[0]->cols, env.scans[0]->ncols, l, w, nl);
    EngDelta dr = ue_delta(&a, env.scans[1]->cols, env.scans[1]->ncols, r, w, nr);
    const EngDelta *ds[2] = {nl > 0 ? &dl : NULL, nr > 0 ? &dr : NULL};
    StrBuf err;
    strbuf_init(&err);
    CHECK(ue_run(&env, g, ds, &a, o, true, &err) == 0, "%s", err.data);
    const char *got = o->batch.data ? o->batch.data : "";
    CHECK(strcmp(got, want) == 0, "\n  got:  %s\n  want: %s", got, want);
    strbuf_free(&err);
    arena_destroy(&a);
}

/* A stream joined to a table is a lookup join (the rewriter's choice): a
 * stream row joins the table as the batch leaves it, and a later change
 * of the table does not retract what it joined. */
static void test_lookup_join(void)
{
    StrBuf err;
    strbuf_init(&err);
    EngGraph *g = ue_compile(&env, "SELECT ev.k, ev.x, u.v FROM ev JOIN u ON ev.k = u.k", 108,
                             &err);
    CHECK(g != NULL, "%s", err.data);
    CHECK(env.nscans == 2 && strcmp(env.scans[0]->u.scan.rel->name, "ev") == 0);
    UeOut o;
    ue_out_init(&o);
    const char *u1[] = {"a|1|NULL|NULL"}, *ev1[] = {"a|10"}, *ev2[] = {"a|11"};
    const char *u2[] = {"a|1|NULL|NULL", "a|2|NULL|NULL"};
    int64_t one[] = {1}, upd[] = {-1, 1};
    batch2(g, &o, NULL, 0, u1, 1, one, "");
    batch2(g, &o, ev1, 1, NULL, 0, one, "+1 a|10|1\n");
    batch2(g, &o, NULL, 0, u2, 2, upd, "");
    batch2(g, &o, ev2, 1, NULL, 0, one, "+1 a|11|2\n");
    ue_out_free(&o);
    eng_graph_free(g);
    strbuf_free(&err);
}

static void expect_refused(const char *sql, const char *want)
{
    StrBuf err;
    strbuf_init(&err);
    EngGraph *g = ue_compile(&env, sql, 199, &err);
    CHECK(g == NULL && strcmp(err.data ? err.data : "", want) == 0, "%s\n  got:  %s\n  want: %s",
          sql, err.data ? err.data : "(a graph)", want);
    eng_graph_free(g);
    strbuf_free(&err);
}

/* stddev and variance of exact inputs: exact sums of x and x*x kept over
 * retractions (and read back after a restore), the result PostgreSQL's
 * numeric_stddev_internal over the rows left. */
static void test_variance(void)
{
    const char *sql = "SELECT k, var_pop(v), stddev(d) FROM u GROUP BY k";
    StrBuf err;
    strbuf_init(&err);
    EngGraph *g = ue_compile(&env, sql, 109, &err);
    CHECK(g != NULL, "%s", err.data);
    if (g == NULL)
        return;
    UeOut o;
    ue_out_init(&o);
    {   /* a: v 1, 3 -> (2*10 - 4*4) / (2*2) = 1 at numeric division's scale
         * (20); d 1.5, 2.25 -> sqrt(0.5625 / 2); b: one row, numerator 0 -> 0 */
        const char *r[] = {"a|1|1.5|NULL", "a|3|2.25|NULL", "b|5|NULL|NULL"};
        int64_t w[] = {1, 1, 1};
        batch(g, &o, r, w, 3, true,
              "+1 a|1.00000000000000000000|0.53033008588991064330\n+1 b|0|NULL\n");
    }
    {   /* 3 and 2.25 retracted: one row, var_pop 0 and no sample stddev */
        const char *r[] = {"a|3|2.25|NULL"};
        int64_t w[] = {-1};
        batch(g, &o, r, w, 1, true,
              "-1 a|1.00000000000000000000|0.53033008588991064330\n+1 a|0|NULL\n");
    }
    {   /* read back from the state: v 1, 2 (twice weighted) -> 2/9; d 1.5, 2.5, 2.5 */
        SlError e = {0};
        EngCtx cx = {.err = &e, .st = env.d.st};
        CHECK(eng_graph_restore(g, &cx) == 0);
        const char *r[] = {"a|2|2.5|NULL"};
        int64_t w[] = {2};
        batch(g, &o, r, w, 1, true,
              "-1 a|0|NULL\n+1 a|0.22222222222222222222|0.57735026918962576451\n");
    }
    strbuf_free(&err);
    ue_out_free(&o);
    eng_graph_free(g);
}

static void test_refusals(void)
{
    expect_refused("SELECT k FROM u ORDER BY k",
                   "ERROR 0A000 the operator graph does not yet run Sort");
    expect_refused("SELECT u.k FROM u JOIN u AS w ON u.k = w.k AND random() < 0.5",
                   "ERROR 0A000 the operator graph cannot run random(): its value may change "
                   "between a row's insertion and its retraction");
    expect_refused("SELECT ev.k, u.v FROM ev RIGHT JOIN u ON ev.k = u.k",
                   "ERROR 0A000 a stream-table join cannot keep the table's unmatched rows");
    expect_refused("SELECT DISTINCT ON (k) k, v FROM u",
                   "ERROR 0A000 the operator graph does not yet run DISTINCT ON");
    expect_refused("SELECT sum(v::float8) FROM u",
                   "ERROR 0A000 the operator graph cannot keep sum or avg of floating point "
                   "(its rounding depends on the order of the rows) over retractions");
    expect_refused("SELECT sum(DISTINCT v) FROM u",
                   "ERROR 0A000 the operator graph cannot keep sum(DISTINCT) over retractions");
    expect_refused("SELECT stddev(v::float8) FROM u",
                   "ERROR 0A000 the operator graph cannot keep stddev or variance of floating "
                   "point (its rounding depends on the order of the rows) over retractions");
    expect_refused("SELECT corr(v, v) FROM u",
                   "ERROR 0A000 the operator graph cannot keep corr over retractions");
    expect_refused("SELECT string_agg(k, ',' ORDER BY v) FROM u",
                   "ERROR 0A000 the operator graph cannot keep string_agg with ORDER BY over "
                   "retractions");
    expect_refused("SELECT string_agg(k, ',') FROM u",
                   "ERROR 0A000 the operator graph cannot keep string_agg over retractions");
    expect_refused("SELECT k FROM u WHERE random() < 0.5",
                   "ERROR 0A000 the operator graph cannot run random(): its value may change "
                   "between a row's insertion and its retraction");
    expect_refused("SELECT k FROM u WHERE v IN (SELECT v FROM u)",
                   "ERROR 0A000 the operator graph does not yet run IN / ANY (subquery) in "
                   "expressions");
    expect_refused("SELECT k FROM u WHERE v > (SELECT v FROM u WHERE k = 'a')",
                   "ERROR 0A000 the operator graph runs a scalar subquery in an expression only "
                   "over an aggregate without GROUP BY (exactly one row)");
    expect_refused("SELECT k, (SELECT max(v) FROM u HAVING count(*) > 1) FROM u",
                   "ERROR 0A000 the operator graph runs a scalar subquery in an expression only "
                   "over an aggregate without GROUP BY (exactly one row)");
    expect_refused("SELECT u.k FROM u JOIN u AS w ON u.k = w.k AND u.v > (SELECT avg(v) "
                   "FROM u)",
                   "ERROR 0A000 the operator graph does not yet run scalar subqueries in "
                   "expressions");
    expect_refused("SELECT k, count(*) FILTER (WHERE v > (SELECT avg(v) FROM u)) FROM u "
                   "GROUP BY k",
                   "ERROR 0A000 the operator graph does not yet run scalar subqueries in "
                   "expressions");
    expect_refused("SELECT k FROM u WHERE EXISTS (SELECT 1 FROM u AS w WHERE w.k = u.k)",
                   "ERROR 0A000 the operator graph does not yet run correlated subqueries in "
                   "expressions");
}

int main(void)
{
    ue_open(&env, "engine-agg");
    StrBuf out;
    strbuf_init(&out);
    ue_sql(&env, "CREATE TABLE u (k text, v int, d numeric, ts timestamp)", &out);
    CHECK(out.len == 0, "%s", out.data);
    ue_sql(&env, "CREATE STREAM ev (k text, x int)", &out);
    CHECK(out.len == 0, "%s", out.data);
    test_group_minmax();
    test_scalar();
    test_window();
    test_nested();
    test_failed_batch();
    test_count_distinct();
    test_explain();
    test_lookup_join();
    test_variance();
    test_refusals();
    strbuf_free(&out);
    ue_close(&env);
    return unit_done("engine_agg");
}
