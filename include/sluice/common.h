/*
 * common.h -- definitions every sluice source file includes.
 *
 * Memory: sl_malloc() and friends never return NULL; out of memory is fatal
 * (Redis's rule), so callers never check.  Most memory is taken from an Arena
 * (arena.h) whose lifetime matches the work; see docs/architecture.md.
 */
#ifndef SLUICE_COMMON_H
#define SLUICE_COMMON_H

#include <stddef.h>
#include <stdint.h>
#include <stdbool.h>
#include <string.h>

#define SL_LIKELY(x)   __builtin_expect(!!(x), 1)
#define SL_UNLIKELY(x) __builtin_expect(!!(x), 0)
#define SL_ARRAY_LEN(a) (sizeof(a) / sizeof((a)[0]))
#define SL_MIN(a, b) ((a) < (b) ? (a) : (b))
#define SL_MAX(a, b) ((a) > (b) ? (a) : (b))
#define SL_UNUSED(x) ((void)(x))

#if defined(__GNUC__)
#define SL_PRINTF(f, a) __attribute__((format(printf, f, a)))
#define SL_NORETURN __attribute__((noreturn))
#else
#define SL_PRINTF(f, a)
#define SL_NORETURN
#endif

/* The value of a hexadecimal digit, or -1. */
/* Microseconds from the Unix epoch (1970-01-01) to PostgreSQL's
 * (2000-01-01), which date/time values are counted from. */
#define SL_PG_EPOCH_UNIX_US INT64_C(946684800000000)

static inline int sl_hexval(int c)
{
    if (c >= '0' && c <= '9')
        return c - '0';
    if (c >= 'a' && c <= 'f')
        return c - 'a' + 10;
    if (c >= 'A' && c <= 'F')
        return c - 'A' + 10;
    return -1;
}

void *sl_malloc(size_t n);
void *sl_calloc(size_t count, size_t size);
void *sl_realloc(void *p, size_t n);
char *sl_strdup(const char *s);
char *sl_strndup(const char *s, size_t n);
void  sl_free(void *p);

/* Prints the message and aborts.  For broken invariants and out of memory. */
SL_NORETURN void sl_panic(const char *fmt, ...) SL_PRINTF(1, 2);

/* Fault points (docs/architecture.md, "Fault injection").  With
 * -Dfault_injection=true, SLUICE_FAULT("name") kills the process with SIGKILL
 * when the environment variable SLUICE_FAULT equals name (or "name:N" for the
 * N-th time the point is reached).  Without it the macro compiles to nothing.
 *
 * SLUICE_FAULT_FAILS("name") is a point where the work can fail instead: it
 * is true (with errno EIO) when SLUICE_FAULT is "name:fail" (the first time
 * the point is reached), "name:N:fail" (the N-th time only) or
 * "name:N:failall" (the N-th time and every time after); the caller then
 * returns the error the real failure would (docs/development.md).  Armed
 * with a kill or hold it acts as SLUICE_FAULT.  Without fault injection it
 * is false. */
#ifdef SLUICE_FAULT_INJECTION
void sl_fault_point(const char *name);
bool sl_fault_fails(const char *name);
#define SLUICE_FAULT(name) sl_fault_point(name)
#define SLUICE_FAULT_FAILS(name) sl_fault_fails(name)
#else
#define SLUICE_FAULT(name) ((void)0)
#define SLUICE_FAULT_FAILS(name) false
#endif

#endif /* SLUICE_COMMON_H */
