/*
 * agg_stats.c -- the statistics aggregates: stddev, stddev_samp,
 * stddev_pop, variance, var_samp, var_pop over smallint, integer, bigint,
 * numeric, real and double precision, and corr, covar_pop, covar_samp and
 * the regr_* functions over (double precision, double precision): their
 * states, update, merge, final, serialize and deserialize.
 *
 *   ex_agg_stats_func(id)   the executor's row of one of their AggIds
 *                           (agg_int.h; agg.c's ex_agg_func hands it on)
 *   ex_agg_var_exact        the variance family's final over exact sums
 *                           (exec.h: the operator graph keeps those sums
 *                           over retractions, src/engine/op_aggregate.c)
 *
 * Results are PostgreSQL 15's, digit for digit:
 *
 * - Floating point (float8_accum, float8_regr_accum): Youngs-Cramer's
 *   running sums -- N, Sx, Sxx (and Sy, Syy, Sxy) -- updated per row and
 *   combined with the same formulas as PostgreSQL, so a value's rounding
 *   is its; an infinite or NaN input makes Sxx NaN, an overflow of a
 *   finite sum is 22003 "value out of range: overflow".  The finals are
 *   float8_var_pop and friends: var_pop Sxx/N, var_samp Sxx/(N-1) (NULL
 *   under 2 rows), stddev their square roots, covar Sxy/N or /(N-1), corr
 *   Sxy/sqrt(Sxx*Syy) (NULL when Sxx or Syy is 0), regr_slope Sxy/Sxx,
 *   regr_intercept (Sy - Sx*Sxy/Sxx)/N, regr_r2 Sxy^2/(Sxx*Syy) (1 when
 *   Syy is 0), regr_avgx/avgy Sx/N and Sy/N, regr_sxx/syy/sxy the sums;
 *   regr_count the rows where neither argument is NULL (0 over none).
 *
 * - Exact inputs (numeric_stddev_internal): N and the exact sums of x and
 *   x*x -- int128 for smallint and integer, numeric for bigint and
 *   numeric -- and at the end (N*Sxx - Sx*Sx) / (N*N) or / (N*(N-1)) with
 *   numeric division's scale (select_div_scale), 0 when the numerator is
 *   not positive; stddev the square root of that quotient, correctly
 *   rounded at its scale (an integer square root by Newton's iteration
 *   over numerics).  A NaN or infinite numeric input makes the result NaN.
 *
 * Every state here holds only sums, so states merge; the float sums'
 * rounding depends on the order of the rows, the exact ones' does not.
 */
#include "agg_int.h"
#include "functions/numeric_arith.h"

#include <math.h>

#define FIRST AGG_STDDEV_INT2

typedef enum VarKind { VK_STDDEV_SAMP, VK_STDDEV_POP, VK_VAR_SAMP, VK_VAR_POP } VarKind;

static int overflow(AggCtx *cx)
{
    return sl_error(cx->err, ERRCODE_NUMERIC_VALUE_OUT_OF_RANGE, "value out of range: overflow");
}

static void set_f64(Vector *out, uint32_t row, double v)
{
    out->v.f64[row] = v;
    set_value(out, row);
}

/* ------------------------------------------------ floating point, 1 arg */

typedef struct { double n, sx, sxx; } FVarState;

static int fvar_add(AggCtx *cx, FVarState *s, double x)
{
    double n0 = s->n, sx0 = s->sx, n = n0 + 1.0, sx = sx0 + x, sxx = s->sxx;
    if (n0 > 0.0) {
        double tmp = x * n - sx;
        sxx += tmp * tmp / (n * n0);
        if (isinf(sx) || isinf(sxx)) {
            if (!isinf(sx0) && !isinf(x))
                return overflow(cx);
            sxx = NAN;
        }
    } else if (isnan(x) || isinf(x)) {
        sxx = NAN;
    }
    s->n = n;
    s->sx = sx;
    s->sxx = sxx;
    return 0;
}

static int fvar4_update(AggCtx *cx, const Vector *args, uint8_t *const *st,
                        const uint32_t *sel, uint32_t n)
{
    FOR_ROWS(sel, n, {
        if (fvar_add(cx, (FVarState *)st[i], (double)args[0].v.f32[i]) < 0)
            return -1;
    });
    return 0;
}

static int fvar8_update(AggCtx *cx, const Vector *args, uint8_t *const *st,
                        const uint32_t *sel, uint32_t n)
{
    FOR_ROWS(sel, n, {
        if (fvar_add(cx, (FVarState *)st[i], args[0].v.f64[i]) < 0)
            return -1;
    });
    return 0;
}

/* float8_combine's sum of two sums of squares. */
static int combine_sq(AggCtx *cx, double n1, double n2, double sq1, double sq2, double t1,
                      double t2, double *out)
{
    double r = sq1 + sq2 + n1 * n2 * t1 * t2 / (n1 + n2);
    if (isinf(r) && !isinf(sq1) && !isinf(sq2))
        return overflow(cx);
    *out = r;
    return 0;
}

static int fsum(AggCtx *cx, double a, double b, double *out)
{
    double r = a + b;
    if (isinf(r) && !isinf(a) && !isinf(b))
        return overflow(cx);
    *out = r;
    return 0;
}

static int fvar_merge(AggCtx *cx, void *dst, const void *src)
{
    FVarState *d = dst;
    const FVarState *s = src;
    if (s->n == 0.0)
        return 0;
    if (d->n == 0.0) {
        *d = *s;
        return 0;
    }
    double t = d->sx / d->n - s->sx / s->n, sx = 0, sxx = 0;
    if (fsum(cx, d->sx, s->sx, &sx) < 0 ||
        combine_sq(cx, d->n, s->n, d->sxx, s->sxx, t, t, &sxx) < 0)
        return -1;
    d->n += s->n;
    d->sx = sx;
    d->sxx = sxx;
    return 0;
}

static int fvar_final(const FVarState *s, VarKind k, Vector *out, uint32_t row)
{
    bool sample = k == VK_STDDEV_SAMP || k == VK_VAR_SAMP;
    if (s->n == 0.0 || (sample && s->n <= 1.0)) {
        set_null(out, row);
        return 0;
    }
    double v = s->sxx / (sample ? s->n - 1.0 : s->n);
    set_f64(out, row, k == VK_STDDEV_SAMP || k == VK_STDDEV_POP ? sqrt(v) : v);
    return 0;
}

/* -------------------------------------------------------- exact inputs */

/* smallint and integer: int128 sums */
typedef struct { __int128 sx, sxx; int64_t n, pad; } IVarState;

static int ivar2_update(AggCtx *cx, const Vector *args, uint8_t *const *st,
                        const uint32_t *sel, uint32_t n)
{
    SL_UNUSED(cx);
    FOR_ROWS(sel, n, {
        IVarState *s = (IVarState *)st[i];
        __int128 x = args[0].v.i16[i];
        s->sx += x;
        s->sxx += x * x;
        s->n++;
    });
    return 0;
}

static int ivar4_update(AggCtx *cx, const Vector *args, uint8_t *const *st,
                        const uint32_t *sel, uint32_t n)
{
    SL_UNUSED(cx);
    FOR_ROWS(sel, n, {
        IVarState *s = (IVarState *)st[i];
        __int128 x = args[0].v.i32[i];
        s->sx += x;
        s->sxx += x * x;
        s->n++;
    });
    return 0;
}

static int ivar_merge(AggCtx *cx, void *dst, const void *src)
{
    SL_UNUSED(cx);
    IVarState *d = dst;
    const IVarState *s = src;
    d->sx += s->sx;
    d->sxx += s->sxx;
    d->n += s->n;
    return 0;
}

/* bigint and numeric: numeric sums; special counts the NaN and infinite
 * inputs (numeric only) */
typedef struct { NumBuf sx, sxx; int64_t n, special; } NVarState;

/* s += x, x*x (digits of intermediates in scratch). */
static int nvar_add(AggCtx *cx, Arena *scratch, NVarState *s, const SlNumeric *x)
{
    s->n++;
    if (num_is_special(x)) {
        s->special++;
        return 0;
    }
    SlNumeric sq, r;
    if (num_mul(scratch, x, x, &sq, cx->err) < 0)
        return -1;
    if (s->n - s->special == 1) {
        numbuf_set(cx->arena, &s->sx, x);
        numbuf_set(cx->arena, &s->sxx, &sq);
        return 0;
    }
    if (num_add(scratch, &s->sx.v, x, &r, cx->err) < 0)
        return -1;
    numbuf_set(cx->arena, &s->sx, &r);
    if (num_add(scratch, &s->sxx.v, &sq, &r, cx->err) < 0)
        return -1;
    numbuf_set(cx->arena, &s->sxx, &r);
    return 0;
}

static int nvar_update(AggCtx *cx, const Vector *args, uint8_t *const *st, const uint32_t *sel,
                       uint32_t n, bool int8)
{
    /* intermediate digits go to a scratch arena reset every 256 rows */
    Arena scratch;
    arena_init(&scratch, 4096);
    uint32_t done = 0;
    int rc = 0;
    FOR_ROWS(sel, n, {
        SlNumeric xv;
        const SlNumeric *x = &xv;
        if (int8)
            num_from_int64(&scratch, args[0].v.i64[i], &xv);
        else
            x = &args[0].v.num[i];
        if (nvar_add(cx, &scratch, (NVarState *)st[i], x) < 0) {
            rc = -1;
            break;
        }
        if (++done % 256 == 0)
            arena_reset(&scratch);
    });
    arena_destroy(&scratch);
    return rc;
}

static int nvar8_update(AggCtx *cx, const Vector *args, uint8_t *const *st,
                        const uint32_t *sel, uint32_t n)
{
    return nvar_update(cx, args, st, sel, n, true);
}

static int nvarn_update(AggCtx *cx, const Vector *args, uint8_t *const *st,
                        const uint32_t *sel, uint32_t n)
{
    return nvar_update(cx, args, st, sel, n, false);
}

static int nvar_merge(AggCtx *cx, void *dst, const void *src)
{
    NVarState *d = dst;
    const NVarState *s = src;
    bool d_sums = d->n > d->special, s_sums = s->n > s->special;
    if (s_sums && !d_sums) {
        numbuf_set(cx->arena, &d->sx, &s->sx.v);
        numbuf_set(cx->arena, &d->sxx, &s->sxx.v);
    } else if (s_sums) {
        SlNumeric r;
        if (num_add(cx->arena, &d->sx.v, &s->sx.v, &r, cx->err) < 0)
            return -1;
        numbuf_set(cx->arena, &d->sx, &r);
        if (num_add(cx->arena, &d->sxx.v, &s->sxx.v, &r, cx->err) < 0)
            return -1;
        numbuf_set(cx->arena, &d->sxx, &r);
    }
    d->n += s->n;
    d->special += s->special;
    return 0;
}

/* "1" and k zeros: 10^k. */
static void pow10_num(Arena *a, int k, SlNumeric *out)
{
    uint8_t *d = arena_alloc(a, (size_t)k + 1);
    d[0] = 1;
    memset(d + 1, 0, (size_t)k);
    *out = (SlNumeric){d, k + 1, 0, NUM_POS};
}

/* floor(sqrt(m)) of an integer m >= 0 (scale 0): Newton's iteration from
 * 10^ceil(digits/2), above the root, down to it. */
static int num_isqrt(Arena *a, const SlNumeric *m, SlNumeric *out, SlError *err)
{
    if (m->ndigits == 0) {
        *out = *m;
        return 0;
    }
    SlNumeric y, z, q, sum, two;
    pow10_num(a, (m->ndigits + 1) / 2, &y);
    num_from_int64(a, 2, &two);
    for (;;) {
        if (num_div_trunc(a, m, &y, &q, err) < 0 || num_add(a, &y, &q, &sum, err) < 0 ||
            num_div_trunc(a, &sum, &two, &z, err) < 0)
            return -1;
        if (num_cmp(&z, &y) >= 0)
            break;
        y = z;
    }
    *out = y;
    return 0;
}

/* sqrt(v) rounded half away from zero at v's scale, digits in a. */
static int num_sqrt_at_scale(Arena *a, Arena *scratch, const SlNumeric *v, SlNumeric *out,
                             SlError *err)
{
    /* sqrt(v) * 10^(scale+1) = sqrt(V * 10^(scale+2)), V = v's digits */
    int extra = v->scale + 2;
    uint8_t *d = arena_alloc(scratch, (size_t)(v->ndigits + extra));
    memcpy(d, v->digits, (size_t)v->ndigits);
    memset(d + v->ndigits, 0, (size_t)extra);
    SlNumeric m = {d, v->ndigits + extra, 0, NUM_POS}, r;
    if (num_isqrt(scratch, &m, &r, err) < 0)
        return -1;
    r.scale = v->scale + 1;
    num_round(a, &r, v->scale, out);
    return 0;
}

int ex_agg_var_exact(Arena *a, int64_t n, bool special, const SlNumeric *sx,
                     const SlNumeric *sxx, bool sample, bool stddev, SlNumeric *out, bool *null,
                     SlError *err)
{
    *null = n == 0 || (sample && n <= 1);
    if (*null)
        return 0;
    if (special) {
        *out = (SlNumeric){NULL, 0, 0, NUM_NAN};
        return 0;
    }
    Arena scratch;
    arena_init(&scratch, 4096);
    int rc = -1;
    SlNumeric vn, vn1, one, sx2, nsxx, num, den, var;
    num_from_int64(&scratch, n, &vn);
    num_from_int64(&scratch, 1, &one);
    if (num_mul(&scratch, sx, sx, &sx2, err) < 0 || num_mul(&scratch, &vn, sxx, &nsxx, err) < 0 ||
        num_sub(&scratch, &nsxx, &sx2, &num, err) < 0)
        goto out;
    if (num.sign == NUM_NEG || num.ndigits == 0) {
        /* PostgreSQL's guard against a negative numerator: 0 */
        *out = (SlNumeric){NULL, 0, 0, NUM_POS};
        rc = 0;
        goto out;
    }
    if (sample && num_sub(&scratch, &vn, &one, &vn1, err) < 0)
        goto out;
    if (num_mul(&scratch, &vn, sample ? &vn1 : &vn, &den, err) < 0 ||
        num_div(&scratch, &num, &den, &var, err) < 0)
        goto out;
    if (stddev) {
        if (num_sqrt_at_scale(a, &scratch, &var, out, err) < 0)
            goto out;
    } else {
        *out = var;
        if (var.ndigits > 0)
            out->digits = arena_memdup(a, var.digits, (size_t)var.ndigits);
    }
    rc = 0;
out:
    arena_destroy(&scratch);
    return rc;
}

/* numeric_stddev_internal over N, Sx and Sxx (exact), the result's digits
 * in cx->arena. */
static int exact_final(AggCtx *cx, int64_t n, int64_t special, const SlNumeric *sx,
                       const SlNumeric *sxx, VarKind k, Vector *out, uint32_t row)
{
    bool null;
    if (ex_agg_var_exact(cx->arena, n, special > 0, sx, sxx,
                         k == VK_STDDEV_SAMP || k == VK_VAR_SAMP,
                         k == VK_STDDEV_SAMP || k == VK_STDDEV_POP, &out->v.num[row], &null,
                         cx->err) < 0)
        return -1;
    if (null)
        set_null(out, row);
    else
        set_value(out, row);
    return 0;
}

static int ivar_final(AggCtx *cx, const void *st, VarKind k, Vector *out, uint32_t row)
{
    const IVarState *s = st;
    Arena scratch;
    arena_init(&scratch, 1024);
    SlNumeric sx, sxx;
    ex_num_from_int128(&scratch, s->sx, &sx);
    ex_num_from_int128(&scratch, s->sxx, &sxx);
    int rc = exact_final(cx, s->n, 0, &sx, &sxx, k, out, row);
    arena_destroy(&scratch);
    return rc;
}

static int nvar_final(AggCtx *cx, const void *st, VarKind k, Vector *out, uint32_t row)
{
    const NVarState *s = st;
    return exact_final(cx, s->n, s->special, &s->sx.v, &s->sxx.v, k, out, row);
}

static void ser_num(const SlNumeric *v, StrBuf *out)
{
    strbuf_append(out, &v->sign, 1);
    strbuf_append(out, &v->scale, 4);
    strbuf_append(out, &v->ndigits, 4);
    if (v->ndigits > 0)
        strbuf_append(out, v->digits, (size_t)v->ndigits);
}

static bool deser_num(Arena *a, Reader *r, NumBuf *nb)
{
    SlNumeric v = {0};
    rd(r, &v.sign, 1);
    rd(r, &v.scale, 4);
    rd(r, &v.ndigits, 4);
    if (r->bad || v.ndigits < 0 || (size_t)(r->end - r->p) < (size_t)v.ndigits)
        return false;
    v.digits = r->p;
    r->p += v.ndigits;
    memset(nb, 0, sizeof(*nb));
    numbuf_set(a, nb, &v);
    return true;
}

static void nvar_ser(const AggFunc *f, const void *st, StrBuf *out)
{
    SL_UNUSED(f);
    const NVarState *s = st;
    strbuf_append(out, &s->n, 8);
    strbuf_append(out, &s->special, 8);
    ser_num(&s->sx.v, out);
    ser_num(&s->sxx.v, out);
}

static int nvar_deser(AggCtx *cx, const AggFunc *f, void *st, const void *p, size_t n)
{
    NVarState *s = st;
    Reader r = {p, (const uint8_t *)p + n, false};
    rd(&r, &s->n, 8);
    rd(&r, &s->special, 8);
    if (!deser_num(cx->arena, &r, &s->sx) || !deser_num(cx->arena, &r, &s->sxx) ||
        r.p != r.end)
        return sl_error(cx->err, ERRCODE_DATA_CORRUPTED, "a stored %s state is corrupt",
                        ex_agg_sig(f->id)->name);
    return 0;
}

/* ---------------------------------------------- two arguments (Y, X) */

typedef struct { double n, sx, sxx, sy, syy, sxy; } RegrState;

static int regr_add(AggCtx *cx, RegrState *s, double y, double x)
{
    double n0 = s->n, n = n0 + 1.0;
    double sx = s->sx + x, sy = s->sy + y, sxx = s->sxx, syy = s->syy, sxy = s->sxy;
    if (n0 > 0.0) {
        double tx = x * n - sx, ty = y * n - sy, scale = 1.0 / (n * n0);
        sxx += tx * tx * scale;
        syy += ty * ty * scale;
        sxy += tx * ty * scale;
        if (isinf(sx) || isinf(sxx) || isinf(sy) || isinf(syy) || isinf(sxy)) {
            if (((isinf(sx) || isinf(sxx)) && !isinf(s->sx) && !isinf(x)) ||
                ((isinf(sy) || isinf(syy)) && !isinf(s->sy) && !isinf(y)) ||
                (isinf(sxy) && !isinf(s->sx) && !isinf(x) && !isinf(s->sy) && !isinf(y)))
                return overflow(cx);
            if (isinf(sxx))
                sxx = NAN;
            if (isinf(syy))
                syy = NAN;
            if (isinf(sxy))
                sxy = NAN;
        }
    } else {
        if (isnan(x) || isinf(x))
            sxx = sxy = NAN;
        if (isnan(y) || isinf(y))
            syy = sxy = NAN;
    }
    *s = (RegrState){n, sx, sxx, sy, syy, sxy};
    return 0;
}

static int regr_update(AggCtx *cx, const Vector *args, uint8_t *const *st,
                       const uint32_t *sel, uint32_t n)
{
    FOR_ROWS(sel, n, {
        if (vector_is_null(&args[1], i))
            continue;
        if (regr_add(cx, (RegrState *)st[i], args[0].v.f64[i], args[1].v.f64[i]) < 0)
            return -1;
    });
    return 0;
}

static int regr_merge(AggCtx *cx, void *dst, const void *src)
{
    RegrState *d = dst;
    const RegrState *s = src;
    if (s->n == 0.0)
        return 0;
    if (d->n == 0.0) {
        *d = *s;
        return 0;
    }
    double tx = d->sx / d->n - s->sx / s->n, ty = d->sy / d->n - s->sy / s->n;
    RegrState r = {d->n + s->n, 0, 0, 0, 0, 0};
    if (fsum(cx, d->sx, s->sx, &r.sx) < 0 ||
        combine_sq(cx, d->n, s->n, d->sxx, s->sxx, tx, tx, &r.sxx) < 0 ||
        fsum(cx, d->sy, s->sy, &r.sy) < 0 ||
        combine_sq(cx, d->n, s->n, d->syy, s->syy, ty, ty, &r.syy) < 0 ||
        combine_sq(cx, d->n, s->n, d->sxy, s->sxy, tx, ty, &r.sxy) < 0)
        return -1;
    *d = r;
    return 0;
}

typedef enum RegrKind {
    RK_CORR, RK_COVAR_POP, RK_COVAR_SAMP, RK_AVGX, RK_AVGY, RK_INTERCEPT, RK_R2, RK_SLOPE,
    RK_SXX, RK_SXY, RK_SYY
} RegrKind;

static int regr_final(const RegrState *s, RegrKind k, Vector *out, uint32_t row)
{
    double n = s->n;
    bool null = n < 1.0;
    double v = 0;
    switch (k) {
    case RK_CORR:
        null |= s->sxx == 0 || s->syy == 0;
        v = s->sxy / sqrt(s->sxx * s->syy);
        break;
    case RK_COVAR_POP: v = s->sxy / n; break;
    case RK_COVAR_SAMP:
        null |= n < 2.0;
        v = s->sxy / (n - 1.0);
        break;
    case RK_AVGX: v = s->sx / n; break;
    case RK_AVGY: v = s->sy / n; break;
    case RK_INTERCEPT:
        null |= s->sxx == 0;
        v = (s->sy - s->sx * s->sxy / s->sxx) / n;
        break;
    case RK_R2:
        null |= s->sxx == 0;
        v = s->syy == 0 ? 1.0 : (s->sxy * s->sxy) / (s->sxx * s->syy);
        break;
    case RK_SLOPE:
        null |= s->sxx == 0;
        v = s->sxy / s->sxx;
        break;
    case RK_SXX: v = s->sxx; break;
    case RK_SXY: v = s->sxy; break;
    case RK_SYY: v = s->syy; break;
    }
    if (null)
        set_null(out, row);
    else
        set_f64(out, row, v);
    return 0;
}

/* regr_count: the rows where neither argument is NULL (int8inc_float8_float8:
 * no sums, so no overflow) */
typedef struct { int64_t n; } RegrCountState;

static int regr_count_update(AggCtx *cx, const Vector *args, uint8_t *const *st,
                             const uint32_t *sel, uint32_t n)
{
    SL_UNUSED(cx);
    FOR_ROWS(sel, n, {
        if (!vector_is_null(&args[1], i))
            ((RegrCountState *)st[i])->n++;
    });
    return 0;
}

static int regr_count_merge(AggCtx *cx, void *dst, const void *src)
{
    SL_UNUSED(cx);
    ((RegrCountState *)dst)->n += ((const RegrCountState *)src)->n;
    return 0;
}

static int regr_count_final(AggCtx *cx, const void *st, Vector *out, uint32_t row)
{
    SL_UNUSED(cx);
    out->v.i64[row] = ((const RegrCountState *)st)->n;
    set_value(out, row);
    return 0;
}

/* ----------------------------------------------------------------- table */

/* One final function per (state, kind). */
#define VAR_FINALS(K, kind)                                                               \
    static int fvar_final_##K(AggCtx *cx, const void *st, Vector *out, uint32_t row)      \
    {                                                                                     \
        SL_UNUSED(cx);                                                                    \
        return fvar_final(st, kind, out, row);                                            \
    }                                                                                     \
    static int ivar_final_##K(AggCtx *cx, const void *st, Vector *out, uint32_t row)      \
    {                                                                                     \
        return ivar_final(cx, st, kind, out, row);                                        \
    }                                                                                     \
    static int nvar_final_##K(AggCtx *cx, const void *st, Vector *out, uint32_t row)      \
    {                                                                                     \
        return nvar_final(cx, st, kind, out, row);                                        \
    }
VAR_FINALS(ssamp, VK_STDDEV_SAMP)
VAR_FINALS(spop, VK_STDDEV_POP)
VAR_FINALS(vsamp, VK_VAR_SAMP)
VAR_FINALS(vpop, VK_VAR_POP)

#define REGR_FINAL(K, kind)                                                               \
    static int regr_final_##K(AggCtx *cx, const void *st, Vector *out, uint32_t row)      \
    {                                                                                     \
        SL_UNUSED(cx);                                                                    \
        return regr_final(st, kind, out, row);                                            \
    }
REGR_FINAL(corr, RK_CORR)
REGR_FINAL(covar_pop, RK_COVAR_POP)
REGR_FINAL(covar_samp, RK_COVAR_SAMP)
REGR_FINAL(avgx, RK_AVGX)
REGR_FINAL(avgy, RK_AVGY)
REGR_FINAL(intercept, RK_INTERCEPT)
REGR_FINAL(r2, RK_R2)
REGR_FINAL(slope, RK_SLOPE)
REGR_FINAL(sxx, RK_SXX)
REGR_FINAL(sxy, RK_SXY)
REGR_FINAL(syy, RK_SYY)

#define RAW ser_raw, deser_raw
#define ROW(id, S, varlen, ...) [id - FIRST] = {id, sizeof(S), varlen, __VA_ARGS__}
#define FIXED(id, S, up, mg, fi) ROW(id, S, false, up, mg, fi, RAW)
#define VAR_ROWS(F, K)                                                                    \
    FIXED(AGG_##F##_INT2, IVarState, ivar2_update, ivar_merge, ivar_final_##K),            \
    FIXED(AGG_##F##_INT4, IVarState, ivar4_update, ivar_merge, ivar_final_##K),            \
    ROW(AGG_##F##_INT8, NVarState, true, nvar8_update, nvar_merge, nvar_final_##K,         \
        nvar_ser, nvar_deser),                                                             \
    ROW(AGG_##F##_NUMERIC, NVarState, true, nvarn_update, nvar_merge, nvar_final_##K,      \
        nvar_ser, nvar_deser),                                                             \
    FIXED(AGG_##F##_FLOAT4, FVarState, fvar4_update, fvar_merge, fvar_final_##K),          \
    FIXED(AGG_##F##_FLOAT8, FVarState, fvar8_update, fvar_merge, fvar_final_##K)
#define REGR_ROW(id, K) FIXED(id, RegrState, regr_update, regr_merge, regr_final_##K)

static const AggFunc stats_table[AGG_PERCENTILE_CONT - FIRST] = {
    VAR_ROWS(STDDEV, ssamp), VAR_ROWS(STDDEV_SAMP, ssamp), VAR_ROWS(STDDEV_POP, spop),
    VAR_ROWS(VARIANCE, vsamp), VAR_ROWS(VAR_SAMP, vsamp), VAR_ROWS(VAR_POP, vpop),
    REGR_ROW(AGG_CORR, corr), REGR_ROW(AGG_COVAR_POP, covar_pop),
    REGR_ROW(AGG_COVAR_SAMP, covar_samp), REGR_ROW(AGG_REGR_AVGX, avgx),
    REGR_ROW(AGG_REGR_AVGY, avgy),
    FIXED(AGG_REGR_COUNT, RegrCountState, regr_count_update, regr_count_merge, regr_count_final),
    REGR_ROW(AGG_REGR_INTERCEPT, intercept), REGR_ROW(AGG_REGR_R2, r2),
    REGR_ROW(AGG_REGR_SLOPE, slope), REGR_ROW(AGG_REGR_SXX, sxx), REGR_ROW(AGG_REGR_SXY, sxy),
    REGR_ROW(AGG_REGR_SYY, syy),
};

const AggFunc *ex_agg_stats_func(AggId id)
{
    return &stats_table[id - FIRST];
}
