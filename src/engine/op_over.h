/*
 * op_over.h -- the OVER and Top-N operators of the operator graph
 * (op_over.c, op_topn.c; docs/engine-graph.md, "OVER" and "Top-N").
 *
 *   eng_op_over_new    a plan's WINDOW node (one window function:
 *                      ranking, value or aggregate over a frame) over a
 *                      delta input with retractions
 *   eng_op_topn_new    the same node's row_number() or rank() filtered
 *                      by a constant bound: only the rows inside it
 *   eng_over_*         what the two share (not for use outside them): the
 *                      partitions kept in the state store, each batch's
 *                      touched partitions recomputed before and after, the
 *                      difference emitted
 *
 * Both keep every row of a partition (the partition key: ex_key_encode of
 * the PARTITION BY columns) under the operator's prefix and order the
 * partition by the plan's sort keys (the Sort under the WINDOW node: the
 * partition keys, then the ORDER BY keys, with their DESC and NULLS
 * FIRST), ties broken by the row's own equality bytes (ex_key_encode of
 * every column) so that the order is total and the same in every batch.
 * The plan (its WINDOW node and sort keys) must outlive the operator.
 */
#ifndef SLUICE_ENGINE_OP_OVER_H
#define SLUICE_ENGINE_OP_OVER_H

#include "graph.h"
#include "sluice/plan.h"

/* window: the WINDOW node (its child's columns are the input's, its own
 * the output's: the input's and the function's value); keys[0..nkeys):
 * the sort under it (NULL, 0: none, no PARTITION BY nor ORDER BY); time:
 * the input's event-time columns (NULL: none), passed through to the
 * output with the watermark.  A partition key column that is one of them
 * bounds the state: a partition is evicted once the watermark passes its
 * time.  NULL with err set (0A000) for what the operator cannot run. */
EngOp *eng_op_over_new(const Plan *window, const SortKey *keys, int nkeys,
                       const EngEdgeTime *time, SlError *err);

/* The rows of window's output whose row_number() (or rank()) is at most
 * limit (>= 0), with the function's value: what a FILTER `rn <= limit`
 * over the WINDOW node keeps.  NULL with err set (0A000) when window's
 * function is neither. */
EngOp *eng_op_topn_new(const Plan *window, const SortKey *keys, int nkeys, int64_t limit,
                       const EngEdgeTime *time, SlError *err);

/* --------------------------------------------------- shared by the two */

/* Computes the function over rows (whole partitions, each contiguous and
 * in the partition's order, a row repeated as often as it is kept) and
 * appends each output row to out with weight w. */
typedef int (*EngOverComputeFn)(EngOp *op, const Batch *rows, int64_t w, EngDelta *out,
                                EngCtx *cx);

/* The shell of either operator for vt (whose entry points other than
 * explain are eng_over_*) and its compute; the compute's own data (in
 * op->arena) set with eng_over_set_arg, read with eng_over_arg. */
EngOp *eng_over_new(const EngOpVt *vt, const Plan *window, const SortKey *keys, int nkeys,
                    const EngEdgeTime *time, EngOverComputeFn compute);
void   eng_over_set_arg(EngOp *op, void *arg);
void  *eng_over_arg(const EngOp *op);
const Plan *eng_over_window(const EngOp *op);
/* EXPLAIN's end of the line: "partitioned by N columns, ordered by M: "
 * and the bound (the watermark of a time column among the partition
 * keys, or unbounded). */
void eng_over_explain_tail(const EngOp *op, StrBuf *out);

int  eng_over_push(EngOp *op, int input, const EngDelta *d, EngCtx *cx);
int  eng_over_watermark(EngOp *op, int input, int64_t wm_us, EngCtx *cx);
int  eng_over_flush(EngOp *op, EngCtx *cx);
int  eng_over_checkpoint(EngOp *op, EngCtx *cx);
int  eng_over_restore(EngOp *op, EngCtx *cx);
void eng_over_stats(const EngOp *op, EngOpStats *out);
void eng_over_free(EngOp *op);

#endif /* SLUICE_ENGINE_OP_OVER_H */
