/*
 * source.h -- one interface over the places a continuous query reads rows
 * from: internal streams (relstore.h) and generated streams (datagen.h);
 * Kafka and files come with their issues.
 *
 *   source_open          a source for a stream relation
 *   source_latest        the end offset available now (one partition)
 *   source_reader_open   the rows with offsets [from, to), batch by batch
 *   source_reader_next   up to RELSTORE_BATCH_ROWS rows; 0 at the end
 *   source_reader_close, source_close
 *   source_parts         a stream's partitions, partition key, idle_timeout
 *   source_route         the partition of each row of a batch
 *
 * Offsets are dense row numbers per partition.  Reading the same range
 * twice gives the same rows: what replaying a logged batch relies on.  A
 * Source may be used from one thread at a time.
 */
#ifndef SLUICE_RUNTIME_SOURCE_H
#define SLUICE_RUNTIME_SOURCE_H

#include "sluice/catalog.h"
#include "sluice/state.h"

typedef struct Source Source;
typedef struct SourceReader SourceReader;

int     source_open(StateStore *st, const CatRelation *rel, Source **out, SlError *err);
void    source_close(Source *src);
int64_t source_latest(Source *src, int64_t now_us, SlError *err);
SourceReader *source_reader_open(Source *src, int64_t from, int64_t to);
int     source_reader_next(SourceReader *r, Arena *a, Batch **out, SlError *err);
int     source_reader_close(SourceReader *r, SlError *err);

/* How a stream's rows map to partitions, for per-partition watermarks
 * (docs/engine.md, "Partitions and idle sources"): WITH (partitions = N,
 * partition_key = 'col', idle_timeout = '...'). */
typedef struct SourceParts {
    int     n;                  /* partitions (default 1) */
    int     key_col;            /* partition_key's column; -1 when n is 1 */
    int64_t idle_us;            /* idle_timeout, 0: none */
} SourceParts;

#define SOURCE_MAX_PARTS 1024

/* Reads and checks the options (22023 / 42703 with what to fix). */
int  source_parts(const CatRelation *rel, SourceParts *out, SlError *err);
/* part[i] = the partition of row i of b (laid out as the stream's columns):
 * an integer key k goes to k mod N (so a producer can pick the partition),
 * any other key by its hash; NULL to partition 0. */
void source_route(const SourceParts *sp, const Batch *b, uint32_t *part);

#endif /* SLUICE_RUNTIME_SOURCE_H */
