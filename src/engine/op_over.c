/*
 * op_over.c -- OVER: one window function over a delta input with
 * retractions (op_over.h: eng_op_over_new; docs/engine-graph.md, "OVER"),
 * and the partition store it shares with Top-N (op_topn.c): eng_over_new
 * and the eng_over_* entry points.
 *
 * Incremental rule (RisingWave's OverWindow, Materialize's): push adds
 * each row's weight to its entry in its partition; the partitions a batch
 * touches remember every row's count before it.  At flush each touched
 * partition is put in order twice -- as it was before the batch and as it
 * is now -- the function computed over both (the compute hook: for OVER
 * the batch engine's own window operator, src/exec/op_window.c, over a
 * scan of those rows, so frames, peers, EXCLUDE, RANGE offsets and every
 * error are PostgreSQL's as the batch engine has them), and the old output
 * rows emitted with weight -1, the new with +1, consolidated: a row whose
 * value did not change cancels out, so only the rows whose frame (or rank,
 * or neighbours) a change reached leave the operator.  A whole partition
 * is recomputed, not only the range a change reaches.
 *
 * Order: the partition's sort keys (the Sort under the WINDOW node), then
 * the row's equality bytes (ex_key_encode of every column) as the
 * tiebreak: a total order, the same in every batch and after a restart.
 * Peers (rows equal in the ORDER BY keys) get PostgreSQL's values where
 * PostgreSQL gives peers equal values (rank, dense_rank, percent_rank,
 * cume_dist, RANGE and GROUPS frames); row_number, ntile, lag, lead and
 * ROWS frames over peers follow the tiebreak, where PostgreSQL follows
 * whatever order its sort left the peers in.
 *
 * State (under the operator's prefix P):
 *
 *   P + 'r' + len (4, BE) + partition key + row key
 *                            -> count (8, LE), then the row (row_encode):
 *                               one distinct row of a partition
 *   P + 't' + time (8, put_time_key) + len + partition key
 *                            -> '': a partition whose key holds the
 *                               input's event time (the bound's index)
 *   P + 'w'                  -> the bound (8, LE) below which partitions
 *                               were closed: a later row for one (late:
 *                               the caller drops those) fails its batch
 *                               with 22000, since its partition is gone
 *   P + 'n'                  -> rows kept, their bytes, rows evicted
 *                               (eng_stats_put)
 *
 * A partition is read whole on first touch (a prefix scan) into a cache
 * that restore drops, and that checkpoint drops when it evicted or holds
 * more than OVER_CACHE_ROWS rows.  Checkpoint writes the rows the batch
 * changed (count 0: deleted).  Bound: with an event-time column among the
 * partition keys, a partition whose time the watermark passed (time <
 * watermark + the column's offset) is closed -- no row can reach it -- and
 * evicted at flush (ENG_BOUND_WATERMARK); else the state grows with the
 * rows (ENG_BOUND_UNBOUNDED).  The input's time columns are the output's;
 * the watermark is passed on at flush, after the rows it follows.
 */
#include "op_over.h"
#include "keymap.h"
#include "sluice/bytes.h"
#include "sluice/common.h"
#include "sluice/rowcodec.h"

#include <stdlib.h>
#include <string.h>

#define OVER_CACHE_ROWS 65536

/* One distinct row of a partition. */
typedef struct OverRow {
    const uint8_t *key;             /* the map's copy: len + part key + row key */
    uint32_t klen;
    uint8_t *row;                   /* row_encode, on the heap */
    uint32_t len;
    int64_t  cnt;                   /* copies kept, this batch included */
    int64_t  was;                   /* the same before the batch (when touched) */
    bool     touched;
    bool     stored;
} OverRow;

/* One partition. */
typedef struct OverPart {
    const uint8_t *key;             /* the map's copy: len + part key */
    uint32_t  klen;
    OverRow **rows;                 /* every row (count 0 ones too), cache arena */
    uint32_t  n, cap;
    int64_t   t;                    /* its event time (has_t) */
    bool      has_t;
    bool      indexed;              /* its 't' entry is stored (when has_t) */
    bool      touched;              /* in the batch's list */
    bool      closed;               /* evicted by the watermark this batch */
} OverPart;

typedef struct Over {
    const Plan    *win;
    const SortKey *keys;
    int            nkeys;
    EngOverComputeFn compute;
    void          *arg;
    int            tcol;            /* the partition key column that is a time, -1 */
    int64_t        toff;
    Arena          cache;           /* partitions, rows, keys; reset by cache_drop */
    EngMap         parts;           /* len + part key -> OverPart* */
    EngMap         rows;            /* len + part key + row key -> OverRow* */
    int64_t        cached;          /* rows in the cache */
    OverPart     **touched;         /* the batch's partitions, cache arena */
    uint32_t       ntouched, captouched;
    bool           evicting;        /* the batch closed partitions */
    int64_t        closed_below;    /* partitions with a time below are closed
                                     * (committed: key 'w'); INT64_MIN none */
    bool           closed_loaded, closed_dirty;
    bool           has_wm;
    int64_t        wm;
    EngStats       stats;           /* rows kept, their bytes, evicted ever */
    StrBuf         kbuf, sbuf, rbuf;
} Over;

static void *grow(Arena *a, void *old, uint32_t n, uint32_t *cap, size_t size)
{
    if (n < *cap)
        return old;
    uint32_t c = *cap ? *cap * 2 : 16;
    void *p = arena_alloc(a, size * c);
    if (n)
        memcpy(p, old, size * n);
    *cap = c;
    return p;
}

static void cache_drop(Over *s)
{
    for (uint32_t i = 0; i < s->rows.cap; i++)
        if (s->rows.slots[i].key && s->rows.slots[i].value)
            sl_free(((OverRow *)s->rows.slots[i].value)->row);
    eng_map_clear(&s->rows);
    eng_map_clear(&s->parts);
    s->touched = NULL;
    s->ntouched = s->captouched = 0;
    s->cached = 0;
    arena_reset(&s->cache);
}

static void index_key(const EngOp *op, const OverPart *p, StrBuf *out)
{
    uint8_t tk[8];
    put_time_key(tk, p->t);
    eng_state_key(op, 't', tk, 8, out);
    strbuf_append(out, p->key, p->klen);
}

static int64_t row_bytes(const OverRow *x)
{
    return (int64_t)(ENG_PREFIX_LEN + 1 + x->klen + 8 + x->len);
}

static int64_t index_bytes(const OverPart *p)
{
    return (int64_t)(ENG_PREFIX_LEN + 1 + 8 + p->klen);
}

static void set_row(OverRow *x, const void *row, size_t len)
{
    sl_free(x->row);
    x->row = sl_malloc(len ? len : 1);
    memcpy(x->row, row, len);
    x->len = (uint32_t)len;
}

/* The map's copy of the key of the slot. */
static const EngMapSlot *slot_of(void **slot)
{
    return (const EngMapSlot *)((char *)slot - offsetof(EngMapSlot, value));
}

static OverRow *row_add(Over *s, OverPart *p, const void *key, size_t klen)
{
    bool isnew;
    void **slot = eng_map_upsert(&s->rows, key, klen, &isnew);
    if (!isnew)
        return *slot;
    OverRow *x = ARENA_NEW(&s->cache, OverRow);
    x->key = slot_of(slot)->key;
    x->klen = slot_of(slot)->klen;
    *slot = x;
    p->rows = grow(&s->cache, p->rows, p->n, &p->cap, sizeof(OverRow *));
    p->rows[p->n++] = x;
    s->cached++;
    return x;
}

/* The partition of key (len + part key), read whole from the store on
 * first touch; NULL with cx->err set on a read error. */
static OverPart *part_get(EngOp *op, const void *key, size_t klen, EngCtx *cx)
{
    Over *s = op->self;
    bool isnew;
    void **slot = eng_map_upsert(&s->parts, key, klen, &isnew);
    if (!isnew)
        return *slot;
    OverPart *p = ARENA_NEW(&s->cache, OverPart);
    p->key = slot_of(slot)->key;
    p->klen = slot_of(slot)->klen;
    *slot = p;
    eng_state_key(op, 'r', key, klen, &s->sbuf);
    StateScan *sc = state_scan_open(cx->st, s->sbuf.data, s->sbuf.len);
    const void *k, *v;
    size_t kl, vl;
    while (state_scan_next(sc, &k, &kl, &v, &vl)) {
        if (vl < 8) {
            state_scan_close(sc, cx->err);
            sl_error(cx->err, ERRCODE_DATA_CORRUPTED, "a stored window row is corrupt");
            return NULL;
        }
        OverRow *x = row_add(s, p, (const uint8_t *)k + ENG_PREFIX_LEN + 1,
                             kl - ENG_PREFIX_LEN - 1);
        x->cnt = (int64_t)get_le64(v);
        set_row(x, (const uint8_t *)v + 8, vl - 8);
        x->stored = true;
        p->indexed = true;
    }
    if (state_scan_close(sc, cx->err) < 0)
        return NULL;
    return p;
}

static void part_touch(Over *s, OverPart *p)
{
    if (p->touched)
        return;
    s->touched = grow(&s->cache, s->touched, s->ntouched, &s->captouched, sizeof(OverPart *));
    s->touched[s->ntouched++] = p;
    p->touched = true;
    for (uint32_t i = 0; i < p->n; i++)
        p->rows[i]->was = p->rows[i]->cnt;
}

/* The committed bound below which partitions were closed (key 'w'), once. */
static int load_closed(EngOp *op, EngCtx *cx)
{
    Over *s = op->self;
    if (s->closed_loaded || s->tcol < 0)
        return 0;
    if (eng_bound_get(op, cx, 'w', op->vt->kind, &s->closed_below) < 0)
        return -1;
    s->closed_loaded = true;
    return 0;
}

/* ------------------------------------------------------------------ push */

int eng_over_push(EngOp *op, int input, const EngDelta *d, EngCtx *cx)
{
    SL_UNUSED(input);
    Over *s = op->self;
    if (load_closed(op, cx) < 0)
        return -1;
    const Plan *w = s->win;
    int np = w->u.window.npart;
    Vector *pcols = ARENA_ARRAY(cx->arena, Vector, np ? np : 1);
    for (int k = 0; k < np; k++)
        pcols[k] = d->rows.cols[w->u.window.part[k]];
    for (uint32_t r = 0; r < d->rows.nrows; r++) {
        int64_t wt = d->weights[r];
        if (wt == 0)
            continue;
        /* len + part key */
        strbuf_reset(&s->kbuf);
        strbuf_append(&s->kbuf, "\0\0\0\0", 4);
        ex_key_encode(pcols, np, r, &s->kbuf);
        put_be32((uint8_t *)s->kbuf.data, (uint32_t)(s->kbuf.len - 4));
        size_t plen = s->kbuf.len;
        OverPart *p = part_get(op, s->kbuf.data, plen, cx);
        if (p == NULL)
            return -1;
        part_touch(s, p);
        if (s->tcol >= 0 && !p->has_t) {
            const Vector *tv = &d->rows.cols[s->tcol];
            if (!vector_is_null(tv, r)) {
                p->t = tv->v.i64[r];
                p->has_t = true;
            }
        }
        if (p->has_t && p->t < s->closed_below) {
            sl_error(cx->err, ERRCODE_DATA_EXCEPTION,
                     "a row reached %s for a partition its watermark closed", op->vt->kind);
            sl_error_hint(cx->err, "rows below the watermark are dropped before the graph "
                                   "(late rows); this one was not");
            return -1;
        }
        ex_key_encode(d->rows.cols, (int)d->rows.ncols, r, &s->kbuf);
        OverRow *x = row_add(s, p, s->kbuf.data, s->kbuf.len);
        if (!x->touched) {
            x->touched = true;
            x->was = x->cnt;
        }
        /* a row nobody shows takes this copy's form */
        if (x->cnt == 0 && x->was == 0) {
            strbuf_reset(&s->rbuf);
            row_encode(&d->rows, r, &s->rbuf);
            set_row(x, s->rbuf.data, s->rbuf.len);
        }
        if (__builtin_add_overflow(x->cnt, wt, &x->cnt))
            return sl_error(cx->err, ERRCODE_NUMERIC_VALUE_OUT_OF_RANGE,
                            "a row's count is out of range");
    }
    return 0;
}

int eng_over_watermark(EngOp *op, int input, int64_t wm_us, EngCtx *cx)
{
    SL_UNUSED(input);
    SL_UNUSED(cx);
    Over *s = op->self;
    if (!s->has_wm || wm_us > s->wm)
        s->wm = wm_us;
    s->has_wm = true;
    return 0;
}

/* ----------------------------------------------------------------- flush */

typedef struct SortCtx {
    const Over  *s;
    const Batch *b;
    OverRow    **rows;              /* parallel to b's rows */
} SortCtx;

static int row_cmp(const void *pa, const void *pb, void *arg)
{
    const SortCtx *c = arg;
    uint32_t a = *(const uint32_t *)pa, b = *(const uint32_t *)pb;
    for (int k = 0; k < c->s->nkeys; k++) {
        const SortKey *sk = &c->s->keys[k];
        const Vector *v = &c->b->cols[sk->col];
        bool na = vector_is_null(v, a), nb = vector_is_null(v, b);
        int r;
        if (na || nb) {
            if (na && nb)
                continue;
            r = na ? 1 : -1;        /* NULL last unless NULLS FIRST */
            return sk->nulls_first ? -r : r;
        }
        r = ex_value_cmp(v, a, v, b);
        if (r != 0)
            return sk->desc ? -r : r;
    }
    const OverRow *x = c->rows[a], *y = c->rows[b];
    int r = memcmp(x->key, y->key, SL_MIN(x->klen, y->klen));
    return r != 0 ? r : (x->klen > y->klen) - (x->klen < y->klen);
}

/* Appends partition p's rows in order to before (each row its count
 * before the batch times) and after (its count now). */
static int part_rows(EngOp *op, OverPart *p, EngDelta *before, EngDelta *after, EngCtx *cx)
{
    Over *s = op->self;
    EngDelta dec;
    eng_delta_init(&dec, cx->arena, op->in_cols[0], op->in_ncols[0], p->n);
    OverRow **live = ARENA_ARRAY(cx->arena, OverRow *, p->n ? p->n : 1);
    uint32_t n = 0;
    for (uint32_t i = 0; i < p->n; i++) {
        OverRow *x = p->rows[i];
        if (x->cnt < 0)
            return sl_error(cx->err, ERRCODE_FEATURE_NOT_SUPPORTED,
                            "%s retracts a row more times than it was inserted",
                            op->vt->kind);
        if (x->cnt == 0 && x->was == 0)
            continue;
        if (row_decode(x->row, x->len, &dec.rows, n, cx->arena) < 0)
            return sl_error(cx->err, ERRCODE_DATA_CORRUPTED, "a stored window row is corrupt");
        dec.rows.nrows = ++n;
        live[n - 1] = x;
    }
    uint32_t *ord = ARENA_ARRAY(cx->arena, uint32_t, n ? n : 1);
    for (uint32_t i = 0; i < n; i++)
        ord[i] = i;
    SortCtx sc = {s, &dec.rows, live};
    qsort_r(ord, n, sizeof(uint32_t), row_cmp, &sc);
    for (uint32_t i = 0; i < n; i++) {
        const OverRow *x = live[ord[i]];
        for (int64_t k = 0; k < x->was; k++)
            eng_delta_append(before, cx->arena, &dec.rows, ord[i], 1);
        for (int64_t k = 0; k < x->cnt; k++)
            eng_delta_append(after, cx->arena, &dec.rows, ord[i], 1);
    }
    return 0;
}

/* Closes the partitions the watermark passed: every row's count to 0
 * (nothing emitted), deleted at checkpoint. */
static int evict_closed(EngOp *op, EngCtx *cx)
{
    Over *s = op->self;
    if (s->tcol < 0 || !s->has_wm)
        return 0;
    int64_t bound = eng_time_add(s->wm, s->toff);
    if (load_closed(op, cx) < 0)
        return -1;
    if (bound > s->closed_below) {
        s->closed_below = bound;
        s->closed_dirty = true;
    }
    /* the stored partitions' keys first, then each read and closed */
    uint32_t nk = 0, capk = 0, capt = 0;
    SlStr *keys = NULL;
    int64_t *times = NULL;
    uint8_t pre[ENG_PREFIX_LEN + 1];
    memcpy(pre, op->prefix, ENG_PREFIX_LEN);
    pre[ENG_PREFIX_LEN] = 't';
    StateScan *sc = state_scan_open(cx->st, pre, sizeof(pre));
    const void *k, *v;
    size_t kl, vl;
    while (state_scan_next(sc, &k, &kl, &v, &vl)) {
        if (kl < sizeof(pre) + 8)
            break;
        if (get_time_key((const uint8_t *)k + sizeof(pre)) >= bound)
            break;
        keys = grow(cx->arena, keys, nk, &capk, sizeof(SlStr));
        times = grow(cx->arena, times, nk, &capt, sizeof(int64_t));
        times[nk] = get_time_key((const uint8_t *)k + sizeof(pre));
        size_t len = kl - sizeof(pre) - 8;
        char *copy = arena_alloc(cx->arena, len ? len : 1);
        memcpy(copy, (const uint8_t *)k + sizeof(pre) + 8, len);
        keys[nk++] = (SlStr){copy, len};
    }
    if (state_scan_close(sc, cx->err) < 0)
        return -1;
    for (uint32_t i = 0; i < nk; i++) {
        OverPart *p = part_get(op, keys[i].ptr, keys[i].len, cx);
        if (p == NULL)
            return -1;
        p->t = times[i];
        p->has_t = true;
    }
    /* every cached partition the bound closed (the stored ones are among them) */
    for (uint32_t i = 0; i < s->parts.cap; i++) {
        OverPart *p = s->parts.slots[i].key ? s->parts.slots[i].value : NULL;
        if (p == NULL || !p->has_t || p->t >= bound || p->closed)
            continue;
        part_touch(s, p);
        p->closed = true;
        s->evicting = true;
        for (uint32_t j = 0; j < p->n; j++) {
            OverRow *x = p->rows[j];
            x->touched = true;
            if (x->cnt > 0)
                s->stats.st.evicted++;
            x->cnt = 0;
        }
    }
    return 0;
}

int eng_over_flush(EngOp *op, EngCtx *cx)
{
    Over *s = op->self;
    EngDelta before, after, out, cons;
    eng_delta_init(&before, cx->arena, op->in_cols[0], op->in_ncols[0], 16);
    eng_delta_init(&after, cx->arena, op->in_cols[0], op->in_ncols[0], 16);
    for (uint32_t i = 0; i < s->ntouched; i++)
        if (part_rows(op, s->touched[i], &before, &after, cx) < 0)
            return -1;
    eng_delta_init(&out, cx->arena, op->out_cols, op->out_ncols, 16);
    if (before.rows.nrows && s->compute(op, &before.rows, -1, &out, cx) < 0)
        return -1;
    if (after.rows.nrows && s->compute(op, &after.rows, 1, &out, cx) < 0)
        return -1;
    eng_delta_consolidate(&out, cx->arena, &cons);
    if (cons.rows.nrows && eng_emit(op, &cons, cx) < 0)
        return -1;
    if (evict_closed(op, cx) < 0)
        return -1;
    if (op->out_time.n == 0 || !s->has_wm)
        return 0;
    return eng_emit_watermark(op, s->wm, cx);
}

/* ------------------------------------------------------ checkpoint, restore */

int eng_over_checkpoint(EngOp *op, EngCtx *cx)
{
    Over *s = op->self;
    for (uint32_t i = 0; i < s->ntouched; i++) {
        OverPart *p = s->touched[i];
        p->touched = false;
        bool nonempty = false;
        for (uint32_t j = 0; j < p->n; j++) {
            OverRow *x = p->rows[j];
            if (!x->touched) {
                nonempty |= x->cnt > 0;
                continue;
            }
            x->touched = false;
            eng_state_key(op, 'r', x->key, x->klen, &s->sbuf);
            if (x->cnt == 0) {
                if (x->stored) {
                    state_batch_delete(cx->wb, s->sbuf.data, s->sbuf.len);
                    s->stats.st.rows--;
                    s->stats.st.bytes -= row_bytes(x);
                    s->stats.dirty = true;
                }
                x->stored = false;
                continue;
            }
            nonempty = true;
            if (!x->stored) {
                s->stats.st.rows++;
                s->stats.st.bytes += row_bytes(x);
                s->stats.dirty = true;
            }
            x->stored = true;
            strbuf_reset(&s->rbuf);
            uint8_t c[8];
            put_le64(c, (uint64_t)x->cnt);
            strbuf_append(&s->rbuf, c, 8);
            strbuf_append(&s->rbuf, x->row, x->len);
            state_batch_put(cx->wb, s->sbuf.data, s->sbuf.len, s->rbuf.data, s->rbuf.len);
        }
        if (p->has_t && nonempty != p->indexed) {
            index_key(op, p, &s->sbuf);
            if (nonempty) {
                state_batch_put(cx->wb, s->sbuf.data, s->sbuf.len, "", 0);
                s->stats.st.bytes += index_bytes(p);
            } else {
                state_batch_delete(cx->wb, s->sbuf.data, s->sbuf.len);
                s->stats.st.bytes -= index_bytes(p);
            }
            s->stats.dirty = true;
        }
        p->indexed = nonempty;
    }
    s->ntouched = 0;
    if (s->closed_dirty) {
        eng_bound_put(op, cx, 'w', s->closed_below);
        s->closed_dirty = false;
    }
    eng_stats_flush(op, cx, &s->stats);
    if (s->evicting || s->cached > OVER_CACHE_ROWS)
        cache_drop(s);
    s->evicting = false;
    return 0;
}

int eng_over_restore(EngOp *op, EngCtx *cx)
{
    Over *s = op->self;
    cache_drop(s);
    if (eng_stats_load(op, cx, op->vt->kind, &s->stats) < 0)
        return -1;
    s->evicting = false;
    s->has_wm = false;
    s->closed_loaded = s->closed_dirty = false;
    return 0;
}

void eng_over_stats(const EngOp *op, EngOpStats *out)
{
    const Over *s = op->self;
    *out = s->stats.st;
}

void eng_over_free(EngOp *op)
{
    Over *s = op->self;
    if (s == NULL)
        return;
    cache_drop(s);
    eng_map_free(&s->rows);
    eng_map_free(&s->parts);
    arena_destroy(&s->cache);
    strbuf_free(&s->kbuf);
    strbuf_free(&s->sbuf);
    strbuf_free(&s->rbuf);
}

/* ------------------------------------------------------------ the shell */

void eng_over_set_arg(EngOp *op, void *arg)
{
    ((Over *)op->self)->arg = arg;
}

void *eng_over_arg(const EngOp *op)
{
    return ((const Over *)op->self)->arg;
}

const Plan *eng_over_window(const EngOp *op)
{
    return ((const Over *)op->self)->win;
}

/* The name of the time column among the partition keys, or NULL. */
static const char *time_key(const EngOp *op)
{
    const Over *s = op->self;
    if (s->tcol < 0)
        return NULL;
    /* a PARTITION BY key is a column the analyzer added (?column?): name
     * the input's first time column instead, whose copy it is when the
     * input has one event time */
    const char *name = op->in_cols[0][s->tcol].name;
    if ((name == NULL || strcmp(name, "?column?") == 0) && op->in_time[0].n > 0)
        name = op->in_cols[0][op->in_time[0].cols[0].col].name;
    return name ? name : "?column?";
}

void eng_over_explain_tail(const EngOp *op, StrBuf *out)
{
    const Plan *w = eng_over_window(op);
    const char *tk = time_key(op);
    strbuf_printf(out, "partitioned by %d column%s, ordered by %d: ", w->u.window.npart,
                  w->u.window.npart == 1 ? "" : "s", w->u.window.norder);
    if (tk)
        strbuf_printf(out, "bounded by the watermark of %s", tk);
    else
        strbuf_puts(out, "unbounded (every row of a partition kept)");
}

EngOp *eng_over_new(const EngOpVt *vt, const Plan *window, const SortKey *keys, int nkeys,
                    const EngEdgeTime *time, EngOverComputeFn compute)
{
    EngOp *op = eng_op_new(vt, 1, sizeof(Over));
    Over *s = op->self;
    s->win = window;
    s->keys = keys;
    s->nkeys = nkeys;
    s->compute = compute;
    s->tcol = -1;
    s->closed_below = INT64_MIN;
    arena_init(&s->cache, 16384);
    eng_map_init(&s->parts, &s->cache);
    eng_map_init(&s->rows, &s->cache);
    strbuf_init(&s->kbuf);
    strbuf_init(&s->sbuf);
    strbuf_init(&s->rbuf);
    op->in_cols[0] = window->child->cols;
    op->in_ncols[0] = window->child->ncols;
    op->out_cols = window->cols;
    op->out_ncols = window->ncols;
    if (time != NULL) {
        op->in_time[0] = *time;
        op->out_time = *time;       /* the input's columns keep their places */
        for (int k = 0; k < window->u.window.npart && s->tcol < 0; k++)
            for (int j = 0; j < time->n; j++)
                if (time->cols[j].col == window->u.window.part[k]) {
                    s->tcol = time->cols[j].col;
                    s->toff = time->cols[j].offset_us;
                    break;
                }
    }
    op->bound = s->tcol >= 0 ? ENG_BOUND_WATERMARK : ENG_BOUND_UNBOUNDED;
    return op;
}

/* ------------------------------------------------------------------ OVER */

/* The batch engine's window operator over a scan of the rows. */
typedef struct OverExec {
    Plan   *win;                    /* the WINDOW node over scan */
    Batch **chunks;                 /* during a compute: the rows, EX_BATCH_ROWS a batch */
    int     nchunks;
} OverExec;

static ExSource *over_scan_cb(ExCtx *ex, const Plan *scan)
{
    SL_UNUSED(scan);
    OverExec *x = ex->open_scan_arg;
    return ex_source_batches(ex->arena, x->chunks, x->nchunks);
}

static int over_compute(EngOp *op, const Batch *rows, int64_t w, EngDelta *out, EngCtx *cx)
{
    OverExec *x = eng_over_arg(op);
    x->nchunks = (int)((rows->nrows + EX_BATCH_ROWS - 1) / EX_BATCH_ROWS);
    x->chunks = ARENA_ARRAY(cx->arena, Batch *, x->nchunks ? x->nchunks : 1);
    for (int c = 0; c < x->nchunks; c++) {
        EngDelta *d = ARENA_NEW(cx->arena, EngDelta);
        eng_delta_init(d, cx->arena, op->in_cols[0], op->in_ncols[0], EX_BATCH_ROWS);
        for (uint32_t r = (uint32_t)c * EX_BATCH_ROWS;
             r < rows->nrows && r < (uint32_t)(c + 1) * EX_BATCH_ROWS; r++)
            eng_delta_append(d, cx->arena, rows, r, 1);
        x->chunks[c] = &d->rows;
    }
    ExCtx ex = {.arena = cx->arena, .err = cx->err, .st = cx->st,
                .open_scan = over_scan_cb, .open_scan_arg = x};
    if (cx->ecx != NULL && cx->ecx->hooks != NULL)
        ex.hooks = *cx->ecx->hooks;
    if (cx->ecx != NULL)
        ex.now = cx->ecx->now;
    ExOp *top = ex_op_build(&ex, x->win);
    if (top == NULL)
        return -1;
    ExBatch *b;
    int rc;
    while ((rc = ex_op_next(top, &b)) > 0)
        for (uint32_t i = 0; i < b->n; i++)
            eng_delta_append(out, cx->arena, &b->b, b->sel ? b->sel[i] : i, w);
    ex_op_close(top);
    return rc;
}

static void over_explain(const EngOp *op, StrBuf *out)
{
    strbuf_printf(out, "over %s() ", eng_over_window(op)->u.window.name);
    eng_over_explain_tail(op, out);
}

static const EngOpVt over_vt = {
    .kind = "over", .push = eng_over_push, .watermark = eng_over_watermark,
    .flush = eng_over_flush, .checkpoint = eng_over_checkpoint, .restore = eng_over_restore,
    .stats = eng_over_stats, .explain = over_explain, .free = eng_over_free,
};

EngOp *eng_op_over_new(const Plan *window, const SortKey *keys, int nkeys,
                       const EngEdgeTime *time, SlError *err)
{
    SL_UNUSED(err);
    EngOp *op = eng_over_new(&over_vt, window, keys, nkeys, time, over_compute);
    /* the WINDOW node once more, over a scan of the rows compute hands it */
    OverExec *x = ARENA_NEW(&op->arena, OverExec);
    CatRelation *rel = ARENA_NEW(&op->arena, CatRelation);
    rel->name = "window input";
    rel->kind = REL_STREAM;
    Plan *scan = plan_new(&op->arena, PLAN_SCAN, NULL, window->child->ncols);
    for (int c = 0; c < window->child->ncols; c++)
        plan_set_col(scan, c, window->child->cols[c].name, window->child->cols[c].type, NULL);
    scan->u.scan.rel = rel;
    x->win = ARENA_NEW(&op->arena, Plan);
    *x->win = *window;
    x->win->child = scan;
    eng_over_set_arg(op, x);
    return op;
}
