/*
 * test_txbuf.c -- unit tests of a transaction block's buffer
 * (src/state/txbuf.c): lookups of buffered puts and deletes, the sorted
 * range a scan lays over the committed rows, the one write at COMMIT
 * (table rows and a stream's chunks together), first committer wins (a key
 * both inserted, a row changed meanwhile; a key inserted and deleted
 * again is no conflict), the 53200 budget; nothing leaks (AddressSanitizer).
 */
#include "unit_data.h"
#include "sluice/relstore.h"
#include "sluice/rowcodec.h"
#include "sluice/txbuf.h"

#include <stdatomic.h>
#include <stdio.h>

static CatColumn cols[2] = {
    {"id", {TYPE_INT8, -1, TYPE_UNKNOWN}, true},
    {"v", {TYPE_INT8, -1, TYPE_UNKNOWN}, false},
};
static int pk[1] = {0};

/* A relation the test holds one reference to, so the buffer's own
 * references never free it. */
static CatRelation *fake_relation(uint32_t oid, RelKind kind)
{
    CatRelation *rel = sl_calloc(1, sizeof(CatRelation));
    rel->oid = oid;
    rel->name = kind == REL_TABLE ? "t" : "s";
    rel->kind = kind;
    rel->ncols = 2;
    rel->cols = cols;
    rel->npk = kind == REL_TABLE ? 1 : 0;
    rel->pk = pk;
    atomic_init(&rel->refs, 1);
    return rel;
}

/* Row (id, v) encoded, and its key. */
static void row(Arena *a, const CatRelation *rel, int64_t id, int64_t v, StrBuf *key, StrBuf *val)
{
    SlType types[2] = {{TYPE_INT8, -1, TYPE_UNKNOWN}, {TYPE_INT8, -1, TYPE_UNKNOWN}};
    Batch *b = batch_alloc(a, types, 2, 1);
    b->cols[0].v.i64[0] = id;
    b->cols[1].v.i64[0] = v;
    b->nrows = 1;
    b->cols[0].len = b->cols[1].len = 1;
    strbuf_reset(key);
    strbuf_reset(val);
    tbl_key(rel, b, 0, key);
    row_encode(b, 0, val);
}

static void commit_row(StateStore *st, const StrBuf *key, const StrBuf *val)
{
    SlError err = {0};
    StateBatch *wb = state_batch_new();
    if (val != NULL)
        state_batch_put(wb, key->data, key->len, val->data, val->len);
    else
        state_batch_delete(wb, key->data, key->len);
    CHECK(state_batch_commit(st, wb, true, &err) == 0);
    state_batch_free(wb);
}

/* 1 with *v set when the committed row with that id exists. */
static int committed(StateStore *st, Arena *a, const CatRelation *rel, int64_t id, int64_t *v)
{
    StrBuf key, val;
    strbuf_init(&key);
    strbuf_init(&val);
    row(a, rel, id, 0, &key, &val);
    SlError err = {0};
    void *p;
    size_t n;
    int rc = state_get(st, key.data, key.len, a, &p, &n, &err);
    if (rc == 1) {
        SlType types[2] = {{TYPE_INT8, -1, TYPE_UNKNOWN}, {TYPE_INT8, -1, TYPE_UNKNOWN}};
        Batch *b = batch_alloc(a, types, 2, 1);
        CHECK(row_decode(p, n, b, 0, a) == 0);
        *v = b->cols[1].v.i64[0];
    }
    strbuf_free(&key);
    strbuf_free(&val);
    return rc;
}

static void test_buffer_and_commit(StateStore *st, CatRelation *t, CatRelation *s)
{
    Arena a;
    arena_init(&a, 4096);
    SlError err = {0};
    StrBuf key, val;
    strbuf_init(&key);
    strbuf_init(&val);
    row(&a, t, 1, 10, &key, &val);
    commit_row(st, &key, &val);

    StateTx *tx = state_tx_new();
    CHECK(state_tx_empty(tx));
    const void *got;
    size_t glen;
    CHECK(state_tx_lookup(tx, key.data, key.len, &got, &glen) == -1);
    /* delete 1, put 3, 2 (out of order), 2 again */
    CHECK(state_tx_write(tx, st, t, key.data, key.len, NULL, 0, &err) == 0);
    CHECK(state_tx_lookup(tx, key.data, key.len, &got, &glen) == 0);
    int64_t ids[3] = {3, 2, 2}, vs[3] = {30, 20, 21};
    for (int i = 0; i < 3; i++) {
        row(&a, t, ids[i], vs[i], &key, &val);
        CHECK(state_tx_write(tx, st, t, key.data, key.len, val.data, val.len, &err) == 0);
    }
    CHECK(state_tx_lookup(tx, key.data, key.len, &got, &glen) == 1);
    CHECK(glen == val.len && memcmp(got, val.data, glen) == 0);
    CHECK(!state_tx_empty(tx));
    CHECK(state_tx_relation(tx, 0) == t && state_tx_relation(tx, 1) == NULL);

    StrBuf prefix;
    strbuf_init(&prefix);
    tbl_key_prefix(t, &prefix);
    StateTxPair *pairs;
    uint32_t n = state_tx_range(tx, prefix.data, prefix.len, &a, &pairs);
    CHECK(n == 3);
    for (uint32_t i = 0; n == 3 && i + 1 < n; i++)
        CHECK(memcmp(pairs[i].key.ptr, pairs[i + 1].key.ptr, pairs[i].key.len) < 0,
              "range not in key order at %u", i);
    CHECK(n == 3 && pairs[0].val.ptr == NULL && pairs[1].val.ptr != NULL);

    /* two chunks for the stream */
    SlType types[2] = {{TYPE_INT8, -1, TYPE_UNKNOWN}, {TYPE_INT8, -1, TYPE_UNKNOWN}};
    Batch *b = batch_alloc(&a, types, 2, 2);
    b->nrows = 2;
    b->cols[0].len = b->cols[1].len = 2;
    state_tx_append(tx, s, b);
    state_tx_append(tx, s, b);
    CHECK(state_tx_appends_to(tx, s) && !state_tx_appends_to(tx, t));
    int64_t before = stream_end_offset(st, s, &err);

    StateTxConflict conf = {0};
    CHECK(state_tx_commit(tx, st, &conf, &err) == 0, "%s", err.message ? err.message : "");
    state_tx_free(tx);
    int64_t v = 0;
    CHECK(committed(st, &a, t, 1, &v) == 0);
    CHECK(committed(st, &a, t, 2, &v) == 1 && v == 21);
    CHECK(committed(st, &a, t, 3, &v) == 1 && v == 30);
    CHECK(stream_end_offset(st, s, &err) == before + 4);
    strbuf_free(&prefix);
    strbuf_free(&key);
    strbuf_free(&val);
    arena_destroy(&a);
}

static void test_first_committer_wins(StateStore *st, CatRelation *t)
{
    Arena a;
    arena_init(&a, 4096);
    SlError err = {0};
    StrBuf key, val;
    strbuf_init(&key);
    strbuf_init(&val);
    StateTxConflict conf = {0};
    int64_t v = 0;

    /* both insert 7: the block's COMMIT is refused, its other row too */
    StateTx *tx = state_tx_new();
    row(&a, t, 8, 80, &key, &val);
    CHECK(state_tx_write(tx, st, t, key.data, key.len, val.data, val.len, &err) == 0);
    row(&a, t, 7, 70, &key, &val);
    CHECK(state_tx_write(tx, st, t, key.data, key.len, val.data, val.len, &err) == 0);
    row(&a, t, 7, 71, &key, &val);
    commit_row(st, &key, &val);
    CHECK(state_tx_commit(tx, st, &conf, &err) == -2);
    CHECK(conf.rel == t && conf.row != NULL);
    state_tx_free(tx);
    CHECK(committed(st, &a, t, 7, &v) == 1 && v == 71);
    CHECK(committed(st, &a, t, 8, &v) == 0);

    /* the block updates 7, another session changes it first: refused,
     * and not as a duplicate */
    tx = state_tx_new();
    row(&a, t, 7, 72, &key, &val);
    CHECK(state_tx_write(tx, st, t, key.data, key.len, val.data, val.len, &err) == 0);
    row(&a, t, 7, 73, &key, &val);
    commit_row(st, &key, &val);
    memset(&conf, 0, sizeof(conf));
    CHECK(state_tx_commit(tx, st, &conf, &err) == -2);
    CHECK(conf.rel == t && conf.row == NULL);
    state_tx_free(tx);
    CHECK(committed(st, &a, t, 7, &v) == 1 && v == 73);

    /* inserted and deleted again by the block: no conflict, nothing
     * written over the other session's row */
    tx = state_tx_new();
    row(&a, t, 9, 90, &key, &val);
    CHECK(state_tx_write(tx, st, t, key.data, key.len, val.data, val.len, &err) == 0);
    CHECK(state_tx_write(tx, st, t, key.data, key.len, NULL, 0, &err) == 0);
    row(&a, t, 9, 91, &key, &val);
    commit_row(st, &key, &val);
    CHECK(state_tx_commit(tx, st, &conf, &err) == 0);
    state_tx_free(tx);
    CHECK(committed(st, &a, t, 9, &v) == 1 && v == 91);
    strbuf_free(&key);
    strbuf_free(&val);
    arena_destroy(&a);
}

static void test_budget(StateStore *st, CatRelation *t)
{
    Arena a;
    arena_init(&a, 4096);
    SlError err = {0};
    StrBuf key, val;
    strbuf_init(&key);
    strbuf_init(&val);
    StateTx *tx = state_tx_new();
    for (int64_t i = 100; i < 200; i++) {
        row(&a, t, i, i, &key, &val);
        CHECK(state_tx_write(tx, st, t, key.data, key.len, val.data, val.len, &err) == 0);
    }
    size_t held = state_tx_bytes(tx);
    CHECK(held > 100 * val.len);
    CHECK(state_tx_check_budget(tx, held, &err) == 0);
    CHECK(state_tx_check_budget(tx, 0, &err) == 0);
    CHECK(state_tx_check_budget(tx, held - 1, &err) == -1);
    CHECK(strcmp(err.sqlstate, ERRCODE_OUT_OF_MEMORY) == 0);
    sl_error_clear(&err);
    state_tx_free(tx);      /* dropped: nothing written */
    int64_t v;
    CHECK(committed(st, &a, t, 150, &v) == 0);
    strbuf_free(&key);
    strbuf_free(&val);
    arena_destroy(&a);
}

int main(void)
{
    char dir[UNIT_DIR_MAX];
    unit_tmpdir("txbuf", dir);
    StateStore *st = NULL;
    SlError err = {0};
    CHECK(state_open(dir, &st, &err) == 0);
    if (st != NULL) {
        CatRelation *t = fake_relation(900, REL_TABLE), *s = fake_relation(901, REL_STREAM);
        test_buffer_and_commit(st, t, s);
        test_first_committer_wins(st, t);
        test_budget(st, t);
        state_close(st);
        sl_free(t);
        sl_free(s);
    }
    sl_error_clear(&err);
    unit_rmdir(dir);
    return unit_done("test_txbuf");
}
