/*
 * unit_set.h -- what the distinct and set-operation tests share
 * (test_engine_distinct.c, test_engine_setop.c): multisets of text lines,
 * a harness running one operator of op_set.h in a graph over a real state
 * store, and the model the randomized checks compare with.
 *
 *   (Bag, bag_*       a multiset of lines with weights: unit_bag.h)
 *   us_cols, us_time  the rows of the tests: (a bigint, ts timestamp)
 *   Harness, h_*      an operator alone in a graph: batches of rows per
 *                     input committed, thrown away, rerun; restore; the
 *                     output's sum and the last batch's delta as bags
 *   us_plan_of        the node of a kind in an analyzed SELECT's plan
 *   us_mult           the model's multiplicity of a row from its counts,
 *                     written from PostgreSQL's rules, not the operator's
 *   us_random         random inserts and retractions in random batches
 *                     (some restored before, some thrown away and rerun),
 *                     the output equal to the model's after every batch
 *
 * A row's line is "a|ts" (ts as microseconds), NULL as "N".
 */
#ifndef SLUICE_TESTS_UNIT_SET_H
#define SLUICE_TESTS_UNIT_SET_H

#include "unit.h"
#include "unit_data.h"
#include "unit_bag.h"
#include "op_set.h"
#include "sluice/exec.h"
#include "sluice/rowcodec.h"
#include "sql/parser.h"

#include <stdlib.h>
#include <string.h>

#define NULLV INT64_MIN     /* a NULL value in the tests' rows */

static const ColumnDesc us_cols[2] = {
    {"a", {TYPE_INT8, -1, TYPE_UNKNOWN}}, {"ts", {TYPE_TIMESTAMP, -1, TYPE_UNKNOWN}},
};
static const EngEdgeTime us_time = {1, {{1, 0}}};

/* A row of the tests: a, ts (NULLV for NULL) and a weight. */
typedef struct TRow {
    int64_t a, ts, w;
} TRow;

static void row_text(char *out, size_t n, int64_t a, int64_t ts)
{
    char fa[24], ft[24];
    snprintf(fa, sizeof(fa), a == NULLV ? "N" : "%lld", (long long)a);
    snprintf(ft, sizeof(ft), ts == NULLV ? "N" : "%lld", (long long)ts);
    snprintf(out, n, "%s|%s", fa, ft);
}

static int collect_cb(void *arg, const EngDelta *d, EngCtx *cx)
{
    SL_UNUSED(cx);
    Bag *bag = arg;
    CHECK(d->rows.ncols == 2);
    for (uint32_t r = 0; r < d->rows.nrows; r++) {
        int64_t v[2];
        for (int c = 0; c < 2; c++)
            v[c] = vector_is_null(&d->rows.cols[c], r) ? NULLV : d->rows.cols[c].v.i64[r];
        char text[64];
        row_text(text, sizeof(text), v[0], v[1]);
        bag_add(bag, text, d->weights[r]);
    }
    return 0;
}

/* ------------------------------------------------------------ the harness */

static UnitData data;
static uint32_t next_oid = 1;

typedef struct Harness {
    EngGraph *g;
    EngOp    *op;
    int       nin;
    uint32_t  oid;
    Arena     batch;
    Bag       out;          /* the sum of the committed output */
    Bag       last;         /* the last batch's output */
    char      sqlstate[6];  /* the last failed batch's */
} Harness;

/* A harness around op (taken; NULL fails) of nin inputs, query oid oid
 * (0: a new one). */
static void h_attach(Harness *h, EngOp *op, int nin, uint32_t oid)
{
    memset(h, 0, sizeof(*h));
    arena_init(&h->batch, 0);
    h->op = op;
    h->nin = nin;
    h->oid = oid ? oid : next_oid++;
    h->g = eng_graph_new(h->oid);
    const int producers[2] = {-1, -2};
    CHECK(op != NULL && eng_graph_add(h->g, op, producers) == 0);
}

static void h_close(Harness *h)
{
    eng_graph_free(h->g);
    arena_destroy(&h->batch);
    bag_clear(&h->out);
    bag_clear(&h->last);
}

static void make_delta(EngDelta *d, Arena *a, const TRow *rows, int n)
{
    eng_delta_init(d, a, us_cols, 2, (uint32_t)(n > 0 ? n : 1));
    Batch *one = batch_alloc(a, (SlType[]){{TYPE_INT8, -1, TYPE_UNKNOWN}, {TYPE_TIMESTAMP, -1, TYPE_UNKNOWN}}, 2, 1);
    one->nrows = 1;
    for (int i = 0; i < n; i++) {
        int64_t v[2] = {rows[i].a, rows[i].ts};
        for (int c = 0; c < 2; c++) {
            one->cols[c].nulls[0] = v[c] == NULLV;
            one->cols[c].v.i64[0] = v[c] == NULLV ? 0 : v[c];
        }
        eng_delta_append(d, a, one, 0, rows[i].w);
    }
}

/* One batch: rows of input 0 (l, nl) and 1 (r, nr), watermarks (wm: NULL
 * for none); with commit the state committed and the output added to
 * h->out, without it thrown away as a failed batch's and the graph
 * restored (as after a failed one too).  Returns eng_graph_run's. */
static int h_batch_ex(Harness *h, const TRow *l, int nl, const TRow *r, int nr,
                      const int64_t *wm, bool commit)
{
    SlError err = {0};
    EvalCtx ecx = {.arena = &h->batch, .err = &err};
    StateBatch *wb = state_batch_new();
    EngCtx cx = {.arena = &h->batch, .err = &err, .ecx = &ecx, .st = data.st, .wb = wb,
                 .batch_id = 1};
    EngDelta d[2];
    make_delta(&d[0], &h->batch, l, nl);
    make_delta(&d[1], &h->batch, r, nr);
    const EngDelta *ds[2] = {nl ? &d[0] : NULL, nr ? &d[1] : NULL};
    const bool has_wm[2] = {wm != NULL, wm != NULL};
    const int64_t wms[2] = {wm ? wm[0] : 0, wm ? wm[h->nin - 1] : 0};
    bag_clear(&h->last);
    int rc = eng_graph_run(h->g, &cx, ds, has_wm, wms, collect_cb, &h->last);
    if (rc == 0 && commit) {
        CHECK(state_batch_commit(data.st, wb, false, &err) == 0, "%s", err.message);
        for (int i = 0; i < h->last.n; i++)
            bag_add(&h->out, h->last.l[i].text, h->last.l[i].w);
    } else {
        CHECK(eng_graph_restore(h->g, &cx) == 0);
    }
    if (rc < 0)
        memcpy(h->sqlstate, err.sqlstate, sizeof(h->sqlstate));
    state_batch_free(wb);
    sl_error_clear(&err);
    arena_reset(&h->batch);
    return rc;
}

static void h_batch(Harness *h, const TRow *l, int nl, const TRow *r, int nr)
{
    CHECK(h_batch_ex(h, l, nl, r, nr, NULL, true) == 0);
}

/* Forget the cache (as after a failed batch): the next batches read the
 * state back from the store. */
static void h_restore(Harness *h)
{
    SlError err = {0};
    EngCtx cx = {.arena = &h->batch, .err = &err, .st = data.st};
    CHECK(eng_graph_restore(h->g, &cx) == 0);
    arena_reset(&h->batch);
}

/* A bag of the lines given (text, weight; NULL ends) equals got. */
static void expect_bag(const Bag *got, const char *what, const char *const *lines,
                       const int64_t *w)
{
    Bag want = {0};
    for (int i = 0; lines[i] != NULL; i++)
        bag_add(&want, lines[i], w[i]);
    CHECK(bag_equal(got, &want, what), "%s", what);
    bag_clear(&want);
}

#define L(...) ((const char *const[]){__VA_ARGS__, NULL})
#define NONE ((const char *const[]){NULL})
#define W(...) ((const int64_t[]){__VA_ARGS__})
#define ROWS(...) ((const TRow[]){__VA_ARGS__})
#define NROWS(...) ((int)(sizeof((const TRow[]){__VA_ARGS__}) / sizeof(TRow)))

static const CatRelation *lookup_cb(void *ctx, const char *name)
{
    return cat_lookup(ctx, name);
}

/* The first node of kind in a SELECT's plan (down the left children), in
 * a; NULL (and a failed check) when there is none. */
__attribute__((unused))
static const Plan *us_plan_of(Arena *a, PlanKind kind, const char *sql)
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
        if (p->kind == kind)
            return p;
    CHECK(false, "%s: no %s", sql, plan_kind_name(kind));
    return NULL;
}

/* ------------------------------------------------------------- the model */

/* PostgreSQL's multiplicity of a row in the result of kind, from its
 * copies in the left input (l) and the right one (r). */
static int64_t us_mult(EngSetKind kind, int64_t l, int64_t r)
{
    switch (kind) {
    case ENG_SET_DISTINCT:      return l >= 1 ? 1 : 0;
    case ENG_SET_UNION:         return l >= 1 || r >= 1 ? 1 : 0;
    case ENG_SET_INTERSECT:     return l >= 1 && r >= 1 ? 1 : 0;
    case ENG_SET_INTERSECT_ALL: return l < r ? l : r;
    case ENG_SET_EXCEPT:        return l >= 1 && r == 0 ? 1 : 0;
    case ENG_SET_EXCEPT_ALL:    return l > r ? l - r : 0;
    }
    return -1;
}

static uint64_t rng;
static uint64_t rnd(void)
{
    rng ^= rng << 13;
    rng ^= rng >> 7;
    rng ^= rng << 17;
    return rng;
}
static int64_t rnd_in(int64_t n) { return (int64_t)(rnd() % (uint64_t)n); }

/* The rows of the model's inputs so far: a multiset per input, as TRows
 * (each distinct row once, w its copies). */
typedef struct Model {
    TRow rows[2][64];
    int  n[2];
} Model;

static void model_add(Model *m, int s, TRow t)
{
    for (int i = 0; i < m->n[s]; i++)
        if (m->rows[s][i].a == t.a && m->rows[s][i].ts == t.ts) {
            m->rows[s][i].w += t.w;
            if (m->rows[s][i].w == 0)
                m->rows[s][i] = m->rows[s][--m->n[s]];
            return;
        }
    CHECK(m->n[s] < 64);
    m->rows[s][m->n[s]++] = t;
}

static int64_t model_count(const Model *m, int s, int64_t a, int64_t ts)
{
    for (int i = 0; i < m->n[s]; i++)
        if (m->rows[s][i].a == a && m->rows[s][i].ts == ts)
            return m->rows[s][i].w;
    return 0;
}

/* The expected output: every row of either input with its multiplicity. */
static void model_result(const Model *m, EngSetKind kind, Bag *out)
{
    bag_clear(out);
    for (int s = 0; s < 2; s++)
        for (int i = 0; i < m->n[s]; i++) {
            const TRow *t = &m->rows[s][i];
            if (s == 1 && model_count(m, 0, t->a, t->ts) != 0)
                continue;       /* counted with the left's */
            char text[64];
            row_text(text, sizeof(text), t->a, t->ts);
            bag_add(out, text, us_mult(kind, model_count(m, 0, t->a, t->ts),
                                       model_count(m, 1, t->a, t->ts)));
        }
}

/* A random row change of input s: an insertion (weight 1 or 2) of a row
 * of few distinct values, or a retraction of copies the input has. */
static TRow random_change(const Model *m, int s)
{
    if (m->n[s] > 0 && rnd_in(5) < 2) {
        TRow t = m->rows[s][rnd_in(m->n[s])];
        t.w = -(rnd_in(t.w) + 1);
        return t;
    }
    int64_t a = rnd_in(6);
    TRow t = {a == 5 ? NULLV : a, rnd_in(3) * 1000000, rnd_in(3) == 0 ? 2 : 1};
    return t;
}

/* Random batches through a counted operator of kind (made by mk) against
 * the model, seed seed: each batch 1 to 8 changes spread over the
 * inputs; a fifth of the batches restored before, a sixth run once and
 * thrown away, then rerun; every few batches the graph built anew over the
 * same state. */
static void us_random(uint64_t seed, EngSetKind kind, EngOp *(*mk)(void))
{
    int nin = kind == ENG_SET_DISTINCT ? 1 : 2;
    rng = seed * 0x9E3779B97F4A7C15ull + (uint64_t)kind + 1;
    Harness h;
    h_attach(&h, mk(), nin, 0);
    Model m = {0};
    Bag want = {0};
    char what[64];
    snprintf(what, sizeof(what), "random kind %d seed %llu", (int)kind,
             (unsigned long long)seed);
    for (int b = 0; b < 40; b++) {
        TRow rows[2][8];
        int n[2] = {0, 0};
        Model next = m;
        int k = (int)rnd_in(8) + 1;
        for (int i = 0; i < k; i++) {
            int s = (int)rnd_in(nin);
            TRow t = random_change(&next, s);
            model_add(&next, s, t);
            rows[s][n[s]++] = t;
        }
        if (rnd_in(5) == 0)
            h_restore(&h);
        if (rnd_in(6) == 0)
            CHECK(h_batch_ex(&h, rows[0], n[0], rows[1], n[1], NULL, false) == 0, "%s", what);
        if (b % 9 == 8) {
            /* a graph built anew over the committed state */
            Bag keep = h.out;
            memset(&h.out, 0, sizeof(h.out));
            uint32_t oid = h.oid;
            h_close(&h);
            h_attach(&h, mk(), nin, oid);
            h_restore(&h);
            h.out = keep;
        }
        h_batch(&h, rows[0], n[0], rows[1], n[1]);
        m = next;
        model_result(&m, kind, &want);
        char at[96];
        snprintf(at, sizeof(at), "%s batch %d", what, b);
        CHECK(bag_equal(&h.out, &want, at), "%s", at);
    }
    bag_clear(&want);
    h_close(&h);
}

#endif /* SLUICE_TESTS_UNIT_SET_H */
