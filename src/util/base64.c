/*
 * base64.c -- base64 encoding and PostgreSQL's base64 decoding (see
 * base64.h).
 *
 *   b64_encode, b64_decode
 *
 * The one decoder of the server: decode(..., 'base64')
 * (functions/strfuncs.c, which turns its codes into PostgreSQL's errors)
 * and SCRAM's messages and stored verifiers (scram.c).  Pure functions.
 */
#include "sluice/base64.h"

static const char b64chars[] =
    "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";

void b64_encode(const uint8_t *data, size_t len, StrBuf *out)
{
    for (size_t i = 0; i < len; i += 3) {
        uint32_t v = (uint32_t)data[i] << 16;
        if (i + 1 < len)
            v |= (uint32_t)data[i + 1] << 8;
        if (i + 2 < len)
            v |= data[i + 2];
        char q[4] = {b64chars[v >> 18 & 63], b64chars[v >> 12 & 63],
                     i + 1 < len ? b64chars[v >> 6 & 63] : '=',
                     i + 2 < len ? b64chars[v & 63] : '='};
        strbuf_append(out, q, 4);
    }
}

/* The value of a base64 character, or -1. */
static int b64_value(char c)
{
    if (c >= 'A' && c <= 'Z')
        return c - 'A';
    if (c >= 'a' && c <= 'z')
        return c - 'a' + 26;
    if (c >= '0' && c <= '9')
        return c - '0' + 52;
    if (c == '+')
        return 62;
    if (c == '/')
        return 63;
    return -1;
}

int64_t b64_decode(const char *s, size_t len, bool skip_space, uint8_t *out, size_t cap,
                   size_t *bad)
{
    uint32_t acc = 0;
    int pos = 0, end = 0;       /* end: 1 after "xx=", 2 after "xxx=" */
    size_t n = 0;
    for (size_t k = 0; k < len; k++) {
        char c = s[k];
        int b;
        if (skip_space && (c == ' ' || c == '\t' || c == '\n' || c == '\r'))
            continue;
        if (c == '=') {
            if (!end) {
                if (pos == 2) {
                    end = 1;
                } else if (pos == 3) {
                    end = 2;
                } else {
                    if (bad != NULL)
                        *bad = k;
                    return B64_BAD_PAD;
                }
            }
            b = 0;
        } else if ((b = b64_value(c)) < 0) {
            if (bad != NULL)
                *bad = k;
            return B64_BAD_SYMBOL;
        }
        acc = (acc << 6) + (uint32_t)b;
        if (++pos < 4)
            continue;
        int nb = end == 0 ? 3 : end;
        if (cap - n < (size_t)nb)
            return B64_NO_ROOM;
        out[n++] = (uint8_t)(acc >> 16);
        if (nb > 1)
            out[n++] = (uint8_t)(acc >> 8);
        if (nb > 2)
            out[n++] = (uint8_t)acc;
        acc = 0;
        pos = 0;
    }
    return pos != 0 ? B64_BAD_END : (int64_t)n;
}
