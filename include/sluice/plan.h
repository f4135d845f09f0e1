/*
 * plan.h -- the logical plan: what a query computes, as a tree of
 * relational operators (src/plan/, README.md there).
 *
 * The analyzer (src/sql/) builds a Plan for every query; the batch
 * executor (src/exec/, exec.h) runs it over tables and streams, EXPLAIN
 * prints it, and the incremental rewriter of continuous queries walks it.
 *
 * Every node has its output columns (cols, ncols; quals names the range
 * each came from, for EXPLAIN).  Expressions are the analyzer's Expr
 * (expr.h) with EXPR_COLUMN indexing the output columns of the node's
 * child -- for a JOIN, the left child's columns followed by the right's.
 * A plan is immutable once built and lives in the arena of the statement
 * (or prepared statement) that made it; relations are referenced by
 * pointer and oid (the oid is what a reused plan checks).
 *
 *   plan_new, plan_set_cols        constructors (plan.c)
 *   plan_nchildren, plan_child     walking
 *   plan_explain                   the EXPLAIN text, one line per row (explain.c)
 *   plan_expr_equal                structural equality of expressions
 *   plan_expr_deparse              an expression as SQL text, for EXPLAIN
 */
#ifndef SLUICE_PLAN_H
#define SLUICE_PLAN_H

#include "sluice/ast.h"
#include "sluice/catalog.h"
#include "sluice/expr.h"

typedef struct Plan Plan;

typedef enum PlanKind {
    PLAN_SCAN,      /* the rows of a table or a stream */
    PLAN_VALUES,    /* rows of expressions (VALUES, the one row of a FROM-less SELECT) */
    PLAN_FILTER,    /* the rows where cond is true */
    PLAN_PROJECT,   /* one expression per output column */
    PLAN_AGG,       /* grouping and aggregates, optionally by event-time window */
    PLAN_SORT,      /* ORDER BY output columns */
    PLAN_LIMIT,     /* OFFSET then LIMIT */
    PLAN_DISTINCT,  /* the first row of each distinct key */
    PLAN_JOIN,      /* inner/outer/cross join on equi keys and a residual condition */
    PLAN_SETOP,     /* UNION / INTERSECT / EXCEPT [ALL] of two children */
    PLAN_WINDOW,    /* a window function's value appended to each row of a
                       child sorted by the partition, then the order keys */
    PLAN_SERIES,    /* generate_series(start, stop [, step]) or unnest(array)
                       in FROM */
    PLAN_PROJECT_SET, /* the child's columns, then the values of
                       set-returning calls: for each input row as many rows
                       as the longest set, the shorter ones NULL past their
                       end (PostgreSQL's ProjectSet) */
    PLAN_LATERAL,   /* a join whose right input reads the left row: for each
                       left row, the right plan runs with the row's values
                       (args) as its outer values (EXPR_OUTER) */
    PLAN_RECURSIVE, /* WITH RECURSIVE's UNION [ALL]: the child (the
                       non-recursive term), then the right input (the
                       recursive term) again and again over the rows the
                       last run made, its WORKTABLE, until it makes none */
    PLAN_WORKTABLE, /* the rows of the RECURSIVE node of the same id that
                       the recursive term reads */
    PLAN_CTE_SCAN,  /* the rows of a WITH query run once for the statement
                       however often it is read (child: its plan, shared by
                       every CTE_SCAN of it): one that calls a volatile
                       function, whose references must see the same rows */
} PlanKind;

/* A Window node's function: PostgreSQL's built-in window functions, or an
 * aggregate over the frame (WINDOW_FUNC_AGG). */
typedef enum WindowFunc {
    WINDOW_FUNC_ROW_NUMBER, WINDOW_FUNC_RANK, WINDOW_FUNC_DENSE_RANK, WINDOW_FUNC_PERCENT_RANK,
    WINDOW_FUNC_CUME_DIST, WINDOW_FUNC_NTILE, WINDOW_FUNC_LAG, WINDOW_FUNC_LEAD,
    WINDOW_FUNC_FIRST_VALUE, WINDOW_FUNC_LAST_VALUE, WINDOW_FUNC_NTH_VALUE, WINDOW_FUNC_AGG
} WindowFunc;

/* An aggregate call of an Aggregate node: the aggregate sig (functions.h;
 * the executor runs it with ex_agg_func) over args, for the rows where
 * filter is true, each distinct argument value once when distinct. */
/* A key of agg(... ORDER BY key): the aggregate sees its rows in this
 * order (src/exec/aggset.c). */
typedef struct AggOrder {
    Expr *expr;                 /* over the child's columns */
    bool  desc;
    bool  nulls_first;
} AggOrder;

typedef struct AggCall {
    const AggSig  *sig;
    const char    *name;        /* as written, for EXPLAIN */
    int            nargs;
    Expr         **args;        /* over the child's columns */
    Expr          *filter;      /* FILTER (WHERE ...), or NULL */
    bool           distinct;
    bool           star;        /* count(*) */
    SlType         type;        /* the result */
    int            norder;      /* ORDER BY inside the call: its keys */
    AggOrder      *order;
} AggCall;

/* GROUP BY WINDOW(ts, size [, slide]) or SESSION(ts, gap): rows with a NULL
 * time belong to no window.  Windows are aligned to the epoch. */
typedef enum WindowKind { WINDOW_NONE, WINDOW_TUMBLE, WINDOW_SLIDE, WINDOW_SESSION } WindowKind;

typedef struct WindowSpec {
    WindowKind kind;
    Expr      *time;            /* over the child's columns; timestamp[tz] */
    int64_t    size_us;         /* TUMBLE, SLIDE */
    int64_t    slide_us;        /* SLIDE */
    int64_t    gap_us;          /* SESSION */
} WindowSpec;

typedef struct SortKey {
    int  col;                   /* a column of the child */
    bool desc;
    bool nulls_first;
} SortKey;

struct Plan {
    PlanKind     kind;
    int          ncols;
    ColumnDesc  *cols;
    const char **quals;         /* per column: the range name, or NULL */
    Plan        *child;         /* the input; JOIN and SETOP: the left one */
    Plan        *right;         /* JOIN and SETOP: the right input */
    union {
        struct {
            const CatRelation *rel;
            uint32_t           oid;
            const char        *alias;   /* NULL: none */
            bool               with_key; /* a last BYTEA column: each row's storage key */
        } scan;
        struct {
            int     nrows;
            Expr ***rows;               /* rows[r][c], evaluated with no input */
        } values;
        struct {
            Expr *cond;
        } filter;
        struct {
            Expr **exprs;               /* ncols of them */
        } project;
        struct {
            /* output: the group keys, then window_start and window_end when
             * there is a window, then one column per aggregate */
            int        ngroups;
            Expr     **groups;
            int        naggs;
            AggCall   *aggs;
            WindowSpec window;
        } agg;
        struct {
            int      nkeys;
            SortKey *keys;
        } sort;
        struct {
            Expr *count;                /* NULL: no limit; a constant or parameter */
            Expr *offset;               /* NULL: none */
        } limit;
        struct {
            int  nkeys;                 /* the columns that make a row distinct */
            int *keys;
        } distinct;
        struct {
            JoinType type;
            int      nkeys;
            Expr   **lkeys;             /* over the left child, of a common type */
            Expr   **rkeys;             /* over the right child */
            Expr    *residual;          /* over left ++ right columns, or NULL */
        } join;
        struct {
            SetOpKind op;
            bool      all;
        } setop;
        struct {
            JoinType type;              /* INNER (CROSS) or LEFT */
            int      nargs;
            Expr   **args;              /* over the left child: the right
                                           plan's EXPR_OUTER 0, 1, ... */
            Expr    *cond;              /* ON, over left ++ right columns; NULL: true */
        } lateral;
        struct {
            int  id;                    /* the WORKTABLE nodes that read it */
            bool all;                   /* UNION ALL; else each distinct row once */
        } recursive;
        struct {
            int  id;
        } worktable;
        struct {
            const char *name;           /* the WITH query's, for EXPLAIN */
            bool        correlated;     /* reads an outer row: run once per
                                           run of the subquery or LATERAL
                                           item it is in, not per statement */
        } cte_scan;
        struct {
            Expr *start, *stop, *step;  /* bigint, no input; step may be NULL */
            bool  unnest;               /* unnest(start): start is an array;
                                           the column its elements */
            bool  ordinality;           /* WITH ORDINALITY: a second column,
                                           bigint, numbering the rows from 1 */
        } series;
        struct {
            /* output: the child's columns, then one per call (a call
             * whose set has rows of ncols, ExSrfFns: that many) */
            int    nsrfs;
            Expr **srfs;                /* FUNC_SRF calls, their arguments
                                           over the child's columns */
        } project_set;
        struct {
            /* output: the child's columns, then the function's value
             * (cols[ncols - 1] has its type) */
            WindowFunc func;
            const char *name;           /* as written, for EXPLAIN */
            int        nargs;
            int        args[3];         /* the child's columns holding the
                                           arguments (not WINDOW_FUNC_AGG) */
            AggCall    agg;             /* WINDOW_FUNC_AGG: args and FILTER
                                           over the child's columns */
            int        npart, norder;
            int       *part;            /* the child's partition key columns */
            int       *order;           /* its order key columns */
            /* the frame: mode FRAME_RANGE from UNBOUNDED PRECEDING to
             * CURRENT ROW when none was written */
            FrameMode      mode;
            FrameBoundKind start, end;
            FrameExclude   exclude;
            Expr          *start_off, *end_off;  /* n PRECEDING/FOLLOWING: ROWS and
                                                    GROUPS a bigint; RANGE the
                                                    offset, for its checks */
            Expr          *start_neg, *end_neg;  /* RANGE: offset < 0 */
            /* RANGE with an offset: the child's columns holding the order
             * key in the bounds' type, and each row's key -/+ offset for the
             * start and end bounds (-1: none) */
            int            range_key, range_start, range_end;
            bool           desc, nulls_first;    /* of the one order key */
        } window;
    } u;
};

/* An uncorrelated subquery of an expression, run once before the query
 * (PostgreSQL's InitPlan).  Its value is what EXPR_SUBPLAN nodes with
 * index = its number read: one value (EXPR), a boolean (EXISTS) or all the
 * values of its column (IN). */
typedef struct InitPlan {
    Plan       *plan;
    SubLinkType kind;
    SlType      type;           /* EXPR, IN: the column's type */
} InitPlan;

/* INSERT / UPDATE / DELETE. */
typedef enum ModifyKind { MODIFY_INSERT, MODIFY_UPDATE, MODIFY_DELETE } ModifyKind;

typedef struct ModifyPlan {
    ModifyKind         kind;
    const CatRelation *rel;
    uint32_t           oid;
    /* INSERT: rows in the relation's column order and types.
     * UPDATE: [key (BYTEA), the new values of every column ...].
     * DELETE: [key, the old values of every column ...]. */
    Plan              *source;
    /* INSERT ... ON CONFLICT: set[c] is the new value of column c over
     * [existing row ++ excluded row] (NULL: unchanged); where likewise. */
    OnConflictAction   conflict;
    Expr             **conflict_set;
    Expr              *conflict_where;
    /* INSERT, UPDATE: the table's CHECK constraints over the new row (in
     * the relation's column order), each failing the statement with 23514
     * where it is false. */
    int                nchecks;
    Expr             **checks;
    const char       **check_names;
    /* RETURNING: over the row as written (the old row for DELETE). */
    int                nreturning;
    Expr             **returning;
    ColumnDesc        *returning_cols;
} ModifyPlan;

Plan *plan_new(Arena *a, PlanKind kind, Plan *child, int ncols);
/* Column c of p (names and quals are not copied: they live in the same arena). */
static inline void plan_set_col(Plan *p, int c, const char *name, SlType type, const char *qual)
{
    p->cols[c].name = name;
    p->cols[c].type = type;
    p->quals[c] = qual;
}
int   plan_nchildren(const Plan *p);
Plan *plan_child(const Plan *p, int i);
const char *plan_kind_name(PlanKind k);

/* Whether pred holds for some expression of p or of the plans under it
 * (correlated subqueries' plans included; InitPlans, which are the
 * query's, not). */
bool  plan_any_expr(const Plan *p, bool (*pred)(const Expr *e, void *arg), void *arg);
/* A predicate for it: a call of a function whose value changes from call
 * to call (random(), clock_timestamp()). */
bool  plan_expr_volatile(const Expr *e, void *arg);
/* Does pred hold for e or an expression inside it (subplans included)? */
bool  plan_expr_has(const Expr *e, bool (*pred)(const Expr *e, void *arg), void *arg);
/* Are a and b the same computation?  (For matching GROUP BY expressions.) */
bool  plan_expr_equal(const Expr *a, const Expr *b);
/* e as SQL text, naming columns after cols/quals (the input's columns). */
void  plan_expr_deparse(const Expr *e, const ColumnDesc *cols, const char *const *quals,
                        StrBuf *out);

/* An aggregate call as text: "sum(u.score)", "count(*) FILTER (WHERE ...)". */
void  plan_agg_call_deparse(const AggCall *c, const ColumnDesc *cols, const char *const *quals,
                            StrBuf *out);

/* Places a join condition: equalities between the two sides become the
 * join's keys, the rest its residual (a CROSS join becomes INNER). */
void  plan_join_set_condition(Arena *a, Plan *join, Expr *cond);
/* WHERE cond over p's output: pushes its conjuncts into the inner and
 * cross joins of p where they belong (as keys or residuals), and returns
 * p under a Filter of what is left (or p itself). */
Plan *plan_push_filter(Arena *a, Plan *p, Expr *cond);

/* The EXPLAIN text of a query: lines appended to *lines (strings in a). */
void  plan_explain(Arena *a, const Plan *p, const InitPlan *init, int ninit, List **lines);
void  plan_explain_modify(Arena *a, const ModifyPlan *m, const InitPlan *init, int ninit,
                          List **lines);

#endif /* SLUICE_PLAN_H */
