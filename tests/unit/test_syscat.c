/*
 * test_syscat.c -- the system relations' floor on its own (src/syscat/,
 * syscat.h): a Syscat made with a catalog and hooks of the test's own,
 * without the runtime, registers pg_catalog and sys.*; sys.queries asks
 * the SELECT check it was given (with its arg) before it shows a query's
 * last error (NULL to a role without SELECT), reads the running queries
 * through the hook; the size functions take a user relation's bytes from
 * the relation_bytes hook; a scan finds its Syscat in the statement's context
 * (ExCtx.system_arg) and fails with 55000 without one.  Two Syscats in one
 * process keep their own settings and sessions and neither sees the
 * other's catalog.  LeakSanitizer checks that everything is returned.
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

static int g_hook_arg;

static int check_select(void *arg, const CatRelation *rel, SlError *err)
{
    CHECK(arg == &g_hook_arg, "the hook gets its arg");
    g_checks++;
    g_checked_oid = rel->oid;
    if (g_allow)
        return 0;
    return sl_error(err, ERRCODE_INSUFFICIENT_PRIVILEGE, "permission denied for table %s",
                    rel->name);
}

static struct CqRuntime *cq_runtime(void *arg)
{
    CHECK(arg == &g_hook_arg, "the hook gets its arg");
    g_cq_asks++;
    return NULL;
}

/* The state store's bytes: 4096 for each relation, 65536 in all. */
static uint64_t relation_bytes(void *arg, const CatRelation *rel)
{
    CHECK(arg == &g_hook_arg, "the hook gets its arg");
    return rel != NULL ? 4096 : 65536;
}

static const SysHooks hooks = {check_select, cq_runtime, relation_bytes};

/* fn(oid) of a catalog function taking a bigint, through sc: the bigint
 * answer, or -1 for NULL. */
static int64_t call_oid_fn(Syscat *sc, Arena *a, const char *fn, int64_t oid)
{
    const FuncDesc *cands[8];
    const FuncDesc *fd = NULL;
    int n = ex_func_candidates(fn, false, 1, cands, 8);
    for (int k = 0; k < n; k++)
        if (cands[k]->args[0] == TYPE_INT8)
            fd = cands[k];
    CHECK(fd != NULL, "%s(bigint) is registered", fn);
    if (fd == NULL)
        return -2;
    SlError err = {0};
    EvalCtx cx = {0};
    cx.arena = a;
    cx.err = &err;
    cx.system_arg = sc;
    Vector arg, out;
    vector_init(&arg, a, sl_type(TYPE_INT8), 1, true);
    vector_init(&out, a, sl_type(TYPE_INT8), 1, true);
    arg.v.i64[0] = oid;
    CHECK(fd->fn(&cx, NULL, &arg, &out, NULL, 1) == 0, "%s: %s", fn,
          err.message ? err.message : "");
    sl_error_clear(&err);
    return out.nulls[0] ? -1 : out.v.i64[0];
}

/* The column `name` of row `row` of schema.rel, read through sc, as text
 * ("<null>" for NULL; "<none>" when there is no such row), in a. */
static const char *cell(Syscat *sc, Arena *a, const char *schema, const char *relname,
                        int row, const char *name)
{
    const CatRelation *rel = vrel_lookup(sc, schema, relname);
    CHECK(rel != NULL, "%s.%s is registered", schema, relname);
    if (rel == NULL)
        return "";
    int col = -1;
    for (int c = 0; c < rel->ncols; c++)
        if (strcmp(rel->cols[c].name, name) == 0)
            col = c;
    CHECK(col >= 0, "%s.%s has %s", schema, relname, name);
    SlError err = {0};
    ExCtx cx = {0};
    cx.arena = a;
    cx.err = &err;
    cx.system_arg = sc;
    ExSource *src = vrel_open(&cx, rel);
    CHECK(src != NULL, "scan: %s", err.message ? err.message : "");
    if (src == NULL || col < 0) {
        sl_error_clear(&err);
        return "";
    }
    Batch *b = NULL;
    int n = src->next(src, a, &b, NULL, &err);
    CHECK(n >= 0, "rows: %s", err.message ? err.message : "");
    const char *out = "<none>";
    if (n > 0 && row < (int)b->nrows) {
        const Vector *v = &b->cols[col];
        out = v->nulls[row] ? "<null>"
                            : arena_strndup(a, v->v.str[row].ptr, v->v.str[row].len);
    }
    if (src->close != NULL)
        src->close(src);
    sl_error_clear(&err);
    return out;
}

/* The column `name` of sys.queries' only row. */
static const char *queries_cell(Syscat *sc, Arena *a, const char *name)
{
    return cell(sc, a, "sys", "queries", 0, name);
}

int main(void)
{
    UnitData d;
    unit_data_open(&d, "syscat", false);
    Catalog *cat = d.cat;
    SlError err = {0};

    CatColumn cols[1] = {{"n", {TYPE_INT8, -1, TYPE_UNKNOWN}, false}};
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

    CHECK(vrel_lookup(NULL, "sys", "queries") == NULL, "nothing without a Syscat");
    Syscat *sc = syscat_create(cat, &hooks, &g_hook_arg);
    CHECK(vrel_lookup(sc, "pg_catalog", "pg_class") != NULL, "pg_class");
    CHECK(vrel_lookup(sc, NULL, "pg_namespace") != NULL, "pg_namespace");
    CHECK(vrel_lookup(sc, "sys", "settings") != NULL, "sys.settings");

    Arena a;
    arena_init(&a, 0);
    /* A role that may read the query sees its error ... */
    g_allow = true;
    CHECK(strcmp(queries_cell(sc, &a, "name"), "q1") == 0, "the query from the catalog given");
    CHECK(strcmp(queries_cell(sc, &a, "status"), "failed") == 0, "its stored status");
    const char *e = queries_cell(sc, &a, "last_error");
    CHECK(strcmp(e, "division by zero in row (7)") == 0, "allowed: %s", e);
    CHECK(g_checks > 0 && g_checked_oid == qoid, "the hook was asked about q1");
    CHECK(g_cq_asks > 0, "the running queries come from the hook");
    /* ... one without SELECT gets NULL, the rest of the row unchanged. */
    g_allow = false;
    int before = g_checks;
    e = queries_cell(sc, &a, "last_error");
    CHECK(strcmp(e, "<null>") == 0, "denied: %s", e);
    CHECK(g_checks > before, "asked again");
    CHECK(strcmp(queries_cell(sc, &a, "status"), "failed") == 0, "status still shown");

    /* Relation sizes: a user relation's from the runtime's hook, none
     * for a system relation, NULL for an oid that is no relation's; the
     * database's from the hook's whole-store answer. */
    CHECK(call_oid_fn(sc, &a, "pg_relation_size", qoid) == 4096, "a result table's bytes");
    CHECK(call_oid_fn(sc, &a, "pg_total_relation_size", qoid) == 4096, "total");
    CHECK(call_oid_fn(sc, &a, "pg_indexes_size", qoid) == 0, "no index bytes");
    CHECK(call_oid_fn(sc, &a, "pg_table_size", vrel_lookup(sc, "pg_catalog", "pg_class")->oid) ==
              0,
          "a system relation takes none");
    CHECK(call_oid_fn(sc, &a, "pg_relation_size", 987654321) == -1, "no such relation: NULL");
    CHECK(call_oid_fn(sc, &a, "pg_database_size", 16383) == 65536, "the database's bytes");

    /* A statement whose context has no Syscat (a continuous query's batch)
     * cannot read a system relation: 55000, not a crash. */
    {
        SlError none = {0};
        ExCtx cx = {0};
        cx.arena = &a;
        cx.err = &none;
        CHECK(vrel_open(&cx, vrel_lookup(sc, "sys", "settings")) == NULL, "no Syscat: no scan");
        CHECK(strcmp(none.sqlstate, "55000") == 0, "55000, got %s", none.sqlstate);
        sl_error_clear(&none);
    }

    /* The session the server sets is the one the loop's thread sees. */
    RtSession s = {.pid = 42, .user = "u", .database = "sluice", .state = "active"};
    syscat_session_set(sc, &s);
    CHECK(syscat_session_current(sc) == &s, "current session");

    /* A second Syscat (another server in the same process) over no
     * catalog: its own registry, settings and session. */
    Syscat *other = syscat_create(NULL, NULL, NULL);
    syscat_setting_set(sc, "port", "5433", "the first's port");
    syscat_setting_set(other, "port", "6000", "the second's port");
    syscat_setting_set(sc, "port", "5434", "replaced");
    CHECK(strcmp(cell(sc, &a, "sys", "settings", 0, "setting"), "5434") == 0,
          "the first's setting, replaced");
    CHECK(strcmp(cell(other, &a, "sys", "settings", 0, "setting"), "6000") == 0,
          "the second's setting");
    CHECK(strcmp(cell(other, &a, "sys", "settings", 1, "setting"), "<none>") == 0,
          "one setting each");
    CHECK(vrel_lookup(other, "sys", "queries") != vrel_lookup(sc, "sys", "queries"),
          "a registry each");
    CHECK(strcmp(cell(other, &a, "pg_catalog", "pg_class", 0, "relname"), "<none>") != 0,
          "the second lists its system relations");
    CHECK(syscat_session_current(other) == NULL, "the second has no session");
    CHECK(vrel_lookup(sc, "sys", "queries") != NULL, "the first still has sys.queries");
    /* sys.queries of the second: no catalog, no rows, and no hooks asked */
    int asks = g_cq_asks;
    CHECK(strcmp(cell(other, &a, "sys", "source_lag", 0, "query"), "<none>") == 0,
          "no running queries without the hook");
    CHECK(g_cq_asks == asks, "the first's hooks were not asked");
    syscat_destroy(other);
    arena_destroy(&a);

    syscat_session_set(sc, NULL);
    CHECK(syscat_session_current(sc) == NULL, "no session");
    syscat_destroy(sc);
    syscat_destroy(NULL);

    unit_data_close(&d);
    sl_error_clear(&err);
    return unit_done("test_syscat");
}
