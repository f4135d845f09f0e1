/*
 * format.h -- record decoders: bytes of JSON lines or CSV -> column vectors.
 *
 *   fmt_spec_init     describe the target columns (and JSON paths)
 *   fmt_json_decode   JSON lines -> rows
 *   fmt_csv_decode    CSV lines -> rows
 *   fmt_text_decode   PostgreSQL COPY text lines -> rows
 *
 * A decoder appends the good records of a buffer as rows of a Batch laid
 * out as the stream's columns, and reports every record it cannot decode as
 * a DeadLetter: its raw bytes, its position and the reason.  Nothing is
 * dropped silently.  Decoding is schema-directed: the decoder knows each
 * column's type and converts a field straight into its vector (no tree of
 * values per record, no allocation per field except string bytes, which go
 * to the batch's arena).
 *
 * Choice of decoder (docs/benchmarks.md, "Record decoding"): the JSON
 * decoder is our own because a schema-directed single pass measured well
 * over twice as fast as building a json-c object per line and reading the
 * fields out of it.
 */
#ifndef SLUICE_FORMAT_H
#define SLUICE_FORMAT_H

#include "sluice/error.h"
#include "sluice/types.h"

#define FMT_MAX_PATH 8

/* One target column: its type and, for JSON, the path of keys to it. */
typedef struct FmtColumn {
    const char *name;
    SlType      type;
    int         npath;
    const char *path[FMT_MAX_PATH];  /* default: the column name */
    size_t      pathlen[FMT_MAX_PATH];
    /* JSON, flat keys: the first key and its closing quote, zero padded,
     * compared in place with the input (format_json.c, predict_key);
     * keyq_len 0 when the key holds a quote or a backslash or is over 15
     * bytes, which are matched the general way. */
    char        keyq[16];
    uint8_t     keyq_len;
} FmtColumn;

typedef struct FmtSpec {
    int        ncols;
    FmtColumn *cols;
    int       *all_cols;            /* 0 .. ncols-1, for the JSON decoder */
    bool       flat_keys;           /* JSON: every path is one key, no two alike */
    uint64_t   key_lengths;         /* JSON, flat keys: bit n set if a column's key is
                                     * n bytes (bit 63: 63 or more); 0: not known */
    size_t     max_record_bytes;    /* larger records are dead letters */
    /* CSV */
    char       delimiter;
    char       quote;
    bool       header;              /* skip the first line of the input */
    const char *null_string;        /* unquoted field that means NULL ("" default) */
    /* need[c]: column c is read at all (NULL: every column).  A value of an
     * unread text column is checked as always (JSON syntax, escapes) but
     * not copied, and the column is left NULL; other types are converted
     * as always, since their input function is the check.  So a record is
     * a dead letter for the same reasons whatever the reader reads. */
    const uint8_t *need;
} FmtSpec;

typedef struct DeadLetter {
    int64_t     record;     /* 0-based record number within the input */
    int64_t     offset;     /* byte offset of the record within the input */
    const char *reason;
    SlStr       raw;        /* the record's bytes (points into the input) */
} DeadLetter;

typedef struct FmtResult {
    int64_t     records;    /* records seen (good + bad) */
    int64_t     consumed;   /* bytes consumed: whole records only */
    DeadLetter *dead;       /* in the arena */
    int         ndead;
    int         capdead;
} FmtResult;

/* Columns from names and types; JSON paths default to the name.  path_spec
 * for a column may be a dotted path ("meta.ts") or NULL. */
void fmt_spec_init(FmtSpec *spec, Arena *a, int ncols, const char *const *names,
                   const SlType *types, const char *const *paths);

/* Decodes whole records (lines) of buf into b, starting at row b->nrows and
 * stopping when b is full (cap rows) or the input ends; a last line without
 * its newline counts as a record only when final is set.  Strings go to
 * arena a.  Returns 0; -1 only for errors that are not a record's fault. */
int fmt_json_decode(const FmtSpec *spec, const char *buf, size_t len, bool final,
                    Batch *b, uint32_t cap, Arena *a, FmtResult *res, SlError *err);
int fmt_csv_decode(const FmtSpec *spec, const char *buf, size_t len, bool final,
                   Batch *b, uint32_t cap, Arena *a, FmtResult *res, SlError *err);
/* The text format: delimiter (tab), null_string (backslash-N), escapes;
 * a line of backslash-dot ends the data. */
int fmt_text_decode(const FmtSpec *spec, const char *buf, size_t len, bool final,
                    Batch *b, uint32_t cap, Arena *a, FmtResult *res, SlError *err);

#endif /* SLUICE_FORMAT_H */
