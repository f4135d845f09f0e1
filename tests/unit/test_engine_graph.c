/*
 * test_engine_graph.c -- the operator graph's scheduler and deltas
 * (src/engine/graph.c, delta.c) with two trivial operators defined here:
 * "scale" multiplies each row's weight by a factor at push and forwards
 * the watermark; "tally" keeps the weight sum per first-column value,
 * emits the batch's changes at flush, and counts its checkpoints into the
 * StateBatch.  Checks the order of the entry points (push depth first,
 * then watermarks, then flush in topological order, then checkpoint), the
 * output callback, the operators' key prefixes, a producer added out of
 * order, watermarks that only move forward, restore, and deltas: append
 * past the room, consolidation (equal rows summed, zeros dropped, first
 * appearance order).
 */
#include "graph.h"
#include "sluice/bytes.h"
#include "unit.h"

#include <string.h>

static char trace[512];

static void note(const char *fmt, int a, int b)
{
    size_t n = strlen(trace);
    snprintf(trace + n, sizeof(trace) - n, fmt, a, b);
}

/* --------------------------------------------------------------- scale */

typedef struct Scale {
    int64_t factor;
} Scale;

static int scale_push(EngOp *op, int input, const EngDelta *d, EngCtx *cx)
{
    Scale *s = op->self;
    note("push%d.%d ", op->id, input);
    EngDelta out = *d;
    out.weights = ARENA_ARRAY(cx->arena, int64_t, d->rows.nrows);
    for (uint32_t i = 0; i < d->rows.nrows; i++)
        out.weights[i] = d->weights[i] * s->factor;
    return eng_emit(op, &out, cx);
}

static int scale_wm(EngOp *op, int input, int64_t wm, EngCtx *cx)
{
    note("wm%d=%d ", op->id, (int)wm);
    SL_UNUSED(input);
    return eng_emit_watermark(op, wm, cx);
}

static int scale_flush(EngOp *op, EngCtx *cx)
{
    SL_UNUSED(cx);
    note("flush%d ", op->id, 0);
    return 0;
}

static const EngOpVt scale_vt = {.kind = "scale", .push = scale_push, .watermark = scale_wm,
                                 .flush = scale_flush};

static const ColumnDesc int_col[1] = {{"x", {TYPE_INT4, -1, TYPE_UNKNOWN}}};

static EngOp *scale_new(int64_t factor)
{
    EngOp *op = eng_op_new(&scale_vt, 1, sizeof(Scale));
    ((Scale *)op->self)->factor = factor;
    op->in_cols[0] = op->out_cols = int_col;
    op->in_ncols[0] = op->out_ncols = 1;
    return op;
}

/* --------------------------------------------------------------- tally */

typedef struct Tally {
    int64_t sum[8];             /* per x in 0..7 */
    int64_t changed[8];         /* this batch's */
    int     restores;
} Tally;

static int tally_push(EngOp *op, int input, const EngDelta *d, EngCtx *cx)
{
    SL_UNUSED(cx);
    Tally *t = op->self;
    note("push%d.%d ", op->id, input);
    for (uint32_t i = 0; i < d->rows.nrows; i++)
        t->changed[d->rows.cols[0].v.i32[i] & 7] += d->weights[i];
    return 0;
}

static int tally_wm(EngOp *op, int input, int64_t wm, EngCtx *cx)
{
    SL_UNUSED(cx);
    note("wm%d.%d ", op->id, input);
    SL_UNUSED(wm);
    return 0;
}

/* Emits (x, +changed) for each x the batch changed. */
static int tally_flush(EngOp *op, EngCtx *cx)
{
    Tally *t = op->self;
    note("flush%d ", op->id, 0);
    EngDelta out;
    eng_delta_init(&out, cx->arena, int_col, 1, 2);
    Vector one;
    vector_init(&one, cx->arena, sl_type(TYPE_INT4), 1, true);
    Batch b = {1, 1, &one};
    for (int x = 0; x < 8; x++) {
        if (t->changed[x] == 0)
            continue;
        one.v.i32[0] = x;
        one.nulls[0] = 0;
        eng_delta_append(&out, cx->arena, &b, 0, t->changed[x]);
        t->sum[x] += t->changed[x];
        t->changed[x] = 0;
    }
    return eng_emit(op, &out, cx);
}

static int tally_checkpoint(EngOp *op, EngCtx *cx)
{
    note("ckpt%d ", op->id, 0);
    state_batch_put(cx->wb, op->prefix, ENG_PREFIX_LEN, "x", 1);
    return 0;
}

static int tally_restore(EngOp *op, EngCtx *cx)
{
    SL_UNUSED(cx);
    Tally *t = op->self;
    memset(t->changed, 0, sizeof(t->changed));
    t->restores++;
    return 0;
}

static const EngOpVt tally_vt = {.kind = "tally", .push = tally_push, .watermark = tally_wm,
                                 .flush = tally_flush, .checkpoint = tally_checkpoint,
                                 .restore = tally_restore};

static EngOp *tally_new(int ninputs)
{
    EngOp *op = eng_op_new(&tally_vt, ninputs, sizeof(Tally));
    for (int i = 0; i < ninputs; i++) {
        op->in_cols[i] = int_col;
        op->in_ncols[i] = 1;
    }
    op->out_cols = int_col;
    op->out_ncols = 1;
    return op;
}

/* ------------------------------------------------------------ the tests */

static int out_cb(void *arg, const EngDelta *d, EngCtx *cx)
{
    SL_UNUSED(cx);
    char *s = arg;
    for (uint32_t i = 0; i < d->rows.nrows; i++) {
        size_t n = strlen(s);
        snprintf(s + n, 256 - n, "%d:%lld ", d->rows.cols[0].v.i32[i],
                 (long long)d->weights[i]);
    }
    return 0;
}

/* A delta of int rows xs[i] with weights ws[i]. */
static EngDelta ints(Arena *a, const int *xs, const int64_t *ws, int n)
{
    EngDelta d;
    eng_delta_init(&d, a, int_col, 1, 1);       /* room 1: appends must grow it */
    Vector v;
    vector_init(&v, a, sl_type(TYPE_INT4), 1, true);
    Batch b = {1, 1, &v};
    for (int i = 0; i < n; i++) {
        v.v.i32[0] = xs[i];
        v.nulls[0] = xs[i] < 0;
        eng_delta_append(&d, a, &b, 0, ws[i]);
    }
    return d;
}

static void test_run(void)
{
    /* source 0 -> scale x2 (op 0) -> tally (op 2) <- scale x-1 (op 1) <- source 1 */
    EngGraph *g = eng_graph_new(0x01020304);
    int p0[1] = {-1}, p1[1] = {-2};
    CHECK(eng_graph_add(g, scale_new(2), p0) == 0);
    CHECK(eng_graph_add(g, scale_new(-1), p1) == 1);
    EngOp *bad = tally_new(1);
    int fwd[1] = {5};
    CHECK(eng_graph_add(g, bad, fwd) == -1, "a producer not yet added is refused");
    eng_op_free(bad);
    int p2[2] = {0, 1};
    CHECK(eng_graph_add(g, tally_new(2), p2) == 2);
    CHECK(g->nsources == 2 && g->nops == 3 && g->output == 2 && g->nedges == 4);
    const uint8_t want_prefix[ENG_PREFIX_LEN] = {'G', 1, 2, 3, 4, 0, 2};
    CHECK(memcmp(g->ops[2]->prefix, want_prefix, ENG_PREFIX_LEN) == 0);

    Arena a;
    arena_init(&a, 0);
    SlError err = {0};
    StateBatch *wb = state_batch_new();
    EngCtx cx = {.arena = &a, .err = &err, .wb = wb};
    int xs0[3] = {1, 2, 1}, xs1[2] = {1, 3};
    int64_t ws0[3] = {1, 1, 1}, ws1[2] = {1, 5};
    EngDelta d0 = ints(&a, xs0, ws0, 3), d1 = ints(&a, xs1, ws1, 2);
    CHECK(d0.rows.nrows == 3 && d0.cap >= 3);
    const EngDelta *ds[2] = {&d0, &d1};
    bool has_wm[2] = {true, false};
    int64_t wm[2] = {7, 0};
    char out[256] = "";
    trace[0] = '\0';
    CHECK(eng_graph_run(g, &cx, ds, has_wm, wm, out_cb, out) == 0);
    CHECK(strcmp(trace, "push0.0 push2.0 push1.0 push2.1 wm0=7 wm2.0 "
                        "flush0 flush1 flush2 ckpt2 ") == 0, "%s", trace);
    /* 1: 2*2 - 1 = 3; 2: 2; 3: -5 */
    CHECK(strcmp(out, "1:3 2:2 3:-5 ") == 0, "%s", out);
    CHECK(state_batch_count(wb) == 1);

    /* a watermark that does not move forward is not passed on; nothing
     * pushed when no source has a delta */
    trace[0] = out[0] = '\0';
    wm[0] = 7;
    CHECK(eng_graph_run(g, &cx, NULL, has_wm, wm, out_cb, out) == 0);
    CHECK(strcmp(trace, "flush0 flush1 flush2 ckpt2 ") == 0, "%s", trace);
    CHECK(out[0] == '\0');
    /* after restore, the same watermark is new again */
    CHECK(eng_graph_restore(g, &cx) == 0);
    CHECK(((Tally *)g->ops[2]->self)->restores == 1);
    trace[0] = '\0';
    CHECK(eng_graph_run(g, &cx, NULL, has_wm, wm, out_cb, out) == 0);
    CHECK(strncmp(trace, "wm0=7 wm2.0 ", 12) == 0, "%s", trace);

    state_batch_free(wb);
    arena_destroy(&a);
    eng_graph_free(g);
}

static void test_consolidate(void)
{
    Arena a;
    arena_init(&a, 0);
    int xs[7] = {4, -1, 2, 4, -1, 2, 9};        /* -1: NULL */
    int64_t ws[7] = {1, 1, 3, -1, 2, -3, 2};
    EngDelta d = ints(&a, xs, ws, 7), c;
    eng_delta_consolidate(&d, &a, &c);
    /* 4: 0 (dropped), NULL: 3, 2: 0 (dropped), 9: 2 */
    CHECK(c.rows.nrows == 2);
    CHECK(c.rows.nrows == 2 && vector_is_null(&c.rows.cols[0], 0) && c.weights[0] == 3);
    CHECK(c.rows.nrows == 2 && c.rows.cols[0].v.i32[1] == 9 && c.weights[1] == 2);
    /* an empty delta */
    EngDelta e, ec;
    eng_delta_init(&e, &a, int_col, 1, 0);
    eng_delta_consolidate(&e, &a, &ec);
    CHECK(ec.rows.nrows == 0);
    /* a delta of no columns: all rows are equal */
    EngDelta z, zc;
    eng_delta_init(&z, &a, NULL, 0, 1);
    Batch none = {1, 0, NULL};
    for (int i = 0; i < 40; i++)
        eng_delta_append(&z, &a, &none, 0, i % 3 == 0 ? -1 : 1);
    eng_delta_consolidate(&z, &a, &zc);
    CHECK(zc.rows.nrows == 1 && zc.weights[0] == 40 - 2 * 14, "%u", zc.rows.nrows);
    arena_destroy(&a);
}

int main(void)
{
    test_run();
    test_consolidate();
    return unit_done("engine_graph");
}
