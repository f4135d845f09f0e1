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
 * The slices in memory are sorted by group values, then time, and each
 * group's run of slices is walked once in time order: its windows come out
 * in ascending start, each merging the run's slices inside it from a
 * pointer that only moves forward -- no table of windows, no lookup of a
 * window's slices by key.  The emitted rows, keys and state bounds are
 * those of the per-window computation they replace: a window is keyed by
 * its end and group values.  SUBSCRIBE: a window none of whose slices was
 * in state before the batch is an insert (Group.fresh), the others updates.
 */
#include "inc_int.h"

#include "sluice/relstore.h"

#include <stdlib.h>

/* Orders slices by group values (the key after its 8-byte time), then by
 * time: each group's slices become one run in time order. */
static int slice_cmp(const void *x, const void *y)
{
    const Group *a = *(Group *const *)x, *b = *(Group *const *)y;
    size_t la = a->key.len - 8, lb = b->key.len - 8;
    int c = memcmp(a->key.ptr + 8, b->key.ptr + 8, SL_MIN(la, lb));
    if (c != 0)
        return c;
    if (la != lb)
        return la < lb ? -1 : 1;
    return (a->wend > b->wend) - (a->wend < b->wend);
}

static bool same_group(const Group *a, const Group *b)
{
    return a->key.len == b->key.len && memcmp(a->key.ptr + 8, b->key.ptr + 8, a->key.len - 8) == 0;
}

/* The windows a run of slices gives, in r->a. */
typedef struct WinList {
    Group  **w;
    uint32_t n, cap;
} WinList;

/* The starts of the windows that hold slice g (aligned to slide):
 * [*lo, *hi]. */
static void window_starts(const IncPlan *p, const Group *g, int64_t *lo, int64_t *hi)
{
    int64_t ws = ex_window_floor(g->wstart, p->slide_us);
    *hi = ws;
    while (ws - p->slide_us + p->size_us >= g->wend)
        ws -= p->slide_us;
    *lo = ws;
}

/* The window [ws, ws + size) of the run s[0 .. n): a fresh group keyed by
 * its end and the run's group values, its states merged from the run's
 * slices inside it, from *at on (slices before ws are passed for good). */
static Group *window_make(Run *r, Group **s, uint32_t n, uint32_t *at, int64_t ws)
{
    IncPlan *p = r->p;
    int64_t we = ws + p->size_us;
    const Group *g0 = s[0];
    Group *w = ARENA_NEW(r->a, Group);
    char *key = arena_alloc(r->a, g0->key.len);
    inc_time_key_put((uint8_t *)key, we);
    memcpy(key + 8, g0->key.ptr + 8, g0->key.len - 8);
    w->key.ptr = key;
    w->key.len = g0->key.len;
    w->wstart = ws;
    w->wend = we;
    w->groupvals = g0->groupvals;
    w->gvlen = g0->gvlen;
    w->states = inc_states_new(r);
    /* SUBSCRIBE: a window none of whose slices was in state before this
     * batch has no row yet (an insert); one with a stored slice had its row
     * written when that slice was made (an update). */
    w->fresh = true;
    while (*at < n && s[*at]->wstart < ws)
        (*at)++;
    for (uint32_t i = *at; i < n && s[i]->wstart < we; i++) {
        if (inc_states_merge(r, w->states, s[i]->states) < 0)
            return NULL;
        if (s[i]->stored)
            w->fresh = false;
    }
    return w;
}

/* Adds to out the windows of one group's run s[0 .. n) (time order): those
 * that hold a slice `want` picks and end in (from, to], each once, in
 * ascending start. */
static int run_windows(Run *r, Group **s, uint32_t n, bool (*want)(const Group *, int64_t),
                       bool has_from, int64_t from, bool has_to, int64_t to, WinList *out)
{
    IncPlan *p = r->p;
    uint32_t at = 0;
    bool any = false;
    int64_t next = 0;   /* the first start not made yet (once any) */
    for (uint32_t i = 0; i < n; i++) {
        if (!want(s[i], to))
            continue;
        int64_t lo, hi;
        window_starts(p, s[i], &lo, &hi);
        if (any && lo < next)
            lo = next;
        for (int64_t ws = lo; ws <= hi; ws += p->slide_us) {
            int64_t we = ws + p->size_us;
            if ((has_from && we <= from) || (has_to && we > to))
                continue;
            Group *w = window_make(r, s, n, &at, ws);
            if (w == NULL)
                return -1;
            inc_push_group(r->a, &out->w, &out->n, &out->cap, w);
        }
        any = true;
        next = hi + p->slide_us;
    }
    return 0;
}

static bool changed(const Group *g, int64_t to)
{
    SL_UNUSED(to);
    return g->dirty;
}

static bool closed(const Group *g, int64_t to)
{
    return g->wend <= to;
}

/* The windows w[0 .. n), made group after group in the order of their group
 * values and each group's in ascending end, put in key order (end, then
 * group values) in r->a: a stable counting sort by end, the ends being
 * multiples of slide apart; a comparison sort when they spread too far. */
static Group **key_order(Run *r, Group **w, uint32_t n)
{
    int64_t lo = w[0]->wend, hi = w[0]->wend;
    for (uint32_t i = 1; i < n; i++) {
        lo = SL_MIN(lo, w[i]->wend);
        hi = SL_MAX(hi, w[i]->wend);
    }
    uint64_t nb = ((uint64_t)hi - (uint64_t)lo) / (uint64_t)r->p->slide_us + 1;
    if (nb > 4 * (uint64_t)n + 64) {
        inc_groups_sort(w, n);
        return w;
    }
    uint32_t *at = arena_zalloc(r->a, sizeof(uint32_t) * (nb + 1));
    for (uint32_t i = 0; i < n; i++)
        at[((uint64_t)w[i]->wend - (uint64_t)lo) / (uint64_t)r->p->slide_us + 1]++;
    for (uint64_t b = 1; b <= nb; b++)
        at[b] += at[b - 1];
    Group **out = ARENA_ARRAY(r->a, Group *, n);
    for (uint32_t i = 0; i < n; i++)
        out[at[((uint64_t)w[i]->wend - (uint64_t)lo) / (uint64_t)r->p->slide_us]++] = w[i];
    return out;
}

/* The windows of every group's slices in r->groups (see run_windows),
 * written to the result in key order. */
static int emit_windows(Run *r, bool (*want)(const Group *, int64_t), bool has_from,
                        int64_t from, bool has_to, int64_t to)
{
    Group **s = ARENA_ARRAY(r->a, Group *, r->groups.n ? r->groups.n : 1);
    uint32_t n = 0;
    for (Group *g = r->groups.all; g != NULL; g = g->all)
        if (!g->absent)
            s[n++] = g;
    qsort(s, n, sizeof(Group *), slice_cmp);
    WinList wins = {0};
    for (uint32_t i = 0, j; i < n; i = j) {
        for (j = i + 1; j < n && same_group(s[i], s[j]); j++)
            ;
        if (run_windows(r, s + i, j - i, want, has_from, from, has_to, to, &wins) < 0)
            return -1;
    }
    if (wins.n == 0)
        return 0;
    return inc_emit_groups(r, key_order(r, wins.w, wins.n), wins.n);
}

int inc_slide_emit(Run *r, bool has_from, int64_t from, bool has_to, int64_t to)
{
    IncPlan *p = r->p;
    if (p->mode != MODE_APPEND) {
        /* The slices of earlier batches that the windows over this batch's
         * changed slices hold, with one scan of the time-ordered keys from
         * the first such window's first slice to the last key in state
         * (state keys of sliding windows always start with a time). */
        int64_t lo = INT64_MAX;
        for (Group *g = r->groups.all; g != NULL; g = g->all) {
            if (!g->dirty)
                continue;
            int64_t ws, hi;
            window_starts(p, g, &ws, &hi);
            while (has_from && ws <= hi && ws + p->size_us <= from)
                ws += p->slide_us;
            lo = SL_MIN(lo, ws + p->pane_us);
        }
        if (lo <= r->hi_time && inc_load_range(r, lo, r->hi_time) < 0)
            return -1;
        return emit_windows(r, changed, has_from, from, false, 0);
    }
    if (!has_to)
        return 0;
    if (inc_load_closed(r, to) < 0)
        return -1;
    if (emit_windows(r, closed, has_from, from, true, to) < 0)
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
