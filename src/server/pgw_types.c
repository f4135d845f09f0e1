/*
 * pgw_types.c -- PostgreSQL binary output format of values.
 *
 *   pgw_send_binary   append row i of a vector in binary format
 *
 * The layouts are PostgreSQL's *send functions: big-endian integers and
 * IEEE floats, days and microseconds since 2000-01-01 for date and
 * timestamp, (usec, days, months) for interval, a version byte before jsonb,
 * and for numeric PostgreSQL's numeric_send: ndigits, weight, sign, dscale
 * and base-10000 digits.
 */
#include "pgw.h"

static void put_be64(StrBuf *out, uint64_t v)
{
    uint8_t p[8];
    for (int i = 7; i >= 0; i--) {
        p[i] = (uint8_t)v;
        v >>= 8;
    }
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
        pgw_put_int16(out, 0);
        pgw_put_int16(out, 0);
        pgw_put_int16(out, (int16_t)(n->ndigits == 0 && sign == 0x4000 ? 0 : sign));
        pgw_put_int16(out, (int16_t)(n->sign >= NUM_NAN ? 0 : n->scale));
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
    pgw_put_int16(out, (int16_t)(last - first + 1));
    pgw_put_int16(out, (int16_t)(weight - first));
    pgw_put_int16(out, (int16_t)sign);
    pgw_put_int16(out, (int16_t)n->scale);
    for (int k = first; k <= last; k++)
        pgw_put_int16(out, g[k]);
    if (g != stack)
        sl_free(g);
    return 0;
}

int pgw_send_binary(const Vector *v, uint32_t i, StrBuf *out)
{
    switch (v->type.id) {
    case TYPE_BOOL:
        pgw_put_byte(out, v->v.b[i] ? 1 : 0);
        return 0;
    case TYPE_INT2:
        pgw_put_int16(out, v->v.i16[i]);
        return 0;
    case TYPE_INT4:
    case TYPE_DATE:
        pgw_put_int32(out, v->v.i32[i]);
        return 0;
    case TYPE_INT8:
    case TYPE_TIMESTAMP:
    case TYPE_TIMESTAMPTZ:
        put_be64(out, (uint64_t)v->v.i64[i]);
        return 0;
    case TYPE_FLOAT4: {
        uint32_t u;
        memcpy(&u, &v->v.f32[i], 4);
        pgw_put_int32(out, (int32_t)u);
        return 0;
    }
    case TYPE_FLOAT8: {
        uint64_t u;
        memcpy(&u, &v->v.f64[i], 8);
        put_be64(out, u);
        return 0;
    }
    case TYPE_TEXT:
    case TYPE_VARCHAR:
    case TYPE_BYTEA:
    case TYPE_UNKNOWN:
        pgw_put_bytes(out, v->v.str[i].ptr, v->v.str[i].len);
        return 0;
    case TYPE_JSONB:
        pgw_put_byte(out, 1);
        pgw_put_bytes(out, v->v.str[i].ptr, v->v.str[i].len);
        return 0;
    case TYPE_INTERVAL:
        put_be64(out, (uint64_t)v->v.iv[i].usec);
        pgw_put_int32(out, v->v.iv[i].days);
        pgw_put_int32(out, v->v.iv[i].months);
        return 0;
    case TYPE_NUMERIC:
        return send_numeric(&v->v.num[i], out);
    default:
        return -1;
    }
}
