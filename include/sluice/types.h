/*
 * types.h -- SQL types, their physical form in column vectors, and batches.
 *
 * A Vector is one column of a Batch: a dense array of values of one type
 * plus an optional null map.  Operators and the expression evaluator work a
 * vector at a time; nothing is allocated per row.  Vectors' memory lives in
 * the arena of the work that made them (statement or micro-batch).
 */
#ifndef SLUICE_TYPES_H
#define SLUICE_TYPES_H

#include "sluice/common.h"
#include "sluice/arena.h"
#include "sluice/error.h"
#include "sluice/strbuf.h"

typedef enum SlTypeId {
    TYPE_UNKNOWN = 0,   /* an untyped string literal or NULL, not yet resolved */
    TYPE_BOOL,
    TYPE_INT2,
    TYPE_INT4,
    TYPE_INT8,
    TYPE_FLOAT4,
    TYPE_FLOAT8,
    TYPE_NUMERIC,
    TYPE_TEXT,
    TYPE_VARCHAR,
    TYPE_BYTEA,
    TYPE_DATE,
    TYPE_TIMESTAMP,
    TYPE_TIMESTAMPTZ,
    TYPE_INTERVAL,
    TYPE_JSONB,
    TYPE__COUNT
} SlTypeId;

typedef struct SlType {
    SlTypeId id;
    int32_t  typmod;    /* -1 when none; varchar(n): n; numeric(p,s): p<<16|s */
} SlType;

/* A string value: bytes owned by an arena or by the input buffer. */
typedef struct SlStr {
    const char *ptr;
    uint32_t    len;
} SlStr;

/* An exact decimal (NUMERIC): value = sign * digits * 10^-scale.
 * digits are decimal digits 0..9, most significant first, without leading
 * zeros (zero has ndigits 0); scale is also the display scale, so 1.50 is
 * {"150", 3, 2}.  digits live in the arena of the vector that holds the
 * value.  See numeric.h for the arithmetic. */
typedef enum SlNumSign {
    NUM_POS = 0, NUM_NEG, NUM_NAN, NUM_PINF, NUM_NINF
} SlNumSign;

typedef struct SlNumeric {
    const uint8_t *digits;
    int32_t        ndigits;
    int32_t        scale;
    uint8_t        sign;    /* SlNumSign */
} SlNumeric;

/* PostgreSQL's interval: months, days and microseconds kept apart. */
typedef struct SlInterval {
    int64_t usec;
    int32_t days;
    int32_t months;
} SlInterval;

typedef struct Vector {
    SlType   type;
    uint32_t len;
    uint8_t *nulls;     /* NULL: no nulls; otherwise nulls[i] != 0 is NULL */
    union {
        void       *data;
        uint8_t    *b;      /* BOOL */
        int16_t    *i16;    /* INT2 */
        int32_t    *i32;    /* INT4, DATE (days since 2000-01-01) */
        int64_t    *i64;    /* INT8, TIMESTAMP[TZ] (usec since 2000-01-01) */
        float      *f32;    /* FLOAT4 */
        double     *f64;    /* FLOAT8 */
        SlStr      *str;    /* TEXT, VARCHAR, BYTEA, JSONB, UNKNOWN */
        SlNumeric  *num;    /* NUMERIC */
        SlInterval *iv;     /* INTERVAL */
    } v;
} Vector;

typedef struct Batch {
    uint32_t nrows;
    uint32_t ncols;
    Vector  *cols;
} Batch;

/* The PostgreSQL type OID clients see for a type. */
uint32_t    type_oid(SlTypeId id);
/* PostgreSQL's typlen for RowDescription: -1 for variable length. */
int16_t     type_len(SlTypeId id);
/* The SQL name, as format_type() prints it ("integer", "text"). */
const char *type_name(SlTypeId id);
/* Bytes per value in a vector's data array. */
size_t      type_width(SlTypeId id);
static inline SlType sl_type(SlTypeId id) { SlType t = {id, -1}; return t; }

/* sluice has no array types yet: an array is TEXT holding the array's text
 * form ('{1,2}'), and the typmod of such a text says which element type it
 * holds, when known (int2[] in a cast or a catalog column), so that a
 * subscript gives the element's type.  Never stored; clients see text. */
#define TYPMOD_ARRAY 0x7E000000
static inline bool type_is_array_of(SlType t, SlTypeId *elem)
{
    if (t.id != TYPE_TEXT || t.typmod <= TYPMOD_ARRAY || t.typmod >= TYPMOD_ARRAY + TYPE__COUNT)
        return false;
    *elem = (SlTypeId)(t.typmod - TYPMOD_ARRAY);
    return true;
}

/* Allocates a vector of len values in arena a; nulls map only if with_nulls. */
void vector_init(Vector *v, Arena *a, SlType type, uint32_t len, bool with_nulls);
static inline bool vector_is_null(const Vector *v, uint32_t i)
{
    return v->nulls != NULL && v->nulls[i] != 0;
}

/* ----------------------------------------------- input and output (types/) */

/* Appends the PostgreSQL text output form of row i (not NULL) to out. */
void value_format_text(const Vector *v, uint32_t i, StrBuf *out);
/* Text input of a value of type t into row i of v (types.c): what a cast
 * from text does and what text-format parameters go through.  Errors are
 * PostgreSQL's ("invalid input syntax for type integer: \"abc\""), at
 * position loc (-1: none). */
int value_parse_text(Arena *a, SlType t, const char *s, size_t len, Vector *v, uint32_t i,
                     int loc, SlError *err);
/* jsonb's input function: the canonical text of s in the arena (jsonb.c). */
int jsonb_parse(Arena *a, const char *s, size_t len, SlStr *out, int loc, SlError *err);
/* Hex digits into bytes, as PostgreSQL's hex_decode (bytea input, decode();
 * spaces between pairs are skipped): the byte count, or -1 with err set. */
int64_t bytea_hex_decode(const char *s, size_t len, char *out, int loc, SlError *err);
/* Appends row i of v (not NULL) in PostgreSQL's binary format, as the
 * type's send function writes it (binary.c); -1 for a type without one. */
int value_send_binary(const Vector *v, uint32_t i, StrBuf *out);
/* A value in PostgreSQL's binary format (len bytes at data, as the type's
 * recv function reads it) into row `row` of v, memory in a (binary.c).  A
 * malformed value is 22P03, "in bind parameter n" when param > 0; a type
 * without a binary form 0A000. */
int value_recv_binary(Arena *a, SlType t, const char *data, int32_t len, Vector *v,
                      uint32_t row, int param, SlError *err);

/* The name format_type() gives a type with its modifier: "numeric(10,2)",
 * "character varying(3)".  Returns buf. */
const char *type_format(SlType t, char *buf, size_t size);
/* The type with this pg_type name ("int4", "float8", "text"), or
 * TYPE_UNKNOWN if sluice has no such type.  Used for generic type names. */
SlTypeId    type_by_name(const char *name);
/* PostgreSQL's type category letter (B, N, S, D, T, U, X for unknown) and
 * whether the type is its category's preferred type. */
char        type_category(SlTypeId id);
bool        type_is_preferred(SlTypeId id);

#endif /* SLUICE_TYPES_H */
