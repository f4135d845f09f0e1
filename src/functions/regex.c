/*
 * regex.c -- PostgreSQL's regular expression match operators over text:
 * ~, !~ (case-sensitive) and ~*, !~* (case-insensitive).
 *
 *   k_regex_match, k_regex_nomatch, k_regex_imatch, k_regex_inomatch
 *
 * Every pattern is an advanced regular expression (ARE) with PostgreSQL's
 * meaning, run on PCRE2 through are.c's translation (ex_regex_compile:
 * 2201B for a bad pattern, as in PostgreSQL; 0A000 for what the
 * translation does not carry over; 54001 for a match past its bound, 57014
 * for one cancelled).  A kernel keeps a small cache of the patterns it
 * compiled (RE_CACHE, the most recent first), for the length of one
 * batch: a constant pattern costs one compile per batch.  Every row
 * checks the statement's interrupt flag first.
 */
#include "functions/kernels.h"
#include "sluice/functions.h"

#include <string.h>

/* The patterns one kernel call keeps compiled. */
#define RE_CACHE 4

typedef struct ReCache {
    struct {
        const SlStr *pat;
        ExRegex *re;
    } e[RE_CACHE];
    int n;
} ReCache;

/* The compiled pattern p (from the cache, or compiled into it, the oldest
 * dropped); NULL with the error on err. */
static ExRegex *cached(EvalCtx *cx, ReCache *c, const SlStr *p, bool icase)
{
    for (int k = 0; k < c->n; k++)
        if (c->e[k].pat->len == p->len && memcmp(c->e[k].pat->ptr, p->ptr, p->len) == 0) {
            if (k > 0) {
                ExRegex *re = c->e[k].re;
                const SlStr *pat = c->e[k].pat;
                memmove(&c->e[1], &c->e[0], sizeof(c->e[0]) * (size_t)k);
                c->e[0].re = re;
                c->e[0].pat = pat;
            }
            return c->e[0].re;
        }
    ExRegex *re = ex_regex_compile(cx->err, p->ptr, p->len, NULL, 0, icase, false);
    if (re == NULL)
        return NULL;
    if (c->n == RE_CACHE)
        ex_regex_free(c->e[--c->n].re);
    memmove(&c->e[1], &c->e[0], sizeof(c->e[0]) * (size_t)c->n);
    c->e[0].re = re;
    c->e[0].pat = p;
    c->n++;
    return re;
}

static void cache_free(ReCache *c)
{
    for (int k = 0; k < c->n; k++)
        ex_regex_free(c->e[k].re);
}

static int regex_rows(EvalCtx *cx, const Vector *args, Vector *out, const uint32_t *sel,
                      uint32_t n, bool icase, bool negate)
{
    const SlStr *a = args[0].v.str, *p = args[1].v.str;
    uint8_t *r = out->v.b;
    ReCache cache = {.n = 0};
    int rc = 0;
    FOR_SEL(sel, n, {
        if (rc == 0 && (rc = ex_check_interrupt(cx->err)) == 0) {
            ExRegex *re = cached(cx, &cache, &p[i], icase);
            int m = re == NULL ? -1 : ex_regex_test(cx->err, re, a[i].ptr, a[i].len);
            if (m < 0)
                rc = -1;
            else
                r[i] = (uint8_t)((m == 1) != negate);
        }
    });
    cache_free(&cache);
    return rc;
}

KERNEL(k_regex_match) { SL_UNUSED(e); return regex_rows(cx, args, out, sel, n, false, false); }
KERNEL(k_regex_nomatch) { SL_UNUSED(e); return regex_rows(cx, args, out, sel, n, false, true); }
KERNEL(k_regex_imatch) { SL_UNUSED(e); return regex_rows(cx, args, out, sel, n, true, false); }
KERNEL(k_regex_inomatch) { SL_UNUSED(e); return regex_rows(cx, args, out, sel, n, true, true); }
