/*
 * sql.y -- sluice's SQL grammar, for the Lemon parser generator.
 *
 * The shapes and precedences are PostgreSQL 15's gram.y, cut down to what
 * sluice runs, plus its own statements (streams, sinks, continuous queries,
 * SUBSCRIBE); every action is one line that calls a constructor from
 * src/sql/parse_nodes.c, parse_stmts.c or parse_roles.c (make_*, and
 * xact_mode* for transaction modes), which records the node's text offset,
 * or passes a value up.
 * The tokenizer (src/sql/tokenize.c) feeds tokens; src/sql/parse.c drives
 * the parser, turning NOT before BETWEEN/IN/LIKE/ILIKE/SIMILAR into NOT_LA, WITH
 * before TIME into WITH_LA (gram.y's lookahead tokens) and WINDOW before a
 * name into WINDOW_LA (the WINDOW clause), and feeds a final
 * SEMI so the last statement needs no semicolon.
 *
 * Keywords: grammar/keywords.txt lists them with their categories
 * (PostgreSQL's, but for sluice's own words and WINDOW).  The unreserved
 * ones are in the %fallback ID list below, so that they stay usable as
 * names (window, session, stream, ...): gen_keywords.py checks that the two
 * lists agree.
 *
 * Statements sluice does not run yet are recognised by their first words
 * and parsed into an UnsupportedStmt, which the analyzer refuses with 0A000
 * naming them (CREATE INDEX, TRUNCATE, SAVEPOINT, ...).
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
%token NOT_LA WITH_LA WINDOW_LA.

/* Keywords declared before the rules below use them, so that their token
 * numbers do not move with the rules' order.  keywords.c maps each word of
 * keywords.txt to its TK_ code, so every keyword must have a token. */
%token ABORT BY DAY HOUR MINUTE MONTH SECOND YEAR LISTEN SINK STREAM
       SUBSCRIBE TRIGGER WATERMARK WINDOW SESSION TRUNCATE EXPLAIN ORDER LIMIT
       OFFSET ON SOME BACKUP.

/* After AS any word is a name, reserved or not (gram.y's ColLabel). */
%token_class col_label ID|ALL|AND|AS|ASYMMETRIC|BETWEEN|BIGINT|BOOLEAN|CASE
  |CAST|CHAR|CHARACTER|COALESCE|DEC|DECIMAL|DISTINCT|ELSE|END|FALSE|FLOAT
  |FROM|GREATEST|GROUP|HAVING|ILIKE|IN|INT|INTEGER|INTERVAL|IS|ISNULL|LEAST
  |LIKE|LIMIT|NOT|NOTNULL|NULL|NULLIF|NUMERIC|OFFSET|ON|OR|ORDER|PRECISION
  |REAL|SELECT|SIMILAR|SMALLINT|SYMMETRIC|THEN|TIME|TIMESTAMP|TO|TRUE|VALUES|VARCHAR
  |WHEN|WHERE|WITH|ANALYZE|ASC|CHECK|CONSTRAINT|CROSS|DEFAULT|DESC|DO|EXCEPT
  |EXISTS|FOR|FOREIGN|FULL|INNER|INTERSECT|INTO|JOIN|LEFT|NATURAL|OUTER|PRIMARY
  |REFERENCES|RETURNING|RIGHT|TABLE|UNION|UNIQUE|USING
  |BOTH|CURRENT_DATE|CURRENT_TIMESTAMP|EXTRACT|LEADING|LOCALTIMESTAMP|POSITION
  |SUBSTRING|TRAILING|TRIM
  |ANY|ARRAY|COLLATE|CURRENT_CATALOG|CURRENT_SCHEMA|CURRENT_USER|OPERATOR|SESSION_USER|USER|GRANT
  |DEFERRABLE|ONLY|SOME|LATERAL.

/* The unreserved keywords: a name wherever a keyword cannot be. */
%fallback ID ABORT ALTER BACKUP BEGIN BY COMMIT COPY CREATE DAY DEALLOCATE DELETE
      DISCARD DOUBLE DROP ESCAPE EXECUTE EXPLAIN HOUR INSERT LISTEN LOCAL
      MINUTE MONTH PREPARE RESET ROLLBACK SECOND SESSION SET SHOW SINK START
      STREAM SUBSCRIBE TRANSACTION TRIGGER TRUNCATE UNKNOWN UPDATE VARYING
      WATERMARK WINDOW WITHOUT WORK YEAR ZONE ORDINALITY
      CASCADE CONFLICT CONTINUOUS FILTER FIRST IF KEY LAST NOTHING NULLS PAUSE
      QUERY RECURSIVE REPLACE RESTRICT RESUME OPERATOR OVER PARTITION
      AT
      ENCRYPTED PASSWORD PRIVILEGES RENAME REVOKE ROLE UNTIL VALID
      CHAIN CHARACTERISTICS COMMITTED ISOLATION LEVEL NO PREPARED
      READ RELEASE REPEATABLE SAVEPOINT SERIALIZABLE UNCOMMITTED WRITE
      CURRENT EXCLUDE FOLLOWING GROUPS OTHERS PRECEDING RANGE ROW ROWS TIES
      UNBOUNDED MATERIALIZED SEARCH CYCLE DEPTH BREADTH
      CUBE GROUPING ROLLUP SETS WITHIN
      VIEW COLUMN ALWAYS GENERATED IDENTITY STORED.

/* Anything at all (the rule "anything"): a SET's value (the settings
 * parse it, from VariableSetStmt.value_offset), what follows a FOREIGN KEY's REFERENCES, and the
 * rest of a statement recognised only by its first words. */
%wildcard ANYTOKEN.

/* gram.y's precedence, lowest first. */
%left UNION EXCEPT.
%left INTERSECT.
%left OR.
%left AND.
%right NOT.
%nonassoc IS ISNULL NOTNULL.
%nonassoc LT GT EQ LE GE NE.
%nonassoc BETWEEN IN LIKE ILIKE SIMILAR NOT_LA.
%nonassoc ESCAPE.
%left OP OPERATOR.
%left PLUS MINUS.
%left STAR SLASH PERCENT.
%left CARET.
%left AT.
%left COLLATE.
%right UMINUS.
%left LBRACKET RBRACKET.
%left LP RP.
%left JOIN CROSS LEFT FULL RIGHT INNER NATURAL.
%left TYPECAST.
%left DOT.

/* ------------------------------------------------------------ statements */

input ::= stmt_list.
stmt_list ::= stmt_list stmt_semi.
stmt_list ::= stmt_semi.
stmt_semi ::= SEMI.
stmt_semi ::= stmt(S) SEMI(T). { parse_add_stmt(p, S, &T); }

stmt(A) ::= select_stmt(X). { A = X; }
stmt(A) ::= insert_stmt(X). { A = X; }
stmt(A) ::= update_stmt(X). { A = X; }
stmt(A) ::= delete_stmt(X). { A = X; }
stmt(A) ::= create_stmt(X). { A = X; }
stmt(A) ::= drop_stmt(X). { A = X; }
stmt(A) ::= explain_stmt(X). { A = X; }
stmt(A) ::= transaction_stmt(X). { A = X; }
stmt(A) ::= deallocate_stmt(X). { A = X; }
stmt(A) ::= copy_stmt(X). { A = X; }
stmt(A) ::= role_stmt(X). { A = X; }
stmt(A) ::= grant_stmt(X). { A = X; }
stmt(A) ::= SET(T) opt_set_scope(S) set_name(N) anything. { A = make_variable_set(p, &T, &N, S); }
stmt(A) ::= RESET(T) set_name(N). { A = make_variable_reset(p, &T, N.z); }
stmt(A) ::= RESET(T) ALL. { A = make_variable_reset(p, &T, "all"); }
stmt(A) ::= SHOW(T) set_name(N). { A = make_show(p, &T, N.z); }
stmt(A) ::= SHOW(T) ALL. { A = make_show(p, &T, "all"); }
stmt(A) ::= SHOW(T) TRANSACTION ISOLATION LEVEL. { A = make_show(p, &T, "transaction_isolation"); }
stmt(A) ::= SUBSCRIBE(T) name_list(N) opt_with_options(O). { A = make_subscribe(p, &T, N, O); }
stmt(A) ::= BACKUP(T) TO STRING(S). { A = make_backup(p, &T, &S); }
stmt(A) ::= ALTER(T) CONTINUOUS QUERY name_list(N) PAUSE. { A = make_alter_cq(p, &T, N, true); }
stmt(A) ::= ALTER(T) CONTINUOUS QUERY name_list(N) RESUME. { A = make_alter_cq(p, &T, N, false); }
stmt(A) ::= ALTER(T) ID(X) anything. { A = make_unsupported2(p, &T, &X); }
/* ALTER TABLE | VIEW [IF EXISTS] name RENAME TO new_name | RENAME [COLUMN]
 * a TO b | ALTER [COLUMN] a SET NOT NULL | ALTER [COLUMN] a DROP NOT NULL;
 * the other actions are parsed by their first words and refused. */
stmt(A) ::= ALTER(T) TABLE opt_if_exists(E) name_list(N) alter_cmd(C). { A = make_alter_table(p, &T, OBJECT_TABLE, E, N, C); }
stmt(A) ::= ALTER(T) VIEW opt_if_exists(E) name_list(N) alter_cmd(C). { A = make_alter_table(p, &T, OBJECT_VIEW, E, N, C); }
alter_cmd(A) ::= RENAME TO ID(X). { A = make_alter_cmd(p, ALTER_RENAME, NULL, &X); }
alter_cmd(A) ::= RENAME opt_column ID(C) TO ID(X). { A = make_alter_cmd(p, ALTER_RENAME_COLUMN, &C, &X); }
alter_cmd(A) ::= ALTER opt_column ID(C) SET NOT NULL. { A = make_alter_cmd(p, ALTER_SET_NOT_NULL, &C, NULL); }
alter_cmd(A) ::= ALTER opt_column ID(C) DROP NOT NULL. { A = make_alter_cmd(p, ALTER_DROP_NOT_NULL, &C, NULL); }
alter_cmd(A) ::= ALTER(T) opt_column ID SET DEFAULT anything. { A = make_alter_refused(p, &T, "ALTER COLUMN ... SET DEFAULT"); }
alter_cmd(A) ::= ALTER(T) opt_column ID DROP DEFAULT. { A = make_alter_refused(p, &T, "ALTER COLUMN ... DROP DEFAULT"); }
alter_cmd(A) ::= ALTER(T) opt_column ID ID anything. { A = make_alter_refused(p, &T, "ALTER COLUMN ... TYPE"); }
alter_cmd(A) ::= ID(T) anything. { A = make_alter_refused(p, &T, NULL); }
opt_column ::= .
opt_column ::= COLUMN.
stmt(A) ::= unsupported_kw(T) anything. { A = make_unsupported(p, &T); }

%type set_name {Token}
set_name(A) ::= ID(X). { A = X; }
set_name(A) ::= TIME(X) ZONE. { A = X; }
%type opt_set_scope {bool}
opt_set_scope(A) ::= . { A = false; }
opt_set_scope(A) ::= SESSION. { A = false; }
opt_set_scope(A) ::= LOCAL. { A = true; }

anything ::= .
anything ::= anything ANYTOKEN.

%type unsupported_kw {Token}
unsupported_kw(A) ::= DISCARD(X). { A = X; }
unsupported_kw(A) ::= PREPARE(X). { A = X; }
unsupported_kw(A) ::= EXECUTE(X). { A = X; }
unsupported_kw(A) ::= TRUNCATE(X). { A = X; }
unsupported_kw(A) ::= LISTEN(X). { A = X; }

/* gram.y's TransactionStmt: BEGIN [WORK | TRANSACTION] [modes], START
 * TRANSACTION [modes], COMMIT | END | ROLLBACK | ABORT [WORK | TRANSACTION]
 * [AND [NO] CHAIN], SET TRANSACTION modes, SET SESSION CHARACTERISTICS AS
 * TRANSACTION modes, SAVEPOINT name, RELEASE [SAVEPOINT] name, ROLLBACK
 * [WORK | TRANSACTION] TO [SAVEPOINT] name (the server runs them).
 * Two-phase commit is parsed and refused (0A000). */
transaction_stmt(A) ::= BEGIN(T) opt_transaction xact_modes(M). { A = make_transaction(p, &T, TRANS_BEGIN, M, false); }
transaction_stmt(A) ::= START(T) TRANSACTION xact_modes(M). { A = make_transaction(p, &T, TRANS_START, M, false); }
transaction_stmt(A) ::= COMMIT(T) opt_transaction opt_chain(C). { A = make_transaction(p, &T, TRANS_COMMIT, xact_modes_none(), C); }
transaction_stmt(A) ::= END(T) opt_transaction opt_chain(C). { A = make_transaction(p, &T, TRANS_COMMIT, xact_modes_none(), C); }
transaction_stmt(A) ::= ROLLBACK(T) opt_transaction opt_chain(C). { A = make_transaction(p, &T, TRANS_ROLLBACK, xact_modes_none(), C); }
transaction_stmt(A) ::= ABORT(T) opt_transaction opt_chain(C). { A = make_transaction(p, &T, TRANS_ROLLBACK, xact_modes_none(), C); }
transaction_stmt(A) ::= SET(T) TRANSACTION xact_mode_list(M). { A = make_transaction(p, &T, TRANS_SET, M, false); }
transaction_stmt(A) ::= SET(T) SESSION CHARACTERISTICS AS TRANSACTION xact_mode_list(M). { A = make_transaction(p, &T, TRANS_SET_SESSION, M, false); }
transaction_stmt(A) ::= SAVEPOINT(T) ID(N). { A = make_savepoint(p, &T, TRANS_SAVEPOINT, &N); }
transaction_stmt(A) ::= RELEASE(T) opt_savepoint ID(N). { A = make_savepoint(p, &T, TRANS_RELEASE, &N); }
transaction_stmt(A) ::= ROLLBACK(T) opt_transaction TO opt_savepoint ID(N). { A = make_savepoint(p, &T, TRANS_ROLLBACK_TO, &N); }
transaction_stmt(A) ::= COMMIT(T) PREPARED STRING. { A = make_unsupported_named(p, &T, "COMMIT PREPARED"); }
transaction_stmt(A) ::= ROLLBACK(T) PREPARED STRING. { A = make_unsupported_named(p, &T, "ROLLBACK PREPARED"); }
opt_transaction ::= .
opt_transaction ::= WORK.
opt_transaction ::= TRANSACTION.
opt_savepoint ::= .
opt_savepoint ::= SAVEPOINT.
%type opt_chain {bool}
opt_chain(A) ::= . { A = false; }
opt_chain(A) ::= AND CHAIN. { A = true; }
opt_chain(A) ::= AND NO CHAIN. { A = false; }
%type xact_modes {XactModes}
xact_modes(A) ::= . { A = xact_modes_none(); }
xact_modes(A) ::= xact_mode_list(L). { A = L; }
%type xact_mode_list {XactModes}
xact_mode_list(A) ::= xact_mode(M). { A = M; }
xact_mode_list(A) ::= xact_mode_list(L) COMMA xact_mode(M). { A = xact_modes_merge(L, M); }
xact_mode_list(A) ::= xact_mode_list(L) xact_mode(M). { A = xact_modes_merge(L, M); }
%type xact_mode {XactModes}
xact_mode(A) ::= ISOLATION(T) LEVEL iso_level(I). { A = xact_mode_isolation(&T, I); }
xact_mode(A) ::= READ(T) ONLY. { A = xact_mode_read_only(&T, XACT_ON); }
xact_mode(A) ::= READ(T) WRITE. { A = xact_mode_read_only(&T, XACT_OFF); }
xact_mode(A) ::= DEFERRABLE. { A = xact_mode_deferrable(XACT_ON); }
xact_mode(A) ::= NOT DEFERRABLE. { A = xact_mode_deferrable(XACT_OFF); }
%type iso_level {XactIsolation}
iso_level(A) ::= READ UNCOMMITTED. { A = XACT_READ_UNCOMMITTED; }
iso_level(A) ::= READ COMMITTED. { A = XACT_READ_COMMITTED; }
iso_level(A) ::= REPEATABLE READ. { A = XACT_REPEATABLE_READ; }
iso_level(A) ::= SERIALIZABLE. { A = XACT_SERIALIZABLE; }

/* DEALLOCATE [PREPARE] name | ALL.  A lone DEALLOCATE PREPARE names the
 * statement "prepare", as in gram.y (PREPARE is unreserved). */
deallocate_stmt(A) ::= DEALLOCATE(T) ID(N). { A = make_deallocate(p, &T, &N); }
deallocate_stmt(A) ::= DEALLOCATE(T) PREPARE ID(N). { A = make_deallocate(p, &T, &N); }
deallocate_stmt(A) ::= DEALLOCATE(T) PREPARE(N). { A = make_deallocate(p, &T, &N); }
deallocate_stmt(A) ::= DEALLOCATE(T) ALL. { A = make_deallocate(p, &T, NULL); }
deallocate_stmt(A) ::= DEALLOCATE(T) PREPARE ALL. { A = make_deallocate(p, &T, NULL); }

/* ------------------------------------------------------------------- DDL */

/* CREATE TABLE | STREAM [IF NOT EXISTS] name (elements) [WITH (options)],
 * CREATE SINK name WITH (options),
 * CREATE [OR REPLACE] CONTINUOUS QUERY name [INTO target] [WITH (...)] AS query */
create_stmt(A) ::= CREATE(T) TABLE opt_if_not_exists(E) name_list(N) LP table_elts(L) RP opt_with_options(O). { A = make_create(p, &T, OBJECT_TABLE, E, N, L, O); }
create_stmt(A) ::= CREATE(T) STREAM opt_if_not_exists(E) name_list(N) LP table_elts(L) RP opt_with_options(O). { A = make_create(p, &T, OBJECT_STREAM, E, N, L, O); }
create_stmt(A) ::= CREATE(T) SINK opt_if_not_exists(E) name_list(N) opt_with_options(O). { A = make_create(p, &T, OBJECT_SINK, E, N, NULL, O); }
/* CONTINUOUS follows CREATE in the rule itself: after an optional OR
 * REPLACE, Lemon would shift the unreserved CONTINUOUS as the ID of
 * "CREATE ID anything" (its %fallback comes before a default reduce). */
create_stmt(A) ::= CREATE(T) CONTINUOUS QUERY opt_if_not_exists(E) name_list(N) opt_into(I) opt_with_options(O) AS select_stmt(S). { A = make_create_cq(p, &T, false, E, N, I, O, S); }
create_stmt(A) ::= CREATE(T) OR REPLACE CONTINUOUS QUERY opt_if_not_exists(E) name_list(N) opt_into(I) opt_with_options(O) AS select_stmt(S). { A = make_create_cq(p, &T, true, E, N, I, O, S); }
/* CREATE [OR REPLACE] VIEW name [(column, ...)] AS query */
create_stmt(A) ::= CREATE(T) VIEW name_list(N) opt_view_cols(C) AS select_stmt(S). { A = make_create_view(p, &T, false, N, C, S); }
create_stmt(A) ::= CREATE(T) OR REPLACE VIEW name_list(N) opt_view_cols(C) AS select_stmt(S). { A = make_create_view(p, &T, true, N, C, S); }
create_stmt(A) ::= CREATE(T) ID(X) anything. { A = make_unsupported2(p, &T, &X); }
create_stmt(A) ::= CREATE(T) UNIQUE(X) anything. { A = make_unsupported2(p, &T, &X); }

%type opt_view_cols {List *}
opt_view_cols(A) ::= . { A = NULL; }
opt_view_cols(A) ::= LP column_ref_list(L) RP. { A = L; }

%type opt_if_not_exists {bool}
opt_if_not_exists(A) ::= . { A = false; }
opt_if_not_exists(A) ::= IF NOT EXISTS. { A = true; }
%type opt_if_exists {bool}
opt_if_exists(A) ::= . { A = false; }
opt_if_exists(A) ::= IF EXISTS. { A = true; }
opt_into(A) ::= . { A = NULL; }
opt_into(A) ::= INTO name_list(N). { A = make_range_var(p, N, NULL); }

%type table_elts {List *}
table_elts(A) ::= table_elt(X). { A = make_list1(p, X); }
table_elts(A) ::= table_elts(L) COMMA table_elt(X). { A = make_list_append(p, L, X); }
table_elt(A) ::= ID(N) typename(T) col_constraints(C). { A = make_column_def(p, &N, T, C); }
table_elt(A) ::= table_constraint(X). { A = X; }
table_elt(A) ::= CONSTRAINT ID(N) table_constraint(X). { A = constraint_named(p, X, &N); }
table_elt(A) ::= WATERMARK(W) FOR ID(C) AS a_expr(E). { A = make_watermark(p, &W, &C, E); }
/* a column named watermark (the rule above takes the keyword first) */
table_elt(A) ::= WATERMARK(N) typename(T) col_constraints(C). { A = make_column_def(p, &N, T, C); }

table_constraint(A) ::= PRIMARY(T) KEY LP column_ref_list(L) RP. { A = make_constraint(p, CONSTR_PRIMARY, T.offset, L); }
table_constraint(A) ::= UNIQUE(T) LP column_ref_list(L) RP. { A = make_constraint(p, CONSTR_UNIQUE, T.offset, L); }
table_constraint(A) ::= CHECK(T) LP a_expr(E) RP. { A = make_check(p, T.offset, E); }
table_constraint(A) ::= FOREIGN(T) KEY LP column_ref_list RP REFERENCES anything. { A = make_constraint(p, CONSTR_FOREIGN, T.offset, NULL); }

%type column_ref_list {List *}
column_ref_list(A) ::= ID(X). { A = make_list1(p, make_column_ref(p, make_name_list(p, &X))); }
column_ref_list(A) ::= column_ref_list(L) COMMA ID(X). { A = make_list_append(p, L, make_column_ref(p, make_name_list(p, &X))); }

%type col_constraints {List *}
col_constraints(A) ::= . { A = NULL; }
col_constraints(A) ::= col_constraints(L) col_constraint(X). { A = make_list_append(p, L, X); }
col_constraint(A) ::= CONSTRAINT ID(N) col_constraint(X). { A = constraint_named(p, X, &N); }
col_constraint(A) ::= NOT(T) NULL. { A = make_constraint(p, CONSTR_NOTNULL, T.offset, NULL); }
col_constraint(A) ::= NULL(T). { A = make_constraint(p, CONSTR_NULL, T.offset, NULL); }
col_constraint(A) ::= PRIMARY(T) KEY. { A = make_constraint(p, CONSTR_PRIMARY, T.offset, NULL); }
col_constraint(A) ::= UNIQUE(T). { A = make_constraint(p, CONSTR_UNIQUE, T.offset, NULL); }
col_constraint(A) ::= CHECK(T) LP a_expr(E) RP. { A = make_check(p, T.offset, E); }
col_constraint(A) ::= DEFAULT(T) b_expr(E). { A = make_default(p, T.offset, E); }
/* identity and generated columns: parsed to be refused by name */
col_constraint(A) ::= GENERATED(T) ALWAYS AS IDENTITY opt_seq_options. { A = make_constraint(p, CONSTR_IDENTITY, T.offset, NULL); }
col_constraint(A) ::= GENERATED(T) BY DEFAULT AS IDENTITY opt_seq_options. { A = make_constraint(p, CONSTR_IDENTITY, T.offset, NULL); }
col_constraint(A) ::= GENERATED(T) ALWAYS AS LP a_expr RP STORED. { A = make_constraint(p, CONSTR_GENERATED, T.offset, NULL); }
opt_seq_options ::= .
opt_seq_options ::= LP anything RP.
col_constraint(A) ::= REFERENCES(T) name_list opt_ref_cols. { A = make_constraint(p, CONSTR_FOREIGN, T.offset, NULL); }
opt_ref_cols ::= .
opt_ref_cols ::= LP column_ref_list RP.

/* COPY name [(cols)] FROM STDIN | TO STDOUT [[WITH] (options)]
 * COPY (query) TO STDOUT [[WITH] (options)]
 * COPY (SUBSCRIBE name [WITH (snapshot)]) TO STDOUT [[WITH] (options)] */
copy_stmt(A) ::= COPY(T) name_list(N) opt_copy_cols(C) FROM ID(S) opt_copy_options(O). { A = make_copy(p, &T, N, C, NULL, false, &S, O); }
copy_stmt(A) ::= COPY(T) name_list(N) opt_copy_cols(C) TO ID(S) opt_copy_options(O). { A = make_copy(p, &T, N, C, NULL, true, &S, O); }
copy_stmt(A) ::= COPY(T) select_with_parens(Q) TO ID(S) opt_copy_options(O). { A = make_copy(p, &T, (Names){0}, NULL, Q, true, &S, O); }
copy_stmt(A) ::= COPY(T) LP SUBSCRIBE(U) name_list(N) opt_with_options(W) RP TO ID(S) opt_copy_options(O). { A = make_copy(p, &T, (Names){0}, NULL, make_subscribe(p, &U, N, W), true, &S, O); }
%type opt_copy_cols {List *}
opt_copy_cols(A) ::= . { A = NULL; }
opt_copy_cols(A) ::= LP column_ref_list(L) RP. { A = L; }
%type opt_copy_options {List *}
opt_copy_options(A) ::= . { A = NULL; }
opt_copy_options(A) ::= WITH LP copy_opt_list(L) RP. { A = L; }
opt_copy_options(A) ::= LP copy_opt_list(L) RP. { A = L; }
opt_copy_options(A) ::= ID(N). { A = make_list1(p, make_def_elem(p, &N, NULL)); }
%type copy_opt_list {List *}
copy_opt_list(A) ::= copy_opt(X). { A = make_list1(p, X); }
copy_opt_list(A) ::= copy_opt_list(L) COMMA copy_opt(X). { A = make_list_append(p, L, X); }
copy_opt(A) ::= col_label(N) def_arg(V). { A = make_def_elem(p, &N, V); }
copy_opt(A) ::= col_label(N). { A = make_def_elem(p, &N, NULL); }

%type opt_with_options {List *}
opt_with_options(A) ::= . { A = NULL; }
opt_with_options(A) ::= WITH LP def_list(L) RP. { A = L; }
%type def_list {List *}
def_list(A) ::= def_elem(X). { A = make_list1(p, X); }
def_list(A) ::= def_list(L) COMMA def_elem(X). { A = make_list_append(p, L, X); }
def_elem(A) ::= col_label(N) EQ def_arg(V). { A = make_def_elem(p, &N, V); }
def_elem(A) ::= col_label(N). { A = make_def_elem(p, &N, NULL); }
def_arg(A) ::= STRING(X). { A = make_string(p, &X); }
def_arg(A) ::= ICONST(X). { A = make_integer(p, &X); }
def_arg(A) ::= FCONST(X). { A = make_decimal(p, &X); }
def_arg(A) ::= MINUS(O) ICONST(X). { A = make_negate(p, make_integer(p, &X), O.offset); }
def_arg(A) ::= MINUS(O) FCONST(X). { A = make_negate(p, make_decimal(p, &X), O.offset); }
def_arg(A) ::= TRUE(X). { A = make_bool_const(p, &X, true); }
def_arg(A) ::= FALSE(X). { A = make_bool_const(p, &X, false); }
def_arg(A) ::= ID(X). { A = make_column_ref(p, make_name_list(p, &X)); }

/* DROP TABLE | STREAM | SINK | CONTINUOUS QUERY | VIEW [IF EXISTS] name, ... [CASCADE | RESTRICT] */
drop_stmt(A) ::= DROP(T) drop_kind(K) opt_if_exists(E) relation_list(L) opt_drop_behavior(B). { A = make_drop(p, &T, K, E, L, B); }
drop_stmt(A) ::= DROP(T) ID(X) anything. { A = make_unsupported2(p, &T, &X); }
%type drop_kind {ObjectKind}
drop_kind(A) ::= TABLE. { A = OBJECT_TABLE; }
drop_kind(A) ::= STREAM. { A = OBJECT_STREAM; }
drop_kind(A) ::= SINK. { A = OBJECT_SINK; }
drop_kind(A) ::= CONTINUOUS QUERY. { A = OBJECT_QUERY; }
drop_kind(A) ::= VIEW. { A = OBJECT_VIEW; }
%type relation_list {List *}
relation_list(A) ::= name_list(N). { A = make_list1(p, make_range_var(p, N, NULL)); }
relation_list(A) ::= relation_list(L) COMMA name_list(N). { A = make_list_append(p, L, make_range_var(p, N, NULL)); }
%type opt_drop_behavior {bool}
opt_drop_behavior(A) ::= . { A = false; }
opt_drop_behavior(A) ::= CASCADE. { A = true; }
opt_drop_behavior(A) ::= RESTRICT. { A = false; }

/* EXPLAIN [ANALYZE] stmt, EXPLAIN CONTINUOUS QUERY name */
explain_stmt(A) ::= EXPLAIN(T) explainable_stmt(S). { A = make_explain(p, &T, S, false); }
explain_stmt(A) ::= EXPLAIN(T) ANALYZE explainable_stmt(S). { A = make_explain(p, &T, S, true); }
explain_stmt(A) ::= EXPLAIN(T) CONTINUOUS QUERY name_list(N). { A = make_explain_cq(p, &T, N); }
explainable_stmt(A) ::= select_stmt(X). { A = X; }
explainable_stmt(A) ::= insert_stmt(X). { A = X; }
explainable_stmt(A) ::= update_stmt(X). { A = X; }
explainable_stmt(A) ::= delete_stmt(X). { A = X; }

/* ------------------------------------------------------ roles, privileges */

/* CREATE ROLE | USER name [WITH] option ..., ALTER ROLE | USER name [WITH]
 * option ... | RENAME TO name, DROP ROLE | USER [IF EXISTS] name, ...
 * Options are words (LOGIN, NOSUPERUSER, ...: checked by the runtime, as
 * gram.y's IDENT options are), [ENCRYPTED] PASSWORD 'x' | NULL and VALID
 * UNTIL 'timestamp'. */
role_stmt(A) ::= CREATE(T) ROLE ID(N) opt_with role_opts(O). { A = make_role_stmt(p, &T, ROLESTMT_CREATE, false, &N, O); }
role_stmt(A) ::= CREATE(T) USER ID(N) opt_with role_opts(O). { A = make_role_stmt(p, &T, ROLESTMT_CREATE, true, &N, O); }
role_stmt(A) ::= ALTER(T) role_or_user ID(N) opt_with role_opts(O). { A = make_role_stmt(p, &T, ROLESTMT_ALTER, false, &N, O); }
role_stmt(A) ::= ALTER(T) role_or_user ID(N) RENAME TO ID(M). { A = make_role_rename(p, &T, &N, &M); }
role_stmt(A) ::= DROP(T) role_or_user opt_if_exists(E) role_list(L). { A = make_role_drop(p, &T, E, L); }
role_or_user ::= ROLE.
role_or_user ::= USER.
opt_with ::= .
opt_with ::= WITH.
%type role_opts {List *}
role_opts(A) ::= . { A = NULL; }
role_opts(A) ::= role_opts(L) role_opt(X). { A = make_list_append(p, L, X); }
role_opt(A) ::= ID(N). { A = make_def_elem(p, &N, NULL); }
role_opt(A) ::= PASSWORD(N) STRING(S). { A = make_def_elem(p, &N, make_string(p, &S)); }
role_opt(A) ::= ENCRYPTED PASSWORD(N) STRING(S). { A = make_def_elem(p, &N, make_string(p, &S)); }
role_opt(A) ::= PASSWORD(N) NULL(X). { A = make_def_elem(p, &N, make_null_const(p, &X)); }
role_opt(A) ::= VALID(N) UNTIL STRING(S). { A = make_def_elem(p, &N, make_string(p, &S)); }
%type role_list {List *}
role_list(A) ::= ID(X). { A = make_name_strs(p, NULL, &X); }
role_list(A) ::= role_list(L) COMMA ID(X). { A = make_name_strs(p, L, &X); }

/* GRANT privileges ON [TABLE | STREAM] name, ... TO role | PUBLIC, ...
 * REVOKE privileges ON [TABLE | STREAM] name, ... FROM role | PUBLIC, ...
 * and ON ALL TABLES | STREAMS IN SCHEMA name instead of the names. */
grant_stmt(A) ::= GRANT(T) privileges(P) ON grant_kind(K) relation_list(L) TO role_list(G). { A = make_grant(p, &T, true, P, K, L, G); }
grant_stmt(A) ::= REVOKE(T) privileges(P) ON grant_kind(K) relation_list(L) FROM role_list(G) opt_drop_behavior. { A = make_grant(p, &T, false, P, K, L, G); }
/* ... ON ALL TABLES | STREAMS IN SCHEMA name ... */
grant_stmt(A) ::= GRANT(T) privileges(P) ON ALL ID(K) IN ID(S) ID(N) TO role_list(G). { A = make_grant_all(p, &T, true, P, &K, &S, &N, G); }
grant_stmt(A) ::= REVOKE(T) privileges(P) ON ALL ID(K) IN ID(S) ID(N) FROM role_list(G) opt_drop_behavior. { A = make_grant_all(p, &T, false, P, &K, &S, &N, G); }
%type privileges {List *}
privileges(A) ::= ALL. { A = NULL; }
privileges(A) ::= ALL PRIVILEGES. { A = NULL; }
privileges(A) ::= privilege_list(L). { A = L; }
%type privilege_list {List *}
privilege_list(A) ::= privilege(X). { A = make_name_strs(p, NULL, &X); }
privilege_list(A) ::= privilege_list(L) COMMA privilege(X). { A = make_name_strs(p, L, &X); }
%type privilege {Token}
privilege(A) ::= SELECT(X). { A = X; }
privilege(A) ::= INSERT(X). { A = X; }
privilege(A) ::= UPDATE(X). { A = X; }
privilege(A) ::= DELETE(X). { A = X; }
privilege(A) ::= TRUNCATE(X). { A = X; }
privilege(A) ::= REFERENCES(X). { A = X; }
privilege(A) ::= TRIGGER(X). { A = X; }
privilege(A) ::= ID(X). { A = X; }
%type grant_kind {bool}
grant_kind(A) ::= . { A = false; }
grant_kind(A) ::= TABLE. { A = false; }
grant_kind(A) ::= STREAM. { A = true; }

/* ------------------------------------------------------------------- DML */

/* INSERT INTO name [AS alias] [(cols)] query | DEFAULT VALUES
 *   [ON CONFLICT [(cols)] DO NOTHING | DO UPDATE SET ... [WHERE ...]]
 *   [RETURNING targets] */
insert_stmt(A) ::= INSERT(T) INTO insert_target(R) select_stmt(S) opt_on_conflict(O) returning_clause(X). { A = make_insert(p, &T, R, NULL, S, O, X); }
insert_stmt(A) ::= INSERT(T) INTO insert_target(R) LP insert_col_list(C) RP select_stmt(S) opt_on_conflict(O) returning_clause(X). { A = make_insert(p, &T, R, C, S, O, X); }
insert_stmt(A) ::= INSERT(T) INTO insert_target(R) DEFAULT VALUES opt_on_conflict(O) returning_clause(X). { A = make_insert(p, &T, R, NULL, NULL, O, X); }
insert_target(A) ::= name_list(N). { A = make_range_var(p, N, NULL); }
insert_target(A) ::= name_list(N) AS ID(X). { A = make_range_var(p, N, &X); }
%type insert_col_list {List *}
insert_col_list(A) ::= ID(X). { A = make_list1(p, make_set_target(p, &X, NULL)); }
insert_col_list(A) ::= insert_col_list(L) COMMA ID(X). { A = make_list_append(p, L, make_set_target(p, &X, NULL)); }

opt_on_conflict(A) ::= . { A = NULL; }
opt_on_conflict(A) ::= ON(T) CONFLICT opt_conf_expr(I) DO NOTHING. { A = make_on_conflict(p, &T, ONCONFLICT_NOTHING, I, NULL, NULL); }
opt_on_conflict(A) ::= ON(T) CONFLICT opt_conf_expr(I) DO UPDATE SET set_clause_list(L) where_clause(W). { A = make_on_conflict(p, &T, ONCONFLICT_UPDATE, I, L, W); }
%type opt_conf_expr {List *}
opt_conf_expr(A) ::= . { A = NULL; }
opt_conf_expr(A) ::= LP column_ref_list(L) RP. { A = L; }

%type returning_clause {List *}
returning_clause(A) ::= . { A = NULL; }
returning_clause(A) ::= RETURNING target_list1(L). { A = L; }

%type set_clause_list {List *}
set_clause_list(A) ::= set_clause(X). { A = make_list1(p, X); }
set_clause_list(A) ::= set_clause_list(L) COMMA set_clause(X). { A = make_list_append(p, L, X); }
set_clause(A) ::= ID(C) EQ a_expr(E). { A = make_set_target(p, &C, E); }

/* UPDATE name [[AS] alias] SET col = expr, ... [FROM ...] [WHERE ...] [RETURNING ...] */
/* The alias is spelled out in each rule so that SET is always shifted as
 * SET: with an optional alias, Lemon would take the unreserved SET as the
 * alias (its %fallback to ID comes before a default reduce). */
update_stmt(A) ::= UPDATE(T) name_list(N) SET set_clause_list(L) from_clause(F) where_clause(W) returning_clause(X). { A = make_update(p, &T, make_range_var(p, N, NULL), L, F, W, X); }
update_stmt(A) ::= UPDATE(T) name_list(N) ID(Y) SET set_clause_list(L) from_clause(F) where_clause(W) returning_clause(X). { A = make_update(p, &T, make_range_var(p, N, &Y), L, F, W, X); }
update_stmt(A) ::= UPDATE(T) name_list(N) AS ID(Y) SET set_clause_list(L) from_clause(F) where_clause(W) returning_clause(X). { A = make_update(p, &T, make_range_var(p, N, &Y), L, F, W, X); }
/* DELETE FROM name [[AS] alias] [USING ...] [WHERE ...] [RETURNING ...] */
delete_stmt(A) ::= DELETE(T) FROM relation_expr_opt_alias(R) using_clause(U) where_clause(W) returning_clause(X). { A = make_delete(p, &T, R, U, W, X); }
%type using_clause {List *}
using_clause(A) ::= . { A = NULL; }
using_clause(A) ::= USING from_list(L). { A = L; }
relation_expr_opt_alias(A) ::= name_list(N). { A = make_range_var(p, N, NULL); }
relation_expr_opt_alias(A) ::= name_list(N) ID(X). { A = make_range_var(p, N, &X); }
relation_expr_opt_alias(A) ::= name_list(N) AS ID(X). { A = make_range_var(p, N, &X); }

/* ----------------------------------------------------------------- SELECT */

/* gram.y's shape: a select_no_parens may carry ORDER BY / LIMIT / WITH;
 * select_clause is what a set operation combines. */
select_stmt(A) ::= select_no_parens(X). { A = X; }
select_stmt(A) ::= select_with_parens(X). { A = X; }

select_with_parens(A) ::= LP(L) select_no_parens(X) RP. { A = select_set_parens(p, X, L.offset); }
select_with_parens(A) ::= LP(L) select_with_parens(X) RP. { A = select_set_parens(p, X, L.offset); }

select_no_parens(A) ::= simple_select(X). { A = X; }
select_no_parens(A) ::= select_clause(X) sort_clause(S). { A = select_set_sort(p, X, S); }
select_no_parens(A) ::= select_clause(X) opt_sort_clause(S) select_limit(L). { A = select_set_limit(p, select_set_sort(p, X, S), L); }
select_no_parens(A) ::= with_clause(W) select_clause(X). { A = select_set_with(p, X, W); }
select_no_parens(A) ::= with_clause(W) select_clause(X) sort_clause(S). { A = select_set_with(p, select_set_sort(p, X, S), W); }
select_no_parens(A) ::= with_clause(W) select_clause(X) opt_sort_clause(S) select_limit(L). { A = select_set_with(p, select_set_limit(p, select_set_sort(p, X, S), L), W); }

select_clause(A) ::= simple_select(X). { A = X; }
select_clause(A) ::= select_with_parens(X). { A = X; }

/* SELECT [DISTINCT [ON (...)] | ALL] targets [FROM ...] [WHERE ...]
 *   [GROUP BY ...] [HAVING ...]; VALUES (...), ...; set operations */
simple_select(A) ::= SELECT(S) opt_all target_list(T) from_clause(F) where_clause(W) group_clause(G) having_clause(H) window_clause(N). { A = select_set_windows(p, make_select(p, S.offset, false, T, F, W, G, H), N); }
simple_select(A) ::= SELECT(S) DISTINCT target_list1(T) from_clause(F) where_clause(W) group_clause(G) having_clause(H) window_clause(N). { A = select_set_windows(p, make_select(p, S.offset, true, T, F, W, G, H), N); }
simple_select(A) ::= SELECT(S) DISTINCT ON LP expr_list(O) RP target_list1(T) from_clause(F) where_clause(W) group_clause(G) having_clause(H) window_clause(N). { A = select_set_windows(p, select_set_distinct_on(p, make_select(p, S.offset, true, T, F, W, G, H), O), N); }
simple_select(A) ::= values_clause(X). { A = X; }
simple_select(A) ::= select_clause(L) UNION set_quantifier(Q) select_clause(R). { A = make_setop(p, SETOP_UNION, Q, L, R); }
simple_select(A) ::= select_clause(L) INTERSECT set_quantifier(Q) select_clause(R). { A = make_setop(p, SETOP_INTERSECT, Q, L, R); }
simple_select(A) ::= select_clause(L) EXCEPT set_quantifier(Q) select_clause(R). { A = make_setop(p, SETOP_EXCEPT, Q, L, R); }

%type set_quantifier {bool}
set_quantifier(A) ::= . { A = false; }
set_quantifier(A) ::= ALL. { A = true; }
set_quantifier(A) ::= DISTINCT. { A = false; }

values_clause(A) ::= VALUES(V) LP expr_list(L) RP. { A = make_values(p, V.offset, L); }
values_clause(A) ::= values_clause(X) COMMA LP expr_list(L) RP. { A = values_add_row(p, X, L); }

%type with_clause {WithSpec}
with_clause(A) ::= WITH(T) cte_list(L). { A.ctes = L; A.recursive = false; A.loc = T.offset; }
with_clause(A) ::= WITH(T) RECURSIVE cte_list(L). { A.ctes = L; A.recursive = true; A.loc = T.offset; }
%type cte_list {List *}
cte_list(A) ::= common_table_expr(X). { A = make_list1(p, X); }
cte_list(A) ::= cte_list(L) COMMA common_table_expr(X). { A = make_list_append(p, L, X); }
common_table_expr(A) ::= ID(N) opt_name_list(C) AS opt_materialized(M) select_with_parens(Q) opt_search_cycle(S). { A = make_cte(p, &N, C, Q, M, S); }
/* [NOT] MATERIALIZED: CTEMaterialize's values, 0 for neither */
%type opt_materialized {int}
opt_materialized(A) ::= . { A = CTE_MATERIALIZE_DEFAULT; }
opt_materialized(A) ::= MATERIALIZED. { A = CTE_MATERIALIZE_ALWAYS; }
opt_materialized(A) ::= NOT MATERIALIZED. { A = CTE_MATERIALIZE_NEVER; }
/* SEARCH { DEPTH | BREADTH } FIRST BY cols SET col and CYCLE cols SET col
 * [TO v DEFAULT d] USING col: parsed to be refused (the offset of the
 * first, or -1) */
%type opt_search_cycle {int}
opt_search_cycle(A) ::= . { A = -1; }
opt_search_cycle(A) ::= search_clause(S). { A = S; }
opt_search_cycle(A) ::= cycle_clause(C). { A = C; }
opt_search_cycle(A) ::= search_clause(S) cycle_clause. { A = S; }
%type search_clause {int}
search_clause(A) ::= SEARCH(T) DEPTH FIRST BY name_strs(L) SET ID. { SL_UNUSED(L); A = T.offset; }
search_clause(A) ::= SEARCH(T) BREADTH FIRST BY name_strs(L) SET ID. { SL_UNUSED(L); A = T.offset; }
%type cycle_clause {int}
cycle_clause(A) ::= CYCLE(T) name_strs(L) SET ID USING ID. { SL_UNUSED(L); A = T.offset; }
cycle_clause(A) ::= CYCLE(T) name_strs(L) SET ID TO c_expr(X) DEFAULT c_expr(Y) USING ID. { SL_UNUSED(L); SL_UNUSED(X); SL_UNUSED(Y); A = T.offset; }
%type opt_name_list {List *}
opt_name_list(A) ::= . { A = NULL; }
opt_name_list(A) ::= LP name_strs(L) RP. { A = L; }
%type name_strs {List *}
name_strs(A) ::= ID(X). { A = make_name_strs(p, NULL, &X); }
name_strs(A) ::= name_strs(L) COMMA ID(X). { A = make_name_strs(p, L, &X); }

%type sort_clause {List *}
sort_clause(A) ::= ORDER BY sortby_list(L). { A = L; }
%type opt_sort_clause {List *}
opt_sort_clause(A) ::= . { A = NULL; }
opt_sort_clause(A) ::= sort_clause(X). { A = X; }
%type sortby_list {List *}
sortby_list(A) ::= sortby(X). { A = make_list1(p, X); }
sortby_list(A) ::= sortby_list(L) COMMA sortby(X). { A = make_list_append(p, L, X); }
sortby(A) ::= a_expr(X) opt_asc_desc(D) opt_nulls_order(N). { A = make_sort_by(p, X, D, N); }
%type opt_asc_desc {SortDir}
opt_asc_desc(A) ::= . { A = SORT_DEFAULT; }
opt_asc_desc(A) ::= ASC. { A = SORT_ASC; }
opt_asc_desc(A) ::= DESC. { A = SORT_DESC; }
%type opt_nulls_order {SortNulls}
opt_nulls_order(A) ::= . { A = NULLS_DEFAULT; }
opt_nulls_order(A) ::= NULLS FIRST. { A = NULLS_FIRST; }
opt_nulls_order(A) ::= NULLS LAST. { A = NULLS_LAST; }

%type select_limit {LimitSpec}
select_limit(A) ::= limit_clause(L). { A.limit = L; A.offset = NULL; }
select_limit(A) ::= offset_clause(O). { A.limit = NULL; A.offset = O; }
select_limit(A) ::= limit_clause(L) offset_clause(O). { A.limit = L; A.offset = O; }
select_limit(A) ::= offset_clause(O) limit_clause(L). { A.limit = L; A.offset = O; }
limit_clause(A) ::= LIMIT a_expr(X). { A = X; }
limit_clause(A) ::= LIMIT ALL. { A = NULL; }
offset_clause(A) ::= OFFSET a_expr(X). { A = X; }

opt_all ::= .
opt_all ::= ALL.

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

table_ref(A) ::= name_list(N) opt_alias_clause(X). { A = make_range_var_alias(p, N, X); }
table_ref(A) ::= select_with_parens(S) opt_alias_clause(X). { A = make_range_subselect(p, S, X, ((SelectStmt *)S)->paren_loc); }
table_ref(A) ::= func_application(F) opt_alias_clause(X). { A = make_range_function(p, F, X); }
table_ref(A) ::= func_application(F) WITH_LA ORDINALITY opt_alias_clause(X). { A = range_function_set_ordinality(p, make_range_function(p, F, X)); }
table_ref(A) ::= LATERAL select_with_parens(S) opt_alias_clause(X). { A = range_set_lateral(p, make_range_subselect(p, S, X, ((SelectStmt *)S)->paren_loc)); }
table_ref(A) ::= LATERAL func_application(F) opt_alias_clause(X). { A = range_set_lateral(p, make_range_function(p, F, X)); }
table_ref(A) ::= LATERAL func_application(F) WITH_LA ORDINALITY opt_alias_clause(X). { A = range_set_lateral(p, range_function_set_ordinality(p, make_range_function(p, F, X))); }
table_ref(A) ::= joined_table(J). { A = J; }
table_ref(A) ::= LP joined_table(J) RP alias_clause(X). { A = join_set_alias(p, J, X); }

joined_table(A) ::= LP joined_table(J) RP. { A = J; }
joined_table(A) ::= table_ref(L) CROSS JOIN table_ref(R). { JoinQual q = {NULL, NULL}; A = make_join(p, JOIN_CROSS, false, L, R, q); }
joined_table(A) ::= table_ref(L) join_type(T) JOIN table_ref(R) join_qual(Q). { A = make_join(p, T, false, L, R, Q); }
joined_table(A) ::= table_ref(L) JOIN table_ref(R) join_qual(Q). { A = make_join(p, JOIN_INNER, false, L, R, Q); }
joined_table(A) ::= table_ref(L) NATURAL join_type(T) JOIN table_ref(R). { JoinQual q = {NULL, NULL}; A = make_join(p, T, true, L, R, q); }
joined_table(A) ::= table_ref(L) NATURAL JOIN table_ref(R). { JoinQual q = {NULL, NULL}; A = make_join(p, JOIN_INNER, true, L, R, q); }

%type join_type {JoinType}
join_type(A) ::= FULL opt_outer. { A = JOIN_FULL; }
join_type(A) ::= LEFT opt_outer. { A = JOIN_LEFT; }
join_type(A) ::= RIGHT opt_outer. { A = JOIN_RIGHT; }
join_type(A) ::= INNER. { A = JOIN_INNER; }
opt_outer ::= .
opt_outer ::= OUTER.

%type join_qual {JoinQual}
join_qual(A) ::= USING LP name_strs(L) RP. { A.using_names = L; A.on = NULL; }
join_qual(A) ::= ON a_expr(X). { A.using_names = NULL; A.on = X; }

%type alias_clause {AliasSpec}
alias_clause(A) ::= AS col_label(N) LP name_strs(L) RP. { A.name = N.z; A.cols = L; }
alias_clause(A) ::= AS col_label(N). { A.name = N.z; A.cols = NULL; }
alias_clause(A) ::= ID(N) LP name_strs(L) RP. { A.name = N.z; A.cols = L; }
alias_clause(A) ::= ID(N). { A.name = N.z; A.cols = NULL; }
%type opt_alias_clause {AliasSpec}
opt_alias_clause(A) ::= . { A.name = NULL; A.cols = NULL; }
opt_alias_clause(A) ::= alias_clause(X). { A = X; }

where_clause(A) ::= . { A = NULL; }
where_clause(A) ::= WHERE a_expr(X). { A = X; }
%type group_clause {List *}
group_clause(A) ::= . { A = NULL; }
group_clause(A) ::= GROUP BY group_by_list(X). { A = X; }
/* GROUP BY's items: expressions, (), ROLLUP, CUBE and GROUPING SETS
 * (gram.y's group_by_item); (a, b) is a set only inside the last three. */
%type group_by_list {List *}
group_by_list(A) ::= group_by_item(X). { A = make_list1(p, X); }
group_by_list(A) ::= group_by_list(L) COMMA group_by_item(X). { A = make_list_append(p, L, X); }
%type group_by_item {Node *}
group_by_item(A) ::= a_expr(X). { A = X; }
group_by_item(A) ::= LP(L) RP. { A = make_grouping_set(p, GROUPING_SET_EMPTY, NULL, L.offset); }
group_by_item(A) ::= ROLLUP(T) LP group_elem_list(L) RP. { A = make_grouping_set(p, GROUPING_SET_ROLLUP, L, T.offset); }
group_by_item(A) ::= CUBE(T) LP group_elem_list(L) RP. { A = make_grouping_set(p, GROUPING_SET_CUBE, L, T.offset); }
group_by_item(A) ::= GROUPING(T) SETS LP group_set_list(L) RP. { A = make_grouping_set(p, GROUPING_SET_SETS, L, T.offset); }
%type group_set_list {List *}
group_set_list(A) ::= group_set_item(X). { A = make_list1(p, X); }
group_set_list(A) ::= group_set_list(L) COMMA group_set_item(X). { A = make_list_append(p, L, X); }
%type group_set_item {Node *}
group_set_item(A) ::= group_by_item(X). { A = X; }
group_set_item(A) ::= group_row(X). { A = X; }
%type group_elem_list {List *}
group_elem_list(A) ::= group_elem(X). { A = make_list1(p, X); }
group_elem_list(A) ::= group_elem_list(L) COMMA group_elem(X). { A = make_list_append(p, L, X); }
%type group_elem {Node *}
group_elem(A) ::= a_expr(X). { A = X; }
group_elem(A) ::= group_row(X). { A = X; }
%type group_row {Node *}
group_row(A) ::= LP(L) a_expr(X) COMMA expr_list(R) RP. { A = make_grouping_row(p, X, R, L.offset); }
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
/* OPERATOR(pg_catalog.~) and friends, as psql writes them; COLLATE names
 * one of the collations sluice has (text compares byte-wise: "C") */
a_expr(A) ::= a_expr(X) OPERATOR(T) LP qual_op(O) RP a_expr(Y). [OP] { A = make_op(p, O, X, Y, T.offset); }
a_expr(A) ::= a_expr(X) COLLATE name_list(N). { A = make_collate(p, X, N); }
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
a_expr(A) ::= a_expr(X) SIMILAR(O) TO a_expr(Y). [SIMILAR] { A = make_like(p, AEXPR_SIMILAR, "similar", X, Y, NULL, O.offset); }
a_expr(A) ::= a_expr(X) SIMILAR(O) TO a_expr(Y) ESCAPE a_expr(E). [SIMILAR] { A = make_like(p, AEXPR_SIMILAR, "similar", X, Y, E, O.offset); }
a_expr(A) ::= a_expr(X) NOT_LA(O) SIMILAR TO a_expr(Y). [NOT_LA] { A = make_like(p, AEXPR_SIMILAR, "!similar", X, Y, NULL, O.offset); }
a_expr(A) ::= a_expr(X) NOT_LA(O) SIMILAR TO a_expr(Y) ESCAPE a_expr(E). [NOT_LA] { A = make_like(p, AEXPR_SIMILAR, "!similar", X, Y, E, O.offset); }
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
a_expr(A) ::= a_expr(X) EQ(O) ANY LP a_expr(Y) RP. [EQ] { A = make_aexpr(p, AEXPR_OP_ANY, "=", X, Y, O.offset); }
a_expr(A) ::= a_expr(X) NE(O) ANY LP a_expr(Y) RP. [NE] { A = make_aexpr(p, AEXPR_OP_ANY, "<>", X, Y, O.offset); }
a_expr(A) ::= a_expr(X) LT(O) ANY LP a_expr(Y) RP. [LT] { A = make_aexpr(p, AEXPR_OP_ANY, "<", X, Y, O.offset); }
a_expr(A) ::= a_expr(X) GT(O) ANY LP a_expr(Y) RP. [GT] { A = make_aexpr(p, AEXPR_OP_ANY, ">", X, Y, O.offset); }
a_expr(A) ::= a_expr(X) LE(O) ANY LP a_expr(Y) RP. [LE] { A = make_aexpr(p, AEXPR_OP_ANY, "<=", X, Y, O.offset); }
a_expr(A) ::= a_expr(X) GE(O) ANY LP a_expr(Y) RP. [GE] { A = make_aexpr(p, AEXPR_OP_ANY, ">=", X, Y, O.offset); }
a_expr(A) ::= a_expr(X) EQ(O) ALL LP a_expr(Y) RP. [EQ] { A = make_aexpr(p, AEXPR_OP_ALL, "=", X, Y, O.offset); }
a_expr(A) ::= a_expr(X) NE(O) ALL LP a_expr(Y) RP. [NE] { A = make_aexpr(p, AEXPR_OP_ALL, "<>", X, Y, O.offset); }
a_expr(A) ::= a_expr(X) LT(O) ALL LP a_expr(Y) RP. [LT] { A = make_aexpr(p, AEXPR_OP_ALL, "<", X, Y, O.offset); }
a_expr(A) ::= a_expr(X) GT(O) ALL LP a_expr(Y) RP. [GT] { A = make_aexpr(p, AEXPR_OP_ALL, ">", X, Y, O.offset); }
a_expr(A) ::= a_expr(X) LE(O) ALL LP a_expr(Y) RP. [LE] { A = make_aexpr(p, AEXPR_OP_ALL, "<=", X, Y, O.offset); }
a_expr(A) ::= a_expr(X) GE(O) ALL LP a_expr(Y) RP. [GE] { A = make_aexpr(p, AEXPR_OP_ALL, ">=", X, Y, O.offset); }
a_expr(A) ::= a_expr(X) LIKE(O) ANY LP a_expr(Y) RP. [LIKE] { A = make_aexpr(p, AEXPR_OP_ANY, "~~", X, Y, O.offset); }
a_expr(A) ::= a_expr(X) LIKE(O) ALL LP a_expr(Y) RP. [LIKE] { A = make_aexpr(p, AEXPR_OP_ALL, "~~", X, Y, O.offset); }
a_expr(A) ::= a_expr(X) ILIKE(O) ANY LP a_expr(Y) RP. [ILIKE] { A = make_aexpr(p, AEXPR_OP_ANY, "~~*", X, Y, O.offset); }
a_expr(A) ::= a_expr(X) ILIKE(O) ALL LP a_expr(Y) RP. [ILIKE] { A = make_aexpr(p, AEXPR_OP_ALL, "~~*", X, Y, O.offset); }
a_expr(A) ::= a_expr(X) EQ(O) ANY select_with_parens(S). [EQ] { A = make_sublink(p, SUBLINK_IN, false, X, S, O.offset); }
a_expr(A) ::= a_expr(X) NE(O) ANY select_with_parens(S). [NE] { A = make_sublink_op(p, SUBLINK_IN, "<>", X, S, O.offset); }
a_expr(A) ::= a_expr(X) LT(O) ANY select_with_parens(S). [LT] { A = make_sublink_op(p, SUBLINK_IN, "<", X, S, O.offset); }
a_expr(A) ::= a_expr(X) GT(O) ANY select_with_parens(S). [GT] { A = make_sublink_op(p, SUBLINK_IN, ">", X, S, O.offset); }
a_expr(A) ::= a_expr(X) LE(O) ANY select_with_parens(S). [LE] { A = make_sublink_op(p, SUBLINK_IN, "<=", X, S, O.offset); }
a_expr(A) ::= a_expr(X) GE(O) ANY select_with_parens(S). [GE] { A = make_sublink_op(p, SUBLINK_IN, ">=", X, S, O.offset); }
a_expr(A) ::= a_expr(X) LIKE(O) ANY select_with_parens(S). [LIKE] { A = make_sublink_op(p, SUBLINK_IN, "~~", X, S, O.offset); }
a_expr(A) ::= a_expr(X) ILIKE(O) ANY select_with_parens(S). [ILIKE] { A = make_sublink_op(p, SUBLINK_IN, "~~*", X, S, O.offset); }
a_expr(A) ::= a_expr(X) EQ(O) ALL select_with_parens(S). [EQ] { A = make_sublink_op(p, SUBLINK_ALL, "=", X, S, O.offset); }
a_expr(A) ::= a_expr(X) NE(O) ALL select_with_parens(S). [NE] { A = make_sublink_op(p, SUBLINK_ALL, "<>", X, S, O.offset); }
a_expr(A) ::= a_expr(X) LT(O) ALL select_with_parens(S). [LT] { A = make_sublink_op(p, SUBLINK_ALL, "<", X, S, O.offset); }
a_expr(A) ::= a_expr(X) GT(O) ALL select_with_parens(S). [GT] { A = make_sublink_op(p, SUBLINK_ALL, ">", X, S, O.offset); }
a_expr(A) ::= a_expr(X) LE(O) ALL select_with_parens(S). [LE] { A = make_sublink_op(p, SUBLINK_ALL, "<=", X, S, O.offset); }
a_expr(A) ::= a_expr(X) GE(O) ALL select_with_parens(S). [GE] { A = make_sublink_op(p, SUBLINK_ALL, ">=", X, S, O.offset); }
a_expr(A) ::= a_expr(X) LIKE(O) ALL select_with_parens(S). [LIKE] { A = make_sublink_op(p, SUBLINK_ALL, "~~", X, S, O.offset); }
a_expr(A) ::= a_expr(X) ILIKE(O) ALL select_with_parens(S). [ILIKE] { A = make_sublink_op(p, SUBLINK_ALL, "~~*", X, S, O.offset); }
a_expr(A) ::= a_expr(X) NOT_LA(O) IN LP expr_list(L) RP. [NOT_LA] { A = make_in(p, "<>", X, L, O.offset); }
a_expr(A) ::= a_expr(X) IN(O) select_with_parens(S). { A = make_sublink(p, SUBLINK_IN, false, X, S, O.offset); }
a_expr(A) ::= a_expr(X) NOT_LA(O) IN select_with_parens(S). [NOT_LA] { A = make_sublink(p, SUBLINK_IN, true, X, S, O.offset); }
a_expr(A) ::= DEFAULT(T). { A = make_set_to_default(p, &T); }

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
c_expr(A) ::= simple_typename(T) STRING(S) opt_interval_qual(Q). { A = make_typed_literal_qual(p, T, &S, Q.mask, Q.loc); }
c_expr(A) ::= case_expr(X). { A = X; }
c_expr(A) ::= select_with_parens(S). [UMINUS] { A = make_sublink(p, SUBLINK_EXPR, false, NULL, S, ((SelectStmt *)S)->paren_loc); }
c_expr(A) ::= EXISTS(T) select_with_parens(S). { A = make_sublink(p, SUBLINK_EXISTS, false, NULL, S, T.offset); }
c_expr(A) ::= c_expr(X) LBRACKET(O) a_expr(I) RBRACKET. { A = make_aexpr(p, AEXPR_SUBSCRIPT, "[]", X, I, O.offset); }
c_expr(A) ::= ARRAY(T) select_with_parens(S). { A = make_sublink(p, SUBLINK_ARRAY, false, NULL, S, T.offset); }
c_expr(A) ::= c_expr(X) LBRACKET(O) a_expr(I) COLON a_expr(J) RBRACKET. { A = make_array_slice(p, X, I, J, O.offset); }
c_expr(A) ::= c_expr(X) LBRACKET(O) COLON a_expr(J) RBRACKET. { A = make_array_slice(p, X, NULL, J, O.offset); }
c_expr(A) ::= c_expr(X) LBRACKET(O) a_expr(I) COLON RBRACKET. { A = make_array_slice(p, X, I, NULL, O.offset); }
c_expr(A) ::= c_expr(X) LBRACKET(O) COLON RBRACKET. { A = make_array_slice(p, X, NULL, NULL, O.offset); }
c_expr(A) ::= ARRAY(T) LBRACKET expr_list(L) RBRACKET. { A = make_array_expr(p, L, T.offset); }
c_expr(A) ::= ARRAY(T) LBRACKET RBRACKET. { A = make_array_expr(p, NULL, T.offset); }
/* ARRAY[[1,2],[3,4]]: multi-dimensional, parsed to be refused (0A000) */
c_expr(A) ::= ARRAY(T) LBRACKET array_sub_list RBRACKET. { A = make_array_multidim(p, T.offset); }
array_sub_list ::= LBRACKET array_sub_items RBRACKET.
array_sub_list ::= array_sub_list COMMA LBRACKET array_sub_items RBRACKET.
array_sub_items ::= expr_list(L). { SL_UNUSED(L); }
array_sub_items ::= array_sub_list.
array_sub_items ::= .
c_expr(A) ::= func_expr(X). { A = X; }

func_expr(A) ::= func_application(F) filter_clause(W). { A = func_set_filter(p, F, W); }
func_expr(A) ::= func_application(F) WITHIN(T) GROUP LP sort_clause(S) RP filter_clause(W). { A = func_set_filter(p, func_set_within_group(p, F, S, T.offset), W); }
func_expr(A) ::= func_application(F) WITHIN(T) GROUP LP sort_clause(S) RP filter_clause(W) OVER window_spec(O). { A = func_set_window(p, func_set_filter(p, func_set_within_group(p, F, S, T.offset), W), O); }
func_expr(A) ::= func_application(F) filter_clause(W) OVER window_spec(S). { A = func_set_window(p, func_set_filter(p, F, W), S); }
func_expr(A) ::= func_application(F) filter_clause(W) OVER ID(N). { A = func_set_window(p, func_set_filter(p, F, W), make_window_def(p, &N, NULL, NULL, NULL, N.offset)); }
%type window_spec {WindowDef *}
window_spec(A) ::= LP(L) window_body(B). { A = window_def_ref(p, B, NULL, L.offset); }
window_spec(A) ::= LP(L) ID(N) window_body(B). { A = window_def_ref(p, B, &N, L.offset); }
/* No empty rule right after '(': a default reduce there would let an
 * unreserved PARTITION, ROWS, RANGE or GROUPS fall back to a window name. */
%type window_body {WindowDef *}
window_body(A) ::= PARTITION BY expr_list(P) opt_sort_clause(S) opt_frame_clause(R) RP. { A = make_window_def(p, NULL, P, S, R, -1); }
window_body(A) ::= sort_clause(S) opt_frame_clause(R) RP. { A = make_window_def(p, NULL, NULL, S, R, -1); }
window_body(A) ::= frame_clause(R) RP. { A = make_window_def(p, NULL, NULL, NULL, R, -1); }
window_body(A) ::= RP. { A = make_window_def(p, NULL, NULL, NULL, NULL, -1); }
%type window_clause {List *}
window_clause(A) ::= . { A = NULL; }
window_clause(A) ::= WINDOW_LA window_def_list(L). { A = L; }
%type window_def_list {List *}
window_def_list(A) ::= window_def(D). { A = make_list1(p, D); }
window_def_list(A) ::= window_def_list(L) COMMA window_def(D). { A = make_list_append(p, L, D); }
%type window_def {WindowDef *}
window_def(A) ::= ID(N) AS window_spec(S). { A = window_def_name(p, S, &N); }
%type opt_frame_clause {WindowFrameDef *}
opt_frame_clause(A) ::= . { A = NULL; }
opt_frame_clause(A) ::= frame_clause(F). { A = F; }
%type frame_clause {WindowFrameDef *}
frame_clause(A) ::= frame_mode(M) frame_bound(S) opt_frame_exclusion(E). { A = make_frame(p, M, &S, NULL, E); }
frame_clause(A) ::= frame_mode(M) BETWEEN frame_bound(S) AND frame_bound(T) opt_frame_exclusion(E). { A = make_frame(p, M, &S, &T, E); }
%type frame_mode {int}
frame_mode(A) ::= ROWS. { A = FRAME_ROWS; }
frame_mode(A) ::= RANGE. { A = FRAME_RANGE; }
frame_mode(A) ::= GROUPS. { A = FRAME_GROUPS; }
%type frame_bound {FrameBound}
frame_bound(A) ::= UNBOUNDED(T) PRECEDING. { A = make_frame_bound(p, BOUND_UNBOUNDED_PRECEDING, NULL, T.offset); }
frame_bound(A) ::= UNBOUNDED(T) FOLLOWING. { A = make_frame_bound(p, BOUND_UNBOUNDED_FOLLOWING, NULL, T.offset); }
frame_bound(A) ::= CURRENT(T) ROW. { A = make_frame_bound(p, BOUND_CURRENT_ROW, NULL, T.offset); }
frame_bound(A) ::= a_expr(X) PRECEDING. { A = make_frame_bound(p, BOUND_PRECEDING, X, X->location); }
frame_bound(A) ::= a_expr(X) FOLLOWING. { A = make_frame_bound(p, BOUND_FOLLOWING, X, X->location); }
%type opt_frame_exclusion {int}
opt_frame_exclusion(A) ::= . { A = EXCLUDE_NO_OTHERS; }
opt_frame_exclusion(A) ::= EXCLUDE CURRENT ROW. { A = EXCLUDE_CURRENT_ROW; }
opt_frame_exclusion(A) ::= EXCLUDE GROUP. { A = EXCLUDE_GROUP; }
opt_frame_exclusion(A) ::= EXCLUDE TIES. { A = EXCLUDE_TIES; }
opt_frame_exclusion(A) ::= EXCLUDE NO OTHERS. { A = EXCLUDE_NO_OTHERS; }
func_application(A) ::= name_list(N) LP RP. { A = make_func_call(p, N, NULL, false, false); }
func_application(A) ::= name_list(N) LP func_args(X) RP. { A = make_func_call(p, N, X, false, false); }
func_application(A) ::= name_list(N) LP func_args(X) sort_clause(S) RP. { A = func_set_order(p, make_func_call(p, N, X, false, false), S); }
func_application(A) ::= name_list(N) LP ALL func_args(X) RP. { A = make_func_call(p, N, X, false, false); }
func_application(A) ::= name_list(N) LP DISTINCT func_args(X) RP. { A = make_func_call(p, N, X, false, true); }
func_application(A) ::= name_list(N) LP DISTINCT func_args(X) sort_clause(S) RP. { A = func_set_order(p, make_func_call(p, N, X, false, true), S); }
func_application(A) ::= name_list(N) LP STAR RP. { A = make_func_call(p, N, NULL, true, false); }
/* LEFT and RIGHT are keywords (joins) but also functions. */
func_application(A) ::= LEFT(T) LP func_args(X) RP. { A = make_func_call(p, make_name_list(p, &T), X, false, false); }
func_application(A) ::= RIGHT(T) LP func_args(X) RP. { A = make_func_call(p, make_name_list(p, &T), X, false, false); }
filter_clause(A) ::= . { A = NULL; }
filter_clause(A) ::= FILTER LP WHERE a_expr(X) RP. { A = X; }
func_expr(A) ::= CAST(C) LP a_expr(X) AS typename(T) RP. { A = make_typecast(p, X, T, C.offset); }
func_expr(A) ::= COALESCE(C) LP expr_list(L) RP. { A = make_coalesce(p, L, C.offset); }
func_expr(A) ::= NULLIF(C) LP a_expr(X) COMMA a_expr(Y) RP. { A = make_nullif(p, X, Y, C.offset); }
func_expr(A) ::= GREATEST(C) LP expr_list(L) RP. { A = make_minmax(p, true, L, C.offset); }
func_expr(A) ::= LEAST(C) LP expr_list(L) RP. { A = make_minmax(p, false, L, C.offset); }

/* The SQL-standard syntax for some functions (gram.y's
 * func_expr_common_subexpr), each a call of the function PostgreSQL calls. */
func_expr(A) ::= CURRENT_DATE(T). { A = make_sql_func(p, "current_date", NULL, T.offset); }
func_expr(A) ::= CURRENT_TIMESTAMP(T). { A = make_sql_func(p, "current_timestamp", NULL, T.offset); }
func_expr(A) ::= LOCALTIMESTAMP(T). { A = make_sql_func(p, "localtimestamp", NULL, T.offset); }
func_expr(A) ::= CURRENT_USER(T). { A = make_sql_func(p, "current_user", NULL, T.offset); }
func_expr(A) ::= SESSION_USER(T). { A = make_sql_func(p, "session_user", NULL, T.offset); }
func_expr(A) ::= USER(T). { A = make_sql_func(p, "current_user", NULL, T.offset); }
func_expr(A) ::= CURRENT_CATALOG(T). { A = make_sql_func(p, "current_database", NULL, T.offset); }
func_expr(A) ::= CURRENT_SCHEMA(T). { A = make_sql_func(p, "current_schema", NULL, T.offset); }
func_expr(A) ::= CURRENT_SCHEMA(T) LP RP. { A = make_sql_func(p, "current_schema", NULL, T.offset); }
func_expr(A) ::= EXTRACT(C) LP extract_arg(F) FROM a_expr(X) RP. { A = make_sql_func(p, "extract", make_list_append(p, make_list1(p, F), X), C.offset); }
extract_arg(A) ::= ID(X). { A = make_string(p, &X); }
extract_arg(A) ::= STRING(X). { A = make_string(p, &X); }
func_expr(A) ::= POSITION(C) LP b_expr(X) IN b_expr(Y) RP. { A = make_sql_func(p, "position", make_list_append(p, make_list1(p, Y), X), C.offset); }
func_expr(A) ::= SUBSTRING(C) LP a_expr(X) FROM a_expr(F) FOR a_expr(L) RP. { A = make_sql_func(p, "substring", make_list_append(p, make_list_append(p, make_list1(p, X), F), L), C.offset); }
func_expr(A) ::= SUBSTRING(C) LP a_expr(X) FOR a_expr(L) FROM a_expr(F) RP. { A = make_sql_func(p, "substring", make_list_append(p, make_list_append(p, make_list1(p, X), F), L), C.offset); }
func_expr(A) ::= SUBSTRING(C) LP a_expr(X) FROM a_expr(F) RP. { A = make_sql_func(p, "substring", make_list_append(p, make_list1(p, X), F), C.offset); }
func_expr(A) ::= SUBSTRING(C) LP a_expr(X) FOR a_expr(L) RP. { A = make_sql_func(p, "substring", make_list_append(p, make_list_append(p, make_list1(p, X), make_int_const(p, 1, -1)), L), C.offset); }
func_expr(A) ::= SUBSTRING(C) LP a_expr(X) SIMILAR a_expr(F) ESCAPE a_expr(E) RP. { A = make_sql_func(p, "substring", make_list_append(p, make_list_append(p, make_list1(p, X), F), E), C.offset); }
func_expr(A) ::= SUBSTRING(C) LP func_args(L) RP. { A = make_sql_func(p, "substring", L, C.offset); }
func_expr(A) ::= TRIM(C) LP BOTH trim_list(L) RP. { A = make_sql_func(p, "btrim", L, C.offset); }
func_expr(A) ::= TRIM(C) LP LEADING trim_list(L) RP. { A = make_sql_func(p, "ltrim", L, C.offset); }
func_expr(A) ::= TRIM(C) LP TRAILING trim_list(L) RP. { A = make_sql_func(p, "rtrim", L, C.offset); }
func_expr(A) ::= TRIM(C) LP trim_list(L) RP. { A = make_sql_func(p, "btrim", L, C.offset); }
%type trim_list {List *}
trim_list(A) ::= a_expr(X) FROM expr_list(L). { A = make_list_append(p, L, X); }
trim_list(A) ::= FROM expr_list(L). { A = L; }
trim_list(A) ::= expr_list(L). { A = L; }
a_expr(A) ::= a_expr(X) AT(O) TIME ZONE a_expr(Z). [AT] { A = make_sql_func(p, "timezone", make_list_append(p, make_list1(p, Z), X), O.offset); }
/* AT stays usable as a column alias (SELECT 1 at), as in gram.y */
target_el(A) ::= a_expr(X) AT(N). { A = make_res_target(p, X, &N); }

/* INTERVAL '...' <fields> (gram.y's opt_interval) */
%type opt_interval_qual {IntervalQual}
opt_interval_qual(A) ::= . { A.mask = 0; A.loc = -1; }
opt_interval_qual(A) ::= YEAR(T). { A.mask = IQ_YEAR; A.loc = T.offset; }
opt_interval_qual(A) ::= MONTH(T). { A.mask = IQ_MONTH; A.loc = T.offset; }
opt_interval_qual(A) ::= DAY(T). { A.mask = IQ_DAY; A.loc = T.offset; }
opt_interval_qual(A) ::= HOUR(T). { A.mask = IQ_HOUR; A.loc = T.offset; }
opt_interval_qual(A) ::= MINUTE(T). { A.mask = IQ_MINUTE; A.loc = T.offset; }
opt_interval_qual(A) ::= SECOND(T). { A.mask = IQ_SECOND; A.loc = T.offset; }
opt_interval_qual(A) ::= YEAR(T) TO MONTH. { A.mask = IQ_YEAR | IQ_MONTH; A.loc = T.offset; }
opt_interval_qual(A) ::= DAY(T) TO HOUR. { A.mask = IQ_DAY | IQ_HOUR; A.loc = T.offset; }
opt_interval_qual(A) ::= DAY(T) TO MINUTE. { A.mask = IQ_DAY | IQ_HOUR | IQ_MINUTE; A.loc = T.offset; }
opt_interval_qual(A) ::= DAY(T) TO SECOND. { A.mask = IQ_DAY | IQ_HOUR | IQ_MINUTE | IQ_SECOND; A.loc = T.offset; }
opt_interval_qual(A) ::= HOUR(T) TO MINUTE. { A.mask = IQ_HOUR | IQ_MINUTE; A.loc = T.offset; }
opt_interval_qual(A) ::= HOUR(T) TO SECOND. { A.mask = IQ_HOUR | IQ_MINUTE | IQ_SECOND; A.loc = T.offset; }
opt_interval_qual(A) ::= MINUTE(T) TO SECOND. { A.mask = IQ_MINUTE | IQ_SECOND; A.loc = T.offset; }

%type qual_op {const char *}
qual_op(A) ::= any_op(O). { A = O; }
qual_op(A) ::= ID(S) DOT any_op(O). { A = make_qual_op(p, &S, O); }
%type any_op {const char *}
any_op(A) ::= OP(O). { A = O.z; }
any_op(A) ::= EQ. { A = "="; }
any_op(A) ::= LT. { A = "<"; }
any_op(A) ::= GT. { A = ">"; }
any_op(A) ::= LE. { A = "<="; }
any_op(A) ::= GE. { A = ">="; }
any_op(A) ::= NE. { A = "<>"; }
any_op(A) ::= PLUS. { A = "+"; }
any_op(A) ::= MINUS. { A = "-"; }
any_op(A) ::= STAR. { A = "*"; }
any_op(A) ::= SLASH. { A = "/"; }
any_op(A) ::= PERCENT. { A = "%"; }
any_op(A) ::= CARET. { A = "^"; }

%type func_args {List *}
func_args(A) ::= a_expr(X). { A = make_list1(p, X); }
func_args(A) ::= func_args(L) COMMA a_expr(X). { A = make_list_append(p, L, X); }
/* named notation: name => value */
func_args(A) ::= ID(N) EQUALS_GREATER a_expr(X). { A = make_list1(p, make_named_arg(p, &N, X)); }
func_args(A) ::= func_args(L) COMMA ID(N) EQUALS_GREATER a_expr(X). { A = make_list_append(p, L, make_named_arg(p, &N, X)); }

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
typename(A) ::= typename(X) LBRACKET RBRACKET. { A = make_array_type(p, X); }

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
simple_typename(A) ::= CHARACTER(T) opt_type_mods(M). { A = make_char_type(p, M, T.offset); }
simple_typename(A) ::= CHAR(T) opt_type_mods(M). { A = make_char_type(p, M, T.offset); }

const_typename(A) ::= TIMESTAMP(T). { A = make_type_name(p, "timestamp", NULL, T.offset); }
const_typename(A) ::= TIMESTAMP(T) WITHOUT TIME ZONE. { A = make_type_name(p, "timestamp", NULL, T.offset); }
const_typename(A) ::= TIMESTAMP(T) WITH_LA TIME ZONE. { A = make_type_name(p, "timestamptz", NULL, T.offset); }
const_typename(A) ::= INTERVAL(T). { A = make_type_name(p, "interval", NULL, T.offset); }
