/*
 * timefuncs.c -- kernels for DATE, TIMESTAMP, TIMESTAMPTZ and INTERVAL:
 * casts, arithmetic, comparisons and the date/time functions, computed as
 * PostgreSQL 15's date.c and timestamp.c compute them, in the session's
 * TimeZone (settings.h) where PostgreSQL reads it: casts between date,
 * timestamp and timestamptz, current_date, date_trunc and extract of a
 * timestamptz.
 *
 *   c_date_ts, c_ts_date, c_ts_ts, c_interval_interval        casts
 *   k_make_timestamp, k_make_timestamptz, k_make_interval     make_*(...) with
 *                      PostgreSQL 15's checks
 *   k_date_pli, k_date_mii, k_date_mi, k_int_pl_date           date +- int
 *   k_date_pl_iv, k_date_mi_iv, k_iv_pl_date                   date +- interval
 *   k_ts_pl_iv, k_ts_mi_iv, k_iv_pl_ts, k_ts_mi                timestamp arithmetic
 *   k_iv_pl, k_iv_mi, k_iv_um, k_iv_mul, k_mul_iv, k_iv_div    interval arithmetic
 *   k_{eq,ne,lt,le,gt,ge}_interval                             interval comparisons
 *   k_now, k_clock_timestamp, k_current_date, k_localtimestamp the clock
 *   k_date_trunc_ts, k_date_trunc_iv                           date_trunc
 *   k_extract_{ts,tstz,date,iv}, k_date_part_{ts,tstz,iv}      extract, date_part
 *   k_to_timestamp_f8, k_age, k_age1, k_date_bin, k_justify_*, k_isfinite_*, k_timezone_*
 *   ex_clock_now                                               the clock, for EvalCtx.now
 *
 * now() is the statement's time: the first call in an EvalCtx reads the
 * clock into cx->now and every later one returns it, so a statement sees
 * one value however many rows and expressions ask.
 */
#include "types/datetime.h"
#include "functions/kernels.h"
#include "functions/numeric_arith.h"

#include <ctype.h>
#include <limits.h>
#include <math.h>
#include <stdio.h>

static int ts_range(EvalCtx *cx)
{
    return sl_error(cx->err, ERRCODE_DATETIME_VALUE_OUT_OF_RANGE, "timestamp out of range");
}

static int iv_range(EvalCtx *cx)
{
    return sl_error(cx->err, ERRCODE_DATETIME_VALUE_OUT_OF_RANGE, "interval out of range");
}

static int date_range(EvalCtx *cx)
{
    return sl_error(cx->err, ERRCODE_DATETIME_VALUE_OUT_OF_RANGE, "date out of range");
}

/* ------------------------------------------------------------------ casts */

static int date2ts(EvalCtx *cx, int32_t d, int64_t *out)
{
    if (d == DATE_NOBEGIN)
        *out = DT_NOBEGIN;
    else if (d == DATE_NOEND)
        *out = DT_NOEND;
    else if (d >= TIMESTAMP_END_JULIAN - POSTGRES_EPOCH_JDATE)
        return sl_error(cx->err, ERRCODE_DATETIME_VALUE_OUT_OF_RANGE,
                        "date out of range for timestamp");
    else
        *out = (int64_t)d * USECS_PER_DAY;
    return 0;
}

/* Casts between timestamp, timestamptz and date read and write local
 * times in the session's time zone (settings.h), as PostgreSQL's do. */
KERNEL(c_date_ts)
{
    bool tz = e->type.id == TYPE_TIMESTAMPTZ;
    FOR_SEL(sel, n, {
        if (date2ts(cx, args[0].v.i32[i], &out->v.i64[i]) < 0)
            return -1;
        if (tz && dt_ts_finite(out->v.i64[i]))
            out->v.i64[i] -= (int64_t)dt_session_local_offset(out->v.i64[i]) * USECS_PER_SEC;
    });
    return 0;
}

KERNEL(c_ts_date)
{
    FOR_SEL(sel, n, {
        int64_t t = args[0].v.i64[i];
        if (t == DT_NOBEGIN) {
            out->v.i32[i] = DATE_NOBEGIN;
        } else if (t == DT_NOEND) {
            out->v.i32[i] = DATE_NOEND;
        } else {
            if (args[0].type.id == TYPE_TIMESTAMPTZ)
                t += (int64_t)dt_session_utc_offset(t) * USECS_PER_SEC;
            int64_t d = t / USECS_PER_DAY;
            if (t % USECS_PER_DAY < 0)
                d--;
            out->v.i32[i] = (int32_t)d;
        }
    });
    return 0;
}

KERNEL(c_ts_ts)
{
    int dir = args[0].type.id == e->type.id ? 0 : e->type.id == TYPE_TIMESTAMPTZ ? -1 : 1;
    FOR_SEL(sel, n, {
        int64_t t = args[0].v.i64[i];
        if (dir != 0 && dt_ts_finite(t)) {
            int32_t off = dir < 0 ? dt_session_local_offset(t) : dt_session_utc_offset(t);
            t += dir * (int64_t)off * USECS_PER_SEC;
            if (!dt_ts_valid(t))
                return ts_range(cx);
        }
        out->v.i64[i] = t;
    });
    return 0;
}

KERNEL(c_interval_interval)
{
    FOR_SEL(sel, n, {
        out->v.iv[i] = args[0].v.iv[i];
        if (dt_interval_adjust(&out->v.iv[i], e->type.typmod, cx->err) < 0)
            return -1;
    });
    return 0;
}

/* ------------------------------------------------------- date arithmetic */

static int date_add_days(EvalCtx *cx, int32_t d, int64_t days, int32_t *out)
{
    if (!dt_date_finite(d)) {
        *out = d;
        return 0;
    }
    int64_t r = (int64_t)d + days;
    if (r > INT32_MAX || r < INT32_MIN || !dt_date_valid(r))
        return date_range(cx);
    *out = (int32_t)r;
    return 0;
}

KERNEL(k_date_pli)
{
    FOR_SEL(sel, n, {
        if (date_add_days(cx, args[0].v.i32[i], args[1].v.i32[i], &out->v.i32[i]) < 0)
            return -1;
    });
    return 0;
}

KERNEL(k_int_pl_date)
{
    FOR_SEL(sel, n, {
        if (date_add_days(cx, args[1].v.i32[i], args[0].v.i32[i], &out->v.i32[i]) < 0)
            return -1;
    });
    return 0;
}

KERNEL(k_date_mii)
{
    FOR_SEL(sel, n, {
        if (date_add_days(cx, args[0].v.i32[i], -(int64_t)args[1].v.i32[i], &out->v.i32[i]) < 0)
            return -1;
    });
    return 0;
}

KERNEL(k_date_mi)
{
    FOR_SEL(sel, n, {
        int32_t a = args[0].v.i32[i], b = args[1].v.i32[i];
        if (!dt_date_finite(a) || !dt_date_finite(b))
            return sl_error(cx->err, ERRCODE_DATETIME_VALUE_OUT_OF_RANGE,
                            "cannot subtract infinite dates");
        out->v.i32[i] = a - b;
    });
    return 0;
}

/* -------------------------------------------------- timestamp arithmetic */

/* timestamp_pl_interval */
static int ts_add_iv(EvalCtx *cx, int64_t ts, const SlInterval *span, int64_t *out)
{
    if (!dt_ts_finite(ts)) {
        *out = ts;
        return 0;
    }
    DtTm tm;
    if (span->months != 0) {
        if (dt_ts2tm(ts, &tm) < 0)
            return ts_range(cx);
        int64_t mon = (int64_t)tm.mon + span->months;
        int64_t year = tm.year;
        if (mon > MONTHS_PER_YEAR) {
            year += (mon - 1) / MONTHS_PER_YEAR;
            mon = ((mon - 1) % MONTHS_PER_YEAR) + 1;
        } else if (mon < 1) {
            year += mon / MONTHS_PER_YEAR - 1;
            mon = mon % MONTHS_PER_YEAR + MONTHS_PER_YEAR;
        }
        if (year > INT_MAX / 2 || year < INT_MIN / 2)
            return ts_range(cx);
        tm.year = (int)year;
        tm.mon = (int)mon;
        if (tm.mday > dt_days_in_month(tm.year, tm.mon))
            tm.mday = dt_days_in_month(tm.year, tm.mon);
        if (dt_tm2ts(&tm, &ts) < 0)
            return ts_range(cx);
    }
    if (span->days != 0) {
        if (dt_ts2tm(ts, &tm) < 0)
            return ts_range(cx);
        int64_t j = (int64_t)dt_date2j(tm.year, tm.mon, tm.mday) + span->days;
        if (j < 0 || j > INT_MAX)
            return ts_range(cx);
        dt_j2date((int)j, &tm.year, &tm.mon, &tm.mday);
        if (dt_tm2ts(&tm, &ts) < 0)
            return ts_range(cx);
    }
    if (__builtin_add_overflow(ts, span->usec, &ts) || !dt_ts_valid(ts))
        return ts_range(cx);
    *out = ts;
    return 0;
}

/* timestamp + interval, for generate_series (srf.c). */
int fn_ts_add_interval(EvalCtx *cx, int64_t ts, const SlInterval *span, int64_t *out)
{
    return ts_add_iv(cx, ts, span, out);
}


static SlInterval iv_negate_raw(const SlInterval *a)
{
    SlInterval r = {(int64_t)(0 - (uint64_t)a->usec), (int32_t)(0 - (uint32_t)a->days),
                    (int32_t)(0 - (uint32_t)a->months)};
    return r;
}

KERNEL(k_ts_pl_iv)
{
    FOR_SEL(sel, n, {
        if (ts_add_iv(cx, args[0].v.i64[i], &args[1].v.iv[i], &out->v.i64[i]) < 0)
            return -1;
    });
    return 0;
}

KERNEL(k_iv_pl_ts)
{
    FOR_SEL(sel, n, {
        if (ts_add_iv(cx, args[1].v.i64[i], &args[0].v.iv[i], &out->v.i64[i]) < 0)
            return -1;
    });
    return 0;
}

KERNEL(k_ts_mi_iv)
{
    FOR_SEL(sel, n, {
        SlInterval neg = iv_negate_raw(&args[1].v.iv[i]);
        if (ts_add_iv(cx, args[0].v.i64[i], &neg, &out->v.i64[i]) < 0)
            return -1;
    });
    return 0;
}

/* date +- interval: the date as a timestamp, then timestamp arithmetic. */
KERNEL(k_date_pl_iv)
{
    FOR_SEL(sel, n, {
        int64_t t = 0;
        if (date2ts(cx, args[0].v.i32[i], &t) < 0 ||
            ts_add_iv(cx, t, &args[1].v.iv[i], &out->v.i64[i]) < 0)
            return -1;
    });
    return 0;
}

KERNEL(k_iv_pl_date)
{
    FOR_SEL(sel, n, {
        int64_t t = 0;
        if (date2ts(cx, args[1].v.i32[i], &t) < 0 ||
            ts_add_iv(cx, t, &args[0].v.iv[i], &out->v.i64[i]) < 0)
            return -1;
    });
    return 0;
}

KERNEL(k_date_mi_iv)
{
    FOR_SEL(sel, n, {
        int64_t t = 0;
        SlInterval neg = iv_negate_raw(&args[1].v.iv[i]);
        if (date2ts(cx, args[0].v.i32[i], &t) < 0 || ts_add_iv(cx, t, &neg, &out->v.i64[i]) < 0)
            return -1;
    });
    return 0;
}

/* interval_justify_hours on a fresh difference */
static void justify_hours(SlInterval *r)
{
    int64_t wholeday = r->usec / USECS_PER_DAY;
    r->usec -= wholeday * USECS_PER_DAY;
    r->days += (int32_t)wholeday;
    if (r->days > 0 && r->usec < 0) {
        r->usec += USECS_PER_DAY;
        r->days--;
    } else if (r->days < 0 && r->usec > 0) {
        r->usec -= USECS_PER_DAY;
        r->days++;
    }
}

KERNEL(k_ts_mi)
{
    FOR_SEL(sel, n, {
        int64_t a = args[0].v.i64[i], b = args[1].v.i64[i];
        if (!dt_ts_finite(a) || !dt_ts_finite(b))
            return sl_error(cx->err, ERRCODE_DATETIME_VALUE_OUT_OF_RANGE,
                            "cannot subtract infinite timestamps");
        SlInterval r = {0, 0, 0};
        if (__builtin_sub_overflow(a, b, &r.usec))
            return iv_range(cx);
        justify_hours(&r);
        out->v.iv[i] = r;
    });
    return 0;
}

/* ---------------------------------------------------- interval arithmetic */

KERNEL(k_iv_pl)
{
    FOR_SEL(sel, n, {
        const SlInterval *a = &args[0].v.iv[i], *b = &args[1].v.iv[i];
        SlInterval *r = &out->v.iv[i];
        if (__builtin_add_overflow(a->months, b->months, &r->months) ||
            __builtin_add_overflow(a->days, b->days, &r->days) ||
            __builtin_add_overflow(a->usec, b->usec, &r->usec))
            return iv_range(cx);
    });
    return 0;
}

KERNEL(k_iv_mi)
{
    FOR_SEL(sel, n, {
        const SlInterval *a = &args[0].v.iv[i], *b = &args[1].v.iv[i];
        SlInterval *r = &out->v.iv[i];
        if (__builtin_sub_overflow(a->months, b->months, &r->months) ||
            __builtin_sub_overflow(a->days, b->days, &r->days) ||
            __builtin_sub_overflow(a->usec, b->usec, &r->usec))
            return iv_range(cx);
    });
    return 0;
}

KERNEL(k_iv_um)
{
    FOR_SEL(sel, n, {
        const SlInterval *a = &args[0].v.iv[i];
        if (a->usec == INT64_MIN || a->days == INT32_MIN || a->months == INT32_MIN)
            return iv_range(cx);
        out->v.iv[i] = iv_negate_raw(a);
    });
    return 0;
}

#define TSROUND(j) (rint(((double)(j)) * 1000000.0) / 1000000.0)

/* interval_mul */
static int iv_mul(EvalCtx *cx, const SlInterval *span, double factor, SlInterval *r)
{
    double d = span->months * factor;
    if (isnan(d) || d > INT_MAX || d < INT_MIN)
        return iv_range(cx);
    r->months = (int32_t)d;
    d = span->days * factor;
    if (isnan(d) || d > INT_MAX || d < INT_MIN)
        return iv_range(cx);
    r->days = (int32_t)d;
    double month_remainder_days = (span->months * factor - r->months) * DAYS_PER_MONTH;
    month_remainder_days = TSROUND(month_remainder_days);
    double sec_remainder = (span->days * factor - r->days + month_remainder_days -
                            (int)month_remainder_days) * SECS_PER_DAY;
    sec_remainder = TSROUND(sec_remainder);
    if (fabs(sec_remainder) >= SECS_PER_DAY) {
        r->days += (int)(sec_remainder / SECS_PER_DAY);
        sec_remainder -= (int)(sec_remainder / SECS_PER_DAY) * SECS_PER_DAY;
    }
    r->days += (int32_t)month_remainder_days;
    d = rint(span->usec * factor + sec_remainder * USECS_PER_SEC);
    if (isnan(d) || !(d >= (double)INT64_MIN && d < -(double)INT64_MIN))
        return iv_range(cx);
    r->usec = (int64_t)d;
    return 0;
}

KERNEL(k_iv_mul)
{
    FOR_SEL(sel, n, {
        if (iv_mul(cx, &args[0].v.iv[i], args[1].v.f64[i], &out->v.iv[i]) < 0)
            return -1;
    });
    return 0;
}

KERNEL(k_mul_iv)
{
    FOR_SEL(sel, n, {
        if (iv_mul(cx, &args[1].v.iv[i], args[0].v.f64[i], &out->v.iv[i]) < 0)
            return -1;
    });
    return 0;
}

/* interval_div */
KERNEL(k_iv_div)
{
    FOR_SEL(sel, n, {
        const SlInterval *span = &args[0].v.iv[i];
        double factor = args[1].v.f64[i];
        SlInterval *r = &out->v.iv[i];
        if (factor == 0.0)
            return sl_error(cx->err, ERRCODE_DIVISION_BY_ZERO, "division by zero");
        double d = span->months / factor;
        if (isnan(d) || d > INT_MAX || d < INT_MIN)
            return iv_range(cx);
        r->months = (int32_t)d;
        d = span->days / factor;
        if (isnan(d) || d > INT_MAX || d < INT_MIN)
            return iv_range(cx);
        r->days = (int32_t)d;
        double month_remainder_days = (span->months / factor - r->months) * DAYS_PER_MONTH;
        month_remainder_days = TSROUND(month_remainder_days);
        double sec_remainder = (span->days / factor - r->days + month_remainder_days -
                                (int)month_remainder_days) * SECS_PER_DAY;
        sec_remainder = TSROUND(sec_remainder);
        if (fabs(sec_remainder) >= SECS_PER_DAY) {
            r->days += (int)(sec_remainder / SECS_PER_DAY);
            sec_remainder -= (int)(sec_remainder / SECS_PER_DAY) * SECS_PER_DAY;
        }
        r->days += (int32_t)month_remainder_days;
        d = rint(span->usec / factor + sec_remainder * USECS_PER_SEC);
        if (isnan(d) || !(d >= (double)INT64_MIN && d < -(double)INT64_MIN))
            return iv_range(cx);
        r->usec = (int64_t)d;
    });
    return 0;
}

/* interval_cmp_value: months as 30 days, days as 24 hours. */
static inline __int128 iv_span(const SlInterval *a)
{
    return (__int128)a->usec + ((__int128)a->days + (__int128)a->months * 30) * USECS_PER_DAY;
}

#define IV_CMP(NAME, OP)                                                             \
    KERNEL(k_##NAME##_interval)                                                      \
    {                                                                                \
        const SlInterval *a = args[0].v.iv, *b = args[1].v.iv;                       \
        FOR_SEL(sel, n, { out->v.b[i] = iv_span(&a[i]) OP iv_span(&b[i]); });        \
        return 0;                                                                    \
    }
IV_CMP(eq, ==)
IV_CMP(ne, !=)
IV_CMP(lt, <)
IV_CMP(le, <=)
IV_CMP(gt, >)
IV_CMP(ge, >=)

/* --------------------------------------------------------------- the clock */

int64_t ex_clock_now(void)
{
    return dt_now();
}

static int64_t stmt_now(EvalCtx *cx)
{
    if (cx->now == 0)
        cx->now = dt_now();
    return cx->now;
}

KERNEL(k_now)
{
    int64_t t = stmt_now(cx);
    FOR_SEL(sel, n, { out->v.i64[i] = t; });
    return 0;
}

KERNEL(k_clock_timestamp)
{
    int64_t t = dt_now();
    FOR_SEL(sel, n, { out->v.i64[i] = t; });
    return 0;
}

KERNEL(k_current_date)
{
    int64_t t = stmt_now(cx);
    t += (int64_t)dt_session_utc_offset(t) * USECS_PER_SEC;
    int32_t d = (int32_t)(t / USECS_PER_DAY - (t % USECS_PER_DAY < 0));
    FOR_SEL(sel, n, { out->v.i32[i] = d; });
    return 0;
}

/* --------------------------------------------------------------- units */

/* The unit argument of row i, decoded; *low gets it lower-cased for
 * messages.  A one-entry cache keeps a constant unit from being decoded
 * per row. */
typedef struct UnitCache {
    const char *ptr;
    uint32_t    len;
    DtUnit      unit;
    bool        special;
    char        low[64];
} UnitCache;

static void unit_of(UnitCache *uc, const SlStr *s)
{
    if (uc->ptr == s->ptr && uc->len == s->len && uc->ptr != NULL)
        return;
    uc->ptr = s->ptr;
    uc->len = s->len;
    uc->unit = dt_decode_units(s->ptr, s->len, &uc->special);
    size_t n = SL_MIN(s->len, sizeof(uc->low) - 1);
    for (size_t k = 0; k < n; k++)
        uc->low[k] = (char)tolower((unsigned char)s->ptr[k]);
    uc->low[n] = '\0';
}

static int unit_not_supported(EvalCtx *cx, const UnitCache *uc, const char *tname)
{
    return sl_error(cx->err, ERRCODE_FEATURE_NOT_SUPPORTED, "unit \"%s\" not supported for type %s",
                    uc->low, tname);
}

static int unit_not_recognized(EvalCtx *cx, const UnitCache *uc, const char *tname)
{
    return sl_error(cx->err, ERRCODE_INVALID_PARAMETER_VALUE,
                    "unit \"%s\" not recognized for type %s", uc->low, tname);
}

/* --------------------------------------------------------------- date_trunc */

static int trunc_tm(DtUnit u, DtTm *tm)
{
    switch (u) {
    case DU_WEEK: {
        int y = tm->year, m = tm->mon, d = tm->mday;
        int w = dt_isoweek(y, m, d);
        /* isoweek2date, the year being the ISO year of the week */
        int iy = y;
        if (w >= 52 && m == 1)
            iy = y - 1;
        else if (w == 1 && m == 12)
            iy = y + 1;
        dt_j2date(dt_isoweek2j(iy, w), &tm->year, &tm->mon, &tm->mday);
        tm->hour = tm->min = tm->sec = 0;
        tm->fsec = 0;
        return 0;
    }
    case DU_MILLENNIUM:
    case DU_CENTURY:
    case DU_DECADE:
        if (u == DU_MILLENNIUM)
            tm->year = tm->year > 0 ? ((tm->year + 999) / 1000) * 1000 - 999
                                    : -((999 - (tm->year - 1)) / 1000) * 1000 + 1;
        else if (u == DU_CENTURY)
            tm->year = tm->year > 0 ? ((tm->year + 99) / 100) * 100 - 99
                                    : -((99 - (tm->year - 1)) / 100) * 100 + 1;
        else
            tm->year = tm->year > 0 ? (tm->year / 10) * 10 : -((8 - (tm->year - 1)) / 10) * 10;
        /* FALLTHROUGH */
    case DU_YEAR:
        tm->mon = 1;
        /* FALLTHROUGH */
    case DU_QUARTER:
        tm->mon = (3 * ((tm->mon - 1) / 3)) + 1;
        /* FALLTHROUGH */
    case DU_MONTH:
        tm->mday = 1;
        /* FALLTHROUGH */
    case DU_DAY:
        tm->hour = 0;
        /* FALLTHROUGH */
    case DU_HOUR:
        tm->min = 0;
        /* FALLTHROUGH */
    case DU_MINUTE:
        tm->sec = 0;
        /* FALLTHROUGH */
    case DU_SECOND:
        tm->fsec = 0;
        return 0;
    case DU_MILLISEC:
        tm->fsec = (tm->fsec / 1000) * 1000;
        return 0;
    case DU_MICROSEC:
        return 0;
    default:
        return -1;
    }
}

KERNEL(k_date_trunc_ts)
{
    const char *tname = type_name(out->type.id);
    bool tz = out->type.id == TYPE_TIMESTAMPTZ;
    UnitCache uc = {0};
    FOR_SEL(sel, n, {
        int64_t t = args[1].v.i64[i];
        if (!dt_ts_finite(t)) {
            out->v.i64[i] = t;
            continue;
        }
        unit_of(&uc, &args[0].v.str[i]);
        if (uc.unit == DU_UNKNOWN || uc.special)
            return unit_not_recognized(cx, &uc, tname);
        /* timestamptz: truncated in the session's time zone */
        if (tz)
            t += (int64_t)dt_session_utc_offset(t) * USECS_PER_SEC;
        DtTm tm;
        if (dt_ts2tm(t, &tm) < 0)
            return ts_range(cx);
        if (trunc_tm(uc.unit, &tm) < 0)
            return unit_not_supported(cx, &uc, tname);
        if (dt_tm2ts(&tm, &out->v.i64[i]) < 0)
            return ts_range(cx);
        if (tz)
            out->v.i64[i] -= (int64_t)dt_session_local_offset(out->v.i64[i]) * USECS_PER_SEC;
    });
    return 0;
}

/* interval2itm */
typedef struct ItvTm {
    int     year, mon, mday;
    int64_t hour;
    int     min, sec;
    int64_t usec;
} ItvTm;

static void iv2tm(const SlInterval *iv, ItvTm *tm)
{
    tm->year = iv->months / MONTHS_PER_YEAR;
    tm->mon = iv->months % MONTHS_PER_YEAR;
    tm->mday = iv->days;
    int64_t time = iv->usec;
    tm->hour = time / USECS_PER_HOUR;
    time -= tm->hour * USECS_PER_HOUR;
    tm->min = (int)(time / USECS_PER_MINUTE);
    time -= (int64_t)tm->min * USECS_PER_MINUTE;
    tm->sec = (int)(time / USECS_PER_SEC);
    tm->usec = time - (int64_t)tm->sec * USECS_PER_SEC;
}

static int tm2iv(EvalCtx *cx, const ItvTm *tm, SlInterval *iv)
{
    int64_t months = (int64_t)tm->year * MONTHS_PER_YEAR + tm->mon;
    if (months > INT_MAX || months < INT_MIN)
        return iv_range(cx);
    iv->months = (int32_t)months;
    iv->days = tm->mday;
    __int128 u = (__int128)tm->hour * USECS_PER_HOUR + (__int128)tm->min * USECS_PER_MINUTE +
                 (__int128)tm->sec * USECS_PER_SEC + tm->usec;
    if (u > INT64_MAX || u < INT64_MIN)
        return iv_range(cx);
    iv->usec = (int64_t)u;
    return 0;
}

KERNEL(k_date_trunc_iv)
{
    UnitCache uc = {0};
    FOR_SEL(sel, n, {
        unit_of(&uc, &args[0].v.str[i]);
        if (uc.unit == DU_UNKNOWN || uc.special)
            return unit_not_recognized(cx, &uc, "interval");
        ItvTm tm;
        iv2tm(&args[1].v.iv[i], &tm);
        switch (uc.unit) {
        case DU_MILLENNIUM:
            tm.year = (tm.year / 1000) * 1000;
            /* FALLTHROUGH */
        case DU_CENTURY:
            tm.year = (tm.year / 100) * 100;
            /* FALLTHROUGH */
        case DU_DECADE:
            tm.year = (tm.year / 10) * 10;
            /* FALLTHROUGH */
        case DU_YEAR:
            tm.mon = 0;
            /* FALLTHROUGH */
        case DU_QUARTER:
            tm.mon = 3 * (tm.mon / 3);
            /* FALLTHROUGH */
        case DU_MONTH:
            tm.mday = 0;
            /* FALLTHROUGH */
        case DU_DAY:
            tm.hour = 0;
            /* FALLTHROUGH */
        case DU_HOUR:
            tm.min = 0;
            /* FALLTHROUGH */
        case DU_MINUTE:
            tm.sec = 0;
            /* FALLTHROUGH */
        case DU_SECOND:
            tm.usec = 0;
            break;
        case DU_MILLISEC:
            tm.usec = (tm.usec / 1000) * 1000;
            break;
        case DU_MICROSEC:
            break;
        default:
            unit_not_supported(cx, &uc, "interval");
            if (uc.unit == DU_WEEK)
                sl_error_detail(cx->err, "Months usually have fractional weeks.");
            return -1;
        }
        if (tm2iv(cx, &tm, &out->v.iv[i]) < 0)
            return -1;
    });
    return 0;
}

/* ------------------------------------------------------ extract, date_part */

/* A field's value: an integer, or an integer scaled by 10^-scale, or a
 * float (date_part's own float arithmetic), or NULL, or +-infinity. */
typedef struct PartVal {
    enum { PV_INT, PV_SCALED, PV_FLOAT, PV_NULL, PV_PINF, PV_NINF, PV_JULIAN } kind;
    int64_t i;
    int     scale;
    double  f;
    int64_t jday, jusec;    /* PV_JULIAN: day + usec / day */
} PartVal;

static int year_field(DtUnit u, int year)
{
    switch (u) {
    case DU_YEAR:
        return year > 0 ? year : year - 1;
    case DU_DECADE:
        return year >= 0 ? year / 10 : -((8 - (year - 1)) / 10);
    case DU_CENTURY:
        return year > 0 ? (year + 99) / 100 : -((99 - (year - 1)) / 100);
    default: /* DU_MILLENNIUM */
        return year > 0 ? (year + 999) / 1000 : -((999 - (year - 1)) / 1000);
    }
}

/* timestamp_part_common; returns 0, or -1 (not supported) or -2 (not
 * recognized) for the caller to report. */
static int ts_part(DtUnit u, bool special, bool tz, int64_t t, bool as_float, PartVal *pv)
{
    if (u == DU_UNKNOWN)
        return -2;
    if (!dt_ts_finite(t)) {
        switch (u) {
        case DU_YEAR: case DU_DECADE: case DU_CENTURY: case DU_MILLENNIUM:
        case DU_JULIAN: case DU_ISOYEAR: case DU_EPOCH:
            pv->kind = t == DT_NOBEGIN ? PV_NINF : PV_PINF;
            return 0;
        case DU_MICROSEC: case DU_MILLISEC: case DU_SECOND: case DU_MINUTE: case DU_HOUR:
        case DU_DAY: case DU_MONTH: case DU_QUARTER: case DU_WEEK: case DU_DOW:
        case DU_ISODOW: case DU_DOY: case DU_TZ: case DU_TZ_MINUTE: case DU_TZ_HOUR:
            pv->kind = PV_NULL;
            return 0;
        default:
            return -1;
        }
    }
    SL_UNUSED(special);
    if (u == DU_EPOCH) {
        int64_t epoch = -(int64_t)(POSTGRES_EPOCH_JDATE - UNIX_EPOCH_JDATE) * USECS_PER_DAY;
        if (as_float) {
            pv->kind = PV_FLOAT;
            pv->f = (double)(t - epoch) / 1000000.0;
        } else {
            pv->kind = PV_SCALED;
            pv->i = t - epoch;
            pv->scale = 6;
        }
        return 0;
    }
    int32_t off = tz ? dt_session_utc_offset(t) : 0;
    if (tz) {
        if (u == DU_TZ || u == DU_TZ_HOUR || u == DU_TZ_MINUTE) {
            pv->kind = PV_INT;
            pv->i = u == DU_TZ ? off : u == DU_TZ_HOUR ? off / 3600 : (off / 60) % 60;
            return 0;
        }
        t += (int64_t)off * USECS_PER_SEC;
    }
    DtTm tm;
    if (dt_ts2tm(t, &tm) < 0)
        return -3;
    pv->kind = PV_INT;
    switch (u) {
    case DU_MICROSEC:
        pv->i = tm.sec * INT64_C(1000000) + tm.fsec;
        break;
    case DU_MILLISEC:
        if (as_float) {
            pv->kind = PV_FLOAT;
            pv->f = tm.sec * 1000.0 + tm.fsec / 1000.0;
        } else {
            pv->kind = PV_SCALED;
            pv->i = tm.sec * INT64_C(1000000) + tm.fsec;
            pv->scale = 3;
        }
        break;
    case DU_SECOND:
        if (as_float) {
            pv->kind = PV_FLOAT;
            pv->f = tm.sec + tm.fsec / 1000000.0;
        } else {
            pv->kind = PV_SCALED;
            pv->i = tm.sec * INT64_C(1000000) + tm.fsec;
            pv->scale = 6;
        }
        break;
    case DU_MINUTE: pv->i = tm.min; break;
    case DU_HOUR: pv->i = tm.hour; break;
    case DU_DAY: pv->i = tm.mday; break;
    case DU_MONTH: pv->i = tm.mon; break;
    case DU_QUARTER: pv->i = (tm.mon - 1) / 3 + 1; break;
    case DU_WEEK: pv->i = dt_isoweek(tm.year, tm.mon, tm.mday); break;
    case DU_YEAR: case DU_DECADE: case DU_CENTURY: case DU_MILLENNIUM:
        pv->i = year_field(u, tm.year);
        break;
    case DU_JULIAN: {
        int64_t usec = (((int64_t)tm.hour * 60 + tm.min) * 60 + tm.sec) * USECS_PER_SEC + tm.fsec;
        int j = dt_date2j(tm.year, tm.mon, tm.mday);
        if (as_float) {
            pv->kind = PV_FLOAT;
            pv->f = j + ((((tm.hour * 60) + tm.min) * 60) + tm.sec + (tm.fsec / 1000000.0)) /
                            (double)SECS_PER_DAY;
        } else {
            pv->kind = PV_JULIAN;
            pv->jday = j;
            pv->jusec = usec;
        }
        break;
    }
    case DU_ISOYEAR:
        pv->i = dt_isoyear(tm.year, tm.mon, tm.mday);
        if (pv->i <= 0)
            pv->i -= 1;
        break;
    case DU_DOW:
    case DU_ISODOW:
        pv->i = dt_j2day(dt_date2j(tm.year, tm.mon, tm.mday));
        if (u == DU_ISODOW && pv->i == 0)
            pv->i = 7;
        break;
    case DU_DOY:
        pv->i = dt_date2j(tm.year, tm.mon, tm.mday) - dt_date2j(tm.year, 1, 1) + 1;
        break;
    case DU_TZ:
    case DU_TZ_HOUR:
    case DU_TZ_MINUTE:
        if (!tz)
            return -1;
        pv->i = 0;
        break;
    default:
        return -1;
    }
    return 0;
}

static int date_part_of_date(DtUnit u, int32_t d, PartVal *pv)
{
    if (u == DU_UNKNOWN)
        return -2;
    if (!dt_date_finite(d)) {
        switch (u) {
        case DU_DAY: case DU_MONTH: case DU_QUARTER: case DU_WEEK: case DU_DOW:
        case DU_ISODOW: case DU_DOY:
            pv->kind = PV_NULL;
            return 0;
        case DU_YEAR: case DU_DECADE: case DU_CENTURY: case DU_MILLENNIUM:
        case DU_JULIAN: case DU_ISOYEAR: case DU_EPOCH:
            pv->kind = d == DATE_NOBEGIN ? PV_NINF : PV_PINF;
            return 0;
        default:
            return -1;
        }
    }
    int y, m, day;
    dt_j2date(d + POSTGRES_EPOCH_JDATE, &y, &m, &day);
    pv->kind = PV_INT;
    switch (u) {
    case DU_DAY: pv->i = day; break;
    case DU_MONTH: pv->i = m; break;
    case DU_QUARTER: pv->i = (m - 1) / 3 + 1; break;
    case DU_WEEK: pv->i = dt_isoweek(y, m, day); break;
    case DU_YEAR: case DU_DECADE: case DU_CENTURY: case DU_MILLENNIUM:
        pv->i = year_field(u, y);
        break;
    case DU_JULIAN: pv->i = (int64_t)d + POSTGRES_EPOCH_JDATE; break;
    case DU_ISOYEAR:
        pv->i = dt_isoyear(y, m, day);
        if (pv->i <= 0)
            pv->i -= 1;
        break;
    case DU_DOW:
    case DU_ISODOW:
        pv->i = dt_j2day(d + POSTGRES_EPOCH_JDATE);
        if (u == DU_ISODOW && pv->i == 0)
            pv->i = 7;
        break;
    case DU_DOY: pv->i = dt_date2j(y, m, day) - dt_date2j(y, 1, 1) + 1; break;
    case DU_EPOCH:
        pv->i = ((int64_t)d + POSTGRES_EPOCH_JDATE - UNIX_EPOCH_JDATE) * SECS_PER_DAY;
        break;
    default:
        return -1;
    }
    return 0;
}

static int iv_part(DtUnit u, bool special, const SlInterval *iv, bool as_float, PartVal *pv)
{
    if (u == DU_UNKNOWN)
        return -2;
    if (u == DU_EPOCH) {
        int64_t secs = ((int64_t)(4 * 365.25) * (iv->months / MONTHS_PER_YEAR) +
                        (int64_t)(4 * DAYS_PER_MONTH) * (iv->months % MONTHS_PER_YEAR) +
                        (int64_t)4 * iv->days) * (SECS_PER_DAY / 4);
        if (as_float) {
            double r = iv->usec / 1000000.0;
            r += (365.25 * SECS_PER_DAY) * (iv->months / MONTHS_PER_YEAR);
            r += ((double)DAYS_PER_MONTH * SECS_PER_DAY) * (iv->months % MONTHS_PER_YEAR);
            r += ((double)SECS_PER_DAY) * iv->days;
            pv->kind = PV_FLOAT;
            pv->f = r;
        } else {
            pv->kind = PV_SCALED;
            pv->i = secs * 1000000 + iv->usec;
            pv->scale = 6;
        }
        return 0;
    }
    if (special)
        return -1;
    ItvTm tm;
    iv2tm(iv, &tm);
    pv->kind = PV_INT;
    switch (u) {
    case DU_MICROSEC: pv->i = tm.sec * INT64_C(1000000) + tm.usec; break;
    case DU_MILLISEC:
        if (as_float) {
            pv->kind = PV_FLOAT;
            pv->f = tm.sec * 1000.0 + tm.usec / 1000.0;
        } else {
            pv->kind = PV_SCALED;
            pv->i = tm.sec * INT64_C(1000000) + tm.usec;
            pv->scale = 3;
        }
        break;
    case DU_SECOND:
        if (as_float) {
            pv->kind = PV_FLOAT;
            pv->f = tm.sec + tm.usec / 1000000.0;
        } else {
            pv->kind = PV_SCALED;
            pv->i = tm.sec * INT64_C(1000000) + tm.usec;
            pv->scale = 6;
        }
        break;
    case DU_MINUTE: pv->i = tm.min; break;
    case DU_HOUR: pv->i = tm.hour; break;
    case DU_DAY: pv->i = tm.mday; break;
    case DU_MONTH: pv->i = tm.mon; break;
    case DU_QUARTER: pv->i = (tm.mon / 3) + 1; break;
    case DU_YEAR: pv->i = tm.year; break;
    case DU_DECADE: pv->i = tm.year / 10; break;
    case DU_CENTURY: pv->i = tm.year / 100; break;
    case DU_MILLENNIUM: pv->i = tm.year / 1000; break;
    default:
        return -1;
    }
    return 0;
}

/* Stores a PartVal as numeric (extract) or float8 (date_part). */
static int store_part(EvalCtx *cx, const PartVal *pv, Vector *out, uint32_t i)
{
    bool num = out->type.id == TYPE_NUMERIC;
    switch (pv->kind) {
    case PV_NULL:
        out->nulls[i] = 1;
        return 0;
    case PV_PINF:
    case PV_NINF:
        if (num) {
            SlNumeric x = {NULL, 0, 0, (uint8_t)(pv->kind == PV_PINF ? NUM_PINF : NUM_NINF)};
            out->v.num[i] = x;
        } else {
            out->v.f64[i] = pv->kind == PV_PINF ? INFINITY : -INFINITY;
        }
        return 0;
    case PV_INT:
        if (num)
            num_from_int64(cx->arena, pv->i, &out->v.num[i]);
        else
            out->v.f64[i] = (double)pv->i;
        return 0;
    case PV_SCALED:
        if (num) {
            num_from_int64(cx->arena, pv->i, &out->v.num[i]);
            out->v.num[i].scale = pv->scale;
        } else {
            out->v.f64[i] = (double)pv->i / (pv->scale == 3 ? 1000.0 : 1000000.0);
        }
        return 0;
    case PV_FLOAT:
        out->v.f64[i] = pv->f;
        return 0;
    case PV_JULIAN: {
        SlNumeric d, u, q;
        num_from_int64(cx->arena, pv->jday, &d);
        num_from_int64(cx->arena, pv->jusec, &u);
        SlNumeric day;
        num_from_int64(cx->arena, USECS_PER_DAY, &day);
        if (num_div(cx->arena, &u, &day, &q, cx->err) < 0)
            return -1;
        return num_add(cx->arena, &d, &q, &out->v.num[i], cx->err);
    }
    }
    return 0;
}

static int part_error(EvalCtx *cx, int rc, const UnitCache *uc, const char *tname)
{
    if (rc == -2)
        return unit_not_recognized(cx, uc, tname);
    if (rc == -3)
        return ts_range(cx);
    return unit_not_supported(cx, uc, tname);
}

static int extract_ts(EvalCtx *cx, const Vector *args, Vector *out, const uint32_t *sel,
                      uint32_t n, bool tz)
{
    const char *tname = tz ? "timestamp with time zone" : "timestamp without time zone";
    bool as_float = out->type.id == TYPE_FLOAT8;
    UnitCache uc = {0};
    FOR_SEL(sel, n, {
        unit_of(&uc, &args[0].v.str[i]);
        PartVal pv;
        int rc = ts_part(uc.unit, uc.special, tz, args[1].v.i64[i], as_float, &pv);
        if (rc < 0)
            return part_error(cx, rc, &uc, tname);
        if (store_part(cx, &pv, out, i) < 0)
            return -1;
    });
    return 0;
}

KERNEL(k_extract_ts) { return extract_ts(cx, args, out, sel, n, false); }
KERNEL(k_extract_tstz) { return extract_ts(cx, args, out, sel, n, true); }

KERNEL(k_extract_date)
{
    UnitCache uc = {0};
    FOR_SEL(sel, n, {
        unit_of(&uc, &args[0].v.str[i]);
        PartVal pv;
        int rc = date_part_of_date(uc.unit, args[1].v.i32[i], &pv);
        if (rc < 0)
            return part_error(cx, rc, &uc, "date");
        if (store_part(cx, &pv, out, i) < 0)
            return -1;
    });
    return 0;
}

KERNEL(k_extract_iv)
{
    bool as_float = out->type.id == TYPE_FLOAT8;
    UnitCache uc = {0};
    FOR_SEL(sel, n, {
        unit_of(&uc, &args[0].v.str[i]);
        PartVal pv;
        int rc = iv_part(uc.unit, uc.special, &args[1].v.iv[i], as_float, &pv);
        if (rc < 0)
            return part_error(cx, rc, &uc, "interval");
        if (store_part(cx, &pv, out, i) < 0)
            return -1;
    });
    return 0;
}

/* ------------------------------------------------------------ to_timestamp */

KERNEL(k_to_timestamp_f8)
{
    FOR_SEL(sel, n, {
        double s = args[0].v.f64[i];
        if (isnan(s))
            return sl_error(cx->err, ERRCODE_DATETIME_VALUE_OUT_OF_RANGE, "timestamp cannot be NaN");
        if (isinf(s)) {
            out->v.i64[i] = s < 0 ? DT_NOBEGIN : DT_NOEND;
            continue;
        }
        if (s < (double)SECS_PER_DAY * (DATETIME_MIN_JULIAN - UNIX_EPOCH_JDATE) ||
            s >= (double)SECS_PER_DAY * (TIMESTAMP_END_JULIAN - UNIX_EPOCH_JDATE))
            return sl_error(cx->err, ERRCODE_DATETIME_VALUE_OUT_OF_RANGE,
                            "timestamp out of range: \"%g\"", s);
        s -= (double)(POSTGRES_EPOCH_JDATE - UNIX_EPOCH_JDATE) * SECS_PER_DAY;
        s = rint(s * 1000000.0);
        int64_t t = (int64_t)s;
        if (!dt_ts_valid(t))
            return sl_error(cx->err, ERRCODE_DATETIME_VALUE_OUT_OF_RANGE,
                            "timestamp out of range: \"%g\"", args[0].v.f64[i]);
        out->v.i64[i] = t;
    });
    return 0;
}

/* ---------------------------------------------------------------------- age */

static int ts_age(EvalCtx *cx, int64_t dt1, int64_t dt2, SlInterval *r)
{
    DtTm tm1, tm2;
    if (!dt_ts_finite(dt1) || !dt_ts_finite(dt2) || dt_ts2tm(dt1, &tm1) < 0 ||
        dt_ts2tm(dt2, &tm2) < 0)
        return ts_range(cx);
    int64_t fsec = tm1.fsec - tm2.fsec;
    int sec = tm1.sec - tm2.sec, min = tm1.min - tm2.min, hour = tm1.hour - tm2.hour;
    int mday = tm1.mday - tm2.mday, mon = tm1.mon - tm2.mon, year = tm1.year - tm2.year;
    bool flip = dt1 < dt2;
    if (flip) {
        fsec = -fsec;
        sec = -sec;
        min = -min;
        hour = -hour;
        mday = -mday;
        mon = -mon;
        year = -year;
    }
    while (fsec < 0) {
        fsec += USECS_PER_SEC;
        sec--;
    }
    while (sec < 0) {
        sec += 60;
        min--;
    }
    while (min < 0) {
        min += 60;
        hour--;
    }
    while (hour < 0) {
        hour += 24;
        mday--;
    }
    while (mday < 0) {
        if (flip)
            mday += dt_days_in_month(tm1.year, tm1.mon);
        else
            mday += dt_days_in_month(tm2.year, tm2.mon);
        mon--;
    }
    while (mon < 0) {
        mon += MONTHS_PER_YEAR;
        year--;
    }
    if (flip) {
        fsec = -fsec;
        sec = -sec;
        min = -min;
        hour = -hour;
        mday = -mday;
        mon = -mon;
        year = -year;
    }
    ItvTm tm = {year, mon, mday, hour, min, sec, fsec};
    return tm2iv(cx, &tm, r);
}

KERNEL(k_age)
{
    FOR_SEL(sel, n, {
        if (ts_age(cx, args[0].v.i64[i], args[1].v.i64[i], &out->v.iv[i]) < 0)
            return -1;
    });
    return 0;
}

/* age(ts): from midnight of the current date */
KERNEL(k_age1)
{
    int64_t t = stmt_now(cx);
    int64_t today = (t / USECS_PER_DAY - (t % USECS_PER_DAY < 0)) * USECS_PER_DAY;
    FOR_SEL(sel, n, {
        if (ts_age(cx, today, args[0].v.i64[i], &out->v.iv[i]) < 0)
            return -1;
    });
    return 0;
}

/* ------------------------------------------------------------ date_bin */

/* date_bin(stride, source, origin) over timestamps and timestamptz (the
 * same arithmetic: microseconds since the origin, rounded down to a
 * multiple of the stride), as PostgreSQL 15's timestamp_bin: an infinite
 * source is itself, an infinite origin 22008, a stride with months 0A000,
 * one not above zero 22008. */
KERNEL(k_date_bin)
{
    SL_UNUSED(e);
    FOR_SEL(sel, n, {
        const SlInterval *st = &args[0].v.iv[i];
        int64_t ts = args[1].v.i64[i], origin = args[2].v.i64[i], stride, diff;
        if (!dt_ts_finite(ts)) {
            out->v.i64[i] = ts;
            continue;
        }
        if (!dt_ts_finite(origin))
            return sl_error(cx->err, ERRCODE_DATETIME_VALUE_OUT_OF_RANGE, "origin out of range");
        if (st->months != 0)
            return sl_error(cx->err, ERRCODE_FEATURE_NOT_SUPPORTED,
                            "timestamps cannot be binned into intervals containing months or "
                            "years");
        if (__builtin_mul_overflow((int64_t)st->days, USECS_PER_DAY, &stride) ||
            __builtin_add_overflow(stride, st->usec, &stride))
            return iv_range(cx);
        if (stride <= 0)
            return sl_error(cx->err, ERRCODE_DATETIME_VALUE_OUT_OF_RANGE,
                            "stride must be greater than zero");
        if (__builtin_sub_overflow(ts, origin, &diff))
            return iv_range(cx);
        int64_t mod = diff % stride, r = origin + (diff - mod);
        if (mod < 0)
            r -= stride;
        if (!dt_ts_valid(r))
            return ts_range(cx);
        out->v.i64[i] = r;
    });
    return 0;
}

/* ------------------------------------------------------------ justify_* */

KERNEL(k_justify_hours)
{
    FOR_SEL(sel, n, {
        SlInterval r = args[0].v.iv[i];
        int64_t wholeday = r.usec / USECS_PER_DAY;
        r.usec -= wholeday * USECS_PER_DAY;
        if (__builtin_add_overflow(r.days, (int32_t)wholeday, &r.days))
            return iv_range(cx);
        if (r.days > 0 && r.usec < 0) {
            r.usec += USECS_PER_DAY;
            r.days--;
        } else if (r.days < 0 && r.usec > 0) {
            r.usec -= USECS_PER_DAY;
            r.days++;
        }
        out->v.iv[i] = r;
    });
    return 0;
}

KERNEL(k_justify_days)
{
    FOR_SEL(sel, n, {
        SlInterval r = args[0].v.iv[i];
        int32_t wholemonth = r.days / DAYS_PER_MONTH;
        r.days -= wholemonth * DAYS_PER_MONTH;
        if (__builtin_add_overflow(r.months, wholemonth, &r.months))
            return iv_range(cx);
        if (r.months > 0 && r.days < 0) {
            r.days += DAYS_PER_MONTH;
            r.months--;
        } else if (r.months < 0 && r.days > 0) {
            r.days -= DAYS_PER_MONTH;
            r.months++;
        }
        out->v.iv[i] = r;
    });
    return 0;
}

KERNEL(k_justify_interval)
{
    FOR_SEL(sel, n, {
        SlInterval r = args[0].v.iv[i];
        int32_t wholemonth;
        if ((r.days > 0 && r.usec > 0) || (r.days < 0 && r.usec < 0)) {
            wholemonth = r.days / DAYS_PER_MONTH;
            r.days -= wholemonth * DAYS_PER_MONTH;
            if (__builtin_add_overflow(r.months, wholemonth, &r.months))
                return iv_range(cx);
        }
        int64_t wholeday = r.usec / USECS_PER_DAY;
        r.usec -= wholeday * USECS_PER_DAY;
        if (__builtin_add_overflow(r.days, (int32_t)wholeday, &r.days))
            return iv_range(cx);
        wholemonth = r.days / DAYS_PER_MONTH;
        r.days -= wholemonth * DAYS_PER_MONTH;
        if (__builtin_add_overflow(r.months, wholemonth, &r.months))
            return iv_range(cx);
        if (r.months > 0 && (r.days < 0 || (r.days == 0 && r.usec < 0))) {
            r.days += DAYS_PER_MONTH;
            r.months--;
        } else if (r.months < 0 && (r.days > 0 || (r.days == 0 && r.usec > 0))) {
            r.days -= DAYS_PER_MONTH;
            r.months++;
        }
        if (r.days > 0 && r.usec < 0) {
            r.usec += USECS_PER_DAY;
            r.days--;
        } else if (r.days < 0 && r.usec > 0) {
            r.usec -= USECS_PER_DAY;
            r.days++;
        }
        out->v.iv[i] = r;
    });
    return 0;
}

KERNEL(k_isfinite_date)
{
    FOR_SEL(sel, n, { out->v.b[i] = dt_date_finite(args[0].v.i32[i]); });
    return 0;
}

KERNEL(k_isfinite_ts)
{
    FOR_SEL(sel, n, { out->v.b[i] = dt_ts_finite(args[0].v.i64[i]); });
    return 0;
}

/* ----------------------------------------------------------- AT TIME ZONE */

/* A zone name as AT TIME ZONE reads it: an abbreviation (UTC, GMT, Z, EST,
 * ...), a name of the tz database (*named), or a POSIX-style offset ("+02",
 * "UTC-05:30": hours WEST of UTC, as POSIX has them).  *east is seconds
 * east of UTC. */
static int zone_offset(EvalCtx *cx, const SlStr *z, int *east, const DtTz **named)
{
    *named = NULL;
    char buf[64];
    size_t n = SL_MIN(z->len, sizeof(buf) - 1);
    for (size_t k = 0; k < n; k++)
        buf[k] = (char)tolower((unsigned char)z->ptr[k]);
    buf[n] = '\0';
    static const struct { const char *name; int east; } abbrevs[] = {
        {"utc", 0}, {"gmt", 0}, {"z", 0}, {"zulu", 0}, {"ut", 0}, {"etc/utc", 0},
        {"etc/gmt", 0}, {"universal", 0}, {"est", -5 * 3600}, {"edt", -4 * 3600},
        {"cst", -6 * 3600}, {"cdt", -5 * 3600}, {"mst", -7 * 3600}, {"mdt", -6 * 3600},
        {"pst", -8 * 3600}, {"pdt", -7 * 3600}, {"cet", 3600}, {"cest", 7200},
        {"eet", 7200}, {"eest", 10800}, {"jst", 9 * 3600}, {"msk", 3 * 3600},
    };
    for (size_t k = 0; k < SL_ARRAY_LEN(abbrevs); k++) {
        if (strcmp(buf, abbrevs[k].name) == 0) {
            *east = abbrevs[k].east;
            return 0;
        }
    }
    if ((*named = dt_tz_find(z->ptr, z->len)) != NULL)
        return 0;
    const char *p = buf;
    if (strncmp(p, "utc", 3) == 0 || strncmp(p, "gmt", 3) == 0)
        p += 3;
    if (*p == '+' || *p == '-' || (*p >= '0' && *p <= '9')) {
        int sign = *p == '-' ? -1 : 1;
        if (*p == '+' || *p == '-')
            p++;
        int h = 0, m = 0, s = 0, nd = 0;
        while (*p >= '0' && *p <= '9' && nd < 2) {
            h = h * 10 + (*p++ - '0');
            nd++;
        }
        if (*p == ':') {
            p++;
            if (!(p[0] >= '0' && p[0] <= '9' && p[1] >= '0' && p[1] <= '9'))
                goto bad;
            m = (p[0] - '0') * 10 + (p[1] - '0');
            p += 2;
            if (*p == ':') {
                p++;
                if (!(p[0] >= '0' && p[0] <= '9' && p[1] >= '0' && p[1] <= '9'))
                    goto bad;
                s = (p[0] - '0') * 10 + (p[1] - '0');
                p += 2;
            }
        }
        if (nd > 0 && *p == '\0' && h <= 24 && m < 60 && s < 60) {
            *east = -sign * (h * 3600 + m * 60 + s);
            return 0;
        }
    }
bad:
    return sl_error(cx->err, ERRCODE_INVALID_PARAMETER_VALUE, "time zone \"%.*s\" not recognized",
                    (int)SL_MIN(z->len, 200), z->ptr);
}

static int zone_interval(EvalCtx *cx, const SlInterval *z, int64_t *east_usec)
{
    if (z->months != 0 || z->days != 0) {
        StrBuf b;
        strbuf_init(&b);
        dt_format_interval(z, &b);
        sl_error(cx->err, ERRCODE_INVALID_PARAMETER_VALUE,
                 "interval time zone \"%s\" must not include months or days", b.data);
        strbuf_free(&b);
        return -1;
    }
    *east_usec = z->usec;
    return 0;
}

/* timezone(zone, timestamp) -> timestamptz: the local time in zone, as UTC */
KERNEL(k_timezone_ts)
{
    const SlStr *prev = NULL;
    int east = 0;
    const DtTz *named = NULL;
    FOR_SEL(sel, n, {
        int64_t t = args[1].v.i64[i];
        const SlStr *z = &args[0].v.str[i];
        if (prev == NULL || prev->ptr != z->ptr || prev->len != z->len) {
            /* a constant zone is looked up once */
            if (zone_offset(cx, z, &east, &named) < 0)
                return -1;
            prev = z;
        }
        int off = east;
        if (named != NULL && dt_ts_finite(t))
            off = dt_tz_local_offset(named, t);
        if (dt_ts_finite(t)) {
            t -= (int64_t)off * USECS_PER_SEC;
            if (!dt_ts_valid(t))
                return ts_range(cx);
        }
        out->v.i64[i] = t;
    });
    return 0;
}

/* timezone(zone, timestamptz) -> timestamp: the local time in zone */
KERNEL(k_timezone_tstz)
{
    const SlStr *prev = NULL;
    int east = 0;
    const DtTz *named = NULL;
    FOR_SEL(sel, n, {
        int64_t t = args[1].v.i64[i];
        const SlStr *z = &args[0].v.str[i];
        if (prev == NULL || prev->ptr != z->ptr || prev->len != z->len) {
            /* a constant zone is looked up once */
            if (zone_offset(cx, z, &east, &named) < 0)
                return -1;
            prev = z;
        }
        int off = east;
        if (named != NULL && dt_ts_finite(t))
            off = dt_tz_utc_offset(named, t);
        if (dt_ts_finite(t)) {
            t += (int64_t)off * USECS_PER_SEC;
            if (!dt_ts_valid(t))
                return ts_range(cx);
        }
        out->v.i64[i] = t;
    });
    return 0;
}

KERNEL(k_izone_ts)
{
    FOR_SEL(sel, n, {
        int64_t east, t = args[1].v.i64[i];
        if (zone_interval(cx, &args[0].v.iv[i], &east) < 0)
            return -1;
        if (dt_ts_finite(t)) {
            t -= (east / USECS_PER_SEC) * USECS_PER_SEC;
            if (!dt_ts_valid(t))
                return ts_range(cx);
        }
        out->v.i64[i] = t;
    });
    return 0;
}

KERNEL(k_izone_tstz)
{
    FOR_SEL(sel, n, {
        int64_t east, t = args[1].v.i64[i];
        if (zone_interval(cx, &args[0].v.iv[i], &east) < 0)
            return -1;
        if (dt_ts_finite(t)) {
            t += (east / USECS_PER_SEC) * USECS_PER_SEC;
            if (!dt_ts_valid(t))
                return ts_range(cx);
        }
        out->v.i64[i] = t;
    });
    return 0;
}

/* make_date(year, month, day) */
KERNEL(k_make_date)
{
    FOR_SEL(sel, n, {
        int y = args[0].v.i32[i], m = args[1].v.i32[i], d = args[2].v.i32[i];
        bool bc = false;
        if (y < 0) {
            bc = true;
            y = -y;
        }
        if (y == 0 || m < 1 || m > 12 || d < 1 || d > dt_days_in_month(bc ? -(y - 1) : y, m))
            return sl_error(cx->err, ERRCODE_DATETIME_VALUE_OUT_OF_RANGE,
                            "date field value out of range: %d-%02d-%02d", args[0].v.i32[i], m,
                            d);
        if (bc)
            y = -(y - 1);
        if (!dt_valid_julian(y, m, d))
            return sl_error(cx->err, ERRCODE_DATETIME_VALUE_OUT_OF_RANGE,
                            "date out of range: %d-%02d-%02d", args[0].v.i32[i], m, d);
        int64_t v = (int64_t)dt_date2j(y, m, d) - POSTGRES_EPOCH_JDATE;
        if (!dt_date_valid(v))
            return sl_error(cx->err, ERRCODE_DATETIME_VALUE_OUT_OF_RANGE,
                            "date out of range: %d-%02d-%02d", args[0].v.i32[i], m, d);
        out->v.i32[i] = (int32_t)v;
    });
    return 0;
}

/* The timestamp of make_timestamp(year, month, mday, hour, min, sec) as
 * PostgreSQL's make_timestamp_internal computes it (a negative year is
 * BC; 22008 for a field or the result out of range): 0, or -1. */
static int make_ts(EvalCtx *cx, int32_t year, int32_t mon, int32_t mday, int32_t hour,
                   int32_t min, double sec, int64_t *out)
{
    int y = year;
    bool bc = y < 0;
    if (bc)
        y = -y;
    if (y == 0 || mon < 1 || mon > 12 || mday < 1 ||
        mday > dt_days_in_month(bc ? -(y - 1) : y, mon))
        return sl_error(cx->err, ERRCODE_DATETIME_VALUE_OUT_OF_RANGE,
                        "date field value out of range: %d-%02d-%02d", year, mon, mday);
    if (bc)
        y = -(y - 1);
    if (!dt_valid_julian(y, mon, mday))
        return sl_error(cx->err, ERRCODE_DATETIME_VALUE_OUT_OF_RANGE,
                        "date out of range: %d-%02d-%02d", year, mon, mday);
    int64_t date = (int64_t)dt_date2j(y, mon, mday) - POSTGRES_EPOCH_JDATE;
    double us = isnan(sec) ? -1 : rint(sec * USECS_PER_SEC);
    if (hour < 0 || hour > 24 || min < 0 || min >= 60 || us < 0 ||
        us > 60.0 * USECS_PER_SEC ||
        ((int64_t)hour * 60 + min) * 60 * USECS_PER_SEC + (int64_t)us > USECS_PER_DAY)
        return sl_error(cx->err, ERRCODE_DATETIME_VALUE_OUT_OF_RANGE,
                        "time field value out of range: %d:%02d:%02g", hour, min, sec);
    int64_t time = ((int64_t)hour * 60 + min) * 60 * USECS_PER_SEC + (int64_t)us;
    int64_t r = date * USECS_PER_DAY + time;
    if (!dt_ts_valid(r) || !dt_ts_finite(r))
        return sl_error(cx->err, ERRCODE_DATETIME_VALUE_OUT_OF_RANGE,
                        "timestamp out of range: %d-%02d-%02d %d:%02d:%02g", year, mon, mday,
                        hour, min, sec);
    *out = r;
    return 0;
}

static int make_ts_rows(EvalCtx *cx, const Vector *args, Vector *out, const uint32_t *sel,
                        uint32_t n)
{
    FOR_SEL(sel, n, {
        if (make_ts(cx, args[0].v.i32[i], args[1].v.i32[i], args[2].v.i32[i], args[3].v.i32[i],
                    args[4].v.i32[i], args[5].v.f64[i], &out->v.i64[i]) < 0)
            return -1;
    });
    return 0;
}

/* make_timestamp(year, month, mday, hour, min, sec) */
KERNEL(k_make_timestamp)
{
    SL_UNUSED(e);
    return make_ts_rows(cx, args, out, sel, n);
}

/* make_timestamptz(year, month, mday, hour, min, sec [, timezone]): the
 * local time in the session's TimeZone, or in timezone (as timestamp AT
 * TIME ZONE timezone). */
KERNEL(k_make_timestamptz)
{
    if (make_ts_rows(cx, args, out, sel, n) < 0)
        return -1;
    Vector zargs[2] = {e->nargs == 7 ? args[6] : *out, *out};
    zargs[1].type = sl_type(TYPE_TIMESTAMP);
    if (e->nargs == 7) {
        /* a numeric zone is ISO's, east of Greenwich positive (PostgreSQL's
         * parse_sane_timezone), where AT TIME ZONE reads POSIX's */
        zargs[0].v.str = ARENA_ARRAY(cx->arena, SlStr, out->len ? out->len : 1);
        FOR_SEL(sel, n, {
            const SlStr *z = &args[6].v.str[i];
            zargs[0].v.str[i] = *z;
            if (z->len > 0 && isdigit((unsigned char)z->ptr[0])) {
                sl_error(cx->err, ERRCODE_INVALID_PARAMETER_VALUE,
                         "invalid input syntax for type numeric time zone: \"%.*s\"",
                         (int)z->len, z->ptr);
                sl_error_hint(cx->err,
                              "Numeric time zones must have \"-\" or \"+\" as first character.");
                return -1;
            }
            if (z->len > 0 && (z->ptr[0] == '+' || z->ptr[0] == '-')) {
                char *f = arena_memdup(cx->arena, z->ptr, z->len);
                f[0] = z->ptr[0] == '+' ? '-' : '+';
                zargs[0].v.str[i].ptr = f;
            }
        });
    } else {
        zargs[0].type = sl_type(TYPE_TIMESTAMP);
    }
    /* the cast to timestamptz, or AT TIME ZONE */
    return e->nargs == 7 ? k_timezone_ts(cx, e, zargs, out, sel, n)
                         : c_ts_ts(cx, e, &zargs[1], out, sel, n);
}

/* make_interval(years, months, weeks, days, hours, mins, secs), each 0
 * when left out (PostgreSQL's defaults); 22008 for an infinite or NaN
 * secs or a field past its range. */
KERNEL(k_make_interval)
{
    FOR_SEL(sel, n, {
        int64_t f[6] = {0, 0, 0, 0, 0, 0};
        double secs = e->nargs > 6 ? args[6].v.f64[i] : 0;
        for (int k = 0; k < 6 && k < e->nargs; k++)
            f[k] = args[k].v.i32[i];
        double us = rint(secs * USECS_PER_SEC);
        int64_t months = f[0] * MONTHS_PER_YEAR + f[1], days = f[2] * 7 + f[3];
        __int128 usec = (__int128)f[4] * 3600 * USECS_PER_SEC +
                        (__int128)f[5] * 60 * USECS_PER_SEC + (__int128)us;
        if (isinf(secs) || isnan(secs) || months < INT32_MIN || months > INT32_MAX ||
            days < INT32_MIN || days > INT32_MAX || fabs(us) > 9.2e18 || usec < INT64_MIN ||
            usec > INT64_MAX)
            return iv_range(cx);
        out->v.iv[i].months = (int32_t)months;
        out->v.iv[i].days = (int32_t)days;
        out->v.iv[i].usec = (int64_t)usec;
    });
    return 0;
}

/* The sign of an interval, its months as 30 days (interval_cmp's). */
int fn_interval_sign(const SlInterval *iv)
{
    __int128 v = iv_span(iv);
    return v < 0 ? -1 : v > 0;
}
