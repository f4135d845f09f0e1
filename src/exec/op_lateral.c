/*
 * op_lateral.c -- LATERAL: a join whose right input reads the left row.
 *
 *   op_build_lateral
 *
 * For each left row the right plan is built and run anew, with the row's
 * values of the plan's arguments (Plan.u.lateral.args, evaluated over the
 * whole left batch at once) as its outer values, as a correlated subquery
 * runs (sublink.c).  Each right batch becomes one output batch: the left
 * row's columns repeated, then the right batch's columns, filtered by the
 * ON condition.  A LEFT join emits the left row with NULLs on the right
 * when no right row passed.  The right operators live in an arena of
 * their own, reset for each left row; the output points at the left and
 * right batches' values, which stay valid until this operator's next call.
 */
#include "exec/op.h"

typedef struct LateralState {
    ExBatch *left;          /* the current left batch (NULL: pull one) */
    uint32_t lpos;          /* the current row's position in its live rows */
    Vector  *args;          /* the arguments over the left batch */
    Vector  *row;           /* the current row's values of them */
    ExOp    *right;         /* the right plan's run for the current row, or NULL */
    bool     matched;       /* a right row of the current row passed */
    ExCtx    rcx;           /* the right run's context: outer = row */
    Arena    larena;        /* the current left batch's arguments */
    Arena    rarena;        /* the current row's right operators */
} LateralState;

/* An output batch of n rows: left row i repeated, then right's rows (or
 * NULLs when right is NULL). */
static ExBatch *combine(ExOp *op, const ExBatch *left, uint32_t i, const ExBatch *right,
                        uint32_t n)
{
    const Plan *p = op->plan;
    int nl = p->child->ncols;
    ExBatch *eb = &op->out;
    eb->b.ncols = (uint32_t)p->ncols;
    eb->b.nrows = n;
    eb->b.cols = ARENA_ARRAY(&op->arena, Vector, p->ncols ? p->ncols : 1);
    for (int c = 0; c < nl; c++) {
        vector_init(&eb->b.cols[c], &op->arena, p->cols[c].type, n, true);
        for (uint32_t r = 0; r < n; r++)
            ex_copy_value(&eb->b.cols[c], r, &left->b.cols[c], i, NULL);
    }
    for (int c = nl; c < p->ncols; c++) {
        vector_init(&eb->b.cols[c], &op->arena, p->cols[c].type, n, true);
        for (uint32_t r = 0; r < n; r++) {
            if (right == NULL)
                eb->b.cols[c].nulls[r] = 1;
            else
                ex_copy_value(&eb->b.cols[c], r, &right->b.cols[c - nl],
                              right->sel ? right->sel[r] : r, NULL);
        }
    }
    eb->sel = NULL;
    eb->n = n;
    return eb;
}

/* Starts the right plan for the current left row. */
static int start_row(ExOp *op)
{
    LateralState *s = op->state;
    const Plan *p = op->plan;
    int na = p->u.lateral.nargs;
    uint32_t i = s->left->sel ? s->left->sel[s->lpos] : s->lpos;
    arena_reset(&s->rarena);
    for (int a = 0; a < na; a++) {
        vector_init(&s->row[a], &s->rarena, s->args[a].type, 1, true);
        ex_copy_value(&s->row[a], 0, &s->args[a], i, NULL);
    }
    s->rcx = *op->cx;
    s->rcx.arena = &s->rarena;
    s->rcx.outer = s->row;
    s->rcx.nouter = na;
    ex_cte_level(&s->rcx, p->right);
    s->matched = false;
    s->right = ex_op_build(&s->rcx, p->right);
    return s->right ? 0 : -1;
}

static int lateral_next(ExOp *op, ExBatch **out)
{
    LateralState *s = op->state;
    const Plan *p = op->plan;
    for (;;) {
        if (s->right == NULL) {
            if (s->left == NULL || s->lpos >= s->left->n) {
                int rc = op_pull(op->child, &s->left);
                if (rc <= 0) {
                    s->left = NULL;
                    return rc;
                }
                arena_reset(&s->larena);
                EvalCtx ecx = op_eval_ctx(op);
                ecx.arena = &s->larena;
                for (int a = 0; a < p->u.lateral.nargs; a++)
                    if (ex_eval_sel(&ecx, p->u.lateral.args[a], &s->left->b, s->left->b.nrows,
                                    s->left->sel, s->left->n, &s->args[a]) < 0)
                        return -1;
                s->lpos = 0;
            }
            if (start_row(op) < 0)
                return -1;
        }
        uint32_t i = s->left->sel ? s->left->sel[s->lpos] : s->lpos;
        ExBatch *rb;
        int rc = op_pull(s->right, &rb);
        if (rc < 0)
            return -1;
        if (rc == 0) {
            ex_op_close(s->right);
            s->right = NULL;
            s->lpos++;
            if (p->u.lateral.type == JOIN_LEFT && !s->matched) {
                *out = combine(op, s->left, i, NULL, 1);
                return 1;
            }
            continue;
        }
        ExBatch *eb = combine(op, s->left, i, rb, rb->n);
        if (p->u.lateral.cond != NULL) {
            EvalCtx ecx = op_eval_ctx(op);
            Vector v;
            if (ex_eval(&ecx, p->u.lateral.cond, &eb->b, eb->b.nrows, &v) < 0)
                return -1;
            uint32_t *sel = ARENA_ARRAY(&op->arena, uint32_t, eb->b.nrows ? eb->b.nrows : 1);
            uint32_t m = 0;
            for (uint32_t r = 0; r < eb->b.nrows; r++)
                if (!vector_is_null(&v, r) && v.v.b[r])
                    sel[m++] = r;
            if (m == 0)
                continue;
            eb->sel = m == eb->b.nrows ? NULL : sel;
            eb->n = m;
        }
        s->matched = true;
        *out = eb;
        return 1;
    }
}

static void lateral_close(ExOp *op)
{
    LateralState *s = op->state;
    ex_op_close(s->right);
    s->right = NULL;
    arena_destroy(&s->rarena);
    arena_destroy(&s->larena);
}

ExOp *op_build_lateral(ExCtx *cx, const Plan *p, ExOp *left)
{
    SL_UNUSED(left);
    ExOp *op = op_new(cx, p, sizeof(LateralState));
    LateralState *s = op->state;
    int na = p->u.lateral.nargs;
    s->args = ARENA_ARRAY(cx->arena, Vector, na ? na : 1);
    s->row = ARENA_ARRAY(cx->arena, Vector, na ? na : 1);
    arena_init(&s->larena, 16 * 1024);
    arena_init(&s->rarena, 16 * 1024);
    op->next = lateral_next;
    op->close = lateral_close;
    return op;
}
