/*
 * deadset.h -- the dead letters one reader hands to its batch (a plain
 * struct, no routine: docs/architecture.md "Dead letters of a Kafka
 * stream").
 *
 *   DeadSet    the records one reader could not decode: rows of a
 *              dead-letter stream, each with a key that names its record
 *              in the source
 *
 * A reader of the connectors' floor fills it (kafka_reader_close); the
 * engine takes it into the batch and appends it with the batch's write
 * (deadletter.h: dead_letters_take, dead_set_free).  The struct lives here,
 * below both, so that a connector need not include the engine's header.
 */
#ifndef SLUICE_DEADSET_H
#define SLUICE_DEADSET_H

#include "sluice/arena.h"
#include "sluice/catalog.h"
#include "sluice/types.h"

typedef struct DeadSet {
    const CatRelation *rel;     /* the dead-letter stream, referenced */
    Arena              arena;   /* holds rows, keys and what they point to */
    Batch             *rows;    /* laid out as rel's columns */
    SlStr             *keys;    /* per row: the record's identity */
} DeadSet;

#endif /* SLUICE_DEADSET_H */
