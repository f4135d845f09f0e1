/*
 * error.h -- the error record every fallible routine leaves behind.
 *
 * Functions that can fail return 0 or a negative code and fill an SlError
 * owned by the caller's context (SQLite's Parse, PostgreSQL's errsave): a
 * SQLSTATE from errcodes.txt, a message, and optionally a detail, a hint and
 * a 1-based byte offset into the SQL text.  The strings are on the heap and
 * belong to the record; sl_error_clear() frees them.
 */
#ifndef SLUICE_ERROR_H
#define SLUICE_ERROR_H

#include "sluice/common.h"
#include "errcodes.h"

typedef struct SlError {
    char  sqlstate[6];   /* "" when no error is recorded */
    char *message;
    char *detail;
    char *hint;
    char *context;       /* where it happened (ErrorResponse 'W'), or NULL */
    int   position;      /* 1-based byte offset into the statement, 0 = none */
} SlError;

/* Records an error; returns -1 so callers can write `return sl_error(...)`.
 * A record that already holds an error keeps the first one. */
int  sl_error(SlError *e, const char *sqlstate, const char *fmt, ...) SL_PRINTF(3, 4);
/* Same, with a byte position (0-based offset; stored 1-based). */
int  sl_error_at(SlError *e, const char *sqlstate, int offset, const char *fmt, ...)
     SL_PRINTF(4, 5);
void sl_error_detail(SlError *e, const char *fmt, ...) SL_PRINTF(2, 3);
void sl_error_hint(SlError *e, const char *fmt, ...) SL_PRINTF(2, 3);
void sl_error_context(SlError *e, const char *fmt, ...) SL_PRINTF(2, 3);
static inline bool sl_error_set(const SlError *e) { return e->sqlstate[0] != 0; }
void sl_error_clear(SlError *e);
/* Moves src into dst (dst is cleared first); src is empty afterwards. */
void sl_error_move(SlError *dst, SlError *src);

#endif /* SLUICE_ERROR_H */
