/*
 * graph.c -- the scheduler of the operator graph (graph.h): build a graph
 * of operators in topological order, run one batch through it, restore it.
 *
 *   eng_op_new, eng_op_free          an operator's shell and its arena
 *   eng_graph_new, _add, _free       a graph, operators added producers first
 *   eng_emit, eng_emit_watermark     what operators call to send downstream
 *   eng_forward_watermark, eng_time_add, eng_stats_put, eng_stats_get,
 *   eng_stats_flush, eng_stats_load,
 *   eng_state_key, eng_bound_put, eng_bound_get
 *                                    what operators share:
 *                                    saturating time offsets, their state
 *                                    figures under prefix + 'n', their keys,
 *                                    the watermark they evicted below
 *   eng_graph_run                    one batch: push the sources' deltas,
 *                                    then their watermarks, then flush every
 *                                    operator in order, then checkpoint each
 *   eng_graph_restore                every operator's restore, watermarks
 *                                    forgotten
 *   eng_graph_close_only             every operator's close_only (a query
 *                                    in output_mode 'append')
 *
 * The scheduler knows no operator by kind: it calls the entry points of
 * EngOpVt along the edges.  A delta is pushed depth first: eng_emit calls
 * each consumer's push at once, which may emit in turn.  Since operators
 * are added producers first, flushing them in index order flushes every
 * operator after its inputs.  The graph keeps each edge's watermark so far
 * (per producer), so a watermark only ever moves forward.
 */
#include "graph.h"
#include "sluice/bytes.h"
#include "sluice/common.h"

#include <string.h>

EngOp *eng_op_new(const EngOpVt *vt, int ninputs, size_t self_size)
{
    EngOp *op = sl_calloc(1, sizeof(EngOp));
    op->vt = vt;
    op->ninputs = ninputs;
    arena_init(&op->arena, 4096);
    op->self = self_size ? arena_zalloc(&op->arena, self_size) : NULL;
    return op;
}

void eng_op_free(EngOp *op)
{
    if (op == NULL)
        return;
    if (op->vt->free)
        op->vt->free(op);
    arena_destroy(&op->arena);
    sl_free(op);
}

EngGraph *eng_graph_new(uint32_t query_oid)
{
    EngGraph *g = sl_calloc(1, sizeof(EngGraph));
    arena_init(&g->arena, 4096);
    g->query_oid = query_oid;
    g->output = -1;
    return g;
}

int eng_graph_add(EngGraph *g, EngOp *op, const int *producers)
{
    for (int i = 0; i < op->ninputs; i++)
        if (producers[i] >= g->nops)
            return -1;              /* not added yet: not topological */
    if (g->nops == g->cap) {
        int cap = g->cap ? g->cap * 2 : 8;
        EngOp **ops = ARENA_ARRAY(&g->arena, EngOp *, cap);
        int64_t *wm = ARENA_ARRAY(&g->arena, int64_t, cap);
        if (g->nops > 0) {
            memcpy(ops, g->ops, sizeof(EngOp *) * (size_t)g->nops);
            memcpy(wm, g->op_wm, sizeof(int64_t) * (size_t)g->nops);
        }
        g->ops = ops;
        g->op_wm = wm;
        g->cap = cap;
    }
    int id = g->nops++;
    g->ops[id] = op;
    g->op_wm[id] = INT64_MIN;
    op->id = (uint16_t)id;
    op->graph = g;
    op->prefix[0] = 'G';
    put_be32(op->prefix + 1, g->query_oid);
    op->prefix[5] = (uint8_t)(id >> 8);
    op->prefix[6] = (uint8_t)id;
    EngEdge *edges = ARENA_ARRAY(&g->arena, EngEdge, g->nedges + op->ninputs + 1);
    if (g->nedges > 0)
        memcpy(edges, g->edges, sizeof(EngEdge) * (size_t)g->nedges);
    int nsources = g->nsources;
    for (int i = 0; i < op->ninputs; i++) {
        edges[g->nedges++] = (EngEdge){producers[i], id, i};
        if (producers[i] < 0 && -producers[i] > nsources)
            nsources = -producers[i];
    }
    g->edges = edges;
    if (nsources > g->nsources) {
        int64_t *sw = ARENA_ARRAY(&g->arena, int64_t, nsources);
        for (int s = 0; s < nsources; s++)
            sw[s] = s < g->nsources ? g->src_wm[s] : INT64_MIN;
        g->src_wm = sw;
        g->nsources = nsources;
    }
    g->output = id;
    return id;
}

void eng_graph_free(EngGraph *g)
{
    if (g == NULL)
        return;
    for (int i = 0; i < g->nops; i++)
        eng_op_free(g->ops[i]);
    arena_destroy(&g->arena);
    sl_free(g);
}

/* Pushes d into every consumer of producer p (an operator or -1 - source). */
static int push_from(EngGraph *g, int p, const EngDelta *d, EngCtx *cx)
{
    for (int e = 0; e < g->nedges; e++) {
        const EngEdge *ed = &g->edges[e];
        if (ed->producer != p)
            continue;
        EngOp *c = g->ops[ed->consumer];
        if (c->vt->push && c->vt->push(c, ed->input, d, cx) < 0)
            return -1;
    }
    return 0;
}

static int watermark_from(EngGraph *g, int p, int64_t wm, EngCtx *cx)
{
    for (int e = 0; e < g->nedges; e++) {
        const EngEdge *ed = &g->edges[e];
        if (ed->producer != p)
            continue;
        EngOp *c = g->ops[ed->consumer];
        if (c->vt->watermark && c->vt->watermark(c, ed->input, wm, cx) < 0)
            return -1;
    }
    return 0;
}

int eng_emit(EngOp *op, const EngDelta *d, EngCtx *cx)
{
    EngGraph *g = op->graph;
    if (d->rows.nrows == 0)
        return 0;
    if (push_from(g, op->id, d, cx) < 0)
        return -1;
    if (op->id == g->output && g->out_cb)
        return g->out_cb(g->out_arg, d, cx);
    return 0;
}

int eng_emit_watermark(EngOp *op, int64_t wm_us, EngCtx *cx)
{
    EngGraph *g = op->graph;
    if (wm_us <= g->op_wm[op->id])
        return 0;
    g->op_wm[op->id] = wm_us;
    return watermark_from(g, op->id, wm_us, cx);
}

int eng_graph_run(EngGraph *g, EngCtx *cx, const EngDelta *const *deltas,
                  const bool *has_wm, const int64_t *wm_us,
                  EngOutputCb out_cb, void *out_arg)
{
    int rc = -1;
    g->out_cb = out_cb;
    g->out_arg = out_arg;
    for (int s = 0; s < g->nsources; s++)
        if (deltas != NULL && deltas[s] != NULL && deltas[s]->rows.nrows > 0 &&
            push_from(g, -1 - s, deltas[s], cx) < 0)
            goto out;
    for (int s = 0; s < g->nsources; s++) {
        if (has_wm == NULL || !has_wm[s] || wm_us[s] <= g->src_wm[s])
            continue;
        g->src_wm[s] = wm_us[s];
        if (watermark_from(g, -1 - s, wm_us[s], cx) < 0)
            goto out;
    }
    for (int i = 0; i < g->nops; i++) {
        EngOp *op = g->ops[i];
        if (op->vt->flush && op->vt->flush(op, cx) < 0)
            goto out;
    }
    for (int i = 0; i < g->nops; i++) {
        EngOp *op = g->ops[i];
        if (op->vt->checkpoint && op->vt->checkpoint(op, cx) < 0)
            goto out;
    }
    rc = 0;
out:
    g->out_cb = NULL;
    g->out_arg = NULL;
    return rc;
}

int eng_graph_restore(EngGraph *g, EngCtx *cx)
{
    for (int s = 0; s < g->nsources; s++)
        g->src_wm[s] = INT64_MIN;
    for (int i = 0; i < g->nops; i++) {
        EngOp *op = g->ops[i];
        g->op_wm[i] = INT64_MIN;
        if (op->vt->restore && op->vt->restore(op, cx) < 0)
            return -1;
    }
    return 0;
}

int eng_graph_close_only(EngGraph *g, SlError *err)
{
    for (int i = 0; i < g->nops; i++) {
        EngOp *op = g->ops[i];
        if (op->vt->close_only && op->vt->close_only(op, err) < 0)
            return -1;
    }
    return 0;
}

int64_t eng_time_add(int64_t a, int64_t b)
{
    if (b > 0 && a > INT64_MAX - b)
        return INT64_MAX;
    if (b < 0 && a < INT64_MIN - b)
        return INT64_MIN;
    return a + b;
}

static void stats_key(const EngOp *op, uint8_t *k)
{
    memcpy(k, op->prefix, ENG_PREFIX_LEN);
    k[ENG_PREFIX_LEN] = 'n';
}

void eng_stats_put(const EngOp *op, EngCtx *cx, const EngOpStats *st)
{
    uint8_t k[ENG_PREFIX_LEN + 1], v[24];
    stats_key(op, k);
    put_le64(v, (uint64_t)st->rows);
    put_le64(v + 8, (uint64_t)st->bytes);
    put_le64(v + 16, (uint64_t)st->evicted);
    state_batch_put(cx->wb, k, sizeof(k), v, sizeof(v));
}

int eng_stats_get(const EngOp *op, EngCtx *cx, const char *what, EngOpStats *out)
{
    uint8_t k[ENG_PREFIX_LEN + 1];
    stats_key(op, k);
    void *v;
    size_t vl;
    int rc = state_get(cx->st, k, sizeof(k), cx->arena, &v, &vl, cx->err);
    if (rc < 0)
        return -1;
    if (rc == 1 && vl != 24)
        return sl_error(cx->err, ERRCODE_DATA_CORRUPTED, "a stored %s state is corrupt", what);
    out->rows = rc ? (int64_t)get_le64(v) : 0;
    out->bytes = rc ? (int64_t)get_le64((const uint8_t *)v + 8) : 0;
    out->evicted = rc ? (int64_t)get_le64((const uint8_t *)v + 16) : 0;
    return 0;
}

void eng_stats_flush(const EngOp *op, EngCtx *cx, EngStats *s)
{
    if (!s->dirty)
        return;
    eng_stats_put(op, cx, &s->st);
    s->dirty = false;
}

int eng_stats_load(const EngOp *op, EngCtx *cx, const char *what, EngStats *s)
{
    s->dirty = false;
    return eng_stats_get(op, cx, what, &s->st);
}

int eng_forward_watermark(EngOp *op, int input, int64_t wm_us, EngCtx *cx)
{
    SL_UNUSED(input);
    return op->out_time.n > 0 ? eng_emit_watermark(op, wm_us, cx) : 0;
}

void eng_state_key(const EngOp *op, char tag, const void *key, size_t klen, StrBuf *out)
{
    strbuf_reset(out);
    strbuf_append(out, op->prefix, ENG_PREFIX_LEN);
    strbuf_putc(out, tag);
    strbuf_append(out, key, klen);
}

void eng_bound_put(const EngOp *op, EngCtx *cx, char tag, int64_t v)
{
    uint8_t k[ENG_PREFIX_LEN + 1], b[8];
    memcpy(k, op->prefix, ENG_PREFIX_LEN);
    k[ENG_PREFIX_LEN] = (uint8_t)tag;
    put_le64(b, (uint64_t)v);
    state_batch_put(cx->wb, k, sizeof(k), b, 8);
}

int eng_bound_get(const EngOp *op, EngCtx *cx, char tag, const char *what, int64_t *out)
{
    uint8_t k[ENG_PREFIX_LEN + 1];
    memcpy(k, op->prefix, ENG_PREFIX_LEN);
    k[ENG_PREFIX_LEN] = (uint8_t)tag;
    void *v;
    size_t vl;
    int rc = state_get(cx->st, k, sizeof(k), cx->arena, &v, &vl, cx->err);
    if (rc < 0)
        return -1;
    if (rc == 1 && vl != 8)
        return sl_error(cx->err, ERRCODE_DATA_CORRUPTED, "a stored %s bound is corrupt", what);
    *out = rc ? (int64_t)get_le64(v) : INT64_MIN;
    return 0;
}
