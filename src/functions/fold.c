/*
 * fold.c -- one call over constants evaluated while a statement is
 * analyzed (constant folding), without the executor.
 *
 *   ex_fold_call(cx, e, &out)   the one-row value of e, a function call or
 *                               a cast whose arguments are all constants
 *
 * What the analyzer folds is always one kernel over constants: a cast of a
 * literal (an_coerce, an assignment's varchar(n) check) or a reg* input
 * function of one (regclass 'name').  So folding needs no evaluator: the
 * kernel runs here on the constants' values, as the evaluator
 * (src/exec/eval.c) runs it on a one-row batch -- a strict function or cast
 * of a NULL is NULL without its kernel, a FUNC_NONSTRICT kernel sees the
 * NULLs; a non-NULL constant is passed without a null map, as the
 * evaluator passes it.  Any other shape is refused (XX000): the caller
 * folds nothing else.
 */
#include "functions/kernels.h"

int ex_fold_call(EvalCtx *cx, const Expr *e, Vector *out)
{
    if (e->kind != EXPR_FUNC && e->kind != EXPR_CAST)
        return sl_error(cx->err, ERRCODE_INTERNAL_ERROR,
                        "only a function call or a cast can be folded, not kind %d", e->kind);
    Vector *args = ARENA_ARRAY(cx->arena, Vector, e->nargs ? e->nargs : 1);
    bool null = false;
    for (int a = 0; a < e->nargs; a++) {
        const Expr *arg = e->args[a];
        if (arg->kind != EXPR_CONST)
            return sl_error(cx->err, ERRCODE_INTERNAL_ERROR,
                            "argument %d of a folded call is not a constant", a + 1);
        args[a] = arg->value;
        if (vector_is_null(&args[a], 0))
            null = true;
        else
            args[a].nulls = NULL;
    }
    vector_init(out, cx->arena, e->type, 1, true);
    bool strict = e->kind == EXPR_CAST || !(e->fn->flags & FUNC_NONSTRICT);
    if (strict && null) {
        out->nulls[0] = 1;
        return 0;
    }
    ExprFn fn = e->kind == EXPR_CAST ? e->cast : e->fn->fn;
    if (fn(cx, e, args, out, NULL, 1) < 0)
        return -1;
    if (out->nulls == NULL)
        out->nulls = arena_zalloc(cx->arena, 1);
    return 0;
}
