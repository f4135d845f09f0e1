/*
 * aggset.c -- the aggregate states of one group as one block of bytes: the
 * unit an Aggregate operator keeps per group (and that the streaming
 * engine will keep in RocksDB between micro-batches).
 *
 *   ex_aggset_new, ex_aggset_size
 *   ex_aggset_update     evaluate each call's arguments and FILTER over a
 *                        batch, fold the rows into their groups' blocks
 *   ex_aggset_merge      fold one block into another
 *   ex_aggset_final      the results of a block
 *   ex_aggset_serialize, ex_aggset_deserialize
 *
 * A block is the calls' states side by side, each at a 16-byte aligned
 * offset, zeroed for an empty group.  A DISTINCT call keeps instead the
 * set of its distinct argument rows (keyed by ex_key_encode, stored with
 * row_encode so they read back exactly) and runs its aggregate over them
 * at the end (sorted first, by a merge sort that a cancel or a timeout of
 * the statement stops): so sets merge by union and nothing is counted twice.
 * A call with ORDER BY keeps, the same way, the list of its rows (its
 * arguments, then its keys) as they came, and runs its aggregate over them
 * at the end in the keys' order (a stable sort: rows of equal keys keep
 * their order); lists merge by concatenation.  DISTINCT with ORDER BY
 * (whose keys are arguments) sorts its set by those keys.  Rows
 * whose first argument is NULL never reach an aggregate (all of sluice's
 * ignore NULLs), rows whose FILTER is not true neither.
 */
#include "exec/op.h"
#include "sluice/rowcodec.h"

typedef struct DistinctSet {
    ExHashTab *ht;      /* canonical key -> index in rows; NULL: a list (ORDER BY) */
    SlStr     *rows;    /* row_encode of the argument values */
    uint32_t   n, cap;
} DistinctSet;

typedef struct Slot {
    const AggCall *call;
    uint32_t       off;
} Slot;

struct ExAggSet {
    Arena   *arena;
    int      n;
    Slot    *slots;
    uint32_t size;
};

/* Does the call keep its rows (DISTINCT, ORDER BY) rather than a state? */
static bool kept_rows(const AggCall *c)
{
    return c->distinct || c->norder > 0;
}

/* The columns of a kept row: the arguments, and without DISTINCT the
 * ORDER BY keys after them. */
static int kept_cols(const AggCall *c)
{
    return c->nargs + (c->distinct ? 0 : c->norder);
}

ExAggSet *ex_aggset_new(Arena *a, const AggCall *calls, int n)
{
    ExAggSet *s = ARENA_NEW(a, ExAggSet);
    s->arena = a;
    s->n = n;
    s->slots = ARENA_ARRAY(a, Slot, n ? n : 1);
    uint32_t off = 0;
    for (int i = 0; i < n; i++) {
        s->slots[i].call = &calls[i];
        s->slots[i].off = off;
        uint32_t sz = kept_rows(&calls[i]) ? (uint32_t)sizeof(DistinctSet *)
                                           : ex_agg_func(calls[i].sig)->state_size;
        off += (sz + 15) & ~15u;
    }
    s->size = off ? off : 16;
    return s;
}

uint32_t ex_aggset_size(const ExAggSet *s)
{
    return s->size;
}

/* The types of a kept row's columns. */
static SlType *arg_types(Arena *a, const AggCall *c)
{
    int n = kept_cols(c);
    SlType *t = ARENA_ARRAY(a, SlType, n ? n : 1);
    for (int k = 0; k < c->nargs; k++)
        t[k] = c->args[k]->type;
    for (int k = c->nargs; k < n; k++)
        t[k] = c->order[k - c->nargs].expr->type;
    return t;
}

/* Adds row `row` of args (nargs columns) to a kept set (dedupe: DISTINCT)
 * or list. */
static void distinct_add(ExAggSet *s, DistinctSet **dsp, const Vector *args, int nargs,
                         bool dedupe, uint32_t row, StrBuf *key, StrBuf *val)
{
    DistinctSet *ds = *dsp;
    if (ds == NULL) {
        ds = *dsp = ARENA_NEW(s->arena, DistinctSet);
        ds->ht = dedupe ? ex_ht_new_small(s->arena) : NULL;
    }
    if (ds->ht != NULL) {
        strbuf_reset(key);
        ex_key_encode(args, nargs, row, key);
        bool inserted;
        ex_ht_insert(ds->ht, key->data, (uint32_t)key->len, &inserted);
        if (!inserted)
            return;
    }
    if (ds->n == ds->cap) {
        uint32_t cap = ds->cap ? ds->cap * 2 : 8;
        SlStr *more = ARENA_ARRAY(s->arena, SlStr, cap);
        if (ds->n)
            memcpy(more, ds->rows, sizeof(SlStr) * ds->n);
        ds->rows = more;
        ds->cap = cap;
    }
    strbuf_reset(val);
    Batch b = {.nrows = row + 1, .ncols = (uint32_t)nargs, .cols = (Vector *)args};
    row_encode(&b, row, val);
    ds->rows[ds->n].ptr = arena_memdup(s->arena, val->data, val->len);
    ds->rows[ds->n].len = (uint32_t)val->len;
    ds->n++;
}

int ex_aggset_update(ExAggSet *s, EvalCtx *ecx, const Batch *in, uint32_t nrows,
                     const uint32_t *sel, uint32_t nsel, uint8_t *const *rows)
{
    uint32_t *keep = ARENA_ARRAY(ecx->arena, uint32_t, nsel ? nsel : 1);
    uint8_t **st = ARENA_ARRAY(ecx->arena, uint8_t *, nrows ? nrows : 1);
    for (int k = 0; k < s->n; k++) {
        const AggCall *c = s->slots[k].call;
        uint32_t off = s->slots[k].off;
        int ncols = kept_cols(c);
        Vector *args = ARENA_ARRAY(ecx->arena, Vector, ncols ? ncols : 1);
        for (int a = 0; a < c->nargs; a++)
            if (ex_eval_sel(ecx, c->args[a], in, nrows, sel, nsel, &args[a]) < 0)
                return -1;
        for (int a = c->nargs; a < ncols; a++)
            if (ex_eval_sel(ecx, c->order[a - c->nargs].expr, in, nrows, sel, nsel, &args[a]) < 0)
                return -1;
        Vector f;
        if (c->filter && ex_eval_sel(ecx, c->filter, in, nrows, sel, nsel, &f) < 0)
            return -1;
        uint32_t m = 0;
        for (uint32_t j = 0; j < nsel; j++) {
            uint32_t i = sel ? sel[j] : j;
            if (c->filter && (vector_is_null(&f, i) || !f.v.b[i]))
                continue;
            /* array_agg and jsonb_agg keep NULLs: they are elements;
             * jsonb_object_agg refuses a NULL key */
            if (c->nargs > 0 && vector_is_null(&args[0], i) && c->sig->id != AGG_ARRAY_AGG &&
                c->sig->id != AGG_JSONB_AGG && c->sig->id != AGG_JSONB_OBJECT_AGG)
                continue;
            keep[m++] = i;
            st[i] = rows[i] + off;
        }
        if (m == 0)
            continue;
        if (kept_rows(c)) {
            StrBuf key, val;
            strbuf_init(&key);
            strbuf_init(&val);
            for (uint32_t j = 0; j < m; j++)
                distinct_add(s, (DistinctSet **)st[keep[j]], args, ncols, c->distinct, keep[j],
                             &key, &val);
            strbuf_free(&key);
            strbuf_free(&val);
            continue;
        }
        AggCtx acx = {.arena = s->arena, .err = ecx->err, .type = c->type};
        if (ex_agg_func(c->sig)->update(&acx, args, st, keep, m) < 0)
            return -1;
    }
    return 0;
}

/* How kept rows are ordered: by columns col[i] of the batch, each
 * ascending or not, NULLs first or last. */
typedef struct RowOrder {
    int         n;
    const int  *col;
    const bool *desc, *nulls_first;
} RowOrder;

static int row_cmp(const Batch *b, const RowOrder *o, uint32_t x, uint32_t y)
{
    for (int i = 0; i < o->n; i++) {
        const Vector *v = &b->cols[o->col[i]];
        bool nx = vector_is_null(v, x), ny = vector_is_null(v, y);
        if (nx || ny) {
            if (nx != ny)
                return (nx ? 1 : -1) * (o->nulls_first[i] ? -1 : 1);
            continue;
        }
        int r = ex_value_cmp(v, x, v, y);
        if (r != 0)
            return o->desc[i] ? -r : r;
    }
    return 0;
}

/* A merge sort of v[0..n) that looks at the statement's interrupt flag
 * every 65,536 rows it merges: -1 with err set once it is cancelled. */
static int sort_rows(const Batch *b, const RowOrder *o, uint32_t *v, uint32_t *tmp, uint32_t n,
                     SlError *err)
{
    if (n < 2)
        return 0;
    uint32_t h = n / 2, i = 0, j = h, k = 0;
    if (sort_rows(b, o, v, tmp, h, err) < 0 || sort_rows(b, o, v + h, tmp, n - h, err) < 0)
        return -1;
    while (i < h && j < n) {
        if (k % 65536 == 0 && ex_check_interrupt(err) < 0)
            return -1;
        tmp[k++] = row_cmp(b, o, v[j], v[i]) < 0 ? v[j++] : v[i++];
    }
    while (i < h)
        tmp[k++] = v[i++];
    while (j < n)
        tmp[k++] = v[j++];
    memcpy(v, tmp, sizeof(uint32_t) * n);
    return 0;
}

/* The order a kept set or list is fed in: by the call's ORDER BY keys
 * (for DISTINCT, the arguments they name), else (DISTINCT alone) by the
 * arguments ascending, NULLs last, as PostgreSQL's sort-based DISTINCT. */
static int row_order(Arena *a, const AggCall *c, RowOrder *o)
{
    int n = c->norder ? c->norder : c->nargs;
    int *col = ARENA_ARRAY(a, int, n ? n : 1);
    bool *desc = ARENA_ARRAY(a, bool, n ? n : 1), *nf = ARENA_ARRAY(a, bool, n ? n : 1);
    for (int i = 0; i < n; i++) {
        col[i] = i;
        desc[i] = nf[i] = false;
        if (c->norder == 0)
            continue;
        desc[i] = c->order[i].desc;
        nf[i] = c->order[i].nulls_first;
        if (!c->distinct) {
            col[i] = c->nargs + i;
            continue;
        }
        for (int k = 0; k < c->nargs; k++)
            if (plan_expr_equal(c->order[i].expr, c->args[k])) {
                col[i] = k;
                break;
            }
    }
    *o = (RowOrder){n, col, desc, nf};
    return 0;
}

/* The aggregate of a DISTINCT or ORDER BY call over its rows, into row r
 * of out. */
static int distinct_final(ExAggSet *s, const AggCall *c, const DistinctSet *ds, Vector *out,
                          uint32_t r, Arena *a, SlError *err)
{
    const AggFunc *fn = ex_agg_func(c->sig);
    uint8_t *state = arena_zalloc(a, fn->state_size ? fn->state_size : 16);
    AggCtx acx = {.arena = a, .err = err, .type = c->type};
    uint32_t n = ds ? ds->n : 0;
    if (n > 0) {
        int ncols = kept_cols(c);
        Batch *b = batch_alloc(a, arg_types(a, c), (uint32_t)ncols, n);
        for (uint32_t i = 0; i < n; i++)
            if (row_decode(ds->rows[i].ptr, ds->rows[i].len, b, i, a) < 0)
                return sl_error(err, ERRCODE_DATA_CORRUPTED, "a DISTINCT aggregate state is "
                                                             "corrupt");
        b->nrows = n;
        uint8_t **st = ARENA_ARRAY(a, uint8_t *, n);
        for (uint32_t i = 0; i < n; i++)
            st[i] = state;
        /* in value order, as PostgreSQL's sort-based DISTINCT feeds them
         * (string_agg(DISTINCT x, ',') lists them sorted) */
        uint32_t *order = ARENA_ARRAY(a, uint32_t, n), *tmp = ARENA_ARRAY(a, uint32_t, n);
        for (uint32_t i = 0; i < n; i++)
            order[i] = i;
        RowOrder o;
        if (row_order(a, c, &o) < 0 || sort_rows(b, &o, order, tmp, n, err) < 0)
            return -1;
        if (fn->update(&acx, b->cols, st, order, n) < 0)
            return -1;
    }
    SL_UNUSED(s);
    return fn->final(&acx, state, out, r);
}

int ex_aggset_final(ExAggSet *s, const uint8_t *block, Vector *outs, uint32_t r, Arena *out,
                    SlError *err)
{
    for (int k = 0; k < s->n; k++) {
        const AggCall *c = s->slots[k].call;
        const uint8_t *st = block + s->slots[k].off;
        if (kept_rows(c)) {
            const DistinctSet *ds;
            memcpy(&ds, st, sizeof(ds));
            if (distinct_final(s, c, ds, &outs[k], r, out, err) < 0)
                return -1;
            continue;
        }
        AggCtx acx = {.arena = out, .err = err, .type = c->type};
        if (ex_agg_func(c->sig)->final(&acx, st, &outs[k], r) < 0)
            return -1;
    }
    return 0;
}

int ex_aggset_merge(ExAggSet *s, uint8_t *dst, const uint8_t *src, Arena *scratch, SlError *err)
{
    SL_UNUSED(scratch);
    for (int k = 0; k < s->n; k++) {
        const AggCall *c = s->slots[k].call;
        uint32_t off = s->slots[k].off;
        if (kept_rows(c)) {
            DistinctSet *from;
            memcpy(&from, src + off, sizeof(from));
            if (from == NULL)
                continue;
            Arena tmp;
            arena_init(&tmp, 4096);
            StrBuf key, val;
            strbuf_init(&key);
            strbuf_init(&val);
            int ncols = kept_cols(c);
            Batch *b = batch_alloc(&tmp, arg_types(&tmp, c), (uint32_t)ncols, 1);
            int rc = 0;
            for (uint32_t i = 0; i < from->n && rc == 0; i++) {
                if (row_decode(from->rows[i].ptr, from->rows[i].len, b, 0, &tmp) < 0)
                    rc = sl_error(err, ERRCODE_DATA_CORRUPTED,
                                  "a DISTINCT aggregate state is corrupt");
                else
                    distinct_add(s, (DistinctSet **)(dst + off), b->cols, ncols, c->distinct, 0,
                                 &key, &val);
            }
            strbuf_free(&key);
            strbuf_free(&val);
            arena_destroy(&tmp);
            if (rc < 0)
                return -1;
            continue;
        }
        AggCtx acx = {.arena = s->arena, .err = err, .type = c->type};
        if (ex_agg_func(c->sig)->merge(&acx, dst + off, src + off) < 0)
            return -1;
    }
    return 0;
}

/* Serialized: per call, a 4-byte length and the call's bytes. */
void ex_aggset_serialize(const ExAggSet *s, const uint8_t *block, StrBuf *out)
{
    StrBuf one;
    strbuf_init(&one);
    for (int k = 0; k < s->n; k++) {
        const AggCall *c = s->slots[k].call;
        const uint8_t *st = block + s->slots[k].off;
        strbuf_reset(&one);
        if (kept_rows(c)) {
            const DistinctSet *ds;
            memcpy(&ds, st, sizeof(ds));
            uint32_t n = ds ? ds->n : 0;
            strbuf_append(&one, &n, 4);
            for (uint32_t i = 0; i < n; i++) {
                strbuf_append(&one, &ds->rows[i].len, 4);
                strbuf_append(&one, ds->rows[i].ptr, ds->rows[i].len);
            }
        } else {
            const AggFunc *fn = ex_agg_func(c->sig);
            fn->serialize(fn, st, &one);
        }
        uint32_t len = (uint32_t)one.len;
        strbuf_append(out, &len, 4);
        strbuf_append(out, one.data ? one.data : "", one.len);
    }
    strbuf_free(&one);
}

int ex_aggset_deserialize(ExAggSet *s, uint8_t *block, const void *p, size_t n, SlError *err)
{
    const uint8_t *q = p, *end = q + n;
    memset(block, 0, s->size);
    for (int k = 0; k < s->n; k++) {
        const AggCall *c = s->slots[k].call;
        uint8_t *st = block + s->slots[k].off;
        uint32_t len;
        if (end - q < 4)
            goto bad;
        memcpy(&len, q, 4);
        q += 4;
        if ((size_t)(end - q) < len)
            goto bad;
        if (kept_rows(c)) {
            const uint8_t *r = q, *rend = q + len;
            uint32_t cnt;
            if (rend - r < 4)
                goto bad;
            memcpy(&cnt, r, 4);
            r += 4;
            Arena tmp;
            arena_init(&tmp, 4096);
            StrBuf key, val;
            strbuf_init(&key);
            strbuf_init(&val);
            int ncols = kept_cols(c);
            Batch *b = batch_alloc(&tmp, arg_types(&tmp, c), (uint32_t)ncols, 1);
            bool ok = true;
            for (uint32_t i = 0; i < cnt && ok; i++) {
                uint32_t l;
                if (rend - r < 4) {
                    ok = false;
                    break;
                }
                memcpy(&l, r, 4);
                r += 4;
                if ((size_t)(rend - r) < l || row_decode(r, l, b, 0, &tmp) < 0) {
                    ok = false;
                    break;
                }
                distinct_add(s, (DistinctSet **)st, b->cols, ncols, c->distinct, 0, &key, &val);
                r += l;
            }
            strbuf_free(&key);
            strbuf_free(&val);
            arena_destroy(&tmp);
            if (!ok)
                goto bad;
        } else {
            AggCtx acx = {.arena = s->arena, .err = err, .type = c->type};
            const AggFunc *fn = ex_agg_func(c->sig);
            if (fn->deserialize(&acx, fn, st, q, len) < 0)
                return -1;
        }
        q += len;
    }
    if (q != end)
        goto bad;
    return 0;
bad:
    return sl_error(err, ERRCODE_DATA_CORRUPTED, "a stored aggregate state is corrupt");
}
