/*
 * memacct.c -- memory budgets of statements (see memacct.h).
 *
 *   sl_mem_account_new, sl_mem_account_set_limit, sl_mem_account_limit,
 *   sl_mem_account_used, sl_mem_account_ref, sl_mem_account_unref,
 *   sl_mem_account_enter, sl_mem_account_current, sl_mem_charge,
 *   sl_mem_credit, sl_mem_would_exceed, sl_mem_exceeded,
 *   sl_mem_server_limit_set, sl_mem_server_limit, sl_mem_server_used
 *
 * Counters are atomics: an account is charged on the worker thread that
 * runs its statement and may be credited on the loop (an arena destroyed
 * there).  The server's total and its limit are the process's, as the
 * heap they count is (docs/architecture.md names them with the other
 * process-wide state).
 */
#include "sluice/memacct.h"

#include <stdatomic.h>

struct SlMemAccount {
    _Atomic size_t used;
    _Atomic size_t limit;
    _Atomic int    exceeded;
    _Atomic int    refs;
};

static _Atomic size_t server_used;
static _Atomic size_t server_limit;
static _Thread_local SlMemAccount *current;

SlMemAccount *sl_mem_account_new(size_t limit)
{
    SlMemAccount *a = sl_calloc(1, sizeof(SlMemAccount));
    atomic_init(&a->used, 0);
    atomic_init(&a->limit, limit);
    atomic_init(&a->exceeded, SL_MEM_OK);
    atomic_init(&a->refs, 1);
    return a;
}

void sl_mem_account_set_limit(SlMemAccount *a, size_t limit)
{
    atomic_store(&a->limit, limit);
}

size_t sl_mem_account_limit(const SlMemAccount *a)
{
    return atomic_load(&a->limit);
}

size_t sl_mem_account_used(const SlMemAccount *a)
{
    return atomic_load(&a->used);
}

void sl_mem_account_ref(SlMemAccount *a)
{
    atomic_fetch_add(&a->refs, 1);
}

void sl_mem_account_unref(SlMemAccount *a)
{
    if (a == NULL || atomic_fetch_sub(&a->refs, 1) != 1)
        return;
    atomic_fetch_sub(&server_used, atomic_load(&a->used));
    sl_free(a);
}

SlMemAccount *sl_mem_account_enter(SlMemAccount *a)
{
    SlMemAccount *old = current;
    current = a;
    return old;
}

SlMemAccount *sl_mem_account_current(void)
{
    return current;
}

/* Which bound used bytes of a (and total of the server) pass.  A statement
 * that holds less than SL_MEM_SERVER_FLOOR is never refused for the
 * server's bound: small statements (SELECT 1) go on while big ones fill
 * it, and the big ones are the ones that end. */
static int over(const SlMemAccount *a, size_t used, size_t total)
{
    size_t limit = atomic_load(&a->limit), slimit = atomic_load(&server_limit);
    if (limit != 0 && used > limit)
        return SL_MEM_OVER_STATEMENT;
    if (slimit != 0 && total > slimit && used > SL_MEM_SERVER_FLOOR)
        return SL_MEM_OVER_SERVER;
    return SL_MEM_OK;
}

static void mark(SlMemAccount *a, int why)
{
    int none = SL_MEM_OK;
    if (why != SL_MEM_OK)
        atomic_compare_exchange_strong(&a->exceeded, &none, why);
}

void sl_mem_charge(SlMemAccount *a, size_t n)
{
    if (a == NULL)
        return;
    size_t used = atomic_fetch_add(&a->used, n) + n;
    size_t total = atomic_fetch_add(&server_used, n) + n;
    mark(a, over(a, used, total));
}

void sl_mem_credit(SlMemAccount *a, size_t n)
{
    if (a == NULL)
        return;
    atomic_fetch_sub(&a->used, n);
    atomic_fetch_sub(&server_used, n);
}

int sl_mem_would_exceed(SlMemAccount *a, size_t n)
{
    if (a == NULL)
        return SL_MEM_OK;
    int why = atomic_load(&a->exceeded);
    if (why == SL_MEM_OK)
        why = over(a, atomic_load(&a->used) + n, atomic_load(&server_used) + n);
    mark(a, why);
    return why;
}

int sl_mem_exceeded(const SlMemAccount *a)
{
    return a == NULL ? SL_MEM_OK : atomic_load(&a->exceeded);
}

void sl_mem_server_limit_set(size_t bytes)
{
    atomic_store(&server_limit, bytes);
}

size_t sl_mem_server_limit(void)
{
    return atomic_load(&server_limit);
}

size_t sl_mem_server_used(void)
{
    return atomic_load(&server_used);
}
