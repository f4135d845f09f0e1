/*
 * interval.c -- text input of INTERVAL and its typmods, as PostgreSQL 15's
 * interval_in (DecodeInterval, DecodeISO8601Interval) and
 * AdjustIntervalForTypmod do them.
 *
 *   dt_parse_interval(s, len, typmod, &iv, loc, err)   input
 *   dt_interval_adjust(&iv, typmod, err)               INTERVAL '...' MINUTE
 *   dt_interval_typmod_text(typmod)                    " day to second"
 *
 * Accepted: the "postgres" forms ('1 year 2 mons', '1 day 02:03:04.5',
 * '-1 day +02:00', '1.5 hours', '@ 1 hour ago', '1-2' years-months, units
 * with any of PostgreSQL's spellings), and ISO 8601 durations ('P1Y2M3DT4H5M6S',
 * 'PT1.5S', 'P1W', and the alternative 'P0001-02-03T04:05:06').  The fields
 * are read right to left, so that a bare number takes the unit of the word
 * after it, or the typmod's last field, or seconds.  Overflow is 22015
 * "interval field value out of range", a bad string 22007.
 */
#include "types/datetime.h"

#include <ctype.h>
#include <errno.h>
#include <limits.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>

enum { E_BAD = -1, E_OVERFLOW = -2 };

/* pg_itm_in: what the fields add up to. */
typedef struct ItmIn {
    int64_t usec;
    int     mday, mon, year;
} ItmIn;

/* Masks of the fields seen, to refuse "1 day 2 days". */
enum { B_MICRO = 1, B_MILLI = 2, B_SEC = 4, B_MIN = 8, B_HOUR = 16, B_DAY = 32, B_WEEK = 64,
       B_MONTH = 128, B_YEAR = 256, B_DECADE = 512, B_CENTURY = 1024, B_MILLENNIUM = 2048 };
#define B_TIME (B_MICRO | B_MILLI | B_SEC | B_MIN | B_HOUR)

static bool adjust_fract_usec(double frac, int64_t scale, ItmIn *t)
{
    if (frac == 0)
        return true;
    double usec = rint(frac * (double)scale);
    if (!(usec >= -9.2e18 && usec <= 9.2e18))
        return false;
    return !__builtin_add_overflow(t->usec, (int64_t)usec, &t->usec);
}

static bool adjust_fract_days(double frac, int scale, ItmIn *t)
{
    if (frac == 0)
        return true;
    frac *= scale;
    int extra = (int)frac;
    if (__builtin_add_overflow(t->mday, extra, &t->mday))
        return false;
    frac -= extra;
    return adjust_fract_usec(frac, USECS_PER_DAY, t);
}

static bool adjust_fract_years(double frac, int scale, ItmIn *t)
{
    int extra = (int)rint(frac * scale * MONTHS_PER_YEAR);
    return !__builtin_add_overflow(t->mon, extra, &t->mon);
}

static bool adjust_usec(int64_t val, double fval, int64_t scale, ItmIn *t)
{
    int64_t usec;
    if (__builtin_mul_overflow(val, scale, &usec) || __builtin_add_overflow(t->usec, usec, &t->usec))
        return false;
    return adjust_fract_usec(fval, scale, t);
}

static bool adjust_days(int64_t val, int scale, ItmIn *t)
{
    int64_t d;
    if (__builtin_mul_overflow(val, (int64_t)scale, &d) || d > INT_MAX || d < INT_MIN)
        return false;
    return !__builtin_add_overflow(t->mday, (int)d, &t->mday);
}

static bool adjust_months(int64_t val, ItmIn *t)
{
    if (val > INT_MAX || val < INT_MIN)
        return false;
    return !__builtin_add_overflow(t->mon, (int)val, &t->mon);
}

static bool adjust_years(int64_t val, int scale, ItmIn *t)
{
    int64_t y;
    if (__builtin_mul_overflow(val, (int64_t)scale, &y) || y > INT_MAX || y < INT_MIN)
        return false;
    return !__builtin_add_overflow(t->year, (int)y, &t->year);
}

static int64_t strtoi64(const char *s, char **end)
{
    errno = 0;
    long long v = strtoll(s, end, 10);
    return (int64_t)v;
}

/* DecodeTimeForInterval: [h]h:mm[:ss[.fff]] or mm:ss.fff, into t->usec. */
static int decode_time(const char *str, int range, ItmIn *t)
{
    char *cp;
    int64_t hour = strtoi64(str, &cp), fsec = 0;
    if (errno == ERANGE)
        return E_OVERFLOW;
    if (*cp != ':')
        return E_BAD;
    errno = 0;
    long min = strtol(cp + 1, &cp, 10), sec = 0;
    if (errno == ERANGE || min > INT_MAX)
        return E_OVERFLOW;
    if (*cp == '\0') {
        if (range == (ITM_MINUTE | ITM_SECOND)) {
            if (hour > INT_MAX || hour < INT_MIN)
                return E_OVERFLOW;
            sec = min;
            min = (long)hour;
            hour = 0;
        }
    } else if (*cp == '.') {
        errno = 0;
        double frac = strtod(cp, &cp);
        if (*cp != '\0' || errno != 0)
            return E_BAD;
        fsec = (int64_t)rint(frac * 1000000);
        if (hour > INT_MAX || hour < INT_MIN)
            return E_OVERFLOW;
        sec = min;
        min = (long)hour;
        hour = 0;
    } else if (*cp == ':') {
        errno = 0;
        sec = strtol(cp + 1, &cp, 10);
        if (errno == ERANGE || sec > INT_MAX)
            return E_OVERFLOW;
        if (*cp == '.') {
            errno = 0;
            double frac = strtod(cp, &cp);
            if (*cp != '\0' || errno != 0)
                return E_BAD;
            fsec = (int64_t)rint(frac * 1000000);
        } else if (*cp != '\0') {
            return E_BAD;
        }
    } else {
        return E_BAD;
    }
    if (hour < 0 || min < 0 || min > 59 || sec < 0 || sec > 60 || fsec < 0 ||
        fsec > USECS_PER_SEC)
        return E_OVERFLOW;
    int64_t u = fsec;
    int64_t part;
    if (__builtin_mul_overflow(hour, USECS_PER_HOUR, &part) || __builtin_add_overflow(u, part, &u) ||
        __builtin_add_overflow(u, (int64_t)min * USECS_PER_MINUTE, &u) ||
        __builtin_add_overflow(u, (int64_t)sec * USECS_PER_SEC, &u))
        return E_OVERFLOW;
    t->usec = u;
    return 0;
}

/* The unit a bare number takes from the typmod's range. */
static DtUnit default_unit(int range)
{
    switch (range) {
    case ITM_YEAR:
        return DU_YEAR;
    case ITM_MONTH:
    case ITM_YEAR | ITM_MONTH:
        return DU_MONTH;
    case ITM_DAY:
        return DU_DAY;
    case ITM_HOUR:
    case ITM_DAY | ITM_HOUR:
        return DU_HOUR;
    case ITM_MINUTE:
    case ITM_HOUR | ITM_MINUTE:
    case ITM_DAY | ITM_HOUR | ITM_MINUTE:
        return DU_MINUTE;
    default:
        return DU_SECOND;
    }
}

/* Adds val (and its fraction) in unit u; sets *mask to the field's bit. */
static int add_number(DtUnit u, int64_t val, double fval, ItmIn *t, int *mask, DtUnit *next)
{
    bool ok = true;
    switch (u) {
    case DU_MICROSEC:
        ok = adjust_usec(val, fval, 1, t);
        *mask = B_MICRO;
        break;
    case DU_MILLISEC:
        ok = adjust_usec(val, fval, 1000, t);
        *mask = B_MILLI;
        break;
    case DU_SECOND:
        ok = adjust_usec(val, fval, USECS_PER_SEC, t);
        *mask = fval == 0 ? B_SEC : (B_SEC | B_MILLI | B_MICRO);
        break;
    case DU_MINUTE:
        ok = adjust_usec(val, fval, USECS_PER_MINUTE, t);
        *mask = B_MIN;
        break;
    case DU_HOUR:
        ok = adjust_usec(val, fval, USECS_PER_HOUR, t);
        *mask = B_HOUR;
        *next = DU_DAY;
        break;
    case DU_DAY:
        ok = adjust_days(val, 1, t) && adjust_fract_usec(fval, USECS_PER_DAY, t);
        *mask = B_DAY;
        break;
    case DU_WEEK:
        ok = adjust_days(val, 7, t) && adjust_fract_days(fval, 7, t);
        *mask = B_WEEK;
        break;
    case DU_MONTH:
        ok = adjust_months(val, t) && adjust_fract_days(fval, DAYS_PER_MONTH, t);
        *mask = B_MONTH;
        break;
    case DU_YEAR:
        ok = adjust_years(val, 1, t) && adjust_fract_years(fval, 1, t);
        *mask = B_YEAR;
        break;
    case DU_DECADE:
        ok = adjust_years(val, 10, t) && adjust_fract_years(fval, 10, t);
        *mask = B_DECADE;
        break;
    case DU_CENTURY:
        ok = adjust_years(val, 100, t) && adjust_fract_years(fval, 100, t);
        *mask = B_CENTURY;
        break;
    case DU_MILLENNIUM:
        ok = adjust_years(val, 1000, t) && adjust_fract_years(fval, 1000, t);
        *mask = B_MILLENNIUM;
        break;
    default:
        return E_BAD;
    }
    return ok ? 0 : E_OVERFLOW;
}

/* Splits an interval string into fields as ParseDateTime does (numbers,
 * times, signed numbers, words); returns their count or E_BAD. */
enum { F_NUM, F_TIME, F_SIGNED, F_WORD };

static int split_fields(char *buf, size_t cap, const char *cp, char **field, int *ftype, int max)
{
    char *bufp = buf, *end = buf + cap - 1;
    int nf = 0;
#define APPEND(c)                    \
    do {                             \
        if (bufp >= end)             \
            return E_BAD;            \
        *bufp++ = (char)(c);         \
    } while (0)
    while (*cp) {
        if (isspace((unsigned char)*cp)) {
            cp++;
            continue;
        }
        if (nf >= max)
            return E_BAD;
        field[nf] = bufp;
        if (isdigit((unsigned char)*cp)) {
            while (isdigit((unsigned char)*cp))
                APPEND(*cp++);
            if (*cp == ':') {
                ftype[nf] = F_TIME;
                while (isdigit((unsigned char)*cp) || *cp == ':' || *cp == '.')
                    APPEND(*cp++);
            } else if (*cp == '-' || *cp == '/' || *cp == '.') {
                char delim = *cp;
                APPEND(*cp++);
                ftype[nf] = F_NUM;
                if (isdigit((unsigned char)*cp)) {
                    while (isdigit((unsigned char)*cp))
                        APPEND(*cp++);
                    if (*cp == delim) {
                        APPEND(*cp++);
                        while (isdigit((unsigned char)*cp) || *cp == delim)
                            APPEND(*cp++);
                    }
                } else {
                    while (isalnum((unsigned char)*cp) || *cp == delim)
                        APPEND(tolower((unsigned char)*cp++));
                }
            } else {
                ftype[nf] = F_NUM;
            }
        } else if (*cp == '.') {
            APPEND(*cp++);
            while (isdigit((unsigned char)*cp))
                APPEND(*cp++);
            ftype[nf] = F_NUM;
        } else if (isalpha((unsigned char)*cp)) {
            ftype[nf] = F_WORD;
            while (isalpha((unsigned char)*cp))
                APPEND(tolower((unsigned char)*cp++));
            if (*cp == '-' || *cp == '/' || *cp == '.' || *cp == '+' ||
                isdigit((unsigned char)*cp)) {
                /* a date-like word ("p1d"): not an interval field */
                while (*cp == '+' || *cp == '-' || *cp == '/' || *cp == '_' || *cp == '.' ||
                       *cp == ':' || isalnum((unsigned char)*cp))
                    APPEND(tolower((unsigned char)*cp++));
                ftype[nf] = F_NUM;
            }
        } else if (*cp == '+' || *cp == '-') {
            APPEND(*cp++);
            while (isspace((unsigned char)*cp))
                cp++;
            if (isdigit((unsigned char)*cp)) {
                ftype[nf] = F_SIGNED;
                while (isdigit((unsigned char)*cp) || *cp == ':' || *cp == '.' || *cp == '-')
                    APPEND(*cp++);
            } else if (isalpha((unsigned char)*cp)) {
                ftype[nf] = F_WORD;
                while (isalpha((unsigned char)*cp))
                    APPEND(tolower((unsigned char)*cp++));
            } else {
                return E_BAD;
            }
        } else if (ispunct((unsigned char)*cp)) {
            cp++;
            continue;
        } else {
            return E_BAD;
        }
        APPEND('\0');
        nf++;
    }
#undef APPEND
    return nf;
}

/* DecodeInterval, IntervalStyle postgres. */
static int decode_interval(char **field, const int *ftype, int nf, int range, ItmIn *t)
{
    bool is_before = false;
    int fmask = 0;
    DtUnit type = DU_UNKNOWN;
    bool have_type = false;
    memset(t, 0, sizeof(*t));
    for (int i = nf - 1; i >= 0; i--) {
        int tmask = 0, rc;
        char *f = field[i];
        switch (ftype[i]) {
        case F_TIME:
            if ((rc = decode_time(f, range, t)) != 0)
                return rc;
            tmask = B_TIME;
            type = DU_DAY;
            have_type = true;
            break;
        case F_SIGNED:
            if (strchr(f + 1, ':') != NULL) {
                ItmIn save = *t;
                if (decode_time(f + 1, range, t) == 0) {
                    if (*f == '-') {
                        if (t->usec == INT64_MIN)
                            return E_OVERFLOW;
                        t->usec = -t->usec;
                    }
                    tmask = B_TIME;
                    type = DU_DAY;
                    have_type = true;
                    break;
                }
                *t = save;
            }
            /* FALLTHROUGH */
        case F_NUM: {
            if (!have_type) {
                type = default_unit(range);
                have_type = true;
            }
            char *cp;
            double fval = 0;
            int64_t val = strtoi64(f, &cp);
            if (errno == ERANGE)
                return E_OVERFLOW;
            if (*cp == '-') {
                errno = 0;
                long val2 = strtol(cp + 1, &cp, 10);
                if (errno == ERANGE || val2 < 0 || val2 >= MONTHS_PER_YEAR)
                    return E_OVERFLOW;
                if (*cp != '\0')
                    return E_BAD;
                type = DU_MONTH;
                if (*f == '-')
                    val2 = -val2;
                if (__builtin_mul_overflow(val, (int64_t)MONTHS_PER_YEAR, &val) ||
                    __builtin_add_overflow(val, (int64_t)val2, &val))
                    return E_OVERFLOW;
            } else if (*cp == '.') {
                if (cp[1] != '\0') {
                    errno = 0;
                    fval = strtod(cp, &cp);
                    if (*cp != '\0' || errno != 0)
                        return E_BAD;
                }
                if (*f == '-')
                    fval = -fval;
            } else if (*cp != '\0') {
                return E_BAD;
            }
            DtUnit next = type;
            if ((rc = add_number(type, val, fval, t, &tmask, &next)) != 0)
                return rc;
            type = next;
            break;
        }
        case F_WORD: {
            if (strcmp(f, "ago") == 0) {
                is_before = true;
                type = DU_UNKNOWN;
                have_type = true;
                break;
            }
            bool special;
            DtUnit u = dt_decode_units(f, strlen(f), &special);
            if (u == DU_UNKNOWN || special || u == DU_QUARTER || u == DU_TZ ||
                u == DU_TZ_HOUR || u == DU_TZ_MINUTE)
                return E_BAD;
            type = u;
            have_type = true;
            break;
        }
        default:
            return E_BAD;
        }
        if (tmask & fmask)
            return E_BAD;
        fmask |= tmask;
    }
    if (fmask == 0)
        return E_BAD;
    if (is_before) {
        if (t->usec == INT64_MIN || t->mday == INT_MIN || t->mon == INT_MIN ||
            t->year == INT_MIN)
            return E_OVERFLOW;
        t->usec = -t->usec;
        t->mday = -t->mday;
        t->mon = -t->mon;
        t->year = -t->year;
    }
    return 0;
}

/* ParseISO8601Number */
static int iso_number(const char *str, const char **end, int64_t *ipart, double *fpart)
{
    int sign = 1;
    *ipart = 0;
    *fpart = 0.0;
    if (*str == '-') {
        sign = -1;
        str++;
    }
    const char *p = str;
    errno = 0;
    if (isdigit((unsigned char)*p)) {
        char *e;
        *ipart = (int64_t)strtoll(p, &e, 10) * sign;
        p = e;
    }
    if (*p == '.') {
        if (isdigit((unsigned char)p[1])) {
            char *e;
            *fpart = strtod(p, &e) * sign;
            p = e;
        } else {
            p++;
            str++;
        }
    }
    *end = p;
    if (p == str || errno != 0)
        return E_BAD;
    return 0;
}

static int iso_int_width(const char *s)
{
    if (*s == '-')
        s++;
    return (int)strspn(s, "0123456789");
}

/* DecodeISO8601Interval */
static int decode_iso8601(const char *str, ItmIn *t)
{
    bool datepart = true, havefield = false;
    memset(t, 0, sizeof(*t));
    if (strlen(str) < 2 || str[0] != 'P')
        return E_BAD;
    str++;
    while (*str) {
        if (*str == 'T') {
            datepart = false;
            havefield = false;
            str++;
            continue;
        }
        const char *start = str;
        int64_t val;
        double fval;
        if (iso_number(str, &str, &val, &fval))
            return E_BAD;
        char unit = *str;
        if (unit != '\0')
            str++;
        if (datepart) {
            switch (unit) {
            case 'Y':
                if (!adjust_years(val, 1, t) || !adjust_fract_years(fval, 1, t))
                    return E_OVERFLOW;
                break;
            case 'M':
                if (!adjust_months(val, t) || !adjust_fract_days(fval, DAYS_PER_MONTH, t))
                    return E_OVERFLOW;
                break;
            case 'W':
                if (!adjust_days(val, 7, t) || !adjust_fract_days(fval, 7, t))
                    return E_OVERFLOW;
                break;
            case 'D':
                if (!adjust_days(val, 1, t) || !adjust_fract_usec(fval, USECS_PER_DAY, t))
                    return E_OVERFLOW;
                break;
            case 'T':
            case '\0':
                if (iso_int_width(start) == 8 && !havefield) {
                    if (!adjust_years(val / 10000, 1, t) || !adjust_months((val / 100) % 100, t) ||
                        !adjust_days(val % 100, 1, t) ||
                        !adjust_fract_usec(fval, USECS_PER_DAY, t))
                        return E_OVERFLOW;
                    if (unit == '\0')
                        return 0;
                    datepart = false;
                    havefield = false;
                    continue;
                }
                /* FALLTHROUGH */
            case '-':
                if (havefield)
                    return E_BAD;
                if (!adjust_years(val, 1, t) || !adjust_fract_years(fval, 1, t))
                    return E_OVERFLOW;
                if (unit == '\0')
                    return 0;
                if (unit == 'T') {
                    datepart = false;
                    havefield = false;
                    continue;
                }
                if (iso_number(str, &str, &val, &fval))
                    return E_BAD;
                if (!adjust_months(val, t) || !adjust_fract_days(fval, DAYS_PER_MONTH, t))
                    return E_OVERFLOW;
                if (*str == '\0')
                    return 0;
                if (*str == 'T') {
                    datepart = false;
                    havefield = false;
                    str++;
                    continue;
                }
                if (*str != '-')
                    return E_BAD;
                str++;
                if (iso_number(str, &str, &val, &fval))
                    return E_BAD;
                if (!adjust_days(val, 1, t) || !adjust_fract_usec(fval, USECS_PER_DAY, t))
                    return E_OVERFLOW;
                if (*str == '\0')
                    return 0;
                if (*str == 'T') {
                    datepart = false;
                    havefield = false;
                    str++;
                    continue;
                }
                return E_BAD;
            default:
                return E_BAD;
            }
        } else {
            switch (unit) {
            case 'H':
                if (!adjust_usec(val, fval, USECS_PER_HOUR, t))
                    return E_OVERFLOW;
                break;
            case 'M':
                if (!adjust_usec(val, fval, USECS_PER_MINUTE, t))
                    return E_OVERFLOW;
                break;
            case 'S':
                if (!adjust_usec(val, fval, USECS_PER_SEC, t))
                    return E_OVERFLOW;
                break;
            case '\0':
                if (iso_int_width(start) == 6 && !havefield) {
                    if (!adjust_usec(val / 10000, 0, USECS_PER_HOUR, t) ||
                        !adjust_usec((val / 100) % 100, 0, USECS_PER_MINUTE, t) ||
                        !adjust_usec(val % 100, 0, USECS_PER_SEC, t) ||
                        !adjust_fract_usec(fval, 1, t))
                        return E_OVERFLOW;
                    return 0;
                }
                /* FALLTHROUGH */
            case ':':
                if (havefield)
                    return E_BAD;
                if (!adjust_usec(val, fval, USECS_PER_HOUR, t))
                    return E_OVERFLOW;
                if (unit == '\0')
                    return 0;
                if (iso_number(str, &str, &val, &fval))
                    return E_BAD;
                if (!adjust_usec(val, fval, USECS_PER_MINUTE, t))
                    return E_OVERFLOW;
                if (*str == '\0')
                    return 0;
                if (*str != ':')
                    return E_BAD;
                str++;
                if (iso_number(str, &str, &val, &fval))
                    return E_BAD;
                if (!adjust_usec(val, fval, USECS_PER_SEC, t))
                    return E_OVERFLOW;
                if (*str == '\0')
                    return 0;
                return E_BAD;
            default:
                return E_BAD;
            }
        }
        havefield = true;
    }
    return 0;
}

int dt_parse_interval(const char *s, size_t len, int32_t typmod, SlInterval *out, int loc,
                      SlError *err)
{
    char str[257], buf[600];
    char *field[25];
    int ftype[25];
    int range = typmod >= 0 ? (typmod >> 16) & 0x7FFF : ITM_FULL_RANGE;
    ItmIn t;
    int rc = E_BAD;
    if (len < sizeof(str) && memchr(s, '\0', len) == NULL) {
        memcpy(str, s, len);
        str[len] = '\0';
        int nf = split_fields(buf, sizeof(buf), str, field, ftype, 25);
        rc = nf < 0 ? nf : decode_interval(field, ftype, nf, range, &t);
        if (rc == E_BAD)
            rc = decode_iso8601(str, &t);
    }
    int n = (int)SL_MIN(len, 1000);
    if (rc == E_OVERFLOW)
        return sl_error_at(err, ERRCODE_INTERVAL_FIELD_OVERFLOW, loc,
                           "interval field value out of range: \"%.*s\"", n, s);
    if (rc != 0)
        return sl_error_at(err, ERRCODE_INVALID_DATETIME_FORMAT, loc,
                           "invalid input syntax for type interval: \"%.*s\"", n, s);
    int64_t months = (int64_t)t.year * MONTHS_PER_YEAR + t.mon;
    if (months > INT_MAX || months < INT_MIN)
        return sl_error_at(err, ERRCODE_DATETIME_VALUE_OUT_OF_RANGE, loc, "interval out of range");
    out->months = (int32_t)months;
    out->days = t.mday;
    out->usec = t.usec;
    return typmod >= 0 ? dt_interval_adjust(out, typmod, err) : 0;
}

int dt_interval_adjust(SlInterval *iv, int32_t typmod, SlError *err)
{
    static const int64_t scales[7] = {1000000, 100000, 10000, 1000, 100, 10, 1};
    if (typmod < 0)
        return 0;
    int range = (typmod >> 16) & 0x7FFF, precision = typmod & 0xFFFF;
    switch (range) {
    case ITM_FULL_RANGE:
    case ITM_SECOND:
    case ITM_DAY | ITM_HOUR | ITM_MINUTE | ITM_SECOND:
    case ITM_HOUR | ITM_MINUTE | ITM_SECOND:
    case ITM_MINUTE | ITM_SECOND:
        break;
    case ITM_YEAR:
        iv->months = (iv->months / MONTHS_PER_YEAR) * MONTHS_PER_YEAR;
        iv->days = 0;
        iv->usec = 0;
        break;
    case ITM_MONTH:
    case ITM_YEAR | ITM_MONTH:
        iv->days = 0;
        iv->usec = 0;
        break;
    case ITM_DAY:
        iv->usec = 0;
        break;
    case ITM_HOUR:
    case ITM_DAY | ITM_HOUR:
        iv->usec = (iv->usec / USECS_PER_HOUR) * USECS_PER_HOUR;
        break;
    case ITM_MINUTE:
    case ITM_HOUR | ITM_MINUTE:
    case ITM_DAY | ITM_HOUR | ITM_MINUTE:
        iv->usec = (iv->usec / USECS_PER_MINUTE) * USECS_PER_MINUTE;
        break;
    default:
        return sl_error(err, ERRCODE_INTERNAL_ERROR, "unrecognized interval typmod: %d", typmod);
    }
    if (precision != ITM_FULL_PRECISION) {
        if (precision > 6)
            precision = 6;
        int64_t sc = scales[precision], off = sc / 2;
        if (iv->usec >= 0)
            iv->usec = ((iv->usec + off) / sc) * sc;
        else
            iv->usec = -(((-iv->usec + off) / sc) * sc);
    }
    return 0;
}

const char *dt_interval_typmod_text(int32_t typmod)
{
    static const struct { int range; const char *text; } names[] = {
        {ITM_YEAR, " year"},
        {ITM_MONTH, " month"},
        {ITM_DAY, " day"},
        {ITM_HOUR, " hour"},
        {ITM_MINUTE, " minute"},
        {ITM_SECOND, " second"},
        {ITM_YEAR | ITM_MONTH, " year to month"},
        {ITM_DAY | ITM_HOUR, " day to hour"},
        {ITM_DAY | ITM_HOUR | ITM_MINUTE, " day to minute"},
        {ITM_DAY | ITM_HOUR | ITM_MINUTE | ITM_SECOND, " day to second"},
        {ITM_HOUR | ITM_MINUTE, " hour to minute"},
        {ITM_HOUR | ITM_MINUTE | ITM_SECOND, " hour to second"},
        {ITM_MINUTE | ITM_SECOND, " minute to second"},
    };
    if (typmod < 0)
        return "";
    int range = (typmod >> 16) & 0x7FFF;
    for (size_t i = 0; i < SL_ARRAY_LEN(names); i++)
        if (names[i].range == range)
            return names[i].text;
    return "";
}
