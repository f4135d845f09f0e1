/*
 * analyze_from.c -- the FROM clause and the names it makes visible.
 *
 *   an_from_clause        FROM items -> the FROM plan and its Scope
 *   an_target_relation    the table of INSERT / UPDATE / DELETE
 *   an_lookup_relation    a relation by name (42P01), recorded as a dependency
 *   an_column_ref         a column name -> EXPR_COLUMN over the FROM output
 *   an_expand_star        the columns * and t.* stand for
 *
 * The FROM output is the concatenation of its items' columns (a comma list
 * is a cross join).  Name visibility is PostgreSQL's (parse_relation.c):
 * a range is reachable by its alias (or its name), and a JOIN makes one
 * range of its own whose columns are the USING columns merged, then the
 * other columns of both sides; the join's inputs stay reachable only with
 * a qualifier, and not at all when the join has an alias.  A name found
 * only in an enclosing query is a correlated reference: the subquery reads
 * it as an outer value (outer_ref), once per row of the enclosing query.
 * A missing column gets PostgreSQL's hint: the closest column name
 * (Levenshtein distance, at most half the name's length, plus the
 * distance between the qualifier and the range's name).
 *
 * WITH queries are expanded where they are referenced: each reference
 * analyzes the query again (PostgreSQL inlines a CTE used once; the result
 * is the same for queries without side effects), seeing the enclosing
 * queries of the query whose WITH clause has it; one that calls a volatile
 * function is analyzed once and read through CTE_SCAN nodes that share its
 * plan, so that it runs once (cte_plan).  In a WITH RECURSIVE
 * list, a query of the form `a UNION [ALL] b` whose b reads itself
 * (cte_plan) becomes a RECURSIVE node over a and b, b's reference a
 * WORKTABLE; the references PostgreSQL refuses are refused as it does
 * (cte_self_ref: 42P19, mutual recursion 0A000).
 *
 * LATERAL: a subquery marked so, and any function in FROM, may read the
 * ranges before it (the items to its left in a comma list, a join's left
 * side).  They are analyzed as a correlated subquery is, with those ranges
 * as the enclosing scope (a Corr frame); when they read any, the item is
 * joined by a LATERAL node whose args are the values read.
 */
#include "sql/analyze_int.h"
#include "sluice/functions.h"
#include "sluice/memacct.h"

#include <stdio.h>

/* A FROM item under construction: its plan, its ranges (colidx relative to
 * the plan's output), and the columns it shows as a whole (for * and for
 * an enclosing join's range). */
typedef struct FromItem {
    Plan        *plan;
    List        *items;         /* of ScopeItem * */
    int          nexposed;
    const char **exposed_names;
    int         *exposed_idx;
    /* a LATERAL item that reads the items before it: the values it reads,
     * over their FROM output (its plan's EXPR_OUTER 0, 1, ...) */
    List        *lateral_args;
} FromItem;

static int from_item(Analyze *an, Node *n, FromItem *out, Scope *lat);
static Expr *outer_ref(Analyze *an, Corr *f, Scope *s, int idx, int loc);

static ScopeItem *new_item(Analyze *an, const char *refname, int ncols)
{
    ScopeItem *it = ARENA_NEW(an->a, ScopeItem);
    it->refname = refname;
    it->rel_visible = refname != NULL;
    it->cols_visible = true;
    it->ncols = ncols;
    it->colnames = ARENA_ARRAY(an->a, const char *, ncols ? ncols : 1);
    it->colidx = ARENA_ARRAY(an->a, int, ncols ? ncols : 1);
    return it;
}

/* ----------------------------------------------------------- relations */

void an_add_dep(Analyze *an, const CatRelation *rel)
{
    for (int i = 0; i < list_len(an->deps); i++)
        if (list_nth(an->deps, i) == rel &&
            (uint32_t)(uintptr_t)list_nth(an->dep_as, i) == an->as_role)
            return;
    an->deps = list_append(an->a, an->deps, (void *)rel);
    an->dep_as = list_append(an->a, an->dep_as, (void *)(uintptr_t)an->as_role);
}

const CatRelation *an_lookup_relation(Analyze *an, const char *schema, const char *name,
                                      int loc, bool missing_ok)
{
    bool has_system = an->cat != NULL && an->cat->lookup_system != NULL;
    if (schema != NULL && strcmp(schema, "public") != 0) {
        if (strcmp(schema, "pg_catalog") != 0 && strcmp(schema, "information_schema") != 0 &&
            strcmp(schema, "sys") != 0) {
            sl_error_at(an->err, ERRCODE_INVALID_SCHEMA_NAME, loc,
                        "schema \"%s\" does not exist", schema);
            return NULL;
        }
        const CatRelation *rel =
            has_system ? an->cat->lookup_system(an->cat->system_ctx, schema, name) : NULL;
        if (rel != NULL)
            an->on_loop = true;     /* its rows are made from the loop's state */
        if (rel == NULL && !missing_ok)
            sl_error_at(an->err, ERRCODE_UNDEFINED_TABLE, loc,
                        "relation \"%s.%s\" does not exist", schema, name);
        return rel;
    }
    /* pg_catalog comes first on the search path, as in PostgreSQL */
    if (schema == NULL && has_system) {
        const CatRelation *rel = an->cat->lookup_system(an->cat->system_ctx, "pg_catalog", name);
        if (rel != NULL) {
            an->on_loop = true;
            return rel;
        }
    }
    if (an->cat == NULL || an->cat->lookup == NULL) {
        sl_error_at(an->err, ERRCODE_OBJECT_NOT_IN_PREREQUISITE_STATE, loc,
                    "no catalog is open: the runtime was not initialized (rt_init)");
        return NULL;
    }
    const CatRelation *rel = an->cat->lookup(an->cat->ctx, name);
    if (rel == NULL) {
        if (!missing_ok)
            sl_error_at(an->err, ERRCODE_UNDEFINED_TABLE, loc, "relation \"%s%s%s\" does not exist",
                        schema ? schema : "", schema ? "." : "", name);
        return NULL;
    }
    an_add_dep(an, rel);
    return rel;
}

/* Renames the first columns after the alias's column list. */
static int apply_colnames(Analyze *an, List *colnames, const char *what, const char *name,
                          int ncols, const char **names, int loc)
{
    int n = list_len(colnames);
    SL_UNUSED(loc);
    if (n > ncols)
        return sl_error(an->err, ERRCODE_INVALID_COLUMN_REFERENCE,
                        "%s \"%s\" has %d columns available but %d columns specified", what, name,
                        ncols, n);
    for (int i = 0; i < n; i++)
        names[i] = list_nth(colnames, i);
    return 0;
}

/* A scan of rel named refname; with_key adds the storage key column. */
static Plan *scan_plan(Analyze *an, const CatRelation *rel, const char *alias, bool with_key)
{
    Plan *p = plan_new(an->a, PLAN_SCAN, NULL, rel->ncols + (with_key ? 1 : 0));
    const char *refname = alias ? alias : rel->name;
    for (int c = 0; c < rel->ncols; c++)
        plan_set_col(p, c, rel->cols[c].name, rel->cols[c].type, refname);
    if (with_key)
        plan_set_col(p, rel->ncols, "ctid", sl_type(TYPE_BYTEA), refname);
    p->u.scan.rel = rel;
    p->u.scan.oid = rel->oid;
    p->u.scan.alias = alias;
    p->u.scan.with_key = with_key;
    return p;
}

/* A subquery's plan is its own (analyzed for this reference): its output
 * columns take the range's names, as the FROM clause sees them. */
static void rename_output(Plan *p, const char **names, const char *refname)
{
    for (int c = 0; c < p->ncols; c++) {
        p->cols[c].name = names[c];
        p->quals[c] = refname;
    }
}

static void expose_all(Analyze *an, FromItem *f, const ScopeItem *it)
{
    f->nexposed = it->ncols;
    f->exposed_names = it->colnames;
    f->exposed_idx = it->colidx;
    f->items = list_append(an->a, NULL, (void *)it);
}

/* A reference to WITH query d while it is being analyzed: from its
 * recursive term, the working table; anywhere else an error (42P19, or
 * 0A000 for mutual recursion). */
static Plan *cte_self_ref(Analyze *an, CteDef *d, int loc)
{
    if (an->cte_active != d) {
        sl_error_at(an->err, ERRCODE_FEATURE_NOT_SUPPORTED, loc,
                    "mutual recursion between WITH items is not implemented");
        return NULL;
    }
    const char *msg = NULL;
    if (d->state == CTE_NOT_UNION) {
        sl_error_at(an->err, ERRCODE_INVALID_RECURSION, d->cte->query->hdr.location,
                    "recursive query \"%s\" does not have the form non-recursive-term UNION "
                    "[ALL] recursive-term", d->name);
        return NULL;
    }
    if (d->state == CTE_NONRECURSIVE_TERM)
        msg = "must not appear within its non-recursive term";
    else if (an->sublinks > d->sublinks)
        msg = "must not appear within a subquery";
    else if (an->outer_joins > d->outer_joins)
        msg = "must not appear within an outer join";
    else if (an->rec_intersect > d->rec_intersect)
        msg = "must not appear within INTERSECT";
    else if (an->rec_except > d->rec_except)
        msg = "must not appear within EXCEPT";
    else if (d->nrefs > 0)
        msg = "must not appear more than once";
    if (msg != NULL) {
        sl_error_at(an->err, ERRCODE_INVALID_RECURSION, loc,
                    "recursive reference to query \"%s\" %s", d->name, msg);
        return NULL;
    }
    d->nrefs++;
    Plan *w = plan_new(an->a, PLAN_WORKTABLE, NULL, d->wt->ncols);
    for (int c = 0; c < w->ncols; c++)
        plan_set_col(w, c, d->wt->cols[c].name, d->wt->cols[c].type, NULL);
    w->u.worktable.id = d->wt_id;
    return w;
}

/* The recursive form of WITH RECURSIVE query d, q = non-recursive UNION
 * [ALL] recursive: a RECURSIVE node over both terms.  As PostgreSQL: the
 * working table has the non-recursive term's types (its unknown literals
 * text); the union of both terms, typed as any UNION, must keep them (else
 * 42804); the recursive term is cast to them.  NULL with no error when the
 * recursive term does not read d. */
static Plan *cte_recursive(Analyze *an, CteDef *d, SelectStmt *q, Scope *outer, bool *failed)
{
    *failed = true;
    d->state = CTE_NONRECURSIVE_TERM;
    Plan *l = an_select_arm(an, q->larg, outer);
    if (l == NULL)
        return NULL;
    int n = l->ncols;
    SlType *wt = ARENA_ARRAY(an->a, SlType, n ? n : 1);
    for (int c = 0; c < n; c++)
        wt[c] = l->cols[c].type.id == TYPE_UNKNOWN ? sl_type(TYPE_TEXT) : l->cols[c].type;
    /* the term's own types (unknown kept), for the union's: the cast below
     * may type its literals in place */
    Plan *raw = plan_new(an->a, PLAN_PROJECT, NULL, n);
    for (int c = 0; c < n; c++)
        raw->cols[c] = l->cols[c];
    Plan *nonrec = an_coerce_plan(an, l, wt, "UNION");
    if (nonrec == NULL)
        return NULL;
    d->state = CTE_RECURSIVE_TERM;
    d->wt = nonrec;
    d->wt_id = ++an->nworktables;
    d->nrefs = 0;
    d->sublinks = an->sublinks;
    d->outer_joins = an->outer_joins;
    d->rec_intersect = an->rec_intersect;
    d->rec_except = an->rec_except;
    Plan *r = an_select_arm(an, q->rarg, outer);
    if (r == NULL)
        return NULL;
    if (d->nrefs == 0) {
        *failed = false;
        return NULL;
    }
    if (q->sort != NULL || q->offset != NULL || q->limit != NULL) {
        const Node *at = q->sort ? list_nth(q->sort, 0) : q->offset ? q->offset : q->limit;
        sl_error_at(an->err, ERRCODE_FEATURE_NOT_SUPPORTED, at->location,
                    "%s in a recursive query is not implemented",
                    q->sort ? "ORDER BY" : q->offset ? "OFFSET" : "LIMIT");
        return NULL;
    }
    if (n != r->ncols) {
        sl_error_at(an->err, ERRCODE_SYNTAX_ERROR, q->rarg->hdr.location,
                    "each UNION query must have the same number of columns");
        return NULL;
    }
    /* no aggregate at the recursive term's own level */
    for (const Plan *t = r; t != NULL; t = plan_nchildren(t) == 1 ? t->child : NULL) {
        if (t->kind == PLAN_AGG && t->u.agg.naggs > 0) {
            sl_error_at(an->err, ERRCODE_INVALID_RECURSION, q->rarg->hdr.location,
                        "aggregate functions are not allowed in a recursive query's "
                        "recursive term");
            return NULL;
        }
    }
    SlType *all = ARENA_ARRAY(an->a, SlType, n ? n : 1);
    if (an_setop_types(an, "UNION", raw, r, q->rarg->hdr.location, all) < 0)
        return NULL;
    for (int c = 0; c < n; c++) {
        if (!type_same(all[c], wt[c]) || all[c].typmod != wt[c].typmod) {
            char a[96], b[96];
            sl_error_at(an->err, ERRCODE_DATATYPE_MISMATCH, q->larg->hdr.location,
                        "recursive query \"%s\" column %d has type %s in non-recursive term "
                        "but type %s overall", d->name, c + 1, type_format(wt[c], a, sizeof(a)),
                        type_format(all[c], b, sizeof(b)));
            sl_error_hint(an->err,
                          "Cast the output of the non-recursive term to the correct type.");
            return NULL;
        }
    }
    if ((r = an_coerce_plan(an, r, wt, "UNION")) == NULL)
        return NULL;
    Plan *p = plan_new(an->a, PLAN_RECURSIVE, nonrec, n);
    p->right = r;
    p->u.recursive.id = d->wt_id;
    p->u.recursive.all = q->all;
    for (int c = 0; c < n; c++)
        plan_set_col(p, c, nonrec->cols[c].name, wt[c], NULL);
    *failed = false;
    return p;
}

/* An outer value: a plan with one may read an enclosing query's row (or,
 * inside it, a subquery's or LATERAL item's outer row: taken as such too). */
static bool outer_value(const Expr *e, void *arg)
{
    SL_UNUSED(arg);
    return e->kind == EXPR_OUTER;
}

/* A reference to d that reads its shared plan (PostgreSQL runs a WITH
 * query once however often it is referenced, unless it is inlined: so a
 * volatile function's values are the same in every reference). */
static Plan *cte_scan(Analyze *an, CteDef *d)
{
    Plan *p = plan_new(an->a, PLAN_CTE_SCAN, d->shared, d->shared->ncols);
    for (int c = 0; c < p->ncols; c++)
        plan_set_col(p, c, d->shared->cols[c].name, d->shared->cols[c].type, NULL);
    p->u.cte_scan.name = d->name;
    p->u.cte_scan.correlated = plan_any_expr(d->shared, outer_value, NULL);
    return p;
}

/* The plan of WITH query d for one reference (with cs the WITH list it
 * is in: the query sees the items before it, or all of them when the list
 * is RECURSIVE, and the outer ones).  A query that calls a volatile
 * function is run once for all its references (a CTE_SCAN of d->shared),
 * as PostgreSQL never inlines one, NOT MATERIALIZED or not; others are
 * inlined, which gives the same rows ([NOT] MATERIALIZED change nothing). */
static Plan *cte_plan(Analyze *an, CteScope *cs, int i)
{
    CteDef *d = &cs->defs[i];
    if (d->shared != NULL)
        return cte_scan(an, d);
    CteScope view = {cs->parent, cs->recursive ? cs->n : i, cs->defs, cs->recursive, cs->outer};
    CteScope *saved = an->ctes;
    CteDef *saved_active = an->cte_active;
    an->ctes = &view;
    an->cte_active = d;
    d->in_progress = true;
    SelectStmt *q = d->cte->query;
    Plan *p = NULL;
    bool failed = false;
    if (cs->recursive && q->op == SETOP_UNION) {
        /* the union's own WITH clause is seen by both terms */
        CteScope inner;
        if (q->with != NULL && an_push_ctes(an, q, &inner, cs->outer) < 0)
            failed = true;
        else
            p = cte_recursive(an, d, q, cs->outer, &failed);
        an->ctes = &view;
    }
    if (p == NULL && !failed) {
        /* not recursive: a reference to itself is an error (CTE_NOT_UNION) */
        d->state = CTE_NOT_UNION;
        p = an_select(an, q, cs->outer);
    }
    d->in_progress = false;
    d->state = CTE_IDLE;
    an->ctes = saved;
    an->cte_active = saved_active;
    if (p != NULL && plan_any_expr(p, plan_expr_volatile, NULL)) {
        d->shared = p;
        return cte_scan(an, d);
    }
    return p;
}

/* A view as a FROM item: its query, analyzed for this reference
 * (analyze_view.c), named as the view's columns are. */
static int view_item(Analyze *an, RangeVar *rv, const CatRelation *rel, FromItem *out)
{
    int loc = rv->hdr.location;
    Plan *p = an_view_plan(an, rel, loc);
    if (p == NULL)
        return -1;
    const char *refname = rv->alias ? rv->alias : rel->name;
    ScopeItem *it = new_item(an, refname, p->ncols);
    for (int c = 0; c < p->ncols; c++) {
        it->colnames[c] = rel->cols[c].name;
        it->colidx[c] = c;
    }
    if (apply_colnames(an, rv->colnames, "table", refname, p->ncols, it->colnames, loc) < 0)
        return -1;
    rename_output(p, it->colnames, refname);
    out->plan = p;
    expose_all(an, out, it);
    return 0;
}

/* A relation or a WITH query as a FROM item. */
static int range_var(Analyze *an, RangeVar *rv, FromItem *out)
{
    int loc = rv->hdr.location;
    /* WITH queries first, innermost scope first */
    if (rv->schema == NULL) {
        for (CteScope *cs = an->ctes; cs != NULL; cs = cs->parent) {
            for (int i = cs->n - 1; i >= 0; i--) {
                CteDef *d = &cs->defs[i];
                if (strcmp(d->name, rv->name) != 0)
                    continue;
                Plan *p = d->in_progress ? cte_self_ref(an, d, loc) : cte_plan(an, cs, i);
                if (p == NULL)
                    return -1;
                const char *refname = rv->alias ? rv->alias : d->name;
                ScopeItem *it = new_item(an, refname, p->ncols);
                for (int c = 0; c < p->ncols; c++) {
                    it->colnames[c] = p->cols[c].name;
                    it->colidx[c] = c;
                }
                if (apply_colnames(an, d->cte->colnames, "WITH query", d->name, p->ncols,
                                   it->colnames, d->cte->hdr.location) < 0 ||
                    apply_colnames(an, rv->colnames, "table", refname, p->ncols, it->colnames,
                                   loc) < 0)
                    return -1;
                rename_output(p, it->colnames, refname);
                out->plan = p;
                expose_all(an, out, it);
                return 0;
            }
        }
    }
    const CatRelation *rel = an_lookup_relation(an, rv->schema, rv->name, loc, false);
    if (rel == NULL)
        return -1;
    if (rel->kind == REL_SINK)
        return sl_error_at(an->err, ERRCODE_WRONG_OBJECT_TYPE, loc,
                           "\"%s\" is a sink: it has no rows to read", rel->name);
    if (rel->kind == REL_VIEW)
        return view_item(an, rv, rel, out);
    Plan *p = scan_plan(an, rel, rv->alias, false);
    const char *refname = rv->alias ? rv->alias : rel->name;
    ScopeItem *it = new_item(an, refname, rel->ncols);
    it->rel = rel;
    for (int c = 0; c < rel->ncols; c++) {
        it->colnames[c] = rel->cols[c].name;
        it->colidx[c] = c;
    }
    if (apply_colnames(an, rv->colnames, "table", refname, rel->ncols, it->colnames, loc) < 0)
        return -1;
    for (int c = 0; c < rel->ncols; c++)
        p->cols[c].name = it->colnames[c];
    out->plan = p;
    expose_all(an, out, it);
    return 0;
}

/* The lateral items' frame: lat's columns they read become outer values
 * (Corr), as in a correlated subquery.  Inside a JOIN of a comma list,
 * the comma items before it already have their frame (an_from_clause):
 * the values read go there, and the whole JOIN is the LATERAL item. */
static void lateral_begin(Analyze *an, Scope *lat, Corr *frame)
{
    if (an->corr != NULL && an->corr->outer == lat) {
        frame->outer = NULL;    /* reused: lateral_end leaves it */
        return;
    }
    *frame = (Corr){lat, NULL, an->corr};
    an->corr = frame;
}

static void lateral_end(Analyze *an, Corr *frame, FromItem *out)
{
    if (frame->outer == NULL)
        return;
    an->corr = frame->up;
    if (out != NULL)
        out->lateral_args = frame->exprs;
}

static int range_subselect(Analyze *an, RangeSubselect *rs, FromItem *out, Scope *lat)
{
    if (rs->alias == NULL) {
        bool values = rs->subquery->values != NULL && rs->subquery->op == SETOP_NONE;
        sl_error_at(an->err, ERRCODE_SYNTAX_ERROR, rs->hdr.location,
                    values ? "VALUES in FROM must have an alias"
                           : "subquery in FROM must have an alias");
        sl_error_hint(an->err, values ? "For example, FROM (VALUES ...) [AS] foo."
                                      : "For example, FROM (SELECT ...) [AS] foo.");
        return -1;
    }
    /* not LATERAL: the subquery sees the enclosing queries, not this FROM;
     * LATERAL: the FROM items before it too */
    Scope *outer = an->scope ? an->scope->parent : NULL;
    Plan *p;
    if (rs->lateral && lat != NULL) {
        Corr frame;
        lateral_begin(an, lat, &frame);
        p = an_select(an, rs->subquery, lat);
        lateral_end(an, &frame, out);
    } else {
        p = an_select(an, rs->subquery, outer);
    }
    if (p == NULL)
        return -1;
    ScopeItem *it = new_item(an, rs->alias, p->ncols);
    for (int c = 0; c < p->ncols; c++) {
        it->colnames[c] = p->cols[c].name;
        it->colidx[c] = c;
    }
    if (apply_colnames(an, rs->colnames, "table", rs->alias, p->ncols, it->colnames,
                       rs->hdr.location) < 0)
        return -1;
    rename_output(p, it->colnames, rs->alias);
    out->plan = p;
    expose_all(an, out, it);
    return 0;
}

/* --------------------------------------------------------------- joins */

/* A name of the left side's ranges, for the error of a LATERAL reference
 * under a RIGHT or FULL join. */
static const char *lateral_refname(const FromItem *l)
{
    for (int i = 0; i < list_len(l->items); i++) {
        const ScopeItem *it = list_nth(l->items, i);
        if (it->rel_visible)
            return it->refname;
    }
    return "?";
}

/* jp, a LATERAL node, with its join type (INNER for CROSS) and the values
 * its right plan reads. */
static void lateral_set_args(Analyze *an, Plan *jp, JoinType type, List *args)
{
    jp->u.lateral.type = type == JOIN_LEFT ? JOIN_LEFT : JOIN_INNER;
    jp->u.lateral.nargs = list_len(args);
    jp->u.lateral.args = ARENA_ARRAY(an->a, Expr *, jp->u.lateral.nargs);
    for (int k = 0; k < jp->u.lateral.nargs; k++)
        jp->u.lateral.args[k] = list_nth(args, k);
}

/* The exposed column of f named name: its position in f's output, or -1
 * (-2 when there are several). */
static int find_exposed(const FromItem *f, const char *name)
{
    int found = -1;
    for (int i = 0; i < f->nexposed; i++) {
        if (strcmp(f->exposed_names[i], name) == 0) {
            if (found >= 0)
                return -2;
            found = f->exposed_idx[i];
        }
    }
    return found;
}

static bool in_list(List *l, const char *name)
{
    for (int i = 0; i < list_len(l); i++)
        if (strcmp(list_nth(l, i), name) == 0)
            return true;
    return false;
}

static Expr *col_expr(Analyze *an, const Plan *p, int idx, int loc)
{
    Expr *e = an_mk(an, EXPR_COLUMN, p->cols[idx].type, loc, 0, NULL);
    e->index = idx;
    return e;
}

/* Duplicate range names at one level: 42712. */
static int check_unique_names(Analyze *an, List *a, List *b, int loc)
{
    for (int i = 0; i < list_len(a); i++) {
        ScopeItem *x = list_nth(a, i);
        if (!x->rel_visible)
            continue;
        for (int j = 0; j < list_len(b); j++) {
            ScopeItem *y = list_nth(b, j);
            if (y->rel_visible && strcmp(x->refname, y->refname) == 0)
                return sl_error(an->err, ERRCODE_DUPLICATE_ALIAS,
                                "table name \"%s\" specified more than once", y->refname);
        }
    }
    return 0;
}

/* A JOIN; lat: the comma items before it, which its LATERAL items may
 * read too (NULL: none). */
static int join_expr(Analyze *an, JoinExpr *j, FromItem *out, Scope *lat)
{
    FromItem l = {0}, r = {0};
    /* the nullable sides of an outer join (a recursive reference there is
     * an error: cte_self_ref) */
    bool lnull = j->jointype == JOIN_RIGHT || j->jointype == JOIN_FULL;
    bool rnull = j->jointype == JOIN_LEFT || j->jointype == JOIN_FULL;
    an->outer_joins += lnull;
    int rc = from_item(an, j->larg, &l, lat);
    an->outer_joins -= lnull;
    if (rc < 0)
        return -1;
    /* the right side may be LATERAL over the left one (and lat) */
    Scope rlat = {.parent = lat ? lat : an->scope ? an->scope->parent : NULL, .items = l.items,
                  .from = l.plan};
    an->outer_joins += rnull;
    rc = from_item(an, j->rarg, &r, &rlat);
    an->outer_joins -= rnull;
    if (rc < 0)
        return -1;
    if (check_unique_names(an, l.items, r.items, j->rarg->location) < 0)
        return -1;
    if (r.lateral_args != NULL && (j->jointype == JOIN_RIGHT || j->jointype == JOIN_FULL)) {
        bool reads_left = false;
        for (int k = 0; k < list_len(r.lateral_args); k++)
            reads_left |= ((Expr *)list_nth(r.lateral_args, k))->kind != EXPR_OUTER;
        if (!reads_left)
            return sl_error_at(an->err, ERRCODE_FEATURE_NOT_SUPPORTED, j->rarg->location,
                               "a LATERAL item under a RIGHT or FULL join that reads the FROM "
                               "items before the join is not supported yet");
        sl_error_at(an->err, ERRCODE_INVALID_COLUMN_REFERENCE, j->rarg->location,
                    "invalid reference to FROM-clause entry for table \"%s\"",
                    lateral_refname(&l));
        sl_error_detail(an->err, "The combining JOIN type must be INNER or LEFT for a LATERAL "
                                 "reference.");
        return -1;
    }
    int nl = l.plan->ncols, nr = r.plan->ncols;
    Plan *jp = plan_new(an->a, r.lateral_args ? PLAN_LATERAL : PLAN_JOIN, l.plan, nl + nr);
    jp->right = r.plan;
    if (r.lateral_args != NULL)
        lateral_set_args(an, jp, j->jointype, r.lateral_args);
    else
        jp->u.join.type = j->jointype;
    for (int c = 0; c < nl; c++)
        plan_set_col(jp, c, l.plan->cols[c].name, l.plan->cols[c].type, l.plan->quals[c]);
    for (int c = 0; c < nr; c++)
        plan_set_col(jp, nl + c, r.plan->cols[c].name, r.plan->cols[c].type, r.plan->quals[c]);
    /* the inputs' ranges, the right ones shifted past the left columns */
    List *items = NULL;
    for (int i = 0; i < list_len(l.items); i++)
        items = list_append(an->a, items, list_nth(l.items, i));
    for (int i = 0; i < list_len(r.items); i++) {
        ScopeItem *src = list_nth(r.items, i);
        ScopeItem *it = ARENA_NEW(an->a, ScopeItem);
        *it = *src;
        it->colidx = ARENA_ARRAY(an->a, int, src->ncols ? src->ncols : 1);
        for (int c = 0; c < src->ncols; c++)
            it->colidx[c] = src->colidx[c] + nl;
        items = list_append(an->a, items, it);
    }

    /* USING / NATURAL: the merged columns */
    List *using_names = j->using_names;
    if (j->natural) {
        for (int i = 0; i < l.nexposed; i++)
            if (find_exposed(&r, l.exposed_names[i]) != -1 &&
                !in_list(using_names, l.exposed_names[i]))
                using_names = list_append(an->a, using_names, (void *)l.exposed_names[i]);
    }
    int nusing = list_len(using_names);
    int *lidx = ARENA_ARRAY(an->a, int, nusing ? nusing : 1);
    int *ridx = ARENA_ARRAY(an->a, int, nusing ? nusing : 1);
    Plan *top = jp;
    Expr *cond = NULL;
    for (int u = 0; u < nusing; u++) {
        const char *name = list_nth(using_names, u);
        for (int v = 0; v < u; v++)
            if (strcmp(list_nth(using_names, v), name) == 0)
                return sl_error(an->err, ERRCODE_DUPLICATE_COLUMN,
                                   "column name \"%s\" appears more than once in USING clause",
                                   name);
        lidx[u] = find_exposed(&l, name);
        ridx[u] = find_exposed(&r, name);
        if (lidx[u] == -2 || ridx[u] == -2)
            return sl_error(an->err, ERRCODE_AMBIGUOUS_COLUMN,
                               "common column name \"%s\" appears more than once in %s table",
                               name, lidx[u] == -2 ? "left" : "right");
        if (lidx[u] < 0 || ridx[u] < 0)
            return sl_error(an->err, ERRCODE_UNDEFINED_COLUMN,
                               "column \"%s\" specified in USING clause does not exist in %s "
                               "table",
                               name, lidx[u] < 0 ? "left" : "right");
        Expr *eq = an_make_op(an, "=", col_expr(an, jp, lidx[u], j->hdr.location),
                              col_expr(an, jp, nl + ridx[u], j->hdr.location), j->hdr.location);
        if ((eq = an_to_boolean(an, eq, "JOIN/USING")) == NULL)
            return -1;
        if (cond == NULL) {
            cond = eq;
        } else {
            Expr *args[2] = {cond, eq};
            cond = an_mk(an, EXPR_AND, sl_type(TYPE_BOOL), j->hdr.location, 2, args);
        }
    }
    /* merged columns: the left one (INNER, LEFT), the right one (RIGHT),
     * COALESCE of both (FULL), cast to their common type */
    int *merged = ARENA_ARRAY(an->a, int, nusing ? nusing : 1);
    if (nusing > 0) {
        Expr **extra = ARENA_ARRAY(an->a, Expr *, nusing);
        int nextra = 0;
        for (int u = 0; u < nusing; u++) {
            Expr *le = col_expr(an, jp, lidx[u], -1), *re = col_expr(an, jp, nl + ridx[u], -1);
            Expr *pair[2] = {le, re};
            SlType t;
            if (!an_common_type(an, pair, 2, "JOIN/USING", &t))
                return -1;
            if (j->jointype == JOIN_FULL) {
                extra[nextra++] = an_mk(an, EXPR_COALESCE, t, -1, 2, pair);
                merged[u] = -1;
            } else if (j->jointype == JOIN_RIGHT) {
                if (pair[1]->kind == EXPR_COLUMN) {
                    merged[u] = nl + ridx[u];
                } else {
                    extra[nextra++] = pair[1];
                    merged[u] = -1;
                }
            } else {
                if (pair[0]->kind == EXPR_COLUMN) {
                    merged[u] = lidx[u];
                } else {
                    extra[nextra++] = pair[0];
                    merged[u] = -1;
                }
            }
        }
        if (nextra > 0) {
            Plan *pr = plan_new(an->a, PLAN_PROJECT, jp, nl + nr + nextra);
            pr->u.project.exprs = ARENA_ARRAY(an->a, Expr *, nl + nr + nextra);
            for (int c = 0; c < nl + nr; c++) {
                pr->u.project.exprs[c] = col_expr(an, jp, c, -1);
                plan_set_col(pr, c, jp->cols[c].name, jp->cols[c].type, jp->quals[c]);
            }
            int k = 0;
            for (int u = 0; u < nusing; u++) {
                if (merged[u] >= 0)
                    continue;
                pr->u.project.exprs[nl + nr + k] = extra[k];
                plan_set_col(pr, nl + nr + k, list_nth(using_names, u), extra[k]->type, NULL);
                merged[u] = nl + nr + k;
                k++;
            }
            top = pr;
        }
    }

    /* ON: analyzed over both inputs' ranges */
    if (j->quals != NULL) {
        Scope *saved = an->scope;
        Scope sc = {.parent = saved ? saved->parent : NULL, .items = items, .from = jp};
        const char *saved_ref = an->agg_refusal;
        an->scope = &sc;
        an->agg_refusal = "JOIN conditions";
        Expr *on = an_to_boolean(an, an_transform(an, j->quals), "JOIN/ON");
        an->scope = saved;
        an->agg_refusal = saved_ref;
        if (on == NULL)
            return -1;
        if (cond == NULL) {
            cond = on;
        } else {
            Expr *args[2] = {cond, on};
            cond = an_mk(an, EXPR_AND, sl_type(TYPE_BOOL), j->hdr.location, 2, args);
        }
    }
    if (cond != NULL && jp->kind == PLAN_LATERAL)
        jp->u.lateral.cond = cond;
    else if (cond != NULL)
        plan_join_set_condition(an->a, jp, cond);

    /* the join's own range: merged, then the other columns of each side */
    int n = nusing;
    for (int i = 0; i < l.nexposed; i++)
        n += !in_list(using_names, l.exposed_names[i]);
    for (int i = 0; i < r.nexposed; i++)
        n += !in_list(using_names, r.exposed_names[i]);
    ScopeItem *ji = new_item(an, j->alias, n);
    ji->is_join = true;
    int k = 0;
    for (int u = 0; u < nusing; u++) {
        ji->colnames[k] = list_nth(using_names, u);
        ji->colidx[k++] = merged[u];
    }
    for (int i = 0; i < l.nexposed; i++)
        if (!in_list(using_names, l.exposed_names[i])) {
            ji->colnames[k] = l.exposed_names[i];
            ji->colidx[k++] = l.exposed_idx[i];
        }
    for (int i = 0; i < r.nexposed; i++)
        if (!in_list(using_names, r.exposed_names[i])) {
            ji->colnames[k] = r.exposed_names[i];
            ji->colidx[k++] = r.exposed_idx[i] + nl;
        }
    if (j->alias != NULL &&
        apply_colnames(an, j->colnames, "table", j->alias, n, ji->colnames, j->hdr.location) < 0)
        return -1;
    /* the inputs: qualified names only, or nothing when the join has an alias */
    for (int i = 0; i < list_len(items); i++) {
        ScopeItem *it = list_nth(items, i);
        ScopeItem *copy = ARENA_NEW(an->a, ScopeItem);
        *copy = *it;
        copy->cols_visible = false;
        if (j->alias != NULL)
            copy->rel_visible = false;
        items->items[i] = copy;
    }
    items = list_append(an->a, items, ji);
    out->plan = top;
    out->items = items;
    out->nexposed = n;
    out->exposed_names = ji->colnames;
    out->exposed_idx = ji->colidx;
    return 0;
}

/* Any other set-returning function in FROM (generate_series over
 * timestamps or numeric, regexp_split_to_table, the jsonb sets): a
 * ProjectSet over one row of no columns. */
static int range_srf(Analyze *an, RangeFunction *rf, Expr **args, FromItem *out)
{
    FuncCall *f = rf->func;
    int loc = rf->hdr.location, n = list_len(f->args);
    const FuncDesc *fd = an_resolve(an, f->name, false, args, n, loc);
    if (fd == NULL)
        return -1;
    if (!(fd->flags & FUNC_SRF))
        return sl_error_at(an->err, ERRCODE_FEATURE_NOT_SUPPORTED, loc,
                           "only set-returning functions and unnest(array) are supported in "
                           "FROM");
    Expr *call = an_apply_func(an, fd, args, n, loc);
    if (call == NULL)
        return -1;
    Plan *one = plan_new(an->a, PLAN_VALUES, NULL, 0);
    one->u.values.nrows = 1;
    one->u.values.rows = ARENA_ARRAY(an->a, Expr **, 1);
    one->u.values.rows[0] = NULL;
    const char *refname = rf->alias ? rf->alias : f->name;
    /* one column named as the range, or the set's own (jsonb_each's) */
    const ExSrfFns *fns = ex_func_srf(fd);
    int ncols = fns->ncols > 0 ? fns->ncols : 1;
    Plan *p = plan_new(an->a, PLAN_PROJECT_SET, one, ncols);
    p->u.project_set.nsrfs = 1;
    p->u.project_set.srfs = ARENA_ARRAY(an->a, Expr *, 1);
    p->u.project_set.srfs[0] = call;
    ScopeItem *it = new_item(an, refname, ncols);
    for (int c = 0; c < ncols; c++) {
        it->colnames[c] = fns->ncols > 0 ? fns->colnames[c] : refname;
        it->colidx[c] = c;
    }
    if (apply_colnames(an, rf->colnames, "function", refname, ncols, it->colnames, loc) < 0)
        return -1;
    for (int c = 0; c < ncols; c++)
        plan_set_col(p, c, it->colnames[c],
                     fns->ncols > 0 ? sl_type(fns->coltypes[c]) : call->type, refname);
    out->plan = p;
    expose_all(an, out, it);
    return 0;
}

/* Whether a set-returning function of that name takes n arguments. */
static bool is_srf_name(const char *name, int n)
{
    const FuncDesc *cands[16];
    int k = ex_func_candidates(name, false, n, cands, (int)SL_ARRAY_LEN(cands));
    for (int i = 0; i < k; i++)
        if (cands[i]->flags & FUNC_SRF)
            return true;
    return strcmp(name, "generate_series") == 0 || strcmp(name, "unnest") == 0;
}

/* A function that returns one value, in FROM (string_to_array(...) s, as
 * Grafana's query editor writes it): PostgreSQL's one-row range of one
 * column named as the range, which is (SELECT f(...) AS alias) AS alias. */
static int range_scalar_function(Analyze *an, RangeFunction *rf, FromItem *out, Scope *lat)
{
    const char *refname = rf->alias ? rf->alias : rf->func->name;
    ResTarget *rt = ARENA_NEW(an->a, ResTarget);
    rt->hdr.tag = T_ResTarget;
    rt->hdr.location = rf->hdr.location;
    rt->name = refname;
    rt->val = &rf->func->hdr;
    SelectStmt *sel = ARENA_NEW(an->a, SelectStmt);
    sel->hdr.tag = T_SelectStmt;
    sel->hdr.location = rf->hdr.location;
    sel->targets = list_append(an->a, NULL, rt);
    sel->op = SETOP_NONE;
    sel->paren_loc = -1;
    RangeSubselect *rs = ARENA_NEW(an->a, RangeSubselect);
    rs->hdr.tag = T_RangeSubselect;
    rs->hdr.location = rf->hdr.location;
    rs->subquery = sel;
    rs->alias = refname;
    rs->colnames = rf->colnames;
    return range_subselect(an, rs, out, lat);    /* a function in FROM is LATERAL */
}

/* generate_series(start, stop [, step]) over integers and unnest(array),
 * the functions FROM takes (and range_srf's): their arguments may read
 * enclosing queries (a correlated subquery) and, as PostgreSQL's functions
 * in FROM are LATERAL whether it is written or not, the FROM items before
 * them (lat). */
static int range_function(Analyze *an, RangeFunction *rf, FromItem *out, Scope *lat)
{
    FuncCall *f = rf->func;
    int loc = rf->hdr.location, n = list_len(f->args);
    bool unnest = strcmp(f->name, "unnest") == 0 && n == 1;
    if (n == 0 && !rf->ordinality && an->cat != NULL && an->cat->lookup_system != NULL &&
        (f->qual == NULL ||
         (list_len(f->qual) == 1 && strcmp(list_nth(f->qual, 0), "pg_catalog") == 0))) {
        /* a catalog function of several columns (pg_get_keywords()): the
         * system relation "name()" that holds its rows (src/syscat) */
        const char *rows = arena_printf(an->a, "%s()", f->name);
        if (an->cat->lookup_system(an->cat->system_ctx, "pg_catalog", rows) != NULL) {
            RangeVar *rv = ARENA_NEW(an->a, RangeVar);
            rv->hdr = rf->hdr;
            rv->hdr.tag = T_RangeVar;
            rv->schema = "pg_catalog";
            rv->name = rows;
            rv->alias = rf->alias ? rf->alias : f->name;
            rv->colnames = rf->colnames;
            return range_var(an, rv, out);
        }
    }
    if (f->over || f->star || f->distinct || f->filter)
        return sl_error_at(an->err, ERRCODE_FEATURE_NOT_SUPPORTED, loc,
                           "only set-returning functions and unnest(array) are supported in "
                           "FROM");
    if (!unnest && !rf->ordinality && !is_srf_name(f->name, n))
        return range_scalar_function(an, rf, out, lat);
    Expr **args = arena_zalloc(an->a, sizeof(Expr *) * (size_t)(n > 3 ? n : 3));
    bool wide = false;
    /* the arguments see the enclosing queries and lat only (an empty level
     * of their own makes any column they read an outer reference) */
    Scope *saved = an->scope;
    Scope none = {.parent = lat ? lat : saved ? saved->parent : NULL};
    Corr frame;
    if (lat != NULL)
        lateral_begin(an, lat, &frame);
    an->scope = &none;
    bool integers = true;
    int failed = 0;
    for (int k = 0; k < n && !failed; k++) {
        if ((args[k] = an_transform(an, list_nth(f->args, k))) == NULL) {
            failed = 1;
            break;
        }
        SlTypeId t = args[k]->type.id;
        integers &= t == TYPE_INT4 || t == TYPE_INT8 || t == TYPE_UNKNOWN;
    }
    an->scope = saved;
    if (lat != NULL)
        lateral_end(an, &frame, out);
    if (failed)
        return -1;
    if (!unnest && (strcmp(f->name, "generate_series") != 0 || n < 2 || n > 3 || !integers)) {
        if (rf->ordinality)
            return sl_error_at(an->err, ERRCODE_FEATURE_NOT_SUPPORTED, loc,
                               "WITH ORDINALITY is supported only for unnest and "
                               "generate_series over integers");
        return range_srf(an, rf, args, out);
    }
    an->scope = &none;
    SlType elem = sl_type(TYPE_TEXT);
    for (int k = 0; k < n; k++) {
        SlTypeId t = args[k]->type.id;
        if (unnest) {
            if (t == TYPE_UNKNOWN) {
                /* PostgreSQL has unnest(anyarray), unnest(tsvector), ... */
                an->scope = saved;
                sl_error_at(an->err, ERRCODE_AMBIGUOUS_FUNCTION, loc,
                            "function unnest(unknown) is not unique");
                sl_error_hint(an->err, "Could not choose a best candidate function. You "
                                       "might need to add explicit type casts.");
                return -1;
            }
            if (t != TYPE_ARRAY) {
                char tb[96];
                an->scope = saved;
                sl_error_at(an->err, ERRCODE_UNDEFINED_FUNCTION, loc,
                            "function unnest(%s) does not exist",
                            type_format(args[k]->type, tb, sizeof(tb)));
                sl_error_hint(an->err, "No function matches the given name and argument "
                                       "types. You might need to add explicit type casts.");
                return -1;
            }
            elem = type_elem(args[k]->type);
            break;
        }
        if (t != TYPE_INT2 && t != TYPE_INT4 && t != TYPE_INT8 && t != TYPE_UNKNOWN) {
            an->scope = saved;
            return sl_error_at(an->err, ERRCODE_FEATURE_NOT_SUPPORTED, loc,
                               "generate_series over %s is not supported yet", type_name(t));
        }
        wide |= t == TYPE_INT8;
        if ((args[k] = an_coerce(an, args[k], sl_type(TYPE_INT8), COERCE_EXPLICIT, loc)) == NULL) {
            an->scope = saved;
            return -1;
        }
    }
    an->scope = saved;
    const char *refname = rf->alias ? rf->alias : f->name;
    int ncols = rf->ordinality ? 2 : 1;
    Plan *p = plan_new(an->a, PLAN_SERIES, NULL, ncols);
    p->u.series.start = args[0];
    p->u.series.stop = args[1];
    p->u.series.step = args[2];
    p->u.series.unnest = unnest;
    p->u.series.ordinality = rf->ordinality;
    ScopeItem *it = new_item(an, refname, ncols);
    it->colnames[0] = refname;
    it->colidx[0] = 0;
    if (rf->ordinality) {
        it->colnames[1] = "ordinality";
        it->colidx[1] = 1;
    }
    if (apply_colnames(an, rf->colnames, rf->ordinality ? "table" : "function", refname, ncols,
                       it->colnames, loc) < 0)
        return -1;
    plan_set_col(p, 0, it->colnames[0],
                 unnest ? elem : sl_type(wide ? TYPE_INT8 : TYPE_INT4), refname);
    if (rf->ordinality)
        plan_set_col(p, 1, it->colnames[1], sl_type(TYPE_INT8), refname);
    out->plan = p;
    expose_all(an, out, it);
    return 0;
}

/* A FROM item; a LATERAL one (a subquery so marked, a function) may read
 * the ranges of lat (NULL: none). */
static int from_item(Analyze *an, Node *n, FromItem *out, Scope *lat)
{
    switch (n->tag) {
    case T_RangeVar:
        return range_var(an, (RangeVar *)n, out);
    case T_RangeSubselect:
        return range_subselect(an, (RangeSubselect *)n, out, lat);
    case T_RangeFunction:
        return range_function(an, (RangeFunction *)n, out, lat);
    case T_JoinExpr:
        return join_expr(an, (JoinExpr *)n, out, lat);
    default:
        return sl_error_at(an->err, ERRCODE_FEATURE_NOT_SUPPORTED, n->location,
                           "this kind of FROM item is not supported yet");
    }
}

/* acc becomes acc cross-joined with f (a comma in FROM; WHERE conditions
 * are pushed into it later): f's ranges follow acc's columns. */
static void cross_join(Analyze *an, FromItem *acc, const FromItem *f)
{
    /* a LATERAL item that reads the items before it runs per row */
    int nl = acc->plan->ncols, nr = f->plan->ncols;
    Plan *jp = plan_new(an->a, f->lateral_args ? PLAN_LATERAL : PLAN_JOIN, acc->plan, nl + nr);
    jp->right = f->plan;
    if (f->lateral_args != NULL)
        lateral_set_args(an, jp, JOIN_CROSS, f->lateral_args);
    else
        jp->u.join.type = JOIN_CROSS;
    for (int c = 0; c < nl; c++)
        plan_set_col(jp, c, acc->plan->cols[c].name, acc->plan->cols[c].type,
                     acc->plan->quals[c]);
    for (int c = 0; c < nr; c++)
        plan_set_col(jp, nl + c, f->plan->cols[c].name, f->plan->cols[c].type,
                     f->plan->quals[c]);
    for (int k = 0; k < list_len(f->items); k++) {
        ScopeItem *src = list_nth(f->items, k);
        ScopeItem *it = ARENA_NEW(an->a, ScopeItem);
        *it = *src;
        it->colidx = ARENA_ARRAY(an->a, int, src->ncols ? src->ncols : 1);
        for (int c = 0; c < src->ncols; c++)
            it->colidx[c] = src->colidx[c] + nl;
        acc->items = list_append(an->a, acc->items, it);
    }
    acc->plan = jp;
}

int an_from_clause(Analyze *an, List *from, Scope *scope)
{
    FromItem acc = {0};
    for (int i = 0; i < list_len(from); i++) {
        Node *n = list_nth(from, i);
        FromItem f = {0};
        Scope lat = {.parent = an->scope ? an->scope->parent : NULL, .items = acc.items,
                     .from = acc.plan};
        /* a JOIN's LATERAL items may read the items before it: one frame
         * for the whole JOIN (lateral_begin) */
        Corr frame;
        bool join = i > 0 && n->tag == T_JoinExpr;
        if (join)
            lateral_begin(an, &lat, &frame);
        int rc = from_item(an, n, &f, i > 0 ? &lat : NULL);
        if (join)
            lateral_end(an, &frame, &f);
        if (rc < 0)
            return -1;
        if (i == 0) {
            acc = f;
            continue;
        }
        if (check_unique_names(an, acc.items, f.items, n->location) < 0)
            return -1;
        /* Each join of the list copies the columns before it: a list of
         * thousands of items is a plan of millions of columns, charged to
         * the statement's account (rt_prepare), checked here. */
        if (an->a->acct != NULL && sl_mem_exceeded(an->a->acct) != SL_MEM_OK)
            return ex_out_of_memory(an->err, an->a->acct);
        /* a comma is a cross join; WHERE conditions are pushed into it later */
        cross_join(an, &acc, &f);
    }
    scope->items = acc.items;
    scope->from = acc.plan;
    return 0;
}

int an_target_relation(Analyze *an, RangeVar *rv, bool with_key, const CatRelation **relp,
                       Scope *scope)
{
    const CatRelation *rel = an_lookup_relation(an, rv->schema, rv->name, rv->hdr.location,
                                                false);
    if (rel == NULL)
        return -1;
    const char *refname = rv->alias ? rv->alias : rel->name;
    ScopeItem *it = new_item(an, refname, rel->ncols);
    it->rel = rel;
    for (int c = 0; c < rel->ncols; c++) {
        it->colnames[c] = rel->cols[c].name;
        it->colidx[c] = c;
    }
    scope->items = list_append(an->a, NULL, it);
    scope->from = scan_plan(an, rel, rv->alias, with_key);
    *relp = rel;
    return 0;
}

int an_target_from(Analyze *an, List *from, Scope *scope)
{
    Scope fsc = {.parent = NULL};
    if (an_from_clause(an, from, &fsc) < 0 ||
        check_unique_names(an, scope->items, fsc.items, ((Node *)list_nth(from, 0))->location) < 0)
        return -1;
    /* a new list: the caller keeps the target's own scope */
    FromItem acc = {.plan = scope->from}, f = {.plan = fsc.from, .items = fsc.items};
    for (int k = 0; k < list_len(scope->items); k++)
        acc.items = list_append(an->a, acc.items, list_nth(scope->items, k));
    cross_join(an, &acc, &f);
    scope->items = acc.items;
    scope->from = acc.plan;
    return 0;
}

void an_relation_scope(Analyze *an, const CatRelation *rel, Scope *scope)
{
    ScopeItem *it = new_item(an, rel->name, rel->ncols);
    it->rel = rel;
    for (int c = 0; c < rel->ncols; c++) {
        it->colnames[c] = rel->cols[c].name;
        it->colidx[c] = c;
    }
    scope->items = list_append(an->a, NULL, it);
    scope->from = scan_plan(an, rel, NULL, false);
}

/* ------------------------------------------------------------ columns */

#define MAX_FUZZY 3

typedef struct Fuzzy {
    int              dist;
    const ScopeItem *first, *second;
    const char      *firstcol, *secondcol;
    const ScopeItem *exact;     /* the name exists in a range it cannot be reached in */
} Fuzzy;

static void fuzzy_update(Fuzzy *f, int penalty, const ScopeItem *it, const char *actual,
                         const char *match)
{
    if (penalty > f->dist)
        return;
    int mlen = (int)strlen(match);
    int d = sl_edit_distance(actual, match, f->dist + 1 - penalty);
    if (d > mlen / 2)
        return;
    d += penalty;
    if (d < f->dist) {
        f->dist = d;
        f->first = it;
        f->firstcol = actual;
        f->second = NULL;
    } else if (d == f->dist) {
        if (f->second != NULL) {
            f->first = f->second = NULL;
        } else if (f->first != NULL) {
            f->second = it;
            f->secondcol = actual;
        }
    }
}

/* searchRangeTableForCol: over every range of every level, joins aside. */
static void fuzzy_search(Scope *scope, const char *qual, const char *col, Fuzzy *f)
{
    f->dist = MAX_FUZZY + 1;
    for (Scope *s = scope; s != NULL; s = s->parent) {
        for (int i = 0; i < list_len(s->items); i++) {
            const ScopeItem *it = list_nth(s->items, i);
            if (it->is_join || it->refname == NULL)
                continue;
            int penalty = 0;
            if (qual != NULL)
                penalty = sl_edit_distance(qual, it->refname, MAX_FUZZY);
            for (int c = 0; c < it->ncols; c++) {
                if (strcmp(it->colnames[c], col) == 0) {
                    if (penalty == 0) {
                        f->exact = it;
                        return;
                    }
                    continue;
                }
                fuzzy_update(f, penalty, it, it->colnames[c], col);
            }
        }
    }
}

static Expr *missing_column(Analyze *an, Scope *scope, const char *qual, const char *col, int loc)
{
    Fuzzy f = {0};
    fuzzy_search(scope, qual, col, &f);
    if (qual != NULL)
        sl_error_at(an->err, ERRCODE_UNDEFINED_COLUMN, loc, "column %s.%s does not exist", qual,
                    col);
    else
        sl_error_at(an->err, ERRCODE_UNDEFINED_COLUMN, loc, "column \"%s\" does not exist", col);
    if (f.exact != NULL)
        sl_error_hint(an->err,
                      "There is a column named \"%s\" in table \"%s\", but it cannot be "
                      "referenced from this part of the query.",
                      col, f.exact->refname);
    else if (f.first != NULL && f.second != NULL)
        sl_error_hint(an->err,
                      "Perhaps you meant to reference the column \"%s.%s\" or the column "
                      "\"%s.%s\".",
                      f.first->refname, f.firstcol, f.second->refname, f.secondcol);
    else if (f.first != NULL)
        sl_error_hint(an->err, "Perhaps you meant to reference the column \"%s.%s\".",
                      f.first->refname, f.firstcol);
    return NULL;
}

/* Looks col up in one scope level: 1 found (*idx), 0 not, -1 error. */
static int find_column(Analyze *an, Scope *s, const char *qual, const char *col, int loc,
                       bool *qual_found, int *idx)
{
    int found = 0;
    for (int i = 0; i < list_len(s->items); i++) {
        const ScopeItem *it = list_nth(s->items, i);
        if (qual != NULL ? !(it->rel_visible && strcmp(it->refname, qual) == 0)
                         : !it->cols_visible)
            continue;
        if (qual != NULL)
            *qual_found = true;
        for (int c = 0; c < it->ncols; c++) {
            if (strcmp(it->colnames[c], col) != 0)
                continue;
            if (found && *idx != it->colidx[c]) {
                if (qual != NULL)
                    sl_error_at(an->err, ERRCODE_AMBIGUOUS_COLUMN, loc,
                                "column reference \"%s.%s\" is ambiguous", qual, col);
                else
                    sl_error_at(an->err, ERRCODE_AMBIGUOUS_COLUMN, loc,
                                "column reference \"%s\" is ambiguous", col);
                return -1;
            }
            found = 1;
            *idx = it->colidx[c];
        }
    }
    return found;
}

/* Whether s has a FROM item of rel under the name qual (no alias). */
static bool scope_has_relation(const Scope *s, const CatRelation *rel, const char *qual)
{
    for (int i = 0; i < list_len(s->items); i++) {
        const ScopeItem *it = list_nth(s->items, i);
        if (it->rel == rel && it->rel_visible && strcmp(it->refname, qual) == 0)
            return true;
    }
    return false;
}

/* The range a qualifier could have meant when it names a relation that
 * has an alias here: PostgreSQL's "invalid reference" error. */
static bool hidden_by_alias(Analyze *an, Scope *scope, const char *qual, int loc)
{
    for (Scope *s = scope; s != NULL; s = s->parent) {
        for (int i = 0; i < list_len(s->items); i++) {
            const ScopeItem *it = list_nth(s->items, i);
            if (it->rel != NULL && it->rel_visible && strcmp(it->rel->name, qual) == 0 &&
                strcmp(it->refname, qual) != 0) {
                sl_error_at(an->err, ERRCODE_UNDEFINED_TABLE, loc,
                            "invalid reference to FROM-clause entry for table \"%s\"", qual);
                sl_error_hint(an->err,
                              "Perhaps you meant to reference the table alias \"%s\".",
                              it->refname);
                return true;
            }
        }
    }
    return false;
}

Expr *an_column_ref(Analyze *an, ColumnRef *c)
{
    int loc = c->hdr.location;
    int n = list_len(c->names);
    const char *col = list_nth(c->names, n - 1);
    if (strcmp(col, "*") == 0) {
        if (an->scope == NULL || an->scope->from == NULL)
            sl_error_at(an->err, ERRCODE_SYNTAX_ERROR, loc,
                        "SELECT * with no tables specified is not valid");
        else
            sl_error_at(an->err, ERRCODE_FEATURE_NOT_SUPPORTED, loc,
                        "a row value (*) is not supported here yet");
        return NULL;
    }
    const char *qual = n >= 2 ? list_nth(c->names, n - 2) : NULL;
    if (n > 3) {
        sl_error_at(an->err, ERRCODE_SYNTAX_ERROR, loc,
                    "improper qualified name (too many dotted names)");
        return NULL;
    }
    /* schema.table.column (pg_catalog.pg_class.relname, as SQLAlchemy
     * writes it): a FROM item of that very relation, under its own name */
    const CatRelation *want = NULL;
    if (n == 3) {
        const char *schema = list_nth(c->names, 0);
        if (an->cat != NULL && strcmp(schema, "public") == 0 && an->cat->lookup != NULL)
            want = an->cat->lookup(an->cat->ctx, qual);
        else if (an->cat != NULL && an->cat->lookup_system != NULL)
            want = an->cat->lookup_system(an->cat->system_ctx, schema, qual);
        if (want == NULL) {
            sl_error_at(an->err, ERRCODE_UNDEFINED_TABLE, loc,
                        "missing FROM-clause entry for table \"%s\"", qual);
            return NULL;
        }
    }
    Scope *scope = an->scope;
    /* window_start / window_end of a windowed aggregate */
    if (qual == NULL && scope != NULL && scope->has_window && an->agg != NULL &&
        (strcmp(col, "window_start") == 0 || strcmp(col, "window_end") == 0)) {
        Expr *e = an_mk(an, EXPR_COLUMN, scope->window_type, loc, 0, NULL);
        e->subkind = strcmp(col, "window_start") == 0 ? COLREF_WINDOW_START : COLREF_WINDOW_END;
        e->index = -1;
        return e;
    }
    bool qual_found = false;
    for (Scope *s = scope; s != NULL; s = s->parent) {
        int idx = -1;
        if (want != NULL && !scope_has_relation(s, want, qual))
            continue;
        int rc = find_column(an, s, qual, col, loc, &qual_found, &idx);
        if (rc < 0)
            return NULL;
        if (rc == 0)
            continue;
        if (s != scope)
            return outer_ref(an, an->corr, s, idx, loc);
        Expr *e = an_mk(an, EXPR_COLUMN, s->from->cols[idx].type, loc, 0, NULL);
        e->index = idx;
        return e;
    }
    if (qual != NULL && !qual_found) {
        if (!hidden_by_alias(an, scope, qual, loc))
            sl_error_at(an->err, ERRCODE_UNDEFINED_TABLE, loc,
                        "missing FROM-clause entry for table \"%s\"", qual);
        return NULL;
    }
    return missing_column(an, scope, qual, col, loc);
}

/* Column idx of scope s, an enclosing query's, as seen from the subquery
 * of frame f: an EXPR_OUTER reading one of f's outer values.  A column of
 * a query further out passes through each subquery in between. */
static Expr *outer_ref(Analyze *an, Corr *f, Scope *s, int idx, int loc)
{
    if (f == NULL) {
        sl_error_at(an->err, ERRCODE_FEATURE_NOT_SUPPORTED, loc,
                    "this reference to an enclosing query is not supported");
        return NULL;
    }
    Expr *v;
    if (f->outer == s) {
        v = an_mk(an, EXPR_COLUMN, s->from->cols[idx].type, loc, 0, NULL);
        v->index = idx;
    } else if ((v = outer_ref(an, f->up, s, idx, loc)) == NULL) {
        return NULL;
    }
    int k = 0;
    for (; k < list_len(f->exprs); k++) {
        const Expr *x = list_nth(f->exprs, k);
        if (x->kind == v->kind && x->index == v->index)
            break;
    }
    if (k == list_len(f->exprs))
        f->exprs = list_append(an->a, f->exprs, v);
    Expr *e = an_mk(an, EXPR_OUTER, v->type, loc, 0, NULL);
    e->index = k;
    return e;
}

int an_expand_star(Analyze *an, const char *qual, int loc, int **cols, int *ncols)
{
    Scope *s = an->scope;
    if (s == NULL || s->from == NULL || list_len(s->items) == 0)
        return sl_error_at(an->err, ERRCODE_SYNTAX_ERROR, loc,
                           "SELECT * with no tables specified is not valid");
    int n = 0;
    bool found = false;
    for (int pass = 0; pass < 2; pass++) {
        for (int i = 0; i < list_len(s->items); i++) {
            const ScopeItem *it = list_nth(s->items, i);
            if (qual != NULL ? !(it->rel_visible && strcmp(it->refname, qual) == 0)
                             : !it->cols_visible)
                continue;
            found = true;
            for (int c = 0; c < it->ncols; c++) {
                if (pass == 1)
                    (*cols)[n] = it->colidx[c];
                n++;
            }
        }
        if (pass == 0) {
            if (!found) {
                if (!hidden_by_alias(an, s, qual, loc))
                    sl_error_at(an->err, ERRCODE_UNDEFINED_TABLE, loc,
                                "missing FROM-clause entry for table \"%s\"", qual);
                return -1;
            }
            *cols = ARENA_ARRAY(an->a, int, n ? n : 1);
            *ncols = n;
            n = 0;
        }
    }
    return 0;
}
