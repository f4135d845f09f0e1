/*
 * op_join.h -- the join operator of the operator graph (op_join.c): an
 * incremental equi-join keeping both sides' rows by join key, inner or
 * outer, with an optional residual condition and an optional interval
 * bound that evicts by watermark (docs/engine-graph.md, "Joins").
 *
 *   EngJoinType       inner, left, right, full
 *   EngJoinInterval   r.ts + lo <= l.ts <= r.ts + hi between two time columns
 *   EngJoinSpec       what the rewriter hands the constructor
 *   eng_op_join_new   the operator: input 0 is the left side, input 1 the
 *                     right; its output is the left columns then the right
 *   eng_op_join_plan  the operator of a plan's JOIN node (the rewriter's)
 */
#ifndef SLUICE_ENGINE_OP_JOIN_H
#define SLUICE_ENGINE_OP_JOIN_H

#include "graph.h"
#include "sluice/plan.h"

typedef enum EngJoinType {
    ENG_JOIN_INNER,
    ENG_JOIN_LEFT,
    ENG_JOIN_RIGHT,
    ENG_JOIN_FULL
} EngJoinType;

/* A pair matches only when r.ts + lo_us <= l.ts <= r.ts + hi_us, with
 * l.ts the left input's column lcol and r.ts the right's rcol (timestamp
 * or timestamptz; each one of its edge's event-time columns, so that the
 * sides' watermarks bound them). */
typedef struct EngJoinInterval {
    int     lcol;
    int     rcol;
    int64_t lo_us;
    int64_t hi_us;
} EngJoinInterval;

typedef struct EngJoinSpec {
    EngJoinType type;
    int         nkeys;          /* equi-join keys (0: every pair is a candidate) */
    Expr *const *lkeys;         /* over the left input's columns */
    Expr *const *rkeys;         /* over the right's, of the same types */
    /* The rest of the ON condition, over the output's columns (left then
     * right); NULL: none.  A pair matches when it is true (NULL is not). */
    const Expr *residual;
    /* NULL: unbounded (both sides kept for ever) */
    const EngJoinInterval *interval;
    /* -1: a regular join.  0 or 1: a stream-table (lookup) join whose
     * input `lookup` is the table's changes: they are kept but join
     * nothing; the other side's rows join the table as the batch leaves
     * it, at flush, and are not kept, so rows already emitted are never
     * retracted when the table changes (Flink's lookup join; what
     * docs/engine.md's stream-table joins do).  No interval; the table
     * side cannot be outer; the stream side cannot retract. */
    int         lookup;
    /* Per input: its rows are only ever inserted (a stream's).  An inner
     * side's rows are then kept as they come, without looking for an
     * equal row to add to (equal rows are kept apart); a retraction there
     * fails the batch (XX000). */
    bool        inserts_only[2];
} EngJoinSpec;

/* A join of a left input (lcols, ncols nl, its event-time columns ltime)
 * and a right one.  The operator copies spec, its interval and the edge
 * times; the keys, the residual and the columns must outlive it (the
 * plan's arena).  Returns the operator (eng_graph_add takes it), or NULL
 * with err set: keys of different types (42804); an interval whose columns
 * are not timestamps or not event-time columns of their edges, or an
 * empty one; a lookup join with an interval or an outer table side
 * (0A000). */
EngOp *eng_op_join_new(const EngJoinSpec *spec,
                       const ColumnDesc *lcols, int nl, const EngEdgeTime *ltime,
                       const ColumnDesc *rcols, int nr, const EngEdgeTime *rtime,
                       SlError *err);

/* The join of a PLAN_JOIN node p (CROSS as an inner join without keys):
 * its keys and residual are p's.  Its interval bound comes from the
 * conjuncts of p's residual that compare a left and a right time column of
 * one type (timestamp or timestamptz), each plus or minus a constant
 * interval without months (nor days, for timestamptz): >=, >, <=, < and
 * = (strict ones count as loose: the residual keeps every conjunct and
 * decides), when both a lower and an upper bound are found and both
 * columns are event-time columns of their edges (ltime, rtime); or, with
 * none, from an equi-key of two such columns (lo = hi = 0).  Else
 * the join is unbounded (op->bound says which).  lookup: as the spec's
 * (-1, or the input that is a table read as a lookup; no interval then).
 * NULL with err set as eng_op_join_new's. */
EngOp *eng_op_join_plan(const Plan *p, const EngEdgeTime *ltime, const EngEdgeTime *rtime,
                        int lookup, SlError *err);

#endif /* SLUICE_ENGINE_OP_JOIN_H */
