/*
 * arrayfuncs.c -- the functions and operators over arrays (PostgreSQL 15's
 * arrayfuncs.c and array_userfuncs.c, one dimension).
 *
 *   ex_array_func(name, nargs)   the FuncDesc of an array function or
 *                                operator, for the analyzer
 *                                (src/sql/analyze_array.c), which types the
 *                                call (element types come from the array
 *                                argument's SlType.elem)
 *   ex_array_ctor_fn             ARRAY[...]: its arguments as one array
 *   ex_array_subscript_fn,
 *   ex_array_slice_fn            a[i], a[i:j]
 *   ex_array_any_fn              x op ANY / ALL (a): Expr.subkind the
 *                                comparison (ExArrayCmp), negate: ALL
 *   ex_string_split              string_to_array's pieces (srf.c's
 *                                string_to_table reads them too)
 *
 * Among the functions, string_to_array and parse_ident make text[] from
 * text.  The kernels read their array arguments' element type from the call's
 * argument expressions (e->args[k]->type), never from the bytes.  Arrays
 * they make live in the batch arena (cx->arena).
 */
#include "kernels.h"

#include <string.h>

/* The element type of the call's argument k (an array). */
static SlType elem_of(const Expr *e, int k)
{
    return type_elem(e->args[k]->type);
}

static SlTypeId elem_id(const Expr *e)
{
    return e->type.id == TYPE_ARRAY ? e->type.elem : elem_of(e, 0).id;
}

/* Whether element el equals row i of v (NULL equals NULL: IS NOT
 * DISTINCT FROM, as array_position and array_remove compare). */
static bool elem_same(Arena *a, SlType t, const ArrayElem *el, const Vector *v, uint32_t i)
{
    bool vnull = vector_is_null(v, i);
    if (el->null || vnull)
        return el->null && vnull;
    Vector x;
    vector_init(&x, a, t, 1, true);
    array_elem_value(a, t, el, &x, 0);
    return value_cmp(&x, 0, v, i) == 0;
}

/* ---------------------------------------------------------- dimensions */

static int bound_rows(EvalCtx *cx, const Vector *args, Vector *out, const uint32_t *sel,
                      uint32_t n, int which)
{
    SL_UNUSED(cx);
    FOR_SEL(sel, n, {
        int32_t c = array_count(&args[0].v.str[i]);
        if (c == 0 || args[1].v.i32[i] != 1)
            out->nulls[i] = 1;
        else
            out->v.i32[i] = which == 0 ? c : which == 1 ? c : 1;
    });
    return 0;
}

static KERNEL(k_array_length) { SL_UNUSED(e); return bound_rows(cx, args, out, sel, n, 0); }
static KERNEL(k_array_upper) { SL_UNUSED(e); return bound_rows(cx, args, out, sel, n, 1); }
static KERNEL(k_array_lower) { SL_UNUSED(e); return bound_rows(cx, args, out, sel, n, 2); }

static KERNEL(k_cardinality)
{
    SL_UNUSED(e);
    SL_UNUSED(cx);
    FOR_SEL(sel, n, { out->v.i32[i] = array_count(&args[0].v.str[i]); });
    return 0;
}

static KERNEL(k_array_ndims)
{
    SL_UNUSED(e);
    SL_UNUSED(cx);
    FOR_SEL(sel, n, {
        if (array_count(&args[0].v.str[i]) == 0)
            out->nulls[i] = 1;
        else
            out->v.i32[i] = 1;
    });
    return 0;
}

static KERNEL(k_array_dims)
{
    SL_UNUSED(e);
    FOR_SEL(sel, n, {
        int32_t c = array_count(&args[0].v.str[i]);
        if (c == 0) {
            out->nulls[i] = 1;
            continue;
        }
        char *s = arena_printf(cx->arena, "[1:%d]", c);
        out->v.str[i].ptr = s;
        out->v.str[i].len = (uint32_t)strlen(s);
    });
    return 0;
}

/* ---------------------------------------------------------- searching */

/* array_position(a, x [, start]): the first index from start whose
 * element IS NOT DISTINCT FROM x; NULL if none. */
static KERNEL(k_array_position)
{
    SlType t = elem_of(e, 0);
    FOR_SEL(sel, n, {
        out->nulls[i] = 1;
        if (vector_is_null(&args[0], i))
            continue;
        int32_t start = 1;
        if (e->nargs > 2) {
            if (vector_is_null(&args[2], i))
                return sl_error(cx->err, ERRCODE_NULL_VALUE_NOT_ALLOWED,
                                "initial position must not be null");
            start = args[2].v.i32[i];
        }
        ArrayIter it;
        array_iter_init(&it, &args[0].v.str[i]);
        ArrayElem el;
        for (int32_t k = 1; array_next(&it, &el); k++) {
            if (k >= start && elem_same(cx->arena, t, &el, &args[1], i)) {
                out->nulls[i] = 0;
                out->v.i32[i] = k;
                break;
            }
        }
    });
    return 0;
}

/* array_positions(a, x): every such index, as an int4[] ({} if none). */
static KERNEL(k_array_positions)
{
    SlType t = elem_of(e, 0);
    Vector idx;
    vector_init(&idx, cx->arena, sl_type(TYPE_INT4), 1, false);
    FOR_SEL(sel, n, {
        out->nulls[i] = vector_is_null(&args[0], i);
        if (out->nulls[i])
            continue;
        ArrayBuild b;
        array_build_begin(&b, TYPE_INT4);
        ArrayIter it;
        array_iter_init(&it, &args[0].v.str[i]);
        ArrayElem el;
        for (int32_t k = 1; array_next(&it, &el); k++) {
            if (elem_same(cx->arena, t, &el, &args[1], i)) {
                idx.v.i32[0] = k;
                array_build_add(&b, &idx, 0);
            }
        }
        array_build_finish(&b, cx->arena, &out->v.str[i]);
    });
    return 0;
}

/* ---------------------------------------------------------- making */

static void add_all(ArrayBuild *b, const SlStr *arr)
{
    ArrayIter it;
    array_iter_init(&it, arr);
    ArrayElem el;
    while (array_next(&it, &el))
        array_build_add_elem(b, &el);
}

/* array_append(a, x), array_prepend(x, a): a NULL array is empty. */
static KERNEL(k_array_append)
{
    bool prepend = e->args[0]->type.id != TYPE_ARRAY;
    int ai = prepend ? 1 : 0, xi = prepend ? 0 : 1;
    FOR_SEL(sel, n, {
        ArrayBuild b;
        array_build_begin(&b, elem_id(e));
        if (prepend)
            array_build_add(&b, &args[xi], i);
        if (!vector_is_null(&args[ai], i))
            add_all(&b, &args[ai].v.str[i]);
        if (!prepend)
            array_build_add(&b, &args[xi], i);
        out->nulls[i] = 0;
        array_build_finish(&b, cx->arena, &out->v.str[i]);
    });
    return 0;
}

/* array_cat(a, b), a || b: NULL when both are, else the other. */
static KERNEL(k_array_cat)
{
    FOR_SEL(sel, n, {
        bool n0 = vector_is_null(&args[0], i), n1 = vector_is_null(&args[1], i);
        out->nulls[i] = n0 && n1;
        if (n0 && n1)
            continue;
        ArrayBuild b;
        array_build_begin(&b, elem_id(e));
        if (!n0)
            add_all(&b, &args[0].v.str[i]);
        if (!n1)
            add_all(&b, &args[1].v.str[i]);
        array_build_finish(&b, cx->arena, &out->v.str[i]);
    });
    return 0;
}

/* array_remove(a, x), array_replace(a, x, y): elements IS NOT DISTINCT
 * FROM x dropped or replaced by y. */
static KERNEL(k_array_remove)
{
    SlType t = elem_of(e, 0);
    bool replace = e->nargs == 3;
    FOR_SEL(sel, n, {
        out->nulls[i] = vector_is_null(&args[0], i);
        if (out->nulls[i])
            continue;
        ArrayBuild b;
        array_build_begin(&b, t.id);
        ArrayIter it;
        array_iter_init(&it, &args[0].v.str[i]);
        ArrayElem el;
        while (array_next(&it, &el)) {
            if (!elem_same(cx->arena, t, &el, &args[1], i))
                array_build_add_elem(&b, &el);
            else if (replace)
                array_build_add(&b, &args[2], i);
        }
        array_build_finish(&b, cx->arena, &out->v.str[i]);
    });
    return 0;
}

/* ---------------------------------------------------------- text */

/* array_to_string(a, sep [, null_string]): NULL elements skipped unless
 * null_string is given (and not NULL). */
static KERNEL(k_array_to_string)
{
    SlType t = elem_of(e, 0);
    Vector v;
    vector_init(&v, cx->arena, t, 1, true);
    StrBuf sb;
    strbuf_init(&sb);
    FOR_SEL(sel, n, {
        out->nulls[i] = vector_is_null(&args[0], i) || vector_is_null(&args[1], i);
        if (out->nulls[i])
            continue;
        bool with_null = e->nargs > 2 && !vector_is_null(&args[2], i);
        strbuf_reset(&sb);
        ArrayIter it;
        array_iter_init(&it, &args[0].v.str[i]);
        ArrayElem el;
        bool first = true;
        while (array_next(&it, &el)) {
            if (el.null && !with_null)
                continue;
            if (!first)
                strbuf_append(&sb, args[1].v.str[i].ptr, args[1].v.str[i].len);
            first = false;
            if (el.null) {
                strbuf_append(&sb, args[2].v.str[i].ptr, args[2].v.str[i].len);
                continue;
            }
            array_elem_value(cx->arena, t, &el, &v, 0);
            value_format_text(&v, 0, &sb);
        }
        out->v.str[i].ptr = arena_memdup(cx->arena, sb.data ? sb.data : "", sb.len);
        out->v.str[i].len = (uint32_t)sb.len;
    });
    strbuf_free(&sb);
    return 0;
}

static void add_piece(ArrayBuild *b, Vector *v, const char *p, size_t len, const Vector *nullstr,
                      uint32_t i, bool has_null)
{
    v->nulls[0] = has_null && nullstr->v.str[i].len == len &&
                  memcmp(nullstr->v.str[i].ptr, p, len) == 0;
    v->v.str[0].ptr = p;
    v->v.str[0].len = (uint32_t)len;
    array_build_add(b, v, 0);
}

static bool ident_start(unsigned char c)
{
    return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c == '_' || c >= 0x80;
}

static bool ident_cont(unsigned char c)
{
    return ident_start(c) || (c >= '0' && c <= '9') || c == '$';
}

static int not_identifier(EvalCtx *cx, const SlStr *s, const char *detail)
{
    sl_error(cx->err, ERRCODE_INVALID_PARAMETER_VALUE, "string is not a valid identifier: \"%.*s\"",
             (int)s->len, s->ptr);
    if (detail != NULL)
        sl_error_detail(cx->err, "%s", detail);
    return -1;
}

/* parse_ident(qualified [, strict]): the names of a qualified identifier
 * as PostgreSQL's parser reads them (unquoted ones in lower case, "" in a
 * quoted one a "), 22023 for what is none; not strict, what follows the
 * last name is ignored. */
static KERNEL(k_parse_ident)
{
    Vector v;
    vector_init(&v, cx->arena, sl_type(TYPE_TEXT), 1, true);
    FOR_SEL(sel, n, {
        const SlStr *s = &args[0].v.str[i];
        bool strict = e->nargs < 2 || args[1].v.b[i];
        const char *p = s->ptr, *end = s->ptr + s->len;
        bool after_dot = false;
        ArrayBuild b;
        array_build_begin(&b, TYPE_TEXT);
        while (p < end && (*p == ' ' || *p == '\t' || *p == '\n' || *p == '\r'))
            p++;
        for (;;) {
            bool missing = true;
            if (p < end && *p == '"') {
                StrBuf name;
                strbuf_init(&name);
                p++;
                for (;;) {
                    const char *q = memchr(p, '"', (size_t)(end - p));
                    if (q == NULL) {
                        strbuf_free(&name);
                        array_build_finish(&b, cx->arena, &out->v.str[i]);
                        return not_identifier(cx, s, "String has unclosed double quotes.");
                    }
                    strbuf_append(&name, p, (size_t)(q - p));
                    p = q + 1;
                    if (p < end && *p == '"') {
                        strbuf_putc(&name, '"');
                        p++;
                        continue;
                    }
                    break;
                }
                if (name.len == 0) {
                    strbuf_free(&name);
                    array_build_finish(&b, cx->arena, &out->v.str[i]);
                    return not_identifier(cx, s, "Quoted identifier must not be empty.");
                }
                add_piece(&b, &v, arena_strndup(cx->arena, name.data, name.len), name.len, NULL,
                          i, false);
                strbuf_free(&name);
                missing = false;
            } else if (p < end && ident_start((unsigned char)*p)) {
                const char *start = p++;
                while (p < end && ident_cont((unsigned char)*p))
                    p++;
                char *low = arena_strndup(cx->arena, start, (size_t)(p - start));
                for (char *c = low; *c; c++)
                    if (*c >= 'A' && *c <= 'Z')
                        *c = (char)(*c - 'A' + 'a');
                add_piece(&b, &v, low, (size_t)(p - start), NULL, i, false);
                missing = false;
            }
            if (missing) {
                array_build_finish(&b, cx->arena, &out->v.str[i]);
                if (p < end && *p == '.')
                    return not_identifier(cx, s, "No valid identifier before \".\".");
                return not_identifier(cx, s, after_dot ? "No valid identifier after \".\"." : NULL);
            }
            while (p < end && (*p == ' ' || *p == '\t' || *p == '\n' || *p == '\r'))
                p++;
            if (p < end && *p == '.') {
                after_dot = true;
                p++;
                while (p < end && (*p == ' ' || *p == '\t' || *p == '\n' || *p == '\r'))
                    p++;
            } else if (p == end) {
                break;
            } else {
                if (strict) {
                    array_build_finish(&b, cx->arena, &out->v.str[i]);
                    return not_identifier(cx, s, NULL);
                }
                break;
            }
        }
        array_build_finish(&b, cx->arena, &out->v.str[i]);
    });
    return 0;
}

/* string_to_array(s, sep [, null_string]) of row i (s not NULL): s split
 * at each sep; a NULL sep splits into characters, an empty one not at all;
 * '' gives {}; a piece equal to null_string is NULL.  The text[] in the
 * arena (string_to_table reads it too). */
void ex_string_split(Arena *a, const Vector *args, int nargs, uint32_t i, SlStr *out)
{
    Vector v;
    vector_init(&v, a, sl_type(TYPE_TEXT), 1, true);
    const SlStr *s = &args[0].v.str[i];
    bool has_null = nargs > 2 && !vector_is_null(&args[2], i);
    ArrayBuild b;
    array_build_begin(&b, TYPE_TEXT);
    if (s->len > 0) {
        if (vector_is_null(&args[1], i)) {
            for (uint32_t k = 0; k < s->len;) {
                uint32_t w = 1;
                unsigned char c = (unsigned char)s->ptr[k];
                if (c >= 0xF0) w = 4; else if (c >= 0xE0) w = 3; else if (c >= 0xC0) w = 2;
                if (k + w > s->len)
                    w = s->len - k;
                add_piece(&b, &v, s->ptr + k, w, &args[2], i, has_null);
                k += w;
            }
        } else {
            const SlStr *sep = &args[1].v.str[i];
            size_t start = 0;
            if (sep->len > 0) {
                for (size_t k = 0; k + sep->len <= s->len;) {
                    if (memcmp(s->ptr + k, sep->ptr, sep->len) == 0) {
                        add_piece(&b, &v, s->ptr + start, k - start, &args[2], i, has_null);
                        k += sep->len;
                        start = k;
                    } else {
                        k++;
                    }
                }
            }
            add_piece(&b, &v, s->ptr + start, s->len - start, &args[2], i, has_null);
        }
    }
    array_build_finish(&b, a, out);
}

static KERNEL(k_string_to_array)
{
    FOR_SEL(sel, n, {
        out->nulls[i] = vector_is_null(&args[0], i);
        if (!out->nulls[i])
            ex_string_split(cx->arena, args, e->nargs, i, &out->v.str[i]);
    });
    return 0;
}

/* ---------------------------------------------------------- comparison */

static int cmp_rows(const Expr *e, const Vector *args, Vector *out, const uint32_t *sel,
                    uint32_t n, int op)
{
    SlType t = elem_of(e, 0);
    FOR_SEL(sel, n, {
        int c = array_cmp(&args[0].v.str[i], &args[1].v.str[i], t);
        out->v.b[i] = op == EX_ARR_EQ ? c == 0 : op == EX_ARR_NE ? c != 0
                    : op == EX_ARR_LT ? c < 0 : op == EX_ARR_LE ? c <= 0
                    : op == EX_ARR_GT ? c > 0 : c >= 0;
    });
    return 0;
}

static KERNEL(k_arr_eq) { SL_UNUSED(cx); return cmp_rows(e, args, out, sel, n, EX_ARR_EQ); }
static KERNEL(k_arr_ne) { SL_UNUSED(cx); return cmp_rows(e, args, out, sel, n, EX_ARR_NE); }
static KERNEL(k_arr_lt) { SL_UNUSED(cx); return cmp_rows(e, args, out, sel, n, EX_ARR_LT); }
static KERNEL(k_arr_le) { SL_UNUSED(cx); return cmp_rows(e, args, out, sel, n, EX_ARR_LE); }
static KERNEL(k_arr_gt) { SL_UNUSED(cx); return cmp_rows(e, args, out, sel, n, EX_ARR_GT); }
static KERNEL(k_arr_ge) { SL_UNUSED(cx); return cmp_rows(e, args, out, sel, n, EX_ARR_GE); }

static bool cmp_holds(int c, int op)
{
    switch (op) {
    case EX_ARR_EQ: return c == 0;
    case EX_ARR_NE: return c != 0;
    case EX_ARR_LT: return c < 0;
    case EX_ARR_LE: return c <= 0;
    case EX_ARR_GT: return c > 0;
    default:        return c >= 0;
    }
}

/* x op ANY (a) / x op ALL (a) (negate): ANY is true if some comparison
 * is, else NULL if x or an element is NULL, else false; ALL is false if
 * some comparison is, else NULL on a NULL, else true.  An empty array
 * gives false (ANY) or true (ALL) whatever x. */
static KERNEL(k_array_any)
{
    SlType t = elem_of(e, 1);
    bool all = e->negate;
    Vector el;
    vector_init(&el, cx->arena, t, 1, true);
    FOR_SEL(sel, n, {
        if (vector_is_null(&args[1], i)) {
            out->nulls[i] = 1;
            continue;
        }
        ArrayIter it;
        array_iter_init(&it, &args[1].v.str[i]);
        bool xnull = vector_is_null(&args[0], i), saw_null = false, decided = false;
        ArrayElem ae;
        while (!decided && array_next(&it, &ae)) {
            if (ae.null || xnull) {
                saw_null = true;
                continue;
            }
            array_elem_value(cx->arena, t, &ae, &el, 0);
            bool holds = cmp_holds(value_cmp(&args[0], i, &el, 0), e->subkind);
            decided = all ? !holds : holds;
        }
        out->nulls[i] = !decided && saw_null;
        out->v.b[i] = decided ? !all : all;
    });
    return 0;
}

/* Whether some non-NULL element of a equals el (NULLs match nothing, as
 * in PostgreSQL's array_contain_compare). */
static bool has_elem(Arena *ar, SlType t, const SlStr *a, const ArrayElem *el, Vector *scratch)
{
    if (el->null)
        return false;
    array_elem_value(ar, t, el, scratch, 1);
    ArrayIter it;
    array_iter_init(&it, a);
    ArrayElem x;
    while (array_next(&it, &x)) {
        if (x.null)
            continue;
        array_elem_value(ar, t, &x, scratch, 0);
        if (value_cmp(scratch, 0, scratch, 1) == 0)
            return true;
    }
    return false;
}

/* a @> b (contains), a <@ b (is contained by: b @> a), a && b (overlap):
 * by element equality, duplicates and order ignored.  A NULL element is
 * in no array (ARRAY[NULL] @> ARRAY[NULL] is false); every array
 * contains {}. */
static int contain_rows(EvalCtx *cx, const Expr *e, const Vector *args, Vector *out,
                        const uint32_t *sel, uint32_t n, int how)
{
    SlType t = elem_of(e, 0);
    Vector scratch;
    vector_init(&scratch, cx->arena, t, 2, true);
    FOR_SEL(sel, n, {
        const SlStr *big = how == 1 ? &args[1].v.str[i] : &args[0].v.str[i];
        const SlStr *small = how == 1 ? &args[0].v.str[i] : &args[1].v.str[i];
        ArrayIter it;
        array_iter_init(&it, small);
        ArrayElem el;
        bool r = how != 2;      /* contains: all found; overlap: any found */
        while (array_next(&it, &el)) {
            bool found = has_elem(cx->arena, t, big, &el, &scratch);
            if (how == 2 && found) {
                r = true;
                break;
            }
            if (how != 2 && !found) {
                r = false;
                break;
            }
        }
        out->v.b[i] = r;
    });
    return 0;
}

static KERNEL(k_arr_contains) { return contain_rows(cx, e, args, out, sel, n, 0); }
static KERNEL(k_arr_contained) { return contain_rows(cx, e, args, out, sel, n, 1); }
static KERNEL(k_arr_overlap) { return contain_rows(cx, e, args, out, sel, n, 2); }

/* ---------------------------------------------------------- construction */

/* ARRAY[x1, x2, ...]: the arguments (of the element type) in order. */
static KERNEL(k_array_ctor)
{
    FOR_SEL(sel, n, {
        ArrayBuild b;
        array_build_begin(&b, e->type.elem);
        for (int k = 0; k < e->nargs; k++)
            array_build_add(&b, &args[k], i);
        out->nulls[i] = 0;
        array_build_finish(&b, cx->arena, &out->v.str[i]);
    });
    return 0;
}

/* a[i]: the element (1-based), NULL outside the array. */
static KERNEL(k_array_subscript)
{
    SlType t = elem_of(e, 0);
    FOR_SEL(sel, n, {
        int32_t want = args[1].v.i32[i];
        ArrayIter it;
        array_iter_init(&it, &args[0].v.str[i]);
        ArrayElem el;
        out->nulls[i] = 1;
        for (int32_t k = 1; array_next(&it, &el); k++) {
            if (k == want) {
                array_elem_value(cx->arena, t, &el, out, i);
                break;
            }
        }
    });
    return 0;
}

/* a[lo:hi]: the elements lo..hi clamped to the array (an omitted bound,
 * Expr.subkind bit 1 / 2, is the array's), {} when none. */
static KERNEL(k_array_slice)
{
    SlType t = elem_of(e, 0);
    FOR_SEL(sel, n, {
        int32_t c = array_count(&args[0].v.str[i]);
        int64_t lo = (e->subkind & 1) ? 1 : args[1].v.i32[i];
        int64_t hi = (e->subkind & 2) ? c : args[2].v.i32[i];
        ArrayBuild b;
        array_build_begin(&b, t.id);
        ArrayIter it;
        array_iter_init(&it, &args[0].v.str[i]);
        ArrayElem el;
        for (int64_t k = 1; array_next(&it, &el); k++)
            if (k >= lo && k <= hi)
                array_build_add_elem(&b, &el);
        out->nulls[i] = 0;
        array_build_finish(&b, cx->arena, &out->v.str[i]);
    });
    return 0;
}

/* ---------------------------------------------------------- casts */

int ex_array_cast(EvalCtx *cx, const Expr *e, const Vector *args, Vector *out,
                  const uint32_t *sel, uint32_t n)
{
    const Expr *ec = e->args[1];
    SlType from = type_elem(e->args[0]->type), to = ec->type;
    FOR_SEL(sel, n, {
        Vector src, dst;
        array_to_vector(cx->arena, from, &args[0].v.str[i], &src);
        vector_init(&dst, cx->arena, to, src.len, true);
        uint32_t *rows = ARENA_ARRAY(cx->arena, uint32_t, src.len ? src.len : 1), nr = 0;
        for (uint32_t k = 0; k < src.len; k++) {
            dst.nulls[k] = vector_is_null(&src, k);
            if (!dst.nulls[k])
                rows[nr++] = k;
        }
        if (nr > 0 && ec->cast(cx, ec, &src, &dst, rows, nr) < 0)
            return -1;
        out->nulls[i] = 0;
        array_from_vector(cx->arena, &dst, dst.len, &out->v.str[i]);
    });
    return 0;
}

/* ---------------------------------------------------------- the table */

#define ARR TYPE_ARRAY
#define ANYT TYPE__COUNT
#define I4 TYPE_INT4
#define TX TYPE_TEXT
#define B TYPE_BOOL
#define NS FUNC_NONSTRICT

/* One row: the kernel reads the arguments as declared. */
#define AF(nm, op, na, r, f, fl, ...) \
    {.name = nm, .is_op = op, .nargs = na, .args = {__VA_ARGS__}, .kargs = {__VA_ARGS__}, \
     .ret = r, .fn = f, .flags = fl}

static const FuncDesc array_funcs[] = {
    AF("array_length", false, 2, I4, k_array_length, 0, ARR, I4, 0),
    AF("array_upper", false, 2, I4, k_array_upper, 0, ARR, I4, 0),
    AF("array_lower", false, 2, I4, k_array_lower, 0, ARR, I4, 0),
    AF("array_ndims", false, 1, I4, k_array_ndims, 0, ARR, 0, 0),
    AF("array_dims", false, 1, TX, k_array_dims, 0, ARR, 0, 0),
    AF("cardinality", false, 1, I4, k_cardinality, 0, ARR, 0, 0),
    AF("array_position", false, 2, I4, k_array_position, NS, ARR, ANYT, 0),
    AF("array_position", false, 3, I4, k_array_position, NS, ARR, ANYT, I4),
    AF("array_positions", false, 2, ARR, k_array_positions, NS, ARR, ANYT, 0),
    AF("array_append", false, 2, ARR, k_array_append, NS, ARR, ANYT, 0),
    AF("array_prepend", false, 2, ARR, k_array_append, NS, ANYT, ARR, 0),
    AF("array_cat", false, 2, ARR, k_array_cat, NS, ARR, ARR, 0),
    AF("array_remove", false, 2, ARR, k_array_remove, NS, ARR, ANYT, 0),
    AF("array_replace", false, 3, ARR, k_array_remove, NS, ARR, ANYT, ANYT),
    AF("array_to_string", false, 2, TX, k_array_to_string, 0, ARR, TX, 0),
    AF("array_to_string", false, 3, TX, k_array_to_string, NS, ARR, TX, TX),
    AF("string_to_array", false, 2, ARR, k_string_to_array, NS, TX, TX, 0),
    AF("parse_ident", false, 1, ARR, k_parse_ident, 0, TX),
    AF("parse_ident", false, 2, ARR, k_parse_ident, 0, TX, B),
    AF("string_to_array", false, 3, ARR, k_string_to_array, NS, TX, TX, TX),
    /* operators */
    AF("||", true, 2, ARR, k_array_cat, NS, ARR, ARR, 0),
    AF("||", true, 2, ARR, k_array_append, NS, ARR, ANYT, 0),
    AF("||", true, 2, ARR, k_array_append, NS, ANYT, ARR, 0),
    AF("=", true, 2, B, k_arr_eq, 0, ARR, ARR, 0),
    AF("<>", true, 2, B, k_arr_ne, 0, ARR, ARR, 0),
    AF("<", true, 2, B, k_arr_lt, 0, ARR, ARR, 0),
    AF("<=", true, 2, B, k_arr_le, 0, ARR, ARR, 0),
    AF(">", true, 2, B, k_arr_gt, 0, ARR, ARR, 0),
    AF(">=", true, 2, B, k_arr_ge, 0, ARR, ARR, 0),
    AF("@>", true, 2, B, k_arr_contains, 0, ARR, ARR, 0),
    AF("<@", true, 2, B, k_arr_contained, 0, ARR, ARR, 0),
    AF("&&", true, 2, B, k_arr_overlap, 0, ARR, ARR, 0),
};

static const FuncDesc array_ctor = AF("array", false, 0, ARR, k_array_ctor, NS, 0);
static const FuncDesc array_subscript = AF("array_subscript", false, 2, ANYT, k_array_subscript, 0, ARR, I4);
static const FuncDesc array_slice = AF("array_slice", false, 3, ARR, k_array_slice, 0, ARR, I4, I4);
static const FuncDesc array_any = AF("array_any", false, 2, B, k_array_any, NS, ANYT, ARR);

const FuncDesc *ex_array_funcs(size_t *n)
{
    *n = SL_ARRAY_LEN(array_funcs);
    return array_funcs;
}

const FuncDesc *ex_array_builtin(ExArrayBuiltin which)
{
    switch (which) {
    case EX_ARRAY_CTOR:      return &array_ctor;
    case EX_ARRAY_SUBSCRIPT: return &array_subscript;
    case EX_ARRAY_SLICE:     return &array_slice;
    default:                 return &array_any;
    }
}
