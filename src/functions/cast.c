/*
 * cast.c -- casts between types: PostgreSQL's pg_cast rows for the types
 * sluice has, with their kernels.
 *
 *   ex_cast_fn(from, to, implicit_only)   the kernel, or NULL if no such cast
 *   ex_can_coerce(from, to)               is there an implicit cast?
 *
 * Casts to text (and varchar) use the type's output function; casts from
 * text (and from an untyped literal) use its input function, so both give
 * PostgreSQL's texts and errors.  The target's typmod (varchar(n),
 * numeric(p,s)) is in the Expr's type and is applied as an explicit cast
 * does: varchar truncates, numeric rounds or fails with "numeric field
 * overflow".  Range errors are PostgreSQL's ("integer out of range").
 */
#include "functions/kernels.h"
#include "types/numeric.h"

#include <float.h>
#include <math.h>

static int range_err(EvalCtx *cx, const char *tname)
{
    return sl_error(cx->err, ERRCODE_NUMERIC_VALUE_OUT_OF_RANGE, "%s out of range", tname);
}

/* integer -> integer */
#define CAST_INT(NAME, FF, TF, CT, LO, HI, TNAME)                                   \
    static KERNEL(NAME)                                                             \
    {                                                                               \
        bool bad = false;                                                           \
        FOR_SEL(sel, n, {                                                           \
            int64_t v = args[0].v.FF[i];                                            \
            bad |= v < (LO) || v > (HI);                                            \
            out->v.TF[i] = (CT)v;                                                   \
        });                                                                         \
        return bad ? range_err(cx, TNAME) : 0;                                      \
    }

CAST_INT(c_int2_int4, i16, i32, int32_t, INT32_MIN, INT32_MAX, "integer")
CAST_INT(c_int2_int8, i16, i64, int64_t, INT64_MIN, INT64_MAX, "bigint")
CAST_INT(c_int4_int2, i32, i16, int16_t, INT16_MIN, INT16_MAX, "smallint")
CAST_INT(c_int4_int8, i32, i64, int64_t, INT64_MIN, INT64_MAX, "bigint")
CAST_INT(c_int8_int2, i64, i16, int16_t, INT16_MIN, INT16_MAX, "smallint")
CAST_INT(c_int8_int4, i64, i32, int32_t, INT32_MIN, INT32_MAX, "integer")

/* integer -> float, float -> float8 */
#define CAST_WIDEN(NAME, FF, TF, CT)                                                \
    static KERNEL(NAME)                                                             \
    {                                                                               \
        FOR_SEL(sel, n, { out->v.TF[i] = (CT)args[0].v.FF[i]; });                   \
        return 0;                                                                   \
    }

CAST_WIDEN(c_int2_float4, i16, f32, float)
CAST_WIDEN(c_int4_float4, i32, f32, float)
CAST_WIDEN(c_int8_float4, i64, f32, float)
CAST_WIDEN(c_int2_float8, i16, f64, double)
CAST_WIDEN(c_int4_float8, i32, f64, double)
CAST_WIDEN(c_int8_float8, i64, f64, double)
CAST_WIDEN(c_float4_float8, f32, f64, double)

/* float -> integer: rint, then PostgreSQL's FLOAT8_FITS_IN_INT* test */
#define CAST_FLOAT_INT(NAME, FF, TF, CT, LO, TNAME)                                 \
    static KERNEL(NAME)                                                             \
    {                                                                               \
        bool bad = false;                                                           \
        FOR_SEL(sel, n, {                                                           \
            double v = rint((double)args[0].v.FF[i]);                               \
            if (isnan(v) || !(v >= (double)(LO) && v < -(double)(LO))) {            \
                bad = true;                                                         \
                break;                                                              \
            }                                                                       \
            out->v.TF[i] = (CT)v;                                                   \
        });                                                                         \
        return bad ? range_err(cx, TNAME) : 0;                                      \
    }

CAST_FLOAT_INT(c_float4_int2, f32, i16, int16_t, INT16_MIN, "smallint")
CAST_FLOAT_INT(c_float4_int4, f32, i32, int32_t, INT32_MIN, "integer")
CAST_FLOAT_INT(c_float4_int8, f32, i64, int64_t, INT64_MIN, "bigint")
CAST_FLOAT_INT(c_float8_int2, f64, i16, int16_t, INT16_MIN, "smallint")
CAST_FLOAT_INT(c_float8_int4, f64, i32, int32_t, INT32_MIN, "integer")
CAST_FLOAT_INT(c_float8_int8, f64, i64, int64_t, INT64_MIN, "bigint")

static KERNEL(c_float8_float4)
{
    FOR_SEL(sel, n, {
        double v = args[0].v.f64[i];
        float r = (float)v;
        if (isinf(r) && !isinf(v))
            return sl_error(cx->err, ERRCODE_NUMERIC_VALUE_OUT_OF_RANGE,
                            "value out of range: overflow");
        if (r == 0.0f && v != 0.0)
            return sl_error(cx->err, ERRCODE_NUMERIC_VALUE_OUT_OF_RANGE,
                            "value out of range: underflow");
        out->v.f32[i] = r;
    });
    return 0;
}

/* integer -> numeric */
#define CAST_INT_NUM(NAME, FF)                                                      \
    static KERNEL(NAME)                                                             \
    {                                                                               \
        FOR_SEL(sel, n, {                                                           \
            num_from_int64(cx->arena, args[0].v.FF[i], &out->v.num[i]);             \
            if (e->type.typmod >= 0 &&                                              \
                num_apply_typmod(cx->arena, &out->v.num[i], e->type.typmod,         \
                                 &out->v.num[i], cx->err) < 0)                      \
                return -1;                                                          \
        });                                                                         \
        return 0;                                                                   \
    }

CAST_INT_NUM(c_int2_numeric, i16)
CAST_INT_NUM(c_int4_numeric, i32)
CAST_INT_NUM(c_int8_numeric, i64)

/* numeric -> integer: rounds half away from zero */
#define CAST_NUM_INT(NAME, TF, CT, LO, HI, TNAME)                                   \
    static KERNEL(NAME)                                                             \
    {                                                                               \
        FOR_SEL(sel, n, {                                                           \
            int64_t v;                                                              \
            int rc = num_to_int64(&args[0].v.num[i], &v);                           \
            if (rc == -2)                                                           \
                return sl_error(cx->err, ERRCODE_FEATURE_NOT_SUPPORTED,             \
                                "cannot convert NaN to %s", TNAME);                 \
            if (rc == -3)                                                           \
                return sl_error(cx->err, ERRCODE_FEATURE_NOT_SUPPORTED,             \
                                "cannot convert infinity to %s", TNAME);            \
            if (rc < 0 || v < (LO) || v > (HI))                                     \
                return range_err(cx, TNAME);                                        \
            out->v.TF[i] = (CT)v;                                                   \
        });                                                                         \
        return 0;                                                                   \
    }

CAST_NUM_INT(c_numeric_int2, i16, int16_t, INT16_MIN, INT16_MAX, "smallint")
CAST_NUM_INT(c_numeric_int4, i32, int32_t, INT32_MIN, INT32_MAX, "integer")
CAST_NUM_INT(c_numeric_int8, i64, int64_t, INT64_MIN, INT64_MAX, "bigint")

static KERNEL(c_float4_numeric)
{
    FOR_SEL(sel, n, {
        num_from_double(cx->arena, args[0].v.f32[i], FLT_DIG, &out->v.num[i]);
        if (num_apply_typmod(cx->arena, &out->v.num[i], e->type.typmod, &out->v.num[i],
                             cx->err) < 0)
            return -1;
    });
    return 0;
}

static KERNEL(c_float8_numeric)
{
    FOR_SEL(sel, n, {
        num_from_double(cx->arena, args[0].v.f64[i], DBL_DIG, &out->v.num[i]);
        if (num_apply_typmod(cx->arena, &out->v.num[i], e->type.typmod, &out->v.num[i],
                             cx->err) < 0)
            return -1;
    });
    return 0;
}

static KERNEL(c_numeric_float8)
{
    FOR_SEL(sel, n, {
        double d = num_to_double(&args[0].v.num[i]);
        if (isinf(d) && !num_is_special(&args[0].v.num[i]))
            return sl_error(cx->err, ERRCODE_NUMERIC_VALUE_OUT_OF_RANGE,
                            "value out of range: overflow");
        out->v.f64[i] = d;
    });
    return 0;
}

static KERNEL(c_numeric_float4)
{
    FOR_SEL(sel, n, {
        double d = num_to_double(&args[0].v.num[i]);
        float f = (float)d;
        if (isinf(f) && !num_is_special(&args[0].v.num[i]))
            return sl_error(cx->err, ERRCODE_NUMERIC_VALUE_OUT_OF_RANGE,
                            "value out of range: overflow");
        out->v.f32[i] = f;
    });
    return 0;
}

static KERNEL(c_numeric_numeric)
{
    FOR_SEL(sel, n, {
        if (num_apply_typmod(cx->arena, &args[0].v.num[i], e->type.typmod, &out->v.num[i],
                             cx->err) < 0)
            return -1;
    });
    return 0;
}

static KERNEL(c_bool_int4)
{
    FOR_SEL(sel, n, { out->v.i32[i] = args[0].v.b[i] ? 1 : 0; });
    return 0;
}

static KERNEL(c_int4_bool)
{
    FOR_SEL(sel, n, { out->v.b[i] = args[0].v.i32[i] != 0; });
    return 0;
}

/* Cuts a string to n characters (varchar(n) as an explicit cast does). */
static void truncate_chars(SlStr *s, int32_t n)
{
    if (n < 0)
        return;
    int32_t chars = 0;
    for (uint32_t k = 0; k < s->len; k++) {
        if (((unsigned char)s->ptr[k] & 0xC0) != 0x80) {
            if (chars == n) {
                s->len = k;
                return;
            }
            chars++;
        }
    }
}

/* anything -> text or varchar: the output function, except that boolean
 * casts to text as "true" / "false" (pg_cast's text(boolean)) */
/* s cut to n characters and padded with spaces to n (n < 0: as it is),
 * in the arena: an explicit cast to character(n). */
static void pad_bpchar(Arena *a, SlStr *s, int32_t n)
{
    if (n < 0)
        return;
    truncate_chars(s, n);
    int32_t chars = 0;
    for (uint32_t k = 0; k < s->len; k++)
        chars += ((unsigned char)s->ptr[k] & 0xC0) != 0x80;
    if (chars == n)
        return;
    char *b = arena_alloc(a, s->len + (size_t)(n - chars));
    memcpy(b, s->ptr, s->len);
    memset(b + s->len, ' ', (size_t)(n - chars));
    s->ptr = b;
    s->len += (uint32_t)(n - chars);
}

static KERNEL(c_to_text)
{
    bool is_bool = args[0].type.id == TYPE_BOOL;
    FOR_SEL(sel, n, {
        if (is_bool) {
            out->v.str[i].ptr = args[0].v.b[i] ? "true" : "false";
            out->v.str[i].len = args[0].v.b[i] ? 4 : 5;
        } else {
            ex_format_value(cx->arena, &args[0], i, &out->v.str[i]);
        }
        if (e->type.id == TYPE_VARCHAR)
            truncate_chars(&out->v.str[i], e->type.typmod);
        if (e->type.id == TYPE_BPCHAR)
            pad_bpchar(cx->arena, &out->v.str[i], e->type.typmod);
    });
    return 0;
}

/* text, varchar, unknown or character(n) -> character(n) */
static KERNEL(c_to_bpchar)
{
    FOR_SEL(sel, n, {
        out->v.str[i] = args[0].v.str[i];
        pad_bpchar(cx->arena, &out->v.str[i], e->type.typmod);
    });
    return 0;
}

/* character(n) -> text or varchar: without the trailing spaces (rtrim1) */
static KERNEL(c_bpchar_text)
{
    FOR_SEL(sel, n, {
        out->v.str[i].ptr = args[0].v.str[i].ptr;
        out->v.str[i].len = bpchar_len(&args[0].v.str[i]);
        if (e->type.id == TYPE_VARCHAR)
            truncate_chars(&out->v.str[i], e->type.typmod);
        if (e->type.id == TYPE_BPCHAR)
            pad_bpchar(cx->arena, &out->v.str[i], e->type.typmod);
    });
    return 0;
}

/* text, varchar or unknown -> text or varchar */
static KERNEL(c_text_text)
{
    FOR_SEL(sel, n, {
        out->v.str[i] = args[0].v.str[i];
        if (e->type.id == TYPE_VARCHAR)
            truncate_chars(&out->v.str[i], e->type.typmod);
    });
    return 0;
}

/* text or unknown -> anything: the input function */
static KERNEL(c_from_text)
{
    SlType t = e->type;
    FOR_SEL(sel, n, {
        const SlStr *s = &args[0].v.str[i];
        if (value_parse_text(cx->arena, t, s->ptr, s->len, out, i, -1, cx->err) < 0)
            return -1;
    });
    return 0;
}

typedef struct CastRow {
    SlTypeId from, to;
    bool     implicit;
    ExprFn   fn;
} CastRow;

static const CastRow cast_table[] = {
    {TYPE_INT2, TYPE_INT4, true, c_int2_int4},
    {TYPE_INT2, TYPE_INT8, true, c_int2_int8},
    {TYPE_INT2, TYPE_FLOAT4, true, c_int2_float4},
    {TYPE_INT2, TYPE_FLOAT8, true, c_int2_float8},
    {TYPE_INT2, TYPE_NUMERIC, true, c_int2_numeric},
    {TYPE_INT4, TYPE_INT2, false, c_int4_int2},
    {TYPE_INT4, TYPE_INT8, true, c_int4_int8},
    {TYPE_INT4, TYPE_FLOAT4, true, c_int4_float4},
    {TYPE_INT4, TYPE_FLOAT8, true, c_int4_float8},
    {TYPE_INT4, TYPE_NUMERIC, true, c_int4_numeric},
    {TYPE_INT4, TYPE_BOOL, false, c_int4_bool},
    {TYPE_INT8, TYPE_INT2, false, c_int8_int2},
    {TYPE_INT8, TYPE_INT4, false, c_int8_int4},
    {TYPE_INT8, TYPE_FLOAT4, true, c_int8_float4},
    {TYPE_INT8, TYPE_FLOAT8, true, c_int8_float8},
    {TYPE_INT8, TYPE_NUMERIC, true, c_int8_numeric},
    {TYPE_FLOAT4, TYPE_INT2, false, c_float4_int2},
    {TYPE_FLOAT4, TYPE_INT4, false, c_float4_int4},
    {TYPE_FLOAT4, TYPE_INT8, false, c_float4_int8},
    {TYPE_FLOAT4, TYPE_FLOAT8, true, c_float4_float8},
    {TYPE_FLOAT4, TYPE_NUMERIC, false, c_float4_numeric},
    {TYPE_FLOAT8, TYPE_INT2, false, c_float8_int2},
    {TYPE_FLOAT8, TYPE_INT4, false, c_float8_int4},
    {TYPE_FLOAT8, TYPE_INT8, false, c_float8_int8},
    {TYPE_FLOAT8, TYPE_FLOAT4, false, c_float8_float4},
    {TYPE_FLOAT8, TYPE_NUMERIC, false, c_float8_numeric},
    {TYPE_NUMERIC, TYPE_INT2, false, c_numeric_int2},
    {TYPE_NUMERIC, TYPE_INT4, false, c_numeric_int4},
    {TYPE_NUMERIC, TYPE_INT8, false, c_numeric_int8},
    {TYPE_NUMERIC, TYPE_FLOAT4, true, c_numeric_float4},
    {TYPE_NUMERIC, TYPE_FLOAT8, true, c_numeric_float8},
    {TYPE_NUMERIC, TYPE_NUMERIC, true, c_numeric_numeric},
    {TYPE_BOOL, TYPE_INT4, false, c_bool_int4},
    {TYPE_TEXT, TYPE_VARCHAR, true, c_text_text},
    {TYPE_VARCHAR, TYPE_TEXT, true, c_text_text},
    {TYPE_VARCHAR, TYPE_VARCHAR, true, c_text_text},
    {TYPE_TEXT, TYPE_TEXT, true, c_text_text},
    /* character(n): padded on the way in, trimmed on the way out */
    {TYPE_TEXT, TYPE_BPCHAR, true, c_to_bpchar},
    {TYPE_VARCHAR, TYPE_BPCHAR, true, c_to_bpchar},
    {TYPE_BPCHAR, TYPE_BPCHAR, true, c_to_bpchar},
    {TYPE_BPCHAR, TYPE_TEXT, true, c_bpchar_text},
    {TYPE_BPCHAR, TYPE_VARCHAR, true, c_bpchar_text},
    /* dates and times (timefuncs.c), in the session's TimeZone */
    {TYPE_DATE, TYPE_TIMESTAMP, true, c_date_ts},
    {TYPE_DATE, TYPE_TIMESTAMPTZ, true, c_date_ts},
    {TYPE_TIMESTAMP, TYPE_DATE, false, c_ts_date},
    {TYPE_TIMESTAMPTZ, TYPE_DATE, false, c_ts_date},
    {TYPE_TIMESTAMP, TYPE_TIMESTAMPTZ, true, c_ts_ts},
    {TYPE_TIMESTAMPTZ, TYPE_TIMESTAMP, false, c_ts_ts},
    {TYPE_INTERVAL, TYPE_INTERVAL, true, c_interval_interval},
    /* jsonb to SQL scalars (jsonbfuncs.c) */
    {TYPE_JSONB, TYPE_NUMERIC, false, c_jsonb_numeric},
    {TYPE_JSONB, TYPE_INT2, false, c_jsonb_int2},
    {TYPE_JSONB, TYPE_INT4, false, c_jsonb_int4},
    {TYPE_JSONB, TYPE_INT8, false, c_jsonb_int8},
    {TYPE_JSONB, TYPE_FLOAT4, false, c_jsonb_float4},
    {TYPE_JSONB, TYPE_FLOAT8, false, c_jsonb_float8},
    {TYPE_JSONB, TYPE_BOOL, false, c_jsonb_bool},
};

static bool is_string(SlTypeId t)
{
    return t == TYPE_TEXT || t == TYPE_VARCHAR || t == TYPE_UNKNOWN;
}

ExprFn ex_cast_fn(SlTypeId from, SlTypeId to, bool implicit_only)
{
    for (size_t i = 0; i < SL_ARRAY_LEN(cast_table); i++) {
        const CastRow *c = &cast_table[i];
        if (c->from == from && c->to == to)
            return !implicit_only || c->implicit ? c->fn : NULL;
    }
    if (from == TYPE_UNKNOWN)
        return is_string(to) ? c_text_text : c_from_text;
    if (implicit_only)
        return NULL;
    /* the I/O conversion casts, explicit only */
    if (to == TYPE_TEXT || to == TYPE_VARCHAR || to == TYPE_BPCHAR)
        return c_to_text;
    if (is_string(from) || from == TYPE_BPCHAR)
        return c_from_text;
    if (from == to)
        return k_identity;
    return NULL;
}

bool ex_can_coerce(SlTypeId from, SlTypeId to)
{
    if (from == to || from == TYPE_UNKNOWN)
        return true;
    return ex_cast_fn(from, to, true) != NULL;
}

/* Assignment (INSERT, UPDATE) of a string to varchar(n) or character(n):
 * too long is an error, as varcharin and bpcharin have it, not the silent
 * truncation of an explicit cast (character(n) is padded). */
ExprFn ex_assign_cast_fn(SlTypeId from, SlTypeId to)
{
    if ((is_string(from) && to == TYPE_VARCHAR) ||
        ((is_string(from) || from == TYPE_BPCHAR) && to == TYPE_BPCHAR))
        return c_from_text;
    return ex_cast_fn(from, to, false);
}
