/*
 * analyze_int.h -- what the analyze_*.c files and resolve.c share: the
 * analysis context and the helpers that build typed expressions.  Not for
 * use outside src/sql/.
 *
 *   an_mk, an_const, an_fold          expression nodes (analyze.c)
 *   an_coerce                         casts and unknown-literal typing (analyze.c)
 *   an_make_op                        an operator over analyzed arguments (analyze.c)
 *   an_resolve, an_apply_func         operator/function resolution (resolve.c)
 *   an_array_*                        arrays in expressions (analyze_array.c)
 *   scopes, FROM, SELECT, aggregates, DDL, DML   analyze_from.c,
 *       analyze_select.c, analyze_agg.c, analyze_ddl.c, analyze_dml.c
 */
#ifndef SLUICE_SQL_ANALYZE_INT_H
#define SLUICE_SQL_ANALYZE_INT_H

#include "sluice/expr.h"
#include "sluice/plan.h"
#include "types/numeric.h"
#include "sql/parser.h"

typedef struct Scope Scope;
typedef struct AggCollect AggCollect;
typedef struct CteScope CteScope;

/* A subquery being analyzed: the scope of the query it sits in, and the
 * values of that query's row its body reads (Exprs over that scope; the
 * body reads them as EXPR_OUTER k).  With any, the subquery is correlated
 * and runs once per row. */
typedef struct Corr {
    Scope       *outer;
    List        *exprs;     /* of Expr * */
    struct Corr *up;
} Corr;

typedef struct Analyze {
    Arena   *a;         /* owns every Expr */
    SlError *err;
    SlType  *params;    /* types of $1..$nparams, TYPE_UNKNOWN until known */
    int      nparams;
    int      cap;
    int      depth;
    /* queries (analyze_from.c, analyze_select.c, analyze_agg.c) */
    const SqlCatalog *cat;
    const char *sql;
    const RawStmt *raw;     /* the statement (its text is sql[start, end)) */
    Scope      *scope;      /* the names expressions see; NULL: none (no FROM) */
    AggCollect *agg;        /* aggregates of the query level being analyzed */
    const char *agg_refusal;/* where aggregates are not allowed ("WHERE"), or NULL */
    CteScope   *ctes;       /* WITH queries visible here */
    List       *init;       /* of InitPlan *: the statement's subqueries */
    List       *deps;       /* of const CatRelation *: relations read or written */
    List       *dep_as;     /* the same length: the role each is read as (a
                               uint32_t in the pointer; 0: the session's) */
    uint32_t    as_role;    /* inside a view: its owner, whose rights read
                               the relations it names (0 outside) */
    int         view_depth; /* views being expanded (a cycle stops at 32) */
    const char *no_columns; /* "DEFAULT expression": column references and
                               subqueries are refused (0A000), else NULL */
    const char *no_subquery;/* "check constraint": subqueries alone are */
    const CatRelation *dflt_rel;    /* the table whose DEFAULTs dflt holds */
    Node      **dflt;       /* per column: its DEFAULT expression, or NULL */
    CreateStmt *dflt_stmt;  /* dflt_rel's CREATE TABLE, parsed (or NULL) */
    Corr       *corr;       /* the innermost subquery being analyzed, or NULL */
    int         ncorrelated;/* correlated subqueries made (they run per row) */
    int         sublinks;   /* subqueries in expressions being analyzed */
    int         outer_joins;/* nullable sides of outer joins being analyzed */
    int         rec_intersect, rec_except;  /* arms of INTERSECT ALL, EXCEPT
                                   [ALL] where a recursive reference may not be */
    int         nworktables;/* WITH RECURSIVE working tables made */
    struct CteDef *cte_active;  /* the WITH query being analyzed, or NULL */
    bool        on_loop;    /* reads a system relation or calls a loop function */
    struct AnWindows *win;  /* the window calls of the query level, or NULL */
    bool        srf_ok;     /* set-returning calls may go here (a select list,
                               ORDER BY: analyze_srf.c) */
    const char *srf_refusal;/* where they may not ("CASE"), or NULL: the
                               clause agg_refusal or win->refusal names */
} Analyze;

/* The window function calls of a query level (analyze_window.c): each
 * call stacks a Window node on base, whose columns start with the FROM
 * clause's.  refusal names the clause being analyzed where calls are not
 * allowed ("GROUP BY", "HAVING"), NULL where they are. */
typedef struct AnWindows {
    Plan       *base;
    int         n;          /* calls made */
    bool        inside;     /* analyzing a call's arguments or window */
    bool        in_def;     /* ... its PARTITION BY / ORDER BY / frame */
    const char *refusal;
    List       *defs;       /* the WINDOW clause: of WindowDef */
} AnWindows;
/* The WINDOW clause of the query level (names checked, expressions too). */
int   an_window_clause(Analyze *an, List *defs);
/* f(...) OVER (...): a column of the Window node that computes it. */
Expr *an_window_call(Analyze *an, FuncCall *f);

/* ---- name scopes (analyze_from.c) ---- */

/* One range of FROM: a relation, a subquery, a VALUES list, or a join
 * (whose columns are the merged USING columns then both sides'). */
typedef struct ScopeItem {
    const char        *refname;     /* alias or name; NULL: a join without alias */
    bool               rel_visible; /* refname.col and refname.* reach it */
    bool               cols_visible;/* unqualified names reach it */
    bool               is_join;
    int                ncols;
    const char       **colnames;
    int               *colidx;      /* the column's position in the FROM output */
    const CatRelation *rel;         /* a table or stream, else NULL */
} ScopeItem;

/* The names of one query level: its FROM ranges, over the FROM plan's
 * output.  parent is the enclosing query's scope (a reference to it is a
 * correlated subquery: an_sublink's Corr records what it reads). */
struct Scope {
    Scope *parent;
    List  *items;           /* of ScopeItem * */
    Plan  *from;            /* the FROM plan: EXPR_COLUMN indexes its columns */
    /* an aggregate query with a window: window_start / window_end */
    bool   has_window;
    SlType window_type;
};

/* WITH queries visible at a point, innermost first.  While a WITH
 * RECURSIVE query is analyzed, state says which part (analyze_from.c's
 * cte_plan): a reference to it from its recursive term is a WORKTABLE of
 * wt_id with wt's columns; from anywhere else an error. */
typedef enum CteState {
    CTE_IDLE, CTE_NOT_UNION, CTE_NONRECURSIVE_TERM, CTE_RECURSIVE_TERM
} CteState;

typedef struct CteDef {
    const char      *name;
    CommonTableExpr *cte;
    bool             in_progress;   /* being analyzed: a reference is recursion */
    CteState         state;
    int              wt_id;
    Plan            *wt;            /* the non-recursive term (its columns) */
    int              nrefs;         /* references from the recursive term */
    int              sublinks;      /* an->sublinks, an->outer_joins, ... at its start */
    int              outer_joins;
    int              rec_intersect, rec_except;
    Plan            *shared;        /* run once for all references, or NULL */
} CteDef;

struct CteScope {
    CteScope *parent;
    int       n;
    CteDef   *defs;
    bool      recursive;    /* WITH RECURSIVE: each query sees them all */
    Scope    *outer;        /* the enclosing queries of the query that has
                               the WITH clause: what its queries see */
};

/* The aggregates of one query level, while its expressions are analyzed:
 * each call becomes an EXPR_COLUMN of subkind COLREF_AGG and index into
 * calls (analyze_agg.c). */
/* The distinct GROUP BY expressions of a query level. */
typedef struct AnGroupList {
    int    n, cap;
    Expr **exprs;
} AnGroupList;

/* One grouping set: numbers into the query's AnGroupList (a number may
 * repeat); all of a query's sets. */
typedef struct AnGroupSet {
    int  n;
    int *idx;
} AnGroupSet;
typedef struct AnGroupingSets {
    int         n;
    AnGroupSet *sets;
} AnGroupingSets;

/* A grouping(...) call: the group number of each argument. */
typedef struct AnGroupingRef {
    int  n;
    int *gidx;
} AnGroupingRef;

struct AggCollect {
    int      n, cap;
    AggCall *calls;
    bool     in_args;       /* inside an aggregate's arguments: nesting refused */
    /* GROUP BY (analyze_grouping.c): its expressions, its grouping sets
     * (NULL: none), and the grouping(...) calls, each an EXPR_COLUMN of
     * subkind COLREF_GROUPING -- with grouping sets one column each after
     * the aggregates' */
    AnGroupList     groups;
    AnGroupingSets *sets;
    int             ngrouping, capg;
    AnGroupingRef  *grouping;
};

Expr *an_column_ref(Analyze *an, ColumnRef *c);
/* The FROM clause of a query level: the plan of its ranges and their scope. */
int   an_from_clause(Analyze *an, List *from, Scope *scope);
/* A FROM item for INSERT/UPDATE/DELETE's target: a scan of a table
 * (with its row keys when with_key). */
int   an_target_relation(Analyze *an, RangeVar *rv, bool with_key, const CatRelation **rel,
                         Scope *scope);
/* Looks a relation up (42P01 at loc when missing; 55000 without a catalog). */
const CatRelation *an_lookup_relation(Analyze *an, const char *schema, const char *name,
                                      int loc, bool missing_ok);
void  an_add_dep(Analyze *an, const CatRelation *rel);
/* Star expansion: the FROM output columns that * (qual NULL) or qual.*
 * stands for, in order; 42P01 when qual names no range. */
int   an_expand_star(Analyze *an, const char *qual, int loc, int **cols, int *ncols);

/* ---- queries (analyze_select.c) ---- */

/* A SELECT / VALUES / set operation -> its plan; names of the output
 * columns in plan->cols. */
Plan *an_select(Analyze *an, SelectStmt *s, Scope *parent);
/* The WITH clause of s made visible (an->ctes = cs; the caller restores
 * it); its queries see outer, s's enclosing queries.  0, or -1 (42712). */
int   an_push_ctes(Analyze *an, SelectStmt *s, CteScope *cs, Scope *outer);
/* An arm of a set operation: as an_select, but unknown-typed outputs stay
 * unknown (the other arm types them). */
Plan *an_select_arm(Analyze *an, SelectStmt *s, Scope *parent);
/* The column types of l op r (UNION ...): PostgreSQL's resolution of a set
 * operation's columns, 42804 at loc when two cannot be matched. */
int   an_setop_types(Analyze *an, const char *what, const Plan *l, const Plan *r, int loc,
                     SlType *types);
/* scope: the names of rel's columns alone, over a scan of it in column
 * order (a CHECK constraint's; analyze_from.c). */
void  an_relation_scope(Analyze *an, const CatRelation *rel, Scope *scope);
/* UPDATE ... FROM, DELETE ... USING: scope (the target's, from
 * an_target_relation) cross-joined with the FROM items, whose columns
 * follow the target's (42712 for a name used twice; analyze_from.c). */
int   an_target_from(Analyze *an, List *from, Scope *scope);
/* The CHECK constraints of table rel (cs: its CREATE TABLE, or NULL to
 * read rel's sql), each analyzed over rel's columns, with PostgreSQL's
 * names ("t_a_check", "t_check1", or CONSTRAINT's): their number, or -1
 * (analyze_dml.c). */
int   an_table_checks(Analyze *an, const CatRelation *rel, CreateStmt *cs, Expr ***exprs,
                      const char ***names);
/* ---- views (analyze_view.c) ---- */
int   an_create_view(Analyze *an, CreateViewStmt *c, Query *q);
/* The plan of view rel's query for one reference at loc, or NULL. */
Plan *an_view_plan(Analyze *an, const CatRelation *rel, int loc);
/* Plan pieces of analyze_select.c that analyze_window.c builds with: a
 * column of p, a Project of exprs over child, a Sort of child. */
typedef struct SortSpec {
    int  col;           /* in the Project's output */
    bool desc;
    bool nulls_first;
} SortSpec;
Expr *an_column_expr(Analyze *an, const Plan *p, int idx, int loc);
Plan *an_project(Analyze *an, Plan *child, Expr **exprs, const char **names, int n);
/* Set-returning functions (analyze_srf.c): whether a call of fd may be
 * made here (0, or -1 with 0A000 as PostgreSQL's check_srf_call_placement);
 * and child with ProjectSet nodes that compute the calls in exprs, each
 * call in them turned into a reference to its column (the innermost calls
 * in the lowest node, calls of one level in lockstep). */
int   an_srf_check(Analyze *an, const FuncDesc *fd, int loc);
Plan *an_project_set(Analyze *an, Plan *child, Expr **exprs, int n);
Plan *an_sort_plan(Analyze *an, Plan *child, const SortSpec *specs, int n);
void  an_sort_dir(const SortBy *sb, SortSpec *sp);
Expr *an_sublink(Analyze *an, SubLink *s);
/* Whether args read columns of enclosing queries and none of their own
 * level's (an aggregate over them is the enclosing query's). */
bool  an_reads_outer_only(Expr *const *args, int n);
/* A select list (* expanded) over the current scope; unknowns become text. */
int   an_target_list(Analyze *an, List *targets, Expr ***exprs, const char ***names, int *n);
/* A Project of p's columns cast to types (NULL when no cast is needed). */
Plan *an_coerce_plan(Analyze *an, Plan *p, const SlType *types, const char *what);
int   an_select_stmt(Analyze *an, SelectStmt *s, Query *q);

/* ---- aggregates and grouping (analyze_agg.c) ---- */
Expr *an_aggregate(Analyze *an, FuncCall *f);
/* 42883 "function name(types) does not exist" with PostgreSQL's hint: -1. */
int   an_no_such_function(Analyze *an, const char *name, Expr *const *args, int n, int loc);
bool  an_is_aggregate_name(const FuncCall *f);
/* percentile_cont, percentile_disc, mode: called WITHIN GROUP. */
bool  an_is_ordered_set_name(const char *name);
/* The error of an ordered-set aggregate called without WITHIN GROUP, or
 * of WITHIN GROUP on another function (42809 or 42883, as PostgreSQL's
 * lookup by argument count gives): -1. */
int   an_ordered_set_misuse(Analyze *an, FuncCall *f);
/* Rewrites an expression analyzed over the FROM output into one over the
 * Aggregate node's output: group expressions and aggregates become its
 * columns; any other column is a 42803 grouping error. */
Expr *an_agg_rewrite(Analyze *an, Expr *e, const Plan *agg, const AggCollect *calls,
                     Scope *scope);
/* WINDOW(ts, size [, slide]) / SESSION(ts, gap) of GROUP BY. */
int   an_window_spec(Analyze *an, FuncCall *f, WindowSpec *w);
/* Checks the expressions that will be rewritten (adding grouped-key
 * dependent columns to the groups), then sets the Aggregate's aggregates
 * and output columns. */
int   an_agg_finish(Analyze *an, Plan *agg, const Scope *scope, Expr **check, int ncheck,
                    const AggCollect *calls);

/* ---- GROUPING SETS, ROLLUP, CUBE, grouping() (analyze_grouping.c) ---- */
/* One GROUP BY expression as written (a position, an output name or an
 * expression) -> the expression over the FROM output, or NULL. */
typedef Expr *(*an_group_expr_fn)(Analyze *an, Node *item, void *arg);
/* e's number in g (added when new). */
int   an_group_add(Analyze *an, AnGroupList *g, Expr *e);
/* GROUP BY's items expanded into grouping sets (*out, in an->a). */
int   an_grouping_sets(Analyze *an, List *items, an_group_expr_fn fn, void *arg,
                       AnGroupList *groups, AnGroupingSets **out);
Expr *an_grouping_call(Analyze *an, FuncCall *f);
/* The plan that replaces Aggregate agg (finished) when ac has sets. */
Plan *an_grouping_plan(Analyze *an, const Plan *agg, const AggCollect *ac);

/* ---- DDL and DML (analyze_ddl.c, analyze_dml.c) ---- */
int   an_create_stmt(Analyze *an, CreateStmt *s, Query *q);
int   an_drop_stmt(Analyze *an, DropStmt *s, Query *q);
/* EXPLAIN, CREATE CONTINUOUS QUERY, ALTER, SUBSCRIBE, SHOW. */
int   an_other_stmt(Analyze *an, Node *stmt, Query *q);
int   an_statement(Analyze *an, Node *stmt, Query *q);
int   an_insert_stmt(Analyze *an, InsertStmt *s, Query *q);
int   an_update_stmt(Analyze *an, UpdateStmt *s, Query *q);
int   an_delete_stmt(Analyze *an, DeleteStmt *s, Query *q);
int   an_copy_stmt(Analyze *an, CopyStmt *s, Query *q);
/* Coercion for assignment (INSERT, UPDATE SET): PostgreSQL's assignment
 * casts, with 42804 "column ... is of type ... but expression is of type"
 * when there is none. */
Expr *an_assign(Analyze *an, Expr *e, SlType t, const char *colname, int loc);
/* A column's DEFAULT expression analyzed as PostgreSQL's cookDefault does
 * (no column references, subqueries, aggregates, window or set-returning
 * functions), assigned to the column's type (analyze_dml.c). */
Expr *an_default_expr(Analyze *an, Node *expr, const CatColumn *col);

/* ---- shared helpers (analyze.c) ---- */
Expr *an_transform(Analyze *an, Node *n);
Expr *an_to_boolean(Analyze *an, Expr *e, const char *construct);
bool  an_common_type(Analyze *an, Expr **es, int n, const char *what, SlType *out);
bool  an_resolve_type(Analyze *an, const TypeName *tn, SlType *out);
int   an_figure_colname(Node *n, const char **name);

typedef enum { COERCE_IMPLICIT, COERCE_EXPLICIT } CoerceCtx;

Expr *an_mk(Analyze *an, ExprKind kind, SlType type, int loc, int nargs, Expr **args);
Expr *an_const(Analyze *an, SlType type, int loc, bool null);
Expr *an_fold(Analyze *an, Expr *e);
Expr *an_coerce(Analyze *an, Expr *e, SlType t, CoerceCtx ctx, int loc);
Expr *an_make_op(Analyze *an, const char *op, Expr *l, Expr *r, int loc);

/* Arrays in expressions (analyze_array.c). */
Expr *an_array_coerce(Analyze *an, Expr *e, SlType t, CoerceCtx ctx, int loc);
bool  an_array_routes(const char *name, bool is_op, Expr **args, int n);
Expr *an_array_call(Analyze *an, const char *name, bool is_op, Expr **args, int n, int loc);
bool  an_array_no_such(Analyze *an, const char *name, bool is_op, Expr **args, int n, int loc);
bool  an_array_common_type(Analyze *an, Expr **es, int n, const char *what, SlType *out);
Expr *an_array_ctor(Analyze *an, Expr **args, int n, int loc);
Expr *an_array_subscript(Analyze *an, Expr *arr, Expr *lo, Expr *hi, bool slice, int loc);
Expr *an_array_any(Analyze *an, const char *op, bool all, Expr *x, Expr *arr, int loc);

/* Picks the operator (is_op) or function row for these arguments, as
 * PostgreSQL's oper_select_candidate / func_select_candidate would; NULL
 * with 42883 (none) or 42725 (ambiguous) at loc. */
const FuncDesc *an_resolve(Analyze *an, const char *name, bool is_op, Expr **args, int nargs,
                           int loc);
/* The call of fd over args: each argument cast to what the kernel reads. */
Expr *an_apply_func(Analyze *an, const FuncDesc *fd, Expr **args, int nargs, int loc);

#endif /* SLUICE_SQL_ANALYZE_INT_H */
