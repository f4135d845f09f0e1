/*
 * inc_graph.c -- the second body of an IncPlan: a continuous query whose
 * shape the fixed plan of incremental.c refuses (an aggregate over an
 * aggregate, a join over an aggregate, a subquery in FROM,
 * count(DISTINCT), UNION / INTERSECT / EXCEPT, several joins, window
 * functions and Top-N), or that reads an uncorrelated scalar subquery,
 * runs as an operator graph of src/engine/ (docs/engine.md, "Queries on
 * the operator graph"; docs/engine-graph.md).
 *
 *   inc_graph_build     the analyzed plan -> the graph (eng_compile_query, with its InitPlans),
 *                       each stream scan an input of the plan (IncInputs), and
 *                       each scan of a continuous query's result table
 *                       (its changelog, changelog.c)
 *   inc_graph_free
 *   inc_graph_run       one batch: the inputs' ranges read, late rows
 *                       dropped, the graph run, its output delta applied
 *                       to the result table (or, INTO a stream, its rows
 *                       appended), everything in the batch's one
 *                       StateBatch with the meta key
 *   inc_graph_ops       sys.state: one row per operator that keeps state,
 *                       its figures (EngOpVt stats) as the last committed
 *                       batch left them
 *   inc_graph_explain   EXPLAIN CONTINUOUS QUERY: one line per operator
 *   inc_graph_unbounded the operators whose state no bound limits (CREATE
 *                       warns)
 *
 * The result table.  The graph's output is a delta (rows with weights):
 * a row the result holds n times is n keys 'T' + oid + ex_key_encode(the
 * row's columns) + copy number (4 bytes, big-endian; 0 .. n-1), each the
 * row (tbl_put), so a table scan (SELECT, COPY, SUBSCRIBE's snapshot)
 * reads it unchanged.  n itself, per distinct row, is kept under 'G' +
 * oid + 0xFFFF (an operator id no graph gives) + the same ex_key_encode
 * (i64, big-endian; absent: 0): +w puts copies n .. n+w-1, -w deletes the
 * top w.  The batch's output is consolidated first, so a row is touched
 * once per batch, and every key lands in the batch's one write with the
 * operators' checkpoints and the meta key ('M' + oid, incremental.c's
 * layout: batch id, the query's and each input's watermark, the figures),
 * so recovery (cq.c) and its fault points apply unchanged.
 *
 * Append mode and INTO an internal stream: only for a graph none of whose
 * operators can retract a row it output (incremental.c, graph_retracting:
 * no aggregate, outer join, EXCEPT, window function or scalar subquery);
 * its rows are inserted into the
 * result table as above, or appended to the stream in the batch's write.
 *
 * Result tables as inputs.  A scan of a continuous query's relation is an
 * input like a stream's: its source reads the query's changelog
 * (changelog.c), each row with its weight in a last column, which becomes
 * the row's weight in the delta; no watermark.
 *
 * Watermarks.  Input i's watermark is its max event time less its delay
 * (the stream's WATERMARK), kept in the meta key; a row whose event time
 * is below the watermark the batch starts with is late: dropped before the
 * graph and counted (late_rows), as the fixed plan does; with the
 * late_rows option (a query of one stream) appended to that stream in the
 * batch's write.  The graph gets
 * each input's watermark after the batch's rows.
 */
#include "inc_int.h"

#include "engine/compile.h"
#include "sluice/bytes.h"
#include "sluice/deadletter.h"
#include "sluice/functions.h"
#include "sluice/memacct.h"
#include "sluice/rowcodec.h"

#include <errno.h>
#include <pthread.h>
#include <inttypes.h>
#include <string.h>
#include <time.h>

struct IncGraph {
    EngGraph    *g;
    /* per operator: its figures after the last committed batch (EngOpVt
     * stats, taken on the worker; sys.state reads them on the loop) */
    pthread_mutex_t stats_mu;
    EngOpStats  *stats;
    bool         restored;      /* memory matches the committed state */
    uint8_t      cprefix[ENG_PREFIX_LEN];  /* 'G' + oid + 0xFFFF: copies per row */
    SlError      build_err;     /* a source that failed to open (time_cb) */
    IncPlan     *p;
    bool         table;         /* a scan of a table was met */
};

static int64_t mono_us(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (int64_t)ts.tv_sec * 1000000 + ts.tv_nsec / 1000;
}

/* EngScanTimeFn: each stream scan the walk meets becomes the next input
 * (so source s of the graph is input s); its watermark column, when it
 * has one, is the source's event time, offset 0 (the watermarks passed
 * are already max event time less the delay). */
static void time_cb(void *arg, const Plan *scan, EngEdgeTime *out)
{
    IncGraph *ig = arg;
    IncPlan *p = ig->p;
    if (sl_error_set(&ig->build_err) || ig->table)
        return;
    /* A continuous query's result table is an input too: its changelog
     * (changelog.c), rows with weights. */
    if (scan->u.scan.rel == NULL ||
        (scan->u.scan.rel->kind != REL_STREAM && scan->u.scan.rel->kind != REL_QUERY)) {
        ig->table = true;
        return;
    }
    if (inc_inputs_add_stream(&p->ins, &p->arena, scan, p->st, &ig->build_err) < 0)
        return;
    const IncInput *in = &p->ins.in[p->ins.n - 1];
    if (in->wm_col >= 0) {
        out->n = 1;
        out->cols[0] = (EngTimeCol){in->wm_col, 0};
    }
}

int inc_graph_build(IncPlan *p, const Plan *plan, const InitPlan *init, int ninit,
                    SlError *err)
{
    IncGraph *ig = sl_calloc(1, sizeof(IncGraph));
    ig->p = p;
    pthread_mutex_init(&ig->stats_mu, NULL);
    p->graph = ig;
    p->ins.owner = p->query->name;
    p->ins.rt = p->shared != NULL ? p->shared->rt : NULL;
    const Plan **scans;
    int nscans;
    ig->g = eng_compile_query(plan, init, ninit, p->query->oid, &p->arena, time_cb, ig, &scans,
                              &nscans, err);
    if (sl_error_set(&ig->build_err)) {
        eng_graph_free(ig->g);
        ig->g = NULL;
        sl_error_move(err, &ig->build_err);
        return -1;
    }
    if (ig->g == NULL)
        return -1;
    /* output_mode 'append': every aggregate emits a group once, when the
     * watermark closes it */
    if (p->mode == MODE_APPEND && eng_graph_close_only(ig->g, err) < 0)
        return -1;
    if (ig->table) {
        sl_error(err, ERRCODE_FEATURE_NOT_SUPPORTED,
                 "a table in a continuous query on the operator graph is not supported yet");
        sl_error_hint(err, "Join a stream to the table in a query of the fixed shape (a "
                           "lookup join), or read the result table of a continuous query.");
        return -1;
    }
    if (p->ins.n == 0)
        return sl_error(err, ERRCODE_WRONG_OBJECT_TYPE,
                        "a continuous query reads a stream: this one reads none");
    /* One watermark per input: a watermark per partition (a partitioned
     * stream's, or one with idle_timeout, inc_watermark.c) is not kept for
     * the graph yet, and the max over partitions would make a lagging
     * partition's rows late. */
    for (int i = 0; i < p->ins.n; i++) {
        const IncInput *in = &p->ins.in[i];
        SourceParts parts;
        if (source_parts(in->rel, &parts, err) < 0)
            return -1;
        if (in->wm_col >= 0 && (parts.n > 1 || parts.idle_us > 0)) {
            sl_error(err, ERRCODE_FEATURE_NOT_SUPPORTED,
                     "a continuous query on the operator graph cannot read stream \"%s\" yet: "
                     "its watermark is kept per partition", in->rel->name);
            sl_error_hint(err, "Read a stream of one partition without idle_timeout, or "
                               "split the query so that the part the fixed plan runs reads it.");
            return -1;
        }
    }
    ig->cprefix[0] = 'G';
    put_be32(ig->cprefix + 1, p->query->oid);
    ig->cprefix[5] = 0xFF;
    ig->cprefix[6] = 0xFF;
    p->stream = p->ins.in[0].rel;
    p->source = p->ins.in[0].source;
    ig->stats = sl_calloc((size_t)ig->g->nops, sizeof(EngOpStats));
    return 0;
}

void inc_graph_free(IncGraph *ig)
{
    if (ig == NULL)
        return;
    if (ig->g != NULL)
        eng_graph_free(ig->g);
    sl_free(ig->stats);
    pthread_mutex_destroy(&ig->stats_mu);
    sl_error_clear(&ig->build_err);
    sl_free(ig);
}

/* --------------------------------------------------------------------- */
/* A batch                                                                */

typedef struct GraphRun {
    IncPlan  *p;
    IncBatch *b;
    Arena    *a;
    SlError  *err;
    EngDelta  out;              /* the output deltas of the batch, appended */
    bool      has_out;
} GraphRun;

static int out_cb(void *arg, const EngDelta *d, EngCtx *cx)
{
    SL_UNUSED(cx);
    GraphRun *gr = arg;
    if (!gr->has_out) {
        const EngOp *op = gr->p->graph->g->ops[gr->p->graph->g->output];
        eng_delta_init(&gr->out, gr->a, op->out_cols, op->out_ncols, d->rows.nrows);
        gr->has_out = true;
    }
    for (uint32_t i = 0; i < d->rows.nrows; i++)
        if (d->weights[i] != 0)
            eng_delta_append(&gr->out, gr->a, &d->rows, i, d->weights[i]);
    return 0;
}

/* Reads input i's range of the batch into one delta (weight 1 a row) in
 * a, dropping the rows below the watermark the batch starts with (late:
 * into *late when it is not NULL, late_rows); tracks the rows and the
 * event times.  0 or -1. */
static int read_input(GraphRun *gr, int i, const Meta *m, DeadLetters *dead, int64_t *max_event,
                      EngDelta *d, EngDelta *late)
{
    IncPlan *p = gr->p;
    IncBatch *b = gr->b;
    const IncInput *in = &p->ins.in[i];
    const Plan *scan = in->scan;
    eng_delta_init(d, gr->a, scan->cols, scan->ncols, 64);
    /* A result table's changelog: each row's weight in a last column. */
    bool weighted = in->rel->kind == REL_QUERY;
    bool judge = in->wm_col >= 0 && m->in_has_wm[i];
    int64_t wm = m->in_wm[i];
    SourceReader *reader = source_reader_open(in->source, &b->ranges[i]);
    source_reader_need(reader, p->ins.need[i]);     /* NULL: every column */
    Batch *rows;
    int n;
    while ((n = source_reader_next(reader, gr->a, &rows, gr->err)) > 0) {
        if (ex_check_memory(gr->err) < 0) {
            n = -1;
            break;
        }
        b->input_rows += n;
        const Vector *tv = in->wm_col >= 0 ? &rows->cols[in->wm_col] : NULL;
        for (uint32_t r = 0; r < rows->nrows; r++) {
            if (tv != NULL && !vector_is_null(tv, r)) {
                int64_t t = tv->v.i64[r];
                b->min_event_us = SL_MIN(b->min_event_us, t);
                b->max_event_us = SL_MAX(b->max_event_us, t);
                *max_event = SL_MAX(*max_event, t);
                if (judge && t < wm) {
                    b->late_rows++;
                    if (late != NULL)
                        eng_delta_append(late, gr->a, rows, r, 1);
                    continue;
                }
            }
            if (weighted) {
                Batch view = *rows;
                view.ncols = rows->ncols - 1;
                eng_delta_append(d, gr->a, &view, r, rows->cols[view.ncols].v.i64[r]);
            } else {
                eng_delta_append(d, gr->a, rows, r, 1);
            }
        }
    }
    if (source_reader_close(reader, dead, n < 0 ? NULL : gr->err) < 0 || n < 0)
        return -1;
    return 0;
}

static void record_change(IncBatch *b, char kind, const Batch *rows, uint32_t r)
{
    if (!b->want_changes)
        return;
    uint8_t h[5];
    h[0] = (uint8_t)kind;
    size_t at = b->changes.len;
    strbuf_append(&b->changes, h, sizeof(h));
    row_encode(rows, r, &b->changes);
    put_be32((uint8_t *)b->changes.data + at + 1, (uint32_t)(b->changes.len - at - 5));
}

/* The batch's output delta (consolidated) into the result table: copies
 * added or removed per row (the layout in the opening comment).  The
 * result rows' count is kept in *rows (meta's figures). */
static int apply_output(GraphRun *gr, StateBatch *wb, const EngDelta *d, int64_t *rows,
                        int64_t *bytes)
{
    IncPlan *p = gr->p;
    IncGraph *ig = p->graph;
    StrBuf rk, key, ck;
    strbuf_init(&rk);
    strbuf_init(&key);
    strbuf_init(&ck);
    int rc = 0;
    for (uint32_t r = 0; r < d->rows.nrows && rc == 0; r++) {
        int64_t w = d->weights[r];
        strbuf_reset(&rk);
        ex_key_encode(d->rows.cols, (int)d->rows.ncols, r, &rk);
        strbuf_reset(&ck);
        strbuf_append(&ck, ig->cprefix, sizeof(ig->cprefix));
        strbuf_append(&ck, rk.data, rk.len);
        void *v;
        size_t vlen;
        int got = state_get(p->st, ck.data, ck.len, gr->a, &v, &vlen, gr->err);
        if (got < 0) {
            rc = -1;
            break;
        }
        if (got == 1 && vlen != 8) {
            rc = sl_error(gr->err, ERRCODE_DATA_CORRUPTED,
                          "the result table of continuous query \"%s\" is corrupt",
                          p->query->name);
            break;
        }
        int64_t n = got == 1 ? (int64_t)get_be64(v) : 0;
        if (w < 0 && p->mode == MODE_APPEND) {
            rc = sl_error(gr->err, ERRCODE_INTERNAL_ERROR,
                          "continuous query \"%s\" in append mode retracted a row",
                          p->query->name);
            break;
        }
        if (w < 0 && -w > n) {
            rc = sl_error(gr->err, ERRCODE_INTERNAL_ERROR,
                          "continuous query \"%s\" retracted a row its result table does not "
                          "hold", p->query->name);
            break;
        }
        int64_t from = w > 0 ? n : n + w, to = w > 0 ? n + w : n;
        for (int64_t c = from; c < to; c++) {
            strbuf_reset(&key);
            strbuf_append(&key, p->tprefix, sizeof(p->tprefix));
            strbuf_append(&key, rk.data, rk.len);
            uint8_t cb[4];
            put_be32(cb, (uint32_t)c);
            strbuf_append(&key, cb, 4);
            if (w > 0) {
                tbl_put(wb, &key, &d->rows, r);
                record_change(gr->b, 'I', &d->rows, r);
            } else {
                tbl_delete(wb, &key);
                record_change(gr->b, 'D', &d->rows, r);
            }
        }
        gr->b->output_rows += w > 0 ? w : -w;
        *rows += w;
        if (n + w == 0) {
            state_batch_delete(wb, ck.data, ck.len);
            *bytes -= (int64_t)(ck.len + 8);
        } else {
            uint8_t nv[8];
            put_be64(nv, (uint64_t)(n + w));
            state_batch_put(wb, ck.data, ck.len, nv, 8);
            if (n == 0)
                *bytes += (int64_t)(ck.len + 8);
        }
    }
    strbuf_free(&rk);
    strbuf_free(&key);
    strbuf_free(&ck);
    return rc;
}

/* INTO a stream (a graph that never retracts, graph_retracting in
 * incremental.c): each row of the consolidated output d as many times as
 * its weight, into *rows (in the batch's arena).  A retraction here is a
 * bug: XX000. */
static int into_rows(GraphRun *gr, const EngDelta *d, EngDelta *rows)
{
    eng_delta_init(rows, gr->a, gr->p->graph->g->ops[gr->p->graph->g->output]->out_cols,
                   (int)d->rows.ncols, d->rows.nrows);
    for (uint32_t r = 0; r < d->rows.nrows; r++) {
        if (d->weights[r] < 0)
            return sl_error(gr->err, ERRCODE_INTERNAL_ERROR,
                            "continuous query \"%s\" retracted a row it wrote INTO stream "
                            "\"%s\"", gr->p->query->name, gr->p->into->name);
        for (int64_t k = 0; k < d->weights[r]; k++) {
            eng_delta_append(rows, gr->a, &d->rows, r, 1);
            record_change(gr->b, 'I', &d->rows, r);
        }
    }
    gr->b->output_rows += rows->rows.nrows;
    return 0;
}

/* The operators' figures, summed (sys.query_progress's state rows), and
 * each one's kept for sys.state. */
static void graph_stats(IncGraph *ig, EngOpStats *sum)
{
    *sum = (EngOpStats){0};
    pthread_mutex_lock(&ig->stats_mu);
    for (int i = 0; i < ig->g->nops; i++) {
        const EngOp *op = ig->g->ops[i];
        EngOpStats s = {0};
        if (op->vt->stats != NULL)
            op->vt->stats(op, &s);
        ig->stats[i] = s;
        sum->rows += s.rows;
        sum->bytes += s.bytes;
        sum->evicted += s.evicted;
    }
    pthread_mutex_unlock(&ig->stats_mu);
}

int inc_graph_run(IncPlan *p, IncBatch *b, SlError *err)
{
    IncGraph *ig = p->graph;
    Arena a = p->batch_arena;
    StateBatch *wb = state_batch_new();
    state_batch_set_account(wb, sl_mem_account_current());
    arena_set_account(&a, sl_mem_account_current());
    DeadLetters dead = {0};
    GraphRun gr;
    memset(&gr, 0, sizeof(gr));
    gr.p = p;
    gr.b = b;
    gr.a = &a;
    gr.err = err;
    EvalCtx ecx = {0};
    ecx.arena = &a;
    ecx.err = err;
    ecx.hooks = &p->hooks;
    EngCtx cx = {&a, err, &ecx, p->st, wb, b->batch_id, b->now_us, 0};
    b->min_event_us = INT64_MAX;
    b->max_event_us = INT64_MIN;
    b->wake_at_us = INT64_MAX;
    int rc = -1;
    Meta meta;
    int64_t t0 = mono_us(), tr = 0;
    if (inc_meta_read(p, &a, &meta, err) < 0 || inc_check_fingerprint(p, &meta, err) < 0)
        goto out;
    if (!ig->restored) {
        if (eng_graph_restore(ig->g, &cx) < 0)
            goto out;
        ig->restored = true;
    }
    int ns = ig->g->nsources;
    EngDelta *deltas = ARENA_ARRAY(&a, EngDelta, ns);
    const EngDelta **dp = ARENA_ARRAY(&a, const EngDelta *, ns);
    bool *has_wm = ARENA_ARRAY(&a, bool, ns);
    int64_t *wm = ARENA_ARRAY(&a, int64_t, ns);
    int64_t max_event[INC_MAX_INPUTS];
    int64_t t1 = mono_us();
    EngDelta late;              /* late_rows (one input): the late rows */
    if (p->late != NULL)
        eng_delta_init(&late, &a, p->ins.in[0].scan->cols, p->ins.in[0].scan->ncols, 16);
    for (int i = 0; i < ns; i++) {
        max_event[i] = INT64_MIN;
        if (read_input(&gr, i, &meta, &dead, &max_event[i], &deltas[i],
                       p->late != NULL ? &late : NULL) < 0)
            goto out;
        dp[i] = &deltas[i];
    }
    tr = mono_us() - t1;
    SLUICE_FAULT("batch_middle");     /* input read, nothing run */
    b->next_has_watermark = b->has_watermark;
    b->next_watermark_us = b->watermark_us;
    inc_next_watermark(p, b, &meta, max_event);
    for (int i = 0; i < ns; i++) {
        has_wm[i] = p->ins.in[i].wm_col >= 0 && meta.in_has_wm[i];
        wm[i] = meta.in_wm[i];
    }
    if (eng_graph_run(ig->g, &cx, dp, has_wm, wm, out_cb, &gr) < 0)
        goto out;
    int64_t result_rows = meta.op[INC_OP_JOIN].rows, result_bytes = meta.op[INC_OP_JOIN].bytes;
    EngDelta into;              /* INTO a stream: the rows appended */
    bool has_into = false;
    if (gr.has_out) {
        EngDelta c;
        eng_delta_consolidate(&gr.out, &a, &c);
        if (p->into != NULL) {
            if (into_rows(&gr, &c, &into) < 0)
                goto out;
            has_into = into.rows.nrows > 0;
        } else if (apply_output(&gr, wb, &c, &result_rows, &result_bytes) < 0) {
            goto out;
        }
    }
    /* The figures: the operators' state under INC_OP_GROUPS, the result
     * table's copy counts under INC_OP_JOIN (their rows: the result's). */
    EngOpStats st;
    graph_stats(ig, &st);
    /* (an operator's count restarts at its restore: never below 0) */
    b->evicted_rows = SL_MAX(st.evicted - meta.op[INC_OP_GROUPS].evicted, 0);
    meta.op[INC_OP_GROUPS] = (OpStat){st.rows, st.bytes, st.evicted};
    meta.op[INC_OP_JOIN] = (OpStat){result_rows, result_bytes, 0};
    meta.state_rows = st.rows;
    meta.has_ops = true;
    meta.batch_id = b->batch_id;
    meta.has_wm = b->next_has_watermark;
    meta.wm = b->next_watermark_us;
    b->state_rows = st.rows;
    b->state_bytes = st.bytes;
    inc_meta_write(p, wb, &meta);
    if (b->log_len > 0) {
        uint8_t lkey[6];
        memcpy(lkey, p->meta_key, 5);
        lkey[5] = 'L';
        state_batch_put(wb, lkey, sizeof(lkey), b->log_entry, b->log_len);
    }
    b->execute_us = mono_us() - t0 - tr;
    b->read_us = tr;
    state_batch_charge(wb);
    if (ex_check_memory(err) < 0)
        goto out;
    /* No sink: the result table is in the state's write (the points are
     * kept so the fault harness steps through the same ones). */
    if (changelog_write(p->st, p->query, b, wb, err) < 0)
        goto out;
    SLUICE_FAULT("batch_before_sink_commit");
    SLUICE_FAULT("batch_after_sink_commit");
    SLUICE_FAULT("batch_before_state_commit");
    int64_t tw = mono_us();
    if (SLUICE_FAULT_FAILS("batch_state_commit")) {
        sl_error(err, ERRCODE_IO_ERROR, "state store: write: %s (fault point batch_state_commit)",
                 strerror(errno));
        goto out;
    }
    /* INTO and late_rows: their chunks in the same write as the state. */
    const Batch *outs[1] = {has_into ? &into.rows : NULL};
    const Batch *lates[1] = {p->late != NULL ? &late.rows : NULL};
    StreamAppend apps[2];
    int napps = 0;
    if (has_into)
        apps[napps++] = (StreamAppend){p->into, outs, 1, NULL, 0};
    if (p->late != NULL && late.rows.nrows > 0)
        apps[napps++] = (StreamAppend){p->late, lates, 1, NULL, 0};
    if (dead_letters_append(p->st, &p->shared->dead_mu, &dead, apps, napps, wb, err) < 0)
        goto out;
    b->write_us = mono_us() - tw;
    SLUICE_FAULT("batch_after_state_commit");
    rc = 0;
out:
    if (rc < 0)
        ig->restored = false;   /* the operators' memory may hold the failed batch */
    state_batch_free(wb);
    dead_letters_free(&dead);
    arena_rewind(&a, INC_KEEP_BATCH);
    arena_set_account(&a, NULL);
    p->batch_arena = a;
    return rc;
}

/* --------------------------------------------------------------------- */
/* sys.state and EXPLAIN                                                  */

int inc_graph_ops(IncPlan *p, IncOpState *out, int max)
{
    IncGraph *ig = p->graph;
    int n = 0;
    pthread_mutex_lock(&ig->stats_mu);
    for (int i = 0; i < ig->g->nops && n < max; i++) {
        const EngOp *op = ig->g->ops[i];
        if (op->bound == ENG_BOUND_NONE || op->vt->stats == NULL)
            continue;
        out[n++] = (IncOpState){
            .op = op->vt->kind,
            .rows = ig->stats[i].rows,
            .bytes = ig->stats[i].bytes,
            .evicted = ig->stats[i].evicted,
            .disk_bytes = state_prefix_disk_bytes(p->st, op->prefix, sizeof(op->prefix)),
        };
    }
    pthread_mutex_unlock(&ig->stats_mu);
    return n;
}

void inc_graph_explain(IncPlan *p, Arena *a, List **lines)
{
    IncGraph *ig = p->graph;
    if (p->into != NULL)
        *lines = list_append(a, *lines,
                             arena_printf(a, "Sink: INTO stream %s (appended with the state, "
                                             "exactly once; no operator retracts)",
                                          p->into->name));
    else
        *lines = list_append(a, *lines,
                             arena_printf(a, "Sink: result table %s (keyed by the row and a "
                                             "copy number%s)", p->query->name,
                                          p->mode == MODE_APPEND
                                              ? "; no operator retracts"
                                              : ": the output carries retractions"));
    *lines = list_append(a, *lines,
                         arena_printf(a, "Output mode: %s",
                                      p->mode == MODE_COMPLETE ? "complete"
                                      : p->mode == MODE_APPEND ? "append"
                                                               : "update"));
    *lines = list_append(a, *lines, arena_printf(a, "Operator graph: %d operators, output op %d",
                                                 ig->g->nops, ig->g->output));
    StrBuf sb;
    strbuf_init(&sb);
    /* From the output down, each operator with its inputs. */
    for (int i = ig->g->nops - 1; i >= 0; i--) {
        const EngOp *op = ig->g->ops[i];
        strbuf_reset(&sb);
        if (op->vt->explain != NULL)
            op->vt->explain(op, &sb);
        else
            strbuf_puts(&sb, op->vt->kind);
        strbuf_printf(&sb, " [op %d, from", i);
        for (int e = 0; e < ig->g->nedges; e++) {
            const EngEdge *ed = &ig->g->edges[e];
            if (ed->consumer != i)
                continue;
            if (ed->producer >= 0)
                strbuf_printf(&sb, " op %d", ed->producer);
            else
                strbuf_printf(&sb, " %s %s",
                              p->ins.in[-1 - ed->producer].rel->kind == REL_QUERY ? "query"
                                                                                 : "stream",
                              p->ins.in[-1 - ed->producer].rel->name);
            strbuf_putc(&sb, ',');
        }
        sb.data[sb.len - 1] = ']';
        *lines = list_append(a, *lines, arena_printf(a, "  %.*s", (int)sb.len, sb.data));
    }
    for (int i = 0; i < p->ins.n; i++) {
        const IncInput *in = &p->ins.in[i];
        if (in->rel->kind == REL_QUERY)
            *lines = list_append(a, *lines,
                                 arena_printf(a, "  Source: continuous query %s, its changelog "
                                                 "(a snapshot of its result table, then each "
                                                 "committed batch's changes, exactly once)",
                                              in->rel->name));
        else if (in->wm_col >= 0)
            *lines = list_append(a, *lines,
                                 arena_printf(a, "  Source: stream %s, watermark max(%s) - %" PRId64
                                                 " us; rows below it dropped (late)",
                                              in->rel->name, in->rel->cols[in->wm_col].name,
                                              in->wm_delay_us));
        else
            *lines = list_append(a, *lines,
                                 arena_printf(a, "  Source: stream %s, no watermark",
                                              in->rel->name));
    }
    strbuf_free(&sb);
}

const char *inc_graph_unbounded(IncPlan *p, Arena *a)
{
    IncGraph *ig = p->graph;
    StrBuf sb;
    strbuf_init(&sb);
    for (int i = 0; i < ig->g->nops; i++) {
        const EngOp *op = ig->g->ops[i];
        if (op->bound != ENG_BOUND_UNBOUNDED)
            continue;
        strbuf_printf(&sb, "%s%s (op %d)", sb.len > 0 ? ", " : "", op->vt->kind, i);
    }
    const char *r = sb.len > 0 ? arena_strndup(a, sb.data, sb.len) : NULL;
    strbuf_free(&sb);
    return r;
}
