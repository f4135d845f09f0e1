/*
 * offsets.h -- the offsets of a micro-batch: one range per source
 * partition (src/util/offsets.c).
 *
 *   srcoffs_free, srcoffs_copy, srcoffs_find, srcoffs_add, srcoffs_reached
 *
 * util's, so that the connectors and the engine share it without calling
 * each other; source.h adds their JSON form in the offset log.
 *
 * A partition is named by a topic (an index into its source's topic table,
 * -1 for internal and generated streams) and a partition number.  A batch
 * reads [start, end) of each; as a query's positions, end is the next
 * offset to read.
 */
#ifndef SLUICE_OFFSETS_H
#define SLUICE_OFFSETS_H

#include "sluice/common.h"

/* One partition's range. */
typedef struct SrcPart {
    int32_t topic;          /* index in the source's topic table, -1: none */
    int32_t part;
    int64_t start, end;
} SrcPart;

/* The ranges of a batch, or (end only) the positions a query has read to.
 * parts is sl_malloc'd; srcoffs_free releases it. */
typedef struct SourceOffsets {
    int      n, cap;
    SrcPart *parts;
} SourceOffsets;

void     srcoffs_free(SourceOffsets *o);
void     srcoffs_copy(SourceOffsets *dst, const SourceOffsets *src);
SrcPart *srcoffs_find(const SourceOffsets *o, int32_t topic, int32_t part);
SrcPart *srcoffs_add(SourceOffsets *o, int32_t topic, int32_t part, int64_t start, int64_t end);
/* Every partition of limit is reached by pos. */
bool     srcoffs_reached(const SourceOffsets *pos, const SourceOffsets *limit);

#endif /* SLUICE_OFFSETS_H */
