/*
 * op_filter.c -- the filter operator: the rows of each delta whose
 * condition is true, with their weights (a linear operator: no state).
 *
 *   eng_op_filter_new(cols, ncols, cond, time)
 *
 * The condition is evaluated over the delta's rows in the batch's arena;
 * a NULL condition drops the row, as WHERE does.  Retractions pass the
 * same test as the insertions they cancel, so the output stays the filter
 * of the input's sum -- as long as the condition is deterministic (the
 * rewriter's business).  The output's event-time columns are the input's
 * (time), and the input's watermark is forwarded as it comes: dropping
 * rows never breaks the promise of a watermark.
 */
#include "ops.h"

typedef struct Filter {
    const Expr *cond;
} Filter;

static int filter_push(EngOp *op, int input, const EngDelta *d, EngCtx *cx)
{
    SL_UNUSED(input);
    Filter *f = op->self;
    uint32_t n = d->rows.nrows;
    Vector v;
    if (ex_eval(cx->ecx, f->cond, &d->rows, n, &v) < 0)
        return -1;
    EngDelta out;
    eng_delta_init(&out, cx->arena, op->out_cols, op->out_ncols, n);
    for (uint32_t i = 0; i < n; i++)
        if (d->weights[i] != 0 && !vector_is_null(&v, i) && v.v.b[i])
            eng_delta_append(&out, cx->arena, &d->rows, i, d->weights[i]);
    return eng_emit(op, &out, cx);
}

static void filter_explain(const EngOp *op, StrBuf *out)
{
    const Filter *f = op->self;
    strbuf_puts(out, "Filter: ");
    plan_expr_deparse(f->cond, op->in_cols[0], NULL, out);
}

static const EngOpVt filter_vt = {
    .kind = "filter",
    .push = filter_push,
    .watermark = eng_forward_watermark,
    .explain = filter_explain,
};

EngOp *eng_op_filter_new(const ColumnDesc *cols, int ncols, const Expr *cond,
                         const EngEdgeTime *time)
{
    EngOp *op = eng_op_new(&filter_vt, 1, sizeof(Filter));
    ((Filter *)op->self)->cond = cond;
    op->in_cols[0] = op->out_cols = cols;
    op->in_ncols[0] = op->out_ncols = ncols;
    if (time != NULL)
        op->in_time[0] = op->out_time = *time;
    op->bound = ENG_BOUND_NONE;
    return op;
}
