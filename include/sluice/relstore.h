/*
 * relstore.h -- where the rows of tables and internal streams live.
 *
 * Tables: one RocksDB key per row, 'T' + oid (4 bytes, big-endian) + the
 * order-preserving primary key (rowcodec.h); a table without a primary key
 * gets a hidden 8-byte row id instead.  The value is the encoded row.
 *
 * Internal streams: an append-only log of chunks.  A chunk holds the rows of
 * one append (an INSERT, a COPY block): key 'S' + oid + the offset of its
 * first row (8 bytes, big-endian), value a row count then each encoded row
 * with its length.  Offsets are dense per stream, starting at 0.  Each
 * chunk has an index entry 'R' + oid + first offset -> append time (8),
 * rows (4), bytes (8), written with it, which retention reads.  An append
 * is one WriteBatch, synced before it returns, so an acknowledged row is on
 * disk and a crash never leaves part of an append visible.
 *
 * Result logs: the result table of an append-only continuous query (no
 * aggregation: filters, projections, joins, DISTINCT) is a log of chunks
 * too, written in each batch's own WriteBatch: key 'A' + oid + batch id
 * (8, big-endian) + chunk number within the batch (4, big-endian), value a
 * chunk as a stream's.  A batch cuts its rows into chunks by count and
 * size only, so a replayed batch writes exactly the keys it wrote before.
 * A batch whose chunks come to RESULT_FILE_MIN_BYTES or more writes them
 * to a result file instead (resfile.h), fdatasync'ed before the batch's
 * write, which then holds only a reference under 'A' + oid + batch id.
 * A table scan of a continuous query's relation reads its 'T' rows (the
 * groups of an aggregation, or the per-row log (batch id, row) of data
 * directories written before result logs), then its 'A' chunks and
 * result-file regions, in batch order.
 *
 * Commit policy (stream_commit_mode_set, docs/architecture.md): in sync
 * mode every append is its own synced write; in group mode appends that
 * arrive together (from different threads) share one synced write, and
 * each returns only once that write is durable.  Either way the end offset
 * readers see (stream_end_offset) covers durable rows only.
 *
 *   tbl_key, tbl_key_prefix, tbl_get, tbl_put, tbl_delete, tbl_next_rowid
 *   tbl_scan_open, tbl_scan_next, tbl_scan_close
 *   stream_append, stream_append_batches, stream_append_many
 *   stream_end_offset, stream_end_offset_nowait, stream_start_offset, stream_retain
 *   stream_scan_open, stream_scan_next, stream_scan_close
 *   stream_commit_mode_set, stream_commit_stats
 *   result_log_begin, result_log_add, result_log_end, result_log_free
 *   rel_purge               every row of a dropped (or new) relation
 *   rel_disk_bytes          the bytes a relation takes, for pg_relation_size
 *
 * All of these may run on any thread; the per-stream end offsets are kept
 * under a mutex.  The end offsets, row ids and the commit policy are the
 * store's own (held by the StateStore): two stores in one process share
 * none of them.
 */
#ifndef SLUICE_RELSTORE_H
#define SLUICE_RELSTORE_H

#include "sluice/catalog.h"
#include "sluice/state.h"
#include "sluice/strbuf.h"

/* Rows per batch a scan hands out. */
#define RELSTORE_BATCH_ROWS 1024

typedef struct RelScan RelScan;

/* ---- tables ---- */

/* The key of row `row` of b (laid out as the table's columns). */
void tbl_key(const CatRelation *rel, const Batch *b, uint32_t row, StrBuf *key);
/* The bytes every key of the table's rows starts with ('T' + oid). */
#define TBL_KEY_PREFIX_BYTES 5
void tbl_key_prefix(const CatRelation *rel, StrBuf *key);
/* A key from a hidden row id, for tables without a primary key. */
void tbl_rowid_key(const CatRelation *rel, uint64_t rowid, StrBuf *key);
uint64_t tbl_next_rowid(StateStore *st, const CatRelation *rel, SlError *err);
/* Reads the row under key into row `row` of out.  1 found, 0 absent, -1 error. */
int  tbl_get(StateStore *st, const CatRelation *rel, const StrBuf *key, Arena *a,
             Batch *out, uint32_t row, SlError *err);
void tbl_put(StateBatch *wb, const StrBuf *key, const Batch *b, uint32_t row);
void tbl_delete(StateBatch *wb, const StrBuf *key);

/* A scan over every row of a table in key order (a continuous query's
 * result table: its 'T' rows, then its result log).  tbl_scan_next fills a
 * batch (allocated in a) of up to RELSTORE_BATCH_ROWS rows; with keys, each
 * row's key is also copied (keys[i] in a; a row of a result log gets its
 * chunk's key).  Returns the row count, 0 at the end, -1 on error.
 * endable: a statement's scan, which a client may hold open: its state
 * scans are endable ones (state.h), which a reopen after a full disk
 * ends (the next call fails with 53100); else batch scans, closed within
 * the caller's step, zero-copy. */
RelScan *tbl_scan_open(StateStore *st, const CatRelation *rel, bool endable);
int  tbl_scan_next(RelScan *s, Arena *a, Batch **out, SlStr **keys, SlError *err);
int  rel_scan_close(RelScan *s, SlError *err);

/* ---- internal streams ---- */

/* Appends the rows of b durably; *first gets the offset of the first. */
int  stream_append(StateStore *st, const CatRelation *rel, const Batch *b,
                   int64_t *first, SlError *err);
/* Appends nb batches (a chunk each) in one synced RocksDB write, together
 * with the writes already in `with` when it is not NULL (a continuous
 * query's state, so its output and its state commit as one). */
int  stream_append_batches(StateStore *st, const CatRelation *rel, const Batch *const *bs,
                           int nb, StateBatch *with, int64_t *first, SlError *err);
/* One stream's part of an append: nb batches, a chunk each -- or, with bs
 * NULL, nb chunks encoded already by stream_chunk_add; first gets the offset
 * of the first row. */
typedef struct StreamAppend {
    const CatRelation  *rel;
    const Batch *const *bs;
    int                 nb;
    const StrBuf       *chunks;
    int64_t             first;
} StreamAppend;

/* Adds the rows of b to a chunk being built (an empty StrBuf starts one):
 * what COPY does as rows arrive, so it keeps encoded rows only. */
void stream_chunk_add(StrBuf *chunk, const Batch *b);
/* The rows in a chunk built by stream_chunk_add. */
uint32_t stream_chunk_rows(const StrBuf *chunk);

/* Appends to several streams (and the writes in `with`) in one durable
 * RocksDB write: all of it is visible after a crash, or none. */
int  stream_append_many(StateStore *st, StreamAppend *apps, int napps, StateBatch *with,
                        SlError *err);

typedef enum StreamCommitMode {
    STREAM_COMMIT_SYNC,     /* each append one synced write (the default) */
    STREAM_COMMIT_GROUP,    /* concurrent appends share one synced write */
} StreamCommitMode;

/* The policy for every later append to st; window_us is how long a group's
 * leader waits for others to join before it writes (group mode).  Each
 * store has its own (sync, until set). */
void stream_commit_mode_set(StateStore *st, StreamCommitMode mode, int64_t window_us);
StreamCommitMode stream_commit_mode(StateStore *st);
/* Appends made to st and RocksDB writes they took, since it was opened. */
void stream_commit_stats(StateStore *st, int64_t *appends, int64_t *writes);

/* What stream_retain deleted, and the bytes left. */
typedef struct StreamRetained {
    int64_t chunks, rows, bytes, bytes_kept;
} StreamRetained;

/* Deletes whole chunks, oldest first, while they were appended before
 * keep_after_us (0: no time limit) or the stream holds more than max_bytes
 * of chunks (0: no size limit).  The newest chunk always stays. */
int  stream_retain(StateStore *st, const CatRelation *rel, int64_t keep_after_us,
                   int64_t max_bytes, StreamRetained *out, SlError *err);
/* The first offset still stored (retention deletes older ones). */
int64_t stream_start_offset(StateStore *st, const CatRelation *rel, SlError *err);

/* The offset the next appended row will get (= rows ever appended). */
int64_t stream_end_offset(StateStore *st, const CatRelation *rel, SlError *err);
/* The same without waiting for an append in progress (which holds the
 * store's counters across its synced write): the end of the last append
 * made durable, or -2 when the stream's end was not read since the store
 * opened and an append holds the counters now (-1 with err on an error). */
int64_t stream_end_offset_nowait(StateStore *st, const CatRelation *rel, SlError *err);
/* The rows with offsets in [from, to).  Next returns up to
 * RELSTORE_BATCH_ROWS rows, 0 at the end, -1 on error.  endable: as for
 * tbl_scan_open. */
RelScan *stream_scan_open(StateStore *st, const CatRelation *rel, int64_t from, int64_t to,
                          bool endable);
int  stream_scan_next(RelScan *s, Arena *a, Batch **out, SlError *err);
/* Forgets st's cached end offset and next row id of a dropped relation. */
void stream_forget(StateStore *st, const CatRelation *rel);

/* ---- result logs ---- */

/* A chunk is cut once it holds this many rows or bytes. */
#define RESULT_CHUNK_ROWS  1024
#define RESULT_CHUNK_BYTES (256 * 1024)
/* A batch whose chunks come to this many bytes writes them to a result
 * file (resfile.h) instead of RocksDB; smaller ones stay inline. */
#define RESULT_FILE_MIN_BYTES (256 * 1024)
/* A result file is written whenever this much is framed. */
#define RESULT_FILE_WRITE_BYTES (1 << 20)

struct ResFile;

/* One batch's rows of a result log, cut into chunks as they come.  The
 * chunks are framed in buf (a frame header, then the chunk); once they
 * pass RESULT_FILE_MIN_BYTES they go to the relation's result file as
 * they fill, else result_log_end puts them into the batch's write. */
typedef struct ResultLog {
    StateStore     *st;
    uint32_t        oid;
    int64_t         batch_id;
    StrBuf          buf;        /* frames not written yet; the last one filling */
    size_t          at;         /* where the chunk being filled has its frame */
    uint32_t        rows;       /* rows in it */
    uint32_t        nchunks;    /* chunks cut so far */
    uint64_t        total_rows;
    uint32_t        chain;      /* CRC-32C over the frame headers (resfile.h) */
    struct ResFile *file;       /* NULL while the batch's chunks are inline */
    SlError         err;        /* the first write error */
} ResultLog;

void result_log_begin(ResultLog *l, StateStore *st, const CatRelation *rel, int64_t batch_id);
/* Adds the rows of b; chunks that fill go to the result file once the
 * batch is past RESULT_FILE_MIN_BYTES (a write error is kept for
 * result_log_end). */
void result_log_add(ResultLog *l, StateBatch *wb, const Batch *b);
/* Cuts the last, partly filled chunk, then either puts the chunks into wb
 * (under 'A' + oid + batch id + chunk number) or writes the rest of the
 * result file's region, fdatasyncs it and puts its reference into wb.
 * Returns 0, or -1 with err set. */
int  result_log_end(ResultLog *l, StateBatch *wb, SlError *err);
void result_log_free(ResultLog *l);

/* Deletes every key of rel (rows, chunks, a query's state and result log)
 * in one synced write and forgets its counters: for DROP, and for CREATE in case a crash left rows
 * under a reused oid. */
int  rel_purge(StateStore *st, const CatRelation *rel, SlError *err);

/* The bytes rel takes in the store, as pg_relation_size reports them:
 * RocksDB's estimate of its keys in the table files (state_prefix_disk_bytes
 * over each of its key spaces: compressed, what is still only in the
 * memtable not yet counted), and for a stream the bytes of its retained
 * chunks as their index records them (the chunks of 16 KiB and more live in
 * blob files, which the estimate leaves out).  0 on an error. */
uint64_t rel_disk_bytes(StateStore *st, const CatRelation *rel);

#endif /* SLUICE_RELSTORE_H */
