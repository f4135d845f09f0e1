/*
 * log.c -- structured log lines on stderr (see log.h).
 *
 * One write(2) per line, so lines from worker threads never interleave.
 *
 *   sl_log, log_quote, log_value, log_set_level, log_set_json, log_level_parse,
 *   log_enabled
 */
#include "sluice/log.h"
#include "sluice/strbuf.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <strings.h>
#include <time.h>
#include <unistd.h>

static LogLevel min_level = LOG_INFO;
static bool     json_lines = false;

static const char *const level_names[] = {"debug", "info", "warn", "error"};

void log_set_level(LogLevel level) { min_level = level; }
void log_set_json(bool json) { json_lines = json; }
bool log_enabled(LogLevel level) { return level >= min_level; }

int log_level_parse(const char *s)
{
    for (int i = 0; i < (int)SL_ARRAY_LEN(level_names); i++)
        if (strcasecmp(s, level_names[i]) == 0)
            return i;
    if (strcasecmp(s, "warning") == 0)
        return LOG_WARN;
    return -1;
}

static void put_quoted(StrBuf *b, const char *s)
{
    strbuf_putc(b, '"');
    for (; *s; s++) {
        unsigned char c = (unsigned char)*s;
        if (c == '"' || c == '\\') {
            strbuf_putc(b, '\\');
            strbuf_putc(b, (char)c);
        } else if (c == '\n') {
            strbuf_puts(b, "\\n");
        } else if (c < 0x20) {
            strbuf_printf(b, "\\u%04x", c);
        } else {
            strbuf_putc(b, (char)c);
        }
    }
    strbuf_putc(b, '"');
}

/* Appends `key=value key2="quoted value"` pairs as JSON members. */
static void kv_to_json(StrBuf *b, const char *kv)
{
    const char *p = kv;
    while (*p) {
        while (*p == ' ')
            p++;
        const char *k = p;
        while (*p && *p != '=' && *p != ' ')
            p++;
        if (*p != '=')
            break;
        StrBuf key, val;
        strbuf_init(&key);
        strbuf_init(&val);
        strbuf_append(&key, k, (size_t)(p - k));
        p++;
        if (*p == '"') {
            p++;
            while (*p && *p != '"') {
                if (*p == '\\' && p[1]) {
                    p++;
                    if (*p == 'u' && p[1] && p[2] && p[3] && p[4]) {
                        /* \u00XX (log_quote's control bytes) */
                        char hex[5] = {p[1], p[2], p[3], p[4], 0};
                        strbuf_putc(&val, (char)strtol(hex, NULL, 16));
                        p += 5;
                        continue;
                    }
                    strbuf_putc(&val, *p == 'n' ? '\n' : *p == 'r' ? '\r' : *p == 't' ? '\t' : *p);
                    p++;
                    continue;
                }
                strbuf_putc(&val, *p++);
            }
            if (*p == '"')
                p++;
        } else {
            const char *v = p;
            while (*p && *p != ' ')
                p++;
            strbuf_append(&val, v, (size_t)(p - v));
        }
        strbuf_putc(b, ',');
        put_quoted(b, key.data);
        strbuf_putc(b, ':');
        put_quoted(b, val.data ? val.data : "");
        strbuf_free(&key);
        strbuf_free(&val);
    }
}

/* s escaped into the next of the thread's buffers, between quotes when
 * quotes is set. */
static const char *escape(const char *s, bool quotes)
{
    static _Thread_local char bufs[LOG_QUOTE_SLOTS][LOG_QUOTE_MAX + 8];
    static _Thread_local int next;
    char *out = bufs[next];
    next = (next + 1) % LOG_QUOTE_SLOTS;
    size_t n = 0;
    if (quotes)
        out[n++] = '"';
    for (; s != NULL && *s != '\0' && n < LOG_QUOTE_MAX; s++) {
        unsigned char c = (unsigned char)*s;
        if (c == '"' || c == '\\') {
            out[n++] = '\\';
            out[n++] = (char)c;
        } else if (c == '\n' || c == '\r' || c == '\t') {
            out[n++] = '\\';
            out[n++] = c == '\n' ? 'n' : c == '\r' ? 'r' : 't';
        } else if (c < 0x20) {
            n += (size_t)snprintf(out + n, 7, "\\u%04x", c);
        } else {
            out[n++] = (char)c;
        }
    }
    if (quotes)
        out[n++] = '"';
    out[n] = '\0';
    return out;
}

const char *log_quote(const char *s)
{
    return escape(s, false);
}

const char *log_value(const char *s)
{
    bool bare = s != NULL && *s != '\0';
    for (const char *p = s; bare && *p != '\0'; p++) {
        unsigned char c = (unsigned char)*p;
        bare = c > 0x20 && c != '"' && c != '=' && c != '\\' && c != 0x7F;
    }
    return bare ? s : escape(s, true);
}

void sl_log(LogLevel level, const char *msg, const char *kvfmt, ...)
{
    if (level < min_level)
        return;
    struct timespec ts;
    clock_gettime(CLOCK_REALTIME, &ts);
    struct tm tm;
    gmtime_r(&ts.tv_sec, &tm);
    char when[96];
    snprintf(when, sizeof(when), "%04d-%02d-%02dT%02d:%02d:%02d.%03ldZ",
             tm.tm_year + 1900, tm.tm_mon + 1, tm.tm_mday, tm.tm_hour,
             tm.tm_min, tm.tm_sec, (long)(ts.tv_nsec / 1000000) % 1000);

    StrBuf kv;
    strbuf_init(&kv);
    if (kvfmt != NULL && *kvfmt) {
        va_list ap, ap2;
        va_start(ap, kvfmt);
        va_copy(ap2, ap);
        int n = vsnprintf(NULL, 0, kvfmt, ap);
        va_end(ap);
        strbuf_reserve(&kv, (size_t)n);
        vsnprintf(kv.data, (size_t)n + 1, kvfmt, ap2);
        kv.len = (size_t)n;
        va_end(ap2);
    }

    StrBuf b;
    strbuf_init(&b);
    if (json_lines) {
        strbuf_printf(&b, "{\"ts\":\"%s\",\"level\":\"%s\",\"msg\":", when,
                      level_names[level]);
        put_quoted(&b, msg);
        if (kv.len)
            kv_to_json(&b, kv.data);
        strbuf_puts(&b, "}\n");
    } else {
        strbuf_printf(&b, "ts=%s level=%s msg=", when, level_names[level]);
        put_quoted(&b, msg);
        if (kv.len) {
            strbuf_putc(&b, ' ');
            strbuf_append(&b, kv.data, kv.len);
        }
        strbuf_putc(&b, '\n');
    }
    ssize_t off = 0;
    while ((size_t)off < b.len) {
        ssize_t w = write(STDERR_FILENO, b.data + off, b.len - (size_t)off);
        if (w <= 0)
            break;
        off += w;
    }
    strbuf_free(&b);
    strbuf_free(&kv);
}
