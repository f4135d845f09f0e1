/*
 * numeric_arith.h -- exact decimal arithmetic for NUMERIC (numeric_arith.c),
 * over the values of types/numeric.h (which this includes).
 *
 * Results follow PostgreSQL 15's numeric.c: + and - keep the larger scale,
 * * adds the scales, / picks its scale with select_div_scale() and rounds
 * half away from zero, % truncates; NaN and +-Infinity behave as there.
 * Every result's digits are allocated in the arena passed; inputs are never
 * changed.  Functions that can fail return -1 with err set.
 */
#ifndef SLUICE_FUNCTIONS_NUMERIC_ARITH_H
#define SLUICE_FUNCTIONS_NUMERIC_ARITH_H

#include "types/numeric.h"

int    num_add(Arena *a, const SlNumeric *x, const SlNumeric *y, SlNumeric *out, SlError *err);
int    num_sub(Arena *a, const SlNumeric *x, const SlNumeric *y, SlNumeric *out, SlError *err);
int    num_mul(Arena *a, const SlNumeric *x, const SlNumeric *y, SlNumeric *out, SlError *err);
int    num_div(Arena *a, const SlNumeric *x, const SlNumeric *y, SlNumeric *out, SlError *err);
int    num_mod(Arena *a, const SlNumeric *x, const SlNumeric *y, SlNumeric *out, SlError *err);
void   num_neg(const SlNumeric *x, SlNumeric *out);
void   num_abs(const SlNumeric *x, SlNumeric *out);
/* Rounds (or truncates) at 10^-scale for any scale, negative ones too. */
void   num_round_to(Arena *a, const SlNumeric *x, int scale, bool trunc, SlNumeric *out);
/* x / y rounded to rscale fraction digits. */
int    num_div_round(Arena *a, const SlNumeric *x, const SlNumeric *y, int rscale,
                     SlNumeric *out, SlError *err);
/* x / y truncated to an integer (div()). */
int    num_div_trunc(Arena *a, const SlNumeric *x, const SlNumeric *y, SlNumeric *out,
                     SlError *err);

#endif /* SLUICE_FUNCTIONS_NUMERIC_ARITH_H */
