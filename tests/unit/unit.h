/*
 * unit.h -- what every C unit test uses: CHECK and the closing summary.
 *
 *   CHECK(cond)                 count a failure and say where
 *   CHECK(cond, fmt, ...)       the same, with a message
 *   unit_done("name")           print the verdict; the exit status for main
 */
#ifndef SLUICE_TESTS_UNIT_H
#define SLUICE_TESTS_UNIT_H

#include <stdarg.h>
#include <stdio.h>

static int unit_failures;

__attribute__((format(printf, 4, 5), unused))
static void unit_fail(const char *file, int line, const char *cond, const char *fmt, ...)
{
    va_list ap;
    unit_failures++;
    fprintf(stderr, "%s:%d: CHECK failed: %s", file, line, cond);
    if (fmt[1]) {   /* fmt is "-" followed by the caller's format */
        fputs(": ", stderr);
        va_start(ap, fmt);
        vfprintf(stderr, fmt + 1, ap);
        va_end(ap);
    }
    fputc('\n', stderr);
}

#define CHECK(cond, ...)                                                  \
    do {                                                                  \
        if (!(cond))                                                      \
            unit_fail(__FILE__, __LINE__, #cond, "-" __VA_ARGS__);         \
    } while (0)

__attribute__((unused))
static int unit_done(const char *name)
{
    if (unit_failures) {
        fprintf(stderr, "%s: %d failure(s)\n", name, unit_failures);
        return 1;
    }
    printf("%s: ok\n", name);
    return 0;
}

#endif /* SLUICE_TESTS_UNIT_H */
