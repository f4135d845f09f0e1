/*
 * mem.c -- heap allocation that never returns NULL, panics, fault points.
 *
 *   sl_malloc, sl_calloc, sl_realloc, sl_strdup, sl_strndup, sl_free
 *   sl_panic        print a message and abort
 *   sl_fault_point  the body of SLUICE_FAULT() in fault-injection builds
 *   sl_fault_fails  the body of SLUICE_FAULT_FAILS()
 */
#include "sluice/common.h"

#include <errno.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

void sl_panic(const char *fmt, ...)
{
    va_list ap;
    fputs("sluiced: PANIC: ", stderr);
    va_start(ap, fmt);
    vfprintf(stderr, fmt, ap);
    va_end(ap);
    fputc('\n', stderr);
    abort();
}

void *sl_malloc(size_t n)
{
    void *p = malloc(n ? n : 1);
    if (SL_UNLIKELY(p == NULL))
        sl_panic("out of memory allocating %zu bytes", n);
    return p;
}

void *sl_calloc(size_t count, size_t size)
{
    void *p = calloc(count ? count : 1, size ? size : 1);
    if (SL_UNLIKELY(p == NULL))
        sl_panic("out of memory allocating %zu x %zu bytes", count, size);
    return p;
}

void *sl_realloc(void *p, size_t n)
{
    void *q = realloc(p, n ? n : 1);
    if (SL_UNLIKELY(q == NULL))
        sl_panic("out of memory reallocating %zu bytes", n);
    return q;
}

char *sl_strdup(const char *s)
{
    return sl_strndup(s, strlen(s));
}

char *sl_strndup(const char *s, size_t n)
{
    char *p = sl_malloc(n + 1);
    memcpy(p, s, n);
    p[n] = '\0';
    return p;
}

void sl_free(void *p)
{
    free(p);
}

#ifdef SLUICE_FAULT_INJECTION
/*
 * SLUICE_FAULT=name kills the process the first time the point is reached;
 * SLUICE_FAULT=name:N the N-th time.  The kill is SIGKILL, so nothing is
 * flushed: the test sees exactly what a power cut would leave.
 * SLUICE_FAULT=name:hold instead holds the thread that reaches the point
 * the first time (name:N:hold: the N-th time), while the file
 * SLUICE_FAULT_HOLD names exists: a test does something (stops a broker,
 * waits for another thread's step, kills the server) in the middle of that
 * step, then lets it go on by removing the file.  SLUICE_FAULT=name:fail
 * (name:N:fail, name:N:failall) makes a SLUICE_FAULT_FAILS point fail
 * instead of doing its work (common.h).  With SLUICE_FAULT_TRACE set,
 * every point reached says so on stderr ("fault point X passed"): a test
 * waits for one step of another thread while a point holds.
 */

/* One count for the process: a point reached on a worker thread and on the
 * loop counts toward the same N (only the armed point is counted). */
static _Atomic unsigned hits;

typedef enum FaultMode { FAULT_KILL, FAULT_HOLD, FAULT_FAIL, FAULT_FAILALL } FaultMode;

/* Whether SLUICE_FAULT arms this point: its N (*want) and mode. */
static bool fault_armed(const char *name, unsigned *want, FaultMode *mode)
{
    if (getenv("SLUICE_FAULT_TRACE") != NULL)
        fprintf(stderr, "sluiced: fault point %s passed\n", name);
    const char *armed = getenv("SLUICE_FAULT");
    if (armed == NULL)
        return false;
    size_t n = strlen(name);
    if (strncmp(armed, name, n) != 0 || (armed[n] != '\0' && armed[n] != ':'))
        return false;
    char *end = (char *)armed + n;
    *want = 1;
    if (*end == ':' && end[1] >= '0' && end[1] <= '9')
        *want = (unsigned)strtoul(end + 1, &end, 10);
    *mode = strcmp(end, ":hold") == 0      ? FAULT_HOLD
            : strcmp(end, ":fail") == 0    ? FAULT_FAIL
            : strcmp(end, ":failall") == 0 ? FAULT_FAILALL
                                           : FAULT_KILL;
    return true;
}

static void fault_kill_or_hold(const char *name, unsigned want, FaultMode mode)
{
    if (mode == FAULT_HOLD) {
        const char *path = getenv("SLUICE_FAULT_HOLD");
        if (path == NULL || atomic_fetch_add(&hits, 1) + 1 != want)
            return;
        fprintf(stderr, "sluiced: fault point %s reached, holding\n", name);
        while (access(path, F_OK) == 0)
            usleep(20000);
        fprintf(stderr, "sluiced: fault point %s released\n", name);
        return;
    }
    if (atomic_fetch_add(&hits, 1) + 1 >= want) {
        fprintf(stderr, "sluiced: fault point %s reached, killing\n", name);
        kill(getpid(), SIGKILL);
    }
}

void sl_fault_point(const char *name)
{
    unsigned want;
    FaultMode mode;
    if (fault_armed(name, &want, &mode) && mode != FAULT_FAIL && mode != FAULT_FAILALL)
        fault_kill_or_hold(name, want, mode);
}

bool sl_fault_fails(const char *name)
{
    unsigned want;
    FaultMode mode;
    if (!fault_armed(name, &want, &mode))
        return false;
    if (mode != FAULT_FAIL && mode != FAULT_FAILALL) {
        fault_kill_or_hold(name, want, mode);
        return false;
    }
    unsigned hit = atomic_fetch_add(&hits, 1) + 1;
    if (hit == want || (mode == FAULT_FAILALL && hit > want)) {
        fprintf(stderr, "sluiced: fault point %s reached, failing (%u)\n", name, hit);
        errno = EIO;
        return true;
    }
    return false;
}
#endif
