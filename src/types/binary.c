/*
 * binary.c -- values in PostgreSQL's binary format: each type's recv and
 * send functions, for bind parameters and result columns of format 1 and
 * COPY ... (FORMAT binary).
 *
 *   value_send_binary   append row i of a vector in binary format
 *   value_recv_binary   a value in binary format into row `row` of a vector
 *
 * The layouts are PostgreSQL's *send / *recv functions: big-endian
 * integers and IEEE floats, days and microseconds since 2000-01-01 for date
 * and timestamp, (usec, days, months) for interval, a version byte (1)
 * before jsonb's text, text and varchar as their bytes (checked as text
 * input checks them), and for numeric PostgreSQL's numeric_send: ndigits,
 * weight, sign, dscale and base-10000 digits; arrays are array.c's
 * (array_recv; an array value is its own send form).  A malformed value is 22P03
 * "incorrect binary data format" (with "in bind parameter n" for a
 * parameter); a type without a binary form is 0A000 on input and -1 on
 * output.
 */
#include "sluice/types.h"
#include "sluice/bytes.h"
#include "types/numeric.h"

#include <string.h>

/* ------------------------------------------------------------------- send */

static void send_int16(StrBuf *out, int16_t v)
{
    uint8_t p[2] = {(uint8_t)((uint16_t)v >> 8), (uint8_t)v};
    strbuf_append(out, p, 2);
}

static void send_int32(StrBuf *out, int32_t v)
{
    uint8_t p[4];
    put_be32(p, (uint32_t)v);
    strbuf_append(out, p, 4);
}

static void send_int64(StrBuf *out, uint64_t v)
{
    uint8_t p[8];
    put_be64(p, v);
    strbuf_append(out, p, 8);
}

static int floor_div4(int a)
{
    return a >= 0 ? a / 4 : -((-a + 3) / 4);
}

/* numeric_send: int16 ndigits, int16 weight (of the first base-10000
 * digit), uint16 sign, uint16 dscale, then the digits. */
static int send_numeric(const SlNumeric *n, StrBuf *out)
{
    uint16_t sign;
    switch (n->sign) {
    case NUM_NEG:  sign = 0x4000; break;
    case NUM_NAN:  sign = 0xC000; break;
    case NUM_PINF: sign = 0xD000; break;
    case NUM_NINF: sign = 0xF000; break;
    default:       sign = 0x0000; break;
    }
    if (n->sign == NUM_NAN || n->sign == NUM_PINF || n->sign == NUM_NINF ||
        n->ndigits == 0) {
        send_int16(out, 0);
        send_int16(out, 0);
        send_int16(out, (int16_t)(n->ndigits == 0 && sign == 0x4000 ? 0 : sign));
        send_int16(out, (int16_t)(n->sign >= NUM_NAN ? 0 : n->scale));
        return 0;
    }
    /* Decimal digit i stands for 10^(intdigits - 1 - i). */
    int intdigits = n->ndigits - n->scale;
    int weight = floor_div4(intdigits - 1);
    int low = floor_div4(-n->scale);
    int ngroups = weight - low + 1;
    if (ngroups > 32767 || n->scale > 0x3FFF)
        return -1;
    int16_t stack[64];
    int16_t *g = ngroups <= 64 ? stack : sl_calloc((size_t)ngroups, sizeof(int16_t));
    memset(g, 0, sizeof(int16_t) * (size_t)ngroups);
    static const int pow10[4] = {1, 10, 100, 1000};
    for (int i = 0; i < n->ndigits; i++) {
        int e = intdigits - 1 - i;
        int grp = floor_div4(e);
        g[weight - grp] = (int16_t)(g[weight - grp] + n->digits[i] * pow10[e - 4 * grp]);
    }
    int first = 0, last = ngroups - 1;
    while (first < last && g[first] == 0)
        first++;
    while (last > first && g[last] == 0)
        last--;
    send_int16(out, (int16_t)(last - first + 1));
    send_int16(out, (int16_t)(weight - first));
    send_int16(out, (int16_t)sign);
    send_int16(out, (int16_t)n->scale);
    for (int k = first; k <= last; k++)
        send_int16(out, g[k]);
    if (g != stack)
        sl_free(g);
    return 0;
}

int value_send_binary(const Vector *v, uint32_t i, StrBuf *out)
{
    switch (v->type.id) {
    case TYPE_BOOL:
        strbuf_putc(out, v->v.b[i] ? 1 : 0);
        return 0;
    case TYPE_INT2:
        send_int16(out, v->v.i16[i]);
        return 0;
    case TYPE_INT4:
    case TYPE_DATE:
        send_int32(out, v->v.i32[i]);
        return 0;
    case TYPE_INT8:
    case TYPE_TIMESTAMP:
    case TYPE_TIMESTAMPTZ:
        send_int64(out, (uint64_t)v->v.i64[i]);
        return 0;
    case TYPE_FLOAT4: {
        uint32_t u;
        memcpy(&u, &v->v.f32[i], 4);
        send_int32(out, (int32_t)u);
        return 0;
    }
    case TYPE_FLOAT8: {
        uint64_t u;
        memcpy(&u, &v->v.f64[i], 8);
        send_int64(out, u);
        return 0;
    }
    case TYPE_TEXT:
    case TYPE_VARCHAR:
    case TYPE_BPCHAR:
    case TYPE_BYTEA:
    case TYPE_UUID:
    case TYPE_UNKNOWN:
        strbuf_append(out, v->v.str[i].ptr, v->v.str[i].len);
        return 0;
    case TYPE_JSONB:
        strbuf_putc(out, 1);
        strbuf_append(out, v->v.str[i].ptr, v->v.str[i].len);
        return 0;
    case TYPE_INTERVAL:
        send_int64(out, (uint64_t)v->v.iv[i].usec);
        send_int32(out, v->v.iv[i].days);
        send_int32(out, v->v.iv[i].months);
        return 0;
    case TYPE_NUMERIC:
        return send_numeric(&v->v.num[i], out);
    case TYPE_ARRAY:
        /* the value is array_send's form (array.c) */
        strbuf_append(out, v->v.str[i].ptr, v->v.str[i].len);
        return 0;
    default:
        return -1;
    }
}

/* ---------------------------------------------------------------- receive */

static uint64_t read_be(const unsigned char *p, int n)
{
    uint64_t v = 0;
    for (int i = 0; i < n; i++)
        v = v << 8 | p[i];
    return v;
}

static int bad_binary(SlError *err, int param)
{
    if (param <= 0)
        return sl_error(err, ERRCODE_INVALID_BINARY_REPRESENTATION,
                        "incorrect binary data format");
    return sl_error(err, ERRCODE_INVALID_BINARY_REPRESENTATION,
                    "incorrect binary data format in bind parameter %d", param);
}

/* PostgreSQL's numeric_recv: ndigits, weight, sign, dscale, base-10000
 * digits; turned into text and parsed. */
static int numeric_recv(Arena *a, const unsigned char *p, int32_t len, SlNumeric *out,
                        SlError *err, int param)
{
    if (len < 8)
        return bad_binary(err, param);
    int ndigits = (int16_t)read_be(p, 2), weight = (int16_t)read_be(p + 2, 2);
    unsigned sign = (unsigned)read_be(p + 4, 2), dscale = (unsigned)read_be(p + 6, 2);
    if (ndigits < 0 || len != 8 + 2 * ndigits || dscale > 0x3FFF)
        return bad_binary(err, param);
    if (sign == 0xC000 || sign == 0xD000 || sign == 0xF000) {
        const char *txt = sign == 0xC000 ? "NaN" : sign == 0xD000 ? "Infinity" : "-Infinity";
        return num_parse(a, txt, strlen(txt), out) < 0 ? bad_binary(err, param) : 0;
    }
    if (sign != 0 && sign != 0x4000)
        return bad_binary(err, param);
    StrBuf b;
    strbuf_init(&b);
    if (sign == 0x4000)
        strbuf_putc(&b, '-');
    strbuf_puts(&b, "0");
    for (int i = 0; i < ndigits; i++) {
        unsigned d = (unsigned)read_be(p + 8 + 2 * i, 2);
        if (d > 9999) {
            strbuf_free(&b);
            return bad_binary(err, param);
        }
        strbuf_printf(&b, "%04u", d);
    }
    /* the digits so far stand for 10000^weight ... : place the point */
    int exp = (weight + 1 - ndigits) * 4;
    strbuf_printf(&b, "e%d", exp);
    SlNumeric n;
    int rc = num_parse(a, b.data, b.len, &n);
    strbuf_free(&b);
    if (rc < 0)
        return bad_binary(err, param);
    num_round(a, &n, (int)dscale, out);
    return 0;
}

int value_recv_binary(Arena *a, SlType t, const char *data, int32_t len, Vector *v, uint32_t row,
                      int param, SlError *err)
{
    const unsigned char *p = (const unsigned char *)data;
    if (len < 0)
        return bad_binary(err, param);
    switch (t.id) {
    case TYPE_BOOL:
        if (len != 1)
            return bad_binary(err, param);
        v->v.b[row] = p[0] != 0;
        return 0;
    case TYPE_INT2:
        if (len != 2)
            return bad_binary(err, param);
        v->v.i16[row] = (int16_t)read_be(p, 2);
        return 0;
    case TYPE_INT4:
        if (len != 4)
            return bad_binary(err, param);
        v->v.i32[row] = (int32_t)read_be(p, 4);
        return 0;
    case TYPE_INT8:
        if (len != 8)
            return bad_binary(err, param);
        v->v.i64[row] = (int64_t)read_be(p, 8);
        return 0;
    case TYPE_FLOAT4: {
        if (len != 4)
            return bad_binary(err, param);
        uint32_t u = (uint32_t)read_be(p, 4);
        memcpy(&v->v.f32[row], &u, 4);
        return 0;
    }
    case TYPE_FLOAT8: {
        if (len != 8)
            return bad_binary(err, param);
        uint64_t u = read_be(p, 8);
        memcpy(&v->v.f64[row], &u, 8);
        return 0;
    }
    case TYPE_NUMERIC:
        return numeric_recv(a, p, len, &v->v.num[row], err, param);
    case TYPE_TEXT:
    case TYPE_VARCHAR:
    case TYPE_BPCHAR:
        return value_parse_text(a, t, data, (size_t)len, v, row, -1, err);
    case TYPE_DATE:
        if (len != 4)
            return bad_binary(err, param);
        v->v.i32[row] = (int32_t)read_be(p, 4);
        return 0;
    case TYPE_TIMESTAMP:
    case TYPE_TIMESTAMPTZ:
        if (len != 8)
            return bad_binary(err, param);
        v->v.i64[row] = (int64_t)read_be(p, 8);
        return 0;
    case TYPE_INTERVAL:
        if (len != 16)
            return bad_binary(err, param);
        v->v.iv[row].usec = (int64_t)read_be(p, 8);
        v->v.iv[row].days = (int32_t)read_be(p + 8, 4);
        v->v.iv[row].months = (int32_t)read_be(p + 12, 4);
        return 0;
    case TYPE_BYTEA: {
        char *copy = arena_alloc(a, (size_t)len + 1);
        memcpy(copy, p, (size_t)len);
        v->v.str[row].ptr = copy;
        v->v.str[row].len = (uint32_t)len;
        return 0;
    }
    case TYPE_JSONB:
        /* jsonb_recv: a version byte (1), then the text */
        if (len < 1 || p[0] != 1)
            return sl_error(err, ERRCODE_INVALID_BINARY_REPRESENTATION,
                            "unsupported jsonb version number %d", len < 1 ? -1 : p[0]);
        return value_parse_text(a, t, data + 1, (size_t)len - 1, v, row, -1, err);
    case TYPE_UUID:
        /* uuid_recv: the 16 bytes */
        if (len != 16)
            return bad_binary(err, param);
        v->v.str[row].ptr = arena_memdup(a, p, 16);
        v->v.str[row].len = 16;
        return 0;
    case TYPE_ARRAY:
        return array_recv(a, type_elem(t), data, len, &v->v.str[row], param, err);
    default:
        return sl_error(err, ERRCODE_FEATURE_NOT_SUPPORTED,
                        "binary format for parameters of type %s is not supported yet",
                        type_name(t.id));
    }
}
