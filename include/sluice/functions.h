/*
 * functions.h -- what the function library (src/functions/) offers the
 * floors above besides its table of functions and casts (expr.h): the
 * controls of the running statement, which its kernels and the executor's
 * operators check, the counters one of the runtime's answers fills
 * (IngestStats; the answers themselves are expr.h's ExFnHooks), whether a
 * cast is implicit, and the aggregate functions' signatures.
 *
 *   ex_interrupt_enter, ex_interrupted,
 *   ex_check_interrupt                  cancel and timeout (stmtctl.c)
 *   ex_check_memory, ex_out_of_memory,
 *   ex_alloc_budget                     the memory budget (stmtctl.c)
 *   ex_regex_compile, ex_regex_test,
 *   ex_regex_find, ex_regex_subject, ex_regex_groups, ex_regex_captures,
 *   ex_regex_free                       PostgreSQL's regular expressions (are.c)
 *   ex_regex_too_complex,
 *   ex_regex_has_backref                a pattern's size and back references (are.c)
 *   IngestStats                         what sluice_stream_stat() shows
 *                                       (streamfuncs.c; expr.h's ExFnHooks)
 *   ex_can_coerce                       is there an implicit cast? (cast.c)
 *   AggId, AggSig, ex_agg_exists,
 *   ex_agg_lookup, ex_agg_sig           the aggregate functions' signatures,
 *                                       which the analyzer resolves calls
 *                                       against (aggsig.c; how each runs is
 *                                       the executor's, exec.h's AggFunc)
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

/* A regular expression with PostgreSQL's (ARE) semantics, on PCRE2
 * (are.c).  ex_regex_compile reads pattern with the flag letters of
 * PostgreSQL's regexp functions (flags, flen: c i m n p q s t w x; 0 for
 * none) and icase (~*); whole: it must match the whole string.  NULL with
 * the error on err: 2201B for what PostgreSQL refuses, 0A000 for what the
 * translation does not carry over, 22023 for an unknown flag. */
typedef struct ExRegex ExRegex;
ExRegex *ex_regex_compile(SlError *err, const char *pattern, size_t len, const char *flags,
                          size_t flen, bool icase, bool whole);
/* 1 when s has a match, 0 when not, -1 with the error on err (54001 past
 * the bound on one match; 57014 cancelled or past statement_timeout). */
int ex_regex_test(SlError *err, ExRegex *re, const char *s, size_t len);
/* The first match at or after byte start as PostgreSQL finds it (the
 * leftmost, then the longest or shortest there by the pattern's
 * greediness): 1 with its bytes [*so, *eo), 0 for none, -1 with the error
 * (0A000 for a pattern with back references). */
int ex_regex_find(SlError *err, ExRegex *re, const char *s, size_t len, size_t start,
                  size_t *so, size_t *eo);
/* Names s the subject of the finds that follow (until another or the
 * end of its bytes' life): its UTF-8 is checked here once (22021), not
 * at each find.  0, or -1 with the error. */
int ex_regex_subject(SlError *err, ExRegex *re, const char *s, size_t len);
void ex_regex_free(ExRegex *re);
/* How many capturing groups the pattern has. */
int ex_regex_groups(const ExRegex *re);
/* What each group captured in the match [so, eo) of s (ex_regex_find's,
 * with s its subject), as PostgreSQL's matcher dissects a match: caps[2g],
 * caps[2g + 1] the bytes of group g + 1, SIZE_MAX for one that took no
 * part.  0, or -1 with the error: 0A000 for a group in an alternation, a
 * repetition or a non-capturing group (PostgreSQL's rules for those are
 * its own), 54001 past the bound. */
int ex_regex_captures(SlError *err, ExRegex *re, const char *s, size_t len, size_t so,
                      size_t eo, size_t *caps);
/* Whether a pattern's bounded repetitions expand past what sluice lets it
 * compile (2201B "regular expression is too complex"; ex_regex_compile
 * checks it). */
bool ex_regex_too_complex(const char *pattern, size_t len);
/* Whether the pattern has a back reference (\1 to \9). */
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

/* ------------------------------------------------------------------ casts */

/* Whether PostgreSQL casts from to to implicitly (cast.c; the casts
 * themselves are expr.h's ex_cast_fn). */
bool ex_can_coerce(SlTypeId from, SlTypeId to);

/* ------------------------------------------------------------- aggregates */

/* Each aggregate function with its argument types, one row of aggsig.c's
 * table and of the executor's (agg.c), in the order resolution tries them. */
#define AGG_MINMAX_IDS(T) AGG_MIN_##T, AGG_MAX_##T
#define AGG_VAR_IDS(F)                                                                     \
    AGG_##F##_INT2, AGG_##F##_INT4, AGG_##F##_INT8, AGG_##F##_NUMERIC, AGG_##F##_FLOAT4,     \
        AGG_##F##_FLOAT8
typedef enum AggId {
    AGG_COUNT_STAR, AGG_COUNT,
    AGG_SUM_INT2, AGG_SUM_INT4, AGG_SUM_INT8, AGG_SUM_FLOAT4, AGG_SUM_FLOAT8, AGG_SUM_NUMERIC,
    AGG_SUM_INTERVAL,
    AGG_AVG_INT2, AGG_AVG_INT4, AGG_AVG_INT8, AGG_AVG_FLOAT4, AGG_AVG_FLOAT8, AGG_AVG_NUMERIC,
    AGG_MINMAX_IDS(INT2), AGG_MINMAX_IDS(INT4), AGG_MINMAX_IDS(INT8), AGG_MINMAX_IDS(FLOAT4),
    AGG_MINMAX_IDS(FLOAT8), AGG_MINMAX_IDS(DATE), AGG_MINMAX_IDS(TIMESTAMP),
    AGG_MINMAX_IDS(TIMESTAMPTZ), AGG_MINMAX_IDS(INTERVAL), AGG_MINMAX_IDS(NUMERIC),
    AGG_MINMAX_IDS(TEXT),
    AGG_BOOL_AND, AGG_EVERY, AGG_BOOL_OR, AGG_STRING_AGG, AGG_APPROX_COUNT_DISTINCT,
    AGG_ARRAY_AGG,
    /* the statistics aggregates (src/exec/agg_stats.c): each of the
     * variance family over smallint, integer, bigint, numeric, real and
     * double precision, in this order; then those of (float8, float8) */
    AGG_VAR_IDS(STDDEV), AGG_VAR_IDS(STDDEV_SAMP), AGG_VAR_IDS(STDDEV_POP),
    AGG_VAR_IDS(VARIANCE), AGG_VAR_IDS(VAR_SAMP), AGG_VAR_IDS(VAR_POP),
    AGG_CORR, AGG_COVAR_POP, AGG_COVAR_SAMP, AGG_REGR_AVGX, AGG_REGR_AVGY, AGG_REGR_COUNT,
    AGG_REGR_INTERCEPT, AGG_REGR_R2, AGG_REGR_SLOPE, AGG_REGR_SXX, AGG_REGR_SXY, AGG_REGR_SYY,
    /* the ordered-set aggregates (src/exec/agg_ordered.c): called as
     * f(direct) WITHIN GROUP (ORDER BY x), their arguments (x, direct) */
    AGG_PERCENTILE_CONT, AGG_PERCENTILE_CONT_MULTI, AGG_PERCENTILE_DISC,
    AGG_PERCENTILE_DISC_MULTI, AGG_MODE,
    /* jsonb_agg(x), jsonb_object_agg(key, value) (src/exec/agg.c) */
    AGG_JSONB_AGG, AGG_JSONB_OBJECT_AGG,
    AGG__COUNT
} AggId;

/* What an aggregate call means: its name, its arguments' types and its
 * result's.  TYPE__COUNT in args: any type; in ret: the argument's type. */
typedef struct AggSig {
    AggId       id;
    const char *name;
    int         nargs;
    SlTypeId    args[2];
    SlTypeId    ret;
} AggSig;

bool ex_agg_exists(const char *name);
/* The signature for these argument types, or NULL.  *cast gets the types
 * the arguments must be cast to first. */
const AggSig *ex_agg_lookup(const char *name, int nargs, const SlTypeId *argtypes,
                            SlTypeId *cast);
const AggSig *ex_agg_sig(AggId id);

#endif /* SLUICE_FUNCTIONS_H */
