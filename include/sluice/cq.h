/*
 * cq.h -- running continuous queries: triggers, micro-batches on worker
 * threads, the offset and commit logs, recovery (docs/engine.md).
 *
 *   cq_runtime_init    the registry, on the server's loop; batches run on
 *                      the engine's worker pool
 *   cq_set_check       the owner's privileges, checked before each batch
 *   cq_set_fn_hooks    the functions' answers every batch evaluates with
 *   cq_runtime_close   stop every query; cb once no batch is in flight
 *   cq_running         false once cq_runtime_close was called
 *   cq_runtime_free    the registry's memory, once closed and no statement
 *                      can scan its result tables any more
 *   cq_start           start (or resume after a restart) a query relation
 *   cq_pause, cq_resume
 *   cq_stop            stop a query that is being dropped
 *   cq_stop_then       stop it and call cb once no batch of it is in flight
 *                      (at once if it is not running): CREATE OR REPLACE
 *   cq_foreach         visit each query's status (sys.queries)
 *   cq_dependent       a query that reads or writes a relation
 *   cq_dependents      all of them
 *   cq_dependent_not_owned  one of those owned by another role
 *   cq_want_snapshot   a query that reads query oid's result table waits
 *                      for a snapshot of it: oid's next batch writes one
 *   cq_changelog_floor what query oid's batch in flight keeps of its
 *                      changelog
 *   cq_changelog_reader  a query that reads query oid's changelog
 *   cq_retracts        what makes query oid's result table take back rows
 *                      (NULL: it only appends), for CREATE of a reader
 *   cq_source_lag      per query, source and partition: committed offset,
 *                      latest offset, lag, last poll time (sys.source_lag)
 *   cq_subscribe       be called with each committed batch's changes of a
 *                      query's result (SUBSCRIBE), until cq_unsubscribe
 *   cq_subscribe_go    start delivering (the snapshot first)
 *   cq_progress        the last batches of a query: rows, watermark, state
 *                      rows and the time of each phase (sys.query_progress)
 *   cq_state           per operator of a query: its state (sys.state)
 *   cq_layouts         the registry's result layouts (CqLayouts)
 *   cq_layout_*        which definition the rows of a result table were
 *                      written for; the scan of a result table (cq_layout.c)
 *
 * Everything here runs on the loop thread except the body of a batch.
 */
#ifndef SLUICE_CQ_H
#define SLUICE_CQ_H

#include "sluice/pool.h"

#include <uv.h>

#include "sluice/catalog.h"
#include "sluice/expr.h"
#include "sluice/list.h"
#include "sluice/state.h"

typedef struct CqRuntime CqRuntime;
typedef struct CqLayouts CqLayouts;

/* A watermark_us below once every input ended (source.h's
 * SOURCE_END_WATERMARK): every window closed. */
#define CQ_WATERMARK_END INT64_MAX

/* The upper bounds, in seconds, of the batch-duration histogram's buckets
 * (1 ms to 60 s), ascending. */
#define CQ_DURATION_BUCKETS 16
extern const double cq_duration_bounds[CQ_DURATION_BUCKETS];

typedef struct CqStatus {
    const char *name;
    const char *status;         /* running, paused, failed, finished */
    const char *error;          /* NULL unless failed */
    const char *sql;            /* its CREATE statement as stored (secrets not masked) */
    int64_t     last_batch_id;  /* -1: none yet */
    int64_t     input_rows;     /* over the life of this process */
    bool        has_watermark;
    int64_t     watermark_us;
    int64_t     started_us;     /* when this process started it (Unix epoch) */
    int64_t     state_rows;     /* kept in the state store; -1: unknown */
    int64_t     state_bytes;    /* their keys' and values' bytes; -1: unknown */
    int64_t     late_rows;      /* over the life of this process */
    int64_t     trigger_ms;     /* the interval; 0: back to back; -1: once/available_now */
    bool        falling_behind; /* see cq_falling_behind */
    /* Kept in memory since this process started the query, for /metrics
     * (counters restart at 0 with the server, as Prometheus expects): */
    int64_t     output_rows;    /* rows its batches wrote to the result or sink */
    int64_t     batches;        /* batches committed */
    int64_t     retries;        /* tries again after a transient error or a full disk */
    int64_t     backlog_rows;   /* rows available at the last plan but left for later */
    /* the committed batches by duration (plan to write, CqProgress.total_us):
     * duration_count[i] batches took at most cq_duration_bounds[i] seconds
     * and more than the bound before; the last, more than every bound */
    int64_t     duration_count[CQ_DURATION_BUCKETS + 1];
    double      duration_sum_s; /* their durations added up, seconds */
    /* the sink it writes INTO (CREATE SINK), or NULL; since it was opened:
     * its commits, failed commits, and commits of a batch that failed before */
    const char *sink;
    int64_t     sink_commits, sink_failures, sink_retries;
} CqStatus;

/* One row of sys.source_lag.  Strings live until the callback returns. */
typedef struct CqSourceLag {
    const char *query;
    const char *source;         /* the stream */
    const char *topic;          /* Kafka topic; NULL for internal / generated streams */
    int32_t     partition;
    int64_t     committed;      /* the next offset the query reads */
    int64_t     latest;         /* the end offset last seen */
    int64_t     lag;            /* latest - committed, never negative */
    int64_t     last_poll_us;   /* when latest was read, Unix epoch us; 0: never */
} CqSourceLag;
/* One committed batch.  Phases, in microseconds:
 *   plan     on the loop: the sources' end offsets, the offset-log entry
 *   read     on the worker: reading the source rows
 *   execute  on the worker: operators, state reads, building the write
 *   write    on the worker: the one synced RocksDB write that commits the
 *            sink (result table or INTO stream), the late rows, the state
 *            and the batch id together
 *   commit   on the loop: the commit-log entry
 * total runs from the start of plan to the end of commit (it includes the
 * wait for a worker thread). */
typedef struct CqProgress {
    int64_t batch_id;
    int64_t started_us;         /* wall clock, microseconds since the Unix epoch */
    int64_t input_rows, output_rows, late_rows;
    int64_t state_rows;         /* state rows after the batch */
    int64_t state_bytes;        /* their keys' and values' bytes */
    int64_t evicted_rows;       /* state rows the watermark or state_ttl evicted */
    bool    has_watermark;      /* the watermark after the batch */
    int64_t watermark_us;
    int64_t plan_us, read_us, execute_us, write_us, commit_us, total_us;
    int64_t sink_us;            /* a files sink's commit, before the write (0: none) */
    bool    has_event_time;     /* the batch read rows with an event time */
    int64_t min_event_us, max_event_us;     /* microseconds since 2000-01-01 */
    int64_t backlog_rows;       /* source rows available but left for later batches */
} CqProgress;

/* A query falls behind when, over its last CQ_BEHIND_BATCHES batches, the
 * batches but the slowest took longer in all than that many trigger
 * intervals (interval triggers; one stalled batch is not a trend), or
 * every batch left rows behind and the backlog's trend (its
 * least-squares line over the batches) rose by more than a tenth of its
 * mean: its input comes in faster than it is processed, even when some
 * batches shrink the backlog.  A paused, failed or finished query is not
 * behind. */
#define CQ_BEHIND_BATCHES 8

/* The rule above over n batches p[0 .. n) (oldest first) of a query whose
 * trigger interval is interval_us (0: none, back to back or once).  Pure. */
bool cq_falling_behind(const CqProgress *p, int n, int64_t interval_us);

/* How many batches cq_progress keeps per query. */
#define CQ_PROGRESS_KEEP 100

/* One row of sys.state: an operator of a query that keeps state. */
typedef struct CqOpState {
    const char *op;             /* "aggregate", "distinct", "join" */
    int64_t     rows, bytes, evicted;
    uint64_t    disk_bytes, cache_bytes;
    bool        has_oldest_window;
    int64_t     oldest_window_us;   /* microseconds since 2000-01-01 */
} CqOpState;

#define CQ_MAX_OPS 16

typedef void (*cq_close_cb)(void *arg);

/* A subscriber's callback, on the loop, after batch batch_id committed:
 * rows (the query's result columns) and kinds[i] ('I' insert, 'U' update,
 * 'D' delete) of each.  rows NULL (batch_id -1): the query was dropped,
 * replaced or the server is stopping; the subscription is over and must not
 * be unsubscribed.  rows is never NULL otherwise, and a snapshot's batch_id
 * is that of the last committed batch, never -1 once it has rows. */
typedef void (*cq_changes_fn)(void *arg, int64_t batch_id, const char *kinds,
                              const Batch *rows);
typedef struct CqSub CqSub;

CqRuntime *cq_runtime_init(uv_loop_t *loop, Pool *workers, Catalog *cat, StateStore *st);
/* Before each batch of a query is planned: may its owner still read what it
 * reads (reads(plan, oid)) and write into `into` (NULL: its result table)
 * and `late` (its late_rows stream, or NULL)?  -1 with err (42501) fails the
 * query.  On the loop thread. */
typedef int (*cq_check_fn)(void *arg, const CatRelation *query, const CatRelation *into,
                           const CatRelation *late, bool (*reads)(void *plan, uint32_t oid),
                           void *plan, SlError *err);
/* fn is called with arg (the runtime's catalog). */
void cq_set_check(CqRuntime *rt, cq_check_fn fn, void *arg);
/* The answers of the functions that ask the runtime (expr.h's ExFnHooks:
 * has_table_privilege, sluice_stream_stat, ...), copied; each query
 * started after takes them into its plan, whose batches evaluate with
 * them.  Without: those functions fail with 55000 or give NULL. */
void cq_set_fn_hooks(CqRuntime *rt, const ExFnHooks *hooks);
/* Stops every query; cb(arg) (may be NULL) on the loop once no batch or
 * timer of theirs is left.  Called again while closing or closed, it calls
 * cb at once.  The registry stays readable (no query in it, cq_running
 * false) until cq_runtime_free. */
void cq_runtime_close(CqRuntime *rt, cq_close_cb cb, void *arg);
bool cq_running(const CqRuntime *rt);
/* Frees a registry that has finished closing (or never started a query);
 * NULL is a no-op.  After the pools have stopped: a statement on a worker
 * may read the registry (EXPLAIN CONTINUOUS QUERY, the scan of a result
 * table through its layouts) until then. */
void cq_runtime_free(CqRuntime *rt);
int  cq_start(CqRuntime *rt, const CatRelation *query, SlError *err);
int  cq_pause(CqRuntime *rt, const char *name, SlError *err);
int  cq_resume(CqRuntime *rt, const char *name, SlError *err);
int  cq_stop(CqRuntime *rt, const char *name, SlError *err);
void cq_stop_then(CqRuntime *rt, const char *name, void (*cb)(void *arg), void *arg);
void cq_foreach(CqRuntime *rt, void (*fn)(const CqStatus *s, void *arg), void *arg);
/* The status of one query (strings valid until the loop runs on); false if
 * there is none of that name. */
bool cq_status_of(CqRuntime *rt, const char *name, CqStatus *out);
/* EXPLAIN CONTINUOUS QUERY: the plan (inc_plan_explain) and the live
 * figures, as text lines in a; -1 with 42704 if there is no such query. */
int  cq_explain(CqRuntime *rt, const char *name, Arena *a, List **lines, SlError *err);
/* The name of a query that reads or writes relation oid, or NULL. */
const char *cq_dependent(CqRuntime *rt, uint32_t oid);
/* The names of the queries that read or write relation oid (at most max,
 * in registry order); their count. */
int cq_dependents(CqRuntime *rt, uint32_t oid, const char **names, int max);
/* The name of a query that reads or writes relation oid and whose owner is
 * not role `owner` (DROP ... CASCADE's ownership check), or NULL. */
const char *cq_dependent_not_owned(CqRuntime *rt, uint32_t oid, uint32_t owner);
/* Query oid's next batch writes a snapshot of its result table into its
 * changelog (changelog.c), and runs even without new input. */
void cq_want_snapshot(CqRuntime *rt, uint32_t oid);
/* The lowest batch of query oid's changelog that its batch in flight
 * keeps (it deletes what is below; INT64_MAX: all of it), 0 when none is
 * in flight. */
int64_t cq_changelog_floor(CqRuntime *rt, uint32_t oid);
/* A query that reads query oid's result table as its changelog (not as a
 * lookup table), or NULL. */
const char *cq_changelog_reader(CqRuntime *rt, uint32_t oid);
/* Why query oid's result table may take back rows (its aggregate, ...),
 * NULL when it only appends; a reason too when it is not running.  *into
 * gets the stream or sink it writes INTO (its result table stays empty),
 * or NULL. */
const char *cq_retracts(CqRuntime *rt, uint32_t oid, const char **into);
/* Calls fn for every partition of every running query's source, in
 * registry order.  On the loop thread; never blocks. */
void cq_source_lag(CqRuntime *rt, void (*fn)(const CqSourceLag *l, void *arg), void *arg);
/* Subscribes to the changes of query `name` from its next batch; with
 * snapshot, the rows of its result table come first (as inserts of the
 * last committed batch), read once no batch is in flight.  Nothing is
 * delivered before cq_subscribe_go. */
CqSub *cq_subscribe(CqRuntime *rt, const char *name, bool snapshot, cq_changes_fn fn,
                    void *arg, SlError *err);
void   cq_subscribe_go(CqSub *s);
void cq_unsubscribe(CqSub *s);
/* Copies the progress of up to max of the query's latest batches (kept in
 * memory, CQ_PROGRESS_KEEP at most, since the server started), newest
 * first, into out; returns how many, or -1 with 42704 if there is no such
 * query. */
int  cq_progress(CqRuntime *rt, const char *name, CqProgress *out, int max, SlError *err);
/* The state of each operator of the query that keeps some (out has room
 * for CQ_MAX_OPS; strings static); returns how many, or -1 with err set. */
int  cq_state(CqRuntime *rt, const char *name, CqOpState *out, SlError *err);

/* Result layouts (cq_layout.c): after a CREATE OR REPLACE that changes the
 * result hash (columns, HAVING, projected expressions), which definition
 * the stored rows of the result table belong to until the next batch
 * rewrites them.  Hashes are inc_plan_result_hash's.  One table per
 * registry (cq_layouts; made and freed with it).  All on the loop except
 * cq_layout_write_* (around a rewriting batch's write, a worker) and
 * cq_layout_scan (a statement's scan, a worker). */
CqLayouts *cq_layouts(CqRuntime *rt);      /* NULL for NULL */
CqLayouts *cq_layouts_new(void);
void cq_layouts_free(CqLayouts *ls);
void cq_layout_replace(CqLayouts *ls, const CatRelation *old, uint64_t old_hash,
                       const CatRelation *def, uint64_t hash);
/* rewrite: the stored rows (of result hash rows_hash) are still to be
 * rewritten for def; otherwise they are def's. */
void cq_layout_start(CqLayouts *ls, const CatRelation *def, uint64_t hash, bool rewrite,
                     uint64_t rows_hash);
/* why (NULL: it will run) def's next batch, which rewrites the rows, will
 * not come: "it is paused", ... */
void cq_layout_stalled(CqLayouts *ls, const CatRelation *def, const char *why);
/* The oid is gone (DROP, reset = true): a scan waiting on it fails. */
void cq_layout_forget(CqLayouts *ls, uint32_t oid);
void cq_layout_write_begin(CqLayouts *ls);
void cq_layout_write_end(CqLayouts *ls, uint32_t oid, uint64_t hash, bool written);
/* The scan of result table rel for a statement analysed with rel: its
 * rows once they are rel's (waiting for the rewrite of a replaced query's
 * rows, interruptible), or NULL with err set: 55000 when the rewrite will
 * not come, 40001 when rel was replaced and its rows rewritten meanwhile,
 * 42P01 when the query was dropped meanwhile, 57014 when the wait was
 * cancelled. */
struct ExSource *cq_layout_scan(CqLayouts *ls, StateStore *st, const CatRelation *rel,
                                SlError *err);

#endif /* SLUICE_CQ_H */
