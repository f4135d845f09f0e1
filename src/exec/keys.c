/*
 * keys.c -- values as equality keys, hashing, ordering, and copying.
 *
 *   ex_key_encode     row values -> bytes equal exactly when the values are
 *   ex_hash           64-bit hash of bytes (MurmurHash64A)
 *   ex_value_cmp      ORDER BY's order of two values of one type (types.h's
 *                     value_cmp)
 *   ex_copy_value     one value from a vector to another (deep or shallow)
 *   ex_batch_compact  a batch with its selection applied
 *
 * Equality follows SQL's "=" for each type: numerics compare by value
 * (1.0 = 1.00), floats treat -0 as 0 and every NaN as one value (as
 * PostgreSQL's float8eq does), intervals compare by their span with 30-day
 * months (interval_cmp_value), text byte-wise (the "C" collation), arrays
 * element by element, jsonb with its numbers by value (jsonb_key),
 * character(n) without its trailing spaces.
 */
#include "sluice/exec.h"
#include "types/numeric.h"

#include <math.h>

static void put(StrBuf *out, const void *p, size_t n)
{
    strbuf_append(out, p, n);
}

static __int128 interval_span(const SlInterval *iv)
{
    return ((__int128)iv->months * 30 + iv->days) * INT64_C(86400000000) + iv->usec;
}

static double canonical_double(double d)
{
    if (isnan(d))
        return NAN;
    if (d == 0)
        return 0.0;
    return d;
}

void ex_key_encode(const Vector *cols, int ncols, uint32_t row, StrBuf *out)
{
    for (int c = 0; c < ncols; c++) {
        const Vector *v = &cols[c];
        if (vector_is_null(v, row)) {
            strbuf_putc(out, 0);
            continue;
        }
        strbuf_putc(out, 1);
        switch (v->type.id) {
        case TYPE_BOOL:
            strbuf_putc(out, v->v.b[row] ? 1 : 0);
            break;
        case TYPE_INT2: {
            int64_t x = v->v.i16[row];
            put(out, &x, 8);
            break;
        }
        case TYPE_INT4: {
            int64_t x = v->v.i32[row];
            put(out, &x, 8);
            break;
        }
        case TYPE_DATE:
            put(out, &v->v.i32[row], 4);
            break;
        case TYPE_INT8:
        case TYPE_TIMESTAMP:
        case TYPE_TIMESTAMPTZ:
            put(out, &v->v.i64[row], 8);
            break;
        case TYPE_FLOAT4: {
            double d = canonical_double((double)v->v.f32[row]);
            put(out, &d, 8);
            break;
        }
        case TYPE_FLOAT8: {
            double d = canonical_double(v->v.f64[row]);
            put(out, &d, 8);
            break;
        }
        case TYPE_NUMERIC: {
            const SlNumeric *x = &v->v.num[row];
            int32_t nd = x->ndigits, scale = x->scale;
            while (nd > 0 && scale > 0 && x->digits[nd - 1] == 0) {
                nd--;
                scale--;
            }
            if (nd == 0)
                scale = 0;
            uint8_t sign = nd == 0 && x->sign == 1 ? 0 : x->sign;
            strbuf_putc(out, (char)sign);
            put(out, &scale, 4);
            put(out, &nd, 4);
            put(out, x->digits, (size_t)nd);
            break;
        }
        case TYPE_INTERVAL: {
            __int128 span = interval_span(&v->v.iv[row]);
            put(out, &span, sizeof(span));
            break;
        }
        case TYPE_ARRAY: {
            /* the count, then each element's key: equal exactly when "=" */
            Arena a;
            arena_init(&a, 1024);
            Vector el;
            array_to_vector(&a, type_elem(v->type), &v->v.str[row], &el);
            put(out, &el.len, 4);
            for (uint32_t k = 0; k < el.len; k++)
                ex_key_encode(&el, 1, k, out);
            arena_destroy(&a);
            break;
        }
        case TYPE_BPCHAR: {
            /* equal without the trailing spaces (bpchareq) */
            const SlStr *s = &v->v.str[row];
            uint32_t n = bpchar_len(s);
            put(out, &n, 4);
            put(out, s->ptr, n);
            break;
        }
        case TYPE_JSONB: {
            /* its normalized text, then a terminator no JSON text has */
            jsonb_key(&v->v.str[row], out);
            put(out, "\0", 1);
            break;
        }
        default: {
            const SlStr *s = &v->v.str[row];
            put(out, &s->len, 4);
            put(out, s->ptr, s->len);
            break;
        }
        }
    }
}

uint64_t ex_hash(const void *key, size_t len)
{
    const uint64_t m = UINT64_C(0xc6a4a7935bd1e995);
    const int r = 47;
    uint64_t h = UINT64_C(0x9747b28c) ^ (len * m);
    const uint8_t *p = key;
    size_t n = len / 8;
    for (size_t i = 0; i < n; i++) {
        uint64_t k;
        memcpy(&k, p + 8 * i, 8);
        k *= m;
        k ^= k >> r;
        k *= m;
        h ^= k;
        h *= m;
    }
    const uint8_t *tail = p + 8 * n;
    switch (len & 7) {
    case 7: h ^= (uint64_t)tail[6] << 48; /* fall through */
    case 6: h ^= (uint64_t)tail[5] << 40; /* fall through */
    case 5: h ^= (uint64_t)tail[4] << 32; /* fall through */
    case 4: h ^= (uint64_t)tail[3] << 24; /* fall through */
    case 3: h ^= (uint64_t)tail[2] << 16; /* fall through */
    case 2: h ^= (uint64_t)tail[1] << 8;  /* fall through */
    case 1: h ^= (uint64_t)tail[0];
            h *= m;
    }
    h ^= h >> r;
    h *= m;
    h ^= h >> r;
    return h;
}

int ex_value_cmp(const Vector *a, uint32_t i, const Vector *b, uint32_t j)
{
    return value_cmp(a, i, b, j);
}

void ex_copy_value(Vector *dst, uint32_t di, const Vector *src, uint32_t si, Arena *deep)
{
    if (vector_is_null(src, si)) {
        dst->nulls[di] = 1;
        return;
    }
    dst->nulls[di] = 0;
    size_t w = type_width(dst->type.id);
    memcpy((char *)dst->v.data + w * di, (const char *)src->v.data + w * si, w);
    if (deep == NULL)
        return;
    switch (dst->type.id) {
    case TYPE_NUMERIC: {
        SlNumeric *x = &dst->v.num[di];
        if (x->ndigits > 0)
            x->digits = arena_memdup(deep, x->digits, (size_t)x->ndigits);
        break;
    }
    case TYPE_TEXT:
    case TYPE_VARCHAR:
    case TYPE_BYTEA:
    case TYPE_JSONB:
    case TYPE_UUID:
    case TYPE_BPCHAR:
    case TYPE_ARRAY:
    case TYPE_UNKNOWN: {
        SlStr *s = &dst->v.str[di];
        s->ptr = s->len ? arena_memdup(deep, s->ptr, s->len) : "";
        break;
    }
    default:
        break;
    }
}

const Batch *ex_batch_compact(Arena *a, const ExBatch *b)
{
    if (b->sel == NULL) {
        if (b->b.nrows == b->n)
            return &b->b;
        Batch *c = ARENA_NEW(a, Batch);
        *c = b->b;
        c->nrows = b->n;
        return c;
    }
    Batch *c = ARENA_NEW(a, Batch);
    c->nrows = b->n;
    c->ncols = b->b.ncols;
    c->cols = ARENA_ARRAY(a, Vector, c->ncols ? c->ncols : 1);
    for (uint32_t k = 0; k < c->ncols; k++) {
        const Vector *src = &b->b.cols[k];
        Vector *dst = &c->cols[k];
        vector_init(dst, a, src->type, b->n, src->nulls != NULL);
        size_t w = type_width(src->type.id);
        for (uint32_t r = 0; r < b->n; r++) {
            uint32_t i = b->sel[r];
            memcpy((char *)dst->v.data + w * r, (const char *)src->v.data + w * i, w);
            if (src->nulls)
                dst->nulls[r] = src->nulls[i];
        }
    }
    return c;
}
