/*
 * alter.c -- ALTER TABLE and ALTER VIEW, from the statement's parse tree.
 *
 *   rt_run_alter   RENAME TO, RENAME [COLUMN] a TO b, ALTER [COLUMN] a
 *                  SET NOT NULL | DROP NOT NULL (the analyzer refuses the
 *                  other actions with 0A000)
 *
 * Each action changes the catalog entry only (one SQLite transaction);
 * the rows in RocksDB are stored by oid and by column position, so a new
 * name for the relation or a column leaves them as they are.  SET NOT
 * NULL reads the table first and refuses it while a row holds a NULL
 * (23502).  Only the owner (or a superuser) alters a relation (42501).
 *
 * What sluice cannot do yet is refused, never half done: sluice's views
 * and continuous queries keep the text of their queries and find the
 * relations and columns they read by name, so a relation or column they
 * read is not renamed (0A000); a table's DEFAULT and CHECK expressions
 * are kept in its CREATE TABLE text, so a table that has them keeps its
 * column names; a stream's columns and name are read by its connectors
 * and continuous queries, so ALTER TABLE of a stream is refused.
 */
#include "runtime_int.h"
#include "sluice/relstore.h"

#include <stdio.h>

/* 0A000 when a view or a running continuous query reads rel: they name it
 * (and its columns) in their text. */
static int check_readers(Runtime *rt, const CatRelation *rel, const char *what, SlError *err)
{
    Arena a;
    arena_init(&a, 1024);
    List *views = rt_view_dependents(rt, rel, &a);
    const char *reader = NULL, *noun = "view";
    if (views != NULL)
        reader = arena_strdup(&a, ((const CatRelation *)list_nth(views, 0))->name);
    else if ((reader = rt_cq_dependent(rt->cq, rel)) != NULL)
        noun = "continuous query";
    int rc = 0;
    if (reader != NULL) {
        rc = sl_error(err, ERRCODE_FEATURE_NOT_SUPPORTED, "cannot %s %s %s: %s %s reads it",
                      what, rt_relkind_noun(rel->kind), rel->name, noun, reader);
        sl_error_detail(err, "Views and continuous queries name the relations and columns "
                             "they read in their text.");
        sl_error_hint(err, "Drop %s %s first, and create it again afterwards.", noun, reader);
    }
    arena_destroy(&a);
    return rc;
}

/* Whether table rel's CREATE TABLE gives a column a DEFAULT or the table a
 * CHECK constraint (both kept as its text, which names the columns). */
static bool has_expressions(const Runtime *rt, const CatRelation *rel)
{
    if (rel->kind != REL_TABLE)
        return false;
    Arena a;
    arena_init(&a, 4096);
    List *stmts = NULL;
    SlError ignore = {0};
    bool found = false;
    SL_UNUSED(rt);
    if (rt_parse(&a, rel->sql, strlen(rel->sql), &stmts, &ignore) == 0 && list_len(stmts) == 1 &&
        IS_A(((RawStmt *)list_nth(stmts, 0))->stmt, CreateStmt)) {
        const CreateStmt *cs = (const CreateStmt *)((RawStmt *)list_nth(stmts, 0))->stmt;
        for (int i = 0; i < list_len(cs->elts) && !found; i++) {
            const Node *e = list_nth(cs->elts, i);
            if (IS_A(e, Constraint))
                found = ((const Constraint *)e)->type == CONSTR_CHECK;
            else if (IS_A(e, ColumnDef))
                for (int k = 0; k < list_len(((const ColumnDef *)e)->constraints); k++) {
                    const Constraint *c = list_nth(((const ColumnDef *)e)->constraints, k);
                    found |= c->type == CONSTR_CHECK || c->type == CONSTR_DEFAULT;
                }
        }
    }
    sl_error_clear(&ignore);
    arena_destroy(&a);
    return found;
}

static int find_column(const CatRelation *rel, const char *name)
{
    for (int c = 0; c < rel->ncols; c++)
        if (strcmp(rel->cols[c].name, name) == 0)
            return c;
    return -1;
}

/* Any row of table rel whose column c is NULL? 1 yes, 0 no, -1 error. */
static int has_null(Runtime *rt, const CatRelation *rel, int c, SlError *err)
{
    RelScan *s = tbl_scan_open(rt->st, rel, false);
    Arena a;
    arena_init(&a, 1 << 16);
    int found = 0, n;
    Batch *b;
    while (found == 0 && (n = tbl_scan_next(s, &a, &b, NULL, err)) > 0) {
        for (int r = 0; r < n && found == 0; r++)
            found = vector_is_null(&b->cols[c], (uint32_t)r) ? 1 : 0;
        arena_reset(&a);
    }
    if (found == 0 && n < 0)
        found = -1;
    SlError closing = {0};
    if (rel_scan_close(s, found < 0 ? &closing : err) < 0)
        found = -1;
    sl_error_clear(&closing);
    arena_destroy(&a);
    return found;
}

/* The relation rel with column c renamed or its NOT NULL changed, as a
 * definition in a for cat_replace_relation. */
static CatRelation *with_column(Arena *a, const CatRelation *rel, int c, const char *name,
                                bool not_null)
{
    CatRelation *def = ARENA_NEW(a, CatRelation);
    *def = *rel;
    def->cols = ARENA_ARRAY(a, CatColumn, rel->ncols > 0 ? rel->ncols : 1);
    memcpy(def->cols, rel->cols, sizeof(CatColumn) * (size_t)rel->ncols);
    def->cols[c].name = name;
    def->cols[c].not_null = not_null;
    return def;
}

int rt_run_alter(Runtime *rt, const AlterTableStmt *s, SlError *err)
{
    Catalog *cat = rt->cat;
    const char *name = s->relation->name;
    const CatRelation *rel = cat_lookup(cat, name), *out;
    if (rel == NULL) {
        if (s->missing_ok)
            return 0;
        return sl_error(err, ERRCODE_UNDEFINED_TABLE, "relation \"%s\" does not exist", name);
    }
    bool view = rel->kind == REL_VIEW;
    if (s->kind == OBJECT_VIEW && !view)
        return sl_error(err, ERRCODE_WRONG_OBJECT_TYPE, "\"%s\" is not a view", name);
    if (rel->kind == REL_STREAM) {
        sl_error(err, ERRCODE_FEATURE_NOT_SUPPORTED, "ALTER TABLE of stream \"%s\" is not "
                 "supported yet", name);
        sl_error_detail(err, "A stream's connectors and continuous queries read its name and "
                             "columns.");
        sl_error_hint(err, "Create a new stream and point its writers and queries at it.");
        return -1;
    }
    if (rel->kind != REL_TABLE && !view)
        return sl_error(err, ERRCODE_WRONG_OBJECT_TYPE, "\"%s\" is not a table", name);
    if (rt_check_owner(cat, rel, err) < 0)
        return -1;
    Arena a;
    arena_init(&a, 1024);
    int rc = -1, c = s->column != NULL ? find_column(rel, s->column) : 0;
    if (c < 0) {
        /* PostgreSQL's two messages */
        if (s->cmd == ALTER_RENAME_COLUMN)
            sl_error(err, ERRCODE_UNDEFINED_COLUMN, "column \"%s\" does not exist", s->column);
        else
            sl_error(err, ERRCODE_UNDEFINED_COLUMN,
                     "column \"%s\" of relation \"%s\" does not exist", s->column, name);
        goto out;
    }
    switch (s->cmd) {
    case ALTER_RENAME:
        if (check_readers(rt, rel, "rename", err) < 0)
            goto out;
        rc = cat_rename_relation(cat, name, s->newname, &out, err);
        break;
    case ALTER_RENAME_COLUMN:
        if (find_column(rel, s->newname) >= 0) {
            sl_error(err, ERRCODE_DUPLICATE_COLUMN,
                     "column \"%s\" of relation \"%s\" already exists", s->newname, name);
            goto out;
        }
        if (check_readers(rt, rel, "rename a column of", err) < 0)
            goto out;
        if (has_expressions(rt, rel)) {
            sl_error(err, ERRCODE_FEATURE_NOT_SUPPORTED,
                     "cannot rename a column of table %s: it has DEFAULT or CHECK expressions",
                     name);
            sl_error_detail(err, "sluice keeps them as the text of the CREATE TABLE, which "
                                 "names the columns.");
            goto out;
        }
        rc = cat_replace_relation(cat, with_column(&a, rel, c, s->newname, rel->cols[c].not_null),
                                  &out, err);
        break;
    case ALTER_SET_NOT_NULL:
    case ALTER_DROP_NOT_NULL: {
        bool set = s->cmd == ALTER_SET_NOT_NULL;
        if (view) {
            sl_error(err, ERRCODE_WRONG_OBJECT_TYPE, "ALTER action ALTER COLUMN ... %s NOT NULL "
                     "cannot be performed on relation \"%s\"", set ? "SET" : "DROP", name);
            sl_error_detail(err, "This operation is not supported for views.");
            goto out;
        }
        for (int k = 0; !set && k < rel->npk; k++)
            if (rel->pk[k] == c) {
                sl_error(err, ERRCODE_INVALID_TABLE_DEFINITION,
                         "column \"%s\" is in a primary key", s->column);
                goto out;
            }
        if (rel->cols[c].not_null == set) {
            rc = 0;
            break;
        }
        int nulls = set ? has_null(rt, rel, c, err) : 0;
        if (nulls != 0) {
            if (nulls > 0)
                sl_error(err, ERRCODE_NOT_NULL_VIOLATION,
                         "column \"%s\" of relation \"%s\" contains null values", s->column,
                         name);
            goto out;
        }
        rc = cat_replace_relation(cat, with_column(&a, rel, c, rel->cols[c].name, set), &out,
                                  err);
        break;
    }
    case ALTER_REFUSED:
        sl_error(err, ERRCODE_FEATURE_NOT_SUPPORTED, "ALTER TABLE ... %s is not supported yet",
                 s->refused);
        break;
    }
out:
    arena_destroy(&a);
    return rc;
}
