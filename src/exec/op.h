/*
 * op.h -- what the operator files of src/exec/ share (not for use outside
 * the module): the operator base, the per-kind constructors, a hash table
 * over byte keys, materialized rows, and the group states of aggregates.
 *
 *   ExOp, op_new, op_eval_ctx                  the operator base (op.c)
 *   op_build_scan ... op_build_worktable       one per plan kind (op_*.c)
 *   ExHashTab, ex_ht_*                         byte keys -> dense ids (hashtab.c)
 *   RowBuf, rowbuf_*                           rows kept for a whole statement (op.c)
 *   ex_eval_subplan                            a subquery's value in an expression (sublink.c)
 */
#ifndef SLUICE_EXEC_OP_H
#define SLUICE_EXEC_OP_H

#include "sluice/exec.h"

struct ExOp {
    ExCtx      *cx;
    const Plan *plan;
    Arena       arena;      /* the current output batch; reset by ex_op_next */
    ExOp       *child;
    ExOp       *right;
    ExBatch     out;
    int  (*next)(ExOp *op, ExBatch **out);
    void (*close)(ExOp *op);    /* extra cleanup, or NULL */
    void       *state;          /* the kind's own */
};

ExOp   *op_new(ExCtx *cx, const Plan *p, size_t state_size);
EvalCtx op_eval_ctx(ExOp *op);
/* Pulls the child's next batch that has live rows: 1, 0 at end, -1. */
int     op_pull(ExOp *child, ExBatch **b);

ExOp *op_build_scan(ExCtx *cx, const Plan *p);
ExOp *op_build_values(ExCtx *cx, const Plan *p);
ExOp *op_build_filter(ExCtx *cx, const Plan *p, ExOp *child);
ExOp *op_build_project(ExCtx *cx, const Plan *p, ExOp *child);
ExOp *op_build_limit(ExCtx *cx, const Plan *p, ExOp *child);
ExOp *op_build_agg(ExCtx *cx, const Plan *p, ExOp *child);
ExOp *op_build_sort(ExCtx *cx, const Plan *p, ExOp *child);
ExOp *op_build_distinct(ExCtx *cx, const Plan *p, ExOp *child);
ExOp *op_build_window(ExCtx *cx, const Plan *p, ExOp *child);
ExOp *op_build_series(ExCtx *cx, const Plan *p);
ExOp *op_build_project_set(ExCtx *cx, const Plan *p, ExOp *child);
ExOp *op_build_join(ExCtx *cx, const Plan *p, ExOp *left, ExOp *right);
ExOp *op_build_setop(ExCtx *cx, const Plan *p, ExOp *left, ExOp *right);
/* LATERAL and the recursive union build their right plans themselves, as
 * often as they run them. */
ExOp *op_build_lateral(ExCtx *cx, const Plan *p, ExOp *left);
ExOp *op_build_recursive(ExCtx *cx, const Plan *p, ExOp *nonrecursive);
ExOp *op_build_worktable(ExCtx *cx, const Plan *p);
/* CTE_SCAN runs its child itself, once for the statement (op_ctescan.c). */
ExOp *op_build_cte_scan(ExCtx *cx, const Plan *p);
bool  ex_plan_has_cte_scan(const Plan *p);
ExCteCache *ex_cte_cache_new(Arena *a);
/* A run of p (a correlated subquery's, a LATERAL item's) in run, a copy of
 * the enclosing context: its own WITH query rows over the enclosing ones. */
void  ex_cte_level(ExCtx *run, const Plan *p);

/* ---- a hash table from byte keys to dense ids 0, 1, 2, ... ---- */
typedef struct ExHashTab ExHashTab;
/* Keys are copied into a; the slot array is on the heap (ex_ht_free). */
ExHashTab *ex_ht_new(Arena *a);
/* Same, with the slots in the arena too (no ex_ht_free needed). */
ExHashTab *ex_ht_new_small(Arena *a);
void       ex_ht_free(ExHashTab *ht);
/* The id of key, inserting it with the next id when absent. */
uint32_t   ex_ht_insert(ExHashTab *ht, const void *key, uint32_t len, bool *inserted);
/* The id of key, or -1. */
int64_t    ex_ht_find(const ExHashTab *ht, const void *key, uint32_t len);
uint32_t   ex_ht_count(const ExHashTab *ht);

/* ---- rows kept for the whole statement (sort, join build side) ---- */
typedef struct RowBuf {
    Arena  *arena;          /* the statement's */
    int     ncols;
    SlType *types;
    Batch **batches;        /* dense, deep-copied */
    int     nbatches, cap;
    uint64_t nrows;
} RowBuf;

void rowbuf_init(RowBuf *rb, Arena *a, const ColumnDesc *cols, int ncols);
/* A scan of rb: its batch *pos (then the next) as op's output; 1, or 0
 * past its last batch. */
int  rowbuf_scan(ExOp *op, const RowBuf *rb, int *pos, ExBatch **out);
/* Appends the live rows of b (their values copied into the arena). */
void rowbuf_append(RowBuf *rb, const ExBatch *b);

/* EXPR_SUBPLAN: the value of an InitPlan, or x [NOT] IN its values
 * (sublink.c). */
int ex_eval_subplan(EvalCtx *cx, const Expr *e, const Batch *in, uint32_t n,
                    const uint32_t *sel, uint32_t nsel, Vector *out);

#endif /* SLUICE_EXEC_OP_H */
