/*
 * ops.h -- the constructors of the operators of this folder, one per file
 * (op_<kind>.c), and what they are built from.
 *
 *   eng_op_filter_new      the rows whose condition is true (op_filter.c)
 *   eng_op_project_new     one expression per output column (op_project.c)
 *   eng_op_aggregate_new   grouped aggregates over retractions, optionally
 *                          per tumbling or sliding window (op_aggregate.c)
 *   eng_op_session_new     each row tagged with its session window, over
 *                          retractions (op_session.c)
 *
 * Expressions are the analyzer's (expr.h), over the input's columns; the
 * operator keeps pointers to them and to the column descriptions, so
 * whoever built them (a plan's arena) keeps them as long as the graph.
 */
#ifndef SLUICE_ENGINE_OPS_H
#define SLUICE_ENGINE_OPS_H

#include "graph.h"
#include "sluice/plan.h"

/* time: the input's event-time columns (NULL: none); the filter's output
 * has the same, the project's those of its output columns that are bare
 * references to them (op->out_time).  Both forward the input's watermark
 * when their output has a time column. */
EngOp *eng_op_filter_new(const ColumnDesc *cols, int ncols, const Expr *cond,
                         const EngEdgeTime *time);
EngOp *eng_op_project_new(const ColumnDesc *in, int nin, const ColumnDesc *out, int nout,
                          Expr *const *exprs, const EngEdgeTime *in_time);

/* An aggregate: group keys, then window_start and window_end when the
 * window is a tumbling or sliding one, then one column per call (plan.h's
 * Aggregate node, whose fields these are). */
typedef struct EngAggSpec {
    int            ngroups;
    Expr *const   *groups;
    int            naggs;
    const AggCall *aggs;
    WindowSpec     window;      /* WINDOW_NONE, WINDOW_TUMBLE or WINDOW_SLIDE */
    bool           inserts_only;    /* the input never retracts (a stream's rows):
                                     * min and max keep their extreme only */
} EngAggSpec;

/* in_time: the input's event-time columns (NULL: none); a group key that
 * is one, and window_start/window_end of a window over one, are the
 * output's (op->out_time), and the groups they close are evicted as the
 * watermark passes (op_aggregate.c).  NULL with err set (0A000) when a
 * call or the window cannot be kept exactly over retractions (say which). */
EngOp *eng_op_aggregate_new(const ColumnDesc *in, int nin, const ColumnDesc *out, int nout,
                            const EngAggSpec *spec, const EngEdgeTime *in_time, SlError *err);

/* The session operator: its output is the input's columns, then
 * window_start and window_end (time's type) of the row's session by the
 * group values (SESSION(time, gap_us) of the batch engine); rows whose
 * session changes are retracted with the old one and inserted with the
 * new.  When time is a bare input time column (in_time), window_end is
 * the output's time column and the sessions the watermark closes are
 * evicted.  NULL with err set when time is not a timestamp or the gap is
 * not positive. */
EngOp *eng_op_session_new(const ColumnDesc *in, int nin, Expr *const *groups, int ngroups,
                          const Expr *time, int64_t gap_us, const EngEdgeTime *in_time,
                          SlError *err);

#endif /* SLUICE_ENGINE_OPS_H */
