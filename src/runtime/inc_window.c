/*
 * inc_window.c -- sliding windows computed once per slice (docs/engine.md,
 * "Sliding windows").
 *
 *   inc_slide_emit
 *
 * WINDOW(ts, size, slide) keeps one group per slice ("pane") of width
 * gcd(size, slide) and group key: a row updates only its slice (incremental.c,
 * aggregate), so its cost does not grow with size/slide.  A window is its
 * size/pane consecutive slices; it is assembled at emit by merging the
 * slices' aggregate states (AggFunc.merge) into a fresh block:
 *   update, complete: every window that holds a slice this batch changed
 *     and that had not closed when the batch began;
 *   append: every window that closes in this batch (its end in
 *     (watermark before, watermark after]); a slice's state is deleted once
 *     the last window that holds it has closed.
 * The emitted rows, keys and state bounds are those of the per-window
 * computation they replace: a window is keyed by its end and group values.
 */
#include "inc_int.h"

#include "sluice/relstore.h"

/* The window [ws, ws + size) of slice g's group, made in t on first use. */
static Group *window_get(Run *r, GroupTable *t, const Group *slice, int64_t ws)
{
    IncPlan *p = r->p;
    size_t gklen = slice->key.len - 8;
    char *key = arena_alloc(r->a, slice->key.len);
    inc_time_key_put((uint8_t *)key, ws + p->size_us);
    memcpy(key + 8, slice->key.ptr + 8, gklen);
    Group *w = inc_gt_find(t, key, slice->key.len, ex_hash(key, slice->key.len));
    if (w != NULL)
        return w;
    w = ARENA_NEW(r->a, Group);
    w->key.ptr = key;
    w->key.len = slice->key.len;
    w->wstart = ws;
    w->wend = ws + p->size_us;
    w->groupvals = slice->groupvals;
    w->gvlen = slice->gvlen;
    w->states = inc_states_new(r);
    inc_gt_add(t, r->a, w);
    return w;
}

/* Adds to t the windows that hold slice g and end in (from, to]. */
static void windows_of(Run *r, GroupTable *t, const Group *g, bool has_from, int64_t from,
                       bool has_to, int64_t to)
{
    IncPlan *p = r->p;
    for (int64_t ws = ex_window_floor(g->wstart, p->slide_us); ws + p->size_us >= g->wend;
         ws -= p->slide_us) {
        int64_t we = ws + p->size_us;
        if ((has_from && we <= from) || (has_to && we > to))
            continue;
        window_get(r, t, g, ws);
    }
}

/* Merges each window's slices into its states; load: slices not in this
 * batch's table are read from state (else they are known absent). */
static int assemble(Run *r, GroupTable *t, bool load)
{
    IncPlan *p = r->p;
    for (Group *w = t->all; w != NULL; w = w->all) {
        char *key = arena_memdup(r->a, w->key.ptr, w->key.len);
        for (int64_t ps = w->wstart; ps < w->wend; ps += p->pane_us) {
            inc_time_key_put((uint8_t *)key, ps + p->pane_us);
            Group *s = load ? inc_gt_load(r, key, w->key.len)
                            : inc_gt_find(&r->groups, key, w->key.len, ex_hash(key, w->key.len));
            if (load && s == NULL)
                return -1;
            if (s != NULL && !s->absent && inc_states_merge(r, w->states, s->states) < 0)
                return -1;
        }
    }
    return 0;
}

static int emit_table(Run *r, GroupTable *t)
{
    Group **gs = ARENA_ARRAY(r->a, Group *, t->n ? t->n : 1);
    uint32_t n = 0;
    for (Group *w = t->all; w != NULL; w = w->all)
        gs[n++] = w;
    inc_groups_sort(gs, n);
    return inc_emit_groups(r, gs, n);
}

int inc_slide_emit(Run *r, bool has_from, int64_t from, bool has_to, int64_t to)
{
    IncPlan *p = r->p;
    GroupTable wins = {0};
    if (p->mode != MODE_APPEND) {
        /* The windows over the slices this batch changed (collected first:
         * assembling adds loaded slices to the table). */
        for (Group *g = r->groups.all; g != NULL; g = g->all)
            if (g->dirty)
                windows_of(r, &wins, g, has_from, from, false, 0);
        /* The slices of earlier batches these windows hold, with one scan
         * of the time-ordered keys from the first one's end to the last key
         * in state: then a slice not in the table is known absent, instead
         * of one point read per window and slice (most auctions of a window
         * have no row in most of its slices). */
        bool load = true;
        if (r->time_keys) {
            int64_t lo = INT64_MAX;
            for (Group *w = wins.all; w != NULL; w = w->all)
                lo = SL_MIN(lo, w->wstart + p->pane_us);
            if (lo <= r->hi_time && inc_load_range(r, lo, r->hi_time) < 0)
                return -1;
            load = false;
        }
        return assemble(r, &wins, load) < 0 ? -1 : emit_table(r, &wins);
    }
    if (!has_to)
        return 0;
    if (inc_load_closed(r, to) < 0)
        return -1;
    for (Group *g = r->groups.all; g != NULL; g = g->all)
        if (!g->absent && g->wend <= to)
            windows_of(r, &wins, g, has_from, from, true, to);
    if (assemble(r, &wins, false) < 0 || emit_table(r, &wins) < 0)
        return -1;
    /* A slice goes once the last window that holds it has closed. */
    for (Group *g = r->groups.all; g != NULL; g = g->all) {
        if (g->absent || ex_window_floor(g->wstart, p->slide_us) + p->size_us > to)
            continue;
        g->evict = true;
        inc_state_delete(r, g, true);
    }
    return 0;
}
