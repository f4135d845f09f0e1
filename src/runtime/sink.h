/*
 * sink.h -- one interface over the places a continuous query writes INTO a
 * sink (CREATE SINK): the connector option picks the implementation.
 *
 *   sink_check    CREATE SINK's options, checked by the connector
 *                 (files: path and format, the directory made; kafka: the
 *                 topic, format, key and client settings, no I/O)
 *   sink_open     the sink as one query writes it
 *   sink_commit   batch N's output, exactly once per batch id: the files
 *                 sink's manifest protocol (sink_files.c) or one Kafka
 *                 transaction with a progress record (kafka_sink.c)
 *   sink_key      the sink's key columns (indexes into the query's output
 *                 columns; Kafka's key option), how many (0: none)
 *   sink_wants_deletes  whether this sink is told of groups that left the
 *                 result (a Kafka sink with a key writes them as tombstones)
 *   sink_stats    its commits, failed commits and retries (/metrics)
 *   sink_close
 *
 * sink_commit runs on a worker thread, at most one per Sink at a time;
 * sink_stats on any thread (the counters are atomic).
 */
#ifndef SLUICE_RUNTIME_SINK_H
#define SLUICE_RUNTIME_SINK_H

#include "sluice/catalog.h"
#include "sluice/types.h"

#include <pthread.h>

typedef struct Sink Sink;
struct Runtime;

/* Both are checked and opened in rt (its files root and data directory,
 * its KafkaPolicy; rt outlives the sink). */
int  sink_check(struct Runtime *rt, const CatRelation *def, SlError *err);
/* The sink relation as query writes it; names are the query's output
 * column names (ncols of them); manifest_mu is the registry's lock of the
 * files sinks' manifests (sink_files.h). */
int  sink_open(struct Runtime *rt, const CatRelation *sink, const CatRelation *query,
               const char *const *names, int ncols,
               pthread_mutex_t *manifest_mu, Sink **out, SlError *err);
/* rows: nb output batches laid out as the query's columns; dels: nd
 * batches of groups that left the result (only when sink_wants_deletes).
 * A batch id the sink committed before is skipped.  0 or -1. */
int  sink_commit(Sink *s, int64_t batch_id, const Batch *const *rows, int nb,
                 const Batch *const *dels, int nd, SlError *err);
int  sink_key(const Sink *s, const int **cols);
/* Since the sink was opened: commits that succeeded (a batch skipped as
 * committed before included), commits that failed, and commits of a batch
 * id tried before (the batch run again after its commit here or a later
 * step of it failed).  The fault point sink_commit fails a commit with
 * 58030 before the connector is asked. */
typedef struct SinkStats {
    int64_t commits, failures, retries;
} SinkStats;
void sink_stats(const Sink *s, SinkStats *out);
bool sink_wants_deletes(const Sink *s);
void sink_close(Sink *s);

#endif /* SLUICE_RUNTIME_SINK_H */
