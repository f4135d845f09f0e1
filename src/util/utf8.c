/*
 * utf8.c -- UTF-8 validation (see utf8.h).
 *
 *   sl_utf8_invalid, sl_utf8_message, sl_utf8_check
 *
 * Eight bytes at a time while they are ASCII (no high bit, no zero byte),
 * then one sequence at a time by the table of RFC 3629, section 4.
 */
#include "sluice/utf8.h"

#include <stdio.h>

/* The length of the valid sequence at s (n bytes left), or 0. */
static size_t seq_len(const unsigned char *s, size_t n)
{
    unsigned c = s[0];
    if (c >= 0x01 && c <= 0x7F)
        return 1;
    size_t len;
    unsigned lo = 0x80, hi = 0xBF;  /* the second byte's range */
    if (c >= 0xC2 && c <= 0xDF) {
        len = 2;
    } else if (c >= 0xE0 && c <= 0xEF) {
        len = 3;
        if (c == 0xE0)
            lo = 0xA0;              /* overlong */
        else if (c == 0xED)
            hi = 0x9F;              /* surrogates */
    } else if (c >= 0xF0 && c <= 0xF4) {
        len = 4;
        if (c == 0xF0)
            lo = 0x90;              /* overlong */
        else if (c == 0xF4)
            hi = 0x8F;              /* past U+10FFFF */
    } else {
        return 0;                   /* NUL, a continuation byte, C0, C1, F5..FF */
    }
    if (n < len || s[1] < lo || s[1] > hi)
        return 0;
    for (size_t i = 2; i < len; i++)
        if (s[i] < 0x80 || s[i] > 0xBF)
            return 0;
    return len;
}

size_t sl_utf8_invalid(const char *s, size_t len)
{
    const unsigned char *p = (const unsigned char *)s;
    size_t i = 0;
    while (i < len) {
        if (len - i >= 8) {
            uint64_t w;
            memcpy(&w, p + i, 8);
            /* No byte with its high bit set, and none zero: a byte b of
             * 0..0x7F plus 0x7F carries into its high bit unless b is 0
             * (and never into the next byte). */
            uint64_t high = w & 0x8080808080808080ULL;
            uint64_t nonzero = ((w & 0x7F7F7F7F7F7F7F7FULL) + 0x7F7F7F7F7F7F7F7FULL) &
                               0x8080808080808080ULL;
            if (high == 0 && nonzero == 0x8080808080808080ULL) {
                i += 8;
                continue;
            }
        }
        size_t n = seq_len(p + i, len - i);
        if (n == 0)
            return i;
        i += n;
    }
    return len;
}

void sl_utf8_message(const char *s, size_t len, char *buf, size_t cap)
{
    const unsigned char *p = (const unsigned char *)s;
    /* As PostgreSQL: as many bytes as the first one announces. */
    size_t n = (p[0] & 0xE0) == 0xC0 ? 2 : (p[0] & 0xF0) == 0xE0 ? 3
             : (p[0] & 0xF8) == 0xF0 ? 4 : 1;
    n = SL_MIN(n, len);
    int at = snprintf(buf, cap, "invalid byte sequence for encoding \"UTF8\":");
    for (size_t i = 0; i < n && at > 0 && (size_t)at < cap; i++)
        at += snprintf(buf + at, cap - (size_t)at, " 0x%02x", p[i]);
}

int sl_utf8_check(const char *s, size_t len, int loc, SlError *err)
{
    size_t bad = sl_utf8_invalid(s, len);
    if (SL_LIKELY(bad == len))
        return 0;
    char msg[96];
    sl_utf8_message(s + bad, len - bad, msg, sizeof(msg));
    return sl_error_at(err, ERRCODE_CHARACTER_NOT_IN_REPERTOIRE, loc, "%s", msg);
}
