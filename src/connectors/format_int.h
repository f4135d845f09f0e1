/*
 * format_int.h -- what the record decoders share (format_lines.c).  Not for
 * use outside src/connectors/.
 *
 *   fmt_decode_lines  the record loop: framing, partial last records,
 *                     blank lines, a header, max_record_bytes, dead letters
 *   fmt_store_field   a field's text into its column (the type's input
 *                     function), or the reason it cannot be
 *   fmt_add_dead      record a dead letter
 *   fmt_store_fast    plain integers and ISO timestamps without the input
 *                     function, when the text is one
 */
#ifndef SLUICE_CONNECTORS_FORMAT_INT_H
#define SLUICE_CONNECTORS_FORMAT_INT_H

#include "sluice/format.h"

/* Decodes record [rec, end) into row `row` of b; NULL, or the reason (a
 * string that outlives the call: static or in a). */
typedef const char *(*fmt_record_fn)(const FmtSpec *spec, const char *rec, const char *end,
                                     Batch *b, uint32_t row, Arena *a);
/* The end of the record starting at p (its newline), or NULL if the
 * buffer ends first. */
typedef const char *(*fmt_frame_fn)(const FmtSpec *spec, const char *p, const char *end);

typedef struct FmtLines {
    fmt_frame_fn  frame;        /* NULL: the next newline */
    fmt_record_fn decode;
    int           skip_blank;   /* lines that are not records: 0 none, 1 empty ones,
                                 * 2 white space only */
    bool          header;       /* the input's first record is a header */
    bool          end_marker;   /* a line "\." ends the data (COPY text) */
} FmtLines;

int  fmt_decode_lines(const FmtLines *how, const FmtSpec *spec, const char *buf, size_t len,
                      bool final, Batch *b, uint32_t cap, Arena *a, FmtResult *res);
const char *fmt_store_field(const FmtSpec *spec, Batch *b, uint32_t c, uint32_t row,
                            const char *text, size_t len, Arena *a);
/* Stores text into row `row` of v (nulls included) if it is a plain
 * decimal integer for an integer column or "YYYY-MM-DD HH:MM:SS[.ffffff]"
 * for a timestamp column; false leaves v as it was, for the input
 * function, which has PostgreSQL's rules and messages. */
bool fmt_store_fast(Vector *v, uint32_t row, const char *text, size_t len);
void fmt_add_dead(FmtResult *res, Arena *a, int64_t record, int64_t offset,
                  const char *reason, const char *raw, size_t rawlen);

#endif /* SLUICE_CONNECTORS_FORMAT_INT_H */
