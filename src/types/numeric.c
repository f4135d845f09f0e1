/*
 * numeric.c -- the NUMERIC type: exact decimals, their text input and
 * output, comparison, rounding and conversions (see numeric.h).  The
 * arithmetic is functions/numeric_arith.c's.
 *
 *   num_parse, num_format                     text in and out
 *   num_cmp                                   order
 *   num_round, num_apply_typmod               rounding, numeric(p,s) typmods
 *   num_from_int64, num_to_int64,
 *   num_from_double, num_to_double            conversions
 *   num_make, num_abs_cmp, num_mag_cmp_padded, num_set_special,
 *   num_is_inf, num_first_nonzero             for the arithmetic (numeric_int.h)
 *
 * A value is a magnitude of decimal digits (one byte each) and a scale.  The
 * magnitude routines (mag_*) work on plain digit arrays, most significant
 * first, in a heap scratch buffer or the result arena.  This is the simple
 * schoolbook form: quadratic multiply and divide, fine for the tens of digits
 * SQL values have.  A base-10000 form (PostgreSQL's NBASE) can replace it
 * behind the same interface when numeric throughput matters.
 */
#include "types/numeric.h"
#include "types/numeric_int.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>

static const SlNumeric num_zero = {NULL, 0, 0, NUM_POS};

bool num_is_special(const SlNumeric *x)
{
    return x->sign >= NUM_NAN;
}

/* Makes a value from a magnitude (may have leading zeros) in the arena. */
void num_make(Arena *a, const uint8_t *mag, int n, int scale, bool neg, SlNumeric *out)
{
    while (n > 0 && mag[0] == 0) {
        mag++;
        n--;
    }
    out->ndigits = n;
    out->digits = n ? arena_memdup(a, mag, (size_t)n) : NULL;
    out->scale = scale;
    out->sign = (neg && n > 0) ? NUM_NEG : NUM_POS;
}

/* --------------------------------------------------------- text in / out */

static bool ci_prefix(const char *s, size_t n, const char *word, size_t *used)
{
    size_t w = strlen(word);
    if (n < w)
        return false;
    for (size_t i = 0; i < w; i++) {
        char c = s[i];
        if (c >= 'A' && c <= 'Z')
            c = (char)(c + 32);
        if (c != word[i])
            return false;
    }
    *used = w;
    return true;
}

static bool is_pg_space(char c)
{
    return c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\f' || c == '\v';
}

int num_parse(Arena *a, const char *s, size_t n, SlNumeric *out)
{
    size_t i = 0, used;
    while (i < n && is_pg_space(s[i]))
        i++;
    while (n > i && is_pg_space(s[n - 1]))
        n--;
    bool neg = false;
    if (ci_prefix(s + i, n - i, "nan", &used) && i + used == n) {
        *out = num_zero;
        out->sign = NUM_NAN;
        return 0;
    }
    if (i < n && (s[i] == '+' || s[i] == '-')) {
        neg = s[i] == '-';
        i++;
    }
    if ((ci_prefix(s + i, n - i, "infinity", &used) || ci_prefix(s + i, n - i, "inf", &used)) &&
        i + used == n) {
        *out = num_zero;
        out->sign = neg ? NUM_NINF : NUM_PINF;
        return 0;
    }
    size_t start = i;
    int ndig = 0, frac = 0;
    bool point = false;
    for (; i < n; i++) {
        if (s[i] >= '0' && s[i] <= '9') {
            ndig++;
            if (point)
                frac++;
        } else if (s[i] == '.' && !point) {
            point = true;
        } else {
            break;
        }
    }
    if (ndig == 0)
        return -1;
    size_t digits_end = i;
    long exp = 0;
    if (i < n && (s[i] == 'e' || s[i] == 'E')) {
        i++;
        bool eneg = false;
        if (i < n && (s[i] == '+' || s[i] == '-')) {
            eneg = s[i] == '-';
            i++;
        }
        if (i >= n || s[i] < '0' || s[i] > '9')
            return -1;
        for (; i < n && s[i] >= '0' && s[i] <= '9'; i++) {
            exp = exp * 10 + (s[i] - '0');
            if (exp > 1000)
                return -2; /* NUMERIC_MAX_PRECISION */
        }
        if (eneg)
            exp = -exp;
    }
    if (i != n)
        return -1;
    /* digits * 10^(exp - frac) */
    long scale = frac - exp;
    int total = ndig + (scale < 0 ? (int)-scale : 0);
    uint8_t *mag = arena_alloc(a, (size_t)total + 1);
    int k = 0;
    for (size_t j = start; j < digits_end; j++)
        if (s[j] != '.')
            mag[k++] = (uint8_t)(s[j] - '0');
    for (; k < total; k++)
        mag[k] = 0;
    if (scale < 0)
        scale = 0;
    if (total - scale > NUM_MAX_INT_DIGITS || scale > NUM_MAX_SCALE)
        return -2;
    num_make(a, mag, total, (int)scale, neg, out);
    return 0;
}

void num_format(const SlNumeric *x, StrBuf *out)
{
    switch (x->sign) {
    case NUM_NAN:  strbuf_puts(out, "NaN"); return;
    case NUM_PINF: strbuf_puts(out, "Infinity"); return;
    case NUM_NINF: strbuf_puts(out, "-Infinity"); return;
    default: break;
    }
    if (x->sign == NUM_NEG)
        strbuf_putc(out, '-');
    int nint = x->ndigits - x->scale;
    strbuf_reserve(out, (size_t)(x->ndigits + x->scale + 2));
    if (nint <= 0) {
        strbuf_putc(out, '0');
    } else {
        for (int i = 0; i < nint; i++)
            strbuf_putc(out, (char)('0' + x->digits[i]));
    }
    if (x->scale > 0) {
        strbuf_putc(out, '.');
        for (int i = nint; i < x->ndigits; i++)
            strbuf_putc(out, (char)(i < 0 ? '0' : '0' + x->digits[i]));
    }
}

/* ------------------------------------------------------------ magnitudes */

/* Compares two magnitudes at the same scale given as (digits, n, pad): the
 * value is digits followed by pad zeros. */
int num_mag_cmp_padded(const uint8_t *a, int na, int pada, const uint8_t *b, int nb, int padb)
{
    int la = na + pada, lb = nb + padb;
    if (la != lb)
        return la < lb ? -1 : 1;
    for (int i = 0; i < la; i++) {
        int da = i < na ? a[i] : 0, db = i < nb ? b[i] : 0;
        if (da != db)
            return da < db ? -1 : 1;
    }
    return 0;
}

/* |x| vs |y|, both finite. */
int num_abs_cmp(const SlNumeric *x, const SlNumeric *y)
{
    int s = SL_MAX(x->scale, y->scale);
    if (x->ndigits == 0 || y->ndigits == 0)
        return (x->ndigits != 0) - (y->ndigits != 0);
    return num_mag_cmp_padded(x->digits, x->ndigits, s - x->scale, y->digits, y->ndigits,
                          s - y->scale);
}

int num_cmp(const SlNumeric *x, const SlNumeric *y)
{
    /* order: -Inf < negatives < zero < positives < +Inf < NaN */
    static const int rank[] = {[NUM_POS] = 1, [NUM_NEG] = 1, [NUM_NAN] = 3,
                               [NUM_PINF] = 2, [NUM_NINF] = 0};
    int rx = rank[x->sign], ry = rank[y->sign];
    if (rx != ry)
        return rx < ry ? -1 : 1;
    if (rx != 1)
        return 0;
    int sx = x->ndigits == 0 ? 0 : (x->sign == NUM_NEG ? -1 : 1);
    int sy = y->ndigits == 0 ? 0 : (y->sign == NUM_NEG ? -1 : 1);
    if (sx != sy)
        return sx < sy ? -1 : 1;
    int c = num_abs_cmp(x, y);
    return sx < 0 ? -c : c;
}

void num_set_special(SlNumeric *out, uint8_t sign)
{
    *out = num_zero;
    out->sign = sign;
}

bool num_is_inf(const SlNumeric *x)
{
    return x->sign == NUM_PINF || x->sign == NUM_NINF;
}

/* Strips leading zeros of a finite value's magnitude view. */
int num_first_nonzero(const SlNumeric *x)
{
    int i = 0;
    while (i < x->ndigits && x->digits[i] == 0)
        i++;
    return i;
}

void num_round(Arena *a, const SlNumeric *x, int scale, SlNumeric *out)
{
    if (num_is_special(x) || x->scale <= scale) {
        /* more digits are only display: pad by changing the scale */
        *out = *x;
        if (!num_is_special(x)) {
            int pad = scale - x->scale;
            if (pad > 0 && x->ndigits > 0) {
                uint8_t *m = arena_alloc(a, (size_t)(x->ndigits + pad));
                memcpy(m, x->digits, (size_t)x->ndigits);
                memset(m + x->ndigits, 0, (size_t)pad);
                out->digits = m;
                out->ndigits += pad;
            }
            out->scale = scale;
        }
        return;
    }
    int drop = x->scale - scale;        /* digits to remove from the end */
    int keep = x->ndigits - drop;       /* may be <= 0 */
    int roundup = 0;
    if (keep >= 0 && keep < x->ndigits)
        roundup = x->digits[keep] >= 5;
    int n = keep > 0 ? keep : 0;
    uint8_t *m = sl_malloc((size_t)n + 1);
    m[0] = 0;
    if (n)
        memcpy(m + 1, x->digits, (size_t)n);
    for (int i = n; i >= 0 && roundup; i--) {
        int v = m[i] + 1;
        roundup = v >= 10;
        m[i] = (uint8_t)(v % 10);
    }
    num_make(a, m, n + 1, scale, x->sign == NUM_NEG, out);
    sl_free(m);
}

int num_apply_typmod(Arena *a, const SlNumeric *x, int32_t typmod, SlNumeric *out,
                     SlError *err)
{
    if (typmod < 0) {
        *out = *x;
        return 0;
    }
    int precision = (typmod >> 16) & 0xFFFF;
    int scale = typmod & 0xFFFF;
    if (x->sign == NUM_NAN) {
        *out = *x;
        return 0;
    }
    if (num_is_inf(x)) {
        sl_error(err, ERRCODE_NUMERIC_VALUE_OUT_OF_RANGE, "numeric field overflow");
        sl_error_detail(err, "A field with precision %d, scale %d cannot hold an infinite value.",
                        precision, scale);
        return -1;
    }
    num_round(a, x, scale, out);
    int i = num_first_nonzero(out);
    int intdigits = out->ndigits - i - out->scale;
    if (out->ndigits > i && intdigits > precision - scale) {
        sl_error(err, ERRCODE_NUMERIC_VALUE_OUT_OF_RANGE, "numeric field overflow");
        sl_error_detail(err,
                        "A field with precision %d, scale %d must round to an absolute value "
                        "less than %s%d.",
                        precision, scale, precision - scale == 0 ? "" : "10^",
                        precision - scale == 0 ? 1 : precision - scale);
        return -1;
    }
    return 0;
}

void num_from_int64(Arena *a, int64_t v, SlNumeric *out)
{
    uint8_t buf[24];
    uint64_t u = v < 0 ? (uint64_t)0 - (uint64_t)v : (uint64_t)v;
    int n = 0;
    do {
        buf[23 - n++] = (uint8_t)(u % 10);
        u /= 10;
    } while (u);
    num_make(a, buf + 24 - n, n, 0, v < 0, out);
}

int num_to_int64(const SlNumeric *x, int64_t *out)
{
    if (x->sign == NUM_NAN)
        return -2;
    if (num_is_inf(x))
        return -3;
    int nint = x->ndigits - x->scale;
    uint64_t u = 0;
    for (int i = 0; i < nint; i++) {
        uint64_t d = x->digits[i];
        if (u > (UINT64_MAX - d) / 10)
            return -1;
        u = u * 10 + d;
    }
    if (nint >= 0 && nint < x->ndigits && x->digits[nint] >= 5) {
        if (u == UINT64_MAX)
            return -1;
        u++;
    }
    if (x->sign == NUM_NEG) {
        if (u > (uint64_t)INT64_MAX + 1)
            return -1;
        *out = (int64_t)(0 - u);
    } else {
        if (u > (uint64_t)INT64_MAX)
            return -1;
        *out = (int64_t)u;
    }
    return 0;
}

void num_from_double(Arena *a, double d, int digits, SlNumeric *out)
{
    if (isnan(d)) {
        num_set_special(out, NUM_NAN);
        return;
    }
    if (isinf(d)) {
        num_set_special(out, d > 0 ? NUM_PINF : NUM_NINF);
        return;
    }
    char buf[64];
    snprintf(buf, sizeof(buf), "%.*g", digits, d);
    if (num_parse(a, buf, strlen(buf), out) < 0)
        *out = num_zero;
}

double num_to_double(const SlNumeric *x)
{
    switch (x->sign) {
    case NUM_NAN:  return NAN;
    case NUM_PINF: return INFINITY;
    case NUM_NINF: return -INFINITY;
    default: break;
    }
    StrBuf b;
    strbuf_init(&b);
    num_format(x, &b);
    double d = strtod(b.data, NULL);
    strbuf_free(&b);
    return d;
}
