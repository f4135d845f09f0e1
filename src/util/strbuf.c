/*
 * strbuf.c -- growable byte buffer (see strbuf.h), and sl_edit_distance.
 */
#include "sluice/strbuf.h"

#include <stdarg.h>
#include <stdio.h>
#include <string.h>

void strbuf_init(StrBuf *b)
{
    b->data = NULL;
    b->len = 0;
    b->cap = 0;
}

void strbuf_free(StrBuf *b)
{
    sl_free(b->data);
    strbuf_init(b);
}

void strbuf_reset(StrBuf *b)
{
    b->len = 0;
    if (b->data)
        b->data[0] = '\0';
}

void strbuf_reserve(StrBuf *b, size_t extra)
{
    size_t need = b->len + extra + 1;
    if (need <= b->cap)
        return;
    size_t cap = b->cap ? b->cap : 64;
    while (cap < need)
        cap *= 2;
    b->data = sl_realloc(b->data, cap);
    b->cap = cap;
}

void strbuf_append(StrBuf *b, const void *p, size_t n)
{
    strbuf_reserve(b, n);
    if (n)
        memcpy(b->data + b->len, p, n);
    b->len += n;
    b->data[b->len] = '\0';
}

void strbuf_puts(StrBuf *b, const char *s)
{
    strbuf_append(b, s, strlen(s));
}

void strbuf_putc(StrBuf *b, char c)
{
    strbuf_reserve(b, 1);
    b->data[b->len++] = c;
    b->data[b->len] = '\0';
}

void strbuf_printf(StrBuf *b, const char *fmt, ...)
{
    va_list ap, ap2;
    va_start(ap, fmt);
    va_copy(ap2, ap);
    int n = vsnprintf(NULL, 0, fmt, ap);
    va_end(ap);
    strbuf_reserve(b, (size_t)n);
    vsnprintf(b->data + b->len, (size_t)n + 1, fmt, ap2);
    va_end(ap2);
    b->len += (size_t)n;
}

char *strbuf_steal(StrBuf *b, size_t *len)
{
    if (b->data == NULL)
        strbuf_reserve(b, 0);
    char *p = b->data;
    if (len)
        *len = b->len;
    strbuf_init(b);
    return p;
}

void strbuf_put_json_string(StrBuf *b, const char *s, size_t n)
{
    static const char hex[] = "0123456789abcdef";
    strbuf_reserve(b, n + 2);
    b->data[b->len++] = '"';
    size_t run = 0;     /* s[run, i) needs no escape: appended at once */
    for (size_t i = 0; i < n; i++) {
        unsigned char c = (unsigned char)s[i];
        if (c >= 0x20 && c != '"' && c != '\\')
            continue;
        strbuf_append(b, s + run, i - run);
        run = i + 1;
        char esc[7] = {'\\', (char)c, 0};
        size_t k = 2;
        if (c == '\n')
            esc[1] = 'n';
        else if (c == '\t')
            esc[1] = 't';
        else if (c == '\r')
            esc[1] = 'r';
        else if (c < 0x20) {
            memcpy(esc + 1, "u00", 3);
            esc[4] = hex[c >> 4];
            esc[5] = hex[c & 15];
            k = 6;
        }
        strbuf_append(b, esc, k);
    }
    strbuf_append(b, s + run, n - run);
    strbuf_putc(b, '"');
}

void strbuf_put_int(StrBuf *b, int64_t v)
{
    char buf[24];
    char *p = buf + sizeof(buf);
    uint64_t u = v < 0 ? 0 - (uint64_t)v : (uint64_t)v;
    do {
        *--p = (char)('0' + u % 10);
        u /= 10;
    } while (u != 0);
    if (v < 0)
        *--p = '-';
    strbuf_append(b, p, (size_t)(buf + sizeof(buf) - p));
}

int sl_edit_distance(const char *a, const char *b, int max)
{
    int la = (int)strlen(a), lb = (int)strlen(b);
    if (la - lb > max || lb - la > max)
        return max + 1;
    int row[128], prev[128];
    if (lb >= 127)
        return max + 1;
    for (int j = 0; j <= lb; j++)
        prev[j] = j;
    for (int i = 1; i <= la; i++) {
        row[0] = i;
        int best = row[0];
        for (int j = 1; j <= lb; j++) {
            int c = prev[j - 1] + (a[i - 1] != b[j - 1]);
            c = SL_MIN(c, prev[j] + 1);
            c = SL_MIN(c, row[j - 1] + 1);
            row[j] = c;
            best = SL_MIN(best, c);
        }
        if (best > max)
            return max + 1;
        memcpy(prev, row, sizeof(int) * (size_t)(lb + 1));
    }
    return prev[lb];
}
