/*
 * aggsig.c -- the aggregate functions' signatures: each one's name,
 * argument and result types (PostgreSQL's pg_aggregate, cut down), and the
 * lookup the analyzer resolves an aggregate call with.
 *
 *   ex_agg_exists(name)                      is name an aggregate?
 *   ex_agg_lookup(name, nargs, types, cast)  the signature for these
 *                                            argument types
 *   ex_agg_sig(id)                           the signature of one AggId
 *
 * One row per AggId (functions.h).  How each aggregate runs -- its state,
 * update, merge, final, serialize and deserialize -- is the executor's
 * (src/exec/agg.c, its row of the same AggId): this floor says what a call
 * means and what it returns, not how its states are kept.
 *
 * Resolution is PostgreSQL's in small: the row of that name and number of
 * arguments with the best score (an exact argument type or "any" counts 2,
 * an implicit cast to a preferred type 1, an unknown literal to text 1);
 * among equal scores the first row wins.
 */
#include "sluice/functions.h"

#define ANY TYPE__COUNT
#define ONE(id, nm, a, r) [id] = {id, nm, 1, {a, 0}, r}
#define MINMAX(T) ONE(AGG_MIN_##T, "min", TYPE_##T, ANY), ONE(AGG_MAX_##T, "max", TYPE_##T, ANY)
#define VAR(F, nm)                                                                         \
    ONE(AGG_##F##_INT2, nm, TYPE_INT2, TYPE_NUMERIC),                                       \
    ONE(AGG_##F##_INT4, nm, TYPE_INT4, TYPE_NUMERIC),                                       \
    ONE(AGG_##F##_INT8, nm, TYPE_INT8, TYPE_NUMERIC),                                       \
    ONE(AGG_##F##_NUMERIC, nm, TYPE_NUMERIC, TYPE_NUMERIC),                                 \
    ONE(AGG_##F##_FLOAT4, nm, TYPE_FLOAT4, TYPE_FLOAT8),                                    \
    ONE(AGG_##F##_FLOAT8, nm, TYPE_FLOAT8, TYPE_FLOAT8)
#define TWO(id, nm) [id] = {id, nm, 2, {TYPE_FLOAT8, TYPE_FLOAT8}, TYPE_FLOAT8}

static const AggSig sigs[AGG__COUNT] = {
    [AGG_COUNT_STAR] = {AGG_COUNT_STAR, "count", 0, {0, 0}, TYPE_INT8},
    ONE(AGG_COUNT, "count", ANY, TYPE_INT8),
    ONE(AGG_SUM_INT2, "sum", TYPE_INT2, TYPE_INT8),
    ONE(AGG_SUM_INT4, "sum", TYPE_INT4, TYPE_INT8),
    ONE(AGG_SUM_INT8, "sum", TYPE_INT8, TYPE_NUMERIC),
    ONE(AGG_SUM_FLOAT4, "sum", TYPE_FLOAT4, TYPE_FLOAT4),
    ONE(AGG_SUM_FLOAT8, "sum", TYPE_FLOAT8, TYPE_FLOAT8),
    ONE(AGG_SUM_NUMERIC, "sum", TYPE_NUMERIC, TYPE_NUMERIC),
    ONE(AGG_SUM_INTERVAL, "sum", TYPE_INTERVAL, TYPE_INTERVAL),
    ONE(AGG_AVG_INT2, "avg", TYPE_INT2, TYPE_NUMERIC),
    ONE(AGG_AVG_INT4, "avg", TYPE_INT4, TYPE_NUMERIC),
    ONE(AGG_AVG_INT8, "avg", TYPE_INT8, TYPE_NUMERIC),
    ONE(AGG_AVG_FLOAT4, "avg", TYPE_FLOAT4, TYPE_FLOAT8),
    ONE(AGG_AVG_FLOAT8, "avg", TYPE_FLOAT8, TYPE_FLOAT8),
    ONE(AGG_AVG_NUMERIC, "avg", TYPE_NUMERIC, TYPE_NUMERIC),
    MINMAX(INT2), MINMAX(INT4), MINMAX(INT8), MINMAX(FLOAT4), MINMAX(FLOAT8), MINMAX(DATE),
    MINMAX(TIMESTAMP), MINMAX(TIMESTAMPTZ), MINMAX(INTERVAL), MINMAX(NUMERIC), MINMAX(TEXT),
    ONE(AGG_BOOL_AND, "bool_and", TYPE_BOOL, TYPE_BOOL),
    ONE(AGG_EVERY, "every", TYPE_BOOL, TYPE_BOOL),
    ONE(AGG_BOOL_OR, "bool_or", TYPE_BOOL, TYPE_BOOL),
    [AGG_STRING_AGG] = {AGG_STRING_AGG, "string_agg", 2, {TYPE_TEXT, TYPE_TEXT}, TYPE_TEXT},
    ONE(AGG_APPROX_COUNT_DISTINCT, "approx_count_distinct", ANY, TYPE_INT8),
    /* the result is an array of the argument's type (analyze_agg.c) */
    ONE(AGG_ARRAY_AGG, "array_agg", ANY, TYPE_ARRAY),
    /* numeric for exact inputs, double precision for floating point */
    VAR(STDDEV, "stddev"), VAR(STDDEV_SAMP, "stddev_samp"), VAR(STDDEV_POP, "stddev_pop"),
    VAR(VARIANCE, "variance"), VAR(VAR_SAMP, "var_samp"), VAR(VAR_POP, "var_pop"),
    TWO(AGG_CORR, "corr"), TWO(AGG_COVAR_POP, "covar_pop"), TWO(AGG_COVAR_SAMP, "covar_samp"),
    TWO(AGG_REGR_AVGX, "regr_avgx"), TWO(AGG_REGR_AVGY, "regr_avgy"),
    [AGG_REGR_COUNT] = {AGG_REGR_COUNT, "regr_count", 2, {TYPE_FLOAT8, TYPE_FLOAT8}, TYPE_INT8},
    TWO(AGG_REGR_INTERCEPT, "regr_intercept"), TWO(AGG_REGR_R2, "regr_r2"),
    TWO(AGG_REGR_SLOPE, "regr_slope"), TWO(AGG_REGR_SXX, "regr_sxx"),
    TWO(AGG_REGR_SXY, "regr_sxy"), TWO(AGG_REGR_SYY, "regr_syy"),
    /* ordered-set: (the WITHIN GROUP key, the fraction(s)); analyze_agg.c
     * resolves their calls itself */
    [AGG_PERCENTILE_CONT] = {AGG_PERCENTILE_CONT, "percentile_cont", 2, {TYPE_FLOAT8, TYPE_FLOAT8},
                             TYPE_FLOAT8},
    [AGG_PERCENTILE_CONT_MULTI] = {AGG_PERCENTILE_CONT_MULTI, "percentile_cont", 2,
                                   {TYPE_FLOAT8, TYPE_ARRAY}, TYPE_ARRAY},
    [AGG_PERCENTILE_DISC] = {AGG_PERCENTILE_DISC, "percentile_disc", 2, {ANY, TYPE_FLOAT8}, ANY},
    [AGG_PERCENTILE_DISC_MULTI] = {AGG_PERCENTILE_DISC_MULTI, "percentile_disc", 2,
                                   {ANY, TYPE_ARRAY}, TYPE_ARRAY},
    ONE(AGG_MODE, "mode", ANY, ANY),
    ONE(AGG_JSONB_AGG, "jsonb_agg", ANY, TYPE_JSONB),
    [AGG_JSONB_OBJECT_AGG] = {AGG_JSONB_OBJECT_AGG, "jsonb_object_agg", 2, {ANY, ANY}, TYPE_JSONB},
};

bool ex_agg_exists(const char *name)
{
    for (int i = 0; i < AGG__COUNT; i++)
        if (strcmp(sigs[i].name, name) == 0)
            return true;
    return false;
}

const AggSig *ex_agg_lookup(const char *name, int nargs, const SlTypeId *types, SlTypeId *cast)
{
    const AggSig *best = NULL;
    int best_score = -1;
    for (int i = 0; i < AGG__COUNT; i++) {
        const AggSig *f = &sigs[i];
        if (f->nargs != nargs || strcmp(f->name, name) != 0)
            continue;
        /* score: exact arguments count 2, implicit casts 1 (preferred types
         * of the argument's category 1 more) */
        int score = 0;
        bool ok = true;
        for (int k = 0; k < nargs && ok; k++) {
            SlTypeId in = types[k], want = f->args[k];
            if (want == ANY || in == want)
                score += 2;
            else if (in == TYPE_UNKNOWN)
                score += want == TYPE_TEXT ? 1 : 0;
            else if (ex_can_coerce(in, want))
                score += type_is_preferred(want) ? 1 : 0;
            else
                ok = false;
        }
        if (ok && score > best_score) {
            best = f;
            best_score = score;
        }
    }
    if (best != NULL)
        for (int k = 0; k < nargs; k++)
            cast[k] = best->args[k] == ANY ? (types[k] == TYPE_UNKNOWN ? TYPE_TEXT : types[k])
                                           : best->args[k];
    return best;
}

const AggSig *ex_agg_sig(AggId id)
{
    return &sigs[id];
}
