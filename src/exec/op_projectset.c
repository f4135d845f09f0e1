/*
 * op_projectset.c -- ProjectSet: set-returning functions in a select list
 * (PostgreSQL's nodeProjectSet.c).
 *
 *   op_build_project_set   for each input row, the child's columns and the
 *                          next value (or row: jsonb_each's key and value)
 *                          of every call's set, in lockstep,
 *                          until every set has ended (a set that ends
 *                          first gives NULL); a row whose sets are all
 *                          empty gives no row
 *
 * The calls' arguments are evaluated once per input batch, into an arena
 * of their own that lives until the next input batch: a row's sets may
 * run over many output batches, and what the sets point at (strings of
 * the arguments, the child's values) must stay.  So an output batch never
 * mixes two input batches: when the input batch is done, what is made is
 * returned before the child is asked for the next.  A call with a NULL
 * argument has an empty set (every such function is strict).
 */
#include "exec/op.h"

#define PS_ARENA_BLOCK (16 * 1024)

typedef struct PsState {
    ExBatch   *in;          /* the input batch; NULL: pull the next */
    uint32_t   k;           /* the position in its selection of the row running */
    bool       running;     /* that row's sets are started */
    Arena      args_arena;  /* the calls' arguments of the input batch */
    Vector   **args;        /* per call, its argument vectors */
    ExSrfIter *it;          /* per call */
    bool      *ended;       /* per call: its set of the running row ended */
    bool       eof;
} PsState;

/* Evaluates every call's arguments over the input batch. */
static int eval_args(ExOp *op, PsState *st)
{
    const Plan *p = op->plan;
    arena_reset(&st->args_arena);
    EvalCtx ecx = op_eval_ctx(op);
    ecx.arena = &st->args_arena;
    for (int c = 0; c < p->u.project_set.nsrfs; c++) {
        const Expr *call = p->u.project_set.srfs[c];
        st->args[c] = ARENA_ARRAY(&st->args_arena, Vector, call->nargs ? call->nargs : 1);
        for (int a = 0; a < call->nargs; a++)
            if (ex_eval_sel(&ecx, call->args[a], &st->in->b, st->in->b.nrows, st->in->sel,
                            st->in->n, &st->args[c][a]) < 0)
                return -1;
    }
    return 0;
}

/* Starts every call's set for input row i. */
static int start_row(ExOp *op, PsState *st, uint32_t i)
{
    const Plan *p = op->plan;
    EvalCtx ecx = op_eval_ctx(op);
    ecx.arena = &st->args_arena;
    for (int c = 0; c < p->u.project_set.nsrfs; c++) {
        const Expr *call = p->u.project_set.srfs[c];
        /* a strict call has no set for a NULL argument (string_to_table,
         * FUNC_NONSTRICT, reads its NULLs itself) */
        bool null = false;
        for (int a = 0; a < call->nargs && !(call->fn->flags & FUNC_NONSTRICT); a++)
            null |= vector_is_null(&st->args[c][a], i);
        st->ended[c] = null;
        if (!null && ex_func_srf(call->fn)->start(&ecx, call, st->args[c], i, &st->it[c]) < 0)
            return -1;
    }
    return 0;
}

static int project_set_next(ExOp *op, ExBatch **out)
{
    const Plan *p = op->plan;
    PsState *st = op->state;
    int nin = p->child->ncols, nsrf = p->u.project_set.nsrfs;
    ExBatch *eb = &op->out;
    eb->b.nrows = 0;
    eb->b.ncols = (uint32_t)p->ncols;
    eb->b.cols = ARENA_ARRAY(&op->arena, Vector, p->ncols ? p->ncols : 1);
    for (int c = 0; c < p->ncols; c++)
        vector_init(&eb->b.cols[c], &op->arena, p->cols[c].type, EX_BATCH_ROWS, true);
    eb->sel = NULL;
    EvalCtx ecx = op_eval_ctx(op);
    uint32_t m = 0;
    while (m < EX_BATCH_ROWS && !st->eof) {
        if (st->in == NULL) {
            if (m > 0)
                break;      /* the rows made point into this input batch */
            int rc = op_pull(op->child, &st->in);
            if (rc < 0)
                return -1;
            if (rc == 0) {
                st->in = NULL;
                st->eof = true;
                break;
            }
            st->k = 0;
            st->running = false;
            if (eval_args(op, st) < 0)
                return -1;
        }
        if (st->k >= st->in->n) {
            st->in = NULL;
            continue;
        }
        uint32_t i = st->in->sel ? st->in->sel[st->k] : st->k;
        if (!st->running) {
            if (start_row(op, st, i) < 0)
                return -1;
            st->running = true;
        }
        bool any = false;
        for (int c = 0, col = nin; c < nsrf; c++) {
            Vector *v = &eb->b.cols[col];
            const ExSrfFns *f = ex_func_srf(p->u.project_set.srfs[c]->fn);
            int w = f->ncols > 0 ? f->ncols : 1, rc = 0;
            for (int k = 0; k < w; k++)
                v[k].nulls[m] = 0;
            if (!st->ended[c] && (rc = f->next(&ecx, &st->it[c], v, m)) < 0)
                return -1;
            if (rc == 0) {
                st->ended[c] = true;
                for (int k = 0; k < w; k++)
                    v[k].nulls[m] = 1;
            }
            any |= rc == 1;
            col += w;
        }
        if (!any) {
            st->running = false;
            st->k++;
            continue;
        }
        for (int c = 0; c < nin; c++) {
            const Vector *src = &st->in->b.cols[c];
            Vector *dst = &eb->b.cols[c];
            dst->nulls[m] = vector_is_null(src, i);
            if (!dst->nulls[m]) {
                size_t w = type_width(src->type.id);
                memcpy((char *)dst->v.data + w * m, (const char *)src->v.data + w * i, w);
            }
        }
        m++;
    }
    if (m == 0)
        return 0;
    eb->b.nrows = m;
    eb->n = m;
    *out = eb;
    return 1;
}

static void project_set_close(ExOp *op)
{
    PsState *st = op->state;
    for (int c = 0; c < op->plan->u.project_set.nsrfs; c++) {
        const ExSrfFns *f = ex_func_srf(op->plan->u.project_set.srfs[c]->fn);
        if (f->end != NULL)
            f->end(&st->it[c]);
    }
    arena_destroy(&st->args_arena);
}

ExOp *op_build_project_set(ExCtx *cx, const Plan *p, ExOp *child)
{
    SL_UNUSED(child);
    ExOp *op = op_new(cx, p, sizeof(PsState));
    PsState *st = op->state;
    int n = p->u.project_set.nsrfs;
    arena_init(&st->args_arena, PS_ARENA_BLOCK);
    st->args = arena_zalloc(cx->arena, sizeof(Vector *) * (size_t)(n ? n : 1));
    st->it = arena_zalloc(cx->arena, sizeof(ExSrfIter) * (size_t)(n ? n : 1));
    st->ended = arena_zalloc(cx->arena, sizeof(bool) * (size_t)(n ? n : 1));
    op->next = project_set_next;
    op->close = project_set_close;
    return op;
}
