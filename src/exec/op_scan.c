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
 *
 * Inside a transaction block (ExCtx.tx) a table the block wrote is read
 * as the committed rows merged in key order with the block's writes
 * (TxSource: a written key gives the block's row, a deleted one none); a
 * stream the block appended to is refused (0A000) rather than read without
 * the block's rows.
 */
#include "exec/op.h"
#include "sluice/log.h"
#include "sluice/relstore.h"
#include "sluice/rowcodec.h"
#include "sluice/txbuf.h"

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

/* A table scan inside a transaction block that wrote the table: the
 * committed rows (base, in key order) merged with the block's writes
 * (pairs, copied when the scan opened, in key order): a key the block
 * wrote gives the block's row, or none for a delete.  Rows are copied
 * into the caller's arena; the base batches live in the source's own. */
typedef struct TxSource {
    ExSource           base;
    ExSource          *inner;
    const CatRelation *rel;
    SlType            *types;
    Arena              own;         /* pairs, and base batches */
    Arena              batch;       /* the current base batch */
    StateTxPair       *pairs;
    uint32_t           npairs, pi;
    Batch             *b;           /* the current base batch, or NULL */
    SlStr             *bkeys;
    uint32_t           bn, bi;
    bool               base_done;
} TxSource;

static int key_cmp(const SlStr *x, const SlStr *y)
{
    uint32_t n = x->len < y->len ? x->len : y->len;
    int c = memcmp(x->ptr, y->ptr, n);
    if (c != 0)
        return c;
    return x->len < y->len ? -1 : x->len > y->len;
}

static int tx_next(ExSource *s, Arena *a, Batch **out, SlStr **keys, SlError *err)
{
    TxSource *t = (TxSource *)s;
    int ncols = t->rel->ncols;
    Batch *o = batch_alloc(a, t->types, (uint32_t)ncols, RELSTORE_BATCH_ROWS);
    SlStr *okeys = ARENA_ARRAY(a, SlStr, RELSTORE_BATCH_ROWS);
    uint32_t n = 0;
    while (n < RELSTORE_BATCH_ROWS) {
        if (t->bi == t->bn && !t->base_done) {
            arena_reset(&t->batch);
            SlStr *bk = NULL;
            int got = t->inner->next(t->inner, &t->batch, &t->b, &bk, err);
            if (got < 0)
                return -1;
            if (got == 0) {
                t->base_done = true;
                t->bn = t->bi = 0;
            } else {
                t->bkeys = bk;
                t->bn = (uint32_t)got;
                t->bi = 0;
            }
        }
        bool have_base = t->bi < t->bn;
        bool have_pair = t->pi < t->npairs;
        if (!have_base && !have_pair)
            break;
        int c = !have_base ? 1 : !have_pair ? -1 : key_cmp(&t->bkeys[t->bi], &t->pairs[t->pi].key);
        if (c < 0) {
            for (int k = 0; k < ncols; k++)
                ex_copy_value(&o->cols[k], n, &t->b->cols[k], t->bi, a);
            okeys[n].ptr = arena_memdup(a, t->bkeys[t->bi].ptr, t->bkeys[t->bi].len);
            okeys[n].len = t->bkeys[t->bi].len;
            n++;
            t->bi++;
            continue;
        }
        if (c == 0)
            t->bi++;    /* the block's write replaces the committed row */
        const StateTxPair *p = &t->pairs[t->pi++];
        if (p->val.ptr == NULL)
            continue;   /* deleted by the block */
        if (row_decode(p->val.ptr, p->val.len, o, n, a) < 0)
            return sl_error(err, ERRCODE_INTERNAL_ERROR, "cannot decode a row of \"%s\"",
                            t->rel->name);
        okeys[n] = p->key;
        n++;
    }
    if (n == 0)
        return 0;
    o->nrows = n;
    for (int k = 0; k < ncols; k++)
        o->cols[k].len = n;
    *out = o;
    if (keys)
        *keys = okeys;
    return (int)n;
}

static void tx_close(ExSource *s)
{
    TxSource *t = (TxSource *)s;
    t->inner->close(t->inner);
    arena_destroy(&t->batch);
    arena_destroy(&t->own);
    sl_free(t);
}

/* The table's scan with the block's writes laid over it, or the plain
 * scan when the block wrote none of its rows. */
static ExSource *source_table_tx(StateStore *st, StateTx *tx, const CatRelation *rel,
                                 bool endable)
{
    ExSource *inner = ex_source_table(st, rel, endable);
    if (tx == NULL || rel->kind != REL_TABLE)
        return inner;
    TxSource *t = sl_calloc(1, sizeof(TxSource));
    arena_init(&t->own, 16 * 1024);
    StrBuf prefix;
    strbuf_init(&prefix);
    tbl_key_prefix(rel, &prefix);
    t->npairs = state_tx_range(tx, prefix.data, prefix.len, &t->own, &t->pairs);
    strbuf_free(&prefix);
    if (t->npairs == 0) {
        arena_destroy(&t->own);
        sl_free(t);
        return inner;
    }
    arena_init(&t->batch, 64 * 1024);
    t->base.next = tx_next;
    t->base.close = tx_close;
    t->inner = inner;
    t->rel = rel;
    t->types = ARENA_ARRAY(&t->own, SlType, rel->ncols ? rel->ncols : 1);
    for (int c = 0; c < rel->ncols; c++)
        t->types[c] = rel->cols[c].type;
    return &t->base;
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
    else if (rel->kind == REL_STREAM && state_tx_appends_to(cx->tx, rel)) {
        sl_error(cx->err, ERRCODE_FEATURE_NOT_SUPPORTED,
                 "cannot read stream \"%s\" after appending to it in the same transaction "
                 "block", rel->name);
        sl_error_hint(cx->err, "Read the stream after COMMIT, or before the block appends "
                               "to it.");
    } else if (rel->kind == REL_STREAM) {
        int64_t end = stream_end_offset(cx->st, rel, cx->err);
        if (end >= 0)
            src = ex_source_stream(cx->st, rel, 0, end, cx->endable_scans);
    } else {
        src = source_table_tx(cx->st, cx->tx, rel, cx->endable_scans);
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
