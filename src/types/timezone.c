/*
 * timezone.c -- named time zones ('America/New_York') from the system's
 * IANA tz database (Debian's tzdata, /usr/share/zoneinfo), for timestamp
 * input with a zone name and for AT TIME ZONE.
 *
 *   dt_tz_find(name, len)             a zone by name, case-insensitively
 *   dt_tz_utc_offset(tz, utc)         its UTC offset at an instant
 *   dt_tz_local_offset(tz, local)     the offset of a local time
 *   dt_tz_name(tz)                    its name as the tz database spells it
 *
 * A zone is its TZif file's 64-bit transitions and local time types, plus
 * the POSIX TZ rule of the file's footer for instants after the last
 * transition.  A local time in a DST gap or overlap resolves as
 * PostgreSQL's DetermineTimeZoneOffset resolves it: the "before"
 * interpretation in a spring-forward gap, the "after" one in a fall-back
 * overlap.  Zones are loaded on first use and kept for the life of the
 * process (a mutex guards the cache).  The session's TimeZone (settings.c) is one of them,
 * or NULL for UTC.
 * The directory is $SLUICE_TZDIR, or /usr/share/zoneinfo.
 */
#include "types/datetime.h"

#include <ctype.h>
#include <dirent.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <strings.h>
#include <sys/stat.h>

#define SECS_PER_YEAR_APPROX 31556952

/* A POSIX TZ rule's date: Mm.w.d (month, week 1-5, weekday), Jn or n. */
typedef struct TzRuleDate {
    char kind;          /* 'M', 'J' or 'D' (n, zero-based day) */
    int  m, w, d;       /* M; J and D use d */
    int  secs;          /* local time of day of the change */
} TzRuleDate;

struct DtTz {
    char       *name;       /* lower-cased, the cache key */
    char       *display;    /* as the tz database spells it: "Europe/Berlin" */
    int         ntrans;
    int64_t    *trans;      /* UTC seconds since 1970 */
    uint8_t    *idx;        /* local time type after each transition */
    int         ntypes;
    int32_t    *utoff;      /* seconds east of UTC */
    int32_t     first_off;  /* before the first transition */
    /* the footer rule */
    bool        has_rule, rule_dst;
    int32_t     std_off, dst_off;   /* seconds east */
    TzRuleDate  start, end;
};

static pthread_mutex_t tz_lock = PTHREAD_MUTEX_INITIALIZER;
static DtTz **tz_cache;
static int tz_ncache, tz_capcache;

static const char *tz_dir(void)
{
    const char *d = getenv("SLUICE_TZDIR");
    return d && *d ? d : "/usr/share/zoneinfo";
}

static int64_t be(const unsigned char *p, int n)
{
    uint64_t v = 0;
    for (int i = 0; i < n; i++)
        v = v << 8 | p[i];
    if (n == 4)
        return (int32_t)(uint32_t)v;
    return (int64_t)v;
}

/* ------------------------------------------------------------ POSIX rules */

static const char *rule_name(const char *p)
{
    if (*p == '<') {
        while (*p && *p != '>')
            p++;
        return *p ? p + 1 : p;
    }
    while (isalpha((unsigned char)*p))
        p++;
    return p;
}

/* [+-]hh[:mm[:ss]] as seconds (POSIX: positive is west) */
static const char *rule_offset(const char *p, int32_t *secs)
{
    int sign = 1;
    if (*p == '+' || *p == '-')
        sign = *p++ == '-' ? -1 : 1;
    if (!isdigit((unsigned char)*p))
        return NULL;
    int h = 0, m = 0, s = 0;
    while (isdigit((unsigned char)*p))
        h = h * 10 + (*p++ - '0');
    if (*p == ':') {
        p++;
        while (isdigit((unsigned char)*p))
            m = m * 10 + (*p++ - '0');
        if (*p == ':') {
            p++;
            while (isdigit((unsigned char)*p))
                s = s * 10 + (*p++ - '0');
        }
    }
    *secs = sign * (h * 3600 + m * 60 + s);
    return p;
}

static const char *rule_date(const char *p, TzRuleDate *d)
{
    d->secs = 7200;
    if (*p == 'M') {
        d->kind = 'M';
        p++;
        d->m = atoi(p);
        while (isdigit((unsigned char)*p))
            p++;
        if (*p++ != '.')
            return NULL;
        d->w = atoi(p);
        while (isdigit((unsigned char)*p))
            p++;
        if (*p++ != '.')
            return NULL;
        d->d = atoi(p);
        while (isdigit((unsigned char)*p))
            p++;
    } else if (*p == 'J') {
        d->kind = 'J';
        d->d = atoi(++p);
        while (isdigit((unsigned char)*p))
            p++;
    } else if (isdigit((unsigned char)*p)) {
        d->kind = 'D';
        d->d = atoi(p);
        while (isdigit((unsigned char)*p))
            p++;
    } else {
        return NULL;
    }
    if (*p == '/') {
        int32_t t;
        if ((p = rule_offset(p + 1, &t)) == NULL)
            return NULL;
        d->secs = t;
    }
    return p;
}

static void parse_rule(DtTz *tz, const char *s)
{
    const char *p = rule_name(s);
    int32_t off;
    if (p == s || (p = rule_offset(p, &off)) == NULL)
        return;
    tz->std_off = -off;
    tz->has_rule = true;
    if (*p == '\0')
        return;
    const char *q = rule_name(p);
    if (q == p)
        return;
    p = q;
    tz->dst_off = tz->std_off + 3600;
    if (*p != ',' && *p != '\0') {
        if ((p = rule_offset(p, &off)) == NULL)
            return;
        tz->dst_off = -off;
    }
    if (*p != ',' || (p = rule_date(p + 1, &tz->start)) == NULL || *p != ',' ||
        (p = rule_date(p + 1, &tz->end)) == NULL)
        return;
    tz->rule_dst = true;
}

/* The UTC second (since 1970) of a rule date in a year, given the offset
 * in force before the change. */
static int64_t rule_instant(int year, const TzRuleDate *d, int32_t off_before)
{
    int64_t day;    /* days since 1970 */
    int jan1 = dt_date2j(year, 1, 1) - UNIX_EPOCH_JDATE;
    if (d->kind == 'M') {
        int first = dt_date2j(year, d->m, 1);
        int wd = dt_j2day(first);
        int mday = 1 + (d->d - wd + 7) % 7 + (d->w - 1) * 7;
        int dim = dt_days_in_month(year, d->m);
        while (mday > dim)
            mday -= 7;
        day = dt_date2j(year, d->m, mday) - UNIX_EPOCH_JDATE;
    } else if (d->kind == 'J') {
        bool leap = dt_days_in_month(year, 2) == 29;
        day = jan1 + d->d - 1 + (leap && d->d >= 60 ? 1 : 0);
    } else {
        day = jan1 + d->d;
    }
    return day * SECS_PER_DAY + d->secs - off_before;
}

/* ------------------------------------------------------------------ loading */

static DtTz *load_file(const char *path, const char *name)
{
    FILE *f = fopen(path, "rb");
    if (f == NULL)
        return NULL;
    unsigned char *buf = NULL;
    size_t len = 0, cap = 0, n;
    do {
        if (len == cap) {
            cap = cap ? cap * 2 : 8192;
            if (cap > (1u << 20)) {
                sl_free(buf);
                fclose(f);
                return NULL;
            }
            buf = sl_realloc(buf, cap);
        }
        n = fread(buf + len, 1, cap - len, f);
        len += n;
    } while (n > 0);
    fclose(f);
    DtTz *tz = NULL;
    if (len < 44 || memcmp(buf, "TZif", 4) != 0)
        goto done;
    /* skip the version 1 block to the 64-bit one */
    const unsigned char *h = buf;
    int64_t cnt[6];
    for (int k = 0; k < 6; k++)
        cnt[k] = be(h + 20 + 4 * k, 4);
    size_t v1 = 44 + (size_t)(cnt[3] * 5 + cnt[4] * 6 + cnt[5] + cnt[2] * 8 + cnt[1] + cnt[0]);
    if (buf[4] < '2' || v1 + 44 > len)
        goto done;
    h = buf + v1;
    if (memcmp(h, "TZif", 4) != 0)
        goto done;
    for (int k = 0; k < 6; k++)
        cnt[k] = be(h + 20 + 4 * k, 4);
    int64_t isutc = cnt[0], isstd = cnt[1], leap = cnt[2], timecnt = cnt[3], typecnt = cnt[4],
            charcnt = cnt[5];
    if (timecnt < 0 || typecnt <= 0 || typecnt > 256 || timecnt > 100000)
        goto done;
    const unsigned char *p = h + 44;
    size_t need = (size_t)(timecnt * 9 + typecnt * 6 + charcnt + leap * 12 + isstd + isutc);
    if ((size_t)(p - buf) + need > len)
        goto done;
    tz = sl_calloc(1, sizeof(DtTz));
    tz->name = sl_strdup(name);
    tz->ntrans = (int)timecnt;
    tz->trans = sl_malloc(sizeof(int64_t) * (size_t)(timecnt + 1));
    tz->idx = sl_malloc((size_t)timecnt + 1);
    for (int64_t k = 0; k < timecnt; k++)
        tz->trans[k] = be(p + 8 * k, 8);
    p += 8 * timecnt;
    for (int64_t k = 0; k < timecnt; k++)
        tz->idx[k] = p[k] < typecnt ? p[k] : 0;
    p += timecnt;
    tz->ntypes = (int)typecnt;
    tz->utoff = sl_malloc(sizeof(int32_t) * (size_t)typecnt);
    for (int64_t k = 0; k < typecnt; k++)
        tz->utoff[k] = (int32_t)be(p + 6 * k, 4);
    tz->first_off = tz->utoff[0];   /* type 0 holds before the first transition */
    p += 6 * typecnt + charcnt + leap * 12 + isstd + isutc;
    /* the footer: \n rule \n */
    if ((size_t)(p - buf) < len && *p == '\n') {
        const unsigned char *e = memchr(p + 1, '\n', len - (size_t)(p - buf) - 1);
        if (e != NULL && e - p - 1 < 128) {
            char rule[128];
            memcpy(rule, p + 1, (size_t)(e - p - 1));
            rule[e - p - 1] = '\0';
            parse_rule(tz, rule);
        }
    }
done:
    sl_free(buf);
    return tz;
}

/* Finds a file under dir whose path matches name without regard to case
 * (PostgreSQL's zone names are case-insensitive); writes it to out. */
static bool find_ci(const char *dir, const char *name, char *out, size_t size)
{
    const char *slash = strchr(name, '/');
    size_t part = slash ? (size_t)(slash - name) : strlen(name);
    DIR *d = opendir(dir);
    if (d == NULL)
        return false;
    struct dirent *ent;
    bool found = false;
    while (!found && (ent = readdir(d)) != NULL) {
        if (ent->d_name[0] == '.' || strlen(ent->d_name) != part ||
            strncasecmp(ent->d_name, name, part) != 0)
            continue;
        char path[512];
        snprintf(path, sizeof(path), "%s/%s", dir, ent->d_name);
        if (slash != NULL) {
            found = find_ci(path, slash + 1, out, size);
        } else {
            struct stat st;
            if (stat(path, &st) == 0 && S_ISREG(st.st_mode)) {
                snprintf(out, size, "%s", path);
                found = true;
            }
        }
    }
    closedir(d);
    return found;
}

const DtTz *dt_tz_find(const char *name, size_t len)
{
    char key[128];
    if (len == 0 || len >= sizeof(key))
        return NULL;
    for (size_t k = 0; k < len; k++) {
        char c = name[k];
        /* a path, not a way out of the directory */
        if (c == '\0' || (c == '.' && k + 1 < len && name[k + 1] == '.') ||
            !(isalnum((unsigned char)c) || c == '/' || c == '_' || c == '-' || c == '+' ||
              c == '.'))
            return NULL;
        key[k] = (char)tolower((unsigned char)c);
    }
    key[len] = '\0';
    if (key[0] == '/' || key[len - 1] == '/')
        return NULL;
    pthread_mutex_lock(&tz_lock);
    DtTz *tz = NULL;
    for (int k = 0; k < tz_ncache; k++) {
        if (strcmp(tz_cache[k]->name, key) == 0) {
            tz = tz_cache[k];
            break;
        }
    }
    if (tz == NULL) {
        char path[512];
        if (find_ci(tz_dir(), key, path, sizeof(path)))
            tz = load_file(path, key);
        if (tz != NULL) {
            tz->display = sl_strdup(path + strlen(tz_dir()) + 1);
            if (tz_ncache == tz_capcache) {
                tz_capcache = tz_capcache ? tz_capcache * 2 : 16;
                tz_cache = sl_realloc(tz_cache, sizeof(DtTz *) * (size_t)tz_capcache);
            }
            tz_cache[tz_ncache++] = tz;
        }
    }
    pthread_mutex_unlock(&tz_lock);
    return tz;
}

/* ------------------------------------------------------------------ offsets */

/* The offset (seconds east) in force at UTC second t, and the next change
 * after t (INT64_MAX if none known) with the offset after it. */
static int32_t offset_at(const DtTz *tz, int64_t t, int64_t *next, int32_t *next_off)
{
    *next = INT64_MAX;
    *next_off = 0;
    if (tz->ntrans == 0 || t >= tz->trans[tz->ntrans - 1]) {
        int32_t base = tz->ntrans ? tz->utoff[tz->idx[tz->ntrans - 1]] : tz->first_off;
        if (!tz->has_rule)
            return base;
        if (!tz->rule_dst)
            return tz->std_off;
        /* the rule's changes around t's year */
        int year = (int)(1970 + t / SECS_PER_YEAR_APPROX);
        int32_t cur = tz->std_off;
        int64_t best_prev = INT64_MIN;
        for (int y = year - 1; y <= year + 1; y++) {
            int64_t s = rule_instant(y, &tz->start, tz->std_off);
            int64_t e = rule_instant(y, &tz->end, tz->dst_off);
            int64_t chg[2] = {s, e};
            int32_t after[2] = {tz->dst_off, tz->std_off};
            for (int k = 0; k < 2; k++) {
                if (chg[k] <= t && chg[k] > best_prev) {
                    best_prev = chg[k];
                    cur = after[k];
                } else if (chg[k] > t && chg[k] < *next) {
                    *next = chg[k];
                    *next_off = after[k];
                }
            }
        }
        return cur;
    }
    if (t < tz->trans[0]) {
        *next = tz->trans[0];
        *next_off = tz->utoff[tz->idx[0]];
        return tz->first_off;
    }
    int lo = 0, hi = tz->ntrans - 1;    /* trans[lo] <= t < trans[hi] */
    while (hi - lo > 1) {
        int mid = (lo + hi) / 2;
        if (tz->trans[mid] <= t)
            lo = mid;
        else
            hi = mid;
    }
    *next = tz->trans[hi];
    *next_off = tz->utoff[tz->idx[hi]];
    return tz->utoff[tz->idx[lo]];
}

static int64_t floor_div(int64_t a, int64_t b)
{
    int64_t q = a / b;
    return (a % b != 0 && (a < 0) != (b < 0)) ? q - 1 : q;
}

int32_t dt_tz_utc_offset(const DtTz *tz, int64_t utc_usec)
{
    int64_t next;
    int32_t next_off;
    int64_t t = floor_div(utc_usec, USECS_PER_SEC) +
                (int64_t)(POSTGRES_EPOCH_JDATE - UNIX_EPOCH_JDATE) * SECS_PER_DAY;
    return offset_at(tz, t, &next, &next_off);
}

const char *dt_tz_name(const DtTz *tz)
{
    return tz->display;
}

int32_t dt_tz_local_offset(const DtTz *tz, int64_t local_usec)
{
    int64_t mytime = floor_div(local_usec, USECS_PER_SEC) +
                     (int64_t)(POSTGRES_EPOCH_JDATE - UNIX_EPOCH_JDATE) * SECS_PER_DAY;
    int64_t boundary;
    int32_t after;
    int32_t before = offset_at(tz, mytime - SECS_PER_DAY, &boundary, &after);
    if (boundary == INT64_MAX)
        return before;
    int64_t beforetime = mytime - before, aftertime = mytime - after;
    if (beforetime < boundary && aftertime < boundary)
        return before;
    if (beforetime >= boundary && aftertime >= boundary)
        return after;
    return beforetime > aftertime ? before : after;
}
