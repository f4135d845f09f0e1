/*
 * agg_ordered.c -- the ordered-set aggregates: percentile_cont,
 * percentile_disc (of a fraction or an array of fractions) and mode(),
 * called f(fraction) WITHIN GROUP (ORDER BY x).
 *
 *   ex_agg_ordered_func(id)   the executor's row of one of their AggIds
 *                             (agg_int.h; agg.c's ex_agg_func hands it on)
 *
 * The analyzer makes each call an AggCall of arguments (x, fraction)
 * ordered by x (analyze_agg.c), so aggset.c keeps a group's rows and, at
 * the end, runs update once over all of them in x's order (NULL x
 * skipped).  The state only points at those sorted rows; final reads them
 * as PostgreSQL 15's orderedsetaggs.c does:
 *
 *   percentile_disc(f)  the first value whose position is at least f * n
 *                       (row ceil(f * n), the first for f * n <= 1)
 *   percentile_cont(f)  between rows floor and ceil of f * (n - 1),
 *                       lo + (hi - lo) * (f * (n - 1) - floor), double
 *                       precision
 *   mode()              the most frequent value, the first in x's order
 *                       among equally frequent ones
 *
 * No rows: NULL.  A NULL fraction: NULL (an array's NULL elements give
 * NULL elements); one outside [0, 1]: 22003 "percentile value f is not
 * between 0 and 1".  States are never merged or stored: aggset.c merges
 * and stores the rows of an ORDER BY call, not states, and the streaming
 * engines refuse such calls; those entry points fail with XX000.
 */
#include "agg_int.h"

#include <math.h>
#include <stdio.h>

#define FIRST AGG_PERCENTILE_CONT

typedef struct {
    const Vector   *args;       /* x, the fraction(s) */
    const uint32_t *rows;       /* x's order */
    uint32_t        n;
    uint32_t        set;
} OsState;

static int os_update(AggCtx *cx, const Vector *args, uint8_t *const *st, const uint32_t *sel,
                     uint32_t n)
{
    if (n == 0)
        return 0;
    OsState *s = (OsState *)st[sel ? sel[0] : 0];
    if (s->set)
        return sl_error(cx->err, ERRCODE_INTERNAL_ERROR,
                        "an ordered-set aggregate was fed twice");
    uint32_t *rows = arena_alloc(cx->arena, sizeof(uint32_t) * n);
    for (uint32_t k = 0; k < n; k++)
        rows[k] = sel ? sel[k] : k;
    *s = (OsState){args, rows, n, 1};
    return 0;
}

static int os_merge(AggCtx *cx, void *dst, const void *src)
{
    SL_UNUSED(dst);
    SL_UNUSED(src);
    return sl_error(cx->err, ERRCODE_INTERNAL_ERROR,
                    "an ordered-set aggregate's state cannot be merged");
}

static void os_ser(const AggFunc *f, const void *st, StrBuf *out)
{
    SL_UNUSED(f);
    SL_UNUSED(st);
    SL_UNUSED(out);
}

static int os_deser(AggCtx *cx, const AggFunc *f, void *st, const void *p, size_t n)
{
    SL_UNUSED(st);
    SL_UNUSED(p);
    SL_UNUSED(n);
    return sl_error(cx->err, ERRCODE_INTERNAL_ERROR, "a stored %s state cannot be read",
                    ex_agg_sig(f->id)->name);
}

/* Row i of src (of type t) into row `row` of out, memory in a: through the
 * value's binary form (copied to a), as an array element. */
static void copy_value(Arena *a, SlType t, const Vector *src, uint32_t i, Vector *out,
                       uint32_t row)
{
    StrBuf b;
    strbuf_init(&b);
    value_send_binary(src, i, &b);
    /* the value may point into the bytes: they go to a */
    const char *data = b.len ? arena_memdup(a, b.data, b.len) : "";
    ArrayElem el = {data, (int32_t)b.len, false};
    array_elem_value(a, t, &el, out, row);
    strbuf_free(&b);
}

static int bad_fraction(AggCtx *cx, double f)
{
    char buf[64];
    snprintf(buf, sizeof(buf), "%g", f);
    return sl_error(cx->err, ERRCODE_NUMERIC_VALUE_OUT_OF_RANGE,
                    "percentile value %s is not between 0 and 1", buf);
}

/* The fractions of the call: one, or an array's (nulls[k]: NULL). */
typedef struct Fractions {
    int     n;
    double *f;
    bool   *null;
    bool    array_null;         /* the fraction (array) itself is NULL */
} Fractions;

static int fractions(AggCtx *cx, const OsState *s, bool multi, Fractions *out)
{
    const Vector *fv = &s->args[1];
    uint32_t r = s->rows[0];
    memset(out, 0, sizeof(*out));
    if (vector_is_null(fv, r)) {
        out->array_null = true;
        return 0;
    }
    if (!multi) {
        out->n = 1;
        out->f = arena_alloc(cx->arena, sizeof(double));
        out->null = arena_zalloc(cx->arena, 1);
        out->f[0] = fv->v.f64[r];
    } else {
        Vector ev;
        array_to_vector(cx->arena, sl_type(TYPE_FLOAT8), &fv->v.str[r], &ev);
        out->n = (int)ev.len;
        out->f = ev.v.f64;
        out->null = arena_zalloc(cx->arena, (size_t)out->n + 1);
        for (int k = 0; k < out->n; k++)
            out->null[k] = vector_is_null(&ev, (uint32_t)k);
    }
    for (int k = 0; k < out->n; k++)
        if (!out->null[k] && (isnan(out->f[k]) || out->f[k] < 0 || out->f[k] > 1))
            return bad_fraction(cx, out->f[k]);
    return 0;
}

/* percentile_disc's row for fraction f of n rows (0-based). */
static uint32_t disc_row(double f, uint32_t n)
{
    double r = ceil(f * (double)n);
    return r <= 1 ? 0 : (uint32_t)r - 1;
}

/* percentile_cont's value for fraction f. */
static double cont_value(const OsState *s, double f)
{
    const Vector *x = &s->args[0];
    double pos = f * (double)(s->n - 1), lo_r = floor(pos), hi_r = ceil(pos);
    double lo = x->v.f64[s->rows[(uint32_t)lo_r]];
    if (lo_r == hi_r)
        return lo;
    double hi = x->v.f64[s->rows[(uint32_t)hi_r]];
    return lo + (hi - lo) * (pos - lo_r);
}

static int percentile_final(AggCtx *cx, const void *st, Vector *out, uint32_t row, bool cont,
                            bool multi)
{
    const OsState *s = st;
    if (!s->set || s->n == 0) {
        set_null(out, row);
        return 0;
    }
    Fractions fr;
    if (fractions(cx, s, multi, &fr) < 0)
        return -1;
    if (fr.array_null) {
        set_null(out, row);
        return 0;
    }
    SlType xt = s->args[0].type;
    if (!multi) {
        if (cont)
            out->v.f64[row] = cont_value(s, fr.f[0]);
        else
            copy_value(cx->arena, cx->type, &s->args[0], s->rows[disc_row(fr.f[0], s->n)], out,
                       row);
        set_value(out, row);
        return 0;
    }
    ArrayBuild b;
    array_build_begin(&b, cont ? TYPE_FLOAT8 : xt.id);
    Vector one;
    vector_init(&one, cx->arena, sl_type(TYPE_FLOAT8), 1, true);
    for (int k = 0; k < fr.n; k++) {
        if (fr.null[k]) {
            ArrayElem el = {NULL, 0, true};
            array_build_add_elem(&b, &el);
        } else if (cont) {
            one.v.f64[0] = cont_value(s, fr.f[k]);
            one.nulls[0] = 0;
            array_build_add(&b, &one, 0);
        } else {
            array_build_add(&b, &s->args[0], s->rows[disc_row(fr.f[k], s->n)]);
        }
    }
    array_build_finish(&b, cx->arena, &out->v.str[row]);
    set_value(out, row);
    return 0;
}

static int cont_final(AggCtx *cx, const void *st, Vector *out, uint32_t row)
{
    return percentile_final(cx, st, out, row, true, false);
}

static int cont_multi_final(AggCtx *cx, const void *st, Vector *out, uint32_t row)
{
    return percentile_final(cx, st, out, row, true, true);
}

static int disc_final(AggCtx *cx, const void *st, Vector *out, uint32_t row)
{
    return percentile_final(cx, st, out, row, false, false);
}

static int disc_multi_final(AggCtx *cx, const void *st, Vector *out, uint32_t row)
{
    return percentile_final(cx, st, out, row, false, true);
}

/* mode_final: the longest run of equal values in order, the first of
 * equally long ones. */
static int mode_final(AggCtx *cx, const void *st, Vector *out, uint32_t row)
{
    const OsState *s = st;
    if (!s->set || s->n == 0) {
        set_null(out, row);
        return 0;
    }
    const Vector *x = &s->args[0];
    uint32_t best = s->rows[0], best_len = 0, run = s->rows[0], run_len = 0;
    for (uint32_t k = 0; k < s->n; k++) {
        uint32_t r = s->rows[k];
        if (k > 0 && ex_value_cmp(x, run, x, r) == 0) {
            run_len++;
        } else {
            run = r;
            run_len = 1;
        }
        if (run_len > best_len) {
            best = run;
            best_len = run_len;
        }
    }
    copy_value(cx->arena, cx->type, x, best, out, row);
    set_value(out, row);
    return 0;
}

#define ROW(id, fi) [id - FIRST] = {id, sizeof(OsState), false, os_update, os_merge, fi, \
                                    os_ser, os_deser}

static const AggFunc ordered_table[AGG_JSONB_AGG - FIRST] = {
    ROW(AGG_PERCENTILE_CONT, cont_final),
    ROW(AGG_PERCENTILE_CONT_MULTI, cont_multi_final),
    ROW(AGG_PERCENTILE_DISC, disc_final),
    ROW(AGG_PERCENTILE_DISC_MULTI, disc_multi_final),
    ROW(AGG_MODE, mode_final),
};

const AggFunc *ex_agg_ordered_func(AggId id)
{
    return &ordered_table[id - FIRST];
}
