/*
 * test_relstore.c -- unit tests of the row codec and of where table and
 * stream rows live (src/types/rowcodec.c, src/state/relstore.c): round trips of every
 * type, key order, stream appends and range scans across chunk boundaries,
 * end offsets and row ids recovered after the store is reopened; appends
 * to two streams in one write; group commit from 8 threads (every row in,
 * offsets dense, fewer writes than appends); retention by size and time;
 * result logs (chunks by rows and bytes, the same keys however the rows
 * come in, read after per-row rows of older data directories, a corrupt
 * chunk refused, purged with the query); the batch and endable scans of
 * the state store at its reopen after a full disk (fault-injection builds);
 * a write batch's memory account charged in steps of 64 KiB and exactly by
 * state_batch_charge; a scan's seek (state_scan_seek).
 */
#include "unit_data.h"
#include "state/resfile.h"
#include "sluice/bytes.h"
#include "sluice/memacct.h"
#include "sluice/relstore.h"
#include "sluice/rowcodec.h"

#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>


static CatRelation *fake_relation(uint32_t oid, bool with_pk)
{
    static CatColumn cols[3] = {
        {"id", {TYPE_INT8, -1, TYPE_UNKNOWN}, true},
        {"name", {TYPE_TEXT, -1, TYPE_UNKNOWN}, false},
        {"score", {TYPE_FLOAT8, -1, TYPE_UNKNOWN}, false},
    };
    static int pk[1] = {0};
    CatRelation *rel = sl_calloc(1, sizeof(CatRelation));
    rel->oid = oid;
    rel->name = "t";
    rel->ncols = 3;
    rel->cols = cols;
    rel->npk = with_pk ? 1 : 0;
    rel->pk = pk;
    return rel;
}

static Batch *make_rows(Arena *a, int64_t first, uint32_t n)
{
    SlType types[3] = {{TYPE_INT8, -1, TYPE_UNKNOWN}, {TYPE_TEXT, -1, TYPE_UNKNOWN}, {TYPE_FLOAT8, -1, TYPE_UNKNOWN}};
    Batch *b = batch_alloc(a, types, 3, n);
    for (uint32_t i = 0; i < n; i++) {
        b->cols[0].v.i64[i] = first + i;
        char *s = arena_printf(a, "row-%lld", (long long)(first + i));
        b->cols[1].v.str[i].ptr = s;
        b->cols[1].v.str[i].len = (uint32_t)strlen(s);
        b->cols[1].nulls[i] = (first + i) % 7 == 0;     /* some NULLs */
        b->cols[2].v.f64[i] = (double)(first + i) / 2;
    }
    b->nrows = n;
    for (int c = 0; c < 3; c++)
        b->cols[c].len = n;
    return b;
}

static void test_codec(void)
{
    Arena a;
    arena_init(&a, 4096);
    Batch *b = make_rows(&a, 40, 10);
    SlType types[3] = {{TYPE_INT8, -1, TYPE_UNKNOWN}, {TYPE_TEXT, -1, TYPE_UNKNOWN}, {TYPE_FLOAT8, -1, TYPE_UNKNOWN}};
    Batch *d = batch_alloc(&a, types, 3, 10);
    StrBuf buf;
    strbuf_init(&buf);
    for (uint32_t r = 0; r < 10; r++) {
        strbuf_reset(&buf);
        row_encode(b, r, &buf);
        CHECK(row_decode(buf.data, buf.len, d, r, &a) == 0);
        CHECK(d->cols[0].v.i64[r] == 40 + (int64_t)r);
        CHECK(vector_is_null(&d->cols[1], r) == vector_is_null(&b->cols[1], r));
        if (!vector_is_null(&d->cols[1], r))
            CHECK(d->cols[1].v.str[r].len == b->cols[1].v.str[r].len &&
                  memcmp(d->cols[1].v.str[r].ptr, b->cols[1].v.str[r].ptr,
                         b->cols[1].v.str[r].len) == 0);
        CHECK(d->cols[2].v.f64[r] == b->cols[2].v.f64[r]);
        /* A truncated or extended value is refused. */
        CHECK(row_decode(buf.data, buf.len - 1, d, r, &a) < 0);
    }
    /* Key order is value order, negative numbers included. */
    SlType it[1] = {{TYPE_INT8, -1, TYPE_UNKNOWN}};
    Batch *k = batch_alloc(&a, it, 1, 3);
    k->cols[0].v.i64[0] = -5;
    k->cols[0].v.i64[1] = 3;
    k->cols[0].v.i64[2] = 1000;
    int col = 0;
    StrBuf k0, k1, k2;
    strbuf_init(&k0);
    strbuf_init(&k1);
    strbuf_init(&k2);
    key_encode(k, 0, &col, 1, &k0);
    key_encode(k, 1, &col, 1, &k1);
    key_encode(k, 2, &col, 1, &k2);
    CHECK(memcmp(k0.data, k1.data, k0.len) < 0 && memcmp(k1.data, k2.data, k1.len) < 0);
    strbuf_free(&k0);
    strbuf_free(&k1);
    strbuf_free(&k2);
    strbuf_free(&buf);
    arena_destroy(&a);
}

static void test_store(const char *dir)
{
    SlError err = {0};
    StateStore *st;
    CHECK(state_open(dir, &st, &err) == 0);
    CatRelation *stream = fake_relation(20000, false);
    CatRelation *table = fake_relation(20001, true);
    Arena a;
    arena_init(&a, 65536);

    /* Three appends: 1500 + 10 + 700 rows. */
    int64_t first;
    CHECK(stream_end_offset(st, stream, &err) == 0);
    CHECK(stream_append(st, stream, make_rows(&a, 0, 1500), &first, &err) == 0 && first == 0);
    CHECK(stream_append(st, stream, make_rows(&a, 1500, 10), &first, &err) == 0 && first == 1500);
    CHECK(stream_append(st, stream, make_rows(&a, 1510, 700), &first, &err) == 0 && first == 1510);
    CHECK(stream_end_offset(st, stream, &err) == 2210);

    /* A range that starts and ends inside chunks. */
    RelScan *s = stream_scan_open(st, stream, 1400, 1600, false);
    int64_t expect = 1400, got = 0;
    Batch *b;
    int n;
    while ((n = stream_scan_next(s, &a, &b, &err)) > 0) {
        for (int i = 0; i < n; i++)
            CHECK(b->cols[0].v.i64[i] == expect++);
        got += n;
    }
    CHECK(n == 0 && got == 200);
    CHECK(rel_scan_close(s, &err) == 0);

    /* Table rows: put, get, overwrite, delete, scan in key order. */
    Batch *rows = make_rows(&a, 100, 5);
    StateBatch *wb = state_batch_new();
    StrBuf key;
    strbuf_init(&key);
    for (uint32_t r = 0; r < 5; r++) {
        tbl_key(table, rows, r, &key);
        tbl_put(wb, &key, rows, r);
    }
    tbl_key(table, rows, 2, &key);
    tbl_delete(wb, &key);
    CHECK(state_batch_commit(st, wb, true, &err) == 0);
    state_batch_free(wb);
    SlType types[3] = {{TYPE_INT8, -1, TYPE_UNKNOWN}, {TYPE_TEXT, -1, TYPE_UNKNOWN}, {TYPE_FLOAT8, -1, TYPE_UNKNOWN}};
    Batch *one = batch_alloc(&a, types, 3, 1);
    tbl_key(table, rows, 3, &key);
    CHECK(tbl_get(st, table, &key, &a, one, 0, &err) == 1 && one->cols[0].v.i64[0] == 103);
    tbl_key(table, rows, 2, &key);
    CHECK(tbl_get(st, table, &key, &a, one, 0, &err) == 0);
    s = tbl_scan_open(st, table, false);
    SlStr *keys;
    n = tbl_scan_next(s, &a, &b, &keys, &err);
    CHECK(n == 4 && b->cols[0].v.i64[0] == 100 && b->cols[0].v.i64[3] == 104);
    CHECK(tbl_scan_next(s, &a, &b, &keys, &err) == 0);
    CHECK(rel_scan_close(s, &err) == 0);
    CHECK(tbl_next_rowid(st, stream, &err) == 0);
    CHECK(tbl_next_rowid(st, stream, &err) == 1);
    strbuf_free(&key);

    /* Two streams and a third key in one write (a continuous query's
     * output, late rows and state). */
    CatRelation *other = fake_relation(20002, false);
    const Batch *out1[] = {make_rows(&a, 5000, 3)}, *out2[] = {make_rows(&a, 6000, 2),
                                                               make_rows(&a, 6002, 4)};
    StreamAppend apps[2] = {{stream, out1, 1, NULL, -1}, {other, out2, 2, NULL, -1}};
    wb = state_batch_new();
    state_batch_put(wb, "Zmeta", 5, "1", 1);
    CHECK(stream_append_many(st, apps, 2, wb, &err) == 0 && apps[0].first == 2210 &&
          apps[1].first == 0);
    state_batch_free(wb);
    CHECK(stream_end_offset(st, stream, &err) == 2213);
    CHECK(stream_end_offset(st, other, &err) == 6);
    void *v;
    size_t vlen;
    CHECK(state_get(st, "Zmeta", 5, &a, &v, &vlen, &err) == 1 && vlen == 1);
    s = stream_scan_open(st, other, 1, 6, false);
    expect = 6001;
    got = 0;
    while ((n = stream_scan_next(s, &a, &b, &err)) > 0) {
        for (int i = 0; i < n; i++)
            CHECK(b->cols[0].v.i64[i] == expect++);
        got += n;
    }
    CHECK(n == 0 && got == 5);
    CHECK(rel_scan_close(s, &err) == 0);

    /* A forward scan from a key starts at the first key >= it; the "at"
     * scan at the last key <= it. */
    wb = state_batch_new();
    state_batch_put(wb, "Yk10", 4, "a", 1);
    state_batch_put(wb, "Yk20", 4, "b", 1);
    state_batch_put(wb, "Yk30", 4, "c", 1);
    CHECK(state_batch_commit(st, wb, true, &err) == 0);
    state_batch_free(wb);
    const void *sk, *sv;
    size_t sklen, svlen;
    StateScan *ss = state_scan_open_from(st, "Yk", 2, "Yk15", 4);
    CHECK(state_scan_next(ss, &sk, &sklen, &sv, &svlen) && memcmp(sk, "Yk20", 4) == 0);
    CHECK(state_scan_next(ss, &sk, &sklen, &sv, &svlen) && memcmp(sk, "Yk30", 4) == 0);
    CHECK(!state_scan_next(ss, &sk, &sklen, &sv, &svlen));
    CHECK(state_scan_close(ss, &err) == 0);
    ss = state_scan_open_at(st, "Yk", 2, "Yk15", 4);
    CHECK(state_scan_next(ss, &sk, &sklen, &sv, &svlen) && memcmp(sk, "Yk10", 4) == 0);
    CHECK(state_scan_close(ss, &err) == 0);
    stream_forget(st, other);
    sl_free(other);

    /* Reopened, the store knows where the stream ends. */
    stream_forget(st, stream);
    stream_forget(st, table);
    state_close(st);
    CHECK(state_open(dir, &st, &err) == 0);
    CHECK(stream_end_offset(st, stream, &err) == 2213);
    stream_forget(st, stream);
    state_close(st);
    if (sl_error_set(&err))
        fprintf(stderr, "error: %s\n", err.message);
    sl_error_clear(&err);
    arena_destroy(&a);
    sl_free(stream);
    sl_free(table);
}

/* A range deletion in a write batch, committed as it is and appended to
 * another batch (the group commit's path): the keys in [start, end) go,
 * the others and the batch's puts stay. */
static void test_delete_range(const char *dir)
{
    SlError err = {0};
    StateStore *st;
    CHECK(state_open(dir, &st, &err) == 0);
    char k[16];
    StateBatch *wb = state_batch_new();
    for (int i = 0; i < 100; i++) {
        snprintf(k, sizeof(k), "Rk%02d", i);
        state_batch_put(wb, k, 4, "v", 1);
    }
    CHECK(state_batch_commit(st, wb, true, &err) == 0);
    state_batch_free(wb);

    StateBatch *src = state_batch_new();
    state_batch_put(src, "Rk05", 4, "w", 1);    /* before the range: stays */
    state_batch_delete_range(src, "Rk10", 4, "Rk50", 4);
    state_batch_put(src, "Rk60", 4, "w", 1);
    StateBatch *dst = state_batch_new();
    state_batch_put(dst, "Rk20", 4, "x", 1);    /* before the range deletion: deleted */
    state_batch_delete(dst, "Rk99", 4);
    state_batch_append(dst, src);
    CHECK(state_batch_count(dst) == 5);
    StateBatch *more = state_batch_new();
    state_batch_delete(more, "Rk98", 4);
    state_batch_append(dst, more);              /* after a range: appended as well */
    CHECK(state_batch_count(dst) == 6);
    CHECK(state_batch_commit(st, dst, true, &err) == 0);
    state_batch_free(more);
    state_batch_free(dst);
    state_batch_free(src);

    for (int pass = 0; pass < 2; pass++) {
        StateScan *sc = state_scan_open(st, "Rk", 2);
        const void *sk, *sv;
        size_t sklen, svlen;
        int n = 0, want = 0;
        while (state_scan_next(sc, &sk, &sklen, &sv, &svlen)) {
            if (want == 10)
                want = 50;
            CHECK(want < 98);
            snprintf(k, sizeof(k), "Rk%02d", want);
            CHECK(sklen == 4 && memcmp(sk, k, 4) == 0);
            CHECK(svlen == 1 && *(const char *)sv == (want == 5 || want == 60 ? 'w' : 'v'));
            want++;
            n++;
        }
        CHECK(state_scan_close(sc, &err) == 0);
        CHECK(n == 100 - 40 - 2);
        /* Reopened: the WAL's range deletion is replayed. */
        state_close(st);
        CHECK(state_open(dir, &st, &err) == 0);
    }
    /* state_scan_seek, on both kinds of scan: the first key at or past the
     * one asked (forward or back), the next goes on after it */
    for (int endable = 0; endable < 2; endable++) {
        StateScan *sc = endable ? state_scan_open_endable(st, "Rk", 2)
                                : state_scan_open(st, "Rk", 2);
        const void *sk, *sv;
        size_t sklen, svlen;
        CHECK(state_scan_seek(sc, "Rk2", 3, &sk, &sklen, &sv, &svlen) && sklen == 4 &&
              memcmp(sk, "Rk50", 4) == 0 && svlen == 1 && *(const char *)sv == 'v',
              "seek into the deleted range finds Rk50 (endable %d)", endable);
        CHECK(state_scan_next(sc, &sk, &sklen, &sv, &svlen) && memcmp(sk, "Rk51", 4) == 0);
        CHECK(state_scan_seek(sc, "Rk05", 4, &sk, &sklen, &sv, &svlen) &&
              memcmp(sk, "Rk05", 4) == 0 && *(const char *)sv == 'w', "seek back to a key");
        CHECK(state_scan_seek(sc, "Rk6", 3, &sk, &sklen, NULL, NULL) &&
              memcmp(sk, "Rk60", 4) == 0, "seek without the value");
        CHECK(!state_scan_seek(sc, "Rk97x", 5, &sk, &sklen, NULL, NULL),
              "nothing past the last key of the prefix");
        CHECK(state_scan_close(sc, &err) == 0);
    }
    state_close(st);
    sl_error_clear(&err);
}

typedef struct Appender {
    StateStore  *st;
    CatRelation *rel;
    int          id;
    int64_t      firsts[200];
    int          failures;
} Appender;

#define APPENDERS 8
#define APPENDS   200

static void *append_thread(void *arg)
{
    Appender *ap = arg;
    Arena a;
    arena_init(&a, 4096);
    SlError err = {0};
    for (int i = 0; i < APPENDS; i++) {
        arena_reset(&a);
        /* one row: id = thread * 1000 + i */
        if (stream_append(ap->st, ap->rel, make_rows(&a, ap->id * 1000 + i, 1), &ap->firsts[i],
                          &err) < 0)
            ap->failures++;
    }
    sl_error_clear(&err);
    arena_destroy(&a);
    return NULL;
}

static void test_group_commit(const char *dir)
{
    SlError err = {0};
    StateStore *st;
    CHECK(state_open(dir, &st, &err) == 0);
    CatRelation *s1 = fake_relation(30000, false), *s2 = fake_relation(30001, false);
    Arena a;
    arena_init(&a, 65536);

    /* Two streams in one write. */
    const Batch *b1 = make_rows(&a, 0, 3), *b2 = make_rows(&a, 10, 2);
    StreamAppend apps[2] = {{s1, &b1, 1, NULL, 0}, {s2, &b2, 1, NULL, 0}};
    CHECK(stream_append_many(st, apps, 2, NULL, &err) == 0);
    CHECK(apps[0].first == 0 && apps[1].first == 0);
    CHECK(stream_end_offset(st, s1, &err) == 3 && stream_end_offset(st, s2, &err) == 2);

    /* Group commit: 8 threads, 200 one-row appends each. */
    stream_commit_mode_set(st, STREAM_COMMIT_GROUP, 2000);
    int64_t appends0, writes0, appends1, writes1;
    stream_commit_stats(st, &appends0, &writes0);
    Appender aps[APPENDERS];
    pthread_t th[APPENDERS];
    for (int t = 0; t < APPENDERS; t++) {
        aps[t] = (Appender){st, s1, t + 1, {0}, 0};
        pthread_create(&th[t], NULL, append_thread, &aps[t]);
    }
    for (int t = 0; t < APPENDERS; t++)
        pthread_join(th[t], NULL);
    stream_commit_mode_set(st, STREAM_COMMIT_SYNC, 0);
    stream_commit_stats(st, &appends1, &writes1);
    CHECK(appends1 - appends0 == APPENDERS * APPENDS);
    CHECK(writes1 - writes0 < appends1 - appends0, "writes %lld, appends %lld",
          (long long)(writes1 - writes0), (long long)(appends1 - appends0));
    fprintf(stderr, "group commit: %lld appends in %lld writes\n",
            (long long)(appends1 - appends0), (long long)(writes1 - writes0));
    int64_t total = 3 + APPENDERS * APPENDS;
    CHECK(stream_end_offset(st, s1, &err) == total);
    /* every offset handed out once; the row at each offset is its thread's */
    char *seen = sl_calloc((size_t)total, 1);
    for (int t = 0; t < APPENDERS; t++) {
        CHECK(aps[t].failures == 0);
        for (int i = 0; i < APPENDS; i++) {
            int64_t f = aps[t].firsts[i];
            CHECK(f >= 3 && f < total && !seen[f]);
            if (f >= 3 && f < total)
                seen[f] = 1;
        }
    }
    RelScan *sc = stream_scan_open(st, s1, 3, total, false);
    Batch *b;
    int n, rows = 0;
    while ((n = stream_scan_next(sc, &a, &b, &err)) > 0)
        rows += n;
    CHECK(rel_scan_close(sc, &err) == 0 && rows == APPENDERS * APPENDS);
    sl_free(seen);

    /* Retention: by size, oldest chunks first; the newest always stays. */
    StreamRetained r;
    CHECK(stream_retain(st, s1, 0, 1, &r, &err) == 0);
    CHECK(r.chunks == APPENDERS * APPENDS && r.rows == 3 + APPENDERS * APPENDS - 1);
    CHECK(stream_start_offset(st, s1, &err) == total - 1);
    CHECK(stream_end_offset(st, s1, &err) == total);
    /* by time: s2's only chunk is the newest and stays; nothing newer is cut */
    CHECK(stream_retain(st, s2, INT64_MAX, 0, &r, &err) == 0 && r.chunks == 0);
    const Batch *b3 = make_rows(&a, 20, 4);
    int64_t first;
    CHECK(stream_append_batches(st, s2, &b3, 1, NULL, &first, &err) == 0 && first == 2);
    CHECK(stream_retain(st, s2, INT64_MAX, 0, &r, &err) == 0 && r.chunks == 1 && r.rows == 2);
    CHECK(stream_retain(st, s2, 1, 0, &r, &err) == 0 && r.chunks == 0);
    sc = stream_scan_open(st, s2, 0, 6, false);
    rows = 0;
    while ((n = stream_scan_next(sc, &a, &b, &err)) > 0) {
        CHECK(b->cols[0].v.i64[0] == 20);
        rows += n;
    }
    CHECK(rel_scan_close(sc, &err) == 0 && rows == 4);

    if (sl_error_set(&err))
        fprintf(stderr, "error: %s\n", err.message);
    sl_error_clear(&err);
    stream_forget(st, s1);
    stream_forget(st, s2);
    state_close(st);
    arena_destroy(&a);
    sl_free(s1);
    sl_free(s2);
}

/* Every key with the prefix: how many, and their bytes after the prefix
 * joined with their values' lengths (what two logs compare by). */
static int count_keys(StateStore *st, const uint8_t *prefix, size_t plen, StrBuf *sig)
{
    StateScan *s = state_scan_open(st, prefix, plen);
    const void *k, *v;
    size_t klen, vlen;
    int n = 0;
    while (state_scan_next(s, &k, &klen, &v, &vlen)) {
        if (sig) {
            strbuf_append(sig, (const char *)k + plen, klen - plen);
            strbuf_append(sig, v, vlen);
        }
        n++;
    }
    SlError err = {0};
    CHECK(state_scan_close(s, &err) == 0);
    return n;
}

/* Reads the result file of relation oid, segment seg, into out. */
static int read_seg(const char *dir, uint32_t oid, uint64_t seg, StrBuf *out)
{
    char path[512];
    snprintf(path, sizeof(path), "%s/results/%08x-%016llx.seg", dir, oid,
             (unsigned long long)seg);
    FILE *f = fopen(path, "rb");
    if (f == NULL)
        return -1;
    char buf[65536];
    size_t n;
    while ((n = fread(buf, 1, sizeof(buf), f)) > 0)
        strbuf_append(out, buf, n);
    fclose(f);
    return 0;
}

/* Rows with ids first.. whose text is `len` bytes long. */
static Batch *wide_rows(Arena *a, int64_t first, uint32_t n, size_t len)
{
    Batch *b = make_rows(a, first, n);
    for (uint32_t i = 0; i < n; i++) {
        char *t = arena_alloc(a, len);
        memset(t, 'a' + (int)((first + i) % 26), len);
        b->cols[1].v.str[i].ptr = t;
        b->cols[1].v.str[i].len = (uint32_t)len;
        b->cols[1].nulls[i] = 0;
    }
    return b;
}

static void test_result_log(const char *dir)
{
    SlError err = {0};
    StateStore *st;
    CHECK(state_open(dir, &st, &err) == 0);
    CatRelation *q = fake_relation(40000, false), *q2 = fake_relation(40001, false);
    CatRelation *bad = fake_relation(40002, false);
    q->kind = q2->kind = bad->kind = REL_QUERY;
    Arena a;
    arena_init(&a, 65536);

    /* Batches 0 and 1 as data directories before result logs wrote them:
     * one 'T' key per row, 'T' + oid + batch id + row. */
    StateBatch *wb = state_batch_new();
    StrBuf key;
    strbuf_init(&key);
    int64_t id = 0;
    for (int64_t batch = 0; batch < 2; batch++) {
        Batch *rows = make_rows(&a, id, batch == 0 ? 5 : 3);
        for (uint32_t r = 0; r < rows->nrows; r++, id++) {
            uint8_t k[17] = {'T'};
            put_be32(k + 1, q->oid);
            put_be64(k + 5, (uint64_t)batch);
            put_be32(k + 13, r);
            strbuf_reset(&key);
            strbuf_append(&key, k, sizeof(k));
            tbl_put(wb, &key, rows, r);
        }
    }
    CHECK(state_batch_commit(st, wb, true, &err) == 0);
    state_batch_free(wb);

    /* Batch 2: 2500 rows in three pieces -> chunks of 1024, 1024, 452,
     * inline (under RESULT_FILE_MIN_BYTES); batch 3 emits nothing; batch 4:
     * 5 rows of 100 KB -> chunks of 3 and 2 (a chunk is closed once it
     * passes RESULT_CHUNK_BYTES), in a result file. */
    ResultLog log;
    wb = state_batch_new();
    result_log_begin(&log, st, q, 2);
    result_log_add(&log, wb, make_rows(&a, 100, 1000));
    result_log_add(&log, wb, make_rows(&a, 1100, 1));
    result_log_add(&log, wb, make_rows(&a, 1101, 1499));
    CHECK(result_log_end(&log, wb, &err) == 0);
    CHECK(log.nchunks == 3);
    result_log_free(&log);
    result_log_begin(&log, st, q, 3);
    CHECK(result_log_end(&log, wb, &err) == 0);
    CHECK(log.nchunks == 0);
    result_log_free(&log);
    result_log_begin(&log, st, q, 4);
    result_log_add(&log, wb, wide_rows(&a, 5000, 5, 100 * 1024));
    CHECK(result_log_end(&log, wb, &err) == 0);
    CHECK(log.nchunks == 2);
    result_log_free(&log);
    CHECK(state_batch_commit(st, wb, true, &err) == 0);
    state_batch_free(wb);

    /* The same rows in other pieces make the same keys and values. */
    wb = state_batch_new();
    result_log_begin(&log, st, q2, 2);
    for (int64_t i = 100; i < 2600; i += 7)
        result_log_add(&log, wb, make_rows(&a, i, (uint32_t)SL_MIN(7, 2600 - i)));
    CHECK(result_log_end(&log, wb, &err) == 0);
    result_log_free(&log);
    result_log_begin(&log, st, q2, 4);
    for (int64_t i = 5000; i < 5005; i++)
        result_log_add(&log, wb, wide_rows(&a, i, 1, 100 * 1024));
    CHECK(result_log_end(&log, wb, &err) == 0);
    result_log_free(&log);
    CHECK(state_batch_commit(st, wb, true, &err) == 0);
    state_batch_free(wb);
    uint8_t p1[5] = {'A'}, p2[5] = {'A'};
    put_be32(p1 + 1, q->oid);
    put_be32(p2 + 1, q2->oid);
    StrBuf sig1, sig2;
    strbuf_init(&sig1);
    strbuf_init(&sig2);
    /* three chunks of batch 2, the reference to batch 4's region */
    CHECK(count_keys(st, p1, 5, &sig1) == 4);
    CHECK(count_keys(st, p2, 5, &sig2) == 4);
    CHECK(sig1.len == sig2.len && memcmp(sig1.data, sig2.data, sig1.len) == 0);
    strbuf_free(&sig1);
    strbuf_free(&sig2);
    /* and the two result files hold the same bytes */
    StrBuf f1, f2;
    strbuf_init(&f1);
    strbuf_init(&f2);
    CHECK(read_seg(dir, q->oid, 4, &f1) == 0 && read_seg(dir, q2->oid, 4, &f2) == 0);
    CHECK(f1.len > 500 * 1024 && f1.len == f2.len && memcmp(f1.data, f2.data, f1.len) == 0);
    strbuf_free(&f1);
    strbuf_free(&f2);

    /* A scan reads the per-row batches, then the chunks, in batch order;
     * with keys, a chunk's rows carry its key. */
    RelScan *s = tbl_scan_open(st, q, false);
    int64_t expect[2513];
    int ne = 0;
    for (int64_t i = 0; i < 8; i++)
        expect[ne++] = i;
    for (int64_t i = 100; i < 2600; i++)
        expect[ne++] = i;
    for (int64_t i = 5000; i < 5005; i++)
        expect[ne++] = i;
    int got = 0, n, scans = 0;
    Batch *b;
    SlStr *keys;
    while ((n = tbl_scan_next(s, &a, &b, &keys, &err)) > 0) {
        scans++;
        for (int i = 0; i < n && got < ne; i++, got++) {
            int64_t v = b->cols[0].v.i64[i];
            CHECK(v == expect[got], "row %d: %lld, not %lld", got, (long long)v,
                  (long long)expect[got]);
            CHECK(vector_is_null(&b->cols[1], i) == (v >= 5000 ? false : v % 7 == 0));
            CHECK(b->cols[2].v.f64[i] == (double)v / 2);
            CHECK(keys[i].len == (v >= 5000 ? 13 : 17) &&
                  ((const uint8_t *)keys[i].ptr)[0] == (got < 8 ? 'T' : 'A'));
            if (v >= 5000)
                CHECK(b->cols[1].v.str[i].len == 100 * 1024 &&
                      b->cols[1].v.str[i].ptr[100 * 1024 - 1] == 'a' + (char)(v % 26));
        }
    }
    CHECK(n == 0 && got == ne && scans == 3);
    CHECK(rel_scan_close(s, &err) == 0);

    /* A chunk that says it holds more rows than it does is an error
     * (XX001), not a crash. */
    wb = state_batch_new();
    StrBuf chunk;
    strbuf_init(&chunk);
    stream_chunk_add(&chunk, make_rows(&a, 0, 10));
    put_le32((uint8_t *)chunk.data, 11);
    uint8_t bk[17] = {'A'};
    put_be32(bk + 1, bad->oid);
    state_batch_put(wb, bk, sizeof(bk), chunk.data, chunk.len - 3);
    strbuf_free(&chunk);
    CHECK(state_batch_commit(st, wb, true, &err) == 0);
    state_batch_free(wb);
    s = tbl_scan_open(st, bad, false);
    CHECK(tbl_scan_next(s, &a, &b, NULL, &err) < 0 &&
          strcmp(err.sqlstate, ERRCODE_DATA_CORRUPTED) == 0);
    sl_error_clear(&err);
    CHECK(rel_scan_close(s, &err) == 0);

    /* DROP takes the rows and the chunks. */
    CHECK(rel_purge(st, q, &err) == 0 && rel_purge(st, bad, &err) == 0);
    CHECK(count_keys(st, p1, 5, NULL) == 0);
    p1[0] = 'T';
    CHECK(count_keys(st, p1, 5, NULL) == 0);
    s = tbl_scan_open(st, q, false);
    CHECK(tbl_scan_next(s, &a, &b, NULL, &err) == 0);
    CHECK(rel_scan_close(s, &err) == 0);

    if (sl_error_set(&err))
        fprintf(stderr, "error: %s\n", err.message);
    sl_error_clear(&err);
    strbuf_free(&key);
    state_close(st);
    arena_destroy(&a);
    sl_free(q);
    sl_free(q2);
    sl_free(bad);
}

/* Writes one batch of a result log: n rows from id first, `len` bytes of
 * text each; committed when commit is set (else as if the server died
 * before the batch's RocksDB write). */
static void log_batch(StateStore *st, const CatRelation *q, int64_t batch, int64_t first,
                      uint32_t n, size_t len, bool commit)
{
    Arena a;
    arena_init(&a, 65536);
    SlError err = {0};
    StateBatch *wb = state_batch_new();
    ResultLog log;
    result_log_begin(&log, st, q, batch);
    for (uint32_t i = 0; i < n; i++)
        result_log_add(&log, wb, wide_rows(&a, first + i, 1, len));
    CHECK(result_log_end(&log, wb, &err) == 0, "%s", err.message);
    result_log_free(&log);
    if (commit)
        CHECK(state_batch_commit(st, wb, true, &err) == 0);
    state_batch_free(wb);
    arena_destroy(&a);
    sl_error_clear(&err);
}

/* Scans q: the ids in order into ids (up to max); returns the row count,
 * or -1 with the error's SQLSTATE in state. */
static int scan_ids(StateStore *st, const CatRelation *q, int64_t *ids, int max, char *state)
{
    Arena a;
    arena_init(&a, 65536);
    SlError err = {0};
    RelScan *s = tbl_scan_open(st, q, false);
    int got = 0, n;
    Batch *b;
    while ((n = tbl_scan_next(s, &a, &b, NULL, &err)) > 0) {
        for (int i = 0; i < n; i++, got++)
            if (got < max)
                ids[got] = b->cols[0].v.i64[i];
        arena_reset(&a);
    }
    if (n < 0) {
        got = -1;
        memcpy(state, err.sqlstate, 6);
    }
    rel_scan_close(s, NULL);
    sl_error_clear(&err);
    arena_destroy(&a);
    return got;
}

static long file_size(const char *path)
{
    FILE *f = fopen(path, "rb");
    if (f == NULL)
        return -1;
    fseek(f, 0, SEEK_END);
    long n = ftell(f);
    fclose(f);
    return n;
}

/* Flips the bits of the byte at off in path. */
static void flip(const char *path, long off)
{
    FILE *f = fopen(path, "r+b");
    CHECK(f != NULL);
    fseek(f, off, SEEK_SET);
    int c = fgetc(f);
    fseek(f, off, SEEK_SET);
    fputc(c ^ 0xFF, f);
    fclose(f);
}

/* Result files: regions appended to one segment across batches with
 * inline batches between them; a batch whose region was written but not
 * committed (the server died before the RocksDB write) written again,
 * smaller; damaged, torn and missing bytes found (XX001, never rows); a
 * new segment past RESFILE_SEGMENT_BYTES; DROP removes the files. */
/* The reference of batch's region: its offset and exact length. */
/* The result-file reference of query OID's batch BATCH (key 'A' oid
 * batch), read into A: it must be there. */
static void get_ref(StateStore *st, uint32_t oid, int64_t batch, Arena *a, void **ref,
                    size_t *reflen)
{
    uint8_t rk[13] = {'A'};
    put_be32(rk + 1, oid);
    put_be64(rk + 5, (uint64_t)batch);
    SlError err = {0};
    CHECK(state_get(st, rk, sizeof(rk), a, ref, reflen, &err) == 1, "%s", err.message);
}

static void ref_of(StateStore *st, uint32_t oid, int64_t batch, uint64_t *off, uint64_t *len)
{
    Arena a;
    arena_init(&a, 256);
    void *ref;
    size_t reflen;
    get_ref(st, oid, batch, &a, &ref, &reflen);
    CHECK(reflen == RESFILE_REF_BYTES);
    *off = get_le64((uint8_t *)ref + 16);
    *len = get_le64((uint8_t *)ref + 24);
    arena_destroy(&a);
}

static void test_result_files(const char *dir, int direct)
{
    SlError err = {0};
    StateStore *st;
    CHECK(state_open(dir, &st, &err) == 0);
    resfile_use_direct_io(st, direct);
    uint64_t d0, b0, d1, b1;
    resfile_written(st, &d0, &b0);
    CatRelation *q = fake_relation(40010, false);
    q->kind = REL_QUERY;
    char seg1[512], seg6[512], moved[520];
    snprintf(seg1, sizeof(seg1), "%s/results/%08x-%016x.seg", dir, q->oid, 1);
    snprintf(seg6, sizeof(seg6), "%s/results/%08x-%016x.seg", dir, q->oid, 6);

    log_batch(st, q, 1, 0, 4, 100 * 1024, true);      /* a file region */
    long after1 = file_size(seg1);
    CHECK(after1 > 400 * 1024 && after1 < 420 * 1024, "%ld", after1);
    log_batch(st, q, 2, 4, 3, 10, true);              /* inline */
    CHECK(file_size(seg1) == after1);
    log_batch(st, q, 3, 7, 4, 100 * 1024, true);      /* appended to segment 1 */
    long after3 = file_size(seg1);
    CHECK(after3 > 2 * after1 - 100);
    /* Batch 4 dies after its region is written; its replay writes fewer
     * rows: the first attempt's bytes are cut away and never read. */
    log_batch(st, q, 4, 100, 6, 100 * 1024, false);
    CHECK(file_size(seg1) > after3 + 600 * 1024);
    log_batch(st, q, 4, 11, 3, 100 * 1024, true);
    long after4 = file_size(seg1);
    CHECK(after4 > after3 + 300 * 1024 && after4 < after3 + 320 * 1024);
    /* Each region on a block of its own, padded: the tails are aligned. */
    CHECK(after1 % 4096 == 0 && after3 % 4096 == 0 && after4 % 4096 == 0);
    uint64_t off4, len4;
    ref_of(st, q->oid, 4, &off4, &len4);
    CHECK((long)off4 == after3 && (long)resfile_pad(len4) == after4 - after3 &&
          (long)len4 < after4 - after3, "%llu %llu", (unsigned long long)off4,
          (unsigned long long)len4);
    int64_t ids[400];
    char state[6] = "";
    CHECK(scan_ids(st, q, ids, 400, state) == 14);
    for (int i = 0; i < 14; i++)
        CHECK(ids[i] == i, "row %d: %lld", i, (long long)ids[i]);

    /* A flipped byte in a row, in a frame header, in a region header; a
     * torn end; a missing file: XX001 each time, and the rows again once
     * the byte is put back. */
    long offs[] = {after1 + 16 + 8 + 50000, after1 + 16, after1 + 3, after3 + 16 + 4};
    for (size_t k = 0; k < sizeof(offs) / sizeof(offs[0]); k++) {
        flip(seg1, offs[k]);
        CHECK(scan_ids(st, q, ids, 400, state) == -1 &&
              strcmp(state, ERRCODE_DATA_CORRUPTED) == 0, "flip at %ld", offs[k]);
        flip(seg1, offs[k]);
        CHECK(scan_ids(st, q, ids, 400, state) == 14);
    }
    StrBuf whole;
    strbuf_init(&whole);
    CHECK(read_seg(dir, q->oid, 1, &whole) == 0 && (long)whole.len == after4);
    /* Cutting the padding alone takes nothing the reader reads ... */
    long real4 = (long)(off4 + len4);
    CHECK(truncate(seg1, real4) == 0);
    CHECK(scan_ids(st, q, ids, 400, state) == 14);
    /* ... cutting into the region is found. */
    CHECK(truncate(seg1, real4 - 10) == 0);
    CHECK(scan_ids(st, q, ids, 400, state) == -1 && strcmp(state, ERRCODE_DATA_CORRUPTED) == 0);
    FILE *fa = fopen(seg1, "ab");
    CHECK(fa != NULL && fwrite(whole.data + real4 - 10, 1, after4 - real4 + 10, fa) ==
                            (size_t)(after4 - real4 + 10));
    fclose(fa);
    strbuf_free(&whole);
    CHECK(file_size(seg1) == after4 && scan_ids(st, q, ids, 400, state) == 14);
    snprintf(moved, sizeof(moved), "%s.moved", seg1);
    CHECK(rename(seg1, moved) == 0);
    CHECK(scan_ids(st, q, ids, 400, state) == -1 && strcmp(state, ERRCODE_DATA_CORRUPTED) == 0);
    CHECK(rename(moved, seg1) == 0);

    /* Past RESFILE_SEGMENT_BYTES (64 MiB) the next batch starts a segment
     * of its own. */
    log_batch(st, q, 5, 14, 260, 256 * 1024, true);
    CHECK(file_size(seg1) > 64L << 20 && file_size(seg6) < 0);
    long after5 = file_size(seg1);
    log_batch(st, q, 6, 274, 3, 100 * 1024, true);
    log_batch(st, q, 7, 277, 3, 100 * 1024, true);
    CHECK(file_size(seg1) == after5 && file_size(seg6) > 600 * 1024);
    CHECK(scan_ids(st, q, ids, 400, state) == 280);
    for (int i = 0; i < 280; i++)
        CHECK(ids[i] == i, "row %d: %lld", i, (long long)ids[i]);

    /* DROP under a reader: a reference read from an older snapshot names
     * a segment DROP has unlinked.  With the relation's tail key gone that
     * is 42P01 (dropped while being read), not XX001 (a lost file). */
    Arena ra;
    arena_init(&ra, 4096);
    void *ref;
    size_t reflen;
    get_ref(st, q->oid, 6, &ra, &ref, &reflen);
    ResFileRead rr;
    resfile_read_init(&rr);
    CHECK(resfile_read_begin(&rr, st, q->oid, 6, ref, reflen, &err) == 0);
    resfile_read_end(&rr);
    CHECK(rename(seg6, moved) == 0);
    CHECK(resfile_read_begin(&rr, st, q->oid, 6, ref, reflen, &err) < 0 &&
          strcmp(err.sqlstate, ERRCODE_DATA_CORRUPTED) == 0);
    sl_error_clear(&err);
    CHECK(rename(moved, seg6) == 0);

    /* DROP: the references, the tail and the files. */
    CHECK(rel_purge(st, q, &err) == 0);
    CHECK(file_size(seg1) < 0 && file_size(seg6) < 0);
    CHECK(resfile_read_begin(&rr, st, q->oid, 6, ref, reflen, &err) < 0 &&
          strcmp(err.sqlstate, ERRCODE_UNDEFINED_TABLE) == 0, "%s", err.sqlstate);
    sl_error_clear(&err);
    resfile_read_end(&rr);
    arena_destroy(&ra);
    uint8_t p[5] = {'A'};
    put_be32(p + 1, q->oid);
    CHECK(count_keys(st, p, 5, NULL) == 0);
    p[0] = 'M';
    CHECK(count_keys(st, p, 5, NULL) == 0);
    CHECK(scan_ids(st, q, ids, 400, state) == 0);
    /* A new query under the same oid starts a fresh segment. */
    log_batch(st, q, 1, 0, 4, 100 * 1024, true);
    CHECK(file_size(seg1) == after1 && scan_ids(st, q, ids, 400, state) == 4);
    CHECK(rel_purge(st, q, &err) == 0);
    /* The path asked for is the one taken. */
    resfile_written(st, &d1, &b1);
    CHECK(direct ? d1 - d0 > 64u << 20 && b1 == b0 : b1 - b0 > 64u << 20 && d1 == d0,
          "direct %d: %llu direct, %llu buffered bytes", direct,
          (unsigned long long)(d1 - d0), (unsigned long long)(b1 - b0));

    if (sl_error_set(&err))
        fprintf(stderr, "error: %s\n", err.message);
    sl_error_clear(&err);
    state_close(st);
    sl_free(q);
}

/* Writes one region of batch for oid straight through resfile.c: frames of
 * the given lengths (bytes from the batch and the frame number), appended
 * in pieces of `piece` bytes; commits it; reads it back and checks the
 * chunks.  Returns the region's reference offset and exact length. */
static void region(StateStore *st, uint32_t oid, int64_t batch, const uint32_t *lens, int nframes,
                   size_t piece, uint64_t *off, uint64_t *len)
{
    SlError err = {0};
    StrBuf b;
    strbuf_init(&b);
    uint32_t chain = resfile_chain_start(batch);
    for (int i = 0; i < nframes; i++) {
        size_t at = b.len;
        uint8_t h[RESFILE_FRAME_HEADER] = {0};
        strbuf_append(&b, h, sizeof(h));
        for (uint32_t k = 0; k < lens[i]; k++) {
            char c = (char)(batch * 31 + i * 7 + k % 251);
            strbuf_append(&b, &c, 1);
        }
        resfile_frame_seal((uint8_t *)b.data + at, lens[i], &chain);
    }
    ResFile *f = NULL;
    StateBatch *wb = state_batch_new();
    CHECK(resfile_open(st, oid, batch, &f, &err) == 0, "%s", err.message);
    for (size_t at = 0; f != NULL && at < b.len; at += piece)
        CHECK(resfile_append(f, b.data + at, b.len - at < piece ? b.len - at : piece, &err) == 0);
    CHECK(f != NULL && resfile_finish(f, wb, (uint32_t)nframes, 1, chain, &err) == 0);
    resfile_close(f);
    CHECK(state_batch_commit(st, wb, true, &err) == 0);
    state_batch_free(wb);
    ref_of(st, oid, batch, off, len);
    CHECK(*len == RESFILE_REGION_HEADER + b.len, "%llu", (unsigned long long)*len);

    Arena a;
    arena_init(&a, 65536);
    void *ref;
    size_t reflen;
    get_ref(st, oid, batch, &a, &ref, &reflen);
    ResFileRead rr;
    resfile_read_init(&rr);
    CHECK(resfile_read_begin(&rr, st, oid, batch, ref, reflen, &err) == 0, "%s", err.message);
    size_t at = 0;
    const uint8_t *c;
    size_t n;
    int got = 0, rc;
    while ((rc = resfile_read_chunk(&rr, &a, &c, &n, &err)) == 1) {
        CHECK(got < nframes && n == lens[got] &&
              memcmp(c, b.data + at + RESFILE_FRAME_HEADER, n) == 0, "frame %d", got);
        at += RESFILE_FRAME_HEADER + n;
        got++;
    }
    CHECK(rc == 0 && got == nframes, "%s", err.message);
    resfile_read_end(&rr);
    arena_destroy(&a);
    strbuf_free(&b);
    sl_error_clear(&err);
}

/* Direct I/O's arithmetic: regions start on a 4,096-byte boundary and are
 * padded with zeros to one, whatever their length against the block and
 * the staging buffer, in whatever pieces they are appended; a tail left
 * unaligned by an older server moves to the next boundary, leaving the
 * older bytes as they were; and a file that refuses O_DIRECT (at open, or
 * at its first write) is written through the page cache with the same
 * bytes. */
static void test_result_regions(const char *dir)
{
    CHECK(resfile_pad(0) == 0 && resfile_pad(1) == 4096 && resfile_pad(4095) == 4096 &&
          resfile_pad(4096) == 4096 && resfile_pad(4097) == 8192 &&
          resfile_pad((1u << 20) + 16) == (1u << 20) + 4096);
    SlError err = {0};
    StateStore *st;
    CHECK(state_open(dir, &st, &err) == 0);
    const uint32_t F = RESFILE_FRAME_HEADER, H = RESFILE_REGION_HEADER, S = RESFILE_STAGE_BYTES;
    /* Region lengths (header and frames): 24; 4,096 exactly; 4,097; the
     * stage exactly; the stage + 1; two stages and more in many frames. */
    uint32_t tiny[] = {0}, block[] = {4096 - H - F}, block1[] = {4097 - H - F},
             stage[] = {S - H - F}, stage1[] = {1000, S - H - 2 * F - 999},
             many[] = {300000, 1, 0, 900000, 777777, 4096, 123};
    struct {
        const uint32_t *lens;
        int n;
    } regions[] = {{tiny, 1}, {block, 1}, {block1, 1}, {stage, 1}, {stage1, 2}, {many, 7}};
    size_t pieces[] = {1u << 20, 4095, 1u << 22};
    for (int mode = 0; mode < 4; mode++) {
#ifndef SLUICE_FAULT_INJECTION
        if (mode >= 2)
            break;
#endif
        resfile_use_direct_io(st, mode);
        uint64_t d0, b0, d1, b1;
        resfile_written(st, &d0, &b0);
        uint32_t oid = 40100 + (uint32_t)mode;
        char seg[512];
        snprintf(seg, sizeof(seg), "%s/results/%08x-%016x.seg", dir, oid, 1);
        uint64_t end = 0;
        int64_t batch = 1;
        for (size_t p = 0; p < sizeof(pieces) / sizeof(pieces[0]); p++) {
            for (size_t r = 0; r < sizeof(regions) / sizeof(regions[0]); r++, batch++) {
                uint64_t off, len;
                region(st, oid, batch, regions[r].lens, regions[r].n, pieces[p], &off, &len);
                CHECK(off == end && off % 4096 == 0, "mode %d batch %lld: at %llu, want %llu",
                      mode, (long long)batch, (unsigned long long)off,
                      (unsigned long long)end);
                end = off + resfile_pad(len);
                CHECK(file_size(seg) == (long)end, "mode %d batch %lld", mode,
                      (long long)batch);
                /* the padding is zeros */
                StrBuf whole;
                strbuf_init(&whole);
                CHECK(read_seg(dir, oid, 1, &whole) == 0 && whole.len == end);
                for (uint64_t k = off + len; k < end && k < whole.len; k++)
                    if (whole.data[k] != 0) {
                        CHECK(whole.data[k] == 0, "mode %d: byte %llu", mode,
                              (unsigned long long)k);
                        break;
                    }
                strbuf_free(&whole);
            }
        }
        resfile_written(st, &d1, &b1);
        /* mode 3: each file's first direct write refused, then buffered */
        if (mode == 1)
            CHECK(d1 - d0 == end && b1 == b0, "mode %d", mode);
        else
            CHECK(d1 == d0 && b1 - b0 == end, "mode %d", mode);
        CatRelation *q = fake_relation(oid, false);
        CHECK(rel_purge(st, q, &err) == 0);
        sl_free(q);
    }

    /* A segment written before padding: its tail at byte 1,000. */
    resfile_use_direct_io(st, 1);
    uint32_t oid = 40110;
    char path[512];
    snprintf(path, sizeof(path), "%s/results/%08x-%016x.seg", dir, oid, 1);
    FILE *o = fopen(path, "wb");
    CHECK(o != NULL);
    for (int k = 0; k < 1000; k++)
        fputc(0xA5, o);
    fclose(o);
    uint8_t tk[6] = {'M'}, tail[16];
    put_be32(tk + 1, oid);
    tk[5] = 'F';
    put_le64(tail, 1);
    put_le64(tail + 8, 1000);
    StateBatch *wb = state_batch_new();
    state_batch_put(wb, tk, sizeof(tk), tail, sizeof(tail));
    CHECK(state_batch_commit(st, wb, true, &err) == 0);
    state_batch_free(wb);
    uint64_t off, len;
    region(st, oid, 2, many, 7, 1u << 20, &off, &len);
    CHECK(off == 4096 && file_size(path) == (long)(4096 + resfile_pad(len)));
    StrBuf whole;
    strbuf_init(&whole);
    CHECK(read_seg(dir, oid, 1, &whole) == 0);
    int old_ok = 1;
    for (int k = 0; k < 4096; k++)
        old_ok &= (uint8_t)whole.data[k] == (k < 1000 ? 0xA5 : 0);
    CHECK(old_ok);
    strbuf_free(&whole);
    CatRelation *q = fake_relation(oid, false);
    CHECK(rel_purge(st, q, &err) == 0);
    sl_free(q);
    sl_error_clear(&err);
    state_close(st);
}

#ifdef SLUICE_FAULT_INJECTION
/* Whether scan s's next entry is key "Wk<i>" with value "value-<i>". */
static bool next_is(StateScan *s, int i)
{
    char k[8], v[16];
    snprintf(k, sizeof(k), "Wk%02d", i);
    snprintf(v, sizeof(v), "value-%02d", i);
    const void *key, *val;
    size_t klen, vlen;
    return state_scan_next(s, &key, &klen, &val, &vlen) && klen == 4 &&
           memcmp(key, k, 4) == 0 && vlen == strlen(v) && memcmp(val, v, vlen) == 0;
}

/* The two kinds of scan and the reopen after a full disk (state.h): while
 * a batch scan is open the store is in use, the write that would reopen
 * it is refused (53100) and the scan reads on; once it is closed, the
 * next write reopens the store and ends the endable scan still open (its
 * next call fails with 53100).  RocksDB's out-of-space answer comes from
 * the fault point state_write_no_space. */
static void test_scan_reopen(const char *dir)
{
    SlError err = {0};
    StateStore *st;
    CHECK(state_open(dir, &st, &err) == 0);
    StateBatch *wb = state_batch_new();
    for (int i = 0; i < 50; i++) {
        char k[8], v[16];
        snprintf(k, sizeof(k), "Wk%02d", i);
        snprintf(v, sizeof(v), "value-%02d", i);
        state_batch_put(wb, k, 4, v, strlen(v));
    }
    CHECK(state_batch_commit(st, wb, true, &err) == 0);
    state_batch_free(wb);
    StateScan *batch = state_scan_open(st, "Wk", 2);
    StateScan *held = state_scan_open_endable(st, "Wk", 2);
    CHECK(next_is(batch, 0) && next_is(held, 0));

    wb = state_batch_new();
    state_batch_put(wb, "Wz", 2, "after", 5);
    setenv("SLUICE_FAULT", "state_write_no_space:1:failall", 1);
    CHECK(state_batch_commit(st, wb, true, &err) < 0 &&
          strcmp(err.sqlstate, ERRCODE_DISK_FULL) == 0);
    sl_error_clear(&err);
    unsetenv("SLUICE_FAULT");
    /* The batch scan holds the reopen off, and neither scan is ended. */
    CHECK(state_batch_commit(st, wb, true, &err) < 0 &&
          strcmp(err.sqlstate, ERRCODE_DISK_FULL) == 0 && strstr(err.message, "in use") != NULL,
          "%s", err.message ? err.message : "the write went through");
    sl_error_clear(&err);
    CHECK(next_is(batch, 1) && next_is(held, 1));
    for (int i = 2; i < 50; i++)
        CHECK(next_is(batch, i), "batch scan, key %d", i);
    CHECK(next_is(batch, 50) == false && state_scan_status(batch, &err) == 0);
    CHECK(state_scan_close(batch, &err) == 0);

    /* The batch scan closed: the reopen goes through and ends the other. */
    CHECK(state_batch_commit(st, wb, true, &err) == 0, "%s", err.message);
    sl_error_clear(&err);
    state_batch_free(wb);
    CHECK(!next_is(held, 2));
    CHECK(state_scan_status(held, &err) < 0 && strcmp(err.sqlstate, ERRCODE_DISK_FULL) == 0 &&
          strstr(err.message, "the scan was ended") != NULL);
    sl_error_clear(&err);
    CHECK(state_scan_close(held, &err) < 0);
    sl_error_clear(&err);

    /* The reopened store holds every key, the write's among them. */
    held = state_scan_open_endable(st, "W", 1);
    for (int i = 0; i < 50; i++)
        CHECK(next_is(held, i), "after the reopen, key %d", i);
    const void *key, *val;
    size_t klen, vlen;
    CHECK(state_scan_next(held, &key, &klen, &val, &vlen) && klen == 2 &&
          memcmp(key, "Wz", 2) == 0 && vlen == 5 && memcmp(val, "after", 5) == 0);
    CHECK(!state_scan_next(held, &key, &klen, &val, &vlen));
    CHECK(state_scan_close(held, &err) == 0);
    state_close(st);
}
#endif

/* A write batch charges its account once about 64 KiB are pending, not at
 * every put; state_batch_charge brings it to the batch's whole size (its
 * records, their overhead and RocksDB's 12-byte header); the account is
 * never short by a step or more; the batch's free credits everything. */
static void test_batch_charge(void)
{
    SlMemAccount *acct = sl_mem_account_new(0);
    size_t server0 = sl_mem_server_used();
    StateBatch *b = state_batch_new();
    state_batch_set_account(b, acct);
    CHECK(sl_mem_account_used(acct) == 12, "the empty batch's header: %zu",
          sl_mem_account_used(acct));
    char key[16], val[100];
    memset(val, 'v', sizeof(val));
    size_t payload = 0, most_short = 0;
    int i;
    for (i = 0; i < 2000; i++) {
        snprintf(key, sizeof(key), "k%08d", i);
        state_batch_put(b, key, 9, val, sizeof(val));
        payload += 9 + sizeof(val) + 3;     /* tag and two one-byte lengths */
        size_t used = sl_mem_account_used(acct);
        size_t whole = 12 + payload;
        if (whole - used > most_short)
            most_short = whole - used;
        if (i == 10)
            CHECK(used == 12, "a few puts are not charged one by one: %zu", used);
    }
    CHECK(most_short > 0 && most_short < ((size_t)64 << 10),
          "short by less than one step at every put: %zu", most_short);
    state_batch_delete(b, "k00000001", 9);
    payload += 9 + 2;
    state_batch_charge(b);
    CHECK(sl_mem_account_used(acct) == 12 + payload, "charged exactly: %zu of %zu",
          sl_mem_account_used(acct), 12 + payload);
    CHECK(sl_mem_server_used() == server0 + 12 + payload, "the server's total too");
    state_batch_free(b);
    CHECK(sl_mem_account_used(acct) == 0 && sl_mem_server_used() == server0,
          "the free credits it all: %zu", sl_mem_account_used(acct));
    sl_mem_account_unref(acct);
}

int main(void)
{
    char dir[UNIT_DIR_MAX];
    unit_tmpdir("relstore", dir);
    test_codec();
    test_batch_charge();
    test_store(dir);
    test_delete_range(dir);
    test_group_commit(dir);
    test_result_log(dir);
    test_result_files(dir, 1);
    test_result_files(dir, 0);
    test_result_regions(dir);
#ifdef SLUICE_FAULT_INJECTION
    test_scan_reopen(dir);
#endif
    unit_rmdir(dir);
    return unit_done("test_relstore");
}
