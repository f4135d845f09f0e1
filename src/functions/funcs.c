/*
 * funcs.c -- the operators and functions sluice knows: PostgreSQL's
 * pg_operator and pg_proc rows for the built-in types, cut down.
 *
 *   ex_func_candidates(name, is_op, nargs, out, max)   the rows of a name
 *   ex_func_exists(name, is_op)                        any row of a name
 *   ex_func_variadic(name)                             a VARIADIC function
 *   ex_func_register(table, n)    more rows (the runtime's catalog functions)
 *   ex_func_register_loop, ex_func_on_loop   the same, for functions whose
 *                                 statements must run on the loop thread
 *   ex_func_volatile(fd)          pg_proc.provolatile 'v'
 *   ex_func_at(i)                 the i-th row of all tables (pg_proc), or NULL
 *   ex_func_srf(fd)               how a set-returning function runs
 *
 * Each row is the declared signature the analyzer resolves against (with
 * PostgreSQL's cross-type integer and float operators, so that resolution
 * picks what PostgreSQL picks: int2 + int4 is integer, float4 + numeric is
 * double precision), the types its kernel reads (the analyzer casts the
 * arguments to them), the result type and the kernel.  TYPE__COUNT in a
 * signature stands for PostgreSQL's anynonarray (text || any).
 */
#include "functions/kernels.h"

#include <pthread.h>
#include <stdlib.h>

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
#define D   TYPE_DATE
#define TS  TYPE_TIMESTAMP
#define TSZ TYPE_TIMESTAMPTZ
#define BY  TYPE_BYTEA
#define JB  TYPE_JSONB
#define UUID TYPE_UUID

#define OP2(nm, a1, a2, k1, k2, r, f) {nm, true, 2, {a1, a2, 0}, {k1, k2, 0}, r, f, 0}
#define OP1(nm, a1, r, f)             {nm, true, 1, {a1, 0, 0}, {a1, 0, 0}, r, f, 0}
#define FN1(nm, a1, r, f)             {nm, false, 1, {a1, 0, 0}, {a1, 0, 0}, r, f, 0}
#define FN2(nm, a1, a2, r, f)         {nm, false, 2, {a1, a2, 0}, {a1, a2, 0}, r, f, 0}
#define FN0(nm, r, f)                 {nm, false, 0, {0, 0, 0}, {0, 0, 0}, r, f, 0}
#define FN3(nm, a1, a2, a3, r, f)     {nm, false, 3, {a1, a2, a3}, {a1, a2, a3}, r, f, 0}
#define FN4(nm, a1, a2, a3, a4, r, f)                                \
    {nm, false, 4, {a1, a2, a3, a4}, {a1, a2, a3, a4}, r, f, 0}
#define FN5(nm, a1, a2, a3, a4, a5, r, f)                            \
    {nm, false, 5, {a1, a2, a3, a4, a5}, {a1, a2, a3, a4, a5}, r, f, 0}
#define FN6(nm, a1, a2, a3, a4, a5, a6, r, f)                        \
    {nm, false, 6, {a1, a2, a3, a4, a5, a6}, {a1, a2, a3, a4, a5, a6}, r, f, 0}
#define FN7(nm, a1, a2, a3, a4, a5, a6, a7, r, f)                    \
    {nm, false, 7, {a1, a2, a3, a4, a5, a6, a7}, {a1, a2, a3, a4, a5, a6, a7}, r, f, 0}

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

/* comparisons of the types whose values compare as another's: dates as
 * int4, timestamps as int8, bytea and uuid as text bytes (uuid_cmp is a
 * memcmp); character(n) without its trailing spaces; interval and jsonb */
#define CMP_AS(nm, K)                                                \
    OP2(nm, D, D, D, D, B, k_##K##_int4),                            \
    OP2(nm, TS, TS, TS, TS, B, k_##K##_int8),                        \
    OP2(nm, TSZ, TSZ, TSZ, TSZ, B, k_##K##_int8),                    \
    OP2(nm, IV, IV, IV, IV, B, k_##K##_interval),                    \
    OP2(nm, BY, BY, BY, BY, B, k_##K##_text),                        \
    OP2(nm, JB, JB, JB, JB, B, k_##K##_jsonb),                       \
    OP2(nm, UUID, UUID, UUID, UUID, B, k_##K##_text),                  \
    OP2(nm, TYPE_BPCHAR, TYPE_BPCHAR, TYPE_BPCHAR, TYPE_BPCHAR, B, k_##K##_bpchar)

#define SIGNED(M, nm, K)                                             \
    M(nm, I2, I2, k_##K##_int2), M(nm, I4, I4, k_##K##_int4),        \
    M(nm, I8, I8, k_##K##_int8), M(nm, F4, F4, k_##K##_float4),      \
    M(nm, F8, F8, k_##K##_float8), M(nm, NUM, NUM, k_##K##_numeric)

static const FuncDesc func_table[] = {
    ARITH("+", add),
    ARITH("-", sub),
    ARITH("*", mul),
    ARITH("/", div),
    /* date, timestamp and interval arithmetic (timefuncs.c) */
    OP2("+", IV, IV, IV, IV, IV, k_iv_pl),
    OP2("-", IV, IV, IV, IV, IV, k_iv_mi),
    OP2("*", IV, F8, IV, F8, IV, k_iv_mul),
    OP2("*", F8, IV, F8, IV, IV, k_mul_iv),
    OP2("/", IV, F8, IV, F8, IV, k_iv_div),
    OP1("-", IV, IV, k_iv_um),
    OP2("+", D, I4, D, I4, D, k_date_pli),
    OP2("+", I4, D, I4, D, D, k_int_pl_date),
    OP2("-", D, I4, D, I4, D, k_date_mii),
    OP2("-", D, D, D, D, I4, k_date_mi),
    OP2("+", D, IV, D, IV, TS, k_date_pl_iv),
    OP2("+", IV, D, IV, D, TS, k_iv_pl_date),
    OP2("-", D, IV, D, IV, TS, k_date_mi_iv),
    OP2("+", TS, IV, TS, IV, TS, k_ts_pl_iv),
    OP2("+", IV, TS, IV, TS, TS, k_iv_pl_ts),
    OP2("-", TS, IV, TS, IV, TS, k_ts_mi_iv),
    OP2("-", TS, TS, TS, TS, IV, k_ts_mi),
    OP2("+", TSZ, IV, TSZ, IV, TSZ, k_ts_pl_iv),
    OP2("+", IV, TSZ, IV, TSZ, TSZ, k_iv_pl_ts),
    OP2("-", TSZ, IV, TSZ, IV, TSZ, k_ts_mi_iv),
    OP2("-", TSZ, TSZ, TSZ, TSZ, IV, k_ts_mi),
    OP2("%", I2, I2, I2, I2, I2, k_mod_int2),
    OP2("%", I4, I4, I4, I4, I4, k_mod_int4),
    OP2("%", I8, I8, I8, I8, I8, k_mod_int8),
    OP2("%", NUM, NUM, NUM, NUM, NUM, k_mod_numeric),
    OP2("^", F8, F8, F8, F8, F8, k_pow_float8),
    OP2("^", NUM, NUM, NUM, NUM, NUM, k_pow_numeric_pg),
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
    CMP_AS("=", eq), CMP_AS("<>", ne), CMP_AS("<", lt),
    CMP_AS("<=", le), CMP_AS(">", gt), CMP_AS(">=", ge),
    OP2("||", TXT, TXT, TXT, TXT, TXT, k_textcat),
    OP2("||", BY, BY, BY, BY, BY, k_textcat),
    OP2("||", ANY, TXT, TXT, TXT, TXT, k_textcat),
    OP2("||", TXT, ANY, TXT, TXT, TXT, k_textcat),
    OP2("~~", TXT, TXT, TXT, TXT, B, k_like),
    OP2("~", TXT, TXT, TXT, TXT, B, k_regex_match),
    OP2("!~", TXT, TXT, TXT, TXT, B, k_regex_nomatch),
    OP2("~*", TXT, TXT, TXT, TXT, B, k_regex_imatch),
    OP2("!~*", TXT, TXT, TXT, TXT, B, k_regex_inomatch),
    OP2("!~~", TXT, TXT, TXT, TXT, B, k_notlike),
    OP2("~~*", TXT, TXT, TXT, TXT, B, k_ilike),
    OP2("!~~*", TXT, TXT, TXT, TXT, B, k_notilike),
    /* bpcharlike and friends: the padded value */
    OP2("~~", TYPE_BPCHAR, TXT, TYPE_BPCHAR, TXT, B, k_like),
    OP2("!~~", TYPE_BPCHAR, TXT, TYPE_BPCHAR, TXT, B, k_notlike),
    OP2("~~*", TYPE_BPCHAR, TXT, TYPE_BPCHAR, TXT, B, k_ilike),
    OP2("!~~*", TYPE_BPCHAR, TXT, TYPE_BPCHAR, TXT, B, k_notilike),

    SIGNED(FN1, "abs", abs),
    FN1("length", TXT, I4, k_length),
    FN1("char_length", TXT, I4, k_length),
    FN1("character_length", TXT, I4, k_length),
    FN1("octet_length", TXT, I4, k_octet_length),
    FN1("bit_length", TXT, I4, k_bit_length),
    FN1("bit_length", BY, I4, k_bit_length),
    FN1("octet_length", TYPE_BPCHAR, I4, k_octet_length),   /* with its padding */
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
    FN2("round", NUM, I4, NUM, k_round_numeric_any),
    FN2("power", F8, F8, F8, k_pow_float8),
    FN2("pow", F8, F8, F8, k_pow_float8),
    FN2("power", NUM, NUM, NUM, k_pow_numeric_pg),
    FN2("pow", NUM, NUM, NUM, k_pow_numeric_pg),

    /* math (mathfuncs.c) */
    FN1("trunc", F8, F8, k_trunc_float8),
    FN1("trunc", NUM, NUM, k_trunc_numeric),
    FN2("trunc", NUM, I4, NUM, k_trunc_numeric_int4),
    FN1("floor", NUM, NUM, k_floor_numeric),
    FN1("ceil", NUM, NUM, k_ceil_numeric),
    FN1("ceiling", NUM, NUM, k_ceil_numeric),
    FN1("sign", F8, F8, k_sign_float8),
    FN1("sign", NUM, NUM, k_sign_numeric),
    FN1("sqrt", NUM, NUM, k_sqrt_numeric),
    FN1("exp", F8, F8, k_exp_float8),
    FN1("exp", NUM, NUM, k_exp_numeric),
    FN1("ln", F8, F8, k_ln_float8),
    FN1("ln", NUM, NUM, k_ln_numeric),
    FN1("log", F8, F8, k_log10_float8),
    FN1("log", NUM, NUM, k_log10_numeric),
    FN2("log", NUM, NUM, NUM, k_log_numeric2),
    FN1("log10", F8, F8, k_log10_float8),
    FN1("log10", NUM, NUM, k_log10_numeric),
    FN1("cbrt", F8, F8, k_cbrt_float8),
    FN0("pi", F8, k_pi),
    FN1("degrees", F8, F8, k_degrees_float8),
    FN1("radians", F8, F8, k_radians_float8),
    FN0("random", F8, k_random),
    FN1("sin", F8, F8, k_sin_float8),
    FN1("cos", F8, F8, k_cos_float8),
    FN1("tan", F8, F8, k_tan_float8),
    FN1("asin", F8, F8, k_asin_float8),
    FN1("acos", F8, F8, k_acos_float8),
    FN1("atan", F8, F8, k_atan_float8),
    FN2("atan2", F8, F8, F8, k_atan2_float8),
    FN2("div", NUM, NUM, NUM, k_div_numeric_trunc),
    FN2("gcd", I4, I4, I4, k_gcd_int4),
    FN2("gcd", I8, I8, I8, k_gcd_int8),
    FN2("lcm", I4, I4, I4, k_lcm_int4),
    FN2("lcm", I8, I8, I8, k_lcm_int8),
    OP1("|/", F8, F8, k_sqrt_float8),
    OP1("||/", F8, F8, k_cbrt_float8),
    OP2("&", I2, I2, I2, I2, I2, k_and_int2), OP2("&", I4, I4, I4, I4, I4, k_and_int4),
    OP2("&", I8, I8, I8, I8, I8, k_and_int8),
    OP2("|", I2, I2, I2, I2, I2, k_or_int2), OP2("|", I4, I4, I4, I4, I4, k_or_int4),
    OP2("|", I8, I8, I8, I8, I8, k_or_int8),
    OP2("#", I2, I2, I2, I2, I2, k_xor_int2), OP2("#", I4, I4, I4, I4, I4, k_xor_int4),
    OP2("#", I8, I8, I8, I8, I8, k_xor_int8),
    OP1("~", I2, I2, k_not_int2), OP1("~", I4, I4, k_not_int4), OP1("~", I8, I8, k_not_int8),
    OP2("<<", I2, I4, I2, I4, I2, k_shl_int2), OP2("<<", I4, I4, I4, I4, I4, k_shl_int4),
    OP2("<<", I8, I4, I8, I4, I8, k_shl_int8),
    OP2(">>", I2, I4, I2, I4, I2, k_shr_int2), OP2(">>", I4, I4, I4, I4, I4, k_shr_int4),
    OP2(">>", I8, I4, I8, I4, I8, k_shr_int8),

    /* strings and bytea (strfuncs.c) */
    FN2("substr", TXT, I4, TXT, k_substr2),
    FN3("substr", TXT, I4, I4, TXT, k_substr3),
    FN2("substring", TXT, I4, TXT, k_substr2),
    FN3("substring", TXT, I4, I4, TXT, k_substr3),
    FN2("substring", TXT, TXT, TXT, k_substring_regex),
    FN2("substr", BY, I4, BY, k_bytea_substr2),
    FN3("substr", BY, I4, I4, BY, k_bytea_substr3),
    FN2("substring", BY, I4, BY, k_bytea_substr2),
    FN3("substring", BY, I4, I4, BY, k_bytea_substr3),
    FN2("position", TXT, TXT, I4, k_strpos),
    FN2("strpos", TXT, TXT, I4, k_strpos),
    FN3("replace", TXT, TXT, TXT, TXT, k_replace),
    FN3("translate", TXT, TXT, TXT, TXT, k_translate),
    FN3("split_part", TXT, TXT, I4, TXT, k_split_part),
    FN2("regexp_match", TXT, TXT, TYPE_ARRAY, k_regexp_match),
    FN3("regexp_match", TXT, TXT, TXT, TYPE_ARRAY, k_regexp_match),
    FN2("regexp_split_to_array", TXT, TXT, TYPE_ARRAY, k_regexp_split_to_array),
    FN3("regexp_split_to_array", TXT, TXT, TXT, TYPE_ARRAY, k_regexp_split_to_array),
    FN2("regexp_like", TXT, TXT, B, k_regexp_like),
    FN3("regexp_like", TXT, TXT, TXT, B, k_regexp_like),
    FN2("regexp_count", TXT, TXT, I4, k_regexp_count),
    FN3("regexp_count", TXT, TXT, I4, I4, k_regexp_count),
    FN4("regexp_count", TXT, TXT, I4, TXT, I4, k_regexp_count),
    FN2("regexp_instr", TXT, TXT, I4, k_regexp_instr),
    FN3("regexp_instr", TXT, TXT, I4, I4, k_regexp_instr),
    FN4("regexp_instr", TXT, TXT, I4, I4, I4, k_regexp_instr),
    FN5("regexp_instr", TXT, TXT, I4, I4, I4, I4, k_regexp_instr),
    FN6("regexp_instr", TXT, TXT, I4, I4, I4, TXT, I4, k_regexp_instr),
    FN7("regexp_instr", TXT, TXT, I4, I4, I4, TXT, I4, I4, k_regexp_instr),
    FN2("regexp_substr", TXT, TXT, TXT, k_regexp_substr),
    FN3("regexp_substr", TXT, TXT, I4, TXT, k_regexp_substr),
    FN4("regexp_substr", TXT, TXT, I4, I4, TXT, k_regexp_substr),
    FN5("regexp_substr", TXT, TXT, I4, I4, TXT, TXT, k_regexp_substr),
    FN6("regexp_substr", TXT, TXT, I4, I4, TXT, I4, TXT, k_regexp_substr),
    FN3("regexp_replace", TXT, TXT, TXT, TXT, k_regexp_replace),
    FN4("regexp_replace", TXT, TXT, TXT, TXT, TXT, k_regexp_replace),
    FN4("regexp_replace", TXT, TXT, TXT, I4, TXT, k_regexp_replace_n),
    FN5("regexp_replace", TXT, TXT, TXT, I4, I4, TXT, k_regexp_replace_n),
    FN6("regexp_replace", TXT, TXT, TXT, I4, I4, TXT, TXT, k_regexp_replace_n),
    /* the SQL:1999 form of substring(string SIMILAR pattern ESCAPE escape) */
    FN3("substring", TXT, TXT, TXT, TXT, k_substring_similar),
    FN2("starts_with", TXT, TXT, B, k_starts_with),
    FN1("btrim", TXT, TXT, k_btrim1),
    FN2("btrim", TXT, TXT, TXT, k_btrim2),
    FN1("ltrim", TXT, TXT, k_ltrim1),
    FN2("ltrim", TXT, TXT, TXT, k_ltrim2),
    FN1("rtrim", TXT, TXT, k_rtrim1),
    FN2("rtrim", TXT, TXT, TXT, k_rtrim2),
    FN2("left", TXT, I4, TXT, k_left),
    FN2("right", TXT, I4, TXT, k_right),
    FN2("lpad", TXT, I4, TXT, k_lpad2),
    FN3("lpad", TXT, I4, TXT, TXT, k_lpad3),
    FN2("rpad", TXT, I4, TXT, k_rpad2),
    FN3("rpad", TXT, I4, TXT, TXT, k_rpad3),
    FN2("repeat", TXT, I4, TXT, k_repeat),
    FN1("reverse", TXT, TXT, k_reverse),
    FN1("initcap", TXT, TXT, k_initcap),
    FN1("md5", TXT, TXT, k_md5),
    FN1("md5", BY, TXT, k_md5),
    FN1("sha256", BY, BY, k_sha256),
    FN1("sha224", BY, BY, k_sha224),
    FN1("sha384", BY, BY, k_sha384),
    FN1("sha512", BY, BY, k_sha512),
    FN0("gen_random_uuid", UUID, k_gen_random_uuid),
    FN1("quote_ident", TXT, TXT, k_quote_ident),
    /* text, and anyelement: the argument as text (an explicit cast) */
    FN1("quote_literal", TXT, TXT, k_quote_literal),
    FN1("quote_literal", ANY, TXT, k_quote_literal),
    {"quote_nullable", false, 1, {TXT}, {TXT}, TXT, k_quote_nullable, FUNC_NONSTRICT},
    {"quote_nullable", false, 1, {ANY}, {ANY}, TXT, k_quote_nullable, FUNC_NONSTRICT},
    FN2("sluice_stream_stat", TXT, TXT, I8, k_stream_stat),
    FN1("sluice_stream_status", TXT, TXT, k_stream_status),
    FN1("sluice_stream_error", TXT, TXT, k_stream_error),
    FN1("chr", I4, TXT, k_chr),
    FN1("ascii", TXT, I4, k_ascii),
    FN1("to_hex", I4, TXT, k_to_hex32),
    FN1("to_hex", I8, TXT, k_to_hex64),
    FN2("encode", BY, TXT, TXT, k_encode),
    FN2("decode", TXT, TXT, BY, k_decode),
    FN1("length", BY, I4, k_octet_length),
    FN1("octet_length", BY, I4, k_octet_length),
    /* VARIADIC "any": the analyzer passes the arguments as they are */
    {"concat", false, 1, {ANY, 0, 0}, {ANY, 0, 0}, TXT, k_concat,
     FUNC_NONSTRICT | FUNC_VARIADIC},
    {"concat_ws", false, 2, {TXT, ANY, 0}, {TXT, ANY, 0}, TXT, k_concat_ws,
     FUNC_NONSTRICT | FUNC_VARIADIC},
    {"num_nulls", false, 1, {ANY}, {ANY}, I4, k_num_nulls, FUNC_NONSTRICT | FUNC_VARIADIC},
    {"format", false, 2, {TXT, ANY}, {TXT, ANY}, TXT, k_format, FUNC_NONSTRICT | FUNC_VARIADIC},
    FN1("format", TXT, TXT, k_format),
    {"num_nonnulls", false, 1, {ANY}, {ANY}, I4, k_num_nonnulls,
     FUNC_NONSTRICT | FUNC_VARIADIC},
    /* VARIADIC "any" with none at all too (jsonb_build_object()) */
    {"jsonb_build_array", false, 0, {ANY}, {ANY}, JB, k_jsonb_build_array,
     FUNC_NONSTRICT | FUNC_VARIADIC},
    {"jsonb_build_object", false, 0, {ANY}, {ANY}, JB, k_jsonb_build_object,
     FUNC_NONSTRICT | FUNC_VARIADIC},

    /* the session (sessfuncs.c) */
    FN1("current_setting", TXT, TXT, k_current_setting),
    FN2("current_setting", TXT, B, TXT, k_current_setting2),
    FN3("set_config", TXT, TXT, B, TXT, k_set_config),
    FN1("pg_sleep", F8, TXT, k_pg_sleep),

    /* date and time (timefuncs.c, formatting.c) */
    FN0("now", TSZ, k_now),
    FN0("current_timestamp", TSZ, k_now),
    FN0("transaction_timestamp", TSZ, k_now),
    FN0("statement_timestamp", TSZ, k_now),
    FN0("clock_timestamp", TSZ, k_clock_timestamp),
    FN0("current_date", D, k_current_date),
    FN0("localtimestamp", TS, k_now),
    FN2("date_trunc", TXT, TS, TS, k_date_trunc_ts),
    FN2("date_trunc", TXT, TSZ, TSZ, k_date_trunc_ts),
    FN2("date_trunc", TXT, IV, IV, k_date_trunc_iv),
    FN2("date_part", TXT, TS, F8, k_extract_ts),
    FN2("date_part", TXT, TSZ, F8, k_extract_tstz),
    FN2("date_part", TXT, IV, F8, k_extract_iv),
    {"date_part", false, 2, {TXT, D, 0}, {TXT, TS, 0}, F8, k_extract_ts, 0},
    FN2("extract", TXT, TS, NUM, k_extract_ts),
    FN2("extract", TXT, TSZ, NUM, k_extract_tstz),
    FN2("extract", TXT, IV, NUM, k_extract_iv),
    FN2("extract", TXT, D, NUM, k_extract_date),
    FN1("to_timestamp", F8, TSZ, k_to_timestamp_f8),
    FN2("to_timestamp", TXT, TXT, TSZ, k_to_timestamp_fmt),
    FN2("to_date", TXT, TXT, D, k_to_date_fmt),
    FN2("to_char", TS, TXT, TXT, k_to_char_ts),
    FN2("to_char", TSZ, TXT, TXT, k_to_char_tstz),
    FN2("to_char", IV, TXT, TXT, k_to_char_iv),
    FN2("age", TS, TS, IV, k_age),
    FN2("age", TSZ, TSZ, IV, k_age),
    FN1("age", TS, IV, k_age1),
    FN1("age", TSZ, IV, k_age1),
    FN3("date_bin", IV, TS, TS, TS, k_date_bin),
    FN3("date_bin", IV, TSZ, TSZ, TSZ, k_date_bin),
    FN1("justify_hours", IV, IV, k_justify_hours),
    FN1("justify_days", IV, IV, k_justify_days),
    FN1("justify_interval", IV, IV, k_justify_interval),
    FN1("isfinite", D, B, k_isfinite_date),
    FN1("isfinite", TS, B, k_isfinite_ts),
    FN1("isfinite", TSZ, B, k_isfinite_ts),
    FN2("timezone", TXT, TS, TSZ, k_timezone_ts),
    FN2("timezone", TXT, TSZ, TS, k_timezone_tstz),
    FN2("timezone", IV, TS, TSZ, k_izone_ts),
    FN2("timezone", IV, TSZ, TS, k_izone_tstz),
    FN3("make_date", I4, I4, I4, D, k_make_date),
    FN6("make_timestamp", I4, I4, I4, I4, I4, F8, TS, k_make_timestamp),
    FN6("make_timestamptz", I4, I4, I4, I4, I4, F8, TSZ, k_make_timestamptz),
    FN7("make_timestamptz", I4, I4, I4, I4, I4, F8, TXT, TSZ, k_make_timestamptz),
    /* make_interval's arguments all have defaults: a row for each count */
    FN0("make_interval", IV, k_make_interval),
    FN1("make_interval", I4, IV, k_make_interval),
    FN2("make_interval", I4, I4, IV, k_make_interval),
    FN3("make_interval", I4, I4, I4, IV, k_make_interval),
    FN4("make_interval", I4, I4, I4, I4, IV, k_make_interval),
    FN5("make_interval", I4, I4, I4, I4, I4, IV, k_make_interval),
    FN6("make_interval", I4, I4, I4, I4, I4, I4, IV, k_make_interval),
    FN7("make_interval", I4, I4, I4, I4, I4, I4, F8, IV, k_make_interval),

    /* jsonb (jsonbfuncs.c) */
    OP2("->", JB, TXT, JB, TXT, JB, k_jsonb_get_key),
    OP2("->", JB, I4, JB, I4, JB, k_jsonb_get_idx),
    OP2("->>", JB, TXT, JB, TXT, TXT, k_jsonb_get_key_text),
    OP2("->>", JB, I4, JB, I4, TXT, k_jsonb_get_idx_text),
    OP2("#>", JB, TXT, JB, TXT, JB, k_jsonb_path),
    OP2("#>>", JB, TXT, JB, TXT, TXT, k_jsonb_path_text),
    OP2("?", JB, TXT, JB, TXT, B, k_jsonb_exists),
    OP2("@>", JB, JB, JB, JB, B, k_jsonb_contains),
    OP2("<@", JB, JB, JB, JB, B, k_jsonb_contained),
    OP2("||", JB, JB, JB, JB, JB, k_jsonb_concat),
    OP2("-", JB, TXT, JB, TXT, JB, k_jsonb_delete_key),
    OP2("#-", JB, TYPE_ARRAY, JB, TYPE_ARRAY, JB, k_jsonb_delete_path),
    OP2("?|", JB, TYPE_ARRAY, JB, TYPE_ARRAY, B, k_jsonb_exists_any),
    OP2("?&", JB, TYPE_ARRAY, JB, TYPE_ARRAY, B, k_jsonb_exists_all),
    FN1("jsonb_typeof", JB, TXT, k_jsonb_typeof),
    FN1("jsonb_array_length", JB, I4, k_jsonb_array_length),
    {"to_jsonb", false, 1, {ANY}, {ANY}, JB, k_to_jsonb, FUNC_ANY_ASIS},
    FN1("jsonb_strip_nulls", JB, JB, k_jsonb_strip_nulls),
    FN1("jsonb_pretty", JB, TXT, k_jsonb_pretty),
    /* the path is text[] (TYPE_ARRAY in this table) */
    FN3("jsonb_set", JB, TYPE_ARRAY, JB, JB, k_jsonb_set),
    FN4("jsonb_set", JB, TYPE_ARRAY, JB, B, JB, k_jsonb_set),
    FN3("jsonb_insert", JB, TYPE_ARRAY, JB, JB, k_jsonb_insert),
    FN4("jsonb_insert", JB, TYPE_ARRAY, JB, B, JB, k_jsonb_insert),

    /* privilege inquiry (aclfuncs.c): a role or object by name or oid */
#define ACLFN(nm, f)                                                        \
    FN2(nm, TXT, TXT, B, f), FN2(nm, I8, TXT, B, f),                        \
    FN3(nm, TXT, TXT, TXT, B, f), FN3(nm, TXT, I8, TXT, B, f),              \
    FN3(nm, I8, TXT, TXT, B, f), FN3(nm, I8, I8, TXT, B, f)
    ACLFN("has_table_privilege", k_has_table_privilege),
    ACLFN("has_schema_privilege", k_has_schema_privilege),
    ACLFN("has_database_privilege", k_has_database_privilege),
    ACLFN("pg_has_role", k_pg_has_role),
#undef ACLFN
    FN1("pg_get_userbyid", I8, TXT, k_pg_get_userbyid),

    /* LIKE ... ESCAPE and SIMILAR TO: internal names, never resolved from SQL text */
    {"like escape", false, 3, {TXT, TXT, TXT}, {TXT, TXT, TXT}, B, k_like_esc, 0},
    {"ilike escape", false, 3, {TXT, TXT, TXT}, {TXT, TXT, TXT}, B, k_ilike_esc, 0},
    {"similar to", false, 2, {TXT, TXT}, {TXT, TXT}, B, k_similar, 0},
    {"similar to escape", false, 3, {TXT, TXT, TXT}, {TXT, TXT, TXT}, B, k_similar, 0},
};

/* The set-returning functions (srf.c, regex.c, jsonbfuncs.c): rows of
 * their own, searched after the table, each with how its sets run
 * (srf_fns[k] is srf_table[k]'s, ex_func_srf). */
#define SRF(nm, n, a1, a2, a3, r)                                            \
    {nm, false, n, {a1, a2, a3}, {a1, a2, a3}, r, k_srf_misplaced, FUNC_SRF}
static const FuncDesc srf_table[] = {
    SRF("generate_series", 2, I4, I4, 0, I4),
    SRF("generate_series", 3, I4, I4, I4, I4),
    SRF("generate_series", 2, I8, I8, 0, I8),
    SRF("generate_series", 3, I8, I8, I8, I8),
    SRF("generate_series", 2, NUM, NUM, 0, NUM),
    SRF("generate_series", 3, NUM, NUM, NUM, NUM),
    SRF("generate_series", 3, TS, TS, IV, TS),
    SRF("generate_series", 3, TSZ, TSZ, IV, TSZ),
    SRF("regexp_split_to_table", 2, TXT, TXT, 0, TXT),
    SRF("regexp_split_to_table", 3, TXT, TXT, TXT, TXT),
    SRF("regexp_matches", 2, TXT, TXT, 0, TYPE_ARRAY),
    SRF("regexp_matches", 3, TXT, TXT, TXT, TYPE_ARRAY),
    {"string_to_table", false, 2, {TXT, TXT}, {TXT, TXT}, TXT, k_srf_misplaced,
     FUNC_SRF | FUNC_NONSTRICT},
    {"string_to_table", false, 3, {TXT, TXT, TXT}, {TXT, TXT, TXT}, TXT, k_srf_misplaced,
     FUNC_SRF | FUNC_NONSTRICT},
    SRF("jsonb_array_elements", 1, JB, 0, 0, JB),
    SRF("jsonb_array_elements_text", 1, JB, 0, 0, TXT),
    SRF("jsonb_object_keys", 1, JB, 0, 0, TXT),
    SRF("jsonb_each", 1, JB, 0, 0, TXT),        /* key, value: ExSrfFns.coltypes */
    SRF("jsonb_each_text", 1, JB, 0, 0, TXT),
};
#undef SRF
static const ExSrfFns *const srf_fns[] = {
    &fn_srf_series_int, &fn_srf_series_int, &fn_srf_series_int, &fn_srf_series_int,
    &fn_srf_series_num, &fn_srf_series_num, &fn_srf_series_ts, &fn_srf_series_ts,
    &fn_srf_regexp_split, &fn_srf_regexp_split, &fn_srf_regexp_matches, &fn_srf_regexp_matches,
    &fn_srf_string_to_table, &fn_srf_string_to_table,
    &fn_srf_jsonb_elements, &fn_srf_jsonb_elements_text, &fn_srf_jsonb_object_keys,
    &fn_srf_jsonb_each, &fn_srf_jsonb_each_text,
};
_Static_assert(SL_ARRAY_LEN(srf_table) == SL_ARRAY_LEN(srf_fns), "one ExSrfFns a row");

const ExSrfFns *ex_func_srf(const FuncDesc *fd)
{
    if (fd < srf_table || fd >= srf_table + SL_ARRAY_LEN(srf_table))
        return NULL;
    return srf_fns[fd - srf_table];
}

/* An index of the table by (is_op, name), built once: the rows of a name
 * are a range of it, in table order. */
static uint16_t func_index[SL_ARRAY_LEN(func_table)];
static pthread_once_t func_index_once = PTHREAD_ONCE_INIT;

static int row_cmp(const void *x, const void *y)
{
    const FuncDesc *a = &func_table[*(const uint16_t *)x], *b = &func_table[*(const uint16_t *)y];
    if (a->is_op != b->is_op)
        return a->is_op ? 1 : -1;
    int c = strcmp(a->name, b->name);
    if (c != 0)
        return c;
    return *(const uint16_t *)x < *(const uint16_t *)y ? -1 : 1;
}

static void func_index_build(void)
{
    for (size_t i = 0; i < SL_ARRAY_LEN(func_table); i++)
        func_index[i] = (uint16_t)i;
    qsort(func_index, SL_ARRAY_LEN(func_table), sizeof(func_index[0]), row_cmp);
}

/* The index range [*lo, *hi) of the rows named name. */
static void func_range(const char *name, bool is_op, size_t *lo, size_t *hi)
{
    pthread_once(&func_index_once, func_index_build);
    size_t l = 0, h = SL_ARRAY_LEN(func_table);
    while (l < h) {
        size_t m = (l + h) / 2;
        const FuncDesc *f = &func_table[func_index[m]];
        int c = f->is_op != is_op ? (f->is_op ? 1 : -1) : strcmp(f->name, name);
        if (c < 0)
            l = m + 1;
        else
            h = m;
    }
    *lo = l;
    while (h < SL_ARRAY_LEN(func_table) && func_table[func_index[h]].is_op == is_op &&
           strcmp(func_table[func_index[h]].name, name) == 0)
        h++;
    *hi = h;
}

/* Functions other modules add (the runtime's catalog functions): a list
 * of tables, registered once at start, searched after the built-in one. */
typedef struct ExtraFuncs {
    const FuncDesc *t;
    size_t          n;
    bool            on_loop;
} ExtraFuncs;

static ExtraFuncs extra[8];
static int        nextra;

static void add_table(const FuncDesc *table, size_t n, bool on_loop)
{
    for (int i = 0; i < nextra; i++)
        if (extra[i].t == table)
            return;
    if (nextra == (int)SL_ARRAY_LEN(extra))
        sl_panic("ex_func_register: too many function tables");
    extra[nextra].t = table;
    extra[nextra].n = n;
    extra[nextra].on_loop = on_loop;
    nextra++;
}

void ex_func_register(const FuncDesc *table, size_t n)
{
    add_table(table, n, false);
}

void ex_func_register_loop(const FuncDesc *table, size_t n)
{
    add_table(table, n, true);
}

bool ex_func_volatile(const FuncDesc *fd)
{
    static const char *const volatile_fns[] = {
        "random", "clock_timestamp", "timeofday", "gen_random_uuid", "setseed", "set_config",
        "pg_sleep", "nextval", "random_normal"};
    for (size_t k = 0; k < SL_ARRAY_LEN(volatile_fns); k++)
        if (strcmp(fd->name, volatile_fns[k]) == 0)
            return true;
    return false;
}

bool ex_func_on_loop(const FuncDesc *fd)
{
    for (int k = 0; k < nextra; k++)
        if (extra[k].on_loop && fd >= extra[k].t && fd < extra[k].t + extra[k].n)
            return true;
    return false;
}

const FuncDesc *ex_func_at(size_t i)
{
    if (i < SL_ARRAY_LEN(func_table))
        return &func_table[i];
    i -= SL_ARRAY_LEN(func_table);
    if (i < SL_ARRAY_LEN(srf_table))
        return &srf_table[i];
    i -= SL_ARRAY_LEN(srf_table);
    for (int k = 0; k < nextra; k++) {
        if (i < extra[k].n)
            return &extra[k].t[i];
        i -= extra[k].n;
    }
    return NULL;
}

int ex_func_candidates(const char *name, bool is_op, int nargs, const FuncDesc **out, int max)
{
    size_t lo, hi;
    int n = 0;
    func_range(name, is_op, &lo, &hi);
    for (size_t k = lo; k < hi; k++) {
        const FuncDesc *f = &func_table[func_index[k]];
        if (f->nargs == nargs && !(f->flags & FUNC_VARIADIC) && n < max)
            out[n++] = f;
    }
    for (size_t k = 0; k < SL_ARRAY_LEN(srf_table); k++) {
        const FuncDesc *f = &srf_table[k];
        if (!is_op && f->nargs == nargs && strcmp(f->name, name) == 0 && n < max)
            out[n++] = f;
    }
    for (int t = 0; t < nextra; t++)
        for (size_t k = 0; k < extra[t].n; k++) {
            const FuncDesc *f = &extra[t].t[k];
            if (f->is_op == is_op && f->nargs == nargs && strcmp(f->name, name) == 0 && n < max)
                out[n++] = f;
        }
    return n;
}

bool ex_func_exists(const char *name, bool is_op)
{
    size_t lo, hi;
    func_range(name, is_op, &lo, &hi);
    if (hi > lo)
        return true;
    for (size_t k = 0; k < SL_ARRAY_LEN(srf_table); k++)
        if (!is_op && strcmp(srf_table[k].name, name) == 0)
            return true;
    for (int t = 0; t < nextra; t++)
        for (size_t k = 0; k < extra[t].n; k++)
            if (extra[t].t[k].is_op == is_op && strcmp(extra[t].t[k].name, name) == 0)
                return true;
    return false;
}

const FuncDesc *ex_func_variadic(const char *name)
{
    size_t lo, hi;
    func_range(name, false, &lo, &hi);
    for (size_t k = lo; k < hi; k++)
        if (func_table[func_index[k]].flags & FUNC_VARIADIC)
            return &func_table[func_index[k]];
    for (int t = 0; t < nextra; t++)
        for (size_t k = 0; k < extra[t].n; k++)
            if (!extra[t].t[k].is_op && (extra[t].t[k].flags & FUNC_VARIADIC) &&
                strcmp(extra[t].t[k].name, name) == 0)
                return &extra[t].t[k];
    return NULL;
}
