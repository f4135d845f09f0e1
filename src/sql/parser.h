/*
 * parser.h -- the sql module's inside: tokens, the tokenizer, the Parse
 * context the Lemon grammar carries, and the node constructors its actions
 * call.  Only src/sql/, grammar/sql.y and the unit tests include this; the
 * rest of sluice reaches the parser through runtime.h's rt_parse(), and the
 * analyzer through expr.h's sql_analyze_with().
 *
 *   sql_lexer_init, sql_lex       tokenizer (tokenize.c)
 *   sql_parse                     query string -> List of RawStmt (parse.c)
 *   make_*, xact_mode*            AST constructors (parse_nodes.c,
 *                                 parse_stmts.c, parse_roles.c)
 */
#ifndef SLUICE_SQL_PARSER_H
#define SLUICE_SQL_PARSER_H

#include "sluice/ast.h"
#include "sluice/error.h"
#include "sql/keywords.h"

/* A token.  z/n is its value: for an identifier or keyword the case-folded
 * name, for a string literal the unescaped bytes, for a number or operator
 * its text.  z lives in the parse arena (or points into the query string) and
 * is NUL-terminated.  offset/len locate the token's raw text in the query. */
typedef struct Token {
    const char *z;
    int         n;
    int         offset;
    int         len;
} Token;

/* The tokenizer over one query string.  Values it makes live in arena. */
typedef struct Lexer {
    Arena      *arena;
    const char *sql;
    int         len;
    int         pos;
} Lexer;

void sql_lexer_init(Lexer *lx, Arena *a, const char *sql, int len);
/* Reads the next token.  Returns its TK_ code, 0 at the end of the input, or
 * -1 with err set (42601 with the token's position) on a lexical error. */
int  sql_lex(Lexer *lx, Token *tok, SlError *err);

/* A dotted name (schema.table.column) and where it starts. */
typedef struct Names {
    List *list;     /* of const char * */
    int   loc;
} Names;

/* Pieces the grammar passes between rules (parse_stmts.c builds nodes from
 * them). */
typedef struct AliasSpec {
    const char *name;       /* NULL: no alias */
    List       *cols;       /* of const char * */
} AliasSpec;

typedef struct LimitSpec {
    Node *limit;            /* NULL: none (or LIMIT ALL) */
    Node *offset;
} LimitSpec;

typedef struct JoinQual {
    List *using_names;      /* USING (a, b): of const char * */
    Node *on;               /* ON expr */
} JoinQual;

typedef struct WithSpec {
    List *ctes;             /* of CommonTableExpr */
    bool  recursive;
    int   loc;
} WithSpec;

/* The Lemon parser's %extra_context: what one sql_parse() call builds. */
typedef struct Parse {
    Arena      *arena;      /* owns every node */
    const char *sql;
    int         len;
    SlError    *err;
    List       *stmts;      /* of RawStmt * */
    bool        failed;
} Parse;

/* Splits and parses a query string into RawStmts (parse.c).  Empty
 * statements are skipped.  Returns 0, or -1 with err set. */
int sql_parse(Arena *a, const char *sql, int len, List **stmts, SlError *err);

/* The maximum depth of the Lemon parser's stack: deeper nesting is refused
 * with 54001 "statement too complex". */
#define SQL_PARSER_STACK 1000

/* ---- called by the grammar's special actions (parse.c) ---- */
void parse_syntax_error(Parse *p, int major, const Token *tok);
void parse_stack_overflow(Parse *p);
void parse_add_stmt(Parse *p, Node *stmt, const Token *semi);

/* ---- AST constructors (parse_nodes.c); all allocate in p->arena ---- */
List *make_list1(Parse *p, void *item);
List *make_list_append(Parse *p, List *l, void *item);
Names make_name_list(Parse *p, const Token *t);
Names make_name_list_append(Parse *p, Names l, const Token *t);
const char *token_str(Parse *p, const Token *t);

Node *make_select(Parse *p, int loc, bool distinct, List *targets, List *from,
                  Node *where, List *group_by, Node *having);
Node *make_transaction(Parse *p, const Token *t, TransactionKind kind, XactModes modes,
                       bool chain);
XactModes xact_modes_none(void);
XactModes xact_modes_merge(XactModes a, XactModes b);
XactModes xact_mode_isolation(const Token *t, XactIsolation level);
XactModes xact_mode_read_only(const Token *t, XactFlag read_only);
XactModes xact_mode_deferrable(XactFlag deferrable);
Node *make_deallocate(Parse *p, const Token *t, const Token *name);
Node *make_savepoint(Parse *p, const Token *t, TransactionKind kind, const Token *name);
Node *make_variable_set(Parse *p, const Token *t, const Token *name, bool local);
Node *make_unsupported(Parse *p, const Token *t);
Node *make_unsupported_named(Parse *p, const Token *t, const char *command);
Node *make_res_target(Parse *p, Node *val, const Token *name);
Node *make_star_target(Parse *p, const Token *star, const Names *qual);
Node *make_range_var(Parse *p, Names names, const Token *alias);

Node *make_integer(Parse *p, const Token *t);
Node *make_decimal(Parse *p, const Token *t);
Node *make_string(Parse *p, const Token *t);
Node *make_bool_const(Parse *p, const Token *t, bool v);
Node *make_null_const(Parse *p, const Token *t);
Node *make_param(Parse *p, const Token *t);
Node *make_column_ref(Parse *p, Names names);
Node *make_op(Parse *p, const char *op, Node *l, Node *r, int loc);
Node *make_op_token(Parse *p, const Token *op, Node *l, Node *r);
Node *make_negate(Parse *p, Node *arg, int loc);
Node *make_aexpr(Parse *p, AExprKind kind, const char *op, Node *l, Node *r, int loc);
Node *make_like(Parse *p, AExprKind kind, const char *op, Node *l, Node *r,
                Node *escape, int loc);
Node *make_in(Parse *p, const char *op, Node *l, List *list, int loc);
Node *make_between(Parse *p, AExprKind kind, Node *arg, Node *lo, Node *hi, int loc);
Node *make_and(Parse *p, Node *l, Node *r, int loc);
Node *make_or(Parse *p, Node *l, Node *r, int loc);
Node *make_not(Parse *p, Node *arg, int loc);
Node *make_null_test(Parse *p, Node *arg, bool is_not, int loc);
Node *make_bool_test(Parse *p, Node *arg, BoolTestType test, int loc);
Node *make_typecast(Parse *p, Node *arg, Node *type, int loc);
Node *make_typed_literal(Parse *p, Node *type, const Token *str);
Node *make_func_call(Parse *p, Names names, List *args, bool star, bool distinct);
/* The SQL-standard syntax for functions (EXTRACT(f FROM x), POSITION(a IN b),
 * SUBSTRING(x FROM a FOR b), TRIM(BOTH c FROM s), x AT TIME ZONE z,
 * CURRENT_DATE, ...): a call of the named function (parse_nodes.c). */
/* expr COLLATE name: sluice's text compares byte-wise, so the collations
 * it knows ("default", "C", "POSIX", pg_catalog-qualified) leave expr as
 * it is; another name is 42704. */
Node *make_collate(Parse *p, Node *expr, Names names);
/* OPERATOR(schema.op): only pg_catalog's operators exist. */
const char *make_qual_op(Parse *p, const Token *schema, const char *op);
Node *make_sql_func(Parse *p, const char *name, List *args, int loc);
Node *make_int_const(Parse *p, int v, int loc);
/* INTERVAL '...' <fields>: qual is the fields' mask (IQ_*), 0 for none;
 * only an interval literal takes one. */
Node *make_typed_literal_qual(Parse *p, Node *type, const Token *str, int qual, int qual_loc);
/* The fields after an interval literal and where they start. */
typedef struct IntervalQual {
    int mask;
    int loc;
} IntervalQual;
/* Interval field masks, PostgreSQL's INTERVAL_MASK bits. */
#define IQ_MONTH  (1 << 1)
#define IQ_YEAR   (1 << 2)
#define IQ_DAY    (1 << 3)
#define IQ_HOUR   (1 << 10)
#define IQ_MINUTE (1 << 11)
#define IQ_SECOND (1 << 12)
Node *make_case(Parse *p, Node *arg, List *whens, Node *defresult, int loc);
Node *make_case_when(Parse *p, Node *expr, Node *result, int loc);
Node *make_coalesce(Parse *p, List *args, int loc);
Node *make_named_arg(Parse *p, const Token *name, Node *arg);
Node *make_minmax(Parse *p, bool greatest, List *args, int loc);
Node *make_nullif(Parse *p, Node *a, Node *b, int loc);

/* ---- query and statement constructors (parse_stmts.c) ---- */
Node *make_values(Parse *p, int loc, List *row);
Node *values_add_row(Parse *p, Node *values, List *row);
Node *make_setop(Parse *p, SetOpKind op, bool all, Node *l, Node *r);
Node *select_set_sort(Parse *p, Node *sel, List *sort);
Node *select_set_limit(Parse *p, Node *sel, LimitSpec lim);
Node *select_set_with(Parse *p, Node *sel, WithSpec with);
Node *select_set_distinct_on(Parse *p, Node *sel, List *on);
Node *select_set_parens(Parse *p, Node *sel, int loc);
Node *make_sort_by(Parse *p, Node *e, SortDir dir, SortNulls nulls);
Node *make_cte(Parse *p, const Token *name, List *cols, Node *query, int materialize,
               int search_cycle_loc);
/* (), (a, b), ROLLUP (...), CUBE (...), GROUPING SETS (...) in GROUP BY */
Node *make_grouping_set(Parse *p, GroupingSetKind kind, List *content, int loc);
Node *make_grouping_row(Parse *p, Node *first, List *rest, int loc);
Node *make_range_var_alias(Parse *p, Names names, AliasSpec alias);
Node *make_range_subselect(Parse *p, Node *sub, AliasSpec alias, int loc);
Node *make_range_function(Parse *p, Node *func, AliasSpec alias);
/* f(...) WITH ORDINALITY: a bigint column numbering the rows from 1 */
Node *range_function_set_ordinality(Parse *p, Node *rf);
Node *range_set_lateral(Parse *p, Node *r);
/* type[]: an array type (types.h, TYPE_ARRAY); type[][] is the same */
Node *make_array_type(Parse *p, Node *type);
/* ARRAY[elems] (elems NULL: ARRAY[]) and a[lo:hi] (NULL: bound omitted) */
Node *make_array_expr(Parse *p, List *elems, int loc);
Node *make_array_slice(Parse *p, Node *arr, Node *lo, Node *hi, int loc);
/* ARRAY[[...], ...]: a multi-dimensional constructor, which the analyzer
 * refuses (an AEXPR_ARRAY with op "ARRAY[[]]") */
Node *make_array_multidim(Parse *p, int loc);
Node *make_join(Parse *p, JoinType type, bool natural, Node *l, Node *r, JoinQual q);
Node *join_set_alias(Parse *p, Node *join, AliasSpec alias);
Node *make_sublink(Parse *p, SubLinkType type, bool negate, Node *test, Node *sub, int loc);
Node *make_sublink_op(Parse *p, SubLinkType type, const char *op, Node *test, Node *sub, int loc);
Node *make_set_to_default(Parse *p, const Token *t);
Node *func_set_filter(Parse *p, Node *func, Node *filter);
Node *func_set_order(Parse *p, Node *func, List *order);
/* f(...) WITHIN GROUP (ORDER BY ...): an ordered-set aggregate's input */
Node *func_set_within_group(Parse *p, Node *func, List *order, int loc);
/* f(...) OVER (PARTITION BY partition ORDER BY order) */
Node *func_set_over(Parse *p, Node *func, List *partition, List *order);
/* OVER (...) or OVER name: the window of a call. */
Node *func_set_window(Parse *p, Node *func, WindowDef *w);
WindowDef *make_window_def(Parse *p, const Token *refname, List *partition, List *order,
                           WindowFrameDef *frame, int loc);
WindowDef *window_def_ref(Parse *p, WindowDef *w, const Token *refname, int loc);
WindowDef *window_def_name(Parse *p, WindowDef *w, const Token *name);
Node *select_set_windows(Parse *p, Node *sel, List *windows);
WindowFrameDef *make_frame(Parse *p, int mode, const FrameBound *start, const FrameBound *end,
                           int exclude);
FrameBound make_frame_bound(Parse *p, FrameBoundKind kind, Node *offset, int location);
List *make_name_strs(Parse *p, List *l, const Token *t);

Node *make_column_def(Parse *p, const Token *name, Node *type, List *constraints);
Node *make_constraint(Parse *p, ConstrType type, int loc, List *key_nodes);
Node *make_default(Parse *p, int loc, Node *expr);
Node *make_alter_cmd(Parse *p, AlterCmd cmd, const Token *column, const Token *newname);
Node *make_alter_refused(Parse *p, const Token *t, const char *what);
Node *make_alter_table(Parse *p, const Token *t, ObjectKind kind, bool missing_ok, Names name,
                       Node *cmd);
Node *make_check(Parse *p, int loc, Node *expr);
Node *constraint_named(Parse *p, Node *constraint, const Token *name);
Node *make_watermark(Parse *p, const Token *w, const Token *col, Node *expr);
Node *make_def_elem(Parse *p, const Token *name, Node *arg);
Node *make_create(Parse *p, const Token *t, ObjectKind kind, bool if_not_exists, Names name,
                  List *elts, List *options);
Node *make_create_cq(Parse *p, const Token *t, bool or_replace, bool if_not_exists, Names name,
                     Node *into, List *options, Node *query);
Node *make_create_view(Parse *p, const Token *t, bool or_replace, Names name, List *cols,
                       Node *query);
Node *make_drop(Parse *p, const Token *t, ObjectKind kind, bool missing_ok, List *names,
                bool cascade);
Node *make_copy(Parse *p, const Token *t, Names name, List *cols, Node *query, bool to,
                const Token *target, List *options);
Node *make_alter_cq(Parse *p, const Token *t, Names name, bool pause);
Node *make_subscribe(Parse *p, const Token *t, Names name, List *options);
Node *make_backup(Parse *p, const Token *t, const Token *target);
Node *make_explain(Parse *p, const Token *t, Node *stmt, bool analyze);
Node *make_explain_cq(Parse *p, const Token *t, Names name);
Node *make_show(Parse *p, const Token *t, const char *name);
Node *make_variable_reset(Parse *p, const Token *t, const char *name);
Node *make_insert(Parse *p, const Token *t, Node *rel, List *cols, Node *select,
                  Node *on_conflict, List *returning);
Node *make_on_conflict(Parse *p, const Token *t, OnConflictAction action, List *infer,
                       List *targets, Node *where);
Node *make_update(Parse *p, const Token *t, Node *rel, List *targets, List *from, Node *where,
                  List *returning);
Node *make_delete(Parse *p, const Token *t, Node *rel, List *using_list, Node *where,
                  List *returning);
Node *make_set_target(Parse *p, const Token *col, Node *val);
Node *make_unsupported2(Parse *p, const Token *t, const Token *t2);

/* Roles and privileges (parse_roles.c). */
Node *make_role_stmt(Parse *p, const Token *t, RoleStmtKind kind, bool is_user,
                     const Token *name, List *options);
Node *make_role_rename(Parse *p, const Token *t, const Token *name, const Token *new_name);
Node *make_role_drop(Parse *p, const Token *t, bool missing_ok, List *names);
Node *make_grant(Parse *p, const Token *t, bool is_grant, List *privileges, bool stream,
                 List *objects, List *grantees);
Node *make_grant_all(Parse *p, const Token *t, bool is_grant, List *privileges,
                     const Token *kind, const Token *schema_kw, const Token *schema,
                     List *grantees);

/* Type names.  name is canonical ("int4"); mods a List of A_Const. */
Node *make_type_name(Parse *p, const char *name, List *mods, int loc);
Node *make_generic_type(Parse *p, Names names, List *mods);
Node *make_float_type(Parse *p, const Token *prec, int loc);
Node *make_char_type(Parse *p, List *mods, int loc);

#endif /* SLUICE_SQL_PARSER_H */
