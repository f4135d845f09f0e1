/*
 * keymap.c -- the byte-key hash map of keymap.h: open addressing, linear
 * probing, ex_hash (exec.h) of the key bytes.
 */
#include "keymap.h"
#include "sluice/common.h"
#include "sluice/exec.h"

#include <string.h>

void eng_map_init(EngMap *m, Arena *a)
{
    m->arena = a;
    m->cap = 16;
    m->n = 0;
    m->slots = sl_calloc(m->cap, sizeof(EngMapSlot));
}

void eng_map_free(EngMap *m)
{
    sl_free(m->slots);
    m->slots = NULL;
    m->cap = m->n = 0;
}

void eng_map_clear(EngMap *m)
{
    memset(m->slots, 0, sizeof(EngMapSlot) * m->cap);
    m->n = 0;
}

static EngMapSlot *probe(const EngMap *m, const void *key, size_t klen, uint64_t h)
{
    uint32_t mask = m->cap - 1;
    for (uint32_t i = (uint32_t)h & mask;; i = (i + 1) & mask) {
        EngMapSlot *s = &m->slots[i];
        if (s->key == NULL ||
            (s->hash == h && s->klen == klen && (klen == 0 || memcmp(s->key, key, klen) == 0)))
            return s;
    }
}

static void grow(EngMap *m)
{
    EngMapSlot *old = m->slots;
    uint32_t ocap = m->cap;
    m->cap *= 2;
    m->slots = sl_calloc(m->cap, sizeof(EngMapSlot));
    for (uint32_t i = 0; i < ocap; i++)
        if (old[i].key != NULL)
            *probe(m, old[i].key, old[i].klen, old[i].hash) = old[i];
    sl_free(old);
}

void **eng_map_find(const EngMap *m, const void *key, size_t klen)
{
    if (key == NULL)
        key = "";
    EngMapSlot *s = probe(m, key, klen, ex_hash(key, klen));
    return s->key ? &s->value : NULL;
}

void **eng_map_upsert(EngMap *m, const void *key, size_t klen, bool *isnew)
{
    if (key == NULL)
        key = "";
    if ((m->n + 1) * 4 > m->cap * 3)
        grow(m);
    uint64_t h = ex_hash(key, klen);
    EngMapSlot *s = probe(m, key, klen, h);
    *isnew = s->key == NULL;
    if (*isnew) {
        /* an empty key still needs a non-NULL pointer */
        s->key = arena_memdup(m->arena, key, klen ? klen : 1);
        s->klen = (uint32_t)klen;
        s->hash = h;
        s->value = NULL;
        m->n++;
    }
    return &s->value;
}
