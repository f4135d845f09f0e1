/*
 * op.c -- the operator base: building an operator tree from a plan,
 * pulling batches, closing; and RowBuf, rows kept for a whole statement.
 *
 *   ex_op_build, ex_op_next, ex_op_close     exec.h's interface
 *   op_new, op_eval_ctx, op_pull             for the op_*.c files
 *   rowbuf_init, rowbuf_append, rowbuf_scan  materialized rows
 *
 * Each operator owns an arena for its current output batch, reset when it
 * is asked for the next one.  Operators themselves and everything that
 * lives as long as the statement (hash tables' keys, materialized rows)
 * come from ExCtx.arena.
 *
 * ex_op_next checks the statement's memory account (ex_check_memory,
 * functions/stmtctl.c) before it asks an operator for a batch and after: a statement past statement_mem
 * or the server's --max-memory ends with 53200 at the first batch
 * boundary, all the way up the tree, before the operators above allocate
 * their own output.
 */
#include "exec/op.h"

#define OP_ARENA_BLOCK (64 * 1024)

ExOp *op_new(ExCtx *cx, const Plan *p, size_t state_size)
{
    ExOp *op = ARENA_NEW(cx->arena, ExOp);
    op->cx = cx;
    op->plan = p;
    arena_init(&op->arena, OP_ARENA_BLOCK);
    if (state_size)
        op->state = arena_zalloc(cx->arena, state_size);
    return op;
}

EvalCtx op_eval_ctx(ExOp *op)
{
    EvalCtx e = {
        .arena = &op->arena, .err = op->cx->err,
        .params = op->cx->params, .nparams = op->cx->nparams,
        .subplans = op->cx->subplans, .nsubplans = op->cx->nsubplans,
        .now = op->cx->now,
        .outer = op->cx->outer, .nouter = op->cx->nouter, .exec = op->cx,
        .system_arg = op->cx->system_arg, .hooks = &op->cx->hooks,
    };
    return e;
}

int op_pull(ExOp *child, ExBatch **b)
{
    for (;;) {
        int rc = ex_op_next(child, b);
        if (rc <= 0 || (*b)->n > 0)
            return rc;
    }
}

static ExOp *build(ExCtx *cx, const Plan *p)
{
    ExOp *child = NULL, *right = NULL;
    /* a CTE_SCAN runs its child itself (once for the statement) */
    if (plan_nchildren(p) > 0 && p->kind != PLAN_CTE_SCAN &&
        (child = build(cx, p->child)) == NULL)
        return NULL;
    /* LATERAL and RECURSIVE build their right plans as they run them */
    bool own_right = p->kind == PLAN_LATERAL || p->kind == PLAN_RECURSIVE;
    if (plan_nchildren(p) > 1 && !own_right && (right = build(cx, p->right)) == NULL) {
        ex_op_close(child);
        return NULL;
    }
    ExOp *op = NULL;
    switch (p->kind) {
    case PLAN_SCAN:     op = op_build_scan(cx, p); break;
    case PLAN_VALUES:   op = op_build_values(cx, p); break;
    case PLAN_FILTER:   op = op_build_filter(cx, p, child); break;
    case PLAN_PROJECT:  op = op_build_project(cx, p, child); break;
    case PLAN_LIMIT:    op = op_build_limit(cx, p, child); break;
    case PLAN_AGG:      op = op_build_agg(cx, p, child); break;
    case PLAN_SORT:     op = op_build_sort(cx, p, child); break;
    case PLAN_DISTINCT: op = op_build_distinct(cx, p, child); break;
    case PLAN_WINDOW:   op = op_build_window(cx, p, child); break;
    case PLAN_SERIES:   op = op_build_series(cx, p); break;
    case PLAN_PROJECT_SET: op = op_build_project_set(cx, p, child); break;
    case PLAN_JOIN:     op = op_build_join(cx, p, child, right); break;
    case PLAN_SETOP:    op = op_build_setop(cx, p, child, right); break;
    case PLAN_LATERAL:  op = op_build_lateral(cx, p, child); break;
    case PLAN_RECURSIVE: op = op_build_recursive(cx, p, child); break;
    case PLAN_WORKTABLE: op = op_build_worktable(cx, p); break;
    case PLAN_CTE_SCAN: op = op_build_cte_scan(cx, p); break;
    }
    if (op == NULL) {
        ex_op_close(child);
        ex_op_close(right);
        return NULL;
    }
    op->child = child;
    op->right = right;
    return op;
}

ExOp *ex_op_build(ExCtx *cx, const Plan *p)
{
    /* the statement's shared WITH query rows, made before any copy of cx */
    if (cx->ctes == NULL && ex_plan_has_cte_scan(p))
        cx->ctes = ex_cte_cache_new(cx->arena);
    return build(cx, p);
}

int ex_op_next(ExOp *op, ExBatch **out)
{
    if (ex_check_interrupt(op->cx->err) < 0)
        return -1;
    if (ex_check_memory(op->cx->err) < 0)
        return -1;
    arena_reset(&op->arena);
    int rc = op->next(op, out);
    if (rc > 0 && ex_check_memory(op->cx->err) < 0)
        return -1;
    return rc;
}


void ex_op_close(ExOp *op)
{
    if (op == NULL)
        return;
    ex_op_close(op->child);
    ex_op_close(op->right);
    if (op->close)
        op->close(op);
    arena_destroy(&op->arena);
}

/* ---------------------------------------------------------------- RowBuf */

void rowbuf_init(RowBuf *rb, Arena *a, const ColumnDesc *cols, int ncols)
{
    memset(rb, 0, sizeof(*rb));
    rb->arena = a;
    rb->ncols = ncols;
    rb->types = ARENA_ARRAY(a, SlType, ncols ? ncols : 1);
    for (int c = 0; c < ncols; c++)
        rb->types[c] = cols[c].type;
}

int rowbuf_scan(ExOp *op, const RowBuf *rb, int *pos, ExBatch **out)
{
    if (*pos >= rb->nbatches)
        return 0;
    op->out.b = *rb->batches[(*pos)++];
    op->out.sel = NULL;
    op->out.n = op->out.b.nrows;
    *out = &op->out;
    return 1;
}

void rowbuf_append(RowBuf *rb, const ExBatch *b)
{
    if (b->n == 0)
        return;
    if (rb->nbatches == rb->cap) {
        int cap = rb->cap ? rb->cap * 2 : 16;
        Batch **more = ARENA_ARRAY(rb->arena, Batch *, cap);
        if (rb->nbatches)
            memcpy(more, rb->batches, sizeof(Batch *) * (size_t)rb->nbatches);
        rb->batches = more;
        rb->cap = cap;
    }
    Batch *d = ARENA_NEW(rb->arena, Batch);
    d->ncols = (uint32_t)rb->ncols;
    d->nrows = b->n;
    d->cols = ARENA_ARRAY(rb->arena, Vector, rb->ncols ? rb->ncols : 1);
    for (int c = 0; c < rb->ncols; c++) {
        vector_init(&d->cols[c], rb->arena, rb->types[c], b->n, true);
        const Vector *src = &b->b.cols[c];
        for (uint32_t k = 0; k < b->n; k++)
            ex_copy_value(&d->cols[c], k, src, b->sel ? b->sel[k] : k, rb->arena);
    }
    rb->batches[rb->nbatches++] = d;
    rb->nrows += b->n;
}
