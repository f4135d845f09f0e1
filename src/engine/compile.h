/*
 * compile.h -- the rewriter: a batch-engine plan (plan.h) -> an operator
 * graph (graph.h).
 *
 *   eng_compile       the graph of a SELECT's plan, and which relation
 *                     each of its sources reads
 *   eng_compile_time  the same, each source's event-time column given by
 *                     the caller (EngScanTimeFn), carried through the graph
 *   eng_compile_query the same for a plan whose expressions read the
 *                     query's InitPlans (uncorrelated scalar subqueries)
 *   eng_plan_inserts_only  whether a plan's rows are only ever inserted
 */
#ifndef SLUICE_ENGINE_COMPILE_H
#define SLUICE_ENGINE_COMPILE_H

#include "graph.h"
#include "sluice/plan.h"

/* The graph of plan for query oid: each SCAN is a source (numbered in the
 * order the walk meets them, left to right; (*scans)[s] is source s's
 * SCAN node, the array in a), FILTER, PROJECT, AGG (no window, or a
 * tumbling one) and JOIN their operators, nested to any depth.  Anything else is
 * refused: NULL with err set (0A000, naming the node or the expression).
 * The graph points into plan's expressions and columns: the plan's arena
 * must outlive it. */
EngGraph *eng_compile(const Plan *plan, uint32_t query_oid, Arena *a, const Plan ***scans,
                      int *nscans, SlError *err);

/* The event-time columns of the source that reads scan (a PLAN_SCAN
 * node): *out is zeroed before the call; a source with a watermark sets
 * out->n = 1 and out->cols[0] = {the column's index among the scan's
 * columns, offset}.  The offset says what the watermarks the caller will
 * pass eng_graph_run for that source mean: 0 when they are already the
 * stream's max event time less its watermark_delay_us (as
 * src/runtime/incremental.c computes them), -watermark_delay_us when they
 * are the max event time itself.  A table has none. */
typedef void (*EngScanTimeFn)(void *arg, const Plan *scan, EngEdgeTime *out);

/* eng_compile, the sources' edges timed by time_fn (NULL: none has a
 * watermark, as eng_compile): filters and projects carry the time columns
 * and forward the watermarks (ops.h), and the joins, distincts and set
 * operations get their inputs' real EngEdgeTime (an interval join over
 * two streams' time columns evicts by watermark). */
EngGraph *eng_compile_time(const Plan *plan, uint32_t query_oid, Arena *a,
                           EngScanTimeFn time_fn, void *time_arg, const Plan ***scans,
                           int *nscans, SlError *err);

/* eng_compile_time for a query whose expressions read InitPlans (init,
 * ninit: the analyzed Query's init and ninit; plan.h): an uncorrelated
 * scalar subquery in a FILTER's condition or a PROJECT's expressions whose
 * plan always has exactly one row (an aggregate without GROUP BY, under
 * projections) is compiled as a cross join of the node's input with the
 * subquery's own subgraph (its sources numbered after the input's); any
 * other subquery in an expression is refused (0A000).  eng_compile_time
 * is this without InitPlans. */
EngGraph *eng_compile_query(const Plan *plan, const InitPlan *init, int ninit,
                            uint32_t query_oid, Arena *a, EngScanTimeFn time_fn, void *time_arg,
                            const Plan ***scans, int *nscans, SlError *err);

/* Whether p's rows are a stream's, only ever inserted: a SCAN of a stream
 * under FILTERs and PROJECTs (what the aggregate's min/max and the join's
 * rows keep less for). */
bool eng_plan_inserts_only(const Plan *p);

#endif /* SLUICE_ENGINE_COMPILE_H */
