/*
 * test_source_lag.c -- rt_source_lag (the rows of sys.source_lag) over a
 * running continuous query: a real catalog, state store and libuv loop in a
 * temporary directory, an internal stream fed by INSERT.  The committed
 * offset follows the batches, the latest offset follows the stream, the
 * lag is their difference while the query is paused.  LeakSanitizer checks
 * that everything is returned.
 */
#include "sluice/cq.h"
#include "sluice/runtime.h"
#include "unit_data.h"
#include "unit_runtime.h"

#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

/* The Runtime statements are prepared in (main). */
static Runtime *the_rt;

static void run(const char *sql)
{
    Arena a;
    arena_init(&a, 0);
    SlError err = {0};
    List *stmts;
    char tag[64];
    int rc = rt_parse(&a, sql, strlen(sql), &stmts, &err);
    for (int i = 0; rc == 0 && i < list_len(stmts); i++) {
        Prepared *p;
        rc = rt_prepare(the_rt, &a, sql, list_nth(stmts, i), NULL, 0, &p, &err);
        if (rc == 0)
            rc = rt_execute(p, NULL, 0, NULL, tag, sizeof(tag), &err);
    }
    CHECK(rc == 0, "%s: %s", sql, err.message ? err.message : "");
    sl_error_clear(&err);
    arena_destroy(&a);
}

typedef struct Seen {
    int     rows;
    char    query[32], source[32];
    bool    topic_null;
    int32_t partition;
    int64_t committed, latest, lag, last_poll_us;
} Seen;

static void lag_cb(const CqSourceLag *l, void *arg)
{
    Seen *s = arg;
    s->rows++;
    snprintf(s->query, sizeof(s->query), "%s", l->query);
    snprintf(s->source, sizeof(s->source), "%s", l->source);
    s->topic_null = l->topic == NULL;
    s->partition = l->partition;
    s->committed = l->committed;
    s->latest = l->latest;
    s->lag = l->lag;
    s->last_poll_us = l->last_poll_us;
}

static Seen look(void)
{
    Seen s;
    memset(&s, 0, sizeof(s));
    rt_source_lag(the_rt->cq, lag_cb, &s);
    return s;
}

/* Runs the loop until the query's committed offset is want (30 s at most). */
static Seen wait_committed(uv_loop_t *loop, int64_t want)
{
    time_t deadline = time(NULL) + 30;
    Seen s = look();
    while ((s.rows != 1 || s.committed != want) && time(NULL) < deadline) {
        uv_run(loop, UV_RUN_NOWAIT);
        usleep(2000);
        s = look();
    }
    return s;
}

static bool closed;

static void on_closed(void *arg)
{
    *(bool *)arg = true;
}

int main(void)
{
    UnitData d;
    unit_data_open(&d, "lag", true);
    Catalog *cat = d.cat;
    StateStore *st = d.st;
    the_rt = unit_runtime_new(cat, st, 2);
    uv_loop_t *loop = &the_rt->loop;
    rt_init(the_rt);
    CHECK(look().rows == 0, "no query, no rows");
    CqRuntime *cq = rt_cq_init(the_rt);
    CHECK(cq != NULL, "the registry");
    the_rt->cq = cq;
    run("CREATE STREAM s (a int)");
    run("INSERT INTO s VALUES (1), (2), (3), (4), (5)");
    run("CREATE CONTINUOUS QUERY q WITH (trigger = '0') AS SELECT a FROM s");
    Seen s = wait_committed(loop, 5);
    CHECK(s.rows == 1, "one partition, got %d rows", s.rows);
    CHECK(strcmp(s.query, "q") == 0 && strcmp(s.source, "s") == 0, "%s %s", s.query,
          s.source);
    CHECK(s.topic_null && s.partition == 0, "partition %d", s.partition);
    CHECK(s.committed == 5 && s.latest == 5 && s.lag == 0, "%lld %lld %lld",
          (long long)s.committed, (long long)s.latest, (long long)s.lag);
    CHECK(s.last_poll_us > 0, "poll time");
    run("ALTER CONTINUOUS QUERY q PAUSE");
    run("INSERT INTO s VALUES (6), (7), (8), (9)");
    s = look();
    CHECK(s.committed == 5 && s.latest == 9 && s.lag == 4, "paused: %lld %lld %lld",
          (long long)s.committed, (long long)s.latest, (long long)s.lag);
    run("ALTER CONTINUOUS QUERY q RESUME");
    s = wait_committed(loop, 9);
    CHECK(s.committed == 9 && s.lag == 0, "resumed: %lld %lld", (long long)s.committed,
          (long long)s.lag);
    rt_cq_close(cq, on_closed, &closed);
    for (int i = 0; i < 30000 && !closed; i++) {
        uv_run(loop, UV_RUN_NOWAIT);
        usleep(1000);
    }
    CHECK(closed, "the runtime closed");
    uv_run(loop, UV_RUN_DEFAULT);
    pool_close(the_rt->engine);
    pool_close(the_rt->statements);
    the_rt->engine = the_rt->statements = NULL;
    uv_run(loop, UV_RUN_DEFAULT);
    rt_cq_free(cq);
    the_rt->cq = NULL;
    rt_shutdown(the_rt);
    rt_destroy(the_rt);
    unit_data_close(&d);
    return unit_done("test_source_lag");
}
