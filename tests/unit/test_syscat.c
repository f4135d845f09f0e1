/*
 * test_syscat.c -- the system relations' floor on its own (src/syscat/,
 * syscat.h): started with a catalog and hooks of the test's own, without
 * the runtime, it registers pg_catalog and sys.*; sys.queries asks the
 * SELECT check it was given before it shows a query's last error (NULL to
 * a role without SELECT), reads the running queries through the hook, and
 * syscat_shutdown empties the registry.  LeakSanitizer checks that
 * everything is returned.
 */
#include "sluice/exec.h"
#include "sluice/syscat.h"
#include "sluice/vrel.h"
#include "unit_data.h"

#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static bool g_allow;
static int  g_checks, g_cq_asks;
static uint32_t g_checked_oid;

static int check_select(const CatRelation *rel, SlError *err)
{
    g_checks++;
    g_checked_oid = rel->oid;
    if (g_allow)
        return 0;
    return sl_error(err, ERRCODE_INSUFFICIENT_PRIVILEGE, "permission denied for table %s",
                    rel->name);
}

static struct CqRuntime *cq_runtime(void)
{
    g_cq_asks++;
    return NULL;
}

static const SysHooks hooks = {check_select, cq_runtime};

/* The column `name` of sys.queries' only row as text ("<null>" for NULL),
 * in a. */
static const char *queries_cell(Arena *a, const char *name)
{
    const CatRelation *rel = vrel_lookup("sys", "queries");
    CHECK(rel != NULL, "sys.queries is registered");
    if (rel == NULL)
        return "";
    int col = -1;
    for (int c = 0; c < rel->ncols; c++)
        if (strcmp(rel->cols[c].name, name) == 0)
            col = c;
    CHECK(col >= 0, "sys.queries has %s", name);
    SlError err = {0};
    ExCtx cx = {0};
    cx.arena = a;
    cx.err = &err;
    ExSource *src = vrel_open(&cx, rel);
    CHECK(src != NULL, "scan: %s", err.message ? err.message : "");
    if (src == NULL || col < 0) {
        sl_error_clear(&err);
        return "";
    }
    Batch *b = NULL;
    int n = src->next(src, a, &b, NULL, &err);
    CHECK(n == 1, "one query row, got %d", n);
    const char *out = "";
    if (n == 1) {
        const Vector *v = &b->cols[col];
        out = v->nulls[0] ? "<null>"
                          : arena_strndup(a, v->v.str[0].ptr, v->v.str[0].len);
    }
    if (src->close != NULL)
        src->close(src);
    sl_error_clear(&err);
    return out;
}

int main(void)
{
    UnitData d;
    unit_data_open(&d, "syscat", false);
    Catalog *cat = d.cat;
    SlError err = {0};

    CatColumn cols[1] = {{"n", {TYPE_INT8, -1}, false}};
    CatRelation def = {0};
    def.name = "q1";
    def.kind = REL_QUERY;
    def.ncols = 1;
    def.cols = cols;
    def.sql = "CREATE CONTINUOUS QUERY q1 AS SELECT n FROM s";
    def.options = "{}";
    const CatRelation *q;
    CHECK(cat_create_relation(cat, &def, &q, &err) == 0);
    uint32_t qoid = q->oid;
    CHECK(cat_cq_status_set(cat, qoid, "failed", "division by zero in row (7)", &err) == 0);

    CHECK(vrel_lookup("sys", "queries") == NULL, "nothing before syscat_init");
    syscat_init(cat, &hooks);
    CHECK(vrel_lookup("pg_catalog", "pg_class") != NULL, "pg_class");
    CHECK(vrel_lookup(NULL, "pg_namespace") != NULL, "pg_namespace");
    CHECK(vrel_lookup("sys", "settings") != NULL, "sys.settings");

    Arena a;
    arena_init(&a, 0);
    /* A role that may read the query sees its error ... */
    g_allow = true;
    CHECK(strcmp(queries_cell(&a, "name"), "q1") == 0, "the query from the catalog given");
    CHECK(strcmp(queries_cell(&a, "status"), "failed") == 0, "its stored status");
    const char *e = queries_cell(&a, "last_error");
    CHECK(strcmp(e, "division by zero in row (7)") == 0, "allowed: %s", e);
    CHECK(g_checks > 0 && g_checked_oid == qoid, "the hook was asked about q1");
    CHECK(g_cq_asks > 0, "the running queries come from the hook");
    /* ... one without SELECT gets NULL, the rest of the row unchanged. */
    g_allow = false;
    int before = g_checks;
    e = queries_cell(&a, "last_error");
    CHECK(strcmp(e, "<null>") == 0, "denied: %s", e);
    CHECK(g_checks > before, "asked again");
    CHECK(strcmp(queries_cell(&a, "status"), "failed") == 0, "status still shown");
    arena_destroy(&a);

    /* The session the server sets is the one the loop's thread sees. */
    RtSession s = {.pid = 42, .user = "u", .database = "sluice", .state = "active"};
    rt_session_set(&s);
    CHECK(rt_session_current() == &s, "current session");
    rt_session_set(NULL);
    CHECK(rt_session_current() == NULL, "no session");

    syscat_shutdown();
    CHECK(vrel_lookup("sys", "queries") == NULL, "registry emptied");

    unit_data_close(&d);
    sl_error_clear(&err);
    return unit_done("test_syscat");
}
