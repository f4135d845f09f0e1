/*
 * analyze_dml.c -- INSERT, UPDATE and DELETE into ModifyPlans (plan.h).
 *
 *   an_insert_stmt   INSERT INTO t [(cols)] VALUES ... | query | DEFAULT VALUES
 *                    [ON CONFLICT ... DO NOTHING | DO UPDATE SET ...] [RETURNING]
 *   an_update_stmt   UPDATE t SET col = expr, ... [FROM ...] [WHERE] [RETURNING]
 *   an_delete_stmt   DELETE FROM t [USING ...] [WHERE] [RETURNING]
 *   an_assign        an expression coerced for assignment to a column
 *   an_default_expr  a column's DEFAULT expression (also CREATE TABLE's check)
 *   an_table_checks  a table's CHECK constraints, named as PostgreSQL names
 *                    them (also CREATE TABLE's check)
 *
 * The source plan of an INSERT yields rows in the relation's column order
 * and types; a column not named, or named with DEFAULT (also in UPDATE SET
 * and ON CONFLICT DO UPDATE SET), gets its DEFAULT, else NULL.  A table's
 * DEFAULT expressions and CHECK constraints are not in the catalog: they
 * are read from its CREATE TABLE statement (the relation's sql), parsed
 * once per statement and analyzed anew for each use; INSERT and UPDATE
 * carry the CHECKs in their ModifyPlan, sorted by name.  As in PostgreSQL, each VALUES row is coerced to the target columns
 * directly, so parameters and literals take the columns' types.  UPDATE
 * and DELETE scan the table with each row's storage key; the source plan
 * yields [key, new row] (UPDATE) or [key, old row] (DELETE); with FROM /
 * USING the scan is cross-joined with the other relations (the WHERE
 * pushed into the join) and a Distinct on the key keeps one row per
 * target row.  Streams are
 * append-only: UPDATE, DELETE and ON CONFLICT on a stream are refused.
 */
#include "sql/analyze_int.h"
#include "sql/parser.h"

/* PostgreSQL's assignment casts: the implicit ones, numeric to numeric,
 * anything to a string type, date/time to date/time. */
static bool assignable(SlTypeId from, SlTypeId to)
{
    if (from == to || from == TYPE_UNKNOWN || ex_can_coerce(from, to))
        return true;
    char cf = type_category(from), ct = type_category(to);
    if (cf == 'N' && ct == 'N')
        return true;
    if (to == TYPE_TEXT || to == TYPE_VARCHAR || to == TYPE_BPCHAR)
        return true;
    if (cf == 'D' && ct == 'D')
        return ex_cast_fn(from, to, false) != NULL;
    return false;
}

Expr *an_assign(Analyze *an, Expr *e, SlType t, const char *colname, int loc)
{
    if (type_same(e->type, t) && (t.typmod < 0 || e->type.typmod == t.typmod))
        return e;
    bool arrays_ok = e->type.id != TYPE_ARRAY || t.id != TYPE_ARRAY ||
                     assignable(e->type.elem, t.elem);
    if (!arrays_ok || !assignable(e->type.id, t.id) || (e->type.id != TYPE_UNKNOWN &&
                                          ex_cast_fn(e->type.id, t.id, false) == NULL &&
                                          e->type.id != t.id)) {
        char b1[64], b2[64];
        sl_error_at(an->err, ERRCODE_DATATYPE_MISMATCH, loc,
                    "column \"%s\" is of type %s but %s is of type %s", colname,
                    type_format(t, b1, sizeof(b1)),
                    an->no_columns != NULL ? "default expression" : "expression",
                    type_display(e->type, b2, sizeof(b2)));
        sl_error_hint(an->err, "You will need to rewrite or cast the expression.");
        return NULL;
    }
    if (t.id == TYPE_VARCHAR && t.typmod >= 0 &&
        (e->type.id == TYPE_UNKNOWN || e->type.id == TYPE_TEXT || e->type.id == TYPE_VARCHAR)) {
        /* too long is an error here, not a truncation */
        if ((e = an_coerce(an, e, sl_type(TYPE_VARCHAR), COERCE_EXPLICIT, loc)) == NULL)
            return NULL;
        Expr *c = an_mk(an, EXPR_CAST, t, loc, 1, &e);
        c->cast = ex_assign_cast_fn(TYPE_VARCHAR, TYPE_VARCHAR);
        return e->kind == EXPR_CONST ? an_fold(an, c) : c;
    }
    if (t.id == TYPE_BPCHAR && t.typmod >= 0 &&
        (e->type.id == TYPE_UNKNOWN || e->type.id == TYPE_TEXT || e->type.id == TYPE_VARCHAR ||
         e->type.id == TYPE_BPCHAR)) {
        /* the same for character(n), which pads a shorter value */
        if ((e = an_coerce(an, e, sl_type(TYPE_BPCHAR), COERCE_EXPLICIT, loc)) == NULL)
            return NULL;
        Expr *c = an_mk(an, EXPR_CAST, t, loc, 1, &e);
        c->cast = ex_assign_cast_fn(TYPE_BPCHAR, TYPE_BPCHAR);
        return e->kind == EXPR_CONST ? an_fold(an, c) : c;
    }
    return an_coerce(an, e, t, COERCE_EXPLICIT, loc);
}

static Expr *null_of(Analyze *an, SlType t)
{
    return an_const(an, t, -1, true);
}

/* What an expression of a table's definition (a DEFAULT, a CHECK) is
 * analyzed in, and what it replaces of the Analyze while it is. */
typedef struct DefContext {
    Scope            *scope;
    const char       *agg_refusal, *srf_refusal, *no_columns, *no_subquery;
    bool              srf_ok;
    struct AnWindows *win;
} DefContext;

/* Analyzes the next expressions in scope, where `where` names the clause
 * in the refusals of aggregates and set-returning functions
 * ("DEFAULT expressions"); no_columns / no_subquery as Analyze's.  *saved
 * takes what def_leave puts back. */
static void def_enter(Analyze *an, DefContext *saved, Scope *scope, const char *where,
                      const char *no_columns, const char *no_subquery)
{
    *saved = (DefContext){an->scope,       an->agg_refusal, an->srf_refusal, an->no_columns,
                          an->no_subquery, an->srf_ok,      an->win};
    an->scope = scope;
    an->agg_refusal = an->srf_refusal = where;
    an->no_columns = no_columns;
    an->no_subquery = no_subquery;
    an->srf_ok = false;
    an->win = NULL;
}

static void def_leave(Analyze *an, const DefContext *saved)
{
    an->scope = saved->scope;
    an->agg_refusal = saved->agg_refusal;
    an->srf_refusal = saved->srf_refusal;
    an->no_columns = saved->no_columns;
    an->no_subquery = saved->no_subquery;
    an->srf_ok = saved->srf_ok;
    an->win = saved->win;
}

Expr *an_default_expr(Analyze *an, Node *expr, const CatColumn *col)
{
    Scope none = {.parent = NULL};
    DefContext saved;
    def_enter(an, &saved, &none, "DEFAULT expressions", "DEFAULT expression", NULL);
    Expr *e = an_transform(an, expr);
    if (e != NULL)
        e = an_assign(an, e, col->type, col->name, expr->location);
    def_leave(an, &saved);
    return e;
}

/* The DEFAULT expressions of table rel's columns, from its CREATE TABLE
 * statement (parsed once per statement analyzed, into an->dflt_stmt): an
 * array of ncols nodes, NULL where a column has none. */
static Node **table_defaults(Analyze *an, const CatRelation *rel)
{
    if (an->dflt_rel == rel)
        return an->dflt;
    Node **d = ARENA_ARRAY(an->a, Node *, rel->ncols > 0 ? rel->ncols : 1);
    for (int c = 0; c < rel->ncols; c++)
        d[c] = NULL;
    List *stmts = NULL;
    SlError ignore = {0};
    CreateStmt *cs = NULL;
    if (rel->kind == REL_TABLE && rel->sql != NULL &&
        sql_parse(an->a, rel->sql, (int)strlen(rel->sql), &stmts, &ignore) == 0 &&
        list_len(stmts) == 1 && IS_A(((RawStmt *)list_nth(stmts, 0))->stmt, CreateStmt)) {
        cs = (CreateStmt *)((RawStmt *)list_nth(stmts, 0))->stmt;
        for (int i = 0; i < list_len(cs->elts); i++) {
            ColumnDef *cd = list_nth(cs->elts, i);
            if (!IS_A(cd, ColumnDef))
                continue;
            for (int c = 0; c < rel->ncols; c++) {
                if (strcmp(rel->cols[c].name, cd->name) != 0)
                    continue;
                for (int k = 0; k < list_len(cd->constraints); k++) {
                    Constraint *con = list_nth(cd->constraints, k);
                    if (con->type == CONSTR_DEFAULT)
                        d[c] = con->expr;
                }
            }
        }
    }
    sl_error_clear(&ignore);
    an->dflt_rel = rel;
    an->dflt = d;
    an->dflt_stmt = cs;
    return d;
}

/* Collects the column indexes e reads into used (an array of ncols). */
static void columns_read(const Expr *e, bool *used, int ncols)
{
    if (e == NULL)
        return;
    if (e->kind == EXPR_COLUMN && e->index >= 0 && e->index < ncols)
        used[e->index] = true;
    for (int i = 0; i < e->nargs; i++)
        columns_read(e->args[i], used, ncols);
}

static bool name_taken(const char **names, int n, const char *name)
{
    for (int i = 0; i < n; i++)
        if (strcmp(names[i], name) == 0)
            return true;
    return false;
}

/* One CHECK's expression over rel's columns: boolean, no subquery,
 * aggregate, window or set-returning function (PostgreSQL's messages). */
static Expr *check_expr(Analyze *an, const CatRelation *rel, Node *expr)
{
    Scope scope = {.parent = NULL};
    an_relation_scope(an, rel, &scope);
    DefContext saved;
    def_enter(an, &saved, &scope, "check constraints", NULL, "check constraint");
    Expr *e = an_transform(an, expr);
    if (e != NULL && e->type.id != TYPE_BOOL && e->type.id != TYPE_UNKNOWN) {
        char b[64];
        sl_error_at(an->err, ERRCODE_DATATYPE_MISMATCH, expr->location,
                    "argument of CHECK must be type boolean, not type %s",
                    type_display(e->type, b, sizeof(b)));
        e = NULL;
    } else if (e != NULL) {
        e = an_to_boolean(an, e, "CHECK");
    }
    def_leave(an, &saved);
    return e;
}

int an_table_checks(Analyze *an, const CatRelation *rel, CreateStmt *cs, Expr ***exprs,
                    const char ***names)
{
    if (cs == NULL) {
        table_defaults(an, rel);
        cs = an->dflt_stmt;
    }
    List *cons = NULL;
    for (int i = 0; cs != NULL && i < list_len(cs->elts); i++) {
        Node *e = list_nth(cs->elts, i);
        if (IS_A(e, ColumnDef)) {
            ColumnDef *cd = (ColumnDef *)e;
            for (int k = 0; k < list_len(cd->constraints); k++) {
                Constraint *con = list_nth(cd->constraints, k);
                if (con->type == CONSTR_CHECK)
                    cons = list_append(an->a, cons, con);
            }
        } else if (IS_A(e, Constraint) && ((Constraint *)e)->type == CONSTR_CHECK) {
            cons = list_append(an->a, cons, e);
        }
    }
    int n = list_len(cons);
    /* named after the table's name at CREATE, which a RENAME leaves them */
    const char *tname = cs != NULL ? cs->relation->name : rel->name;
    *exprs = ARENA_ARRAY(an->a, Expr *, n > 0 ? n : 1);
    *names = ARENA_ARRAY(an->a, const char *, n + 1);
    (*names)[0] = arena_printf(an->a, "%s_pkey", tname);       /* taken, not a CHECK */
    const char **chosen = *names + 1;
    bool *used = ARENA_ARRAY(an->a, bool, rel->ncols > 0 ? rel->ncols : 1);
    for (int i = 0; i < n; i++) {
        Constraint *con = list_nth(cons, i);
        Expr *e = check_expr(an, rel, con->expr);
        if (e == NULL)
            return -1;
        (*exprs)[i] = e;
        if (con->conname != NULL) {
            if (name_taken(chosen, i, con->conname))
                return sl_error(an->err, ERRCODE_DUPLICATE_OBJECT,
                                "check constraint \"%s\" already exists", con->conname);
            chosen[i] = con->conname;
            continue;
        }
        /* PostgreSQL's name: the one column it reads, if only one */
        memset(used, 0, sizeof(bool) * (size_t)(rel->ncols > 0 ? rel->ncols : 1));
        columns_read(e, used, rel->ncols);
        int one = -1, nused = 0;
        for (int c = 0; c < rel->ncols; c++)
            if (used[c]) {
                one = c;
                nused++;
            }
        const char *base = nused == 1 ? arena_printf(an->a, "%s_%s_check", tname,
                                                     rel->cols[one].name)
                                      : arena_printf(an->a, "%s_check", tname);
        const char *name = base;
        for (int k = 1; name_taken(*names, i + 1, name); k++)
            name = arena_printf(an->a, "%s%d", base, k);
        chosen[i] = name;
    }
    *names = chosen;
    return n;
}

/* m's CHECK constraints: those of table rel, read from its CREATE TABLE
 * (errors, which CREATE TABLE's own check makes unlikely, point at no
 * position of the statement). */
static int modify_checks(Analyze *an, const CatRelation *rel, ModifyPlan *m)
{
    if (rel->kind != REL_TABLE)
        return 0;
    const char *sql = an->sql;
    table_defaults(an, rel);
    an->sql = rel->sql;
    int n = an_table_checks(an, rel, NULL, &m->checks, &m->check_names);
    an->sql = sql;
    if (n < 0) {
        an->err->position = 0;
        return -1;
    }
    /* PostgreSQL applies them in the order of their names */
    for (int i = 1; i < n; i++)
        for (int j = i; j > 0 && strcmp(m->check_names[j - 1], m->check_names[j]) > 0; j--) {
            const char *tn = m->check_names[j];
            Expr *te = m->checks[j];
            m->check_names[j] = m->check_names[j - 1];
            m->checks[j] = m->checks[j - 1];
            m->check_names[j - 1] = tn;
            m->checks[j - 1] = te;
        }
    m->nchecks = n;
    return 0;
}

/* The value column c of rel takes when none is given: its DEFAULT (a new
 * expression each time: now() is evaluated per statement, as in
 * PostgreSQL), else NULL.  Positions of errors point at the statement. */
static Expr *default_of(Analyze *an, const CatRelation *rel, int c, int loc)
{
    Node *d = table_defaults(an, rel)[c];
    if (d == NULL)
        return null_of(an, rel->cols[c].type);
    const char *sql = an->sql;
    an->sql = rel->sql;
    Expr *e = an_default_expr(an, d, &rel->cols[c]);
    an->sql = sql;
    if (e == NULL && an->err->position > 0)
        an->err->position = loc + 1;
    return e;
}

static Expr *column_ref(Analyze *an, SlType t, int idx)
{
    Expr *e = an_mk(an, EXPR_COLUMN, t, -1, 0, NULL);
    e->index = idx;
    return e;
}

static const char *kind_noun(RelKind k)
{
    switch (k) {
    case REL_TABLE:  return "table";
    case REL_STREAM: return "stream";
    case REL_SINK:   return "sink";
    case REL_QUERY:  return "continuous query";
    case REL_VIEW:   return "view";
    case REL_SYSTEM: return "system relation";
    }
    return "relation";
}

/* RETURNING: a select list over the row as written (scope is the table's). */
static int returning(Analyze *an, List *targets, ModifyPlan *m, Query *q)
{
    if (targets == NULL)
        return 0;
    const char *saved = an->agg_refusal;
    an->agg_refusal = "RETURNING";
    Expr **exprs;
    const char **names;
    int n;
    int rc = an_target_list(an, targets, &exprs, &names, &n);
    an->agg_refusal = saved;
    if (rc < 0)
        return -1;
    m->nreturning = n;
    m->returning = exprs;
    m->returning_cols = ARENA_ARRAY(an->a, ColumnDesc, n ? n : 1);
    q->ntargets = n;
    q->names = names;
    q->types = ARENA_ARRAY(an->a, SlType, n ? n : 1);
    for (int i = 0; i < n; i++) {
        m->returning_cols[i].name = names[i];
        m->returning_cols[i].type = exprs[i]->type;
        q->types[i] = exprs[i]->type;
    }
    return 0;
}

static void finish(Analyze *an, Query *q, ModifyPlan *m, const char *tag)
{
    SL_UNUSED(an);
    q->kind = QUERY_MODIFY;
    q->tag = tag;
    q->modify = m;
}

/* The value of SET column = expression | DEFAULT (UPDATE, ON CONFLICT DO
 * UPDATE) for column idx of rel, or NULL. */
static Expr *set_value(Analyze *an, const CatRelation *rel, int idx, ResTarget *rt)
{
    if (IS_A(rt->val, SetToDefault))
        return default_of(an, rel, idx, rt->val->location);
    Expr *e = an_transform(an, rt->val);
    return e != NULL ? an_assign(an, e, rel->cols[idx].type, rt->name, rt->val->location) : NULL;
}

/* ------------------------------------------------------------- INSERT */

static int insert_columns(Analyze *an, InsertStmt *s, const CatRelation *rel, int **cols,
                          int *ncols)
{
    int n = s->cols ? list_len(s->cols) : rel->ncols;
    *cols = ARENA_ARRAY(an->a, int, n ? n : 1);
    *ncols = n;
    if (s->cols == NULL) {
        for (int c = 0; c < n; c++)
            (*cols)[c] = c;
        return 0;
    }
    for (int i = 0; i < n; i++) {
        ResTarget *rt = list_nth(s->cols, i);
        int idx = -1;
        for (int c = 0; c < rel->ncols; c++)
            if (strcmp(rel->cols[c].name, rt->name) == 0)
                idx = c;
        if (idx < 0)
            return sl_error_at(an->err, ERRCODE_UNDEFINED_COLUMN, rt->hdr.location,
                               "column \"%s\" of relation \"%s\" does not exist", rt->name,
                               rel->name);
        for (int k = 0; k < i; k++)
            if ((*cols)[k] == idx)
                return sl_error_at(an->err, ERRCODE_DUPLICATE_COLUMN, rt->hdr.location,
                                   "column \"%s\" specified more than once", rt->name);
        (*cols)[i] = idx;
    }
    return 0;
}

/* The INSERT's rows: VALUES coerced row by row, or a query under a
 * Project that puts its columns in place. */
static Plan *insert_source(Analyze *an, InsertStmt *s, const CatRelation *rel, const int *cols,
                           int ncols)
{
    SelectStmt *sel = s->select;
    int width = rel->ncols;
    if (sel == NULL || (sel->values != NULL && sel->op == SETOP_NONE && sel->sort == NULL &&
                        sel->limit == NULL && sel->offset == NULL && sel->with == NULL)) {
        int nrows = sel ? list_len(sel->values) : 1;
        Plan *p = plan_new(an->a, PLAN_VALUES, NULL, width);
        for (int c = 0; c < width; c++)
            plan_set_col(p, c, rel->cols[c].name, rel->cols[c].type, NULL);
        p->u.values.nrows = nrows;
        p->u.values.rows = ARENA_ARRAY(an->a, Expr **, nrows);
        Scope none = {.parent = NULL};
        Scope *saved = an->scope;
        const char *saved_ref = an->agg_refusal;
        an->scope = &none;
        an->agg_refusal = "VALUES";
        Plan *result = p;
        for (int r = 0; r < nrows && result; r++) {
            List *row = sel ? list_nth(sel->values, r) : NULL;
            int n = list_len(row);
            Expr **vals = ARENA_ARRAY(an->a, Expr *, width ? width : 1);
            bool *given = ARENA_ARRAY(an->a, bool, width ? width : 1);
            memset(given, 0, sizeof(bool) * (size_t)(width ? width : 1));
            if (n > ncols) {
                sl_error_at(an->err, ERRCODE_SYNTAX_ERROR, ((Node *)list_nth(row, ncols))->location,
                            "INSERT has more expressions than target columns");
                result = NULL;
                break;
            }
            if (n < ncols && s->cols != NULL) {
                ResTarget *rt = list_nth(s->cols, n);
                sl_error_at(an->err, ERRCODE_SYNTAX_ERROR, rt->hdr.location,
                            "INSERT has more target columns than expressions");
                result = NULL;
                break;
            }
            for (int i = 0; i < n; i++) {
                Node *node = list_nth(row, i);
                int c = cols[i];
                if (IS_A(node, SetToDefault))
                    continue;
                Expr *e = an_transform(an, node);
                if (e == NULL || (e = an_assign(an, e, rel->cols[c].type, rel->cols[c].name,
                                                node->location)) == NULL) {
                    result = NULL;
                    break;
                }
                vals[c] = e;
                given[c] = true;
            }
            for (int c = 0; c < width && result != NULL; c++)
                if (!given[c] && (vals[c] = default_of(an, rel, c, s->hdr.location)) == NULL)
                    result = NULL;
            p->u.values.rows[r] = vals;
        }
        an->scope = saved;
        an->agg_refusal = saved_ref;
        return result;
    }
    Plan *q = an_select(an, sel, NULL);
    if (q == NULL)
        return NULL;
    if (q->ncols > ncols) {
        sl_error_at(an->err, ERRCODE_SYNTAX_ERROR, sel->hdr.location,
                    "INSERT has more expressions than target columns");
        return NULL;
    }
    if (q->ncols < ncols && s->cols != NULL) {
        sl_error_at(an->err, ERRCODE_SYNTAX_ERROR, ((ResTarget *)list_nth(s->cols, q->ncols))->hdr.location,
                    "INSERT has more target columns than expressions");
        return NULL;
    }
    Plan *p = plan_new(an->a, PLAN_PROJECT, q, width);
    p->u.project.exprs = ARENA_ARRAY(an->a, Expr *, width ? width : 1);
    for (int c = 0; c < width; c++) {
        p->u.project.exprs[c] = NULL;
        plan_set_col(p, c, rel->cols[c].name, rel->cols[c].type, NULL);
    }
    for (int i = 0; i < q->ncols; i++) {
        int c = cols[i];
        Expr *e = column_ref(an, q->cols[i].type, i);
        if ((e = an_assign(an, e, rel->cols[c].type, rel->cols[c].name, sel->hdr.location)) ==
            NULL)
            return NULL;
        p->u.project.exprs[c] = e;
    }
    for (int c = 0; c < width; c++)
        if (p->u.project.exprs[c] == NULL &&
            (p->u.project.exprs[c] = default_of(an, rel, c, s->hdr.location)) == NULL)
            return NULL;
    return p;
}

static int on_conflict(Analyze *an, InsertStmt *s, const CatRelation *rel, ModifyPlan *m)
{
    OnConflictClause *oc = s->on_conflict;
    int loc = oc->hdr.location;
    if (rel->kind != REL_TABLE || rel->npk == 0)
        return sl_error(an->err, ERRCODE_INVALID_COLUMN_REFERENCE,
                        "there is no unique or exclusion constraint matching the ON CONFLICT "
                        "specification");
    if (oc->infer == NULL && oc->action == ONCONFLICT_UPDATE) {
        sl_error_at(an->err, ERRCODE_SYNTAX_ERROR, loc,
                    "ON CONFLICT DO UPDATE requires inference specification or constraint "
                    "name");
        sl_error_hint(an->err, "For example, ON CONFLICT (column_name).");
        return -1;
    }
    if (oc->infer != NULL) {
        /* the named columns must be the primary key's, in any order */
        bool match = list_len(oc->infer) == rel->npk;
        for (int i = 0; i < list_len(oc->infer) && match; i++) {
            ColumnRef *cr = list_nth(oc->infer, i);
            const char *name = list_nth(cr->names, 0);
            int idx = -1;
            for (int c = 0; c < rel->ncols; c++)
                if (strcmp(rel->cols[c].name, name) == 0)
                    idx = c;
            if (idx < 0)
                return sl_error_at(an->err, ERRCODE_UNDEFINED_COLUMN, cr->hdr.location,
                                   "column \"%s\" does not exist", name);
            bool in_pk = false;
            for (int k = 0; k < rel->npk; k++)
                in_pk |= rel->pk[k] == idx;
            match &= in_pk;
        }
        if (!match)
            return sl_error(an->err, ERRCODE_INVALID_COLUMN_REFERENCE,
                            "there is no unique or exclusion constraint matching the ON "
                            "CONFLICT specification");
    }
    m->conflict = oc->action;
    if (oc->action != ONCONFLICT_UPDATE)
        return 0;
    /* SET and WHERE see the existing row (the table's name or alias) and
     * the proposed one (excluded) */
    int n = rel->ncols;
    Plan *rows = plan_new(an->a, PLAN_VALUES, NULL, 2 * n);
    const char *refname = s->relation->alias ? s->relation->alias : rel->name;
    ScopeItem *mine = ARENA_NEW(an->a, ScopeItem), *exc = ARENA_NEW(an->a, ScopeItem);
    *mine = (ScopeItem){refname, true, true, false, n, NULL, NULL, rel};
    *exc = (ScopeItem){"excluded", true, true, false, n, NULL, NULL, rel};
    mine->colnames = ARENA_ARRAY(an->a, const char *, n);
    mine->colidx = ARENA_ARRAY(an->a, int, n);
    exc->colnames = mine->colnames;
    exc->colidx = ARENA_ARRAY(an->a, int, n);
    for (int c = 0; c < n; c++) {
        mine->colnames[c] = rel->cols[c].name;
        mine->colidx[c] = c;
        exc->colidx[c] = n + c;
        plan_set_col(rows, c, rel->cols[c].name, rel->cols[c].type, refname);
        plan_set_col(rows, n + c, rel->cols[c].name, rel->cols[c].type, "excluded");
    }
    Scope sc = {.parent = NULL, .from = rows};
    sc.items = list_append(an->a, list_append(an->a, NULL, mine), exc);
    Scope *saved = an->scope;
    const char *saved_ref = an->agg_refusal;
    an->scope = &sc;
    an->agg_refusal = "ON CONFLICT";
    int rc = -1;
    m->conflict_set = arena_zalloc(an->a, sizeof(Expr *) * (size_t)(n ? n : 1));
    for (int i = 0; i < list_len(oc->targets); i++) {
        ResTarget *rt = list_nth(oc->targets, i);
        int idx = -1;
        for (int c = 0; c < n; c++)
            if (strcmp(rel->cols[c].name, rt->name) == 0)
                idx = c;
        if (idx < 0) {
            sl_error_at(an->err, ERRCODE_UNDEFINED_COLUMN, rt->hdr.location,
                        "column \"%s\" of relation \"%s\" does not exist", rt->name, rel->name);
            goto out;
        }
        if (m->conflict_set[idx] != NULL) {
            sl_error(an->err, ERRCODE_SYNTAX_ERROR, "multiple assignments to same column \"%s\"",
                     rt->name);
            goto out;
        }
        for (int k = 0; k < rel->npk; k++)
            if (rel->pk[k] == idx) {
                sl_error_at(an->err, ERRCODE_FEATURE_NOT_SUPPORTED, rt->hdr.location,
                            "ON CONFLICT DO UPDATE cannot change the primary key column "
                            "\"%s\" yet",
                            rt->name);
                goto out;
            }
        Expr *e = set_value(an, rel, idx, rt);
        if (e == NULL)
            goto out;
        m->conflict_set[idx] = e;
    }
    if (oc->where != NULL &&
        (m->conflict_where = an_to_boolean(an, an_transform(an, oc->where), "WHERE")) == NULL)
        goto out;
    rc = 0;
out:
    an->scope = saved;
    an->agg_refusal = saved_ref;
    return rc;
}

int an_insert_stmt(Analyze *an, InsertStmt *s, Query *q)
{
    const CatRelation *rel = an_lookup_relation(an, s->relation->schema, s->relation->name,
                                                s->relation->hdr.location, false);
    if (rel == NULL)
        return -1;
    if (rel->kind != REL_TABLE && rel->kind != REL_STREAM) {
        sl_error_at(an->err, ERRCODE_WRONG_OBJECT_TYPE, s->relation->hdr.location,
                    "cannot insert into %s \"%s\"", kind_noun(rel->kind), rel->name);
        if (rel->kind == REL_VIEW)
            sl_error_detail(an->err, "Views are read-only in sluice.");
        return -1;
    }
    int *cols, ncols;
    if (insert_columns(an, s, rel, &cols, &ncols) < 0)
        return -1;
    ModifyPlan *m = ARENA_NEW(an->a, ModifyPlan);
    m->kind = MODIFY_INSERT;
    m->rel = rel;
    m->oid = rel->oid;
    if ((m->source = insert_source(an, s, rel, cols, ncols)) == NULL)
        return -1;
    if (s->on_conflict != NULL && on_conflict(an, s, rel, m) < 0)
        return -1;
    if (modify_checks(an, rel, m) < 0)
        return -1;
    if (s->returning != NULL) {
        Scope sc = {.parent = NULL};
        const CatRelation *r2;
        if (an_target_relation(an, s->relation, false, &r2, &sc) < 0)
            return -1;
        Scope *saved = an->scope;
        an->scope = &sc;
        int rc = returning(an, s->returning, m, q);
        an->scope = saved;
        if (rc < 0)
            return -1;
    }
    finish(an, q, m, "INSERT");
    return 0;
}

/* ------------------------------------------------------ UPDATE, DELETE */

static int modify_target(Analyze *an, RangeVar *rv, const char *verb, Scope *sc,
                         const CatRelation **rel)
{
    if (an_target_relation(an, rv, true, rel, sc) < 0)
        return -1;
    if ((*rel)->kind != REL_TABLE) {
        sl_error_at(an->err, ERRCODE_WRONG_OBJECT_TYPE, rv->hdr.location,
                    "cannot %s %s \"%s\"", verb, kind_noun((*rel)->kind), (*rel)->name);
        if ((*rel)->kind == REL_STREAM)
            sl_error_detail(an->err, "Streams are append-only.");
        else if ((*rel)->kind == REL_VIEW)
            sl_error_detail(an->err, "Views are read-only in sluice.");
        return -1;
    }
    return 0;
}

/* WHERE of UPDATE/DELETE over the scan; returns the filtered plan. */
static Plan *modify_where(Analyze *an, Node *where, Plan *scan)
{
    if (where == NULL)
        return scan;
    const char *saved = an->agg_refusal;
    an->agg_refusal = "WHERE";
    Expr *w = an_to_boolean(an, an_transform(an, where), "WHERE");
    an->agg_refusal = saved;
    if (w == NULL)
        return NULL;
    return plan_push_filter(an->a, scan, w);
}

/* UPDATE ... FROM, DELETE ... USING: the source [key, ...] p keeps the
 * first row of each target row (PostgreSQL updates or deletes a row once,
 * whichever joined row it meets first). */
static Plan *once_per_row(Analyze *an, Plan *p)
{
    Plan *d = plan_new(an->a, PLAN_DISTINCT, p, p->ncols);
    for (int c = 0; c < p->ncols; c++)
        plan_set_col(d, c, p->cols[c].name, p->cols[c].type, p->quals[c]);
    d->u.distinct.nkeys = 1;
    d->u.distinct.keys = ARENA_ARRAY(an->a, int, 1);
    d->u.distinct.keys[0] = 0;
    return d;
}

/* RETURNING of a statement with FROM / USING: over the target's row only
 * (tsc), a column of the other relations refused (0A000). */
static int returning_target(Analyze *an, List *targets, ModifyPlan *m, Query *q, Scope *tsc,
                            bool joined)
{
    Scope *saved = an->scope;
    an->scope = tsc;
    int rc = returning(an, targets, m, q);
    an->scope = saved;
    if (rc < 0 && joined && (strcmp(an->err->sqlstate, ERRCODE_UNDEFINED_TABLE) == 0 ||
                             strcmp(an->err->sqlstate, ERRCODE_UNDEFINED_COLUMN) == 0)) {
        int pos = an->err->position;
        sl_error_clear(an->err);
        sl_error_at(an->err, ERRCODE_FEATURE_NOT_SUPPORTED, pos > 0 ? pos - 1 : -1,
                    "RETURNING of UPDATE ... FROM or DELETE ... USING can read only the "
                    "columns of the table it changes yet");
    }
    return rc;
}

int an_update_stmt(Analyze *an, UpdateStmt *s, Query *q)
{
    Scope sc = {.parent = NULL};
    const CatRelation *rel;
    if (modify_target(an, s->relation, "update", &sc, &rel) < 0)
        return -1;
    Scope tsc = sc;
    if (s->from != NULL && an_target_from(an, s->from, &sc) < 0)
        return -1;
    Scope *saved = an->scope;
    const char *saved_ref = an->agg_refusal;
    an->scope = &sc;
    int rc = -1;
    int n = rel->ncols;
    Plan *scan = sc.from;
    Expr **set = arena_zalloc(an->a, sizeof(Expr *) * (size_t)(n ? n : 1));
    an->agg_refusal = "UPDATE";
    for (int i = 0; i < list_len(s->targets); i++) {
        ResTarget *rt = list_nth(s->targets, i);
        int idx = -1;
        for (int c = 0; c < n; c++)
            if (strcmp(rel->cols[c].name, rt->name) == 0)
                idx = c;
        if (idx < 0) {
            sl_error_at(an->err, ERRCODE_UNDEFINED_COLUMN, rt->hdr.location,
                        "column \"%s\" of relation \"%s\" does not exist", rt->name, rel->name);
            goto out;
        }
        if (set[idx] != NULL) {
            sl_error(an->err, ERRCODE_SYNTAX_ERROR, "multiple assignments to same column \"%s\"",
                     rt->name);
            goto out;
        }
        Expr *e = set_value(an, rel, idx, rt);
        if (e == NULL)
            goto out;
        set[idx] = e;
    }
    an->agg_refusal = saved_ref;
    Plan *filtered = modify_where(an, s->where, scan);
    if (filtered == NULL)
        goto out;
    ModifyPlan *m = ARENA_NEW(an->a, ModifyPlan);
    m->kind = MODIFY_UPDATE;
    m->rel = rel;
    m->oid = rel->oid;
    Plan *p = plan_new(an->a, PLAN_PROJECT, filtered, n + 1);
    p->u.project.exprs = ARENA_ARRAY(an->a, Expr *, n + 1);
    p->u.project.exprs[0] = column_ref(an, sl_type(TYPE_BYTEA), n);
    plan_set_col(p, 0, "ctid", sl_type(TYPE_BYTEA), NULL);
    for (int c = 0; c < n; c++) {
        p->u.project.exprs[c + 1] = set[c] ? set[c] : column_ref(an, rel->cols[c].type, c);
        plan_set_col(p, c + 1, rel->cols[c].name, rel->cols[c].type, NULL);
    }
    m->source = s->from != NULL ? once_per_row(an, p) : p;
    if (modify_checks(an, rel, m) < 0 ||
        returning_target(an, s->returning, m, q, &tsc, s->from != NULL) < 0)
        goto out;
    finish(an, q, m, "UPDATE");
    rc = 0;
out:
    an->scope = saved;
    an->agg_refusal = saved_ref;
    return rc;
}

int an_delete_stmt(Analyze *an, DeleteStmt *s, Query *q)
{
    Scope sc = {.parent = NULL};
    const CatRelation *rel;
    if (modify_target(an, s->relation, "delete from", &sc, &rel) < 0)
        return -1;
    Scope tsc = sc;
    if (s->using_list != NULL && an_target_from(an, s->using_list, &sc) < 0)
        return -1;
    Scope *saved = an->scope;
    an->scope = &sc;
    int rc = -1;
    int n = rel->ncols;
    Plan *filtered = modify_where(an, s->where, sc.from);
    if (filtered == NULL)
        goto out;
    ModifyPlan *m = ARENA_NEW(an->a, ModifyPlan);
    m->kind = MODIFY_DELETE;
    m->rel = rel;
    m->oid = rel->oid;
    Plan *p = plan_new(an->a, PLAN_PROJECT, filtered, n + 1);
    p->u.project.exprs = ARENA_ARRAY(an->a, Expr *, n + 1);
    p->u.project.exprs[0] = column_ref(an, sl_type(TYPE_BYTEA), n);
    plan_set_col(p, 0, "ctid", sl_type(TYPE_BYTEA), NULL);
    for (int c = 0; c < n; c++) {
        p->u.project.exprs[c + 1] = column_ref(an, rel->cols[c].type, c);
        plan_set_col(p, c + 1, rel->cols[c].name, rel->cols[c].type, NULL);
    }
    m->source = s->using_list != NULL ? once_per_row(an, p) : p;
    if (returning_target(an, s->returning, m, q, &tsc, s->using_list != NULL) < 0)
        goto out;
    finish(an, q, m, "DELETE");
    rc = 0;
out:
    an->scope = saved;
    return rc;
}

/* ------------------------------------------------------------------ COPY */

/* An option's value as text: a string, a number, a word or a boolean
 * (NULL when the option has no value). */
static const char *copy_opt_text(const DefElem *d)
{
    if (d->arg == NULL)
        return NULL;
    if (d->arg->tag == T_A_Const)
        return ((const A_Const *)d->arg)->text;
    if (d->arg->tag == T_ColumnRef)
        return list_nth(((const ColumnRef *)d->arg)->names, 0);
    return NULL;
}

static int copy_options(Analyze *an, CopyStmt *s, CopySpec *c)
{
    const char *delim = NULL;
    for (int i = 0; i < list_len(s->options); i++) {
        const DefElem *d = list_nth(s->options, i);
        const char *v = copy_opt_text(d);
        if (strcmp(d->name, "format") == 0) {
            if (v != NULL && strcasecmp(v, "csv") == 0)
                c->csv = true;
            else if (v != NULL && strcasecmp(v, "text") == 0)
                c->csv = false;
            else if (v != NULL && strcasecmp(v, "binary") == 0)
                c->binary = true;
            else
                return sl_error_at(an->err, ERRCODE_INVALID_PARAMETER_VALUE, d->hdr.location,
                                   "COPY format \"%s\" not recognized", v ? v : "");
        } else if (strcmp(d->name, "binary") == 0 && v == NULL) {
            c->binary = true;       /* the old syntax: COPY t FROM STDIN BINARY */
        } else if (strcmp(d->name, "header") == 0) {
            c->header = v == NULL || strcasecmp(v, "true") == 0 || strcasecmp(v, "on") == 0 ||
                        strcmp(v, "1") == 0;
        } else if (strcmp(d->name, "delimiter") == 0) {
            if (v == NULL || strlen(v) != 1)
                return sl_error_at(an->err, ERRCODE_FEATURE_NOT_SUPPORTED, d->hdr.location,
                                   "COPY delimiter must be a single one-byte character");
            delim = v;
        } else if (strcmp(d->name, "null") == 0) {
            if (v == NULL)
                return sl_error_at(an->err, ERRCODE_SYNTAX_ERROR, d->hdr.location,
                                   "null requires a parameter");
            c->null_string = v;
        } else {
            return sl_error_at(an->err, ERRCODE_SYNTAX_ERROR, d->hdr.location,
                               "option \"%s\" not recognized", d->name);
        }
    }
    c->delimiter = delim ? delim[0] : c->csv ? ',' : '\t';
    if (c->null_string == NULL)
        c->null_string = c->csv ? "" : "\\N";
    /* HEADER in text format too, as PostgreSQL 15 has it. */
    if (c->binary && s->to)
        return sl_error(an->err, ERRCODE_FEATURE_NOT_SUPPORTED,
                        "COPY TO in binary format is not supported yet");
    if (c->binary && (c->header || delim != NULL))
        return sl_error(an->err, ERRCODE_SYNTAX_ERROR,
                        "cannot specify HEADER or DELIMITER in BINARY mode");
    return 0;
}

int an_copy_stmt(Analyze *an, CopyStmt *s, Query *q)
{
    const char *want = s->to ? "stdout" : "stdin";
    if (strcasecmp(s->target, want) != 0)
        return sl_error_at(an->err, ERRCODE_FEATURE_NOT_SUPPORTED, s->target_loc,
                           "COPY %s a file is not supported", s->to ? "to" : "from");
    CopySpec *c = ARENA_NEW(an->a, CopySpec);
    c->to = s->to;
    if (copy_options(an, s, c) < 0)
        return -1;
    if (s->subscribe != NULL) {
        /* COPY (SUBSCRIBE ...) TO STDOUT: run by the server as SUBSCRIBE is
         * (rt_subscribe_name), its rows in COPY's default text format. */
        if (c->csv || c->header || c->delimiter != '\t' || strcmp(c->null_string, "\\N") != 0)
            return sl_error_at(an->err, ERRCODE_FEATURE_NOT_SUPPORTED, s->hdr.location,
                               "COPY (SUBSCRIBE) with options other than FORMAT text is not "
                               "supported yet");
        return an_other_stmt(an, &s->subscribe->hdr, q);
    }
    q->kind = QUERY_COPY;
    q->tag = "COPY";
    q->copy = c;
    if (s->query != NULL) {
        c->query = ARENA_NEW(an->a, Query);
        return an_select_stmt(an, s->query, c->query);
    }
    const CatRelation *rel = an_lookup_relation(an, s->relation->schema, s->relation->name,
                                                s->relation->hdr.location, false);
    if (rel == NULL)
        return -1;
    if (rel->kind != REL_TABLE && rel->kind != REL_STREAM)
        return sl_error_at(an->err, ERRCODE_WRONG_OBJECT_TYPE, s->relation->hdr.location,
                           "cannot copy %s %s \"%s\"", s->to ? "from" : "to",
                           kind_noun(rel->kind), rel->name);
    an_add_dep(an, rel);
    c->rel = rel;
    int n = s->columns ? list_len(s->columns) : rel->ncols;
    c->ncols = n;
    c->attnums = ARENA_ARRAY(an->a, int, n ? n : 1);
    for (int i = 0; i < n; i++) {
        if (s->columns == NULL) {
            c->attnums[i] = i;
            continue;
        }
        const ColumnRef *cr = list_nth(s->columns, i);
        const char *name = list_nth(cr->names, 0);
        int idx = -1;
        for (int k = 0; k < rel->ncols; k++)
            if (strcmp(rel->cols[k].name, name) == 0)
                idx = k;
        if (idx < 0)
            return sl_error_at(an->err, ERRCODE_UNDEFINED_COLUMN, cr->hdr.location,
                               "column \"%s\" of relation \"%s\" does not exist", name,
                               rel->name);
        for (int k = 0; k < i; k++)
            if (c->attnums[k] == idx)
                return sl_error_at(an->err, ERRCODE_DUPLICATE_COLUMN, cr->hdr.location,
                                   "column \"%s\" specified more than once", name);
        c->attnums[i] = idx;
    }
    /* COPY FROM does not evaluate CHECK constraints yet */
    ModifyPlan probe = {0};
    if (!s->to && modify_checks(an, rel, &probe) < 0)
        return -1;
    if (probe.nchecks > 0) {
        sl_error_at(an->err, ERRCODE_FEATURE_NOT_SUPPORTED, s->hdr.location,
                    "COPY FROM into a table with CHECK constraints is not supported yet");
        sl_error_hint(an->err, "Use INSERT.");
        return -1;
    }
    /* COPY FROM fills a column it does not name with NULL: one with a
     * DEFAULT would get the wrong value */
    Node **dflt = !s->to && rel->kind == REL_TABLE ? table_defaults(an, rel) : NULL;
    for (int k = 0; dflt != NULL && k < rel->ncols; k++) {
        bool named = false;
        for (int i = 0; i < n; i++)
            named |= c->attnums[i] == k;
        if (!named && dflt[k] != NULL) {
            sl_error_at(an->err, ERRCODE_FEATURE_NOT_SUPPORTED, s->hdr.location,
                        "COPY FROM that leaves out column \"%s\", which has a DEFAULT, is not "
                        "supported yet", rel->cols[k].name);
            sl_error_hint(an->err, "Name every column with a DEFAULT, or use INSERT.");
            return -1;
        }
    }
    return 0;
}
