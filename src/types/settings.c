/*
 * settings.c -- a session's run-time parameters (see settings.h).
 *
 *   settings_new, settings_free, settings_set, settings_reset_all, settings_changes
 *   settings_parse_args, settings_get, settings_xact_value, settings_count, settings_nth,
 *   settings_info
 *   settings_xact_begin, settings_xact_end, settings_next_report
 *   settings_timeout_ms, settings_statement_mem, settings_log_min_duration_ms, settings_enter, settings_current,
 *   settings_current_tz, settings_current_float_digits
 *
 * One table lists the parameters sluice knows, with PostgreSQL's names,
 * defaults, descriptions and checks.  Each session keeps three texts per
 * parameter: the value in force, the session value (the value without SET
 * LOCAL), and what it was when the transaction block began (ROLLBACK goes
 * back to it), plus the value the client was last told for the reported
 * ones (PostgreSQL's GUC_REPORT set), so that the server sends a
 * ParameterStatus exactly when one changes.
 */
#include "sluice/settings.h"
#include "types/datetime.h"

#include <ctype.h>
#include <errno.h>
#include <stdarg.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <strings.h>

typedef enum SetKind {
    SK_STRING,      /* anything (application_name) */
    SK_LIST,        /* a comma-separated list (search_path) */
    SK_BOOL,
    SK_INT,
    SK_MS,          /* milliseconds, with units */
    SK_KB,          /* memory in kB, with units */
    SK_TIMEZONE,
    SK_DATESTYLE,
    SK_ENUM,        /* one of choices */
    SK_ENCODING,
    SK_READONLY,
    SK_XACT,        /* the transaction's mode: the server sets it (SET
                     * TRANSACTION, settings_set_fixed); one of choices */
} SetKind;

typedef struct SetDef {
    const char *name;       /* as PostgreSQL spells it */
    SetKind     kind;
    bool        report;     /* GUC_REPORT: a ParameterStatus on change */
    const char *def;        /* the default; NULL: the session user */
    int         min, max;   /* SK_INT, SK_MS, SK_KB */
    const char *choices;    /* SK_ENUM, SK_XACT: "a|b|c", in PostgreSQL's order
                             * (enum_supported: which sluice gives) */
    const char *description;
} SetDef;

/* Sorted by name, case-insensitively, as SHOW ALL lists them. */
static const SetDef defs[] = {
    {"application_name", SK_STRING, true, "", 0, 0, NULL,
     "Sets the application name to be reported in statistics and logs."},
    {"client_encoding", SK_ENCODING, true, "UTF8", 0, 0, NULL,
     "Sets the client's character set encoding."},
    {"DateStyle", SK_DATESTYLE, true, "ISO, MDY", 0, 0, NULL,
     "Sets the display format for date and time values."},
    {"default_transaction_isolation", SK_ENUM, false, "read committed", 0, 0,
     "serializable|repeatable read|read committed|read uncommitted",
     "Sets the transaction isolation level of each new transaction."},
    {"default_transaction_read_only", SK_READONLY, true, "off", 0, 0, NULL,
     "Sets the default read-only status of new transactions."},
    {"extra_float_digits", SK_INT, false, "1", -15, 3, NULL,
     "Sets the number of digits displayed for floating-point values."},
    {"idle_in_transaction_session_timeout", SK_MS, false, "0", 0, INT_MAX, NULL,
     "Sets the maximum allowed idle time between queries, when in a transaction."},
    {"idle_session_timeout", SK_MS, false, "0", 0, INT_MAX, NULL,
     "Sets the maximum allowed idle time between queries, when not in a transaction."},
    {"in_hot_standby", SK_READONLY, true, "off", 0, 0, NULL,
     "Shows whether hot standby is currently active."},
    {"integer_datetimes", SK_READONLY, true, "on", 0, 0, NULL,
     "Shows whether datetimes are integer based."},
    {"IntervalStyle", SK_ENUM, true, "postgres", 0, 0,
     "postgres|postgres_verbose|sql_standard|iso_8601",
     "Sets the display format for interval values."},
    {"is_superuser", SK_READONLY, true, "on", 0, 0, NULL,
     "Shows whether the current user is a superuser."},
    {"log_min_duration_statement", SK_MS, false, "-1", -1, INT_MAX, NULL,
     "Sets the minimum execution time above which all statements will be logged."},
    {"search_path", SK_LIST, false, "\"$user\", public", 0, 0, NULL,
     "Sets the schema search order for names that are not schema-qualified."},
    {"server_encoding", SK_READONLY, true, "UTF8", 0, 0, NULL,
     "Shows the server (database) character set encoding."},
    {"server_version", SK_READONLY, true, SL_SERVER_VERSION, 0, 0, NULL,
     "Shows the server version."},
    {"server_version_num", SK_READONLY, false, SL_SERVER_VERSION_NUM, 0, 0, NULL,
     "Shows the server version as an integer."},
    {"session_authorization", SK_READONLY, true, NULL, 0, 0, NULL,
     "Sets the session user name."},
    {"standard_conforming_strings", SK_BOOL, true, "on", 0, 0, NULL,
     "Causes '...' strings to treat backslashes literally."},
    {"statement_mem", SK_KB, false, "1GB", 1024, INT_MAX, NULL,
     "Sets the maximum memory one statement may hold (sluice; 53200 past it)."},
    {"statement_timeout", SK_MS, false, "0", 0, INT_MAX, NULL,
     "Sets the maximum allowed duration of any statement."},
    {"TimeZone", SK_TIMEZONE, true, "UTC", 0, 0, NULL,
     "Sets the time zone for displaying and interpreting time stamps."},
    {"transaction_isolation", SK_XACT, false, "read committed", 0, 0,
     "serializable|repeatable read|read committed|read uncommitted",
     "Sets the current transaction's isolation level."},
    {"transaction_read_only", SK_XACT, false, "off", 0, 0, "off|on",
     "Sets the current transaction's read-only status."},
};
#define NDEFS ((int)SL_ARRAY_LEN(defs))

typedef struct SetValue {
    char *value;        /* in force */
    char *session;      /* without SET LOCAL */
    char *reset;        /* what RESET returns to: the default or the startup value */
    char *saved;        /* the session value at BEGIN; NULL outside a block */
    char *told;         /* what the client was last told (reported ones) */
} SetValue;

struct SlSettings {
    SetValue         v[NDEFS];
    const DtTz      *tz;            /* TimeZone; NULL for UTC */
    int              float_digits;
    int              timeout[3];    /* SetTimeout order, ms */
    int              statement_mem; /* kB */
    int              log_min_duration;  /* ms; -1 off */
    bool             in_block;
    uint64_t         changes;       /* settings_set and RESET ALL so far */
};

static _Thread_local SlSettings *current;

/* A formatted string in malloc'd memory. */
static char *sl_printf(const char *fmt, ...) SL_PRINTF(1, 2);
static char *sl_printf(const char *fmt, ...)
{
    char buf[128];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(buf, sizeof(buf), fmt, ap);
    va_end(ap);
    return sl_strdup(buf);
}

/* ---------------------------------------------------------------------- */

static int find_def(const char *name)
{
    for (int i = 0; i < NDEFS; i++)
        if (strcasecmp(defs[i].name, name) == 0)
            return i;
    /* SET TIME ZONE */
    if (strcasecmp(name, "time") == 0)
        return find_def("TimeZone");
    return -1;
}

static int unknown(SlError *err, const char *name)
{
    return sl_error(err, ERRCODE_UNDEFINED_OBJECT, "unrecognized configuration parameter \"%s\"",
                    name);
}

static int invalid(SlError *err, const SetDef *d, const char *value)
{
    return sl_error(err, ERRCODE_INVALID_PARAMETER_VALUE,
                    "invalid value for parameter \"%s\": \"%s\"", d->name, value);
}

/* parse_bool: on/off, true/false, yes/no, 1/0 and their unambiguous
 * prefixes. */
static int parse_bool(const char *s, bool *out)
{
    size_t n = strlen(s);
    if (n == 0)
        return -1;
    static const struct { const char *w; bool v; size_t min; } words[] = {
        {"true", true, 1}, {"false", false, 1}, {"yes", true, 1}, {"no", false, 1},
        {"on", true, 2}, {"off", false, 2}, {"1", true, 1}, {"0", false, 1},
    };
    for (size_t i = 0; i < SL_ARRAY_LEN(words); i++) {
        if (n >= words[i].min && n <= strlen(words[i].w) &&
            strncasecmp(s, words[i].w, n) == 0) {
            *out = words[i].v;
            return 0;
        }
    }
    return -1;
}

typedef struct SetUnit { const char *u; double mult; } SetUnit;

static const SetUnit ms_units[] = {
    {"us", 0.001}, {"ms", 1}, {"s", 1000}, {"min", 60000}, {"h", 3600000}, {"d", 86400000},
};
/* PostgreSQL's memory units, as case-sensitive as its GUCs take them */
static const SetUnit kb_units[] = {
    {"kB", 1}, {"MB", 1024}, {"GB", 1024 * 1024}, {"TB", 1024.0 * 1024 * 1024},
};

/* parse_int with GUC_UNIT_MS or GUC_UNIT_KB: a number, optionally
 * followed by one of the kind's units. */
static int parse_ms(const SetDef *d, const char *s, int *out, SlError *err)
{
    const SetUnit *units = d->kind == SK_KB ? kb_units : ms_units;
    size_t nunits = d->kind == SK_KB ? SL_ARRAY_LEN(kb_units) : SL_ARRAY_LEN(ms_units);
    char *end;
    errno = 0;
    double v = strtod(s, &end);
    if (end == s || errno != 0)
        return invalid(err, d, s);
    while (isspace((unsigned char)*end))
        end++;
    double mult = 1;
    if (*end != '\0') {
        size_t k;
        for (k = 0; k < nunits; k++)
            if (strcmp(end, units[k].u) == 0)
                break;
        if (k == nunits) {
            invalid(err, d, s);
            if (d->kind == SK_KB)
                sl_error_hint(err, "Valid units for this parameter are \"kB\", \"MB\", "
                                   "\"GB\", and \"TB\".");
            else
                sl_error_hint(err, "Valid units for this parameter are \"us\", \"ms\", "
                                   "\"s\", \"min\", \"h\", and \"d\".");
            return -1;
        }
        mult = units[k].mult;
    } else if (d->kind != SK_MS && strchr(s, '.') != NULL) {
        return invalid(err, d, s);
    }
    v = v * mult;
    v = v < 0 ? -(double)(int64_t)(-v + 0.5) : (double)(int64_t)(v + 0.5);
    if (v < d->min || v > d->max)
        return sl_error(err, ERRCODE_INVALID_PARAMETER_VALUE,
                        "%s is outside the valid range for parameter \"%s\" (%d .. %d)",
                        s, d->name, d->min, d->max);
    *out = (int)v;
    return 0;
}

/* A memory size in kB as SHOW prints it: the largest unit that divides it. */
static char *format_kb(int kb)
{
    for (size_t k = SL_ARRAY_LEN(kb_units) - 1; k > 0; k--)
        if (kb % (int)kb_units[k].mult == 0 && kb_units[k].mult <= INT_MAX)
            return sl_printf("%d%s", kb / (int)kb_units[k].mult, kb_units[k].u);
    return sl_printf("%dkB", kb);
}

/* A time in ms as SHOW prints it: the largest unit that divides it. */
static char *format_ms(int ms)
{
    static const struct { const char *u; int ms; } units[] = {
        {"d", 86400000}, {"h", 3600000}, {"min", 60000}, {"s", 1000},
    };
    if (ms > 0)
        for (size_t k = 0; k < SL_ARRAY_LEN(units); k++)
            if (ms % units[k].ms == 0)
                return sl_printf("%d%s", ms / units[k].ms, units[k].u);
    return sl_printf("%d%s", ms, ms <= 0 ? "" : "ms");
}

static const char *skip_sp(const char *p)
{
    while (isspace((unsigned char)*p))
        p++;
    return p;
}

/* DateStyle: output style (ISO only is implemented) and field order. */
static int check_datestyle(const SetDef *d, const char *value, char **canon, SlError *err)
{
    const char *order = "MDY";
    bool iso = true;
    const char *p = value;
    while (*(p = skip_sp(p)) != '\0') {
        size_t n = 0;
        while (p[n] && p[n] != ',' && !isspace((unsigned char)p[n]))
            n++;
        if (n == 3 && strncasecmp(p, "ISO", 3) == 0)
            iso = true;
        else if ((n == 3 && strncasecmp(p, "SQL", 3) == 0) ||
                 (n == 8 && strncasecmp(p, "Postgres", 8) == 0) ||
                 (n == 6 && strncasecmp(p, "German", 6) == 0))
            iso = false;
        else if ((n == 3 && strncasecmp(p, "YMD", 3) == 0))
            order = "YMD";
        else if ((n == 3 && strncasecmp(p, "DMY", 3) == 0) ||
                 (n == 4 && strncasecmp(p, "Euro", 4) == 0) ||
                 (n == 8 && strncasecmp(p, "European", 8) == 0))
            order = "DMY";
        else if ((n == 3 && strncasecmp(p, "MDY", 3) == 0) ||
                 (n == 2 && strncasecmp(p, "US", 2) == 0) ||
                 (n == 7 && strncasecmp(p, "NonEuro", 7) == 0) ||
                 (n == 11 && strncasecmp(p, "NonEuropean", 11) == 0) ||
                 (n == 7 && strncasecmp(p, "DEFAULT", 7) == 0))
            ;
        else {
            invalid(err, d, value);
            sl_error_detail(err, "Unrecognized key word: \"%.*s\".", (int)n, p);
            return -1;
        }
        p = skip_sp(p + n);
        if (*p == ',')
            p++;
    }
    if (!iso)
        return sl_error(err, ERRCODE_FEATURE_NOT_SUPPORTED,
                        "DateStyle \"%s\" is not supported: sluice writes dates in the ISO style",
                        value);
    *canon = sl_printf("ISO, %s", order);
    return 0;
}

/* Whether sluice gives choice k of an enum, and if not *why
 * (server/session.c's xact_modes_check says the same of REPEATABLE READ
 * and SERIALIZABLE for BEGIN and SET TRANSACTION). */
static bool enum_supported(const SetDef *d, int k, const char **why)
{
    if (strcmp(d->choices, "off|on") == 0)
        return true;
    if (strcmp(d->name, "IntervalStyle") == 0) {
        *why = "sluice writes intervals in the postgres style";
        return k == 0;
    }
    *why = "each statement sees the rows committed before it started, as in read committed";
    return k >= 2;
}

/* Checks value for d and returns its canonical text (malloc'd).  asked is
 * the parameter's name as the statement wrote it, which PostgreSQL's error
 * for a value not among an enum's names repeats (SET IntervalStyle = x:
 * "intervalstyle"). */
static int check_value(const SetDef *d, const char *asked, const char *value, char **canon,
                       const DtTz **tz, int *num, SlError *err)
{
    switch (d->kind) {
    case SK_STRING:
    case SK_LIST: {
        /* application_name: printable ASCII, at most NAMEDATALEN - 1 bytes */
        size_t n = strlen(value);
        if (d->kind == SK_STRING && n > 63)
            n = 63;
        char *c = sl_malloc(n + 1);
        for (size_t i = 0; i < n; i++)
            c[i] = d->kind == SK_STRING && (value[i] < 32 || value[i] > 126) ? '?' : value[i];
        c[n] = '\0';
        *canon = c;
        return 0;
    }
    case SK_BOOL: {
        bool b;
        if (parse_bool(value, &b) < 0)
            return sl_error(err, ERRCODE_INVALID_PARAMETER_VALUE,
                            "parameter \"%s\" requires a Boolean value", d->name);
        if (!b)
            return sl_error(err, ERRCODE_FEATURE_NOT_SUPPORTED,
                            "%s = off is not supported", d->name);
        *canon = sl_strdup("on");
        return 0;
    }
    case SK_INT:
    case SK_MS:
    case SK_KB:
        if (parse_ms(d, value, num, err) < 0)
            return -1;
        *canon = d->kind == SK_MS   ? format_ms(*num)
                 : d->kind == SK_KB ? format_kb(*num)
                                    : sl_printf("%d", *num);
        return 0;
    case SK_TIMEZONE: {
        static const char *const utc[] = {"UTC", "GMT", "Z", "Zulu", "UCT", "Etc/UTC",
                                          "Etc/GMT", "Universal", "Etc/Universal"};
        for (size_t i = 0; i < SL_ARRAY_LEN(utc); i++) {
            if (strcasecmp(value, utc[i]) == 0) {
                *tz = NULL;
                *canon = sl_strdup(strcasecmp(value, "Z") == 0 ? "UTC" : value);
                return 0;
            }
        }
        const DtTz *z = dt_tz_find(value, strlen(value));
        if (z == NULL)
            return invalid(err, d, value);
        *tz = z;
        *canon = sl_strdup(dt_tz_name(z));
        return 0;
    }
    case SK_DATESTYLE:
        return check_datestyle(d, value, canon, err);
    case SK_ENUM:
    case SK_XACT: {
        const char *p = d->choices;
        size_t n = strlen(value);
        const char *why = NULL;
        int k = 0;
        while (*p) {
            const char *bar = strchr(p, '|');
            size_t len = bar ? (size_t)(bar - p) : strlen(p);
            if (len == n && strncasecmp(p, value, n) == 0) {
                if (!enum_supported(d, k, &why))
                    return sl_error(err, ERRCODE_FEATURE_NOT_SUPPORTED,
                                    "%s \"%s\" is not supported: %s", d->name, value, why);
                *canon = sl_strndup(p, len);
                return 0;
            }
            k++;
            p += len + (bar ? 1 : 0);
        }
        sl_error(err, ERRCODE_INVALID_PARAMETER_VALUE,
                 "invalid value for parameter \"%s\": \"%s\"", asked, value);
        StrBuf h;
        strbuf_init(&h);
        strbuf_puts(&h, "Available values: ");
        for (p = d->choices; *p; p++)
            strbuf_puts(&h, *p == '|' ? ", " : (char[]){*p, 0});
        strbuf_putc(&h, '.');
        sl_error_hint(err, "%s", h.data);
        strbuf_free(&h);
        return -1;
    }
    case SK_ENCODING: {
        /* clean_encoding_name: only letters and digits count ('utf-8',
         * as asyncpg sends it, is UTF8) */
        char clean[32];
        size_t n = 0;
        for (const char *q = value; *q && n + 1 < sizeof(clean); q++)
            if (isalnum((unsigned char)*q))
                clean[n++] = (char)tolower((unsigned char)*q);
        clean[n] = '\0';
        if (strcmp(clean, "utf8") == 0 || strcmp(clean, "unicode") == 0) {
            *canon = sl_strdup("UTF8");
            return 0;
        }
        static const char *const known[] = {"SQL_ASCII", "LATIN1", "LATIN2", "WIN1252",
                                            "WIN1251", "EUC_JP", "SJIS", "GBK", "BIG5",
                                            "ISO_8859_5", "KOI8R"};
        for (size_t i = 0; i < SL_ARRAY_LEN(known); i++)
            if (strcasecmp(value, known[i]) == 0)
                return sl_error(err, ERRCODE_FEATURE_NOT_SUPPORTED,
                                "conversion between %s and UTF8 is not supported", known[i]);
        return invalid(err, d, value);
    }
    case SK_READONLY:
        break;
    }
    return sl_error(err, ERRCODE_CANT_CHANGE_RUNTIME_PARAM, "parameter \"%s\" cannot be changed",
                    d->name);
}

/* Puts the typed cache of parameter i in step with its value in force. */
static void apply(SlSettings *s, int i)
{
    const SetDef *d = &defs[i];
    const char *v = s->v[i].value;
    SlError err = {0};
    char *canon = NULL;
    const DtTz *tz = NULL;
    int num = 0;
    if (d->kind == SK_TIMEZONE) {
        if (check_value(d, d->name, v, &canon, &tz, &num, &err) == 0)
            s->tz = tz;
    } else if (d->kind == SK_INT || d->kind == SK_MS || d->kind == SK_KB) {
        if (check_value(d, d->name, v, &canon, &tz, &num, &err) == 0) {
            if (strcmp(d->name, "extra_float_digits") == 0)
                s->float_digits = num;
            else if (strcmp(d->name, "statement_mem") == 0)
                s->statement_mem = num;
            else if (strcmp(d->name, "statement_timeout") == 0)
                s->timeout[TIMEOUT_STATEMENT] = num;
            else if (strcmp(d->name, "idle_session_timeout") == 0)
                s->timeout[TIMEOUT_IDLE_SESSION] = num;
            else if (strcmp(d->name, "log_min_duration_statement") == 0)
                s->log_min_duration = num;
            else
                s->timeout[TIMEOUT_IDLE_IN_TRANSACTION] = num;
        }
    }
    sl_free(canon);
    sl_error_clear(&err);
}

static void put(char **slot, const char *v)
{
    if (*slot == v)
        return;
    char *copy = v ? sl_strdup(v) : NULL;
    sl_free(*slot);
    *slot = copy;
}

SlSettings *settings_new(const char *user)
{
    SlSettings *s = sl_calloc(1, sizeof(SlSettings));
    for (int i = 0; i < NDEFS; i++) {
        const char *v = defs[i].def ? defs[i].def : (user ? user : "");
        s->v[i].value = sl_strdup(v);
        s->v[i].session = sl_strdup(v);
        s->v[i].reset = sl_strdup(v);
        apply(s, i);
    }
    return s;
}

void settings_set_fixed(SlSettings *s, const char *name, const char *value)
{
    int i = find_def(name);
    if (i < 0)
        return;
    char **slots[] = {&s->v[i].value, &s->v[i].session, &s->v[i].reset};
    for (int k = 0; k < (int)SL_ARRAY_LEN(slots); k++) {
        sl_free(*slots[k]);
        *slots[k] = sl_strdup(value);
    }
    apply(s, i);
}

void settings_free(SlSettings *s)
{
    if (s == NULL)
        return;
    for (int i = 0; i < NDEFS; i++) {
        sl_free(s->v[i].value);
        sl_free(s->v[i].session);
        sl_free(s->v[i].reset);
        sl_free(s->v[i].saved);
        sl_free(s->v[i].told);
    }
    if (current == s)
        current = NULL;
    sl_free(s);
}

/* PostgreSQL's PGC_SUSET parameters: only a superuser (is_superuser, fixed
 * at login) may SET them; the server's own default is a SET_STARTUP. */
static bool superuser_only(const SetDef *d)
{
    return strcmp(d->name, "log_min_duration_statement") == 0;
}

int settings_set(SlSettings *s, const char *name, const char *value, SetScope scope,
                 bool in_block, const char **warning, SlError *err)
{
    int i = find_def(name);
    if (i < 0)
        return unknown(err, name);
    const SetDef *d = &defs[i];
    if (d->kind == SK_READONLY)
        return sl_error(err, ERRCODE_CANT_CHANGE_RUNTIME_PARAM,
                        "parameter \"%s\" cannot be changed", d->name);
    if (d->kind == SK_XACT)
        return sl_error(err, ERRCODE_CANT_CHANGE_RUNTIME_PARAM,
                        "parameter \"%s\" is set by SET TRANSACTION", d->name);
    if (scope != SET_STARTUP && superuser_only(d) &&
        strcmp(s->v[find_def("is_superuser")].value, "on") != 0)
        return sl_error(err, ERRCODE_INSUFFICIENT_PRIVILEGE,
                        "permission denied to set parameter \"%s\"", d->name);
    char *canon = NULL;
    if (value == NULL) {
        canon = sl_strdup(s->v[i].reset);
    } else {
        const DtTz *tz;
        int num;
        if (check_value(d, name, value, &canon, &tz, &num, err) < 0)
            return -1;
    }
    if (scope == SET_LOCAL && !in_block) {
        /* PostgreSQL: a WARNING, and the value lasts only until the end of
         * the (implicit) transaction, i.e. not at all. */
        if (warning != NULL)
            *warning = "SET LOCAL can only be used in transaction blocks";
        sl_free(canon);
        return 0;
    }
    SetValue *sv = &s->v[i];
    if (scope == SET_STARTUP)
        put(&sv->reset, canon);
    if (scope != SET_LOCAL)
        put(&sv->session, canon);
    put(&sv->value, canon);
    sl_free(canon);
    apply(s, i);
    s->changes++;
    return 0;
}

uint64_t settings_changes(const SlSettings *s)
{
    return s->changes;
}

void settings_reset_all(SlSettings *s, bool in_block)
{
    (void)in_block;
    s->changes++;
    for (int i = 0; i < NDEFS; i++) {
        if (defs[i].kind == SK_READONLY || defs[i].kind == SK_XACT)
            continue;
        put(&s->v[i].session, s->v[i].reset);
        put(&s->v[i].value, s->v[i].reset);
        apply(s, i);
    }
}

const char *settings_get(const SlSettings *s, const char *name, const char **canon,
                         SlError *err)
{
    int i = find_def(name);
    if (i < 0) {
        unknown(err, name);
        return NULL;
    }
    if (canon != NULL)
        *canon = defs[i].name;
    return s ? s->v[i].value : defs[i].def ? defs[i].def : "";
}

int settings_xact_value(const char *name, const char *value, SlError *err)
{
    int i = find_def(name);
    if (i < 0 || defs[i].kind != SK_XACT)
        return unknown(err, name);
    const SetDef *d = &defs[i];
    if (strcmp(d->choices, "off|on") == 0) {
        bool b;
        if (parse_bool(value, &b) < 0)
            return sl_error(err, ERRCODE_INVALID_PARAMETER_VALUE,
                            "parameter \"%s\" requires a Boolean value", d->name);
        return b ? 1 : 0;
    }
    size_t n = strlen(value);
    int k = 0;
    for (const char *p = d->choices; *p; k++) {
        const char *bar = strchr(p, '|');
        size_t len = bar ? (size_t)(bar - p) : strlen(p);
        if (len == n && strncasecmp(p, value, n) == 0)
            return k;
        p += len + (bar ? 1 : 0);
    }
    return invalid(err, d, value);
}

int settings_count(void)
{
    return NDEFS;
}

void settings_nth(const SlSettings *s, int i, const char **name, const char **value,
                  const char **description)
{
    *name = defs[i].name;
    *value = s ? s->v[i].value : defs[i].def ? defs[i].def : "";
    *description = defs[i].description;
}

void settings_info(const SlSettings *s, int i, Arena *a, SettingInfo *out)
{
    const SetDef *d = &defs[i];
    const char *value = s ? s->v[i].value : d->def ? d->def : "";
    memset(out, 0, sizeof(*out));
    out->context = d->kind == SK_READONLY && strcmp(d->name, "default_transaction_read_only") != 0
                       ? "internal"
                   : superuser_only(d) ? "superuser"
                                       : "user";
    out->vartype = "string";
    out->changed = d->def != NULL && strcmp(value, d->def) != 0;
    switch (d->kind) {
    case SK_BOOL:
        out->vartype = "bool";
        break;
    case SK_INT:
    case SK_MS:
    case SK_KB: {
        out->vartype = "integer";
        out->has_range = true;
        out->min = d->min;
        out->max = d->max;
        if (d->kind != SK_INT) {
            int num;
            SlError err = {0};
            out->unit = d->kind == SK_MS ? "ms" : "kB";
            if (parse_ms(d, value, &num, &err) == 0)
                out->setting = arena_printf(a, "%d", num);
            sl_error_clear(&err);
        }
        break;
    }
    case SK_ENUM:
    case SK_XACT:
        if (strcmp(d->choices, "off|on") == 0) {
            out->vartype = "bool";
            break;
        }
        out->vartype = "enum";
        StrBuf b;
        strbuf_init(&b);
        strbuf_putc(&b, '{');
        for (const char *p = d->choices; *p;) {
            const char *bar = strchr(p, '|');
            size_t len = bar ? (size_t)(bar - p) : strlen(p);
            bool quote = memchr(p, ' ', len) != NULL;
            strbuf_printf(&b, "%s%s%.*s%s", p == d->choices ? "" : ",", quote ? "\"" : "",
                          (int)len, p, quote ? "\"" : "");
            p += len + (bar ? 1 : 0);
        }
        strbuf_putc(&b, '}');
        out->enumvals = arena_strndup(a, b.data, b.len);
        strbuf_free(&b);
        break;
    case SK_READONLY:
        if (strcmp(value, "on") == 0 || strcmp(value, "off") == 0)
            out->vartype = "bool";
        else if (strcmp(d->name, "server_version_num") == 0)
            out->vartype = "integer";
        break;
    default:
        break;
    }
}

void settings_xact_begin(SlSettings *s)
{
    s->in_block = true;
    for (int i = 0; i < NDEFS; i++)
        put(&s->v[i].saved, s->v[i].session);
}

bool settings_in_block(const SlSettings *s)
{
    return s->in_block;
}

void settings_xact_end(SlSettings *s, bool commit)
{
    for (int i = 0; i < NDEFS; i++) {
        SetValue *sv = &s->v[i];
        if (!commit && sv->saved != NULL)
            put(&sv->session, sv->saved);
        put(&sv->saved, NULL);
        if (strcmp(sv->value, sv->session) != 0) {
            put(&sv->value, sv->session);
            apply(s, i);
        }
    }
    s->in_block = false;
}

bool settings_next_report(SlSettings *s, int *iter, const char **name, const char **value)
{
    for (; *iter < NDEFS; (*iter)++) {
        SetValue *sv = &s->v[*iter];
        if (!defs[*iter].report || (sv->told != NULL && strcmp(sv->told, sv->value) == 0))
            continue;
        put(&sv->told, sv->value);
        *name = defs[*iter].name;
        *value = sv->value;
        (*iter)++;
        return true;
    }
    return false;
}

int settings_timeout_ms(const SlSettings *s, SetTimeout which)
{
    return s ? s->timeout[which] : 0;
}

size_t settings_statement_mem(const SlSettings *s)
{
    /* outside a session: the default, 1GB */
    return (size_t)(s ? s->statement_mem : 1024 * 1024) * 1024;
}

int settings_log_min_duration_ms(const SlSettings *s)
{
    return s ? s->log_min_duration : -1;
}

SlSettings *settings_enter(SlSettings *s)
{
    SlSettings *old = current;
    current = s;
    return old;
}

SlSettings *settings_current(void)
{
    return current;
}

const DtTz *settings_current_tz(void)
{
    return current ? current->tz : NULL;
}

int settings_current_float_digits(void)
{
    return current ? current->float_digits : 1;
}

/* ---------------------------------------------------------------------- */
/* SET's arguments                                                          */

/* Whether an identifier needs quotes to read back as itself. */
static bool needs_quotes(const char *s, size_t n)
{
    if (n == 0 || !(islower((unsigned char)s[0]) || s[0] == '_'))
        return true;
    for (size_t i = 0; i < n; i++)
        if (!(islower((unsigned char)s[i]) || isdigit((unsigned char)s[i]) || s[i] == '_' ||
              s[i] == '$'))
            return true;
    return false;
}

/* Reads a quoted string or identifier from just after its opening quote to
 * just after its closing one ('' or "" is the quote itself; with esc a
 * backslash escapes the next character).  -1 when it does not end. */
static int read_quoted(const char **pp, const char *end, char quote, bool esc, StrBuf *item)
{
    const char *p = *pp;
    for (;;) {
        if (p >= end)
            return -1;
        if (*p == quote && p + 1 < end && p[1] == quote) {
            strbuf_putc(item, quote);
            p += 2;
        } else if (*p == quote) {
            *pp = p + 1;
            return 0;
        } else if (esc && *p == '\\' && p + 1 < end) {
            strbuf_putc(item, p[1]);
            p += 2;
        } else {
            strbuf_putc(item, *p++);
        }
    }
}

/* Appends one list item, double-quoted (as quote_identifier does) when
 * quote is set. */
static void put_item(StrBuf *out, const char *s, size_t n, bool quote)
{
    if (!quote) {
        strbuf_append(out, s, n);
        return;
    }
    strbuf_putc(out, '"');
    for (size_t i = 0; i < n; i++) {
        if (s[i] == '"')
            strbuf_putc(out, '"');
        strbuf_putc(out, s[i]);
    }
    strbuf_putc(out, '"');
}

int settings_parse_args(Arena *a, const char *name, const char *text, size_t len,
                        const char **value, SlError *err)
{
    int di = find_def(name);
    bool list = di >= 0 && (defs[di].kind == SK_LIST || defs[di].kind == SK_DATESTYLE);
    const char *p = text, *end = text + len;
    StrBuf out;
    strbuf_init(&out);
    int nitems = 0;
    bool tz = di >= 0 && defs[di].kind == SK_TIMEZONE && strcasecmp(name, "time") == 0;
#define SKIP() while (p < end && isspace((unsigned char)*p)) p++
    SKIP();
    /* TO or =, except after SET TIME ZONE */
    if (!tz) {
        if (p < end && *p == '=')
            p++;
        else if (end - p >= 2 && strncasecmp(p, "to", 2) == 0 &&
                 (end - p == 2 || !isalnum((unsigned char)p[2])))
            p += 2;
        else {
            strbuf_free(&out);
            return sl_error(err, ERRCODE_SYNTAX_ERROR, "syntax error at or near \"%.*s\"",
                            (int)SL_MIN(end - p, 20), p);
        }
    } else {
        /* SET TIME ZONE: skip the word ZONE */
        if (end - p >= 4 && strncasecmp(p, "zone", 4) == 0)
            p += 4;
    }
    for (;;) {
        SKIP();
        if (p >= end || *p == ';')
            break;
        if (nitems > 0) {
            if (*p != ',')
                goto syntax;
            p++;
            SKIP();
            strbuf_puts(&out, ", ");
        }
        if (*p == '\'' || *p == '"' ||
            ((*p == 'E' || *p == 'e') && p + 1 < end && p[1] == '\'')) {
            /* a string, or a quoted identifier */
            bool ident = *p == '"', esc = *p == 'E' || *p == 'e';
            p += esc ? 2 : 1;
            StrBuf item;
            strbuf_init(&item);
            if (read_quoted(&p, end, ident ? '"' : '\'', esc, &item) < 0) {
                strbuf_free(&item);
                goto syntax;
            }
            const char *txt = item.data ? item.data : "";
            put_item(&out, txt, item.len,
                     list && (ident || defs[di].kind == SK_LIST) && needs_quotes(txt, item.len));
            strbuf_free(&item);
        } else if (isdigit((unsigned char)*p) || *p == '-' || *p == '+' || *p == '.') {
            const char *q = p + 1;
            while (q < end && (isalnum((unsigned char)*q) || *q == '.'))
                q++;
            strbuf_append(&out, p, (size_t)(q - p));
            p = q;
        } else if (isalpha((unsigned char)*p) || *p == '_' || (unsigned char)*p >= 0x80) {
            const char *q = p;
            while (q < end && (isalnum((unsigned char)*q) || *q == '_' || *q == '$' ||
                               (unsigned char)*q >= 0x80))
                q++;
            size_t n = (size_t)(q - p);
            bool is_default = n == 7 && strncasecmp(p, "default", 7) == 0;
            bool is_local = tz && n == 5 && strncasecmp(p, "local", 5) == 0;
            if ((is_default || is_local) && nitems == 0) {
                const char *r = q;
                while (r < end && (isspace((unsigned char)*r) || *r == ';'))
                    r++;
                if (r == end) {
                    strbuf_free(&out);
                    *value = NULL;
                    return 0;
                }
            }
            for (size_t i = 0; i < n; i++)
                strbuf_putc(&out, (char)tolower((unsigned char)p[i]));
            p = q;
        } else {
            goto syntax;
        }
        nitems++;
    }
#undef SKIP
    if (nitems == 0)
        goto syntax;
    if (nitems > 1 && !list) {
        strbuf_free(&out);
        return sl_error(err, ERRCODE_SYNTAX_ERROR, "SET %s takes only one argument",
                        di >= 0 ? defs[di].name : name);
    }
    *value = arena_strndup(a, out.data ? out.data : "", out.len);
    strbuf_free(&out);
    return 0;
syntax:
    strbuf_free(&out);
    if (p >= end)
        return sl_error(err, ERRCODE_SYNTAX_ERROR, "syntax error at end of input");
    return sl_error(err, ERRCODE_SYNTAX_ERROR, "syntax error at or near \"%.*s\"",
                    (int)SL_MIN(end - p, 1), p);
}
