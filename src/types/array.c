/*
 * array.c -- one-dimensional arrays of any scalar type: their physical
 * form, text input and output (PostgreSQL's array_in / array_out), binary
 * input (array_recv; the output is the value itself), order.
 *
 *   array_iter_init, array_next, array_count      read an array's elements
 *   array_build_begin/_add/_add_elem/_finish,
 *   array_from_vector                             make one
 *   array_elem_value, array_to_vector             elements as values
 *   array_format_text, array_parse_text           the text form
 *   array_recv                                    the binary wire form
 *   array_cmp                                     btree order (array_cmp)
 *
 * A value is an SlStr holding the array in array_send's layout (types.h,
 * "arrays"): the value is its own binary wire form, rows store its bytes
 * (rowcodec.c), and every array made here is canonical: ndim 0 when
 * empty, the has-nulls flag exact, lower bound 1, each element its type's
 * send form.  Elements are read in place (text, bytea and jsonb elements
 * point into the array's bytes) or through the element type's recv.
 * Multi-dimensional arrays and explicit bounds ('[2:3]={1,2}') are
 * refused with 0A000: sluice's arrays have one dimension.
 */
#include "sluice/types.h"
#include "sluice/bytes.h"

#include <string.h>
#include <strings.h>

#define HDR_EMPTY 12        /* ndim, has_nulls, element OID */
#define HDR_ONE   20        /* ... and one dimension's length and lower bound */

/* ------------------------------------------------------------- reading */

void array_iter_init(ArrayIter *it, const SlStr *arr)
{
    const uint8_t *p = (const uint8_t *)arr->ptr;
    it->next = 0;
    if (arr->len < HDR_ONE || get_be32(p) == 0) {
        it->n = 0;
        it->p = it->end = arr->ptr + arr->len;
        return;
    }
    it->n = (int32_t)get_be32(p + 12);
    it->p = arr->ptr + HDR_ONE;
    it->end = arr->ptr + arr->len;
}

bool array_next(ArrayIter *it, ArrayElem *el)
{
    if (it->next >= it->n || it->end - it->p < 4)
        return false;
    int32_t len = (int32_t)get_be32((const uint8_t *)it->p);
    it->p += 4;
    it->next++;
    el->null = len < 0;
    el->len = len < 0 ? 0 : len;
    el->data = it->p;
    if (len > 0)
        it->p += len;
    return true;
}

int32_t array_count(const SlStr *arr)
{
    ArrayIter it;
    array_iter_init(&it, arr);
    return it.n;
}

void array_elem_value(Arena *a, SlType t, const ArrayElem *el, Vector *v, uint32_t i)
{
    if (el->null) {
        v->nulls[i] = 1;
        return;
    }
    v->nulls[i] = 0;
    switch (t.id) {
    case TYPE_TEXT:
    case TYPE_VARCHAR:
    case TYPE_BPCHAR:
    case TYPE_BYTEA:
    case TYPE_UUID:
    case TYPE_UNKNOWN:
        v->v.str[i].ptr = el->data;
        v->v.str[i].len = (uint32_t)el->len;
        return;
    case TYPE_JSONB:
        v->v.str[i].ptr = el->data + 1;
        v->v.str[i].len = (uint32_t)el->len - 1;
        return;
    default: {
        SlError err = {0};
        if (value_recv_binary(a, t, el->data, el->len, v, i, 0, &err) < 0) {
            /* the array was checked when made: unreachable */
            sl_error_clear(&err);
            v->nulls[i] = 1;
        }
        return;
    }
    }
}

void array_to_vector(Arena *a, SlType t, const SlStr *arr, Vector *out)
{
    ArrayIter it;
    array_iter_init(&it, arr);
    vector_init(out, a, t, (uint32_t)it.n, true);
    ArrayElem el;
    for (uint32_t i = 0; array_next(&it, &el); i++)
        array_elem_value(a, t, &el, out, i);
}

/* ------------------------------------------------------------- making */

void array_build_begin(ArrayBuild *b, SlTypeId elem)
{
    strbuf_init(&b->buf);
    b->elem = elem == TYPE_UNKNOWN ? TYPE_TEXT : elem;     /* untyped literals: text */
    b->n = 0;
    b->has_nulls = false;
    uint8_t hdr[HDR_ONE] = {0};
    strbuf_append(&b->buf, hdr, sizeof(hdr));
}

static void put32(StrBuf *out, uint32_t v)
{
    uint8_t p[4];
    put_be32(p, v);
    strbuf_append(out, p, 4);
}

void array_build_add(ArrayBuild *b, const Vector *v, uint32_t i)
{
    b->n++;
    if (vector_is_null(v, i)) {
        b->has_nulls = true;
        put32(&b->buf, UINT32_MAX);
        return;
    }
    size_t at = b->buf.len;
    put32(&b->buf, 0);
    if (value_send_binary(v, i, &b->buf) < 0) {
        /* only a numeric past 131072 digits has no send form: PostgreSQL
         * has no such value either; kept as its digits' absence */
        b->buf.len = at;
        b->has_nulls = true;
        put32(&b->buf, UINT32_MAX);
        return;
    }
    put_be32((uint8_t *)b->buf.data + at, (uint32_t)(b->buf.len - at - 4));
}

void array_build_add_elem(ArrayBuild *b, const ArrayElem *el)
{
    b->n++;
    if (el->null) {
        b->has_nulls = true;
        put32(&b->buf, UINT32_MAX);
        return;
    }
    put32(&b->buf, (uint32_t)el->len);
    strbuf_append(&b->buf, el->data, (size_t)el->len);
}

void array_build_finish(ArrayBuild *b, Arena *a, SlStr *out)
{
    uint8_t *p = (uint8_t *)b->buf.data;
    put_be32(p, b->n > 0 ? 1 : 0);
    put_be32(p + 4, b->has_nulls ? 1 : 0);
    put_be32(p + 8, type_oid(b->elem));
    put_be32(p + 12, (uint32_t)b->n);
    put_be32(p + 16, 1);
    size_t len = b->n > 0 ? b->buf.len : HDR_EMPTY;
    out->ptr = arena_memdup(a, b->buf.data, len);
    out->len = (uint32_t)len;
    strbuf_free(&b->buf);
}

void array_from_vector(Arena *a, const Vector *v, uint32_t n, SlStr *out)
{
    ArrayBuild b;
    array_build_begin(&b, v->type.id);
    for (uint32_t i = 0; i < n; i++)
        array_build_add(&b, v, i);
    array_build_finish(&b, a, out);
}

/* ------------------------------------------------------------- order */

int array_cmp(const SlStr *x, const SlStr *y, SlType elem)
{
    ArrayIter ix, iy;
    array_iter_init(&ix, x);
    array_iter_init(&iy, y);
    Arena a;
    arena_init(&a, 256);
    Vector vx, vy;
    vector_init(&vx, &a, elem, 1, true);
    vector_init(&vy, &a, elem, 1, true);
    ArrayElem ex, ey;
    int c = 0;
    while (c == 0 && array_next(&ix, &ex) && array_next(&iy, &ey)) {
        if (ex.null || ey.null) {
            c = ex.null == ey.null ? 0 : ex.null ? 1 : -1;
            continue;
        }
        array_elem_value(&a, elem, &ex, &vx, 0);
        array_elem_value(&a, elem, &ey, &vy, 0);
        c = value_cmp(&vx, 0, &vy, 0);
    }
    arena_destroy(&a);
    if (c != 0)
        return c;
    return (ix.n > iy.n) - (ix.n < iy.n);
}

/* ---------------------------------------------------------- text output */

static bool is_array_space(char c)
{
    return c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\v' || c == '\f';
}

/* array_out's rule: quote an element that is empty, reads as NULL, or
 * holds a brace, the delimiter, a quote, a backslash or white space. */
static bool needs_quotes(const char *s, size_t len)
{
    if (len == 0 || (len == 4 && strncasecmp(s, "NULL", 4) == 0))
        return true;
    for (size_t i = 0; i < len; i++)
        if (s[i] == '{' || s[i] == '}' || s[i] == ',' || s[i] == '"' || s[i] == '\\' ||
            is_array_space(s[i]))
            return true;
    return false;
}

void array_format_text(const SlStr *arr, SlType elem, StrBuf *out)
{
    ArrayIter it;
    array_iter_init(&it, arr);
    Arena a;
    arena_init(&a, 256);
    Vector v;
    vector_init(&v, &a, elem, 1, true);
    StrBuf one;
    strbuf_init(&one);
    strbuf_putc(out, '{');
    ArrayElem el;
    for (int k = 0; array_next(&it, &el); k++) {
        if (k > 0)
            strbuf_putc(out, ',');
        if (el.null) {
            strbuf_puts(out, "NULL");
            continue;
        }
        array_elem_value(&a, elem, &el, &v, 0);
        strbuf_reset(&one);
        value_format_text(&v, 0, &one);
        if (!needs_quotes(one.data ? one.data : "", one.len)) {
            strbuf_append(out, one.data, one.len);
            continue;
        }
        strbuf_putc(out, '"');
        for (size_t i = 0; i < one.len; i++) {
            if (one.data[i] == '"' || one.data[i] == '\\')
                strbuf_putc(out, '\\');
            strbuf_putc(out, one.data[i]);
        }
        strbuf_putc(out, '"');
    }
    strbuf_putc(out, '}');
    strbuf_free(&one);
    arena_destroy(&a);
}

/* ----------------------------------------------------------- text input */

static int malformed(SlError *err, int loc, const char *s, size_t len, const char *detail)
{
    sl_error_at(err, ERRCODE_INVALID_TEXT_REPRESENTATION, loc, "malformed array literal: \"%.*s\"",
                (int)SL_MIN(len, 1000), s);
    sl_error_detail(err, "%s", detail);
    return -1;
}

static int multidim(SlError *err, int loc)
{
    return sl_error_at(err, ERRCODE_FEATURE_NOT_SUPPORTED, loc,
                       "multidimensional arrays are not supported yet");
}

/* array_in for one dimension: '{' elements '}' with PostgreSQL's quoting
 * (double quotes, backslash escapes, unquoted NULL), white space around
 * elements ignored. */
int array_parse_text(Arena *a, SlType elem, const char *s, size_t len, SlStr *out, int loc,
                     SlError *err)
{
    size_t i = 0;
    while (i < len && is_array_space(s[i]))
        i++;
    if (i < len && s[i] == '[')
        return sl_error_at(err, ERRCODE_FEATURE_NOT_SUPPORTED, loc,
                           "array bounds in an array literal are not supported yet");
    if (i >= len || s[i] != '{')
        return malformed(err, loc, s, len,
                         "Array value must start with \"{\" or dimension information.");
    i++;
    ArrayBuild b;
    array_build_begin(&b, elem.id);
    Vector v;
    vector_init(&v, a, elem, 1, true);
    StrBuf item;
    strbuf_init(&item);
    int rc = 0;
    bool closed = false, any = false;
    while (rc == 0 && !closed) {
        while (i < len && is_array_space(s[i]))
            i++;
        if (i >= len) {
            rc = malformed(err, loc, s, len, "Unexpected end of input.");
            break;
        }
        if (s[i] == '}' && !any) {
            i++;
            closed = true;
            break;
        }
        if (s[i] == '{') {
            rc = multidim(err, loc);
            break;
        }
        if (s[i] == ',' || s[i] == '}') {
            rc = malformed(err, loc, s, len,
                           s[i] == ',' ? "Unexpected \",\" character."
                                       : "Unexpected \"}\" character.");
            break;
        }
        /* one element: quoted and unquoted runs, backslashes escape */
        strbuf_reset(&item);
        bool quoted_any = false, in_quotes = false, after_quote = false;
        size_t keep = 0;    /* item length up to its last significant char */
        for (;;) {
            if (i >= len) {
                rc = malformed(err, loc, s, len, "Unexpected end of input.");
                break;
            }
            char c = s[i];
            if (after_quote && !in_quotes && c != ',' && c != '}' && !is_array_space(c)) {
                rc = malformed(err, loc, s, len, "Unexpected array element.");
                break;
            }
            if (c == '\\') {
                if (i + 1 >= len) {
                    rc = malformed(err, loc, s, len, "Unexpected end of input.");
                    break;
                }
                strbuf_putc(&item, s[i + 1]);
                keep = item.len;
                quoted_any = quoted_any || !in_quotes;
                i += 2;
                continue;
            }
            if (c == '"') {
                if (!in_quotes && keep > 0 && !quoted_any) {
                    rc = malformed(err, loc, s, len, "Unexpected array element.");
                    break;
                }
                in_quotes = !in_quotes;
                after_quote = !in_quotes;
                quoted_any = true;
                keep = item.len;
                i++;
                continue;
            }
            if (in_quotes) {
                strbuf_putc(&item, c);
                keep = item.len;
                i++;
                continue;
            }
            if (c == ',' || c == '}')
                break;
            if (c == '{') {
                rc = malformed(err, loc, s, len, "Unexpected \"{\" character.");
                break;
            }
            if (is_array_space(c)) {
                if (item.len > 0 && !after_quote)
                    strbuf_putc(&item, c);
                i++;
                continue;
            }
            strbuf_putc(&item, c);
            keep = item.len;
            i++;
        }
        if (rc < 0)
            break;
        item.len = keep;
        const char *txt = item.data ? item.data : "";
        if (!quoted_any && keep == 4 && strncasecmp(txt, "NULL", 4) == 0) {
            v.nulls[0] = 1;
        } else {
            v.nulls[0] = 0;
            if (value_parse_text(a, elem, txt, keep, &v, 0, loc, err) < 0) {
                rc = -1;
                break;
            }
        }
        array_build_add(&b, &v, 0);
        any = true;
        if (s[i] == '}')
            closed = true;
        i++;
    }
    strbuf_free(&item);
    if (rc == 0) {
        while (i < len && is_array_space(s[i]))
            i++;
        if (i < len)
            rc = malformed(err, loc, s, len, "Junk after closing right brace.");
    }
    if (rc < 0) {
        strbuf_free(&b.buf);
        return -1;
    }
    array_build_finish(&b, a, out);
    return 0;
}

/* --------------------------------------------------------- binary input */

static int bad_array_binary(SlError *err, int param, const char *msg)
{
    if (param > 0)
        return sl_error(err, ERRCODE_INVALID_BINARY_REPRESENTATION,
                        "%s in bind parameter %d", msg, param);
    return sl_error(err, ERRCODE_INVALID_BINARY_REPRESENTATION, "%s", msg);
}

int array_recv(Arena *a, SlType elem, const char *data, int32_t len, SlStr *out, int param,
               SlError *err)
{
    const uint8_t *p = (const uint8_t *)data;
    if (len < HDR_EMPTY)
        return bad_array_binary(err, param, "insufficient data left in message");
    int32_t ndim = (int32_t)get_be32(p), flags = (int32_t)get_be32(p + 4);
    uint32_t oid = get_be32(p + 8);
    if (ndim < 0 || ndim > 6)
        return bad_array_binary(err, param, "invalid number of dimensions");
    if (flags != 0 && flags != 1)
        return bad_array_binary(err, param, "invalid array flags");
    if (oid != type_oid(elem.id))
        return bad_array_binary(err, param, "wrong element type");
    if (ndim > 1)
        return sl_error(err, ERRCODE_FEATURE_NOT_SUPPORTED,
                        "multidimensional arrays are not supported yet");
    ArrayBuild b;
    array_build_begin(&b, elem.id);
    if (ndim == 0) {
        if (len != HDR_EMPTY) {
            strbuf_free(&b.buf);
            return bad_array_binary(err, param, "incorrect binary data format");
        }
        array_build_finish(&b, a, out);
        return 0;
    }
    if (len < HDR_ONE) {
        strbuf_free(&b.buf);
        return bad_array_binary(err, param, "insufficient data left in message");
    }
    int32_t n = (int32_t)get_be32(p + 12), lbound = (int32_t)get_be32(p + 16);
    if (n < 0) {
        strbuf_free(&b.buf);
        return bad_array_binary(err, param, "invalid array dimensions");
    }
    if (lbound != 1) {
        strbuf_free(&b.buf);
        return sl_error(err, ERRCODE_FEATURE_NOT_SUPPORTED,
                        "array lower bounds other than 1 are not supported yet");
    }
    const uint8_t *q = p + HDR_ONE, *end = p + len;
    Vector v;
    vector_init(&v, a, elem, 1, true);
    for (int32_t k = 0; k < n; k++) {
        if (end - q < 4) {
            strbuf_free(&b.buf);
            return bad_array_binary(err, param, "insufficient data left in message");
        }
        int32_t elen = (int32_t)get_be32(q);
        q += 4;
        if (elen < -1 || (elen > 0 && end - q < elen)) {
            strbuf_free(&b.buf);
            return bad_array_binary(err, param, "insufficient data left in message");
        }
        v.nulls[0] = elen == -1;
        if (elen >= 0 &&
            value_recv_binary(a, elem, (const char *)q, elen, &v, 0, param, err) < 0) {
            strbuf_free(&b.buf);
            return -1;
        }
        if (elen > 0)
            q += elen;
        array_build_add(&b, &v, 0);
    }
    if (q != end) {
        strbuf_free(&b.buf);
        return bad_array_binary(err, param, "incorrect binary data format");
    }
    array_build_finish(&b, a, out);
    return 0;
}
