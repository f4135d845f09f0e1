/*
 * op_join.c -- joins: hash join on equi keys, nested loop without them;
 * inner, left, right and full.
 *
 *   op_build_join
 *
 * The right input is read first into a RowBuf (the build side); with keys
 * it is indexed by a hash table of ex_key_encode bytes -> a chain of rows
 * (a row with a NULL key matches nothing).  Then each left batch is probed
 * row by row: candidate pairs are gathered into an output batch of up to
 * EX_BATCH_ROWS rows (left columns then right columns), the residual
 * condition is evaluated on it, and the pairs that pass are the output
 * (and mark both rows matched).  After a left batch, LEFT and FULL joins
 * emit its unmatched rows with NULLs on the right; after the last one,
 * RIGHT and FULL joins emit the unmatched right rows with NULLs on the
 * left.  Probing resumes where it stopped when a batch fills up.  Between
 * two candidate batches none of whose pairs passed, the statement's
 * interrupt flag is looked at: a cancel or timeout stops a long probe.
 */
#include "exec/op.h"

typedef struct JoinState {
    RowBuf     rb;
    uint32_t  *rbatch, *rrow;   /* build row id -> its place in rb */
    uint64_t   nright;
    ExHashTab *ht;              /* key -> chain head */
    int64_t   *head;            /* per key id: first row id */
    int64_t   *tail;            /* per key id: last row id */
    int64_t   *next;            /* per row id: next row of its chain */
    uint8_t   *rmatched;
    bool       built;
    /* probing */
    ExBatch   *left;            /* current left batch (NULL: pull one) */
    Vector    *lkeys;
    uint8_t   *lmatched;        /* per row of the left batch */
    uint32_t   lpos;            /* position in its live rows */
    int64_t    cand;            /* next candidate right row, -1: start the row */
    bool       left_done;       /* no more left batches */
    bool       emitted_unmatched_left;
    uint64_t   rpos;            /* unmatched right rows: scan position */
    Arena      larena;          /* the current left batch's keys and flags */
    StrBuf     key;
} JoinState;

static bool has_null(const Vector *keys, int n, uint32_t row)
{
    for (int k = 0; k < n; k++)
        if (vector_is_null(&keys[k], row))
            return true;
    return false;
}

static int build(ExOp *op)
{
    JoinState *s = op->state;
    const Plan *p = op->plan;
    Arena *a = op->cx->arena;
    int nk = p->u.join.nkeys;
    ExBatch *in;
    int rc;
    while ((rc = op_pull(op->right, &in)) > 0)
        rowbuf_append(&s->rb, in);
    if (rc < 0)
        return -1;
    s->nright = s->rb.nrows;
    size_t n = (size_t)(s->nright ? s->nright : 1);
    s->rbatch = sl_malloc(sizeof(uint32_t) * n);
    s->rrow = sl_malloc(sizeof(uint32_t) * n);
    s->next = sl_malloc(sizeof(int64_t) * n);
    s->rmatched = sl_calloc(n, 1);
    uint64_t id = 0;
    for (int b = 0; b < s->rb.nbatches; b++)
        for (uint32_t r = 0; r < s->rb.batches[b]->nrows; r++, id++) {
            s->rbatch[id] = (uint32_t)b;
            s->rrow[id] = r;
            s->next[id] = -1;
        }
    if (nk == 0)
        return 0;
    s->ht = ex_ht_new(a);
    uint64_t headcap = 1024;
    s->head = sl_malloc(sizeof(int64_t) * headcap);
    s->tail = sl_malloc(sizeof(int64_t) * headcap);
    Arena scratch;
    arena_init(&scratch, 64 * 1024);
    EvalCtx ecx = op_eval_ctx(op);
    ecx.arena = &scratch;
    Vector *keys = ARENA_ARRAY(a, Vector, nk);
    id = 0;
    for (int b = 0; b < s->rb.nbatches && rc == 0; b++) {
        arena_reset(&scratch);
        const Batch *batch = s->rb.batches[b];
        for (int k = 0; k < nk && rc == 0; k++)
            rc = ex_eval(&ecx, p->u.join.rkeys[k], batch, batch->nrows, &keys[k]);
        /* chains list rows in input order */
        for (uint32_t r = 0; r < batch->nrows && rc == 0; r++, id++) {
            if (has_null(keys, nk, r))
                continue;
            strbuf_reset(&s->key);
            ex_key_encode(keys, nk, r, &s->key);
            bool inserted;
            uint32_t kid = ex_ht_insert(s->ht, s->key.data, (uint32_t)s->key.len, &inserted);
            if (!inserted) {
                s->next[s->tail[kid]] = (int64_t)id;
            } else {
                if (kid >= headcap) {
                    headcap *= 2;
                    s->head = sl_realloc(s->head, sizeof(int64_t) * headcap);
                    s->tail = sl_realloc(s->tail, sizeof(int64_t) * headcap);
                }
                s->head[kid] = (int64_t)id;
            }
            s->tail[kid] = (int64_t)id;
        }
    }
    arena_destroy(&scratch);
    return rc;
}

/* An output batch of up to cap rows of left ++ right columns. */
static ExBatch *new_out(ExOp *op, uint32_t cap)
{
    const Plan *p = op->plan;
    ExBatch *eb = &op->out;
    eb->b.ncols = (uint32_t)p->ncols;
    eb->b.nrows = 0;
    eb->b.cols = ARENA_ARRAY(&op->arena, Vector, p->ncols ? p->ncols : 1);
    for (int c = 0; c < p->ncols; c++)
        vector_init(&eb->b.cols[c], &op->arena, p->cols[c].type, cap, true);
    eb->sel = NULL;
    eb->n = 0;
    return eb;
}

static void put_left(ExOp *op, ExBatch *eb, uint32_t r, const ExBatch *left, int64_t lrow)
{
    int nl = op->plan->child->ncols;
    for (int c = 0; c < nl; c++) {
        if (lrow < 0)
            eb->b.cols[c].nulls[r] = 1;
        else
            ex_copy_value(&eb->b.cols[c], r, &left->b.cols[c], (uint32_t)lrow, NULL);
    }
}

static void put_right(ExOp *op, ExBatch *eb, uint32_t r, int64_t rid)
{
    JoinState *s = op->state;
    int nl = op->plan->child->ncols, nr = op->plan->right->ncols;
    for (int c = 0; c < nr; c++) {
        if (rid < 0)
            eb->b.cols[nl + c].nulls[r] = 1;
        else
            ex_copy_value(&eb->b.cols[nl + c], r, &s->rb.batches[s->rbatch[rid]]->cols[c],
                          s->rrow[rid], NULL);
    }
}

/* Probes the current left batch into one output batch. */
static int probe(ExOp *op, ExBatch **out)
{
    JoinState *s = op->state;
    const Plan *p = op->plan;
    int nk = p->u.join.nkeys;
    ExBatch *left = s->left;
    ExBatch *eb = new_out(op, EX_BATCH_ROWS);
    int64_t *lrow = ARENA_ARRAY(&op->arena, int64_t, EX_BATCH_ROWS);
    int64_t *rid = ARENA_ARRAY(&op->arena, int64_t, EX_BATCH_ROWS);
    uint32_t n = 0;
    while (s->lpos < left->n && n < EX_BATCH_ROWS) {
        uint32_t i = left->sel ? left->sel[s->lpos] : s->lpos;
        if (s->cand == -1) {
            /* start this row's candidates */
            if (nk == 0) {
                s->cand = s->nright > 0 ? 0 : -2;
            } else if (has_null(s->lkeys, nk, i)) {
                s->cand = -2;
            } else {
                strbuf_reset(&s->key);
                ex_key_encode(s->lkeys, nk, i, &s->key);
                int64_t kid = ex_ht_find(s->ht, s->key.data, (uint32_t)s->key.len);
                s->cand = kid < 0 ? -2 : s->head[kid];
            }
        }
        if (s->cand < 0) {
            s->lpos++;
            s->cand = -1;
            continue;
        }
        lrow[n] = i;
        rid[n] = s->cand;
        n++;
        if (nk == 0)
            s->cand = (uint64_t)(s->cand + 1) < s->nright ? s->cand + 1 : -2;
        else
            s->cand = s->next[s->cand] >= 0 ? s->next[s->cand] : -2;
    }
    for (uint32_t r = 0; r < n; r++) {
        put_left(op, eb, r, left, lrow[r]);
        put_right(op, eb, r, rid[r]);
    }
    eb->b.nrows = n;
    eb->n = n;
    for (int c = 0; c < p->ncols; c++)
        eb->b.cols[c].len = n;
    uint32_t *sel = NULL;
    uint32_t m = n;
    if (p->u.join.residual != NULL && n > 0) {
        EvalCtx ecx = op_eval_ctx(op);
        Vector v;
        if (ex_eval(&ecx, p->u.join.residual, &eb->b, n, &v) < 0)
            return -1;
        sel = ARENA_ARRAY(&op->arena, uint32_t, n);
        m = 0;
        for (uint32_t r = 0; r < n; r++)
            if (!vector_is_null(&v, r) && v.v.b[r])
                sel[m++] = r;
    }
    for (uint32_t k = 0; k < m; k++) {
        uint32_t r = sel ? sel[k] : k;
        s->lmatched[lrow[r]] = 1;
        s->rmatched[rid[r]] = 1;
    }
    eb->sel = sel && m < n ? sel : NULL;
    eb->n = m;
    *out = eb;
    return 1;
}

static int unmatched_left(ExOp *op, ExBatch **out)
{
    JoinState *s = op->state;
    ExBatch *left = s->left;
    ExBatch *eb = new_out(op, left->n);
    uint32_t n = 0;
    for (uint32_t k = 0; k < left->n; k++) {
        uint32_t i = left->sel ? left->sel[k] : k;
        if (s->lmatched[i])
            continue;
        put_left(op, eb, n, left, i);
        put_right(op, eb, n, -1);
        n++;
    }
    eb->b.nrows = eb->n = n;
    for (int c = 0; c < op->plan->ncols; c++)
        eb->b.cols[c].len = n;
    *out = eb;
    return 1;
}

static int unmatched_right(ExOp *op, ExBatch **out)
{
    JoinState *s = op->state;
    ExBatch *eb = new_out(op, EX_BATCH_ROWS);
    uint32_t n = 0;
    while (s->rpos < s->nright && n < EX_BATCH_ROWS) {
        uint64_t id = s->rpos++;
        if (s->rmatched[id])
            continue;
        put_left(op, eb, n, NULL, -1);
        put_right(op, eb, n, (int64_t)id);
        n++;
    }
    eb->b.nrows = eb->n = n;
    for (int c = 0; c < op->plan->ncols; c++)
        eb->b.cols[c].len = n;
    *out = eb;
    return 1;
}

static int join_next(ExOp *op, ExBatch **out)
{
    JoinState *s = op->state;
    const Plan *p = op->plan;
    JoinType jt = p->u.join.type;
    if (!s->built) {
        if (build(op) < 0)
            return -1;
        s->built = true;
    }
    for (;;) {
        if (!s->left_done && s->left == NULL) {
            ExBatch *in;
            int rc = op_pull(op->child, &in);
            if (rc < 0)
                return -1;
            if (rc == 0) {
                s->left_done = true;
                continue;
            }
            /* the batch stays valid until we pull again; what we compute
             * about it lives in larena, which outlasts our output batches */
            s->left = in;
            s->lpos = 0;
            s->cand = -1;
            s->emitted_unmatched_left = false;
            arena_reset(&s->larena);
            s->lmatched = arena_zalloc(&s->larena, in->b.nrows ? in->b.nrows : 1);
            int nk = p->u.join.nkeys;
            if (nk > 0) {
                s->lkeys = ARENA_ARRAY(&s->larena, Vector, nk);
                EvalCtx ecx = op_eval_ctx(op);
                ecx.arena = &s->larena;
                for (int k = 0; k < nk; k++)
                    if (ex_eval_sel(&ecx, p->u.join.lkeys[k], &in->b, in->b.nrows, in->sel,
                                    in->n, &s->lkeys[k]) < 0)
                        return -1;
            }
        }
        if (s->left != NULL) {
            ExBatch *left = s->left;
            if (s->lpos < left->n) {
                int rc = probe(op, out);
                if (rc < 0 || (*out)->n > 0)
                    return rc;
                /* No pair passed: probe on, but not past a cancel (a nested
                 * loop may try billions of pairs for one output row). */
                if (ex_check_interrupt(op->cx->err) < 0)
                    return -1;
                continue;
            }
            if ((jt == JOIN_LEFT || jt == JOIN_FULL) && !s->emitted_unmatched_left) {
                s->emitted_unmatched_left = true;
                int rc = unmatched_left(op, out);
                if (rc < 0 || (*out)->n > 0)
                    return rc;
            }
            s->left = NULL;
            continue;
        }
        /* the left side is done */
        if ((jt == JOIN_RIGHT || jt == JOIN_FULL) && s->rpos < s->nright) {
            int rc = unmatched_right(op, out);
            if (rc < 0 || (*out)->n > 0)
                return rc;
            continue;
        }
        return 0;
    }
}

static void join_close(ExOp *op)
{
    JoinState *s = op->state;
    sl_free(s->rbatch);
    sl_free(s->rrow);
    sl_free(s->next);
    sl_free(s->rmatched);
    sl_free(s->head);
    sl_free(s->tail);
    ex_ht_free(s->ht);
    arena_destroy(&s->larena);
    strbuf_free(&s->key);
}

ExOp *op_build_join(ExCtx *cx, const Plan *p, ExOp *left, ExOp *right)
{
    SL_UNUSED(left);
    SL_UNUSED(right);
    ExOp *op = op_new(cx, p, sizeof(JoinState));
    JoinState *s = op->state;
    rowbuf_init(&s->rb, cx->arena, p->right->cols, p->right->ncols);
    arena_init(&s->larena, 16 * 1024);
    strbuf_init(&s->key);
    op->next = join_next;
    op->close = join_close;
    return op;
}
