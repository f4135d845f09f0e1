/*
 * text.c -- text kernels: concatenation, LIKE/ILIKE, length, case mapping.
 *
 *   k_textcat                     text || text
 *   k_like, k_notlike, k_ilike,
 *   k_notilike, k_like_esc,
 *   k_ilike_esc                   LIKE / ILIKE [ESCAPE]
 *   k_length, k_octet_length, k_bit_length   length() in characters (UTF-8), bytes, bits
 *   k_upper, k_lower              case mapping: ASCII in place, other
 *                                 characters as the C.UTF-8 locale maps them
 *   ex_format_value               a value's text form in an arena string
 *
 * Kernels that make strings size all the selected rows first and take one
 * block from the arena for them, so there is no allocation per row.
 * Matching is PostgreSQL's like_match.c algorithm (MatchText), byte-wise
 * with '_' stepping one UTF-8 character.
 */
#include "functions/kernels.h"
#include "sluice/functions.h"
#include "sluice/utf8.h"

void ex_format_value(Arena *a, const Vector *v, uint32_t i, SlStr *out)
{
    StrBuf b;
    strbuf_init(&b);
    value_format_text(v, i, &b);
    out->ptr = arena_memdup(a, b.data ? b.data : "", b.len);
    out->len = (uint32_t)b.len;
    strbuf_free(&b);
}

KERNEL(k_textcat)
{
    const SlStr *a = args[0].v.str, *b = args[1].v.str;
    SlStr *r = out->v.str;
    size_t total = 0;
    FOR_SEL(sel, n, { total += (size_t)a[i].len + b[i].len; });
    char *buf = ex_alloc_budget(cx->arena, total ? total : 1, cx->err);
    if (buf == NULL)
        return -1;
    FOR_SEL(sel, n, {
        memcpy(buf, a[i].ptr, a[i].len);
        memcpy(buf + a[i].len, b[i].ptr, b[i].len);
        r[i].ptr = buf;
        r[i].len = a[i].len + b[i].len;
        if ((size_t)r[i].len != (size_t)a[i].len + b[i].len)
            return sl_error(cx->err, ERRCODE_PROGRAM_LIMIT_EXCEEDED,
                            "invalid memory alloc request size");
        buf += r[i].len;
    });
    return 0;
}

enum { LIKE_FALSE = 0, LIKE_TRUE = 1, LIKE_ABORT = -1, LIKE_ERROR = -2 };

static inline int fold(int c, bool ci)
{
    return ci && c >= 'A' && c <= 'Z' ? c + 32 : c;
}

/* MatchText from like_match.c; esc is the escape byte or -1. */
static int match_text(const unsigned char *t, int tlen, const unsigned char *p, int plen,
                      int esc, bool ci)
{
    if (plen == 1 && *p == '%')
        return LIKE_TRUE;
    while (tlen > 0 && plen > 0) {
        if (*p == esc) {
            p++;
            plen--;
            if (plen <= 0)
                return LIKE_ERROR;
            if (fold(*p, ci) != fold(*t, ci))
                return LIKE_FALSE;
        } else if (*p == '%') {
            p++;
            plen--;
            while (plen > 0) {
                if (*p == '%') {
                    p++;
                    plen--;
                } else if (*p == '_') {
                    if (tlen <= 0)
                        return LIKE_ABORT;
                    int l = SL_MIN(sl_utf8_len(*t), tlen);
                    t += l;
                    tlen -= l;
                    p++;
                    plen--;
                } else {
                    break;
                }
            }
            if (plen <= 0)
                return LIKE_TRUE;
            int firstpat;
            if (*p == esc) {
                if (plen < 2)
                    return LIKE_ERROR;
                firstpat = fold(p[1], ci);
            } else {
                firstpat = fold(*p, ci);
            }
            while (tlen > 0) {
                if (fold(*t, ci) == firstpat) {
                    int m = match_text(t, tlen, p, plen, esc, ci);
                    if (m != LIKE_FALSE)
                        return m;
                }
                int l = SL_MIN(sl_utf8_len(*t), tlen);
                t += l;
                tlen -= l;
            }
            return LIKE_ABORT;
        } else if (*p == '_') {
            int l = SL_MIN(sl_utf8_len(*t), tlen);
            t += l;
            tlen -= l;
            p++;
            plen--;
            continue;
        } else if (fold(*p, ci) != fold(*t, ci)) {
            return LIKE_FALSE;
        }
        t++;
        tlen--;
        p++;
        plen--;
    }
    if (tlen > 0)
        return LIKE_FALSE;
    while (plen > 0 && *p == '%') {
        p++;
        plen--;
    }
    if (plen <= 0)
        return LIKE_TRUE;
    return LIKE_ABORT;
}

/* The shapes of a LIKE pattern that need no matcher: 'abc' (equality),
 * 'abc%' (prefix), '%abc%' (substring), with abc free of _ % and \. */
enum { SHAPE_NONE, SHAPE_EXACT, SHAPE_PREFIX, SHAPE_CONTAINS };

static int pattern_shape(const SlStr *p, SlStr *lit)
{
    uint32_t b = 0, e = p->len;
    bool lead = false, trail = false;
    while (b < e && p->ptr[b] == '%') {
        b++;
        lead = true;
    }
    while (e > b && p->ptr[e - 1] == '%') {
        e--;
        trail = true;
    }
    for (uint32_t k = b; k < e; k++)
        if (p->ptr[k] == '%' || p->ptr[k] == '_' || p->ptr[k] == '\\')
            return SHAPE_NONE;
    lit->ptr = p->ptr + b;
    lit->len = e - b;
    if (!lead && !trail)
        return SHAPE_EXACT;
    if (!lead)
        return SHAPE_PREFIX;
    return trail || lit->len == 0 ? SHAPE_CONTAINS : SHAPE_NONE;
}

static bool shape_match(int shape, const SlStr *t, const SlStr *lit)
{
    switch (shape) {
    case SHAPE_EXACT:
        return t->len == lit->len && memcmp(t->ptr, lit->ptr, lit->len) == 0;
    case SHAPE_PREFIX:
        return t->len >= lit->len &&
               (lit->len == 0 || (t->ptr[0] == lit->ptr[0] &&
                                  memcmp(t->ptr + 1, lit->ptr + 1, lit->len - 1) == 0));
    default:
        return lit->len == 0 || (t->len >= lit->len && memmem(t->ptr, t->len, lit->ptr, lit->len) != NULL);
    }
}

static int like_rows(EvalCtx *cx, const Vector *args, Vector *out, const uint32_t *sel,
                     uint32_t n, bool ci, bool negate, bool with_escape)
{
    const SlStr *a = args[0].v.str, *p = args[1].v.str;
    uint8_t *r = out->v.b;
    if (!ci && !with_escape && n > 0) {
        /* a pattern that is the same for every row (a constant) and has a
         * simple shape: compare bytes, without the matcher */
        const SlStr *p0 = &p[sel ? sel[0] : 0];
        SlStr lit = {NULL, 0};
        int shape = pattern_shape(p0, &lit);
        bool same = shape != SHAPE_NONE;
        FOR_SEL(sel, n, { same &= p[i].ptr == p0->ptr && p[i].len == p0->len; });
        if (same && shape == SHAPE_PREFIX) {
            /* the common 'abc%': a loop whose length rarely varies */
            const char *lp = lit.ptr;
            uint32_t ll = lit.len;
            FOR_SEL(sel, n, {
                uint32_t lim = a[i].len < ll ? a[i].len : ll;
                uint8_t eq = a[i].len >= ll;
                for (uint32_t k = 0; k < lim; k++)
                    eq &= a[i].ptr[k] == lp[k];
                r[i] = (uint8_t)(eq != negate);
            });
            return 0;
        }
        if (same) {
            FOR_SEL(sel, n, { r[i] = (uint8_t)(shape_match(shape, &a[i], &lit) != negate); });
            return 0;
        }
    }
    FOR_SEL(sel, n, {
        int esc = '\\';
        if (with_escape) {
            const SlStr *e = &args[2].v.str[i];
            if (e->len == 0)
                esc = -1;
            else if (e->len == (uint32_t)sl_utf8_len((unsigned char)e->ptr[0]) && e->len == 1)
                esc = (unsigned char)e->ptr[0];
            else {
                sl_error(cx->err, ERRCODE_INVALID_ESCAPE_SEQUENCE, "invalid escape string");
                sl_error_hint(cx->err, "Escape string must be empty or one character.");
                return -1;
            }
        }
        int m = match_text((const unsigned char *)a[i].ptr, (int)a[i].len,
                           (const unsigned char *)p[i].ptr, (int)p[i].len, esc, ci);
        if (m == LIKE_ERROR)
            return sl_error(cx->err, ERRCODE_INVALID_ESCAPE_SEQUENCE,
                            "LIKE pattern must not end with escape character");
        r[i] = (uint8_t)((m == LIKE_TRUE) != negate);
    });
    return 0;
}

KERNEL(k_like) { return like_rows(cx, args, out, sel, n, false, false, false); }
KERNEL(k_notlike) { return like_rows(cx, args, out, sel, n, false, true, false); }
KERNEL(k_ilike) { return like_rows(cx, args, out, sel, n, true, false, false); }
KERNEL(k_notilike) { return like_rows(cx, args, out, sel, n, true, true, false); }
KERNEL(k_like_esc) { return like_rows(cx, args, out, sel, n, false, e->negate, true); }
KERNEL(k_ilike_esc) { return like_rows(cx, args, out, sel, n, true, e->negate, true); }

KERNEL(k_length)
{
    const SlStr *a = args[0].v.str;
    int32_t *r = out->v.i32;
    FOR_SEL(sel, n, {
        int32_t chars = 0;
        for (uint32_t k = 0; k < a[i].len; k++)
            chars += ((unsigned char)a[i].ptr[k] & 0xC0) != 0x80;
        r[i] = chars;
    });
    return 0;
}

KERNEL(k_octet_length)
{
    FOR_SEL(sel, n, { out->v.i32[i] = (int32_t)args[0].v.str[i].len; });
    return 0;
}

KERNEL(k_bit_length)
{
    SL_UNUSED(cx);
    SL_UNUSED(e);
    FOR_SEL(sel, n, { out->v.i32[i] = (int32_t)args[0].v.str[i].len * 8; });
    return 0;
}

static int map_case(EvalCtx *cx, const Vector *args, Vector *out, const uint32_t *sel,
                    uint32_t n, bool upper)
{
    const SlStr *a = args[0].v.str;
    size_t total = 0;
    FOR_SEL(sel, n, { total += a[i].len; });
    char *buf = arena_alloc(cx->arena, total ? total : 1);
    FOR_SEL(sel, n, {
        bool ascii = true;
        for (uint32_t k = 0; k < a[i].len && ascii; k++)
            ascii = (unsigned char)a[i].ptr[k] < 0x80;
        if (!ascii) {
            /* other characters as the C.UTF-8 locale maps them (strfuncs.c) */
            sl_case_map(cx->arena, &a[i], upper ? 1 : -1, &out->v.str[i]);
            continue;
        }
        for (uint32_t k = 0; k < a[i].len; k++) {
            char c = a[i].ptr[k];
            if (upper && c >= 'a' && c <= 'z')
                c = (char)(c - 32);
            else if (!upper && c >= 'A' && c <= 'Z')
                c = (char)(c + 32);
            buf[k] = c;
        }
        out->v.str[i].ptr = buf;
        out->v.str[i].len = a[i].len;
        buf += a[i].len;
    });
    return 0;
}

KERNEL(k_upper) { return map_case(cx, args, out, sel, n, true); }
KERNEL(k_lower) { return map_case(cx, args, out, sel, n, false); }
