/*
 * cq_ddl.c -- continuous queries as statements, and their registry's life
 * with the server.
 *
 *   rt_cq_init      start the registry on the loop and every query in the
 *                   catalog (they resume after their last committed batch)
 *   rt_cq_close     stop them all; cb once no batch is in flight
 *   rt_cq_create    CREATE CONTINUOUS QUERY: check it can run
 *                   incrementally, create its relation, start it
 *   rt_cq_stop      stop a query before its relation is dropped
 *   rt_cq_alter     ALTER CONTINUOUS QUERY ... PAUSE | RESUME
 *   rt_cq_check_drop  refuse to drop a stream a continuous query uses
 *   rt_subscribe, rt_subscribe_go, rt_unsubscribe   SUBSCRIBE's side of
 *                   the registry
 */
#include "runtime_int.h"

#include "sluice/cq.h"
#include "sluice/log.h"
#include "sluice/relstore.h"

#include "incremental.h"

static CqRuntime *g_cq;
static void (*g_close_cb)(void);

static void start_one(const CatRelation *rel, void *arg)
{
    SL_UNUSED(arg);
    if (rel->kind != REL_QUERY)
        return;
    SlError err = {0};
    if (cq_start(g_cq, rel, &err) < 0)
        sl_log(LOG_ERROR, "cannot start continuous query", "query=%s error=\"%s\"", rel->name,
               err.message);
    sl_error_clear(&err);
}

int rt_cq_init(uv_loop_t *loop)
{
    g_cq = cq_runtime_init(loop, rt_catalog(), rt_state());
    cat_foreach(rt_catalog(), start_one, NULL);
    return 0;
}

static void on_closed(CqRuntime *rt)
{
    SL_UNUSED(rt);
    g_cq = NULL;
    if (g_close_cb)
        g_close_cb();
}

void rt_cq_close(void (*cb)(void))
{
    if (g_cq == NULL) {
        if (cb)
            cb();
        return;
    }
    g_close_cb = cb;
    cq_runtime_close(g_cq, on_closed);
}

int rt_cq_create(const Query *q, SlError *err)
{
    Catalog *cat = rt_catalog();
    StateStore *st = rt_state();
    const CatRelation *def = q->create;
    if (g_cq == NULL)
        return sl_error(err, ERRCODE_OBJECT_NOT_IN_PREREQUISITE_STATE,
                        "continuous queries are not running in this server");
    if (cat_lookup(cat, def->name) != NULL) {
        if (q->if_not_exists)
            return 0;
        return sl_error(err, ERRCODE_DUPLICATE_TABLE, "relation \"%s\" already exists",
                        def->name);
    }
    /* Refuse what cannot run before anything is written. */
    CatRelation probe = *def;
    probe.refs = 1;
    IncPlan *plan;
    if (inc_plan_build(&probe, cat, st, &plan, err) < 0)
        return -1;
    inc_plan_free(plan);
    const CatRelation *rel;
    if (cat_create_relation(cat, def, &rel, err) < 0)
        return -1;
    if (rel_purge(st, rel, err) < 0 || cq_start(g_cq, rel, err) < 0) {
        SlError ignore = {0};
        cat_drop_relation(cat, rel->name, &ignore);
        sl_error_clear(&ignore);
        return -1;
    }
    sl_log(LOG_INFO, "continuous query created", "query=%s oid=%u", rel->name, rel->oid);
    return 0;
}

int rt_cq_stop(const char *name, SlError *err)
{
    if (g_cq == NULL)
        return 0;
    SlError ignore = {0};
    /* A query that failed to start is not in the registry: nothing to stop. */
    cq_stop(g_cq, name, &ignore);
    sl_error_clear(&ignore);
    SL_UNUSED(err);
    return 0;
}

int rt_cq_alter(const char *name, bool pause, SlError *err)
{
    const CatRelation *rel = cat_lookup(rt_catalog(), name);
    if (rel == NULL || rel->kind != REL_QUERY)
        return sl_error(err, ERRCODE_UNDEFINED_OBJECT, "continuous query \"%s\" does not exist",
                        name);
    if (g_cq == NULL)
        return sl_error(err, ERRCODE_OBJECT_NOT_IN_PREREQUISITE_STATE,
                        "continuous queries are not running in this server");
    return pause ? cq_pause(g_cq, name, err) : cq_resume(g_cq, name, err);
}

int rt_cq_check_drop(const CatRelation *rel, SlError *err)
{
    const char *q = g_cq ? cq_dependent(g_cq, rel->oid) : NULL;
    if (q == NULL)
        return 0;
    sl_error(err, ERRCODE_DEPENDENT_OBJECTS_STILL_EXIST,
             "cannot drop stream %s because other objects depend on it", rel->name);
    sl_error_detail(err, "continuous query %s depends on stream %s", q, rel->name);
    sl_error_hint(err, "Drop the continuous query first (DROP CONTINUOUS QUERY %s).", q);
    return -1;
}

int rt_subscribe_columns(const char *name, Arena *a, int *ncols, ColumnDesc **cols,
                         SlError *err)
{
    const CatRelation *rel = rt_catalog() ? cat_lookup(rt_catalog(), name) : NULL;
    if (rel == NULL || rel->kind != REL_QUERY || g_cq == NULL)
        return sl_error(err, ERRCODE_UNDEFINED_OBJECT, "continuous query \"%s\" does not exist",
                        name);
    ColumnDesc *c = ARENA_ARRAY(a, ColumnDesc, rel->ncols + 2);
    c[0].name = "batch_id";
    c[0].type = sl_type(TYPE_INT8);
    c[1].name = "kind";
    c[1].type = sl_type(TYPE_TEXT);
    for (int i = 0; i < rel->ncols; i++) {
        c[i + 2].name = arena_strdup(a, rel->cols[i].name);
        c[i + 2].type = rel->cols[i].type;
    }
    *ncols = rel->ncols + 2;
    *cols = c;
    return 0;
}

int rt_subscribe(const char *name, bool snapshot, rt_changes_fn fn, void *arg, RtSub **out,
                 SlError *err)
{
    int ncols;
    ColumnDesc *cols;
    Arena a;
    arena_init(&a, 1024);
    int rc = rt_subscribe_columns(name, &a, &ncols, &cols, err);
    arena_destroy(&a);
    if (rc < 0)
        return -1;
    CqSub *s = cq_subscribe(g_cq, name, snapshot, fn, arg, err);
    if (s == NULL)
        return -1;
    *out = (RtSub *)s;
    return 0;
}

void rt_subscribe_go(RtSub *s)
{
    cq_subscribe_go((CqSub *)s);
}

void rt_unsubscribe(RtSub *s)
{
    cq_unsubscribe((CqSub *)s);
}
