/*
 * op_session.c -- the session operator: tags each row with the session
 * window it falls in, over retractions, so that an aggregate grouped by
 * the session's columns is a session-window aggregate.
 *
 *   eng_op_session_new(in, nin, groups, ngroups, time, gap_us, in_time, err)
 *
 * Its output is its input's columns then window_start and window_end (of
 * the time expression's type).  A session is the batch engine's
 * (src/exec/op_agg.c): per group key (ex_key_encode of the group values,
 * NULLs equal), the rows in time order; a row whose time t is below the
 * current session's end joins it, else it starts a new one; a session
 * starts at its first row's time and ends at the largest t + gap of its
 * rows.  A row whose time is NULL or infinite is in no session and is
 * dropped, as there.  The rewriter (compile.c) puts an aggregate over it
 * grouped by the plan's group keys and window_start, window_end.
 *
 * Per group key the operator keeps its rows (per distinct row, its weight
 * sum).  A batch's rows change the weights; at flush, per touched key,
 * the sessions before the batch and after it are computed from the old
 * and the new weights, and each row whose session or weight changed is
 * retracted with its old session and inserted with its new one (a row in
 * the same session whose weight changed: the difference).  So a row that
 * bridges two sessions moves the rows of both into the merged one, and
 * the retraction of that row splits them again.  A weight below 0 at
 * flush fails the batch (XX000), as the aggregate does.
 *
 * Event time (in_time): when the time is a bare input time column
 * (offset o), every later row has t >= wm + o, so a session whose end is
 * at or before wm + o is closed: no later row can join it, and no later
 * row can start before it.  The rows emitted after input watermark wm
 * belong to open sessions, whose ends are > wm + o: window_end is the
 * output's time column with offset o + 1 (window_start is none: an open
 * session may have started long ago).  The watermark entry point keeps
 * wm; flush emits the rows, then the watermark; checkpoint, after the
 * batch's writes, evicts the rows of closed sessions: those of every key
 * whose last session closed (an index by that end), and those of closed
 * sessions of the keys in memory; the watermark is recorded under 'w'.
 * A row below the recorded watermark (t < wm + o: late; the caller drops
 * those) fails the batch with 22000: it could belong to an evicted
 * session.  Bound: WATERMARK when timed, else UNBOUNDED.
 *
 * State (under op->prefix):
 *   'r' + be32(key length) + group key + put_time_key(t) + row key
 *       -> [weight sum i64] then the row (row_encode): one distinct row
 *          (row key: ex_key_encode of every input column)
 *   'e' + put_time_key(end of the key's last session) + group key -> ''
 *   'w' -> the watermark closed sessions were evicted at (i64)
 *   'n' -> rows kept, their bytes, rows evicted ever (eng_stats_put)
 * A key's rows are read on first touch (one prefix scan) into a cache
 * that restore drops, and checkpoint too when it evicted a cached row.
 */
#include "keymap.h"
#include "ops.h"
#include "sluice/bytes.h"
#include "sluice/rowcodec.h"

#include <stdlib.h>
#include <string.h>

typedef struct SRow {
    const uint8_t *rk;          /* put_time_key(t) + row key (cache) */
    uint32_t rklen;
    int64_t  ts;
    Batch   *row;               /* one row of the input's columns (cache) */
    int64_t  count;             /* weight sum now */
    int64_t  old;               /* touched: the weight sum before the batch */
    bool     touched;
    bool     stored;            /* its key is in the store */
    uint32_t sbytes;            /* the stored key's and value's bytes */
} SRow;

typedef struct SKey {
    const uint8_t *gk;          /* the group key (cache) */
    uint32_t gklen;
    EngMap   rows;              /* row key -> SRow */
    int64_t  last_end;          /* the index entry written ('e'; INT64_MIN none) */
    int64_t  new_end;           /* flush: the last session's end after the batch */
    bool     touched;
} SKey;

typedef struct Sess {
    Expr *const *groups;
    int        ngroups;
    const Expr *time;
    int64_t    gap;
    SlType    *itypes;          /* the input's column types */
    Arena      cache;           /* keys, rows */
    EngMap     keys;            /* group key -> SKey */
    SKey     **touched;         /* heap */
    int        ntouched, cap_touched;
    bool       timed;           /* the time is an input time column */
    int64_t    toff;            /* its offset */
    int64_t    wm;              /* the input's watermark so far */
    int64_t    closed_wm;       /* committed: key 'w' */
    bool       closed_loaded;
    EngStats   stats;           /* committed + this batch's (key 'n') */
    bool       st_loaded;
} Sess;

static int corrupt(SlError *err)
{
    return sl_error(err, ERRCODE_DATA_CORRUPTED, "a session operator's state does not decode");
}

static void key_prefix(const EngOp *op, char tag, const uint8_t *gk, uint32_t gklen, StrBuf *k)
{
    uint8_t len[4];
    put_be32(len, gklen);
    strbuf_reset(k);
    strbuf_append(k, op->prefix, ENG_PREFIX_LEN);
    strbuf_putc(k, tag);
    if (tag == 'r') {
        strbuf_append(k, len, 4);
        strbuf_append(k, gk, gklen);
    }
}

static int rk_cmp(const void *a, const void *b)
{
    const SRow *x = *(SRow *const *)a, *y = *(SRow *const *)b;
    int c = memcmp(x->rk, y->rk, SL_MIN(x->rklen, y->rklen));
    return c ? c : (x->rklen > y->rklen) - (x->rklen < y->rklen);
}

/* t + gap as the batch engine adds it (an overflow ends at INT64_MAX - 1). */
static int64_t end_of(int64_t t, int64_t gap)
{
    int64_t e;
    return __builtin_add_overflow(t, gap, &e) ? INT64_MAX - 1 : e;
}

/* The sessions of rows v[0..n) (in time order) counting those whose
 * weight (old ? before the batch : now) is > 0: each such row's session
 * start and end into s[i], e[i].  Returns the last session's end
 * (INT64_MIN: no row). */
static int64_t sessions(SRow *const *v, int n, bool old, int64_t gap, int64_t *s, int64_t *e)
{
    int first = -1;             /* the current session's first row */
    int64_t start = 0, end = INT64_MIN;
    for (int i = 0; i <= n; i++) {
        const SRow *r = i < n ? v[i] : NULL;
        int64_t w = r == NULL ? 0 : old ? (r->touched ? r->old : r->count) : r->count;
        if (r != NULL && w <= 0)
            continue;
        if (r == NULL || first < 0 || r->ts >= end) {
            /* the current session is complete: give its rows its span */
            for (int j = first; j >= 0 && j < i; j++) {
                s[j] = start;
                e[j] = end;
            }
            if (r == NULL)
                break;
            first = i;
            start = r->ts;
            end = end_of(r->ts, gap);
        } else if (end_of(r->ts, gap) > end) {
            end = end_of(r->ts, gap);
        }
    }
    return first < 0 ? INT64_MIN : end;
}

/* The rows of sk in time order, into a (n of them). */
static SRow **rows_sorted(const SKey *sk, Arena *a, int *n)
{
    SRow **v = ARENA_ARRAY(a, SRow *, sk->rows.n + 1);
    int k = 0;
    for (uint32_t i = 0; i < sk->rows.cap; i++)
        if (sk->rows.slots[i].key != NULL)
            v[k++] = sk->rows.slots[i].value;
    qsort(v, (size_t)k, sizeof(SRow *), rk_cmp);
    *n = k;
    return v;
}

/* ----------------------------------------------------------- the cache */

static SRow *row_new(Sess *s, SKey *sk, const void *rk, size_t rklen, bool *isnew)
{
    void **slot = eng_map_upsert(&sk->rows, rk, rklen, isnew);
    if (*isnew) {
        SRow *r = arena_zalloc(&s->cache, sizeof(SRow));
        r->rk = arena_memdup(&s->cache, rk, rklen);
        r->rklen = (uint32_t)rklen;
        r->ts = get_time_key(rk);
        *slot = r;
    }
    return *slot;
}

/* The key gk: the cache's, else read from the store (its rows). */
static int key_get(EngOp *op, Sess *s, const StrBuf *gk, EngCtx *cx, SKey **out)
{
    bool isnew;
    void **slot = eng_map_upsert(&s->keys, gk->len ? gk->data : "", gk->len, &isnew);
    if (!isnew) {
        *out = *slot;
        return 0;
    }
    SKey *sk = arena_zalloc(&s->cache, sizeof(SKey));
    sk->gk = arena_memdup(&s->cache, gk->len ? gk->data : "", gk->len ? gk->len : 1);
    sk->gklen = (uint32_t)gk->len;
    eng_map_init(&sk->rows, &s->cache);
    *slot = sk;
    StrBuf p;
    strbuf_init(&p);
    key_prefix(op, 'r', sk->gk, sk->gklen, &p);
    StateScan *sc = state_scan_open(cx->st, p.data, p.len);
    const void *key, *val;
    size_t klen, vlen;
    int rc = 0;
    while (state_scan_next(sc, &key, &klen, &val, &vlen)) {
        const uint8_t *rk = (const uint8_t *)key + p.len;
        size_t rklen = klen - p.len;
        if (rklen < 8 || vlen < 8) {
            rc = corrupt(cx->err);
            break;
        }
        SRow *r = row_new(s, sk, rk, rklen, &isnew);
        memcpy(&r->count, val, 8);
        r->stored = true;
        r->sbytes = (uint32_t)(klen + vlen);
        r->row = batch_alloc(&s->cache, s->itypes, (uint32_t)op->in_ncols[0], 1);
        r->row->nrows = 1;
        if (row_decode((const uint8_t *)val + 8, vlen - 8, r->row, 0, &s->cache) < 0) {
            rc = corrupt(cx->err);
            break;
        }
    }
    if (state_scan_close(sc, rc < 0 ? NULL : cx->err) < 0)
        rc = -1;
    strbuf_free(&p);
    if (rc < 0)
        return -1;
    int n;
    SRow **v = rows_sorted(sk, cx->arena, &n);
    int64_t *ss = ARENA_ARRAY(cx->arena, int64_t, n + 1);
    int64_t *se = ARENA_ARRAY(cx->arena, int64_t, n + 1);
    sk->last_end = sessions(v, n, false, s->gap, ss, se);
    *out = sk;
    return 0;
}

static void drop_cache(Sess *s)
{
    for (uint32_t i = 0; i < s->keys.cap; i++)
        if (s->keys.slots[i].key != NULL)
            eng_map_free(&((SKey *)s->keys.slots[i].value)->rows);
    eng_map_clear(&s->keys);
    arena_reset(&s->cache);
    s->ntouched = 0;
}

/* The committed figures and the watermark sessions were evicted at, once
 * per restore. */
static int load_committed(EngOp *op, Sess *s, EngCtx *cx)
{
    if (!s->st_loaded) {
        if (eng_stats_load(op, cx, "session", &s->stats) < 0)
            return -1;
        s->st_loaded = true;
    }
    if (s->closed_loaded || !s->timed)
        return 0;
    if (eng_bound_get(op, cx, 'w', "session window", &s->closed_wm) < 0)
        return -1;
    s->closed_loaded = true;
    return 0;
}

/* ------------------------------------------------------------------ push */

static int sess_push(EngOp *op, int input, const EngDelta *d, EngCtx *cx)
{
    SL_UNUSED(input);
    Sess *s = op->self;
    uint32_t n = d->rows.nrows;
    if (load_committed(op, s, cx) < 0)
        return -1;
    Vector *gv = ARENA_ARRAY(cx->arena, Vector, s->ngroups > 0 ? s->ngroups : 1);
    Vector tv;
    for (int c = 0; c < s->ngroups; c++)
        if (ex_eval(cx->ecx, s->groups[c], &d->rows, n, &gv[c]) < 0)
            return -1;
    if (ex_eval(cx->ecx, s->time, &d->rows, n, &tv) < 0)
        return -1;
    int64_t late = s->timed ? eng_time_add(s->closed_wm, s->toff) : INT64_MIN;
    StrBuf gk, rk;
    strbuf_init(&gk);
    strbuf_init(&rk);
    int rc = -1;
    for (uint32_t i = 0; i < n; i++) {
        int64_t w = d->weights[i];
        if (w == 0 || vector_is_null(&tv, i) || tv.v.i64[i] == INT64_MIN ||
            tv.v.i64[i] == INT64_MAX)
            continue;
        int64_t t = tv.v.i64[i];
        if (s->closed_wm != INT64_MIN && t < late) {
            sl_error(cx->err, ERRCODE_DATA_EXCEPTION,
                     "a row reached a session window below the watermark its closed sessions "
                     "were evicted at");
            sl_error_hint(cx->err, "rows below the watermark are dropped before the graph "
                                   "(late rows); this one was not");
            goto out;
        }
        strbuf_reset(&gk);
        ex_key_encode(gv, s->ngroups, i, &gk);
        SKey *sk;
        if (key_get(op, s, &gk, cx, &sk) < 0)
            goto out;
        strbuf_reset(&rk);
        uint8_t tk[8];
        put_time_key(tk, t);
        strbuf_append(&rk, tk, 8);
        ex_key_encode(d->rows.cols, (int)d->rows.ncols, i, &rk);
        bool isnew;
        SRow *r = row_new(s, sk, rk.data, rk.len, &isnew);
        if (r->row == NULL) {
            r->row = batch_alloc(&s->cache, s->itypes, d->rows.ncols, 1);
            r->row->nrows = 1;
            for (uint32_t c = 0; c < d->rows.ncols; c++)
                ex_copy_value(&r->row->cols[c], 0, &d->rows.cols[c], i, &s->cache);
        }
        if (!r->touched) {
            r->touched = true;
            r->old = r->count;
        }
        r->count += w;
        if (!sk->touched) {
            sk->touched = true;
            if (s->ntouched == s->cap_touched) {
                s->cap_touched = s->cap_touched ? s->cap_touched * 2 : 64;
                s->touched = sl_realloc(s->touched, sizeof(SKey *) * (size_t)s->cap_touched);
            }
            s->touched[s->ntouched++] = sk;
        }
    }
    rc = 0;
out:
    strbuf_free(&gk);
    strbuf_free(&rk);
    return rc;
}

/* ------------------------------------------------------- watermark, flush */

/* Kept: the batch's rows go out at flush, before the watermark; the
 * sessions it closes are evicted at checkpoint. */
static int sess_watermark(EngOp *op, int input, int64_t wm_us, EngCtx *cx)
{
    SL_UNUSED(input);
    SL_UNUSED(cx);
    Sess *s = op->self;
    s->wm = SL_MAX(s->wm, wm_us);
    return 0;
}

/* Appends row r with weight w and session [start, end) to out. */
static void emit_row(EngOp *op, EngDelta *out, const SRow *r, int64_t w, int64_t start,
                     int64_t end, Arena *a)
{
    uint32_t k = out->rows.nrows, nin = (uint32_t)op->in_ncols[0];
    if (k == out->cap) {
        EngDelta bigger;
        eng_delta_init(&bigger, a, op->out_cols, op->out_ncols, out->cap * 2 + 16);
        for (uint32_t i = 0; i < k; i++)
            eng_delta_append(&bigger, a, &out->rows, i, out->weights[i]);
        *out = bigger;
    }
    for (uint32_t c = 0; c < nin; c++)
        ex_copy_value(&out->rows.cols[c], k, &r->row->cols[c], 0, a);
    Vector *vs = &out->rows.cols[nin], *ve = &out->rows.cols[nin + 1];
    vs->nulls[k] = ve->nulls[k] = 0;
    vs->v.i64[k] = start;
    ve->v.i64[k] = end;
    out->weights[k] = w;
    out->rows.nrows = k + 1;
}

static int sess_flush(EngOp *op, EngCtx *cx)
{
    Sess *s = op->self;
    if (s->ntouched > 0) {
        EngDelta out;
        eng_delta_init(&out, cx->arena, op->out_cols, op->out_ncols, 64);
        for (int t = 0; t < s->ntouched; t++) {
            SKey *sk = s->touched[t];
            int n;
            SRow **v = rows_sorted(sk, cx->arena, &n);
            int64_t *os = ARENA_ARRAY(cx->arena, int64_t, n + 1);
            int64_t *oe = ARENA_ARRAY(cx->arena, int64_t, n + 1);
            int64_t *ns = ARENA_ARRAY(cx->arena, int64_t, n + 1);
            int64_t *ne = ARENA_ARRAY(cx->arena, int64_t, n + 1);
            sessions(v, n, true, s->gap, os, oe);
            sk->new_end = sessions(v, n, false, s->gap, ns, ne);
            for (int i = 0; i < n; i++) {
                const SRow *r = v[i];
                int64_t old = r->touched ? r->old : r->count;
                if (r->count < 0)
                    return sl_error(cx->err, ERRCODE_INTERNAL_ERROR,
                                    "session window: a row is retracted more often than it "
                                    "was inserted");
                bool same = old > 0 && r->count > 0 && os[i] == ns[i] && oe[i] == ne[i];
                if (same) {
                    if (r->count != old)
                        emit_row(op, &out, r, r->count - old, ns[i], ne[i], cx->arena);
                    continue;
                }
                if (old > 0)
                    emit_row(op, &out, r, -old, os[i], oe[i], cx->arena);
                if (r->count > 0)
                    emit_row(op, &out, r, r->count, ns[i], ne[i], cx->arena);
            }
        }
        if (out.rows.nrows > 0 && eng_emit(op, &out, cx) < 0)
            return -1;
    }
    return op->out_time.n > 0 && s->wm > INT64_MIN ? eng_emit_watermark(op, s->wm, cx) : 0;
}

/* ------------------------------------------------------ checkpoint, restore */

static void index_key(const EngOp *op, int64_t end, const SKey *sk, StrBuf *k)
{
    uint8_t tk[8];
    put_time_key(tk, end);
    key_prefix(op, 'e', NULL, 0, k);
    strbuf_append(k, tk, 8);
    strbuf_append(k, sk->gk, sk->gklen);
}

/* Deletes cached row r of sk from the store (when stored). */
static void row_delete(EngOp *op, Sess *s, const SKey *sk, SRow *r, StrBuf *k, EngCtx *cx)
{
    if (!r->stored)
        return;
    key_prefix(op, 'r', sk->gk, sk->gklen, k);
    strbuf_append(k, r->rk, r->rklen);
    state_batch_delete(cx->wb, k->data, k->len);
    s->stats.st.rows--;
    s->stats.st.bytes -= r->sbytes;
    r->stored = false;
    s->stats.dirty = true;
}

/* The watermark moved past closed_wm: deletes the rows of every session
 * it closes (end <= wm + offset): in the cache's keys, each one's closed
 * sessions (and its index entry when its last one closed); in the store,
 * every other key whose last session closed (the index, in end order).
 * Records the watermark under 'w'; drops the cache when it evicted from
 * it. */
static int evict(EngOp *op, Sess *s, EngCtx *cx)
{
    int64_t limit = eng_time_add(s->wm, s->toff);
    StrBuf k, p;
    strbuf_init(&k);
    strbuf_init(&p);
    bool evicted_cached = false;
    for (uint32_t i = 0; i < s->keys.cap; i++) {
        SKey *sk = s->keys.slots[i].value;
        if (s->keys.slots[i].key == NULL)
            continue;
        int n;
        SRow **v = rows_sorted(sk, cx->arena, &n);
        int64_t *ss = ARENA_ARRAY(cx->arena, int64_t, n + 1);
        int64_t *se = ARENA_ARRAY(cx->arena, int64_t, n + 1);
        sessions(v, n, false, s->gap, ss, se);
        for (int j = 0; j < n; j++) {
            if (v[j]->count <= 0 || se[j] > limit)
                continue;
            row_delete(op, s, sk, v[j], &k, cx);
            v[j]->count = 0;
            s->stats.st.evicted++;
            evicted_cached = true;
        }
        if (sk->last_end != INT64_MIN && sk->last_end <= limit) {
            index_key(op, sk->last_end, sk, &k);
            state_batch_delete(cx->wb, k.data, k.len);
            sk->last_end = INT64_MIN;
        }
    }
    key_prefix(op, 'e', NULL, 0, &p);
    StateScan *sc = state_scan_open(cx->st, p.data, p.len);
    const void *key, *val;
    size_t klen, vlen;
    int rc = 0;
    while (state_scan_next(sc, &key, &klen, &val, &vlen)) {
        if (klen < p.len + 8) {
            rc = corrupt(cx->err);
            break;
        }
        const uint8_t *gk = (const uint8_t *)key + p.len + 8;
        size_t gklen = klen - p.len - 8;
        if (get_time_key((const uint8_t *)key + p.len) > limit)
            break;
        if (eng_map_find(&s->keys, gklen ? (const void *)gk : "", gklen) != NULL)
            continue;           /* the cache's is the newer: above */
        state_batch_delete(cx->wb, key, klen);
        key_prefix(op, 'r', gk, (uint32_t)gklen, &k);
        StateScan *rs = state_scan_open(cx->st, k.data, k.len);
        const void *rkey, *rval;
        size_t rklen, rvlen;
        while (state_scan_next(rs, &rkey, &rklen, &rval, &rvlen)) {
            state_batch_delete(cx->wb, rkey, rklen);
            s->stats.st.rows--;
            s->stats.st.bytes -= (int64_t)(rklen + rvlen);
            s->stats.st.evicted++;
            s->stats.dirty = true;
        }
        if (state_scan_close(rs, cx->err) < 0) {
            rc = -1;
            break;
        }
    }
    if (state_scan_close(sc, rc < 0 ? NULL : cx->err) < 0)
        rc = -1;
    strbuf_free(&k);
    strbuf_free(&p);
    if (rc < 0)
        return -1;
    eng_bound_put(op, cx, 'w', s->wm);
    s->closed_wm = s->wm;
    if (evicted_cached)
        drop_cache(s);
    return 0;
}

static int sess_checkpoint(EngOp *op, EngCtx *cx)
{
    Sess *s = op->self;
    if (load_committed(op, s, cx) < 0)
        return -1;
    StrBuf k, v;
    strbuf_init(&k);
    strbuf_init(&v);
    for (int t = 0; t < s->ntouched; t++) {
        SKey *sk = s->touched[t];
        for (uint32_t i = 0; i < sk->rows.cap; i++) {
            SRow *r = sk->rows.slots[i].value;
            if (sk->rows.slots[i].key == NULL || !r->touched)
                continue;
            r->touched = false;
            if (r->count == 0) {
                row_delete(op, s, sk, r, &k, cx);
                continue;
            }
            key_prefix(op, 'r', sk->gk, sk->gklen, &k);
            strbuf_append(&k, r->rk, r->rklen);
            strbuf_reset(&v);
            strbuf_append(&v, &r->count, 8);
            row_encode(r->row, 0, &v);
            state_batch_put(cx->wb, k.data, k.len, v.data, v.len);
            if (r->stored) {
                s->stats.st.bytes -= r->sbytes;
            } else {
                s->stats.st.rows++;
                r->stored = true;
            }
            r->sbytes = (uint32_t)(k.len + v.len);
            s->stats.st.bytes += r->sbytes;
            s->stats.dirty = true;
        }
        if (sk->new_end != sk->last_end) {
            if (sk->last_end != INT64_MIN) {
                index_key(op, sk->last_end, sk, &k);
                state_batch_delete(cx->wb, k.data, k.len);
            }
            if (sk->new_end != INT64_MIN) {
                index_key(op, sk->new_end, sk, &k);
                state_batch_put(cx->wb, k.data, k.len, "", 0);
            }
            sk->last_end = sk->new_end;
        }
        sk->touched = false;
    }
    s->ntouched = 0;
    strbuf_free(&k);
    strbuf_free(&v);
    if (s->timed && s->wm > INT64_MIN && s->wm > s->closed_wm && evict(op, s, cx) < 0)
        return -1;
    eng_stats_flush(op, cx, &s->stats);
    return 0;
}

static int sess_restore(EngOp *op, EngCtx *cx)
{
    SL_UNUSED(cx);
    Sess *s = op->self;
    drop_cache(s);
    s->wm = INT64_MIN;
    s->closed_loaded = s->st_loaded = s->stats.dirty = false;
    return 0;
}

static void sess_stats(const EngOp *op, EngOpStats *out)
{
    const Sess *s = op->self;
    *out = s->stats.st;
}

static void sess_explain(const EngOp *op, StrBuf *out)
{
    const Sess *s = op->self;
    strbuf_puts(out, "Session window: ");
    plan_expr_deparse(s->time, op->in_cols[0], NULL, out);
    if (s->ngroups > 0) {
        strbuf_puts(out, " per ");
        for (int c = 0; c < s->ngroups; c++) {
            if (c)
                strbuf_puts(out, ", ");
            plan_expr_deparse(s->groups[c], op->in_cols[0], NULL, out);
        }
    }
    strbuf_printf(out, ", gap %lld us", (long long)s->gap);
    strbuf_puts(out, s->timed ? " (state: evicts by watermark)" : " (state: unbounded)");
}

static void sess_free(EngOp *op)
{
    Sess *s = op->self;
    drop_cache(s);
    eng_map_free(&s->keys);
    arena_destroy(&s->cache);
    sl_free(s->touched);
}

static const EngOpVt session_vt = {
    .kind = "session",
    .push = sess_push,
    .watermark = sess_watermark,
    .flush = sess_flush,
    .checkpoint = sess_checkpoint,
    .restore = sess_restore,
    .stats = sess_stats,
    .explain = sess_explain,
    .free = sess_free,
};

EngOp *eng_op_session_new(const ColumnDesc *in, int nin, Expr *const *groups, int ngroups,
                          const Expr *time, int64_t gap_us, const EngEdgeTime *in_time,
                          SlError *err)
{
    if (gap_us <= 0 || time == NULL ||
        (time->type.id != TYPE_TIMESTAMP && time->type.id != TYPE_TIMESTAMPTZ)) {
        sl_error(err, ERRCODE_INTERNAL_ERROR, "a session operator needs a time and a gap");
        return NULL;
    }
    EngOp *op = eng_op_new(&session_vt, 1, sizeof(Sess));
    Sess *s = op->self;
    s->groups = groups;
    s->ngroups = ngroups;
    s->time = time;
    s->gap = gap_us;
    s->itypes = ARENA_ARRAY(&op->arena, SlType, nin + 1);
    for (int c = 0; c < nin; c++)
        s->itypes[c] = in[c].type;
    ColumnDesc *out = ARENA_ARRAY(&op->arena, ColumnDesc, nin + 2);
    memcpy(out, in, sizeof(ColumnDesc) * (size_t)nin);
    out[nin] = (ColumnDesc){"window_start", time->type};
    out[nin + 1] = (ColumnDesc){"window_end", time->type};
    arena_init(&s->cache, 16384);
    eng_map_init(&s->keys, &s->cache);
    op->in_cols[0] = in;
    op->in_ncols[0] = nin;
    op->out_cols = out;
    op->out_ncols = nin + 2;
    s->wm = s->closed_wm = INT64_MIN;
    if (in_time != NULL) {
        op->in_time[0] = *in_time;
        for (int i = 0; i < in_time->n; i++)
            if (time->kind == EXPR_COLUMN && in_time->cols[i].col == time->index) {
                s->timed = true;
                s->toff = in_time->cols[i].offset_us;
            }
    }
    if (s->timed) {
        op->out_time.n = 1;
        op->out_time.cols[0] = (EngTimeCol){nin + 1, eng_time_add(s->toff, 1)};
    }
    op->bound = s->timed ? ENG_BOUND_WATERMARK : ENG_BOUND_UNBOUNDED;
    return op;
}
