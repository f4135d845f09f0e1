/*
 * inc_session.c -- SESSION(ts, gap) session windows, incrementally
 * (docs/engine.md, "Session windows").
 *
 *   inc_session_aggregate, inc_session_emit
 *
 * A session of a group key is [first row, last row + gap): a row at t
 * belongs to every session that [t, t + gap) overlaps -- the batch engine's
 * rule (op_agg.c), so a session's bounds do not depend on the order rows
 * arrive in.  State: one key per session,
 *     'Q' + query oid + group key (ex_key_encode) + session start (8)
 * whose value holds the session's end, its group values and its aggregate
 * states, and an index entry by end,
 *     'Q' + query oid + 0xFF + session end (8) + group key + start (8)
 * (an encoded group key starts with 0 or 1, so the two never mix), so the
 * sessions a watermark closes are found by a range scan from the previous
 * watermark, past the tombstones of sessions closed before.  On the first row of a group key in a batch, that key's sessions
 * are read with one prefix scan.  A row that overlaps no session starts
 * one; one that overlaps several merges them into the earliest (AggFunc
 * merge), and the others are deleted -- from the state and, in update and
 * complete mode, from the result table.  A session whose start moves gets a
 * new key; its old key and result row go.
 *
 * A row is late when its event time is below the watermark the batch is
 * judged by: a session that ended at or before the watermark may already be
 * emitted and gone, and only rows at or after the watermark are sure not to
 * reach one.  Emission:
 *   append: a session is emitted once, when the watermark reaches its end,
 *     and its state deleted; every batch reads the index entries with an
 *     end in (watermark before, watermark after];
 *   update, complete: every session this batch changed; a session the
 *     watermark has passed leaves the state (its row stays).
 * SUBSCRIBE: a session merged away, and the old key of one whose start
 * moved, are 'D' changes (the row the result table had); a new session and
 * a moved one's new key are inserts (Group.fresh), the others updates.
 * INTO a Kafka sink keyed on the group key and the window (update,
 * complete mode): a session merged away, and one whose window_start or
 * window_end moved where the key holds it, is a tombstone for the key it
 * had, in the batch's transaction before the new rows (inc_emit_deletes).
 */
#include "inc_int.h"

#include "sluice/relstore.h"

/* The sessions of one group key in this batch: live, and merged away. */
typedef struct SessList {
    Group  **s, **dead;
    uint32_t n, cap, ndead, capdead;
} SessList;

/* Session g's key: group key + start. */
static void set_key(Run *r, Group *g, const char *gk, size_t gklen)
{
    char *k = arena_alloc(r->a, gklen + 8);
    memcpy(k, gk, gklen);
    inc_time_key_put((uint8_t *)k + gklen, g->wstart);
    g->key.ptr = k;
    g->key.len = (uint32_t)(gklen + 8);
}

/* The holder of group key gk's sessions (a Group in r->groups keyed by gk
 * whose ext is a SessList), loaded from state on first touch. */
static SessList *sessions_of(Run *r, const char *gk, size_t gklen)
{
    IncPlan *p = r->p;
    Group *h = inc_gt_find(&r->groups, gk, gklen, ex_hash(gk, gklen));
    if (h != NULL)
        return h->ext;
    h = ARENA_NEW(r->a, Group);
    h->key.ptr = arena_memdup(r->a, gk, gklen);
    h->key.len = (uint32_t)gklen;
    h->absent = true;   /* a holder, not a group: never written */
    SessList *l = ARENA_NEW(r->a, SessList);
    h->ext = l;
    inc_gt_add(&r->groups, r->a, h);
    StrBuf prefix;
    strbuf_init(&prefix);
    strbuf_append(&prefix, p->qprefix, sizeof(p->qprefix));
    strbuf_append(&prefix, gk, gklen);
    StateScan *s = state_scan_open(p->st, prefix.data, prefix.len);
    strbuf_free(&prefix);
    const void *k, *v;
    size_t klen, vlen;
    while (state_scan_next(s, &k, &klen, &v, &vlen)) {
        if (klen != 5 + gklen + 8)
            continue;
        Group *g = ARENA_NEW(r->a, Group);
        g->key.ptr = arena_memdup(r->a, (const char *)k + 5, gklen + 8);
        g->key.len = (uint32_t)(gklen + 8);
        g->wstart = inc_time_key_get((const uint8_t *)k + 5 + gklen);
        g->states = inc_states_new(r);
        g->orig = g->key;
        if (inc_state_decode(p, g, v, vlen, &r->acx) < 0) {
            state_scan_close(s, r->err);
            return NULL;
        }
        g->orig_end = g->wend;
        inc_push_group(r->a, &l->s, &l->n, &l->cap, g);
    }
    if (state_scan_close(s, r->err) < 0)
        return NULL;
    return l;
}

/* A new session [t, end) with the group values of row `row`. */
static Group *session_new(Run *r, int64_t t, int64_t end, const Vector *gcols, int ng,
                          uint32_t row)
{
    Group *g = ARENA_NEW(r->a, Group);
    g->wstart = t;
    g->wend = end;
    g->states = inc_states_new(r);
    inc_groupvals_set(r, g, gcols, ng, row);
    return g;
}

/* The session row t of group key gk goes to: the sessions [t, t + gap)
 * overlaps become one (the first, extended), or a new one starts. */
static Group *session_for(Run *r, SessList *l, const char *gk, size_t gklen, int64_t t,
                          const Vector *gcols, int ng, uint32_t row)
{
    IncPlan *p = r->p;
    int64_t end;
    if (__builtin_add_overflow(t, p->gap_us, &end))
        end = INT64_MAX - 1;
    Group *into = NULL;
    uint32_t keep = 0;
    for (uint32_t i = 0; i < l->n; i++) {
        Group *g = l->s[i];
        if (g->wstart < end && t < g->wend) {
            if (into == NULL) {
                into = g;
            } else {
                /* A row that bridges two sessions merges them. */
                if (inc_states_merge(r, into->states, g->states) < 0)
                    return NULL;
                into->wstart = SL_MIN(into->wstart, g->wstart);
                into->wend = SL_MAX(into->wend, g->wend);
                g->evict = true;
                inc_push_group(r->a, &l->dead, &l->ndead, &l->capdead, g);
                continue;
            }
        }
        l->s[keep++] = g;
    }
    l->n = keep;
    if (into == NULL) {
        into = session_new(r, t, end, gcols, ng, row);
        inc_push_group(r->a, &l->s, &l->n, &l->cap, into);
    } else {
        into->wstart = SL_MIN(into->wstart, t);
        into->wend = SL_MAX(into->wend, end);
    }
    into->dirty = true;
    set_key(r, into, gk, gklen);
    return into;
}

int inc_session_aggregate(Run *r, const Batch *in, const Vector *tv, const Vector *gcols,
                          Vector *const *args, uint8_t *const *take, uint8_t *late)
{
    IncPlan *p = r->p;
    const Plan *agg = p->agg;
    int ng = agg->u.agg.ngroups, na = agg->u.agg.naggs;
    uint32_t n = in->nrows;
    uint8_t **st = ARENA_ARRAY(r->chunk, uint8_t *, n ? n : 1);
    StrBuf gk;
    strbuf_init(&gk);
    int rc = 0;
    for (uint32_t row = 0; row < n && rc == 0; row++) {
        if (vector_is_null(tv, row))
            continue;   /* no session: not late, just not counted */
        int64_t t = tv->v.i64[row];
        if (r->b->has_watermark && t < r->b->watermark_us) {
            late[row] = 1;
            continue;
        }
        strbuf_reset(&gk);
        ex_key_encode(gcols, ng, row, &gk);
        const char *gkp = gk.data ? gk.data : "";  /* no group key: empty */
        SessList *l = sessions_of(r, gkp, gk.len);
        Group *g = l ? session_for(r, l, gkp, gk.len, t, gcols, ng, row) : NULL;
        if (g == NULL) {
            rc = -1;
            break;
        }
        /* One row into its session: rows of a batch may merge sessions
         * between them, so each goes on its own. */
        for (int i = 0; i < na && rc == 0; i++) {
            if (!take[i][row])
                continue;
            st[row] = g->states + p->state_off[i];
            r->acx.type = agg->u.agg.aggs[i].type;
            if (p->fns[i]->update(&r->acx, args[i], st, &row, 1) < 0)
                rc = -1;
        }
    }
    strbuf_free(&gk);
    return rc;
}

/* Deletes the result row under g's stored key (update, complete mode),
 * and tells SUBSCRIBE (a 'D' change with the row it had). */
static int result_delete(Run *r, const SlStr *key)
{
    if (r->p->into != NULL || r->p->sink != NULL || r->p->mode == MODE_APPEND)
        return 0;
    StrBuf k;
    strbuf_init(&k);
    strbuf_append(&k, r->p->tprefix, sizeof(r->p->tprefix));
    strbuf_append(&k, key->ptr, key->len);
    int rc = inc_record_delete(r, &k);
    tbl_delete(r->wb, &k);
    strbuf_free(&k);
    return rc;
}

/* Puts (or deletes) the index entry of the session stored under key with
 * end `end`. */
static void index_entry(Run *r, int64_t end, const SlStr *key, bool put)
{
    StrBuf k;
    strbuf_init(&k);
    strbuf_append(&k, r->p->qprefix, sizeof(r->p->qprefix));
    strbuf_putc(&k, (char)0xFF);
    uint8_t tk[8];
    inc_time_key_put(tk, end);
    strbuf_append(&k, tk, 8);
    strbuf_append(&k, key->ptr, key->len);
    if (put)
        state_batch_put(r->wb, k.data, k.len, "", 0);
    else
        state_batch_delete(r->wb, k.data, k.len);
    r->dbytes += put ? (int64_t)k.len : -(int64_t)k.len;
    strbuf_free(&k);
}

/* INTO a keyed Kafka sink (update, complete mode): the sessions whose
 * stored row left the sink's key space this batch, as they were stored
 * (copies: their stored key and end), for tombstones (inc_emit_deletes). */
typedef struct Gone {
    bool     on;            /* a sink that takes deletes */
    bool     kstart, kend;  /* its key holds window_start, window_end */
    Group  **g;
    uint32_t n, cap;
} Gone;

/* g's stored row leaves the sink's keys: merged away (always), or its
 * start or end moved where the key holds it. */
static void gone_add(Run *r, Gone *gone, const Group *g, bool merged)
{
    if (!gone->on || g->orig.len == 0)
        return;
    int64_t start = inc_time_key_get((const uint8_t *)g->orig.ptr + g->orig.len - 8);
    if (!merged && !(gone->kstart && start != g->wstart) && !(gone->kend && g->orig_end != g->wend))
        return;
    Group *c = ARENA_NEW(r->a, Group);
    *c = *g;
    inc_push_group(r->a, &gone->g, &gone->n, &gone->cap, c);
}

/* Removes the state under g's stored key (and its index entry, and its
 * result row), if any. */
static int drop_stored(Run *r, Group *g)
{
    if (g->orig.len == 0)
        return 0;
    Group tmp = {.key = g->orig, .stored = true, .stored_vlen = g->stored_vlen};
    inc_state_delete(r, &tmp, false);
    index_entry(r, g->orig_end, &g->orig, false);
    int rc = result_delete(r, &g->orig);
    g->orig.len = 0;
    return rc;
}

/* The sessions in state that the watermark closes (index entries with an
 * end in [the batch's watermark, to]; those below were deleted by earlier
 * batches), of group keys this batch did not load. */
static int closed_in_state(Run *r, int64_t to, Group ***gs, uint32_t *n, uint32_t *cap)
{
    IncPlan *p = r->p;
    uint8_t prefix[6], start[14];
    memcpy(prefix, p->qprefix, 5);
    prefix[5] = 0xFF;
    memcpy(start, prefix, 6);
    inc_time_key_put(start + 6, r->b->has_watermark ? r->b->watermark_us : INT64_MIN);
    StateScan *s = state_scan_open_from(p->st, prefix, sizeof(prefix), start, sizeof(start));
    const void *k, *v;
    size_t klen, vlen;
    int rc = 0;
    while (rc == 0 && state_scan_next(s, &k, &klen, &v, &vlen)) {
        if (klen < 6 + 8 + 8)
            continue;
        int64_t end = inc_time_key_get((const uint8_t *)k + 6);
        if (end > to)
            break;
        const char *key = (const char *)k + 6 + 8;
        size_t sklen = klen - 6 - 8, gklen = sklen - 8;
        if (inc_gt_find(&r->groups, key, gklen, ex_hash(key, gklen)) != NULL)
            continue;   /* its group key was loaded: handled with the others */
        Group *g = ARENA_NEW(r->a, Group);
        g->key.ptr = arena_memdup(r->a, key, sklen);
        g->key.len = (uint32_t)sklen;
        g->orig = g->key;
        g->wstart = inc_time_key_get((const uint8_t *)key + gklen);
        g->states = inc_states_new(r);
        StrBuf sk;
        strbuf_init(&sk);
        strbuf_append(&sk, p->qprefix, sizeof(p->qprefix));
        strbuf_append(&sk, key, sklen);
        void *val;
        size_t len;
        int got = state_get(p->st, sk.data, sk.len, r->a, &val, &len, r->err);
        strbuf_free(&sk);
        if (got < 0 || (got == 1 && inc_state_decode(p, g, val, len, &r->acx) < 0))
            rc = -1;
        else if (got == 0)
            rc = sl_error(r->err, ERRCODE_DATA_CORRUPTED, "state of query \"%s\" is corrupt",
                          p->query->name);
        g->orig_end = g->wend;
        if (rc == 0)
            inc_push_group(r->a, gs, n, cap, g);
    }
    if (state_scan_close(s, r->err) < 0)
        return -1;
    return rc;
}

static bool moved(const Group *g)
{
    return g->orig.len > 0 &&
           (g->orig.len != g->key.len || memcmp(g->orig.ptr, g->key.ptr, g->key.len) != 0);
}

int inc_session_emit(Run *r, bool has_to, int64_t to)
{
    IncPlan *p = r->p;
    Group **out = NULL, **stale = NULL;
    uint32_t nout = 0, capout = 0, nstale = 0, capstale = 0;
    bool append = p->mode == MODE_APPEND;
    Gone gone = {0};
    gone.on = !append;
    inc_sink_key_window(p, &gone.kstart, &gone.kend);
    gone.on = gone.on && (gone.kstart || gone.kend);
    /* Sessions in state the watermark closed, of keys this batch did not
     * touch: emitted (append) and deleted. */
    if (has_to && closed_in_state(r, to, &stale, &nstale, &capstale) < 0)
        return -1;
    if (append)
        for (uint32_t i = 0; i < nstale; i++)
            inc_push_group(r->a, &out, &nout, &capout, stale[i]);
    for (Group *h = r->groups.all; h != NULL; h = h->all) {
        SessList *l = h->ext;
        if (l == NULL)
            continue;
        for (uint32_t i = 0; i < l->ndead; i++) {
            gone_add(r, &gone, l->dead[i], true);
            if (drop_stored(r, l->dead[i]) < 0)
                return -1;
        }
        for (uint32_t i = 0; i < l->n; i++) {
            Group *g = l->s[i];
            gone_add(r, &gone, g, false);
            bool closed = has_to && g->wend <= to;
            if (append ? closed : g->dirty)
                inc_push_group(r->a, &out, &nout, &capout, g);
            /* SUBSCRIBE: a new key (a new session, or one whose start
             * moved) is an insert; the old key's delete went just before. */
            g->fresh = g->orig.len == 0 || moved(g);
            if (moved(g) && drop_stored(r, g) < 0)  /* its start moved: a new key */
                return -1;
            if (closed) {
                if (g->orig.len > 0)
                    inc_push_group(r->a, &stale, &nstale, &capstale, g);
                else
                    r->b->evicted_rows++;   /* made or moved in this batch: gone as well */
                g->dirty = false;       /* not written back */
                g->evict = true;
            }
        }
    }
    /* The sink's tombstones go before the batch's rows (kafka_sink.c), so
     * a key that is both ends with the new row. */
    if (inc_emit_deletes(r, gone.g, gone.n) < 0 || inc_emit_groups(r, out, nout) < 0)
        return -1;
    for (uint32_t i = 0; i < nstale; i++) {
        Group tmp = {.key = stale[i]->orig, .stored = true, .stored_vlen = stale[i]->stored_vlen};
        inc_state_delete(r, &tmp, true);
        index_entry(r, stale[i]->orig_end, &stale[i]->orig, false);
    }
    /* Live sessions this batch changed: written under their (new) keys. */
    StrBuf key, val;
    strbuf_init(&key);
    strbuf_init(&val);
    for (Group *h = r->groups.all; h != NULL; h = h->all) {
        SessList *l = h->ext;
        if (l == NULL)
            continue;
        for (uint32_t i = 0; i < l->n; i++) {
            Group *g = l->s[i];
            if (!g->dirty)
                continue;
            strbuf_reset(&key);
            strbuf_append(&key, p->qprefix, sizeof(p->qprefix));
            strbuf_append(&key, g->key.ptr, g->key.len);
            strbuf_reset(&val);
            inc_state_encode(p, g, &val);
            state_batch_put(r->wb, key.data, key.len, val.data, val.len);
            /* over its stored value when its key did not move */
            inc_state_put_bytes(r, key.len, val.len,
                                g->orig.len > 0 ? (int64_t)g->stored_vlen : -1);
            if (g->orig.len == 0) {
                r->groups.created++;
                index_entry(r, g->wend, &g->key, true);
            } else if (g->orig_end != g->wend) {
                index_entry(r, g->orig_end, &g->orig, false);
                index_entry(r, g->wend, &g->key, true);
            }
        }
    }
    strbuf_free(&key);
    strbuf_free(&val);
    return 0;
}
