/*
 * datetime.h -- dates, timestamps and intervals: the calendar, text input
 * and output as PostgreSQL 15 does them (src/backend/utils/adt/datetime.c,
 * date.c, timestamp.c), for the floors from src/types/ up (not a public
 * header: functions, sql and connectors include it by its path).
 *
 *   dt_date2j, dt_j2date, dt_j2day, dt_ts2tm, dt_tm2ts     the calendar
 *   dt_parse_date, dt_parse_timestamp, dt_parse_interval   input functions
 *   dt_parse_iso_fast  the common timestamp form, without the full parser
 *   dt_format_date, dt_format_timestamp, dt_format_interval output functions
 *   dt_interval_adjust                                     interval typmods
 *   dt_decode_units                                        unit names
 *   dt_tz_find, dt_tz_utc_offset, dt_tz_local_offset       named zones
 *   dt_now                                                 the clock
 *
 * Values are PostgreSQL's: a date is days since 2000-01-01 (int32), a
 * timestamp microseconds since 2000-01-01 00:00 (int64; for timestamptz in
 * UTC), with INT32/INT64_MIN and _MAX for -infinity and infinity.
 * timestamptz values are read and printed in the session's TimeZone
 * (settings.h: UTC unless SET; dt_session_utc_offset), as PostgreSQL does.
 * Years in DtTm are astronomical: 0 is 1 BC.
 */
#ifndef SLUICE_TYPES_DATETIME_H
#define SLUICE_TYPES_DATETIME_H

#include "sluice/error.h"
#include "sluice/strbuf.h"
#include "sluice/types.h"

#define DT_NOBEGIN      INT64_MIN
#define DT_NOEND        INT64_MAX
#define DATE_NOBEGIN    INT32_MIN
#define DATE_NOEND      INT32_MAX

#define USECS_PER_SEC   INT64_C(1000000)
#define USECS_PER_MINUTE INT64_C(60000000)
#define USECS_PER_HOUR  INT64_C(3600000000)
#define USECS_PER_DAY   INT64_C(86400000000)
#define SECS_PER_DAY    86400
#define DAYS_PER_MONTH  30
#define MONTHS_PER_YEAR 12

#define POSTGRES_EPOCH_JDATE 2451545    /* date2j(2000, 1, 1) */
#define UNIX_EPOCH_JDATE     2440588    /* date2j(1970, 1, 1) */
#define DATETIME_MIN_JULIAN  0
#define DATE_END_JULIAN      2147483494 /* date2j(5874898, 1, 1) */
#define TIMESTAMP_END_JULIAN 109203528  /* date2j(294277, 1, 1) */
#define MIN_TIMESTAMP        INT64_C(-211813488000000000)
#define END_TIMESTAMP        INT64_C(9223371331200000000)

static inline bool dt_ts_finite(int64_t t) { return t != DT_NOBEGIN && t != DT_NOEND; }
static inline bool dt_date_finite(int32_t d) { return d != DATE_NOBEGIN && d != DATE_NOEND; }
static inline bool dt_ts_valid(int64_t t) { return t >= MIN_TIMESTAMP && t < END_TIMESTAMP; }
static inline bool dt_date_valid(int64_t d)
{
    return d >= (int64_t)DATETIME_MIN_JULIAN - POSTGRES_EPOCH_JDATE &&
           d < (int64_t)DATE_END_JULIAN - POSTGRES_EPOCH_JDATE;
}

/* A broken-down time (PostgreSQL's pg_tm plus fsec). */
typedef struct DtTm {
    int     year, mon, mday, hour, min, sec;
    int64_t fsec;       /* microseconds */
} DtTm;

int  dt_date2j(int y, int m, int d);
void dt_j2date(int jd, int *y, int *m, int *d);
int  dt_j2day(int jd);                      /* 0 = Sunday */
bool dt_valid_julian(int y, int m, int d);
int  dt_days_in_month(int y, int m);
int  dt_isoweek(int y, int m, int d);       /* date2isoweek */
int  dt_isoyear(int y, int m, int d);       /* date2isoyear */
int  dt_isoweek2j(int year, int week);      /* isoweek2j */
/* timestamp -> fields; -1 when out of the calendar's range. */
int  dt_ts2tm(int64_t ts, DtTm *tm);
/* fields -> timestamp; -1 when out of range. */
int  dt_tm2ts(const DtTm *tm, int64_t *ts);

/* Input functions.  s need not be NUL-terminated; errors are PostgreSQL's
 * (22007 invalid input syntax, 22008 out of range, ...) at position loc. */
int dt_parse_date(const char *s, size_t len, int32_t *out, int loc, SlError *err);
/* The common form "YYYY-MM-DD HH:MM:SS[.ffffff]" (or 'T' for the space),
 * every field in its ordinary range, as a timestamp without time zone;
 * false for any other input (BC, 24:00, zones, ...), which the full parser
 * (dt_parse_timestamp) reads.  The decoders' fast path. */
bool dt_parse_iso_fast(const char *s, size_t len, int64_t *out);
int dt_parse_timestamp(const char *s, size_t len, bool with_tz, int64_t *out, int loc,
                       SlError *err);
/* typmod: -1, or PostgreSQL's interval typmod (range << 16 | precision). */
int dt_parse_interval(const char *s, size_t len, int32_t typmod, SlInterval *out, int loc,
                      SlError *err);
/* AdjustIntervalForTypmod: truncates to the typmod's fields and precision. */
int dt_interval_adjust(SlInterval *iv, int32_t typmod, SlError *err);
/* The typmod's qualifier as format_type() prints it (" day to second"), or "". */
const char *dt_interval_typmod_text(int32_t typmod);

void dt_format_date(int32_t d, StrBuf *out);
void dt_format_timestamp(int64_t ts, bool with_tz, StrBuf *out);
void dt_format_interval(const SlInterval *iv, StrBuf *out);

/* Interval typmod range bits (PostgreSQL's INTERVAL_MASK). */
#define ITM_MONTH   (1 << 1)
#define ITM_YEAR    (1 << 2)
#define ITM_DAY     (1 << 3)
#define ITM_HOUR    (1 << 10)
#define ITM_MINUTE  (1 << 11)
#define ITM_SECOND  (1 << 12)
#define ITM_FULL_RANGE 0x7FFF
#define ITM_FULL_PRECISION 0xFFFF

/* Units for extract, date_part and date_trunc (PostgreSQL's DTK_*). */
typedef enum DtUnit {
    DU_UNKNOWN = 0,
    DU_MICROSEC, DU_MILLISEC, DU_SECOND, DU_MINUTE, DU_HOUR, DU_DAY, DU_WEEK,
    DU_MONTH, DU_QUARTER, DU_YEAR, DU_DECADE, DU_CENTURY, DU_MILLENNIUM,
    DU_TZ, DU_TZ_HOUR, DU_TZ_MINUTE,
    /* the "special" ones */
    DU_EPOCH, DU_DOW, DU_DOY, DU_ISODOW, DU_ISOYEAR, DU_JULIAN,
} DtUnit;

/* A unit name as extract/date_trunc read it (lower-cased here); sets
 * *special for epoch, dow, doy, isodow, isoyear, julian. */
DtUnit dt_decode_units(const char *s, size_t len, bool *special);

/* Named time zones from the system's tz database (timezone.c): found
 * without regard to case, loaded once.  Offsets are seconds east of UTC;
 * dt_tz_local_offset resolves a local time as PostgreSQL does. */
typedef struct DtTz DtTz;
const DtTz *dt_tz_find(const char *name, size_t len);
int32_t     dt_tz_utc_offset(const DtTz *tz, int64_t utc_usec);
int32_t     dt_tz_local_offset(const DtTz *tz, int64_t local_usec);
const char *dt_tz_name(const DtTz *tz);
/* The session TimeZone's offset (seconds east) at a UTC instant, and of a
 * local time (settings.h; UTC outside a session). */
int32_t     dt_session_utc_offset(int64_t utc_usec);
int32_t     dt_session_local_offset(int64_t local_usec);

/* The current time as a timestamp (microseconds since 2000-01-01 UTC). */
int64_t dt_now(void);

#endif /* SLUICE_TYPES_DATETIME_H */
