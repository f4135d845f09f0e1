/*
 * test_engine_setop.c -- the operator graph's set operations
 * (src/engine/op_setop.c) alone in a graph, their state in a real state
 * store (unit_data.h): UNION ALL (weights passed on, retractions too),
 * UNION, INTERSECT [ALL] and EXCEPT [ALL] with PostgreSQL's multiset
 * rules, both inputs in one batch, duplicates (weights 2 and -2), a row
 * vanishing and coming back, restore, a failed batch rerun, column types
 * that differ (42804), the operators made from analyzed SQL; then a
 * randomized check of each kind against a model written here
 * (unit_set.h: both inputs' multisets accumulated, each row's
 * multiplicity from its counts) over random batch splits, fixed seeds.
 */
#include "unit_set.h"

#define T(a, w) {(a), 0, (w)}

static EngOp *setop(SetOpKind k, bool all)
{
    SlError err = {0};
    EngOp *op = eng_op_setop_new(k, all, us_cols, 2, &us_time, us_cols, 2, &us_time, &err);
    CHECK(op != NULL, "%s", err.message);
    sl_error_clear(&err);
    return op;
}

static void test_union_all(void)
{
    Harness h;
    h_attach(&h, setop(SETOP_UNION, true), 2, 0);
    CHECK(h.op->bound == ENG_BOUND_NONE);
    h_batch(&h, ROWS(T(1, 1), T(2, 2)), 2, ROWS(T(1, 1), T(3, -1)), 2);
    expect_bag(&h.last, "union all", L("1|0", "2|0", "3|0"), W(2, 2, -1));
    /* the watermark: the least of the two */
    const int64_t wm[2] = {7, 5};
    CHECK(h_batch_ex(&h, NULL, 0, NULL, 0, wm, true) == 0);
    CHECK(h.g->op_wm[0] == 5, "%lld", (long long)h.g->op_wm[0]);
    h_close(&h);
}

/* A two-input operator's watermark is the least of its inputs' when both
 * edges have the same time columns; none when they differ. */
static void test_watermark(void)
{
    const int64_t wm[2] = {9000000, 4000000};
    for (int all = 0; all < 2; all++) {
        SlError err = {0};
        Harness h;
        h_attach(&h, setop(SETOP_INTERSECT, all), 2, 0);
        CHECK(h.op->out_time.n == 1 && h.op->out_time.cols[0].col == 1);
        CHECK(h_batch_ex(&h, ROWS(T(1, 1)), 1, ROWS(T(1, 1)), 1, wm, true) == 0);
        CHECK(h.g->op_wm[0] == 4000000, "%lld", (long long)h.g->op_wm[0]);
        h_close(&h);
        EngOp *ops[2] = {
            eng_op_setop_new(SETOP_EXCEPT, all, us_cols, 2, &us_time, us_cols, 2, NULL, &err),
            eng_op_setop_new(SETOP_UNION, all, us_cols, 2, NULL, us_cols, 2, &us_time, &err),
        };
        for (int i = 0; i < 2; i++) {
            h_attach(&h, ops[i], 2, 0);
            CHECK(h.op->out_time.n == 0);
            CHECK(h_batch_ex(&h, ROWS(T(1, 1)), 1, NULL, 0, wm, true) == 0);
            CHECK(h.g->op_wm[0] == INT64_MIN, "%d %d: %lld", all, i, (long long)h.g->op_wm[0]);
            h_close(&h);
        }
    }
}

static void test_union(void)
{
    Harness h;
    h_attach(&h, setop(SETOP_UNION, false), 2, 0);
    h_batch(&h, ROWS(T(1, 2), T(NULLV, 1)), 2, ROWS(T(1, 1), T(2, 1), T(NULLV, 1)), 3);
    expect_bag(&h.last, "union", L("1|0", "2|0", "N|0"), W(1, 1, 1));
    /* 1 leaves the left; the right still has it */
    h_batch(&h, ROWS(T(1, -2)), 1, NULL, 0);
    expect_bag(&h.last, "still on the right", NONE, W(0));
    h_restore(&h);
    h_batch(&h, NULL, 0, ROWS(T(1, -1), T(2, -1), T(2, 1)), 3);
    expect_bag(&h.last, "gone from both", L("1|0"), W(-1));
    expect_bag(&h.out, "sum", L("2|0", "N|0"), W(1, 1));
    h_close(&h);
}

static void test_intersect(void)
{
    Harness h, ha;
    h_attach(&h, setop(SETOP_INTERSECT, false), 2, 0);
    h_attach(&ha, setop(SETOP_INTERSECT, true), 2, 0);
    Harness *hs[2] = {&h, &ha};
    const TRow l1[] = {T(1, 3), T(2, 1), T(NULLV, 2)}, r1[] = {T(1, 2), T(3, 1), T(NULLV, 1)};
    for (int i = 0; i < 2; i++)
        h_batch(hs[i], l1, 3, r1, 3);
    expect_bag(&h.last, "intersect", L("1|0", "N|0"), W(1, 1));
    expect_bag(&ha.last, "intersect all: min", L("1|0", "N|0"), W(2, 1));
    /* the right loses a copy of 1, the left gains 3 and its retraction */
    const TRow l2[] = {T(3, 1), T(3, -1)}, r2[] = {T(1, -1)};
    for (int i = 0; i < 2; i++)
        h_batch(hs[i], l2, 2, r2, 1);
    expect_bag(&h.last, "intersect: 1 still in both", NONE, W(0));
    expect_bag(&ha.last, "intersect all: one fewer", L("1|0"), W(-1));
    /* a failed batch rerun, after restore */
    const TRow l3[] = {T(3, 2)}, r3[] = {T(1, -1)};
    for (int i = 0; i < 2; i++) {
        CHECK(h_batch_ex(hs[i], l3, 1, r3, 1, NULL, false) == 0);
        h_batch(hs[i], l3, 1, r3, 1);
    }
    expect_bag(&h.last, "intersect: 1 leaves, 3 comes", L("1|0", "3|0"), W(-1, 1));
    expect_bag(&ha.last, "intersect all: 1 leaves, 3 comes", L("1|0", "3|0"), W(-1, 1));
    expect_bag(&h.out, "intersect sum", L("3|0", "N|0"), W(1, 1));
    expect_bag(&ha.out, "intersect all sum", L("3|0", "N|0"), W(1, 1));
    for (int i = 0; i < 2; i++)
        h_close(hs[i]);
}

static void test_except(void)
{
    Harness h, ha;
    h_attach(&h, setop(SETOP_EXCEPT, false), 2, 0);
    h_attach(&ha, setop(SETOP_EXCEPT, true), 2, 0);
    Harness *hs[2] = {&h, &ha};
    const TRow l1[] = {T(1, 3), T(2, 1), T(NULLV, 1)}, r1[] = {T(1, 1), T(NULLV, 1)};
    for (int i = 0; i < 2; i++)
        h_batch(hs[i], l1, 3, r1, 2);
    expect_bag(&h.last, "except", L("2|0"), W(1));
    expect_bag(&ha.last, "except all: l - r", L("1|0", "2|0"), W(2, 1));
    /* the right gains 2 copies of 1 (weight 2) and 2 */
    const TRow r2[] = {T(1, 2), T(2, 1)};
    for (int i = 0; i < 2; i++)
        h_batch(hs[i], NULL, 0, r2, 2);
    expect_bag(&h.last, "except: 2 leaves", L("2|0"), W(-1));
    expect_bag(&ha.last, "except all: 1 and 2 leave", L("1|0", "2|0"), W(-2, -1));
    /* the right loses them again (weight -2): 1 comes back */
    h_restore(&h);
    h_restore(&ha);
    const TRow r3[] = {T(1, -2), T(NULLV, -1)};
    for (int i = 0; i < 2; i++)
        h_batch(hs[i], NULL, 0, r3, 2);
    expect_bag(&h.last, "except: NULL comes", L("N|0"), W(1));
    expect_bag(&ha.last, "except all: 1 twice, NULL", L("1|0", "N|0"), W(2, 1));
    /* a right side retracting what it never had fails the batch */
    CHECK(h_batch_ex(&h, NULL, 0, ROWS(T(9, -1)), 1, NULL, true) < 0);
    CHECK(strcmp(h.sqlstate, "0A000") == 0, "%s", h.sqlstate);
    expect_bag(&h.out, "except sum", L("N|0"), W(1));
    expect_bag(&ha.out, "except all sum", L("1|0", "1|0", "N|0"), W(1, 1, 1));
    EngOpStats st;
    ha.op->vt->stats(ha.op, &st);
    CHECK(st.rows == 3, "except all keeps 1, 2, NULL: %lld", (long long)st.rows);
    for (int i = 0; i < 2; i++)
        h_close(hs[i]);
}

static void test_types(void)
{
    static const ColumnDesc other[2] = {{"a", {TYPE_TEXT, -1, TYPE_UNKNOWN}}, {"ts", {TYPE_TIMESTAMP, -1, TYPE_UNKNOWN}}};
    SlError err = {0};
    for (int all = 0; all < 2; all++) {
        EngOp *op = eng_op_setop_new(SETOP_INTERSECT, all, us_cols, 2, NULL, other, 2, NULL,
                                     &err);
        CHECK(op == NULL && strcmp(err.sqlstate, "42804") == 0, "%s", err.sqlstate);
        sl_error_clear(&err);
        op = eng_op_setop_new(SETOP_UNION, all, us_cols, 2, NULL, other, 2, NULL, &err);
        CHECK(op == NULL && strcmp(err.sqlstate, "42804") == 0, "%s", err.sqlstate);
        sl_error_clear(&err);
    }
}

static void test_plan(void)
{
    static const char *const names[2] = {"l", "r"};
    for (int i = 0; i < 2; i++) {
        CatColumn cols[2] = {{"a", {TYPE_INT8, -1, TYPE_UNKNOWN}, false}, {"ts", {TYPE_TIMESTAMP, -1, TYPE_UNKNOWN}, false}};
        CatRelation def = {.name = names[i], .kind = REL_STREAM, .ncols = 2, .cols = cols,
                           .sql = "", .options = "{}"};
        const CatRelation *rel;
        SlError err = {0};
        CHECK(cat_create_relation(data.cat, &def, &rel, &err) == 0, "%s", err.message);
    }
    static const struct {
        const char *sql, *explain;
    } cases[] = {
        {"SELECT a, ts FROM l UNION ALL SELECT a, ts FROM r", "union all of 2 columns: no state"},
        {"SELECT a, ts FROM l UNION SELECT a, ts FROM r", "union of 2 columns: unbounded"},
        {"SELECT a, ts FROM l INTERSECT SELECT a, ts FROM r",
         "intersect of 2 columns: unbounded"},
        {"SELECT a, ts FROM l INTERSECT ALL SELECT a, ts FROM r",
         "intersect all of 2 columns: unbounded"},
        {"SELECT a, ts FROM l EXCEPT SELECT a, ts FROM r", "except of 2 columns: unbounded"},
        {"SELECT a, ts FROM l EXCEPT ALL SELECT a, ts FROM r",
         "except all of 2 columns: unbounded"},
    };
    Arena a;
    arena_init(&a, 0);
    for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
        SlError err = {0};
        const Plan *p = us_plan_of(&a, PLAN_SETOP, cases[i].sql);
        EngOp *op = p ? eng_op_setop_plan(p, &us_time, &us_time, &err) : NULL;
        CHECK(op != NULL, "%s: %s", cases[i].sql, err.message);
        if (op == NULL)
            continue;
        StrBuf sb;
        strbuf_init(&sb);
        op->vt->explain(op, &sb);
        strbuf_putc(&sb, 0);
        CHECK(strcmp(sb.data, cases[i].explain) == 0, "%s: %s", cases[i].sql, sb.data);
        strbuf_free(&sb);
        Harness h;
        h_attach(&h, op, 2, 0);
        h_batch(&h, ROWS(T(1, 2), T(2, 1)), 2, ROWS(T(1, 1), T(3, 1)), 2);
        /* l = {1, 1, 2}, r = {1, 3} */
        const char *const *want[] = {
            L("1|0", "2|0", "3|0"), L("1|0", "2|0", "3|0"), L("1|0"), L("1|0"), L("2|0"),
            L("1|0", "2|0"),
        };
        const int64_t *const wantw[] = {
            W(3, 1, 1), W(1, 1, 1), W(1), W(1), W(1), W(1, 1),
        };
        expect_bag(&h.out, cases[i].sql, want[i], wantw[i]);
        h_close(&h);
    }
    arena_destroy(&a);
}

static EngOp *mk_union(void) { return setop(SETOP_UNION, false); }
static EngOp *mk_intersect(void) { return setop(SETOP_INTERSECT, false); }
static EngOp *mk_intersect_all(void) { return setop(SETOP_INTERSECT, true); }
static EngOp *mk_except(void) { return setop(SETOP_EXCEPT, false); }
static EngOp *mk_except_all(void) { return setop(SETOP_EXCEPT, true); }

int main(void)
{
    unit_data_open(&data, "engine-setop", true);
    test_union_all();
    test_union();
    test_watermark();
    test_intersect();
    test_except();
    test_types();
    test_plan();
    static const struct {
        EngSetKind kind;
        EngOp *(*mk)(void);
    } kinds[] = {
        {ENG_SET_UNION, mk_union}, {ENG_SET_INTERSECT, mk_intersect},
        {ENG_SET_INTERSECT_ALL, mk_intersect_all}, {ENG_SET_EXCEPT, mk_except},
        {ENG_SET_EXCEPT_ALL, mk_except_all},
    };
    for (uint64_t seed = 1; seed <= 6; seed++)
        for (size_t k = 0; k < sizeof(kinds) / sizeof(kinds[0]); k++)
            us_random(seed, kinds[k].kind, kinds[k].mk);
    unit_data_close(&data);
    return unit_done("engine_setop");
}
