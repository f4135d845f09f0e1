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

/* text (text.c) */
KERNEL(k_textcat);
KERNEL(k_like);
KERNEL(k_notlike);
KERNEL(k_ilike);
KERNEL(k_notilike);
KERNEL(k_like_esc);
KERNEL(k_ilike_esc);
KERNEL(k_length);
KERNEL(k_octet_length);
KERNEL(k_upper);
KERNEL(k_lower);

/* Writes row i of v as text into an arena string (casts to text). */
void ex_format_value(Arena *a, const Vector *v, uint32_t i, SlStr *out);

#endif /* SLUICE_EXEC_KERNELS_H */
