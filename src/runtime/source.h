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

#endif /* SLUICE_RUNTIME_SOURCE_H */
