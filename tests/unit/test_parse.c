/*
 * test_parse.c -- the grammar and its driver (grammar/sql.y, src/sql/parse.c,
 * parse_nodes.c): statement splitting with offsets, node shapes and
 * locations, PostgreSQL's precedence, keywords usable as names, syntax
 * errors with their positions, and the stack limit (54001).  One arena per
 * case, destroyed at the end: LeakSanitizer checks that it owns everything.
 */
#include "unit.h"
#include "sql/parser.h"
#include "sluice/strbuf.h"

#include <stdio.h>
#include <stdlib.h>


/* Prints an expression tree in a compact Lisp-like form, to compare shapes. */
static void show(const Node *n, StrBuf *b)
{
    if (n == NULL) {
        strbuf_puts(b, "nil");
        return;
    }
    switch (n->tag) {
    case T_A_Const: {
        const A_Const *c = (const A_Const *)n;
        if (c->kind == CONST_STRING)
            strbuf_printf(b, "'%s'", c->text);
        else
            strbuf_puts(b, c->text);
        break;
    }
    case T_A_Expr: {
        const A_Expr *e = (const A_Expr *)n;
        strbuf_printf(b, "(%s ", e->kind == AEXPR_OP ? e->op : e->kind == AEXPR_IN ? "in"
                                 : e->kind == AEXPR_DISTINCT ? "distinct"
                                 : e->kind == AEXPR_BETWEEN ? "between" : e->op);
        if (e->lexpr)
            show(e->lexpr, b);
        if (e->rexpr) {
            if (e->lexpr)
                strbuf_putc(b, ' ');
            show(e->rexpr, b);
        }
        for (int i = 0; i < list_len(e->list); i++) {
            strbuf_putc(b, ' ');
            show(list_nth(e->list, i), b);
        }
        strbuf_putc(b, ')');
        break;
    }
    case T_BoolExpr: {
        const BoolExpr *e = (const BoolExpr *)n;
        strbuf_puts(b, e->op == BOOL_AND ? "(and" : e->op == BOOL_OR ? "(or" : "(not");
        for (int i = 0; i < list_len(e->args); i++) {
            strbuf_putc(b, ' ');
            show(list_nth(e->args, i), b);
        }
        strbuf_putc(b, ')');
        break;
    }
    case T_ColumnRef:
        strbuf_puts(b, list_nth(((const ColumnRef *)n)->names, 0));
        break;
    case T_TypeCast:
        strbuf_puts(b, "(cast ");
        show(((const TypeCast *)n)->arg, b);
        strbuf_printf(b, " %s)", ((const TypeCast *)n)->type->name);
        break;
    case T_NullTest:
        strbuf_puts(b, ((const NullTest *)n)->is_not ? "(notnull " : "(isnull ");
        show(((const NullTest *)n)->arg, b);
        strbuf_putc(b, ')');
        break;
    case T_FuncCall: {
        const FuncCall *f = (const FuncCall *)n;
        strbuf_printf(b, "(%s", f->name);
        for (int i = 0; i < list_len(f->args); i++) {
            strbuf_putc(b, ' ');
            show(list_nth(f->args, i), b);
        }
        strbuf_putc(b, ')');
        break;
    }
    case T_ParamRef:
        strbuf_printf(b, "$%d", ((const ParamRef *)n)->number);
        break;
    default:
        strbuf_printf(b, "<node %d>", n->tag);
    }
}

/* Parses "SELECT <expr>" and compares the first target's shape. */
static void expect_expr(const char *expr, const char *want)
{
    char sql[512];
    snprintf(sql, sizeof(sql), "SELECT %s", expr);
    Arena a;
    arena_init(&a, 0);
    SlError err = {0};
    List *stmts = NULL;
    int rc = sql_parse(&a, sql, (int)strlen(sql), &stmts, &err);
    CHECK(rc == 0, "%s: %s", sql, err.message ? err.message : "?");
    if (rc == 0) {
        RawStmt *rs = list_nth(stmts, 0);
        SelectStmt *s = (SelectStmt *)rs->stmt;
        ResTarget *t = list_nth(s->targets, 0);
        StrBuf b;
        strbuf_init(&b);
        show(t->val, &b);
        CHECK(strcmp(b.data, want) == 0, "%s: got %s, want %s", sql, b.data, want);
        strbuf_free(&b);
    }
    sl_error_clear(&err);
    arena_destroy(&a);
}

static void expect_error(const char *sql, const char *sqlstate, int position, const char *msg)
{
    Arena a;
    arena_init(&a, 0);
    SlError err = {0};
    List *stmts = NULL;
    int rc = sql_parse(&a, sql, (int)strlen(sql), &stmts, &err);
    CHECK(rc < 0, "%.60s: no error", sql);
    CHECK(strcmp(err.sqlstate, sqlstate) == 0, "%.60s: sqlstate %s, want %s", sql, err.sqlstate,
          sqlstate);
    CHECK(position < 0 || err.position == position, "%.60s: position %d, want %d", sql,
          err.position, position);
    if (msg)
        CHECK(err.message && strcmp(err.message, msg) == 0, "%.60s: message '%s', want '%s'",
              sql, err.message, msg);
    sl_error_clear(&err);
    arena_destroy(&a);
}

static void test_statements(void)
{
    const char *sql = "SELECT 1; ;  select 2 AS two ,3 three;BEGIN;COMMIT WORK; rollback";
    Arena a;
    arena_init(&a, 0);
    SlError err = {0};
    List *stmts = NULL;
    CHECK(sql_parse(&a, sql, (int)strlen(sql), &stmts, &err) == 0, "%s", err.message);
    CHECK(list_len(stmts) == 5, "%d statements", list_len(stmts));
    if (list_len(stmts) == 5) {
        RawStmt *r0 = list_nth(stmts, 0), *r1 = list_nth(stmts, 1), *r4 = list_nth(stmts, 4);
        CHECK(r0->start == 0 && r0->end == 8, "stmt 0 [%d,%d)", r0->start, r0->end);
        CHECK(r1->start == 13 && r1->end == 37, "stmt 1 [%d,%d)", r1->start, r1->end);
        CHECK(r4->start == 57 && r4->end == (int)strlen(sql), "stmt 4 [%d,%d)", r4->start,
              r4->end);
        SelectStmt *s = (SelectStmt *)r1->stmt;
        CHECK(IS_A(s, SelectStmt) && list_len(s->targets) == 2, "select 2");
        ResTarget *t0 = list_nth(s->targets, 0), *t1 = list_nth(s->targets, 1);
        CHECK(strcmp(t0->name, "two") == 0 && strcmp(t1->name, "three") == 0, "aliases");
        CHECK(t1->val->location == 30, "location %d", t1->val->location);
        CHECK(IS_A(((RawStmt *)list_nth(stmts, 2))->stmt, TransactionStmt), "BEGIN");
        TransactionStmt *ts = (TransactionStmt *)r4->stmt;
        CHECK(IS_A(ts, TransactionStmt) && ts->kind == TRANS_ROLLBACK, "ROLLBACK");
    }
    sl_error_clear(&err);
    /* an empty string and only semicolons give no statements */
    CHECK(sql_parse(&a, "", 0, &stmts, &err) == 0 && list_len(stmts) == 0, "empty");
    CHECK(sql_parse(&a, " ; ;", 4, &stmts, &err) == 0 && list_len(stmts) == 0, "semicolons");
    /* SET, DDL, and statements recognised by their first words only */
    const char *set = "SET extra_float_digits = 3; CREATE STREAM s (a int) WITH (x = 'y');"
                      " CREATE INDEX i ON s (a)";
    CHECK(sql_parse(&a, set, (int)strlen(set), &stmts, &err) == 0, "%s", err.message);
    CHECK(list_len(stmts) == 3 && IS_A(((RawStmt *)list_nth(stmts, 0))->stmt, VariableSetStmt) &&
              IS_A(((RawStmt *)list_nth(stmts, 1))->stmt, CreateStmt) &&
              IS_A(((RawStmt *)list_nth(stmts, 2))->stmt, UnsupportedStmt),
          "SET / CREATE STREAM / CREATE INDEX");
    sl_error_clear(&err);
    arena_destroy(&a);
}

/* The transaction statements and DEALLOCATE: gram.y's shapes into
 * TransactionStmt (kind, modes, AND CHAIN) and DeallocateStmt. */
static const Node *parse_one(Arena *a, const char *sql)
{
    SlError err = {0};
    List *stmts = NULL;
    int rc = sql_parse(a, sql, (int)strlen(sql), &stmts, &err);
    CHECK(rc == 0 && list_len(stmts) == 1, "%s: %s", sql, err.message ? err.message : "");
    sl_error_clear(&err);
    return rc == 0 && list_len(stmts) == 1 ? ((RawStmt *)list_nth(stmts, 0))->stmt : NULL;
}

static void test_transaction_statements(void)
{
    Arena a;
    arena_init(&a, 0);
    const TransactionStmt *t = (const TransactionStmt *)parse_one(
        &a, "begin work isolation level read committed, read only not deferrable");
    CHECK(IS_A(t, TransactionStmt) && t->kind == TRANS_BEGIN &&
              t->modes.isolation == XACT_READ_COMMITTED && t->modes.isolation_loc == 11 &&
              t->modes.read_only == XACT_ON && t->modes.deferrable == XACT_OFF,
          "BEGIN modes");
    expect_error("START TRANSACTION READ ONLY READ WRITE SERIALIZABLE", "42601", 40, NULL);
    t = (const TransactionStmt *)parse_one(
        &a, "START TRANSACTION READ ONLY READ WRITE ISOLATION LEVEL SERIALIZABLE");
    CHECK(IS_A(t, TransactionStmt) && t->kind == TRANS_START && t->modes.read_only == XACT_OFF &&
              t->modes.isolation == XACT_SERIALIZABLE && t->modes.deferrable == XACT_UNSET,
          "START TRANSACTION: the last mode wins");
    t = (const TransactionStmt *)parse_one(&a, "COMMIT /* c */ WORK AND\n NO CHAIN");
    CHECK(IS_A(t, TransactionStmt) && t->kind == TRANS_COMMIT && !t->chain, "AND NO CHAIN");
    t = (const TransactionStmt *)parse_one(&a, "abort transaction and chain");
    CHECK(IS_A(t, TransactionStmt) && t->kind == TRANS_ROLLBACK && t->chain, "ABORT AND CHAIN");
    t = (const TransactionStmt *)parse_one(&a, "END");
    CHECK(IS_A(t, TransactionStmt) && t->kind == TRANS_COMMIT, "END");
    expect_error("SET TRANSACTION REPEATABLE READ", "42601", 17, NULL);
    t = (const TransactionStmt *)parse_one(
        &a, "SET SESSION CHARACTERISTICS AS TRANSACTION ISOLATION LEVEL REPEATABLE READ");
    CHECK(IS_A(t, TransactionStmt) && t->kind == TRANS_SET_SESSION &&
              t->modes.isolation == XACT_REPEATABLE_READ,
          "SET SESSION CHARACTERISTICS");
    t = (const TransactionStmt *)parse_one(&a, "rollback work to savepoint x");
    CHECK(IS_A(t, TransactionStmt) && t->kind == TRANS_ROLLBACK_TO &&
              strcmp(t->savepoint, "x") == 0,
          "ROLLBACK TO");
    t = (const TransactionStmt *)parse_one(&a, "SAVEPOINT \"_pg3_1\"");
    CHECK(IS_A(t, TransactionStmt) && t->kind == TRANS_SAVEPOINT &&
              strcmp(t->savepoint, "_pg3_1") == 0,
          "SAVEPOINT, quoted");
    t = (const TransactionStmt *)parse_one(&a, "RELEASE Sp");
    CHECK(IS_A(t, TransactionStmt) && t->kind == TRANS_RELEASE && strcmp(t->savepoint, "sp") == 0,
          "RELEASE without SAVEPOINT");
    const UnsupportedStmt *u = (const UnsupportedStmt *)parse_one(&a, "COMMIT PREPARED 'g'");
    CHECK(IS_A(u, UnsupportedStmt) && strcmp(u->command, "COMMIT PREPARED") == 0,
          "COMMIT PREPARED");
    const ShowStmt *sh = (const ShowStmt *)parse_one(&a, "show transaction isolation level");
    CHECK(IS_A(sh, ShowStmt) && strcmp(sh->name, "transaction_isolation") == 0,
          "SHOW TRANSACTION ISOLATION LEVEL");
    const DeallocateStmt *d = (const DeallocateStmt *)parse_one(&a, "DEALLOCATE PREPARE ALL");
    CHECK(IS_A(d, DeallocateStmt) && d->name == NULL, "DEALLOCATE PREPARE ALL");
    d = (const DeallocateStmt *)parse_one(&a, "deallocate prepare");
    CHECK(IS_A(d, DeallocateStmt) && d->name && strcmp(d->name, "prepare") == 0,
          "DEALLOCATE PREPARE names \"prepare\"");
    d = (const DeallocateStmt *)parse_one(&a, "DEALLOCATE \"A\"\"b\"");
    CHECK(IS_A(d, DeallocateStmt) && d->name && strcmp(d->name, "A\"b") == 0, "quoted name");
    /* gone: "BEGIN anything" */
    expect_error("BEGIN garbage", "42601", 7, "syntax error at or near \"garbage\"");
    arena_destroy(&a);
}

static void test_deep_nesting(void)
{
    /* 5000 parentheses overflow the parser stack: 54001, not a crash */
    size_t n = 5000;
    char *sql = malloc(n * 2 + 16);
    strcpy(sql, "SELECT ");
    size_t off = strlen(sql);
    for (size_t i = 0; i < n; i++)
        sql[off++] = '(';
    sql[off++] = '1';
    for (size_t i = 0; i < n; i++)
        sql[off++] = ')';
    sql[off] = '\0';
    expect_error(sql, "54001", -1, "statement too complex");
    free(sql);
}

int main(void)
{
    test_statements();
    /* precedence as PostgreSQL's gram.y */
    expect_expr("1 + 2 * 3", "(+ 1 (* 2 3))");
    expect_expr("1 - 2 - 3", "(- (- 1 2) 3)");
    expect_expr("2 ^ 3 ^ 2", "(^ (^ 2 3) 2)");
    expect_expr("-2 ^ 2", "(^ -2 2)");
    expect_expr("- x ^ 2", "(^ (- x) 2)");
    expect_expr("a OR b AND NOT c", "(or a (and b (not c)))");
    expect_expr("a AND b AND c", "(and a b c)");
    expect_expr("x IS NULL OR y NOTNULL", "(or (isnull x) (notnull y))");
    expect_expr("a || b || c", "(|| (|| a b) c)");
    expect_expr("x::int + 1", "(+ (cast x int4) 1)");
    expect_expr("-1::int", "(- (cast 1 int4))");
    expect_expr("-1", "-1");
    expect_expr("- -1", "1");
    expect_expr("x NOT BETWEEN 1 AND 2 AND y", "(and (BETWEEN x 1 2) y)");
    expect_expr("x IN (1, 2)", "(in x 1 2)");
    expect_expr("x NOT IN (1)", "(in x 1)");
    expect_expr("f(1, $2)", "(f 1 $2)");
    expect_expr("CAST(1 AS double precision)", "(cast 1 float8)");
    expect_expr("'1'::timestamp with time zone", "(cast '1' timestamptz)");
    expect_expr("1::numeric(10, 2)", "(cast 1 numeric)");
    expect_expr("1::character varying(3)", "(cast 1 varchar)");
    expect_expr("date '2020-01-01'", "(cast '2020-01-01' date)");
    expect_expr("interval '1 day'", "(cast '1 day' interval)");
    expect_expr("int '2' + numeric '1.5'", "(+ (cast '2' int4) (cast '1.5' numeric))");
    expect_expr("1 IS DISTINCT FROM 2", "(distinct 1 2)");
    /* non-reserved keywords are names */
    expect_expr("window + session", "(+ window session)");
    expect_expr("watermark(stream)", "(watermark stream)");
    expect_expr("text", "text");
    /* syntax errors: PostgreSQL's messages and positions */
    expect_error("SELECT 1 +", "42601", 11, "syntax error at end of input");
    expect_error("SELECT 1 'abc'", "42601", 10, "syntax error at or near \"'abc'\"");
    expect_error("SELECT 1 2", "42601", 10, "syntax error at or near \"2\"");
    expect_error("SELECT 1;; SELECT (", "42601", 20, "syntax error at end of input");
    expect_error("select 1 < 2 = true", "42601", 14, "syntax error at or near \"=\"");
    expect_error("select 1 < 2 < 3", "42601", 14, "syntax error at or near \"<\"");
    expect_error("select $a", "42601", 8, "syntax error at or near \"$\"");
    expect_error("select 1 from", "42601", 14, "syntax error at end of input");
    expect_error("select 1; select 2 )", "42601", 20, "syntax error at or near \")\"");
    expect_error("select 1::float(60)", "22023", 17, NULL);
    expect_error("select $0", "42P02", 8, NULL);
    /* the keywords integer and decimal are not numbers */
    expect_error("select integer", "42601", 15, "syntax error at end of input");
    expect_error("select decimal + 1", "42601", 16, "syntax error at or near \"+\"");
    expect_error("SELECT 'abc", "42601", 8, NULL);
    test_transaction_statements();
    test_deep_nesting();
    return unit_done("test_parse");
}
