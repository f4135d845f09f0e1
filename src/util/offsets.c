/*
 * offsets.c -- the offset ranges of a micro-batch, one per source
 * partition (offsets.h).
 *
 *   srcoffs_free, srcoffs_copy, srcoffs_find, srcoffs_add, srcoffs_reached
 *
 * A SourceOffsets is a small array searched linearly (a source has a few
 * partitions); parts is sl_malloc'ed and grows by doubling.  Pure
 * bookkeeping with no other module below it: the connectors (a Kafka
 * source's kept and committed positions) and the engine (a query's
 * positions and batch ranges) both use it; how a source writes them into
 * the offset log (srcoffs_to_json, srcoffs_from_json) is the engine's
 * (runtime/source.c).
 */
#include "sluice/offsets.h"

#include <string.h>

void srcoffs_free(SourceOffsets *o)
{
    sl_free(o->parts);
    memset(o, 0, sizeof(*o));
}

void srcoffs_copy(SourceOffsets *dst, const SourceOffsets *src)
{
    if (dst == src)
        return;
    dst->n = 0;
    for (int i = 0; i < src->n; i++)
        srcoffs_add(dst, src->parts[i].topic, src->parts[i].part, src->parts[i].start,
                    src->parts[i].end);
}

SrcPart *srcoffs_find(const SourceOffsets *o, int32_t topic, int32_t part)
{
    for (int i = 0; i < o->n; i++)
        if (o->parts[i].topic == topic && o->parts[i].part == part)
            return &o->parts[i];
    return NULL;
}

SrcPart *srcoffs_add(SourceOffsets *o, int32_t topic, int32_t part, int64_t start, int64_t end)
{
    SrcPart *p = srcoffs_find(o, topic, part);
    if (p == NULL) {
        if (o->n == o->cap) {
            o->cap = o->cap ? o->cap * 2 : 8;
            o->parts = sl_realloc(o->parts, sizeof(SrcPart) * (size_t)o->cap);
        }
        p = &o->parts[o->n++];
        p->topic = topic;
        p->part = part;
    }
    p->start = start;
    p->end = end;
    return p;
}

bool srcoffs_reached(const SourceOffsets *pos, const SourceOffsets *limit)
{
    for (int i = 0; i < limit->n; i++) {
        const SrcPart *l = &limit->parts[i];
        const SrcPart *p = srcoffs_find(pos, l->topic, l->part);
        if ((p == NULL ? l->start : p->end) < l->end)
            return false;
    }
    return true;
}
