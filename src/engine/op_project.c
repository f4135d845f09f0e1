/*
 * op_project.c -- the project operator: one expression per output column
 * over each delta's rows, weights carried unchanged (linear: no state).
 *
 *   eng_op_project_new(in, nin, out, nout, exprs)
 *
 * The output delta's columns are the evaluator's vectors (in the batch's
 * arena) and its weights the input's array: nothing is copied.  An output
 * of no columns (count(*) over a projection of nothing) keeps its rows.
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
    .explain = project_explain,
};

EngOp *eng_op_project_new(const ColumnDesc *in, int nin, const ColumnDesc *out, int nout,
                          Expr *const *exprs)
{
    EngOp *op = eng_op_new(&project_vt, 1, sizeof(Project));
    ((Project *)op->self)->exprs = exprs;
    op->in_cols[0] = in;
    op->in_ncols[0] = nin;
    op->out_cols = out;
    op->out_ncols = nout;
    op->bound = ENG_BOUND_NONE;
    return op;
}
