/*
 * relstore.c -- rows of tables and internal streams in RocksDB (see
 * relstore.h for the key layout).
 *
 *   tbl_key, tbl_rowid_key, tbl_next_rowid, tbl_get, tbl_put, tbl_delete
 *   tbl_scan_open, tbl_scan_next, rel_scan_close
 *   stream_append, stream_append_batches, stream_append_many, stream_end_offset, stream_forget
 *   stream_scan_open, stream_scan_next
 *   rel_purge
 *
 * The next row id of each table and the end offset of each stream are found
 * once from the last key on disk and then kept in a small table in memory,
 * under a mutex: appends to one stream are serialized so offsets stay dense.
 */
#include "sluice/bytes.h"
#include "sluice/relstore.h"
#include "sluice/rowcodec.h"

#include <pthread.h>

/* ---------------------------------------------------------------------- */
/* Counters: per relation, the next row id or stream offset                */

typedef struct Counter {
    uint32_t oid;
    char     space;     /* 'T' row ids, 'S' stream offsets */
    int64_t  next;
} Counter;

static pthread_mutex_t counters_mu = PTHREAD_MUTEX_INITIALIZER;
static Counter *counters;
static int      ncounters, capcounters;

static void make_prefix(uint8_t *p, char space, uint32_t oid)
{
    p[0] = (uint8_t)space;
    put_be32(p + 1, oid);
}

/* Finds (or loads from disk) the counter; called with counters_mu held. */
static Counter *counter_get(StateStore *st, char space, uint32_t oid, SlError *err)
{
    for (int i = 0; i < ncounters; i++)
        if (counters[i].oid == oid && counters[i].space == space)
            return &counters[i];
    uint8_t prefix[5];
    make_prefix(prefix, space, oid);
    Arena a;
    arena_init(&a, 256);
    void *key;
    size_t klen;
    int rc = state_last_key(st, prefix, sizeof(prefix), &a, &key, &klen, err);
    int64_t next = 0;
    if (rc < 0) {
        arena_destroy(&a);
        return NULL;
    }
    if (rc == 1 && space == 'T' && klen == 5 + 8) {
        next = (int64_t)get_be64((const uint8_t *)key + 5) + 1;
    } else if (rc == 1 && space == 'S' && klen == 5 + 8) {
        /* The last chunk's first offset plus its row count. */
        void *val;
        size_t vlen;
        int64_t first = (int64_t)get_be64((const uint8_t *)key + 5);
        int g = state_get(st, key, klen, &a, &val, &vlen, err);
        if (g < 0 || vlen < 4) {
            if (g >= 0)
                sl_error(err, ERRCODE_DATA_CORRUPTED, "stream chunk too short");
            arena_destroy(&a);
            return NULL;
        }
        const uint8_t *v = val;
        next = first + (int64_t)get_le32(v);
    }
    arena_destroy(&a);
    if (ncounters == capcounters) {
        capcounters = capcounters ? capcounters * 2 : 16;
        counters = sl_realloc(counters, sizeof(Counter) * (size_t)capcounters);
    }
    counters[ncounters] = (Counter){oid, space, next};
    return &counters[ncounters++];
}

static void counter_forget(char space, uint32_t oid)
{
    pthread_mutex_lock(&counters_mu);
    for (int i = 0; i < ncounters; i++) {
        if (counters[i].oid == oid && counters[i].space == space) {
            counters[i] = counters[--ncounters];
            break;
        }
    }
    if (ncounters == 0) {
        sl_free(counters);
        counters = NULL;
        capcounters = 0;
    }
    pthread_mutex_unlock(&counters_mu);
}

/* ---------------------------------------------------------------------- */
/* Tables                                                                  */

void tbl_key(const CatRelation *rel, const Batch *b, uint32_t row, StrBuf *key)
{
    uint8_t prefix[5];
    make_prefix(prefix, 'T', rel->oid);
    strbuf_reset(key);
    strbuf_append(key, prefix, sizeof(prefix));
    key_encode(b, row, rel->pk, rel->npk, key);
}

void tbl_rowid_key(const CatRelation *rel, uint64_t rowid, StrBuf *key)
{
    uint8_t k[13];
    make_prefix(k, 'T', rel->oid);
    put_be64(k + 5, rowid);
    strbuf_reset(key);
    strbuf_append(key, k, sizeof(k));
}

uint64_t tbl_next_rowid(StateStore *st, const CatRelation *rel, SlError *err)
{
    pthread_mutex_lock(&counters_mu);
    Counter *c = counter_get(st, 'T', rel->oid, err);
    uint64_t id = c ? (uint64_t)c->next++ : UINT64_MAX;
    pthread_mutex_unlock(&counters_mu);
    return id;
}

static SlType *rel_types(Arena *a, const CatRelation *rel)
{
    SlType *t = ARENA_ARRAY(a, SlType, rel->ncols ? rel->ncols : 1);
    for (int i = 0; i < rel->ncols; i++)
        t[i] = rel->cols[i].type;
    return t;
}

static int corrupt(SlError *err, const CatRelation *rel)
{
    return sl_error(err, ERRCODE_DATA_CORRUPTED, "a stored row of \"%s\" is corrupt",
                    rel->name);
}

int tbl_get(StateStore *st, const CatRelation *rel, const StrBuf *key, Arena *a, Batch *out,
            uint32_t row, SlError *err)
{
    void *val;
    size_t vlen;
    int rc = state_get(st, key->data, key->len, a, &val, &vlen, err);
    if (rc <= 0)
        return rc;
    if (row_decode(val, vlen, out, row, a) < 0)
        return corrupt(err, rel);
    return 1;
}

void tbl_put(StateBatch *wb, const StrBuf *key, const Batch *b, uint32_t row)
{
    StrBuf val;
    strbuf_init(&val);
    row_encode(b, row, &val);
    state_batch_put(wb, key->data, key->len, val.data, val.len);
    strbuf_free(&val);
}

void tbl_delete(StateBatch *wb, const StrBuf *key)
{
    state_batch_delete(wb, key->data, key->len);
}

struct RelScan {
    StateScan         *scan;
    const CatRelation *rel;
    bool               is_stream;
    int64_t            from, to;    /* streams: the offset range */
    /* streams: the chunk being read */
    const uint8_t     *chunk;
    size_t             chunk_len;
    size_t             chunk_pos;
    uint32_t           chunk_left;
    int64_t            offset;      /* offset of the next row in the chunk */
    Arena              chunk_arena;
    bool               done;
};

RelScan *tbl_scan_open(StateStore *st, const CatRelation *rel)
{
    RelScan *s = sl_calloc(1, sizeof(RelScan));
    uint8_t prefix[5];
    make_prefix(prefix, 'T', rel->oid);
    s->scan = state_scan_open(st, prefix, sizeof(prefix));
    s->rel = rel;
    arena_init(&s->chunk_arena, 4096);
    return s;
}

int tbl_scan_next(RelScan *s, Arena *a, Batch **out, SlStr **keys, SlError *err)
{
    if (s->done)
        return 0;
    Batch *b = batch_alloc(a, rel_types(a, s->rel), (uint32_t)s->rel->ncols,
                           RELSTORE_BATCH_ROWS);
    SlStr *k = keys ? ARENA_ARRAY(a, SlStr, RELSTORE_BATCH_ROWS) : NULL;
    const void *key, *val;
    size_t klen, vlen;
    while (b->nrows < RELSTORE_BATCH_ROWS) {
        if (!state_scan_next(s->scan, &key, &klen, &val, &vlen)) {
            s->done = true;
            break;
        }
        if (row_decode(val, vlen, b, b->nrows, a) < 0)
            return corrupt(err, s->rel);
        if (k) {
            k[b->nrows].ptr = arena_memdup(a, key, klen);
            k[b->nrows].len = (uint32_t)klen;
        }
        b->nrows++;
    }
    for (uint32_t c = 0; c < b->ncols; c++)
        b->cols[c].len = b->nrows;
    *out = b;
    if (keys)
        *keys = k;
    return (int)b->nrows;
}

int rel_scan_close(RelScan *s, SlError *err)
{
    if (s == NULL)
        return 0;
    int rc = state_scan_close(s->scan, err);
    arena_destroy(&s->chunk_arena);
    sl_free(s);
    return rc;
}

/* ---------------------------------------------------------------------- */
/* Internal streams                                                        */

int64_t stream_end_offset(StateStore *st, const CatRelation *rel, SlError *err)
{
    pthread_mutex_lock(&counters_mu);
    Counter *c = counter_get(st, 'S', rel->oid, err);
    int64_t end = c ? c->next : -1;
    pthread_mutex_unlock(&counters_mu);
    return end;
}

void stream_forget(const CatRelation *rel)
{
    counter_forget('S', rel->oid);
    counter_forget('T', rel->oid);
}

/* Appends one chunk per batch; with (may be NULL) holds other writes that
 * must commit in the same RocksDB write (a continuous query's state). */
/* Encodes each batch as one chunk value: a row count, then each row with
 * its length. */
static StrBuf *encode_chunks(const Batch *const *bs, int nb, int64_t *rows)
{
    StrBuf *vals = sl_calloc((size_t)(nb > 0 ? nb : 1), sizeof(StrBuf));
    StrBuf row;
    strbuf_init(&row);
    *rows = 0;
    for (int i = 0; i < nb; i++) {
        const Batch *b = bs[i];
        uint8_t n4[4];
        put_le32(n4, b->nrows);
        strbuf_append(&vals[i], n4, 4);
        for (uint32_t r = 0; r < b->nrows; r++) {
            strbuf_reset(&row);
            row_encode(b, r, &row);
            uint8_t l4[4];
            put_le32(l4, (uint32_t)row.len);
            strbuf_append(&vals[i], l4, 4);
            strbuf_append(&vals[i], row.data, row.len);
        }
        *rows += b->nrows;
    }
    strbuf_free(&row);
    return vals;
}

int stream_append_many(StateStore *st, const StreamAppend *apps, int napps, StateBatch *with,
                       SlError *err)
{
    /* Encode outside the lock; only the offsets and the write are serial. */
    StrBuf *vals[napps > 0 ? napps : 1];
    int64_t rows[napps > 0 ? napps : 1], total = 0;
    for (int k = 0; k < napps; k++) {
        vals[k] = encode_chunks(apps[k].batches, apps[k].nbatches, &rows[k]);
        total += rows[k];
    }
    int rc = -1;
    pthread_mutex_lock(&counters_mu);
    Counter *cs[napps > 0 ? napps : 1];
    int k = 0;
    for (; k < napps; k++)
        if ((cs[k] = counter_get(st, 'S', apps[k].rel->oid, err)) == NULL)
            break;
    if (k == napps) {
        StateBatch *wb = with ? with : state_batch_new();
        for (k = 0; k < napps; k++) {
            int64_t off = cs[k]->next;
            for (int i = 0; i < apps[k].nbatches; i++) {
                if (apps[k].batches[i]->nrows == 0)
                    continue;
                uint8_t key[13];
                make_prefix(key, 'S', apps[k].rel->oid);
                put_be64(key + 5, (uint64_t)off);
                state_batch_put(wb, key, sizeof(key), vals[k][i].data, vals[k][i].len);
                off += apps[k].batches[i]->nrows;
            }
        }
        SLUICE_FAULT("stream_append_before_write");
        if ((total == 0 && with == NULL) || state_batch_commit(st, wb, true, err) == 0) {
            for (k = 0; k < napps; k++) {
                apps[k].first[0] = cs[k]->next;
                cs[k]->next += rows[k];
            }
            rc = 0;
        }
        if (wb != with)
            state_batch_free(wb);
    }
    pthread_mutex_unlock(&counters_mu);
    for (k = 0; k < napps; k++) {
        for (int i = 0; i < apps[k].nbatches; i++)
            strbuf_free(&vals[k][i]);
        sl_free(vals[k]);
    }
    return rc;
}

int stream_append_batches(StateStore *st, const CatRelation *rel, const Batch *const *bs,
                          int nb, StateBatch *with, int64_t *first, SlError *err)
{
    StreamAppend app = {rel, bs, nb, first};
    return stream_append_many(st, &app, 1, with, err);
}

int stream_append(StateStore *st, const CatRelation *rel, const Batch *b, int64_t *first,
                  SlError *err)
{
    return stream_append_batches(st, rel, &b, 1, NULL, first, err);
}

RelScan *stream_scan_open(StateStore *st, const CatRelation *rel, int64_t from, int64_t to)
{
    RelScan *s = sl_calloc(1, sizeof(RelScan));
    uint8_t prefix[5], start[13];
    make_prefix(prefix, 'S', rel->oid);
    make_prefix(start, 'S', rel->oid);
    put_be64(start + 5, (uint64_t)from);
    s->scan = state_scan_open_at(st, prefix, sizeof(prefix), start, sizeof(start));
    s->rel = rel;
    s->is_stream = true;
    s->from = from;
    s->to = to;
    arena_init(&s->chunk_arena, 4096);
    return s;
}

/* Loads the next chunk; false at the end of the log. */
static bool next_chunk(RelScan *s, SlError *err, bool *bad)
{
    const void *key, *val;
    size_t klen, vlen;
    if (!state_scan_next(s->scan, &key, &klen, &val, &vlen))
        return false;
    if (klen != 13 || vlen < 4) {
        *bad = true;
        corrupt(err, s->rel);
        return false;
    }
    arena_reset(&s->chunk_arena);
    s->chunk = arena_memdup(&s->chunk_arena, val, vlen);
    s->chunk_len = vlen;
    s->chunk_pos = 4;
    s->chunk_left = get_le32(s->chunk);
    s->offset = (int64_t)get_be64((const uint8_t *)key + 5);
    return true;
}

int stream_scan_next(RelScan *s, Arena *a, Batch **out, SlError *err)
{
    if (s->done)
        return 0;
    Batch *b = batch_alloc(a, rel_types(a, s->rel), (uint32_t)s->rel->ncols,
                           RELSTORE_BATCH_ROWS);
    while (b->nrows < RELSTORE_BATCH_ROWS) {
        if (s->chunk_left == 0) {
            bool bad = false;
            if (!next_chunk(s, err, &bad)) {
                if (bad)
                    return -1;
                s->done = true;
                break;
            }
            continue;
        }
        if (s->offset >= s->to) {
            s->done = true;
            break;
        }
        if (s->chunk_len - s->chunk_pos < 4)
            return corrupt(err, s->rel);
        uint32_t len = get_le32(s->chunk + s->chunk_pos);
        s->chunk_pos += 4;
        if (s->chunk_len - s->chunk_pos < len)
            return corrupt(err, s->rel);
        if (s->offset >= s->from) {
            if (row_decode(s->chunk + s->chunk_pos, len, b, b->nrows, a) < 0)
                return corrupt(err, s->rel);
            b->nrows++;
        }
        s->chunk_pos += len;
        s->chunk_left--;
        s->offset++;
    }
    for (uint32_t c = 0; c < b->ncols; c++)
        b->cols[c].len = b->nrows;
    *out = b;
    return (int)b->nrows;
}

int rel_purge(StateStore *st, const CatRelation *rel, SlError *err)
{
    StateBatch *wb = state_batch_new();
    int rc = 0;
    uint64_t n = 0;
    /* Rows ('T'), stream chunks ('S'), and a continuous query's operator
     * state ('Q') and batch meta ('M'). */
    static const char spaces[] = "TSQM";
    for (int i = 0; i < 4 && rc == 0; i++) {
        uint8_t prefix[5];
        make_prefix(prefix, spaces[i], rel->oid);
        StateScan *s = state_scan_open(st, prefix, sizeof(prefix));
        const void *key, *val;
        size_t klen, vlen;
        while (state_scan_next(s, &key, &klen, &val, &vlen)) {
            state_batch_delete(wb, key, klen);
            n++;
        }
        rc = state_scan_close(s, err);
    }
    if (rc == 0 && n > 0)
        rc = state_batch_commit(st, wb, true, err);
    state_batch_free(wb);
    stream_forget(rel);
    return rc;
}
