/*
 * graph.h -- the operator graph of a continuous query: deltas, watermarks,
 * the one operator interface, and the scheduler that drives a graph through
 * a micro-batch (docs/engine-graph.md).
 *
 *   EngDelta          a columnar batch whose rows carry a weight
 *   eng_delta_*       make, append to, consolidate a delta
 *   EngOp, EngOpVt    one operator: its entry points, its inputs' and
 *                     output's columns, its key prefix in the state store
 *   eng_op_new, eng_op_free  an operator's shell (every constructor's start)
 *   eng_emit          what an operator calls to send a delta downstream
 *   eng_emit_watermark  the same for its output watermark
 *   eng_forward_watermark  a one-input operator's watermark entry that
 *                     passes its input's watermark on while its output
 *                     has a time column (filter, project)
 *   eng_time_add      a time plus an offset, saturating (watermark rules)
 *   eng_state_key     one of an operator's keys: prefix + tag + key
 *   eng_bound_put, eng_bound_get  the time an operator closed its state
 *                     below (prefix + tag, 8 bytes), for the late-row check
 *   eng_stats_put, eng_stats_get  an operator's state figures under its
 *                     prefix + 'n' (rows, bytes, evicted), written at
 *                     checkpoint and read back by restore
 *   EngStats, eng_stats_flush, eng_stats_load  the same figures as an
 *                     operator keeps them: changed in place, put at
 *                     checkpoint when the batch changed them, loaded by
 *                     restore
 *   EngGraph          the operators of one query in topological order and
 *                     the edges between them
 *   eng_graph_*       build a graph, run one batch through it, restore it,
 *                     make its operators emit only closed rows
 *                     (eng_graph_close_only: output_mode 'append')
 *
 * Every operator has the same entry points and knows nothing of the graph
 * beyond its inputs and its output; the scheduler (graph.c) knows no
 * operator by kind.  One file per operator (op_*.c in this folder), each
 * exporting one constructor `eng_op_<kind>_new`.
 *
 * Threads: a graph runs on one engine worker at a time (one batch in
 * flight per query); nothing here is shared between graphs.
 */
#ifndef SLUICE_ENGINE_GRAPH_H
#define SLUICE_ENGINE_GRAPH_H

#include "sluice/arena.h"
#include "sluice/error.h"
#include "sluice/exec.h"
#include "sluice/expr.h"
#include "sluice/state.h"
#include "sluice/strbuf.h"
#include "sluice/types.h"

#include <stdbool.h>
#include <stdint.h>

/* ------------------------------------------------------------------ deltas */

/* A delta: rows with weights.  weights[i] > 0 inserts row i that many times,
 * < 0 retracts it; an update is a retraction of the old row and an insertion
 * of the new one, in the same delta.  Rows of weight 0 may be present (an
 * operator skips them).  A delta's columns and weights live in the arena it
 * was made in (the batch's, EngCtx.arena) and are valid until the end of
 * the batch; an operator that keeps rows across batches copies them.
 * Deltas are read-only once emitted. */
typedef struct EngDelta {
    Batch    rows;
    int64_t *weights;           /* rows.nrows of them */
    uint32_t cap;               /* room for rows (eng_delta_append grows it) */
} EngDelta;

/* An empty delta of ncols columns of types cols[i].type with room for cap
 * rows, in arena a. */
void eng_delta_init(EngDelta *d, Arena *a, const ColumnDesc *cols, int ncols, uint32_t cap);
/* Appends row r of src (same columns) with weight w; grows in a. */
void eng_delta_append(EngDelta *d, Arena *a, const Batch *src, uint32_t r, int64_t w);
/* Sums the weights of equal rows (rows equal as ex_key_encode bytes) and
 * drops rows of weight 0; the order of the remaining rows is the order of
 * their first appearance.  Into a new delta in a. */
void eng_delta_consolidate(const EngDelta *d, Arena *a, EngDelta *out);

/* -------------------------------------------------------------- watermarks */

/* A watermark on an edge promises that no row arriving later on that edge
 * has a value below wm_us + offset_us in the edge's time column col (an
 * event-time column: timestamp or timestamptz microseconds since
 * 2000-01-01).  An edge has at most ENG_MAX_TIME such columns (the stream's
 * event time; window_start and window_end after a window), each with its
 * offset, fixed when the graph is built.  Watermarks only move forward. */
#define ENG_MAX_TIME 4

typedef struct EngTimeCol {
    int     col;
    int64_t offset_us;
} EngTimeCol;

typedef struct EngEdgeTime {
    int        n;
    EngTimeCol cols[ENG_MAX_TIME];
} EngEdgeTime;

/* -------------------------------------------------------------- operators */

typedef struct EngOp  EngOp;
typedef struct EngCtx EngCtx;

/* The figures of an operator's state (sys.state, EXPLAIN). */
typedef struct EngOpStats {
    int64_t rows;               /* keys kept */
    int64_t bytes;              /* their keys' and values' bytes */
    int64_t evicted;            /* keys evicted by the bound, ever */
} EngOpStats;

/* An operator's bound on its state (EXPLAIN CONTINUOUS QUERY; eviction). */
typedef enum EngBound {
    ENG_BOUND_NONE,             /* keeps no state */
    ENG_BOUND_WATERMARK,        /* evicts what the watermark closed */
    ENG_BOUND_TTL,              /* evicts keys idle for state_ttl */
    ENG_BOUND_UNBOUNDED         /* grows with the distinct keys (CREATE warns) */
} EngBound;

/* The entry points.  Each returns 0, or -1 with cx->err set; an error ends
 * the batch (nothing of it commits).  NULL entries are no-ops. */
typedef struct EngOpVt {
    const char *kind;           /* "filter", "aggregate", ...: EXPLAIN and sys.state */
    /* A delta on input i (0-based).  May emit (eng_emit) at once or keep
     * what it needs and emit at flush. */
    int  (*push)(EngOp *op, int input, const EngDelta *d, EngCtx *cx);
    /* Input i's watermark moved to wm_us (see EngEdgeTime).  An operator
     * whose output depends on it (closing windows, evicting state, emitting
     * an outer join's padded rows) acts here or at flush, and states its
     * output watermark with eng_emit_watermark. */
    int  (*watermark)(EngOp *op, int input, int64_t wm_us, EngCtx *cx);
    /* The end of the batch's input: emit what the batch changed.  Called in
     * topological order after every push and watermark of the batch, so an
     * operator's inputs are flushed before it is. */
    int  (*flush)(EngOp *op, EngCtx *cx);
    /* Put the batch's state changes into cx->wb (under op->prefix), after
     * every flush.  Nothing else writes an operator's keys. */
    int  (*checkpoint)(EngOp *op, EngCtx *cx);
    /* At open, and after a batch that failed: forget what is in memory and
     * read what is needed back from the state store (which holds the last
     * committed batch's state).  May be lazy (read keys on first touch). */
    int  (*restore)(EngOp *op, EngCtx *cx);
    void (*stats)(const EngOp *op, EngOpStats *out);
    /* One line for EXPLAIN CONTINUOUS QUERY: what it does and its bound. */
    void (*explain)(const EngOp *op, StrBuf *out);
    /* Frees what the operator allocated outside op->arena. */
    void (*free)(EngOp *op);
    /* Before the first batch, for a query whose output must be final
     * (output_mode 'append'): emit each row once, when the watermark
     * closes it, instead of changes that later ones retract (an
     * aggregate's groups; "emit on window close").  0, or -1 with err set
     * (0A000) when the watermark can never close what the operator
     * emits.  NULL: the operator's output is already as final as its
     * inputs. */
    int  (*close_only)(EngOp *op, SlError *err);
} EngOpVt;

#define ENG_MAX_INPUTS 4
#define ENG_PREFIX_LEN 7        /* 'G' + query oid (4, BE) + operator id (2, BE) */

struct EngOp {
    const EngOpVt *vt;
    void          *self;        /* the operator's own state */
    Arena          arena;       /* lives as long as the operator */
    uint16_t       id;          /* its index in the graph */
    int            ninputs;
    /* the columns of each input and of the output */
    const ColumnDesc *in_cols[ENG_MAX_INPUTS];
    int            in_ncols[ENG_MAX_INPUTS];
    EngEdgeTime    in_time[ENG_MAX_INPUTS];
    const ColumnDesc *out_cols;
    int            out_ncols;
    EngEdgeTime    out_time;
    EngBound       bound;
    uint8_t        prefix[ENG_PREFIX_LEN]; /* its keys in the state store */
    /* set by the graph: where emit sends the output */
    struct EngGraph *graph;
};

/* A new operator of ninputs inputs for vt, its arena initialized and
 * self_size zeroed bytes for its own state in it (op->self); the caller
 * fills in the columns.  Owned by the graph it is added to; eng_op_free
 * frees one that never was (calling vt->free). */
EngOp *eng_op_new(const EngOpVt *vt, int ninputs, size_t self_size);
void   eng_op_free(EngOp *op);

/* Sends d downstream: pushes it into every consumer of op's output, at
 * once (depth first).  d must stay valid until the end of the batch. */
int eng_emit(EngOp *op, const EngDelta *d, EngCtx *cx);
/* op's output watermark moved to wm_us (never backwards: a smaller one is
 * ignored); the consumers' watermark entry points are called at once. */
int eng_emit_watermark(EngOp *op, int64_t wm_us, EngCtx *cx);

/* a + b, saturating at INT64_MIN / INT64_MAX (a watermark of INT64_MIN is
 * "none yet": an offset never wraps it). */
int64_t eng_time_add(int64_t a, int64_t b);

/* EngOpVt.watermark for an operator whose output keeps its input's time
 * columns: emits wm_us when op->out_time has a column, else nothing. */
int eng_forward_watermark(EngOp *op, int input, int64_t wm_us, EngCtx *cx);

/* out (reset first) = op->prefix + tag + key[0..klen): one of op's keys
 * in the state store, the tag naming what kind of key it is. */
void eng_state_key(const EngOp *op, char tag, const void *key, size_t klen, StrBuf *out);

/* A time (a watermark the operator evicted closed state below) under
 * op->prefix + tag (8 bytes, LE): eng_bound_put writes it into cx->wb;
 * eng_bound_get reads the committed one into *out (INT64_MIN when none
 * was written); what names the operator in the corruption error (XX001).
 * 0, or -1 with cx->err set. */
void eng_bound_put(const EngOp *op, EngCtx *cx, char tag, int64_t v);
int  eng_bound_get(const EngOp *op, EngCtx *cx, char tag, const char *what, int64_t *out);

/* An operator's state figures under op->prefix + 'n' (24 bytes: rows,
 * bytes, evicted): eng_stats_put writes them into cx->wb; eng_stats_get
 * reads the committed ones into *out (zeros when none were written).
 * what names the operator in the corruption error (XX001).  0, or -1
 * with cx->err set. */
void eng_stats_put(const EngOp *op, EngCtx *cx, const EngOpStats *st);
int  eng_stats_get(const EngOp *op, EngCtx *cx, const char *what, EngOpStats *out);

/* The figures an operator keeps (rows, bytes, evicted: sys.state) and
 * whether its batch changed them: changed in place (st.rows++ and so on,
 * then dirty = true), eng_stats_flush puts them at checkpoint when dirty,
 * eng_stats_load reads the committed ones back at restore. */
typedef struct EngStats {
    EngOpStats st;
    bool       dirty;
} EngStats;

void eng_stats_flush(const EngOp *op, EngCtx *cx, EngStats *s);
int  eng_stats_load(const EngOp *op, EngCtx *cx, const char *what, EngStats *s);


/* What every entry point gets: the batch. */
struct EngCtx {
    Arena      *arena;          /* the batch's: deltas, scratch; reset after it */
    SlError    *err;
    EvalCtx    *ecx;            /* for ex_eval: the batch's arena, hooks, now */
    StateStore *st;             /* reads of the last committed state */
    StateBatch *wb;             /* the batch's one write (checkpoint) */
    int64_t     batch_id;
    int64_t     now_us;         /* batch time (state_ttl's clock) */
    int64_t     ttl_us;         /* state_ttl, 0: none */
};

/* ----------------------------------------------------------------- graphs */

/* An edge: producer's output -> consumer's input `input`.  Sources are
 * the graph's inputs (the streams and tables a query reads), numbered from
 * 0, with producer = -1 - source number. */
typedef struct EngEdge {
    int producer;               /* operator index, or -1 - source number */
    int consumer;               /* operator index */
    int input;                  /* the consumer's input number */
} EngEdge;

/* Where the output operator's deltas go during eng_graph_run. */
typedef int (*EngOutputCb)(void *arg, const EngDelta *d, EngCtx *cx);

typedef struct EngGraph {
    Arena    arena;
    uint32_t query_oid;
    EngOp  **ops;               /* in topological order: producers first */
    int      nops;
    EngEdge *edges;
    int      nedges;
    int      nsources;
    int      output;            /* the operator whose output is the query's */
    /* the scheduler's own (graph.c) */
    int      cap;               /* room in ops */
    int64_t *op_wm;             /* per operator: its output watermark so far */
    int64_t *src_wm;            /* per source: the same */
    EngOutputCb out_cb;         /* during eng_graph_run */
    void    *out_arg;
} EngGraph;

/* An empty graph for query oid; operators are added producers first. */
EngGraph *eng_graph_new(uint32_t query_oid);
/* Adds op (made by an eng_op_*_new, in no graph yet) fed by the given
 * producers (operator index or -1 - source), one per input; sets its id
 * and prefix; the last operator added is the graph's output.  Returns its
 * index, or -1 (op not taken) when a producer is not in the graph yet. */
int  eng_graph_add(EngGraph *g, EngOp *op, const int *producers);
void eng_graph_free(EngGraph *g);

/* One batch: the sources' deltas (deltas[s], NULL: none this batch) and
 * watermarks (has_wm[s]/wm_us[s]) in, every operator pushed, watermarked,
 * flushed and checkpointed into cx->wb; the output operator's emitted
 * deltas handed to out_cb as they come.  On error nothing is left in
 * memory that the next batch would trust: the caller restores the graph
 * (eng_graph_restore) before running another batch. */
int  eng_graph_run(EngGraph *g, EngCtx *cx, const EngDelta *const *deltas,
                   const bool *has_wm, const int64_t *wm_us,
                   EngOutputCb out_cb, void *out_arg);
int  eng_graph_restore(EngGraph *g, EngCtx *cx);
/* Every operator's close_only entry (EngOpVt): the graph of a query in
 * output_mode 'append'.  0, or -1 with err set by the first that cannot. */
int  eng_graph_close_only(EngGraph *g, SlError *err);

#endif /* SLUICE_ENGINE_GRAPH_H */
