/*
 * op_sort.c -- Sort and Distinct.
 *
 *   op_build_sort      reads all its input into a RowBuf, sorts row
 *                      references by the key columns (NULLs first or last
 *                      per key, ties kept in input order: a merge sort
 *                      that checks the statement's interrupt flag every
 *                      SORT_CHECK_ROWS rows it merges, where qsort could not
 *                      be stopped), and hands the rows out in order
 *   op_build_distinct  passes the first row of each distinct key (the key
 *                      columns' ex_key_encode bytes in a hash table)
 */
#include "exec/op.h"

typedef struct RowRef {
    uint32_t batch;
    uint32_t row;
} RowRef;

typedef struct SortState {
    RowBuf   rb;
    RowRef  *order;
    uint64_t n, pos;
    bool     sorted;
} SortState;

static int cmp_rows(const RowBuf *rb, const Plan *p, RowRef a, RowRef b)
{
    for (int k = 0; k < p->u.sort.nkeys; k++) {
        const SortKey *sk = &p->u.sort.keys[k];
        const Vector *va = &rb->batches[a.batch]->cols[sk->col];
        const Vector *vb = &rb->batches[b.batch]->cols[sk->col];
        bool na = vector_is_null(va, a.row), nb = vector_is_null(vb, b.row);
        int c;
        if (na || nb) {
            if (na && nb)
                continue;
            /* NULL sorts after everything unless nulls_first */
            c = na ? 1 : -1;
            if (sk->nulls_first)
                c = -c;
            return c;
        }
        c = ex_value_cmp(va, a.row, vb, b.row);
        if (c != 0)
            return sk->desc ? -c : c;
    }
    return 0;
}

/* Rows merged between two looks at the interrupt flag. */
#define SORT_CHECK_ROWS 65536

/* Sorts v[0..n); -1 with err set when the statement was cancelled or timed
 * out meanwhile.  *merged counts the rows merged since the last look at the
 * interrupt flag, across all the merges of one sort. */
static int merge_sort(const RowBuf *rb, const Plan *p, RowRef *v, RowRef *tmp, uint64_t n,
                      uint64_t *merged, SlError *err)
{
    if (n < 2)
        return 0;
    if (n <= 16) {
        for (uint64_t i = 1; i < n; i++) {
            RowRef x = v[i];
            uint64_t j = i;
            while (j > 0 && cmp_rows(rb, p, v[j - 1], x) > 0) {
                v[j] = v[j - 1];
                j--;
            }
            v[j] = x;
        }
        return 0;
    }
    uint64_t h = n / 2;
    if (merge_sort(rb, p, v, tmp, h, merged, err) < 0 ||
        merge_sort(rb, p, v + h, tmp, n - h, merged, err) < 0)
        return -1;
    uint64_t i = 0, j = h, k = 0;
    while (i < h && j < n) {
        if (++*merged >= SORT_CHECK_ROWS) {
            *merged = 0;
            if (ex_check_interrupt(err) < 0)
                return -1;
        }
        tmp[k++] = cmp_rows(rb, p, v[j], v[i]) < 0 ? v[j++] : v[i++];
    }
    while (i < h)
        tmp[k++] = v[i++];
    while (j < n)
        tmp[k++] = v[j++];
    memcpy(v, tmp, sizeof(RowRef) * n);
    return 0;
}

static int sort_next(ExOp *op, ExBatch **out)
{
    SortState *s = op->state;
    const Plan *p = op->plan;
    if (!s->sorted) {
        ExBatch *in;
        int rc;
        while ((rc = op_pull(op->child, &in)) > 0)
            rowbuf_append(&s->rb, in);
        if (rc < 0)
            return -1;
        s->n = s->rb.nrows;
        s->order = sl_malloc(sizeof(RowRef) * (size_t)(s->n ? s->n : 1));
        uint64_t k = 0;
        for (int b = 0; b < s->rb.nbatches; b++)
            for (uint32_t r = 0; r < s->rb.batches[b]->nrows; r++)
                s->order[k++] = (RowRef){(uint32_t)b, r};
        RowRef *tmp = sl_malloc(sizeof(RowRef) * (size_t)(s->n ? s->n : 1));
        uint64_t merged = 0;
        rc = merge_sort(&s->rb, p, s->order, tmp, s->n, &merged, op->cx->err);
        sl_free(tmp);
        if (rc < 0)
            return -1;
        s->sorted = true;
    }
    if (s->pos >= s->n)
        return 0;
    uint32_t n = (uint32_t)SL_MIN(s->n - s->pos, (uint64_t)EX_BATCH_ROWS);
    ExBatch *eb = &op->out;
    eb->sel = NULL;
    eb->n = n;
    eb->b.nrows = n;
    eb->b.ncols = (uint32_t)p->ncols;
    eb->b.cols = ARENA_ARRAY(&op->arena, Vector, p->ncols ? p->ncols : 1);
    for (int c = 0; c < p->ncols; c++) {
        Vector *v = &eb->b.cols[c];
        vector_init(v, &op->arena, s->rb.types[c], n, true);
        for (uint32_t r = 0; r < n; r++) {
            RowRef ref = s->order[s->pos + r];
            ex_copy_value(v, r, &s->rb.batches[ref.batch]->cols[c], ref.row, NULL);
        }
    }
    s->pos += n;
    *out = eb;
    return 1;
}

static void sort_close(ExOp *op)
{
    SortState *s = op->state;
    sl_free(s->order);
}

ExOp *op_build_sort(ExCtx *cx, const Plan *p, ExOp *child)
{
    SL_UNUSED(child);
    ExOp *op = op_new(cx, p, sizeof(SortState));
    SortState *s = op->state;
    rowbuf_init(&s->rb, cx->arena, p->cols, p->ncols);
    op->next = sort_next;
    op->close = sort_close;
    return op;
}

/* -------------------------------------------------------------- distinct */

typedef struct DistinctState {
    ExHashTab *seen;
    Vector    *keys;
    StrBuf     key;
} DistinctState;

static int distinct_next(ExOp *op, ExBatch **out)
{
    DistinctState *s = op->state;
    const Plan *p = op->plan;
    int nk = p->u.distinct.nkeys;
    for (;;) {
        ExBatch *in;
        int rc = op_pull(op->child, &in);
        if (rc <= 0)
            return rc;
        for (int k = 0; k < nk; k++)
            s->keys[k] = in->b.cols[p->u.distinct.keys[k]];
        uint32_t *sel = ARENA_ARRAY(&op->arena, uint32_t, in->n);
        uint32_t m = 0;
        for (uint32_t j = 0; j < in->n; j++) {
            uint32_t i = in->sel ? in->sel[j] : j;
            strbuf_reset(&s->key);
            ex_key_encode(s->keys, nk, i, &s->key);
            bool inserted;
            ex_ht_insert(s->seen, s->key.data, (uint32_t)s->key.len, &inserted);
            if (inserted)
                sel[m++] = i;
        }
        if (m == 0)
            continue;
        op->out.b = in->b;
        op->out.sel = sel;
        op->out.n = m;
        *out = &op->out;
        return 1;
    }
}

static void distinct_close(ExOp *op)
{
    DistinctState *s = op->state;
    ex_ht_free(s->seen);
    strbuf_free(&s->key);
}

ExOp *op_build_distinct(ExCtx *cx, const Plan *p, ExOp *child)
{
    SL_UNUSED(child);
    ExOp *op = op_new(cx, p, sizeof(DistinctState));
    DistinctState *s = op->state;
    s->seen = ex_ht_new(cx->arena);
    s->keys = ARENA_ARRAY(cx->arena, Vector, p->u.distinct.nkeys ? p->u.distinct.nkeys : 1);
    strbuf_init(&s->key);
    op->next = distinct_next;
    op->close = distinct_close;
    return op;
}
