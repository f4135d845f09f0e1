/*
 * sublink.c -- the value of an uncorrelated subquery inside an expression.
 *
 *   ex_eval_subplan(cx, e, input, n, sel, nsel, out)    EXPR_SUBPLAN
 *
 * The runtime runs each InitPlan (plan.h) before the query and hands the
 * results to the evaluator in cx->subplans: a one-row vector for a scalar
 * subquery and for EXISTS, all the rows of the subquery's column for IN.
 * x IN (subquery) follows SQL's three-valued logic: true when some value
 * equals x, otherwise NULL when x is NULL (and the subquery has rows) or
 * some value is NULL, otherwise false; NOT IN is its negation.  The values
 * are compared with the "=" kernel the analyzer resolved (e->fn), one
 * subquery value at a time over the whole selection.
 */
#include "exec/kernels.h"

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

static int eval_in(EvalCtx *cx, const Expr *e, const Batch *in, uint32_t n, const uint32_t *sel,
                   uint32_t nsel, Vector *out, const Vector *set)
{
    Vector x;
    if (ex_eval_sel(cx, e->args[0], in, n, sel, nsel, &x) < 0)
        return -1;
    /* state per row: 0 not found yet, 1 found, 2 not found but saw a NULL */
    uint8_t *state = arena_zalloc(cx->arena, n ? n : 1);
    uint32_t *live = ARENA_ARRAY(cx->arena, uint32_t, nsel ? nsel : 1);
    uint32_t nlive = 0;
    FOR_SEL(sel, nsel, {
        if (vector_is_null(&x, i))
            state[i] = set->len > 0 ? 2 : 0;
        else
            live[nlive++] = i;
    });
    Vector probe, eq;
    vector_init(&probe, cx->arena, x.type, n, true);
    vector_init(&eq, cx->arena, sl_type(TYPE_BOOL), n, true);
    uint32_t *rest = ARENA_ARRAY(cx->arena, uint32_t, nsel ? nsel : 1);
    for (uint32_t j = 0; j < set->len && nlive > 0; j++) {
        if (vector_is_null(set, j)) {
            for (uint32_t k = 0; k < nlive; k++)
                state[live[k]] = 2;
            continue;
        }
        broadcast(&probe, set, j, live, nlive);
        Vector args[2] = {x, probe};
        if (e->fn->fn(cx, e, args, &eq, live, nlive) < 0)
            return -1;
        uint32_t m = 0;
        for (uint32_t k = 0; k < nlive; k++) {
            uint32_t i = live[k];
            if (eq.v.b[i])
                state[i] = 1;
            else
                rest[m++] = i;
        }
        memcpy(live, rest, sizeof(uint32_t) * m);
        nlive = m;
    }
    FOR_SEL(sel, nsel, {
        out->nulls[i] = state[i] == 2;
        out->v.b[i] = (state[i] == 1) != e->negate;
    });
    return 0;
}

int ex_eval_subplan(EvalCtx *cx, const Expr *e, const Batch *in, uint32_t n,
                    const uint32_t *sel, uint32_t nsel, Vector *out)
{
    if (e->index < 0 || e->index >= cx->nsubplans)
        return sl_error(cx->err, ERRCODE_INTERNAL_ERROR, "subquery %d has no value",
                        e->index + 1);
    const Vector *v = &cx->subplans[e->index];
    if (e->subkind == SUBLINK_IN)
        return eval_in(cx, e, in, n, sel, nsel, out, v);
    broadcast(out, v, 0, sel, nsel);
    return 0;
}
