/*
 * unit_engine.h -- what the operator graph's C unit tests share
 * (test_engine_agg.c, test_engine_diff.c, test_engine_time.c): a Runtime over a test's data
 * directory to make tables and ask the batch engine, the plan of a
 * SELECT, a graph run over one batch with its state committed, and the
 * graph's output summed as rows.
 *
 *   ue_open, ue_close        the data directory, catalog, store, Runtime
 *   ue_sql                   run statements; the last one's rows (or
 *                            "ERROR <sqlstate> <message>") as sorted lines
 *   ue_compile               a SELECT's plan -> eng_compile's graph (or its
 *                            error as "ERROR <sqlstate> <message>"), its
 *                            sources' SCANs in the UeEnv
 *   ue_compile_time          the same with the sources' event time
 *                            (eng_compile_query, with the query's
 *                            InitPlans)
 *   ue_scan_time             an EngScanTimeFn: a stream's WATERMARK column
 *   UeOut, ue_out_*          a graph's output: each delta's rows as text
 *                            lines with weights ("+1 a|b"), and the sum of
 *                            every committed delta as sorted lines
 *   ue_delta                 a delta of rows written as text ("a|5|NULL")
 *   ue_run                   one batch through a graph: deltas in, state
 *                            committed (or thrown away), output collected
 *   ue_run_wm                the same with the sources' watermarks
 *   ue_outputs_equal         a graph's summed output against the batch
 *                            engine's answer to a query
 *   ue_op_of                 a graph's first operator of a kind
 *   ue_ts_time               an EngScanTimeFn: the column named ts
 *
 * Rows are written as unit_rows_cb writes them (value_format_text, NULL as
 * "NULL", columns joined with '|').
 */
#ifndef SLUICE_TESTS_UNIT_ENGINE_H
#define SLUICE_TESTS_UNIT_ENGINE_H

#include "compile.h"
#include "keymap.h"
#include "sluice/options.h"
#include "sluice/runtime.h"
#include "unit_data.h"
#include "unit_runtime.h"

#include <stdlib.h>
#include <string.h>

typedef struct UeEnv {
    UnitData d;
    Runtime *rt;
    Arena    plans;         /* the analyzed queries: as long as the test */
    const ColumnDesc *scan_cols;    /* the last ue_compile's first source's */
    int      scan_ncols;
    const Plan **scans;             /* the last ue_compile's sources' SCANs */
    int      nscans;
} UeEnv;

__attribute__((unused))
static void ue_open(UeEnv *e, const char *name)
{
    unit_data_open(&e->d, name, true);
    e->rt = unit_runtime_new(e->d.cat, e->d.st, 1);
    rt_init(e->rt);
    arena_init(&e->plans, 0);
}

__attribute__((unused))
static void ue_close(UeEnv *e)
{
    arena_destroy(&e->plans);
    rt_shutdown(e->rt);
    rt_destroy(e->rt);
    unit_data_close(&e->d);
}

static int ue_cmp_lines(const void *a, const void *b)
{
    return strcmp(*(char *const *)a, *(char *const *)b);
}

/* The lines of text sorted, into out (reset first). */
static void ue_sort_lines(const char *text, StrBuf *out)
{
    size_t n = 0, cap = 16;
    char **lines = malloc(sizeof(char *) * cap);
    char *copy = strdup(text ? text : ""), *save = NULL;
    for (char *s = strtok_r(copy, "\n", &save); s; s = strtok_r(NULL, "\n", &save)) {
        if (n == cap)
            lines = realloc(lines, sizeof(char *) * (cap *= 2));
        lines[n++] = s;
    }
    qsort(lines, n, sizeof(char *), ue_cmp_lines);
    strbuf_reset(out);
    for (size_t i = 0; i < n; i++) {
        strbuf_puts(out, lines[i]);
        strbuf_putc(out, '\n');
    }
    free(lines);
    free(copy);
}

/* Runs every statement of sql through the Runtime; out gets the last
 * one's rows as sorted lines, or its error. */
__attribute__((unused))
static void ue_sql(UeEnv *e, const char *sql, StrBuf *out)
{
    Arena a;
    arena_init(&a, 0);
    SlError err = {0};
    List *stmts;
    StrBuf rows;
    strbuf_init(&rows);
    char tag[64];
    if (rt_parse(&a, sql, strlen(sql), &stmts, &err) < 0)
        goto fail;
    for (int i = 0; i < list_len(stmts); i++) {
        Prepared *p;
        strbuf_reset(&rows);
        if (rt_prepare(e->rt, &a, sql, list_nth(stmts, i), NULL, 0, &p, &err) < 0)
            goto fail;
        ResultSink sink = {&rows, unit_rows_cb};
        if (rt_execute(p, NULL, 0, &sink, tag, 64, &err) < 0)
            goto fail;
    }
    ue_sort_lines(rows.data, out);
    goto done;
fail:
    strbuf_reset(out);
    strbuf_printf(out, "ERROR %s %s", err.sqlstate, err.message);
    sl_error_clear(&err);
done:
    strbuf_free(&rows);
    arena_destroy(&a);
}

static const CatRelation *ue_lookup_cb(void *ctx, const char *name)
{
    return cat_lookup(ctx, name);
}

/* The graph of a SELECT (query oid oid), or NULL with the error in out;
 * its sources timed by time_fn (eng_compile_time; NULL: none).  The plan
 * lives in e->plans. */
static EngGraph *ue_compile_time(UeEnv *e, const char *sql, uint32_t oid,
                                 EngScanTimeFn time_fn, void *time_arg, StrBuf *out)
{
    SlError err = {0};
    List *stmts;
    Query *q;
    const Plan **scans;
    int nscans;
    EngGraph *g = NULL;
    SqlCatalog sc = {ue_lookup_cb, e->d.cat, NULL, NULL};
    strbuf_reset(out);
    if (rt_parse(&e->plans, sql, strlen(sql), &stmts, &err) < 0 ||
        sql_analyze_with(&e->plans, &sc, sql, list_nth(stmts, 0), NULL, 0, &q, &err) < 0)
        goto fail;
    g = eng_compile_query(q->plan, q->init, q->ninit, oid, &e->plans, time_fn, time_arg, &scans,
                          &nscans, &err);
    if (g == NULL)
        goto fail;
    e->scans = scans;
    e->nscans = nscans;
    e->scan_cols = scans[0]->cols;
    e->scan_ncols = scans[0]->ncols;
    return g;
fail:
    strbuf_printf(out, "ERROR %s %s", err.sqlstate, err.message);
    sl_error_clear(&err);
    return NULL;
}

/* The source's watermark column from its relation's options (none for a
 * table), offset 0: the watermarks a test passes are already the max
 * event time less watermark_delay_us. */
__attribute__((unused))
static void ue_scan_time(void *arg, const Plan *scan, EngEdgeTime *out)
{
    SL_UNUSED(arg);
    const CatRelation *rel = scan->u.scan.rel;
    Arena a;
    arena_init(&a, 0);
    Options o;
    SlError err = {0};
    CHECK(opts_parse(&a, rel->options, &o, &err) == 0, "%s", err.message);
    const char *col = opts_get(&o, "watermark_column");
    for (int c = 0; col != NULL && c < scan->ncols; c++)
        if (strcmp(scan->cols[c].name, col) == 0) {
            out->n = 1;
            out->cols[0] = (EngTimeCol){c, 0};
        }
    sl_error_clear(&err);
    arena_destroy(&a);
}

/* ue_compile_time without event time (eng_compile's graph). */
__attribute__((unused))
static EngGraph *ue_compile(UeEnv *e, const char *sql, uint32_t oid, StrBuf *out)
{
    return ue_compile_time(e, sql, oid, NULL, NULL, out);
}

/* A delta of n rows over cols, row i written as text ("a|5|NULL": the
 * columns' text input, NULL for NULL) with weight w[i], in a. */
__attribute__((unused))
static EngDelta ue_delta(Arena *a, const ColumnDesc *cols, int ncols, const char *const *rows,
                         const int64_t *w, int n)
{
    EngDelta d;
    eng_delta_init(&d, a, cols, ncols, (uint32_t)n);
    for (int i = 0; i < n; i++) {
        char *copy = strdup(rows[i]), *save = NULL, *f = strtok_r(copy, "|", &save);
        uint32_t r = d.rows.nrows++;
        for (int c = 0; c < ncols; c++, f = strtok_r(NULL, "|", &save)) {
            Vector *v = &d.rows.cols[c];
            SlError err = {0};
            CHECK(f != NULL, "%s: too few columns", rows[i]);
            if (f == NULL || strcmp(f, "NULL") == 0) {
                v->nulls[r] = 1;
                continue;
            }
            v->nulls[r] = 0;
            CHECK(value_parse_text(a, cols[c].type, f, strlen(f), v, r, -1, &err) == 0,
                  "%s: %s", f, err.message);
            sl_error_clear(&err);
        }
        d.weights[r] = w[i];
        free(copy);
    }
    return d;
}

/* -------------------------------------------------------------- output */

typedef struct UeOut {
    Arena   keys;
    EngMap  sum;            /* row text -> weight (intptr_t), committed */
    StrBuf  batch;          /* this batch's deltas: "+1 a|b" lines */
    /* this batch's rows, applied to sum at commit */
    size_t  npend, cap;
    char  **pend_rows;
    int64_t *pend_w;
} UeOut;

__attribute__((unused))
static void ue_out_init(UeOut *o)
{
    memset(o, 0, sizeof(*o));
    arena_init(&o->keys, 0);
    eng_map_init(&o->sum, &o->keys);
    strbuf_init(&o->batch);
}

__attribute__((unused))
static void ue_out_free(UeOut *o)
{
    for (size_t i = 0; i < o->npend; i++)
        free(o->pend_rows[i]);
    free(o->pend_rows);
    free(o->pend_w);
    eng_map_free(&o->sum);
    arena_destroy(&o->keys);
    strbuf_free(&o->batch);
}

static int ue_out_cb(void *arg, const EngDelta *d, EngCtx *cx)
{
    SL_UNUSED(cx);
    UeOut *o = arg;
    StrBuf row;
    strbuf_init(&row);
    for (uint32_t i = 0; i < d->rows.nrows; i++) {
        strbuf_reset(&row);
        unit_row_text(&d->rows, i, &row);
        strbuf_printf(&o->batch, "%+lld %s\n", (long long)d->weights[i], row.data);
        if (o->npend == o->cap) {
            o->cap = o->cap ? o->cap * 2 : 64;
            o->pend_rows = realloc(o->pend_rows, sizeof(char *) * o->cap);
            o->pend_w = realloc(o->pend_w, sizeof(int64_t) * o->cap);
        }
        o->pend_rows[o->npend] = strdup(row.data);
        o->pend_w[o->npend++] = d->weights[i];
    }
    strbuf_free(&row);
    return 0;
}

static void ue_out_end(UeOut *o, bool commit)
{
    for (size_t i = 0; i < o->npend; i++) {
        if (commit) {
            bool isnew;
            void **slot = eng_map_upsert(&o->sum, o->pend_rows[i], strlen(o->pend_rows[i]),
                                         &isnew);
            *slot = (void *)((intptr_t)*slot + (intptr_t)o->pend_w[i]);
        }
        free(o->pend_rows[i]);
    }
    o->npend = 0;
}

/* The committed sum as sorted lines (a row of weight w written w times);
 * a row of negative weight is written "NEGATIVE <w> <row>". */
__attribute__((unused))
static void ue_out_lines(const UeOut *o, StrBuf *out)
{
    StrBuf all;
    strbuf_init(&all);
    for (uint32_t s = 0; s < o->sum.cap; s++) {
        const EngMapSlot *sl = &o->sum.slots[s];
        if (sl->key == NULL)
            continue;
        intptr_t w = (intptr_t)sl->value;
        if (w < 0)
            strbuf_printf(&all, "NEGATIVE %ld %.*s\n", (long)w, (int)sl->klen, sl->key);
        for (intptr_t k = 0; k < w; k++)
            strbuf_printf(&all, "%.*s\n", (int)sl->klen, sl->key);
    }
    ue_sort_lines(all.data, out);
    strbuf_free(&all);
}

/* One batch through g: deltas[s] per source (NULL: none), the sources'
 * watermarks has_wm[s]/wm_us[s] (NULL: none); with commit the
 * state is committed and the output added to o's sum, else both are
 * thrown away (a batch that failed).  Returns eng_graph_run's result; the
 * error's text in errout when it fails. */
__attribute__((unused))
static int ue_run_wm(UeEnv *e, EngGraph *g, const EngDelta *const *deltas,
                     const bool *has_wm, const int64_t *wm_us, Arena *batch, UeOut *o,
                     bool commit, StrBuf *errout)
{
    SlError err = {0};
    EvalCtx ecx = {.arena = batch, .err = &err};
    StateBatch *wb = state_batch_new();
    EngCtx cx = {.arena = batch, .err = &err, .ecx = &ecx, .st = e->d.st, .wb = wb};
    strbuf_reset(&o->batch);
    int rc = eng_graph_run(g, &cx, deltas, has_wm, wm_us, ue_out_cb, o);
    if (rc == 0 && commit) {
        rc = state_batch_commit(e->d.st, wb, false, &err);
        CHECK(rc == 0, "%s", err.message);
    }
    if (rc < 0 && errout)
        strbuf_printf(errout, "ERROR %s %s", err.sqlstate, err.message);
    ue_out_end(o, rc == 0 && commit);
    if (rc < 0 || !commit)
        CHECK(eng_graph_restore(g, &cx) == 0);
    sl_error_clear(&err);
    state_batch_free(wb);
    return rc;
}

/* ue_run_wm without watermarks. */
__attribute__((unused))
static int ue_run(UeEnv *e, EngGraph *g, const EngDelta *const *deltas, Arena *batch,
                  UeOut *o, bool commit, StrBuf *errout)
{
    return ue_run_wm(e, g, deltas, NULL, NULL, batch, o, commit, errout);
}

/* o's summed output is the batch engine's answer to sql (not empty). */
__attribute__((unused))
static void ue_outputs_equal(UeEnv *e, const UeOut *o, const char *sql)
{
    StrBuf got, want;
    strbuf_init(&got);
    strbuf_init(&want);
    ue_out_lines(o, &got);
    ue_sql(e, sql, &want);
    CHECK(want.len > 0 && got.len == want.len && memcmp(got.data, want.data, got.len) == 0,
          "%s\n  got:\n%s\n  batch engine:\n%s", sql, got.data ? got.data : "",
          want.data ? want.data : "");
    strbuf_free(&got);
    strbuf_free(&want);
}

/* The index of g's first operator of kind (its vt->kind), or -1. */
__attribute__((unused))
static int ue_op_of(const EngGraph *g, const char *kind)
{
    for (int i = 0; i < g->nops; i++)
        if (strcmp(g->ops[i]->vt->kind, kind) == 0)
            return i;
    return -1;
}

/* An EngScanTimeFn: a source's column named ts is its event time, offset
 * 0 (the watermarks the test passes are already the max time less the
 * delay); none without one. */
__attribute__((unused))
static void ue_ts_time(void *arg, const Plan *scan, EngEdgeTime *out)
{
    SL_UNUSED(arg);
    for (int c = 0; c < scan->ncols; c++)
        if (strcmp(scan->cols[c].name, "ts") == 0) {
            out->n = 1;
            out->cols[0] = (EngTimeCol){c, 0};
        }
}

#endif /* SLUICE_TESTS_UNIT_ENGINE_H */
