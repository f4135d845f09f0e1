/*
 * format_text.c -- the decoder of PostgreSQL's COPY text format (see format.h).
 *
 *   fmt_text_decode
 *
 * One record a line; fields split on the delimiter (tab by default); a
 * field equal to the null string (\N by default, compared before
 * de-escaping) is NULL; backslash escapes: \b \f \n \r \t \v \\, \ooo
 * (octal) and \xHH (hex); any other escaped character stands for itself.
 * A record with too many or too few fields, a field its column's input
 * function refuses, or one whose escapes make bytes that are not UTF-8, is
 * a dead letter with PostgreSQL's message.
 */
#include "format_int.h"

#include "sluice/utf8.h"

#include <stdio.h>


/* The de-escaped bytes of [p, end) in a, NUL-terminated; *len their count. */
static char *unescape(const char *p, const char *end, Arena *a, size_t *len)
{
    char *out = arena_alloc(a, (size_t)(end - p) + 1);
    size_t n = 0;
    while (p < end) {
        char c = *p++;
        if (c != '\\' || p >= end) {
            out[n++] = c;
            continue;
        }
        c = *p++;
        switch (c) {
        case 'b': out[n++] = '\b'; break;
        case 'f': out[n++] = '\f'; break;
        case 'n': out[n++] = '\n'; break;
        case 'r': out[n++] = '\r'; break;
        case 't': out[n++] = '\t'; break;
        case 'v': out[n++] = '\v'; break;
        case 'x':
            if (p < end && sl_hexval(*p) >= 0) {
                int v = sl_hexval(*p++);
                if (p < end && sl_hexval(*p) >= 0)
                    v = v * 16 + sl_hexval(*p++);
                out[n++] = (char)v;
            } else {
                out[n++] = 'x';
            }
            break;
        default:
            if (c >= '0' && c <= '7') {
                int v = c - '0';
                for (int k = 0; k < 2 && p < end && *p >= '0' && *p <= '7'; k++)
                    v = v * 8 + (*p++ - '0');
                out[n++] = (char)v;
            } else {
                out[n++] = c;
            }
            break;
        }
    }
    out[n] = '\0';
    *len = n;
    return out;
}

/* Decodes one line [p, end) into row `row`; returns NULL or the reason. */
static const char *decode_record(const FmtSpec *spec, const char *p, const char *end,
                                 Batch *b, uint32_t row, Arena *a)
{
    uint32_t ncols = b->ncols;
    size_t nulllen = strlen(spec->null_string);
    char msg[300];
    uint32_t c = 0;
    for (;;) {
        const char *fs = p;
        while (p < end && *p != spec->delimiter) {
            if (*p == '\\' && p + 1 < end)
                p++;
            p++;
        }
        if (p > end)
            p = end;
        if (c == ncols)
            return "extra data after last expected column";
        Vector *v = &b->cols[c];
        size_t flen = (size_t)(p - fs);
        v->nulls[row] = 1;
        if (!(flen == nulllen && memcmp(fs, spec->null_string, nulllen) == 0)) {
            size_t len;
            char *val = unescape(fs, p, a, &len);
            /* Escapes (\ooo, \xhh) make bytes of their own: the raw line
             * was checked, they must be too. */
            size_t bad;
            if (len != flen && (bad = sl_utf8_invalid(val, len)) < len) {
                sl_utf8_message(val + bad, len - bad, msg, sizeof(msg));
                return arena_printf(a, "column %s: %s", spec->cols[c].name, msg);
            }
            const char *why = fmt_store_field(spec, b, c, row, val, len, a);
            if (why != NULL)
                return why;
        }
        c++;
        if (p >= end)
            break;
        p++;    /* the delimiter */
    }
    if (c < ncols) {
        snprintf(msg, sizeof(msg), "missing data for column \"%s\"", spec->cols[c].name);
        return arena_strdup(a, msg);
    }
    return NULL;
}

int fmt_text_decode(const FmtSpec *spec, const char *buf, size_t len, bool final, Batch *b,
                    uint32_t cap, Arena *a, FmtResult *res, SlError *err)
{
    SL_UNUSED(err);
    FmtLines how = {.decode = decode_record, .header = spec->header, .end_marker = true};
    return fmt_decode_lines(&how, spec, buf, len, final, b, cap, a, res);
}
