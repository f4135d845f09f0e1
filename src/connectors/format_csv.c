/*
 * format_csv.c -- the CSV decoder (see format.h).
 *
 *   fmt_csv_decode
 *
 * PostgreSQL's COPY ... CSV rules: fields split on the delimiter; a quoted
 * field may hold delimiters, newlines and doubled quotes; an unquoted field
 * equal to the null string (empty by default) is NULL, a quoted empty field
 * is an empty string.  A record with too many or too few fields, or a field
 * its column's input function refuses, is a dead letter with PostgreSQL's
 * message.
 */
#include "sluice/expr.h"
#include "sluice/format.h"

#include <stdio.h>

void fmt_add_dead(FmtResult *res, Arena *a, int64_t record, int64_t offset,
                  const char *reason, const char *raw, size_t rawlen);

/* Finds the end of the record that starts at p: the newline outside
 * quotes.  Returns NULL if the buffer ends first. */
static const char *record_end(const FmtSpec *spec, const char *p, const char *end)
{
    bool quoted = false;
    for (; p < end; p++) {
        if (*p == spec->quote)
            quoted = !quoted;   /* a doubled quote toggles twice */
        else if (*p == '\n' && !quoted)
            return p;
    }
    return NULL;
}

typedef struct CsvField {
    const char *ptr;
    size_t      len;
    bool        quoted;
} CsvField;

/* Decodes one record [p, end) into row `row`; returns NULL or the reason
 * (in a).  The fields are split first, so a wrong field count is reported
 * as PostgreSQL's COPY reports it, before any conversion. */
static const char *decode_record(const FmtSpec *spec, const char *p, const char *end,
                                 Batch *b, uint32_t row, Arena *a)
{
    uint32_t ncols = b->ncols, nf = 0;
    CsvField *f = ARENA_ARRAY(a, CsvField, ncols + 1);
    char msg[300];
    for (;;) {
        if (nf == ncols + 1)
            return "extra data after last expected column";
        CsvField *fld = &f[nf++];
        fld->quoted = false;
        if (p < end && *p == spec->quote) {
            fld->quoted = true;
            p++;
            char *unq = arena_alloc(a, (size_t)(end - p) + 1);
            size_t n = 0;
            for (;;) {
                if (p >= end)
                    return "unterminated CSV quoted field";
                if (*p == spec->quote) {
                    if (p + 1 < end && p[1] == spec->quote) {
                        unq[n++] = spec->quote;
                        p += 2;
                        continue;
                    }
                    p++;
                    break;
                }
                unq[n++] = *p++;
            }
            unq[n] = '\0';
            fld->ptr = unq;
            fld->len = n;
            if (p < end && *p != spec->delimiter)
                return "unexpected character after a quoted CSV field";
        } else {
            const char *fs = p;
            while (p < end && *p != spec->delimiter)
                p++;
            fld->ptr = fs;
            fld->len = (size_t)(p - fs);
        }
        if (p >= end)
            break;
        p++;    /* the delimiter */
    }
    if (nf > ncols)
        return "extra data after last expected column";
    if (nf < ncols) {
        snprintf(msg, sizeof(msg), "missing data for column \"%s\"", spec->cols[nf].name);
        return arena_strdup(a, msg);
    }
    size_t nulllen = strlen(spec->null_string);
    for (uint32_t c = 0; c < ncols; c++) {
        Vector *v = &b->cols[c];
        const CsvField *fld = &f[c];
        v->nulls[row] = 1;
        if (!fld->quoted && fld->len == nulllen &&
            memcmp(fld->ptr, spec->null_string, nulllen) == 0)
            continue;
        SlTypeId t = v->type.id;
        if (t == TYPE_TEXT || t == TYPE_UNKNOWN) {
            v->v.str[row].ptr = fld->quoted ? fld->ptr : arena_strndup(a, fld->ptr, fld->len);
            v->v.str[row].len = (uint32_t)fld->len;
        } else {
            SlError e = {0};
            if (value_parse_text(a, v->type, fld->ptr, fld->len, v, row, -1, &e) < 0) {
                snprintf(msg, sizeof(msg), "column %s: %s", spec->cols[c].name,
                         e.message ? e.message : "invalid value");
                sl_error_clear(&e);
                return arena_strdup(a, msg);
            }
        }
        v->nulls[row] = 0;
    }
    return NULL;
}

int fmt_csv_decode(const FmtSpec *spec, const char *buf, size_t len, bool final, Batch *b,
                   uint32_t cap, Arena *a, FmtResult *res, SlError *err)
{
    SL_UNUSED(err);
    size_t pos = (size_t)res->consumed;
    while (pos < len && b->nrows < cap) {
        const char *rec = buf + pos;
        const char *nl = record_end(spec, rec, buf + len);
        if (nl == NULL && !final)
            break;
        const char *end = nl ? nl : buf + len;
        size_t next = (size_t)(end - buf) + (nl ? 1 : 0);
        size_t rawlen = (size_t)(end - rec);
        if (rawlen > 0 && rec[rawlen - 1] == '\r')
            rawlen--;
        bool header = spec->header && pos == 0 && res->records == 0;
        if (rawlen == 0 || header) {
            if (header)
                res->records++;
            pos = next;
            res->consumed = (int64_t)pos;
            continue;
        }
        int64_t recno = res->records++;
        const char *why = NULL;
        char big[128];
        if (rawlen > spec->max_record_bytes) {
            snprintf(big, sizeof(big), "record of %zu bytes exceeds max_record_bytes (%zu)",
                     rawlen, spec->max_record_bytes);
            why = big;
        } else {
            why = decode_record(spec, rec, rec + rawlen, b, b->nrows, a);
        }
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
