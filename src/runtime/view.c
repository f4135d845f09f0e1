/*
 * view.c -- views as statements: CREATE [OR REPLACE] VIEW, and the views
 * a DROP finds depending on a relation.
 *
 *   rt_view_create      CREATE [OR REPLACE] VIEW (the analyzed definition
 *                       in q->create: src/sql/analyze_view.c)
 *   rt_view_dependents  the views whose queries read a relation
 *   rt_view_check_replace  CREATE OR REPLACE CONTINUOUS QUERY that would
 *                       change the result columns a view reads (2BP01)
 *
 * A view is a catalog entry alone (kind REL_VIEW, its CREATE VIEW
 * statement as its sql): it has no rows in RocksDB.  OR REPLACE keeps the
 * view's oid and owner and takes PostgreSQL's rules for the new columns:
 * the old ones stay, with their names and types, in their order, and new
 * ones may follow (42P16).  A continuous query that reads a view runs the
 * view's query inlined as it was at the query's CREATE, so a running one
 * keeps the view from being replaced (2BP01).  Which views read a
 * relation is found by analyzing every view again (a view read through
 * another counts for both): DDL is rare and views few.
 */
#include "runtime_int.h"

#include <stdio.h>

/* The new definition keeps the old one's columns (PostgreSQL's
 * checkViewTupleDesc). */
static int check_columns(const CatRelation *old, const CatRelation *def, SlError *err)
{
    if (def->ncols < old->ncols)
        return sl_error(err, ERRCODE_INVALID_TABLE_DEFINITION, "cannot drop columns from view");
    for (int i = 0; i < old->ncols; i++) {
        const CatColumn *o = &old->cols[i], *n = &def->cols[i];
        if (strcmp(o->name, n->name) != 0) {
            sl_error(err, ERRCODE_INVALID_TABLE_DEFINITION,
                     "cannot change name of view column \"%s\" to \"%s\"", o->name, n->name);
            sl_error_hint(err, "Use ALTER VIEW ... RENAME COLUMN ... to change name of view "
                               "column instead.");
            return -1;
        }
        if (o->type.id != n->type.id || o->type.typmod != n->type.typmod) {
            char a[64], b[64];
            return sl_error(err, ERRCODE_INVALID_TABLE_DEFINITION,
                            "cannot change data type of view column \"%s\" from %s to %s",
                            o->name, type_format(o->type, a, sizeof(a)),
                            type_format(n->type, b, sizeof(b)));
        }
    }
    return 0;
}

int rt_view_create(Runtime *rt, const Query *q, SlError *err)
{
    Catalog *cat = rt->cat;
    const CatRelation *def = q->create, *out;
    const CatRelation *old = cat_lookup(cat, def->name);
    if (old == NULL) {
        CatRelation owned = *def;
        owned.owner = rt_owner();
        return cat_create_relation(cat, &owned, &out, err);
    }
    if (!q->or_replace)
        return sl_error(err, ERRCODE_DUPLICATE_TABLE, "relation \"%s\" already exists",
                        def->name);
    if (old->kind != REL_VIEW)
        return sl_error(err, ERRCODE_WRONG_OBJECT_TYPE, "\"%s\" is not a view", def->name);
    if (rt_check_owner(cat, old, err) < 0 || check_columns(old, def, err) < 0)
        return -1;
    const char *cq = rt_cq_dependent(rt->cq, old);
    if (cq != NULL) {
        sl_error(err, ERRCODE_DEPENDENT_OBJECTS_STILL_EXIST,
                 "cannot replace view %s because continuous query %s reads it", def->name, cq);
        sl_error_detail(err, "A continuous query runs the view's query as it was when the "
                             "continuous query was created.");
        sl_error_hint(err, "Drop continuous query %s first, or create a new view.", cq);
        return -1;
    }
    return cat_replace_relation(cat, def, &out, err);
}

typedef struct FindView {
    Runtime           *rt;
    const CatRelation *rel;     /* the relation read */
    Arena             *a;       /* where the list is made */
    List              *found;   /* of const CatRelation * */
} FindView;

static void find_view_cb(const CatRelation *v, void *arg)
{
    FindView *f = arg;
    if (v->kind != REL_VIEW || v == f->rel)
        return;
    Arena a;
    arena_init(&a, 4096);
    SlError ignore = {0};
    Query *q = NULL;
    /* a view that no longer analyzes reads nothing a DROP must keep */
    bool reads = false;
    if (rt_analyze_text(f->rt, &a, v->sql, &q, &ignore) == 0)
        for (int i = 0; i < q->ndeps && !reads; i++)
            reads = q->dep_oids[i] == f->rel->oid;
    if (reads)
        f->found = list_append(f->a, f->found, (void *)v);
    sl_error_clear(&ignore);
    arena_destroy(&a);
}

int rt_view_check_replace(Runtime *rt, const Query *q, SlError *err)
{
    const CatRelation *def = q->create, *old = cat_lookup(rt->cat, def->name);
    if (!q->or_replace || old == NULL || old->kind != def->kind)
        return 0;
    bool same = old->ncols == def->ncols;
    for (int i = 0; same && i < old->ncols; i++)
        same = strcmp(old->cols[i].name, def->cols[i].name) == 0 &&
               old->cols[i].type.id == def->cols[i].type.id;
    if (same)
        return 0;
    Arena a;
    arena_init(&a, 1024);
    List *views = rt_view_dependents(rt, old, &a);
    int rc = 0;
    if (views != NULL) {
        const char *v = ((const CatRelation *)list_nth(views, 0))->name;
        rc = sl_error(err, ERRCODE_DEPENDENT_OBJECTS_STILL_EXIST,
                      "cannot replace continuous query \"%s\": view \"%s\" reads its result "
                      "table", def->name, v);
        sl_error_detail(err, "The columns of its result table change, and the view reads "
                             "them as they were.");
        sl_error_hint(err, "Drop view \"%s\" first (and create it again after), or keep the "
                           "result columns.", v);
    }
    arena_destroy(&a);
    return rc;
}

List *rt_view_dependents(Runtime *rt, const CatRelation *rel, Arena *a)
{
    FindView f = {rt, rel, a, NULL};
    cat_foreach(rt->cat, find_view_cb, &f);
    return f.found;
}
