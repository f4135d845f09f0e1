/*
 * ingest.h -- background work on streams: the files connector, dead
 * letters, and retention (src/runtime/ingest.c, docs/architecture.md
 * "Ingestion").
 *
 *   ingest_init, ingest_close    the registry on the loop; every files
 *                                stream of the catalog starts reading
 *   ingest_validate              check a stream's WITH options at CREATE
 *   ingest_dead_letter_def       the <stream>_dead_letters relation of a
 *                                stream with a format
 *   ingest_start, ingest_stop    a stream created or dropped
 *   ingest_check_readable        the error of a stream whose ingestion
 *                                failed (on_error = 'fail')
 *   ingest_stats, ingest_foreach the counters, for sys.streams
 *   ingest_stats_by_name         the same by name: sluice_stream_stat()'s
 *                                answer (expr.h's ExFnHooks.stream_stats)
 *   ingest_stream_figures        per stream: rows appended, dead letters,
 *                                bytes read (/metrics)
 *
 * A files stream is an internal stream (relstore.h) that an ingester
 * fills: new bytes of the files in its directory are decoded on the
 * engine's pool (pool.h) and appended, with the file's new position, in one durable
 * write.  Everything here runs on the loop's thread except the decoding.
 */
#ifndef SLUICE_INGEST_H
#define SLUICE_INGEST_H

#include <uv.h>

#include "sluice/catalog.h"
#include "sluice/functions.h"
#include "sluice/pool.h"
#include "sluice/state.h"

/* The columns of a dead-letter stream, in order. */
#define INGEST_DEAD_LETTER_COLUMNS "raw bytea, source text, byte_offset bigint, reason text, received_at timestamptz"

/* IngestStats, the counters of one stream, is in functions.h, where
 * sluice_stream_stat() reads them. */

/* The registry is rt's (Runtime.ingest): its ingesters run on rt's loop
 * and engine pool over rt's stores.  ingest_init starts one for each
 * stream of rt's catalog that needs one; ingest_close stops them all. */
struct Runtime;
int  ingest_init(struct Runtime *rt);
void ingest_close(struct Runtime *rt);

/* 0 if def's WITH options make a stream sluice can feed in rt (a files
 * stream's directory checked for its owner there), or -1 with a
 * 22023 / 0A000 / 58P01 / 42501 error naming the option. */
int  ingest_validate(struct Runtime *rt, const CatRelation *def, SlError *err);
/* true when def (a stream) gets a dead-letter stream: it has a format, or
 * it reads Kafka. */
bool ingest_has_dead_letters(const CatRelation *def);
/* The dead-letter stream of def, in arena a. */
CatRelation *ingest_dead_letter_def(Arena *a, const CatRelation *def);
/* The stream whose dead letters rel holds, or NULL. */
const char *ingest_dead_letters_of(Arena *a, const CatRelation *rel);

int  ingest_start(struct Runtime *rt, const CatRelation *rel, SlError *err);
void ingest_stop(struct Runtime *rt, const CatRelation *rel);

/* 0, or -1 with the ingestion error of a stream that failed (0 for rt
 * NULL: no ingesters). */
int  ingest_check_readable(struct Runtime *rt, const CatRelation *rel, SlError *err);

/* 1 with out filled (strings valid until the next call on the loop), 0 if
 * the stream has no counters. */
int  ingest_stats(struct Runtime *rt, uint32_t oid, IngestStats *out);
void ingest_foreach(struct Runtime *rt, void (*fn)(const IngestStats *s, void *arg), void *arg);
/* The counters of the stream named name[0..len): 1 with out filled (its
 * strings in a), 0 if it has none (or arg is NULL).  Any thread.  arg is
 * ExFnHooks.stream_arg: the Runtime whose ingesters it reads. */
int  ingest_stats_by_name(void *arg, const char *name, size_t len, IngestStats *out,
                          Arena *a);

/* One stream's figures for /metrics.  Strings live until fn returns. */
typedef struct IngestFigures {
    const char *stream;
    const char *connector;      /* "internal", "files", "kafka", "datagen" */
    int64_t     rows;           /* rows ever appended to it (its end offset);
                                 * -1: not stored here (kafka, datagen) */
    int64_t     dead_letters;   /* rows ever appended to <stream>_dead_letters;
                                 * -1: it has none */
    int64_t     bytes;          /* bytes of whole records the files connector
                                 * read since the server started; -1: unknown */
} IngestFigures;

/* Calls fn for every stream of rt's catalog but the dead-letter streams
 * (counted with their stream), in catalog order.  On the loop; it never
 * waits for an append (stream_end_offset_nowait: the end of the last
 * durable one; a stream not read since the server started whose end an
 * append holds has no rows figure this time), and takes the ingesters'
 * mutex only while their counters are copied. */
void ingest_stream_figures(struct Runtime *rt, void (*fn)(const IngestFigures *f, void *arg),
                           void *arg);

#endif /* SLUICE_INGEST_H */
