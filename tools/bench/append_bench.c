/*
 * append_bench.c -- stream appends from concurrent threads, sync vs group
 * commit (relstore.h), straight against a RocksDB store in a temporary
 * directory: what the commit policy costs and saves without the protocol.
 *
 *   build/tools/bench/append_bench [THREADS [APPENDS [ROWS [WINDOW_US]]]]
 *
 * Each of THREADS threads makes APPENDS appends of ROWS rows (a bigint and
 * a 40-byte text); each append returns only once durable.  Prints, per
 * mode, appends/s, rows/s, the RocksDB writes (= fsyncs) taken, and the
 * mean append latency.  Figures in docs/benchmarks.md ("Ingestion").
 */
#include "bench_store.h"
#include "sluice/relstore.h"
#include "sluice/rowcodec.h"

#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>
#include <unistd.h>

static int g_appends = 200, g_rows = 1;

typedef struct Worker {
    StateStore  *st;
    CatRelation *rel;
    int          id;
    double       latency;   /* seconds, summed */
} Worker;

static double now_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

static void *worker(void *arg)
{
    Worker *w = arg;
    Arena a;
    arena_init(&a, 65536);
    SlType types[2] = {{TYPE_INT8, -1, TYPE_UNKNOWN}, {TYPE_TEXT, -1, TYPE_UNKNOWN}};
    SlError err = {0};
    for (int i = 0; i < g_appends; i++) {
        arena_reset(&a);
        Batch *b = batch_alloc(&a, types, 2, (uint32_t)g_rows);
        for (int r = 0; r < g_rows; r++) {
            b->cols[0].v.i64[r] = (int64_t)w->id << 32 | i;
            b->cols[0].nulls[r] = 0;
            b->cols[1].v.str[r] = (SlStr){"0123456789012345678901234567890123456789", 40};
            b->cols[1].nulls[r] = 0;
        }
        b->nrows = (uint32_t)g_rows;
        b->cols[0].len = b->cols[1].len = b->nrows;
        int64_t first;
        double t0 = now_s();
        if (stream_append(w->st, w->rel, b, &first, &err) < 0) {
            fprintf(stderr, "append failed: %s\n", err.message);
            exit(1);
        }
        w->latency += now_s() - t0;
    }
    arena_destroy(&a);
    return NULL;
}

static void run(StateStore *st, CatRelation *rel, int threads, const char *mode)
{
    int64_t a0, w0, a1, w1;
    stream_commit_stats(st, &a0, &w0);
    Worker *ws = calloc((size_t)threads, sizeof(Worker));
    pthread_t *th = calloc((size_t)threads, sizeof(pthread_t));
    double t0 = now_s();
    for (int t = 0; t < threads; t++) {
        ws[t] = (Worker){st, rel, t, 0};
        pthread_create(&th[t], NULL, worker, &ws[t]);
    }
    double lat = 0;
    for (int t = 0; t < threads; t++) {
        pthread_join(th[t], NULL);
        lat += ws[t].latency;
    }
    double secs = now_s() - t0;
    stream_commit_stats(st, &a1, &w1);
    int64_t appends = a1 - a0, writes = w1 - w0;
    printf("%-6s %2d threads: %7lld appends in %6.2f s = %8.0f appends/s, %9.0f rows/s, "
           "%6lld writes (%.1f appends/fsync), mean latency %.2f ms\n",
           mode, threads, (long long)appends, secs, (double)appends / secs,
           (double)appends * g_rows / secs, (long long)writes,
           (double)appends / (double)(writes ? writes : 1), lat / (double)appends * 1e3);
    free(ws);
    free(th);
}

int main(int argc, char **argv)
{
    int threads = argc > 1 ? atoi(argv[1]) : 8;
    g_appends = argc > 2 ? atoi(argv[2]) : 200;
    g_rows = argc > 3 ? atoi(argv[3]) : 1;
    int64_t window = argc > 4 ? atoll(argv[4]) : 1000;
    char dir[BENCH_DIR_MAX];
    StateStore *st = bench_store_open("append-bench", dir);
    if (st == NULL)
        return 1;
    static CatColumn cols[2] = {{"id", {TYPE_INT8, -1, TYPE_UNKNOWN}, false}, {"s", {TYPE_TEXT, -1, TYPE_UNKNOWN}, false}};
    CatRelation rel = {.oid = 16384, .name = "bench", .kind = REL_STREAM, .ncols = 2, .cols = cols};
    stream_commit_mode_set(st, STREAM_COMMIT_SYNC, 0);
    run(st, &rel, threads, "sync");
    stream_commit_mode_set(st, STREAM_COMMIT_GROUP, window);
    run(st, &rel, threads, "group");
    stream_commit_mode_set(st, STREAM_COMMIT_GROUP, 0);
    run(st, &rel, threads, "group0");
    stream_forget(st, &rel);
    return bench_store_close(st, dir);
}
