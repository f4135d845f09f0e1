/*
 * fuzz_types.c -- libFuzzer target for the input and output functions of
 * the types (value_parse_text / value_format_text; arrays of them too, and
 * array_recv's binary arrays) and the kernels that
 * read free-form text: to_timestamp / to_char templates, date_trunc and
 * extract units, jsonb paths, LIKE and SIMILAR TO patterns, encode /
 * decode; and the set-returning functions that read such text
 * (regexp_split_to_table, jsonb_array_elements, jsonb_object_keys), each
 * run to the end of its set.
 *
 *   LLVMFuzzerTestOneInput(data, size)
 *
 * The first byte picks what to run; the rest is split at the first NUL
 * into a value and a second argument (a template, unit, path or pattern).
 * A value that parses must print, and its printed form must parse again
 * to a value that prints the same (output is input's fixed point).
 * Everything lives in one arena destroyed at the end: LeakSanitizer sees
 * any leak; nothing may crash, overrun or hang.
 */
#include "functions/kernels.h"
#include "fuzz_input.h"

#include <stdio.h>
#include <stdlib.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static const SlTypeId types[] = {TYPE_DATE, TYPE_TIMESTAMP, TYPE_TIMESTAMPTZ, TYPE_INTERVAL,
                                 TYPE_JSONB, TYPE_BYTEA, TYPE_NUMERIC, TYPE_FLOAT8, TYPE_INT8,
                                 TYPE_BOOL};

static void text_vec(Arena *a, Vector *v, const char *s, size_t len)
{
    vector_init(v, a, sl_type(TYPE_TEXT), 1, true);
    v->v.str[0].ptr = s;
    v->v.str[0].len = (uint32_t)len;
}

/* Parses s as t, prints it, parses the print and prints that: the two
 * prints must agree. */
static void round_trip(Arena *a, SlType t, const char *s, size_t len)
{
    Vector v1, v2;
    SlError err;
    memset(&err, 0, sizeof(err));
    vector_init(&v1, a, t, 1, false);
    if (value_parse_text(a, t, s, len, &v1, 0, -1, &err) < 0) {
        sl_error_clear(&err);
        return;
    }
    StrBuf b1, b2;
    strbuf_init(&b1);
    strbuf_init(&b2);
    value_format_text(&v1, 0, &b1);
    vector_init(&v2, a, t, 1, false);
    if (value_parse_text(a, t, b1.data ? b1.data : "", b1.len, &v2, 0, -1, &err) < 0) {
        /* values at the very edge of a range may print past it (as in
         * PostgreSQL); anything else must read back */
        if (strcmp(err.sqlstate, ERRCODE_INTERVAL_FIELD_OVERFLOW) == 0 ||
            strcmp(err.sqlstate, ERRCODE_DATETIME_VALUE_OUT_OF_RANGE) == 0) {
            sl_error_clear(&err);
            strbuf_free(&b1);
            strbuf_free(&b2);
            return;
        }
        fprintf(stderr, "%s: its own output \"%s\" does not read back: %s\n", type_name(t.id),
                b1.data, err.message);
        abort();
    }
    value_format_text(&v2, 0, &b2);
    if (b1.len != b2.len || memcmp(b1.data, b2.data, b1.len) != 0) {
        fprintf(stderr, "%s: \"%s\" reads back as \"%s\"\n", type_name(t.id), b1.data, b2.data);
        abort();
    }
    strbuf_free(&b1);
    strbuf_free(&b2);
}

/* Runs a kernel of nargs arguments on one row and prints its value;
 * errors are fine. */
static Expr call_of(SlType ret, int nargs)
{
    Expr e;
    memset(&e, 0, sizeof(e));
    e.kind = EXPR_FUNC;
    e.type = ret;
    e.nargs = nargs;
    return e;
}

static void run_n(Arena *a, ExprFn fn, SlType ret, Vector *args, int nargs)
{
    SlError err;
    memset(&err, 0, sizeof(err));
    EvalCtx cx = {.arena = a, .err = &err};
    Expr e = call_of(ret, nargs);
    Vector out;
    vector_init(&out, a, ret, 1, true);
    if (fn(&cx, &e, args, &out, NULL, 1) == 0 && !vector_is_null(&out, 0)) {
        StrBuf b;
        strbuf_init(&b);
        value_format_text(&out, 0, &b);
        strbuf_free(&b);
    }
    sl_error_clear(&err);
}

static void run2(Arena *a, ExprFn fn, SlType ret, const Vector *x, const Vector *y)
{
    Vector args[2] = {*x, *y};
    run_n(a, fn, ret, args, 2);
}

static void run3(Arena *a, ExprFn fn, SlType ret, const Vector *x, const Vector *y,
                 const Vector *z)
{
    Vector args[3] = {*x, *y, *z};
    run_n(a, fn, ret, args, 3);
}

/* Runs a set-returning function over one row to the end of its set (at
 * most 10,000 values); errors are fine. */
static void run_srf(Arena *a, const ExSrfFns *f, SlType ret, const Vector *args, int nargs)
{
    SlError err;
    memset(&err, 0, sizeof(err));
    EvalCtx cx = {.arena = a, .err = &err};
    Expr e = call_of(ret, nargs);
    ExSrfIter it;
    memset(&it, 0, sizeof(it));
    Vector out[2];
    for (int c = 0; c < 2; c++)
        vector_init(&out[c], a, f->ncols > 0 ? sl_type(f->coltypes[c]) : ret, 1, true);
    if (f->start(&cx, &e, args, 0, &it) == 0)
        for (int k = 0; k < 10000 && f->next(&cx, &it, out, 0) == 1; k++)
            out[0].nulls[0] = out[1].nulls[0] = 0;
    if (f->end != NULL)
        f->end(&it);
    sl_error_clear(&err);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (size < 1 || size > 4096)
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
    SlError err;
    memset(&err, 0, sizeof(err));

    switch (op % 8) {
    case 0:
    case 1: {
        /* input and output of a type, an interval with a typmod too */
        SlType t = sl_type(types[(op / 8) % SL_ARRAY_LEN(types)]);
        round_trip(&a, t, s, len);
        /* the same text as an array of the type (array_in / array_out) */
        round_trip(&a, sl_array_type(t.id, -1), s, len);
        round_trip(&a, sl_array_type(TYPE_TEXT, -1), s, len);
        /* the bytes as a binary array (array_recv): one that is read
         * prints, and its print reads back to the same bytes */
        SlStr arr;
        SlType et = sl_type(op & 8 ? TYPE_TEXT : TYPE_INT4);
        if (array_recv(&a, et, s, (int32_t)len, &arr, 0, &err) == 0) {
            Vector av;
            vector_init(&av, &a, sl_array_type(et.id, -1), 1, false);
            av.v.str[0] = arr;
            StrBuf pb;
            strbuf_init(&pb);
            value_format_text(&av, 0, &pb);
            SlStr back;
            if (array_parse_text(&a, et, pb.data, pb.len, &back, -1, &err) < 0 ||
                back.len != arr.len || memcmp(back.ptr, arr.ptr, arr.len) != 0) {
                fprintf(stderr, "array_recv's array does not read back from \"%s\"\n",
                        pb.data);
                abort();
            }
            strbuf_free(&pb);
        }
        sl_error_clear(&err);
        if (t.id == TYPE_INTERVAL) {
            static const int32_t ranges[] = {1 << 2, 1 << 3, (1 << 10) | (1 << 11), 1 << 12,
                                             (1 << 11) | (1 << 12)};
            t.typmod = ranges[(op / 8) % SL_ARRAY_LEN(ranges)] << 16 | 0xFFFF;
            round_trip(&a, t, s, len);
        }
        break;
    }
    case 2:
        /* to_timestamp / to_date with a template, to_char with it */
        run2(&a, k_to_timestamp_fmt, sl_type(TYPE_TIMESTAMPTZ), &x, &y);
        run2(&a, k_to_date_fmt, sl_type(TYPE_DATE), &x, &y);
        {
            Vector ts;
            vector_init(&ts, &a, sl_type(TYPE_TIMESTAMP), 1, true);
            ts.v.i64[0] = (int64_t)(op * 1234567891LL) * 977;
            run2(&a, k_to_char_ts, sl_type(TYPE_TEXT), &ts, &x);
        }
        break;
    case 3: {
        /* units of date_trunc / extract / date_part over a parsed timestamp */
        Vector ts, iv;
        vector_init(&ts, &a, sl_type(TYPE_TIMESTAMP), 1, true);
        vector_init(&iv, &a, sl_type(TYPE_INTERVAL), 1, true);
        if (value_parse_text(&a, sl_type(TYPE_TIMESTAMP), s2, len2, &ts, 0, -1, &err) < 0) {
            sl_error_clear(&err);
            ts.v.i64[0] = (int64_t)op << 40;
        }
        iv.v.iv[0].usec = (int64_t)op * 3600000001LL;
        iv.v.iv[0].days = op - 100;
        iv.v.iv[0].months = op * 7 - 900;
        run2(&a, k_date_trunc_ts, sl_type(TYPE_TIMESTAMP), &x, &ts);
        run2(&a, k_extract_ts, sl_type(TYPE_NUMERIC), &x, &ts);
        run2(&a, k_extract_tstz, sl_type(TYPE_FLOAT8), &x, &ts);
        run2(&a, k_date_trunc_iv, sl_type(TYPE_INTERVAL), &x, &iv);
        run2(&a, k_extract_iv, sl_type(TYPE_NUMERIC), &x, &iv);
        break;
    }
    case 4: {
        /* jsonb operators: a document, then a key, an index or a path */
        Vector j, idx;
        vector_init(&j, &a, sl_type(TYPE_JSONB), 1, true);
        if (value_parse_text(&a, sl_type(TYPE_JSONB), s, len1, &j, 0, -1, &err) < 0) {
            sl_error_clear(&err);
            break;
        }
        vector_init(&idx, &a, sl_type(TYPE_INT4), 1, true);
        idx.v.i32[0] = (int32_t)(int8_t)op / 8;
        run2(&a, k_jsonb_get_key, sl_type(TYPE_JSONB), &j, &y);
        run2(&a, k_jsonb_get_key_text, sl_type(TYPE_TEXT), &j, &y);
        run2(&a, k_jsonb_get_idx_text, sl_type(TYPE_TEXT), &j, &idx);
        run2(&a, k_jsonb_path, sl_type(TYPE_JSONB), &j, &y);
        run2(&a, k_jsonb_path_text, sl_type(TYPE_TEXT), &j, &y);
        run2(&a, k_jsonb_exists, sl_type(TYPE_BOOL), &j, &y);
        run2(&a, k_jsonb_contains, sl_type(TYPE_BOOL), &j, &j);
        run2(&a, k_eq_jsonb, sl_type(TYPE_BOOL), &j, &j);
        run2(&a, k_jsonb_concat, sl_type(TYPE_JSONB), &j, &j);
        run2(&a, k_jsonb_delete_key, sl_type(TYPE_JSONB), &j, &y);
        run_srf(&a, &fn_srf_jsonb_elements, sl_type(TYPE_JSONB), &j, 1);
        run_srf(&a, &fn_srf_jsonb_elements_text, sl_type(TYPE_TEXT), &j, 1);
        run_srf(&a, &fn_srf_jsonb_object_keys, sl_type(TYPE_TEXT), &j, 1);
        run_srf(&a, &fn_srf_jsonb_each, sl_type(TYPE_TEXT), &j, 1);
        run_srf(&a, &fn_srf_jsonb_each_text, sl_type(TYPE_TEXT), &j, 1);
        break;
    }
    case 5:
        /* LIKE and ILIKE with a pattern, string functions with a second text */
        run2(&a, k_like, sl_type(TYPE_BOOL), &x, &y);
        run2(&a, k_ilike, sl_type(TYPE_BOOL), &x, &y);
        run2(&a, k_strpos, sl_type(TYPE_INT4), &x, &y);
        run2(&a, k_btrim2, sl_type(TYPE_TEXT), &x, &y);
        run2(&a, k_starts_with, sl_type(TYPE_BOOL), &x, &y);
        run2(&a, k_decode, sl_type(TYPE_BYTEA), &x, &y);
        run2(&a, k_encode, sl_type(TYPE_TEXT), &x, &y);
        /* SIMILAR TO and substring(... SIMILAR ...): the second text a
         * pattern, its first character the escape */
        {
            Vector esc;
            text_vec(&a, &esc, s2, len2 > 0 ? 1 : 0);
            run2(&a, k_similar, sl_type(TYPE_BOOL), &x, &y);
            run3(&a, k_similar, sl_type(TYPE_BOOL), &x, &y, &esc);
            run3(&a, k_substring_similar, sl_type(TYPE_TEXT), &x, &y, &esc);
            Vector xy[2] = {x, y};
            run_srf(&a, &fn_srf_regexp_split, sl_type(TYPE_TEXT), xy, 2);
        }
        break;
    case 6: {
        /* positional string functions with a number from the first byte */
        Vector k;
        vector_init(&k, &a, sl_type(TYPE_INT4), 1, true);
        k.v.i32[0] = (int32_t)(int8_t)op;
        run2(&a, k_left, sl_type(TYPE_TEXT), &x, &k);
        run2(&a, k_right, sl_type(TYPE_TEXT), &x, &k);
        run2(&a, k_substr2, sl_type(TYPE_TEXT), &x, &k);
        run2(&a, k_lpad2, sl_type(TYPE_TEXT), &x, &k);
        run2(&a, k_repeat, sl_type(TYPE_TEXT), &x, &k);
        break;
    }
    default: {
        /* AT TIME ZONE with a zone name */
        Vector ts;
        vector_init(&ts, &a, sl_type(TYPE_TIMESTAMPTZ), 1, true);
        ts.v.i64[0] = (int64_t)op * 86400000000LL * 365;
        run2(&a, k_timezone_tstz, sl_type(TYPE_TIMESTAMP), &x, &ts);
        run2(&a, k_timezone_ts, sl_type(TYPE_TIMESTAMPTZ), &x, &ts);
        break;
    }
    }
    sl_error_clear(&err);
    arena_destroy(&a);
    return 0;
}
