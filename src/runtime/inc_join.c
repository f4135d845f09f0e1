/*
 * inc_join.c -- the stream-stream interval join (see inc_join.h,
 * docs/engine.md "Stream-stream interval joins").
 *
 *   inc_join_build, inc_join_side_inputs
 *   inc_join_read, inc_join_process
 *   inc_batch_copy
 *
 * The time bound: from the join's residual condition, the conjuncts that
 * compare one side's time column (plus or minus a constant interval) with
 * the other's give lo <= tr - tl <= hi, where tl, tr are the left and right
 * rows' event times; both bounds are needed, and both time columns must be
 * watermark columns of their streams.  The whole condition (keys and
 * residual) still decides each match; the bound only decides which kept
 * rows a batch loads and when a row is evicted.
 *
 * A batch: the new rows of each side (a row older than its side's
 * watermark at the start of the batch is late: dropped and counted) are
 * matched with the new rows of the other side and with its kept rows in
 * the time range they can match (one range scan per side).  Then every
 * row that can no longer match is evicted: a left row once the right
 * side's watermark after the batch passes tl + hi (a right row that could
 * still match it would be late), a right row once the left watermark
 * passes tr - lo.  An evicted row of an outer side that never matched is
 * emitted then, NULL-padded, exactly once: its eviction is in the same
 * WriteBatch as the output.
 */
#include "inc_join.h"

#include "sluice/bytes.h"
#include "sluice/rowcodec.h"
#include "sluice/strbuf.h"

#define SKEY_LEN 26     /* 'J' + oid + side + time + batch id + row */

struct IncJoin {
    const Plan *join;
    const Plan *side[2];
    int         first[2], ninputs[2];
    int         tcol[2];            /* the time column of each side */
    int64_t     lo, hi;             /* lo <= tr - tl <= hi */
    bool        outer[2];           /* unmatched rows of this side are emitted */
    StateStore *st;
    uint8_t     prefix[6];          /* 'J' + oid + side (set per use) */
};

/* A row of one side: new in this batch, or kept from earlier ones. */
typedef struct JRow {
    const Batch *b;
    uint32_t     row;
    const char  *key;
    uint32_t     klen;
    int64_t      t;
    bool         isnew, matched, dirty;
    uint32_t     vlen;              /* a kept row: its stored value's length */
    uint8_t      skey[SKEY_LEN];
    struct JRow *next;              /* hash chain */
} JRow;

typedef struct JSide {
    JRow  **rows;                   /* new rows, then (process) kept ones */
    uint32_t nnew, n, cap;
    int64_t  tmin, tmax;            /* over the new rows */
} JSide;

/* Saturating arithmetic on event times (bounds near the ends of time). */
static int64_t sat_add(int64_t a, int64_t b)
{
    int64_t r;
    return __builtin_add_overflow(a, b, &r) ? (b > 0 ? INT64_MAX : INT64_MIN) : r;
}

static int64_t sat_sub(int64_t a, int64_t b)
{
    int64_t r;
    return __builtin_sub_overflow(a, b, &r) ? (b < 0 ? INT64_MAX : INT64_MIN) : r;
}

static int64_t floor_div(int64_t a, int64_t b)
{
    int64_t q = a / b;
    return (a % b != 0 && (a < 0) != (b < 0)) ? q - 1 : q;
}

/* ---------------------------------------------------------------------- */
/* Building                                                                */

static int refuse(SlError *err, const char *msg, const char *hint)
{
    sl_error(err, ERRCODE_FEATURE_NOT_SUPPORTED, "%s", msg);
    if (hint)
        sl_error_hint(err, "%s", hint);
    return -1;
}

/* e as column + constant offset: true with *col and *off. */
static bool linear_term(const Expr *e, int *col, int64_t *off)
{
    if (e->kind == EXPR_COLUMN) {
        *col = e->index;
        *off = 0;
        return true;
    }
    if (e->kind != EXPR_FUNC || e->fn == NULL || !e->fn->is_op || e->nargs != 2)
        return false;
    bool plus = strcmp(e->fn->name, "+") == 0, minus = strcmp(e->fn->name, "-") == 0;
    if (!plus && !minus)
        return false;
    const Expr *c = e->args[1], *t = e->args[0];
    if (plus && e->args[0]->kind == EXPR_CONST) {
        c = e->args[0];
        t = e->args[1];
    }
    if (c->kind != EXPR_CONST || c->type.id != TYPE_INTERVAL || vector_is_null(&c->value, 0))
        return false;
    const SlInterval *iv = &c->value.v.iv[0];
    if (iv->months != 0)
        return false;   /* a month has no fixed length */
    int64_t days_us, us;
    if (__builtin_mul_overflow((int64_t)iv->days, 86400000000LL, &days_us) ||
        __builtin_add_overflow(iv->usec, days_us, &us) || us == INT64_MIN ||
        !linear_term(t, col, off))
        return false;
    *off = plus ? sat_add(*off, us) : sat_sub(*off, us);
    return true;
}

/* Folds one conjunct into the bounds, if it compares the two sides' times. */
static void bound_from(IncJoin *j, const Expr *e, int nl)
{
    if (e->kind == EXPR_AND) {
        for (int i = 0; i < e->nargs; i++)
            bound_from(j, e->args[i], nl);
        return;
    }
    if (e->kind != EXPR_FUNC || e->fn == NULL || !e->fn->is_op || e->nargs != 2)
        return;
    const char *op = e->fn->name;
    int ge = strcmp(op, ">=") == 0 || strcmp(op, ">") == 0;
    int le = strcmp(op, "<=") == 0 || strcmp(op, "<") == 0;
    if (!ge && !le)
        return;
    int ca, cb;
    int64_t oa, ob;
    if (!linear_term(e->args[0], &ca, &oa) || !linear_term(e->args[1], &cb, &ob))
        return;
    /* As "right term OP left term". */
    if (ca < nl && cb >= nl) {
        int ct = ca; ca = cb; cb = ct;
        int64_t ot = oa; oa = ob; ob = ot;
        int g = ge; ge = le; le = g;
    } else if (!(ca >= nl && cb < nl)) {
        return;
    }
    int tl = cb, tr = ca - nl;
    if (j->tcol[0] < 0) {
        j->tcol[0] = tl;
        j->tcol[1] = tr;
    } else if (j->tcol[0] != tl || j->tcol[1] != tr) {
        return;     /* another pair of columns: the residual checks it */
    }
    /* tr + oa OP tl + ob  <=>  tr - tl OP ob - oa */
    int64_t d = sat_sub(ob, oa);
    if (ge && d > j->lo)
        j->lo = d;
    if (le && d < j->hi)
        j->hi = d;
}

int inc_join_build(Arena *a, const IncInputs *ins, StateStore *st, uint32_t query_oid,
                   IncJoin **out, SlError *err)
{
    IncJoin *j = ARENA_NEW(a, IncJoin);
    const Plan *p = ins->sjoin;
    j->join = p;
    j->side[0] = p->child;
    j->side[1] = p->right;
    j->first[0] = 0;
    j->ninputs[0] = ins->sjoin_nleft;
    j->first[1] = ins->sjoin_nleft;
    j->ninputs[1] = ins->n - ins->sjoin_nleft;
    j->tcol[0] = j->tcol[1] = -1;
    j->lo = INT64_MIN;
    j->hi = INT64_MAX;
    j->st = st;
    j->outer[0] = p->u.join.type == JOIN_LEFT || p->u.join.type == JOIN_FULL;
    j->outer[1] = p->u.join.type == JOIN_RIGHT || p->u.join.type == JOIN_FULL;
    if (p->u.join.residual)
        bound_from(j, p->u.join.residual, p->child->ncols);
    if (j->lo == INT64_MIN || j->hi == INT64_MAX)
        return refuse(err, "a stream-stream join needs a time bound on both sides' event times",
                      "Add a condition such as b.ts BETWEEN a.ts AND a.ts + INTERVAL '1 hour' "
                      "(a lower and an upper bound), so that kept rows can be evicted.");
    if (j->lo > j->hi)
        return refuse(err, "the time bound of the stream-stream join is empty",
                      "The lower bound of the time range must not exceed the upper one.");
    for (int s = 0; s < 2; s++) {
        const ColumnDesc *c = &j->side[s]->cols[j->tcol[s]];
        if (c->type.id != TYPE_TIMESTAMP && c->type.id != TYPE_TIMESTAMPTZ)
            return refuse(err, "the time bound of a stream-stream join must compare timestamps",
                          NULL);
        if (!inc_inputs_time_watermarked(ins, j->side[s], j->tcol[s])) {
            sl_error(err, ERRCODE_FEATURE_NOT_SUPPORTED,
                     "a stream-stream join needs a watermark on both sides' event times");
            sl_error_hint(err, "Declare WATERMARK FOR %s AS %s - INTERVAL '...' on the %s "
                          "stream.", c->name, c->name, s == 0 ? "left" : "right");
            return -1;
        }
    }
    j->prefix[0] = 'J';
    put_be32(j->prefix + 1, query_oid);
    *out = j;
    return 0;
}

void inc_join_bound(const IncJoin *j, int64_t *lo, int64_t *hi, const char **tl,
                    const char **tr)
{
    *lo = j->lo;
    *hi = j->hi;
    *tl = j->side[0]->cols[j->tcol[0]].name;
    *tr = j->side[1]->cols[j->tcol[1]].name;
}

void inc_join_side_inputs(const IncJoin *j, int side, int *first, int *n)
{
    *first = j->first[side];
    *n = j->ninputs[side];
}

/* ---------------------------------------------------------------------- */
/* Rows                                                                    */

Batch *inc_batch_copy(Arena *a, const Batch *in, const uint32_t *sel, uint32_t n)
{
    Batch *b = ARENA_NEW(a, Batch);
    b->ncols = in->ncols;
    b->nrows = n;
    b->cols = ARENA_ARRAY(a, Vector, in->ncols ? in->ncols : 1);
    for (uint32_t c = 0; c < in->ncols; c++) {
        vector_init(&b->cols[c], a, in->cols[c].type, n ? n : 1, true);
        b->cols[c].len = n;
        for (uint32_t i = 0; i < n; i++) {
            uint32_t r = sel ? sel[i] : i;
            b->cols[c].nulls[i] = vector_is_null(&in->cols[c], r);
            if (!b->cols[c].nulls[i])
                ex_copy_value(&b->cols[c], i, &in->cols[c], r, a);
        }
    }
    return b;
}

static void side_push(Arena *a, JSide *s, JRow *r)
{
    if (s->n == s->cap) {
        uint32_t cap = s->cap ? s->cap * 2 : 256;
        JRow **more = ARENA_ARRAY(a, JRow *, cap);
        if (s->n)
            memcpy(more, s->rows, sizeof(JRow *) * s->n);
        s->rows = more;
        s->cap = cap;
    }
    s->rows[s->n++] = r;
}

struct IncJoinRun {
    IncJoin      *j;
    IncJoinBatch *jb;
    JSide         side[2];
    uint32_t      seq;              /* row numbers of kept new rows */
};

/* The new rows of one side: late ones dropped, each with its key and time;
 * rows with a NULL key or time can match nothing (an outer side's are
 * emitted at once, by process). */
static int read_side(IncJoin *j, IncJoinBatch *jb, JSide *s, int side)
{
    const Plan *p = j->join;
    int nk = p->u.join.nkeys;
    Expr **keys = side == 0 ? p->u.join.lkeys : p->u.join.rkeys;
    s->tmin = INT64_MAX;
    s->tmax = INT64_MIN;
    ExOp *op = inc_inputs_exec(jb->inputs, jb->a, j->side[side], jb->err);
    if (op == NULL)
        return -1;
    ExBatch *eb;
    int rc;
    StrBuf kb;
    strbuf_init(&kb);
    EvalCtx ecx = {.arena = jb->chunk, .err = jb->err};
    while ((rc = ex_op_next(op, &eb)) > 0) {
        if (eb->n == 0)
            continue;
        arena_reset(jb->chunk);
        Batch *b = inc_batch_copy(jb->a, &eb->b, eb->sel, eb->n);
        Vector *kv = ARENA_ARRAY(jb->chunk, Vector, nk ? nk : 1);
        for (int k = 0; k < nk; k++)
            if (ex_eval(&ecx, keys[k], b, b->nrows, &kv[k]) < 0) {
                rc = -1;
                goto done;
            }
        const Vector *tv = &b->cols[j->tcol[side]];
        for (uint32_t i = 0; i < b->nrows; i++) {
            JRow *r = ARENA_NEW(jb->a, JRow);
            r->b = b;
            r->row = i;
            r->isnew = true;
            bool null = vector_is_null(tv, i);
            for (int k = 0; k < nk && !null; k++)
                null = vector_is_null(&kv[k], i);
            if (!null) {
                r->t = tv->v.i64[i];
                if (jb->has_wm[side] && r->t < jb->wm[side]) {
                    jb->late_rows++;
                    continue;
                }
                strbuf_reset(&kb);
                ex_key_encode(kv, nk, i, &kb);
                r->key = arena_memdup(jb->a, kb.data, kb.len);
                r->klen = (uint32_t)kb.len;
                s->tmin = SL_MIN(s->tmin, r->t);
                s->tmax = SL_MAX(s->tmax, r->t);
            } else {
                r->key = NULL;      /* matches nothing */
            }
            side_push(jb->a, s, r);
        }
    }
done:
    strbuf_free(&kb);
    ex_op_close(op);
    s->nnew = s->n;
    return rc < 0 ? -1 : 0;
}

IncJoinRun *inc_join_read(IncJoin *j, IncJoinBatch *jb)
{
    IncJoinRun *run = ARENA_NEW(jb->a, IncJoinRun);
    run->j = j;
    run->jb = jb;
    if (read_side(j, jb, &run->side[0], 0) < 0 || read_side(j, jb, &run->side[1], 1) < 0)
        return NULL;
    return run;
}

/* ---------------------------------------------------------------------- */
/* Matching, keeping, evicting                                             */

static void side_prefix(const IncJoin *j, int side, uint8_t *prefix)
{
    memcpy(prefix, j->prefix, 5);
    prefix[5] = (uint8_t)side;
}

static void encode_value(const JRow *r, StrBuf *out)
{
    uint8_t h[5];
    h[0] = r->matched;
    put_be32(h + 1, r->klen);
    strbuf_append(out, h, 5);
    strbuf_append(out, r->key, r->klen);
    row_encode(r->b, r->row, out);
}

/* A kept row from its state key and value (row and key copied into a). */
static JRow *decode_kept(IncJoinRun *run, int side, const void *k, const void *v, size_t vlen)
{
    IncJoinBatch *jb = run->jb;
    const Plan *sp = run->j->side[side];
    const uint8_t *p = v;
    if (vlen < 5 || get_be32(p + 1) > vlen - 5)
        goto corrupt;
    SlType *ct = ARENA_ARRAY(jb->a, SlType, sp->ncols ? sp->ncols : 1);
    for (int c = 0; c < sp->ncols; c++)
        ct[c] = sp->cols[c].type;
    Batch *b = batch_alloc(jb->a, ct, (uint32_t)sp->ncols, 1);
    uint32_t klen = get_be32(p + 1);
    if (row_decode(p + 5 + klen, vlen - 5 - klen, b, 0, jb->a) < 0)
        goto corrupt;
    b->nrows = 1;
    for (int c = 0; c < sp->ncols; c++)
        b->cols[c].len = 1;
    JRow *r = ARENA_NEW(jb->a, JRow);
    r->b = b;
    r->row = 0;
    r->matched = p[0] != 0;
    r->vlen = (uint32_t)vlen;
    r->key = arena_memdup(jb->a, p + 5, klen);
    r->klen = klen;
    memcpy(r->skey, k, SKEY_LEN);
    r->t = get_time_key(r->skey + 6);
    return r;
corrupt:
    sl_error(jb->err, ERRCODE_DATA_CORRUPTED, "join state of a continuous query is corrupt");
    return NULL;
}

/* Loads the kept rows of a side with event times in [lo, hi]. */
static int load_kept(IncJoinRun *run, int side, int64_t lo, int64_t hi)
{
    uint8_t prefix[6], start[14];
    side_prefix(run->j, side, prefix);
    memcpy(start, prefix, 6);
    put_time_key(start + 6, lo);
    StateScan *sc = state_scan_open_from(run->j->st, prefix, 6, start, sizeof(start));
    const void *k, *v;
    size_t klen, vlen;
    int rc = 0;
    while (state_scan_next(sc, &k, &klen, &v, &vlen)) {
        if (klen != SKEY_LEN)
            continue;
        int64_t t = get_time_key((const uint8_t *)k + 6);
        if (t < lo)
            continue;
        if (t > hi)
            break;
        JRow *r = decode_kept(run, side, k, v, vlen);
        if (r == NULL) {
            rc = -1;
            break;
        }
        side_push(run->jb->a, &run->side[side], r);
    }
    if (state_scan_close(sc, run->jb->err) < 0)
        return -1;
    return rc;
}

/* Pairs of rows that may match, evaluated a batch at a time. */
typedef struct Pairs {
    JRow    *l[EX_BATCH_ROWS];
    JRow    *r[EX_BATCH_ROWS];
    uint32_t n;
} Pairs;

/* A dense batch of the join's columns: per row, a left row (or NULLs) and a
 * right row (or NULLs). */
static Batch *join_rows(IncJoinRun *run, JRow *const *l, JRow *const *r, uint32_t n)
{
    const Plan *p = run->j->join;
    Arena *a = run->jb->chunk;
    int nl = p->child->ncols;
    Batch *b = ARENA_NEW(a, Batch);
    b->ncols = (uint32_t)p->ncols;
    b->nrows = n;
    b->cols = ARENA_ARRAY(a, Vector, p->ncols ? p->ncols : 1);
    for (int c = 0; c < p->ncols; c++) {
        Vector *v = &b->cols[c];
        vector_init(v, a, p->cols[c].type, n ? n : 1, true);
        v->len = n;
        for (uint32_t i = 0; i < n; i++) {
            const JRow *x = c < nl ? (l ? l[i] : NULL) : (r ? r[i] : NULL);
            int sc = c < nl ? c : c - nl;
            v->nulls[i] = x == NULL || vector_is_null(&x->b->cols[sc], x->row);
            if (!v->nulls[i])
                ex_copy_value(v, i, &x->b->cols[sc], x->row, NULL);
        }
    }
    return b;
}

static int flush_pairs(IncJoinRun *run, Pairs *ps)
{
    if (ps->n == 0)
        return 0;
    IncJoinBatch *jb = run->jb;
    arena_reset(jb->chunk);
    Batch *b = join_rows(run, ps->l, ps->r, ps->n);
    ExBatch eb = {*b, ARENA_ARRAY(jb->chunk, uint32_t, ps->n), 0};
    const Expr *cond = run->j->join->u.join.residual;
    Vector cv;
    EvalCtx ecx = {.arena = jb->chunk, .err = jb->err};
    if (cond != NULL && ex_eval(&ecx, cond, b, b->nrows, &cv) < 0)
        return -1;
    for (uint32_t i = 0; i < ps->n; i++) {
        if (cond != NULL && (vector_is_null(&cv, i) || !cv.v.b[i]))
            continue;
        eb.sel[eb.n++] = i;
        JRow *x[2] = {ps->l[i], ps->r[i]};
        for (int s = 0; s < 2; s++) {
            if (!x[s]->matched && !x[s]->isnew)
                x[s]->dirty = true;
            x[s]->matched = true;
        }
    }
    ps->n = 0;
    if (eb.n == 0)
        return 0;
    return jb->emit(jb->arg, ex_batch_compact(jb->chunk, &eb));
}

/* A right row's hash: its key and its time slot (slots are as wide as the
 * bound, so a left row's range [tl + lo, tl + hi] spans at most two). */
static uint32_t slot_hash(const JRow *r, int64_t slot, uint32_t mask)
{
    return (uint32_t)(ex_hash(r->key, r->klen) + (uint64_t)slot * 0x9E3779B97F4A7C15ull) & mask;
}

/* Every pair of a left and a right row with equal keys, at least one of
 * them new, whose times are within the bound (the bound's conjuncts are
 * part of the condition, so this only skips pairs it would refuse),
 * through the join's condition. */
static int match(IncJoinRun *run)
{
    const IncJoin *j = run->j;
    IncJoinBatch *jb = run->jb;
    JSide *L = &run->side[0], *R = &run->side[1];
    if (L->n == 0 || R->n == 0)
        return 0;
    int64_t width = sat_sub(j->hi, j->lo);
    if (width < 1)
        width = 1;
    uint32_t nb = 64;
    while (nb < 2 * R->n)
        nb *= 2;
    JRow **buckets = arena_zalloc(jb->a, sizeof(JRow *) * nb);
    for (uint32_t i = 0; i < R->n; i++) {
        JRow *r = R->rows[i];
        if (r->key == NULL)
            continue;
        uint32_t h = slot_hash(r, floor_div(r->t, width), nb - 1);
        r->next = buckets[h];
        buckets[h] = r;
    }
    Pairs *ps = ARENA_NEW(jb->a, Pairs);
    for (uint32_t i = 0; i < L->n; i++) {
        JRow *l = L->rows[i];
        if (l->key == NULL)
            continue;
        int64_t from = sat_add(l->t, j->lo), to = sat_add(l->t, j->hi);
        int64_t s0 = floor_div(from, width), s1 = floor_div(to, width);
        for (int64_t slot = s0; slot <= s1; slot++) {
            for (JRow *r = buckets[slot_hash(l, slot, nb - 1)]; r != NULL; r = r->next) {
                if ((!l->isnew && !r->isnew) || r->t < from || r->t > to ||
                    r->klen != l->klen || memcmp(r->key, l->key, l->klen) != 0)
                    continue;
                ps->l[ps->n] = l;
                ps->r[ps->n] = r;
                if (++ps->n == EX_BATCH_ROWS && flush_pairs(run, ps) < 0)
                    return -1;
            }
            if (slot == INT64_MAX)
                break;
        }
    }
    return flush_pairs(run, ps);
}

/* Emits rows of one side NULL-padded on the other, a batch at a time. */
static int emit_padded(IncJoinRun *run, int side, JRow **rows, uint32_t n)
{
    for (uint32_t at = 0; at < n; at += EX_BATCH_ROWS) {
        uint32_t k = SL_MIN(n - at, (uint32_t)EX_BATCH_ROWS);
        arena_reset(run->jb->chunk);
        Batch *b = join_rows(run, side == 0 ? rows + at : NULL, side == 1 ? rows + at : NULL, k);
        if (run->jb->emit(run->jb->arg, b) < 0)
            return -1;
    }
    return 0;
}

/* The kept row of side with this state key loaded by this batch, or NULL
 * (kept rows are loaded in key order, after the new ones). */
static JRow *find_loaded(JSide *s, const uint8_t *skey)
{
    uint32_t lo = s->nnew, hi = s->n;
    while (lo < hi) {
        uint32_t mid = lo + (hi - lo) / 2;
        int c = memcmp(s->rows[mid]->skey, skey, SKEY_LEN);
        if (c == 0)
            return s->rows[mid];
        if (c < 0)
            lo = mid + 1;
        else
            hi = mid;
    }
    return NULL;
}

/* Keeps the new rows that can still match, rewrites kept rows that matched
 * for the first time, and evicts the rows the other side's watermark has
 * passed: an outer side's unmatched ones are emitted, NULL-padded. */
static int keep_and_evict(IncJoinRun *run, int side)
{
    IncJoin *j = run->j;
    IncJoinBatch *jb = run->jb;
    JSide *s = &run->side[side];
    int other = 1 - side;
    bool has_cut = jb->has_next_wm[other];
    int64_t cut = side == 0 ? sat_sub(jb->next_wm[other], j->hi)
                            : sat_add(jb->next_wm[other], j->lo);
    JSide pad = {0};                /* the unmatched rows evicted, to emit */
    StrBuf val;
    strbuf_init(&val);
    uint8_t prefix[6];
    side_prefix(j, side, prefix);
    int rc = 0;
    for (uint32_t i = 0; i < s->n; i++) {
        JRow *r = s->rows[i];
        bool evictable = r->key == NULL || (has_cut && r->t < cut);
        if (r->isnew && evictable) {
            if (j->outer[side] && !r->matched) {
                side_push(jb->a, &pad, r);
            }
            continue;
        }
        if (evictable || (!r->isnew && !r->dirty))
            continue;   /* kept rows past the cut: the scan below evicts them */
        if (r->isnew) {
            memcpy(r->skey, prefix, 6);
            put_time_key(r->skey + 6, r->t);
            put_be64(r->skey + 14, (uint64_t)jb->batch_id);
            put_be32(r->skey + 22, run->seq++);
            jb->state_delta++;
        }
        strbuf_reset(&val);
        encode_value(r, &val);
        state_batch_put(jb->wb, r->skey, SKEY_LEN, val.data, val.len);
        jb->bytes_delta += r->isnew ? (int64_t)(SKEY_LEN + val.len)
                                    : (int64_t)val.len - (int64_t)r->vlen;
    }
    if (has_cut) {
        /* The rows before the last batch's cut are gone already: start
         * there, so the scan does not walk over their deletions. */
        uint8_t from[14];
        memcpy(from, prefix, 6);
        put_time_key(from + 6, INT64_MIN);
        if (jb->has_wm[other])
            put_time_key(from + 6, side == 0 ? sat_sub(jb->wm[other], j->hi)
                                             : sat_add(jb->wm[other], j->lo));
        StateScan *sc = state_scan_open_from(j->st, prefix, 6, from, sizeof(from));
        const void *k, *v;
        size_t klen, vlen;
        while (state_scan_next(sc, &k, &klen, &v, &vlen)) {
            if (klen != SKEY_LEN)
                continue;
            if (get_time_key((const uint8_t *)k + 6) >= cut)
                break;
            state_batch_delete(jb->wb, k, klen);
            jb->state_delta--;
            jb->bytes_delta -= (int64_t)(klen + vlen);
            jb->evicted_rows++;
            if (!j->outer[side])
                continue;
            JRow *r = find_loaded(s, k);
            if (r == NULL && (vlen == 0 || ((const uint8_t *)v)[0] == 0) &&
                (r = decode_kept(run, side, k, v, vlen)) == NULL) {
                rc = -1;
                break;
            }
            if (r == NULL || r->matched)
                continue;
            side_push(jb->a, &pad, r);
        }
        if (state_scan_close(sc, jb->err) < 0)
            rc = -1;
    }
    strbuf_free(&val);
    if (rc == 0)
        rc = emit_padded(run, side, pad.rows, pad.n);
    return rc;
}

int inc_join_process(IncJoinRun *run)
{
    IncJoin *j = run->j;
    JSide *L = &run->side[0], *R = &run->side[1];
    /* The kept rows the new ones can match: tl in [tr - hi, tr - lo]. */
    if (R->tmin != INT64_MAX &&
        load_kept(run, 0, sat_sub(R->tmin, j->hi), sat_sub(R->tmax, j->lo)) < 0)
        return -1;
    if (L->tmin != INT64_MAX &&
        load_kept(run, 1, sat_add(L->tmin, j->lo), sat_add(L->tmax, j->hi)) < 0)
        return -1;
    if (match(run) < 0 || keep_and_evict(run, 0) < 0 || keep_and_evict(run, 1) < 0)
        return -1;
    return 0;
}
