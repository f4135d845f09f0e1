/*
 * json_ref.c -- the JSON-lines decoder as it was at main f57dc53 (before the
 * predicted keys and fast value paths of src/connectors/format_json.c),
 * kept verbatim but for its name, fmt_spec_init (shared) and the refusal of
 * a \u escape of a lone surrogate (issue 19, item 16), as the oracle
 * of the differential test (test_json_diff.c) and the "before" of
 * tools/bench/json_decode_bench.c.
 *
 *   fmt_json_decode_ref   fmt_json_decode as it was
 *   json_ref_same         the comparison of two decodes the tests make
 *
 * Not part of the server: only the test and the benchmark link it.
 */
#include "json_ref.h"

#include "sluice/expr.h"

#include "connectors/format_int.h"

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

static void fail(JCtx *cx, const char *fmt, const char *what)
{
    if (cx->failed)
        return;
    cx->failed = true;
    snprintf(cx->reason, sizeof(cx->reason), fmt, what, (long)(cx->p - cx->line));
}

static inline void skip_ws(JCtx *cx)
{
    while (cx->p < cx->end &&
           (*cx->p == ' ' || *cx->p == '\t' || *cx->p == '\r' || *cx->p == '\n'))
        cx->p++;
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

/* Parses the object at p; cols are the columns whose path matched so far
 * (depth keys deep). */
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
        skip_ws(cx);
        if (cx->p >= cx->end || *cx->p != ':') {
            fail(cx, "invalid JSON: %s at byte %ld", "expected ':'");
            return;
        }
        cx->p++;
        skip_ws(cx);
        if (cx->p >= cx->end) {
            fail(cx, "invalid JSON: %s at byte %ld", "unexpected end of record");
            return;
        }
        int nleaf = 0, ndeep = 0;
        if (cx->spec->flat_keys) {
            /* At most one column has this key: look first after the
             * column of the last key, as objects tend to list their
             * members in the order of the stream's columns. */
            for (int t = 0; t < ncols; t++) {
                int i = cx->hint + t < ncols ? cx->hint + t : cx->hint + t - ncols;
                const FmtColumn *col = &cx->spec->cols[cols[i]];
                if (col->pathlen[0] == key.len && memcmp(col->path[0], key.ptr, key.len) == 0) {
                    match[nleaf++] = cols[i];
                    cx->hint = i + 1 < ncols ? i + 1 : 0;
                    break;
                }
            }
        }
        for (int i = 0; i < ncols && !cx->spec->flat_keys; i++) {
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
        skip_ws(cx);
        if (cx->p < cx->end && *cx->p == ',') {
            cx->p++;
            continue;
        }
        if (cx->p < cx->end && *cx->p == '}') {
            cx->p++;
            return;
        }
        fail(cx, "invalid JSON: %s at byte %ld", "expected ',' or '}'");
        return;
    }
}

/* One JSON object per line into row `row`. */
static const char *json_record(const FmtSpec *spec, const char *rec, const char *end, Batch *b,
                               uint32_t row, Arena *a)
{
    const char *s = rec;
    while (s < end && (*s == ' ' || *s == '\t'))
        s++;
    JCtx cx = {.spec = spec, .b = b, .row = row, .a = a, .p = s, .end = end, .line = rec};
    for (uint32_t c = 0; c < b->ncols; c++)
        b->cols[c].nulls[row] = 1;
    if (*cx.p != '{')
        fail(&cx, "invalid JSON: %s at byte %ld", "a record must be a JSON object");
    else
        parse_object(&cx, 0, spec->all_cols, spec->ncols);
    if (!cx.failed) {
        skip_ws(&cx);
        if (cx.p != cx.end)
            fail(&cx, "invalid JSON: %s at byte %ld", "trailing characters after the object");
    }
    return cx.failed ? arena_strdup(a, cx.reason) : NULL;
}

int fmt_json_decode_ref(const FmtSpec *spec, const char *buf, size_t len, bool final, Batch *b,
                    uint32_t cap, Arena *a, FmtResult *res, SlError *err)
{
    SL_UNUSED(err);
    FmtLines how = {.decode = json_record, .skip_blank = 2};
    return fmt_decode_lines(&how, spec, buf, len, final, b, cap, a, res);
}

static bool same_value(const Vector *x, const Vector *y, uint32_t r)
{
    if (vector_is_null(x, r) != vector_is_null(y, r))
        return false;
    if (vector_is_null(x, r))
        return true;
    switch (x->type.id) {
    case TYPE_TEXT:
    case TYPE_VARCHAR:
    case TYPE_JSONB:
    case TYPE_BYTEA:
    case TYPE_UNKNOWN:
        return x->v.str[r].len == y->v.str[r].len &&
               memcmp(x->v.str[r].ptr, y->v.str[r].ptr, x->v.str[r].len) == 0;
    default: {
        size_t w = type_width(x->type.id);
        return memcmp((const char *)x->v.data + w * r, (const char *)y->v.data + w * r, w) == 0;
    }
    }
}

bool json_ref_same(int ncols, const Batch *x, const FmtResult *rx, const Batch *y,
                   const FmtResult *ry)
{
    bool same = x->nrows == y->nrows && rx->ndead == ry->ndead && rx->records == ry->records &&
                rx->consumed == ry->consumed;
    for (int i = 0; same && i < rx->ndead; i++)
        same = rx->dead[i].record == ry->dead[i].record &&
               rx->dead[i].offset == ry->dead[i].offset &&
               strcmp(rx->dead[i].reason, ry->dead[i].reason) == 0 &&
               rx->dead[i].raw.len == ry->dead[i].raw.len;
    for (uint32_t r = 0; same && r < x->nrows; r++)
        for (int c = 0; same && c < ncols; c++)
            same = same_value(&x->cols[c], &y->cols[c], r);
    return same;
}
