/*
 * test_engine_time.c -- event time through the rewriter (src/engine/
 * compile.c, op_filter.c, op_project.c, op_aggregate.c): analyzed SQL over two streams
 * with WATERMARK FOR compiled with each source's watermark column (read
 * from the catalog's options, as the runtime does), then run batch by
 * batch with the streams' watermarks (max event time less the delay).
 *
 * Checked: filter and project carry the time columns (a bare reference
 * keeps its column, an expression drops it) and forward the watermark
 * downstream, or state none when no time column is left; an interval join
 * over a filtered projection of a stream and another stream is bounded
 * (EXPLAIN line, op->bound), evicts its rows as the watermarks advance
 * (its state figures fall to 0) and its summed output equals the batch
 * engine's answer over tables holding the same rows; the same join over a
 * projection that computes its time column is unbounded; a distinct and a
 * union get their inputs' time and forward the watermark; a tumbling-window
 * aggregate times window_start/window_end, evicts the windows the
 * watermark closes (committed keys fall, stats.evicted, nothing
 * retracted), forwards the watermark to an aggregate over it by
 * window_end (bounded, evicting too), fails a batch with a late row
 * (after a restore and in a graph built anew), and both summed outputs
 * are the batch engine's (it adds rows to table ta: it runs last).  With
 * output_mode 'append' (eng_graph_close_only) a window aggregate under an
 * interval join (Nexmark q7's shape) emits each window once, when it
 * closes, nothing is retracted, and the sum is the batch engine's.
 */
#include "unit_engine.h"
#include "op_join.h"

static UeEnv env;

#define S INT64_C(1000000)

static EngGraph *compile(const char *sql, uint32_t oid)
{
    StrBuf err;
    strbuf_init(&err);
    EngGraph *g = ue_compile_time(&env, sql, oid, ue_scan_time, NULL, &err);
    CHECK(g != NULL, "%s: %s", sql, err.data);
    strbuf_free(&err);
    return g;
}

/* One batch: rows (text) into each source (NULL: none), then the
 * watermarks wm[s] (< 0: none); the output summed into o. */
static void batch(EngGraph *g, UeOut *o, const char *const *l, int nl, const char *const *r,
                  int nr, int64_t wm0, int64_t wm1)
{
    Arena a;
    arena_init(&a, 0);
    int64_t w[8] = {1, 1, 1, 1, 1, 1, 1, 1};
    const EngDelta *ds[2] = {NULL, NULL};
    EngDelta d[2];
    const char *const *rows[2] = {l, r};
    int n[2] = {nl, nr};
    for (int s = 0; s < env.nscans; s++)
        if (n[s] > 0) {
            d[s] = ue_delta(&a, env.scans[s]->cols, env.scans[s]->ncols, rows[s], w, n[s]);
            ds[s] = &d[s];
        }
    bool has[2] = {wm0 >= 0, wm1 >= 0};
    int64_t wm[2] = {wm0, wm1};
    StrBuf err;
    strbuf_init(&err);
    CHECK(ue_run_wm(&env, g, ds, has, wm, &a, o, true, &err) == 0, "%s", err.data);
    strbuf_free(&err);
    arena_destroy(&a);
}

static void explain_is(const EngOp *op, const char *want)
{
    StrBuf sb;
    strbuf_init(&sb);
    op->vt->explain(op, &sb);
    strbuf_putc(&sb, 0);
    CHECK(strcmp(sb.data, want) == 0, "\n  got:  %s\n  want: %s", sb.data, want);
    strbuf_free(&sb);
}

/* A filter keeps its input's time column; a project keeps a bare
 * reference to it (at its output position) and forwards the watermark;
 * one that drops it states none. */
static void test_forward(void)
{
    EngGraph *g = compile("SELECT v, ts, k FROM a WHERE v > 0", 201);
    int f = ue_op_of(g, "filter"), p = ue_op_of(g, "project");
    CHECK(f >= 0 && p >= 0 && g->output == p);
    CHECK(g->ops[f]->out_time.n == 1 && g->ops[f]->out_time.cols[0].col == 1);
    CHECK(g->ops[p]->out_time.n == 1 && g->ops[p]->out_time.cols[0].col == 1,
          "project's time columns: %d", g->ops[p]->out_time.n);
    UeOut o;
    ue_out_init(&o);
    const char *rows[] = {"1|2000-01-01 00:00:07|3", "0|2000-01-01 00:00:08|4"};
    batch(g, &o, rows, 2, NULL, 0, 5 * S, -1);
    CHECK(g->op_wm[f] == 5 * S, "filter's watermark %lld", (long long)g->op_wm[f]);
    CHECK(g->op_wm[p] == 5 * S, "project's watermark %lld", (long long)g->op_wm[p]);
    batch(g, &o, NULL, 0, NULL, 0, 6 * S, -1);
    CHECK(g->op_wm[p] == 6 * S, "project's watermark %lld", (long long)g->op_wm[p]);
    ue_out_free(&o);
    eng_graph_free(g);

    /* the time column computed, not referenced: no time, no watermark */
    g = compile("SELECT k, ts + INTERVAL '1 second' AS ts FROM a WHERE v > 0", 202);
    p = ue_op_of(g, "project");
    f = ue_op_of(g, "filter");
    CHECK(p >= 0 && g->ops[p]->out_time.n == 0);
    ue_out_init(&o);
    batch(g, &o, rows, 2, NULL, 0, 5 * S, -1);
    CHECK(g->op_wm[f] == 5 * S && g->op_wm[p] == INT64_MIN, "%lld",
          (long long)g->op_wm[p]);
    ue_out_free(&o);
    eng_graph_free(g);

    /* a table has no watermark column: nothing is timed */
    g = compile("SELECT k, ts FROM ta WHERE v > 0", 203);
    f = ue_op_of(g, "filter");
    CHECK(f >= 0 && g->ops[f]->out_time.n == 0);
    eng_graph_free(g);
}

static const char *const join_sql =
    "SELECT x.k, x.ts, %s.ts, %s.w FROM (SELECT k, ts FROM %s WHERE v > 0) x JOIN %s "
    "ON x.k = %s.k AND x.ts BETWEEN %s.ts - INTERVAL '5 seconds' AND %s.ts";

static void join_text(char *buf, size_t n, const char *l, const char *r)
{
    snprintf(buf, n, join_sql, r, r, l, r, r, r, r);
}

/* The interval join over a filtered projection of stream a and stream b:
 * bounded by the watermarks, its state evicted as they advance, its
 * output the batch engine's over the same rows. */
static void test_interval_join(void)
{
    char sql[512];
    join_text(sql, sizeof(sql), "a", "b");
    EngGraph *g = compile(sql, 204);
    int j = ue_op_of(g, "join");
    CHECK(j >= 0);
    EngOp *op = g->ops[j];
    CHECK(op->bound == ENG_BOUND_WATERMARK, "bound %d", (int)op->bound);
    explain_is(op, "join (inner) on 1 key and a residual condition, interval "
                   "-5000000..0 us: evicts by watermark");
    UeOut o;
    ue_out_init(&o);
    EngOpStats st;
    /* no watermark yet: every row that passed the filter is kept */
    const char *a1[] = {"1|2000-01-01 00:00:10|1", "1|2000-01-01 00:00:12|0",
                        "2|2000-01-01 00:00:11|1"};
    const char *b1[] = {"1|2000-01-01 00:00:14|100", "2|2000-01-01 00:00:20|200"};
    batch(g, &o, a1, 3, b1, 2, -1, -1);
    op->vt->stats(op, &st);
    CHECK(st.rows == 4 && st.evicted == 0, "%lld kept", (long long)st.rows);
    /* watermarks a 10s (max 12s - 2s), b 18s: left rows below 13s can
     * match no later right row: both evicted */
    batch(g, &o, NULL, 0, NULL, 0, 10 * S, 18 * S);
    op->vt->stats(op, &st);
    CHECK(st.rows == 2 && st.evicted == 2, "%lld kept, %lld evicted", (long long)st.rows,
          (long long)st.evicted);
    /* the join's own watermark reached it through the project */
    CHECK(g->op_wm[j] > INT64_MIN);
    /* a 16s and 17s, b 21s; watermarks a 15s, b 19s: r@14s evicted */
    const char *a2[] = {"1|2000-01-01 00:00:16|1", "2|2000-01-01 00:00:17|1"};
    const char *b2[] = {"1|2000-01-01 00:00:21|300"};
    batch(g, &o, a2, 2, b2, 1, 15 * S, 19 * S);
    op->vt->stats(op, &st);
    CHECK(st.rows == 4 && st.evicted == 3, "%lld kept, %lld evicted", (long long)st.rows,
          (long long)st.evicted);
    /* everything closed */
    batch(g, &o, NULL, 0, NULL, 0, 100 * S, 100 * S);
    op->vt->stats(op, &st);
    CHECK(st.rows == 0 && st.evicted == 7, "%lld kept, %lld evicted", (long long)st.rows,
          (long long)st.evicted);
    join_text(sql, sizeof(sql), "ta", "tb");
    ue_outputs_equal(&env, &o, sql);
    ue_out_free(&o);
    eng_graph_free(g);
}

/* The same join with x.ts computed by the projection: no time column on
 * the left edge, so no interval bound. */
static void test_unbounded_join(void)
{
    EngGraph *g = compile("SELECT x.k, b.w FROM (SELECT k, ts + INTERVAL '0 seconds' AS ts "
                          "FROM a) x JOIN b ON x.k = b.k AND x.ts BETWEEN b.ts - "
                          "INTERVAL '5 seconds' AND b.ts",
                          205);
    int j = ue_op_of(g, "join");
    CHECK(j >= 0 && g->ops[j]->bound == ENG_BOUND_UNBOUNDED, "bound %d",
          j >= 0 ? (int)g->ops[j]->bound : -1);
    /* b's edge is timed, x's is not */
    CHECK(g->ops[j]->in_time[0].n == 0 && g->ops[j]->in_time[1].n == 1);
    explain_is(g->ops[j], "join (inner) on 1 key and a residual condition: unbounded");
    eng_graph_free(g);
}

/* A distinct and a union over the streams' projections get their time
 * columns and forward the watermark (the union's the smaller one). */
static void test_distinct_setop(void)
{
    EngGraph *g = compile("SELECT DISTINCT k, ts FROM a", 206);
    int d = ue_op_of(g, "distinct");
    CHECK(d >= 0 && g->ops[d]->in_time[0].n == 1 && g->ops[d]->out_time.n == 1);
    UeOut o;
    ue_out_init(&o);
    batch(g, &o, NULL, 0, NULL, 0, 7 * S, -1);
    CHECK(g->op_wm[g->output] == 7 * S, "%lld", (long long)g->op_wm[g->output]);
    ue_out_free(&o);
    eng_graph_free(g);

    g = compile("SELECT k, ts FROM a UNION SELECT k, ts FROM b", 207);
    int u = g->output;
    CHECK(g->ops[u]->in_time[0].n == 1 && g->ops[u]->in_time[1].n == 1 &&
          g->ops[u]->out_time.n == 1, "%s", g->ops[u]->vt->kind);
    ue_out_init(&o);
    batch(g, &o, NULL, 0, NULL, 0, 7 * S, 9 * S);
    CHECK(g->op_wm[u] == 7 * S, "%lld", (long long)g->op_wm[u]);
    ue_out_free(&o);
    eng_graph_free(g);
}

/* The committed keys of aggregate op: its group rows ('g'), with
 * multisets the values of its min/max ('m'). */
static int64_t agg_keys(const EngOp *op)
{
    StateScan *s = state_scan_open(env.d.st, op->prefix, ENG_PREFIX_LEN);
    const void *k, *v;
    size_t kl, vl;
    int64_t n = 0;
    while (state_scan_next(s, &k, &kl, &v, &vl))
        n += ((const uint8_t *)k)[ENG_PREFIX_LEN] != 'w';
    SlError err = {0};
    CHECK(state_scan_close(s, &err) == 0, "%s", err.message);
    return n;
}

static int last_op_of(const EngGraph *g, const char *kind)
{
    for (int i = g->nops - 1; i >= 0; i--)
        if (strcmp(g->ops[i]->vt->kind, kind) == 0)
            return i;
    return -1;
}

/* One batch of rows into a expected to fail (a late row). */
static void late_batch(EngGraph *g, UeOut *o, const char *row, int64_t wm)
{
    Arena a;
    arena_init(&a, 0);
    int64_t w[1] = {1};
    EngDelta d = ue_delta(&a, env.scans[0]->cols, env.scans[0]->ncols, &row, w, 1);
    const EngDelta *ds[2] = {&d, NULL};
    bool has[2] = {wm >= 0, false};
    int64_t wms[2] = {wm, 0};
    StrBuf err;
    strbuf_init(&err);
    CHECK(ue_run_wm(&env, g, ds, has, wms, &a, o, true, &err) < 0, "a late row was taken");
    CHECK(err.data && strstr(err.data, "ERROR 22000") != NULL, "%s", err.data);
    strbuf_free(&err);
    arena_destroy(&a);
}

static const char *const win_sql =
    "SELECT k, window_start, window_end, count(*) AS n, sum(v) AS s FROM %s "
    "GROUP BY WINDOW(ts, INTERVAL '5 seconds'), k";
static const char *const win2_sql =
    "SELECT window_end, count(*) AS c, sum(n) AS t, max(k) AS m FROM (SELECT k, window_end, "
    "count(*) AS n FROM %s GROUP BY WINDOW(ts, INTERVAL '5 seconds'), k) x GROUP BY window_end";

/* A tumbling-window aggregate over stream a: window_start/window_end are
 * its output's time columns, its groups are evicted as the watermark
 * passes their window's end (their rows stay in the output), a late row
 * fails its batch, before and after a restore; an aggregate over it by
 * window_end is bounded too.  The summed outputs are the batch engine's. */
static void test_window_aggregate(void)
{
    char sql[512];
    snprintf(sql, sizeof(sql), win_sql, "a");
    EngGraph *g = compile(sql, 208);
    snprintf(sql, sizeof(sql), win2_sql, "a");
    EngGraph *g2 = compile(sql, 209);
    int ag = ue_op_of(g, "aggregate"), lo = ue_op_of(g2, "aggregate");
    int up = last_op_of(g2, "aggregate");
    CHECK(ag >= 0 && lo >= 0 && up > lo);
    EngOp *op = g->ops[ag], *upper = g2->ops[up];
    /* k, window_start, window_end: the window's columns are timed, the
     * promise one microsecond past the input's (window_end > time) */
    CHECK(op->out_time.n == 2 && op->out_time.cols[0].col == 1 &&
          op->out_time.cols[0].offset_us == 1 - 5 * S && op->out_time.cols[1].col == 2 &&
          op->out_time.cols[1].offset_us == 1, "out_time.n %d", op->out_time.n);
    CHECK(op->bound == ENG_BOUND_WATERMARK && upper->bound == ENG_BOUND_WATERMARK,
          "bounds %d %d", (int)op->bound, (int)upper->bound);
    CHECK(upper->in_time[0].n >= 1 && upper->out_time.n == 1);
    UeOut o, o2;
    ue_out_init(&o);
    ue_out_init(&o2);
    EngOpStats st;
    const char *a1[] = {"1|2000-01-01 00:00:10|1", "1|2000-01-01 00:00:12|0",
                        "2|2000-01-01 00:00:11|1"};
    const char *a2[] = {"1|2000-01-01 00:00:16|1", "2|2000-01-01 00:00:17|1"};
    batch(g, &o, a1, 3, NULL, 0, -1, -1);
    batch(g2, &o2, a1, 3, NULL, 0, -1, -1);
    CHECK(agg_keys(op) == 2 && agg_keys(upper) == 3, "%lld", (long long)agg_keys(upper));
    /* watermark 14s: no window ends at or before it */
    batch(g, &o, a2, 2, NULL, 0, 14 * S, -1);
    batch(g2, &o2, a2, 2, NULL, 0, 14 * S, -1);
    op->vt->stats(op, &st);
    CHECK(agg_keys(op) == 4 && st.evicted == 0, "%lld keys", (long long)agg_keys(op));
    CHECK(agg_keys(upper) == 6, "%lld", (long long)agg_keys(upper));
    CHECK(g->op_wm[ag] == 14 * S && g->op_wm[g->output] == 14 * S, "%lld",
          (long long)g->op_wm[ag]);
    /* 15s closes the windows ending at 15s: evicted, not retracted */
    batch(g, &o, NULL, 0, NULL, 0, 15 * S, -1);
    batch(g2, &o2, NULL, 0, NULL, 0, 15 * S, -1);
    op->vt->stats(op, &st);
    CHECK(agg_keys(op) == 2 && st.evicted == 2, "%lld keys, %lld evicted",
          (long long)agg_keys(op), (long long)st.evicted);
    CHECK(strlen(o.batch.data ? o.batch.data : "") == 0, "eviction emitted: %s", o.batch.data);
    CHECK(g2->op_wm[up] == 15 * S, "upper's watermark %lld", (long long)g2->op_wm[up]);
    upper->vt->stats(upper, &st);
    CHECK(agg_keys(upper) == 3 && st.evicted == 1, "upper: %lld keys, %lld evicted",
          (long long)agg_keys(upper), (long long)st.evicted);
    /* a row for a closed window fails its batch; the graph restored goes on */
    late_batch(g, &o, "1|2000-01-01 00:00:13|5", -1);
    late_batch(g, &o, "1|2000-01-01 00:00:13|5", 16 * S);
    /* and so does a new graph over the same state (a restart) */
    snprintf(sql, sizeof(sql), win_sql, "a");
    EngGraph *g3 = compile(sql, 208);
    UeOut o3;
    ue_out_init(&o3);
    late_batch(g3, &o3, "2|2000-01-01 00:00:14|5", -1);
    ue_out_free(&o3);
    eng_graph_free(g3);
    /* open windows take rows after the restore */
    const char *a3[] = {"1|2000-01-01 00:00:19|2", "2|2000-01-01 00:00:21|4"};
    batch(g, &o, a3, 2, NULL, 0, -1, -1);
    batch(g2, &o2, a3, 2, NULL, 0, -1, -1);
    StrBuf out;
    strbuf_init(&out);
    ue_sql(&env, "INSERT INTO ta VALUES (1, '2000-01-01 00:00:19', 2), "
                 "(2, '2000-01-01 00:00:21', 4)", &out);
    strbuf_free(&out);
    /* everything closed */
    batch(g, &o, NULL, 0, NULL, 0, 100 * S, -1);
    batch(g2, &o2, NULL, 0, NULL, 0, 100 * S, -1);
    op->vt->stats(op, &st);
    CHECK(agg_keys(op) == 0 && st.evicted == 5, "%lld keys, %lld evicted",
          (long long)agg_keys(op), (long long)st.evicted);
    CHECK(agg_keys(upper) == 0);
    snprintf(sql, sizeof(sql), win_sql, "ta");
    ue_outputs_equal(&env, &o, sql);
    snprintf(sql, sizeof(sql), win2_sql, "ta");
    ue_outputs_equal(&env, &o2, sql);
    ue_out_free(&o);
    ue_out_free(&o2);
    eng_graph_free(g);
    eng_graph_free(g2);

    /* no window, no time key: no output time, no watermark, unbounded */
    g = compile("SELECT k, count(*) FROM a GROUP BY k", 210);
    ag = ue_op_of(g, "aggregate");
    CHECK(g->ops[ag]->out_time.n == 0 && g->ops[ag]->bound == ENG_BOUND_UNBOUNDED);
    ue_out_init(&o);
    batch(g, &o, a1, 3, NULL, 0, 50 * S, -1);
    CHECK(g->op_wm[ag] == INT64_MIN);
    ue_out_free(&o);
    eng_graph_free(g);
    /* a bare time column as group key is timed with its offset */
    g = compile("SELECT ts, count(*) FROM a GROUP BY ts", 211);
    ag = ue_op_of(g, "aggregate");
    CHECK(g->ops[ag]->out_time.n == 1 && g->ops[ag]->out_time.cols[0].col == 0 &&
          g->ops[ag]->out_time.cols[0].offset_us == 0);
    eng_graph_free(g);
}

/* output_mode 'append' (eng_graph_close_only): Nexmark q7's shape over
 * stream a, each window's maximum v joined back to a's rows of that value
 * in the window.  The aggregate emits a window's row once, when the
 * watermark closes it, so nothing comes out before, no row is ever
 * retracted, and the join keeps a's rows only while the interval needs
 * them; at the end the summed output is the batch engine's over table tq
 * of the same rows.  An aggregate the watermark cannot close is refused. */
static const char *const q7_sql =
    "SELECT x.k, x.ts, x.v, m.window_end FROM %s AS x JOIN (SELECT max(v) AS mv, window_end "
    "FROM %s GROUP BY WINDOW(ts, INTERVAL '5 seconds')) AS m ON x.v = m.mv "
    "AND x.ts BETWEEN m.window_end - INTERVAL '5 seconds' AND m.window_end";

static void no_retraction(const UeOut *o, const char *what)
{
    const char *b = o->batch.data ? o->batch.data : "";
    CHECK(b[0] != '-' && strstr(b, "\n-") == NULL, "%s retracted: %s", what, b);
}

static void test_close_only(void)
{
    char sql[512];
    snprintf(sql, sizeof(sql), q7_sql, "a", "a");
    EngGraph *g = compile(sql, 212);
    SlError err = {0};
    CHECK(eng_graph_close_only(g, &err) == 0, "%s", err.message);
    int ag = ue_op_of(g, "aggregate"), jn = ue_op_of(g, "join");
    CHECK(ag >= 0 && jn >= 0);
    explain_is(g->ops[ag], "Aggregate: max(v) per tumbling window, each group emitted once, "
                           "when the watermark closes it (state: evicts by watermark)");
    StrBuf out;
    strbuf_init(&out);
    ue_sql(&env, "CREATE TABLE tq (k int, ts timestamp, v int)", &out);
    UeOut o;
    ue_out_init(&o);
    const char *r1[] = {"1|2000-01-01 00:00:01|7", "2|2000-01-01 00:00:02|9",
                        "3|2000-01-01 00:00:06|4", "4|2000-01-01 00:00:03|9"};
    const char *r2[] = {"5|2000-01-01 00:00:07|8", "6|2000-01-01 00:00:10|4",
                        "7|2000-01-01 00:00:12|1"};
    /* no watermark: no window closed, nothing out */
    batch(g, &o, r1, 4, r1, 4, -1, -1);
    CHECK(o.batch.len == 0, "before any window closed: %s", o.batch.data);
    /* 5s closes [0s, 5s): its two rows at 9 */
    batch(g, &o, r2, 3, r2, 3, 5 * S, 5 * S);
    CHECK(o.batch.data != NULL && strstr(o.batch.data, "|9|") != NULL, "%s", o.batch.data);
    no_retraction(&o, "window [0s, 5s)");
    /* 10s closes [5s, 10s): its maximum 8; the row at 10s is kept (its
     * window is open) */
    batch(g, &o, NULL, 0, NULL, 0, 10 * S, 10 * S);
    no_retraction(&o, "window [5s, 10s)");
    EngOpStats st;
    g->ops[jn]->vt->stats(g->ops[jn], &st);
    CHECK(st.evicted > 0, "the join evicted nothing");
    /* a graph built anew over the state (a restart), then every window
     * closes */
    eng_graph_free(g);
    snprintf(sql, sizeof(sql), q7_sql, "a", "a");
    g = compile(sql, 212);
    CHECK(eng_graph_close_only(g, &err) == 0, "%s", err.message);
    batch(g, &o, NULL, 0, NULL, 0, 100 * S, 100 * S);
    no_retraction(&o, "the end");
    ue_sql(&env, "INSERT INTO tq VALUES (1, '2000-01-01 00:00:01', 7), "
                 "(2, '2000-01-01 00:00:02', 9), (3, '2000-01-01 00:00:06', 4), "
                 "(4, '2000-01-01 00:00:03', 9), (5, '2000-01-01 00:00:07', 8), "
                 "(6, '2000-01-01 00:00:10', 4), (7, '2000-01-01 00:00:12', 1)", &out);
    snprintf(sql, sizeof(sql), q7_sql, "tq", "tq");
    ue_outputs_equal(&env, &o, sql);
    ue_out_free(&o);
    eng_graph_free(g);
    /* nothing closes a group without a window or a time key: refused */
    g = compile("SELECT k, count(*) FROM a GROUP BY k", 213);
    CHECK(eng_graph_close_only(g, &err) < 0 && strcmp(err.sqlstate, "0A000") == 0,
          "%s", err.message);
    sl_error_clear(&err);
    eng_graph_free(g);
    strbuf_free(&out);
}

int main(void)
{
    ue_open(&env, "engine-time");
    StrBuf out;
    strbuf_init(&out);
    ue_sql(&env,
           "CREATE STREAM a (k int, ts timestamp, v int, WATERMARK FOR ts AS ts - "
           "INTERVAL '2 seconds')",
           &out);
    CHECK(out.len == 0, "%s", out.data);
    ue_sql(&env,
           "CREATE STREAM b (k int, ts timestamp, w int, WATERMARK FOR ts AS ts - "
           "INTERVAL '2 seconds')",
           &out);
    CHECK(out.len == 0, "%s", out.data);
    /* the batch engine's model: tables of the same rows */
    ue_sql(&env, "CREATE TABLE ta (k int, ts timestamp, v int)", &out);
    ue_sql(&env, "CREATE TABLE tb (k int, ts timestamp, w int)", &out);
    ue_sql(&env,
           "INSERT INTO ta VALUES (1, '2000-01-01 00:00:10', 1), (1, '2000-01-01 00:00:12', 0), "
           "(2, '2000-01-01 00:00:11', 1), (1, '2000-01-01 00:00:16', 1), "
           "(2, '2000-01-01 00:00:17', 1)",
           &out);
    ue_sql(&env,
           "INSERT INTO tb VALUES (1, '2000-01-01 00:00:14', 100), "
           "(2, '2000-01-01 00:00:20', 200), (1, '2000-01-01 00:00:21', 300)",
           &out);
    test_forward();
    test_close_only();
    test_interval_join();
    test_unbounded_join();
    test_distinct_setop();
    test_window_aggregate();
    strbuf_free(&out);
    ue_close(&env);
    return unit_done("engine_time");
}
