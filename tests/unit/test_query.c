/*
 * test_query.c -- the planner and the batch operators, through the runtime
 * (rt_init with a real catalog and state store in a temporary directory):
 * plan shapes (WHERE pushed into joins as hash keys), operators over more
 * rows than one batch (scan, sort, hash aggregate, join, distinct, limit,
 * set operations), windows, DML atomicity, a prepared statement analyzed
 * again after its table is recreated, EXPLAIN's text, and the aggregate
 * states' serialize / deserialize / merge round trip.  LeakSanitizer
 * checks that every arena and heap block is returned.
 */
#include "sluice/exec.h"
#include "sluice/relstore.h"
#include "sluice/rowcodec.h"
#include "sluice/runtime.h"
#include "unit_data.h"
#include "unit_runtime.h"

#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* The Runtime statements are prepared in (main). */
static Runtime *the_rt;

/* Runs every statement of sql; the rows of the last (or its error) go to
 * out as "a|b" lines, the last tag to tag. */
static void run(const char *sql, StrBuf *out, char *tag)
{
    Arena a;
    arena_init(&a, 0);
    SlError err = {0};
    List *stmts;
    strbuf_reset(out);
    tag[0] = '\0';
    if (rt_parse(&a, sql, strlen(sql), &stmts, &err) < 0)
        goto fail;
    for (int i = 0; i < list_len(stmts); i++) {
        Prepared *p;
        strbuf_reset(out);
        if (rt_prepare(the_rt, &a, sql, list_nth(stmts, i), NULL, 0, &p, &err) < 0)
            goto fail;
        ResultSink sink = {out, unit_rows_cb};
        if (rt_execute(p, NULL, 0, &sink, tag, 64, &err) < 0)
            goto fail;
    }
    arena_destroy(&a);
    return;
fail:
    strbuf_printf(out, "ERROR %s %s", err.sqlstate, err.message);
    sl_error_clear(&err);
    arena_destroy(&a);
}

static void expect(const char *sql, const char *want)
{
    StrBuf out;
    strbuf_init(&out);
    char tag[64];
    run(sql, &out, tag);
    const char *got = out.data ? out.data : "";
    CHECK(strcmp(got, want) == 0, "%s\n  got:  %s\n  want: %s", sql, got, want);
    strbuf_free(&out);
}

static void expect_tag(const char *sql, const char *want)
{
    StrBuf out;
    strbuf_init(&out);
    char tag[64];
    run(sql, &out, tag);
    CHECK(strcmp(tag, want) == 0, "%s: tag %s, want %s (%s)", sql, tag, want,
          out.data ? out.data : "");
    strbuf_free(&out);
}

static void test_big(void)
{
    expect_tag("CREATE TABLE big (id int PRIMARY KEY, k text, v numeric)", "CREATE TABLE");
    StrBuf sql;
    strbuf_init(&sql);
    strbuf_puts(&sql, "INSERT INTO big VALUES ");
    for (int i = 0; i < 5000; i++)
        strbuf_printf(&sql, "%s(%d, 'k%d', %d.5)", i ? ", " : "", i, i % 1500, i / 2);
    expect_tag(sql.data, "INSERT 0 5000");
    strbuf_free(&sql);
    /* scans, aggregates and sorts over several batches */
    expect("SELECT count(*), count(DISTINCT k), sum(id), min(k), max(v) FROM big",
           "5000|1500|12497500|k0|2499.5\n");
    expect("SELECT count(*) FROM (SELECT k, count(*) FROM big GROUP BY k) s", "1500\n");
    expect("SELECT k, count(*) FROM big GROUP BY k ORDER BY count(*) DESC, k LIMIT 3",
           "k0|4\nk1|4\nk10|4\n");
    expect("SELECT id FROM big ORDER BY id DESC LIMIT 2 OFFSET 1100", "3899\n3898\n");
    expect("SELECT count(*) FROM (SELECT DISTINCT k FROM big) s", "1500\n");
    /* a self join of 5000 rows on a key: one match each */
    expect("SELECT count(*), sum(a.id - b.id) FROM big a JOIN big b ON a.id = b.id", "5000|0\n");
    expect("SELECT count(*) FROM big a LEFT JOIN big b ON a.id = b.id + 4000", "5000\n");
    expect("SELECT count(*) FROM big a FULL JOIN big b ON a.id = b.id + 4000", "9000\n");
    /* keys k0..k499 appear 4 times, the other 1000 three times */
    expect("SELECT count(*) FROM big a JOIN big b ON a.k = b.k", "17000\n");
    expect("SELECT count(*) FROM (SELECT k FROM big UNION SELECT k FROM big) s", "1500\n");
    expect("SELECT count(*) FROM (SELECT k FROM big EXCEPT ALL SELECT k FROM big WHERE id < 1500) s",
           "3500\n");
    expect("SELECT count(*) FROM big WHERE id IN (SELECT id * 2 FROM big)", "2500\n");
    /* DML over many rows */
    expect_tag("UPDATE big SET id = id + 10000 WHERE id >= 2500", "UPDATE 2500");
    expect_tag("DELETE FROM big WHERE id >= 10000", "DELETE 2500");
    expect("SELECT count(*), max(id) FROM big", "2500|2499\n");
    expect_tag("DROP TABLE big", "DROP TABLE");
}

static void test_plans(void)
{
    expect_tag("CREATE TABLE a (x int PRIMARY KEY, y text); CREATE TABLE b (x int, z text)",
               "CREATE TABLE");
    /* WHERE equalities between two ranges become the join's hash keys;
     * one-sided conditions go below the join */
    expect("EXPLAIN SELECT a.y, b.z FROM a, b WHERE a.x = b.x AND b.z <> 'q' AND a.y LIKE 'p%'",
           "Project\n"
           "  Output: a.y, b.z\n"
           "  ->  Hash Join\n"
           "        Hash Cond: (a.x = b.x)\n"
           "        ->  Seq Scan on a\n"
           "              Filter: (a.y ~~ 'p%')\n"
           "        ->  Seq Scan on b\n"
           "              Filter: (b.z <> 'q')\n");
    /* an outer join keeps its ON conjuncts; WHERE stays above it */
    expect("EXPLAIN SELECT * FROM a LEFT JOIN b USING (x) WHERE b.z IS NULL",
           "Project\n"
           "  Output: a.x, a.y, b.z\n"
           "  ->  Filter\n"
           "        Filter: (b.z IS NULL)\n"
           "        ->  Hash Left Join\n"
           "              Hash Cond: (a.x = b.x)\n"
           "              ->  Seq Scan on a\n"
           "              ->  Seq Scan on b\n");
    expect("EXPLAIN SELECT x FROM a WHERE x IN (SELECT x FROM b) ORDER BY 1 LIMIT 5",
           "Limit\n"
           "  Count: 5\n"
           "  InitPlan 1\n"
           "    ->  Project\n"
           "          Output: b.x\n"
           "          ->  Seq Scan on b\n"
           "  ->  Sort\n"
           "        Sort Key: a.x\n"
           "        ->  Project\n"
           "              Output: a.x\n"
           "              ->  Seq Scan on a\n"
           "                    Filter: (a.x IN (InitPlan 1))\n");
    expect("EXPLAIN INSERT INTO a VALUES (1, 'p') ON CONFLICT (x) DO NOTHING",
           "Insert on a\n"
           "  Conflict Resolution: NOTHING\n"
           "  ->  Values Scan (1 row)\n");
    expect_tag("DROP TABLE a, b", "DROP TABLE");
}

static void test_dml(void)
{
    expect_tag("CREATE TABLE u (id bigint PRIMARY KEY, c text NOT NULL)", "CREATE TABLE");
    expect_tag("INSERT INTO u VALUES (1, 'a'), (2, 'b')", "INSERT 0 2");
    /* a failing row leaves nothing behind */
    expect("INSERT INTO u VALUES (3, 'c'), (1, 'x')",
           "ERROR 23505 duplicate key value violates unique constraint \"u_pkey\"");
    expect("INSERT INTO u VALUES (4, 'd'), (5, NULL)",
           "ERROR 23502 null value in column \"c\" of relation \"u\" violates not-null "
           "constraint");
    expect("SELECT count(*) FROM u", "2\n");
    /* keys that move within one statement */
    expect_tag("UPDATE u SET id = 3 - id", "UPDATE 2");
    expect("SELECT * FROM u ORDER BY id", "1|b\n2|a\n");
    expect("UPDATE u SET id = 1", "ERROR 23505 duplicate key value violates unique constraint "
                                  "\"u_pkey\"");
    expect("INSERT INTO u VALUES (1, 'z'), (9, 'n') ON CONFLICT (id) DO UPDATE SET c = "
           "u.c || excluded.c RETURNING id, c",
           "9|n\n1|bz\n");
    expect("INSERT INTO u VALUES (7, 'x'), (7, 'y') ON CONFLICT (id) DO UPDATE SET c = 'w'",
           "ERROR 21000 ON CONFLICT DO UPDATE command cannot affect row a second time");
    expect_tag("INSERT INTO u VALUES (7, 'x'), (7, 'y') ON CONFLICT DO NOTHING", "INSERT 0 1");
    expect("DELETE FROM u WHERE id > 2 RETURNING *", "7|x\n9|n\n");
    /* a prepared statement whose table is recreated is analyzed again */
    Arena a;
    arena_init(&a, 0);
    SlError err = {0};
    List *stmts;
    const char *q = "SELECT * FROM u ORDER BY 1";
    Prepared *p = NULL;
    CHECK(rt_parse(&a, q, strlen(q), &stmts, &err) == 0 &&
          rt_prepare(the_rt, &a, q, list_nth(stmts, 0), NULL, 0, &p, &err) == 0, "%s", err.message);
    expect_tag("DROP TABLE u; CREATE TABLE u (id bigint, c text); INSERT INTO u VALUES (5, 'e')",
               "INSERT 0 1");
    StrBuf out;
    strbuf_init(&out);
    char tag[64];
    ResultSink sink = {&out, unit_rows_cb};
    CHECK(p != NULL && rt_execute(p, NULL, 0, &sink, tag, sizeof(tag), &err) == 0, "%s",
          err.message);
    CHECK(out.data && strcmp(out.data, "5|e\n") == 0, "re-planned: %s", out.data);
    sl_error_clear(&err);
    strbuf_free(&out);
    arena_destroy(&a);
    expect_tag("DROP TABLE u", "DROP TABLE");
}

static void test_streams(StateStore *st, Catalog *cat)
{
    expect_tag("CREATE STREAM ev (k int, ts timestamp, WATERMARK FOR ts AS ts - INTERVAL "
               "'2 seconds') WITH (retention = '1 day')",
               "CREATE STREAM");
    const CatRelation *rel = cat_lookup(cat, "ev");
    CHECK(rel != NULL && rel->kind == REL_STREAM, "stream in the catalog");
    CHECK(rel && strcmp(rel->options, "{\"watermark_column\": \"ts\", \"watermark_delay_us\": "
                                      "2000000, \"retention\": \"1 day\"}") == 0,
          "options: %s", rel ? rel->options : "");
    expect_tag("INSERT INTO ev VALUES (1, '2024-01-01 00:00:01'), (1, '2024-01-01 00:00:03'), "
               "(2, '2024-01-01 00:00:04')",
               "INSERT 0 3");
    expect_tag("INSERT INTO ev VALUES (1, '2024-01-01 00:00:09'), (2, NULL)", "INSERT 0 2");
    SlError err = {0};
    CHECK(stream_end_offset(st, rel, &err) == 5, "5 rows appended");
    /* tumbling, sliding and session windows */
    expect("SELECT window_start, count(*) FROM ev GROUP BY WINDOW(ts, INTERVAL '5 seconds') "
           "ORDER BY 1",
           "2024-01-01 00:00:00|3\n2024-01-01 00:00:05|1\n");
    expect("SELECT window_start, k, count(*) FROM ev GROUP BY WINDOW(ts, INTERVAL '4 seconds', "
           "INTERVAL '2 seconds'), k ORDER BY 1, 2",
           "2023-12-31 23:59:58|1|1\n2024-01-01 00:00:00|1|2\n"
           "2024-01-01 00:00:02|1|1\n2024-01-01 00:00:02|2|1\n2024-01-01 00:00:04|2|1\n"
           "2024-01-01 00:00:06|1|1\n2024-01-01 00:00:08|1|1\n");
    expect("SELECT k, window_start, window_end, count(*) FROM ev GROUP BY SESSION(ts, INTERVAL "
           "'3 seconds'), k ORDER BY 1, 2",
           "1|2024-01-01 00:00:01|2024-01-01 00:00:06|2\n"
           "1|2024-01-01 00:00:09|2024-01-01 00:00:12|1\n"
           "2|2024-01-01 00:00:04|2024-01-01 00:00:07|1\n");
    expect_tag("DROP STREAM ev", "DROP STREAM");
    sl_error_clear(&err);
}

/* The aggregates' two tables: every AggId has its signature (functions.h,
 * aggsig.c) and the executor's row (exec.h, agg.c), and a call resolves to
 * the row of its argument types. */
static void test_agg_rows(void)
{
    for (int id = 0; id < AGG__COUNT; id++) {
        const AggSig *sig = ex_agg_sig((AggId)id);
        CHECK(sig->id == (AggId)id && sig->name != NULL, "signature of aggregate %d", id);
        const AggFunc *fn = ex_agg_func(sig);
        CHECK(fn->id == (AggId)id && fn->state_size > 0 && fn->update != NULL &&
              fn->merge != NULL && fn->final != NULL && fn->serialize != NULL &&
              fn->deserialize != NULL, "executor's row of %s (%d)", sig->name, id);
        SlTypeId types[2], cast[2];
        for (int k = 0; k < sig->nargs; k++)
            types[k] = sig->args[k] == TYPE__COUNT ? TYPE_INT4 : sig->args[k];
        CHECK(ex_agg_lookup(sig->name, sig->nargs, types, cast) == sig,
              "%s of its own argument types resolves to itself (%d)", sig->name, id);
        CHECK(ex_agg_exists(sig->name), "%s exists", sig->name);
    }
    SlTypeId cast[2], t = TYPE_UNKNOWN, i2 = TYPE_INT2, b = TYPE_BOOL;
    const AggSig *s = ex_agg_lookup("max", 1, &t, cast);
    CHECK(s != NULL && s->id == AGG_MAX_TEXT && cast[0] == TYPE_TEXT, "max('x') is max(text)");
    s = ex_agg_lookup("sum", 1, &i2, cast);
    CHECK(s != NULL && s->ret == TYPE_INT8 && cast[0] == TYPE_INT2, "sum(int2) is bigint");
    CHECK(ex_agg_lookup("sum", 1, &b, cast) == NULL, "no sum(boolean)");
    CHECK(!ex_agg_exists("median"), "median is no aggregate");
}

/* Aggregate states: two halves of the input in two blocks, one of them
 * serialized and read back, merged: the same results as one block over
 * everything. */
static void test_aggset(void)
{
    Arena a;
    arena_init(&a, 0);
    SlError err = {0};
    SlType types[2] = {{TYPE_INT8, -1, TYPE_UNKNOWN}, {TYPE_TEXT, -1, TYPE_UNKNOWN}};
    Batch *b = batch_alloc(&a, types, 2, 100);
    for (uint32_t i = 0; i < 100; i++) {
        b->cols[0].v.i64[i] = (int64_t)(i % 7);
        const char *s = arena_printf(&a, "s%u", i % 3);
        b->cols[1].v.str[i] = (SlStr){s, (uint32_t)strlen(s)};
        b->cols[1].nulls[i] = i % 10 == 0;
    }
    b->nrows = 100;
    b->cols[0].len = b->cols[1].len = 100;
    Expr c0 = {.kind = EXPR_COLUMN, .type = types[0], .index = 0};
    Expr c1 = {.kind = EXPR_COLUMN, .type = types[1], .index = 1};
    Expr *a0[1] = {&c0}, *a1[1] = {&c1};
    SlTypeId cast[2], t0 = TYPE_INT8, t1 = TYPE_TEXT;
    AggCall calls[4] = {
        {.sig = ex_agg_lookup("count", 0, NULL, cast), .name = "count", .star = true,
         .type = {TYPE_INT8, -1, TYPE_UNKNOWN}},
        {.sig = ex_agg_lookup("sum", 1, &t0, cast), .name = "sum", .nargs = 1, .args = a0,
         .type = {TYPE_NUMERIC, -1, TYPE_UNKNOWN}},
        {.sig = ex_agg_lookup("count", 1, &t1, cast), .name = "count", .nargs = 1, .args = a1,
         .distinct = true, .type = {TYPE_INT8, -1, TYPE_UNKNOWN}},
        {.sig = ex_agg_lookup("max", 1, &t1, cast), .name = "max", .nargs = 1, .args = a1,
         .type = {TYPE_TEXT, -1, TYPE_UNKNOWN}},
    };
    ExAggSet *set = ex_aggset_new(&a, calls, 4);
    uint32_t size = ex_aggset_size(set);
    uint8_t *all = arena_zalloc(&a, size), *h1 = arena_zalloc(&a, size),
            *h2 = arena_zalloc(&a, size), *back = arena_zalloc(&a, size);
    uint8_t **rows = ARENA_ARRAY(&a, uint8_t *, 100);
    EvalCtx ecx = {.arena = &a, .err = &err};
    for (int i = 0; i < 100; i++)
        rows[i] = all;
    CHECK(ex_aggset_update(set, &ecx, b, 100, NULL, 100, rows) == 0, "update all");
    uint32_t lo[50], hi[50];
    for (uint32_t i = 0; i < 50; i++) {
        lo[i] = i;
        hi[i] = 50 + i;
        rows[i] = h1;
        rows[50 + i] = h2;
    }
    CHECK(ex_aggset_update(set, &ecx, b, 100, lo, 50, rows) == 0 &&
          ex_aggset_update(set, &ecx, b, 100, hi, 50, rows) == 0, "update halves");
    StrBuf ser;
    strbuf_init(&ser);
    ex_aggset_serialize(set, h2, &ser);
    CHECK(ex_aggset_deserialize(set, back, ser.data, ser.len, &err) == 0, "deserialize");
    CHECK(ex_aggset_merge(set, h1, back, &a, &err) == 0, "merge");
    CHECK(ex_aggset_deserialize(set, back, ser.data, ser.len - 1, &err) < 0, "truncated state");
    sl_error_clear(&err);
    Vector o1[4], o2[4];
    for (int k = 0; k < 4; k++) {
        vector_init(&o1[k], &a, calls[k].type, 1, true);
        vector_init(&o2[k], &a, calls[k].type, 1, true);
    }
    CHECK(ex_aggset_final(set, all, o1, 0, &a, &err) == 0 &&
          ex_aggset_final(set, h1, o2, 0, &a, &err) == 0, "final");
    for (int k = 0; k < 4; k++) {
        StrBuf x, y;
        strbuf_init(&x);
        strbuf_init(&y);
        value_format_text(&o1[k], 0, &x);
        value_format_text(&o2[k], 0, &y);
        CHECK(strcmp(x.data, y.data) == 0, "agg %d: %s vs merged %s", k, x.data, y.data);
        strbuf_free(&x);
        strbuf_free(&y);
    }
    CHECK(o1[0].v.i64[0] == 100 && o1[2].v.i64[0] == 3, "count(*) 100, count(DISTINCT) 3");
    strbuf_free(&ser);
    sl_error_clear(&err);
    arena_destroy(&a);
}

int main(void)
{
    UnitData d;
    unit_data_open(&d, "query", true);
    Catalog *cat = d.cat;
    StateStore *st = d.st;
    the_rt = unit_runtime_new(cat, st, 1);
    rt_init(the_rt);
    test_plans();
    test_big();
    test_dml();
    test_streams(st, cat);
    test_agg_rows();
    test_aggset();
    rt_shutdown(the_rt);
    rt_destroy(the_rt);
    unit_data_close(&d);
    return unit_done("test_query");
}
