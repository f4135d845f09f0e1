/*
 * delta.c -- deltas (graph.h): rows with weights, made, appended to and
 * consolidated in a batch's arena.
 *
 *   eng_delta_init         an empty delta of given columns
 *   eng_delta_append       one row of a batch with its weight
 *   eng_delta_consolidate  equal rows summed, rows of weight 0 dropped
 *
 * A delta's vectors are allocated with room for cap rows (Vector.len is
 * the room, Batch.nrows the rows in use) and null maps; appending past the
 * room doubles it.  Values are copied shallowly: a string or numeric of an
 * appended row points where the source row's does, so a delta lives no
 * longer than the deltas it was made from (the batch).
 */
#include "graph.h"
#include "keymap.h"

#include <string.h>

static void alloc_cols(EngDelta *d, Arena *a, const SlType *types, uint32_t cap)
{
    for (uint32_t c = 0; c < d->rows.ncols; c++)
        vector_init(&d->rows.cols[c], a, types[c], cap, true);
    d->weights = ARENA_ARRAY(a, int64_t, cap);
    d->cap = cap;
}

void eng_delta_init(EngDelta *d, Arena *a, const ColumnDesc *cols, int ncols, uint32_t cap)
{
    if (cap == 0)
        cap = 16;
    d->rows.nrows = 0;
    d->rows.ncols = (uint32_t)ncols;
    d->rows.cols = ARENA_ARRAY(a, Vector, ncols > 0 ? ncols : 1);
    SlType types[ncols > 0 ? ncols : 1];
    for (int c = 0; c < ncols; c++)
        types[c] = cols[c].type;
    alloc_cols(d, a, types, cap);
}

static void grow(EngDelta *d, Arena *a)
{
    uint32_t n = d->rows.nrows, cap = d->cap * 2;
    Vector *old = ARENA_ARRAY(a, Vector, d->rows.ncols > 0 ? d->rows.ncols : 1);
    memcpy(old, d->rows.cols, sizeof(Vector) * d->rows.ncols);
    int64_t *ow = d->weights;
    SlType types[d->rows.ncols > 0 ? d->rows.ncols : 1];
    for (uint32_t c = 0; c < d->rows.ncols; c++)
        types[c] = old[c].type;
    alloc_cols(d, a, types, cap);
    for (uint32_t c = 0; c < d->rows.ncols; c++) {
        memcpy(d->rows.cols[c].v.data, old[c].v.data, type_width(old[c].type.id) * n);
        memcpy(d->rows.cols[c].nulls, old[c].nulls, n);
    }
    memcpy(d->weights, ow, sizeof(int64_t) * n);
}

void eng_delta_append(EngDelta *d, Arena *a, const Batch *src, uint32_t r, int64_t w)
{
    if (d->rows.nrows == d->cap)
        grow(d, a);
    uint32_t i = d->rows.nrows++;
    for (uint32_t c = 0; c < d->rows.ncols; c++)
        ex_copy_value(&d->rows.cols[c], i, &src->cols[c], r, NULL);
    d->weights[i] = w;
}

void eng_delta_consolidate(const EngDelta *d, Arena *a, EngDelta *out)
{
    uint32_t n = d->rows.nrows;
    Arena keys;
    arena_init(&keys, 4096);
    EngMap m;
    eng_map_init(&m, &keys);
    /* first[i]: the first row equal to row i; sums at the first rows */
    uint32_t *first = ARENA_ARRAY(a, uint32_t, n > 0 ? n : 1);
    int64_t *sum = ARENA_ARRAY(a, int64_t, n > 0 ? n : 1);
    StrBuf k;
    strbuf_init(&k);
    for (uint32_t i = 0; i < n; i++) {
        sum[i] = 0;
        strbuf_reset(&k);
        ex_key_encode(d->rows.cols, (int)d->rows.ncols, i, &k);
        bool isnew;
        void **slot = eng_map_upsert(&m, k.data, k.len, &isnew);
        if (isnew)
            *slot = (void *)(uintptr_t)(i + 1);
        first[i] = (uint32_t)(uintptr_t)*slot - 1;
        sum[first[i]] += d->weights[i];
    }
    strbuf_free(&k);
    eng_map_free(&m);
    arena_destroy(&keys);
    out->rows.nrows = 0;
    out->rows.ncols = d->rows.ncols;
    out->rows.cols = ARENA_ARRAY(a, Vector, d->rows.ncols > 0 ? d->rows.ncols : 1);
    SlType types[d->rows.ncols > 0 ? d->rows.ncols : 1];
    for (uint32_t c = 0; c < d->rows.ncols; c++)
        types[c] = d->rows.cols[c].type;
    alloc_cols(out, a, types, n > 0 ? n : 1);
    for (uint32_t i = 0; i < n; i++)
        if (first[i] == i && sum[i] != 0)
            eng_delta_append(out, a, &d->rows, i, sum[i]);
}
