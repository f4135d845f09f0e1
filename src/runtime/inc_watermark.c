/*
 * inc_watermark.c -- the watermark of a partitioned source, with idle
 * partitions (docs/engine.md, "Partitions and idle sources").
 *
 *   inc_wm_begin, inc_wm_observe, inc_wm_finish
 *
 * Used when the stream has partitions = N > 1 or an idle_timeout.  Per
 * partition the engine keeps the largest event time seen and the batch time
 * a row of it was last read; they are stored with the state under
 *     'M' + query oid + 'P'  ->  per partition: seen (1), max event time (8),
 *                                last active batch time (8)
 * in the batch's WriteBatch, so a replayed batch starts from the same
 * figures (and its batch time is the logged one).  After a batch:
 *   - a partition is idle when it has no rows, or its last row came
 *     idle_timeout or more of batch time ago (never idle without an
 *     idle_timeout);
 *   - the watermark is the minimum over the partitions that are not idle of
 *     (their max event time - delay), or, when every partition is idle, the
 *     maximum over all; a partition that never had a row holds the
 *     watermark back until it is idle (idle_timeout after the query's
 *     first batch);
 *   - it never goes backwards.
 * b->wake_at_us is the batch time at which a partition that now holds the
 * watermark back turns idle: the scheduler runs an empty batch then, so a
 * window closes even when no more rows come.
 */
#include "inc_int.h"

int inc_wm_begin(Run *r)
{
    IncPlan *p = r->p;
    int n = p->parts.n;
    r->pseen = arena_zalloc(r->a, (size_t)n);
    r->pmax = ARENA_ARRAY(r->a, int64_t, n);
    r->pactive = ARENA_ARRAY(r->a, int64_t, n);
    r->pnow = arena_zalloc(r->a, (size_t)n);
    for (int i = 0; i < n; i++) {
        r->pmax[i] = INT64_MIN;
        r->pactive[i] = INT64_MIN;
    }
    uint8_t key[6];
    memcpy(key, p->meta_key, 5);
    key[5] = 'P';
    void *val;
    size_t vlen;
    int rc = state_get(p->st, key, sizeof(key), r->a, &val, &vlen, r->err);
    if (rc <= 0)
        return rc;
    if (vlen != (size_t)n * 17)
        return sl_error(r->err, ERRCODE_DATA_CORRUPTED, "state of query \"%s\" is corrupt",
                        p->query->name);
    const uint8_t *v = val;
    for (int i = 0; i < n; i++, v += 17) {
        r->pseen[i] = v[0];
        r->pmax[i] = (int64_t)get_be64(v + 1);
        r->pactive[i] = (int64_t)get_be64(v + 9);
    }
    return 0;
}

void inc_wm_observe(Run *r, const Batch *in)
{
    IncPlan *p = r->p;
    uint32_t *part = ARENA_ARRAY(r->chunk, uint32_t, in->nrows ? in->nrows : 1);
    source_route(&p->parts, in, part);
    const Vector *v = &in->cols[p->wm_col];
    for (uint32_t i = 0; i < in->nrows; i++) {
        uint32_t k = part[i];
        r->pnow[k] = 1;
        if (!vector_is_null(v, i) && (!r->pseen[k] || v->v.i64[i] > r->pmax[k])) {
            r->pseen[k] = 1;
            r->pmax[k] = v->v.i64[i];
        }
    }
}

void inc_wm_finish(Run *r, Meta *meta)
{
    IncPlan *p = r->p;
    IncBatch *b = r->b;
    int n = p->parts.n;
    int64_t now = b->now_us, idle = p->parts.idle_us;
    /* The first batch starts every partition's clock. */
    for (int i = 0; i < n; i++)
        if (r->pnow[i] || r->pactive[i] == INT64_MIN)
            r->pactive[i] = now;
    bool any_active = false, blocked = false;
    int64_t lo = INT64_MAX, hi = INT64_MIN;
    b->wake_at_us = INT64_MAX;
    for (int i = 0; i < n; i++) {
        bool is_idle = idle > 0 && now - r->pactive[i] >= idle;
        if (r->pseen[i] && r->pmax[i] > hi)
            hi = r->pmax[i];
        if (is_idle)
            continue;
        any_active = true;
        if (!r->pseen[i])
            blocked = true;     /* no rows yet: holds the watermark back */
        else if (r->pmax[i] < lo)
            lo = r->pmax[i];
        if (idle > 0 && r->pactive[i] + idle < b->wake_at_us)
            b->wake_at_us = r->pactive[i] + idle;
    }
    int64_t cand = any_active ? (blocked ? INT64_MIN : lo) : hi;
    if (cand != INT64_MIN && cand != INT64_MAX) {
        int64_t wm = cand - p->wm_delay_us;
        if (!b->next_has_watermark || wm > b->next_watermark_us) {
            b->next_has_watermark = true;
            b->next_watermark_us = wm;
        }
    }
    uint8_t key[6];
    memcpy(key, p->meta_key, 5);
    key[5] = 'P';
    uint8_t *v = arena_alloc(r->a, (size_t)n * 17);
    for (int i = 0; i < n; i++) {
        v[i * 17] = r->pseen[i];
        put_be64(v + i * 17 + 1, (uint64_t)r->pmax[i]);
        put_be64(v + i * 17 + 9, (uint64_t)r->pactive[i]);
    }
    state_batch_put(r->wb, key, sizeof(key), v, (size_t)n * 17);
    SL_UNUSED(meta);
}
