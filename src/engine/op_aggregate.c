/*
 * op_aggregate.c -- the aggregate operator: grouped aggregates over
 * retractions, optionally per tumbling or sliding window.
 *
 *   eng_op_aggregate_new(in, nin, out, nout, spec, in_time, err)
 *
 * A group is the group values of a row, and with a window the end of
 * one of the row's windows (the window_end of the batch engine, epoch
 * aligned: ex_window_floor; a row whose time is NULL or infinite is in no
 * window and is skipped, as there).  A tumbling window is a sliding one
 * whose slide is its size: a row at t is in the windows that start at
 * floor(t, slide) - j * slide (j = 0, 1, ...) and still hold t, ceil(size
 * / slide) of them at most, and each of those groups takes its weight
 * (per-window state, no slices: every call kept here can be undone in
 * each window alike).  Session windows are not this operator's: the
 * rewriter puts a session operator (op_session.c) under an aggregate
 * grouped by its window columns.  Per group the operator keeps the
 * weight sum of its rows (count) -- a group whose count reaches 0 has no
 * row: its row is retracted -- and per call an accumulator that a
 * retraction can undo exactly:
 *
 *   count(*), count(x)         n: the weight sum of the rows counted
 *   sum, avg of integers       an int128 sum of value * weight, and n
 *   sum, avg of numeric        an exact numeric sum, n, the weight sums
 *                              of the NaN, +Infinity and -Infinity
 *                              arguments (their result follows
 *                              PostgreSQL's rules from those counts), and
 *                              per display scale the weight sum of the
 *                              arguments of that scale: PostgreSQL's sum
 *                              has the largest scale of the rows summed,
 *                              so 1.5 + 2.25 - 2.25 is 1.5, not 1.50
 *   bool_and, every, bool_or   the weight sum of the true arguments, and n
 *   stddev, variance and       n, the exact numeric sums of x and x*x, the
 *   their kin of smallint,     NaN / infinity weight sums and the display
 *   integer, bigint, numeric   scales' weights (as for sum); the result is
 *                              agg_stats.c's over the sums at the largest
 *                              scale counted (ex_agg_var_exact)
 *   count(DISTINCT x)          the same multiset, and how many of its
 *                              values have a weight > 0
 *   min, max                   a multiset: per distinct value its weight
 *                              sum, so the min after the min's retraction
 *                              is the next one; the extreme is kept while
 *                              insertions pass it and looked for again
 *                              (a scan of the group's values in memory)
 *                              only when it is retracted
 *
 * Results are the batch engine's (agg.c): sum of smallint/integer bigint
 * (22003 out of its range), of bigint numeric, avg numeric (numeric_div's
 * scale), NULL for a group without a counted row (count: 0).  Calls whose
 * result cannot be kept exactly over retractions are refused at
 * construction (0A000): sum/avg/stddev/variance of floating point (their
 * rounding depends on the order), corr, covar_* and regr_*, of interval,
 * string_agg (order), calls with ORDER BY and the ordered-set aggregates,
 * DISTINCT calls other than count(DISTINCT), approx_count_distinct,
 * jsonb_agg.  Without GROUP BY
 * and without a window the one group always has a row (count(*) = 0 over
 * nothing), emitted at the first flush.
 *
 * At push each touched group's row before the batch is kept; at flush the
 * operator emits, per touched group, the retraction of that row and the
 * insertion of the new one, consolidated (an unchanged group emits
 * nothing).
 *
 * State (under op->prefix): the group row at prefix 'g' + group key
 *   [count i64][has row u8][window end i64] then per call [n i64] and its
 *   accumulator (int128: 16 bytes; numeric: NaN, +Inf, -Inf weight sums
 *   i64 each, the scales' count (u32) and weight sums (i64 each), then
 *   the sum's text, u32 length first; stddev / variance: then the sum of
 *   squares' text the same way), then the group values (row_encode)
 * and each multiset value at prefix 'm' + be32(group key length) + group
 * key + call number (u8) + the value's equality key (ex_key_encode):
 *   [weight sum i64] then the value (row_encode);
 * and at prefix 'w' the input watermark the closed groups were evicted
 * at (i64, eng_bound_put).  Group keys are [window end as put_time_key] +
 * ex_key_encode(group values).  checkpoint writes the groups the batch
 * touched (a group without a row, a value of weight 0: deleted); restore
 * drops the in-memory cache, which reloads by key (state_get, one prefix
 * scan per group for the multisets) on the next touch.
 *
 * Event time (in_time: the input's time columns).  A group key that is a
 * bare input time column (offset o) is an output time column, offset o;
 * with a window over an input time column (offset o), every row
 * after input watermark wm has time >= wm + o and a window ending after
 * it, so window_end (offset o + 1) and window_start (o + 1 - size) are
 * too.  Watermark wm closes a group whose window ends at or before
 * wm + o, or whose time key is below wm + its offset.  The watermark
 * entry point only keeps wm; flush emits the batch's rows, then the
 * output watermark (wm) when the output has a time column; checkpoint,
 * after the batch's writes, deletes every closed group's keys (committed
 * ones by a scan of 'g', cached ones from the cache; stats.evicted counts
 * the groups), records wm under 'w' and drops the cache if a cached group
 * closed.  A closed group's row stays in the output (no retraction).
 *
 * Close-only mode (agg_close_only: EngOpVt.close_only, a query in output
 * mode 'append'; "emit on window close"): the groups are kept as above
 * but emit nothing while they change; flush emits the row of each group
 * the watermark closes in the batch, once (the committed ones read into
 * the cache first, emit_closed), and the eviction deletes them as above.
 * Refused (0A000) when nothing closes the groups.  With
 * EngAggSpec.inserts_only (a stream's rows: never retracted) min and max
 * keep the extreme value alone in their multiset.  A
 * row for a group the recorded watermark closed (late: the caller drops
 * those; a sliding window's row when any of its windows closed) fails
 * the batch with 22000: its state is gone, so taking it
 * would emit a second row for the window.  Bound: WATERMARK when
 * something can close groups.
 */
#include "functions/numeric_arith.h"
#include "keymap.h"
#include "ops.h"
#include "sluice/bytes.h"
#include "sluice/rowcodec.h"

#include <string.h>

typedef enum AccKind {
    ACC_COUNT, ACC_SUM_INT, ACC_SUM_INT8, ACC_AVG_INT, ACC_SUM_NUM, ACC_AVG_NUM,
    ACC_BOOL_AND, ACC_BOOL_OR,
    ACC_VAR,                    /* stddev / variance of exact inputs */
    /* those with a multiset of their argument's values */
    ACC_MIN, ACC_MAX, ACC_COUNT_DISTINCT
} AccKind;

/* One value of a min/max multiset. */
typedef struct MsEntry {
    Vector   v;                 /* one row, in the cache */
    int64_t  count;
    bool     dirty;             /* changed since the last checkpoint */
} MsEntry;

typedef struct Acc {
    int64_t   n;
    __int128  isum;
    int64_t   nan, pinf, ninf;  /* numeric: special arguments' weight sums */
    SlNumeric nsum;             /* numeric: the finite arguments' sum */
    int64_t  *scales;           /* numeric: per display scale, the weight sum of
                                 * the finite arguments of that scale (cache) */
    int32_t   nscales;
    uint8_t  *nbuf;             /* its digits between batches (cache) */
    int32_t   ncap;
    SlNumeric nsq;              /* ACC_VAR: the finite arguments' sum of squares */
    uint8_t  *qbuf;             /* its digits between batches (cache) */
    int32_t   qcap;
    bool      var_sample, var_stddev;   /* ACC_VAR: which of the family */
    EngMap   *ms;               /* min, max: value key -> MsEntry */
    MsEntry  *best;             /* min, max: the extreme of weight > 0 (NULL:
                                 * none), when best_known */
    bool      best_known;       /* false: scan ms for it */
} Acc;

typedef struct Group {
    const uint8_t *key;         /* the group key (cache) */
    uint32_t  klen;
    int64_t   count;
    int64_t   wend;
    Batch    *vals;             /* one row: the group values (cache) */
    bool      exists;           /* its row is in the output */
    bool      touched;          /* in this batch */
    bool      gone;             /* closed and evicted (left in the cache until
                                 * it is dropped) */
    Batch    *old;              /* touched: its row before the batch (batch arena) */
    Acc       acc[];
} Group;

typedef struct Agg {
    EngAggSpec spec;
    AccKind   *kinds;
    SlType    *gtypes;          /* the group values' types */
    SlType    *otypes;          /* the output's */
    bool       windowed, scalar, scalar_seen;
    Arena      cache;           /* groups, their keys and values */
    EngMap     groups;          /* group key -> Group */
    Group    **touched;         /* heap */
    int        ntouched, cap_touched;
    /* event time (see the opening comment): what closes a group */
    bool       wclose;          /* the window's time is an input time column */
    int64_t    woff;            /* its offset */
    int        nkt;             /* group keys that are input time columns */
    int        kt[ENG_MAX_TIME];        /* their group numbers */
    int64_t    kt_off[ENG_MAX_TIME];    /* their offsets */
    int64_t    wm;              /* the input's watermark so far */
    int64_t    closed_wm;       /* the watermark groups were evicted at
                                 * (committed: key 'w') */
    bool       closed_loaded;
    int64_t    evicted;         /* groups evicted, ever (this process) */
    bool       has_ms;          /* a call keeps a multiset */
    bool       close_only;      /* emits a group's row once, when it closes */
    bool       loaded;          /* bounded: the cache holds every committed group */
    int64_t    ngone;           /* groups in the cache that are gone */
} Agg;

static int refuse(SlError *err, const char *what)
{
    return sl_error(err, ERRCODE_FEATURE_NOT_SUPPORTED,
                    "the operator graph cannot keep %s over retractions", what);
}

static int acc_kind(const AggCall *c, AccKind *out, SlError *err)
{
    AggId id = c->sig->id;
    if (c->norder > 0)
        return sl_error(err, ERRCODE_FEATURE_NOT_SUPPORTED,
                        id >= AGG_PERCENTILE_CONT
                            ? "the operator graph cannot keep ordered-set aggregate %s over "
                              "retractions"
                            : "the operator graph cannot keep %s with ORDER BY over retractions",
                        c->sig->name);
    if (c->distinct && id == AGG_COUNT) {
        *out = ACC_COUNT_DISTINCT;
        return 0;
    }
    if (c->distinct)
        return sl_error(err, ERRCODE_FEATURE_NOT_SUPPORTED,
                        "the operator graph cannot keep %s(DISTINCT) over retractions",
                        c->sig->name);
    switch (id) {
    case AGG_COUNT_STAR: case AGG_COUNT: *out = ACC_COUNT; return 0;
    case AGG_SUM_INT2: case AGG_SUM_INT4: *out = ACC_SUM_INT; return 0;
    case AGG_SUM_INT8: *out = ACC_SUM_INT8; return 0;
    case AGG_AVG_INT2: case AGG_AVG_INT4: case AGG_AVG_INT8: *out = ACC_AVG_INT; return 0;
    case AGG_SUM_NUMERIC: *out = ACC_SUM_NUM; return 0;
    case AGG_AVG_NUMERIC: *out = ACC_AVG_NUM; return 0;
    case AGG_BOOL_AND: case AGG_EVERY: *out = ACC_BOOL_AND; return 0;
    case AGG_BOOL_OR: *out = ACC_BOOL_OR; return 0;
    case AGG_SUM_FLOAT4: case AGG_SUM_FLOAT8: case AGG_AVG_FLOAT4: case AGG_AVG_FLOAT8:
        return refuse(err, "sum or avg of floating point (its rounding depends on the order "
                           "of the rows)");
    default:
        break;
    }
    if (id >= AGG_MIN_INT2 && id <= AGG_MAX_TEXT) {
        *out = (id - AGG_MIN_INT2) % 2 == 0 ? ACC_MIN : ACC_MAX;
        return 0;
    }
    if (id >= AGG_STDDEV_INT2 && id <= AGG_VAR_POP_FLOAT8) {
        /* exact inputs (smallint .. numeric) keep exact sums; floating
         * point's rounding depends on the order of the rows */
        if ((id - AGG_STDDEV_INT2) % 6 >= 4)
            return refuse(err, "stddev or variance of floating point (its rounding depends on "
                               "the order of the rows)");
        *out = ACC_VAR;
        return 0;
    }
    sl_error(err, ERRCODE_FEATURE_NOT_SUPPORTED,
             "the operator graph cannot keep %s over retractions", c->sig->name);
    return -1;
}

/* ------------------------------------------------------------- numerics */

static void num_from_i128(Arena *a, __int128 v, SlNumeric *out)
{
    char buf[48];
    int k = (int)sizeof(buf);
    unsigned __int128 u = v < 0 ? (unsigned __int128)0 - (unsigned __int128)v
                                : (unsigned __int128)v;
    do {
        buf[--k] = (char)('0' + (int)(u % 10));
        u /= 10;
    } while (u > 0);
    if (v < 0)
        buf[--k] = '-';
    num_parse(a, buf + k, sizeof(buf) - (size_t)k, out);
}

/* acc += x * w, exact; the result's digits in a, the scale counts in
 * cache. */
static int num_accumulate(Arena *a, Arena *cache, Acc *acc, const SlNumeric *x, int64_t w,
                          SlError *err)
{
    SlNumeric t, r;
    int scale = x->scale > 0 ? x->scale : 0;
    if (scale >= acc->nscales) {
        int32_t n = SL_MAX(scale + 1, acc->nscales * 2);
        int64_t *sc = arena_zalloc(cache, sizeof(int64_t) * (size_t)n);
        if (acc->nscales > 0)
            memcpy(sc, acc->scales, sizeof(int64_t) * (size_t)acc->nscales);
        acc->scales = sc;
        acc->nscales = n;
    }
    acc->scales[scale] += w;
    if (w == 1) {
        t = *x;
    } else if (w == -1) {
        num_neg(x, &t);
    } else {
        SlNumeric wn;
        num_from_int64(a, w, &wn);
        if (num_mul(a, x, &wn, &t, err) < 0)
            return -1;
    }
    if (num_add(a, &acc->nsum, &t, &r, err) < 0)
        return -1;
    acc->nsum = r;
    return 0;
}

/* The sum of a numeric accumulator with its specials, PostgreSQL's way. */
static void num_total(Arena *a, const Acc *acc, SlNumeric *out)
{
    if (acc->nan > 0 || (acc->pinf > 0 && acc->ninf > 0))
        num_parse(a, "NaN", 3, out);
    else if (acc->pinf > 0)
        num_parse(a, "Infinity", 8, out);
    else if (acc->ninf > 0)
        num_parse(a, "-Infinity", 9, out);
    else {
        int scale = acc->nscales - 1;
        while (scale > 0 && acc->scales[scale] == 0)
            scale--;
        num_round(a, &acc->nsum, scale > 0 ? scale : 0, out);
    }
}

/* ------------------------------------------------------------ the groups */

static size_t group_size(const Agg *ag)
{
    return sizeof(Group) + sizeof(Acc) * (size_t)ag->spec.naggs;
}

static void group_init_accs(Agg *ag, Group *g)
{
    for (int j = 0; j < ag->spec.naggs; j++) {
        Acc *acc = &g->acc[j];
        num_from_int64(&ag->cache, 0, &acc->nsum);
        num_from_int64(&ag->cache, 0, &acc->nsq);
        if (ag->kinds[j] == ACC_VAR) {
            /* stddev, stddev_samp, stddev_pop, variance, var_samp, var_pop */
            int fam = (ag->spec.aggs[j].sig->id - AGG_STDDEV_INT2) / 6;
            acc->var_sample = fam != 2 && fam != 5;
            acc->var_stddev = fam <= 2;
        }
        if (ag->kinds[j] >= ACC_MIN) {
            acc->ms = arena_zalloc(&ag->cache, sizeof(EngMap));
            eng_map_init(acc->ms, &ag->cache);
        }
    }
}

/* The multiset key prefix of group g: 'm' + be32(klen) + key, into k. */
static void ms_prefix(const EngOp *op, const Group *g, StrBuf *k)
{
    uint8_t len[4];
    put_be32(len, g->klen);
    strbuf_reset(k);
    strbuf_append(k, op->prefix, ENG_PREFIX_LEN);
    strbuf_putc(k, 'm');
    strbuf_append(k, len, 4);
    strbuf_append(k, g->key, g->klen);
}

static MsEntry *ms_entry(Agg *ag, Acc *acc, const void *vk, size_t vklen, const Vector *src,
                         uint32_t row)
{
    bool isnew;
    void **slot = eng_map_upsert(acc->ms, vk, vklen, &isnew);
    if (isnew) {
        MsEntry *e = arena_zalloc(&ag->cache, sizeof(MsEntry));
        vector_init(&e->v, &ag->cache, src->type, 1, true);
        ex_copy_value(&e->v, 0, src, row, &ag->cache);
        *slot = e;
    }
    return *slot;
}

typedef struct Reader {
    const uint8_t *p;
    size_t n;
} Reader;

static bool rd(Reader *r, void *dst, size_t n)
{
    if (r->n < n)
        return false;
    memcpy(dst, r->p, n);
    r->p += n;
    r->n -= n;
    return true;
}

static int corrupt(SlError *err)
{
    return sl_error(err, ERRCODE_DATA_CORRUPTED, "an aggregate's state does not decode");
}

/* Decodes the group row value into g (fresh, accumulators initialized). */
static int group_decode(Agg *ag, Group *g, const void *p, size_t n, SlError *err)
{
    Reader r = {p, n};
    uint8_t has;
    if (!rd(&r, &g->count, 8) || !rd(&r, &has, 1) || !rd(&r, &g->wend, 8))
        return corrupt(err);
    g->exists = has != 0;
    for (int j = 0; j < ag->spec.naggs; j++) {
        Acc *acc = &g->acc[j];
        if (!rd(&r, &acc->n, 8))
            return corrupt(err);
        switch (ag->kinds[j]) {
        case ACC_SUM_INT: case ACC_SUM_INT8: case ACC_AVG_INT:
        case ACC_BOOL_AND: case ACC_BOOL_OR:
            if (!rd(&r, &acc->isum, 16))
                return corrupt(err);
            break;
        case ACC_SUM_NUM: case ACC_AVG_NUM: case ACC_VAR: {
            uint32_t len;
            if (!rd(&r, &acc->nan, 8) || !rd(&r, &acc->pinf, 8) || !rd(&r, &acc->ninf, 8) ||
                !rd(&r, &acc->nscales, 4) || acc->nscales < 0 ||
                r.n < sizeof(int64_t) * (size_t)acc->nscales)
                return corrupt(err);
            acc->scales = ARENA_ARRAY(&ag->cache, int64_t, acc->nscales + 1);
            if (!rd(&r, acc->scales, sizeof(int64_t) * (size_t)acc->nscales) ||
                !rd(&r, &len, 4) || r.n < len ||
                num_parse(&ag->cache, (const char *)r.p, len, &acc->nsum) < 0)
                return corrupt(err);
            r.p += len;
            r.n -= len;
            if (ag->kinds[j] == ACC_VAR) {
                if (!rd(&r, &len, 4) || r.n < len ||
                    num_parse(&ag->cache, (const char *)r.p, len, &acc->nsq) < 0)
                    return corrupt(err);
                r.p += len;
                r.n -= len;
            }
            break;
        }
        default:
            break;
        }
    }
    g->vals = batch_alloc(&ag->cache, ag->gtypes, (uint32_t)ag->spec.ngroups, 1);
    g->vals->nrows = 1;
    if (row_decode(r.p, r.n, g->vals, 0, &ag->cache) < 0)
        return corrupt(err);
    return 0;
}

static void group_encode(const Agg *ag, const Group *g, StrBuf *out)
{
    uint8_t has = g->exists;
    strbuf_append(out, &g->count, 8);
    strbuf_append(out, &has, 1);
    strbuf_append(out, &g->wend, 8);
    for (int j = 0; j < ag->spec.naggs; j++) {
        const Acc *acc = &g->acc[j];
        strbuf_append(out, &acc->n, 8);
        switch (ag->kinds[j]) {
        case ACC_SUM_INT: case ACC_SUM_INT8: case ACC_AVG_INT:
        case ACC_BOOL_AND: case ACC_BOOL_OR:
            strbuf_append(out, &acc->isum, 16);
            break;
        case ACC_SUM_NUM: case ACC_AVG_NUM: case ACC_VAR: {
            strbuf_append(out, &acc->nan, 8);
            strbuf_append(out, &acc->pinf, 8);
            strbuf_append(out, &acc->ninf, 8);
            strbuf_append(out, &acc->nscales, 4);
            strbuf_append(out, acc->scales, sizeof(int64_t) * (size_t)acc->nscales);
            StrBuf t;
            strbuf_init(&t);
            num_format(&acc->nsum, &t);
            uint32_t len = (uint32_t)t.len;
            strbuf_append(out, &len, 4);
            strbuf_append(out, t.data, t.len);
            if (ag->kinds[j] == ACC_VAR) {
                strbuf_reset(&t);
                num_format(&acc->nsq, &t);
                len = (uint32_t)t.len;
                strbuf_append(out, &len, 4);
                strbuf_append(out, t.data, t.len);
            }
            strbuf_free(&t);
            break;
        }
        default:
            break;
        }
    }
    row_encode(g->vals, 0, out);
}

/* Reads group g's multisets back from the store. */
static int ms_load(EngOp *op, Agg *ag, Group *g, EngCtx *cx)
{
    StrBuf k;
    strbuf_init(&k);
    ms_prefix(op, g, &k);
    StateScan *s = state_scan_open(cx->st, k.data, k.len);
    const void *key, *val;
    size_t klen, vlen;
    int rc = 0;
    while (state_scan_next(s, &key, &klen, &val, &vlen)) {
        const uint8_t *kp = (const uint8_t *)key + k.len;
        size_t rest = klen - k.len;
        int j = rest > 0 ? kp[0] : -1;
        if (j < 0 || j >= ag->spec.naggs || ag->kinds[j] < ACC_MIN || vlen < 8) {
            rc = corrupt(cx->err);
            break;
        }
        bool isnew;
        void **slot = eng_map_upsert(g->acc[j].ms, kp + 1, rest - 1, &isnew);
        MsEntry *e = arena_zalloc(&ag->cache, sizeof(MsEntry));
        memcpy(&e->count, val, 8);
        if (e->count > 0)
            g->acc[j].isum++;       /* count(DISTINCT): the values of weight > 0 */
        Batch b = {1, 1, &e->v};
        vector_init(&e->v, &ag->cache, ag->spec.aggs[j].args[0]->type, 1, true);
        if (row_decode((const uint8_t *)val + 8, vlen - 8, &b, 0, &ag->cache) < 0) {
            rc = corrupt(cx->err);
            break;
        }
        *slot = e;
    }
    if (state_scan_close(s, rc < 0 ? NULL : cx->err) < 0)
        rc = -1;
    strbuf_free(&k);
    return rc;
}

/* The group of key k: the cache's, else the store's, else a new one with
 * the values of row `row` of vals and window end wend. */
static int group_get(EngOp *op, Agg *ag, const StrBuf *k, const Vector *vals, uint32_t row,
                     int64_t wend, EngCtx *cx, Group **out)
{
    bool isnew;
    void **slot = eng_map_upsert(&ag->groups, k->data, k->len, &isnew);
    if (!isnew) {
        *out = *slot;
        return 0;
    }
    Group *g = arena_zalloc(&ag->cache, group_size(ag));
    g->key = arena_memdup(&ag->cache, k->len ? k->data : "", k->len ? k->len : 1);
    g->klen = (uint32_t)k->len;
    group_init_accs(ag, g);
    *slot = g;
    void *v = NULL;
    size_t vlen = 0;
    int found = 0;
    if (!ag->loaded) {          /* (loaded: the cache has every stored group) */
        StrBuf sk;
        strbuf_init(&sk);
        strbuf_append(&sk, op->prefix, ENG_PREFIX_LEN);
        strbuf_putc(&sk, 'g');
        strbuf_append(&sk, g->key, g->klen);
        found = state_get(cx->st, sk.data, sk.len, cx->arena, &v, &vlen, cx->err);
        strbuf_free(&sk);
    }
    if (found < 0)
        return -1;
    if (found) {
        if (group_decode(ag, g, v, vlen, cx->err) < 0 || ms_load(op, ag, g, cx) < 0)
            return -1;
    } else {
        g->wend = wend;
        g->vals = batch_alloc(&ag->cache, ag->gtypes, (uint32_t)ag->spec.ngroups, 1);
        g->vals->nrows = 1;
        for (int c = 0; c < ag->spec.ngroups; c++)
            ex_copy_value(&g->vals->cols[c], 0, &vals[c], row, &ag->cache);
    }
    *out = g;
    return 0;
}

/* The extreme of acc's multiset (want -1: min, 1: max), NULL when it has
 * no value of weight > 0; kept in acc until it is retracted. */
static const MsEntry *ms_best(Acc *acc, int want)
{
    if (acc->best_known)
        return acc->best;
    MsEntry *best = NULL;
    for (uint32_t s = 0; s < acc->ms->cap; s++) {
        MsEntry *e = acc->ms->slots[s].value;
        if (acc->ms->slots[s].key == NULL || e->count <= 0)
            continue;
        if (best == NULL || ex_value_cmp(&e->v, 0, &best->v, 0) * want > 0)
            best = e;
    }
    acc->best = best;
    acc->best_known = true;
    return best;
}

/* Group g's output row, one row in a. */
static int group_row(const Agg *ag, Group *g, Arena *a, SlError *err, Batch **out)
{
    int ng = ag->spec.ngroups, nw = ag->windowed ? 2 : 0;
    Batch *b = batch_alloc(a, ag->otypes, (uint32_t)(ng + nw + ag->spec.naggs), 1);
    b->nrows = 1;
    for (int c = 0; c < ng; c++)
        ex_copy_value(&b->cols[c], 0, &g->vals->cols[c], 0, NULL);
    if (nw) {
        b->cols[ng].v.i64[0] = g->wend - ag->spec.window.size_us;
        b->cols[ng].nulls[0] = 0;
        b->cols[ng + 1].v.i64[0] = g->wend;
        b->cols[ng + 1].nulls[0] = 0;
    }
    for (int j = 0; j < ag->spec.naggs; j++) {
        Acc *acc = &g->acc[j];
        Vector *o = &b->cols[ng + nw + j];
        o->nulls[0] = 0;
        if (acc->n == 0 && ag->kinds[j] != ACC_COUNT && ag->kinds[j] != ACC_COUNT_DISTINCT) {
            o->nulls[0] = 1;
            continue;
        }
        switch (ag->kinds[j]) {
        case ACC_COUNT:
            o->v.i64[0] = acc->n;
            break;
        case ACC_COUNT_DISTINCT:
            o->v.i64[0] = (int64_t)acc->isum;
            break;
        case ACC_SUM_INT:
            if (acc->isum > INT64_MAX || acc->isum < INT64_MIN)
                return sl_error(err, ERRCODE_NUMERIC_VALUE_OUT_OF_RANGE, "bigint out of range");
            o->v.i64[0] = (int64_t)acc->isum;
            break;
        case ACC_SUM_INT8:
            num_from_i128(a, acc->isum, &o->v.num[0]);
            break;
        case ACC_AVG_INT: {
            SlNumeric s, c;
            num_from_i128(a, acc->isum, &s);
            num_from_int64(a, acc->n, &c);
            if (num_div(a, &s, &c, &o->v.num[0], err) < 0)
                return -1;
            break;
        }
        case ACC_SUM_NUM:
            num_total(a, acc, &o->v.num[0]);
            break;
        case ACC_AVG_NUM: {
            SlNumeric s, c;
            num_total(a, acc, &s);
            num_from_int64(a, acc->n, &c);
            if (num_div(a, &s, &c, &o->v.num[0], err) < 0)
                return -1;
            break;
        }
        case ACC_VAR: {
            /* the sums at the largest display scale still counted, as
             * PostgreSQL's sum of the rows there are has */
            int scale = acc->nscales - 1;
            while (scale > 0 && acc->scales[scale] == 0)
                scale--;
            scale = scale > 0 ? scale : 0;
            SlNumeric sx, sxx;
            num_round(a, &acc->nsum, scale, &sx);
            num_round(a, &acc->nsq, 2 * scale, &sxx);
            bool null;
            if (ex_agg_var_exact(a, acc->n, acc->nan + acc->pinf + acc->ninf > 0, &sx, &sxx,
                                 acc->var_sample, acc->var_stddev, &o->v.num[0], &null,
                                 err) < 0)
                return -1;
            o->nulls[0] = null;
            break;
        }
        case ACC_BOOL_AND:
            o->v.b[0] = acc->isum == acc->n;
            break;
        case ACC_BOOL_OR:
            o->v.b[0] = acc->isum > 0;
            break;
        case ACC_MIN: case ACC_MAX: {
            const MsEntry *best = ms_best(acc, ag->kinds[j] == ACC_MIN ? -1 : 1);
            if (best == NULL)
                o->nulls[0] = 1;
            else
                ex_copy_value(o, 0, &best->v, 0, NULL);
            break;
        }
        }
    }
    *out = b;
    return 0;
}

/* Marks g changed in this batch, keeping its row before the batch. */
static int touch(Agg *ag, Group *g, EngCtx *cx)
{
    if (g->touched)
        return 0;
    g->touched = true;
    g->old = NULL;
    if (g->exists && !ag->close_only && group_row(ag, g, cx->arena, cx->err, &g->old) < 0)
        return -1;
    if (ag->ntouched == ag->cap_touched) {
        ag->cap_touched = ag->cap_touched ? ag->cap_touched * 2 : 64;
        ag->touched = sl_realloc(ag->touched, sizeof(Group *) * (size_t)ag->cap_touched);
    }
    ag->touched[ag->ntouched++] = g;
    return 0;
}

/* ------------------------------------------------------------ event time */

/* Whether the group of window end wend and group values row `row` of vals
 * is closed by input watermark wm: every later input row has its window's
 * time >= wm + woff, so a window ending at or before that gets no more
 * rows; and a time key's value v, once below wm + its offset, no more. */
static bool closed_by(const Agg *ag, int64_t wend, const Vector *vals, uint32_t row, int64_t wm)
{
    if (wm == INT64_MIN)
        return false;
    if (ag->wclose && wend <= eng_time_add(wm, ag->woff))
        return true;
    for (int t = 0; t < ag->nkt; t++) {
        const Vector *v = &vals[ag->kt[t]];
        if (!vector_is_null(v, row) && v->v.i64[row] < eng_time_add(wm, ag->kt_off[t]))
            return true;
    }
    return false;
}

/* The committed watermark the groups were evicted at (key 'w'), once. */
static int load_closed(EngOp *op, Agg *ag, EngCtx *cx)
{
    if (ag->closed_loaded || (!ag->wclose && ag->nkt == 0))
        return 0;
    if (eng_bound_get(op, cx, 'w', "aggregate", &ag->closed_wm) < 0)
        return -1;
    ag->closed_loaded = true;
    return 0;
}

static StateScan *open_groups(const EngOp *op, const Agg *ag, EngCtx *cx, StrBuf *p);

/* A bounded aggregate (its groups closed by the watermark) reads every
 * committed group into the cache at once, on the first touch after a
 * restore (one scan of 'g'), so a new group costs no lookup and eviction
 * walks the cache alone.  0, or -1 with cx->err set. */
static int load_all(EngOp *op, Agg *ag, EngCtx *cx)
{
    if (ag->loaded || (!ag->wclose && ag->nkt == 0))
        return 0;
    if (load_closed(op, ag, cx) < 0)
        return -1;
    StrBuf p;
    strbuf_init(&p);
    StateScan *s = open_groups(op, ag, cx, &p);
    const void *key, *val;
    size_t klen, vlen;
    int rc = 0;
    while (rc == 0 && state_scan_next(s, &key, &klen, &val, &vlen)) {
        const uint8_t *gk = (const uint8_t *)key + p.len;
        size_t gklen = klen - p.len;
        bool isnew;
        void **slot = eng_map_upsert(&ag->groups, gklen ? (const void *)gk : "", gklen, &isnew);
        if (!isnew)
            continue;
        Group *g = arena_zalloc(&ag->cache, group_size(ag));
        g->key = arena_memdup(&ag->cache, gklen ? (const void *)gk : "", gklen ? gklen : 1);
        g->klen = (uint32_t)gklen;
        group_init_accs(ag, g);
        *slot = g;
        if (group_decode(ag, g, val, vlen, cx->err) < 0 || ms_load(op, ag, g, cx) < 0)
            rc = -1;
    }
    if (state_scan_close(s, rc < 0 ? NULL : cx->err) < 0)
        rc = -1;
    strbuf_free(&p);
    if (rc < 0)
        return -1;
    ag->loaded = true;
    return 0;
}

/* ------------------------------------------------------------------ push */

/* Adds row i of the batch (weight w; its calls' arguments av, their
 * filters fv) to group g's accumulators.  0, or -1 with cx->err set. */
static int acc_row(Agg *ag, Group *g, uint32_t i, int64_t w, const Vector *av, const Vector *fv,
                   StrBuf *vk, EngCtx *cx)
{
    const EngAggSpec *sp = &ag->spec;
    for (int j = 0; j < sp->naggs; j++) {
        const AggCall *c = &sp->aggs[j];
        Acc *acc = &g->acc[j];
        const Vector *a = &av[j];
        if (c->filter && (vector_is_null(&fv[j], i) || !fv[j].v.b[i]))
            continue;
        if (!c->star && vector_is_null(a, i))
            continue;
        acc->n += w;
        switch (ag->kinds[j]) {
        case ACC_COUNT:
            break;
        case ACC_SUM_INT: case ACC_SUM_INT8: case ACC_AVG_INT: {
            int64_t x = a->type.id == TYPE_INT2 ? a->v.i16[i]
                      : a->type.id == TYPE_INT4 ? a->v.i32[i] : a->v.i64[i];
            acc->isum += (__int128)x * w;
            break;
        }
        case ACC_SUM_NUM: case ACC_AVG_NUM: {
            const SlNumeric *x = &a->v.num[i];
            if (x->sign == NUM_NAN)
                acc->nan += w;
            else if (x->sign == NUM_PINF)
                acc->pinf += w;
            else if (x->sign == NUM_NINF)
                acc->ninf += w;
            else if (num_accumulate(cx->arena, &ag->cache, acc, x, w, cx->err) < 0)
                return -1;
            break;
        }
        case ACC_VAR: {
            SlNumeric xv, sq, t, r;
            const SlNumeric *x = &xv;
            if (a->type.id == TYPE_NUMERIC)
                x = &a->v.num[i];
            else
                num_from_int64(cx->arena, a->type.id == TYPE_INT2 ? a->v.i16[i]
                                          : a->type.id == TYPE_INT4 ? a->v.i32[i]
                                                                    : a->v.i64[i], &xv);
            if (x->sign == NUM_NAN) {
                acc->nan += w;
            } else if (x->sign == NUM_PINF) {
                acc->pinf += w;
            } else if (x->sign == NUM_NINF) {
                acc->ninf += w;
            } else {
                SlNumeric wn;
                num_from_int64(cx->arena, w, &wn);
                if (num_accumulate(cx->arena, &ag->cache, acc, x, w, cx->err) < 0 ||
                    num_mul(cx->arena, x, x, &sq, cx->err) < 0 ||
                    num_mul(cx->arena, &sq, &wn, &t, cx->err) < 0 ||
                    num_add(cx->arena, &acc->nsq, &t, &r, cx->err) < 0)
                    return -1;
                acc->nsq = r;
            }
            break;
        }
        case ACC_BOOL_AND: case ACC_BOOL_OR:
            if (a->v.b[i])
                acc->isum += w;
            break;
        case ACC_MIN: case ACC_MAX: case ACC_COUNT_DISTINCT: {
            int want = ag->kinds[j] == ACC_MIN ? -1 : 1;
            MsEntry *old = NULL;
            if (sp->inserts_only && ag->kinds[j] != ACC_COUNT_DISTINCT) {
                /* the multiset holds the extreme alone: a value that does
                 * not reach it is not kept, one that passes it replaces it */
                if (w < 0)
                    return sl_error(cx->err, ERRCODE_INTERNAL_ERROR,
                                    "aggregate: a retraction reached min/max over a stream");
                old = (MsEntry *)ms_best(acc, want);
                if (old != NULL && ex_value_cmp(a, i, &old->v, 0) * want < 0)
                    break;
            }
            strbuf_reset(vk);
            ex_key_encode(a, 1, i, vk);
            MsEntry *e = ms_entry(ag, acc, vk->data, vk->len, a, i);
            int64_t before = e->count;
            e->count += w;
            e->dirty = true;
            if (ag->kinds[j] == ACC_COUNT_DISTINCT) {
                acc->isum += (e->count > 0) - (before > 0);
                break;
            }
            if (e == acc->best) {
                if (e->count <= 0)
                    acc->best_known = false;
            } else if (e->count > 0 && acc->best_known &&
                     (acc->best == NULL || ex_value_cmp(&e->v, 0, &acc->best->v, 0) * want > 0))
                acc->best = e;
            if (old != NULL && acc->best != old) {
                old->count = 0;         /* deleted at checkpoint */
                old->dirty = true;
            }
            break;
        }
        }
    }
    return 0;
}

static int agg_push(EngOp *op, int input, const EngDelta *d, EngCtx *cx)
{
    SL_UNUSED(input);
    Agg *ag = op->self;
    const EngAggSpec *sp = &ag->spec;
    uint32_t n = d->rows.nrows;
    if (load_closed(op, ag, cx) < 0 || load_all(op, ag, cx) < 0)
        return -1;
    Vector *gv = ARENA_ARRAY(cx->arena, Vector, sp->ngroups > 0 ? sp->ngroups : 1);
    Vector *av = ARENA_ARRAY(cx->arena, Vector, sp->naggs > 0 ? sp->naggs : 1);
    Vector *fv = ARENA_ARRAY(cx->arena, Vector, sp->naggs > 0 ? sp->naggs : 1);
    Vector tv;
    for (int c = 0; c < sp->ngroups; c++)
        if (ex_eval(cx->ecx, sp->groups[c], &d->rows, n, &gv[c]) < 0)
            return -1;
    if (ag->windowed && ex_eval(cx->ecx, sp->window.time, &d->rows, n, &tv) < 0)
        return -1;
    for (int j = 0; j < sp->naggs; j++) {
        const AggCall *c = &sp->aggs[j];
        if ((!c->star && ex_eval(cx->ecx, c->args[0], &d->rows, n, &av[j]) < 0) ||
            (c->filter && ex_eval(cx->ecx, c->filter, &d->rows, n, &fv[j]) < 0))
            return -1;
    }
    StrBuf k, vk;
    strbuf_init(&k);
    strbuf_init(&vk);
    int rc = -1;
    /* a tumbling window is a sliding one whose slide is its size */
    int64_t size = sp->window.size_us;
    int64_t slide = sp->window.kind == WINDOW_SLIDE ? sp->window.slide_us : size;
    int nwin = ag->windowed ? (int)((size + slide - 1) / slide) : 1;
    for (uint32_t i = 0; i < n; i++) {
        int64_t w = d->weights[i];
        if (w == 0)
            continue;
        if (ag->windowed &&
            (vector_is_null(&tv, i) || tv.v.i64[i] == INT64_MIN || tv.v.i64[i] == INT64_MAX))
            continue;
        /* the row's windows: those of start floor(t, slide) - j * slide
         * that still hold t (the batch engine's, op_agg.c); first the
         * earliest, so a closed one is seen before any group changes */
        for (int j = nwin - 1; j >= 0; j--) {
            int64_t wend = 0;
            strbuf_reset(&k);
            if (ag->windowed) {
                int64_t t = tv.v.i64[i];
                int64_t ws = ex_window_floor(t, slide) - (int64_t)j * slide;
                if (ws + size <= t)
                    continue;
                wend = ws + size;
                uint8_t tk[8];
                put_time_key(tk, wend);
                strbuf_append(&k, tk, 8);
            }
            if (closed_by(ag, wend, gv, i, ag->closed_wm)) {
                sl_error(cx->err, ERRCODE_DATA_EXCEPTION,
                         "a row reached an aggregate for a group its watermark closed");
                sl_error_hint(cx->err, "rows below the watermark are dropped before the graph "
                                       "(late rows); this one was not");
                goto out;
            }
            ex_key_encode(gv, sp->ngroups, i, &k);
            Group *g;
            if (group_get(op, ag, &k, gv, i, wend, cx, &g) < 0 || touch(ag, g, cx) < 0)
                goto out;
            g->count += w;
            if (acc_row(ag, g, i, w, av, fv, &vk, cx) < 0)
                goto out;
        }
    }
    rc = 0;
out:
    strbuf_free(&k);
    strbuf_free(&vk);
    return rc;
}

/* ------------------------------------------------------- watermark, flush */

/* Kept until flush: the batch's rows came before the watermark and may be
 * in groups it closes, so the groups' rows go out first (flush), then
 * the output watermark; the groups go at checkpoint. */
static int agg_watermark(EngOp *op, int input, int64_t wm_us, EngCtx *cx)
{
    SL_UNUSED(input);
    SL_UNUSED(cx);
    Agg *ag = op->self;
    if (wm_us > ag->wm)
        ag->wm = wm_us;
    return 0;
}

static int emit_rows(EngOp *op, EngCtx *cx);

static int emit_closed(EngOp *op, EngCtx *cx);

static int agg_flush(EngOp *op, EngCtx *cx)
{
    Agg *ag = op->self;
    if (emit_rows(op, cx) < 0 || (ag->close_only && emit_closed(op, cx) < 0))
        return -1;
    return op->out_time.n > 0 && ag->wm > INT64_MIN ? eng_emit_watermark(op, ag->wm, cx) : 0;
}

static int emit_rows(EngOp *op, EngCtx *cx)
{
    Agg *ag = op->self;
    if (ag->scalar && !ag->scalar_seen) {
        /* the one group of an aggregate without GROUP BY has a row from
         * the start */
        StrBuf k;
        strbuf_init(&k);
        Group *g;
        int rc = group_get(op, ag, &k, NULL, 0, 0, cx, &g);
        strbuf_free(&k);
        if (rc < 0 || touch(ag, g, cx) < 0)
            return -1;
        ag->scalar_seen = true;
    }
    if (ag->ntouched == 0)
        return 0;
    EngDelta out, cons;
    eng_delta_init(&out, cx->arena, op->out_cols, op->out_ncols, (uint32_t)ag->ntouched * 2);
    for (int t = 0; t < ag->ntouched; t++) {
        Group *g = ag->touched[t];
        if (g->count < 0)
            return sl_error(cx->err, ERRCODE_INTERNAL_ERROR,
                            "aggregate: a group has more rows retracted than inserted");
        if (g->old)
            eng_delta_append(&out, cx->arena, g->old, 0, -1);
        g->exists = ag->scalar || g->count > 0;
        if (g->exists && !ag->close_only) {
            Batch *row;
            if (group_row(ag, g, cx->arena, cx->err, &row) < 0)
                return -1;
            eng_delta_append(&out, cx->arena, row, 0, 1);
        }
    }
    eng_delta_consolidate(&out, cx->arena, &cons);
    return eng_emit(op, &cons, cx);
}

/* The next group of scan s (of the committed groups, plen bytes of prefix
 * before their keys) that the cache does not hold and watermark wm
 * closes, decoded into tmp (its key pointing into the scan's copy): 1; 0
 * at the end, or at the first open window when only the window closes
 * groups (their keys are in time order); -1 with cx->err set. */
static int next_closed_stored(Agg *ag, StateScan *s, size_t plen, int64_t wm, Group *tmp,
                              EngCtx *cx)
{
    const void *key, *val;
    size_t klen, vlen;
    while (state_scan_next(s, &key, &klen, &val, &vlen)) {
        const uint8_t *gk = (const uint8_t *)key + plen;
        size_t gklen = klen - plen;
        if (ag->wclose && ag->nkt == 0 && gklen >= 8 &&
            get_time_key(gk) > eng_time_add(wm, ag->woff))
            return 0;
        if (eng_map_find(&ag->groups, gklen ? (const void *)gk : "", gklen) != NULL)
            continue;
        if (group_decode(ag, tmp, val, vlen, cx->err) < 0)
            return -1;
        if (!closed_by(ag, tmp->wend, tmp->vals->cols, 0, wm))
            continue;
        tmp->key = gk;
        tmp->klen = (uint32_t)gklen;
        return 1;
    }
    return 0;
}

/* A scan of the committed groups (p: their prefix, prefix + 'g').  When
 * only the window closes groups, their keys start with the window's end
 * and those the last eviction closed are gone: it starts past them, so it
 * does not walk the deleted keys RocksDB still holds. */
static StateScan *open_groups(const EngOp *op, const Agg *ag, EngCtx *cx, StrBuf *p)
{
    strbuf_append(p, op->prefix, ENG_PREFIX_LEN);
    strbuf_putc(p, 'g');
    int64_t gone = eng_time_add(ag->closed_wm, ag->woff);
    if (!ag->wclose || ag->nkt > 0 || ag->closed_wm == INT64_MIN || gone == INT64_MAX)
        return state_scan_open(cx->st, p->data, p->len);
    uint8_t from[ENG_PREFIX_LEN + 1 + 8];
    memcpy(from, p->data, p->len);
    put_time_key(from + p->len, gone + 1);
    return state_scan_open_from(cx->st, p->data, p->len, from, sizeof(from));
}

/* Close-only mode: the rows of the groups the watermark closes in this
 * batch, each once (those of weight > 0), after the touched groups'
 * changes were taken in (emit_rows).  The committed groups it closes that
 * the cache does not hold are read into it first (a scan of 'g', which
 * ends at the first open window when only the window closes groups); the
 * checkpoint's eviction then deletes them all.  0, or -1 with cx->err
 * set. */
static int emit_closed(EngOp *op, EngCtx *cx)
{
    Agg *ag = op->self;
    int64_t wm = ag->wm;
    if (load_closed(op, ag, cx) < 0 || load_all(op, ag, cx) < 0)
        return -1;
    if (wm == INT64_MIN || wm <= ag->closed_wm)
        return 0;
    StrBuf p;
    strbuf_init(&p);
    StateScan *s = ag->loaded ? NULL : open_groups(op, ag, cx, &p);
    int rc = 0, more;
    Group *tmp = arena_zalloc(cx->arena, group_size(ag));
    StrBuf *load = NULL;        /* the keys of the closed committed groups */
    uint32_t nload = 0, capload = 0;
    while (s != NULL && (more = next_closed_stored(ag, s, p.len, wm, tmp, cx)) != 0) {
        if (more < 0) {
            rc = -1;
            break;
        }
        if (nload == capload) {
            capload = capload ? capload * 2 : 64;
            StrBuf *nl = ARENA_ARRAY(cx->arena, StrBuf, capload);
            if (nload)
                memcpy(nl, load, sizeof(StrBuf) * nload);
            load = nl;
        }
        load[nload].data = arena_memdup(cx->arena, tmp->key, tmp->klen + 1);
        load[nload++].len = tmp->klen;
    }
    if (s != NULL && state_scan_close(s, rc < 0 ? NULL : cx->err) < 0)
        rc = -1;
    strbuf_free(&p);
    for (uint32_t i = 0; rc == 0 && i < nload; i++) {
        Group *g;
        rc = group_get(op, ag, &load[i], NULL, 0, 0, cx, &g);
    }
    if (rc < 0)
        return -1;
    EngDelta out;
    eng_delta_init(&out, cx->arena, op->out_cols, op->out_ncols, 16);
    for (uint32_t i = 0; i < ag->groups.cap; i++) {
        Group *g = ag->groups.slots[i].value;
        if (ag->groups.slots[i].key == NULL || g->gone || !g->exists ||
            !closed_by(ag, g->wend, g->vals->cols, 0, wm))
            continue;
        Batch *row;
        if (group_row(ag, g, cx->arena, cx->err, &row) < 0)
            return -1;
        eng_delta_append(&out, cx->arena, row, 0, 1);
    }
    return eng_emit(op, &out, cx);
}

/* ------------------------------------------------------ checkpoint, restore */

static void drop_cache(Agg *ag);

/* Deletes group g's keys in cx->wb: its row and its multisets' values
 * (those in g's multisets when it is the cache's, else those the store
 * holds: fromstore). */
static int delete_group(EngOp *op, Agg *ag, const Group *g, bool fromstore, EngCtx *cx)
{
    StrBuf k;
    strbuf_init(&k);
    strbuf_append(&k, op->prefix, ENG_PREFIX_LEN);
    strbuf_putc(&k, 'g');
    strbuf_append(&k, g->key, g->klen);
    state_batch_delete(cx->wb, k.data, k.len);
    int rc = 0;
    if (fromstore && ag->has_ms) {
        ms_prefix(op, g, &k);
        StateScan *s = state_scan_open(cx->st, k.data, k.len);
        const void *key, *val;
        size_t klen, vlen;
        while (state_scan_next(s, &key, &klen, &val, &vlen))
            state_batch_delete(cx->wb, key, klen);
        rc = state_scan_close(s, cx->err);
    } else {
        for (int j = 0; j < ag->spec.naggs; j++) {
            const EngMap *ms = g->acc[j].ms;
            for (uint32_t i = 0; ms != NULL && i < ms->cap; i++) {
                if (ms->slots[i].key == NULL)
                    continue;
                ms_prefix(op, g, &k);
                uint8_t jb = (uint8_t)j;
                strbuf_append(&k, &jb, 1);
                strbuf_append(&k, ms->slots[i].key, ms->slots[i].klen);
                state_batch_delete(cx->wb, k.data, k.len);
            }
        }
    }
    strbuf_free(&k);
    return rc;
}

/* The watermark moved past closed_wm: deletes every group it closes, in
 * the store (committed before this batch) and in the cache (this batch's
 * writes are already in cx->wb, before these deletions), records the
 * watermark (key 'w') and, when a cached group closed, drops the cache
 * (the open groups reload by key on their next touch).  The groups' rows stay in the output: a closed
 * group no longer changes, it is not retracted. */
static int evict_loaded(EngOp *op, Agg *ag, EngCtx *cx);

static int evict(EngOp *op, Agg *ag, EngCtx *cx)
{
    if (ag->loaded)
        return evict_loaded(op, ag, cx);
    int64_t wm = ag->wm;
    StrBuf p;
    strbuf_init(&p);
    StateScan *s = open_groups(op, ag, cx, &p);
    int rc = 0, more;
    Group *tmp = arena_zalloc(cx->arena, group_size(ag));
    /* the cached groups' copies are the newer: below */
    while ((more = next_closed_stored(ag, s, p.len, wm, tmp, cx)) != 0) {
        if (more < 0 || delete_group(op, ag, tmp, true, cx) < 0) {
            rc = -1;
            break;
        }
        ag->evicted++;
    }
    if (state_scan_close(s, rc < 0 ? NULL : cx->err) < 0)
        rc = -1;
    strbuf_free(&p);
    if (rc < 0)
        return -1;
    bool closed_cached = false;
    for (uint32_t i = 0; i < ag->groups.cap; i++) {
        Group *g = ag->groups.slots[i].value;
        if (ag->groups.slots[i].key == NULL || !closed_by(ag, g->wend, g->vals->cols, 0, wm))
            continue;
        if (g->exists)
            ag->evicted++;      /* (one without a row was deleted above) */
        if (delete_group(op, ag, g, false, cx) < 0)
            return -1;
        closed_cached = true;
    }
    eng_bound_put(op, cx, 'w', wm);
    if (closed_cached) {
        bool seen = ag->scalar_seen;
        drop_cache(ag);
        ag->scalar_seen = seen;
    }
    ag->closed_wm = wm;
    return 0;
}

/* evict() when the cache holds every committed group: the closed ones
 * are deleted (by one range deletion of their window ends when only the
 * window closes groups and no call keeps a multiset) and marked gone; the
 * cache is dropped, to be read again, once the gone groups pass twice the
 * others plus 4,096. */
static int evict_loaded(EngOp *op, Agg *ag, EngCtx *cx)
{
    int64_t wm = ag->wm;
    bool range = ag->wclose && ag->nkt == 0 && !ag->has_ms;
    bool any = false;
    for (uint32_t i = 0; i < ag->groups.cap; i++) {
        Group *g = ag->groups.slots[i].value;
        if (ag->groups.slots[i].key == NULL || g->gone ||
            !closed_by(ag, g->wend, g->vals->cols, 0, wm))
            continue;
        if (g->exists)
            ag->evicted++;
        if (!range && delete_group(op, ag, g, false, cx) < 0)
            return -1;
        g->gone = true;
        ag->ngone++;
        any = true;
    }
    if (range && any) {
        /* every group key of a window ending at or before wm + woff */
        uint8_t a[ENG_PREFIX_LEN + 1], b[ENG_PREFIX_LEN + 1 + 8];
        memcpy(a, op->prefix, ENG_PREFIX_LEN);
        a[ENG_PREFIX_LEN] = 'g';
        memcpy(b, a, sizeof(a));
        int64_t last = eng_time_add(wm, ag->woff);
        size_t blen = sizeof(b);
        if (last == INT64_MAX) {
            b[ENG_PREFIX_LEN] = 'g' + 1;
            blen = sizeof(a);
        } else {
            put_time_key(b + sizeof(a), last + 1);
        }
        state_batch_delete_range(cx->wb, a, sizeof(a), b, blen);
    }
    eng_bound_put(op, cx, 'w', wm);
    ag->closed_wm = wm;
    if (ag->ngone > 4096 && ag->ngone > 2 * ((int64_t)ag->groups.n - ag->ngone)) {
        bool seen = ag->scalar_seen;
        drop_cache(ag);
        ag->scalar_seen = seen;
    }
    return 0;
}

static int agg_checkpoint(EngOp *op, EngCtx *cx)
{
    Agg *ag = op->self;
    StrBuf k, v;
    strbuf_init(&k);
    strbuf_init(&v);
    for (int t = 0; t < ag->ntouched; t++) {
        Group *g = ag->touched[t];
        strbuf_reset(&k);
        strbuf_append(&k, op->prefix, ENG_PREFIX_LEN);
        strbuf_putc(&k, 'g');
        strbuf_append(&k, g->key, g->klen);
        /* the numeric sums' digits move from the batch's arena to the cache */
        for (int j = 0; j < ag->spec.naggs; j++) {
            Acc *acc = &g->acc[j];
            if (acc->nsum.ndigits > acc->ncap) {
                acc->ncap = SL_MAX(acc->nsum.ndigits, acc->ncap * 2);
                acc->nbuf = arena_alloc(&ag->cache, (size_t)acc->ncap);
            }
            if (acc->nsum.ndigits > 0 && acc->nsum.digits != acc->nbuf) {
                memmove(acc->nbuf, acc->nsum.digits, (size_t)acc->nsum.ndigits);
                acc->nsum.digits = acc->nbuf;
            }
            if (acc->nsq.ndigits > acc->qcap) {
                acc->qcap = SL_MAX(acc->nsq.ndigits, acc->qcap * 2);
                acc->qbuf = arena_alloc(&ag->cache, (size_t)acc->qcap);
            }
            if (acc->nsq.ndigits > 0 && acc->nsq.digits != acc->qbuf) {
                memmove(acc->qbuf, acc->nsq.digits, (size_t)acc->nsq.ndigits);
                acc->nsq.digits = acc->qbuf;
            }
        }
        if (g->exists) {
            strbuf_reset(&v);
            group_encode(ag, g, &v);
            state_batch_put(cx->wb, k.data, k.len, v.data, v.len);
        } else {
            state_batch_delete(cx->wb, k.data, k.len);
        }
        for (int j = 0; j < ag->spec.naggs; j++) {
            EngMap *ms = g->acc[j].ms;
            if (ms == NULL)
                continue;
            for (uint32_t s = 0; s < ms->cap; s++) {
                MsEntry *e = ms->slots[s].value;
                if (ms->slots[s].key == NULL || !e->dirty)
                    continue;
                ms_prefix(op, g, &k);
                uint8_t jb = (uint8_t)j;
                strbuf_append(&k, &jb, 1);
                strbuf_append(&k, ms->slots[s].key, ms->slots[s].klen);
                if (e->count == 0) {
                    state_batch_delete(cx->wb, k.data, k.len);
                } else {
                    strbuf_reset(&v);
                    strbuf_append(&v, &e->count, 8);
                    Batch b = {1, 1, &e->v};
                    row_encode(&b, 0, &v);
                    state_batch_put(cx->wb, k.data, k.len, v.data, v.len);
                }
                e->dirty = false;
            }
        }
        g->touched = false;
        g->old = NULL;
    }
    ag->ntouched = 0;
    strbuf_free(&k);
    strbuf_free(&v);
    if ((ag->wclose || ag->nkt > 0) && ag->wm > INT64_MIN) {
        if (load_closed(op, ag, cx) < 0)
            return -1;
        if (ag->wm > ag->closed_wm)
            return evict(op, ag, cx);
    }
    return 0;
}

static void drop_cache(Agg *ag)
{
    for (uint32_t s = 0; s < ag->groups.cap; s++) {
        Group *g = ag->groups.slots[s].value;
        if (ag->groups.slots[s].key == NULL)
            continue;
        for (int j = 0; j < ag->spec.naggs; j++)
            if (g->acc[j].ms)
                eng_map_free(g->acc[j].ms);
    }
    eng_map_clear(&ag->groups);
    arena_reset(&ag->cache);
    ag->loaded = false;
    ag->ngone = 0;
    ag->ntouched = 0;
    ag->scalar_seen = false;
}

static int agg_restore(EngOp *op, EngCtx *cx)
{
    SL_UNUSED(cx);
    Agg *ag = op->self;
    drop_cache(ag);
    ag->wm = INT64_MIN;         /* the graph forgets the watermarks too */
    ag->closed_loaded = false;
    return 0;
}

static void agg_stats(const EngOp *op, EngOpStats *out)
{
    const Agg *ag = op->self;
    out->rows = (int64_t)ag->groups.n - ag->ngone;
    out->bytes = (int64_t)ag->cache.total;
    out->evicted = ag->evicted;
}

static void agg_explain(const EngOp *op, StrBuf *out)
{
    const Agg *ag = op->self;
    strbuf_puts(out, "Aggregate: ");
    for (int j = 0; j < ag->spec.naggs; j++) {
        if (j)
            strbuf_puts(out, ", ");
        plan_agg_call_deparse(&ag->spec.aggs[j], op->in_cols[0], NULL, out);
    }
    if (ag->spec.ngroups > 0) {
        strbuf_puts(out, " by ");
        for (int c = 0; c < ag->spec.ngroups; c++) {
            if (c)
                strbuf_puts(out, ", ");
            plan_expr_deparse(ag->spec.groups[c], op->in_cols[0], NULL, out);
        }
    }
    strbuf_puts(out, !ag->windowed                              ? ""
                     : ag->spec.window.kind == WINDOW_SLIDE ? " per sliding window"
                                                            : " per tumbling window");
    if (ag->close_only)
        strbuf_puts(out, ", each group emitted once, when the watermark closes it");
    strbuf_puts(out, op->bound == ENG_BOUND_NONE        ? " (one group)"
                     : op->bound == ENG_BOUND_WATERMARK ? " (state: evicts by watermark)"
                                                        : " (state: unbounded)");
}

/* output_mode 'append': a group's row once, when the watermark closes it
 * (its window's end, or an event-time group key); refused where nothing
 * closes the groups. */
static int agg_close_only(EngOp *op, SlError *err)
{
    Agg *ag = op->self;
    if (!ag->wclose && ag->nkt == 0) {
        sl_error(err, ERRCODE_FEATURE_NOT_SUPPORTED,
                 "output_mode 'append' needs every aggregate's groups to be closed by the "
                 "watermark");
        sl_error_hint(err, "Group by a window (WINDOW(ts, ...)) or by an event-time column "
                           "with a watermark, or use output_mode = 'update'.");
        return -1;
    }
    ag->close_only = true;
    return 0;
}

static void agg_free(EngOp *op)
{
    Agg *ag = op->self;
    drop_cache(ag);
    eng_map_free(&ag->groups);
    arena_destroy(&ag->cache);
    sl_free(ag->touched);
}

static const EngOpVt aggregate_vt = {
    .kind = "aggregate",
    .push = agg_push,
    .watermark = agg_watermark,
    .flush = agg_flush,
    .checkpoint = agg_checkpoint,
    .restore = agg_restore,
    .stats = agg_stats,
    .explain = agg_explain,
    .free = agg_free,
    .close_only = agg_close_only,
};

/* The offset of input time column e (a bare reference to one), into off. */
static bool time_col(const EngEdgeTime *t, const Expr *e, int64_t *off)
{
    for (int i = 0; t != NULL && e != NULL && e->kind == EXPR_COLUMN && i < t->n; i++)
        if (t->cols[i].col == e->index) {
            *off = t->cols[i].offset_us;
            return true;
        }
    return false;
}

EngOp *eng_op_aggregate_new(const ColumnDesc *in, int nin, const ColumnDesc *out, int nout,
                            const EngAggSpec *spec, const EngEdgeTime *in_time, SlError *err)
{
    if (spec->window.kind == WINDOW_SESSION) {
        /* the rewriter makes a session operator and groups by its
         * columns (op_session.c) */
        sl_error(err, ERRCODE_INTERNAL_ERROR,
                 "an aggregate operator is given a session window");
        return NULL;
    }
    AccKind kinds[spec->naggs + 1];
    for (int j = 0; j < spec->naggs; j++)
        if (acc_kind(&spec->aggs[j], &kinds[j], err) < 0)
            return NULL;
    EngOp *op = eng_op_new(&aggregate_vt, 1, sizeof(Agg));
    Agg *ag = op->self;
    ag->spec = *spec;
    ag->windowed = spec->window.kind == WINDOW_TUMBLE || spec->window.kind == WINDOW_SLIDE;
    ag->scalar = spec->ngroups == 0 && !ag->windowed;
    ag->kinds = arena_memdup(&op->arena, kinds, sizeof(AccKind) * (size_t)(spec->naggs + 1));
    ag->gtypes = ARENA_ARRAY(&op->arena, SlType, spec->ngroups + 1);
    for (int c = 0; c < spec->ngroups; c++)
        ag->gtypes[c] = spec->groups[c]->type;
    ag->otypes = ARENA_ARRAY(&op->arena, SlType, nout + 1);
    for (int c = 0; c < nout; c++)
        ag->otypes[c] = out[c].type;
    arena_init(&ag->cache, 16384);
    eng_map_init(&ag->groups, &ag->cache);
    op->in_cols[0] = in;
    op->in_ncols[0] = nin;
    op->out_cols = out;
    op->out_ncols = nout;
    ag->wm = ag->closed_wm = INT64_MIN;
    if (in_time != NULL)
        op->in_time[0] = *in_time;
    /* output time: a group key that is an input time column keeps its
     * values, so its offset; a window over one: every later row's time t
     * is >= wm + off, its window ends after t (window_end >= wm + off + 1)
     * and starts at window_end - size */
    EngEdgeTime *ot = &op->out_time;
    int64_t off;
    for (int c = 0; c < spec->ngroups && ag->nkt < ENG_MAX_TIME; c++)
        if (time_col(in_time, spec->groups[c], &off)) {
            ag->kt[ag->nkt] = c;
            ag->kt_off[ag->nkt++] = off;
            ot->cols[ot->n++] = (EngTimeCol){c, off};
        }
    if (ag->windowed && time_col(in_time, spec->window.time, &ag->woff)) {
        ag->wclose = true;
        int64_t size = spec->window.size_us;
        if (ot->n < ENG_MAX_TIME)
            ot->cols[ot->n++] = (EngTimeCol){spec->ngroups,
                                             eng_time_add(eng_time_add(ag->woff, 1), -size)};
        if (ot->n < ENG_MAX_TIME)
            ot->cols[ot->n++] = (EngTimeCol){spec->ngroups + 1, eng_time_add(ag->woff, 1)};
    }
    /* one group without min/max keeps one key: no bound needed; groups
     * closed by the watermark are evicted; else groups and multisets grow
     * with the distinct keys and values */
    for (int j = 0; j < spec->naggs; j++)
        ag->has_ms |= kinds[j] >= ACC_MIN;
    op->bound = ag->scalar && !ag->has_ms       ? ENG_BOUND_NONE
              : ag->wclose || ag->nkt > 0 ? ENG_BOUND_WATERMARK
                                          : ENG_BOUND_UNBOUNDED;
    return op;
}
