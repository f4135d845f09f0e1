/*
 * test_engine_distinct.c -- the operator graph's distinct
 * (src/engine/op_distinct.c) alone in a graph, its state in a real state
 * store (unit_data.h): inserts, retractions, duplicates (weights 2 and
 * -2), a row and its retraction in one batch, a row vanishing and coming
 * back, NULLs equal to each other, checkpoint, restore, a graph built
 * anew over the state, a failed batch rerun, a retraction of a row it
 * never had, its stats and watermark, values equal but written apart
 * (1.0, 1.00) as one row, the operator made from analyzed SQL
 * (DISTINCT ON refused); then a randomized check against a model written
 * here (unit_set.h: the input's multiset accumulated, each row once while
 * it has copies) over random batch splits, with fixed seeds.
 */
#include "unit_set.h"

#define T(a, w) {(a), 0, (w)}

/* The lines of one batch's output ("+1 1.0"), in order (at most 4). */
typedef struct GotLines {
    char l[4][32];
    int  n;
} GotLines;

static int lines_cb(void *arg, const EngDelta *d, EngCtx *cx)
{
    SL_UNUSED(cx);
    GotLines *g = arg;
    StrBuf sb;
    strbuf_init(&sb);
    for (uint32_t r = 0; r < d->rows.nrows && g->n < 4; r++) {
        strbuf_reset(&sb);
        strbuf_printf(&sb, "%+lld ", (long long)d->weights[r]);
        value_format_text(&d->rows.cols[0], r, &sb);
        snprintf(g->l[g->n++], sizeof(g->l[0]), "%.*s", (int)sb.len, sb.data);
    }
    strbuf_free(&sb);
    return 0;
}

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

/* Rows equal as SQL's "=" sees them are one row (1.0 and 1.00, as
 * PostgreSQL's SELECT DISTINCT gives one); the row shown is the first
 * copy, kept while the output shows it, and its retraction is of that
 * copy's form. */
static void test_equal_values(void)
{
    static const ColumnDesc ncols[1] = {{"n", {TYPE_NUMERIC, -1, TYPE_UNKNOWN}}};
    Harness h;
    h_attach(&h, eng_op_distinct_new(ncols, 1, NULL), 1, 0);
    const char *const in[][3] = {{"1.0", "1.00", "2"}, {"1.00", "1.0", "2"}, {"1.000", "2", "2"}};
    const int64_t w[][3] = {{1, 1, 1}, {-1, -1, -1}, {1, 1, -1}};
    const char *const want[][3] = {{"+1 1.0", "+1 2", NULL}, {"-1 1.0", "-1 2", NULL},
                                   {"+1 1.000", NULL}};
    for (int b = 0; b < 3; b++) {
        SlError err = {0};
        EvalCtx ecx = {.arena = &h.batch, .err = &err};
        StateBatch *wb = state_batch_new();
        EngCtx cx = {.arena = &h.batch, .err = &err, .ecx = &ecx, .st = data.st, .wb = wb};
        EngDelta d;
        eng_delta_init(&d, &h.batch, ncols, 1, 3);
        for (int i = 0; i < 3; i++) {
            CHECK(value_parse_text(&h.batch, ncols[0].type, in[b][i], strlen(in[b][i]),
                                   &d.rows.cols[0], i, -1, &err) == 0);
            d.rows.cols[0].nulls[i] = 0;
            d.weights[i] = w[b][i];
        }
        d.rows.nrows = 3;
        const EngDelta *ds[1] = {&d};
        GotLines got = {0};
        CHECK(eng_graph_run(h.g, &cx, ds, NULL, NULL, lines_cb, &got) == 0, "%s", err.message);
        CHECK(state_batch_commit(data.st, wb, false, &err) == 0, "%s", err.message);
        int n = 0;
        for (; n < 3 && want[b][n] != NULL; n++)
            CHECK(n < got.n && strcmp(got.l[n], want[b][n]) == 0, "batch %d line %d: %s", b, n,
                  n < got.n ? got.l[n] : "(none)");
        CHECK(got.n == n, "batch %d: %d lines", b, got.n);
        state_batch_free(wb);
        arena_reset(&h.batch);
        if (b == 1)
            h_restore(&h);
    }
    h_close(&h);
}

static void test_plan(void)
{
    CatColumn cols[2] = {{"a", {TYPE_INT8, -1, TYPE_UNKNOWN}, false}, {"ts", {TYPE_TIMESTAMP, -1, TYPE_UNKNOWN}, false}};
    CatRelation def = {.name = "s", .kind = REL_STREAM, .ncols = 2, .cols = cols,
                       .sql = "", .options = "{}"};
    const CatRelation *rel;
    SlError err = {0};
    CHECK(cat_create_relation(data.cat, &def, &rel, &err) == 0, "%s", err.message);
    Arena a;
    arena_init(&a, 0);
    const Plan *p = us_plan_of(&a, PLAN_DISTINCT, "SELECT DISTINCT a, ts FROM s");
    EngOp *op = p ? eng_op_distinct_plan(p, &us_time, &err) : NULL;
    CHECK(op != NULL, "%s", err.message);
    Harness h;
    h_attach(&h, op, 1, 0);
    h_batch(&h, ROWS(T(1, 2), T(2, 1)), 2, NULL, 0);
    expect_bag(&h.last, "from SQL", L("1|0", "2|0"), W(1, 1));
    h_close(&h);
    /* DISTINCT ON all the columns is DISTINCT */
    p = us_plan_of(&a, PLAN_DISTINCT, "SELECT DISTINCT ON (ts, a) a, ts FROM s");
    op = p ? eng_op_distinct_plan(p, NULL, &err) : NULL;
    CHECK(op != NULL, "%s", err.message);
    eng_op_free(op);
    /* DISTINCT ON some: refused */
    p = us_plan_of(&a, PLAN_DISTINCT, "SELECT DISTINCT ON (a) a, ts FROM s ORDER BY a, ts");
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
    test_equal_values();
    test_plan();
    for (uint64_t seed = 1; seed <= 8; seed++)
        us_random(seed, ENG_SET_DISTINCT, mk_distinct);
    unit_data_close(&data);
    return unit_done("engine_distinct");
}
