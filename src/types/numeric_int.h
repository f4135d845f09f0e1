/*
 * numeric_int.h -- what the NUMERIC type (types/numeric.c) and its
 * arithmetic (functions/numeric_arith.c) share: the magnitude helpers.
 * Not for use elsewhere.
 *
 * A magnitude is decimal digits, one per byte, most significant first.
 */
#ifndef SLUICE_TYPES_NUMERIC_INT_H
#define SLUICE_TYPES_NUMERIC_INT_H

#include "types/numeric.h"

/* Makes a value from a magnitude (may have leading zeros) in the arena. */
void num_make(Arena *a, const uint8_t *mag, int n, int scale, bool neg, SlNumeric *out);
/* Compares two magnitudes at the same scale given as (digits, n, pad): the
 * value is digits followed by pad zeros. */
int  num_mag_cmp_padded(const uint8_t *a, int na, int pada, const uint8_t *b, int nb,
                        int padb);
/* |x| vs |y|, both finite. */
int  num_abs_cmp(const SlNumeric *x, const SlNumeric *y);
/* out = NaN or an infinity (sign is NUM_NAN, NUM_PINF or NUM_NINF). */
void num_set_special(SlNumeric *out, uint8_t sign);
bool num_is_inf(const SlNumeric *x);
/* The index of x's first nonzero digit (ndigits when there is none). */
int  num_first_nonzero(const SlNumeric *x);

#endif /* SLUICE_TYPES_NUMERIC_INT_H */
