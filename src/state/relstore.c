/*
 * relstore.c -- rows of tables and internal streams in RocksDB (see
 * relstore.h for the key layout).
 *
 *   tbl_key, tbl_key_prefix, tbl_rowid_key, tbl_next_rowid, tbl_get, tbl_put, tbl_delete
 *   tbl_scan_open, tbl_scan_next, rel_scan_close
 *   stream_append, stream_append_batches, stream_end_offset, stream_end_offset_nowait,
 *   stream_forget
 *   stream_scan_open, stream_scan_next
 *   stream_commit_mode_set, stream_commit_mode, stream_commit_stats
 *   result_log_begin, result_log_add, result_log_end, result_log_free
 *   rel_purge, rel_disk_bytes
 *   rel_counters_new, rel_counters_free, group_commit_new, group_commit_free
 *                      what each StateStore holds for this file (state_int.h)
 *
 * Result logs of batches of RESULT_FILE_MIN_BYTES and more go to result
 * files (resfile.c); the rest of this file sees only their references.
 *
 * An append is refused (53100) before it takes offsets when the disk is
 * full (state_check_room), so a group write is never failed by that.
 *
 * The next row id of each table and the end offset of each stream are found
 * once from the last key on disk and then kept in a small table in memory
 * (RelCounters), under a mutex: appends to one stream are serialized so
 * offsets stay dense.  That table, the commit policy and the open group
 * (GroupCommit, under the same mutex) are the store's: state_open makes
 * them and the StateStore holds them, so this file keeps no state of its own.
 */
#include "sluice/bytes.h"
#include "sluice/relstore.h"
#include "sluice/rowcodec.h"

#include "resfile.h"
#include "state_int.h"

#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <string.h>
#include <time.h>

/* ---------------------------------------------------------------------- */
/* Counters: per relation, the next row id or stream offset                */

typedef struct Counter {
    uint32_t oid;
    char     space;     /* 'T' row ids, 'S' stream offsets */
    int64_t  next;      /* the next offset to hand out */
    int64_t  visible;   /* streams: offsets below this are durable */
} Counter;

/* A store's counters (state_counters): each store has its own, so two
 * stores in one process never share offsets.  mu also guards the store's
 * GroupCommit. */
struct RelCounters {
    pthread_mutex_t mu;
    Counter        *items;
    int             n, cap;
    /* A copy of the streams' durable ends (oid -> visible), for readers
     * that must not wait for mu, which an append holds across its synced
     * write (stream_end_offset_nowait: /metrics on the loop).  Written
     * with mu held, under pub_mu, which nobody holds for longer than a
     * copy. */
    pthread_mutex_t pub_mu;
    Counter        *pub;
    int             npub, cappub;
};

RelCounters *rel_counters_new(void)
{
    RelCounters *rc = sl_calloc(1, sizeof(RelCounters));
    pthread_mutex_init(&rc->mu, NULL);
    pthread_mutex_init(&rc->pub_mu, NULL);
    return rc;
}

void rel_counters_free(RelCounters *rc)
{
    if (rc == NULL)
        return;
    pthread_mutex_destroy(&rc->mu);
    pthread_mutex_destroy(&rc->pub_mu);
    sl_free(rc->items);
    sl_free(rc->pub);
    sl_free(rc);
}

static void make_prefix(uint8_t *p, char space, uint32_t oid)
{
    p[0] = (uint8_t)space;
    put_be32(p + 1, oid);
}

static Counter *counter_find(RelCounters *rc, char space, uint32_t oid)
{
    for (int i = 0; i < rc->n; i++)
        if (rc->items[i].oid == oid && rc->items[i].space == space)
            return &rc->items[i];
    return NULL;
}

/* A stream's durable end into the copy readers see without mu (with mu
 * held); visible < 0 takes the stream out of it. */
static void publish(RelCounters *rc, uint32_t oid, int64_t visible)
{
    pthread_mutex_lock(&rc->pub_mu);
    int i = 0;
    while (i < rc->npub && rc->pub[i].oid != oid)
        i++;
    if (visible < 0) {
        if (i < rc->npub)
            rc->pub[i] = rc->pub[--rc->npub];
    } else {
        if (i == rc->npub) {
            if (rc->npub == rc->cappub) {
                rc->cappub = rc->cappub ? rc->cappub * 2 : 16;
                rc->pub = sl_realloc(rc->pub, sizeof(Counter) * (size_t)rc->cappub);
            }
            rc->pub[rc->npub++] = (Counter){oid, 'S', visible, visible};
        }
        rc->pub[i].visible = visible;
    }
    pthread_mutex_unlock(&rc->pub_mu);
}

/* Finds (or loads from disk) the counter; called with the store's
 * counters' mu held. */
static Counter *counter_get(StateStore *st, char space, uint32_t oid, SlError *err)
{
    RelCounters *tab = state_counters(st);
    Counter *found = counter_find(tab, space, oid);
    if (found != NULL)
        return found;
    uint8_t prefix[5];
    make_prefix(prefix, space, oid);
    Arena a;
    arena_init(&a, 256);
    void *key;
    size_t klen;
    int rc = state_last_key(st, prefix, sizeof(prefix), &a, &key, &klen, err);
    int64_t next = 0;
    if (rc < 0) {
        arena_destroy(&a);
        return NULL;
    }
    if (rc == 1 && space == 'T' && klen == 5 + 8) {
        next = (int64_t)get_be64((const uint8_t *)key + 5) + 1;
    } else if (rc == 1 && space == 'S' && klen == 5 + 8) {
        /* The last chunk's first offset plus its row count. */
        void *val;
        size_t vlen;
        int64_t first = (int64_t)get_be64((const uint8_t *)key + 5);
        int g = state_get(st, key, klen, &a, &val, &vlen, err);
        if (g < 0 || vlen < 4) {
            if (g >= 0)
                sl_error(err, ERRCODE_DATA_CORRUPTED, "stream chunk too short");
            arena_destroy(&a);
            return NULL;
        }
        const uint8_t *v = val;
        next = first + (int64_t)get_le32(v);
    }
    arena_destroy(&a);
    if (tab->n == tab->cap) {
        tab->cap = tab->cap ? tab->cap * 2 : 16;
        tab->items = sl_realloc(tab->items, sizeof(Counter) * (size_t)tab->cap);
    }
    tab->items[tab->n] = (Counter){oid, space, next, next};
    if (space == 'S')
        publish(tab, oid, next);
    return &tab->items[tab->n++];
}

static void counter_forget(RelCounters *rc, char space, uint32_t oid)
{
    pthread_mutex_lock(&rc->mu);
    for (int i = 0; i < rc->n; i++) {
        if (rc->items[i].oid == oid && rc->items[i].space == space) {
            rc->items[i] = rc->items[--rc->n];
            break;
        }
    }
    if (space == 'S')
        publish(rc, oid, -1);
    if (rc->n == 0) {
        sl_free(rc->items);
        rc->items = NULL;
        rc->cap = 0;
    }
    pthread_mutex_unlock(&rc->mu);
}

/* ---------------------------------------------------------------------- */
/* Tables                                                                  */

void tbl_key(const CatRelation *rel, const Batch *b, uint32_t row, StrBuf *key)
{
    uint8_t prefix[5];
    make_prefix(prefix, 'T', rel->oid);
    strbuf_reset(key);
    strbuf_append(key, prefix, sizeof(prefix));
    key_encode(b, row, rel->pk, rel->npk, key);
}

void tbl_key_prefix(const CatRelation *rel, StrBuf *key)
{
    uint8_t prefix[TBL_KEY_PREFIX_BYTES];
    make_prefix(prefix, 'T', rel->oid);
    strbuf_reset(key);
    strbuf_append(key, prefix, sizeof(prefix));
}

void tbl_rowid_key(const CatRelation *rel, uint64_t rowid, StrBuf *key)
{
    uint8_t k[13];
    make_prefix(k, 'T', rel->oid);
    put_be64(k + 5, rowid);
    strbuf_reset(key);
    strbuf_append(key, k, sizeof(k));
}

uint64_t tbl_next_rowid(StateStore *st, const CatRelation *rel, SlError *err)
{
    RelCounters *rc = state_counters(st);
    pthread_mutex_lock(&rc->mu);
    Counter *c = counter_get(st, 'T', rel->oid, err);
    uint64_t id = c ? (uint64_t)c->next++ : UINT64_MAX;
    pthread_mutex_unlock(&rc->mu);
    return id;
}

static SlType *rel_types(Arena *a, const CatRelation *rel)
{
    SlType *t = ARENA_ARRAY(a, SlType, rel->ncols ? rel->ncols : 1);
    for (int i = 0; i < rel->ncols; i++)
        t[i] = rel->cols[i].type;
    return t;
}

static int corrupt(SlError *err, const CatRelation *rel)
{
    return sl_error(err, ERRCODE_DATA_CORRUPTED, "a stored row of \"%s\" is corrupt",
                    rel->name);
}

int tbl_get(StateStore *st, const CatRelation *rel, const StrBuf *key, Arena *a, Batch *out,
            uint32_t row, SlError *err)
{
    void *val;
    size_t vlen;
    int rc = state_get(st, key->data, key->len, a, &val, &vlen, err);
    if (rc <= 0)
        return rc;
    if (row_decode(val, vlen, out, row, a) < 0)
        return corrupt(err, rel);
    return 1;
}

void tbl_put(StateBatch *wb, const StrBuf *key, const Batch *b, uint32_t row)
{
    StrBuf val;
    strbuf_init(&val);
    row_encode(b, row, &val);
    state_batch_put(wb, key->data, key->len, val.data, val.len);
    strbuf_free(&val);
}

void tbl_delete(StateBatch *wb, const StrBuf *key)
{
    state_batch_delete(wb, key->data, key->len);
}

struct RelScan {
    StateScan         *scan;
    StateStore        *st;
    const CatRelation *rel;
    bool               is_stream;
    bool               log_next;    /* tables: the result log follows the rows */
    bool               in_log;      /* tables: reading the result log */
    bool               endable;     /* a statement's: its state scans are endable */
    int64_t            from, to;    /* streams: the offset range */
    /* streams and result logs: the chunk being read */
    const uint8_t     *chunk;
    size_t             chunk_len;
    size_t             chunk_pos;
    uint32_t           chunk_left;
    int64_t            offset;      /* offset of the next row in the chunk */
    SlStr              chunk_key;   /* in chunk_arena or the scan's key */
    Arena              chunk_arena;
    /* result logs: the result-file region being read */
    ResFileRead        rf;
    bool               in_file;
    uint8_t            ref_key[13];
    bool               done;
};

RelScan *tbl_scan_open(StateStore *st, const CatRelation *rel, bool endable)
{
    RelScan *s = sl_calloc(1, sizeof(RelScan));
    uint8_t prefix[5];
    make_prefix(prefix, 'T', rel->oid);
    s->scan = endable ? state_scan_open_endable(st, prefix, sizeof(prefix))
                      : state_scan_open(st, prefix, sizeof(prefix));
    s->endable = endable;
    s->st = st;
    s->rel = rel;
    s->log_next = rel->kind == REL_QUERY;
    arena_init(&s->chunk_arena, 4096);
    resfile_read_init(&s->rf);
    return s;
}

static bool next_chunk(RelScan *s, size_t keylen, SlError *err, bool *bad);
static bool log_next_chunk(RelScan *s, SlError *err, bool *bad);
static int  chunk_row(RelScan *s, const uint8_t **row, uint32_t *len, SlError *err);

/* The next row of a table scan: 1 with the row decoded into b, 0 at the
 * end, -1 on error. */
static int tbl_scan_row(RelScan *s, Arena *a, Batch *b, SlStr *k, SlError *err)
{
    const void *key, *val;
    size_t klen, vlen;
    while (s->in_log) {
        if (s->chunk_left == 0) {
            bool bad = false;
            if (log_next_chunk(s, err, &bad))
                continue;
            return bad ? -1 : 0;
        }
        const uint8_t *row;
        uint32_t len;
        if (chunk_row(s, &row, &len, err) < 0)
            return -1;
        if (row_decode(row, len, b, b->nrows, a) < 0)
            return corrupt(err, s->rel);
        if (k)
            k[b->nrows] = (SlStr){arena_memdup(a, s->chunk_key.ptr, s->chunk_key.len),
                                  s->chunk_key.len};
        return 1;
    }
    if (!state_scan_next(s->scan, &key, &klen, &val, &vlen)) {
        if (state_scan_status(s->scan, err) < 0)
            return -1;
        if (!s->log_next)
            return 0;
        /* The rows are read: the result log comes next. */
        if (state_scan_close(s->scan, err) < 0) {
            s->scan = NULL;
            return -1;
        }
        uint8_t prefix[5];
        make_prefix(prefix, 'A', s->rel->oid);
        s->scan = s->endable ? state_scan_open_endable(s->st, prefix, sizeof(prefix))
                             : state_scan_open(s->st, prefix, sizeof(prefix));
        s->in_log = true;
        return tbl_scan_row(s, a, b, k, err);
    }
    if (row_decode(val, vlen, b, b->nrows, a) < 0)
        return corrupt(err, s->rel);
    if (k)
        k[b->nrows] = (SlStr){arena_memdup(a, key, klen), (uint32_t)klen};
    return 1;
}

int tbl_scan_next(RelScan *s, Arena *a, Batch **out, SlStr **keys, SlError *err)
{
    if (s->done)
        return 0;
    Batch *b = batch_alloc(a, rel_types(a, s->rel), (uint32_t)s->rel->ncols,
                           RELSTORE_BATCH_ROWS);
    SlStr *k = keys ? ARENA_ARRAY(a, SlStr, RELSTORE_BATCH_ROWS) : NULL;
    while (b->nrows < RELSTORE_BATCH_ROWS) {
        int rc = tbl_scan_row(s, a, b, k, err);
        if (rc < 0)
            return -1;
        if (rc == 0) {
            s->done = true;
            break;
        }
        b->nrows++;
    }
    for (uint32_t c = 0; c < b->ncols; c++)
        b->cols[c].len = b->nrows;
    *out = b;
    if (keys)
        *keys = k;
    return (int)b->nrows;
}

int rel_scan_close(RelScan *s, SlError *err)
{
    if (s == NULL)
        return 0;
    int rc = s->scan != NULL ? state_scan_close(s->scan, err) : 0;
    resfile_read_end(&s->rf);
    arena_destroy(&s->chunk_arena);
    sl_free(s);
    return rc;
}

/* ---------------------------------------------------------------------- */
/* Internal streams                                                        */

int64_t stream_end_offset(StateStore *st, const CatRelation *rel, SlError *err)
{
    RelCounters *rc = state_counters(st);
    pthread_mutex_lock(&rc->mu);
    Counter *c = counter_get(st, 'S', rel->oid, err);
    int64_t end = c ? c->visible : -1;
    pthread_mutex_unlock(&rc->mu);
    return end;
}

int64_t stream_end_offset_nowait(StateStore *st, const CatRelation *rel, SlError *err)
{
    RelCounters *rc = state_counters(st);
    int64_t end = -2;
    pthread_mutex_lock(&rc->pub_mu);
    for (int i = 0; i < rc->npub; i++)
        if (rc->pub[i].oid == rel->oid)
            end = rc->pub[i].visible;
    pthread_mutex_unlock(&rc->pub_mu);
    if (end != -2)
        return end;
    /* not loaded since the store opened: load it, unless an append holds
     * the counters now */
    if (pthread_mutex_trylock(&rc->mu) != 0)
        return -2;
    Counter *c = counter_get(st, 'S', rel->oid, err);
    end = c ? c->visible : -1;
    pthread_mutex_unlock(&rc->mu);
    return end;
}

void stream_forget(StateStore *st, const CatRelation *rel)
{
    counter_forget(state_counters(st), 'S', rel->oid);
    counter_forget(state_counters(st), 'T', rel->oid);
}

/* ---------------------------------------------------------------------- */
/* Commit policy                                                           */

/* A group of appends that share one synced write (STREAM_COMMIT_GROUP).
 * At most one group is open (taking members) and at most one is being
 * written; groups are written in the order they were opened, so the ends
 * they publish only grow. */
typedef struct GroupEnd {
    uint32_t oid;
    int64_t  begin;     /* the relation's next offset before the group's first chunk */
    int64_t  end;
} GroupEnd;

typedef struct Group {
    StateBatch *wb;
    GroupEnd   *ends;
    int         nends, capends;
    int         members;
    bool        done;
    int         rc;
    char       *error;      /* the write's error, for every member */
    char        sqlstate[6];    /* and its SQLSTATE */
} Group;

/* A store's commit policy and its group (state_group_commit); everything
 * here is under the store's counters' mu (RelCounters.mu). */
struct GroupCommit {
    StreamCommitMode mode;
    int64_t          window_us;
    pthread_cond_t   cv;            /* members wait on it */
    Group           *open;          /* taking members */
    bool             leader;        /* a leader is waiting or writing */
    char            *broken;        /* a failed group write: appends refused */
    /* counted for the stop line, /metrics and benchmarks: written under
     * the counters' mu, read without it (stream_commit_stats) */
    _Atomic int64_t  appends, writes;
};

GroupCommit *group_commit_new(void)
{
    GroupCommit *gc = sl_calloc(1, sizeof(GroupCommit));
    gc->mode = STREAM_COMMIT_SYNC;
    gc->window_us = 1000;
    pthread_cond_init(&gc->cv, NULL);
    return gc;
}

void group_commit_free(GroupCommit *gc)
{
    if (gc == NULL)
        return;
    pthread_cond_destroy(&gc->cv);
    sl_free(gc->broken);
    sl_free(gc);
}

void stream_commit_mode_set(StateStore *st, StreamCommitMode mode, int64_t window_us)
{
    RelCounters *rc = state_counters(st);
    GroupCommit *gc = state_group_commit(st);
    pthread_mutex_lock(&rc->mu);
    gc->mode = mode;
    gc->window_us = window_us < 0 ? 0 : window_us;
    pthread_mutex_unlock(&rc->mu);
}

StreamCommitMode stream_commit_mode(StateStore *st)
{
    RelCounters *rc = state_counters(st);
    pthread_mutex_lock(&rc->mu);
    StreamCommitMode m = state_group_commit(st)->mode;
    pthread_mutex_unlock(&rc->mu);
    return m;
}

void stream_commit_stats(StateStore *st, int64_t *appends, int64_t *writes)
{
    GroupCommit *gc = state_group_commit(st);
    *appends = gc->appends;
    *writes = gc->writes;
}

static void group_note_end(Group *g, uint32_t oid, int64_t begin, int64_t end)
{
    for (int i = 0; i < g->nends; i++) {
        if (g->ends[i].oid == oid) {
            g->ends[i].end = end;
            return;
        }
    }
    if (g->nends == g->capends) {
        g->capends = g->capends ? g->capends * 2 : 8;
        g->ends = sl_realloc(g->ends, sizeof(GroupEnd) * (size_t)g->capends);
    }
    g->ends[g->nends++] = (GroupEnd){oid, begin, end};
}

/* The synced write of a stream append and what comes with it (a batch's
 * state): 0, or -1 with err.  In fault-injection builds it can be made to
 * fail (SLUICE_FAULT=stream_append_write:N:fail) without writing. */
static int append_write(StateStore *st, StateBatch *wb, bool *refused, SlError *err)
{
    *refused = false;
    if (SLUICE_FAULT_FAILS("stream_append_write"))
        return sl_error(err, ERRCODE_IO_ERROR,
                        "state store: write: %s (fault point stream_append_write)",
                        strerror(errno));
    return state_batch_try_commit(st, wb, true, refused, err);
}

/* Fails group g without writing it, with the error message msg and
 * SQLSTATE code; called with the counters' mu held. */
static void group_fail(Group *g, const char *msg, const char *code)
{
    g->rc = -1;
    g->error = sl_strdup(msg);
    snprintf(g->sqlstate, sizeof(g->sqlstate), "%s", code);
    g->done = true;
}

/* The leader's part, entered and left with the counters' mu held: wait out the
 * window so that more appends join, close the group, write it synced
 * outside the lock, publish its ends, and hand the lead on.  A write the
 * store refused before writing anything (a full disk, a reopen not yet
 * possible) fails this group and the open one (whose offsets follow
 * this one's) and gives their offsets back: appends go on once the store
 * takes writes again.  Only a failed RocksDB write breaks appends
 * (GroupCommit.broken): its offsets may be half-written. */
static void group_lead(StateStore *st, Group *g)
{
    RelCounters *cs = state_counters(st);
    GroupCommit *gc = state_group_commit(st);
    if (gc->window_us > 0) {
        pthread_mutex_unlock(&cs->mu);
        struct timespec ts = {(time_t)(gc->window_us / 1000000),
                              (long)(gc->window_us % 1000000) * 1000};
        nanosleep(&ts, NULL);
        pthread_mutex_lock(&cs->mu);
    }
    gc->open = NULL;
    pthread_mutex_unlock(&cs->mu);
    SlError err = {0};
    SLUICE_FAULT("stream_append_before_write");
    bool refused;
    int rc = append_write(st, g->wb, &refused, &err);
    pthread_mutex_lock(&cs->mu);
    gc->writes++;
    g->rc = rc;
    if (rc < 0 && refused) {
        const char *msg = err.message ? err.message : "write refused";
        const char *code = err.sqlstate[0] ? err.sqlstate : ERRCODE_DISK_FULL;
        Group *groups[2] = {gc->open, g};   /* g's offsets come first: last */
        for (int k = 0; k < 2; k++) {
            if (groups[k] == NULL)
                continue;
            for (int i = 0; i < groups[k]->nends; i++) {
                Counter *c = counter_find(cs, 'S', groups[k]->ends[i].oid);
                if (c != NULL)
                    c->next = groups[k]->ends[i].begin;
            }
        }
        if (gc->open != NULL) {
            group_fail(gc->open, msg, code);
            gc->open = NULL;
        }
        group_fail(g, msg, code);
    } else if (rc == 0) {
        for (int i = 0; i < g->nends; i++) {
            Counter *c = counter_find(cs, 'S', g->ends[i].oid);
            if (c != NULL && c->visible < g->ends[i].end) {
                c->visible = g->ends[i].end;
                publish(cs, c->oid, c->visible);
            }
        }
    } else {
        g->error = sl_strdup(err.message ? err.message : "write failed");
        snprintf(g->sqlstate, sizeof(g->sqlstate), "%s", ERRCODE_IO_ERROR);
        if (gc->broken == NULL)
            gc->broken = sl_strdup(g->error);
    }
    sl_error_clear(&err);
    g->done = true;
    gc->leader = false;
    pthread_cond_broadcast(&gc->cv);
}

static void group_release(Group *g)
{
    if (--g->members > 0)
        return;
    state_batch_free(g->wb);
    sl_free(g->ends);
    sl_free(g->error);
    sl_free(g);
}

/* Adds row r of b to the chunk that starts at byte start of buf (the
 * chunk's row count is the caller's to set). */
static void chunk_put_row_at(StrBuf *chunk, size_t start, const Batch *b, uint32_t r)
{
    if (chunk->len == start) {
        uint8_t n4[4] = {0};
        strbuf_append(chunk, n4, 4);
    }
    /* the length goes in front once the row is encoded in place */
    size_t at = chunk->len;
    strbuf_reserve(chunk, 4);
    chunk->len += 4;
    row_encode(b, r, chunk);
    put_le32((uint8_t *)chunk->data + at, (uint32_t)(chunk->len - at - 4));
}

static void chunk_put_row(StrBuf *chunk, const Batch *b, uint32_t r)
{
    chunk_put_row_at(chunk, 0, b, r);
}

void stream_chunk_add(StrBuf *chunk, const Batch *b)
{
    uint32_t had = stream_chunk_rows(chunk);
    for (uint32_t r = 0; r < b->nrows; r++)
        chunk_put_row(chunk, b, r);
    if (chunk->len == 0) {
        uint8_t n4[4] = {0};
        strbuf_append(chunk, n4, 4);
    }
    put_le32((uint8_t *)chunk->data, had + b->nrows);
}

/* Puts the chunks of one append (and their index entries) into wb from
 * offset c->next on, and advances c->next; called with the counters' mu held. */
static void stage_chunks(StreamAppend *app, Counter *c, const StrBuf *vals, StateBatch *wb,
                         int64_t now_us)
{
    app->first = c->next;
    for (int i = 0; i < app->nb; i++) {
        uint32_t rows = app->bs ? app->bs[i]->nrows : get_le32((const uint8_t *)vals[i].data);
        if (rows == 0)
            continue;
        uint8_t key[13], idx[20];
        make_prefix(key, 'S', app->rel->oid);
        put_be64(key + 5, (uint64_t)c->next);
        state_batch_put(wb, key, sizeof(key), vals[i].data, vals[i].len);
        key[0] = 'R';
        put_le64(idx, (uint64_t)now_us);
        put_le32(idx + 8, rows);
        put_le64(idx + 12, (uint64_t)vals[i].len);
        state_batch_put(wb, key, sizeof(key), idx, sizeof(idx));
        c->next += rows;
    }
}

static int64_t wall_us(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_REALTIME, &ts);
    return (int64_t)ts.tv_sec * 1000000 + ts.tv_nsec / 1000;
}

int stream_append_many(StateStore *st, StreamAppend *apps, int napps, StateBatch *with,
                       SlError *err)
{
    /* Encode outside the lock; only the offsets and the write are serial. */
    StrBuf **vals = sl_calloc((size_t)(napps > 0 ? napps : 1), sizeof(StrBuf *));
    int64_t rows = 0;
    for (int a = 0; a < napps; a++) {
        if (apps[a].bs == NULL) {
            /* encoded already (stream_chunk_add) */
            vals[a] = (StrBuf *)apps[a].chunks;
            for (int i = 0; i < apps[a].nb; i++)
                rows += apps[a].chunks[i].len ? get_le32((const uint8_t *)apps[a].chunks[i].data)
                                              : 0;
            continue;
        }
        vals[a] = sl_calloc((size_t)(apps[a].nb > 0 ? apps[a].nb : 1), sizeof(StrBuf));
        for (int i = 0; i < apps[a].nb; i++) {
            stream_chunk_add(&vals[a][i], apps[a].bs[i]);
            rows += apps[a].bs[i]->nrows;
        }
    }
    int64_t now = wall_us();

    int rc = -1;
    RelCounters *counters = state_counters(st);
    GroupCommit *gc = state_group_commit(st);
    pthread_mutex_lock(&counters->mu);
    Counter **cs = sl_calloc((size_t)(napps > 0 ? napps : 1), sizeof(Counter *));
    bool ok = gc->broken == NULL;
    if (!ok)
        sl_error(err, ERRCODE_IO_ERROR,
                 "an earlier write of the state store failed (%s): appends are refused "
                 "until the server restarts", gc->broken);
    /* A full disk refuses the append before it takes offsets, so that a
     * group write is not failed by it (which would break appends until a
     * restart, above) and the append can be tried again once space is
     * freed (docs/operations.md, "Disk full"). */
    if (ok && (rows > 0 || with != NULL) && state_check_room(st, err) < 0)
        ok = false;
    for (int a = 0; a < napps && ok; a++) {
        /* counter_get may grow the table: look the others up again below */
        ok = counter_get(st, 'S', apps[a].rel->oid, err) != NULL;
    }
    for (int a = 0; a < napps && ok; a++)
        cs[a] = counter_find(counters, 'S', apps[a].rel->oid);
    if (!ok) {
        /* nothing staged */
    } else if (rows == 0 && with == NULL) {
        for (int a = 0; a < napps; a++)
            apps[a].first = cs[a]->next;
        rc = 0;
    } else if (gc->mode == STREAM_COMMIT_SYNC) {
        StateBatch *wb = with ? with : state_batch_new();
        int64_t saved[napps > 0 ? napps : 1];
        for (int a = 0; a < napps; a++) {
            saved[a] = cs[a]->next;
            stage_chunks(&apps[a], cs[a], vals[a], wb, now);
        }
        SLUICE_FAULT("stream_append_before_write");
        gc->appends++;
        gc->writes++;
        bool refused;
        if (append_write(st, wb, &refused, err) == 0) {
            for (int a = 0; a < napps; a++) {
                cs[a]->visible = cs[a]->next;
                publish(counters, cs[a]->oid, cs[a]->visible);
            }
            rc = 0;
        } else {
            for (int a = 0; a < napps; a++)
                cs[a]->next = saved[a];
        }
        if (wb != with)
            state_batch_free(wb);
    } else {
        if (gc->open == NULL) {
            gc->open = sl_calloc(1, sizeof(Group));
            gc->open->wb = state_batch_new();
        }
        Group *g = gc->open;
        g->members++;
        gc->appends++;
        for (int a = 0; a < napps; a++) {
            int64_t begin = cs[a]->next;
            stage_chunks(&apps[a], cs[a], vals[a], g->wb, now);
            group_note_end(g, apps[a].rel->oid, begin, cs[a]->next);
        }
        if (with != NULL)
            state_batch_append(g->wb, with);
        for (;;) {
            if (g->done)
                break;
            if (!gc->leader && g == gc->open) {
                gc->leader = true;
                group_lead(st, g);
                break;
            }
            pthread_cond_wait(&gc->cv, &counters->mu);
        }
        rc = g->rc;
        if (rc < 0 && strcmp(g->sqlstate, ERRCODE_IO_ERROR) != 0)
            sl_error(err, g->sqlstate, "%s", g->error);     /* refused: nothing written */
        else if (rc < 0)
            sl_error(err, ERRCODE_IO_ERROR, "state store: write: %s", g->error);
        group_release(g);
    }
    pthread_mutex_unlock(&counters->mu);
    sl_free(cs);
    for (int a = 0; a < napps; a++) {
        if (apps[a].bs == NULL)
            continue;
        for (int i = 0; i < apps[a].nb; i++)
            strbuf_free(&vals[a][i]);
        sl_free(vals[a]);
    }
    sl_free(vals);
    return rc;
}

int stream_append_batches(StateStore *st, const CatRelation *rel, const Batch *const *bs,
                          int nb, StateBatch *with, int64_t *first, SlError *err)
{
    StreamAppend app = {rel, bs, nb, NULL, 0};
    int rc = stream_append_many(st, &app, 1, with, err);
    if (rc == 0)
        *first = app.first;
    return rc;
}

int stream_append(StateStore *st, const CatRelation *rel, const Batch *b, int64_t *first,
                  SlError *err)
{
    return stream_append_batches(st, rel, &b, 1, NULL, first, err);
}

int64_t stream_start_offset(StateStore *st, const CatRelation *rel, SlError *err)
{
    uint8_t prefix[5];
    make_prefix(prefix, 'R', rel->oid);
    StateScan *s = state_scan_open(st, prefix, sizeof(prefix));
    const void *key, *val;
    size_t klen, vlen;
    int64_t start = -2;
    if (state_scan_next(s, &key, &klen, &val, &vlen) && klen == 13)
        start = (int64_t)get_be64((const uint8_t *)key + 5);
    if (state_scan_close(s, err) < 0)
        return -1;
    return start == -2 ? stream_end_offset(st, rel, err) : start;
}

int stream_retain(StateStore *st, const CatRelation *rel, int64_t keep_after_us,
                  int64_t max_bytes, StreamRetained *out, SlError *err)
{
    uint8_t prefix[5];
    make_prefix(prefix, 'R', rel->oid);
    typedef struct Entry {
        int64_t first, time_us, bytes;
        uint32_t rows;
    } Entry;
    Entry *es = NULL;
    int n = 0, cap = 0;
    int64_t total = 0;
    StateScan *s = state_scan_open(st, prefix, sizeof(prefix));
    const void *key, *val;
    size_t klen, vlen;
    while (state_scan_next(s, &key, &klen, &val, &vlen)) {
        if (klen != 13 || vlen != 20)
            continue;
        if (n == cap) {
            cap = cap ? cap * 2 : 64;
            es = sl_realloc(es, sizeof(Entry) * (size_t)cap);
        }
        const uint8_t *v = val;
        es[n] = (Entry){(int64_t)get_be64((const uint8_t *)key + 5), (int64_t)get_le64(v),
                        (int64_t)get_le64(v + 12), get_le32(v + 8)};
        total += es[n].bytes;
        n++;
    }
    int rc = state_scan_close(s, err);
    memset(out, 0, sizeof(*out));
    out->bytes_kept = total;
    /* The newest chunk always stays: the end offset is found from it. */
    StateBatch *wb = state_batch_new();
    for (int i = 0; rc == 0 && i < n - 1; i++) {
        bool old = keep_after_us > 0 && es[i].time_us < keep_after_us;
        bool over = max_bytes > 0 && total > max_bytes;
        if (!old && !over)
            break;
        uint8_t k[13];
        make_prefix(k, 'S', rel->oid);
        put_be64(k + 5, (uint64_t)es[i].first);
        state_batch_delete(wb, k, sizeof(k));
        k[0] = 'R';
        state_batch_delete(wb, k, sizeof(k));
        total -= es[i].bytes;
        out->chunks++;
        out->rows += es[i].rows;
        out->bytes += es[i].bytes;
    }
    out->bytes_kept = total;
    if (rc == 0 && out->chunks > 0)
        rc = state_batch_commit(st, wb, false, err);
    state_batch_free(wb);
    sl_free(es);
    return rc;
}

RelScan *stream_scan_open(StateStore *st, const CatRelation *rel, int64_t from, int64_t to,
                          bool endable)
{
    RelScan *s = sl_calloc(1, sizeof(RelScan));
    uint8_t prefix[5], start[13];
    make_prefix(prefix, 'S', rel->oid);
    make_prefix(start, 'S', rel->oid);
    put_be64(start + 5, (uint64_t)from);
    s->scan = endable ? state_scan_open_endable_at(st, prefix, sizeof(prefix), start,
                                                   sizeof(start))
                      : state_scan_open_at(st, prefix, sizeof(prefix), start, sizeof(start));
    s->endable = endable;
    s->rel = rel;
    s->is_stream = true;
    s->from = from;
    s->to = to;
    arena_init(&s->chunk_arena, 4096);
    resfile_read_init(&s->rf);
    return s;
}

/* Takes the chunk under key as the one being read; keylen is what a
 * chunk's key must be (a stream's 13 bytes, a result log's 17).  false
 * with *bad set when the chunk is corrupt. */
static bool load_chunk(RelScan *s, size_t keylen, const void *key, size_t klen,
                       const void *val, size_t vlen, SlError *err, bool *bad)
{
    if (klen != keylen || vlen < 4) {
        *bad = true;
        corrupt(err, s->rel);
        return false;
    }
    /* The scan's entry (state.h: RocksDB's bytes or the scan's copies),
     * valid until its next call, which comes only once this chunk is read:
     * no copy of ours. */
    s->chunk = val;
    s->chunk_len = vlen;
    s->chunk_pos = 4;
    s->chunk_left = get_le32(s->chunk);
    s->chunk_key = (SlStr){(const char *)key, (uint32_t)klen};
    s->offset = keylen == 13 ? (int64_t)get_be64((const uint8_t *)key + 5) : 0;
    return true;
}

/* Loads the next chunk, whose key is keylen bytes long; false at the end
 * of the log, and with *bad set when the chunk is corrupt. */
static bool next_chunk(RelScan *s, size_t keylen, SlError *err, bool *bad)
{
    const void *key, *val;
    size_t klen, vlen;
    if (!state_scan_next(s->scan, &key, &klen, &val, &vlen)) {
        *bad = state_scan_status(s->scan, err) < 0;
        return false;
    }
    return load_chunk(s, keylen, key, klen, val, vlen, err, bad);
}

/* Loads a result log's next chunk: the next of the result-file region
 * being read, or the next key's -- a chunk (17-byte key) or a reference
 * to a region (13 bytes).  false at the end, with *bad set on an error. */
static bool log_next_chunk(RelScan *s, SlError *err, bool *bad)
{
    for (;;) {
        if (s->in_file) {
            arena_reset(&s->chunk_arena);
            const uint8_t *c;
            size_t n;
            int rc = resfile_read_chunk(&s->rf, &s->chunk_arena, &c, &n, err);
            if (rc < 0) {
                *bad = true;
                return false;
            }
            if (rc == 0) {
                s->in_file = false;
                continue;
            }
            if (n < 4) {
                *bad = true;
                corrupt(err, s->rel);
                return false;
            }
            s->chunk = c;
            s->chunk_len = n;
            s->chunk_pos = 4;
            s->chunk_left = get_le32(c);
            s->chunk_key = (SlStr){arena_memdup(&s->chunk_arena, s->ref_key, 13), 13};
            s->offset = 0;
            return true;
        }
        const void *key, *val;
        size_t klen, vlen;
        if (!state_scan_next(s->scan, &key, &klen, &val, &vlen)) {
            *bad = state_scan_status(s->scan, err) < 0;
            return false;
        }
        if (klen != 13)
            return load_chunk(s, 17, key, klen, val, vlen, err, bad);
        memcpy(s->ref_key, key, 13);
        if (resfile_read_begin(&s->rf, s->st, s->rel->oid,
                               (int64_t)get_be64((const uint8_t *)key + 5), val, vlen,
                               err) < 0) {
            *bad = true;
            return false;
        }
        s->in_file = true;
    }
}

/* The next row of the chunk being read (chunk_left > 0): its encoding and
 * length, in the chunk. */
static int chunk_row(RelScan *s, const uint8_t **row, uint32_t *len, SlError *err)
{
    if (s->chunk_len - s->chunk_pos < 4)
        return corrupt(err, s->rel);
    *len = get_le32(s->chunk + s->chunk_pos);
    s->chunk_pos += 4;
    if (s->chunk_len - s->chunk_pos < *len)
        return corrupt(err, s->rel);
    *row = s->chunk + s->chunk_pos;
    s->chunk_pos += *len;
    s->chunk_left--;
    s->offset++;
    return 0;
}

int stream_scan_next(RelScan *s, Arena *a, Batch **out, SlError *err)
{
    if (s->done)
        return 0;
    Batch *b = batch_alloc(a, rel_types(a, s->rel), (uint32_t)s->rel->ncols,
                           RELSTORE_BATCH_ROWS);
    while (b->nrows < RELSTORE_BATCH_ROWS) {
        if (s->chunk_left == 0) {
            bool bad = false;
            if (!next_chunk(s, 13, err, &bad)) {
                if (bad)
                    return -1;
                s->done = true;
                break;
            }
            continue;
        }
        if (s->offset >= s->to) {
            s->done = true;
            break;
        }
        bool take = s->offset >= s->from;
        const uint8_t *row;
        uint32_t len;
        if (chunk_row(s, &row, &len, err) < 0)
            return -1;
        if (take) {
            if (row_decode(row, len, b, b->nrows, a) < 0)
                return corrupt(err, s->rel);
            b->nrows++;
        }
    }
    for (uint32_t c = 0; c < b->ncols; c++)
        b->cols[c].len = b->nrows;
    *out = b;
    return (int)b->nrows;
}

int rel_purge(StateStore *st, const CatRelation *rel, SlError *err)
{
    StateBatch *wb = state_batch_new();
    int rc = 0;
    uint64_t n = 0;
    /* Rows ('T'), stream chunks ('S') and their index ('R'), a continuous
     * query's operator state ('Q', a join's 'J', an operator graph's 'G'),
     * batch meta ('M') and result log ('A'), the file progress of a files
     * stream ('F'), the keys of a dead-letter stream's records ('D',
     * deadletter.h), and a continuous query's changelog ('C',
     * runtime/changelog.c). */
    static const char spaces[] = "TSQJMARFDGC";
    for (int i = 0; spaces[i] != '\0' && rc == 0; i++) {
        uint8_t prefix[5];
        make_prefix(prefix, spaces[i], rel->oid);
        StateScan *s = state_scan_open(st, prefix, sizeof(prefix));
        const void *key, *val;
        size_t klen, vlen;
        while (state_scan_next(s, &key, &klen, &val, &vlen)) {
            state_batch_delete(wb, key, klen);
            n++;
        }
        rc = state_scan_close(s, err);
    }
    if (rc == 0 && n > 0)
        rc = state_batch_commit(st, wb, true, err);
    state_batch_free(wb);
    stream_forget(st, rel);
    /* The result files go once no reference to them is left (a crash in
     * between leaves files that nothing reads; the next purge of the oid
     * removes them). */
    if (rc == 0)
        rc = resfile_remove_all(st, rel->oid, err);
    return rc;
}

uint64_t rel_disk_bytes(StateStore *st, const CatRelation *rel)
{
    /* every key space rel_purge empties, but a stream's chunks ('S') */
    static const char spaces[] = "TQJMARFDG";
    uint64_t total = 0;
    uint8_t prefix[5];
    for (int i = 0; spaces[i] != '\0'; i++) {
        make_prefix(prefix, spaces[i], rel->oid);
        total += state_prefix_disk_bytes(st, prefix, sizeof(prefix));
    }
    /* the chunks: the bytes their index entries record (the memtable's too) */
    make_prefix(prefix, 'R', rel->oid);
    StateScan *s = state_scan_open(st, prefix, sizeof(prefix));
    const void *key, *val;
    size_t klen, vlen;
    while (state_scan_next(s, &key, &klen, &val, &vlen))
        if (klen == 13 && vlen == 20)
            total += get_le64((const uint8_t *)val + 12);
    SlError ignored = {0};
    state_scan_close(s, &ignored);
    sl_error_clear(&ignored);
    return total;
}

uint32_t stream_chunk_rows(const StrBuf *chunk)
{
    return chunk->len >= 4 ? get_le32((const uint8_t *)chunk->data) : 0;
}

/* ---------------------------------------------------------------------- */
/* Result logs                                                             */

void result_log_begin(ResultLog *l, StateStore *st, const CatRelation *rel, int64_t batch_id)
{
    memset(l, 0, sizeof(*l));
    l->st = st;
    l->oid = rel->oid;
    l->batch_id = batch_id;
    l->chain = resfile_chain_start(batch_id);
    strbuf_init(&l->buf);
}

/* Writes the complete frames in buf to the result file, opening it (the
 * batch's region) first if need be. */
static void result_log_write(ResultLog *l)
{
    /* After an error the frames are dropped: result_log_end fails. */
    if (!sl_error_set(&l->err) &&
        (l->file != NULL || resfile_open(l->st, l->oid, l->batch_id, &l->file, &l->err) == 0))
        resfile_append(l->file, l->buf.data, l->at, &l->err);
    strbuf_reset(&l->buf);
    l->at = 0;
}

/* Cuts the chunk being filled: its row count and its frame header. */
static void result_log_cut(ResultLog *l)
{
    uint8_t *hdr = (uint8_t *)l->buf.data + l->at;
    put_le32(hdr + RESFILE_FRAME_HEADER, l->rows);
    uint32_t len = (uint32_t)(l->buf.len - l->at - RESFILE_FRAME_HEADER);
    resfile_frame_seal(hdr, len, &l->chain);
    l->nchunks++;
    l->total_rows += l->rows;
    l->rows = 0;
    l->at = l->buf.len;
    if (l->buf.len >= (l->file != NULL ? RESULT_FILE_WRITE_BYTES : RESULT_FILE_MIN_BYTES))
        result_log_write(l);
}

void result_log_add(ResultLog *l, StateBatch *wb, const Batch *b)
{
    (void)wb;
    /* Chunks are cut by their rows and bytes only, never by how the rows
     * came in, so a replay of the batch makes the same chunks, and the
     * same choice of inline keys or a result file. */
    for (uint32_t r = 0; r < b->nrows; r++) {
        if (l->rows == 0) {
            uint8_t h[RESFILE_FRAME_HEADER] = {0};
            strbuf_append(&l->buf, h, sizeof(h));
        }
        chunk_put_row_at(&l->buf, l->at + RESFILE_FRAME_HEADER, b, r);
        if (++l->rows == RESULT_CHUNK_ROWS ||
            l->buf.len - l->at - RESFILE_FRAME_HEADER >= RESULT_CHUNK_BYTES)
            result_log_cut(l);
    }
}

int result_log_end(ResultLog *l, StateBatch *wb, SlError *err)
{
    if (l->rows > 0)
        result_log_cut(l);
    if (l->file == NULL && !sl_error_set(&l->err)) {
        /* Small: each chunk its own key in the batch's write, as before
         * result files. */
        uint8_t key[17];
        make_prefix(key, 'A', l->oid);
        put_be64(key + 5, (uint64_t)l->batch_id);
        size_t pos = 0;
        for (uint32_t c = 0; c < l->nchunks; c++) {
            uint32_t len = get_le32((const uint8_t *)l->buf.data + pos);
            put_be32(key + 13, c);
            state_batch_put(wb, key, sizeof(key), l->buf.data + pos + RESFILE_FRAME_HEADER,
                            len);
            pos += RESFILE_FRAME_HEADER + len;
        }
        return 0;
    }
    if (l->at > 0)
        result_log_write(l);
    if (!sl_error_set(&l->err))
        resfile_finish(l->file, wb, l->nchunks, l->total_rows, l->chain, &l->err);
    if (sl_error_set(&l->err)) {
        sl_error_move(err, &l->err);
        return -1;
    }
    return 0;
}

void result_log_free(ResultLog *l)
{
    resfile_close(l->file);
    l->file = NULL;
    strbuf_free(&l->buf);
    sl_error_clear(&l->err);
}
