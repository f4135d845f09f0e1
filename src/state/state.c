/*
 * state.c -- the RocksDB state store (see state.h).
 *
 *   state_open, state_close, state_dir, state_get
 *   state_batch_new, state_batch_put, state_batch_delete, state_batch_delete_range,
 *   state_batch_append, state_batch_set_account, state_batch_charge,
 *   state_batch_count, state_batch_commit, state_batch_try_commit, state_batch_free,
 *   state_check_room
 *   state_scan_open, state_scan_open_at, state_scan_open_from,
 *   state_scan_open_endable, state_scan_open_endable_at, state_scan_next,
 *   state_scan_seek,
 *   state_scan_status, state_scan_close
 *   state_last_key
 *   state_prefix_disk_bytes, state_disk_bytes, state_cache_bytes
 *   state_checkpoint
 *   state_bulk_dir, state_ingest_new, state_ingest_exists, state_ingest_put,
 *   state_ingest_commit, state_ingest_free
 *
 * One RocksDB instance per server, in <data_dir>/state.  Everything else
 * in sluice sees keys and values as bytes.  Its block cache is made here
 * (STATE_BLOCK_CACHE_BYTES) so that its usage can be read for sys.state.
 * Values of STATE_BLOB_MIN_BYTES and more -- the chunks of streams and of
 * result logs -- are kept in RocksDB's blob files, uncompressed, so that
 * compactions move only their keys (docs/architecture.md, "State store").
 * Every read verifies checksums and RocksDB's "Corruption" status becomes
 * XX001 data_corrupted; a WAL record that fails its checksum refuses the
 * open (docs/operations.md, "Damaged data").  A write that puts data is
 * refused with 53100 disk_full while less than STATE_RESERVE_BYTES are
 * free; after a write that failed for want of space the database is closed
 * and opened again (resume), which is why every use of it is counted or
 * listed.  A get, a write and a batch scan count as users (use_db,
 * done_db; a batch scan from its open to its close): the reopen waits for
 * them -- it is refused while any is in flight, and the next write tries
 * again.  An endable scan (state_scan_open_endable: a statement's, whose
 * rows a client may hold for as long as it likes, a suspended portal or a
 * SELECT paused for a slow reader) is listed instead, and the reopen ends
 * it (its iterator goes; its next call fails with 53100), so that a client
 * cannot hold writes up.  An endable scan hands out copies of its keys and
 * values, in buffers of its own and under a mutex of its own, so that
 * ending its iterator from another thread never pulls them from under its
 * owner; a batch scan hands out RocksDB's own pointers (zero-copy), which
 * nothing can pull away while it counts as a user.
 *
 * Bulk loads (StateIngest) write RocksDB table files under <dir>/bulk/
 * with an SstFileWriter and ingest them at once (IngestExternalFile,
 * moving them: one MANIFEST record), or, when small, are one synced
 * write batch (an ingest costs a few fsyncs and flushes the memtable when
 * its keys overlap the file's); their existence checks read through an
 * endable scan, so a reopen ends them as it ends a statement's scans.
 * state_open empties <dir>/bulk/: files a crash left there were never
 * part of the store.
 * RocksDB's info log (<dir>/LOG) gets only the header of each open
 * (STATE_INFO_LOG_LEVEL): a line of it after a write of it failed on a
 * full disk aborts the process in RocksDB 7.8.
 */
#include "sluice/state.h"
#include "sluice/log.h"
#include "sluice/memacct.h"
#include "sluice/strbuf.h"

#include "resfile.h"
#include "state_int.h"

#include <rocksdb/c.h>

#include <dirent.h>
#include <errno.h>
#include <limits.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <sys/stat.h>
#include <sys/statvfs.h>
#include <unistd.h>

/* The block cache: the size RocksDB 7 gives the one it would make itself
 * (8 MiB), made here so that its usage can be read. */
#define STATE_BLOCK_CACHE_BYTES (8u << 20)

/* Values at least this long live in blob files (state_open). */
#define STATE_BLOB_MIN_BYTES (16u << 10)

/* The room kept free on the store's filesystem: a write that puts keys is
 * refused (53100) while less is free, so that RocksDB itself never runs
 * out of space in a WAL write (after one, RocksDB 7.8 can take writes
 * again into the WAL writer that failed, and aborts), a flush of the
 * memtable (64 MiB) always fits, and a restart can replay its WAL into a
 * table file (docs/operations.md, "Disk full").  Writes that only delete
 * go through: they make room. */
#define STATE_RESERVE_BYTES (64ull << 20)

/* A bulk load's table files are cut at this size (StateIngest), so that
 * the index a file writer keeps in memory stays small. */
#define STATE_INGEST_FILE_BYTES ((uint64_t)64 << 20)

/* A batch's account is charged each time its write batch grew by about
 * this much (and with the rest by state_batch_charge and at commit), not
 * at every put: the account and the process's total are atomics every
 * concurrent batch would contend on per row.  The account is short by
 * less than one step at any time. */
#define STATE_CHARGE_STEP ((size_t)64 << 10)

/* RocksDB's InfoLogLevel HEADER_LEVEL (rocksdb/env.h; the C API names no
 * levels): above every message, so only the header of each open is
 * written to <dir>/LOG (state_open). */
#define STATE_INFO_LOG_LEVEL 5

struct StateStore {
    char                   *dir;
    char                   *bulk_dir;   /* <dir>/bulk: bulk loads' files */
    rocksdb_t              *db;
    rocksdb_options_t      *opts;
    rocksdb_cache_t        *cache;
    rocksdb_block_based_table_options_t *table;
    rocksdb_readoptions_t  *ropts;
    rocksdb_writeoptions_t *wopts_sync;
    rocksdb_writeoptions_t *wopts_nosync;
    /* db is used between use_db and done_db, which count the users under
     * mu (batch scans among them), and by the open endable scans, listed
     * under mu; a reopen (resume) runs with mu held and no user, and ends
     * the endable scans. */
    pthread_mutex_t         mu;
    int                     users;
    StateScan              *scans;  /* the endable ones */
    atomic_bool             no_space;   /* a write failed for want of space */
    /* The other files' state of this store (state_int.h). */
    RelCounters            *counters;
    GroupCommit            *commit;
    ResfileShared          *resfile;
};

struct StateBatch {
    rocksdb_writebatch_t *wb;
    bool                  ranges;   /* holds a range deletion */
    bool                  puts;     /* holds a put (not only deletions) */
    SlMemAccount         *acct;     /* charged with the batch's bytes, or NULL */
    size_t                charged;  /* bytes charged to acct so far */
    size_t                pending;  /* growth since the last charge, at least
                                     * RocksDB's (each record's overhead
                                     * counted at its largest) */
};

struct StateScan {
    StateStore            *st;
    /* A batch scan counts as a user of st from its open to its close (when
     * it has an iterator); an endable one is listed in st->scans instead
     * and its fields below are used under mu: the owner's calls, and a
     * reopen that ends it. */
    bool                   endable;
    StateScan             *prev, *next;     /* st->scans, under st->mu */
    pthread_mutex_t        mu;
    rocksdb_iterator_t    *it;      /* NULL: the store was closed at the open, or ended */
    bool                   ended;   /* a reopen after a full disk ended it */
    StrBuf                 kbuf, vbuf;  /* endable: the entry state_scan_next handed out */
    rocksdb_readoptions_t *ropts;
    char                  *prefix;
    size_t                 plen;
    char                  *upper;   /* the bound past every key with the prefix, or NULL */
    char                  *start;   /* NULL: from the prefix */
    size_t                 slen;
    bool                   forward; /* start: the first key >= it, not the last <= it */
    bool                   started;
};

/* Read options that verify every block's and blob's checksum. */
static rocksdb_readoptions_t *read_options(void)
{
    rocksdb_readoptions_t *r = rocksdb_readoptions_create();
    rocksdb_readoptions_set_verify_checksums(r, 1);
    return r;
}

static bool no_space_message(const char *msg)
{
    return strstr(msg, "No space left on device") != NULL;
}

/* Sets err from a RocksDB error message and frees it: a damaged file is
 * XX001 data_corrupted, a full disk 53100 disk_full, anything else 58030
 * io_error. */
static int io_error(SlError *err, const char *what, char *msg)
{
    if (err == NULL) {
        ;   /* the caller already holds an error */
    } else if (strncmp(msg, "Corruption:", 11) == 0) {
        sl_error(err, ERRCODE_DATA_CORRUPTED, "state store: %s: %s", what, msg);
    } else if (no_space_message(msg)) {
        sl_error(err, ERRCODE_DISK_FULL, "state store: %s: %s", what, msg);
        sl_error_hint(err, "Free space on the filesystem of the data directory: writes "
                           "resume without a restart (docs/operations.md, \"Disk full\").");
    }
    else {
        sl_error(err, ERRCODE_IO_ERROR, "state store: %s: %s", what, msg);
    }
    rocksdb_free(msg);
    return -1;
}

/* Makes <dir>/bulk, or empties it: what a bulk load left there (a crash
 * between writing its files and ingesting them) is never part of the
 * store, and goes. */
static int bulk_dir_clean(StateStore *st, SlError *err)
{
    size_t n = strlen(st->dir) + sizeof("/bulk");
    st->bulk_dir = sl_malloc(n);
    snprintf(st->bulk_dir, n, "%s/bulk", st->dir);
    if (mkdir(st->bulk_dir, 0700) < 0 && errno != EEXIST)
        return sl_error(err, ERRCODE_IO_ERROR, "cannot make \"%s\": %s", st->bulk_dir,
                        strerror(errno));
    DIR *d = opendir(st->bulk_dir);
    if (d == NULL)
        return sl_error(err, ERRCODE_IO_ERROR, "cannot read \"%s\": %s", st->bulk_dir,
                        strerror(errno));
    int removed = 0;
    struct dirent *e;
    while ((e = readdir(d)) != NULL) {
        if (e->d_name[0] == '.')
            continue;
        char path[4096];
        snprintf(path, sizeof(path), "%s/%s", st->bulk_dir, e->d_name);
        if (unlink(path) == 0)
            removed++;
    }
    closedir(d);
    if (removed > 0)
        sl_log(LOG_INFO, "state store: removed the files of bulk loads cut short",
               "dir=\"%s\" files=%d", st->bulk_dir, removed);
    return 0;
}

int state_open(const char *dir, StateStore **out, SlError *err)
{
    StateStore *st = sl_calloc(1, sizeof(StateStore));
    st->dir = sl_strdup(dir);
    st->counters = rel_counters_new();
    st->commit = group_commit_new();
    st->resfile = resfile_shared_new();
    st->opts = rocksdb_options_create();
    rocksdb_options_set_create_if_missing(st->opts, 1);
    rocksdb_options_set_max_open_files(st->opts, 256);
    st->cache = rocksdb_cache_create_lru(STATE_BLOCK_CACHE_BYTES);
    st->table = rocksdb_block_based_options_create();
    rocksdb_block_based_options_set_block_cache(st->table, st->cache);
    rocksdb_options_set_block_based_table_factory(st->opts, st->table);
    /* Chunks (stream and result-log chunks: append-only, 16 KiB and up)
     * go to blob files, written once at flush and never rewritten or
     * compressed by compactions; the small values (table rows, operator
     * state, indexes) stay in the table files, compressed. */
    rocksdb_options_set_enable_blob_files(st->opts, 1);
    rocksdb_options_set_min_blob_size(st->opts, STATE_BLOB_MIN_BYTES);
    rocksdb_options_set_enable_blob_gc(st->opts, 1);
    /* Damage is an error, never a short answer (docs/operations.md,
     * "Damaged data"): every file is checked as it is opened and every
     * block and blob against its checksum as it is read; a WAL record
     * that fails its checksum stops the open, and only a torn last record
     * -- a write cut short by a crash, never acknowledged -- is dropped. */
    rocksdb_options_set_paranoid_checks(st->opts, 1);
    rocksdb_options_set_wal_recovery_mode(st->opts,
                                          rocksdb_tolerate_corrupted_tail_records_recovery);
    /* RocksDB's info log (<dir>/LOG) gets only the header written at each
     * open (its version and options), no messages after it: RocksDB 7.8
     * ignores a failed write of that log, but the log's file writer keeps
     * the error, and its next line fails an assertion and aborts the
     * process -- so a full disk at the moment the log flushed (every 5 s
     * and at RocksDB's own error messages) killed the server at its next
     * message, at shutdown or in RocksDB's recovery.  The C API has no
     * logger of our own to give it.  sluice logs the errors it sees. */
    rocksdb_options_set_info_log_level(st->opts, STATE_INFO_LOG_LEVEL);
    st->ropts = read_options();
    st->wopts_sync = rocksdb_writeoptions_create();
    rocksdb_writeoptions_set_sync(st->wopts_sync, 1);
    st->wopts_nosync = rocksdb_writeoptions_create();
    pthread_mutex_init(&st->mu, NULL);
    char *msg = NULL;
    st->db = rocksdb_open(st->opts, dir, &msg);
    if (msg != NULL) {
        io_error(err, "cannot open", msg);
        sl_error_detail(err, "directory: %s", dir);
        state_close(st);
        return -1;
    }
    if (bulk_dir_clean(st, err) < 0) {
        state_close(st);
        return -1;
    }
    *out = st;
    return 0;
}

void state_close(StateStore *st)
{
    if (st == NULL)
        return;
    if (st->db)
        rocksdb_close(st->db);
    rocksdb_readoptions_destroy(st->ropts);
    rocksdb_writeoptions_destroy(st->wopts_sync);
    rocksdb_writeoptions_destroy(st->wopts_nosync);
    rocksdb_options_destroy(st->opts);
    rocksdb_block_based_options_destroy(st->table);
    rocksdb_cache_destroy(st->cache);
    pthread_mutex_destroy(&st->mu);
    resfile_shared_free(st->resfile);
    group_commit_free(st->commit);
    rel_counters_free(st->counters);
    sl_free(st->bulk_dir);
    sl_free(st->dir);
    sl_free(st);
}

RelCounters *state_counters(StateStore *st)
{
    return st->counters;
}

GroupCommit *state_group_commit(StateStore *st)
{
    return st->commit;
}

ResfileShared *state_resfile(StateStore *st)
{
    return st->resfile;
}

/* The error of a use of the store while it is closed: -1. */
static int use_db_error(SlError *err)
{
    return sl_error(err, ERRCODE_DISK_FULL,
                    "state store: closed after the disk filled up; it reopens at the next "
                    "write once space is free");
}

/* The open database, counted as in use until done_db; NULL with err set
 * when a resume failed to reopen it (tried again at the next write). */
static rocksdb_t *use_db(StateStore *st, SlError *err)
{
    pthread_mutex_lock(&st->mu);
    rocksdb_t *db = st->db;
    if (db != NULL)
        st->users++;
    pthread_mutex_unlock(&st->mu);
    if (db == NULL && err != NULL)
        use_db_error(err);
    return db;
}

static void done_db(StateStore *st)
{
    pthread_mutex_lock(&st->mu);
    st->users--;
    pthread_mutex_unlock(&st->mu);
}

/* 0 when at least STATE_RESERVE_BYTES are free on the store's filesystem
 * (*avail: how many), else -1 with err (53100). */
static int check_room(StateStore *st, unsigned long long *avail, SlError *err);
static int check_room_for(StateStore *st, size_t bytes, unsigned long long *avail,
                          SlError *err);

int state_check_room(StateStore *st, SlError *err)
{
    unsigned long long avail;
    return check_room(st, &avail, err);
}

static int check_room(StateStore *st, unsigned long long *avail, SlError *err)
{
    return check_room_for(st, 0, avail, err);
}

/* 0 when bytes more than STATE_RESERVE_BYTES are free (a write of that
 * size fits above the reserve), else -1 with err (53100). */
static int check_room_for(StateStore *st, size_t bytes, unsigned long long *avail,
                          SlError *err)
{
    struct statvfs vfs;
    *avail = ULLONG_MAX;    /* a filesystem statvfs cannot read is not refused */
    if (statvfs(st->dir, &vfs) == 0)
        *avail = (unsigned long long)vfs.f_bavail * vfs.f_frsize;
    if (*avail >= STATE_RESERVE_BYTES && *avail - STATE_RESERVE_BYTES >= bytes)
        return 0;
    if (bytes > 0)
        sl_error(err, ERRCODE_DISK_FULL,
                 "state store: could not write %zu bytes: the disk is full (%llu bytes free; "
                 "the last %llu are kept for the store's own flushes and a restart)", bytes,
                 *avail, STATE_RESERVE_BYTES);
    else
        sl_error(err, ERRCODE_DISK_FULL,
                 "state store: could not write: the disk is full (%llu bytes free; the last "
                 "%llu are kept for the store's own flushes and a restart)", *avail,
                 STATE_RESERVE_BYTES);
    sl_error_hint(err, "Free space on the filesystem of the data directory: writes resume "
                       "without a restart (docs/operations.md, \"Disk full\").");
    return -1;
}

/* After a write failed for want of space: reopens the store once enough
 * space is free, so that writes go on without a restart.  RocksDB 7.8's own
 * recovery can clear the error without replacing the WAL writer that
 * failed (when its memtable is empty: nothing to flush), whose next append
 * then fails an assertion, so sluice closes the store and opens it again
 * (the WAL's torn last record, from the failed write, was never
 * acknowledged and is dropped: kTolerateCorruptedTailRecords).  0 when writes can go on;
 * -1 with err (53100) when not yet: too little space, or the store is in
 * use (a get, a write or a batch scan in flight) -- the next write tries
 * again. */
static int resume(StateStore *st, SlError *err)
{
    unsigned long long avail;
    if (check_room(st, &avail, err) < 0)
        return -1;
    pthread_mutex_lock(&st->mu);
    if (!atomic_load(&st->no_space)) {
        pthread_mutex_unlock(&st->mu);     /* another writer resumed it */
        return 0;
    }
    if (st->users > 0) {
        /* A get, a write or a batch scan of another thread: over in a
         * moment.  A batch scan is the engine's (a continuous query's
         * batch, ingestion, retention) or a short read of the store's
         * own callers, which close their scans before they write: so a
         * batch scan never meets a reopen, and never holds up one of its
         * own thread's writes (state.h). */
        pthread_mutex_unlock(&st->mu);
        return sl_error(err, ERRCODE_DISK_FULL,
                        "state store: space is free again but the store is in use; writes "
                        "resume at the next write");
    }
    /* Endable scans end: a scan held open by a client (a suspended portal)
     * would otherwise hold every write up until the client closes it.
     * Their next call fails (53100); they hold no snapshot of the new
     * store, so none can read a mix of the two. */
    int ended = 0;
    for (StateScan *s = st->scans; s != NULL; s = s->next) {
        pthread_mutex_lock(&s->mu);
        if (s->it != NULL) {
            rocksdb_iter_destroy(s->it);
            s->it = NULL;
            s->ended = true;
            ended++;
        }
        pthread_mutex_unlock(&s->mu);
    }
    if (st->db != NULL)
        rocksdb_close(st->db);
    char *msg = NULL;
    st->db = rocksdb_open(st->opts, st->dir, &msg);
    int rc = 0;
    if (msg != NULL) {
        st->db = NULL;
        sl_log(LOG_ERROR, "state store: cannot reopen after a full disk", "error=\"%s\"", msg);
        rc = io_error(err, "reopen after a full disk", msg);
    } else {
        atomic_store(&st->no_space, false);
        sl_log(LOG_INFO, "state store reopened: space is free again, writes go on",
               "dir=\"%s\" free_bytes=%llu scans_ended=%d", st->dir, avail, ended);
    }
    pthread_mutex_unlock(&st->mu);
    return rc;
}

const char *state_dir(StateStore *st)
{
    return st->dir;
}

int state_checkpoint(StateStore *st, const char *dir, SlError *err)
{
    rocksdb_t *db = use_db(st, err);
    if (db == NULL)
        return -1;
    char *msg = NULL;
    rocksdb_checkpoint_t *cp = rocksdb_checkpoint_object_create(db, &msg);
    if (msg == NULL) {
        /* log_size_for_flush 0: the memtables are flushed first, so the
         * copy needs no WAL replay */
        rocksdb_checkpoint_create(cp, dir, 0, &msg);
    }
    if (cp != NULL)
        rocksdb_checkpoint_object_destroy(cp);
    done_db(st);
    if (msg != NULL) {
        io_error(err, "checkpoint", msg);
        sl_error_detail(err, "directory: %s", dir);
        return -1;
    }
    return resfile_link_all(st, dir, err);
}

const char *state_bulk_dir(StateStore *st)
{
    return st->bulk_dir;
}

int state_get(StateStore *st, const void *key, size_t klen, Arena *a, void **val,
              size_t *vlen, SlError *err)
{
    char *msg = NULL;
    size_t n = 0;
    rocksdb_t *db = use_db(st, err);
    if (db == NULL)
        return -1;
    char *v = rocksdb_get(db, st->ropts, key, klen, &n, &msg);
    done_db(st);
    if (msg != NULL)
        return io_error(err, "get", msg);
    if (v == NULL)
        return 0;
    *val = arena_memdup(a, v, n);
    *vlen = n;
    rocksdb_free(v);
    return 1;
}

StateBatch *state_batch_new(void)
{
    StateBatch *b = sl_malloc(sizeof(StateBatch));
    b->wb = rocksdb_writebatch_create();
    b->ranges = false;
    b->puts = false;
    b->acct = NULL;
    b->charged = 0;
    b->pending = 0;
    return b;
}

/* Charges b's account with what its representation grew by since the last
 * charge (RocksDB's own bytes: the records as they will be written). */
static void charge(StateBatch *b)
{
    b->pending = 0;
    if (b->acct == NULL)
        return;
    size_t n = 0;
    rocksdb_writebatch_data(b->wb, &n);
    if (n > b->charged) {
        sl_mem_charge(b->acct, n - b->charged);
        b->charged = n;
    }
}

/* A record of n bytes (keys, value and the record's overhead at its
 * largest) was added: b's account is charged once a step's worth is
 * pending. */
static inline void grow(StateBatch *b, size_t n)
{
    if (b->acct == NULL)
        return;
    b->pending += n;
    if (b->pending >= STATE_CHARGE_STEP)
        charge(b);
}

void state_batch_charge(StateBatch *b)
{
    charge(b);
}

void state_batch_set_account(StateBatch *b, SlMemAccount *a)
{
    if (b->acct != NULL) {
        sl_mem_credit(b->acct, b->charged);
        sl_mem_account_unref(b->acct);
    }
    b->acct = a;
    b->charged = 0;
    if (a != NULL) {
        sl_mem_account_ref(a);
        charge(b);
    }
}

void state_batch_put(StateBatch *b, const void *key, size_t klen, const void *val,
                     size_t vlen)
{
    rocksdb_writebatch_put(b->wb, key, klen, val, vlen);
    b->puts = true;
    grow(b, 11 + klen + vlen);      /* tag, two varint32 lengths */
}

void state_batch_delete(StateBatch *b, const void *key, size_t klen)
{
    rocksdb_writebatch_delete(b->wb, key, klen);
    grow(b, 6 + klen);
}

void state_batch_delete_range(StateBatch *b, const void *start, size_t slen, const void *end,
                              size_t elen)
{
    rocksdb_writebatch_delete_range(b->wb, start, slen, end, elen);
    b->ranges = true;
    grow(b, 11 + slen + elen);
}

static void append_put_cb(void *arg, const char *k, size_t klen, const char *v, size_t vlen)
{
    rocksdb_writebatch_put(arg, k, klen, v, vlen);
}

static void append_delete_cb(void *arg, const char *k, size_t klen)
{
    rocksdb_writebatch_delete(arg, k, klen);
}

void state_batch_append(StateBatch *dst, StateBatch *src)
{
    dst->puts |= src->puts;
    if (!src->ranges) {
        rocksdb_writebatch_iterate(src->wb, dst->wb, append_put_cb, append_delete_cb);
        charge(dst);
        return;
    }
    /* The C API's iteration has no range deletions: the records are
     * appended as they are (a batch's representation: sequence number (8),
     * count (4, little-endian), then its records; RocksDB's own
     * WriteBatchInternal::Append). */
    size_t dn, sn;
    const char *d = rocksdb_writebatch_data(dst->wb, &dn);
    const char *s = rocksdb_writebatch_data(src->wb, &sn);
    if (sn <= 12)
        return;
    char *rep = sl_malloc(dn + sn - 12);
    memcpy(rep, d, dn);
    memcpy(rep + dn, s + 12, sn - 12);
    uint32_t count = (uint32_t)rocksdb_writebatch_count(dst->wb) +
                     (uint32_t)rocksdb_writebatch_count(src->wb);
    for (int i = 0; i < 4; i++)
        rep[8 + i] = (char)(count >> (8 * i));
    rocksdb_writebatch_destroy(dst->wb);
    dst->wb = rocksdb_writebatch_create_from(rep, dn + sn - 12);
    dst->ranges = true;
    sl_free(rep);
    charge(dst);
}

int state_batch_count(StateBatch *b)
{
    return rocksdb_writebatch_count(b->wb);
}

/* The database for a write of `bytes` (that puts data: checked against
 * the reserve), the store reopened first after a full disk; counted as in
 * use until done_db.  NULL with err when the write is refused (nothing
 * written). */
static rocksdb_t *use_db_to_write(StateStore *st, bool puts, size_t bytes, SlError *err)
{
    unsigned long long avail;
    if (puts && check_room_for(st, bytes, &avail, err) < 0)
        return NULL;
    if (atomic_load(&st->no_space) && resume(st, err) < 0)
        return NULL;
    return use_db(st, err);
}

int state_batch_commit(StateStore *st, StateBatch *b, bool sync, SlError *err)
{
    bool refused;
    return state_batch_try_commit(st, b, sync, &refused, err);
}

int state_batch_try_commit(StateStore *st, StateBatch *b, bool sync, bool *refused,
                           SlError *err)
{
    /* Refusals before RocksDB is asked to write: nothing of b is written.
     * A write must fit above the reserve: RocksDB's own out-of-space
     * failure leaves its WAL writer broken until the store is reopened
     * (resume), so sluice keeps RocksDB from meeting a full disk wherever
     * it can tell in advance. */
    *refused = true;
    charge(b);                      /* the rest of its growth */
    size_t bytes = 0;
    rocksdb_writebatch_data(b->wb, &bytes);
    rocksdb_t *db = use_db_to_write(st, b->puts, bytes, err);
    if (db == NULL)
        return -1;
    *refused = false;
    char *msg = NULL;
    if (SLUICE_FAULT_FAILS("state_write_no_space"))
        msg = strdup("IO error: No space left on device: While appending to file: "
                     "(fault point state_write_no_space)");
    else
        rocksdb_write(db, sync ? st->wopts_sync : st->wopts_nosync, b->wb, &msg);
    done_db(st);
    if (msg != NULL) {
        /* The store is reopened before the next write (resume). */
        if (no_space_message(msg))
            atomic_store(&st->no_space, true);
        return io_error(err, "write", msg);
    }
    return 0;
}

void state_batch_free(StateBatch *b)
{
    if (b == NULL)
        return;
    state_batch_set_account(b, NULL);
    rocksdb_writebatch_destroy(b->wb);
    sl_free(b);
}

/* The smallest key past every key with the prefix: the prefix with its
 * last byte below 0xFF incremented, the rest dropped; 0 when there is none
 * (the prefix is empty or all 0xFF).  upper has room for plen bytes. */
static size_t prefix_upper(const void *prefix, size_t plen, char *upper)
{
    memcpy(upper, prefix, plen);
    size_t ulen = plen;
    while (ulen > 0 && (unsigned char)upper[ulen - 1] == 0xFF)
        ulen--;
    if (ulen > 0)
        upper[ulen - 1]++;
    return ulen;
}

/* A scan of the keys with the prefix, from the prefix (start NULL), from
 * the last key <= start or from the first key >= start (forward); endable:
 * listed for a reopen to end, else counted as a user until its close. */
static StateScan *scan_open(StateStore *st, const void *prefix, size_t plen,
                            const void *start, size_t slen, bool forward, bool endable)
{
    StateScan *s = sl_calloc(1, sizeof(StateScan));
    s->ropts = read_options();
    s->prefix = sl_malloc(plen ? plen : 1);
    memcpy(s->prefix, prefix, plen);
    s->plen = plen;
    if (start != NULL) {
        s->start = sl_malloc(slen ? slen : 1);
        memcpy(s->start, start, slen);
        s->slen = slen;
        s->forward = forward;
    }
    /* Bounds on the iterator: past the prefix it stops at once, instead of
     * stepping over the deleted keys beyond it (tombstones stay until
     * compaction) to the next live key, only to find it outside. */
    s->upper = sl_malloc(plen ? plen : 1);
    size_t ulen = prefix_upper(prefix, plen, s->upper);
    if (ulen > 0)
        rocksdb_readoptions_set_iterate_upper_bound(s->ropts, s->upper, ulen);
    if (plen > 0)
        rocksdb_readoptions_set_iterate_lower_bound(s->ropts, s->prefix, plen);
    s->st = st;
    s->endable = endable;
    if (!endable) {
        /* A user until its close: no reopen while it is open. */
        rocksdb_t *db = use_db(st, NULL);
        if (db != NULL)
            s->it = rocksdb_create_iterator(db, s->ropts);
        return s;
    }
    /* Listed until it is closed: a reopen ends it. */
    pthread_mutex_init(&s->mu, NULL);
    strbuf_init(&s->kbuf);
    strbuf_init(&s->vbuf);
    pthread_mutex_lock(&st->mu);
    if (st->db != NULL)
        s->it = rocksdb_create_iterator(st->db, s->ropts);
    s->next = st->scans;
    if (st->scans != NULL)
        st->scans->prev = s;
    st->scans = s;
    pthread_mutex_unlock(&st->mu);
    return s;
}

StateScan *state_scan_open(StateStore *st, const void *prefix, size_t plen)
{
    return scan_open(st, prefix, plen, NULL, 0, false, false);
}

StateScan *state_scan_open_at(StateStore *st, const void *prefix, size_t plen,
                              const void *start, size_t slen)
{
    return scan_open(st, prefix, plen, start, slen, false, false);
}

StateScan *state_scan_open_from(StateStore *st, const void *prefix, size_t plen,
                                const void *start, size_t slen)
{
    return scan_open(st, prefix, plen, start, slen, true, false);
}

StateScan *state_scan_open_endable(StateStore *st, const void *prefix, size_t plen)
{
    return scan_open(st, prefix, plen, NULL, 0, false, true);
}

StateScan *state_scan_open_endable_at(StateStore *st, const void *prefix, size_t plen,
                                      const void *start, size_t slen)
{
    return scan_open(st, prefix, plen, start, slen, false, true);
}

/* The iterator's entry, when it is one of the prefix: true with key and
 * val (unless NULL) pointing at it -- at RocksDB's own bytes for a batch
 * scan, at copies in the scan's buffers for an endable one. */
static bool scan_entry(StateScan *s, const void **key, size_t *klen, const void **val,
                       size_t *vlen)
{
    if (!rocksdb_iter_valid(s->it))
        return false;
    size_t kl, vl;
    const char *k = rocksdb_iter_key(s->it, &kl);
    if (kl < s->plen || memcmp(k, s->prefix, s->plen) != 0)
        return false;
    const char *v = val != NULL ? rocksdb_iter_value(s->it, &vl) : NULL;
    if (s->endable) {
        strbuf_reset(&s->kbuf);
        strbuf_append(&s->kbuf, k, kl);
        k = s->kbuf.data;
        if (v != NULL) {
            strbuf_reset(&s->vbuf);
            strbuf_append(&s->vbuf, v, vl);
            v = s->vbuf.data;
        }
    }
    *key = k;
    *klen = kl;
    if (val != NULL) {
        *val = v;
        *vlen = vl;
    }
    return true;
}

/* The next entry of s (an endable scan's under its mutex). */
static bool scan_step(StateScan *s, const void **key, size_t *klen, const void **val,
                      size_t *vlen)
{
    if (s->it == NULL)
        return false;
    if (!s->started) {
        s->started = true;
        bool positioned = false;
        if (s->start != NULL && s->forward) {
            rocksdb_iter_seek(s->it, s->start, s->slen);
            positioned = true;
        } else if (s->start != NULL) {
            rocksdb_iter_seek_for_prev(s->it, s->start, s->slen);
            if (rocksdb_iter_valid(s->it)) {
                size_t kl;
                const char *k = rocksdb_iter_key(s->it, &kl);
                positioned = kl >= s->plen && memcmp(k, s->prefix, s->plen) == 0;
            }
        }
        if (!positioned)
            rocksdb_iter_seek(s->it, s->prefix, s->plen);
    } else {
        rocksdb_iter_next(s->it);
    }
    return scan_entry(s, key, klen, val, vlen);
}

bool state_scan_next(StateScan *s, const void **key, size_t *klen, const void **val,
                     size_t *vlen)
{
    if (!s->endable)
        return scan_step(s, key, klen, val, vlen);
    pthread_mutex_lock(&s->mu);
    bool found = scan_step(s, key, klen, val, vlen);
    pthread_mutex_unlock(&s->mu);
    return found;
}

/* state_scan_seek (an endable scan's under its mutex). */
static bool scan_seek(StateScan *s, const void *key, size_t klen, const void **found,
                      size_t *flen, const void **val, size_t *vlen)
{
    if (s->it == NULL)
        return false;
    s->started = true;
    rocksdb_iter_seek(s->it, key, klen);
    return scan_entry(s, found, flen, val, vlen);
}

bool state_scan_seek(StateScan *s, const void *key, size_t klen, const void **found,
                     size_t *flen, const void **val, size_t *vlen)
{
    if (!s->endable)
        return scan_seek(s, key, klen, found, flen, val, vlen);
    pthread_mutex_lock(&s->mu);
    bool ok = scan_seek(s, key, klen, found, flen, val, vlen);
    pthread_mutex_unlock(&s->mu);
    return ok;
}

/* The status of s (an endable scan's under its mutex). */
static int scan_status(StateScan *s, SlError *err)
{
    if (s->ended) {
        sl_error(err, ERRCODE_DISK_FULL,
                 "state store: the scan was ended: the store was closed and opened again "
                 "after the disk filled up");
        sl_error_hint(err, "Run the statement again: no data was lost (docs/operations.md, "
                           "\"Disk full\").");
        return -1;
    }
    if (s->it == NULL)
        return use_db_error(err);
    char *msg = NULL;
    rocksdb_iter_get_error(s->it, &msg);
    return msg != NULL ? io_error(err, "scan", msg) : 0;
}

int state_scan_status(StateScan *s, SlError *err)
{
    if (!s->endable)
        return scan_status(s, err);
    pthread_mutex_lock(&s->mu);
    int rc = scan_status(s, err);
    pthread_mutex_unlock(&s->mu);
    return rc;
}

int state_scan_close(StateScan *s, SlError *err)
{
    int rc = state_scan_status(s, err);
    StateStore *st = s->st;
    if (!s->endable) {
        if (s->it != NULL) {
            rocksdb_iter_destroy(s->it);
            done_db(st);
        }
    } else {
        pthread_mutex_lock(&st->mu);
        if (s->prev != NULL)
            s->prev->next = s->next;
        else
            st->scans = s->next;
        if (s->next != NULL)
            s->next->prev = s->prev;
        if (s->it != NULL)
            rocksdb_iter_destroy(s->it);
        pthread_mutex_unlock(&st->mu);
        pthread_mutex_destroy(&s->mu);
        strbuf_free(&s->kbuf);
        strbuf_free(&s->vbuf);
    }
    rocksdb_readoptions_destroy(s->ropts);
    sl_free(s->prefix);
    sl_free(s->upper);
    sl_free(s->start);
    sl_free(s);
    return rc;
}

int state_last_key(StateStore *st, const void *prefix, size_t plen, Arena *a, void **key,
                   size_t *klen, SlError *err)
{
    rocksdb_t *db = use_db(st, err);
    if (db == NULL)
        return -1;
    char *upper = sl_malloc(plen ? plen : 1);
    size_t ulen = prefix_upper(prefix, plen, upper);
    rocksdb_iterator_t *it = rocksdb_create_iterator(db, st->ropts);
    if (ulen == 0) {
        rocksdb_iter_seek_to_last(it);
    } else {
        rocksdb_iter_seek_for_prev(it, upper, ulen);
        /* seek_for_prev lands on upper itself if it exists: step back. */
        if (rocksdb_iter_valid(it)) {
            size_t kl;
            const char *k = rocksdb_iter_key(it, &kl);
            if (kl == ulen && memcmp(k, upper, ulen) == 0)
                rocksdb_iter_prev(it);
        }
    }
    int rc = 0;
    if (rocksdb_iter_valid(it)) {
        size_t kl;
        const char *k = rocksdb_iter_key(it, &kl);
        if (kl >= plen && memcmp(k, prefix, plen) == 0) {
            *key = arena_memdup(a, k, kl);
            *klen = kl;
            rc = 1;
        }
    }
    char *msg = NULL;
    rocksdb_iter_get_error(it, &msg);
    if (msg != NULL)
        rc = io_error(err, "seek", msg);
    rocksdb_iter_destroy(it);
    done_db(st);
    sl_free(upper);
    return rc;
}

uint64_t state_prefix_disk_bytes(StateStore *st, const void *prefix, size_t plen)
{
    char upper[64];
    if (plen == 0 || plen > sizeof(upper))
        return 0;
    size_t ulen = prefix_upper(prefix, plen, upper);
    if (ulen == 0)
        return 0;
    const char *starts[1] = {prefix}, *limits[1] = {upper};
    size_t slens[1] = {plen}, llens[1] = {ulen};
    uint64_t size = 0;
    char *msg = NULL;
    rocksdb_t *db = use_db(st, NULL);
    if (db == NULL)
        return 0;
    rocksdb_approximate_sizes(db, 1, starts, slens, limits, llens, &size, &msg);
    done_db(st);
    if (msg != NULL) {
        rocksdb_free(msg);
        return 0;
    }
    return size;
}

uint64_t state_disk_bytes(StateStore *st)
{
    uint64_t v = 0;
    rocksdb_t *db = use_db(st, NULL);
    if (db == NULL)
        return 0;
    int rc = rocksdb_property_int(db, "rocksdb.live-sst-files-size", &v);
    done_db(st);
    return rc != 0 ? 0 : v;
}

uint64_t state_cache_bytes(StateStore *st)
{
    return (uint64_t)rocksdb_cache_get_usage(st->cache);
}

/* ------------------------------------------------------------ bulk loads */

struct StateIngest {
    StateStore              *st;
    StateScan               *scan;      /* the prefix's keys, for state_ingest_exists */
    bool                     at_end;    /* no stored key at or past the last one asked */
    bool                     have_next;
    StrBuf                   next;      /* the first stored key at or past it */
    StateBatch              *wb;        /* a small load: one write instead */
    rocksdb_envoptions_t    *eo;
    rocksdb_sstfilewriter_t *w;         /* the file being written, or NULL */
    uint64_t                 wbytes;    /* its keys' and values' bytes */
    char                   **paths;
    int                      npaths, cappaths;
};

StateIngest *state_ingest_new(StateStore *st, const void *prefix, size_t plen, bool small)
{
    StateIngest *ig = sl_calloc(1, sizeof(StateIngest));
    ig->st = st;
    if (small)
        ig->wb = state_batch_new();
    ig->scan = state_scan_open_endable(st, prefix, plen);
    strbuf_init(&ig->next);
    ig->eo = rocksdb_envoptions_create();
    return ig;
}

static int key_cmp(const void *a, size_t alen, const void *b, size_t blen)
{
    int c = memcmp(a, b, alen < blen ? alen : blen);
    if (c != 0)
        return c;
    return alen < blen ? -1 : alen > blen;
}

int state_ingest_exists(StateIngest *ig, const void *key, size_t klen, SlError *err)
{
    /* The keys come in ascending order: the first stored key at or past
     * the previous one answers for every key up to it, so a load into an
     * empty range seeks once. */
    if (ig->at_end)
        return 0;
    if (ig->have_next) {
        int c = key_cmp(key, klen, ig->next.data, ig->next.len);
        if (c <= 0)
            return c == 0;
    }
    const void *k;
    size_t kl;
    if (!state_scan_seek(ig->scan, key, klen, &k, &kl, NULL, NULL)) {
        if (state_scan_status(ig->scan, err) < 0)
            return -1;
        ig->at_end = true;
        return 0;
    }
    strbuf_reset(&ig->next);
    strbuf_append(&ig->next, k, kl);
    ig->have_next = true;
    return key_cmp(key, klen, ig->next.data, ig->next.len) == 0;
}

/* Ends the file being written (synced by RocksDB's writer). */
static int ingest_finish_file(StateIngest *ig, SlError *err)
{
    if (ig->w == NULL)
        return 0;
    char *msg = NULL;
    rocksdb_sstfilewriter_finish(ig->w, &msg);
    rocksdb_sstfilewriter_destroy(ig->w);
    ig->w = NULL;
    if (msg != NULL)
        return io_error(err, "bulk load: finish a table file", msg);
    return 0;
}

int state_ingest_put(StateIngest *ig, const void *key, size_t klen, const void *val,
                     size_t vlen, SlError *err)
{
    char *msg = NULL;
    if (ig->wb != NULL) {
        state_batch_put(ig->wb, key, klen, val, vlen);
        return 0;
    }
    if (ig->w != NULL && ig->wbytes >= STATE_INGEST_FILE_BYTES &&
        ingest_finish_file(ig, err) < 0)
        return -1;
    if (ig->w == NULL) {
        /* a whole file must fit above the reserve, as a write must */
        unsigned long long avail;
        if (check_room_for(ig->st, STATE_INGEST_FILE_BYTES, &avail, err) < 0)
            return -1;
        if (ig->npaths == ig->cappaths) {
            ig->cappaths = ig->cappaths ? ig->cappaths * 2 : 8;
            ig->paths = sl_realloc(ig->paths, sizeof(char *) * (size_t)ig->cappaths);
        }
        char path[4096];
        snprintf(path, sizeof(path), "%s/ingest-%p-%d.sst", ig->st->bulk_dir, (void *)ig,
                 ig->npaths);
        ig->paths[ig->npaths++] = sl_strdup(path);
        ig->w = rocksdb_sstfilewriter_create(ig->eo, ig->st->opts);
        ig->wbytes = 0;
        rocksdb_sstfilewriter_open(ig->w, path, &msg);
        if (msg != NULL)
            return io_error(err, "bulk load: open a table file", msg);
    }
    rocksdb_sstfilewriter_put(ig->w, key, klen, val, vlen, &msg);
    if (msg != NULL)
        return io_error(err, "bulk load: write a table file", msg);
    ig->wbytes += klen + vlen;
    return 0;
}

int state_ingest_commit(StateIngest *ig, SlError *err)
{
    if (ig->wb != NULL) {
        if (state_batch_count(ig->wb) == 0)
            return 0;
        SLUICE_FAULT("state_ingest_before");
        if (state_batch_commit(ig->st, ig->wb, true, err) < 0)
            return -1;
        SLUICE_FAULT("state_ingest_after");
        return 0;
    }
    if (ingest_finish_file(ig, err) < 0)
        return -1;
    if (ig->npaths == 0)
        return 0;
    StateStore *st = ig->st;
    rocksdb_t *db = use_db_to_write(st, true, 0, err);
    if (db == NULL)
        return -1;
    SLUICE_FAULT("state_ingest_before");
    rocksdb_ingestexternalfileoptions_t *io = rocksdb_ingestexternalfileoptions_create();
    /* linked into the store rather than copied: the files are ours */
    rocksdb_ingestexternalfileoptions_set_move_files(io, 1);
    char *msg = NULL;
    rocksdb_ingest_external_file(db, (const char *const *)ig->paths, (size_t)ig->npaths, io,
                                 &msg);
    rocksdb_ingestexternalfileoptions_destroy(io);
    done_db(st);
    if (msg != NULL) {
        if (no_space_message(msg))
            atomic_store(&st->no_space, true);
        return io_error(err, "bulk load: ingest", msg);
    }
    SLUICE_FAULT("state_ingest_after");
    return 0;
}

void state_ingest_free(StateIngest *ig)
{
    if (ig == NULL)
        return;
    if (ig->w != NULL)
        rocksdb_sstfilewriter_destroy(ig->w);
    state_batch_free(ig->wb);
    for (int i = 0; i < ig->npaths; i++) {
        unlink(ig->paths[i]);   /* gone already once ingested (moved) */
        sl_free(ig->paths[i]);
    }
    sl_free(ig->paths);
    rocksdb_envoptions_destroy(ig->eo);
    SlError ignore = {0};
    state_scan_close(ig->scan, &ignore);
    sl_error_clear(&ignore);
    strbuf_free(&ig->next);
    sl_free(ig);
}
