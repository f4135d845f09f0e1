/*
 * cq.c -- the scheduler of continuous queries (see cq.h, docs/engine.md).
 *
 *   cq_runtime_init, cq_runtime_close, cq_running, cq_runtime_free, cq_set_check,
 *   cq_set_fn_hooks
 *   cq_layouts, cq_shared   what the registry's plans share (incremental.h)
 *   cq_catalog, cq_store    the catalog and state store it was given
 *                           (incremental.h: cq_ddl.c reads them)
 *   cq_start, cq_pause, cq_resume, cq_stop, cq_stop_then, cq_foreach, cq_status_of,
 *   cq_dependent, cq_dependents, cq_dependent_not_owned, cq_progress, cq_source_lag, cq_state,
 *   cq_want_snapshot, cq_changelog_floor, cq_changelog_reader, cq_retracts
 *                           a reader of a query's result table
 *                           (changelog.c): launch passes the changelog's
 *                           flags (changelog_flags)
 *   cq_falling_behind, cq_duration_bounds (the batch-duration histogram's buckets)
 *   cq_subscribe, cq_subscribe_go, cq_unsubscribe
 *
 * Per query: a trigger timer on the loop; when it fires and no batch is in
 * flight, the next batch is planned (source range, watermark), its entry is
 * written to the offset log, and its body runs on the engine's pool
 * (pool.h: workers that serving statements never occupy)
 * (inc_batch_run: read, update state, emit, one RocksDB WriteBatch with the
 * state, the output and the batch id: the batch's commit).  Back on the
 * loop its changes go to the subscribers, then the commit-log entry is
 * written -- back to back (trigger '0', available_now), in one SQLite
 * transaction with the next batch's offset-log entry (commit_pending).
 * Recovery rewrites a missing commit entry from the state's batch id, so
 * nothing waits on it.  A batch that fails marks its query failed with the
 * error; other queries go on.  One that failed because its owner lost a
 * privilege (the check before each batch) runs on at RESUME once the
 * privilege is back (cq_resume checks again; still missing: 42501).  A batch that fails on a transient error
 * (SQLSTATE class 08, a connection exception: a Kafka broker away) is run
 * again -- the same batch id, ranges and watermark, as a replay -- after a
 * backoff of RETRY_MIN_MS doubling to RETRY_MAX_MS, for as long as it
 * takes; meanwhile the query's status is 'retrying' with the error.  A
 * batch that fails on an I/O error (58030: a RocksDB write, a result
 * file's write or fdatasync) is run again the same way, but at most
 * STORAGE_TRIES times in all: then the query fails with the last error.
 * A write to the offset or commit log refused for a full disk (53100) is
 * tried again the same way, for as long as it takes (log_refused): the
 * entry is kept (unlogged) and written before anything else goes to the
 * logs, and no batch is planned past it; a batch whose entry must be
 * durable before it runs (a sink outside the state) waits for it.
 * A batch has a memory budget (the query's batch_memory option, memacct.h:
 * the body's arenas and operators): past it the batch ends with 53200 and
 * the query fails, since its replay would read the same rows; past the
 * server's --max-memory it is run again later, as a transient error.
 *
 * A query whose output is all in that RocksDB write (no files or Kafka
 * sink) launches its batch before writing the offset-log entry, and the
 * write keeps a copy of the entry ('M' + oid + 'L'): the SQLite and the
 * RocksDB fsyncs happen at once.
 *
 * Recovery at start: L = the last offset-log batch, S = the batch id stored
 * with the state.  S = L: only the commit entry may be missing; write it.
 * S = L - 1: batch L is replayed from its logged ranges and watermark.
 * S = L + 1: the entry kept with the state is written back, then S = L.
 * Those writes, refused for a full disk (53100), wait as a running
 * query's do (log_refused): the query starts `retrying`.
 * When the result table's columns changed (CREATE OR REPLACE), a batch
 * runs at once even without new input, to rewrite the table from the
 * state; cq_layout.c learns (cq_layout_start, and from set_status whether
 * that batch can come) so that reads wait for it.
 *
 * Each input (a stream read by a scan) is a source with partitions (Kafka's;
 * one for internal and generated streams): the query keeps its position in
 * each, and a batch's offset-log entry names every known partition's range
 * of every input, so the last entry alone gives the positions back at a
 * restart.
 *
 * The registry (CqRuntime) keeps everything of the engine that lives as
 * long as the server: its queries, the next SUBSCRIBE id, and what every
 * plan of it shares (IncShared: the result layouts of cq_layout.c, the
 * locks of the dead-letter appends and of the files sinks' manifests).  It is
 * freed by cq_runtime_free, after the pools have stopped, since a
 * statement may scan a result table through its layouts until then.
 *
 * Subscribers (SUBSCRIBE): while a query has some, its batches record
 * their changes of the result (IncBatch.changes); after the RocksDB write,
 * on the loop, each subscriber is called with them.
 */
#include "sluice/cq.h"
#include "sluice/bytes.h"
#include "sluice/functions.h"
#include "sluice/log.h"
#include "sluice/memacct.h"
#include "sluice/options.h"
#include "sluice/relstore.h"
#include "sluice/rowcodec.h"

#include "incremental.h"

#include <errno.h>
#include <inttypes.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

typedef enum TriggerKind { TRIGGER_INTERVAL, TRIGGER_ONCE, TRIGGER_AVAILABLE_NOW } TriggerKind;

/* The backoff between tries of a batch that failed on a transient error. */
#define RETRY_MIN_MS 500
#define RETRY_MAX_MS 30000
/* Tries in all of a batch that fails on an I/O error (58030). */
#define STORAGE_TRIES 5

typedef struct Cq Cq;

struct CqSub {
    CqSub        *next;
    Cq           *q;
    cq_changes_fn fn;
    void         *arg;
    uint64_t      id;
    bool          started;          /* cq_subscribe_go was called */
    bool          snapshot;         /* the snapshot is still to be sent */
};

struct CqRuntime {
    uv_loop_t   *loop;
    Pool        *workers;       /* the engine's */
    Catalog     *cat;
    StateStore  *st;
    Cq          *queries;
    int          closing_timers; /* released queries whose timer is closing */
    int          replacing;      /* cq_stop_then's queries not yet called back */
    bool         closing;
    bool         closed;         /* closing, and no batch or timer is left */
    cq_close_cb  close_cb;       /* cq_runtime_close's, with its arg */
    void        *close_arg;
    cq_check_fn  check;          /* the owner's privileges, before each batch */
    void        *check_arg;      /* with its arg */
    IncShared    shared;         /* what its plans share: the result layouts,
                                  * the dead-letter and manifest locks */
    uint64_t     next_sub_id;    /* the next SUBSCRIBE's id (CqSub.id) */
    ExFnHooks    hooks;          /* the functions' answers, for each plan */
};

struct Cq {
    Cq                *next;
    CqRuntime         *rt;
    const CatRelation *rel;
    IncPlan           *plan;
    uv_timer_t         timer;
    PoolWork           work;
    IncBatch           batch;
    SlError            batch_err;
    int                batch_rc;
    _Atomic int        interrupt;       /* the batch's (ex_interrupt_enter): set at
                                         * shutdown, so that it ends its reads */
    TriggerKind        trigger;
    int64_t            interval_ms;
    int64_t            max_offsets;
    int64_t            retain;          /* min_batches_to_retain */
    size_t             batch_mem;       /* batch_memory, bytes */
    int                batch_oom;       /* which bound the last batch passed */
    int64_t            input_max[INC_MAX_INPUTS]; /* the stream's max_offsets_per_trigger */
    SourceOffsets      stop_at[INC_MAX_INPUTS];   /* available_now: the ends at start */
    bool               has_stop_at;
    int64_t            next_batch_id;
    SourceOffsets      pos[INC_MAX_INPUTS];       /* per input and partition: next offset */
    SourceOffsets      ranges[INC_MAX_INPUTS];    /* the batch in flight reads these */
    bool               has_watermark;
    int64_t            watermark_us;
    bool               in_flight;
    bool               paused;
    bool               failed;
    bool               denied;          /* failed: the owner lost a privilege */
    bool               finished;
    bool               stopping;        /* dropped or shutting down */
    bool               timer_closed;
    bool               force_batch;     /* run a batch even without new input */
    bool               want_snapshot;   /* a new reader of the result table waits for a
                                         * snapshot in its changelog (changelog.c) */
    void             (*released_cb)(void *arg);     /* cq_stop_then */
    void              *released_arg;
    char              *error;
    int64_t            last_batch_id;
    int64_t            input_rows;
    CqSub             *subs;            /* SUBSCRIBE clients */
    int64_t            started_us;
    int64_t            late_rows;
    /* /metrics' figures since this process started the query (status_of) */
    int64_t            output_rows, batches, retries_total;
    int64_t            duration_count[CQ_DURATION_BUCKETS + 1];
    double             duration_sum_s;
    /* progress: a ring of the last batches, and the batch in flight's times */
    CqProgress         progress[CQ_PROGRESS_KEEP];
    int                nprogress, progress_next;
    int64_t            plan_start_us, plan_us, batch_started_us;
    int64_t            backlog_rows;    /* at plan time: rows left for later batches */
    int64_t            wake_at_us;      /* idle_timeout: run a batch at this time */
    bool               has_oldest_window;   /* the oldest window in the state */
    int64_t            oldest_window_us;
    /* a batch that failed on a transient error, to be run again */
    CqOffsets          batch_o;         /* the batch in flight (sources not kept) */
    bool               retrying;
    int                retries;         /* failed tries of that batch so far */
    int64_t            retry_at_us;     /* monotonic: when to try again */
    /* the committed batch whose commit-log entry is not written yet (-1:
     * none); the next offset-log entry takes it along */
    int64_t            commit_pending;
    /* the batch in flight's offset-log entry, for its RocksDB write
     * (log_entry_encode), when the SQLite entry is written during the run */
    StrBuf             log_entry;
    /* a write to the offset or commit log refused for a full disk (53100):
     * the entry it did not write (log_entry_encode; empty when only the
     * commit entry waits), whether its batch was launched, the tries so
     * far and when to try again (monotonic); the query is `retrying` */
    StrBuf             unlogged;
    bool               unlogged_launched;
    /* recovery kept unlogged out (a full disk): the batch whose commit
     * entry follows it once it is written (-1: none) */
    int64_t            commit_after_unlogged;
    int                log_tries;
    int64_t            log_retry_at_us;
    bool               finish_pending;  /* finishes once the logs are written */
};

/* 1 ms to 60 s, about three a decade: a back-to-back batch of a few rows
 * and a batch far behind a one-minute trigger both land inside. */
const double cq_duration_bounds[CQ_DURATION_BUCKETS] = {
    0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 20, 30, 60,
};

static int64_t mono_us(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (int64_t)ts.tv_sec * 1000000 + ts.tv_nsec / 1000;
}

static int64_t wall_us(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_REALTIME, &ts);
    return (int64_t)ts.tv_sec * 1000000 + ts.tv_nsec / 1000;
}

CqRuntime *cq_runtime_init(uv_loop_t *loop, Pool *workers, Catalog *cat, StateStore *st)
{
    CqRuntime *rt = sl_calloc(1, sizeof(CqRuntime));
    rt->loop = loop;
    rt->workers = workers;
    rt->cat = cat;
    rt->st = st;
    rt->next_sub_id = 1;
    rt->shared.layouts = cq_layouts_new();
    pthread_mutex_init(&rt->shared.dead_mu, NULL);
    pthread_mutex_init(&rt->shared.manifest_mu, NULL);
    return rt;
}

void cq_set_check(CqRuntime *rt, cq_check_fn fn, void *arg)
{
    rt->check = fn;
    rt->check_arg = arg;
}

void cq_set_fn_hooks(CqRuntime *rt, const ExFnHooks *hooks)
{
    rt->hooks = *hooks;
}

static bool plan_reads(void *plan, uint32_t oid)
{
    return inc_plan_reads_as_owner(plan, oid);
}

/* The query of that name that is not being stopped. */
static Cq *find(CqRuntime *rt, const char *name)
{
    for (Cq *q = rt->queries; q != NULL; q = q->next)
        if (!q->stopping && strcmp(q->rel->name, name) == 0)
            return q;
    return NULL;
}

/* The running query of that name, or NULL with 42704 in err. */
static Cq *find_or_error(CqRuntime *rt, const char *name, SlError *err)
{
    Cq *q = find(rt, name);
    if (q == NULL)
        sl_error(err, ERRCODE_UNDEFINED_OBJECT, "continuous query \"%s\" does not exist",
                 name);
    return q;
}

/* Tells cq_layout.c whether the next batch, which rewrites the rows of a
 * replaced query's result table, will come. */
static void layout_status(const Cq *q)
{
    cq_layout_stalled(q->rt->shared.layouts, q->rel, q->failed ? "the query has failed"
                              : q->paused ? "the query is paused"
                              : q->finished ? "the query has finished" : NULL);
}

static void set_status(Cq *q, const char *status, const char *error)
{
    layout_status(q);
    SlError err = {0};
    if (cat_cq_status_set(q->rt->cat, q->rel->oid, status, error, &err) < 0)
        sl_log(LOG_ERROR, "cannot record query status", "query=%s error=\"%s\"",
               log_value(q->rel->name), log_quote(err.message));
    sl_error_clear(&err);
}

static void fail_query(Cq *q, const SlError *e)
{
    q->failed = true;
    sl_free(q->error);
    q->error = sl_strdup(e->message ? e->message : "unknown error");
    sl_log(LOG_ERROR, "continuous query failed", "query=%s sqlstate=%s error=\"%s\"",
           log_value(q->rel->name), e->sqlstate, log_quote(q->error));
    set_status(q, "failed", q->error);
    uv_timer_stop(&q->timer);
}

/* ---------------------------------------------------------------------- */
/* Teardown                                                                */

static void maybe_finish_close(CqRuntime *rt)
{
    if (rt->closing && rt->queries == NULL && rt->closing_timers == 0 && !rt->closed) {
        rt->closed = true;
        if (rt->close_cb != NULL)
            rt->close_cb(rt->close_arg);
    }
}

/* Tells the subscribers of q that it is gone, and frees them. */
static void end_subscribers(Cq *q)
{
    while (q->subs != NULL) {
        CqSub *s = q->subs;
        q->subs = s->next;
        s->fn(s->arg, -1, NULL, NULL);
        sl_free(s);
    }
}

static void on_timer_closed(uv_handle_t *h)
{
    Cq *q = h->data;
    CqRuntime *rt = q->rt;
    void (*cb)(void *) = q->released_cb;
    void *arg = q->released_arg;
    rt->closing_timers--;
    inc_plan_free(q->plan);
    cat_relation_unref(q->rel);
    for (int i = 0; i < INC_MAX_INPUTS; i++) {
        srcoffs_free(&q->pos[i]);
        srcoffs_free(&q->ranges[i]);
        srcoffs_free(&q->stop_at[i]);
    }
    sl_free(q->error);
    strbuf_free(&q->log_entry);
    strbuf_free(&q->unlogged);
    sl_free(q);
    if (cb != NULL) {
        cb(arg);
        rt->replacing--;
    }
    maybe_finish_close(rt);
}

static int write_pending_commit(Cq *q);

/* Removes q from the registry and frees it once no batch is in flight.  At
 * shutdown the last commit entry is written if it waits (a dropped query's
 * logs go with it; a replaced one's start writes it). */
static void release(Cq *q)
{
    if (q->in_flight || q->timer_closed)
        return;
    CqRuntime *rt = q->rt;
    if (rt->closing && !q->failed)
        write_pending_commit(q);
    /* No batch is in flight: a rewrite of the result table's rows that has
     * not committed will not come, and a statement waiting for it ends
     * (55000) instead of reading the former definition's rows. */
    if (rt->closing)
        cq_layout_stalled(rt->shared.layouts, q->rel, "the server is stopping");
    Cq **pp = &rt->queries;
    while (*pp != q)
        pp = &(*pp)->next;
    *pp = q->next;
    q->timer_closed = true;
    end_subscribers(q);
    rt->closing_timers++;
    uv_timer_stop(&q->timer);
    uv_close((uv_handle_t *)&q->timer, on_timer_closed);
}

/* ---------------------------------------------------------------------- */
/* A micro-batch                                                           */

static void schedule(Cq *q, uint64_t delay_ms);
static void schedule_retry(Cq *q);

/* available_now: has every input reached its end at start? */
static bool caught_up(const Cq *q)
{
    for (int i = 0; i < inc_plan_ninputs(q->plan); i++)
        if (!srcoffs_reached(&q->pos[i], &q->stop_at[i]))
            return false;
    return q->has_stop_at;
}

static void work_cb(PoolWork *w)
{
    Cq *q = w->data;
    SlMemAccount *mem = sl_mem_account_new(q->batch_mem);
    SlMemAccount *old = sl_mem_account_enter(mem);
    const _Atomic int *old_flag = ex_interrupt_enter(&q->interrupt);
    q->batch_rc = inc_batch_run(q->plan, &q->batch, &q->batch_err);
    ex_interrupt_enter(old_flag);
    sl_mem_account_enter(old);
    q->batch_oom = q->batch_rc < 0 ? sl_mem_exceeded(mem) : SL_MEM_OK;
    if (q->batch_oom == SL_MEM_OVER_STATEMENT) {
        sl_error_clear(&q->batch_err);
        /* sys.queries.last_error shows the message only: it names the code */
        sl_error(&q->batch_err, ERRCODE_OUT_OF_MEMORY, "out of memory (53200): the "
                 "micro-batch needed more than the query's batch_memory (%zu kB)",
                 q->batch_mem / 1024);
        sl_error_hint(&q->batch_err, "Make batches read less (max_offsets_per_trigger), or "
                                     "raise batch_memory (CREATE OR REPLACE CONTINUOUS QUERY "
                                     "... WITH (batch_memory = ...)).");
    }
    sl_mem_account_unref(mem);
}

/* The newest batch of the ring into /metrics' histogram, once its
 * duration is final: with its commit-log entry when that is written on
 * its own, else (back to back) without it, as sys.query_progress shows it.
 * (An entry a full disk delays past this point is not in the histogram.) */
static void observe_duration(Cq *q)
{
    const CqProgress *p =
        &q->progress[(q->progress_next + CQ_PROGRESS_KEEP - 1) % CQ_PROGRESS_KEEP];
    double secs = (double)p->total_us / 1e6;
    int k = 0;     /* the first bucket whose bound holds it */
    while (k < CQ_DURATION_BUCKETS && secs > cq_duration_bounds[k])
        k++;
    q->duration_count[k]++;
    q->duration_sum_s += secs;
}

/* Keeps the committed batch's figures in the ring (commit_us: set by
 * write_pending_commit when the commit entry is written on its own). */
static void record_progress(Cq *q)
{
    const IncBatch *b = &q->batch;
    CqProgress *p = &q->progress[q->progress_next];
    *p = (CqProgress){
        .batch_id = b->batch_id,
        .started_us = q->batch_started_us,
        .input_rows = b->input_rows,
        .output_rows = b->output_rows,
        .late_rows = b->late_rows,
        .state_rows = b->state_rows,
        .state_bytes = b->state_bytes,
        .evicted_rows = b->evicted_rows,
        .has_watermark = b->next_has_watermark,
        .watermark_us = b->next_watermark_us,
        .plan_us = q->plan_us,
        .read_us = b->read_us,
        .execute_us = b->execute_us,
        .write_us = b->write_us,
        .commit_us = 0,
        .total_us = mono_us() - q->plan_start_us,
        .sink_us = b->sink_us,
        .has_event_time = b->max_event_us != INT64_MIN,
        .min_event_us = b->max_event_us != INT64_MIN ? b->min_event_us : 0,
        .max_event_us = b->max_event_us != INT64_MIN ? b->max_event_us : 0,
        .backlog_rows = q->backlog_rows,
    };
    q->progress_next = (q->progress_next + 1) % CQ_PROGRESS_KEEP;
    if (q->nprogress < CQ_PROGRESS_KEEP)
        q->nprogress++;
    q->batches++;
    q->output_rows += b->output_rows;
}

/* Calls each subscriber with the batch's changes. */
static void deliver_changes(Cq *q)
{
    const CatRelation *rel = q->rel;
    const StrBuf *ch = &q->batch.changes;
    if (q->subs == NULL || ch->len == 0)
        return;
    Arena a;
    arena_init(&a, 1 << 16);
    /* An 'O' record (an updated row's old value) is the changelog's
     * (changelog.c), not the subscribers'. */
    uint32_t n = 0;
    for (size_t at = 0; at + 5 <= ch->len; at += 5 + get_be32((uint8_t *)ch->data + at + 1))
        n += ch->data[at] != 'O';
    SlType *types = ARENA_ARRAY(&a, SlType, rel->ncols ? rel->ncols : 1);
    for (int c = 0; c < rel->ncols; c++)
        types[c] = rel->cols[c].type;
    Batch *b = batch_alloc(&a, types, (uint32_t)rel->ncols, n ? n : 1);
    char *kinds = arena_alloc(&a, n ? n : 1);
    uint32_t i = 0;
    for (size_t at = 0; i < n;) {
        const uint8_t *p = (const uint8_t *)ch->data + at;
        uint32_t len = get_be32(p + 1);
        at += 5 + len;
        if (p[0] == 'O')
            continue;
        kinds[i] = (char)p[0];
        if (row_decode(p + 5, len, b, i, &a) < 0)
            break;
        i++;
    }
    b->nrows = i;
    for (int c = 0; c < rel->ncols; c++)
        b->cols[c].len = i;
    for (CqSub *s = q->subs, *next; s != NULL; s = next) {
        next = s->next;     /* the callback may unsubscribe s */
        if (s->started && !s->snapshot)
            s->fn(s->arg, q->batch.batch_id, kinds, b);
    }
    arena_destroy(&a);
}

static CqSub *sub_by_id(Cq *q, uint64_t id)
{
    for (CqSub *s = q->subs; s != NULL; s = s->next)
        if (s->id == id)
            return s;
    return NULL;
}

/* SUBSCRIBE WITH (snapshot): the result table's rows as inserts of the
 * last committed batch, a scan batch at a time (the callback may end the
 * subscription).  Runs on the loop with no batch in flight and no rewrite
 * of the rows due (force_batch), so the table is exactly the state the
 * next batch's changes apply to, in this definition's columns. */
static void send_snapshot(Cq *q, uint64_t id)
{
    CqSub *s = sub_by_id(q, id);
    s->snapshot = false;
    RelScan *scan = tbl_scan_open(q->rt->st, q->rel, false);
    Arena a;
    arena_init(&a, 1 << 16);
    SlError err = {0};
    Batch *b;
    int n;
    while ((s = sub_by_id(q, id)) != NULL) {
        arena_reset(&a);
        if ((n = tbl_scan_next(scan, &a, &b, NULL, &err)) <= 0)
            break;
        char *kinds = arena_alloc(&a, (size_t)n);
        memset(kinds, 'I', (size_t)n);
        s->fn(s->arg, q->last_batch_id, kinds, b);
    }
    rel_scan_close(scan, sl_error_set(&err) ? NULL : &err);
    if (sl_error_set(&err))
        sl_log(LOG_ERROR, "cannot read the result table for SUBSCRIBE",
               "query=%s error=\"%s\"", log_value(q->rel->name), log_quote(err.message));
    sl_error_clear(&err);
    arena_destroy(&a);
}

/* The snapshots that waited for the batch in flight. */
static void send_pending_snapshots(Cq *q)
{
    uint64_t ids[64];
    int n = 0;
    for (CqSub *s = q->subs; s != NULL && n < 64; s = s->next)
        if (s->started && s->snapshot)
            ids[n++] = s->id;
    for (int i = 0; i < n; i++)
        if (sub_by_id(q, ids[i]) != NULL)
            send_snapshot(q, ids[i]);
}

/* Whether the batch in flight, failed with e, is to be run again: on a
 * connection exception (class 08) or a full disk (53100: the query shows
 * `retrying` with the error until space is freed, then goes on) always;
 * on an I/O error (58030: a write of the state store, a result file or a
 * files sink; nothing of the batch was committed, and a disk that
 * hiccuped may take the next write) until it has failed STORAGE_TRIES
 * times. */
static bool retryable(const Cq *q, const SlError *e)
{
    if ((e->sqlstate[0] == '0' && e->sqlstate[1] == '8') ||
        strcmp(e->sqlstate, ERRCODE_DISK_FULL) == 0 || q->batch_oom == SL_MEM_OVER_SERVER)
        return true;
    return strcmp(e->sqlstate, ERRCODE_IO_ERROR) == 0 && q->retries + 1 < STORAGE_TRIES;
}

/* The batch in flight failed for good after tries: the query fails with
 * e, its message saying how many times the batch ran. */
static void fail_after_tries(Cq *q, const SlError *e)
{
    if (q->retries == 0) {
        fail_query(q, e);
        return;
    }
    SlError all = {0};
    sl_error(&all, e->sqlstate, "%s (batch %" PRId64 " failed %d times)",
             e->message ? e->message : "unknown error", q->batch_o.batch_id, q->retries + 1);
    q->retrying = false;
    q->retries = 0;
    fail_query(q, &all);
    sl_error_clear(&all);
}

/* The batch in flight failed on a transient error: run it again later. */
static void retry_later(Cq *q, const SlError *e)
{
    int shift = q->retries < 10 ? q->retries : 10;
    int64_t delay = SL_MIN((int64_t)RETRY_MIN_MS << shift, (int64_t)RETRY_MAX_MS);
    q->retries++;
    q->retries_total++;
    q->retrying = true;
    q->retry_at_us = mono_us() + delay * 1000;
    sl_free(q->error);
    q->error = sl_strdup(e->message ? e->message : "unknown error");
    sl_log(LOG_WARN, "micro-batch failed on a transient error, retrying",
           "query=%s batch=%" PRId64 " attempt=%d retry_in_ms=%" PRId64
           " sqlstate=%s error=\"%s\"", log_value(q->rel->name), q->batch_o.batch_id,
           q->retries, delay, e->sqlstate, log_quote(q->error));
    StrBuf msg;
    strbuf_init(&msg);
    strbuf_printf(&msg, "%s (batch %" PRId64 ", try %d failed; next try in %.1f s)", q->error,
                  q->batch_o.batch_id, q->retries, (double)delay / 1000);
    set_status(q, "retrying", msg.data);
    strbuf_free(&msg);
    schedule(q, (uint64_t)delay);
}

static void after_work_cb(PoolWork *w)
{
    Cq *q = w->data;
    q->in_flight = false;
    if (q->stopping) {
        sl_error_clear(&q->batch_err);
        strbuf_free(&q->batch.changes);
        release(q);
        return;
    }
    if (q->batch_rc < 0) {
        strbuf_free(&q->batch.changes);
        if (!sl_error_set(&q->batch_err))
            sl_error(&q->batch_err, ERRCODE_INTERNAL_ERROR, "micro-batch failed without an error");
        if (retryable(q, &q->batch_err))
            retry_later(q, &q->batch_err);
        else
            fail_after_tries(q, &q->batch_err);
        sl_error_clear(&q->batch_err);
        return;
    }
    if (q->retrying) {
        sl_log(LOG_INFO, "micro-batch succeeded after retries", "query=%s batch=%" PRId64
               " tries=%d", log_value(q->rel->name), q->batch.batch_id, q->retries + 1);
        q->retrying = false;
        q->retries = 0;
        if (q->log_tries == 0) {
            sl_free(q->error);
            q->error = NULL;
            set_status(q, "running", NULL);
        }
    }
    /* The batch's RocksDB write is its commit (the batch id in the M key):
     * its changes go to the subscribers now, written out at once, before
     * the commit-log entry, which recovery rewrites from the M key when a
     * crash lost it (docs/architecture.md, "Recovery"). */
    record_progress(q);
    deliver_changes(q);
    SLUICE_FAULT("batch_after_deliver");
    strbuf_free(&q->batch.changes);
    /* The snapshots hold this batch's rows: they are of this batch. */
    q->last_batch_id = q->batch.batch_id;
    if (q->batch.cl_snapshot && q->batch.cl_on)
        q->want_snapshot = false;   /* the readers waiting find it now */
    send_pending_snapshots(q);
    q->force_batch = false;
    q->input_rows += q->batch.input_rows;
    q->late_rows += q->batch.late_rows;
    q->has_oldest_window = q->batch.has_oldest_window;
    q->oldest_window_us = q->batch.oldest_window_us;
    q->next_batch_id = q->batch.batch_id + 1;
    for (int i = 0; i < inc_plan_ninputs(q->plan); i++) {
        srcoffs_copy(&q->pos[i], &q->ranges[i]);
        source_committed(inc_plan_source(q->plan, i), &q->pos[i]);
    }
    q->has_watermark = q->batch.next_has_watermark;
    q->watermark_us = q->batch.next_watermark_us;
    q->wake_at_us = q->batch.wake_at_us;
    bool finish = q->trigger == TRIGGER_ONCE ||
                  (q->trigger == TRIGGER_AVAILABLE_NOW && caught_up(q));
    /* Back to back, the next plan follows at once: its offset-log entry
     * takes this commit entry along, one fsync for both (plan_batch). */
    q->commit_pending = q->batch.batch_id;
    if (finish || !(q->trigger == TRIGGER_AVAILABLE_NOW || q->interval_ms == 0))
        write_pending_commit(q);
    observe_duration(q);
    if (q->failed)
        return;
    SlError err = {0};
    /* Keep a bounded log: recovery needs only the last entry of each log;
     * the newest `retain` batches are kept for inspection.  Purged every
     * retain/10 batches, so the log holds at most 1.1 x retain entries. */
    int64_t every = q->retain >= 10 ? q->retain / 10 : 1;
    if (q->batch.batch_id >= q->retain && q->batch.batch_id % every == 0 &&
        cat_cq_purge(q->rt->cat, q->rel->oid, q->batch.batch_id - q->retain + 1, &err) < 0) {
        sl_log(LOG_WARN, "cannot purge the offset log", "query=%s error=\"%s\"",
               log_value(q->rel->name), log_quote(err.message));
        sl_error_clear(&err);
    }
    CqProgress last;
    const CqProgress *pr = &last;
    if (cq_progress(q->rt, q->rel->name, &last, 1, &err) != 1)
        memset(&last, 0, sizeof(last));
    sl_error_clear(&err);
    sl_log(LOG_DEBUG, "batch committed",
           "query=%s batch=%" PRId64 " input_rows=%" PRId64 " output_rows=%" PRId64
           " late_rows=%" PRId64 " state_rows=%" PRId64 " plan_us=%" PRId64 " read_us=%" PRId64
           " execute_us=%" PRId64 " write_us=%" PRId64 " commit_us=%" PRId64
           " total_us=%" PRId64, log_value(q->rel->name), q->batch.batch_id, q->batch.input_rows,
           q->batch.output_rows, q->batch.late_rows, q->batch.state_rows, pr->plan_us,
           pr->read_us, pr->execute_us, pr->write_us, pr->commit_us, pr->total_us);
    if (finish) {
        if (q->commit_pending >= 0 || q->unlogged.len > 0) {
            q->finish_pending = true;   /* plan_batch finishes it */
            return;
        }
        q->finished = true;
        set_status(q, "finished", NULL);
        return;
    }
    /* More is waiting: go on without waiting for the next tick. */
    if (q->trigger == TRIGGER_AVAILABLE_NOW || q->interval_ms == 0)
        schedule(q, 0);
}

/* An offset-log entry as the batch's RocksDB write keeps it: batch id (8),
 * has watermark (1), watermark (8), batch time (8), then the sources JSON. */
#define LOG_ENTRY_HEAD 25

static void log_entry_encode(const CqOffsets *o, StrBuf *out)
{
    uint8_t head[LOG_ENTRY_HEAD];
    put_be64(head, (uint64_t)o->batch_id);
    head[8] = o->has_watermark;
    put_be64(head + 9, (uint64_t)o->watermark_us);
    put_be64(head + 17, (uint64_t)o->batch_ts_us);
    strbuf_reset(out);
    strbuf_append(out, head, sizeof(head));
    strbuf_append(out, o->sources, strlen(o->sources));
}

/* The entry back (sources in arena a); -1 with err if it is malformed. */
static int log_entry_decode(const Cq *q, const uint8_t *v, size_t len, Arena *a, CqOffsets *o,
                            SlError *err)
{
    if (len < LOG_ENTRY_HEAD)
        return sl_error(err, ERRCODE_DATA_CORRUPTED,
                        "query \"%s\": the offset entry kept with the state is corrupt",
                        q->rel->name);
    o->batch_id = (int64_t)get_be64(v);
    o->has_watermark = v[8] != 0;
    o->watermark_us = (int64_t)get_be64(v + 9);
    o->batch_ts_us = (int64_t)get_be64(v + 17);
    char *src = arena_alloc(a, len - LOG_ENTRY_HEAD + 1);
    memcpy(src, v + LOG_ENTRY_HEAD, len - LOG_ENTRY_HEAD);
    src[len - LOG_ENTRY_HEAD] = '\0';
    o->sources = src;
    return 0;
}

/* Runs (or replays) batch o over q->ranges (per input) with the given
 * watermark. */
static bool reads_changelog(Cq *d, uint32_t oid);

/* The changelog of q's result table (changelog.c), for the batch about to
 * run: a snapshot when a new reader waits for one; the changelog dropped
 * when no running query reads the result table; the batches every reader
 * has passed (the least position over the readers' inputs that read q;
 * none while a reader has not planned its first batch).  A replay at
 * start (recovering) neither drops nor collects: the readers may not be
 * registered yet. */
static void changelog_flags(Cq *q, bool recovering)
{
    IncBatch *b = &q->batch;
    b->cl_snapshot = q->want_snapshot;
    if (recovering)
        return;
    bool readers = false;
    int64_t least = INT64_MAX;
    /* (a reader stopping counts: one being replaced starts again at its
     * position; one dropped leaves the registry once released) */
    for (Cq *d = q->rt->queries; d != NULL; d = d->next) {
        if (d == q)
            continue;
        for (int i = 0; i < inc_plan_ninputs(d->plan); i++) {
            if (inc_plan_stream(d->plan, i)->oid != q->rel->oid)
                continue;
            readers = true;
            /* a reader keeps from its position on (before its first
             * batch, from the snapshot it planned; none: everything) */
            const SrcPart *p = srcoffs_find(&d->pos[i], -1, 0);
            least = p == NULL || least < 0 ? -1 : SL_MIN(least, p->end);
        }
    }
    /* A query being replaced (a reader, perhaps) is out of the registry
     * until its new definition starts: nothing is dropped meanwhile. */
    b->cl_off = !readers && !q->want_snapshot && q->rt->replacing == 0;
    b->cl_gc_below = readers && least > 0 && least != INT64_MAX ? least : 0;
}

static void launch_as(Cq *q, const CqOffsets *o, bool recovering);

static void launch(Cq *q, const CqOffsets *o)
{
    launch_as(q, o, false);
}

static void launch_as(Cq *q, const CqOffsets *o, bool recovering)
{
    memset(&q->batch, 0, sizeof(q->batch));
    changelog_flags(q, recovering);
    q->batch.batch_id = o->batch_id;
    q->batch.ranges = q->ranges;
    q->batch.want_changes = q->subs != NULL;
    strbuf_init(&q->batch.changes);
    q->batch.has_watermark = o->has_watermark;
    q->batch.watermark_us = o->watermark_us;
    q->batch.now_us = o->batch_ts_us;
    q->batch.log_entry = q->log_entry.data;
    q->batch.log_len = q->log_entry.len;
    q->batch_started_us = o->batch_ts_us;
    q->batch_o = *o;
    q->batch_o.sources = NULL;
    q->in_flight = true;
    q->work.data = q;
    pool_submit(q->rt->workers, &q->work, work_cb, after_work_cb);
}

/* ---------------------------------------------------------------------- */
/* The offset and commit logs on a full disk                               */

/* Whether a write to the logs may be tried now: always, except during the
 * backoff after a write that a full disk refused (then the timer is set
 * for its end). */
static bool log_may_write(Cq *q)
{
    if (q->log_tries == 0)
        return true;
    int64_t now = mono_us();
    if (now >= q->log_retry_at_us)
        return true;
    schedule(q, (uint64_t)((q->log_retry_at_us - now) / 1000 + 1));
    return false;
}

/* A write to the logs was refused for a full disk (e, 53100): the query is
 * `retrying` with the error and tries again after a backoff (RETRY_MIN_MS
 * doubling to RETRY_MAX_MS), for as long as it takes, as a batch does. */
static void log_refused(Cq *q, const SlError *e, const char *what, int64_t batch_id)
{
    int shift = q->log_tries < 10 ? q->log_tries : 10;
    int64_t delay = SL_MIN((int64_t)RETRY_MIN_MS << shift, (int64_t)RETRY_MAX_MS);
    q->log_tries++;
    q->retries_total++;
    q->log_retry_at_us = mono_us() + delay * 1000;
    const char *m = e->message ? e->message : "unknown error";
    sl_log(LOG_WARN, "log write refused for a full disk, retrying",
           "query=%s log=\"%s\" batch=%" PRId64 " attempt=%d retry_in_ms=%" PRId64
           " error=\"%s\"", log_value(q->rel->name), what, batch_id, q->log_tries, delay,
           log_quote(m));
    /* sys.queries shows what waits: the log and the batch. */
    StrBuf msg;
    strbuf_init(&msg);
    strbuf_printf(&msg, "%s (%s entry of batch %" PRId64 ", try %d failed; next try in %.1f s)",
                  m, what, batch_id, q->log_tries, (double)delay / 1000);
    sl_free(q->error);
    q->error = strbuf_steal(&msg, NULL);
    set_status(q, "retrying", q->error);
    schedule(q, (uint64_t)delay);
}

/* A write to the logs went through: a query that waited for one runs. */
static void log_written(Cq *q)
{
    if (q->log_tries == 0)
        return;
    sl_log(LOG_INFO, "log write succeeded after retries", "query=%s tries=%d",
           log_value(q->rel->name), q->log_tries + 1);
    q->log_tries = 0;
    if (!q->retrying) {
        sl_free(q->error);
        q->error = NULL;
        set_status(q, "running", NULL);
    }
}

/* Writes batch o's offset-log entry, the pending commit entry along (one
 * transaction).  0 when written.  -1 when not: on a full disk (53100) the
 * entry is kept (q->unlogged; launched says whether its batch runs already)
 * for a later try, nothing of the transaction was written, and the query is
 * `retrying`; any other error fails the query. */
static int log_offsets(Cq *q, const CqOffsets *o, bool launched)
{
    SlError err = {0};
    if (cat_offsets_append_after(q->rt->cat, q->rel->oid, q->commit_pending, o, &err) == 0) {
        q->commit_pending = -1;
        strbuf_reset(&q->unlogged);
        log_written(q);
        return 0;
    }
    if (strcmp(err.sqlstate, ERRCODE_DISK_FULL) == 0) {
        log_entry_encode(o, &q->unlogged);
        q->unlogged_launched = launched;
        log_refused(q, &err, "offset log", o->batch_id);
    } else {
        fail_query(q, &err);
    }
    sl_error_clear(&err);
    return -1;
}

/* Writes the offset-log entry that a full disk kept out (q->unlogged), the
 * pending commit entry along; a batch that waited for its entry (a sink
 * outside the state commits before the state: the entry comes first) then
 * runs, as logged: q->ranges still hold its ranges.  0 when written. */
static int write_unlogged(Cq *q)
{
    Arena a;
    arena_init(&a, 256);
    CqOffsets o;
    SlError err = {0};
    bool launched = q->unlogged_launched;
    int rc = log_entry_decode(q, (const uint8_t *)q->unlogged.data, q->unlogged.len, &a, &o,
                              &err);
    if (rc < 0)
        fail_query(q, &err);
    else
        rc = log_offsets(q, &o, launched);
    if (rc == 0 && q->commit_after_unlogged >= 0) {
        /* recovery's entry, written back from the state: its own commit
         * entry goes next (write_pending_commit, or the next offset entry) */
        q->commit_pending = q->commit_after_unlogged;
        q->commit_after_unlogged = -1;
    }
    if (rc == 0 && !launched) {
        sl_log(LOG_INFO, "offset log entry written, running its batch",
               "query=%s batch=%" PRId64, log_value(q->rel->name), o.batch_id);
        q->plan_us = mono_us() - q->plan_start_us;
        launch(q, &o);
    }
    sl_error_clear(&err);
    arena_destroy(&a);
    return rc;
}

/* Writes what waits for the logs: the offset-log entry of a batch that ran
 * (kept out by a full disk), with the commit entry of the last committed
 * batch, or that commit entry alone.  0 when nothing waits any more; -1
 * when something still does (a full disk: tried again later, the query
 * `retrying`) or the query failed.  The commit entry's time is the batch's
 * commit phase, and part of its total. */
static int write_pending_commit(Cq *q)
{
    bool entry = q->unlogged.len > 0 && q->unlogged_launched;
    if (q->commit_pending < 0 && !entry)
        return 0;
    if (!log_may_write(q))
        return -1;
    if (entry) {
        if (write_unlogged(q) < 0)
            return -1;
        if (q->commit_pending < 0)
            return 0;
        /* the commit entry recovery owed after the entry it wrote back */
    }
    int64_t id = q->commit_pending, tc = mono_us();
    SlError err = {0};
    if (cat_commit_append(q->rt->cat, q->rel->oid, id, &err) < 0) {
        /* A missing commit entry blocks nothing (recovery writes it from
         * the state's batch id); the next offset-log entry takes it along. */
        if (strcmp(err.sqlstate, ERRCODE_DISK_FULL) == 0)
            log_refused(q, &err, "commit log", id);
        else
            fail_query(q, &err);
        sl_error_clear(&err);
        return -1;
    }
    q->commit_pending = -1;
    log_written(q);
    CqProgress *p = &q->progress[(q->progress_next + CQ_PROGRESS_KEEP - 1) % CQ_PROGRESS_KEEP];
    if (q->nprogress > 0 && p->batch_id == id) {
        p->commit_us = mono_us() - tc;
        p->total_us += p->commit_us;
    }
    return 0;
}

/* Plans and launches the next batch, if there is one to run now.  Its
 * offset-log entry carries the pending commit entry. */
static void plan_next(Cq *q)
{
    if (q->in_flight || q->paused || q->failed || q->finished || q->stopping)
        return;
    SlError denied = {0};
    if (q->rt->check != NULL &&
        q->rt->check(q->rt->check_arg, q->rel, inc_plan_into(q->plan), inc_plan_late(q->plan),
                     plan_reads, q->plan, &denied) < 0) {
        q->denied = true;
        fail_query(q, &denied);
        sl_error_clear(&denied);
        return;
    }
    q->plan_start_us = mono_us();
    if (q->unlogged.len > 0) {
        /* An offset-log entry that a full disk kept out goes first; a
         * batch that waited for it runs now. */
        if (!log_may_write(q) || write_unlogged(q) < 0 || q->in_flight)
            return;
    }
    if (q->retrying) {
        /* The failed batch again, as logged: never a new plan in its place. */
        if (q->plan_start_us < q->retry_at_us) {
            schedule(q, (uint64_t)((q->retry_at_us - q->plan_start_us) / 1000 + 1));
            return;
        }
        sl_log(LOG_INFO, "retrying batch", "query=%s batch=%" PRId64 " attempt=%d",
               log_value(q->rel->name), q->batch_o.batch_id, q->retries + 1);
        q->plan_us = 0;
        CqOffsets o = q->batch_o;
        launch(q, &o);
        return;
    }
    SlError err = {0};
    int n = inc_plan_ninputs(q->plan);
    bool more = false;
    int64_t now = wall_us(), backlog = 0;
    if (q->trigger == TRIGGER_AVAILABLE_NOW && !q->has_stop_at) {
        /* The ends at the start are the end of the run. */
        for (int i = 0; i < n; i++) {
            int64_t rc = source_plan(inc_plan_source(q->plan, i), &q->pos[i], NULL, 0, now,
                                     &q->stop_at[i], NULL, &err);
            if (rc == SOURCE_NOT_READY) {
                schedule_retry(q);
                return;
            }
            if (rc < 0) {
                fail_query(q, &err);
                sl_error_clear(&err);
                return;
            }
        }
        q->has_stop_at = true;
    }
    for (int i = 0; i < n; i++) {
        int64_t left = 0;
        int64_t cap = q->max_offsets > 0 ? q->max_offsets : q->input_max[i];
        int64_t rows = source_plan(inc_plan_source(q->plan, i), &q->pos[i],
                                   q->has_stop_at ? &q->stop_at[i] : NULL, cap, now,
                                   &q->ranges[i], &left, &err);
        if (rows == SOURCE_NOT_READY) {
            schedule_retry(q);
            return;
        }
        if (rows < 0) {
            fail_query(q, &err);
            sl_error_clear(&err);
            return;
        }
        /* Positions of partitions seen for the first time stay as resolved
         * (starting_offsets = 'latest' means the end when the query started). */
        int added = 0;
        for (int k = 0; k < q->ranges[i].n; k++) {
            const SrcPart *r = &q->ranges[i].parts[k];
            if (srcoffs_find(&q->pos[i], r->topic, r->part) == NULL) {
                srcoffs_add(&q->pos[i], r->topic, r->part, r->start, r->start);
                added++;
            }
        }
        if (added > 0)
            sl_log(LOG_INFO, "source partitions added",
                   "query=%s input=%d partitions=%d total=%d", log_value(q->rel->name), i,
                   added, q->pos[i].n);
        if (rows > 0)
            more = true;
        backlog += left;    /* summed over the inputs */
    }
    /* No new rows, but an idle partition would move the watermark: run an
     * empty batch, so windows close (idle_timeout). */
    bool wake = q->trigger == TRIGGER_INTERVAL && inc_plan_idle_wakes(q->plan) &&
                wall_us() >= q->wake_at_us;
    if (!more && !wake && !q->force_batch && !q->want_snapshot) {
        if (q->trigger != TRIGGER_INTERVAL) {
            q->finished = true;
            set_status(q, "finished", NULL);
        } else if (q->interval_ms == 0) {
            schedule(q, 5);     /* back to back: poll while idle */
        }
        return;
    }
    StrBuf sources;
    strbuf_init(&sources);
    strbuf_putc(&sources, '[');
    for (int i = 0; i < n; i++)
        srcoffs_to_json(inc_plan_source(q->plan, i), inc_plan_stream(q->plan, i)->oid,
                        n > 1 ? i : -1, &q->ranges[i], &sources);
    strbuf_putc(&sources, ']');
    CqOffsets o = {q->next_batch_id, sources.data, q->has_watermark, q->watermark_us,
                   wall_us()};
    q->backlog_rows = backlog;
    strbuf_reset(&q->log_entry);
    if (inc_plan_sink_outside(q->plan)) {
        /* A files or Kafka sink commits before the state: the entry must
         * be durable before the batch runs, so a replay writes the same. */
        if (log_offsets(q, &o, false) < 0) {
            strbuf_free(&sources);
            return;
        }
        q->plan_us = mono_us() - q->plan_start_us;
        launch(q, &o);
    } else {
        /* All the output is in the batch's RocksDB write, which also
         * keeps this entry: the batch runs while the loop writes the
         * entry to SQLite, the two fsyncs at once.  A crash that lands the
         * state first leaves the entry in RocksDB; recovery writes it back
         * (recover). */
        log_entry_encode(&o, &q->log_entry);
        q->plan_us = mono_us() - q->plan_start_us;
        launch(q, &o);
        if (q->in_flight)
            log_offsets(q, &o, true);
    }
    strbuf_free(&sources);
}

/* The next batch; when none is planned, the pending commit entry goes
 * alone (so it waits at most one poll of a back-to-back query). */
static void plan_batch(Cq *q)
{
    if (q->finish_pending) {
        /* The last batch ran; its logs wait for space. */
        if (write_pending_commit(q) == 0 && !q->failed) {
            q->finish_pending = false;
            q->finished = true;
            set_status(q, "finished", NULL);
        }
        return;
    }
    plan_next(q);
    if (!q->failed)
        write_pending_commit(q);
}

static void on_timer(uv_timer_t *t)
{
    plan_batch(t->data);
}

/* A source does not know its partitions yet: plan again shortly. */
static void schedule_retry(Cq *q)
{
    if (q->trigger != TRIGGER_INTERVAL || q->interval_ms == 0)
        uv_timer_start(&q->timer, on_timer, 50, 0);
}

static void schedule(Cq *q, uint64_t delay_ms)
{
    if (q->trigger == TRIGGER_INTERVAL && q->interval_ms > 0)
        return;     /* the repeating timer drives it */
    uv_timer_start(&q->timer, on_timer, delay_ms, 0);
}

/* ---------------------------------------------------------------------- */
/* Start and recovery                                                      */

/* batch_memory: bytes, or with kB, MB, GB, TB (PostgreSQL's memory
 * units); at least 1MB, default 1GB (statement_mem's default). */
static int batch_memory(const Options *o, size_t *out, SlError *err)
{
    static const struct { const char *u; size_t mult; } units[] = {
        {"", 1}, {"kB", (size_t)1 << 10}, {"MB", (size_t)1 << 20}, {"GB", (size_t)1 << 30},
        {"TB", (size_t)1 << 40},
    };
    const char *v = opts_get(o, "batch_memory");
    *out = (size_t)1 << 30;
    if (v == NULL)
        return 0;
    char *end;
    errno = 0;
    long long n = strtoll(v, &end, 10);
    while (*end == ' ')
        end++;
    size_t k = 0;
    while (k < SL_ARRAY_LEN(units) && strcmp(end, units[k].u) != 0)
        k++;
    if (end == v || errno != 0 || k == SL_ARRAY_LEN(units) || n < 1 ||
        (unsigned long long)n > ((size_t)1 << 50) / units[k].mult ||
        (size_t)n * units[k].mult < ((size_t)1 << 20)) {
        sl_error(err, ERRCODE_INVALID_PARAMETER_VALUE, "invalid batch_memory \"%s\"", v);
        sl_error_hint(err, "Use a size of at least 1MB, such as '64MB' or '1GB' (units kB, MB, "
                           "GB, TB).");
        return -1;
    }
    *out = (size_t)n * units[k].mult;
    return 0;
}

/* Reads the trigger and limits from the query's options. */
static int read_options(Cq *q, SlError *err)
{
    Arena a;
    arena_init(&a, 1024);
    Options o;
    int rc = -1;
    if (opts_parse(&a, q->rel->options, &o, err) < 0)
        goto out;
    const char *trigger = opts_get(&o, "trigger");
    q->trigger = TRIGGER_INTERVAL;
    q->interval_ms = 1000;
    if (trigger != NULL) {
        int64_t us;
        if (strcmp(trigger, "once") == 0) {
            q->trigger = TRIGGER_ONCE;
        } else if (strcmp(trigger, "available_now") == 0) {
            q->trigger = TRIGGER_AVAILABLE_NOW;
        } else if (opts_parse_interval_us(trigger, &us) == 0) {
            q->interval_ms = us / 1000;
        } else {
            sl_error(err, ERRCODE_INVALID_PARAMETER_VALUE,
                     "invalid trigger \"%s\"", trigger);
            sl_error_hint(err, "Use an interval such as '1 second', '0', 'once' or 'available_now'.");
            goto out;
        }
    }
    if (opts_get_int(&o, "max_offsets_per_trigger", 0, &q->max_offsets, err) < 0)
        goto out;
    if (q->max_offsets < 0) {
        sl_error(err, ERRCODE_INVALID_PARAMETER_VALUE,
                 "max_offsets_per_trigger must not be negative");
        goto out;
    }
    if (opts_get_int(&o, "min_batches_to_retain", 100, &q->retain, err) < 0)
        goto out;
    if (batch_memory(&o, &q->batch_mem, err) < 0)
        goto out;
    if (q->retain < 1) {
        sl_error(err, ERRCODE_INVALID_PARAMETER_VALUE,
                 "min_batches_to_retain must be at least 1");
        sl_error_hint(err, "Recovery needs the last batch of the offset and commit logs.");
        goto out;
    }
    rc = 0;
out:
    arena_destroy(&a);
    return rc;
}

/* The ranges of each input out of a logged sources entry. */
static int logged_ranges(Cq *q, const char *sources, SlError *err)
{
    int n = inc_plan_ninputs(q->plan);
    for (int i = 0; i < n; i++)
        if (srcoffs_from_json(inc_plan_source(q->plan, i), sources, n > 1 ? i : -1,
                              &q->ranges[i], err) < 0)
            return -1;
    return 0;
}

/* Each stream's own max_offsets_per_trigger, for when the query sets none. */
static int inputs_max_offsets(Cq *q, SlError *err)
{
    Arena a;
    arena_init(&a, 1024);
    int rc = 0;
    for (int i = 0; i < inc_plan_ninputs(q->plan) && rc == 0; i++) {
        Options o;
        rc = opts_parse(&a, inc_plan_stream(q->plan, i)->options, &o, err);
        if (rc == 0)
            rc = opts_get_int(&o, "max_offsets_per_trigger", 0, &q->input_max[i], err);
    }
    arena_destroy(&a);
    return rc;
}

/* A log write of recovery's refused for a full disk: what it did not
 * write, told to log_refused once the query's status is set. */
typedef struct Refused {
    SlError     err;        /* 53100; unset: nothing refused */
    const char *what;       /* "offset log" or "commit log" */
    int64_t     batch_id;
} Refused;

/* Keeps err in *r when it is a full disk's (53100): the write is retried
 * as a running query's is.  Returns 0 then, else -1 (err stays). */
static int refused_for_space(Refused *r, SlError *err, const char *what, int64_t batch_id)
{
    if (strcmp(err->sqlstate, ERRCODE_DISK_FULL) != 0)
        return -1;
    sl_error_move(&r->err, err);
    r->what = what;
    r->batch_id = batch_id;
    return 0;
}

static int recover(Cq *q, bool *replay, CqOffsets *last, Arena *a, Refused *refused,
                   SlError *err)
{
    *replay = false;
    int64_t state_batch;
    bool has_wm;
    int64_t wm;
    uint64_t rows_hash;
    if (inc_state_meta(q->plan, &state_batch, &has_wm, &wm, &q->force_batch, &rows_hash,
                       err) < 0)
        return -1;
    /* Rows still to be rewritten for this definition are not read with
     * it until they are (cq_layout.c). */
    cq_layout_start(q->rt->shared.layouts, q->rel, inc_plan_result_hash(q->plan), q->force_batch,
                    rows_hash);
    int found = cat_offsets_last(q->rt->cat, q->rel->oid, a, last, err);
    if (found < 0)
        return -1;
    q->next_batch_id = 0;
    for (int i = 0; i < INC_MAX_INPUTS; i++)
        q->pos[i].n = 0;
    q->has_watermark = has_wm;
    q->watermark_us = wm;
    if (state_batch >= 0 && (found == 0 || state_batch == last->batch_id + 1)) {
        /* The state committed batch S before the loop wrote its offset
         * entry (written while the batch ran): the entry kept with the
         * state goes back to the offset log, with S's commit entry and
         * that of the batch before. */
        void *v;
        size_t vlen;
        CqOffsets e;
        int has = inc_state_log_entry(q->plan, a, &v, &vlen, err);
        if (has < 0 || (has == 1 && log_entry_decode(q, v, vlen, a, &e, err) < 0))
            return -1;
        if (has == 1 && e.batch_id == state_batch) {
            sl_log(LOG_INFO, "offset log entry written back from the state",
                   "query=%s batch=%" PRId64, log_value(q->rel->name), state_batch);
            int64_t before = found ? last->batch_id : -1;
            if (cat_offsets_append_after(q->rt->cat, q->rel->oid, before, &e, err) < 0) {
                if (refused_for_space(refused, err, "offset log", e.batch_id) < 0)
                    return -1;
                /* Written later, as an entry a running batch's write kept
                 * (write_unlogged), then S's commit entry. */
                log_entry_encode(&e, &q->unlogged);
                q->unlogged_launched = true;
                q->commit_pending = before;
                q->commit_after_unlogged = e.batch_id;
            }
            *last = e;
            found = 1;
        }
    }
    if (found == 0)
        return state_batch < 0 ? 0
               : sl_error(err, ERRCODE_DATA_CORRUPTED,
                          "query \"%s\" has state for batch %" PRId64 " but no offset log",
                          q->rel->name, state_batch);
    if (logged_ranges(q, last->sources, err) < 0)
        return -1;
    if (state_batch == last->batch_id) {
        /* Output and state are in; the commit entry may be missing.  On
         * a full disk it waits, as a running batch's does. */
        if (q->unlogged.len == 0 &&
            cat_commit_append(q->rt->cat, q->rel->oid, last->batch_id, err) < 0) {
            if (refused_for_space(refused, err, "commit log", last->batch_id) < 0)
                return -1;
            q->commit_pending = last->batch_id;
        }
        q->next_batch_id = last->batch_id + 1;
        for (int i = 0; i < inc_plan_ninputs(q->plan); i++)
            srcoffs_copy(&q->pos[i], &q->ranges[i]);
        q->last_batch_id = last->batch_id;
        return 0;
    }
    if (state_batch == last->batch_id - 1) {
        /* Batch L was planned but its output never committed: replay it. */
        *replay = true;
        q->next_batch_id = last->batch_id;
        for (int i = 0; i < inc_plan_ninputs(q->plan); i++)
            for (int k = 0; k < q->ranges[i].n; k++)
                srcoffs_add(&q->pos[i], q->ranges[i].parts[k].topic, q->ranges[i].parts[k].part,
                            q->ranges[i].parts[k].start, q->ranges[i].parts[k].start);
        q->last_batch_id = state_batch;
        return 0;
    }
    return sl_error(err, ERRCODE_DATA_CORRUPTED,
                    "query \"%s\": state is at batch %" PRId64 " but the offset log at %" PRId64,
                    q->rel->name, state_batch, last->batch_id);
}

int cq_start(CqRuntime *rt, const CatRelation *query, SlError *err)
{
    if (rt->closing)
        return sl_error(err, ERRCODE_OBJECT_NOT_IN_PREREQUISITE_STATE,
                        "the server is shutting down");
    if (find(rt, query->name) != NULL)
        return sl_error(err, ERRCODE_DUPLICATE_OBJECT,
                        "continuous query \"%s\" is already running", query->name);
    Cq *q = sl_calloc(1, sizeof(Cq));
    q->rt = rt;
    q->rel = query;
    q->last_batch_id = -1;
    q->commit_pending = -1;
    q->commit_after_unlogged = -1;
    q->started_us = wall_us();
    if (read_options(q, err) < 0 ||
        inc_plan_build(query, rt->cat, rt->st, &rt->shared, &q->plan, err) < 0) {
        inc_plan_free(q->plan);
        sl_free(q);
        return -1;
    }
    if (inputs_max_offsets(q, err) < 0) {
        inc_plan_free(q->plan);
        sl_free(q);
        return -1;
    }
    /* its batches ask about, and name, the query's owner */
    ExFnHooks hooks = rt->hooks;
    hooks.role = query->owner;
    inc_plan_set_fn_hooks(q->plan, &hooks);
    cat_relation_ref(query);
    q->wake_at_us = inc_plan_idle_wakes(q->plan) ? 0 : INT64_MAX;
    uv_timer_init(rt->loop, &q->timer);
    q->timer.data = q;
    q->next = rt->queries;
    rt->queries = q;

    Arena a;
    arena_init(&a, 1024);
    CqOffsets last;
    bool replay;
    const char *status = NULL, *error = NULL;
    Refused refused = {0};
    int rc = recover(q, &replay, &last, &a, &refused, err);
    if (rc == 0 && cat_cq_status_get(rt->cat, query->oid, &a, &status, &error, err) < 0)
        rc = -1;
    if (rc < 0) {
        fail_query(q, err);
        sl_error_clear(err);
        sl_error_clear(&refused.err);
        arena_destroy(&a);
        return 0;       /* the query exists, failed; sys.queries says why */
    }
    if (status != NULL && strcmp(status, "paused") == 0)
        q->paused = true;
    if (status != NULL && strcmp(status, "finished") == 0)
        q->finished = true;
    if (status == NULL || strcmp(status, "retrying") == 0)
        set_status(q, "running", NULL);
    /* A paused query writes what waits when it is resumed (plan_next). */
    if (sl_error_set(&refused.err) && !q->paused)
        log_refused(q, &refused.err, refused.what, refused.batch_id);
    sl_error_clear(&refused.err);
    SlError oerr = {0};
    q->has_oldest_window = inc_state_oldest_window(q->plan, q->has_watermark, q->watermark_us,
                                                   &q->oldest_window_us, &oerr) == 1;
    sl_error_clear(&oerr);
    if (replay && !q->paused) {
        sl_log(LOG_INFO, "replaying batch", "query=%s batch=%" PRId64, log_value(query->name),
               last.batch_id);
        q->plan_start_us = mono_us();
        q->plan_us = 0;
        launch_as(q, &last, true);
    }
    layout_status(q);
    /* Rows to rewrite (CREATE OR REPLACE): the first batch comes at once,
     * not a trigger interval later. */
    if (q->trigger == TRIGGER_INTERVAL && q->interval_ms > 0)
        uv_timer_start(&q->timer, on_timer, q->force_batch ? 0 : (uint64_t)q->interval_ms,
                       (uint64_t)q->interval_ms);
    else if (!q->in_flight)
        schedule(q, 0);
    arena_destroy(&a);
    return 0;
}

int cq_pause(CqRuntime *rt, const char *name, SlError *err)
{
    Cq *q = find_or_error(rt, name, err);
    if (q == NULL)
        return -1;
    q->paused = true;
    set_status(q, "paused", NULL);
    return 0;
}

int cq_resume(CqRuntime *rt, const char *name, SlError *err)
{
    Cq *q = find_or_error(rt, name, err);
    if (q == NULL)
        return -1;
    if (q->failed && q->denied && q->rt->check != NULL) {
        /* failed only for a privilege its owner lost: asked again, it runs
         * on if the privilege is back */
        if (q->rt->check(q->rt->check_arg, q->rel, inc_plan_into(q->plan),
                         inc_plan_late(q->plan), plan_reads, q->plan, err) < 0)
            return -1;
        q->failed = q->denied = false;
        sl_free(q->error);
        q->error = NULL;
        if (q->trigger == TRIGGER_INTERVAL && q->interval_ms > 0)
            uv_timer_start(&q->timer, on_timer, (uint64_t)q->interval_ms,
                           (uint64_t)q->interval_ms);
    }
    if (q->failed)
        return sl_error(err, ERRCODE_OBJECT_NOT_IN_PREREQUISITE_STATE,
                        "continuous query \"%s\" has failed: %s", name, q->error);
    q->paused = false;
    layout_status(q);
    if (!q->retrying && q->log_tries == 0)
        set_status(q, q->finished ? "finished" : "running", NULL);
    if (!q->in_flight)
        schedule(q, 0);
    if (q->trigger == TRIGGER_INTERVAL && q->interval_ms > 0)
        plan_batch(q);
    return 0;
}

int cq_stop(CqRuntime *rt, const char *name, SlError *err)
{
    Cq *q = find_or_error(rt, name, err);
    if (q == NULL)
        return -1;
    q->stopping = true;
    release(q);
    return 0;
}

void cq_stop_then(CqRuntime *rt, const char *name, void (*cb)(void *arg), void *arg)
{
    Cq *q = find(rt, name);
    if (q == NULL) {
        cb(arg);
        return;
    }
    q->released_cb = cb;
    q->released_arg = arg;
    q->stopping = true;
    rt->replacing++;
    release(q);
}

void cq_runtime_close(CqRuntime *rt, cq_close_cb cb, void *arg)
{
    if (rt->closing) {      /* closing already: cb at once */
        if (cb != NULL)
            cb(arg);
        return;
    }
    rt->closing = true;
    rt->close_cb = cb;
    rt->close_arg = arg;
    Cq *q = rt->queries;
    while (q != NULL) {
        Cq *next = q->next;
        q->stopping = true;
        /* A batch in flight is not waited for past its next interrupt check
         * (a Kafka read waiting on a broker that is away checks every
         * 100 ms): it ends uncommitted, as at a crash, and is run again
         * from its offset-log entry at the next start. */
        atomic_store(&q->interrupt, EX_CANCEL_SHUTDOWN);
        release(q);
        q = next;
    }
    maybe_finish_close(rt);
}

bool cq_running(const CqRuntime *rt)
{
    return !rt->closing;
}

void cq_runtime_free(CqRuntime *rt)
{
    if (rt == NULL)
        return;
    if (rt->queries != NULL || rt->closing_timers > 0)
        sl_panic("cq_runtime_free: the registry has not finished closing");
    cq_layouts_free(rt->shared.layouts);
    pthread_mutex_destroy(&rt->shared.dead_mu);
    pthread_mutex_destroy(&rt->shared.manifest_mu);
    sl_free(rt);
}

CqLayouts *cq_layouts(CqRuntime *rt)
{
    return rt != NULL ? rt->shared.layouts : NULL;
}

IncShared *cq_shared(CqRuntime *rt)
{
    return &rt->shared;
}

Catalog *cq_catalog(const CqRuntime *rt)
{
    return rt != NULL ? rt->cat : NULL;
}

StateStore *cq_store(const CqRuntime *rt)
{
    return rt != NULL ? rt->st : NULL;
}

bool cq_falling_behind(const CqProgress *p, int n, int64_t interval_us)
{
    if (n < CQ_BEHIND_BATCHES)
        return false;
    /* The batches but the slowest took longer than their triggers'
     * intervals: one stalled batch, however long, is an outlier, not a
     * trend (the backlog rule below sees what it left behind). */
    int64_t total_us = 0, slowest_us = 0;
    for (int i = 0; i < n; i++) {
        total_us += p[i].total_us;
        if (p[i].total_us > slowest_us)
            slowest_us = p[i].total_us;
    }
    if (interval_us > 0 && total_us - slowest_us > interval_us * (n - 1))
        return true;
    /* The backlog never drained, and its least-squares line over the batches
     * rises by more than a tenth of its mean: one batch that shrinks it
     * between two that grow it more does not hide the trend. */
    double sum = 0, sxy = 0, mid = (n - 1) / 2.0;
    for (int i = 0; i < n; i++) {
        if (p[i].backlog_rows <= 0)
            return false;
        sum += (double)p[i].backlog_rows;
        sxy += (i - mid) * (double)p[i].backlog_rows;
    }
    double sxx = (double)n * ((double)n * n - 1) / 12.0;
    double rise = sxy / sxx * (n - 1);
    return rise > sum / n / 10.0 && rise >= 1.0;
}

/* cq_falling_behind over the query's last CQ_BEHIND_BATCHES batches. */
static bool falling_behind(const Cq *q)
{
    if (q->nprogress < CQ_BEHIND_BATCHES || q->paused || q->failed || q->finished)
        return false;
    CqProgress last[CQ_BEHIND_BATCHES];
    for (int i = 0; i < CQ_BEHIND_BATCHES; i++)
        last[i] = q->progress[(q->progress_next + CQ_PROGRESS_KEEP - CQ_BEHIND_BATCHES + i) %
                              CQ_PROGRESS_KEEP];
    int64_t interval_us = q->trigger == TRIGGER_INTERVAL ? q->interval_ms * 1000 : 0;
    return cq_falling_behind(last, CQ_BEHIND_BATCHES, interval_us);
}

/* A query's status, as cq_foreach and cq_status_of give it. */
static void status_of(Cq *q, CqStatus *s)
{
    *s = (CqStatus){
        .name = q->rel->name,
        .status = q->failed ? "failed" : q->paused ? "paused"
                  : q->finished ? "finished"
                  : q->retrying || q->log_tries > 0 ? "retrying" : "running",
        .error = q->error,
        .sql = q->rel->sql,
        .last_batch_id = q->last_batch_id,
        .input_rows = q->input_rows,
        .has_watermark = q->has_watermark,
        .watermark_us = q->watermark_us,
        .started_us = q->started_us,
        .state_rows = -1,
        .state_bytes = -1,
        .late_rows = q->late_rows,
        .trigger_ms = q->trigger == TRIGGER_INTERVAL ? q->interval_ms : -1,
        .falling_behind = falling_behind(q),
        .output_rows = q->output_rows,
        .batches = q->batches,
        .retries = q->retries_total,
        .backlog_rows = q->backlog_rows,
        .duration_sum_s = q->duration_sum_s,
    };
    memcpy(s->duration_count, q->duration_count, sizeof(s->duration_count));
    SinkStats ss;
    if (inc_plan_sink_stats(q->plan, &s->sink, &ss)) {
        s->sink_commits = ss.commits;
        s->sink_failures = ss.failures;
        s->sink_retries = ss.retries;
    }
    SlError err = {0};
    if (inc_state_rows(q->plan, &s->state_rows, &s->state_bytes, &err) < 0)
        s->state_rows = s->state_bytes = -1;
    sl_error_clear(&err);
}

void cq_foreach(CqRuntime *rt, void (*fn)(const CqStatus *s, void *arg), void *arg)
{
    for (Cq *q = rt->queries; q != NULL; q = q->next) {
        CqStatus s;
        status_of(q, &s);
        fn(&s, arg);
    }
}

bool cq_status_of(CqRuntime *rt, const char *name, CqStatus *out)
{
    Cq *q = find(rt, name);
    if (q != NULL)
        status_of(q, out);
    return q != NULL;
}

int cq_explain(CqRuntime *rt, const char *name, Arena *a, List **lines, SlError *err)
{
    Cq *q = find_or_error(rt, name, err);
    if (q == NULL)
        return -1;
    CqStatus s;
    cq_status_of(rt, name, &s);
    *lines = list_append(a, *lines,
                         arena_printf(a, "Continuous Query %s: %s, trigger %s", name, s.status,
                                      q->trigger == TRIGGER_ONCE          ? "once"
                                      : q->trigger == TRIGGER_AVAILABLE_NOW ? "available_now"
                                      : arena_printf(a, "%" PRId64 " ms", q->interval_ms)));
    inc_plan_explain(q->plan, a, lines);
    char wm[64] = "none";
    if (s.has_watermark && s.watermark_us == SOURCE_END_WATERMARK) {
        strcpy(wm, "infinity");     /* every input ended */
    } else if (s.has_watermark) {
        /* event time is microseconds since 2000-01-01 (PostgreSQL's epoch) */
        time_t t = (time_t)((s.watermark_us + SL_PG_EPOCH_UNIX_US) / 1000000);
        struct tm tm;
        gmtime_r(&t, &tm);
        strftime(wm, sizeof(wm), "%Y-%m-%d %H:%M:%S", &tm);
    }
    *lines = list_append(a, *lines,
                         arena_printf(a, "Live: last batch %" PRId64 ", input rows %" PRId64
                                         ", late rows %" PRId64 ", state rows %" PRId64
                                         ", state bytes %" PRId64
                                         ", watermark %s, falling behind: %s",
                                      s.last_batch_id, s.input_rows, s.late_rows, s.state_rows,
                                      s.state_bytes, wm, s.falling_behind ? "yes" : "no"));
    if (s.error != NULL)
        *lines = list_append(a, *lines, arena_printf(a, "Error: %s", s.error));
    return 0;
}

/* The first running query that reads or writes oid and is not owned by
 * skip_owner (0: owned by anyone). */
static const char *dependent(CqRuntime *rt, uint32_t oid, uint32_t skip_owner)
{
    for (Cq *q = rt->queries; q != NULL; q = q->next) {
        if (q->stopping || (skip_owner != 0 && q->rel->owner == skip_owner))
            continue;
        const CatRelation *into = inc_plan_into(q->plan), *late = inc_plan_late(q->plan);
        if (inc_plan_reads(q->plan, oid) || (into != NULL && into->oid == oid) ||
            (late != NULL && late->oid == oid))
            return q->rel->name;
    }
    return NULL;
}

void cq_want_snapshot(CqRuntime *rt, uint32_t oid)
{
    for (Cq *q = rt->queries; q != NULL; q = q->next)
        if (q->rel->oid == oid && !q->stopping)
            q->want_snapshot = true;
}

/* Does d read query oid's result table as a changelog (an input of its)? */
static bool reads_changelog(Cq *d, uint32_t oid)
{
    for (int i = 0; i < inc_plan_ninputs(d->plan); i++)
        if (inc_plan_stream(d->plan, i)->oid == oid)
            return true;
    return false;
}

const char *cq_changelog_reader(CqRuntime *rt, uint32_t oid)
{
    for (Cq *d = rt->queries; d != NULL; d = d->next)
        if (!d->stopping && d->rel->oid != oid && reads_changelog(d, oid))
            return d->rel->name;
    return NULL;
}

int64_t cq_changelog_floor(CqRuntime *rt, uint32_t oid)
{
    for (Cq *q = rt->queries; q != NULL; q = q->next) {
        if (q->rel->oid != oid || q->stopping || !q->in_flight)
            continue;
        return q->batch.cl_off ? INT64_MAX : q->batch.cl_gc_below;
    }
    return 0;
}

const char *cq_retracts(CqRuntime *rt, uint32_t oid, const char **into)
{
    *into = NULL;
    for (Cq *q = rt->queries; q != NULL; q = q->next) {
        if (q->rel->oid != oid || q->stopping)
            continue;
        const CatRelation *t = inc_plan_into(q->plan);
        *into = t != NULL ? t->name : NULL;
        return inc_plan_retracts(q->plan);
    }
    return "result table (the query is not running: what it retracts is not known)";
}

const char *cq_dependent(CqRuntime *rt, uint32_t oid)
{
    return dependent(rt, oid, 0);
}

int cq_dependents(CqRuntime *rt, uint32_t oid, const char **names, int max)
{
    int n = 0;
    for (Cq *q = rt->queries; q != NULL && n < max; q = q->next) {
        if (q->stopping)
            continue;
        const CatRelation *into = inc_plan_into(q->plan), *late = inc_plan_late(q->plan);
        if (inc_plan_reads(q->plan, oid) || (into != NULL && into->oid == oid) ||
            (late != NULL && late->oid == oid))
            names[n++] = q->rel->name;
    }
    return n;
}

const char *cq_dependent_not_owned(CqRuntime *rt, uint32_t oid, uint32_t owner)
{
    return dependent(rt, oid, owner);
}

int cq_progress(CqRuntime *rt, const char *name, CqProgress *out, int max, SlError *err)
{
    Cq *q = find_or_error(rt, name, err);
    if (q == NULL)
        return -1;
    int n = 0;
    for (int i = 1; i <= q->nprogress && n < max; i++)
        out[n++] = q->progress[(q->progress_next + CQ_PROGRESS_KEEP - i) % CQ_PROGRESS_KEEP];
    return n;
}

_Static_assert(CQ_MAX_OPS == INC_MAX_OP_STATES, "one sys.state row per operator");

int cq_state(CqRuntime *rt, const char *name, CqOpState *out, SlError *err)
{
    Cq *q = find_or_error(rt, name, err);
    if (q == NULL)
        return -1;
    IncOpState ops[INC_MAX_OP_STATES];
    int n = inc_state_ops(q->plan, ops, err);
    for (int i = 0; i < n; i++)
        out[i] = (CqOpState){
            .op = ops[i].op,
            .rows = ops[i].rows,
            .bytes = ops[i].bytes,
            .evicted = ops[i].evicted,
            .disk_bytes = ops[i].disk_bytes,
            .cache_bytes = ops[i].cache_bytes,
            /* the windows are the grouping operator's */
            .has_oldest_window = strcmp(ops[i].op, "join") != 0 && q->has_oldest_window,
            .oldest_window_us = q->oldest_window_us,
        };
    /* A changelog kept for the queries that read the result table: its
     * rows are the batches of changes kept (changelog.c). */
    int64_t from;
    SlError e = {0};
    if (n >= 0 && n < CQ_MAX_OPS && changelog_kept_from(rt->st, q->rel->oid, &from, &e) == 1) {
        uint8_t pre[5] = {'C'};
        put_be32(pre + 1, q->rel->oid);
        out[n++] = (CqOpState){
            .op = "changelog",
            .rows = SL_MAX(q->last_batch_id + 1 - from, 0),
            .disk_bytes = state_prefix_disk_bytes(rt->st, pre, sizeof(pre)),
        };
    }
    sl_error_clear(&e);
    return n;
}

CqSub *cq_subscribe(CqRuntime *rt, const char *name, bool snapshot, cq_changes_fn fn,
                    void *arg, SlError *err)
{
    Cq *q = find_or_error(rt, name, err);
    if (q == NULL)
        return NULL;
    if (q->stopping) {
        sl_error(err, ERRCODE_UNDEFINED_OBJECT, "continuous query \"%s\" does not exist",
                 name);
        return NULL;
    }
    CqSub *s = sl_calloc(1, sizeof(CqSub));
    s->q = q;
    s->fn = fn;
    s->arg = arg;
    s->id = rt->next_sub_id++;
    s->snapshot = snapshot;
    s->next = q->subs;
    q->subs = s;
    return s;
}

void cq_subscribe_go(CqSub *s)
{
    s->started = true;
    /* Rows still to be rewritten for new columns (CREATE OR REPLACE) are
     * not this definition's: the snapshot waits for the batch that does. */
    if (s->snapshot && !s->q->in_flight && !s->q->force_batch)
        send_snapshot(s->q, s->id);
}

void cq_unsubscribe(CqSub *s)
{
    if (s == NULL)
        return;
    CqSub **pp = &s->q->subs;
    while (*pp != NULL && *pp != s)
        pp = &(*pp)->next;
    if (*pp == s)
        *pp = s->next;
    sl_free(s);
}

typedef struct LagCtx {
    const Cq *q;
    int       input;
    void    (*fn)(const CqSourceLag *l, void *arg);
    void     *arg;
} LagCtx;

static void lag_cb(const SourceLag *l, void *arg)
{
    LagCtx *x = arg;
    CqSourceLag row = {
        .query = x->q->rel->name,
        .source = inc_plan_stream(x->q->plan, x->input)->name,
        .topic = l->topic,
        .partition = l->part,
        .committed = l->committed,
        .latest = l->latest,
        .lag = l->latest > l->committed ? l->latest - l->committed : 0,
        .last_poll_us = l->last_poll_us,
    };
    x->fn(&row, x->arg);
}

void cq_source_lag(CqRuntime *rt, void (*fn)(const CqSourceLag *l, void *arg), void *arg)
{
    for (Cq *q = rt->queries; q != NULL; q = q->next) {
        if (q->stopping)
            continue;
        for (int i = 0; i < inc_plan_ninputs(q->plan); i++) {
            LagCtx x = {q, i, fn, arg};
            source_lag(inc_plan_source(q->plan, i), &q->pos[i], lag_cb, &x);
        }
    }
}
