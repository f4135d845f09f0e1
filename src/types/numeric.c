/*
 * numeric.c -- exact decimal arithmetic for NUMERIC (see numeric.h).
 *
 *   num_parse, num_format                     text in and out
 *   num_cmp, num_add, num_sub, num_mul,
 *   num_div, num_mod, num_neg, num_abs        arithmetic
 *   num_round, num_round_to, num_apply_typmod rounding (num_round_to: any
 *                                             scale, or truncation)
 *   num_div_round, num_div_trunc              division at a given scale
 *   num_from_int64, num_to_int64,
 *   num_from_double, num_to_double            conversions
 *
 * A value is a magnitude of decimal digits (one byte each) and a scale.  The
 * magnitude routines (mag_*) work on plain digit arrays, most significant
 * first, in a heap scratch buffer or the result arena.  This is the simple
 * schoolbook form: quadratic multiply and divide, fine for the tens of digits
 * SQL values have.  A base-10000 form (PostgreSQL's NBASE) can replace it
 * behind the same interface when numeric throughput matters.
 */
#include "types/numeric.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>

static const SlNumeric num_zero = {NULL, 0, 0, NUM_POS};

bool num_is_special(const SlNumeric *x)
{
    return x->sign >= NUM_NAN;
}

/* Makes a value from a magnitude (may have leading zeros) in the arena. */
static void make_num(Arena *a, const uint8_t *mag, int n, int scale, bool neg, SlNumeric *out)
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

static int overflow(SlError *err)
{
    return sl_error(err, ERRCODE_NUMERIC_VALUE_OUT_OF_RANGE, "value overflows numeric format");
}

static int check_range(int ndigits, int scale, SlError *err)
{
    if (ndigits - scale > NUM_MAX_INT_DIGITS || scale > NUM_MAX_SCALE)
        return overflow(err);
    return 0;
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
    make_num(a, mag, total, (int)scale, neg, out);
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
static int mag_cmp_padded(const uint8_t *a, int na, int pada, const uint8_t *b, int nb, int padb)
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
static int abs_cmp(const SlNumeric *x, const SlNumeric *y)
{
    int s = SL_MAX(x->scale, y->scale);
    if (x->ndigits == 0 || y->ndigits == 0)
        return (x->ndigits != 0) - (y->ndigits != 0);
    return mag_cmp_padded(x->digits, x->ndigits, s - x->scale, y->digits, y->ndigits,
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
    int c = abs_cmp(x, y);
    return sx < 0 ? -c : c;
}

/* Writes x's magnitude at scale s into buf[0..len): right-aligned. */
static void mag_at_scale(const SlNumeric *x, int s, uint8_t *buf, int len)
{
    int pad = s - x->scale;
    int n = x->ndigits + pad;
    memset(buf, 0, (size_t)len);
    for (int i = 0; i < x->ndigits; i++)
        buf[len - n + i] = x->digits[i];
}

/* |x| + |y| or |x| - |y| (|x| >= |y|) with sign neg. */
static int add_abs(Arena *a, const SlNumeric *x, const SlNumeric *y, bool subtract, bool neg,
                   SlNumeric *out, SlError *err)
{
    int s = SL_MAX(x->scale, y->scale);
    int ix = x->ndigits - x->scale, iy = y->ndigits - y->scale;
    int len = SL_MAX(ix, iy) + s + 1;
    if (len < 1)
        len = 1;
    uint8_t *bx = sl_malloc((size_t)len * 2);
    uint8_t *by = bx + len;
    mag_at_scale(x, s, bx, len);
    mag_at_scale(y, s, by, len);
    int carry = 0;
    for (int i = len - 1; i >= 0; i--) {
        int d = subtract ? bx[i] - by[i] - carry : bx[i] + by[i] + carry;
        if (subtract) {
            carry = d < 0;
            if (d < 0)
                d += 10;
        } else {
            carry = d >= 10;
            if (d >= 10)
                d -= 10;
        }
        bx[i] = (uint8_t)d;
    }
    make_num(a, bx, len, s, neg, out);
    sl_free(bx);
    return check_range(out->ndigits, out->scale, err);
}

static int add_signed(Arena *a, const SlNumeric *x, const SlNumeric *y, bool ynegate,
                      SlNumeric *out, SlError *err)
{
    bool xneg = x->sign == NUM_NEG, yneg = (y->sign == NUM_NEG) != ynegate;
    if (xneg == yneg)
        return add_abs(a, x, y, false, xneg, out, err);
    if (abs_cmp(x, y) >= 0)
        return add_abs(a, x, y, true, xneg, out, err);
    return add_abs(a, y, x, true, yneg, out, err);
}

static void set_special(SlNumeric *out, uint8_t sign)
{
    *out = num_zero;
    out->sign = sign;
}

static bool is_inf(const SlNumeric *x)
{
    return x->sign == NUM_PINF || x->sign == NUM_NINF;
}

/* The sign of a finite or infinite value: -1, 0, 1. */
static int signum(const SlNumeric *x)
{
    if (x->sign == NUM_PINF)
        return 1;
    if (x->sign == NUM_NINF)
        return -1;
    if (x->ndigits == 0)
        return 0;
    return x->sign == NUM_NEG ? -1 : 1;
}

int num_add(Arena *a, const SlNumeric *x, const SlNumeric *y, SlNumeric *out, SlError *err)
{
    if (num_is_special(x) || num_is_special(y)) {
        if (x->sign == NUM_NAN || y->sign == NUM_NAN)
            set_special(out, NUM_NAN);
        else if (is_inf(x) && is_inf(y))
            set_special(out, x->sign == y->sign ? x->sign : NUM_NAN);
        else
            set_special(out, is_inf(x) ? x->sign : y->sign);
        return 0;
    }
    return add_signed(a, x, y, false, out, err);
}

int num_sub(Arena *a, const SlNumeric *x, const SlNumeric *y, SlNumeric *out, SlError *err)
{
    if (num_is_special(x) || num_is_special(y)) {
        SlNumeric ny;
        num_neg(y, &ny);
        return num_add(a, x, &ny, out, err);
    }
    return add_signed(a, x, y, true, out, err);
}

int num_mul(Arena *a, const SlNumeric *x, const SlNumeric *y, SlNumeric *out, SlError *err)
{
    if (num_is_special(x) || num_is_special(y)) {
        int sx = signum(x), sy = signum(y);
        if (x->sign == NUM_NAN || y->sign == NUM_NAN || sx == 0 || sy == 0)
            set_special(out, NUM_NAN);
        else
            set_special(out, sx * sy > 0 ? NUM_PINF : NUM_NINF);
        return 0;
    }
    int scale = x->scale + y->scale;
    if (x->ndigits == 0 || y->ndigits == 0) {
        *out = num_zero;
        out->scale = scale;
        return check_range(0, scale, err);
    }
    int n = x->ndigits + y->ndigits;
    if (n - scale > NUM_MAX_INT_DIGITS + 2 || scale > NUM_MAX_SCALE)
        return overflow(err);
    /* multiply in base 10^4 limbs (least significant first), summing the
     * products in 64 bits and carrying once at the end */
    int lx = (x->ndigits + 3) / 4, ly = (y->ndigits + 3) / 4;
    uint32_t *limbs = sl_malloc(sizeof(uint32_t) * (size_t)(lx + ly));
    uint32_t *ax = limbs, *ay = limbs + lx;
    for (int pass = 0; pass < 2; pass++) {
        const SlNumeric *v = pass ? y : x;
        uint32_t *dst = pass ? ay : ax;
        int nl = pass ? ly : lx;
        for (int l = 0; l < nl; l++) {
            uint32_t limb = 0;
            for (int d = 3; d >= 0; d--) {
                int idx = v->ndigits - 1 - (l * 4 + d);
                limb = limb * 10 + (idx >= 0 ? v->digits[idx] : 0);
            }
            dst[l] = limb;
        }
    }
    uint64_t *acc = sl_calloc((size_t)(lx + ly + 1), sizeof(uint64_t));
    for (int i = 0; i < lx; i++) {
        uint64_t xi = ax[i];
        if (xi == 0)
            continue;
        for (int j = 0; j < ly; j++)
            acc[i + j] += xi * ay[j];
    }
    for (int k = 0; k < lx + ly; k++) {
        acc[k + 1] += acc[k] / 10000;
        acc[k] %= 10000;
    }
    int nd = (lx + ly) * 4;
    uint8_t *mag = sl_malloc((size_t)nd);
    for (int k = 0; k < lx + ly; k++) {
        uint32_t limb = (uint32_t)acc[k];
        for (int d = 0; d < 4; d++) {
            mag[nd - 1 - (k * 4 + d)] = (uint8_t)(limb % 10);
            limb /= 10;
        }
    }
    sl_free(limbs);
    n = nd;
    make_num(a, mag, n, scale, (x->sign == NUM_NEG) != (y->sign == NUM_NEG), out);
    sl_free(acc);
    sl_free(mag);
    return check_range(out->ndigits, out->scale, err);
}

/* Truncated integer division of magnitudes: N / D -> q (n digits, caller's
 * buffer of nn digits) and the remainder in rem (nd + 1 digits). */
static void mag_divmod(const uint8_t *num, int nn, const uint8_t *den, int nd, uint8_t *q,
                       uint8_t *rem, int *nrem)
{
    int rl = 0; /* remainder length, no leading zeros */
    for (int i = 0; i < nn; i++) {
        /* rem = rem * 10 + num[i] */
        if (rl > 0 || num[i] != 0)
            rem[rl++] = num[i];
        int d = 0;
        while (mag_cmp_padded(rem, rl, 0, den, nd, 0) >= 0) {
            /* rem -= den */
            int borrow = 0;
            for (int k = rl - 1, m = nd - 1; k >= 0; k--, m--) {
                int v = rem[k] - (m >= 0 ? den[m] : 0) - borrow;
                borrow = v < 0;
                rem[k] = (uint8_t)(v < 0 ? v + 10 : v);
            }
            int z = 0;
            while (z < rl && rem[z] == 0)
                z++;
            memmove(rem, rem + z, (size_t)(rl - z));
            rl -= z;
            d++;
        }
        q[i] = (uint8_t)d;
    }
    *nrem = rl;
}

/* Strips leading zeros of a finite value's magnitude view. */
static int first_nonzero(const SlNumeric *x)
{
    int i = 0;
    while (i < x->ndigits && x->digits[i] == 0)
        i++;
    return i;
}

/* The weight and value of a value's first nonzero base-10000 digit, as
 * PostgreSQL's NBASE form would hold it (groups aligned at the point). */
static void nbase_first(const SlNumeric *v, int *w, int *f)
{
    int i = first_nonzero(v);
    *w = 0;
    *f = 0;
    if (i >= v->ndigits)
        return;
    int top = v->ndigits - v->scale - 1; /* decimal exponent of digits[0] */
    int e = top - i;
    int wt = e >= 0 ? e / 4 : -((-e + 3) / 4);
    int val = 0;
    for (int k = i; k < v->ndigits; k++) {
        int ek = top - k;
        if (ek < 4 * wt)
            break;
        int pw = 1;
        for (int t = 0; t < ek - 4 * wt; t++)
            pw *= 10;
        val += v->digits[k] * pw;
    }
    *w = wt;
    *f = val;
}

/* PostgreSQL's select_div_scale(): the quotient gets at least 16
 * significant digits, and no fewer fraction digits than either input. */
static int div_scale(const SlNumeric *x, const SlNumeric *y)
{
    int w1, f1, w2, f2;
    nbase_first(x, &w1, &f1);
    nbase_first(y, &w2, &f2);
    int qweight = w1 - w2;
    if (f1 <= f2)
        qweight--;
    int rscale = 16 - qweight * 4;
    rscale = SL_MAX(rscale, x->scale);
    rscale = SL_MAX(rscale, y->scale);
    rscale = SL_MAX(rscale, 0);
    rscale = SL_MIN(rscale, 1000);
    return rscale;
}

/* x / y truncated (round = false) or rounded half away from zero to rscale
 * fraction digits. */
static int div_to_scale(Arena *a, const SlNumeric *x, const SlNumeric *y, int rscale,
                        bool round, SlNumeric *out, SlError *err)
{
    int extra = round ? 1 : 0;
    /* Q = X*10^(sy + rscale + extra) / (Y*10^sx) */
    int shift = y->scale + rscale + extra - x->scale;
    int nn = x->ndigits + (shift > 0 ? shift : 0);
    int nd = y->ndigits + (shift < 0 ? -shift : 0);
    if (nn - rscale > NUM_MAX_INT_DIGITS + 8)
        return overflow(err);
    if ((double)nn * (double)nd > 2e8)
        return sl_error(err, ERRCODE_FEATURE_NOT_SUPPORTED,
                        "numeric division of values this long is not supported yet");
    uint8_t *buf = sl_calloc((size_t)(nn + nd + nn + nd + 2), 1);
    uint8_t *num = buf, *den = buf + nn, *q = den + nd, *rem = q + nn;
    if (x->ndigits)
        memcpy(num, x->digits, (size_t)x->ndigits);
    if (y->ndigits)
        memcpy(den, y->digits, (size_t)y->ndigits);
    int fd = 0;
    while (fd < nd && den[fd] == 0)
        fd++;
    int nrem;
    mag_divmod(num, nn, den + fd, nd - fd, q, rem, &nrem);
    if (round) {
        /* drop the guard digit, rounding half up on the magnitude */
        int last = q[nn - 1];
        int carry = last >= 5;
        for (int i = nn - 2; i >= 0 && carry; i--) {
            int v = q[i] + 1;
            carry = v >= 10;
            q[i] = (uint8_t)(v % 10);
        }
        if (carry) {
            /* all nines: one more digit in front */
            uint8_t *q2 = sl_malloc((size_t)nn);
            q2[0] = 1;
            if (nn > 1)
                memcpy(q2 + 1, q, (size_t)(nn - 1));
            make_num(a, q2, nn, rscale, (x->sign == NUM_NEG) != (y->sign == NUM_NEG), out);
            sl_free(q2);
        } else {
            make_num(a, q, nn - 1, rscale, (x->sign == NUM_NEG) != (y->sign == NUM_NEG), out);
        }
    } else {
        make_num(a, q, nn, rscale, (x->sign == NUM_NEG) != (y->sign == NUM_NEG), out);
    }
    sl_free(buf);
    return check_range(out->ndigits, out->scale, err);
}

static int div_zero(SlError *err)
{
    return sl_error(err, ERRCODE_DIVISION_BY_ZERO, "division by zero");
}

int num_div(Arena *a, const SlNumeric *x, const SlNumeric *y, SlNumeric *out, SlError *err)
{
    if (num_is_special(x) || num_is_special(y)) {
        if (x->sign == NUM_NAN || y->sign == NUM_NAN) {
            set_special(out, NUM_NAN);
        } else if (is_inf(x)) {
            if (is_inf(y))
                set_special(out, NUM_NAN);
            else if (signum(y) == 0)
                return div_zero(err);
            else
                set_special(out, signum(x) * signum(y) > 0 ? NUM_PINF : NUM_NINF);
        } else {
            /* finite / infinity */
            *out = num_zero;
        }
        return 0;
    }
    if (signum(y) == 0)
        return div_zero(err);
    return div_to_scale(a, x, y, div_scale(x, y), true, out, err);
}

int num_mod(Arena *a, const SlNumeric *x, const SlNumeric *y, SlNumeric *out, SlError *err)
{
    if (num_is_special(x) || num_is_special(y)) {
        if (x->sign == NUM_NAN || y->sign == NUM_NAN)
            set_special(out, NUM_NAN);
        else if (is_inf(x)) {
            if (signum(y) == 0)
                return div_zero(err);
            set_special(out, NUM_NAN);
        } else {
            *out = *x; /* finite % infinity = the finite value */
        }
        return 0;
    }
    if (signum(y) == 0)
        return div_zero(err);
    SlNumeric q, qy;
    if (div_to_scale(a, x, y, 0, false, &q, err) < 0 || num_mul(a, &q, y, &qy, err) < 0)
        return -1;
    if (num_sub(a, x, &qy, out, err) < 0)
        return -1;
    out->scale = SL_MAX(x->scale, y->scale);
    if (out->ndigits == 0)
        out->sign = NUM_POS;
    return 0;
}

void num_neg(const SlNumeric *x, SlNumeric *out)
{
    *out = *x;
    switch (x->sign) {
    case NUM_POS:  out->sign = x->ndigits ? NUM_NEG : NUM_POS; break;
    case NUM_NEG:  out->sign = NUM_POS; break;
    case NUM_PINF: out->sign = NUM_NINF; break;
    case NUM_NINF: out->sign = NUM_PINF; break;
    default: break;
    }
}

void num_abs(const SlNumeric *x, SlNumeric *out)
{
    *out = *x;
    if (x->sign == NUM_NEG)
        out->sign = NUM_POS;
    else if (x->sign == NUM_NINF)
        out->sign = NUM_PINF;
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
    make_num(a, m, n + 1, scale, x->sign == NUM_NEG, out);
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
    if (is_inf(x)) {
        sl_error(err, ERRCODE_NUMERIC_VALUE_OUT_OF_RANGE, "numeric field overflow");
        sl_error_detail(err, "A field with precision %d, scale %d cannot hold an infinite value.",
                        precision, scale);
        return -1;
    }
    num_round(a, x, scale, out);
    int i = first_nonzero(out);
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
    make_num(a, buf + 24 - n, n, 0, v < 0, out);
}

int num_to_int64(const SlNumeric *x, int64_t *out)
{
    if (x->sign == NUM_NAN)
        return -2;
    if (is_inf(x))
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
        set_special(out, NUM_NAN);
        return;
    }
    if (isinf(d)) {
        set_special(out, d > 0 ? NUM_PINF : NUM_NINF);
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

/* Rounds (half away from zero) or truncates x at 10^-scale; scale may be
 * negative (round(1234.5, -2) is 1200).  The display scale is max(scale, 0),
 * as PostgreSQL's round_var / trunc_var leave it. */
void num_round_to(Arena *a, const SlNumeric *x, int scale, bool trunc, SlNumeric *out)
{
    if (num_is_special(x)) {
        *out = *x;
        return;
    }
    if (scale >= 0 && !trunc) {
        num_round(a, x, scale, out);
        return;
    }
    int drop = x->scale - scale;        /* digits to remove from the end */
    if (drop <= 0) {
        num_round(a, x, scale, out);    /* only pads */
        return;
    }
    int keep = x->ndigits - drop;
    int roundup = !trunc && keep >= 0 && keep < x->ndigits && x->digits[keep] >= 5;
    int n = keep > 0 ? keep : 0;
    int zeros = scale < 0 ? -scale : 0;
    uint8_t *m = sl_malloc((size_t)n + (size_t)zeros + 1);
    m[0] = 0;
    if (n)
        memcpy(m + 1, x->digits, (size_t)n);
    for (int i = n; i >= 0 && roundup; i--) {
        int v = m[i] + 1;
        roundup = v >= 10;
        m[i] = (uint8_t)(v % 10);
    }
    memset(m + n + 1, 0, (size_t)zeros);
    make_num(a, m, n + 1 + zeros, scale > 0 ? scale : 0, x->sign == NUM_NEG, out);
    sl_free(m);
}

int num_div_trunc(Arena *a, const SlNumeric *x, const SlNumeric *y, SlNumeric *out,
                  SlError *err)
{
    if (signum(y) == 0)
        return div_zero(err);
    return div_to_scale(a, x, y, 0, false, out, err);
}

int num_div_round(Arena *a, const SlNumeric *x, const SlNumeric *y, int rscale, SlNumeric *out,
                  SlError *err)
{
    if (signum(y) == 0)
        return div_zero(err);
    return div_to_scale(a, x, y, rscale, true, out, err);
}
