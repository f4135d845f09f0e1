/*
 * op_ctescan.c -- CTE Scan: the rows of a WITH query run once for the
 * statement, however many of its references read them.
 *
 *   op_build_cte_scan
 *
 * The analyzer shares a WITH query's plan between its references (each a
 * CTE_SCAN over the same child) when they must see the same rows: when the
 * query calls a volatile function (random()).  The first scan to be read
 * runs the plan to its end into rows kept in the statement's cache
 * (ExCtx.ctes, keyed by the shared plan); every scan then hands out those
 * rows.  The statement's cache is made when its operators are built
 * (ex_op_build, when the plan has a CTE_SCAN), so the LATERAL runs and
 * correlated subqueries built later from copies of that context share it;
 * each run of a correlated subquery or of a LATERAL item has a cache of
 * its own over it (ex_cte_level), where the WITH queries that read an
 * outer row are kept for that run only.
 */
#include "exec/op.h"

struct ExCteCache {
    Arena          *arena;      /* the kept rows' */
    struct CteRows *list;
    ExCteCache     *parent;     /* the statement's (or an enclosing run's), or NULL */
};

typedef struct CteRows {
    const Plan     *plan;
    RowBuf          rows;
    struct CteRows *next;
} CteRows;

static bool subplan_has_cte(const Expr *e, void *arg)
{
    SL_UNUSED(arg);
    return e->kind == EXPR_SUBPLAN && e->subplan != NULL && ex_plan_has_cte_scan(e->subplan);
}

bool ex_plan_has_cte_scan(const Plan *p)
{
    if (p->kind == PLAN_CTE_SCAN)
        return true;
    for (int i = 0; i < plan_nchildren(p); i++)
        if (ex_plan_has_cte_scan(plan_child(p, i)))
            return true;
    return plan_any_expr(p, subplan_has_cte, NULL);
}

ExCteCache *ex_cte_cache_new(Arena *a)
{
    ExCteCache *c = ARENA_NEW(a, ExCteCache);
    c->arena = a;
    return c;
}

void ex_cte_level(ExCtx *run, const Plan *p)
{
    if (run->ctes != NULL && ex_plan_has_cte_scan(p)) {
        ExCteCache *c = ex_cte_cache_new(run->arena);
        c->parent = run->ctes;
        run->ctes = c;
    }
}

/* The rows of plan, run now if no scan has run it yet. */
static const RowBuf *cte_rows(ExOp *op, const Plan *plan)
{
    ExCtx *cx = op->cx;
    if (cx->ctes == NULL)
        cx->ctes = ex_cte_cache_new(cx->arena);
    ExCteCache *c = cx->ctes;
    /* one that reads no outer row: the statement's */
    while (!op->plan->u.cte_scan.correlated && c->parent != NULL)
        c = c->parent;
    for (CteRows *r = c->list; r != NULL; r = r->next)
        if (r->plan == plan)
            return &r->rows;
    CteRows *r = ARENA_NEW(c->arena, CteRows);
    r->plan = plan;
    rowbuf_init(&r->rows, c->arena, plan->cols, plan->ncols);
    ExCtx run = *cx;
    run.arena = c->arena;
    ExOp *q = ex_op_build(&run, plan);
    if (q == NULL)
        return NULL;
    ExBatch *b;
    int rc;
    while ((rc = op_pull(q, &b)) > 0)
        rowbuf_append(&r->rows, b);
    ex_op_close(q);
    if (rc < 0)
        return NULL;
    r->next = c->list;
    c->list = r;
    return &r->rows;
}

typedef struct CteScanState {
    const RowBuf *rows;
    int           pos;      /* the next of its batches */
} CteScanState;

static int cte_scan_next(ExOp *op, ExBatch **out)
{
    CteScanState *s = op->state;
    if (s->rows == NULL && (s->rows = cte_rows(op, op->plan->child)) == NULL)
        return -1;
    return rowbuf_scan(op, s->rows, &s->pos, out);
}

ExOp *op_build_cte_scan(ExCtx *cx, const Plan *p)
{
    ExOp *op = op_new(cx, p, sizeof(CteScanState));
    op->next = cte_scan_next;
    return op;
}
