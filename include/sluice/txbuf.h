/*
 * txbuf.h -- the writes of one transaction block, held until COMMIT.
 *
 *   state_tx_new, state_tx_free      a block's buffer (the session's)
 *   state_tx_empty, state_tx_bytes   anything to write; the bytes it holds
 *   state_tx_writes     how many writes it took so far (savepoints)
 *   state_tx_check_budget            53200 past a limit (statement_mem)
 *   state_tx_lookup     a table row's key as the block left it
 *   state_tx_write      a table row's put or delete, buffered
 *   state_tx_range      the block's rows under a key prefix, in key order
 *                       (what a scan lays over the committed rows)
 *   state_tx_append, state_tx_append_chunk, state_tx_appends_to   rows
 *                       appended to a stream (INSERT, COPY)
 *   state_tx_relation   the relations it wrote
 *   state_tx_commit     the check against rows others committed meanwhile,
 *                       then everything in one durable write
 *
 * A block's table writes are kept per storage key (relstore.h's table
 * keys): the last value the block gave the key, or a delete.  The first
 * write of a key also keeps the key's committed value at that moment (or
 * its absence): state_tx_commit reads every key again and refuses the
 * commit when another session changed it since -- first committer wins
 * (docs/architecture.md, "Transaction blocks").  Stream appends are kept
 * as encoded chunks, one per statement (stream_chunk_add).
 *
 * The buffer is owned by one session and used by one thread at a time;
 * its memory is its own (sl_malloc), not a statement's arena.
 */
#ifndef SLUICE_TXBUF_H
#define SLUICE_TXBUF_H

#include "sluice/catalog.h"
#include "sluice/state.h"
#include "sluice/strbuf.h"

typedef struct StateTx StateTx;

/* One key of a state_tx_range: val is NULL for a delete. */
typedef struct StateTxPair {
    SlStr key;
    SlStr val;
} StateTxPair;

StateTx *state_tx_new(void);
void     state_tx_free(StateTx *tx);
bool     state_tx_empty(const StateTx *tx);
size_t   state_tx_bytes(const StateTx *tx);
/* The writes (puts, deletes, appends) the buffer took so far: a savepoint
 * keeps it to tell whether the block wrote since (0 for NULL). */
uint64_t state_tx_writes(const StateTx *tx);

/* 0 while the buffer holds at most limit bytes (0: no limit), else -1
 * with err set: 53200, the block's writes past statement_mem. */
int  state_tx_check_budget(const StateTx *tx, size_t limit, SlError *err);

/* 1: the block put the key (*val, *vlen: valid until the next write), 0:
 * the block deleted it, -1: the block has not written it. */
int  state_tx_lookup(const StateTx *tx, const void *key, size_t klen, const void **val,
                     size_t *vlen);
/* Buffers a put (val not NULL) or a delete of the key of one of rel's rows;
 * the key's first write reads its committed value from st.  0, or -1 with
 * err set. */
int  state_tx_write(StateTx *tx, StateStore *st, const CatRelation *rel, const void *key,
                    size_t klen, const void *val, size_t vlen, SlError *err);
/* The keys under prefix the block wrote, copied into a and sorted by key;
 * returns how many. */
uint32_t state_tx_range(const StateTx *tx, const void *prefix, size_t plen, Arena *a,
                        StateTxPair **out);

/* Buffers the rows of b (laid out as the stream's columns) as one chunk of
 * an append to rel. */
void state_tx_append(StateTx *tx, const CatRelation *rel, const Batch *b);
/* The same with a chunk encoded already (stream_chunk_add), which the
 * buffer takes (*chunk is left empty). */
void state_tx_append_chunk(StateTx *tx, const CatRelation *rel, StrBuf *chunk);
bool state_tx_appends_to(const StateTx *tx, const CatRelation *rel);

/* The relations the block wrote: i from 0 while it returns one. */
const CatRelation *state_tx_relation(const StateTx *tx, int i);

/* What state_tx_commit found when it refused a key another session wrote
 * first: the relation and, for a row the block inserted and another
 * session committed meanwhile, the block's row (dup, encoded). */
typedef struct StateTxConflict {
    const CatRelation *rel;
    const void        *row;     /* NULL: a row changed or deleted meanwhile */
    size_t             rowlen;
} StateTxConflict;

/* Checks each key the block wrote against what is committed now, then
 * writes the table rows and the stream chunks in one synced write
 * (stream_append_many).  0; -2 with *conf set when another session
 * committed a write to one of the keys since the block first wrote it
 * (nothing written; the caller words the error); -1 with err set.  The
 * caller makes it one at a time against other table writers. */
int  state_tx_commit(StateTx *tx, StateStore *st, StateTxConflict *conf, SlError *err);

#endif /* SLUICE_TXBUF_H */
