/*
 * txbuf.c -- the writes of one transaction block, held until COMMIT (see
 * txbuf.h).
 *
 *   state_tx_new, state_tx_free, state_tx_empty, state_tx_bytes,
 *   state_tx_check_budget
 *   state_tx_lookup, state_tx_write, state_tx_range
 *   state_tx_append, state_tx_append_chunk, state_tx_appends_to, state_tx_relation
 *   state_tx_commit
 *
 * Keeps: the table keys the block wrote, in the order first written, with
 * an open-addressing index over them (FNV-1a of the key); per key the
 * block's value (or a delete) and the committed value the key had when the
 * block first wrote it; the relations written (referenced until the
 * buffer is freed); per stream the chunks appended.  Nothing here touches
 * RocksDB directly: reads go through state_get, the write through
 * stream_append_many with the table rows in its batch.
 */
#include "sluice/relstore.h"
#include "sluice/txbuf.h"

#include <stdlib.h>

typedef struct TxEntry {
    char    *key;
    char    *val;           /* NULL: deleted by the block */
    char    *base;          /* committed value at the first write; NULL: absent */
    uint32_t klen, vlen, blen;
} TxEntry;

typedef struct TxStream {
    const CatRelation *rel;
    StrBuf            *chunks;
    int                nchunks, cap;
} TxStream;

struct StateTx {
    TxEntry            *ents;
    uint32_t            n, cap;
    uint32_t           *slots;      /* entry index + 1; 0: empty */
    uint32_t            nslots;     /* a power of two, at least 2n */
    const CatRelation **rels;       /* referenced */
    int                 nrels, caprels;
    TxStream           *streams;
    int                 nstreams, capstreams;
    size_t              bytes;
    uint64_t            writes;     /* puts, deletes and appends so far */
};

StateTx *state_tx_new(void)
{
    return sl_calloc(1, sizeof(StateTx));
}

void state_tx_free(StateTx *tx)
{
    if (tx == NULL)
        return;
    for (uint32_t i = 0; i < tx->n; i++) {
        sl_free(tx->ents[i].key);
        sl_free(tx->ents[i].val);
        sl_free(tx->ents[i].base);
    }
    for (int s = 0; s < tx->nstreams; s++) {
        for (int i = 0; i < tx->streams[s].nchunks; i++)
            strbuf_free(&tx->streams[s].chunks[i]);
        sl_free(tx->streams[s].chunks);
    }
    for (int r = 0; r < tx->nrels; r++)
        cat_relation_unref(tx->rels[r]);
    sl_free(tx->ents);
    sl_free(tx->slots);
    sl_free(tx->rels);
    sl_free(tx->streams);
    sl_free(tx);
}

bool state_tx_empty(const StateTx *tx)
{
    return tx == NULL || (tx->n == 0 && tx->nstreams == 0);
}

uint64_t state_tx_writes(const StateTx *tx)
{
    return tx != NULL ? tx->writes : 0;
}

size_t state_tx_bytes(const StateTx *tx)
{
    return tx == NULL ? 0 : tx->bytes;
}

int state_tx_check_budget(const StateTx *tx, size_t limit, SlError *err)
{
    size_t held = state_tx_bytes(tx);
    if (limit == 0 || held <= limit)
        return 0;
    sl_error(err, ERRCODE_OUT_OF_MEMORY,
             "the transaction block's buffered writes (%zu bytes) exceed statement_mem "
             "(%zu bytes)", held, limit);
    sl_error_hint(err, "Commit in smaller transaction blocks, or raise statement_mem.");
    return -1;
}

static uint64_t key_hash(const void *key, size_t klen)
{
    const uint8_t *p = key;
    uint64_t h = 14695981039346656037ULL;
    for (size_t i = 0; i < klen; i++)
        h = (h ^ p[i]) * 1099511628211ULL;
    return h;
}

/* The slot that holds key, or the empty slot where it would go. */
static uint32_t *slot_of(const StateTx *tx, const void *key, size_t klen)
{
    uint32_t mask = tx->nslots - 1;
    for (uint32_t i = (uint32_t)key_hash(key, klen) & mask;; i = (i + 1) & mask) {
        uint32_t *s = &tx->slots[i];
        if (*s == 0)
            return s;
        const TxEntry *e = &tx->ents[*s - 1];
        if (e->klen == klen && memcmp(e->key, key, klen) == 0)
            return s;
    }
}

static TxEntry *find(const StateTx *tx, const void *key, size_t klen)
{
    if (tx == NULL || tx->nslots == 0)
        return NULL;
    uint32_t s = *slot_of(tx, key, klen);
    return s == 0 ? NULL : &tx->ents[s - 1];
}

static void grow_index(StateTx *tx)
{
    uint32_t n = tx->nslots ? tx->nslots * 2 : 64;
    sl_free(tx->slots);
    tx->slots = sl_calloc(n, sizeof(uint32_t));
    tx->nslots = n;
    for (uint32_t i = 0; i < tx->n; i++)
        *slot_of(tx, tx->ents[i].key, tx->ents[i].klen) = i + 1;
}

int state_tx_lookup(const StateTx *tx, const void *key, size_t klen, const void **val,
                    size_t *vlen)
{
    const TxEntry *e = find(tx, key, klen);
    if (e == NULL)
        return -1;
    *val = e->val;
    *vlen = e->vlen;
    return e->val != NULL ? 1 : 0;
}

static char *dup_bytes(const void *p, size_t n)
{
    char *d = sl_malloc(n ? n : 1);
    if (n)
        memcpy(d, p, n);
    return d;
}

static void keep_rel(StateTx *tx, const CatRelation *rel)
{
    for (int r = 0; r < tx->nrels; r++)
        if (tx->rels[r] == rel)
            return;
    if (tx->nrels == tx->caprels) {
        tx->caprels = tx->caprels ? tx->caprels * 2 : 8;
        tx->rels = sl_realloc(tx->rels, sizeof(*tx->rels) * (size_t)tx->caprels);
    }
    cat_relation_ref(rel);
    tx->rels[tx->nrels++] = rel;
}

int state_tx_write(StateTx *tx, StateStore *st, const CatRelation *rel, const void *key,
                   size_t klen, const void *val, size_t vlen, SlError *err)
{
    TxEntry *e = find(tx, key, klen);
    if (e == NULL) {
        Arena a;
        arena_init(&a, 4096);
        void *base;
        size_t blen;
        int rc = state_get(st, key, klen, &a, &base, &blen, err);
        if (rc < 0) {
            arena_destroy(&a);
            return -1;
        }
        if (2 * (tx->n + 1) > tx->nslots)
            grow_index(tx);
        if (tx->n == tx->cap) {
            tx->cap = tx->cap ? tx->cap * 2 : 64;
            tx->ents = sl_realloc(tx->ents, sizeof(TxEntry) * tx->cap);
        }
        e = &tx->ents[tx->n++];
        memset(e, 0, sizeof(*e));
        e->key = dup_bytes(key, klen);
        e->klen = (uint32_t)klen;
        if (rc == 1) {
            e->base = dup_bytes(base, blen);
            e->blen = (uint32_t)blen;
        }
        *slot_of(tx, key, klen) = tx->n;
        tx->bytes += sizeof(TxEntry) + 2 * sizeof(uint32_t) + klen + e->blen;
        arena_destroy(&a);
        keep_rel(tx, rel);
    }
    tx->writes++;
    tx->bytes -= e->vlen;
    sl_free(e->val);
    e->val = val != NULL ? dup_bytes(val, vlen) : NULL;
    e->vlen = val != NULL ? (uint32_t)vlen : 0;
    tx->bytes += e->vlen;
    return 0;
}

static int pair_cmp(const void *a, const void *b)
{
    const StateTxPair *x = a, *y = b;
    uint32_t n = x->key.len < y->key.len ? x->key.len : y->key.len;
    int c = memcmp(x->key.ptr, y->key.ptr, n);
    if (c != 0)
        return c;
    return x->key.len < y->key.len ? -1 : x->key.len > y->key.len;
}

uint32_t state_tx_range(const StateTx *tx, const void *prefix, size_t plen, Arena *a,
                        StateTxPair **out)
{
    *out = NULL;
    if (tx == NULL || tx->n == 0)
        return 0;
    uint32_t k = 0;
    for (uint32_t i = 0; i < tx->n; i++)
        if (tx->ents[i].klen >= plen && memcmp(tx->ents[i].key, prefix, plen) == 0)
            k++;
    if (k == 0)
        return 0;
    StateTxPair *p = ARENA_ARRAY(a, StateTxPair, k);
    k = 0;
    for (uint32_t i = 0; i < tx->n; i++) {
        const TxEntry *e = &tx->ents[i];
        if (e->klen < plen || memcmp(e->key, prefix, plen) != 0)
            continue;
        p[k].key.ptr = arena_memdup(a, e->key, e->klen);
        p[k].key.len = e->klen;
        p[k].val.ptr = e->val != NULL ? arena_memdup(a, e->val, e->vlen ? e->vlen : 1) : NULL;
        p[k].val.len = e->vlen;
        k++;
    }
    qsort(p, k, sizeof(StateTxPair), pair_cmp);
    *out = p;
    return k;
}

static TxStream *stream_of(const StateTx *tx, const CatRelation *rel)
{
    for (int s = 0; tx != NULL && s < tx->nstreams; s++)
        if (tx->streams[s].rel == rel)
            return &tx->streams[s];
    return NULL;
}

void state_tx_append(StateTx *tx, const CatRelation *rel, const Batch *b)
{
    StrBuf c;
    strbuf_init(&c);
    stream_chunk_add(&c, b);
    state_tx_append_chunk(tx, rel, &c);
}

void state_tx_append_chunk(StateTx *tx, const CatRelation *rel, StrBuf *chunk)
{
    TxStream *s = stream_of(tx, rel);
    if (s == NULL) {
        if (tx->nstreams == tx->capstreams) {
            tx->capstreams = tx->capstreams ? tx->capstreams * 2 : 4;
            tx->streams = sl_realloc(tx->streams, sizeof(TxStream) * (size_t)tx->capstreams);
        }
        s = &tx->streams[tx->nstreams++];
        memset(s, 0, sizeof(*s));
        s->rel = rel;
        keep_rel(tx, rel);
    }
    if (s->nchunks == s->cap) {
        s->cap = s->cap ? s->cap * 2 : 4;
        s->chunks = sl_realloc(s->chunks, sizeof(StrBuf) * (size_t)s->cap);
    }
    tx->writes++;
    StrBuf *c = &s->chunks[s->nchunks++];
    *c = *chunk;
    strbuf_init(chunk);
    tx->bytes += sizeof(StrBuf) + c->cap;
}

bool state_tx_appends_to(const StateTx *tx, const CatRelation *rel)
{
    return stream_of(tx, rel) != NULL;
}

const CatRelation *state_tx_relation(const StateTx *tx, int i)
{
    return tx != NULL && i >= 0 && i < tx->nrels ? tx->rels[i] : NULL;
}

/* The relation a key belongs to: 'T' + its oid (relstore.h). */
static const CatRelation *rel_of_key(const StateTx *tx, const TxEntry *e)
{
    for (int r = 0; r < tx->nrels; r++) {
        StrBuf p;
        strbuf_init(&p);
        tbl_key_prefix(tx->rels[r], &p);
        bool match = e->klen >= p.len && memcmp(e->key, p.data, p.len) == 0;
        strbuf_free(&p);
        if (match)
            return tx->rels[r];
    }
    return NULL;
}

int state_tx_commit(StateTx *tx, StateStore *st, StateTxConflict *conf, SlError *err)
{
    if (state_tx_empty(tx))
        return 0;
    Arena a;
    arena_init(&a, 16 * 1024);
    for (uint32_t i = 0; i < tx->n; i++) {
        const TxEntry *e = &tx->ents[i];
        if (e->val == NULL && e->base == NULL)
            continue;       /* inserted and deleted again: nothing to write */
        void *cur;
        size_t clen;
        int rc = state_get(st, e->key, e->klen, &a, &cur, &clen, err);
        if (rc < 0) {
            arena_destroy(&a);
            return -1;
        }
        bool same = rc == 0 ? e->base == NULL
                            : e->base != NULL && clen == e->blen && memcmp(cur, e->base, clen) == 0;
        if (!same) {
            arena_destroy(&a);
            conf->rel = rel_of_key(tx, e);
            /* a row the block inserted that another session inserted too */
            conf->row = e->base == NULL && e->val != NULL ? e->val : NULL;
            conf->rowlen = e->vlen;
            return -2;
        }
    }
    arena_destroy(&a);
    StateBatch *wb = state_batch_new();
    for (uint32_t i = 0; i < tx->n; i++) {
        const TxEntry *e = &tx->ents[i];
        if (e->val != NULL)
            state_batch_put(wb, e->key, e->klen, e->val, e->vlen);
        else if (e->base != NULL)
            state_batch_delete(wb, e->key, e->klen);
    }
    int rc;
    if (tx->nstreams > 0) {
        StreamAppend *apps = sl_calloc((size_t)tx->nstreams, sizeof(StreamAppend));
        for (int s = 0; s < tx->nstreams; s++)
            apps[s] = (StreamAppend){tx->streams[s].rel, NULL, tx->streams[s].nchunks,
                                     tx->streams[s].chunks, 0};
        rc = stream_append_many(st, apps, tx->nstreams, tx->n > 0 ? wb : NULL, err);
        sl_free(apps);
    } else {
        rc = state_batch_commit(st, wb, true, err);
    }
    state_batch_free(wb);
    return rc < 0 ? -1 : 0;
}
