/*
 * keymap.h -- a hash map from byte strings to pointers, for the operators
 * of this folder (a delta's consolidation, an aggregate's groups).
 *
 *   eng_map_init, eng_map_free   a map whose keys are copied into arena a
 *   eng_map_find                 the value slot of a key, or NULL
 *   eng_map_upsert               the value slot of a key, made (NULL) if new
 *   eng_map_clear                forget every key (the arena is the caller's)
 *
 * Open addressing with linear probing; the slot table is on the heap
 * (grown at 3/4 full), the keys in the caller's arena, so a map lives as
 * long as that arena.  Iterate with `for (i < m->cap) if (m->slots[i].key)`.
 */
#ifndef SLUICE_ENGINE_KEYMAP_H
#define SLUICE_ENGINE_KEYMAP_H

#include "sluice/arena.h"

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

typedef struct EngMapSlot {
    const uint8_t *key;         /* NULL: empty */
    uint32_t       klen;
    uint64_t       hash;
    void          *value;
} EngMapSlot;

typedef struct EngMap {
    Arena      *arena;
    EngMapSlot *slots;
    uint32_t    cap;            /* a power of two */
    uint32_t    n;
} EngMap;

void   eng_map_init(EngMap *m, Arena *a);
void   eng_map_free(EngMap *m);
void **eng_map_find(const EngMap *m, const void *key, size_t klen);
/* *isnew tells whether the key was absent (its slot is then NULL). */
void **eng_map_upsert(EngMap *m, const void *key, size_t klen, bool *isnew);
void   eng_map_clear(EngMap *m);

#endif /* SLUICE_ENGINE_KEYMAP_H */
