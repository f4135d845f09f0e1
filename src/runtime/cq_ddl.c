/*
 * cq_ddl.c -- continuous queries as statements, and their registry's life
 * with the server.
 *
 *   rt_cq_init      make the registry (CqRuntime) on the loop and start
 *                   every query in the catalog (they resume after their
 *                   last committed batch); their batches run on the
 *                   engine's pool
 *   rt_cq_close     stop them all; cb(arg) once no batch is in flight
 *   rt_cq_free      free the registry, once closed and the pools stopped
 *   rt_cq_create    CREATE [OR REPLACE] CONTINUOUS QUERY: check its WITH
 *                   options (cat_relopts_check) and that it can run
 *                   incrementally, create its relation, start it; a
 *                   replacement keeps the state and offsets when the
 *                   state-bearing plan is the same, and is refused with the
 *                   change named when it is not, unless WITH (reset = true);
 *                   new result columns: rewritten from the state where it
 *                   holds every row (inc_plan_lost_rows), refused with the
 *                   reason where it does not; so is another HAVING or
 *                   expression with the same columns where it does not;
 *                   until the rewrite, the rows are read only with the
 *                   former definition (cq_layout_replace);
 *                   only the query's owner (or a superuser) replaces it;
 *                   new columns or reset = true are refused (2BP01) while
 *                   another query reads the result table
 *   rt_cq_stop      stop a query before its relation is dropped
 *   rt_cq_alter     ALTER CONTINUOUS QUERY ... PAUSE | RESUME
 *   rt_cq_check_drop  refuse to drop a stream, table, sink or continuous
 *                     query that a continuous query uses (2BP01), unless
 *                     the same DROP drops that query too
 *   rt_subscribe, rt_subscribe_go, rt_unsubscribe   SUBSCRIBE's side of
 *                   the registry
 *   rt_cq_dependent   the name of a continuous query that uses a relation
 *   rt_cq_dependent_not_owned   one owned by another role than the given
 *   rt_cq_explain   EXPLAIN CONTINUOUS QUERY
 *   rt_source_lag   the source lag rows of every running query
 *
 * Every entry point takes the registry it works on; NULL or a registry
 * that is closing means continuous queries are not running.  The registry
 * rt_cq_init makes is held by the Runtime (Runtime.cq, set by main); this
 * file keeps nothing of its own.
 */
#include "runtime_int.h"

#include "sluice/cq.h"
#include "sluice/log.h"
#include "sluice/options.h"
#include "sluice/relopts.h"
#include "sluice/relstore.h"

#include "incremental.h"

#include <stdio.h>

static bool running(CqRuntime *cq)
{
    return cq != NULL && cq_running(cq);
}

static int not_running(SlError *err)
{
    return sl_error(err, ERRCODE_OBJECT_NOT_IN_PREREQUISITE_STATE,
                    "continuous queries are not running in this server");
}

int rt_cq_explain(CqRuntime *cq, const char *name, Arena *a, List **lines, SlError *err)
{
    if (!running(cq))
        return not_running(err);
    return cq_explain(cq, name, a, lines, err);
}

static void start_one(const CatRelation *rel, void *arg)
{
    CqRuntime *cq = arg;
    if (rel->kind != REL_QUERY)
        return;
    SlError err = {0};
    if (cq_start(cq, rel, &err) < 0)
        sl_log(LOG_ERROR, "cannot start continuous query", "query=%s error=\"%s\"",
               log_value(rel->name), log_quote(err.message));
    sl_error_clear(&err);
}

CqRuntime *rt_cq_init(Runtime *rt)
{
    CqRuntime *cq = cq_runtime_init(&rt->loop, rt->engine, rt->cat, rt->st);
    cq_set_check(cq, rt_cq_privileges, rt->cat);
    cq_shared(cq)->rt = rt;
    ExFnHooks hooks = rt_fn_hooks(rt);
    cq_set_fn_hooks(cq, &hooks);
    cat_foreach(rt->cat, start_one, cq);
    return cq;
}

void rt_cq_close(CqRuntime *cq, void (*cb)(void *arg), void *arg)
{
    if (cq == NULL) {
        if (cb)
            cb(arg);
        return;
    }
    cq_runtime_close(cq, cb, arg);
}

void rt_cq_free(CqRuntime *cq)
{
    if (cq == NULL)
        return;
    cq_runtime_free(cq);
}

/* ---------------------------------------------------------------------- */
/* CREATE OR REPLACE                                                        */

typedef struct Replace {
    CqRuntime         *cq;
    const CatRelation *old;     /* reset: its rows, state and logs go */
    const CatRelation *rel;     /* the new definition, to start */
    bool               reset;
} Replace;

/* The old query is stopped (no batch in flight): purge what a reset drops,
 * start the new definition unless it was dropped meanwhile. */
static void replace_cb(void *arg)
{
    Replace *r = arg;
    SlError err = {0};
    if (r->reset)
        cq_layout_forget(cq_layouts(r->cq), r->old->oid);
    if (r->reset && rel_purge(cq_store(r->cq), r->old, &err) < 0) {
        sl_log(LOG_ERROR, "cannot drop the state of a replaced query", "query=%s error=\"%s\"",
               log_value(r->old->name), log_quote(err.message));
        sl_error_clear(&err);
    }
    if (running(r->cq) && cat_lookup(cq_catalog(r->cq), r->rel->name) == r->rel &&
        cq_start(r->cq, r->rel, &err) < 0) {
        sl_log(LOG_ERROR, "cannot start a replaced query", "query=%s error=\"%s\"",
               log_value(r->rel->name), log_quote(err.message));
        cq_layout_stalled(cq_layouts(r->cq), r->rel, "the query could not start");
        sl_error_clear(&err);
    }
    cat_relation_unref(r->old);
    cat_relation_unref(r->rel);
    sl_free(r);
}

static int refuse_change(SlError *err, const char *name, const char *what, const char *before,
                         const char *now)
{
    sl_error(err, ERRCODE_INVALID_TABLE_DEFINITION,
             "cannot replace continuous query \"%s\": its %s changed", name, what);
    sl_error_detail(err, "%s: %s before, %s now; its state and offsets hold only for the "
                         "former.", what, before, now);
    sl_error_hint(err, "Add WITH (reset = true) to start over from the starting offsets; that "
                       "drops its state, its offset and commit logs and its results.");
    return -1;
}

/* Same result columns (names and types)? */
static bool same_columns(const CatRelation *a, const CatRelation *b)
{
    if (a->ncols != b->ncols)
        return false;
    for (int c = 0; c < a->ncols; c++)
        if (strcmp(a->cols[c].name, b->cols[c].name) != 0 ||
            a->cols[c].type.id != b->cols[c].type.id)
            return false;
    return true;
}

/* Is the change from old's plan to the new plan one the state survives?
 * -1 with the change named in err if not; *old_hash gets the old plan's
 * result hash. */
static int check_compatible(CqRuntime *cq, const CatRelation *old, IncPlan *np,
                            const CatRelation *def, uint64_t *old_hash, SlError *err)
{
    IncPlan *op;
    SlError e = {0};
    if (inc_plan_build(old, cq_catalog(cq), cq_store(cq), cq_shared(cq), &op, &e) < 0) {
        sl_error(err, ERRCODE_INVALID_TABLE_DEFINITION,
                 "cannot replace continuous query \"%s\": its current definition cannot be "
                 "planned any more: %s", old->name, e.message);
        sl_error_hint(err, "Add WITH (reset = true) to start over from the starting offsets.");
        sl_error_clear(&e);
        return -1;
    }
    int rc = 0;
    const char *const *os = inc_plan_shape(op), *const *ns = inc_plan_shape(np);
    for (int i = 0; i < INC_SHAPE_PARTS && rc == 0; i++)
        if (strcmp(os[i], ns[i]) != 0)
            rc = refuse_change(err, old->name, inc_shape_names[i], os[i], ns[i]);
    const CatRelation *oi = inc_plan_into(op), *ni = inc_plan_into(np);
    if (rc == 0 && (oi == NULL ? ni != NULL : (ni == NULL || oi->oid != ni->oid)))
        rc = refuse_change(err, old->name, "output target", oi ? oi->name : "its result table",
                           ni ? ni->name : "its result table");
    /* New result columns: every row is rewritten from the state, which
     * must hold every group of the result table under both definitions. */
    const char *lost = NULL;
    if (rc == 0 && ni == NULL && !same_columns(old, def) &&
        ((lost = inc_plan_lost_rows(op)) != NULL || (lost = inc_plan_lost_rows(np)) != NULL)) {
        sl_error(err, ERRCODE_INVALID_TABLE_DEFINITION,
                 "cannot replace continuous query \"%s\": the columns of its result table "
                 "change, and its rows cannot be rewritten from the state", old->name);
        sl_error_detail(err, "Its state does not hold every row of its result table: %s.",
                        lost);
        sl_error_hint(err, "Keep the columns, or add WITH (reset = true) to start over.");
        rc = -1;
    }
    /* Same columns, another HAVING or expression: the rows of groups
     * no new row touches would keep what the former definition computed
     * unless every row is rewritten from the state (result_stale), which
     * needs the state to hold every group under both definitions. */
    if (rc == 0 && ni == NULL && inc_plan_result_hash(op) != inc_plan_result_hash(np) &&
        ((lost = inc_plan_lost_rows(op)) != NULL || (lost = inc_plan_lost_rows(np)) != NULL)) {
        sl_error(err, ERRCODE_INVALID_TABLE_DEFINITION,
                 "cannot replace continuous query \"%s\": how its result rows are computed "
                 "(HAVING or an expression) changes, and its rows cannot be rewritten from "
                 "the state", old->name);
        sl_error_detail(err, "Its state does not hold every row of its result table: %s.",
                        lost);
        sl_error_hint(err, "Keep HAVING and the expressions, or add WITH (reset = true) to "
                           "start over.");
        rc = -1;
    }
    *old_hash = inc_plan_result_hash(op);
    inc_plan_free(op);
    return rc;
}

static int replace(CqRuntime *cq, const Query *q, const CatRelation *old, SlError *err)
{
    Catalog *cat = cq_catalog(cq);
    const CatRelation *def = q->create;
    if (old->kind != REL_QUERY)
        return sl_error(err, ERRCODE_WRONG_OBJECT_TYPE, "\"%s\" is not a continuous query",
                        def->name);
    /* Replacing changes (and with reset drops) what the query owns. */
    if (rt_check_owner(cat, old, err) < 0)
        return -1;
    Arena a;
    arena_init(&a, 512);
    Options o;
    bool reset = false;
    int rc = opts_parse(&a, def->options, &o, err);
    if (rc == 0)
        rc = opts_get_bool(&o, "reset", false, &reset, err);
    arena_destroy(&a);
    if (rc < 0)
        return -1;
    /* Another continuous query that reads the result table was planned over
     * its columns and its oid: new columns would be read with the former
     * ones (XX001), a new oid (reset) not at all. */
    const char *dep = rt_cq_dependent(cq, old);
    if (dep != NULL && (reset || !same_columns(old, def))) {
        sl_error(err, ERRCODE_DEPENDENT_OBJECTS_STILL_EXIST,
                 "cannot replace continuous query \"%s\": continuous query \"%s\" reads its "
                 "result table", def->name, dep);
        sl_error_detail(err, reset ? "With reset = true its result table is made anew, and "
                                     "\"%s\" would go on reading the former one."
                                   : "The columns of its result table change, and \"%s\" "
                                     "reads them as they were.", dep);
        sl_error_hint(err, "Drop continuous query \"%s\" first (and create it again after), "
                           "or keep the result columns.", dep);
        return -1;
    }
    /* The new definition must run, under the oid it will have. */
    CatRelation probe = *def;
    probe.refs = 1;
    probe.oid = old->oid;
    IncPlan *np;
    if (inc_plan_build_new(&probe, cat, cq_store(cq), cq_shared(cq), &np, err) < 0)
        return -1;
    uint64_t old_hash = 0, new_hash = inc_plan_result_hash(np);
    rc = reset ? 0 : check_compatible(cq, old, np, def, &old_hash, err);
    inc_plan_free(np);
    if (rc < 0)
        return -1;
    /* A reader of the result table's changes (changelog.c; not a lookup
     * join): rows rewritten for a new definition would reach it as no
     * change. */
    const char *reader = cq_changelog_reader(cq, old->oid);
    if (reader != NULL && old_hash != new_hash) {
        dep = reader;
        sl_error(err, ERRCODE_DEPENDENT_OBJECTS_STILL_EXIST,
                 "cannot replace continuous query \"%s\": continuous query \"%s\" reads its "
                 "result table", def->name, dep);
        sl_error_detail(err, "The new definition rewrites its rows, and \"%s\" reads their "
                             "changes.", dep);
        sl_error_hint(err, "Drop continuous query \"%s\" first (and create it again after), "
                           "or change only the options.", dep);
        return -1;
    }
    Replace *r = sl_calloc(1, sizeof(Replace));
    r->cq = cq;
    r->reset = reset;
    r->old = old;
    cat_relation_ref(old);
    const CatRelation *rel;
    if (reset) {
        /* A new relation (a new oid: no state, logs or rows); the old
         * one's rows and state are purged once its batch is done. */
        if (cat_recreate_relation(cat, def, &rel, err) < 0) {
            cat_relation_unref(old);
            sl_free(r);
            return -1;
        }
    } else if (cat_replace_relation(cat, def, &rel, err) < 0) {
        cat_relation_unref(old);
        sl_free(r);
        return -1;
    }
    r->rel = rel;
    cat_relation_ref(rel);
    /* Until the new definition's first batch rewrites the rows of the
     * result table, they are read only with the former one (cq_layout.c). */
    if (!reset)
        cq_layout_replace(cq_layouts(cq), old, old_hash, rel, new_hash);
    sl_log(LOG_INFO, "continuous query replaced", "query=%s oid=%u reset=%s",
           log_value(rel->name), rel->oid, reset ? "true" : "false");
    cq_stop_then(cq, old->name, replace_cb, r);
    return 0;
}

int rt_cq_create(CqRuntime *cq, const Query *q, SlError *err)
{
    const CatRelation *def = q->create;
    if (!running(cq))
        return not_running(err);
    Catalog *cat = cq_catalog(cq);
    StateStore *st = cq_store(cq);
    const CatRelation *old = cat_lookup(cat, def->name);
    if (cat_relopts_check(def, RELOPTS_NAMES | RELOPTS_VALUES, err) < 0)
        return -1;
    if (old != NULL && q->or_replace)
        return replace(cq, q, old, err);
    if (old != NULL) {
        if (q->if_not_exists)
            return 0;
        return sl_error(err, ERRCODE_DUPLICATE_TABLE, "relation \"%s\" already exists",
                        def->name);
    }
    /* Refuse what cannot run before anything is written. */
    CatRelation probe = *def;
    probe.refs = 1;
    IncPlan *plan;
    if (inc_plan_build_new(&probe, cat, st, cq_shared(cq), &plan, err) < 0)
        return -1;
    bool unbounded = inc_plan_complete_unbounded(plan);
    /* the operators of a graph plan that no bound limits (a WARNING) */
    char grows[512] = "";
    Arena wa;
    arena_init(&wa, 256);
    const char *ops = inc_plan_unbounded_ops(plan, &wa);
    if (ops != NULL)
        snprintf(grows, sizeof(grows), "%s", ops);
    arena_destroy(&wa);
    inc_plan_free(plan);
    CatRelation owned = *def;
    owned.owner = rt_owner();
    const CatRelation *rel;
    if (cat_create_relation(cat, &owned, &rel, err) < 0)
        return -1;
    if (rel_purge(st, rel, err) < 0 || cq_start(cq, rel, err) < 0) {
        SlError ignore = {0};
        cat_drop_relation(cat, rel->name, &ignore);
        sl_error_clear(&ignore);
        return -1;
    }
    sl_log(LOG_INFO, "continuous query created", "query=%s oid=%u", log_value(rel->name),
           rel->oid);
    if (grows[0] != '\0')
        rt_warn(ERRCODE_WARNING,
                "continuous query \"%s\" keeps state that grows with every new key in %s "
                "(no watermark or window bounds it); group by a WINDOW over a column with "
                "a WATERMARK if the keys keep coming", rel->name, grows);
    if (unbounded)
        rt_warn(ERRCODE_WARNING,
                "continuous query \"%s\" writes its whole result in complete mode over "
                "groups without a window: its state and result grow with every new group; "
                "group by a WINDOW, or use update mode with state_ttl, if the groups keep "
                "coming", rel->name);
    return 0;
}

int rt_cq_stop(CqRuntime *cq, const char *name, SlError *err)
{
    if (!running(cq))
        return 0;
    SlError ignore = {0};
    const CatRelation *rel = cat_lookup(cq_catalog(cq), name);
    if (rel != NULL && rel->kind == REL_QUERY)
        cq_layout_forget(cq_layouts(cq), rel->oid);
    /* A query that failed to start is not in the registry: nothing to stop. */
    cq_stop(cq, name, &ignore);
    sl_error_clear(&ignore);
    SL_UNUSED(err);
    return 0;
}

int rt_cq_alter(CqRuntime *cq, const char *name, bool pause, SlError *err)
{
    if (cq == NULL)
        return not_running(err);
    Catalog *cat = cq_catalog(cq);
    const CatRelation *rel = cat_lookup(cat, name);
    if (rel == NULL || rel->kind != REL_QUERY)
        return sl_error(err, ERRCODE_UNDEFINED_OBJECT, "continuous query \"%s\" does not exist",
                        name);
    if (rt_check_owner(cat, rel, err) < 0)
        return -1;
    if (!running(cq))
        return not_running(err);
    return pause ? cq_pause(cq, name, err) : cq_resume(cq, name, err);
}

int rt_cq_check_drop(CqRuntime *cq, const CatRelation *rel, const char *const *dropped,
                     int ndropped, SlError *err)
{
    const char *deps[64];
    int n = cq != NULL ? cq_dependents(cq, rel->oid, deps, 64) : 0;
    const char *q = NULL;
    for (int i = 0; i < n && q == NULL; i++) {
        q = deps[i];
        for (int k = 0; k < ndropped && q != NULL; k++)
            if (strcmp(dropped[k], q) == 0)
                q = NULL;   /* dropped by the same statement */
    }
    if (q == NULL)
        return 0;
    const char *noun = rt_relkind_noun(rel->kind);
    sl_error(err, ERRCODE_DEPENDENT_OBJECTS_STILL_EXIST,
             "cannot drop %s %s because other objects depend on it", noun, rel->name);
    sl_error_detail(err, "continuous query %s depends on %s %s", q, noun, rel->name);
    sl_error_hint(err, "Use DROP ... CASCADE to drop the dependent objects too.");
    return -1;
}

int rt_subscribe_columns(CqRuntime *cq, const char *name, Arena *a, int *ncols,
                         ColumnDesc **cols, SlError *err)
{
    Catalog *cat = cq_catalog(cq);
    const CatRelation *rel = cat != NULL ? cat_lookup(cat, name) : NULL;
    if (rel == NULL || rel->kind != REL_QUERY || !running(cq))
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

int rt_subscribe(CqRuntime *cq, const char *name, bool snapshot, rt_changes_fn fn, void *arg,
                 RtSub **out, SlError *err)
{
    int ncols;
    ColumnDesc *cols;
    Arena a;
    arena_init(&a, 1024);
    int rc = rt_subscribe_columns(cq, name, &a, &ncols, &cols, err);
    arena_destroy(&a);
    if (rc < 0 || rt_check_select(cq_catalog(cq), cat_lookup(cq_catalog(cq), name), err) < 0)
        return -1;
    CqSub *s = cq_subscribe(cq, name, snapshot, fn, arg, err);
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

const char *rt_cq_dependent(CqRuntime *cq, const CatRelation *rel)
{
    return cq != NULL ? cq_dependent(cq, rel->oid) : NULL;
}

const char *rt_cq_dependent_not_owned(CqRuntime *cq, const CatRelation *rel, uint32_t owner)
{
    return cq != NULL ? cq_dependent_not_owned(cq, rel->oid, owner) : NULL;
}

void rt_source_lag(CqRuntime *cq, void (*fn)(const CqSourceLag *l, void *arg), void *arg)
{
    if (cq != NULL)
        cq_source_lag(cq, fn, arg);
}
