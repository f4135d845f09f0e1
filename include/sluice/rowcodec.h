/*
 * rowcodec.h -- rows of column vectors as bytes, for RocksDB values and keys.
 *
 *   row_encode     one row of a batch -> bytes (appended to a StrBuf)
 *   row_decode     bytes -> one row of a batch whose vectors are allocated
 *   key_encode     chosen columns of a row -> a key whose byte order is the
 *                  columns' value order (for primary keys and group keys)
 *   key_type_ok    can a column of this type be part of such a key?
 *   batch_alloc    a batch of empty vectors with null maps, for decoding
 *
 * Value format: a null bitmap (one bit per column), then each non-null
 * value: fixed-width types as their little-endian bytes, strings as a
 * varint length and the bytes, numeric as sign, scale, digit count and
 * digits, interval as its three fields.  The format carries no types: the
 * reader knows the relation's columns.
 */
#ifndef SLUICE_ROWCODEC_H
#define SLUICE_ROWCODEC_H

#include "sluice/error.h"
#include "sluice/strbuf.h"
#include "sluice/types.h"

void row_encode(const Batch *b, uint32_t row, StrBuf *out);
/* Decodes into row `row` of b (its vectors must have room and null maps);
 * variable-length values are copied into arena a.  Returns 0, or -1 if the
 * bytes are not a row of this shape. */
int  row_decode(const void *p, size_t n, Batch *b, uint32_t row, Arena *a);

bool key_type_ok(SlTypeId t);
/* Appends the key of the given columns of a row; NULLs sort first. */
void key_encode(const Batch *b, uint32_t row, const int *cols, int ncols, StrBuf *out);

/* A batch of ncols vectors of the given types with room for cap rows, each
 * with a null map; nrows = 0. */
Batch *batch_alloc(Arena *a, const SlType *types, uint32_t ncols, uint32_t cap);

#endif /* SLUICE_ROWCODEC_H */
