/*
 * deadletter.h -- a batch's dead letters, written with the batch
 * (src/runtime/deadletter.c; docs/architecture.md "Dead letters of a Kafka
 * stream").
 *
 *   DeadSet                  (deadset.h) the records one reader could not
 *                            decode, each with a key that names its record
 *   dead_letters_take        a reader's set into a batch's collection
 *   dead_letters_append      the batch's appends and state (as
 *                            stream_append_many) plus each dead letter not
 *                            recorded before, in the same durable write
 *   dead_letters_free
 *
 * A dead letter's key is (source, position, place): for Kafka the topic,
 * the partition, the record's offset and its place among the values of
 * that record.  The key goes to RocksDB as 'D' + the dead-letter stream's
 * oid + key, in the write that appends the row; a dead letter whose key is
 * there already is not appended again.  So a replayed batch, a second
 * query over the same stream, or the same query created again, records a
 * poison record once per stream.  The check and the write are one step
 * under a lock (the caller's: one per state store, the registry's
 * IncShared.dead_mu), so two queries committing at once cannot both
 * append it.
 */
#ifndef SLUICE_DEADLETTER_H
#define SLUICE_DEADLETTER_H

#include "sluice/catalog.h"
#include "sluice/deadset.h"
#include "sluice/relstore.h"
#include "sluice/state.h"

#include <pthread.h>

typedef struct DeadLetters {
    DeadSet *sets;
    int      n, cap;
} DeadLetters;

/* Moves s (with its arena and its reference) into dl; s is left empty. */
void dead_letters_take(DeadLetters *dl, DeadSet *s);
/* stream_append_many(st, apps, napps, wb) with dl's new dead letters
 * appended and their keys put in the same write, under mu when there are
 * dead letters. */
int  dead_letters_append(StateStore *st, pthread_mutex_t *mu, DeadLetters *dl,
                         StreamAppend *apps, int napps, StateBatch *wb, SlError *err);
void dead_letters_free(DeadLetters *dl);
/* Frees one set that was not taken. */
void dead_set_free(DeadSet *s);

#endif /* SLUICE_DEADLETTER_H */
