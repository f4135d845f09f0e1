/*
 * source.h -- one interface over the places a continuous query reads rows
 * from: internal streams (relstore.h; source_stream.c), generated streams
 * (datagen.h, nexmark.h; source_gen.c) and Kafka topics (kafka.h;
 * source_kafka.c).  The stream's connector option picks the
 * implementation, a table of functions (SourceOps, source_int.h), when the
 * source opens; the calls below go through it.
 *
 *   source_open          a source for a stream relation, on behalf of a query
 *   source_plan          the next batch's ranges, one per partition
 *   source_reader_open   the rows of a set of ranges, batch by batch
 *   source_reader_next   up to RELSTORE_BATCH_ROWS rows; 0 at the end
 *   source_reader_need   the columns the reader's user reads (a hint)
 *   source_reader_close, source_close
 *   source_committed     a batch over these positions committed (Kafka
 *                        commits them to its consumer group, off the loop)
 *   source_lag           per partition: committed, latest, last poll time
 *   source_ended         a bounded source's ranges reach its end
 *   srcoffs_to_json, srcoffs_from_json   a batch's ranges as the offset
 *                        log's JSON and back (topic names, not indexes)
 *   source_parts         a stream's partitions, partition key, idle_timeout
 *   source_route         the partition of each row of a batch
 *
 * A source has partitions, each named by a topic (an index into the
 * source's topic table; -1 for internal and generated streams) and a
 * partition number.  Offsets are per partition; a batch reads [start, end)
 * of each.  Reading the same ranges twice gives the same rows: what
 * replaying a logged batch relies on.  A Source may be used from one thread
 * at a time, except source_plan, source_committed and source_lag, which
 * never block and may run on the loop while a batch reads on a worker.
 */
#ifndef SLUICE_RUNTIME_SOURCE_H
#define SLUICE_RUNTIME_SOURCE_H

#include "sluice/catalog.h"
#include "sluice/deadletter.h"
#include "sluice/exec.h"
#include "sluice/offsets.h"
#include "sluice/state.h"
#include "sluice/strbuf.h"

typedef struct Source Source;
typedef struct SourceReader SourceReader;

/* source_plan's answer when the source has not yet learned its partitions
 * (Kafka, just opened): plan again a little later. */
#define SOURCE_NOT_READY (-2)

/* One row of source_lag. */
typedef struct SourceLag {
    const char *topic;      /* NULL for internal and generated streams */
    int32_t     part;
    int64_t     committed;  /* the query's position: next offset to read */
    int64_t     latest;     /* the end offset last seen (Kafka: high watermark) */
    int64_t     last_poll_us;   /* when latest was read, Unix epoch; 0: never */
} SourceLag;

/* rt: the Runtime the source opens in (its KafkaPolicy, its catalog's
 * dead-letter streams, its ingesters' failures); it outlives the source.
 * NULL: none (no broker allowed, no ingester). */
struct Runtime;
int  source_open(struct Runtime *rt, StateStore *st, const CatRelation *rel, const char *owner,
                 Source **out, SlError *err);
void source_close(Source *src);
/* Ranges for the next batch, from the positions pos (end = next offset;
 * partitions not in pos start where the source's starting_offsets say),
 * each capped by limit (when not NULL) and all together by max_offsets
 * (0: none), shared out over the partitions in proportion to their
 * backlog.  out gets every known partition (start = end for those without
 * new rows).  *backlog (when not NULL) gets the rows max_offsets left for
 * later batches.  Returns the rows in the ranges, SOURCE_NOT_READY, or -1. */
int64_t source_plan(Source *src, const SourceOffsets *pos, const SourceOffsets *limit,
                    int64_t max_offsets, int64_t now_us, SourceOffsets *out, int64_t *backlog,
                    SlError *err);
SourceReader *source_reader_open(Source *src, const SourceOffsets *ranges);
int  source_reader_next(SourceReader *r, Arena *a, Batch **out, SlError *err);
/* need[c] says whether column c is read at all (need lives as long as the
 * reader; NULL: every column).  A generated stream (nexmark) may then leave
 * the other columns NULL and skip making them, and a Kafka stream skip
 * copying them (its dead letters stay the same: format.h); other sources
 * ignore it. */
void source_reader_need(SourceReader *r, const uint8_t *need);
/* Closes the reader.  With dead not NULL, the records it could not decode
 * go into dead, for the batch to append with its state (deadletter.h; a
 * reader closed after an error hands over none).  Returns 0 or -1. */
int  source_reader_close(SourceReader *r, DeadLetters *dead, SlError *err);
void source_committed(Source *src, const SourceOffsets *pos);
/* True when the source is bounded (a nexmark stream with number_of_events)
 * and ranges reach its last row: the input has ended, and its watermark
 * becomes SOURCE_END_WATERMARK, so every window closes (Flink's end of a
 * bounded input).  Internal, datagen and Kafka streams never end. */
bool source_ended(const Source *src, const SourceOffsets *ranges);
/* The watermark of an input that has ended: PostgreSQL's 'infinity'. */
#define SOURCE_END_WATERMARK INT64_MAX
/* Calls fn for each partition the query reads, pos being its positions. */
void source_lag(Source *src, const SourceOffsets *pos,
                void (*fn)(const SourceLag *l, void *arg), void *arg);
/* A plain SELECT's rows of a Kafka stream: every partition from its
 * earliest offset to its high watermark now.  It waits for the first look
 * at the topics and reads on the calling thread. */
ExSource *source_scan_kafka(struct Runtime *rt, StateStore *st, const CatRelation *rel,
                            SlError *err);

/* The offset log's JSON: [{["input":I,]"oid":N[,"topic":"t"],"part":P,"start":S,
 * "end":E}, ...].  to_json appends input's objects to out (the caller
 * writes the brackets; input -1: no "input" member, a query of one input).
 * from_json reads the objects of input (-1: all of them; without "input"
 * members, the k-th object is input k's). */
void     srcoffs_to_json(Source *src, uint32_t oid, int input, const SourceOffsets *o,
                         StrBuf *out);
int      srcoffs_from_json(Source *src, const char *json, int input, SourceOffsets *out,
                           SlError *err);

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
