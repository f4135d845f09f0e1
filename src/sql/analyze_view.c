/*
 * analyze_view.c -- views: CREATE [OR REPLACE] VIEW, and a view read in FROM.
 *
 *   an_create_view   CREATE [OR REPLACE] VIEW name [(columns)] AS query ->
 *                    the relation to create (kind REL_VIEW, its columns the
 *                    query's, its sql the statement)
 *   an_view_plan     a view in FROM -> the plan of its query, analyzed anew
 *                    for this reference
 *   sql_view_query   the text of a view's query (pg_get_viewdef)
 *
 * A view keeps no rows: its catalog entry keeps the CREATE VIEW statement,
 * and every reference parses and analyzes its query again, as a subquery
 * in FROM with the view's name as its alias (PostgreSQL's rewriter inlines
 * a view the same way).  So a continuous query that reads a view runs the
 * view's query inlined into its own.  The relations the view reads are
 * recorded as dependencies read with the view owner's rights (Analyze.
 * as_role), the view itself with the reader's: the runtime checks SELECT on
 * each with the right role (src/runtime/roles.c).  A view is analyzed in
 * no scope: it sees neither the enclosing query's WITH queries nor its
 * columns.
 */
#include "sql/analyze_int.h"
#include "sql/parser.h"

#include <stdio.h>

/* PostgreSQL has no such limit: its rewriter stops a cycle of views
 * ("infinite recursion detected in rules"); a view can only name views
 * that exist, so a cycle needs CREATE OR REPLACE. */
#define MAX_VIEW_DEPTH 32

static int check_names(Analyze *an, CreateViewStmt *c, const Plan *plan, const char **names)
{
    int n = list_len(c->colnames);
    if (n > plan->ncols)
        return sl_error(an->err, ERRCODE_SYNTAX_ERROR,
                        "CREATE VIEW specifies more column names than columns");
    for (int i = 0; i < plan->ncols; i++) {
        if (i < n) {
            ColumnRef *cr = list_nth(c->colnames, i);
            names[i] = list_nth(cr->names, 0);
        } else {
            names[i] = plan->cols[i].name;
        }
    }
    for (int i = 0; i < plan->ncols; i++)
        for (int k = 0; k < i; k++)
            if (strcmp(names[k], names[i]) == 0)
                return sl_error(an->err, ERRCODE_DUPLICATE_COLUMN,
                                "column \"%s\" specified more than once", names[i]);
    return 0;
}

int an_create_view(Analyze *an, CreateViewStmt *c, Query *q)
{
    if (c->name->schema != NULL && strcmp(c->name->schema, "public") != 0)
        return sl_error_at(an->err, ERRCODE_INVALID_SCHEMA_NAME, c->name->hdr.location,
                           "schema \"%s\" does not exist", c->name->schema);
    Plan *plan = an_select(an, c->query, NULL);
    if (plan == NULL)
        return -1;
    /* a view is stored, never bound: PostgreSQL analyzes it with no
     * parameters */
    if (an->nparams > 0)
        return sl_error(an->err, ERRCODE_UNDEFINED_PARAMETER, "there is no parameter $%d",
                        an->nparams);
    const char **names = ARENA_ARRAY(an->a, const char *, plan->ncols > 0 ? plan->ncols : 1);
    if (check_names(an, c, plan, names) < 0)
        return -1;
    CatRelation *def = ARENA_NEW(an->a, CatRelation);
    def->name = c->name->name;
    def->kind = REL_VIEW;
    def->ncols = plan->ncols;
    def->cols = ARENA_ARRAY(an->a, CatColumn, plan->ncols > 0 ? plan->ncols : 1);
    for (int i = 0; i < plan->ncols; i++) {
        def->cols[i].name = names[i];
        def->cols[i].not_null = false;
        /* a literal of unknown type is text in a view (PostgreSQL 10 on) */
        def->cols[i].type = plan->cols[i].type.id == TYPE_UNKNOWN ? sl_type(TYPE_TEXT)
                                                                  : plan->cols[i].type;
    }
    def->options = "{}";
    const RawStmt *raw = an->raw;
    def->sql = raw ? arena_strndup(an->a, an->sql + raw->start, (size_t)(raw->end - raw->start))
                   : "";
    q->kind = QUERY_CREATE;
    q->tag = "CREATE VIEW";
    q->create = def;
    q->or_replace = c->or_replace;
    q->plan = plan;
    return 0;
}

/* The CREATE VIEW statement of view rel, parsed into a; NULL (XX001) when
 * its text is not one. */
static CreateViewStmt *view_stmt(Arena *a, const CatRelation *rel, SlError *err)
{
    List *stmts = NULL;
    if (sql_parse(a, rel->sql, (int)strlen(rel->sql), &stmts, err) < 0)
        return NULL;
    const RawStmt *raw = list_len(stmts) == 1 ? list_nth(stmts, 0) : NULL;
    if (raw == NULL || !IS_A(raw->stmt, CreateViewStmt)) {
        sl_error(err, ERRCODE_DATA_CORRUPTED, "view \"%s\" has no query text", rel->name);
        return NULL;
    }
    return (CreateViewStmt *)raw->stmt;
}

const char *sql_view_query(Arena *a, const CatRelation *rel)
{
    SlError err = {0};
    CreateViewStmt *c = view_stmt(a, rel, &err);
    sl_error_clear(&err);
    if (c == NULL)
        return NULL;
    const char *s = rel->sql + c->query->hdr.location;
    size_t n = strlen(s);
    while (n > 0 && (s[n - 1] == ';' || s[n - 1] == ' ' || s[n - 1] == '\n' ||
                     s[n - 1] == '\t' || s[n - 1] == '\r'))
        n--;
    return arena_strndup(a, s, n);
}

Plan *an_view_plan(Analyze *an, const CatRelation *rel, int loc)
{
    if (an->view_depth >= MAX_VIEW_DEPTH) {
        sl_error_at(an->err, ERRCODE_INVALID_OBJECT_DEFINITION, loc,
                    "infinite recursion detected in rules for relation \"%s\"", rel->name);
        return NULL;
    }
    CreateViewStmt *c = view_stmt(an->a, rel, an->err);
    if (c == NULL)
        return NULL;
    /* the view's query in no scope, its text its own, its relations read
     * with its owner's rights */
    const char *sql = an->sql;
    CteScope *ctes = an->ctes;
    uint32_t as = an->as_role;
    an->sql = rel->sql;
    an->ctes = NULL;
    an->as_role = rel->owner;
    an->view_depth++;
    Plan *p = an_select(an, c->query, NULL);
    an->view_depth--;
    an->sql = sql;
    an->ctes = ctes;
    an->as_role = as;
    if (p == NULL) {
        /* a position would point into the view's text, not the statement's */
        an->err->position = 0;
        return NULL;
    }
    /* A view it reads may have gained columns since (OR REPLACE adds them
     * at the end): a * in its query stands for the columns it stood for
     * at CREATE, as PostgreSQL's stored query keeps them. */
    bool same = p->ncols >= rel->ncols;
    for (int i = 0; same && i < rel->ncols; i++)
        same = p->cols[i].type.id == rel->cols[i].type.id ||
               (p->cols[i].type.id == TYPE_UNKNOWN && rel->cols[i].type.id == TYPE_TEXT);
    if (!same) {
        sl_error_at(an->err, ERRCODE_OBJECT_NOT_IN_PREREQUISITE_STATE, loc,
                    "view \"%s\" no longer matches the relations it reads", rel->name);
        sl_error_hint(an->err, "Create the view again (CREATE OR REPLACE VIEW).");
        return NULL;
    }
    if (p->ncols > rel->ncols) {
        Expr **exprs = ARENA_ARRAY(an->a, Expr *, rel->ncols > 0 ? rel->ncols : 1);
        const char **names = ARENA_ARRAY(an->a, const char *, rel->ncols > 0 ? rel->ncols : 1);
        for (int i = 0; i < rel->ncols; i++) {
            exprs[i] = an_column_expr(an, p, i, loc);
            names[i] = p->cols[i].name;
        }
        p = an_project(an, p, exprs, names, rel->ncols);
    }
    return p;
}
