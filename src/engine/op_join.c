/*
 * op_join.c -- the join operator (op_join.h): an incremental equi-join of
 * two inputs with both sides' rows kept by join key.
 *
 *   eng_op_join_new    the operator (inner, left, right, full; a residual
 *                      condition; an interval bound evicting by watermark)
 *   eng_op_join_plan   the same for a plan's JOIN node, its interval bound
 *                      found in the node's residual (what the rewriter calls)
 *
 * A delta on one side joins the other side's rows as they are now, then
 * becomes part of its own side: pushing the left delta and then the right
 * one gives ΔL⋈R + L'⋈ΔR, so a pair whose rows both arrive in one batch
 * joins once.  Weights multiply.  Rows are processed one at a time, so a
 * delta may hold a row and its retraction.
 *
 * Outer sides keep a degree per kept row (RisingWave's degree table): the
 * sum of the weights of the other side's rows it matches (equal key, the
 * interval and the residual true).  Without an interval bound a row of
 * degree 0 shows as its padded row (the other side's columns NULL): the
 * padded row is retracted when the degree leaves 0 and emitted again when
 * it comes back to 0.  With an interval bound the output is append-only
 * unless an input retracts: a row's padded row is emitted once, when the
 * watermark evicts the row with degree 0.  A row of an outer side that can
 * never match (a NULL key, or a NULL time under an interval) gets its
 * padded row at once and is not kept; on an inner side it is dropped.
 *
 * A stream-table (lookup) join keeps only the table side: the stream
 * side's deltas wait for flush and then join the table as the batch
 * leaves it, and a table change joins nothing; the stream side's
 * watermark is passed on after them.
 *
 * State (under the operator's prefix P, docs/engine-graph.md "Joins"):
 *
 *   P + 'L'|'R' + key length (4) + key + row
 *                                -> weight, degree, time (8 each, LE): one
 *                                   kept row of the side (key: ex_key_encode
 *                                   bytes, row: row_encode bytes); a key's
 *                                   rows are one prefix scan
 *   P + 'n'                      -> rows kept, their bytes, rows evicted
 *                                   ever (8 each, LE): the stats, read by
 *                                   restore
 *   P + 'l'|'r' + time (8) + key -> '': an interval join's time index
 *                                   (put_time_key order), what eviction
 *                                   scans
 *
 * A join key's rows are read on first touch (one scan) into a cache that
 * lives until restore (not bounded yet); checkpoint writes the rows the
 * batch changed.  Eviction runs at flush, once the batch's watermarks are
 * in: a left row whose time is below the right side's watermark + lo can
 * match no future right row, and a right row below the left watermark - hi
 * no future left row.  Finding a row's partners walks its key's rows (and
 * decodes those in the interval): a join with few keys and many rows per
 * key costs that many steps per row.
 */
#include "op_join.h"
#include "keymap.h"
#include "sluice/bytes.h"
#include "sluice/common.h"
#include "sluice/plan.h"
#include "sluice/rowcodec.h"

#include <string.h>

#define ENTRY_TAIL 24               /* weight, degree, time */

/* One distinct row of a side (equal row_encode bytes). */
typedef struct JoinRow {
    uint8_t *row;                   /* row_encode bytes, on the heap */
    uint32_t len;
    int64_t  weight;                /* never 0 while kept */
    int64_t  degree;                /* outer sides: the weight of its matches */
    int64_t  ts;                    /* its interval time (0 without an interval) */
    bool     dirty;                 /* changed since the last checkpoint */
} JoinRow;

/* The rows of one side with one join key. */
typedef struct JoinBucket {
    JoinRow *rows;                  /* on the heap */
    uint32_t n, cap;
    bool     dirty;                 /* has a dirty row */
} JoinBucket;

/* A time-index key this batch made or evicted: P + side + time + key. */
typedef struct JoinIdx {
    uint8_t *key;                   /* in the cache arena */
    uint32_t len;
} JoinIdx;

typedef struct JoinSide {
    int        ncols;
    SlType    *types;
    Expr *const *keys;              /* the join key, over the side's columns */
    bool       outer;               /* keeps degrees; padded rows */
    int        tcol;                /* interval time column, -1: none */
    int64_t    toff;                /* its offset on the input edge */
    bool       has_wm;
    int64_t    wm;                  /* the least time a later row may have */
    int64_t    evicted_below;       /* rows below this are gone */
    EngMap     map;                 /* key bytes -> JoinBucket* */
    JoinIdx   *idx_put;             /* this batch's new time-index keys */
    uint32_t   nput, capput;
    JoinIdx   *idx_del;             /* committed time-index keys to delete */
    uint32_t   ndel, capdel;
    JoinIdx   *row_del;             /* row keys to delete (rows gone) */
    uint32_t   nrdel, caprdel;
} JoinSide;

typedef struct JoinOp {
    EngJoinSpec spec;
    bool        has_interval;
    EngJoinInterval iv;
    JoinSide    side[2];
    int         ncols;              /* output: left then right */
    SlType     *out_types;
    Arena       cache;              /* buckets and keys; reset by restore */
    int         lookup;             /* spec.lookup */
    const EngDelta **pending;       /* the stream side's deltas of the batch */
    int         npending, cappending;
    bool        has_fwd;            /* the stream side's watermark, passed on */
    int64_t     fwd_wm;             /* at flush, after the rows it follows */
    int64_t     evicted;            /* rows evicted, ever */
    int64_t     nrows, nbytes;      /* rows kept and their keys' and values' bytes */
    bool        counts_dirty;       /* the three changed since the checkpoint */
    StrBuf      kbuf;               /* scratch: keys */
    StrBuf      rbuf;               /* scratch: rows */
} JoinOp;

static const char SIDE_ROWS[2] = {'L', 'R'};
static const char SIDE_IDX[2] = {'l', 'r'};

/* ------------------------------------------------------------- the cache */

static void bucket_free(JoinBucket *b)
{
    for (uint32_t i = 0; i < b->n; i++)
        sl_free(b->rows[i].row);
    sl_free(b->rows);
    b->rows = NULL;
    b->n = b->cap = 0;
}

static void cache_drop(JoinOp *j)
{
    for (int s = 0; s < 2; s++) {
        EngMap *m = &j->side[s].map;
        for (uint32_t i = 0; i < m->cap; i++)
            if (m->slots[i].key && m->slots[i].value)
                bucket_free(m->slots[i].value);
        eng_map_clear(m);
        /* the time-index lists live in the cache arena too */
        j->side[s].idx_put = j->side[s].idx_del = NULL;
        j->side[s].nput = j->side[s].capput = 0;
        j->side[s].ndel = j->side[s].capdel = 0;
        j->side[s].row_del = NULL;
        j->side[s].nrdel = j->side[s].caprdel = 0;
    }
    arena_reset(&j->cache);
}

static void idx_push(JoinIdx **arr, uint32_t *n, uint32_t *cap, Arena *a, const void *key,
                     size_t len);

/* The store key of a row: P + side + key length (4, BE) + key + row. */
static void row_store_key(const EngOp *op, int s, const uint8_t *key, size_t klen,
                          const uint8_t *row, size_t rlen, StrBuf *out)
{
    uint8_t h[ENG_PREFIX_LEN + 5];
    memcpy(h, op->prefix, ENG_PREFIX_LEN);
    h[ENG_PREFIX_LEN] = (uint8_t)SIDE_ROWS[s];
    put_be32(h + ENG_PREFIX_LEN + 1, (uint32_t)klen);
    strbuf_reset(out);
    strbuf_append(out, h, sizeof(h));
    strbuf_append(out, key, klen);
    strbuf_append(out, row, rlen);
}

static JoinRow *bucket_add(JoinBucket *b, const uint8_t *row, uint32_t len)
{
    if (b->n == b->cap) {
        b->cap = b->cap ? b->cap * 2 : 4;
        b->rows = sl_realloc(b->rows, sizeof(JoinRow) * b->cap);
    }
    JoinRow *r = &b->rows[b->n++];
    memset(r, 0, sizeof(*r));
    r->row = sl_malloc(len ? len : 1);
    memcpy(r->row, row, len);
    r->len = len;
    return r;
}

/* The bucket of key (klen bytes) on side s, read from the store on first
 * touch (a scan of its rows' keys); NULL with cx->err set on a read
 * error. */
static JoinBucket *bucket_get(EngOp *op, int s, const uint8_t *key, size_t klen, EngCtx *cx)
{
    JoinOp *j = op->self;
    bool isnew;
    void **slot = eng_map_upsert(&j->side[s].map, key, klen, &isnew);
    if (!isnew)
        return *slot;
    JoinBucket *b = ARENA_NEW(&j->cache, JoinBucket);
    *slot = b;
    row_store_key(op, s, key, klen, NULL, 0, &j->rbuf);
    size_t pl = j->rbuf.len;
    StateScan *sc = state_scan_open(cx->st, j->rbuf.data, pl);
    const void *k, *v;
    size_t kl, vl;
    bool bad = false;
    while (state_scan_next(sc, &k, &kl, &v, &vl)) {
        if (vl != ENTRY_TAIL) {
            bad = true;
            break;
        }
        JoinRow *r = bucket_add(b, (const uint8_t *)k + pl, (uint32_t)(kl - pl));
        r->weight = (int64_t)get_le64(v);
        r->degree = (int64_t)get_le64((const uint8_t *)v + 8);
        r->ts = (int64_t)get_le64((const uint8_t *)v + 16);
    }
    if (state_scan_close(sc, cx->err) < 0 ||
        (bad && sl_error(cx->err, ERRCODE_DATA_CORRUPTED, "a stored join row is corrupt") < 0)) {
        bucket_free(b);
        return NULL;
    }
    return b;
}

/* A kept row's bytes in the store (its key and value), for the stats. */
static int64_t row_bytes(size_t klen, uint32_t rlen)
{
    return (int64_t)(ENG_PREFIX_LEN + 5 + klen + rlen + ENTRY_TAIL);
}

/* Row x of bucket b (key, klen) is gone: its store key is deleted at
 * checkpoint; b's last row takes its place. */
static void row_remove(EngOp *op, int s, JoinBucket *b, JoinRow *x, const uint8_t *key,
                       size_t klen)
{
    JoinOp *j = op->self;
    JoinSide *sd = &j->side[s];
    j->nrows--;
    j->nbytes -= row_bytes(klen, x->len);
    j->counts_dirty = true;
    row_store_key(op, s, key, klen, x->row, x->len, &j->rbuf);
    idx_push(&sd->row_del, &sd->nrdel, &sd->caprdel, &j->cache, j->rbuf.data, j->rbuf.len);
    sl_free(x->row);
    *x = b->rows[--b->n];
}

static void idx_push(JoinIdx **arr, uint32_t *n, uint32_t *cap, Arena *a, const void *key,
                     size_t len)
{
    if (*n == *cap) {
        uint32_t nc = *cap ? *cap * 2 : 16;
        JoinIdx *na = ARENA_ARRAY(a, JoinIdx, nc);
        if (*n)
            memcpy(na, *arr, sizeof(JoinIdx) * *n);
        *arr = na;
        *cap = nc;
    }
    (*arr)[*n].key = arena_memdup(a, key, len);
    (*arr)[*n].len = (uint32_t)len;
    (*n)++;
}

/* ---------------------------------------------------------------- output */

/* A batch of the output's columns with room for cap rows, in the batch's
 * arena, every value NULL until set. */
static Batch *pair_batch(JoinOp *j, EngCtx *cx, uint32_t cap)
{
    Batch *b = batch_alloc(cx->arena, j->out_types, (uint32_t)j->ncols, cap);
    for (int c = 0; c < j->ncols; c++)
        memset(b->cols[c].nulls, 1, cap);
    return b;
}

/* The columns of side s within an output batch. */
static Batch side_view(JoinOp *j, Batch *pair, int s)
{
    Batch v = {pair->nrows, (uint32_t)j->side[s].ncols,
               pair->cols + (s == 0 ? 0 : j->side[0].ncols)};
    return v;
}

static void put_side_row(JoinOp *j, Batch *pair, uint32_t i, int s, const Batch *src, uint32_t r)
{
    Vector *dst = pair->cols + (s == 0 ? 0 : j->side[0].ncols);
    for (int c = 0; c < j->side[s].ncols; c++)
        ex_copy_value(&dst[c], i, &src->cols[c], r, NULL);
}

static int decode_side_row(JoinOp *j, Batch *pair, uint32_t i, int s, const JoinRow *r,
                           EngCtx *cx)
{
    Batch v = side_view(j, pair, s);
    if (row_decode(r->row, r->len, &v, i, cx->arena) < 0)
        return sl_error(cx->err, ERRCODE_DATA_CORRUPTED, "a stored join row is corrupt");
    return 0;
}

/* Appends the padded row of a kept row r of side s with weight w. */
static int emit_padded_kept(JoinOp *j, EngDelta *out, int s, const JoinRow *r, int64_t w,
                            EngCtx *cx)
{
    Batch *pair = pair_batch(j, cx, 1);
    pair->nrows = 1;
    if (decode_side_row(j, pair, 0, s, r, cx) < 0)
        return -1;
    eng_delta_append(out, cx->arena, pair, 0, w);
    return 0;
}

/* ------------------------------------------------------------------ push */

/* The join key of row r of b (kv: its key values, evaluated over b) into
 * out; false when the row can never match (a NULL key, a NULL time). */
static bool row_key(JoinOp *j, int s, const Batch *b, const Vector *kv, uint32_t r, StrBuf *out)
{
    JoinSide *sd = &j->side[s];
    for (int k = 0; k < j->spec.nkeys; k++)
        if (vector_is_null(&kv[k], r))
            return false;
    if (sd->tcol >= 0 && vector_is_null(&b->cols[sd->tcol], r))
        return false;
    strbuf_reset(out);
    ex_key_encode(kv, j->spec.nkeys, r, out);
    return true;
}

static JoinRow *bucket_find(JoinBucket *b, const uint8_t *row, uint32_t len)
{
    for (uint32_t i = 0; i < b->n; i++)
        if (b->rows[i].len == len && memcmp(b->rows[i].row, row, len) == 0)
            return &b->rows[i];
    return NULL;
}

/* Does a pair with left time lt and right time rt satisfy the interval? */
static bool in_interval(const JoinOp *j, int64_t lt, int64_t rt)
{
    __int128 d = (__int128)lt - rt;
    return d >= j->iv.lo_us && d <= j->iv.hi_us;
}

/* Row r of d (side s, weight w != 0): joins the other side's bucket ob,
 * appends the joined rows (and padded-row changes) to out, updates the
 * other side's degrees; *matched gets the weight of its matches. */
static int probe(EngOp *op, int s, const Batch *src, uint32_t r, int64_t w, int64_t ts,
                 JoinBucket *ob, EngDelta *out, int64_t *matched, EngCtx *cx)
{
    JoinOp *j = op->self;
    int o = 1 - s;
    *matched = 0;
    if (ob->n == 0)
        return 0;
    uint32_t *cand = ARENA_ARRAY(cx->arena, uint32_t, ob->n);
    uint32_t nc = 0;
    for (uint32_t i = 0; i < ob->n; i++) {
        if (j->has_interval) {
            int64_t lt = s == 0 ? ts : ob->rows[i].ts, rt = s == 0 ? ob->rows[i].ts : ts;
            if (!in_interval(j, lt, rt))
                continue;
        }
        cand[nc++] = i;
    }
    if (nc == 0)
        return 0;
    Batch *pair = pair_batch(j, cx, nc);
    pair->nrows = nc;
    for (uint32_t k = 0; k < nc; k++) {
        put_side_row(j, pair, k, s, src, r);
        if (decode_side_row(j, pair, k, o, &ob->rows[cand[k]], cx) < 0)
            return -1;
    }
    Vector ok = {0};
    if (j->spec.residual != NULL && ex_eval(cx->ecx, j->spec.residual, pair, nc, &ok) < 0)
        return -1;
    bool eager = !j->has_interval && j->side[o].outer;
    for (uint32_t k = 0; k < nc; k++) {
        if (j->spec.residual != NULL && (vector_is_null(&ok, k) || !ok.v.b[k]))
            continue;
        JoinRow *y = &ob->rows[cand[k]];
        eng_delta_append(out, cx->arena, pair, k, w * y->weight);
        *matched += y->weight;
        if (!j->side[o].outer)
            continue;
        int64_t before = y->degree;
        y->degree += w;
        y->dirty = ob->dirty = true;
        if (eager && before == 0 && y->degree != 0 &&
            emit_padded_kept(j, out, o, y, -y->weight, cx) < 0)
            return -1;
        if (eager && before != 0 && y->degree == 0 &&
            emit_padded_kept(j, out, o, y, y->weight, cx) < 0)
            return -1;
    }
    return 0;
}

/* Adds row r of src (side s) with weight w to its bucket b, which the
 * other side's probe found matched by the weight `matched`; a new distinct
 * row under an interval gets a time-index key. */
static void keep(EngOp *op, int s, JoinBucket *b, const uint8_t *key, size_t klen, int64_t ts,
                 int64_t w, int64_t matched)
{
    JoinOp *j = op->self;
    JoinSide *sd = &j->side[s];
    JoinRow *x = bucket_find(b, (const uint8_t *)j->rbuf.data, (uint32_t)j->rbuf.len);
    if (x == NULL) {
        x = bucket_add(b, (const uint8_t *)j->rbuf.data, (uint32_t)j->rbuf.len);
        x->degree = matched;
        x->ts = ts;
        j->nrows++;
        j->nbytes += row_bytes(klen, x->len);
        j->counts_dirty = true;
        if (j->has_interval) {
            uint8_t head[ENG_PREFIX_LEN + 1 + 8];
            memcpy(head, op->prefix, ENG_PREFIX_LEN);
            head[ENG_PREFIX_LEN] = (uint8_t)SIDE_IDX[s];
            put_time_key(head + ENG_PREFIX_LEN + 1, ts);
            StrBuf ik;
            strbuf_init(&ik);
            strbuf_append(&ik, head, sizeof(head));
            strbuf_append(&ik, key, klen);
            idx_push(&sd->idx_put, &sd->nput, &sd->capput, &j->cache, ik.data, ik.len);
            strbuf_free(&ik);
        }
    }
    x->weight += w;
    x->dirty = b->dirty = true;
    if (x->weight == 0)
        row_remove(op, s, b, x, key, klen);
}

/* The rows of d on side s: each probes the other side (not the table
 * side of a lookup join) and is kept (not the stream side of one). */
static int join_rows(EngOp *op, int s, const EngDelta *d, EngCtx *cx)
{
    JoinOp *j = op->self;
    JoinSide *sd = &j->side[s];
    bool probes = j->lookup != s, keeps = j->lookup < 0 || j->lookup == s;
    EngDelta out;
    eng_delta_init(&out, cx->arena, op->out_cols, op->out_ncols, d->rows.nrows);
    Batch *pad = NULL;
    Vector *kv = ARENA_ARRAY(cx->arena, Vector, j->spec.nkeys + 1);
    for (int k = 0; k < j->spec.nkeys; k++)
        if (ex_eval(cx->ecx, sd->keys[k], &d->rows, d->rows.nrows, &kv[k]) < 0)
            return -1;
    for (uint32_t r = 0; r < d->rows.nrows; r++) {
        int64_t w = d->weights[r];
        if (w == 0)
            continue;
        if (!row_key(j, s, &d->rows, kv, r, &j->kbuf)) {
            /* can never match: its padded row now, nothing kept */
            if (!sd->outer)
                continue;
            if (pad == NULL)
                pad = pair_batch(j, cx, 1);
            pad->nrows = 1;
            put_side_row(j, pad, 0, s, &d->rows, r);
            eng_delta_append(&out, cx->arena, pad, 0, w);
            continue;
        }
        int64_t ts = sd->tcol >= 0 ? d->rows.cols[sd->tcol].v.i64[r] : 0;
        /* the key's bytes stay in kbuf: the other side's bucket, then ours */
        int64_t matched = 0;
        if (probes) {
            JoinBucket *ob = bucket_get(op, 1 - s, (const uint8_t *)j->kbuf.data, j->kbuf.len,
                                        cx);
            if (ob == NULL || probe(op, s, &d->rows, r, w, ts, ob, &out, &matched, cx) < 0)
                return -1;
        }
        if (sd->outer && !j->has_interval && matched == 0) {
            if (pad == NULL)
                pad = pair_batch(j, cx, 1);
            pad->nrows = 1;
            put_side_row(j, pad, 0, s, &d->rows, r);
            eng_delta_append(&out, cx->arena, pad, 0, w);
        }
        if (!keeps)
            continue;
        JoinBucket *b = bucket_get(op, s, (const uint8_t *)j->kbuf.data, j->kbuf.len, cx);
        if (b == NULL)
            return -1;
        strbuf_reset(&j->rbuf);
        row_encode(&d->rows, r, &j->rbuf);
        /* under an interval a row no longer kept was evicted (or never
         * came): its pairs with rows evicted too cannot be retracted */
        const JoinRow *had = w < 0 && j->has_interval
            ? bucket_find(b, (const uint8_t *)j->rbuf.data, (uint32_t)j->rbuf.len) : NULL;
        if (w < 0 && j->has_interval && (had == NULL || had->weight + w < 0)) {
            sl_error(cx->err, ERRCODE_FEATURE_NOT_SUPPORTED,
                     "an interval join cannot retract a row it does not keep");
            sl_error_detail(cx->err, "The watermark has evicted it, or it never came.");
            sl_error_hint(cx->err, "Retractions on an interval join's input must come "
                          "before the other side's watermark passes the row.");
            return -1;
        }
        keep(op, s, b, (const uint8_t *)j->kbuf.data, j->kbuf.len, ts, w, matched);
    }
    return eng_emit(op, &out, cx);
}

static int join_push(EngOp *op, int input, const EngDelta *d, EngCtx *cx)
{
    JoinOp *j = op->self;
    if (j->lookup < 0 || input == j->lookup)
        return join_rows(op, input, d, cx);
    /* a lookup join's stream side: joined at flush, against the table as
     * the batch leaves it */
    for (uint32_t r = 0; r < d->rows.nrows; r++)
        if (d->weights[r] < 0) {
            sl_error(cx->err, ERRCODE_FEATURE_NOT_SUPPORTED,
                     "a stream-table join cannot retract a row of its stream side");
            sl_error_hint(cx->err, "Its rows joined the table as it was when they came; "
                          "join the table's changes both ways with a regular join.");
            return -1;
        }
    if (j->npending == j->cappending) {
        int cap = j->cappending ? j->cappending * 2 : 8;
        const EngDelta **na = ARENA_ARRAY(cx->arena, const EngDelta *, cap);
        if (j->npending)
            memcpy(na, j->pending, sizeof(*na) * (size_t)j->npending);
        j->pending = na;
        j->cappending = cap;
    }
    j->pending[j->npending++] = d;
    return 0;
}

/* ------------------------------------------------------------- watermarks */

static int join_watermark(EngOp *op, int input, int64_t wm_us, EngCtx *cx)
{
    SL_UNUSED(cx);
    JoinOp *j = op->self;
    JoinSide *sd = &j->side[input];
    if (j->lookup >= 0 && input != j->lookup) {
        if (!j->has_fwd || wm_us > j->fwd_wm)
            j->fwd_wm = wm_us;
        j->has_fwd = true;
        return 0;
    }
    if (sd->tcol < 0)
        return 0;
    int64_t v = eng_time_add(wm_us, sd->toff);   /* saturating: the end of a bounded source */
    if (!sd->has_wm || v > sd->wm) {
        sd->wm = v;
        sd->has_wm = true;
    }
    return 0;
}

/* Evicts the rows of side s whose time is below t: their time-index keys
 * (committed ones by a scan, this batch's from idx_put) name the buckets;
 * an outer side's rows of degree 0 get their padded rows in out. */
static int evict_side(EngOp *op, int s, int64_t t, EngDelta *out, EngCtx *cx)
{
    JoinOp *j = op->self;
    JoinSide *sd = &j->side[s];
    size_t hl = ENG_PREFIX_LEN + 1;
    uint8_t head[ENG_PREFIX_LEN + 1];
    memcpy(head, op->prefix, ENG_PREFIX_LEN);
    head[ENG_PREFIX_LEN] = (uint8_t)SIDE_IDX[s];
    /* the keys to visit, in the batch's arena */
    JoinIdx *visit = NULL;
    uint32_t nvisit = 0, capvisit = 0;
    StateScan *sc = state_scan_open(cx->st, head, hl);
    const void *k, *v;
    size_t kl, vl;
    while (state_scan_next(sc, &k, &kl, &v, &vl)) {
        if (kl < hl + 8)
            continue;
        if (get_time_key((const uint8_t *)k + hl) >= t)
            break;
        idx_push(&sd->idx_del, &sd->ndel, &sd->capdel, &j->cache, k, kl);
        idx_push(&visit, &nvisit, &capvisit, cx->arena, k, kl);
    }
    if (state_scan_close(sc, cx->err) < 0)
        return -1;
    uint32_t keep_n = 0;
    for (uint32_t i = 0; i < sd->nput; i++) {
        JoinIdx *e = &sd->idx_put[i];
        if (get_time_key(e->key + hl) < t)
            idx_push(&visit, &nvisit, &capvisit, cx->arena, e->key, e->len);
        else
            sd->idx_put[keep_n++] = *e;
    }
    sd->nput = keep_n;
    for (uint32_t i = 0; i < nvisit; i++) {
        JoinBucket *b = bucket_get(op, s, visit[i].key + hl + 8, visit[i].len - hl - 8, cx);
        if (b == NULL)
            return -1;
        for (uint32_t r = 0; r < b->n;) {
            JoinRow *x = &b->rows[r];
            if (x->ts >= t) {
                r++;
                continue;
            }
            if (sd->outer && x->degree == 0 && emit_padded_kept(j, out, s, x, x->weight, cx) < 0)
                return -1;
            j->evicted++;
            j->counts_dirty = true;
            row_remove(op, s, b, x, visit[i].key + hl + 8, visit[i].len - hl - 8);
        }
    }
    return 0;
}

/* Did this batch keep a new row of side s below t (one that arrived
 * already closed)? */
static bool pending_below(const JoinOp *j, int s, int64_t t)
{
    const JoinSide *sd = &j->side[s];
    for (uint32_t i = 0; i < sd->nput; i++)
        if (get_time_key(sd->idx_put[i].key + ENG_PREFIX_LEN + 1) < t)
            return true;
    return false;
}

static int join_flush(EngOp *op, EngCtx *cx)
{
    JoinOp *j = op->self;
    if (j->lookup >= 0) {
        int n = j->npending;
        j->npending = j->cappending = 0;     /* the list is the batch's */
        for (int i = 0; i < n; i++)
            if (join_rows(op, 1 - j->lookup, j->pending[i], cx) < 0)
                return -1;
        /* every output row comes from a stream row: its watermark holds */
        return j->has_fwd ? eng_emit_watermark(op, j->fwd_wm, cx) : 0;
    }
    if (!j->has_interval)
        return 0;
    JoinSide *l = &j->side[0], *r = &j->side[1];
    EngDelta out;
    eng_delta_init(&out, cx->arena, op->out_cols, op->out_ncols, 16);
    /* left rows below r.wm + lo, right rows below l.wm - hi */
    for (int s = 0; s < 2; s++) {
        JoinSide *sd = &j->side[s], *other = &j->side[1 - s];
        if (!other->has_wm)
            continue;
        int64_t t = s == 0 ? eng_time_add(other->wm, j->iv.lo_us) : eng_time_add(other->wm, -j->iv.hi_us);
        if (t > sd->evicted_below || pending_below(j, s, t)) {
            if (evict_side(op, s, t, &out, cx) < 0)
                return -1;
            sd->evicted_below = SL_MAX(sd->evicted_below, t);
        }
    }
    if (eng_emit(op, &out, cx) < 0)
        return -1;
    if (!l->has_wm || !r->has_wm)
        return 0;
    /* A later output row has l.ts >= min(l.wm, r.wm + lo) and r.ts >=
     * min(r.wm, l.wm - hi) (or NULL there, a padded row). */
    int64_t wl = SL_MIN(l->wm, eng_time_add(r->wm, j->iv.lo_us));
    int64_t wr = SL_MIN(r->wm, eng_time_add(l->wm, -j->iv.hi_us));
    return eng_emit_watermark(op, SL_MIN(wl, wr), cx);
}

/* ------------------------------------------------------ checkpoint, restore */

/* The counts (P + 'n': rows, bytes, evicted) go through eng_stats_put. */
static int join_checkpoint(EngOp *op, EngCtx *cx)
{
    JoinOp *j = op->self;
    StrBuf key;
    strbuf_init(&key);
    for (int s = 0; s < 2; s++) {
        JoinSide *sd = &j->side[s];
        /* deletions first: a row gone and back in one batch is put */
        for (uint32_t i = 0; i < sd->nrdel; i++)
            state_batch_delete(cx->wb, sd->row_del[i].key, sd->row_del[i].len);
        EngMap *m = &sd->map;
        for (uint32_t i = 0; i < m->cap; i++) {
            JoinBucket *b = m->slots[i].key ? m->slots[i].value : NULL;
            if (b == NULL || !b->dirty)
                continue;
            for (uint32_t r = 0; r < b->n; r++) {
                JoinRow *x = &b->rows[r];
                if (!x->dirty)
                    continue;
                uint8_t t[ENTRY_TAIL];
                put_le64(t, (uint64_t)x->weight);
                put_le64(t + 8, (uint64_t)x->degree);
                put_le64(t + 16, (uint64_t)x->ts);
                row_store_key(op, s, m->slots[i].key, m->slots[i].klen, x->row, x->len, &key);
                state_batch_put(cx->wb, key.data, key.len, t, ENTRY_TAIL);
                x->dirty = false;
            }
            b->dirty = false;
        }
        for (uint32_t i = 0; i < sd->nput; i++)
            state_batch_put(cx->wb, sd->idx_put[i].key, sd->idx_put[i].len, "", 0);
        for (uint32_t i = 0; i < sd->ndel; i++)
            state_batch_delete(cx->wb, sd->idx_del[i].key, sd->idx_del[i].len);
        sd->nput = sd->ndel = sd->nrdel = 0;
    }
    strbuf_free(&key);
    if (j->counts_dirty) {
        EngOpStats st = {j->nrows, j->nbytes, j->evicted};
        eng_stats_put(op, cx, &st);
        j->counts_dirty = false;
    }
    return 0;
}

static int join_restore(EngOp *op, EngCtx *cx)
{
    JoinOp *j = op->self;
    cache_drop(j);
    EngOpStats st;
    if (eng_stats_get(op, cx, "join", &st) < 0)
        return -1;
    j->nrows = st.rows;
    j->nbytes = st.bytes;
    j->evicted = st.evicted;
    j->counts_dirty = false;
    j->npending = j->cappending = 0;
    j->has_fwd = false;
    for (int s = 0; s < 2; s++) {
        /* the scheduler forgets watermarks too: the sources send them again */
        j->side[s].has_wm = false;
        j->side[s].evicted_below = INT64_MIN;
    }
    return 0;
}

/* ------------------------------------------------------ stats, explain, free */

static void join_stats(const EngOp *op, EngOpStats *out)
{
    const JoinOp *j = op->self;
    out->rows = j->nrows;
    out->bytes = j->nbytes;
    out->evicted = j->evicted;
}

static void join_explain(const EngOp *op, StrBuf *out)
{
    static const char *const names[] = {"inner", "left", "right", "full"};
    const JoinOp *j = op->self;
    strbuf_printf(out, "join (%s) on %d key%s", names[j->spec.type], j->spec.nkeys,
                  j->spec.nkeys == 1 ? "" : "s");
    if (j->spec.residual)
        strbuf_puts(out, " and a residual condition");
    if (j->lookup >= 0)
        strbuf_printf(out, ", a lookup of the %s side's table: unbounded",
                      j->lookup == 0 ? "left" : "right");
    else if (j->has_interval)
        strbuf_printf(out, ", interval %lld..%lld us: evicts by watermark",
                      (long long)j->iv.lo_us, (long long)j->iv.hi_us);
    else
        strbuf_puts(out, ": unbounded");
}

static void join_free(EngOp *op)
{
    JoinOp *j = op->self;
    if (j == NULL)
        return;
    cache_drop(j);
    for (int s = 0; s < 2; s++)
        eng_map_free(&j->side[s].map);
    arena_destroy(&j->cache);
    strbuf_free(&j->kbuf);
    strbuf_free(&j->rbuf);
}

static const EngOpVt join_vt = {
    .kind = "join",
    .push = join_push,
    .watermark = join_watermark,
    .flush = join_flush,
    .checkpoint = join_checkpoint,
    .restore = join_restore,
    .stats = join_stats,
    .explain = join_explain,
    .free = join_free,
};

/* ------------------------------------------------------------ constructor */

static bool time_type(SlTypeId t)
{
    return t == TYPE_TIMESTAMP || t == TYPE_TIMESTAMPTZ;
}

/* The offset of column col among an edge's event-time columns; false if
 * it is not one. */
static bool edge_offset(const EngEdgeTime *et, int col, int64_t *off)
{
    for (int i = 0; et != NULL && i < et->n; i++)
        if (et->cols[i].col == col) {
            *off = et->cols[i].offset_us;
            return true;
        }
    return false;
}

static int check_spec(const EngJoinSpec *spec, const ColumnDesc *lcols, int nl,
                      const EngEdgeTime *ltime, const ColumnDesc *rcols, int nr,
                      const EngEdgeTime *rtime, SlError *err)
{
    for (int k = 0; k < spec->nkeys; k++) {
        SlTypeId a = spec->lkeys[k]->type.id, b = spec->rkeys[k]->type.id;
        if (a != b)
            return sl_error(err, ERRCODE_DATATYPE_MISMATCH, "join key %d compares %s with %s",
                            k + 1, type_name(a), type_name(b));
    }
    if (spec->lookup >= 0) {
        int t = spec->lookup;
        if (spec->lookup > 1 || spec->interval != NULL || spec->type == ENG_JOIN_FULL ||
            spec->type == (t == 0 ? ENG_JOIN_LEFT : ENG_JOIN_RIGHT))
            return sl_error(err, ERRCODE_FEATURE_NOT_SUPPORTED,
                            "a stream-table join cannot keep the table's unmatched rows");
    }
    const EngJoinInterval *iv = spec->interval;
    if (iv == NULL)
        return 0;
    int64_t off;
    if (iv->lcol < 0 || iv->lcol >= nl || iv->rcol < 0 || iv->rcol >= nr ||
        !time_type(lcols[iv->lcol].type.id) || !time_type(rcols[iv->rcol].type.id))
        return sl_error(err, ERRCODE_FEATURE_NOT_SUPPORTED,
                        "an interval join needs a timestamp column on each side");
    if (!edge_offset(ltime, iv->lcol, &off) || !edge_offset(rtime, iv->rcol, &off))
        return sl_error(err, ERRCODE_FEATURE_NOT_SUPPORTED,
                        "an interval join needs a watermark on both sides' time columns");
    if (iv->lo_us > iv->hi_us)
        return sl_error(err, ERRCODE_FEATURE_NOT_SUPPORTED,
                        "an interval join's lower bound is above its upper bound");
    return 0;
}

EngOp *eng_op_join_new(const EngJoinSpec *spec,
                       const ColumnDesc *lcols, int nl, const EngEdgeTime *ltime,
                       const ColumnDesc *rcols, int nr, const EngEdgeTime *rtime,
                       SlError *err)
{
    if (check_spec(spec, lcols, nl, ltime, rcols, nr, rtime, err) < 0)
        return NULL;
    EngOp *op = eng_op_new(&join_vt, 2, sizeof(JoinOp));
    JoinOp *j = op->self;
    Arena *a = &op->arena;
    j->spec = *spec;
    j->lookup = spec->lookup;
    j->ncols = nl + nr;
    arena_init(&j->cache, 16384);
    strbuf_init(&j->kbuf);
    strbuf_init(&j->rbuf);
    ColumnDesc *out = ARENA_ARRAY(a, ColumnDesc, j->ncols > 0 ? j->ncols : 1);
    j->out_types = ARENA_ARRAY(a, SlType, j->ncols > 0 ? j->ncols : 1);
    for (int c = 0; c < nl; c++)
        out[c] = lcols[c];
    for (int c = 0; c < nr; c++)
        out[nl + c] = rcols[c];
    for (int c = 0; c < j->ncols; c++)
        j->out_types[c] = out[c].type;
    const ColumnDesc *cols[2] = {lcols, rcols};
    const int ncols[2] = {nl, nr};
    const EngEdgeTime *times[2] = {ltime, rtime};
    Expr *const *keys[2] = {spec->lkeys, spec->rkeys};
    for (int s = 0; s < 2; s++) {
        JoinSide *sd = &j->side[s];
        sd->ncols = ncols[s];
        sd->types = j->out_types + (s == 0 ? 0 : nl);
        sd->keys = keys[s];
        sd->outer = spec->type == ENG_JOIN_FULL ||
                    spec->type == (s == 0 ? ENG_JOIN_LEFT : ENG_JOIN_RIGHT);
        sd->tcol = -1;
        sd->evicted_below = INT64_MIN;
        eng_map_init(&sd->map, &j->cache);
        op->in_cols[s] = cols[s];
        op->in_ncols[s] = ncols[s];
        if (times[s] != NULL)
            op->in_time[s] = *times[s];
    }
    op->out_cols = out;
    op->out_ncols = j->ncols;
    if (spec->interval != NULL) {
        j->has_interval = true;
        j->iv = *spec->interval;
        j->spec.interval = &j->iv;
        j->side[0].tcol = j->iv.lcol;
        j->side[1].tcol = j->iv.rcol;
        edge_offset(ltime, j->iv.lcol, &j->side[0].toff);
        edge_offset(rtime, j->iv.rcol, &j->side[1].toff);
        /* the output's watermark bounds the two time columns */
        op->out_time.n = 2;
        op->out_time.cols[0].col = j->iv.lcol;
        op->out_time.cols[1].col = nl + j->iv.rcol;
        op->bound = ENG_BOUND_WATERMARK;
    } else {
        op->bound = ENG_BOUND_UNBOUNDED;
    }
    if (spec->lookup >= 0 && times[1 - spec->lookup] != NULL) {
        /* the stream side's event-time columns, where the output has them */
        op->out_time = *times[1 - spec->lookup];
        for (int i = 0; spec->lookup == 0 && i < op->out_time.n; i++)
            op->out_time.cols[i].col += nl;
    }
    return op;
}

/* ------------------------------------------------------- from a plan node */

/* e as a column plus a constant: true with *col and *off (microseconds).
 * A constant is an interval without months (a month has no fixed length);
 * *days tells whether one had days, 24 hours only without a time zone. */
static bool time_term(const Expr *e, int *col, int64_t *off, bool *days)
{
    if (e->kind == EXPR_COLUMN) {
        *col = e->index;
        *off = 0;
        *days = false;
        return true;
    }
    if (e->kind != EXPR_FUNC || e->fn == NULL || !e->fn->is_op || e->nargs != 2)
        return false;
    bool plus = strcmp(e->fn->name, "+") == 0;
    if (!plus && strcmp(e->fn->name, "-") != 0)
        return false;
    const Expr *t = e->args[0], *c = e->args[1];
    if (plus && t->kind == EXPR_CONST) {
        t = e->args[1];
        c = e->args[0];
    }
    if (c->kind != EXPR_CONST || c->type.id != TYPE_INTERVAL || vector_is_null(&c->value, 0))
        return false;
    const SlInterval *iv = &c->value.v.iv[0];
    int64_t day_us, us;
    if (iv->months != 0 ||
        __builtin_mul_overflow((int64_t)iv->days, INT64_C(86400000000), &day_us) ||
        __builtin_add_overflow(iv->usec, day_us, &us) || us == INT64_MIN ||
        !time_term(t, col, off, days))
        return false;
    *days = *days || iv->days != 0;
    *off = eng_time_add(*off, plus ? us : -us);
    return true;
}

/* Folds the conjuncts of e that compare a left time column with a right
 * one (the first such pair found) into lo <= l.ts - r.ts <= hi. */
static void bound_from(const Expr *e, const Plan *p, EngJoinInterval *iv)
{
    if (e->kind == EXPR_AND) {
        for (int i = 0; i < e->nargs; i++)
            bound_from(e->args[i], p, iv);
        return;
    }
    if (e->kind != EXPR_FUNC || e->fn == NULL || !e->fn->is_op || e->nargs != 2)
        return;
    const char *op = e->fn->name;
    bool eq = strcmp(op, "=") == 0;
    bool ge = eq || strcmp(op, ">=") == 0 || strcmp(op, ">") == 0;
    bool le = eq || strcmp(op, "<=") == 0 || strcmp(op, "<") == 0;
    int ca, cb, nl = p->child->ncols;
    int64_t oa, ob;
    bool da, db;
    if ((!ge && !le) || !time_term(e->args[0], &ca, &oa, &da) ||
        !time_term(e->args[1], &cb, &ob, &db))
        return;
    /* as "left term OP right term" */
    if (ca >= nl && cb < nl) {
        int ct = ca; ca = cb; cb = ct;
        int64_t ot = oa; oa = ob; ob = ot;
        bool g = ge; ge = le; le = g;
        bool dt = da; da = db; db = dt;
    } else if (!(ca < nl && cb >= nl)) {
        return;
    }
    cb -= nl;
    SlTypeId lt = p->child->cols[ca].type.id, rt = p->right->cols[cb].type.id;
    if (lt != rt || !time_type(lt) || ((da || db) && lt != TYPE_TIMESTAMP))
        return;
    if (iv->lcol < 0) {
        iv->lcol = ca;
        iv->rcol = cb;
    } else if (iv->lcol != ca || iv->rcol != cb) {
        return;     /* another pair of columns: the residual checks it */
    }
    /* l + oa OP r + ob  <=>  l - r OP ob - oa (strict ones kept loose: the
     * residual, which keeps every conjunct, decides) */
    int64_t d = eng_time_add(ob, oa == INT64_MIN ? INT64_MAX : -oa);
    if (ge && d > iv->lo_us)
        iv->lo_us = d;
    if (le && d < iv->hi_us)
        iv->hi_us = d;
}

EngOp *eng_op_join_plan(const Plan *p, const EngEdgeTime *ltime, const EngEdgeTime *rtime,
                        int lookup, SlError *err)
{
    static const EngJoinType types[] = {
        [JOIN_INNER] = ENG_JOIN_INNER, [JOIN_LEFT] = ENG_JOIN_LEFT,
        [JOIN_RIGHT] = ENG_JOIN_RIGHT, [JOIN_FULL] = ENG_JOIN_FULL,
        [JOIN_CROSS] = ENG_JOIN_INNER,
    };
    EngJoinSpec spec = {
        .type = types[p->u.join.type],
        .nkeys = p->u.join.nkeys,
        .lkeys = p->u.join.lkeys,
        .rkeys = p->u.join.rkeys,
        .residual = p->u.join.residual,
        .lookup = lookup,
    };
    EngJoinInterval iv = {-1, -1, INT64_MIN, INT64_MAX};
    int64_t off;
    if (p->u.join.residual != NULL)
        bound_from(p->u.join.residual, p, &iv);
    /* an equi-key of two time columns: l.ts - r.ts = 0 */
    for (int k = 0; iv.lcol < 0 && k < spec.nkeys; k++) {
        const Expr *a = spec.lkeys[k], *b = spec.rkeys[k];
        if (a->kind == EXPR_COLUMN && b->kind == EXPR_COLUMN && time_type(a->type.id) &&
            edge_offset(ltime, a->index, &off) && edge_offset(rtime, b->index, &off))
            iv = (EngJoinInterval){a->index, b->index, 0, 0};
    }
    if (lookup < 0 && iv.lcol >= 0 && iv.lo_us != INT64_MIN && iv.hi_us != INT64_MAX &&
        edge_offset(ltime, iv.lcol, &off) && edge_offset(rtime, iv.rcol, &off))
        spec.interval = &iv;
    return eng_op_join_new(&spec, p->child->cols, p->child->ncols, ltime, p->right->cols,
                           p->right->ncols, rtime, err);
}
