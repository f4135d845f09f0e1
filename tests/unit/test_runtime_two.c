/*
 * test_runtime_two.c -- two Runtimes in one process (runtime.h; issue 20,
 * docs/architecture.md "The Runtime context"): each over its own data
 * directory, with its own loop, pools, catalog, state store and modify
 * lock.  A table created in one is not seen by the other, the same name
 * may be created in both with other columns, and the rows written into
 * each stay there.  Each statement runs in the Runtime it was prepared in
 * (rt_prepare's first parameter), whichever Runtime rt_init saw last.
 *
 * Still shared between the two (docs/architecture.md, "Process-wide
 * state", the rows of class "moves" that remain): runtime.c's g_rt (the
 * Runtime rt_init was given, which the engine's files and the
 * argument-less hooks reach through rt_runtime / rt_catalog / rt_state /
 * rt_kafka_policy -- continuous queries, the files paths' checks, the
 * privilege checks of roles.c), syscat's catalog, hooks and virtual
 * relations (so only the Runtime given to rt_init answers sys.* and
 * pg_catalog), the state floor's group commit and row counters
 * (relstore.c) and result-file staging (resfile.c), and the engine's
 * registry (cq_ddl.c, cq.c, cq_layout.c).  The statements here run as the
 * internal role (no privilege checks), touch no system relation and start
 * no continuous query, so they meet none of those.  LeakSanitizer checks
 * that both Runtimes are freed whole.
 */
#include "sluice/catalog.h"
#include "sluice/runtime.h"
#include "sluice/state.h"
#include "unit.h"

#include <stdlib.h>
#include <string.h>
#include <unistd.h>

typedef struct Side {
    char     dir[64];
    Runtime *rt;
} Side;

static int collect_cb(ResultSink *sink, const Batch *b)
{
    StrBuf *out = sink->ctx;
    for (uint32_t r = 0; r < b->nrows; r++) {
        for (uint32_t c = 0; c < b->ncols; c++) {
            if (c)
                strbuf_putc(out, '|');
            if (vector_is_null(&b->cols[c], r))
                strbuf_puts(out, "NULL");
            else
                value_format_text(&b->cols[c], r, out);
        }
        strbuf_putc(out, '\n');
    }
    return 0;
}

/* Runs sql (one statement) in rt: its rows as "a|b" lines, or "ERROR
 * <sqlstate>". */
static void run(Runtime *rt, const char *sql, StrBuf *out)
{
    Arena a;
    arena_init(&a, 0);
    SlError err = {0};
    List *stmts;
    Prepared *p;
    char tag[64];
    strbuf_reset(out);
    ResultSink sink = {out, collect_cb};
    if (rt_parse(&a, sql, strlen(sql), &stmts, &err) < 0 ||
        rt_prepare(rt, &a, sql, list_nth(stmts, 0), NULL, 0, &p, &err) < 0 ||
        rt_execute(p, NULL, 0, &sink, tag, sizeof(tag), &err) < 0) {
        strbuf_reset(out);
        strbuf_printf(out, "ERROR %s", err.sqlstate);
    }
    sl_error_clear(&err);
    arena_destroy(&a);
}

static void expect(Side *s, const char *sql, const char *want)
{
    StrBuf out;
    strbuf_init(&out);
    run(s->rt, sql, &out);
    const char *got = out.data ? out.data : "";
    CHECK(strcmp(got, want) == 0, "%s: %s\n  got:  %s\n  want: %s", s->dir, sql, got, want);
    strbuf_free(&out);
}

static void open_side(Side *s)
{
    snprintf(s->dir, sizeof(s->dir), "/tmp/sluice-rt2-XXXXXX");
    CHECK(mkdtemp(s->dir) != NULL, "mkdtemp");
    RuntimeOptions ro = {.engine_workers = 1, .statement_workers = 1};
    s->rt = rt_create(&ro);
    char path[128];
    SlError err = {0};
    snprintf(path, sizeof(path), "%s/catalog.db", s->dir);
    CHECK(cat_open(path, &s->rt->cat, &err) == 0, "%s", err.message);
    snprintf(path, sizeof(path), "%s/state", s->dir);
    CHECK(state_open(path, &s->rt->st, &err) == 0, "%s", err.message);
    sl_error_clear(&err);
}

static void close_side(Side *s)
{
    StateStore *st = s->rt->st;
    Catalog *cat = s->rt->cat;
    rt_destroy(s->rt);
    state_close(st);
    cat_close(cat);
    char cmd[128];
    snprintf(cmd, sizeof(cmd), "rm -rf %s", s->dir);
    CHECK(system(cmd) == 0, "%s", cmd);
}

int main(void)
{
    Side one, two;
    open_side(&one);
    open_side(&two);
    CHECK(one.rt != two.rt && one.rt->cat != two.rt->cat && one.rt->st != two.rt->st &&
          one.rt->engine != two.rt->engine, "two Runtimes share nothing they hold");
    /* the system relations start on one of them (syscat is still one per
     * process); the statements below run wherever they were prepared */
    rt_init(one.rt);

    expect(&one, "CREATE TABLE t (k int PRIMARY KEY, v text)", "");
    expect(&one, "INSERT INTO t VALUES (1, 'one'), (2, 'uno')", "");
    /* the other Runtime's catalog has no t ... */
    expect(&two, "SELECT * FROM t", "ERROR 42P01");
    expect(&two, "INSERT INTO t VALUES (3, 'three')", "ERROR 42P01");
    /* ... so t may be made there with other columns, and holds its own rows */
    expect(&two, "CREATE TABLE t (name text PRIMARY KEY, n bigint, flag boolean)", "");
    expect(&two, "INSERT INTO t VALUES ('two', 2, true)", "");
    expect(&two, "SELECT name, n, flag FROM t", "two|2|t\n");
    expect(&one, "SELECT k, v FROM t ORDER BY k", "1|one\n2|uno\n");
    /* a table only the second one has */
    expect(&two, "CREATE TABLE only_two (x int)", "");
    expect(&one, "SELECT * FROM only_two", "ERROR 42P01");
    /* DROP in one leaves the other's t */
    expect(&one, "DROP TABLE t", "");
    expect(&one, "SELECT * FROM t", "ERROR 42P01");
    expect(&two, "SELECT count(*) FROM t", "1\n");
    /* a key the other Runtime holds is no conflict here */
    expect(&one, "CREATE TABLE t (k int PRIMARY KEY)", "");
    expect(&one, "INSERT INTO t VALUES (1)", "");
    expect(&one, "INSERT INTO t VALUES (1)", "ERROR 23505");

    rt_shutdown(one.rt);
    close_side(&one);
    close_side(&two);
    return unit_done("runtime_two");
}
