/*
 * kernels.h -- the vector kernels behind operators, functions and casts.
 *
 * Each kernel is an ExprFn (see expr.h): a loop over the selected rows of
 * its argument vectors.  FOR_SEL runs a body for each selected row index i.
 * The kernels are declared here so that funcs.c can list them in its table.
 */
#ifndef SLUICE_EXEC_KERNELS_H
#define SLUICE_EXEC_KERNELS_H

#include "sluice/expr.h"

#define FOR_SEL(sel, n, ...)                                      \
    do {                                                           \
        if ((sel) != NULL) {                                       \
            for (uint32_t k_ = 0; k_ < (n); k_++) {                \
                uint32_t i = (sel)[k_];                            \
                __VA_ARGS__                                        \
            }                                                      \
        } else {                                                   \
            for (uint32_t i = 0; i < (n); i++) {                   \
                __VA_ARGS__                                        \
            }                                                      \
        }                                                          \
    } while (0)

#define KERNEL(name) \
    int name(EvalCtx *cx, const Expr *e, const Vector *args, Vector *out, \
             const uint32_t *sel, uint32_t n)

/* arithmetic (kernels.c) */
#define ARITH_KERNELS(T) \
    KERNEL(k_add_##T); KERNEL(k_sub_##T); KERNEL(k_mul_##T); KERNEL(k_div_##T); \
    KERNEL(k_neg_##T); KERNEL(k_abs_##T)
ARITH_KERNELS(int2);
ARITH_KERNELS(int4);
ARITH_KERNELS(int8);
ARITH_KERNELS(float4);
ARITH_KERNELS(float8);
ARITH_KERNELS(numeric);
KERNEL(k_mod_int2);
KERNEL(k_mod_int4);
KERNEL(k_mod_int8);
KERNEL(k_mod_numeric);
KERNEL(k_pow_float8);
KERNEL(k_pow_numeric);
KERNEL(k_sqrt_float8);
KERNEL(k_floor_float8);
KERNEL(k_ceil_float8);
KERNEL(k_round_float8);
KERNEL(k_round_numeric);
KERNEL(k_round_numeric_int4);
KERNEL(k_identity);
KERNEL(k_unsupported);

/* comparisons (kernels.c): k_<op>_<type> for op in eq ne lt le gt ge */
#define CMP_KERNELS(T) \
    KERNEL(k_eq_##T); KERNEL(k_ne_##T); KERNEL(k_lt_##T); KERNEL(k_le_##T); \
    KERNEL(k_gt_##T); KERNEL(k_ge_##T)
CMP_KERNELS(boolean);
CMP_KERNELS(int2);
CMP_KERNELS(int4);
CMP_KERNELS(int8);
CMP_KERNELS(float4);
CMP_KERNELS(float8);
CMP_KERNELS(numeric);
CMP_KERNELS(text);
CMP_KERNELS(bpchar);

/* text (text.c) */
KERNEL(k_textcat);
KERNEL(k_like);
/* regular expressions (regex.c) */
KERNEL(k_regex_match);
KERNEL(k_regexp_like);
KERNEL(k_regexp_match);
KERNEL(k_regexp_split_to_array);
KERNEL(k_regexp_count);
KERNEL(k_regexp_instr);
KERNEL(k_regexp_substr);
KERNEL(k_regexp_replace);
KERNEL(k_regexp_replace_n);
KERNEL(k_similar);
KERNEL(k_srf_misplaced);
KERNEL(k_substring_similar);
KERNEL(k_substring_regex);
KERNEL(k_regex_nomatch);
KERNEL(k_regex_imatch);
KERNEL(k_regex_inomatch);
KERNEL(k_notlike);
KERNEL(k_ilike);
KERNEL(k_notilike);
KERNEL(k_like_esc);
KERNEL(k_ilike_esc);
KERNEL(k_length);
KERNEL(k_octet_length);
KERNEL(k_upper);
KERNEL(k_lower);

/* date and time (timefuncs.c) */
KERNEL(c_date_ts); KERNEL(c_ts_date); KERNEL(c_ts_ts); KERNEL(c_interval_interval);
KERNEL(k_date_pli); KERNEL(k_int_pl_date); KERNEL(k_date_mii); KERNEL(k_date_mi);
KERNEL(k_date_pl_iv); KERNEL(k_iv_pl_date); KERNEL(k_date_mi_iv);
KERNEL(k_ts_pl_iv); KERNEL(k_iv_pl_ts); KERNEL(k_ts_mi_iv); KERNEL(k_ts_mi);
KERNEL(k_iv_pl); KERNEL(k_iv_mi); KERNEL(k_iv_um); KERNEL(k_iv_mul); KERNEL(k_mul_iv);
KERNEL(k_iv_div);
CMP_KERNELS(interval);
KERNEL(k_now); KERNEL(k_clock_timestamp); KERNEL(k_current_date);
KERNEL(k_date_trunc_ts); KERNEL(k_date_trunc_iv);
KERNEL(k_extract_ts); KERNEL(k_extract_tstz); KERNEL(k_extract_date); KERNEL(k_extract_iv);
KERNEL(k_to_timestamp_f8); KERNEL(k_age); KERNEL(k_age1);
KERNEL(k_justify_hours); KERNEL(k_justify_days); KERNEL(k_justify_interval);
KERNEL(k_isfinite_date); KERNEL(k_isfinite_ts);
KERNEL(k_timezone_ts); KERNEL(k_timezone_tstz); KERNEL(k_izone_ts); KERNEL(k_izone_tstz);
KERNEL(k_make_date);
KERNEL(k_make_timestamp);
KERNEL(k_make_timestamptz);
KERNEL(k_make_interval);
/* to_timestamp(text, text), to_date, to_char (formatting.c) */
KERNEL(k_to_timestamp_fmt); KERNEL(k_to_date_fmt); KERNEL(k_to_char_ts);
KERNEL(k_to_char_tstz); KERNEL(k_to_char_iv);

/* strings and bytea (strfuncs.c) */
KERNEL(k_substr2); KERNEL(k_substr3); KERNEL(k_bytea_substr2); KERNEL(k_bytea_substr3);
/* stream ingestion counters (streamfuncs.c) */
KERNEL(k_stream_stat); KERNEL(k_stream_status); KERNEL(k_stream_error);
KERNEL(k_strpos); KERNEL(k_replace); KERNEL(k_translate); KERNEL(k_split_part);
KERNEL(k_starts_with); KERNEL(k_concat); KERNEL(k_concat_ws);
KERNEL(k_num_nulls); KERNEL(k_num_nonnulls); KERNEL(k_format);
KERNEL(k_btrim1); KERNEL(k_btrim2); KERNEL(k_ltrim1); KERNEL(k_ltrim2);
KERNEL(k_rtrim1); KERNEL(k_rtrim2);
KERNEL(k_left); KERNEL(k_right); KERNEL(k_lpad2); KERNEL(k_lpad3); KERNEL(k_rpad2);
KERNEL(k_rpad3); KERNEL(k_repeat); KERNEL(k_reverse); KERNEL(k_initcap);
KERNEL(k_chr); KERNEL(k_ascii); KERNEL(k_to_hex32); KERNEL(k_to_hex64);
KERNEL(k_md5); KERNEL(k_sha256); KERNEL(k_encode); KERNEL(k_decode);
KERNEL(k_sha224); KERNEL(k_sha384); KERNEL(k_sha512); KERNEL(k_gen_random_uuid);
KERNEL(k_quote_ident); KERNEL(k_quote_literal); KERNEL(k_quote_nullable);
KERNEL(k_date_bin); KERNEL(k_to_jsonb); KERNEL(k_jsonb_build_array); KERNEL(k_jsonb_build_object);
KERNEL(k_jsonb_strip_nulls); KERNEL(k_jsonb_pretty); KERNEL(k_jsonb_set); KERNEL(k_jsonb_insert);
KERNEL(k_jsonb_delete_path); KERNEL(k_jsonb_exists_any); KERNEL(k_jsonb_exists_all);
KERNEL(k_bit_length);
/* Upper- (how > 0) or lower-cases a string into the arena. */
void sl_case_map(Arena *a, const SlStr *s, int how, SlStr *out);

/* math (mathfuncs.c) */
KERNEL(k_trunc_float8); KERNEL(k_sign_float8); KERNEL(k_exp_float8); KERNEL(k_ln_float8);
KERNEL(k_log10_float8); KERNEL(k_cbrt_float8); KERNEL(k_degrees_float8);
KERNEL(k_radians_float8); KERNEL(k_sin_float8); KERNEL(k_cos_float8); KERNEL(k_tan_float8);
KERNEL(k_asin_float8); KERNEL(k_acos_float8); KERNEL(k_atan_float8); KERNEL(k_atan2_float8);
KERNEL(k_pi); KERNEL(k_random);
KERNEL(k_floor_numeric); KERNEL(k_ceil_numeric); KERNEL(k_trunc_numeric);
KERNEL(k_trunc_numeric_int4); KERNEL(k_round_numeric_any); KERNEL(k_sign_numeric);
KERNEL(k_div_numeric_trunc); KERNEL(k_sqrt_numeric); KERNEL(k_exp_numeric);
KERNEL(k_ln_numeric); KERNEL(k_log10_numeric); KERNEL(k_log_numeric2);
KERNEL(k_pow_numeric_pg);
#define BIT_KERNELS(T) \
    KERNEL(k_and_##T); KERNEL(k_or_##T); KERNEL(k_xor_##T); KERNEL(k_not_##T); \
    KERNEL(k_shl_##T); KERNEL(k_shr_##T)
BIT_KERNELS(int2);
BIT_KERNELS(int4);
BIT_KERNELS(int8);
#undef BIT_KERNELS
KERNEL(k_gcd_int4); KERNEL(k_gcd_int8); KERNEL(k_lcm_int4); KERNEL(k_lcm_int8);

/* jsonb (jsonbfuncs.c) */
KERNEL(k_jsonb_get_key); KERNEL(k_jsonb_get_key_text); KERNEL(k_jsonb_get_idx);
KERNEL(k_jsonb_get_idx_text); KERNEL(k_jsonb_path); KERNEL(k_jsonb_path_text);
KERNEL(k_jsonb_exists); KERNEL(k_jsonb_contains); KERNEL(k_jsonb_contained);
CMP_KERNELS(jsonb);
KERNEL(k_jsonb_typeof); KERNEL(k_jsonb_array_length); KERNEL(k_jsonb_concat);
KERNEL(k_jsonb_delete_key);
KERNEL(c_jsonb_numeric); KERNEL(c_jsonb_int2); KERNEL(c_jsonb_int4); KERNEL(c_jsonb_int8);
KERNEL(c_jsonb_float4); KERNEL(c_jsonb_float8); KERNEL(c_jsonb_bool);
/* jsonb as sort and group keys (for keys.c): PostgreSQL's btree order of
 * two values, and a byte form equal exactly when the values are equal
 * ('{"a": 1.0}' and '{"a": 1}'), appended to out. */

/* Writes row i of v as text into an arena string (casts to text). */
void ex_format_value(Arena *a, const Vector *v, uint32_t i, SlStr *out);

/* session (sessfuncs.c) */
KERNEL(k_current_setting); KERNEL(k_current_setting2); KERNEL(k_set_config);
KERNEL(k_pg_sleep);
/* privilege inquiry (aclfuncs.c) */
KERNEL(k_has_table_privilege); KERNEL(k_has_schema_privilege);
KERNEL(k_has_database_privilege); KERNEL(k_pg_has_role); KERNEL(k_pg_get_userbyid);

/* set-returning functions (srf.c, regex.c, jsonbfuncs.c) and what they
 * share with timefuncs.c */
extern const ExSrfFns fn_srf_series_int, fn_srf_series_ts, fn_srf_series_num;
extern const ExSrfFns fn_srf_regexp_split;
extern const ExSrfFns fn_srf_regexp_matches;
extern const ExSrfFns fn_srf_string_to_table;
/* string_to_array of row i (arrayfuncs.c): its text[] in the arena */
void ex_string_split(Arena *a, const Vector *args, int nargs, uint32_t i, SlStr *out);
extern const ExSrfFns fn_srf_jsonb_elements, fn_srf_jsonb_elements_text,
    fn_srf_jsonb_object_keys, fn_srf_jsonb_each, fn_srf_jsonb_each_text;
int fn_ts_add_interval(EvalCtx *cx, int64_t ts, const SlInterval *span, int64_t *out);
int fn_interval_sign(const SlInterval *iv);

#endif /* SLUICE_EXEC_KERNELS_H */
