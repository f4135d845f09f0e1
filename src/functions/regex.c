/*
 * regex.c -- PostgreSQL's regular expression match operators over text:
 * ~, !~ (case-sensitive) and ~*, !~* (case-insensitive).
 *
 *   k_regex_match, k_regex_nomatch, k_regex_imatch, k_regex_inomatch
 *   ex_regex_too_complex   the bound below, for other users of regcomp
 *                          (a Kafka stream's topic_pattern)
 *
 * Patterns are POSIX extended regular expressions, compiled with the C
 * library's regcomp (PostgreSQL's advanced regular expressions are a
 * superset: the ERE subset behaves the same; back references and
 * PostgreSQL's escapes such as \d are not available).  A pattern is
 * compiled once per run of equal patterns in a batch, so a constant
 * pattern costs one regcomp per batch.  A pattern that does not compile is
 * 2201B, as in PostgreSQL.
 *
 * regcomp expands bounded repetitions into copies of their atom, in
 * memory it takes on its own, outside any budget: '((x{255}){255}){255}'
 * asks for gigabytes.  Before compiling, pattern_size estimates the
 * expanded size (each atom 1, a group the sum of its alternatives, a
 * bound {m,n} multiplies by n); past REGEX_MAX_SIZE the pattern is
 * refused with 2201B "regular expression is too complex", as PostgreSQL's
 * REG_ETOOBIG is (about 20 MB of glibc's automaton at the bound).
 */
#include "functions/kernels.h"
#include "sluice/functions.h"

#include <regex.h>

#define REGEX_MAX_SIZE 100000.0
#define REGEX_MAX_DEPTH 256

/* One open group of pattern_size: the alternatives before the current one,
 * the current one so far, and its last atom (what a bound repeats). */
typedef struct ReFrame {
    double alts, sum, last;
} ReFrame;

/* The pattern's size once regcomp has expanded its bounded repetitions,
 * saturated a little past REGEX_MAX_SIZE; groups nested deeper than
 * REGEX_MAX_DEPTH count as too complex. */
static double pattern_size(const char *p, size_t n)
{
    ReFrame st[REGEX_MAX_DEPTH + 1] = {{0, 0, 0}};
    int depth = 0;
    for (size_t i = 0; i < n; i++) {
        ReFrame *f = &st[depth];
        char c = p[i];
        if (c == '(') {
            if (depth == REGEX_MAX_DEPTH)
                return REGEX_MAX_SIZE * 2;
            st[++depth] = (ReFrame){0, 0, 0};
        } else if (c == ')' && depth > 0) {
            double w = f->alts + f->sum + 1;
            f = &st[--depth];
            f->sum += w;
            f->last = w;
        } else if (c == '|') {
            f->alts += f->sum;
            f->sum = f->last = 0;
        } else if (c == '{' && i + 1 < n && p[i + 1] >= '0' && p[i + 1] <= '9') {
            /* {m}, {m,}, {m,n}: the atom k times in all */
            double m = 0, hi = -1;
            size_t j = i + 1;
            while (j < n && p[j] >= '0' && p[j] <= '9' && m < 1e9)
                m = m * 10 + (p[j++] - '0');
            if (j < n && p[j] == ',') {
                j++;
                if (j < n && p[j] >= '0' && p[j] <= '9') {
                    hi = 0;
                    while (j < n && p[j] >= '0' && p[j] <= '9' && hi < 1e9)
                        hi = hi * 10 + (p[j++] - '0');
                } else {
                    hi = m + 1;
                }
            }
            if (j < n && p[j] == '}') {
                double k = SL_MAX(m, hi);
                if (k < 1)
                    k = 1;
                f->sum += f->last * (k - 1);
                f->last *= k;
                i = j;
            } else {
                f->sum += 1;
                f->last = 1;
            }
        } else if (c == '[') {
            /* a bracket expression is one atom: skip to its closing ']' */
            size_t j = i + 1;
            if (j < n && p[j] == '^')
                j++;
            if (j < n && p[j] == ']')
                j++;
            while (j < n && p[j] != ']') {
                if (p[j] == '[' && j + 1 < n && (p[j + 1] == ':' || p[j + 1] == '=' ||
                                                 p[j + 1] == '.')) {
                    char close = p[j + 1];
                    j += 2;
                    while (j + 1 < n && !(p[j] == close && p[j + 1] == ']'))
                        j++;
                    j += 2;
                } else {
                    j++;
                }
            }
            i = j;
            f->sum += 1;
            f->last = 1;
        } else if (c == '*' || c == '+' || c == '?') {
            /* a loop, not copies */
        } else {
            if (c == '\\')
                i++;
            f->sum += 1;
            f->last = 1;
        }
        if (f->sum > REGEX_MAX_SIZE * 2)
            return REGEX_MAX_SIZE * 2;
    }
    double total = 0;
    for (int d = 0; d <= depth; d++)
        total += st[d].alts + st[d].sum;
    return total;
}

bool ex_regex_too_complex(const char *pattern, size_t len)
{
    return pattern_size(pattern, len) > REGEX_MAX_SIZE;
}

static int regex_rows(EvalCtx *cx, const Vector *args, Vector *out, const uint32_t *sel,
                      uint32_t n, bool icase, bool negate)
{
    const SlStr *a = args[0].v.str, *p = args[1].v.str;
    uint8_t *r = out->v.b;
    regex_t re;
    bool have = false;
    const SlStr *cur = NULL;
    int rc = 0;
    FOR_SEL(sel, n, {
        if (rc == 0) {
            if (!have || cur->len != p[i].len || memcmp(cur->ptr, p[i].ptr, p[i].len) != 0) {
                if (have)
                    regfree(&re);
                have = false;
                char *pat = arena_strndup(cx->arena, p[i].ptr, p[i].len);
                int err = 0;
                if (ex_regex_too_complex(p[i].ptr, p[i].len))
                    rc = sl_error(cx->err, ERRCODE_INVALID_REGULAR_EXPRESSION,
                                  "invalid regular expression: regular expression is too "
                                  "complex");
                else
                    err = regcomp(&re, pat, REG_EXTENDED | REG_NOSUB | (icase ? REG_ICASE : 0));
                if (rc < 0) {
                    /* refused before compiling */
                } else if (err != 0) {
                    char msg[128];
                    regerror(err, &re, msg, sizeof(msg));
                    rc = sl_error(cx->err, ERRCODE_INVALID_REGULAR_EXPRESSION,
                                  "invalid regular expression: %s", msg);
                } else {
                    have = true;
                    cur = &p[i];
                }
            }
            if (rc == 0) {
                char *s = arena_strndup(cx->arena, a[i].ptr, a[i].len);
                r[i] = (uint8_t)((regexec(&re, s, 0, NULL, 0) == 0) != negate);
            }
        }
    });
    if (have)
        regfree(&re);
    return rc;
}

KERNEL(k_regex_match) { SL_UNUSED(e); return regex_rows(cx, args, out, sel, n, false, false); }
KERNEL(k_regex_nomatch) { SL_UNUSED(e); return regex_rows(cx, args, out, sel, n, false, true); }
KERNEL(k_regex_imatch) { SL_UNUSED(e); return regex_rows(cx, args, out, sel, n, true, false); }
KERNEL(k_regex_inomatch) { SL_UNUSED(e); return regex_rows(cx, args, out, sel, n, true, true); }
