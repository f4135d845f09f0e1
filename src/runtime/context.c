/*
 * context.c -- the Runtime: the server's context, made once by main
 * (runtime.h; docs/architecture.md, "The Runtime context").
 *
 *   rt_create    a Runtime with its loop and its two worker pools (pool.h)
 *   rt_destroy   closes the pools and the loop, frees the Runtime
 *
 * The Runtime owns its loop and pools; the catalog and the state store it
 * points to are opened and closed by main, and the pieces that start on
 * it (the continuous queries, the ingesters, the HTTP pages) are started
 * and stopped by their own modules with the Runtime as first parameter.
 */
#include "runtime_int.h"

#include "sluice/log.h"

#include <time.h>

Runtime *rt_create(const RuntimeOptions *opts)
{
    Runtime *rt = sl_calloc(1, sizeof(Runtime));
    uv_loop_init(&rt->loop);
    pthread_mutex_init(&rt->modify_mu, NULL);
    pthread_mutex_init(&rt->ingest.mu, NULL);
    rt->engine = pool_new(&rt->loop, "engine", opts->engine_workers);
    rt->statements = pool_new(&rt->loop, "statement", opts->statement_workers);
    struct timespec ts;
    clock_gettime(CLOCK_REALTIME, &ts);
    rt->started_us = (int64_t)ts.tv_sec * 1000000 + ts.tv_nsec / 1000;
    return rt;
}

void rt_destroy(Runtime *rt)
{
    if (rt == NULL)
        return;
    /* nothing is outstanding on the pools: the loop has ended */
    pool_close(rt->engine);
    pool_close(rt->statements);
    uv_run(&rt->loop, UV_RUN_DEFAULT);
    if (uv_loop_close(&rt->loop) != 0)
        sl_log(LOG_WARN, "loop closed with live handles", NULL);
    pthread_mutex_destroy(&rt->modify_mu);
    pthread_mutex_destroy(&rt->ingest.mu);
    sl_free(rt);
}
