/*
 * funcs.c -- the operators and functions sluice knows: PostgreSQL's
 * pg_operator and pg_proc rows for the built-in types, cut down.
 *
 *   ex_func_candidates(name, is_op, nargs, out, max)   the rows of a name
 *   ex_func_exists(name, is_op)                        any row of a name
 *
 * Each row is the declared signature the analyzer resolves against (with
 * PostgreSQL's cross-type integer and float operators, so that resolution
 * picks what PostgreSQL picks: int2 + int4 is integer, float4 + numeric is
 * double precision), the types its kernel reads (the analyzer casts the
 * arguments to them), the result type and the kernel.  TYPE__COUNT in a
 * signature stands for PostgreSQL's anynonarray (text || any).
 */
#include "exec/kernels.h"

#define B   TYPE_BOOL
#define I2  TYPE_INT2
#define I4  TYPE_INT4
#define I8  TYPE_INT8
#define F4  TYPE_FLOAT4
#define F8  TYPE_FLOAT8
#define NUM TYPE_NUMERIC
#define TXT TYPE_TEXT
#define ANY TYPE__COUNT
#define IV  TYPE_INTERVAL

#define OP2(nm, a1, a2, k1, k2, r, f) {nm, true, 2, {a1, a2, 0}, {k1, k2, 0}, r, f}
#define OP1(nm, a1, r, f)             {nm, true, 1, {a1, 0, 0}, {a1, 0, 0}, r, f}
#define FN1(nm, a1, r, f)             {nm, false, 1, {a1, 0, 0}, {a1, 0, 0}, r, f}
#define FN2(nm, a1, a2, r, f)         {nm, false, 2, {a1, a2, 0}, {a1, a2, 0}, r, f}

/* + - * / over every numeric type and PostgreSQL's cross-type pairs */
#define ARITH(nm, K)                                                 \
    OP2(nm, I2, I2, I2, I2, I2, k_##K##_int2),                       \
    OP2(nm, I4, I4, I4, I4, I4, k_##K##_int4),                       \
    OP2(nm, I8, I8, I8, I8, I8, k_##K##_int8),                       \
    OP2(nm, I2, I4, I4, I4, I4, k_##K##_int4),                       \
    OP2(nm, I4, I2, I4, I4, I4, k_##K##_int4),                       \
    OP2(nm, I2, I8, I8, I8, I8, k_##K##_int8),                       \
    OP2(nm, I8, I2, I8, I8, I8, k_##K##_int8),                       \
    OP2(nm, I4, I8, I8, I8, I8, k_##K##_int8),                       \
    OP2(nm, I8, I4, I8, I8, I8, k_##K##_int8),                       \
    OP2(nm, F4, F4, F4, F4, F4, k_##K##_float4),                     \
    OP2(nm, F8, F8, F8, F8, F8, k_##K##_float8),                     \
    OP2(nm, F4, F8, F8, F8, F8, k_##K##_float8),                     \
    OP2(nm, F8, F4, F8, F8, F8, k_##K##_float8),                     \
    OP2(nm, NUM, NUM, NUM, NUM, NUM, k_##K##_numeric)

#define CMP(nm, K)                                                   \
    OP2(nm, B, B, B, B, B, k_##K##_boolean),                            \
    OP2(nm, I2, I2, I2, I2, B, k_##K##_int2),                        \
    OP2(nm, I4, I4, I4, I4, B, k_##K##_int4),                        \
    OP2(nm, I8, I8, I8, I8, B, k_##K##_int8),                        \
    OP2(nm, I2, I4, I4, I4, B, k_##K##_int4),                        \
    OP2(nm, I4, I2, I4, I4, B, k_##K##_int4),                        \
    OP2(nm, I2, I8, I8, I8, B, k_##K##_int8),                        \
    OP2(nm, I8, I2, I8, I8, B, k_##K##_int8),                        \
    OP2(nm, I4, I8, I8, I8, B, k_##K##_int8),                        \
    OP2(nm, I8, I4, I8, I8, B, k_##K##_int8),                        \
    OP2(nm, F4, F4, F4, F4, B, k_##K##_float4),                      \
    OP2(nm, F8, F8, F8, F8, B, k_##K##_float8),                      \
    OP2(nm, F4, F8, F8, F8, B, k_##K##_float8),                      \
    OP2(nm, F8, F4, F8, F8, B, k_##K##_float8),                      \
    OP2(nm, NUM, NUM, NUM, NUM, B, k_##K##_numeric),                 \
    OP2(nm, TXT, TXT, TXT, TXT, B, k_##K##_text)

#define SIGNED(M, nm, K)                                             \
    M(nm, I2, I2, k_##K##_int2), M(nm, I4, I4, k_##K##_int4),        \
    M(nm, I8, I8, k_##K##_int8), M(nm, F4, F4, k_##K##_float4),      \
    M(nm, F8, F8, k_##K##_float8), M(nm, NUM, NUM, k_##K##_numeric)

static const FuncDesc func_table[] = {
    ARITH("+", add),
    ARITH("-", sub),
    ARITH("*", mul),
    ARITH("/", div),
    /* interval arithmetic: not computed yet, but present so that resolution
     * sees what PostgreSQL sees ('1' + '2' is ambiguous there) */
    OP2("+", IV, IV, IV, IV, IV, k_unsupported),
    OP2("-", IV, IV, IV, IV, IV, k_unsupported),
    OP2("*", IV, F8, IV, F8, IV, k_unsupported),
    OP2("/", IV, F8, IV, F8, IV, k_unsupported),
    OP1("-", IV, IV, k_unsupported),
    OP2("%", I2, I2, I2, I2, I2, k_mod_int2),
    OP2("%", I4, I4, I4, I4, I4, k_mod_int4),
    OP2("%", I8, I8, I8, I8, I8, k_mod_int8),
    OP2("%", NUM, NUM, NUM, NUM, NUM, k_mod_numeric),
    OP2("^", F8, F8, F8, F8, F8, k_pow_float8),
    OP2("^", NUM, NUM, NUM, NUM, NUM, k_pow_numeric),
    SIGNED(OP1, "-", neg),
    OP1("+", I2, I2, k_identity), OP1("+", I4, I4, k_identity),
    OP1("+", I8, I8, k_identity), OP1("+", F4, F4, k_identity),
    OP1("+", F8, F8, k_identity), OP1("+", NUM, NUM, k_identity),
    SIGNED(OP1, "@", abs),
    CMP("=", eq),
    CMP("<>", ne),
    CMP("<", lt),
    CMP("<=", le),
    CMP(">", gt),
    CMP(">=", ge),
    OP2("||", TXT, TXT, TXT, TXT, TXT, k_textcat),
    OP2("||", ANY, TXT, TXT, TXT, TXT, k_textcat),
    OP2("||", TXT, ANY, TXT, TXT, TXT, k_textcat),
    OP2("~~", TXT, TXT, TXT, TXT, B, k_like),
    OP2("!~~", TXT, TXT, TXT, TXT, B, k_notlike),
    OP2("~~*", TXT, TXT, TXT, TXT, B, k_ilike),
    OP2("!~~*", TXT, TXT, TXT, TXT, B, k_notilike),

    SIGNED(FN1, "abs", abs),
    FN1("length", TXT, I4, k_length),
    FN1("char_length", TXT, I4, k_length),
    FN1("character_length", TXT, I4, k_length),
    FN1("octet_length", TXT, I4, k_octet_length),
    FN1("upper", TXT, TXT, k_upper),
    FN1("lower", TXT, TXT, k_lower),
    FN2("mod", I2, I2, I2, k_mod_int2),
    FN2("mod", I4, I4, I4, k_mod_int4),
    FN2("mod", I8, I8, I8, k_mod_int8),
    FN2("mod", NUM, NUM, NUM, k_mod_numeric),
    FN1("sqrt", F8, F8, k_sqrt_float8),
    FN1("floor", F8, F8, k_floor_float8),
    FN1("ceil", F8, F8, k_ceil_float8),
    FN1("ceiling", F8, F8, k_ceil_float8),
    FN1("round", F8, F8, k_round_float8),
    FN1("round", NUM, NUM, k_round_numeric),
    FN2("round", NUM, I4, NUM, k_round_numeric_int4),
    FN2("power", F8, F8, F8, k_pow_float8),
    FN2("pow", F8, F8, F8, k_pow_float8),
    FN2("power", NUM, NUM, NUM, k_pow_numeric),
    FN2("pow", NUM, NUM, NUM, k_pow_numeric),
    /* LIKE ... ESCAPE: internal names, never resolved from SQL text */
    {"like escape", false, 3, {TXT, TXT, TXT}, {TXT, TXT, TXT}, B, k_like_esc},
    {"ilike escape", false, 3, {TXT, TXT, TXT}, {TXT, TXT, TXT}, B, k_ilike_esc},
};

int ex_func_candidates(const char *name, bool is_op, int nargs, const FuncDesc **out, int max)
{
    int n = 0;
    for (size_t i = 0; i < SL_ARRAY_LEN(func_table); i++) {
        const FuncDesc *f = &func_table[i];
        if (f->is_op == is_op && f->nargs == nargs && strcmp(f->name, name) == 0 && n < max)
            out[n++] = f;
    }
    return n;
}

bool ex_func_exists(const char *name, bool is_op)
{
    for (size_t i = 0; i < SL_ARRAY_LEN(func_table); i++) {
        const FuncDesc *f = &func_table[i];
        if (f->is_op == is_op && strcmp(f->name, name) == 0)
            return true;
    }
    return false;
}
