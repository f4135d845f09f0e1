/*
 * op_join.c -- the join operator (op_join.h): an incremental equi-join of
 * two inputs with both sides' rows kept by join key.
 *
 *   eng_op_join_new    the operator (inner, left, right, full; a residual
 *                      condition; an interval bound evicting by watermark)
 *   eng_op_join_plan   the same for a plan's JOIN node, its interval bound
 *                      found in the node's residual (what the rewriter calls)
 *
 * A delta on one side joins the other side's rows as they are now, then
 * becomes part of its own side: pushing the left delta and then the right
 * one gives ΔL⋈R + L'⋈ΔR, so a pair whose rows both arrive in one batch
 * joins once.  Weights multiply.  Rows are processed one at a time, so a
 * delta may hold a row and its retraction.
 *
 * Outer sides keep a degree per kept row (RisingWave's degree table): the
 * sum of the weights of the other side's rows it matches (equal key, the
 * interval and the residual true).  Without an interval bound a row of
 * degree 0 shows as its padded row (the other side's columns NULL): the
 * padded row is retracted when the degree leaves 0 and emitted again when
 * it comes back to 0.  With an interval bound the output is append-only
 * unless an input retracts: a row's padded row is emitted once, when the
 * watermark evicts the row with degree 0.  A row of an outer side that can
 * never match (a NULL key, or a NULL time under an interval) gets its
 * padded row at once and is not kept; on an inner side it is dropped.
 *
 * A stream-table (lookup) join keeps only the table side: the stream
 * side's deltas wait for flush and then join the table as the batch
 * leaves it, and a table change joins nothing; the stream side's
 * watermark is passed on after them.
 *
 * The kept rows are in memory, whole (docs/engine-graph.md "Joins"): per
 * side a hash map from join key to the key's rows (the probe), a hash set
 * of the rows by key and row bytes (a row's weight and degree found in one
 * step), and the rows by *slot* of time (an interval join's slot is 1/64
 * of its interval, at least 1 ms, epoch aligned; without an interval one
 * slot holds every row), what eviction walks (an interval join's rows are
 * allocated in their slot's arena and freed with it).  A side is read from the
 * store whole on first touch after a restore (one scan).  The store is
 * written a batch at a time, as chunks: the rows a batch changed, per
 * slot, as one value of many entries under one key
 *
 *   P + 'C' + 'L'|'R' + slot start (put_time_key) + chunk number (8, BE)
 *        -> entries: key length (4, BE), key (ex_key_encode bytes), row
 *           length (4, BE), row (row_encode bytes), weight, degree, time
 *           (8 each, LE); a row's entry in a later chunk of its slot
 *           overrides an earlier one, weight 0: the row is gone
 *   P + 'x'|'y'  -> the left / right side's cut (8, LE, eng_bound_put):
 *           its rows below it were evicted; loading skips them
 *   P + 'n'      -> rows kept, their bytes, rows evicted ever (8 each, LE):
 *           the stats (eng_stats_put), read by restore
 *
 * so a batch of a million new rows is some hundreds of puts, not a
 * million.  Eviction (at flush, once the batch's watermarks are in: a left
 * row below the right watermark + lo can match no future right row, a
 * right row below the left watermark - hi no future left row) drops the
 * rows below the cut from memory and deletes the slots wholly below it
 * with one range deletion; the rows of the slot the cut is in stay in the
 * store until it passes that slot's end.  Entries that changed rows left
 * behind (retractions, an outer row's degrees) are rewritten away: when a
 * side's stored entries pass twice its rows (plus 4,096), the checkpoint
 * deletes its chunks and writes its rows anew.
 */
#include "op_join.h"
#include "compile.h"
#include "keymap.h"
#include "sluice/bytes.h"
#include "sluice/common.h"
#include "sluice/plan.h"
#include "sluice/rowcodec.h"

#include <stdlib.h>
#include <string.h>

#define ENTRY_TAIL 24               /* weight, degree, time */
#define ENTRY_HEAD 8                /* key length, row length */
#define CHUNK_BYTES (256 * 1024)    /* a chunk is closed past this */
#define CHUNK_KEY_LEN (ENG_PREFIX_LEN + 2 + 8 + 8)
#define COMPACT_SLACK 4096          /* stale entries a side may hold beyond its rows */

typedef struct JoinBucket JoinBucket;

/* One distinct row of a side (equal key and row_encode bytes), on the
 * heap.  Dead once its weight reached 0 or it was evicted: out of its
 * bucket and of the row set, freed when its slot lets it go. */
typedef struct JoinRow {
    JoinBucket *b;                  /* its key's rows; NULL once dead */
    uint64_t    h;                  /* hash of key and row: the row set */
    uint32_t    pos;                /* its place in b->rows */
    uint32_t    klen, len;          /* its key's and row's bytes */
    int64_t     weight;             /* never 0 while alive */
    int64_t     degree;             /* outer sides: the weight of its matches */
    int64_t     ts;                 /* its interval time (0 without an interval) */
    bool        dirty;              /* in the side's dirty list */
    bool        stored;             /* the store has an entry of it */
    bool        dead;
    bool        evicted;            /* dead by the watermark: no entry needed */
    bool        in_arena;           /* in its slot's arena, not on the heap */
    uint8_t     bytes[];            /* the key (ex_key_encode), then the row
                                     * (row_encode): ROW_OF(x) */
} JoinRow;

#define ROW_OF(x) ((x)->bytes + (x)->klen)

/* The rows of one side with one join key. */
struct JoinBucket {
    const uint8_t *key;             /* in the side's arena */
    uint32_t  klen;
    JoinRow **rows;                 /* on the heap */
    uint32_t  n, cap;
};

/* The rows of one slot of time, alive or dead and not yet freed. */
typedef struct JoinSlot {
    int64_t   start;
    int64_t   nentries;             /* entries its chunks hold in the store */
    JoinRow **rows;                 /* on the heap */
    uint32_t  n, cap;
    Arena    *mem;                  /* an interval join's: its rows, freed with it */
} JoinSlot;

typedef struct JoinSide {
    int        ncols;
    SlType    *types;
    Expr *const *keys;              /* the join key, over the side's columns */
    bool       outer;               /* keeps degrees; padded rows */
    bool       noset;               /* an inner side whose input only inserts:
                                     * no row set, equal rows kept apart */
    int        tcol;                /* interval time column, -1: none */
    int64_t    toff;                /* its offset on the input edge */
    bool       has_wm;
    int64_t    wm;                  /* the least time a later row may have */
    bool       loaded;              /* memory holds the side (else: read it) */
    int64_t    cut;                 /* rows below this are gone (committed: 'x'|'y') */
    bool       cut_dirty;
    Arena      mem;                 /* buckets and their keys */
    EngMap     map;                 /* key bytes -> JoinBucket* */
    uint32_t   nempty;              /* buckets without a row */
    JoinRow  **set;                 /* the rows by key and row bytes (heap) */
    uint32_t   setcap, setn, settomb;
    JoinSlot  *slots;               /* heap, by start */
    uint32_t   nslots, capslots;
    JoinRow  **dirty;               /* changed since the checkpoint (heap) */
    uint32_t   ndirty, capdirty;
    JoinRow  **grave;               /* evicted this batch: freed at checkpoint */
    uint32_t   ngrave, capgrave;
    Arena    **old_mems;            /* the arenas of slots let go this batch:
                                     * destroyed at checkpoint */
    uint32_t   nold, capold;
    int64_t    nlive;               /* rows alive */
    int64_t    ndead;               /* dead rows still in the slots */
    int64_t    nstored;             /* entries in the store */
    uint64_t   seq;                 /* the next chunk number */
    bool       has_del;             /* slots to delete at checkpoint: */
    int64_t    del_from, del_to;    /* [from, to) of slot starts */
} JoinSide;

typedef struct JoinOp {
    EngJoinSpec spec;
    bool        has_interval;
    EngJoinInterval iv;
    int64_t     slot_us;            /* a slot's width (INT64_MAX: one slot) */
    JoinSide    side[2];
    int         ncols;              /* output: left then right */
    SlType     *out_types;
    int         lookup;             /* spec.lookup */
    const EngDelta **pending;       /* the stream side's deltas of the batch */
    int         npending, cappending;
    bool        has_fwd;            /* the stream side's watermark, passed on */
    int64_t     fwd_wm;             /* at flush, after the rows it follows */
    EngStats    stats;              /* rows kept, their entries' bytes, rows
                                     * evicted ever */
    StrBuf      kbuf;               /* scratch: keys */
    StrBuf      rbuf;               /* scratch: rows */
} JoinOp;

static const char SIDE_ROWS[2] = {'L', 'R'};
static const char SIDE_IDX[2] = {'l', 'r'};
static const char SIDE_CUT[2] = {'x', 'y'};

#define SET_TOMB ((JoinRow *)1)

/* --------------------------------------------------------- rows in memory */

static void *grow(void *arr, uint32_t *cap, size_t elem)
{
    *cap = *cap ? *cap * 2 : 16;
    return sl_realloc(arr, elem * *cap);
}

static uint64_t row_hash(const uint8_t *key, size_t klen, const uint8_t *row, size_t rlen)
{
    return ex_hash(key, klen) * UINT64_C(0x9E3779B97F4A7C15) ^ ex_hash(row, rlen);
}

static bool row_is(const JoinRow *x, uint64_t h, const uint8_t *key, size_t klen,
                   const uint8_t *row, size_t rlen)
{
    return x->h == h && x->len == rlen && x->klen == klen &&
           (klen == 0 || memcmp(x->bytes, key, klen) == 0) &&
           (rlen == 0 || memcmp(ROW_OF(x), row, rlen) == 0);
}

static void set_put(JoinSide *sd, JoinRow *x);

static void set_grow(JoinSide *sd)
{
    JoinRow **old = sd->set;
    uint32_t oldcap = sd->setcap;
    sd->setcap = sd->setn * 4 > 64 ? 1u << (64 - __builtin_clzll((uint64_t)sd->setn * 4 - 1))
                                   : 64;
    sd->set = sl_calloc(sd->setcap, sizeof(JoinRow *));
    sd->setn = sd->settomb = 0;
    for (uint32_t i = 0; i < oldcap; i++)
        if (old[i] != NULL && old[i] != SET_TOMB)
            set_put(sd, old[i]);
    sl_free(old);
}

static void set_put(JoinSide *sd, JoinRow *x)
{
    if ((sd->setn + sd->settomb + 1) * 4 > sd->setcap * 3)
        set_grow(sd);
    uint32_t m = sd->setcap - 1, i = (uint32_t)x->h & m;
    while (sd->set[i] != NULL && sd->set[i] != SET_TOMB)
        i = (i + 1) & m;
    if (sd->set[i] == SET_TOMB)
        sd->settomb--;
    sd->set[i] = x;
    sd->setn++;
}

/* The alive row of these bytes, or NULL; *slot its place in the set. */
static JoinRow *set_find(const JoinSide *sd, uint64_t h, const uint8_t *key, size_t klen,
                         const uint8_t *row, size_t rlen)
{
    if (sd->setcap == 0)
        return NULL;
    uint32_t m = sd->setcap - 1;
    for (uint32_t i = (uint32_t)h & m; sd->set[i] != NULL; i = (i + 1) & m)
        if (sd->set[i] != SET_TOMB && row_is(sd->set[i], h, key, klen, row, rlen))
            return sd->set[i];
    return NULL;
}

static void set_del(JoinSide *sd, JoinRow *x)
{
    uint32_t m = sd->setcap - 1;
    for (uint32_t i = (uint32_t)x->h & m; sd->set[i] != NULL; i = (i + 1) & m)
        if (sd->set[i] == x) {
            sd->set[i] = SET_TOMB;
            sd->setn--;
            sd->settomb++;
            return;
        }
}

/* The slot of time ts: its start. */
static int64_t slot_of(const JoinOp *j, int64_t ts)
{
    if (j->slot_us == INT64_MAX)
        return 0;
    if (ts < INT64_MIN + j->slot_us)
        return INT64_MIN;
    int64_t q = ts / j->slot_us;
    if (ts % j->slot_us < 0)
        q--;
    return q * j->slot_us;
}

/* The index of the slot starting at start, made if new. */
static uint32_t slot_get(JoinSide *sd, int64_t start)
{
    uint32_t lo = 0, hi = sd->nslots;
    if (hi > 0 && sd->slots[hi - 1].start < start) {
        lo = hi;                    /* the usual case: a later slot */
    } else {
        while (lo < hi) {
            uint32_t mid = (lo + hi) / 2;
            if (sd->slots[mid].start < start)
                lo = mid + 1;
            else
                hi = mid;
        }
        if (lo < sd->nslots && sd->slots[lo].start == start)
            return lo;
    }
    if (sd->nslots == sd->capslots)
        sd->slots = grow(sd->slots, &sd->capslots, sizeof(JoinSlot));
    memmove(&sd->slots[lo + 1], &sd->slots[lo], sizeof(JoinSlot) * (sd->nslots - lo));
    memset(&sd->slots[lo], 0, sizeof(JoinSlot));
    sd->slots[lo].start = start;
    sd->nslots++;
    return lo;
}

static void slot_push(JoinSlot *sl, JoinRow *x)
{
    if (sl->n == sl->cap)
        sl->rows = grow(sl->rows, &sl->cap, sizeof(JoinRow *));
    sl->rows[sl->n++] = x;
}

static void mark_dirty(JoinSide *sd, JoinRow *x)
{
    if (x->dirty)
        return;
    x->dirty = true;
    if (sd->ndirty == sd->capdirty)
        sd->dirty = grow(sd->dirty, &sd->capdirty, sizeof(JoinRow *));
    sd->dirty[sd->ndirty++] = x;
}

/* The bucket of key on side s; NULL when it has none and !make. */
static JoinBucket *bucket_of(JoinSide *sd, const uint8_t *key, size_t klen, bool make)
{
    if (!make) {
        void **v = eng_map_find(&sd->map, klen ? (const void *)key : "", klen);
        return v ? *v : NULL;
    }
    bool isnew;
    void **slot = eng_map_upsert(&sd->map, klen ? (const void *)key : "", klen, &isnew);
    if (isnew) {
        JoinBucket *b = ARENA_NEW(&sd->mem, JoinBucket);
        b->key = arena_memdup(&sd->mem, klen ? (const void *)key : "", klen ? klen : 1);
        b->klen = (uint32_t)klen;
        *slot = b;
        sd->nempty++;
    }
    return *slot;
}

/* A new alive row of side s in bucket b (its hash h). */
static JoinRow *row_new(JoinOp *j, JoinSide *sd, JoinBucket *b, uint64_t h, const uint8_t *row,
                        uint32_t len, int64_t ts)
{
    uint32_t si = slot_get(sd, slot_of(j, ts));   /* (may move sd->slots) */
    JoinSlot *sl = &sd->slots[si];
    size_t size = sizeof(JoinRow) + b->klen + len + 1;
    JoinRow *x;
    if (j->slot_us != INT64_MAX) {
        /* an interval join's rows go with their slot: one arena each */
        if (sl->mem == NULL) {
            sl->mem = sl_malloc(sizeof(Arena));
            arena_init(sl->mem, 65536);
            arena_set_account(sl->mem, sd->mem.acct);
        }
        x = arena_alloc(sl->mem, size);
        memset(x, 0, sizeof(JoinRow));
        x->in_arena = true;
    } else {
        x = sl_malloc(size);
        memset(x, 0, sizeof(JoinRow));
    }
    memcpy(x->bytes, b->key, b->klen);
    if (len)
        memcpy(x->bytes + b->klen, row, len);
    x->klen = b->klen;
    x->len = len;
    x->h = h;
    x->ts = ts;
    x->b = b;
    if (b->n == 0)
        sd->nempty--;
    if (b->n == b->cap)
        b->rows = grow(b->rows, &b->cap, sizeof(JoinRow *));
    x->pos = b->n;
    b->rows[b->n++] = x;
    if (!sd->noset)
        set_put(sd, x);
    slot_push(sl, x);
    sd->nlive++;
    return x;
}

/* Row x leaves its bucket and the set: dead (it stays in its slot until
 * the slot lets it go). */
static void row_kill(JoinSide *sd, JoinRow *x)
{
    JoinBucket *b = x->b;
    JoinRow *last = b->rows[--b->n];
    b->rows[x->pos] = last;
    last->pos = x->pos;
    if (b->n == 0)
        sd->nempty++;
    if (!sd->noset)
        set_del(sd, x);
    x->b = NULL;
    x->dead = true;
    sd->nlive--;
    sd->ndead++;
}

static void row_free(JoinRow *x)
{
    if (!x->in_arena)
        sl_free(x);
}

static void mem_free(Arena *mem)
{
    if (mem != NULL) {
        arena_destroy(mem);
        sl_free(mem);
    }
}

/* Frees the rows of this batch's grave and the arenas of the slots it let
 * go (after the checkpoint has read the dirty rows among them). */
static void grave_free(JoinSide *sd)
{
    for (uint32_t i = 0; i < sd->ngrave; i++)
        row_free(sd->grave[i]);
    sd->ngrave = 0;
    for (uint32_t i = 0; i < sd->nold; i++)
        mem_free(sd->old_mems[i]);
    sd->nold = 0;
}

/* Forgets side sd's memory: every row freed, the maps emptied. */
static void side_drop(JoinSide *sd)
{
    for (uint32_t i = 0; i < sd->nslots; i++) {
        for (uint32_t r = 0; r < sd->slots[i].n; r++)
            row_free(sd->slots[i].rows[r]);
        sl_free(sd->slots[i].rows);
        mem_free(sd->slots[i].mem);
    }
    grave_free(sd);
    sl_free(sd->old_mems);
    sd->old_mems = NULL;
    sd->capold = 0;
    for (uint32_t i = 0; i < sd->map.cap; i++)
        if (sd->map.slots[i].key && sd->map.slots[i].value)
            sl_free(((JoinBucket *)sd->map.slots[i].value)->rows);
    eng_map_clear(&sd->map);
    arena_reset(&sd->mem);
    sl_free(sd->set);
    sl_free(sd->slots);
    sl_free(sd->dirty);
    sl_free(sd->grave);
    sd->set = NULL;
    sd->slots = NULL;
    sd->dirty = sd->grave = NULL;
    sd->setcap = sd->setn = sd->settomb = 0;
    sd->nslots = sd->capslots = sd->ndirty = sd->capdirty = sd->ngrave = sd->capgrave = 0;
    sd->nempty = 0;
    sd->nlive = sd->ndead = sd->nstored = 0;
    sd->seq = 0;
    sd->has_del = false;
    sd->cut_dirty = false;
    sd->loaded = false;
}

/* Makes the map anew with the buckets that hold rows (the keys whose rows
 * all went stay in the map until then). */
static void map_rebuild(JoinSide *sd)
{
    Arena mem;
    arena_init(&mem, 16384);
    arena_set_account(&mem, sd->mem.acct);
    EngMap map;
    eng_map_init(&map, &mem);
    for (uint32_t i = 0; i < sd->map.cap; i++) {
        JoinBucket *b = sd->map.slots[i].key ? sd->map.slots[i].value : NULL;
        if (b == NULL)
            continue;
        if (b->n == 0) {
            sl_free(b->rows);
            continue;
        }
        bool isnew;
        void **slot = eng_map_upsert(&map, b->klen ? (const void *)b->key : "", b->klen, &isnew);
        JoinBucket *nb = ARENA_NEW(&mem, JoinBucket);
        *nb = *b;
        nb->key = arena_memdup(&mem, b->klen ? (const void *)b->key : "", b->klen ? b->klen : 1);
        for (uint32_t r = 0; r < nb->n; r++)
            nb->rows[r]->b = nb;
        *slot = nb;
    }
    eng_map_free(&sd->map);
    arena_destroy(&sd->mem);
    sd->mem = mem;
    sd->map = map;
    sd->map.arena = &sd->mem;
    sd->nempty = 0;
}

/* A kept row's bytes in the store (its entry), for the stats. */
static int64_t row_bytes(size_t klen, uint32_t rlen)
{
    return (int64_t)(ENTRY_HEAD + klen + rlen + ENTRY_TAIL);
}

/* ------------------------------------------------------------ the store */

static void chunk_key(const EngOp *op, int s, int64_t start, uint64_t seq, uint8_t *k)
{
    memcpy(k, op->prefix, ENG_PREFIX_LEN);
    k[ENG_PREFIX_LEN] = 'C';
    k[ENG_PREFIX_LEN + 1] = (uint8_t)SIDE_ROWS[s];
    put_time_key(k + ENG_PREFIX_LEN + 2, start);
    put_be64(k + ENG_PREFIX_LEN + 10, seq);
}

static int corrupt(SlError *err)
{
    return sl_error(err, ERRCODE_DATA_CORRUPTED, "a stored join chunk is corrupt");
}

/* Reads side s whole from the store into memory (once after a restore):
 * its cut, then its chunks in key order, each entry overriding the one
 * of the same row before it; rows below the cut are passed over. */
static int side_load(EngOp *op, int s, EngCtx *cx)
{
    JoinOp *j = op->self;
    JoinSide *sd = &j->side[s];
    if (sd->loaded)
        return 0;
    side_drop(sd);
    /* a side kept one key a row (an older version's layout) is not read */
    const char old[2] = {SIDE_ROWS[s], SIDE_IDX[s]};
    for (int i = 0; i < 2; i++) {
        uint8_t p[ENG_PREFIX_LEN + 1];
        memcpy(p, op->prefix, ENG_PREFIX_LEN);
        p[ENG_PREFIX_LEN] = (uint8_t)old[i];
        StateScan *sc = state_scan_open(cx->st, p, sizeof(p));
        const void *k, *v;
        size_t kl, vl;
        bool any = state_scan_next(sc, &k, &kl, &v, &vl);
        if (state_scan_close(sc, cx->err) < 0)
            return -1;
        if (any)
            return sl_error(cx->err, ERRCODE_DATA_CORRUPTED,
                            "a join's state was written one key a row by an older version: "
                            "recreate the continuous query");
    }
    if (eng_bound_get(op, cx, SIDE_CUT[s], "join", &sd->cut) < 0)
        return -1;
    uint8_t p[ENG_PREFIX_LEN + 2];
    memcpy(p, op->prefix, ENG_PREFIX_LEN);
    p[ENG_PREFIX_LEN] = 'C';
    p[ENG_PREFIX_LEN + 1] = (uint8_t)SIDE_ROWS[s];
    StateScan *sc = state_scan_open(cx->st, p, sizeof(p));
    const void *k, *v;
    size_t kl, vl;
    bool bad = false;
    while (!bad && state_scan_next(sc, &k, &kl, &v, &vl)) {
        if (kl != CHUNK_KEY_LEN) {
            bad = true;
            break;
        }
        int64_t start = get_time_key((const uint8_t *)k + ENG_PREFIX_LEN + 2);
        uint64_t seq = get_be64((const uint8_t *)k + ENG_PREFIX_LEN + 10);
        if (seq >= sd->seq)
            sd->seq = seq + 1;
        uint32_t si = slot_get(sd, start);
        const uint8_t *e = v, *end = e + vl;
        while (e < end) {
            if (end - e < ENTRY_HEAD + ENTRY_TAIL) {
                bad = true;
                break;
            }
            uint32_t klen = get_be32(e);
            if ((size_t)(end - e) < ENTRY_HEAD + ENTRY_TAIL + (size_t)klen) {
                bad = true;
                break;
            }
            const uint8_t *key = e + 4;
            uint32_t rlen = get_be32(key + klen);
            const uint8_t *row = key + klen + 4;
            if ((size_t)(end - row) < (size_t)rlen + ENTRY_TAIL) {
                bad = true;
                break;
            }
            const uint8_t *t = row + rlen;
            int64_t w = (int64_t)get_le64(t), deg = (int64_t)get_le64(t + 8);
            int64_t ts = (int64_t)get_le64(t + 16);
            e = t + ENTRY_TAIL;
            sd->slots[si].nentries++;
            sd->nstored++;
            if (j->has_interval && ts < sd->cut)
                continue;
            uint64_t h = sd->noset ? 0 : row_hash(key, klen, row, rlen);
            JoinRow *x = sd->noset ? NULL : set_find(sd, h, key, klen, row, rlen);
            if (x == NULL && w != 0) {
                x = row_new(j, sd, bucket_of(sd, key, klen, true), h, row, rlen, ts);
                si = slot_get(sd, start);   /* (the same slot: ts is in it) */
            }
            if (x == NULL)
                continue;
            x->weight = w;
            x->degree = deg;
            x->stored = true;
            if (w == 0)
                row_kill(sd, x);
        }
    }
    if (state_scan_close(sc, bad ? NULL : cx->err) < 0 || (bad && corrupt(cx->err) < 0)) {
        side_drop(sd);
        return -1;
    }
    sd->loaded = true;
    return 0;
}

static int load_both(EngOp *op, EngCtx *cx)
{
    return side_load(op, 0, cx) < 0 || side_load(op, 1, cx) < 0 ? -1 : 0;
}

/* One entry of row x (weight 0 when dead) into chunk c. */
static void entry_put(StrBuf *c, const JoinRow *x)
{
    uint8_t h[8 + ENTRY_TAIL];
    put_be32(h, x->klen);
    strbuf_append(c, h, 4);
    strbuf_append(c, x->bytes, x->klen);
    put_be32(h, x->len);
    strbuf_append(c, h, 4);
    strbuf_append(c, ROW_OF(x), x->len);
    put_le64(h, (uint64_t)(x->dead ? 0 : x->weight));
    put_le64(h + 8, (uint64_t)x->degree);
    put_le64(h + 16, (uint64_t)x->ts);
    strbuf_append(c, h, ENTRY_TAIL);
}

typedef struct DirtyRef {
    int64_t  start;
    uint32_t i;                     /* its place in the dirty list: order kept */
} DirtyRef;

static int dirty_cmp(const void *a, const void *b)
{
    const DirtyRef *x = a, *y = b;
    if (x->start != y->start)
        return x->start < y->start ? -1 : 1;
    return x->i < y->i ? -1 : x->i > y->i;
}

/* The chunk of slot start: put and counted; c emptied. */
static void chunk_put(EngOp *op, int s, int64_t start, StrBuf *c, int64_t n, EngCtx *cx)
{
    JoinOp *j = op->self;
    JoinSide *sd = &j->side[s];
    if (n == 0)
        return;
    uint8_t k[CHUNK_KEY_LEN];
    chunk_key(op, s, start, sd->seq++, k);
    state_batch_put(cx->wb, k, sizeof(k), c->data, c->len);
    uint32_t si = slot_get(sd, start);
    sd->slots[si].nentries += n;
    sd->nstored += n;
    strbuf_reset(c);
}

/* Writes side s's changed rows (a tombstone for a stored row that died;
 * nothing for an evicted one, nor for one that came and went), a chunk
 * per slot; or, when its stored entries are too many, every chunk deleted
 * and its rows written anew. */
static void side_checkpoint(EngOp *op, int s, EngCtx *cx)
{
    JoinOp *j = op->self;
    JoinSide *sd = &j->side[s];
    uint8_t a[CHUNK_KEY_LEN], b[CHUNK_KEY_LEN];
    if (sd->has_del) {
        chunk_key(op, s, sd->del_from, 0, a);
        chunk_key(op, s, sd->del_to, 0, b);
        state_batch_delete_range(cx->wb, a, sizeof(a), b, sizeof(b));
        sd->has_del = false;
    }
    if (sd->cut_dirty) {
        eng_bound_put(op, cx, SIDE_CUT[s], sd->cut);
        sd->cut_dirty = false;
    }
    StrBuf c;
    strbuf_init(&c);
    if (sd->nstored + sd->ndirty > 2 * sd->nlive + COMPACT_SLACK ||
        sd->ndead > sd->nlive + COMPACT_SLACK) {
        /* rewrite: every chunk of the side deleted, its rows put anew */
        for (uint32_t i = 0; i < sd->ndirty; i++)
            sd->dirty[i]->dirty = false;
        sd->ndirty = 0;
        chunk_key(op, s, INT64_MIN, 0, a);
        memset(b, 0xFF, sizeof(b));
        memcpy(b, a, ENG_PREFIX_LEN + 2);
        state_batch_delete_range(cx->wb, a, sizeof(a), b, sizeof(b));
        sd->nstored = 0;
        for (uint32_t i = 0; i < sd->nslots; i++) {
            JoinSlot *sl = &sd->slots[i];
            sl->nentries = 0;
            uint32_t keep = 0;
            int64_t n = 0;
            for (uint32_t r = 0; r < sl->n; r++) {
                JoinRow *x = sl->rows[r];
                if (x->dead) {
                    row_free(x);
                    continue;
                }
                sl->rows[keep++] = x;
                entry_put(&c, x);
                x->stored = true;
                if (++n, c.len >= CHUNK_BYTES) {
                    chunk_put(op, s, sl->start, &c, n, cx);
                    sl = &sd->slots[i];
                    n = 0;
                }
            }
            sl->n = keep;
            chunk_put(op, s, sl->start, &c, n, cx);
        }
        sd->ndead = 0;
    } else if (sd->ndirty > 0) {
        DirtyRef *refs = ARENA_ARRAY(cx->arena, DirtyRef, sd->ndirty);
        uint32_t nr = 0;
        for (uint32_t i = 0; i < sd->ndirty; i++) {
            JoinRow *x = sd->dirty[i];
            x->dirty = false;
            if (x->evicted || (x->dead && !x->stored))
                continue;
            refs[nr++] = (DirtyRef){slot_of(j, x->ts), i};
        }
        qsort(refs, nr, sizeof(DirtyRef), dirty_cmp);
        int64_t n = 0;
        for (uint32_t i = 0; i < nr; i++) {
            JoinRow *x = sd->dirty[refs[i].i];
            if (n > 0 && (refs[i].start != refs[i - 1].start || c.len >= CHUNK_BYTES)) {
                chunk_put(op, s, refs[i - 1].start, &c, n, cx);
                n = 0;
            }
            entry_put(&c, x);
            x->stored = !x->dead;
            n++;
        }
        if (n > 0)
            chunk_put(op, s, refs[nr - 1].start, &c, n, cx);
        sd->ndirty = 0;
    }
    strbuf_free(&c);
    grave_free(sd);
    if (sd->nempty > 1024 && sd->nempty > sd->map.n / 2)
        map_rebuild(sd);
}

/* ---------------------------------------------------------------- output */

/* A batch of the output's columns with room for cap rows, in the batch's
 * arena, every value NULL until set. */
static Batch *pair_batch(JoinOp *j, EngCtx *cx, uint32_t cap)
{
    Batch *b = batch_alloc(cx->arena, j->out_types, (uint32_t)j->ncols, cap);
    for (int c = 0; c < j->ncols; c++)
        memset(b->cols[c].nulls, 1, cap);
    return b;
}

/* The columns of side s within an output batch. */
static Batch side_view(JoinOp *j, Batch *pair, int s)
{
    Batch v = {pair->nrows, (uint32_t)j->side[s].ncols,
               pair->cols + (s == 0 ? 0 : j->side[0].ncols)};
    return v;
}

static void put_side_row(JoinOp *j, Batch *pair, uint32_t i, int s, const Batch *src, uint32_t r)
{
    Vector *dst = pair->cols + (s == 0 ? 0 : j->side[0].ncols);
    for (int c = 0; c < j->side[s].ncols; c++)
        ex_copy_value(&dst[c], i, &src->cols[c], r, NULL);
}

static int decode_side_row(JoinOp *j, Batch *pair, uint32_t i, int s, const JoinRow *r,
                           EngCtx *cx)
{
    Batch v = side_view(j, pair, s);
    if (row_decode(ROW_OF(r), r->len, &v, i, cx->arena) < 0)
        return sl_error(cx->err, ERRCODE_DATA_CORRUPTED, "a stored join row is corrupt");
    return 0;
}

/* Appends the padded row of a kept row r of side s with weight w. */
static int emit_padded_kept(JoinOp *j, EngDelta *out, int s, const JoinRow *r, int64_t w,
                            EngCtx *cx)
{
    Batch *pair = pair_batch(j, cx, 1);
    pair->nrows = 1;
    if (decode_side_row(j, pair, 0, s, r, cx) < 0)
        return -1;
    eng_delta_append(out, cx->arena, pair, 0, w);
    return 0;
}


/* ------------------------------------------------------------------ push */

/* The join key of row r of b (kv: its key values, evaluated over b) into
 * out; false when the row can never match (a NULL key, a NULL time). */
static bool row_key(JoinOp *j, int s, const Batch *b, const Vector *kv, uint32_t r, StrBuf *out)
{
    JoinSide *sd = &j->side[s];
    for (int k = 0; k < j->spec.nkeys; k++)
        if (vector_is_null(&kv[k], r))
            return false;
    if (sd->tcol >= 0 && vector_is_null(&b->cols[sd->tcol], r))
        return false;
    strbuf_reset(out);
    ex_key_encode(kv, j->spec.nkeys, r, out);
    return true;
}

/* Does a pair with left time lt and right time rt satisfy the interval? */
static bool in_interval(const JoinOp *j, int64_t lt, int64_t rt)
{
    __int128 d = (__int128)lt - rt;
    return d >= j->iv.lo_us && d <= j->iv.hi_us;
}

/* Row r of d (side s, weight w != 0): joins the other side's bucket ob,
 * appends the joined rows (and padded-row changes) to out, updates the
 * other side's degrees; *matched gets the weight of its matches. */
static int probe(EngOp *op, int s, const Batch *src, uint32_t r, int64_t w, int64_t ts,
                 JoinBucket *ob, EngDelta *out, int64_t *matched, EngCtx *cx)
{
    JoinOp *j = op->self;
    int o = 1 - s;
    JoinSide *os = &j->side[o];
    *matched = 0;
    if (ob == NULL || ob->n == 0)
        return 0;
    JoinRow **cand = ARENA_ARRAY(cx->arena, JoinRow *, ob->n);
    uint32_t nc = 0;
    for (uint32_t i = 0; i < ob->n; i++) {
        if (j->has_interval) {
            int64_t lt = s == 0 ? ts : ob->rows[i]->ts, rt = s == 0 ? ob->rows[i]->ts : ts;
            if (!in_interval(j, lt, rt))
                continue;
        }
        cand[nc++] = ob->rows[i];
    }
    if (nc == 0)
        return 0;
    Batch *pair = pair_batch(j, cx, nc);
    pair->nrows = nc;
    for (uint32_t k = 0; k < nc; k++) {
        put_side_row(j, pair, k, s, src, r);
        if (decode_side_row(j, pair, k, o, cand[k], cx) < 0)
            return -1;
    }
    Vector ok = {0};
    if (j->spec.residual != NULL && ex_eval(cx->ecx, j->spec.residual, pair, nc, &ok) < 0)
        return -1;
    bool eager = !j->has_interval && os->outer;
    for (uint32_t k = 0; k < nc; k++) {
        if (j->spec.residual != NULL && (vector_is_null(&ok, k) || !ok.v.b[k]))
            continue;
        JoinRow *y = cand[k];
        eng_delta_append(out, cx->arena, pair, k, w * y->weight);
        *matched += y->weight;
        if (!os->outer)
            continue;
        int64_t before = y->degree;
        y->degree += w;
        mark_dirty(os, y);
        if (eager && before == 0 && y->degree != 0 &&
            emit_padded_kept(j, out, o, y, -y->weight, cx) < 0)
            return -1;
        if (eager && before != 0 && y->degree == 0 &&
            emit_padded_kept(j, out, o, y, y->weight, cx) < 0)
            return -1;
    }
    return 0;
}

/* Adds the row in j->rbuf (side s, key in j->kbuf, weight w, time ts) to
 * its side, which the other side's probe found matched by the weight
 * `matched`.  0, or -1 with cx->err set: an interval join retracting a
 * row it does not keep. */
static int keep(EngOp *op, int s, int64_t ts, int64_t w, int64_t matched, EngCtx *cx)
{
    JoinOp *j = op->self;
    JoinSide *sd = &j->side[s];
    const uint8_t *key = (const uint8_t *)j->kbuf.data, *row = (const uint8_t *)j->rbuf.data;
    size_t klen = j->kbuf.len;
    uint32_t rlen = (uint32_t)j->rbuf.len;
    if (sd->noset && w < 0)
        return sl_error(cx->err, ERRCODE_INTERNAL_ERROR,
                        "join: a retraction reached a side that only inserts");
    uint64_t h = sd->noset ? 0 : row_hash(key, klen, row, rlen);
    JoinRow *x = sd->noset ? NULL : set_find(sd, h, key, klen, row, rlen);
    /* under an interval a row no longer kept was evicted (or never came):
     * its pairs with rows evicted too cannot be retracted */
    if (w < 0 && j->has_interval && (x == NULL || x->weight + w < 0)) {
        sl_error(cx->err, ERRCODE_FEATURE_NOT_SUPPORTED,
                 "an interval join cannot retract a row it does not keep");
        sl_error_detail(cx->err, "The watermark has evicted it, or it never came.");
        sl_error_hint(cx->err, "Retractions on an interval join's input must come "
                      "before the other side's watermark passes the row.");
        return -1;
    }
    if (x == NULL) {
        x = row_new(j, sd, bucket_of(sd, key, klen, true), h, row, rlen, ts);
        x->degree = matched;
        j->stats.st.rows++;
        j->stats.st.bytes += row_bytes(klen, rlen);
        j->stats.dirty = true;
    }
    x->weight += w;
    mark_dirty(sd, x);
    if (x->weight == 0) {
        row_kill(sd, x);
        j->stats.st.rows--;
        j->stats.st.bytes -= row_bytes(klen, rlen);
        j->stats.dirty = true;
    }
    return 0;
}

/* The rows of d on side s: each probes the other side (not the table
 * side of a lookup join) and is kept (not the stream side of one). */
static int join_rows(EngOp *op, int s, const EngDelta *d, EngCtx *cx)
{
    JoinOp *j = op->self;
    JoinSide *sd = &j->side[s];
    bool probes = j->lookup != s, keeps = j->lookup < 0 || j->lookup == s;
    if (load_both(op, cx) < 0)
        return -1;
    EngDelta out;
    eng_delta_init(&out, cx->arena, op->out_cols, op->out_ncols, 16);
    Batch *pad = NULL;
    Vector *kv = ARENA_ARRAY(cx->arena, Vector, j->spec.nkeys + 1);
    for (int k = 0; k < j->spec.nkeys; k++)
        if (ex_eval(cx->ecx, sd->keys[k], &d->rows, d->rows.nrows, &kv[k]) < 0)
            return -1;
    for (uint32_t r = 0; r < d->rows.nrows; r++) {
        int64_t w = d->weights[r];
        if (w == 0)
            continue;
        if (!row_key(j, s, &d->rows, kv, r, &j->kbuf)) {
            /* can never match: its padded row now, nothing kept */
            if (!sd->outer)
                continue;
            if (pad == NULL)
                pad = pair_batch(j, cx, 1);
            pad->nrows = 1;
            put_side_row(j, pad, 0, s, &d->rows, r);
            eng_delta_append(&out, cx->arena, pad, 0, w);
            continue;
        }
        int64_t ts = sd->tcol >= 0 ? d->rows.cols[sd->tcol].v.i64[r] : 0;
        /* the key's bytes stay in kbuf: the other side's bucket, then ours */
        int64_t matched = 0;
        if (probes) {
            JoinBucket *ob = bucket_of(&j->side[1 - s], (const uint8_t *)j->kbuf.data,
                                       j->kbuf.len, false);
            if (probe(op, s, &d->rows, r, w, ts, ob, &out, &matched, cx) < 0)
                return -1;
        }
        if (sd->outer && !j->has_interval && matched == 0) {
            if (pad == NULL)
                pad = pair_batch(j, cx, 1);
            pad->nrows = 1;
            put_side_row(j, pad, 0, s, &d->rows, r);
            eng_delta_append(&out, cx->arena, pad, 0, w);
        }
        if (!keeps)
            continue;
        strbuf_reset(&j->rbuf);
        row_encode(&d->rows, r, &j->rbuf);
        if (keep(op, s, ts, w, matched, cx) < 0)
            return -1;
    }
    return eng_emit(op, &out, cx);
}

static int join_push(EngOp *op, int input, const EngDelta *d, EngCtx *cx)
{
    JoinOp *j = op->self;
    if (j->lookup < 0 || input == j->lookup)
        return join_rows(op, input, d, cx);
    /* a lookup join's stream side: joined at flush, against the table as
     * the batch leaves it */
    for (uint32_t r = 0; r < d->rows.nrows; r++)
        if (d->weights[r] < 0) {
            sl_error(cx->err, ERRCODE_FEATURE_NOT_SUPPORTED,
                     "a stream-table join cannot retract a row of its stream side");
            sl_error_hint(cx->err, "Its rows joined the table as it was when they came; "
                          "join the table's changes both ways with a regular join.");
            return -1;
        }
    if (j->npending == j->cappending) {
        int cap = j->cappending ? j->cappending * 2 : 8;
        const EngDelta **na = ARENA_ARRAY(cx->arena, const EngDelta *, cap);
        if (j->npending)
            memcpy(na, j->pending, sizeof(*na) * (size_t)j->npending);
        j->pending = na;
        j->cappending = cap;
    }
    j->pending[j->npending++] = d;
    return 0;
}

/* ------------------------------------------------------------- watermarks */

static int join_watermark(EngOp *op, int input, int64_t wm_us, EngCtx *cx)
{
    SL_UNUSED(cx);
    JoinOp *j = op->self;
    JoinSide *sd = &j->side[input];
    if (j->lookup >= 0 && input != j->lookup) {
        if (!j->has_fwd || wm_us > j->fwd_wm)
            j->fwd_wm = wm_us;
        j->has_fwd = true;
        return 0;
    }
    if (sd->tcol < 0)
        return 0;
    int64_t v = eng_time_add(wm_us, sd->toff);   /* saturating: the end of a bounded source */
    if (!sd->has_wm || v > sd->wm) {
        sd->wm = v;
        sd->has_wm = true;
    }
    return 0;
}

/* Evicts the rows of side s whose time is below t, walking the slots that
 * start below it: an outer side's rows of degree 0 get their padded rows
 * in out; a slot wholly below t is let go (its chunks deleted at
 * checkpoint, one range), its rows freed then. */
static int evict_side(EngOp *op, int s, int64_t t, EngDelta *out, EngCtx *cx)
{
    JoinOp *j = op->self;
    JoinSide *sd = &j->side[s];
    uint32_t gone = 0;
    for (uint32_t i = 0; i < sd->nslots && sd->slots[i].start < t; i++) {
        JoinSlot *sl = &sd->slots[i];
        uint32_t keep_n = 0;
        for (uint32_t r = 0; r < sl->n; r++) {
            JoinRow *x = sl->rows[r];
            if (x->ts >= t) {
                sl->rows[keep_n++] = x;
                continue;
            }
            if (!x->dead) {
                if (sd->outer && x->degree == 0 &&
                    emit_padded_kept(j, out, s, x, x->weight, cx) < 0)
                    return -1;
                j->stats.st.evicted++;
                j->stats.st.rows--;
                j->stats.st.bytes -= row_bytes(x->klen, x->len);
                j->stats.dirty = true;
                row_kill(sd, x);
            }
            sd->ndead--;
            x->evicted = true;
            if (sd->ngrave == sd->capgrave)
                sd->grave = grow(sd->grave, &sd->capgrave, sizeof(JoinRow *));
            sd->grave[sd->ngrave++] = x;
        }
        sl->n = keep_n;
        if (eng_time_add(sl->start, j->slot_us) <= t)
            gone = i + 1;
    }
    if (gone > 0) {
        int64_t from = sd->slots[0].start, to = eng_time_add(sd->slots[gone - 1].start, j->slot_us);
        sd->del_from = sd->has_del ? SL_MIN(sd->del_from, from) : from;
        sd->del_to = sd->has_del ? SL_MAX(sd->del_to, to) : to;
        sd->has_del = true;
        for (uint32_t i = 0; i < gone; i++) {
            sd->nstored -= sd->slots[i].nentries;
            sl_free(sd->slots[i].rows);
            if (sd->slots[i].mem != NULL) {
                if (sd->nold == sd->capold)
                    sd->old_mems = grow(sd->old_mems, &sd->capold, sizeof(Arena *));
                sd->old_mems[sd->nold++] = sd->slots[i].mem;
            }
        }
        memmove(sd->slots, sd->slots + gone, sizeof(JoinSlot) * (sd->nslots - gone));
        sd->nslots -= gone;
    }
    if (t > sd->cut) {
        sd->cut = t;
        sd->cut_dirty = true;
    }
    return 0;
}

static int join_flush(EngOp *op, EngCtx *cx)
{
    JoinOp *j = op->self;
    if (j->lookup >= 0) {
        int n = j->npending;
        j->npending = j->cappending = 0;     /* the list is the batch's */
        for (int i = 0; i < n; i++)
            if (join_rows(op, 1 - j->lookup, j->pending[i], cx) < 0)
                return -1;
        /* every output row comes from a stream row: its watermark holds */
        return j->has_fwd ? eng_emit_watermark(op, j->fwd_wm, cx) : 0;
    }
    if (!j->has_interval)
        return 0;
    JoinSide *l = &j->side[0], *r = &j->side[1];
    EngDelta out;
    eng_delta_init(&out, cx->arena, op->out_cols, op->out_ncols, 16);
    /* left rows below r.wm + lo, right rows below l.wm - hi */
    for (int s = 0; s < 2; s++) {
        JoinSide *sd = &j->side[s], *other = &j->side[1 - s];
        if (!other->has_wm)
            continue;
        int64_t t = s == 0 ? eng_time_add(other->wm, j->iv.lo_us) : eng_time_add(other->wm, -j->iv.hi_us);
        if (load_both(op, cx) < 0)
            return -1;
        if ((sd->nslots > 0 && sd->slots[0].start < t) || t > sd->cut) {
            if (evict_side(op, s, t, &out, cx) < 0)
                return -1;
        }
    }
    if (eng_emit(op, &out, cx) < 0)
        return -1;
    if (!l->has_wm || !r->has_wm)
        return 0;
    /* A later output row has l.ts >= min(l.wm, r.wm + lo) and r.ts >=
     * min(r.wm, l.wm - hi) (or NULL there, a padded row). */
    int64_t wl = SL_MIN(l->wm, eng_time_add(r->wm, j->iv.lo_us));
    int64_t wr = SL_MIN(r->wm, eng_time_add(l->wm, -j->iv.hi_us));
    return eng_emit_watermark(op, SL_MIN(wl, wr), cx);
}

/* ------------------------------------------------------ checkpoint, restore */

/* The counts (P + 'n': rows, bytes, evicted) go through eng_stats_put. */
static int join_checkpoint(EngOp *op, EngCtx *cx)
{
    JoinOp *j = op->self;
    for (int s = 0; s < 2; s++)
        if (j->side[s].loaded)
            side_checkpoint(op, s, cx);
    eng_stats_flush(op, cx, &j->stats);
    return 0;
}

static int join_restore(EngOp *op, EngCtx *cx)
{
    JoinOp *j = op->self;
    side_drop(&j->side[0]);
    side_drop(&j->side[1]);
    if (eng_stats_load(op, cx, "join", &j->stats) < 0)
        return -1;
    j->npending = j->cappending = 0;
    j->has_fwd = false;
    /* the scheduler forgets watermarks too: the sources send them again */
    for (int s = 0; s < 2; s++)
        j->side[s].has_wm = false;
    return 0;
}

/* ------------------------------------------------------ stats, explain, free */

static void join_stats(const EngOp *op, EngOpStats *out)
{
    const JoinOp *j = op->self;
    *out = j->stats.st;
}

static void join_explain(const EngOp *op, StrBuf *out)
{
    static const char *const names[] = {"inner", "left", "right", "full"};
    const JoinOp *j = op->self;
    strbuf_printf(out, "join (%s) on %d key%s", names[j->spec.type], j->spec.nkeys,
                  j->spec.nkeys == 1 ? "" : "s");
    if (j->spec.residual)
        strbuf_puts(out, " and a residual condition");
    if (j->lookup >= 0)
        strbuf_printf(out, ", a lookup of the %s side's table: unbounded",
                      j->lookup == 0 ? "left" : "right");
    else if (j->has_interval)
        strbuf_printf(out, ", interval %lld..%lld us: evicts by watermark",
                      (long long)j->iv.lo_us, (long long)j->iv.hi_us);
    else
        strbuf_puts(out, ": unbounded");
}

static void join_free(EngOp *op)
{
    JoinOp *j = op->self;
    if (j == NULL)
        return;
    for (int s = 0; s < 2; s++) {
        side_drop(&j->side[s]);
        eng_map_free(&j->side[s].map);
        arena_destroy(&j->side[s].mem);
    }
    strbuf_free(&j->kbuf);
    strbuf_free(&j->rbuf);
}

static const EngOpVt join_vt = {
    .kind = "join",
    .push = join_push,
    .watermark = join_watermark,
    .flush = join_flush,
    .checkpoint = join_checkpoint,
    .restore = join_restore,
    .stats = join_stats,
    .explain = join_explain,
    .free = join_free,
};

/* ------------------------------------------------------------ constructor */

static bool time_type(SlTypeId t)
{
    return t == TYPE_TIMESTAMP || t == TYPE_TIMESTAMPTZ;
}

/* The offset of column col among an edge's event-time columns; false if
 * it is not one. */
static bool edge_offset(const EngEdgeTime *et, int col, int64_t *off)
{
    for (int i = 0; et != NULL && i < et->n; i++)
        if (et->cols[i].col == col) {
            *off = et->cols[i].offset_us;
            return true;
        }
    return false;
}

static int check_spec(const EngJoinSpec *spec, const ColumnDesc *lcols, int nl,
                      const EngEdgeTime *ltime, const ColumnDesc *rcols, int nr,
                      const EngEdgeTime *rtime, SlError *err)
{
    for (int k = 0; k < spec->nkeys; k++) {
        SlTypeId a = spec->lkeys[k]->type.id, b = spec->rkeys[k]->type.id;
        if (a != b)
            return sl_error(err, ERRCODE_DATATYPE_MISMATCH, "join key %d compares %s with %s",
                            k + 1, type_name(a), type_name(b));
    }
    if (spec->lookup >= 0) {
        int t = spec->lookup;
        if (spec->lookup > 1 || spec->interval != NULL || spec->type == ENG_JOIN_FULL ||
            spec->type == (t == 0 ? ENG_JOIN_LEFT : ENG_JOIN_RIGHT))
            return sl_error(err, ERRCODE_FEATURE_NOT_SUPPORTED,
                            "a stream-table join cannot keep the table's unmatched rows");
    }
    const EngJoinInterval *iv = spec->interval;
    if (iv == NULL)
        return 0;
    int64_t off;
    if (iv->lcol < 0 || iv->lcol >= nl || iv->rcol < 0 || iv->rcol >= nr ||
        !time_type(lcols[iv->lcol].type.id) || !time_type(rcols[iv->rcol].type.id))
        return sl_error(err, ERRCODE_FEATURE_NOT_SUPPORTED,
                        "an interval join needs a timestamp column on each side");
    if (!edge_offset(ltime, iv->lcol, &off) || !edge_offset(rtime, iv->rcol, &off))
        return sl_error(err, ERRCODE_FEATURE_NOT_SUPPORTED,
                        "an interval join needs a watermark on both sides' time columns");
    if (iv->lo_us > iv->hi_us)
        return sl_error(err, ERRCODE_FEATURE_NOT_SUPPORTED,
                        "an interval join's lower bound is above its upper bound");
    return 0;
}

EngOp *eng_op_join_new(const EngJoinSpec *spec,
                       const ColumnDesc *lcols, int nl, const EngEdgeTime *ltime,
                       const ColumnDesc *rcols, int nr, const EngEdgeTime *rtime,
                       SlError *err)
{
    if (check_spec(spec, lcols, nl, ltime, rcols, nr, rtime, err) < 0)
        return NULL;
    EngOp *op = eng_op_new(&join_vt, 2, sizeof(JoinOp));
    JoinOp *j = op->self;
    Arena *a = &op->arena;
    j->spec = *spec;
    j->lookup = spec->lookup;
    j->ncols = nl + nr;
    strbuf_init(&j->kbuf);
    strbuf_init(&j->rbuf);
    ColumnDesc *out = ARENA_ARRAY(a, ColumnDesc, j->ncols > 0 ? j->ncols : 1);
    j->out_types = ARENA_ARRAY(a, SlType, j->ncols > 0 ? j->ncols : 1);
    for (int c = 0; c < nl; c++)
        out[c] = lcols[c];
    for (int c = 0; c < nr; c++)
        out[nl + c] = rcols[c];
    for (int c = 0; c < j->ncols; c++)
        j->out_types[c] = out[c].type;
    const ColumnDesc *cols[2] = {lcols, rcols};
    const int ncols[2] = {nl, nr};
    const EngEdgeTime *times[2] = {ltime, rtime};
    Expr *const *keys[2] = {spec->lkeys, spec->rkeys};
    for (int s = 0; s < 2; s++) {
        JoinSide *sd = &j->side[s];
        sd->ncols = ncols[s];
        sd->types = j->out_types + (s == 0 ? 0 : nl);
        sd->keys = keys[s];
        sd->outer = spec->type == ENG_JOIN_FULL ||
                    spec->type == (s == 0 ? ENG_JOIN_LEFT : ENG_JOIN_RIGHT);
        sd->noset = spec->inserts_only[s] && !sd->outer;
        sd->tcol = -1;
        sd->cut = INT64_MIN;
        arena_init(&sd->mem, 16384);
        eng_map_init(&sd->map, &sd->mem);
        op->in_cols[s] = cols[s];
        op->in_ncols[s] = ncols[s];
        if (times[s] != NULL)
            op->in_time[s] = *times[s];
    }
    op->out_cols = out;
    op->out_ncols = j->ncols;
    if (spec->interval != NULL) {
        j->has_interval = true;
        j->iv = *spec->interval;
        j->spec.interval = &j->iv;
        j->side[0].tcol = j->iv.lcol;
        j->side[1].tcol = j->iv.rcol;
        edge_offset(ltime, j->iv.lcol, &j->side[0].toff);
        edge_offset(rtime, j->iv.rcol, &j->side[1].toff);
        /* the output's watermark bounds the two time columns */
        op->out_time.n = 2;
        op->out_time.cols[0].col = j->iv.lcol;
        op->out_time.cols[1].col = nl + j->iv.rcol;
        op->bound = ENG_BOUND_WATERMARK;
        /* 64 slots over the interval, at least 1 ms each */
        __int128 width = ((__int128)j->iv.hi_us - j->iv.lo_us) / 64;
        j->slot_us = width < 1000 ? 1000 : width > INT64_MAX / 4 ? INT64_MAX / 4 : (int64_t)width;
    } else {
        op->bound = ENG_BOUND_UNBOUNDED;
        j->slot_us = INT64_MAX;
    }
    if (spec->lookup >= 0 && times[1 - spec->lookup] != NULL) {
        /* the stream side's event-time columns, where the output has them */
        op->out_time = *times[1 - spec->lookup];
        for (int i = 0; spec->lookup == 0 && i < op->out_time.n; i++)
            op->out_time.cols[i].col += nl;
    }
    return op;
}

/* ------------------------------------------------------- from a plan node */

/* e as a column plus a constant: true with *col and *off (microseconds).
 * A constant is an interval without months (a month has no fixed length);
 * *days tells whether one had days, 24 hours only without a time zone. */
static bool time_term(const Expr *e, int *col, int64_t *off, bool *days)
{
    if (e->kind == EXPR_COLUMN) {
        *col = e->index;
        *off = 0;
        *days = false;
        return true;
    }
    if (e->kind != EXPR_FUNC || e->fn == NULL || !e->fn->is_op || e->nargs != 2)
        return false;
    bool plus = strcmp(e->fn->name, "+") == 0;
    if (!plus && strcmp(e->fn->name, "-") != 0)
        return false;
    const Expr *t = e->args[0], *c = e->args[1];
    if (plus && t->kind == EXPR_CONST) {
        t = e->args[1];
        c = e->args[0];
    }
    if (c->kind != EXPR_CONST || c->type.id != TYPE_INTERVAL || vector_is_null(&c->value, 0))
        return false;
    const SlInterval *iv = &c->value.v.iv[0];
    int64_t day_us, us;
    if (iv->months != 0 ||
        __builtin_mul_overflow((int64_t)iv->days, INT64_C(86400000000), &day_us) ||
        __builtin_add_overflow(iv->usec, day_us, &us) || us == INT64_MIN ||
        !time_term(t, col, off, days))
        return false;
    *days = *days || iv->days != 0;
    *off = eng_time_add(*off, plus ? us : -us);
    return true;
}

/* Folds the conjuncts of e that compare a left time column with a right
 * one (the first such pair found) into lo <= l.ts - r.ts <= hi. */
static void bound_from(const Expr *e, const Plan *p, EngJoinInterval *iv)
{
    if (e->kind == EXPR_AND) {
        for (int i = 0; i < e->nargs; i++)
            bound_from(e->args[i], p, iv);
        return;
    }
    if (e->kind != EXPR_FUNC || e->fn == NULL || !e->fn->is_op || e->nargs != 2)
        return;
    const char *op = e->fn->name;
    bool eq = strcmp(op, "=") == 0;
    bool ge = eq || strcmp(op, ">=") == 0 || strcmp(op, ">") == 0;
    bool le = eq || strcmp(op, "<=") == 0 || strcmp(op, "<") == 0;
    int ca, cb, nl = p->child->ncols;
    int64_t oa, ob;
    bool da, db;
    if ((!ge && !le) || !time_term(e->args[0], &ca, &oa, &da) ||
        !time_term(e->args[1], &cb, &ob, &db))
        return;
    /* as "left term OP right term" */
    if (ca >= nl && cb < nl) {
        int ct = ca; ca = cb; cb = ct;
        int64_t ot = oa; oa = ob; ob = ot;
        bool g = ge; ge = le; le = g;
        bool dt = da; da = db; db = dt;
    } else if (!(ca < nl && cb >= nl)) {
        return;
    }
    cb -= nl;
    SlTypeId lt = p->child->cols[ca].type.id, rt = p->right->cols[cb].type.id;
    if (lt != rt || !time_type(lt) || ((da || db) && lt != TYPE_TIMESTAMP))
        return;
    if (iv->lcol < 0) {
        iv->lcol = ca;
        iv->rcol = cb;
    } else if (iv->lcol != ca || iv->rcol != cb) {
        return;     /* another pair of columns: the residual checks it */
    }
    /* l + oa OP r + ob  <=>  l - r OP ob - oa (strict ones kept loose: the
     * residual, which keeps every conjunct, decides) */
    int64_t d = eng_time_add(ob, oa == INT64_MIN ? INT64_MAX : -oa);
    if (ge && d > iv->lo_us)
        iv->lo_us = d;
    if (le && d < iv->hi_us)
        iv->hi_us = d;
}

EngOp *eng_op_join_plan(const Plan *p, const EngEdgeTime *ltime, const EngEdgeTime *rtime,
                        int lookup, SlError *err)
{
    static const EngJoinType types[] = {
        [JOIN_INNER] = ENG_JOIN_INNER, [JOIN_LEFT] = ENG_JOIN_LEFT,
        [JOIN_RIGHT] = ENG_JOIN_RIGHT, [JOIN_FULL] = ENG_JOIN_FULL,
        [JOIN_CROSS] = ENG_JOIN_INNER,
    };
    EngJoinSpec spec = {
        .type = types[p->u.join.type],
        .nkeys = p->u.join.nkeys,
        .lkeys = p->u.join.lkeys,
        .rkeys = p->u.join.rkeys,
        .residual = p->u.join.residual,
        .lookup = lookup,
        .inserts_only = {eng_plan_inserts_only(p->child), eng_plan_inserts_only(p->right)},
    };
    EngJoinInterval iv = {-1, -1, INT64_MIN, INT64_MAX};
    int64_t off;
    if (p->u.join.residual != NULL)
        bound_from(p->u.join.residual, p, &iv);
    /* an equi-key of two time columns: l.ts - r.ts = 0 */
    for (int k = 0; iv.lcol < 0 && k < spec.nkeys; k++) {
        const Expr *a = spec.lkeys[k], *b = spec.rkeys[k];
        if (a->kind == EXPR_COLUMN && b->kind == EXPR_COLUMN && time_type(a->type.id) &&
            edge_offset(ltime, a->index, &off) && edge_offset(rtime, b->index, &off))
            iv = (EngJoinInterval){a->index, b->index, 0, 0};
    }
    if (lookup < 0 && iv.lcol >= 0 && iv.lo_us != INT64_MIN && iv.hi_us != INT64_MAX &&
        edge_offset(ltime, iv.lcol, &off) && edge_offset(rtime, iv.rcol, &off))
        spec.interval = &iv;
    return eng_op_join_new(&spec, p->child->cols, p->child->ncols, ltime, p->right->cols,
                           p->right->ncols, rtime, err);
}
