/*
 * op_dedup.h -- the dedup-within-watermark operator of the operator graph
 * (op_dedup.c; docs/engine-graph.md, "Dedup within the watermark"), Spark's
 * dropDuplicatesWithinWatermark.
 *
 *   eng_op_dedup_new   the first row of each key of an append-only input,
 *                      a key forgotten once the watermark passes its first
 *                      row's event time
 *
 * The columns handed in must outlive the operator (the plan's arena); the
 * key column numbers are copied.
 */
#ifndef SLUICE_ENGINE_OP_DEDUP_H
#define SLUICE_ENGINE_OP_DEDUP_H

#include "graph.h"

/* Over an input of columns cols (ncols) whose event-time columns are time
 * (NULL: none): keys[0..nkeys-1] the key's column numbers (at least one),
 * time_col the column whose value is a key's event time (-1: none; else
 * one of time's columns).  With a time column the bound is WATERMARK,
 * without one UNBOUNDED.  NULL with err set (22023) on a bad column
 * number or a time column that is not one of the input's event-time
 * columns. */
EngOp *eng_op_dedup_new(const ColumnDesc *cols, int ncols, const int *keys, int nkeys,
                        const EngEdgeTime *time, int time_col, SlError *err);

#endif /* SLUICE_ENGINE_OP_DEDUP_H */
