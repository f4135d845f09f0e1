/*
 * analyze_int.h -- what analyze.c and resolve.c share: the analysis context
 * and the helpers that build typed expressions.  Not for use outside
 * src/sql/.
 *
 *   an_mk, an_const, an_fold          expression nodes (analyze.c)
 *   an_coerce                         casts and unknown-literal typing (analyze.c)
 *   an_make_op                        an operator over analyzed arguments (analyze.c)
 *   an_resolve, an_apply_func         operator/function resolution (resolve.c)
 */
#ifndef SLUICE_SQL_ANALYZE_INT_H
#define SLUICE_SQL_ANALYZE_INT_H

#include "sluice/expr.h"
#include "exec/numeric.h"
#include "sql/parser.h"

typedef struct Analyze {
    Arena   *a;         /* owns every Expr */
    SlError *err;
    SlType  *params;    /* types of $1..$nparams, TYPE_UNKNOWN until known */
    int      nparams;
    int      cap;
    int      depth;
} Analyze;

typedef enum { COERCE_IMPLICIT, COERCE_EXPLICIT } CoerceCtx;

Expr *an_mk(Analyze *an, ExprKind kind, SlType type, int loc, int nargs, Expr **args);
Expr *an_const(Analyze *an, SlType type, int loc, bool null);
Expr *an_fold(Analyze *an, Expr *e);
Expr *an_coerce(Analyze *an, Expr *e, SlType t, CoerceCtx ctx, int loc);
Expr *an_make_op(Analyze *an, const char *op, Expr *l, Expr *r, int loc);

/* Picks the operator (is_op) or function row for these arguments, as
 * PostgreSQL's oper_select_candidate / func_select_candidate would; NULL
 * with 42883 (none) or 42725 (ambiguous) at loc. */
const FuncDesc *an_resolve(Analyze *an, const char *name, bool is_op, Expr **args, int nargs,
                           int loc);
/* The call of fd over args: each argument cast to what the kernel reads. */
Expr *an_apply_func(Analyze *an, const FuncDesc *fd, Expr **args, int nargs, int loc);

#endif /* SLUICE_SQL_ANALYZE_INT_H */
