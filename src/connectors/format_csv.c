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
#include "format_int.h"

#include <stdio.h>


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
        const CsvField *fld = &f[c];
        b->cols[c].nulls[row] = 1;
        if (!fld->quoted && fld->len == nulllen &&
            memcmp(fld->ptr, spec->null_string, nulllen) == 0)
            continue;
        const char *why = fmt_store_field(spec, b, c, row, fld->ptr, fld->len, a);
        if (why != NULL)
            return why;
    }
    return NULL;
}

int fmt_csv_decode(const FmtSpec *spec, const char *buf, size_t len, bool final, Batch *b,
                   uint32_t cap, Arena *a, FmtResult *res, SlError *err)
{
    SL_UNUSED(err);
    FmtLines how = {.frame = record_end, .decode = decode_record, .skip_blank = 1,
                    .header = spec->header};
    return fmt_decode_lines(&how, spec, buf, len, final, b, cap, a, res);
}
