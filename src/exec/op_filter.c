/*
 * op_filter.c -- the streaming operators: Filter, Project and Limit.
 *
 *   op_build_filter    keeps the rows where the condition is true: only the
 *                      selection vector changes, the columns pass through
 *   op_build_project   evaluates one expression per output column over the
 *                      live rows (a column reference costs nothing)
 *   op_build_limit     skips OFFSET rows, then passes LIMIT rows and stops
 *                      pulling
 *
 * None of them copies rows: their output batches point at the child's
 * vectors, which stay valid until the child's next call.
 */
#include "exec/op.h"

/* ---------------------------------------------------------------- filter */

static int filter_next(ExOp *op, ExBatch **out)
{
    const Expr *cond = op->plan->u.filter.cond;
    for (;;) {
        ExBatch *in;
        int rc = op_pull(op->child, &in);
        if (rc <= 0)
            return rc;
        EvalCtx ecx = op_eval_ctx(op);
        Vector v;
        if (ex_eval_sel(&ecx, cond, &in->b, in->b.nrows, in->sel, in->n, &v) < 0)
            return -1;
        uint32_t *sel = ARENA_ARRAY(&op->arena, uint32_t, in->n);
        uint32_t m = 0;
        for (uint32_t k = 0; k < in->n; k++) {
            uint32_t i = in->sel ? in->sel[k] : k;
            if (!vector_is_null(&v, i) && v.v.b[i])
                sel[m++] = i;
        }
        if (m == 0)
            continue;
        op->out.b = in->b;
        op->out.sel = m == in->b.nrows ? NULL : sel;
        op->out.n = m;
        *out = &op->out;
        return 1;
    }
}

ExOp *op_build_filter(ExCtx *cx, const Plan *p, ExOp *child)
{
    SL_UNUSED(child);
    ExOp *op = op_new(cx, p, 0);
    op->next = filter_next;
    return op;
}

/* --------------------------------------------------------------- project */

static int project_next(ExOp *op, ExBatch **out)
{
    const Plan *p = op->plan;
    ExBatch *in;
    int rc = op_pull(op->child, &in);
    if (rc <= 0)
        return rc;
    EvalCtx ecx = op_eval_ctx(op);
    ExBatch *eb = &op->out;
    eb->b.nrows = in->b.nrows;
    eb->b.ncols = (uint32_t)p->ncols;
    eb->b.cols = ARENA_ARRAY(&op->arena, Vector, p->ncols ? p->ncols : 1);
    for (int c = 0; c < p->ncols; c++)
        if (ex_eval_sel(&ecx, p->u.project.exprs[c], &in->b, in->b.nrows, in->sel, in->n,
                        &eb->b.cols[c]) < 0)
            return -1;
    eb->sel = in->sel;
    eb->n = in->n;
    *out = eb;
    return 1;
}

ExOp *op_build_project(ExCtx *cx, const Plan *p, ExOp *child)
{
    SL_UNUSED(child);
    ExOp *op = op_new(cx, p, 0);
    op->next = project_next;
    return op;
}

/* ----------------------------------------------------------------- limit */

typedef struct LimitState {
    bool    started;
    int64_t skip;       /* OFFSET rows still to skip */
    int64_t left;       /* rows still to pass; -1: no limit */
} LimitState;

/* A LIMIT/OFFSET value: -1 when NULL (no limit), error when negative. */
static int limit_value(ExOp *op, const Expr *e, const char *what, const char *state,
                       int64_t *v)
{
    EvalCtx ecx = op_eval_ctx(op);
    Vector r;
    if (ex_eval(&ecx, e, NULL, 1, &r) < 0)
        return -1;
    if (vector_is_null(&r, 0)) {
        *v = -1;
        return 0;
    }
    *v = r.v.i64[0];
    if (*v < 0)
        return sl_error(op->cx->err, state, "%s must not be negative", what);
    return 0;
}

static int limit_next(ExOp *op, ExBatch **out)
{
    LimitState *s = op->state;
    const Plan *p = op->plan;
    if (!s->started) {
        s->started = true;
        s->left = -1;
        if (p->u.limit.count &&
            limit_value(op, p->u.limit.count, "LIMIT", ERRCODE_INVALID_ROW_COUNT_IN_LIMIT_CLAUSE,
                        &s->left) < 0)
            return -1;
        if (p->u.limit.offset &&
            limit_value(op, p->u.limit.offset, "OFFSET",
                        ERRCODE_INVALID_ROW_COUNT_IN_RESULT_OFFSET_CLAUSE, &s->skip) < 0)
            return -1;
        if (s->skip < 0)
            s->skip = 0;
    }
    for (;;) {
        if (s->left == 0)
            return 0;
        ExBatch *in;
        int rc = op_pull(op->child, &in);
        if (rc <= 0)
            return rc;
        uint32_t first = 0;
        if (s->skip > 0) {
            if ((int64_t)in->n <= s->skip) {
                s->skip -= in->n;
                continue;
            }
            first = (uint32_t)s->skip;
            s->skip = 0;
        }
        uint32_t n = in->n - first;
        if (s->left >= 0 && (int64_t)n > s->left)
            n = (uint32_t)s->left;
        if (s->left > 0)
            s->left -= n;
        op->out.b = in->b;
        op->out.n = n;
        if (first == 0 && n == in->n) {
            op->out.sel = in->sel;
        } else {
            uint32_t *sel = ARENA_ARRAY(&op->arena, uint32_t, n ? n : 1);
            for (uint32_t k = 0; k < n; k++)
                sel[k] = in->sel ? in->sel[first + k] : first + k;
            op->out.sel = sel;
        }
        *out = &op->out;
        return 1;
    }
}

ExOp *op_build_limit(ExCtx *cx, const Plan *p, ExOp *child)
{
    SL_UNUSED(child);
    ExOp *op = op_new(cx, p, sizeof(LimitState));
    op->next = limit_next;
    return op;
}
