/*
 * arena.c -- region allocator (see arena.h).
 *
 * Blocks are chained newest first.  A request larger than a quarter of the
 * block size gets a block of its own, inserted behind the current one so the
 * current block keeps filling.  arena_rewind keeps emptied blocks on two
 * spare lists (standard ones, larger ones) that later requests take from
 * first.  Every block taken from malloc is charged to the arena's memory
 * account (memacct.h) and credited when it is freed.
 */
#include "sluice/arena.h"
#include "sluice/memacct.h"

#include <stdarg.h>
#include <stdio.h>

/* Under AddressSanitizer a spare block is poisoned until it is reused, so a
 * pointer kept past arena_rewind still fails loudly, as after a free. */
#if defined(__SANITIZE_ADDRESS__)
#include <sanitizer/asan_interface.h>
#define SPARE_POISON(b)   ASAN_POISON_MEMORY_REGION((b)->data, (b)->size)
#define SPARE_UNPOISON(b) ASAN_UNPOISON_MEMORY_REGION((b)->data, (b)->size)
#else
#define SPARE_POISON(b)   ((void)(b))
#define SPARE_UNPOISON(b) ((void)(b))
#endif

struct ArenaBlock {
    ArenaBlock *next;
    size_t      size;   /* usable bytes in data[] */
    size_t      used;
    _Alignas(16) unsigned char data[];
};

#define ARENA_ALIGN 16

static ArenaBlock *block_new(Arena *a, size_t size)
{
    ArenaBlock *b = sl_malloc(sizeof(ArenaBlock) + size);
    b->next = NULL;
    b->size = size;
    b->used = 0;
    sl_mem_charge(a->acct, sizeof(ArenaBlock) + size);
    return b;
}

static void block_free(Arena *a, ArenaBlock *b)
{
    sl_mem_credit(a->acct, sizeof(ArenaBlock) + b->size);
    sl_free(b);
}

void arena_init(Arena *a, size_t block_size)
{
    a->head = NULL;
    a->block_size = block_size ? block_size : 8192;
    a->total = 0;
    a->spare = NULL;
    a->spare_big = NULL;
    a->acct = sl_mem_account_current();
    if (a->acct != NULL)
        sl_mem_account_ref(a->acct);
}

/* Bytes of malloc'd blocks a holds (in use and spare). */
static size_t held(const Arena *a)
{
    size_t n = 0;
    const ArenaBlock *lists[3] = {a->head, a->spare, a->spare_big};
    for (int l = 0; l < 3; l++)
        for (const ArenaBlock *b = lists[l]; b != NULL; b = b->next)
            n += sizeof(ArenaBlock) + b->size;
    return n;
}

void arena_set_account(Arena *a, SlMemAccount *acct)
{
    if (acct == a->acct)
        return;
    size_t n = held(a);
    if (acct != NULL) {
        sl_mem_account_ref(acct);
        sl_mem_charge(acct, n);
    }
    if (a->acct != NULL) {
        sl_mem_credit(a->acct, n);
        sl_mem_account_unref(a->acct);
    }
    a->acct = acct;
}

void *arena_alloc_budget(Arena *a, size_t n)
{
    if (a->acct != NULL && sl_mem_would_exceed(a->acct, n) != 0)
        return NULL;
    return arena_alloc(a, n);
}

/* A spare larger block of at least n bytes, taken off the list, or NULL. */
static ArenaBlock *spare_big_take(Arena *a, size_t n)
{
    for (ArenaBlock **at = &a->spare_big; *at != NULL; at = &(*at)->next) {
        ArenaBlock *b = *at;
        if (b->size >= n) {
            *at = b->next;
            b->next = NULL;
            SPARE_UNPOISON(b);
            return b;
        }
    }
    return NULL;
}

void *arena_alloc(Arena *a, size_t n)
{
    n = (n + ARENA_ALIGN - 1) & ~(size_t)(ARENA_ALIGN - 1);
    if (n == 0)
        n = ARENA_ALIGN;
    ArenaBlock *b = a->head;
    if (SL_LIKELY(b != NULL && b->size - b->used >= n)) {
        void *p = b->data + b->used;
        b->used += n;
        return p;
    }
    if (n > a->block_size / 4) {
        ArenaBlock *big = spare_big_take(a, n);
        if (big == NULL) {
            big = block_new(a, n);
            a->total += n;
        }
        big->used = n;
        if (b != NULL) {
            big->next = b->next;
            b->next = big;
        } else {
            a->head = big;
        }
        return big->data;
    }
    ArenaBlock *nb = a->spare;
    if (nb != NULL) {
        a->spare = nb->next;
        SPARE_UNPOISON(nb);
    } else {
        nb = block_new(a, a->block_size);
        a->total += a->block_size;
    }
    nb->next = b;
    a->head = nb;
    nb->used = n;
    return nb->data;
}

void *arena_zalloc(Arena *a, size_t n)
{
    void *p = arena_alloc(a, n);
    memset(p, 0, n);
    return p;
}

char *arena_strndup(Arena *a, const char *s, size_t n)
{
    char *p = arena_alloc(a, n + 1);
    if (n > 0)
        memcpy(p, s, n);    /* s may be NULL when n is 0 (an empty StrBuf's data) */
    p[n] = '\0';
    return p;
}

char *arena_strdup(Arena *a, const char *s)
{
    return arena_strndup(a, s, strlen(s));
}

void *arena_memdup(Arena *a, const void *p, size_t n)
{
    void *q = arena_alloc(a, n);
    memcpy(q, p, n);
    return q;
}

char *arena_printf(Arena *a, const char *fmt, ...)
{
    va_list ap, ap2;
    va_start(ap, fmt);
    va_copy(ap2, ap);
    int n = vsnprintf(NULL, 0, fmt, ap);
    va_end(ap);
    char *p = arena_alloc(a, (size_t)n + 1);
    vsnprintf(p, (size_t)n + 1, fmt, ap2);
    va_end(ap2);
    return p;
}

static void free_chain(Arena *a, ArenaBlock *b)
{
    while (b != NULL) {
        SPARE_UNPOISON(b);
        ArenaBlock *next = b->next;
        block_free(a, b);
        b = next;
    }
}

void arena_rewind(Arena *a, size_t keep_bytes)
{
    /* Every block, in use or spare, is kept while the bound allows. */
    ArenaBlock *lists[3] = {a->head, a->spare, a->spare_big};
    size_t kept = 0;
    a->head = a->spare = a->spare_big = NULL;
    for (int l = 0; l < 3; l++) {
        for (ArenaBlock *b = lists[l], *next; b != NULL; b = next) {
            next = b->next;
            SPARE_UNPOISON(b);
            if (kept + b->size > keep_bytes) {
                a->total -= b->size;
                block_free(a, b);
                continue;
            }
            ArenaBlock **list = b->size == a->block_size ? &a->spare : &a->spare_big;
            b->used = 0;
            b->next = *list;
            *list = b;
            kept += b->size;
            SPARE_POISON(b);
        }
    }
}

void arena_reset(Arena *a)
{
    free_chain(a, a->spare);
    free_chain(a, a->spare_big);
    a->spare = a->spare_big = NULL;
    ArenaBlock *b = a->head;
    if (b == NULL) {
        a->total = 0;
        return;
    }
    /* Keep the newest block if it is a standard one; free everything else. */
    ArenaBlock *keep = b->size == a->block_size ? b : NULL;
    ArenaBlock *it = keep ? b->next : b;
    while (it != NULL) {
        ArenaBlock *next = it->next;
        block_free(a, it);
        it = next;
    }
    if (keep) {
        keep->next = NULL;
        keep->used = 0;
        a->total = keep->size;
    } else {
        a->total = 0;
    }
    a->head = keep;
}

void arena_destroy(Arena *a)
{
    free_chain(a, a->head);
    free_chain(a, a->spare);
    free_chain(a, a->spare_big);
    a->head = a->spare = a->spare_big = NULL;
    a->total = 0;
    sl_mem_account_unref(a->acct);
    a->acct = NULL;
}
