/*
 * analyze_array.c -- arrays in expressions: PostgreSQL's polymorphic
 * typing of the array functions and operators, ARRAY[...], subscripts and
 * slices, x op ANY / ALL (array), and casts between array types.
 *
 *   an_array_coerce     casts to, from and between array types (an_coerce)
 *   an_array_routes     whether a call goes to the array functions
 *   an_array_call       one call of an array function or operator
 *   an_array_no_such    42883 naming array argument types (integer[])
 *   an_array_common_type  select_common_type over arrays
 *   an_array_ctor       ARRAY[x, ...]
 *   an_array_subscript  a[i] and a[i:j]
 *   an_array_any        x op ANY (a), x op ALL (a)
 *
 * The functions are src/functions/arrayfuncs.c's table (ex_array_funcs):
 * TYPE_ARRAY in a signature is anyarray (anycompatiblearray where
 * PostgreSQL 15 declares it so), TYPE__COUNT anyelement; the element type
 * comes from the arguments, their common type where PostgreSQL takes
 * anycompatible (array_append, array_cat, ||, array_position, ...), and an
 * argument that is only an untyped literal is 42804, as PostgreSQL's
 * "could not determine polymorphic type".
 */
#include "analyze_int.h"

#include <stdio.h>
#include <string.h>

static Expr *unknown_to_array(Analyze *an, Expr *e, SlType t)
{
    Expr *c = an_const(an, t, e->location, e->value.nulls[0]);
    if (!e->value.nulls[0]) {
        const SlStr *s = &e->value.v.str[0];
        if (value_parse_text(an->a, t, s->ptr, s->len, &c->value, 0, e->location, an->err) < 0)
            return NULL;
    }
    return c;
}

static int cannot_cast(Analyze *an, SlType from, SlType to, int loc)
{
    char b1[96], b2[96];
    return sl_error_at(an->err, ERRCODE_CANNOT_COERCE, loc, "cannot cast type %s to %s",
                       type_format(from, b1, sizeof(b1)), type_format(to, b2, sizeof(b2)));
}

Expr *an_array_coerce(Analyze *an, Expr *e, SlType t, CoerceCtx ctx, int loc)
{
    if (type_same(e->type, t) && (t.typmod < 0 || e->type.typmod == t.typmod))
        return e;
    if (t.id == TYPE_ARRAY && t.elem == TYPE_UNKNOWN && e->type.id == TYPE_ARRAY)
        return e;       /* anyarray: an argument an_array_call has typed */
    if (e->kind == EXPR_CONST && e->type.id == TYPE_UNKNOWN) {
        /* read without the element's typmod, which a cast then applies
         * (varchar(2)[] cuts, as PostgreSQL's length coercion) */
        SlType plain = t;
        plain.typmod = -1;
        if ((e = unknown_to_array(an, e, plain)) == NULL || t.typmod < 0)
            return e;
    }
    if (e->kind == EXPR_PARAM && e->type.id == TYPE_UNKNOWN) {
        an->params[e->index] = t;
        e->type = t;
        return e;
    }
    ExprFn fn = NULL;
    Expr *elem_cast = NULL;
    if (e->type.id == TYPE_ARRAY && t.id == TYPE_ARRAY) {
        /* element by element, with the element type's cast */
        SlType from = type_elem(e->type), to = type_elem(t);
        ExprFn ef = ex_cast_fn(from.id, to.id, ctx == COERCE_IMPLICIT && from.id != to.id);
        if (ef == NULL) {
            cannot_cast(an, from, to, loc);     /* PostgreSQL names the elements */
            return NULL;
        }
        elem_cast = an_mk(an, EXPR_CAST, to, loc, 0, NULL);
        elem_cast->cast = ef;
        fn = ex_array_cast;
    } else if (t.id == TYPE_ARRAY && ctx == COERCE_EXPLICIT &&
               (e->type.id == TYPE_TEXT || e->type.id == TYPE_VARCHAR)) {
        fn = ex_cast_fn(TYPE_TEXT, TYPE_ARRAY, false);      /* array_in */
    } else if (e->type.id == TYPE_ARRAY && ctx == COERCE_EXPLICIT &&
               (t.id == TYPE_TEXT || t.id == TYPE_VARCHAR)) {
        fn = ex_cast_fn(TYPE_ARRAY, t.id, false);           /* array_out */
    }
    if (fn == NULL) {
        cannot_cast(an, e->type, t, loc);
        return NULL;
    }
    Expr *args2[2] = {e, elem_cast};
    Expr *c = an_mk(an, EXPR_CAST, t, loc, elem_cast ? 2 : 1, args2);
    c->nargs = 1;
    c->cast = fn;
    if (e->kind == EXPR_CONST)
        return an_fold(an, c);
    return c;
}

/* ------------------------------------------------------------- calls */

static bool is_array_name(const char *name, bool is_op, int n)
{
    size_t nf;
    const FuncDesc *t = ex_array_funcs(&nf);
    for (size_t i = 0; i < nf; i++)
        if (t[i].is_op == is_op && t[i].nargs == n && strcmp(t[i].name, name) == 0)
            return true;
    return false;
}

bool an_array_routes(const char *name, bool is_op, Expr **args, int n)
{
    if (!is_array_name(name, is_op, n))
        return false;
    if (!is_op) {
        /* text where the array goes: the catalog's int2vector and oidvector
         * columns, kept as text, which pgfuncs.c's text forms read */
        return n == 0 || (args[0]->type.id != TYPE_TEXT && args[0]->type.id != TYPE_VARCHAR) ||
               strcmp(name, "string_to_array") == 0 || strcmp(name, "parse_ident") == 0;
    }
    for (int k = 0; k < n; k++)
        if (args[k]->type.id == TYPE_ARRAY)
            return true;
    return false;
}

/* anycompatible: whether PostgreSQL 15 declares the function so (a
 * common element type), else anyelement/anyarray (one exact type). */
static bool compatible(const FuncDesc *fd)
{
    static const char *const names[] = {"array_append", "array_prepend", "array_cat", "||",
                                        "array_position", "array_positions", "array_remove",
                                        "array_replace"};
    for (size_t i = 0; i < SL_ARRAY_LEN(names); i++)
        if (strcmp(fd->name, names[i]) == 0)
            return true;
    return false;
}

static void describe(Analyze *an, const char *name, bool is_op, Expr **args, int n, char *buf,
                     size_t size)
{
    SL_UNUSED(an);
    size_t at = 0;
    char tb[96];
    if (is_op) {
        char tb2[96];
        snprintf(buf, size, "%s %s %s", type_display(args[0]->type, tb, sizeof(tb)), name,
                 n > 1 ? type_display(args[1]->type, tb2, sizeof(tb2)) : "");
        return;
    }
    at += (size_t)snprintf(buf, size, "%s(", name);
    for (int k = 0; k < n && at < size; k++)
        at += (size_t)snprintf(buf + at, size - at, "%s%s", k ? ", " : "",
                               type_display(args[k]->type, tb, sizeof(tb)));
    if (at < size)
        snprintf(buf + at, size - at, ")");
}

static Expr *no_such(Analyze *an, const char *name, bool is_op, Expr **args, int n, int loc)
{
    char call[512];
    describe(an, name, is_op, args, n, call, sizeof(call));
    if (is_op)
        sl_error_at(an->err, ERRCODE_UNDEFINED_FUNCTION, loc, "operator does not exist: %s", call);
    else
        sl_error_at(an->err, ERRCODE_UNDEFINED_FUNCTION, loc, "function %s does not exist", call);
    sl_error_hint(an->err, "No %s matches the given name and argument types. You might need "
                           "to add explicit type casts.", is_op ? "operator" : "function");
    return NULL;
}

bool an_array_no_such(Analyze *an, const char *name, bool is_op, Expr **args, int n, int loc)
{
    bool any = false;
    for (int k = 0; k < n; k++)
        any |= args[k]->type.id == TYPE_ARRAY;
    if (!any || strcmp(an->err->sqlstate, ERRCODE_UNDEFINED_FUNCTION) != 0)
        return false;
    sl_error_clear(an->err);
    no_such(an, name, is_op, args, n, loc);
    return true;
}

/* The element type a row of the table takes for these arguments, or
 * TYPE_UNKNOWN when they do not fit it; *undetermined when only untyped
 * literals stand for the polymorphic arguments. */
static SlType poly_elem(const FuncDesc *fd, Expr **args, int n, bool *undetermined)
{
    SlType elem = sl_type(TYPE_UNKNOWN);
    bool compat = compatible(fd), seen = false;
    *undetermined = false;
    for (int k = 0; k < n; k++) {
        SlType at = args[k]->type, want;
        if (fd->args[k] == TYPE_ARRAY) {
            if (at.id == TYPE_UNKNOWN)
                continue;
            if (at.id != TYPE_ARRAY)
                return sl_type(TYPE_UNKNOWN);
            want = type_elem(at);
        } else if (fd->args[k] == TYPE__COUNT) {
            if (at.id == TYPE_UNKNOWN)
                continue;
            if (at.id == TYPE_ARRAY)
                return sl_type(TYPE_UNKNOWN);     /* arrays of arrays: none */
            want = at;
        } else {
            continue;
        }
        if (!seen) {
            elem = want;
            seen = true;
        } else if (want.id != elem.id) {
            if (compat && ex_can_coerce(want.id, elem.id))
                continue;
            if (compat && ex_can_coerce(elem.id, want.id))
                elem = want;
            else
                return sl_type(TYPE_UNKNOWN);
        }
    }
    /* anycompatible with only untyped literals: text, as PostgreSQL */
    if (!seen && compat)
        elem = sl_type(TYPE_TEXT);
    else if (!seen)
        *undetermined = true;
    elem.typmod = -1;
    return elem;
}

Expr *an_array_call(Analyze *an, const char *name, bool is_op, Expr **args, int n, int loc)
{
    size_t nf;
    const FuncDesc *t = ex_array_funcs(&nf);
    for (size_t i = 0; i < nf; i++) {
        const FuncDesc *fd = &t[i];
        if (fd->is_op != is_op || fd->nargs != n || strcmp(fd->name, name) != 0)
            continue;
        /* a fixed argument that cannot be cast: not this row */
        bool fits = true;
        for (int k = 0; k < n; k++)
            if (fd->args[k] != TYPE_ARRAY && fd->args[k] != TYPE__COUNT &&
                !ex_can_coerce(args[k]->type.id, fd->args[k]))
                fits = false;
        /* || with a non-array side: array || element or element || array */
        if (is_op && ((fd->args[0] == TYPE_ARRAY) != (args[0]->type.id == TYPE_ARRAY) ||
                      (fd->args[1] == TYPE_ARRAY) != (args[1]->type.id == TYPE_ARRAY)) &&
            args[0]->type.id != TYPE_UNKNOWN && args[1]->type.id != TYPE_UNKNOWN)
            fits = false;
        if (!fits)
            continue;
        bool undetermined = false;
        SlType elem = poly_elem(fd, args, n, &undetermined);
        bool poly = false;
        for (int k = 0; k < n; k++)
            poly |= fd->args[k] == TYPE_ARRAY || fd->args[k] == TYPE__COUNT;
        if (poly && undetermined) {
            sl_error_at(an->err, ERRCODE_DATATYPE_MISMATCH, loc,
                        "could not determine polymorphic type because input has type unknown");
            return NULL;
        }
        if (poly && elem.id == TYPE_UNKNOWN)
            continue;
        Expr **cast = ARENA_ARRAY(an->a, Expr *, n);
        for (int k = 0; k < n; k++) {
            SlType want = fd->args[k] == TYPE_ARRAY ? sl_array_type(elem.id, -1)
                          : fd->args[k] == TYPE__COUNT ? elem : sl_type(fd->args[k]);
            cast[k] = an_coerce(an, args[k], want, COERCE_IMPLICIT, args[k]->location);
            if (cast[k] == NULL)
                return NULL;
        }
        SlType ret = fd->ret == TYPE_ARRAY
                         ? sl_array_type(poly ? elem.id : TYPE_TEXT, -1)
                         : sl_type(fd->ret);
        if (strcmp(fd->name, "array_positions") == 0)
            ret = sl_array_type(TYPE_INT4, -1);
        Expr *e = an_mk(an, EXPR_FUNC, ret, loc, n, cast);
        e->fn = fd;
        return e;
    }
    return no_such(an, name, is_op, args, n, loc);
}

/* select_common_type when the first typed input is an array (CASE,
 * COALESCE, UNION, VALUES, ARRAY(...) lists): every input an array (or
 * an untyped literal), the element types' common type, each input cast
 * to its array. */
bool an_array_common_type(Analyze *an, Expr **es, int n, const char *what, SlType *out)
{
    SlType pt = sl_type(TYPE_UNKNOWN);
    for (int i = 0; i < n; i++) {
        SlType t = es[i]->type;
        if (t.id == TYPE_UNKNOWN)
            continue;
        char b1[96], b2[96];
        if (t.id != TYPE_ARRAY) {
            sl_error_at(an->err, ERRCODE_DATATYPE_MISMATCH, es[i]->location,
                        "%s types %s and %s cannot be matched", what,
                        type_format(sl_array_type(pt.id, -1), b1, sizeof(b1)),
                        type_format(t, b2, sizeof(b2)));
            return false;
        }
        SlType et = type_elem(t);
        if (pt.id == TYPE_UNKNOWN || (ex_can_coerce(pt.id, et.id) && !ex_can_coerce(et.id, pt.id)))
            pt = et;
        else if (et.id != pt.id && !ex_can_coerce(et.id, pt.id)) {
            sl_error_at(an->err, ERRCODE_DATATYPE_MISMATCH, es[i]->location,
                        "%s types %s and %s cannot be matched", what,
                        type_format(sl_array_type(pt.id, -1), b1, sizeof(b1)),
                        type_format(t, b2, sizeof(b2)));
            return false;
        }
    }
    *out = sl_array_type(pt.id, -1);
    for (int i = 0; i < n; i++)
        if ((es[i] = an_coerce(an, es[i], *out, COERCE_IMPLICIT, es[i]->location)) == NULL)
            return false;
    return true;
}

/* ------------------------------------------------------------- syntax */

Expr *an_array_ctor(Analyze *an, Expr **args, int n, int loc)
{
    SlType elem = sl_type(TYPE_TEXT);
    if (n > 0 && !an_common_type(an, args, n, "ARRAY", &elem))
        return NULL;
    if (elem.id == TYPE_ARRAY) {
        sl_error_at(an->err, ERRCODE_FEATURE_NOT_SUPPORTED, loc,
                    "multidimensional arrays are not supported yet");
        return NULL;
    }
    if (n == 0) {
        sl_error_at(an->err, ERRCODE_INDETERMINATE_DATATYPE, loc,
                    "cannot determine type of empty array");
        sl_error_hint(an->err, "Explicitly cast to the desired type, for example "
                               "ARRAY[]::integer[].");
        return NULL;
    }
    Expr *e = an_mk(an, EXPR_FUNC, sl_array_type(elem.id, -1), loc, n, args);
    e->fn = ex_array_builtin(EX_ARRAY_CTOR);
    return e;
}

Expr *an_array_subscript(Analyze *an, Expr *arr, Expr *lo, Expr *hi, bool slice, int loc)
{
    if (arr->type.id == TYPE_UNKNOWN && arr->kind == EXPR_CONST)
        arr = an_coerce(an, arr, sl_type(TYPE_TEXT), COERCE_EXPLICIT, loc);
    if (arr == NULL)
        return NULL;
    if (arr->type.id != TYPE_ARRAY) {
        char tb[96];
        sl_error_at(an->err, ERRCODE_DATATYPE_MISMATCH, loc,
                    "cannot subscript type %s because it does not support subscripting",
                    type_format(arr->type, tb, sizeof(tb)));
        return NULL;
    }
    Expr *bound[2] = {lo, hi};
    int omitted = 0;
    for (int k = 0; k < 2; k++) {
        if (bound[k] == NULL) {
            omitted |= 1 << k;
            bound[k] = an_const(an, sl_type(TYPE_INT4), loc, false);
            bound[k]->value.v.i32[0] = 0;
            continue;
        }
        /* PostgreSQL's assignment coercion: numerics round, text does not */
        SlTypeId bt = bound[k]->type.id;
        bool ok = bt == TYPE_UNKNOWN || (bt != TYPE_TEXT && bt != TYPE_VARCHAR &&
                                         ex_assign_cast_fn(bt, TYPE_INT4) != NULL);
        if (ok)
            bound[k] = an_coerce(an, bound[k], sl_type(TYPE_INT4), COERCE_EXPLICIT, loc);
        if (!ok || bound[k] == NULL) {
            if (ok)
                return NULL;
            sl_error_at(an->err, ERRCODE_DATATYPE_MISMATCH, loc,
                        "array subscript must have type integer");
            return NULL;
        }
    }
    if (!slice) {
        Expr *args[2] = {arr, bound[0]};
        Expr *e = an_mk(an, EXPR_FUNC, type_elem(arr->type), loc, 2, args);
        e->fn = ex_array_builtin(EX_ARRAY_SUBSCRIPT);
        return e;
    }
    Expr *args[3] = {arr, bound[0], bound[1]};
    Expr *e = an_mk(an, EXPR_FUNC, arr->type, loc, 3, args);
    e->fn = ex_array_builtin(EX_ARRAY_SLICE);
    e->subkind = omitted;
    return e;
}

Expr *an_array_any(Analyze *an, const char *op, bool all, Expr *x, Expr *arr, int loc)
{
    static const char *const ops[] = {"=", "<>", "<", "<=", ">", ">="};
    int cmp = -1;
    for (int k = 0; k < (int)SL_ARRAY_LEN(ops); k++)
        if (strcmp(op, ops[k]) == 0)
            cmp = k;
    if (cmp < 0) {
        sl_error_at(an->err, ERRCODE_FEATURE_NOT_SUPPORTED, loc,
                    "operator %s with ANY/ALL (array) is not supported yet", op);
        return NULL;
    }
    if (arr->type.id == TYPE_UNKNOWN) {
        SlType et = x->type.id == TYPE_UNKNOWN ? sl_type(TYPE_TEXT) : x->type;
        if (et.id == TYPE_ARRAY) {
            sl_error_at(an->err, ERRCODE_FEATURE_NOT_SUPPORTED, loc,
                        "multidimensional arrays are not supported yet");
            return NULL;
        }
        if ((arr = an_coerce(an, arr, sl_array_type(et.id, -1), COERCE_IMPLICIT, loc)) == NULL)
            return NULL;
    }
    if (arr->type.id != TYPE_ARRAY) {
        sl_error_at(an->err, ERRCODE_WRONG_OBJECT_TYPE, loc,
                    "op ANY/ALL (array) requires array on right side");
        return NULL;
    }
    SlType elem = type_elem(arr->type);
    elem.typmod = -1;
    if (x->type.id != TYPE_UNKNOWN && x->type.id != elem.id) {
        if (ex_can_coerce(elem.id, x->type.id) && !ex_can_coerce(x->type.id, elem.id)) {
            /* the elements go up to x's type: the array is cast */
            SlType up = sl_type(x->type.id);
            if ((arr = an_coerce(an, arr, sl_array_type(up.id, -1), COERCE_IMPLICIT, loc)) ==
                NULL)
                return NULL;
            elem = up;
        } else if (!ex_can_coerce(x->type.id, elem.id)) {
            char b1[96], b2[96];
            sl_error_at(an->err, ERRCODE_UNDEFINED_FUNCTION, loc,
                        "operator does not exist: %s %s %s",
                        type_format(x->type, b1, sizeof(b1)), op,
                        type_format(elem, b2, sizeof(b2)));
            return NULL;
        }
    }
    if ((x = an_coerce(an, x, elem, COERCE_IMPLICIT, loc)) == NULL)
        return NULL;
    Expr *args[2] = {x, arr};
    Expr *e = an_mk(an, EXPR_FUNC, sl_type(TYPE_BOOL), loc, 2, args);
    e->fn = ex_array_builtin(EX_ARRAY_ANY);
    e->subkind = cmp;
    e->negate = all;
    return e;
}
