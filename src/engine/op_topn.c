/*
 * op_topn.c -- Top-N (op_over.h: eng_op_topn_new; docs/engine-graph.md,
 * "Top-N"): the rows of each partition whose row_number() (or rank()) in
 * the partition's order is at most N, with that value -- what
 *
 *   SELECT ... FROM (SELECT ..., row_number() OVER (PARTITION BY k
 *                    ORDER BY x) AS rn FROM s) t WHERE rn <= N
 *
 * keeps (compile.c recognises the shape, `rn < N` as `rn <= N - 1`).
 *
 * The partition store, the incremental rule and the state layout are
 * OVER's (op_over.c): every row of a touched partition is kept, so a
 * retraction inside the top N refills it from the rows below; the top of
 * each touched partition is computed before the batch and after, and only
 * the difference leaves: a change below the top N emits nothing.
 * row_number follows the partition's total order (ORDER BY, then the
 * row's equality bytes); rank counts the rows before a row's peer group,
 * so the rows kept are the first N and every peer of the N-th, as
 * PostgreSQL keeps them.  N = 1 with ORDER BY the event time ASC (DESC)
 * is dedup keeping the first (last) row of each key.
 */
#include "op_over.h"
#include "sluice/common.h"

#include <string.h>

typedef struct TopN {
    int64_t limit;
    bool    rank;                   /* rank(), else row_number() */
} TopN;

static bool same_key(const Vector *cols, const int *idx, int n, uint32_t a, uint32_t b,
                     StrBuf *ka, StrBuf *kb, Vector *tmp)
{
    for (int k = 0; k < n; k++)
        tmp[k] = cols[idx[k]];
    strbuf_reset(ka);
    strbuf_reset(kb);
    ex_key_encode(tmp, n, a, ka);
    ex_key_encode(tmp, n, b, kb);
    return ka->len == kb->len && (ka->len == 0 || memcmp(ka->data, kb->data, ka->len) == 0);
}

static int topn_compute(EngOp *op, const Batch *rows, int64_t w, EngDelta *out, EngCtx *cx)
{
    const TopN *t = eng_over_arg(op);
    const Plan *win = eng_over_window(op);
    int np = win->u.window.npart, no = win->u.window.norder;
    Vector *tmp = ARENA_ARRAY(cx->arena, Vector, SL_MAX(np, no) + 1);
    Vector *cols = ARENA_ARRAY(cx->arena, Vector, rows->ncols + 1);
    memcpy(cols, rows->cols, sizeof(Vector) * rows->ncols);
    Vector *val = &cols[rows->ncols];
    vector_init(val, cx->arena, op->out_cols[op->out_ncols - 1].type, rows->nrows, false);
    Batch b = {.nrows = rows->nrows, .ncols = rows->ncols + 1, .cols = cols};
    StrBuf ka, kb;
    strbuf_init(&ka);
    strbuf_init(&kb);
    int64_t rn = 0, rank = 0;
    for (uint32_t r = 0; r < rows->nrows; r++) {
        bool newpart = r == 0 || !same_key(rows->cols, win->u.window.part, np, r - 1, r,
                                           &ka, &kb, tmp);
        if (newpart)
            rn = 0;
        rn++;
        if (newpart || !same_key(rows->cols, win->u.window.order, no, r - 1, r, &ka, &kb,
                                 tmp))
            rank = rn;
        int64_t v = t->rank ? rank : rn;
        if (v > t->limit)
            continue;
        val->v.i64[r] = v;
        eng_delta_append(out, cx->arena, &b, r, w);
    }
    strbuf_free(&ka);
    strbuf_free(&kb);
    return 0;
}

static void topn_explain(const EngOp *op, StrBuf *out)
{
    const TopN *t = eng_over_arg(op);
    strbuf_printf(out, "top %lld by %s() ", (long long)t->limit,
                  t->rank ? "rank" : "row_number");
    eng_over_explain_tail(op, out);
}

static const EngOpVt topn_vt = {
    .kind = "topn", .push = eng_over_push, .watermark = eng_over_watermark,
    .flush = eng_over_flush, .checkpoint = eng_over_checkpoint, .restore = eng_over_restore,
    .stats = eng_over_stats, .explain = topn_explain, .free = eng_over_free,
};

EngOp *eng_op_topn_new(const Plan *window, const SortKey *keys, int nkeys, int64_t limit,
                       const EngEdgeTime *time, SlError *err)
{
    WindowFunc f = window->u.window.func;
    if (f != WINDOW_FUNC_ROW_NUMBER && f != WINDOW_FUNC_RANK) {
        sl_error(err, ERRCODE_FEATURE_NOT_SUPPORTED,
                 "the Top-N operator runs row_number() and rank(), not %s()",
                 window->u.window.name);
        return NULL;
    }
    EngOp *op = eng_over_new(&topn_vt, window, keys, nkeys, time, topn_compute);
    TopN *t = ARENA_NEW(&op->arena, TopN);
    t->limit = limit < 0 ? 0 : limit;
    t->rank = f == WINDOW_FUNC_RANK;
    eng_over_set_arg(op, t);
    return op;
}
