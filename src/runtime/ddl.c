/*
 * ddl.c -- CREATE and DROP of tables, streams, sinks, continuous queries
 * and views.
 *
 *   rt_run_create   CREATE TABLE / STREAM / SINK [IF NOT EXISTS] (a view's
 *                   and a continuous query's CREATE go to view.c, cq_ddl.c)
 *   rt_run_drop     DROP TABLE / STREAM / SINK / VIEW [IF EXISTS] name, ...
 *   rt_relkind_noun what a DROP's messages call a relation of a kind
 *                   (both on the catalog and state store of the Runtime
 *                   given: the statement's)
 *
 * The catalog (SQLite) holds a relation's definition, RocksDB its rows.
 * CREATE checks the WITH options -- their names and pairs against the
 * table of options (cat_relopts_check, src/catalog/relopts.c), then the
 * connectors' own checks, then the values' forms, then a datagen or
 * nexmark stream's values by reading them as a query will -- then writes
 * the catalog entry -- with the
 * dead-letter stream of a stream that has a format, in the same SQLite
 * transaction -- and then clears any rows a crash may have left under the
 * new oids; a CREATE that fails leaves nothing.  DROP checks every name
 * first (so a missing one drops nothing) and its owner (42501; CASCADE
 * also needs to own every continuous query it would drop), refuses a
 * relation continuous queries depend on -- its dead-letter stream's
 * included -- or views read (2BP01, but for views dropped with it) unless
 * CASCADE (which drops those queries and views first), then
 * for each deletes its rows and then its entry (with its dead-letter
 * stream, in one transaction), so a crash in between leaves an empty
 * relation, never rows without an owner.
 *
 * A Kafka stream's options are checked at CREATE (kafka_source_validate, no
 * I/O) and a sink's by its connector (sink_check), both by the rights of
 * the role that will own it (librdkafka properties, files paths:
 * hostaccess.c); a Kafka stream always gets its dead-letter stream
 * (ingest_has_dead_letters).
 */
#include "sluice/cq.h"
#include "runtime_int.h"
#include "sink.h"
#include "sluice/kafka.h"
#include "sluice/ingest.h"
#include "sluice/relstore.h"
#include "sluice/relopts.h"
#include "sluice/datagen.h"
#include "sluice/nexmark.h"

#include <stdio.h>
#include "source.h"

/* A datagen or nexmark stream's options read as a query will read them,
 * so that a bad value or a missing pair fails the CREATE STREAM, not the
 * first query over it. */
static int check_generator(const CatRelation *def, SlError *err)
{
    bool datagen = rt_connector_is(def, "datagen");
    if (def->kind != REL_STREAM || (!datagen && !rt_connector_is(def, "nexmark")))
        return 0;
    Arena a;
    arena_init(&a, 1024);
    Datagen *g;
    Nexmark *n;
    int rc = datagen ? datagen_open(&a, def, &g, err) : nexmark_open(&a, def, &n, err);
    arena_destroy(&a);
    return rc;
}

int rt_run_create(Runtime *rt, const Query *q, SlError *err)
{
    Catalog *cat = rt->cat;
    StateStore *st = rt->st;
    const CatRelation *def = q->create;
    if (def->kind == REL_QUERY)
        return rt_view_check_replace(rt, q, err) < 0 ? -1 : rt_cq_create(rt->cq, q, err);
    if (def->kind == REL_VIEW)
        return rt_view_create(rt, q, err);
    if (cat_lookup(cat, def->name) != NULL) {
        if (q->if_not_exists)
            return 0;
        return sl_error(err, ERRCODE_DUPLICATE_TABLE, "relation \"%s\" already exists",
                        def->name);
    }
    /* Which stream a dead-letter stream belongs to is the server's to say:
     * a stream claiming to be another's would go with that stream's DROP. */
    Arena oa;
    arena_init(&oa, 256);
    bool claims = def->kind == REL_STREAM && ingest_dead_letters_of(&oa, def) != NULL;
    arena_destroy(&oa);
    if (claims) {
        sl_error(err, ERRCODE_INVALID_PARAMETER_VALUE, "option \"dead_letters_of\" is reserved");
        sl_error_detail(err, "The server sets it on the dead-letter streams it makes.");
        return -1;
    }
    if (cat_relopts_check(def, RELOPTS_NAMES, err) < 0)
        return -1;
    /* the creating role owns the relation (and its dead-letter stream);
     * the checks below judge its options by that owner's rights */
    CatRelation owned[2] = {*def};
    owned[0].owner = rt_owner();
    def = &owned[0];
    SourceParts parts;
    if (def->kind == REL_STREAM && source_parts(def, &parts, err) < 0)
        return -1;
    if (def->kind == REL_STREAM && ingest_validate(rt, def, err) < 0)
        return -1;
    if (def->kind == REL_STREAM && rt_connector_is(def, "kafka") && kafka_source_validate(rt->kafka, def, err) < 0)
        return -1;
    if (def->kind == REL_SINK && sink_check(rt, def, err) < 0)
        return -1;
    if (cat_relopts_check(def, RELOPTS_VALUES, err) < 0 || check_generator(def, err) < 0)
        return -1;
    const CatRelation *defs[2] = {&owned[0], NULL}, *rels[2];
    int n = 1;
    Arena a;
    arena_init(&a, 1024);
    if (def->kind == REL_STREAM && ingest_has_dead_letters(def)) {
        owned[1] = *ingest_dead_letter_def(&a, def);
        owned[1].owner = owned[0].owner;
        defs[n++] = &owned[1];
    }
    int rc = cat_create_relations(cat, defs, n, rels, err);
    arena_destroy(&a);
    if (rc < 0)
        return -1;
    for (int i = 0; i < n; i++)
        if (rel_purge(st, rels[i], err) < 0)
            return -1;
    if (ingest_start(rt, rels[0], err) < 0) {
        const char *names[2] = {rels[0]->name, n > 1 ? rels[1]->name : NULL};
        SlError ignore = {0};
        cat_drop_relations(cat, names, n, &ignore);
        sl_error_clear(&ignore);
        return -1;
    }
    return 0;
}

/* The dead-letter stream that goes with stream rel (named after it, made
 * for it, with its owner), or NULL. */
static const CatRelation *dead_letters(Runtime *rt, const CatRelation *rel)
{
    if (rel->kind != REL_STREAM)
        return NULL;
    char dn[512];
    snprintf(dn, sizeof(dn), "%s_dead_letters", rel->name);
    const CatRelation *dead = cat_lookup(rt->cat, dn);
    Arena b;
    arena_init(&b, 256);
    const char *of = dead ? ingest_dead_letters_of(&b, dead) : NULL;
    if (of == NULL || strcmp(of, rel->name) != 0 || dead->owner != rel->owner)
        dead = NULL;
    arena_destroy(&b);
    return dead;
}

/* How deep CASCADE follows queries that read queries' result tables. */
#define CASCADE_DEPTH 32

/* CASCADE drops the continuous queries that use rel, and those that read
 * theirs, and so on: each must be the current role's (or the role a
 * superuser), as DROP of it would need; -1 with 42501 naming the first
 * that is not. */
static int check_views(Runtime *rt, const Query *q, const CatRelation *rel, SlError *err);

/* CASCADE (q) of rel: the continuous queries that read it, and theirs, and
 * the views over any of them, must be the current role's (42501). */
static int check_cascade(Runtime *rt, const Query *q, const CatRelation *rel, int depth,
                         SlError *err)
{
    const char *name = rt_cq_dependent_not_owned(rt->cq, rel, rt_current_role());
    const CatRelation *cq = name ? cat_lookup(rt->cat, name) : NULL;
    if (cq != NULL && rt_check_owner(rt->cat, cq, err) < 0) {
        sl_error_detail(err, "DROP ... CASCADE would drop continuous query %s, which depends "
                             "on %s and belongs to another role.", cq->name, rel->name);
        sl_error_hint(err, "Its owner or a superuser must drop it first.");
        return -1;
    }
    const char *deps[64];
    int n = rt->cq != NULL && depth < CASCADE_DEPTH ? cq_dependents(rt->cq, rel->oid, deps, 64)
                                                    : 0;
    for (int i = 0; i < n; i++) {
        const CatRelation *d = cat_lookup(rt->cat, deps[i]);
        if (d != NULL && d->kind == REL_QUERY &&
            (check_cascade(rt, q, d, depth + 1, err) < 0 || check_views(rt, q, d, err) < 0))
            return -1;
    }
    return 0;
}

const char *rt_relkind_noun(RelKind kind)
{
    switch (kind) {
    case REL_TABLE:  return "table";
    case REL_STREAM: return "stream";
    case REL_SINK:   return "sink";
    case REL_QUERY:  return "continuous query";
    case REL_VIEW:   return "view";
    case REL_SYSTEM: break;
    }
    return "relation";
}

/* Whether name is one of the DROP's. */
static bool dropping(const Query *q, const char *name)
{
    for (int i = 0; i < q->ndrop; i++)
        if (strcmp(q->drop_names[i], name) == 0)
            return true;
    return false;
}

/* Without CASCADE, a relation a view reads stays unless that view goes
 * in the same DROP (2BP01); with it, the views must be the current
 * role's (42501), as the continuous queries CASCADE drops. */
static int check_views(Runtime *rt, const Query *q, const CatRelation *rel, SlError *err)
{
    Arena a;
    arena_init(&a, 1024);
    List *views = rt_view_dependents(rt, rel, &a);
    const CatRelation *v = NULL;
    for (int i = 0; i < list_len(views) && v == NULL; i++) {
        const CatRelation *d = list_nth(views, i);
        if (q->cascade ? rt_check_owner(rt->cat, d, err) < 0 : !dropping(q, d->name))
            v = d;
    }
    arena_destroy(&a);
    if (v == NULL)
        return 0;
    if (q->cascade) {
        sl_error_detail(err, "DROP ... CASCADE would drop view %s, which depends on %s and "
                             "belongs to another role.", v->name, rel->name);
        return -1;
    }
    const char *noun = rt_relkind_noun(rel->kind);
    sl_error(err, ERRCODE_DEPENDENT_OBJECTS_STILL_EXIST,
             "cannot drop %s %s because other objects depend on it", noun, rel->name);
    sl_error_detail(err, "view %s depends on %s %s", v->name, noun, rel->name);
    sl_error_hint(err, "Use DROP ... CASCADE to drop the dependent objects too.");
    return -1;
}

/* Drops the views that read rel, in one catalog transaction (CASCADE):
 * rows they have none. */
static int drop_views(Runtime *rt, const CatRelation *rel, SlError *err)
{
    Arena a;
    arena_init(&a, 1024);
    List *views = rt_view_dependents(rt, rel, &a);
    int n = list_len(views);
    const char **names = ARENA_ARRAY(&a, const char *, n > 0 ? n : 1);
    for (int i = 0; i < n; i++)
        names[i] = ((const CatRelation *)list_nth(views, i))->name;
    int rc = n > 0 ? cat_drop_relations(rt->cat, names, n, err) : 0;
    arena_destroy(&a);
    return rc;
}

/* Drops the continuous queries that read or write rel (CASCADE), each
 * after the queries that read its result table and the views over it. */
static int drop_dependents(Runtime *rt, const CatRelation *rel, int depth, SlError *err)
{
    const char *q;
    while ((q = rt_cq_dependent(rt->cq, rel)) != NULL) {
        const CatRelation *cq = cat_lookup(rt->cat, q);
        if (cq == NULL)
            break;
        if ((depth < CASCADE_DEPTH && drop_dependents(rt, cq, depth + 1, err) < 0) ||
            drop_views(rt, cq, err) < 0)
            return -1;
        if (rt_cq_stop(rt->cq, cq->name, err) < 0 || rel_purge(rt->st, cq, err) < 0 ||
            cat_drop_relation(rt->cat, cq->name, err) < 0)
            return -1;
    }
    return 0;
}

int rt_run_drop(Runtime *rt, const Query *q, SlError *err)
{
    Catalog *cat = rt->cat;
    StateStore *st = rt->st;
    bool stream = q->drop_kind == OBJECT_STREAM, query = q->drop_kind == OBJECT_QUERY;
    bool sink = q->drop_kind == OBJECT_SINK, view = q->drop_kind == OBJECT_VIEW;
    const char *noun = stream ? "stream" : query ? "continuous query" : sink ? "sink"
                       : view ? "view" : "table";
    for (int i = 0; i < q->ndrop; i++) {
        const char *name = q->drop_names[i];
        const CatRelation *rel = cat_lookup(cat, name);
        if (rel == NULL) {
            if (q->missing_ok)
                continue;
            return sl_error(err, ERRCODE_UNDEFINED_TABLE, "%s \"%s\" does not exist", noun, name);
        }
        RelKind want = stream ? REL_STREAM : query ? REL_QUERY : sink ? REL_SINK
                       : view ? REL_VIEW : REL_TABLE;
        if (rel->kind != want) {
            sl_error(err, ERRCODE_WRONG_OBJECT_TYPE, "\"%s\" is not a %s", name, noun);
            if (rel->kind == REL_STREAM)
                sl_error_hint(err, "Use DROP STREAM to remove a stream.");
            else if (rel->kind == REL_TABLE)
                sl_error_hint(err, "Use DROP TABLE to remove a table.");
            else if (rel->kind == REL_SINK)
                sl_error_hint(err, "Use DROP SINK to remove a sink.");
            else if (rel->kind == REL_VIEW)
                sl_error_hint(err, "Use DROP VIEW to remove a view.");
            else
                sl_error_hint(err, "Use DROP CONTINUOUS QUERY to remove a continuous query.");
            return -1;
        }
        /* Only the owner (or a superuser) drops a relation, and the
         * queries CASCADE would drop with it. */
        if (rt_check_owner(rt->cat, rel, err) < 0)
            return -1;
        const CatRelation *dead = dead_letters(rt, rel);
        if (q->cascade &&
            (check_cascade(rt, q, rel, 0, err) < 0 ||
             (dead && check_cascade(rt, q, dead, 0, err) < 0)))
            return -1;
        if (check_views(rt, q, rel, err) < 0 || (dead && check_views(rt, q, dead, err) < 0))
            return -1;
    }
    /* A dead-letter stream goes with its stream, not alone. */
    Arena a;
    arena_init(&a, 512);
    for (int i = 0; i < q->ndrop; i++) {
        const CatRelation *rel = cat_lookup(cat, q->drop_names[i]);
        const char *of = rel ? ingest_dead_letters_of(&a, rel) : NULL;
        bool with_owner = false;
        for (int k = 0; of != NULL && k < q->ndrop; k++)
            with_owner |= strcmp(q->drop_names[k], of) == 0;
        if (of != NULL && cat_lookup(cat, of) != NULL && !with_owner) {
            sl_error(err, ERRCODE_DEPENDENT_OBJECTS_STILL_EXIST,
                     "cannot drop stream %s because stream %s requires it", rel->name, of);
            sl_error_hint(err, "Drop stream %s instead: its dead-letter stream goes with it.",
                          of);
            arena_destroy(&a);
            return -1;
        }
    }
    arena_destroy(&a);
    /* A stream, table or continuous query that a running continuous query
     * reads or writes stays (2BP01) -- unless this DROP drops that query
     * too, or CASCADE: then those queries go first (and the queries that
     * read theirs). */
    const char *const *dropped = (const char *const *)q->drop_names;
    int ndropped = query ? q->ndrop : 0;
    for (int i = 0; i < q->ndrop && !q->cascade; i++) {
        const CatRelation *rel = cat_lookup(cat, q->drop_names[i]);
        const CatRelation *dead = rel ? dead_letters(rt, rel) : NULL;
        if (rel != NULL &&
            (rt_cq_check_drop(rt->cq, rel, dropped, ndropped, err) < 0 ||
             (dead && rt_cq_check_drop(rt->cq, dead, NULL, 0, err) < 0)))
            return -1;
    }
    for (int i = 0; i < q->ndrop; i++) {
        const CatRelation *rel = cat_lookup(cat, q->drop_names[i]);
        if (rel == NULL)
            continue;
        if (q->cascade && drop_dependents(rt, rel, 0, err) < 0)
            return -1;
        if (q->cascade && drop_views(rt, rel, err) < 0)
            return -1;
        if (rel->kind == REL_QUERY && rt_cq_stop(rt->cq, rel->name, err) < 0)
            return -1;
        const char *names[2] = {rel->name, NULL};
        int n = 1;
        const CatRelation *dead = dead_letters(rt, rel);
        if (dead != NULL && q->cascade &&
            (drop_dependents(rt, dead, 0, err) < 0 || drop_views(rt, dead, err) < 0))
            return -1;
        if (rel->kind == REL_STREAM)
            ingest_stop(rt, rel);
        if (dead != NULL)
            names[n++] = dead->name;
        if ((rel->kind != REL_VIEW && rel_purge(st, rel, err) < 0) ||
            (dead && rel_purge(st, dead, err) < 0) ||
            cat_drop_relations(cat, names, n, err) < 0)
            return -1;
    }
    return 0;
}
