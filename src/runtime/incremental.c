/*
 * incremental.c -- the incremental plan of a continuous query and the body
 * of one micro-batch (see incremental.h, docs/engine.md).
 *
 *   inc_plan_build, inc_plan_build_new, inc_plan_set_fn_hooks, inc_plan_free
 *   inc_plan_retracts
 *   inc_plan_ninputs, inc_plan_source, inc_plan_stream, inc_plan_reads,
 *   inc_plan_reads_as_owner,
 *   inc_plan_into, inc_plan_sink_stats, inc_plan_late, inc_plan_idle_wakes, inc_plan_sink_outside,
 *   inc_plan_keeps_rows, inc_plan_lost_rows, inc_plan_result_hash
 *   inc_batch_run, inc_state_meta, inc_state_rows, inc_state_ops, inc_state_log_entry,
 *   inc_state_oldest_window, inc_state_delete, inc_state_put_bytes
 *   inc_meta_read, inc_meta_write, inc_check_fingerprint, inc_next_watermark
 *                 (the meta key and the watermarks, shared with inc_graph.c)
 *   inc_emit_groups, inc_emit_deletes (a keyed Kafka sink's tombstones for
 *   sessions whose row left it), inc_sink_key_window
 *
 * A batch that rewrites the result table (result_stale) writes under
 * cq_layout_write_begin / _end, so that scans see all of it or none.
 *
 * The rewriter accepts, over one stream:
 *   [FILTER | PROJECT]* over SCAN                      stateless, append
 *   [FILTER | PROJECT]* over AGG over [FILTER | PROJECT]* over SCAN
 *                                 grouped, optionally by WINDOW(ts, size[, slide])
 * and refuses everything else at CREATE with a message that says why --
 * except a refusal of the plan's shape (refuse_shape: a nested aggregate,
 * DISTINCT or join, UNION, DISTINCT aggregates, ...), after which the plan
 * runs as an operator graph (graph_build, inc_graph.c; docs/engine.md,
 * "Queries on the operator graph").
 *
 * A batch streams the source range through the lower chain (vectorized
 * ex_eval), assigns rows to windows, drops late rows, and folds them into
 * aggregate states kept in a hash table for the batch, loaded from RocksDB
 * on first touch ('Q' key space) -- so a key touched a thousand times in a
 * batch costs one read and one write.  Emission by output mode: update and
 * complete write every touched group to the result table; append writes a
 * window's rows once the watermark passes its end and deletes its state.
 * The state, the result rows and the batch meta ('M' key) go to RocksDB in
 * one synced WriteBatch.  The batch's arenas and that write's bytes are
 * charged to the calling thread's memory account (cq.c: the query's
 * batch_memory), checked after each input chunk and before the sink and
 * the write: past it the batch ends with 53200 and commits nothing.
 *
 * Keys: a group's key is its window end (8 bytes, ordered) then its group
 * values (ex_key_encode); the result table of an aggregation is keyed the
 * same way, so a group's row is overwritten in place.  A stateless query's
 * result table is an append log of chunks keyed by (batch id, chunk
 * number) (relstore.h, result_log_add).
 */
#include "inc_int.h"
#include "sink.h"

#include "sluice/bytes.h"
#include "sluice/cq.h"
#include "sluice/exec.h"
#include "sluice/log.h"
#include "sluice/memacct.h"
#include "sluice/options.h"
#include "sluice/plan.h"
#include "sluice/relstore.h"
#include "sluice/rowcodec.h"
#include "sluice/runtime.h"

#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

void inc_time_key_put(uint8_t *p, int64_t t)
{
    put_be64(p, (uint64_t)t ^ 0x8000000000000000ull);
}

int64_t inc_time_key_get(const uint8_t *p)
{
    return (int64_t)(get_be64(p) ^ 0x8000000000000000ull);
}

/* ---------------------------------------------------------------------- */
/* Building: cut the plan and check that it can run incrementally          */

static int refuse(SlError *err, const char *msg, const char *hint)
{
    sl_error(err, ERRCODE_FEATURE_NOT_SUPPORTED, "%s", msg);
    if (hint)
        sl_error_hint(err, "%s", hint);
    return -1;
}

/* A refusal of the plan's shape, which the operator graph may run
 * instead (plan_build falls back to inc_graph.c). */
static int refuse_shape(IncPlan *p, SlError *err, const char *msg, const char *hint)
{
    p->shape_refused = true;
    return refuse(err, msg, hint);
}

static const CatRelation *lookup_cb(void *ctx, const char *name)
{
    return cat_lookup(ctx, name);
}

/* Follows column col of the node chain[0] down chain[0 .. n): the column
 * of the node below the chain it is, or -1 if it is computed.  Over the
 * lower chain that is a stream column; over the upper chain, an aggregate
 * column. */
static int trace_column(Plan *const *chain, int n, int col)
{
    for (int i = 0; i < n; i++) {
        if (chain[i]->kind == PLAN_PROJECT) {
            Expr *e = chain[i]->u.project.exprs[col];
            if (e->kind != EXPR_COLUMN)
                return -1;
            col = e->index;
        }
    }
    return col;
}

int inc_trace_column(IncPlan *p, int i, int col)
{
    return trace_column(p->lower + i, p->nlower - i, col);
}

static int read_mode(IncPlan *p, SlError *err)
{
    Options o;
    if (opts_parse(&p->arena, p->query->options, &o, err) < 0)
        return -1;
    if (opts_get_interval_us(&o, "state_ttl", 0, &p->ttl_us, err) < 0)
        return -1;
    if (p->ttl_us < 0)
        return sl_error(err, ERRCODE_INVALID_PARAMETER_VALUE, "state_ttl must not be negative");
    const char *mode = opts_get(&o, "output_mode");
    p->mode = p->agg ? MODE_UPDATE : MODE_APPEND;
    if (mode == NULL)
        return 0;
    if (strcmp(mode, "append") == 0)
        p->mode = MODE_APPEND;
    else if (strcmp(mode, "update") == 0)
        p->mode = MODE_UPDATE;
    else if (strcmp(mode, "complete") == 0)
        p->mode = MODE_COMPLETE;
    else {
        sl_error(err, ERRCODE_INVALID_PARAMETER_VALUE, "invalid output_mode \"%s\"", mode);
        sl_error_hint(err, "Use 'append', 'update' or 'complete'.");
        return -1;
    }
    return 0;
}

/* One stream: its watermark (read by inc_inputs_collect) is the plan's;
 * several: each input's, in p->ins. */
static int read_watermark(IncPlan *p, SlError *err)
{
    SL_UNUSED(err);
    p->wm_col = p->plain ? p->ins.in[0].wm_col : -1;
    p->wm_delay_us = p->plain ? p->ins.in[0].wm_delay_us : 0;
    return 0;
}

/* Cuts the plan: upper chain, aggregate, lower chain, scan. */
static int decompose(IncPlan *p, Plan *top, SlError *err)
{
    Plan *n = top;
    while (n->kind == PLAN_FILTER || n->kind == PLAN_PROJECT || n->kind == PLAN_SORT) {
        if (p->nupper == MAX_CHAIN)
            return refuse_shape(p, err, "the query is too deeply nested to run incrementally",
                                NULL);
        p->upper[p->nupper++] = n;
        n = n->child;
    }
    if (n->kind == PLAN_AGG || n->kind == PLAN_DISTINCT) {
        if (n->kind == PLAN_AGG)
            p->agg = n;
        else
            p->distinct = n;
        n = n->child;
        /* DISTINCT ON sorts by its keys first; on a stream the first row of
         * a key is the first to arrive, so a sort by the keys alone goes. */
        if (p->distinct != NULL && n->kind == PLAN_SORT) {
            if (n->u.sort.nkeys != p->distinct->u.distinct.nkeys)
                return refuse(err, "DISTINCT ON with ORDER BY on a stream cannot run "
                                   "incrementally",
                              "On a stream the row kept for a key is the first to arrive; "
                              "drop the ORDER BY.");
            n = n->child;
        }
        while (n->kind == PLAN_FILTER || n->kind == PLAN_PROJECT) {
            if (p->nlower == MAX_CHAIN)
                return refuse_shape(p, err, "the query is too deeply nested to run "
                                            "incrementally", NULL);
            p->lower[p->nlower++] = n;
            n = n->child;
        }
    }
    /* The input tree (refusing what cannot run incrementally). */
    if (inc_inputs_collect(&p->ins, &p->arena, n, p->shared != NULL ? p->shared->rt : NULL,
                           p->st, p->query->name, err) < 0)
        return -1;
    p->inputs = n;
    p->plain = n->kind == PLAN_SCAN;
    if (p->agg == NULL && p->distinct == NULL) {
        /* The scan sits under the upper chain: treat it as the lower one. */
        memcpy(p->lower, p->upper, sizeof(Plan *) * (size_t)p->nupper);
        p->nlower = p->nupper;
        p->nupper = 0;
    }
    p->stream = p->ins.in[0].rel;
    p->source = p->ins.in[0].source;
    return 0;
}

static int check(IncPlan *p, SlError *err)
{
    for (int i = 0; i < p->nupper + p->nlower; i++) {
        Plan *n = i < p->nupper ? p->upper[i] : p->lower[i - p->nupper];
        if (n->kind == PLAN_SORT && (p->agg == NULL || p->mode != MODE_COMPLETE))
            return refuse(err, "ORDER BY on a stream cannot run incrementally",
                          "ORDER BY is allowed on an aggregation in complete mode; or "
                          "read the result table with ORDER BY.");
    }
    if (p->agg == NULL) {
        if (p->mode == MODE_COMPLETE)
            return refuse(err, "complete output mode needs an aggregation",
                          "Use output_mode = 'append'.");
        if (p->distinct != NULL)
            return inc_dedup_check(p, err);
        if (p->ttl_us > 0)
            return refuse(err, "state_ttl needs state: this query keeps none",
                          "state_ttl applies to aggregations without a window and to DISTINCT.");
        return 0;
    }
    const WindowSpec *w = &p->agg->u.agg.window;
    p->wkind = w->kind;
    p->size_us = w->size_us;
    p->slide_us = w->kind == WINDOW_SLIDE ? w->slide_us : w->size_us;
    p->gap_us = w->gap_us;
    if (w->kind == WINDOW_TUMBLE || w->kind == WINDOW_SLIDE) {
        /* Slices: gcd(size, slide) wide. */
        int64_t x = p->size_us, y = p->slide_us;
        while (y != 0) {
            int64_t t = x % y;
            x = y;
            y = t;
        }
        p->pane_us = x;
    }
    if (w->kind != WINDOW_NONE && p->ttl_us > 0)
        return refuse(err, "state_ttl does not apply to windowed aggregations",
                      "The watermark evicts a window's state in append mode; state_ttl is for "
                      "aggregations without a window and for DISTINCT.");
    for (int i = 0; i < p->agg->u.agg.naggs; i++) {
        if (p->agg->u.agg.aggs[i].distinct)
            return refuse_shape(p, err, "aggregates with DISTINCT in continuous queries are not "
                                        "supported yet", NULL);
        if (p->agg->u.agg.aggs[i].norder > 0)
            return refuse_shape(p, err, "aggregates with ORDER BY in continuous queries are not "
                                        "supported yet", NULL);
        AggId id = p->agg->u.agg.aggs[i].sig->id;
        if (id == AGG_JSONB_AGG || id == AGG_JSONB_OBJECT_AGG)
            return refuse_shape(p, err, "jsonb_agg and jsonb_object_agg in continuous queries "
                                        "are not supported yet", NULL);
    }
    if (p->mode == MODE_APPEND) {
        if (w->kind == WINDOW_NONE)
            return refuse(err, "an aggregation in append mode needs an event-time window",
                          "Group by WINDOW(ts, size) over a column with a WATERMARK, or use "
                          "output_mode = 'update' or 'complete'.");
        if (!p->plain) {
            if (w->time->kind != EXPR_COLUMN ||
                !inc_inputs_time_watermarked(&p->ins, p->agg->child, w->time->index)) {
                sl_error(err, ERRCODE_FEATURE_NOT_SUPPORTED,
                         "an aggregation in append mode needs a watermark on the window's "
                         "time column of every stream it reads");
                sl_error_hint(err, "Declare WATERMARK FOR ts AS ts - INTERVAL '...' on each "
                                   "stream, and window by that column.");
                return -1;
            }
            return 0;
        }
        int col = w->time->kind == EXPR_COLUMN ? inc_trace_column(p, 0, w->time->index) : -1;
        if (p->wm_col < 0 || col != p->wm_col) {
            sl_error(err, ERRCODE_FEATURE_NOT_SUPPORTED,
                     "an aggregation in append mode needs a watermark on the window's time column");
            sl_error_hint(err, "Declare WATERMARK FOR %s AS %s - INTERVAL '...' on stream \"%s\".",
                          col >= 0 ? p->stream->cols[col].name : "ts",
                          col >= 0 ? p->stream->cols[col].name : "ts", p->stream->name);
            return -1;
        }
    }
    return 0;
}

/* An aggregation in update or complete mode writes a group's row again at
 * each change: a target that only appends would hold every version, and a
 * reader summing it would count a group many times.  Refused until outputs
 * carry retractions (the operator-graph issue), unless the query says
 * append_updates = true: its reader keeps the last row of each group (or,
 * as Nexmark q5's second stage, each group changes in one batch only). */
static int refuse_updates_into(IncPlan *p, const char *what, const char *name, SlError *err)
{
    if (p->agg == NULL || p->mode == MODE_APPEND)
        return 0;
    Options o;
    bool append_updates = false;
    if (opts_parse(&p->arena, p->query->options, &o, err) < 0 ||
        opts_get_bool(&o, "append_updates", false, &append_updates, err) < 0)
        return -1;
    if (append_updates)
        return 0;
    /* A definition stored before this refusal still runs (a data
     * directory upgraded in place), as with append_updates = true. */
    if (!p->creating) {
        sl_log(LOG_WARN, "a stored continuous query appends each change of a group INTO a "
               "target that cannot take the former row back; replace it with WITH "
               "(reset = true), or add append_updates = true",
               "query=%s target=%s", log_value(p->query->name), log_value(name));
        return 0;
    }
    sl_error(err, ERRCODE_FEATURE_NOT_SUPPORTED,
             "an aggregation in %s mode cannot write INTO %s \"%s\"",
             p->mode == MODE_UPDATE ? "update" : "complete", what, name);
    sl_error_detail(err, "Each change of a group would be appended as a new row, and %s \"%s\" "
                         "cannot take back the row written before: a reader would count the "
                         "group once per change.", what, name);
    sl_error_hint(err, "Group by WINDOW(ts, ...) over a column with a WATERMARK and use "
                       "output_mode = 'append' (each window is written once, when it closes); "
                       "or leave out INTO and read the query's result table, or SUBSCRIBE to "
                       "its changes; or, if every reader keeps only the last row of each "
                       "group, add append_updates = true.");
    return -1;
}

/* Does the sink's key hold every grouping column of the aggregation (and
 * window_start or window_end of a window), each as an output column that
 * is the group's value itself?  Else two groups share a key. */
static bool key_covers_groups(IncPlan *p)
{
    if (p->agg == NULL)
        return true;
    const int *cols;
    int nkey = sink_key(p->writer, &cols);
    int ng = p->agg->u.agg.ngroups;
    bool win = p->agg->u.agg.window.kind != WINDOW_NONE;
    bool *covered = ARENA_ARRAY(&p->arena, bool, ng + 2);
    memset(covered, 0, sizeof(bool) * (size_t)(ng + 2));
    for (int i = 0; i < nkey; i++) {
        int src = trace_column(p->upper, p->nupper, cols[i]);
        if (src >= 0 && src < ng + (win ? 2 : 0))
            covered[src] = true;
    }
    for (int g = 0; g < ng; g++)
        if (!covered[g])
            return false;
    return !win || covered[ng] || covered[ng + 1];
}

/* INTO sink: its writer, for this query's output columns. */
static int open_sink(IncPlan *p, const CatRelation *rel, const Plan *top, SlError *err)
{
    const char **names = ARENA_ARRAY(&p->arena, const char *, top->ncols > 0 ? top->ncols : 1);
    for (int c = 0; c < top->ncols; c++)
        names[c] = top->cols[c].name;
    if (sink_open(p->shared->rt, rel, p->query, names, top->ncols, &p->shared->manifest_mu,
                  &p->writer, err) < 0)
        return -1;
    p->sink = rel;
    cat_relation_ref(rel);
    /* A sink that writes a group leaving the result (Kafka, keyed:
     * tombstones) is an upsert log when its key tells every group apart;
     * one that only appends, or whose key leaves out a grouping column,
     * is refused. */
    if (!sink_wants_deletes(p->writer) || !key_covers_groups(p))
        return refuse_updates_into(p, "sink", rel->name, err);
    return 0;
}

/* INTO stream: an internal stream other than the source, whose columns
 * take the query's output column by column; INTO sink: a files sink. */
static int check_into(IncPlan *p, Catalog *cat, const char *name, const Plan *top, SlError *err)
{
    const CatRelation *rel = cat_lookup(cat, name);
    if (rel == NULL)
        return sl_error(err, ERRCODE_UNDEFINED_TABLE, "stream \"%s\" does not exist", name);
    if (rel->kind == REL_SINK)
        return open_sink(p, rel, top, err);
    if (rel->kind != REL_STREAM) {
        sl_error(err, ERRCODE_WRONG_OBJECT_TYPE, "\"%s\" is not a stream", name);
        sl_error_hint(err, "INTO names an internal stream or a sink; without INTO the results "
                           "go to a table named after the query.");
        return -1;
    }
    if (inc_inputs_reads(&p->ins, rel->oid))
        return sl_error(err, ERRCODE_INVALID_PARAMETER_VALUE,
                        "a continuous query cannot write into the stream it reads");
    if (refuse_updates_into(p, "stream", name, err) < 0)
        return -1;
    Arena a;
    arena_init(&a, 512);
    Options o;
    int rc = opts_parse(&a, rel->options, &o, err);
    if (rc == 0 && opts_get(&o, "connector") != NULL &&
        strcmp(opts_get(&o, "connector"), "internal") != 0)
        rc = sl_error(err, ERRCODE_WRONG_OBJECT_TYPE,
                      "stream \"%s\" is fed by a connector: INTO needs an internal stream", name);
    arena_destroy(&a);
    if (rc < 0)
        return -1;
    if (rel->ncols != top->ncols)
        return sl_error(err, ERRCODE_DATATYPE_MISMATCH,
                        "the query returns %d columns but stream \"%s\" has %d", top->ncols,
                        name, rel->ncols);
    for (int c = 0; c < rel->ncols; c++) {
        if (rel->cols[c].type.id != top->cols[c].type.id) {
            sl_error(err, ERRCODE_DATATYPE_MISMATCH,
                     "column %d of the query is of type %s but column \"%s\" of stream \"%s\" "
                     "is of type %s", c + 1, type_name(top->cols[c].type.id),
                     rel->cols[c].name, name, type_name(rel->cols[c].type.id));
            sl_error_hint(err, "Cast the expression to the stream's type.");
            return -1;
        }
    }
    p->into = rel;
    cat_relation_ref(rel);
    return 0;
}

/* The late_rows stream: exists, is internal, is neither read nor written
 * by the query, and has the source stream's column types. */
static int late_stream(IncPlan *p, Catalog *cat, const char *name, SlError *err)
{
    const CatRelation *rel = cat_lookup(cat, name);
    if (rel == NULL)
        return sl_error(err, ERRCODE_UNDEFINED_TABLE, "stream \"%s\" does not exist", name);
    if (rel->kind != REL_STREAM) {
        sl_error(err, ERRCODE_WRONG_OBJECT_TYPE, "\"%s\" is not a stream", name);
        sl_error_hint(err, "late_rows names an internal stream with the columns of stream "
                           "\"%s\".", p->stream->name);
        return -1;
    }
    if (inc_inputs_reads(&p->ins, rel->oid) || rel == p->into)
        return sl_error(err, ERRCODE_INVALID_PARAMETER_VALUE,
                        "late_rows must name a stream the query neither reads nor writes");
    Options ro;
    if (opts_parse(&p->arena, rel->options, &ro, err) < 0)
        return -1;
    if (opts_get(&ro, "connector") != NULL && strcmp(opts_get(&ro, "connector"), "internal") != 0)
        return sl_error(err, ERRCODE_WRONG_OBJECT_TYPE,
                        "stream \"%s\" is fed by a connector: late_rows needs an internal "
                        "stream", name);
    bool same = rel->ncols == p->stream->ncols;
    for (int c = 0; same && c < rel->ncols; c++)
        same = rel->cols[c].type.id == p->stream->cols[c].type.id;
    if (!same) {
        sl_error(err, ERRCODE_DATATYPE_MISMATCH,
                 "late_rows stream \"%s\" must have the columns of stream \"%s\"", name,
                 p->stream->name);
        sl_error_hint(err, "CREATE STREAM %s (LIKE the source): the same column types, in "
                           "order.", name);
        return -1;
    }
    p->late = rel;
    cat_relation_ref(rel);
    return 0;
}

/* late_rows = 'stream': an internal stream other than the source and the
 * INTO stream, with the source stream's columns (late rows are appended as
 * they were read). */
static int check_late(IncPlan *p, Catalog *cat, SlError *err)
{
    Options o;
    if (opts_parse(&p->arena, p->query->options, &o, err) < 0)
        return -1;
    const char *name = opts_get(&o, "late_rows");
    if (name == NULL)
        return 0;
    if (p->graph == NULL && !p->plain)
        return refuse(err, "late_rows is not supported yet for a continuous query over "
                           "several inputs (a join or UNION ALL)",
                      "Late rows are dropped and counted (sys.query_progress); remove "
                      "late_rows.");
    if (p->graph != NULL && (p->ins.n != 1 || p->ins.in[0].wm_col < 0))
        return refuse(err, "late_rows on the operator graph needs a query that reads one "
                           "stream, with a WATERMARK",
                      "Late rows are dropped and counted (sys.query_progress); remove "
                      "late_rows.");
    if (p->graph == NULL && (p->agg == NULL || p->agg->u.agg.window.kind == WINDOW_NONE) &&
        (p->distinct == NULL || p->dedup_time_col < 0))
        return refuse(err, "late_rows needs an operator that can find rows late",
                      "Rows are late for a windowed aggregation or a DISTINCT over the "
                      "event-time column, against the stream's WATERMARK.");
    return late_stream(p, cat, name, err);
}

/* The partitions of each stream read: a stream with a watermark and
 * partitions or an idle_timeout has a watermark per partition
 * (inc_watermark.c); with several inputs, per input. */
static int check_parts(IncPlan *p, SlError *err)
{
    if (p->plain)
        return source_parts(p->stream, &p->parts, err);
    for (int i = 0; i < p->ins.n; i++) {
        const IncInput *in = &p->ins.in[i];
        SourceParts *parts = &p->in_parts[i];
        if (source_parts(in->rel, parts, err) < 0)
            return -1;
        p->in_part_wm[i] = in->wm_col >= 0 && (parts->n > 1 || parts->idle_us > 0);
    }
    return 0;
}

static void compute_shape(IncPlan *p);
static void graph_shape(IncPlan *p, const Plan *plan);

static void expr_columns(const Expr *e, uint8_t *used, int ncols)
{
    if (e == NULL)
        return;
    if (e->kind == EXPR_COLUMN && e->index >= 0 && e->index < ncols)
        used[e->index] = 1;
    for (int i = 0; i < e->nargs; i++)
        expr_columns(e->args[i], used, ncols);
}

/* The stream columns the query reads at all, per input (IncInputs.need;
 * one stream read directly: p->scan_need) -- what the aggregate reads
 * (everything, for DISTINCT and stateless queries), followed down the
 * lower chain's projections and filters and the input tree's joins (their
 * keys and conditions) and UNION ALL arms, plus each input's watermark
 * column and partition key -- so a generated stream makes only those
 * (source_reader_need).  With late_rows every column is kept.  need has
 * one byte per output column of n; an input under a node not known here
 * keeps NULL (all columns). */
static void need_tree(IncPlan *p, const Plan *n, const uint8_t *need)
{
    Arena *a = &p->arena;
    switch (n->kind) {
    case PLAN_SCAN:
        for (int i = 0; i < p->ins.n; i++) {
            if (p->ins.in[i].scan != n || n->ncols != p->ins.in[i].rel->ncols)
                continue;
            uint8_t *own = arena_memdup(a, need, n->ncols > 0 ? (size_t)n->ncols : 1);
            int wm = p->plain ? p->wm_col : p->ins.in[i].wm_col;
            /* (a graph keeps no watermark per partition: no key to read) */
            int key = p->plain ? p->parts.key_col : p->graph ? -1 : p->in_parts[i].key_col;
            if (wm >= 0 && wm < n->ncols)
                own[wm] = 1;
            if (key >= 0 && key < n->ncols)
                own[key] = 1;
            p->ins.need[i] = own;
        }
        return;
    case PLAN_FILTER:
    case PLAN_PROJECT:
    case PLAN_SORT: {
        int nbelow = n->child->ncols;
        uint8_t *below = arena_zalloc(a, nbelow > 0 ? (size_t)nbelow : 1);
        if (n->kind == PLAN_PROJECT) {
            for (int c = 0; c < n->ncols; c++)
                if (need[c])
                    expr_columns(n->u.project.exprs[c], below, nbelow);
        } else {            /* the child's columns pass through */
            memcpy(below, need, (size_t)SL_MIN(nbelow, n->ncols));
            if (n->kind == PLAN_FILTER)
                expr_columns(n->u.filter.cond, below, nbelow);
            else
                for (int k = 0; k < n->u.sort.nkeys; k++)
                    below[n->u.sort.keys[k].col] = 1;
        }
        need_tree(p, n->child, below);
        return;
    }
    case PLAN_JOIN: {
        int nl = n->child->ncols, nr = n->right->ncols;
        uint8_t *both = arena_zalloc(a, (size_t)(nl + nr) + 1);
        memcpy(both, need, (size_t)SL_MIN(n->ncols, nl + nr));
        for (int k = 0; k < n->u.join.nkeys; k++) {
            expr_columns(n->u.join.lkeys[k], both, nl);
            expr_columns(n->u.join.rkeys[k], both + nl, nr);
        }
        expr_columns(n->u.join.residual, both, nl + nr);
        need_tree(p, n->child, both);
        need_tree(p, n->right, both + nl);
        return;
    }
    case PLAN_SETOP:    /* UNION ALL: the arms' columns by position */
        need_tree(p, n->child, need);
        need_tree(p, n->right, need);
        return;
    case PLAN_AGG: {    /* (a graph's: the fixed shape's is compute_need's) */
        int nbelow = n->child->ncols;
        uint8_t *below = arena_zalloc(a, nbelow > 0 ? (size_t)nbelow : 1);
        for (int i = 0; i < n->u.agg.ngroups; i++)
            expr_columns(n->u.agg.groups[i], below, nbelow);
        for (int i = 0; i < n->u.agg.naggs; i++) {
            const AggCall *call = &n->u.agg.aggs[i];
            for (int k = 0; k < call->nargs; k++)
                expr_columns(call->args[k], below, nbelow);
            expr_columns(call->filter, below, nbelow);
        }
        expr_columns(n->u.agg.window.time, below, nbelow);
        need_tree(p, n->child, below);
        return;
    }
    default:
        return;
    }
}

static void compute_need(IncPlan *p)
{
    if (p->late != NULL)
        return;
    const Plan *top = p->nlower > 0 ? p->lower[0] : p->inputs;
    uint8_t *need = arena_zalloc(&p->arena, top->ncols > 0 ? (size_t)top->ncols : 1);
    if (p->agg != NULL) {
        const Plan *agg = p->agg;
        for (int i = 0; i < agg->u.agg.ngroups; i++)
            expr_columns(agg->u.agg.groups[i], need, top->ncols);
        for (int i = 0; i < agg->u.agg.naggs; i++) {
            const AggCall *call = &agg->u.agg.aggs[i];
            for (int k = 0; k < call->nargs; k++)
                expr_columns(call->args[k], need, top->ncols);
            for (int k = 0; k < call->norder; k++)
                expr_columns(call->order[k].expr, need, top->ncols);
            expr_columns(call->filter, need, top->ncols);
        }
        expr_columns(agg->u.agg.window.time, need, top->ncols);
    } else {
        memset(need, 1, (size_t)top->ncols);
    }
    need_tree(p, top, need);
    if (p->plain)
        p->scan_need = p->ins.need[0];
}

/* What in plan can take back a row it output when its inputs only insert
 * (a stream's rows): an aggregate (each change of a group retracts its
 * row; not with close_only, output_mode 'append', where it emits each
 * group once, when the watermark closes it: eng_graph_close_only), an
 * outer join (a padded row, retracted when a match comes), EXCEPT (a row
 * the right side comes to hold); NULL when nothing can (filters,
 * projections, inner joins, DISTINCT, UNION, INTERSECT). */
static const char *graph_retracting(const Plan *n, bool close_only)
{
    const char *r;
    switch (n->kind) {
    case PLAN_SCAN:
        return NULL;
    case PLAN_FILTER:
    case PLAN_PROJECT:
    case PLAN_DISTINCT:
    case PLAN_SORT:
        return graph_retracting(n->child, close_only);
    case PLAN_WINDOW:
        return "window function (a new row changes the values of its partition's rows)";
    case PLAN_AGG:
        return close_only ? NULL : "aggregate (each change of a group retracts its row)";
    case PLAN_JOIN:
        if (n->u.join.type != JOIN_INNER && n->u.join.type != JOIN_CROSS)
            return "outer join (a padded row is retracted when a match comes)";
        return (r = graph_retracting(n->child, close_only)) != NULL
                   ? r : graph_retracting(n->right, close_only);
    case PLAN_SETOP:
        if (n->u.setop.op == SETOP_EXCEPT)
            return "EXCEPT (a row is retracted when the right side comes to hold it)";
        return (r = graph_retracting(n->child, close_only)) != NULL
                   ? r : graph_retracting(n->right, close_only);
    default:
        return "operator (it may retract a row)";
    }
}

/* The result tables of continuous queries that plan n reads (each as a
 * changelog, changelog.c): at CREATE one that writes INTO a stream or sink
 * is refused, it has none to read (42809); *retracts gets why the first
 * that may take back rows does ("input \"a\" (its aggregate ...)"),
 * for append mode and INTO.  0 or -1. */
static int query_inputs(IncPlan *p, const Plan *n, const char **retracts, SlError *err)
{
    if (n == NULL)
        return 0;
    if (n->kind == PLAN_SCAN) {
        const CatRelation *rel = n->u.scan.rel;
        CqRuntime *cq = p->shared != NULL && p->shared->rt != NULL ? p->shared->rt->cq : NULL;
        if (rel == NULL || rel->kind != REL_QUERY || cq == NULL)
            return 0;
        const char *into;
        const char *why = cq_retracts(cq, rel->oid, &into);
        if (into != NULL && p->creating) {
            sl_error(err, ERRCODE_WRONG_OBJECT_TYPE,
                     "continuous query \"%s\" cannot read continuous query \"%s\": it writes "
                     "INTO \"%s\", and its result table stays empty", p->query->name, rel->name,
                     into);
            sl_error_hint(err, "Read \"%s\" instead.", into);
            return -1;
        }
        if (why != NULL && *retracts == NULL)
            *retracts = arena_printf(&p->arena, "input \"%s\" (a continuous query whose %s)",
                                     rel->name, why);
        return 0;
    }
    if (query_inputs(p, n->child, retracts, err) < 0)
        return -1;
    return n->kind == PLAN_JOIN || n->kind == PLAN_SETOP ? query_inputs(p, n->right, retracts, err)
                                                         : 0;
}

const char *inc_plan_retracts(IncPlan *p)
{
    if (p->graph != NULL)
        return p->retracts;
    if (p->agg != NULL && p->mode != MODE_APPEND)
        return "aggregate in update mode (each change of a group retracts its row)";
    return NULL;
}

/* The fixed shape refused q's shape: the plan runs as an operator graph
 * (inc_graph.c) instead, its result table kept with retractions.  Append
 * mode and INTO an internal stream only where no operator can retract a
 * row (graph_retracting), else refused naming it; late_rows over one
 * stream; what the graph does not do yet is refused too: INTO a sink,
 * state_ttl.  0, or -1 with err set. */
static int graph_build(IncPlan *p, const CreateCqStmt *cs, const Query *q, Catalog *cat,
                       SlError *err)
{
    Plan *plan = q->plan;
    /* Forget what the fixed shape's rewriter made. */
    inc_inputs_close(&p->ins);
    memset(&p->ins, 0, sizeof(p->ins));
    p->nupper = p->nlower = 0;
    p->agg = p->distinct = NULL;
    p->inputs = NULL;
    p->plain = false;
    p->wm_col = -1;
    Options o;
    if (opts_parse(&p->arena, p->query->options, &o, err) < 0 ||
        opts_get_interval_us(&o, "state_ttl", 0, &p->ttl_us, err) < 0)
        return -1;
    const char *mode = opts_get(&o, "output_mode");
    p->mode = mode == NULL                       ? MODE_UPDATE
              : strcmp(mode, "append") == 0      ? MODE_APPEND
              : strcmp(mode, "complete") == 0    ? MODE_COMPLETE
                                                 : MODE_UPDATE;
    const char *retracts = q->ninit > 0 ? "scalar subquery (a change of its value retracts "
                                          "the rows it was joined to)"
                                        : graph_retracting(plan, p->mode == MODE_APPEND);
    /* Result tables read: what they retract counts as this plan's (at
     * start, when an input may not be running yet, it is only recorded). */
    const char *inputs_retract = NULL;
    if (query_inputs(p, plan, &inputs_retract, err) < 0)
        return -1;
    p->retracts = retracts != NULL ? retracts : inputs_retract;
    if (p->creating)
        retracts = p->retracts;
    if ((p->mode == MODE_APPEND || cs->into != NULL) && retracts != NULL) {
        if (cs->into != NULL)
            sl_error(err, ERRCODE_FEATURE_NOT_SUPPORTED,
                     "continuous query \"%s\" cannot write INTO \"%s\": its %s, and a "
                     "stream cannot take back a row", p->query->name, cs->into->name,
                     retracts);
        else
            sl_error(err, ERRCODE_FEATURE_NOT_SUPPORTED,
                     "output_mode 'append' cannot hold for continuous query \"%s\": its %s",
                     p->query->name, retracts);
        sl_error_hint(err, "Use output_mode = 'update' (the default) without INTO: the result "
                           "table holds the query's current answer, and SUBSCRIBE sends each "
                           "change as a delete and an insert.");
        return -1;
    }
    if (p->ttl_us != 0)
        return refuse(err, "state_ttl is not supported yet for a continuous query on the "
                           "operator graph", NULL);
    if (inc_graph_build(p, plan, q->init, q->ninit, err) < 0)
        return -1;

    if (cs->into != NULL) {
        const CatRelation *rel = cat_lookup(cat, cs->into->name);
        if (rel != NULL && rel->kind == REL_SINK)
            return refuse(err, "INTO a sink is not supported yet for a continuous query on "
                               "the operator graph",
                          "Write INTO an internal stream, and read it with a query of the "
                          "fixed plan INTO the sink.");
        if (check_into(p, cat, cs->into->name, plan, err) < 0)
            return -1;
    }
    if (check_late(p, cat, err) < 0)
        return -1;
    /* its streams make only the columns the plan reads (all with
     * late_rows, or a scalar subquery's InitPlans) */
    if (q->ninit == 0 && p->late == NULL) {
        uint8_t *all = arena_alloc(&p->arena, plan->ncols > 0 ? (size_t)plan->ncols : 1);
        memset(all, 1, plan->ncols > 0 ? (size_t)plan->ncols : 1);
        need_tree(p, plan, all);
    }
    p->tprefix[0] = 'T';
    p->meta_key[0] = 'M';
    p->qprefix[0] = 'Q';
    put_be32(p->qprefix + 1, p->query->oid);
    put_be32(p->tprefix + 1, p->query->oid);
    put_be32(p->meta_key + 1, p->query->oid);
    p->out_src = ARENA_ARRAY(&p->arena, int, plan->ncols > 0 ? plan->ncols : 1);
    for (int c = 0; c < plan->ncols; c++)
        p->out_src[c] = -1;
    graph_shape(p, plan);
    return 0;
}

static int plan_build(const CatRelation *query, Catalog *cat, StateStore *st, IncShared *sh,
                      bool creating, IncPlan **out, SlError *err)
{
    IncPlan *p = sl_calloc(1, sizeof(IncPlan));
    p->creating = creating;
    arena_init(&p->arena, 16384);
    arena_init(&p->batch_arena, 1 << 16);
    arena_init(&p->chunk_arena, 1 << 16);
    p->query = query;
    cat_relation_ref(query);
    p->st = st;
    p->shared = sh;
    *out = NULL;
    List *stmts = NULL;
    Query *q = NULL;
    if (rt_parse(&p->arena, query->sql, strlen(query->sql), &stmts, err) < 0)
        goto fail;
    const RawStmt *raw = list_len(stmts) == 1 ? list_nth(stmts, 0) : NULL;
    if (raw == NULL || !IS_A(raw->stmt, CreateCqStmt)) {
        sl_error(err, ERRCODE_DATA_CORRUPTED, "continuous query \"%s\" has no query text",
                 query->name);
        goto fail;
    }
    const CreateCqStmt *cs = (const CreateCqStmt *)raw->stmt;
    RawStmt sel = *raw;
    sel.stmt = (Node *)cs->query;
    SqlCatalog sc = {lookup_cb, cat, NULL, NULL};
    if (sql_analyze_with(&p->arena, &sc, query->sql, &sel, NULL, 0, &q, err) < 0)
        goto fail;
    p->ndeps = q->ndeps;
    p->dep_oids = q->dep_oids;
    p->dep_as = q->dep_as;
    if (q->ncorrelated > 0) {
        refuse(err, "correlated subqueries in a continuous query are not supported yet", NULL);
        goto fail;
    }
    if (q->kind != QUERY_SELECT || q->plan == NULL || q->nparams > 0) {
        refuse(err, "this query cannot run as a continuous query", NULL);
        goto fail;
    }
    if (q->ninit > 0) {
        /* uncorrelated scalar subqueries: only the operator graph runs them */
        if (graph_build(p, cs, q, cat, err) < 0)
            goto fail;
        *out = p;
        return 0;
    }
    if (decompose(p, q->plan, err) < 0 || read_mode(p, err) < 0 ||
        read_watermark(p, err) < 0 || check(p, err) < 0) {
        if (strcmp(err->sqlstate, ERRCODE_FEATURE_NOT_SUPPORTED) == 0 &&
            (p->shape_refused || p->ins.shape_refused)) {
            sl_error_clear(err);
            if (graph_build(p, cs, q, cat, err) < 0)
                goto fail;
            *out = p;
            return 0;
        }
        goto fail;
    }
    if ((p->ins.sjoin != NULL &&
         inc_join_build(&p->arena, &p->ins, st, query, &p->sjoin, err) < 0) ||
        (cs->into != NULL && check_into(p, cat, cs->into->name, q->plan, err) < 0) ||
        check_late(p, cat, err) < 0 || check_parts(p, err) < 0)
        goto fail;
    if (p->agg) {
        int naggs = p->agg->u.agg.naggs;
        p->fns = ARENA_ARRAY(&p->arena, const AggFunc *, naggs > 0 ? naggs : 1);
        p->state_off = ARENA_ARRAY(&p->arena, size_t, naggs > 0 ? naggs : 1);
        for (int i = 0; i < naggs; i++) {
            p->fns[i] = ex_agg_func(p->agg->u.agg.aggs[i].sig);
            p->state_off[i] = p->state_size;
            p->state_size += (p->fns[i]->state_size + 15) & ~(size_t)15;   /* int128 states */
        }
    }
    p->part_wm = p->plain && p->wm_col >= 0 && (p->parts.n > 1 || p->parts.idle_us > 0);
    p->out_src = ARENA_ARRAY(&p->arena, int, q->plan->ncols > 0 ? q->plan->ncols : 1);
    for (int c = 0; c < q->plan->ncols; c++)
        p->out_src[c] = p->agg ? trace_column(p->upper, p->nupper, c) : -1;
    p->qprefix[0] = 'Q';
    p->tprefix[0] = 'T';
    p->meta_key[0] = 'M';
    put_be32(p->qprefix + 1, query->oid);
    put_be32(p->tprefix + 1, query->oid);
    put_be32(p->meta_key + 1, query->oid);
    compute_shape(p);
    compute_need(p);
    *out = p;
    return 0;
fail:
    inc_plan_free(p);
    return -1;
}

int inc_plan_build(const CatRelation *query, Catalog *cat, StateStore *st, IncShared *sh,
                   IncPlan **out, SlError *err)
{
    return plan_build(query, cat, st, sh, false, out, err);
}

int inc_plan_build_new(const CatRelation *query, Catalog *cat, StateStore *st, IncShared *sh,
                       IncPlan **out, SlError *err)
{
    return plan_build(query, cat, st, sh, true, out, err);
}

void inc_plan_set_fn_hooks(IncPlan *p, const ExFnHooks *hooks)
{
    p->hooks = *hooks;
}

void inc_plan_free(IncPlan *p)
{
    if (p == NULL)
        return;
    inc_join_free(p->sjoin);
    inc_graph_free(p->graph);
    inc_inputs_close(&p->ins);
    if (p->into)
        cat_relation_unref(p->into);
    if (p->sink)
        cat_relation_unref(p->sink);
    sink_close(p->writer);
    if (p->late)
        cat_relation_unref(p->late);
    cat_relation_unref(p->query);
    arena_destroy(&p->arena);
    arena_destroy(&p->batch_arena);
    arena_destroy(&p->chunk_arena);
    sl_free(p);
}

int inc_plan_ninputs(IncPlan *p)
{
    return p->ins.n;
}

Source *inc_plan_source(IncPlan *p, int i)
{
    return p->ins.in[i].source;
}

const CatRelation *inc_plan_stream(IncPlan *p, int i)
{
    return p->ins.in[i].rel;
}

bool inc_plan_reads(IncPlan *p, uint32_t oid)
{
    for (int i = 0; i < p->ndeps; i++)
        if (p->dep_oids[i] == oid)
            return true;
    return inc_inputs_reads(&p->ins, oid);
}

bool inc_plan_reads_as_owner(IncPlan *p, uint32_t oid)
{
    for (int i = 0; i < p->ndeps; i++)
        if (p->dep_oids[i] == oid && p->dep_as[i] == 0)
            return true;
    return false;
}

const CatRelation *inc_plan_into(IncPlan *p)
{
    return p->into ? p->into : p->sink;
}

bool inc_plan_sink_stats(IncPlan *p, const char **name, SinkStats *out)
{
    if (p->writer == NULL || p->sink == NULL)
        return false;
    *name = p->sink->name;
    sink_stats(p->writer, out);
    return true;
}

const CatRelation *inc_plan_late(IncPlan *p)
{
    return p->late;
}

bool inc_plan_idle_wakes(IncPlan *p)
{
    for (int i = 0; !p->plain && i < p->ins.n; i++)
        if (p->in_part_wm[i] && p->in_parts[i].idle_us > 0)
            return true;
    return p->part_wm && p->parts.idle_us > 0;
}

/* ---------------------------------------------------------------------- */
/* The fingerprint: what the state is valid for (docs/engine.md, "Query    */
/* evolution")                                                             */

const char *const inc_shape_names[INC_SHAPE_PARTS] = {
    "source stream", "window", "grouping keys", "aggregates",
};

/* The input tree as text: the streams and tables, each join's kind and
 * keys (and its other condition), the UNION ALL arms.  Filters are left
 * out: as on one stream, a WHERE change keeps the state (rows an interval
 * join kept before it are not filtered again). */
static void inputs_shape(const Plan *n, StrBuf *b)
{
    switch (n->kind) {
    case PLAN_SCAN:
        strbuf_puts(b, n->u.scan.rel->name);
        return;
    case PLAN_FILTER:       /* a WHERE change keeps the state, as on one stream */
    case PLAN_PROJECT:
        inputs_shape(n->child, b);
        return;
    case PLAN_SETOP:
        strbuf_putc(b, '(');
        inputs_shape(n->child, b);
        strbuf_puts(b, " UNION ALL ");
        inputs_shape(n->right, b);
        strbuf_putc(b, ')');
        return;
    case PLAN_JOIN: {
        static const char *const kinds[] = {
            [JOIN_INNER] = "JOIN", [JOIN_LEFT] = "LEFT JOIN", [JOIN_RIGHT] = "RIGHT JOIN",
            [JOIN_FULL] = "FULL JOIN", [JOIN_CROSS] = "CROSS JOIN",
        };
        JoinType t = n->u.join.type;
        strbuf_putc(b, '(');
        inputs_shape(n->child, b);
        strbuf_printf(b, " %s ", (size_t)t < SL_ARRAY_LEN(kinds) && kinds[t] ? kinds[t] : "JOIN");
        inputs_shape(n->right, b);
        strbuf_puts(b, " ON (");
        for (int k = 0; k < n->u.join.nkeys; k++) {
            if (k > 0)
                strbuf_puts(b, ", ");
            plan_expr_deparse(n->u.join.lkeys[k], n->child->cols, n->child->quals, b);
            strbuf_puts(b, " = ");
            plan_expr_deparse(n->u.join.rkeys[k], n->right->cols, n->right->quals, b);
        }
        strbuf_putc(b, ')');
        if (n->u.join.residual != NULL) {
            strbuf_puts(b, " AND ");
            plan_expr_deparse(n->u.join.residual, n->cols, n->quals, b);
        }
        strbuf_putc(b, ')');
        return;
    }
    default:
        strbuf_puts(b, "?");
        return;
    }
}

/* The state-bearing parts of the plan as text, in the plan's arena: the
 * stream, the window spec, the grouping keys and the aggregate list, each
 * deparsed over the columns the aggregate reads. */
static void compute_shape(IncPlan *p)
{
    StrBuf b;
    strbuf_init(&b);
    if (p->plain) {
        p->shape[INC_SHAPE_SOURCE] = p->stream->name;
    } else {
        inputs_shape(p->inputs, &b);
        p->shape[INC_SHAPE_SOURCE] = arena_strndup(&p->arena, b.data, b.len);
        strbuf_reset(&b);
    }
    const char *none = p->agg ? "none" : "none (no aggregation)";
    p->shape[INC_SHAPE_WINDOW] = none;
    p->shape[INC_SHAPE_GROUPS] = none;
    p->shape[INC_SHAPE_AGGS] = none;
    if (p->agg != NULL) {
        const Plan *in = p->agg->child;
        const WindowSpec *w = &p->agg->u.agg.window;
        if (w->kind != WINDOW_NONE) {
            strbuf_puts(&b, w->kind == WINDOW_SESSION ? "SESSION(" : "WINDOW(");
            plan_expr_deparse(w->time, in->cols, in->quals, &b);
            strbuf_printf(&b, ", %" PRId64 " us",
                          w->kind == WINDOW_SESSION ? w->gap_us : w->size_us);
            if (w->kind == WINDOW_SLIDE)
                strbuf_printf(&b, ", %" PRId64 " us", w->slide_us);
            strbuf_putc(&b, ')');
            p->shape[INC_SHAPE_WINDOW] = arena_strndup(&p->arena, b.data, b.len);
        }
        strbuf_reset(&b);
        strbuf_putc(&b, '(');
        for (int i = 0; i < p->agg->u.agg.ngroups; i++) {
            if (i > 0)
                strbuf_puts(&b, ", ");
            plan_expr_deparse(p->agg->u.agg.groups[i], in->cols, in->quals, &b);
        }
        strbuf_putc(&b, ')');
        p->shape[INC_SHAPE_GROUPS] = arena_strndup(&p->arena, b.data, b.len);
        strbuf_reset(&b);
        strbuf_putc(&b, '(');
        for (int i = 0; i < p->agg->u.agg.naggs; i++) {
            if (i > 0)
                strbuf_puts(&b, ", ");
            plan_agg_call_deparse(&p->agg->u.agg.aggs[i], in->cols, in->quals, &b);
        }
        strbuf_putc(&b, ')');
        p->shape[INC_SHAPE_AGGS] = arena_strndup(&p->arena, b.data, b.len);
    }
    strbuf_reset(&b);
    for (int i = 0; i < INC_SHAPE_PARTS; i++) {
        strbuf_puts(&b, p->shape[i]);
        strbuf_putc(&b, '\n');
    }
    p->fingerprint = ex_hash(b.data, b.len) | 1;    /* 0: none recorded */
    /* What makes a result row out of a group: the columns, and the upper
     * chain (HAVING, the projected expressions) deparsed.  Another one (a
     * compatible CREATE OR REPLACE) rewrites the result table from the
     * state, so no row keeps what the former definition computed. */
    strbuf_reset(&b);
    for (int c = 0; c < p->query->ncols; c++)
        strbuf_printf(&b, "%s %s\n", p->query->cols[c].name,
                      type_name(p->query->cols[c].type.id));
    for (int i = 0; p->agg != NULL && i < p->nupper; i++) {
        const Plan *n = p->upper[i], *in = i + 1 < p->nupper ? p->upper[i + 1] : p->agg;
        if (n->kind == PLAN_FILTER) {
            strbuf_puts(&b, "WHERE ");
            plan_expr_deparse(n->u.filter.cond, in->cols, in->quals, &b);
        } else if (n->kind == PLAN_PROJECT) {
            strbuf_puts(&b, "SELECT ");
            for (int c = 0; c < n->ncols; c++) {
                plan_expr_deparse(n->u.project.exprs[c], in->cols, in->quals, &b);
                strbuf_puts(&b, ", ");
            }
        }
        strbuf_putc(&b, '\n');
    }
    p->result_hash = ex_hash(b.data, b.len) | 1;
    strbuf_free(&b);
}

/* A plan on the operator graph: its streams, and the whole plan as text
 * (EXPLAIN's) for the aggregates' part: any change of the plan changes the
 * fingerprint, so CREATE OR REPLACE refuses it unless reset = true (its
 * operators' state is not kept across a changed definition). */
static void graph_shape(IncPlan *p, const Plan *plan)
{
    StrBuf b;
    strbuf_init(&b);
    for (int i = 0; i < p->ins.n; i++) {
        if (i > 0)
            strbuf_puts(&b, ", ");
        strbuf_puts(&b, p->ins.in[i].rel->name);
    }
    p->shape[INC_SHAPE_SOURCE] = arena_strndup(&p->arena, b.data, b.len);
    p->shape[INC_SHAPE_WINDOW] = "none (operator graph)";
    p->shape[INC_SHAPE_GROUPS] = "none (operator graph)";
    List *lines = NULL;
    plan_explain(&p->arena, plan, NULL, 0, &lines);
    strbuf_reset(&b);
    strbuf_puts(&b, "the operator graph of:");
    for (int i = 0; i < list_len(lines); i++) {
        const char *l = list_nth(lines, i);
        while (*l == ' ')
            l++;
        strbuf_printf(&b, "%s %s", i > 0 ? ";" : "", l);
    }
    p->shape[INC_SHAPE_AGGS] = arena_strndup(&p->arena, b.data, b.len);
    strbuf_reset(&b);
    for (int i = 0; i < INC_SHAPE_PARTS; i++) {
        strbuf_puts(&b, p->shape[i]);
        strbuf_putc(&b, '\n');
    }
    p->fingerprint = ex_hash(b.data, b.len) | 1;
    for (int c = 0; c < p->query->ncols; c++)
        strbuf_printf(&b, "%s %s\n", p->query->cols[c].name,
                      type_name(p->query->cols[c].type.id));
    p->result_hash = ex_hash(b.data, b.len) | 1;
    strbuf_free(&b);
}

const char *const *inc_plan_shape(IncPlan *p)
{
    return p->shape;
}

uint64_t inc_plan_fingerprint(IncPlan *p)
{
    return p->fingerprint;
}

uint64_t inc_plan_result_hash(IncPlan *p)
{
    return p->result_hash;
}

const char *inc_plan_lost_rows(IncPlan *p)
{
    if (p->graph != NULL)
        return "it runs on the operator graph, whose state is not kept across a changed "
               "definition";
    if (p->into != NULL || p->sink != NULL)
        return "its output goes INTO a stream or sink, not to a result table";
    if (p->agg == NULL)
        return "it keeps no state for its rows: they are appended as they come";
    if (p->mode == MODE_APPEND)
        return "in append mode a window's state is deleted once its row is written";
    if (p->ttl_us > 0)
        return "state_ttl deletes idle groups from its state while their rows stay";
    if (p->wkind == WINDOW_SESSION)
        return "its sessions' rows cannot be rewritten from the state";
    if (p->wkind == WINDOW_SLIDE && p->pane_us != p->size_us)
        return "its state holds a sliding window's slices, not its windows";
    if (p->wkind != WINDOW_NONE && (!p->plain || p->wm_col >= 0))
        return "the watermark deletes a closed window's state while its row stays";
    return NULL;
}

bool inc_plan_keeps_rows(IncPlan *p)
{
    return inc_plan_lost_rows(p) == NULL;
}

/* ---------------------------------------------------------------------- */
/* Meta: the batch id, watermark and state size stored with the state      */

int inc_meta_read(IncPlan *p, Arena *a, Meta *m, SlError *err)
{
    memset(m, 0, sizeof(*m));
    m->batch_id = -1;
    void *val;
    size_t vlen;
    int rc = state_get(p->st, p->meta_key, sizeof(p->meta_key), a, &val, &vlen, err);
    if (rc <= 0)
        return rc;
    size_t base = META_SIZE(p->ins.n);
    if (vlen != 25 && vlen != META_LEN && vlen != base && vlen != base + META_OPS_LEN)
        return sl_error(err, ERRCODE_DATA_CORRUPTED, "state of query \"%s\" is corrupt",
                        p->query->name);
    const uint8_t *v = val;
    m->batch_id = (int64_t)get_be64(v);
    m->has_wm = v[8] != 0;
    m->wm = (int64_t)get_be64(v + 9);
    m->state_rows = (int64_t)get_be64(v + 17);
    if (vlen >= META_LEN) {
        m->fingerprint = get_be64(v + 25);
        m->result_hash = get_be64(v + 33);
    }
    m->in_has_wm[0] = m->has_wm;
    m->in_wm[0] = m->wm;
    for (int i = 0; vlen >= base && base > META_LEN && i < p->ins.n; i++) {
        m->in_has_wm[i] = v[META_LEN + 9 * i] != 0;
        m->in_wm[i] = (int64_t)get_be64(v + META_LEN + 1 + 9 * i);
    }
    if (vlen == base + META_OPS_LEN) {
        m->has_ops = true;
        for (int o = 0; o < INC_OPS; o++) {
            const uint8_t *q = v + base + 24 * o;
            m->op[o] = (OpStat){(int64_t)get_be64(q), (int64_t)get_be64(q + 8),
                                (int64_t)get_be64(q + 16)};
        }
    }
    return 1;
}

/* The operators' rows and bytes counted from their keys, for a meta
 * written before it kept them (evicted rows start from 0). */
static int meta_recount(IncPlan *p, Meta *m, SlError *err)
{
    uint8_t prefix[5];
    memcpy(prefix, p->qprefix, sizeof(prefix));
    for (int o = 0; o < INC_OPS; o++) {
        prefix[0] = o == INC_OP_GROUPS ? 'Q' : 'J';
        OpStat *os = &m->op[o];
        *os = (OpStat){0};
        StateScan *sc = state_scan_open(p->st, prefix, sizeof(prefix));
        const void *k, *v;
        size_t klen, vlen;
        while (state_scan_next(sc, &k, &klen, &v, &vlen)) {
            os->bytes += (int64_t)(klen + vlen);
            /* a session's index entry (0xFF after the prefix) is no row */
            if (!(o == INC_OP_GROUPS && klen > 5 && ((const uint8_t *)k)[5] == 0xFF))
                os->rows++;
        }
        if (state_scan_close(sc, err) < 0)
            return -1;
    }
    m->state_rows = m->op[INC_OP_GROUPS].rows + m->op[INC_OP_JOIN].rows;
    m->has_ops = true;
    return 0;
}

void inc_meta_write(IncPlan *p, StateBatch *wb, const Meta *m)
{
    uint8_t v[META_SIZE(INC_MAX_INPUTS) + META_OPS_LEN];
    put_be64(v, (uint64_t)m->batch_id);
    v[8] = m->has_wm;
    put_be64(v + 9, (uint64_t)m->wm);
    put_be64(v + 17, (uint64_t)m->state_rows);
    put_be64(v + 25, p->fingerprint);
    put_be64(v + 33, p->result_hash);
    for (int i = 0; p->ins.n > 1 && i < p->ins.n; i++) {
        v[META_LEN + 9 * i] = m->in_has_wm[i];
        put_be64(v + META_LEN + 1 + 9 * i, (uint64_t)m->in_wm[i]);
    }
    size_t base = META_SIZE(p->ins.n);
    for (int o = 0; o < INC_OPS; o++) {
        put_be64(v + base + 24 * o, (uint64_t)m->op[o].rows);
        put_be64(v + base + 24 * o + 8, (uint64_t)m->op[o].bytes);
        put_be64(v + base + 24 * o + 16, (uint64_t)m->op[o].evicted);
    }
    state_batch_put(wb, p->meta_key, sizeof(p->meta_key), v, base + META_OPS_LEN);
}

int inc_state_log_entry(IncPlan *p, Arena *a, void **entry, size_t *len, SlError *err)
{
    uint8_t lkey[6];
    memcpy(lkey, p->meta_key, 5);
    lkey[5] = 'L';
    return state_get(p->st, lkey, sizeof(lkey), a, entry, len, err);
}

bool inc_plan_sink_outside(IncPlan *p)
{
    return p->writer != NULL;
}

/* meta_read with an arena of its own (Meta keeps no pointers into it). */
static int meta_get(IncPlan *p, Meta *m, SlError *err)
{
    Arena a;
    arena_init(&a, 256);
    int rc = inc_meta_read(p, &a, m, err);
    arena_destroy(&a);
    return rc;
}

int inc_state_rows(IncPlan *p, int64_t *rows, int64_t *bytes, SlError *err)
{
    Meta m;
    int rc = meta_get(p, &m, err);
    if (rc < 0)
        return -1;
    *rows = m.state_rows;
    /* unknown (-1) until a batch has counted them */
    *bytes = rc == 0 ? 0 : m.has_ops ? m.op[INC_OP_GROUPS].bytes + m.op[INC_OP_JOIN].bytes : -1;
    return 0;
}

/* The name of the operator whose state is in key space o, or NULL when
 * the plan keeps none there. */
static const char *op_name(const IncPlan *p, int o)
{
    if (o == INC_OP_JOIN)
        return p->sjoin != NULL ? "join" : NULL;
    return p->agg != NULL ? "aggregate" : p->distinct != NULL ? "distinct" : NULL;
}

int inc_state_ops(IncPlan *p, IncOpState *out, SlError *err)
{
    Meta m;
    int rc = meta_get(p, &m, err);
    if (rc < 0)
        return -1;
    /* Before the first batch that kept them, count them (on the loop: once
     * per query, as a batch will write them). */
    if (p->graph != NULL)
        return inc_graph_ops(p, out, INC_MAX_OP_STATES);
    if (rc == 1 && !m.has_ops && meta_recount(p, &m, err) < 0)
        return -1;
    uint64_t total = state_disk_bytes(p->st), cache = state_cache_bytes(p->st);
    int n = 0;
    for (int o = 0; o < INC_OPS; o++) {
        const char *name = op_name(p, o);
        if (name == NULL)
            continue;
        uint8_t prefix[5];
        memcpy(prefix, p->qprefix, sizeof(prefix));
        prefix[0] = o == INC_OP_GROUPS ? 'Q' : 'J';
        uint64_t disk = state_prefix_disk_bytes(p->st, prefix, sizeof(prefix));
        out[n++] = (IncOpState){
            .op = name,
            .rows = m.op[o].rows,
            .bytes = m.op[o].bytes,
            .evicted = m.op[o].evicted,
            .disk_bytes = disk,
            /* the block cache is shared by every key space: this
             * operator's share of the table files' bytes */
            .cache_bytes = total > 0 ? (uint64_t)((double)cache * (double)SL_MIN(disk, total) /
                                                  (double)total)
                                     : 0,
        };
    }
    return n;
}

int inc_state_oldest_window(IncPlan *p, bool has_wm, int64_t wm, int64_t *start_us,
                            SlError *err)
{
    if (p->agg == NULL || p->wkind == WINDOW_NONE)
        return 0;       /* the operator graph's plans too (no p->agg) */
    bool session = p->wkind == WINDOW_SESSION;
    /* Keys below the watermark less a window are gone (evicted): seek
     * past their deletions.  Sessions: the index by end, from the
     * watermark (every session kept ends after it). */
    uint8_t prefix[6], start[14];
    memcpy(prefix, p->qprefix, 5);
    prefix[5] = 0xFF;
    size_t plen = session ? 6 : 5;
    memcpy(start, prefix, plen);
    int64_t from = INT64_MIN;
    if (has_wm && session)
        from = wm;
    else if (has_wm && __builtin_sub_overflow(wm, p->size_us, &from))
        from = INT64_MIN;
    inc_time_key_put(start + plen, from);
    StateScan *sc = state_scan_open_from(p->st, prefix, plen, start, plen + 8);
    const void *k, *v;
    size_t klen, vlen;
    int rc = 0;
    while (rc == 0 && state_scan_next(sc, &k, &klen, &v, &vlen)) {
        const uint8_t *key = k;
        if (session) {
            /* 'Q' + oid + 0xFF + end + group key + start: the session that
             * closes next */
            if (klen < 6 + 8 + 8)
                continue;
            *start_us = inc_time_key_get(key + klen - 8);
        } else {
            if (klen < 5 + 8 || key[5] == 0xFF)
                continue;
            /* A slice [end - pane, end): the oldest window holding it that
             * the watermark has not closed. */
            int64_t s0 = inc_time_key_get(key + 5) - p->pane_us;
            int64_t w = ex_window_floor(s0 - p->size_us, p->slide_us) + p->slide_us;
            if (has_wm) {
                int64_t open = ex_window_floor(wm - p->size_us, p->slide_us) + p->slide_us;
                w = SL_MAX(w, SL_MIN(open, ex_window_floor(s0, p->slide_us)));
            }
            *start_us = w;
        }
        rc = 1;
        break;
    }
    if (state_scan_close(sc, err) < 0)
        return -1;
    return rc;
}

/* The state was written for another plan: never fold into it. */
int inc_check_fingerprint(IncPlan *p, const Meta *m, SlError *err)
{
    if (m->batch_id < 0 || m->fingerprint == 0 || m->fingerprint == p->fingerprint)
        return 0;
    sl_error(err, ERRCODE_DATA_CORRUPTED,
             "the state of continuous query \"%s\" was written by a different plan",
             p->query->name);
    sl_error_hint(err, "Recreate the query with CREATE OR REPLACE ... WITH (reset = true).");
    return -1;
}

/* The result table holds rows written for other columns. */
static bool result_stale(IncPlan *p, const Meta *m)
{
    return inc_plan_keeps_rows(p) && m->batch_id >= 0 && m->result_hash != 0 &&
           m->result_hash != p->result_hash;
}

int inc_state_meta(IncPlan *p, int64_t *batch_id, bool *has_watermark, int64_t *watermark_us,
                   bool *rebuild, uint64_t *rows_hash, SlError *err)
{
    Meta m;
    if (meta_get(p, &m, err) < 0 || inc_check_fingerprint(p, &m, err) < 0)
        return -1;
    *batch_id = m.batch_id;
    *has_watermark = m.has_wm;
    *watermark_us = m.wm;
    *rebuild = result_stale(p, &m);
    *rows_hash = m.result_hash;
    return 0;
}

/* ---------------------------------------------------------------------- */
/* Filter / project chains, evaluated a batch at a time                    */

/* Runs chain[n-1] .. chain[0] (bottom first) over in; rowmap (when not
 * NULL) gets, per output row, the input row it came from. */
static int run_chain(Plan *const *chain, int n, const Batch *in, Arena *a, EvalCtx *ecx,
                     const Batch **out, uint32_t **rowmap)
{
    const Batch *cur = in;
    uint32_t *map = NULL;
    if (rowmap) {
        map = ARENA_ARRAY(a, uint32_t, in->nrows ? in->nrows : 1);
        for (uint32_t i = 0; i < in->nrows; i++)
            map[i] = i;
    }
    for (int i = n - 1; i >= 0; i--) {
        Plan *node = chain[i];
        if (node->kind == PLAN_FILTER) {
            Vector cond;
            if (ex_eval(ecx, node->u.filter.cond, cur, cur->nrows, &cond) < 0)
                return -1;
            ExBatch eb = {*cur, ARENA_ARRAY(a, uint32_t, cur->nrows ? cur->nrows : 1), 0};
            for (uint32_t r = 0; r < cur->nrows; r++)
                if (!vector_is_null(&cond, r) && cond.v.b[r])
                    eb.sel[eb.n++] = r;
            if (map)
                for (uint32_t k = 0; k < eb.n; k++)
                    map[k] = map[eb.sel[k]];
            cur = ex_batch_compact(a, &eb);
        } else if (node->kind == PLAN_PROJECT) {
            Batch *nb = ARENA_NEW(a, Batch);
            nb->ncols = (uint32_t)node->ncols;
            nb->nrows = cur->nrows;
            nb->cols = ARENA_ARRAY(a, Vector, node->ncols > 0 ? node->ncols : 1);
            for (int c = 0; c < node->ncols; c++)
                if (ex_eval(ecx, node->u.project.exprs[c], cur, cur->nrows, &nb->cols[c]) < 0)
                    return -1;
            cur = nb;
        }
        /* PLAN_SORT (complete mode only): the result table has no order. */
    }
    *out = cur;
    if (rowmap)
        *rowmap = map;
    return 0;
}

/* ---------------------------------------------------------------------- */
/* Groups of one batch: a hash table over the group keys                   */

static void gt_grow(GroupTable *t, Arena *a)
{
    uint32_t nb = t->nbuckets ? t->nbuckets * 2 : 1024;
    Group **b = arena_zalloc(a, sizeof(Group *) * nb);
    for (Group *g = t->all; g != NULL; g = g->all) {
        uint32_t h = (uint32_t)ex_hash(g->key.ptr, g->key.len) & (nb - 1);
        g->next = b[h];
        b[h] = g;
    }
    t->buckets = b;
    t->nbuckets = nb;
}

Group *inc_gt_find(const GroupTable *t, const char *key, size_t klen, uint64_t hash)
{
    if (t->nbuckets == 0)
        return NULL;
    for (Group *g = t->buckets[hash & (t->nbuckets - 1)]; g != NULL; g = g->next)
        if (g->key.len == klen && memcmp(g->key.ptr, key, klen) == 0)
            return g;
    return NULL;
}

/* Adds g to the table (its key is not there yet). */
void inc_gt_add(GroupTable *t, Arena *a, Group *g)
{
    if (t->n >= t->nbuckets)
        gt_grow(t, a);
    uint32_t hb = (uint32_t)ex_hash(g->key.ptr, g->key.len) & (t->nbuckets - 1);
    g->next = t->buckets[hb];
    t->buckets[hb] = g;
    if (t->last)
        t->last->all = g;
    else
        t->all = g;
    t->last = g;
    t->n++;
}

/* State value: varint-free layout: with state_ttl, the time the group was
 * last touched (8); for a session, its end (8); u32 length of the group values, the group values, then
 * per aggregate u32 length + its serialized state. */
void inc_state_encode(IncPlan *p, const Group *g, StrBuf *out)
{
    uint8_t l4[4], l8[8];
    if (p->ttl_us > 0) {
        put_be64(l8, (uint64_t)g->touched_us);
        strbuf_append(out, l8, 8);
    }
    if (p->wkind == WINDOW_SESSION) {
        put_be64(l8, (uint64_t)g->wend);
        strbuf_append(out, l8, 8);
    }
    if (p->agg == NULL)
        return;     /* DISTINCT: the key is the state */
    put_be32(l4, (uint32_t)g->gvlen);
    strbuf_append(out, l4, 4);
    strbuf_append(out, g->groupvals, g->gvlen);
    StrBuf s;
    strbuf_init(&s);
    for (int i = 0; i < p->agg->u.agg.naggs; i++) {
        strbuf_reset(&s);
        p->fns[i]->serialize(p->fns[i], g->states + p->state_off[i], &s);
        put_be32(l4, (uint32_t)s.len);
        strbuf_append(out, l4, 4);
        strbuf_append(out, s.data, s.len);
    }
    strbuf_free(&s);
}

int inc_state_decode(IncPlan *p, Group *g, const uint8_t *v, size_t n, AggCtx *acx)
{
    const uint8_t *end = v + n;
    g->stored = true;
    g->stored_vlen = (uint32_t)n;
    if (p->ttl_us > 0) {
        if (n < 8)
            goto corrupt;
        g->touched_us = (int64_t)get_be64(v);
        v += 8;
        n -= 8;
    }
    if (p->wkind == WINDOW_SESSION) {
        if (n < 8)
            goto corrupt;
        g->wend = (int64_t)get_be64(v);
        v += 8;
        n -= 8;
    }
    if (p->agg == NULL)
        return n == 0 ? 0 : sl_error(acx->err, ERRCODE_DATA_CORRUPTED,
                                     "state of query \"%s\" is corrupt", p->query->name);
    if (n < 4 || get_be32(v) > n - 4)
        goto corrupt;
    g->gvlen = get_be32(v);
    g->groupvals = arena_memdup(acx->arena, v + 4, g->gvlen);
    v += 4 + g->gvlen;
    for (int i = 0; i < p->agg->u.agg.naggs; i++) {
        if (end - v < 4 || get_be32(v) > (size_t)(end - v) - 4)
            goto corrupt;
        uint32_t len = get_be32(v);
        acx->type = p->agg->u.agg.aggs[i].type;
        if (p->fns[i]->deserialize(acx, p->fns[i], g->states + p->state_off[i], v + 4, len) < 0)
            return -1;
        v += 4 + len;
    }
    if (v == end)
        return 0;
corrupt:
    return sl_error(acx->err, ERRCODE_DATA_CORRUPTED, "state of query \"%s\" is corrupt",
                    p->query->name);
}

uint8_t *inc_states_new(Run *r)
{
    return arena_zalloc(r->a, r->p->state_size ? r->p->state_size : 1);
}

int inc_states_merge(Run *r, uint8_t *dst, const uint8_t *src)
{
    IncPlan *p = r->p;
    for (int i = 0; i < p->agg->u.agg.naggs; i++) {
        r->acx.type = p->agg->u.agg.aggs[i].type;
        if (p->fns[i]->merge(&r->acx, dst + p->state_off[i], src + p->state_off[i]) < 0)
            return -1;
    }
    return 0;
}

/* Reads the state under key into g (1), or 0 when there is none. */
static int gt_read(Run *r, Group *g, const char *key, size_t klen)
{
    IncPlan *p = r->p;
    /* A key later than every key in state is new: no read (in-order data
     * makes nearly every new window or slice such a key). */
    if (r->time_keys && klen >= 8 && inc_time_key_get((const uint8_t *)key) > r->hi_time)
        return 0;
    StrBuf sk;
    strbuf_init(&sk);
    strbuf_append(&sk, p->qprefix, sizeof(p->qprefix));
    strbuf_append(&sk, key, klen);
    void *val;
    size_t vlen;
    int rc = state_get(p->st, sk.data, sk.len, r->a, &val, &vlen, r->err);
    strbuf_free(&sk);
    if (rc == 1 && inc_state_decode(p, g, val, vlen, &r->acx) < 0)
        return -1;
    if (rc == 1 && p->ttl_us > 0 && g->touched_us <= r->b->now_us - p->ttl_us) {
        /* Idle for state_ttl when a row touches it again: it starts afresh
         * (the same rule as inc_evict_idle's, judged now, so the result does
         * not depend on whether a batch ran in between). */
        inc_state_delete(r, g, true);
        g->stored = false;
        g->stored_vlen = 0;
        g->states = inc_states_new(r);
        return 0;
    }
    return rc;
}

static Group *gt_new(Run *r, const char *key, size_t klen, int64_t wstart, int64_t wend)
{
    Group *g = ARENA_NEW(r->a, Group);
    g->key.ptr = arena_memdup(r->a, key, klen);
    g->key.len = (uint32_t)klen;
    g->wstart = wstart;
    g->wend = wend;
    g->states = inc_states_new(r);
    return g;
}

Group *inc_gt_load(Run *r, const char *key, size_t klen)
{
    Group *g = inc_gt_find(&r->groups, key, klen, ex_hash(key, klen));
    if (g != NULL)
        return g;
    /* Keys start with their time: a slice's (window's) end, a key's event time. */
    int64_t end = klen >= 8 ? inc_time_key_get((const uint8_t *)key) : 0;
    g = gt_new(r, key, klen, end - r->p->pane_us, end);
    int rc = gt_read(r, g, key, klen);
    if (rc < 0)
        return NULL;
    g->absent = rc == 0;
    inc_gt_add(&r->groups, r->a, g);
    return g;
}

void inc_groupvals_set(Run *r, Group *g, const Vector *gcols, int ngroups, uint32_t row)
{
    Arena *a = r->a;
    Batch gb = {1, (uint32_t)ngroups, ARENA_ARRAY(a, Vector, ngroups > 0 ? ngroups : 1)};
    for (int c = 0; c < ngroups; c++) {
        vector_init(&gb.cols[c], a, gcols[c].type, 1, true);
        gb.cols[c].nulls[0] = vector_is_null(&gcols[c], row);
        if (!gb.cols[c].nulls[0])
            ex_copy_value(&gb.cols[c], 0, &gcols[c], row, NULL);
    }
    StrBuf gv;
    strbuf_init(&gv);
    row_encode(&gb, 0, &gv);
    g->groupvals = arena_memdup(a, gv.data, gv.len);
    g->gvlen = gv.len;
    strbuf_free(&gv);
}

Group *inc_gt_get(Run *r, const StrBuf *key, int64_t wstart, int64_t wend, const Vector *gcols,
                  int ngroups, uint32_t row)
{
    GroupTable *t = &r->groups;
    Group *g = inc_gt_find(t, key->data, key->len, ex_hash(key->data, key->len));
    if (g != NULL && !g->absent)
        return g;
    if (g == NULL) {
        g = gt_new(r, key->data, key->len, wstart, wend);
        int rc = gt_read(r, g, key->data, key->len);
        if (rc < 0)
            return NULL;
        g->absent = rc == 0;
        inc_gt_add(&r->groups, r->a, g);
    }
    g->wstart = wstart;
    g->wend = wend;
    if (g->absent) {
        /* New: keep its group values. */
        inc_groupvals_set(r, g, gcols, ngroups, row);
        g->absent = false;
        t->created++;
        g->fresh = true;
    }
    return g;
}

/* ---------------------------------------------------------------------- */
/* A micro-batch                                                           */

/* A copy of b in the batch's arena (b's memory may be a chunk's). */
static Batch *keep_copy(Run *r, const Batch *out)
{
    Arena *a = r->a;
    Batch *b = ARENA_NEW(a, Batch);
    b->ncols = out->ncols;
    b->nrows = out->nrows;
    b->cols = ARENA_ARRAY(a, Vector, out->ncols ? out->ncols : 1);
    for (uint32_t c = 0; c < out->ncols; c++) {
        vector_init(&b->cols[c], a, out->cols[c].type, out->nrows, true);
        for (uint32_t i = 0; i < out->nrows; i++) {
            b->cols[c].nulls[i] = vector_is_null(&out->cols[c], i);
            if (!b->cols[c].nulls[i])
                ex_copy_value(&b->cols[c], i, &out->cols[c], i, a);
        }
    }
    return b;
}

static void push_batch(Arena *a, Batch ***bs, int *n, int *cap, Batch *b)
{
    if (*n == *cap) {
        int nc = *cap ? *cap * 2 : 8;
        Batch **more = ARENA_ARRAY(a, Batch *, nc);
        if (*n)
            memcpy(more, *bs, sizeof(Batch *) * (size_t)*n);
        *bs = more;
        *cap = nc;
    }
    (*bs)[(*n)++] = b;
}

static int record_stored(Run *r, const StrBuf *key, char kind);

void inc_record_change(Run *r, char kind, const Batch *out, uint32_t i)
{
    if (!r->b->want_changes)
        return;
    StrBuf *ch = &r->b->changes;
    uint8_t h[5];
    h[0] = (uint8_t)kind;
    size_t at = ch->len;
    strbuf_append(ch, h, sizeof(h));
    row_encode(out, i, ch);
    put_be32((uint8_t *)ch->data + at + 1, (uint32_t)(ch->len - at - 5));
}

/* SUBSCRIBE: a row leaving the result table (HAVING filters its group out
 * now, a session merged away or moved) is a 'D' change with the row it
 * had, if it had one.  key: the result table's key ('T' + oid + ...). */
int inc_record_delete(Run *r, const StrBuf *key)
{
    return record_stored(r, key, 'D');
}

/* The row the result table holds under key, as a record of kind ('D': it
 * leaves; 'O': the old value of an update, for the changelog). */
static int record_stored(Run *r, const StrBuf *key, char kind)
{
    if (!r->b->want_changes)
        return 0;
    void *old;
    size_t len;
    int rc = state_get(r->p->st, key->data, key->len, r->chunk, &old, &len, r->err);
    if (rc <= 0)
        return rc;
    uint8_t h[5];
    h[0] = (uint8_t)kind;
    put_be32(h + 1, (uint32_t)len);
    strbuf_append(&r->b->changes, h, sizeof(h));
    strbuf_append(&r->b->changes, old, len);
    return 0;
}

void inc_keep_output(Run *r, const Batch *out)
{
    if (out->nrows == 0)
        return;
    for (uint32_t i = 0; i < out->nrows; i++)
        inc_record_change(r, 'I', out, i);
    push_batch(r->a, &r->outs, &r->nouts, &r->capouts, keep_copy(r, out));
    r->b->output_rows += out->nrows;
}

/* INTO a keyed Kafka sink: the rows of ab (the aggregate's output: group
 * values, window bounds, aggregates) whose kept[i] is 0 (kept NULL: every
 * row) left the result; their output columns that are aggregate columns
 * (the keys) go to the sink as tombstones, after those of earlier calls. */
static void keep_gone(Run *r, const Batch *ab, const uint8_t *kept, uint32_t gone)
{
    Arena *a = r->a;
    const CatRelation *q = r->p->query;
    uint32_t n = ab->nrows, ncols = (uint32_t)q->ncols;
    if (gone == 0)
        return;
    Batch *d = ARENA_NEW(a, Batch);
    d->ncols = ncols;
    d->cols = ARENA_ARRAY(a, Vector, ncols ? ncols : 1);
    for (uint32_t c = 0; c < ncols; c++)
        vector_init(&d->cols[c], a, q->cols[c].type, gone, true);
    for (uint32_t i = 0; i < n; i++) {
        if (kept != NULL && kept[i])
            continue;
        for (uint32_t c = 0; c < ncols; c++) {
            int src = r->p->out_src[c];
            d->cols[c].nulls[d->nrows] = 1;
            if (src >= 0 && !vector_is_null(&ab->cols[src], i)) {
                d->cols[c].nulls[d->nrows] = 0;
                ex_copy_value(&d->cols[c], d->nrows, &ab->cols[src], i, a);
            }
        }
        d->nrows++;
    }
    for (uint32_t c = 0; c < ncols; c++)
        d->cols[c].len = d->nrows;
    Batch **more = ARENA_ARRAY(a, Batch *, r->ndels + 1);
    if (r->ndels)
        memcpy(more, r->dels, sizeof(Batch *) * (size_t)r->ndels);
    more[r->ndels++] = d;
    r->dels = more;
}

/* INTO a Kafka sink: the groups of ab that the upper chain filtered out
 * (HAVING) left the result. */
static void keep_deleted(Run *r, const Batch *ab, const Batch *out, const uint32_t *map,
                         uint32_t n)
{
    uint8_t *kept = arena_zalloc(r->a, n ? n : 1);
    uint32_t gone = n;
    for (uint32_t i = 0; i < out->nrows; i++) {
        uint32_t g = map ? map[i] : i;
        gone -= !kept[g];
        kept[g] = 1;
    }
    keep_gone(r, ab, kept, gone);
}

/* Tracks event time over the stream's rows, for the watermark. */
static void track_event_time(Run *r, const Batch *in)
{
    IncPlan *p = r->p;
    if (p->wm_col < 0)
        return;
    const Vector *v = &in->cols[p->wm_col];
    for (uint32_t i = 0; i < in->nrows; i++) {
        if (vector_is_null(v, i))
            continue;
        int64_t t = v->v.i64[i];
        if (r->b->min_event_us == INT64_MAX || t < r->b->min_event_us)
            r->b->min_event_us = t;
        if (r->b->max_event_us == INT64_MIN || t > r->b->max_event_us)
            r->b->max_event_us = t;
    }
}

/* Appends the rows of out to the result table's log: chunks keyed (batch
 * id, chunk number), put into the batch's write as they fill
 * (result_log_add; the last one at the end of the batch). */
static void emit_append_log(Run *r, const Batch *out)
{
    if (r->p->into != NULL || r->p->sink != NULL) {
        inc_keep_output(r, out);
        return;
    }
    result_log_add(&r->log, r->wb, out);
    for (uint32_t i = 0; i < out->nrows; i++)
        inc_record_change(r, 'I', out, i);
    r->b->output_rows += out->nrows;
}

int inc_emit_rows(Run *r, const Batch *rows)
{
    const Batch *out;
    if (run_chain(r->p->upper, r->p->nupper, rows, r->chunk, &r->ecx, &out, NULL) < 0)
        return -1;
    emit_append_log(r, out);
    return 0;
}

/* Folds the rows of one dense batch (the aggregate's input) into groups.
 * late gets, per row, whether it was late (every window it belongs to had
 * closed before the batch). */
static int aggregate(Run *r, const Batch *in, uint8_t *late)
{
    IncPlan *p = r->p;
    const Plan *agg = p->agg;
    int ng = agg->u.agg.ngroups, na = agg->u.agg.naggs;
    uint32_t n = in->nrows;
    memset(late, 0, n);
    if (n == 0)
        return 0;
    Arena *a = r->chunk;
    Vector *gcols = ARENA_ARRAY(a, Vector, ng > 0 ? ng : 1);
    for (int c = 0; c < ng; c++)
        if (ex_eval(&r->ecx, agg->u.agg.groups[c], in, n, &gcols[c]) < 0)
            return -1;
    /* Each aggregate's argument vectors and the rows it takes. */
    Vector **args = ARENA_ARRAY(a, Vector *, na > 0 ? na : 1);
    uint8_t **take = ARENA_ARRAY(a, uint8_t *, na > 0 ? na : 1);
    for (int i = 0; i < na; i++) {
        const AggCall *call = &agg->u.agg.aggs[i];
        args[i] = ARENA_ARRAY(a, Vector, call->nargs > 0 ? call->nargs : 1);
        for (int k = 0; k < call->nargs; k++)
            if (ex_eval(&r->ecx, call->args[k], in, n, &args[i][k]) < 0)
                return -1;
        take[i] = arena_alloc(a, n);
        memset(take[i], 1, n);
        if (call->filter) {
            Vector f;
            if (ex_eval(&r->ecx, call->filter, in, n, &f) < 0)
                return -1;
            for (uint32_t row = 0; row < n; row++)
                take[i][row] = !vector_is_null(&f, row) && f.v.b[row];
        }
        if (call->nargs > 0 && !call->star)
            for (uint32_t row = 0; row < n; row++)
                if (vector_is_null(&args[i][0], row))
                    take[i][row] = 0;
    }
    Vector tv;
    if (p->wkind != WINDOW_NONE && ex_eval(&r->ecx, agg->u.agg.window.time, in, n, &tv) < 0)
        return -1;
    if (p->wkind == WINDOW_SESSION)
        return inc_session_aggregate(r, in, &tv, gcols, args, take, late);
    /* Each row updates one group: its slice of the window (tumbling: the
     * window; sliding: the pane of gcd(size, slide) that holds it), so a
     * row costs one update whatever size/slide is. */
    uint8_t **states = ARENA_ARRAY(a, uint8_t *, n);
    uint32_t *sel = ARENA_ARRAY(a, uint32_t, n);
    uint32_t nsel = 0;
    StrBuf key;
    strbuf_init(&key);
    int rc = 0;
    for (uint32_t row = 0; row < n; row++) {
        int64_t ps = 0, pe = 0;
        if (p->wkind != WINDOW_NONE) {
            if (vector_is_null(&tv, row))
                continue;   /* no window: not late, just not counted */
            int64_t t = tv.v.i64[row];
            int64_t last_end = ex_window_floor(t, p->slide_us) + p->size_us;
            if (t >= last_end)
                continue;   /* between two hopping windows: in none */
            if (r->b->has_watermark && last_end <= r->b->watermark_us) {
                late[row] = 1;  /* every window that holds it has closed */
                continue;
            }
            ps = ex_window_floor(t, p->pane_us);
            pe = ps + p->pane_us;
        }
        strbuf_reset(&key);
        uint8_t wk[8];
        inc_time_key_put(wk, pe);
        strbuf_append(&key, wk, 8);
        ex_key_encode(gcols, ng, row, &key);
        Group *g = inc_gt_get(r, &key, ps, pe, gcols, ng, row);
        if (g == NULL) {
            rc = -1;
            break;
        }
        g->dirty = true;
        g->touched_us = r->b->now_us;
        states[row] = g->states;
        sel[nsel++] = row;
    }
    for (int i = 0; i < na && rc == 0; i++) {
        uint32_t *s = ARENA_ARRAY(a, uint32_t, nsel ? nsel : 1);
        uint8_t **st = ARENA_ARRAY(a, uint8_t *, n);
        uint32_t m = 0;
        for (uint32_t k = 0; k < nsel; k++) {
            uint32_t row = sel[k];
            st[row] = states[row] + p->state_off[i];
            if (take[i][row])
                s[m++] = row;
        }
        r->acx.type = agg->u.agg.aggs[i].type;
        if (m > 0 && p->fns[i]->update(&r->acx, args[i], st, s, m) < 0)
            rc = -1;
    }
    strbuf_free(&key);
    return rc;
}

/* The output rows of a list of groups: the aggregate's columns (groups,
 * window bounds, aggregates) through the upper chain, then into the result
 * table under each group's key. */
/* SUBSCRIBE: the kind of each output row of inc_emit_groups: insert for a
 * new group (or in append mode), update for one already in the result
 * table; with HAVING a group may have been out of it, so the table says. */
static int record_kept(Run *r, Group **gs, const Batch *out, const uint32_t *map)
{
    IncPlan *p = r->p;
    bool having = false;
    for (int k = 0; k < p->nupper; k++)
        having |= p->upper[k]->kind == PLAN_FILTER;
    StrBuf key;
    strbuf_init(&key);
    int rc = 0;
    for (uint32_t i = 0; i < out->nrows && rc == 0; i++) {
        Group *g = gs[map[i]];
        char kind = g->fresh || p->mode == MODE_APPEND ? 'I' : 'U';
        /* A group state_ttl evicted is new to the state, but its row stayed
         * in the result table. */
        if ((kind == 'U' && having) || (kind == 'I' && p->mode != MODE_APPEND && p->ttl_us > 0)) {
            void *old;
            size_t len;
            strbuf_reset(&key);
            strbuf_append(&key, p->tprefix, sizeof(p->tprefix));
            strbuf_append(&key, g->key.ptr, g->key.len);
            rc = state_get(p->st, key.data, key.len, r->chunk, &old, &len, r->err);
            kind = rc == 1 ? 'U' : 'I';
        }
        /* The changelog takes an update as its old row out, the new in. */
        if (rc >= 0 && kind == 'U' && r->b->cl_on) {
            strbuf_reset(&key);
            strbuf_append(&key, p->tprefix, sizeof(p->tprefix));
            strbuf_append(&key, g->key.ptr, g->key.len);
            rc = record_stored(r, &key, 'O');
        }
        if (rc >= 0) {
            inc_record_change(r, kind, out, i);
            rc = 0;
        }
    }
    strbuf_free(&key);
    return rc;
}

/* The aggregate's output rows of groups gs (group values, window bounds,
 * aggregates), in r->a.  With stored: the row a session was stored as --
 * the start of its stored key, its stored end -- and no aggregates (NULL). */
static int group_rows(Run *r, Group **gs, uint32_t n, bool stored, Batch **abp)
{
    IncPlan *p = r->p;
    const Plan *agg = p->agg;
    int ng = agg->u.agg.ngroups, na = agg->u.agg.naggs;
    bool win = agg->u.agg.window.kind != WINDOW_NONE;
    Arena *a = r->a;
    SlType *gtypes = ARENA_ARRAY(a, SlType, ng > 0 ? ng : 1);
    for (int c = 0; c < ng; c++)
        gtypes[c] = agg->cols[c].type;
    Batch *gv = batch_alloc(a, gtypes, (uint32_t)ng, n);
    Batch *ab = ARENA_NEW(a, Batch);
    ab->ncols = (uint32_t)agg->ncols;
    ab->nrows = n;
    ab->cols = ARENA_ARRAY(a, Vector, agg->ncols);
    for (int c = 0; c < agg->ncols; c++)
        vector_init(&ab->cols[c], a, agg->cols[c].type, n, true);
    for (uint32_t i = 0; i < n; i++) {
        if (row_decode(gs[i]->groupvals, gs[i]->gvlen, gv, i, a) < 0)
            return sl_error(r->err, ERRCODE_DATA_CORRUPTED, "state of query \"%s\" is corrupt",
                            p->query->name);
        int c = 0;
        for (; c < ng; c++) {
            ab->cols[c].nulls[i] = gv->cols[c].nulls[i];
            if (!gv->cols[c].nulls[i])
                ex_copy_value(&ab->cols[c], i, &gv->cols[c], i, NULL);
        }
        if (win) {
            const Group *g = gs[i];
            ab->cols[c].nulls[i] = 0;
            ab->cols[c].v.i64[i] = stored ? inc_time_key_get((const uint8_t *)g->orig.ptr +
                                                             g->orig.len - 8)
                                          : g->wstart;
            ab->cols[c + 1].nulls[i] = 0;
            ab->cols[c + 1].v.i64[i] = stored ? g->orig_end : g->wend;
            c += 2;
        }
        for (int k = 0; k < na && !stored; k++, c++) {
            r->acx.type = agg->u.agg.aggs[k].type;
            ab->cols[c].nulls[i] = 0;
            if (p->fns[k]->final(&r->acx, gs[i]->states + p->state_off[k], &ab->cols[c], i) < 0)
                return -1;
        }
    }
    for (int c = 0; c < agg->ncols; c++)
        ab->cols[c].len = n;
    gv->nrows = n;
    *abp = ab;
    return 0;
}

void inc_sink_key_window(IncPlan *p, bool *start, bool *end)
{
    *start = *end = false;
    if (p->writer == NULL || !sink_wants_deletes(p->writer) || p->agg == NULL ||
        p->agg->u.agg.window.kind == WINDOW_NONE)
        return;
    const int *cols;
    int nkey = sink_key(p->writer, &cols), ng = p->agg->u.agg.ngroups;
    for (int i = 0; i < nkey; i++) {
        *start |= p->out_src[cols[i]] == ng;
        *end |= p->out_src[cols[i]] == ng + 1;
    }
}

int inc_emit_deletes(Run *r, Group **gs, uint32_t n)
{
    if (n == 0 || r->p->writer == NULL || !sink_wants_deletes(r->p->writer))
        return 0;
    Batch *ab;
    if (group_rows(r, gs, n, true, &ab) < 0)
        return -1;
    keep_gone(r, ab, NULL, n);
    return 0;
}

int inc_emit_groups(Run *r, Group **gs, uint32_t n)
{
    if (n == 0)
        return 0;
    IncPlan *p = r->p;
    Arena *a = r->a;
    Batch *ab;
    if (group_rows(r, gs, n, false, &ab) < 0)
        return -1;
    const Batch *out;
    uint32_t *map;
    if (run_chain(p->upper, p->nupper, ab, a, &r->ecx, &out, &map) < 0)
        return -1;
    if (p->writer != NULL && sink_wants_deletes(p->writer))
        keep_deleted(r, ab, out, map, n);
    if (p->into != NULL || p->sink != NULL) {
        inc_keep_output(r, out);
        return 0;
    }
    /* A group whose row HAVING now filters out leaves the result table. */
    StrBuf key;
    strbuf_init(&key);
    if (r->b->want_changes && record_kept(r, gs, out, map) < 0) {
        strbuf_free(&key);
        return -1;
    }
    uint8_t *kept = arena_zalloc(a, n);
    for (uint32_t i = 0; i < out->nrows; i++) {
        Group *g = gs[map[i]];
        kept[map[i]] = 1;
        strbuf_reset(&key);
        strbuf_append(&key, p->tprefix, sizeof(p->tprefix));
        strbuf_append(&key, g->key.ptr, g->key.len);
        tbl_put(r->wb, &key, out, i);
    }
    for (uint32_t i = 0; i < n; i++) {
        if (kept[i])
            continue;
        strbuf_reset(&key);
        strbuf_append(&key, p->tprefix, sizeof(p->tprefix));
        strbuf_append(&key, gs[i]->key.ptr, gs[i]->key.len);
        if ((!gs[i]->fresh || p->ttl_us > 0) && inc_record_delete(r, &key) < 0) {
            strbuf_free(&key);
            return -1;
        }
        tbl_delete(r->wb, &key);
    }
    r->b->output_rows += out->nrows;
    strbuf_free(&key);
    return 0;
}

void inc_push_group(Arena *a, Group ***gs, uint32_t *n, uint32_t *cap, Group *g)
{
    if (*n == *cap) {
        uint32_t nc = *cap ? *cap * 2 : 64;
        Group **more = ARENA_ARRAY(a, Group *, nc);
        if (*n)
            memcpy(more, *gs, sizeof(Group *) * *n);
        *gs = more;
        *cap = nc;
    }
    (*gs)[(*n)++] = g;
}

void inc_state_delete(Run *r, const Group *g, bool evict)
{
    StrBuf key;
    strbuf_init(&key);
    strbuf_append(&key, r->p->qprefix, sizeof(r->p->qprefix));
    strbuf_append(&key, g->key.ptr, g->key.len);
    state_batch_delete(r->wb, key.data, key.len);
    if (g->stored)
        r->dbytes -= (int64_t)(key.len + g->stored_vlen);
    strbuf_free(&key);
    r->deleted++;
    if (evict)
        r->b->evicted_rows++;
}

void inc_state_put_bytes(Run *r, size_t klen, size_t vlen, int64_t old_vlen)
{
    r->dbytes += (int64_t)(klen + vlen);
    if (old_vlen >= 0)
        r->dbytes -= (int64_t)klen + old_vlen;
}

int inc_load_closed(Run *r, int64_t to)
{
    IncPlan *p = r->p;
    /* Every key whose time was at or below the batch's watermark less a
     * window was deleted by an earlier batch: start after them, so the scan
     * does not walk their tombstones again (RocksDB keeps deleted keys until
     * compaction drops them). */
    int64_t from;
    if (!r->b->has_watermark || __builtin_sub_overflow(r->b->watermark_us, p->size_us, &from))
        from = INT64_MIN;
    return inc_load_range(r, from, to);
}

int inc_load_range(Run *r, int64_t from, int64_t to)
{
    IncPlan *p = r->p;
    uint8_t start[13];
    memcpy(start, p->qprefix, 5);
    inc_time_key_put(start + 5, from);
    StateScan *s = state_scan_open_from(p->st, p->qprefix, sizeof(p->qprefix), start,
                                        sizeof(start));
    const void *k, *v;
    size_t klen, vlen;
    while (state_scan_next(s, &k, &klen, &v, &vlen)) {
        if (klen < 5 + 8)
            continue;
        const char *gk = (const char *)k + 5;
        size_t gklen = klen - 5;
        int64_t end = inc_time_key_get((const uint8_t *)gk);
        if (end > to)
            break;
        if (inc_gt_find(&r->groups, gk, gklen, ex_hash(gk, gklen)) != NULL)
            continue;
        Group *g = gt_new(r, gk, gklen, end - p->pane_us, end);
        if (inc_state_decode(p, g, v, vlen, &r->acx) < 0) {
            state_scan_close(s, r->err);
            return -1;
        }
        g->wend = end;
        inc_gt_add(&r->groups, r->a, g);
    }
    return state_scan_close(s, r->err);
}

/* Append mode, tumbling windows: the groups of windows that ended at or
 * before the new watermark, in memory or only in the state store, are
 * emitted once and their state deleted. */
static int evict_closed(Run *r, int64_t wm)
{
    uint32_t cap = 0, n = 0;
    Group **gs = NULL;
    if (inc_load_closed(r, wm) < 0)
        return -1;
    for (Group *g = r->groups.all; g != NULL; g = g->all)
        if (!g->absent && g->wend <= wm)
            inc_push_group(r->a, &gs, &n, &cap, g);
    if (inc_emit_groups(r, gs, n) < 0)
        return -1;
    for (uint32_t i = 0; i < n; i++) {
        gs[i]->evict = true;
        inc_state_delete(r, gs[i], true);
    }
    return 0;
}

/* Deletes every row of the result table, in the batch's write (the rows
 * the batch emits after this replace them). */
static int clear_result(Run *r)
{
    StateScan *s = state_scan_open(r->p->st, r->p->tprefix, sizeof(r->p->tprefix));
    const void *k, *v;
    size_t klen, vlen;
    while (state_scan_next(s, &k, &klen, &v, &vlen))
        state_batch_delete(r->wb, k, klen);
    return state_scan_close(s, r->err);
}

/* Loads every group the state holds that the batch has not (a rebuild of
 * the result table).  Unlike inc_load_closed it reads the whole key space:
 * an unwindowed group's key starts with its group values, not a time. */
static int load_all(Run *r)
{
    IncPlan *p = r->p;
    StateScan *s = state_scan_open(p->st, p->qprefix, sizeof(p->qprefix));
    const void *k, *v;
    size_t klen, vlen;
    while (state_scan_next(s, &k, &klen, &v, &vlen)) {
        const char *gk = (const char *)k + 5;
        size_t gklen = klen - 5;
        if (inc_gt_find(&r->groups, gk, gklen, ex_hash(gk, gklen)) != NULL)
            continue;
        int64_t end = p->wkind != WINDOW_NONE && gklen >= 8
                          ? inc_time_key_get((const uint8_t *)gk) : 0;
        Group *g = gt_new(r, gk, gklen, end - p->pane_us, end);
        if (inc_state_decode(p, g, v, vlen, &r->acx) < 0) {
            state_scan_close(s, r->err);
            return -1;
        }
        inc_gt_add(&r->groups, r->a, g);
    }
    return state_scan_close(s, r->err);
}

/* Update and complete mode: the slices (tumbling: windows) whose last
 * window has closed leave the state after their rows were written; a row
 * for them would be late, so nothing reads them again.  This bounds the
 * state as append mode's eviction does. */
static int evict_passed(Run *r, int64_t wm)
{
    IncPlan *p = r->p;
    if (inc_load_closed(r, wm) < 0)
        return -1;
    for (Group *g = r->groups.all; g != NULL; g = g->all) {
        if (g->absent || g->evict || g->wend > wm ||
            ex_window_floor(g->wstart, p->slide_us) + p->size_us > wm)
            continue;
        g->evict = true;
        inc_state_delete(r, g, true);
    }
    return 0;
}

/* state_ttl: groups of an unwindowed aggregation that no row touched for
 * ttl (in batch time) leave the state; their rows stay in the result
 * table, as Spark's and Flink's state TTL leave emitted results alone. */
int inc_evict_idle(Run *r)
{
    IncPlan *p = r->p;
    int64_t cutoff = r->b->now_us - p->ttl_us;
    StateScan *s = state_scan_open(p->st, p->qprefix, sizeof(p->qprefix));
    const void *k, *v;
    size_t klen, vlen;
    while (state_scan_next(s, &k, &klen, &v, &vlen)) {
        if (klen < 5 + 8 || vlen < 8)
            continue;
        const char *gk = (const char *)k + 5;
        size_t gklen = klen - 5;
        Group *g = inc_gt_find(&r->groups, gk, gklen, ex_hash(gk, gklen));
        if (g != NULL && g->dirty)
            continue;
        if ((int64_t)get_be64(v) > cutoff)
            continue;
        Group tmp = {.key = {(char *)gk, (uint32_t)gklen}, .stored = true,
                     .stored_vlen = (uint32_t)vlen};
        inc_state_delete(r, &tmp, true);
    }
    return state_scan_close(s, r->err);
}

static int group_key_cmp(const void *x, const void *y)
{
    const Group *a = *(Group *const *)x, *b = *(Group *const *)y;
    int c = memcmp(a->key.ptr, b->key.ptr, SL_MIN(a->key.len, b->key.len));
    return c != 0 ? c : (a->key.len > b->key.len) - (a->key.len < b->key.len);
}

/* Sorts groups by key (distinct keys).  Puts into one WriteBatch in key
 * order cost RocksDB's memtable far less than in hash order: each insert
 * starts where the last one ended (the skip list's sequential splice)
 * instead of walking the list from the top and missing the cache. */
void inc_groups_sort(Group **gs, uint32_t n)
{
    qsort(gs, n, sizeof(Group *), group_key_cmp);
}

/* Writes the changed groups' states back, one put each, in key order. */
void inc_write_states(Run *r)
{
    IncPlan *p = r->p;
    StrBuf key, val;
    strbuf_init(&key);
    strbuf_init(&val);
    Group **gs = ARENA_ARRAY(r->a, Group *, r->groups.n ? r->groups.n : 1);
    uint32_t n = 0;
    for (Group *g = r->groups.all; g != NULL; g = g->all)
        if (!(g->evict || !g->dirty || g->absent))
            gs[n++] = g;
    inc_groups_sort(gs, n);
    for (uint32_t i = 0; i < n; i++) {
        Group *g = gs[i];
        strbuf_reset(&key);
        strbuf_append(&key, p->qprefix, sizeof(p->qprefix));
        strbuf_append(&key, g->key.ptr, g->key.len);
        strbuf_reset(&val);
        inc_state_encode(p, g, &val);
        state_batch_put(r->wb, key.data, key.len, val.data, val.len);
        inc_state_put_bytes(r, key.len, val.len, g->stored ? (int64_t)g->stored_vlen : -1);
    }
    strbuf_free(&key);
    strbuf_free(&val);
}

/* The time of the last state key, when keys start with a time (windows,
 * slices, DISTINCT): gt_read skips keys after it. */
static int find_hi_time(Run *r)
{
    IncPlan *p = r->p;
    if (!(p->agg != NULL && (p->wkind == WINDOW_TUMBLE || p->wkind == WINDOW_SLIDE)) &&
        p->distinct == NULL)
        return 0;
    void *key;
    size_t klen;
    int rc = state_last_key(p->st, p->qprefix, sizeof(p->qprefix), r->a, &key, &klen, r->err);
    if (rc < 0)
        return -1;
    r->time_keys = true;
    r->hi_time = rc == 1 && klen >= 5 + 8 ? inc_time_key_get((const uint8_t *)key + 5)
                                          : INT64_MIN;
    return 0;
}

static int64_t mono_us(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (int64_t)ts.tv_sec * 1000000 + ts.tv_nsec / 1000;
}

void inc_keep_late(Run *r, const Batch *in, const uint8_t *late)
{
    uint32_t n = 0;
    for (uint32_t i = 0; i < in->nrows; i++)
        n += late[i];
    if (n == 0)
        return;
    uint32_t *sel = ARENA_ARRAY(r->chunk, uint32_t, n);
    n = 0;
    for (uint32_t i = 0; i < in->nrows; i++)
        if (late[i])
            sel[n++] = i;
    ExBatch eb = {*in, sel, n};
    push_batch(r->a, &r->lates, &r->nlates, &r->caplates,
               keep_copy(r, ex_batch_compact(r->chunk, &eb)));
}

/* Counts the late rows of the operator's input mid; with late_rows, keeps
 * the source rows (of in, through map) they came from. */
static void count_late(Run *r, const Batch *in, const Batch *mid, const uint32_t *map,
                       const uint8_t *late)
{
    int64_t n = 0;
    for (uint32_t i = 0; i < mid->nrows; i++)
        n += late[i];
    r->b->late_rows += n;
    if (n == 0 || r->p->late == NULL)
        return;
    uint8_t *src = arena_zalloc(r->chunk, in->nrows ? in->nrows : 1);
    for (uint32_t i = 0; i < mid->nrows; i++)
        if (late[i])
            src[map[i]] = 1;
    inc_keep_late(r, in, src);
}

/* Several inputs: the rows of a dense input batch through the lower chain,
 * then into the result (stateless), the aggregate or DISTINCT; late rows
 * are counted (late_rows is refused for such queries). */
static int consume(Run *r, const Batch *in)
{
    IncPlan *p = r->p;
    const Batch *mid;
    if (run_chain(p->lower, p->nlower, in, r->chunk, &r->ecx, &mid, NULL) < 0)
        return -1;
    if (p->agg == NULL && p->distinct == NULL) {
        emit_append_log(r, mid);
        return 0;
    }
    uint8_t *late = arena_alloc(r->chunk, mid->nrows ? mid->nrows : 1);
    if ((p->agg != NULL ? aggregate(r, mid, late) : inc_dedup_rows(r, mid, late)) < 0)
        return -1;
    count_late(r, in, mid, NULL, late);
    return 0;
}

static int join_emit(void *arg, const Batch *rows)
{
    return consume(arg, rows);
}

/* Several inputs: reads the batch's ranges through the batch executor
 * (stream-table joins, UNION ALL) or the interval join (inc_join.c). */
static int read_inputs(Run *r)
{
    IncPlan *p = r->p;
    if (p->sjoin != NULL)
        return (r->jrun = inc_join_read(p->sjoin, &r->join)) == NULL ? -1 : 0;
    /* The executor's state (a joined table's hash table) lives in r->a. */
    ExOp *op = inc_inputs_exec(&r->inputs, r->a, p->inputs, r->err);
    if (op == NULL)
        return -1;
    ExBatch *eb;
    int n;
    while ((n = ex_op_next(op, &eb)) > 0) {
        arena_reset(r->chunk);
        if (eb->n > 0 && consume(r, ex_batch_compact(r->chunk, eb)) < 0) {
            n = -1;
            break;
        }
    }
    ex_op_close(op);
    return n < 0 ? -1 : 0;
}

/* The watermark of the inputs [first, first + n): their minimum, once each
 * has one. */
static void inputs_watermark(const IncPlan *p, const Meta *m, int first, int n, bool *has,
                             int64_t *wm)
{
    *has = n > 0;
    *wm = INT64_MAX;
    for (int i = first; i < first + n; i++) {
        if (p->ins.in[i].wm_col < 0 || !m->in_has_wm[i])
            *has = false;
        else
            *wm = SL_MIN(*wm, m->in_wm[i]);
    }
}

/* A stream-stream join's side watermarks, before (judging late rows) or
 * after (evicting) the batch. */
static void join_watermarks(Run *r, const Meta *m, bool after)
{
    IncJoinBatch *jb = &r->join;
    for (int s = 0; s < 2; s++) {
        int first, n;
        inc_join_side_inputs(r->p->sjoin, s, &first, &n);
        if (after)
            inputs_watermark(r->p, m, first, n, &jb->has_next_wm[s], &jb->next_wm[s]);
        else
            inputs_watermark(r->p, m, first, n, &jb->has_wm[s], &jb->wm[s]);
    }
}

/* Several inputs (and the operator graph's plans): the watermark after
 * this batch, never backwards: per input, its max event time in the batch
 * (max_event[i], INT64_MIN: none) minus its delay (SOURCE_END_WATERMARK
 * once a bounded input has ended); the query's is the minimum over the
 * inputs with a watermark, once each has one. */
void inc_next_watermark(IncPlan *p, IncBatch *b, Meta *meta, const int64_t *max_event)
{
    bool all = true, any = false;
    int64_t min = INT64_MAX;
    for (int i = 0; i < p->ins.n; i++) {
        const IncInput *in = &p->ins.in[i];
        if (in->wm_col < 0)
            continue;
        any = true;
        /* per partition: inc_wm_inputs_finish moved it */
        if (!p->in_part_wm[i] && max_event[i] != INT64_MIN) {
            int64_t wm = max_event[i] - in->wm_delay_us;
            if (!meta->in_has_wm[i] || wm > meta->in_wm[i]) {
                meta->in_has_wm[i] = true;
                meta->in_wm[i] = wm;
            }
        }
        if (source_ended(in->source, &b->ranges[i])) {
            meta->in_has_wm[i] = true;
            meta->in_wm[i] = SOURCE_END_WATERMARK;
        }
        if (!meta->in_has_wm[i])
            all = false;
        else
            min = SL_MIN(min, meta->in_wm[i]);
    }
    if (any && all && (!b->has_watermark || min > b->watermark_us)) {
        b->next_has_watermark = true;
        b->next_watermark_us = min;
    }
}

/* Several inputs: reads and folds them, then the watermark. */
static int run_inputs(Run *r, Meta *meta, int64_t *read_us)
{
    IncPlan *p = r->p;
    IncBatch *b = r->b;
    inc_inputs_run_init(&r->inputs, &p->ins, p->st, b->ranges);
    r->inputs.dead = &r->dead;
    r->inputs.hooks = &p->hooks;
    bool parts = false;
    for (int i = 0; i < p->ins.n; i++)
        parts |= p->in_part_wm[i];
    if (parts) {
        if (inc_wm_inputs_begin(r) < 0)
            return -1;
        r->inputs.observe = inc_wm_inputs_observe;
        r->inputs.observe_arg = r;
    }
    if (p->sjoin != NULL) {
        r->join = (IncJoinBatch){.inputs = &r->inputs, .wb = r->wb, .a = r->a,
                                 .chunk = r->chunk, .err = r->err, .batch_id = b->batch_id,
                                 .emit = join_emit, .arg = r};
        join_watermarks(r, meta, false);
    }
    int64_t t1 = mono_us();
    if (read_inputs(r) < 0)
        return -1;
    *read_us = p->sjoin != NULL ? mono_us() - t1 : 0;
    b->input_rows = r->inputs.rows;
    for (int i = 0; i < p->ins.n; i++) {
        b->min_event_us = SL_MIN(b->min_event_us, r->inputs.min_event[i]);
        b->max_event_us = SL_MAX(b->max_event_us, r->inputs.max_event[i]);
    }
    SLUICE_FAULT("batch_middle");
    b->next_has_watermark = b->has_watermark;
    b->next_watermark_us = b->watermark_us;
    if (parts)
        inc_wm_inputs_finish(r, meta);
    inc_next_watermark(p, b, meta, r->inputs.max_event);
    if (p->sjoin != NULL) {
        join_watermarks(r, meta, true);
        if (inc_join_process(r->jrun) < 0)
            return -1;
        b->late_rows += r->join.late_rows;
        b->evicted_rows += r->join.evicted_rows;
        OpStat *js = &meta->op[INC_OP_JOIN];
        js->rows += r->join.state_delta;
        js->bytes += r->join.bytes_delta;
        js->evicted += r->join.evicted_rows;
    }
    return 0;
}

int inc_batch_run(IncPlan *p, IncBatch *b, SlError *err)
{
    if (changelog_begin(p->st, p->query, p->into == NULL && p->sink == NULL, b, err) < 0)
        return -1;
    if (p->graph != NULL)
        return inc_graph_run(p, b, err);
    /* The arenas of the batch before, empty: their pages are reused. */
    Arena a = p->batch_arena, chunk = p->chunk_arena;
    Run r;
    memset(&r, 0, sizeof(r));
    r.p = p;
    r.b = b;
    r.a = &a;
    r.chunk = &chunk;
    r.err = err;
    r.ecx.arena = &chunk;
    r.ecx.err = err;
    r.ecx.hooks = &p->hooks;
    r.acx.arena = &a;
    r.acx.err = err;
    r.wb = state_batch_new();
    /* The batch's memory budget (cq.c's account, batch_memory): its
     * arenas and its RocksDB write count, checked per input chunk and
     * before anything commits. */
    state_batch_set_account(r.wb, sl_mem_account_current());
    arena_set_account(&a, sl_mem_account_current());
    arena_set_account(&chunk, sl_mem_account_current());
    result_log_begin(&r.log, p->st, p->query, b->batch_id);
    b->min_event_us = INT64_MAX;
    b->max_event_us = INT64_MIN;
    int rc = -1;
    Meta meta;
    b->wake_at_us = INT64_MAX;
    int got = inc_meta_read(p, &a, &meta, err);
    if (got < 0 || inc_check_fingerprint(p, &meta, err) < 0 ||
        (got == 1 && !meta.has_ops && meta_recount(p, &meta, err) < 0) ||
        (p->part_wm && inc_wm_begin(&r) < 0) || find_hi_time(&r) < 0)
        goto out;
    bool rebuild = result_stale(p, &meta);

    int64_t t0 = mono_us(), tr = 0;
    if (!p->plain) {
        if (run_inputs(&r, &meta, &tr) < 0)
            goto out;
        goto fold;
    }
    SourceReader *reader = source_reader_open(p->source, &b->ranges[0]);
    source_reader_need(reader, p->scan_need);
    Batch *in;
    int n;
    for (;;) {
        arena_rewind(&chunk, INC_KEEP_CHUNK);
        int64_t t1 = mono_us();
        n = source_reader_next(reader, &chunk, &in, err);
        tr += mono_us() - t1;
        if (n <= 0)
            break;
        if (ex_check_memory(err) < 0) {
            n = -1;
            break;
        }
        b->input_rows += n;
        track_event_time(&r, in);
        if (p->part_wm)
            inc_wm_observe(&r, in);
        const Batch *mid;
        uint32_t *map = NULL;
        if (run_chain(p->lower, p->nlower, in, &chunk, &r.ecx, &mid,
                      p->late != NULL ? &map : NULL) < 0) {
            n = -1;
            break;
        }
        if (p->agg == NULL && p->distinct == NULL) {
            emit_append_log(&r, mid);
            continue;
        }
        uint8_t *late = arena_alloc(&chunk, mid->nrows ? mid->nrows : 1);
        if ((p->agg != NULL ? aggregate(&r, mid, late) : inc_dedup_rows(&r, mid, late)) < 0) {
            n = -1;
            break;
        }
        count_late(&r, in, mid, map, late);
    }
    if (source_reader_close(reader, &r.dead, n < 0 ? NULL : err) < 0 || n < 0)
        goto out;
    SLUICE_FAULT("batch_middle");     /* input read and folded, nothing emitted */

    /* The watermark after this batch: never backwards. */
    b->next_has_watermark = b->has_watermark;
    b->next_watermark_us = b->watermark_us;
    if (p->part_wm) {
        inc_wm_finish(&r, &meta);
    } else if (p->wm_col >= 0 && b->max_event_us != INT64_MIN) {
        int64_t wm = b->max_event_us - p->wm_delay_us;
        if (!b->has_watermark || wm > b->watermark_us) {
            b->next_has_watermark = true;
            b->next_watermark_us = wm;
        }
    }
    /* A bounded source read to its end: every window closes. */
    if (p->wm_col >= 0 && source_ended(p->source, &b->ranges[0])) {
        b->next_has_watermark = true;
        b->next_watermark_us = SOURCE_END_WATERMARK;
    }
fold:
    if (p->agg != NULL) {
        if (p->wkind == WINDOW_SESSION) {
            if (inc_session_emit(&r, b->next_has_watermark, b->next_watermark_us) < 0)
                goto out;
        } else if (p->wkind == WINDOW_SLIDE && p->pane_us != p->size_us) {
            if (inc_slide_emit(&r, b->has_watermark, b->watermark_us, b->next_has_watermark,
                               b->next_watermark_us) < 0)
                goto out;
        } else if (p->mode == MODE_APPEND) {
            if (b->next_has_watermark && evict_closed(&r, b->next_watermark_us) < 0)
                goto out;
        } else {
            /* The result table's columns changed (a compatible CREATE OR
             * REPLACE): its rows are rewritten from the state, in this
             * batch's write. */
            if (rebuild && (clear_result(&r) < 0 || load_all(&r) < 0))
                goto out;
            Group **gs = ARENA_ARRAY(&a, Group *, r.groups.n ? r.groups.n : 1);
            uint32_t k = 0;
            for (Group *g = r.groups.all; g != NULL; g = g->all)
                if (g->dirty || (rebuild && !g->absent))
                    gs[k++] = g;
            if (inc_emit_groups(&r, gs, k) < 0)
                goto out;
        }
        if (p->mode != MODE_APPEND && b->next_has_watermark &&
            (p->wkind == WINDOW_TUMBLE || p->wkind == WINDOW_SLIDE) &&
            evict_passed(&r, b->next_watermark_us) < 0)
            goto out;
        if (p->ttl_us > 0 && p->wkind == WINDOW_NONE && inc_evict_idle(&r) < 0)
            goto out;
        inc_write_states(&r);
    } else if (p->distinct != NULL &&
               inc_dedup_evict(&r, b->next_has_watermark, b->next_watermark_us) < 0) {
        goto out;
    }
    OpStat *os = &meta.op[INC_OP_GROUPS];
    os->rows += r.groups.created - r.deleted;
    os->bytes += r.dbytes;
    os->evicted += b->evicted_rows - r.join.evicted_rows;
    meta.state_rows = os->rows + meta.op[INC_OP_JOIN].rows;
    meta.batch_id = b->batch_id;
    meta.has_wm = b->next_has_watermark;
    meta.wm = b->next_watermark_us;
    b->state_rows = meta.state_rows;
    b->state_bytes = os->bytes + meta.op[INC_OP_JOIN].bytes;
    /* Large output: its result file is written and fdatasync'ed here,
     * before the RocksDB write that references it (counted as part of
     * the state commit). */
    int64_t tl = mono_us();
    if (result_log_end(&r.log, r.wb, err) < 0)
        goto out;
    int64_t log_us = mono_us() - tl;
    if (changelog_write(p->st, p->query, b, r.wb, err) < 0)
        goto out;
    inc_meta_write(p, r.wb, &meta);
    if (b->log_len > 0) {
        uint8_t lkey[6];
        memcpy(lkey, p->meta_key, 5);
        lkey[5] = 'L';
        state_batch_put(r.wb, lkey, sizeof(lkey), b->log_entry, b->log_len);
    }
    b->execute_us = mono_us() - t0 - tr - log_us;
    b->read_us = tr;
    /* The sink before the state: output a replay may write again, never
     * state whose output is missing (docs/architecture.md, "Recovery").
     * The sink skips a batch it committed before: the files sink by its
     * manifest, Kafka by the progress record in its transaction.  The
     * state write's last bytes are charged first (it charges in steps). */
    state_batch_charge(r.wb);
    if (ex_check_memory(err) < 0)
        goto out;
    int64_t ts = mono_us();
    SLUICE_FAULT("batch_before_sink_commit");
    if (p->writer != NULL &&
        sink_commit(p->writer, b->batch_id, (const Batch *const *)r.outs, r.nouts,
                    (const Batch *const *)r.dels, r.ndels, err) < 0)
        goto out;
    SLUICE_FAULT("batch_after_sink_commit");
    b->sink_us = p->writer != NULL ? mono_us() - ts : 0;
    SLUICE_FAULT("batch_before_state_commit");
    int64_t tw = mono_us();
    /* The output chunks (INTO), the late rows (late_rows), the dead
     * letters not recorded before and the state in one write: a replayed
     * batch whose write landed is never replayed, one whose write did not
     * appends once. */
    StreamAppend apps[2];
    int napps = 0;
    if (p->into != NULL)
        apps[napps++] = (StreamAppend){p->into, (const Batch *const *)r.outs, r.nouts, NULL, 0};
    if (p->late != NULL)
        apps[napps++] = (StreamAppend){p->late, (const Batch *const *)r.lates, r.nlates, NULL, 0};
    if (SLUICE_FAULT_FAILS("batch_state_commit")) {
        sl_error(err, ERRCODE_IO_ERROR, "state store: write: %s (fault point batch_state_commit)",
                 strerror(errno));
        goto out;
    }
    /* A rewrite of the result table for new columns: the scans of the
     * table see it whole or not at all, and learn which (cq_layout.c). */
    if (rebuild)
        cq_layout_write_begin(p->shared->layouts);
    int wrc = dead_letters_append(p->st, &p->shared->dead_mu, &r.dead, apps, napps, r.wb, err);
    if (rebuild)
        cq_layout_write_end(p->shared->layouts, p->query->oid, p->result_hash, wrc == 0);
    if (wrc < 0)
        goto out;
    b->write_us = mono_us() - tw + log_us;
    SLUICE_FAULT("batch_after_state_commit");
    /* The oldest window left (a read after the write: a figure, never
     * wrong state). */
    SlError oerr = {0};
    b->has_oldest_window = inc_state_oldest_window(p, b->next_has_watermark,
                                                   b->next_watermark_us,
                                                   &b->oldest_window_us, &oerr) == 1;
    sl_error_clear(&oerr);
    rc = 0;
out:
    if (p->sjoin != NULL)
        inc_join_done(p->sjoin, rc == 0);      /* its kept rows in memory follow the write */
    state_batch_free(r.wb);
    result_log_free(&r.log);
    dead_letters_free(&r.dead);
    arena_rewind(&chunk, INC_KEEP_CHUNK);
    arena_rewind(&a, INC_KEEP_BATCH);
    arena_set_account(&a, NULL);
    arena_set_account(&chunk, NULL);
    p->batch_arena = a;
    p->chunk_arena = chunk;
    return rc;
}
