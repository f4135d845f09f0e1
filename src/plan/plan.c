/*
 * plan.c -- logical plan nodes: construction, walking, expression
 * equality, and the placement of join and WHERE conditions.
 *
 *   plan_new, plan_nchildren, plan_child, plan_kind_name
 *   plan_expr_equal, plan_any_expr, plan_expr_volatile
 *   plan_join_set_condition   ON / USING -> equi keys + residual
 *   plan_push_filter          WHERE conjuncts -> into inner/cross joins
 *
 * Conditions move only where that keeps the result: into both sides of
 * inner and cross joins (a conjunct that reads one side only filters that
 * side; an equality between the sides becomes a hash key), never through
 * an outer join.  Plans are built in an arena and then left alone.
 */
#include "sluice/plan.h"

Plan *plan_new(Arena *a, PlanKind kind, Plan *child, int ncols)
{
    Plan *p = ARENA_NEW(a, Plan);
    p->kind = kind;
    p->child = child;
    p->ncols = ncols;
    p->cols = ARENA_ARRAY(a, ColumnDesc, ncols ? ncols : 1);
    p->quals = arena_zalloc(a, sizeof(const char *) * (size_t)(ncols ? ncols : 1));
    return p;
}

int plan_nchildren(const Plan *p)
{
    switch (p->kind) {
    case PLAN_SCAN:
    case PLAN_VALUES:
    case PLAN_SERIES:
    case PLAN_WORKTABLE:
        return 0;
    case PLAN_JOIN:
    case PLAN_SETOP:
    case PLAN_LATERAL:
    case PLAN_RECURSIVE:
        return 2;
    default:
        return 1;
    }
}

Plan *plan_child(const Plan *p, int i)
{
    return i == 0 ? p->child : p->right;
}

const char *plan_kind_name(PlanKind k)
{
    static const char *const names[] = {"Scan", "Values", "Filter", "Project", "Aggregate",
                                        "Sort", "Limit", "Distinct", "Join", "SetOp",
                                        "WindowAgg", "Function Scan", "ProjectSet",
                                        "LATERAL", "WITH RECURSIVE",
                                        "WorkTable Scan", "CTE Scan"};
    return names[k];
}

/* ---------------------------------------------------------- equality */

static bool const_equal(const Vector *a, const Vector *b)
{
    bool na = vector_is_null(a, 0), nb = vector_is_null(b, 0);
    if (na || nb)
        return na == nb;
    StrBuf x, y;
    strbuf_init(&x);
    strbuf_init(&y);
    value_format_text(a, 0, &x);
    value_format_text(b, 0, &y);
    bool eq = x.len == y.len && (x.len == 0 || memcmp(x.data, y.data, x.len) == 0);
    strbuf_free(&x);
    strbuf_free(&y);
    return eq;
}

bool plan_expr_equal(const Expr *a, const Expr *b)
{
    if (a == b)
        return true;
    if (a == NULL || b == NULL)
        return false;
    if (a->kind != b->kind || a->type.id != b->type.id || a->type.typmod != b->type.typmod ||
        a->nargs != b->nargs || a->fn != b->fn || a->cast != b->cast || a->index != b->index ||
        a->subkind != b->subkind || a->negate != b->negate || a->has_else != b->has_else)
        return false;
    if (a->kind == EXPR_CONST && !const_equal(&a->value, &b->value))
        return false;
    for (int i = 0; i < a->nargs; i++)
        if (!plan_expr_equal(a->args[i], b->args[i]))
            return false;
    return true;
}

/* ------------------------------------------------------- expression walk */

static bool expr_any(const Expr *e, bool (*pred)(const Expr *e, void *arg), void *arg)
{
    if (e == NULL)
        return false;
    if (pred(e, arg))
        return true;
    for (int i = 0; i < e->nargs; i++)
        if (expr_any(e->args[i], pred, arg))
            return true;
    return e->kind == EXPR_SUBPLAN && e->subplan != NULL && plan_any_expr(e->subplan, pred, arg);
}

static bool exprs_any(Expr *const *es, int n, bool (*pred)(const Expr *e, void *arg), void *arg)
{
    for (int i = 0; i < n; i++)
        if (expr_any(es[i], pred, arg))
            return true;
    return false;
}

bool plan_expr_volatile(const Expr *e, void *arg)
{
    SL_UNUSED(arg);
    return e->kind == EXPR_FUNC && e->fn != NULL && ex_func_volatile(e->fn);
}

bool plan_expr_has(const Expr *e, bool (*pred)(const Expr *e, void *arg), void *arg)
{
    return expr_any(e, pred, arg);
}

bool plan_any_expr(const Plan *p, bool (*pred)(const Expr *e, void *arg), void *arg)
{
    bool hit = false;
    switch (p->kind) {
    case PLAN_VALUES:
        for (int r = 0; r < p->u.values.nrows && !hit; r++)
            hit = exprs_any(p->u.values.rows[r], p->ncols, pred, arg);
        break;
    case PLAN_FILTER:
        hit = expr_any(p->u.filter.cond, pred, arg);
        break;
    case PLAN_PROJECT:
        hit = exprs_any(p->u.project.exprs, p->ncols, pred, arg);
        break;
    case PLAN_AGG:
        hit = exprs_any(p->u.agg.groups, p->u.agg.ngroups, pred, arg) ||
              expr_any(p->u.agg.window.time, pred, arg);
        for (int k = 0; k < p->u.agg.naggs && !hit; k++)
            hit = exprs_any(p->u.agg.aggs[k].args, p->u.agg.aggs[k].nargs, pred, arg) ||
                  expr_any(p->u.agg.aggs[k].filter, pred, arg);
        break;
    case PLAN_LIMIT:
        hit = expr_any(p->u.limit.count, pred, arg) || expr_any(p->u.limit.offset, pred, arg);
        break;
    case PLAN_JOIN:
        hit = exprs_any(p->u.join.lkeys, p->u.join.nkeys, pred, arg) ||
              exprs_any(p->u.join.rkeys, p->u.join.nkeys, pred, arg) ||
              expr_any(p->u.join.residual, pred, arg);
        break;
    case PLAN_SERIES:
        hit = expr_any(p->u.series.start, pred, arg) || expr_any(p->u.series.stop, pred, arg) ||
              expr_any(p->u.series.step, pred, arg);
        break;
    case PLAN_PROJECT_SET:
        hit = exprs_any(p->u.project_set.srfs, p->u.project_set.nsrfs, pred, arg);
        break;
    case PLAN_WINDOW:
        hit = exprs_any(p->u.window.agg.args, p->u.window.agg.nargs, pred, arg) ||
              expr_any(p->u.window.agg.filter, pred, arg) ||
              expr_any(p->u.window.start_off, pred, arg) ||
              expr_any(p->u.window.end_off, pred, arg);
        break;
    case PLAN_LATERAL:
        hit = exprs_any(p->u.lateral.args, p->u.lateral.nargs, pred, arg) ||
              expr_any(p->u.lateral.cond, pred, arg);
        break;
    default:
        break;
    }
    for (int i = 0; i < plan_nchildren(p) && !hit; i++)
        hit = plan_any_expr(plan_child(p, i), pred, arg);
    return hit;
}

/* ------------------------------------------------- condition placement */

/* The range of input columns e reads: lo > hi when it reads none. */
static void col_range(const Expr *e, int *lo, int *hi)
{
    if (e == NULL)
        return;
    if (e->kind == EXPR_COLUMN) {
        *lo = SL_MIN(*lo, e->index);
        *hi = SL_MAX(*hi, e->index);
    }
    for (int i = 0; i < e->nargs; i++)
        col_range(e->args[i], lo, hi);
}

/* A copy of e with its column indexes shifted by delta. */
static Expr *shift(Arena *a, const Expr *e, int delta)
{
    Expr *c = ARENA_NEW(a, Expr);
    *c = *e;
    if (e->kind == EXPR_COLUMN)
        c->index += delta;
    if (e->nargs > 0) {
        c->args = ARENA_ARRAY(a, Expr *, e->nargs);
        for (int i = 0; i < e->nargs; i++)
            c->args[i] = shift(a, e->args[i], delta);
    }
    return c;
}

static void conjuncts(const Expr *e, Expr **out, int *n, int cap)
{
    if (e->kind == EXPR_AND) {
        for (int i = 0; i < e->nargs; i++)
            conjuncts(e->args[i], out, n, cap);
        return;
    }
    if (*n < cap)
        out[(*n)++] = (Expr *)e;
}

static int count_conjuncts(const Expr *e)
{
    if (e->kind != EXPR_AND)
        return 1;
    int n = 0;
    for (int i = 0; i < e->nargs; i++)
        n += count_conjuncts(e->args[i]);
    return n;
}

static Expr *and_of(Arena *a, Expr **conds, int n)
{
    if (n == 0)
        return NULL;
    if (n == 1)
        return conds[0];
    Expr *e = ARENA_NEW(a, Expr);
    e->kind = EXPR_AND;
    e->type = sl_type(TYPE_BOOL);
    e->location = conds[0]->location;
    e->nargs = n;
    e->args = ARENA_ARRAY(a, Expr *, n);
    memcpy(e->args, conds, sizeof(Expr *) * (size_t)n);
    uint64_t cost = 1;
    for (int i = 0; i < n; i++)
        cost += conds[i]->cost;
    e->cost = cost > UINT32_MAX ? UINT32_MAX : (uint32_t)cost;
    return e;
}

/* Is c an equality between an expression of the left side and one of the
 * right side, both of one type?  Sets the two sides. */
static bool equi_key(const Expr *c, int nleft, Expr **l, Expr **r)
{
    if (c->kind != EXPR_FUNC || c->fn == NULL || !c->fn->is_op || c->nargs != 2 ||
        strcmp(c->fn->name, "=") != 0 || c->type.id != TYPE_BOOL)
        return false;
    const Expr *x = c->args[0], *y = c->args[1];
    if (x->type.id != y->type.id)
        return false;
    int xl = INT32_MAX, xh = -1, yl = INT32_MAX, yh = -1;
    col_range(x, &xl, &xh);
    col_range(y, &yl, &yh);
    if (xh < 0 || yh < 0)
        return false;
    if (xh < nleft && yl >= nleft) {
        *l = (Expr *)x;
        *r = (Expr *)y;
        return true;
    }
    if (yh < nleft && xl >= nleft) {
        *l = (Expr *)y;
        *r = (Expr *)x;
        return true;
    }
    return false;
}

void plan_join_set_condition(Arena *a, Plan *join, Expr *cond)
{
    int nleft = join->child->ncols;
    int n = count_conjuncts(cond);
    Expr **cs = ARENA_ARRAY(a, Expr *, n);
    int m = 0;
    conjuncts(cond, cs, &m, n);
    int nk = join->u.join.nkeys;
    Expr **lk = ARENA_ARRAY(a, Expr *, nk + m), **rk = ARENA_ARRAY(a, Expr *, nk + m);
    if (nk) {
        memcpy(lk, join->u.join.lkeys, sizeof(Expr *) * (size_t)nk);
        memcpy(rk, join->u.join.rkeys, sizeof(Expr *) * (size_t)nk);
    }
    int nres = 0;
    Expr **res = ARENA_ARRAY(a, Expr *, m + 1);
    if (join->u.join.residual != NULL)
        res[nres++] = join->u.join.residual;
    for (int i = 0; i < m; i++) {
        Expr *l, *r;
        if (equi_key(cs[i], nleft, &l, &r)) {
            lk[nk] = l;
            rk[nk] = shift(a, r, -nleft);
            nk++;
        } else {
            res[nres++] = cs[i];
        }
    }
    join->u.join.nkeys = nk;
    join->u.join.lkeys = lk;
    join->u.join.rkeys = rk;
    join->u.join.residual = and_of(a, res, nres);
    if (join->u.join.type == JOIN_CROSS)
        join->u.join.type = JOIN_INNER;
}

static Plan *filter_over(Arena *a, Plan *p, Expr **conds, int n)
{
    if (n == 0)
        return p;
    Plan *f = plan_new(a, PLAN_FILTER, p, p->ncols);
    for (int c = 0; c < p->ncols; c++)
        plan_set_col(f, c, p->cols[c].name, p->cols[c].type, p->quals[c]);
    f->u.filter.cond = and_of(a, conds, n);
    return f;
}

static Plan *push(Arena *a, Plan *p, Expr **conds, int n)
{
    if (n == 0)
        return p;
    if (p->kind != PLAN_JOIN ||
        (p->u.join.type != JOIN_INNER && p->u.join.type != JOIN_CROSS))
        return filter_over(a, p, conds, n);
    int nleft = p->child->ncols;
    Expr **lc = ARENA_ARRAY(a, Expr *, n), **rc = ARENA_ARRAY(a, Expr *, n),
         **here = ARENA_ARRAY(a, Expr *, n);
    int nl = 0, nr = 0, nh = 0;
    for (int i = 0; i < n; i++) {
        int lo = INT32_MAX, hi = -1;
        col_range(conds[i], &lo, &hi);
        if (hi < 0)
            here[nh++] = conds[i];
        else if (hi < nleft)
            lc[nl++] = conds[i];
        else if (lo >= nleft)
            rc[nr++] = shift(a, conds[i], -nleft);
        else
            here[nh++] = conds[i];
    }
    p->child = push(a, p->child, lc, nl);
    p->right = push(a, p->right, rc, nr);
    if (nh > 0)
        plan_join_set_condition(a, p, and_of(a, here, nh));
    return p;
}

Plan *plan_push_filter(Arena *a, Plan *p, Expr *cond)
{
    int n = count_conjuncts(cond);
    Expr **cs = ARENA_ARRAY(a, Expr *, n);
    int m = 0;
    conjuncts(cond, cs, &m, n);
    /* conditions that read no column stay on top */
    Expr **top = ARENA_ARRAY(a, Expr *, m), **rest = ARENA_ARRAY(a, Expr *, m);
    int nt = 0, nr = 0;
    for (int i = 0; i < m; i++) {
        int lo = INT32_MAX, hi = -1;
        col_range(cs[i], &lo, &hi);
        if (hi < 0)
            top[nt++] = cs[i];
        else
            rest[nr++] = cs[i];
    }
    return filter_over(a, push(a, p, rest, nr), top, nt);
}
