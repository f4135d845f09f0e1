/*
 * test_engine_distinct.c -- the operator graph's distinct
 * (src/engine/op_distinct.c) alone in a graph, its state in a real state
 * store (unit_data.h): inserts, retractions, duplicates (weights 2 and
 * -2), a row and its retraction in one batch, a row vanishing and coming
 * back, NULLs equal to each other, checkpoint, restore, a graph built
 * anew over the state, a failed batch rerun, a retraction of a row it
 * never had, its stats and watermark, the operator made from analyzed SQL
 * (DISTINCT ON refused); then a randomized check against a model written
 * here (unit_set.h: the input's multiset accumulated, each row once while
 * it has copies) over random batch splits, with fixed seeds.
 */
#include "unit_set.h"
#include "sql/parser.h"

#define T(a, w) {(a), 0, (w)}

static void test_basic(void)
{
    Harness h;
    h_attach(&h, eng_op_distinct_new(us_cols, 2, NULL), 1, 0);
    /* duplicates in one batch show once */
    h_batch(&h, ROWS(T(1, 1), T(1, 1), T(2, 2), T(NULLV, 1), T(NULLV, 1)), 5, NULL, 0);
    expect_bag(&h.last, "first batch", L("1|0", "2|0", "N|0"), W(1, 1, 1));
    /* a retraction of one of two copies changes nothing */
    h_batch(&h, ROWS(T(1, -1), T(NULLV, -1)), 2, NULL, 0);
    expect_bag(&h.last, "one copy of two", NONE, W(0));
    /* weight -2 takes both copies of 2: it leaves */
    h_batch(&h, ROWS(T(2, -2)), 1, NULL, 0);
    expect_bag(&h.last, "both copies", L("2|0"), W(-1));
    /* a row and its retraction in one batch: nothing */
    h_batch(&h, ROWS(T(3, 1), T(3, -1), T(4, 2), T(4, -1)), 4, NULL, 0);
    expect_bag(&h.last, "in and out", L("4|0"), W(1));
    /* the last copy of 1 leaves, and comes back in the next batch */
    h_batch(&h, ROWS(T(1, -1)), 1, NULL, 0);
    expect_bag(&h.last, "vanish", L("1|0"), W(-1));
    h_batch(&h, ROWS(T(1, 1)), 1, NULL, 0);
    expect_bag(&h.last, "back", L("1|0"), W(1));
    /* leaving and coming back in one batch: nothing */
    h_batch(&h, ROWS(T(1, -1), T(1, 2)), 2, NULL, 0);
    expect_bag(&h.last, "out and in", NONE, W(0));
    expect_bag(&h.out, "sum", L("1|0", "4|0", "N|0"), W(1, 1, 1));
    /* state: 1 (2 copies), 4, NULL: three rows */
    EngOpStats st;
    h.op->vt->stats(h.op, &st);
    CHECK(st.rows == 3 && st.bytes > 0 && st.evicted == 0, "%lld rows", (long long)st.rows);
    int64_t bytes = st.bytes;
    /* restore: the counts come back from the store, the stats too */
    h_restore(&h);
    h.op->vt->stats(h.op, &st);
    CHECK(st.rows == 3 && st.bytes == bytes, "after restore %lld rows", (long long)st.rows);
    h_batch(&h, ROWS(T(1, -1)), 1, NULL, 0);
    expect_bag(&h.last, "after restore: one of two", NONE, W(0));
    h_batch(&h, ROWS(T(1, -1), T(NULLV, -1)), 2, NULL, 0);
    expect_bag(&h.last, "after restore: the last ones", L("1|0", "N|0"), W(-1, -1));
    h.op->vt->stats(h.op, &st);
    CHECK(st.rows == 1, "%lld rows", (long long)st.rows);
    /* a graph built anew over the same state */
    Bag keep = h.out;
    memset(&h.out, 0, sizeof(h.out));
    uint32_t oid = h.oid;
    h_close(&h);
    h_attach(&h, eng_op_distinct_new(us_cols, 2, NULL), 1, oid);
    h_restore(&h);
    h.out = keep;
    h.op->vt->stats(h.op, &st);
    CHECK(st.rows == 1, "anew: %lld rows", (long long)st.rows);
    h_batch(&h, ROWS(T(4, 1), T(5, 1)), 2, NULL, 0);
    expect_bag(&h.last, "anew", L("5|0"), W(1));
    h_batch(&h, ROWS(T(4, -2)), 1, NULL, 0);
    expect_bag(&h.last, "anew: 4 leaves", L("4|0"), W(-1));
    expect_bag(&h.out, "sum at the end", L("5|0"), W(1));
    StrBuf sb;
    strbuf_init(&sb);
    h.op->vt->explain(h.op, &sb);
    strbuf_putc(&sb, 0);
    CHECK(strcmp(sb.data, "distinct of 2 columns: unbounded") == 0, "%s", sb.data);
    CHECK(h.op->bound == ENG_BOUND_UNBOUNDED);
    strbuf_free(&sb);
    h_close(&h);
}

static void test_failed_batch(void)
{
    Harness h;
    h_attach(&h, eng_op_distinct_new(us_cols, 2, NULL), 1, 0);
    h_batch(&h, ROWS(T(1, 1), T(2, 1)), 2, NULL, 0);
    /* run, thrown away, rerun: as if it ran once */
    const TRow b2[] = {T(1, -1), T(3, 1), T(2, 1)};
    CHECK(h_batch_ex(&h, b2, 3, NULL, 0, NULL, false) == 0);
    expect_bag(&h.last, "thrown away", L("1|0", "3|0"), W(-1, 1));
    h_batch(&h, b2, 3, NULL, 0);
    expect_bag(&h.last, "rerun", L("1|0", "3|0"), W(-1, 1));
    h_batch(&h, ROWS(T(2, -1)), 1, NULL, 0);
    expect_bag(&h.last, "2 has a copy left", NONE, W(0));
    /* a retraction of a row it never had fails the batch, which leaves
     * nothing behind */
    CHECK(h_batch_ex(&h, ROWS(T(7, -1), T(2, -1)), 2, NULL, 0, NULL, true) < 0);
    CHECK(strcmp(h.sqlstate, "0A000") == 0, "%s", h.sqlstate);
    h_batch(&h, ROWS(T(2, -1)), 1, NULL, 0);
    expect_bag(&h.last, "after the failure", L("2|0"), W(-1));
    expect_bag(&h.out, "sum", L("3|0"), W(1));
    h_close(&h);
}

/* The input's watermark passes on, after the batch's rows. */
static void test_watermark(void)
{
    Harness h;
    h_attach(&h, eng_op_distinct_new(us_cols, 2, &us_time), 1, 0);
    CHECK(h.op->out_time.n == 1 && h.op->out_time.cols[0].col == 1);
    const int64_t wm[1] = {5000000};
    CHECK(h_batch_ex(&h, ROWS({1, 6000000, 1}), 1, NULL, 0, wm, true) == 0);
    CHECK(h.g->op_wm[0] == 5000000, "%lld", (long long)h.g->op_wm[0]);
    h_close(&h);
    /* no time columns: none passed on */
    h_attach(&h, eng_op_distinct_new(us_cols, 2, NULL), 1, 0);
    CHECK(h_batch_ex(&h, ROWS({1, 6000000, 1}), 1, NULL, 0, wm, true) == 0);
    CHECK(h.g->op_wm[0] == INT64_MIN);
    h_close(&h);
}

static const CatRelation *lookup_cb(void *ctx, const char *name)
{
    return cat_lookup(ctx, name);
}

/* The DISTINCT node of a SELECT over stream s, in a. */
static const Plan *distinct_of(Arena *a, const char *sql)
{
    SlError err = {0};
    List *stmts;
    Query *q;
    SqlCatalog sc = {.lookup = lookup_cb, .ctx = data.cat};
    if (sql_parse(a, sql, (int)strlen(sql), &stmts, &err) < 0 ||
        sql_analyze_with(a, &sc, sql, list_nth(stmts, 0), NULL, 0, &q, &err) < 0) {
        CHECK(false, "%s: %s", sql, err.message);
        sl_error_clear(&err);
        return NULL;
    }
    for (const Plan *p = q->plan; p != NULL; p = p->child)
        if (p->kind == PLAN_DISTINCT)
            return p;
    CHECK(false, "%s: no distinct", sql);
    return NULL;
}

static void test_plan(void)
{
    CatColumn cols[2] = {{"a", {TYPE_INT8, -1}, false}, {"ts", {TYPE_TIMESTAMP, -1}, false}};
    CatRelation def = {.name = "s", .kind = REL_STREAM, .ncols = 2, .cols = cols,
                       .sql = "", .options = "{}"};
    const CatRelation *rel;
    SlError err = {0};
    CHECK(cat_create_relation(data.cat, &def, &rel, &err) == 0, "%s", err.message);
    Arena a;
    arena_init(&a, 0);
    const Plan *p = distinct_of(&a, "SELECT DISTINCT a, ts FROM s");
    EngOp *op = p ? eng_op_distinct_plan(p, &us_time, &err) : NULL;
    CHECK(op != NULL, "%s", err.message);
    Harness h;
    h_attach(&h, op, 1, 0);
    h_batch(&h, ROWS(T(1, 2), T(2, 1)), 2, NULL, 0);
    expect_bag(&h.last, "from SQL", L("1|0", "2|0"), W(1, 1));
    h_close(&h);
    /* DISTINCT ON all the columns is DISTINCT */
    p = distinct_of(&a, "SELECT DISTINCT ON (ts, a) a, ts FROM s");
    op = p ? eng_op_distinct_plan(p, NULL, &err) : NULL;
    CHECK(op != NULL, "%s", err.message);
    eng_op_free(op);
    /* DISTINCT ON some: refused */
    p = distinct_of(&a, "SELECT DISTINCT ON (a) a, ts FROM s ORDER BY a, ts");
    op = p ? eng_op_distinct_plan(p, NULL, &err) : NULL;
    CHECK(op == NULL && strcmp(err.sqlstate, "0A000") == 0, "%s", err.sqlstate);
    CHECK(err.message && strstr(err.message, "DISTINCT ON"), "%s", err.message);
    eng_op_free(op);
    sl_error_clear(&err);
    arena_destroy(&a);
}

static EngOp *mk_distinct(void)
{
    return eng_op_distinct_new(us_cols, 2, &us_time);
}

int main(void)
{
    unit_data_open(&data, "engine-distinct", true);
    test_basic();
    test_failed_batch();
    test_watermark();
    test_plan();
    for (uint64_t seed = 1; seed <= 8; seed++)
        us_random(seed, ENG_SET_DISTINCT, mk_distinct);
    unit_data_close(&data);
    return unit_done("engine_distinct");
}
