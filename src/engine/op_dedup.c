/*
 * op_dedup.c -- dedup within the watermark (op_dedup.h: eng_op_dedup_new;
 * docs/engine-graph.md, "Dedup within the watermark"): Spark's
 * dropDuplicatesWithinWatermark over an append-only input.
 *
 * A row whose key (ex_key_encode of the key columns: SQL's "=", NULLs
 * equal) is not kept is emitted once (weight 1, whatever its weight) and
 * its key kept with the row's event time t (the time column's value;
 * NULL: none); a row whose key is kept is dropped.  At flush, once the
 * batch's rows are in, a key is evicted when the input's watermark wm
 * promises that no later row is at t or earlier: t < wm + offset (the
 * time column's offset on the edge).  A later row of an evicted key is
 * emitted again.  A key without a time (no time column, or a NULL time) is
 * never evicted.  A retraction (weight < 0) fails the batch (0A000): the
 * input must be append-only, since what was dropped cannot be undone.
 *
 * State (under the operator's prefix P):
 *
 *   P + 'k' + key            -> a byte (1: has a time) and the time (8,
 *                               LE): one kept key
 *   P + 't' + time (8, put_time_key) + key
 *                            -> '': the time index eviction scans (keys
 *                               with a time only)
 *   P + 'n'                  -> keys kept, their bytes, keys evicted ever
 *                               (8 each, LE): the stats, read by restore
 *
 * A key is read on first touch (state_get) into a cache that lives until
 * restore drops it, or checkpoint when the evicted keys in it are more than
 * twice the kept ones (and over 1024); checkpoint writes the keys the batch
 * added or evicted.
 * The input's watermark is passed on at flush, after the rows it follows.
 */
#include "op_dedup.h"
#include "keymap.h"
#include "sluice/bytes.h"
#include "sluice/common.h"

#include <string.h>

/* One key seen. */
typedef struct DedupKey {
    const uint8_t *key;             /* the map's copy */
    uint32_t klen;
    int64_t  t;                     /* its first row's event time */
    bool     has_t;
    bool     present;               /* kept (as of this batch) */
    bool     stored;                /* in the store as of the last checkpoint */
    bool     touched;               /* in the batch's list */
} DedupKey;

typedef struct DedupOp {
    int       *keys;                /* the key columns */
    int        nkeys;
    int        time_col;            /* -1: none */
    int64_t    offset;              /* the time column's offset on the edge */
    Arena      cache;               /* entries and keys; reset by restore */
    EngMap     map;                 /* key -> DedupKey* */
    DedupKey **touched;             /* the batch's, in the cache arena */
    uint32_t   ntouched, captouched;
    bool       has_wm;
    int64_t    wm;
    int64_t    evicted_below;       /* keys with t below this are gone */
    EngStats   stats;               /* keys kept, their bytes, evicted ever */
    StrBuf     kbuf;                /* scratch: keys */
    StrBuf     sbuf;                /* scratch: store keys */
} DedupOp;

/* P + 't' + time + key into out. */
static void index_key(const EngOp *op, const DedupKey *x, StrBuf *out)
{
    uint8_t tk[8];
    put_time_key(tk, x->t);
    eng_state_key(op, 't', tk, 8, out);
    strbuf_append(out, x->key, x->klen);
}

static int64_t entry_bytes(const DedupKey *x)
{
    int64_t n = ENG_PREFIX_LEN + 1 + x->klen + 9;
    return x->has_t ? n + ENG_PREFIX_LEN + 1 + 8 + x->klen : n;
}

static void cache_drop(DedupOp *s)
{
    eng_map_clear(&s->map);
    s->touched = NULL;
    s->ntouched = s->captouched = 0;
    arena_reset(&s->cache);
}

static void touch(DedupOp *s, DedupKey *x)
{
    if (x->touched)
        return;
    if (s->ntouched == s->captouched) {
        uint32_t cap = s->captouched ? s->captouched * 2 : 64;
        DedupKey **na = ARENA_ARRAY(&s->cache, DedupKey *, cap);
        if (s->ntouched)
            memcpy(na, s->touched, sizeof(*na) * s->ntouched);
        s->touched = na;
        s->captouched = cap;
    }
    s->touched[s->ntouched++] = x;
    x->touched = true;
}

/* The entry of key (key, klen), read from the store on first touch; NULL
 * with cx->err set on a read error. */
static DedupKey *entry_get(EngOp *op, const void *key, size_t klen, EngCtx *cx)
{
    DedupOp *s = op->self;
    bool isnew;
    void **slot = eng_map_upsert(&s->map, key, klen, &isnew);
    if (!isnew)
        return *slot;
    DedupKey *x = ARENA_NEW(&s->cache, DedupKey);
    EngMapSlot *ms = (EngMapSlot *)((char *)slot - offsetof(EngMapSlot, value));
    x->key = ms->key;
    x->klen = ms->klen;
    *slot = x;
    eng_state_key(op, 'k', key, klen, &s->sbuf);
    void *v;
    size_t vl;
    int rc = state_get(cx->st, s->sbuf.data, s->sbuf.len, cx->arena, &v, &vl, cx->err);
    if (rc < 0)
        return NULL;
    if (rc == 1) {
        if (vl != 9) {
            sl_error(cx->err, ERRCODE_DATA_CORRUPTED, "a stored dedup key is corrupt");
            return NULL;
        }
        x->has_t = ((const uint8_t *)v)[0] != 0;
        x->t = (int64_t)get_le64((const uint8_t *)v + 1);
        x->present = x->stored = true;
    }
    return x;
}

/* ------------------------------------------------------------------ push */

static int dedup_push(EngOp *op, int input, const EngDelta *d, EngCtx *cx)
{
    SL_UNUSED(input);
    DedupOp *s = op->self;
    Vector kcols[s->nkeys];
    for (int i = 0; i < s->nkeys; i++)
        kcols[i] = d->rows.cols[s->keys[i]];
    EngDelta out;
    eng_delta_init(&out, cx->arena, op->out_cols, op->out_ncols, 16);
    for (uint32_t r = 0; r < d->rows.nrows; r++) {
        int64_t w = d->weights[r];
        if (w == 0)
            continue;
        if (w < 0) {
            sl_error(cx->err, ERRCODE_FEATURE_NOT_SUPPORTED,
                     "dedup within the watermark cannot take a retraction");
            sl_error_detail(cx->err, "Its input must be append-only: a row it dropped as "
                            "a duplicate cannot be taken back.");
            return -1;
        }
        strbuf_reset(&s->kbuf);
        ex_key_encode(kcols, s->nkeys, r, &s->kbuf);
        DedupKey *x = entry_get(op, s->kbuf.data, s->kbuf.len, cx);
        if (x == NULL)
            return -1;
        if (x->present)
            continue;               /* a duplicate within the watermark */
        x->present = true;
        x->has_t = s->time_col >= 0 && !vector_is_null(&d->rows.cols[s->time_col], r);
        x->t = x->has_t ? d->rows.cols[s->time_col].v.i64[r] : 0;
        touch(s, x);
        eng_delta_append(&out, cx->arena, &d->rows, r, 1);
    }
    return out.rows.nrows ? eng_emit(op, &out, cx) : 0;
}

static int dedup_watermark(EngOp *op, int input, int64_t wm_us, EngCtx *cx)
{
    SL_UNUSED(input);
    SL_UNUSED(cx);
    DedupOp *s = op->self;
    if (!s->has_wm || wm_us > s->wm)
        s->wm = wm_us;
    s->has_wm = true;
    return 0;
}

static void evict(DedupOp *s, DedupKey *x)
{
    x->present = false;
    touch(s, x);
    s->stats.st.evicted++;
    s->stats.dirty = true;
}

/* Evicts the keys whose time is below t: the committed ones by a scan of
 * the time index, this batch's new ones from the touched list. */
static int evict_below(EngOp *op, int64_t t, EngCtx *cx)
{
    DedupOp *s = op->self;
    size_t hl = ENG_PREFIX_LEN + 1;
    uint8_t head[ENG_PREFIX_LEN + 1];
    memcpy(head, op->prefix, ENG_PREFIX_LEN);
    head[ENG_PREFIX_LEN] = 't';
    /* the keys found, copied into the batch's arena: the scan is closed
     * before they are read */
    typedef struct Found { const uint8_t *key; uint32_t len; } Found;
    Found *found = NULL;
    uint32_t nfound = 0, capfound = 0;
    StateScan *sc = state_scan_open(cx->st, head, hl);
    const void *k, *v;
    size_t kl, vl;
    while (state_scan_next(sc, &k, &kl, &v, &vl)) {
        if (kl < hl + 8)
            continue;
        if (get_time_key((const uint8_t *)k + hl) >= t)
            break;
        if (nfound == capfound) {
            capfound = capfound ? capfound * 2 : 64;
            Found *nf = ARENA_ARRAY(cx->arena, Found, capfound);
            if (nfound)
                memcpy(nf, found, sizeof(*nf) * nfound);
            found = nf;
        }
        uint8_t *copy = arena_alloc(cx->arena, kl - hl - 8 + 1);
        memcpy(copy, (const uint8_t *)k + hl + 8, kl - hl - 8);
        found[nfound].key = copy;
        found[nfound++].len = (uint32_t)(kl - hl - 8);
    }
    if (state_scan_close(sc, cx->err) < 0)
        return -1;
    for (uint32_t i = 0; i < nfound; i++) {
        DedupKey *x = entry_get(op, found[i].key, found[i].len, cx);
        if (x == NULL)
            return -1;
        if (x->present && x->has_t && x->t < t)
            evict(s, x);
    }
    uint32_t n = s->ntouched;       /* evict() appends nothing new here */
    for (uint32_t i = 0; i < n; i++) {
        DedupKey *x = s->touched[i];
        if (x->present && !x->stored && x->has_t && x->t < t)
            evict(s, x);
    }
    return 0;
}

static int dedup_flush(EngOp *op, EngCtx *cx)
{
    DedupOp *s = op->self;
    if (!s->has_wm)
        return 0;
    if (s->time_col >= 0) {
        int64_t t = eng_time_add(s->wm, s->offset);
        bool pending = false;
        for (uint32_t i = 0; i < s->ntouched && !pending; i++) {
            const DedupKey *x = s->touched[i];
            pending = x->present && !x->stored && x->has_t && x->t < t;
        }
        if (t > s->evicted_below || pending) {
            if (evict_below(op, t, cx) < 0)
                return -1;
            s->evicted_below = SL_MAX(s->evicted_below, t);
        }
    }
    return op->out_time.n > 0 ? eng_emit_watermark(op, s->wm, cx) : 0;
}

/* ------------------------------------------------------ checkpoint, restore */

static int dedup_checkpoint(EngOp *op, EngCtx *cx)
{
    DedupOp *s = op->self;
    for (uint32_t i = 0; i < s->ntouched; i++) {
        DedupKey *x = s->touched[i];
        x->touched = false;
        if (x->present == x->stored)
            continue;
        eng_state_key(op, 'k', x->key, x->klen, &s->kbuf);
        if (x->has_t)
            index_key(op, x, &s->sbuf);
        if (x->present) {
            uint8_t v[9];
            v[0] = x->has_t;
            put_le64(v + 1, (uint64_t)x->t);
            state_batch_put(cx->wb, s->kbuf.data, s->kbuf.len, v, sizeof(v));
            if (x->has_t)
                state_batch_put(cx->wb, s->sbuf.data, s->sbuf.len, "", 0);
            s->stats.st.rows++;
            s->stats.st.bytes += entry_bytes(x);
        } else {
            state_batch_delete(cx->wb, s->kbuf.data, s->kbuf.len);
            if (x->has_t)
                state_batch_delete(cx->wb, s->sbuf.data, s->sbuf.len);
            s->stats.st.rows--;
            s->stats.st.bytes -= entry_bytes(x);
        }
        x->stored = x->present;
        s->stats.dirty = true;
    }
    s->ntouched = 0;
    /* evicted keys stay in the cache as absent ones: when they outnumber
     * the kept ones, drop it (the next batch reads the store, which holds
     * this batch once it commits) so memory follows the bound too */
    if (s->map.n > 1024 && (int64_t)s->map.n > 2 * s->stats.st.rows)
        cache_drop(s);
    eng_stats_flush(op, cx, &s->stats);
    return 0;
}

static int dedup_restore(EngOp *op, EngCtx *cx)
{
    DedupOp *s = op->self;
    cache_drop(s);
    if (eng_stats_load(op, cx, "dedup", &s->stats) < 0)
        return -1;
    s->has_wm = false;
    s->evicted_below = INT64_MIN;
    return 0;
}

/* ------------------------------------------------------ stats, explain, free */

static void dedup_stats(const EngOp *op, EngOpStats *out)
{
    const DedupOp *s = op->self;
    *out = s->stats.st;
}

static void dedup_explain(const EngOp *op, StrBuf *out)
{
    const DedupOp *s = op->self;
    strbuf_printf(out, "dedup on %d column%s", s->nkeys, s->nkeys == 1 ? "" : "s");
    if (s->time_col >= 0)
        strbuf_printf(out, " within the watermark of %s: evicts by watermark",
                      op->in_cols[0][s->time_col].name);
    else
        strbuf_printf(out, ": unbounded");
}

static void dedup_free(EngOp *op)
{
    DedupOp *s = op->self;
    if (s == NULL)
        return;
    cache_drop(s);
    eng_map_free(&s->map);
    arena_destroy(&s->cache);
    strbuf_free(&s->kbuf);
    strbuf_free(&s->sbuf);
}

static const EngOpVt dedup_vt = {
    .kind = "dedup", .push = dedup_push, .watermark = dedup_watermark,
    .flush = dedup_flush, .checkpoint = dedup_checkpoint, .restore = dedup_restore,
    .stats = dedup_stats, .explain = dedup_explain, .free = dedup_free,
};

/* ------------------------------------------------------------ constructor */

EngOp *eng_op_dedup_new(const ColumnDesc *cols, int ncols, const int *keys, int nkeys,
                        const EngEdgeTime *time, int time_col, SlError *err)
{
    if (nkeys < 1) {
        sl_error(err, ERRCODE_INVALID_PARAMETER_VALUE, "dedup needs at least one key column");
        return NULL;
    }
    for (int i = 0; i < nkeys; i++)
        if (keys[i] < 0 || keys[i] >= ncols) {
            sl_error(err, ERRCODE_INVALID_PARAMETER_VALUE,
                     "dedup key column %d is not a column of its input", keys[i]);
            return NULL;
        }
    int ti = -1;
    if (time_col >= 0)
        for (int i = 0; time != NULL && i < time->n; i++)
            if (time->cols[i].col == time_col)
                ti = i;
    if (time_col >= 0 && ti < 0) {
        sl_error(err, ERRCODE_INVALID_PARAMETER_VALUE,
                 "dedup's time column %d is not an event-time column of its input", time_col);
        sl_error_hint(err, "Duplicates are dropped within the watermark of an event-time "
                      "column; without one, give none and every key is kept for ever.");
        return NULL;
    }
    EngOp *op = eng_op_new(&dedup_vt, 1, sizeof(DedupOp));
    DedupOp *s = op->self;
    s->keys = ARENA_ARRAY(&op->arena, int, nkeys);
    memcpy(s->keys, keys, sizeof(int) * (size_t)nkeys);
    s->nkeys = nkeys;
    s->time_col = time_col >= 0 ? time_col : -1;
    s->offset = ti >= 0 ? time->cols[ti].offset_us : 0;
    s->evicted_below = INT64_MIN;
    arena_init(&s->cache, 16384);
    eng_map_init(&s->map, &s->cache);
    strbuf_init(&s->kbuf);
    strbuf_init(&s->sbuf);
    op->in_cols[0] = cols;
    op->in_ncols[0] = ncols;
    if (time != NULL)
        op->in_time[0] = *time;
    op->out_cols = cols;
    op->out_ncols = ncols;
    op->out_time = op->in_time[0];
    op->bound = s->time_col >= 0 ? ENG_BOUND_WATERMARK : ENG_BOUND_UNBOUNDED;
    return op;
}
