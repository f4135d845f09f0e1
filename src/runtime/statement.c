/*
 * statement.c -- running the plan of an ordinary statement.
 *
 *   rt_run_select    InitPlans first (their values go to the evaluator),
 *                    then the plan's batches to the sink, dense
 *   rt_cursor_open, rt_cursor_open_held, rt_cursor_fetch, rt_cursor_close
 *                    the same a piece at a time: the operator tree is kept
 *                    between fetches, so a portal suspended by an Execute
 *                    row limit, or a result paused while the client reads,
 *                    computes no more rows than it sends; rows made at
 *                    once (EXPLAIN's, RETURNING's) are held and handed
 *                    out the same way
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
            /* IN, ANY, ALL: all the values, in one vector */
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
                /* ARRAY (subquery): one value, the array of the rows' */
                vector_init(&vals[i], cx->arena, sl_array_type(ip->type.id, -1), 1, true);
                array_from_vector(cx->arena, &all, n, &vals[i].v.str[0]);
            }
        }
        ex_op_close(op);
        if (rc < 0)
            return -1;
    }
    cx->nsubplans = q->ninit;
    return 0;
}

/* Hands b to the sink: 0 go on, 1 the sink asks to pause, -1 (err set). */
static int deliver(ResultSink *sink, const Batch *b, SlError *err)
{
    if (sink == NULL || b->nrows == 0)
        return 0;
    int rc = sink->batch_cb(sink, b);
    if (rc < 0 && !sl_error_set(err))
        return sl_error(err, ERRCODE_QUERY_CANCELED,
                        "canceling statement: the result could not be delivered");
    return rc < 0 ? -1 : rc > 0 ? 1 : 0;
}

int rt_cursor_open(Runtime *rt, const Query *q, ExCtx *cx, RtCursor *cur)
{
    memset(cur, 0, sizeof(*cur));
    /* A stream whose ingestion failed (on_error = 'fail') says so. */
    for (int i = 0; i < q->ndeps && rt != NULL && rt->cat != NULL; i++) {
        const CatRelation *rel = cat_lookup(rt->cat, q->dep_names[i]);
        if (rel != NULL && rel->kind == REL_STREAM && ingest_check_readable(rt, rel, cx->err) < 0)
            return -1;
    }
    if (run_initplans(q, cx) < 0)
        return -1;
    cur->op = ex_op_build(cx, q->plan);
    if (cur->op == NULL)
        return -1;
    arena_init(&cur->scratch, 16 * 1024);
    cur->open = true;
    return 0;
}

/* The held cursor's sink: a copy of the Batch header, the values shared. */
static int hold_cb(ResultSink *sink, const Batch *b)
{
    RtCursor *cur = sink->ctx;
    if (cur->nheld == cur->capheld) {
        int cap = cur->capheld ? cur->capheld * 2 : 16;
        const Batch **more = ARENA_ARRAY(&cur->scratch, const Batch *, cap);
        if (cur->nheld)
            memcpy(more, cur->held, sizeof(*more) * (size_t)cur->nheld);
        cur->held = more;
        cur->capheld = cap;
    }
    cur->held[cur->nheld++] = arena_memdup(&cur->scratch, b, sizeof(*b));
    return 0;
}

void rt_cursor_open_held(RtCursor *cur, ResultSink *hold)
{
    memset(cur, 0, sizeof(*cur));
    arena_init(&cur->scratch, 16 * 1024);
    cur->open = true;
    *hold = (ResultSink){cur, hold_cb};
}

/* Rows [first, first + n) of b, sharing its memory (vectors in a). */
static Batch slice(Arena *a, const Batch *b, uint32_t first, uint32_t n)
{
    Batch s = {n, b->ncols, ARENA_ARRAY(a, Vector, b->ncols ? b->ncols : 1)};
    for (uint32_t c = 0; c < b->ncols; c++) {
        const Vector *v = &b->cols[c];
        Vector *o = &s.cols[c];
        *o = *v;
        o->len = n;
        o->v.data = (char *)v->v.data + (size_t)first * type_width(v->type.id);
        o->nulls = v->nulls != NULL ? v->nulls + first : NULL;
    }
    return s;
}

int rt_cursor_fetch(RtCursor *cur, ExCtx *cx, ResultSink *sink, uint64_t maxrows,
                    uint64_t *rows)
{
    *rows = 0;
    for (;;) {
        if (cur->pend != NULL && cur->pend_off < cur->pend->nrows) {
            if (maxrows > 0 && *rows == maxrows)
                return 1;
            uint32_t n = cur->pend->nrows - cur->pend_off;
            if (maxrows > 0 && n > maxrows - *rows)
                n = (uint32_t)(maxrows - *rows);
            Batch part = cur->pend_off == 0 && n == cur->pend->nrows
                             ? *cur->pend
                             : slice(&cur->scratch, cur->pend, cur->pend_off, n);
            cur->pend_off += n;
            *rows += n;
            int rc = deliver(sink, &part, cx->err);
            if (rc < 0)
                return -1;
            if (rc > 0 && (cur->pend_off < cur->pend->nrows || !cur->done))
                return 1;
            continue;
        }
        if (cur->done)
            return 0;
        if (maxrows > 0 && *rows == maxrows)
            return 1;   /* PostgreSQL's rule: no look past the limit */
        if (cur->op == NULL) {
            cur->done = cur->next_held == cur->nheld;
            cur->pend = cur->done ? NULL : cur->held[cur->next_held++];
            cur->pend_off = 0;
            if (cur->done)
                return 0;
            continue;
        }
        ExBatch *b;
        int rc = ex_op_next(cur->op, &b);
        if (rc < 0)
            return -1;
        if (rc == 0) {
            cur->done = true;
            cur->pend = NULL;
            return 0;
        }
        arena_reset(&cur->scratch);
        cur->pend = ex_batch_compact(&cur->scratch, b);
        cur->pend_off = 0;
    }
}

void rt_cursor_close(RtCursor *cur)
{
    ex_op_close(cur->op);
    if (cur->open)
        arena_destroy(&cur->scratch);
    cur->op = NULL;
    cur->open = false;
}

int rt_run_select(Runtime *rt, const Query *q, ExCtx *cx, ResultSink *sink, uint64_t *rows)
{
    RtCursor cur;
    if (rt_cursor_open(rt, q, cx, &cur) < 0) {
        rt_cursor_close(&cur);
        return -1;
    }
    int rc;
    uint64_t n;
    do {
        rc = rt_cursor_fetch(&cur, cx, sink, 0, &n);
        *rows += n;
    } while (rc > 0);
    rt_cursor_close(&cur);
    return rc < 0 ? -1 : 0;
}

int rt_run_explain(CqRuntime *cq, const Query *q, ExCtx *cx, ResultSink *sink, uint64_t *rows)
{
    const Query *e = q->explain;
    List *lines = NULL;
    if (q->explain_cq != NULL) {
        if (rt_cq_explain(cq, q->explain_cq, cx->arena, &lines, cx->err) < 0)
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
