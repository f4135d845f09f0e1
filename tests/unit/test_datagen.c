/*
 * test_datagen.c -- unit tests of relation options (src/util/options.c) and
 * the datagen connector (src/connectors/datagen.c): the same seed gives the
 * same rows however the offsets are split into batches, rules are honoured
 * (sequence, range, value list, event time with jitter and late rows, NULL
 * share), rows appear at rows_per_second, and bad options are refused.
 */
#include "unit.h"
#include "sluice/datagen.h"
#include "sluice/options.h"
#include "sluice/rowcodec.h"

#include <stdio.h>


static CatColumn cols[4] = {
    {"id", {TYPE_INT8, -1, TYPE_UNKNOWN}, false},
    {"user_id", {TYPE_INT4, -1, TYPE_UNKNOWN}, false},
    {"url", {TYPE_TEXT, -1, TYPE_UNKNOWN}, false},
    {"ts", {TYPE_TIMESTAMP, -1, TYPE_UNKNOWN}, false},
};
static SlType types[4] = {{TYPE_INT8, -1, TYPE_UNKNOWN}, {TYPE_INT4, -1, TYPE_UNKNOWN}, {TYPE_TEXT, -1, TYPE_UNKNOWN}, {TYPE_TIMESTAMP, -1, TYPE_UNKNOWN}};

static CatRelation relation(const char *options)
{
    CatRelation r;
    memset(&r, 0, sizeof(r));
    r.name = "gen";
    r.kind = REL_STREAM;
    r.ncols = 4;
    r.cols = cols;
    r.options = options;
    r.created_at = 1700000000000000LL;
    return r;
}

static void test_options(void)
{
    Arena a;
    arena_init(&a, 4096);
    SlError err = {0};
    Options o;
    CHECK(opts_parse(&a, "{\"connector\": \"datagen\", \"rows_per_second\": 50, "
                         "\"x\": \"a\\\"b\", \"flag\": true}", &o, &err) == 0);
    CHECK(o.n == 4 && strcmp(opts_get(&o, "connector"), "datagen") == 0);
    CHECK(strcmp(opts_get(&o, "x"), "a\"b") == 0 && opts_get(&o, "nope") == NULL);
    int64_t v;
    bool b;
    CHECK(opts_get_int(&o, "rows_per_second", 0, &v, &err) == 0 && v == 50);
    CHECK(opts_get_bool(&o, "flag", false, &b, &err) == 0 && b);
    CHECK(opts_get_int(&o, "connector", 0, &v, &err) < 0 && strcmp(err.sqlstate, "22023") == 0);
    sl_error_clear(&err);
    CHECK(opts_parse_interval_us("5 seconds", &v) == 0 && v == 5000000);
    CHECK(opts_parse_interval_us("1 minute 30 s", &v) == 0 && v == 90000000);
    CHECK(opts_parse_interval_us("250", &v) == 0 && v == 250000);
    CHECK(opts_parse_interval_us("5 parsecs", &v) < 0);
    CHECK(opts_parse(&a, "{\"a\": ", &o, &err) < 0);
    sl_error_clear(&err);
    arena_destroy(&a);
}

static void test_datagen(void)
{
    Arena a;
    arena_init(&a, 1 << 16);
    SlError err = {0};
    CatRelation rel = relation(
        "{\"connector\": \"datagen\", \"rows_per_second\": 1000, \"seed\": 42,"
        " \"fields.id.kind\": \"sequence\", \"fields.id.start\": 100,"
        " \"fields.user_id.min\": 1, \"fields.user_id.max\": 10,"
        " \"fields.url.kind\": \"values\", \"fields.url.values\": \"/a,/b,/c\","
        " \"fields.url.null_share\": 0.1,"
        " \"fields.ts.max_out_of_orderness\": \"2 seconds\", \"fields.ts.late_share\": 0.05,"
        " \"fields.ts.late_by\": \"1 minute\", \"start_time_us\": 0}");
    Datagen *g;
    CHECK(datagen_open(&a, &rel, &g, &err) == 0);
    if (g == NULL)
        return;
    /* 5000 rows in one go, and again in uneven pieces: identical. */
    Batch *whole = batch_alloc(&a, types, 4, 5000);
    datagen_generate(g, 0, 5000, &a, whole);
    int64_t late = 0, nulls = 0, min_uid = 99, max_uid = 0;
    for (uint32_t i = 0; i < 5000; i++) {
        CHECK(whole->cols[0].v.i64[i] == 100 + (int64_t)i);
        int32_t u = whole->cols[1].v.i32[i];
        min_uid = u < min_uid ? u : min_uid;
        max_uid = u > max_uid ? u : max_uid;
        if (vector_is_null(&whole->cols[2], i)) {
            nulls++;
        } else {
            const SlStr *s = &whole->cols[2].v.str[i];
            CHECK(s->len == 2 && s->ptr[0] == '/' && s->ptr[1] >= 'a' && s->ptr[1] <= 'c');
        }
        int64_t base = (int64_t)i * 1000;       /* 1000 rows/s: 1 ms apart */
        int64_t ts = whole->cols[3].v.i64[i];
        if (ts < base - 2000000) {
            late++;
            CHECK(ts >= base - 2000000 - 60000000);
        } else {
            CHECK(ts <= base);
        }
    }
    CHECK(min_uid == 1 && max_uid == 10);
    CHECK(nulls > 350 && nulls < 650);
    CHECK(late > 150 && late < 350);
    int64_t from = 0;
    const uint32_t pieces[] = {1, 999, 1024, 7, 2969};
    for (size_t p = 0; p < SL_ARRAY_LEN(pieces); p++) {
        Batch *b = batch_alloc(&a, types, 4, pieces[p]);
        datagen_generate(g, from, pieces[p], &a, b);
        for (uint32_t i = 0; i < pieces[p]; i++) {
            uint32_t w = (uint32_t)from + i;
            CHECK(b->cols[1].v.i32[i] == whole->cols[1].v.i32[w]);
            CHECK(b->cols[3].v.i64[i] == whole->cols[3].v.i64[w]);
            CHECK(vector_is_null(&b->cols[2], i) == vector_is_null(&whole->cols[2], w));
        }
        from += pieces[p];
    }
    /* A second generator with the same options: the same rows. */
    Datagen *g2;
    CHECK(datagen_open(&a, &rel, &g2, &err) == 0);
    Batch *again = batch_alloc(&a, types, 4, 100);
    datagen_generate(g2, 4900, 100, &a, again);
    CHECK(again->cols[3].v.i64[99] == whole->cols[3].v.i64[4999]);
    /* Rows appear at rows_per_second from the stream's creation. */
    CHECK(datagen_available(g, rel.created_at - 5) == 0);
    CHECK(datagen_available(g, rel.created_at + 2500000) == 2500);

    CatRelation bad = relation("{\"fields.url.kind\": \"values\"}");
    CHECK(datagen_open(&a, &bad, &g2, &err) < 0 && strcmp(err.sqlstate, "22023") == 0);
    sl_error_clear(&err);
    bad = relation("{\"rows_per_second\": 0}");
    CHECK(datagen_open(&a, &bad, &g2, &err) < 0);
    sl_error_clear(&err);
    arena_destroy(&a);
}

int main(void)
{
    test_options();
    test_datagen();
    return unit_done("test_datagen");
}
