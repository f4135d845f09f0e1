/*
 * sql.y -- sluice's SQL grammar, for the Lemon parser generator.
 *
 * The shapes and precedences are PostgreSQL 15's gram.y, cut down to what
 * sluice runs; every action is one line that calls a constructor from
 * src/sql/parse_nodes.c (make_*), which records the node's text offset.
 * The tokenizer (src/sql/tokenize.c) feeds tokens; src/sql/parse.c drives
 * the parser, turning NOT before BETWEEN/IN/LIKE/ILIKE into NOT_LA and WITH
 * before TIME into WITH_LA (gram.y's lookahead tokens), and feeds a final
 * SEMI so the last statement needs no semicolon.
 *
 * Keywords: grammar/keywords.txt lists them with PostgreSQL's categories.
 * The unreserved ones are in the %fallback ID list below, so that they stay
 * usable as names (window, session, stream, ...): gen_keywords.py checks
 * that the two lists agree.
 */

%name sqlParser
%token_prefix TK_
%token_type {Token}
%default_type {Node *}
%extra_context {Parse *p}
%stack_size 1000

%include {
#include <assert.h>
#include "sql/parser.h"
}

%syntax_error { parse_syntax_error(p, yymajor, &yyminor); }
%stack_overflow { parse_stack_overflow(p); }
%parse_failure { p->failed = true; }

/* Tokens the tokenizer makes that no keyword or rule names first. */
%token ID STRING ICONST FCONST PARAM OP ILLEGAL.
%token COMMA LP RP LBRACKET RBRACKET SEMI COLON DOT DOT_DOT TYPECAST COLON_EQUALS
       EQUALS_GREATER.
%token NOT_LA WITH_LA.

/* Keywords that the grammar does not use yet, declared so that
 * keywords.c has a token for each word of keywords.txt. */
%token ABORT BY DAY HOUR MINUTE MONTH SECOND YEAR LISTEN SINK STREAM
       SUBSCRIBE TRIGGER WATERMARK WINDOW SESSION TRUNCATE EXPLAIN ORDER LIMIT
       OFFSET ON.

/* After AS any word is a name, reserved or not (gram.y's ColLabel). */
%token_class col_label ID|ALL|AND|AS|ASYMMETRIC|BETWEEN|BIGINT|BOOLEAN|CASE
  |CAST|CHAR|CHARACTER|COALESCE|DEC|DECIMAL|DISTINCT|ELSE|END|FALSE|FLOAT
  |FROM|GREATEST|GROUP|HAVING|ILIKE|IN|INT|INTEGER|INTERVAL|IS|ISNULL|LEAST
  |LIKE|LIMIT|NOT|NOTNULL|NULL|NULLIF|NUMERIC|OFFSET|ON|OR|ORDER|PRECISION
  |REAL|SELECT|SMALLINT|SYMMETRIC|THEN|TIME|TIMESTAMP|TO|TRUE|VALUES|VARCHAR
  |WHEN|WHERE|WITH.

/* The unreserved keywords: a name wherever a keyword cannot be. */
%fallback ID ABORT ALTER BEGIN BY COMMIT COPY CREATE DAY DEALLOCATE DELETE
      DISCARD DOUBLE DROP ESCAPE EXECUTE EXPLAIN HOUR INSERT LISTEN LOCAL
      MINUTE MONTH PREPARE RESET ROLLBACK SECOND SESSION SET SHOW SINK START
      STREAM SUBSCRIBE TRANSACTION TRIGGER TRUNCATE UNKNOWN UPDATE VARYING
      WATERMARK WINDOW WITHOUT WORK YEAR ZONE.

/* Anything at all: the words after SET, or after a statement we recognise
 * only by its first word. */
%wildcard ANYTOKEN.

/* gram.y's precedence, lowest first. */
%left OR.
%left AND.
%right NOT.
%nonassoc IS ISNULL NOTNULL.
%nonassoc LT GT EQ LE GE NE.
%nonassoc BETWEEN IN LIKE ILIKE NOT_LA.
%nonassoc ESCAPE.
%left OP.
%left PLUS MINUS.
%left STAR SLASH PERCENT.
%left CARET.
%right UMINUS.
%left LBRACKET RBRACKET.
%left LP RP.
%left TYPECAST.
%left DOT.

/* ------------------------------------------------------------ statements */

input ::= stmt_list.
stmt_list ::= stmt_list stmt_semi.
stmt_list ::= stmt_semi.
stmt_semi ::= SEMI.
stmt_semi ::= stmt(S) SEMI(T). { parse_add_stmt(p, S, &T); }

stmt(A) ::= select_stmt(X). { A = X; }
stmt(A) ::= transaction_stmt(X). { A = X; }
stmt(A) ::= SET(T) opt_set_scope set_name(N) anything. { A = make_variable_set(p, &T, &N); }
stmt(A) ::= unsupported_kw(T) anything. { A = make_unsupported(p, &T); }

%type set_name {Token}
set_name(A) ::= ID(X). { A = X; }
set_name(A) ::= TIME(X) ZONE. { A = X; }
opt_set_scope ::= .
opt_set_scope ::= SESSION.
opt_set_scope ::= LOCAL.

anything ::= .
anything ::= anything ANYTOKEN.

%type unsupported_kw {Token}
unsupported_kw(A) ::= CREATE(X). { A = X; }
unsupported_kw(A) ::= DROP(X). { A = X; }
unsupported_kw(A) ::= ALTER(X). { A = X; }
unsupported_kw(A) ::= INSERT(X). { A = X; }
unsupported_kw(A) ::= UPDATE(X). { A = X; }
unsupported_kw(A) ::= DELETE(X). { A = X; }
unsupported_kw(A) ::= SHOW(X). { A = X; }
unsupported_kw(A) ::= RESET(X). { A = X; }
unsupported_kw(A) ::= COPY(X). { A = X; }
unsupported_kw(A) ::= EXPLAIN(X). { A = X; }
unsupported_kw(A) ::= SUBSCRIBE(X). { A = X; }
unsupported_kw(A) ::= DISCARD(X). { A = X; }
unsupported_kw(A) ::= PREPARE(X). { A = X; }
unsupported_kw(A) ::= EXECUTE(X). { A = X; }
unsupported_kw(A) ::= DEALLOCATE(X). { A = X; }
unsupported_kw(A) ::= TRUNCATE(X). { A = X; }
unsupported_kw(A) ::= LISTEN(X). { A = X; }
unsupported_kw(A) ::= VALUES(X). { A = X; }

/* BEGIN [WORK|TRANSACTION], START TRANSACTION, COMMIT, END, ROLLBACK, ABORT */
transaction_stmt(A) ::= BEGIN(T) opt_transaction anything. { A = make_transaction(p, &T, TRANS_BEGIN); }
transaction_stmt(A) ::= START(T) TRANSACTION anything. { A = make_transaction(p, &T, TRANS_START); }
transaction_stmt(A) ::= COMMIT(T) opt_transaction. { A = make_transaction(p, &T, TRANS_COMMIT); }
transaction_stmt(A) ::= END(T) opt_transaction. { A = make_transaction(p, &T, TRANS_COMMIT); }
transaction_stmt(A) ::= ROLLBACK(T) opt_transaction. { A = make_transaction(p, &T, TRANS_ROLLBACK); }
transaction_stmt(A) ::= ABORT(T) opt_transaction. { A = make_transaction(p, &T, TRANS_ROLLBACK); }
opt_transaction ::= .
opt_transaction ::= WORK.
opt_transaction ::= TRANSACTION.

/* SELECT [DISTINCT|ALL] targets [FROM ...] [WHERE ...] [GROUP BY ...] [HAVING ...] */
select_stmt(A) ::= SELECT(S) opt_distinct(D) target_list(T) from_clause(F) where_clause(W) group_clause(G) having_clause(H). { A = make_select(p, S.offset, D, T, F, W, G, H); }

%type opt_distinct {bool}
opt_distinct(A) ::= . { A = false; }
opt_distinct(A) ::= ALL. { A = false; }
opt_distinct(A) ::= DISTINCT. { A = true; }

%type target_list {List *}
target_list(A) ::= . { A = NULL; }
target_list(A) ::= target_list1(X). { A = X; }
%type target_list1 {List *}
target_list1(A) ::= target_el(X). { A = make_list1(p, X); }
target_list1(A) ::= target_list1(L) COMMA target_el(X). { A = make_list_append(p, L, X); }

target_el(A) ::= a_expr(X) AS col_label(N). { A = make_res_target(p, X, &N); }
target_el(A) ::= a_expr(X) ID(N). { A = make_res_target(p, X, &N); }
target_el(A) ::= a_expr(X). { A = make_res_target(p, X, NULL); }
target_el(A) ::= STAR(S). { A = make_star_target(p, &S, NULL); }
target_el(A) ::= name_list(Q) DOT STAR(S). { A = make_star_target(p, &S, &Q); }

%type from_clause {List *}
from_clause(A) ::= . { A = NULL; }
from_clause(A) ::= FROM from_list(X). { A = X; }
%type from_list {List *}
from_list(A) ::= table_ref(X). { A = make_list1(p, X); }
from_list(A) ::= from_list(L) COMMA table_ref(X). { A = make_list_append(p, L, X); }
table_ref(A) ::= name_list(N). { A = make_range_var(p, N, NULL); }
table_ref(A) ::= name_list(N) ID(X). { A = make_range_var(p, N, &X); }
table_ref(A) ::= name_list(N) AS col_label(X). { A = make_range_var(p, N, &X); }

where_clause(A) ::= . { A = NULL; }
where_clause(A) ::= WHERE a_expr(X). { A = X; }
%type group_clause {List *}
group_clause(A) ::= . { A = NULL; }
group_clause(A) ::= GROUP BY expr_list(X). { A = X; }
having_clause(A) ::= . { A = NULL; }
having_clause(A) ::= HAVING a_expr(X). { A = X; }

/* ----------------------------------------------------------------- names */

/* colid.colid...: a column, a table, a function's schema */
%type name_list {Names}
name_list(A) ::= ID(X). { A = make_name_list(p, &X); }
name_list(A) ::= name_list(L) DOT col_label(X). { A = make_name_list_append(p, L, &X); }


/* ----------------------------------------------------------- expressions */

%type expr_list {List *}
expr_list(A) ::= a_expr(X). { A = make_list1(p, X); }
expr_list(A) ::= expr_list(L) COMMA a_expr(X). { A = make_list_append(p, L, X); }

a_expr(A) ::= c_expr(X). { A = X; }
a_expr(A) ::= a_expr(X) TYPECAST(T) typename(Y). { A = make_typecast(p, X, Y, T.offset); }
a_expr(A) ::= PLUS(O) a_expr(X). [UMINUS] { A = make_op(p, "+", NULL, X, O.offset); }
a_expr(A) ::= MINUS(O) a_expr(X). [UMINUS] { A = make_negate(p, X, O.offset); }
a_expr(A) ::= a_expr(X) PLUS(O) a_expr(Y). { A = make_op(p, "+", X, Y, O.offset); }
a_expr(A) ::= a_expr(X) MINUS(O) a_expr(Y). { A = make_op(p, "-", X, Y, O.offset); }
a_expr(A) ::= a_expr(X) STAR(O) a_expr(Y). { A = make_op(p, "*", X, Y, O.offset); }
a_expr(A) ::= a_expr(X) SLASH(O) a_expr(Y). { A = make_op(p, "/", X, Y, O.offset); }
a_expr(A) ::= a_expr(X) PERCENT(O) a_expr(Y). { A = make_op(p, "%", X, Y, O.offset); }
a_expr(A) ::= a_expr(X) CARET(O) a_expr(Y). { A = make_op(p, "^", X, Y, O.offset); }
a_expr(A) ::= a_expr(X) LT(O) a_expr(Y). { A = make_op(p, "<", X, Y, O.offset); }
a_expr(A) ::= a_expr(X) GT(O) a_expr(Y). { A = make_op(p, ">", X, Y, O.offset); }
a_expr(A) ::= a_expr(X) EQ(O) a_expr(Y). { A = make_op(p, "=", X, Y, O.offset); }
a_expr(A) ::= a_expr(X) LE(O) a_expr(Y). { A = make_op(p, "<=", X, Y, O.offset); }
a_expr(A) ::= a_expr(X) GE(O) a_expr(Y). { A = make_op(p, ">=", X, Y, O.offset); }
a_expr(A) ::= a_expr(X) NE(O) a_expr(Y). { A = make_op(p, "<>", X, Y, O.offset); }
a_expr(A) ::= a_expr(X) OP(O) a_expr(Y). { A = make_op_token(p, &O, X, Y); }
a_expr(A) ::= OP(O) a_expr(X). { A = make_op_token(p, &O, NULL, X); }
a_expr(A) ::= a_expr(X) AND(O) a_expr(Y). { A = make_and(p, X, Y, O.offset); }
a_expr(A) ::= a_expr(X) OR(O) a_expr(Y). { A = make_or(p, X, Y, O.offset); }
a_expr(A) ::= NOT(O) a_expr(X). { A = make_not(p, X, O.offset); }
a_expr(A) ::= a_expr(X) LIKE(O) a_expr(Y). { A = make_like(p, AEXPR_LIKE, "~~", X, Y, NULL, O.offset); }
a_expr(A) ::= a_expr(X) LIKE(O) a_expr(Y) ESCAPE a_expr(E). [LIKE] { A = make_like(p, AEXPR_LIKE, "~~", X, Y, E, O.offset); }
a_expr(A) ::= a_expr(X) NOT_LA(O) LIKE a_expr(Y). [NOT_LA] { A = make_like(p, AEXPR_LIKE, "!~~", X, Y, NULL, O.offset); }
a_expr(A) ::= a_expr(X) NOT_LA(O) LIKE a_expr(Y) ESCAPE a_expr(E). [NOT_LA] { A = make_like(p, AEXPR_LIKE, "!~~", X, Y, E, O.offset); }
a_expr(A) ::= a_expr(X) ILIKE(O) a_expr(Y). { A = make_like(p, AEXPR_ILIKE, "~~*", X, Y, NULL, O.offset); }
a_expr(A) ::= a_expr(X) ILIKE(O) a_expr(Y) ESCAPE a_expr(E). [ILIKE] { A = make_like(p, AEXPR_ILIKE, "~~*", X, Y, E, O.offset); }
a_expr(A) ::= a_expr(X) NOT_LA(O) ILIKE a_expr(Y). [NOT_LA] { A = make_like(p, AEXPR_ILIKE, "!~~*", X, Y, NULL, O.offset); }
a_expr(A) ::= a_expr(X) NOT_LA(O) ILIKE a_expr(Y) ESCAPE a_expr(E). [NOT_LA] { A = make_like(p, AEXPR_ILIKE, "!~~*", X, Y, E, O.offset); }
a_expr(A) ::= a_expr(X) IS(O) NULL. [IS] { A = make_null_test(p, X, false, O.offset); }
a_expr(A) ::= a_expr(X) ISNULL(O). { A = make_null_test(p, X, false, O.offset); }
a_expr(A) ::= a_expr(X) IS(O) NOT NULL. [IS] { A = make_null_test(p, X, true, O.offset); }
a_expr(A) ::= a_expr(X) NOTNULL(O). { A = make_null_test(p, X, true, O.offset); }
a_expr(A) ::= a_expr(X) IS(O) TRUE. [IS] { A = make_bool_test(p, X, IS_TRUE, O.offset); }
a_expr(A) ::= a_expr(X) IS(O) NOT TRUE. [IS] { A = make_bool_test(p, X, IS_NOT_TRUE, O.offset); }
a_expr(A) ::= a_expr(X) IS(O) FALSE. [IS] { A = make_bool_test(p, X, IS_FALSE, O.offset); }
a_expr(A) ::= a_expr(X) IS(O) NOT FALSE. [IS] { A = make_bool_test(p, X, IS_NOT_FALSE, O.offset); }
a_expr(A) ::= a_expr(X) IS(O) UNKNOWN. [IS] { A = make_bool_test(p, X, IS_UNKNOWN, O.offset); }
a_expr(A) ::= a_expr(X) IS(O) NOT UNKNOWN. [IS] { A = make_bool_test(p, X, IS_NOT_UNKNOWN, O.offset); }
a_expr(A) ::= a_expr(X) IS(O) DISTINCT FROM a_expr(Y). [IS] { A = make_aexpr(p, AEXPR_DISTINCT, "=", X, Y, O.offset); }
a_expr(A) ::= a_expr(X) IS(O) NOT DISTINCT FROM a_expr(Y). [IS] { A = make_aexpr(p, AEXPR_NOT_DISTINCT, "=", X, Y, O.offset); }
a_expr(A) ::= a_expr(X) BETWEEN(O) opt_asymmetric b_expr(L) AND a_expr(H). [BETWEEN] { A = make_between(p, AEXPR_BETWEEN, X, L, H, O.offset); }
a_expr(A) ::= a_expr(X) NOT_LA(O) BETWEEN opt_asymmetric b_expr(L) AND a_expr(H). [NOT_LA] { A = make_between(p, AEXPR_NOT_BETWEEN, X, L, H, O.offset); }
a_expr(A) ::= a_expr(X) BETWEEN(O) SYMMETRIC b_expr(L) AND a_expr(H). [BETWEEN] { A = make_between(p, AEXPR_BETWEEN_SYM, X, L, H, O.offset); }
a_expr(A) ::= a_expr(X) NOT_LA(O) BETWEEN SYMMETRIC b_expr(L) AND a_expr(H). [NOT_LA] { A = make_between(p, AEXPR_NOT_BETWEEN_SYM, X, L, H, O.offset); }
a_expr(A) ::= a_expr(X) IN(O) LP expr_list(L) RP. { A = make_in(p, "=", X, L, O.offset); }
a_expr(A) ::= a_expr(X) NOT_LA(O) IN LP expr_list(L) RP. [NOT_LA] { A = make_in(p, "<>", X, L, O.offset); }

opt_asymmetric ::= .
opt_asymmetric ::= ASYMMETRIC.

/* b_expr: a_expr without the boolean operators, for BETWEEN's lower bound
 * (so that its AND is not taken for a boolean AND). */
b_expr(A) ::= c_expr(X). { A = X; }
b_expr(A) ::= b_expr(X) TYPECAST(T) typename(Y). { A = make_typecast(p, X, Y, T.offset); }
b_expr(A) ::= PLUS(O) b_expr(X). [UMINUS] { A = make_op(p, "+", NULL, X, O.offset); }
b_expr(A) ::= MINUS(O) b_expr(X). [UMINUS] { A = make_negate(p, X, O.offset); }
b_expr(A) ::= b_expr(X) PLUS(O) b_expr(Y). { A = make_op(p, "+", X, Y, O.offset); }
b_expr(A) ::= b_expr(X) MINUS(O) b_expr(Y). { A = make_op(p, "-", X, Y, O.offset); }
b_expr(A) ::= b_expr(X) STAR(O) b_expr(Y). { A = make_op(p, "*", X, Y, O.offset); }
b_expr(A) ::= b_expr(X) SLASH(O) b_expr(Y). { A = make_op(p, "/", X, Y, O.offset); }
b_expr(A) ::= b_expr(X) PERCENT(O) b_expr(Y). { A = make_op(p, "%", X, Y, O.offset); }
b_expr(A) ::= b_expr(X) CARET(O) b_expr(Y). { A = make_op(p, "^", X, Y, O.offset); }
b_expr(A) ::= b_expr(X) LT(O) b_expr(Y). { A = make_op(p, "<", X, Y, O.offset); }
b_expr(A) ::= b_expr(X) GT(O) b_expr(Y). { A = make_op(p, ">", X, Y, O.offset); }
b_expr(A) ::= b_expr(X) EQ(O) b_expr(Y). { A = make_op(p, "=", X, Y, O.offset); }
b_expr(A) ::= b_expr(X) LE(O) b_expr(Y). { A = make_op(p, "<=", X, Y, O.offset); }
b_expr(A) ::= b_expr(X) GE(O) b_expr(Y). { A = make_op(p, ">=", X, Y, O.offset); }
b_expr(A) ::= b_expr(X) NE(O) b_expr(Y). { A = make_op(p, "<>", X, Y, O.offset); }
b_expr(A) ::= b_expr(X) OP(O) b_expr(Y). { A = make_op_token(p, &O, X, Y); }
b_expr(A) ::= OP(O) b_expr(X). { A = make_op_token(p, &O, NULL, X); }
b_expr(A) ::= b_expr(X) IS(O) DISTINCT FROM b_expr(Y). [IS] { A = make_aexpr(p, AEXPR_DISTINCT, "=", X, Y, O.offset); }
b_expr(A) ::= b_expr(X) IS(O) NOT DISTINCT FROM b_expr(Y). [IS] { A = make_aexpr(p, AEXPR_NOT_DISTINCT, "=", X, Y, O.offset); }

c_expr(A) ::= name_list(N). { A = make_column_ref(p, N); }
c_expr(A) ::= PARAM(X). { A = make_param(p, &X); }
c_expr(A) ::= LP a_expr(X) RP. { A = X; }
c_expr(A) ::= ICONST(X). { A = make_integer(p, &X); }
c_expr(A) ::= FCONST(X). { A = make_decimal(p, &X); }
c_expr(A) ::= STRING(X). { A = make_string(p, &X); }
c_expr(A) ::= TRUE(X). { A = make_bool_const(p, &X, true); }
c_expr(A) ::= FALSE(X). { A = make_bool_const(p, &X, false); }
c_expr(A) ::= NULL(X). { A = make_null_const(p, &X); }
c_expr(A) ::= name_list(N) STRING(S). { A = make_typed_literal(p, make_generic_type(p, N, NULL), &S); }
c_expr(A) ::= simple_typename(T) STRING(S). { A = make_typed_literal(p, T, &S); }
c_expr(A) ::= case_expr(X). { A = X; }
c_expr(A) ::= func_expr(X). { A = X; }

func_expr(A) ::= name_list(N) LP RP. { A = make_func_call(p, N, NULL, false, false); }
func_expr(A) ::= name_list(N) LP func_args(X) RP. { A = make_func_call(p, N, X, false, false); }
func_expr(A) ::= name_list(N) LP ALL func_args(X) RP. { A = make_func_call(p, N, X, false, false); }
func_expr(A) ::= name_list(N) LP DISTINCT func_args(X) RP. { A = make_func_call(p, N, X, false, true); }
func_expr(A) ::= name_list(N) LP STAR RP. { A = make_func_call(p, N, NULL, true, false); }
func_expr(A) ::= CAST(C) LP a_expr(X) AS typename(T) RP. { A = make_typecast(p, X, T, C.offset); }
func_expr(A) ::= COALESCE(C) LP expr_list(L) RP. { A = make_coalesce(p, L, C.offset); }
func_expr(A) ::= NULLIF(C) LP a_expr(X) COMMA a_expr(Y) RP. { A = make_nullif(p, X, Y, C.offset); }
func_expr(A) ::= GREATEST(C) LP expr_list(L) RP. { A = make_minmax(p, true, L, C.offset); }
func_expr(A) ::= LEAST(C) LP expr_list(L) RP. { A = make_minmax(p, false, L, C.offset); }

%type func_args {List *}
func_args(A) ::= a_expr(X). { A = make_list1(p, X); }
func_args(A) ::= func_args(L) COMMA a_expr(X). { A = make_list_append(p, L, X); }

case_expr(A) ::= CASE(C) case_arg(X) when_list(W) case_default(D) END. { A = make_case(p, X, W, D, C.offset); }
case_arg(A) ::= . { A = NULL; }
case_arg(A) ::= a_expr(X). { A = X; }
%type when_list {List *}
when_list(A) ::= when_clause(X). { A = make_list1(p, X); }
when_list(A) ::= when_list(L) when_clause(X). { A = make_list_append(p, L, X); }
when_clause(A) ::= WHEN(W) a_expr(X) THEN a_expr(Y). { A = make_case_when(p, X, Y, W.offset); }
case_default(A) ::= . { A = NULL; }
case_default(A) ::= ELSE a_expr(X). { A = X; }

/* ----------------------------------------------------------------- types */

typename(A) ::= simple_typename(X). { A = X; }
typename(A) ::= name_list(N) opt_type_mods(M). { A = make_generic_type(p, N, M); }

%type opt_type_mods {List *}
opt_type_mods(A) ::= . { A = NULL; }
opt_type_mods(A) ::= LP expr_list(X) RP. { A = X; }

/* The SQL-standard type names that are keywords; those that can start a
 * typed literal (TIMESTAMP '...') are const_typename. */
simple_typename(A) ::= const_typename(X). { A = X; }
simple_typename(A) ::= INT(T). { A = make_type_name(p, "int4", NULL, T.offset); }
simple_typename(A) ::= INTEGER(T). { A = make_type_name(p, "int4", NULL, T.offset); }
simple_typename(A) ::= SMALLINT(T). { A = make_type_name(p, "int2", NULL, T.offset); }
simple_typename(A) ::= BIGINT(T). { A = make_type_name(p, "int8", NULL, T.offset); }
simple_typename(A) ::= REAL(T). { A = make_type_name(p, "float4", NULL, T.offset); }
simple_typename(A) ::= FLOAT(T). { A = make_float_type(p, NULL, T.offset); }
simple_typename(A) ::= FLOAT(T) LP ICONST(P) RP. { A = make_float_type(p, &P, T.offset); }
simple_typename(A) ::= DOUBLE(T) PRECISION. { A = make_type_name(p, "float8", NULL, T.offset); }
simple_typename(A) ::= DECIMAL(T) opt_type_mods(M). { A = make_type_name(p, "numeric", M, T.offset); }
simple_typename(A) ::= DEC(T) opt_type_mods(M). { A = make_type_name(p, "numeric", M, T.offset); }
simple_typename(A) ::= NUMERIC(T) opt_type_mods(M). { A = make_type_name(p, "numeric", M, T.offset); }
simple_typename(A) ::= BOOLEAN(T). { A = make_type_name(p, "bool", NULL, T.offset); }
simple_typename(A) ::= VARCHAR(T) opt_type_mods(M). { A = make_type_name(p, "varchar", M, T.offset); }
simple_typename(A) ::= CHARACTER(T) VARYING opt_type_mods(M). { A = make_type_name(p, "varchar", M, T.offset); }
simple_typename(A) ::= CHAR(T) VARYING opt_type_mods(M). { A = make_type_name(p, "varchar", M, T.offset); }

const_typename(A) ::= TIMESTAMP(T). { A = make_type_name(p, "timestamp", NULL, T.offset); }
const_typename(A) ::= TIMESTAMP(T) WITHOUT TIME ZONE. { A = make_type_name(p, "timestamp", NULL, T.offset); }
const_typename(A) ::= TIMESTAMP(T) WITH_LA TIME ZONE. { A = make_type_name(p, "timestamptz", NULL, T.offset); }
const_typename(A) ::= INTERVAL(T). { A = make_type_name(p, "interval", NULL, T.offset); }
