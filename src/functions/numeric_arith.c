/*
 * numeric_arith.c -- exact decimal arithmetic for NUMERIC, as PostgreSQL
 * 15's numeric.c computes it (see numeric_arith.h).
 *
 *   num_add, num_sub, num_mul, num_div, num_mod, num_neg, num_abs
 *   num_round_to                    rounding or truncation at any scale
 *   num_div_round, num_div_trunc    division at a given scale
 *
 * + and - keep the larger scale, * adds the scales, / picks its scale with
 * select_div_scale() and rounds half away from zero, % truncates; NaN and
 * +-Infinity behave as there.  The magnitudes are types/numeric.c's form
 * (one decimal digit per byte, schoolbook multiply and divide); the helpers
 * the two files share are in types/numeric_int.h.  Results past 131072
 * digits before the point or 16383 after are 22003 "value overflows
 * numeric format".
 */
#include "functions/numeric_arith.h"
#include "types/numeric_int.h"

#include <stdio.h>
#include <stdlib.h>

static const SlNumeric num_zero = {NULL, 0, 0, NUM_POS};


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
    num_make(a, bx, len, s, neg, out);
    sl_free(bx);
    return check_range(out->ndigits, out->scale, err);
}

static int add_signed(Arena *a, const SlNumeric *x, const SlNumeric *y, bool ynegate,
                      SlNumeric *out, SlError *err)
{
    bool xneg = x->sign == NUM_NEG, yneg = (y->sign == NUM_NEG) != ynegate;
    if (xneg == yneg)
        return add_abs(a, x, y, false, xneg, out, err);
    if (num_abs_cmp(x, y) >= 0)
        return add_abs(a, x, y, true, xneg, out, err);
    return add_abs(a, y, x, true, yneg, out, err);
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
            num_set_special(out, NUM_NAN);
        else if (num_is_inf(x) && num_is_inf(y))
            num_set_special(out, x->sign == y->sign ? x->sign : NUM_NAN);
        else
            num_set_special(out, num_is_inf(x) ? x->sign : y->sign);
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
            num_set_special(out, NUM_NAN);
        else
            num_set_special(out, sx * sy > 0 ? NUM_PINF : NUM_NINF);
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
    num_make(a, mag, n, scale, (x->sign == NUM_NEG) != (y->sign == NUM_NEG), out);
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
        while (num_mag_cmp_padded(rem, rl, 0, den, nd, 0) >= 0) {
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

/* The weight and value of a value's first nonzero base-10000 digit, as
 * PostgreSQL's NBASE form would hold it (groups aligned at the point). */
static void nbase_first(const SlNumeric *v, int *w, int *f)
{
    int i = num_first_nonzero(v);
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
            num_make(a, q2, nn, rscale, (x->sign == NUM_NEG) != (y->sign == NUM_NEG), out);
            sl_free(q2);
        } else {
            num_make(a, q, nn - 1, rscale, (x->sign == NUM_NEG) != (y->sign == NUM_NEG), out);
        }
    } else {
        num_make(a, q, nn, rscale, (x->sign == NUM_NEG) != (y->sign == NUM_NEG), out);
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
            num_set_special(out, NUM_NAN);
        } else if (num_is_inf(x)) {
            if (num_is_inf(y))
                num_set_special(out, NUM_NAN);
            else if (signum(y) == 0)
                return div_zero(err);
            else
                num_set_special(out, signum(x) * signum(y) > 0 ? NUM_PINF : NUM_NINF);
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
            num_set_special(out, NUM_NAN);
        else if (num_is_inf(x)) {
            if (signum(y) == 0)
                return div_zero(err);
            num_set_special(out, NUM_NAN);
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
    num_make(a, m, n + 1 + zeros, scale > 0 ? scale : 0, x->sign == NUM_NEG, out);
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
