/*
 * incremental.h -- the incremental plan of a continuous query and the work
 * of one micro-batch (docs/engine.md, "A micro-batch").
 *
 *   inc_plan_build    the query's SELECT -> an incremental plan, or a
 *                     refusal that says what to add; the plan keeps what
 *                     every plan of its registry shares (IncShared)
 *   cq_shared         a registry's IncShared (cq.c)
 *   cq_catalog, cq_store   the catalog and state store a registry was
 *                     given at cq_runtime_init (NULL for NULL) (cq.c)
 *   inc_plan_build_new  the same for a definition being created (CREATE [OR
 *                     REPLACE]): also refuses an aggregation in update or
 *                     complete mode INTO a target that only appends, which
 *                     a stored definition runs with a logged warning
 *   inc_plan_set_fn_hooks  the answers of the functions that ask the
 *                     runtime (expr.h's ExFnHooks), for every batch's
 *                     evaluation contexts
 *   inc_plan_free
 *   inc_batch_run     run batch N: read the source range, update state,
 *                     emit by output mode, and fill one StateBatch with the
 *                     state changes, the output rows and the batch id
 *   inc_state_meta    the batch id stored with the state (-1: none), the
 *                     watermark after it, and whether the result table
 *                     must be rewritten (its columns changed), and for
 *                     which result hash its rows were written; fails when
 *                     the state was written by a plan of another shape
 *   inc_plan_shape    the state-bearing parts of the plan as text (source,
 *                     window, grouping keys, aggregates); their hash, the
 *                     fingerprint, is stored with the state of each batch
 *   inc_plan_result_hash  the hash of what makes a result row out of a group
 *                     (the columns, HAVING, the projected expressions)
 *   inc_plan_keeps_rows  the result table's rows can be rewritten from the
 *                     state (an aggregation in update or complete mode whose
 *                     state holds every group: no state_ttl, no watermark
 *                     evicting windows, no sessions or sliding slices)
 *   inc_plan_lost_rows   why not (NULL when it can)
 *   inc_state_rows    the state rows and bytes kept (the 'M' key's counts)
 *   inc_state_ops     per operator: rows, bytes, evicted rows, sizes in RocksDB
 *   inc_state_oldest_window  the start of the oldest window kept
 *   inc_plan_unbounded_ops  a graph plan's operators whose state no bound
 *                     limits (CREATE's WARNING)
 *   inc_plan_retracts what makes the query's result table take back rows
 *                     (NULL: it only appends), for a query that reads it
 *   changelog_begin, changelog_write   the result table's changelog
 *                     (changelog.c)
 *
 * inc_batch_run runs on a worker thread; at most one per plan at a time.
 */
#ifndef SLUICE_RUNTIME_INCREMENTAL_H
#define SLUICE_RUNTIME_INCREMENTAL_H

#include "sluice/catalog.h"
#include "sluice/cq.h"
#include "sluice/list.h"
#include "sluice/state.h"
#include "sluice/strbuf.h"
#include "inc_inputs.h"
#include "sink.h"
#include "source.h"

#include <pthread.h>

typedef struct IncPlan IncPlan;

/* What every plan of one registry of continuous queries shares; the
 * registry (cq.c's CqRuntime) holds it and outlives its plans. */
typedef struct IncShared {
    CqLayouts      *layouts;        /* a batch that rewrites a result table
                                     * writes under its lock (cq_layout.c) */
    pthread_mutex_t dead_mu;        /* dead-letter appends (deadletter.h) */
    pthread_mutex_t manifest_mu;    /* files sinks' manifests (sink_files.h) */
    struct Runtime *rt;             /* the Runtime the registry runs in (set by
                                     * rt_cq_init; NULL: none): its sources and
                                     * sinks are opened and checked there (the
                                     * KafkaPolicy, the files paths, the
                                     * ingesters) */
} IncShared;

IncShared  *cq_shared(CqRuntime *rt);
Catalog    *cq_catalog(const CqRuntime *rt);
StateStore *cq_store(const CqRuntime *rt);

/* The operators that keep state, each in its own key space: grouped
 * aggregation, windows and sessions or DISTINCT ('Q' + query oid), and a
 * stream-stream join ('J' + query oid). */
enum { INC_OP_GROUPS, INC_OP_JOIN, INC_OPS };
/* The most sys.state rows of one query: a plan on the operator graph has
 * one per operator that keeps state (inc_graph.c). */
#define INC_MAX_OP_STATES 16

/* One operator's state (sys.state). */
typedef struct IncOpState {
    const char *op;             /* "aggregate", "distinct", "join" */
    int64_t     rows;           /* rows kept (groups, windows, sessions, keys, join rows) */
    int64_t     bytes;          /* their keys' and values' bytes, exact */
    int64_t     evicted;        /* rows evicted by the watermark or state_ttl, ever */
    uint64_t    disk_bytes;     /* RocksDB's estimate for its key range in table files */
    uint64_t    cache_bytes;    /* its share of the block cache (see docs) */
} IncOpState;

/* What batch N reads and what it produced. */
typedef struct IncBatch {
    int64_t batch_id;
    const SourceOffsets *ranges;    /* per input i: ranges[i], what it reads per
                                     * source partition */
    bool    has_watermark;      /* the watermark the batch is judged by */
    int64_t watermark_us;
    /* results */
    bool    next_has_watermark; /* the watermark after the batch */
    int64_t next_watermark_us;
    int64_t input_rows;
    int64_t output_rows;
    int64_t late_rows;
    int64_t state_rows;
    int64_t state_bytes;        /* the state's keys and values after the batch */
    bool    has_oldest_window;  /* windows: the start of the oldest window kept */
    int64_t oldest_window_us;
    int64_t min_event_us, max_event_us;
    /* SUBSCRIBE: with want_changes, the batch's changes of the result, one
     * record each: kind ('I' insert, 'U' update, 'D' delete: the row it
     * had), u32 length, the row
     * (row_encode, the query's result columns); on the heap, the caller's
     * to free (strbuf_free) */
    bool    want_changes;
    StrBuf  changes;
    int64_t now_us;             /* batch time (logged when planned): state_ttl's clock */
    int64_t evicted_rows;       /* state rows the watermark or state_ttl evicted */
    int64_t wake_at_us;         /* batch time at which an idle partition would move the
                                 * watermark (INT64_MAX: never): run a batch then */
    /* per phase, microseconds */
    int64_t read_us;            /* reading the source rows */
    int64_t execute_us;         /* operators, state reads, building the write */
    int64_t write_us;           /* the one synced RocksDB write: output + state + batch id */
    int64_t sink_us;            /* a files sink's commit (before the write) */
    /* The batch's offset-log entry (cq.c's encoding), put in the batch's
     * write under 'M' + query oid + 'L' when log_len > 0: recovery writes
     * it back to the offset log if the state committed before it did. */
    const void *log_entry;
    size_t  log_len;
    /* The result table's changelog, for the queries that read it
     * (changelog.c): set by cq.c at launch */
    bool    cl_snapshot;        /* write a snapshot of the result table before
                                 * this batch (a new reader waits for one) */
    bool    cl_off;             /* no query reads it: the changelog goes */
    int64_t cl_gc_below;        /* every reader is past this batch: drop what
                                 * is below (0: nothing) */
    /* set by changelog_begin */
    bool    cl_on;              /* the batch writes its changes (want_changes;
                                 * an update records its old row, 'O') */
    int64_t cl_from;            /* the lowest batch kept, -1: the changelog is off */
} IncBatch;

/* changelog.c: at the start of a batch of query rel (writes_result: it
 * writes its result table, not INTO a stream or a sink), and in its write
 * before the commit.  0 or -1. */
int  changelog_begin(StateStore *st, const CatRelation *rel, bool writes_result, IncBatch *b,
                     SlError *err);
int  changelog_write(StateStore *st, const CatRelation *rel, IncBatch *b, StateBatch *wb,
                     SlError *err);
/* The lowest batch query oid's changelog keeps: 1, 0 (no changelog), -1. */
int  changelog_kept_from(StateStore *st, uint32_t oid, int64_t *from, SlError *err);

int  inc_plan_build(const CatRelation *query, Catalog *cat, StateStore *st, IncShared *sh,
                    IncPlan **out, SlError *err);
int  inc_plan_build_new(const CatRelation *query, Catalog *cat, StateStore *st, IncShared *sh,
                        IncPlan **out, SlError *err);
/* Copies hooks into the plan: each batch's expressions (its projections,
 * filters and aggregates, the input executor's, a stream-stream join's
 * keys and condition) evaluate with them.  Without: has_table_privilege
 * and friends fail with 55000, the stream counters are NULL. */
void inc_plan_set_fn_hooks(IncPlan *p, const ExFnHooks *hooks);
void inc_plan_free(IncPlan *p);
/* The inputs the plan reads (streams, each with its own offsets), input
 * i's source and stream, and whether the plan reads (or joins) relation oid. */
int     inc_plan_ninputs(IncPlan *p);
Source *inc_plan_source(IncPlan *p, int i);
const CatRelation *inc_plan_stream(IncPlan *p, int i);
bool    inc_plan_reads(IncPlan *p, uint32_t oid);
/* Whether the query reads oid with its owner's rights: named in its text,
 * not only inside a view it reads (the view's owner's rights read that). */
bool    inc_plan_reads_as_owner(IncPlan *p, uint32_t oid);
/* The stream or sink INTO writes to, or NULL. */
const CatRelation *inc_plan_into(IncPlan *p);
/* The counters of the plan's sink (CREATE SINK): true with out filled, or
 * false when it writes none. */
bool inc_plan_sink_stats(IncPlan *p, const char **name, SinkStats *out);
/* The late_rows stream, or NULL. */
const CatRelation *inc_plan_late(IncPlan *p);
/* Whether the output leaves the RocksDB write (a files or Kafka sink,
 * committed before the state). */
bool inc_plan_sink_outside(IncPlan *p);
/* The offset-log entry the last committed batch put in its write
 * (IncBatch.log_entry): 1 with it in arena a, 0 if none, -1 with err. */
int  inc_state_log_entry(IncPlan *p, Arena *a, void **entry, size_t *len, SlError *err);
/* Whether the watermark can move with no new rows (idle_timeout). */
bool inc_plan_idle_wakes(IncPlan *p);
int  inc_batch_run(IncPlan *p, IncBatch *b, SlError *err);
/* rows_hash: the result hash the stored rows were written with (0: none
 * recorded); *rebuild when it is not this plan's and the rows are rewritten
 * by the next batch. */
int  inc_state_meta(IncPlan *p, int64_t *batch_id, bool *has_watermark,
                    int64_t *watermark_us, bool *rebuild, uint64_t *rows_hash, SlError *err);
int  inc_state_rows(IncPlan *p, int64_t *rows, int64_t *bytes, SlError *err);
/* The state of each operator that keeps some (out has room for
 * INC_MAX_OP_STATES);
 * returns how many, or -1 with err set. */
int  inc_state_ops(IncPlan *p, IncOpState *out, SlError *err);
/* The start of the oldest window in the state (windowed aggregation): 1
 * with *start_us, 0 when there is none, -1 with err set. */
int  inc_state_oldest_window(IncPlan *p, bool has_wm, int64_t wm_us, int64_t *start_us,
                             SlError *err);
/* Complete mode over groups no window or TTL bounds (CREATE warns). */
bool inc_plan_complete_unbounded(IncPlan *p);
/* A plan on the operator graph: its operators whose state grows with the
 * distinct keys, as text in a ("aggregate (op 2), ..."); NULL when none or
 * for a plan of the fixed shape (CREATE warns). */
const char *inc_plan_unbounded_ops(IncPlan *p, Arena *a);
const char *inc_plan_retracts(IncPlan *p);
/* EXPLAIN CONTINUOUS QUERY: the operators, their state and its bound, as
 * lines appended to *lines (inc_explain.c). */
void inc_plan_explain(IncPlan *p, Arena *a, List **lines);

enum { INC_SHAPE_SOURCE, INC_SHAPE_WINDOW, INC_SHAPE_GROUPS, INC_SHAPE_AGGS, INC_SHAPE_PARTS };
/* "source stream", "window", "grouping keys", "aggregates" */
extern const char *const inc_shape_names[INC_SHAPE_PARTS];
const char *const *inc_plan_shape(IncPlan *p);
uint64_t inc_plan_fingerprint(IncPlan *p);
uint64_t inc_plan_result_hash(IncPlan *p);
bool inc_plan_keeps_rows(IncPlan *p);
const char *inc_plan_lost_rows(IncPlan *p);

#endif /* SLUICE_RUNTIME_INCREMENTAL_H */
