/*
 * inc_join_mem.h -- the in-memory copy of one side's committed chunks of a
 * stream-stream interval join (docs/engine.md, "The kept rows in memory").
 *
 *   jmem_clear       drop the copy (the side is read from RocksDB until it
 *                    is loaded again)
 *   jmem_add         add a chunk after every chunk of its bucket, taking its
 *                    value and key hashes
 *   jmem_find        the chunk with a key
 *   jmem_mark        mark a row of a chunk matched
 *   jmem_drop_head   drop the first bucket (its rows evicted; its memory is
 *                    freed by the next jmem_release)
 *   jmem_release     free the dropped buckets' memory
 *   jmem_seek        the first bucket starting at or after a time
 *
 * A side's copy holds the same chunks, values and marks as its 'J' keys in
 * RocksDB after the last committed batch, in key order: buckets ascending
 * by start time, each one's chunks in the order of their keys (batch id,
 * chunk number; a batch's chunks come after every older one's).  RocksDB
 * stays the truth: the copy is changed only after a batch's write has
 * landed (inc_join.c), dropped when a batch fails, and loaded from RocksDB
 * when a batch needs it and it is not there (after a start).
 *
 * Each chunk in memory also carries its rows' key hashes and where each
 * row starts in its value (made with the chunk, inc_join.c): a batch whose
 * new rows on the other side have few keys finds a chunk's partners by
 * these hashes without decoding the other rows (docs/engine.md, "The probe
 * by key hash").  A hash is only a filter: the keys are compared after it.
 */
#ifndef SLUICE_RUNTIME_INC_JOIN_MEM_H
#define SLUICE_RUNTIME_INC_JOIN_MEM_H

#include "sluice/common.h"

#include <stdint.h>

#define JMEM_KEY 26     /* a chunk's key: 'J' + oid + side + bucket + batch id + number */

typedef struct JMemChunk {
    uint8_t   ckey[JMEM_KEY];
    uint32_t  len;
    uint8_t  *val;                  /* sl_malloc'd, owned */
    uint32_t *mark;                 /* rows matched after it was written, ascending */
    uint32_t  nmark, capmark;
    /* sl_malloc'd, owned, or NULL (none): per row, the low 32 bits of
     * ex_hash of its key, then per row its entry's offset in val */
    uint32_t *khash;
    uint32_t  nkeys;                /* rows in khash */
} JMemChunk;

typedef struct JMemBucket {
    int64_t    start;
    JMemChunk *c;
    uint32_t   n, cap;
} JMemBucket;

typedef enum JMemState {
    JMEM_UNLOADED,                  /* not in memory: load before use */
    JMEM_ON,                        /* in memory: b[head, n) */
    JMEM_OFF,                       /* over the cap: read from RocksDB; bytes known */
    JMEM_LEGACY                     /* holds one-row keys (before chunks): RocksDB only */
} JMemState;

typedef struct JMem {
    JMemState   state;
    JMemBucket *b;                  /* ascending by start; live from head */
    uint32_t    head, n, cap;
    uint32_t    dropped;            /* b[dropped, head): dropped, not freed yet */
    /* the side's chunk keys, values and mark keys in RocksDB, in bytes
     * (ON, OFF) */
    int64_t     bytes;
} JMem;

/* Frees the copy; the state becomes `state` (bytes kept). */
void       jmem_clear(JMem *m, JMemState state);
/* The chunk takes val and khash (NULL: none; nkeys rows). */
JMemChunk *jmem_add(JMem *m, int64_t bucket, const uint8_t *ckey, uint8_t *val, uint32_t len,
                    uint32_t *khash, uint32_t nkeys);
JMemChunk *jmem_find(JMem *m, int64_t bucket, const uint8_t *ckey);
void       jmem_mark(JMemChunk *c, uint32_t idx);
void       jmem_drop_head(JMem *m);
void       jmem_release(JMem *m);
uint32_t   jmem_seek(const JMem *m, int64_t start);

#endif /* SLUICE_RUNTIME_INC_JOIN_MEM_H */
