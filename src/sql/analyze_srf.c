/*
 * analyze_srf.c -- set-returning functions in a select list (PostgreSQL
 * 10's semantics: parse_func.c's check_srf_call_placement, the planner's
 * split_pathtarget_at_srfs).
 *
 *   an_srf_check     where a set-returning call may go: a select list and
 *                    ORDER BY (Analyze.srf_ok), not inside CASE, COALESCE
 *                    or an aggregate's or window function's arguments;
 *                    0A000 elsewhere, naming the clause
 *   an_project_set   the ProjectSet nodes of a select list: the calls
 *                    whose arguments hold no other call in the lowest node,
 *                    the calls over them in the next, and so on; the calls
 *                    of one node run in lockstep
 *
 * A select list's calls are computed after its FROM, WHERE, GROUP BY,
 * HAVING and window functions, below its Project, so that a grouped
 * query's sets run over its groups; DISTINCT, ORDER BY and LIMIT see
 * their rows.  GROUP BY is refused (0A000: PostgreSQL runs such sets
 * before grouping, sluice not yet).
 */
#include "sql/analyze_int.h"

static int refuse_srf(Analyze *an, int loc, const char *fmt, const char *what, bool hint)
{
    sl_error_at(an->err, ERRCODE_FEATURE_NOT_SUPPORTED, loc, fmt, what);
    if (hint)
        sl_error_hint(an->err,
                      "You might be able to move the set-returning function into a LATERAL "
                      "FROM item.");
    return -1;
}

int an_srf_check(Analyze *an, const FuncDesc *fd, int loc)
{
    if (ex_func_srf(fd)->ncols > 0) {
        sl_error_at(an->err, ERRCODE_FEATURE_NOT_SUPPORTED, loc,
                    "%s() outside FROM is not supported yet: it returns records, which "
                    "sluice does not have", fd->name);
        sl_error_hint(an->err, "Call it in FROM: SELECT key, value FROM %s(...).", fd->name);
        return -1;
    }
    if (an->agg != NULL && an->agg->in_args)
        return refuse_srf(an, loc, "aggregate function calls cannot contain set-returning "
                                   "function calls%s", "", true);
    if (an->win != NULL && an->win->inside)
        return refuse_srf(an, loc, "window function calls cannot contain set-returning "
                                   "function calls%s", "", true);
    if (an->srf_ok)
        return 0;
    if (an->srf_refusal != NULL)
        return refuse_srf(an, loc, "set-returning functions are not allowed in %s",
                          an->srf_refusal,
                          strcmp(an->srf_refusal, "CASE") == 0 ||
                              strcmp(an->srf_refusal, "COALESCE") == 0);
    const char *where = an->agg_refusal != NULL                      ? an->agg_refusal
                        : an->win != NULL && an->win->refusal != NULL ? an->win->refusal
                                                                      : NULL;
    if (where != NULL && strcmp(where, "GROUP BY") == 0)
        return refuse_srf(an, loc, "set-returning functions in %s are not supported yet", where,
                          false);
    if (where == NULL)
        return refuse_srf(an, loc, "set-returning functions are not allowed here%s", "", false);
    return refuse_srf(an, loc, "set-returning functions are not allowed in %s", where, false);
}

static bool is_srf(const Expr *e)
{
    return e->kind == EXPR_FUNC && e->fn != NULL && (e->fn->flags & FUNC_SRF);
}

static bool has_srf(const Expr *e)
{
    if (e == NULL)
        return false;
    if (is_srf(e))
        return true;
    for (int a = 0; a < e->nargs; a++)
        if (has_srf(e->args[a]))
            return true;
    return false;
}

/* Collects into calls the set-returning calls of e whose arguments hold
 * none (the innermost), each once. */
static void innermost(Expr *e, Expr ***calls, int *n, int *cap, Arena *a)
{
    if (e == NULL)
        return;
    bool inner = false;
    for (int k = 0; k < e->nargs; k++)
        inner |= has_srf(e->args[k]);
    if (inner || !is_srf(e)) {
        for (int k = 0; k < e->nargs; k++)
            innermost(e->args[k], calls, n, cap, a);
        return;
    }
    for (int k = 0; k < *n; k++)
        if ((*calls)[k] == e)
            return;
    if (*n == *cap) {
        int ncap = *cap ? *cap * 2 : 8;
        Expr **more = ARENA_ARRAY(a, Expr *, ncap);
        if (*n > 0)
            memcpy(more, *calls, sizeof(Expr *) * (size_t)*n);
        *calls = more;
        *cap = ncap;
    }
    (*calls)[(*n)++] = e;
}

Plan *an_project_set(Analyze *an, Plan *child, Expr **exprs, int n)
{
    for (;;) {
        Expr **calls = NULL;
        int ncalls = 0, cap = 0;
        for (int i = 0; i < n; i++)
            innermost(exprs[i], &calls, &ncalls, &cap, an->a);
        if (ncalls == 0)
            return child;
        Plan *p = plan_new(an->a, PLAN_PROJECT_SET, child, child->ncols + ncalls);
        for (int c = 0; c < child->ncols; c++)
            plan_set_col(p, c, child->cols[c].name, child->cols[c].type, child->quals[c]);
        p->u.project_set.nsrfs = ncalls;
        p->u.project_set.srfs = ARENA_ARRAY(an->a, Expr *, ncalls);
        for (int k = 0; k < ncalls; k++) {
            /* the node keeps the call; the expression reads its column */
            Expr *call = ARENA_NEW(an->a, Expr);
            *call = *calls[k];
            p->u.project_set.srfs[k] = call;
            plan_set_col(p, child->ncols + k, call->fn->name, call->type, NULL);
            Expr *ref = calls[k];
            ref->kind = EXPR_COLUMN;
            ref->nargs = 0;
            ref->args = NULL;
            ref->fn = NULL;
            ref->subkind = COLREF_PLAIN;
            ref->index = child->ncols + k;
        }
        child = p;
    }
}
