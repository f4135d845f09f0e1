/*
 * state.h -- the RocksDB state store: keys and values, write batches,
 * prefix scans.
 *
 *   state_open, state_close      the store in <data_dir>/state
 *   state_get                    one key's value
 *   state_batch_*                an atomic group of puts and deletes
 *   state_check_room             would a write be refused for a full disk?
 *   state_scan_*                 keys with a prefix, in byte order (batch
 *                                scans, and endable ones for clients)
 *                                (state_scan_status: stopped on an error?)
 *   state_prefix_disk_bytes, state_disk_bytes, state_cache_bytes
 *                                sizes for sys.state
 *   state_checkpoint             the store as it is now, in another directory
 *   state_bulk_dir, state_ingest_*   bulk loads: table files written
 *                                beside the store and ingested at once
 *
 * src/state/ is the only module that includes rocksdb/c.h.  Key spaces are
 * told apart by their first byte (docs/architecture.md, "State keys"):
 * 'T' table rows, and later 'S' stream logs and 'Q' query operator state.
 * Operators reach their keys through a per-query cache that is written back
 * once per batch in one WriteBatch.
 */
#ifndef SLUICE_STATE_H
#define SLUICE_STATE_H

#include "sluice/arena.h"
#include "sluice/error.h"
#include "sluice/memacct.h"

typedef struct StateStore StateStore;
typedef struct StateBatch StateBatch;
typedef struct StateScan StateScan;
typedef struct StateIngest StateIngest;

int  state_open(const char *dir, StateStore **out, SlError *err);
void state_close(StateStore *st);
/* The directory the store was opened in (result files live below it). */
const char *state_dir(StateStore *st);
/* Makes dir (which must not exist; on the store's filesystem) a copy of
 * the store as it is now, one point between writes: a RocksDB checkpoint
 * (memtables flushed first; its table and blob files hard links, which
 * RocksDB never changes) and hard links to the result files in
 * <dir>/results/ (resfile.h: their committed regions never change; the
 * caller copies their bytes before anything writes through a link).  The
 * store's user while it runs, so no reopen comes between.  0, or -1 with
 * err (58030; 53100 while the store is closed after a full disk). */
int  state_checkpoint(StateStore *st, const char *dir, SlError *err);
/* <dir>/bulk: the temporary files of bulk loads (kvsort.h, StateIngest),
 * emptied by state_open. */
const char *state_bulk_dir(StateStore *st);

/* Looks a key up.  Returns 1 with the value copied into arena a, 0 if the
 * key is absent, or -1 with err set (XX001 data_corrupted when a checksum
 * fails, 58030 io_error otherwise). */
int  state_get(StateStore *st, const void *key, size_t klen, Arena *a,
               void **val, size_t *vlen, SlError *err);

StateBatch *state_batch_new(void);
void state_batch_put(StateBatch *b, const void *key, size_t klen,
                     const void *val, size_t vlen);
void state_batch_delete(StateBatch *b, const void *key, size_t klen);
/* Deletes every key in [start, end) (one RocksDB range deletion: for many
 * keys at once; each one is a tombstone every read of the store consults
 * until compaction drops it, so not for a few keys). */
void state_batch_delete_range(StateBatch *b, const void *start, size_t slen, const void *end,
                              size_t elen);
/* Charges the batch's bytes (its RocksDB representation, as it grows) to
 * account a, which it holds a reference on until it is freed or given
 * another account (NULL: none); the bytes are credited back then.  A
 * continuous query's micro-batch counts its write this way against its
 * batch_memory.  The account is charged in steps of 64 KiB of growth, so
 * it is short by less than that until state_batch_charge (or a commit)
 * charges the rest. */
void state_batch_set_account(StateBatch *b, SlMemAccount *a);
/* Charges the batch's account with all of its growth not yet charged:
 * before a check of the account that must see every byte. */
void state_batch_charge(StateBatch *b);
/* Appends src's puts and deletes to dst, in order (src is unchanged). */
void state_batch_append(StateBatch *dst, StateBatch *src);
/* The number of puts and deletes in the batch. */
int  state_batch_count(StateBatch *b);
/* Applies the batch atomically; with sync the write is on disk (fsync of
 * the WAL) before it returns.  The batch stays the caller's to free.  A
 * batch with puts is refused (53100 disk_full) while less than 64 MiB are
 * free on the store's filesystem (docs/operations.md, "Disk full"). */
int  state_batch_commit(StateStore *st, StateBatch *b, bool sync, SlError *err);
/* state_batch_commit, and on failure *refused: true when the write was
 * refused before RocksDB was asked to write (too little space, a reopen
 * after a full disk not yet possible: nothing of b is written and the
 * store is sound), false when RocksDB's write itself failed. */
int  state_batch_try_commit(StateStore *st, StateBatch *b, bool sync, bool *refused,
                            SlError *err);
void state_batch_free(StateBatch *b);
/* 0 when a write that puts data would not be refused for want of space
 * now, else -1 with err (53100): for a caller that must not fail a write
 * it has already promised (a group of stream appends). */
int  state_check_room(StateStore *st, SlError *err);

/* Iterates over every key that starts with prefix, in byte order.  Two
 * kinds of scan:
 *
 *   batch scans (state_scan_open, _at, _from): for work that closes its
 *   scans within a step of its own -- a continuous query's batch,
 *   ingestion, retention, a lookup.  The pointers state_scan_next()
 *   returns point into RocksDB's iterator (no copy) and are valid until
 *   the next call.  The scan counts as a use of the store until it is
 *   closed, so the reopen after a full disk waits for it (the write that
 *   would reopen is refused with 53100 and the next write tries again):
 *   a batch scan never meets a reopen.  Its owner closes it before it
 *   writes, or its own write could not reopen the store.
 *
 *   endable scans (state_scan_open_endable, _endable_at): for a
 *   statement whose rows stream to a client, which may hold the scan for
 *   as long as it likes (a suspended portal, a SELECT paused for a slow
 *   reader).  A reopen after a full disk ends it: its next call returns
 *   false and its status is 53100.  The pointers state_scan_next()
 *   returns point into the scan's own copies, valid until the next call. */
StateScan *state_scan_open(StateStore *st, const void *prefix, size_t plen);
/* Same, starting at the last key <= start (or the first key of the prefix
 * when there is none): for logs keyed by the first offset of a chunk. */
StateScan *state_scan_open_at(StateStore *st, const void *prefix, size_t plen,
                              const void *start, size_t slen);
/* A scan of the keys with the prefix from the first one >= start (a
 * forward seek: it does not walk back over deleted keys below start). */
StateScan *state_scan_open_from(StateStore *st, const void *prefix, size_t plen,
                                const void *start, size_t slen);
/* state_scan_open and state_scan_open_at, endable. */
StateScan *state_scan_open_endable(StateStore *st, const void *prefix, size_t plen);
StateScan *state_scan_open_endable_at(StateStore *st, const void *prefix, size_t plen,
                                      const void *start, size_t slen);
/* The last key with the prefix, copied into a; 1 found, 0 none, -1 error. */
int state_last_key(StateStore *st, const void *prefix, size_t plen, Arena *a,
                   void **key, size_t *klen, SlError *err);
/* The next key and value, or false at the end of the keys or on an error:
 * a caller that stops on false must ask state_scan_status (or close) which
 * it was, or a damaged file reads as a short answer. */
bool state_scan_next(StateScan *s, const void **key, size_t *klen,
                     const void **val, size_t *vlen);
/* Moves the scan to the first key with its prefix at or past key (any
 * key, ascending or not) and returns it as state_scan_next does (val may
 * be NULL: the value is not asked for); the next state_scan_next goes on
 * after it.  False: no such key, or an error (ask state_scan_status). */
bool state_scan_seek(StateScan *s, const void *key, size_t klen, const void **found,
                     size_t *flen, const void **val, size_t *vlen);
/* 0, or -1 with err set (XX001 for a damaged file, 53100 for a scan that
 * a reopen after a full disk ended, 58030 otherwise) when the scan
 * stopped on an error. */
int  state_scan_status(StateScan *s, SlError *err);
/* Returns 0, or -1 with err set if the scan stopped on an I/O error. */
int  state_scan_close(StateScan *s, SlError *err);

/* RocksDB's estimate of the bytes that the keys with the prefix take in
 * its table files (compressed; overwritten versions and deletions not yet
 * compacted away count; what is still only in the memtable does not); 0 on
 * error. */
uint64_t state_prefix_disk_bytes(StateStore *st, const void *prefix, size_t plen);
/* The bytes of all live table files. */
uint64_t state_disk_bytes(StateStore *st);
/* The bytes the block cache holds now (blocks of every key space). */
uint64_t state_cache_bytes(StateStore *st);

/* A bulk load: pairs in ascending key order go to table files of
 * RocksDB's own (SstFileWriter, cut every 64 MiB) under state_bulk_dir,
 * and state_ingest_commit adds them all to the store in one atomic step
 * (IngestExternalFile: one record in RocksDB's MANIFEST; a reader sees
 * none of the pairs or all of them, a crash leaves none or all).  Written
 * pairs win over older values of their keys.  state_ingest_free removes
 * the files (those not ingested yet).  A small load (small: the caller
 * holds all its pairs in memory anyway) is one synced write batch
 * instead, as atomic and cheaper: an ingest syncs its files and the
 * MANIFEST, and flushes the memtable first when it holds keys in the
 * files' range.
 *
 * state_ingest_exists says whether a key is stored under prefix (the one
 * given to state_ingest_new), as of a snapshot taken at the new: the keys
 * asked must ascend, so one forward iterator answers them all.  1, 0, or
 * -1 with err.  The put and the commit fail with 53100 when the disk has
 * less than the store's reserve free. */
StateIngest *state_ingest_new(StateStore *st, const void *prefix, size_t plen, bool small);
int  state_ingest_exists(StateIngest *ig, const void *key, size_t klen, SlError *err);
int  state_ingest_put(StateIngest *ig, const void *key, size_t klen, const void *val,
                      size_t vlen, SlError *err);
int  state_ingest_commit(StateIngest *ig, SlError *err);
void state_ingest_free(StateIngest *ig);

#endif /* SLUICE_STATE_H */
