/*
 * op_window.c -- window functions over a sorted input, and
 * generate_series in FROM.
 *
 *   op_build_window    row_number(), rank(), dense_rank() OVER (PARTITION
 *                      BY ... ORDER BY ...)
 *   op_build_series    generate_series(start, stop [, step]): its
 *                      arguments evaluated once (they may read a
 *                      correlated subquery's outer row), then the integers
 *
 * The analyzer puts a Sort by the partition keys, then the order keys,
 * under the Window node, so a partition's rows arrive together and in
 * order; the operator passes its input's batches through with one more
 * column.  A new partition starts where the partition keys' equality bytes
 * (ex_key_encode) change; rank and dense_rank also compare the order keys.
 * Only these three functions, without frames: the ones catalog queries
 * (pgJDBC's getColumns) use.
 */
#include "exec/op.h"

typedef struct WindowState {
    StrBuf   part, prev_part;   /* partition key of this row and the one before */
    StrBuf   peer, prev_peer;   /* order key: rows with equal keys are peers */
    Vector  *keys;
    bool     any;               /* a row was seen */
    int64_t  row, rank, dense;
} WindowState;

static bool same_bytes(const StrBuf *a, const StrBuf *b)
{
    return a->len == b->len && (a->len == 0 || memcmp(a->data, b->data, a->len) == 0);
}

static int window_next(ExOp *op, ExBatch **out)
{
    WindowState *s = op->state;
    const Plan *p = op->plan;
    ExBatch *in;
    int rc = op_pull(op->child, &in);
    if (rc <= 0)
        return rc;
    uint32_t nc = in->b.ncols;
    Vector *cols = ARENA_ARRAY(&op->arena, Vector, nc + 1);
    memcpy(cols, in->b.cols, sizeof(Vector) * nc);
    Vector *num = &cols[nc];
    vector_init(num, &op->arena, sl_type(TYPE_INT8), in->b.nrows, false);
    int np = p->u.window.npart, no = p->u.window.norder;
    for (uint32_t j = 0; j < in->n; j++) {
        uint32_t i = in->sel ? in->sel[j] : j;
        strbuf_reset(&s->part);
        strbuf_reset(&s->peer);
        for (int k = 0; k < np; k++)
            s->keys[k] = in->b.cols[p->u.window.part[k]];
        ex_key_encode(s->keys, np, i, &s->part);
        for (int k = 0; k < no; k++)
            s->keys[k] = in->b.cols[p->u.window.order[k]];
        ex_key_encode(s->keys, no, i, &s->peer);
        bool same_part = s->any && same_bytes(&s->part, &s->prev_part);
        bool peer = same_part && same_bytes(&s->peer, &s->prev_peer);
        if (!same_part) {
            s->row = s->rank = s->dense = 1;
        } else {
            s->row++;
            if (!peer) {
                s->rank = s->row;
                s->dense++;
            }
        }
        s->any = true;
        num->v.i64[i] = p->u.window.func == WINDOW_FUNC_ROW_NUMBER ? s->row
                        : p->u.window.func == WINDOW_FUNC_RANK     ? s->rank : s->dense;
        strbuf_reset(&s->prev_part);
        strbuf_append(&s->prev_part, s->part.data ? s->part.data : "", s->part.len);
        strbuf_reset(&s->prev_peer);
        strbuf_append(&s->prev_peer, s->peer.data ? s->peer.data : "", s->peer.len);
    }
    op->out.b.nrows = in->b.nrows;
    op->out.b.ncols = nc + 1;
    op->out.b.cols = cols;
    op->out.sel = in->sel;
    op->out.n = in->n;
    *out = &op->out;
    return 1;
}

static void window_close(ExOp *op)
{
    WindowState *s = op->state;
    strbuf_free(&s->part);
    strbuf_free(&s->prev_part);
    strbuf_free(&s->peer);
    strbuf_free(&s->prev_peer);
}

ExOp *op_build_window(ExCtx *cx, const Plan *p, ExOp *child)
{
    SL_UNUSED(child);
    ExOp *op = op_new(cx, p, sizeof(WindowState));
    WindowState *s = op->state;
    strbuf_init(&s->part);
    strbuf_init(&s->prev_part);
    strbuf_init(&s->peer);
    strbuf_init(&s->prev_peer);
    int nk = p->u.window.npart > p->u.window.norder ? p->u.window.npart : p->u.window.norder;
    s->keys = ARENA_ARRAY(cx->arena, Vector, nk ? nk : 1);
    op->next = window_next;
    op->close = window_close;
    return op;
}

/* ------------------------------------------------------ generate_series */

typedef struct SeriesState {
    bool    started, done;
    int64_t next, stop, step;
} SeriesState;

static int series_start(ExOp *op, SeriesState *s)
{
    const Plan *p = op->plan;
    EvalCtx ecx = op_eval_ctx(op);
    Expr *args[3] = {p->u.series.start, p->u.series.stop, p->u.series.step};
    int64_t v[3] = {0, 0, 1};
    for (int k = 0; k < 3; k++) {
        if (args[k] == NULL)
            continue;
        Vector out;
        if (ex_eval(&ecx, args[k], NULL, 1, &out) < 0)
            return -1;
        if (vector_is_null(&out, 0)) {
            s->done = true;         /* a NULL argument: no rows */
            return 0;
        }
        v[k] = out.v.i64[0];
    }
    if (v[2] == 0)
        return sl_error(op->cx->err, ERRCODE_INVALID_PARAMETER_VALUE,
                        "step size cannot equal zero");
    s->next = v[0];
    s->stop = v[1];
    s->step = v[2];
    return 0;
}

static int series_next(ExOp *op, ExBatch **out)
{
    SeriesState *s = op->state;
    if (!s->started) {
        s->started = true;
        if (series_start(op, s) < 0)
            return -1;
    }
    const Plan *p = op->plan;
    Vector *col = ARENA_NEW(&op->arena, Vector);
    vector_init(col, &op->arena, p->cols[0].type, EX_BATCH_ROWS, false);
    uint32_t n = 0;
    while (!s->done && n < EX_BATCH_ROWS) {
        if (s->step > 0 ? s->next > s->stop : s->next < s->stop) {
            s->done = true;
            break;
        }
        if (col->type.id == TYPE_INT4)
            col->v.i32[n++] = (int32_t)s->next;
        else
            col->v.i64[n++] = s->next;
        if (__builtin_add_overflow(s->next, s->step, &s->next))
            s->done = true;
    }
    if (n == 0)
        return 0;
    col->len = n;
    op->out.b.nrows = n;
    op->out.b.ncols = 1;
    op->out.b.cols = col;
    op->out.sel = NULL;
    op->out.n = n;
    *out = &op->out;
    return 1;
}

ExOp *op_build_series(ExCtx *cx, const Plan *p)
{
    ExOp *op = op_new(cx, p, sizeof(SeriesState));
    op->next = series_next;
    return op;
}
