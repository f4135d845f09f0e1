/*
 * agg_int.h -- what the aggregate files of src/exec/ share (agg.c,
 * agg_stats.c; not for use outside the module): the row loop, a result's
 * null flag, a numeric kept in a state (NumBuf), fixed states' bytes as
 * their serialized form, the reader of serialized states, and the statistics aggregates' rows (agg_stats.c).
 */
#ifndef SLUICE_EXEC_AGG_INT_H
#define SLUICE_EXEC_AGG_INT_H
#include "sluice/exec.h"

/* Runs the body for each selected row, i its row number. */
#define FOR_ROWS(sel, n, ...)                                         \
    do {                                                              \
        for (uint32_t k_ = 0; k_ < (n); k_++) {                       \
            uint32_t i = (sel) ? (sel)[k_] : k_;                      \
            __VA_ARGS__                                               \
        }                                                             \
    } while (0)

static inline void set_null(Vector *out, uint32_t row)
{
    out->nulls[row] = 1;
}

static inline void set_value(Vector *out, uint32_t row)
{
    out->nulls[row] = 0;
}

/* A numeric kept in a state: digits in a buffer (in the states' arena)
 * reused while it fits. */
typedef struct NumBuf {
    SlNumeric v;
    uint8_t  *buf;
    int32_t   cap;
    int32_t   pad;
} NumBuf;

static inline void numbuf_set(Arena *a, NumBuf *nb, const SlNumeric *x)
{
    if (x->ndigits > nb->cap) {
        nb->cap = SL_MAX(x->ndigits, nb->cap * 2);
        nb->buf = arena_alloc(a, (size_t)nb->cap);
    }
    if (x->ndigits > 0)
        memcpy(nb->buf, x->digits, (size_t)x->ndigits);
    nb->v = *x;
    nb->v.digits = nb->buf;
}

/* Reads little pieces of a serialized state; bad once it runs out. */
typedef struct Reader {
    const uint8_t *p, *end;
    bool           bad;
} Reader;

static inline void rd(Reader *r, void *dst, size_t n)
{
    if ((size_t)(r->end - r->p) < n) {
        r->bad = true;
        memset(dst, 0, n);
        return;
    }
    memcpy(dst, r->p, n);
    r->p += n;
}

/* Fixed states serialize as their bytes. */
static inline void ser_raw(const AggFunc *f, const void *st, StrBuf *out)
{
    strbuf_append(out, st, f->state_size);
}

static inline int deser_raw(AggCtx *cx, const AggFunc *f, void *st, const void *p, size_t n)
{
    if (n != f->state_size)
        return sl_error(cx->err, ERRCODE_DATA_CORRUPTED, "a stored %s state is corrupt",
                        ex_agg_sig(f->id)->name);
    memcpy(st, p, n);
    return 0;
}

/* An int128 as numeric, digits in arena a (agg.c). */
void ex_num_from_int128(Arena *a, __int128 v, SlNumeric *out);

/* The executor's row of a statistics aggregate (AGG_STDDEV_INT2 ..
 * AGG_REGR_SYY). */
const AggFunc *ex_agg_stats_func(AggId id);
/* ... of an ordered-set aggregate (AGG_PERCENTILE_CONT .. AGG_MODE,
 * agg_ordered.c). */
const AggFunc *ex_agg_ordered_func(AggId id);

#endif /* SLUICE_EXEC_AGG_INT_H */
