/*
 * analyze_grouping.c -- GROUP BY GROUPING SETS, ROLLUP and CUBE, and the
 * grouping(...) function.
 *
 *   an_group_add        one GROUP BY expression into the query's list of
 *                       distinct ones -> its group number
 *   an_grouping_sets    GROUP BY's items (expressions and GroupingSet
 *                       nodes) -> the grouping sets, as PostgreSQL expands
 *                       them (parse_agg.c's expand_grouping_sets)
 *   an_grouping_call    grouping(a, b, ...) -> an EXPR_COLUMN of subkind
 *                       COLREF_GROUPING (AggCollect.grouping)
 *   an_grouping_plan    the Aggregate node of a query with grouping sets ->
 *                       one Aggregate per set, each under a Project to the
 *                       node's columns (NULL for the keys the set leaves
 *                       out, each grouping() call's value a constant), all
 *                       under UNION ALL
 *
 * Expansion (PostgreSQL's): an expression is the one set {e}; () the empty
 * set; ROLLUP (e1, ..., en) the sets {e1..en}, {e1..en-1}, ..., {}; CUBE
 * (e1, ..., en) every subset (12 elements at most: 54011); GROUPING SETS
 * (...) the sets of each of its items in turn; (a, b) inside those three
 * one element of both.  The items of GROUP BY combine as a cartesian
 * product: GROUP BY a, ROLLUP (b, c) is {a, b, c}, {a, b}, {a}.  More than
 * 4096 sets is 54001.  Duplicate sets stay (each gives its rows).
 *
 * grouping(a, b, ...) is an int4 whose bit i (counting from the last
 * argument, bit 0) is 1 when argument i's expression is not in the row's
 * set; its arguments must be GROUP BY expressions of the query level
 * (42803), fewer than 32 of them (54011).  Without grouping sets it is 0.
 */
#include "sql/analyze_int.h"

#define MAX_GROUPING_SETS 4096
#define MAX_CUBE_ELEMS    12
#define MAX_GROUPING_ARGS 31

/* Room for one more of n elements of size sz in *arr (capacity *cap,
 * doubled when full), in an->a. */
static void grow(Analyze *an, void *arr, int n, int *cap, size_t sz)
{
    void **p = arr;
    if (n < *cap)
        return;
    int c = *cap ? *cap * 2 : 8;
    void *more = arena_alloc(an->a, sz * (size_t)c);
    if (n)
        memcpy(more, *p, sz * (size_t)n);
    *p = more;
    *cap = c;
}

int an_group_add(Analyze *an, AnGroupList *g, Expr *e)
{
    for (int k = 0; k < g->n; k++)
        if (plan_expr_equal(g->exprs[k], e))
            return k;
    grow(an, &g->exprs, g->n, &g->cap, sizeof(Expr *));
    g->exprs[g->n] = e;
    return g->n++;
}

/* ------------------------------------------------------------ expansion */

/* A list of sets under construction. */
typedef struct SetList {
    int         n, cap;
    AnGroupSet *sets;
} SetList;

typedef struct Expand {
    Analyze        *an;
    AnGroupList    *groups;
    an_group_expr_fn fn;
    void           *arg;
} Expand;

static void sets_push(Analyze *an, SetList *l, AnGroupSet s)
{
    grow(an, &l->sets, l->n, &l->cap, sizeof(AnGroupSet));
    l->sets[l->n++] = s;
}

/* a ++ b, a new set. */
static AnGroupSet set_concat(Analyze *an, const AnGroupSet *a, const AnGroupSet *b)
{
    AnGroupSet s = {a->n + b->n, ARENA_ARRAY(an->a, int, a->n + b->n + 1)};
    if (a->n)
        memcpy(s.idx, a->idx, sizeof(int) * (size_t)a->n);
    if (b->n)
        memcpy(s.idx + a->n, b->idx, sizeof(int) * (size_t)b->n);
    return s;
}

/* One element of ROLLUP or CUBE, or an expression item: its set. */
static int elem_set(Expand *x, Node *n, AnGroupSet *out)
{
    if (IS_A(n, GroupingSet) && ((GroupingSet *)n)->kind == GROUPING_SET_SIMPLE) {
        List *c = ((GroupingSet *)n)->content;
        out->n = list_len(c);
        out->idx = ARENA_ARRAY(x->an->a, int, out->n + 1);
        for (int i = 0; i < out->n; i++) {
            Expr *e = x->fn(x->an, list_nth(c, i), x->arg);
            if (e == NULL)
                return -1;
            out->idx[i] = an_group_add(x->an, x->groups, e);
        }
        return 0;
    }
    Expr *e = x->fn(x->an, n, x->arg);
    if (e == NULL)
        return -1;
    out->n = 1;
    out->idx = ARENA_ARRAY(x->an->a, int, 1);
    out->idx[0] = an_group_add(x->an, x->groups, e);
    return 0;
}

static int too_many(Analyze *an, int loc)
{
    return sl_error_at(an->err, ERRCODE_STATEMENT_TOO_COMPLEX, loc,
                       "too many grouping sets present (maximum %d)", MAX_GROUPING_SETS);
}

/* The sets of one GROUP BY item, appended to out. */
static int item_sets(Expand *x, Node *n, SetList *out)
{
    Analyze *an = x->an;
    if (!IS_A(n, GroupingSet) || ((GroupingSet *)n)->kind == GROUPING_SET_SIMPLE) {
        AnGroupSet s;
        if (elem_set(x, n, &s) < 0)
            return -1;
        sets_push(an, out, s);
        return 0;
    }
    GroupingSet *g = (GroupingSet *)n;
    int ne = list_len(g->content);
    switch (g->kind) {
    case GROUPING_SET_EMPTY:
        sets_push(an, out, (AnGroupSet){0, NULL});
        return 0;
    case GROUPING_SET_SETS:
        for (int i = 0; i < ne; i++) {
            if (item_sets(x, list_nth(g->content, i), out) < 0)
                return -1;
            if (out->n > MAX_GROUPING_SETS)
                return too_many(an, n->location);
        }
        return 0;
    case GROUPING_SET_ROLLUP:
    case GROUPING_SET_CUBE: {
        if (g->kind == GROUPING_SET_CUBE && ne > MAX_CUBE_ELEMS)
            return sl_error_at(an->err, ERRCODE_TOO_MANY_COLUMNS, n->location,
                               "CUBE is limited to %d elements", MAX_CUBE_ELEMS);
        AnGroupSet *el = ARENA_ARRAY(an->a, AnGroupSet, ne + 1);
        for (int i = 0; i < ne; i++)
            if (elem_set(x, list_nth(g->content, i), &el[i]) < 0)
                return -1;
        if (g->kind == GROUPING_SET_ROLLUP) {
            for (int k = ne; k >= 0; k--) {
                AnGroupSet s = {0, NULL};
                for (int i = 0; i < k; i++)
                    s = set_concat(an, &s, &el[i]);
                sets_push(an, out, s);
            }
            return 0;
        }
        for (int m = (1 << ne) - 1; m >= 0; m--) {
            AnGroupSet s = {0, NULL};
            for (int i = 0; i < ne; i++)
                if (m & (1 << (ne - 1 - i)))
                    s = set_concat(an, &s, &el[i]);
            sets_push(an, out, s);
            if (out->n > MAX_GROUPING_SETS)
                return too_many(an, n->location);
        }
        return 0;
    }
    case GROUPING_SET_SIMPLE:
        break;
    }
    return 0;
}

int an_grouping_sets(Analyze *an, List *items, an_group_expr_fn fn, void *arg,
                     AnGroupList *groups, AnGroupingSets **out)
{
    Expand x = {an, groups, fn, arg};
    SetList acc = {0};
    sets_push(an, &acc, (AnGroupSet){0, NULL});
    int loc = -1;
    for (int i = 0; i < list_len(items); i++) {
        Node *item = list_nth(items, i);
        if (loc < 0 && IS_A(item, GroupingSet))
            loc = item->location;
        SetList mine = {0};
        if (item_sets(&x, item, &mine) < 0)
            return -1;
        if ((int64_t)acc.n * mine.n > MAX_GROUPING_SETS)
            return too_many(an, loc >= 0 ? loc : item->location);
        SetList prod = {0};
        for (int a = 0; a < acc.n; a++)
            for (int b = 0; b < mine.n; b++)
                sets_push(an, &prod, set_concat(an, &acc.sets[a], &mine.sets[b]));
        acc = prod;
    }
    AnGroupingSets *gs = ARENA_NEW(an->a, AnGroupingSets);
    gs->n = acc.n;
    gs->sets = acc.sets;
    *out = gs;
    return 0;
}

/* --------------------------------------------------------------- grouping() */

Expr *an_grouping_call(Analyze *an, FuncCall *f)
{
    int loc = f->hdr.location;
    AggCollect *ac = an->agg;
    if (an->agg_refusal != NULL || ac == NULL) {
        sl_error_at(an->err, ERRCODE_GROUPING_ERROR, loc,
                    "grouping operations are not allowed in %s",
                    an->agg_refusal ? an->agg_refusal : "this context");
        return NULL;
    }
    if (f->star || f->distinct || f->filter || f->agg_order || list_len(f->args) == 0) {
        sl_error_at(an->err, ERRCODE_SYNTAX_ERROR, loc, "syntax error at or near \"grouping\"");
        return NULL;
    }
    int n = list_len(f->args);
    if (n > MAX_GROUPING_ARGS) {
        sl_error_at(an->err, ERRCODE_TOO_MANY_ARGUMENTS, loc,
                    "GROUPING must have fewer than 32 arguments");
        return NULL;
    }
    if (ac->in_args) {
        sl_error_at(an->err, ERRCODE_GROUPING_ERROR, loc,
                    "aggregate function calls cannot contain grouping operations");
        return NULL;
    }
    AnGroupingRef ref = {n, ARENA_ARRAY(an->a, int, n)};
    const AnGroupList *g = &ac->groups;
    for (int i = 0; i < n; i++) {
        Node *argn = list_nth(f->args, i);
        Expr *e = an_transform(an, argn);
        if (e == NULL)
            return NULL;
        int k = -1;
        for (int j = 0; j < g->n && k < 0; j++)
            if (plan_expr_equal(g->exprs[j], e))
                k = j;
        if (k < 0) {
            sl_error_at(an->err, ERRCODE_GROUPING_ERROR, argn->location,
                        "arguments to GROUPING must be grouping expressions of the associated "
                        "query level");
            return NULL;
        }
        ref.gidx[i] = k;
    }
    grow(an, &ac->grouping, ac->ngrouping, &ac->capg, sizeof(AnGroupingRef));
    ac->grouping[ac->ngrouping] = ref;
    Expr *e = an_mk(an, EXPR_COLUMN, sl_type(TYPE_INT4), loc, 0, NULL);
    e->subkind = COLREF_GROUPING;
    e->index = ac->ngrouping++;
    return e;
}

/* ------------------------------------------------------------------ plan */

static bool set_has(const AnGroupSet *s, int g)
{
    for (int i = 0; i < s->n; i++)
        if (s->idx[i] == g)
            return true;
    return false;
}

Plan *an_grouping_plan(Analyze *an, const Plan *agg, const AggCollect *ac)
{
    const AnGroupingSets *gs = ac->sets;
    int ng = agg->u.agg.ngroups, na = agg->u.agg.naggs, ncols = agg->ncols;
    const char **names = ARENA_ARRAY(an->a, const char *, ncols);
    for (int c = 0; c < ncols; c++)
        names[c] = agg->cols[c].name;
    Plan *top = NULL;
    for (int s = 0; s < gs->n; s++) {
        const AnGroupSet *set = &gs->sets[s];
        /* the set's distinct group numbers, in the order given */
        int *mine = ARENA_ARRAY(an->a, int, set->n + 1), nm = 0;
        for (int i = 0; i < set->n; i++) {
            bool dup = false;
            for (int j = 0; j < nm; j++)
                dup |= mine[j] == set->idx[i];
            if (!dup)
                mine[nm++] = set->idx[i];
        }
        Plan *a = plan_new(an->a, PLAN_AGG, agg->child, nm + na);
        a->u.agg = agg->u.agg;
        a->u.agg.ngroups = nm;
        a->u.agg.groups = ARENA_ARRAY(an->a, Expr *, nm + 1);
        for (int j = 0; j < nm; j++) {
            a->u.agg.groups[j] = agg->u.agg.groups[mine[j]];
            plan_set_col(a, j, agg->cols[mine[j]].name, agg->cols[mine[j]].type,
                         agg->quals[mine[j]]);
        }
        for (int k = 0; k < na; k++)
            plan_set_col(a, nm + k, agg->cols[ng + k].name, agg->cols[ng + k].type, NULL);
        Expr **ex = ARENA_ARRAY(an->a, Expr *, ncols);
        for (int g = 0; g < ng; g++) {
            int pos = -1;
            for (int j = 0; j < nm && pos < 0; j++)
                if (mine[j] == g)
                    pos = j;
            ex[g] = pos >= 0 ? an_column_expr(an, a, pos, -1)
                             : an_const(an, agg->cols[g].type, -1, true);
        }
        for (int k = 0; k < na; k++)
            ex[ng + k] = an_column_expr(an, a, nm + k, -1);
        for (int j = 0; j < ac->ngrouping; j++) {
            const AnGroupingRef *r = &ac->grouping[j];
            int32_t v = 0;
            for (int i = 0; i < r->n; i++)
                v = (int32_t)(((uint32_t)v << 1) | (set_has(set, r->gidx[i]) ? 0u : 1u));
            Expr *c = an_const(an, sl_type(TYPE_INT4), -1, false);
            c->value.v.i32[0] = v;
            ex[ng + na + j] = c;
        }
        Plan *p = an_project(an, a, ex, names, ncols);
        if (top == NULL) {
            top = p;
            continue;
        }
        Plan *u = plan_new(an->a, PLAN_SETOP, top, ncols);
        u->right = p;
        u->u.setop.op = SETOP_UNION;
        u->u.setop.all = true;
        for (int c = 0; c < ncols; c++)
            plan_set_col(u, c, names[c], agg->cols[c].type, agg->quals[c]);
        top = u;
    }
    return top;
}
