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
    TYPE_UUID,          /* 16 bytes in an SlStr, compared byte-wise (types.c) */
    TYPE_BPCHAR,        /* character(n): its text padded with spaces to n
                         * characters (typmod n; -1 bpchar, unpadded),
                         * compared without its trailing spaces (types.c) */
    TYPE_ARRAY,         /* a one-dimensional array of SlType.elem (array.c) */
    TYPE__COUNT
} SlTypeId;

/* The scalar types are those below TYPE_ARRAY: an array's element type is
 * one of them (arrays of arrays are multi-dimensional arrays, refused). */
#define TYPE__NSCALAR TYPE_ARRAY

typedef struct SlType {
    SlTypeId id;
    int32_t  typmod;    /* -1 when none; varchar(n): n; numeric(p,s): p<<16|s;
                         * an array: its element's (varchar(3)[]: 3) */
    SlTypeId elem;      /* TYPE_ARRAY: the element type; else TYPE_UNKNOWN */
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
        SlStr      *str;    /* TEXT, VARCHAR, BPCHAR, BYTEA, JSONB, UUID, UNKNOWN, ARRAY */
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
static inline SlType sl_type(SlTypeId id) { SlType t = {id, -1, TYPE_UNKNOWN}; return t; }

/* ------------------------------------------------------ arrays (array.c)
 *
 * An array type is TYPE_ARRAY with its element type in SlType.elem (any
 * type below TYPE__NSCALAR) and the element's typmod in typmod.  A value
 * is an SlStr holding the array in PostgreSQL's binary form, array_send's
 * layout, kept canonical (so equal arrays of the same type have equal
 * bytes when their elements' binary forms are canonical):
 *   int32 ndim (0: empty, else 1), int32 has_nulls (0/1), uint32 element
 *   OID, per dimension int32 length and int32 lower bound (always 1), then
 *   per element int32 length (-1: NULL) and the element's send form.
 * Multi-dimensional arrays and lower bounds other than 1 are refused
 * (0A000).  Text form: PostgreSQL's array_in / array_out. */
static inline SlType sl_array_type(SlTypeId elem, int32_t typmod)
{
    SlType t = {TYPE_ARRAY, typmod, elem};
    return t;
}
/* The element type of an array type (TYPE_UNKNOWN for a non-array). */
static inline SlType type_elem(SlType t)
{
    SlType e = {t.id == TYPE_ARRAY ? t.elem : TYPE_UNKNOWN, t.id == TYPE_ARRAY ? t.typmod : -1,
                TYPE_UNKNOWN};
    return e;
}
/* Whether two types are the same type (arrays: of the same element). */
static inline bool type_same(SlType a, SlType b)
{
    return a.id == b.id && (a.id != TYPE_ARRAY || a.elem == b.elem);
}
/* PostgreSQL's array type OID of an element type (pg_type.typarray: int4
 * -> 1007), 0 if none. */
uint32_t type_array_oid(SlTypeId elem);
/* The OID clients see for t: an array's is its element's typarray. */
uint32_t type_oid_of(SlType t);

/* One element of an array value, as array_next reads it: NULL (null), or
 * len bytes of the element's binary form at data. */
typedef struct ArrayElem {
    const char *data;
    int32_t     len;
    bool        null;
} ArrayElem;

/* Reading an array value's elements in order. */
typedef struct ArrayIter {
    const char *p, *end;
    int32_t     n;      /* element count */
    int32_t     next;   /* 0-based index of the next element */
} ArrayIter;

/* Starts reading arr; its element count in it->n. */
void array_iter_init(ArrayIter *it, const SlStr *arr);
/* The next element; false at the end. */
bool array_next(ArrayIter *it, ArrayElem *el);
/* The element count of an array value. */
int32_t array_count(const SlStr *arr);

/* Builds an array value element by element: begin, add each, finish. */
typedef struct ArrayBuild {
    StrBuf   buf;
    SlTypeId elem;
    int32_t  n;
    bool     has_nulls;
} ArrayBuild;

void array_build_begin(ArrayBuild *b, SlTypeId elem);
/* Appends row i of v (of the element type), NULL if it is. */
void array_build_add(ArrayBuild *b, const Vector *v, uint32_t i);
/* Appends an element already in binary form (array_next's). */
void array_build_add_elem(ArrayBuild *b, const ArrayElem *el);
/* The finished array in arena a; frees the builder. */
void array_build_finish(ArrayBuild *b, Arena *a, SlStr *out);
/* The array of the first n values of v (ARRAY(subquery), array_agg). */
void array_from_vector(Arena *a, const Vector *v, uint32_t n, SlStr *out);
/* Element el of an array of element type t into row i of v (memory in a).
 * The bytes were checked when the array was made: this does not fail. */
void array_elem_value(Arena *a, SlType t, const ArrayElem *el, Vector *v, uint32_t i);
/* All elements of arr into a new vector of type t (with a null map). */
void array_to_vector(Arena *a, SlType t, const SlStr *arr, Vector *out);
/* Text form of an array (array_out: quoting, NULL, {}). */
void array_format_text(const SlStr *arr, SlType elem, StrBuf *out);
/* Text input of an array of element type elem (array_in). */
int array_parse_text(Arena *a, SlType elem, const char *s, size_t len, SlStr *out, int loc,
                     SlError *err);
/* An array in the binary wire format (array_recv): checked element by
 * element with the element's recv function, made canonical. */
int array_recv(Arena *a, SlType elem, const char *data, int32_t len, SlStr *out, int param,
               SlError *err);
/* ORDER BY's order of two arrays of element type elem, as PostgreSQL's
 * array_cmp: element by element (NULL after every value), then by length. */
int array_cmp(const SlStr *x, const SlStr *y, SlType elem);
/* ORDER BY's order of two values of one type, as PostgreSQL's btree
 * comparison of the type (numerics by value, NaN above every float,
 * intervals by span, text byte-wise, arrays by array_cmp). */
int value_cmp(const Vector *a, uint32_t i, const Vector *b, uint32_t j);
/* The length of a character(n) value without its trailing spaces, the
 * part its comparisons, its equality and its cast to text see. */
uint32_t bpchar_len(const SlStr *s);

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
/* PostgreSQL's btree order of two jsonb values (jsonb.c): -1, 0, 1. */
int jsonb_cmp(const SlStr *x, const SlStr *y);
/* Appends a key of a jsonb value that is equal exactly when the values
 * are (numbers without trailing fraction zeros: 1.0 and 1 are one). */
void jsonb_key(const SlStr *j, StrBuf *out);
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
 * "character varying(3)", "integer[]".  Returns buf. */
const char *type_format(SlType t, char *buf, size_t size);
/* The name PostgreSQL's messages give a type: its SQL name without a
 * modifier ("integer", "integer[]"); buf holds an array's.  Returns the
 * name. */
const char *type_display(SlType t, char *buf, size_t size);
/* The type with this pg_type name ("int4", "float8", "text"), or
 * TYPE_UNKNOWN if sluice has no such type.  Used for generic type names. */
SlTypeId    type_by_name(const char *name);
/* pg_type.typname of a scalar type ("int4", "timestamptz"). */
const char *type_typname(SlTypeId id);
/* PostgreSQL's type category letter (B, N, S, D, T, U, X for unknown) and
 * whether the type is its category's preferred type. */
char        type_category(SlTypeId id);
bool        type_is_preferred(SlTypeId id);

#endif /* SLUICE_TYPES_H */
