/*
 * srf.c -- set-returning functions: generate_series, string_to_table, and
 * the refusal of a set-returning call where no set can go.
 *
 *   fn_srf_series_int, fn_srf_series_ts, fn_srf_series_num
 *                      generate_series(start, stop [, step]) over int4 and
 *                      int8, over timestamp and timestamptz with an
 *                      interval step, over numeric (ExSrfFns, expr.h)
 *   fn_srf_string_to_table  string_to_table(s, sep [, null_string]): the
 *                      pieces of arrayfuncs.c's ex_string_split, as rows
 *   k_srf_misplaced    the kernel of every set-returning function: 0A000
 *
 * A set runs as PostgreSQL 15's generate_series_step_int4/_int8,
 * generate_series_timestamp and generate_series_step_numeric: step 0 is
 * 22023; the series stops before a value past stop (or past the type's
 * range).  regexp_split_to_table is regex.c's (fn_srf_regexp_split), the
 * jsonb sets jsonbfuncs.c's.
 */
#include "functions/kernels.h"
#include "functions/numeric_arith.h"
#include "types/numeric.h"

#include <stdlib.h>
#include <string.h>

/* Left in an expression the analyzer did not move into a ProjectSet:
 * PostgreSQL's refusal. */
KERNEL(k_srf_misplaced)
{
    SL_UNUSED(args);
    SL_UNUSED(out);
    SL_UNUSED(sel);
    SL_UNUSED(n);
    return sl_error(cx->err, ERRCODE_FEATURE_NOT_SUPPORTED,
                    "set-valued function %s called in context that cannot accept a set",
                    e->fn->name);
}

static int step_zero(EvalCtx *cx)
{
    return sl_error(cx->err, ERRCODE_INVALID_PARAMETER_VALUE, "step size cannot equal zero");
}

/* ---------------------------------------------------------- integers */

static int series_int_start(EvalCtx *cx, const Expr *e, const Vector *args, uint32_t row,
                            ExSrfIter *it)
{
    bool wide = e->type.id == TYPE_INT8;
    it->cur = wide ? args[0].v.i64[row] : args[0].v.i32[row];
    it->stop = wide ? args[1].v.i64[row] : args[1].v.i32[row];
    it->step = e->nargs < 3 ? 1 : wide ? args[2].v.i64[row] : args[2].v.i32[row];
    it->done = false;
    return it->step == 0 ? step_zero(cx) : 0;
}

static int series_int_next(EvalCtx *cx, ExSrfIter *it, Vector *out, uint32_t at)
{
    SL_UNUSED(cx);
    if (it->done || (it->step > 0 ? it->cur > it->stop : it->cur < it->stop))
        return 0;
    if (out->type.id == TYPE_INT8)
        out->v.i64[at] = it->cur;
    else
        out->v.i32[at] = (int32_t)it->cur;
    /* past the type's range: the series ends, as PostgreSQL's */
    int64_t lo = out->type.id == TYPE_INT8 ? INT64_MIN : INT32_MIN;
    int64_t hi = out->type.id == TYPE_INT8 ? INT64_MAX : INT32_MAX;
    if (__builtin_add_overflow(it->cur, it->step, &it->cur) || it->cur < lo || it->cur > hi)
        it->done = true;
    return 1;
}

const ExSrfFns fn_srf_series_int = {series_int_start, series_int_next, NULL, 0, {NULL, NULL}, {0, 0}};

/* -------------------------------------------------------- timestamps */

static int series_ts_start(EvalCtx *cx, const Expr *e, const Vector *args, uint32_t row,
                           ExSrfIter *it)
{
    SL_UNUSED(e);
    it->cur = args[0].v.i64[row];
    it->stop = args[1].v.i64[row];
    it->step_iv = args[2].v.iv[row];
    it->done = false;
    int sign = fn_interval_sign(&it->step_iv);
    if (sign == 0)
        return step_zero(cx);
    it->desc = sign < 0;
    return 0;
}

static int series_ts_next(EvalCtx *cx, ExSrfIter *it, Vector *out, uint32_t at)
{
    if (it->done || (it->desc ? it->cur < it->stop : it->cur > it->stop))
        return 0;
    out->v.i64[at] = it->cur;
    if (fn_ts_add_interval(cx, it->cur, &it->step_iv, &it->cur) < 0)
        return -1;
    return 1;
}

const ExSrfFns fn_srf_series_ts = {series_ts_start, series_ts_next, NULL, 0, {NULL, NULL}, {0, 0}};

/* ----------------------------------------------------------- numeric */

static int num_special(EvalCtx *cx, const SlNumeric *v, const char *what)
{
    if (v->sign == NUM_NAN)
        return sl_error(cx->err, ERRCODE_INVALID_PARAMETER_VALUE, "%s value cannot be NaN",
                        what);
    if (v->sign == NUM_PINF || v->sign == NUM_NINF)
        return sl_error(cx->err, ERRCODE_INVALID_PARAMETER_VALUE,
                        "%s value cannot be infinity", what);
    return 0;
}

/* Keeps v as the iterator's current value, in its own buffer. */
static void num_keep(ExSrfIter *it, const SlNumeric *v)
{
    if (v->ndigits > it->nbufcap) {
        it->nbufcap = v->ndigits + 16;
        it->nbuf = sl_realloc(it->nbuf, (size_t)it->nbufcap);
    }
    if (v->ndigits > 0)
        memcpy(it->nbuf, v->digits, (size_t)v->ndigits);
    it->ncur = *v;
    it->ncur.digits = it->nbuf;
}

static int series_num_start(EvalCtx *cx, const Expr *e, const Vector *args, uint32_t row,
                            ExSrfIter *it)
{
    static const uint8_t one_digit[1] = {1};
    SlNumeric one = {one_digit, 1, 0, NUM_POS};
    it->nstop = args[1].v.num[row];
    it->nstep = e->nargs < 3 ? one : args[2].v.num[row];
    it->done = false;
    if (num_special(cx, &args[0].v.num[row], "start") < 0 ||
        num_special(cx, &it->nstop, "stop") < 0 ||
        (e->nargs == 3 && num_special(cx, &it->nstep, "step size") < 0))
        return -1;
    static const SlNumeric zero = {NULL, 0, 0, NUM_POS};
    int sign = num_cmp(&it->nstep, &zero);
    if (sign == 0)
        return step_zero(cx);
    it->desc = sign < 0;
    num_keep(it, &args[0].v.num[row]);
    return 0;
}

static int series_num_next(EvalCtx *cx, ExSrfIter *it, Vector *out, uint32_t at)
{
    int c = num_cmp(&it->ncur, &it->nstop);
    if (it->done || (it->desc ? c < 0 : c > 0))
        return 0;
    SlNumeric v = it->ncur, next;
    uint8_t *d = arena_alloc(cx->arena, (size_t)(v.ndigits > 0 ? v.ndigits : 1));
    if (v.ndigits > 0)
        memcpy(d, v.digits, (size_t)v.ndigits);
    v.digits = d;
    out->v.num[at] = v;
    if (num_add(cx->arena, &v, &it->nstep, &next, cx->err) < 0)
        return -1;
    num_keep(it, &next);
    return 1;
}

static void series_num_end(ExSrfIter *it)
{
    free(it->nbuf);
    it->nbuf = NULL;
    it->nbufcap = 0;
}

const ExSrfFns fn_srf_series_num = {series_num_start, series_num_next, series_num_end, 0, {NULL, NULL}, {0, 0}};

/* ------------------------------------------------------ string_to_table */

/* string_to_table(s, sep [, null_string]): string_to_array's pieces as
 * rows (ex_string_split), read from the array in it->s; it->pos is the
 * next element's byte, it->cur its index, it->stop the count.  Not
 * strict: a NULL sep splits into characters; a NULL s has no rows. */
static int strtab_start(EvalCtx *cx, const Expr *e, const Vector *args, uint32_t row,
                        ExSrfIter *it)
{
    it->done = vector_is_null(&args[0], row);
    if (it->done)
        return 0;
    ex_string_split(cx->arena, args, e->nargs, row, &it->s);
    ArrayIter ai;
    array_iter_init(&ai, &it->s);
    it->pos = (size_t)(ai.p - it->s.ptr);
    it->cur = 0;
    it->stop = ai.n;
    return 0;
}

static int strtab_next(EvalCtx *cx, ExSrfIter *it, Vector *out, uint32_t at)
{
    SL_UNUSED(cx);
    if (it->done || it->cur >= it->stop)
        return 0;
    ArrayIter ai = {it->s.ptr + it->pos, it->s.ptr + it->s.len, (int32_t)it->stop,
                    (int32_t)it->cur};
    ArrayElem el;
    if (!array_next(&ai, &el))
        return 0;
    it->pos = (size_t)(ai.p - it->s.ptr);
    it->cur++;
    out->nulls[at] = el.null;
    out->v.str[at].ptr = el.null ? "" : el.data;
    out->v.str[at].len = el.null ? 0 : (uint32_t)el.len;
    return 1;
}

const ExSrfFns fn_srf_string_to_table = {strtab_start, strtab_next, NULL, 0, {NULL, NULL},
                                         {0, 0}};
