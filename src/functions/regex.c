/*
 * regex.c -- PostgreSQL's regular expression match operators over text:
 * ~, !~ (case-sensitive) and ~*, !~* (case-insensitive).
 *
 *   k_regex_match, k_regex_nomatch, k_regex_imatch, k_regex_inomatch
 *   k_regexp_like, k_regexp_count, k_regexp_instr, k_regexp_substr,
 *   k_regexp_replace, k_substring_regex (substring(string FROM pattern)
 *                      without capturing groups)
 *                      PostgreSQL 15's regexp functions, up to three
 *                      arguments; a match is ex_regex_find's (the
 *                      leftmost, then the longest or shortest by the
 *                      pattern's greediness); positions in characters
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
        const SlStr *pat, *flags;
        ExRegex *re;
    } e[RE_CACHE];
    int n;
} ReCache;

/* The compiled pattern p (from the cache, or compiled into it, the oldest
 * dropped); NULL with the error on err. */
static bool str_eq(const SlStr *a, const SlStr *b)
{
    return a->len == b->len && memcmp(a->ptr, b->ptr, a->len) == 0;
}

/* The compiled pattern p with the flag letters flags (NULL: none), from
 * the cache, or compiled into it, the oldest dropped; NULL with the error
 * on err. */
static ExRegex *cached(EvalCtx *cx, ReCache *c, const SlStr *p, const SlStr *flags, bool icase)
{
    static const SlStr none = {"", 0};
    if (flags == NULL)
        flags = &none;
    for (int k = 0; k < c->n; k++)
        if (str_eq(c->e[k].pat, p) && str_eq(c->e[k].flags, flags)) {
            if (k > 0) {
                __typeof__(c->e[0]) hit = c->e[k];
                memmove(&c->e[1], &c->e[0], sizeof(c->e[0]) * (size_t)k);
                c->e[0] = hit;
            }
            return c->e[0].re;
        }
    ExRegex *re = ex_regex_compile(cx->err, p->ptr, p->len, flags->ptr, flags->len, icase, false);
    if (re == NULL)
        return NULL;
    if (c->n == RE_CACHE)
        ex_regex_free(c->e[--c->n].re);
    memmove(&c->e[1], &c->e[0], sizeof(c->e[0]) * (size_t)c->n);
    c->e[0].re = re;
    c->e[0].pat = p;
    c->e[0].flags = flags;
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
            ExRegex *re = cached(cx, &cache, &p[i], NULL, icase);
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

/* ------------------------------------------------------ regexp functions */

/* The byte offset of character pos (1-based) of s; s->len past its end. */
static size_t char_offset(const SlStr *s, int64_t pos)
{
    size_t b = 0;
    for (int64_t c = 1; c < pos && b < s->len; c++)
        do
            b++;
        while (b < s->len && ((unsigned char)s->ptr[b] & 0xC0) == 0x80);
    return b;
}

/* The characters in the first b bytes of s. */
static int32_t char_count(const SlStr *s, size_t b)
{
    int32_t n = 0;
    for (size_t k = 0; k < b; k++)
        n += ((unsigned char)s->ptr[k] & 0xC0) != 0x80;
    return n;
}

/* The byte after the character that starts at byte b of s. */
static size_t next_char(const SlStr *s, size_t b)
{
    do
        b++;
    while (b < s->len && ((unsigned char)s->ptr[b] & 0xC0) == 0x80);
    return b;
}

/* The arguments of one row of a regexp function: the string, the
 * pattern, the flags (NULL: none), the start (1-based characters). */
typedef struct ReArgs {
    const SlStr *s, *p, *flags;
    int64_t start;
} ReArgs;

static int refuse_g(EvalCtx *cx, const char *fn)
{
    return sl_error(cx->err, ERRCODE_INVALID_PARAMETER_VALUE,
                    "%s does not support the \"global\" option", fn);
}

/* Checks the flags and the start of a regexp function called fn: 0, or
 * -1 with 22023 as PostgreSQL (the g flag only where global allows). */
static int check_args(EvalCtx *cx, const char *fn, const ReArgs *a, bool global)
{
    if (a->flags != NULL && !global && memchr(a->flags->ptr, 'g', a->flags->len) != NULL)
        return refuse_g(cx, fn);
    if (a->start < 1)
        return sl_error(cx->err, ERRCODE_INVALID_PARAMETER_VALUE,
                        "invalid value for parameter \"start\": %lld", (long long)a->start);
    return 0;
}

/* The row's arguments: args[2] is the start (start) or the flags (flags)
 * when the call has three. */
static ReArgs row_args(const Vector *args, int nargs, uint32_t i, bool start_third)
{
    ReArgs a = {&args[0].v.str[i], &args[1].v.str[i], NULL, 1};
    if (nargs == 3) {
        if (start_third)
            a.start = args[2].v.i32[i];
        else
            a.flags = &args[2].v.str[i];
    }
    return a;
}

typedef enum { RF_LIKE, RF_COUNT, RF_INSTR, RF_SUBSTR, RF_SUBSTRING } ReFn;

static int regexp_rows(EvalCtx *cx, const Expr *e, const Vector *args, Vector *out,
                       const uint32_t *sel, uint32_t n, ReFn fn)
{
    static const char *const names[] = {"regexp_like()", "regexp_count()", "regexp_instr()",
                                        "regexp_substr()", "substring()"};
    int nargs = e->nargs;
    ReCache cache = {.n = 0};
    int rc = 0;
    FOR_SEL(sel, n, {
        if (rc == 0 && (rc = ex_check_interrupt(cx->err)) == 0) {
            ReArgs a = row_args(args, nargs, i, fn != RF_LIKE);
            ExRegex *re = NULL;
            if ((rc = check_args(cx, names[fn], &a, false)) == 0 &&
                (re = cached(cx, &cache, a.p, a.flags, false)) == NULL)
                rc = -1;
            if (rc == 0 && fn == RF_SUBSTRING && ex_regex_groups(re) > 0)
                rc = sl_error(cx->err, ERRCODE_FEATURE_NOT_SUPPORTED,
                              "substring(string FROM pattern) with a parenthesized "
                              "subexpression is not supported");
            size_t at = char_offset(a.s, a.start), so = 0, eo = 0;
            int32_t count = 0;
            int m = 0;
            if (rc == 0 && fn == RF_LIKE) {
                m = ex_regex_test(cx->err, re, a.s->ptr, a.s->len);
                out->v.b[i] = m == 1;
            } else if (rc == 0 && a.start <= (int64_t)a.s->len + 1) {
                /* as PostgreSQL: a match ends where the next search
                 * starts, one character on after an empty one */
                while (at <= a.s->len &&
                       (m = ex_regex_find(cx->err, re, a.s->ptr, a.s->len, at, &so, &eo)) == 1) {
                    count++;
                    if (fn != RF_COUNT)
                        break;
                    at = eo == so ? (eo < a.s->len ? next_char(a.s, eo) : eo + 1) : eo;
                }
            }
            if (m < 0)
                rc = -1;
            else if (rc == 0 && fn == RF_COUNT)
                out->v.i32[i] = count;
            else if (rc == 0 && fn == RF_INSTR)
                out->v.i32[i] = count ? char_count(a.s, so) + 1 : 0;
            else if (rc == 0 && (fn == RF_SUBSTR || fn == RF_SUBSTRING)) {
                if (count) {
                    out->v.str[i].ptr = a.s->ptr + so;
                    out->v.str[i].len = (uint32_t)(eo - so);
                } else {
                    out->nulls[i] = 1;
                }
            }
        }
    });
    cache_free(&cache);
    return rc;
}

KERNEL(k_regexp_like) { return regexp_rows(cx, e, args, out, sel, n, RF_LIKE); }
KERNEL(k_regexp_count) { return regexp_rows(cx, e, args, out, sel, n, RF_COUNT); }
KERNEL(k_regexp_instr) { return regexp_rows(cx, e, args, out, sel, n, RF_INSTR); }
KERNEL(k_regexp_substr) { return regexp_rows(cx, e, args, out, sel, n, RF_SUBSTR); }
KERNEL(k_substring_regex) { return regexp_rows(cx, e, args, out, sel, n, RF_SUBSTRING); }

/* regexp_replace(string, pattern, replacement): the first match replaced;
 * in the replacement \& is the match and \\ a backslash; \1 to \9 are
 * 0A000 (PostgreSQL's choice of what a group captured is not PCRE2's). */
KERNEL(k_regexp_replace)
{
    SL_UNUSED(e);
    ReCache cache = {.n = 0};
    int rc = 0;
    FOR_SEL(sel, n, {
        if (rc == 0 && (rc = ex_check_interrupt(cx->err)) == 0) {
            const SlStr *s = &args[0].v.str[i], *p = &args[1].v.str[i], *r = &args[2].v.str[i];
            for (uint32_t k = 0; k + 1 < r->len && rc == 0; k++)
                if (r->ptr[k] == '\\' && r->ptr[k + 1] >= '1' && r->ptr[k + 1] <= '9')
                    rc = sl_error(cx->err, ERRCODE_FEATURE_NOT_SUPPORTED,
                                  "references to subexpressions (\\1 to \\9) in "
                                  "regexp_replace's replacement are not supported");
                else if (r->ptr[k] == '\\')
                    k++;
            ExRegex *re = rc == 0 ? cached(cx, &cache, p, NULL, false) : NULL;
            size_t so, eo;
            int m = re == NULL ? -1 : ex_regex_find(cx->err, re, s->ptr, s->len, 0, &so, &eo);
            if (m < 0) {
                rc = -1;
            } else if (m == 0) {
                out->v.str[i] = *s;
            } else {
                char *o = ex_alloc_budget(cx->arena, s->len + (eo - so + 1) * r->len + 1,
                                          cx->err);
                if (o == NULL) {
                    rc = -1;
                } else {
                    size_t k = 0;
                    memcpy(o, s->ptr, so);
                    k = so;
                    for (uint32_t j = 0; j < r->len; j++) {
                        if (r->ptr[j] == '\\' && j + 1 < r->len && r->ptr[j + 1] == '&') {
                            memcpy(o + k, s->ptr + so, eo - so);
                            k += eo - so;
                            j++;
                        } else if (r->ptr[j] == '\\' && j + 1 < r->len && r->ptr[j + 1] == '\\') {
                            o[k++] = '\\';
                            j++;
                        } else {
                            o[k++] = r->ptr[j];
                        }
                    }
                    memcpy(o + k, s->ptr + eo, s->len - eo);
                    k += s->len - eo;
                    out->v.str[i].ptr = o;
                    out->v.str[i].len = (uint32_t)k;
                }
            }
        }
    });
    cache_free(&cache);
    return rc;
}
