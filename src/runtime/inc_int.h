/*
 * inc_int.h -- what the files of the incremental engine share: the plan,
 * the groups of one batch, one batch's run (docs/engine.md).
 *
 *   incremental.c   the rewriter, the batch driver, grouped aggregation
 *                   (unwindowed and tumbling) and its emission
 *   inc_window.c    sliding windows as slices (panes): windows assembled
 *                   from their slices at emit
 *   inc_session.c   SESSION(ts, gap): sessions per group key, merged when a
 *                   row bridges them
 *   inc_dedup.c     SELECT DISTINCT on a stream, bounded by the watermark or
 *                   by state_ttl
 *   inc_inputs.c    the input tree: streams, stream-table joins, UNION ALL
 *   inc_join.c      a stream-stream interval join at the top of the inputs
 *   inc_graph.c     the second body: a plan of any shape as an operator graph
 *                   (src/engine/), for what the fixed shape refuses
 *
 * Never included outside src/runtime/inc*.c.
 */
#ifndef SLUICE_RUNTIME_INC_INT_H
#define SLUICE_RUNTIME_INC_INT_H

#include "incremental.h"
#include "inc_inputs.h"
#include "inc_join.h"
#include "sink.h"

#include "sluice/bytes.h"
#include "sluice/exec.h"
#include "sluice/plan.h"
#include "sluice/relstore.h"

typedef enum OutputMode { MODE_APPEND, MODE_UPDATE, MODE_COMPLETE } OutputMode;

/* A plan whose shape the fixed rewriter refuses runs as an operator graph
 * (inc_graph.c); its own data. */
typedef struct IncGraph IncGraph;

#define MAX_CHAIN 16

struct IncPlan {
    Arena              arena;       /* the parse tree, the plan, everything static */
    const CatRelation *query;
    const CatRelation *stream;      /* the first input's (not referenced) */
    const CatRelation *into;        /* INTO stream, or NULL */
    const CatRelation *sink;        /* INTO sink, or NULL; neither: the result table */
    Sink              *writer;      /* the sink's writer (files or Kafka, sink.h) */
    int               *out_src;     /* per output column: the aggregate column it is */
    const CatRelation *late;        /* late_rows stream, or NULL: late rows are dropped */
    int                ndeps;       /* what the query's analysis looked up, views
                                       included (Query.dep_oids / dep_as) */
    uint32_t          *dep_oids;
    uint32_t          *dep_as;
    StateStore        *st;
    IncShared         *shared;      /* the registry's (incremental.h) */
    ExFnHooks          hooks;       /* the functions' answers every batch evaluates
                                       with (inc_plan_set_fn_hooks; zero: none) */
    Source            *source;      /* the first input's (one stream: read directly) */
    IncInputs          ins;         /* the streams read and the tables joined */
    Plan              *inputs;      /* the input tree under the lower chain */
    bool               plain;       /* inputs is one stream scan: read it directly */
    bool               creating;    /* inc_plan_build_new: a definition being created */
    const uint8_t     *scan_need;   /* plain: per stream column, whether the batch
                                       reads it (NULL: all; source_reader_need) */
    IncJoin           *sjoin;       /* inputs is a stream-stream join, or NULL */
    IncGraph          *graph;       /* the plan runs as an operator graph (inc_graph.c;
                                       of the fields below only ins, stream, source,
                                       into, late, mode, the prefixes, shape and
                                       hashes are set) */
    bool               shape_refused;   /* the fixed rewriter refused the plan's shape */
    const char        *retracts;    /* a graph plan: what can take back a row it output
                                       (graph_retracting), NULL: nothing */
    OutputMode         mode;
    /* the plan, cut in pieces: upper chain (top first), agg, lower chain */
    Plan              *upper[MAX_CHAIN];
    int                nupper;
    Plan              *agg;
    Plan              *distinct;    /* SELECT DISTINCT (inc_dedup.c), or NULL */
    Plan              *lower[MAX_CHAIN];
    int                nlower;
    /* watermark of the stream (one stream; several: per input, in ins) */
    int                wm_col;      /* stream column, -1: none */
    int64_t            wm_delay_us;
    int64_t            ttl_us;      /* state_ttl, 0: none */
    SourceParts        parts;       /* the stream's partitions and idle_timeout */
    bool               part_wm;     /* per-partition watermark (inc_watermark.c) */
    /* several inputs: each one's partitions, and whether its watermark is
     * per partition */
    SourceParts        in_parts[INC_MAX_INPUTS];
    bool               in_part_wm[INC_MAX_INPUTS];
    /* windows: slices of pane_us (= size for tumbling, gcd(size, slide) for
     * sliding) */
    WindowKind         wkind;
    int64_t            size_us, slide_us, pane_us, gap_us;
    int                dedup_time_col;  /* inc_dedup.c: the event-time output column, or -1 */
    /* aggregation */
    const AggFunc    **fns;
    size_t            *state_off;
    size_t             state_size;
    uint8_t            qprefix[5];  /* 'Q' + oid: state */
    uint8_t            tprefix[5];  /* 'T' + oid: result table */
    uint8_t            meta_key[5]; /* 'M' + oid */
    /* what the state and the result table were written for */
    const char        *shape[INC_SHAPE_PARTS];
    uint64_t           fingerprint; /* of shape: the state-bearing plan */
    uint64_t           result_hash; /* of the result table's columns */
    /* the batch's and the input chunk's arenas between batches: emptied,
     * their blocks kept (up to INC_KEEP_*) for the next batch to reuse */
    Arena              batch_arena, chunk_arena;
};

#define INC_KEEP_BATCH (64u << 20)
#define INC_KEEP_CHUNK (16u << 20)

/* The figures of one operator's state (INC_OP_*), kept exact in the meta
 * key: the rows, the bytes of their keys and values, the rows evicted. */
typedef struct OpStat {
    int64_t rows, bytes, evicted;
} OpStat;

/* The batch id, watermark and state size stored with the state. */
typedef struct Meta {
    int64_t  batch_id;
    bool     has_wm;
    int64_t  wm;
    int64_t  state_rows;        /* over the operators */
    OpStat   op[INC_OPS];
    bool     has_ops;           /* op[] was read (written since sys.state had it) */
    uint64_t fingerprint;       /* 0: written before fingerprints (25 bytes) */
    uint64_t result_hash;
    /* several inputs: each one's watermark (the query's is their minimum) */
    bool     in_has_wm[INC_MAX_INPUTS];
    int64_t  in_wm[INC_MAX_INPUTS];
} Meta;

#define META_LEN 41
/* With n > 1 inputs, 9 bytes more per input. */
#define META_SIZE(n) (META_LEN + ((n) > 1 ? 9 * (size_t)(n) : 0))
/* Then the operators' figures, 24 bytes each. */
#define META_OPS_LEN (24 * INC_OPS)

/* A group of one batch: a key's aggregate states (a slice of a window, a
 * session, or an unwindowed group), loaded from state on first touch. */
typedef struct Group {
    struct Group *next;         /* hash chain */
    struct Group *all;          /* every group, in order of first touch */
    SlStr         key;          /* time key (8) + group values, in the arena */
    int64_t       wstart, wend;
    uint8_t      *groupvals;    /* row_encode of the group values */
    size_t        gvlen;
    uint8_t      *states;
    int64_t       touched_us;   /* state_ttl: when a row last updated it */
    bool          evict;        /* emitted for the last time (or merged away): delete */
    bool          dirty;        /* changed by this batch: write it back */
    bool          absent;       /* looked up but not in state (inc_gt_load) */
    bool          stored;       /* is in the state store under its key */
    bool          fresh;        /* not in state before this batch (SUBSCRIBE: insert) */
    uint32_t      stored_vlen;  /* stored: the length of its value in the state store */
    SlStr         orig;         /* sessions: the key it is stored under (len 0: none) */
    int64_t       orig_end;     /* sessions: the end stored with it (its index entry) */
    void         *ext;          /* an operator's own data */
} Group;

typedef struct GroupTable {
    Group  **buckets;
    uint32_t nbuckets;
    uint32_t n;
    Group   *all;
    Group   *last;
    int64_t  created;           /* groups not in state before this batch */
} GroupTable;

/* One batch's work. */
typedef struct Run {
    IncPlan    *p;
    IncBatch   *b;
    Arena      *a;              /* the batch's: groups, states, output */
    Arena      *chunk;          /* one input chunk's: reset per chunk */
    SlError    *err;
    EvalCtx     ecx;
    AggCtx      acx;
    GroupTable  groups;
    StateBatch *wb;
    ResultLog   log;            /* append-only result: the batch's chunks */
    IncInputsRun inputs;        /* rows and event times read per input */
    DeadLetters  dead;          /* undecodable records, appended with the state */
    IncJoinBatch join;          /* a stream-stream join's batch */
    IncJoinRun  *jrun;
    Batch     **outs;           /* INTO: the output batches, in r->a */
    int         nouts, capouts;
    Batch     **dels;           /* INTO a Kafka sink: groups that left the result */
    int         ndels;
    Batch     **lates;          /* late_rows: the late input rows, in r->a */
    int         nlates, caplates;
    int64_t     deleted;        /* state keys deleted by this batch */
    int64_t     dbytes;         /* the change of the 'Q' keys' bytes (key + value) */
    bool        time_keys;      /* state keys start with a time, and ... */
    int64_t     hi_time;        /* ... none in state is later than this */
    /* inc_watermark.c: per partition */
    uint8_t    *pseen, *pnow;   /* has had a row; has one in this batch */
    int64_t    *pmax, *pactive; /* max event time; batch time of its last row */
    struct PartWm *in_pw;       /* several inputs: per input (NULL: none per partition) */
} Run;

/* The meta key: read (0 absent, 1 read, -1 with err), written into wb,
 * and the refusal of state another plan wrote (incremental.c). */
int  inc_meta_read(IncPlan *p, Arena *a, Meta *m, SlError *err);
void inc_meta_write(IncPlan *p, StateBatch *wb, const Meta *m);
int  inc_check_fingerprint(IncPlan *p, const Meta *m, SlError *err);
/* Several inputs: each input's watermark after the batch into meta, and
 * the query's into b->next_* when it moves (incremental.c). */
void inc_next_watermark(IncPlan *p, IncBatch *b, Meta *meta, const int64_t *max_event);

/* inc_graph.c: the plan as an operator graph (p->graph set even when it
 * fails: inc_plan_free frees it); one batch; sys.state's rows (at most
 * max); EXPLAIN's lines; the unbounded operators (NULL: none), in a. */
int  inc_graph_build(IncPlan *p, const Plan *plan, const InitPlan *init, int ninit,
                     SlError *err);
void inc_graph_free(IncGraph *ig);
int  inc_graph_run(IncPlan *p, IncBatch *b, SlError *err);
int  inc_graph_ops(IncPlan *p, IncOpState *out, int max);
void inc_graph_explain(IncPlan *p, Arena *a, List **lines);
const char *inc_graph_unbounded(IncPlan *p, Arena *a);

/* Follows column col of the plan node at lower[i] down to the scan: the
 * stream column it is, or -1 if it is computed. */
int     inc_trace_column(IncPlan *p, int i, int col);

/* Time keys: sign bit flipped, big-endian, so byte order is time order. */
void    inc_time_key_put(uint8_t *p, int64_t t);
int64_t inc_time_key_get(const uint8_t *p);
/* t rounded down to a multiple of size, counted from the Unix epoch (as
 * the batch engine's windows are). */

Group *inc_gt_find(const GroupTable *t, const char *key, size_t klen, uint64_t hash);
/* The group for key, made (and loaded from state) on first touch; a new
 * one takes its group values from row `row` of gcols. */
Group *inc_gt_get(Run *r, const StrBuf *key, int64_t wstart, int64_t wend, const Vector *gcols,
                  int ngroups, uint32_t row);
/* The group under key if it is in this batch's table or in state, else a
 * group marked absent; NULL on error.  Its wend is the key's time, wstart
 * wend - pane. */
Group *inc_gt_load(Run *r, const char *key, size_t klen);
/* Sets g's group values from row `row` of gcols. */
void   inc_groupvals_set(Run *r, Group *g, const Vector *gcols, int ngroups, uint32_t row);
/* Loads into the table every group in state whose time key is at or before
 * to (its wend; wstart = wend - pane) that the table does not hold. */
int    inc_load_closed(Run *r, int64_t to);
/* The same for the keys whose time is in [from, to]. */
int    inc_load_range(Run *r, int64_t from, int64_t to);
/* Adds a group (made elsewhere) to a table; nodes in a. */
void   inc_gt_add(GroupTable *t, Arena *a, Group *g);
void   inc_state_encode(IncPlan *p, const Group *g, StrBuf *out);
int    inc_state_decode(IncPlan *p, Group *g, const uint8_t *v, size_t n, AggCtx *acx);
/* Merges src's aggregate states into dst's. */
int    inc_states_merge(Run *r, uint8_t *dst, const uint8_t *src);
/* Zeroed aggregate states for one group, in r->a. */
uint8_t *inc_states_new(Run *r);

/* The output rows of groups (window bounds, group values, aggregates)
 * through the upper chain into the result table (or the INTO stream). */
int  inc_emit_groups(Run *r, Group **gs, uint32_t n);
/* INTO a keyed Kafka sink: the rows sessions gs were stored as (group
 * values, the start of their stored key, their stored end) left the result
 * (merged away, or their start moved): tombstones for their keys, in this
 * batch's transaction.  0 (nothing to do for other targets) or -1. */
int  inc_emit_deletes(Run *r, Group **gs, uint32_t n);
/* INTO a keyed Kafka sink that takes deletes, over windows: whether its
 * key holds window_start, window_end (both false otherwise). */
void inc_sink_key_window(IncPlan *p, bool *start, bool *end);
/* Rows of an append-only result (after the aggregate's place) through the
 * upper chain into the result log (or the INTO stream). */
int  inc_emit_rows(Run *r, const Batch *rows);
/* state_ttl: deletes the state keys not touched for ttl of batch time. */
int  inc_evict_idle(Run *r);
/* Writes back the groups this batch changed and did not evict. */
void inc_write_states(Run *r);
/* Sorts groups by key, for writes in key order. */
void inc_groups_sort(Group **gs, uint32_t n);
/* INTO: keeps a copy of an output batch. */
void inc_keep_output(Run *r, const Batch *out);
/* late_rows: keeps the rows of the source batch `in` that late marks. */
void inc_keep_late(Run *r, const Batch *in, const uint8_t *late);
/* SUBSCRIBE: records row i of out as a change of kind ('I', 'U'). */
void inc_record_change(Run *r, char kind, const Batch *out, uint32_t i);
/* SUBSCRIBE: records a 'D' change with the row the result table holds under
 * key ('T' + oid + group key), if it holds one.  0 or -1. */
int  inc_record_delete(Run *r, const StrBuf *key);
/* Deletes a group's state key (its bytes counted off if it is stored);
 * evict: the watermark or state_ttl bounded it (evicted_rows). */
void inc_state_delete(Run *r, const Group *g, bool evict);
/* Counts a put of a state key of klen bytes (the 'Q' prefix included)
 * with a value of vlen bytes over a stored one of old_vlen (-1: none). */
void inc_state_put_bytes(Run *r, size_t klen, size_t vlen, int64_t old_vlen);
/* Grows an arena array of group pointers. */
void inc_push_group(Arena *a, Group ***gs, uint32_t *n, uint32_t *cap, Group *g);

/* inc_window.c: sliding windows. */
int inc_slide_emit(Run *r, bool has_from, int64_t from_wm, bool has_to, int64_t to_wm);

/* inc_session.c: session windows. */
int inc_session_aggregate(Run *r, const Batch *in, const Vector *tv, const Vector *gcols,
                          Vector *const *args, uint8_t *const *take, uint8_t *late);
int inc_session_emit(Run *r, bool has_to, int64_t to_wm);

/* inc_watermark.c: per-partition watermarks, idle partitions. */
int  inc_wm_begin(Run *r);
void inc_wm_observe(Run *r, const Batch *in);
void inc_wm_finish(Run *r, Meta *meta);
/* Several inputs: the same per input whose watermark is per partition.
 * inc_wm_inputs_finish raises meta's watermark of each such input (never
 * backwards) and sets b->wake_at_us. */
int  inc_wm_inputs_begin(Run *r);
void inc_wm_inputs_observe(void *run, int i, const Batch *in);
void inc_wm_inputs_finish(Run *r, Meta *meta);

/* inc_dedup.c: SELECT DISTINCT on a stream. */
int inc_dedup_check(IncPlan *p, SlError *err);
int inc_dedup_rows(Run *r, const Batch *in, uint8_t *late);
int inc_dedup_evict(Run *r, bool has_to, int64_t to_wm);

#endif /* SLUICE_RUNTIME_INC_INT_H */
