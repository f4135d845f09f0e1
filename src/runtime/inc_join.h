/*
 * inc_join.h -- the stream-stream interval join of a continuous query
 * (docs/engine.md, "Stream-stream interval joins").
 *
 *   inc_join_build     check the join: a time range between the two sides'
 *                      event times (both bounds), each side's time column a
 *                      watermark column; refuse otherwise, saying what to add
 *   inc_join_bound     the time bound and the time columns (EXPLAIN)
 *   inc_join_read      read a batch's new rows of both sides (late rows
 *                      dropped), a slice at a time, and match each slice
 *                      with the kept rows of the other side (this batch's
 *                      earlier slices included)
 *   inc_join_process   keep the new rows, evict what can no longer match
 *                      (emitting the unmatched rows of an outer side,
 *                      NULL-padded, exactly once)
 *   inc_join_done      after the batch's write: apply it to the kept rows'
 *                      copy in memory (or drop the copy if it failed)
 *   inc_join_free      free the copy
 *   inc_batch_copy     a deep copy of a batch's live rows
 *
 *   inc_join_bucket    the time span of a chunk of kept rows (EXPLAIN)
 *
 * Each side's rows are kept in RocksDB in chunks, one key per bucket of
 * event time ((hi - lo) / 64, at least 1 ms) and batch:
 *   'J' + query oid (4) + side (1) + bucket start (8, ordered) + batch id (8)
 *       + chunk number (4) -> 0xC7, rows (4), per row: time (8), matched (1),
 *                             key length (4), key, row length (4), the row
 *   chunk key + row number (4) -> '': a kept row of an outer side matched
 *                             after its chunk was written
 * so a batch reads the other side's rows of the time range its new rows can
 * match with one range scan, and deletes a chunk once the other side's
 * watermark has passed its bucket (docs/engine.md, "Chunks").  The chunks
 * are also kept in memory (inc_join_mem.h), up to the query's join_memory
 * bytes, so a batch reads them without RocksDB.
 */
#ifndef SLUICE_RUNTIME_INC_JOIN_H
#define SLUICE_RUNTIME_INC_JOIN_H

#include "inc_inputs.h"

typedef struct IncJoin IncJoin;
typedef struct IncJoinRun IncJoinRun;

/* Where the joined rows go (dense: left columns then right ones). */
typedef int (*inc_join_emit_fn)(void *arg, const Batch *rows);

typedef struct IncJoinBatch {
    IncInputsRun    *inputs;
    StateBatch      *wb;
    Arena           *a;             /* the batch's */
    Arena           *chunk;         /* reset before each emitted batch */
    SlError         *err;
    int64_t          batch_id;
    /* per side (0 left, 1 right): the watermark the batch is judged by, and
     * the one after it (what evicts) */
    bool             has_wm[2], has_next_wm[2];
    int64_t          wm[2], next_wm[2];
    inc_join_emit_fn emit;
    void            *arg;
    int64_t          late_rows;
    int64_t          state_delta;   /* rows kept minus rows evicted */
    int64_t          bytes_delta;   /* their keys' and values' bytes, likewise */
    int64_t          evicted_rows;  /* kept rows the watermarks evicted */
} IncJoinBatch;

/* The query's options join_slice_rows and join_memory are read here. */
int  inc_join_build(Arena *a, const IncInputs *ins, StateStore *st, const CatRelation *query,
                    IncJoin **out, SlError *err);
/* Inputs [first, first + n) feed side `side`. */
void inc_join_side_inputs(const IncJoin *j, int side, int *first, int *n);
/* The time bound lo <= tr - tl <= hi and each side's time column name
 * (EXPLAIN). */
void inc_join_bound(const IncJoin *j, int64_t *lo, int64_t *hi, const char **tl,
                    const char **tr);
/* The time span of a chunk's rows, in microseconds (EXPLAIN). */
int64_t inc_join_bucket(const IncJoin *j);
/* Reads and matches the batch's new rows of both sides; NULL with jb->err
 * set. */
IncJoinRun *inc_join_read(IncJoin *j, IncJoinBatch *jb);
/* After the caller has set jb's next watermarks: keep, evict. */
int  inc_join_process(IncJoinRun *run);
/* After the batch's RocksDB write (ok: it landed) or its failure; each
 * inc_join_read is followed by one call. */
void inc_join_done(IncJoin *j, bool ok);
void inc_join_free(IncJoin *j);

Batch *inc_batch_copy(Arena *a, const Batch *b, const uint32_t *sel, uint32_t n);

#endif /* SLUICE_RUNTIME_INC_JOIN_H */
