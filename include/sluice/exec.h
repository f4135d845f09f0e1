/*
 * exec.h -- the batch executor: operators that run a logical plan
 * (plan.h) a batch at a time, and the aggregate functions.
 *
 * Operators are pull-based (Volcano with batches): ex_op_next() hands out
 * the next ExBatch of up to EX_BATCH_ROWS rows.  A batch carries a
 * selection vector, so a filter only marks the rows that pass and the
 * operators above evaluate their expressions on those rows alone.  Each
 * operator owns a per-batch arena that it resets when asked for its next
 * batch: a batch stays valid until its producer's next call.  State that
 * outlives a batch (hash tables, sorted rows) lives in the statement arena
 * (ExCtx.arena).  Nothing is allocated per row.
 *
 * Scans read through an ExSource: by default the whole table
 * (relstore's tbl_scan) or stream (stream_scan over [0, end)); the
 * streaming engine plugs in its own (the rows of stream S between offsets
 * a and b, an in-memory batch) with ExCtx.open_scan.
 *
 *   ex_op_build, ex_op_next, ex_op_close      operators (op_*.c)
 *   ex_source_table, ex_source_stream,
 *   ex_source_batches                         sources (op_scan.c)
 *   ex_batch_compact                          a batch without its selection
 *   ex_key_encode, ex_hash, ex_value_cmp      keys, hashing, ordering (keys.c)
 *   ex_agg_func                               how an aggregate runs (agg.c; its
 *                                             signature is functions.h's AggSig)
 *   ex_aggset_*                               a group's aggregate states (aggset.c)
 *   ex_modify                                 INSERT / UPDATE / DELETE (modify.c)
 *   ex_check_not_null, ex_duplicate_key       their row errors, for COPY (modify.c)
 *
 * The running statement's interrupt flag and memory budget, which the
 * operators check around every batch, are the function library's
 * (functions.h, included here).
 */
#ifndef SLUICE_EXEC_H
#define SLUICE_EXEC_H

#include "sluice/expr.h"
#include "sluice/functions.h"
#include "sluice/plan.h"
#include "sluice/state.h"

/* Evaluates e over the rows of a batch of n rows (eval.c): out gets a
 * vector of n values (and a null map) in cx->arena.  input may be NULL when
 * e reads no columns.  Returns 0, or -1 with cx->err set. */
int ex_eval(EvalCtx *cx, const Expr *e, const Batch *input, uint32_t n, Vector *out);
/* Same, for the rows listed in sel only (nsel of them, ascending); the other
 * rows of out are undefined. */
int ex_eval_sel(EvalCtx *cx, const Expr *e, const Batch *input, uint32_t n,
                const uint32_t *sel, uint32_t nsel, Vector *out);

#define EX_BATCH_ROWS 1024

/* A batch between operators: its columns, and which of its rows are live. */
typedef struct ExBatch {
    Batch     b;
    uint32_t *sel;      /* the live rows, ascending; NULL: all b.nrows */
    uint32_t  n;        /* how many rows are live */
} ExBatch;

typedef struct ExCtx ExCtx;
typedef struct ExOp ExOp;

/* Where a scan's rows come from.  next returns the row count of the batch
 * it made in a (0 at the end, -1 with err set); keys, when the scan wants
 * them, get each row's storage key (also in a). */
typedef struct ExSource ExSource;
struct ExSource {
    int  (*next)(ExSource *s, Arena *a, Batch **out, SlStr **keys, SlError *err);
    void (*close)(ExSource *s);
};

typedef ExSource *(*ex_open_scan_fn)(ExCtx *cx, const Plan *scan);

typedef struct ExCteCache ExCteCache;
typedef struct ExSubCache ExSubCache;

/* WITH RECURSIVE: the rows the WORKTABLE nodes of id read during a run of
 * a recursive term (op_recursive.c), innermost first. */
struct RowBuf;
typedef struct ExWorkTable ExWorkTable;
struct ExWorkTable {
    int                  id;
    const struct RowBuf *rows;
    const ExWorkTable   *next;
};
/* The source of a scan of a REL_SYSTEM relation: the rows the system
 * catalog makes (syscat.h's syscat_scan), with ExCtx.system_arg. */
typedef ExSource *(*ex_system_scan_fn)(ExCtx *cx, const CatRelation *rel);

struct ExCtx {
    Arena          *arena;      /* the statement's: operator state, materialized rows */
    SlError        *err;
    StateStore     *st;
    /* A statement whose rows stream to a client (a portal, COPY TO): its
     * table and stream scans are endable (state.h), since the client may
     * hold them; false for the engine's, which end within a batch. */
    bool            endable_scans;
    const Vector   *params;
    int             nparams;
    const Vector   *subplans;   /* InitPlan values (expr.h's EvalCtx.subplans) */
    int             nsubplans;
    ex_open_scan_fn open_scan;  /* NULL: read whole tables and streams */
    void           *open_scan_arg;
    /* Set by the caller for each statement: the scan of REL_SYSTEM
     * relations and its context (the runtime's system catalog, syscat.h's
     * Syscat, which each EvalCtx.system_arg carries to the catalog
     * functions).  NULL: a system relation cannot be read (55000), as in a
     * continuous query's batch. */
    ex_system_scan_fn system_scan;
    void             *system_arg;
    /* Set by the caller: the runtime's answers to the functions that ask
     * it (expr.h's ExFnHooks), which each EvalCtx.hooks points to.  All
     * NULL: the privilege functions fail with 55000, the stream counters
     * are NULL. */
    ExFnHooks         hooks;
    int64_t         now;        /* now() for the whole statement (ex_clock_now);
                                 * 0: each evaluation reads the clock once */
    const Vector   *outer;      /* a correlated subquery's run: the outer row */
    int             nouter;
    const ExWorkTable *worktables;  /* the recursive terms running, or NULL */
    /* The rows of the WITH queries that CTE_SCAN nodes share (op_ctescan.c);
     * made in the arena by ex_op_build when its plan has a CTE_SCAN. */
    struct ExCteCache *ctes;
    /* The results of the correlated subqueries evaluated by the operators
     * built with this context, by outer values (sublink.c); made there. */
    struct ExSubCache *subs;
    /* Set by the caller: an INSERT into a stream without RETURNING encodes
     * its rows into this chunk (relstore.h, stream_chunk_add) and sets
     * defer_rel instead of appending them; the caller makes them durable
     * (group commit off the loop, runtime.h's RtAppend). */
    struct StrBuf      *defer_chunk;
    const CatRelation  *defer_rel;
    /* Set by the caller inside a transaction block (txbuf.h): INSERT,
     * UPDATE and DELETE buffer their writes there instead of committing
     * them, and table scans and key checks see the committed rows with the
     * block's writes laid over them. */
    struct StateTx     *tx;
};

/* Builds the operators for a plan.  NULL with cx->err set on failure. */
ExOp *ex_op_build(ExCtx *cx, const Plan *p);
/* The next batch: 1 and *out, 0 at the end, -1 with the error in cx->err. */
int   ex_op_next(ExOp *op, ExBatch **out);
/* Closes the operator tree (its scans, its arenas). */
void  ex_op_close(ExOp *op);

/* The whole table's rows, or the stream's [from, to); endable: see
 * ExCtx.endable_scans. */
ExSource *ex_source_table(StateStore *st, const CatRelation *rel, bool endable);
ExSource *ex_source_stream(StateStore *st, const CatRelation *rel, int64_t from, int64_t to,
                           bool endable);
/* Hands out the given batches (borrowed; they must outlive the source). */
ExSource *ex_source_batches(Arena *a, Batch *const *batches, int nbatches);

/* The start of the window of width size (microseconds) that holds event
 * time t: windows are aligned to the Unix epoch, in the batch engine
 * (op_agg.c) and in continuous queries alike. */
int64_t ex_window_floor(int64_t t, int64_t size);

/* The elements of an array's text form ('{a,"b c",NULL}'), in order: fn
 * gets each (NULL for a NULL element; the bytes are valid during the call)
 * until it returns false.  Returns false if the text is not an array. */
bool ex_array_elems(const SlStr *a, bool (*fn)(const SlStr *el, void *arg), void *arg);

/* The live rows of b as a dense batch in a (b.b itself when all are live). */
const Batch *ex_batch_compact(Arena *a, const ExBatch *b);
/* Copies value (src, si) into (dst, di); with deep, strings and numerics
 * are copied into a (else they keep pointing at src's memory). */
void  ex_copy_value(Vector *dst, uint32_t di, const Vector *src, uint32_t si, Arena *deep);

/* Equality keys: appends row's values of cols to out so that two rows have
 * the same bytes exactly when the values are equal as SQL's "=" (and
 * IS NOT DISTINCT FROM, for NULLs) sees them: 1.0 and 1.00, -0 and 0 alike. */
void     ex_key_encode(const Vector *cols, int ncols, uint32_t row, StrBuf *out);
uint64_t ex_hash(const void *p, size_t n);
/* Orders two values of one type as ORDER BY does (NULLs not handled). */
int      ex_value_cmp(const Vector *a, uint32_t i, const Vector *b, uint32_t j);

/* ---------------------------------------------------------------- aggregates */

/* An aggregate function.  Its state is state_size bytes (8-byte aligned),
 * zeroed for an empty group; states that hold memory (a sum of numerics,
 * string_agg's text, min of a text) take it from AggCtx.arena and say so
 * with varlen.  update folds the selected rows of args into states[row]
 * (one state pointer per row of the batch); rows where the first argument
 * is NULL are never passed.  merge folds one state into another (for
 * partial states: the streaming engine keeps states in RocksDB between
 * micro-batches); final writes the result into row `row` of out.
 * serialize / deserialize turn a state into bytes and back.  All return 0
 * or -1 with the AggCtx's err set. */
typedef struct AggFunc AggFunc;
typedef struct AggCtx {
    Arena   *arena;         /* states' memory: as long-lived as the states */
    SlError *err;
    SlType   type;          /* the result type */
} AggCtx;

/* How the aggregate of one AggId runs (functions.h: its signature, which
 * the analyzer resolved the call to). */
struct AggFunc {
    AggId       id;
    uint32_t    state_size;
    bool        varlen;
    int  (*update)(AggCtx *cx, const Vector *args, uint8_t *const *states, const uint32_t *sel,
                   uint32_t n);
    int  (*merge)(AggCtx *cx, void *dst, const void *src);
    int  (*final)(AggCtx *cx, const void *state, Vector *out, uint32_t row);
    void (*serialize)(const AggFunc *f, const void *state, StrBuf *out);
    int  (*deserialize)(AggCtx *cx, const AggFunc *f, void *state, const void *p, size_t n);
};

/* The executor's row for a resolved signature (never NULL). */
const AggFunc *ex_agg_func(const AggSig *sig);
/* stddev / variance (sample or population) of n values whose exact sum is
 * sx and sum of squares sxx, as PostgreSQL's numeric_stddev_internal (NaN
 * when special: a NaN or infinite value was among them); *null when n is
 * too small.  out's digits in a (agg_stats.c). */
int ex_agg_var_exact(Arena *a, int64_t n, bool special, const SlNumeric *sx,
                     const SlNumeric *sxx, bool sample, bool stddev, SlNumeric *out, bool *null,
                     SlError *err);

/* The aggregate states of one group as one block of bytes (ex_aggset_size,
 * zeroed for an empty group): what an Aggregate keeps per group, and what
 * the streaming engine keeps in RocksDB between micro-batches.  DISTINCT
 * calls keep the set of their distinct arguments, so blocks merge. */
typedef struct ExAggSet ExAggSet;
/* The set for these calls; states' memory comes from a. */
ExAggSet *ex_aggset_new(Arena *a, const AggCall *calls, int n);
uint32_t  ex_aggset_size(const ExAggSet *s);
/* Folds the selected rows of in into their groups: rows[i] is the block of
 * row i's group.  Arguments and FILTERs are evaluated in ecx->arena. */
int  ex_aggset_update(ExAggSet *s, EvalCtx *ecx, const Batch *in, uint32_t nrows,
                      const uint32_t *sel, uint32_t nsel, uint8_t *const *rows);
int  ex_aggset_merge(ExAggSet *s, uint8_t *dst, const uint8_t *src, Arena *scratch,
                     SlError *err);
/* Each call's result into row r of outs[k] (results' memory in out). */
int  ex_aggset_final(ExAggSet *s, const uint8_t *block, Vector *outs, uint32_t r, Arena *out,
                     SlError *err);
void ex_aggset_serialize(const ExAggSet *s, const uint8_t *block, StrBuf *out);
int  ex_aggset_deserialize(ExAggSet *s, uint8_t *block, const void *p, size_t n, SlError *err);

/* ------------------------------------------------------------------- DML */

/* Where rows go: 0 to go on, negative to stop. */
typedef int (*ex_emit_fn)(void *arg, const Batch *b);

/* Runs an INSERT, UPDATE or DELETE atomically (one synced StateBatch, or
 * one stream append); RETURNING rows go to emit after the commit.  count
 * gets the rows inserted, updated or deleted. */
int ex_modify(ExCtx *cx, const ModifyPlan *m, ex_emit_fn emit, void *arg, uint64_t *count);
/* The errors of a row of b (laid out as rel's columns) that INSERT gives:
 * 23502 when a NOT NULL column of it is NULL (ex_check_not_null: 0 when
 * none is), and ex_duplicate_key's 23505 for its primary key.  -1. */
int ex_check_not_null(const CatRelation *rel, const Batch *b, uint32_t row, SlError *err);
int ex_duplicate_key(const CatRelation *rel, const Batch *b, uint32_t row, SlError *err);

#endif /* SLUICE_EXEC_H */
