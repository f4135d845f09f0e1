/*
 * op_set.h -- the distinct and set-operation operators of the operator
 * graph (op_distinct.c, op_setop.c; docs/engine-graph.md, "Distinct and
 * set operations").
 *
 *   EngSetKind             what a counted operator's output multiplicity is
 *   eng_op_distinct_new    SELECT DISTINCT over one input (op_distinct.c)
 *   eng_op_distinct_plan   the same for a plan's DISTINCT node
 *   eng_op_counted_new     the operator both files share (op_distinct.c):
 *                          per distinct row its weight on each input, the
 *                          output's multiplicity a function of them
 *   eng_same_time          do two edges have the same event-time columns
 *                          (and at least one)? (op_distinct.c)
 *   eng_op_union_all_new   UNION ALL: both inputs' rows, weights kept (op_setop.c)
 *   eng_op_setop_new       UNION, INTERSECT [ALL], EXCEPT [ALL] (op_setop.c)
 *   eng_op_setop_plan      the same for a plan's SETOP node
 *
 * The columns handed in must outlive the operator (the plan's arena).
 */
#ifndef SLUICE_ENGINE_OP_SET_H
#define SLUICE_ENGINE_OP_SET_H

#include "graph.h"
#include "sluice/plan.h"

/* A row's output multiplicity from its weight sums l (input 0) and r
 * (input 1, 0 for distinct), PostgreSQL's multiset rules. */
typedef enum EngSetKind {
    ENG_SET_DISTINCT,           /* l > 0 ? 1 : 0 (one input) */
    ENG_SET_UNION,              /* l + r > 0 ? 1 : 0 */
    ENG_SET_INTERSECT,          /* l > 0 && r > 0 ? 1 : 0 */
    ENG_SET_INTERSECT_ALL,      /* min(l, r) */
    ENG_SET_EXCEPT,             /* l > 0 && r == 0 ? 1 : 0 */
    ENG_SET_EXCEPT_ALL          /* max(l - r, 0) */
} EngSetKind;

/* The counted operator of kind over inputs of columns cols (ncols; both
 * inputs the same types for the two-input kinds), each edge's event-time
 * columns times[i] (NULL: none): the output's watermark is the least of
 * the inputs' when their time columns agree. */
EngOp *eng_op_counted_new(EngSetKind kind, const ColumnDesc *cols, int ncols,
                          const EngEdgeTime *const *times);

/* The watermark of a two-input operator is passed on (the least of the
 * two) only when both edges have these same time columns. */
bool eng_same_time(const EngEdgeTime *a, const EngEdgeTime *b);

EngOp *eng_op_distinct_new(const ColumnDesc *cols, int ncols, const EngEdgeTime *time);
/* The distinct of a PLAN_DISTINCT node over an edge of times time; NULL
 * with err set (0A000) when its keys are not every column (DISTINCT ON: the
 * first row of each key, which needs an order). */
EngOp *eng_op_distinct_plan(const Plan *p, const EngEdgeTime *time, SlError *err);

/* UNION ALL of two inputs of the same column types (else NULL, 42804):
 * linear, no state. */
EngOp *eng_op_union_all_new(const ColumnDesc *lcols, int nl, const EngEdgeTime *ltime,
                            const ColumnDesc *rcols, int nr, const EngEdgeTime *rtime,
                            SlError *err);
/* op (SETOP_UNION, SETOP_INTERSECT, SETOP_EXCEPT) with or without ALL over
 * two inputs of the same column types: UNION ALL is eng_op_union_all_new,
 * the others counted operators.  NULL with err set (42804: column types
 * differ; 0A000: another op). */
EngOp *eng_op_setop_new(SetOpKind op, bool all, const ColumnDesc *lcols, int nl,
                        const EngEdgeTime *ltime, const ColumnDesc *rcols, int nr,
                        const EngEdgeTime *rtime, SlError *err);
/* The operator of a PLAN_SETOP node (input 0: p->child, input 1: p->right). */
EngOp *eng_op_setop_plan(const Plan *p, const EngEdgeTime *ltime, const EngEdgeTime *rtime,
                         SlError *err);

#endif /* SLUICE_ENGINE_OP_SET_H */
