/*
 * format_lines.c -- the record loop the JSON, CSV and text decoders share
 * (see format_int.h).
 *
 *   fmt_decode_lines, fmt_store_field, fmt_store_fast, fmt_add_dead
 *
 * fmt_store_field converts plain decimal integers and timestamps written
 * "YYYY-MM-DD HH:MM:SS[.ffffff]" itself (the COPY benchmark's hot spots,
 * docs/benchmarks.md); every other text goes through the type's input
 * function, which has PostgreSQL's rules and messages.
 *
 * A record is a line (CSV frames its own, since a quoted field may hold a
 * newline).  A record that is not valid UTF-8, or holds a NUL byte, is a
 * dead letter before any decoder sees it (the reason says where).  The loop stops when the batch is full or at a partial last
 * record (unless final); res->consumed counts whole records only, so the
 * caller keeps the rest for the next buffer.
 */
#include "format_int.h"

#include "types/datetime.h"
#include "sluice/expr.h"
#include "sluice/utf8.h"

#include <stdint.h>
#include <stdio.h>

void fmt_add_dead(FmtResult *res, Arena *a, int64_t record, int64_t offset,
                  const char *reason, const char *raw, size_t rawlen)
{
    if (res->ndead == res->capdead) {
        int cap = res->capdead ? res->capdead * 2 : 16;
        DeadLetter *d = ARENA_ARRAY(a, DeadLetter, cap);
        if (res->ndead)
            memcpy(d, res->dead, sizeof(DeadLetter) * (size_t)res->ndead);
        res->dead = d;
        res->capdead = cap;
    }
    DeadLetter *d = &res->dead[res->ndead++];
    d->record = record;
    d->offset = offset;
    d->reason = arena_strdup(a, reason);
    d->raw.ptr = raw;
    d->raw.len = (uint32_t)rawlen;
}

/* Plain decimal integers ([-+]?digits, at most 18 digits) without the
 * general input function; anything else (spaces, overflow, 19 digits) goes
 * the slow way, which has PostgreSQL's rules and messages.  True if stored. */
static bool fast_int(Vector *v, uint32_t row, const char *p, size_t len)
{
    const char *e = p + len;
    bool neg = false;
    if (p < e && (*p == '-' || *p == '+'))
        neg = *p++ == '-';
    if (p == e || e - p > 18)
        return false;
    int64_t x = 0;
    for (; p < e; p++) {
        unsigned d = (unsigned)(*p - '0');
        if (d > 9)
            return false;
        x = x * 10 + d;
    }
    if (neg)
        x = -x;
    switch (v->type.id) {
    case TYPE_INT8:
        v->v.i64[row] = x;
        return true;
    case TYPE_INT4:
        if (x < INT32_MIN || x > INT32_MAX)
            return false;
        v->v.i32[row] = (int32_t)x;
        return true;
    case TYPE_INT2:
        if (x < INT16_MIN || x > INT16_MAX)
            return false;
        v->v.i16[row] = (int16_t)x;
        return true;
    default:
        return false;
    }
}

bool fmt_store_fast(Vector *v, uint32_t row, const char *text, size_t len)
{
    SlTypeId t = v->type.id;
    if (((t == TYPE_INT8 || t == TYPE_INT4 || t == TYPE_INT2) && fast_int(v, row, text, len)) ||
        (t == TYPE_TIMESTAMP && dt_parse_iso_fast(text, len, &v->v.i64[row]))) {
        v->nulls[row] = 0;
        return true;
    }
    return false;
}

const char *fmt_store_field(const FmtSpec *spec, Batch *b, uint32_t c, uint32_t row,
                            const char *text, size_t len, Arena *a)
{
    Vector *v = &b->cols[c];
    SlTypeId t = v->type.id;
    if (fmt_store_fast(v, row, text, len))
        return NULL;
    if (t == TYPE_TEXT || t == TYPE_UNKNOWN) {
        if (spec->need != NULL && !spec->need[c])
            return NULL;    /* unread (format.h): any text fits; left NULL */
        v->v.str[row].ptr = arena_strndup(a, text, len);
        v->v.str[row].len = (uint32_t)len;
    } else {
        SlError e = {0};
        if (value_parse_text(a, v->type, text, len, v, row, -1, &e) < 0) {
            const char *why = arena_printf(a, "column %s: %s", spec->cols[c].name,
                                           e.message ? e.message : "invalid value");
            sl_error_clear(&e);
            return why;
        }
    }
    v->nulls[row] = 0;
    return NULL;
}

static bool blank(const char *s, const char *end)
{
    while (s < end && (*s == ' ' || *s == '\t' || *s == '\r'))
        s++;
    return s == end;
}

int fmt_decode_lines(const FmtLines *how, const FmtSpec *spec, const char *buf, size_t len,
                     bool final, Batch *b, uint32_t cap, Arena *a, FmtResult *res)
{
    size_t pos = (size_t)res->consumed;
    while (pos < len && b->nrows < cap) {
        const char *rec = buf + pos;
        const char *nl = how->frame ? how->frame(spec, rec, buf + len)
                                    : memchr(rec, '\n', len - pos);
        if (nl == NULL && !final)
            break;
        const char *end = nl ? nl : buf + len;
        size_t next = (size_t)(end - buf) + (nl ? 1 : 0);
        size_t rawlen = (size_t)(end - rec);
        if (rawlen > 0 && rec[rawlen - 1] == '\r')
            rawlen--;
        bool header = how->header && pos == 0 && res->records == 0;
        bool skip = how->skip_blank == 1 ? rawlen == 0
                    : how->skip_blank == 2 && blank(rec, rec + rawlen);
        if (header || skip) {
            res->records += header;
            pos = next;
            res->consumed = (int64_t)pos;
            continue;
        }
        if (how->end_marker && rawlen == 2 && rec[0] == '\\' && rec[1] == '.') {
            res->consumed = (int64_t)len;
            break;
        }
        int64_t recno = res->records++;
        const char *why;
        size_t bad;
        if (rawlen > spec->max_record_bytes) {
            why = arena_printf(a, "record of %zu bytes exceeds max_record_bytes (%zu)", rawlen,
                               spec->max_record_bytes);
        } else if ((bad = sl_utf8_invalid(rec, rawlen)) < rawlen) {
            char msg[96];
            sl_utf8_message(rec + bad, rawlen - bad, msg, sizeof(msg));
            why = arena_printf(a, "%s at byte %zu", msg, bad);
        } else
            why = how->decode(spec, rec, rec + rawlen, b, b->nrows, a);
        if (why != NULL)
            fmt_add_dead(res, a, recno, (int64_t)pos, why, rec, rawlen);
        else
            b->nrows++;
        pos = next;
        res->consumed = (int64_t)pos;
    }
    for (uint32_t c = 0; c < b->ncols; c++)
        b->cols[c].len = b->nrows;
    return 0;
}
