/*
 * test_format.c -- unit tests of the JSON-lines and CSV decoders
 * (src/connectors/format_*.c): typed fields, nested paths, missing and extra
 * fields, escapes, records that must become dead letters (bad JSON, a wrong
 * type, too large, wrong field count), partial trailing records, and a
 * large generated input with 1% malformed records decoded exactly; and
 * decoding only the columns read (spec.need) against decoding them all:
 * the same rows in the columns read, unread text columns NULL, the same
 * dead letters.
 */
#include "unit.h"
#include "connectors/format_int.h"
#include "sluice/expr.h"
#include "sluice/format.h"
#include "sluice/rowcodec.h"
#include "sluice/strbuf.h"

#include <stdio.h>
#include <stdlib.h>


static bool str_is(const Vector *v, uint32_t i, const char *s)
{
    return !vector_is_null(v, i) && v->v.str[i].len == strlen(s) &&
           memcmp(v->v.str[i].ptr, s, v->v.str[i].len) == 0;
}

static void test_json(void)
{
    Arena a;
    arena_init(&a, 65536);
    const char *names[] = {"id", "name", "price", "ok", "ts_city"};
    SlType types[] = {{TYPE_INT8, -1, TYPE_UNKNOWN}, {TYPE_TEXT, -1, TYPE_UNKNOWN}, {TYPE_FLOAT8, -1, TYPE_UNKNOWN},
                      {TYPE_BOOL, -1, TYPE_UNKNOWN}, {TYPE_TEXT, -1, TYPE_UNKNOWN}};
    const char *paths[] = {NULL, NULL, NULL, NULL, "meta.city"};
    FmtSpec spec;
    fmt_spec_init(&spec, &a, 5, names, types, paths);
    spec.max_record_bytes = 200;
    static const char input[] =
        "{\"id\": 1, \"name\": \"a\\\"b\\u00e9\", \"price\": 2.5, \"ok\": true, \"meta\": {\"city\": \"Oslo\", \"x\": [1, {\"y\": null}]}}\n"
        "{\"id\": 2, \"extra\": {\"deep\": [[[]]]}, \"name\": null}\r\n"
        "\n"
        "{\"id\": \"3\", \"id\": 4}\n"
        "{\"id\": 5, \"name\": \"unterminated}\n"
        "{\"id\": \"abc\"}\n"
        "{\"id\": {\"nested\": 1}}\n"
        "[1, 2]\n"
        "{\"id\": 6} trailing\n"
        "{\"id\": 7, \"name\": \"" "xxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx" "\"}\n"
        "{\"id\": 8, \"name\": [1, 2}\n"
        "{\"id\": 9, \"ok\": 1}\n"
        "{\"id\": 10}";
    Batch *b = batch_alloc(&a, types, 5, 64);
    FmtResult res = {0};
    SlError err = {0};
    /* Not final: the last line has no newline, so it waits. */
    CHECK(fmt_json_decode(&spec, input, sizeof(input) - 1, false, b, 64, &a, &res, &err) == 0);
    CHECK(b->nrows == 4);
    CHECK(b->cols[0].v.i64[0] == 1 && str_is(&b->cols[1], 0, "a\"b\xc3\xa9"));
    CHECK(b->cols[2].v.f64[0] == 2.5 && b->cols[3].v.b[0] == 1 && str_is(&b->cols[4], 0, "Oslo"));
    CHECK(b->cols[0].v.i64[1] == 2 && vector_is_null(&b->cols[1], 1) &&
          vector_is_null(&b->cols[2], 1) && vector_is_null(&b->cols[4], 1));
    CHECK(b->cols[0].v.i64[2] == 4);        /* the last of a repeated key wins */
    CHECK(res.ndead == 7);
    for (int i = 0; i < res.ndead; i++)
        printf("dead letter %lld at %lld: %s\n", (long long)res.dead[i].record,
               (long long)res.dead[i].offset, res.dead[i].reason);
    CHECK(res.ndead > 1 && strstr(res.dead[1].reason, "invalid input syntax for type bigint") != NULL &&
          strstr(res.dead[1].reason, "field \"id\"") != NULL);
    CHECK(res.ndead > 5 && strstr(res.dead[5].reason, "max_record_bytes") != NULL);
    /* "ok": 1 is true, as PostgreSQL's boolean input reads '1'. */
    CHECK(b->cols[0].v.i64[3] == 9 && b->cols[3].v.b[3] == 1);
    /* Each dead letter's raw bytes are the record itself. */
    CHECK(res.ndead > 0 && res.dead[0].raw.len > 0 && res.dead[0].raw.ptr[0] == '{' &&
          res.dead[0].raw.ptr[res.dead[0].raw.len - 1] == '}');
    CHECK(fmt_json_decode(&spec, input, sizeof(input) - 1, true, b, 64, &a, &res, &err) == 0);
    CHECK(b->nrows == 5 && b->cols[0].v.i64[4] == 10);
    CHECK(res.consumed == (int64_t)sizeof(input) - 1 && res.records == 12);
    arena_destroy(&a);
}

static void test_json_bulk(void)
{
    /* 100,000 records, 1% malformed: exactly 99,000 rows and 1,000 dead letters. */
    Arena a;
    arena_init(&a, 1 << 20);
    const char *names[] = {"user_id", "url", "ts"};
    SlType types[] = {{TYPE_INT8, -1, TYPE_UNKNOWN}, {TYPE_TEXT, -1, TYPE_UNKNOWN}, {TYPE_INT8, -1, TYPE_UNKNOWN}};
    FmtSpec spec;
    fmt_spec_init(&spec, &a, 3, names, types, NULL);
    StrBuf in;
    strbuf_init(&in);
    for (int i = 0; i < 100000; i++) {
        if (i % 100 == 37)
            strbuf_printf(&in, "{\"user_id\": %d, \"url\": \"/p/%d\", \"ts\": }\n", i, i);
        else
            strbuf_printf(&in, "{\"user_id\": %d, \"url\": \"/p/%d\", \"ts\": %d}\n", i, i, i * 10);
    }
    FmtResult res = {0};
    SlError err = {0};
    int64_t rows = 0, sum = 0;
    while (res.consumed < (int64_t)in.len) {
        Batch *b = batch_alloc(&a, types, 3, 1024);
        CHECK(fmt_json_decode(&spec, in.data, in.len, true, b, 1024, &a, &res, &err) == 0);
        rows += b->nrows;
        for (uint32_t r = 0; r < b->nrows; r++)
            sum += b->cols[0].v.i64[r];
    }
    CHECK(rows == 99000 && res.ndead == 1000 && res.records == 100000);
    int64_t want = 0;
    for (int i = 0; i < 100000; i++)
        if (i % 100 != 37)
            want += i;
    CHECK(sum == want);
    strbuf_free(&in);
    arena_destroy(&a);
}

/* Strings scanned eight bytes at a time: a quote or backslash at every place
 * around the eight-byte steps, escaped quotes, even runs of backslashes before
 * a closing quote, a backslash as the record's last byte; and keys in another
 * order than the columns (the decoder looks after the last key's column first). */
static void test_json_strings(void)
{
    Arena a;
    arena_init(&a, 65536);
    const char *names[] = {"k", "s", "n"};
    SlType types[] = {{TYPE_INT8, -1, TYPE_UNKNOWN}, {TYPE_TEXT, -1, TYPE_UNKNOWN}, {TYPE_INT8, -1, TYPE_UNKNOWN}};
    FmtSpec spec;
    fmt_spec_init(&spec, &a, 3, names, types, NULL);
    CHECK(spec.flat_keys);
    for (int pre = 0; pre < 20; pre++) {
        for (int kind = 0; kind < 4; kind++) {
            /* kind 0: a\"b (escaped quote); 1: a\\\\ then the quote (two
             * backslashes, the quote closes); 2: plain; 3: \u0041 */
            static const char *const raw[] = {"a\\\"b", "a\\\\", "ab", "\\u0041"};
            static const char *const want[] = {"a\"b", "a\\", "ab", "A"};
            StrBuf in;
            strbuf_init(&in);
            strbuf_printf(&in, "{\"n\": 7, \"s\": \"%.*s%s\", \"k\": %d}", pre,
                          "xxxxxxxxxxxxxxxxxxxxxxxx", raw[kind], pre);
            Batch *b = batch_alloc(&a, types, 3, 4);
            FmtResult res = {0};
            SlError err = {0};
            CHECK(fmt_json_decode(&spec, in.data, in.len, true, b, 4, &a, &res, &err) == 0);
            CHECK(b->nrows == 1 && res.ndead == 0);
            char expect[64];
            snprintf(expect, sizeof(expect), "%.*s%s", pre, "xxxxxxxxxxxxxxxxxxxxxxxx",
                     want[kind]);
            CHECK(b->nrows == 1 && str_is(&b->cols[1], 0, expect));
            CHECK(b->nrows == 1 && b->cols[0].v.i64[0] == pre && b->cols[2].v.i64[0] == 7);
            strbuf_free(&in);
        }
        /* Unterminated: the record ends inside the string, or on a backslash. */
        for (int tail = 0; tail < 2; tail++) {
            StrBuf in;
            strbuf_init(&in);
            strbuf_printf(&in, "{\"k\": 1, \"s\": \"%.*s%s", pre, "xxxxxxxxxxxxxxxxxxxxxxxx",
                          tail ? "\\" : "");
            Batch *b = batch_alloc(&a, types, 3, 4);
            FmtResult res = {0};
            SlError err = {0};
            CHECK(fmt_json_decode(&spec, in.data, in.len, true, b, 4, &a, &res, &err) == 0);
            CHECK(b->nrows == 0 && res.ndead == 1 &&
                  strstr(res.dead[0].reason, "unterminated string") != NULL);
            strbuf_free(&in);
        }
    }
    /* Two columns with one key: not flat, both get the value. */
    const char *paths[] = {"a", "a"};
    SlType t2[] = {{TYPE_INT8, -1, TYPE_UNKNOWN}, {TYPE_TEXT, -1, TYPE_UNKNOWN}};
    fmt_spec_init(&spec, &a, 2, names, t2, paths);
    CHECK(!spec.flat_keys);
    static const char two[] = "{\"a\": 5}";
    Batch *b = batch_alloc(&a, t2, 2, 4);
    FmtResult res = {0};
    SlError err = {0};
    CHECK(fmt_json_decode(&spec, two, sizeof(two) - 1, true, b, 4, &a, &res, &err) == 0);
    CHECK(b->nrows == 1 && b->cols[0].v.i64[0] == 5 && str_is(&b->cols[1], 0, "5"));
    arena_destroy(&a);
}

static void test_csv(void)
{
    Arena a;
    arena_init(&a, 65536);
    const char *names[] = {"id", "name", "score"};
    SlType types[] = {{TYPE_INT4, -1, TYPE_UNKNOWN}, {TYPE_TEXT, -1, TYPE_UNKNOWN}, {TYPE_FLOAT8, -1, TYPE_UNKNOWN}};
    FmtSpec spec;
    fmt_spec_init(&spec, &a, 3, names, types, NULL);
    spec.header = true;
    static const char input[] =
        "id,name,score\n"
        "1,plain,1.5\n"
        "2,\"with, comma and \"\"quotes\"\"\nand a newline\",\n"
        "3,\"\",2\r\n"
        "4,,\n"
        "x,bad,1\n"
        "5,too,many,fields\n"
        "6,few\n"
        "7,\"unterminated\n";
    Batch *b = batch_alloc(&a, types, 3, 64);
    FmtResult res = {0};
    SlError err = {0};
    CHECK(fmt_csv_decode(&spec, input, sizeof(input) - 1, true, b, 64, &a, &res, &err) == 0);
    CHECK(b->nrows == 4);
    CHECK(b->cols[0].v.i32[0] == 1 && str_is(&b->cols[1], 0, "plain") && b->cols[2].v.f64[0] == 1.5);
    CHECK(str_is(&b->cols[1], 1, "with, comma and \"quotes\"\nand a newline") &&
          vector_is_null(&b->cols[2], 1));
    CHECK(str_is(&b->cols[1], 2, "") && b->cols[2].v.f64[2] == 2.0);
    CHECK(vector_is_null(&b->cols[1], 3));
    CHECK(res.ndead == 4);
    for (int i = 0; i < res.ndead; i++)
        printf("csv dead letter %lld: %s\n", (long long)res.dead[i].record, res.dead[i].reason);
    CHECK(res.ndead == 4 && strstr(res.dead[0].reason, "invalid input syntax for type integer") &&
          strstr(res.dead[1].reason, "extra data") && strstr(res.dead[2].reason, "missing data for column \"score\"") &&
          strstr(res.dead[3].reason, "unterminated"));
    arena_destroy(&a);
}

/* The integer and timestamp fast paths of fmt_store_field give what the
 * types' input functions give, and leave what they do not take to them. */
static void test_fast_paths(void)
{
    Arena a;
    arena_init(&a, 65536);
    static const char *const ints[] = {
        "0", "-0", "+7", "42", "-9223372036854775808", "9223372036854775807",
        "999999999999999999", "-999999999999999999", "2147483647", "2147483648",
        "-2147483649", "32767", "-32769", " 12", "12 ", "1e3", "", "+", "-", "0x10",
        "00012", "9223372036854775808",
    };
    static const char *const tss[] = {
        "2024-01-01 00:00:00", "2024-02-29 23:59:59", "2023-02-29 12:00:00",
        "1999-12-31T23:59:59.5", "2000-01-01 00:00:00.123456", "2000-01-01 00:00:00.1234567",
        "0001-01-01 00:00:00", "0000-01-01 00:00:00", "2024-13-01 00:00:00",
        "2024-04-31 00:00:00", "2024-01-01 24:00:00", "2024-01-01 23:60:00",
        "2024-01-01 23:59:60", "2024-01-01 00:00:00.", "2024-01-01 00:00:00+02",
        "2024-1-01 00:00:00", "1900-02-29 00:00:00", "2000-02-29 00:00:00",
        "2024-01-01 00:00", "2024-01-01 00:00:00 BC", "9999-12-31 23:59:59.999999",
    };
    static const SlTypeId itypes[] = {TYPE_INT8, TYPE_INT4, TYPE_INT2};
    const char *names[] = {"x"};
    for (int t = 0; t < 4; t++) {
        SlType type = sl_type(t < 3 ? itypes[t] : TYPE_TIMESTAMP);
        const char *const *in = t < 3 ? ints : tss;
        int n = t < 3 ? (int)SL_ARRAY_LEN(ints) : (int)SL_ARRAY_LEN(tss);
        FmtSpec spec;
        fmt_spec_init(&spec, &a, 1, names, &type, NULL);
        for (int i = 0; i < n; i++) {
            Batch *fast = batch_alloc(&a, &type, 1, 1), *slow = batch_alloc(&a, &type, 1, 1);
            const char *why = fmt_store_field(&spec, fast, 0, 0, in[i], strlen(in[i]), &a);
            SlError e = {0};
            int rc = value_parse_text(&a, type, in[i], strlen(in[i]), &slow->cols[0], 0, -1, &e);
            CHECK((why == NULL) == (rc == 0), "%s as %s: fast %s, slow %s", in[i],
                  type_name(type.id), why ? why : "ok", e.message ? e.message : "ok");
            if (why == NULL && rc == 0)
                CHECK(memcmp(fast->cols[0].v.data, slow->cols[0].v.data,
                             type_width(type.id)) == 0, "%s as %s", in[i], type_name(type.id));
            sl_error_clear(&e);
        }
    }
    arena_destroy(&a);
}

/* The dead letters of two decodes are the same records with the same reasons. */
static bool same_dead(const FmtResult *x, const FmtResult *y)
{
    if (x->ndead != y->ndead)
        return false;
    for (int i = 0; i < x->ndead; i++)
        if (x->dead[i].record != y->dead[i].record || x->dead[i].offset != y->dead[i].offset ||
            strcmp(x->dead[i].reason, y->dead[i].reason) != 0)
            return false;
    return true;
}

/* Values of column c equal in rows [0, n) of two batches (text and int8). */
static bool same_col(const Batch *x, const Batch *y, uint32_t c, uint32_t n)
{
    for (uint32_t i = 0; i < n; i++) {
        const Vector *u = &x->cols[c], *v = &y->cols[c];
        if (vector_is_null(u, i) != vector_is_null(v, i))
            return false;
        if (vector_is_null(u, i))
            continue;
        if (u->type.id == TYPE_INT8 ? u->v.i64[i] != v->v.i64[i]
                                    : u->v.str[i].len != v->v.str[i].len ||
                                          memcmp(u->v.str[i].ptr, v->v.str[i].ptr,
                                                 u->v.str[i].len) != 0)
            return false;
    }
    return true;
}

static void test_need(void)
{
    Arena a;
    arena_init(&a, 65536);
    const char *names[] = {"id", "name", "n", "city", "tag"};
    SlType types[] = {{TYPE_INT8, -1, TYPE_UNKNOWN}, {TYPE_TEXT, -1, TYPE_UNKNOWN}, {TYPE_INT8, -1, TYPE_UNKNOWN},
                      {TYPE_TEXT, -1, TYPE_UNKNOWN}, {TYPE_TEXT, -1, TYPE_UNKNOWN}};
    const char *paths[] = {NULL, NULL, NULL, "meta.city", NULL};
    FmtSpec all, some;
    fmt_spec_init(&all, &a, 5, names, types, paths);
    some = all;
    /* Read id and city; name, n and tag unread. */
    static const uint8_t need[] = {1, 0, 0, 1, 0};
    some.need = need;
    static const char input[] =
        "{\"id\": 1, \"name\": \"a\\\"b\\u00e9\", \"n\": 5, \"meta\": {\"city\": \"Oslo\"}, \"tag\": [1, {\"x\": true}]}\n"
        "{\"id\": 2, \"name\": \"bad \\q escape\"}\n"           /* bad escape, unread */
        "{\"id\": 3, \"n\": \"not a number\"}\n"                /* wrong type, unread */
        "{\"id\": 4, \"tag\": {\"x\": [1, 2}}\n"                /* bad JSON, unread */
        "{\"id\": 5, \"name\": \"nul \\u0000\"}\n"              /* \u0000, unread */
        "{\"id\": 6, \"tag\": tru}\n"                           /* bad token, unread */
        "{\"id\": 7, \"name\": 12, \"tag\": {\"deep\": [[]]}, \"meta\": {\"city\": null}}\n"
        "{\"id\": \"x\", \"name\": \"read column bad\"}\n"      /* wrong type, read */
        "{\"meta\": {\"city\": \"Rome\", \"z\": 1}, \"id\": 9, \"name\": \"n\\tx\"}\n";
    Batch *ba = batch_alloc(&a, types, 5, 64), *bs = batch_alloc(&a, types, 5, 64);
    FmtResult ra = {0}, rs = {0};
    SlError err = {0};
    CHECK(fmt_json_decode(&all, input, sizeof(input) - 1, true, ba, 64, &a, &ra, &err) == 0);
    CHECK(fmt_json_decode(&some, input, sizeof(input) - 1, true, bs, 64, &a, &rs, &err) == 0);
    CHECK(ra.ndead == 6 && ba->nrows == 3);
    CHECK(same_dead(&ra, &rs) && bs->nrows == ba->nrows && rs.consumed == ra.consumed);
    CHECK(same_col(ba, bs, 0, ba->nrows) && same_col(ba, bs, 3, ba->nrows));
    CHECK(str_is(&bs->cols[3], 0, "Oslo") && vector_is_null(&bs->cols[3], 1) &&
          str_is(&bs->cols[3], 2, "Rome"));
    /* Unread text columns are left NULL; an unread bigint is still converted. */
    CHECK(str_is(&ba->cols[1], 0, "a\"b\xc3\xa9") && str_is(&ba->cols[4], 1, "{\"deep\": [[]]}"));
    for (uint32_t i = 0; i < bs->nrows; i++)
        CHECK(vector_is_null(&bs->cols[1], i) && vector_is_null(&bs->cols[4], i));
    CHECK(same_col(ba, bs, 2, ba->nrows));

    /* CSV: the same with an unread text and an unread bigint column. */
    static const char csv[] = "1,a,5,x,t\n2,b,oops,y,u\n3,\"c, d\",7,z,\"v\"\"w\"\nq,e,8,z,w\n";
    Batch *ca = batch_alloc(&a, types, 5, 64), *cs = batch_alloc(&a, types, 5, 64);
    FmtResult rca = {0}, rcs = {0};
    CHECK(fmt_csv_decode(&all, csv, sizeof(csv) - 1, true, ca, 64, &a, &rca, &err) == 0);
    CHECK(fmt_csv_decode(&some, csv, sizeof(csv) - 1, true, cs, 64, &a, &rcs, &err) == 0);
    CHECK(rca.ndead == 2 && ca->nrows == 2 && same_dead(&rca, &rcs) && cs->nrows == 2);
    CHECK(same_col(ca, cs, 0, 2) && same_col(ca, cs, 2, 2) && same_col(ca, cs, 3, 2));
    CHECK(str_is(&ca->cols[4], 1, "v\"w") && str_is(&cs->cols[3], 1, "z"));
    for (uint32_t i = 0; i < cs->nrows; i++)
        CHECK(vector_is_null(&cs->cols[1], i) && vector_is_null(&cs->cols[4], i));
    arena_destroy(&a);
}

int main(void)
{
    test_fast_paths();
    test_json();
    test_json_bulk();
    test_json_strings();
    test_csv();
    test_need();
    return unit_done("test_format");
}
