/*
 * test_cq_registries.c -- two registries of continuous queries (cq.h's
 * CqRuntime) in one process, each over its own catalog and state store in
 * a temporary directory, on one loop and one engine pool.  What the engine
 * keeps for the server's life is the registry's, not the process's: the
 * result layouts (cq_layout.c) of one are not seen by the other, so a scan
 * through registry B reads a result table at once while the same table's
 * rows in registry A are still the former definition's (55000 while A's
 * rewrite is stalled).  Closing: the callback comes once nothing is left,
 * a second close calls back at once, the registry stays readable (no
 * query, cq_running false) until cq_runtime_free.  LeakSanitizer checks
 * that freeing a registry returns its layouts and their references.
 */
#include "sluice/catalog.h"
#include "sluice/cq.h"
#include "sluice/exec.h"
#include "sluice/pool.h"
#include "sluice/state.h"
#include "unit.h"

#include <stdlib.h>
#include <string.h>

typedef struct Side {
    char               dir[64];
    Catalog           *cat;
    StateStore        *st;
    CqRuntime         *cq;
    const CatRelation *rel;     /* the result table of "q" */
} Side;

static void side_open(Side *s, uv_loop_t *loop, Pool *engine)
{
    SlError err = {0};
    char path[128];
    snprintf(s->dir, sizeof(s->dir), "/tmp/sluice-test-cqreg.XXXXXX");
    CHECK(mkdtemp(s->dir) != NULL);
    snprintf(path, sizeof(path), "%s/catalog.db", s->dir);
    CHECK(cat_open(path, &s->cat, &err) == 0, "%s", err.message);
    snprintf(path, sizeof(path), "%s/state", s->dir);
    CHECK(state_open(path, &s->st, &err) == 0, "%s", err.message);
    CatColumn cols[1] = {{"n", {TYPE_INT8, -1, TYPE_UNKNOWN}, false}};
    CatRelation def = {0};
    def.name = "q";
    def.kind = REL_QUERY;
    def.ncols = 1;
    def.cols = cols;
    def.sql = "CREATE CONTINUOUS QUERY q AS SELECT count(*) AS n FROM s";
    CHECK(cat_create_relation(s->cat, &def, &s->rel, &err) == 0, "%s", err.message);
    s->cq = cq_runtime_init(loop, engine, s->cat, s->st);
    sl_error_clear(&err);
}

static void side_close(Side *s)
{
    cq_runtime_free(s->cq);
    state_close(s->st);
    cat_close(s->cat);
    char cmd[128];
    snprintf(cmd, sizeof(cmd), "rm -rf %s", s->dir);
    if (system(cmd) != 0)
        fprintf(stderr, "could not remove %s\n", s->dir);
}

/* cq_layout_scan of s's result table through registry cq: 1 when it gave
 * a scan, 0 when it failed (with sqlstate, or any error when NULL). */
static int scan(CqRuntime *cq, Side *s, const char *sqlstate)
{
    SlError err = {0};
    ExSource *src = cq_layout_scan(cq_layouts(cq), s->st, s->rel, &err);
    if (src != NULL) {
        src->close(src);
        return 1;
    }
    CHECK(sqlstate != NULL && strcmp(err.sqlstate, sqlstate) == 0, "%s: %s", err.sqlstate,
          err.message);
    sl_error_clear(&err);
    return 0;
}

static void count_cb(void *arg)
{
    (*(int *)arg)++;
}

int main(void)
{
    uv_loop_t loop;
    uv_loop_init(&loop);
    Pool *engine = pool_new(&loop, "engine", 1);
    Side a, b;
    side_open(&a, &loop, engine);
    side_open(&b, &loop, engine);
    CHECK(a.cq != b.cq && cq_layouts(a.cq) != cq_layouts(b.cq), "two registries");
    CHECK(cq_layouts(NULL) == NULL);

    /* Nothing replaced: both read the table at once; so does no registry. */
    CHECK(scan(a.cq, &a, NULL) == 1 && scan(b.cq, &a, NULL) == 1 && scan(NULL, &a, NULL) == 1);

    /* In A, "q" was replaced by a definition with another result hash and
     * its rewrite will not come (paused): A's scan refuses the former
     * rows; B knows nothing of it. */
    cq_layout_replace(cq_layouts(a.cq), a.rel, 1, a.rel, 2);
    cq_layout_stalled(cq_layouts(a.cq), a.rel, "the query is paused");
    CHECK(scan(a.cq, &a, "55000") == 0, "A waits for its rewrite");
    CHECK(scan(b.cq, &a, NULL) == 1, "B has no layout for it");

    /* A's rewrite lands: A reads again. */
    cq_layout_write_begin(cq_layouts(a.cq));
    cq_layout_write_end(cq_layouts(a.cq), a.rel->oid, 2, true);
    CHECK(scan(a.cq, &a, NULL) == 1, "rewritten");

    /* Dropped in B only: B's entry (made by a start that still had to
     * rewrite) fails a scan with 42P01; A's entry for the same oid (both
     * catalogs start at 16384) is untouched and A goes on reading. */
    CHECK(a.rel->oid == b.rel->oid, "%u %u", a.rel->oid, b.rel->oid);
    cq_layout_start(cq_layouts(b.cq), b.rel, 5, true, 4);
    cq_layout_forget(cq_layouts(b.cq), b.rel->oid);
    CHECK(scan(b.cq, &b, "42P01") == 0, "dropped in B");
    CHECK(scan(a.cq, &a, NULL) == 1, "A never saw B's drop");

    /* Closing: no query, so the callback comes at once; a second close
     * calls back at once too; the registry is readable until freed. */
    int closed = 0;
    CHECK(cq_running(a.cq));
    cq_runtime_close(a.cq, count_cb, &closed);
    CHECK(closed == 1 && !cq_running(a.cq), "closed once");
    cq_runtime_close(a.cq, count_cb, &closed);
    CHECK(closed == 2, "second close calls back");
    CHECK(cq_dependent(a.cq, a.rel->oid) == NULL && cq_running(b.cq), "B still runs");
    cq_runtime_close(b.cq, NULL, NULL);
    CHECK(!cq_running(b.cq));

    side_close(&a);
    side_close(&b);
    pool_close(engine);
    uv_run(&loop, UV_RUN_DEFAULT);
    uv_loop_close(&loop);
    return unit_done("test_cq_registries");
}
