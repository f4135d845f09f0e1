/*
 * hashtab.c -- an open-addressing hash table from byte keys to dense ids.
 *
 *   ex_ht_new, ex_ht_new_small, ex_ht_free, ex_ht_insert, ex_ht_find, ex_ht_count
 *
 * Grouping, DISTINCT, joins and set operations map each distinct key
 * (ex_key_encode's bytes) to 0, 1, 2, ... in order of first appearance, and
 * keep what they know about the key in arrays indexed by that id.  Linear
 * probing over a power-of-two slot array kept at most half full; a slot
 * holds the key's hash, so most probes compare no bytes.  Keys are copied
 * into the caller's arena; the slot array is on the heap (ex_ht_free), or
 * in the arena too for the many small tables of DISTINCT aggregates.
 */
#include "exec/op.h"

typedef struct Slot {
    uint64_t       hash;    /* 0: empty (real hashes are forced odd) */
    const uint8_t *key;
    uint32_t       len;
    uint32_t       id;
} Slot;

struct ExHashTab {
    Arena   *arena;
    Slot    *slots;
    uint64_t mask;
    uint32_t count;
    bool     in_arena;  /* slots in the arena too (small tables) */
};

static ExHashTab *ht_new(Arena *a, bool in_arena, uint64_t n)
{
    ExHashTab *ht = ARENA_NEW(a, ExHashTab);
    ht->arena = a;
    ht->mask = n - 1;
    ht->in_arena = in_arena;
    ht->slots = in_arena ? arena_zalloc(a, sizeof(Slot) * n) : sl_calloc((size_t)n, sizeof(Slot));
    return ht;
}

ExHashTab *ex_ht_new(Arena *a)
{
    return ht_new(a, false, 64);
}

ExHashTab *ex_ht_new_small(Arena *a)
{
    return ht_new(a, true, 8);
}

void ex_ht_free(ExHashTab *ht)
{
    if (ht != NULL && !ht->in_arena) {
        sl_free(ht->slots);
        ht->slots = NULL;
    }
}

static void grow(ExHashTab *ht)
{
    uint64_t n = (ht->mask + 1) * 2;
    Slot *s = ht->in_arena ? arena_zalloc(ht->arena, sizeof(Slot) * n)
                           : sl_calloc((size_t)n, sizeof(Slot));
    for (uint64_t i = 0; i <= ht->mask; i++) {
        Slot *o = &ht->slots[i];
        if (o->hash == 0)
            continue;
        uint64_t j = o->hash & (n - 1);
        while (s[j].hash != 0)
            j = (j + 1) & (n - 1);
        s[j] = *o;
    }
    if (!ht->in_arena)
        sl_free(ht->slots);
    ht->slots = s;
    ht->mask = n - 1;
}

static uint64_t key_hash(const void *key, uint32_t len)
{
    return ex_hash(key, len) | 1;
}

uint32_t ex_ht_insert(ExHashTab *ht, const void *key, uint32_t len, bool *inserted)
{
    uint64_t h = key_hash(key, len);
    uint64_t i = h & ht->mask;
    for (;;) {
        Slot *s = &ht->slots[i];
        if (s->hash == 0)
            break;
        if (s->hash == h && s->len == len && memcmp(s->key, key, len) == 0) {
            *inserted = false;
            return s->id;
        }
        i = (i + 1) & ht->mask;
    }
    Slot *s = &ht->slots[i];
    s->hash = h;
    s->len = len;
    s->key = len ? arena_memdup(ht->arena, key, len) : (const uint8_t *)"";
    s->id = ht->count++;
    *inserted = true;
    uint32_t id = s->id;
    if ((uint64_t)ht->count * 2 > ht->mask)
        grow(ht);
    return id;
}

int64_t ex_ht_find(const ExHashTab *ht, const void *key, uint32_t len)
{
    uint64_t h = key_hash(key, len);
    uint64_t i = h & ht->mask;
    for (;;) {
        const Slot *s = &ht->slots[i];
        if (s->hash == 0)
            return -1;
        if (s->hash == h && s->len == len && memcmp(s->key, key, len) == 0)
            return s->id;
        i = (i + 1) & ht->mask;
    }
}

uint32_t ex_ht_count(const ExHashTab *ht)
{
    return ht->count;
}
