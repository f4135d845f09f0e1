/*
 * eval.c -- vectorized expression evaluation.
 *
 *   ex_eval(cx, expr, input, n, &out)   evaluates expr over n rows
 *   ex_eval_sel(...)                     the same over a selection of them
 *
 * Every node is evaluated over a selection: the rows that need its value.
 * Strict functions run their kernel only on the rows where no argument is
 * NULL; AND and OR evaluate each further argument only on the rows the
 * earlier ones have not decided, and CASE and COALESCE each branch only on
 * the rows that reach it, so `x <> 0 AND 10 / x > 1` and
 * `CASE WHEN x = 0 THEN 0 ELSE 1 / x END` never divide by zero.  AND, OR and
 * NOT use SQL's three-valued logic.  All memory (result vectors, selection
 * arrays) comes from cx->arena, per batch, never per row.
 */
#include "exec/op.h"
#include "functions/kernels.h"

/* Rows [0, n) as a selection array, for the cases that need one. */
static uint32_t *all_rows(Arena *a, uint32_t n)
{
    uint32_t *s = ARENA_ARRAY(a, uint32_t, n ? n : 1);
    for (uint32_t i = 0; i < n; i++)
        s[i] = i;
    return s;
}

static void copy_rows(Vector *dst, const Vector *src, const uint32_t *sel, uint32_t nsel)
{
    size_t w = type_width(dst->type.id);
    for (uint32_t k = 0; k < nsel; k++) {
        uint32_t i = sel[k];
        if (vector_is_null(src, i)) {
            dst->nulls[i] = 1;
        } else {
            dst->nulls[i] = 0;
            memcpy((char *)dst->v.data + w * i, (const char *)src->v.data + w * i, w);
        }
    }
}

#define FILL(T)                                                                     \
    do {                                                                            \
        T v_ = *(const T *)one->v.data, *d_ = (T *)dst->v.data;                     \
        if (sel == NULL)                                                            \
            for (uint32_t k = 0; k < nsel; k++)                                     \
                d_[k] = v_;                                                         \
        else                                                                        \
            for (uint32_t k = 0; k < nsel; k++)                                     \
                d_[sel[k]] = v_;                                                    \
    } while (0)

/* Broadcasts row 0 of a one-row vector to the selected rows.  dst comes
 * from vector_init (its null map is zeroed); a non-NULL constant leaves it
 * without one (nulls NULL: none), so that the strict operators above see at
 * once that it has no NULLs. */
static void fill_rows(Vector *dst, const Vector *one, const uint32_t *sel, uint32_t nsel)
{
    if (vector_is_null(one, 0)) {
        for (uint32_t k = 0; k < nsel; k++)
            dst->nulls[sel ? sel[k] : k] = 1;
        return;
    }
    dst->nulls = NULL;
    switch (type_width(dst->type.id)) {
    case 1: FILL(uint8_t); break;
    case 2: FILL(uint16_t); break;
    case 4: FILL(uint32_t); break;
    case 8: FILL(uint64_t); break;
    case 16: {
        typedef struct { uint64_t a, b; } W16;
        FILL(W16);
        break;
    }
    default: {
        size_t w = type_width(dst->type.id);
        for (uint32_t k = 0; k < nsel; k++)
            memcpy((char *)dst->v.data + w * (sel ? sel[k] : k), one->v.data, w);
        break;
    }
    }
}

/* Does v have a NULL among the selected rows?  A word at a time when the
 * rows are contiguous. */
static bool any_null(const Vector *v, const uint32_t *sel, uint32_t nsel)
{
    if (v->nulls == NULL)
        return false;
    if (sel != NULL) {
        uint8_t acc = 0;
        for (uint32_t k = 0; k < nsel; k++)
            acc |= v->nulls[sel[k]];
        return acc != 0;
    }
    uint64_t acc = 0;
    uint32_t k = 0;
    for (; k + 8 <= nsel; k += 8) {
        uint64_t w;
        memcpy(&w, v->nulls + k, 8);
        acc |= w;
    }
    for (; k < nsel; k++)
        acc |= v->nulls[k];
    return acc != 0;
}

static int eval(EvalCtx *cx, const Expr *e, const Batch *in, uint32_t n, const uint32_t *sel,
                uint32_t nsel, Vector *out);

/* Evaluates the arguments, sets out's null map from them, and leaves in
 * *nn_sel / *nn the selected rows where no argument is NULL. */
static int eval_strict_args(EvalCtx *cx, const Expr *e, const Batch *in, uint32_t n,
                            const uint32_t *sel, uint32_t nsel, Vector *args, Vector *out,
                            const uint32_t **nn_sel, uint32_t *nn)
{
    bool any_nulls = false;
    for (int a = 0; a < e->nargs; a++) {
        if (eval(cx, e->args[a], in, n, sel, nsel, &args[a]) < 0)
            return -1;
        any_nulls = any_nulls || any_null(&args[a], sel, nsel);
    }
    if (!any_nulls) {
        *nn_sel = sel;
        *nn = nsel;
        return 0;
    }
    uint32_t *s = ARENA_ARRAY(cx->arena, uint32_t, nsel ? nsel : 1);
    uint32_t m = 0;
    for (uint32_t k = 0; k < nsel; k++) {
        uint32_t i = sel ? sel[k] : k;
        bool null = false;
        for (int a = 0; a < e->nargs; a++)
            null |= vector_is_null(&args[a], i);
        out->nulls[i] = null;
        if (!null)
            s[m++] = i;
    }
    *nn_sel = s;
    *nn = m;
    return 0;
}

static int eval_func(EvalCtx *cx, const Expr *e, const Batch *in, uint32_t n,
                     const uint32_t *sel, uint32_t nsel, Vector *out, ExprFn fn)
{
    Vector *args = ARENA_ARRAY(cx->arena, Vector, e->nargs ? e->nargs : 1);
    const uint32_t *s;
    uint32_t m;
    if (e->kind == EXPR_FUNC && (e->fn->flags & FUNC_NONSTRICT)) {
        /* the kernel reads the arguments' null maps and sets out's */
        for (int a = 0; a < e->nargs; a++)
            if (eval(cx, e->args[a], in, n, sel, nsel, &args[a]) < 0)
                return -1;
        return nsel == 0 ? 0 : fn(cx, e, args, out, sel, nsel);
    }
    if (eval_strict_args(cx, e, in, n, sel, nsel, args, out, &s, &m) < 0)
        return -1;
    if (m == 0)
        return 0;
    return fn(cx, e, args, out, s, m);
}

/* AND (want = false) and OR (want = true): a row is decided by the first
 * argument that is `want`; otherwise it is NULL if any argument was. */
static int eval_andor(EvalCtx *cx, const Expr *e, const Batch *in, uint32_t n,
                      const uint32_t *sel, uint32_t nsel, Vector *out, bool want)
{
    uint32_t *cur = sel ? (uint32_t *)arena_memdup(cx->arena, sel, sizeof(uint32_t) * (nsel ? nsel : 1))
                        : all_rows(cx->arena, nsel);
    uint32_t ncur = nsel;
    uint8_t *saw_null = arena_zalloc(cx->arena, n ? n : 1);
    for (int a = 0; a < e->nargs && ncur > 0; a++) {
        Vector v;
        if (eval(cx, e->args[a], in, n, cur, ncur, &v) < 0)
            return -1;
        /* branch-free partition: every row gets `want` now, the undecided
         * ones are rewritten at the end */
        uint32_t m = 0;
        const uint8_t *vb = v.v.b, *vn = v.nulls;
        for (uint32_t k = 0; k < ncur; k++) {
            uint32_t i = cur[k];
            uint8_t isnull = vn != NULL && vn[i] != 0;
            uint8_t decided = !isnull & ((vb[i] != 0) == want);
            saw_null[i] |= isnull;
            out->v.b[i] = want;
            out->nulls[i] = 0;
            cur[m] = i;
            m += !decided;
        }
        ncur = m;
    }
    for (uint32_t k = 0; k < ncur; k++) {
        uint32_t i = cur[k];
        out->v.b[i] = !want;
        out->nulls[i] = saw_null[i];
    }
    return 0;
}

static int eval_case(EvalCtx *cx, const Expr *e, const Batch *in, uint32_t n,
                     const uint32_t *sel, uint32_t nsel, Vector *out)
{
    uint32_t *rest = sel ? (uint32_t *)arena_memdup(cx->arena, sel, sizeof(uint32_t) * (nsel ? nsel : 1))
                         : all_rows(cx->arena, nsel);
    uint32_t nrest = nsel;
    uint32_t *hit = ARENA_ARRAY(cx->arena, uint32_t, nsel ? nsel : 1);
    int npairs = (e->nargs - (e->has_else ? 1 : 0)) / 2;
    for (int w = 0; w < npairs && nrest > 0; w++) {
        Vector cond, res;
        if (eval(cx, e->args[2 * w], in, n, rest, nrest, &cond) < 0)
            return -1;
        uint32_t nhit = 0, m = 0;
        for (uint32_t k = 0; k < nrest; k++) {
            uint32_t i = rest[k];
            if (!vector_is_null(&cond, i) && cond.v.b[i])
                hit[nhit++] = i;
            else
                rest[m++] = i;
        }
        nrest = m;
        if (nhit > 0) {
            if (eval(cx, e->args[2 * w + 1], in, n, hit, nhit, &res) < 0)
                return -1;
            copy_rows(out, &res, hit, nhit);
        }
    }
    if (nrest > 0) {
        if (e->has_else) {
            Vector res;
            if (eval(cx, e->args[e->nargs - 1], in, n, rest, nrest, &res) < 0)
                return -1;
            copy_rows(out, &res, rest, nrest);
        } else {
            for (uint32_t k = 0; k < nrest; k++)
                out->nulls[rest[k]] = 1;
        }
    }
    return 0;
}

static int eval_coalesce(EvalCtx *cx, const Expr *e, const Batch *in, uint32_t n,
                         const uint32_t *sel, uint32_t nsel, Vector *out)
{
    uint32_t *rest = sel ? (uint32_t *)arena_memdup(cx->arena, sel, sizeof(uint32_t) * (nsel ? nsel : 1))
                         : all_rows(cx->arena, nsel);
    uint32_t nrest = nsel;
    size_t w = type_width(out->type.id);
    for (int a = 0; a < e->nargs && nrest > 0; a++) {
        Vector v;
        if (eval(cx, e->args[a], in, n, rest, nrest, &v) < 0)
            return -1;
        uint32_t m = 0;
        for (uint32_t k = 0; k < nrest; k++) {
            uint32_t i = rest[k];
            if (vector_is_null(&v, i)) {
                rest[m++] = i;
            } else {
                out->nulls[i] = 0;
                memcpy((char *)out->v.data + w * i, (const char *)v.v.data + w * i, w);
            }
        }
        nrest = m;
    }
    for (uint32_t k = 0; k < nrest; k++)
        out->nulls[rest[k]] = 1;
    return 0;
}

/* Compares a and b with e->fn over the rows of sel where neither is NULL;
 * the booleans land in res. */
static int compare_rows(EvalCtx *cx, const Expr *e, const Vector *a, const Vector *b,
                        const uint32_t *sel, uint32_t nsel, uint32_t n, Vector *res,
                        uint32_t *both, uint32_t *nboth)
{
    uint32_t m = 0;
    for (uint32_t k = 0; k < nsel; k++) {
        uint32_t i = sel ? sel[k] : k;
        if (!vector_is_null(a, i) && !vector_is_null(b, i))
            both[m++] = i;
    }
    *nboth = m;
    vector_init(res, cx->arena, sl_type(TYPE_BOOL), n, true);
    if (m == 0)
        return 0;
    Vector args[2] = {*a, *b};
    return e->fn->fn(cx, e, args, res, both, m);
}

static int eval_distinct(EvalCtx *cx, const Expr *e, const Batch *in, uint32_t n,
                         const uint32_t *sel, uint32_t nsel, Vector *out)
{
    Vector a, b, eq;
    if (eval(cx, e->args[0], in, n, sel, nsel, &a) < 0 ||
        eval(cx, e->args[1], in, n, sel, nsel, &b) < 0)
        return -1;
    uint32_t *both = ARENA_ARRAY(cx->arena, uint32_t, nsel ? nsel : 1), nboth;
    if (compare_rows(cx, e, &a, &b, sel, nsel, n, &eq, both, &nboth) < 0)
        return -1;
    for (uint32_t k = 0; k < nsel; k++) {
        uint32_t i = sel ? sel[k] : k;
        bool na = vector_is_null(&a, i), nb = vector_is_null(&b, i);
        bool distinct = (na || nb) ? na != nb : !eq.v.b[i];
        out->v.b[i] = distinct != e->negate;
        out->nulls[i] = 0;
    }
    return 0;
}

/* NULLIF(a, b): args[0] is a, args[1] and args[2] are a and b as the "="
 * operator reads them. */
static int eval_nullif(EvalCtx *cx, const Expr *e, const Batch *in, uint32_t n,
                       const uint32_t *sel, uint32_t nsel, Vector *out)
{
    Vector v, a, b, eq;
    if (eval(cx, e->args[0], in, n, sel, nsel, &v) < 0 ||
        eval(cx, e->args[1], in, n, sel, nsel, &a) < 0 ||
        eval(cx, e->args[2], in, n, sel, nsel, &b) < 0)
        return -1;
    uint32_t *both = ARENA_ARRAY(cx->arena, uint32_t, nsel ? nsel : 1), nboth;
    if (compare_rows(cx, e, &a, &b, sel, nsel, n, &eq, both, &nboth) < 0)
        return -1;
    uint32_t *s = sel ? (uint32_t *)sel : all_rows(cx->arena, nsel);
    copy_rows(out, &v, s, nsel);
    for (uint32_t k = 0; k < nboth; k++)
        if (eq.v.b[both[k]])
            out->nulls[both[k]] = 1;
    return 0;
}

/* GREATEST / LEAST: NULLs are skipped; e->fn is ">" or "<". */
static int eval_minmax(EvalCtx *cx, const Expr *e, const Batch *in, uint32_t n,
                       const uint32_t *sel, uint32_t nsel, Vector *out)
{
    uint32_t *s = sel ? (uint32_t *)sel : all_rows(cx->arena, nsel);
    uint32_t *both = ARENA_ARRAY(cx->arena, uint32_t, nsel ? nsel : 1), nboth;
    uint32_t *take = ARENA_ARRAY(cx->arena, uint32_t, nsel ? nsel : 1);
    for (int a = 0; a < e->nargs; a++) {
        Vector v, better;
        if (eval(cx, e->args[a], in, n, s, nsel, &v) < 0)
            return -1;
        if (a == 0) {
            copy_rows(out, &v, s, nsel);
            continue;
        }
        if (compare_rows(cx, e, &v, out, s, nsel, n, &better, both, &nboth) < 0)
            return -1;
        uint32_t ntake = 0;
        for (uint32_t k = 0; k < nsel; k++) {
            uint32_t i = s[k];
            if (vector_is_null(&v, i))
                continue;
            if (vector_is_null(out, i) || better.v.b[i])
                take[ntake++] = i;
        }
        copy_rows(out, &v, take, ntake);
    }
    return 0;
}

static int eval(EvalCtx *cx, const Expr *e, const Batch *in, uint32_t n, const uint32_t *sel,
                uint32_t nsel, Vector *out)
{
    if (e->kind == EXPR_COLUMN) {
        /* the input column itself; its null map may be NULL (no NULLs),
         * which only the entry points below make explicit */
        *out = in->cols[e->index];
        return 0;
    }
    vector_init(out, cx->arena, e->type, n, true);
    switch (e->kind) {
    case EXPR_CONST:
        fill_rows(out, &e->value, sel, nsel);
        return 0;
    case EXPR_PARAM:
        fill_rows(out, &cx->params[e->index], sel, nsel);
        return 0;
    case EXPR_OUTER:
        if (e->index >= cx->nouter)
            return sl_error(cx->err, ERRCODE_INTERNAL_ERROR, "outer value %d is missing",
                            e->index + 1);
        fill_rows(out, &cx->outer[e->index], sel, nsel);
        return 0;
    case EXPR_FUNC:
        return eval_func(cx, e, in, n, sel, nsel, out, e->fn->fn);
    case EXPR_CAST:
        return eval_func(cx, e, in, n, sel, nsel, out, e->cast);
    case EXPR_AND:
        return eval_andor(cx, e, in, n, sel, nsel, out, false);
    case EXPR_OR:
        return eval_andor(cx, e, in, n, sel, nsel, out, true);
    case EXPR_NOT: {
        Vector v;
        if (eval(cx, e->args[0], in, n, sel, nsel, &v) < 0)
            return -1;
        FOR_SEL(sel, nsel, {
            out->nulls[i] = vector_is_null(&v, i);
            out->v.b[i] = !v.v.b[i];
        });
        return 0;
    }
    case EXPR_NULLTEST: {
        Vector v;
        if (eval(cx, e->args[0], in, n, sel, nsel, &v) < 0)
            return -1;
        FOR_SEL(sel, nsel, { out->v.b[i] = vector_is_null(&v, i) != e->negate; });
        return 0;
    }
    case EXPR_BOOLTEST: {
        Vector v;
        if (eval(cx, e->args[0], in, n, sel, nsel, &v) < 0)
            return -1;
        FOR_SEL(sel, nsel, {
            bool null = vector_is_null(&v, i), t = !null && v.v.b[i], f = !null && !v.v.b[i];
            bool r;
            switch ((BoolTestType)e->subkind) {
            case IS_TRUE:        r = t; break;
            case IS_NOT_TRUE:    r = !t; break;
            case IS_FALSE:       r = f; break;
            case IS_NOT_FALSE:   r = !f; break;
            case IS_UNKNOWN:     r = null; break;
            default:             r = !null; break;
            }
            out->v.b[i] = r;
        });
        return 0;
    }
    case EXPR_CASE:
        return eval_case(cx, e, in, n, sel, nsel, out);
    case EXPR_COALESCE:
        return eval_coalesce(cx, e, in, n, sel, nsel, out);
    case EXPR_MINMAX:
        return eval_minmax(cx, e, in, n, sel, nsel, out);
    case EXPR_NULLIF:
        return eval_nullif(cx, e, in, n, sel, nsel, out);
    case EXPR_DISTINCT:
        return eval_distinct(cx, e, in, n, sel, nsel, out);
    case EXPR_SUBPLAN:
        return ex_eval_subplan(cx, e, in, n, sel, nsel, out);
    case EXPR_COLUMN:
        break;
    }
    return sl_error(cx->err, ERRCODE_INTERNAL_ERROR, "unknown expression kind %d", e->kind);
}

/* Inside, a vector without NULLs may have no null map; callers of the
 * entry points always get one. */
static int with_null_map(EvalCtx *cx, uint32_t n, Vector *out)
{
    if (out->nulls == NULL)
        out->nulls = arena_zalloc(cx->arena, n ? n : 1);
    return 0;
}

int ex_eval(EvalCtx *cx, const Expr *e, const Batch *input, uint32_t n, Vector *out)
{
    if (eval(cx, e, input, n, NULL, n, out) < 0)
        return -1;
    return with_null_map(cx, n, out);
}

int ex_eval_sel(EvalCtx *cx, const Expr *e, const Batch *input, uint32_t n,
                const uint32_t *sel, uint32_t nsel, Vector *out)
{
    if (eval(cx, e, input, n, sel, nsel, out) < 0)
        return -1;
    return with_null_map(cx, n, out);
}
