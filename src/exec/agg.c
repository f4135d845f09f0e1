/*
 * agg.c -- how the aggregate functions run: count, sum, avg, min, max, bool_and,
 * bool_or, every, string_agg, approx_count_distinct, array_agg, jsonb_agg,
 * jsonb_object_agg; their states, update, merge, final, serialize and
 * deserialize (the AggFunc interface of exec.h).
 *
 *   ex_agg_func(sig)    the row of a signature the analyzer resolved (the
 *                       statistics aggregates' rows are agg_stats.c's)
 *
 * What each aggregate means -- its name, argument and result types, and
 * the lookup of a call -- is the function library's (functions.h's AggSig,
 * src/functions/aggsig.c); this table has one row per AggId beside it.
 *
 * Results are PostgreSQL 15's: count is bigint; sum of smallint/integer is
 * bigint, of bigint and numeric numeric, of real real, of double precision
 * double precision, of interval interval; avg of integers and numeric is
 * numeric (sum / count with numeric_div's scale), of floats double
 * precision; min and max keep the argument's type; string_agg(text, text);
 * array_agg(x) the array of x's type, NULLs included, in input order;
 * jsonb_agg(x) and jsonb_object_agg(k, v) the JSON of their values as
 * to_jsonb writes them (json_value), NULL values as null, a NULL key
 * 22023, put through jsonb's input at the end (keys sorted, the last of
 * equal ones kept).
 * An empty group gives NULL, except count (0).  Overflow is PostgreSQL's
 * error (22003 "bigint out of range", "value out of range: overflow",
 * 22008 "interval out of range").
 *
 * States are fixed-size and valid when zeroed.  Those that hold memory
 * (numeric sums, min/max of text and numeric, string_agg) keep it in
 * AggCtx.arena, in a buffer they reuse while it is large enough, so a
 * group costs no allocation per row.  string_agg keeps every element with
 * its leading delimiter and skips the first delimiter at the end, so two
 * partial states merge by concatenation (PostgreSQL 16's combine rule).
 */
#include "agg_int.h"
#include "functions/numeric_arith.h"
#include "types/jsonb.h"
#include "sluice/bytes.h"

#include <math.h>
#include <stdio.h>


/* ------------------------------------------------------------ helpers */

static int int8_range(AggCtx *cx)
{
    return sl_error(cx->err, ERRCODE_NUMERIC_VALUE_OUT_OF_RANGE, "bigint out of range");
}

static int float_overflow(AggCtx *cx)
{
    return sl_error(cx->err, ERRCODE_NUMERIC_VALUE_OUT_OF_RANGE, "value out of range: overflow");
}

/* An int128 as numeric, digits in arena a (agg_int.h). */
void ex_num_from_int128(Arena *a, __int128 v, SlNumeric *out)
{
    char buf[48];
    int n = 0;
    bool neg = v < 0;
    unsigned __int128 u = neg ? (unsigned __int128)0 - (unsigned __int128)v : (unsigned __int128)v;
    char tmp[48];
    do {
        tmp[n++] = (char)('0' + (int)(u % 10));
        u /= 10;
    } while (u > 0);
    int k = 0;
    if (neg)
        buf[k++] = '-';
    while (n > 0)
        buf[k++] = tmp[--n];
    num_parse(a, buf, (size_t)k, out);
}

/* A string kept in a state. */
typedef struct StrKeep {
    char    *buf;
    uint32_t len;
    uint32_t cap;
} StrKeep;

static void strkeep_set(Arena *a, StrKeep *s, const char *p, uint32_t n)
{
    if (n > s->cap) {
        s->cap = SL_MAX(n, s->cap * 2);
        s->buf = arena_alloc(a, s->cap);
    }
    if (n)
        memcpy(s->buf, p, n);
    s->len = n;
}

static void strkeep_append(Arena *a, StrKeep *s, const char *p, uint32_t n)
{
    if (s->len + n > s->cap) {
        uint32_t cap = SL_MAX(s->len + n, s->cap * 2);
        cap = SL_MAX(cap, 64);
        char *nb = arena_alloc(a, cap);
        if (s->len)
            memcpy(nb, s->buf, s->len);
        s->buf = nb;
        s->cap = cap;
    }
    if (n)
        memcpy(s->buf + s->len, p, n);
    s->len += n;
}

/* ---------------------------------------------------------------- count */

typedef struct { int64_t n; } CountState;

static int count_update(AggCtx *cx, const Vector *args, uint8_t *const *st, const uint32_t *sel,
                        uint32_t n)
{
    SL_UNUSED(cx);
    SL_UNUSED(args);
    FOR_ROWS(sel, n, { ((CountState *)st[i])->n++; });
    return 0;
}

static int count_merge(AggCtx *cx, void *dst, const void *src)
{
    SL_UNUSED(cx);
    ((CountState *)dst)->n += ((const CountState *)src)->n;
    return 0;
}

static int count_final(AggCtx *cx, const void *st, Vector *out, uint32_t row)
{
    SL_UNUSED(cx);
    out->v.i64[row] = ((const CountState *)st)->n;
    set_value(out, row);
    return 0;
}

/* ------------------------------------------------- sum of int2 / int4 */

typedef struct { int64_t sum; int64_t n; } SumIntState;

#define SUM_INT_UPDATE(NAME, FIELD)                                                     \
    static int NAME(AggCtx *cx, const Vector *args, uint8_t *const *st,               \
                    const uint32_t *sel, uint32_t n)                                  \
    {                                                                                 \
        FOR_ROWS(sel, n, {                                                            \
            SumIntState *s = (SumIntState *)st[i];                                    \
            if (__builtin_add_overflow(s->sum, (int64_t)args[0].v.FIELD[i], &s->sum)) \
                return int8_range(cx);                                                \
            s->n++;                                                                   \
        });                                                                           \
        return 0;                                                                     \
    }
SUM_INT_UPDATE(sum_int2_update, i16)
SUM_INT_UPDATE(sum_int4_update, i32)

static int sum_int_merge(AggCtx *cx, void *dst, const void *src)
{
    SumIntState *d = dst;
    const SumIntState *s = src;
    if (__builtin_add_overflow(d->sum, s->sum, &d->sum))
        return int8_range(cx);
    d->n += s->n;
    return 0;
}

static int sum_int_final(AggCtx *cx, const void *st, Vector *out, uint32_t row)
{
    SL_UNUSED(cx);
    const SumIntState *s = st;
    if (s->n == 0) {
        set_null(out, row);
        return 0;
    }
    out->v.i64[row] = s->sum;
    set_value(out, row);
    return 0;
}

/* --------------------------------- sum(int8), avg of integers: int128 */

typedef struct { __int128 sum; int64_t n; int64_t pad; } Int128State;

#define INT128_UPDATE(NAME, FIELD)                                            \
    static int NAME(AggCtx *cx, const Vector *args, uint8_t *const *st,     \
                    const uint32_t *sel, uint32_t n)                        \
    {                                                                       \
        SL_UNUSED(cx);                                                      \
        FOR_ROWS(sel, n, {                                                  \
            Int128State *s = (Int128State *)st[i];                          \
            s->sum += args[0].v.FIELD[i];                                   \
            s->n++;                                                         \
        });                                                                 \
        return 0;                                                           \
    }
INT128_UPDATE(i128_int2_update, i16)
INT128_UPDATE(i128_int4_update, i32)
INT128_UPDATE(i128_int8_update, i64)

static int i128_merge(AggCtx *cx, void *dst, const void *src)
{
    SL_UNUSED(cx);
    Int128State *d = dst;
    const Int128State *s = src;
    d->sum += s->sum;
    d->n += s->n;
    return 0;
}

static int sum_i128_final(AggCtx *cx, const void *st, Vector *out, uint32_t row)
{
    const Int128State *s = st;
    if (s->n == 0) {
        set_null(out, row);
        return 0;
    }
    ex_num_from_int128(cx->arena, s->sum, &out->v.num[row]);
    set_value(out, row);
    return 0;
}

static int avg_i128_final(AggCtx *cx, const void *st, Vector *out, uint32_t row)
{
    const Int128State *s = st;
    if (s->n == 0) {
        set_null(out, row);
        return 0;
    }
    SlNumeric sum, cnt;
    ex_num_from_int128(cx->arena, s->sum, &sum);
    num_from_int64(cx->arena, s->n, &cnt);
    if (num_div(cx->arena, &sum, &cnt, &out->v.num[row], cx->err) < 0)
        return -1;
    set_value(out, row);
    return 0;
}

/* -------------------------------------------------------- floats */

typedef struct { double sum; int64_t n; } FloatState;

static int float_add(AggCtx *cx, double *acc, double v)
{
    double r = *acc + v;
    if (isinf(r) && !isinf(*acc) && !isinf(v))
        return float_overflow(cx);
    *acc = r;
    return 0;
}

static int sum_float4_update(AggCtx *cx, const Vector *args, uint8_t *const *st,
                             const uint32_t *sel, uint32_t n)
{
    FOR_ROWS(sel, n, {
        FloatState *s = (FloatState *)st[i];
        float r = (float)s->sum + args[0].v.f32[i];
        if (isinf(r) && !isinf((float)s->sum) && !isinf(args[0].v.f32[i]))
            return float_overflow(cx);
        s->sum = r;
        s->n++;
    });
    return 0;
}

static int float4_avg_update(AggCtx *cx, const Vector *args, uint8_t *const *st,
                             const uint32_t *sel, uint32_t n)
{
    FOR_ROWS(sel, n, {
        FloatState *s = (FloatState *)st[i];
        if (float_add(cx, &s->sum, (double)args[0].v.f32[i]) < 0)
            return -1;
        s->n++;
    });
    return 0;
}

static int float8_update(AggCtx *cx, const Vector *args, uint8_t *const *st,
                         const uint32_t *sel, uint32_t n)
{
    FOR_ROWS(sel, n, {
        FloatState *s = (FloatState *)st[i];
        if (float_add(cx, &s->sum, args[0].v.f64[i]) < 0)
            return -1;
        s->n++;
    });
    return 0;
}

static int float_merge(AggCtx *cx, void *dst, const void *src)
{
    FloatState *d = dst;
    const FloatState *s = src;
    if (float_add(cx, &d->sum, s->sum) < 0)
        return -1;
    d->n += s->n;
    return 0;
}

static int sum_float4_merge(AggCtx *cx, void *dst, const void *src)
{
    FloatState *d = dst;
    const FloatState *s = src;
    float r = (float)d->sum + (float)s->sum;
    if (isinf(r) && !isinf((float)d->sum) && !isinf((float)s->sum))
        return float_overflow(cx);
    d->sum = r;
    d->n += s->n;
    return 0;
}

static int sum_float4_final(AggCtx *cx, const void *st, Vector *out, uint32_t row)
{
    SL_UNUSED(cx);
    const FloatState *s = st;
    if (s->n == 0) {
        set_null(out, row);
        return 0;
    }
    out->v.f32[row] = (float)s->sum;
    set_value(out, row);
    return 0;
}

static int sum_float8_final(AggCtx *cx, const void *st, Vector *out, uint32_t row)
{
    SL_UNUSED(cx);
    const FloatState *s = st;
    if (s->n == 0) {
        set_null(out, row);
        return 0;
    }
    out->v.f64[row] = s->sum;
    set_value(out, row);
    return 0;
}

static int avg_float_final(AggCtx *cx, const void *st, Vector *out, uint32_t row)
{
    SL_UNUSED(cx);
    const FloatState *s = st;
    if (s->n == 0) {
        set_null(out, row);
        return 0;
    }
    out->v.f64[row] = s->sum / (double)s->n;
    set_value(out, row);
    return 0;
}

/* -------------------------------------------------------- numeric */

typedef struct { NumBuf acc; int64_t n; } NumState;

static int num_update(AggCtx *cx, const Vector *args, uint8_t *const *st, const uint32_t *sel,
                      uint32_t n)
{
    /* intermediate digits go to a scratch arena reset every 256 rows */
    Arena scratch;
    arena_init(&scratch, 4096);
    uint32_t done = 0;
    int rc = 0;
    FOR_ROWS(sel, n, {
        NumState *s = (NumState *)st[i];
        if (s->n == 0) {
            numbuf_set(cx->arena, &s->acc, &args[0].v.num[i]);
        } else {
            SlNumeric r;
            if (num_add(&scratch, &s->acc.v, &args[0].v.num[i], &r, cx->err) < 0) {
                rc = -1;
                break;
            }
            numbuf_set(cx->arena, &s->acc, &r);
        }
        s->n++;
        if (++done % 256 == 0)
            arena_reset(&scratch);
    });
    arena_destroy(&scratch);
    return rc;
}

static int num_merge(AggCtx *cx, void *dst, const void *src)
{
    NumState *d = dst;
    const NumState *s = src;
    if (s->n == 0)
        return 0;
    if (d->n == 0) {
        numbuf_set(cx->arena, &d->acc, &s->acc.v);
    } else {
        SlNumeric r;
        if (num_add(cx->arena, &d->acc.v, &s->acc.v, &r, cx->err) < 0)
            return -1;
        numbuf_set(cx->arena, &d->acc, &r);
    }
    d->n += s->n;
    return 0;
}

static int sum_num_final(AggCtx *cx, const void *st, Vector *out, uint32_t row)
{
    const NumState *s = st;
    if (s->n == 0) {
        set_null(out, row);
        return 0;
    }
    SlNumeric *r = &out->v.num[row];
    *r = s->acc.v;
    if (r->ndigits > 0)
        r->digits = arena_memdup(cx->arena, r->digits, (size_t)r->ndigits);
    set_value(out, row);
    return 0;
}

static int avg_num_final(AggCtx *cx, const void *st, Vector *out, uint32_t row)
{
    const NumState *s = st;
    if (s->n == 0) {
        set_null(out, row);
        return 0;
    }
    SlNumeric cnt;
    num_from_int64(cx->arena, s->n, &cnt);
    if (num_div(cx->arena, &s->acc.v, &cnt, &out->v.num[row], cx->err) < 0)
        return -1;
    set_value(out, row);
    return 0;
}

static void num_ser(const AggFunc *f, const void *st, StrBuf *out)
{
    SL_UNUSED(f);
    const NumState *s = st;
    strbuf_append(out, &s->n, 8);
    strbuf_append(out, &s->acc.v.sign, 1);
    strbuf_append(out, &s->acc.v.scale, 4);
    strbuf_append(out, &s->acc.v.ndigits, 4);
    if (s->acc.v.ndigits > 0)
        strbuf_append(out, s->acc.v.digits, (size_t)s->acc.v.ndigits);
}

static int num_deser(AggCtx *cx, const AggFunc *f, void *st, const void *p, size_t n)
{
    NumState *s = st;
    Reader r = {p, (const uint8_t *)p + n, false};
    SlNumeric v = {0};
    rd(&r, &s->n, 8);
    rd(&r, &v.sign, 1);
    rd(&r, &v.scale, 4);
    rd(&r, &v.ndigits, 4);
    if (r.bad || v.ndigits < 0 || (size_t)(r.end - r.p) != (size_t)v.ndigits)
        return sl_error(cx->err, ERRCODE_DATA_CORRUPTED, "a stored %s state is corrupt",
                        ex_agg_sig(f->id)->name);
    v.digits = r.p;
    memset(&s->acc, 0, sizeof(s->acc));
    numbuf_set(cx->arena, &s->acc, &v);
    return 0;
}

/* -------------------------------------------------------- interval sum */

typedef struct { SlInterval sum; int64_t n; } IvState;

static int iv_add(AggCtx *cx, SlInterval *a, const SlInterval *b)
{
    if (__builtin_add_overflow(a->months, b->months, &a->months) ||
        __builtin_add_overflow(a->days, b->days, &a->days) ||
        __builtin_add_overflow(a->usec, b->usec, &a->usec))
        return sl_error(cx->err, ERRCODE_DATETIME_VALUE_OUT_OF_RANGE, "interval out of range");
    return 0;
}

static int iv_update(AggCtx *cx, const Vector *args, uint8_t *const *st, const uint32_t *sel,
                     uint32_t n)
{
    FOR_ROWS(sel, n, {
        IvState *s = (IvState *)st[i];
        if (iv_add(cx, &s->sum, &args[0].v.iv[i]) < 0)
            return -1;
        s->n++;
    });
    return 0;
}

static int iv_merge(AggCtx *cx, void *dst, const void *src)
{
    IvState *d = dst;
    const IvState *s = src;
    if (iv_add(cx, &d->sum, &s->sum) < 0)
        return -1;
    d->n += s->n;
    return 0;
}

static int iv_final(AggCtx *cx, const void *st, Vector *out, uint32_t row)
{
    SL_UNUSED(cx);
    const IvState *s = st;
    if (s->n == 0) {
        set_null(out, row);
        return 0;
    }
    out->v.iv[row] = s->sum;
    set_value(out, row);
    return 0;
}

/* ------------------------------------------------ min / max, fixed width */

typedef struct { uint8_t v[16]; int64_t has; } MinMaxState;

/* Compares a value in a state with row i of v via ex_value_cmp. */
static int mm_cmp(const Vector *v, uint32_t i, const MinMaxState *s)
{
    Vector sv = {.type = v->type, .len = 1, .nulls = NULL};
    sv.v.data = (void *)s->v;
    return ex_value_cmp(v, i, &sv, 0);
}

static int mm_update(const Vector *args, uint8_t *const *st, const uint32_t *sel, uint32_t n,
                     int want)
{
    size_t w = type_width(args[0].type.id);
    FOR_ROWS(sel, n, {
        MinMaxState *s = (MinMaxState *)st[i];
        if (!s->has || mm_cmp(&args[0], i, s) * want > 0) {
            memcpy(s->v, (const char *)args[0].v.data + w * i, w);
            s->has = 1;
        }
    });
    return 0;
}

static int min_update(AggCtx *cx, const Vector *args, uint8_t *const *st, const uint32_t *sel,
                      uint32_t n)
{
    SL_UNUSED(cx);
    return mm_update(args, st, sel, n, -1);
}

static int max_update(AggCtx *cx, const Vector *args, uint8_t *const *st, const uint32_t *sel,
                      uint32_t n)
{
    SL_UNUSED(cx);
    return mm_update(args, st, sel, n, 1);
}

static int mm_final(AggCtx *cx, const void *st, Vector *out, uint32_t row)
{
    const MinMaxState *s = st;
    if (!s->has) {
        set_null(out, row);
        return 0;
    }
    size_t w = type_width(cx->type.id);
    memcpy((char *)out->v.data + w * row, s->v, w);
    set_value(out, row);
    return 0;
}

static int mm_merge(AggCtx *cx, void *dst, const void *src, int want)
{
    MinMaxState *d = dst;
    const MinMaxState *s = src;
    if (!s->has)
        return 0;
    Vector sv = {.type = cx->type, .len = 1, .nulls = NULL};
    sv.v.data = (void *)s->v;
    if (!d->has || mm_cmp(&sv, 0, d) * want > 0)
        *d = *s;
    return 0;
}

static int min_merge(AggCtx *cx, void *dst, const void *src) { return mm_merge(cx, dst, src, -1); }
static int max_merge(AggCtx *cx, void *dst, const void *src) { return mm_merge(cx, dst, src, 1); }

/* ------------------------------------------- min / max of text, numeric */

typedef struct { StrKeep s; int64_t has; } MinMaxTextState;

static int mmt_update(AggCtx *cx, const Vector *args, uint8_t *const *st, const uint32_t *sel,
                      uint32_t n, int want)
{
    FOR_ROWS(sel, n, {
        MinMaxTextState *s = (MinMaxTextState *)st[i];
        const SlStr *v = &args[0].v.str[i];
        bool take = !s->has;
        if (!take) {
            int c = memcmp(v->ptr, s->s.buf, SL_MIN(v->len, s->s.len));
            if (c == 0)
                c = (v->len > s->s.len) - (v->len < s->s.len);
            take = c * want > 0;
        }
        if (take) {
            strkeep_set(cx->arena, &s->s, v->ptr, v->len);
            s->has = 1;
        }
    });
    return 0;
}

static int mint_update(AggCtx *cx, const Vector *args, uint8_t *const *st, const uint32_t *sel,
                       uint32_t n)
{
    return mmt_update(cx, args, st, sel, n, -1);
}

static int maxt_update(AggCtx *cx, const Vector *args, uint8_t *const *st, const uint32_t *sel,
                       uint32_t n)
{
    return mmt_update(cx, args, st, sel, n, 1);
}

static int mmt_merge(AggCtx *cx, void *dst, const void *src, int want)
{
    const MinMaxTextState *s = src;
    if (!s->has)
        return 0;
    Vector v = {.type = {TYPE_TEXT, -1, TYPE_UNKNOWN}, .len = 1, .nulls = NULL};
    SlStr str = {s->s.buf, s->s.len};
    v.v.str = &str;
    uint8_t *p = dst;
    return mmt_update(cx, &v, &p, NULL, 1, want);
}

static int mint_merge(AggCtx *cx, void *dst, const void *src) { return mmt_merge(cx, dst, src, -1); }
static int maxt_merge(AggCtx *cx, void *dst, const void *src) { return mmt_merge(cx, dst, src, 1); }

static int mmt_final(AggCtx *cx, const void *st, Vector *out, uint32_t row)
{
    const MinMaxTextState *s = st;
    if (!s->has) {
        set_null(out, row);
        return 0;
    }
    out->v.str[row].ptr = s->s.len ? arena_memdup(cx->arena, s->s.buf, s->s.len) : "";
    out->v.str[row].len = s->s.len;
    set_value(out, row);
    return 0;
}

static void strkeep_ser(const StrKeep *s, int64_t has, StrBuf *out)
{
    strbuf_append(out, &has, 8);
    strbuf_append(out, &s->len, 4);
    strbuf_append(out, s->buf, s->len);
}

static void mmt_ser(const AggFunc *f, const void *st, StrBuf *out)
{
    SL_UNUSED(f);
    const MinMaxTextState *s = st;
    strkeep_ser(&s->s, s->has, out);
}

static int mmt_deser(AggCtx *cx, const AggFunc *f, void *st, const void *p, size_t n)
{
    MinMaxTextState *s = st;
    Reader r = {p, (const uint8_t *)p + n, false};
    uint32_t len;
    rd(&r, &s->has, 8);
    rd(&r, &len, 4);
    if (r.bad || (size_t)(r.end - r.p) != len)
        return sl_error(cx->err, ERRCODE_DATA_CORRUPTED, "a stored %s state is corrupt",
                        ex_agg_sig(f->id)->name);
    memset(&s->s, 0, sizeof(s->s));
    strkeep_set(cx->arena, &s->s, (const char *)r.p, len);
    return 0;
}

typedef struct { NumBuf v; int64_t has; } MinMaxNumState;

static int mmn_update(AggCtx *cx, const Vector *args, uint8_t *const *st, const uint32_t *sel,
                      uint32_t n, int want)
{
    FOR_ROWS(sel, n, {
        MinMaxNumState *s = (MinMaxNumState *)st[i];
        if (!s->has || num_cmp(&args[0].v.num[i], &s->v.v) * want > 0) {
            numbuf_set(cx->arena, &s->v, &args[0].v.num[i]);
            s->has = 1;
        }
    });
    return 0;
}

static int minn_update(AggCtx *cx, const Vector *args, uint8_t *const *st, const uint32_t *sel,
                       uint32_t n)
{
    return mmn_update(cx, args, st, sel, n, -1);
}

static int maxn_update(AggCtx *cx, const Vector *args, uint8_t *const *st, const uint32_t *sel,
                       uint32_t n)
{
    return mmn_update(cx, args, st, sel, n, 1);
}

static int mmn_merge(AggCtx *cx, void *dst, const void *src, int want)
{
    const MinMaxNumState *s = src;
    if (!s->has)
        return 0;
    Vector v = {.type = {TYPE_NUMERIC, -1, TYPE_UNKNOWN}, .len = 1, .nulls = NULL};
    SlNumeric x = s->v.v;
    v.v.num = &x;
    uint8_t *p = dst;
    return mmn_update(cx, &v, &p, NULL, 1, want);
}

static int minn_merge(AggCtx *cx, void *dst, const void *src) { return mmn_merge(cx, dst, src, -1); }
static int maxn_merge(AggCtx *cx, void *dst, const void *src) { return mmn_merge(cx, dst, src, 1); }

static int mmn_final(AggCtx *cx, const void *st, Vector *out, uint32_t row)
{
    const MinMaxNumState *s = st;
    if (!s->has) {
        set_null(out, row);
        return 0;
    }
    SlNumeric *r = &out->v.num[row];
    *r = s->v.v;
    if (r->ndigits > 0)
        r->digits = arena_memdup(cx->arena, r->digits, (size_t)r->ndigits);
    set_value(out, row);
    return 0;
}

static void mmn_ser(const AggFunc *f, const void *st, StrBuf *out)
{
    const MinMaxNumState *s = st;
    NumState ns = {s->v, s->has};
    num_ser(f, &ns, out);
}

static int mmn_deser(AggCtx *cx, const AggFunc *f, void *st, const void *p, size_t n)
{
    NumState ns;
    memset(&ns, 0, sizeof(ns));
    if (num_deser(cx, f, &ns, p, n) < 0)
        return -1;
    MinMaxNumState *s = st;
    s->v = ns.acc;
    s->has = ns.n;
    return 0;
}

/* ----------------------------------------------------- bool_and, bool_or */

typedef struct { int64_t v; int64_t has; } BoolState;

static int booland_update(AggCtx *cx, const Vector *args, uint8_t *const *st,
                          const uint32_t *sel, uint32_t n)
{
    SL_UNUSED(cx);
    FOR_ROWS(sel, n, {
        BoolState *s = (BoolState *)st[i];
        s->v = s->has ? (s->v && args[0].v.b[i]) : args[0].v.b[i] != 0;
        s->has = 1;
    });
    return 0;
}

static int boolor_update(AggCtx *cx, const Vector *args, uint8_t *const *st,
                         const uint32_t *sel, uint32_t n)
{
    SL_UNUSED(cx);
    FOR_ROWS(sel, n, {
        BoolState *s = (BoolState *)st[i];
        s->v = s->has ? (s->v || args[0].v.b[i]) : args[0].v.b[i] != 0;
        s->has = 1;
    });
    return 0;
}

static int booland_merge(AggCtx *cx, void *dst, const void *src)
{
    SL_UNUSED(cx);
    BoolState *d = dst;
    const BoolState *s = src;
    if (s->has) {
        d->v = d->has ? (d->v && s->v) : s->v;
        d->has = 1;
    }
    return 0;
}

static int boolor_merge(AggCtx *cx, void *dst, const void *src)
{
    SL_UNUSED(cx);
    BoolState *d = dst;
    const BoolState *s = src;
    if (s->has) {
        d->v = d->has ? (d->v || s->v) : s->v;
        d->has = 1;
    }
    return 0;
}

static int bool_final(AggCtx *cx, const void *st, Vector *out, uint32_t row)
{
    SL_UNUSED(cx);
    const BoolState *s = st;
    if (!s->has) {
        set_null(out, row);
        return 0;
    }
    out->v.b[row] = s->v != 0;
    set_value(out, row);
    return 0;
}

/* ------------------------------------------------------------ string_agg */

typedef struct { StrKeep s; uint32_t skip; uint32_t pad; int64_t has; } StringAggState;

static int sagg_update(AggCtx *cx, const Vector *args, uint8_t *const *st, const uint32_t *sel,
                       uint32_t n)
{
    FOR_ROWS(sel, n, {
        StringAggState *s = (StringAggState *)st[i];
        const SlStr *v = &args[0].v.str[i];
        bool delim = !vector_is_null(&args[1], i);
        const SlStr *d = &args[1].v.str[i];
        if (delim)
            strkeep_append(cx->arena, &s->s, d->ptr, d->len);
        if (!s->has) {
            s->skip = delim ? d->len : 0;
            s->has = 1;
        }
        strkeep_append(cx->arena, &s->s, v->ptr, v->len);
    });
    return 0;
}

static int sagg_merge(AggCtx *cx, void *dst, const void *src)
{
    StringAggState *d = dst;
    const StringAggState *s = src;
    if (!s->has)
        return 0;
    if (!d->has) {
        d->skip = s->skip;
        d->has = 1;
    }
    strkeep_append(cx->arena, &d->s, s->s.buf, s->s.len);
    return 0;
}

static int sagg_final(AggCtx *cx, const void *st, Vector *out, uint32_t row)
{
    const StringAggState *s = st;
    if (!s->has) {
        set_null(out, row);
        return 0;
    }
    uint32_t len = s->s.len - s->skip;
    out->v.str[row].ptr = len ? arena_memdup(cx->arena, s->s.buf + s->skip, len) : "";
    out->v.str[row].len = len;
    set_value(out, row);
    return 0;
}

static void sagg_ser(const AggFunc *f, const void *st, StrBuf *out)
{
    SL_UNUSED(f);
    const StringAggState *s = st;
    strbuf_append(out, &s->skip, 4);
    strkeep_ser(&s->s, s->has, out);
}

static int sagg_deser(AggCtx *cx, const AggFunc *f, void *st, const void *p, size_t n)
{
    StringAggState *s = st;
    if (n < 4)
        return sl_error(cx->err, ERRCODE_DATA_CORRUPTED, "a stored %s state is corrupt",
                        ex_agg_sig(f->id)->name);
    memcpy(&s->skip, p, 4);
    MinMaxTextState t;
    memset(&t, 0, sizeof(t));
    if (mmt_deser(cx, f, &t, (const uint8_t *)p + 4, n - 4) < 0)
        return -1;
    s->s = t.s;
    s->has = t.has;
    return 0;
}

/* ------------------------------------------------------------ array_agg */

/* The elements so far, each as an array element is kept (types.h: a
 * big-endian length, -1 for NULL, then the send form); has counts them.
 * The layout is MinMaxTextState's, so its serializer serves.  NULLs are
 * elements: aggset.c passes array_agg its NULL rows. */
typedef struct { StrKeep s; int64_t has; } ArrayAggState;

static int aagg_update(AggCtx *cx, const Vector *args, uint8_t *const *st, const uint32_t *sel,
                       uint32_t n)
{
    StrBuf b;
    strbuf_init(&b);
    FOR_ROWS(sel, n, {
        ArrayAggState *s = (ArrayAggState *)st[i];
        strbuf_reset(&b);
        uint8_t len[4] = {0xFF, 0xFF, 0xFF, 0xFF};
        strbuf_append(&b, len, 4);
        if (!vector_is_null(&args[0], i)) {
            value_send_binary(&args[0], i, &b);
            put_be32((uint8_t *)b.data, (uint32_t)(b.len - 4));
        }
        strkeep_append(cx->arena, &s->s, b.data, (uint32_t)b.len);
        s->has++;
    });
    strbuf_free(&b);
    return 0;
}

static int aagg_merge(AggCtx *cx, void *dst, const void *src)
{
    ArrayAggState *d = dst;
    const ArrayAggState *s = src;
    if (s->has > 0)
        strkeep_append(cx->arena, &d->s, s->s.buf, s->s.len);
    d->has += s->has;
    return 0;
}

static int aagg_final(AggCtx *cx, const void *st, Vector *out, uint32_t row)
{
    const ArrayAggState *s = st;
    if (!s->has) {
        set_null(out, row);
        return 0;
    }
    ArrayBuild b;
    array_build_begin(&b, cx->type.elem);
    const uint8_t *p = (const uint8_t *)s->s.buf, *end = p + s->s.len;
    while (end - p >= 4) {
        int32_t len = (int32_t)get_be32(p);
        ArrayElem el = {(const char *)p + 4, len < 0 ? 0 : len, len < 0};
        array_build_add_elem(&b, &el);
        p += 4 + (len > 0 ? len : 0);
    }
    array_build_finish(&b, cx->arena, &out->v.str[row]);
    set_value(out, row);
    return 0;
}

/* ------------------------------------------------ approx_count_distinct */

/* HyperLogLog (Flajolet et al., 2007) with 2^12 one-byte registers over a
 * 64-bit hash of each value's equality key (so 1.0 and 1.00 are one value).
 * The standard error is 1.04 / sqrt(4096) = 1.6%; below 2.5 x 4096 distinct
 * values the estimate switches to linear counting, which is exact or off by
 * one for small sets.  States merge by taking the larger register, so
 * partial states from micro-batches combine.  docs/sql-reference.md states
 * the bound; tests/test_approx_count_distinct.py checks it. */
#define HLL_BITS 12
#define HLL_REGS (1 << HLL_BITS)

typedef struct { uint8_t reg[HLL_REGS]; } HllState;

static int hll_update(AggCtx *cx, const Vector *args, uint8_t *const *st, const uint32_t *sel,
                      uint32_t n)
{
    SL_UNUSED(cx);
    StrBuf key;
    strbuf_init(&key);
    FOR_ROWS(sel, n, {
        strbuf_reset(&key);
        ex_key_encode(args, 1, i, &key);
        uint64_t h = ex_hash(key.data, key.len);
        uint32_t idx = (uint32_t)(h >> (64 - HLL_BITS));
        uint64_t rest = h << HLL_BITS;
        uint8_t rank = rest == 0 ? (uint8_t)(64 - HLL_BITS + 1)
                                 : (uint8_t)(__builtin_clzll(rest) + 1);
        HllState *s = (HllState *)st[i];
        if (rank > s->reg[idx])
            s->reg[idx] = rank;
    });
    strbuf_free(&key);
    return 0;
}

static int hll_merge(AggCtx *cx, void *dst, const void *src)
{
    SL_UNUSED(cx);
    HllState *d = dst;
    const HllState *o = src;
    for (int j = 0; j < HLL_REGS; j++)
        if (o->reg[j] > d->reg[j])
            d->reg[j] = o->reg[j];
    return 0;
}

static int hll_final(AggCtx *cx, const void *st, Vector *out, uint32_t row)
{
    SL_UNUSED(cx);
    const HllState *s = st;
    double m = HLL_REGS, sum = 0;
    int zeros = 0;
    for (int j = 0; j < HLL_REGS; j++) {
        sum += ldexp(1.0, -s->reg[j]);
        zeros += s->reg[j] == 0;
    }
    double e = 0.7213 / (1 + 1.079 / m) * m * m / sum;
    if (e <= 2.5 * m && zeros > 0)
        e = m * log(m / zeros);
    out->v.i64[row] = (int64_t)llround(e);
    set_value(out, row);
    return 0;
}

/* ------------------------------------------- jsonb_agg, jsonb_object_agg */

/* The JSON text of row i of v as to_jsonb writes it: numbers as numbers
 * (NaN and infinities as strings), booleans, jsonb as it is, arrays as
 * arrays, other values (text, bytea, date, interval) as the string of
 * their text form; NULL as null.  The analyzer lets only these types in
 * (analyze_agg.c). */
static void json_value(Arena *a, const Vector *v, uint32_t i, StrBuf *out)
{
    if (vector_is_null(v, i)) {
        strbuf_puts(out, "null");
        return;
    }
    switch (v->type.id) {
    case TYPE_BOOL:
        strbuf_puts(out, v->v.b[i] ? "true" : "false");
        return;
    case TYPE_JSONB:
        strbuf_append(out, v->v.str[i].ptr, v->v.str[i].len);
        return;
    case TYPE_ARRAY: {
        Vector ev;
        array_to_vector(a, sl_type(v->type.elem), &v->v.str[i], &ev);
        strbuf_putc(out, '[');
        for (uint32_t k = 0; k < ev.len; k++) {
            if (k)
                strbuf_puts(out, ", ");
            json_value(a, &ev, k, out);
        }
        strbuf_putc(out, ']');
        return;
    }
    default:
        break;
    }
    StrBuf t;
    strbuf_init(&t);
    value_format_text(v, i, &t);
    bool number = v->type.id == TYPE_INT2 || v->type.id == TYPE_INT4 ||
                  v->type.id == TYPE_INT8 || v->type.id == TYPE_FLOAT4 ||
                  v->type.id == TYPE_FLOAT8 || v->type.id == TYPE_NUMERIC;
    if (number && t.len > 0 && (t.data[0] == '-' ? t.len > 1 && t.data[1] != 'I' :
                                                   t.data[0] != 'N' && t.data[0] != 'I'))
        strbuf_append(out, t.data, t.len);
    else
        jsonb_escape(out, t.data ? t.data : "", (uint32_t)t.len);
    strbuf_free(&t);
}

typedef struct { StrKeep s; int64_t has; } JsonAggState;

static int jagg_update(AggCtx *cx, const Vector *args, uint8_t *const *st, const uint32_t *sel,
                       uint32_t n)
{
    StrBuf b;
    strbuf_init(&b);
    Arena scratch;
    arena_init(&scratch, 1024);
    FOR_ROWS(sel, n, {
        JsonAggState *s = (JsonAggState *)st[i];
        strbuf_reset(&b);
        if (s->has)
            strbuf_puts(&b, ", ");
        json_value(&scratch, &args[0], i, &b);
        strkeep_append(cx->arena, &s->s, b.data, (uint32_t)b.len);
        s->has++;
    });
    arena_destroy(&scratch);
    strbuf_free(&b);
    return 0;
}

static int jobj_update(AggCtx *cx, const Vector *args, uint8_t *const *st, const uint32_t *sel,
                       uint32_t n)
{
    StrBuf b;
    strbuf_init(&b);
    Arena scratch;
    arena_init(&scratch, 1024);
    int rc = 0;
    FOR_ROWS(sel, n, {
        if (vector_is_null(&args[0], i)) {
            rc = sl_error(cx->err, ERRCODE_INVALID_PARAMETER_VALUE,
                          "field name must not be null");
            break;
        }
        if (args[0].type.id == TYPE_JSONB || args[0].type.id == TYPE_ARRAY) {
            rc = sl_error(cx->err, ERRCODE_INVALID_PARAMETER_VALUE,
                          "key value must be scalar, not array, composite, or json");
            break;
        }
        JsonAggState *s = (JsonAggState *)st[i];
        strbuf_reset(&b);
        if (s->has)
            strbuf_puts(&b, ", ");
        /* the key is the JSON of the value, as a string (true -> "true") */
        StrBuf k;
        strbuf_init(&k);
        json_value(&scratch, &args[0], i, &k);
        if (k.len > 0 && k.data[0] == '"')
            strbuf_append(&b, k.data, k.len);
        else
            jsonb_escape(&b, k.data ? k.data : "", (uint32_t)k.len);
        strbuf_free(&k);
        strbuf_puts(&b, ": ");
        json_value(&scratch, &args[1], i, &b);
        strkeep_append(cx->arena, &s->s, b.data, (uint32_t)b.len);
        s->has++;
    });
    arena_destroy(&scratch);
    strbuf_free(&b);
    return rc;
}

static int jagg_merge(AggCtx *cx, void *dst, const void *src)
{
    JsonAggState *d = dst;
    const JsonAggState *s = src;
    if (s->has == 0)
        return 0;
    if (d->has)
        strkeep_append(cx->arena, &d->s, ", ", 2);
    strkeep_append(cx->arena, &d->s, s->s.buf, s->s.len);
    d->has += s->has;
    return 0;
}

/* The elements (pairs) between brackets (braces), through jsonb's input:
 * its canonical text (an object's keys sorted, the last of equal ones). */
static int json_final(AggCtx *cx, const void *st, Vector *out, uint32_t row, char open,
                      char close)
{
    const JsonAggState *s = st;
    if (!s->has) {
        set_null(out, row);
        return 0;
    }
    StrBuf b;
    strbuf_init(&b);
    strbuf_putc(&b, open);
    strbuf_append(&b, s->s.buf, s->s.len);
    strbuf_putc(&b, close);
    int rc = jsonb_parse(cx->arena, b.data, b.len, &out->v.str[row], -1, cx->err);
    strbuf_free(&b);
    if (rc < 0)
        return -1;
    set_value(out, row);
    return 0;
}

static int jagg_final(AggCtx *cx, const void *st, Vector *out, uint32_t row)
{
    return json_final(cx, st, out, row, '[', ']');
}

static int jobj_final(AggCtx *cx, const void *st, Vector *out, uint32_t row)
{
    return json_final(cx, st, out, row, '{', '}');
}

static const AggFunc json_table[] = {
    {AGG_JSONB_AGG, sizeof(JsonAggState), true, jagg_update, jagg_merge, jagg_final, mmt_ser,
     mmt_deser},
    {AGG_JSONB_OBJECT_AGG, sizeof(JsonAggState), true, jobj_update, jagg_merge, jobj_final,
     mmt_ser, mmt_deser},
};

/* ----------------------------------------------------------------- table */

/* One row per AggId, in functions.h's order (aggsig.c: the signatures);
 * test_query.c's aggregate test checks that every AggId has its row. */
#define RAW ser_raw, deser_raw
#define ROW(id, S, varlen, ...) [id] = {id, sizeof(S), varlen, __VA_ARGS__}
#define FIXED(id, S, up, mg, fi) ROW(id, S, false, up, mg, fi, RAW)

static const AggFunc agg_table[AGG_STDDEV_INT2] = {
    FIXED(AGG_COUNT_STAR, CountState, count_update, count_merge, count_final),
    FIXED(AGG_COUNT, CountState, count_update, count_merge, count_final),
    FIXED(AGG_SUM_INT2, SumIntState, sum_int2_update, sum_int_merge, sum_int_final),
    FIXED(AGG_SUM_INT4, SumIntState, sum_int4_update, sum_int_merge, sum_int_final),
    FIXED(AGG_SUM_INT8, Int128State, i128_int8_update, i128_merge, sum_i128_final),
    FIXED(AGG_SUM_FLOAT4, FloatState, sum_float4_update, sum_float4_merge, sum_float4_final),
    FIXED(AGG_SUM_FLOAT8, FloatState, float8_update, float_merge, sum_float8_final),
    ROW(AGG_SUM_NUMERIC, NumState, true, num_update, num_merge, sum_num_final, num_ser,
        num_deser),
    FIXED(AGG_SUM_INTERVAL, IvState, iv_update, iv_merge, iv_final),
    FIXED(AGG_AVG_INT2, Int128State, i128_int2_update, i128_merge, avg_i128_final),
    FIXED(AGG_AVG_INT4, Int128State, i128_int4_update, i128_merge, avg_i128_final),
    FIXED(AGG_AVG_INT8, Int128State, i128_int8_update, i128_merge, avg_i128_final),
    FIXED(AGG_AVG_FLOAT4, FloatState, float4_avg_update, float_merge, avg_float_final),
    FIXED(AGG_AVG_FLOAT8, FloatState, float8_update, float_merge, avg_float_final),
    ROW(AGG_AVG_NUMERIC, NumState, true, num_update, num_merge, avg_num_final, num_ser,
        num_deser),
#define MINMAX(T)                                                                         \
    FIXED(AGG_MIN_##T, MinMaxState, min_update, min_merge, mm_final),                     \
    FIXED(AGG_MAX_##T, MinMaxState, max_update, max_merge, mm_final)
    MINMAX(INT2), MINMAX(INT4), MINMAX(INT8), MINMAX(FLOAT4), MINMAX(FLOAT8), MINMAX(DATE),
    MINMAX(TIMESTAMP), MINMAX(TIMESTAMPTZ), MINMAX(INTERVAL),
    ROW(AGG_MIN_NUMERIC, MinMaxNumState, true, minn_update, minn_merge, mmn_final, mmn_ser,
        mmn_deser),
    ROW(AGG_MAX_NUMERIC, MinMaxNumState, true, maxn_update, maxn_merge, mmn_final, mmn_ser,
        mmn_deser),
    ROW(AGG_MIN_TEXT, MinMaxTextState, true, mint_update, mint_merge, mmt_final, mmt_ser,
        mmt_deser),
    ROW(AGG_MAX_TEXT, MinMaxTextState, true, maxt_update, maxt_merge, mmt_final, mmt_ser,
        mmt_deser),
    FIXED(AGG_BOOL_AND, BoolState, booland_update, booland_merge, bool_final),
    FIXED(AGG_EVERY, BoolState, booland_update, booland_merge, bool_final),
    FIXED(AGG_BOOL_OR, BoolState, boolor_update, boolor_merge, bool_final),
    ROW(AGG_STRING_AGG, StringAggState, true, sagg_update, sagg_merge, sagg_final, sagg_ser,
        sagg_deser),
    FIXED(AGG_APPROX_COUNT_DISTINCT, HllState, hll_update, hll_merge, hll_final),
    ROW(AGG_ARRAY_AGG, ArrayAggState, true, aagg_update, aagg_merge, aagg_final, mmt_ser,
        mmt_deser),
};

const AggFunc *ex_agg_func(const AggSig *sig)
{
    if (sig->id >= AGG_JSONB_AGG)
        return &json_table[sig->id - AGG_JSONB_AGG];
    if (sig->id >= AGG_PERCENTILE_CONT)
        return ex_agg_ordered_func(sig->id);
    if (sig->id >= AGG_STDDEV_INT2)
        return ex_agg_stats_func(sig->id);
    return &agg_table[sig->id];
}
