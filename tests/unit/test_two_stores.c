/*
 * test_two_stores.c -- two StateStores over two directories in one process
 * keep apart what each holds (docs/architecture.md, "Process-wide state"):
 * the end offsets and row ids of relations with the same oid (each data
 * directory numbers its relations from the same first oid), the commit
 * mode, the group commit's appends and writes, a failed group write
 * (fault builds), which refuses the appends of its own store only, and the
 * result files' direct I/O switch and the bytes counted each way.
 */
#include "unit.h"
#include "state/resfile.h"
#include "sluice/relstore.h"
#include "sluice/rowcodec.h"

#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static CatColumn cols[2] = {{"id", {TYPE_INT8, -1, TYPE_UNKNOWN}, false}, {"s", {TYPE_TEXT, -1, TYPE_UNKNOWN}, false}};

static CatRelation relation(uint32_t oid, RelKind kind)
{
    return (CatRelation){.oid = oid, .name = "r", .kind = kind, .ncols = 2, .cols = cols};
}

/* n rows, ids from first on, in a. */
static Batch *rows(Arena *a, int64_t first, uint32_t n)
{
    SlType types[2] = {{TYPE_INT8, -1, TYPE_UNKNOWN}, {TYPE_TEXT, -1, TYPE_UNKNOWN}};
    Batch *b = batch_alloc(a, types, 2, n);
    for (uint32_t r = 0; r < n; r++) {
        b->cols[0].v.i64[r] = first + r;
        b->cols[0].nulls[r] = 0;
        b->cols[1].v.str[r] = (SlStr){"row", 3};
        b->cols[1].nulls[r] = 0;
    }
    b->nrows = n;
    b->cols[0].len = b->cols[1].len = n;
    return b;
}

/* Appends n rows to rel in st: the first offset, or -1 (err set). */
static int64_t append(StateStore *st, const CatRelation *rel, int64_t id, uint32_t n,
                      SlError *err)
{
    Arena a;
    arena_init(&a, 4096);
    int64_t first = -1;
    if (stream_append(st, rel, rows(&a, id, n), &first, err) < 0)
        first = -1;
    arena_destroy(&a);
    return first;
}

/* The ids of rel's rows at offsets [from, to) of st, into ids (up to max):
 * the row count. */
static int scan(StateStore *st, const CatRelation *rel, int64_t from, int64_t to,
                int64_t *ids, int max)
{
    Arena a;
    arena_init(&a, 65536);
    SlError err = {0};
    RelScan *s = stream_scan_open(st, rel, from, to, false);
    Batch *b;
    int n, got = 0;
    while ((n = stream_scan_next(s, &a, &b, &err)) > 0) {
        for (int i = 0; i < n; i++, got++)
            if (got < max)
                ids[got] = b->cols[0].v.i64[i];
        arena_reset(&a);
    }
    CHECK(n == 0, "%s", err.message ? err.message : "");
    CHECK(rel_scan_close(s, &err) == 0);
    sl_error_clear(&err);
    arena_destroy(&a);
    return got;
}

typedef struct Appender {
    StateStore        *st;
    const CatRelation *rel;
    int                appends;
    int                failures;
} Appender;

static void *append_thread(void *arg)
{
    Appender *ap = arg;
    SlError err = {0};
    for (int i = 0; i < ap->appends; i++)
        if (append(ap->st, ap->rel, 1000 + i, 1, &err) < 0)
            ap->failures++;
    sl_error_clear(&err);
    return NULL;
}

/* The same oid in both stores: each numbers its own offsets and row ids. */
static void test_counters(StateStore *a, StateStore *b)
{
    SlError err = {0};
    CatRelation s = relation(16384, REL_STREAM), t = relation(16385, REL_TABLE);
    CHECK(append(a, &s, 0, 3, &err) == 0);
    CHECK(append(a, &s, 3, 4, &err) == 3);
    CHECK(append(b, &s, 100, 2, &err) == 0, "b's first offset is a's end");
    CHECK(stream_end_offset(a, &s, &err) == 7);
    CHECK(stream_end_offset(b, &s, &err) == 2);
    int64_t ids[16];
    CHECK(scan(b, &s, 0, 2, ids, 16) == 2 && ids[0] == 100 && ids[1] == 101);
    CHECK(scan(a, &s, 0, 7, ids, 16) == 7 && ids[0] == 0 && ids[6] == 6);
    CHECK(tbl_next_rowid(a, &t, &err) == 0 && tbl_next_rowid(a, &t, &err) == 1);
    CHECK(tbl_next_rowid(b, &t, &err) == 0);
    /* Forgetting a relation in one store leaves the other's counters. */
    stream_forget(a, &s);
    CHECK(append(b, &s, 102, 1, &err) == 2);
    CHECK(stream_end_offset(a, &s, &err) == 7);     /* found again on disk */
    CHECK(!sl_error_set(&err), "%s", err.message);
    sl_error_clear(&err);
}

/* Group commit in a, sync in b, appending at the same time: each store's
 * mode and figures are its own. */
static void test_group_commit(StateStore *a, StateStore *b)
{
    CatRelation s = relation(16390, REL_STREAM);
    int64_t a0, w0, b0, x0;
    stream_commit_stats(a, &a0, &w0);
    stream_commit_stats(b, &b0, &x0);
    stream_commit_mode_set(a, STREAM_COMMIT_GROUP, 2000);
    CHECK(stream_commit_mode(a) == STREAM_COMMIT_GROUP);
    CHECK(stream_commit_mode(b) == STREAM_COMMIT_SYNC);
    enum { THREADS = 4, APPENDS = 50 };
    Appender aps[THREADS + 1];
    pthread_t th[THREADS + 1];
    for (int t = 0; t < THREADS; t++)
        aps[t] = (Appender){a, &s, APPENDS, 0};
    aps[THREADS] = (Appender){b, &s, APPENDS, 0};
    for (int t = 0; t <= THREADS; t++)
        pthread_create(&th[t], NULL, append_thread, &aps[t]);
    for (int t = 0; t <= THREADS; t++) {
        pthread_join(th[t], NULL);
        CHECK(aps[t].failures == 0);
    }
    int64_t a1, w1, b1, x1;
    stream_commit_stats(a, &a1, &w1);
    stream_commit_stats(b, &b1, &x1);
    CHECK(a1 - a0 == THREADS * APPENDS, "a: %lld appends", (long long)(a1 - a0));
    CHECK(w1 - w0 < a1 - a0, "a: %lld writes for %lld appends", (long long)(w1 - w0),
          (long long)(a1 - a0));
    CHECK(b1 - b0 == APPENDS && x1 - x0 == APPENDS, "b (sync): %lld appends, %lld writes",
          (long long)(b1 - b0), (long long)(x1 - x0));
    SlError err = {0};
    CHECK(stream_end_offset(a, &s, &err) == THREADS * APPENDS);
    CHECK(stream_end_offset(b, &s, &err) == APPENDS);
    sl_error_clear(&err);
    stream_commit_mode_set(a, STREAM_COMMIT_SYNC, 0);
}

/* A fresh store counts nothing, whatever the other has done. */
static void test_fresh(StateStore *b, const char *dir)
{
    SlError err = {0};
    StateStore *c;
    CHECK(state_open(dir, &c, &err) == 0);
    int64_t appends, writes;
    stream_commit_stats(c, &appends, &writes);
    CHECK(appends == 0 && writes == 0, "%lld appends, %lld writes", (long long)appends,
          (long long)writes);
    CHECK(stream_commit_mode(c) == STREAM_COMMIT_SYNC);
    stream_commit_stats(b, &appends, &writes);
    CHECK(appends > 0);
    state_close(c);
    sl_error_clear(&err);
}

/* Result files: the direct I/O switch and the bytes written are the
 * store's. */
static void test_result_files(StateStore *a, StateStore *b)
{
    resfile_use_direct_io(b, 1);
    resfile_use_direct_io(a, 0);
    CHECK(!resfile_direct_io(a) && resfile_direct_io(b));
    uint64_t ad0, ab0, bd0, bb0;
    resfile_written(a, &ad0, &ab0);
    resfile_written(b, &bd0, &bb0);
    /* One batch of 300 rows of 1 KiB: past RESULT_FILE_MIN_BYTES, so its
     * chunks go to a result file of a. */
    CatRelation q = relation(16400, REL_QUERY);
    Arena ar;
    arena_init(&ar, 1 << 20);
    char *wide = arena_alloc(&ar, 1024);
    memset(wide, 'x', 1024);
    Batch *rs = rows(&ar, 0, 300);
    for (uint32_t r = 0; r < rs->nrows; r++)
        rs->cols[1].v.str[r] = (SlStr){wide, 1024};
    SlError err = {0};
    StateBatch *wb = state_batch_new();
    ResultLog log;
    result_log_begin(&log, a, &q, 1);
    result_log_add(&log, wb, rs);
    CHECK(result_log_end(&log, wb, &err) == 0, "%s", err.message ? err.message : "");
    result_log_free(&log);
    CHECK(state_batch_commit(a, wb, true, &err) == 0);
    state_batch_free(wb);
    uint64_t ad1, ab1, bd1, bb1;
    resfile_written(a, &ad1, &ab1);
    resfile_written(b, &bd1, &bb1);
    CHECK(ad1 == ad0 && ab1 - ab0 >= RESULT_FILE_MIN_BYTES, "a: %llu direct, %llu buffered",
          (unsigned long long)(ad1 - ad0), (unsigned long long)(ab1 - ab0));
    CHECK(bd1 == bd0 && bb1 == bb0, "b: %llu direct, %llu buffered",
          (unsigned long long)(bd1 - bd0), (unsigned long long)(bb1 - bb0));
    CHECK(rel_purge(a, &q, &err) == 0);
    sl_error_clear(&err);
    arena_destroy(&ar);
}

#ifdef SLUICE_FAULT_INJECTION
/* A failed group write refuses later appends to its store (its offsets may
 * be half-written) and to no other. */
static void test_broken(StateStore *a, StateStore *b)
{
    CatRelation s = relation(16395, REL_STREAM);
    SlError err = {0};
    stream_commit_mode_set(a, STREAM_COMMIT_GROUP, 0);
    setenv("SLUICE_FAULT", "stream_append_write:1:fail", 1);
    CHECK(append(a, &s, 0, 1, &err) < 0 && strcmp(err.sqlstate, ERRCODE_IO_ERROR) == 0);
    unsetenv("SLUICE_FAULT");
    sl_error_clear(&err);
    CHECK(append(a, &s, 0, 1, &err) < 0, "a refuses appends after its failed write");
    sl_error_clear(&err);
    CHECK(append(b, &s, 0, 1, &err) == 0, "b: %s", err.message ? err.message : "");
    sl_error_clear(&err);
}
#endif

int main(void)
{
    char da[] = "/tmp/sluice-test-two-a-XXXXXX", db[] = "/tmp/sluice-test-two-b-XXXXXX",
         dc[] = "/tmp/sluice-test-two-c-XXXXXX";
    if (mkdtemp(da) == NULL || mkdtemp(db) == NULL || mkdtemp(dc) == NULL)
        return 1;
    SlError err = {0};
    StateStore *a, *b;
    CHECK(state_open(da, &a, &err) == 0);
    CHECK(state_open(db, &b, &err) == 0);
    if (unit_failures == 0) {
        test_counters(a, b);
        test_group_commit(a, b);
        test_fresh(b, dc);
        test_result_files(a, b);
#ifdef SLUICE_FAULT_INJECTION
        test_broken(a, b);
#endif
    }
    state_close(a);
    state_close(b);
    sl_error_clear(&err);
    char cmd[256];
    snprintf(cmd, sizeof(cmd), "rm -rf %s %s %s", da, db, dc);
    if (system(cmd) != 0)
        unit_failures++;
    return unit_done("test_two_stores");
}
