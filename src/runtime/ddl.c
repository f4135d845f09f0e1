/*
 * ddl.c -- CREATE and DROP of tables, streams and continuous queries.
 *
 *   rt_run_create   CREATE TABLE / STREAM / SINK [IF NOT EXISTS]
 *   rt_run_drop     DROP TABLE / STREAM / SINK [IF EXISTS] name, ...
 *
 * The catalog (SQLite) holds a relation's definition, RocksDB its rows.
 * CREATE writes the catalog entry and then clears any rows a crash may have
 * left under the new oid; DROP checks every name first (so a missing one
 * drops nothing), then for each deletes its rows and then its entry, so a
 * crash in between leaves an empty relation, never rows without an owner.
 *
 * A Kafka stream's options are checked at CREATE (kafka_source_validate, no
 * I/O), and it gets a dead-letter stream <name>_dead_letters for the
 * records it cannot decode (rt_dead_letters_create); DROP STREAM drops that
 * one with it.
 */
#include "runtime_int.h"
#include "sluice/kafka.h"
#include "sluice/options.h"
#include "sluice/relstore.h"

#include <stdio.h>

/* The connector option of a relation, copied into buf ("" when none). */
static const char *connector_of(const CatRelation *rel, char *buf, size_t len)
{
    Arena a;
    arena_init(&a, 512);
    Options o;
    SlError ignore = {0};
    buf[0] = '\0';
    if (opts_parse(&a, rel->options, &o, &ignore) == 0 && opts_get(&o, "connector") != NULL)
        snprintf(buf, len, "%s", opts_get(&o, "connector"));
    sl_error_clear(&ignore);
    arena_destroy(&a);
    return buf;
}

/* Creates <stream>_dead_letters (raw bytea, source text, position bigint,
 * reason text, time timestamptz) unless it exists.  The one place that
 * knows the layout; branch ingest has the same for files streams. */
static int rt_dead_letters_create(Catalog *cat, StateStore *st, const CatRelation *rel,
                                  SlError *err)
{
    static const struct { const char *name; SlTypeId type; } cols[] = {
        {"raw", TYPE_BYTEA}, {"source", TYPE_TEXT}, {"position", TYPE_INT8},
        {"reason", TYPE_TEXT}, {"time", TYPE_TIMESTAMPTZ},
    };
    Arena a;
    arena_init(&a, 1024);
    CatRelation *d = ARENA_NEW(&a, CatRelation);
    d->name = arena_printf(&a, "%s_dead_letters", rel->name);
    d->kind = REL_STREAM;
    d->ncols = (int)SL_ARRAY_LEN(cols);
    d->cols = ARENA_ARRAY(&a, CatColumn, d->ncols);
    for (int i = 0; i < d->ncols; i++) {
        d->cols[i].name = cols[i].name;
        d->cols[i].type = (SlType){cols[i].type, -1};
        d->cols[i].not_null = false;
    }
    d->sql = arena_printf(&a, "CREATE STREAM %s (raw bytea, source text, position bigint, "
                              "reason text, time timestamptz)", d->name);
    d->options = arena_printf(&a, "{\"dead_letters_of\": \"%s\"}", rel->name);
    int rc = 0;
    const CatRelation *made;
    if (cat_lookup(cat, d->name) == NULL)
        rc = cat_create_relation(cat, d, &made, err) < 0 || rel_purge(st, made, err) < 0 ? -1
                                                                                         : 0;
    arena_destroy(&a);
    return rc;
}

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
    char conn[32];
    bool kafka = def->kind == REL_STREAM &&
                 strcmp(connector_of(def, conn, sizeof(conn)), "kafka") == 0;
    if (kafka && kafka_source_validate(def, err) < 0)
        return -1;
    if (def->kind == REL_SINK && kafka_sink_validate(def, err) < 0)
        return -1;
    const CatRelation *rel;
    if (cat_create_relation(cat, def, &rel, err) < 0)
        return -1;
    if (rel_purge(st, rel, err) < 0)
        return -1;
    return kafka ? rt_dead_letters_create(cat, st, rel, err) : 0;
}

int rt_run_drop(const Query *q, SlError *err)
{
    Catalog *cat = rt_catalog();
    StateStore *st = rt_state();
    bool stream = q->drop_kind == OBJECT_STREAM, query = q->drop_kind == OBJECT_QUERY;
    bool sink = q->drop_kind == OBJECT_SINK;
    const char *noun = stream ? "stream" : query ? "continuous query" : sink ? "sink" : "table";
    for (int i = 0; i < q->ndrop; i++) {
        const char *name = q->drop_names[i];
        const CatRelation *rel = cat_lookup(cat, name);
        if (rel == NULL) {
            if (q->missing_ok)
                continue;
            return sl_error(err, ERRCODE_UNDEFINED_TABLE, "%s \"%s\" does not exist", noun, name);
        }
        RelKind want = stream ? REL_STREAM : query ? REL_QUERY : sink ? REL_SINK : REL_TABLE;
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
    }
    /* A stream a running continuous query reads or writes stays (2BP01). */
    for (int i = 0; i < q->ndrop; i++) {
        const CatRelation *rel = cat_lookup(cat, q->drop_names[i]);
        if (rel != NULL && (rel->kind == REL_STREAM || rel->kind == REL_SINK) &&
            rt_cq_check_drop(rel, err) < 0)
            return -1;
    }
    for (int i = 0; i < q->ndrop; i++) {
        const CatRelation *rel = cat_lookup(cat, q->drop_names[i]);
        if (rel == NULL)
            continue;
        if (rel->kind == REL_QUERY && rt_cq_stop(rel->name, err) < 0)
            return -1;
        char conn[32], dname[256];
        bool kafka = rel->kind == REL_STREAM &&
                     strcmp(connector_of(rel, conn, sizeof(conn)), "kafka") == 0;
        snprintf(dname, sizeof(dname), "%s_dead_letters", rel->name);
        if (rel_purge(st, rel, err) < 0 || cat_drop_relation(cat, rel->name, err) < 0)
            return -1;
        const CatRelation *dead = kafka ? cat_lookup(cat, dname) : NULL;
        if (dead != NULL &&
            (rel_purge(st, dead, err) < 0 || cat_drop_relation(cat, dname, err) < 0))
            return -1;
    }
    return 0;
}
