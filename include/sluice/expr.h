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
 *
 * A few functions are answered by the runtime, which knows the catalog and
 * the ingesters (the privilege functions of acl.h, the stream counters of
 * functions.h): whoever makes an EvalCtx hands it those answers
 * (ExFnHooks, EvalCtx.hooks) -- a client statement's and a continuous
 * query's batch alike; the functions keep no global of them.
 */
#ifndef SLUICE_EXPR_H
#define SLUICE_EXPR_H

#include "sluice/ast.h"
#include "sluice/error.h"
#include "sluice/functions.h"
#include "sluice/types.h"

typedef struct Expr Expr;

/* One column of a result: what an analyzed query returns (plan.h's cols,
 * runtime.h's rt_describe). */
typedef struct ColumnDesc {
    const char *name;
    SlType      type;
} ColumnDesc;

struct ExAclHooks;
struct IngestStats;

/* What the runtime answers for the functions that ask it, each with the
 * argument it is called with.  acl (acl.h) answers has_*_privilege,
 * pg_has_role and pg_get_userbyid (NULL: they fail with 55000);
 * stream_stats (functions.h's IngestStats) answers sluice_stream_stat,
 * _status and _error: 1 with out filled (its strings in a), 0 when the
 * stream has no background work (NULL: every stream has none).  role is
 * whom the no-role forms of the privilege functions ask about and
 * current_user / session_user name: a continuous query's owner; 0 (a
 * client statement's hooks): the role the statement runs as. */
typedef struct ExFnHooks {
    const struct ExAclHooks *acl;
    void                    *acl_arg;
    int                    (*stream_stats)(void *arg, const char *name, size_t len,
                                           struct IngestStats *out, Arena *a);
    void                    *stream_arg;
    uint32_t                 role;
} ExFnHooks;

typedef struct EvalCtx {
    Arena        *arena;    /* results and scratch of this batch */
    SlError      *err;
    const Vector *params;   /* $1 is params[0]: one-row vectors */
    int           nparams;
    const Vector *subplans; /* the values of the query's InitPlans (plan.h) */
    int           nsubplans;
    int64_t       now;      /* now(): the statement's time (usec since 2000-01-01),
                             * 0 = read the clock at the first call and keep it */
    const Vector *outer;    /* a correlated subquery: the outer row's values */
    int           nouter;
    void         *exec;     /* the ExCtx (exec.h) running the expression, for
                             * correlated subqueries; NULL: none */
    void         *system_arg; /* the system catalog of the statement (syscat.h's
                               * Syscat, ExCtx.system_arg) its catalog functions
                               * read; NULL: none (they find no relation) */
    const ExFnHooks *hooks;   /* the runtime's answers (ExFnHooks above; the
                               * statement's ExCtx.hooks, the continuous
                               * query's plan's); NULL: none */
} EvalCtx;

typedef int (*ExprFn)(EvalCtx *cx, const Expr *e, const Vector *args, Vector *out,
                      const uint32_t *sel, uint32_t n);

/* The most declared arguments of a function (make_interval's and
 * regexp_instr's seven); a VARIADIC one takes any number. */
#define FUNC_MAX_ARGS 7

/* An operator or function the analyzer can resolve to (src/functions/funcs.c). */
typedef struct FuncDesc {
    const char *name;       /* "+", "||", "abs" */
    bool        is_op;
    uint8_t     nargs;
    SlTypeId    args[FUNC_MAX_ARGS];  /* the declared signature; TYPE__COUNT = any type */
    SlTypeId    kargs[FUNC_MAX_ARGS]; /* what the kernel reads: args are cast to these */
    SlTypeId    ret;
    ExprFn      fn;
    uint8_t     flags;      /* FUNC_* below */
} FuncDesc;

/* FuncDesc flags.  FUNC_NONSTRICT: the kernel sees NULL arguments (their
 * null maps) and sets out->nulls itself (concat).  FUNC_VARIADIC: the last
 * declared argument repeats; nargs is the minimum count (the kernel reads
 * e->nargs vectors). */
#define FUNC_NONSTRICT 1
#define FUNC_VARIADIC  2
/* FUNC_SRF: a set-returning function.  Its calls stay EXPR_FUNC nodes
 * while the analyzer builds a query and end up in a ProjectSet node
 * (plan.h), which runs them through ex_func_srf(fd); fn only refuses a
 * call left where no set can go (0A000). */
#define FUNC_SRF       4
/* FUNC_ANY_ASIS: an argument declared TYPE__COUNT reaches the kernel as
 * it is (an untyped literal as text), not cast to text (to_jsonb's
 * anyelement). */
#define FUNC_ANY_ASIS  8

/* One row's run of a set-returning function (src/functions/srf.c): what
 * its start found in the arguments and where the next value is.  What
 * points into the arguments stays valid while the ProjectSet keeps the
 * input batch. */
typedef struct ExSrfIter {
    int64_t     cur, stop, step;    /* generate_series: integers, or usec */
    SlInterval  step_iv;            /* generate_series over timestamps */
    SlNumeric   ncur, nstop, nstep; /* generate_series over numeric */
    uint8_t    *nbuf;               /* ncur's digits (malloc) */
    int32_t     nbufcap;
    bool        desc;               /* a step below zero */
    bool        done;
    SlStr       s;                  /* the text or jsonb walked */
    size_t      pos, search, prev_end;  /* bytes of s */
    void       *re;                 /* regexp_split_to_table: the compiled
                                       pattern (ExRegex), kept from row to row */
    char       *re_key;             /* ... the pattern and flags it is of (malloc) */
    bool        all;                /* regexp_matches: every match (flag g) */
    size_t      re_keylen;
} ExSrfIter;

/* How a set-returning function runs. */
typedef struct ExSrfFns {
    /* Starts the set of args' row `row` (no argument NULL, unless the
     * row is FUNC_NONSTRICT: string_to_table): 0, or -1 with
     * cx->err.  it keeps what the last row left (re) and nothing else. */
    int  (*start)(EvalCtx *cx, const Expr *e, const Vector *args, uint32_t row, ExSrfIter *it);
    /* Writes the next value of the set into row at of out (ncols
     * vectors, one after the other): 1, 0 when the set has no more, -1
     * with cx->err.  The values live in cx->arena or in the arguments. */
    int  (*next)(EvalCtx *cx, ExSrfIter *it, Vector *out, uint32_t at);
    /* Frees what it keeps from row to row, at the end of the statement. */
    void (*end)(ExSrfIter *it);
    /* 0: one column, of the function's result type; else a set of rows
     * (jsonb_each's key and value), only in FROM: their names and types */
    int         ncols;
    const char *colnames[2];
    SlTypeId    coltypes[2];
} ExSrfFns;

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
    EXPR_SUBPLAN,   /* index: InitPlan; subkind: SubLinkType; IN: args[0] the
                       left operand, fn the "=" comparison, negate NOT IN.
                       Correlated (subplan set): the plan runs once per row,
                       args are the outer values it reads (EXPR_OUTER) */
    EXPR_OUTER,     /* index: a value of the enclosing query's row, for a
                       correlated subquery (EvalCtx.outer[index]) */
} ExprKind;

/* EXPR_COLUMN subkinds the analyzer uses while it builds an aggregate
 * query (never in a finished plan). */
enum { COLREF_PLAIN = 0, COLREF_AGG, COLREF_WINDOW_START, COLREF_WINDOW_END, COLREF_GROUPING };

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
    struct Plan    *subplan;    /* EXPR_SUBPLAN of a correlated subquery */
    uint32_t        cost;       /* nodes evaluated, shared ones each time */
};

/* An analyzed statement. */
typedef enum QueryKind {
    QUERY_SELECT,   /* plan: rows out */
    QUERY_UTILITY,  /* BEGIN/COMMIT/ROLLBACK/SET/RESET: no rows, just a tag */
    QUERY_MODIFY,   /* INSERT / UPDATE / DELETE: modify */
    QUERY_CREATE,   /* CREATE TABLE / STREAM: create */
    QUERY_DROP,     /* DROP TABLE / STREAM */
    QUERY_EXPLAIN,  /* explain: the analyzed statement whose plan is shown */
    QUERY_ALTER_CQ, /* ALTER CONTINUOUS QUERY drop_names[0] PAUSE (pause) | RESUME */
    QUERY_REFUSED,  /* parsed and analyzed, but not runnable yet: 0A000 refusal */
    QUERY_COPY,     /* COPY FROM STDIN / TO STDOUT: copy */
    QUERY_ROLE,     /* CREATE / ALTER / DROP ROLE, GRANT, REVOKE: run from ast */
    QUERY_ALTER,    /* ALTER TABLE / VIEW: run from ast (src/runtime/alter.c) */
    QUERY_BACKUP,   /* BACKUP TO 'dir': backup_target (src/runtime/backup.c) */
} QueryKind;

struct Plan;
struct ModifyPlan;
struct InitPlan;
struct CatRelation;
struct Catalog;

typedef struct Query Query;

/* An analyzed COPY: a relation and its chosen columns (FROM STDIN, or TO
 * STDOUT), or a query (TO STDOUT); the format and its options. */
typedef struct CopySpec {
    bool        to;
    const struct CatRelation *rel;  /* NULL for COPY (query) */
    int         ncols;
    int        *attnums;            /* the columns, indexes into rel->cols */
    Query      *query;              /* COPY (query) TO STDOUT */
    bool        csv;
    bool        binary;             /* FORMAT binary (COPY FROM only) */
    bool        header;
    char        delimiter;
    const char *null_string;
} CopySpec;

struct Query {
    QueryKind    kind;
    const char  *tag;           /* QUERY_UTILITY: "BEGIN", "SET", ...; else the
                                   CommandComplete tag's verb */
    int          ntargets;      /* result columns (SELECT, RETURNING, EXPLAIN) */
    Expr       **targets;       /* FROM-less SELECT: the expressions (else NULL) */
    const char **names;         /* column names, as PostgreSQL names them */
    SlType      *types;         /* column types */
    int          nparams;
    SlType      *param_types;
    struct Plan       *plan;    /* QUERY_SELECT; also CREATE CONTINUOUS QUERY's
                                   query (refused for now, but analyzed) */
    struct ModifyPlan *modify;  /* QUERY_MODIFY */
    struct InitPlan   *init;    /* uncorrelated subqueries, run first */
    int                ninit;
    int                ncorrelated; /* correlated subqueries in its expressions */
    bool               on_loop;     /* reads what only the loop thread may read (a
                                     * system relation, a catalog function): it runs
                                     * on the loop, not on a worker */
    Query             *explain; /* QUERY_EXPLAIN */
    const char        *explain_cq;  /* EXPLAIN CONTINUOUS QUERY name: its name */
    /* QUERY_CREATE: the relation to make (name, kind, columns, key, sql,
     * options); QUERY_DROP: what to drop */
    struct CatRelation *create;
    bool               if_not_exists;
    bool               or_replace;      /* CREATE OR REPLACE CONTINUOUS QUERY */
    int                drop_kind;       /* ObjectKind */
    int                ndrop;
    const char       **drop_names;
    bool               missing_ok;
    bool               cascade;         /* DROP ... CASCADE */
    bool               pause;           /* QUERY_ALTER_CQ */
    const char        *refusal;         /* QUERY_REFUSED: the 0A000 message */
    CopySpec          *copy;            /* QUERY_COPY */
    const char        *backup_target;   /* QUERY_BACKUP: the directory as written */
    int                refusal_pos;
    const Node        *ast;             /* the statement analyzed (its RawStmt's) */
    /* QUERY_UTILITY "SET" / "RESET" / "SHOW": the parameter as written
     * ("all" for RESET ALL and SHOW ALL), SET's flattened value (NULL for
     * DEFAULT) and LOCAL */
    const char        *setting;
    const char        *set_value;
    bool               set_local;
    /* relations the query reads or writes, by name and oid: a prepared
     * statement whose relations changed is analyzed again.  dep_as: the
     * role whose rights read each (a view's owner for what the view
     * reads; 0: the session's role).  A relation read both ways is listed
     * twice. */
    int                ndeps;
    const char       **dep_names;
    uint32_t          *dep_oids;
    uint32_t          *dep_as;
};

/* How the analyzer finds relations (the runtime gives it the catalog's
 * cat_lookup).  lookup may be NULL: then every relation is "not there
 * because the runtime has no catalog" (55000).  Unqualified names are
 * looked up in pg_catalog first (lookup_system), then in the catalog. */
typedef struct SqlCatalog {
    const struct CatRelation *(*lookup)(void *ctx, const char *name);
    void *ctx;
    /* the relations of pg_catalog, information_schema and sys (may be
     * NULL): a REL_SYSTEM relation or NULL */
    const struct CatRelation *(*lookup_system)(void *system_ctx, const char *schema,
                                               const char *name);
    /* lookup_system's argument: the system catalog (syscat.h's Syscat),
     * also what a catalog function folded at analysis reads (a regclass
     * literal: EvalCtx.system_arg) */
    void *system_ctx;
} SqlCatalog;

/* Analyzes one parsed statement (analyze.c).  param_types gives the known
 * types of $1..$n (TYPE_UNKNOWN to infer); the inferred ones end up in
 * q->param_types.  Everything lives in arena a.  Returns 0, or -1 with err
 * set (with the offending node's position).  Statements that read no
 * relation analyze without a catalog. */
int sql_analyze(Arena *a, const char *sql, const RawStmt *raw, const SlType *param_types,
                int nparam_types, Query **out, SlError *err);
int sql_analyze_with(Arena *a, const SqlCatalog *cat, const char *sql, const RawStmt *raw,
                     const SlType *param_types, int nparam_types, Query **out, SlError *err);

/* The statement text sql with the value of every `name = literal` whose
 * name says it is a secret, and the string after PASSWORD, shown as
 * '********' (redact.c): sql itself when there is none, a copy in a
 * otherwise, NULL for text that does not lex. */
const char *sql_redact_secrets(Arena *a, const char *sql);
/* The query of view rel as its CREATE VIEW statement wrote it (what
 * follows AS, without a final semicolon), in a; NULL if its text is not a
 * view's (src/sql/analyze_view.c). */
const char *sql_view_query(Arena *a, const struct CatRelation *rel);
/* The same over the tokens of sql that start before byte max, up to the
 * last one's end (the rest is left out, unread); NULL when that part does
 * not lex. */
const char *sql_redact_secrets_prefix(Arena *a, const char *sql, size_t max);

/* Operators, functions and casts (funcs.c, cast.c). */
int             ex_func_candidates(const char *name, bool is_op, int nargs,
                                   const FuncDesc **out, int max);
bool            ex_func_exists(const char *name, bool is_op);
/* Adds a table of functions (rows that live for the process) to those
 * the analyzer resolves: the runtime's catalog functions, at start. */
/* The array functions and operators (src/functions/arrayfuncs.c): a
 * table the analyzer types itself (src/sql/analyze_array.c; TYPE_ARRAY
 * and TYPE__COUNT in args are anyarray and anyelement), and the calls
 * that have no name (ARRAY[...], a[i], a[i:j], x op ANY/ALL (a)). */
typedef enum ExArrayBuiltin {
    EX_ARRAY_CTOR, EX_ARRAY_SUBSCRIPT, EX_ARRAY_SLICE, EX_ARRAY_ANY
} ExArrayBuiltin;
/* The comparison of x op ANY (a) (Expr.subkind of EX_ARRAY_ANY). */
typedef enum ExArrayCmp {
    EX_ARR_EQ, EX_ARR_NE, EX_ARR_LT, EX_ARR_LE, EX_ARR_GT, EX_ARR_GE
} ExArrayCmp;
const FuncDesc *ex_array_funcs(size_t *n);
const FuncDesc *ex_array_builtin(ExArrayBuiltin which);
/* The cast of an array to an array of another element type: the
 * element cast is e->args[1] (an EXPR_CAST of the elements, not
 * evaluated as an argument: e->nargs is 1). */
int ex_array_cast(EvalCtx *cx, const Expr *e, const Vector *args, Vector *out,
                  const uint32_t *sel, uint32_t n);
void            ex_func_register(const FuncDesc *table, size_t n);
/* The same, for functions that read state owned by the loop thread (the
 * catalog, the sessions): statements that call them run on the loop. */
void            ex_func_register_loop(const FuncDesc *table, size_t n);
bool            ex_func_on_loop(const FuncDesc *fd);
/* Is fd volatile (pg_proc.provolatile 'v'): may its answer differ between
 * two calls of one statement with the same arguments (random(),
 * clock_timestamp(), gen_random_uuid(), ...)?  Such a call is evaluated
 * once wherever the SQL writes it once. */
bool            ex_func_volatile(const FuncDesc *fd);
/* The i-th function of all tables, or NULL past the end (pg_proc). */
const FuncDesc *ex_func_at(size_t i);
/* The VARIADIC function of this name (concat, concat_ws), or NULL: its
 * last declared argument repeats, nargs is the fewest it takes. */
const FuncDesc *ex_func_variadic(const char *name);
/* A row's result type: TYPE_ARRAY in funcs.c's table is text[]
 * (regexp_match, regexp_matches, regexp_split_to_array). */
static inline SlType ex_func_ret(const FuncDesc *fd)
{
    return fd->ret == TYPE_ARRAY ? sl_array_type(TYPE_TEXT, -1) : sl_type(fd->ret);
}
/* How a FUNC_SRF function's sets run (NULL for any other). */
const struct ExSrfFns *ex_func_srf(const FuncDesc *fd);
/* The current time as a timestamptz value (microseconds since 2000-01-01
 * UTC): what a statement or micro-batch puts in EvalCtx.now so that every
 * now() in it returns one value (timefuncs.c). */
int64_t         ex_clock_now(void);
/* The cast kernel from one type to another, or NULL when there is no cast.
 * implicit_only: only casts PostgreSQL applies implicitly (whether there is
 * one: functions.h's ex_can_coerce). */
ExprFn          ex_cast_fn(SlTypeId from, SlTypeId to, bool implicit_only);
/* The one-row value of e -- a function call or a cast whose arguments are
 * all constants -- in out (cx->arena), as the evaluator would compute it
 * (fold.c: the analyzer's constant folding).  Returns 0, or -1 with
 * cx->err set; XX000 for any other shape. */
int             ex_fold_call(EvalCtx *cx, const Expr *e, Vector *out);
/* The cast an assignment to a column uses (varchar(n): an error when too
 * long, where an explicit cast truncates). */
ExprFn          ex_assign_cast_fn(SlTypeId from, SlTypeId to);

#endif /* SLUICE_EXPR_H */
