/*
 * sublink.c -- the value of an uncorrelated subquery inside an expression.
 *
 *   ex_eval_subplan(cx, e, input, n, sel, nsel, out)    EXPR_SUBPLAN
 *   ex_array_elems(a, fn, arg)           an array's text form, element by element
 *
 * The runtime runs each InitPlan (plan.h) before the query and hands the
 * results to the evaluator in cx->subplans: a one-row vector for a scalar
 * subquery and for EXISTS, all the rows of the subquery's column for IN.
 * x IN (subquery), x op ANY (subquery) and x op ALL (subquery) follow
 * SQL's three-valued logic: ANY is true when some comparison is true,
 * otherwise NULL when some is NULL (x NULL and the subquery has rows, or a
 * NULL value), otherwise false; ALL is false when some comparison is
 * false, otherwise NULL when some is NULL, otherwise true; NOT IN is IN's
 * negation.  The values are compared with the operator's kernel the
 * analyzer resolved (e->fn), one subquery value at a time over the whole
 * selection.
 *
 * A correlated subquery (one that reads columns of the enclosing query's
 * row) runs its plan once per row instead, with the row's values as
 * EXPR_OUTER inputs: simple, and what catalog queries such as psql's need.
 * Its results are kept by the outer values they ran with (a memo, in the
 * context its operators were built with), so rows with the same outer
 * values run it once, unless it calls a volatile function; a decorrelating
 * rewrite (a join) is the way to make it faster still.  ARRAY
 * (subquery) gives its values as PostgreSQL's array text form, '{a,b}':
 * sluice has no array types yet, so an array is text.
 */
#include "exec/op.h"
#include "functions/kernels.h"
#include "sluice/exec.h"

#include <strings.h>

/* Copies row 0 of one (width w) into the selected rows of dst. */
static void broadcast(Vector *dst, const Vector *one, uint32_t row, const uint32_t *sel,
                      uint32_t nsel)
{
    size_t w = type_width(dst->type.id);
    bool null = vector_is_null(one, row);
    const char *src = (const char *)one->v.data + w * row;
    FOR_SEL(sel, nsel, {
        dst->nulls[i] = null;
        if (!null)
            memcpy((char *)dst->v.data + w * i, src, w);
    });
}

/* x op ANY (set) (e->subkind SUBLINK_IN) or x op ALL (set) (SUBLINK_ALL)
 * over the selected rows, x already evaluated.  ANY is true when some
 * comparison is true, else NULL when some is NULL (a NULL x or value),
 * else false; ALL is false when some comparison is false, else NULL when
 * some is NULL, else true (an empty set: false and true).  negate: NOT. */
static int eval_quant(EvalCtx *cx, const Expr *e, const Vector *x, uint32_t n,
                      const uint32_t *sel, uint32_t nsel, Vector *out, const Vector *set)
{
    bool all = e->subkind == SUBLINK_ALL;
    /* state per row: 0 not decided yet, 1 decided (ANY: a true, ALL: a
     * false), 2 not decided but saw a NULL */
    uint8_t *state = arena_zalloc(cx->arena, n ? n : 1);
    uint32_t *live = ARENA_ARRAY(cx->arena, uint32_t, nsel ? nsel : 1);
    uint32_t nlive = 0;
    FOR_SEL(sel, nsel, {
        if (vector_is_null(x, i))
            state[i] = set->len > 0 ? 2 : 0;
        else
            live[nlive++] = i;
    });
    Vector probe, cmp;
    vector_init(&probe, cx->arena, set->type, n, true);
    vector_init(&cmp, cx->arena, sl_type(TYPE_BOOL), n, true);
    uint32_t *rest = ARENA_ARRAY(cx->arena, uint32_t, nsel ? nsel : 1);
    for (uint32_t j = 0; j < set->len && nlive > 0; j++) {
        if (vector_is_null(set, j)) {
            for (uint32_t k = 0; k < nlive; k++)
                state[live[k]] = 2;
            continue;
        }
        broadcast(&probe, set, j, live, nlive);
        Vector args[2] = {*x, probe};
        if (e->fn->fn(cx, e, args, &cmp, live, nlive) < 0)
            return -1;
        uint32_t m = 0;
        for (uint32_t k = 0; k < nlive; k++) {
            uint32_t i = live[k];
            if (vector_is_null(&cmp, i))
                state[i] = 2, rest[m++] = i;
            else if (cmp.v.b[i] != all)
                state[i] = 1;
            else
                rest[m++] = i;
        }
        memcpy(live, rest, sizeof(uint32_t) * m);
        nlive = m;
    }
    FOR_SEL(sel, nsel, {
        out->nulls[i] = state[i] == 2;
        out->v.b[i] = ((state[i] == 1) != all) != e->negate;
    });
    return 0;
}

static int eval_in(EvalCtx *cx, const Expr *e, const Batch *in, uint32_t n, const uint32_t *sel,
                   uint32_t nsel, Vector *out, const Vector *set)
{
    Vector x;
    if (ex_eval_sel(cx, e->args[0], in, n, sel, nsel, &x) < 0)
        return -1;
    return eval_quant(cx, e, &x, n, sel, nsel, out, set);
}

bool ex_array_elems(const SlStr *a, bool (*fn)(const SlStr *el, void *arg), void *arg)
{
    if (a->len < 2 || a->ptr[0] != '{' || a->ptr[a->len - 1] != '}')
        return false;
    uint32_t k = 1, end = a->len - 1;
    StrBuf el;
    strbuf_init(&el);
    bool go = true;
    while (k < end && go) {
        el.len = 0;
        bool quoted = a->ptr[k] == '"';
        if (quoted) {
            k++;
            while (k < end && a->ptr[k] != '"') {
                if (a->ptr[k] == '\\' && k + 1 < end)
                    k++;
                strbuf_putc(&el, a->ptr[k++]);
            }
            k++;
        } else {
            while (k < end && a->ptr[k] != ',')
                strbuf_putc(&el, a->ptr[k++]);
        }
        bool is_null = !quoted && el.len == 4 && strncasecmp(el.data, "NULL", 4) == 0;
        SlStr s = {el.data ? el.data : "", (uint32_t)el.len};
        go = fn(is_null ? NULL : &s, arg);
        if (k < end && a->ptr[k] == ',')
            k++;
    }
    strbuf_free(&el);
    return true;
}

/* The results of a correlated subquery's runs, by the outer values they
 * ran with (a memo, as PostgreSQL's Memoize): a run per distinct row of
 * outer values, at most MEMO_MAX of them, and none for a subquery that
 * calls a volatile function (each row must run it again). */
#define MEMO_MAX 65536

typedef struct SubMemo {
    const Expr     *e;
    ExHashTab      *ht;         /* outer values' key -> result id */
    Vector         *vals;       /* per id: the value (EXPR, EXISTS, ARRAY) or
                                   the subquery's values (ANY, ALL) */
    uint32_t        cap;
    bool            off;        /* volatile: no memo */
    struct SubMemo *next;
} SubMemo;

struct ExSubCache {
    Arena   *arena;
    SubMemo *list;
};

/* e's memo in the context its operators were built with (made there the
 * first time: the statement's, or a LATERAL or subquery run's). */
static SubMemo *memo_of(const ExCtx *pcx, const Expr *e)
{
    ExCtx *owner = (ExCtx *)pcx;
    if (owner->subs == NULL) {
        owner->subs = ARENA_NEW(owner->arena, ExSubCache);
        owner->subs->arena = owner->arena;
    }
    ExSubCache *c = owner->subs;
    for (SubMemo *m = c->list; m != NULL; m = m->next)
        if (m->e == e)
            return m;
    SubMemo *m = ARENA_NEW(c->arena, SubMemo);
    m->e = e;
    m->off = plan_any_expr(e->subplan, plan_expr_volatile, NULL);
    m->ht = ex_ht_new_small(c->arena);
    m->next = c->list;
    c->list = m;
    return m;
}

static void memo_put(SubMemo *m, Arena *a, uint32_t id, const Vector *v, uint32_t row,
                     uint32_t len)
{
    if (id >= m->cap) {
        uint32_t cap = m->cap ? m->cap * 2 : 64;
        Vector *more = ARENA_ARRAY(a, Vector, cap);
        if (m->cap)
            memcpy(more, m->vals, sizeof(Vector) * m->cap);
        m->vals = more;
        m->cap = cap;
    }
    Vector *d = &m->vals[id];
    vector_init(d, a, v->type, len ? len : 1, true);
    for (uint32_t k = 0; k < len; k++)
        ex_copy_value(d, k, v, row + k, a);
    d->len = len;
}

/* The memo's key of row i's outer values: each one's text form, which
 * tells apart values that "=" takes for equal but a subquery may not
 * (1.0 and 1.00, -0 and 0: ex_key_encode makes them one key). */
static void memo_key(const Vector *vals, int n, uint32_t i, StrBuf *key, StrBuf *val)
{
    strbuf_reset(key);
    for (int a = 0; a < n; a++) {
        if (vector_is_null(&vals[a], i)) {
            strbuf_putc(key, 'N');
            continue;
        }
        strbuf_reset(val);
        value_format_text(&vals[a], i, val);
        uint32_t len = (uint32_t)val->len;
        strbuf_putc(key, 'V');
        strbuf_append(key, (const char *)&len, sizeof(len));
        strbuf_append(key, val->data ? val->data : "", val->len);
    }
}

/* One run of a correlated subquery over the outer values in child: its
 * value into (out, i) (EXPR, EXISTS, ARRAY), or its values into *all
 * (ANY, ALL: *nall of them).  The operators' memory comes from the batch's
 * arena; a scalar subquery with more than one row is 21000, as in
 * PostgreSQL. */
static int run_correlated(EvalCtx *cx, const Expr *e, ExCtx *child, Vector *out, uint32_t i,
                          Vector *all, uint32_t *nall)
{
    const Plan *p = e->subplan;
    bool quant = e->subkind == SUBLINK_IN || e->subkind == SUBLINK_ALL;
    ExOp *op = ex_op_build(child, p);
    if (op == NULL)
        return -1;
    /* EXPR: the one value; EXISTS: any row; ARRAY, ANY, ALL: every value */
    uint32_t seen = 0, cap = 16;
    if (e->subkind == SUBLINK_ARRAY || quant)
        vector_init(all, cx->arena, p->cols[0].type, cap, true);
    out->nulls[i] = e->subkind == SUBLINK_EXPR;
    if (e->subkind == SUBLINK_EXISTS)
        out->v.b[i] = false;
    ExBatch *b;
    int r;
    while ((r = ex_op_next(op, &b)) > 0) {
        if (e->subkind == SUBLINK_EXISTS) {
            if (b->n > 0) {
                out->v.b[i] = true;
                break;
            }
            continue;
        }
        for (uint32_t k = 0; k < b->n; k++) {
            uint32_t src = b->sel ? b->sel[k] : k;
            if (e->subkind == SUBLINK_EXPR) {
                if (seen++ > 0) {
                    r = sl_error(cx->err, ERRCODE_CARDINALITY_VIOLATION,
                                 "more than one row returned by a subquery used as an "
                                 "expression");
                    break;
                }
                ex_copy_value(out, i, &b->b.cols[0], src, cx->arena);
            } else {
                if (seen == cap) {
                    Vector more;
                    vector_init(&more, cx->arena, all->type, cap * 2, true);
                    memcpy(more.v.data, all->v.data, type_width(all->type.id) * cap);
                    memcpy(more.nulls, all->nulls, cap);
                    *all = more;
                    cap *= 2;
                }
                ex_copy_value(all, seen++, &b->b.cols[0], src, cx->arena);
            }
        }
        if (r < 0)
            break;
    }
    ex_op_close(op);
    if (r < 0)
        return -1;
    if (e->subkind == SUBLINK_ARRAY) {
        out->nulls[i] = 0;
        array_from_vector(cx->arena, all, seen, &out->v.str[i]);
    }
    all->len = seen;
    *nall = seen;
    return 0;
}

/* A correlated subquery: its plan runs once per selected row, with the
 * row's outer values (e->args, evaluated over the batch; after x for ANY /
 * ALL) in ExCtx.outer, or not at all when a row of the same outer values
 * ran it before (the memo). */
static int eval_correlated(EvalCtx *cx, const Expr *e, const Batch *in, uint32_t n,
                           const uint32_t *sel, uint32_t nsel, Vector *out)
{
    const ExCtx *pcx = cx->exec;
    if (pcx == NULL)
        return sl_error(cx->err, ERRCODE_FEATURE_NOT_SUPPORTED,
                        "a correlated subquery cannot run here");
    Vector *args = ARENA_ARRAY(cx->arena, Vector, e->nargs ? e->nargs : 1);
    for (int a = 0; a < e->nargs; a++)
        if (ex_eval_sel(cx, e->args[a], in, n, sel, nsel, &args[a]) < 0)
            return -1;
    Vector *row = ARENA_ARRAY(cx->arena, Vector, e->nargs ? e->nargs : 1);
    const Plan *p = e->subplan;
    bool quant = e->subkind == SUBLINK_IN || e->subkind == SUBLINK_ALL;
    int off = quant ? 1 : 0;
    SubMemo *memo = memo_of(pcx, e);
    Arena *ma = pcx->subs->arena;
    StrBuf key, val;
    strbuf_init(&key);
    strbuf_init(&val);
    int rc = 0;
    FOR_SEL(sel, nsel, {
        if (rc < 0)
            break;
        Vector all;
        uint32_t nall = 0;
        const Vector *set = &all;
        bool hit = false;
        int64_t id = -1;
        if (!memo->off) {
            memo_key(args + off, e->nargs - off, i, &key, &val);
            id = ex_ht_find(memo->ht, key.data, (uint32_t)key.len);
            hit = id >= 0;
        }
        if (hit) {
            const Vector *v = &memo->vals[id];
            if (quant)
                set = v;
            else
                ex_copy_value(out, i, v, 0, NULL);
        } else {
            for (int a = off; a < e->nargs; a++) {
                vector_init(&row[a], cx->arena, args[a].type, 1, true);
                ex_copy_value(&row[a], 0, &args[a], i, NULL);
            }
            ExCtx child = *pcx;
            child.arena = cx->arena;
            child.outer = row + off;
            child.nouter = e->nargs - off;
            ex_cte_level(&child, p);
            if (run_correlated(cx, e, &child, out, i, &all, &nall) < 0) {
                rc = -1;
                break;
            }
            if (!memo->off && ex_ht_count(memo->ht) < MEMO_MAX) {
                bool inserted;
                uint32_t nid = ex_ht_insert(memo->ht, key.data, (uint32_t)key.len, &inserted);
                if (quant)
                    memo_put(memo, ma, nid, &all, 0, nall);
                else
                    memo_put(memo, ma, nid, out, i, 1);
            }
        }
        if (quant) {
            uint32_t one = i;
            if (eval_quant(cx, e, &args[0], n, &one, 1, out, set) < 0) {
                rc = -1;
                break;
            }
        }
    });
    strbuf_free(&key);
    strbuf_free(&val);
    return rc;
}

int ex_eval_subplan(EvalCtx *cx, const Expr *e, const Batch *in, uint32_t n,
                    const uint32_t *sel, uint32_t nsel, Vector *out)
{
    if (e->subplan != NULL)
        return eval_correlated(cx, e, in, n, sel, nsel, out);
    if (e->index < 0 || e->index >= cx->nsubplans)
        return sl_error(cx->err, ERRCODE_INTERNAL_ERROR, "subquery %d has no value",
                        e->index + 1);
    const Vector *v = &cx->subplans[e->index];
    if (e->subkind == SUBLINK_IN || e->subkind == SUBLINK_ALL)
        return eval_in(cx, e, in, n, sel, nsel, out, v);
    broadcast(out, v, 0, sel, nsel);
    return 0;
}
