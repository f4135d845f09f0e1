/*
 * op_agg.c -- hash aggregation, optionally by event-time window.
 *
 *   op_build_agg
 *
 * The operator reads its whole input, then hands out one row per group:
 * the group keys, window_start and window_end when the plan has a window,
 * then each aggregate's result.  A group is found by the bytes of its key
 * (ex_key_encode of the group values, then the window's start) in a hash
 * table that numbers groups 0, 1, 2, ...; its key values are kept in
 * chunks of EX_BATCH_ROWS groups (so a chunk is an output batch as it
 * is), its aggregate states in one ExAggSet block per group.  Without
 * GROUP BY there is exactly one group, even over no rows.
 *
 * Windows (aligned to the Unix epoch, as Spark and Flink align them):
 *   tumbling WINDOW(ts, size): the row's window starts at ts rounded down
 *     to a multiple of size;
 *   sliding WINDOW(ts, size, slide): the row belongs to every window that
 *     starts at a multiple of slide in (ts - size, ts] -- one pass over the
 *     batch per window offset;
 *   SESSION(ts, gap): per group key, rows sorted by time; a row less than
 *     gap after the session's last row extends it, else starts a new one;
 *     the window is [first row, last row + gap).  Sessions need the whole
 *     input first, so that case materializes it (and sorts it with a merge
 *     sort that a cancel or statement_timeout stops).
 * A row whose time is NULL or infinite belongs to no window.
 */
#include "exec/op.h"


typedef struct AggState {
    ExAggSet  *set;
    ExHashTab *ht;
    int        ngk;             /* group key columns */
    WindowKind wkind;
    uint8_t  **blocks;          /* per group */
    uint32_t   ngroups, cap;
    Vector   **keys;            /* per chunk: ngk vectors of EX_BATCH_ROWS */
    int64_t  **wstart, **wend;  /* per chunk */
    uint32_t   nchunks, chunkcap;
    uint8_t   *slab;            /* blocks are carved from slabs */
    uint32_t   slab_left;
    Arena      scratch;         /* one input batch's evaluation */
    bool       consumed;
    uint32_t   next_chunk;
    StrBuf     key;
} AggState;

int64_t ex_window_floor(int64_t t, int64_t size)
{
    __int128 u = (__int128)t + SL_PG_EPOCH_UNIX_US;
    __int128 r = u % size;
    if (r < 0)
        r += size;
    return (int64_t)(u - r - SL_PG_EPOCH_UNIX_US);
}

static bool finite_time(int64_t t)
{
    return t != INT64_MIN && t != INT64_MAX;
}

/* The group of key s->key (made by the caller), created when new with
 * the key values of row `row` of gk and window [ws, we). */
static uint8_t *group_block(ExOp *op, AggState *s, const Vector *gk, uint32_t row, int64_t ws,
                            int64_t we)
{
    Arena *a = op->cx->arena;
    bool inserted;
    uint32_t id = ex_ht_insert(s->ht, s->key.data ? s->key.data : "", (uint32_t)s->key.len,
                               &inserted);
    if (!inserted)
        return s->blocks[id];
    if (id == s->cap) {
        uint32_t cap = s->cap ? s->cap * 2 : 1024;
        uint8_t **more = ARENA_ARRAY(a, uint8_t *, cap);
        if (s->ngroups)
            memcpy(more, s->blocks, sizeof(uint8_t *) * s->ngroups);
        s->blocks = more;
        s->cap = cap;
    }
    uint32_t size = ex_aggset_size(s->set);
    if (s->slab_left == 0) {
        s->slab = arena_zalloc(a, (size_t)size * 256);
        s->slab_left = 256;
    }
    s->blocks[id] = s->slab;
    s->slab += size;
    s->slab_left--;
    uint32_t chunk = id / EX_BATCH_ROWS, pos = id % EX_BATCH_ROWS;
    if (chunk == s->nchunks) {
        if (s->nchunks == s->chunkcap) {
            uint32_t cap = s->chunkcap ? s->chunkcap * 2 : 8;
            Vector **k = ARENA_ARRAY(a, Vector *, cap);
            int64_t **w1 = ARENA_ARRAY(a, int64_t *, cap), **w2 = ARENA_ARRAY(a, int64_t *, cap);
            if (s->nchunks) {
                memcpy(k, s->keys, sizeof(Vector *) * s->nchunks);
                memcpy(w1, s->wstart, sizeof(int64_t *) * s->nchunks);
                memcpy(w2, s->wend, sizeof(int64_t *) * s->nchunks);
            }
            s->keys = k;
            s->wstart = w1;
            s->wend = w2;
            s->chunkcap = cap;
        }
        Vector *v = ARENA_ARRAY(a, Vector, s->ngk ? s->ngk : 1);
        for (int c = 0; c < s->ngk; c++)
            vector_init(&v[c], a, op->plan->cols[c].type, EX_BATCH_ROWS, true);
        s->keys[chunk] = v;
        if (s->wkind != WINDOW_NONE) {
            s->wstart[chunk] = ARENA_ARRAY(a, int64_t, EX_BATCH_ROWS);
            s->wend[chunk] = ARENA_ARRAY(a, int64_t, EX_BATCH_ROWS);
        }
        s->nchunks++;
    }
    for (int c = 0; c < s->ngk; c++)
        ex_copy_value(&s->keys[chunk][c], pos, &gk[c], row, a);
    if (s->wkind != WINDOW_NONE) {
        s->wstart[chunk][pos] = ws;
        s->wend[chunk][pos] = we;
    }
    s->ngroups++;
    return s->blocks[id];
}

static void make_key(AggState *s, const Vector *gk, uint32_t row, const int64_t *ws)
{
    strbuf_reset(&s->key);
    ex_key_encode(gk, s->ngk, row, &s->key);
    if (ws != NULL)
        strbuf_append(&s->key, ws, 8);
}

static int eval_keys(ExOp *op, EvalCtx *ecx, const ExBatch *b, Vector **gk, Vector *tv)
{
    const Plan *p = op->plan;
    AggState *s = op->state;
    *gk = ARENA_ARRAY(ecx->arena, Vector, s->ngk ? s->ngk : 1);
    for (int c = 0; c < s->ngk; c++)
        if (ex_eval_sel(ecx, p->u.agg.groups[c], &b->b, b->b.nrows, b->sel, b->n, &(*gk)[c]) < 0)
            return -1;
    if (s->wkind != WINDOW_NONE &&
        ex_eval_sel(ecx, p->u.agg.window.time, &b->b, b->b.nrows, b->sel, b->n, tv) < 0)
        return -1;
    return 0;
}

/* One input batch, no window or a tumbling / sliding one. */
static int consume_batch(ExOp *op, const ExBatch *b)
{
    AggState *s = op->state;
    const WindowSpec *w = &op->plan->u.agg.window;
    EvalCtx ecx = op_eval_ctx(op);
    ecx.arena = &s->scratch;
    Vector *gk, tv;
    if (eval_keys(op, &ecx, b, &gk, &tv) < 0)
        return -1;
    uint32_t nrows = b->b.nrows;
    uint8_t **rows = ARENA_ARRAY(&s->scratch, uint8_t *, nrows ? nrows : 1);
    if (s->wkind == WINDOW_NONE) {
        for (uint32_t k = 0; k < b->n; k++) {
            uint32_t i = b->sel ? b->sel[k] : k;
            make_key(s, gk, i, NULL);
            rows[i] = group_block(op, s, gk, i, 0, 0);
        }
        return ex_aggset_update(s->set, &ecx, &b->b, nrows, b->sel, b->n, rows);
    }
    int64_t slide = s->wkind == WINDOW_SLIDE ? w->slide_us : w->size_us;
    int nwin = (int)((w->size_us + slide - 1) / slide);
    uint32_t *sel = ARENA_ARRAY(&s->scratch, uint32_t, b->n ? b->n : 1);
    for (int j = 0; j < nwin; j++) {
        uint32_t m = 0;
        for (uint32_t k = 0; k < b->n; k++) {
            uint32_t i = b->sel ? b->sel[k] : k;
            if (vector_is_null(&tv, i) || !finite_time(tv.v.i64[i]))
                continue;
            int64_t t = tv.v.i64[i];
            int64_t ws = ex_window_floor(t, slide) - (int64_t)j * slide;
            if (ws + w->size_us <= t)
                continue;
            make_key(s, gk, i, &ws);
            rows[i] = group_block(op, s, gk, i, ws, ws + w->size_us);
            sel[m++] = i;
        }
        if (m > 0 && ex_aggset_update(s->set, &ecx, &b->b, nrows, sel, m, rows) < 0)
            return -1;
    }
    return 0;
}

/* ------------------------------------------------------------ sessions */

typedef struct SessRow {
    uint32_t kid;       /* group key id */
    int64_t  ts;
    uint64_t idx;       /* batch << 32 | row */
} SessRow;

static int sess_cmp(const SessRow *a, const SessRow *b)
{
    if (a->kid != b->kid)
        return a->kid < b->kid ? -1 : 1;
    if (a->ts != b->ts)
        return a->ts < b->ts ? -1 : 1;
    return (a->idx > b->idx) - (a->idx < b->idx);
}

/* A merge sort that looks at the statement's interrupt flag every 65,536
 * rows it merges: -1 with err set once it is cancelled. */
static int sess_sort(SessRow *v, SessRow *tmp, size_t n, SlError *err)
{
    if (n < 2)
        return 0;
    size_t h = n / 2;
    if (sess_sort(v, tmp, h, err) < 0 || sess_sort(v + h, tmp, n - h, err) < 0)
        return -1;
    size_t i = 0, j = h, k = 0;
    while (i < h && j < n) {
        if (k % 65536 == 0 && ex_check_interrupt(err) < 0)
            return -1;
        tmp[k++] = sess_cmp(&v[j], &v[i]) < 0 ? v[j++] : v[i++];
    }
    while (i < h)
        tmp[k++] = v[i++];
    while (j < n)
        tmp[k++] = v[j++];
    memcpy(v, tmp, sizeof(SessRow) * n);
    return 0;
}

static int consume_sessions(ExOp *op)
{
    AggState *s = op->state;
    const Plan *child = op->plan->child;
    Arena *a = op->cx->arena;
    int64_t gap = op->plan->u.agg.window.gap_us;
    RowBuf rb;
    rowbuf_init(&rb, a, child->cols, child->ncols);
    ExBatch *in;
    int rc;
    while ((rc = op_pull(op->child, &in)) > 0)
        rowbuf_append(&rb, in);
    if (rc < 0)
        return -1;
    /* every row with a time: its group key and time */
    SessRow *rows = sl_malloc(sizeof(SessRow) * (size_t)(rb.nrows ? rb.nrows : 1));
    SessRow *tmp = sl_malloc(sizeof(SessRow) * (size_t)(rb.nrows ? rb.nrows : 1));
    ExHashTab *kids = ex_ht_new(a);
    size_t n = 0;
    rc = 0;
    for (int bi = 0; bi < rb.nbatches && rc == 0; bi++) {
        arena_reset(&s->scratch);
        EvalCtx ecx = op_eval_ctx(op);
        ecx.arena = &s->scratch;
        ExBatch eb = {*rb.batches[bi], NULL, rb.batches[bi]->nrows};
        Vector *gk, tv;
        if (eval_keys(op, &ecx, &eb, &gk, &tv) < 0) {
            rc = -1;
            break;
        }
        for (uint32_t i = 0; i < eb.n; i++) {
            if (vector_is_null(&tv, i) || !finite_time(tv.v.i64[i]))
                continue;
            make_key(s, gk, i, NULL);
            bool inserted;
            uint32_t kid = ex_ht_insert(kids, s->key.data ? s->key.data : "",
                                        (uint32_t)s->key.len, &inserted);
            rows[n++] = (SessRow){kid, tv.v.i64[i], (uint64_t)bi << 32 | i};
        }
    }
    /* sessions: per key, in time order */
    int64_t *sstart = NULL, *send = NULL;
    uint32_t *sess_of = NULL;
    if (rc == 0)
        rc = sess_sort(rows, tmp, n, op->cx->err);
    if (rc == 0) {
        sstart = sl_malloc(sizeof(int64_t) * (n ? n : 1));
        send = sl_malloc(sizeof(int64_t) * (n ? n : 1));
        uint32_t nsess = 0;
        for (size_t k = 0; k < n; k++) {
            bool same = k > 0 && rows[k].kid == rows[k - 1].kid && rows[k].ts < send[nsess - 1];
            if (!same) {
                sstart[nsess] = rows[k].ts;
                send[nsess] = rows[k].ts;
                nsess++;
            }
            int64_t end;
            if (__builtin_add_overflow(rows[k].ts, gap, &end))
                end = INT64_MAX - 1;
            if (end > send[nsess - 1])
                send[nsess - 1] = end;
            tmp[k].kid = nsess - 1;     /* reuse tmp: the row's session */
            tmp[k].idx = rows[k].idx;
        }
        /* per row of the buffer, its session (or none) */
        uint64_t total = rb.nrows;
        sess_of = sl_malloc(sizeof(uint32_t) * (size_t)(total ? total : 1));
        memset(sess_of, 0xFF, sizeof(uint32_t) * (size_t)(total ? total : 1));
        uint64_t *first = sl_malloc(sizeof(uint64_t) * (size_t)(rb.nbatches ? rb.nbatches : 1));
        uint64_t acc = 0;
        for (int bi = 0; bi < rb.nbatches; bi++) {
            first[bi] = acc;
            acc += rb.batches[bi]->nrows;
        }
        for (size_t k = 0; k < n; k++)
            sess_of[first[tmp[k].idx >> 32] + (tmp[k].idx & 0xFFFFFFFF)] = tmp[k].kid;
        /* aggregate: key = group key + session start */
        for (int bi = 0; bi < rb.nbatches && rc == 0; bi++) {
            arena_reset(&s->scratch);
            EvalCtx ecx = op_eval_ctx(op);
            ecx.arena = &s->scratch;
            ExBatch eb = {*rb.batches[bi], NULL, rb.batches[bi]->nrows};
            Vector *gk, tv;
            if (eval_keys(op, &ecx, &eb, &gk, &tv) < 0) {
                rc = -1;
                break;
            }
            uint8_t **blocks = ARENA_ARRAY(&s->scratch, uint8_t *, eb.n ? eb.n : 1);
            uint32_t *sel = ARENA_ARRAY(&s->scratch, uint32_t, eb.n ? eb.n : 1);
            uint32_t m = 0;
            for (uint32_t i = 0; i < eb.n; i++) {
                uint32_t sid = sess_of[first[bi] + i];
                if (sid == UINT32_MAX)
                    continue;
                make_key(s, gk, i, &sstart[sid]);
                blocks[i] = group_block(op, s, gk, i, sstart[sid], send[sid]);
                sel[m++] = i;
            }
            if (m > 0 && ex_aggset_update(s->set, &ecx, &eb.b, eb.n, sel, m, blocks) < 0)
                rc = -1;
        }
        sl_free(first);
    }
    sl_free(rows);
    sl_free(tmp);
    sl_free(sstart);
    sl_free(send);
    sl_free(sess_of);
    ex_ht_free(kids);
    return rc;
}

/* ---------------------------------------------------------------- output */

static int consume(ExOp *op)
{
    AggState *s = op->state;
    if (s->wkind == WINDOW_SESSION)
        return consume_sessions(op);
    if (s->ngk == 0 && s->wkind == WINDOW_NONE) {
        strbuf_reset(&s->key);
        group_block(op, s, NULL, 0, 0, 0);
    }
    ExBatch *b;
    int rc;
    while ((rc = op_pull(op->child, &b)) > 0) {
        arena_reset(&s->scratch);
        if (consume_batch(op, b) < 0)
            return -1;
    }
    return rc;
}

static int agg_next(ExOp *op, ExBatch **out)
{
    AggState *s = op->state;
    const Plan *p = op->plan;
    if (!s->consumed) {
        if (consume(op) < 0)
            return -1;
        s->consumed = true;
    }
    if (s->next_chunk >= s->nchunks)
        return 0;
    uint32_t c = s->next_chunk++;
    uint32_t first = c * EX_BATCH_ROWS;
    uint32_t n = SL_MIN(s->ngroups - first, EX_BATCH_ROWS);
    ExBatch *eb = &op->out;
    eb->sel = NULL;
    eb->n = n;
    eb->b.nrows = n;
    eb->b.ncols = (uint32_t)p->ncols;
    eb->b.cols = ARENA_ARRAY(&op->arena, Vector, p->ncols ? p->ncols : 1);
    int col = 0;
    for (int k = 0; k < s->ngk; k++) {
        eb->b.cols[col] = s->keys[c][k];
        eb->b.cols[col++].len = n;
    }
    if (s->wkind != WINDOW_NONE) {
        for (int w = 0; w < 2; w++) {
            Vector *v = &eb->b.cols[col];
            vector_init(v, &op->arena, p->cols[col].type, n, true);
            memcpy(v->v.i64, w == 0 ? s->wstart[c] : s->wend[c], sizeof(int64_t) * n);
            col++;
        }
    }
    int naggs = p->u.agg.naggs;
    Vector *outs = &eb->b.cols[col];
    for (int k = 0; k < naggs; k++)
        vector_init(&outs[k], &op->arena, p->cols[col + k].type, n, true);
    for (uint32_t r = 0; r < n; r++)
        if (ex_aggset_final(s->set, s->blocks[first + r], outs, r, &op->arena, op->cx->err) < 0)
            return -1;
    *out = eb;
    return 1;
}

static void agg_close(ExOp *op)
{
    AggState *s = op->state;
    ex_ht_free(s->ht);
    arena_destroy(&s->scratch);
    strbuf_free(&s->key);
}

ExOp *op_build_agg(ExCtx *cx, const Plan *p, ExOp *child)
{
    SL_UNUSED(child);
    ExOp *op = op_new(cx, p, sizeof(AggState));
    AggState *s = op->state;
    s->set = ex_aggset_new(cx->arena, p->u.agg.aggs, p->u.agg.naggs);
    s->ht = ex_ht_new(cx->arena);
    s->ngk = p->u.agg.ngroups;
    s->wkind = p->u.agg.window.kind;
    arena_init(&s->scratch, 64 * 1024);
    strbuf_init(&s->key);
    op->next = agg_next;
    op->close = agg_close;
    return op;
}
