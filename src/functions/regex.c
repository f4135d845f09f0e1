/*
 * regex.c -- PostgreSQL's regular expression match operators over text:
 * ~, !~ (case-sensitive) and ~*, !~* (case-insensitive).
 *
 *   k_regex_match, k_regex_nomatch, k_regex_imatch, k_regex_inomatch
 *   ex_regex_too_complex   the bound below, for other users of regcomp
 *                          (a Kafka stream's topic_pattern)
 *   ex_regex_has_backref   whether a pattern has back references (which
 *                          topic_pattern refuses: it runs on regexec)
 *
 * A pattern without back references is a POSIX extended regular
 * expression, compiled with the C library's regcomp (PostgreSQL's advanced
 * regular expressions are a superset: the ERE subset behaves the same;
 * PostgreSQL's escapes such as \d are not available there).  A pattern is
 * compiled once per run of equal patterns in a batch, so a constant
 * pattern costs one regcomp per batch.  A pattern that does not compile is
 * 2201B, as in PostgreSQL.
 *
 * A pattern with back references (\1 to \9 outside a bracket expression)
 * runs on PCRE2 instead: glibc accepts them, but its regexec then
 * backtracks exponentially and nothing stops it, neither a cancel nor
 * statement_timeout.  to_pcre translates the ARE to PCRE2's syntax (a
 * backslash escapes inside [] too; \b \B \v \Z \m \M \y \Y \xhhh
 * spelled as PCRE2 spells them; a quantifier on a quantifier refused as
 * PostgreSQL does, where PCRE2 would read a possessive one; a back
 * reference to a group not yet closed refused as PostgreSQL does; 0A000
 * for the ARE syntax it does not carry over, and for a quantifier on a
 * back reference or on a group holding one: PostgreSQL's matcher gives
 * those a meaning of its own, '' ~ '(a)?\1?' and 'a' ~ '^(a)(\1*){2}$'
 * are false there), compiled with PCRE2_UTF,
 * PCRE2_DOTALL and PCRE2_DOLLAR_ENDONLY (a newline is an ordinary
 * character, as in PostgreSQL's default mode) and PCRE2_CASELESS for ~*.
 * Only the truth of a match is asked, so PCRE2's leftmost-first choice
 * among matches gives PostgreSQL's answers.  A match context bounds each
 * match (REGEX_MATCH_LIMIT backtracking steps, about 0.5 s; 64 MB of
 * backtracking frames); past it the statement ends with 54001 "regular
 * expression is too complex to match".  Patterns are compiled with
 * PCRE2_AUTO_CALLOUT: PCRE2 calls interrupt_cb before each item it
 * matches, which reads the statement's interrupt flag every
 * REGEX_CHECK_EVERY calls, so a cancel or statement_timeout stops one long
 * match from inside (57014, about a millisecond late), at the price of
 * about 1.4x on PCRE2 matches (docs/sql-reference.md).  Every row checks
 * the flag first too.
 *
 * regcomp expands bounded repetitions into copies of their atom, in
 * memory it takes on its own, outside any budget: '((x{255}){255}){255}'
 * asks for gigabytes.  Before compiling, pattern_size estimates the
 * expanded size (each atom 1, a group the sum of its alternatives, a
 * bound {m,n} multiplies by n); past REGEX_MAX_SIZE the pattern is
 * refused with 2201B "regular expression is too complex", as PostgreSQL's
 * REG_ETOOBIG is (about 20 MB of glibc's automaton at the bound); the same
 * bound holds for the patterns PCRE2 compiles.
 */
#include "functions/kernels.h"
#include "sluice/functions.h"

#include <regex.h>
#include <ctype.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#define PCRE2_CODE_UNIT_WIDTH 8
#include <pcre2.h>

#define REGEX_MAX_SIZE 100000.0
#define REGEX_MAX_DEPTH 256
/* PCRE2's bounds on one match: about 0.5 s of backtracking (with the
 * callouts; 0.3 s without), 64 MB of it */
#define REGEX_MATCH_LIMIT 10000000
#define REGEX_HEAP_LIMIT_KB 65536
/* The interrupt flag is read once per this many of PCRE2's callouts (a
 * power of two): about every few microseconds of a match. */
#define REGEX_CHECK_EVERY 256

/* The end of the bracket expression that opens at p[i] ('['), as regcomp
 * reads it (a backslash is an ordinary character inside): the index of its
 * closing ']', or n when it has none. */
static size_t bracket_end(const char *p, size_t n, size_t i)
{
    size_t j = i + 1;
    if (j < n && p[j] == '^')
        j++;
    if (j < n && p[j] == ']')
        j++;
    while (j < n && p[j] != ']') {
        if (p[j] == '[' && j + 1 < n && (p[j + 1] == ':' || p[j + 1] == '=' || p[j + 1] == '.')) {
            char close = p[j + 1];
            j += 2;
            while (j + 1 < n && !(p[j] == close && p[j + 1] == ']'))
                j++;
            j += 2;
        } else {
            j++;
        }
    }
    return SL_MIN(j, n);
}

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
            /* a bracket expression is one atom */
            i = bracket_end(p, n, i);
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

/* ------------------------------------------------------ back references */

/* True when the pattern has a back reference (\1 to \9) outside its bracket
 * expressions.  A bracket expression is read as regcomp reads it, which
 * never ends one before PostgreSQL would: whatever PostgreSQL reads as a
 * back reference is one here too. */
bool ex_regex_has_backref(const char *p, size_t n)
{
    for (size_t i = 0; i < n; i++) {
        if (p[i] == '[')
            i = bracket_end(p, n, i);
        else if (p[i] == '\\' && i + 1 < n && p[++i] >= '1' && p[i] <= '9')
            return true;
    }
    return false;
}

/* sl_error with a hint: -1 with code, the message and the hint on err. */
static int refuse(SlError *err, const char *code, const char *hint, const char *fmt, ...)
    SL_PRINTF(4, 5);
static int refuse(SlError *err, const char *code, const char *hint, const char *fmt, ...)
{
    char msg[160];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof(msg), fmt, ap);
    va_end(ap);
    sl_error(err, code, "%s", msg);
    sl_error_hint(err, "%s", hint);
    return -1;
}

/* The PCRE2 spelling of the escape \c of a PostgreSQL ARE (in a bracket
 * expression when in_bracket), or NULL for one this translation does not
 * have.  Punctuation escapes itself; \d \s \w \D \S \W and \a \e \f \n \r \t
 * mean the same in both. */
static const char *escape_pcre(char c, bool in_bracket)
{
    if (!((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9')))
        return "";
    switch (c) {
    case 'd': case 's': case 'w': case 'D': case 'S': case 'W':
    case 'a': case 'e': case 'f': case 'n': case 'r': case 't':
        return "";
    case 'v':
        return "\\x0b";                         /* PCRE2's \v is a class */
    case 'b':
        return "\\x08";                         /* backspace, as in PostgreSQL */
    }
    if (in_bracket)
        return NULL;
    switch (c) {
    case 'B': return "\\\\";                    /* PostgreSQL's synonym for \\ */
    case 'A': return "\\A";
    case 'Z': return "\\z";                     /* end of string only */
    case 'm': return "\\b(?=\\w)";              /* start of a word */
    case 'M': return "\\b(?<=\\w)";             /* end of a word */
    case 'y': return "\\b";
    case 'Y': return "\\B";
    }
    return NULL;
}

/* Writes the escape \e, which escape_pcre spells t, at o; its length. */
static size_t put_escape(char *o, char e, const char *t)
{
    if (*t != '\0')
        return (size_t)sprintf(o, "%s", t);
    o[0] = '\\';
    o[1] = e;
    return 2;
}

/* Writes the PCRE2 pattern that matches what the PostgreSQL ARE p matches
 * into *out (the arena's); 0, or -1 with the error on err: 2201B for what
 * PostgreSQL refuses too (a trailing \, a quantifier on a quantifier or
 * on a constraint, a back reference to a group not closed yet), 0A000 for ARE syntax this
 * translation does not carry over (a multi-digit back reference, escapes
 * such as \u, (?...) groups other than (?: and the lookarounds, a
 * quantifier on a back reference or on a group holding one).  Inside [] a
 * backslash escapes, as in AREs. */
static int to_pcre(SlError *err, Arena *arena, const char *p, size_t n, char **out, size_t *outlen)
{
    char *o = arena_alloc(arena, 10 * n + 1);
    size_t k = 0;
    bool after_quantifier = false, last_br = false, last_constraint = false;
    /* the open groups (their numbers, 0 for (?...); whether they hold a
     * back reference) and which capturing groups have closed */
    int *open_num = arena_alloc(arena, (n + 1) * sizeof(int)), depth = 0, ngroups = 0;
    bool *open_br = arena_alloc(arena, n + 1), *closed = arena_alloc(arena, n + 2);
    memset(closed, 0, n + 2);
    for (size_t i = 0; i < n; i++) {
        char c = p[i];
        bool quantifier = false, atom_br = false, constraint = c == '^' || c == '$';
        if (c == '\\') {
            if (i + 1 == n)
                return sl_error(err, ERRCODE_INVALID_REGULAR_EXPRESSION,
                                "invalid regular expression: invalid escape \\ sequence");
            char e = p[++i];
            if (e >= '1' && e <= '9') {
                if (i + 1 < n && p[i + 1] >= '0' && p[i + 1] <= '9')
                    return refuse(err, ERRCODE_FEATURE_NOT_SUPPORTED,
                                  "Back references are \\1 to \\9.",
                                  "back references past \\9 are not supported");
                if (e - '0' > ngroups || !closed[e - '0'])
                    return sl_error(err, ERRCODE_INVALID_REGULAR_EXPRESSION,
                                    "invalid regular expression: invalid backreference number");
                for (int d = 0; d < depth; d++)
                    open_br[d] = true;
                atom_br = true;
                o[k++] = '\\';
                o[k++] = e;
            } else if (e == 'x' && i + 1 < n && isxdigit((unsigned char)p[i + 1])) {
                /* \xhhh: the character of that code, however many digits */
                k += (size_t)sprintf(o + k, "\\x{");
                while (i + 1 < n && isxdigit((unsigned char)p[i + 1]))
                    o[k++] = p[++i];
                o[k++] = '}';
            } else {
                const char *t = escape_pcre(e, false);
                constraint = strchr("AZmMyY", e) != NULL;
                if (t == NULL)
                    return refuse(err, ERRCODE_FEATURE_NOT_SUPPORTED,
                                  "A pattern with back references has the escapes \\d "
                                  "\\s \\w \\D \\S \\W \\A \\Z \\m \\M \\y \\Y \\a \\b "
                                  "\\B \\e \\f \\n \\r \\t \\v \\xhhh.",
                                  "regular expression escape \\%c is not supported "
                                  "with back references", e);
                k += put_escape(o + k, e, t);
            }
        } else if (c == '[') {
            o[k++] = p[i++];
            if (i < n && p[i] == '^')
                o[k++] = p[i++];
            if (i < n && p[i] == ']')
                o[k++] = p[i++];
            for (; i < n && p[i] != ']'; i++) {
                if (p[i] == '[' && i + 1 < n &&
                    (p[i + 1] == ':' || p[i + 1] == '=' || p[i + 1] == '.')) {
                    char close = p[i + 1];
                    o[k++] = p[i++];
                    o[k++] = p[i++];
                    while (i + 1 < n && !(p[i] == close && p[i + 1] == ']'))
                        o[k++] = p[i++];
                    if (i + 1 < n) {
                        o[k++] = p[i++];
                        o[k++] = p[i];
                    }
                } else if (p[i] == '\\' && i + 1 < n) {
                    const char *t = escape_pcre(p[++i], true);
                    if (t == NULL)
                        return refuse(err, ERRCODE_FEATURE_NOT_SUPPORTED,
                                      "In a bracket expression a pattern with back "
                                      "references has the escapes \\d \\s \\w \\D \\S "
                                      "\\W \\a \\b \\e \\f \\n \\r \\t \\v.",
                                      "regular expression escape \\%c is not supported "
                                      "with back references", p[i]);
                    k += put_escape(o + k, p[i], t);
                } else {
                    o[k++] = p[i];
                }
            }
            if (i < n)
                o[k++] = ']';
        } else if (c == '(' && i + 1 < n && (p[i + 1] == '?' || p[i + 1] == '*')) {
            static const char *const groups[] = {"(?:", "(?=", "(?!", "(?<=", "(?<!"};
            size_t g = 0, len = 0;
            for (; g < SL_ARRAY_LEN(groups); g++) {
                len = strlen(groups[g]);
                if (n - i >= len && memcmp(p + i, groups[g], len) == 0)
                    break;
            }
            if (p[i + 1] == '*')
                return sl_error(err, ERRCODE_INVALID_REGULAR_EXPRESSION,
                                "invalid regular expression: quantifier operand invalid");
            if (g == SL_ARRAY_LEN(groups))
                return refuse(err, ERRCODE_FEATURE_NOT_SUPPORTED,
                              "A pattern with back references has the groups (?:...), "
                              "(?=...), (?!...), (?<=...) and (?<!...).",
                              "this (?...) group is not supported with back references");
            memcpy(o + k, groups[g], len);
            k += len;
            i += len - 1;
            open_num[depth] = g == 0 ? 0 : -1;        /* -1: a lookaround */
            open_br[depth++] = false;
        } else if (c == '(') {
            o[k++] = c;
            open_num[depth] = ++ngroups;
            open_br[depth++] = false;
        } else if (c == ')' && depth > 0) {
            o[k++] = c;
            depth--;
            if (open_num[depth] > 0)
                closed[open_num[depth]] = true;
            atom_br = open_br[depth];
            constraint = open_num[depth] < 0;
        } else if (c == '*' || c == '+' || c == '?' || c == '{') {
            size_t j = i;
            if (c == '{') {
                /* a bound {m}, {m,}, {m,n}; else a literal brace */
                j = i + 1;
                while (j < n && p[j] >= '0' && p[j] <= '9')
                    j++;
                if (j > i + 1 && j < n && p[j] == ',')
                    for (j++; j < n && p[j] >= '0' && p[j] <= '9'; j++)
                        ;
                if (j == i + 1 || j >= n || p[j] != '}') {
                    o[k++] = '\\';
                    o[k++] = '{';
                    after_quantifier = last_br = last_constraint = false;
                    continue;
                }
            }
            if (after_quantifier || last_constraint)
                return sl_error(err, ERRCODE_INVALID_REGULAR_EXPRESSION,
                                "invalid regular expression: quantifier operand invalid");
            if (last_br)
                return refuse(err, ERRCODE_FEATURE_NOT_SUPPORTED,
                              "PostgreSQL's matcher gives a repeated back reference, or a "
                              "repeated group holding one, a meaning of its own; write the "
                              "repetitions out.",
                              "a quantifier on a back reference, or on a group holding one, "
                              "is not supported");
            memcpy(o + k, p + i, j - i + 1);
            k += j - i + 1;
            i = j;
            if (i + 1 < n && p[i + 1] == '?')           /* non-greedy: same truth */
                o[k++] = p[++i];
            quantifier = true;
        } else {
            o[k++] = c;
        }
        after_quantifier = quantifier;
        last_br = atom_br;
        last_constraint = constraint;
    }
    o[k] = '\0';
    *out = o;
    *outlen = k;
    return 0;
}

/* One compiled pattern of a batch: glibc's, or PCRE2's for a pattern with
 * back references. */
typedef struct Compiled {
    bool pcre;
    regex_t re;
    pcre2_code *code;
    pcre2_match_data *md;
    pcre2_match_context *mctx;
    unsigned callouts;      /* interrupt_cb's count */
} Compiled;

/* PCRE2's automatic callout, before each item of the pattern it matches:
 * every REGEX_CHECK_EVERY calls it reads the statement's interrupt flag,
 * and a cancel or statement_timeout ends the match (PCRE2_ERROR_CALLOUT;
 * match turns it into 57014). */
static int interrupt_cb(pcre2_callout_block *b, void *data)
{
    SL_UNUSED(b);
    unsigned *n = data;
    if ((++*n & (REGEX_CHECK_EVERY - 1)) != 0)
        return 0;
    return ex_interrupted() != EX_RUNNING ? PCRE2_ERROR_CALLOUT : 0;
}

static void compiled_free(Compiled *c)
{
    if (!c->pcre) {
        regfree(&c->re);
        return;
    }
    pcre2_match_context_free(c->mctx);
    pcre2_match_data_free(c->md);
    pcre2_code_free(c->code);
}

/* Compiles pattern p into *c; 0, or -1 with 2201B / 0A000 on err. */
static int compile(EvalCtx *cx, const SlStr *p, bool icase, Compiled *c)
{
    if (ex_regex_too_complex(p->ptr, p->len))
        return sl_error(cx->err, ERRCODE_INVALID_REGULAR_EXPRESSION,
                        "invalid regular expression: regular expression is too complex");
    if (!ex_regex_has_backref(p->ptr, p->len)) {
        char *pat = arena_strndup(cx->arena, p->ptr, p->len);
        int err = regcomp(&c->re, pat, REG_EXTENDED | REG_NOSUB | (icase ? REG_ICASE : 0));
        if (err != 0) {
            char msg[128];
            regerror(err, &c->re, msg, sizeof(msg));
            return sl_error(cx->err, ERRCODE_INVALID_REGULAR_EXPRESSION,
                            "invalid regular expression: %s", msg);
        }
        c->pcre = false;
        return 0;
    }
    char *pat;
    size_t len;
    if (to_pcre(cx->err, cx->arena, p->ptr, p->len, &pat, &len) < 0)
        return -1;
    int errcode;
    PCRE2_SIZE erroff;
    pcre2_code *code = pcre2_compile((PCRE2_SPTR)pat, len,
                                     PCRE2_UTF | PCRE2_DOTALL | PCRE2_DOLLAR_ENDONLY |
                                         PCRE2_NEVER_BACKSLASH_C | PCRE2_AUTO_CALLOUT |
                                         (icase ? PCRE2_CASELESS : 0),
                                     &errcode, &erroff, NULL);
    if (code == NULL) {
        PCRE2_UCHAR msg[128];
        pcre2_get_error_message(errcode, msg, sizeof(msg));
        return sl_error(cx->err, ERRCODE_INVALID_REGULAR_EXPRESSION,
                        "invalid regular expression: %s", (const char *)msg);
    }
    c->pcre = true;
    c->code = code;
    c->md = pcre2_match_data_create(1, NULL);
    c->mctx = pcre2_match_context_create(NULL);
    if (c->md == NULL || c->mctx == NULL)
        sl_panic("out of memory allocating a regular expression's match data");
    pcre2_set_match_limit(c->mctx, REGEX_MATCH_LIMIT);
    pcre2_set_depth_limit(c->mctx, REGEX_MATCH_LIMIT);
    pcre2_set_heap_limit(c->mctx, REGEX_HEAP_LIMIT_KB);
    c->callouts = 0;
    pcre2_set_callout(c->mctx, interrupt_cb, &c->callouts);
    return 0;
}

/* Whether a[i] matches c: 1 or 0, or -1 with the error on err (54001 for
 * a PCRE2 match past its limits, 57014 for one cancelled or past
 * statement_timeout). */
static int match(EvalCtx *cx, Compiled *c, const SlStr *a)
{
    if (!c->pcre) {
        char *s = arena_strndup(cx->arena, a->ptr, a->len);
        return regexec(&c->re, s, 0, NULL, 0) == 0;
    }
    int rc = pcre2_match(c->code, (PCRE2_SPTR)(a->len ? a->ptr : ""), a->len, 0, 0, c->md,
                         c->mctx);
    if (rc >= 0)
        return 1;
    if (rc == PCRE2_ERROR_NOMATCH)
        return 0;
    if (rc == PCRE2_ERROR_CALLOUT && ex_check_interrupt(cx->err) < 0)
        return -1;
    if (rc == PCRE2_ERROR_MATCHLIMIT || rc == PCRE2_ERROR_DEPTHLIMIT ||
        rc == PCRE2_ERROR_HEAPLIMIT)
        return refuse(cx->err, ERRCODE_STATEMENT_TOO_COMPLEX,
                      "Back references after nested or alternative repetitions "
                      "backtrack exponentially; anchor or simplify the pattern.",
                      "regular expression is too complex to match");
    PCRE2_UCHAR msg[128];
    pcre2_get_error_message(rc, msg, sizeof(msg));
    return sl_error(cx->err, ERRCODE_INVALID_REGULAR_EXPRESSION,
                    "invalid regular expression: %s", (const char *)msg);
}

static int regex_rows(EvalCtx *cx, const Vector *args, Vector *out, const uint32_t *sel,
                      uint32_t n, bool icase, bool negate)
{
    const SlStr *a = args[0].v.str, *p = args[1].v.str;
    uint8_t *r = out->v.b;
    Compiled re;
    bool have = false;
    const SlStr *cur = NULL;
    int rc = 0;
    FOR_SEL(sel, n, {
        if (rc == 0 && (rc = ex_check_interrupt(cx->err)) == 0) {
            if (!have || cur->len != p[i].len || memcmp(cur->ptr, p[i].ptr, p[i].len) != 0) {
                if (have)
                    compiled_free(&re);
                have = false;
                rc = compile(cx, &p[i], icase, &re);
                if (rc == 0) {
                    have = true;
                    cur = &p[i];
                }
            }
            if (rc == 0) {
                int m = match(cx, &re, &a[i]);
                if (m < 0)
                    rc = m;
                else
                    r[i] = (uint8_t)((m == 1) != negate);
            }
        }
    });
    if (have)
        compiled_free(&re);
    return rc;
}

KERNEL(k_regex_match) { SL_UNUSED(e); return regex_rows(cx, args, out, sel, n, false, false); }
KERNEL(k_regex_nomatch) { SL_UNUSED(e); return regex_rows(cx, args, out, sel, n, false, true); }
KERNEL(k_regex_imatch) { SL_UNUSED(e); return regex_rows(cx, args, out, sel, n, true, false); }
KERNEL(k_regex_inomatch) { SL_UNUSED(e); return regex_rows(cx, args, out, sel, n, true, true); }
