/*
 * format_json.c -- the schema-directed JSON-lines decoder (see format.h).
 *
 *   fmt_spec_init, fmt_json_decode
 *
 * One pass over each line: the members of an object are matched against the
 * target columns' paths as they are read; a matched value is converted
 * straight into its column's vector, everything else is skipped (still
 * checked for well-formedness, with a bracket stack).  Missing fields are
 * NULL, extra fields are ignored, a repeated key's last value wins (as in
 * jsonb).  A value whose JSON kind does not fit the column (an object for a
 * bigint), or whose text the column type's input function refuses, makes
 * the record a dead letter with the reason.
 *
 * With spec->need, a text value of an unread column is scanned and checked
 * as above but not copied (format.h): the column stays NULL, and the record
 * is a dead letter exactly when it would be with every column read.
 *
 * Flat keys (every column one key, no two alike: the usual stream) take
 * parse_flat, which decides exactly as the general parse_object but does
 * less for the common record (docs/benchmarks.md, "Record decoding"):
 *   - the key the hint predicts (the column after the last key's: records
 *     of a topic list their members in one order) is compared in place,
 *     sixteen bytes at once with its closing quote (predict_key), instead
 *     of being scanned and then compared;
 *   - the common values are converted as they are scanned (read_fast):
 *     plain integers, doubles that Clinger's fast path gives exactly
 *     (fast_double), true/false, strings without escapes for text and ISO
 *     timestamps (the date's arithmetic memoized: fast_timestamp).
 *     Anything else -- and anything read_fast is not sure of -- goes back
 *     to read_value from the value's first byte, so values and dead
 *     letters' reasons are those of the general path.
 * tests/unit/test_json_diff.c checks that against the decoder before
 * these paths (tests/unit/json_ref.c) over generated and mutated records.
 */
#include "sluice/expr.h"

#include "format_int.h"

#include "types/datetime.h"

#include <float.h>
#include <stdio.h>
#if defined(__SSE2__)
#include <emmintrin.h>
#endif

#define JSON_MAX_DEPTH 64

typedef struct JCtx {
    const FmtSpec *spec;
    Batch         *b;
    uint32_t       row;
    Arena         *a;
    const char    *p;
    const char    *end;
    const char    *line;
    int            hint;            /* flat_keys: where to look first for a key */
    char           reason[256];
    bool           failed;
} JCtx;

void fmt_spec_init(FmtSpec *spec, Arena *a, int ncols, const char *const *names,
                   const SlType *types, const char *const *paths)
{
    memset(spec, 0, sizeof(*spec));
    spec->ncols = ncols;
    spec->cols = ARENA_ARRAY(a, FmtColumn, ncols > 0 ? ncols : 1);
    spec->all_cols = ARENA_ARRAY(a, int, ncols > 0 ? ncols : 1);
    spec->max_record_bytes = 1 << 20;
    spec->delimiter = ',';
    spec->quote = '"';
    spec->null_string = "";
    for (int i = 0; i < ncols; i++) {
        FmtColumn *c = &spec->cols[i];
        memset(c, 0, sizeof(*c));
        spec->all_cols[i] = i;
        c->name = names[i];
        c->type = types[i];
        const char *path = paths && paths[i] ? paths[i] : names[i];
        /* Split a dotted path; a path is at most FMT_MAX_PATH keys. */
        const char *s = path;
        while (c->npath < FMT_MAX_PATH) {
            const char *dot = strchr(s, '.');
            size_t n = dot ? (size_t)(dot - s) : strlen(s);
            c->path[c->npath] = arena_strndup(a, s, n);
            c->pathlen[c->npath] = n;
            c->npath++;
            if (!dot || paths == NULL || paths[i] == NULL)
                break;
            s = dot + 1;
        }
        size_t k = c->pathlen[0];
        if (k < sizeof(c->keyq) && memchr(c->path[0], '"', k) == NULL &&
            memchr(c->path[0], '\\', k) == NULL) {
            memcpy(c->keyq, c->path[0], k);
            c->keyq[k] = '"';
            c->keyq_len = (uint8_t)(k + 1);
        }
    }
    for (int i = 0; i < ncols; i++)
        spec->key_lengths |= 1ULL << SL_MIN(spec->cols[i].pathlen[0], 63);
    /* Keys that name one column each let the decoder stop at the first
     * column that matches (parse_flat). */
    spec->flat_keys = true;
    for (int i = 0; i < ncols && spec->flat_keys; i++) {
        const FmtColumn *c = &spec->cols[i];
        spec->flat_keys = c->npath == 1;
        for (int j = 0; j < i && spec->flat_keys; j++)
            spec->flat_keys = !(spec->cols[j].pathlen[0] == c->pathlen[0] &&
                                memcmp(spec->cols[j].path[0], c->path[0], c->pathlen[0]) == 0);
    }
}

static void fail(JCtx *cx, const char *fmt, const char *what)
{
    if (cx->failed)
        return;
    cx->failed = true;
    snprintf(cx->reason, sizeof(cx->reason), fmt, what, (long)(cx->p - cx->line));
}

/* The first byte at or after p that is not JSON white space. */
static inline const char *ws_at(const char *p, const char *end)
{
    /* Compact JSON has none: one test for any byte above the space. */
    while (p < end && (unsigned char)*p <= ' ' &&
           (*p == ' ' || *p == '\t' || *p == '\r' || *p == '\n'))
        p++;
    return p;
}

static inline void skip_ws(JCtx *cx)
{
    cx->p = ws_at(cx->p, cx->end);
}

/* The next quote or backslash in [p, end), or NULL: sixteen bytes at a
 * time with SSE2 (every x86-64 has it), eight at a time elsewhere, then
 * byte by byte.  Most strings of a record are short, so this beats calls
 * to memchr, which were two per string. */
static inline const char *next_special(const char *p, const char *end)
{
#if defined(__SSE2__)
    const __m128i quote = _mm_set1_epi8('"'), bslash = _mm_set1_epi8('\\');
    while (end - p >= 16) {
        __m128i x = _mm_loadu_si128((const __m128i *)(const void *)p);
        unsigned m = (unsigned)_mm_movemask_epi8(
            _mm_or_si128(_mm_cmpeq_epi8(x, quote), _mm_cmpeq_epi8(x, bslash)));
        if (m != 0)
            return p + __builtin_ctz(m);
        p += 16;
    }
#elif __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__
    while (end - p >= 8) {
        uint64_t x, q, b;
        memcpy(&x, p, 8);
        q = x ^ 0x2222222222222222ULL;     /* zero bytes where x has '"' */
        b = x ^ 0x5c5c5c5c5c5c5c5cULL;     /* and where it has '\\' */
        uint64_t hit = ((q - 0x0101010101010101ULL) & ~q) | ((b - 0x0101010101010101ULL) & ~b);
        hit &= 0x8080808080808080ULL;
        if (hit != 0)   /* the lowest byte that matches is the first */
            return p + (__builtin_ctzll(hit) >> 3);
        p += 8;
    }
#endif
    for (; p < end; p++)
        if (*p == '"' || *p == '\\')
            return p;
    return NULL;
}

/* Scans a string starting at the opening quote; leaves p after the closing
 * quote.  *has_escape tells whether unescaping is needed.  A backslash makes
 * the byte after it plain. */
static bool scan_string(JCtx *cx, const char **start, size_t *len, bool *has_escape)
{
    const char *s = ++cx->p, *p = s, *end = cx->end;
    bool esc = false;
    for (;;) {
        p = p < end ? next_special(p, end) : NULL;
        if (p == NULL) {
            cx->p = end;
            fail(cx, "invalid JSON: %s at byte %ld", "unterminated string");
            return false;
        }
        if (*p == '"')
            break;
        esc = true;
        p += 2;
    }
    cx->p = p + 1;
    *start = s;
    *len = (size_t)(p - s);
    *has_escape = esc;
    return true;
}

static char *put_utf8(char *o, uint32_t cp)
{
    if (cp < 0x80) {
        *o++ = (char)cp;
    } else if (cp < 0x800) {
        *o++ = (char)(0xC0 | cp >> 6);
        *o++ = (char)(0x80 | (cp & 0x3F));
    } else if (cp < 0x10000) {
        *o++ = (char)(0xE0 | cp >> 12);
        *o++ = (char)(0x80 | (cp >> 6 & 0x3F));
        *o++ = (char)(0x80 | (cp & 0x3F));
    } else {
        *o++ = (char)(0xF0 | cp >> 18);
        *o++ = (char)(0x80 | (cp >> 12 & 0x3F));
        *o++ = (char)(0x80 | (cp >> 6 & 0x3F));
        *o++ = (char)(0x80 | (cp & 0x3F));
    }
    return o;
}

/* Unescapes s[0..n) into the arena (never longer than the input). */
static bool unescape(JCtx *cx, const char *s, size_t n, SlStr *out)
{
    char *buf = arena_alloc(cx->a, n + 1), *o = buf;
    for (size_t i = 0; i < n; i++) {
        char c = s[i];
        if (c != '\\') {
            if ((unsigned char)c < 0x20) {
                fail(cx, "invalid JSON: %s at byte %ld", "control character in string");
                return false;
            }
            *o++ = c;
            continue;
        }
        if (++i >= n)
            break;
        switch (s[i]) {
        case '"': *o++ = '"'; break;
        case '\\': *o++ = '\\'; break;
        case '/': *o++ = '/'; break;
        case 'b': *o++ = '\b'; break;
        case 'f': *o++ = '\f'; break;
        case 'n': *o++ = '\n'; break;
        case 'r': *o++ = '\r'; break;
        case 't': *o++ = '\t'; break;
        case 'u': {
            uint32_t cp = 0;
            for (int k = 1; k <= 4; k++) {
                int h = i + (size_t)k < n ? sl_hexval(s[i + (size_t)k]) : -1;
                if (h < 0) {
                    fail(cx, "invalid JSON: %s at byte %ld", "bad \\u escape");
                    return false;
                }
                cp = cp << 4 | (uint32_t)h;
            }
            i += 4;
            /* A surrogate pair. */
            if (cp >= 0xD800 && cp < 0xDC00 && i + 6 < n + 0 && s[i + 1] == '\\' &&
                s[i + 2] == 'u') {
                uint32_t lo = 0;
                bool ok = true;
                for (int k = 3; k <= 6; k++) {
                    int h = sl_hexval(s[i + (size_t)k]);
                    if (h < 0)
                        ok = false;
                    lo = lo << 4 | (uint32_t)(h < 0 ? 0 : h);
                }
                if (ok && lo >= 0xDC00 && lo < 0xE000) {
                    cp = 0x10000 + ((cp - 0xD800) << 10) + (lo - 0xDC00);
                    i += 6;
                }
            }
            if (cp == 0) {
                fail(cx, "invalid JSON: %s at byte %ld", "\\u0000 cannot be converted to text");
                return false;
            }
            if (cp >= 0xD800 && cp < 0xE000) {
                fail(cx, "invalid JSON: %s at byte %ld",
                     "\\u escape of a lone surrogate cannot be converted to text");
                return false;
            }
            o = put_utf8(o, cp);
            break;
        }
        default:
            fail(cx, "invalid JSON: %s at byte %ld", "bad escape");
            return false;
        }
    }
    *o = '\0';
    out->ptr = buf;
    out->len = (uint32_t)(o - buf);
    return true;
}

/* Reads a member's key and its ':'; p is before the key. */
static bool skip_member_key(JCtx *cx)
{
    skip_ws(cx);
    if (cx->p >= cx->end || *cx->p != '"') {
        fail(cx, "invalid JSON: %s at byte %ld", "expected a string key");
        return false;
    }
    const char *s;
    size_t n;
    bool e;
    if (!scan_string(cx, &s, &n, &e))
        return false;
    skip_ws(cx);
    if (cx->p >= cx->end || *cx->p != ':') {
        fail(cx, "invalid JSON: %s at byte %ld", "expected ':'");
        return false;
    }
    cx->p++;
    return true;
}

/* Scans a number, true, false or null at p (its first byte one of -0-9tfn);
 * leaves p after it. */
static bool scan_scalar(JCtx *cx)
{
    const char *s = cx->p;
    char c = *s;
    bool numeric = true;    /* only +-.eE and digits so far */
    for (; cx->p < cx->end; cx->p++) {
        char ch = *cx->p;
        if ((ch >= '0' && ch <= '9') || ch == '+' || ch == '-' || ch == '.' || ch == 'e' ||
            ch == 'E')
            continue;
        if (ch < 'a' || ch > 'z')
            break;
        numeric = false;
    }
    size_t n = (size_t)(cx->p - s);
    bool ok = (n == 4 && memcmp(s, "true", 4) == 0) || (n == 5 && memcmp(s, "false", 5) == 0) ||
              (n == 4 && memcmp(s, "null", 4) == 0) ||
              ((c == '-' || (c >= '0' && c <= '9')) && numeric);
    if (!ok)
        fail(cx, "invalid JSON: %s at byte %ld", "unexpected token");
    return ok;
}

/* Skips any value, checking its shape with a stack of open brackets; p is
 * at (or before, across white space) its first byte. */
static bool skip_value(JCtx *cx)
{
    char stack[JSON_MAX_DEPTH];
    int depth = 0;
    for (;;) {
        /* A value. */
        skip_ws(cx);
        if (cx->p >= cx->end) {
            fail(cx, "invalid JSON: %s at byte %ld", "unexpected end of record");
            return false;
        }
        char c = *cx->p;
        bool closed = true;     /* a whole value was read */
        if (c == '"') {
            const char *s;
            size_t n;
            bool e;
            if (!scan_string(cx, &s, &n, &e))
                return false;
        } else if (c == '{' || c == '[') {
            if (depth == JSON_MAX_DEPTH) {
                fail(cx, "invalid JSON: %s at byte %ld", "nested too deeply");
                return false;
            }
            stack[depth++] = c == '{' ? '}' : ']';
            cx->p++;
            skip_ws(cx);
            if (cx->p < cx->end && *cx->p == stack[depth - 1]) {
                cx->p++;
                depth--;
            } else {
                closed = false;
                if (c == '{' && !skip_member_key(cx))
                    return false;
            }
        } else if (c == '-' || (c >= '0' && c <= '9') || c == 't' || c == 'f' || c == 'n') {
            if (!scan_scalar(cx))
                return false;
        } else {
            fail(cx, "invalid JSON: %s at byte %ld", "unexpected character");
            return false;
        }
        if (!closed)
            continue;
        /* After a value: done, or a separator, or a closing bracket. */
        for (;;) {
            if (depth == 0)
                return true;
            skip_ws(cx);
            if (cx->p >= cx->end) {
                fail(cx, "invalid JSON: %s at byte %ld", "unexpected end of record");
                return false;
            }
            if (*cx->p == stack[depth - 1]) {
                cx->p++;
                depth--;
                continue;
            }
            if (*cx->p == ',') {
                cx->p++;
                if (stack[depth - 1] == '}' && !skip_member_key(cx))
                    return false;
                break;
            }
            fail(cx, "invalid JSON: %s at byte %ld", "expected ',' or a closing bracket");
            return false;
        }
    }
}

static void set_reason(JCtx *cx, const FmtColumn *col, const char *msg)
{
    if (cx->failed)
        return;
    cx->failed = true;
    snprintf(cx->reason, sizeof(cx->reason), "field \"%s\": %s", col->name, msg);
}

/* Converts text into column c of the current row with the type's input
 * function. */
static void store_text(JCtx *cx, int c, const char *s, size_t n)
{
    Vector *v = &cx->b->cols[c];
    const FmtColumn *col = &cx->spec->cols[c];
    switch (col->type.id) {
    case TYPE_TEXT:
    case TYPE_UNKNOWN:
    case TYPE_BYTEA:
        if (cx->spec->need != NULL && !cx->spec->need[c])
            return;         /* unread: checked by the scan, left NULL */
        v->v.str[cx->row].ptr = arena_strndup(cx->a, s, n);
        v->v.str[cx->row].len = (uint32_t)n;
        v->nulls[cx->row] = 0;
        return;
    default:
        break;
    }
    if (fmt_store_fast(v, cx->row, s, n))
        return;
    SlError e = {0};
    if (value_parse_text(cx->a, col->type, s, n, v, cx->row, -1, &e) < 0) {
        set_reason(cx, col, e.message ? e.message : "invalid value");
        sl_error_clear(&e);
    } else {
        v->nulls[cx->row] = 0;
    }
}

/* Reads the value at p into column c. */
static void read_value(JCtx *cx, int c)
{
    const FmtColumn *col = &cx->spec->cols[c];
    Vector *v = &cx->b->cols[c];
    SlTypeId t = col->type.id;
    char ch = *cx->p;
    const char *start = cx->p;
    if (ch == '"') {
        const char *s;
        size_t n;
        bool esc;
        if (!scan_string(cx, &s, &n, &esc))
            return;
        if (t == TYPE_JSONB) {
            store_text(cx, c, start, (size_t)(cx->p - start));
            return;
        }
        SlStr str = {s, (uint32_t)n};
        if (esc && !unescape(cx, s, n, &str))
            return;
        store_text(cx, c, str.ptr, str.len);
        return;
    }
    if (ch == 'n') {
        if (cx->end - cx->p >= 4 && memcmp(cx->p, "null", 4) == 0) {
            cx->p += 4;
            v->nulls[cx->row] = 1;
            return;
        }
    }
    if (ch == '-' || (ch >= '0' && ch <= '9')) {
        /* A number: no brackets to track. */
        if (scan_scalar(cx))
            store_text(cx, c, start, (size_t)(cx->p - start));
        return;
    }
    if (!skip_value(cx))
        return;
    size_t n = (size_t)(cx->p - start);
    if (ch == '{' || ch == '[') {
        if (t == TYPE_JSONB || t == TYPE_TEXT || t == TYPE_VARCHAR)
            store_text(cx, c, start, n);
        else
            set_reason(cx, col, ch == '{' ? "an object cannot be converted to this type"
                                          : "an array cannot be converted to this type");
        return;
    }
    if ((ch == 't' || ch == 'f') && t != TYPE_BOOL && t != TYPE_TEXT &&
        t != TYPE_VARCHAR && t != TYPE_JSONB) {
        set_reason(cx, col, "a boolean cannot be converted to this type");
        return;
    }
    store_text(cx, c, start, n);
}

/* After a member's key, at p: the ':' and the white space around it.
 * Returns the value's first byte, or NULL (the reason set) if that is not
 * there. */
static inline const char *member_colon(JCtx *cx, const char *p)
{
    if (p >= cx->end || *p != ':')
        p = ws_at(p, cx->end);  /* usually the ':' follows the key at once */
    if (p >= cx->end || *p != ':') {
        cx->p = p;
        fail(cx, "invalid JSON: %s at byte %ld", "expected ':'");
        return NULL;
    }
    p = ws_at(p + 1, cx->end);
    if (p >= cx->end) {
        cx->p = p;
        fail(cx, "invalid JSON: %s at byte %ld", "unexpected end of record");
        return NULL;
    }
    return p;
}

/* After a member's value, at *pp: true at a ',' (another member follows),
 * false at the object's '}' or (the reason set) at anything else; *pp after
 * the ',' or the '}'. */
static inline bool member_next(JCtx *cx, const char **pp)
{
    const char *p = ws_at(*pp, cx->end);
    if (p < cx->end && (*p == ',' || *p == '}')) {
        *pp = p + 1;
        return *p == ',';
    }
    *pp = cx->p = p;
    fail(cx, "invalid JSON: %s at byte %ld", "expected ',' or '}'");
    return false;
}

/* Parses the object at p; cols are the columns whose path matched so far
 * (depth keys deep).  For specs whose keys are not flat (dotted paths, a
 * key read by two columns); flat keys take parse_flat. */
static void parse_object(JCtx *cx, int depth, const int *cols, int ncols)
{
    cx->p++;    /* '{' */
    skip_ws(cx);
    if (cx->p < cx->end && *cx->p == '}') {
        cx->p++;
        return;
    }
    int match[ncols > 0 ? ncols : 1];
    for (;;) {
        skip_ws(cx);
        if (cx->p >= cx->end || *cx->p != '"') {
            fail(cx, "invalid JSON: %s at byte %ld", "expected a string key");
            return;
        }
        const char *k;
        size_t kn;
        bool esc;
        if (!scan_string(cx, &k, &kn, &esc))
            return;
        SlStr key = {k, (uint32_t)kn};
        if (esc && !unescape(cx, k, kn, &key))
            return;
        const char *v = member_colon(cx, cx->p);
        if (v == NULL)
            return;
        cx->p = v;
        int nleaf = 0, ndeep = 0;
        for (int i = 0; i < ncols; i++) {
            const FmtColumn *col = &cx->spec->cols[cols[i]];
            if (col->pathlen[depth] == key.len &&
                memcmp(col->path[depth], key.ptr, key.len) == 0) {
                if (col->npath == depth + 1)
                    match[nleaf++] = cols[i];
                else
                    match[ncols - 1 - ndeep++] = cols[i];
            }
        }
        if (nleaf > 0) {
            const char *vstart = cx->p;
            for (int i = 0; i < nleaf && !cx->failed; i++) {
                cx->p = vstart;
                read_value(cx, match[i]);
            }
        } else if (ndeep > 0 && *cx->p == '{' && depth + 1 < FMT_MAX_PATH) {
            parse_object(cx, depth + 1, &match[ncols - ndeep], ndeep);
        } else if (!skip_value(cx)) {
            return;
        }
        if (cx->failed)
            return;
        if (!member_next(cx, &cx->p))
            return;
    }
}

/* True if the scalar scanned up to p ends there: what scan_scalar would
 * not read on (digits, + - . e E and lower-case letters), or the end. */
static inline bool scalar_ends(const char *p, const char *end)
{
    if (p == end)
        return true;
    char ch = *p;
    return !((ch >= '0' && ch <= '9') || ch == '+' || ch == '-' || ch == '.' || ch == 'E' ||
             (ch >= 'a' && ch <= 'z'));
}

/* Powers of ten a double holds exactly (Clinger's fast path). */
static const double exact_pow10[] = {1e0,  1e1,  1e2,  1e3,  1e4,  1e5,  1e6,  1e7,
                                     1e8,  1e9,  1e10, 1e11, 1e12, 1e13, 1e14, 1e15,
                                     1e16, 1e17, 1e18, 1e19, 1e20, 1e21, 1e22};

/* A JSON number -?d+(.d+)?([eE][+-]?d+)? whose digits make an integer m
 * of at most 2^53 and whose decimal exponent e is within +-22: m and 10^|e|
 * are exact doubles, so one multiplication or division rounds exactly as
 * strtod does.  False for anything else (the input function decides). */
static inline bool fast_double(const char *p, const char *end, double *out, const char **stop)
{
#if !defined(FLT_EVAL_METHOD) || FLT_EVAL_METHOD != 0
    return false;   /* wider intermediates (x87) could round twice */
#endif
    bool neg = *p == '-';
    p += neg;
    uint64_t m = 0;
    int digits = 0, frac = 0;
    const char *d0 = p;
    while (p < end && (unsigned)(*p - '0') < 10 && digits < 19) {
        m = m * 10 + (unsigned)(*p++ - '0');
        digits++;
    }
    if (p == d0)
        return false;
    if (p < end && *p == '.') {
        const char *f0 = ++p;
        while (p < end && (unsigned)(*p - '0') < 10 && digits < 19) {
            m = m * 10 + (unsigned)(*p++ - '0');
            digits++;
        }
        frac = (int)(p - f0);
        if (frac == 0)
            return false;
    }
    int e = 0;
    if (p < end && (*p == 'e' || *p == 'E')) {
        p++;
        bool eneg = p < end && *p == '-';
        if (p < end && (*p == '-' || *p == '+'))
            p++;
        const char *e0 = p;
        while (p < end && (unsigned)(*p - '0') < 10 && p - e0 < 4)
            e = e * 10 + (*p++ - '0');
        if (p == e0)
            return false;
        if (eneg)
            e = -e;
    }
    e -= frac;
    if (!scalar_ends(p, end) || m > (1ULL << 53) || e < -22 || e > 22)
        return false;
    double d = (double)m;
    d = e < 0 ? d / exact_pow10[-e] : d * exact_pow10[e];
    *out = neg ? -d : d;
    *stop = p;
    return true;
}

/* The time of day of an ISO timestamp s[0..n) (n 19 to 26) in usec, if
 * its bytes after the date are what dt_parse_iso_fast takes: ' ' or 'T',
 * HH:MM:SS in range, then nothing or '.' and 1 to 6 digits. */
static inline bool iso_time_of_day(const char *s, size_t n, int64_t *us)
{
    static const uint8_t at[6] = {11, 12, 14, 15, 17, 18};
    int d[6];
    if ((s[10] != ' ' && s[10] != 'T') || s[13] != ':' || s[16] != ':')
        return false;
    for (int k = 0; k < 6; k++) {
        d[k] = s[at[k]] - '0';
        if (d[k] < 0 || d[k] > 9)
            return false;
    }
    int h = d[0] * 10 + d[1], mi = d[2] * 10 + d[3], sec = d[4] * 10 + d[5];
    if (h > 23 || mi > 59 || sec > 59)
        return false;
    int64_t f = 0;
    if (n > 19) {
        if (s[19] != '.' || n == 20)
            return false;
        for (size_t k = 20; k < n; k++) {
            int x = s[k] - '0';
            if (x < 0 || x > 9)
                return false;
            f = f * 10 + x;
        }
        for (size_t k = n - 20; k < 6; k++)
            f *= 10;
    }
    *us = (int64_t)((h * 60 + mi) * 60 + sec) * 1000000 + f;
    return true;
}

/* The last date a timestamp was read with on this thread, and that day's
 * midnight: a topic's records mostly share their date, so its check and
 * calendar arithmetic are done once a day instead of once a record.  A
 * memo of the bytes only, so any thread and any stream may use it. */
static _Thread_local struct {
    char    date[10];
    bool    set;
    int64_t midnight;
} last_date;

/* dt_parse_iso_fast, with the date looked up in last_date first. */
static inline bool fast_timestamp(const char *s, size_t n, int64_t *out)
{
    int64_t tod;
    if (n >= 19 && n <= 26 && last_date.set && memcmp(s, last_date.date, 10) == 0 &&
        iso_time_of_day(s, n, &tod)) {
        *out = last_date.midnight + tod;
        return true;
    }
    if (!dt_parse_iso_fast(s, n, out))
        return false;
    if (iso_time_of_day(s, n, &tod)) {
        memcpy(last_date.date, s, 10);
        last_date.midnight = *out - tod;
        last_date.set = true;
    }
    return true;
}

/* The common values without read_value's general path: a plain integer
 * of at most 18 digits for an integer column, a number for a double
 * precision column (fast_double), true or false for a boolean, a string
 * without escapes for a text column and one in the form
 * dt_parse_iso_fast takes for a timestamp.  Returns the end of the value
 * at p if it was stored; NULL leaves it to read_value, which then decides
 * exactly as before (the same values, the same reasons). */
static inline const char *read_fast(JCtx *cx, int c, const char *p)
{
    const char *end = cx->end;
    Vector *v = &cx->b->cols[c];
    uint32_t row = cx->row;
    char ch = *p;
    switch (v->type.id) {
    case TYPE_INT8:
    case TYPE_INT4:
    case TYPE_INT2: {
        if (ch != '-' && (unsigned)(ch - '0') >= 10)
            return NULL;
        bool neg = ch == '-';
        const char *d0 = p + neg, *q = d0;
        const char *lim = end - d0 > 19 ? d0 + 19 : end;
        uint64_t x = 0;
        unsigned d;
        while (q < lim && (d = (unsigned)(*q - '0')) < 10) {
            x = x * 10 + d;
            q++;
        }
        if (q == d0 || q - d0 > 18 || !scalar_ends(q, end))
            return NULL;
        int64_t y = neg ? -(int64_t)x : (int64_t)x;
        if (v->type.id == TYPE_INT8)
            v->v.i64[row] = y;
        else if (v->type.id == TYPE_INT4 && y >= INT32_MIN && y <= INT32_MAX)
            v->v.i32[row] = (int32_t)y;
        else if (v->type.id == TYPE_INT2 && y >= INT16_MIN && y <= INT16_MAX)
            v->v.i16[row] = (int16_t)y;
        else
            return NULL;
        p = q;
        break;
    }
    case TYPE_FLOAT8: {
        const char *q;
        if ((ch != '-' && (unsigned)(ch - '0') >= 10) || !fast_double(p, end, &v->v.f64[row], &q))
            return NULL;
        p = q;
        break;
    }
    case TYPE_BOOL:
        if (ch == 't' && end - p >= 4 && memcmp(p, "true", 4) == 0 && scalar_ends(p + 4, end)) {
            v->v.b[row] = 1;
            p += 4;
        } else if (ch == 'f' && end - p >= 5 && memcmp(p, "false", 5) == 0 &&
                   scalar_ends(p + 5, end)) {
            v->v.b[row] = 0;
            p += 5;
        } else {
            return NULL;
        }
        break;
    case TYPE_TEXT:
    case TYPE_UNKNOWN:
    case TYPE_TIMESTAMP: {
        if (ch != '"')
            return NULL;
        const char *q = next_special(p + 1, end);
        if (q == NULL || *q != '"')
            return NULL;   /* an escape, or unterminated */
        size_t n = (size_t)(q - (p + 1));
        if (v->type.id == TYPE_TIMESTAMP) {
            if (!fast_timestamp(p + 1, n, &v->v.i64[row]))
                return NULL;
        } else if (cx->spec->need != NULL && !cx->spec->need[c]) {
            return q + 1;   /* unread: checked by the scan, left NULL */
        } else {
            v->v.str[row].ptr = arena_strndup(cx->a, p + 1, n);
            v->v.str[row].len = (uint32_t)n;
        }
        p = q + 1;
        break;
    }
    default:
        return NULL;
    }
    v->nulls[row] = 0;
    return p;
}

/* The column whose key is at p (a quote), if it is the one the hint
 * predicts, written without escapes: then *pp moves past the key's
 * closing quote.  -1 otherwise.  Keys whose names hold a quote or a
 * backslash are never predicted (their JSON form differs from the name). */
static inline int predict_key(JCtx *cx, const char **pp)
{
    const FmtColumn *col = &cx->spec->cols[cx->hint];
    size_t n = col->keyq_len;   /* the key and its closing quote */
    const char *p = *pp + 1;
    if (n == 0 || (size_t)(cx->end - p) < n)
        return -1;
#if defined(__SSE2__)
    if (cx->end - p >= 16) {
        /* One compare of sixteen bytes, the ones past the key masked off. */
        __m128i x = _mm_loadu_si128((const __m128i *)(const void *)p);
        __m128i k = _mm_loadu_si128((const __m128i *)(const void *)col->keyq);
        unsigned eq = (unsigned)_mm_movemask_epi8(_mm_cmpeq_epi8(x, k));
        unsigned want = (1u << n) - 1;
        if ((eq & want) != want)
            return -1;
    } else
#endif
    if (memcmp(p, col->keyq, n) != 0)
        return -1;
    int c = cx->hint;
    *pp = p + n;
    cx->hint = c + 1 < cx->spec->ncols ? c + 1 : 0;
    return c;
}

/* parse_object for flat keys (FmtSpec.flat_keys, at least one column),
 * where a key names at most one column: the same checks in the same order
 * with the same reasons, but the key the hint predicts is compared in
 * place, the common values go through read_fast, and the position is
 * kept in a local (cx->p is set for the general functions it calls). */
static void parse_flat(JCtx *cx)
{
    const FmtSpec *spec = cx->spec;
    const char *end = cx->end;
    const char *p = ws_at(cx->p + 1, end);     /* after the '{' */
    if (p < end && *p == '}') {
        cx->p = p + 1;
        return;
    }
    for (;;) {
        p = ws_at(p, end);
        if (p >= end || *p != '"') {
            cx->p = p;
            fail(cx, "invalid JSON: %s at byte %ld", "expected a string key");
            return;
        }
        int c = predict_key(cx, &p);
        if (c < 0) {
            const char *k;
            size_t kn;
            bool esc;
            cx->p = p;
            if (!scan_string(cx, &k, &kn, &esc))
                return;
            SlStr key = {k, (uint32_t)kn};
            if (esc && !unescape(cx, k, kn, &key))
                return;
            /* At most one column has this key: look first after the
             * column of the last key, unless no key is this long. */
            bool may = spec->key_lengths == 0 ||
                       (spec->key_lengths >> SL_MIN(key.len, 63) & 1) != 0;
            for (int t = 0; may && t < spec->ncols; t++) {
                int i = cx->hint + t < spec->ncols ? cx->hint + t : cx->hint + t - spec->ncols;
                const FmtColumn *col = &spec->cols[i];
                if (col->pathlen[0] == key.len && memcmp(col->path[0], key.ptr, key.len) == 0) {
                    c = i;
                    cx->hint = i + 1 < spec->ncols ? i + 1 : 0;
                    break;
                }
            }
            p = cx->p;
        }
        if ((p = member_colon(cx, p)) == NULL)
            return;
        const char *q = c >= 0 ? read_fast(cx, c, p) : NULL;
        if (q == NULL) {
            cx->p = p;
            if (c >= 0) {
                read_value(cx, c);
            } else if (*p == '"') {
                /* What skip_value does with a string, without its stack. */
                const char *sv;
                size_t sn;
                bool se;
                if (!scan_string(cx, &sv, &sn, &se))
                    return;
            } else if (!skip_value(cx)) {
                return;
            }
            if (cx->failed)
                return;
            q = cx->p;
        }
        p = q;
        if (p < end && *p == ',') {
            p++;        /* usually the ',' follows the value at once */
            continue;
        }
        if (!member_next(cx, &p))
            break;
    }
    cx->p = p;
}

/* One JSON object per line into row `row`. */
static const char *json_record(const FmtSpec *spec, const char *rec, const char *end, Batch *b,
                               uint32_t row, Arena *a)
{
    const char *s = rec;
    while (s < end && (*s == ' ' || *s == '\t'))
        s++;
    JCtx cx;    /* not zeroed as a whole: reason is written only on failure */
    cx.spec = spec;
    cx.b = b;
    cx.row = row;
    cx.a = a;
    cx.p = s;
    cx.end = end;
    cx.line = rec;
    cx.hint = 0;
    cx.failed = false;
    /* In locals: the stores through nulls (bytes) may alias b's fields. */
    Vector *cols = b->cols;
    for (uint32_t c = 0, n = b->ncols; c < n; c++)
        cols[c].nulls[row] = 1;
    if (*cx.p != '{')
        fail(&cx, "invalid JSON: %s at byte %ld", "a record must be a JSON object");
    else if (spec->flat_keys && spec->ncols > 0)
        parse_flat(&cx);
    else
        parse_object(&cx, 0, spec->all_cols, spec->ncols);
    if (!cx.failed) {
        skip_ws(&cx);
        if (cx.p != cx.end)
            fail(&cx, "invalid JSON: %s at byte %ld", "trailing characters after the object");
    }
    return cx.failed ? arena_strdup(a, cx.reason) : NULL;
}

int fmt_json_decode(const FmtSpec *spec, const char *buf, size_t len, bool final, Batch *b,
                    uint32_t cap, Arena *a, FmtResult *res, SlError *err)
{
    SL_UNUSED(err);
    FmtLines how = {.decode = json_record, .skip_blank = 2};
    return fmt_decode_lines(&how, spec, buf, len, final, b, cap, a, res);
}
