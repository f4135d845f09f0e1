/*
 * strfuncs.c -- string and bytea functions, as PostgreSQL 15's varlena.c,
 * oracle_compat.c and encode.c compute them over UTF-8 text.
 *
 *   k_substr2, k_substr3, k_bytea_substr2, k_bytea_substr3   substr / substring
 *   k_strpos                                  position / strpos
 *   k_replace, k_translate, k_split_part, k_starts_with
 *   k_concat, k_concat_ws                     VARIADIC "any", NULLs skipped
 *   k_format                                  format(formatstr, VARIADIC "any"):
 *                                             %s %I %L %%, n$, -, widths
 *   k_quote_ident, k_quote_literal, k_quote_nullable
 *                                             quote_identifier (PostgreSQL 15's
 *                                             keyword list), quote_literal
 *   k_num_nulls, k_num_nonnulls               VARIADIC "any": NULLs counted
 *   k_btrim1/2, k_ltrim1/2, k_rtrim1/2        trim with optional characters
 *   k_left, k_right, k_lpad2/3, k_rpad2/3, k_repeat, k_reverse
 *                                             (repeat and pad copy by doubling
 *                                             and stop at a cancel or timeout)
 *   k_initcap, k_chr, k_ascii, k_to_hex32, k_to_hex64
 *   k_md5, k_sha224, k_sha256, k_sha384, k_sha512   OpenSSL EVP digests
 *   k_gen_random_uuid                         a version 4 UUID (RAND_bytes)
 *   k_encode, k_decode                        bytea <-> hex, base64, escape
 *                                             (base64 decoded by util's b64_decode)
 *   sl_case_map                               Unicode case mapping (upper/lower)
 *
 * Positions and lengths count characters (UTF-8), bytea functions bytes.
 * Results live in the batch arena; the only per-row work is a bump
 * allocation from it.  Results whose size the arguments pick (repeat,
 * lpad / rpad, replace) are checked against the statement's memory budget
 * before they are allocated (ex_alloc_budget: 53200).  Case mapping is
 * the C.UTF-8 locale's (towupper and friends, as PostgreSQL does under an
 * initdb in C.UTF-8), with an ASCII fast path.
 */
#include "functions/kernels.h"
#include "sluice/base64.h"
#include "sluice/functions.h"
#include "sluice/utf8.h"

#include <locale.h>
#include <openssl/evp.h>
#include <openssl/rand.h>
#include <pthread.h>
#include <stdio.h>
#include <strings.h>
#include <wctype.h>

static inline uint32_t u8next(const SlStr *s, uint32_t off)
{
    uint32_t l = (uint32_t)sl_utf8_len((unsigned char)s->ptr[off]);
    return off + l > s->len ? s->len : off + l;
}

static int64_t u8chars(const char *p, uint32_t len)
{
    int64_t n = 0;
    for (uint32_t k = 0; k < len; k++)
        n += ((unsigned char)p[k] & 0xC0) != 0x80;
    return n;
}

/* Byte offset of character number ch (0-based), or len if past the end. */
static uint32_t u8offset(const SlStr *s, int64_t ch)
{
    uint32_t off = 0;
    while (ch > 0 && off < s->len) {
        off = u8next(s, off);
        ch--;
    }
    return off;
}

static uint32_t u8decode(const char *p, uint32_t len, uint32_t *used)
{
    const unsigned char *s = (const unsigned char *)p;
    int l = sl_utf8_len(s[0]);
    if ((uint32_t)l > len)
        l = 1;
    uint32_t c = s[0];
    if (l == 2)
        c = ((s[0] & 0x1Fu) << 6) | (s[1] & 0x3Fu);
    else if (l == 3)
        c = ((s[0] & 0x0Fu) << 12) | ((s[1] & 0x3Fu) << 6) | (s[2] & 0x3Fu);
    else if (l == 4)
        c = ((s[0] & 0x07u) << 18) | ((s[1] & 0x3Fu) << 12) | ((s[2] & 0x3Fu) << 6) |
            (s[3] & 0x3Fu);
    *used = (uint32_t)l;
    return c;
}

static int u8encode(uint32_t c, char *out)
{
    if (c < 0x80) {
        out[0] = (char)c;
        return 1;
    }
    if (c < 0x800) {
        out[0] = (char)(0xC0 | (c >> 6));
        out[1] = (char)(0x80 | (c & 0x3F));
        return 2;
    }
    if (c < 0x10000) {
        out[0] = (char)(0xE0 | (c >> 12));
        out[1] = (char)(0x80 | ((c >> 6) & 0x3F));
        out[2] = (char)(0x80 | (c & 0x3F));
        return 3;
    }
    out[0] = (char)(0xF0 | (c >> 18));
    out[1] = (char)(0x80 | ((c >> 12) & 0x3F));
    out[2] = (char)(0x80 | ((c >> 6) & 0x3F));
    out[3] = (char)(0x80 | (c & 0x3F));
    return 4;
}

static inline void set_str(SlStr *r, const char *p, size_t len)
{
    r->ptr = p;
    r->len = (uint32_t)len;
}

static int too_large(EvalCtx *cx)
{
    return sl_error(cx->err, ERRCODE_PROGRAM_LIMIT_EXCEEDED, "requested length too large");
}

#define MAX_ALLOC ((int64_t)0x3fffffff)

/* Bytes copied between two looks at the statement's interrupt flag. */
#define FILL_CHECK_BYTES ((size_t)1 << 20)

/* Writes count copies of src[0..len) at dst: one copy, then what is written
 * so far copied again (doubling, then FILL_CHECK_BYTES at a time), so a
 * billion one-byte copies take a thousand memcpys, and the statement's
 * interrupt flag is looked at between them.  -1 with 57014 once a cancel
 * or statement_timeout set it. */
static int fill_copies(EvalCtx *cx, char *dst, const char *src, size_t len, int64_t count)
{
    if (count <= 0 || len == 0)
        return 0;
    size_t total = len * (size_t)count, done = len;
    size_t step = SL_MAX(FILL_CHECK_BYTES / len, (size_t)1) * len;    /* whole copies */
    memcpy(dst, src, len);
    while (done < total) {
        if (ex_check_interrupt(cx->err) < 0)
            return -1;
        size_t n = SL_MIN(SL_MIN(done, total - done), step);   /* whole copies too */
        memcpy(dst + done, dst, n);
        done += n;
    }
    return 0;
}

/* ---------------------------------------------------------- case mapping */

static locale_t utf8_locale;
static pthread_once_t utf8_once = PTHREAD_ONCE_INIT;

static void utf8_locale_init(void)
{
    utf8_locale = newlocale(LC_CTYPE_MASK, "C.UTF-8", (locale_t)0);
}

static uint32_t map_char(uint32_t c, int how)
{
    if (c < 0x80) {
        if (how > 0)
            return c >= 'a' && c <= 'z' ? c - 32 : c;
        return c >= 'A' && c <= 'Z' ? c + 32 : c;
    }
    pthread_once(&utf8_once, utf8_locale_init);
    if (utf8_locale == (locale_t)0)
        return c;
    return (uint32_t)(how > 0 ? towupper_l((wint_t)c, utf8_locale)
                              : towlower_l((wint_t)c, utf8_locale));
}

static bool is_alnum_char(uint32_t c)
{
    if (c < 0x80)
        return (c >= '0' && c <= '9') || ((c | 32) >= 'a' && (c | 32) <= 'z');
    pthread_once(&utf8_once, utf8_locale_init);
    return utf8_locale != (locale_t)0 && iswalnum_l((wint_t)c, utf8_locale);
}

/* Upper- (how > 0) or lower-cases s into the arena: ASCII in place, other
 * characters by the C.UTF-8 locale. */
void sl_case_map(Arena *a, const SlStr *s, int how, SlStr *out)
{
    bool ascii = true;
    for (uint32_t k = 0; k < s->len && ascii; k++)
        ascii = (unsigned char)s->ptr[k] < 0x80;
    char *buf = arena_alloc(a, (size_t)s->len * (ascii ? 1 : 2) + 4);
    size_t o = 0;
    for (uint32_t k = 0; k < s->len;) {
        unsigned char ch = (unsigned char)s->ptr[k];
        if (ch < 0x80) {
            buf[o++] = (char)map_char(ch, how);
            k++;
            continue;
        }
        uint32_t used, c = u8decode(s->ptr + k, s->len - k, &used);
        if (used == 1) {
            buf[o++] = (char)ch;
        } else {
            o += (size_t)u8encode(map_char(c, how), buf + o);
        }
        k += used;
    }
    set_str(out, buf, o);
}

KERNEL(k_initcap)
{
    FOR_SEL(sel, n, {
        const SlStr *s = &args[0].v.str[i];
        char *buf = arena_alloc(cx->arena, (size_t)s->len * 2 + 4);
        size_t o = 0;
        bool was_alnum = false;
        for (uint32_t k = 0; k < s->len;) {
            uint32_t used, c = u8decode(s->ptr + k, s->len - k, &used);
            if (used == 1 && c >= 0x80) {
                buf[o++] = s->ptr[k];
            } else {
                uint32_t m = map_char(c, was_alnum ? -1 : 1);
                o += (size_t)u8encode(m, buf + o);
            }
            was_alnum = is_alnum_char(c);
            k += used;
        }
        set_str(&out->v.str[i], buf, o);
    });
    return 0;
}

/* ---------------------------------------------------------------- substr */

/* text_substring: start S (1-based), length L (-1: to the end). */
static int substring(EvalCtx *cx, const SlStr *s, int32_t S, int64_t L, bool has_len,
                     bool bytes, SlStr *r)
{
    int64_t S1 = S > 1 ? S : 1, L1 = -1;
    if (has_len) {
        if (L < 0)
            return sl_error(cx->err, ERRCODE_SUBSTRING_ERROR,
                            "negative substring length not allowed");
        int64_t E = (int64_t)S + L;
        if (E > INT32_MAX) {
            L1 = -1;
        } else {
            if (E < 1) {
                set_str(r, "", 0);
                return 0;
            }
            L1 = E - S1;
        }
    }
    uint32_t from, to;
    if (bytes) {
        from = S1 - 1 > (int64_t)s->len ? s->len : (uint32_t)(S1 - 1);
        to = (L1 < 0 || from + L1 > (int64_t)s->len) ? s->len : from + (uint32_t)L1;
    } else {
        from = u8offset(s, S1 - 1);
        if (L1 < 0) {
            to = s->len;
        } else {
            to = from;
            for (int64_t c = 0; c < L1 && to < s->len; c++)
                to = u8next(s, to);
        }
    }
    if (to < from)
        to = from;
    set_str(r, s->ptr + from, to - from);
    return 0;
}

KERNEL(k_substr2)
{
    FOR_SEL(sel, n, {
        if (substring(cx, &args[0].v.str[i], args[1].v.i32[i], -1, false, false,
                      &out->v.str[i]) < 0)
            return -1;
    });
    return 0;
}

KERNEL(k_substr3)
{
    FOR_SEL(sel, n, {
        if (substring(cx, &args[0].v.str[i], args[1].v.i32[i], args[2].v.i32[i], true, false,
                      &out->v.str[i]) < 0)
            return -1;
    });
    return 0;
}

KERNEL(k_bytea_substr2)
{
    FOR_SEL(sel, n, {
        if (substring(cx, &args[0].v.str[i], args[1].v.i32[i], -1, false, true,
                      &out->v.str[i]) < 0)
            return -1;
    });
    return 0;
}

KERNEL(k_bytea_substr3)
{
    FOR_SEL(sel, n, {
        if (substring(cx, &args[0].v.str[i], args[1].v.i32[i], args[2].v.i32[i], true, true,
                      &out->v.str[i]) < 0)
            return -1;
    });
    return 0;
}

/* Byte offset of needle in hay from byte from, or -1. */
static int64_t find(const SlStr *hay, const SlStr *needle, uint32_t from)
{
    if (needle->len == 0)
        return from <= hay->len ? (int64_t)from : -1;
    if (hay->len < needle->len)
        return -1;
    const char *end = hay->ptr + hay->len - needle->len;
    const char *p = hay->ptr + from;
    while (p <= end) {
        const char *q = memchr(p, needle->ptr[0], (size_t)(end - p) + 1);
        if (q == NULL)
            return -1;
        if (memcmp(q, needle->ptr, needle->len) == 0)
            return q - hay->ptr;
        p = q + 1;
    }
    return -1;
}

KERNEL(k_strpos)
{
    FOR_SEL(sel, n, {
        const SlStr *h = &args[0].v.str[i], *nd = &args[1].v.str[i];
        int64_t off = find(h, nd, 0);
        out->v.i32[i] = off < 0 ? 0 : (int32_t)(u8chars(h->ptr, (uint32_t)off) + 1);
    });
    return 0;
}

KERNEL(k_starts_with)
{
    FOR_SEL(sel, n, {
        const SlStr *a = &args[0].v.str[i], *b = &args[1].v.str[i];
        out->v.b[i] = b->len <= a->len && memcmp(a->ptr, b->ptr, b->len) == 0;
    });
    return 0;
}

KERNEL(k_replace)
{
    FOR_SEL(sel, n, {
        const SlStr *s = &args[0].v.str[i], *from = &args[1].v.str[i], *to = &args[2].v.str[i];
        if (from->len == 0 || s->len == 0) {
            out->v.str[i] = *s;
            continue;
        }
        int64_t cnt = 0;
        for (int64_t off = find(s, from, 0); off >= 0;
             off = find(s, from, (uint32_t)off + from->len))
            cnt++;
        if (cnt == 0) {
            out->v.str[i] = *s;
            continue;
        }
        int64_t total = (int64_t)s->len + cnt * ((int64_t)to->len - from->len);
        if (total > MAX_ALLOC)
            return too_large(cx);
        char *buf = ex_alloc_budget(cx->arena, (size_t)total + 1, cx->err), *o = buf;
        if (buf == NULL)
            return -1;
        uint32_t pos = 0;
        for (int64_t off = find(s, from, 0); off >= 0;
             off = find(s, from, (uint32_t)off + from->len)) {
            memcpy(o, s->ptr + pos, (size_t)off - pos);
            o += (size_t)off - pos;
            memcpy(o, to->ptr, to->len);
            o += to->len;
            pos = (uint32_t)off + from->len;
        }
        memcpy(o, s->ptr + pos, s->len - pos);
        o += s->len - pos;
        set_str(&out->v.str[i], buf, (size_t)(o - buf));
    });
    return 0;
}

KERNEL(k_translate)
{
    FOR_SEL(sel, n, {
        const SlStr *s = &args[0].v.str[i], *from = &args[1].v.str[i], *to = &args[2].v.str[i];
        char *buf = arena_alloc(cx->arena, (size_t)s->len * 4 + 4);
        size_t o = 0;
        for (uint32_t k = 0; k < s->len;) {
            uint32_t cl = (uint32_t)sl_utf8_len((unsigned char)s->ptr[k]);
            if (k + cl > s->len)
                cl = s->len - k;
            /* the position of this character in from */
            int64_t pos = -1, idx = 0;
            for (uint32_t f = 0; f < from->len; f = u8next(from, f), idx++) {
                uint32_t fl = u8next(from, f) - f;
                if (fl == cl && memcmp(from->ptr + f, s->ptr + k, cl) == 0) {
                    pos = idx;
                    break;
                }
            }
            if (pos < 0) {
                memcpy(buf + o, s->ptr + k, cl);
                o += cl;
            } else {
                uint32_t t = u8offset(to, pos);
                if (t < to->len) {
                    uint32_t tl = u8next(to, t) - t;
                    memcpy(buf + o, to->ptr + t, tl);
                    o += tl;
                }
            }
            k += cl;
        }
        set_str(&out->v.str[i], buf, o);
    });
    return 0;
}

/* split_part, with PostgreSQL 14's negative field numbers. */
KERNEL(k_split_part)
{
    FOR_SEL(sel, n, {
        const SlStr *s = &args[0].v.str[i], *d = &args[1].v.str[i];
        int32_t fld = args[2].v.i32[i];
        SlStr *r = &out->v.str[i];
        if (fld == 0)
            return sl_error(cx->err, ERRCODE_INVALID_PARAMETER_VALUE,
                            "field position must not be zero");
        set_str(r, "", 0);
        if (s->len == 0)
            continue;
        if (d->len == 0) {
            if (fld == 1 || fld == -1)
                *r = *s;
            continue;
        }
        int64_t nfields = 1;
        for (int64_t off = find(s, d, 0); off >= 0; off = find(s, d, (uint32_t)off + d->len))
            nfields++;
        int64_t want = fld > 0 ? fld : nfields + fld + 1;
        if (want < 1 || want > nfields)
            continue;
        uint32_t start = 0;
        int64_t f = 1;
        int64_t off = find(s, d, 0);
        while (f < want) {
            start = (uint32_t)off + d->len;
            off = find(s, d, start);
            f++;
        }
        uint32_t end = off < 0 ? s->len : (uint32_t)off;
        set_str(r, s->ptr + start, end - start);
    });
    return 0;
}

/* ---------------------------------------------------------------- concat */

static bool is_text_type(SlTypeId t)
{
    return t == TYPE_TEXT || t == TYPE_VARCHAR || t == TYPE_UNKNOWN;
}

/* Appends argument a's row i in its text form. */
static void append_arg(StrBuf *b, const Vector *a, uint32_t i)
{
    if (is_text_type(a->type.id))
        strbuf_append(b, a->v.str[i].ptr, a->v.str[i].len);
    else
        value_format_text(a, i, b);
}

static int concat_rows(EvalCtx *cx, const Expr *e, const Vector *args, Vector *out,
                       const uint32_t *sel, uint32_t n, bool ws)
{
    StrBuf b;
    strbuf_init(&b);
    FOR_SEL(sel, n, {
        if (ws && vector_is_null(&args[0], i)) {
            out->nulls[i] = 1;
            continue;
        }
        strbuf_reset(&b);
        bool first = true;
        for (int a = ws ? 1 : 0; a < e->nargs; a++) {
            if (vector_is_null(&args[a], i))
                continue;
            if (ws && !first)
                strbuf_append(&b, args[0].v.str[i].ptr, args[0].v.str[i].len);
            append_arg(&b, &args[a], i);
            first = false;
        }
        if (b.len > (size_t)MAX_ALLOC) {
            strbuf_free(&b);
            return too_large(cx);
        }
        out->nulls[i] = 0;
        set_str(&out->v.str[i], b.len ? arena_memdup(cx->arena, b.data, b.len) : "", b.len);
    });
    strbuf_free(&b);
    return 0;
}

KERNEL(k_concat) { return concat_rows(cx, e, args, out, sel, n, false); }
KERNEL(k_concat_ws) { return concat_rows(cx, e, args, out, sel, n, true); }

/* ---------------------------------------------------------------- format */

static int format_error(EvalCtx *cx, const char *msg)
{
    return sl_error(cx->err, ERRCODE_INVALID_PARAMETER_VALUE, "%s", msg);
}

static int unterminated(EvalCtx *cx)
{
    format_error(cx, "unterminated format() type specifier");
    sl_error_hint(cx->err, "For a single \"%%\" use \"%%%%\".");
    return -1;
}

/* Reads a number at fmt[*k] (none: -1); 22023 past int range. */
static int format_number(EvalCtx *cx, const SlStr *fmt, uint32_t *k, int64_t *out)
{
    *out = -1;
    if (*k >= fmt->len || fmt->ptr[*k] < '0' || fmt->ptr[*k] > '9')
        return 0;
    int64_t v = 0;
    while (*k < fmt->len && fmt->ptr[*k] >= '0' && fmt->ptr[*k] <= '9') {
        v = v * 10 + (fmt->ptr[*k] - '0');
        if (v > INT32_MAX)
            return format_error(cx, "number is out of range");
        (*k)++;
    }
    *out = v;
    return 0;
}

/* Appends s padded with spaces to width characters (left-justified when
 * left). */
static void format_pad(StrBuf *b, const char *s, size_t len, int64_t width, bool left)
{
    int64_t chars = 0;
    for (size_t k = 0; k < len; k++)
        chars += ((unsigned char)s[k] & 0xC0) != 0x80;
    if (!left)
        for (int64_t k = chars; k < width; k++)
            strbuf_putc(b, ' ');
    strbuf_append(b, s, len);
    if (left)
        for (int64_t k = chars; k < width; k++)
            strbuf_putc(b, ' ');
}

/* quote_literal's form of s: '' for ', \\ for \, and then E'...'. */
static void put_literal(StrBuf *v, const char *s, size_t len)
{
    if (len > 0 && memchr(s, '\\', len) != NULL)
        strbuf_putc(v, 'E');
    strbuf_putc(v, '\'');
    for (size_t c = 0; c < len; c++) {
        if (s[c] == '\'' || s[c] == '\\')
            strbuf_putc(v, s[c]);
        strbuf_putc(v, s[c]);
    }
    strbuf_putc(v, '\'');
}

/* PostgreSQL 15's keywords that are not UNRESERVED_KEYWORD (kwlist.h; its
 * pg_get_keywords() with catcode <> 'U'), sorted: quote_ident quotes them. */
static const char *const pg_keywords_quoted[] = {
    "all", "analyse", "analyze", "and", "any", "array", "as", "asc", "asymmetric",
    "authorization", "between", "bigint", "binary", "bit", "boolean", "both", "case", "cast",
    "char", "character", "check", "coalesce", "collate", "collation", "column",
    "concurrently", "constraint", "create", "cross", "current_catalog", "current_date",
    "current_role", "current_schema", "current_time", "current_timestamp", "current_user",
    "dec", "decimal", "default", "deferrable", "desc", "distinct", "do", "else", "end",
    "except", "exists", "extract", "false", "fetch", "float", "for", "foreign", "freeze",
    "from", "full", "grant", "greatest", "group", "grouping", "having", "ilike", "in",
    "initially", "inner", "inout", "int", "integer", "intersect", "interval", "into", "is",
    "isnull", "join", "lateral", "leading", "least", "left", "like", "limit", "localtime",
    "localtimestamp", "national", "natural", "nchar", "none", "normalize", "not", "notnull",
    "null", "nullif", "numeric", "offset", "on", "only", "or", "order", "out", "outer",
    "overlaps", "overlay", "placing", "position", "precision", "primary", "real",
    "references", "returning", "right", "row", "select", "session_user", "setof", "similar",
    "smallint", "some", "substring", "symmetric", "table", "tablesample", "then", "time",
    "timestamp", "to", "trailing", "treat", "trim", "true", "union", "unique", "user",
    "using", "values", "varchar", "variadic", "verbose", "when", "where", "window", "with",
    "xmlattributes", "xmlconcat", "xmlelement", "xmlexists", "xmlforest", "xmlnamespaces",
    "xmlparse", "xmlpi", "xmlroot", "xmlserialize", "xmltable",
};

static int kw_cmp(const void *k, const void *e)
{
    return strcmp(k, *(const char *const *)e);
}

/* quote_ident's form of s (PostgreSQL's quote_identifier): as it is when
 * it is lower-case letters, digits and underscores, not starting with a
 * digit, and no keyword but an unreserved one; else in double quotes,
 * with " doubled. */
static void put_ident(StrBuf *v, const char *s, size_t len)
{
    bool safe = len > 0 && ((s[0] >= 'a' && s[0] <= 'z') || s[0] == '_');
    for (size_t c = 0; c < len && safe; c++)
        safe = (s[c] >= 'a' && s[c] <= 'z') || (s[c] >= '0' && s[c] <= '9') || s[c] == '_';
    if (safe && len < 64) {
        char w[64];
        memcpy(w, s, len);
        w[len] = '\0';
        safe = bsearch(w, pg_keywords_quoted, SL_ARRAY_LEN(pg_keywords_quoted),
                       sizeof(pg_keywords_quoted[0]), kw_cmp) == NULL;
    }
    if (safe) {
        strbuf_append(v, s, len);
        return;
    }
    strbuf_putc(v, '"');
    for (size_t c = 0; c < len; c++) {
        if (s[c] == '"')
            strbuf_putc(v, '"');
        strbuf_putc(v, s[c]);
    }
    strbuf_putc(v, '"');
}

/* quote_ident(text), quote_literal(anyelement) and quote_nullable
 * (anyelement: NULL is the text NULL); the argument comes as text. */
static int quote_rows(EvalCtx *cx, const Vector *args, Vector *out, const uint32_t *sel,
                      uint32_t n, int kind)
{
    StrBuf b;
    strbuf_init(&b);
    FOR_SEL(sel, n, {
        strbuf_reset(&b);
        if (vector_is_null(&args[0], i)) {
            if (kind != 2) {
                out->nulls[i] = 1;
                continue;
            }
            strbuf_puts(&b, "NULL");
        } else if (kind == 0) {
            put_ident(&b, args[0].v.str[i].ptr, args[0].v.str[i].len);
        } else {
            put_literal(&b, args[0].v.str[i].ptr, args[0].v.str[i].len);
        }
        if (out->nulls != NULL)
            out->nulls[i] = 0;
        out->v.str[i].ptr = arena_memdup(cx->arena, b.data ? b.data : "", b.len);
        out->v.str[i].len = (uint32_t)b.len;
    });
    strbuf_free(&b);
    return 0;
}

KERNEL(k_quote_ident) { SL_UNUSED(e); return quote_rows(cx, args, out, sel, n, 0); }
KERNEL(k_quote_literal) { SL_UNUSED(e); return quote_rows(cx, args, out, sel, n, 1); }
KERNEL(k_quote_nullable) { SL_UNUSED(e); return quote_rows(cx, args, out, sel, n, 2); }

/* format(formatstr, VARIADIC "any") as PostgreSQL 15's text_format: %s
 * (the value's text, NULL as nothing), %L (quote_literal, NULL as NULL),
 * %I (quote_ident; NULL is 22004), %%, each with an argument position
 * n$, the flag - and a width (a number, * or *n$); 22023 for what
 * PostgreSQL refuses. */
static int format_row(EvalCtx *cx, const Expr *e, const Vector *args, uint32_t i, StrBuf *b)
{
    const SlStr *fmt = &args[0].v.str[i];
    int nargs = e->nargs - 1;
    int next = 0;   /* the next argument, from 0 */
    StrBuf v;
    strbuf_init(&v);
    int rc = 0;
    for (uint32_t k = 0; k < fmt->len && rc == 0; k++) {
        if (fmt->ptr[k] != '%') {
            strbuf_putc(b, fmt->ptr[k]);
            continue;
        }
        if (++k >= fmt->len) {
            rc = unterminated(cx);
            break;
        }
        if (fmt->ptr[k] == '%') {
            strbuf_putc(b, '%');
            continue;
        }
        int64_t pos = -1, width = -1, n;
        bool left = false;
        /* n$ or a width */
        if ((rc = format_number(cx, fmt, &k, &n)) < 0)
            break;
        if (n >= 0 && k < fmt->len && fmt->ptr[k] == '$') {
            if (n == 0) {
                rc = format_error(cx, "format specifies argument 0, but arguments are "
                                      "numbered from 1");
                break;
            }
            pos = n - 1;
            k++;
            n = -1;
        }
        if (n < 0) {
            while (k < fmt->len && fmt->ptr[k] == '-') {
                left = true;
                k++;
            }
            if (k < fmt->len && fmt->ptr[k] == '*') {
                k++;
                int64_t wpos = -1;
                if ((rc = format_number(cx, fmt, &k, &wpos)) < 0)
                    break;
                if (wpos >= 0) {
                    if (k >= fmt->len || fmt->ptr[k] != '$') {
                        rc = unterminated(cx);
                        break;
                    }
                    if (wpos == 0) {
                        rc = format_error(cx, "format specifies argument 0, but arguments "
                                              "are numbered from 1");
                        break;
                    }
                    k++;
                    next = (int)wpos - 1;
                }
                if (next >= nargs) {
                    rc = format_error(cx, "too few arguments for format()");
                    break;
                }
                const Vector *wa = &args[1 + next++];
                if (vector_is_null(wa, i)) {
                    width = 0;
                } else {
                    StrBuf w;
                    strbuf_init(&w);
                    value_format_text(wa, i, &w);
                    width = strtoll(w.data ? w.data : "0", NULL, 10);
                    strbuf_free(&w);
                }
                if (width < 0) {
                    left = true;
                    width = -width;
                }
            } else if ((rc = format_number(cx, fmt, &k, &width)) < 0) {
                break;
            }
        } else {
            width = n;
        }
        if (k >= fmt->len) {
            rc = unterminated(cx);
            break;
        }
        char type = fmt->ptr[k];
        if (type != 's' && type != 'I' && type != 'L') {
            sl_error(cx->err, ERRCODE_INVALID_PARAMETER_VALUE,
                     "unrecognized format() type specifier \"%c\"", type);
            rc = -1;
            break;
        }
        int at = pos >= 0 ? (int)pos : next;
        if (at >= nargs) {
            rc = format_error(cx, "too few arguments for format()");
            break;
        }
        next = at + 1;
        const Vector *a = &args[1 + at];
        bool null = vector_is_null(a, i);
        if (type == 'I' && null) {
            rc = sl_error(cx->err, ERRCODE_NULL_VALUE_NOT_ALLOWED,
                          "null values cannot be formatted as an SQL identifier");
            break;
        }
        strbuf_reset(&v);
        if (null && type == 'L') {
            strbuf_puts(&v, "NULL");
        } else if (!null) {
            StrBuf t;
            strbuf_init(&t);
            append_arg(&t, a, i);
            if (type == 's')
                strbuf_append(&v, t.data, t.len);
            else if (type == 'I')
                put_ident(&v, t.data ? t.data : "", t.len);
            else
                put_literal(&v, t.data ? t.data : "", t.len);
            strbuf_free(&t);
        }
        format_pad(b, v.data ? v.data : "", v.len, width, left);
        if (b->len > (size_t)MAX_ALLOC)
            rc = too_large(cx);
    }
    strbuf_free(&v);
    return rc;
}

KERNEL(k_format)
{
    StrBuf b;
    strbuf_init(&b);
    FOR_SEL(sel, n, {
        if (vector_is_null(&args[0], i)) {
            out->nulls[i] = 1;
            continue;
        }
        strbuf_reset(&b);
        if (format_row(cx, e, args, i, &b) < 0) {
            strbuf_free(&b);
            return -1;
        }
        out->nulls[i] = 0;
        set_str(&out->v.str[i], b.len ? arena_memdup(cx->arena, b.data, b.len) : "", b.len);
    });
    strbuf_free(&b);
    return 0;
}

/* num_nulls(VARIADIC "any") and num_nonnulls: how many of the arguments
 * are (are not) NULL; never NULL itself. */
static int count_nulls(const Expr *e, const Vector *args, Vector *out, const uint32_t *sel,
                       uint32_t n, bool nonnull)
{
    FOR_SEL(sel, n, {
        int32_t c = 0;
        for (int a = 0; a < e->nargs; a++)
            c += vector_is_null(&args[a], i) != nonnull;
        out->nulls[i] = 0;
        out->v.i32[i] = c;
    });
    return 0;
}

KERNEL(k_num_nulls) { SL_UNUSED(cx); return count_nulls(e, args, out, sel, n, false); }
KERNEL(k_num_nonnulls) { SL_UNUSED(cx); return count_nulls(e, args, out, sel, n, true); }

/* ------------------------------------------------------------------ trim */

/* Does the character at p (l bytes) occur in set? */
static bool in_set(const SlStr *set, const char *p, uint32_t l)
{
    for (uint32_t f = 0; f < set->len; f = u8next(set, f)) {
        uint32_t fl = u8next(set, f) - f;
        if (fl == l && memcmp(set->ptr + f, p, l) == 0)
            return true;
    }
    return false;
}

static void trim(const SlStr *s, const SlStr *set, bool left, bool right, SlStr *r)
{
    uint32_t from = 0, to = s->len;
    if (left) {
        while (from < to) {
            uint32_t l = u8next(s, from) - from;
            if (!in_set(set, s->ptr + from, l))
                break;
            from += l;
        }
    }
    if (right) {
        while (to > from) {
            uint32_t st = to - 1;
            while (st > from && ((unsigned char)s->ptr[st] & 0xC0) == 0x80)
                st--;
            if (!in_set(set, s->ptr + st, to - st))
                break;
            to = st;
        }
    }
    set_str(r, s->ptr + from, to - from);
}

static const SlStr space_set = {" ", 1};

#define TRIM_KERNELS(NAME, L, R)                                                     \
    KERNEL(k_##NAME##1)                                                              \
    {                                                                                \
        FOR_SEL(sel, n, { trim(&args[0].v.str[i], &space_set, L, R, &out->v.str[i]); }); \
        return 0;                                                                    \
    }                                                                                \
    KERNEL(k_##NAME##2)                                                              \
    {                                                                                \
        FOR_SEL(sel, n, {                                                            \
            trim(&args[0].v.str[i], &args[1].v.str[i], L, R, &out->v.str[i]);        \
        });                                                                          \
        return 0;                                                                    \
    }

TRIM_KERNELS(btrim, true, true)
TRIM_KERNELS(ltrim, true, false)
TRIM_KERNELS(rtrim, false, true)

/* ------------------------------------------------------------- left/right */

KERNEL(k_left)
{
    FOR_SEL(sel, n, {
        const SlStr *s = &args[0].v.str[i];
        int64_t k = args[1].v.i32[i];
        if (k < 0) {
            k = u8chars(s->ptr, s->len) + k;
            if (k < 0)
                k = 0;
        }
        set_str(&out->v.str[i], s->ptr, u8offset(s, k));
    });
    return 0;
}

KERNEL(k_right)
{
    FOR_SEL(sel, n, {
        const SlStr *s = &args[0].v.str[i];
        int64_t k = args[1].v.i32[i], len = u8chars(s->ptr, s->len);
        int64_t skip = k < 0 ? -k : len - k;
        if (skip < 0)
            skip = 0;
        uint32_t off = u8offset(s, skip);
        set_str(&out->v.str[i], s->ptr + off, s->len - off);
    });
    return 0;
}

/* lpad / rpad */
static int pad(EvalCtx *cx, const SlStr *s, int32_t len, const SlStr *fill, bool left, SlStr *r)
{
    if (len < 0)
        len = 0;
    int64_t slen = u8chars(s->ptr, s->len);
    if (slen > len)
        slen = len;
    int64_t flen = u8chars(fill->ptr, fill->len);
    if (flen <= 0)
        len = (int32_t)slen;
    if ((int64_t)len * 4 + 4 > MAX_ALLOC)
        return too_large(cx);
    uint32_t sbytes = u8offset(s, slen);
    int64_t padchars = len - slen;
    /* bytes of the padding: whole fills plus a partial one */
    int64_t whole = flen > 0 ? padchars / flen : 0, part = flen > 0 ? padchars % flen : 0;
    uint32_t partbytes = flen > 0 ? u8offset(fill, part) : 0;
    size_t total = (size_t)sbytes + (size_t)whole * fill->len + partbytes;
    char *buf = ex_alloc_budget(cx->arena, total + 1, cx->err), *o = buf;
    if (buf == NULL)
        return -1;
    if (!left) {
        memcpy(o, s->ptr, sbytes);
        o += sbytes;
    }
    if (fill_copies(cx, o, fill->ptr, fill->len, whole) < 0)
        return -1;
    o += (size_t)whole * fill->len;
    memcpy(o, fill->ptr, partbytes);
    o += partbytes;
    if (left) {
        memcpy(o, s->ptr, sbytes);
        o += sbytes;
    }
    set_str(r, buf, (size_t)(o - buf));
    return 0;
}

KERNEL(k_lpad2)
{
    FOR_SEL(sel, n, {
        if (pad(cx, &args[0].v.str[i], args[1].v.i32[i], &space_set, true, &out->v.str[i]) < 0)
            return -1;
    });
    return 0;
}

KERNEL(k_lpad3)
{
    FOR_SEL(sel, n, {
        if (pad(cx, &args[0].v.str[i], args[1].v.i32[i], &args[2].v.str[i], true,
                &out->v.str[i]) < 0)
            return -1;
    });
    return 0;
}

KERNEL(k_rpad2)
{
    FOR_SEL(sel, n, {
        if (pad(cx, &args[0].v.str[i], args[1].v.i32[i], &space_set, false, &out->v.str[i]) < 0)
            return -1;
    });
    return 0;
}

KERNEL(k_rpad3)
{
    FOR_SEL(sel, n, {
        if (pad(cx, &args[0].v.str[i], args[1].v.i32[i], &args[2].v.str[i], false,
                &out->v.str[i]) < 0)
            return -1;
    });
    return 0;
}

KERNEL(k_repeat)
{
    FOR_SEL(sel, n, {
        const SlStr *s = &args[0].v.str[i];
        int64_t cnt = args[1].v.i32[i];
        if (cnt < 0)
            cnt = 0;
        int64_t total = cnt * (int64_t)s->len;
        if (total + 4 > MAX_ALLOC)
            return too_large(cx);
        char *buf = ex_alloc_budget(cx->arena, (size_t)total + 1, cx->err);
        if (buf == NULL || fill_copies(cx, buf, s->ptr, s->len, cnt) < 0)
            return -1;
        set_str(&out->v.str[i], buf, (size_t)total);
    });
    return 0;
}

KERNEL(k_reverse)
{
    FOR_SEL(sel, n, {
        const SlStr *s = &args[0].v.str[i];
        char *buf = arena_alloc(cx->arena, (size_t)s->len + 1);
        uint32_t o = s->len;
        for (uint32_t k = 0; k < s->len;) {
            uint32_t l = u8next(s, k) - k;
            o -= l;
            memcpy(buf + o, s->ptr + k, l);
            k += l;
        }
        set_str(&out->v.str[i], buf, s->len);
    });
    return 0;
}

/* --------------------------------------------------------- chr and ascii */

KERNEL(k_chr)
{
    FOR_SEL(sel, n, {
        int32_t arg = args[0].v.i32[i];
        if (arg < 0)
            return sl_error(cx->err, ERRCODE_PROGRAM_LIMIT_EXCEEDED,
                            "character number must be positive");
        if (arg == 0)
            return sl_error(cx->err, ERRCODE_PROGRAM_LIMIT_EXCEEDED,
                            "null character not permitted");
        if (arg > 0x10FFFF)
            return sl_error(cx->err, ERRCODE_PROGRAM_LIMIT_EXCEEDED,
                            "requested character too large for encoding: %d", arg);
        if (arg >= 0xD800 && arg <= 0xDFFF)
            return sl_error(cx->err, ERRCODE_PROGRAM_LIMIT_EXCEEDED,
                            "requested character not valid for encoding: %d", arg);
        char *buf = arena_alloc(cx->arena, 4);
        set_str(&out->v.str[i], buf, (size_t)u8encode((uint32_t)arg, buf));
    });
    return 0;
}

KERNEL(k_ascii)
{
    FOR_SEL(sel, n, {
        const SlStr *s = &args[0].v.str[i];
        uint32_t used;
        out->v.i32[i] = s->len == 0 ? 0 : (int32_t)u8decode(s->ptr, s->len, &used);
    });
    return 0;
}

static void to_hex(Arena *a, uint64_t v, SlStr *r)
{
    char tmp[17];
    int k = 16;
    tmp[k] = '\0';
    do {
        tmp[--k] = "0123456789abcdef"[v & 15];
        v >>= 4;
    } while (v);
    set_str(r, arena_memdup(a, tmp + k, (size_t)(16 - k)), (size_t)(16 - k));
}

KERNEL(k_to_hex32)
{
    FOR_SEL(sel, n, { to_hex(cx->arena, (uint32_t)args[0].v.i32[i], &out->v.str[i]); });
    return 0;
}

KERNEL(k_to_hex64)
{
    FOR_SEL(sel, n, { to_hex(cx->arena, (uint64_t)args[0].v.i64[i], &out->v.str[i]); });
    return 0;
}

/* --------------------------------------------------------------- digests */

static const char hexdig[] = "0123456789abcdef";

static int digest(EvalCtx *cx, const Vector *args, Vector *out, const uint32_t *sel, uint32_t n,
                  const EVP_MD *md, bool as_hex)
{
    FOR_SEL(sel, n, {
        unsigned char d[EVP_MAX_MD_SIZE];
        unsigned int dl = 0;
        const SlStr *s = &args[0].v.str[i];
        if (!EVP_Digest(s->ptr ? s->ptr : "", s->len, d, &dl, md, NULL))
            return sl_error(cx->err, ERRCODE_INTERNAL_ERROR, "could not compute digest");
        if (as_hex) {
            char *buf = arena_alloc(cx->arena, (size_t)dl * 2);
            for (unsigned k = 0; k < dl; k++) {
                buf[2 * k] = hexdig[d[k] >> 4];
                buf[2 * k + 1] = hexdig[d[k] & 15];
            }
            set_str(&out->v.str[i], buf, (size_t)dl * 2);
        } else {
            set_str(&out->v.str[i], arena_memdup(cx->arena, d, dl), dl);
        }
    });
    return 0;
}

KERNEL(k_md5) { return digest(cx, args, out, sel, n, EVP_md5(), true); }
KERNEL(k_sha256) { return digest(cx, args, out, sel, n, EVP_sha256(), false); }
KERNEL(k_sha224) { return digest(cx, args, out, sel, n, EVP_sha224(), false); }
KERNEL(k_sha384) { return digest(cx, args, out, sel, n, EVP_sha384(), false); }
KERNEL(k_sha512) { return digest(cx, args, out, sel, n, EVP_sha512(), false); }

/* gen_random_uuid(): a version 4 UUID of OpenSSL's RAND_bytes (a
 * cryptographic generator, as PostgreSQL's pg_strong_random), its
 * version and variant bits set as RFC 4122 says. */
KERNEL(k_gen_random_uuid)
{
    SL_UNUSED(e);
    SL_UNUSED(args);
    FOR_SEL(sel, n, {
        unsigned char *u = arena_alloc(cx->arena, 16);
        if (RAND_bytes(u, 16) != 1)
            return sl_error(cx->err, ERRCODE_INTERNAL_ERROR,
                            "could not generate random values");
        u[6] = (unsigned char)((u[6] & 0x0F) | 0x40);
        u[8] = (unsigned char)((u[8] & 0x3F) | 0x80);
        out->v.str[i].ptr = (const char *)u;
        out->v.str[i].len = 16;
    });
    return 0;
}

/* ------------------------------------------------------- encode / decode */

static const char b64[] = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";

static int bad_encoding(EvalCtx *cx, const SlStr *f)
{
    return sl_error(cx->err, ERRCODE_INVALID_PARAMETER_VALUE, "unrecognized encoding: \"%.*s\"",
                    (int)SL_MIN(f->len, 100), f->ptr);
}

static int fmt_kind(const SlStr *f)
{
    if (f->len == 3 && strncasecmp(f->ptr, "hex", 3) == 0)
        return 0;
    if (f->len == 6 && strncasecmp(f->ptr, "base64", 6) == 0)
        return 1;
    if (f->len == 6 && strncasecmp(f->ptr, "escape", 6) == 0)
        return 2;
    return -1;
}

KERNEL(k_encode)
{
    FOR_SEL(sel, n, {
        const SlStr *s = &args[0].v.str[i], *f = &args[1].v.str[i];
        int kind = fmt_kind(f);
        if (kind < 0)
            return bad_encoding(cx, f);
        const unsigned char *p = (const unsigned char *)s->ptr;
        char *buf, *o;
        if (kind == 0) {
            buf = o = arena_alloc(cx->arena, (size_t)s->len * 2 + 1);
            for (uint32_t k = 0; k < s->len; k++) {
                *o++ = hexdig[p[k] >> 4];
                *o++ = hexdig[p[k] & 15];
            }
        } else if (kind == 1) {
            /* PostgreSQL breaks base64 lines at 76 characters */
            buf = o = arena_alloc(cx->arena, ((size_t)s->len + 2) / 3 * 4 + s->len / 57 + 2);
            int linelen = 0;
            for (uint32_t k = 0; k < s->len; k += 3) {
                uint32_t v = (uint32_t)p[k] << 16;
                if (k + 1 < s->len)
                    v |= (uint32_t)p[k + 1] << 8;
                if (k + 2 < s->len)
                    v |= p[k + 2];
                if (linelen >= 76) {
                    *o++ = '\n';
                    linelen = 0;
                }
                *o++ = b64[(v >> 18) & 63];
                *o++ = b64[(v >> 12) & 63];
                *o++ = k + 1 < s->len ? b64[(v >> 6) & 63] : '=';
                *o++ = k + 2 < s->len ? b64[v & 63] : '=';
                linelen += 4;
            }
        } else {
            buf = o = arena_alloc(cx->arena, (size_t)s->len * 4 + 1);
            for (uint32_t k = 0; k < s->len; k++) {
                if (p[k] == '\\') {
                    *o++ = '\\';
                    *o++ = '\\';
                } else if (p[k] < 0x20 || p[k] > 0x7e) {
                    *o++ = '\\';
                    *o++ = (char)('0' + (p[k] >> 6));
                    *o++ = (char)('0' + ((p[k] >> 3) & 7));
                    *o++ = (char)('0' + (p[k] & 7));
                } else {
                    *o++ = (char)p[k];
                }
            }
        }
        set_str(&out->v.str[i], buf, (size_t)(o - buf));
    });
    return 0;
}

KERNEL(k_decode)
{
    FOR_SEL(sel, n, {
        const SlStr *s = &args[0].v.str[i], *f = &args[1].v.str[i];
        int kind = fmt_kind(f);
        if (kind < 0)
            return bad_encoding(cx, f);
        char *buf = arena_alloc(cx->arena, (size_t)s->len + 1);
        int64_t o = 0;
        if (kind == 0) {
            o = bytea_hex_decode(s->ptr, s->len, buf, -1, cx->err);
            if (o < 0)
                return -1;
        } else if (kind == 1) {
            size_t bad = 0;
            o = b64_decode(s->ptr, s->len, true, (uint8_t *)buf, (size_t)s->len + 1, &bad);
            if (o == B64_BAD_PAD)
                return sl_error(cx->err, ERRCODE_INVALID_PARAMETER_VALUE,
                                "unexpected \"=\" while decoding base64 sequence");
            if (o == B64_BAD_SYMBOL)
                return sl_error(cx->err, ERRCODE_INVALID_PARAMETER_VALUE,
                                "invalid symbol \"%.*s\" found while decoding base64 "
                                "sequence", sl_utf8_len((unsigned char)s->ptr[bad]),
                                s->ptr + bad);
            if (o < 0) {
                /* B64_BAD_END: the output always fits (len + 1 bytes) */
                sl_error(cx->err, ERRCODE_INVALID_PARAMETER_VALUE, "invalid base64 end sequence");
                sl_error_hint(cx->err, "Input data is missing padding, is truncated, or is "
                                       "otherwise corrupted.");
                return -1;
            }
        } else {
            for (uint32_t k = 0; k < s->len;) {
                const char *p = s->ptr + k;
                if (*p != '\\') {
                    buf[o++] = *p;
                    k++;
                } else if (k + 1 < s->len && p[1] == '\\') {
                    buf[o++] = '\\';
                    k += 2;
                } else if (k + 3 < s->len && p[1] >= '0' && p[1] <= '3' && p[2] >= '0' &&
                           p[2] <= '7' && p[3] >= '0' && p[3] <= '7') {
                    buf[o++] = (char)(((p[1] - '0') << 6) | ((p[2] - '0') << 3) | (p[3] - '0'));
                    k += 4;
                } else {
                    return sl_error(cx->err, ERRCODE_INVALID_TEXT_REPRESENTATION,
                                    "invalid input syntax for type %s", "bytea");
                }
            }
        }
        set_str(&out->v.str[i], buf, (size_t)o);
    });
    return 0;
}
