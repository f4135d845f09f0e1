/*
 * ddl.c -- CREATE and DROP of tables, streams and continuous queries.
 *
 *   rt_run_create   CREATE TABLE / STREAM [IF NOT EXISTS]
 *   rt_run_drop     DROP TABLE / STREAM [IF EXISTS] name, ...
 *
 * The catalog (SQLite) holds a relation's definition, RocksDB its rows.
 * CREATE writes the catalog entry and then clears any rows a crash may have
 * left under the new oid; DROP checks every name first (so a missing one
 * drops nothing), then for each deletes its rows and then its entry, so a
 * crash in between leaves an empty relation, never rows without an owner.
 */
#include "runtime_int.h"
#include "sluice/relstore.h"

int rt_run_create(const Query *q, SlError *err)
{
    Catalog *cat = rt_catalog();
    StateStore *st = rt_state();
    const CatRelation *def = q->create;
    if (def->kind == REL_QUERY)
        return rt_cq_create(q, err);
    if (cat_lookup(cat, def->name) != NULL) {
        if (q->if_not_exists)
            return 0;
        return sl_error(err, ERRCODE_DUPLICATE_TABLE, "relation \"%s\" already exists",
                        def->name);
    }
    CatRelation owned = *def;
    owned.owner = rt_owner();
    const CatRelation *rel;
    if (cat_create_relation(cat, &owned, &rel, err) < 0)
        return -1;
    return rel_purge(st, rel, err);
}

int rt_run_drop(const Query *q, SlError *err)
{
    Catalog *cat = rt_catalog();
    StateStore *st = rt_state();
    bool stream = q->drop_kind == OBJECT_STREAM, query = q->drop_kind == OBJECT_QUERY;
    const char *noun = stream ? "stream" : query ? "continuous query" : "table";
    for (int i = 0; i < q->ndrop; i++) {
        const char *name = q->drop_names[i];
        const CatRelation *rel = cat_lookup(cat, name);
        if (rel == NULL) {
            if (q->missing_ok)
                continue;
            return sl_error(err, ERRCODE_UNDEFINED_TABLE, "%s \"%s\" does not exist", noun, name);
        }
        RelKind want = stream ? REL_STREAM : query ? REL_QUERY : REL_TABLE;
        if (rel->kind != want) {
            sl_error(err, ERRCODE_WRONG_OBJECT_TYPE, "\"%s\" is not a %s", name, noun);
            if (rel->kind == REL_STREAM)
                sl_error_hint(err, "Use DROP STREAM to remove a stream.");
            else if (rel->kind == REL_TABLE)
                sl_error_hint(err, "Use DROP TABLE to remove a table.");
            else if (rel->kind == REL_SINK)
                sl_error_hint(err, "Use DROP SINK to remove a sink.");
            else
                sl_error_hint(err, "Use DROP CONTINUOUS QUERY to remove a continuous query.");
            return -1;
        }
        /* Only the owner (or a superuser) drops a relation. */
        if (rt_check_owner(rel, err) < 0)
            return -1;
    }
    /* A stream a running continuous query reads or writes stays (2BP01). */
    for (int i = 0; i < q->ndrop; i++) {
        const CatRelation *rel = cat_lookup(cat, q->drop_names[i]);
        if (rel != NULL && rel->kind == REL_STREAM && rt_cq_check_drop(rel, err) < 0)
            return -1;
    }
    for (int i = 0; i < q->ndrop; i++) {
        const CatRelation *rel = cat_lookup(cat, q->drop_names[i]);
        if (rel == NULL)
            continue;
        if (rel->kind == REL_QUERY && rt_cq_stop(rel->name, err) < 0)
            return -1;
        if (rel_purge(st, rel, err) < 0 || cat_drop_relation(cat, rel->name, err) < 0)
            return -1;
    }
    return 0;
}
