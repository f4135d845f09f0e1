/*
 * op_scan.c -- the leaves of a plan: scans through an ExSource, and VALUES.
 *
 *   ex_source_table, ex_source_stream, ex_source_batches   sources
 *   op_build_scan, op_build_values                         operators
 *
 * A scan asks ExCtx.open_scan for its source (the streaming engine hands
 * out the rows of one micro-batch there; the runtime the rows of a Kafka
 * stream); when it declines (NULL without an error), it reads the whole table
 * (tbl_scan, in key order) or the whole stream (stream_scan over
 * [0, end offset now)), with endable state scans for a statement whose
 * rows a client may hold (ExCtx.endable_scans).  A system relation
 * (pg_catalog, sys) always reads the rows its producer makes
 * (ExCtx.system_scan, which the statement's maker sets; without it,
 * 55000).  With with_key, each row's storage key is added as a last BYTEA
 * column, for UPDATE and DELETE.
 */
#include "exec/op.h"
#include "sluice/log.h"
#include "sluice/relstore.h"

/* ---------------------------------------------------------------- sources */

typedef struct RelSource {
    ExSource base;
    RelScan *scan;
    bool     stream;
} RelSource;

static int rel_next(ExSource *s, Arena *a, Batch **out, SlStr **keys, SlError *err)
{
    RelSource *r = (RelSource *)s;
    if (r->stream) {
        if (keys)
            *keys = NULL;
        return stream_scan_next(r->scan, a, out, err);
    }
    return tbl_scan_next(r->scan, a, out, keys, err);
}

/* A scan that ran to its end has already reported any error of its
 * iterator through rel_next (relstore checks the status at the end); one
 * stopped early (LIMIT, an error elsewhere) returned only rows that were
 * read whole, so what its close finds is logged, not dropped silently. */
static void rel_close(ExSource *s)
{
    RelSource *r = (RelSource *)s;
    SlError err = {0};
    if (rel_scan_close(r->scan, &err) < 0)
        sl_log(LOG_WARN, "scan stopped early on a storage error", "error=\"%s\" sqlstate=%s",
               err.message, err.sqlstate);
    sl_error_clear(&err);
    sl_free(r);
}

ExSource *ex_source_table(StateStore *st, const CatRelation *rel, bool endable)
{
    RelSource *r = sl_calloc(1, sizeof(RelSource));
    r->base.next = rel_next;
    r->base.close = rel_close;
    r->scan = tbl_scan_open(st, rel, endable);
    return &r->base;
}

ExSource *ex_source_stream(StateStore *st, const CatRelation *rel, int64_t from, int64_t to,
                           bool endable)
{
    RelSource *r = sl_calloc(1, sizeof(RelSource));
    r->base.next = rel_next;
    r->base.close = rel_close;
    r->scan = stream_scan_open(st, rel, from, to, endable);
    r->stream = true;
    return &r->base;
}

typedef struct MemSource {
    ExSource      base;
    Batch *const *batches;
    int           n, pos;
} MemSource;

static int mem_next(ExSource *s, Arena *a, Batch **out, SlStr **keys, SlError *err)
{
    SL_UNUSED(a);
    SL_UNUSED(err);
    MemSource *m = (MemSource *)s;
    if (keys)
        *keys = NULL;
    while (m->pos < m->n) {
        Batch *b = m->batches[m->pos++];
        if (b->nrows > 0) {
            *out = b;
            return (int)b->nrows;
        }
    }
    return 0;
}

static void mem_close(ExSource *s)
{
    SL_UNUSED(s);
}

ExSource *ex_source_batches(Arena *a, Batch *const *batches, int nbatches)
{
    MemSource *m = ARENA_NEW(a, MemSource);
    m->base.next = mem_next;
    m->base.close = mem_close;
    m->batches = batches;
    m->n = nbatches;
    return &m->base;
}

/* ------------------------------------------------------------------ scan */

typedef struct ScanState {
    ExSource *src;
} ScanState;

static int scan_next(ExOp *op, ExBatch **out)
{
    ScanState *s = op->state;
    const Plan *p = op->plan;
    Batch *b;
    SlStr *keys = NULL;
    int n = s->src->next(s->src, &op->arena, &b, p->u.scan.with_key ? &keys : NULL,
                         op->cx->err);
    if (n <= 0)
        return n;
    ExBatch *eb = &op->out;
    eb->sel = NULL;
    eb->n = b->nrows;
    eb->b.nrows = b->nrows;
    eb->b.ncols = (uint32_t)p->ncols;
    if (!p->u.scan.with_key) {
        eb->b.cols = b->cols;
    } else {
        eb->b.cols = ARENA_ARRAY(&op->arena, Vector, p->ncols);
        memcpy(eb->b.cols, b->cols, sizeof(Vector) * b->ncols);
        Vector *k = &eb->b.cols[p->ncols - 1];
        vector_init(k, &op->arena, sl_type(TYPE_BYTEA), b->nrows, false);
        if (keys == NULL)
            return sl_error(op->cx->err, ERRCODE_INTERNAL_ERROR, "scan has no row keys");
        memcpy(k->v.str, keys, sizeof(SlStr) * b->nrows);
    }
    *out = eb;
    return 1;
}

static void scan_close(ExOp *op)
{
    ScanState *s = op->state;
    if (s->src)
        s->src->close(s->src);
}

ExOp *op_build_scan(ExCtx *cx, const Plan *p)
{
    ExSource *src = NULL;
    const CatRelation *rel = p->u.scan.rel;
    if (rel->kind == REL_SYSTEM && cx->system_scan != NULL)
        src = cx->system_scan(cx, rel);
    else if (rel->kind == REL_SYSTEM)
        sl_error(cx->err, ERRCODE_OBJECT_NOT_IN_PREREQUISITE_STATE,
                 "system relations are not available: cannot read \"%s\"", rel->name);
    else if (cx->open_scan != NULL)
        src = cx->open_scan(cx, p);
    /* open_scan may decline (NULL, no error): the default scan follows. */
    if (src != NULL || sl_error_set(cx->err))
        ;
    else if (cx->st == NULL)
        sl_error(cx->err, ERRCODE_OBJECT_NOT_IN_PREREQUISITE_STATE,
                 "no state store is open: cannot read \"%s\"", rel->name);
    else if (rel->kind == REL_STREAM) {
        int64_t end = stream_end_offset(cx->st, rel, cx->err);
        if (end >= 0)
            src = ex_source_stream(cx->st, rel, 0, end, cx->endable_scans);
    } else {
        src = ex_source_table(cx->st, rel, cx->endable_scans);
    }
    if (src == NULL)
        return NULL;
    ExOp *op = op_new(cx, p, sizeof(ScanState));
    ((ScanState *)op->state)->src = src;
    op->next = scan_next;
    op->close = scan_close;
    return op;
}

/* ---------------------------------------------------------------- values */

typedef struct ValuesState {
    int row;
} ValuesState;

static int values_next(ExOp *op, ExBatch **out)
{
    ValuesState *s = op->state;
    const Plan *p = op->plan;
    int total = p->u.values.nrows;
    if (s->row >= total)
        return 0;
    uint32_t n = (uint32_t)SL_MIN(total - s->row, EX_BATCH_ROWS);
    ExBatch *eb = &op->out;
    eb->sel = NULL;
    eb->n = n;
    eb->b.nrows = n;
    eb->b.ncols = (uint32_t)p->ncols;
    eb->b.cols = ARENA_ARRAY(&op->arena, Vector, p->ncols ? p->ncols : 1);
    EvalCtx ecx = op_eval_ctx(op);
    for (int c = 0; c < p->ncols; c++)
        vector_init(&eb->b.cols[c], &op->arena, p->cols[c].type, n, true);
    for (uint32_t r = 0; r < n; r++) {
        Expr **row = p->u.values.rows[s->row + (int)r];
        for (int c = 0; c < p->ncols; c++) {
            Vector v;
            if (ex_eval(&ecx, row[c], NULL, 1, &v) < 0)
                return -1;
            ex_copy_value(&eb->b.cols[c], r, &v, 0, NULL);
        }
    }
    s->row += (int)n;
    *out = eb;
    return 1;
}

ExOp *op_build_values(ExCtx *cx, const Plan *p)
{
    ExOp *op = op_new(cx, p, sizeof(ValuesState));
    op->next = values_next;
    return op;
}
