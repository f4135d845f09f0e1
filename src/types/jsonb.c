/*
 * jsonb.c -- the text input and output of JSONB, as PostgreSQL 15's
 * jsonb.c and json lexer (src/common/jsonapi.c) read and print values.
 *
 *   jsonb_parse(arena, s, len, &out, loc, err)   input: the canonical text
 *   jsonb_tree_of, jsonb_str_of, jsonb_serialize, jsonb_escape,
 *   jsonb_key_cmp, jsonb_sort_pairs              the tree form (jsonb.h)
 *   jsonb_cmp, jsonb_cmp_tree, jsonb_scalar_cmp, jsonb_type_rank
 *                      PostgreSQL's btree order (ORDER BY, < >, value_cmp)
 *   jsonb_key          bytes equal exactly when the values are (1.0 = 1)
 *
 * Representation: a jsonb value is kept as its canonical text, the exact
 * string PostgreSQL prints for it: object keys sorted by length and then
 * bytes with duplicates resolved to the last value, numbers in numeric's
 * output form, strings escaped as escape_json() does, ", " and ": " as
 * separators.  So output is free (the value is its text), equal values
 * have equal bytes up to numeric scale (1.0 vs 1), and the operators
 * (functions/jsonbfuncs.c) walk the text with a skipping scanner; only
 * input, containment and comparison build a tree, in the batch arena.  A
 * vector of type jsonb must hold canonical text: value_parse_text /
 * jsonb_parse make it.  The parser is a strict port of PostgreSQL's lexer
 * rules (22P02 "invalid input syntax for type json" with its details).
 * json-c (Debian's libjson-c) was not used: it does not keep numbers
 * exact, and its object order is insertion order, so the canonical form
 * would need a second pass anyway.
 */
#include "types/jsonb.h"
#include "types/numeric.h"
#include "sluice/utf8.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define JSON_MAX_DEPTH 1000

/* ------------------------------------------------------------------ parser */

typedef struct JParser {
    Arena      *a;
    const char *s, *p, *end;
    int         loc;
    SlError    *err;
    int         depth;
} JParser;

static int jerr(JParser *jp, const char *detail_fmt, const char *tok, int toklen)
{
    sl_error_at(jp->err, ERRCODE_INVALID_TEXT_REPRESENTATION, jp->loc,
                "invalid input syntax for type json");
    if (detail_fmt != NULL)
        sl_error_detail(jp->err, detail_fmt, toklen, tok);
    return -1;
}

static bool is_alnum_json(char c)
{
    return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
           c == '_' || (unsigned char)c >= 0x80;
}

static void skip_ws(JParser *jp)
{
    while (jp->p < jp->end &&
           (*jp->p == ' ' || *jp->p == '\t' || *jp->p == '\n' || *jp->p == '\r'))
        jp->p++;
}

/* The token at p for error messages: an alphanumeric run or one character. */
static int token_len(const char *p, const char *end)
{
    if (p >= end)
        return 0;
    const char *q = p;
    while (q < end && is_alnum_json(*q))
        q++;
    if (q == p)
        q = p + 1;
    return (int)(q - p);
}

static int unexpected(JParser *jp, const char *what)
{
    if (jp->p >= jp->end)
        return jerr(jp, "%.*sThe input string ended unexpectedly.", "", 0);
    char fmt[96];
    snprintf(fmt, sizeof(fmt), "Expected %s, but found \"%%.*s\".", what);
    return jerr(jp, fmt, jp->p, token_len(jp->p, jp->end));
}

static void put_utf8(StrBuf *b, uint32_t c)
{
    char buf[4];
    int n;
    if (c < 0x80) {
        buf[0] = (char)c;
        n = 1;
    } else if (c < 0x800) {
        buf[0] = (char)(0xC0 | (c >> 6));
        buf[1] = (char)(0x80 | (c & 0x3F));
        n = 2;
    } else if (c < 0x10000) {
        buf[0] = (char)(0xE0 | (c >> 12));
        buf[1] = (char)(0x80 | ((c >> 6) & 0x3F));
        buf[2] = (char)(0x80 | (c & 0x3F));
        n = 3;
    } else {
        buf[0] = (char)(0xF0 | (c >> 18));
        buf[1] = (char)(0x80 | ((c >> 12) & 0x3F));
        buf[2] = (char)(0x80 | ((c >> 6) & 0x3F));
        buf[3] = (char)(0x80 | (c & 0x3F));
        n = 4;
    }
    strbuf_append(b, buf, (size_t)n);
}

static int hex4(const char *p, const char *end)
{
    if (end - p < 4)
        return -1;
    int v = 0;
    for (int k = 0; k < 4; k++) {
        char c = p[k];
        int d = c >= '0' && c <= '9' ? c - '0' : (c | 32) >= 'a' && (c | 32) <= 'f' ? (c | 32) - 'a' + 10 : -1;
        if (d < 0)
            return -1;
        v = v * 16 + d;
    }
    return v;
}

/* A string after its opening quote; the decoded bytes go to the arena. */
static int parse_string(JParser *jp, const char **out, uint32_t *outlen)
{
    const char *start = jp->p;
    /* fast path: no escapes */
    const char *q = jp->p;
    while (q < jp->end && *q != '"' && *q != '\\' && (unsigned char)*q >= 0x20)
        q++;
    if (q < jp->end && *q == '"') {
        *out = start;
        *outlen = (uint32_t)(q - start);
        jp->p = q + 1;
        return 0;
    }
    StrBuf b;
    strbuf_init(&b);
    int hi_surrogate = -1;
    while (jp->p < jp->end && *jp->p != '"') {
        unsigned char c = (unsigned char)*jp->p;
        if (c < 0x20) {
            strbuf_free(&b);
            char d[64];
            snprintf(d, sizeof(d), "Character with value 0x%02x must be escaped.", c);
            sl_error_at(jp->err, ERRCODE_INVALID_TEXT_REPRESENTATION, jp->loc,
                        "invalid input syntax for type json");
            sl_error_detail(jp->err, "%s", d);
            return -1;
        }
        if (c != '\\') {
            if (hi_surrogate >= 0) {
                strbuf_free(&b);
                return jerr(jp, "%.*sUnicode low surrogate must follow a high surrogate.", "",
                            0);
            }
            strbuf_putc(&b, (char)c);
            jp->p++;
            continue;
        }
        jp->p++;
        if (jp->p >= jp->end)
            break;
        char e = *jp->p;
        if (e == 'u') {
            int v = hex4(jp->p + 1, jp->end);
            if (v < 0) {
                strbuf_free(&b);
                return jerr(jp, "\"\\u\" must be followed by four hexadecimal digits.%.*s", "",
                            0);
            }
            jp->p += 5;
            if (v >= 0xD800 && v <= 0xDBFF) {
                if (hi_surrogate >= 0) {
                    strbuf_free(&b);
                    return jerr(jp, "%.*sUnicode high surrogate must not follow a high surrogate.",
                                "", 0);
                }
                hi_surrogate = v;
                continue;
            }
            if (v >= 0xDC00 && v <= 0xDFFF) {
                if (hi_surrogate < 0) {
                    strbuf_free(&b);
                    return jerr(jp, "%.*sUnicode low surrogate must follow a high surrogate.", "",
                                0);
                }
                v = 0x10000 + ((hi_surrogate - 0xD800) << 10) + (v - 0xDC00);
                hi_surrogate = -1;
            } else if (hi_surrogate >= 0) {
                strbuf_free(&b);
                return jerr(jp, "%.*sUnicode low surrogate must follow a high surrogate.", "", 0);
            }
            if (v == 0) {
                strbuf_free(&b);
                sl_error_at(jp->err, ERRCODE_UNTRANSLATABLE_CHARACTER, jp->loc,
                            "unsupported Unicode escape sequence");
                sl_error_detail(jp->err, "\\u0000 cannot be converted to text.");
                return -1;
            }
            put_utf8(&b, (uint32_t)v);
            continue;
        }
        if (hi_surrogate >= 0) {
            strbuf_free(&b);
            return jerr(jp, "%.*sUnicode low surrogate must follow a high surrogate.", "", 0);
        }
        char r;
        switch (e) {
        case '"': r = '"'; break;
        case '\\': r = '\\'; break;
        case '/': r = '/'; break;
        case 'b': r = '\b'; break;
        case 'f': r = '\f'; break;
        case 'n': r = '\n'; break;
        case 'r': r = '\r'; break;
        case 't': r = '\t'; break;
        default: {
            int l = 1;
            while (jp->p + l < jp->end && ((unsigned char)jp->p[l] & 0xC0) == 0x80)
                l++;
            strbuf_free(&b);
            char d[64];
            snprintf(d, sizeof(d), "Escape sequence \"\\%.*s\" is invalid.", l, jp->p);
            sl_error_at(jp->err, ERRCODE_INVALID_TEXT_REPRESENTATION, jp->loc,
                        "invalid input syntax for type json");
            sl_error_detail(jp->err, "%s", d);
            return -1;
        }
        }
        strbuf_putc(&b, r);
        jp->p++;
    }
    if (jp->p >= jp->end) {
        strbuf_free(&b);
        return jerr(jp, "%.*sThe input string ended unexpectedly.", "", 0);
    }
    if (hi_surrogate >= 0) {
        strbuf_free(&b);
        return jerr(jp, "%.*sUnicode low surrogate must follow a high surrogate.", "", 0);
    }
    jp->p++;
    *out = b.len ? arena_memdup(jp->a, b.data, b.len) : "";
    *outlen = (uint32_t)b.len;
    strbuf_free(&b);
    return 0;
}

/* json_lex_number, then numeric's canonical text */
static int parse_number(JParser *jp, JNode *n)
{
    const char *s = jp->p, *q = s;
    bool bad = false;
    if (q < jp->end && *q == '-')
        q++;
    if (q < jp->end && *q == '0')
        q++;
    else if (q < jp->end && *q >= '1' && *q <= '9')
        while (q < jp->end && *q >= '0' && *q <= '9')
            q++;
    else
        bad = true;
    if (q < jp->end && *q == '.') {
        q++;
        if (q >= jp->end || *q < '0' || *q > '9')
            bad = true;
        while (q < jp->end && *q >= '0' && *q <= '9')
            q++;
    }
    if (q < jp->end && (*q == 'e' || *q == 'E')) {
        q++;
        if (q < jp->end && (*q == '+' || *q == '-'))
            q++;
        if (q >= jp->end || *q < '0' || *q > '9')
            bad = true;
        while (q < jp->end && *q >= '0' && *q <= '9')
            q++;
    }
    while (q < jp->end && is_alnum_json(*q)) {
        q++;
        bad = true;
    }
    if (bad)
        return jerr(jp, "Token \"%.*s\" is invalid.", s, (int)(q - s));
    SlNumeric num;
    int rc = num_parse(jp->a, s, (size_t)(q - s), &num);
    if (rc == -2)
        return sl_error_at(jp->err, ERRCODE_NUMERIC_VALUE_OUT_OF_RANGE, jp->loc,
                           "value overflows numeric format");
    if (rc < 0)
        return jerr(jp, "Token \"%.*s\" is invalid.", s, (int)(q - s));
    StrBuf b;
    strbuf_init(&b);
    num_format(&num, &b);
    n->type = J_NUMBER;
    n->str = arena_memdup(jp->a, b.data, b.len);
    n->len = (uint32_t)b.len;
    strbuf_free(&b);
    jp->p = q;
    return 0;
}

/* Sort order of object keys: length, then bytes. */
int jsonb_key_cmp(const JNode *a, const JNode *b)
{
    if (a->len != b->len)
        return a->len < b->len ? -1 : 1;
    return memcmp(a->str, b->str, a->len);
}

/* Sorts pairs by key (a stable merge sort, so equal keys keep their
 * order) and keeps the last of each run of equal keys. */
uint32_t jsonb_sort_pairs(Arena *a, JNode *items, uint32_t n)
{
    if (n <= 1)
        return n;
    JNode *tmp = ARENA_ARRAY(a, JNode, 2 * n);
    for (uint32_t w = 1; w < n; w *= 2) {
        for (uint32_t lo = 0; lo < n; lo += 2 * w) {
            uint32_t mid = SL_MIN(lo + w, n), hi = SL_MIN(lo + 2 * w, n);
            uint32_t i = lo, j = mid, k = lo;
            while (i < mid && j < hi) {
                if (jsonb_key_cmp(&items[2 * j], &items[2 * i]) < 0) {
                    tmp[2 * k] = items[2 * j];
                    tmp[2 * k + 1] = items[2 * j + 1];
                    j++;
                } else {
                    tmp[2 * k] = items[2 * i];
                    tmp[2 * k + 1] = items[2 * i + 1];
                    i++;
                }
                k++;
            }
            for (; i < mid; i++, k++) {
                tmp[2 * k] = items[2 * i];
                tmp[2 * k + 1] = items[2 * i + 1];
            }
            for (; j < hi; j++, k++) {
                tmp[2 * k] = items[2 * j];
                tmp[2 * k + 1] = items[2 * j + 1];
            }
        }
        memcpy(items, tmp, sizeof(JNode) * 2 * n);
    }
    uint32_t m = 0;
    for (uint32_t i = 0; i < n; i++) {
        if (i + 1 < n && jsonb_key_cmp(&items[2 * i], &items[2 * (i + 1)]) == 0)
            continue;
        items[2 * m] = items[2 * i];
        items[2 * m + 1] = items[2 * i + 1];
        m++;
    }
    return m;
}

static int parse_value(JParser *jp, JNode *n);

static int parse_container(JParser *jp, JNode *n, bool object)
{
    if (++jp->depth > JSON_MAX_DEPTH) {
        sl_error_at(jp->err, ERRCODE_STATEMENT_TOO_COMPLEX, jp->loc, "stack depth limit exceeded");
        return -1;
    }
    jp->p++;
    uint32_t cap = 8, cnt = 0;
    uint32_t per = object ? 2 : 1;
    JNode *items = ARENA_ARRAY(jp->a, JNode, cap * per);
    skip_ws(jp);
    char close = object ? '}' : ']';
    if (jp->p < jp->end && *jp->p == close) {
        jp->p++;
    } else {
        for (;;) {
            if (cnt == cap) {
                JNode *grown = ARENA_ARRAY(jp->a, JNode, cap * 2 * per);
                memcpy(grown, items, sizeof(JNode) * cap * per);
                items = grown;
                cap *= 2;
            }
            JNode *slot = &items[cnt * per];
            skip_ws(jp);
            if (object) {
                if (jp->p >= jp->end || *jp->p != '"')
                    return unexpected(jp, "string");
                jp->p++;
                slot[0].type = J_STRING;
                slot[0].n = 0;
                if (parse_string(jp, &slot[0].str, &slot[0].len) < 0)
                    return -1;
                skip_ws(jp);
                if (jp->p >= jp->end || *jp->p != ':')
                    return unexpected(jp, "\":\"");
                jp->p++;
                if (parse_value(jp, &slot[1]) < 0)
                    return -1;
            } else if (parse_value(jp, &slot[0]) < 0) {
                return -1;
            }
            cnt++;
            skip_ws(jp);
            if (jp->p < jp->end && *jp->p == ',') {
                jp->p++;
                continue;
            }
            if (jp->p < jp->end && *jp->p == close) {
                jp->p++;
                break;
            }
            return unexpected(jp, object ? "\",\" or \"}\"" : "\",\" or \"]\"");
        }
    }
    jp->depth--;
    n->type = object ? J_OBJECT : J_ARRAY;
    n->items = items;
    n->n = object ? jsonb_sort_pairs(jp->a, items, cnt) : cnt;
    return 0;
}

static int parse_value(JParser *jp, JNode *n)
{
    memset(n, 0, sizeof(*n));
    skip_ws(jp);
    if (jp->p >= jp->end)
        return jerr(jp, "%.*sThe input string ended unexpectedly.", "", 0);
    char c = *jp->p;
    if (c == '{')
        return parse_container(jp, n, true);
    if (c == '[')
        return parse_container(jp, n, false);
    if (c == '"') {
        jp->p++;
        n->type = J_STRING;
        return parse_string(jp, &n->str, &n->len);
    }
    if (c == '-' || (c >= '0' && c <= '9'))
        return parse_number(jp, n);
    int tl = token_len(jp->p, jp->end);
    if (tl == 4 && memcmp(jp->p, "true", 4) == 0)
        n->type = J_TRUE;
    else if (tl == 5 && memcmp(jp->p, "false", 5) == 0)
        n->type = J_FALSE;
    else if (tl == 4 && memcmp(jp->p, "null", 4) == 0)
        n->type = J_NULL;
    else
        return jerr(jp, "Token \"%.*s\" is invalid.", jp->p, tl);
    jp->p += tl;
    return 0;
}

/* ----------------------------------------------------------- serializing */

void jsonb_escape(StrBuf *b, const char *s, uint32_t len)
{
    strbuf_putc(b, '"');
    for (uint32_t k = 0; k < len; k++) {
        char c = s[k];
        switch (c) {
        case '\b': strbuf_puts(b, "\\b"); break;
        case '\f': strbuf_puts(b, "\\f"); break;
        case '\n': strbuf_puts(b, "\\n"); break;
        case '\r': strbuf_puts(b, "\\r"); break;
        case '\t': strbuf_puts(b, "\\t"); break;
        case '"': strbuf_puts(b, "\\\""); break;
        case '\\': strbuf_puts(b, "\\\\"); break;
        default:
            if ((unsigned char)c < ' ')
                strbuf_printf(b, "\\u%04x", (int)c);
            else
                strbuf_putc(b, c);
        }
    }
    strbuf_putc(b, '"');
}

void jsonb_serialize(StrBuf *b, const JNode *n)
{
    switch (n->type) {
    case J_NULL: strbuf_puts(b, "null"); break;
    case J_TRUE: strbuf_puts(b, "true"); break;
    case J_FALSE: strbuf_puts(b, "false"); break;
    case J_NUMBER: strbuf_append(b, n->str, n->len); break;
    case J_STRING: jsonb_escape(b, n->str, n->len); break;
    case J_ARRAY:
        strbuf_putc(b, '[');
        for (uint32_t k = 0; k < n->n; k++) {
            if (k)
                strbuf_puts(b, ", ");
            jsonb_serialize(b, &n->items[k]);
        }
        strbuf_putc(b, ']');
        break;
    case J_OBJECT:
        strbuf_putc(b, '{');
        for (uint32_t k = 0; k < n->n; k++) {
            if (k)
                strbuf_puts(b, ", ");
            jsonb_escape(b, n->items[2 * k].str, n->items[2 * k].len);
            strbuf_puts(b, ": ");
            jsonb_serialize(b, &n->items[2 * k + 1]);
        }
        strbuf_putc(b, '}');
        break;
    }
}

static int parse_tree(Arena *a, const char *s, size_t len, JNode *root, int loc, SlError *err)
{
    JParser jp = {a, s, s, s + len, loc, err, 0};
    if (parse_value(&jp, root) < 0)
        return -1;
    skip_ws(&jp);
    if (jp.p < jp.end)
        return jerr(&jp, "Expected end of input, but found \"%.*s\".", jp.p,
                    token_len(jp.p, jp.end));
    return 0;
}

int jsonb_parse(Arena *a, const char *s, size_t len, SlStr *out, int loc, SlError *err)
{
    if (sl_utf8_check(s, len, loc, err) < 0)
        return -1;
    JNode root;
    if (parse_tree(a, s, len, &root, loc, err) < 0)
        return -1;
    StrBuf b;
    strbuf_init(&b);
    jsonb_serialize(&b, &root);
    out->ptr = arena_memdup(a, b.data, b.len);
    out->len = (uint32_t)b.len;
    strbuf_free(&b);
    return 0;
}

/* A canonical value as a tree (it is valid, so this cannot fail). */
void jsonb_tree_of(Arena *a, const SlStr *v, JNode *root)
{
    SlError e;
    memset(&e, 0, sizeof(e));
    if (parse_tree(a, v->ptr, v->len, root, -1, &e) < 0) {
        root->type = J_NULL;
        sl_error_clear(&e);
    }
}

SlStr jsonb_str_of(Arena *a, const JNode *n)
{
    StrBuf b;
    strbuf_init(&b);
    jsonb_serialize(&b, n);
    SlStr r = {arena_memdup(a, b.data ? b.data : "", b.len), (uint32_t)b.len};
    strbuf_free(&b);
    return r;
}

/* ------------------------------------------------------------- ordering */

/* Two scalars of one type rank: numbers by value, strings byte-wise (the
 * C collation), false before true. */
int jsonb_scalar_cmp(const JNode *a, const JNode *b)
{
    if (a->type == J_NUMBER) {
        SlNumeric x, y;
        Arena tmp;
        arena_init(&tmp, 256);
        num_parse(&tmp, a->str, a->len, &x);
        num_parse(&tmp, b->str, b->len, &y);
        int c = num_cmp(&x, &y);
        arena_destroy(&tmp);
        return c;
    }
    if (a->type == J_STRING) {
        int c = memcmp(a->str, b->str, SL_MIN(a->len, b->len));
        return c != 0 ? c : (a->len < b->len ? -1 : a->len > b->len);
    }
    if (a->type == J_TRUE || a->type == J_FALSE)
        return (a->type == J_TRUE) - (b->type == J_TRUE);
    return 0;
}

/* The type rank of compareJsonbContainers: null < string < number <
 * boolean < array < object. */
int jsonb_type_rank(JType t)
{
    switch (t) {
    case J_NULL: return 0;
    case J_STRING: return 1;
    case J_NUMBER: return 2;
    case J_FALSE:
    case J_TRUE: return 3;
    case J_ARRAY: return 4;
    default: return 5;
    }
}

static int jcmp_inner(const JNode *a, const JNode *b)
{
    if (jsonb_type_rank(a->type) != jsonb_type_rank(b->type))
        return jsonb_type_rank(a->type) < jsonb_type_rank(b->type) ? -1 : 1;
    if (a->type == J_ARRAY) {
        if (a->n != b->n)
            return a->n > b->n ? 1 : -1;
        for (uint32_t k = 0; k < a->n; k++) {
            int c = jcmp_inner(&a->items[k], &b->items[k]);
            if (c)
                return c;
        }
        return 0;
    }
    if (a->type == J_OBJECT) {
        if (a->n != b->n)
            return a->n > b->n ? 1 : -1;
        for (uint32_t k = 0; k < a->n; k++) {
            int c = jsonb_scalar_cmp(&a->items[2 * k], &b->items[2 * k]);
            if (c)
                return c;
            c = jcmp_inner(&a->items[2 * k + 1], &b->items[2 * k + 1]);
            if (c)
                return c;
        }
        return 0;
    }
    return jsonb_scalar_cmp(a, b);
}

/* A top-level scalar is a one-element "raw scalar" array in PostgreSQL,
 * which orders it against real arrays by rawness, then by length. */
int jsonb_cmp_tree(const JNode *a, const JNode *b)
{
    bool top = true;
    bool ascal = a->type != J_ARRAY && a->type != J_OBJECT;
    bool bscal = b->type != J_ARRAY && b->type != J_OBJECT;
    if (top && ascal != bscal && (a->type == J_ARRAY || b->type == J_ARRAY)) {
        uint32_t na = ascal ? 1 : a->n, nb = bscal ? 1 : b->n;
        if (na != nb)
            return na > nb ? 1 : -1;
        return ascal ? -1 : 1;
    }
    if (top && ascal && bscal) {
        if (jsonb_type_rank(a->type) != jsonb_type_rank(b->type))
            return jsonb_type_rank(a->type) < jsonb_type_rank(b->type) ? -1 : 1;
        return jsonb_scalar_cmp(a, b);
    }
    if (top && (ascal || bscal)) {
        /* a scalar (a pseudo array) against an object */
        return ascal ? -1 : 1;
    }
    return jcmp_inner(a, b);
}


int jsonb_cmp(const SlStr *x, const SlStr *y)
{
    if (x->len == y->len && memcmp(x->ptr, y->ptr, x->len) == 0)
        return 0;
    Arena a;
    arena_init(&a, 4096);
    JNode p, q;
    jsonb_tree_of(&a, x, &p);
    jsonb_tree_of(&a, y, &q);
    int c = jsonb_cmp_tree(&p, &q);
    arena_destroy(&a);
    return c < 0 ? -1 : c > 0;
}

/* ------------------------------------------------------------ equality */

/* Numbers without trailing fraction zeros, so that equal values (1.0 and
 * 1) get one form. */
static void normalize_numbers(JNode *n)
{
    if (n->type == J_NUMBER) {
        const char *dot = memchr(n->str, '.', n->len);
        if (dot != NULL) {
            uint32_t len = n->len;
            while (len > 0 && n->str[len - 1] == '0')
                len--;
            if (len > 0 && n->str[len - 1] == '.')
                len--;
            n->len = len;   /* numeric prints no "-0": nothing else to fold */
        }
        return;
    }
    if (n->type == J_ARRAY)
        for (uint32_t k = 0; k < n->n; k++)
            normalize_numbers(&n->items[k]);
    else if (n->type == J_OBJECT)
        for (uint32_t k = 0; k < n->n; k++)
            normalize_numbers(&n->items[2 * k + 1]);
}

void jsonb_key(const SlStr *j, StrBuf *out)
{
    if (memchr(j->ptr, '.', j->len) == NULL) {
        /* canonical text has no exponents: without a point, no number
         * has another spelling */
        strbuf_append(out, j->ptr, j->len);
        return;
    }
    Arena a;
    arena_init(&a, 4096);
    JNode n;
    jsonb_tree_of(&a, j, &n);
    normalize_numbers(&n);
    jsonb_serialize(out, &n);
    arena_destroy(&a);
}
