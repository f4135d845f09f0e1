/*
 * parser.h -- the sql module's inside: tokens, the tokenizer, the Parse
 * context the Lemon grammar carries, and the node constructors its actions
 * call.  Only src/sql/, grammar/sql.y and the unit tests include this; the
 * rest of sluice goes through sql.h's sql_parse() / sql_analyze().
 *
 *   sql_lexer_init, sql_lex       tokenizer (tokenize.c)
 *   sql_parse                     query string -> List of RawStmt (parse.c)
 *   make_*                        AST constructors (parse_nodes.c)
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
Node *make_transaction(Parse *p, const Token *t, TransactionKind kind);
Node *make_variable_set(Parse *p, const Token *t, const Token *name);
Node *make_unsupported(Parse *p, const Token *t);
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
Node *make_case(Parse *p, Node *arg, List *whens, Node *defresult, int loc);
Node *make_case_when(Parse *p, Node *expr, Node *result, int loc);
Node *make_coalesce(Parse *p, List *args, int loc);
Node *make_minmax(Parse *p, bool greatest, List *args, int loc);
Node *make_nullif(Parse *p, Node *a, Node *b, int loc);
/* Type names.  name is canonical ("int4"); mods a List of A_Const. */
Node *make_type_name(Parse *p, const char *name, List *mods, int loc);
Node *make_generic_type(Parse *p, Names names, List *mods);
Node *make_float_type(Parse *p, const Token *prec, int loc);

#endif /* SLUICE_SQL_PARSER_H */
