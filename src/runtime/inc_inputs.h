/*
 * inc_inputs.h -- the inputs of a continuous query: the streams it reads
 * (each a Source with its own offsets and watermark) and the tables it
 * joins, found by walking the part of the plan below its filter/project
 * chain (docs/engine.md, "Joins and UNION ALL").
 *
 *   inc_inputs_collect   walk the input tree: stream scans, table scans,
 *                        stream-table joins, UNION ALL of streams, and one
 *                        stream-stream join at the top (inc_join.c); refuse
 *                        the rest with a message that says what to do
 *   inc_inputs_add_stream  one stream scan as an input (the operator
 *                        graph's sources, inc_graph.c)
 *   inc_inputs_close     close the sources, drop the references
 *   inc_inputs_reads     does the query read relation oid?
 *   inc_inputs_time_watermarked
 *                        is column col of node n the watermark column of
 *                        every stream it comes from?
 *   inc_inputs_exec      the batch executor over the input tree, each
 *                        stream scan reading its batch range, each table
 *                        scan the table's current version, its expressions
 *                        with the plan's functions' answers (.hooks)
 *   inc_inputs_track     per input: rows read, min/max event time
 *
 * An input is one SCAN node of a stream: a stream read twice (a self
 * UNION ALL) is two inputs with their own offsets.  Input i reads
 * ranges[i] of an IncBatch: one range per partition of its source (Kafka's
 * partitions; one for internal and generated streams).
 */
#ifndef SLUICE_RUNTIME_INC_INPUTS_H
#define SLUICE_RUNTIME_INC_INPUTS_H

#include "sluice/exec.h"
#include "sluice/plan.h"
#include "source.h"

#define INC_MAX_INPUTS 8

typedef struct IncInput {
    const Plan        *scan;
    const CatRelation *rel;         /* referenced */
    Source            *source;
    int                wm_col;      /* stream column, -1: none */
    int64_t            wm_delay_us;
} IncInput;

typedef struct IncInputs {
    int                n;
    IncInput           in[INC_MAX_INPUTS];
    int                ntables;
    const CatRelation *tables[INC_MAX_INPUTS];  /* referenced */
    const char        *owner;       /* the query's name: a Kafka consumer's group */
    struct Runtime    *rt;          /* where its sources open (source_open) */
    const uint8_t     *need[INC_MAX_INPUTS];    /* per input: the stream columns the
                                                   query reads, NULL: all */
    const Plan        *sjoin;       /* the stream-stream join at the top, or NULL */
    int                sjoin_nleft; /* inputs 0 .. nleft-1 feed its left side */
    bool               shape_refused;   /* collect refused the tree's shape (a nested
                                           aggregate, DISTINCT or join, UNION, ...):
                                           the operator graph may run it */
} IncInputs;

/* What one batch read from its inputs. */
typedef struct IncInputsRun {
    const IncInputs *ins;
    StateStore      *st;
    const SourceOffsets *ranges;    /* per input i: ranges[i] */
    int64_t          rows;
    int64_t          min_event[INC_MAX_INPUTS];     /* INT64_MAX: none */
    int64_t          max_event[INC_MAX_INPUTS];     /* INT64_MIN: none */
    /* called with each batch of input i's rows (per-partition watermarks) */
    void           (*observe)(void *arg, int i, const Batch *b);
    void            *observe_arg;
    DeadLetters     *dead;      /* the records the readers could not decode */
    const ExFnHooks *hooks;     /* the functions' answers (the plan's), or NULL */
} IncInputsRun;

/* Adds scan (a SCAN of a stream) as the next input: its watermark from
 * the catalog, its source opened.  0, or -1 with err set. */
int  inc_inputs_add_stream(IncInputs *ins, Arena *a, const Plan *scan, StateStore *st,
                           SlError *err);
int  inc_inputs_collect(IncInputs *ins, Arena *a, Plan *base, struct Runtime *rt, StateStore *st,
                        const char *owner, SlError *err);
void inc_inputs_close(IncInputs *ins);
bool inc_inputs_reads(const IncInputs *ins, uint32_t oid);
bool inc_inputs_time_watermarked(const IncInputs *ins, const Plan *n, int col);
void inc_inputs_run_init(IncInputsRun *r, const IncInputs *ins, StateStore *st,
                         const SourceOffsets *ranges);
void inc_inputs_track(IncInputsRun *r, int i, const Batch *b);
/* The executor over base; its state lives in a.  NULL with err set. */
ExOp *inc_inputs_exec(IncInputsRun *r, Arena *a, const Plan *base, SlError *err);

#endif /* SLUICE_RUNTIME_INC_INPUTS_H */
