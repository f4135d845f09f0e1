/*
 * op_project.c -- the project operator: one expression per output column
 * over each delta's rows, weights carried unchanged (linear: no state).
 *
 *   eng_op_project_new(in, nin, out, nout, exprs, in_time)
 *
 * The output delta's columns are the evaluator's vectors (in the batch's
 * arena) and its weights the input's array: nothing is copied.  An output
 * of no columns (count(*) over a projection of nothing) keeps its rows.
 *
 * Event time: an output column that is a bare reference to one of the
 * input's event-time columns is one of the output's, with the same
 * offset (the values are the same); every other is not.  The input's
 * watermark is forwarded as it comes when the output keeps a time column;
 * a projection that keeps none has no watermark to state.
 */
#include "ops.h"

typedef struct Project {
    Expr *const *exprs;
} Project;

static int project_push(EngOp *op, int input, const EngDelta *d, EngCtx *cx)
{
    SL_UNUSED(input);
    Project *p = op->self;
    uint32_t n = d->rows.nrows;
    EngDelta out;
    out.rows.nrows = n;
    out.rows.ncols = (uint32_t)op->out_ncols;
    out.rows.cols = ARENA_ARRAY(cx->arena, Vector, op->out_ncols > 0 ? op->out_ncols : 1);
    for (int c = 0; c < op->out_ncols; c++)
        if (ex_eval(cx->ecx, p->exprs[c], &d->rows, n, &out.rows.cols[c]) < 0)
            return -1;
    out.weights = d->weights;
    out.cap = n;
    return eng_emit(op, &out, cx);
}

static void project_explain(const EngOp *op, StrBuf *out)
{
    const Project *p = op->self;
    strbuf_puts(out, "Project: ");
    for (int c = 0; c < op->out_ncols; c++) {
        if (c)
            strbuf_puts(out, ", ");
        plan_expr_deparse(p->exprs[c], op->in_cols[0], NULL, out);
    }
}

static const EngOpVt project_vt = {
    .kind = "project",
    .push = project_push,
    .watermark = eng_forward_watermark,
    .explain = project_explain,
};

EngOp *eng_op_project_new(const ColumnDesc *in, int nin, const ColumnDesc *out, int nout,
                          Expr *const *exprs, const EngEdgeTime *in_time)
{
    EngOp *op = eng_op_new(&project_vt, 1, sizeof(Project));
    ((Project *)op->self)->exprs = exprs;
    op->in_cols[0] = in;
    op->in_ncols[0] = nin;
    op->out_cols = out;
    op->out_ncols = nout;
    op->bound = ENG_BOUND_NONE;
    if (in_time != NULL) {
        op->in_time[0] = *in_time;
        for (int c = 0; c < nout && op->out_time.n < ENG_MAX_TIME; c++) {
            const Expr *e = exprs[c];
            if (e == NULL || e->kind != EXPR_COLUMN)
                continue;
            for (int t = 0; t < in_time->n; t++)
                if (in_time->cols[t].col == e->index) {
                    op->out_time.cols[op->out_time.n++] =
                        (EngTimeCol){c, in_time->cols[t].offset_us};
                    break;
                }
        }
    }
    return op;
}
