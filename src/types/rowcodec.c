/*
 * rowcodec.c -- rows as bytes (see rowcodec.h).
 *
 *   row_encode, row_decode, key_encode, key_type_ok, batch_alloc
 */
#include "sluice/rowcodec.h"

#include "sluice/bytes.h"

static uint8_t *put_varint_at(uint8_t *p, uint64_t v)
{
    while (v >= 0x80) {
        *p++ = (uint8_t)(v | 0x80);
        v >>= 7;
    }
    *p++ = (uint8_t)v;
    return p;
}

void row_encode(const Batch *b, uint32_t row, StrBuf *out)
{
    /* The most the row can take, reserved once; then plain stores (a
     * result log encodes every output row: no call per column). */
    size_t nbytes = (b->ncols + 7) / 8, most = nbytes;
    for (uint32_t c = 0; c < b->ncols; c++) {
        const Vector *v = &b->cols[c];
        if (vector_is_null(v, row))
            continue;
        switch (v->type.id) {
        case TYPE_TEXT:
        case TYPE_VARCHAR:
        case TYPE_BYTEA:
        case TYPE_JSONB:
        case TYPE_UUID:
        case TYPE_BPCHAR:
        case TYPE_ARRAY:
        case TYPE_UNKNOWN:
            most += 10 + (size_t)v->v.str[row].len;
            break;
        case TYPE_NUMERIC:
            most += 21 + (size_t)v->v.num[row].ndigits;
            break;
        default:
            most += type_width(v->type.id);
            break;
        }
    }
    strbuf_reserve(out, most);
    uint8_t *bitmap = (uint8_t *)out->data + out->len, *p = bitmap + nbytes;
    memset(bitmap, 0, nbytes);
    for (uint32_t c = 0; c < b->ncols; c++) {
        const Vector *v = &b->cols[c];
        if (vector_is_null(v, row)) {
            bitmap[c / 8] |= (uint8_t)(1 << (c % 8));
            continue;
        }
        switch (v->type.id) {
        case TYPE_TEXT:
        case TYPE_VARCHAR:
        case TYPE_BYTEA:
        case TYPE_JSONB:
        case TYPE_UUID:
        case TYPE_BPCHAR:
        case TYPE_ARRAY:
        case TYPE_UNKNOWN: {
            const SlStr *x = &v->v.str[row];
            p = put_varint_at(p, x->len);
            if (x->len > 0)
                memcpy(p, x->ptr, x->len);
            p += x->len;
            break;
        }
        case TYPE_NUMERIC: {
            const SlNumeric *x = &v->v.num[row];
            *p++ = (uint8_t)x->sign;
            p = put_varint_at(p, (uint32_t)x->scale);
            p = put_varint_at(p, (uint32_t)x->ndigits);
            if (x->ndigits > 0)
                memcpy(p, x->digits, (size_t)x->ndigits);
            p += x->ndigits;
            break;
        }
        default: {
            size_t w = type_width(v->type.id);
            memcpy(p, (const char *)v->v.data + w * row, w);
            p += w;
            break;
        }
        }
    }
    out->len = (size_t)(p - (uint8_t *)out->data);
    out->data[out->len] = '\0';
}

int row_decode(const void *p, size_t n, Batch *b, uint32_t row, Arena *a)
{
    const uint8_t *s = p, *end = s + n;
    size_t nbytes = (b->ncols + 7) / 8;
    if (n < nbytes)
        return -1;
    const uint8_t *bitmap = s;
    s += nbytes;
    for (uint32_t c = 0; c < b->ncols; c++) {
        Vector *v = &b->cols[c];
        if (bitmap[c / 8] & (1 << (c % 8))) {
            v->nulls[row] = 1;
            continue;
        }
        v->nulls[row] = 0;
        uint64_t len, scale, nd;
        switch (v->type.id) {
        case TYPE_TEXT:
        case TYPE_VARCHAR:
        case TYPE_BYTEA:
        case TYPE_JSONB:
        case TYPE_UUID:
        case TYPE_BPCHAR:
        case TYPE_ARRAY:
        case TYPE_UNKNOWN:
            if (!get_uvarint(&s, end, &len) || (uint64_t)(end - s) < len || len > UINT32_MAX)
                return -1;
            v->v.str[row].ptr = arena_memdup(a, s, (size_t)len);
            v->v.str[row].len = (uint32_t)len;
            s += len;
            break;
        case TYPE_NUMERIC: {
            if (s >= end)
                return -1;
            SlNumeric *x = &v->v.num[row];
            x->sign = *s++;
            if (!get_uvarint(&s, end, &scale) || !get_uvarint(&s, end, &nd) ||
                (uint64_t)(end - s) < nd)
                return -1;
            x->scale = (int32_t)(uint32_t)scale;
            x->ndigits = (int32_t)nd;
            x->digits = arena_memdup(a, s, (size_t)nd);
            s += nd;
            break;
        }
        default: {
            size_t w = type_width(v->type.id);
            if ((size_t)(end - s) < w)
                return -1;
            memcpy((char *)v->v.data + w * row, s, w);
            s += w;
            break;
        }
        }
    }
    return s == end ? 0 : -1;
}

bool key_type_ok(SlTypeId t)
{
    switch (t) {
    case TYPE_BOOL:
    case TYPE_INT2:
    case TYPE_INT4:
    case TYPE_INT8:
    case TYPE_TEXT:
    case TYPE_VARCHAR:
    case TYPE_BYTEA:
    case TYPE_UUID:
    case TYPE_BPCHAR:
    case TYPE_DATE:
    case TYPE_TIMESTAMP:
    case TYPE_TIMESTAMPTZ:
        return true;
    default:
        return false;
    }
}

/* Big-endian with the sign bit flipped: byte order is numeric order. */
static void put_ordered(StrBuf *out, uint64_t u, int bytes)
{
    uint8_t buf[8];
    for (int i = bytes - 1; i >= 0; i--) {
        buf[i] = (uint8_t)u;
        u >>= 8;
    }
    strbuf_append(out, buf, (size_t)bytes);
}

void key_encode(const Batch *b, uint32_t row, const int *cols, int ncols, StrBuf *out)
{
    for (int k = 0; k < ncols; k++) {
        const Vector *v = &b->cols[cols[k]];
        if (vector_is_null(v, row)) {
            strbuf_putc(out, 0x00);
            continue;
        }
        strbuf_putc(out, 0x01);
        switch (v->type.id) {
        case TYPE_BOOL:
            strbuf_putc(out, v->v.b[row] ? 1 : 0);
            break;
        case TYPE_INT2:
            put_ordered(out, (uint16_t)v->v.i16[row] ^ 0x8000u, 2);
            break;
        case TYPE_INT4:
        case TYPE_DATE:
            put_ordered(out, (uint32_t)v->v.i32[row] ^ 0x80000000u, 4);
            break;
        case TYPE_INT8:
        case TYPE_TIMESTAMP:
        case TYPE_TIMESTAMPTZ:
            put_ordered(out, (uint64_t)v->v.i64[row] ^ 0x8000000000000000ull, 8);
            break;
        default: {
            /* Strings: 0x00 escaped as 0x00 0xFF, ended by 0x00 0x00, so a
             * prefix sorts before the longer string. */
            const SlStr *s = &v->v.str[row];
            for (uint32_t i = 0; i < s->len; i++) {
                strbuf_putc(out, s->ptr[i]);
                if (s->ptr[i] == 0)
                    strbuf_putc(out, (char)0xFF);
            }
            strbuf_append(out, "\0\0", 2);
            break;
        }
        }
    }
}

Batch *batch_alloc(Arena *a, const SlType *types, uint32_t ncols, uint32_t cap)
{
    Batch *b = ARENA_NEW(a, Batch);
    b->ncols = ncols;
    b->nrows = 0;
    b->cols = ARENA_ARRAY(a, Vector, ncols ? ncols : 1);
    for (uint32_t c = 0; c < ncols; c++)
        vector_init(&b->cols[c], a, types[c], cap, true);
    return b;
}
