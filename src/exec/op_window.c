/*
 * op_window.c -- window functions over a sorted input, and
 * generate_series in FROM.
 *
 *   op_build_window    row_number(), rank(), dense_rank() OVER (PARTITION
 *                      BY ... ORDER BY ...)
 *   op_build_series    generate_series(start, stop [, step]) and
 *                      unnest(array): the arguments evaluated once (they
 *                      may read a correlated subquery's outer row), then
 *                      the integers or the array's elements
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
    /* unnest: the elements, as text (NULL: a NULL element) */
    SlStr  *elems;
    bool   *nulls;
    int64_t nelems, cap;
} SeriesState;

typedef struct UnnestArg {
    SeriesState *s;
    Arena       *a;
} UnnestArg;

static bool unnest_cb(const SlStr *el, void *arg)
{
    UnnestArg *u = arg;
    SeriesState *s = u->s;
    if (s->nelems == s->cap) {
        int64_t cap = s->cap ? 2 * s->cap : 16;
        SlStr *e = ARENA_ARRAY(u->a, SlStr, cap);
        bool *n = ARENA_ARRAY(u->a, bool, cap);
        if (s->nelems) {
            memcpy(e, s->elems, sizeof(SlStr) * (size_t)s->nelems);
            memcpy(n, s->nulls, sizeof(bool) * (size_t)s->nelems);
        }
        s->elems = e;
        s->nulls = n;
        s->cap = cap;
    }
    s->nulls[s->nelems] = el == NULL;
    if (el != NULL) {
        s->elems[s->nelems].ptr = arena_strndup(u->a, el->ptr, el->len);
        s->elems[s->nelems].len = el->len;
    }
    s->nelems++;
    return true;
}

/* unnest: the array's elements, kept for the statement. */
static int unnest_start(ExOp *op, SeriesState *s)
{
    EvalCtx ecx = op_eval_ctx(op);
    Vector arr;
    if (ex_eval(&ecx, op->plan->u.series.start, NULL, 1, &arr) < 0)
        return -1;
    if (vector_is_null(&arr, 0))
        return 0;
    UnnestArg u = {s, op->cx->arena};
    if (!ex_array_elems(&arr.v.str[0], unnest_cb, &u))
        return sl_error(op->cx->err, ERRCODE_INVALID_TEXT_REPRESENTATION,
                        "malformed array literal: \"%.*s\"", (int)arr.v.str[0].len,
                        arr.v.str[0].ptr);
    s->next = 0;
    return 0;
}

/* The next batch of unnest's elements, in their column's type. */
static int unnest_next(ExOp *op, SeriesState *s, Vector *col, uint32_t *n)
{
    *n = 0;
    while (s->next < s->nelems && *n < EX_BATCH_ROWS) {
        int64_t k = s->next++;
        uint32_t i = (*n)++;
        if (s->nulls[k]) {
            col->nulls[i] = 1;
            continue;
        }
        col->nulls[i] = 0;
        if (value_parse_text(&op->arena, col->type, s->elems[k].ptr, s->elems[k].len, col, i,
                             -1, op->cx->err) < 0)
            return -1;
    }
    return 0;
}

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
    const Plan *p = op->plan;
    if (!s->started) {
        s->started = true;
        if ((p->u.series.unnest ? unnest_start(op, s) : series_start(op, s)) < 0)
            return -1;
    }
    Vector *col = ARENA_NEW(&op->arena, Vector);
    vector_init(col, &op->arena, p->cols[0].type, EX_BATCH_ROWS, p->u.series.unnest);
    uint32_t n = 0;
    if (p->u.series.unnest && unnest_next(op, s, col, &n) < 0)
        return -1;
    while (!p->u.series.unnest && !s->done && n < EX_BATCH_ROWS) {
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
