/*
 * scan_bench.c -- what a state-store scan costs per row, by kind (state.h):
 * the engine's batch scans (RocksDB's own bytes, no lock) against a
 * statement's endable scans (a copy of each key and value under the
 * scan's mutex), straight against a RocksDB store in a temporary
 * directory, without the protocol or the executor.
 *
 *   build/tools/bench/scan_bench [ROWS [ROUNDS]]
 *
 * Writes ROWS rows of a table (bigint id, bigint x: 13-byte keys, the
 * rows' encodings as values), then ROUNDS times, alternating the kinds:
 * the raw scan (state_scan_next over every key) and the table scan
 * (tbl_scan_next, rows decoded into batches, as SELECT count(*) reads
 * them).  Prints the median and the best CPU time of the thread per row
 * of each.  Figures in docs/benchmarks.md ("State scans").
 */
#include "bench_store.h"
#include "sluice/relstore.h"
#include "sluice/rowcodec.h"

#include <stdio.h>
#include <stdlib.h>
#include <time.h>

static double cpu_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
    return (double)ts.tv_sec * 1e9 + (double)ts.tv_nsec;
}

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return x < y ? -1 : x > y;
}

/* ns per row of one raw scan of the table's keys. */
static double raw_scan(StateStore *st, bool endable, long rows)
{
    uint8_t prefix[5] = {'T', 0, 0, 0x40, 0};    /* 'T' + oid 16384 */
    double t0 = cpu_ns();
    StateScan *s = endable ? state_scan_open_endable(st, prefix, sizeof(prefix))
                           : state_scan_open(st, prefix, sizeof(prefix));
    const void *k, *v;
    size_t kl, vl;
    long n = 0;
    uint64_t sum = 0;
    while (state_scan_next(s, &k, &kl, &v, &vl)) {
        sum += kl + vl;
        n++;
    }
    SlError err = {0};
    if (state_scan_close(s, &err) < 0 || n != rows) {
        fprintf(stderr, "raw scan: %ld rows of %ld: %s\n", n, rows,
                err.message ? err.message : "");
        exit(1);
    }
    return (cpu_ns() - t0) / (double)n + (double)(sum == 0);
}

/* ns per row of one table scan (rows decoded into batches). */
static double table_scan(StateStore *st, const CatRelation *rel, bool endable, long rows)
{
    Arena a;
    arena_init(&a, 1 << 20);
    SlError err = {0};
    double t0 = cpu_ns();
    RelScan *s = tbl_scan_open(st, rel, endable);
    long n = 0;
    int got;
    Batch *b;
    while ((got = tbl_scan_next(s, &a, &b, NULL, &err)) > 0) {
        n += got;
        arena_reset(&a);
    }
    if (got < 0 || rel_scan_close(s, &err) < 0 || n != rows) {
        fprintf(stderr, "table scan: %ld rows of %ld: %s\n", n, rows,
                err.message ? err.message : "");
        exit(1);
    }
    double ns = (cpu_ns() - t0) / (double)n;
    arena_destroy(&a);
    return ns;
}

static void report(const char *what, double *xs, int n)
{
    qsort(xs, (size_t)n, sizeof(double), cmp_double);
    printf("%-28s median %6.1f ns/row, best %6.1f\n", what, xs[n / 2], xs[0]);
}

int main(int argc, char **argv)
{
    long rows = argc > 1 ? atol(argv[1]) : 3000000;
    int rounds = argc > 2 ? atoi(argv[2]) : 7;
    if (rows < 1 || rounds < 1 || rounds > 100)
        return 1;
    char dir[BENCH_DIR_MAX];
    StateStore *st = bench_store_open("scan-bench", dir);
    if (st == NULL)
        return 1;
    SlError err = {0};
    static CatColumn cols[2] = {{"id", {TYPE_INT8, -1, TYPE_UNKNOWN}, true}, {"x", {TYPE_INT8, -1, TYPE_UNKNOWN}, false}};
    static int pk[1] = {0};
    CatRelation rel = {.oid = 16384, .name = "bench", .kind = REL_TABLE, .ncols = 2,
                       .cols = cols, .npk = 1, .pk = pk};
    SlType types[2] = {{TYPE_INT8, -1, TYPE_UNKNOWN}, {TYPE_INT8, -1, TYPE_UNKNOWN}};
    Arena a;
    arena_init(&a, 1 << 20);
    StrBuf key;
    strbuf_init(&key);
    for (long lo = 0; lo < rows; lo += 100000) {
        uint32_t n = (uint32_t)(rows - lo < 100000 ? rows - lo : 100000);
        Batch *b = batch_alloc(&a, types, 2, n);
        StateBatch *wb = state_batch_new();
        for (uint32_t r = 0; r < n; r++) {
            b->cols[0].v.i64[r] = lo + r;
            b->cols[1].v.i64[r] = (lo + r) % 1000;
        }
        b->nrows = n;
        b->cols[0].len = b->cols[1].len = n;
        for (uint32_t r = 0; r < n; r++) {
            tbl_key(&rel, b, r, &key);
            tbl_put(wb, &key, b, r);
        }
        if (state_batch_commit(st, wb, false, &err) < 0) {
            fprintf(stderr, "%s\n", err.message);
            return 1;
        }
        state_batch_free(wb);
        arena_reset(&a);
    }
    strbuf_free(&key);
    arena_destroy(&a);
    double raw[2][100], tbl[2][100];
    raw_scan(st, false, rows);      /* warm the block cache and the page cache */
    for (int i = 0; i < rounds; i++) {
        for (int kind = 0; kind < 2; kind++) {
            raw[kind][i] = raw_scan(st, kind == 1, rows);
            tbl[kind][i] = table_scan(st, &rel, kind == 1, rows);
        }
    }
    printf("%ld rows, %d rounds, CPU time of the scanning thread\n", rows, rounds);
    report("raw scan, batch (engine)", raw[0], rounds);
    report("raw scan, endable (client)", raw[1], rounds);
    report("table scan, batch (engine)", tbl[0], rounds);
    report("table scan, endable (client)", tbl[1], rounds);
    return bench_store_close(st, dir);
}
