/*
 * sessfuncs.c -- functions that read or change the session.
 *
 *   k_current_setting, k_current_setting2   current_setting(name [, missing_ok])
 *   k_set_config                            set_config(name, value, is_local)
 *   k_pg_sleep                              pg_sleep(seconds), cancellable
 *
 * pg_sleep checks the statement's interrupt flag (stmtctl.c) every 10 ms.
 * Parameters are the calling thread's session (settings.h).
 */
#include "functions/kernels.h"
#include "sluice/functions.h"
#include "sluice/settings.h"

#include <math.h>
#include <time.h>

static int text_out(EvalCtx *cx, Vector *out, uint32_t i, const char *s)
{
    size_t n = strlen(s);
    char *p = arena_alloc(cx->arena, n + 1);
    memcpy(p, s, n + 1);
    out->v.str[i].ptr = p;
    out->v.str[i].len = (uint32_t)n;
    return 0;
}

static const char *cstr(EvalCtx *cx, const SlStr *s)
{
    return arena_strndup(cx->arena, s->ptr, s->len);
}

static int current_setting(EvalCtx *cx, const Vector *args, Vector *out, const uint32_t *sel,
                           uint32_t n, bool has_missing_ok)
{
    FOR_SEL(sel, n, {
        bool missing_ok = has_missing_ok && args[1].v.b[i];
        SlError e = {0};
        const char *v = settings_get(settings_current(), cstr(cx, &args[0].v.str[i]), NULL, &e);
        if (v == NULL) {
            if (!missing_ok) {
                sl_error_move(cx->err, &e);
                return -1;
            }
            sl_error_clear(&e);
            out->nulls[i] = 1;
            continue;
        }
        text_out(cx, out, i, v);
    });
    return 0;
}

KERNEL(k_current_setting)
{
    SL_UNUSED(e);
    return current_setting(cx, args, out, sel, n, false);
}

KERNEL(k_current_setting2)
{
    SL_UNUSED(e);
    return current_setting(cx, args, out, sel, n, true);
}

KERNEL(k_set_config)
{
    SL_UNUSED(e);
    SlSettings *s = settings_current();
    FOR_SEL(sel, n, {
        const char *name = cstr(cx, &args[0].v.str[i]);
        bool local = args[2].v.b[i];
        if (s == NULL)
            return sl_error(cx->err, ERRCODE_OBJECT_NOT_IN_PREREQUISITE_STATE,
                            "set_config() needs a session");
        /* In a transaction block SET LOCAL lasts until its end; outside
         * one, is_local is a no-op, as in PostgreSQL. */
        if (settings_set(s, name, cstr(cx, &args[1].v.str[i]), local ? SET_LOCAL : SET_SESSION,
                         settings_in_block(s), NULL, cx->err) < 0)
            return -1;
        text_out(cx, out, i, settings_get(s, name, NULL, cx->err));
    });
    return 0;
}

/* pg_sleep: sleeps in slices of at most 10 ms, checking the interrupt flag
 * between them.  Returns an empty text (PostgreSQL's void). */
KERNEL(k_pg_sleep)
{
    SL_UNUSED(e);
    FOR_SEL(sel, n, {
        double secs = args[0].v.f64[i];
        if (isnan(secs) || secs < 0)
            secs = 0;
        struct timespec start;
        clock_gettime(CLOCK_MONOTONIC, &start);
        for (;;) {
            if (ex_check_interrupt(cx->err) < 0)
                return -1;
            struct timespec now;
            clock_gettime(CLOCK_MONOTONIC, &now);
            double left = secs - ((double)(now.tv_sec - start.tv_sec) +
                                  (double)(now.tv_nsec - start.tv_nsec) / 1e9);
            if (left <= 0)
                break;
            double slice = left < 0.01 ? left : 0.01;
            struct timespec ts = {0, (long)(slice * 1e9)};
            nanosleep(&ts, NULL);
        }
        out->v.str[i].ptr = "";
        out->v.str[i].len = 0;
    });
    return 0;
}
