/*
 * op_recursive.c -- WITH RECURSIVE: the Recursive Union and the WorkTable
 * Scan that its recursive term reads.
 *
 *   op_build_recursive, op_build_worktable
 *
 * As PostgreSQL's RecursiveUnion: the rows of the non-recursive term (the
 * left input) are handed out and kept as the working table; then the
 * recursive term (the right plan) is built and run over the working table
 * (its WORKTABLE nodes of the same id read it, found through
 * ExCtx.worktables), its rows handed out and kept as the next working
 * table, and so again until a run makes no row.  UNION (not ALL) hands out
 * and keeps only rows not seen before, so a cycle ends.  Rows are handed
 * out as they are made: a LIMIT above stops the recursion.
 *
 * Every working table stays in the statement's arena until the statement
 * ends, so the rows a recursion makes count against statement_mem and the
 * server's max_memory: a recursion that never ends stops with 53200 at
 * that limit (or at statement_timeout, or a cancel), never the server.
 */
#include "exec/op.h"

typedef struct RecursiveState {
    bool        on_term;    /* the non-recursive term is done */
    RowBuf      work;       /* what the recursive term's current run reads */
    RowBuf      next;       /* what it makes: the next working table */
    ExOp       *term;       /* the current run of the recursive term, or NULL */
    ExCtx       tcx;        /* its context: worktables = &wt, then the outer ones */
    ExWorkTable wt;
    ExHashTab  *seen;       /* UNION: every row handed out */
    StrBuf      key;
    uint32_t   *sel;        /* EX_BATCH_ROWS */
} RecursiveState;

/* Passes the new rows of in (all of them for UNION ALL) into the next
 * working table and *out: 1 when there are some, else 0. */
static int pass_rows(ExOp *op, ExBatch *in, ExBatch **out)
{
    RecursiveState *s = op->state;
    uint32_t m = 0;
    uint32_t *sel = in->n <= EX_BATCH_ROWS ? s->sel
                                           : ARENA_ARRAY(&op->arena, uint32_t, in->n);
    for (uint32_t k = 0; k < in->n; k++) {
        uint32_t i = in->sel ? in->sel[k] : k;
        if (!op->plan->u.recursive.all) {
            strbuf_reset(&s->key);
            ex_key_encode(in->b.cols, (int)in->b.ncols, i, &s->key);
            bool inserted;
            ex_ht_insert(s->seen, s->key.data, (uint32_t)s->key.len, &inserted);
            if (!inserted)
                continue;
        }
        sel[m++] = i;
    }
    if (m == 0)
        return 0;
    op->out.b = in->b;
    op->out.sel = ARENA_ARRAY(&op->arena, uint32_t, m);
    memcpy(op->out.sel, sel, sizeof(uint32_t) * m);
    op->out.n = m;
    rowbuf_append(&s->next, &op->out);
    *out = &op->out;
    return 1;
}

static int recursive_next(ExOp *op, ExBatch **out)
{
    RecursiveState *s = op->state;
    const Plan *p = op->plan;
    for (;;) {
        ExBatch *in;
        int rc;
        if (!s->on_term) {
            if ((rc = op_pull(op->child, &in)) < 0)
                return -1;
            if (rc == 0) {
                s->on_term = true;
                continue;
            }
        } else {
            if (s->term == NULL) {
                /* the next run, over what the last one made */
                if (s->next.nrows == 0)
                    return 0;
                s->work = s->next;
                rowbuf_init(&s->next, op->cx->arena, p->cols, p->ncols);
                s->wt.id = p->u.recursive.id;
                s->wt.rows = &s->work;
                s->wt.next = op->cx->worktables;
                s->tcx = *op->cx;
                s->tcx.worktables = &s->wt;
                if ((s->term = ex_op_build(&s->tcx, p->right)) == NULL)
                    return -1;
            }
            if ((rc = op_pull(s->term, &in)) < 0)
                return -1;
            if (rc == 0) {
                ex_op_close(s->term);
                s->term = NULL;
                continue;
            }
        }
        if (pass_rows(op, in, out) > 0)
            return 1;
    }
}

static void recursive_close(ExOp *op)
{
    RecursiveState *s = op->state;
    ex_op_close(s->term);
    s->term = NULL;
    if (s->seen)
        ex_ht_free(s->seen);
    strbuf_free(&s->key);
}

ExOp *op_build_recursive(ExCtx *cx, const Plan *p, ExOp *nonrecursive)
{
    SL_UNUSED(nonrecursive);
    ExOp *op = op_new(cx, p, sizeof(RecursiveState));
    RecursiveState *s = op->state;
    rowbuf_init(&s->next, cx->arena, p->cols, p->ncols);
    if (!p->u.recursive.all)
        s->seen = ex_ht_new(cx->arena);
    strbuf_init(&s->key);
    s->sel = ARENA_ARRAY(cx->arena, uint32_t, EX_BATCH_ROWS);
    op->next = recursive_next;
    op->close = recursive_close;
    return op;
}

/* ------------------------------------------------------------ worktable */

typedef struct WorkTableState {
    const RowBuf *rows;
    int           pos;      /* the next of its batches */
} WorkTableState;

static int worktable_next(ExOp *op, ExBatch **out)
{
    WorkTableState *s = op->state;
    return rowbuf_scan(op, s->rows, &s->pos, out);
}

ExOp *op_build_worktable(ExCtx *cx, const Plan *p)
{
    const ExWorkTable *wt = cx->worktables;
    while (wt != NULL && wt->id != p->u.worktable.id)
        wt = wt->next;
    if (wt == NULL) {
        sl_error(cx->err, ERRCODE_INTERNAL_ERROR, "the working table %d is not running",
                 p->u.worktable.id);
        return NULL;
    }
    ExOp *op = op_new(cx, p, sizeof(WorkTableState));
    ((WorkTableState *)op->state)->rows = wt->rows;
    op->next = worktable_next;
    return op;
}
