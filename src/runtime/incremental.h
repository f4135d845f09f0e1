/*
 * incremental.h -- the incremental plan of a continuous query and the work
 * of one micro-batch (docs/engine.md, "A micro-batch").
 *
 *   inc_plan_build    the query's SELECT -> an incremental plan, or a
 *                     refusal that says what to add
 *   inc_plan_free
 *   inc_batch_run     run batch N: read the source range, update state,
 *                     emit by output mode, and fill one StateBatch with the
 *                     state changes, the output rows and the batch id
 *   inc_state_meta    the batch id stored with the state (-1: none) and
 *                     the watermark after it
 *
 * inc_batch_run runs on a worker thread; at most one per plan at a time.
 */
#ifndef SLUICE_RUNTIME_INCREMENTAL_H
#define SLUICE_RUNTIME_INCREMENTAL_H

#include "sluice/catalog.h"
#include "sluice/state.h"
#include "sluice/strbuf.h"
#include "inc_inputs.h"
#include "source.h"

typedef struct IncPlan IncPlan;

/* What batch N reads and what it produced. */
typedef struct IncBatch {
    int64_t batch_id;
    int64_t from[INC_MAX_INPUTS];   /* per input: source offsets [from, to) */
    int64_t to[INC_MAX_INPUTS];
    bool    has_watermark;      /* the watermark the batch is judged by */
    int64_t watermark_us;
    /* results */
    bool    next_has_watermark; /* the watermark after the batch */
    int64_t next_watermark_us;
    int64_t input_rows;
    int64_t output_rows;
    int64_t late_rows;
    int64_t state_rows;
    int64_t min_event_us, max_event_us;
    /* SUBSCRIBE: with want_changes, the batch's changes of the result, one
     * record each: kind ('I' insert, 'U' update, 'D' delete: the row it
     * had), u32 length, the row
     * (row_encode, the query's result columns); on the heap, the caller's
     * to free (strbuf_free) */
    bool    want_changes;
    StrBuf  changes;
} IncBatch;

int  inc_plan_build(const CatRelation *query, Catalog *cat, StateStore *st, IncPlan **out,
                    SlError *err);
void inc_plan_free(IncPlan *p);
/* The inputs the plan reads (streams, each with its own offsets), input
 * i's source and stream, and whether the plan reads (or joins) relation oid. */
int     inc_plan_ninputs(IncPlan *p);
Source *inc_plan_source(IncPlan *p, int i);
const CatRelation *inc_plan_stream(IncPlan *p, int i);
bool    inc_plan_reads(IncPlan *p, uint32_t oid);
/* The stream INTO writes to, or NULL. */
const CatRelation *inc_plan_into(IncPlan *p);
int  inc_batch_run(IncPlan *p, IncBatch *b, SlError *err);
int  inc_state_meta(IncPlan *p, int64_t *batch_id, bool *has_watermark,
                    int64_t *watermark_us, SlError *err);

#endif /* SLUICE_RUNTIME_INCREMENTAL_H */
