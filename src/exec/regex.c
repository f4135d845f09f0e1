/*
 * regex.c -- PostgreSQL's regular expression match operators over text:
 * ~, !~ (case-sensitive) and ~*, !~* (case-insensitive).
 *
 *   k_regex_match, k_regex_nomatch, k_regex_imatch, k_regex_inomatch
 *
 * Patterns are POSIX extended regular expressions, compiled with the C
 * library's regcomp (PostgreSQL's advanced regular expressions are a
 * superset: the ERE subset behaves the same; back references and
 * PostgreSQL's escapes such as \d are not available).  A pattern is
 * compiled once per run of equal patterns in a batch, so a constant
 * pattern costs one regcomp per batch.  A pattern that does not compile is
 * 2201B, as in PostgreSQL.
 */
#include "exec/kernels.h"

#include <regex.h>

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
                int err = regcomp(&re, pat, REG_EXTENDED | REG_NOSUB | (icase ? REG_ICASE : 0));
                if (err != 0) {
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
