/*
 * changelog.c -- a continuous query's changelog: the changes of its result
 * table, batch by batch, for the continuous queries that read that result
 * table (an MV on an MV; docs/engine-graph.md, "Result tables as inputs").
 *
 *   changelog_begin      at the start of a batch of query a: is a's
 *                        changelog written this batch (b->cl_on; the run
 *                        then records its changes, old rows of updates too)
 *   changelog_write      in the batch's one write, before its commit: the
 *                        snapshot asked for, the batch's changes, the
 *                        garbage collection, or the changelog's removal
 *   changelog_kept_from  the lowest batch a's changelog keeps (sys.state)
 *   source_changelog_ops the source of a query b that reads a's result
 *                        table (source_int.h): its offsets are a's batch ids
 *
 * Keys (a's oid):
 *
 *   'C' + oid (4) + 'D' + batch id (8, BE) + chunk (4, BE)
 *                 -> batch N's changes of the result table: records of
 *                    kind (1), length (4, BE), the row (row_encode), as
 *                    IncBatch.changes holds them: 'I' and 'U' add the row
 *                    (weight +1), 'D' and 'O' (an updated row's old
 *                    value, before its 'U') take it away (-1)
 *   'C' + oid (4) + 'S' + batch id (8, BE) + chunk (4, BE)
 *                 -> a snapshot: the result table as it was before batch
 *                    N ('I' records), for a reader that starts at N
 *   'M' + oid (4) + 'C'
 *                 -> the lowest batch whose changes are kept (8, BE): the
 *                    changelog is on (every batch writes its changes)
 *
 * Everything is written in the batch's one StateBatch with its state and
 * result rows, so a batch's changes land exactly when its result does.
 *
 * A reader's offsets: partition 0 is the changes, [start, end) = a's
 * batches start .. end-1; partition 1 is the snapshot: [0, S + 1) in the
 * reader's first batch reads the snapshot of batch S, so a position past
 * 0 says the reader started (a plan cut short leaves 0 there), and later
 * batches read [S + 1, S + 1) of it.  Its first plan takes the newest snapshot S (none
 * yet: it asks a for one, cq_want_snapshot, and plans again later) and
 * then every change from S on.  A plan goes up to a's last committed
 * batch, read from a's meta key.
 */
#include "incremental.h"
#include "runtime_int.h"
#include "source_int.h"

#include "sluice/bytes.h"
#include "sluice/cq.h"
#include "sluice/relstore.h"
#include "sluice/rowcodec.h"

#include <inttypes.h>
#include <string.h>

#define CL_CHUNK_BYTES (256 * 1024)

static void cl_prefix(uint8_t *k, uint32_t oid, char kind)
{
    k[0] = 'C';
    put_be32(k + 1, oid);
    k[5] = (uint8_t)kind;
}

static void cl_key(uint8_t *k, uint32_t oid, char kind, int64_t batch, uint32_t chunk)
{
    cl_prefix(k, oid, kind);
    put_be64(k + 6, (uint64_t)batch);
    put_be32(k + 14, chunk);
}

static void marker_key(uint8_t *k, uint32_t oid)
{
    k[0] = 'M';
    put_be32(k + 1, oid);
    k[5] = 'C';
}

/* The lowest batch kept, 1; 0: the changelog is off; -1. */
static int read_marker(StateStore *st, uint32_t oid, int64_t *from, SlError *err)
{
    uint8_t mk[6];
    marker_key(mk, oid);
    Arena a;
    arena_init(&a, 64);
    void *v;
    size_t vlen;
    int rc = state_get(st, mk, sizeof(mk), &a, &v, &vlen, err);
    if (rc == 1 && vlen != 8)
        rc = sl_error(err, ERRCODE_DATA_CORRUPTED, "the changelog of relation %u is corrupt",
                      oid);
    if (rc == 1)
        *from = (int64_t)get_be64(v);
    arena_destroy(&a);
    return rc;
}

int changelog_kept_from(StateStore *st, uint32_t oid, int64_t *from, SlError *err)
{
    return read_marker(st, oid, from, err);
}

int changelog_begin(StateStore *st, const CatRelation *rel, bool writes_result, IncBatch *b,
                    SlError *err)
{
    b->cl_on = false;
    b->cl_from = -1;
    if (!writes_result)
        return 0;
    int rc = read_marker(st, rel->oid, &b->cl_from, err);
    if (rc < 0)
        return -1;
    if (rc == 0)
        b->cl_from = -1;
    b->cl_on = !b->cl_off && (b->cl_from >= 0 || b->cl_snapshot);
    if (b->cl_on)
        b->want_changes = true;
    return 0;
}

/* Cuts records (IncBatch.changes' format) into chunks under kind. */
typedef struct ChunkOut {
    StateBatch *wb;
    uint32_t    oid;
    char        kind;
    int64_t     batch;
    uint32_t    chunk;
} ChunkOut;

static void chunk_put(ChunkOut *o, const void *data, size_t len)
{
    if (len == 0)
        return;
    uint8_t k[18];
    cl_key(k, o->oid, o->kind, o->batch, o->chunk++);
    state_batch_put(o->wb, k, sizeof(k), data, len);
}

static void put_records(ChunkOut *o, const StrBuf *recs)
{
    size_t from = 0, at = 0;
    while (at + 5 <= recs->len) {
        size_t next = at + 5 + get_be32((const uint8_t *)recs->data + at + 1);
        if (next - from > CL_CHUNK_BYTES && at > from) {
            chunk_put(o, recs->data + from, at - from);
            from = at;
        }
        at = next;
    }
    chunk_put(o, recs->data + from, recs->len - from);
}

/* The result table before this batch, as 'I' records under 'S'. */
static int put_snapshot(StateStore *st, const CatRelation *rel, StateBatch *wb, int64_t batch,
                        SlError *err)
{
    ChunkOut o = {wb, rel->oid, 'S', batch, 0};
    RelScan *s = tbl_scan_open(st, rel, false);
    Arena a;
    arena_init(&a, 1 << 16);
    StrBuf recs;
    strbuf_init(&recs);
    Batch *rows;
    int n;
    while ((n = tbl_scan_next(s, &a, &rows, NULL, err)) > 0) {
        for (uint32_t r = 0; r < rows->nrows; r++) {
            uint8_t h[5] = {'I', 0, 0, 0, 0};
            size_t at = recs.len;
            strbuf_append(&recs, h, sizeof(h));
            row_encode(rows, r, &recs);
            put_be32((uint8_t *)recs.data + at + 1, (uint32_t)(recs.len - at - 5));
        }
        if (recs.len >= CL_CHUNK_BYTES) {
            chunk_put(&o, recs.data, recs.len);
            strbuf_reset(&recs);
        }
        arena_rewind(&a, 0);
    }
    int rc = rel_scan_close(s, n < 0 ? NULL : err);
    if (n < 0)
        rc = -1;
    if (rc == 0)
        chunk_put(&o, recs.data, recs.len);
    strbuf_free(&recs);
    arena_destroy(&a);
    return rc;
}

static void delete_below(StateBatch *wb, uint32_t oid, char kind, int64_t below)
{
    uint8_t lo[14], hi[14];
    cl_prefix(lo, oid, kind);
    put_be64(lo + 6, 0);
    cl_prefix(hi, oid, kind);
    put_be64(hi + 6, (uint64_t)below);
    state_batch_delete_range(wb, lo, sizeof(lo), hi, sizeof(hi));
}

int changelog_write(StateStore *st, const CatRelation *rel, IncBatch *b, StateBatch *wb,
                    SlError *err)
{
    uint32_t oid = rel->oid;
    uint8_t mk[6];
    marker_key(mk, oid);
    if (b->cl_off && b->cl_from >= 0) {
        /* No query reads the result table any more: the changelog goes. */
        uint8_t lo[5] = {'C'}, hi[5] = {'C'};
        put_be32(lo + 1, oid);
        put_be32(hi + 1, oid + 1);
        if (oid == UINT32_MAX)
            hi[0] = 'D';
        state_batch_delete_range(wb, lo, sizeof(lo), hi, sizeof(hi));
        state_batch_delete(wb, mk, sizeof(mk));
        return 0;
    }
    if (!b->cl_on)
        return 0;
    if (b->cl_snapshot && put_snapshot(st, rel, wb, b->batch_id, err) < 0)
        return -1;
    ChunkOut o = {wb, oid, 'D', b->batch_id, 0};
    put_records(&o, &b->changes);
    int64_t from = b->cl_from >= 0 ? b->cl_from : b->batch_id;
    if (b->cl_gc_below > from) {
        /* Every reader has read the batches below: their changes and
         * snapshots go. */
        from = SL_MIN(b->cl_gc_below, b->batch_id);
        delete_below(wb, oid, 'D', from);
        delete_below(wb, oid, 'S', from);
    }
    if (from != b->cl_from) {
        uint8_t v[8];
        put_be64(v, (uint64_t)from);
        state_batch_put(wb, mk, sizeof(mk), v, sizeof(v));
    }
    return 0;
}

/* ---------------------------------------------------------------------- */
/* The source of a reader                                                   */

/* a's last committed batch + 1 (its meta key's batch id), 0 before any. */
static int64_t committed_end(StateStore *st, uint32_t oid, SlError *err)
{
    uint8_t k[5] = {'M'};
    put_be32(k + 1, oid);
    Arena a;
    arena_init(&a, 256);
    void *v;
    size_t vlen;
    int rc = state_get(st, k, sizeof(k), &a, &v, &vlen, err);
    int64_t end = rc < 0 ? -1 : rc == 0 || vlen < 8 ? 0 : (int64_t)get_be64(v) + 1;
    arena_destroy(&a);
    return end;
}

static int cl_plan(Source *src, const SourceOffsets *pos, int64_t now_us, SourceOffsets *out,
                   SlError *err)
{
    uint32_t oid = src->rel->oid;
    int64_t latest = committed_end(src->st, oid, err);
    if (latest < 0)
        return -1;
    src->latest = latest;
    src->latest_us = now_us;
    const SrcPart *p0 = pos ? srcoffs_find(pos, -1, 0) : NULL;
    const SrcPart *p1 = pos ? srcoffs_find(pos, -1, 1) : NULL;
    if (p0 != NULL && p1 != NULL && p1->end > 0) {
        /* Started: the snapshot was read (partition 1 is past 0). */
        srcoffs_add(out, -1, 0, p0->end, SL_MAX(p0->end, latest));
        srcoffs_add(out, -1, 1, p1->end, p1->end);
        return 0;
    }
    /* The first batch: the newest snapshot, then every change from it. */
    uint8_t pre[6];
    cl_prefix(pre, oid, 'S');
    Arena a;
    arena_init(&a, 256);
    void *key;
    size_t klen;
    int rc = state_last_key(src->st, pre, sizeof(pre), &a, &key, &klen, err);
    int64_t snap = rc == 1 && klen == 18 ? (int64_t)get_be64((uint8_t *)key + 6) : -1;
    arena_destroy(&a);
    if (rc < 0)
        return -1;
    /* A snapshot that a's batch in flight deletes (every reader it knew
     * of had passed it) is no start: a new one is asked for. */
    CqRuntime *cq = src->rt != NULL ? src->rt->cq : NULL;
    if (snap < 0 || snap >= latest || (cq != NULL && snap < cq_changelog_floor(cq, oid))) {
        if (cq != NULL)
            cq_want_snapshot(cq, oid);
        return SOURCE_NOT_READY;
    }
    srcoffs_add(out, -1, 0, snap, latest);
    srcoffs_add(out, -1, 1, 0, snap + 1);
    return 0;
}

/* sys.source_lag: partition 0's latest is a's last committed batch + 1,
 * read afresh (a paused reader plans nothing); the snapshot's partition
 * has nothing more to read. */
static void cl_lag(Source *src, const SrcPart *p, SourceLag *l)
{
    if (p->part != 0) {
        l->latest = p->end;
        return;
    }
    SlError ignore = {0};
    int64_t end = committed_end(src->st, src->rel->oid, &ignore);
    sl_error_clear(&ignore);
    if (end >= 0)
        source_lag_now(l, end);
}

typedef struct ClReader {
    SourceReader base;
    SlType      *types;         /* a's columns, then the weight (bigint) */
    int          ncols;         /* a's columns */
    /* the ranges: the snapshot's batches, then the changes' */
    int64_t      snap_lo, snap_hi, lo, hi;
    bool         in_snap;       /* reading the snapshot */
    bool         checked;
    StateScan   *scan;
    StrBuf       chunk;         /* the chunk being read, and where */
    size_t       at;
} ClReader;

static SourceReader *cl_reader_open(Source *src, const SourceOffsets *ranges)
{
    ClReader *r = sl_calloc(1, sizeof(ClReader));
    r->base.src = src;
    const CatRelation *rel = src->rel;
    r->ncols = rel->ncols;
    r->types = sl_malloc(sizeof(SlType) * (size_t)(rel->ncols + 1));
    for (int c = 0; c < rel->ncols; c++)
        r->types[c] = rel->cols[c].type;
    r->types[rel->ncols] = sl_type(TYPE_INT8);
    const SrcPart *p0 = srcoffs_find(ranges, -1, 0), *p1 = srcoffs_find(ranges, -1, 1);
    r->lo = p0 ? p0->start : 0;
    r->hi = p0 ? p0->end : 0;
    /* [0, S + 1): the snapshot of batch S; empty once started */
    r->snap_lo = p1 && p1->end > p1->start ? p1->end - 1 : 0;
    r->snap_hi = p1 && p1->end > p1->start ? p1->end : 0;
    r->in_snap = true;
    strbuf_init(&r->chunk);
    return &r->base;
}

/* The changelog no longer holds batch: -1 with 55000. */
static int gone(ClReader *r, int64_t batch, SlError *err)
{
    sl_error(err, ERRCODE_OBJECT_NOT_IN_PREREQUISITE_STATE,
             "the changelog of continuous query \"%s\" no longer holds batch %" PRId64,
             r->base.src->rel->name, batch);
    sl_error_hint(err, "It was dropped while this query could not start; drop and create "
                       "this query again to start from a new snapshot.");
    return -1;
}

/* The next chunk of the current part into r->chunk: 1, 0 at the end of
 * both parts, -1. */
static int next_chunk(ClReader *r, SlError *err)
{
    Source *src = r->base.src;
    uint32_t oid = src->rel->oid;
    for (;;) {
        int64_t lo = r->in_snap ? r->snap_lo : r->lo, hi = r->in_snap ? r->snap_hi : r->hi;
        if (lo < hi && r->scan == NULL) {
            uint8_t pre[6], start[14];
            cl_prefix(pre, oid, r->in_snap ? 'S' : 'D');
            memcpy(start, pre, 6);
            put_be64(start + 6, (uint64_t)lo);
            r->scan = state_scan_open_from(src->st, pre, sizeof(pre), start, sizeof(start));
            if (r->in_snap) {
                /* The snapshot must be there: a reader starts only at one. */
                uint8_t k[18];
                cl_key(k, oid, 'S', lo, 0);
                const void *f, *v;
                size_t flen, vlen;
                bool found = state_scan_seek(r->scan, k, sizeof(k), &f, &flen, &v, &vlen);
                if (state_scan_status(r->scan, err) < 0)
                    return -1;
                if (!found || flen != sizeof(k) || memcmp(f, k, sizeof(k)) != 0) {
                    /* An empty result table writes no chunk: a snapshot
                     * of nothing, when the marker says the changelog holds
                     * batch lo. */
                    int64_t from;
                    int m = read_marker(src->st, oid, &from, err);
                    if (m < 0)
                        return -1;
                    if (m == 0 || from > lo)
                        goto gone;
                    state_scan_close(r->scan, err);
                    r->scan = NULL;
                    r->in_snap = false;
                    continue;
                }
                strbuf_reset(&r->chunk);
                strbuf_append(&r->chunk, v, vlen);
                r->at = 0;
                return 1;
            }
        }
        const void *k, *v;
        size_t klen, vlen;
        if (r->scan != NULL && state_scan_next(r->scan, &k, &klen, &v, &vlen) && klen == 18 &&
            (int64_t)get_be64((const uint8_t *)k + 6) < hi) {
            strbuf_reset(&r->chunk);
            strbuf_append(&r->chunk, v, vlen);
            r->at = 0;
            return 1;
        }
        if (r->scan != NULL) {
            int rc = state_scan_close(r->scan, err);
            r->scan = NULL;
            if (rc < 0)
                return -1;
        }
        if (!r->in_snap)
            return 0;
        r->in_snap = false;
    }
gone:
    return gone(r, r->snap_lo, err);
}

/* A check before the first change is read: the changelog holds lo. */
static int check_kept(ClReader *r, SlError *err)
{
    if (r->checked || r->lo >= r->hi)
        return 0;
    r->checked = true;
    int64_t from;
    int m = read_marker(r->base.src->st, r->base.src->rel->oid, &from, err);
    if (m < 0)
        return -1;
    return m == 0 || from > r->lo ? gone(r, r->lo, err) : 0;
}

static int cl_reader_next(SourceReader *sr, Arena *a, Batch **out, SlError *err)
{
    ClReader *r = (ClReader *)sr;
    if (check_kept(r, err) < 0)
        return -1;
    if (r->at >= r->chunk.len) {
        int rc = next_chunk(r, err);
        if (rc <= 0)
            return rc;
    }
    uint32_t cap = RELSTORE_BATCH_ROWS;
    Batch *b = batch_alloc(a, r->types, (uint32_t)r->ncols + 1, cap);
    Batch view = *b;
    view.ncols = (uint32_t)r->ncols;
    uint32_t n = 0;
    while (n < cap && r->at + 5 <= r->chunk.len) {
        const uint8_t *p = (const uint8_t *)r->chunk.data + r->at;
        uint32_t len = get_be32(p + 1);
        if (r->at + 5 + len > r->chunk.len || row_decode(p + 5, len, &view, n, a) < 0)
            return sl_error(err, ERRCODE_DATA_CORRUPTED,
                            "the changelog of continuous query \"%s\" is corrupt",
                            sr->src->rel->name);
        b->cols[r->ncols].v.i64[n] = p[0] == 'D' || p[0] == 'O' ? -1 : 1;
        n++;
        r->at += 5 + len;
    }
    b->nrows = n;
    for (int c = 0; c <= r->ncols; c++)
        b->cols[c].len = n;
    *out = b;
    return (int)n;
}

static int cl_reader_close(SourceReader *sr, DeadLetters *dead, SlError *err)
{
    SL_UNUSED(dead);
    ClReader *r = (ClReader *)sr;
    int rc = 0;
    if (r->scan != NULL)
        rc = state_scan_close(r->scan, err);
    strbuf_free(&r->chunk);
    sl_free(r->types);
    sl_free(r);
    return rc;
}

const SourceOps source_changelog_ops = {
    .plan = cl_plan,
    .lag = cl_lag,
    .reader_open = cl_reader_open,
    .reader_next = cl_reader_next,
    .reader_close = cl_reader_close,
};
