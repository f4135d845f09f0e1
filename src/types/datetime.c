/*
 * datetime.c -- the calendar and the text input and output of DATE,
 * TIMESTAMP and TIMESTAMPTZ, as PostgreSQL 15 has them (see datetime.h).
 *
 *   dt_date2j, dt_j2date, dt_j2day, dt_valid_julian, dt_days_in_month,
 *   dt_isoweek, dt_isoyear, dt_isoweek2j, dt_ts2tm, dt_tm2ts   calendar
 *   dt_parse_date, dt_parse_timestamp                          input
 *   dt_format_date, dt_format_timestamp                        output
 *   dt_decode_units                                            unit names
 *   dt_now                                                     the clock
 *
 * The input side is PostgreSQL's ParseDateTime + DecodeDateTime, cut down:
 * ISO 8601 dates and times (with 'T', fractional seconds and zone offsets
 * such as +02, +05:30, -0800 or Z), the MDY forms of DateStyle "ISO, MDY",
 * month and day names, AM/PM, BC, run-together digits (20200102,
 * 20200102T030405), and the special words epoch, infinity, -infinity, now,
 * today, tomorrow, yesterday and allballs.  Zones are numeric offsets, a
 * few common abbreviations (UTC, GMT, Z, EST, PST, CET, ...) and the names
 * of the system's tz database (timezone.c); an unknown name is PostgreSQL's
 * 22023 "time zone ... not recognized".  Intervals are in interval.c.
 */
#include "types/datetime.h"
#include "sluice/settings.h"

#include <ctype.h>
#include <errno.h>
#include <limits.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

/* ---------------------------------------------------------------- calendar */

static const int day_tab[2][13] = {
    {31, 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31, 0},
    {31, 29, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31, 0},
};

static bool isleap(int y)
{
    return y % 4 == 0 && (y % 100 != 0 || y % 400 == 0);
}

int dt_days_in_month(int y, int m)
{
    return day_tab[isleap(y)][m - 1];
}

/* date2j, in 64 bits so that no year overflows it; results outside the
 * int range (never valid dates) are clamped. */
int dt_date2j(int y0, int m0, int d)
{
    int64_t y = y0, m = m0, julian, century;
    if (m > 2) {
        m += 1;
        y += 4800;
    } else {
        m += 13;
        y += 4799;
    }
    century = y / 100;
    julian = y * 365 - 32167;
    julian += y / 4 - century + century / 4;
    julian += 7834 * m / 256 + d;
    return julian > INT_MAX ? INT_MAX : julian < INT_MIN ? INT_MIN : (int)julian;
}

void dt_j2date(int jd, int *year, int *month, int *day)
{
    unsigned int julian = (unsigned int)jd, quad, extra;
    int y;
    julian += 32044;
    quad = julian / 146097;
    extra = (julian - quad * 146097) * 4 + 3;
    julian += 60 + quad * 3 + extra / 146097;
    quad = julian / 1461;
    julian -= quad * 1461;
    y = (int)(julian * 4 / 1461);
    julian = ((y != 0) ? ((julian + 305) % 365) : ((julian + 306) % 366)) + 123;
    y += (int)(quad * 4);
    *year = y - 4800;
    quad = julian * 2141 / 65536;
    *day = (int)(julian - 7834 * quad / 256);
    *month = (int)((quad + 10) % MONTHS_PER_YEAR + 1);
}

int dt_j2day(int jd)
{
    int d = (jd + 1) % 7;
    return d < 0 ? d + 7 : d;
}

/* IS_VALID_JULIAN: from 4714-11-24 BC to 5874898-06-03 (the day is not
 * checked, as in PostgreSQL). */
bool dt_valid_julian(int y, int m, int d)
{
    SL_UNUSED(d);
    return (y > -4713 || (y == -4713 && m >= 11)) && (y < 5874898 || (y == 5874898 && m < 6));
}

int dt_isoweek2j(int year, int week)
{
    int day4 = dt_date2j(year, 1, 4);
    int day0 = dt_j2day(day4 - 1);
    return ((week - 1) * 7) + (day4 - day0);
}

int dt_isoweek(int year, int mon, int mday)
{
    int dayn = dt_date2j(year, mon, mday);
    int day4 = dt_date2j(year, 1, 4);
    int day0 = dt_j2day(day4 - 1);
    if (dayn < day4 - day0) {
        day4 = dt_date2j(year - 1, 1, 4);
        day0 = dt_j2day(day4 - 1);
    }
    int result = (dayn - (day4 - day0)) / 7 + 1;
    if (result >= 52) {
        day4 = dt_date2j(year + 1, 1, 4);
        day0 = dt_j2day(day4 - 1);
        if (dayn >= day4 - day0)
            result = (dayn - (day4 - day0)) / 7 + 1;
    }
    return result;
}

int dt_isoyear(int year, int mon, int mday)
{
    int dayn = dt_date2j(year, mon, mday);
    int day4 = dt_date2j(year, 1, 4);
    int day0 = dt_j2day(day4 - 1);
    if (dayn < day4 - day0) {
        day4 = dt_date2j(year - 1, 1, 4);
        day0 = dt_j2day(day4 - 1);
        year--;
    }
    int result = (dayn - (day4 - day0)) / 7 + 1;
    if (result >= 52) {
        day4 = dt_date2j(year + 1, 1, 4);
        day0 = dt_j2day(day4 - 1);
        if (dayn >= day4 - day0)
            year++;
    }
    return year;
}

int dt_ts2tm(int64_t ts, DtTm *tm)
{
    int64_t date = ts / USECS_PER_DAY, time = ts - date * USECS_PER_DAY;
    if (time < 0) {
        time += USECS_PER_DAY;
        date -= 1;
    }
    date += POSTGRES_EPOCH_JDATE;
    if (date < 0 || date > INT_MAX)
        return -1;
    dt_j2date((int)date, &tm->year, &tm->mon, &tm->mday);
    tm->hour = (int)(time / USECS_PER_HOUR);
    time -= tm->hour * USECS_PER_HOUR;
    tm->min = (int)(time / USECS_PER_MINUTE);
    time -= tm->min * USECS_PER_MINUTE;
    tm->sec = (int)(time / USECS_PER_SEC);
    tm->fsec = time - tm->sec * USECS_PER_SEC;
    return 0;
}

int dt_tm2ts(const DtTm *tm, int64_t *result)
{
    if (!dt_valid_julian(tm->year, tm->mon, tm->mday))
        return -1;
    int64_t date = dt_date2j(tm->year, tm->mon, tm->mday) - POSTGRES_EPOCH_JDATE;
    int64_t time = (((int64_t)tm->hour * 60 + tm->min) * 60 + tm->sec) * USECS_PER_SEC + tm->fsec;
    int64_t r;
    if (__builtin_mul_overflow(date, USECS_PER_DAY, &r) || __builtin_add_overflow(r, time, &r))
        return -1;
    if ((r < 0 && date > 0) || (r > 0 && date < -1))
        return -1;
    if (!dt_ts_valid(r))
        return -1;
    *result = r;
    return 0;
}

int64_t dt_now(void)
{
    struct timespec t;
    clock_gettime(CLOCK_REALTIME, &t);
    return ((int64_t)t.tv_sec - (int64_t)(POSTGRES_EPOCH_JDATE - UNIX_EPOCH_JDATE) * SECS_PER_DAY) *
               USECS_PER_SEC + t.tv_nsec / 1000;
}

/* ----------------------------------------------------------- token tables */

/* Token types (PostgreSQL's datetime.h numbering, used as mask bits). */
enum {
    RESERV = 0, MONTH = 1, YEAR = 2, DAY = 3, TZ = 5, IGNORE_DTF = 8, AMPM = 9,
    HOUR = 10, MINUTE = 11, SECOND = 12, MILLISECOND = 13, MICROSECOND = 14,
    DOY = 15, DOW = 16, UNITS = 17, ADBC = 18, ISOTIME = 23, UNKNOWN_FIELD = 30
};
#define DTK_M(t) (1 << (t))
#define DTK_DATE_M (DTK_M(YEAR) | DTK_M(MONTH) | DTK_M(DAY))
#define DTK_TIME_M (DTK_M(HOUR) | DTK_M(MINUTE) | DTK_M(SECOND) | DTK_M(MILLISECOND) | \
                    DTK_M(MICROSECOND))

/* Field types from ParseDateTime. */
enum { F_NUMBER, F_STRING, F_DATE, F_TIME, F_TZ, F_SPECIAL };

/* RESERV values */
enum { R_EARLY = 1, R_LATE, R_EPOCH, R_NOW, R_YESTERDAY, R_TODAY, R_TOMORROW, R_ZULU };
enum { AM = 0, PM = 1, HR24 = 2 };

typedef struct DtToken {
    const char *word;
    int         type;
    int         value;
} DtToken;

/* datetktbl, the words sluice reads (sorted for bsearch). */
static const DtToken date_tokens[] = {
    {"-infinity", RESERV, R_EARLY},
    {"ad", ADBC, 0},
    {"allballs", RESERV, R_ZULU},
    {"am", AMPM, AM},
    {"apr", MONTH, 4},
    {"april", MONTH, 4},
    {"at", IGNORE_DTF, 0},
    {"aug", MONTH, 8},
    {"august", MONTH, 8},
    {"bc", ADBC, 1},
    {"dec", MONTH, 12},
    {"december", MONTH, 12},
    {"epoch", RESERV, R_EPOCH},
    {"feb", MONTH, 2},
    {"february", MONTH, 2},
    {"fri", DOW, 5},
    {"friday", DOW, 5},
    {"infinity", RESERV, R_LATE},
    {"jan", MONTH, 1},
    {"january", MONTH, 1},
    {"jul", MONTH, 7},
    {"july", MONTH, 7},
    {"jun", MONTH, 6},
    {"june", MONTH, 6},
    {"mar", MONTH, 3},
    {"march", MONTH, 3},
    {"may", MONTH, 5},
    {"mon", DOW, 1},
    {"monday", DOW, 1},
    {"now", RESERV, R_NOW},
    {"nov", MONTH, 11},
    {"november", MONTH, 11},
    {"oct", MONTH, 10},
    {"october", MONTH, 10},
    {"on", IGNORE_DTF, 0},
    {"pm", AMPM, PM},
    {"sat", DOW, 6},
    {"saturday", DOW, 6},
    {"sep", MONTH, 9},
    {"sept", MONTH, 9},
    {"september", MONTH, 9},
    {"sun", DOW, 0},
    {"sunday", DOW, 0},
    {"t", ISOTIME, 0},
    {"thu", DOW, 4},
    {"thur", DOW, 4},
    {"thurs", DOW, 4},
    {"thursday", DOW, 4},
    {"today", RESERV, R_TODAY},
    {"tomorrow", RESERV, R_TOMORROW},
    {"tue", DOW, 2},
    {"tues", DOW, 2},
    {"tuesday", DOW, 2},
    {"wed", DOW, 3},
    {"wednesday", DOW, 3},
    {"weds", DOW, 3},
    {"yesterday", RESERV, R_YESTERDAY},
    {"z", RESERV, R_ZULU},
    {"zulu", RESERV, R_ZULU},
};

/* Time zone abbreviations (a few of PostgreSQL's "Default" set), as
 * seconds east of UTC. */
static const DtToken tz_abbrevs[] = {
    {"cdt", TZ, -5 * 3600},  {"cest", TZ, 2 * 3600}, {"cet", TZ, 1 * 3600},
    {"cst", TZ, -6 * 3600},  {"edt", TZ, -4 * 3600}, {"eest", TZ, 3 * 3600},
    {"eet", TZ, 2 * 3600},   {"est", TZ, -5 * 3600}, {"gmt", TZ, 0},
    {"jst", TZ, 9 * 3600},   {"mdt", TZ, -6 * 3600}, {"msk", TZ, 3 * 3600},
    {"mst", TZ, -7 * 3600},  {"pdt", TZ, -7 * 3600}, {"pst", TZ, -8 * 3600},
    {"ut", TZ, 0},           {"utc", TZ, 0},           {"z", TZ, 0},
    {"zulu", TZ, 0},
};

static const DtToken *token_search(const char *w, const DtToken *tab, size_t n)
{
    size_t lo = 0, hi = n;
    while (lo < hi) {
        size_t mid = (lo + hi) / 2;
        int c = strcmp(w, tab[mid].word);
        if (c == 0)
            return &tab[mid];
        if (c < 0)
            hi = mid;
        else
            lo = mid + 1;
    }
    return NULL;
}

static int decode_special(const char *w, int *val)
{
    char buf[11];
    snprintf(buf, sizeof(buf), "%s", w);      /* TOKMAXLEN */
    const DtToken *t = token_search(buf, date_tokens, SL_ARRAY_LEN(date_tokens));
    if (t == NULL)
        return UNKNOWN_FIELD;
    *val = t->value;
    return t->type;
}

static bool decode_tz_abbrev(const char *w, int *east)
{
    const DtToken *t = token_search(w, tz_abbrevs, SL_ARRAY_LEN(tz_abbrevs));
    if (t == NULL)
        return false;
    *east = t->value;
    return true;
}

/* deltatktbl: the unit words of intervals, extract and date_trunc. */
typedef struct UnitWord {
    const char *word;
    DtUnit      unit;
} UnitWord;

static const UnitWord unit_words[] = {
    {"c", DU_CENTURY},        {"cent", DU_CENTURY},     {"centuries", DU_CENTURY},
    {"century", DU_CENTURY},  {"d", DU_DAY},            {"day", DU_DAY},
    {"days", DU_DAY},         {"dec", DU_DECADE},       {"decade", DU_DECADE},
    {"decades", DU_DECADE},   {"decs", DU_DECADE},      {"h", DU_HOUR},
    {"hour", DU_HOUR},        {"hours", DU_HOUR},       {"hr", DU_HOUR},
    {"hrs", DU_HOUR},         {"m", DU_MINUTE},         {"microsecon", DU_MICROSEC},
    {"mil", DU_MILLENNIUM},   {"millennia", DU_MILLENNIUM}, {"millennium", DU_MILLENNIUM},
    {"millisecon", DU_MILLISEC}, {"mils", DU_MILLENNIUM}, {"min", DU_MINUTE},
    {"mins", DU_MINUTE},      {"minute", DU_MINUTE},    {"minutes", DU_MINUTE},
    {"mon", DU_MONTH},        {"mons", DU_MONTH},       {"month", DU_MONTH},
    {"months", DU_MONTH},     {"ms", DU_MILLISEC},      {"msec", DU_MILLISEC},
    {"msecond", DU_MILLISEC}, {"mseconds", DU_MILLISEC}, {"msecs", DU_MILLISEC},
    {"qtr", DU_QUARTER},      {"quarter", DU_QUARTER},  {"s", DU_SECOND},
    {"sec", DU_SECOND},       {"second", DU_SECOND},    {"seconds", DU_SECOND},
    {"secs", DU_SECOND},      {"timezone", DU_TZ},      {"timezone_h", DU_TZ_HOUR},
    {"timezone_m", DU_TZ_MINUTE}, {"us", DU_MICROSEC},  {"usec", DU_MICROSEC},
    {"usecond", DU_MICROSEC}, {"useconds", DU_MICROSEC}, {"usecs", DU_MICROSEC},
    {"w", DU_WEEK},           {"week", DU_WEEK},        {"weeks", DU_WEEK},
    {"y", DU_YEAR},           {"year", DU_YEAR},        {"years", DU_YEAR},
    {"yr", DU_YEAR},          {"yrs", DU_YEAR},
};

static const UnitWord special_units[] = {
    {"dow", DU_DOW},   {"doy", DU_DOY},       {"epoch", DU_EPOCH},  {"isodow", DU_ISODOW},
    {"isoyear", DU_ISOYEAR}, {"j", DU_JULIAN}, {"jd", DU_JULIAN}, {"julian", DU_JULIAN},
};

DtUnit dt_decode_units(const char *s, size_t len, bool *special)
{
    char buf[11];
    size_t n = SL_MIN(len, sizeof(buf) - 1);
    for (size_t i = 0; i < n; i++)
        buf[i] = (char)tolower((unsigned char)s[i]);
    buf[n] = '\0';
    *special = false;
    /* compared on their first 10 characters (TOKMAXLEN), as PostgreSQL does */
    for (size_t i = 0; i < SL_ARRAY_LEN(unit_words); i++)
        if (strcmp(buf, unit_words[i].word) == 0)
            return unit_words[i].unit;
    for (size_t i = 0; i < SL_ARRAY_LEN(special_units); i++) {
        if (strcmp(buf, special_units[i].word) == 0) {
            *special = true;
            return special_units[i].unit;
        }
    }
    return DU_UNKNOWN;
}

/* ----------------------------------------------------------- ParseDateTime */

#define MAXDATELEN   128
#define MAXDATEFIELDS 25

enum { DTERR_BAD_FORMAT = -1, DTERR_FIELD_OVERFLOW = -2, DTERR_MD_FIELD_OVERFLOW = -3,
       DTERR_TZDISP_OVERFLOW = -5, DTERR_BAD_ZONE = -6 };

typedef struct Fields {
    char  buf[MAXDATELEN * 2 + MAXDATEFIELDS];
    char *field[MAXDATEFIELDS];
    int   ftype[MAXDATEFIELDS];
    int   nf;
} Fields;

static bool in_token_table(const char *w)
{
    return token_search(w, date_tokens, SL_ARRAY_LEN(date_tokens)) != NULL;
}

/* Splits the (NUL-terminated) input into typed fields, as ParseDateTime. */
static int parse_fields(const char *cp, Fields *f)
{
    char *bufp = f->buf, *bufend = f->buf + sizeof(f->buf) - 1;
    int nf = 0;
#define APPEND(c)                         \
    do {                                  \
        if (bufp >= bufend)               \
            return DTERR_BAD_FORMAT;      \
        *bufp++ = (char)(c);              \
    } while (0)
    while (*cp != '\0') {
        if (isspace((unsigned char)*cp)) {
            cp++;
            continue;
        }
        if (nf >= MAXDATEFIELDS)
            return DTERR_BAD_FORMAT;
        f->field[nf] = bufp;
        if (isdigit((unsigned char)*cp)) {
            APPEND(*cp++);
            while (isdigit((unsigned char)*cp))
                APPEND(*cp++);
            if (*cp == ':') {
                f->ftype[nf] = F_TIME;
                APPEND(*cp++);
                while (isdigit((unsigned char)*cp) || *cp == ':' || *cp == '.')
                    APPEND(*cp++);
            } else if (*cp == '-' || *cp == '/' || *cp == '.') {
                char delim = *cp;
                APPEND(*cp++);
                if (isdigit((unsigned char)*cp)) {
                    f->ftype[nf] = delim == '.' ? F_NUMBER : F_DATE;
                    while (isdigit((unsigned char)*cp))
                        APPEND(*cp++);
                    if (*cp == delim) {
                        f->ftype[nf] = F_DATE;
                        APPEND(*cp++);
                        while (isdigit((unsigned char)*cp) || *cp == delim)
                            APPEND(*cp++);
                    }
                } else {
                    f->ftype[nf] = F_DATE;
                    while (isalnum((unsigned char)*cp) || *cp == delim)
                        APPEND(tolower((unsigned char)*cp++));
                }
            } else {
                f->ftype[nf] = F_NUMBER;
            }
        } else if (*cp == '.') {
            APPEND(*cp++);
            while (isdigit((unsigned char)*cp))
                APPEND(*cp++);
            f->ftype[nf] = F_NUMBER;
        } else if (isalpha((unsigned char)*cp)) {
            f->ftype[nf] = F_STRING;
            APPEND(tolower((unsigned char)*cp++));
            while (isalpha((unsigned char)*cp))
                APPEND(tolower((unsigned char)*cp++));
            bool is_date = false;
            if (*cp == '-' || *cp == '/' || *cp == '.') {
                is_date = true;
            } else if (*cp == '+' || isdigit((unsigned char)*cp)) {
                *bufp = '\0';
                if (!in_token_table(f->field[nf]))
                    is_date = true;
            }
            if (is_date) {
                f->ftype[nf] = F_DATE;
                do {
                    APPEND(tolower((unsigned char)*cp++));
                } while (*cp == '+' || *cp == '-' || *cp == '/' || *cp == '_' || *cp == '.' ||
                         *cp == ':' || isalnum((unsigned char)*cp));
            }
        } else if (*cp == '+' || *cp == '-') {
            APPEND(*cp++);
            while (isspace((unsigned char)*cp))
                cp++;
            if (isdigit((unsigned char)*cp)) {
                f->ftype[nf] = F_TZ;
                APPEND(*cp++);
                while (isdigit((unsigned char)*cp) || *cp == ':' || *cp == '.' || *cp == '-')
                    APPEND(*cp++);
            } else if (isalpha((unsigned char)*cp)) {
                f->ftype[nf] = F_SPECIAL;
                APPEND(tolower((unsigned char)*cp++));
                while (isalpha((unsigned char)*cp))
                    APPEND(tolower((unsigned char)*cp++));
            } else {
                return DTERR_BAD_FORMAT;
            }
        } else if (ispunct((unsigned char)*cp)) {
            cp++;
            continue;
        } else {
            return DTERR_BAD_FORMAT;
        }
        APPEND('\0');
        nf++;
    }
#undef APPEND
    f->nf = nf;
    return 0;
}

/* strtol into an int, with ERANGE for what does not fit. */
static int strtoint(const char *s, char **end, int base)
{
    errno = 0;
    long v = strtol(s, end, base);
    if (errno == 0 && (v > INT_MAX || v < INT_MIN))
        errno = ERANGE;
    return (int)v;
}

/* ".123" -> microseconds, rounded. */
static int parse_fractional_second(const char *cp, int64_t *fsec)
{
    char *end;
    errno = 0;
    double frac = strtod(cp, &end);
    if (*end != '\0' || errno != 0)
        return DTERR_BAD_FORMAT;
    *fsec = (int64_t)rint(frac * 1000000);
    return 0;
}

/* DecodeTimezone: "+hh", "-hhmm", "+hh:mm[:ss]"; *east is seconds east. */
static int decode_timezone(const char *str, int *east)
{
    int hr, min = 0, sec = 0;
    char *cp;
    if (*str != '+' && *str != '-')
        return DTERR_BAD_FORMAT;
    hr = strtoint(str + 1, &cp, 10);
    if (errno == ERANGE)
        return DTERR_TZDISP_OVERFLOW;
    if (*cp == ':') {
        min = strtoint(cp + 1, &cp, 10);
        if (errno == ERANGE)
            return DTERR_TZDISP_OVERFLOW;
        if (*cp == ':') {
            sec = strtoint(cp + 1, &cp, 10);
            if (errno == ERANGE)
                return DTERR_TZDISP_OVERFLOW;
        }
    } else if (*cp == '\0' && strlen(str) > 3) {
        min = hr % 100;
        hr = hr / 100;
    }
    if (hr < 0 || hr > 15 || min < 0 || min >= 60 || sec < 0 || sec >= 60)
        return DTERR_TZDISP_OVERFLOW;
    int tz = (hr * 60 + min) * 60 + sec;
    *east = *str == '-' ? -tz : tz;
    if (*cp != '\0')
        return DTERR_BAD_FORMAT;
    return 0;
}

/* DecodeNumberField: run-together digits, yyyymmdd or hhmmss[.fff]. */
static int decode_number_field(int len, char *str, int fmask, int *tmask, DtTm *tm,
                               bool *is2digits)
{
    char *cp;
    if ((cp = strchr(str, '.')) != NULL) {
        errno = 0;
        double frac = strtod(cp, NULL);
        if (errno != 0)
            return DTERR_BAD_FORMAT;
        tm->fsec = (int64_t)rint(frac * 1000000);
        *cp = '\0';
        len = (int)strlen(str);
    } else if ((fmask & DTK_DATE_M) != DTK_DATE_M) {
        if (len >= 6) {
            *tmask = DTK_DATE_M;
            tm->mday = atoi(str + (len - 2));
            str[len - 2] = '\0';
            tm->mon = atoi(str + (len - 4));
            str[len - 4] = '\0';
            tm->year = atoi(str);
            if (len - 4 == 2)
                *is2digits = true;
            return 1;
        }
    }
    if ((fmask & DTK_TIME_M) != DTK_TIME_M) {
        if (len == 6) {
            *tmask = DTK_TIME_M;
            tm->sec = atoi(str + 4);
            str[4] = '\0';
            tm->min = atoi(str + 2);
            str[2] = '\0';
            tm->hour = atoi(str);
            return 2;
        }
        if (len == 4) {
            *tmask = DTK_TIME_M;
            tm->sec = 0;
            tm->min = atoi(str + 2);
            str[2] = '\0';
            tm->hour = atoi(str);
            return 2;
        }
    }
    return DTERR_BAD_FORMAT;
}

/* DecodeNumber for DateStyle "ISO, MDY". */
static int decode_number(int flen, char *str, bool text_month, int fmask, int *tmask,
                         DtTm *tm, int *yday, bool *is2digits)
{
    char *cp;
    *tmask = 0;
    int val = strtoint(str, &cp, 10);
    if (errno == ERANGE)
        return DTERR_FIELD_OVERFLOW;
    if (cp == str)
        return DTERR_BAD_FORMAT;
    if (*cp == '.') {
        if (cp - str > 2) {
            int rc = decode_number_field(flen, str, fmask | DTK_DATE_M, tmask, tm, is2digits);
            return rc < 0 ? rc : 0;
        }
        int rc = parse_fractional_second(cp, &tm->fsec);
        if (rc)
            return rc;
    } else if (*cp != '\0') {
        return DTERR_BAD_FORMAT;
    }
    if (flen == 3 && (fmask & DTK_DATE_M) == DTK_M(YEAR) && val >= 1 && val <= 366) {
        *tmask = DTK_M(DOY) | DTK_M(MONTH) | DTK_M(DAY);
        *yday = val;
        return 0;
    }
    switch (fmask & DTK_DATE_M) {
    case 0:
        if (flen >= 3) {
            *tmask = DTK_M(YEAR);
            tm->year = val;
        } else {
            *tmask = DTK_M(MONTH);
            tm->mon = val;
        }
        break;
    case DTK_M(YEAR):
        *tmask = DTK_M(MONTH);
        tm->mon = val;
        break;
    case DTK_M(MONTH):
        if (text_month) {
            if (flen >= 3) {
                *tmask = DTK_M(YEAR);
                tm->year = val;
            } else {
                *tmask = DTK_M(DAY);
                tm->mday = val;
            }
        } else {
            *tmask = DTK_M(DAY);
            tm->mday = val;
        }
        break;
    case DTK_M(YEAR) | DTK_M(MONTH):
        if (text_month && flen >= 3 && *is2digits) {
            *tmask = DTK_M(DAY);
            tm->mday = tm->year;
            tm->year = val;
            *is2digits = false;
        } else {
            *tmask = DTK_M(DAY);
            tm->mday = val;
        }
        break;
    case DTK_M(DAY):
        *tmask = DTK_M(MONTH);
        tm->mon = val;
        break;
    case DTK_M(MONTH) | DTK_M(DAY):
        *tmask = DTK_M(YEAR);
        tm->year = val;
        break;
    case DTK_DATE_M: {
        int rc = decode_number_field(flen, str, fmask, tmask, tm, is2digits);
        return rc < 0 ? rc : 0;
    }
    default:
        return DTERR_BAD_FORMAT;
    }
    if (*tmask == DTK_M(YEAR))
        *is2digits = flen <= 2;
    return 0;
}

/* DecodeDate: a date field with separators, numbers or month names. */
static int decode_date(char *str, int fmask, int *tmask, bool *is2digits, DtTm *tm, int *yday)
{
    char *field[MAXDATEFIELDS];
    int nf = 0, dmask = 0;
    bool text_month = false;
    *tmask = 0;
    while (*str != '\0' && nf < MAXDATEFIELDS) {
        while (*str != '\0' && !isalnum((unsigned char)*str))
            str++;
        if (*str == '\0')
            return DTERR_BAD_FORMAT;
        field[nf] = str;
        if (isdigit((unsigned char)*str)) {
            while (isdigit((unsigned char)*str))
                str++;
        } else if (isalpha((unsigned char)*str)) {
            while (isalpha((unsigned char)*str))
                str++;
        }
        if (*str != '\0')
            *str++ = '\0';
        nf++;
    }
    for (int i = 0; i < nf; i++) {
        if (!isalpha((unsigned char)*field[i]))
            continue;
        int val, type = decode_special(field[i], &val);
        if (type == IGNORE_DTF)
            continue;
        if (type != MONTH)
            return DTERR_BAD_FORMAT;
        dmask = DTK_M(MONTH);
        tm->mon = val;
        text_month = true;
        if (fmask & dmask)
            return DTERR_BAD_FORMAT;
        fmask |= dmask;
        *tmask |= dmask;
        field[i] = NULL;
    }
    for (int i = 0; i < nf; i++) {
        if (field[i] == NULL)
            continue;
        int len = (int)strlen(field[i]);
        if (len <= 0)
            return DTERR_BAD_FORMAT;
        int rc = decode_number(len, field[i], text_month, fmask, &dmask, tm, yday, is2digits);
        if (rc)
            return rc;
        if (fmask & dmask)
            return DTERR_BAD_FORMAT;
        fmask |= dmask;
        *tmask |= dmask;
    }
    if ((fmask & ~(DTK_M(DOY) | DTK_M(TZ))) != DTK_DATE_M)
        return DTERR_BAD_FORMAT;
    return 0;
}

/* DecodeTime for timestamps: hh:mm, hh:mm:ss[.fff] or mm:ss.fff. */
static int decode_time(const char *str, int *tmask, DtTm *tm)
{
    char *cp;
    int64_t fsec = 0;
    *tmask = DTK_TIME_M;
    errno = 0;
    long long hour = strtoll(str, &cp, 10);
    if (errno == ERANGE)
        return DTERR_FIELD_OVERFLOW;
    if (*cp != ':')
        return DTERR_BAD_FORMAT;
    int min = strtoint(cp + 1, &cp, 10), sec = 0;
    if (errno == ERANGE)
        return DTERR_FIELD_OVERFLOW;
    if (*cp == '\0') {
        sec = 0;
    } else if (*cp == '.') {
        int rc = parse_fractional_second(cp, &fsec);
        if (rc)
            return rc;
        if (hour > INT_MAX || hour < INT_MIN)
            return DTERR_FIELD_OVERFLOW;
        sec = min;
        min = (int)hour;
        hour = 0;
    } else if (*cp == ':') {
        sec = strtoint(cp + 1, &cp, 10);
        if (errno == ERANGE)
            return DTERR_FIELD_OVERFLOW;
        if (*cp == '.') {
            int rc = parse_fractional_second(cp, &fsec);
            if (rc)
                return rc;
        } else if (*cp != '\0') {
            return DTERR_BAD_FORMAT;
        }
    } else {
        return DTERR_BAD_FORMAT;
    }
    if (hour < 0 || hour > INT_MAX || min < 0 || min > 59 || sec < 0 || sec > 60 || fsec < 0 ||
        fsec > USECS_PER_SEC)
        return DTERR_FIELD_OVERFLOW;
    tm->hour = (int)hour;
    tm->min = min;
    tm->sec = sec;
    tm->fsec = fsec;
    return 0;
}

static bool time_overflows(const DtTm *tm)
{
    if (tm->hour < 0 || tm->min < 0 || tm->min > 59 || tm->sec < 0 || tm->sec > 60 ||
        tm->fsec < 0 || tm->fsec > USECS_PER_SEC)
        return true;
    int64_t t = (((int64_t)tm->hour * 60 + tm->min) * 60 + tm->sec) * USECS_PER_SEC + tm->fsec;
    return t > USECS_PER_DAY;
}

static int validate_date(int fmask, bool is2digits, bool bc, int yday, DtTm *tm)
{
    if (fmask & DTK_M(YEAR)) {
        if (bc) {
            if (tm->year <= 0)
                return DTERR_FIELD_OVERFLOW;
            tm->year = -(tm->year - 1);
        } else if (is2digits) {
            if (tm->year < 0)
                return DTERR_FIELD_OVERFLOW;
            if (tm->year < 70)
                tm->year += 2000;
            else if (tm->year < 100)
                tm->year += 1900;
        } else if (tm->year <= 0) {
            return DTERR_FIELD_OVERFLOW;
        }
    }
    if (fmask & DTK_M(DOY)) {
        if (dt_valid_julian(tm->year, 1, 1)) {
            dt_j2date(dt_date2j(tm->year, 1, 1) + yday - 1, &tm->year, &tm->mon, &tm->mday);
        } else {
            /* out of the calendar: the caller's range check refuses it */
            tm->mon = 1;
            tm->mday = 1;
        }
    }
    if ((fmask & DTK_M(MONTH)) && (tm->mon < 1 || tm->mon > MONTHS_PER_YEAR))
        return DTERR_MD_FIELD_OVERFLOW;
    if ((fmask & DTK_M(DAY)) && (tm->mday < 1 || tm->mday > 31))
        return DTERR_MD_FIELD_OVERFLOW;
    if ((fmask & DTK_DATE_M) == DTK_DATE_M && tm->mday > dt_days_in_month(tm->year, tm->mon))
        return DTERR_FIELD_OVERFLOW;
    return 0;
}

/* The result kinds of decode_datetime. */
enum { DT_DATE, DT_EARLY, DT_LATE, DT_EPOCH };

/* DecodeDateTime.  *east gets the zone's offset (seconds east of UTC) and
 * *have_tz whether the input named one. */
static int decode_datetime(Fields *f, int *dtype, DtTm *tm, int *east, bool *have_tz,
                           const char **badzone)
{
    const DtTz *named = NULL;
    int fmask = 0, tmask, type, val;
    int ptype = 0, mer = HR24, yday = 0;
    bool is2digits = false, bc = false, text_month = false;
    *dtype = DT_DATE;
    *east = 0;
    *have_tz = false;
    memset(tm, 0, sizeof(*tm));
    for (int i = 0; i < f->nf; i++) {
        char *field = f->field[i];
        tmask = 0;
        switch (f->ftype[i]) {
        case F_DATE:
            if ((fmask & DTK_DATE_M) == DTK_DATE_M || ptype != 0) {
                if (isdigit((unsigned char)*field) || ptype != 0) {
                    if ((fmask & DTK_TIME_M) == DTK_TIME_M)
                        return DTERR_BAD_FORMAT;
                    char *cp = strchr(field, '-');
                    if (cp == NULL)
                        return DTERR_BAD_FORMAT;
                    int rc = decode_timezone(cp, east);
                    if (rc)
                        return rc;
                    *have_tz = true;
                    *cp = '\0';
                    rc = decode_number_field((int)strlen(field), field, fmask, &tmask, tm,
                                             &is2digits);
                    if (rc < 0)
                        return rc;
                    tmask |= DTK_M(TZ);
                    ptype = 0;
                } else {
                    named = dt_tz_find(field, strlen(field));
                    if (named == NULL) {
                        *badzone = field;
                        return DTERR_BAD_ZONE;
                    }
                    tmask = DTK_M(TZ);
                }
            } else {
                int rc = decode_date(field, fmask, &tmask, &is2digits, tm, &yday);
                if (rc)
                    return rc;
            }
            break;
        case F_TIME:
            ptype = 0;
            {
                int rc = decode_time(field, &tmask, tm);
                if (rc)
                    return rc;
            }
            if (time_overflows(tm))
                return DTERR_FIELD_OVERFLOW;
            break;
        case F_TZ: {
            int rc = decode_timezone(field, east);
            if (rc)
                return rc;
            *have_tz = true;
            tmask = DTK_M(TZ);
            break;
        }
        case F_NUMBER: {
            int flen = (int)strlen(field);
            char *cp = strchr(field, '.');
            int rc;
            if (ptype != 0) {
                /* the field after "t": hhmmss[.fff] */
                ptype = 0;
                rc = decode_number_field(flen, field, fmask, &tmask, tm, &is2digits);
                if (rc < 0)
                    return rc;
            } else if (cp != NULL && !(fmask & DTK_DATE_M)) {
                rc = decode_date(field, fmask, &tmask, &is2digits, tm, &yday);
                if (rc)
                    return rc;
            } else if (cp != NULL && flen - (int)strlen(cp) > 2) {
                rc = decode_number_field(flen, field, fmask, &tmask, tm, &is2digits);
                if (rc < 0)
                    return rc;
            } else if (flen >= 6 && (!(fmask & DTK_DATE_M) || !(fmask & DTK_TIME_M))) {
                rc = decode_number_field(flen, field, fmask, &tmask, tm, &is2digits);
                if (rc < 0)
                    return rc;
            } else {
                rc = decode_number(flen, field, text_month, fmask, &tmask, tm, &yday,
                                   &is2digits);
                if (rc)
                    return rc;
            }
            break;
        }
        case F_STRING:
        case F_SPECIAL: {
            int tz;
            if (decode_tz_abbrev(field, &tz)) {
                *east = tz;
                *have_tz = true;
                tmask = DTK_M(TZ);
                break;
            }
            type = decode_special(field, &val);
            if (type == IGNORE_DTF)
                continue;
            if (type == UNKNOWN_FIELD) {
                /* an all-alphabetic zone name ("Japan", "UTC") */
                named = dt_tz_find(field, strlen(field));
                if (named == NULL)
                    return DTERR_BAD_FORMAT;
                tmask = DTK_M(TZ);
                break;
            }
            tmask = DTK_M(type);
            switch (type) {
            case RESERV:
                switch (val) {
                case R_NOW: {
                    tmask = DTK_DATE_M | DTK_TIME_M | DTK_M(TZ);
                    *dtype = DT_DATE;
                    if (dt_ts2tm(dt_now(), tm) < 0)
                        return DTERR_FIELD_OVERFLOW;
                    *east = 0;
                    *have_tz = true;
                    break;
                }
                case R_YESTERDAY:
                case R_TODAY:
                case R_TOMORROW: {
                    DtTm cur;
                    tmask = DTK_DATE_M;
                    *dtype = DT_DATE;
                    if (dt_ts2tm(dt_now(), &cur) < 0)
                        return DTERR_FIELD_OVERFLOW;
                    int delta = val == R_YESTERDAY ? -1 : val == R_TOMORROW ? 1 : 0;
                    dt_j2date(dt_date2j(cur.year, cur.mon, cur.mday) + delta, &tm->year,
                              &tm->mon, &tm->mday);
                    break;
                }
                case R_ZULU:
                    tmask = DTK_TIME_M | DTK_M(TZ);
                    *dtype = DT_DATE;
                    tm->hour = tm->min = tm->sec = 0;
                    tm->fsec = 0;
                    *east = 0;
                    *have_tz = true;
                    break;
                case R_EARLY:
                    *dtype = DT_EARLY;
                    break;
                case R_LATE:
                    *dtype = DT_LATE;
                    break;
                case R_EPOCH:
                    *dtype = DT_EPOCH;
                    break;
                }
                break;
            case MONTH:
                if ((fmask & DTK_M(MONTH)) && !text_month && !(fmask & DTK_M(DAY)) &&
                    tm->mon >= 1 && tm->mon <= 31) {
                    tm->mday = tm->mon;
                    tmask = DTK_M(DAY);
                }
                text_month = true;
                tm->mon = val;
                break;
            case AMPM:
                mer = val;
                break;
            case ADBC:
                bc = val == 1;
                break;
            case DOW:
                break;
            case ISOTIME:
                tmask = 0;
                if ((fmask & DTK_DATE_M) != DTK_DATE_M)
                    return DTERR_BAD_FORMAT;
                if (i >= f->nf - 1 || (f->ftype[i + 1] != F_NUMBER &&
                                       f->ftype[i + 1] != F_TIME && f->ftype[i + 1] != F_DATE))
                    return DTERR_BAD_FORMAT;
                ptype = 1;
                break;
            default:
                return DTERR_BAD_FORMAT;
            }
            break;
        }
        default:
            return DTERR_BAD_FORMAT;
        }
        if (tmask & fmask)
            return DTERR_BAD_FORMAT;
        fmask |= tmask;
    }
    int rc = validate_date(fmask, is2digits, bc, yday, tm);
    if (rc)
        return rc;
    if (mer != HR24 && tm->hour > 12)
        return DTERR_FIELD_OVERFLOW;
    if (mer == AM && tm->hour == 12)
        tm->hour = 0;
    else if (mer == PM && tm->hour != 12)
        tm->hour += 12;
    if (*dtype == DT_DATE && (fmask & DTK_DATE_M) != DTK_DATE_M)
        return DTERR_BAD_FORMAT;
    if (*dtype == DT_DATE && named != NULL) {
        /* a named zone's offset depends on the local time it qualifies */
        int64_t local;
        *east = dt_tm2ts(tm, &local) < 0 ? 0 : dt_tz_local_offset(named, local);
        *have_tz = true;
    }
    return 0;
}

/* ----------------------------------------------------------------- input */

static int parse_error(int rc, const char *tname, const char *s, size_t len, const char *zone,
                       int loc, SlError *err)
{
    int n = (int)SL_MIN(len, 1000);
    switch (rc) {
    case DTERR_FIELD_OVERFLOW:
        return sl_error_at(err, ERRCODE_DATETIME_VALUE_OUT_OF_RANGE, loc,
                           "date/time field value out of range: \"%.*s\"", n, s);
    case DTERR_MD_FIELD_OVERFLOW:
        sl_error_at(err, ERRCODE_DATETIME_VALUE_OUT_OF_RANGE, loc,
                    "date/time field value out of range: \"%.*s\"", n, s);
        sl_error_hint(err, "Perhaps you need a different \"datestyle\" setting.");
        return -1;
    case DTERR_TZDISP_OVERFLOW:
        return sl_error_at(err, ERRCODE_INVALID_TIME_ZONE_DISPLACEMENT_VALUE, loc,
                           "time zone displacement out of range: \"%.*s\"", n, s);
    case DTERR_BAD_ZONE:
        return sl_error_at(err, ERRCODE_INVALID_PARAMETER_VALUE, loc,
                           "time zone \"%s\" not recognized", zone);
    default:
        return sl_error_at(err, ERRCODE_INVALID_DATETIME_FORMAT, loc,
                           "invalid input syntax for type %s: \"%.*s\"", tname, n, s);
    }
}

/* Parses s into fields and decodes them; returns 0 or a DTERR_* code. */
static int decode_input(const char *s, size_t len, Fields *f, int *dtype, DtTm *tm, int *east,
                        bool *have_tz, const char **zone)
{
    char str[MAXDATELEN + 1];
    if (len > MAXDATELEN || memchr(s, '\0', len) != NULL)
        return DTERR_BAD_FORMAT;
    memcpy(str, s, len);
    str[len] = '\0';
    int rc = parse_fields(str, f);
    if (rc)
        return rc;
    return decode_datetime(f, dtype, tm, east, have_tz, zone);
}

int dt_parse_date(const char *s, size_t len, int32_t *out, int loc, SlError *err)
{
    Fields f;
    DtTm tm;
    int dtype, east;
    bool have_tz;
    const char *zone = NULL;
    int rc = decode_input(s, len, &f, &dtype, &tm, &east, &have_tz, &zone);
    if (rc)
        return parse_error(rc, "date", s, len, zone, loc, err);
    switch (dtype) {
    case DT_EARLY:
        *out = DATE_NOBEGIN;
        return 0;
    case DT_LATE:
        *out = DATE_NOEND;
        return 0;
    case DT_EPOCH:
        tm.year = 1970;
        tm.mon = 1;
        tm.mday = 1;
        break;
    default:
        break;
    }
    int64_t d = 0;
    if (dt_valid_julian(tm.year, tm.mon, tm.mday))
        d = (int64_t)dt_date2j(tm.year, tm.mon, tm.mday) - POSTGRES_EPOCH_JDATE;
    if (!dt_valid_julian(tm.year, tm.mon, tm.mday) || !dt_date_valid(d))
        return sl_error_at(err, ERRCODE_DATETIME_VALUE_OUT_OF_RANGE, loc,
                           "date out of range: \"%.*s\"", (int)SL_MIN(len, 1000), s);
    *out = (int32_t)d;
    return 0;
}

/* The digits s[0, n) as a number, or -1 if one is not a digit. */
static int fast_num(const char *s, int n)
{
    int v = 0;
    for (int k = 0; k < n; k++) {
        if (s[k] < '0' || s[k] > '9')
            return -1;
        v = v * 10 + (s[k] - '0');
    }
    return v;
}

/* The common ISO form "YYYY-MM-DD HH:MM:SS[.f]" (or a 'T' between date and
 * time; 1 to 6 fraction digits; no zone, no spaces around), with every
 * field in range, straight into tm; false for anything else, which the
 * full parser (PostgreSQL's DecodeDateTime) then reads. */
static bool parse_iso_fast(const char *s, size_t len, DtTm *tm)
{
    if (len < 19 || len > 26 || s[4] != '-' || s[7] != '-' || (s[10] != ' ' && s[10] != 'T') ||
        s[13] != ':' || s[16] != ':' || (len > 19 && (s[19] != '.' || len == 20)))
        return false;
    int y = fast_num(s, 4), mo = fast_num(s + 5, 2), d = fast_num(s + 8, 2);
    int h = fast_num(s + 11, 2), mi = fast_num(s + 14, 2), sec = fast_num(s + 17, 2);
    if (y < 1 || mo < 1 || mo > 12 || d < 1 || d > dt_days_in_month(y, mo) || h < 0 ||
        h > 23 || mi < 0 || mi > 59 || sec < 0 || sec > 59)
        return false;
    int64_t fsec = 0;
    if (len > 19) {
        int nf = (int)len - 20, f = fast_num(s + 20, nf);
        if (f < 0)
            return false;
        fsec = f;
        for (int k = nf; k < 6; k++)
            fsec *= 10;
    }
    *tm = (DtTm){.year = y, .mon = mo, .mday = d, .hour = h, .min = mi, .sec = sec,
                 .fsec = fsec};
    return true;
}

bool dt_parse_iso_fast(const char *s, size_t len, int64_t *out)
{
    DtTm tm;
    if (!parse_iso_fast(s, len, &tm))
        return false;
    int64_t days = dt_date2j(tm.year, tm.mon, tm.mday) - POSTGRES_EPOCH_JDATE;
    *out = days * USECS_PER_DAY +
           (int64_t)((tm.hour * 60 + tm.min) * 60 + tm.sec) * USECS_PER_SEC + tm.fsec;
    return true;
}

int dt_parse_timestamp(const char *s, size_t len, bool with_tz, int64_t *out, int loc,
                       SlError *err)
{
    Fields f;
    DtTm tm;
    int dtype = DT_DATE, east = 0;
    bool have_tz = false;
    const char *zone = NULL;
    const char *tname = with_tz ? "timestamp with time zone" : "timestamp";
    if (!parse_iso_fast(s, len, &tm)) {
        int rc = decode_input(s, len, &f, &dtype, &tm, &east, &have_tz, &zone);
        if (rc)
            return parse_error(rc, tname, s, len, zone, loc, err);
    }
    switch (dtype) {
    case DT_EARLY:
        *out = DT_NOBEGIN;
        return 0;
    case DT_LATE:
        *out = DT_NOEND;
        return 0;
    case DT_EPOCH:
        *out = -(int64_t)(POSTGRES_EPOCH_JDATE - UNIX_EPOCH_JDATE) * USECS_PER_DAY;
        return 0;
    default:
        break;
    }
    int64_t ts;
    if (dt_tm2ts(&tm, &ts) < 0)
        goto range;
    /* No zone in the input: a local time in the session's time zone. */
    if (with_tz && !have_tz)
        east = dt_session_local_offset(ts);
    if (with_tz && east != 0) {
        ts -= (int64_t)east * USECS_PER_SEC;
        if (!dt_ts_valid(ts))
            goto range;
    }
    *out = ts;
    return 0;
range:
    return sl_error_at(err, ERRCODE_DATETIME_VALUE_OUT_OF_RANGE, loc,
                       "timestamp out of range: \"%.*s\"", (int)SL_MIN(len, 1000), s);
}

/* The session's time zone (settings.h): UTC outside a session. */
int32_t dt_session_utc_offset(int64_t utc_usec)
{
    const DtTz *tz = settings_current_tz();
    return tz != NULL && dt_ts_finite(utc_usec) ? dt_tz_utc_offset(tz, utc_usec) : 0;
}

int32_t dt_session_local_offset(int64_t local_usec)
{
    const DtTz *tz = settings_current_tz();
    return tz != NULL && dt_ts_finite(local_usec) ? dt_tz_local_offset(tz, local_usec) : 0;
}

/* ----------------------------------------------------------------- output */

/* v (0 <= v < 10^width) in width digits with leading zeros, into p. */
static char *put_digits(char *p, unsigned v, int width)
{
    for (int k = width - 1; k >= 0; k--) {
        p[k] = (char)('0' + v % 10);
        v /= 10;
    }
    return p + width;
}

static void put_seconds(StrBuf *out, int sec, int64_t fsec)
{
    char buf[16], *p = put_digits(buf, (unsigned)(sec < 0 ? -sec : sec), 2);
    if (sec < 0 || sec > 99) {
        strbuf_printf(out, "%02d", sec);
        p = buf;
    }
    if (fsec != 0) {
        int64_t f = fsec < 0 ? -fsec : fsec;
        if (f < 1000000) {
            *p++ = '.';
            char *d = p;
            p = put_digits(p, (unsigned)f, 6);
            while (p > d && p[-1] == '0')
                p--;
        } else {
            char f6[24];
            snprintf(f6, sizeof(f6), "%06lld", (long long)f);
            int n = 6;
            while (n > 0 && f6[n - 1] == '0')
                n--;
            strbuf_append(out, buf, (size_t)(p - buf));
            strbuf_printf(out, ".%.*s", n, f6);
            return;
        }
    }
    strbuf_append(out, buf, (size_t)(p - buf));
}

void dt_format_date(int32_t d, StrBuf *out)
{
    if (d == DATE_NOBEGIN) {
        strbuf_puts(out, "-infinity");
        return;
    }
    if (d == DATE_NOEND) {
        strbuf_puts(out, "infinity");
        return;
    }
    int y, m, day;
    dt_j2date(d + POSTGRES_EPOCH_JDATE, &y, &m, &day);
    strbuf_printf(out, "%04d-%02d-%02d%s", y > 0 ? y : -(y - 1), m, day, y > 0 ? "" : " BC");
}

void dt_format_timestamp(int64_t ts, bool with_tz, StrBuf *out)
{
    if (ts == DT_NOBEGIN) {
        strbuf_puts(out, "-infinity");
        return;
    }
    if (ts == DT_NOEND) {
        strbuf_puts(out, "infinity");
        return;
    }
    DtTm tm;
    int32_t off = with_tz ? dt_session_utc_offset(ts) : 0;
    if (dt_ts2tm(ts + (int64_t)off * USECS_PER_SEC, &tm) < 0) {
        strbuf_puts(out, "(timestamp out of range)");
        return;
    }
    int year = tm.year > 0 ? tm.year : -(tm.year - 1);
    if (year <= 9999) {
        /* "%04d-%02d-%02d %02d:%02d:" without printf: the common case */
        char buf[20], *p = buf;
        p = put_digits(p, (unsigned)year, 4);
        *p++ = '-';
        p = put_digits(p, (unsigned)tm.mon, 2);
        *p++ = '-';
        p = put_digits(p, (unsigned)tm.mday, 2);
        *p++ = ' ';
        p = put_digits(p, (unsigned)tm.hour, 2);
        *p++ = ':';
        p = put_digits(p, (unsigned)tm.min, 2);
        *p++ = ':';
        strbuf_append(out, buf, (size_t)(p - buf));
    } else {
        strbuf_printf(out, "%04d-%02d-%02d %02d:%02d:", year, tm.mon, tm.mday, tm.hour, tm.min);
    }
    put_seconds(out, tm.sec, tm.fsec);
    if (with_tz) {
        /* EncodeTimezone: +hh, +hh:mm or +hh:mm:ss */
        int a = off < 0 ? -off : off;
        strbuf_printf(out, "%c%02d", off < 0 ? '-' : '+', a / 3600);
        if (a % 3600 != 0)
            strbuf_printf(out, ":%02d", a / 60 % 60);
        if (a % 60 != 0)
            strbuf_printf(out, ":%02d", a % 60);
    }
    if (tm.year <= 0)
        strbuf_puts(out, " BC");
}

/* EncodeInterval, IntervalStyle "postgres". */
static void add_part(StrBuf *out, int value, const char *units, bool *is_zero, bool *is_before)
{
    if (value == 0)
        return;
    strbuf_printf(out, "%s%s%d %s%s", *is_zero ? "" : " ", (*is_before && value > 0) ? "+" : "",
                  value, units, value != 1 ? "s" : "");
    *is_before = value < 0;
    *is_zero = false;
}

void dt_format_interval(const SlInterval *iv, StrBuf *out)
{
    int year = iv->months / MONTHS_PER_YEAR, mon = iv->months % MONTHS_PER_YEAR;
    int64_t time = iv->usec;
    int64_t hour = time / USECS_PER_HOUR;
    time -= hour * USECS_PER_HOUR;
    int min = (int)(time / USECS_PER_MINUTE);
    time -= (int64_t)min * USECS_PER_MINUTE;
    int sec = (int)(time / USECS_PER_SEC);
    int64_t fsec = time - (int64_t)sec * USECS_PER_SEC;
    bool is_zero = true, is_before = false;
    add_part(out, year, "year", &is_zero, &is_before);
    add_part(out, mon, "mon", &is_zero, &is_before);
    add_part(out, iv->days, "day", &is_zero, &is_before);
    if (is_zero || hour != 0 || min != 0 || sec != 0 || fsec != 0) {
        bool minus = hour < 0 || min < 0 || sec < 0 || fsec < 0;
        strbuf_printf(out, "%s%s%02lld:%02d:", is_zero ? "" : " ",
                      minus ? "-" : (is_before ? "+" : ""),
                      (long long)(hour < 0 ? -(uint64_t)hour : (uint64_t)hour), abs(min));
        put_seconds(out, abs(sec), fsec);
    }
}
