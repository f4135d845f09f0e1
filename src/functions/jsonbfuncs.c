/*
 * jsonbfuncs.c -- JSONB's operators and functions and its casts to SQL
 * scalars, as PostgreSQL 15's jsonb.c, jsonfuncs.c
 * and jsonb_util.c behave.
 *
 *   k_jsonb_get_key, k_jsonb_get_idx, k_jsonb_get_key_text, k_jsonb_get_idx_text
 *                                              -> and ->>
 *   k_jsonb_path, k_jsonb_path_text            #> and #>> with a text[] path
 *   k_jsonb_exists, k_jsonb_contains, k_jsonb_contained    ? @> <@
 *   k_{eq,ne,lt,le,gt,ge}_jsonb                 btree ordering
 *   k_jsonb_typeof, k_jsonb_array_length, k_jsonb_concat, k_jsonb_delete_key
 *   c_jsonb_{numeric,int2,int4,int8,float4,float8,bool}   casts
 *   k_to_jsonb, k_jsonb_build_array, k_jsonb_build_object
 *                      values as JSON (to_jsonb's rules), read back canonical
 *   k_jsonb_strip_nulls, k_jsonb_pretty, k_jsonb_set, k_jsonb_insert,
 *   k_jsonb_delete_path  on the tree form; set, insert and #- as setPath does
 *   k_jsonb_exists_any, k_jsonb_exists_all      ?| and ?& of a text[]
 *   fn_srf_jsonb_elements, fn_srf_jsonb_elements_text, fn_srf_jsonb_object_keys,
 *   fn_srf_jsonb_each, fn_srf_jsonb_each_text
 *                      jsonb_array_elements(_text), jsonb_object_keys and
 *                      jsonb_each(_text), set-returning (ExSrfFns), slices
 *                      of the input
 *
 * A jsonb value is its canonical text (types/jsonb.c says which): ->,
 * ->>, #>, #>> and ? walk the text with a small skipping scanner, without
 * building a tree (-> returns a slice of its input, no copy); containment,
 * comparison, || and - build trees (types/jsonb.h) in the batch arena.
 * The scanner trusts the text to be canonical and only guards its bounds.
 */
#include "functions/kernels.h"
#include "types/jsonb.h"
#include "types/numeric.h"

#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <strings.h>

/* ------------------------------------------------ scanning canonical text */

/* The end of the value that starts at p. */
static const char *skip_value(const char *p, const char *end)
{
    if (p >= end)
        return p;
    if (*p == '"') {
        p++;
        while (p < end && *p != '"')
            p += *p == '\\' ? 2 : 1;
        return p + 1;
    }
    if (*p == '{' || *p == '[') {
        int depth = 0;
        while (p < end) {
            char c = *p;
            if (c == '"') {
                p++;
                while (p < end && *p != '"')
                    p += *p == '\\' ? 2 : 1;
                p++;
                continue;
            }
            if (c == '{' || c == '[')
                depth++;
            else if (c == '}' || c == ']') {
                if (--depth == 0)
                    return p + 1;
            }
            p++;
        }
        return p;
    }
    while (p < end && *p != ',' && *p != '}' && *p != ']')
        p++;
    return p;
}

static JType type_at(const char *p)
{
    switch (*p) {
    case '{': return J_OBJECT;
    case '[': return J_ARRAY;
    case '"': return J_STRING;
    case 't': return J_TRUE;
    case 'f': return J_FALSE;
    case 'n': return J_NULL;
    default: return J_NUMBER;
    }
}

/* The escaped (canonical) form of a key, for byte comparison. */
static SlStr escaped_key(Arena *a, const SlStr *key)
{
    bool plain = true;
    for (uint32_t k = 0; k < key->len && plain; k++) {
        unsigned char c = (unsigned char)key->ptr[k];
        plain = c >= 0x20 && c != '"' && c != '\\';
    }
    if (plain)
        return *key;
    StrBuf b;
    strbuf_init(&b);
    jsonb_escape(&b, key->ptr, key->len);
    SlStr r = {arena_memdup(a, b.data + 1, b.len - 2), (uint32_t)(b.len - 2)};
    strbuf_free(&b);
    return r;
}

/* In the object at [p, end), the value of the key whose escaped form is
 * ekey; false if there is none. */
static bool object_get(const char *p, const char *end, const SlStr *ekey, SlStr *val)
{
    if (p >= end || *p != '{')
        return false;
    p++;
    while (p < end && *p == '"') {
        const char *ks = p + 1, *ke = skip_value(p, end) - 1;
        const char *vs = ke + 3; /* `": ` */
        if (vs >= end || ke[1] != ':' || ke[2] != ' ')
            return false;   /* not canonical text: never from our input */
        const char *ve = skip_value(vs, end);
        if (ve > end)
            return false;
        if ((uint32_t)(ke - ks) == ekey->len && memcmp(ks, ekey->ptr, ekey->len) == 0) {
            val->ptr = vs;
            val->len = (uint32_t)(ve - vs);
            return true;
        }
        p = ve;
        if (p < end && *p == ',')
            p += 2;
        else
            break;
    }
    return false;
}

static uint32_t array_len(const char *p, const char *end)
{
    if (p + 1 < end && p[1] == ']')
        return 0;
    uint32_t cnt = 0;
    p++;
    while (p < end) {
        p = skip_value(p, end);
        cnt++;
        if (p < end && *p == ',')
            p += 2;
        else
            break;
    }
    return cnt;
}

/* Element idx (negative: from the end) of the array at [p, end). */
static bool array_get(const char *p, const char *end, int64_t idx, SlStr *val)
{
    if (p >= end || *p != '[')
        return false;
    if (idx < 0) {
        idx += array_len(p, end);
        if (idx < 0)
            return false;
    }
    if (p + 1 < end && p[1] == ']')
        return false;
    p++;
    for (int64_t k = 0; p < end; k++) {
        const char *e = skip_value(p, end);
        if (e > end)
            return false;
        if (k == idx) {
            val->ptr = p;
            val->len = (uint32_t)(e - p);
            return true;
        }
        p = e;
        if (p < end && *p == ',')
            p += 2;
        else
            break;
    }
    return false;
}

/* ->> and #>>: a string's decoded text, null as SQL NULL, else the text. */
static bool as_text(Arena *a, const SlStr *v, SlStr *out)
{
    JType t = type_at(v->ptr);
    if (t == J_NULL)
        return false;
    if (t != J_STRING) {
        *out = *v;
        return true;
    }
    const char *p = v->ptr + 1, *end = v->ptr + v->len - 1;
    if (memchr(p, '\\', (size_t)(end - p)) == NULL) {
        out->ptr = p;
        out->len = (uint32_t)(end - p);
        return true;
    }
    JNode n;
    jsonb_tree_of(a, v, &n);
    out->ptr = n.str;
    out->len = n.len;
    return true;
}

/* --------------------------------------------------------------- -> ->> */

static int get_key(EvalCtx *cx, const Vector *args, Vector *out, const uint32_t *sel, uint32_t n,
                   bool text)
{
    FOR_SEL(sel, n, {
        const SlStr *j = &args[0].v.str[i];
        SlStr ek = escaped_key(cx->arena, &args[1].v.str[i]), v;
        if (!object_get(j->ptr, j->ptr + j->len, &ek, &v) ||
            (text && !as_text(cx->arena, &v, &v))) {
            out->nulls[i] = 1;
            continue;
        }
        out->v.str[i] = v;
    });
    return 0;
}

static int get_idx(EvalCtx *cx, const Vector *args, Vector *out, const uint32_t *sel, uint32_t n,
                   bool text)
{
    FOR_SEL(sel, n, {
        const SlStr *j = &args[0].v.str[i];
        SlStr v;
        int32_t idx = args[1].v.i32[i];
        JType t = type_at(j->ptr);
        if (t != J_ARRAY && t != J_OBJECT && (idx == 0 || idx == -1)) {
            /* a scalar is a one-element "raw scalar" array in PostgreSQL */
            v = *j;
            if (text && !as_text(cx->arena, &v, &v))
                out->nulls[i] = 1;
            else
                out->v.str[i] = v;
            continue;
        }
        if (!array_get(j->ptr, j->ptr + j->len, idx, &v) ||
            (text && !as_text(cx->arena, &v, &v))) {
            out->nulls[i] = 1;
            continue;
        }
        out->v.str[i] = v;
    });
    return 0;
}

KERNEL(k_jsonb_get_key) { return get_key(cx, args, out, sel, n, false); }
KERNEL(k_jsonb_get_key_text) { return get_key(cx, args, out, sel, n, true); }
KERNEL(k_jsonb_get_idx) { return get_idx(cx, args, out, sel, n, false); }
KERNEL(k_jsonb_get_idx_text) { return get_idx(cx, args, out, sel, n, true); }

/* ------------------------------------------------------------ #> and #>> */

typedef struct PathElem {
    SlStr s;
    bool  null;
} PathElem;

/* A one-dimensional text[] literal ('{a,b,"c d"}') into its elements, as
 * array_in reads it.  Returns the count, or -1 with err set. */
static int parse_text_array(Arena *a, const SlStr *lit, PathElem **out, SlError *err)
{
    const char *p = lit->ptr, *end = p + lit->len;
    while (p < end && (*p == ' ' || *p == '\t' || *p == '\n' || *p == '\r'))
        p++;
    if (p >= end || *p != '{') {
        sl_error(err, ERRCODE_INVALID_TEXT_REPRESENTATION, "malformed array literal: \"%.*s\"",
                 (int)SL_MIN(lit->len, 1000), lit->ptr);
        sl_error_detail(err, "Array value must start with \"{\" or dimension information.");
        return -1;
    }
    p++;
    int cap = 8, cnt = 0;
    PathElem *el = ARENA_ARRAY(a, PathElem, cap);
    StrBuf b;
    strbuf_init(&b);
    bool expect_elem = true, done = false;
    while (p < end && !done) {
        while (p < end && (*p == ' ' || *p == '\t' || *p == '\n' || *p == '\r'))
            p++;
        if (p >= end)
            break;
        if (*p == '}' && (cnt == 0 || !expect_elem)) {
            p++;
            done = true;
            break;
        }
        if (!expect_elem) {
            if (*p != ',')
                goto malformed;
            p++;
            expect_elem = true;
            continue;
        }
        strbuf_reset(&b);
        bool quoted = false, any = false;
        if (*p == '"') {
            quoted = true;
            p++;
            while (p < end && *p != '"') {
                if (*p == '\\' && p + 1 < end)
                    p++;
                strbuf_putc(&b, *p++);
            }
            if (p >= end)
                goto malformed;
            p++;
        } else {
            while (p < end && *p != ',' && *p != '}') {
                if (*p == '"' || *p == '{')
                    goto malformed;
                if (*p == '\\' && p + 1 < end)
                    p++;
                strbuf_putc(&b, *p++);
                any = true;
            }
            while (b.len > 0 && (b.data[b.len - 1] == ' ' || b.data[b.len - 1] == '\t' ||
                                 b.data[b.len - 1] == '\n' || b.data[b.len - 1] == '\r'))
                b.len--;
            if (!any || b.len == 0)
                goto malformed;
        }
        if (cnt == cap) {
            PathElem *g = ARENA_ARRAY(a, PathElem, cap * 2);
            memcpy(g, el, sizeof(PathElem) * (size_t)cap);
            el = g;
            cap *= 2;
        }
        el[cnt].null = !quoted && b.len == 4 && strncasecmp(b.data, "null", 4) == 0;
        el[cnt].s.ptr = b.len ? arena_memdup(a, b.data, b.len) : "";
        el[cnt].s.len = (uint32_t)b.len;
        cnt++;
        expect_elem = false;
    }
    while (p < end && (*p == ' ' || *p == '\t' || *p == '\n' || *p == '\r'))
        p++;
    if (!done || p != end)
        goto malformed;
    strbuf_free(&b);
    *out = el;
    return cnt;
malformed:
    strbuf_free(&b);
    sl_error(err, ERRCODE_INVALID_TEXT_REPRESENTATION, "malformed array literal: \"%.*s\"",
             (int)SL_MIN(lit->len, 1000), lit->ptr);
    if (p >= end)
        sl_error_detail(err, "Unexpected end of input.");
    else
        sl_error_detail(err, "Unexpected \"%c\" character.", *p);
    return -1;
}

/* Parses an integer path step as PostgreSQL does (strtol, whole string). */
static bool path_index(const SlStr *s, int64_t *out)
{
    char buf[32];
    if (s->len == 0 || s->len >= sizeof(buf))
        return false;
    memcpy(buf, s->ptr, s->len);
    buf[s->len] = '\0';
    char *e;
    long v = strtol(buf, &e, 10);
    if (*e != '\0' || e == buf || v > INT32_MAX || v < INT32_MIN)
        return false;
    *out = v;
    return true;
}

static int get_path(EvalCtx *cx, const Vector *args, Vector *out, const uint32_t *sel, uint32_t n,
                    bool text)
{
    FOR_SEL(sel, n, {
        PathElem *path;
        int np = parse_text_array(cx->arena, &args[1].v.str[i], &path, cx->err);
        if (np < 0)
            return -1;
        SlStr v = args[0].v.str[i];
        bool found = true;
        for (int k = 0; k < np && found; k++) {
            if (path[k].null) {
                found = false;
                break;
            }
            const char *p = v.ptr, *end = v.ptr + v.len;
            if (*p == '{') {
                SlStr ek = escaped_key(cx->arena, &path[k].s);
                found = object_get(p, end, &ek, &v);
            } else if (*p == '[') {
                int64_t idx;
                found = path_index(&path[k].s, &idx) && array_get(p, end, idx, &v);
            } else {
                found = false;
            }
        }
        if (found && np == 0 && !text) {
            /* an empty path is the value itself */
        }
        if (!found || (text && !as_text(cx->arena, &v, &v))) {
            out->nulls[i] = 1;
            continue;
        }
        out->v.str[i] = v;
    });
    return 0;
}

KERNEL(k_jsonb_path) { return get_path(cx, args, out, sel, n, false); }
KERNEL(k_jsonb_path_text) { return get_path(cx, args, out, sel, n, true); }

/* ------------------------------------------------------------------ ? */

/* j ? key: an object's key, an array's string element, or the string
 * itself. */
static bool key_exists(Arena *a, const SlStr *j, const SlStr *key)
{
    const char *p = j->ptr, *end = p + j->len;
    SlStr ek = escaped_key(a, key), v;
    if (*p == '{')
        return object_get(p, end, &ek, &v);
    if (*p == '[') {
        for (int64_t k = 0; array_get(p, end, k, &v); k++)
            if (v.len == ek.len + 2 && v.ptr[0] == '"' && memcmp(v.ptr + 1, ek.ptr, ek.len) == 0)
                return true;
        return false;
    }
    return *p == '"' && j->len == ek.len + 2 && memcmp(p + 1, ek.ptr, ek.len) == 0;
}

KERNEL(k_jsonb_exists)
{
    SL_UNUSED(e);
    FOR_SEL(sel, n, { out->v.b[i] = key_exists(cx->arena, &args[0].v.str[i], &args[1].v.str[i]); });
    return 0;
}

/* ?| (any) and ?& (all) of a text[]'s keys; its NULL elements are skipped,
 * as PostgreSQL does. */
static int exists_rows(EvalCtx *cx, const Vector *args, Vector *out, const uint32_t *sel,
                       uint32_t n, bool all)
{
    FOR_SEL(sel, n, {
        ArrayIter it;
        ArrayElem el;
        bool r = all;
        array_iter_init(&it, &args[1].v.str[i]);
        while (array_next(&it, &el)) {
            if (el.null)
                continue;
            SlStr key = {el.data, (uint32_t)el.len};
            if (key_exists(cx->arena, &args[0].v.str[i], &key) != all) {
                r = !all;
                break;
            }
        }
        out->v.b[i] = r;
    });
    return 0;
}

KERNEL(k_jsonb_exists_any) { SL_UNUSED(e); return exists_rows(cx, args, out, sel, n, false); }
KERNEL(k_jsonb_exists_all) { SL_UNUSED(e); return exists_rows(cx, args, out, sel, n, true); }

/* ------------------------------------------------------------ containment */

#define JSONB_CMP(NAME, OP)                                                          \
    KERNEL(k_##NAME##_jsonb)                                                         \
    {                                                                                \
        FOR_SEL(sel, n, {                                                            \
            const SlStr *x = &args[0].v.str[i], *y = &args[1].v.str[i];              \
            int c;                                                                   \
            if (x->len == y->len && memcmp(x->ptr, y->ptr, x->len) == 0) {           \
                c = 0;                                                               \
            } else {                                                                 \
                JNode a, b;                                                          \
                jsonb_tree_of(cx->arena, x, &a);                                           \
                jsonb_tree_of(cx->arena, y, &b);                                           \
                c = jsonb_cmp_tree(&a, &b);                                              \
            }                                                                        \
            out->v.b[i] = c OP 0;                                                    \
        });                                                                          \
        return 0;                                                                    \
    }
JSONB_CMP(eq, ==)
JSONB_CMP(ne, !=)
JSONB_CMP(lt, <)
JSONB_CMP(le, <=)
JSONB_CMP(gt, >)
JSONB_CMP(ge, >=)

static bool is_scalar(const JNode *n)
{
    return n->type != J_ARRAY && n->type != J_OBJECT;
}

static bool scalar_eq(const JNode *a, const JNode *b)
{
    return jsonb_type_rank(a->type) == jsonb_type_rank(b->type) && jsonb_scalar_cmp(a, b) == 0;
}

/* JsonbDeepContains */
static bool contains(const JNode *a, const JNode *b)
{
    if (a->type != b->type && !(is_scalar(a) && is_scalar(b)))
        return false;
    if (is_scalar(a))
        return scalar_eq(a, b);
    if (a->type == J_OBJECT) {
        if (b->n > a->n)
            return false;
        for (uint32_t k = 0; k < b->n; k++) {
            const JNode *key = &b->items[2 * k], *bv = &b->items[2 * k + 1];
            const JNode *av = NULL;
            for (uint32_t m = 0; m < a->n; m++) {
                if (jsonb_key_cmp(&a->items[2 * m], key) == 0) {
                    av = &a->items[2 * m + 1];
                    break;
                }
            }
            if (av == NULL)
                return false;
            if (is_scalar(av) != is_scalar(bv) || (!is_scalar(av) && av->type != bv->type))
                return false;
            if (!contains(av, bv))
                return false;
        }
        return true;
    }
    /* arrays: each element of b is in a (scalars equal, containers contained) */
    for (uint32_t k = 0; k < b->n; k++) {
        const JNode *bv = &b->items[k];
        bool found = false;
        for (uint32_t m = 0; m < a->n && !found; m++) {
            const JNode *av = &a->items[m];
            if (is_scalar(bv))
                found = is_scalar(av) && scalar_eq(av, bv);
            else
                found = av->type == bv->type && contains(av, bv);
        }
        if (!found)
            return false;
    }
    return true;
}

/* jsonb_contains at the top: a raw scalar is a one-element array, which an
 * array can contain (but not the other way round), and an object contains
 * no scalar */
static bool top_contains(const JNode *a, const JNode *b)
{
    if (is_scalar(b) && a->type == J_ARRAY) {
        for (uint32_t m = 0; m < a->n; m++)
            if (is_scalar(&a->items[m]) && scalar_eq(&a->items[m], b))
                return true;
        return false;
    }
    /* a raw scalar contains only an equal raw scalar, never an array */
    if (is_scalar(a) && !is_scalar(b))
        return false;
    return contains(a, b);
}

KERNEL(k_jsonb_contains)
{
    FOR_SEL(sel, n, {
        JNode a, b;
        jsonb_tree_of(cx->arena, &args[0].v.str[i], &a);
        jsonb_tree_of(cx->arena, &args[1].v.str[i], &b);
        out->v.b[i] = top_contains(&a, &b);
    });
    return 0;
}

KERNEL(k_jsonb_contained)
{
    FOR_SEL(sel, n, {
        JNode a, b;
        jsonb_tree_of(cx->arena, &args[0].v.str[i], &a);
        jsonb_tree_of(cx->arena, &args[1].v.str[i], &b);
        out->v.b[i] = top_contains(&b, &a);
    });
    return 0;
}

/* ------------------------------------------------------------- functions */

KERNEL(k_jsonb_typeof)
{
    static const char *const names[] = {"null", "boolean", "boolean", "number", "string",
                                        "array", "object"};
    FOR_SEL(sel, n, {
        const char *t = names[type_at(args[0].v.str[i].ptr)];
        out->v.str[i].ptr = t;
        out->v.str[i].len = (uint32_t)strlen(t);
    });
    return 0;
}

KERNEL(k_jsonb_array_length)
{
    FOR_SEL(sel, n, {
        const SlStr *j = &args[0].v.str[i];
        JType t = type_at(j->ptr);
        if (t == J_OBJECT)
            return sl_error(cx->err, ERRCODE_INVALID_PARAMETER_VALUE,
                            "cannot get array length of a non-array");
        if (t != J_ARRAY)
            return sl_error(cx->err, ERRCODE_INVALID_PARAMETER_VALUE,
                            "cannot get array length of a scalar");
        out->v.i32[i] = (int32_t)array_len(j->ptr, j->ptr + j->len);
    });
    return 0;
}

/* jsonb || jsonb: objects merge (right wins), anything else concatenates as
 * arrays, a scalar counting as a one-element array. */
KERNEL(k_jsonb_concat)
{
    FOR_SEL(sel, n, {
        JNode a, b, r;
        jsonb_tree_of(cx->arena, &args[0].v.str[i], &a);
        jsonb_tree_of(cx->arena, &args[1].v.str[i], &b);
        memset(&r, 0, sizeof(r));
        if (a.type == J_OBJECT && b.type == J_OBJECT) {
            r.type = J_OBJECT;
            r.items = ARENA_ARRAY(cx->arena, JNode, 2 * (a.n + b.n) + 2);
            memcpy(r.items, a.items, sizeof(JNode) * 2 * a.n);
            memcpy(r.items + 2 * a.n, b.items, sizeof(JNode) * 2 * b.n);
            r.n = jsonb_sort_pairs(cx->arena, r.items, a.n + b.n);
        } else {
            const JNode *parts[2] = {&a, &b};
            uint32_t cnt = 0;
            for (int k = 0; k < 2; k++)
                cnt += parts[k]->type == J_ARRAY ? parts[k]->n : 1;
            r.type = J_ARRAY;
            r.items = ARENA_ARRAY(cx->arena, JNode, cnt + 1);
            for (int k = 0; k < 2; k++) {
                if (parts[k]->type == J_ARRAY) {
                    memcpy(r.items + r.n, parts[k]->items, sizeof(JNode) * parts[k]->n);
                    r.n += parts[k]->n;
                } else {
                    r.items[r.n++] = *parts[k];
                }
            }
        }
        out->v.str[i] = jsonb_str_of(cx->arena, &r);
    });
    return 0;
}

/* jsonb - text: removes a key from an object or matching strings from an
 * array. */
KERNEL(k_jsonb_delete_key)
{
    FOR_SEL(sel, n, {
        JNode a;
        const SlStr *key = &args[1].v.str[i];
        jsonb_tree_of(cx->arena, &args[0].v.str[i], &a);
        if (is_scalar(&a))
            return sl_error(cx->err, ERRCODE_INVALID_PARAMETER_VALUE,
                            "cannot delete from scalar");
        uint32_t m = 0;
        uint32_t per = a.type == J_OBJECT ? 2 : 1;
        for (uint32_t k = 0; k < a.n; k++) {
            const JNode *it = &a.items[per * k];
            if (it->type == J_STRING && it->len == key->len &&
                memcmp(it->str, key->ptr, key->len) == 0)
                continue;
            memmove(&a.items[per * m], &a.items[per * k], sizeof(JNode) * per);
            m++;
        }
        a.n = m;
        out->v.str[i] = jsonb_str_of(cx->arena, &a);
    });
    return 0;
}

/* ----------------------------------------------------------------- casts */

static int cannot_cast(EvalCtx *cx, JType t, const char *tname)
{
    static const char *const names[] = {"null", "boolean", "boolean", "numeric", "string",
                                        "array", "object"};
    return sl_error(cx->err, ERRCODE_INVALID_PARAMETER_VALUE, "cannot cast jsonb %s to type %s",
                    names[t], tname);
}

static int jsonb_num(EvalCtx *cx, const SlStr *j, const char *tname, SlNumeric *out)
{
    JType t = type_at(j->ptr);
    if (t != J_NUMBER)
        return cannot_cast(cx, t, tname);
    num_parse(cx->arena, j->ptr, j->len, out);
    return 0;
}

KERNEL(c_jsonb_numeric)
{
    FOR_SEL(sel, n, {
        if (jsonb_num(cx, &args[0].v.str[i], "numeric", &out->v.num[i]) < 0)
            return -1;
        if (e->type.typmod >= 0 &&
            num_apply_typmod(cx->arena, &out->v.num[i], e->type.typmod, &out->v.num[i],
                             cx->err) < 0)
            return -1;
    });
    return 0;
}

#define JSONB_INT_CAST(NAME, F, CT, LO, HI, TNAME)                                   \
    KERNEL(NAME)                                                                     \
    {                                                                                \
        FOR_SEL(sel, n, {                                                            \
            SlNumeric x;                                                             \
            int64_t v;                                                               \
            if (jsonb_num(cx, &args[0].v.str[i], TNAME, &x) < 0)                     \
                return -1;                                                           \
            if (num_to_int64(&x, &v) < 0 || v < (LO) || v > (HI))                    \
                return sl_error(cx->err, ERRCODE_NUMERIC_VALUE_OUT_OF_RANGE,         \
                                "%s out of range", TNAME);                           \
            out->v.F[i] = (CT)v;                                                     \
        });                                                                          \
        return 0;                                                                    \
    }

JSONB_INT_CAST(c_jsonb_int2, i16, int16_t, INT16_MIN, INT16_MAX, "smallint")
JSONB_INT_CAST(c_jsonb_int4, i32, int32_t, INT32_MIN, INT32_MAX, "integer")
JSONB_INT_CAST(c_jsonb_int8, i64, int64_t, INT64_MIN, INT64_MAX, "bigint")

KERNEL(c_jsonb_float8)
{
    FOR_SEL(sel, n, {
        SlNumeric x;
        if (jsonb_num(cx, &args[0].v.str[i], "double precision", &x) < 0)
            return -1;
        out->v.f64[i] = num_to_double(&x);
    });
    return 0;
}

KERNEL(c_jsonb_float4)
{
    FOR_SEL(sel, n, {
        SlNumeric x;
        if (jsonb_num(cx, &args[0].v.str[i], "real", &x) < 0)
            return -1;
        out->v.f32[i] = (float)num_to_double(&x);
    });
    return 0;
}

KERNEL(c_jsonb_bool)
{
    FOR_SEL(sel, n, {
        JType t = type_at(args[0].v.str[i].ptr);
        if (t != J_TRUE && t != J_FALSE)
            return cannot_cast(cx, t, "boolean");
        out->v.b[i] = t == J_TRUE;
    });
    return 0;
}

/* ------------------------------------------------- keys for the executor */

/* ---------------------------------------------------------------- sets */

/* jsonb_array_elements(_text) and jsonb_object_keys: it->s is the array
 * or object (want), it->pos the next element's first byte (it->done:
 * none); 22023 for anything else, in PostgreSQL's words. */
static int walk_start(EvalCtx *cx, const SlStr *j, ExSrfIter *it, JType want)
{
    JType t = type_at(j->ptr);
    if (t != want && want == J_ARRAY)
        return sl_error(cx->err, ERRCODE_INVALID_PARAMETER_VALUE,
                        "cannot extract elements from %s",
                        t == J_OBJECT ? "an object" : "a scalar");
    if (t != want)
        return sl_error(cx->err, ERRCODE_INVALID_PARAMETER_VALUE,
                        "cannot call jsonb_object_keys on %s",
                        t == J_ARRAY ? "an array" : "a scalar");
    it->s = *j;
    it->pos = 1;
    it->done = j->len < 2 || j->ptr[1] == ']' || j->ptr[1] == '}';
    return 0;
}

static int elements_start(EvalCtx *cx, const Expr *e, const Vector *args, uint32_t row,
                          ExSrfIter *it)
{
    SL_UNUSED(e);
    return walk_start(cx, &args[0].v.str[row], it, J_ARRAY);
}

static int keys_start(EvalCtx *cx, const Expr *e, const Vector *args, uint32_t row,
                      ExSrfIter *it)
{
    SL_UNUSED(e);
    return walk_start(cx, &args[0].v.str[row], it, J_OBJECT);
}

/* The value at it->pos (an element, or a key and then its value), and
 * it->pos moved past it and its ", " separator. */
static SlStr next_item(ExSrfIter *it, bool key)
{
    const char *p = it->s.ptr + it->pos, *end = it->s.ptr + it->s.len;
    const char *ve = skip_value(p, end);
    SlStr v = {p, (uint32_t)(ve - p)};
    if (key) /* `"k": value` */
        ve = skip_value(ve + 2, end);
    if (ve < end && *ve == ',')
        it->pos = (size_t)(ve + 2 - it->s.ptr);
    else
        it->done = true;
    return v;
}

static int elements_next(EvalCtx *cx, ExSrfIter *it, Vector *out, uint32_t at)
{
    SL_UNUSED(cx);
    if (it->done)
        return 0;
    out->v.str[at] = next_item(it, false);
    return 1;
}

static int elements_text_next(EvalCtx *cx, ExSrfIter *it, Vector *out, uint32_t at)
{
    if (it->done)
        return 0;
    SlStr v = next_item(it, false);
    if (!as_text(cx->arena, &v, &out->v.str[at]))
        out->nulls[at] = 1;
    return 1;
}

static int keys_next(EvalCtx *cx, ExSrfIter *it, Vector *out, uint32_t at)
{
    if (it->done)
        return 0;
    SlStr k = next_item(it, true);
    as_text(cx->arena, &k, &out->v.str[at]);
    return 1;
}

static int each_of(EvalCtx *cx, const Vector *args, uint32_t row, ExSrfIter *it,
                   const char *fn)
{
    const SlStr *j = &args[0].v.str[row];
    if (type_at(j->ptr) != J_OBJECT)
        return sl_error(cx->err, ERRCODE_INVALID_PARAMETER_VALUE,
                        "cannot call %s on a non-object", fn);
    return walk_start(cx, j, it, J_OBJECT);
}

static int each_start(EvalCtx *cx, const Expr *e, const Vector *args, uint32_t row,
                      ExSrfIter *it)
{
    SL_UNUSED(e);
    return each_of(cx, args, row, it, "jsonb_each");
}

static int each_text_start(EvalCtx *cx, const Expr *e, const Vector *args, uint32_t row,
                           ExSrfIter *it)
{
    SL_UNUSED(e);
    return each_of(cx, args, row, it, "jsonb_each_text");
}

/* jsonb_each(_text): the next key and its value (as jsonb, or as text). */
static int each_rows(EvalCtx *cx, ExSrfIter *it, Vector *out, uint32_t at, bool text)
{
    if (it->done)
        return 0;
    const char *p = it->s.ptr + it->pos, *end = it->s.ptr + it->s.len;
    const char *ke = skip_value(p, end);
    SlStr k = {p, (uint32_t)(ke - p)};
    SlStr v = {ke + 2, (uint32_t)(skip_value(ke + 2, end) - (ke + 2))};
    next_item(it, true);
    as_text(cx->arena, &k, &out[0].v.str[at]);
    out[1].nulls[at] = 0;
    if (!text)
        out[1].v.str[at] = v;
    else if (!as_text(cx->arena, &v, &out[1].v.str[at]))
        out[1].nulls[at] = 1;
    return 1;
}

static int each_next(EvalCtx *cx, ExSrfIter *it, Vector *out, uint32_t at)
{
    return each_rows(cx, it, out, at, false);
}

static int each_text_next(EvalCtx *cx, ExSrfIter *it, Vector *out, uint32_t at)
{
    return each_rows(cx, it, out, at, true);
}

const ExSrfFns fn_srf_jsonb_each = {each_start, each_next, NULL, 2, {"key", "value"},
                                    {TYPE_TEXT, TYPE_JSONB}};
const ExSrfFns fn_srf_jsonb_each_text = {each_text_start, each_text_next, NULL, 2, {"key", "value"},
                                         {TYPE_TEXT, TYPE_TEXT}};

const ExSrfFns fn_srf_jsonb_elements = {elements_start, elements_next, NULL, 0, {NULL, NULL}, {0, 0}};
const ExSrfFns fn_srf_jsonb_elements_text = {elements_start, elements_text_next, NULL, 0, {NULL, NULL}, {0, 0}};
const ExSrfFns fn_srf_jsonb_object_keys = {keys_start, keys_next, NULL, 0, {NULL, NULL}, {0, 0}};

/* --------------------------------------------------- building jsonb values */

/* Appends row i of v (NULL: null) as PostgreSQL's to_jsonb writes it:
 * numbers as JSON numbers (NaN and the infinities as strings), booleans,
 * jsonb as it is, arrays element by element, dates and timestamps in
 * ISO 8601 (JsonEncodeDateTime: a T, a zone as +hh:mm), everything else
 * as its text form in a JSON string.  The caller reads the text back
 * with jsonb_parse, which makes it canonical. */
static void json_append(Arena *a, const Vector *v, uint32_t i, StrBuf *b)
{
    if (vector_is_null(v, i)) {
        strbuf_puts(b, "null");
        return;
    }
    StrBuf t;
    switch (v->type.id) {
    case TYPE_BOOL:
        strbuf_puts(b, v->v.b[i] ? "true" : "false");
        return;
    case TYPE_JSONB:
        strbuf_append(b, v->v.str[i].ptr, v->v.str[i].len);
        return;
    case TYPE_ARRAY: {
        Vector el;
        array_to_vector(a, type_elem(v->type), &v->v.str[i], &el);
        strbuf_putc(b, '[');
        for (uint32_t k = 0; k < el.len; k++) {
            if (k)
                strbuf_puts(b, ", ");
            json_append(a, &el, k, b);
        }
        strbuf_putc(b, ']');
        return;
    }
    default:
        break;
    }
    strbuf_init(&t);
    value_format_text(v, i, &t);
    const char *s = t.data ? t.data : "";
    switch (v->type.id) {
    case TYPE_INT2:
    case TYPE_INT4:
    case TYPE_INT8:
    case TYPE_NUMERIC:
    case TYPE_FLOAT4:
    case TYPE_FLOAT8:
        if (strcmp(s, "NaN") == 0 || strstr(s, "Infinity") != NULL)
            jsonb_escape(b, s, (uint32_t)t.len);
        else
            strbuf_append(b, s, t.len);
        break;
    case TYPE_TIMESTAMP:
    case TYPE_TIMESTAMPTZ: {
        /* "2024-01-01 10:00:00+05:30" -> "2024-01-01T10:00:00+05:30" */
        char *d = t.data;
        char *sp = d != NULL && isdigit((unsigned char)d[0]) ? strchr(d, ' ') : NULL;
        if (sp != NULL)
            *sp = 'T';
        if (sp != NULL && v->type.id == TYPE_TIMESTAMPTZ) {
            char *z = strpbrk(sp, "+-");
            if (z != NULL && strlen(z) == 3) {
                strbuf_puts(&t, ":00");
            }
        }
        jsonb_escape(b, t.data, (uint32_t)t.len);
        break;
    }
    default:
        jsonb_escape(b, s, (uint32_t)t.len);
        break;
    }
    strbuf_free(&t);
}

/* The canonical jsonb of the JSON text in b, into *out (the batch's
 * arena): what to_jsonb and the builders return. */
static int json_finish(EvalCtx *cx, StrBuf *b, SlStr *out)
{
    return jsonb_parse(cx->arena, b->data ? b->data : "", b->len, out, -1, cx->err);
}

/* to_jsonb(anyelement) (array: false) and jsonb_build_array(VARIADIC
 * "any"), whose arguments are an array's elements. */
static int build_rows(EvalCtx *cx, const Expr *e, const Vector *args, Vector *out,
                      const uint32_t *sel, uint32_t n, bool array)
{
    StrBuf b;
    strbuf_init(&b);
    int rc = 0;
    FOR_SEL(sel, n, {
        if (rc == 0) {
            strbuf_reset(&b);
            if (array)
                strbuf_putc(&b, '[');
            for (int k = 0; k < (array ? e->nargs : 1); k++) {
                if (k)
                    strbuf_puts(&b, ", ");
                json_append(cx->arena, &args[k], i, &b);
            }
            if (array) {
                strbuf_putc(&b, ']');
                out->nulls[i] = 0;
            }
            rc = json_finish(cx, &b, &out->v.str[i]);
        }
    });
    strbuf_free(&b);
    return rc;
}

KERNEL(k_to_jsonb) { return build_rows(cx, e, args, out, sel, n, false); }
KERNEL(k_jsonb_build_array) { return build_rows(cx, e, args, out, sel, n, true); }

/* jsonb_build_object(VARIADIC "any"): keys and values alternate; a key
 * is its value's text form (a boolean's true / false; NULL, arrays and
 * jsonb: 22023); the last of equal keys wins. */
KERNEL(k_jsonb_build_object)
{
    if (e->nargs % 2 != 0) {
        sl_error(cx->err, ERRCODE_INVALID_PARAMETER_VALUE,
                 "argument list must have even number of elements");
        sl_error_hint(cx->err, "The arguments of jsonb_build_object() must consist of "
                               "alternating keys and values.");
        return -1;
    }
    StrBuf b, key;
    strbuf_init(&b);
    strbuf_init(&key);
    int rc = 0;
    FOR_SEL(sel, n, {
        if (rc == 0) {
            strbuf_reset(&b);
            strbuf_putc(&b, '{');
            for (int k = 0; k + 1 < e->nargs && rc == 0; k += 2) {
                const Vector *kv = &args[k];
                if (vector_is_null(kv, i)) {
                    rc = sl_error(cx->err, ERRCODE_INVALID_PARAMETER_VALUE,
                                  "argument %d: key must not be null", k + 1);
                    break;
                }
                if (kv->type.id == TYPE_ARRAY || kv->type.id == TYPE_JSONB) {
                    rc = sl_error(cx->err, ERRCODE_INVALID_PARAMETER_VALUE,
                                  "key value must be scalar, not array, composite, or json");
                    break;
                }
                if (k)
                    strbuf_puts(&b, ", ");
                strbuf_reset(&key);
                if (kv->type.id == TYPE_BOOL)   /* its JSON form, not t / f */
                    strbuf_puts(&key, kv->v.b[i] ? "true" : "false");
                else
                    value_format_text(kv, i, &key);
                jsonb_escape(&b, key.data ? key.data : "", (uint32_t)key.len);
                strbuf_puts(&b, ": ");
                json_append(cx->arena, &args[k + 1], i, &b);
            }
            strbuf_putc(&b, '}');
            out->nulls[i] = 0;
            if (rc == 0)
                rc = json_finish(cx, &b, &out->v.str[i]);
        }
    });
    strbuf_free(&b);
    strbuf_free(&key);
    return rc;
}

/* ------------------------------------------------ jsonb_strip_nulls, pretty */

/* n without the object fields whose value is null, at every depth (array
 * elements stay), in arena a. */
static void strip_nulls(Arena *a, JNode *n)
{
    if (n->type == J_ARRAY) {
        for (uint32_t k = 0; k < n->n; k++)
            strip_nulls(a, &n->items[k]);
    } else if (n->type == J_OBJECT) {
        uint32_t m = 0;
        for (uint32_t k = 0; k < n->n; k++) {
            if (n->items[2 * k + 1].type == J_NULL)
                continue;
            n->items[2 * m] = n->items[2 * k];
            n->items[2 * m + 1] = n->items[2 * k + 1];
            strip_nulls(a, &n->items[2 * m + 1]);
            m++;
        }
        n->n = m;
    }
}

KERNEL(k_jsonb_strip_nulls)
{
    SL_UNUSED(e);
    FOR_SEL(sel, n, {
        JNode t;
        jsonb_tree_of(cx->arena, &args[0].v.str[i], &t);
        strip_nulls(cx->arena, &t);
        out->v.str[i] = jsonb_str_of(cx->arena, &t);
    });
    return 0;
}

static void indent(StrBuf *b, int level)
{
    for (int k = 0; k < level; k++)
        strbuf_puts(b, "    ");
}

/* JsonbToCStringIndent: four spaces a level, each element and field on a
 * line of its own, an empty container's brackets on two lines. */
static void pretty(StrBuf *b, const JNode *n, int level)
{
    if (n->type != J_ARRAY && n->type != J_OBJECT) {
        jsonb_serialize(b, n);
        return;
    }
    bool obj = n->type == J_OBJECT;
    strbuf_putc(b, obj ? '{' : '[');
    for (uint32_t k = 0; k < n->n; k++) {
        strbuf_puts(b, k ? ",\n" : "\n");
        indent(b, level + 1);
        if (obj) {
            jsonb_escape(b, n->items[2 * k].str, n->items[2 * k].len);
            strbuf_puts(b, ": ");
        }
        pretty(b, obj ? &n->items[2 * k + 1] : &n->items[k], level + 1);
    }
    strbuf_putc(b, '\n');
    indent(b, level);
    strbuf_putc(b, obj ? '}' : ']');
}

KERNEL(k_jsonb_pretty)
{
    SL_UNUSED(e);
    StrBuf b;
    strbuf_init(&b);
    FOR_SEL(sel, n, {
        JNode t;
        jsonb_tree_of(cx->arena, &args[0].v.str[i], &t);
        strbuf_reset(&b);
        pretty(&b, &t, 0);
        out->v.str[i].ptr = arena_memdup(cx->arena, b.data ? b.data : "", b.len);
        out->v.str[i].len = (uint32_t)b.len;
    });
    strbuf_free(&b);
    return 0;
}

/* ------------------------------------------------- jsonb_set, jsonb_insert */

typedef enum { SET_REPLACE, SET_CREATE, INSERT_BEFORE, INSERT_AFTER, SET_DELETE } SetOp;

typedef struct SetPath {
    EvalCtx  *cx;
    PathElem *path;
    int       len;
    JNode     newval;
    SetOp     op;
} SetPath;

/* PostgreSQL's setPathObject / setPathArray: the copy of n with the path
 * from `level` on set (or inserted), in the arena; a path that leaves the
 * value (a missing key before the last step, a scalar) leaves it as it
 * is.  0, or -1 with 22004 (a NULL step), 22P02 (an array step that is
 * not an integer), 22023 (jsonb_insert over an existing key). */
static int set_path(SetPath *sp, JNode *n, int level)
{
    Arena *a = sp->cx->arena;
    if (level >= sp->len)
        return 0;
    const PathElem *pe = &sp->path[level];
    if (pe->null)
        return sl_error(sp->cx->err, ERRCODE_NULL_VALUE_NOT_ALLOWED,
                        "path element at position %d is null", level + 1);
    if (n->type != J_OBJECT && n->type != J_ARRAY)
        return 0;
    bool last = level == sp->len - 1;
    bool create = sp->op != SET_REPLACE && sp->op != SET_DELETE;
    if (n->type == J_OBJECT) {
        for (uint32_t k = 0; k < n->n; k++) {
            JNode *key = &n->items[2 * k];
            if (key->len != pe->s.len || memcmp(key->str, pe->s.ptr, key->len) != 0)
                continue;
            if (!last)
                return set_path(sp, &n->items[2 * k + 1], level + 1);
            if (sp->op == SET_DELETE) {
                memmove(&n->items[2 * k], &n->items[2 * k + 2],
                        sizeof(JNode) * 2 * (n->n - k - 1));
                n->n--;
                return 0;
            }
            if (sp->op == INSERT_BEFORE || sp->op == INSERT_AFTER) {
                sl_error(sp->cx->err, ERRCODE_INVALID_PARAMETER_VALUE,
                         "cannot replace existing key");
                sl_error_hint(sp->cx->err,
                              "Try using the function jsonb_set to replace key value.");
                return -1;
            }
            n->items[2 * k + 1] = sp->newval;
            return 0;
        }
        if (!last || !create)
            return 0;
        JNode *items = ARENA_ARRAY(a, JNode, 2 * (size_t)n->n + 2);
        if (n->n > 0)
            memcpy(items, n->items, sizeof(JNode) * 2 * n->n);
        items[2 * n->n] = (JNode){J_STRING, pe->s.ptr, pe->s.len, 0, NULL};
        items[2 * n->n + 1] = sp->newval;
        n->items = items;
        n->n = jsonb_sort_pairs(a, items, n->n + 1);
        return 0;
    }
    int64_t idx;
    char buf[64];
    if (!path_index(&pe->s, &idx)) {
        snprintf(buf, sizeof(buf), "%.*s", (int)SL_MIN(pe->s.len, 60), pe->s.ptr);
        return sl_error(sp->cx->err, ERRCODE_INVALID_TEXT_REPRESENTATION,
                        "path element at position %d is not an integer: \"%s\"", level + 1,
                        buf);
    }
    int64_t cnt = n->n;
    bool prepend = false;
    if (idx < 0) {
        if (-idx > cnt)
            prepend = true;
        else
            idx += cnt;
    }
    if (!last) {
        if (!prepend && idx < cnt)
            return set_path(sp, &n->items[idx], level + 1);
        return 0;
    }
    if (!prepend && idx < cnt && sp->op == SET_DELETE) {
        memmove(&n->items[idx], &n->items[idx + 1], sizeof(JNode) * (size_t)(cnt - idx - 1));
        n->n--;
        return 0;
    }
    if (!prepend && idx < cnt && (sp->op == SET_REPLACE || sp->op == SET_CREATE)) {
        n->items[idx] = sp->newval;
        return 0;
    }
    if (!prepend && idx >= cnt && !create)
        return 0;
    if (prepend && !create)
        return 0;
    /* insert at: the front, the end, or before / after element idx */
    int64_t at = prepend ? 0 : idx >= cnt ? cnt : sp->op == INSERT_AFTER ? idx + 1 : idx;
    JNode *items = ARENA_ARRAY(a, JNode, (size_t)cnt + 1);
    if (at > 0)
        memcpy(items, n->items, sizeof(JNode) * (size_t)at);
    items[at] = sp->newval;
    if (cnt > at)
        memcpy(items + at + 1, n->items + at, sizeof(JNode) * (size_t)(cnt - at));
    n->items = items;
    n->n = (uint32_t)cnt + 1;
    return 0;
}

/* The elements of a text[] path (args[1] row i) in the arena. */
static int path_of(Arena *a, const SlStr *arr, PathElem **out)
{
    ArrayIter it;
    array_iter_init(&it, arr);
    PathElem *p = ARENA_ARRAY(a, PathElem, it.n > 0 ? (size_t)it.n : 1);
    ArrayElem el;
    int k = 0;
    while (array_next(&it, &el)) {
        p[k].null = el.null;
        p[k].s.ptr = el.null ? "" : el.data;
        p[k].s.len = el.null ? 0 : (uint32_t)el.len;
        k++;
    }
    *out = p;
    return k;
}

/* jsonb_set and jsonb_insert (op: their last argument decides), #-
 * (SET_DELETE) */
static int set_rows(EvalCtx *cx, const Expr *e, const Vector *args, Vector *out,
                    const uint32_t *sel, uint32_t n, SetOp op)
{
    FOR_SEL(sel, n, {
        SetPath sp = {cx, NULL, 0, {0}, op};
        bool flag = e->nargs > 3 ? args[3].v.b[i] != 0 : op == SET_CREATE;
        if (op == INSERT_BEFORE || op == INSERT_AFTER)
            sp.op = flag ? INSERT_AFTER : INSERT_BEFORE;
        else if (op != SET_DELETE)
            sp.op = flag ? SET_CREATE : SET_REPLACE;
        const SlStr *j = &args[0].v.str[i];
        if (j->len > 0 && j->ptr[0] != '{' && j->ptr[0] != '[')
            return sl_error(cx->err, ERRCODE_INVALID_PARAMETER_VALUE, "cannot %s path in scalar",
                            op == SET_DELETE ? "delete" : "set");
        sp.len = path_of(cx->arena, &args[1].v.str[i], &sp.path);
        JNode t;
        jsonb_tree_of(cx->arena, j, &t);
        if (op != SET_DELETE)
            jsonb_tree_of(cx->arena, &args[2].v.str[i], &sp.newval);
        if (sp.len > 0 && set_path(&sp, &t, 0) < 0)
            return -1;
        out->v.str[i] = sp.len > 0 ? jsonb_str_of(cx->arena, &t) : *j;
    });
    return 0;
}

/* jsonb_set(target, path text[], new [, create_missing]) */
KERNEL(k_jsonb_set) { return set_rows(cx, e, args, out, sel, n, SET_CREATE); }
/* jsonb_insert(target, path text[], new [, insert_after]) */
KERNEL(k_jsonb_insert) { return set_rows(cx, e, args, out, sel, n, INSERT_BEFORE); }
/* jsonb #- path text[]: the path's last step removed */
KERNEL(k_jsonb_delete_path) { return set_rows(cx, e, args, out, sel, n, SET_DELETE); }
