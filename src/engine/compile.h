/*
 * compile.h -- the rewriter: a batch-engine plan (plan.h) -> an operator
 * graph (graph.h).
 *
 *   eng_compile   the graph of a SELECT's plan, and which relation each of
 *                 its sources reads
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

#endif /* SLUICE_ENGINE_COMPILE_H */
