/*
 * test_engine_dedup.c -- the operator graph's dedup within the watermark
 * (src/engine/op_dedup.c) alone in a graph, its state in a real state
 * store (unit_data.h), keyed on a, its event time ts: the first row of a
 * key kept, duplicates in one batch and across batches, a weight above 1
 * as duplicates, NULL keys equal, a key evicted once the watermark passes
 * its time and its next row emitted again (an edge offset too), a
 * retraction refused (0A000) leaving nothing behind, checkpoint, restore,
 * a graph built anew over the state (eviction from the stored index), a
 * failed batch rerun, many keys evicted at once (the cache dropped),
 * stats, explain, bounds and a bad time column; then
 * a randomized check against a model written here (per key its first
 * row's time, a row emitted when its key is not kept, keys below the
 * watermark forgotten after each batch's rows) over random batch splits
 * and watermark steps, with fixed seeds.
 */
/* the harness of the set operators' tests (rows "a|ts", a real store);
 * its model's functions are not used here */
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wunused-function"
#include "unit_set.h"
#pragma GCC diagnostic pop
#include "op_dedup.h"

#define S(x) ((int64_t)(x) * 1000000)     /* seconds as microseconds */
#define T(a, ts, w) {(a), S(ts), (w)}

static const int key_a[1] = {0};

static EngOp *mk_dedup(void)
{
    SlError err = {0};
    EngOp *op = eng_op_dedup_new(us_cols, 2, key_a, 1, &us_time, 1, &err);
    CHECK(op != NULL, "%s", err.message);
    return op;
}

/* The harness's operator replaced by a new one in a graph built anew over
 * the same state (as at a server's restart); the output's sum kept. */
static void h_anew(Harness *h)
{
    Bag keep = h->out;
    memset(&h->out, 0, sizeof(h->out));
    uint32_t oid = h->oid;
    h_close(h);
    h_attach(h, mk_dedup(), 1, oid);
    h_restore(h);
    h->out = keep;
}

static int64_t stat_rows(const Harness *h, int64_t *evicted)
{
    EngOpStats st;
    h->op->vt->stats(h->op, &st);
    if (evicted)
        *evicted = st.evicted;
    return st.rows;
}

/* The first row of each key; later rows of a kept key dropped. */
static void test_first(void)
{
    Harness h;
    h_attach(&h, mk_dedup(), 1, 0);
    /* in one batch: the first of each key, weight 2 as one, NULLs equal */
    h_batch(&h, ROWS(T(1, 10, 1), T(1, 11, 1), T(2, 12, 2), T(NULLV, 13, 1),
                     T(NULLV, 14, 1), T(1, 10, 1)), 6, NULL, 0);
    expect_bag(&h.last, "first batch", L("1|10000000", "2|12000000", "N|13000000"), W(1, 1, 1));
    /* across batches */
    h_batch(&h, ROWS(T(2, 15, 1), T(3, 16, 3), T(1, 17, 1)), 3, NULL, 0);
    expect_bag(&h.last, "second batch", L("3|16000000"), W(1));
    int64_t ev;
    CHECK(stat_rows(&h, &ev) == 4 && ev == 0, "%lld rows", (long long)stat_rows(&h, NULL));
    /* restore: read back from the store, still duplicates */
    h_restore(&h);
    CHECK(stat_rows(&h, NULL) == 4);
    h_batch(&h, ROWS(T(1, 18, 1), T(NULLV, 18, 1), T(4, 18, 1)), 3, NULL, 0);
    expect_bag(&h.last, "after restore", L("4|18000000"), W(1));
    expect_bag(&h.out, "sum", L("1|10000000", "2|12000000", "N|13000000", "3|16000000",
                                "4|18000000"), W(1, 1, 1, 1, 1));
    StrBuf sb;
    strbuf_init(&sb);
    h.op->vt->explain(h.op, &sb);
    strbuf_putc(&sb, 0);
    CHECK(strcmp(sb.data, "dedup on 1 column within the watermark of ts: evicts by watermark")
          == 0, "%s", sb.data);
    CHECK(h.op->bound == ENG_BOUND_WATERMARK);
    strbuf_free(&sb);
    h_close(&h);
}

/* A key is forgotten once the watermark passes its first row's time
 * (t < wm + offset), and its next row is emitted again. */
static void test_evict(void)
{
    Harness h;
    h_attach(&h, mk_dedup(), 1, 0);
    int64_t wm[1] = {S(5)};
    CHECK(h_batch_ex(&h, ROWS(T(1, 10, 1), T(2, 20, 1)), 2, NULL, 0, wm, true) == 0);
    expect_bag(&h.last, "in", L("1|10000000", "2|20000000"), W(1, 1));
    CHECK(h.g->op_wm[0] == S(5), "%lld", (long long)h.g->op_wm[0]);
    /* at the watermark: not passed yet */
    wm[0] = S(10);
    CHECK(h_batch_ex(&h, ROWS(T(1, 15, 1)), 1, NULL, 0, wm, true) == 0);
    expect_bag(&h.last, "at the watermark", NONE, W(0));
    int64_t ev;
    CHECK(stat_rows(&h, &ev) == 2 && ev == 0);
    /* past it: 1 evicted after the batch's rows (its duplicate here dropped) */
    wm[0] = S(10) + 1;
    CHECK(h_batch_ex(&h, ROWS(T(1, 16, 1), T(5, 12, 1), T(5, 13, 1), T(6, 9, 1)), 4, NULL, 0,
                     wm, true) == 0);
    expect_bag(&h.last, "past it", L("5|12000000", "6|9000000"), W(1, 1));
    /* 6 came late: kept for its batch only */
    CHECK(stat_rows(&h, &ev) == 2 && ev == 2, "%lld rows, %lld evicted",
          (long long)stat_rows(&h, NULL), (long long)ev);
    h_batch(&h, ROWS(T(1, 30, 1), T(2, 25, 1), T(6, 31, 1)), 3, NULL, 0);
    expect_bag(&h.last, "again", L("1|30000000", "6|31000000"), W(1, 1));
    /* a graph built anew over the state: the stored index evicts */
    h_anew(&h);
    CHECK(stat_rows(&h, &ev) == 4 && ev == 2, "anew: %lld rows", (long long)stat_rows(&h, NULL));
    wm[0] = S(25);
    CHECK(h_batch_ex(&h, ROWS(T(2, 26, 1), T(5, 26, 1)), 2, NULL, 0, wm, true) == 0);
    expect_bag(&h.last, "anew: 2 and 5 kept", NONE, W(0));
    /* then both evicted (20 s and 12 s < 25 s); 1 and 6 kept */
    CHECK(stat_rows(&h, &ev) == 2 && ev == 4, "%lld rows", (long long)stat_rows(&h, NULL));
    h_batch(&h, ROWS(T(5, 27, 1), T(2, 27, 1), T(1, 27, 1)), 3, NULL, 0);
    expect_bag(&h.last, "anew: 2 and 5 again", L("5|27000000", "2|27000000"), W(1, 1));
    h_close(&h);
    /* an offset on the edge: rows are at or after wm - 5 s */
    static const EngEdgeTime late = {1, {{1, -5000000}}};
    SlError err = {0};
    h_attach(&h, eng_op_dedup_new(us_cols, 2, key_a, 1, &late, 1, &err), 1, 0);
    wm[0] = S(15);
    CHECK(h_batch_ex(&h, ROWS(T(1, 10, 1), T(2, 9, 1)), 2, NULL, 0, wm, true) == 0);
    CHECK(h.g->op_wm[0] == S(15));
    h_batch(&h, ROWS(T(1, 11, 1), T(2, 11, 1)), 2, NULL, 0);
    expect_bag(&h.last, "offset", L("2|11000000"), W(1));
    h_close(&h);
}

/* Retractions are refused; the failed batch leaves nothing behind; a
 * batch thrown away and rerun is as if it ran once. */
static void test_failed_batch(void)
{
    Harness h;
    h_attach(&h, mk_dedup(), 1, 0);
    h_batch(&h, ROWS(T(1, 1, 1)), 1, NULL, 0);
    CHECK(h_batch_ex(&h, ROWS(T(7, 1, 1), T(1, 1, -1)), 2, NULL, 0, NULL, true) < 0);
    CHECK(strcmp(h.sqlstate, "0A000") == 0, "%s", h.sqlstate);
    const int64_t wm[1] = {S(3)};
    const TRow b[] = {T(7, 2, 1), T(1, 5, 1), T(8, 4, 1)};
    CHECK(h_batch_ex(&h, b, 3, NULL, 0, wm, false) == 0);
    expect_bag(&h.last, "thrown away", L("7|2000000", "8|4000000"), W(1, 1));
    CHECK(h_batch_ex(&h, b, 3, NULL, 0, wm, true) == 0);
    expect_bag(&h.last, "rerun", L("7|2000000", "8|4000000"), W(1, 1));
    h_batch(&h, ROWS(T(1, 6, 1), T(7, 6, 1), T(8, 6, 1)), 3, NULL, 0);
    expect_bag(&h.last, "1 and 7 evicted", L("1|6000000", "7|6000000"), W(1, 1));
    int64_t ev;
    CHECK(stat_rows(&h, &ev) == 3 && ev == 2, "%lld rows %lld evicted",
          (long long)stat_rows(&h, NULL), (long long)ev);
    h_close(&h);
}

/* Many keys evicted at once (the cache dropped at checkpoint, the next
 * batches reading the store): the same answers. */
static void test_many(void)
{
    enum { N = 1500 };
    static TRow rows[N];
    Harness h;
    h_attach(&h, mk_dedup(), 1, 0);
    for (int i = 0; i < N; i++)
        rows[i] = (TRow){i, S(1) + i, 1};
    h_batch(&h, rows, N, NULL, 0);
    CHECK(h.last.n == N && stat_rows(&h, NULL) == N, "%d emitted", h.last.n);
    /* all but the last 100 evicted */
    int64_t wm[1] = {S(1) + N - 100};
    CHECK(h_batch_ex(&h, rows, 10, NULL, 0, wm, true) == 0);
    CHECK(h.last.n == 0 && stat_rows(&h, NULL) == 100, "%lld kept",
          (long long)stat_rows(&h, NULL));
    for (int i = 0; i < N; i++)
        rows[i].ts = S(3) + i;
    h_batch(&h, rows, N, NULL, 0);
    CHECK(h.last.n == N - 100 && stat_rows(&h, NULL) == N, "%d emitted again", h.last.n);
    CHECK(bag_get(&h.last, "0|3000000") == 1 && bag_get(&h.last, "1499|3001499") == 0);
    h_batch(&h, rows, N, NULL, 0);
    CHECK(h.last.n == 0, "%d emitted", h.last.n);
    h_close(&h);
}

/* Without a time column nothing is evicted; bad columns are refused. */
static void test_unbounded(void)
{
    SlError err = {0};
    Harness h;
    h_attach(&h, eng_op_dedup_new(us_cols, 2, key_a, 1, &us_time, -1, &err), 1, 0);
    CHECK(h.op->bound == ENG_BOUND_UNBOUNDED);
    const int64_t wm[1] = {S(100)};
    CHECK(h_batch_ex(&h, ROWS(T(1, 1, 1)), 1, NULL, 0, wm, true) == 0);
    CHECK(h_batch_ex(&h, ROWS(T(1, 200, 1)), 1, NULL, 0, wm, true) == 0);
    expect_bag(&h.out, "never evicted", L("1|1000000"), W(1));
    CHECK(h.g->op_wm[0] == S(100));
    StrBuf sb;
    strbuf_init(&sb);
    h.op->vt->explain(h.op, &sb);
    strbuf_putc(&sb, 0);
    CHECK(strcmp(sb.data, "dedup on 1 column: unbounded") == 0, "%s", sb.data);
    strbuf_free(&sb);
    h_close(&h);
    /* both columns as the key */
    const int both[2] = {1, 0};
    h_attach(&h, eng_op_dedup_new(us_cols, 2, both, 2, NULL, -1, &err), 1, 0);
    h_batch(&h, ROWS(T(1, 1, 1), T(1, 2, 1), T(1, 1, 1)), 3, NULL, 0);
    expect_bag(&h.last, "two columns", L("1|1000000", "1|2000000"), W(1, 1));
    h_close(&h);
    /* a time column the edge does not have, a key out of range, none */
    CHECK(eng_op_dedup_new(us_cols, 2, key_a, 1, &us_time, 0, &err) == NULL &&
          strcmp(err.sqlstate, "22023") == 0);
    sl_error_clear(&err);
    CHECK(eng_op_dedup_new(us_cols, 2, key_a, 1, NULL, 1, &err) == NULL);
    sl_error_clear(&err);
    const int bad[1] = {2};
    CHECK(eng_op_dedup_new(us_cols, 2, bad, 1, NULL, -1, &err) == NULL);
    sl_error_clear(&err);
    CHECK(eng_op_dedup_new(us_cols, 2, key_a, 0, NULL, -1, &err) == NULL);
    sl_error_clear(&err);
}

/* ------------------------------------------------------------- the model */

/* Per key (a: 0..4, 5 for NULL) whether it is kept and its time. */
typedef struct DModel {
    bool    kept[6];
    int64_t t[6];
    int64_t wm;             /* INT64_MIN: none yet */
} DModel;

/* One batch through the model: each row emitted once when its key is not
 * kept (then kept with its time), else dropped; then, with a watermark,
 * the keys below it forgotten. */
static void model_batch(DModel *m, const TRow *rows, int n, const int64_t *wm, Bag *out)
{
    for (int i = 0; i < n; i++) {
        int k = rows[i].a == NULLV ? 5 : (int)rows[i].a;
        if (m->kept[k])
            continue;
        m->kept[k] = true;
        m->t[k] = rows[i].ts;
        char text[64];
        row_text(text, sizeof(text), rows[i].a, rows[i].ts);
        bag_add(out, text, 1);
    }
    if (wm != NULL && *wm > m->wm)
        m->wm = *wm;
    for (int k = 0; k < 6; k++)
        if (m->kept[k] && m->t[k] < m->wm)
            m->kept[k] = false;
}

/* Random batches (1 to 8 rows, times at or after the watermark, weights 1
 * or 2; the watermark moving 0 to 2 s in half of them) against the model,
 * seed seed; a fifth restored before, a sixth run once and thrown away
 * then rerun, every ninth on a graph built anew over the state. */
static void random_check(uint64_t seed)
{
    rng = seed * 0x9E3779B97F4A7C15ull + 77;
    Harness h;
    h_attach(&h, mk_dedup(), 1, 0);
    DModel m = {.wm = INT64_MIN};
    Bag want = {0};
    int64_t wm = 0;
    for (int b = 0; b < 60; b++) {
        TRow rows[8];
        int n = (int)rnd_in(8) + 1;
        for (int i = 0; i < n; i++) {
            int64_t a = rnd_in(6);
            rows[i] = (TRow){a == 5 ? NULLV : a, wm + rnd_in(5) * 500000, rnd_in(3) ? 1 : 2};
        }
        bool has_wm = rnd_in(2) == 0;
        if (has_wm)
            wm += rnd_in(3) * 1000000;
        if (rnd_in(5) == 0)
            h_restore(&h);
        if (rnd_in(6) == 0)
            CHECK(h_batch_ex(&h, rows, n, NULL, 0, has_wm ? &wm : NULL, false) == 0);
        if (b % 9 == 8)
            h_anew(&h);
        CHECK(h_batch_ex(&h, rows, n, NULL, 0, has_wm ? &wm : NULL, true) == 0);
        Bag got_batch = {0};
        model_batch(&m, rows, n, has_wm ? &wm : NULL, &got_batch);
        char at[64];
        snprintf(at, sizeof(at), "dedup seed %llu batch %d", (unsigned long long)seed, b);
        CHECK(bag_equal(&h.last, &got_batch, at), "%s", at);
        for (int i = 0; i < got_batch.n; i++)
            bag_add(&want, got_batch.l[i].text, got_batch.l[i].w);
        bag_clear(&got_batch);
        CHECK(bag_equal(&h.out, &want, at), "%s: sum", at);
        int64_t kept = 0;
        for (int k = 0; k < 6; k++)
            kept += m.kept[k];
        CHECK(stat_rows(&h, NULL) == kept, "%s: %lld rows, model %lld", at,
              (long long)stat_rows(&h, NULL), (long long)kept);
    }
    bag_clear(&want);
    h_close(&h);
}

int main(void)
{
    unit_data_open(&data, "engine-dedup", true);
    test_first();
    test_evict();
    test_failed_batch();
    test_many();
    test_unbounded();
    for (uint64_t seed = 1; seed <= 8; seed++)
        random_check(seed);
    unit_data_close(&data);
    return unit_done("engine_dedup");
}
