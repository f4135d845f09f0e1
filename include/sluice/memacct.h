/*
 * memacct.h -- memory budgets: how much a statement may hold, and how much
 * all statements together may hold.
 *
 * A statement that runs ad hoc (SELECT, EXPLAIN, INSERT / UPDATE / DELETE,
 * COPY FROM) owns an SlMemAccount.  Arenas made while it is the calling
 * thread's account (sl_mem_account_enter), or given it with
 * arena_set_account, charge it for every block they take from malloc and
 * credit it for every block they give back.  The account also charges one
 * server-wide total, bounded by sl_mem_server_limit_set (--max-memory).
 * Passing either bound marks the account exceeded (the server's only for
 * a statement that holds SL_MEM_SERVER_FLOOR or more): the executor checks the
 * mark between batches (ex_check_memory) and ends the statement with 53200
 * out_of_memory; arena_alloc_budget refuses a single large request that
 * would pass a bound before it is made.  Real malloc failure stays fatal
 * (common.h): the budget is an accounting check made before that point.
 *
 * Accounts are reference counted: each arena charged to one holds a
 * reference, the statement holds one, and the last release frees it.
 *
 *   sl_mem_account_new, sl_mem_account_ref, sl_mem_account_unref
 *   sl_mem_account_enter, sl_mem_account_current     the calling thread's
 *   sl_mem_charge, sl_mem_credit, sl_mem_would_exceed
 *   sl_mem_exceeded                                  0 or which bound
 *   sl_mem_server_limit_set, sl_mem_server_limit, sl_mem_server_used
 */
#ifndef SLUICE_MEMACCT_H
#define SLUICE_MEMACCT_H

#include "sluice/common.h"

typedef struct SlMemAccount SlMemAccount;

/* A statement holding less than this is never refused for the server's
 * bound, only for its own statement_mem. */
#define SL_MEM_SERVER_FLOOR ((size_t)8 << 20)

/* Which bound an account passed. */
enum { SL_MEM_OK = 0, SL_MEM_OVER_STATEMENT = 1, SL_MEM_OVER_SERVER = 2 };

/* A new account with one reference; limit 0 is no per-statement bound
 * (the server's still applies). */
SlMemAccount *sl_mem_account_new(size_t limit);
void          sl_mem_account_set_limit(SlMemAccount *a, size_t limit);
size_t        sl_mem_account_limit(const SlMemAccount *a);
size_t        sl_mem_account_used(const SlMemAccount *a);
void          sl_mem_account_ref(SlMemAccount *a);
/* Drops a reference; the last one credits what is still charged and frees. */
void          sl_mem_account_unref(SlMemAccount *a);

/* Makes a the calling thread's account (NULL: none); returns the previous. */
SlMemAccount *sl_mem_account_enter(SlMemAccount *a);
SlMemAccount *sl_mem_account_current(void);

/* Charges n bytes (the account and the server's total); past a bound the
 * account is marked exceeded.  a may be NULL (nothing is counted). */
void sl_mem_charge(SlMemAccount *a, size_t n);
void sl_mem_credit(SlMemAccount *a, size_t n);
/* Whether charging n more bytes would pass a bound: 0, or which one (the
 * account is then marked exceeded). */
int  sl_mem_would_exceed(SlMemAccount *a, size_t n);
/* 0 while within bounds, else SL_MEM_OVER_STATEMENT / SL_MEM_OVER_SERVER. */
int  sl_mem_exceeded(const SlMemAccount *a);

/* The bound of all accounts together, in bytes (0: none). */
void   sl_mem_server_limit_set(size_t bytes);
size_t sl_mem_server_limit(void);
size_t sl_mem_server_used(void);

#endif /* SLUICE_MEMACCT_H */
