/*
 * inc_join.c -- the stream-stream interval join (see inc_join.h,
 * docs/engine.md "Stream-stream interval joins").
 *
 *   inc_join_build, inc_join_bound, inc_join_bucket, inc_join_side_inputs
 *   inc_join_read, inc_join_process, inc_join_done, inc_join_free
 *   inc_batch_copy
 *
 * The time bound: from the join's residual condition, the conjuncts that
 * compare one side's time column (plus or minus a constant interval) with
 * the other's give lo <= tr - tl <= hi, where tl, tr are the left and right
 * rows' event times; both bounds are needed, and both time columns must be
 * watermark columns of their streams.  The whole condition (keys and
 * residual) still decides each match; the bound only decides which kept
 * rows a batch reads and when a row is evicted.
 *
 * A batch reads the left side's new rows, then the right side's, a slice
 * of join_slice_rows at a time (a row older than its side's watermark at
 * the start of the batch is late: dropped and counted).  Each slice is
 * hashed and the other side's kept rows in the time range it can match are
 * read from their chunks and probed against the hash (a kept row is
 * decoded only when it has a partner); then the slice's rows become this
 * batch's chunks (in memory: PChunk) and the slice's memory is reused.  A
 * right slice also probes the left chunks of this batch's earlier slices,
 * so every pair with a new row is made once; a left row of this batch
 * that a right slice matches has its flag set in its chunk.  Once the
 * watermarks after the batch are known (inc_join_process), the batch's
 * chunks are put without the rows the cut has passed, one RocksDB key per
 * bucket of event time, batch and slice (bucket = (hi - lo) / 64, at least
 * 1 ms).  A chunk is deleted once the other side's watermark has passed
 * its whole bucket (64 keys or more at once: one range deletion): a left
 * row can match no more once the right watermark after the batch passes
 * tl + hi, a right row once the left one passes tr - lo.  An outer side's
 * row that never matched is emitted, NULL-padded, in the batch whose
 * watermark passes the row itself, exactly once (its chunk may stay a
 * little longer): that batch reads the chunks of the bucket the cut moved
 * through.  A kept row of an outer side that matches for the first time
 * gets a mark (its chunk's key + its number) instead of a rewrite of its
 * chunk.  Everything is in the batch's WriteBatch, with the output.
 *
 * The kept rows in memory: each side's committed chunks and marks are also
 * held in memory (inc_join_mem.h), up to join_memory bytes for both sides,
 * so a batch reads its kept rows without RocksDB; each chunk there carries
 * its rows' key hashes, so a slice with few keys decodes only the kept
 * rows whose hash its filter holds (docs/engine.md, "The probe by key
 * hash").  RocksDB stays the truth: a side is loaded from it by the first
 * batch that runs (after a start, or after a batch failed: the copy is
 * dropped then), and the copy changes only in inc_join_done, after the
 * batch's write has landed.  A side whose chunks exceed the cap is read
 * from RocksDB until its bytes (counted on) fall under half the cap.
 */
#include "inc_join.h"
#include "inc_join_mem.h"

#include "sluice/bytes.h"
#include "sluice/log.h"
#include "sluice/options.h"
#include "sluice/rowcodec.h"
#include "sluice/strbuf.h"

#include <inttypes.h>
#include <stdlib.h>

#define CKEY_LEN JMEM_KEY /* 'J' + oid + side + bucket start + batch id + chunk number */
#define MARK_LEN 30     /* a chunk's key + a row's number in it: matched later */
#define CHUNK_TAG 0xC7  /* a chunk's value starts with it (a single row's, written
                           before chunks, with its matched flag: 0 or 1) */
#define CHUNK_ROWS 4096 /* rows of a chunk at most */
#define BUCKETS 64      /* buckets per width of the time bound */
#define SLICE_ROWS 262144           /* join_slice_rows: a side's rows read at a time */
#define MEM_CAP (256LL << 20)       /* join_memory: bytes of kept chunks in memory */
#define SLICE_KEEP (32u << 20)      /* a slice's arena bytes kept for the next */
#define RANGE_MIN 64    /* keys an eviction deletes with one range deletion at least */

struct IncJoin {
    const Plan *join;
    const Plan *side[2];
    int         first[2], ninputs[2];
    int         tcol[2];            /* the time column of each side */
    int64_t     lo, hi;             /* lo <= tr - tl <= hi */
    bool        outer[2];           /* unmatched rows of this side are emitted */
    int64_t     bucket;             /* the time span of a chunk's rows */
    StateStore *st;
    uint8_t     prefix[6];          /* 'J' + oid + side (set per use) */
    int64_t     slice_rows;         /* join_slice_rows */
    int64_t     mem_cap;            /* join_memory: both sides' copies, in bytes */
    Arena       slice[2];           /* per side: a slice's rows, rewound for the next */
    JMem        mem[2];             /* each side's committed chunks in memory */
    IncJoinRun *run;                /* the batch in flight */
};

/* A row of one side: new in this batch, or kept from earlier ones (made
 * only when it has a partner, or is emitted NULL-padded). */
typedef struct JRow {
    const Batch   *b;
    uint32_t       row;
    const char    *key;             /* NULL: matches nothing */
    uint32_t       klen;
    int64_t        t;
    bool           isnew, matched;
    bool           single;          /* kept: under a key of its own */
    uint8_t       *flag;            /* in this batch's chunk: its matched flag there */
    uint32_t       idx;             /* kept: its number in its chunk */
    const uint8_t *ckey;            /* kept: its chunk's key */
    struct JRow   *next;            /* hash chain */
} JRow;

typedef struct JSide {
    JRow  **rows;
    uint32_t n, cap;
    int64_t  tmin, tmax;            /* over the new rows with a key */
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

int inc_join_build(Arena *a, const IncInputs *ins, StateStore *st, const CatRelation *query,
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
    /* Buckets: small against the bound, so a chunk outlives its rows'
     * eviction by little, and wide enough to hold many rows. */
    j->bucket = SL_MAX(sat_sub(j->hi, j->lo) / BUCKETS, 1000);
    j->prefix[0] = 'J';
    put_be32(j->prefix + 1, query->oid);
    Options o;
    if (opts_parse(a, query->options, &o, err) < 0 ||
        opts_get_int(&o, "join_slice_rows", SLICE_ROWS, &j->slice_rows, err) < 0 ||
        opts_get_int(&o, "join_memory", MEM_CAP, &j->mem_cap, err) < 0)
        return -1;
    if (j->slice_rows < 1 || j->slice_rows > UINT32_MAX / 4) {
        sl_error(err, ERRCODE_INVALID_PARAMETER_VALUE, "join_slice_rows must be between 1 and %u",
                 UINT32_MAX / 4);
        return -1;
    }
    if (j->mem_cap < 0)
        return sl_error(err, ERRCODE_INVALID_PARAMETER_VALUE, "join_memory must not be negative");
    arena_init(&j->slice[0], 1 << 16);
    arena_init(&j->slice[1], 1 << 16);
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

int64_t inc_join_bucket(const IncJoin *j)
{
    return j->bucket;
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

/* A chunk written by this batch: its rows' matched flags may still change
 * (a later slice of the other side matches them) until it is put, once the
 * watermarks after the batch are known. */
typedef struct PChunk {
    uint8_t  ckey[CKEY_LEN];
    uint8_t *val;                   /* sl_malloc'd; NULL once freed or handed over */
    uint32_t *khash;                /* its rows' key hashes and offsets (JMemChunk's);
                                       sl_malloc'd, freed or handed over with val */
    uint32_t len, nrows;
    bool     checked;               /* made once the cut was known: no row before it */
} PChunk;

typedef struct PList {
    PChunk  *c;                     /* sl_malloc'd */
    uint32_t n, cap;
    bool     sorted;                /* in key order */
} PList;

struct IncJoinRun {
    IncJoin      *j;
    IncJoinBatch *jb;
    JSide         side[2];          /* the new rows of the slice being read */
    JSide         hit[2];           /* kept rows matched for the first time */
    struct Pairs *ps;
    uint32_t      seq;              /* chunk numbers of this batch */
    PList         pend[2];          /* this batch's chunks, per side */
    int64_t       sbytes[2];        /* per side: bytes_delta's part */
    bool          has_cut[2];
    int64_t       cut[2];
    bool          over[2];          /* the side's copy goes over the cap: dropped */
    int64_t       held;             /* bytes of this batch's chunks kept for the copy */
};

static void side_clear(JSide *s)
{
    *s = (JSide){.tmin = INT64_MAX, .tmax = INT64_MIN};
}

static int slice_done(IncJoinRun *run, int side, bool last);

/* The new rows of one side, a slice of at least join_slice_rows at a time
 * (each matched and made chunks by slice_done before the next is read; the
 * last one stays decoded until the batch's cut is known):
 * late ones dropped, each with its key and time; rows with a NULL key or
 * time can match nothing (an outer side's are emitted at once). */
static int read_side(IncJoinRun *run, int side)
{
    IncJoin *j = run->j;
    IncJoinBatch *jb = run->jb;
    JSide *s = &run->side[side];
    const Plan *p = j->join;
    int nk = p->u.join.nkeys;
    Expr **keys = side == 0 ? p->u.join.lkeys : p->u.join.rkeys;
    ExOp *op = inc_inputs_exec(jb->inputs, jb->a, j->side[side], jb->err);
    if (op == NULL)
        return -1;
    ExBatch *eb;
    int rc;
    StrBuf kb;
    strbuf_init(&kb);
    EvalCtx ecx = {.arena = jb->chunk, .err = jb->err, .hooks = jb->inputs->hooks};
    while ((rc = ex_op_next(op, &eb)) > 0) {
        if (eb->n == 0)
            continue;
        arena_reset(jb->chunk);
        Batch *b = inc_batch_copy(&j->slice[side], &eb->b, eb->sel, eb->n);
        Vector *kv = ARENA_ARRAY(jb->chunk, Vector, nk ? nk : 1);
        for (int k = 0; k < nk; k++)
            if (ex_eval(&ecx, keys[k], b, b->nrows, &kv[k]) < 0) {
                rc = -1;
                goto done;
            }
        const Vector *tv = &b->cols[j->tcol[side]];
        for (uint32_t i = 0; i < b->nrows; i++) {
            JRow *r = ARENA_NEW(&j->slice[side], JRow);
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
                r->key = arena_memdup(&j->slice[side], kb.data, kb.len);
                r->klen = (uint32_t)kb.len;
                s->tmin = SL_MIN(s->tmin, r->t);
                s->tmax = SL_MAX(s->tmax, r->t);
            } else {
                r->key = NULL;      /* matches nothing */
            }
            side_push(&j->slice[side], s, r);
        }
        if (s->n >= (uint64_t)j->slice_rows && slice_done(run, side, false) < 0) {
            rc = -1;
            goto done;
        }
    }
    if (rc == 0 && s->n > 0 && slice_done(run, side, true) < 0)
        rc = -1;
done:
    strbuf_free(&kb);
    ex_op_close(op);
    return rc < 0 ? -1 : 0;
}

/* ---------------------------------------------------------------------- */
/* Chunks of kept rows                                                     */

static void side_prefix(const IncJoin *j, int side, uint8_t *prefix)
{
    memcpy(prefix, j->prefix, 5);
    prefix[5] = (uint8_t)side;
}

/* The start of t's bucket (saturating at the start of time). */
static int64_t bucket_of(const IncJoin *j, int64_t t)
{
    int64_t r = t % j->bucket;
    if (r < 0)
        r += j->bucket;
    return sat_sub(t, r);
}

/* Whether the kept rows under a chunk key whose time is kt are all past the
 * cut: a chunk's bucket ends at or before it; a single row (written before
 * chunks) is before it. */
static bool chunk_gone(const IncJoin *j, int64_t kt, bool single, int64_t cut)
{
    return single ? kt < cut : sat_add(kt, j->bucket) <= cut;
}

/* One row of a chunk. */
typedef struct CRow {
    int64_t        t;
    bool           matched;         /* stored with the row */
    uint32_t       idx;             /* its number in the chunk */
    bool           single;          /* under a key of its own (written before chunks) */
    const char    *key;
    uint32_t       klen;
    const uint8_t *row;             /* row_encode's bytes */
    uint32_t       rlen;
    const uint8_t *entry;           /* in a chunk: where the row's entry starts */
} CRow;

typedef struct CRowIt {
    const uint8_t *p, *end;
    uint32_t       left, idx;
    bool           single;
    int64_t        kt;
} CRowIt;

/* Starts on a chunk's value (or a single row's); -1 if it is corrupt. */
static int chunk_begin(CRowIt *it, const uint8_t *ckey, const uint8_t *v, size_t vlen)
{
    it->kt = get_time_key(ckey + 6);
    it->idx = 0;
    it->end = v + vlen;
    if (vlen >= 5 && v[0] == CHUNK_TAG) {
        it->single = false;
        it->left = get_be32(v + 1);
        it->p = v + 5;
        return 0;
    }
    if (vlen < 5 || v[0] > 1)
        return -1;
    it->single = true;
    it->left = 1;
    it->p = v;
    return 0;
}

/* The next row: 1, 0 at the end, -1 if the chunk is corrupt. */
static int chunk_row(CRowIt *it, CRow *r)
{
    if (it->left == 0)
        return it->p == it->end ? 0 : -1;
    const uint8_t *p = it->p;
    size_t n = (size_t)(it->end - p);
    r->entry = p;
    if (it->single) {
        r->t = it->kt;
        r->matched = p[0] != 0;
        r->klen = get_be32(p + 1);
        if (r->klen > n - 5)
            return -1;
        r->key = (const char *)p + 5;
        r->row = p + 5 + r->klen;
        r->rlen = (uint32_t)(n - 5 - r->klen);
        it->p = it->end;
    } else {
        if (n < 13)
            return -1;
        r->t = get_time_key(p);
        r->matched = p[8] != 0;
        r->klen = get_be32(p + 9);
        if (r->klen > n - 13 || n - 13 - r->klen < 4)
            return -1;
        r->key = (const char *)p + 13;
        r->rlen = get_be32(p + 13 + r->klen);
        if (r->rlen > n - 17 - r->klen)
            return -1;
        r->row = p + 17 + r->klen;
        it->p = r->row + r->rlen;
    }
    r->idx = it->idx++;
    r->single = it->single;
    it->left--;
    return 1;
}

static uint32_t chunk_nrows(const uint8_t *v, size_t vlen)
{
    return vlen >= 5 && v[0] == CHUNK_TAG ? get_be32(v + 1) : 1;
}

/* The low 32 bits of a join key's hash (a chunk's key hashes). */
static uint32_t key_hash(const char *key, uint32_t klen)
{
    return (uint32_t)ex_hash(key, klen);
}

/* A chunk's key hashes and row offsets (JMemChunk's khash), read from its
 * value: sl_malloc'd, or NULL for a single row or a corrupt chunk (read
 * without them: the reader finds the corruption). */
static uint32_t *chunk_khash(const uint8_t *ckey, const uint8_t *v, size_t vlen)
{
    CRowIt it;
    if (chunk_begin(&it, ckey, v, vlen) < 0 || it.single || it.left == 0 ||
        it.left > (vlen - 5) / 17)
        return NULL;
    uint32_t n = it.left;
    uint32_t *kh = sl_malloc(sizeof(uint32_t) * 2 * n);
    CRow c;
    for (uint32_t i = 0; i < n; i++) {
        if (chunk_row(&it, &c) <= 0) {
            sl_free(kh);
            return NULL;
        }
        kh[i] = key_hash(c.key, c.klen);
        kh[n + i] = (uint32_t)(c.entry - v);
    }
    return kh;
}

/* Row idx of a chunk, whose entry starts at off (its key hashes' offset):
 * 1, or -1 if the chunk is corrupt. */
static int chunk_row_at(CRowIt *it, const uint8_t *v, size_t vlen, uint32_t off, uint32_t idx,
                        CRow *r)
{
    if (off < 5 || off >= vlen)
        return -1;
    it->p = v + off;
    it->end = v + vlen;
    it->left = 1;
    it->idx = idx;
    it->single = false;
    return chunk_row(it, r) == 1 ? 1 : -1;
}

/* This batch's chunks of a side in key order (they are made a slice at a
 * time, each slice's in bucket order). */
static int pchunk_cmp(const void *a, const void *b)
{
    return memcmp(((const PChunk *)a)->ckey, ((const PChunk *)b)->ckey, CKEY_LEN);
}

static void pchunk_free(PChunk *pc)
{
    sl_free(pc->val);
    sl_free(pc->khash);
    pc->val = NULL;
    pc->khash = NULL;
}

static void plist_sort(PList *pl)
{
    if (!pl->sorted && pl->n > 1)
        qsort(pl->c, pl->n, sizeof(PChunk), pchunk_cmp);
    pl->sorted = true;
}

/* A scan of a side's chunks from a bucket on, in key order, each with the
 * rows marked matched after it was written: the committed chunks from the
 * side's copy in memory when it is there, else from RocksDB (keys of
 * MARK_LEN right after each chunk), merged with this batch's chunks of the
 * side when asked. */
typedef struct ChunkRead {
    const JMem    *m;               /* the committed chunks in memory, or NULL */
    uint32_t       bi, ci;
    StateScan     *sc;              /* else from RocksDB */
    bool           marks;           /* collect marks: the value is copied */
    bool           ahead;           /* k, v hold the next key already */
    bool           done;            /* no committed chunk left */
    bool           ready;           /* the next committed chunk is in b* */
    const void    *k, *v;
    size_t         klen, vlen;
    StrBuf         copy;
    uint32_t      *mbuf;
    uint32_t       capmark;
    uint8_t        bkey[CKEY_LEN];
    const uint8_t *bval;
    size_t         blen;
    const uint32_t *bmark;
    uint32_t       bnmark;
    int64_t        bmark_bytes;
    const uint32_t *bkhash;
    uint32_t       bnkeys;
    PList         *pend;            /* this batch's chunks, or NULL */
    uint32_t       pi;
    /* the current chunk */
    uint8_t        ckey[CKEY_LEN];
    const uint8_t *val;
    size_t         len;
    const uint32_t *mark;           /* its marked rows, in order */
    uint32_t       nmark;
    int64_t        mark_bytes;
    const uint32_t *khash;          /* its key hashes and row offsets, or NULL */
    uint32_t       nkeys;
    PChunk        *pc;              /* this batch's chunk (NULL: a committed one) */
} ChunkRead;

static void chunk_read_open(ChunkRead *cr, const IncJoin *j, int side, int64_t from, bool marks,
                            PList *pend)
{
    uint8_t prefix[6], start[14];
    side_prefix(j, side, prefix);
    memcpy(start, prefix, 6);
    put_time_key(start + 6, from);
    memset(cr, 0, sizeof(*cr));
    cr->marks = marks;
    strbuf_init(&cr->copy);
    if (j->mem[side].state == JMEM_ON) {
        cr->m = &j->mem[side];
        cr->bi = jmem_seek(cr->m, from);
    } else {
        cr->sc = state_scan_open_from(j->st, prefix, 6, start, sizeof(start));
    }
    if (pend != NULL && pend->n > 0) {
        plist_sort(pend);
        uint32_t lo = 0, hi = pend->n;
        while (lo < hi) {
            uint32_t mid = lo + (hi - lo) / 2;
            if (memcmp(pend->c[mid].ckey, start, sizeof(start)) < 0)
                lo = mid + 1;
            else
                hi = mid;
        }
        cr->pend = pend;
        cr->pi = lo;
    }
}

/* The next committed chunk (or single row) into b*; false at the end. */
static bool committed_next(ChunkRead *cr, Arena *a)
{
    if (cr->m != NULL) {
        for (; cr->bi < cr->m->n; cr->bi++, cr->ci = 0) {
            const JMemBucket *b = &cr->m->b[cr->bi];
            if (cr->ci == b->n)
                continue;
            const JMemChunk *c = &b->c[cr->ci++];
            memcpy(cr->bkey, c->ckey, CKEY_LEN);
            cr->bval = c->val;
            cr->blen = c->len;
            cr->bmark = c->mark;
            cr->bnmark = c->nmark;
            cr->bmark_bytes = (int64_t)c->nmark * MARK_LEN;
            cr->bkhash = c->khash;
            cr->bnkeys = c->nkeys;
            return true;
        }
        return false;
    }
    for (;;) {
        if (!cr->ahead && !state_scan_next(cr->sc, &cr->k, &cr->klen, &cr->v, &cr->vlen))
            return false;
        cr->ahead = false;
        if (cr->klen == CKEY_LEN)
            break;      /* a mark without its chunk, or another length: skipped */
    }
    memcpy(cr->bkey, cr->k, CKEY_LEN);
    cr->bnmark = 0;
    cr->bmark_bytes = 0;
    cr->bkhash = NULL;
    cr->bnkeys = 0;
    cr->bmark = cr->mbuf;
    if (!cr->marks) {
        cr->bval = cr->v;
        cr->blen = cr->vlen;
        return true;
    }
    strbuf_reset(&cr->copy);
    strbuf_append(&cr->copy, cr->v, cr->vlen);
    cr->bval = (const uint8_t *)cr->copy.data;
    cr->blen = cr->vlen;
    for (;;) {
        if (!state_scan_next(cr->sc, &cr->k, &cr->klen, &cr->v, &cr->vlen)) {
            cr->done = true;        /* after this chunk */
            break;
        }
        if (cr->klen != MARK_LEN || memcmp(cr->k, cr->bkey, CKEY_LEN) != 0) {
            cr->ahead = true;
            break;
        }
        if (cr->bnmark == cr->capmark) {
            uint32_t cap = cr->capmark ? cr->capmark * 2 : 64;
            uint32_t *more = ARENA_ARRAY(a, uint32_t, cap);
            if (cr->bnmark)
                memcpy(more, cr->mbuf, sizeof(uint32_t) * cr->bnmark);
            cr->mbuf = more;
            cr->capmark = cap;
        }
        cr->mbuf[cr->bnmark++] = get_be32((const uint8_t *)cr->k + CKEY_LEN);
        cr->bmark_bytes += (int64_t)(cr->klen + cr->vlen);
    }
    cr->bmark = cr->mbuf;
    return true;
}

/* The next chunk into cr; false at the end. */
static bool chunk_read_next(ChunkRead *cr, Arena *a)
{
    if (!cr->ready && !cr->done) {
        cr->ready = committed_next(cr, a);
        if (!cr->ready)
            cr->done = true;
    }
    PChunk *p = cr->pend != NULL && cr->pi < cr->pend->n ? &cr->pend->c[cr->pi] : NULL;
    if (cr->ready && (p == NULL || memcmp(cr->bkey, p->ckey, CKEY_LEN) < 0)) {
        cr->ready = false;
        memcpy(cr->ckey, cr->bkey, CKEY_LEN);
        cr->val = cr->bval;
        cr->len = cr->blen;
        cr->mark = cr->bmark;
        cr->nmark = cr->bnmark;
        cr->mark_bytes = cr->bmark_bytes;
        cr->khash = cr->bkhash;
        cr->nkeys = cr->bnkeys;
        cr->pc = NULL;
        return true;
    }
    if (p == NULL)
        return false;
    cr->pi++;
    memcpy(cr->ckey, p->ckey, CKEY_LEN);
    cr->val = p->val;
    cr->len = p->len;
    cr->mark = NULL;
    cr->nmark = 0;
    cr->mark_bytes = 0;
    cr->khash = p->khash;
    cr->nkeys = p->khash != NULL ? p->nrows : 0;
    cr->pc = p;
    return true;
}

static int chunk_read_close(ChunkRead *cr, SlError *err)
{
    strbuf_free(&cr->copy);
    return cr->sc != NULL ? state_scan_close(cr->sc, err) : 0;
}

/* Whether row idx of the current chunk has a mark (rows and marks are both
 * in order: *at follows them). */
static bool chunk_marked(const ChunkRead *cr, uint32_t idx, uint32_t *at)
{
    while (*at < cr->nmark && cr->mark[*at] < idx)
        (*at)++;
    return *at < cr->nmark && cr->mark[*at] == idx;
}

static void corrupt(IncJoinBatch *jb)
{
    sl_error(jb->err, ERRCODE_DATA_CORRUPTED, "join state of a continuous query is corrupt");
}

/* A kept row as a JRow in a: its key copied and its row decoded. */
static JRow *kept_row(IncJoinRun *run, int side, Arena *a, const uint8_t *ckey, const CRow *c,
                      bool matched)
{
    IncJoinBatch *jb = run->jb;
    const Plan *sp = run->j->side[side];
    SlType *ct = ARENA_ARRAY(a, SlType, sp->ncols ? sp->ncols : 1);
    for (int i = 0; i < sp->ncols; i++)
        ct[i] = sp->cols[i].type;
    Batch *b = batch_alloc(a, ct, (uint32_t)sp->ncols, 1);
    if (row_decode(c->row, c->rlen, b, 0, a) < 0) {
        corrupt(jb);
        return NULL;
    }
    b->nrows = 1;
    for (int i = 0; i < sp->ncols; i++)
        b->cols[i].len = 1;
    JRow *r = ARENA_NEW(a, JRow);
    r->b = b;
    r->t = c->t;
    r->key = arena_memdup(a, c->key, c->klen);
    r->klen = c->klen;
    r->matched = matched;
    r->idx = c->idx;
    r->single = c->single;
    r->ckey = arena_memdup(a, ckey, CKEY_LEN);
    return r;
}

/* Loads a side's committed chunks and marks from RocksDB into its copy in
 * memory; over `budget` bytes the copy is dropped and only the side's bytes
 * are counted (OFF); one-row keys written before chunks turn it LEGACY. */
static int mem_load(IncJoin *j, int side, int64_t budget, SlError *err)
{
    JMem *m = &j->mem[side];
    uint8_t prefix[6];
    side_prefix(j, side, prefix);
    jmem_clear(m, JMEM_UNLOADED);
    m->bytes = 0;
    StateScan *sc = state_scan_open_from(j->st, prefix, 6, prefix, 6);
    const void *k, *v;
    size_t klen, vlen;
    JMemState state = JMEM_ON;
    JMemChunk *last = NULL;
    while (state_scan_next(sc, &k, &klen, &v, &vlen)) {
        m->bytes += (int64_t)(klen + vlen);
        if (state == JMEM_ON && klen == CKEY_LEN) {
            if (vlen < 5 || ((const uint8_t *)v)[0] != CHUNK_TAG) {
                state = JMEM_LEGACY;
                break;
            }
            uint8_t *val = sl_malloc(vlen);
            memcpy(val, v, vlen);
            last = jmem_add(m, get_time_key((const uint8_t *)k + 6), k, val, (uint32_t)vlen,
                            chunk_khash(k, val, vlen), chunk_nrows(val, vlen));
        } else if (state == JMEM_ON && klen == MARK_LEN && last != NULL &&
                   memcmp(k, last->ckey, CKEY_LEN) == 0) {
            jmem_mark(last, get_be32((const uint8_t *)k + CKEY_LEN));
        }
        if (state == JMEM_ON && m->bytes > budget) {
            state = JMEM_OFF;
            jmem_clear(m, JMEM_OFF);
        }
    }
    if (state_scan_close(sc, err) < 0) {
        jmem_clear(m, JMEM_UNLOADED);
        return -1;
    }
    if (state != JMEM_ON)
        jmem_clear(m, state);
    m->state = state;
    sl_log(LOG_INFO, "join kept rows loaded", "query=%u side=%d bytes=%" PRId64 " in_memory=%s",
           get_be32(j->prefix + 1), side, m->bytes,
           state == JMEM_ON ? "yes" : state == JMEM_OFF ? "no_over_join_memory" : "no_legacy_keys");
    return 0;
}

/* The bytes of the side copies that are in memory. */
static int64_t mem_bytes(const IncJoin *j)
{
    int64_t n = 0;
    for (int s = 0; s < 2; s++)
        if (j->mem[s].state == JMEM_ON)
            n += j->mem[s].bytes;
    return n;
}

/* ---------------------------------------------------------------------- */
/* Matching                                                                */

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

/* A kept row matched for the first time, for its mark: what outlives the
 * slice it was decoded in. */
static JRow *hit_copy(Arena *a, const JRow *x)
{
    JRow *h = ARENA_NEW(a, JRow);
    h->t = x->t;
    h->idx = x->idx;
    h->single = x->single;
    h->ckey = arena_memdup(a, x->ckey, CKEY_LEN);
    return h;
}

static int flush_pairs(IncJoinRun *run)
{
    Pairs *ps = run->ps;
    if (ps->n == 0)
        return 0;
    IncJoinBatch *jb = run->jb;
    arena_reset(jb->chunk);
    Batch *b = join_rows(run, ps->l, ps->r, ps->n);
    ExBatch eb = {*b, ARENA_ARRAY(jb->chunk, uint32_t, ps->n), 0};
    const Expr *cond = run->j->join->u.join.residual;
    Vector cv;
    EvalCtx ecx = {.arena = jb->chunk, .err = jb->err, .hooks = jb->inputs->hooks};
    if (cond != NULL && ex_eval(&ecx, cond, b, b->nrows, &cv) < 0)
        return -1;
    for (uint32_t i = 0; i < ps->n; i++) {
        if (cond != NULL && (vector_is_null(&cv, i) || !cv.v.b[i]))
            continue;
        eb.sel[eb.n++] = i;
        JRow *x[2] = {ps->l[i], ps->r[i]};
        for (int s = 0; s < 2; s++) {
            if (!x[s]->matched && !x[s]->isnew) {
                if (x[s]->flag != NULL)
                    *x[s]->flag = 1;        /* in this batch's chunk, not put yet */
                else
                    side_push(jb->a, &run->hit[s], hit_copy(jb->a, x[s]));  /* a mark */
            }
            x[s]->matched = true;
        }
    }
    ps->n = 0;
    if (eb.n == 0)
        return 0;
    return jb->emit(jb->arg, ex_batch_compact(jb->chunk, &eb));
}

/* A row's hash: its key and its time slot (slots are as wide as the bound,
 * so a row's range of partner times spans at most two). */
static uint32_t slot_hash(const char *key, uint32_t klen, int64_t slot, uint32_t mask)
{
    return (uint32_t)(ex_hash(key, klen) + (uint64_t)slot * 0x9E3779B97F4A7C15ull) & mask;
}

/* The new rows of one side by key and time slot. */
typedef struct JHash {
    JRow   **b;
    uint32_t mask;
    int64_t  width;
} JHash;

static void hash_build(Arena *a, JHash *h, const JSide *s, int64_t width)
{
    uint32_t nb = 64;
    while (nb < 2 * s->n)
        nb *= 2;
    h->b = arena_zalloc(a, sizeof(JRow *) * nb);
    h->mask = nb - 1;
    h->width = width;
    for (uint32_t i = 0; i < s->n; i++) {
        JRow *r = s->rows[i];
        if (r->key == NULL)
            continue;
        uint32_t k = slot_hash(r->key, r->klen, floor_div(r->t, width), h->mask);
        r->next = h->b[k];
        h->b[k] = r;
    }
}

/* A hash of a slice's new rows, built when first probed; and a filter of
 * their keys' hashes (one bit each of FILTER_BITS), built when first
 * probed if the slice has at most FILTER_ROWS rows: a kept row whose key
 * hash's bit is not set has no partner in the slice. */
#define FILTER_BITS 65536
#define FILTER_ROWS 4096
typedef struct LazyHash {
    JHash        h;
    bool         built;
    const JSide *s;
    int64_t      width;
    bool         fbuilt;
    uint64_t    *filter;            /* NULL: none (too many rows) */
} LazyHash;

static void filter_build(Arena *a, LazyHash *lh)
{
    lh->fbuilt = true;
    if (lh->s->n > FILTER_ROWS)
        return;
    lh->filter = arena_zalloc(a, FILTER_BITS / 8);
    for (uint32_t i = 0; i < lh->s->n; i++) {
        const JRow *r = lh->s->rows[i];
        if (r->key != NULL) {
            uint32_t h = key_hash(r->key, r->klen) % FILTER_BITS;
            lh->filter[h / 64] |= UINT64_C(1) << (h % 64);
        }
    }
}

static bool filter_has(const uint64_t *f, uint32_t hash)
{
    hash %= FILTER_BITS;
    return (f[hash / 64] >> (hash % 64)) & 1;
}

/* A kept row being read from its chunk, to probe with (made a JRow only
 * when it has a partner). */
typedef struct Probe {
    int            side;            /* x's side; the hash holds the other's */
    JRow          *x;               /* NULL until made */
    const uint8_t *ckey;
    const CRow    *c;
    bool           matched;
    uint8_t       *flag;            /* in this batch's chunk: its matched flag */
} Probe;

/* Pairs the kept row with the rows of the hash with equal keys and times in
 * [from, to] (the bound's conjuncts are part of the condition, so this only
 * skips pairs it would refuse). */
static int probe(IncJoinRun *run, const JHash *h, Probe *pr, const char *key, uint32_t klen,
                 int64_t from, int64_t to)
{
    int64_t s0 = floor_div(from, h->width), s1 = floor_div(to, h->width);
    for (int64_t slot = s0; slot <= s1; slot++) {
        for (JRow *r = h->b[slot_hash(key, klen, slot, h->mask)]; r != NULL; r = r->next) {
            if (r->t < from || r->t > to || r->klen != klen || memcmp(r->key, key, klen) != 0)
                continue;
            if (pr->x == NULL) {
                pr->x = kept_row(run, pr->side, &run->j->slice[1 - pr->side], pr->ckey, pr->c,
                                 pr->matched);
                if (pr->x == NULL)
                    return -1;
                pr->x->flag = pr->flag;
            }
            Pairs *ps = run->ps;
            ps->l[ps->n] = pr->side == 0 ? pr->x : r;
            ps->r[ps->n] = pr->side == 0 ? r : pr->x;
            if (++ps->n == EX_BATCH_ROWS && flush_pairs(run) < 0)
                return -1;
        }
        if (slot == INT64_MAX)
            break;
    }
    return 0;
}

/* The times of the other side a row of `side` at t can match. */
static void partner_range(const IncJoin *j, int side, int64_t t, int64_t *from, int64_t *to)
{
    if (side == 0) {
        *from = sat_add(t, j->lo);
        *to = sat_add(t, j->hi);
    } else {
        *from = sat_sub(t, j->hi);
        *to = sat_sub(t, j->lo);
    }
}

/* Pairs one kept row of `side` (of cr's chunk; *at follows its marks) with
 * the new rows of the other side's slice in lh, if its time is in [lo, hi]. */
static int probe_row(IncJoinRun *run, int side, LazyHash *lh, const ChunkRead *cr,
                     const CRow *c, uint32_t *at, int64_t lo, int64_t hi)
{
    IncJoin *j = run->j;
    if (c->t < lo || c->t > hi)
        return 0;
    int64_t from, to;
    partner_range(j, side, c->t, &from, &to);
    Probe pr = {.side = side, .ckey = cr->ckey, .c = c,
                .matched = c->matched || chunk_marked(cr, c->idx, at),
                .flag = cr->pc != NULL ? cr->pc->val + (c->entry - cr->val) + 8 : NULL};
    if (!lh->built) {
        hash_build(&j->slice[1 - side], &lh->h, lh->s, lh->width);
        lh->built = true;
    }
    return probe(run, &lh->h, &pr, c->key, c->klen, from, to);
}

/* Reads the kept rows of `side` with times in [lo, hi] from their chunks
 * (the committed ones and this batch's earlier slices') and pairs each with
 * the new rows of the other side's slice in lh.  Only a row with a partner
 * is decoded; of a chunk with key hashes, only the rows whose hash is in
 * the slice's filter are read at all. */
static int probe_kept(IncJoinRun *run, int side, LazyHash *lh, int64_t lo, int64_t hi)
{
    IncJoin *j = run->j;
    IncJoinBatch *jb = run->jb;
    ChunkRead cr;
    chunk_read_open(&cr, j, side, bucket_of(j, lo), j->outer[side], &run->pend[side]);
    int rc = 0;
    while (rc == 0 && chunk_read_next(&cr, &j->slice[1 - side])) {
        CRowIt it;
        if (chunk_begin(&it, cr.ckey, cr.val, cr.len) < 0) {
            corrupt(jb);
            rc = -1;
            break;
        }
        if (it.kt > hi)
            break;
        CRow c;
        int got = 0;
        uint32_t at = 0;
        if (!lh->fbuilt)
            filter_build(&j->slice[1 - side], lh);
        if (lh->filter != NULL && cr.khash != NULL && cr.nkeys == it.left) {
            /* By key hash: the rows are read in order all the same. */
            for (uint32_t i = 0; i < cr.nkeys && rc == 0; i++) {
                if (!filter_has(lh->filter, cr.khash[i]))
                    continue;
                if (chunk_row_at(&it, cr.val, cr.len, cr.khash[cr.nkeys + i], i, &c) < 0) {
                    got = -1;
                    break;
                }
                rc = probe_row(run, side, lh, &cr, &c, &at, lo, hi);
            }
        } else {
            while (rc == 0 && (got = chunk_row(&it, &c)) > 0)
                rc = probe_row(run, side, lh, &cr, &c, &at, lo, hi);
        }
        if (got < 0 && rc == 0) {
            corrupt(jb);
            rc = -1;
        }
    }
    if (chunk_read_close(&cr, jb->err) < 0)
        return -1;
    return rc;
}

/* ---------------------------------------------------------------------- */
/* Keeping and evicting                                                    */

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

typedef struct Bucketed {
    int64_t  bucket;
    uint32_t i;
} Bucketed;

static int bucketed_cmp(const void *a, const void *b)
{
    const Bucketed *x = a, *y = b;
    if (x->bucket != y->bucket)
        return x->bucket < y->bucket ? -1 : 1;
    return x->i < y->i ? -1 : x->i > y->i;
}

/* Makes one chunk of this batch: rows [from, to) of bk, all of one bucket. */
static void make_chunk(IncJoinRun *run, int side, const Bucketed *bk, uint32_t from,
                       uint32_t to, StrBuf *val)
{
    IncJoinBatch *jb = run->jb;
    JSide *s = &run->side[side];
    PList *pl = &run->pend[side];
    if (pl->n == pl->cap) {
        pl->cap = pl->cap ? pl->cap * 2 : 64;
        pl->c = sl_realloc(pl->c, sizeof(PChunk) * pl->cap);
    }
    PChunk *pc = &pl->c[pl->n++];
    pl->sorted = pl->n == 1;
    side_prefix(run->j, side, pc->ckey);
    put_time_key(pc->ckey + 6, bk[from].bucket);
    put_be64(pc->ckey + 14, (uint64_t)jb->batch_id);
    put_be32(pc->ckey + 22, run->seq++);
    strbuf_reset(val);
    uint8_t h[13];
    h[0] = CHUNK_TAG;
    put_be32(h + 1, to - from);
    strbuf_append(val, h, 5);
    uint32_t n = to - from;
    pc->khash = sl_malloc(sizeof(uint32_t) * 2 * n);
    for (uint32_t i = from; i < to; i++) {
        const JRow *r = s->rows[bk[i].i];
        pc->khash[i - from] = key_hash(r->key, r->klen);
        pc->khash[n + i - from] = (uint32_t)val->len;
        put_time_key(h, r->t);
        h[8] = r->matched;
        put_be32(h + 9, r->klen);
        strbuf_append(val, h, 13);
        strbuf_append(val, r->key, r->klen);
        size_t at = val->len;
        strbuf_append(val, h, 4);       /* the row's length, set below */
        row_encode(r->b, r->row, val);
        put_be32((uint8_t *)val->data + at, (uint32_t)(val->len - at - 4));
    }
    pc->len = (uint32_t)val->len;
    pc->nrows = to - from;
    pc->val = sl_malloc(val->len);
    memcpy(pc->val, val->data, val->len);
    pc->checked = false;
}

/* Makes chunks of this batch of rows of side's slice: those with a key and,
 * given a cut, not before it (an outer side's unmatched ones before it go
 * to pad), one per bucket (in key order). */
static void slice_chunks(IncJoinRun *run, int side, bool has_cut, int64_t cut, JSide *pad)
{
    IncJoin *j = run->j;
    JSide *s = &run->side[side];
    Bucketed *bk = ARENA_ARRAY(&j->slice[side], Bucketed, s->n ? s->n : 1);
    uint32_t n = 0;
    for (uint32_t i = 0; i < s->n; i++) {
        JRow *r = s->rows[i];
        if (r->key == NULL)
            continue;       /* emitted by slice_done */
        if (has_cut && r->t < cut) {
            if (j->outer[side] && !r->matched)
                side_push(run->jb->a, pad, r);
            continue;
        }
        bk[n].bucket = bucket_of(j, r->t);
        bk[n].i = i;
        n++;
    }
    uint32_t k = 1;
    while (k < n && bk[k - 1].bucket <= bk[k].bucket)
        k++;
    if (k < n)      /* rows in time order (the usual case) need no sort */
        qsort(bk, n, sizeof(Bucketed), bucketed_cmp);
    StrBuf val;
    strbuf_init(&val);
    for (uint32_t from = 0; from < n;) {
        uint32_t to = from + 1;
        while (to < n && to - from < CHUNK_ROWS && bk[to].bucket == bk[from].bucket)
            to++;
        make_chunk(run, side, bk, from, to, &val);
        from = to;
    }
    strbuf_free(&val);
}

/* A slice read: the kept rows of the other side its rows can match (this
 * batch's earlier slices of the other side included: the left side's
 * chunks, and its last slice, still decoded) are paired with them, and an
 * outer side's rows that can match nothing are emitted NULL-padded.  Then,
 * unless it is the side's last, the slice becomes this batch's chunks, put
 * once the watermarks after the batch are known (keep_new), and its memory
 * is reused for the next; the last slice stays as it is until then (a
 * batch of one slice a side makes no chunk of a row the cut has passed). */
static int slice_done(IncJoinRun *run, int side, bool last)
{
    IncJoin *j = run->j;
    JSide *s = &run->side[side];
    int64_t width = SL_MAX(sat_sub(j->hi, j->lo), 1);
    LazyHash lh = {.s = s, .width = width};
    if (s->tmin != INT64_MAX) {
        int64_t lo = side == 0 ? sat_add(s->tmin, j->lo) : sat_sub(s->tmin, j->hi);
        int64_t hi = side == 0 ? sat_add(s->tmax, j->hi) : sat_sub(s->tmax, j->lo);
        if (probe_kept(run, 1 - side, &lh, lo, hi) < 0)
            return -1;
    }
    JSide *held = &run->side[0];
    if (side == 1 && s->tmin != INT64_MAX && held->tmin != INT64_MAX) {
        if (!lh.built) {
            hash_build(&j->slice[1], &lh.h, s, width);
            lh.built = true;
        }
        for (uint32_t i = 0; i < held->n; i++) {
            JRow *l = held->rows[i];
            if (l->key == NULL)
                continue;
            int64_t from, to;
            partner_range(j, 0, l->t, &from, &to);
            Probe pr = {.side = 0, .x = l};
            if (probe(run, &lh.h, &pr, l->key, l->klen, from, to) < 0)
                return -1;
        }
    }
    if (flush_pairs(run) < 0)
        return -1;
    JSide pad = {0};
    for (uint32_t i = 0; j->outer[side] && i < s->n; i++)
        if (s->rows[i]->key == NULL)
            side_push(&j->slice[side], &pad, s->rows[i]);
    if (emit_padded(run, side, pad.rows, pad.n) < 0)
        return -1;
    if (last)
        return 0;
    slice_chunks(run, side, false, 0, NULL);
    arena_rewind(&j->slice[side], SLICE_KEEP);
    side_clear(s);
    return 0;
}

IncJoinRun *inc_join_read(IncJoin *j, IncJoinBatch *jb)
{
    IncJoinRun *run = ARENA_NEW(jb->a, IncJoinRun);
    run->j = j;
    run->jb = jb;
    run->ps = ARENA_NEW(jb->a, Pairs);
    side_clear(&run->side[0]);
    side_clear(&run->side[1]);
    j->run = run;
    /* The buckets the last batch evicted are freed now, not in that batch
     * (its result waited for it); a side not in memory (after a start, or
     * a failed batch) is loaded now, before this batch writes anything. */
    jmem_release(&j->mem[0]);
    jmem_release(&j->mem[1]);
    for (int s = 0; s < 2; s++)
        if (j->mem_cap > 0 && j->mem[s].state == JMEM_UNLOADED &&
            mem_load(j, s, j->mem_cap - mem_bytes(j), jb->err) < 0)
            return NULL;
    if (read_side(run, 0) < 0 || read_side(run, 1) < 0)
        return NULL;
    return run;
}

static void tally(IncJoinRun *run, int side, int64_t rows, int64_t bytes)
{
    run->jb->state_delta += rows;
    run->jb->bytes_delta += bytes;
    run->sbytes[side] += bytes;
}

/* Puts this batch's chunks of a side -- those of its earlier slices and
 * those made now of its last slice -- without the rows the cut has passed
 * already (an outer side's unmatched ones go to pad); each is kept for the
 * side's copy in memory while that stays under the cap. */
static int keep_new(IncJoinRun *run, int side, bool has_cut, int64_t cut, JSide *pad)
{
    IncJoin *j = run->j;
    IncJoinBatch *jb = run->jb;
    PList *pl = &run->pend[side];
    uint32_t made = pl->n;
    slice_chunks(run, side, has_cut, cut, pad);     /* the last slice, still decoded */
    for (uint32_t i = made; i < pl->n; i++)
        pl->c[i].checked = true;
    plist_sort(pl);
    bool hold = j->mem[side].state == JMEM_ON && !run->over[side];
    StrBuf val;
    strbuf_init(&val);
    int rc = 0;
    for (uint32_t i = 0; i < pl->n && rc == 0; i++) {
        PChunk *pc = &pl->c[i];
        int64_t kt = get_time_key(pc->ckey + 6);
        if (has_cut && kt < cut && !pc->checked) {
            /* Some rows may be before the cut: they are not kept. */
            CRowIt it;
            CRow c;
            int got;
            uint32_t left = 0;
            chunk_begin(&it, pc->ckey, pc->val, pc->len);
            strbuf_reset(&val);
            strbuf_append(&val, pc->val, 5);
            while ((got = chunk_row(&it, &c)) > 0) {
                if (c.t >= cut) {
                    strbuf_append(&val, c.entry, (size_t)(c.row + c.rlen - c.entry));
                    left++;
                } else if (j->outer[side] && !c.matched) {
                    JRow *r = kept_row(run, side, jb->a, pc->ckey, &c, false);
                    if (r == NULL) {
                        rc = -1;
                        break;
                    }
                    side_push(jb->a, pad, r);
                }
            }
            if (got < 0 && rc == 0) {
                corrupt(jb);
                rc = -1;
            }
            if (rc < 0 || left == pc->nrows)
                goto put;
            pchunk_free(pc);
            if (left == 0)
                continue;
            put_be32((uint8_t *)val.data + 1, left);
            pc->val = sl_malloc(val.len);
            memcpy(pc->val, val.data, val.len);
            pc->len = (uint32_t)val.len;
            pc->nrows = left;
            pc->khash = chunk_khash(pc->ckey, pc->val, pc->len);
        }
put:
        if (rc < 0)
            break;
        state_batch_put(jb->wb, pc->ckey, CKEY_LEN, pc->val, pc->len);
        tally(run, side, pc->nrows, (int64_t)(CKEY_LEN + pc->len));
        if (hold && mem_bytes(j) + run->held + CKEY_LEN + pc->len > j->mem_cap) {
            hold = false;
            run->over[side] = true;
        }
        if (hold)
            run->held += CKEY_LEN + pc->len;
        else
            pchunk_free(pc);
    }
    strbuf_free(&val);
    return rc;
}

/* The kept row of this side matched for the first time by this batch with
 * this chunk key and number, or NULL (hit is sorted). */
static JRow *find_hit(const JSide *hit, const uint8_t *ckey, uint32_t idx)
{
    uint32_t lo = 0, hi = hit->n;
    while (lo < hi) {
        uint32_t mid = lo + (hi - lo) / 2;
        const JRow *r = hit->rows[mid];
        int c = memcmp(r->ckey, ckey, CKEY_LEN);
        if (c == 0)
            c = r->idx < idx ? -1 : r->idx > idx;
        if (c == 0)
            return hit->rows[mid];
        if (c < 0)
            lo = mid + 1;
        else
            hi = mid;
    }
    return NULL;
}

static int hit_cmp(const void *a, const void *b)
{
    const JRow *x = *(JRow *const *)a, *y = *(JRow *const *)b;
    int c = memcmp(x->ckey, y->ckey, CKEY_LEN);
    return c != 0 ? c : (x->idx < y->idx ? -1 : x->idx > y->idx);
}

/* Deletes the chunks whose bucket the cut has passed (with their marks);
 * on an outer side, emits the kept rows the cut passed in this batch (from
 * the last batch's cut on) that never matched, NULL-padded.  The keys from
 * the last cut's bucket to the cut's own bucket are all gone: when they are
 * RANGE_MIN or more, one range deletion takes them (a window's worth of
 * chunks: thousands of keys, each a tombstone in the WAL and memtable),
 * else a deletion each. */
static int evict(IncJoinRun *run, int side, bool has_prev, int64_t prev, int64_t cut,
                 JSide *pad)
{
    IncJoin *j = run->j;
    IncJoinBatch *jb = run->jb;
    bool outer = j->outer[side];
    JSide *hit = &run->hit[side];
    /* Chunks of buckets the last cut passed are gone: start at the bucket
     * it was in, so the scan does not walk over their deletions.  Only an
     * outer side reads the bucket the cut is in now (its rows up to the
     * cut are emitted now; the chunk goes once the cut leaves the bucket). */
    int64_t from = has_prev ? bucket_of(j, prev) : INT64_MIN;
    int64_t rend = bucket_of(j, cut);
    int64_t end = outer ? cut : rend;
    ChunkRead cr;
    chunk_read_open(&cr, j, side, from, outer, NULL);
    /* the chunks to delete: per chunk, whether it is before rend (1), its
     * key, its marks' count (4) and the marks' numbers (4 each) */
    StrBuf dels;
    strbuf_init(&dels);
    uint32_t ndel = 0;
    int rc = 0;
    while (chunk_read_next(&cr, jb->a)) {
        CRowIt it;
        if (chunk_begin(&it, cr.ckey, cr.val, cr.len) < 0) {
            corrupt(jb);
            rc = -1;
            break;
        }
        if (it.kt >= end)
            break;
        bool gone = chunk_gone(j, it.kt, it.single, cut);
        if (outer) {
            CRow c;
            int got;
            uint32_t at = 0;
            while ((got = chunk_row(&it, &c)) > 0) {
                if (c.matched || (has_prev && c.t < prev) || c.t >= cut ||
                    chunk_marked(&cr, c.idx, &at) || find_hit(hit, cr.ckey, c.idx) != NULL)
                    continue;
                JRow *r = kept_row(run, side, jb->a, cr.ckey, &c, false);
                if (r == NULL) {
                    rc = -1;
                    break;
                }
                side_push(jb->a, pad, r);
            }
            if (got < 0) {
                corrupt(jb);
                rc = -1;
            }
            if (rc < 0)
                break;
        }
        if (!gone)
            continue;
        uint32_t nrows = chunk_nrows(cr.val, cr.len);
        uint8_t n[4] = {it.kt < rend};
        strbuf_append(&dels, n, 1);
        strbuf_append(&dels, cr.ckey, CKEY_LEN);
        put_be32(n, cr.nmark);
        strbuf_append(&dels, n, 4);
        for (uint32_t m = 0; m < cr.nmark; m++) {
            put_be32(n, cr.mark[m]);
            strbuf_append(&dels, n, 4);
        }
        ndel += it.kt < rend ? 1 + cr.nmark : 0;
        tally(run, side, -(int64_t)nrows, -((int64_t)(CKEY_LEN + cr.len) + cr.mark_bytes));
        jb->evicted_rows += nrows;
    }
    bool range = rc == 0 && ndel >= RANGE_MIN;
    if (range) {
        uint8_t lo[14], hi[14];
        side_prefix(j, side, lo);
        memcpy(hi, lo, 6);
        put_time_key(lo + 6, from);
        put_time_key(hi + 6, rend);
        state_batch_delete_range(jb->wb, lo, sizeof(lo), hi, sizeof(hi));
    }
    uint8_t mk[MARK_LEN];
    for (size_t at = 0; rc == 0 && at < dels.len;) {
        const uint8_t *d = (const uint8_t *)dels.data + at;
        uint32_t nmark = get_be32(d + 1 + CKEY_LEN);
        at += 1 + CKEY_LEN + 4 + 4 * (size_t)nmark;
        if (range && d[0])
            continue;
        state_batch_delete(jb->wb, d + 1, CKEY_LEN);
        memcpy(mk, d + 1, CKEY_LEN);
        for (uint32_t m = 0; m < nmark; m++) {
            memcpy(mk + CKEY_LEN, d + 1 + CKEY_LEN + 4 + 4 * m, 4);
            state_batch_delete(jb->wb, mk, MARK_LEN);
        }
    }
    strbuf_free(&dels);
    if (chunk_read_close(&cr, jb->err) < 0)
        return -1;
    return rc;
}

/* Keeps the new rows that can still match, marks kept rows of an outer
 * side that matched for the first time, and evicts the rows the other
 * side's watermark has passed: an outer side's unmatched ones are emitted,
 * NULL-padded. */
static int keep_and_evict(IncJoinRun *run, int side)
{
    IncJoin *j = run->j;
    IncJoinBatch *jb = run->jb;
    int other = 1 - side;
    bool has_cut = jb->has_next_wm[other], has_prev = jb->has_wm[other];
    int64_t cut = side == 0 ? sat_sub(jb->next_wm[other], j->hi)
                            : sat_add(jb->next_wm[other], j->lo);
    int64_t prev = side == 0 ? sat_sub(jb->wm[other], j->hi) : sat_add(jb->wm[other], j->lo);
    run->has_cut[side] = has_cut;
    run->cut[side] = cut;
    JSide pad = {0};                /* the unmatched rows evicted, to emit */
    JSide *hit = &run->hit[side];
    if (hit->n > 1) {
        /* A kept row first matched by two slices is there twice. */
        qsort(hit->rows, hit->n, sizeof(JRow *), hit_cmp);
        uint32_t n = 1;
        for (uint32_t i = 1; i < hit->n; i++)
            if (hit_cmp(&hit->rows[i], &hit->rows[n - 1]) != 0)
                hit->rows[n++] = hit->rows[i];
        hit->n = n;
    }
    if (keep_new(run, side, has_cut, cut, &pad) < 0)
        return -1;
    if (has_cut && evict(run, side, has_prev, prev, cut, &pad) < 0)
        return -1;
    /* An inner side's rows need no marks: nothing is emitted for them at
     * eviction. */
    if (j->outer[side]) {
        uint8_t mk[MARK_LEN];
        for (uint32_t i = 0; i < hit->n; i++) {
            const JRow *r = hit->rows[i];
            if (has_cut && chunk_gone(j, get_time_key(r->ckey + 6), r->single, cut))
                continue;       /* deleted with its chunk by this batch */
            memcpy(mk, r->ckey, CKEY_LEN);
            put_be32(mk + CKEY_LEN, r->idx);
            state_batch_put(jb->wb, mk, MARK_LEN, "", 0);
            tally(run, side, 0, MARK_LEN);
        }
    }
    return emit_padded(run, side, pad.rows, pad.n);
}

int inc_join_process(IncJoinRun *run)
{
    if (keep_and_evict(run, 0) < 0 || keep_and_evict(run, 1) < 0)
        return -1;
    return 0;
}

/* ---------------------------------------------------------------------- */
/* After the batch's write                                                 */

/* The batch's changes to a side's copy in memory, once its write landed:
 * the evicted buckets go, the marks and the new chunks come. */
static void mem_commit(IncJoin *j, IncJoinRun *run, int side)
{
    JMem *m = &j->mem[side];
    if (run->has_cut[side])
        while (m->head < m->n && chunk_gone(j, m->b[m->head].start, false, run->cut[side]))
            jmem_drop_head(m);
    const JSide *hit = &run->hit[side];
    for (uint32_t i = 0; j->outer[side] && i < hit->n; i++) {
        const JRow *r = hit->rows[i];
        JMemChunk *c = jmem_find(m, get_time_key(r->ckey + 6), r->ckey);
        if (c != NULL)
            jmem_mark(c, r->idx);
    }
    PList *pl = &run->pend[side];
    for (uint32_t i = 0; i < pl->n; i++) {
        PChunk *pc = &pl->c[i];
        if (pc->val == NULL)
            continue;
        jmem_add(m, get_time_key(pc->ckey + 6), pc->ckey, pc->val, pc->len, pc->khash, pc->nrows);
        pc->val = NULL;
        pc->khash = NULL;
    }
}

#ifndef NDEBUG
/* Checks builds (not release): a side's copy in memory after a commit is
 * what RocksDB holds -- every chunk key, value and mark, in order, and its
 * bytes -- or the server stops here.  Small states only. */
static void mem_verify(IncJoin *j, int side)
{
    const JMem *m = &j->mem[side];
    if (m->state != JMEM_ON || m->bytes > (4 << 20))
        return;
    uint8_t prefix[6];
    side_prefix(j, side, prefix);
    StateScan *sc = state_scan_open_from(j->st, prefix, 6, prefix, 6);
    const void *k, *v;
    size_t klen, vlen;
    uint32_t bi = m->head, ci = 0, mi = 0;
    const JMemChunk *c = NULL;
    int64_t bytes = 0;
    bool same = true;
    while (same && state_scan_next(sc, &k, &klen, &v, &vlen)) {
        bytes += (int64_t)(klen + vlen);
        if (klen == MARK_LEN) {
            same = c != NULL && memcmp(k, c->ckey, CKEY_LEN) == 0 && mi < c->nmark &&
                   c->mark[mi++] == get_be32((const uint8_t *)k + CKEY_LEN);
            continue;
        }
        same = c == NULL || mi == c->nmark;
        while (bi < m->n && ci == m->b[bi].n) {
            bi++;
            ci = 0;
        }
        c = bi < m->n ? &m->b[bi].c[ci++] : NULL;
        mi = 0;
        same = same && c != NULL && klen == CKEY_LEN && memcmp(k, c->ckey, CKEY_LEN) == 0 &&
               vlen == c->len && memcmp(v, c->val, vlen) == 0 &&
               get_time_key(c->ckey + 6) == m->b[bi].start;
        if (same) {
            /* its key hashes and row offsets, as read from its value */
            uint32_t *kh = chunk_khash(c->ckey, c->val, c->len);
            same = kh != NULL && c->khash != NULL && c->nkeys == chunk_nrows(c->val, c->len) &&
                   memcmp(kh, c->khash, sizeof(uint32_t) * 2 * c->nkeys) == 0;
            sl_free(kh);
        }
    }
    SlError err = {0};
    if (state_scan_close(sc, &err) < 0) {
        sl_error_clear(&err);
        return;
    }
    while (same && bi < m->n && ci == m->b[bi].n) {
        bi++;
        ci = 0;
    }
    same = same && (c == NULL || mi == c->nmark) && bi == m->n && bytes == m->bytes;
    if (!same) {
        sl_log(LOG_ERROR, "join kept rows in memory differ from RocksDB",
               "query=%u side=%d bytes=%" PRId64 " rocksdb_bytes=%" PRId64,
               get_be32(j->prefix + 1), side, m->bytes, bytes);
        abort();
    }
}
#endif

void inc_join_done(IncJoin *j, bool ok)
{
    IncJoinRun *run = j->run;
    j->run = NULL;
    if (run == NULL)
        return;
    for (int s = 0; s < 2; s++)
        arena_rewind(&j->slice[s], SLICE_KEEP);    /* the last slices */
    for (int s = 0; s < 2; s++) {
        JMem *m = &j->mem[s];
        if (!ok) {
            /* The write may not have landed: RocksDB says what is kept. */
            jmem_clear(m, JMEM_UNLOADED);
        } else if (m->state == JMEM_ON || m->state == JMEM_OFF) {
            m->bytes += run->sbytes[s];
            if (m->state == JMEM_ON && run->over[s])
                jmem_clear(m, JMEM_OFF);
            else if (m->state == JMEM_ON)
                mem_commit(j, run, s);
        }
        PList *pl = &run->pend[s];
        for (uint32_t i = 0; i < pl->n; i++)
            pchunk_free(&pl->c[i]);
        sl_free(pl->c);
        *pl = (PList){0};
    }
    if (!ok)
        return;
    /* Over the cap (the other side grew): the larger side's copy goes. */
    bool over[2] = {run->over[0], run->over[1]};
    while (mem_bytes(j) > j->mem_cap) {
        int s = j->mem[0].state == JMEM_ON &&
                (j->mem[1].state != JMEM_ON || j->mem[0].bytes >= j->mem[1].bytes) ? 0 : 1;
        jmem_clear(&j->mem[s], JMEM_OFF);
        over[s] = true;
    }
    for (int s = 0; s < 2; s++)
        if (over[s])
            sl_log(LOG_INFO, "join kept rows over join_memory: read from RocksDB",
                   "query=%u side=%d bytes=%" PRId64 " join_memory=%" PRId64,
                   get_be32(j->prefix + 1), s, j->mem[s].bytes, j->mem_cap);
    /* Back under half the cap: loaded again by the next batch. */
    for (int s = 0; s < 2; s++)
        if (j->mem[s].state == JMEM_OFF && j->mem[s].bytes + mem_bytes(j) <= j->mem_cap / 2)
            j->mem[s].state = JMEM_UNLOADED;
#ifndef NDEBUG
    for (int s = 0; s < 2; s++)
        mem_verify(j, s);
#endif
}

void inc_join_free(IncJoin *j)
{
    if (j == NULL)
        return;
    inc_join_done(j, false);
    for (int s = 0; s < 2; s++)
        jmem_clear(&j->mem[s], JMEM_UNLOADED);
    arena_destroy(&j->slice[0]);
    arena_destroy(&j->slice[1]);
}
