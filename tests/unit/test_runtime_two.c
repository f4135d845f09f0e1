/*
 * test_runtime_two.c -- two Runtimes in one process (runtime.h; issue 20,
 * docs/architecture.md "The Runtime context"): each over its own data
 * directory, with its own loop, pools, catalog, state store, modify lock,
 * system catalog and registry of continuous queries, both started
 * (rt_init, rt_cq_init) and running at once.
 *
 *   tables      a table created in one is not seen by the other, the same
 *               name may be created in both with other columns, and the
 *               rows written into each stay there
 *   continuous  each runs a continuous query q over its own stream s (the
 *               same names, other columns and rows), both loops turned in
 *               turn: each q's result is its own stream's, rows added to
 *               one reach only that one's result, and a query made in one
 *               is not in the other's catalog
 *   host        each has its own data directory, refused to its own files
 *               sink and not to the other's (rt_host_init, hostaccess.c),
 *               also when a query writes the sink (sink_open)
 *   sys.*       each has its own sys.settings (rt_setting_set), current
 *               session (rt_session_set: pg_backend_pid(),
 *               current_database()) and sys.connections (rt_session_lister)
 *
 * Nothing is reached through a process-wide pointer: a file that read "the"
 * Runtime (the g_rt that runtime.c kept until issue 20's last move) would
 * plan one query over the other's catalog, or show one Runtime's settings
 * and session in the other.  The statements run as the internal role (no
 * privilege checks).  LeakSanitizer checks that both Runtimes are freed
 * whole.
 */
#include "sluice/catalog.h"
#include "sluice/cq.h"
#include "sluice/runtime.h"
#include "sluice/state.h"
#include "unit.h"
#include "unit_data.h"
#include "unit_runtime.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

typedef struct Side {
    UnitData  data;         /* its directory, catalog and state store */
    Runtime  *rt;
    RtSession session;      /* its client, as the server would describe it */
} Side;

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
    ResultSink sink = {out, unit_rows_cb};
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
    CHECK(strcmp(got, want) == 0, "%s: %s\n  got:  %s\n  want: %s", s->data.dir, sql, got, want);
    strbuf_free(&out);
}

static void open_side(Side *s)
{
    unit_data_open(&s->data, "rt2", true);
    s->rt = unit_runtime_new(s->data.cat, s->data.st, 1);
}

static void close_side(Side *s)
{
    rt_destroy(s->rt);
    unit_data_close(&s->data);
}

/* Runs sql in s until it gives want, turning both Runtimes' loops in turn
 * (30 s at most); then checks it. */
static void expect_soon(Side *s, Side *other, const char *sql, const char *want)
{
    StrBuf out;
    strbuf_init(&out);
    time_t deadline = time(NULL) + 30;
    for (;;) {
        run(s->rt, sql, &out);
        if ((out.data && strcmp(out.data, want) == 0) || time(NULL) >= deadline)
            break;
        uv_run(&s->rt->loop, UV_RUN_NOWAIT);
        uv_run(&other->rt->loop, UV_RUN_NOWAIT);
        usleep(2000);
    }
    strbuf_free(&out);
    expect(s, sql, want);
}

/* sys.connections' lister: the one session of the Side. */
static void list_side(void *arg, rt_session_emit_fn emit, void *emit_arg)
{
    Side *s = arg;
    emit(&s->session, emit_arg);
}

/* As main starts a Runtime: what roles may reach on the host (no files
 * root; the data directory its own), its system catalog and its registry
 * of continuous queries. */
static void start_side(Side *s)
{
    SlError err = {0};
    CHECK(rt_host_init(s->rt, NULL, s->data.dir, NULL, &err) == 0, "%s", err.message);
    sl_error_clear(&err);
    rt_init(s->rt);
    s->rt->cq = rt_cq_init(s->rt);
    CHECK(s->rt->cq != NULL, "%s: the registry", s->data.dir);
}

/* What main and the server give a started Runtime: a setting, the current
 * session and the lister of sessions. */
static void publish_side(Side *s, int32_t pid, const char *user, const char *database,
                         const char *listen)
{
    s->session = (RtSession){.pid = pid, .user = user, .database = database,
                             .application_name = "test_runtime_two", .state = "active"};
    rt_session_set(s->rt, &s->session);
    rt_session_lister(s->rt, list_side, s);
    rt_setting_set(s->rt, "listen", listen, "address the server listens on");
}

static void on_closed(void *arg)
{
    *(bool *)arg = true;
}

/* What main does at the end, for one Runtime: its queries stopped, the
 * pools stopped, the registry and the system catalog freed. */
static void stop_side(Side *s)
{
    bool closed = false;
    rt_session_set(s->rt, NULL);
    rt_session_lister(s->rt, NULL, NULL);
    rt_cq_close(s->rt->cq, on_closed, &closed);
    for (int i = 0; i < 30000 && !closed; i++) {
        uv_run(&s->rt->loop, UV_RUN_NOWAIT);
        usleep(1000);
    }
    CHECK(closed, "%s: the registry closed", s->data.dir);
    uv_run(&s->rt->loop, UV_RUN_DEFAULT);
    pool_close(s->rt->engine);
    pool_close(s->rt->statements);
    s->rt->engine = s->rt->statements = NULL;
    uv_run(&s->rt->loop, UV_RUN_DEFAULT);
    rt_cq_free(s->rt->cq);
    s->rt->cq = NULL;
    rt_shutdown(s->rt);
    rt_host_free(s->rt);
}

/* The rows the files sink in dir committed (its manifest's "rows"), turning
 * both loops until there are want of them (30 s at most). */
static long sink_rows(Side *a, Side *b, const char *dir, long want)
{
    char path[160];
    snprintf(path, sizeof(path), "%s/_manifest.jsonl", dir);
    time_t deadline = time(NULL) + 30;
    long rows = 0;
    for (;;) {
        rows = 0;
        FILE *f = fopen(path, "r");
        char line[512];
        while (f != NULL && fgets(line, sizeof(line), f) != NULL) {
            const char *r = strstr(line, "\"rows\":");
            rows += r ? strtol(r + 7, NULL, 10) : 0;
        }
        if (f != NULL)
            fclose(f);
        if (rows == want || time(NULL) >= deadline)
            return rows;
        uv_run(&a->rt->loop, UV_RUN_NOWAIT);
        uv_run(&b->rt->loop, UV_RUN_NOWAIT);
        usleep(2000);
    }
}

int main(void)
{
    Side one, two;
    open_side(&one);
    open_side(&two);
    CHECK(one.rt != two.rt && one.rt->cat != two.rt->cat && one.rt->st != two.rt->st &&
          one.rt->engine != two.rt->engine, "two Runtimes share nothing they hold");
    /* both started before either is given anything, so that nothing can
     * pass for "the Runtime started last" */
    start_side(&one);
    start_side(&two);
    publish_side(&one, 4101, "ann", "db_one", "one.example");
    publish_side(&two, 4202, "bob", "db_two", "two.example");
    CHECK(one.rt->syscat != two.rt->syscat, "two system catalogs");

    /* tables */
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

    /* continuous queries: the same names in both, other columns and rows */
    expect(&one, "CREATE STREAM s (a int)", "");
    expect(&two, "CREATE STREAM s (b bigint, tag text)", "");
    expect(&one, "INSERT INTO s VALUES (1), (2), (3)", "");
    expect(&two, "INSERT INTO s VALUES (10, 'x'), (20, 'y')", "");
    expect(&one, "CREATE CONTINUOUS QUERY q WITH (trigger = '0') AS "
                 "SELECT sum(a) AS total, count(*) AS n FROM s", "");
    expect(&two, "CREATE CONTINUOUS QUERY q WITH (trigger = '0') AS "
                 "SELECT sum(b) AS total, count(*) AS n, max(tag) AS last FROM s", "");
    expect_soon(&one, &two, "SELECT total, n FROM q", "6|3\n");
    expect_soon(&two, &one, "SELECT total, n, last FROM q", "30|2|y\n");
    /* rows into one stream reach only that one's query */
    expect(&one, "INSERT INTO s VALUES (4)", "");
    expect_soon(&one, &two, "SELECT total, n FROM q", "10|4\n");
    expect(&two, "INSERT INTO s VALUES (5, 'z')", "");
    expect_soon(&two, &one, "SELECT total, n, last FROM q", "35|3|z\n");
    expect(&one, "SELECT total, n FROM q", "10|4\n");
    /* a query only one has */
    expect(&one, "CREATE CONTINUOUS QUERY only_one WITH (trigger = '0') AS "
                 "SELECT count(*) AS n FROM s", "");
    expect_soon(&one, &two, "SELECT n FROM only_one", "4\n");
    expect(&two, "SELECT * FROM only_one", "ERROR 42P01");

    /* the files paths are each Runtime's: its own data directory is
     * refused to it, the other's is not (a files sink, checked at CREATE
     * SINK and again by the query at each commit) */
    char sql[512], out_dir[UNIT_PATH_MAX];
    snprintf(out_dir, sizeof(out_dir), "%s/out", two.data.dir);
    snprintf(sql, sizeof(sql),
             "CREATE SINK f WITH (connector = 'files', path = '%s', format = 'csv')", out_dir);
    expect(&two, sql, "ERROR 42501");
    expect(&one, sql, "");
    expect(&one, "CREATE CONTINUOUS QUERY w INTO f WITH (trigger = '0') AS SELECT a FROM s", "");
    long rows = sink_rows(&one, &two, out_dir, 4);
    CHECK(rows == 4, "one's query wrote its 4 rows into its sink: %ld", rows);

    /* sys.*: each Runtime's settings and sessions */
    expect(&one, "SELECT setting FROM sys.settings WHERE name = 'listen'", "one.example\n");
    expect(&two, "SELECT setting FROM sys.settings WHERE name = 'listen'", "two.example\n");
    expect(&one, "SELECT pg_backend_pid(), current_database()", "4101|db_one\n");
    expect(&two, "SELECT pg_backend_pid(), current_database()", "4202|db_two\n");
    expect(&one, "SELECT pid, usename, datname FROM sys.connections", "4101|ann|db_one\n");
    expect(&two, "SELECT pid, usename, datname FROM sys.connections", "4202|bob|db_two\n");
    /* the session one Runtime drops stays in the other */
    rt_session_set(one.rt, NULL);
    expect(&one, "SELECT pg_backend_pid()", "0\n");
    expect(&two, "SELECT pg_backend_pid()", "4202\n");

    stop_side(&one);
    stop_side(&two);
    close_side(&one);
    close_side(&two);
    return unit_done("runtime_two");
}
