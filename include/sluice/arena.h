/*
 * arena.h -- region allocator with lifetimes that match the work.
 *
 * An Arena hands out memory from large blocks and frees it all at once with
 * arena_reset() or arena_destroy().  The lifetimes used in sluice are
 * server > connection > statement, and continuous query > micro-batch.
 * Nothing allocated from an arena is freed on its own.
 */
#ifndef SLUICE_ARENA_H
#define SLUICE_ARENA_H

#include "sluice/common.h"

typedef struct ArenaBlock ArenaBlock;
typedef struct SlMemAccount SlMemAccount;

typedef struct Arena {
    ArenaBlock *head;       /* block being filled; older blocks follow */
    size_t      block_size; /* default size of a new block */
    size_t      total;      /* bytes held in all blocks */
    ArenaBlock *spare;      /* arena_rewind: empty standard blocks to reuse */
    ArenaBlock *spare_big;  /* arena_rewind: empty larger blocks to reuse */
    SlMemAccount *acct;     /* charged for its blocks (memacct.h), or NULL */
} Arena;

/* An arena made while the calling thread has a memory account
 * (memacct.h) is charged to it, and holds a reference until destroyed. */
void  arena_init(Arena *a, size_t block_size);
/* Charges a's blocks, from now on, to acct (a reference is taken) instead
 * of its account so far. */
void  arena_set_account(Arena *a, SlMemAccount *acct);
void *arena_alloc(Arena *a, size_t n);          /* 16-byte aligned */
/* arena_alloc for a request whose size a user controls (repeat(), a COPY
 * line): NULL, and nothing allocated, when n more bytes would pass a's
 * account's budget (sl_mem_would_exceed; the caller reports 53200). */
void *arena_alloc_budget(Arena *a, size_t n);
void *arena_zalloc(Arena *a, size_t n);
char *arena_strdup(Arena *a, const char *s);
char *arena_strndup(Arena *a, const char *s, size_t n);
char *arena_printf(Arena *a, const char *fmt, ...) SL_PRINTF(2, 3);
void *arena_memdup(Arena *a, const void *p, size_t n);
/* Frees all but the first block and rewinds it: the arena is empty again. */
void  arena_reset(Arena *a);
/* Empties the arena but keeps up to keep_bytes of its blocks for the next
 * allocations, which reuse them before asking malloc: their pages stay
 * mapped, so an arena filled again and again (a continuous query's batch)
 * does not fault them in each time. */
void  arena_rewind(Arena *a, size_t keep_bytes);
void  arena_destroy(Arena *a);

#define ARENA_NEW(a, T)        ((T *)arena_zalloc((a), sizeof(T)))
#define ARENA_ARRAY(a, T, n)   ((T *)arena_alloc((a), sizeof(T) * (size_t)(n)))

#endif /* SLUICE_ARENA_H */
