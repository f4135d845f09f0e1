/*
 * regex.c -- PostgreSQL's regular expression match operators over text:
 * ~, !~ (case-sensitive) and ~*, !~* (case-insensitive).
 *
 *   k_regex_match, k_regex_nomatch, k_regex_imatch, k_regex_inomatch
 *   k_regexp_like, k_regexp_count, k_regexp_instr, k_regexp_substr,
 *   k_regexp_replace, k_regexp_replace_n, k_substring_regex
 *                      (substring(string FROM pattern) without capturing
 *                      groups)
 *                      PostgreSQL 15's regexp functions with all their
 *                      optional arguments (start, N, endoption, flags,
 *                      subexpr: the whole match only); a match is
 *                      ex_regex_find's (the
 *                      leftmost, then the longest or shortest by the
 *                      pattern's greediness); positions in characters
 *
 *   k_similar, k_substring_similar
 *                      [NOT] SIMILAR TO [ESCAPE] and substring(... SIMILAR
 *                      ... ESCAPE ...), translated as PostgreSQL's
 *                      similar_escape does
 *   fn_srf_regexp_split  regexp_split_to_table, set-returning (ExSrfFns)
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

#include <stdlib.h>
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

static bool str_eq(const SlStr *a, const SlStr *b)
{
    return a->len == b->len && memcmp(a->ptr, b->ptr, a->len) == 0;
}

/* The pattern cached under the key (p, flags), moved to the front; NULL
 * when the cache has none. */
static ExRegex *cache_find(ReCache *c, const SlStr *p, const SlStr *flags)
{
    for (int k = 0; k < c->n; k++)
        if (str_eq(c->e[k].pat, p) && str_eq(c->e[k].flags, flags)) {
            if (k > 0) {
                __typeof__(c->e[0]) hit = c->e[k];
                memmove(&c->e[1], &c->e[0], sizeof(c->e[0]) * (size_t)k);
                c->e[0] = hit;
            }
            return c->e[0].re;
        }
    return NULL;
}

/* Keeps re under the key (p, flags), whose strings outlive the kernel
 * call (the argument vectors'); the oldest entry is dropped. */
static ExRegex *cache_put(ReCache *c, const SlStr *p, const SlStr *flags, ExRegex *re)
{
    if (c->n == RE_CACHE)
        ex_regex_free(c->e[--c->n].re);
    memmove(&c->e[1], &c->e[0], sizeof(c->e[0]) * (size_t)c->n);
    c->e[0].re = re;
    c->e[0].pat = p;
    c->e[0].flags = flags;
    c->n++;
    return re;
}

static const SlStr no_flags = {"", 0};

/* The compiled pattern p with the flag letters flags (NULL: none; a 'g'
 * in them is the caller's: it is left out of the compile), from the
 * cache, or compiled into it; NULL with the error on err. */
static ExRegex *cached(EvalCtx *cx, ReCache *c, const SlStr *p, const SlStr *flags, bool icase)
{
    if (flags == NULL)
        flags = &no_flags;
    ExRegex *re = cache_find(c, p, flags);
    if (re != NULL)
        return re;
    char buf[64];
    char *f = flags->len <= sizeof(buf) ? buf : arena_alloc(cx->arena, flags->len);
    size_t fl = 0;
    for (uint32_t k = 0; k < flags->len; k++)
        if (flags->ptr[k] != 'g')
            f[fl++] = flags->ptr[k];
    re = ex_regex_compile(cx->err, p->ptr, p->len, f, fl, icase, false);
    return re == NULL ? NULL : cache_put(c, p, flags, re);
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
 * pattern, the flags (NULL: none), the start (1-based characters), which
 * match (0: every one, regexp_replace's), where in it (endoption) and
 * which subexpression (0: the whole match). */
typedef struct ReArgs {
    const SlStr *s, *p, *flags;
    int64_t start, nth, endopt, subexpr;
} ReArgs;

typedef enum {
    RF_LIKE, RF_COUNT, RF_INSTR, RF_SUBSTR, RF_SUBSTRING, RF_REPLACE, RF_REPLACE_N, RF_MATCH
} ReFn;

static const char *const re_names[] = {"regexp_like()", "regexp_count()", "regexp_instr()",
                                       "regexp_substr()", "substring()", "regexp_replace()",
                                       "regexp_replace()", "regexp_match()"};

/* Where each function reads its optional arguments (-1: it has none
 * there; an index past the call's arguments: the default), as
 * PostgreSQL 15's signatures place them. */
enum { AT_START, AT_N, AT_ENDOPT, AT_FLAGS, AT_SUBEXPR };
static const int8_t re_layout[][5] = {
    [RF_LIKE] = {-1, -1, -1, 2, -1},     [RF_COUNT] = {2, -1, -1, 3, -1},
    [RF_INSTR] = {2, 3, 4, 5, 6},        [RF_SUBSTR] = {2, 3, -1, 4, 5},
    [RF_SUBSTRING] = {-1, -1, -1, -1, -1}, [RF_REPLACE] = {-1, -1, -1, 3, -1},
    [RF_REPLACE_N] = {3, 4, -1, 5, -1}, [RF_MATCH] = {-1, -1, -1, 2, -1},
};

static int bad_param(EvalCtx *cx, const char *name, int64_t v)
{
    return sl_error(cx->err, ERRCODE_INVALID_PARAMETER_VALUE,
                    "invalid value for parameter \"%s\": %lld", name, (long long)v);
}

/* Row i's arguments of a call of fn with nargs arguments, checked in
 * PostgreSQL's order (start, n, endoption, subexpr, then the flags: an
 * unknown letter, then a 'g' where fn takes none): 0, or -1 with 22023.
 * *glob: the flags have 'g'. */
static int row_args(EvalCtx *cx, ReFn fn, const Vector *args, int nargs, uint32_t i, ReArgs *a,
                    bool *glob)
{
    const int8_t *at = re_layout[fn];
    *a = (ReArgs){&args[0].v.str[i], &args[1].v.str[i], NULL, 1, 1, 0, 0};
    *glob = false;      /* also when an argument is refused below */
    if (at[AT_START] >= 0 && at[AT_START] < nargs &&
        (a->start = args[at[AT_START]].v.i32[i]) < 1)
        return bad_param(cx, "start", a->start);
    if (at[AT_N] >= 0 && at[AT_N] < nargs &&
        ((a->nth = args[at[AT_N]].v.i32[i]) < 0 || (a->nth == 0 && fn != RF_REPLACE_N)))
        return bad_param(cx, "n", a->nth);
    if (at[AT_ENDOPT] >= 0 && at[AT_ENDOPT] < nargs &&
        (a->endopt = args[at[AT_ENDOPT]].v.i32[i]) != 0 && a->endopt != 1)
        return bad_param(cx, "endoption", a->endopt);
    if (at[AT_SUBEXPR] >= 0 && at[AT_SUBEXPR] < nargs &&
        (a->subexpr = args[at[AT_SUBEXPR]].v.i32[i]) < 0)
        return bad_param(cx, "subexpr", a->subexpr);
    if (at[AT_FLAGS] >= 0 && at[AT_FLAGS] < nargs)
        a->flags = &args[at[AT_FLAGS]].v.str[i];
    for (uint32_t k = 0; a->flags != NULL && k < a->flags->len; k++) {
        char c = a->flags->ptr[k];
        if (c == 'g')
            *glob = true;
        else if (strchr("bceimnpqstwx", c) == NULL || c == '\0') {
            /* the letter whole, as PostgreSQL prints it */
            size_t l = 1;
            while (k + l < a->flags->len && ((unsigned char)a->flags->ptr[k + l] & 0xC0) == 0x80)
                l++;
            sl_error(cx->err, ERRCODE_INVALID_PARAMETER_VALUE,
                     "invalid regular expression option: \"%.*s\"", (int)l, a->flags->ptr + k);
            if (fn == RF_REPLACE && k == 0 && c >= '0' && c <= '9')
                sl_error_hint(cx->err, "If you meant to use regexp_replace() with a start "
                                       "parameter, cast the fourth argument to integer "
                                       "explicitly.");
            return -1;
        }
    }
    if (*glob && fn != RF_REPLACE && fn != RF_REPLACE_N) {
        sl_error(cx->err, ERRCODE_INVALID_PARAMETER_VALUE,
                 "%s does not support the \"global\" option", re_names[fn]);
        if (fn == RF_MATCH)
            sl_error_hint(cx->err, "Use the regexp_matches function instead.");
        return -1;
    }
    return 0;
}

/* The characters of s. */
static int64_t char_len(const SlStr *s)
{
    return char_count(s, s->len);
}

/* Finds the matches of re in a->s from a->start on, as PostgreSQL steps
 * through them (a match ends where the next search starts, one
 * character on after an empty one), calling each_cb for each until it
 * returns 0 or none is left: 0, or -1 with the error. */
typedef int (*MatchCb)(void *arg, size_t so, size_t eo);

static int each_match(EvalCtx *cx, ExRegex *re, const ReArgs *a, MatchCb each_cb, void *arg)
{
    if (a->start > char_len(a->s) + 1)
        return 0;
    size_t at = char_offset(a->s, a->start), so, eo;
    int m = ex_regex_subject(cx->err, re, a->s->ptr, a->s->len);
    while (m == 0 && at <= a->s->len) {
        if ((m = ex_regex_find(cx->err, re, a->s->ptr, a->s->len, at, &so, &eo)) <= 0)
            break;
        m = 0;
        if (each_cb(arg, so, eo) == 0)
            break;
        at = eo == so ? (eo < a->s->len ? next_char(a->s, eo) : eo + 1) : eo;
    }
    ex_regex_subject(cx->err, re, NULL, 0);
    return m < 0 ? -1 : 0;
}

/* Counts the matches, stopping at the stop-th (0: never); the last one
 * counted is [so, eo). */
typedef struct NthMatch {
    int64_t count, stop;
    size_t so, eo;
} NthMatch;

static int nth_cb(void *arg, size_t so, size_t eo)
{
    NthMatch *m = arg;
    m->count++;
    m->so = so;
    m->eo = eo;
    return m->count != m->stop;
}

static int match_array(EvalCtx *cx, ExRegex *re, const SlStr *s, size_t so, size_t eo,
                       SlStr *out);

static int regexp_rows(EvalCtx *cx, const Expr *e, const Vector *args, Vector *out,
                       const uint32_t *sel, uint32_t n, ReFn fn)
{
    int nargs = e->nargs;
    ReCache cache = {.n = 0};
    int rc = 0;
    FOR_SEL(sel, n, {
        if (rc == 0 && (rc = ex_check_interrupt(cx->err)) == 0) {
            ReArgs a;
            bool glob;
            ExRegex *re = NULL;
            if ((rc = row_args(cx, fn, args, nargs, i, &a, &glob)) == 0 &&
                (re = cached(cx, &cache, a.p, a.flags, false)) == NULL)
                rc = -1;
            /* subexpr: with no parenthesized subexpression the whole
             * match is the first, as in PostgreSQL; substring(... FROM
             * pattern) returns the first group's text when there is one */
            int groups = rc == 0 ? ex_regex_groups(re) : 0;
            bool past_groups = a.subexpr > (groups > 0 ? groups : 1);
            int want = fn == RF_SUBSTRING && groups > 0 ? 1
                       : a.subexpr > 0 && groups > 0 && !past_groups ? (int)a.subexpr : 0;
            NthMatch m = {0, fn == RF_COUNT ? 0 : a.nth, 0, 0};
            if (rc == 0 && fn == RF_LIKE) {
                int t = ex_regex_test(cx->err, re, a.s->ptr, a.s->len);
                if (t < 0)
                    rc = -1;
                else
                    out->v.b[i] = t == 1;
            } else if (rc == 0 && each_match(cx, re, &a, nth_cb, &m) < 0) {
                rc = -1;
            }
            bool found = m.count >= a.nth && !past_groups;
            if (rc == 0 && found && want > 0) {
                size_t *caps = arena_alloc(cx->arena, sizeof(size_t) * 2 * (size_t)groups);
                if (ex_regex_subject(cx->err, re, a.s->ptr, a.s->len) < 0 ||
                    ex_regex_captures(cx->err, re, a.s->ptr, a.s->len, m.so, m.eo, caps) < 0) {
                    rc = -1;
                } else if (caps[2 * (want - 1)] == SIZE_MAX) {
                    found = false;
                } else {
                    m.so = caps[2 * (want - 1)];
                    m.eo = caps[2 * (want - 1) + 1];
                }
                ex_regex_subject(cx->err, re, NULL, 0);
            }
            if (rc == 0 && fn == RF_COUNT)
                out->v.i32[i] = (int32_t)m.count;
            else if (rc == 0 && fn == RF_INSTR)
                out->v.i32[i] = !found ? 0 : char_count(a.s, a.endopt ? m.eo : m.so) + 1;
            else if (rc == 0 && fn == RF_MATCH && !found)
                out->nulls[i] = 1;
            else if (rc == 0 && fn == RF_MATCH)
                rc = ex_regex_subject(cx->err, re, a.s->ptr, a.s->len) < 0 ||
                             match_array(cx, re, a.s, m.so, m.eo, &out->v.str[i]) < 0
                         ? -1
                         : 0;
            else if (rc == 0 && (fn == RF_SUBSTR || fn == RF_SUBSTRING)) {
                if (found) {
                    out->v.str[i].ptr = a.s->ptr + m.so;
                    out->v.str[i].len = (uint32_t)(m.eo - m.so);
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
/* regexp_match(string, pattern [, flags]): the first match's text[]
 * (match_array), or NULL when there is none. */
KERNEL(k_regexp_match) { return regexp_rows(cx, e, args, out, sel, n, RF_MATCH); }

/* ------------------------------------------------------ regexp_replace */

/* The result of one row of regexp_replace, built in the batch's arena:
 * the string with the replacements, grown by doubling. */
typedef struct Replacer {
    EvalCtx     *cx;
    const SlStr *s, *r;
    int64_t      nth, count;  /* nth: the match to replace, 0 every one */
    size_t       done;        /* bytes of s copied (or replaced) so far */
    char        *o;
    size_t       k, cap;
    int          rc;
} Replacer;

static void rep_put(Replacer *x, const char *p, size_t len)
{
    if (x->rc != 0 || len == 0)
        return;
    if (x->k + len > x->cap) {
        size_t cap = x->cap * 2, want = x->k + len + x->s->len;
        if (cap < want)
            cap = want;
        char *o = ex_alloc_budget(x->cx->arena, cap, x->cx->err);
        if (o == NULL) {
            x->rc = -1;
            return;
        }
        if (x->k > 0)
            memcpy(o, x->o, x->k);
        x->o = o;
        x->cap = cap;
    }
    memcpy(x->o + x->k, p, len);
    x->k += len;
}

/* One match: replaced when it is the one asked for (or every one is);
 * in the replacement \& is the match and \\ a backslash. */
static int rep_cb(void *arg, size_t so, size_t eo)
{
    Replacer *x = arg;
    x->count++;
    if (x->nth > 0 && x->count < x->nth)
        return 1;
    rep_put(x, x->s->ptr + x->done, so - x->done);
    const SlStr *r = x->r;
    for (uint32_t j = 0; j < r->len; j++) {
        if (r->ptr[j] == '\\' && j + 1 < r->len && r->ptr[j + 1] == '&') {
            rep_put(x, x->s->ptr + so, eo - so);
            j++;
        } else if (r->ptr[j] == '\\' && j + 1 < r->len && r->ptr[j + 1] == '\\') {
            rep_put(x, "\\", 1);
            j++;
        } else {
            rep_put(x, &r->ptr[j], 1);
        }
    }
    x->done = eo;
    return x->rc == 0 && x->nth == 0;
}

/* regexp_replace(string, pattern, replacement [, flags]) and
 * (string, pattern, replacement, start [, N [, flags]]): the N-th match
 * at or after start replaced (N 0, or no N and the g flag: every one);
 * \1 to \9 in the replacement are 0A000 (PostgreSQL's choice of what a
 * group captured is not PCRE2's). */
static int replace_rows(EvalCtx *cx, const Expr *e, const Vector *args, Vector *out,
                        const uint32_t *sel, uint32_t n, ReFn fn)
{
    ReCache cache = {.n = 0};
    int rc = 0;
    FOR_SEL(sel, n, {
        if (rc == 0 && (rc = ex_check_interrupt(cx->err)) == 0) {
            ReArgs a;
            bool glob;
            const SlStr *r = &args[2].v.str[i];
            rc = row_args(cx, fn, args, e->nargs, i, &a, &glob);
            for (uint32_t k = 0; rc == 0 && k + 1 < r->len; k++)
                if (r->ptr[k] == '\\' && r->ptr[k + 1] >= '1' && r->ptr[k + 1] <= '9')
                    rc = sl_error(cx->err, ERRCODE_FEATURE_NOT_SUPPORTED,
                                  "references to subexpressions (\\1 to \\9) in "
                                  "regexp_replace's replacement are not supported");
                else if (r->ptr[k] == '\\')
                    k++;
            ExRegex *re = rc == 0 ? cached(cx, &cache, a.p, a.flags, false) : NULL;
            if (rc == 0 && re == NULL)
                rc = -1;
            Replacer x = {cx, a.s, r, a.nth, 0, 0, NULL, 0, 0, 0};
            if (fn == RF_REPLACE || e->nargs < 5)
                x.nth = glob ? 0 : 1;
            if (rc == 0 && (rc = each_match(cx, re, &a, rep_cb, &x)) == 0 && (rc = x.rc) == 0) {
                if (x.done == 0 && x.o == NULL) {
                    out->v.str[i] = *a.s;
                } else {
                    rep_put(&x, a.s->ptr + x.done, a.s->len - x.done);
                    if ((rc = x.rc) == 0) {
                        out->v.str[i].ptr = x.o != NULL ? x.o : "";
                        out->v.str[i].len = (uint32_t)x.k;
                    }
                }
            }
        }
    });
    cache_free(&cache);
    return rc;
}

KERNEL(k_regexp_replace) { return replace_rows(cx, e, args, out, sel, n, RF_REPLACE); }
KERNEL(k_regexp_replace_n) { return replace_rows(cx, e, args, out, sel, n, RF_REPLACE_N); }

/* ------------------------------------------------------ SIMILAR TO */

/* A SIMILAR TO pattern translated to an ARE as PostgreSQL's
 * similar_escape does (% is .*, _ is ., ( is (?:, \ . ^ $ are quoted, an
 * escaped character is \ and it, bracket expressions kept), cut into
 * three parts at the escape-double-quote separators: part[1] is what
 * substring(... SIMILAR ...) returns.  No separator: the pattern is
 * part[1]; one: part[2] is empty. */
typedef struct Similar {
    SlStr part[3];
} Similar;

/* Translates p with the escape esc (NULL: the default, a backslash; an
 * empty one: none) into s, its text in the batch's arena: 0, or -1 with
 * 22025 for an escape of more than one character, 2200C for more than
 * two separators. */
static int similar_translate(EvalCtx *cx, const SlStr *p, const SlStr *esc, Similar *out)
{
    const char *e = "\\";
    size_t elen = 1;
    if (esc != NULL) {
        e = esc->ptr;
        elen = esc->len;
        if (elen > 0 && char_count(esc, elen) > 1) {
            sl_error(cx->err, ERRCODE_INVALID_ESCAPE_SEQUENCE, "invalid escape string");
            sl_error_hint(cx->err, "Escape string must be empty or one character.");
            return -1;
        }
    }
    char *r = arena_alloc(cx->arena, 3 * (size_t)p->len + 1), *start = r;
    int nsep = 0;
    size_t cut[2] = {0, 0};
    bool afterescape = false, incharclass = false;
    for (size_t k = 0; k < p->len;) {
        size_t l = next_char(p, k) - k;
        const char *c = p->ptr + k;
        if (afterescape) {
            if (l == 1 && *c == '"' && !incharclass) {
                if (nsep == 2)
                    return sl_error(cx->err, ERRCODE_INVALID_USE_OF_ESCAPE_CHARACTER,
                                    "SQL regular expression may not contain more than two "
                                    "escape-double-quote separators");
                cut[nsep++] = (size_t)(r - start);
            } else {
                *r++ = '\\';
                memcpy(r, c, l);
                r += l;
            }
            afterescape = false;
        } else if (elen > 0 && l == elen && memcmp(c, e, l) == 0) {
            afterescape = true;
        } else if (l > 1) {
            memcpy(r, c, l);
            r += l;
        } else if (incharclass) {
            if (*c == '\\')
                *r++ = '\\';
            *r++ = *c;
            if (*c == ']')
                incharclass = false;
        } else if (*c == '[') {
            *r++ = '[';
            incharclass = true;
        } else if (*c == '%') {
            *r++ = '.';
            *r++ = '*';
        } else if (*c == '_') {
            *r++ = '.';
        } else if (*c == '(') {
            memcpy(r, "(?:", 3);
            r += 3;
        } else if (*c == '\\' || *c == '.' || *c == '^' || *c == '$') {
            *r++ = '\\';
            *r++ = *c;
        } else {
            *r++ = *c;
        }
        k += l;
    }
    size_t end = (size_t)(r - start);
    if (nsep == 0) {
        cut[0] = 0;
        cut[1] = end;
    } else if (nsep == 1) {
        cut[1] = end;
    }
    out->part[0] = (SlStr){start, (uint32_t)cut[0]};
    out->part[1] = (SlStr){start + cut[0], (uint32_t)(cut[1] - cut[0])};
    out->part[2] = (SlStr){start + cut[1], (uint32_t)(end - cut[1])};
    return 0;
}

/* "(?:" a ")(?:" b ")..." of the n parts, in the arena. */
static SlStr similar_join(Arena *a, const SlStr *parts, int n)
{
    size_t len = 0;
    for (int k = 0; k < n; k++)
        len += parts[k].len + 4;
    char *b = arena_alloc(a, len + 1), *o = b;
    for (int k = 0; k < n; k++) {
        memcpy(o, "(?:", 3);
        memcpy(o + 3, parts[k].ptr, parts[k].len);
        o[3 + parts[k].len] = ')';
        o += parts[k].len + 4;
    }
    return (SlStr){b, (uint32_t)len};
}

static ExRegex *compile_whole(EvalCtx *cx, SlStr p)
{
    return ex_regex_compile(cx->err, p.ptr, p.len, NULL, 0, false, true);
}

static const SlStr backslash = {"\\", 1};

/* string [NOT] SIMILAR TO pattern [ESCAPE escape]: the whole string
 * matches the translated pattern (e->negate: NOT). */
KERNEL(k_similar)
{
    ReCache cache = {.n = 0};
    int rc = 0;
    FOR_SEL(sel, n, {
        if (rc == 0 && (rc = ex_check_interrupt(cx->err)) == 0) {
            const SlStr *s = &args[0].v.str[i], *p = &args[1].v.str[i];
            const SlStr *esc = e->nargs == 3 ? &args[2].v.str[i] : NULL;
            ExRegex *re = cache_find(&cache, p, esc != NULL ? esc : &backslash);
            Similar sim;
            if (re == NULL && similar_translate(cx, p, esc, &sim) == 0 &&
                (re = compile_whole(cx, similar_join(cx->arena, sim.part, 3))) != NULL)
                cache_put(&cache, p, esc != NULL ? esc : &backslash, re);
            int m = re == NULL ? -1 : ex_regex_test(cx->err, re, s->ptr, s->len);
            if (m < 0)
                rc = -1;
            else
                out->v.b[i] = (uint8_t)((m == 1) != e->negate);
        }
    });
    cache_free(&cache);
    return rc;
}

/* The compiled parts of one SIMILAR pattern for substring: each part
 * alone and the last two together, every one matching whole strings. */
typedef struct SimilarRes {
    const SlStr *p, *esc;
    ExRegex     *r[4];      /* part 0, 1, 2; parts 1 and 2 */
} SimilarRes;

static void similar_res_free(SimilarRes *c)
{
    for (int k = 0; k < 4; k++)
        if (c->r[k] != NULL)
            ex_regex_free(c->r[k]);
    memset(c, 0, sizeof(*c));
}

static int similar_res(EvalCtx *cx, SimilarRes *c, const SlStr *p, const SlStr *esc)
{
    if (c->p != NULL && str_eq(c->p, p) && str_eq(c->esc, esc))
        return 0;
    similar_res_free(c);
    Similar sim;
    if (similar_translate(cx, p, esc, &sim) < 0)
        return -1;
    for (int k = 0; k < 3; k++)
        if ((c->r[k] = compile_whole(cx, similar_join(cx->arena, &sim.part[k], 1))) == NULL)
            return -1;
    if ((c->r[3] = compile_whole(cx, similar_join(cx->arena, &sim.part[1], 2))) == NULL)
        return -1;
    c->p = p;
    c->esc = esc;
    return 0;
}

/* Whether re matches s's bytes [from, to) whole: 1, 0, or -1. */
static int whole_at(EvalCtx *cx, ExRegex *re, const SlStr *s, size_t from, size_t to)
{
    return ex_regex_test(cx->err, re, s->ptr + from, to - from);
}

/* substring(string SIMILAR pattern ESCAPE escape) and the older
 * substring(string FROM pattern FOR escape): when the whole string
 * matches, the part between the separators (the whole string without
 * them), the first part as short as it can be and the second as long,
 * as PostgreSQL's ^(?:p1){1,1}?(p2){1,1}(?:p3)$ picks it; else NULL. */
KERNEL(k_substring_similar)
{
    SL_UNUSED(e);
    SimilarRes c;
    memset(&c, 0, sizeof(c));
    int rc = 0;
    FOR_SEL(sel, n, {
        if (rc == 0 && (rc = ex_check_interrupt(cx->err)) == 0 &&
            (rc = similar_res(cx, &c, &args[1].v.str[i], &args[2].v.str[i])) == 0) {
            const SlStr *s = &args[0].v.str[i];
            int m = 0;
            size_t from = 0, to = s->len;
            for (from = 0; from <= s->len && m == 0; from = next_char(s, from)) {
                if ((m = whole_at(cx, c.r[0], s, 0, from)) == 1 &&
                    (m = whole_at(cx, c.r[3], s, from, s->len)) == 1)
                    break;
                if (from == s->len || (rc = ex_check_interrupt(cx->err)) != 0)
                    break;
            }
            while (rc == 0 && m == 1) {
                if ((m = whole_at(cx, c.r[1], s, from, to)) == 1 &&
                    (m = whole_at(cx, c.r[2], s, to, s->len)) == 1)
                    break;
                if (m < 0 || to == from)
                    break;
                m = 1;
                do
                    to--;
                while (to > from && ((unsigned char)s->ptr[to] & 0xC0) == 0x80);
            }
            if (rc == 0 && m < 0)
                rc = -1;
            else if (rc == 0 && m == 1) {
                out->v.str[i].ptr = s->ptr + from;
                out->v.str[i].len = (uint32_t)(to - from);
            } else if (rc == 0) {
                out->nulls[i] = 1;
            }
        }
    });
    similar_res_free(&c);
    return rc;
}

/* ------------------------------------------------ regexp_split_to_table */

static void split_end(ExSrfIter *it)
{
    if (it->re != NULL)
        ex_regex_free(it->re);
    free(it->re_key);
    it->re = NULL;
    it->re_key = NULL;
    it->re_keylen = 0;
}

/* The pattern p with the flags (without their g) compiled into it->re,
 * or kept from the last row when the pattern and flags are the same. */
static int srf_compile(EvalCtx *cx, ExSrfIter *it, const SlStr *p, const SlStr *flags)
{
    char fbuf[64];
    char *f = flags->len <= sizeof(fbuf) ? fbuf : arena_alloc(cx->arena, flags->len);
    size_t fl = 0;
    for (uint32_t k = 0; k < flags->len; k++)
        if (flags->ptr[k] != 'g')
            f[fl++] = flags->ptr[k];
    size_t klen = (size_t)p->len + 1 + fl;
    if (it->re != NULL && it->re_keylen == klen && memcmp(it->re_key, p->ptr, p->len) == 0 &&
        it->re_key[p->len] == '\0' && memcmp(it->re_key + p->len + 1, f, fl) == 0)
        return 0;
    split_end(it);
    if ((it->re = ex_regex_compile(cx->err, p->ptr, p->len, f, fl, false, false)) == NULL)
        return -1;
    it->re_key = sl_malloc(klen);
    if (p->len > 0)
        memcpy(it->re_key, p->ptr, p->len);
    it->re_key[p->len] = '\0';
    if (fl > 0)
        memcpy(it->re_key + p->len + 1, f, fl);
    it->re_keylen = klen;
    return 0;
}

/* regexp_split_to_table(string, pattern [, flags]) (and the pieces of
 * regexp_split_to_array): the pattern compiled once while it stays the
 * same from row to row. */
static int split_start(EvalCtx *cx, const Expr *e, const Vector *args, uint32_t row,
                       ExSrfIter *it)
{
    const SlStr *s = &args[0].v.str[row], *p = &args[1].v.str[row];
    const SlStr *flags = e->nargs > 2 ? &args[2].v.str[row] : &no_flags;
    for (uint32_t k = 0; k < flags->len; k++)
        if (flags->ptr[k] == 'g')
            return sl_error(cx->err, ERRCODE_INVALID_PARAMETER_VALUE,
                            "%s() does not support the \"global\" option", e->fn->name);
    if (srf_compile(cx, it, p, flags) < 0)
        return -1;
    it->s = *s;
    it->pos = it->search = it->prev_end = 0;
    it->done = false;
    return ex_regex_subject(cx->err, it->re, s->ptr, s->len);
}

/* The next piece: up to the next match that is not degenerate (one that
 * starts before the end and ends past the previous match), as
 * PostgreSQL's setup_regexp_matches with ignore_degenerate; the last
 * piece runs to the end. */
static int split_next(EvalCtx *cx, ExSrfIter *it, Vector *out, uint32_t at)
{
    if (it->done)
        return 0;
    const SlStr *s = &it->s;
    while (it->search <= s->len) {
        if (ex_check_interrupt(cx->err) < 0)
            return -1;
        size_t so, eo;
        int m = ex_regex_find(cx->err, it->re, s->ptr, s->len, it->search, &so, &eo);
        if (m < 0)
            return -1;
        if (m == 0)
            break;
        it->search = eo == so ? (eo < s->len ? next_char(s, eo) : eo + 1) : eo;
        bool keep = so < s->len && eo > it->prev_end;
        it->prev_end = eo;
        if (keep) {
            out->v.str[at].ptr = s->ptr + it->pos;
            out->v.str[at].len = (uint32_t)(so - it->pos);
            it->pos = eo;
            return 1;
        }
    }
    out->v.str[at].ptr = s->ptr + it->pos;
    out->v.str[at].len = (uint32_t)(s->len - it->pos);
    it->done = true;
    return 1;
}

const ExSrfFns fn_srf_regexp_split = {split_start, split_next, split_end, 0, {NULL, NULL}, {0, 0}};

/* regexp_split_to_array(string, pattern [, flags]): the pieces
 * regexp_split_to_table returns, as a text[]. */
KERNEL(k_regexp_split_to_array)
{
    ExSrfIter it;
    memset(&it, 0, sizeof(it));
    Vector piece;
    vector_init(&piece, cx->arena, sl_type(TYPE_TEXT), 1, false);
    int rc = 0;
    FOR_SEL(sel, n, {
        if (rc == 0 && (rc = ex_check_interrupt(cx->err)) == 0 &&
            (rc = split_start(cx, e, args, i, &it)) == 0) {
            ArrayBuild b;
            array_build_begin(&b, TYPE_TEXT);
            int m;
            while ((m = split_next(cx, &it, &piece, 0)) == 1)
                array_build_add(&b, &piece, 0);
            array_build_finish(&b, cx->arena, &out->v.str[i]);
            ex_regex_subject(cx->err, it.re, NULL, 0);
            if (m < 0)
                rc = -1;
        }
    });
    split_end(&it);
    return rc;
}

/* ------------------------------------------- regexp_match, regexp_matches */

/* The text[] of one match [so, eo) of re in s: the whole match when the
 * pattern has no parenthesized subexpression, else what each captured
 * (ex_regex_captures: PostgreSQL's choice of each group's text; NULL for
 * a group that took no part), in the batch's arena. */
static int match_array(EvalCtx *cx, ExRegex *re, const SlStr *s, size_t so, size_t eo,
                       SlStr *out)
{
    int groups = ex_regex_groups(re);
    ArrayBuild b;
    array_build_begin(&b, TYPE_TEXT);
    if (groups == 0) {
        ArrayElem el = {s->ptr + so, (int32_t)(eo - so), false};
        array_build_add_elem(&b, &el);
    } else {
        size_t *caps = arena_alloc(cx->arena, sizeof(size_t) * 2 * (size_t)groups);
        if (ex_regex_captures(cx->err, re, s->ptr, s->len, so, eo, caps) < 0) {
            array_build_finish(&b, cx->arena, out);
            return -1;
        }
        for (int g = 0; g < groups; g++) {
            bool none = caps[2 * g] == SIZE_MAX;
            ArrayElem el = {none ? NULL : s->ptr + caps[2 * g],
                            none ? -1 : (int32_t)(caps[2 * g + 1] - caps[2 * g]), none};
            array_build_add_elem(&b, &el);
        }
    }
    array_build_finish(&b, cx->arena, out);
    return 0;
}

/* regexp_matches(string, pattern [, flags]): a set of text[], the first
 * match's, or with the flag g every match's, stepping as regexp_count
 * does; no match, no row. */
static int matches_start(EvalCtx *cx, const Expr *e, const Vector *args, uint32_t row,
                         ExSrfIter *it)
{
    const SlStr *s = &args[0].v.str[row], *p = &args[1].v.str[row];
    const SlStr *flags = e->nargs > 2 ? &args[2].v.str[row] : &no_flags;
    it->all = memchr(flags->ptr, 'g', flags->len) != NULL;
    if (srf_compile(cx, it, p, flags) < 0)
        return -1;
    it->s = *s;
    it->search = 0;
    it->done = false;
    return ex_regex_subject(cx->err, it->re, s->ptr, s->len);
}

static int matches_next(EvalCtx *cx, ExSrfIter *it, Vector *out, uint32_t at)
{
    const SlStr *s = &it->s;
    if (it->done || it->search > s->len)
        return 0;
    if (ex_check_interrupt(cx->err) < 0)
        return -1;
    size_t so, eo;
    int m = ex_regex_find(cx->err, it->re, s->ptr, s->len, it->search, &so, &eo);
    if (m <= 0)
        return m;
    it->search = eo == so ? (eo < s->len ? next_char(s, eo) : eo + 1) : eo;
    it->done = !it->all;
    return match_array(cx, it->re, s, so, eo, &out->v.str[at]) < 0 ? -1 : 1;
}

const ExSrfFns fn_srf_regexp_matches = {matches_start, matches_next, split_end, 0,
                                        {NULL, NULL}, {0, 0}};
