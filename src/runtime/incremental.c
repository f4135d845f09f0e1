/*
 * incremental.c -- the incremental plan of a continuous query and the body
 * of one micro-batch (see incremental.h, docs/engine.md).
 *
 *   inc_plan_build, inc_plan_free
 *   inc_plan_ninputs, inc_plan_source, inc_plan_stream, inc_plan_reads,
 *   inc_plan_into
 *   inc_batch_run, inc_state_meta
 *
 * The rewriter accepts:
 *   [FILTER | PROJECT]* over INPUTS                    stateless, append
 *   [FILTER | PROJECT]* over AGG over [FILTER | PROJECT]* over INPUTS
 *                                 grouped, optionally by WINDOW(ts, size[, slide])
 * where INPUTS is a stream scan, or a tree of stream-table joins and
 * UNION ALLs of streams (inc_inputs.c, run by the batch executor) with at
 * most one stream-stream interval join at its top (inc_join.c), and
 * refuses everything else at CREATE with a message that says why.
 * The watermark of a query over several streams is the minimum of its
 * inputs' watermarks, each kept with the state ('M' key).
 *
 * A batch streams the source range through the lower chain (vectorized
 * ex_eval), assigns rows to windows, drops late rows, and folds them into
 * aggregate states kept in a hash table for the batch, loaded from RocksDB
 * on first touch ('Q' key space) -- so a key touched a thousand times in a
 * batch costs one read and one write.  Emission by output mode: update and
 * complete write every touched group to the result table; append writes a
 * window's rows once the watermark passes its end and deletes its state.
 * The state, the result rows and the batch meta ('M' key) go to RocksDB in
 * one synced WriteBatch.
 *
 * Keys: a group's key is its window end (8 bytes, ordered) then its group
 * values (ex_key_encode); the result table of an aggregation is keyed the
 * same way, so a group's row is overwritten in place.  A stateless query's
 * result table is an append log keyed by (batch id, row).
 */
#include "incremental.h"
#include "inc_inputs.h"
#include "inc_join.h"

#include "sluice/bytes.h"
#include "sluice/exec.h"
#include "sluice/options.h"
#include "sluice/plan.h"
#include "sluice/relstore.h"
#include "sluice/rowcodec.h"
#include "sluice/runtime.h"

#include <inttypes.h>
#include <stdio.h>

typedef enum OutputMode { MODE_APPEND, MODE_UPDATE, MODE_COMPLETE } OutputMode;

#define MAX_CHAIN 16

struct IncPlan {
    Arena              arena;       /* the parse tree, the plan, everything static */
    const CatRelation *query;
    const CatRelation *stream;      /* the first input's, for messages */
    const CatRelation *into;        /* INTO stream, or NULL: the result table */
    StateStore        *st;
    IncInputs          ins;         /* the streams read and the tables joined */
    Plan              *inputs;      /* the input tree under the lower chain */
    bool               plain;       /* inputs is one stream scan: read it directly */
    IncJoin           *sjoin;       /* inputs is a stream-stream join, or NULL */
    OutputMode         mode;
    /* the plan, cut in pieces: upper chain (top first), agg, lower chain */
    Plan              *upper[MAX_CHAIN];
    int                nupper;
    Plan              *agg;
    Plan              *lower[MAX_CHAIN];
    int                nlower;
    /* aggregation */
    const AggFunc    **fns;
    size_t            *state_off;
    size_t             state_size;
    uint8_t            qprefix[5];  /* 'Q' + oid: state */
    uint8_t            tprefix[5];  /* 'T' + oid: result table */
    uint8_t            meta_key[5]; /* 'M' + oid */
};

static int64_t floor_div(int64_t a, int64_t b)
{
    int64_t q = a / b;
    return (a % b != 0 && (a < 0) != (b < 0)) ? q - 1 : q;
}

/* ---------------------------------------------------------------------- */
/* Building: cut the plan and check that it can run incrementally          */

static int refuse(SlError *err, const char *msg, const char *hint)
{
    sl_error(err, ERRCODE_FEATURE_NOT_SUPPORTED, "%s", msg);
    if (hint)
        sl_error_hint(err, "%s", hint);
    return -1;
}

static const CatRelation *lookup_cb(void *ctx, const char *name)
{
    return cat_lookup(ctx, name);
}

/* Follows column col of the plan node at lower[i] down to the scan: the
 * stream column it is, or -1 if it is computed. */
static int trace_column(IncPlan *p, int i, int col)
{
    for (; i < p->nlower; i++) {
        Plan *n = p->lower[i];
        if (n->kind == PLAN_PROJECT) {
            Expr *e = n->u.project.exprs[col];
            if (e->kind != EXPR_COLUMN)
                return -1;
            col = e->index;
        }
    }
    return col;
}

static int read_mode(IncPlan *p, SlError *err)
{
    Options o;
    if (opts_parse(&p->arena, p->query->options, &o, err) < 0)
        return -1;
    const char *mode = opts_get(&o, "output_mode");
    p->mode = p->agg ? MODE_UPDATE : MODE_APPEND;
    if (mode == NULL)
        return 0;
    if (strcmp(mode, "append") == 0)
        p->mode = MODE_APPEND;
    else if (strcmp(mode, "update") == 0)
        p->mode = MODE_UPDATE;
    else if (strcmp(mode, "complete") == 0)
        p->mode = MODE_COMPLETE;
    else {
        sl_error(err, ERRCODE_INVALID_PARAMETER_VALUE, "invalid output_mode \"%s\"", mode);
        sl_error_hint(err, "Use 'append', 'update' or 'complete'.");
        return -1;
    }
    return 0;
}

/* Cuts the plan: upper chain, aggregate, lower chain, scan. */
static int decompose(IncPlan *p, Plan *top, SlError *err)
{
    Plan *n = top;
    while (n->kind == PLAN_FILTER || n->kind == PLAN_PROJECT || n->kind == PLAN_SORT) {
        if (p->nupper == MAX_CHAIN)
            return refuse(err, "the query is too deeply nested to run incrementally", NULL);
        p->upper[p->nupper++] = n;
        n = n->child;
    }
    if (n->kind == PLAN_AGG) {
        p->agg = n;
        n = n->child;
        while (n->kind == PLAN_FILTER || n->kind == PLAN_PROJECT) {
            if (p->nlower == MAX_CHAIN)
                return refuse(err, "the query is too deeply nested to run incrementally", NULL);
            p->lower[p->nlower++] = n;
            n = n->child;
        }
    }
    if (inc_inputs_collect(&p->ins, &p->arena, n, p->st, err) < 0)
        return -1;
    p->inputs = n;
    p->plain = n->kind == PLAN_SCAN;
    if (p->agg == NULL) {
        /* The scan sits under the upper chain: treat it as the lower one. */
        memcpy(p->lower, p->upper, sizeof(Plan *) * (size_t)p->nupper);
        p->nlower = p->nupper;
        p->nupper = 0;
    }
    p->stream = p->ins.in[0].rel;
    return 0;
}

static int check(IncPlan *p, SlError *err)
{
    for (int i = 0; i < p->nupper + p->nlower; i++) {
        Plan *n = i < p->nupper ? p->upper[i] : p->lower[i - p->nupper];
        if (n->kind == PLAN_SORT && (p->agg == NULL || p->mode != MODE_COMPLETE))
            return refuse(err, "ORDER BY on a stream cannot run incrementally",
                          "ORDER BY is allowed on an aggregation in complete mode; or "
                          "read the result table with ORDER BY.");
    }
    if (p->agg == NULL) {
        if (p->mode == MODE_COMPLETE)
            return refuse(err, "complete output mode needs an aggregation",
                          "Use output_mode = 'append'.");
        return 0;
    }
    const WindowSpec *w = &p->agg->u.agg.window;
    if (w->kind == WINDOW_SESSION)
        return refuse(err, "session windows in continuous queries are not supported yet", NULL);
    for (int i = 0; i < p->agg->u.agg.naggs; i++)
        if (p->agg->u.agg.aggs[i].distinct)
            return refuse(err, "aggregates with DISTINCT in continuous queries are not supported yet",
                          NULL);
    if (p->mode == MODE_APPEND) {
        if (w->kind == WINDOW_NONE)
            return refuse(err, "an aggregation in append mode needs an event-time window",
                          "Group by WINDOW(ts, size) over a column with a WATERMARK, or use "
                          "output_mode = 'update' or 'complete'.");
        int col = p->plain && w->time->kind == EXPR_COLUMN
                  ? trace_column(p, 0, w->time->index) : -1;
        if (w->time->kind != EXPR_COLUMN ||
            !inc_inputs_time_watermarked(&p->ins, p->agg->child, w->time->index)) {
            if (!p->plain) {
                sl_error(err, ERRCODE_FEATURE_NOT_SUPPORTED,
                         "an aggregation in append mode needs a watermark on the window's "
                         "time column of every stream it reads");
                sl_error_hint(err, "Declare WATERMARK FOR ts AS ts - INTERVAL '...' on each "
                                   "stream, and window by that column.");
                return -1;
            }
            sl_error(err, ERRCODE_FEATURE_NOT_SUPPORTED,
                     "an aggregation in append mode needs a watermark on the window's time column");
            sl_error_hint(err, "Declare WATERMARK FOR %s AS %s - INTERVAL '...' on stream \"%s\".",
                          col >= 0 ? p->stream->cols[col].name : "ts",
                          col >= 0 ? p->stream->cols[col].name : "ts", p->stream->name);
            return -1;
        }
    }
    return 0;
}

/* INTO stream: an internal stream other than the source, whose columns
 * take the query's output column by column. */
static int check_into(IncPlan *p, Catalog *cat, const char *name, const Plan *top, SlError *err)
{
    const CatRelation *rel = cat_lookup(cat, name);
    if (rel == NULL)
        return sl_error(err, ERRCODE_UNDEFINED_TABLE, "stream \"%s\" does not exist", name);
    if (rel->kind != REL_STREAM) {
        sl_error(err, ERRCODE_WRONG_OBJECT_TYPE, "\"%s\" is not a stream", name);
        sl_error_hint(err, "INTO names an internal stream; without INTO the results go to a "
                           "table named after the query.");
        return -1;
    }
    if (inc_inputs_reads(&p->ins, rel->oid))
        return sl_error(err, ERRCODE_INVALID_PARAMETER_VALUE,
                        "a continuous query cannot write into the stream it reads");
    Arena a;
    arena_init(&a, 512);
    Options o;
    int rc = opts_parse(&a, rel->options, &o, err);
    if (rc == 0 && opts_get(&o, "connector") != NULL &&
        strcmp(opts_get(&o, "connector"), "internal") != 0)
        rc = sl_error(err, ERRCODE_WRONG_OBJECT_TYPE,
                      "stream \"%s\" is fed by a connector: INTO needs an internal stream", name);
    arena_destroy(&a);
    if (rc < 0)
        return -1;
    if (rel->ncols != top->ncols)
        return sl_error(err, ERRCODE_DATATYPE_MISMATCH,
                        "the query returns %d columns but stream \"%s\" has %d", top->ncols,
                        name, rel->ncols);
    for (int c = 0; c < rel->ncols; c++) {
        if (rel->cols[c].type.id != top->cols[c].type.id) {
            sl_error(err, ERRCODE_DATATYPE_MISMATCH,
                     "column %d of the query is of type %s but column \"%s\" of stream \"%s\" "
                     "is of type %s", c + 1, type_name(top->cols[c].type.id),
                     rel->cols[c].name, name, type_name(rel->cols[c].type.id));
            sl_error_hint(err, "Cast the expression to the stream's type.");
            return -1;
        }
    }
    p->into = rel;
    cat_relation_ref(rel);
    return 0;
}

int inc_plan_build(const CatRelation *query, Catalog *cat, StateStore *st, IncPlan **out,
                   SlError *err)
{
    IncPlan *p = sl_calloc(1, sizeof(IncPlan));
    arena_init(&p->arena, 16384);
    p->query = query;
    cat_relation_ref(query);
    p->st = st;
    *out = NULL;
    List *stmts = NULL;
    Query *q = NULL;
    if (rt_parse(&p->arena, query->sql, strlen(query->sql), &stmts, err) < 0)
        goto fail;
    const RawStmt *raw = list_len(stmts) == 1 ? list_nth(stmts, 0) : NULL;
    if (raw == NULL || !IS_A(raw->stmt, CreateCqStmt)) {
        sl_error(err, ERRCODE_DATA_CORRUPTED, "continuous query \"%s\" has no query text",
                 query->name);
        goto fail;
    }
    const CreateCqStmt *cs = (const CreateCqStmt *)raw->stmt;
    RawStmt sel = *raw;
    sel.stmt = (Node *)cs->query;
    SqlCatalog sc = {lookup_cb, cat};
    if (sql_analyze_with(&p->arena, &sc, query->sql, &sel, NULL, 0, &q, err) < 0)
        goto fail;
    if (q->kind != QUERY_SELECT || q->plan == NULL || q->ninit > 0 || q->nparams > 0) {
        refuse(err, "this query cannot run as a continuous query", NULL);
        goto fail;
    }
    if (decompose(p, q->plan, err) < 0 || read_mode(p, err) < 0 || check(p, err) < 0 ||
        (p->ins.sjoin != NULL &&
         inc_join_build(&p->arena, &p->ins, st, query->oid, &p->sjoin, err) < 0) ||
        (cs->into != NULL && check_into(p, cat, cs->into->name, q->plan, err) < 0))
        goto fail;
    if (p->agg) {
        int naggs = p->agg->u.agg.naggs;
        p->fns = ARENA_ARRAY(&p->arena, const AggFunc *, naggs > 0 ? naggs : 1);
        p->state_off = ARENA_ARRAY(&p->arena, size_t, naggs > 0 ? naggs : 1);
        for (int i = 0; i < naggs; i++) {
            p->fns[i] = p->agg->u.agg.aggs[i].fn;
            p->state_off[i] = p->state_size;
            p->state_size += (p->fns[i]->state_size + 15) & ~(size_t)15;   /* int128 states */
        }
    }
    p->qprefix[0] = 'Q';
    p->tprefix[0] = 'T';
    p->meta_key[0] = 'M';
    put_be32(p->qprefix + 1, query->oid);
    put_be32(p->tprefix + 1, query->oid);
    put_be32(p->meta_key + 1, query->oid);
    *out = p;
    return 0;
fail:
    inc_plan_free(p);
    return -1;
}

void inc_plan_free(IncPlan *p)
{
    if (p == NULL)
        return;
    inc_inputs_close(&p->ins);
    if (p->into)
        cat_relation_unref(p->into);
    cat_relation_unref(p->query);
    arena_destroy(&p->arena);
    sl_free(p);
}

int inc_plan_ninputs(IncPlan *p)
{
    return p->ins.n;
}

Source *inc_plan_source(IncPlan *p, int i)
{
    return p->ins.in[i].source;
}

const CatRelation *inc_plan_stream(IncPlan *p, int i)
{
    return p->ins.in[i].rel;
}

bool inc_plan_reads(IncPlan *p, uint32_t oid)
{
    return inc_inputs_reads(&p->ins, oid);
}

const CatRelation *inc_plan_into(IncPlan *p)
{
    return p->into;
}

/* ---------------------------------------------------------------------- */
/* Meta: the batch id, watermark and state size stored with the state      */

typedef struct Meta {
    int64_t batch_id;
    bool    has_wm;
    int64_t wm;
    int64_t state_rows;
    /* per input: its own watermark (the query's is their minimum) */
    bool    in_has_wm[INC_MAX_INPUTS];
    int64_t in_wm[INC_MAX_INPUTS];
} Meta;

#define META_SIZE(ninputs) (25 + 9 * (size_t)(ninputs))

static int meta_read(IncPlan *p, Arena *a, Meta *m, SlError *err)
{
    memset(m, 0, sizeof(*m));
    m->batch_id = -1;
    void *val;
    size_t vlen;
    int rc = state_get(p->st, p->meta_key, sizeof(p->meta_key), a, &val, &vlen, err);
    if (rc <= 0)
        return rc;
    /* 25 bytes: written before per-input watermarks, by a one-stream query */
    if (vlen != META_SIZE(p->ins.n) && !(vlen == 25 && p->ins.n == 1))
        return sl_error(err, ERRCODE_DATA_CORRUPTED, "state of query \"%s\" is corrupt",
                        p->query->name);
    const uint8_t *v = val;
    m->batch_id = (int64_t)get_be64(v);
    m->has_wm = v[8] != 0;
    m->wm = (int64_t)get_be64(v + 9);
    m->state_rows = (int64_t)get_be64(v + 17);
    m->in_has_wm[0] = m->has_wm;
    m->in_wm[0] = m->wm;
    for (int i = 0; vlen > 25 && i < p->ins.n; i++) {
        m->in_has_wm[i] = v[25 + 9 * i] != 0;
        m->in_wm[i] = (int64_t)get_be64(v + 26 + 9 * i);
    }
    return 1;
}

static void meta_write(IncPlan *p, StateBatch *wb, const Meta *m)
{
    uint8_t v[META_SIZE(INC_MAX_INPUTS)];
    put_be64(v, (uint64_t)m->batch_id);
    v[8] = m->has_wm;
    put_be64(v + 9, (uint64_t)m->wm);
    put_be64(v + 17, (uint64_t)m->state_rows);
    for (int i = 0; i < p->ins.n; i++) {
        v[25 + 9 * i] = m->in_has_wm[i];
        put_be64(v + 26 + 9 * i, (uint64_t)m->in_wm[i]);
    }
    state_batch_put(wb, p->meta_key, sizeof(p->meta_key), v, META_SIZE(p->ins.n));
}

int inc_state_meta(IncPlan *p, int64_t *batch_id, bool *has_watermark, int64_t *watermark_us,
                   SlError *err)
{
    Arena a;
    arena_init(&a, 256);
    Meta m;
    int rc = meta_read(p, &a, &m, err);
    arena_destroy(&a);
    if (rc < 0)
        return -1;
    *batch_id = m.batch_id;
    *has_watermark = m.has_wm;
    *watermark_us = m.wm;
    return 0;
}

/* ---------------------------------------------------------------------- */
/* Filter / project chains, evaluated a batch at a time                    */

/* Runs chain[n-1] .. chain[0] (bottom first) over in; rowmap (when not
 * NULL) gets, per output row, the input row it came from. */
static int run_chain(Plan *const *chain, int n, const Batch *in, Arena *a, EvalCtx *ecx,
                     const Batch **out, uint32_t **rowmap)
{
    const Batch *cur = in;
    uint32_t *map = NULL;
    if (rowmap) {
        map = ARENA_ARRAY(a, uint32_t, in->nrows ? in->nrows : 1);
        for (uint32_t i = 0; i < in->nrows; i++)
            map[i] = i;
    }
    for (int i = n - 1; i >= 0; i--) {
        Plan *node = chain[i];
        if (node->kind == PLAN_FILTER) {
            Vector cond;
            if (ex_eval(ecx, node->u.filter.cond, cur, cur->nrows, &cond) < 0)
                return -1;
            ExBatch eb = {*cur, ARENA_ARRAY(a, uint32_t, cur->nrows ? cur->nrows : 1), 0};
            for (uint32_t r = 0; r < cur->nrows; r++)
                if (!vector_is_null(&cond, r) && cond.v.b[r])
                    eb.sel[eb.n++] = r;
            if (map)
                for (uint32_t k = 0; k < eb.n; k++)
                    map[k] = map[eb.sel[k]];
            cur = ex_batch_compact(a, &eb);
        } else if (node->kind == PLAN_PROJECT) {
            Batch *nb = ARENA_NEW(a, Batch);
            nb->ncols = (uint32_t)node->ncols;
            nb->nrows = cur->nrows;
            nb->cols = ARENA_ARRAY(a, Vector, node->ncols > 0 ? node->ncols : 1);
            for (int c = 0; c < node->ncols; c++)
                if (ex_eval(ecx, node->u.project.exprs[c], cur, cur->nrows, &nb->cols[c]) < 0)
                    return -1;
            cur = nb;
        }
        /* PLAN_SORT (complete mode only): the result table has no order. */
    }
    *out = cur;
    if (rowmap)
        *rowmap = map;
    return 0;
}

/* ---------------------------------------------------------------------- */
/* Groups of one batch: a hash table over the group keys                   */

typedef struct Group {
    struct Group *next;         /* hash chain */
    struct Group *all;          /* every group, in order of first touch */
    SlStr         key;          /* window end (8) + group values, in the arena */
    int64_t       wstart, wend;
    uint8_t      *groupvals;    /* row_encode of the group values */
    size_t        gvlen;
    uint8_t      *states;
    bool          evict;        /* append mode: emitted, delete its state */
    bool          fresh;        /* not in state before this batch */
} Group;

typedef struct GroupTable {
    Group  **buckets;
    uint32_t nbuckets;
    uint32_t n;
    Group   *all;
    Group   *last;
    int64_t  created;           /* groups not in state before this batch */
} GroupTable;

static void gt_grow(GroupTable *t, Arena *a)
{
    uint32_t nb = t->nbuckets ? t->nbuckets * 2 : 1024;
    Group **b = arena_zalloc(a, sizeof(Group *) * nb);
    for (Group *g = t->all; g != NULL; g = g->all) {
        uint32_t h = (uint32_t)ex_hash(g->key.ptr, g->key.len) & (nb - 1);
        g->next = b[h];
        b[h] = g;
    }
    t->buckets = b;
    t->nbuckets = nb;
}

static Group *gt_find(const GroupTable *t, const char *key, size_t klen, uint64_t hash)
{
    if (t->nbuckets == 0)
        return NULL;
    for (Group *g = t->buckets[hash & (t->nbuckets - 1)]; g != NULL; g = g->next)
        if (g->key.len == klen && memcmp(g->key.ptr, key, klen) == 0)
            return g;
    return NULL;
}

/* State value: varint-free layout: u32 length of the group values, the
 * group values, then per aggregate u32 length + its serialized state. */
static void state_encode(IncPlan *p, const Group *g, StrBuf *out)
{
    uint8_t l4[4];
    put_be32(l4, (uint32_t)g->gvlen);
    strbuf_append(out, l4, 4);
    strbuf_append(out, g->groupvals, g->gvlen);
    StrBuf s;
    strbuf_init(&s);
    for (int i = 0; i < p->agg->u.agg.naggs; i++) {
        strbuf_reset(&s);
        p->fns[i]->serialize(p->fns[i], g->states + p->state_off[i], &s);
        put_be32(l4, (uint32_t)s.len);
        strbuf_append(out, l4, 4);
        strbuf_append(out, s.data, s.len);
    }
    strbuf_free(&s);
}

static int state_decode(IncPlan *p, Group *g, const uint8_t *v, size_t n, AggCtx *acx)
{
    const uint8_t *end = v + n;
    if (n < 4 || get_be32(v) > n - 4)
        goto corrupt;
    g->gvlen = get_be32(v);
    g->groupvals = arena_memdup(acx->arena, v + 4, g->gvlen);
    v += 4 + g->gvlen;
    for (int i = 0; i < p->agg->u.agg.naggs; i++) {
        if (end - v < 4 || get_be32(v) > (size_t)(end - v) - 4)
            goto corrupt;
        uint32_t len = get_be32(v);
        acx->type = p->agg->u.agg.aggs[i].type;
        if (p->fns[i]->deserialize(acx, p->fns[i], g->states + p->state_off[i], v + 4, len) < 0)
            return -1;
        v += 4 + len;
    }
    if (v == end)
        return 0;
corrupt:
    return sl_error(acx->err, ERRCODE_DATA_CORRUPTED, "state of query \"%s\" is corrupt",
                    p->query->name);
}

/* The group for key, made (and loaded from state) on first touch. */
static Group *gt_get(IncPlan *p, GroupTable *t, const StrBuf *key, int64_t wstart, int64_t wend,
                     const Vector *gcols, int ngroups, uint32_t row, AggCtx *acx)
{
    uint64_t h = ex_hash(key->data, key->len);
    Group *g = gt_find(t, key->data, key->len, h);
    if (g != NULL)
        return g;
    Arena *a = acx->arena;
    if (t->n >= t->nbuckets)
        gt_grow(t, a);
    g = ARENA_NEW(a, Group);
    g->key.ptr = arena_memdup(a, key->data, key->len);
    g->key.len = (uint32_t)key->len;
    g->wstart = wstart;
    g->wend = wend;
    g->states = arena_zalloc(a, p->state_size ? p->state_size : 1);
    /* Look the group up in the state store. */
    StrBuf sk;
    strbuf_init(&sk);
    strbuf_append(&sk, p->qprefix, sizeof(p->qprefix));
    strbuf_append(&sk, key->data, key->len);
    void *val;
    size_t vlen;
    int rc = state_get(p->st, sk.data, sk.len, a, &val, &vlen, acx->err);
    strbuf_free(&sk);
    if (rc < 0 || (rc == 1 && state_decode(p, g, val, vlen, acx) < 0))
        return NULL;
    if (rc == 0) {
        /* New: keep its group values. */
        Batch gb = {1, (uint32_t)ngroups, ARENA_ARRAY(a, Vector, ngroups > 0 ? ngroups : 1)};
        for (int c = 0; c < ngroups; c++) {
            vector_init(&gb.cols[c], a, gcols[c].type, 1, true);
            gb.cols[c].nulls[0] = vector_is_null(&gcols[c], row);
            if (!gb.cols[c].nulls[0])
                ex_copy_value(&gb.cols[c], 0, &gcols[c], row, NULL);
        }
        StrBuf gv;
        strbuf_init(&gv);
        row_encode(&gb, 0, &gv);
        g->groupvals = arena_memdup(a, gv.data, gv.len);
        g->gvlen = gv.len;
        strbuf_free(&gv);
        t->created++;
        g->fresh = true;
    }
    uint32_t hb = (uint32_t)h & (t->nbuckets - 1);
    g->next = t->buckets[hb];
    t->buckets[hb] = g;
    if (t->last)
        t->last->all = g;
    else
        t->all = g;
    t->last = g;
    t->n++;
    return g;
}

/* ---------------------------------------------------------------------- */
/* A micro-batch                                                           */

typedef struct Run {
    IncPlan    *p;
    IncBatch   *b;
    Arena      *a;              /* the batch's: groups, states, output */
    Arena      *chunk;          /* one input chunk's: reset per chunk */
    SlError    *err;
    EvalCtx     ecx;
    AggCtx      acx;
    GroupTable  groups;
    StateBatch *wb;
    uint32_t    seq;            /* stateless: row number within the batch */
    IncInputsRun inputs;        /* rows and event times read per input */
    IncJoinBatch join;          /* a stream-stream join's batch */
    IncJoinRun  *jrun;
    Batch     **outs;           /* INTO: the output batches, in r->a */
    int         nouts, capouts;
} Run;

/* SUBSCRIBE: records row i of out as a change of kind ('I', 'U'). */
static void record_change(Run *r, char kind, const Batch *out, uint32_t i)
{
    if (!r->b->want_changes)
        return;
    StrBuf *ch = &r->b->changes;
    uint8_t h[5];
    h[0] = (uint8_t)kind;
    size_t at = ch->len;
    strbuf_append(ch, h, sizeof(h));
    row_encode(out, i, ch);
    put_be32((uint8_t *)ch->data + at + 1, (uint32_t)(ch->len - at - 5));
}

/* SUBSCRIBE: a row leaving the result table (HAVING filters its group out
 * now) is a 'D' change with the row it had, if it had one. */
static int record_delete(Run *r, const StrBuf *key)
{
    if (!r->b->want_changes)
        return 0;
    void *old;
    size_t len;
    int rc = state_get(r->p->st, key->data, key->len, r->chunk, &old, &len, r->err);
    if (rc <= 0)
        return rc;
    uint8_t h[5];
    h[0] = 'D';
    put_be32(h + 1, (uint32_t)len);
    strbuf_append(&r->b->changes, h, sizeof(h));
    strbuf_append(&r->b->changes, old, len);
    return 0;
}

/* INTO: keeps a copy of an output batch (its memory may be a chunk's). */
static void keep_output(Run *r, const Batch *out)
{
    if (out->nrows == 0)
        return;
    Arena *a = r->a;
    Batch *b = inc_batch_copy(a, out, NULL, out->nrows);
    for (uint32_t i = 0; i < out->nrows; i++)
        record_change(r, 'I', out, i);
    if (r->nouts == r->capouts) {
        int cap = r->capouts ? r->capouts * 2 : 8;
        Batch **more = ARENA_ARRAY(a, Batch *, cap);
        if (r->nouts)
            memcpy(more, r->outs, sizeof(Batch *) * (size_t)r->nouts);
        r->outs = more;
        r->capouts = cap;
    }
    r->outs[r->nouts++] = b;
    r->b->output_rows += out->nrows;
}

/* Appends the rows of out to the result table, keyed (batch id, row). */
static void emit_append_log(Run *r, const Batch *out)
{
    if (r->p->into != NULL) {
        keep_output(r, out);
        return;
    }
    StrBuf key;
    strbuf_init(&key);
    for (uint32_t i = 0; i < out->nrows; i++) {
        uint8_t k[17];
        memcpy(k, r->p->tprefix, 5);
        put_be64(k + 5, (uint64_t)r->b->batch_id);
        put_be32(k + 13, r->seq++);
        strbuf_reset(&key);
        strbuf_append(&key, k, sizeof(k));
        tbl_put(r->wb, &key, out, i);
        record_change(r, 'I', out, i);
    }
    r->b->output_rows += out->nrows;
    strbuf_free(&key);
}

/* Folds the rows of one dense batch (the aggregate's input) into groups. */
static int aggregate(Run *r, const Batch *in)
{
    IncPlan *p = r->p;
    const Plan *agg = p->agg;
    int ng = agg->u.agg.ngroups, na = agg->u.agg.naggs;
    uint32_t n = in->nrows;
    if (n == 0)
        return 0;
    Arena *a = r->chunk;
    Vector *gcols = ARENA_ARRAY(a, Vector, ng > 0 ? ng : 1);
    for (int c = 0; c < ng; c++)
        if (ex_eval(&r->ecx, agg->u.agg.groups[c], in, n, &gcols[c]) < 0)
            return -1;
    /* Each aggregate's argument vectors and the rows it takes. */
    Vector **args = ARENA_ARRAY(a, Vector *, na > 0 ? na : 1);
    uint8_t **take = ARENA_ARRAY(a, uint8_t *, na > 0 ? na : 1);
    for (int i = 0; i < na; i++) {
        const AggCall *call = &agg->u.agg.aggs[i];
        args[i] = ARENA_ARRAY(a, Vector, call->nargs > 0 ? call->nargs : 1);
        for (int k = 0; k < call->nargs; k++)
            if (ex_eval(&r->ecx, call->args[k], in, n, &args[i][k]) < 0)
                return -1;
        take[i] = arena_alloc(a, n);
        memset(take[i], 1, n);
        if (call->filter) {
            Vector f;
            if (ex_eval(&r->ecx, call->filter, in, n, &f) < 0)
                return -1;
            for (uint32_t row = 0; row < n; row++)
                take[i][row] = !vector_is_null(&f, row) && f.v.b[row];
        }
        if (call->nargs > 0 && !call->star)
            for (uint32_t row = 0; row < n; row++)
                if (vector_is_null(&args[i][0], row))
                    take[i][row] = 0;
    }
    /* Windows: a tumbling window has one per row, a sliding one size/slide. */
    const WindowSpec *w = &agg->u.agg.window;
    Vector tv;
    int nwin = 1;
    int64_t size = 0, slide = 0;
    if (w->kind != WINDOW_NONE) {
        if (ex_eval(&r->ecx, w->time, in, n, &tv) < 0)
            return -1;
        size = w->size_us;
        slide = w->kind == WINDOW_SLIDE ? w->slide_us : size;
        nwin = (int)((size + slide - 1) / slide);
    }
    uint8_t **states = ARENA_ARRAY(a, uint8_t *, n);
    uint32_t *sel = ARENA_ARRAY(a, uint32_t, n);
    uint8_t *late = arena_alloc(a, n);
    memset(late, 1, n);
    StrBuf key;
    strbuf_init(&key);
    int rc = 0;
    for (int j = 0; j < nwin && rc == 0; j++) {
        uint32_t nsel = 0;
        for (uint32_t row = 0; row < n; row++) {
            int64_t ws = 0, we = 0;
            if (w->kind != WINDOW_NONE) {
                if (vector_is_null(&tv, row)) {
                    if (j == 0)
                        late[row] = 0;  /* no window: not late, just not counted */
                    continue;
                }
                int64_t t = tv.v.i64[row];
                ws = floor_div(t, slide) * slide - (int64_t)j * slide;
                we = ws + size;
                if (t >= we)
                    continue;   /* this window does not hold t */
                if (r->b->has_watermark && we <= r->b->watermark_us)
                    continue;   /* closed: the row is late for it */
            }
            late[row] = 0;
            strbuf_reset(&key);
            uint8_t wk[8];
            put_time_key(wk, we);
            strbuf_append(&key, wk, 8);
            ex_key_encode(gcols, ng, row, &key);
            Group *g = gt_get(p, &r->groups, &key, ws, we, gcols, ng, row, &r->acx);
            if (g == NULL) {
                rc = -1;
                break;
            }
            states[row] = g->states;
            sel[nsel++] = row;
        }
        for (int i = 0; i < na && rc == 0; i++) {
            uint32_t *s = ARENA_ARRAY(a, uint32_t, nsel ? nsel : 1);
            uint8_t **st = ARENA_ARRAY(a, uint8_t *, n);
            uint32_t m = 0;
            for (uint32_t k = 0; k < nsel; k++) {
                uint32_t row = sel[k];
                st[row] = states[row] + p->state_off[i];
                if (take[i][row])
                    s[m++] = row;
            }
            r->acx.type = agg->u.agg.aggs[i].type;
            if (m > 0 && p->fns[i]->update(&r->acx, args[i], st, s, m) < 0)
                rc = -1;
        }
    }
    if (w->kind != WINDOW_NONE)
        for (uint32_t row = 0; row < n; row++)
            r->b->late_rows += late[row];
    strbuf_free(&key);
    return rc;
}

/* SUBSCRIBE: the kind of each output row of emit_groups: insert for a new
 * group (or in append mode), update for one already in the result table;
 * with HAVING a group may have been out of it, so the table says. */
static int record_kept(Run *r, Group **gs, const Batch *out, const uint32_t *map)
{
    IncPlan *p = r->p;
    bool having = false;
    for (int k = 0; k < p->nupper; k++)
        having |= p->upper[k]->kind == PLAN_FILTER;
    StrBuf key;
    strbuf_init(&key);
    int rc = 0;
    for (uint32_t i = 0; i < out->nrows && rc == 0; i++) {
        Group *g = gs[map[i]];
        char kind = g->fresh || p->mode == MODE_APPEND ? 'I' : 'U';
        if (kind == 'U' && having) {
            void *old;
            size_t len;
            strbuf_reset(&key);
            strbuf_append(&key, p->tprefix, sizeof(p->tprefix));
            strbuf_append(&key, g->key.ptr, g->key.len);
            rc = state_get(p->st, key.data, key.len, r->chunk, &old, &len, r->err);
            kind = rc == 1 ? 'U' : 'I';
        }
        if (rc >= 0) {
            record_change(r, kind, out, i);
            rc = 0;
        }
    }
    strbuf_free(&key);
    return rc;
}

/* The output rows of a list of groups: the aggregate's columns (groups,
 * window bounds, aggregates) through the upper chain, then into the result
 * table under each group's key. */
static int emit_groups(Run *r, Group **gs, uint32_t n)
{
    if (n == 0)
        return 0;
    IncPlan *p = r->p;
    const Plan *agg = p->agg;
    int ng = agg->u.agg.ngroups, na = agg->u.agg.naggs;
    bool win = agg->u.agg.window.kind != WINDOW_NONE;
    Arena *a = r->a;
    SlType *gtypes = ARENA_ARRAY(a, SlType, ng > 0 ? ng : 1);
    for (int c = 0; c < ng; c++)
        gtypes[c] = agg->cols[c].type;
    Batch *gv = batch_alloc(a, gtypes, (uint32_t)ng, n);
    Batch *ab = ARENA_NEW(a, Batch);
    ab->ncols = (uint32_t)agg->ncols;
    ab->nrows = n;
    ab->cols = ARENA_ARRAY(a, Vector, agg->ncols);
    for (int c = 0; c < agg->ncols; c++)
        vector_init(&ab->cols[c], a, agg->cols[c].type, n, true);
    for (uint32_t i = 0; i < n; i++) {
        if (row_decode(gs[i]->groupvals, gs[i]->gvlen, gv, i, a) < 0)
            return sl_error(r->err, ERRCODE_DATA_CORRUPTED, "state of query \"%s\" is corrupt",
                            p->query->name);
        int c = 0;
        for (; c < ng; c++) {
            ab->cols[c].nulls[i] = gv->cols[c].nulls[i];
            if (!gv->cols[c].nulls[i])
                ex_copy_value(&ab->cols[c], i, &gv->cols[c], i, NULL);
        }
        if (win) {
            ab->cols[c].nulls[i] = 0;
            ab->cols[c].v.i64[i] = gs[i]->wstart;
            ab->cols[c + 1].nulls[i] = 0;
            ab->cols[c + 1].v.i64[i] = gs[i]->wend;
            c += 2;
        }
        for (int k = 0; k < na; k++, c++) {
            r->acx.type = agg->u.agg.aggs[k].type;
            ab->cols[c].nulls[i] = 0;
            if (p->fns[k]->final(&r->acx, gs[i]->states + p->state_off[k], &ab->cols[c], i) < 0)
                return -1;
        }
    }
    for (int c = 0; c < agg->ncols; c++)
        ab->cols[c].len = n;
    gv->nrows = n;
    const Batch *out;
    uint32_t *map;
    if (run_chain(p->upper, p->nupper, ab, a, &r->ecx, &out, &map) < 0)
        return -1;
    if (p->into != NULL) {
        keep_output(r, out);
        return 0;
    }
    /* A group whose row HAVING now filters out leaves the result table. */
    StrBuf key;
    strbuf_init(&key);
    if (r->b->want_changes && record_kept(r, gs, out, map) < 0) {
        strbuf_free(&key);
        return -1;
    }
    uint8_t *kept = arena_zalloc(a, n);
    for (uint32_t i = 0; i < out->nrows; i++) {
        Group *g = gs[map[i]];
        kept[map[i]] = 1;
        strbuf_reset(&key);
        strbuf_append(&key, p->tprefix, sizeof(p->tprefix));
        strbuf_append(&key, g->key.ptr, g->key.len);
        tbl_put(r->wb, &key, out, i);
    }
    for (uint32_t i = 0; i < n; i++) {
        if (kept[i])
            continue;
        strbuf_reset(&key);
        strbuf_append(&key, p->tprefix, sizeof(p->tprefix));
        strbuf_append(&key, gs[i]->key.ptr, gs[i]->key.len);
        if (!gs[i]->fresh && record_delete(r, &key) < 0) {
            strbuf_free(&key);
            return -1;
        }
        tbl_delete(r->wb, &key);
    }
    r->b->output_rows += out->nrows;
    strbuf_free(&key);
    return 0;
}

/* Append mode: the groups of windows that ended at or before the new
 * watermark, in memory or only in the state store, are emitted once and
 * their state deleted. */
static int evict_closed(Run *r, int64_t wm, Meta *meta)
{
    IncPlan *p = r->p;
    Arena *a = r->a;
    uint32_t cap = 64, n = 0;
    Group **gs = ARENA_ARRAY(a, Group *, cap);
    /* Closed groups only on disk (not touched by this batch). */
    StateScan *s = state_scan_open(p->st, p->qprefix, sizeof(p->qprefix));
    const void *k, *v;
    size_t klen, vlen;
    while (state_scan_next(s, &k, &klen, &v, &vlen)) {
        if (klen < 5 + 8)
            continue;
        const uint8_t *gk = (const uint8_t *)k + 5;
        int64_t wend = get_time_key(gk);
        if (wend > wm)
            break;
        size_t gklen = klen - 5;
        if (gt_find(&r->groups, (const char *)gk, gklen, ex_hash(gk, gklen)) != NULL)
            continue;
        Group *g = ARENA_NEW(a, Group);
        g->key.ptr = arena_memdup(a, gk, gklen);
        g->key.len = (uint32_t)gklen;
        g->wend = wend;
        g->wstart = wend - p->agg->u.agg.window.size_us;
        g->states = arena_zalloc(a, p->state_size ? p->state_size : 1);
        if (state_decode(p, g, v, vlen, &r->acx) < 0) {
            state_scan_close(s, r->err);
            return -1;
        }
        g->evict = true;
        if (n == cap) {
            Group **more = ARENA_ARRAY(a, Group *, cap * 2);
            memcpy(more, gs, sizeof(Group *) * cap);
            gs = more;
            cap *= 2;
        }
        gs[n++] = g;
    }
    if (state_scan_close(s, r->err) < 0)
        return -1;
    /* Closed groups this batch touched. */
    for (Group *g = r->groups.all; g != NULL; g = g->all) {
        if (g->wend > wm)
            continue;
        g->evict = true;
        if (n == cap) {
            Group **more = ARENA_ARRAY(a, Group *, cap * 2);
            memcpy(more, gs, sizeof(Group *) * cap);
            gs = more;
            cap *= 2;
        }
        gs[n++] = g;
    }
    if (emit_groups(r, gs, n) < 0)
        return -1;
    StrBuf key;
    strbuf_init(&key);
    for (uint32_t i = 0; i < n; i++) {
        strbuf_reset(&key);
        strbuf_append(&key, p->qprefix, sizeof(p->qprefix));
        strbuf_append(&key, gs[i]->key.ptr, gs[i]->key.len);
        state_batch_delete(r->wb, key.data, key.len);
    }
    strbuf_free(&key);
    meta->state_rows -= n;
    return 0;
}

/* Writes the touched groups' states back, one put each. */
static void write_states(Run *r)
{
    IncPlan *p = r->p;
    StrBuf key, val;
    strbuf_init(&key);
    strbuf_init(&val);
    for (Group *g = r->groups.all; g != NULL; g = g->all) {
        if (g->evict)
            continue;
        strbuf_reset(&key);
        strbuf_append(&key, p->qprefix, sizeof(p->qprefix));
        strbuf_append(&key, g->key.ptr, g->key.len);
        strbuf_reset(&val);
        state_encode(p, g, &val);
        state_batch_put(r->wb, key.data, key.len, val.data, val.len);
    }
    strbuf_free(&key);
    strbuf_free(&val);
}

/* The rows of a dense input batch: through the lower chain, then into the
 * result (stateless) or the aggregate. */
static int consume(Run *r, const Batch *in)
{
    const Batch *mid;
    if (run_chain(r->p->lower, r->p->nlower, in, r->chunk, &r->ecx, &mid, NULL) < 0)
        return -1;
    if (r->p->agg == NULL) {
        emit_append_log(r, mid);
        return 0;
    }
    return aggregate(r, mid);
}

/* Reads the batch's ranges of its inputs: one stream directly, an input
 * tree (joins, UNION ALL) through the batch executor. */
static int read_inputs(Run *r)
{
    IncPlan *p = r->p;
    IncBatch *b = r->b;
    Batch *in;
    int n;
    if (p->sjoin != NULL)
        return (r->jrun = inc_join_read(p->sjoin, &r->join)) == NULL ? -1 : 0;
    if (p->plain) {
        SourceReader *reader = source_reader_open(p->ins.in[0].source, b->from[0], b->to[0]);
        for (;;) {
            arena_reset(r->chunk);
            if ((n = source_reader_next(reader, r->chunk, &in, r->err)) <= 0)
                break;
            inc_inputs_track(&r->inputs, 0, in);
            if (consume(r, in) < 0) {
                n = -1;
                break;
            }
        }
        return source_reader_close(reader, n < 0 ? NULL : r->err) < 0 || n < 0 ? -1 : 0;
    }
    /* The executor's state (a joined table's hash table) lives in r->a. */
    ExOp *op = inc_inputs_exec(&r->inputs, r->a, p->inputs, r->err);
    if (op == NULL)
        return -1;
    ExBatch *eb;
    while ((n = ex_op_next(op, &eb)) > 0) {
        arena_reset(r->chunk);
        if (eb->n > 0 && consume(r, ex_batch_compact(r->chunk, eb)) < 0) {
            n = -1;
            break;
        }
    }
    ex_op_close(op);
    return n < 0 ? -1 : 0;
}

static int join_emit(void *arg, const Batch *rows)
{
    return consume(arg, rows);
}

/* The watermark of the inputs [first, first + n): their minimum, once each
 * has one. */
static void inputs_watermark(const IncPlan *p, const Meta *m, int first, int n, bool *has,
                             int64_t *wm)
{
    *has = n > 0;
    *wm = INT64_MAX;
    for (int i = first; i < first + n; i++) {
        if (p->ins.in[i].wm_col < 0 || !m->in_has_wm[i])
            *has = false;
        else
            *wm = SL_MIN(*wm, m->in_wm[i]);
    }
}

/* A stream-stream join's side watermarks, before (judging late rows) or
 * after (evicting) the batch. */
static void join_watermarks(Run *r, const Meta *m, bool after)
{
    IncJoinBatch *jb = &r->join;
    for (int s = 0; s < 2; s++) {
        int first, n;
        inc_join_side_inputs(r->p->sjoin, s, &first, &n);
        if (after)
            inputs_watermark(r->p, m, first, n, &jb->has_next_wm[s], &jb->next_wm[s]);
        else
            inputs_watermark(r->p, m, first, n, &jb->has_wm[s], &jb->wm[s]);
    }
}

/* The watermark after this batch, never backwards: per input, its max
 * event time minus its delay; the query's is the minimum over the inputs
 * with a watermark, once each has one. */
static void next_watermark(Run *r, Meta *meta)
{
    IncPlan *p = r->p;
    IncBatch *b = r->b;
    b->next_has_watermark = b->has_watermark;
    b->next_watermark_us = b->watermark_us;
    bool all = true, any = false;
    int64_t min = INT64_MAX;
    for (int i = 0; i < p->ins.n; i++) {
        const IncInput *in = &p->ins.in[i];
        if (in->wm_col < 0)
            continue;
        any = true;
        if (r->inputs.max_event[i] != INT64_MIN) {
            int64_t wm = r->inputs.max_event[i] - in->wm_delay_us;
            if (!meta->in_has_wm[i] || wm > meta->in_wm[i]) {
                meta->in_has_wm[i] = true;
                meta->in_wm[i] = wm;
            }
        }
        if (!meta->in_has_wm[i])
            all = false;
        else
            min = SL_MIN(min, meta->in_wm[i]);
    }
    if (any && all && (!b->has_watermark || min > b->watermark_us)) {
        b->next_has_watermark = true;
        b->next_watermark_us = min;
    }
}

int inc_batch_run(IncPlan *p, IncBatch *b, SlError *err)
{
    Arena a, chunk;
    arena_init(&a, 1 << 16);
    arena_init(&chunk, 1 << 16);
    Run r;
    memset(&r, 0, sizeof(r));
    r.p = p;
    r.b = b;
    r.a = &a;
    r.chunk = &chunk;
    r.err = err;
    r.ecx.arena = &chunk;
    r.ecx.err = err;
    r.acx.arena = &a;
    r.acx.err = err;
    r.wb = state_batch_new();
    b->min_event_us = INT64_MAX;
    b->max_event_us = INT64_MIN;
    int rc = -1;
    Meta meta;
    if (meta_read(p, &a, &meta, err) < 0)
        goto out;

    inc_inputs_run_init(&r.inputs, &p->ins, p->st, b->from, b->to);
    if (p->sjoin != NULL) {
        r.join = (IncJoinBatch){.inputs = &r.inputs, .wb = r.wb, .a = &a, .chunk = &chunk,
                                .err = err, .batch_id = b->batch_id, .emit = join_emit,
                                .arg = &r};
        join_watermarks(&r, &meta, false);
    }
    if (read_inputs(&r) < 0)
        goto out;
    b->input_rows = r.inputs.rows;
    for (int i = 0; i < p->ins.n; i++) {
        b->min_event_us = SL_MIN(b->min_event_us, r.inputs.min_event[i]);
        b->max_event_us = SL_MAX(b->max_event_us, r.inputs.max_event[i]);
    }
    next_watermark(&r, &meta);
    if (p->sjoin != NULL) {
        join_watermarks(&r, &meta, true);
        if (inc_join_process(r.jrun) < 0)
            goto out;
        b->late_rows += r.join.late_rows;
        meta.state_rows += r.join.state_delta;
    }
    meta.state_rows += r.groups.created;
    if (p->agg != NULL) {
        if (p->mode == MODE_APPEND) {
            if (b->next_has_watermark && evict_closed(&r, b->next_watermark_us, &meta) < 0)
                goto out;
        } else {
            Group **gs = ARENA_ARRAY(&a, Group *, r.groups.n ? r.groups.n : 1);
            uint32_t k = 0;
            for (Group *g = r.groups.all; g != NULL; g = g->all)
                gs[k++] = g;
            if (emit_groups(&r, gs, k) < 0)
                goto out;
        }
        write_states(&r);
    }
    meta.batch_id = b->batch_id;
    meta.has_wm = b->next_has_watermark;
    meta.wm = b->next_watermark_us;
    b->state_rows = meta.state_rows;
    meta_write(p, r.wb, &meta);
    SLUICE_FAULT("batch_before_state_commit");
    if (p->into != NULL) {
        /* The output chunks and the state in one write: a replayed batch
         * whose write landed is never replayed, one whose write did not
         * appends once. */
        int64_t first;
        if (stream_append_batches(p->st, p->into, (const Batch *const *)r.outs, r.nouts, r.wb,
                                  &first, err) < 0)
            goto out;
    } else if (state_batch_commit(p->st, r.wb, true, err) < 0) {
        goto out;
    }
    SLUICE_FAULT("batch_after_state_commit");
    rc = 0;
out:
    state_batch_free(r.wb);
    arena_destroy(&chunk);
    arena_destroy(&a);
    return rc;
}
