/*
 * options.c -- relation options as a flat JSON object (see options.h).
 *
 *   opts_parse, opts_get, opts_get_int, opts_get_double, opts_get_bool,
 *   opts_get_interval_us, opts_parse_interval_us
 *   opts_is_secret, opts_mask_json, OPTS_MASK
 */
#include "sluice/options.h"
#include "sluice/strbuf.h"

#include <ctype.h>
#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <strings.h>

static const char *skip_ws(const char *p)
{
    while (*p == ' ' || *p == '\t' || *p == '\n' || *p == '\r')
        p++;
    return p;
}

/* Reads a JSON string at p (at the quote) into the arena. */
static const char *read_string(Arena *a, const char *p, const char **out)
{
    p++;
    const char *s = p;
    size_t n = 0;
    while (*p && *p != '"') {
        if (*p == '\\' && p[1])
            p++;
        p++;
        n++;
    }
    if (*p != '"')
        return NULL;
    char *buf = arena_alloc(a, n + 1), *o = buf;
    for (const char *q = s; q < p; q++) {
        if (*q == '\\') {
            q++;
            switch (*q) {
            case 'n': *o++ = '\n'; break;
            case 't': *o++ = '\t'; break;
            case 'r': *o++ = '\r'; break;
            default: *o++ = *q; break;
            }
        } else {
            *o++ = *q;
        }
    }
    *o = '\0';
    *out = buf;
    return p + 1;
}

int opts_parse(Arena *a, const char *json, Options *out, SlError *err)
{
    memset(out, 0, sizeof(*out));
    const char *p = skip_ws(json ? json : "{}");
    if (*p != '{')
        return sl_error(err, ERRCODE_DATA_CORRUPTED, "relation options are not a JSON object");
    p = skip_ws(p + 1);
    int cap = 0;
    while (*p && *p != '}') {
        const char *key, *val;
        if (*p != '"' || (p = read_string(a, p, &key)) == NULL)
            goto bad;
        p = skip_ws(p);
        if (*p++ != ':')
            goto bad;
        p = skip_ws(p);
        if (*p == '"') {
            if ((p = read_string(a, p, &val)) == NULL)
                goto bad;
        } else {
            const char *s = p;
            while (*p && *p != ',' && *p != '}' && !isspace((unsigned char)*p))
                p++;
            if (p == s)
                goto bad;
            val = arena_strndup(a, s, (size_t)(p - s));
        }
        if (out->n == cap) {
            cap = cap ? cap * 2 : 8;
            const char **k = ARENA_ARRAY(a, const char *, cap);
            const char **v = ARENA_ARRAY(a, const char *, cap);
            if (out->n) {
                memcpy(k, out->keys, sizeof(char *) * (size_t)out->n);
                memcpy(v, out->values, sizeof(char *) * (size_t)out->n);
            }
            out->keys = k;
            out->values = v;
        }
        out->keys[out->n] = key;
        out->values[out->n] = val;
        out->n++;
        p = skip_ws(p);
        if (*p == ',')
            p = skip_ws(p + 1);
    }
    if (*p != '}')
        goto bad;
    return 0;
bad:
    return sl_error(err, ERRCODE_DATA_CORRUPTED, "relation options are not valid JSON");
}

const char *opts_get(const Options *o, const char *key)
{
    /* The last of a repeated key wins. */
    for (int i = o->n - 1; i >= 0; i--)
        if (strcmp(o->keys[i], key) == 0)
            return o->values[i];
    return NULL;
}

static int bad_option(SlError *err, const char *key, const char *val, const char *want)
{
    return sl_error(err, ERRCODE_INVALID_PARAMETER_VALUE,
                    "invalid value for option \"%s\": \"%s\" (expected %s)", key, val, want);
}

int opts_get_int(const Options *o, const char *key, int64_t def, int64_t *out, SlError *err)
{
    const char *v = opts_get(o, key);
    if (v == NULL) {
        *out = def;
        return 0;
    }
    char *end;
    errno = 0;
    long long x = strtoll(v, &end, 10);
    if (*v == '\0' || *end != '\0' || errno != 0)
        return bad_option(err, key, v, "an integer");
    *out = x;
    return 0;
}

int opts_get_double(const Options *o, const char *key, double def, double *out, SlError *err)
{
    const char *v = opts_get(o, key);
    if (v == NULL) {
        *out = def;
        return 0;
    }
    char *end;
    double x = strtod(v, &end);
    if (*v == '\0' || *end != '\0' || !isfinite(x))
        return bad_option(err, key, v, "a number");
    *out = x;
    return 0;
}

int opts_get_bool(const Options *o, const char *key, bool def, bool *out, SlError *err)
{
    const char *v = opts_get(o, key);
    if (v == NULL) {
        *out = def;
        return 0;
    }
    if (strcasecmp(v, "true") == 0 || strcasecmp(v, "on") == 0 || strcmp(v, "1") == 0)
        *out = true;
    else if (strcasecmp(v, "false") == 0 || strcasecmp(v, "off") == 0 || strcmp(v, "0") == 0)
        *out = false;
    else
        return bad_option(err, key, v, "a boolean");
    return 0;
}

int opts_parse_interval_us(const char *s, int64_t *out)
{
    static const struct { const char *unit; int64_t us; } units[] = {
        {"us", 1}, {"microsecond", 1}, {"microseconds", 1},
        {"ms", 1000}, {"millisecond", 1000}, {"milliseconds", 1000},
        {"s", 1000000}, {"sec", 1000000}, {"secs", 1000000}, {"second", 1000000},
        {"seconds", 1000000},
        {"m", 60000000}, {"min", 60000000}, {"mins", 60000000}, {"minute", 60000000},
        {"minutes", 60000000},
        {"h", 3600000000LL}, {"hour", 3600000000LL}, {"hours", 3600000000LL},
        {"d", 86400000000LL}, {"day", 86400000000LL}, {"days", 86400000000LL},
    };
    int64_t total = 0;
    const char *p = s;
    bool any = false;
    while (*(p = skip_ws(p))) {
        char *end;
        errno = 0;
        double x = strtod(p, &end);
        if (end == p || errno != 0 || x < 0)
            return -1;
        p = skip_ws(end);
        const char *u = p;
        while (isalpha((unsigned char)*p))
            p++;
        size_t ulen = (size_t)(p - u);
        int64_t mult = -1;
        if (ulen == 0) {
            mult = 1000;        /* a bare number is milliseconds */
        } else {
            for (size_t i = 0; i < SL_ARRAY_LEN(units); i++)
                if (strlen(units[i].unit) == ulen && strncasecmp(u, units[i].unit, ulen) == 0)
                    mult = units[i].us;
        }
        if (mult < 0)
            return -1;
        double us = x * (double)mult;
        if (us > 9.2e18 - (double)total)
            return -1;
        total += (int64_t)llround(us);
        any = true;
    }
    if (!any)
        return -1;
    *out = total;
    return 0;
}

int opts_get_interval_us(const Options *o, const char *key, int64_t def, int64_t *out,
                         SlError *err)
{
    const char *v = opts_get(o, key);
    if (v == NULL) {
        *out = def;
        return 0;
    }
    if (opts_parse_interval_us(v, out) < 0)
        return bad_option(err, key, v, "an interval such as '5 seconds'");
    return 0;
}

/* ---------------------------------------------------------------------- */
/* Secrets                                                                 */

bool opts_is_secret(const char *key)
{
    static const char *const marks[] = {
        "password", "passwd", "secret", "token", "credential", "private",
        "key.pem", "oauthbearer.config", "sasl.jaas",
    };
    char low[256];
    size_t n = 0;
    for (; key[n] != '\0' && n + 1 < sizeof(low); n++)
        low[n] = (char)tolower((unsigned char)key[n]);
    low[n] = '\0';
    for (size_t i = 0; i < sizeof(marks) / sizeof(marks[0]); i++)
        if (strstr(low, marks[i]) != NULL)
            return true;
    return false;
}

const char *opts_mask_json(Arena *a, const char *json)
{
    if (json == NULL)
        return NULL;
    Arena scratch;
    arena_init(&scratch, 256);
    StrBuf b;
    strbuf_init(&b);
    const char *p = skip_ws(json), *copied = json;
    bool ok = *p == '{';
    p = skip_ws(p + (ok ? 1 : 0));
    while (ok && *p && *p != '}') {
        const char *key;
        ok = *p == '"' && (p = read_string(&scratch, p, &key)) != NULL;
        if (!ok)
            break;
        p = skip_ws(p);
        ok = *p++ == ':';
        p = skip_ws(p);
        const char *start = p;
        if (ok && *p == '"') {
            const char *val;
            ok = (p = read_string(&scratch, p, &val)) != NULL;
        } else {
            while (*p && *p != ',' && *p != '}' && !isspace((unsigned char)*p))
                p++;
        }
        if (!ok)
            break;
        if (opts_is_secret(key)) {
            strbuf_append(&b, copied, (size_t)(start - copied));
            strbuf_puts(&b, "\"" OPTS_MASK "\"");
            copied = p;
        }
        p = skip_ws(p);
        if (*p == ',')
            p = skip_ws(p + 1);
    }
    const char *out;
    if (!ok)
        out = "{}";     /* unreadable: show nothing rather than a secret */
    else if (copied == json)
        out = json;
    else {
        strbuf_puts(&b, copied);
        out = arena_strndup(a, b.data, b.len);
    }
    strbuf_free(&b);
    arena_destroy(&scratch);
    return out;
}
