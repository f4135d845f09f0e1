/*
 * kernels.c -- arithmetic and comparison kernels, one tight loop each.
 *
 *   k_{add,sub,mul,div,neg,abs}_{int2,int4,int8,float4,float8,numeric}
 *   k_mod_*, k_pow_*, k_sqrt/floor/ceil/round_*
 *   k_{eq,ne,lt,le,gt,ge}_{bool,int2,int4,int8,float4,float8,numeric,text}
 *
 * Integer overflow is detected with __builtin_*_overflow and reported as
 * PostgreSQL does ("integer out of range", 22003); division by zero is
 * 22012.  Float arithmetic checks overflow and underflow as float.h does.
 * Floats compare with NaN equal to itself and above everything else, as
 * PostgreSQL's float8_cmp_internal; text compares byte-wise (the "C"
 * collation).  Kernels see only rows without NULL arguments.
 */
#include "functions/kernels.h"
#include "functions/numeric_arith.h"

#include <math.h>

static int int_range(EvalCtx *cx, const char *tname)
{
    return sl_error(cx->err, ERRCODE_NUMERIC_VALUE_OUT_OF_RANGE, "%s out of range", tname);
}

static int div_zero(EvalCtx *cx)
{
    return sl_error(cx->err, ERRCODE_DIVISION_BY_ZERO, "division by zero");
}

static int float_overflow(EvalCtx *cx)
{
    return sl_error(cx->err, ERRCODE_NUMERIC_VALUE_OUT_OF_RANGE, "value out of range: overflow");
}

static int float_underflow(EvalCtx *cx)
{
    return sl_error(cx->err, ERRCODE_NUMERIC_VALUE_OUT_OF_RANGE, "value out of range: underflow");
}

/* ---------------------------------------------------------------- integers */

#define INT_KERNELS(T, CT, F, TNAME, MINV)                                          \
    KERNEL(k_add_##T)                                                               \
    {                                                                               \
        const CT *a = args[0].v.F, *b = args[1].v.F;                                \
        CT *r = out->v.F;                                                           \
        bool ovf = false;                                                           \
        FOR_SEL(sel, n, { ovf |= __builtin_add_overflow(a[i], b[i], &r[i]); });     \
        return ovf ? int_range(cx, TNAME) : 0;                                      \
    }                                                                               \
    KERNEL(k_sub_##T)                                                               \
    {                                                                               \
        const CT *a = args[0].v.F, *b = args[1].v.F;                                \
        CT *r = out->v.F;                                                           \
        bool ovf = false;                                                           \
        FOR_SEL(sel, n, { ovf |= __builtin_sub_overflow(a[i], b[i], &r[i]); });     \
        return ovf ? int_range(cx, TNAME) : 0;                                      \
    }                                                                               \
    KERNEL(k_mul_##T)                                                               \
    {                                                                               \
        const CT *a = args[0].v.F, *b = args[1].v.F;                                \
        CT *r = out->v.F;                                                           \
        bool ovf = false;                                                           \
        FOR_SEL(sel, n, { ovf |= __builtin_mul_overflow(a[i], b[i], &r[i]); });     \
        return ovf ? int_range(cx, TNAME) : 0;                                      \
    }                                                                               \
    KERNEL(k_div_##T)                                                               \
    {                                                                               \
        const CT *a = args[0].v.F, *b = args[1].v.F;                                \
        CT *r = out->v.F;                                                           \
        bool zero = false, ovf = false;                                             \
        FOR_SEL(sel, n, {                                                           \
            if (b[i] == 0) {                                                        \
                zero = true;                                                        \
                break;                                                              \
            }                                                                       \
            if (b[i] == -1) {                                                       \
                ovf |= a[i] == MINV;                                                \
                r[i] = (CT)(a[i] == MINV ? 0 : -a[i]);                              \
            } else {                                                                \
                r[i] = (CT)(a[i] / b[i]);                                           \
            }                                                                       \
        });                                                                         \
        if (zero)                                                                   \
            return div_zero(cx);                                                    \
        return ovf ? int_range(cx, TNAME) : 0;                                      \
    }                                                                               \
    KERNEL(k_mod_##T)                                                               \
    {                                                                               \
        const CT *a = args[0].v.F, *b = args[1].v.F;                                \
        CT *r = out->v.F;                                                           \
        bool zero = false;                                                          \
        FOR_SEL(sel, n, {                                                           \
            if (b[i] == 0) {                                                        \
                zero = true;                                                        \
                break;                                                              \
            }                                                                       \
            r[i] = (CT)(b[i] == -1 ? 0 : a[i] % b[i]);                              \
        });                                                                         \
        return zero ? div_zero(cx) : 0;                                             \
    }                                                                               \
    KERNEL(k_neg_##T)                                                               \
    {                                                                               \
        const CT *a = args[0].v.F;                                                  \
        CT *r = out->v.F;                                                           \
        bool ovf = false;                                                           \
        FOR_SEL(sel, n, { ovf |= __builtin_sub_overflow((CT)0, a[i], &r[i]); });    \
        return ovf ? int_range(cx, TNAME) : 0;                                      \
    }                                                                               \
    KERNEL(k_abs_##T)                                                               \
    {                                                                               \
        const CT *a = args[0].v.F;                                                  \
        CT *r = out->v.F;                                                           \
        bool ovf = false;                                                           \
        FOR_SEL(sel, n, {                                                           \
            ovf |= a[i] == MINV;                                                    \
            r[i] = (CT)(a[i] < 0 && a[i] != MINV ? -a[i] : a[i]);                   \
        });                                                                         \
        return ovf ? int_range(cx, TNAME) : 0;                                      \
    }

INT_KERNELS(int2, int16_t, i16, "smallint", INT16_MIN)
INT_KERNELS(int4, int32_t, i32, "integer", INT32_MIN)
INT_KERNELS(int8, int64_t, i64, "bigint", INT64_MIN)

/* ------------------------------------------------------------------ floats */

#define FLOAT_KERNELS(T, CT, F)                                                     \
    KERNEL(k_add_##T)                                                               \
    {                                                                               \
        const CT *a = args[0].v.F, *b = args[1].v.F;                                \
        CT *r = out->v.F;                                                           \
        bool ovf = false;                                                           \
        FOR_SEL(sel, n, {                                                           \
            r[i] = a[i] + b[i];                                                     \
            ovf |= isinf(r[i]) && !isinf(a[i]) && !isinf(b[i]);                     \
        });                                                                         \
        return ovf ? float_overflow(cx) : 0;                                        \
    }                                                                               \
    KERNEL(k_sub_##T)                                                               \
    {                                                                               \
        const CT *a = args[0].v.F, *b = args[1].v.F;                                \
        CT *r = out->v.F;                                                           \
        bool ovf = false;                                                           \
        FOR_SEL(sel, n, {                                                           \
            r[i] = a[i] - b[i];                                                     \
            ovf |= isinf(r[i]) && !isinf(a[i]) && !isinf(b[i]);                     \
        });                                                                         \
        return ovf ? float_overflow(cx) : 0;                                        \
    }                                                                               \
    KERNEL(k_mul_##T)                                                               \
    {                                                                               \
        const CT *a = args[0].v.F, *b = args[1].v.F;                                \
        CT *r = out->v.F;                                                           \
        bool ovf = false, unf = false;                                              \
        FOR_SEL(sel, n, {                                                           \
            r[i] = a[i] * b[i];                                                     \
            ovf |= isinf(r[i]) && !isinf(a[i]) && !isinf(b[i]);                     \
            unf |= r[i] == 0 && a[i] != 0 && b[i] != 0;                             \
        });                                                                         \
        if (ovf)                                                                    \
            return float_overflow(cx);                                              \
        return unf ? float_underflow(cx) : 0;                                       \
    }                                                                               \
    KERNEL(k_div_##T)                                                               \
    {                                                                               \
        const CT *a = args[0].v.F, *b = args[1].v.F;                                \
        CT *r = out->v.F;                                                           \
        bool zero = false, ovf = false, unf = false;                                \
        FOR_SEL(sel, n, {                                                           \
            if (b[i] == 0 && !isnan(a[i])) {                                        \
                zero = true;                                                        \
                break;                                                              \
            }                                                                       \
            r[i] = a[i] / b[i];                                                     \
            ovf |= isinf(r[i]) && !isinf(a[i]);                                     \
            unf |= r[i] == 0 && a[i] != 0 && !isinf(b[i]);                          \
        });                                                                         \
        if (zero)                                                                   \
            return div_zero(cx);                                                    \
        if (ovf)                                                                    \
            return float_overflow(cx);                                              \
        return unf ? float_underflow(cx) : 0;                                       \
    }                                                                               \
    KERNEL(k_neg_##T)                                                               \
    {                                                                               \
        const CT *a = args[0].v.F;                                                  \
        CT *r = out->v.F;                                                           \
        FOR_SEL(sel, n, { r[i] = -a[i]; });                                         \
        return 0;                                                                   \
    }                                                                               \
    KERNEL(k_abs_##T)                                                               \
    {                                                                               \
        const CT *a = args[0].v.F;                                                  \
        CT *r = out->v.F;                                                           \
        FOR_SEL(sel, n, { r[i] = (CT)fabs(a[i]); });                                \
        return 0;                                                                   \
    }

FLOAT_KERNELS(float4, float, f32)
FLOAT_KERNELS(float8, double, f64)

/* float8pow, with PostgreSQL's domain errors. */
KERNEL(k_pow_float8)
{
    const double *a = args[0].v.f64, *b = args[1].v.f64;
    double *r = out->v.f64;
    FOR_SEL(sel, n, {
        double x = a[i], y = b[i];
        if (x == 0 && y < 0)
            return sl_error(cx->err, ERRCODE_INVALID_ARGUMENT_FOR_POWER_FUNCTION,
                            "zero raised to a negative power is undefined");
        if (x < 0 && floor(y) != y && !isinf(y))
            return sl_error(cx->err, ERRCODE_INVALID_ARGUMENT_FOR_POWER_FUNCTION,
                            "a negative number raised to a non-integer power yields a "
                            "complex result");
        double v = pow(x, y);
        if (isinf(v) && !isinf(x) && !isinf(y))
            return float_overflow(cx);
        if (v == 0 && x != 0 && !isinf(y) && !(fabs(x) > 1 && y < 0 && isinf(y)))
            return float_underflow(cx);
        r[i] = v;
    });
    return 0;
}

KERNEL(k_sqrt_float8)
{
    const double *a = args[0].v.f64;
    double *r = out->v.f64;
    FOR_SEL(sel, n, {
        if (a[i] < 0)
            return sl_error(cx->err, ERRCODE_INVALID_ARGUMENT_FOR_POWER_FUNCTION,
                            "cannot take square root of a negative number");
        r[i] = sqrt(a[i]);
    });
    return 0;
}

KERNEL(k_floor_float8)
{
    const double *a = args[0].v.f64;
    double *r = out->v.f64;
    FOR_SEL(sel, n, { r[i] = floor(a[i]); });
    return 0;
}

KERNEL(k_ceil_float8)
{
    const double *a = args[0].v.f64;
    double *r = out->v.f64;
    FOR_SEL(sel, n, { r[i] = ceil(a[i]); });
    return 0;
}

KERNEL(k_round_float8)
{
    const double *a = args[0].v.f64;
    double *r = out->v.f64;
    FOR_SEL(sel, n, { r[i] = rint(a[i]); });
    return 0;
}

/* For operators whose types sluice knows but cannot compute yet (interval
 * arithmetic): they exist so that resolution sees PostgreSQL's candidates. */
KERNEL(k_unsupported)
{
    return sl_error(cx->err, ERRCODE_FEATURE_NOT_SUPPORTED, "operator %s on type %s is not "
                    "supported yet", e->fn->name, type_name(args[0].type.id));
}

KERNEL(k_identity)
{
    size_t w = type_width(out->type.id);
    FOR_SEL(sel, n, { memcpy((char *)out->v.data + w * i, (const char *)args[0].v.data + w * i, w); });
    return 0;
}

/* ----------------------------------------------------------------- numeric */

#define NUM_BINOP(NAME, FN)                                                         \
    KERNEL(NAME)                                                                    \
    {                                                                               \
        const SlNumeric *a = args[0].v.num, *b = args[1].v.num;                     \
        SlNumeric *r = out->v.num;                                                  \
        FOR_SEL(sel, n, {                                                           \
            if (FN(cx->arena, &a[i], &b[i], &r[i], cx->err) < 0)                    \
                return -1;                                                          \
        });                                                                         \
        return 0;                                                                   \
    }

NUM_BINOP(k_add_numeric, num_add)
NUM_BINOP(k_sub_numeric, num_sub)
NUM_BINOP(k_mul_numeric, num_mul)
NUM_BINOP(k_div_numeric, num_div)
NUM_BINOP(k_mod_numeric, num_mod)

KERNEL(k_neg_numeric)
{
    FOR_SEL(sel, n, { num_neg(&args[0].v.num[i], &out->v.num[i]); });
    return 0;
}

KERNEL(k_abs_numeric)
{
    FOR_SEL(sel, n, { num_abs(&args[0].v.num[i], &out->v.num[i]); });
    return 0;
}

KERNEL(k_round_numeric)
{
    FOR_SEL(sel, n, { num_round(cx->arena, &args[0].v.num[i], 0, &out->v.num[i]); });
    return 0;
}

KERNEL(k_round_numeric_int4)
{
    FOR_SEL(sel, n, {
        int s = args[1].v.i32[i];
        if (s < 0 || s > NUM_MAX_SCALE)
            return sl_error(cx->err, ERRCODE_FEATURE_NOT_SUPPORTED,
                            "round(numeric, %d) is not supported yet", s);
        num_round(cx->arena, &args[0].v.num[i], s, &out->v.num[i]);
    });
    return 0;
}

/* numeric ^ numeric for integer exponents >= 0: the exact power rounded to
 * max(16, scale of the base) digits, as PostgreSQL's power_var_int gives.
 * Fractional and negative exponents are not supported yet. */
KERNEL(k_pow_numeric)
{
    FOR_SEL(sel, n, {
        const SlNumeric *x = &args[0].v.num[i], *y = &args[1].v.num[i];
        int64_t ey;
        bool integral = !num_is_special(y) && num_to_int64(y, &ey) == 0;
        if (integral) {
            /* y must have no nonzero fraction digits */
            for (int k = y->ndigits - y->scale; k < y->ndigits; k++)
                if (k >= 0 && y->digits[k] != 0)
                    integral = false;
        }
        if (num_is_special(x) || !integral || ey < 0 || ey > 100000)
            return sl_error(cx->err, ERRCODE_FEATURE_NOT_SUPPORTED,
                            "numeric ^ numeric is supported only for non-negative integer "
                            "exponents");
        /* the result's size before computing it: PostgreSQL fails past its
         * digit limit too; very long fractions are not computed exactly */
        int nint = x->ndigits - x->scale;
        if (nint > 1 && (double)(nint - 1) * (double)ey >= NUM_MAX_INT_DIGITS)
            return sl_error(cx->err, ERRCODE_NUMERIC_VALUE_OUT_OF_RANGE,
                            "value overflows numeric format");
        if ((double)x->ndigits * (double)ey > 50000)
            return sl_error(cx->err, ERRCODE_FEATURE_NOT_SUPPORTED,
                            "numeric ^ numeric with a result this long is not supported yet");
        SlNumeric acc, base = *x;
        num_from_int64(cx->arena, 1, &acc);
        for (int64_t e2 = ey; e2 > 0; e2 >>= 1) {
            if ((e2 & 1) && num_mul(cx->arena, &acc, &base, &acc, cx->err) < 0)
                return -1;
            if (e2 > 1 && num_mul(cx->arena, &base, &base, &base, cx->err) < 0)
                return -1;
        }
        num_round(cx->arena, &acc, SL_MAX(16, x->scale), &out->v.num[i]);
    });
    return 0;
}

/* ------------------------------------------------------------- comparisons */

#define CMP_SCALAR(a, b) (((a) > (b)) - ((a) < (b)))
#define CMP_FLOAT(a, b) \
    (isnan(a) ? (isnan(b) ? 0 : 1) : isnan(b) ? -1 : CMP_SCALAR(a, b))

static inline int cmp_text(const SlStr *a, const SlStr *b)
{
    int c = memcmp(a->ptr, b->ptr, SL_MIN(a->len, b->len));
    if (c != 0)
        return c;
    return CMP_SCALAR(a->len, b->len);
}

#define CMP_OP(T, F, OPNAME, TEST, CMP)                                             \
    KERNEL(k_##OPNAME##_##T)                                                        \
    {                                                                               \
        const __typeof__(args[0].v.F[0]) *a = args[0].v.F, *b = args[1].v.F;        \
        uint8_t *r = out->v.b;                                                      \
        FOR_SEL(sel, n, {                                                           \
            int c = CMP(a[i], b[i]);                                                \
            r[i] = (uint8_t)(c TEST 0);                                             \
        });                                                                         \
        return 0;                                                                   \
    }

#define CMP_ALL(T, F, CMP)                \
    CMP_OP(T, F, eq, ==, CMP)             \
    CMP_OP(T, F, ne, !=, CMP)             \
    CMP_OP(T, F, lt, <, CMP)              \
    CMP_OP(T, F, le, <=, CMP)             \
    CMP_OP(T, F, gt, >, CMP)              \
    CMP_OP(T, F, ge, >=, CMP)

#define CMP_NUM(a, b) num_cmp(&(a), &(b))
#define CMP_TEXT(a, b) cmp_text(&(a), &(b))
#define CMP_BPCHAR(a, b) value_cmp_bpchar(&(a), &(b))

/* character(n) against character(n): without the trailing spaces */
static int value_cmp_bpchar(const SlStr *a, const SlStr *b)
{
    SlStr x = {a->ptr, bpchar_len(a)}, y = {b->ptr, bpchar_len(b)};
    return cmp_text(&x, &y);
}

CMP_ALL(boolean, b, CMP_SCALAR)
CMP_ALL(int2, i16, CMP_SCALAR)
CMP_ALL(int4, i32, CMP_SCALAR)
CMP_ALL(int8, i64, CMP_SCALAR)
CMP_ALL(float4, f32, CMP_FLOAT)
CMP_ALL(float8, f64, CMP_FLOAT)
CMP_ALL(numeric, num, CMP_NUM)
CMP_ALL(text, str, CMP_TEXT)
CMP_ALL(bpchar, str, CMP_BPCHAR)
