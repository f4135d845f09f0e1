/*
 * inc_watermark.c -- the watermark of a partitioned source, with idle
 * partitions (docs/engine.md, "Partitions and idle sources").
 *
 *   inc_wm_begin, inc_wm_observe, inc_wm_finish
 *   inc_wm_inputs_begin, inc_wm_inputs_observe, inc_wm_inputs_finish
 *                      the same for each input of a query over several
 *                      (joins, UNION ALL) whose stream is partitioned
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
 * A query over several inputs keeps this per input whose stream has
 * partitions or an idle_timeout (under 'M' + query oid + 'P' + input
 * number); the input's watermark is then this one, and the query's the
 * minimum over its inputs (incremental.c).
 * b->wake_at_us is the batch time at which a partition that now holds the
 * watermark back turns idle: the scheduler runs an empty batch then, so a
 * window closes even when no more rows come.
 */
#include "inc_int.h"

/* One source's partitions: what is kept per partition, loaded at the start
 * of a batch and stored with its state. */
typedef struct PartWm {
    const SourceParts *parts;
    int                wm_col;
    int64_t            delay_us;
    uint8_t            key[7];
    size_t             klen;
    uint8_t           *pseen, *pnow;
    int64_t           *pmax, *pactive;
} PartWm;

static int pw_load(Run *r, PartWm *w)
{
    int n = w->parts->n;
    w->pseen = arena_zalloc(r->a, (size_t)n);
    w->pmax = ARENA_ARRAY(r->a, int64_t, n);
    w->pactive = ARENA_ARRAY(r->a, int64_t, n);
    w->pnow = arena_zalloc(r->a, (size_t)n);
    for (int i = 0; i < n; i++) {
        w->pmax[i] = INT64_MIN;
        w->pactive[i] = INT64_MIN;
    }
    void *val;
    size_t vlen;
    int rc = state_get(r->p->st, w->key, w->klen, r->a, &val, &vlen, r->err);
    if (rc <= 0)
        return rc;
    if (vlen != (size_t)n * 17)
        return sl_error(r->err, ERRCODE_DATA_CORRUPTED, "state of query \"%s\" is corrupt",
                        r->p->query->name);
    const uint8_t *v = val;
    for (int i = 0; i < n; i++, v += 17) {
        w->pseen[i] = v[0];
        w->pmax[i] = (int64_t)get_be64(v + 1);
        w->pactive[i] = (int64_t)get_be64(v + 9);
    }
    return 0;
}

static void pw_observe(Run *r, PartWm *w, const Batch *in)
{
    uint32_t *part = ARENA_ARRAY(r->chunk, uint32_t, in->nrows ? in->nrows : 1);
    source_route(w->parts, in, part);
    const Vector *v = &in->cols[w->wm_col];
    for (uint32_t i = 0; i < in->nrows; i++) {
        uint32_t k = part[i];
        w->pnow[k] = 1;
        if (!vector_is_null(v, i) && (!w->pseen[k] || v->v.i64[i] > w->pmax[k])) {
            w->pseen[k] = 1;
            w->pmax[k] = v->v.i64[i];
        }
    }
}

/* The watermark the partitions allow (false: none yet); lowers *wake_at
 * to when a partition holding it back turns idle; stores the figures. */
static bool pw_finish(Run *r, PartWm *w, int64_t *wm, int64_t *wake_at)
{
    int n = w->parts->n;
    int64_t now = r->b->now_us, idle = w->parts->idle_us;
    /* The first batch starts every partition's clock. */
    for (int i = 0; i < n; i++)
        if (w->pnow[i] || w->pactive[i] == INT64_MIN)
            w->pactive[i] = now;
    bool any_active = false, blocked = false;
    int64_t lo = INT64_MAX, hi = INT64_MIN;
    for (int i = 0; i < n; i++) {
        bool is_idle = idle > 0 && now - w->pactive[i] >= idle;
        if (w->pseen[i] && w->pmax[i] > hi)
            hi = w->pmax[i];
        if (is_idle)
            continue;
        any_active = true;
        if (!w->pseen[i])
            blocked = true;     /* no rows yet: holds the watermark back */
        else if (w->pmax[i] < lo)
            lo = w->pmax[i];
        if (idle > 0 && w->pactive[i] + idle < *wake_at)
            *wake_at = w->pactive[i] + idle;
    }
    uint8_t *v = arena_alloc(r->a, (size_t)n * 17);
    for (int i = 0; i < n; i++) {
        v[i * 17] = w->pseen[i];
        put_be64(v + i * 17 + 1, (uint64_t)w->pmax[i]);
        put_be64(v + i * 17 + 9, (uint64_t)w->pactive[i]);
    }
    state_batch_put(r->wb, w->key, w->klen, v, (size_t)n * 17);
    int64_t cand = any_active ? (blocked ? INT64_MIN : lo) : hi;
    if (cand == INT64_MIN || cand == INT64_MAX)
        return false;
    *wm = cand - w->delay_us;
    return true;
}

/* The plan's one stream. */
static PartWm plain_pw(Run *r)
{
    IncPlan *p = r->p;
    PartWm w = {&p->parts, p->wm_col, p->wm_delay_us, {0}, 6, r->pseen, r->pnow, r->pmax,
                r->pactive};
    memcpy(w.key, p->meta_key, 5);
    w.key[5] = 'P';
    return w;
}

int inc_wm_begin(Run *r)
{
    PartWm w = plain_pw(r);
    int rc = pw_load(r, &w);
    r->pseen = w.pseen;
    r->pnow = w.pnow;
    r->pmax = w.pmax;
    r->pactive = w.pactive;
    return rc;
}

void inc_wm_observe(Run *r, const Batch *in)
{
    PartWm w = plain_pw(r);
    pw_observe(r, &w, in);
}

void inc_wm_finish(Run *r, Meta *meta)
{
    IncBatch *b = r->b;
    PartWm w = plain_pw(r);
    int64_t wm;
    b->wake_at_us = INT64_MAX;
    if (pw_finish(r, &w, &wm, &b->wake_at_us) &&
        (!b->next_has_watermark || wm > b->next_watermark_us)) {
        b->next_has_watermark = true;
        b->next_watermark_us = wm;
    }
    SL_UNUSED(meta);
}

int inc_wm_inputs_begin(Run *r)
{
    IncPlan *p = r->p;
    r->in_pw = ARENA_ARRAY(r->a, PartWm, p->ins.n);
    for (int i = 0; i < p->ins.n; i++) {
        PartWm *w = &r->in_pw[i];
        memset(w, 0, sizeof(*w));
        if (!p->in_part_wm[i])
            continue;
        w->parts = &p->in_parts[i];
        w->wm_col = p->ins.in[i].wm_col;
        w->delay_us = p->ins.in[i].wm_delay_us;
        memcpy(w->key, p->meta_key, 5);
        w->key[5] = 'P';
        w->key[6] = (uint8_t)i;
        w->klen = 7;
        if (pw_load(r, w) < 0)
            return -1;
    }
    return 0;
}

void inc_wm_inputs_observe(void *run, int i, const Batch *in)
{
    Run *r = run;
    if (r->in_pw != NULL && r->in_pw[i].parts != NULL)
        pw_observe(r, &r->in_pw[i], in);
}

void inc_wm_inputs_finish(Run *r, Meta *meta)
{
    IncPlan *p = r->p;
    r->b->wake_at_us = INT64_MAX;
    for (int i = 0; i < p->ins.n; i++) {
        int64_t wm;
        if (r->in_pw[i].parts == NULL || !pw_finish(r, &r->in_pw[i], &wm, &r->b->wake_at_us))
            continue;
        if (!meta->in_has_wm[i] || wm > meta->in_wm[i]) {
            meta->in_has_wm[i] = true;
            meta->in_wm[i] = wm;
        }
    }
}
