/*
 * numeric.h -- the NUMERIC type (see SlNumeric, types.h): text input and
 * output, order, rounding, typmods and conversions, as PostgreSQL 15's
 * numeric.c has them (types/numeric.c).  The arithmetic is
 * functions/numeric_arith.h's.
 *
 * Every result's digits are allocated in the arena passed; inputs are never
 * changed.  Functions that can fail return 0 or -1 with err set.
 */
#ifndef SLUICE_TYPES_NUMERIC_H
#define SLUICE_TYPES_NUMERIC_H

#include "sluice/error.h"
#include "sluice/types.h"

/* The largest number of digits before / after the decimal point. */
#define NUM_MAX_INT_DIGITS   131072
#define NUM_MAX_SCALE        16383

/* Parses PostgreSQL's numeric input syntax (leading/trailing spaces, sign,
 * digits, point, exponent, NaN, Infinity).  Returns 0, -1 on bad syntax or
 * -2 when the value is out of range. */
int    num_parse(Arena *a, const char *s, size_t n, SlNumeric *out);
void   num_format(const SlNumeric *x, StrBuf *out);
/* <0, 0, >0; NaN equals NaN and sorts above everything (PostgreSQL's rule). */
int    num_cmp(const SlNumeric *x, const SlNumeric *y);
/* Rounds to a numeric(p,s) typmod; 22003 "numeric field overflow" if the
 * value does not fit. */
int    num_apply_typmod(Arena *a, const SlNumeric *x, int32_t typmod, SlNumeric *out,
                        SlError *err);
/* Rounds half away from zero to scale digits after the point. */
void   num_round(Arena *a, const SlNumeric *x, int scale, SlNumeric *out);
void   num_from_int64(Arena *a, int64_t v, SlNumeric *out);
/* Rounds to an integer; -1 if out of int64 range, -2 for NaN, -3 for an
 * infinity. */
int    num_to_int64(const SlNumeric *x, int64_t *out);
/* A float as numeric, through "%.*g" with digits significant digits
 * (DBL_DIG for float8, FLT_DIG for float4), as PostgreSQL does. */
void   num_from_double(Arena *a, double d, int digits, SlNumeric *out);
double num_to_double(const SlNumeric *x);
bool   num_is_special(const SlNumeric *x);

#endif /* SLUICE_TYPES_NUMERIC_H */
