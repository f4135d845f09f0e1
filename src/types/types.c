/*
 * types.c -- SQL types: their PostgreSQL identity, vectors, text output and
 * text input, exactly as PostgreSQL 15 prints and reads values.
 *
 *   type_oid, type_len, type_name, type_width, type_format, type_by_name,
 *   type_category, type_is_preferred,
 *   type_array_oid, type_oid_of, type_display   the type table
 *   vector_init                             a vector in an arena
 *   value_cmp                               ORDER BY's order of two values
 *   value_format_text                       one value's text form
 *   value_parse_text                        text -> one value (input functions)
 *   bytea_hex_decode                        hex digits -> bytes (byteain, decode())
 *
 * Floats print as PostgreSQL 12+ does by default (extra_float_digits = 1):
 * the shortest decimal that reads back to the same value, in %g style with
 * the exponent form below 1e-4 and from 1e15 (float8) or 1e6 (float4).
 * Text compares byte-wise elsewhere (eval), which is PostgreSQL's "C"
 * collation.  Date and time values print in ISO style, timestamptz in the
 * session's TimeZone (settings.h);
 * their input and output are datetime.c's and interval.c's, jsonb's is
 * jsonb.c's (its canonical text), numeric's numeric.c's; bytea reads hex
 * and escape input.  The binary forms are binary.c's.
 */
#include "sluice/types.h"
#include "types/datetime.h"
#include "types/numeric.h"
#include "sluice/settings.h"
#include "sluice/utf8.h"

#include <float.h>

#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <strings.h>

typedef struct TypeInfo {
    const char *typname;    /* pg_type.typname */
    const char *sqlname;    /* format_type() */
    uint32_t    oid;
    int16_t     len;
    uint8_t     width;      /* bytes per value in a vector */
    char        category;
    bool        preferred;
} TypeInfo;

static const TypeInfo type_info[TYPE__COUNT] = {
    [TYPE_UNKNOWN]     = {"unknown", "unknown", 705, -2, sizeof(SlStr), 'X', false},
    [TYPE_BOOL]        = {"bool", "boolean", 16, 1, 1, 'B', true},
    [TYPE_INT2]        = {"int2", "smallint", 21, 2, 2, 'N', false},
    [TYPE_INT4]        = {"int4", "integer", 23, 4, 4, 'N', false},
    [TYPE_INT8]        = {"int8", "bigint", 20, 8, 8, 'N', false},
    [TYPE_FLOAT4]      = {"float4", "real", 700, 4, 4, 'N', false},
    [TYPE_FLOAT8]      = {"float8", "double precision", 701, 8, 8, 'N', true},
    [TYPE_NUMERIC]     = {"numeric", "numeric", 1700, -1, sizeof(SlNumeric), 'N', false},
    [TYPE_TEXT]        = {"text", "text", 25, -1, sizeof(SlStr), 'S', true},
    [TYPE_VARCHAR]     = {"varchar", "character varying", 1043, -1, sizeof(SlStr), 'S', false},
    [TYPE_BYTEA]       = {"bytea", "bytea", 17, -1, sizeof(SlStr), 'U', false},
    [TYPE_DATE]        = {"date", "date", 1082, 4, 4, 'D', false},
    [TYPE_TIMESTAMP]   = {"timestamp", "timestamp without time zone", 1114, 8, 8, 'D', false},
    [TYPE_TIMESTAMPTZ] = {"timestamptz", "timestamp with time zone", 1184, 8, 8, 'D', true},
    [TYPE_INTERVAL]    = {"interval", "interval", 1186, 16, sizeof(SlInterval), 'T', true},
    [TYPE_JSONB]       = {"jsonb", "jsonb", 3802, -1, sizeof(SlStr), 'U', false},
    [TYPE_UUID]        = {"uuid", "uuid", 2950, 16, sizeof(SlStr), 'U', false},
    [TYPE_BPCHAR]      = {"bpchar", "character", 1042, -1, sizeof(SlStr), 'S', false},
    /* an array of some element (SlType.elem): as a bare id, PostgreSQL's
     * pseudo-type anyarray; type_oid_of gives the array type's own OID */
    [TYPE_ARRAY]       = {"anyarray", "anyarray", 2277, -1, sizeof(SlStr), 'A', false},
};

uint32_t type_oid(SlTypeId id) { return type_info[id].oid; }
const char *type_typname(SlTypeId id) { return type_info[id].typname; }
int16_t type_len(SlTypeId id) { return type_info[id].len; }
const char *type_name(SlTypeId id) { return type_info[id].sqlname; }
size_t type_width(SlTypeId id) { return type_info[id].width; }
char type_category(SlTypeId id) { return type_info[id].category; }
bool type_is_preferred(SlTypeId id) { return type_info[id].preferred; }

uint32_t type_array_oid(SlTypeId elem)
{
    static const uint32_t typarray[TYPE__NSCALAR] = {
        [TYPE_BOOL] = 1000, [TYPE_INT2] = 1005, [TYPE_INT4] = 1007, [TYPE_INT8] = 1016,
        [TYPE_FLOAT4] = 1021, [TYPE_FLOAT8] = 1022, [TYPE_NUMERIC] = 1231,
        [TYPE_TEXT] = 1009, [TYPE_VARCHAR] = 1015, [TYPE_BYTEA] = 1001, [TYPE_DATE] = 1182,
        [TYPE_TIMESTAMP] = 1115, [TYPE_TIMESTAMPTZ] = 1185, [TYPE_INTERVAL] = 1187,
        [TYPE_JSONB] = 3807, [TYPE_UUID] = 2951,
        [TYPE_BPCHAR] = 1014};
    return elem < TYPE__NSCALAR ? typarray[elem] : 0;
}

uint32_t type_oid_of(SlType t)
{
    return t.id == TYPE_ARRAY ? type_array_oid(t.elem) : type_info[t.id].oid;
}

SlTypeId type_by_name(const char *name)
{
    for (int i = 1; i < TYPE__NSCALAR; i++)
        if (strcmp(type_info[i].typname, name) == 0)
            return (SlTypeId)i;
    return TYPE_UNKNOWN;
}

const char *type_format(SlType t, char *buf, size_t size)
{
    if (t.id == TYPE_ARRAY) {
        char eb[96];
        snprintf(buf, size, "%s[]", type_format(type_elem(t), eb, sizeof(eb)));
        return buf;
    }
    const char *name = type_info[t.id].sqlname;
    if (t.typmod >= 0 && (t.id == TYPE_VARCHAR || t.id == TYPE_BPCHAR))
        snprintf(buf, size, "%s(%d)", name, t.typmod);
    else if (t.id == TYPE_BPCHAR)
        snprintf(buf, size, "bpchar");
    else if (t.typmod >= 0 && t.id == TYPE_NUMERIC)
        snprintf(buf, size, "%s(%d,%d)", name, (t.typmod >> 16) & 0xFFFF, t.typmod & 0xFFFF);
    else if (t.typmod >= 0 && t.id == TYPE_INTERVAL && (t.typmod & 0xFFFF) != 0xFFFF)
        snprintf(buf, size, "%s%s(%d)", name, dt_interval_typmod_text(t.typmod), t.typmod & 0xFFFF);
    else if (t.typmod >= 0 && t.id == TYPE_INTERVAL)
        snprintf(buf, size, "%s%s", name, dt_interval_typmod_text(t.typmod));
    else
        snprintf(buf, size, "%s", name);
    return buf;
}

const char *type_display(SlType t, char *buf, size_t size)
{
    if (t.id != TYPE_ARRAY)
        return type_info[t.id].sqlname;
    t.typmod = -1;
    return type_format(t, buf, size);
}

void vector_init(Vector *v, Arena *a, SlType type, uint32_t len, bool with_nulls)
{
    v->type = type;
    v->len = len;
    size_t w = type_info[type.id].width;
    v->v.data = arena_alloc(a, w * (len ? len : 1));
    v->nulls = with_nulls ? arena_zalloc(a, len ? len : 1) : NULL;
}

/* ------------------------------------------------------------- order */

static __int128 iv_span(const SlInterval *iv)
{
    return ((__int128)iv->months * 30 + iv->days) * INT64_C(86400000000) + iv->usec;
}

#define CMP(a, b) (((a) > (b)) - ((a) < (b)))

static int cmp_double(double a, double b)
{
    if (isnan(a))
        return isnan(b) ? 0 : 1;
    if (isnan(b))
        return -1;
    return CMP(a, b);
}

uint32_t bpchar_len(const SlStr *s)
{
    uint32_t n = s->len;
    while (n > 0 && s->ptr[n - 1] == ' ')
        n--;
    return n;
}

int value_cmp(const Vector *a, uint32_t i, const Vector *b, uint32_t j)
{
    switch (a->type.id) {
    case TYPE_BOOL:
        return CMP(a->v.b[i] != 0, b->v.b[j] != 0);
    case TYPE_INT2:
        return CMP(a->v.i16[i], b->v.i16[j]);
    case TYPE_INT4:
    case TYPE_DATE:
        return CMP(a->v.i32[i], b->v.i32[j]);
    case TYPE_INT8:
    case TYPE_TIMESTAMP:
    case TYPE_TIMESTAMPTZ:
        return CMP(a->v.i64[i], b->v.i64[j]);
    case TYPE_FLOAT4:
        return cmp_double(a->v.f32[i], b->v.f32[j]);
    case TYPE_FLOAT8:
        return cmp_double(a->v.f64[i], b->v.f64[j]);
    case TYPE_NUMERIC:
        return num_cmp(&a->v.num[i], &b->v.num[j]);
    case TYPE_INTERVAL: {
        __int128 x = iv_span(&a->v.iv[i]), y = iv_span(&b->v.iv[j]);
        return CMP(x, y);
    }
    case TYPE_ARRAY:
        return array_cmp(&a->v.str[i], &b->v.str[j], type_elem(a->type));
    case TYPE_BPCHAR: {
        /* bpcharcmp: without the trailing spaces */
        uint32_t x = bpchar_len(&a->v.str[i]), y = bpchar_len(&b->v.str[j]);
        int c = memcmp(a->v.str[i].ptr, b->v.str[j].ptr, SL_MIN(x, y));
        return c != 0 ? (c > 0) - (c < 0) : CMP(x, y);
    }
    case TYPE_JSONB:
        return jsonb_cmp(&a->v.str[i], &b->v.str[j]);
    default: {
        const SlStr *x = &a->v.str[i], *y = &b->v.str[j];
        int c = memcmp(x->ptr, y->ptr, SL_MIN(x->len, y->len));
        return c != 0 ? (c > 0) - (c < 0) : CMP(x->len, y->len);
    }
    }
}

/* ------------------------------------------------------------- output */

/* Does the decimal in buf read back as d (as a float when single)?  Like
 * PostgreSQL's Ryu-based output, a decimal exactly halfway to the next
 * value does not count, even if round-half-even would read it back. */
static bool reads_back(const char *buf, double d, bool single)
{
    if (single) {
        float f = (float)d;
        if (strtof(buf, NULL) != f)
            return false;
        double r = strtod(buf, NULL);
        if (r > f)
            return (r - f) * 2 < (double)nextafterf(f, INFINITY) - f;
        if (r < f)
            return (f - r) * 2 < f - (double)nextafterf(f, -INFINITY);
        return true;
    }
    if (strtod(buf, NULL) != d)
        return false;
    long double r = strtold(buf, NULL), v = d;
    if (r > v)
        return (r - v) * 2 < (long double)nextafter(d, INFINITY) - v;
    if (r < v)
        return (v - r) * 2 < v - (long double)nextafter(d, -INFINITY);
    return true;
}

/* PostgreSQL's float output: the shortest digits that read back the same
 * value; fixed notation for decimal exponents in [-4, sci_hi). */
static void format_float(double d, bool single, StrBuf *out)
{
    if (isnan(d)) {
        strbuf_puts(out, "NaN");
        return;
    }
    if (isinf(d)) {
        strbuf_puts(out, d > 0 ? "Infinity" : "-Infinity");
        return;
    }
    if (d == 0) {
        strbuf_puts(out, signbit(d) ? "-0" : "0");
        return;
    }
    /* extra_float_digits <= 0: PostgreSQL's older output, %g with
     * FLT_DIG / DBL_DIG plus the setting digits. */
    int efd = settings_current_float_digits();
    if (efd <= 0) {
        int nd = (single ? FLT_DIG : DBL_DIG) + efd;
        strbuf_printf(out, "%.*g", nd < 1 ? 1 : nd, d);
        return;
    }
    /* The fewest significant digits that read back the same value: a
     * correctly rounded p-digit form that round-trips stays round-tripping
     * for every larger p, so binary search over [1, 9 or 17]. */
    char buf[64];
    int lo = 1, hi = single ? 9 : 17;
    while (lo < hi) {
        int mid = (lo + hi) / 2;
        snprintf(buf, sizeof(buf), "%.*e", mid - 1, d);
        if (reads_back(buf, d, single))
            hi = mid;
        else
            lo = mid + 1;
    }
    snprintf(buf, sizeof(buf), "%.*e", lo - 1, d);
    /* buf: [-]D[.DDD]e(+|-)XX */
    const char *p = buf;
    bool neg = *p == '-';
    if (neg)
        p++;
    char digits[32];
    int nd = 0;
    for (; *p && *p != 'e'; p++)
        if (*p >= '0' && *p <= '9')
            digits[nd++] = *p;
    int exp = atoi(p + 1);
    while (nd > 1 && digits[nd - 1] == '0')
        nd--;
    if (neg)
        strbuf_putc(out, '-');
    int sci_hi = single ? 6 : 15;
    if (exp < -4 || exp >= sci_hi) {
        strbuf_putc(out, digits[0]);
        if (nd > 1) {
            strbuf_putc(out, '.');
            strbuf_append(out, digits + 1, (size_t)(nd - 1));
        }
        strbuf_printf(out, "e%c%02d", exp < 0 ? '-' : '+', exp < 0 ? -exp : exp);
    } else if (exp >= 0) {
        for (int i = 0; i <= exp; i++)
            strbuf_putc(out, i < nd ? digits[i] : '0');
        if (nd > exp + 1) {
            strbuf_putc(out, '.');
            strbuf_append(out, digits + exp + 1, (size_t)(nd - exp - 1));
        }
    } else {
        strbuf_puts(out, "0.");
        for (int i = 0; i < -exp - 1; i++)
            strbuf_putc(out, '0');
        strbuf_append(out, digits, (size_t)nd);
    }
}

void value_format_text(const Vector *v, uint32_t i, StrBuf *out)
{
    switch (v->type.id) {
    case TYPE_BOOL:
        strbuf_putc(out, v->v.b[i] ? 't' : 'f');
        break;
    case TYPE_INT2:
        strbuf_put_int(out, v->v.i16[i]);
        break;
    case TYPE_INT4:
        strbuf_put_int(out, v->v.i32[i]);
        break;
    case TYPE_INT8:
        strbuf_put_int(out, v->v.i64[i]);
        break;
    case TYPE_FLOAT4:
        format_float(v->v.f32[i], true, out);
        break;
    case TYPE_FLOAT8:
        format_float(v->v.f64[i], false, out);
        break;
    case TYPE_NUMERIC:
        num_format(&v->v.num[i], out);
        break;
    case TYPE_BYTEA: {
        static const char hex[] = "0123456789abcdef";
        strbuf_puts(out, "\\x");
        for (uint32_t k = 0; k < v->v.str[i].len; k++) {
            unsigned char c = (unsigned char)v->v.str[i].ptr[k];
            strbuf_putc(out, hex[c >> 4]);
            strbuf_putc(out, hex[c & 15]);
        }
        break;
    }
    case TYPE_DATE:
        dt_format_date(v->v.i32[i], out);
        break;
    case TYPE_TIMESTAMP:
    case TYPE_TIMESTAMPTZ:
        dt_format_timestamp(v->v.i64[i], v->type.id == TYPE_TIMESTAMPTZ, out);
        break;
    case TYPE_INTERVAL:
        dt_format_interval(&v->v.iv[i], out);
        break;
    case TYPE_UNKNOWN:
    case TYPE_TEXT:
    case TYPE_VARCHAR:
    case TYPE_BPCHAR:
    case TYPE_JSONB:
        strbuf_append(out, v->v.str[i].ptr, v->v.str[i].len);
        break;
    case TYPE_UUID: {
        /* uuid_out: 8-4-4-4-12 lower-case hex digits */
        static const char hex[] = "0123456789abcdef";
        const unsigned char *u = (const unsigned char *)v->v.str[i].ptr;
        for (int k = 0; k < 16; k++) {
            if (k == 4 || k == 6 || k == 8 || k == 10)
                strbuf_putc(out, '-');
            strbuf_putc(out, hex[u[k] >> 4]);
            strbuf_putc(out, hex[u[k] & 15]);
        }
        break;
    }
    case TYPE_ARRAY:
        array_format_text(&v->v.str[i], type_elem(v->type), out);
        break;
    case TYPE__COUNT:
        break;
    }
}

/* -------------------------------------------------------------- input */

static bool is_space_c(char c)
{
    return c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\f' || c == '\v';
}

static int bad_input(SlError *err, int loc, const char *tname, const char *s, size_t len);

/* bpcharin with a length n: too long is an error unless the excess is
 * spaces (then cut), too short is padded with spaces. */
static int parse_bpchar(Arena *a, const char *s, size_t len, int32_t n, SlStr *out, int loc,
                        SlError *err)
{
    size_t chars = 0, cut = len;
    for (size_t k = 0; k < len; k++) {
        if (((unsigned char)s[k] & 0xC0) != 0x80) {
            if (chars == (size_t)n) {
                cut = k;
                break;
            }
            chars++;
        }
    }
    for (size_t k = cut; k < len; k++)
        if (s[k] != ' ')
            return sl_error_at(err, ERRCODE_STRING_DATA_RIGHT_TRUNCATION, loc,
                               "value too long for type character(%d)", n);
    char *b = arena_alloc(a, cut + (size_t)n - chars + 1);
    memcpy(b, s, cut);
    memset(b + cut, ' ', (size_t)n - chars);
    out->ptr = b;
    out->len = (uint32_t)(cut + (size_t)n - chars);
    return 0;
}

static int hex_value(char c)
{
    return c >= '0' && c <= '9' ? c - '0'
           : c >= 'a' && c <= 'f' ? c - 'a' + 10
           : c >= 'A' && c <= 'F' ? c - 'A' + 10 : -1;
}

/* uuid_in (PostgreSQL's string_to_uuid): 32 hex digits, optionally in
 * braces, with a hyphen allowed after any group of four; nothing else,
 * not even spaces.  The 16 bytes go to the arena. */
static int parse_uuid(Arena *a, const char *s, size_t len, SlStr *out, int loc, SlError *err)
{
    unsigned char u[16];
    size_t k = 0;
    bool braces = len > 0 && s[0] == '{';
    if (braces)
        k++;
    for (int b = 0; b < 16; b++) {
        if (k + 2 > len)
            return bad_input(err, loc, "uuid", s, len);
        int hi = hex_value(s[k]), lo = hex_value(s[k + 1]);
        if (hi < 0 || lo < 0)
            return bad_input(err, loc, "uuid", s, len);
        u[b] = (unsigned char)(hi << 4 | lo);
        k += 2;
        if (k < len && s[k] == '-' && b % 2 == 1 && b < 15)
            k++;
    }
    if (braces) {
        if (k >= len || s[k] != '}')
            return bad_input(err, loc, "uuid", s, len);
        k++;
    }
    if (k != len)
        return bad_input(err, loc, "uuid", s, len);
    out->ptr = arena_memdup(a, u, 16);
    out->len = 16;
    return 0;
}

static int bad_input(SlError *err, int loc, const char *tname, const char *s, size_t len)
{
    return sl_error_at(err, ERRCODE_INVALID_TEXT_REPRESENTATION, loc,
                       "invalid input syntax for type %s: \"%.*s\"", tname,
                       (int)SL_MIN(len, 1000), s);
}

static int out_of_range(SlError *err, int loc, const char *tname, const char *s, size_t len)
{
    return sl_error_at(err, ERRCODE_NUMERIC_VALUE_OUT_OF_RANGE, loc,
                       "value \"%.*s\" is out of range for type %s", (int)SL_MIN(len, 1000), s,
                       tname);
}

/* pg_strtoint16/32/64: spaces, sign, digits, spaces. */
static int parse_int(const char *s, size_t len, int64_t lo, int64_t hi, const char *tname,
                     int64_t *out, int loc, SlError *err)
{
    size_t i = 0;
    while (i < len && is_space_c(s[i]))
        i++;
    bool neg = false;
    if (i < len && (s[i] == '+' || s[i] == '-'))
        neg = s[i++] == '-';
    size_t digits = i;
    uint64_t u = 0;
    bool overflow = false;
    for (; i < len && s[i] >= '0' && s[i] <= '9'; i++) {
        if (u > (UINT64_MAX - 9) / 10)
            overflow = true;
        else
            u = u * 10 + (uint64_t)(s[i] - '0');
    }
    if (i == digits)
        return bad_input(err, loc, tname, s, len);
    while (i < len && is_space_c(s[i]))
        i++;
    if (i != len)
        return bad_input(err, loc, tname, s, len);
    if (overflow || (!neg && u > (uint64_t)hi) || (neg && u > (uint64_t)hi + 1) ||
        (neg && (int64_t)(0 - u) < lo && u != (uint64_t)hi + 1))
        return out_of_range(err, loc, tname, s, len);
    *out = neg ? (int64_t)(0 - u) : (int64_t)u;
    return 0;
}

/* float8in / float4in: strtod plus PostgreSQL's spellings of NaN and
 * Infinity, and its range errors. */
static int parse_float(const char *s, size_t len, bool single, double *out, int loc,
                       SlError *err)
{
    const char *tname = single ? "real" : "double precision";
    char stackbuf[128];
    char *buf = len < sizeof(stackbuf) ? stackbuf : sl_malloc(len + 1);
    memcpy(buf, s, len);
    buf[len] = '\0';
    int rc = 0;
    char *p = buf;
    while (is_space_c(*p))
        p++;
    char *end;
    double d;
    if (*p == '\0') {
        rc = bad_input(err, loc, tname, s, len);
        goto done;
    }
    if (strncasecmp(p, "nan", 3) == 0) {
        d = NAN;
        end = p + 3;
    } else if (strncasecmp(p, "infinity", 8) == 0 || strncasecmp(p, "+infinity", 9) == 0) {
        d = INFINITY;
        end = p + (*p == '+' ? 9 : 8);
    } else if (strncasecmp(p, "-infinity", 9) == 0) {
        d = -INFINITY;
        end = p + 9;
    } else if (strncasecmp(p, "inf", 3) == 0 || strncasecmp(p, "+inf", 4) == 0) {
        d = INFINITY;
        end = p + (*p == '+' ? 4 : 3);
    } else if (strncasecmp(p, "-inf", 4) == 0) {
        d = -INFINITY;
        end = p + 4;
    } else {
        /* strtod also reads hex floats and "nan(...)": PostgreSQL's strtod
         * does too, so we accept what it accepts. */
        errno = 0;
        d = strtod(p, &end);
        if (end == p) {
            rc = bad_input(err, loc, tname, s, len);
            goto done;
        }
        bool range = errno == ERANGE && (d == 0 || isinf(d));
        if (single && ((isinf((float)d) && !isinf(d)) || ((float)d == 0.0f && d != 0)))
            range = true;
        if (range) {
            rc = sl_error_at(err, ERRCODE_NUMERIC_VALUE_OUT_OF_RANGE, loc,
                             "\"%.*s\" is out of range for type %s", (int)SL_MIN(len, 1000), s,
                             tname);
            goto done;
        }
    }
    while (is_space_c(*end))
        end++;
    if (*end != '\0') {
        rc = bad_input(err, loc, tname, s, len);
        goto done;
    }
    *out = d;
done:
    if (buf != stackbuf)
        sl_free(buf);
    return rc;
}

/* boolin: t/true/y/yes/on/1 and f/false/n/no/off/0, any case, unique
 * prefixes, surrounding spaces. */
static int parse_bool(const char *s, size_t len, uint8_t *out, int loc, SlError *err)
{
    size_t i = 0, n = len;
    while (i < n && is_space_c(s[i]))
        i++;
    while (n > i && is_space_c(s[n - 1]))
        n--;
    const char *p = s + i;
    size_t k = n - i;
    static const struct { const char *word; size_t minlen; uint8_t v; } words[] = {
        {"true", 1, 1}, {"false", 1, 0}, {"yes", 1, 1}, {"no", 1, 0},
        {"on", 2, 1},   {"off", 2, 0},   {"1", 1, 1},   {"0", 1, 0},
    };
    for (size_t w = 0; w < SL_ARRAY_LEN(words); w++) {
        if (k >= words[w].minlen && k <= strlen(words[w].word) &&
            strncasecmp(p, words[w].word, k) == 0) {
            *out = words[w].v;
            return 0;
        }
    }
    return bad_input(err, loc, "boolean", s, len);
}

/* Hex digits into bytes, as PostgreSQL's hex_decode (spaces between pairs
 * are skipped).  Returns the byte count, or -1 with err set. */
int64_t bytea_hex_decode(const char *s, size_t len, char *out, int loc, SlError *err)
{
    size_t k = 0;
    int64_t o = 0;
    while (k < len) {
        char c = s[k];
        if (c == ' ' || c == '\t' || c == '\n' || c == '\r') {
            k++;
            continue;
        }
        int hi = c >= '0' && c <= '9' ? c - '0' : (c | 32) >= 'a' && (c | 32) <= 'f' ? (c | 32) - 'a' + 10 : -1;
        if (hi < 0)
            return sl_error_at(err, ERRCODE_INVALID_PARAMETER_VALUE, loc,
                               "invalid hexadecimal digit: \"%.*s\"", sl_utf8_len((unsigned char)c),
                               s + k);
        if (k + 1 >= len)
            return sl_error_at(err, ERRCODE_INVALID_PARAMETER_VALUE, loc,
                               "invalid hexadecimal data: odd number of digits");
        c = s[k + 1];
        int lo = c >= '0' && c <= '9' ? c - '0' : (c | 32) >= 'a' && (c | 32) <= 'f' ? (c | 32) - 'a' + 10 : -1;
        if (lo < 0)
            return sl_error_at(err, ERRCODE_INVALID_PARAMETER_VALUE, loc,
                               "invalid hexadecimal digit: \"%.*s\"", sl_utf8_len((unsigned char)c),
                               s + k + 1);
        out[o++] = (char)(hi << 4 | lo);
        k += 2;
    }
    return o;
}

/* byteain: "\\x" and hex digits, or the escape format (\\ and \\ooo). */
static int parse_bytea(Arena *a, const char *s, size_t len, SlStr *out, int loc, SlError *err)
{
    if (len >= 2 && s[0] == '\\' && s[1] == 'x') {
        char *buf = arena_alloc(a, (len - 2) / 2 + 1);
        int64_t n = bytea_hex_decode(s + 2, len - 2, buf, loc, err);
        if (n < 0)
            return -1;
        out->ptr = buf;
        out->len = (uint32_t)n;
        return 0;
    }
    char *buf = arena_alloc(a, len + 1);
    size_t o = 0;
    for (size_t k = 0; k < len;) {
        if (s[k] != '\\') {
            buf[o++] = s[k++];
        } else if (k + 3 < len && s[k + 1] >= '0' && s[k + 1] <= '3' && s[k + 2] >= '0' &&
                   s[k + 2] <= '7' && s[k + 3] >= '0' && s[k + 3] <= '7') {
            buf[o++] = (char)(((s[k + 1] - '0') << 6) | ((s[k + 2] - '0') << 3) | (s[k + 3] - '0'));
            k += 4;
        } else if (k + 1 < len && s[k + 1] == '\\') {
            buf[o++] = '\\';
            k += 2;
        } else {
            return sl_error_at(err, ERRCODE_INVALID_TEXT_REPRESENTATION, loc,
                               "invalid input syntax for type bytea");
        }
    }
    out->ptr = buf;
    out->len = (uint32_t)o;
    return 0;
}

int value_parse_text(Arena *a, SlType t, const char *s, size_t len, Vector *v, uint32_t i,
                     int loc, SlError *err)
{
    int64_t iv;
    double d;
    switch (t.id) {
    case TYPE_BOOL:
        return parse_bool(s, len, &v->v.b[i], loc, err);
    case TYPE_INT2:
        if (parse_int(s, len, INT16_MIN, INT16_MAX, "smallint", &iv, loc, err) < 0)
            return -1;
        v->v.i16[i] = (int16_t)iv;
        return 0;
    case TYPE_INT4:
        if (parse_int(s, len, INT32_MIN, INT32_MAX, "integer", &iv, loc, err) < 0)
            return -1;
        v->v.i32[i] = (int32_t)iv;
        return 0;
    case TYPE_INT8:
        if (parse_int(s, len, INT64_MIN, INT64_MAX, "bigint", &iv, loc, err) < 0)
            return -1;
        v->v.i64[i] = iv;
        return 0;
    case TYPE_FLOAT4:
        if (parse_float(s, len, true, &d, loc, err) < 0)
            return -1;
        v->v.f32[i] = (float)d;
        return 0;
    case TYPE_FLOAT8:
        if (parse_float(s, len, false, &d, loc, err) < 0)
            return -1;
        v->v.f64[i] = d;
        return 0;
    case TYPE_NUMERIC: {
        SlNumeric n;
        int rc = num_parse(a, s, len, &n);
        if (rc == -1)
            return bad_input(err, loc, "numeric", s, len);
        if (rc == -2)
            return sl_error_at(err, ERRCODE_NUMERIC_VALUE_OUT_OF_RANGE, loc,
                               "value overflows numeric format");
        return num_apply_typmod(a, &n, t.typmod, &v->v.num[i], err);
    }
    case TYPE_UNKNOWN:
    case TYPE_TEXT:
    case TYPE_BPCHAR:
    case TYPE_VARCHAR: {
        if (sl_utf8_check(s, len, loc, err) < 0)
            return -1;
        size_t n = len;
        if (t.id == TYPE_BPCHAR && t.typmod >= 0)
            return parse_bpchar(a, s, len, t.typmod, &v->v.str[i], loc, err);
        if (t.id == TYPE_VARCHAR && t.typmod >= 0) {
            /* varcharin: too long is an error unless the excess is spaces */
            size_t chars = 0, cut = len;
            for (size_t k = 0; k < len; k++) {
                if (((unsigned char)s[k] & 0xC0) != 0x80) {
                    if (chars == (size_t)t.typmod) {
                        cut = k;
                        break;
                    }
                    chars++;
                }
            }
            for (size_t k = cut; k < len; k++) {
                if (s[k] != ' ')
                    return sl_error_at(err, ERRCODE_STRING_DATA_RIGHT_TRUNCATION, loc,
                                       "value too long for type character varying(%d)",
                                       t.typmod);
            }
            n = cut;
        }
        v->v.str[i].ptr = arena_memdup(a, s, n);
        v->v.str[i].len = (uint32_t)n;
        return 0;
    }
    case TYPE_DATE:
        return dt_parse_date(s, len, &v->v.i32[i], loc, err);
    case TYPE_TIMESTAMP:
    case TYPE_TIMESTAMPTZ:
        return dt_parse_timestamp(s, len, t.id == TYPE_TIMESTAMPTZ, &v->v.i64[i], loc, err);
    case TYPE_INTERVAL:
        return dt_parse_interval(s, len, t.typmod, &v->v.iv[i], loc, err);
    case TYPE_JSONB:
        return jsonb_parse(a, s, len, &v->v.str[i], loc, err);
    case TYPE_BYTEA:
        return parse_bytea(a, s, len, &v->v.str[i], loc, err);
    case TYPE_ARRAY:
        return array_parse_text(a, type_elem(t), s, len, &v->v.str[i], loc, err);
    case TYPE_UUID:
        return parse_uuid(a, s, len, &v->v.str[i], loc, err);
    case TYPE__COUNT:
        break;
    }
    return sl_error_at(err, ERRCODE_FEATURE_NOT_SUPPORTED, loc,
                       "input of type %s is not supported yet", type_name(t.id));
}
