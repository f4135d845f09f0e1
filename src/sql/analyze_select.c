/*
 * analyze_select.c -- SELECT, VALUES and set operations into logical plans.
 *
 *   an_select_stmt   a SELECT statement -> Query (kind QUERY_SELECT)
 *   an_select        a query expression -> Plan (also subqueries, CTEs)
 *   an_sublink       (SELECT ...), EXISTS (...), x [NOT] IN (...), ARRAY (...)
 *                    -> InitPlan, or a correlated subplan run per row
 *   an_coerce_plan   a plan's columns cast to given types
 *   an_target_list   a select list (with * expanded) -> expressions and names
 *   an_column_expr, an_project, an_sort_plan, an_sort_dir
 *                    plan pieces analyze_window.c builds with too
 *
 * The plan of a SELECT is built in PostgreSQL's order of evaluation:
 *
 *   FROM (joins) -> WHERE (pushed into the joins where it can go) ->
 *   Aggregate (GROUP BY, aggregates) -> HAVING -> window functions (a
 *   Project, Sort and Window node each) -> Project (select list and
 *   hidden ORDER BY columns) -> DISTINCT -> Sort -> Limit -> Project
 *   (dropping the hidden columns)
 *
 * GROUP BY items are input expressions, select-list positions or output
 * names (SQL99's rule: an input column wins); ORDER BY items are output
 * names or positions first (SQL92), else expressions over the input, which
 * become hidden columns unless the select list computes them already.
 * Unknown-typed outputs become text, except in the arms of a set operation,
 * whose column types are resolved together (select_common_type).
 *
 * A select list (after * expansion) or a VALUES row has at most
 * MAX_TARGETS entries, PostgreSQL's limit: 54011 past it (a RowDescription
 * counts its fields in 16 bits).
 */
#include "sql/analyze_int.h"

#include <stdio.h>
#include <stdlib.h>

static Plan *select_arm(Analyze *an, SelectStmt *s, Scope *parent, bool arm);

/* PostgreSQL's MaxTupleAttributeNumber: the entries of a target list. */
#define MAX_TARGETS 1664

/* 54011 at loc when a target list of n entries is too long. */
static int check_targets(Analyze *an, int n, int loc)
{
    if (n <= MAX_TARGETS)
        return 0;
    sl_error_at(an->err, ERRCODE_TOO_MANY_COLUMNS, loc,
                "target lists can have at most %d entries", MAX_TARGETS);
    sl_error_detail(an->err, "This one has %d.", n);
    return -1;
}

/* One entry of a select list after * expansion. */
typedef struct TargetEntry {
    Node       *raw;        /* the expression as written, NULL for a * column */
    int         star_col;   /* a * column: its FROM output column */
    const char *name;
    int         loc;
} TargetEntry;

Expr *an_column_expr(Analyze *an, const Plan *p, int idx, int loc)
{
    Expr *e = an_mk(an, EXPR_COLUMN, p->cols[idx].type, loc, 0, NULL);
    e->index = idx;
    return e;
}

/* A Project over child with the given expressions and names. */
Plan *an_project(Analyze *an, Plan *child, Expr **exprs, const char **names, int n)
{
    Plan *p = plan_new(an->a, PLAN_PROJECT, child, n);
    p->u.project.exprs = exprs;
    for (int c = 0; c < n; c++) {
        const char *qual = NULL;
        if (exprs[c]->kind == EXPR_COLUMN && child != NULL && exprs[c]->index >= 0 &&
            exprs[c]->index < child->ncols && strcmp(names[c], child->cols[exprs[c]->index].name) == 0)
            qual = child->quals[exprs[c]->index];
        plan_set_col(p, c, names[c], exprs[c]->type, qual);
    }
    return p;
}

/* Expands the select list's stars against the current scope. */
static int expand_targets(Analyze *an, List *targets, TargetEntry **out, int *nout)
{
    int n = 0, cap = list_len(targets) + 8;
    TargetEntry *t = ARENA_ARRAY(an->a, TargetEntry, cap);
    for (int i = 0; i < list_len(targets); i++) {
        ResTarget *rt = list_nth(targets, i);
        ColumnRef *cr = IS_A(rt->val, ColumnRef) ? (ColumnRef *)rt->val : NULL;
        int nn = cr ? list_len(cr->names) : 0;
        if (cr != NULL && strcmp(list_nth(cr->names, nn - 1), "*") == 0) {
            if (nn > 2)
                return sl_error_at(an->err, ERRCODE_SYNTAX_ERROR, rt->hdr.location,
                                   "improper qualified name (too many dotted names)");
            int *cols, ncols;
            if (an_expand_star(an, nn == 2 ? list_nth(cr->names, 0) : NULL, rt->hdr.location,
                               &cols, &ncols) < 0)
                return -1;
            if (n + ncols > cap) {
                cap = (n + ncols) * 2;
                TargetEntry *more = ARENA_ARRAY(an->a, TargetEntry, cap);
                memcpy(more, t, sizeof(TargetEntry) * (size_t)n);
                t = more;
            }
            for (int c = 0; c < ncols; c++) {
                /* the name the range gives the column (an alias renames it) */
                const char *name = an->scope->from->cols[cols[c]].name;
                for (int k = 0; k < list_len(an->scope->items); k++) {
                    const ScopeItem *it = list_nth(an->scope->items, k);
                    for (int m = 0; m < it->ncols; m++)
                        if (it->colidx[m] == cols[c] && (nn == 1 ? it->cols_visible
                                                                 : it->rel_visible))
                            name = it->colnames[m];
                }
                t[n++] = (TargetEntry){NULL, cols[c], name, rt->hdr.location};
            }
            continue;
        }
        if (n == cap) {
            cap *= 2;
            TargetEntry *more = ARENA_ARRAY(an->a, TargetEntry, cap);
            memcpy(more, t, sizeof(TargetEntry) * (size_t)n);
            t = more;
        }
        const char *name = "?column?";
        if (rt->name != NULL)
            name = rt->name;
        else
            an_figure_colname(rt->val, &name);
        t[n++] = (TargetEntry){rt->val, -1, name, rt->hdr.location};
    }
    if (check_targets(an, n, n > MAX_TARGETS ? t[MAX_TARGETS].loc : 0) < 0)
        return -1;
    *out = t;
    *nout = n;
    return 0;
}

static Expr *target_expr(Analyze *an, const TargetEntry *t)
{
    if (t->raw == NULL)
        return an_column_expr(an, an->scope->from, t->star_col, t->loc);
    return an_transform(an, t->raw);
}

int an_target_list(Analyze *an, List *targets, Expr ***exprs, const char ***names, int *n)
{
    TargetEntry *t;
    int nt;
    if (expand_targets(an, targets, &t, &nt) < 0)
        return -1;
    *exprs = ARENA_ARRAY(an->a, Expr *, nt ? nt : 1);
    *names = ARENA_ARRAY(an->a, const char *, nt ? nt : 1);
    for (int i = 0; i < nt; i++) {
        Expr *e = target_expr(an, &t[i]);
        if (e == NULL)
            return -1;
        if (e->type.id == TYPE_UNKNOWN &&
            (e = an_coerce(an, e, sl_type(TYPE_TEXT), COERCE_IMPLICIT, e->location)) == NULL)
            return -1;
        (*exprs)[i] = e;
        (*names)[i] = t[i].name;
    }
    *n = nt;
    return 0;
}

static bool is_int_const(Node *n)
{
    return IS_A(n, A_Const) && ((A_Const *)n)->kind == CONST_INTEGER;
}

static bool is_other_const(Node *n)
{
    return IS_A(n, A_Const) && ((A_Const *)n)->kind != CONST_INTEGER;
}

static long const_position(Node *n)
{
    const char *txt = ((A_Const *)n)->text;
    return strlen(txt) > 9 ? (txt[0] == '-' ? -1 : 1000000000L) : strtol(txt, NULL, 10);
}

/* ------------------------------------------------------------ GROUP BY */

/* Does an unqualified name denote a column of the FROM clause? */
static bool is_input_column(Analyze *an, const char *name)
{
    Scope *s = an->scope;
    for (int i = 0; i < list_len(s->items); i++) {
        const ScopeItem *it = list_nth(s->items, i);
        if (!it->cols_visible)
            continue;
        for (int c = 0; c < it->ncols; c++)
            if (strcmp(it->colnames[c], name) == 0)
                return true;
    }
    return false;
}

/* The select list GROUP BY items may name by position or output name. */
typedef struct GroupTargets {
    const TargetEntry *t;
    int                nt;
} GroupTargets;

/* One GROUP BY expression as written -> the expression it groups by
 * (an_group_expr_fn). */
static Expr *group_expr(Analyze *an, Node *item, void *arg)
{
    const GroupTargets *gt = arg;
    const TargetEntry *t = gt->t;
    int nt = gt->nt;
    if (is_int_const(item)) {
        long pos = const_position(item);
        if (pos < 1 || pos > nt) {
            sl_error_at(an->err, ERRCODE_INVALID_COLUMN_REFERENCE, item->location,
                        "GROUP BY position %ld is not in select list", pos);
            return NULL;
        }
        return target_expr(an, &t[pos - 1]);
    }
    if (is_other_const(item)) {
        sl_error_at(an->err, ERRCODE_SYNTAX_ERROR, item->location,
                    "non-integer constant in GROUP BY");
        return NULL;
    }
    if (IS_A(item, ColumnRef) && list_len(((ColumnRef *)item)->names) == 1 &&
        !is_input_column(an, list_nth(((ColumnRef *)item)->names, 0))) {
        const char *name = list_nth(((ColumnRef *)item)->names, 0);
        int found = -1;
        for (int k = 0; k < nt; k++) {
            if (strcmp(t[k].name, name) != 0)
                continue;
            if (found >= 0) {
                sl_error_at(an->err, ERRCODE_AMBIGUOUS_COLUMN, item->location,
                            "GROUP BY \"%s\" is ambiguous", name);
                return NULL;
            }
            found = k;
        }
        return found >= 0 ? target_expr(an, &t[found]) : an_transform(an, item);
    }
    return an_transform(an, item);
}

/* GROUP BY: the Aggregate's groups (and its window), the distinct
 * expressions in collect->groups, and with GROUPING SETS, ROLLUP or CUBE
 * anywhere in it the sets (collect->sets). */
static int group_by(Analyze *an, List *items, const TargetEntry *t, int nt, Plan *agg,
                    AggCollect *collect)
{
    const char *saved = an->agg_refusal;
    an->agg_refusal = "GROUP BY";
    int n = list_len(items);
    int rc = -1;
    GroupTargets gt = {t, nt};
    bool sets = false;
    for (int i = 0; i < n; i++)
        sets |= IS_A(list_nth(items, i), GroupingSet);
    List *plain = NULL;
    for (int i = 0; i < n; i++) {
        Node *item = list_nth(items, i);
        if (IS_A(item, FuncCall) && ((FuncCall *)item)->qual == NULL &&
            (strcmp(((FuncCall *)item)->name, "window") == 0 ||
             strcmp(((FuncCall *)item)->name, "session") == 0)) {
            if (sets) {
                sl_error_at(an->err, ERRCODE_FEATURE_NOT_SUPPORTED, item->location,
                            "WINDOW and SESSION cannot be combined with GROUPING SETS, ROLLUP "
                            "or CUBE");
                goto out;
            }
            if (agg->u.agg.window.kind != WINDOW_NONE) {
                sl_error_at(an->err, ERRCODE_WINDOWING_ERROR, item->location,
                            "only one WINDOW or SESSION is allowed in GROUP BY");
                goto out;
            }
            if (an_window_spec(an, (FuncCall *)item, &agg->u.agg.window) < 0)
                goto out;
            continue;
        }
        plain = list_append(an->a, plain, item);
    }
    if (sets) {
        if (an_grouping_sets(an, plain, group_expr, &gt, &collect->groups, &collect->sets) < 0)
            goto out;
    } else {
        for (int i = 0; i < list_len(plain); i++) {
            Expr *e = group_expr(an, list_nth(plain, i), &gt);
            if (e == NULL)
                goto out;
            an_group_add(an, &collect->groups, e);
        }
    }
    agg->u.agg.groups = collect->groups.exprs;
    agg->u.agg.ngroups = collect->groups.n;
    rc = 0;
out:
    an->agg_refusal = saved;
    return rc;
}

/* ------------------------------------------------------------ ORDER BY */

void an_sort_dir(const SortBy *sb, SortSpec *sp)
{
    sp->desc = sb->dir == SORT_DESC;
    sp->nulls_first = sb->nulls == NULLS_DEFAULT ? sp->desc : sb->nulls == NULLS_FIRST;
}

/* An ORDER BY (or DISTINCT ON) item of a plain SELECT: a position, an
 * output name, or an expression (then a hidden column unless a target
 * computes it).  exprs/names grow with hidden columns. */
static int resolve_sort_item(Analyze *an, Node *n, const TargetEntry *t, int nt, Expr ***exprs,
                             const char ***names, int *ncols, const char *clause)
{
    if (is_int_const(n)) {
        long pos = const_position(n);
        if (pos < 1 || pos > nt)
            return sl_error_at(an->err, ERRCODE_INVALID_COLUMN_REFERENCE, n->location,
                               "%s position %ld is not in select list", clause, pos);
        return (int)pos - 1;
    }
    if (is_other_const(n))
        return sl_error_at(an->err, ERRCODE_SYNTAX_ERROR, n->location,
                           "non-integer constant in %s", clause);
    if (IS_A(n, ColumnRef) && list_len(((ColumnRef *)n)->names) == 1) {
        const char *name = list_nth(((ColumnRef *)n)->names, 0);
        int found = -1;
        for (int k = 0; k < nt; k++) {
            if (strcmp(t[k].name, name) != 0)
                continue;
            if (found >= 0 && !plan_expr_equal((*exprs)[found], (*exprs)[k]))
                return sl_error_at(an->err, ERRCODE_AMBIGUOUS_COLUMN, n->location,
                                   "%s \"%s\" is ambiguous", clause, name);
            if (found < 0)
                found = k;
        }
        if (found >= 0)
            return found;
    }
    Expr *e = an_transform(an, n);
    if (e == NULL)
        return -1;
    for (int k = 0; k < *ncols; k++)
        if (plan_expr_equal((*exprs)[k], e))
            return k;
    if (e->type.id == TYPE_UNKNOWN &&
        (e = an_coerce(an, e, sl_type(TYPE_TEXT), COERCE_IMPLICIT, e->location)) == NULL)
        return -1;
    Expr **ne = ARENA_ARRAY(an->a, Expr *, *ncols + 1);
    const char **nn = ARENA_ARRAY(an->a, const char *, *ncols + 1);
    memcpy(ne, *exprs, sizeof(Expr *) * (size_t)*ncols);
    memcpy(nn, *names, sizeof(const char *) * (size_t)*ncols);
    ne[*ncols] = e;
    const char *hidden = "?column?";
    an_figure_colname(n, &hidden);
    nn[*ncols] = hidden;
    *exprs = ne;
    *names = nn;
    return (*ncols)++;
}

Plan *an_sort_plan(Analyze *an, Plan *child, const SortSpec *specs, int n)
{
    Plan *s = plan_new(an->a, PLAN_SORT, child, child->ncols);
    for (int c = 0; c < child->ncols; c++)
        plan_set_col(s, c, child->cols[c].name, child->cols[c].type, child->quals[c]);
    s->u.sort.nkeys = n;
    s->u.sort.keys = ARENA_ARRAY(an->a, SortKey, n ? n : 1);
    for (int i = 0; i < n; i++)
        s->u.sort.keys[i] = (SortKey){specs[i].col, specs[i].desc, specs[i].nulls_first};
    return s;
}

static Plan *copy_cols(Analyze *an, PlanKind kind, Plan *child)
{
    Plan *p = plan_new(an->a, kind, child, child->ncols);
    for (int c = 0; c < child->ncols; c++)
        plan_set_col(p, c, child->cols[c].name, child->cols[c].type, child->quals[c]);
    return p;
}

/* LIMIT / OFFSET: an expression of no column of its query (parent's, an
 * enclosing query's, are outer values), as bigint. */
static Expr *limit_expr(Analyze *an, Node *n, const char *what, Scope *parent)
{
    if (n == NULL)
        return NULL;
    Scope *saved = an->scope;
    AggCollect *saved_agg = an->agg;
    const char *saved_ref = an->agg_refusal;
    Scope none = {.parent = parent};
    an->scope = &none;
    an->agg = NULL;
    an->agg_refusal = what;
    Expr *e = an_transform(an, n);
    an->scope = saved;
    an->agg = saved_agg;
    an->agg_refusal = saved_ref;
    if (e == NULL)
        return NULL;
    /* an assignment cast, as PostgreSQL's coerce_to_specific_type */
    if (e->type.id != TYPE_INT8 && e->type.id != TYPE_UNKNOWN &&
        type_category(e->type.id) != 'N') {
        sl_error_at(an->err, ERRCODE_DATATYPE_MISMATCH, e->location,
                    "argument of %s must be type %s, not type %s", what, "bigint",
                    type_name(e->type.id));
        return NULL;
    }
    return an_coerce(an, e, sl_type(TYPE_INT8), COERCE_EXPLICIT, e->location);
}

static Plan *limit_plan(Analyze *an, Plan *child, Node *limit, Node *offset, Scope *parent)
{
    if (limit == NULL && offset == NULL)
        return child;
    Plan *p = copy_cols(an, PLAN_LIMIT, child);
    if (limit != NULL && (p->u.limit.count = limit_expr(an, limit, "LIMIT", parent)) == NULL)
        return NULL;
    if (offset != NULL &&
        (p->u.limit.offset = limit_expr(an, offset, "OFFSET", parent)) == NULL)
        return NULL;
    return p;
}

/* ORDER BY / LIMIT over the output of a set operation or VALUES: only
 * output names and positions. */
static Plan *sort_by_output(Analyze *an, Plan *p, SelectStmt *s, Scope *parent)
{
    int n = list_len(s->sort);
    if (n > 0) {
        SortSpec *specs = ARENA_ARRAY(an->a, SortSpec, n);
        for (int i = 0; i < n; i++) {
            SortBy *sb = list_nth(s->sort, i);
            Node *e = sb->node;
            int col = -1;
            if (is_int_const(e)) {
                long pos = const_position(e);
                if (pos < 1 || pos > p->ncols) {
                    sl_error_at(an->err, ERRCODE_INVALID_COLUMN_REFERENCE, e->location,
                                "ORDER BY position %ld is not in select list", pos);
                    return NULL;
                }
                col = (int)pos - 1;
            } else if (IS_A(e, ColumnRef) && list_len(((ColumnRef *)e)->names) == 1) {
                const char *name = list_nth(((ColumnRef *)e)->names, 0);
                for (int c = 0; c < p->ncols && col < 0; c++)
                    if (strcmp(p->cols[c].name, name) == 0)
                        col = c;
                if (col < 0) {
                    sl_error_at(an->err, ERRCODE_UNDEFINED_COLUMN, e->location,
                                "column \"%s\" does not exist", name);
                    return NULL;
                }
            } else {
                sl_error_at(an->err, ERRCODE_FEATURE_NOT_SUPPORTED, e->location,
                            "invalid UNION/INTERSECT/EXCEPT ORDER BY clause");
                sl_error_detail(an->err, "Only result column names can be used, not "
                                         "expressions or functions.");
                sl_error_hint(an->err, "Add the expression/function to every SELECT, or move "
                                       "the UNION into a FROM clause.");
                return NULL;
            }
            specs[i].col = col;
            an_sort_dir(sb, &specs[i]);
        }
        p = an_sort_plan(an, p, specs, n);
    }
    return limit_plan(an, p, s->limit, s->offset, parent);
}

/* ---------------------------------------------------------- plain SELECT */

static Plan *simple_select(Analyze *an, SelectStmt *s, Scope *parent, bool arm)
{
    Scope scope = {.parent = parent};
    Scope *saved_scope = an->scope;
    AggCollect *saved_agg = an->agg;
    const char *saved_ref = an->agg_refusal;
    AggCollect collect = {0};
    AnWindows *saved_win = an->win;
    bool saved_srf_ok = an->srf_ok;
    const char *saved_srf_refusal = an->srf_refusal;
    an->scope = &scope;
    an->agg = NULL;
    an->agg_refusal = NULL;
    an->win = NULL;
    an->srf_ok = false;
    an->srf_refusal = NULL;
    Plan *result = NULL;

    if (s->from != NULL) {
        if (an_from_clause(an, s->from, &scope) < 0)
            goto out;
    } else {
        /* one row of no columns */
        scope.from = plan_new(an->a, PLAN_VALUES, NULL, 0);
        scope.from->u.values.nrows = 1;
        scope.from->u.values.rows = ARENA_ARRAY(an->a, Expr **, 1);
        scope.from->u.values.rows[0] = NULL;
    }
    Plan *base = scope.from;
    if (s->where != NULL) {
        an->agg_refusal = "WHERE";
        Expr *w = an_to_boolean(an, an_transform(an, s->where), "WHERE");
        an->agg_refusal = NULL;
        if (w == NULL)
            goto out;
        base = plan_push_filter(an->a, base, w);
    }

    TargetEntry *t;
    int nt;
    if (expand_targets(an, s->targets, &t, &nt) < 0)
        goto out;
    /* window calls stack Window nodes on win.base (analyze_window.c) */
    AnWindows win = {.base = base};
    an->win = &win;
    if (s->windows != NULL && an_window_clause(an, s->windows) < 0)
        goto out;
    win.refusal = "GROUP BY";

    /* GROUP BY first: it decides whether window_start/window_end exist */
    Plan *agg = plan_new(an->a, PLAN_AGG, base, 0);
    if (s->group_by != NULL && group_by(an, s->group_by, t, nt, agg, &collect) < 0)
        goto out;
    win.refusal = NULL;
    if (agg->u.agg.window.kind != WINDOW_NONE) {
        scope.has_window = true;
        scope.window_type = agg->u.agg.window.time->type;
        scope.window_type.typmod = -1;
    }

    /* the select list, HAVING and ORDER BY, collecting aggregates; the
     * select list and ORDER BY may call set-returning functions */
    an->agg = &collect;
    int ncols = nt;
    Expr **exprs = ARENA_ARRAY(an->a, Expr *, nt ? nt : 1);
    const char **names = ARENA_ARRAY(an->a, const char *, nt ? nt : 1);
    an->srf_ok = true;
    for (int i = 0; i < nt; i++) {
        if ((exprs[i] = target_expr(an, &t[i])) == NULL)
            goto out;
        if (exprs[i]->type.id == TYPE_UNKNOWN && !arm &&
            (exprs[i] = an_coerce(an, exprs[i], sl_type(TYPE_TEXT), COERCE_IMPLICIT,
                                  exprs[i]->location)) == NULL)
            goto out;
        names[i] = t[i].name;
    }
    Expr *having = NULL;
    an->srf_ok = false;
    win.refusal = "HAVING";
    if (s->having != NULL &&
        (having = an_to_boolean(an, an_transform(an, s->having), "HAVING")) == NULL)
        goto out;
    win.refusal = NULL;
    an->srf_ok = true;
    int nsort = list_len(s->sort), non = list_len(s->distinct_on);
    SortSpec *specs = ARENA_ARRAY(an->a, SortSpec, nsort + non + 1);
    int *on_cols = ARENA_ARRAY(an->a, int, non + 1);
    for (int i = 0; i < non; i++) {
        int col = resolve_sort_item(an, list_nth(s->distinct_on, i), t, nt, &exprs, &names,
                                    &ncols, "SELECT DISTINCT ON");
        if (col < 0)
            goto out;
        on_cols[i] = col;
    }
    for (int i = 0; i < nsort; i++) {
        SortBy *sb = list_nth(s->sort, i);
        int col = resolve_sort_item(an, sb->node, t, nt, &exprs, &names, &ncols, "ORDER BY");
        if (col < 0)
            goto out;
        if (s->distinct && s->distinct_on == NULL && col >= nt) {
            sl_error_at(an->err, ERRCODE_INVALID_COLUMN_REFERENCE, sb->node->location,
                        "for SELECT DISTINCT, ORDER BY expressions must appear in select list");
            goto out;
        }
        specs[i].col = col;
        an_sort_dir(sb, &specs[i]);
    }
    if (non > 0) {
        /* the DISTINCT ON keys lead the sort */
        for (int i = 0; i < non && i < nsort; i++) {
            if (specs[i].col != on_cols[i]) {
                bool found = false;
                for (int k = 0; k < non; k++)
                    found |= specs[i].col == on_cols[k];
                if (!found) {
                    SortBy *sb = list_nth(s->sort, i);
                    sl_error_at(an->err, ERRCODE_INVALID_COLUMN_REFERENCE, sb->node->location,
                                "SELECT DISTINCT ON expressions must match initial ORDER BY "
                                "expressions");
                    goto out;
                }
            }
        }
        if (nsort < non) {
            for (int i = 0; i < non; i++) {
                bool found = false;
                for (int k = 0; k < nsort; k++)
                    found |= specs[k].col == on_cols[i];
                if (!found) {
                    specs[nsort].col = on_cols[i];
                    specs[nsort].desc = false;
                    specs[nsort].nulls_first = false;
                    nsort++;
                }
            }
        }
    }
    an->agg = NULL;
    an->srf_ok = false;

    /* the aggregate, when there is one */
    Plan *top = win.base;
    if (win.n > 0 && (s->group_by != NULL || s->having != NULL || collect.n > 0)) {
        sl_error_at(an->err, ERRCODE_FEATURE_NOT_SUPPORTED, s->hdr.location,
                    "window functions with GROUP BY or aggregates are not supported yet");
        goto out;
    }
    if (s->group_by != NULL || s->having != NULL || collect.n > 0) {
        Expr **check = ARENA_ARRAY(an->a, Expr *, ncols + 1);
        memcpy(check, exprs, sizeof(Expr *) * (size_t)ncols);
        check[ncols] = having;
        if (an_agg_finish(an, agg, &scope, check, ncols + 1, &collect) < 0)
            goto out;
        for (int i = 0; i < ncols; i++)
            if ((exprs[i] = an_agg_rewrite(an, exprs[i], agg, &collect, &scope)) == NULL)
                goto out;
        top = collect.sets != NULL ? an_grouping_plan(an, agg, &collect) : agg;
        if (having != NULL) {
            if ((having = an_agg_rewrite(an, having, agg, &collect, &scope)) == NULL)
                goto out;
            top = copy_cols(an, PLAN_FILTER, top);
            top->u.filter.cond = having;
        }
    }
    top = an_project(an, an_project_set(an, top, exprs, ncols), exprs, names, ncols);
    if (s->distinct && s->distinct_on == NULL) {
        Plan *d = copy_cols(an, PLAN_DISTINCT, top);
        d->u.distinct.nkeys = nt;
        d->u.distinct.keys = ARENA_ARRAY(an->a, int, nt ? nt : 1);
        for (int i = 0; i < nt; i++)
            d->u.distinct.keys[i] = i;
        top = d;
    }
    if (nsort > 0)
        top = an_sort_plan(an, top, specs, nsort);
    if (non > 0) {
        Plan *d = copy_cols(an, PLAN_DISTINCT, top);
        d->u.distinct.nkeys = non;
        d->u.distinct.keys = on_cols;
        top = d;
    }
    if ((top = limit_plan(an, top, s->limit, s->offset, parent)) == NULL)
        goto out;
    if (ncols > nt) {
        /* drop the hidden ORDER BY columns */
        Expr **keep = ARENA_ARRAY(an->a, Expr *, nt ? nt : 1);
        for (int i = 0; i < nt; i++)
            keep[i] = an_column_expr(an, top, i, -1);
        top = an_project(an, top, keep, names, nt);
    }
    result = top;
out:
    an->scope = saved_scope;
    an->agg = saved_agg;
    an->agg_refusal = saved_ref;
    an->win = saved_win;
    an->srf_ok = saved_srf_ok;
    an->srf_refusal = saved_srf_refusal;
    return result;
}

/* ---------------------------------------------------------------- VALUES */

static Plan *values_plan(Analyze *an, SelectStmt *s, Scope *parent)
{
    Scope scope = {.parent = parent};
    Scope *saved_scope = an->scope;
    AggCollect *saved_agg = an->agg;
    const char *saved_ref = an->agg_refusal;
    an->scope = &scope;
    an->agg = NULL;
    an->agg_refusal = "VALUES";
    Plan *p = NULL;
    int nrows = list_len(s->values);
    int ncols = list_len(list_nth(s->values, 0));
    if (ncols > MAX_TARGETS) {
        check_targets(an, ncols,
                      ((Node *)list_nth(list_nth(s->values, 0), MAX_TARGETS))->location);
        goto out;
    }
    Expr ***rows = ARENA_ARRAY(an->a, Expr **, nrows);
    for (int r = 0; r < nrows; r++) {
        List *row = list_nth(s->values, r);
        if (list_len(row) != ncols) {
            sl_error_at(an->err, ERRCODE_SYNTAX_ERROR, ((Node *)list_nth(row, 0))->location,
                        "VALUES lists must all be the same length");
            goto out;
        }
        rows[r] = ARENA_ARRAY(an->a, Expr *, ncols ? ncols : 1);
        for (int c = 0; c < ncols; c++)
            if ((rows[r][c] = an_transform(an, list_nth(row, c))) == NULL)
                goto out;
    }
    p = plan_new(an->a, PLAN_VALUES, NULL, ncols);
    Expr **column = ARENA_ARRAY(an->a, Expr *, nrows);
    for (int c = 0; c < ncols; c++) {
        for (int r = 0; r < nrows; r++)
            column[r] = rows[r][c];
        SlType t;
        if (!an_common_type(an, column, nrows, "VALUES", &t)) {
            p = NULL;
            goto out;
        }
        for (int r = 0; r < nrows; r++)
            rows[r][c] = column[r];
        plan_set_col(p, c, arena_printf(an->a, "column%d", c + 1), t, NULL);
    }
    p->u.values.nrows = nrows;
    p->u.values.rows = rows;
out:
    an->scope = saved_scope;
    an->agg = saved_agg;
    an->agg_refusal = saved_ref;
    return p;
}

/* -------------------------------------------------------- set operations */

/* t without its modifier (an array keeps its element type). */
static SlType unmodified(SlType t)
{
    t.typmod = -1;
    return t;
}

Plan *an_coerce_plan(Analyze *an, Plan *p, const SlType *types, const char *what)
{
    bool same = true;
    for (int c = 0; c < p->ncols; c++)
        same &= type_same(p->cols[c].type, types[c]);
    if (same)
        return p;
    if (p->kind == PLAN_PROJECT || p->kind == PLAN_VALUES) {
        /* cast the expressions themselves, so literals are typed directly */
        int nrows = p->kind == PLAN_VALUES ? p->u.values.nrows : 1;
        for (int r = 0; r < nrows; r++) {
            Expr **ex = p->kind == PLAN_VALUES ? p->u.values.rows[r] : p->u.project.exprs;
            for (int c = 0; c < p->ncols; c++) {
                if (type_same(ex[c]->type, types[c]))
                    continue;
                if (!ex_can_coerce(ex[c]->type.id, types[c].id))
                    goto wrap;
                Expr *e = an_coerce(an, ex[c], unmodified(types[c]), COERCE_IMPLICIT,
                                    ex[c]->location);
                if (e == NULL)
                    return NULL;
                ex[c] = e;
            }
        }
        for (int c = 0; c < p->ncols; c++)
            p->cols[c].type = unmodified(types[c]);
        return p;
    }
wrap:;
    Expr **exprs = ARENA_ARRAY(an->a, Expr *, p->ncols ? p->ncols : 1);
    const char **names = ARENA_ARRAY(an->a, const char *, p->ncols ? p->ncols : 1);
    for (int c = 0; c < p->ncols; c++) {
        Expr *e = an_column_expr(an, p, c, -1);
        if (!type_same(e->type, types[c]) &&
            (e = an_coerce(an, e, unmodified(types[c]), COERCE_IMPLICIT, -1)) == NULL) {
            char b1[64];
            sl_error_clear(an->err);
            sl_error(an->err, ERRCODE_CANNOT_COERCE, "%s could not convert type %s to %s", what,
                     type_name(p->cols[c].type.id), type_format(types[c], b1, sizeof(b1)));
            return NULL;
        }
        exprs[c] = e;
        names[c] = p->cols[c].name;
    }
    return an_project(an, p, exprs, names, p->ncols);
}

int an_setop_types(Analyze *an, const char *what, const Plan *l, const Plan *r, int loc,
                   SlType *types)
{
    for (int c = 0; c < l->ncols; c++) {
        SlTypeId a = l->cols[c].type.id, b = r->cols[c].type.id;
        SlTypeId t = a;
        if (a == TYPE_UNKNOWN)
            t = b;
        else if (b != TYPE_UNKNOWN && a != b) {
            if (type_category(a) != type_category(b)) {
                char b1[96], b2[96];
                sl_error_at(an->err, ERRCODE_DATATYPE_MISMATCH, loc,
                            "%s types %s and %s cannot be matched", what,
                            type_display(l->cols[c].type, b1, sizeof(b1)),
                            type_display(r->cols[c].type, b2, sizeof(b2)));
                return -1;
            }
            if (!type_is_preferred(a) && ex_can_coerce(a, b) && !ex_can_coerce(b, a))
                t = b;
        }
        if (t == TYPE_UNKNOWN)
            t = TYPE_TEXT;
        types[c] = sl_type(t);
        if (t == TYPE_ARRAY) {
            /* arrays: the element types' common type */
            SlType la = l->cols[c].type, ra = r->cols[c].type;
            SlTypeId le = a == TYPE_ARRAY ? la.elem : ra.elem, re = b == TYPE_ARRAY ? ra.elem : le;
            SlTypeId et = le;
            if (le != re && ex_can_coerce(le, re) && !ex_can_coerce(re, le))
                et = re;
            else if (le != re && !ex_can_coerce(re, le)) {
                char b1[96], b2[96];
                sl_error_at(an->err, ERRCODE_DATATYPE_MISMATCH, loc,
                            "%s types %s and %s cannot be matched", what,
                            type_format(la, b1, sizeof(b1)), type_format(ra, b2, sizeof(b2)));
                return -1;
            }
            types[c] = sl_array_type(et, -1);
        }
        if (type_same(l->cols[c].type, types[c]) && type_same(r->cols[c].type, types[c]) &&
            l->cols[c].type.typmod == r->cols[c].type.typmod)
            types[c].typmod = l->cols[c].type.typmod;
    }
    return 0;
}

Plan *an_select_arm(Analyze *an, SelectStmt *s, Scope *parent)
{
    return select_arm(an, s, parent, true);
}

static Plan *setop_plan(Analyze *an, SelectStmt *s, Scope *parent)
{
    static const char *const opnames[] = {"", "UNION", "INTERSECT", "EXCEPT"};
    const char *what = opnames[s->op];
    /* where a recursive reference may not be (analyze_from.c's
     * cte_self_ref): both arms of INTERSECT ALL and EXCEPT ALL, the right
     * arm of EXCEPT */
    bool intersect = s->op == SETOP_INTERSECT && s->all;
    bool except_l = s->op == SETOP_EXCEPT && s->all, except_r = s->op == SETOP_EXCEPT;
    an->rec_intersect += intersect;
    an->rec_except += except_l;
    Plan *l = select_arm(an, s->larg, parent, true);
    an->rec_except += except_r - except_l;
    Plan *r = l ? select_arm(an, s->rarg, parent, true) : NULL;
    an->rec_intersect -= intersect;
    an->rec_except -= except_r;
    if (r == NULL)
        return NULL;
    if (l->ncols != r->ncols) {
        /* PostgreSQL points at the right query's first column */
        int loc = s->rarg->hdr.location;
        if (s->rarg->op == SETOP_NONE && s->rarg->targets != NULL)
            loc = ((Node *)list_nth(s->rarg->targets, 0))->location;
        else if (s->rarg->op == SETOP_NONE && s->rarg->values != NULL)
            loc = ((Node *)list_nth(list_nth(s->rarg->values, 0), 0))->location;
        sl_error_at(an->err, ERRCODE_SYNTAX_ERROR, loc,
                    "each %s query must have the same number of columns", what);
        return NULL;
    }
    int n = l->ncols;
    SlType *types = ARENA_ARRAY(an->a, SlType, n ? n : 1);
    if (an_setop_types(an, what, l, r, s->rarg->hdr.location, types) < 0)
        return NULL;
    if ((l = an_coerce_plan(an, l, types, what)) == NULL ||
        (r = an_coerce_plan(an, r, types, what)) == NULL)
        return NULL;
    Plan *p = plan_new(an->a, PLAN_SETOP, l, n);
    p->right = r;
    p->u.setop.op = s->op;
    p->u.setop.all = s->all;
    for (int c = 0; c < n; c++)
        plan_set_col(p, c, l->cols[c].name, types[c], NULL);
    return p;
}

/* ------------------------------------------------------------- entry */

int an_push_ctes(Analyze *an, SelectStmt *s, CteScope *cs, Scope *outer)
{
    int n = list_len(s->with);
    cs->parent = an->ctes;
    cs->n = n;
    cs->recursive = s->recursive;
    cs->outer = outer;
    cs->defs = ARENA_ARRAY(an->a, CteDef, n ? n : 1);
    for (int i = 0; i < n; i++) {
        CommonTableExpr *c = list_nth(s->with, i);
        for (int k = 0; k < i; k++)
            if (strcmp(cs->defs[k].name, c->name) == 0)
                return sl_error_at(an->err, ERRCODE_DUPLICATE_ALIAS, c->hdr.location,
                                   "WITH query name \"%s\" specified more than once", c->name);
        if (c->search_cycle_loc >= 0)
            return sl_error_at(an->err, ERRCODE_FEATURE_NOT_SUPPORTED, c->search_cycle_loc,
                               "SEARCH and CYCLE clauses of WITH queries are not supported yet");
        cs->defs[i] = (CteDef){.name = c->name, .cte = c};
    }
    an->ctes = cs;
    return 0;
}

static Plan *select_arm(Analyze *an, SelectStmt *s, Scope *parent, bool arm)
{
    if (++an->depth > 200) {
        an->depth--;
        sl_error_at(an->err, ERRCODE_STATEMENT_TOO_COMPLEX, s->hdr.location,
                    "stack depth limit exceeded");
        return NULL;
    }
    CteScope cs;
    CteScope *saved = an->ctes;
    Plan *p = NULL;
    if (s->with != NULL && an_push_ctes(an, s, &cs, parent) < 0)
        goto out;
    if (s->op != SETOP_NONE) {
        if ((p = setop_plan(an, s, parent)) != NULL)
            p = sort_by_output(an, p, s, parent);
    } else if (s->values != NULL) {
        if ((p = values_plan(an, s, parent)) != NULL)
            p = sort_by_output(an, p, s, parent);
    } else {
        p = simple_select(an, s, parent, arm);
    }
    if (p != NULL && !arm) {
        /* outputs still unknown (a set operation of literals) become text */
        bool unknown = false;
        for (int c = 0; c < p->ncols; c++)
            unknown |= p->cols[c].type.id == TYPE_UNKNOWN;
        if (unknown) {
            SlType *types = ARENA_ARRAY(an->a, SlType, p->ncols);
            for (int c = 0; c < p->ncols; c++)
                types[c] = p->cols[c].type.id == TYPE_UNKNOWN ? sl_type(TYPE_TEXT)
                                                              : p->cols[c].type;
            p = an_coerce_plan(an, p, types, "SELECT");
        }
    }
out:
    an->ctes = saved;
    an->depth--;
    return p;
}

Plan *an_select(Analyze *an, SelectStmt *s, Scope *parent)
{
    return select_arm(an, s, parent, false);
}

int an_select_stmt(Analyze *an, SelectStmt *s, Query *q)
{
    Plan *p = an_select(an, s, NULL);
    if (p == NULL)
        return -1;
    q->kind = QUERY_SELECT;
    q->tag = "SELECT";
    q->plan = p;
    q->ntargets = p->ncols;
    q->names = ARENA_ARRAY(an->a, const char *, p->ncols ? p->ncols : 1);
    q->types = ARENA_ARRAY(an->a, SlType, p->ncols ? p->ncols : 1);
    for (int c = 0; c < p->ncols; c++) {
        q->names[c] = p->cols[c].name;
        q->types[c] = p->cols[c].type;
    }
    return 0;
}

/* ------------------------------------------------------------ subqueries */

static void reads(const Expr *e, bool *outer, bool *local)
{
    if (e == NULL)
        return;
    if (e->kind == EXPR_OUTER)
        *outer = true;
    else if (e->kind == EXPR_COLUMN)
        *local = true;
    else if (e->kind == EXPR_SUBPLAN && e->subplan != NULL)
        *local = true;      /* a correlated subquery: its own reads aside */
    for (int i = 0; i < e->nargs; i++)
        reads(e->args[i], outer, local);
}

bool an_reads_outer_only(Expr *const *args, int n)
{
    bool outer = false, local = false;
    for (int i = 0; i < n; i++)
        reads(args[i], &outer, &local);
    return outer && !local;
}

Expr *an_sublink(Analyze *an, SubLink *s)
{
    int loc = s->hdr.location;
    bool quant = s->type == SUBLINK_IN || s->type == SUBLINK_ALL;
    const char *op = s->op ? s->op : "=";
    Expr *test = NULL;
    if (quant && (test = an_transform(an, s->testexpr)) == NULL)
        return NULL;
    /* the subquery is a query level of its own, inside this one */
    AggCollect *saved_agg = an->agg;
    const char *saved_ref = an->agg_refusal;
    an->agg = NULL;
    an->agg_refusal = NULL;
    Corr frame = {an->scope, NULL, an->corr};
    an->corr = &frame;
    an->sublinks++;
    Plan *p = an_select(an, s->subselect, an->scope);
    an->sublinks--;
    an->corr = frame.up;
    an->agg = saved_agg;
    an->agg_refusal = saved_ref;
    if (p == NULL)
        return NULL;
    if (s->type != SUBLINK_EXISTS && p->ncols != 1) {
        sl_error_at(an->err, ERRCODE_SYNTAX_ERROR, loc,
                    quant && p->ncols > 1 ? "subquery has too many columns"
                                          : "subquery must return only one column");
        return NULL;
    }
    if (s->type == SUBLINK_ARRAY && p->cols[0].type.id == TYPE_ARRAY) {
        sl_error_at(an->err, ERRCODE_FEATURE_NOT_SUPPORTED, loc,
                    "multidimensional arrays are not supported yet");
        return NULL;
    }
    /* x op ANY / ALL: the operator over x and the column, which is cast to
     * what the operator reads */
    const FuncDesc *fd = NULL;
    if (quant) {
        Expr *probe = an_mk(an, EXPR_COLUMN, p->cols[0].type, loc, 0, NULL);
        Expr *args[2] = {test, probe};
        if ((fd = an_resolve(an, op, true, args, 2, loc)) == NULL)
            return NULL;
        test = args[0];     /* arrays: typed by an_resolve */
        if (fd->ret != TYPE_BOOL) {
            sl_error_at(an->err, ERRCODE_DATATYPE_MISMATCH, loc,
                        "operator %s must return type boolean, not type %s", op,
                        type_name(fd->ret));
            return NULL;
        }
        if ((test = an_coerce(an, test, sl_type(fd->kargs[0]), COERCE_IMPLICIT,
                              test->location)) == NULL)
            return NULL;
        SlType want = fd->kargs[1] == TYPE_ARRAY ? args[1]->type : sl_type(fd->kargs[1]);
        if ((p = an_coerce_plan(an, p, &want, s->type == SUBLINK_ALL ? "ALL" : "IN")) == NULL)
            return NULL;
    }
    if (frame.exprs != NULL) {
        /* correlated: the plan runs per row, reading these outer values
         * (after x, for ANY / ALL) */
        int n = list_len(frame.exprs), off = quant ? 1 : 0;
        Expr **args = ARENA_ARRAY(an->a, Expr *, n + off);
        if (quant)
            args[0] = test;
        for (int k = 0; k < n; k++)
            args[off + k] = list_nth(frame.exprs, k);
        SlTypeId et = p->cols[0].type.id == TYPE_UNKNOWN ? TYPE_TEXT : p->cols[0].type.id;
        SlType t = s->type == SUBLINK_EXPR    ? p->cols[0].type
                   : s->type == SUBLINK_ARRAY ? sl_array_type(et, -1) : sl_type(TYPE_BOOL);
        Expr *e = an_mk(an, EXPR_SUBPLAN, t, loc, n + off, args);
        e->subkind = s->type;
        e->subplan = p;
        e->index = -1;
        e->fn = fd;
        e->negate = s->negate;
        an->ncorrelated++;
        return e;
    }
    InitPlan *ip = ARENA_NEW(an->a, InitPlan);
    ip->kind = s->type;
    Expr *e;
    if (s->type == SUBLINK_EXPR) {
        ip->type = p->cols[0].type;
        e = an_mk(an, EXPR_SUBPLAN, ip->type, loc, 0, NULL);
    } else if (s->type == SUBLINK_ARRAY) {
        /* the array of the values */
        ip->type = p->cols[0].type;
        e = an_mk(an, EXPR_SUBPLAN, sl_array_type(ip->type.id == TYPE_UNKNOWN ? TYPE_TEXT
                                                                           : ip->type.id, -1),
                  loc, 0, NULL);
    } else if (s->type == SUBLINK_EXISTS) {
        ip->type = sl_type(TYPE_BOOL);
        e = an_mk(an, EXPR_SUBPLAN, ip->type, loc, 0, NULL);
    } else {
        ip->type = p->cols[0].type;
        e = an_mk(an, EXPR_SUBPLAN, sl_type(TYPE_BOOL), loc, 1, &test);
        e->fn = fd;
        e->negate = s->negate;
    }
    ip->plan = p;
    e->subkind = s->type;
    e->index = list_len(an->init);
    an->init = list_append(an->a, an->init, ip);
    return e;
}
