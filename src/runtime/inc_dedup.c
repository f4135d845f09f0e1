/*
 * inc_dedup.c -- SELECT DISTINCT and SELECT DISTINCT ON (keys) over a
 * stream, with bounded state (docs/engine.md, "Deduplication").
 *
 *   inc_dedup_check, inc_dedup_rows, inc_dedup_evict
 *
 * The first row of each distinct key is emitted (append mode: the result
 * is an append log, or the INTO stream); later rows with that key are
 * dropped while the key is in state.  State: one key per distinct key,
 *     'Q' + query oid + time (8) + ex_key_encode(distinct columns)
 * with, under state_ttl, the batch time the key was last seen as value.
 * Two ways to bound it, one of which CREATE requires:
 *   - the distinct columns include the stream's event-time column (the
 *     one with a WATERMARK): the time in the key is that column, a key
 *     leaves the state once the watermark passes its time, and a row whose
 *     time is at or below the watermark the batch is judged by is late (its
 *     key may have left the state already, so it could not be told apart
 *     from a first occurrence);
 *   - state_ttl: the time in the key is 0; a key not seen for state_ttl of
 *     batch time (the time the batch was planned, logged in the offset log,
 *     so a replay evicts the same keys) leaves the state, and the next row
 *     with that key is emitted again.
 */
#include "inc_int.h"

int inc_dedup_check(IncPlan *p, SlError *err)
{
    const Plan *d = p->distinct;
    p->dedup_time_col = -1;
    if (p->mode != MODE_APPEND) {
        sl_error(err, ERRCODE_FEATURE_NOT_SUPPORTED,
                 "DISTINCT on a stream runs in append mode only");
        sl_error_hint(err, "Use output_mode = 'append' (the default without GROUP BY).");
        return -1;
    }
    for (int k = 0; k < d->u.distinct.nkeys; k++) {
        int col = d->u.distinct.keys[k];
        const Plan *child = d->child;
        const ColumnDesc *c = &child->cols[col];
        if ((c->type.id == TYPE_TIMESTAMP || c->type.id == TYPE_TIMESTAMPTZ) &&
            p->wm_col >= 0 && inc_trace_column(p, 0, col) == p->wm_col)
            p->dedup_time_col = col;
    }
    if (p->dedup_time_col >= 0 || p->ttl_us > 0)
        return 0;
    sl_error(err, ERRCODE_FEATURE_NOT_SUPPORTED,
             "DISTINCT on a stream needs a bound on its state");
    if (p->wm_col >= 0)
        sl_error_hint(err, "Include the event-time column \"%s\" in the DISTINCT columns, so the "
                           "watermark evicts keys, or set state_ttl = '...' in WITH (...).",
                      p->stream->cols[p->wm_col].name);
    else
        sl_error_hint(err, "Declare a WATERMARK on stream \"%s\" and include its column in the "
                           "DISTINCT columns, or set state_ttl = '...' in WITH (...).",
                      p->stream->name);
    return -1;
}

/* The rows of in (the DISTINCT's input) whose key is new go through the
 * upper chain to the output; late gets the late rows. */
int inc_dedup_rows(Run *r, const Batch *in, uint8_t *late)
{
    IncPlan *p = r->p;
    const Plan *d = p->distinct;
    uint32_t n = in->nrows;
    memset(late, 0, n ? n : 1);
    if (n == 0)
        return 0;
    int nk = d->u.distinct.nkeys;
    Vector *kcols = ARENA_ARRAY(r->chunk, Vector, nk > 0 ? nk : 1);
    for (int k = 0; k < nk; k++)
        kcols[k] = in->cols[d->u.distinct.keys[k]];
    uint32_t *sel = ARENA_ARRAY(r->chunk, uint32_t, n);
    uint32_t m = 0;
    StrBuf key;
    strbuf_init(&key);
    int rc = 0;
    for (uint32_t row = 0; row < n; row++) {
        int64_t t = 0;
        if (p->dedup_time_col >= 0) {
            const Vector *tv = &in->cols[p->dedup_time_col];
            /* A NULL time: deduplicated within its batch only. */
            t = vector_is_null(tv, row) ? INT64_MIN : tv->v.i64[row];
            if (t != INT64_MIN && r->b->has_watermark && t <= r->b->watermark_us) {
                late[row] = 1;
                continue;
            }
        }
        strbuf_reset(&key);
        uint8_t tk[8];
        inc_time_key_put(tk, t);
        strbuf_append(&key, tk, 8);
        ex_key_encode(kcols, nk, row, &key);
        Group *g = inc_gt_load(r, key.data, key.len);
        if (g == NULL) {
            rc = -1;
            break;
        }
        g->touched_us = r->b->now_us;
        if (g->absent) {
            g->absent = false;
            g->wend = t;
            sel[m++] = row;
            if (t == INT64_MIN) {
                g->evict = true;    /* NULL time: kept for this batch only */
            } else {
                g->dirty = true;
                r->groups.created++;
            }
        } else if (p->ttl_us > 0) {
            g->dirty = true;    /* seen again: idle from now */
        }
    }
    strbuf_free(&key);
    if (rc < 0 || m == 0)
        return rc;
    ExBatch eb = {*in, sel, m};
    const Batch *first = ex_batch_compact(r->chunk, &eb);
    return inc_emit_rows(r, first);
}

int inc_dedup_evict(Run *r, bool has_to, int64_t to)
{
    IncPlan *p = r->p;
    if (p->dedup_time_col >= 0 && has_to) {
        /* Keys at or below the watermark go, in state or new in this batch. */
        if (inc_load_closed(r, to) < 0)
            return -1;
        for (Group *g = r->groups.all; g != NULL; g = g->all)
            if (!g->absent && !g->evict && g->wend <= to) {
                g->evict = true;
                inc_state_delete(r, g, true);
            }
    }
    if (p->ttl_us > 0 && inc_evict_idle(r) < 0)
        return -1;
    inc_write_states(r);
    return 0;
}
