/*
 * op_distinct.c -- SELECT DISTINCT over a delta stream with retractions,
 * and the counted operator it shares with the set operations (op_set.h).
 *
 *   eng_op_counted_new     per distinct row its weight sum on each input;
 *                          the output's multiplicity of the row a function
 *                          of them (EngSetKind)
 *   eng_op_distinct_new    the one-input counted operator: a row shows
 *                          once while its count is positive
 *   eng_op_distinct_plan   the same for a plan's DISTINCT node
 *   eng_same_time          do two edges have the same time columns?
 *
 * Rows are equal as ex_key_encode sees them (SQL's "=", NULLs equal: 1.0
 * and 1.00 alike).  Push adds each row's weight to its entry; the entries
 * a batch touches remember their counts before it, and flush emits, per
 * touched row, new multiplicity - old multiplicity (a row coming to the
 * output +1, leaving -1; INTERSECT ALL and EXCEPT ALL by more).  The row
 * shown is the first copy that brought the row in; it is kept while the
 * output shows the row.  A count below 0 at flush (more retracted than
 * inserted) fails the batch (0A000): the input is not a multiset.
 *
 * State (under the operator's prefix P, docs/engine-graph.md "Distinct
 * and set operations"):
 *
 *   P + 'r' + key            -> count per input (8 each, LE), then the
 *                               row shown (row_encode): one distinct row
 *                               (key: ex_key_encode of every column)
 *   P + 'n'                  -> rows kept, their bytes, 0 (never evicts;
 *                               8 each, LE: eng_stats_put): the stats,
 *                               read by restore
 *
 * A row is read on first touch (state_get) into a cache that lives until
 * restore drops it; checkpoint writes the rows the batch touched (every
 * count 0: deleted).  The state grows with the distinct rows
 * (ENG_BOUND_UNBOUNDED): forgetting rows below a watermark would answer
 * a later retraction of one wrong, so nothing is evicted.  The inputs'
 * watermark (the least of them, when the inputs' time columns agree) is
 * passed on at flush, after the rows it follows.
 */
#include "op_set.h"
#include "keymap.h"
#include "sluice/bytes.h"
#include "sluice/common.h"
#include "sluice/rowcodec.h"

#include <string.h>

/* One distinct row. */
typedef struct SetRow {
    const uint8_t *key;             /* the map's copy */
    uint32_t klen;
    uint8_t *row;                   /* the row shown (row_encode), on the heap */
    uint32_t len;
    int64_t  cnt[2];                /* weight sums per input, this batch included */
    int64_t  was[2];                /* the same before the batch (when touched) */
    bool     touched;               /* in the batch's list */
    bool     stored;                /* in the store as of the last checkpoint */
} SetRow;

typedef struct SetOp {
    EngSetKind kind;
    int        ninputs;
    SlType    *types;
    Arena      cache;               /* entries and keys; reset by restore */
    EngMap     map;                 /* key -> SetRow* */
    SetRow   **touched;             /* the batch's, in the cache arena */
    uint32_t   ntouched, captouched;
    bool       has_wm[2];
    int64_t    wm[2];
    bool       pass_wm;             /* the inputs' time columns agree */
    EngStats   stats;               /* rows kept, their keys' and values' bytes */
    StrBuf     kbuf;                /* scratch: keys */
    StrBuf     rbuf;                /* scratch: rows */
} SetOp;

static int64_t mult(EngSetKind k, const int64_t *c)
{
    int64_t l = c[0], r = c[1];
    switch (k) {
    case ENG_SET_DISTINCT:      return l > 0;
    case ENG_SET_UNION:         return l + r > 0;
    case ENG_SET_INTERSECT:     return l > 0 && r > 0;
    case ENG_SET_INTERSECT_ALL: return SL_MAX(SL_MIN(l, r), 0);
    case ENG_SET_EXCEPT:        return l > 0 && r <= 0;
    case ENG_SET_EXCEPT_ALL:    return SL_MAX(l - SL_MAX(r, 0), 0);
    }
    return 0;
}

static void cache_drop(SetOp *s)
{
    for (uint32_t i = 0; i < s->map.cap; i++)
        if (s->map.slots[i].key && s->map.slots[i].value)
            sl_free(((SetRow *)s->map.slots[i].value)->row);
    eng_map_clear(&s->map);
    s->touched = NULL;
    s->ntouched = s->captouched = 0;
    arena_reset(&s->cache);
}

static int64_t entry_bytes(const SetOp *s, const SetRow *x)
{
    return (int64_t)(ENG_PREFIX_LEN + 1 + x->klen + 8 * (uint32_t)s->ninputs + x->len);
}

static void set_row(SetRow *x, const void *row, size_t len)
{
    sl_free(x->row);
    x->row = sl_malloc(len ? len : 1);
    memcpy(x->row, row, len);
    x->len = (uint32_t)len;
}

/* The entry of key (in s->kbuf), read from the store on first touch; NULL
 * with cx->err set on a read error. */
static SetRow *entry_get(EngOp *op, EngCtx *cx)
{
    SetOp *s = op->self;
    bool isnew;
    void **slot = eng_map_upsert(&s->map, s->kbuf.data, s->kbuf.len, &isnew);
    if (!isnew)
        return *slot;
    SetRow *x = ARENA_NEW(&s->cache, SetRow);
    /* the map's copy of the key: found again through the slot */
    EngMapSlot *ms = (EngMapSlot *)((char *)slot - offsetof(EngMapSlot, value));
    x->key = ms->key;
    x->klen = ms->klen;
    *slot = x;
    eng_state_key(op, 'r', s->kbuf.data, s->kbuf.len, &s->rbuf);
    void *v;
    size_t vl, head = 8 * (size_t)s->ninputs;
    int rc = state_get(cx->st, s->rbuf.data, s->rbuf.len, cx->arena, &v, &vl, cx->err);
    if (rc < 0)
        return NULL;
    if (rc == 1) {
        if (vl < head) {
            sl_error(cx->err, ERRCODE_DATA_CORRUPTED, "a stored distinct row is corrupt");
            return NULL;
        }
        for (int i = 0; i < s->ninputs; i++)
            x->cnt[i] = (int64_t)get_le64((const uint8_t *)v + 8 * i);
        set_row(x, (const uint8_t *)v + head, vl - head);
        x->stored = true;
    }
    return x;
}

/* ------------------------------------------------------------------ push */

static int set_push(EngOp *op, int input, const EngDelta *d, EngCtx *cx)
{
    SetOp *s = op->self;
    for (uint32_t r = 0; r < d->rows.nrows; r++) {
        int64_t w = d->weights[r];
        if (w == 0)
            continue;
        strbuf_reset(&s->kbuf);
        ex_key_encode(d->rows.cols, (int)d->rows.ncols, r, &s->kbuf);
        SetRow *x = entry_get(op, cx);
        if (x == NULL)
            return -1;
        if (!x->touched) {
            if (s->ntouched == s->captouched) {
                uint32_t cap = s->captouched ? s->captouched * 2 : 64;
                SetRow **na = ARENA_ARRAY(&s->cache, SetRow *, cap);
                if (s->ntouched)
                    memcpy(na, s->touched, sizeof(*na) * s->ntouched);
                s->touched = na;
                s->captouched = cap;
            }
            s->touched[s->ntouched++] = x;
            x->touched = true;
            x->was[0] = x->cnt[0];
            x->was[1] = x->cnt[1];
        }
        /* a row nobody shows takes this copy's form */
        if (x->cnt[0] == 0 && x->cnt[1] == 0 && mult(s->kind, x->was) == 0) {
            strbuf_reset(&s->rbuf);
            row_encode(&d->rows, r, &s->rbuf);
            set_row(x, s->rbuf.data, s->rbuf.len);
        }
        if (__builtin_add_overflow(x->cnt[input], w, &x->cnt[input]))
            return sl_error(cx->err, ERRCODE_NUMERIC_VALUE_OUT_OF_RANGE,
                            "a row's count is out of range");
    }
    return 0;
}

static int set_watermark(EngOp *op, int input, int64_t wm_us, EngCtx *cx)
{
    SL_UNUSED(cx);
    SetOp *s = op->self;
    if (!s->has_wm[input] || wm_us > s->wm[input])
        s->wm[input] = wm_us;
    s->has_wm[input] = true;
    return 0;
}

static int set_flush(EngOp *op, EngCtx *cx)
{
    SetOp *s = op->self;
    EngDelta out;
    eng_delta_init(&out, cx->arena, op->out_cols, op->out_ncols, s->ntouched);
    for (uint32_t i = 0; i < s->ntouched; i++) {
        SetRow *x = s->touched[i];
        if (x->cnt[0] < 0 || x->cnt[1] < 0) {
            sl_error(cx->err, ERRCODE_FEATURE_NOT_SUPPORTED,
                     "%s retracts a row more times than it was inserted", op->vt->kind);
            sl_error_detail(cx->err, "Its input is not a multiset: a row's count went "
                            "below zero.");
            return -1;
        }
        int64_t dw = mult(s->kind, x->cnt) - mult(s->kind, x->was);
        if (dw == 0)
            continue;
        uint32_t at = out.rows.nrows;
        if (row_decode(x->row, x->len, &out.rows, at, cx->arena) < 0)
            return sl_error(cx->err, ERRCODE_DATA_CORRUPTED, "a stored distinct row is corrupt");
        out.weights[at] = dw;
        out.rows.nrows++;
    }
    if (eng_emit(op, &out, cx) < 0)
        return -1;
    if (!s->pass_wm || !s->has_wm[0] || (s->ninputs == 2 && !s->has_wm[1]))
        return 0;
    return eng_emit_watermark(op, s->ninputs == 2 ? SL_MIN(s->wm[0], s->wm[1]) : s->wm[0], cx);
}

/* ------------------------------------------------------ checkpoint, restore */

static int set_checkpoint(EngOp *op, EngCtx *cx)
{
    SetOp *s = op->self;
    for (uint32_t i = 0; i < s->ntouched; i++) {
        SetRow *x = s->touched[i];
        x->touched = false;
        bool keep = x->cnt[0] != 0 || x->cnt[1] != 0;
        eng_state_key(op, 'r', x->key, x->klen, &s->kbuf);
        if (!keep) {
            if (x->stored) {
                state_batch_delete(cx->wb, s->kbuf.data, s->kbuf.len);
                s->stats.st.rows--;
                s->stats.st.bytes -= entry_bytes(s, x);
                s->stats.dirty = true;
            }
            x->stored = false;
            continue;
        }
        if (!x->stored) {
            s->stats.st.rows++;
            s->stats.st.bytes += entry_bytes(s, x);
            s->stats.dirty = true;
        }
        x->stored = true;
        strbuf_reset(&s->rbuf);
        for (int k = 0; k < s->ninputs; k++) {
            uint8_t c[8];
            put_le64(c, (uint64_t)x->cnt[k]);
            strbuf_append(&s->rbuf, c, 8);
        }
        strbuf_append(&s->rbuf, x->row, x->len);
        state_batch_put(cx->wb, s->kbuf.data, s->kbuf.len, s->rbuf.data, s->rbuf.len);
    }
    s->ntouched = 0;
    eng_stats_flush(op, cx, &s->stats);
    return 0;
}

static int set_restore(EngOp *op, EngCtx *cx)
{
    SetOp *s = op->self;
    cache_drop(s);
    if (eng_stats_load(op, cx, "distinct", &s->stats) < 0)
        return -1;
    s->has_wm[0] = s->has_wm[1] = false;
    return 0;
}

/* ------------------------------------------------------ stats, explain, free */

static void set_stats(const EngOp *op, EngOpStats *out)
{
    const SetOp *s = op->self;
    *out = s->stats.st;
}

static void set_explain(const EngOp *op, StrBuf *out)
{
    static const char *const what[] = {
        [ENG_SET_DISTINCT] = "distinct", [ENG_SET_UNION] = "union",
        [ENG_SET_INTERSECT] = "intersect", [ENG_SET_INTERSECT_ALL] = "intersect all",
        [ENG_SET_EXCEPT] = "except", [ENG_SET_EXCEPT_ALL] = "except all",
    };
    const SetOp *s = op->self;
    strbuf_printf(out, "%s of %d column%s: unbounded", what[s->kind], op->out_ncols,
                  op->out_ncols == 1 ? "" : "s");
}

static void set_free(EngOp *op)
{
    SetOp *s = op->self;
    if (s == NULL)
        return;
    cache_drop(s);
    eng_map_free(&s->map);
    arena_destroy(&s->cache);
    strbuf_free(&s->kbuf);
    strbuf_free(&s->rbuf);
}

/* distinct and the set operations differ only in their kind's name */
#define SET_VT(name) {                                                      \
    .kind = name, .push = set_push, .watermark = set_watermark,             \
    .flush = set_flush, .checkpoint = set_checkpoint,                       \
    .restore = set_restore, .stats = set_stats, .explain = set_explain,     \
    .free = set_free,                                                       \
}
static const EngOpVt distinct_vt = SET_VT("distinct");
static const EngOpVt setop_vt = SET_VT("setop");

/* ------------------------------------------------------------ constructors */

bool eng_same_time(const EngEdgeTime *a, const EngEdgeTime *b)
{
    if (a == NULL || b == NULL || a->n == 0 || a->n != b->n)
        return false;
    for (int i = 0; i < a->n; i++)
        if (a->cols[i].col != b->cols[i].col || a->cols[i].offset_us != b->cols[i].offset_us)
            return false;
    return true;
}

EngOp *eng_op_counted_new(EngSetKind kind, const ColumnDesc *cols, int ncols,
                          const EngEdgeTime *const *times)
{
    int nin = kind == ENG_SET_DISTINCT ? 1 : 2;
    EngOp *op = eng_op_new(kind == ENG_SET_DISTINCT ? &distinct_vt : &setop_vt, nin,
                           sizeof(SetOp));
    SetOp *s = op->self;
    s->kind = kind;
    s->ninputs = nin;
    arena_init(&s->cache, 16384);
    eng_map_init(&s->map, &s->cache);
    strbuf_init(&s->kbuf);
    strbuf_init(&s->rbuf);
    /* every input's time columns those of input 0 */
    s->pass_wm = times[0] != NULL && times[0]->n > 0;
    for (int i = 0; i < nin; i++) {
        op->in_cols[i] = cols;
        op->in_ncols[i] = ncols;
        if (times[i] != NULL)
            op->in_time[i] = *times[i];
        if (s->pass_wm && !eng_same_time(times[0], times[i]))
            s->pass_wm = false;
    }
    op->out_cols = cols;
    op->out_ncols = ncols;
    if (s->pass_wm)
        op->out_time = op->in_time[0];
    op->bound = ENG_BOUND_UNBOUNDED;
    return op;
}

EngOp *eng_op_distinct_new(const ColumnDesc *cols, int ncols, const EngEdgeTime *time)
{
    const EngEdgeTime *times[1] = {time};
    return eng_op_counted_new(ENG_SET_DISTINCT, cols, ncols, times);
}

EngOp *eng_op_distinct_plan(const Plan *p, const EngEdgeTime *time, SlError *err)
{
    int n = p->ncols;
    bool seen[n > 0 ? n : 1];
    memset(seen, 0, sizeof(seen));
    int distinct = 0;
    for (int i = 0; i < p->u.distinct.nkeys; i++) {
        int c = p->u.distinct.keys[i];
        if (c >= 0 && c < n && !seen[c]) {
            seen[c] = true;
            distinct++;
        }
    }
    if (distinct != n) {
        sl_error(err, ERRCODE_FEATURE_NOT_SUPPORTED,
                 "the operator graph does not yet run DISTINCT ON");
        sl_error_hint(err, "DISTINCT ON keeps the first row of each key in an order; "
                      "SELECT DISTINCT over every column runs.");
        return NULL;
    }
    return eng_op_distinct_new(p->cols, n, time);
}
