/*
 * fuzz_functions.c -- libFuzzer target for the functions issue 22 added:
 * the regular expression functions that return what groups captured
 * (regexp_match, regexp_matches, substring FROM, regexp_substr's subexpr)
 * and the array ones (regexp_split_to_array), uuid's input and output,
 * and jsonb_pretty / jsonb_strip_nulls / to_jsonb / jsonb_set.
 *
 *   LLVMFuzzerTestOneInput(data, size)
 *
 * The first byte picks what to run; the rest is split at the first NUL
 * into a subject and a pattern (or a document and a path).  Checks:
 * every text[] a function returns prints and reads back to the same
 * bytes; a match regexp_match finds is the one regexp_substr finds, and
 * each group it captured lies inside it; a uuid that parses prints as 36
 * characters that parse to the same bytes; jsonb_pretty's text and
 * to_jsonb(jsonb) read back as the same value, jsonb_strip_nulls is
 * idempotent.  Everything lives in one arena destroyed at the end:
 * LeakSanitizer sees any leak; nothing may crash, overrun or hang.
 */
#include "functions/kernels.h"
#include "fuzz_input.h"

#include <stdio.h>
#include <stdlib.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static void text_vec(Arena *a, Vector *v, const char *s, size_t len)
{
    vector_init(v, a, sl_type(TYPE_TEXT), 1, true);
    v->v.str[0].ptr = s;
    v->v.str[0].len = (uint32_t)len;
}

static void int_vec(Arena *a, Vector *v, int32_t x)
{
    vector_init(v, a, sl_type(TYPE_INT4), 1, true);
    v->v.i32[0] = x;
}

static void bool_vec(Arena *a, Vector *v, bool x)
{
    vector_init(v, a, sl_type(TYPE_BOOL), 1, true);
    v->v.b[0] = x;
}

/* Runs a kernel on one row: 0 with its value in *out (which may be NULL),
 * -1 on an error (cleared). */
static int run(Arena *a, ExprFn fn, SlType ret, Vector *args, int nargs, Vector *out)
{
    SlError err;
    memset(&err, 0, sizeof(err));
    EvalCtx cx = {.arena = a, .err = &err};
    Expr e;
    memset(&e, 0, sizeof(e));
    e.kind = EXPR_FUNC;
    e.type = ret;
    e.nargs = nargs;
    vector_init(out, a, ret, 1, true);
    int rc = fn(&cx, &e, args, out, NULL, 1);
    sl_error_clear(&err);
    return rc;
}

/* A text[] prints and reads back to the same bytes. */
static void check_array(Arena *a, const Vector *v)
{
    if (vector_is_null(v, 0))
        return;
    StrBuf b;
    strbuf_init(&b);
    value_format_text(v, 0, &b);
    SlError err;
    memset(&err, 0, sizeof(err));
    SlStr back;
    if (array_parse_text(a, sl_type(TYPE_TEXT), b.data ? b.data : "", b.len, &back, -1,
                         &err) < 0 ||
        back.len != v->v.str[0].len || memcmp(back.ptr, v->v.str[0].ptr, back.len) != 0) {
        fprintf(stderr, "text[] \"%s\" does not read back\n", b.data);
        abort();
    }
    strbuf_free(&b);
}

static void regex_ops(Arena *a, uint8_t op, Vector *x, Vector *y)
{
    Vector out, sub, flags;
    text_vec(a, &flags, op & 8 ? "i" : "", op & 8 ? 1 : 0);
    Vector args3[3] = {*x, *y, flags};
    if (run(a, k_regexp_match, sl_array_type(TYPE_TEXT, -1), args3, 3, &out) == 0 &&
        !vector_is_null(&out, 0)) {
        check_array(a, &out);
        /* the whole match is regexp_substr's; every group's text is in it */
        Vector s6[6];
        s6[0] = *x;
        s6[1] = *y;
        int_vec(a, &s6[2], 1);
        int_vec(a, &s6[3], 1);
        s6[4] = flags;
        int_vec(a, &s6[5], 0);
        if (run(a, k_regexp_substr, sl_type(TYPE_TEXT), s6, 6, &sub) == 0 &&
            vector_is_null(&sub, 0)) {
            fprintf(stderr, "regexp_match found a match regexp_substr did not\n");
            abort();
        }
        if (!vector_is_null(&sub, 0)) {
            ArrayIter it;
            ArrayElem el;
            array_iter_init(&it, &out.v.str[0]);
            const SlStr *m = &sub.v.str[0];
            while (array_next(&it, &el)) {
                if (el.null || it.n == 1)
                    continue;
                if ((size_t)el.len > m->len) {
                    fprintf(stderr, "a group is longer than its match\n");
                    abort();
                }
            }
        }
    }
    Vector args2[2] = {*x, *y};
    if (run(a, k_regexp_split_to_array, sl_array_type(TYPE_TEXT, -1), args2, 2, &out) == 0)
        check_array(a, &out);
    run(a, k_substring_regex, sl_type(TYPE_TEXT), args2, 2, &out);
    Vector k7[7];
    k7[0] = *x;
    k7[1] = *y;
    int_vec(a, &k7[2], 1);
    int_vec(a, &k7[3], 1 + (op >> 6));
    int_vec(a, &k7[4], op & 1);
    k7[5] = flags;
    int_vec(a, &k7[6], (op >> 4) & 3);
    run(a, k_regexp_instr, sl_type(TYPE_INT4), k7, 7, &out);
    /* regexp_matches with g, to the end of its set (at most 10,000) */
    SlError err;
    memset(&err, 0, sizeof(err));
    EvalCtx cx = {.arena = a, .err = &err};
    Expr e;
    memset(&e, 0, sizeof(e));
    e.nargs = 3;
    ExSrfIter it;
    memset(&it, 0, sizeof(it));
    Vector g;
    text_vec(a, &g, op & 8 ? "gi" : "g", op & 8 ? 2 : 1);
    Vector margs[3] = {*x, *y, g};
    vector_init(&out, a, sl_array_type(TYPE_TEXT, -1), 1, true);
    if (fn_srf_regexp_matches.start(&cx, &e, margs, 0, &it) == 0)
        for (int k = 0; k < 10000 && fn_srf_regexp_matches.next(&cx, &it, &out, 0) == 1; k++)
            check_array(a, &out);
    fn_srf_regexp_matches.end(&it);
    sl_error_clear(&err);
}

static void uuid_ops(Arena *a, const char *s, size_t len)
{
    SlError err;
    memset(&err, 0, sizeof(err));
    Vector v1, v2;
    vector_init(&v1, a, sl_type(TYPE_UUID), 1, false);
    if (value_parse_text(a, sl_type(TYPE_UUID), s, len, &v1, 0, -1, &err) < 0) {
        sl_error_clear(&err);
        return;
    }
    StrBuf b;
    strbuf_init(&b);
    value_format_text(&v1, 0, &b);
    vector_init(&v2, a, sl_type(TYPE_UUID), 1, false);
    if (b.len != 36 || v1.v.str[0].len != 16 ||
        value_parse_text(a, sl_type(TYPE_UUID), b.data, b.len, &v2, 0, -1, &err) < 0 ||
        memcmp(v1.v.str[0].ptr, v2.v.str[0].ptr, 16) != 0) {
        fprintf(stderr, "uuid \"%s\" does not read back\n", b.data);
        abort();
    }
    strbuf_free(&b);
}

static void jsonb_ops(Arena *a, uint8_t op, const char *s, size_t len, Vector *path)
{
    SlError err;
    memset(&err, 0, sizeof(err));
    Vector j, out, again;
    vector_init(&j, a, sl_type(TYPE_JSONB), 1, true);
    if (value_parse_text(a, sl_type(TYPE_JSONB), s, len, &j, 0, -1, &err) < 0) {
        sl_error_clear(&err);
        return;
    }
    /* jsonb_pretty's text reads back as the same value */
    if (run(a, k_jsonb_pretty, sl_type(TYPE_TEXT), &j, 1, &out) == 0) {
        SlStr back;
        if (jsonb_parse(a, out.v.str[0].ptr, out.v.str[0].len, &back, -1, &err) < 0 ||
            back.len != j.v.str[0].len || memcmp(back.ptr, j.v.str[0].ptr, back.len) != 0) {
            fprintf(stderr, "jsonb_pretty's text does not read back\n");
            abort();
        }
    }
    if (run(a, k_to_jsonb, sl_type(TYPE_JSONB), &j, 1, &out) == 0 &&
        (out.v.str[0].len != j.v.str[0].len ||
         memcmp(out.v.str[0].ptr, j.v.str[0].ptr, j.v.str[0].len) != 0)) {
        fprintf(stderr, "to_jsonb(jsonb) is not the value\n");
        abort();
    }
    if (run(a, k_jsonb_strip_nulls, sl_type(TYPE_JSONB), &j, 1, &out) == 0 &&
        run(a, k_jsonb_strip_nulls, sl_type(TYPE_JSONB), &out, 1, &again) == 0 &&
        (out.v.str[0].len != again.v.str[0].len ||
         memcmp(out.v.str[0].ptr, again.v.str[0].ptr, out.v.str[0].len) != 0)) {
        fprintf(stderr, "jsonb_strip_nulls is not idempotent\n");
        abort();
    }
    /* jsonb_set / jsonb_insert with the second text as a text[] path and
     * the document as the new value too */
    Vector parr;
    vector_init(&parr, a, sl_array_type(TYPE_TEXT, -1), 1, true);
    if (array_parse_text(a, sl_type(TYPE_TEXT), path->v.str[0].ptr, path->v.str[0].len,
                         &parr.v.str[0], -1, &err) < 0) {
        sl_error_clear(&err);
        return;
    }
    Vector flag;
    bool_vec(a, &flag, op & 16);
    Vector sargs[4] = {j, parr, j, flag};
    run(a, k_jsonb_set, sl_type(TYPE_JSONB), sargs, 4, &out);
    run(a, k_jsonb_insert, sl_type(TYPE_JSONB), sargs, 4, &out);
    sl_error_clear(&err);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (size < 1 || size > 1024)
        return 0;
    Arena a;
    arena_init(&a, 0);
    FuzzInput in = fuzz_input(data, size);
    uint8_t op = in.op;
    const char *s = in.s, *s2 = in.s2;
    size_t len = in.len, len1 = in.len1, len2 = in.len2;
    Vector x, y;
    text_vec(&a, &x, s, len1);
    text_vec(&a, &y, s2, len2);
    switch (op % 4) {
    case 0:
    case 1:
        /* short subjects and patterns: a dissection tries each split */
        if (len1 <= 256 && len2 <= 64)
            regex_ops(&a, op, &x, &y);
        break;
    case 2:
        uuid_ops(&a, s, len);
        break;
    default:
        jsonb_ops(&a, op, s, len1, &y);
        break;
    }
    arena_destroy(&a);
    return 0;
}
