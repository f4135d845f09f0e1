/*
 * test_engine_join.c -- the operator graph's join (src/engine/op_join.c)
 * alone in a graph, its state in a real state store (unit_data.h): inner,
 * left, right and full joins with inserts and retractions, padded rows
 * retracted when a match arrives and emitted again when the last match
 * goes, residual conditions, duplicate rows, both sides in one batch,
 * checkpoint, restore (a failed batch rerun) and lazy reloads, eviction by
 * watermark under an interval bound, stream-table (lookup) joins, joins
 * made from analyzed SQL; then a randomized check of every join type
 * against a model written here (a nested-loop join over the accumulated
 * multisets; for lookup joins, each batch's stream rows against the table
 * as the batch leaves it) over random batch splits, with fixed seeds.
 *
 * Rows are (k bigint, v bigint, ts timestamp) on each side; the output's
 * sum over the batches so far is kept as "k|v|ts|k|v|ts" lines with
 * weights (NULL as "N") and compared with the expectation's.
 */
#include "unit.h"
#include "unit_data.h"
#include "unit_bag.h"
#include "op_join.h"
#include "sql/parser.h"
#include "sluice/bytes.h"
#include "sluice/exec.h"
#include "sluice/rowcodec.h"

#include <stdlib.h>
#include <string.h>

#define NULLV INT64_MIN     /* a NULL value in the tests' rows */

static const ColumnDesc side_cols[3] = {
    {"k", {TYPE_INT8, -1, TYPE_UNKNOWN}}, {"v", {TYPE_INT8, -1, TYPE_UNKNOWN}}, {"ts", {TYPE_TIMESTAMP, -1, TYPE_UNKNOWN}},
};
static const EngEdgeTime side_time = {1, {{2, 0}}};

static void fmt_val(char *p, size_t n, int64_t v)
{
    if (v == NULLV)
        snprintf(p, n, "N");
    else
        snprintf(p, n, "%lld", (long long)v);
}

/* The output line of a left row (or NULLs) and a right row (or NULLs). */
static void pair_text(char *out, size_t n, const int64_t *l, const int64_t *r)
{
    char f[6][24];
    for (int c = 0; c < 3; c++) {
        fmt_val(f[c], sizeof(f[c]), l ? l[c] : NULLV);
        fmt_val(f[3 + c], sizeof(f[3 + c]), r ? r[c] : NULLV);
    }
    snprintf(out, n, "%s|%s|%s|%s|%s|%s", f[0], f[1], f[2], f[3], f[4], f[5]);
}

/* The graph's output sink: every delta into the bag. */
static int collect_cb(void *arg, const EngDelta *d, EngCtx *cx)
{
    SL_UNUSED(cx);
    Bag *bag = arg;
    CHECK(d->rows.ncols == 6);
    for (uint32_t r = 0; r < d->rows.nrows; r++) {
        int64_t v[6];
        for (int c = 0; c < 6; c++)
            v[c] = vector_is_null(&d->rows.cols[c], r) ? NULLV : d->rows.cols[c].v.i64[r];
        char text[160];
        pair_text(text, sizeof(text), v, v + 3);
        bag_add(bag, text, d->weights[r]);
    }
    return 0;
}

/* ------------------------------------------------------------ the harness */

/* One store for every case; each harness is a query of its own oid. */
static UnitData data;
static uint32_t next_oid = 1;

typedef struct Harness {
    UnitData *data;
    EngGraph *g;
    EngOp    *op;
    Arena     batch;
    Bag       out;          /* the sum of the output so far */
    int64_t   wm[2];        /* the watermarks sent so far */
    bool      has_wm[2];
    char      sqlstate[6];  /* the last failed batch's */
} Harness;

/* A row of the tests: k, v, ts (NULLV for NULL) and a weight. */
typedef struct TRow {
    int64_t k, v, ts, w;
} TRow;

static const Expr *residual_v_lt(Arena *a);

/* A harness around a join made elsewhere (op: taken, NULL fails). */
static void h_attach(Harness *h, EngOp *op)
{
    memset(h, 0, sizeof(*h));
    h->data = &data;
    arena_init(&h->batch, 0);
    h->op = op;
    h->g = eng_graph_new(next_oid++);
    const int producers[2] = {-1, -2};
    CHECK(op != NULL && eng_graph_add(h->g, op, producers) == 0);
}

static EngOp *new_join(EngJoinType type, const Expr *residual, const EngJoinInterval *iv,
                       int lookup, SlError *err)
{
    static Expr key = {.kind = EXPR_COLUMN, .type = {TYPE_INT8, -1, TYPE_UNKNOWN}, .location = -1,
                       .index = 0, .cost = 1};
    static Expr *const keys[1] = {&key};
    EngJoinSpec spec = {.type = type, .nkeys = 1, .lkeys = keys, .rkeys = keys,
                        .residual = residual, .interval = iv, .lookup = lookup};
    return eng_op_join_new(&spec, side_cols, 3, &side_time, side_cols, 3, &side_time, err);
}

static void h_open(Harness *h, EngJoinType type, const Expr *residual,
                   const EngJoinInterval *iv)
{
    SlError err = {0};
    EngOp *op = new_join(type, residual, iv, -1, &err);
    CHECK(op != NULL, "%s", err.message);
    h_attach(h, op);
}

static void h_close(Harness *h)
{
    eng_graph_free(h->g);
    arena_destroy(&h->batch);
    bag_clear(&h->out);
}

static void make_delta(EngDelta *d, Arena *a, const TRow *rows, int n)
{
    eng_delta_init(d, a, side_cols, 3, (uint32_t)(n > 0 ? n : 1));
    Batch *one = batch_alloc(a, (SlType[]){{TYPE_INT8, -1, TYPE_UNKNOWN}, {TYPE_INT8, -1, TYPE_UNKNOWN}, {TYPE_TIMESTAMP, -1, TYPE_UNKNOWN}},
                             3, 1);
    one->nrows = 1;
    for (int i = 0; i < n; i++) {
        int64_t v[3] = {rows[i].k, rows[i].v, rows[i].ts};
        for (int c = 0; c < 3; c++) {
            one->cols[c].nulls[0] = v[c] == NULLV;
            one->cols[c].v.i64[0] = v[c] == NULLV ? 0 : v[c];
        }
        eng_delta_append(d, a, one, 0, rows[i].w);
    }
}

/* One batch: left and right rows, watermarks (wm < 0 ... see has), and
 * with commit the state write committed; without, the batch is dropped
 * as a failed one is (its output too) and the graph restored.  Returns
 * the eng_graph_run result. */
static int h_batch_ex(Harness *h, const TRow *l, int nl, const TRow *r, int nr,
                      const bool *has_wm, const int64_t *wm, bool commit)
{
    SlError err = {0};
    EvalCtx ecx = {.arena = &h->batch, .err = &err};
    StateBatch *wb = state_batch_new();
    EngCtx cx = {.arena = &h->batch, .err = &err, .ecx = &ecx, .st = h->data->st, .wb = wb,
                 .batch_id = 1};
    EngDelta dl, dr;
    make_delta(&dl, &h->batch, l, nl);
    make_delta(&dr, &h->batch, r, nr);
    const EngDelta *ds[2] = {nl ? &dl : NULL, nr ? &dr : NULL};
    Bag got = {0};
    int rc = eng_graph_run(h->g, &cx, ds, has_wm, wm, collect_cb, &got);
    if (rc == 0 && commit) {
        CHECK(state_batch_commit(h->data->st, wb, false, &err) == 0, "%s", err.message);
        for (int i = 0; i < got.n; i++)
            bag_add(&h->out, got.l[i].text, got.l[i].w);
        for (int s = 0; s < 2; s++)
            if (has_wm && has_wm[s]) {
                h->wm[s] = wm[s];
                h->has_wm[s] = true;
            }
    } else {
        CHECK(eng_graph_restore(h->g, &cx) == 0);
    }
    if (rc < 0)
        memcpy(h->sqlstate, err.sqlstate, sizeof(h->sqlstate));
    bag_clear(&got);
    state_batch_free(wb);
    sl_error_clear(&err);
    arena_reset(&h->batch);
    return rc;
}

static void h_batch(Harness *h, const TRow *l, int nl, const TRow *r, int nr)
{
    CHECK(h_batch_ex(h, l, nl, r, nr, NULL, NULL, true) == 0);
}

/* Forget the cache (as after a failed batch): the next batches read the
 * state back from the store. */
static void h_restore(Harness *h)
{
    SlError err = {0};
    EngCtx cx = {.arena = &h->batch, .err = &err, .st = h->data->st};
    CHECK(eng_graph_restore(h->g, &cx) == 0);
}

/* The output so far equals the lines given (text, weight; NULL ends). */
static void expect(Harness *h, const char *what, const char *const *lines, const int64_t *w)
{
    Bag want = {0};
    for (int i = 0; lines[i] != NULL; i++)
        bag_add(&want, lines[i], w[i]);
    CHECK(bag_equal(&h->out, &want, what), "%s", what);
    bag_clear(&want);
}

#define L(...) ((const char *const[]){__VA_ARGS__, NULL})
#define W(...) ((const int64_t[]){__VA_ARGS__})
#define ROWS(...) ((const TRow[]){__VA_ARGS__})
#define NROWS(...) ((int)(sizeof((const TRow[]){__VA_ARGS__}) / sizeof(TRow)))

/* l.v < r.v over the output's columns (1 and 4) */
static const Expr *residual_v_lt(Arena *a)
{
    const FuncDesc *fd[16];
    int n = ex_func_candidates("<", true, 2, fd, 16);
    const FuncDesc *lt = NULL;
    for (int i = 0; i < n; i++)
        if (fd[i]->args[0] == TYPE_INT8 && fd[i]->args[1] == TYPE_INT8)
            lt = fd[i];
    CHECK(lt != NULL);
    Expr *e = ARENA_NEW(a, Expr);
    Expr **args = ARENA_ARRAY(a, Expr *, 2);
    for (int i = 0; i < 2; i++) {
        args[i] = ARENA_NEW(a, Expr);
        args[i]->kind = EXPR_COLUMN;
        args[i]->type = sl_type(TYPE_INT8);
        args[i]->index = i == 0 ? 1 : 4;
        args[i]->location = -1;
        args[i]->cost = 1;
    }
    e->kind = EXPR_FUNC;
    e->type = sl_type(TYPE_BOOL);
    e->nargs = 2;
    e->args = args;
    e->fn = lt;
    e->location = -1;
    e->cost = 3;
    return e;
}

/* ------------------------------------------------------------ the cases */

static void test_inner(void)
{
    Harness h;
    h_open(&h, ENG_JOIN_INNER, NULL, NULL);
    /* both sides in one batch join once; a NULL key matches nothing */
    h_batch(&h, ROWS({1, 10, 0, 1}, {NULLV, 11, 0, 1}), 2,
            ROWS({1, 20, 0, 1}, {NULLV, 21, 0, 1}), 2);
    expect(&h, "inner: one batch", L("1|10|0|1|20|0"), W(1));
    /* a duplicate on the left (weight 2) multiplies */
    h_batch(&h, ROWS({1, 12, 0, 2}), 1, NULL, 0);
    expect(&h, "inner: duplicate", L("1|10|0|1|20|0", "1|12|0|1|20|0"), W(1, 2));
    /* a new right row joins the kept left rows, read back from the store */
    h_restore(&h);
    h_batch(&h, NULL, 0, ROWS({1, 22, 0, 1}), 1);
    expect(&h, "inner: after restore",
           L("1|10|0|1|20|0", "1|12|0|1|20|0", "1|10|0|1|22|0", "1|12|0|1|22|0"), W(1, 2, 1, 2));
    /* retracting a matched row retracts its pairs; a row and its
     * retraction in one delta cancel */
    h_batch(&h, ROWS({1, 12, 0, -1}, {1, 13, 0, 1}, {1, 13, 0, -1}), 3, ROWS({1, 20, 0, -1}), 1);
    expect(&h, "inner: retractions", L("1|10|0|1|22|0", "1|12|0|1|22|0"), W(1, 1));
    h_close(&h);
}

static void test_left(void)
{
    Harness h;
    h_open(&h, ENG_JOIN_LEFT, NULL, NULL);
    h_batch(&h, ROWS({1, 10, 0, 1}, {NULLV, 11, 0, 1}), 2, NULL, 0);
    expect(&h, "left: padded", L("1|10|0|N|N|N", "N|11|0|N|N|N"), W(1, 1));
    /* a match arrives: the padded row is retracted */
    h_batch(&h, NULL, 0, ROWS({1, 20, 0, 1}), 1);
    expect(&h, "left: matched", L("1|10|0|1|20|0", "N|11|0|N|N|N"), W(1, 1));
    /* a second match: no padded change */
    h_batch(&h, NULL, 0, ROWS({1, 21, 0, 2}), 1);
    expect(&h, "left: two matches", L("1|10|0|1|20|0", "1|10|0|1|21|0", "N|11|0|N|N|N"),
           W(1, 2, 1));
    h_restore(&h);
    /* retract one match: still matched; then the last: padded again */
    h_batch(&h, NULL, 0, ROWS({1, 20, 0, -1}), 1);
    expect(&h, "left: one match left", L("1|10|0|1|21|0", "N|11|0|N|N|N"), W(2, 1));
    h_batch(&h, NULL, 0, ROWS({1, 21, 0, -2}), 1);
    expect(&h, "left: padded again", L("1|10|0|N|N|N", "N|11|0|N|N|N"), W(1, 1));
    /* retract unmatched rows: their padded rows go */
    h_batch(&h, ROWS({1, 10, 0, -1}, {NULLV, 11, 0, -1}), 2, NULL, 0);
    expect(&h, "left: empty", L(NULL), W(0));
    /* an unmatched right row on the inner side gives nothing */
    CHECK(h.out.n == 0);
    h_close(&h);
}

static void test_right_full(void)
{
    Harness h;
    h_open(&h, ENG_JOIN_RIGHT, NULL, NULL);
    h_batch(&h, ROWS({1, 10, 0, 1}), 1, ROWS({1, 20, 0, 1}, {2, 21, 0, 1}), 2);
    expect(&h, "right", L("1|10|0|1|20|0", "N|N|N|2|21|0"), W(1, 1));
    h_batch(&h, ROWS({1, 10, 0, -1}, {2, 11, 0, 3}), 2, NULL, 0);
    expect(&h, "right: swapped", L("N|N|N|1|20|0", "2|11|0|2|21|0"), W(1, 3));
    h_close(&h);

    h_open(&h, ENG_JOIN_FULL, NULL, NULL);
    h_batch(&h, ROWS({1, 10, 0, 1}, {3, 30, 0, 1}), 2, ROWS({1, 20, 0, 1}, {2, 21, 0, 1}), 2);
    expect(&h, "full", L("1|10|0|1|20|0", "3|30|0|N|N|N", "N|N|N|2|21|0"), W(1, 1, 1));
    h_restore(&h);
    h_batch(&h, ROWS({2, 11, 0, 1}, {1, 10, 0, -1}), 2, ROWS({3, 31, 0, 1}), 1);
    expect(&h, "full: swapped",
           L("N|N|N|1|20|0", "2|11|0|2|21|0", "3|30|0|3|31|0"), W(1, 1, 1));
    h_close(&h);
}

/* A LEFT join on k with the residual l.v < r.v (h's). */
static void run_residual(Harness *h0)
{
    Harness h = *h0;
    /* 10 < 5 is false: no match, the padded row stays */
    h_batch(&h, ROWS({1, 10, 0, 1}), 1, ROWS({1, 5, 0, 1}), 1);
    expect(&h, "residual false", L("1|10|0|N|N|N"), W(1));
    /* 10 < 15 matches: the residual counts toward the degree */
    h_batch(&h, NULL, 0, ROWS({1, 15, 0, 1}), 1);
    expect(&h, "residual true", L("1|10|0|1|15|0"), W(1));
    /* retracting the non-matching row changes nothing */
    h_batch(&h, NULL, 0, ROWS({1, 5, 0, -1}), 1);
    expect(&h, "residual: unmatched retraction", L("1|10|0|1|15|0"), W(1));
    /* a NULL residual (v NULL) is no match */
    h_batch(&h, ROWS({1, NULLV, 0, 1}), 1, NULL, 0);
    expect(&h, "residual NULL", L("1|10|0|1|15|0", "1|N|0|N|N|N"), W(1, 1));
    h_batch(&h, NULL, 0, ROWS({1, 15, 0, -1}), 1);
    expect(&h, "residual: last match gone", L("1|10|0|N|N|N", "1|N|0|N|N|N"), W(1, 1));
    *h0 = h;
}

static void test_residual(void)
{
    Arena a;
    arena_init(&a, 0);
    Harness h;
    h_open(&h, ENG_JOIN_LEFT, residual_v_lt(&a), NULL);
    run_residual(&h);
    h_close(&h);
    arena_destroy(&a);
}

/* A failed batch (its write not committed) leaves nothing behind: the
 * rerun gives the same output. */
static void test_failed_batch(void)
{
    Harness h;
    h_open(&h, ENG_JOIN_FULL, NULL, NULL);
    h_batch(&h, ROWS({1, 10, 0, 1}), 1, NULL, 0);
    CHECK(h_batch_ex(&h, NULL, 0, ROWS({1, 20, 0, 1}), 1, NULL, NULL, false) == 0);
    expect(&h, "failed: nothing", L("1|10|0|N|N|N"), W(1));
    h_batch(&h, NULL, 0, ROWS({1, 20, 0, 1}), 1);
    expect(&h, "failed: rerun", L("1|10|0|1|20|0"), W(1));
    h_close(&h);
}

#define S INT64_C(1000000)

/* l.ts BETWEEN r.ts - 10s AND r.ts + 5s: rows evicted at the watermark,
 * an outer side's padded rows emitted then and only then. */
static void run_interval(Harness *h0)
{
    Harness h = *h0;
    bool has[2] = {true, true};
    int64_t wm[2] = {0, 0};
    /* l@100s matches r@95s..110s */
    CHECK(h_batch_ex(&h, ROWS({1, 10, 100 * S, 1}, {1, 11, 130 * S, 1}), 2,
                     ROWS({1, 20, 104 * S, 1}, {1, 21, 90 * S, 1}), 2, has, wm, true) == 0);
    expect(&h, "interval: no padded rows yet", L("1|10|100000000|1|20|104000000"), W(1));
    EngOpStats st;
    h.op->vt->stats(h.op, &st);
    CHECK(st.rows == 4 && st.bytes > 0 && st.evicted == 0, "%lld", (long long)st.rows);
    /* the right watermark at 115s: left rows below 105s are closed (l@100s
     * matched); the left watermark at 100s: right rows below 95s are
     * closed: r@90s gets its padded row */
    wm[0] = 100 * S;
    wm[1] = 115 * S;
    CHECK(h_batch_ex(&h, NULL, 0, NULL, 0, has, wm, true) == 0);
    expect(&h, "interval: r@90s evicted",
           L("1|10|100000000|1|20|104000000", "N|N|N|1|21|90000000"), W(1, 1));
    /* the output's watermark: min(l 100s, r 115s - 10s, r 115s, l 100s - 5s) */
    CHECK(h.g->op_wm[0] == 95 * S, "%lld", (long long)h.g->op_wm[0]);
    CHECK(h.op->out_time.n == 2 && h.op->out_time.cols[1].col == 5);
    h.op->vt->stats(h.op, &st);
    CHECK(st.evicted == 2 && st.rows == 2, "%lld", (long long)st.evicted);
    /* a late right row at 125s matches l@130s (still kept); the stats
     * come back from the store */
    h_restore(&h);
    h.op->vt->stats(h.op, &st);
    CHECK(st.evicted == 2 && st.rows == 2, "%lld", (long long)st.rows);
    CHECK(h_batch_ex(&h, NULL, 0, ROWS({1, 22, 125 * S, 1}), 1, has, wm, true) == 0);
    /* the watermarks pass everything: l@130s matched; r@104s matched; r@125s matched */
    wm[0] = 1000 * S;
    wm[1] = 1000 * S;
    CHECK(h_batch_ex(&h, ROWS({2, 12, 1000 * S, 1}), 1, NULL, 0, has, wm, true) == 0);
    expect(&h, "interval: all closed",
           L("1|10|100000000|1|20|104000000", "N|N|N|1|21|90000000",
             "1|11|130000000|1|22|125000000"), W(1, 1, 1));
    wm[1] = 2000 * S;
    CHECK(h_batch_ex(&h, NULL, 0, NULL, 0, has, wm, true) == 0);
    expect(&h, "interval: l@1000s closed unmatched",
           L("1|10|100000000|1|20|104000000", "N|N|N|1|21|90000000",
             "1|11|130000000|1|22|125000000", "2|12|1000000000|N|N|N"), W(1, 1, 1, 1));
    h.op->vt->stats(h.op, &st);
    CHECK(st.rows == 0, "%lld rows kept", (long long)st.rows);
    /* the state store holds nothing of the operator any more but its
     * counts (the 'n' key) and each side's cut ('x', 'y'): no chunk */
    StateScan *sc = state_scan_open(h.data->st, h.op->prefix, ENG_PREFIX_LEN);
    const void *k, *v;
    size_t kl, vl;
    int n = 0;
    while (state_scan_next(sc, &k, &kl, &v, &vl))
        n += !(kl == ENG_PREFIX_LEN + 1 && strchr("nxy", ((const char *)k)[ENG_PREFIX_LEN]));
    SlError err = {0};
    CHECK(state_scan_close(sc, &err) == 0);
    CHECK(n == 0, "%d keys left", n);
    /* a retraction of an evicted row is refused (0A000), not answered wrong */
    CHECK(h_batch_ex(&h, ROWS({2, 12, 1000 * S, -1}), 1, NULL, 0, has, wm, true) < 0);
    CHECK(strcmp(h.sqlstate, "0A000") == 0, "%s", h.sqlstate);
    /* also once the cache is gone (as after a restart) */
    h_restore(&h);
    memset(h.sqlstate, 0, sizeof(h.sqlstate));
    CHECK(h_batch_ex(&h, ROWS({1, 11, 130 * S, -1}), 1, NULL, 0, has, wm, true) < 0);
    CHECK(strcmp(h.sqlstate, "0A000") == 0, "%s", h.sqlstate);
    *h0 = h;
}

/* A stream-table (lookup) join: the stream's rows join the table as the
 * batch leaves it; the table's changes join nothing and retract nothing. */
static void test_lookup(void)
{
    SlError err = {0};
    Harness h;
    h_attach(&h, new_join(ENG_JOIN_LEFT, NULL, NULL, 1, &err));
    h_batch(&h, NULL, 0, ROWS({1, 20, 0, 1}, {2, 21, 0, 1}), 2);
    CHECK(h.out.n == 0);
    h_batch(&h, ROWS({1, 10, 0, 1}, {3, 11, 0, 1}), 2, NULL, 0);
    expect(&h, "lookup", L("1|10|0|1|20|0", "3|11|0|N|N|N"), W(1, 1));
    /* the table changes: what was emitted stays */
    h_batch(&h, NULL, 0, ROWS({1, 20, 0, -1}, {1, 22, 0, 1}, {3, 23, 0, 1}), 3);
    expect(&h, "lookup: table changed", L("1|10|0|1|20|0", "3|11|0|N|N|N"), W(1, 1));
    /* later stream rows see the new version (read back from the store) */
    h_restore(&h);
    h_batch(&h, ROWS({1, 12, 0, 1}, {3, 13, 0, 1}, {2, 15, 0, 2}), 3, NULL, 0);
    expect(&h, "lookup: new version",
           L("1|10|0|1|20|0", "3|11|0|N|N|N", "1|12|0|1|22|0", "3|13|0|3|23|0",
             "2|15|0|2|21|0"), W(1, 1, 1, 1, 2));
    /* a stream row and a table row in one batch (the table's pushed after
     * the stream's): the row sees the table as the batch leaves it */
    h_batch(&h, ROWS({4, 14, 0, 1}), 1, ROWS({4, 24, 0, 1}), 1);
    CHECK(bag_get(&h.out, "4|14|0|4|24|0") == 1);
    CHECK(bag_get(&h.out, "4|14|0|N|N|N") == 0);
    /* the stream side cannot retract */
    CHECK(h_batch_ex(&h, ROWS({1, 12, 0, -1}), 1, NULL, 0, NULL, NULL, true) < 0);
    CHECK(strcmp(h.sqlstate, "0A000") == 0, "%s", h.sqlstate);
    h_close(&h);

    /* the table on the left of a RIGHT join; the stream's watermark is
     * the output's, on its columns */
    h_attach(&h, new_join(ENG_JOIN_RIGHT, NULL, NULL, 0, &err));
    bool has[2] = {true, true};
    int64_t wm[2] = {500 * S, 7 * S};
    CHECK(h_batch_ex(&h, ROWS({5, 50, 0, 1}), 1, ROWS({5, 60, 0, 1}, {6, 61, 0, 1}), 2, has, wm,
                     true) == 0);
    expect(&h, "lookup: left table", L("5|50|0|5|60|0", "N|N|N|6|61|0"), W(1, 1));
    CHECK(h.g->op_wm[0] == 7 * S, "%lld", (long long)h.g->op_wm[0]);
    CHECK(h.op->out_time.n == 1 && h.op->out_time.cols[0].col == 5);
    h_close(&h);

    /* what it cannot do exactly is refused */
    static const EngJoinInterval iv = {2, 2, 0, 0};
    CHECK(new_join(ENG_JOIN_FULL, NULL, NULL, 1, &err) == NULL);
    CHECK(strcmp(err.sqlstate, "0A000") == 0);
    sl_error_clear(&err);
    CHECK(new_join(ENG_JOIN_LEFT, NULL, NULL, 0, &err) == NULL);
    sl_error_clear(&err);
    CHECK(new_join(ENG_JOIN_INNER, NULL, &iv, 1, &err) == NULL);
    sl_error_clear(&err);
}

static void test_interval(void)
{
    static const EngJoinInterval iv = {2, 2, -10 * S, 5 * S};
    Harness h;
    h_open(&h, ENG_JOIN_FULL, NULL, &iv);
    run_interval(&h);
    h_close(&h);
}

/* ------------------------------------------------- from an analyzed plan */

static const CatRelation *lookup_cb(void *ctx, const char *name)
{
    return cat_lookup(ctx, name);
}

/* The JOIN node of a SELECT over streams l and r, in a. */
static const Plan *join_of(Arena *a, const char *sql)
{
    SlError err = {0};
    List *stmts;
    Query *q;
    SqlCatalog sc = {.lookup = lookup_cb, .ctx = data.cat};
    if (sql_parse(a, sql, (int)strlen(sql), &stmts, &err) < 0 ||
        sql_analyze_with(a, &sc, sql, list_nth(stmts, 0), NULL, 0, &q, &err) < 0) {
        CHECK(false, "%s: %s", sql, err.message);
        sl_error_clear(&err);
        return NULL;
    }
    for (const Plan *p = q->plan; p != NULL; p = p->child)
        if (p->kind == PLAN_JOIN)
            return p;
    CHECK(false, "%s: no join", sql);
    return NULL;
}

/* Relations l and r for the plans: tables, since the tests retract rows
 * on both sides (a stream's rows are only inserted: a join over streams
 * keeps an inner side's rows without a row set, eng_plan_inserts_only). */
static void make_streams(void)
{
    static const char *const names[2] = {"l", "r"};
    for (int i = 0; i < 2; i++) {
        CatColumn cols[3] = {{"k", {TYPE_INT8, -1, TYPE_UNKNOWN}, false}, {"v", {TYPE_INT8, -1, TYPE_UNKNOWN}, false},
                             {"ts", {TYPE_TIMESTAMP, -1, TYPE_UNKNOWN}, false}};
        CatRelation def = {.name = names[i], .kind = REL_TABLE, .ncols = 3, .cols = cols,
                           .sql = "", .options = "{}"};
        const CatRelation *out;
        SlError err = {0};
        CHECK(cat_create_relation(data.cat, &def, &out, &err) == 0, "%s", err.message);
        sl_error_clear(&err);
    }
}

/* The bound a plan's join gets, and its explain line. */
static EngOp *plan_op(Arena *a, const char *sql, const EngEdgeTime *lt, const EngEdgeTime *rt,
                      EngBound bound, const char *explain)
{
    const Plan *p = join_of(a, sql);
    if (p == NULL)
        return NULL;
    SlError err = {0};
    EngOp *op = eng_op_join_plan(p, lt, rt, -1, &err);
    CHECK(op != NULL, "%s: %s", sql, err.message);
    if (op == NULL)
        return NULL;
    CHECK(op->bound == bound, "%s: bound %d", sql, (int)op->bound);
    StrBuf sb;
    strbuf_init(&sb);
    op->vt->explain(op, &sb);
    strbuf_putc(&sb, 0);
    CHECK(strcmp(sb.data, explain) == 0, "%s: %s", sql, sb.data);
    strbuf_free(&sb);
    return op;
}

static void test_plan(void)
{
    static const EngEdgeTime none = {0, {{0, 0}}};
    Arena a;
    arena_init(&a, 0);
    make_streams();
    Harness h;
    /* BETWEEN on the event times: the interval, and the same answers as
     * the hand-made operator */
    h_attach(&h, plan_op(&a, "SELECT * FROM l FULL JOIN r ON l.k = r.k AND l.ts BETWEEN "
                         "r.ts - interval '10 seconds' AND r.ts + interval '5 seconds'",
                         &side_time, &side_time, ENG_BOUND_WATERMARK,
                         "join (full) on 1 key and a residual condition, interval "
                         "-10000000..5000000 us: evicts by watermark"));
    run_interval(&h);
    h_close(&h);
    /* the right term first, minutes and a strict bound, with a day */
    EngOp *op = plan_op(&a, "SELECT * FROM l JOIN r ON r.ts + interval '1 minute' > l.ts AND "
                        "l.ts >= r.ts - interval '1 day' AND l.k = r.k",
                        &side_time, &side_time, ENG_BOUND_WATERMARK,
                        "join (inner) on 1 key and a residual condition, interval "
                        "-86400000000..60000000 us: evicts by watermark");
    eng_op_free(op);
    /* a residual that bounds nothing: unbounded, the same answers as the
     * hand-made one */
    h_attach(&h, plan_op(&a, "SELECT * FROM l LEFT JOIN r ON l.k = r.k AND l.v < r.v",
                         &side_time, &side_time, ENG_BOUND_UNBOUNDED,
                         "join (left) on 1 key and a residual condition: unbounded"));
    run_residual(&h);
    h_close(&h);
    /* one bound only; no watermark on the time columns; no keys */
    eng_op_free(plan_op(&a, "SELECT * FROM l JOIN r ON l.k = r.k AND l.ts >= r.ts", &side_time,
                        &side_time, ENG_BOUND_UNBOUNDED,
                        "join (inner) on 1 key and a residual condition: unbounded"));
    eng_op_free(plan_op(&a, "SELECT * FROM l JOIN r ON l.k = r.k AND l.ts BETWEEN r.ts AND "
                        "r.ts + interval '1 second'", &none, &side_time, ENG_BOUND_UNBOUNDED,
                        "join (inner) on 1 key and a residual condition: unbounded"));
    /* equal event times (an equi-key): the interval 0..0 */
    eng_op_free(plan_op(&a, "SELECT * FROM l JOIN r ON l.k = r.k AND l.ts = r.ts", &side_time,
                        &side_time, ENG_BOUND_WATERMARK,
                        "join (inner) on 2 keys, interval 0..0 us: evicts by watermark"));
    eng_op_free(plan_op(&a, "SELECT * FROM l JOIN r ON l.k = r.k AND l.ts = r.ts", &none,
                        &side_time, ENG_BOUND_UNBOUNDED, "join (inner) on 2 keys: unbounded"));
    eng_op_free(plan_op(&a, "SELECT * FROM l CROSS JOIN r", &none, &none, ENG_BOUND_UNBOUNDED,
                        "join (inner) on 0 keys: unbounded"));
    /* a stream-table join: no interval even with one in the condition */
    const Plan *p = join_of(&a, "SELECT * FROM l LEFT JOIN r ON l.k = r.k AND l.ts BETWEEN "
                            "r.ts AND r.ts + interval '1 second'");
    SlError err = {0};
    op = p ? eng_op_join_plan(p, &side_time, &side_time, 1, &err) : NULL;
    CHECK(op != NULL && op->bound == ENG_BOUND_UNBOUNDED, "%s", err.message);
    eng_op_free(op);
    arena_destroy(&a);
}

/* -------------------------------------------------- the randomized check */

static uint64_t rng;
static uint64_t rnd(void)
{
    rng ^= rng << 13;
    rng ^= rng >> 7;
    rng ^= rng << 17;
    return rng;
}
static int64_t rnd_in(int64_t n) { return (int64_t)(rnd() % (uint64_t)n); }

typedef struct Model {
    TRow *rows[2];
    int   n[2], cap[2];
} Model;

static void model_add(Model *m, int s, TRow r)
{
    for (int i = 0; i < m->n[s]; i++) {
        TRow *x = &m->rows[s][i];
        if (x->k == r.k && x->v == r.v && x->ts == r.ts) {
            x->w += r.w;
            if (x->w == 0)
                *x = m->rows[s][--m->n[s]];
            return;
        }
    }
    if (m->n[s] == m->cap[s]) {
        m->cap[s] = m->cap[s] ? m->cap[s] * 2 : 16;
        m->rows[s] = realloc(m->rows[s], sizeof(TRow) * (size_t)m->cap[s]);
    }
    m->rows[s][m->n[s]++] = r;
}

static bool model_match(const TRow *l, const TRow *r, bool residual, const EngJoinInterval *iv)
{
    if (l->k == NULLV || r->k == NULLV || l->k != r->k)
        return false;
    if (residual && (l->v == NULLV || r->v == NULLV || !(l->v < r->v)))
        return false;
    if (iv && (l->ts == NULLV || r->ts == NULLV || l->ts - r->ts < iv->lo_us ||
               l->ts - r->ts > iv->hi_us))
        return false;
    return true;
}

/* The join of the accumulated sides: matched pairs, and the padded rows of
 * an outer side's rows without a match -- under an interval only those
 * the other side's watermark closed (or that can never match). */
static void model_join(const Model *m, EngJoinType type, bool residual,
                       const EngJoinInterval *iv, const Harness *h, Bag *out)
{
    char text[160];
    for (int s = 0; s < 2; s++) {
        bool outer = type == ENG_JOIN_FULL || type == (s == 0 ? ENG_JOIN_LEFT : ENG_JOIN_RIGHT);
        for (int i = 0; i < m->n[s]; i++) {
            const TRow *x = &m->rows[s][i];
            int64_t deg = 0;
            for (int k = 0; k < m->n[1 - s]; k++) {
                const TRow *y = &m->rows[1 - s][k];
                const TRow *l = s == 0 ? x : y, *r = s == 0 ? y : x;
                if (!model_match(l, r, residual, iv))
                    continue;
                deg += y->w;
                if (s == 0) {
                    pair_text(text, sizeof(text), (int64_t[]){l->k, l->v, l->ts},
                              (int64_t[]){r->k, r->v, r->ts});
                    bag_add(out, text, l->w * r->w);
                }
            }
            if (!outer || deg != 0)
                continue;
            if (iv && x->k != NULLV && x->ts != NULLV) {
                /* closed: below the other side's watermark + lo (left) or
                 * the other's - hi (right) */
                if (!h->has_wm[1 - s])
                    continue;
                int64_t t = s == 0 ? h->wm[1] + iv->lo_us : h->wm[0] - iv->hi_us;
                if (x->ts >= t)
                    continue;
            }
            int64_t v[3] = {x->k, x->v, x->ts};
            pair_text(text, sizeof(text), s == 0 ? v : NULL, s == 0 ? NULL : v);
            bag_add(out, text, x->w);
        }
    }
}

/* Random batches of random rows (keys 0..3 and NULL, duplicates,
 * retractions of kept rows) on both sides, the output checked against the
 * model after every batch; now and then the cache dropped or a batch
 * failed and rerun. */
static void random_run(uint64_t seed, EngJoinType type, bool residual, bool interval)
{
    static const EngJoinInterval iv = {2, 2, -3 * S, 2 * S};
    Arena a;
    arena_init(&a, 0);
    rng = seed * 0x9E3779B97F4A7C15ull + 1;
    Harness h;
    h_open(&h, type, residual ? residual_v_lt(&a) : NULL, interval ? &iv : NULL);
    Model m = {0};
    int64_t wm[2] = {0, 0};
    bool has[2] = {interval, interval};
    for (int b = 0; b < 40; b++) {
        TRow rows[2][8];
        int n[2];
        for (int s = 0; s < 2; s++) {
            n[s] = (int)rnd_in(5);
            for (int i = 0; i < n[s]; i++) {
                TRow *r = &rows[s][i];
                /* retract a kept row; under an interval one that its
                 * side's watermark allows (a later row is not below it)
                 * and that the other side's has not closed */
                if (m.n[s] > 0 && rnd_in(4) == 0) {
                    TRow *x = &m.rows[s][rnd_in(m.n[s])];
                    int64_t t = s == 0 ? wm[1] + iv.lo_us : wm[0] - iv.hi_us;
                    if (!interval || x->k == NULLV || (x->ts >= t && x->ts >= wm[s])) {
                        *r = *x;
                        r->w = -1;
                        continue;
                    }
                }
                r->k = rnd_in(5) == 0 ? NULLV : rnd_in(4);
                r->v = rnd_in(6) == 0 ? NULLV : rnd_in(5);
                r->ts = interval ? wm[s] + rnd_in(6) * S : 0;
                r->w = rnd_in(5) == 0 ? 2 : 1;
            }
        }
        /* both sides' rows are in the model before the batch checks it */
        bool fail = rnd_in(8) == 0;
        int64_t nwm[2] = {wm[0] + rnd_in(3) * S, wm[1] + rnd_in(3) * S};
        if (fail)
            CHECK(h_batch_ex(&h, rows[0], n[0], rows[1], n[1], has, nwm, false) == 0);
        CHECK(h_batch_ex(&h, rows[0], n[0], rows[1], n[1], has, nwm, true) == 0, "%s",
              h.sqlstate);
        for (int s = 0; s < 2; s++)
            for (int i = 0; i < n[s]; i++)
                model_add(&m, s, rows[s][i]);
        if (interval) {
            wm[0] = nwm[0];
            wm[1] = nwm[1];
        }
        if (rnd_in(6) == 0)
            h_restore(&h);
        /* the stats count the distinct rows kept: those that can match
         * and, under an interval, are not closed */
        int64_t kept = 0;
        for (int s = 0; s < 2; s++)
            for (int i = 0; i < m.n[s]; i++) {
                int64_t t = s == 0 ? h.wm[1] + iv.lo_us : h.wm[0] - iv.hi_us;
                kept += m.rows[s][i].k != NULLV && (!interval || m.rows[s][i].ts >= t);
            }
        EngOpStats st;
        h.op->vt->stats(h.op, &st);
        CHECK(st.rows == kept, "rows %lld, want %lld", (long long)st.rows, (long long)kept);
        Bag want = {0};
        model_join(&m, type, residual, interval ? &iv : NULL, &h, &want);
        char what[96];
        snprintf(what, sizeof(what), "random seed %llu type %d residual %d interval %d batch %d",
                 (unsigned long long)seed, (int)type, residual, interval, b);
        bool ok = bag_equal(&h.out, &want, what);
        CHECK(ok, "%s", what);
        bag_clear(&want);
        if (!ok)
            break;
    }
    free(m.rows[0]);
    free(m.rows[1]);
    h_close(&h);
    arena_destroy(&a);
}

/* A lookup join against a model: after each batch's table changes, the
 * batch's stream rows join the table as it is then, and what was emitted
 * stays whatever the table does later. */
static void random_lookup(uint64_t seed, EngJoinType type, bool residual)
{
    Arena a;
    arena_init(&a, 0);
    rng = seed * 0x9E3779B97F4A7C15ull + 7;
    SlError err = {0};
    Harness h;
    h_attach(&h, new_join(type, residual ? residual_v_lt(&a) : NULL, NULL, 1, &err));
    Model m = {0};      /* rows[1]: the table */
    Bag want = {0};
    char text[160];
    for (int b = 0; b < 30; b++) {
        TRow rows[2][8];
        int n[2] = {(int)rnd_in(5), (int)rnd_in(5)};
        for (int i = 0; i < n[0]; i++)
            rows[0][i] = (TRow){rnd_in(5) == 0 ? NULLV : rnd_in(4),
                                rnd_in(6) == 0 ? NULLV : rnd_in(5), 0, rnd_in(5) == 0 ? 2 : 1};
        for (int i = 0; i < n[1]; i++) {
            if (m.n[1] > 0 && rnd_in(3) == 0) {
                rows[1][i] = m.rows[1][rnd_in(m.n[1])];
                rows[1][i].w = -1;
            } else {
                rows[1][i] = (TRow){rnd_in(5) == 0 ? NULLV : rnd_in(4),
                                    rnd_in(6) == 0 ? NULLV : rnd_in(5), 0, 1};
            }
        }
        if (rnd_in(8) == 0)
            CHECK(h_batch_ex(&h, rows[0], n[0], rows[1], n[1], NULL, NULL, false) == 0);
        CHECK(h_batch_ex(&h, rows[0], n[0], rows[1], n[1], NULL, NULL, true) == 0, "%s",
              h.sqlstate);
        for (int i = 0; i < n[1]; i++)
            model_add(&m, 1, rows[1][i]);
        for (int i = 0; i < n[0]; i++) {
            const TRow *l = &rows[0][i];
            int64_t deg = 0;
            for (int k = 0; k < m.n[1]; k++) {
                const TRow *r = &m.rows[1][k];
                if (!model_match(l, r, residual, NULL))
                    continue;
                deg += r->w;
                pair_text(text, sizeof(text), (int64_t[]){l->k, l->v, l->ts},
                          (int64_t[]){r->k, r->v, r->ts});
                bag_add(&want, text, l->w * r->w);
            }
            if (type == ENG_JOIN_LEFT && deg == 0) {
                pair_text(text, sizeof(text), (int64_t[]){l->k, l->v, l->ts}, NULL);
                bag_add(&want, text, l->w);
            }
        }
        if (rnd_in(6) == 0)
            h_restore(&h);
        char what[96];
        snprintf(what, sizeof(what), "lookup seed %llu type %d residual %d batch %d",
                 (unsigned long long)seed, (int)type, residual, b);
        bool ok = bag_equal(&h.out, &want, what);
        CHECK(ok, "%s", what);
        if (!ok)
            break;
    }
    bag_clear(&want);
    free(m.rows[0]);
    free(m.rows[1]);
    h_close(&h);
    arena_destroy(&a);
}

/* The entries a side's chunks hold in the store (P + 'C' + side ...):
 * each is key length (4, BE), key, row length (4, BE), row, 24 bytes. */
static int64_t stored_entries(const Harness *h)
{
    uint8_t p[ENG_PREFIX_LEN + 1];
    memcpy(p, h->op->prefix, ENG_PREFIX_LEN);
    p[ENG_PREFIX_LEN] = 'C';
    StateScan *sc = state_scan_open(h->data->st, p, sizeof(p));
    const void *k, *v;
    size_t kl, vl;
    int64_t n = 0;
    while (state_scan_next(sc, &k, &kl, &v, &vl)) {
        const uint8_t *e = v, *end = e + vl;
        while (e < end) {
            uint32_t klen = get_be32(e);
            uint32_t rlen = get_be32(e + 4 + klen);
            e += 8 + klen + rlen + 24;
            n++;
        }
    }
    SlError err = {0};
    CHECK(state_scan_close(sc, &err) == 0);
    return n;
}

/* A full join whose left rows are all retracted and inserted again, and
 * its right row with them (the left rows' degrees change): the stale
 * entries pass twice the rows plus 4,096 and the side is written anew;
 * after a restore (the side read back from its chunks) the output still
 * equals the model's join, and the stats count the rows kept. */
static void test_compaction(void)
{
    enum { N = 3000 };
    Harness h;
    h_open(&h, ENG_JOIN_FULL, NULL, NULL);
    Model m = {0};
    TRow *l = calloc(N, sizeof(TRow));
    for (int i = 0; i < N; i++)
        l[i] = (TRow){i % 7, i, 0, 1};
    TRow r[1] = {{1, 100, 0, 1}};
    h_batch(&h, l, N, r, 1);
    for (int i = 0; i < N; i++)
        model_add(&m, 0, l[i]);
    model_add(&m, 1, r[0]);
    int64_t most = 0;
    for (int round = 0; round < 6; round++) {
        int64_t w = round % 2 == 0 ? -1 : 1;
        for (int i = 0; i < N; i++)
            l[i].w = w;
        r[0].w = w;
        h_batch(&h, l, N, r, 1);
        for (int i = 0; i < N; i++)
            model_add(&m, 0, l[i]);
        model_add(&m, 1, r[0]);
        int64_t n = stored_entries(&h);
        most = n > most ? n : most;
        CHECK(n <= 3 * (N + 1) + 4096 + 2 * (N + 1), "round %d: %lld entries stored", round,
              (long long)n);
    }
    CHECK(most > N + 1, "no stale entries were ever stored");
    h_restore(&h);
    EngOpStats st;
    h.op->vt->stats(h.op, &st);
    CHECK(st.rows == N + 1, "%lld rows", (long long)st.rows);
    TRow r2[1] = {{1, 200, 0, 1}};
    h_batch(&h, NULL, 0, r2, 1);
    model_add(&m, 1, r2[0]);
    Bag want = {0};
    model_join(&m, ENG_JOIN_FULL, false, NULL, &h, &want);
    CHECK(bag_equal(&h.out, &want, "compaction"), "compaction");
    bag_clear(&want);
    free(m.rows[0]);
    free(m.rows[1]);
    free(l);
    h_close(&h);
}

int main(void)
{
    unit_data_open(&data, "engine-join", true);
    test_inner();
    test_left();
    test_right_full();
    test_residual();
    test_failed_batch();
    test_interval();
    test_lookup();
    test_plan();
    test_compaction();
    for (uint64_t seed = 1; seed <= 3; seed++)
        for (int t = ENG_JOIN_INNER; t <= ENG_JOIN_FULL; t++)
            for (int res = 0; res < 2; res++)
                for (int inter = 0; inter < 2; inter++)
                    random_run(seed, (EngJoinType)t, res, inter);
    for (uint64_t seed = 1; seed <= 3; seed++)
        for (int res = 0; res < 2; res++) {
            random_lookup(seed, ENG_JOIN_INNER, res);
            random_lookup(seed, ENG_JOIN_LEFT, res);
        }
    unit_data_close(&data);
    return unit_done("engine_join");
}
