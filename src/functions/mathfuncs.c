/*
 * mathfuncs.c -- the math functions and bitwise operators beyond + - * /,
 * as PostgreSQL 15's float.c, numeric.c and int.c compute them.
 *
 *   k_{trunc,sign,exp,ln,log10,cbrt,degrees,radians,sin,cos,tan,asin,
 *     acos,atan}_float8, k_atan2_float8, k_pi, k_random    float8
 *   k_{floor,ceil,trunc,sign,sqrt,exp,ln,log10}_numeric,
 *   k_log_numeric2, k_trunc_numeric_int4, k_div_numeric_trunc,
 *   k_round_numeric_any, k_pow_numeric_pg                     numeric
 *   k_{and,or,xor,not,shl,shr}_{int2,int4,int8}         & | # ~ << >>
 *   k_gcd_{int4,int8}, k_lcm_{int4,int8}
 *
 * Errors are PostgreSQL's: 2201E for logarithms of zero and negative
 * numbers, 2201F for square roots of negative numbers, 22003 "value out of
 * range: overflow/underflow" for float results that leave the range.
 *
 * The numeric transcendental functions (sqrt, exp, ln, log) pick their
 * result scale exactly as numeric.c does (at least 16 significant digits,
 * never fewer than the input's scale) but compute the digits in long
 * double: the first 18 significant digits are exact, digits beyond that
 * (only asked for by inputs with more than 18 fraction digits) are not.
 */
#include "functions/kernels.h"
#include "functions/numeric_arith.h"

#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

static int overflow(EvalCtx *cx)
{
    return sl_error(cx->err, ERRCODE_NUMERIC_VALUE_OUT_OF_RANGE, "value out of range: overflow");
}

static int underflow(EvalCtx *cx)
{
    return sl_error(cx->err, ERRCODE_NUMERIC_VALUE_OUT_OF_RANGE, "value out of range: underflow");
}

static int log_zero(EvalCtx *cx)
{
    return sl_error(cx->err, ERRCODE_INVALID_ARGUMENT_FOR_LOG, "cannot take logarithm of zero");
}

static int log_negative(EvalCtx *cx)
{
    return sl_error(cx->err, ERRCODE_INVALID_ARGUMENT_FOR_LOG,
                    "cannot take logarithm of a negative number");
}

static int out_of_range_input(EvalCtx *cx)
{
    return sl_error(cx->err, ERRCODE_NUMERIC_VALUE_OUT_OF_RANGE, "input is out of range");
}

/* ------------------------------------------------------------------ float8 */

#define F8_UNARY(NAME, BODY)                                                         \
    KERNEL(k_##NAME##_float8)                                                        \
    {                                                                                \
        const double *a = args[0].v.f64;                                             \
        double *r = out->v.f64;                                                      \
        FOR_SEL(sel, n, {                                                            \
            double x = a[i], v;                                                      \
            BODY                                                                     \
            r[i] = v;                                                                \
        });                                                                          \
        return 0;                                                                    \
    }

F8_UNARY(trunc, { v = trunc(x); })
F8_UNARY(sign, { v = x > 0 ? 1.0 : x < 0 ? -1.0 : 0.0; })
F8_UNARY(exp, {
    if (isnan(x)) {
        v = x;
    } else if (isinf(x)) {
        v = x > 0 ? x : 0;
    } else {
        errno = 0;
        v = exp(x);
        if (errno == ERANGE && v != 0)
            return overflow(cx);
        if (errno == ERANGE || v == 0)
            return underflow(cx);
        if (isinf(v))
            return overflow(cx);
    }
})
F8_UNARY(ln, {
    if (x == 0.0)
        return log_zero(cx);
    if (x < 0)
        return log_negative(cx);
    v = log(x);
    if (isinf(v) && !isinf(x))
        return overflow(cx);
    if (v == 0.0 && x != 1.0)
        return underflow(cx);
})
F8_UNARY(log10, {
    if (x == 0.0)
        return log_zero(cx);
    if (x < 0)
        return log_negative(cx);
    v = log10(x);
    if (isinf(v) && !isinf(x))
        return overflow(cx);
    if (v == 0.0 && x != 1.0)
        return underflow(cx);
})
F8_UNARY(cbrt, {
    v = cbrt(x);
    if (isinf(v) && !isinf(x))
        return overflow(cx);
    if (v == 0.0 && x != 0.0)
        return underflow(cx);
})
F8_UNARY(degrees, {
    v = x / 0.0174532925199432957692;
    if (isinf(v) && !isinf(x))
        return overflow(cx);
    if (v == 0.0 && x != 0.0)
        return underflow(cx);
})
F8_UNARY(radians, {
    v = x * 0.0174532925199432957692;
    if (isinf(v) && !isinf(x))
        return overflow(cx);
    if (v == 0.0 && x != 0.0)
        return underflow(cx);
})
F8_UNARY(sin, {
    if (isnan(x)) {
        v = x;
    } else {
        if (isinf(x))
            return out_of_range_input(cx);
        v = sin(x);
    }
})
F8_UNARY(cos, {
    if (isnan(x)) {
        v = x;
    } else {
        if (isinf(x))
            return out_of_range_input(cx);
        v = cos(x);
    }
})
F8_UNARY(tan, {
    if (isnan(x)) {
        v = x;
    } else {
        if (isinf(x))
            return out_of_range_input(cx);
        v = tan(x);
    }
})
F8_UNARY(asin, {
    if (isnan(x)) {
        v = x;
    } else {
        if (x < -1.0 || x > 1.0)
            return out_of_range_input(cx);
        v = asin(x);
    }
})
F8_UNARY(acos, {
    if (isnan(x)) {
        v = x;
    } else {
        if (x < -1.0 || x > 1.0)
            return out_of_range_input(cx);
        v = acos(x);
    }
})
F8_UNARY(atan, { v = isnan(x) ? x : atan(x); })

KERNEL(k_atan2_float8)
{
    FOR_SEL(sel, n, {
        double y = args[0].v.f64[i], x = args[1].v.f64[i];
        out->v.f64[i] = (isnan(y) || isnan(x)) ? NAN : atan2(y, x);
    });
    return 0;
}

KERNEL(k_pi)
{
    FOR_SEL(sel, n, { out->v.f64[i] = M_PI; });
    return 0;
}

/* random(): xorshift128+ per thread, seeded from the clock and the
 * thread's stack address; 53 random bits in [0, 1). */
static _Thread_local uint64_t rnd_s[2];

static uint64_t rnd_next(void)
{
    if (rnd_s[0] == 0 && rnd_s[1] == 0) {
        struct timespec t;
        clock_gettime(CLOCK_REALTIME, &t);
        uint64_t seed = (uint64_t)t.tv_nsec ^ ((uint64_t)t.tv_sec << 20) ^
                        (uint64_t)(uintptr_t)&t;
        for (int k = 0; k < 2; k++) {
            seed += UINT64_C(0x9E3779B97F4A7C15);
            uint64_t z = seed;
            z = (z ^ (z >> 30)) * UINT64_C(0xBF58476D1CE4E5B9);
            z = (z ^ (z >> 27)) * UINT64_C(0x94D049BB133111EB);
            rnd_s[k] = z ^ (z >> 31);
        }
    }
    uint64_t s1 = rnd_s[0];
    const uint64_t s0 = rnd_s[1];
    rnd_s[0] = s0;
    s1 ^= s1 << 23;
    rnd_s[1] = s1 ^ s0 ^ (s1 >> 17) ^ (s0 >> 26);
    return rnd_s[1] + s0;
}

KERNEL(k_random)
{
    FOR_SEL(sel, n, { out->v.f64[i] = (double)(rnd_next() >> 11) * 0x1.0p-53; });
    return 0;
}

/* ----------------------------------------------------------------- numeric */

static const SlNumeric num_nan = {NULL, 0, 0, NUM_NAN};
static const SlNumeric num_pinf = {NULL, 0, 0, NUM_PINF};

static int num_signum(const SlNumeric *x)
{
    if (x->sign == NUM_NAN)
        return 0;
    if (x->sign == NUM_PINF)
        return 1;
    if (x->sign == NUM_NINF)
        return -1;
    for (int k = 0; k < x->ndigits; k++)
        if (x->digits[k] != 0)
            return x->sign == NUM_NEG ? -1 : 1;
    return 0;
}

/* The decimal exponent of x's first nonzero digit (x != 0). */
static int dweight(const SlNumeric *x)
{
    int k = 0;
    while (k < x->ndigits && x->digits[k] == 0)
        k++;
    return x->ndigits - x->scale - 1 - k;
}

/* The weight of x in base-10000 digits, as PostgreSQL's NumericVar has it. */
static int nbase_weight(const SlNumeric *x)
{
    int e = dweight(x);
    return e >= 0 ? e / 4 : -((-e + 3) / 4);
}

static long double num_to_ld(const SlNumeric *x)
{
    StrBuf b;
    strbuf_init(&b);
    num_format(x, &b);
    long double v = strtold(b.data, NULL);
    strbuf_free(&b);
    return v;
}

/* A long double as numeric rounded to rscale fraction digits. */
static int num_from_ld(EvalCtx *cx, long double v, int rscale, SlNumeric *out)
{
    char buf[80];
    if (isinf(v) || isnan(v))
        return sl_error(cx->err, ERRCODE_NUMERIC_VALUE_OUT_OF_RANGE,
                        "value overflows numeric format");
    snprintf(buf, sizeof(buf), "%.19Le", v);
    SlNumeric t;
    int rc = num_parse(cx->arena, buf, strlen(buf), &t);
    if (rc == -2)
        return sl_error(cx->err, ERRCODE_NUMERIC_VALUE_OUT_OF_RANGE,
                        "value overflows numeric format");
    if (rc < 0)
        return sl_error(cx->err, ERRCODE_INTERNAL_ERROR, "could not convert %s", buf);
    num_round_to(cx->arena, &t, rscale, false, out);
    return 0;
}

static int clamp_scale(int rscale, const SlNumeric *x)
{
    rscale = SL_MAX(rscale, x->scale);
    rscale = SL_MAX(rscale, 0);
    return SL_MIN(rscale, 1000);
}

/* estimate_ln_dweight */
static int ln_dweight(const SlNumeric *x)
{
    if (num_signum(x) <= 0)
        return 0;
    long double v = num_to_ld(x);
    if (v >= 0.9L && v <= 1.1L) {
        long double d = v - 1.0L;
        if (d == 0)
            return 0;
        /* the weight of x - 1, exactly */
        SlNumeric one, diff;
        SlError e;
        memset(&e, 0, sizeof(e));
        Arena tmp;
        arena_init(&tmp, 1024);
        num_from_int64(&tmp, 1, &one);
        int w = 0;
        if (num_sub(&tmp, x, &one, &diff, &e) == 0 && num_signum(&diff) != 0)
            w = dweight(&diff);
        sl_error_clear(&e);
        arena_destroy(&tmp);
        return w;
    }
    double lv = (double)logl(v);
    return (int)log10(fabs(lv));
}

KERNEL(k_floor_numeric)
{
    FOR_SEL(sel, n, {
        const SlNumeric *x = &args[0].v.num[i];
        if (num_is_special(x)) {
            out->v.num[i] = *x;
            continue;
        }
        SlNumeric t;
        num_round_to(cx->arena, x, 0, true, &t);
        if (x->sign == NUM_NEG && num_cmp(&t, x) != 0) {
            SlNumeric one;
            num_from_int64(cx->arena, 1, &one);
            if (num_sub(cx->arena, &t, &one, &t, cx->err) < 0)
                return -1;
        }
        out->v.num[i] = t;
    });
    return 0;
}

KERNEL(k_ceil_numeric)
{
    FOR_SEL(sel, n, {
        const SlNumeric *x = &args[0].v.num[i];
        if (num_is_special(x)) {
            out->v.num[i] = *x;
            continue;
        }
        SlNumeric t;
        num_round_to(cx->arena, x, 0, true, &t);
        if (x->sign != NUM_NEG && num_cmp(&t, x) != 0) {
            SlNumeric one;
            num_from_int64(cx->arena, 1, &one);
            if (num_add(cx->arena, &t, &one, &t, cx->err) < 0)
                return -1;
        }
        out->v.num[i] = t;
    });
    return 0;
}

KERNEL(k_trunc_numeric)
{
    FOR_SEL(sel, n, { num_round_to(cx->arena, &args[0].v.num[i], 0, true, &out->v.num[i]); });
    return 0;
}

KERNEL(k_trunc_numeric_int4)
{
    FOR_SEL(sel, n, {
        int s = args[1].v.i32[i];
        s = SL_MAX(SL_MIN(s, NUM_MAX_SCALE), -NUM_MAX_INT_DIGITS);
        num_round_to(cx->arena, &args[0].v.num[i], s, true, &out->v.num[i]);
    });
    return 0;
}

KERNEL(k_round_numeric_any)
{
    FOR_SEL(sel, n, {
        int s = args[1].v.i32[i];
        s = SL_MAX(SL_MIN(s, NUM_MAX_SCALE), -NUM_MAX_INT_DIGITS);
        num_round_to(cx->arena, &args[0].v.num[i], s, false, &out->v.num[i]);
    });
    return 0;
}

KERNEL(k_sign_numeric)
{
    FOR_SEL(sel, n, {
        const SlNumeric *x = &args[0].v.num[i];
        if (x->sign == NUM_NAN)
            out->v.num[i] = *x;
        else
            num_from_int64(cx->arena, num_signum(x), &out->v.num[i]);
    });
    return 0;
}

/* div(x, y): the quotient truncated toward zero */
KERNEL(k_div_numeric_trunc)
{
    FOR_SEL(sel, n, {
        const SlNumeric *x = &args[0].v.num[i], *y = &args[1].v.num[i];
        if (num_signum(y) == 0 && y->sign != NUM_NAN)
            return sl_error(cx->err, ERRCODE_DIVISION_BY_ZERO, "division by zero");
        if (num_is_special(x) || num_is_special(y)) {
            if (num_div(cx->arena, x, y, &out->v.num[i], cx->err) < 0)
                return -1;
            if (!num_is_special(&out->v.num[i]))
                num_round_to(cx->arena, &out->v.num[i], 0, true, &out->v.num[i]);
            continue;
        }
        if (num_div_trunc(cx->arena, x, y, &out->v.num[i], cx->err) < 0)
            return -1;
    });
    return 0;
}

KERNEL(k_sqrt_numeric)
{
    FOR_SEL(sel, n, {
        const SlNumeric *x = &args[0].v.num[i];
        int sg = num_signum(x);
        if (x->sign == NUM_NAN || x->sign == NUM_PINF) {
            out->v.num[i] = *x;
            continue;
        }
        if (sg < 0)
            return sl_error(cx->err, ERRCODE_INVALID_ARGUMENT_FOR_POWER_FUNCTION,
                            "cannot take square root of a negative number");
        int sweight = sg == 0 ? -1 : (nbase_weight(x) + 1) * 4 / 2 - 1;
        int rscale = clamp_scale(16 - sweight, x);
        if (sg == 0) {
            SlNumeric z = {NULL, 0, 0, NUM_POS};
            num_round_to(cx->arena, &z, rscale, false, &out->v.num[i]);
            continue;
        }
        if (num_from_ld(cx, sqrtl(num_to_ld(x)), rscale, &out->v.num[i]) < 0)
            return -1;
    });
    return 0;
}

KERNEL(k_exp_numeric)
{
    FOR_SEL(sel, n, {
        const SlNumeric *x = &args[0].v.num[i];
        if (x->sign == NUM_NAN || x->sign == NUM_PINF) {
            out->v.num[i] = *x;
            continue;
        }
        if (x->sign == NUM_NINF) {
            num_from_int64(cx->arena, 0, &out->v.num[i]);
            continue;
        }
        long double v = num_to_ld(x);
        double w = (double)v * 0.434294481903252;
        w = SL_MAX(w, -2000.0);
        w = SL_MIN(w, 2000.0);
        int rscale = clamp_scale(16 - (int)w, x);
        if (v > 300000.0L)
            return sl_error(cx->err, ERRCODE_NUMERIC_VALUE_OUT_OF_RANGE,
                            "value overflows numeric format");
        long double r = expl(v);
        if (r == 0 || v < -300000.0L) {
            SlNumeric z = {NULL, 0, 0, NUM_POS};
            num_round_to(cx->arena, &z, rscale, false, &out->v.num[i]);
            continue;
        }
        if (num_from_ld(cx, r, rscale, &out->v.num[i]) < 0)
            return -1;
    });
    return 0;
}

KERNEL(k_ln_numeric)
{
    FOR_SEL(sel, n, {
        const SlNumeric *x = &args[0].v.num[i];
        if (x->sign == NUM_NAN || x->sign == NUM_PINF) {
            out->v.num[i] = *x;
            continue;
        }
        int sg = num_signum(x);
        if (sg == 0)
            return log_zero(cx);
        if (sg < 0)
            return log_negative(cx);
        int rscale = clamp_scale(16 - ln_dweight(x), x);
        if (num_from_ld(cx, logl(num_to_ld(x)), rscale, &out->v.num[i]) < 0)
            return -1;
    });
    return 0;
}

/* log_var(base, num) */
static int num_log(EvalCtx *cx, const SlNumeric *b, const SlNumeric *x, SlNumeric *out)
{
    if (b->sign == NUM_NAN || x->sign == NUM_NAN) {
        *out = num_nan;
        return 0;
    }
    int sb = num_signum(b), sx = num_signum(x);
    if (sb < 0 || sx < 0)
        return log_negative(cx);
    if (sb == 0 || sx == 0)
        return log_zero(cx);
    if (b->sign == NUM_PINF) {
        if (x->sign == NUM_PINF)
            *out = num_nan;
        else
            num_from_int64(cx->arena, 0, out);
        return 0;
    }
    if (x->sign == NUM_PINF) {
        *out = num_pinf;
        return 0;
    }
    long double lb = logl(num_to_ld(b)), lx = logl(num_to_ld(x));
    if (lb == 0)
        return sl_error(cx->err, ERRCODE_DIVISION_BY_ZERO, "division by zero");
    int rscale = 16 - (ln_dweight(x) - ln_dweight(b));
    rscale = SL_MAX(rscale, b->scale);
    rscale = clamp_scale(rscale, x);
    return num_from_ld(cx, lx / lb, rscale, out);
}

KERNEL(k_log10_numeric)
{
    SlNumeric ten;
    num_from_int64(cx->arena, 10, &ten);
    FOR_SEL(sel, n, {
        if (num_log(cx, &ten, &args[0].v.num[i], &out->v.num[i]) < 0)
            return -1;
    });
    return 0;
}

KERNEL(k_log_numeric2)
{
    FOR_SEL(sel, n, {
        if (num_log(cx, &args[0].v.num[i], &args[1].v.num[i], &out->v.num[i]) < 0)
            return -1;
    });
    return 0;
}

/* ----------------------------------------------------------------- bitwise */

#define BIT_KERNELS(T, CT, F, BITS)                                                  \
    KERNEL(k_and_##T)                                                                \
    {                                                                                \
        FOR_SEL(sel, n, { out->v.F[i] = (CT)(args[0].v.F[i] & args[1].v.F[i]); });   \
        return 0;                                                                    \
    }                                                                                \
    KERNEL(k_or_##T)                                                                 \
    {                                                                                \
        FOR_SEL(sel, n, { out->v.F[i] = (CT)(args[0].v.F[i] | args[1].v.F[i]); });   \
        return 0;                                                                    \
    }                                                                                \
    KERNEL(k_xor_##T)                                                                \
    {                                                                                \
        FOR_SEL(sel, n, { out->v.F[i] = (CT)(args[0].v.F[i] ^ args[1].v.F[i]); });   \
        return 0;                                                                    \
    }                                                                                \
    KERNEL(k_not_##T)                                                                \
    {                                                                                \
        FOR_SEL(sel, n, { out->v.F[i] = (CT)~args[0].v.F[i]; });                     \
        return 0;                                                                    \
    }                                                                                \
    KERNEL(k_shl_##T)                                                                \
    {                                                                                \
        FOR_SEL(sel, n, {                                                            \
            uint64_t u = (uint64_t)(int64_t)args[0].v.F[i];                          \
            out->v.F[i] = (CT)(u << (args[1].v.i32[i] & (BITS - 1)));                \
        });                                                                          \
        return 0;                                                                    \
    }                                                                                \
    KERNEL(k_shr_##T)                                                                \
    {                                                                                \
        FOR_SEL(sel, n, {                                                            \
            int64_t v = args[0].v.F[i];                                              \
            out->v.F[i] = (CT)(v >> (args[1].v.i32[i] & (BITS - 1)));                \
        });                                                                          \
        return 0;                                                                    \
    }

BIT_KERNELS(int2, int16_t, i16, 32)
BIT_KERNELS(int4, int32_t, i32, 32)
BIT_KERNELS(int8, int64_t, i64, 64)

static int int_range(EvalCtx *cx, const char *t)
{
    return sl_error(cx->err, ERRCODE_NUMERIC_VALUE_OUT_OF_RANGE, "%s out of range", t);
}

static int64_t gcd64(int64_t a, int64_t b)
{
    /* on absolute values; the caller rules out INT64_MIN results */
    uint64_t x = a < 0 ? 0 - (uint64_t)a : (uint64_t)a, y = b < 0 ? 0 - (uint64_t)b : (uint64_t)b;
    while (y != 0) {
        uint64_t t = x % y;
        x = y;
        y = t;
    }
    return (int64_t)x;
}

#define GCD_KERNELS(T, CT, F, MINV, TNAME)                                           \
    KERNEL(k_gcd_##T)                                                                \
    {                                                                                \
        FOR_SEL(sel, n, {                                                            \
            CT a = args[0].v.F[i], b = args[1].v.F[i];                               \
            if ((a == MINV && (b == 0 || b == MINV)) || (b == MINV && a == 0))       \
                return int_range(cx, TNAME);                                         \
            out->v.F[i] = (CT)gcd64(a, b);                                           \
        });                                                                          \
        return 0;                                                                    \
    }                                                                                \
    KERNEL(k_lcm_##T)                                                                \
    {                                                                                \
        FOR_SEL(sel, n, {                                                            \
            CT a = args[0].v.F[i], b = args[1].v.F[i];                               \
            if (a == 0 || b == 0) {                                                  \
                out->v.F[i] = 0;                                                     \
                continue;                                                            \
            }                                                                        \
            if ((a == MINV && (b == MINV)))                                          \
                return int_range(cx, TNAME);                                         \
            CT g = (CT)gcd64(a, b), r;                                               \
            if (__builtin_mul_overflow((CT)(a / g), b, &r) || r == MINV)             \
                return int_range(cx, TNAME);                                         \
            out->v.F[i] = r < 0 ? (CT)-r : r;                                        \
        });                                                                          \
        return 0;                                                                    \
    }

GCD_KERNELS(int4, int32_t, i32, INT32_MIN, "integer")
GCD_KERNELS(int8, int64_t, i64, INT64_MIN, "bigint")

/* ------------------------------------------------------- numeric ^ numeric */

static bool num_is_integral(const SlNumeric *x)
{
    for (int k = x->ndigits - x->scale; k < x->ndigits; k++)
        if (k >= 0 && x->digits[k] != 0)
            return false;
    return true;
}

/* numeric_power with PostgreSQL 15's result scales: an integer exponent
 * gives the exact power rounded to max(16, the base's scale) digits; any
 * other gives at least 16 significant digits (computed in long double). */
static int num_power(EvalCtx *cx, const SlNumeric *x, const SlNumeric *y, SlNumeric *out)
{
    if (x->sign == NUM_NAN || y->sign == NUM_NAN) {
        SlNumeric one;
        num_from_int64(cx->arena, 1, &one);
        if ((x->sign == NUM_NAN && !num_is_special(y) && num_signum(y) == 0) ||
            (y->sign == NUM_NAN && !num_is_special(x) && num_cmp(x, &one) == 0))
            *out = one;
        else
            *out = num_nan;
        return 0;
    }
    int sx = num_signum(x), sy = num_signum(y);
    if (sx == 0 && sy < 0)
        return sl_error(cx->err, ERRCODE_INVALID_ARGUMENT_FOR_POWER_FUNCTION,
                        "zero raised to a negative power is undefined");
    bool yint = !num_is_special(y) && num_is_integral(y);
    if (sx < 0 && !yint && y->sign != NUM_PINF && y->sign != NUM_NINF)
        return sl_error(cx->err, ERRCODE_INVALID_ARGUMENT_FOR_POWER_FUNCTION,
                        "a negative number raised to a non-integer power yields a complex "
                        "result");
    if (num_is_special(x) || num_is_special(y)) {
        /* the infinite cases, as numeric_power has them */
        long double r = powl(num_to_ld(x), num_to_ld(y));
        SlNumeric v = {NULL, 0, 0, NUM_POS};
        if (isinf(r))
            v.sign = r > 0 ? NUM_PINF : NUM_NINF;
        else if (r != 0)
            num_from_int64(cx->arena, (int64_t)r, &v);
        *out = v;
        return 0;
    }
    int64_t ey;
    if (yint && num_to_int64(y, &ey) == 0 && ey >= INT32_MIN && ey <= INT32_MAX) {
        int rscale = SL_MIN(SL_MAX(16, x->scale), 1000);
        if (ey == 0) {
            SlNumeric one;
            num_from_int64(cx->arena, 1, &one);
            num_round_to(cx->arena, &one, rscale, false, out);
            return 0;
        }
        double f = sx == 0 ? 0 : (double)ey * log10(fabs((double)num_to_ld(x)));
        if (f > 131072 + 16)
            return sl_error(cx->err, ERRCODE_NUMERIC_VALUE_OUT_OF_RANGE,
                            "value overflows numeric format");
        if (f + 1 < -rscale) {
            SlNumeric z = {NULL, 0, 0, NUM_POS};
            num_round_to(cx->arena, &z, rscale, false, out);
            return 0;
        }
        uint64_t mask = (uint64_t)(ey < 0 ? -ey : ey);
        if ((double)x->ndigits * (double)mask > 200000)
            return sl_error(cx->err, ERRCODE_FEATURE_NOT_SUPPORTED,
                            "numeric ^ numeric with a result this long is not supported yet");
        SlNumeric acc, base = *x;
        num_from_int64(cx->arena, 1, &acc);
        for (; mask > 0; mask >>= 1) {
            if ((mask & 1) && num_mul(cx->arena, &acc, &base, &acc, cx->err) < 0)
                return -1;
            if (mask > 1 && num_mul(cx->arena, &base, &base, &base, cx->err) < 0)
                return -1;
        }
        if (ey < 0) {
            SlNumeric one;
            num_from_int64(cx->arena, 1, &one);
            return num_div_round(cx->arena, &one, &acc, rscale, out, cx->err);
        }
        num_round_to(cx->arena, &acc, rscale, false, out);
        return 0;
    }
    long double lx = num_to_ld(x), ly = num_to_ld(y);
    double val = (double)(logl(lx) * ly);
    if (fabs(val) > 1000 * 3.01) {
        if (val > 0)
            return sl_error(cx->err, ERRCODE_NUMERIC_VALUE_OUT_OF_RANGE,
                            "value overflows numeric format");
        SlNumeric z = {NULL, 0, 0, NUM_POS};
        num_round_to(cx->arena, &z, 1000, false, out);
        return 0;
    }
    val *= 0.434294481903252;
    int rscale = 16 - (int)val;
    rscale = SL_MAX(rscale, x->scale);
    rscale = clamp_scale(rscale, y);
    return num_from_ld(cx, powl(lx, ly), rscale, out);
}

KERNEL(k_pow_numeric_pg)
{
    FOR_SEL(sel, n, {
        if (num_power(cx, &args[0].v.num[i], &args[1].v.num[i], &out->v.num[i]) < 0)
            return -1;
    });
    return 0;
}
