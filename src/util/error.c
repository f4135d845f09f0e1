/*
 * error.c -- SlError records (see error.h).
 */
#include "sluice/error.h"

#include <stdarg.h>
#include <stdio.h>

static char *vformat(const char *fmt, va_list ap)
{
    va_list ap2;
    va_copy(ap2, ap);
    int n = vsnprintf(NULL, 0, fmt, ap);
    char *p = sl_malloc((size_t)n + 1);
    vsnprintf(p, (size_t)n + 1, fmt, ap2);
    va_end(ap2);
    return p;
}

static void set(SlError *e, const char *sqlstate, int position, const char *fmt,
                va_list ap)
{
    if (sl_error_set(e))
        return;
    memcpy(e->sqlstate, sqlstate, 5);
    e->sqlstate[5] = '\0';
    e->message = vformat(fmt, ap);
    e->position = position;
}

int sl_error(SlError *e, const char *sqlstate, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    set(e, sqlstate, 0, fmt, ap);
    va_end(ap);
    return -1;
}

int sl_error_at(SlError *e, const char *sqlstate, int offset, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    set(e, sqlstate, offset >= 0 ? offset + 1 : 0, fmt, ap);
    va_end(ap);
    return -1;
}

void sl_error_detail(SlError *e, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    sl_free(e->detail);
    e->detail = vformat(fmt, ap);
    va_end(ap);
}

void sl_error_hint(SlError *e, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    sl_free(e->hint);
    e->hint = vformat(fmt, ap);
    va_end(ap);
}

void sl_error_context(SlError *e, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    sl_free(e->context);
    e->context = vformat(fmt, ap);
    va_end(ap);
}

void sl_error_clear(SlError *e)
{
    sl_free(e->context);
    sl_free(e->message);
    sl_free(e->detail);
    sl_free(e->hint);
    memset(e, 0, sizeof(*e));
}

void sl_error_move(SlError *dst, SlError *src)
{
    sl_error_clear(dst);
    *dst = *src;
    memset(src, 0, sizeof(*src));
}
