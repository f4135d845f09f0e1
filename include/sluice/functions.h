/*
 * functions.h -- what the function library (src/functions/) offers the
 * floors above besides its table of functions and casts (expr.h): the
 * controls of the running statement, which its kernels and the executor's
 * operators check, and the counters one of the runtime's answers fills
 * (IngestStats; the answers themselves are expr.h's ExFnHooks).
 *
 *   ex_interrupt_enter, ex_interrupted,
 *   ex_check_interrupt                  cancel and timeout (stmtctl.c)
 *   ex_check_memory, ex_out_of_memory,
 *   ex_alloc_budget                     the memory budget (stmtctl.c)
 *   ex_regex_too_complex                the bound on regcomp (regex.c)
 *   ex_regex_has_backref                what regexec cannot run boundedly (regex.c)
 *   IngestStats                         what sluice_stream_stat() shows
 *                                       (streamfuncs.c; expr.h's ExFnHooks)
 */
#ifndef SLUICE_FUNCTIONS_H
#define SLUICE_FUNCTIONS_H

#include "sluice/error.h"
#include "sluice/types.h"

/* ------------------------------------------------------------- interrupts */

/* Why a running statement is to stop (the value of its interrupt flag). */
enum { EX_RUNNING = 0, EX_CANCEL_USER = 1, EX_CANCEL_TIMEOUT = 2, EX_CANCEL_SHUTDOWN = 3 };

/* Makes flag the interrupt flag of the calling thread's statement (NULL:
 * none); returns the previous one.  ex_op_next and pg_sleep check it:
 * ex_check_interrupt returns -1 with 57014 ("canceling statement due to
 * user request" / "... due to statement timeout"), or 57P01 for a server
 * shutting down, once it is set. */
const _Atomic int *ex_interrupt_enter(const _Atomic int *flag);
int ex_interrupted(void);
int ex_check_interrupt(SlError *err);

/* ----------------------------------------------------------------- memory */

/* -1 with 53200 out_of_memory once the calling thread's memory account
 * (memacct.h) passed statement_mem or the server's --max-memory; else 0.
 * ex_op_next checks it around every batch. */
int ex_check_memory(SlError *err);
/* Records 53200 for the bound acct passed (memacct.h: statement_mem or
 * the server's max_memory, in the detail); returns -1. */
struct SlMemAccount;
int ex_out_of_memory(SlError *err, const struct SlMemAccount *acct);
/* arena_alloc_budget for a value whose size the user controls (repeat(),
 * ||, lpad): NULL with 53200 in err when it would pass the budget. */
void *ex_alloc_budget(Arena *a, size_t n, SlError *err);

/* Whether a POSIX extended regular expression would expand, in regcomp,
 * past what sluice lets it compile (regex.c; 2201B "regular expression is
 * too complex"): check before every regcomp of a user's pattern. */
bool ex_regex_too_complex(const char *pattern, size_t len);
/* Whether the pattern has a back reference (\1 to \9): regcomp takes one,
 * and regexec may then backtrack exponentially, beyond any interrupt. */
bool ex_regex_has_backref(const char *pattern, size_t len);

/* The counters of one stream's ingestion (the runtime's ingest.c fills
 * them; sys.streams and sluice_stream_stat() show them). */
typedef struct IngestStats {
    const char *stream;
    const char *status;         /* "running", "failed", or NULL (no ingester) */
    const char *error;          /* the failure, or NULL */
    int64_t     files;          /* files seen */
    int64_t     bytes;          /* bytes consumed (whole records) */
    int64_t     records;        /* records read, good and bad */
    int64_t     rows;           /* rows appended to the stream */
    int64_t     dead_letters;   /* records sent to <stream>_dead_letters */
    int64_t     skipped;        /* records skipped (on_error = 'skip') */
    int64_t     retained_chunks;/* chunks deleted by retention since start */
    int64_t     retained_rows;
    int64_t     retained_bytes;
} IngestStats;

#endif /* SLUICE_FUNCTIONS_H */
