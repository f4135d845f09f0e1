/*
 * inc_inputs.c -- the streams and tables a continuous query reads, and the
 * batch executor over them (see inc_inputs.h, docs/engine.md "Joins and
 * UNION ALL").
 *
 *   inc_inputs_collect, inc_inputs_add_stream, inc_inputs_close, inc_inputs_reads
 *   inc_inputs_time_watermarked
 *   inc_inputs_run_init, inc_inputs_track, inc_inputs_exec
 *
 * Under its filter/project chain a continuous query reads an input tree:
 *   SCAN of a stream | SCAN of a table | FILTER | PROJECT
 *   JOIN of a stream side and a table side (INNER, CROSS, or an outer
 *        join that keeps the stream's rows: stream LEFT JOIN table)
 *   UNION ALL of two trees that each read a stream
 * Everything else is refused at CREATE.  A batch runs the tree with the
 * batch executor (src/exec/): a stream scan hands out the rows of the
 * batch's offset range of its input, a table scan the table as it is when
 * the batch reads it (a lookup join, as Flink's and Spark's stream-static
 * join: a later change of the table does not retract earlier output).  A
 * continuous query's result table is such a table here; a tree that reads
 * result tables and no stream is refused as a shape (ins->shape_refused),
 * and the operator graph reads them as changelogs (changelog.c).
 */
#include "inc_inputs.h"

#include "sluice/options.h"

static int refuse(SlError *err, const char *msg, const char *hint)
{
    sl_error(err, ERRCODE_FEATURE_NOT_SUPPORTED, "%s", msg);
    if (hint)
        sl_error_hint(err, "%s", hint);
    return -1;
}

/* A refusal of the input tree's shape, which the operator graph may run
 * instead (ins->shape_refused). */
static int refuse_shape(IncInputs *ins, SlError *err, const char *msg, const char *hint)
{
    ins->shape_refused = true;
    return refuse(err, msg, hint);
}

static int read_watermark(IncInput *in, Arena *a, SlError *err)
{
    Options o;
    if (opts_parse(a, in->rel->options, &o, err) < 0)
        return -1;
    in->wm_col = -1;
    in->wm_delay_us = 0;
    const char *col = opts_get(&o, "watermark_column");
    if (col == NULL)
        return 0;
    for (int c = 0; c < in->rel->ncols; c++)
        if (strcmp(in->rel->cols[c].name, col) == 0)
            in->wm_col = c;
    if (in->wm_col < 0)
        return sl_error(err, ERRCODE_DATA_CORRUPTED,
                        "stream \"%s\" has a watermark on a column it does not have",
                        in->rel->name);
    return opts_get_int(&o, "watermark_delay_us", 0, &in->wm_delay_us, err);
}

int inc_inputs_add_stream(IncInputs *ins, Arena *a, const Plan *scan, StateStore *st,
                          SlError *err)
{
    if (ins->n == INC_MAX_INPUTS)
        return refuse(err, "a continuous query reads at most 8 streams", NULL);
    IncInput *in = &ins->in[ins->n];
    in->scan = scan;
    in->rel = scan->u.scan.rel;
    if (read_watermark(in, a, err) < 0 ||
        source_open(ins->rt, st, in->rel, ins->owner, &in->source, err) < 0)
        return -1;
    cat_relation_ref(in->rel);
    ins->n++;
    return 0;
}

/* Walks n; *streams gets whether n reads a stream. */
static int walk(IncInputs *ins, Arena *a, Plan *n, const Plan *root, StateStore *st,
                bool *streams, SlError *err)
{
    bool ls = false, rs = false;
    switch (n->kind) {
    case PLAN_SCAN: {
        const CatRelation *rel = n->u.scan.rel;
        if (rel->kind != REL_STREAM) {
            if (ins->ntables == INC_MAX_INPUTS)
                return refuse(err, "a continuous query joins at most 8 tables", NULL);
            cat_relation_ref(rel);
            ins->tables[ins->ntables++] = rel;
            *streams = false;
            return 0;
        }
        if (inc_inputs_add_stream(ins, a, n, st, err) < 0)
            return -1;
        *streams = true;
        return 0;
    }
    case PLAN_FILTER:
    case PLAN_PROJECT:
        return walk(ins, a, n->child, root, st, streams, err);
    case PLAN_JOIN: {
        int first = ins->n;
        if (walk(ins, a, n->child, root, st, &ls, err) < 0)
            return -1;
        int nleft = ins->n - first;
        if (walk(ins, a, n->right, root, st, &rs, err) < 0)
            return -1;
        JoinType t = n->u.join.type;
        if (ls && rs) {
            /* An interval join (inc_join.c checks its time bound). */
            if (n != root)
                return refuse_shape(ins, err, "a continuous query may join two streams only "
                                              "in its outermost join",
                                    "Join the stream-stream result to tables in a query that "
                                    "reads its output stream (INTO).");
            ins->sjoin = n;
            ins->sjoin_nleft = nleft;
            *streams = true;
            return 0;
        }
        if ((ls && (t == JOIN_RIGHT || t == JOIN_FULL)) ||
            (rs && (t == JOIN_LEFT || t == JOIN_FULL)))
            return refuse(err, "a continuous query cannot keep the unmatched rows of a table "
                               "in an outer join",
                          "Keep the stream's rows instead: stream LEFT JOIN table.");
        *streams = ls || rs;
        return 0;
    }
    case PLAN_SETOP:
        if (n->u.setop.op != SETOP_UNION || !n->u.setop.all)
            return refuse_shape(ins, err, "UNION, INTERSECT and EXCEPT cannot run "
                                          "incrementally; only UNION ALL can",
                                "Use UNION ALL, and GROUP BY to remove duplicates.");
        if (walk(ins, a, n->child, root, st, &ls, err) < 0 ||
            walk(ins, a, n->right, root, st, &rs, err) < 0)
            return -1;
        if (!ls || !rs)
            return refuse(err, "every arm of a UNION ALL in a continuous query must read a stream",
                          "A table arm would be read again in every batch; join the table "
                          "to a stream instead.");
        *streams = true;
        return 0;
    case PLAN_DISTINCT:
        return refuse_shape(ins, err, "nested DISTINCT in a continuous query is not supported "
                                      "yet", NULL);
    case PLAN_WINDOW:
        return refuse_shape(ins, err, "window functions on a stream cannot run in the fixed "
                                      "shape", NULL);
    case PLAN_SERIES:
        return refuse(err, "generate_series in a continuous query is not supported", NULL);
    case PLAN_PROJECT_SET:
        return refuse(err, "set-returning functions in a continuous query are not supported "
                           "yet", NULL);
    case PLAN_LIMIT:
        return refuse(err, "LIMIT on a stream cannot run incrementally",
                      "Read the result table with LIMIT instead.");
    case PLAN_AGG:
        return refuse_shape(ins, err, "nested aggregation in a continuous query is not "
                                      "supported yet", NULL);
    default:
        return refuse_shape(ins, err, "this query shape cannot run incrementally yet",
                            "A continuous query reads streams, joined to tables or combined "
                            "with UNION ALL, with WHERE, and may GROUP BY.");
    }
}

int inc_inputs_collect(IncInputs *ins, Arena *a, Plan *base, struct Runtime *rt, StateStore *st,
                       const char *owner, SlError *err)
{
    memset(ins, 0, sizeof(*ins));
    ins->owner = owner;
    ins->rt = rt;
    bool streams = false;
    if (walk(ins, a, base, base, st, &streams, err) < 0)
        return -1;
    for (int i = 0; !streams && i < ins->ntables; i++)
        if (ins->tables[i]->kind == REL_QUERY)
            /* Result tables of continuous queries without a stream: read
             * as changelogs on the operator graph (changelog.c). */
            return refuse_shape(ins, err, "a continuous query that reads only result tables "
                                          "runs on the operator graph", NULL);
    if (!streams) {
        sl_error(err, ERRCODE_WRONG_OBJECT_TYPE,
                 "\"%s\" is not a stream: a continuous query reads a stream",
                 ins->ntables > 0 ? ins->tables[0]->name : "?");
        return -1;
    }
    return 0;
}

void inc_inputs_close(IncInputs *ins)
{
    for (int i = 0; i < ins->n; i++) {
        source_close(ins->in[i].source);
        cat_relation_unref(ins->in[i].rel);
    }
    for (int i = 0; i < ins->ntables; i++)
        cat_relation_unref(ins->tables[i]);
    ins->n = ins->ntables = 0;
}

bool inc_inputs_reads(const IncInputs *ins, uint32_t oid)
{
    for (int i = 0; i < ins->n; i++)
        if (ins->in[i].rel->oid == oid)
            return true;
    for (int i = 0; i < ins->ntables; i++)
        if (ins->tables[i]->oid == oid)
            return true;
    return false;
}

static int input_of(const IncInputs *ins, const Plan *scan)
{
    for (int i = 0; i < ins->n; i++)
        if (ins->in[i].scan == scan)
            return i;
    return -1;
}

bool inc_inputs_time_watermarked(const IncInputs *ins, const Plan *n, int col)
{
    switch (n->kind) {
    case PLAN_SCAN: {
        int i = input_of(ins, n);
        return i >= 0 && ins->in[i].wm_col >= 0 && ins->in[i].wm_col == col;
    }
    case PLAN_FILTER:
        return inc_inputs_time_watermarked(ins, n->child, col);
    case PLAN_PROJECT: {
        const Expr *e = n->u.project.exprs[col];
        return e->kind == EXPR_COLUMN && inc_inputs_time_watermarked(ins, n->child, e->index);
    }
    case PLAN_JOIN:
        return col < n->child->ncols
               ? inc_inputs_time_watermarked(ins, n->child, col)
               : inc_inputs_time_watermarked(ins, n->right, col - n->child->ncols);
    case PLAN_SETOP:
        return inc_inputs_time_watermarked(ins, n->child, col) &&
               inc_inputs_time_watermarked(ins, n->right, col);
    default:
        return false;
    }
}

/* ---------------------------------------------------------------------- */
/* A batch                                                                 */

void inc_inputs_run_init(IncInputsRun *r, const IncInputs *ins, StateStore *st,
                         const SourceOffsets *ranges)
{
    memset(r, 0, sizeof(*r));
    r->ins = ins;
    r->st = st;
    r->ranges = ranges;
    for (int i = 0; i < INC_MAX_INPUTS; i++) {
        r->min_event[i] = INT64_MAX;
        r->max_event[i] = INT64_MIN;
    }
}

void inc_inputs_track(IncInputsRun *r, int i, const Batch *b)
{
    r->rows += b->nrows;
    if (r->observe != NULL)
        r->observe(r->observe_arg, i, b);
    int col = r->ins->in[i].wm_col;
    if (col < 0)
        return;
    const Vector *v = &b->cols[col];
    int64_t lo = r->min_event[i], hi = r->max_event[i];
    for (uint32_t k = 0; k < b->nrows; k++) {
        if (vector_is_null(v, k))
            continue;
        int64_t t = v->v.i64[k];
        if (t < lo)
            lo = t;
        if (t > hi)
            hi = t;
    }
    r->min_event[i] = lo;
    r->max_event[i] = hi;
}

/* A stream scan of the executor: the batch's range of one input. */
typedef struct InputSource {
    ExSource      base;
    IncInputsRun *run;
    int           input;
    SourceReader *reader;
} InputSource;

static int input_next(ExSource *s, Arena *a, Batch **out, SlStr **keys, SlError *err)
{
    InputSource *is = (InputSource *)s;
    if (keys)
        *keys = NULL;
    int n = source_reader_next(is->reader, a, out, err);
    if (n > 0)
        inc_inputs_track(is->run, is->input, *out);
    return n;
}

static void input_close(ExSource *s)
{
    InputSource *is = (InputSource *)s;
    SlError ignore = {0};
    source_reader_close(is->reader, is->run->dead, &ignore);
    sl_error_clear(&ignore);
    sl_free(is);
}

static ExSource *open_scan(ExCtx *cx, const Plan *scan)
{
    IncInputsRun *r = cx->open_scan_arg;
    int i = input_of(r->ins, scan);
    if (i < 0)
        return ex_source_table(r->st, scan->u.scan.rel, false);     /* its current version */
    InputSource *is = sl_calloc(1, sizeof(InputSource));
    is->base.next = input_next;
    is->base.close = input_close;
    is->run = r;
    is->input = i;
    is->reader = source_reader_open(r->ins->in[i].source, &r->ranges[i]);
    source_reader_need(is->reader, r->ins->need[i]);
    return &is->base;
}

ExOp *inc_inputs_exec(IncInputsRun *r, Arena *a, const Plan *base, SlError *err)
{
    ExCtx *cx = ARENA_NEW(a, ExCtx);
    cx->arena = a;
    cx->err = err;
    cx->st = r->st;
    cx->open_scan = open_scan;
    cx->open_scan_arg = r;
    if (r->hooks != NULL)
        cx->hooks = *r->hooks;
    return ex_op_build(cx, base);
}
