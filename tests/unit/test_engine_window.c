/*
 * test_engine_window.c -- sliding and session windows in the operator
 * graph (src/engine/op_aggregate.c, op_session.c, compile.c's AGG case):
 * analyzed SQL over a stream s (k, ts, v) whose ts is the event time
 * (offset 0), run batch by batch with deltas and watermarks, each
 * batch's output delta checked line by line.
 *
 * Sliding: a row counts in each of its windows and its retraction leaves
 * each; window_start/window_end are timed (offsets 1 - size and 1); the
 * watermark evicts the windows it closes (committed keys, stats), a row
 * for a closed window fails its batch (22000), a failed batch rerun
 * emits what one run does, a graph built anew over the state goes on.
 * Session: a row that bridges two sessions merges them (both retracted,
 * the merged one inserted), its retraction splits them again; the
 * watermark closes sessions (end <= watermark) and both operators evict
 * them (from memory and, after a restore, from the store by the
 * session operator's index); a row below the eviction watermark fails
 * its batch; a graph built anew goes on.  Both summed outputs equal the
 * batch engine's answer over a table of the rows taken.
 */
#include "unit_engine.h"

static UeEnv env;

#define S INT64_C(1000000)

static EngGraph *compile(const char *sql, uint32_t oid)
{
    StrBuf err;
    strbuf_init(&err);
    EngGraph *g = ue_compile_time(&env, sql, oid, ue_ts_time, NULL, &err);
    CHECK(g != NULL, "%s: %s", sql, err.data);
    strbuf_free(&err);
    return g;
}

/* One batch: rows "k|ts|v" (ts as seconds after 2000-01-01 00:00:00,
 * written out here) with weights w, then watermark wm seconds (< 0:
 * none); commit or throw away.  Returns eng_graph_run's result; the
 * error in err (may be NULL) and the batch's output delta, its lines
 * sorted, in got (may be NULL). */
static int run(EngGraph *g, UeOut *o, const char *const *rows, const int64_t *w, int n,
               int64_t wm, bool commit, StrBuf *err, StrBuf *got)
{
    Arena a;
    arena_init(&a, 0);
    char text[16][64];
    const char *r[16];
    for (int i = 0; i < n && i < 16; i++) {
        int k, sec, v;
        CHECK(sscanf(rows[i], "%d|%d|%d", &k, &sec, &v) == 3, "%s", rows[i]);
        snprintf(text[i], sizeof(text[i]), "%d|2000-01-01 00:%02d:%02d|%d", k, sec / 60,
                 sec % 60, v);
        r[i] = text[i];
    }
    EngDelta d = ue_delta(&a, env.scans[0]->cols, env.scans[0]->ncols, r, w, n);
    const EngDelta *ds[1] = {n > 0 ? &d : NULL};
    bool has[1] = {wm >= 0};
    int64_t wms[1] = {wm * S};
    StrBuf e;
    strbuf_init(&e);
    int rc = ue_run_wm(&env, g, ds, has, wms, &a, o, commit, &e);
    if (err)
        strbuf_printf(err, "%s", e.data ? e.data : "");
    if (got)
        ue_sort_lines(o->batch.data, got);
    strbuf_free(&e);
    arena_destroy(&a);
    return rc;
}

/* A batch that must succeed and emit exactly want (sorted lines). */
static void batch(EngGraph *g, UeOut *o, const char *const *rows, const int64_t *w, int n,
                  int64_t wm, const char *want)
{
    StrBuf err, got, ws;
    strbuf_init(&err);
    strbuf_init(&got);
    strbuf_init(&ws);
    CHECK(run(g, o, rows, w, n, wm, true, &err, &got) == 0, "%s", err.data);
    ue_sort_lines(want, &ws);
    CHECK(strcmp(got.data ? got.data : "", ws.data ? ws.data : "") == 0,
          "\n  got:\n%s  want:\n%s", got.data ? got.data : "", ws.data ? ws.data : "");
    strbuf_free(&err);
    strbuf_free(&got);
    strbuf_free(&ws);
}

/* A batch that must fail with 22000 (a late row). */
static void late(EngGraph *g, UeOut *o, const char *row, int64_t wm)
{
    StrBuf err;
    strbuf_init(&err);
    int64_t one[] = {1};
    CHECK(run(g, o, &row, one, 1, wm, true, &err, NULL) < 0, "a late row was taken: %s", row);
    CHECK(err.data && strstr(err.data, "ERROR 22000") != NULL, "%s", err.data);
    strbuf_free(&err);
}

/* The committed keys of op under its prefix + tag. */
static int64_t keys(const EngOp *op, char tag)
{
    uint8_t p[ENG_PREFIX_LEN + 1];
    memcpy(p, op->prefix, ENG_PREFIX_LEN);
    p[ENG_PREFIX_LEN] = (uint8_t)tag;
    StateScan *s = state_scan_open(env.d.st, p, sizeof(p));
    const void *k, *v;
    size_t kl, vl;
    int64_t n = 0;
    while (state_scan_next(s, &k, &kl, &v, &vl))
        n++;
    SlError err = {0};
    CHECK(state_scan_close(s, &err) == 0, "%s", err.message);
    return n;
}

static void explain_has(const EngOp *op, const char *want)
{
    StrBuf sb;
    strbuf_init(&sb);
    op->vt->explain(op, &sb);
    strbuf_putc(&sb, 0);
    CHECK(strstr(sb.data, want) != NULL, "\n  got:  %s\n  want: ...%s...", sb.data, want);
    strbuf_free(&sb);
}

#define T(s) "2000-01-01 00:00:" #s

static const char *const slide_sql =
    "SELECT k, window_start, window_end, count(*), sum(v) FROM %s "
    "GROUP BY WINDOW(ts, INTERVAL '10 seconds', INTERVAL '5 seconds'), k";

static void test_sliding(void)
{
    char sql[256];
    snprintf(sql, sizeof(sql), slide_sql, "s");
    EngGraph *g = compile(sql, 301);
    int ag = ue_op_of(g, "aggregate");
    CHECK(ag >= 0);
    EngOp *op = g->ops[ag];
    CHECK(op->out_time.n == 2 && op->out_time.cols[0].col == 1 &&
          op->out_time.cols[0].offset_us == 1 - 10 * S && op->out_time.cols[1].col == 2 &&
          op->out_time.cols[1].offset_us == 1, "out_time.n %d", op->out_time.n);
    CHECK(op->bound == ENG_BOUND_WATERMARK);
    explain_has(op, "per sliding window (state: evicts by watermark)");
    UeOut o;
    ue_out_init(&o);
    int64_t one[] = {1}, upd[] = {-1, 1};
    /* 7s is in [0, 10) and [5, 15) */
    const char *r1[] = {"1|7|3"};
    batch(g, &o, r1, one, 1, -1,
          "+1 1|" T(00) "|" T(10) "|1|3\n+1 1|" T(05) "|" T(15) "|1|3\n");
    /* an update: retracted from both windows, the new row in both */
    const char *r2[] = {"1|7|3", "1|8|4"};
    batch(g, &o, r2, upd, 2, -1,
          "-1 1|" T(00) "|" T(10) "|1|3\n-1 1|" T(05) "|" T(15) "|1|3\n"
          "+1 1|" T(00) "|" T(10) "|1|4\n+1 1|" T(05) "|" T(15) "|1|4\n");
    CHECK(keys(op, 'g') == 2, "%lld", (long long)keys(op, 'g'));
    /* a failed batch rerun: the rerun emits what one run does */
    const char *r3[] = {"2|9|5"};
    CHECK(run(g, &o, r3, one, 1, -1, false, NULL, NULL) == 0);
    batch(g, &o, r3, one, 1, -1,
          "+1 2|" T(00) "|" T(10) "|1|5\n+1 2|" T(05) "|" T(15) "|1|5\n");
    /* watermark 10s closes [0, 10): evicted, nothing retracted */
    batch(g, &o, NULL, NULL, 0, 10, "");
    EngOpStats st;
    op->vt->stats(op, &st);
    CHECK(keys(op, 'g') == 2 && st.evicted == 2, "%lld keys, %lld evicted",
          (long long)keys(op, 'g'), (long long)st.evicted);
    CHECK(g->op_wm[g->output] == 10 * S);
    /* 9s would count in the closed [0, 10) */
    late(g, &o, "1|9|1", -1);
    /* a graph built anew over the state goes on */
    EngGraph *g2 = compile(sql, 301);
    late(g2, &o, "1|9|1", -1);
    const char *r4[] = {"1|12|12"};
    batch(g2, &o, r4, one, 1, -1,
          "-1 1|" T(05) "|" T(15) "|1|4\n+1 1|" T(05) "|" T(15) "|2|16\n"
          "+1 1|" T(10) "|" T(20) "|1|12\n");
    batch(g2, &o, NULL, NULL, 0, 100, "");
    op = g2->ops[ag];
    CHECK(keys(op, 'g') == 0, "%lld", (long long)keys(op, 'g'));
    StrBuf out;
    strbuf_init(&out);
    ue_sql(&env, "INSERT INTO t VALUES (1, '" T(08) "', 4), (2, '" T(09) "', 5), "
                 "(1, '" T(12) "', 12)", &out);
    CHECK(out.len == 0, "%s", out.data);
    snprintf(sql, sizeof(sql), slide_sql, "t");
    ue_outputs_equal(&env, &o, sql);
    ue_sql(&env, "DELETE FROM t", &out);
    strbuf_free(&out);
    ue_out_free(&o);
    eng_graph_free(g);
    eng_graph_free(g2);
}

static const char *const sess_sql =
    "SELECT k, window_start, window_end, count(*), sum(v) FROM %s "
    "GROUP BY SESSION(ts, INTERVAL '5 seconds'), k";

static void test_session(void)
{
    char sql[256];
    snprintf(sql, sizeof(sql), sess_sql, "s");
    EngGraph *g = compile(sql, 302);
    int so = ue_op_of(g, "session"), ag = ue_op_of(g, "aggregate");
    CHECK(so >= 0 && ag > so, "session %d aggregate %d", so, ag);
    EngOp *sop = g->ops[so], *aop = g->ops[ag];
    /* window_end is timed (an open session ends after wm), window_start
     * is not */
    CHECK(sop->out_time.n == 1 && sop->out_time.cols[0].col == 4 &&
          sop->out_time.cols[0].offset_us == 1);
    CHECK(aop->out_time.n == 1 && aop->out_time.cols[0].col == 2 &&
          aop->out_time.cols[0].offset_us == 1, "aggregate out_time.n %d", aop->out_time.n);
    CHECK(sop->bound == ENG_BOUND_WATERMARK && aop->bound == ENG_BOUND_WATERMARK);
    explain_has(sop, "Session window: ts per k, gap 5000000 us (state: evicts by watermark)");
    UeOut o;
    ue_out_init(&o);
    int64_t one[] = {1}, minus[] = {-1}, two[] = {1, 1};
    const char *r1[] = {"1|10|1", "1|18|2"};
    batch(g, &o, r1, two, 2, -1,
          "+1 1|" T(10) "|" T(15) "|1|1\n+1 1|" T(18) "|" T(23) "|1|2\n");
    /* 14s bridges them: both retracted, the merged one inserted (a failed
     * batch first: its rerun emits the same) */
    const char *r2[] = {"1|14|4"};
    CHECK(run(g, &o, r2, one, 1, -1, false, NULL, NULL) == 0);
    batch(g, &o, r2, one, 1, -1,
          "-1 1|" T(10) "|" T(15) "|1|1\n-1 1|" T(18) "|" T(23) "|1|2\n"
          "+1 1|" T(10) "|" T(23) "|3|7\n");
    /* its retraction splits them again */
    batch(g, &o, r2, minus, 1, -1,
          "-1 1|" T(10) "|" T(23) "|3|7\n"
          "+1 1|" T(10) "|" T(15) "|1|1\n+1 1|" T(18) "|" T(23) "|1|2\n");
    CHECK(keys(sop, 'r') == 2 && keys(sop, 'e') == 1, "%lld rows %lld index",
          (long long)keys(sop, 'r'), (long long)keys(sop, 'e'));
    /* watermark 16s closes [10, 15) of k 1 and [11, 16) of k 2 */
    const char *r3[] = {"2|11|8"};
    batch(g, &o, r3, one, 1, 16, "+1 2|" T(11) "|" T(16) "|1|8\n");
    EngOpStats st;
    sop->vt->stats(sop, &st);
    CHECK(keys(sop, 'r') == 1 && keys(sop, 'e') == 1 && st.rows == 1 && st.evicted == 2,
          "%lld rows, %lld index, stats %lld %lld", (long long)keys(sop, 'r'),
          (long long)keys(sop, 'e'), (long long)st.rows, (long long)st.evicted);
    CHECK(keys(aop, 'g') == 1, "%lld", (long long)keys(aop, 'g'));
    CHECK(g->op_wm[g->output] == 16 * S);
    /* 15s is below the watermark the sessions were evicted at */
    late(g, &o, "1|15|1", -1);
    /* a graph built anew over the state: 20s joins [18, 23), 30s is a
     * new key */
    EngGraph *g2 = compile(sql, 302);
    late(g2, &o, "3|12|1", -1);
    const char *r4[] = {"1|20|3", "3|30|9"};
    batch(g2, &o, r4, two, 2, -1,
          "-1 1|" T(18) "|" T(23) "|1|2\n+1 1|" T(18) "|" T(25) "|2|5\n"
          "+1 3|" T(30) "|" T(35) "|1|9\n");
    /* restored (nothing in memory): the index finds k 1's session closed
     * at 26s, k 3's is still open */
    SlError e = {0};
    Arena a;
    arena_init(&a, 0);
    EngCtx cx = {.arena = &a, .err = &e, .st = env.d.st};
    CHECK(eng_graph_restore(g2, &cx) == 0);
    arena_destroy(&a);
    sop = g2->ops[so];
    aop = g2->ops[ag];
    batch(g2, &o, NULL, NULL, 0, 26, "");
    sop->vt->stats(sop, &st);
    CHECK(keys(sop, 'r') == 1 && keys(sop, 'e') == 1 && st.rows == 1 && st.evicted == 4,
          "%lld rows, stats %lld %lld", (long long)keys(sop, 'r'), (long long)st.rows,
          (long long)st.evicted);
    CHECK(keys(aop, 'g') == 1, "%lld", (long long)keys(aop, 'g'));
    batch(g2, &o, NULL, NULL, 0, 100, "");
    CHECK(keys(sop, 'r') == 0 && keys(sop, 'e') == 0 && keys(aop, 'g') == 0);
    StrBuf out;
    strbuf_init(&out);
    ue_sql(&env, "INSERT INTO t VALUES (1, '" T(10) "', 1), (1, '" T(18) "', 2), "
                 "(2, '" T(11) "', 8), (1, '" T(20) "', 3), (3, '" T(30) "', 9)", &out);
    CHECK(out.len == 0, "%s", out.data);
    snprintf(sql, sizeof(sql), sess_sql, "t");
    ue_outputs_equal(&env, &o, sql);
    ue_sql(&env, "DELETE FROM t", &out);
    ue_out_free(&o);
    eng_graph_free(g);
    eng_graph_free(g2);

    /* without event time: unbounded, no watermark out */
    g = ue_compile(&env, "SELECT window_end, count(*) FROM s GROUP BY SESSION(ts, "
                         "INTERVAL '1 second')", 303, &out);
    CHECK(g != NULL);
    so = ue_op_of(g, "session");
    CHECK(g->ops[so]->bound == ENG_BOUND_UNBOUNDED && g->ops[so]->out_time.n == 0);
    eng_graph_free(g);
    strbuf_free(&out);
}

int main(void)
{
    ue_open(&env, "engine-window");
    StrBuf out;
    strbuf_init(&out);
    ue_sql(&env, "CREATE STREAM s (k int, ts timestamp, v int)", &out);
    CHECK(out.len == 0, "%s", out.data);
    ue_sql(&env, "CREATE TABLE t (k int, ts timestamp, v int)", &out);
    CHECK(out.len == 0, "%s", out.data);
    test_sliding();
    test_session();
    strbuf_free(&out);
    ue_close(&env);
    return unit_done("engine_window");
}
