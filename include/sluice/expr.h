/*
 * expr.h -- analyzed, typed expressions and queries, and their evaluation.
 *
 * The analyzer (src/sql/analyze.c) turns the raw parse tree into Expr trees
 * whose every node has a resolved type and, for operators, functions and
 * casts, the kernel that computes it.  The evaluator (src/exec/eval.c) runs
 * an Expr over a Batch a vector at a time: each kernel is a tight loop over
 * the rows of a selection, and nothing is allocated per row (results live in
 * the EvalCtx's arena, the batch's).
 *
 * Kernel contract (ExprFn): args are the evaluated argument vectors, out is
 * allocated (with a null map) by the evaluator; the kernel computes the rows
 * listed in sel (all of 0..n-1 when sel is NULL), none of which has a NULL
 * argument (the evaluator filters them out for strict functions).  It returns
 * 0, or -1 with cx->err set.
 */
#ifndef SLUICE_EXPR_H
#define SLUICE_EXPR_H

#include "sluice/ast.h"
#include "sluice/error.h"
#include "sluice/types.h"

typedef struct Expr Expr;

typedef struct EvalCtx {
    Arena        *arena;    /* results and scratch of this batch */
    SlError      *err;
    const Vector *params;   /* $1 is params[0]: one-row vectors */
    int           nparams;
} EvalCtx;

typedef int (*ExprFn)(EvalCtx *cx, const Expr *e, const Vector *args, Vector *out,
                      const uint32_t *sel, uint32_t n);

/* An operator or function the analyzer can resolve to (src/exec/funcs.c). */
typedef struct FuncDesc {
    const char *name;       /* "+", "||", "abs" */
    bool        is_op;
    uint8_t     nargs;
    SlTypeId    args[3];    /* the declared signature; TYPE__COUNT = any type */
    SlTypeId    kargs[3];   /* what the kernel reads: args are cast to these */
    SlTypeId    ret;
    ExprFn      fn;
} FuncDesc;

typedef enum ExprKind {
    EXPR_CONST,     /* value: a one-row vector */
    EXPR_PARAM,     /* index: $1 is 0 */
    EXPR_COLUMN,    /* index: input column */
    EXPR_FUNC,      /* fn over args (strict) */
    EXPR_CAST,      /* cast: args[0] to type */
    EXPR_AND,       /* args: two or more booleans */
    EXPR_OR,
    EXPR_NOT,
    EXPR_NULLTEST,  /* negate: IS NOT NULL */
    EXPR_BOOLTEST,  /* subkind: BoolTestType */
    EXPR_CASE,      /* args: cond1, res1, cond2, res2, ..., [else] */
    EXPR_COALESCE,
    EXPR_MINMAX,    /* negate: LEAST; fn: the "<" / ">" comparison */
    EXPR_NULLIF,    /* fn: the "=" comparison of args[0], args[1] */
    EXPR_DISTINCT,  /* fn: "="; negate: IS NOT DISTINCT FROM */
} ExprKind;

struct Expr {
    ExprKind        kind;
    SlType          type;
    int             location;   /* byte offset in the query, -1 if none */
    int             nargs;
    Expr          **args;
    const FuncDesc *fn;
    ExprFn          cast;       /* EXPR_CAST */
    Vector          value;      /* EXPR_CONST */
    int             index;
    int             subkind;
    bool            negate;
    bool            has_else;   /* EXPR_CASE */
    uint32_t        cost;       /* nodes evaluated, shared ones each time */
};

/* An analyzed statement. */
typedef enum QueryKind {
    QUERY_SELECT,
    QUERY_UTILITY,  /* BEGIN/COMMIT/ROLLBACK/SET: no rows, just a tag */
} QueryKind;

typedef struct Query {
    QueryKind    kind;
    const char  *tag;           /* QUERY_UTILITY: "BEGIN", "SET", ... */
    int          ntargets;
    Expr       **targets;
    const char **names;         /* column names, as PostgreSQL names them */
    Expr        *where;         /* WHERE without FROM: filters the one row */
    int          nparams;
    SlType      *param_types;
} Query;

/* Analyzes one parsed statement (analyze.c).  param_types gives the known
 * types of $1..$n (TYPE_UNKNOWN to infer); the inferred ones end up in
 * q->param_types.  Everything lives in arena a.  Returns 0, or -1 with err
 * set (with the offending node's position). */
int sql_analyze(Arena *a, const char *sql, const RawStmt *raw, const SlType *param_types,
                int nparam_types, Query **out, SlError *err);

/* Evaluates e over the rows of a batch of n rows (eval.c): out gets a
 * vector of n values (and a null map) in cx->arena.  input may be NULL when
 * e reads no columns.  Returns 0, or -1 with cx->err set. */
int ex_eval(EvalCtx *cx, const Expr *e, const Batch *input, uint32_t n, Vector *out);

/* Operators, functions and casts (funcs.c, cast.c). */
int             ex_func_candidates(const char *name, bool is_op, int nargs,
                                   const FuncDesc **out, int max);
bool            ex_func_exists(const char *name, bool is_op);
/* The cast kernel from one type to another, or NULL when there is no cast.
 * implicit_only: only casts PostgreSQL applies implicitly. */
ExprFn          ex_cast_fn(SlTypeId from, SlTypeId to, bool implicit_only);
bool            ex_can_coerce(SlTypeId from, SlTypeId to);

/* Text input of a value of type t into row i of v (types.c): what a cast
 * from text does and what text-format parameters go through.  Errors are
 * PostgreSQL's ("invalid input syntax for type integer: \"abc\""), at
 * position loc (-1: none). */
int value_parse_text(Arena *a, SlType t, const char *s, size_t len, Vector *v, uint32_t i,
                     int loc, SlError *err);

#endif /* SLUICE_EXPR_H */
