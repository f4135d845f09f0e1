/*
 * op_setop.c -- UNION [ALL], INTERSECT [ALL], EXCEPT [ALL].
 *
 *   op_build_setop
 *
 * UNION ALL hands out the left input, then the right one.  UNION does the
 * same, passing only the first row of each distinct row.  INTERSECT and
 * EXCEPT first count the right input's rows per distinct row, then stream
 * the left input: INTERSECT ALL passes a row while the right still has an
 * unmatched copy of it (min(m, n) copies), EXCEPT ALL skips a row while
 * the right has a copy left (max(m - n, 0) copies); without ALL each
 * distinct row passes at most once.  Rows compare as IS NOT DISTINCT FROM
 * does: NULLs are equal.
 */
#include "exec/op.h"

typedef struct SetOpState {
    ExHashTab *ht;          /* UNION: rows seen; INTERSECT/EXCEPT: right rows */
    int64_t   *count;       /* INTERSECT/EXCEPT: per right row key, copies left */
    uint8_t   *emitted;     /* per key: passed once already (distinct forms) */
    ExHashTab *seen;        /* EXCEPT distinct: left rows passed */
    uint64_t   cap;
    bool       right_read;
    bool       on_right;    /* UNION: reading the right input */
    StrBuf     key;
} SetOpState;

static void encode(SetOpState *s, const ExBatch *b, uint32_t row)
{
    strbuf_reset(&s->key);
    ex_key_encode(b->b.cols, (int)b->b.ncols, row, &s->key);
}

static int read_right(ExOp *op)
{
    SetOpState *s = op->state;
    ExBatch *b;
    int rc;
    while ((rc = op_pull(op->right, &b)) > 0) {
        for (uint32_t k = 0; k < b->n; k++) {
            encode(s, b, b->sel ? b->sel[k] : k);
            bool inserted;
            uint32_t id = ex_ht_insert(s->ht, s->key.data, (uint32_t)s->key.len, &inserted);
            if (id >= s->cap) {
                uint64_t cap = s->cap ? s->cap * 2 : 1024;
                s->count = sl_realloc(s->count, sizeof(int64_t) * cap);
                s->emitted = sl_realloc(s->emitted, cap);
                memset(s->emitted + s->cap, 0, cap - s->cap);
                s->cap = cap;
            }
            if (inserted)
                s->count[id] = 0;
            s->count[id]++;
        }
    }
    return rc;
}

static int setop_next(ExOp *op, ExBatch **out)
{
    SetOpState *s = op->state;
    const Plan *p = op->plan;
    SetOpKind kind = p->u.setop.op;
    bool all = p->u.setop.all;
    if (kind != SETOP_UNION && !s->right_read) {
        if (read_right(op) < 0)
            return -1;
        s->right_read = true;
    }
    for (;;) {
        ExBatch *in;
        int rc;
        if (kind == SETOP_UNION) {
            rc = op_pull(s->on_right ? op->right : op->child, &in);
            if (rc == 0 && !s->on_right) {
                s->on_right = true;
                continue;
            }
            if (rc <= 0)
                return rc;
            if (all) {
                *out = in;
                return 1;
            }
        } else {
            rc = op_pull(op->child, &in);
            if (rc <= 0)
                return rc;
        }
        uint32_t *sel = ARENA_ARRAY(&op->arena, uint32_t, in->n);
        uint32_t m = 0;
        for (uint32_t k = 0; k < in->n; k++) {
            uint32_t i = in->sel ? in->sel[k] : k;
            encode(s, in, i);
            bool pass = false, inserted;
            if (kind == SETOP_UNION) {
                ex_ht_insert(s->ht, s->key.data, (uint32_t)s->key.len, &inserted);
                pass = inserted;
            } else {
                int64_t id = ex_ht_find(s->ht, s->key.data, (uint32_t)s->key.len);
                if (kind == SETOP_INTERSECT) {
                    if (id >= 0 && (all ? s->count[id] > 0 : !s->emitted[id])) {
                        pass = true;
                        s->count[id]--;
                        s->emitted[id] = 1;
                    }
                } else if (id >= 0 && all && s->count[id] > 0) {
                    s->count[id]--;
                } else if (id < 0 || all) {
                    pass = true;
                    if (!all) {
                        ex_ht_insert(s->seen, s->key.data, (uint32_t)s->key.len, &inserted);
                        pass = inserted;
                    }
                }
            }
            if (pass)
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

static void setop_close(ExOp *op)
{
    SetOpState *s = op->state;
    ex_ht_free(s->ht);
    ex_ht_free(s->seen);
    sl_free(s->count);
    sl_free(s->emitted);
    strbuf_free(&s->key);
}

ExOp *op_build_setop(ExCtx *cx, const Plan *p, ExOp *left, ExOp *right)
{
    SL_UNUSED(left);
    SL_UNUSED(right);
    ExOp *op = op_new(cx, p, sizeof(SetOpState));
    SetOpState *s = op->state;
    s->ht = ex_ht_new(cx->arena);
    s->seen = ex_ht_new(cx->arena);
    strbuf_init(&s->key);
    op->next = setop_next;
    op->close = setop_close;
    return op;
}
