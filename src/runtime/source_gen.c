/*
 * source_gen.c -- the sources of generated streams: datagen's rows
 * (datagen.h) and the Nexmark events (nexmark.h), both pure functions of
 * the stream's settings and the row's offset.
 *
 *   source_datagen_ops, source_nexmark_ops   (source_int.h)
 *
 * One partition of offsets, (-1, 0); the rows available grow with the
 * clock (rows_per_second).  A nexmark stream with number_of_events is
 * bounded (its ended member); a nexmark reader makes only the columns its
 * user reads (source_reader_need), a datagen reader all of them.
 */
#include "source_int.h"

#include "sluice/datagen.h"
#include "sluice/nexmark.h"
#include "sluice/relstore.h"
#include "sluice/rowcodec.h"

/* Makes rows [from, from + n) into b (need: as source_reader_need). */
typedef void (*GenFill)(const void *g, int64_t from, uint32_t n, const uint8_t *need, Arena *a,
                        Batch *b);

typedef struct GenReader {
    SourceReader   base;
    GenFill        fill;
    int64_t        next, to;
    const uint8_t *need;        /* the columns read, NULL: all */
} GenReader;

static SourceReader *gen_reader_open(Source *src, const SourceOffsets *ranges, GenFill fill)
{
    GenReader *r = sl_calloc(1, sizeof(GenReader));
    r->base.src = src;
    r->fill = fill;
    const SrcPart *p = srcoffs_find(ranges, -1, 0);
    r->next = p ? p->start : 0;
    r->to = p ? p->end : 0;
    return &r->base;
}

/* The next rows of the range, up to RELSTORE_BATCH_ROWS of them, in a batch
 * of a.  Returns how many (0 at the end). */
static int gen_reader_next(SourceReader *r, Arena *a, Batch **out, SlError *err)
{
    (void)err;
    GenReader *g = (GenReader *)r;
    const CatRelation *rel = r->src->rel;
    if (g->next >= g->to)
        return 0;
    uint32_t n = (uint32_t)SL_MIN((int64_t)RELSTORE_BATCH_ROWS, g->to - g->next);
    SlType types[rel->ncols > 0 ? rel->ncols : 1];
    for (int c = 0; c < rel->ncols; c++)
        types[c] = rel->cols[c].type;
    Batch *b = batch_alloc(a, types, (uint32_t)rel->ncols, n);
    g->fill(r->src->impl, g->next, n, g->need, a, b);
    g->next += n;
    *out = b;
    return (int)n;
}

static void gen_reader_need(SourceReader *r, const uint8_t *need)
{
    ((GenReader *)r)->need = need;
}

static int gen_reader_close(SourceReader *r, DeadLetters *dead, SlError *err)
{
    (void)dead;
    (void)err;
    sl_free(r);
    return 0;
}

/* datagen: every column made, need ignored */

static int datagen_src_open(Source *src, const char *owner, SlError *err)
{
    (void)owner;
    Datagen *g = NULL;
    int rc = datagen_open(&src->arena, src->rel, &g, err);
    src->impl = g;
    return rc;
}

static int datagen_src_plan(Source *src, const SourceOffsets *pos, int64_t now_us,
                            SourceOffsets *out, SlError *err)
{
    (void)err;
    return source_plan_one(src, pos, datagen_available(src->impl, now_us), now_us, out);
}

static void datagen_fill(const void *g, int64_t from, uint32_t n, const uint8_t *need, Arena *a,
                         Batch *b)
{
    (void)need;
    datagen_generate(g, from, n, a, b);
}

static SourceReader *datagen_reader_open(Source *src, const SourceOffsets *ranges)
{
    return gen_reader_open(src, ranges, datagen_fill);
}

const SourceOps source_datagen_ops = {
    .open = datagen_src_open,
    .plan = datagen_src_plan,
    .one_part = true,
    .reader_open = datagen_reader_open,
    .reader_next = gen_reader_next,
    .reader_need = gen_reader_need,
    .reader_close = gen_reader_close,
};

/* nexmark: only the columns read made */

static int nexmark_src_open(Source *src, const char *owner, SlError *err)
{
    (void)owner;
    Nexmark *g = NULL;
    int rc = nexmark_open(&src->arena, src->rel, &g, err);
    src->impl = g;
    return rc;
}

static int nexmark_src_plan(Source *src, const SourceOffsets *pos, int64_t now_us,
                            SourceOffsets *out, SlError *err)
{
    (void)err;
    return source_plan_one(src, pos, nexmark_available(src->impl, now_us), now_us, out);
}

static bool nexmark_src_ended(const Source *src, const SourceOffsets *ranges)
{
    int64_t total = nexmark_total(src->impl);
    const SrcPart *p = srcoffs_find(ranges, -1, 0);
    return total >= 0 && p != NULL && p->end >= total;
}

static void nexmark_fill(const void *g, int64_t from, uint32_t n, const uint8_t *need, Arena *a,
                         Batch *b)
{
    nexmark_generate_cols(g, from, n, need, a, b);
}

static SourceReader *nexmark_reader_open(Source *src, const SourceOffsets *ranges)
{
    return gen_reader_open(src, ranges, nexmark_fill);
}

const SourceOps source_nexmark_ops = {
    .open = nexmark_src_open,
    .plan = nexmark_src_plan,
    .ended = nexmark_src_ended,
    .one_part = true,
    .reader_open = nexmark_reader_open,
    .reader_next = gen_reader_next,
    .reader_need = gen_reader_need,
    .reader_close = gen_reader_close,
};
