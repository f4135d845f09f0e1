/*
 * cq_layout.c -- which definition of a continuous query the rows of its
 * result table were written for, so that a SELECT never reads them with
 * another definition's columns (docs/engine.md, "Query evolution").
 *
 *   cq_layouts_new, cq_layouts_free   one registry's table (CqRuntime's:
 *                       the layouts are per query oid of that registry)
 *   cq_layout_replace   CREATE OR REPLACE kept the oid: the former and the
 *                       new definition and their result hashes (loop)
 *   cq_layout_start     a query started: its definition, and whether its
 *                       rows are still to be rewritten (loop)
 *   cq_layout_stalled   whether that rewrite will run (paused, failed,
 *                       finished: not until the query runs again) (loop)
 *   cq_layout_forget    the query was dropped or replaced under a new oid
 *                       (the entry stays, marked: a scan still waiting on
 *                       it fails with 42P01 instead of reading what is left)
 *   cq_layout_write_begin, cq_layout_write_end   around the RocksDB write of
 *                       a batch that rewrites the rows (a worker)
 *   cq_layout_scan      the scan of a result table (a worker); with no
 *                       table (NULL: no registry), the plain scan
 *
 * A replacement that changes the result columns, HAVING or a projected
 * expression switches the catalog at once, but the rows are rewritten by
 * the query's next batch (incremental.c, result_stale).  Meanwhile the
 * stored rows belong to the former definition.  So a scan of the result
 * table by a statement analysed with definition D reads the rows only when
 * they were written for D's result hash; a statement of the new definition
 * waits (in slices of 5 ms, a cancel or statement_timeout ends the wait)
 * for the rewrite, and fails with 55000 when the rewrite cannot come (the
 * query is paused, failed or finished); a statement analysed before the
 * replacement whose scan starts after the rewrite fails with 40001 (run it
 * again).  One mutex guards the table: a scan opens its RocksDB iterator
 * (its snapshot) under it and a rewrite writes under it, so a scan sees
 * all the former rows or all the rewritten ones, and knows which.  At
 * shutdown the registry marks its queries' rewrites stalled ("the server
 * is stopping"); the table lives until the registry is freed, after the
 * statements' pool has stopped.
 *
 * A query is in the table only from its first replacement that changed
 * the result hash (or a start that found its rows still to be rewritten);
 * the others are scanned as any table.  Each entry keeps references to the
 * last LAYOUT_DEFS definitions, so comparing a statement's CatRelation
 * pointer with them is safe.
 */
#include "sluice/cq.h"
#include "sluice/exec.h"

#include <pthread.h>
#include <stdio.h>
#include <string.h>
#include <time.h>

#define LAYOUT_DEFS 8

typedef struct LayoutDef {
    const CatRelation *def;     /* referenced */
    uint64_t           hash;    /* its result hash (inc_plan_result_hash) */
} LayoutDef;

typedef struct Layout {
    struct Layout     *next;
    uint32_t           oid;
    LayoutDef          defs[LAYOUT_DEFS];   /* the newest last */
    int                ndefs;
    uint64_t           rows_hash;   /* the definition the stored rows are of */
    const CatRelation *latest;      /* the definition in the catalog */
    char               stalled[96]; /* why its rewrite will not run; "" if it will */
    bool               dropped;     /* the oid is gone (DROP, reset); no defs */
} Layout;

struct CqLayouts {
    pthread_mutex_t mu;     /* guards list; a scan opens its iterator under it */
    Layout         *list;
};

CqLayouts *cq_layouts_new(void)
{
    CqLayouts *ls = sl_calloc(1, sizeof(CqLayouts));
    pthread_mutex_init(&ls->mu, NULL);
    return ls;
}

/* With ls->mu held. */
static Layout *find(CqLayouts *ls, uint32_t oid)
{
    for (Layout *l = ls->list; l != NULL; l = l->next)
        if (l->oid == oid)
            return l;
    return NULL;
}

/* The live entry of oid for a new definition: one left by a dropped
 * relation whose oid came back goes.  With ls->mu held. */
static Layout *find_live(CqLayouts *ls, uint32_t oid)
{
    for (Layout **p = &ls->list; *p != NULL; p = &(*p)->next) {
        Layout *l = *p;
        if (l->oid != oid)
            continue;
        if (!l->dropped)
            return l;
        *p = l->next;
        sl_free(l);     /* no defs: released when it was dropped */
        return NULL;
    }
    return NULL;
}

static Layout *add(CqLayouts *ls, uint32_t oid, uint64_t rows_hash)
{
    Layout *l = sl_calloc(1, sizeof(Layout));
    l->oid = oid;
    l->rows_hash = rows_hash;
    l->next = ls->list;
    ls->list = l;
    return l;
}

static int def_index(const Layout *l, const CatRelation *def)
{
    for (int i = 0; i < l->ndefs; i++)
        if (l->defs[i].def == def)
            return i;
    return -1;
}

/* Records def with its hash as the newest definition of l. */
static void def_add(Layout *l, const CatRelation *def, uint64_t hash)
{
    int i = def_index(l, def);
    if (i >= 0) {
        l->defs[i].hash = hash;
    } else {
        if (l->ndefs == LAYOUT_DEFS) {
            cat_relation_unref(l->defs[0].def);
            memmove(l->defs, l->defs + 1, sizeof(LayoutDef) * (LAYOUT_DEFS - 1));
            l->ndefs--;
        }
        cat_relation_ref(def);
        l->defs[l->ndefs++] = (LayoutDef){def, hash};
    }
    l->latest = def;
    l->stalled[0] = '\0';
}

static void defs_release(Layout *l)
{
    for (int i = 0; i < l->ndefs; i++)
        cat_relation_unref(l->defs[i].def);
    l->ndefs = 0;
    l->latest = NULL;
}

void cq_layout_replace(CqLayouts *ls, const CatRelation *old, uint64_t old_hash,
                       const CatRelation *def, uint64_t hash)
{
    pthread_mutex_lock(&ls->mu);
    Layout *l = find_live(ls, old->oid);
    if (l == NULL && old_hash != hash) {
        /* The stored rows are the former definition's until rewritten. */
        l = add(ls, old->oid, old_hash);
        def_add(l, old, old_hash);
    }
    if (l != NULL)
        def_add(l, def, hash);
    pthread_mutex_unlock(&ls->mu);
}

void cq_layout_start(CqLayouts *ls, const CatRelation *def, uint64_t hash, bool rewrite,
                     uint64_t rows_hash)
{
    pthread_mutex_lock(&ls->mu);
    Layout *l = find_live(ls, def->oid);
    if (l == NULL && rewrite)
        l = add(ls, def->oid, rows_hash);
    if (l != NULL) {
        def_add(l, def, hash);
        /* Not to be rewritten: the rows (if any) are this definition's. */
        l->rows_hash = rewrite ? rows_hash : hash;
    }
    pthread_mutex_unlock(&ls->mu);
}

void cq_layout_stalled(CqLayouts *ls, const CatRelation *def, const char *why)
{
    pthread_mutex_lock(&ls->mu);
    Layout *l = find(ls, def->oid);
    if (l != NULL && l->latest == def)
        snprintf(l->stalled, sizeof(l->stalled), "%s", why ? why : "");
    pthread_mutex_unlock(&ls->mu);
}

void cq_layout_forget(CqLayouts *ls, uint32_t oid)
{
    /* The entry stays, marked, so that a statement still waiting on it
     * learns that the query went instead of reading what is left. */
    pthread_mutex_lock(&ls->mu);
    Layout *l = find(ls, oid);
    if (l != NULL) {
        defs_release(l);
        l->dropped = true;
    }
    pthread_mutex_unlock(&ls->mu);
}

void cq_layouts_free(CqLayouts *ls)
{
    if (ls == NULL)
        return;
    while (ls->list != NULL) {
        Layout *l = ls->list;
        ls->list = l->next;
        defs_release(l);
        sl_free(l);
    }
    pthread_mutex_destroy(&ls->mu);
    sl_free(ls);
}

void cq_layout_write_begin(CqLayouts *ls)
{
    pthread_mutex_lock(&ls->mu);
}

void cq_layout_write_end(CqLayouts *ls, uint32_t oid, uint64_t hash, bool written)
{
    Layout *l = written ? find(ls, oid) : NULL;
    if (l != NULL)
        l->rows_hash = hash;
    pthread_mutex_unlock(&ls->mu);
}

ExSource *cq_layout_scan(CqLayouts *ls, StateStore *st, const CatRelation *rel, SlError *err)
{
    if (ls == NULL)
        return ex_source_table(st, rel, true);
    for (;;) {
        pthread_mutex_lock(&ls->mu);
        Layout *l = find(ls, rel->oid);
        int i = l != NULL ? def_index(l, rel) : -1;
        if (l == NULL || (i >= 0 && l->defs[i].hash == l->rows_hash)) {
            /* The iterator's snapshot is taken here, under the mutex. */
            ExSource *src = ex_source_table(st, rel, true);     /* a statement's */
            pthread_mutex_unlock(&ls->mu);
            return src;
        }
        if (l->dropped) {
            pthread_mutex_unlock(&ls->mu);
            sl_error(err, ERRCODE_UNDEFINED_TABLE,
                     "continuous query \"%s\" was dropped or reset while this statement ran",
                     rel->name);
            return NULL;
        }
        bool newest = l->latest == rel;
        char stalled[sizeof(l->stalled)];
        memcpy(stalled, l->stalled, sizeof(stalled));
        pthread_mutex_unlock(&ls->mu);
        if (newest && stalled[0] != '\0') {
            sl_error(err, ERRCODE_OBJECT_NOT_IN_PREREQUISITE_STATE,
                     "the result table of continuous query \"%s\" still holds the rows of "
                     "its former definition, and %s", rel->name, stalled);
            sl_error_detail(err, "Its rows are rewritten for its new definition by its next "
                                 "batch.");
            sl_error_hint(err, "Resume the query (ALTER CONTINUOUS QUERY %s RESUME), or "
                               "replace it again.", rel->name);
            return NULL;
        }
        if (!newest) {
            sl_error(err, ERRCODE_T_R_SERIALIZATION_FAILURE,
                     "continuous query \"%s\" was replaced while this statement ran: its "
                     "result table now has the rows of its new definition", rel->name);
            sl_error_hint(err, "Run the statement again.");
            return NULL;
        }
        /* The next batch rewrites the rows: wait for it. */
        struct timespec ts = {0, 5 * 1000 * 1000};
        nanosleep(&ts, NULL);
        if (ex_check_interrupt(err) < 0)
            return NULL;
    }
}
