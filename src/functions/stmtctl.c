/*
 * stmtctl.c -- the controls of the running statement: its interrupt flag
 * and its memory budget, which the operators check around every batch and
 * the kernels that loop or allocate at the user's bidding check inside.
 *
 *   ex_interrupt_enter, ex_interrupted, ex_check_interrupt   cancel and timeout
 *   ex_check_memory, ex_out_of_memory, ex_alloc_budget       the memory budget
 *
 * A statement that runs on a worker thread has an interrupt flag the loop
 * may set (a CancelRequest, statement_timeout); ex_op_next checks it before
 * every batch and pg_sleep every 10 ms, so a statement ends within a batch
 * of being cancelled.  The flag is thread-local: the thread that runs a
 * statement enters it first.  The memory account is the calling thread's
 * (memacct.h): a statement past statement_mem or the server's
 * --max-memory ends with 53200, with the bound it passed in the detail.
 */
#include "sluice/functions.h"
#include "sluice/memacct.h"

#include <stdio.h>

static _Thread_local const _Atomic int *interrupt_flag;

const _Atomic int *ex_interrupt_enter(const _Atomic int *flag)
{
    const _Atomic int *old = interrupt_flag;
    interrupt_flag = flag;
    return old;
}

int ex_interrupted(void)
{
    return interrupt_flag != NULL ? *interrupt_flag : EX_RUNNING;
}

int ex_check_interrupt(SlError *err)
{
    int why = ex_interrupted();
    if (why == EX_RUNNING)
        return 0;
    if (why == EX_CANCEL_TIMEOUT)
        return sl_error(err, ERRCODE_QUERY_CANCELED,
                        "canceling statement due to statement timeout");
    if (why == EX_CANCEL_SHUTDOWN)
        return sl_error(err, ERRCODE_ADMIN_SHUTDOWN,
                        "terminating connection due to administrator command");
    return sl_error(err, ERRCODE_QUERY_CANCELED, "canceling statement due to user request");
}

/* A byte count as SHOW prints memory settings ("64MB", "1536kB"). */
static void format_bytes(size_t n, char *buf, size_t size)
{
    size_t kb = n / 1024;
    if (kb % (1024 * 1024) == 0 && kb > 0)
        snprintf(buf, size, "%zuGB", kb / (1024 * 1024));
    else if (kb % 1024 == 0 && kb > 0)
        snprintf(buf, size, "%zuMB", kb / 1024);
    else
        snprintf(buf, size, "%zukB", kb);
}

int ex_out_of_memory(SlError *err, const SlMemAccount *acct)
{
    char bound[32];
    int why = sl_mem_exceeded(acct);
    sl_error(err, ERRCODE_OUT_OF_MEMORY, "out of memory");
    if (why == SL_MEM_OVER_SERVER) {
        format_bytes(sl_mem_server_limit(), bound, sizeof(bound));
        sl_error_detail(err, "The statements running on the server together hold more than "
                             "max_memory (%s).", bound);
        sl_error_hint(err, "Try again when fewer statements run, or raise the server's "
                           "--max-memory.");
    } else {
        format_bytes(acct != NULL ? sl_mem_account_limit(acct) : 0, bound, sizeof(bound));
        sl_error_detail(err, "The statement needed more than statement_mem (%s).", bound);
        sl_error_hint(err, "Make the statement need less (fewer rows to sort, group or join "
                           "at once), or raise statement_mem.");
    }
    return -1;
}

void *ex_alloc_budget(Arena *a, size_t n, SlError *err)
{
    void *p = arena_alloc_budget(a, n);
    if (p == NULL)
        ex_out_of_memory(err, a->acct);
    return p;
}

int ex_check_memory(SlError *err)
{
    const SlMemAccount *a = sl_mem_account_current();
    return sl_mem_exceeded(a) == SL_MEM_OK ? 0 : ex_out_of_memory(err, a);
}
