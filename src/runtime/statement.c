/*
 * statement.c -- running the plan of an ordinary statement.
 *
 *   rt_run_select    InitPlans first (their values go to the evaluator),
 *                    then the plan's batches to the sink, dense
 *   rt_run_explain   the plan as "QUERY PLAN" text rows
 *   rt_run_modify    INSERT / UPDATE / DELETE through ex_modify
 *
 * An InitPlan is an uncorrelated subquery: a scalar subquery keeps its one
 * value (NULL without rows; a second row is 21000), EXISTS whether there is
 * a row, IN every value of its column.  Later InitPlans may use earlier
 * ones (a subquery inside a subquery comes first).  ARRAY (subquery) keeps
 * the text form of all its values.  Values are copied into the statement's
 * arena.
 */
#include "runtime_int.h"
#include "sluice/ingest.h"

static int run_initplans(const Query *q, ExCtx *cx)
{
    if (q->ninit == 0)
        return 0;
    Vector *vals = ARENA_ARRAY(cx->arena, Vector, q->ninit);
    cx->subplans = vals;
    for (int i = 0; i < q->ninit; i++) {
        const InitPlan *ip = &q->init[i];
        cx->nsubplans = i;
        ExOp *op = ex_op_build(cx, ip->plan);
        if (op == NULL)
            return -1;
        int rc;
        ExBatch *b;
        if (ip->kind == SUBLINK_EXISTS) {
            vector_init(&vals[i], cx->arena, sl_type(TYPE_BOOL), 1, true);
            vals[i].v.b[0] = false;
            while ((rc = ex_op_next(op, &b)) > 0) {
                if (b->n > 0) {
                    vals[i].v.b[0] = true;
                    break;
                }
            }
        } else if (ip->kind == SUBLINK_EXPR) {
            vector_init(&vals[i], cx->arena, ip->type, 1, true);
            vals[i].nulls[0] = 1;
            uint64_t seen = 0;
            while ((rc = ex_op_next(op, &b)) > 0) {
                for (uint32_t k = 0; k < b->n; k++) {
                    if (seen++ > 0) {
                        rc = sl_error(cx->err, ERRCODE_CARDINALITY_VIOLATION,
                                      "more than one row returned by a subquery used as an "
                                      "expression");
                        break;
                    }
                    ex_copy_value(&vals[i], 0, &b->b.cols[0], b->sel ? b->sel[k] : k,
                                  cx->arena);
                }
                if (rc < 0)
                    break;
            }
        } else {
            /* IN: all the values, in one vector */
            uint32_t n = 0, cap = 64;
            Vector all;
            vector_init(&all, cx->arena, ip->type, cap, true);
            while ((rc = ex_op_next(op, &b)) > 0) {
                if (n + b->n > cap) {
                    while (n + b->n > cap)
                        cap *= 2;
                    Vector more;
                    vector_init(&more, cx->arena, ip->type, cap, true);
                    memcpy(more.v.data, all.v.data, type_width(ip->type.id) * n);
                    memcpy(more.nulls, all.nulls, n);
                    all = more;
                }
                for (uint32_t k = 0; k < b->n; k++)
                    ex_copy_value(&all, n++, &b->b.cols[0], b->sel ? b->sel[k] : k, cx->arena);
            }
            all.len = n;
            vals[i] = all;
            if (ip->kind == SUBLINK_ARRAY) {
                /* ARRAY (subquery): one text value, the array's text form */
                vector_init(&vals[i], cx->arena, sl_type(TYPE_TEXT), 1, true);
                ex_array_literal(cx->arena, &all, n, &vals[i].v.str[0]);
            }
        }
        ex_op_close(op);
        if (rc < 0)
            return -1;
    }
    cx->nsubplans = q->ninit;
    return 0;
}

static int deliver(ResultSink *sink, const Batch *b, SlError *err)
{
    if (sink == NULL || b->nrows == 0)
        return 0;
    if (sink->batch_cb(sink, b) < 0)
        return sl_error(err, ERRCODE_QUERY_CANCELED,
                        "canceling statement: the result could not be delivered");
    return 0;
}

int rt_run_select(const Query *q, ExCtx *cx, ResultSink *sink, uint64_t *rows)
{
    /* A stream whose ingestion failed (on_error = 'fail') says so. */
    for (int i = 0; i < q->ndeps && rt_catalog() != NULL; i++) {
        const CatRelation *rel = cat_lookup(rt_catalog(), q->dep_names[i]);
        if (rel != NULL && rel->kind == REL_STREAM && ingest_check_readable(rel, cx->err) < 0)
            return -1;
    }
    if (run_initplans(q, cx) < 0)
        return -1;
    ExOp *op = ex_op_build(cx, q->plan);
    if (op == NULL)
        return -1;
    Arena scratch;
    arena_init(&scratch, 16 * 1024);
    ExBatch *b;
    int rc;
    while ((rc = ex_op_next(op, &b)) > 0) {
        arena_reset(&scratch);
        const Batch *d = ex_batch_compact(&scratch, b);
        *rows += d->nrows;
        if ((rc = deliver(sink, d, cx->err)) < 0)
            break;
    }
    arena_destroy(&scratch);
    ex_op_close(op);
    return rc < 0 ? -1 : 0;
}

int rt_run_explain(const Query *q, ExCtx *cx, ResultSink *sink, uint64_t *rows)
{
    const Query *e = q->explain;
    List *lines = NULL;
    if (q->explain_cq != NULL) {
        if (rt_cq_explain(q->explain_cq, cx->arena, &lines, cx->err) < 0)
            return -1;
    } else if (e->kind == QUERY_SELECT)
        plan_explain(cx->arena, e->plan, e->init, e->ninit, &lines);
    else if (e->kind == QUERY_MODIFY)
        plan_explain_modify(cx->arena, e->modify, e->init, e->ninit, &lines);
    else
        lines = list_append(cx->arena, NULL, (void *)(e->tag ? e->tag : "Utility Statement"));
    int n = list_len(lines);
    for (int first = 0; first < n; first += EX_BATCH_ROWS) {
        uint32_t m = (uint32_t)SL_MIN(n - first, EX_BATCH_ROWS);
        Batch b = {m, 1, ARENA_NEW(cx->arena, Vector)};
        vector_init(&b.cols[0], cx->arena, sl_type(TYPE_TEXT), m, true);
        for (uint32_t r = 0; r < m; r++) {
            const char *line = list_nth(lines, first + (int)r);
            b.cols[0].v.str[r].ptr = line;
            b.cols[0].v.str[r].len = (uint32_t)strlen(line);
        }
        *rows += m;
        if (deliver(sink, &b, cx->err) < 0)
            return -1;
    }
    return 0;
}

typedef struct EmitCtx {
    ResultSink *sink;
    SlError    *err;
} EmitCtx;

static int emit_cb(void *arg, const Batch *b)
{
    EmitCtx *e = arg;
    return deliver(e->sink, b, e->err);
}

int rt_run_modify(const Query *q, ExCtx *cx, ResultSink *sink, uint64_t *rows)
{
    if (run_initplans(q, cx) < 0)
        return -1;
    EmitCtx e = {sink, cx->err};
    return ex_modify(cx, q->modify, emit_cb, &e, rows);
}
