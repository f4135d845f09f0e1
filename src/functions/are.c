/*
 * are.c -- PostgreSQL's advanced regular expressions (AREs) on PCRE2: one
 * translation of the ARE syntax into PCRE2's, and the compiled pattern
 * every user of a regular expression matches with.
 *
 *   ex_regex_compile   a pattern, with PostgreSQL's flag letters, compiled
 *   ex_regex_test      whether a string has a match
 *   ex_regex_find      the first match from an offset, as PostgreSQL's:
 *                      PCRE2 finds the leftmost start, its DFA matcher
 *                      (every match there, auto-possessification off)
 *                      the longest or shortest end by the pattern's
 *                      greediness, which to_pcre works out by
 *                      PostgreSQL's rules; 0A000 with back references
 *   ex_regex_subject   the string the finds that follow search, its UTF-8
 *                      checked once (PCRE2 would check it at every find)
 *   ex_regex_groups    its capturing groups
 *   ex_regex_captures  what each group captured in a match, as PostgreSQL's
 *                      matcher dissects it: left to right, each part of a
 *                      plain sequence the longest (or shortest, by its
 *                      preference) span after which the rest still
 *                      matches, tried with PCRE2 on each part alone (a
 *                      callout fixes its end); 0A000 for a group in an
 *                      alternation, a repetition or a (?:...) group
 *   ex_regex_free
 *   ex_regex_too_complex  the bound on a pattern's expanded size
 *   ex_regex_has_backref  whether a pattern has back references
 *
 * The translation (to_pcre) reads the pattern as PostgreSQL 15's lexer
 * does: the directors ***: and ***=, embedded options (?bceimnpqstwx) at
 * the start, the flag letters of the regexp functions (c i m n p q s t w
 * x, the same options); the escapes \d \s \w \D \S \W, the constraints \A
 * \Z \m \M \y \Y and [[:<:]] [[:>:]], the character entries \a \b \B \cX
 * \e \f \n \r \t \v \uwxyz \Ustuvwxyz \xhhh; bracket expressions with
 * their classes [:alpha:] and friends, [.c.] and [=c=] of one character,
 * a backslash escaping inside them; bounds {m} {m,} {m,n} up to 255, a {
 * not followed by a digit an ordinary character; (?:...) and the four
 * lookarounds, whose parentheses do not capture; expanded syntax (x) read
 * here, not by PCRE2; newline-sensitive modes (n, p, w) as PCRE2's
 * DOTALL / MULTILINE with a newline added to negated brackets.  What
 * PostgreSQL refuses is 2201B here too; what the translation does not
 * carry over exactly is 0A000 with a hint (BRE/ERE flavours b and e,
 * multi-digit back references, \0 and octal escapes, collating elements
 * of more than one character, a quantifier on a back reference or on a
 * group holding one: PostgreSQL's matcher gives those a meaning of its
 * own, '' ~ '(a)?\1?' is false there).  Case-insensitive matching is
 * PCRE2_CASELESS; classes, \w and case folding are Unicode's (PCRE2_UCP),
 * as in PostgreSQL under C.UTF-8, but \d and [:digit:] are 0-9 and, under
 * ~*, [:upper:] and [:lower:] are [:alpha:], as PostgreSQL reads them.
 *
 * Each pattern is compiled twice over: a code without callouts (JIT-
 * compiled at its REGEX_JIT_AFTER-th match) that matches first, within REGEX_FAST_LIMIT backtracking steps
 * (a few milliseconds), and, only for a match that passes them, a code
 * with PCRE2_AUTO_CALLOUT that matches again within REGEX_MATCH_LIMIT
 * (about 0.5 s; 64 MB of backtracking frames): PCRE2 calls interrupt_cb
 * before each item, which reads the statement's interrupt flag every
 * REGEX_CHECK_EVERY calls, so a cancel or statement_timeout stops one long
 * match from inside (57014, about a millisecond late).  Past the bound the
 * statement ends with 54001 "regular expression is too complex to match".
 *
 * pattern_size estimates a pattern's size once its bounded repetitions
 * are expanded (each atom 1, a group the sum of its alternatives, a bound
 * {m,n} multiplies by n); past REGEX_MAX_SIZE a pattern is refused with
 * 2201B "regular expression is too complex", as PostgreSQL's REG_ETOOBIG.
 */
#include "sluice/functions.h"
#include "sluice/utf8.h"

#include <ctype.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define PCRE2_CODE_UNIT_WIDTH 8
#include <pcre2.h>

#define REGEX_MAX_SIZE 100000.0
#define REGEX_MAX_DEPTH 256
#define REGEX_DUPMAX 255
/* PCRE2's bounds on one match: the fast code's (a few milliseconds), and
 * the interruptible code's, about 0.5 s of backtracking, 64 MB of it */
#define REGEX_FAST_LIMIT 200000
#define REGEX_MATCH_LIMIT 10000000
#define REGEX_HEAP_LIMIT_KB 65536
/* The interrupt flag is read once per this many of PCRE2's callouts (a
 * power of two): about every few microseconds of a match. */
#define REGEX_CHECK_EVERY 256
/* A pattern is JIT-compiled at its this-many-th match: compiling costs
 * more than a few matches save. */
#define REGEX_JIT_AFTER 16
/* The DFA matcher's workspace, in ints */
#define REGEX_DFA_WORKSPACE 4096

/* One segment of a level of the pattern (AreOpts.segs): the translation's
 * bytes [from, to); a capturing group (group > 0, its inside level
 * `group`) or a stretch between groups; pref its PostgreSQL preference
 * (1 the longest, -1 the shortest, 0 none: the longest). */
typedef struct ReSeg {
    uint32_t from, to;
    int      level, group;
    int      pref;
} ReSeg;

struct ExRegex {
    pcre2_code *fast, *slow;        /* slow, dfa: compiled on first need */
    pcre2_code *dfa;                /* for the DFA matcher: every match kept */
    pcre2_match_data *md;
    pcre2_match_data *dfa_md;       /* the DFA matcher's one match (its end) */
    const char *subj;               /* ex_regex_subject's: UTF-8 checked */
    size_t subjlen;
    pcre2_match_context *fctx, *sctx;
    char *pat;                      /* the translation, for slow */
    size_t patlen;
    uint32_t options;
    unsigned callouts;              /* interrupt_cb's count */
    unsigned uses;                  /* matches until REGEX_JIT_AFTER */
    bool greedy, backrefs;          /* AreOpts' */
    int ngroups;
    ReSeg *segs;                    /* AreOpts': the capture structure */
    int nsegs;
    bool caps_bad;
    pcre2_code **spans;             /* ex_regex_captures: per segment, it
                                       alone and it with the rest of its level */
    pcre2_match_context *cctx;
    size_t target;                  /* span_cb's end */
};

/* The end of the bracket expression that opens at p[i] ('['), as an ARE
 * reads it (a backslash escapes inside): the index of its closing ']', or
 * n when it has none. */
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
        } else if (p[j] == '\\') {
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

/* The pattern's size once its bounded repetitions are expanded, saturated
 * a little past REGEX_MAX_SIZE; groups nested deeper than REGEX_MAX_DEPTH
 * count as too complex. */
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

/* True when the pattern has a back reference (\1 to \9) outside its bracket
 * expressions. */
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

/* ---------------------------------------------------------- translation */


/* The options a pattern is read and matched with. */
typedef struct AreOpts {
    bool icase, expanded, literal;
    bool nl_dot;        /* . and negated brackets do not match a newline */
    bool nl_anchor;     /* ^ and $ match at newlines too */
    /* what to_pcre found: PostgreSQL's greediness of the whole pattern
     * (a match is the longest, else the shortest, at its start), its
     * capturing groups, whether it has back references */
    bool greedy, backrefs;
    int ngroups;
    /* the capture structure (ex_regex_captures): each level (0 the
     * pattern, g group g's inside) a run of segments, the groups and the
     * stretches between them, in the translation's bytes; caps_bad: a
     * group PostgreSQL dissects otherwise than in a plain run (in an
     * alternation, a non-capturing group or a repetition) */
    ReSeg *segs;
    int nsegs;
    bool caps_bad;
} AreOpts;

/* A growing output buffer. */
typedef struct Out {
    char *b;
    size_t k, cap;
} Out;

static void out_reserve(Out *o, size_t more)
{
    if (o->k + more + 1 > o->cap) {
        o->cap = SL_MAX(o->cap * 2, o->k + more + 64);
        o->b = sl_realloc(o->b, o->cap);
    }
}

static void out_put(Out *o, const char *s, size_t len)
{
    out_reserve(o, len);
    memcpy(o->b + o->k, s, len);
    o->k += len;
}

static void out_str(Out *o, const char *s)
{
    out_put(o, s, strlen(s));
}

static void out_code(Out *o, unsigned long c)
{
    char buf[24];
    int len = snprintf(buf, sizeof(buf), "\\x{%lx}", c);
    out_put(o, buf, (size_t)len);
}

/* sl_error with a hint: -1 with code, the message and the hint on err. */
static int refuse(SlError *err, const char *code, const char *hint, const char *fmt, ...)
    SL_PRINTF(4, 5);
static int refuse(SlError *err, const char *code, const char *hint, const char *fmt, ...)
{
    char msg[200];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof(msg), fmt, ap);
    va_end(ap);
    sl_error(err, code, "%s", msg);
    if (hint != NULL)
        sl_error_hint(err, "%s", hint);
    return -1;
}

static int bad_re(SlError *err, const char *what)
{
    return sl_error(err, ERRCODE_INVALID_REGULAR_EXPRESSION, "invalid regular expression: %s",
                    what);
}

/* Applies one option letter; 0, or -1 with the error (embedded: an
 * embedded option, 2201B; else a flag of a function, 22023). */
static int apply_option(SlError *err, AreOpts *o, char c, bool embedded)
{
    switch (c) {
    case 'c': o->icase = false; return 0;
    case 'i': o->icase = true; return 0;
    case 'm': case 'n': o->nl_dot = o->nl_anchor = true; return 0;
    case 'p': o->nl_dot = true; o->nl_anchor = false; return 0;
    case 'w': o->nl_dot = false; o->nl_anchor = true; return 0;
    case 's': o->nl_dot = o->nl_anchor = false; return 0;
    case 'x': o->expanded = true; return 0;
    case 't': o->expanded = false; return 0;
    case 'q': o->literal = true; return 0;
    case 'b': case 'e':
        return refuse(err, ERRCODE_FEATURE_NOT_SUPPORTED,
                      "Write the pattern as an advanced regular expression (the default).",
                      "basic and extended regular expressions (option \"%c\") are not "
                      "supported", c);
    }
    if (embedded)
        return bad_re(err, "invalid embedded option");
    return sl_error(err, ERRCODE_INVALID_PARAMETER_VALUE,
                    "invalid regular expression option: \"%c\"", c);
}

/* The length of the UTF-8 sequence that starts with byte b (1 for a byte
 * that starts none). */
static size_t utf8_len(unsigned char b)
{
    return b >= 0xF0 ? 4 : b >= 0xE0 ? 3 : b >= 0xC0 ? 2 : 1;
}

/* Reads exactly (or, when !exact, up to) max hex digits at p[*i..n), at
 * least one; the value, or -1. */
static long hex_digits(const char *p, size_t n, size_t *i, int max, bool exact)
{
    long v = 0;
    int d = 0;
    while (*i < n && d < max && isxdigit((unsigned char)p[*i])) {
        char c = p[(*i)++];
        v = v * 16 + (isdigit((unsigned char)c) ? c - '0' : (tolower((unsigned char)c) - 'a' + 10));
        d++;
        if (v > 0x10FFFF)
            return -1;
    }
    if (d == 0 || (exact && d != max))
        return -1;
    return v;
}

/* Translates the character-entry or class escape \e (p[*i] is e, past the
 * backslash) into o; constraint escapes only outside brackets.  Sets
 * *constraint for \A \Z \m \M \y \Y.  0, or -1 with the error. */
static int put_escape(SlError *err, Out *o, const char *p, size_t n, size_t *i, bool in_bracket,
                      const AreOpts *opt, bool *constraint)
{
    unsigned char e = (unsigned char)p[(*i)++];
    *constraint = false;
    if (e >= 0x80) {                    /* an escaped non-ASCII character */
        size_t len = utf8_len(e);
        out_put(o, p + *i - 1, SL_MIN(len, n - (*i - 1)));
        *i += len - 1;
        return 0;
    }
    if (!isalnum(e)) {
        char buf[2] = {'\\', (char)e};
        out_put(o, buf, 2);
        return 0;
    }
    long v = -1;
    switch (e) {
    case 'd':           /* the C library's isdigit: 0-9 only */
        out_str(o, in_bracket ? "0-9" : "[0-9]");
        return 0;
    case 's': case 'w':
        out_put(o, (char[]){'\\', (char)e}, 2);
        return 0;
    case 'D': case 'S': case 'W':
        if (in_bracket) {       /* [^0-9] as ranges */
            out_str(o, e == 'D' ? "\\x{1}-/:-\\x{10ffff}" : e == 'W' ? "\\W" : "\\S");
            return 0;
        }
        out_str(o, e == 'D' ? "[^0-9]" : e == 'W' ? "\\W" : "\\S");
        return 0;
    case 'a': v = 7; break;
    case 'b': v = 8; break;
    case 'B': v = '\\'; break;
    case 'e': v = 27; break;
    case 'f': v = 12; break;
    case 'n': v = 10; break;
    case 'r': v = 13; break;
    case 't': v = 9; break;
    case 'v': v = 11; break;
    case 'c':
        if (*i >= n)
            return bad_re(err, "invalid escape \\ sequence");
        v = (unsigned char)p[(*i)++] & 037;
        break;
    case 'u': v = hex_digits(p, n, i, 4, true); break;
    case 'U': v = hex_digits(p, n, i, 8, true); break;
    case 'x': v = hex_digits(p, n, i, 255, false); break;
    case '0': case '1': case '2': case '3': case '4': case '5': case '6': case '7':
    case '8': case '9':
        return refuse(err, ERRCODE_FEATURE_NOT_SUPPORTED,
                      "Back references are \\1 to \\9 outside bracket expressions; write "
                      "other characters as \\xhh.",
                      "regular expression escape \\%c%s is not supported", e,
                      *i < n && isdigit((unsigned char)p[*i]) ? "..." : "");
    default:
        if (!in_bracket) {
            static const char *const cons[][2] = {
                {"A", "\\A"}, {"Z", "\\z"}, {"m", "\\b(?=\\w)"}, {"M", "\\b(?<=\\w)"},
                {"y", "\\b"}, {"Y", "\\B"}};
            for (size_t c = 0; c < SL_ARRAY_LEN(cons); c++)
                if (cons[c][0][0] == (char)e) {
                    out_str(o, cons[c][1]);
                    *constraint = true;
                    return 0;
                }
        }
        return bad_re(err, "invalid escape \\ sequence");
    }
    if (v <= 0 || v > 0x10FFFF || (v >= 0xD800 && v <= 0xDFFF))
        return bad_re(err, "invalid escape \\ sequence");
    out_code(o, (unsigned long)v);
    return 0;
}

/* Translates the bracket expression at p[*i] ('[') into o; past it.  0, or
 * -1 with the error. */
static int put_bracket(SlError *err, Out *o, const char *p, size_t n, size_t *i,
                       const AreOpts *opt)
{
    static const char *const classes[] = {"alnum", "alpha", "blank", "cntrl", "digit",
                                          "graph", "lower", "print", "punct", "space",
                                          "upper", "xdigit", "word"};
    size_t j = *i + 1;
    bool neg = false;
    out_put(o, "[", 1);
    if (j < n && p[j] == '^') {
        neg = true;
        out_put(o, "^", 1);
        j++;
    }
    if (j < n && p[j] == ']') {
        out_str(o, "\\]");
        j++;
    }
    for (; j < n && p[j] != ']';) {
        if (p[j] == '[' && j + 1 < n && (p[j + 1] == ':' || p[j + 1] == '=' || p[j + 1] == '.')) {
            char close = p[j + 1];
            size_t s = j + 2, e = s;
            while (e + 1 < n && !(p[e] == close && p[e + 1] == ']'))
                e++;
            if (e + 1 >= n)
                return bad_re(err, close == ':' ? "invalid character class"
                                                : "invalid collation character");
            size_t len = e - s;
            if (close == ':') {
                size_t c = 0;
                while (c < SL_ARRAY_LEN(classes) &&
                       !(strlen(classes[c]) == len && memcmp(classes[c], p + s, len) == 0))
                    c++;
                if (c == SL_ARRAY_LEN(classes))
                    return bad_re(err, "invalid character class");
                if (len == 5 && memcmp(p + s, "digit", 5) == 0) {
                    out_str(o, "0-9");
                } else if (opt->icase && len == 5 &&
                           (memcmp(p + s, "upper", 5) == 0 || memcmp(p + s, "lower", 5) == 0)) {
                    out_str(o, "[:alpha:]");         /* as PostgreSQL reads them */
                } else {
                    out_str(o, "[:");
                    out_put(o, p + s, len);
                    out_str(o, ":]");
                }
            } else {
                if (len == 0 || utf8_len((unsigned char)p[s]) != len)
                    return refuse(err, ERRCODE_FEATURE_NOT_SUPPORTED,
                                  "Write the character itself.",
                                  "collating elements and equivalence classes of more than "
                                  "one character are not supported");
                if (len == 1 && !isalnum((unsigned char)p[s]))
                    out_put(o, "\\", 1);
                out_put(o, p + s, len);
            }
            j = e + 2;
        } else if (p[j] == '\\') {
            if (j + 1 >= n)
                return bad_re(err, "brackets [] not balanced");
            j++;
            bool cons;
            if (put_escape(err, o, p, n, &j, true, opt, &cons) < 0)
                return -1;
        } else if (p[j] == '[') {
            out_str(o, "\\[");
            j++;
        } else {
            size_t len = utf8_len((unsigned char)p[j]);
            out_put(o, p + j, SL_MIN(len, n - j));
            j += len;
        }
    }
    if (j >= n)
        return bad_re(err, "brackets [] not balanced");
    if (neg && opt->nl_dot)
        out_str(o, "\\n");
    out_put(o, "]", 1);
    *i = j + 1;
    return 0;
}

/* One open group of to_pcre. */
typedef struct Group {
    int num;            /* its capture number; 0 (?:...), -1 a lookaround */
    bool br;            /* it holds a back reference */
} Group;

/* Writes the PCRE2 pattern that matches what the PostgreSQL ARE p (read
 * with the options *opt, which embedded options change) matches into
 * *out (sl_malloc'd); 0, or -1 with the error on err. */
/* PostgreSQL's preference bits of a part of a pattern (regcomp.c's
 * LONGER, SHORTER, MIXED): mixed is messy, a split of the subre tree. */
#define RE_L 1
#define RE_S 2
#define RE_M 4
static bool re_mixed(int bits)
{
    return (bits & RE_M) != 0 || (bits & (RE_L | RE_S)) == (RE_L | RE_S);
}

/* One open level's run of atoms since the last split, as parseqatom
 * builds its subre tree: a stretch absorbs atoms while their preferences
 * agree; an atom whose preference clashes with it (or a messy one) ends
 * it and stands alone, and the rest of the level starts a new stretch,
 * merged with that atom at the level's end if nothing else split it and
 * the two agree. */
typedef struct Stretch {
    int start;                  /* the output offset it began at; -1 none */
    int bits, pref;             /* its atoms' RE_* bits, their first preference */
    int clash, clash_end;       /* a clashing atom's bytes (clash -1: none) */
    int clash_bits, clash_pref;
    int gbits;                  /* every atom's bits at this depth: a group's flags */
    int astart;                 /* where the last atom began */
    int lvl;                    /* its level: 0, a group number, -1 none */
    int capseg;                 /* where an open capturing group began */
    bool hascap;                /* a capturing group here or below */
} Stretch;

static void seg_emit(AreOpts *opt, int lv, int start, int end, int pref)
{
    if (start >= 0 && start < end)
        opt->segs[opt->nsegs++] = (ReSeg){(uint32_t)start, (uint32_t)end, lv, 0, pref};
}

/* Ends s's run at end: the clashing atom and the stretch after it, as
 * one segment at the level's end when they agree. */
static void seg_close(AreOpts *opt, Stretch *s, int end, bool level_end)
{
    if (s->clash >= 0 && level_end && !re_mixed(s->clash_bits | s->bits)) {
        seg_emit(opt, s->lvl, s->clash, end, s->clash_pref ? s->clash_pref : s->pref);
    } else {
        if (s->clash >= 0)
            seg_emit(opt, s->lvl, s->clash, s->clash_end, s->clash_pref);
        seg_emit(opt, s->lvl, s->start, end, s->pref);
    }
    s->clash = -1;
    s->start = end;
    s->bits = s->pref = 0;
}

/* An atom [start, end) with its bits and preference joins s. */
static void seg_atom(AreOpts *opt, Stretch *s, int start, int end, int bits, int pref)
{
    if (re_mixed(s->bits | bits)) {
        seg_close(opt, s, start, false);
        s->clash = start;
        s->clash_end = end;
        s->clash_bits = bits;
        s->clash_pref = pref;
        s->start = end;
    } else {
        s->bits |= bits;
        if (s->pref == 0)
            s->pref = pref;
    }
}

static int to_pcre(SlError *err, const char *p, size_t n, AreOpts *opt, Out *o)
{
    size_t i = 0;
    if (!opt->literal && n >= 3 && memcmp(p, "***", 3) == 0) {
        if (n >= 4 && p[3] == ':') {
            i = 4;
        } else if (n >= 4 && p[3] == '=') {
            i = 4;
            opt->literal = true;
        } else {
            return bad_re(err, "invalid argument to regex function");
        }
    }
    if (!opt->literal && n - i >= 2 && p[i] == '(' && p[i + 1] == '?' &&
        (n - i == 2 || isalpha((unsigned char)p[i + 2]))) {
        for (i += 2; i < n && isalpha((unsigned char)p[i]); i++)
            if (apply_option(err, opt, p[i], true) < 0)
                return -1;
        if (i >= n || p[i] != ')')
            return bad_re(err, "invalid embedded option");
        i++;
    }
    if (opt->literal) {
        for (; i < n; i++) {
            if ((unsigned char)p[i] < 0x80 && !isalnum((unsigned char)p[i]))
                out_put(o, "\\", 1);
            out_put(o, p + i, 1);
        }
        return 0;
    }
    Group *open = sl_malloc((n + 1) * sizeof(Group));
    /* the greediness of each open level's first branch so far (1 greedy,
     * -1 non-greedy, 0 none yet) and its count of branches; the last
     * atom's greediness, not yet given to its branch */
    int *battr = sl_calloc(n + 2, sizeof(int)), *nbr = sl_calloc(n + 2, sizeof(int));
    int pend = 0;
    bool have_pend = false;
    nbr[0] = 1;
    bool *closed = sl_calloc(n + 2, 1);
    int depth = 0, ngroups = 0, look = 0;
    /* what the last item was: nothing to quantify, an atom, a quantifier,
     * a constraint; whether the atom holds a back reference */
    enum { L_NONE, L_ATOM, L_QUANT, L_CONS } last = L_NONE;
    bool last_br = false, group_last = false;
    /* the segments: each open level's current stretch (its start in the
     * output, its preference; -1 start: none open) and whether a
     * group's pending preference is that group's own */
    Stretch *st = sl_calloc(n + 2, sizeof(Stretch));
    int abits = 0;          /* the pending atom's RE_* bits (pend: its preference) */
    bool pend_cap = false;
    st[0] = (Stretch){.start = (int)o->k, .clash = -1};
    opt->segs = sl_malloc((3 * n + 4) * sizeof(ReSeg));
    opt->nsegs = 0;
    int rc = 0;
#define FAIL(expr) do { rc = (expr); goto done; } while (0)
    while (i < n) {
        char c = p[i];
        if (opt->expanded) {
            if (c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\f' || c == '\v') {
                i++;
                continue;
            }
            if (c == '#') {
                while (i < n && p[i] != '\n')
                    i++;
                continue;
            }
        }
        if (have_pend && !(c == '*' || c == '+' || c == '?' || c == '{')) {
            if (battr[depth] == 0)
                battr[depth] = pend;
            if (!pend_cap)
                seg_atom(opt, &st[depth], st[depth].astart, (int)o->k, abits, pend);
            st[depth].gbits |= abits;
            have_pend = false;
        }
        pend_cap = pend_cap && (c == '*' || c == '+' || c == '?' || c == '{');
        int item_at = (int)o->k;
        bool br = false, group = false;
        int now = L_ATOM;
        if (c == '\\') {
            if (i + 1 >= n)
                FAIL(bad_re(err, "invalid escape \\ sequence"));
            char e = p[i + 1];
            if (e >= '1' && e <= '9' && !(i + 2 < n && isdigit((unsigned char)p[i + 2]))) {
                if (look > 0)
                    FAIL(bad_re(err, "invalid backreference number"));
                if (e - '0' > ngroups || !closed[e - '0'])
                    FAIL(bad_re(err, "invalid backreference number"));
                for (int d = 0; d < depth; d++)
                    open[d].br = true;
                br = true;
                opt->backrefs = true;
                out_put(o, p + i, 2);
                i += 2;
            } else {
                bool cons;
                i++;
                if (put_escape(err, o, p, n, &i, false, opt, &cons) < 0)
                    FAIL(-1);
                if (cons)
                    now = L_CONS;
            }
        } else if (c == '[') {
            if (n - i >= 7 && (memcmp(p + i, "[[:<:]]", 7) == 0 ||
                               memcmp(p + i, "[[:>:]]", 7) == 0)) {
                out_str(o, p[i + 3] == '<' ? "\\b(?=\\w)" : "\\b(?<=\\w)");
                i += 7;
                now = L_CONS;
            } else if (put_bracket(err, o, p, n, &i, opt) < 0) {
                FAIL(-1);
            }
        } else if (c == '(') {
            static const char *const kinds[] = {"(?:", "(?=", "(?!", "(?<=", "(?<!"};
            size_t g = 0, len = 1;
            if (i + 1 < n && p[i + 1] == '?') {
                for (; g < SL_ARRAY_LEN(kinds); g++) {
                    len = strlen(kinds[g]);
                    if (n - i >= len && memcmp(p + i, kinds[g], len) == 0)
                        break;
                }
                if (g == SL_ARRAY_LEN(kinds))
                    FAIL(bad_re(err, "quantifier operand invalid"));
                out_str(o, kinds[g]);
                open[depth].num = g == 0 ? 0 : -1;
                if (g > 0)
                    look++;
            } else if (look > 0) {
                out_str(o, "(?:");           /* no captures in a lookaround */
                open[depth].num = 0;
            } else {
                for (int d = 0; d < depth; d++) {
                    st[d].hascap = true;
                    if (open[d].num <= 0)
                        opt->caps_bad = true;
                }
                st[depth].hascap = true;
                seg_close(opt, &st[depth], (int)o->k, false);
                st[depth].start = -1;
                st[depth].capseg = (int)o->k;
                out_put(o, "(", 1);
                open[depth].num = ++ngroups;
            }
            st[depth].astart = item_at;
            open[depth++].br = false;
            battr[depth] = 0;
            nbr[depth] = 1;
            st[depth] = (Stretch){.start = (int)o->k, .clash = -1,
                                  .lvl = open[depth - 1].num > 0 ? open[depth - 1].num : -1};
            i += len;
            last = L_NONE;
            last_br = false;
            continue;
        } else if (c == ')') {
            if (depth == 0)
                FAIL(bad_re(err, "parentheses () not balanced"));
            if (st[depth].hascap && nbr[depth] > 1)
                opt->caps_bad = true;
            if (open[depth - 1].num > 0)
                seg_close(opt, &st[depth], (int)o->k, true);
            out_put(o, ")", 1);
            pend = nbr[depth] > 1 ? 1 : battr[depth];
            abits = st[depth].gbits | (nbr[depth] > 1 ? RE_L : 0);
            if (re_mixed(abits))
                abits |= RE_M;
            group = true;
            depth--;
            if (open[depth].num > 0) {
                closed[open[depth].num] = true;
                opt->segs[opt->nsegs++] = (ReSeg){(uint32_t)st[depth].capseg, (uint32_t)o->k,
                                                  st[depth].lvl, open[depth].num, pend};
                st[depth].start = (int)o->k;
                st[depth].bits = st[depth].pref = 0;
                pend_cap = true;
            }
            if (open[depth].num < 0) {
                look--;
                now = L_CONS;
            }
            br = open[depth].br;
            i++;
        } else if (c == '|') {
            nbr[depth]++;
            group_last = false;
            out_put(o, "|", 1);
            i++;
            last = L_NONE;
            last_br = false;
            continue;
        } else if (c == '^' || c == '$') {
            out_put(o, &c, 1);
            i++;
            now = L_CONS;
        } else if (c == '*' || c == '+' || c == '?' ||
                   (c == '{' && i + 1 < n && isdigit((unsigned char)p[i + 1]))) {
            size_t j = i + 1;
            if (c == '{') {
                long m = 0, hi = -2;
                while (j < n && isdigit((unsigned char)p[j]) && m <= REGEX_DUPMAX)
                    m = m * 10 + (p[j++] - '0');
                if (j < n && p[j] == ',') {
                    j++;
                    hi = -1;
                    if (j < n && isdigit((unsigned char)p[j]))
                        for (hi = 0; j < n && isdigit((unsigned char)p[j]) && hi <= REGEX_DUPMAX;)
                            hi = hi * 10 + (p[j++] - '0');
                }
                if (j >= n || p[j] != '}')
                    FAIL(bad_re(err, j >= n ? "braces {} not balanced"
                                            : "invalid repetition count(s)"));
                if (m > REGEX_DUPMAX || hi > REGEX_DUPMAX || (hi >= 0 && m > hi))
                    FAIL(bad_re(err, "invalid repetition count(s)"));
                j++;
            }
            if (last != L_ATOM)
                FAIL(bad_re(err, "quantifier operand invalid"));
            if (pend_cap || (group_last && st[depth + 1].hascap))
                opt->caps_bad = true;
            if (last_br)
                FAIL(refuse(err, ERRCODE_FEATURE_NOT_SUPPORTED,
                            "PostgreSQL's matcher gives a repeated back reference, or a "
                            "repeated group holding one, a meaning of its own; write the "
                            "repetitions out.",
                            "a quantifier on a back reference, or on a group holding one, "
                            "is not supported"));
            out_put(o, p + i, j - i);
            /* {m} passes its atom's preference through; {m,n} has one */
            bool exact = c == '{' && memchr(p + i, ',', j - i) == NULL, lazy = false;
            if (!exact)
                pend = 1;
            if (j < n && p[j] == '?') {        /* non-greedy */
                out_put(o, p + j++, 1);
                lazy = true;
                if (!exact)
                    pend = -1;
            }
            if (!exact)
                abits |= lazy ? RE_S : RE_L;
            have_pend = true;
            i = j;
            last = L_QUANT;
            last_br = false;
            continue;
        } else {
            size_t len = utf8_len((unsigned char)c);
            out_put(o, p + i, SL_MIN(len, n - i));
            i += len;
        }
        last = now;
        last_br = br;
        group_last = group;
        if (!group) {
            pend = abits = 0;
            st[depth].astart = item_at;
        }
        if (now == L_CONS)
            pend = abits = 0;
        have_pend = true;
    }
    if (have_pend && battr[0] == 0 && depth == 0)
        battr[0] = pend;
    if (have_pend && !pend_cap && depth == 0)
        seg_atom(opt, &st[0], st[0].astart, (int)o->k, abits, pend);
    if (depth == 0)
        seg_close(opt, &st[0], (int)o->k, true);
    if (st[0].hascap && nbr[0] > 1)
        opt->caps_bad = true;
    opt->greedy = nbr[0] > 1 || battr[0] >= 0;
    opt->ngroups = ngroups;
    if (depth > 0)
        FAIL(bad_re(err, "parentheses () not balanced"));
done:
#undef FAIL
    free(open);
    free(closed);
    free(battr);
    free(nbr);
    free(st);
    return rc;
}

/* ------------------------------------------------------------- matching */

/* PCRE2's automatic callout, before each item of the pattern it matches:
 * every REGEX_CHECK_EVERY calls it reads the statement's interrupt flag,
 * and a cancel or statement_timeout ends the match (PCRE2_ERROR_CALLOUT). */
static int interrupt_cb(pcre2_callout_block *b, void *data)
{
    SL_UNUSED(b);
    unsigned *n = data;
    if ((++*n & (REGEX_CHECK_EVERY - 1)) != 0)
        return 0;
    return ex_interrupted() != EX_RUNNING ? PCRE2_ERROR_CALLOUT : 0;
}

void ex_regex_free(ExRegex *re)
{
    if (re == NULL)
        return;
    pcre2_code_free(re->fast);
    pcre2_code_free(re->slow);
    pcre2_code_free(re->dfa);
    pcre2_match_data_free(re->md);
    pcre2_match_data_free(re->dfa_md);
    pcre2_match_context_free(re->fctx);
    pcre2_match_context_free(re->sctx);
    pcre2_match_context_free(re->cctx);
    for (int k = 0; re->spans != NULL && k < 2 * re->nsegs; k++)
        pcre2_code_free(re->spans[k]);
    free(re->spans);
    free(re->segs);
    free(re->pat);
    free(re);
}

static pcre2_code *compile_pcre(SlError *err, const ExRegex *re, uint32_t extra)
{
    int errcode;
    PCRE2_SIZE erroff;
    pcre2_code *code = pcre2_compile((PCRE2_SPTR)re->pat, re->patlen, re->options | extra,
                                     &errcode, &erroff, NULL);
    if (code == NULL) {
        PCRE2_UCHAR msg[128];
        pcre2_get_error_message(errcode, msg, sizeof(msg));
        if (errcode == 125 || errcode == 187)   /* lookbehind not of bounded length */
            refuse(err, ERRCODE_FEATURE_NOT_SUPPORTED,
                   "A lookbehind constraint must match strings of a bounded length here.",
                   "this lookbehind constraint is not supported");
        else
            sl_error(err, ERRCODE_INVALID_REGULAR_EXPRESSION,
                     "invalid regular expression: %s", (const char *)msg);
    }
    return code;
}

ExRegex *ex_regex_compile(SlError *err, const char *pattern, size_t len, const char *flags,
                          size_t flen, bool icase, bool whole)
{
    AreOpts opt = {.icase = icase};
    for (size_t f = 0; f < flen; f++)
        if (apply_option(err, &opt, flags[f], false) < 0)
            return NULL;
    if (ex_regex_too_complex(pattern, len)) {
        bad_re(err, "regular expression is too complex");
        return NULL;
    }
    Out o = {NULL, 0, 0};
    out_reserve(&o, 2 * len + 16);
    out_str(&o, "(*LF)");                   /* a newline is \n alone */
    if (to_pcre(err, pattern, len, &opt, &o) < 0) {
        free(o.b);
        free(opt.segs);
        return NULL;
    }
    o.b[o.k] = '\0';
    ExRegex *re = sl_calloc(1, sizeof(ExRegex));
    re->greedy = opt.greedy;
    re->backrefs = opt.backrefs;
    re->ngroups = opt.ngroups;
    re->segs = opt.segs;
    re->nsegs = opt.nsegs;
    re->caps_bad = opt.caps_bad;
    re->pat = o.b;
    re->patlen = o.k;
    re->options = PCRE2_UTF | PCRE2_UCP | PCRE2_NEVER_BACKSLASH_C | PCRE2_DOLLAR_ENDONLY |
                  (opt.nl_dot ? 0 : PCRE2_DOTALL) |
                  (opt.nl_anchor ? PCRE2_MULTILINE | PCRE2_ALT_CIRCUMFLEX : 0) |
                  (opt.icase ? PCRE2_CASELESS : 0) |
                  (whole ? PCRE2_ANCHORED | PCRE2_ENDANCHORED : 0);
    re->fast = compile_pcre(err, re, 0);
    if (re->fast == NULL) {
        ex_regex_free(re);
        return NULL;
    }
    re->md = pcre2_match_data_create_from_pattern(re->fast, NULL);
    re->fctx = pcre2_match_context_create(NULL);
    if (re->md == NULL || re->fctx == NULL)
        sl_panic("out of memory allocating a regular expression's match data");
    pcre2_set_match_limit(re->fctx, REGEX_FAST_LIMIT);
    pcre2_set_depth_limit(re->fctx, REGEX_FAST_LIMIT);
    pcre2_set_heap_limit(re->fctx, REGEX_HEAP_LIMIT_KB);
    return re;
}

/* The result of a pcre2_match: 1 match, 0 none, -1 the error on err
 * (54001 past the bounds, 57014 cancelled). */
static int match_result(SlError *err, int rc)
{
    if (rc >= 0)
        return 1;
    if (rc == PCRE2_ERROR_NOMATCH)
        return 0;
    if (rc == PCRE2_ERROR_CALLOUT && ex_check_interrupt(err) < 0)
        return -1;
    if (rc == PCRE2_ERROR_MATCHLIMIT || rc == PCRE2_ERROR_DEPTHLIMIT ||
        rc == PCRE2_ERROR_HEAPLIMIT)
        return refuse(err, ERRCODE_STATEMENT_TOO_COMPLEX,
                      "Nested or alternative repetitions (with back references above "
                      "all) backtrack exponentially; anchor or simplify the pattern.",
                      "regular expression is too complex to match");
    PCRE2_UCHAR msg[128];
    pcre2_get_error_message(rc, msg, sizeof(msg));
    return sl_error(err, ERRCODE_INVALID_REGULAR_EXPRESSION, "invalid regular expression: %s",
                    (const char *)msg);
}

/* The first match at or after byte start, as PCRE2 finds it: 1 with its
 * start in *so, 0 for none, -1 with the error. */
/* PCRE2_NO_UTF_CHECK for the subject ex_regex_subject checked: PCRE2
 * would check the whole subject at every match, which makes stepping
 * through its matches cost its length squared. */
static uint32_t utf_checked(const ExRegex *re, const char *s, size_t len)
{
    return s == re->subj && len == re->subjlen ? PCRE2_NO_UTF_CHECK : 0;
}

int ex_regex_subject(SlError *err, ExRegex *re, const char *s, size_t len)
{
    re->subj = NULL;
    if (s == NULL)
        return 0;
    if (sl_utf8_check(s, len, -1, err) < 0)
        return -1;
    re->subj = s;
    re->subjlen = len;
    return 0;
}

static int first_match(SlError *err, ExRegex *re, const char *s, size_t len, size_t start,
                       size_t *so)
{
    PCRE2_SPTR subj = (PCRE2_SPTR)(len ? s : "");
    uint32_t opts = utf_checked(re, s, len);
    if (re->uses < REGEX_JIT_AFTER && ++re->uses == REGEX_JIT_AFTER)
        pcre2_jit_compile(re->fast, PCRE2_JIT_COMPLETE);    /* else it interprets */
    int rc = pcre2_match(re->fast, subj, len, start, opts, re->md, re->fctx);
    if (rc != PCRE2_ERROR_MATCHLIMIT && rc != PCRE2_ERROR_DEPTHLIMIT &&
        rc != PCRE2_ERROR_HEAPLIMIT)
        goto done;
    /* a long match: again, interruptibly, within the larger bound */
    if (re->slow == NULL) {
        re->slow = compile_pcre(err, re, PCRE2_AUTO_CALLOUT);
        if (re->slow == NULL)
            return -1;
        re->sctx = pcre2_match_context_create(NULL);
        if (re->sctx == NULL)
            sl_panic("out of memory allocating a regular expression's match data");
        pcre2_set_match_limit(re->sctx, REGEX_MATCH_LIMIT);
        pcre2_set_depth_limit(re->sctx, REGEX_MATCH_LIMIT);
        pcre2_set_heap_limit(re->sctx, REGEX_HEAP_LIMIT_KB);
        pcre2_set_callout(re->sctx, interrupt_cb, &re->callouts);
    }
    rc = pcre2_match(re->slow, subj, len, start, opts, re->md, re->sctx);
done:
    if (rc >= 0)
        *so = pcre2_get_ovector_pointer(re->md)[0];
    return match_result(err, rc);
}

int ex_regex_test(SlError *err, ExRegex *re, const char *s, size_t len)
{
    size_t so;
    return first_match(err, re, s, len, 0, &so);
}

int ex_regex_find(SlError *err, ExRegex *re, const char *s, size_t len, size_t start,
                  size_t *so, size_t *eo)
{
    int rc = first_match(err, re, s, len, start, so);
    if (rc <= 0)
        return rc;
    if (re->backrefs)
        return refuse(err, ERRCODE_FEATURE_NOT_SUPPORTED,
                      "The match operators ~ and ~* take back references.",
                      "back references are not supported in this function");
    /* the start is the leftmost one PostgreSQL's matcher finds too; the
     * end is the longest (greedy) or shortest match there, which PCRE2's
     * DFA matcher lists */
    if (re->dfa == NULL && (re->dfa = compile_pcre(err, re, PCRE2_NO_AUTO_POSSESS)) == NULL)
        return -1;
    if (re->dfa_md == NULL && (re->dfa_md = pcre2_match_data_create(1, NULL)) == NULL)
        sl_panic("out of memory allocating a regular expression's match data");
    int ws[REGEX_DFA_WORKSPACE];
    /* the matches at *so are listed longest first: the first is the
     * greedy end (0: more than fit, which is fine); PCRE2_DFA_SHORTEST
     * stops at the shortest.  One pair, whatever the subject's length: a
     * match data as long as the subject made each call cost its length */
    rc = pcre2_dfa_match(re->dfa, (PCRE2_SPTR)(len ? s : ""), len, *so,
                         PCRE2_ANCHORED | (re->greedy ? 0 : PCRE2_DFA_SHORTEST) |
                             utf_checked(re, s, len),
                         re->dfa_md,
                         re->fctx, ws, SL_ARRAY_LEN(ws));
    if (rc == 0)
        rc = 1;
    if (rc > 0)
        *eo = pcre2_get_ovector_pointer(re->dfa_md)[1];
    if (rc == PCRE2_ERROR_DFA_WSSIZE || rc == PCRE2_ERROR_DFA_RECURSE)
        rc = PCRE2_ERROR_MATCHLIMIT;
    if (rc == PCRE2_ERROR_NOMATCH)          /* cannot be: the start matched */
        return sl_error(err, ERRCODE_INTERNAL_ERROR,
                        "regular expression matched at %zu, not there again", *so);
    return match_result(err, rc < 0 ? rc : 1);
}

int ex_regex_groups(const ExRegex *re)
{
    return re->ngroups;
}

/* ---------------------------------------------------------- captures */

/* The callout at the end of a span's code: the match goes on only when
 * it ends at the target byte, else PCRE2 backtracks for another end. */
static int span_cb(pcre2_callout_block *b, void *data)
{
    const ExRegex *re = data;
    return b->current_position == re->target ? 0 : 1;
}

/* Whether segment k (rest: with the segments after it on its level)
 * matches s's bytes [from, to) exactly, in the context of the whole
 * string: 1, 0, or -1 with the error. */
static int span_match(SlError *err, ExRegex *re, int k, bool rest, const char *s, size_t len,
                      size_t from, size_t to)
{
    if (re->spans == NULL) {
        re->spans = sl_calloc(2 * (size_t)re->nsegs, sizeof(pcre2_code *));
        re->cctx = pcre2_match_context_create(NULL);
        if (re->cctx == NULL)
            sl_panic("out of memory allocating a regular expression's match data");
        pcre2_set_match_limit(re->cctx, REGEX_MATCH_LIMIT);
        pcre2_set_depth_limit(re->cctx, REGEX_MATCH_LIMIT);
        pcre2_set_heap_limit(re->cctx, REGEX_HEAP_LIMIT_KB);
        pcre2_set_callout(re->cctx, span_cb, re);
    }
    pcre2_code **code = &re->spans[2 * k + rest];
    if (*code == NULL) {
        uint32_t end = re->segs[k].to;
        for (int j = k + 1; rest && j < re->nsegs; j++)
            if (re->segs[j].level == re->segs[k].level)
                end = re->segs[j].to;
        Out o = {NULL, 0, 0};
        out_reserve(&o, end - re->segs[k].from + 32);
        out_str(&o, "(*LF)(?:");
        out_put(&o, re->pat + re->segs[k].from, end - re->segs[k].from);
        out_str(&o, ")(?C1)");
        int errcode;
        PCRE2_SIZE erroff;
        /* no auto-possessification or start optimizations: either would
         * skip ends the callout must see */
        *code = pcre2_compile((PCRE2_SPTR)o.b, o.k,
                              (re->options & ~(uint32_t)PCRE2_ENDANCHORED) |
                                  PCRE2_NO_AUTO_POSSESS | PCRE2_NO_START_OPTIMIZE,
                              &errcode, &erroff, NULL);
        free(o.b);
        if (*code == NULL)
            return sl_error(err, ERRCODE_INTERNAL_ERROR,
                            "a part of a regular expression did not compile (%d)", errcode);
    }
    pcre2_match_data *md = pcre2_match_data_create(1, NULL);
    if (md == NULL)
        sl_panic("out of memory allocating a regular expression's match data");
    re->target = to;
    int rc = pcre2_match(*code, (PCRE2_SPTR)(len ? s : ""), len, from,
                         PCRE2_ANCHORED | utf_checked(re, s, len), md, re->cctx);
    pcre2_match_data_free(md);
    return match_result(err, rc);
}

/* PostgreSQL's dissection of the match [from, to) of a level (its cdissect
 * of a run of concatenations): left to right, each segment takes the
 * longest span (the shortest, for one whose preference is so) after
 * which the rest of its level matches up to `to`; a group's span is its
 * capture, and its inside is dissected the same way. */
static int dissect(SlError *err, ExRegex *re, int level, const char *s, size_t len,
                   size_t from, size_t to, size_t *caps)
{
    int last = -1;
    for (int k = 0; k < re->nsegs; k++)
        if (re->segs[k].level == level)
            last = k;
    size_t at = from;
    for (int k = 0; k <= last; k++) {
        const ReSeg *g = &re->segs[k];
        if (g->level != level)
            continue;
        size_t end = to;
        if (k != last) {
            bool shortest = g->pref < 0, found = false;
            size_t q = shortest ? at : to;
            for (;;) {
                int m = span_match(err, re, k, false, s, len, at, q);
                if (m == 1) {
                    size_t next = k + 1;
                    while (re->segs[next].level != level)
                        next++;
                    m = span_match(err, re, (int)next, true, s, len, q, to);
                }
                if (m < 0)
                    return -1;
                if (m == 1) {
                    found = true;
                    break;
                }
                if (ex_check_interrupt(err) < 0)
                    return -1;
                if (shortest ? q >= to : q <= at)
                    break;
                if (shortest)
                    do
                        q++;
                    while (q < to && ((unsigned char)s[q] & 0xC0) == 0x80);
                else
                    do
                        q--;
                    while (q > at && ((unsigned char)s[q] & 0xC0) == 0x80);
            }
            if (!found)
                return sl_error(err, ERRCODE_INTERNAL_ERROR,
                                "a regular expression's match could not be dissected");
            end = q;
        }
        if (g->group > 0) {
            caps[2 * (g->group - 1)] = at;
            caps[2 * (g->group - 1) + 1] = end;
            if (dissect(err, re, g->group, s, len, at, end, caps) < 0)
                return -1;
        }
        at = end;
    }
    return 0;
}

int ex_regex_captures(SlError *err, ExRegex *re, const char *s, size_t len, size_t so,
                      size_t eo, size_t *caps)
{
    for (int g = 0; g < 2 * re->ngroups; g++)
        caps[g] = SIZE_MAX;
    if (re->caps_bad)
        return refuse(err, ERRCODE_FEATURE_NOT_SUPPORTED,
                      "PostgreSQL picks what such a group captures by rules of its own; "
                      "sluice takes groups that stand in a plain sequence (not repeated, "
                      "not inside an alternation or a (?:...) group).",
                      "a parenthesized subexpression in an alternation, a repetition or a "
                      "non-capturing group is not supported here");
    return dissect(err, re, 0, s, len, so, eo, caps);
}