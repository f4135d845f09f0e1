/*
 * test_eval.c -- analysis and evaluation through the runtime interface
 * (rt_parse, rt_prepare, rt_describe, rt_execute): values printed exactly as
 * PostgreSQL 15 prints them, column names, error SQLSTATEs, messages and
 * positions, parameters in text and binary format, and the vectorized
 * evaluator over a many-row batch (selections, three-valued logic, no
 * division by zero in a branch not taken), constant folding (ex_fold_call)
 * against the evaluator, and the functions the runtime
 * answers (EvalCtx.hooks: each context its own, none a clear 55000).
 * Arenas own everything: LeakSanitizer must stay quiet.
 */
#include "unit.h"
#include "sluice/runtime.h"
#include "sluice/acl.h"
#include "sluice/ast.h"
#include "sluice/exec.h"

#include <stdio.h>


/* The sink: rows as "a|b" lines, NULL as the empty string. */
static int collect_cb(ResultSink *sink, const Batch *b)
{
    StrBuf *out = sink->ctx;
    for (uint32_t r = 0; r < b->nrows; r++) {
        for (uint32_t c = 0; c < b->ncols; c++) {
            if (c)
                strbuf_putc(out, '|');
            if (!vector_is_null(&b->cols[c], r))
                value_format_text(&b->cols[c], r, out);
        }
        strbuf_putc(out, '\n');
    }
    return 0;
}

/* Runs one statement; the result (or "ERROR sqlstate pos message") and the
 * column names go to out / names. */
static void run(const char *sql, const ParamValue *params, int nparams, const SlType *ptypes,
                int nptypes, StrBuf *out, StrBuf *names, char *tag)
{
    Arena a;
    arena_init(&a, 0);
    SlError err = {0};
    List *stmts;
    Prepared *p;
    tag[0] = '\0';
    if (rt_parse(&a, sql, strlen(sql), &stmts, &err) < 0 ||
        rt_prepare(NULL, &a, sql, list_nth(stmts, 0), ptypes, nptypes, &p, &err) < 0)
        goto fail;
    int ncols, np;
    const ColumnDesc *cols;
    const SlType *pt;
    rt_describe(p, &ncols, &cols, &np, &pt);
    for (int i = 0; names && i < ncols; i++)
        strbuf_printf(names, "%s%s:%s", i ? "," : "", cols[i].name, type_name(cols[i].type.id));
    ResultSink sink = {out, collect_cb};
    if (rt_execute(p, params, nparams, &sink, tag, 64, &err) < 0)
        goto fail;
    arena_destroy(&a);
    return;
fail:
    strbuf_printf(out, "ERROR %s %d %s", err.sqlstate, err.position, err.message);
    sl_error_clear(&err);
    arena_destroy(&a);
}

static void expect(const char *sql, const char *want)
{
    StrBuf out;
    strbuf_init(&out);
    char tag[64];
    run(sql, NULL, 0, NULL, 0, &out, NULL, tag);
    const char *got = out.data ? out.data : "";
    size_t n = strlen(got);
    if (n && got[n - 1] == '\n')
        n--;
    CHECK(strlen(want) == n && memcmp(got, want, n) == 0, "%s\n  got:  %.*s\n  want: %s", sql,
          (int)n, got, want);
    strbuf_free(&out);
}

static void expect_names(const char *sql, const char *want)
{
    StrBuf out, names;
    strbuf_init(&out);
    strbuf_init(&names);
    char tag[64];
    run(sql, NULL, 0, NULL, 0, &out, &names, tag);
    CHECK(names.data && strcmp(names.data, want) == 0, "%s: names %s, want %s", sql,
          names.data ? names.data : "", want);
    strbuf_free(&out);
    strbuf_free(&names);
}

static void test_values(void)
{
    expect("SELECT 1, -2147483648, 2147483648, 9223372036854775808", "1|-2147483648|2147483648|9223372036854775808");
    expect("SELECT 0.1::float8 + 0.2, 1e15::float8, 1e14::float8, 1e-5::float8, -0.0::float8",
           "0.30000000000000004|1e+15|100000000000000|1e-05|-0");
    expect("SELECT 0.1::float4, 1e6::float4, 123456::float4, 'nan'::float8, '-inf'::float8",
           "0.1|1e+06|123456|NaN|-Infinity");
    expect("SELECT 1.50 * 2, 1::numeric / 3, 10::numeric / 4, 5.5 % 2, 2::numeric(5,2)",
           "3.00|0.33333333333333333333|2.5000000000000000|1.5|2.00");
    expect("SELECT 123456789012345678901234567890 * 987654321098765432109876543210",
           "121932631137021795226185032733622923332237463801111263526900");
    expect("SELECT 1.1 + 2.205, 100.0 - 0.001, 0.000, -0.0", "3.305|99.999|0.000|0.0");
    expect("SELECT 2.5::int, (-2.5)::int, 2.5::float8::int, 3.5::float8::int", "3|-3|2|4");
    expect("SELECT 'a' || 'b', 1 || 'x', 'abc' < 'abd', 'a' < 'B'", "ab|1x|t|f");
    expect("SELECT true AND NULL, false AND NULL, true OR NULL, NOT NULL::bool", "|f|t|");
    expect("SELECT 1 IN (2, NULL), 1 NOT IN (2, 3), 2 BETWEEN 1 AND 3, NULL IS NULL", "|t|t|t");
    expect("SELECT 'abc' LIKE 'a%', 'abc' LIKE 'a_c', 'ABC' ILIKE 'a%', 'a%' LIKE 'a$%' ESCAPE '$'",
           "t|t|t|t");
    expect("SELECT CASE WHEN 1 > 2 THEN 'a' ELSE 'b' END, CASE 2 WHEN 1 THEN 'x' END", "b|");
    expect("SELECT COALESCE(NULL, 2, 3), NULLIF(1, 1), GREATEST(1, 5, 3), LEAST(4, 2)", "2||5|2");
    expect("SELECT 1 IS DISTINCT FROM NULL, NULL IS NOT DISTINCT FROM NULL", "t|t");
    expect("SELECT 'x'::varchar(3) || 'yz', 'abcd'::varchar(2), length('héllo')", "xyz|ab|5");
    expect("SELECT 'true'::bool, ' 12 '::int + 1, '1e3'::numeric, 1::bool", "t|13|1000|t");
    expect("SELECT E'a\\tb', $$x$$, 'it''s'", "a\tb|x|it's");
    expect("SELECT 1 WHERE false", "");
    expect("SELECT", "");
}

static void test_names(void)
{
    expect_names("SELECT 1, 1::int, abs(-1), 'a', CASE WHEN true THEN 1 END, COALESCE(1, 2), "
                 "NULLIF(1, 2), 1 AS x, (1 + 2)::int8, abs(1)::text, true",
                 "?column?:integer,int4:integer,abs:integer,?column?:text,case:integer,"
                 "coalesce:integer,nullif:integer,x:integer,int8:bigint,abs:text,?column?:boolean");
    expect_names("SELECT 1::double precision, 1::numeric(3,1), 'a'::varchar(3), 1.5, 1::int2 + 1",
                 "float8:double precision,numeric:numeric,varchar:character varying,"
                 "?column?:numeric,?column?:integer");
}

static void test_errors(void)
{
    expect("SELECT 'abc'::int", "ERROR 22P02 8 invalid input syntax for type integer: \"abc\"");
    expect("SELECT '99999999999'::int",
           "ERROR 22003 8 value \"99999999999\" is out of range for type integer");
    expect("SELECT 1 + true", "ERROR 42883 10 operator does not exist: integer + boolean");
    expect("SELECT -true", "ERROR 42883 8 operator does not exist: - boolean");
    expect("SELECT foo(1)", "ERROR 42883 8 function foo(integer) does not exist");
    expect("SELECT '1' + '2'", "ERROR 42725 12 operator is not unique: unknown + unknown");
    expect("SELECT 1 AND true", "ERROR 42804 8 argument of AND must be type boolean, not type integer");
    expect("SELECT CASE WHEN true THEN 1 ELSE false END",
           "ERROR 42804 28 CASE types boolean and integer cannot be matched");
    expect("SELECT COALESCE(1, 'a')", "ERROR 22P02 20 invalid input syntax for type integer: \"a\"");
    expect("SELECT 'x'::foo", "ERROR 42704 13 type \"foo\" does not exist");
    expect("SELECT x", "ERROR 42703 8 column \"x\" does not exist");
    expect("SELECT *", "ERROR 42601 8 SELECT * with no tables specified is not valid");
    expect("SELECT 2147483647 + 1", "ERROR 22003 0 integer out of range");
    expect("SELECT 9223372036854775807 * 2", "ERROR 22003 0 bigint out of range");
    expect("SELECT 1 / 0", "ERROR 22012 0 division by zero");
    expect("SELECT 1.5 % 0", "ERROR 22012 0 division by zero");
    expect("SELECT 1e308::float8 * 10", "ERROR 22003 0 value out of range: overflow");
    expect("SELECT (-32768)::int2 / (-1)::int2", "ERROR 22003 0 smallint out of range");
    expect("SELECT 12345.678::numeric(5,2)", "ERROR 22003 0 numeric field overflow");
    expect("SELECT 1::numeric(2000)",
           "ERROR 22023 11 NUMERIC precision 2000 must be between 1 and 1000");
    expect("CREATE INDEX i ON t (a)", "ERROR 0A000 1 CREATE INDEX is not supported yet");
    /* without rt_init there is no catalog: a clear 55000, not a crash */
    expect("SELECT * FROM t", "ERROR 55000 15 no catalog is open: the runtime was not "
                              "initialized (rt_init)");
    expect("CREATE TABLE t (a int)", "ERROR 55000 0 no catalog is open: the runtime was not "
                                     "initialized (rt_init)");
    expect("SELECT pg_get_userbyid(10)",
           "ERROR 55000 0 pg_get_userbyid needs the catalog, and none is open here");
    expect("SELECT has_table_privilege('t', 'SELECT')",
           "ERROR 55000 0 has_table_privilege needs the catalog, and none is open here");
    expect("SELECT sluice_stream_stat('s', 'rows') IS NULL", "t");
    expect("SELECT 1 +", "ERROR 42601 11 syntax error at end of input");
    /* no error in a branch not taken */
    expect("SELECT CASE WHEN true THEN 1 ELSE 1 / 0 END, false AND 1 / 0 = 1", "1|f");
}

static void test_params(void)
{
    StrBuf out;
    char tag[64];
    /* text format; $1 inferred as integer from 1 + $1, $2 as text */
    strbuf_init(&out);
    ParamValue tp[2] = {{"41", 2, 0}, {"x", 1, 0}};
    run("SELECT 1 + $1, $2", tp, 2, NULL, 0, &out, NULL, tag);
    CHECK(out.data && strcmp(out.data, "42|x\n") == 0 && strcmp(tag, "SELECT 1") == 0,
          "text params: %s %s", out.data, tag);
    strbuf_free(&out);
    /* binary format, with declared types */
    strbuf_init(&out);
    SlType types[3] = {sl_type(TYPE_INT8), sl_type(TYPE_FLOAT8), sl_type(TYPE_BOOL)};
    unsigned char i8[8] = {0, 0, 0, 0, 0, 0, 1, 0};
    unsigned char f8[8] = {0x3f, 0xf8, 0, 0, 0, 0, 0, 0}; /* 1.5 */
    unsigned char b1[1] = {1};
    ParamValue bp[3] = {{(char *)i8, 8, 1}, {(char *)f8, 8, 1}, {(char *)b1, 1, 1}};
    run("SELECT $1 * 2, $2, $3", bp, 3, types, 3, &out, NULL, tag);
    CHECK(out.data && strcmp(out.data, "512|1.5|t\n") == 0, "binary params: %s", out.data);
    strbuf_free(&out);
    /* NULL and a bad value */
    strbuf_init(&out);
    ParamValue np[1] = {{NULL, -1, 0}};
    run("SELECT $1::int IS NULL", np, 1, NULL, 0, &out, NULL, tag);
    CHECK(out.data && strcmp(out.data, "t\n") == 0, "null param: %s", out.data);
    strbuf_reset(&out);
    ParamValue badp[1] = {{"zz", 2, 0}};
    run("SELECT $1::int", badp, 1, NULL, 0, &out, NULL, tag);
    CHECK(out.data && strstr(out.data, "22P02") != NULL, "bad param: %s", out.data);
    strbuf_free(&out);
    /* utility statements: a tag, no rows */
    strbuf_init(&out);
    run("BEGIN", NULL, 0, NULL, 0, &out, NULL, tag);
    CHECK(strcmp(tag, "BEGIN") == 0 && out.len == 0, "BEGIN: %s", tag);
    run("START TRANSACTION ISOLATION LEVEL READ COMMITTED", NULL, 0, NULL, 0, &out, NULL, tag);
    CHECK(strcmp(tag, "START TRANSACTION") == 0, "START: %s", tag);
    run("END", NULL, 0, NULL, 0, &out, NULL, tag);
    CHECK(strcmp(tag, "COMMIT") == 0, "END: %s", tag);
    run("ABORT", NULL, 0, NULL, 0, &out, NULL, tag);
    CHECK(strcmp(tag, "ROLLBACK") == 0, "ABORT: %s", tag);
    run("SET extra_float_digits = 3", NULL, 0, NULL, 0, &out, NULL, tag);
    CHECK(strcmp(tag, "SET") == 0, "SET: %s", tag);
    strbuf_free(&out);
}

/* The evaluator over a 1000-row batch with a column: a selection-driven
 * CASE and AND never divide by zero, NULLs follow three-valued logic. */
static void test_vectors(void)
{
    Arena a;
    arena_init(&a, 0);
    SlError err = {0};
    const uint32_t n = 1000;
    Vector col;
    vector_init(&col, &a, sl_type(TYPE_INT4), n, true);
    for (uint32_t i = 0; i < n; i++) {
        col.v.i32[i] = (int32_t)(i % 10);
        col.nulls[i] = i % 7 == 0;
    }
    Batch in = {n, 1, &col};
    /* build: CASE WHEN c = 0 THEN 0 ELSE 100 / c END, c <> 0 AND 10 / c > 1 */
    Expr c = {.kind = EXPR_COLUMN, .type = sl_type(TYPE_INT4), .index = 0};
    Expr zero = {.kind = EXPR_CONST, .type = sl_type(TYPE_INT4)};
    Expr hundred = {.kind = EXPR_CONST, .type = sl_type(TYPE_INT4)};
    vector_init(&zero.value, &a, zero.type, 1, true);
    vector_init(&hundred.value, &a, hundred.type, 1, true);
    zero.value.v.i32[0] = 0;
    hundred.value.v.i32[0] = 100;
    const FuncDesc *eq[4], *div[4], *ne[4];
    CHECK(ex_func_candidates("=", true, 2, eq, 4) > 0, "=");
    CHECK(ex_func_candidates("/", true, 2, div, 4) > 0, "/");
    CHECK(ex_func_candidates("<>", true, 2, ne, 4) > 0, "<>");
    const FuncDesc *eq4 = NULL, *div4 = NULL, *ne4 = NULL;
    for (int i = 0; i < 4; i++) {
        if (eq[i] && eq[i]->args[0] == TYPE_INT4 && eq[i]->args[1] == TYPE_INT4)
            eq4 = eq[i];
        if (div[i] && div[i]->args[0] == TYPE_INT4 && div[i]->args[1] == TYPE_INT4)
            div4 = div[i];
        if (ne[i] && ne[i]->args[0] == TYPE_INT4 && ne[i]->args[1] == TYPE_INT4)
            ne4 = ne[i];
    }
    CHECK(eq4 && div4 && ne4, "int4 operators");
    if (eq4 && div4 && ne4) {
        Expr *eqargs[2] = {&c, &zero}, *divargs[2] = {&hundred, &c};
        Expr cond = {.kind = EXPR_FUNC, .type = sl_type(TYPE_BOOL), .fn = eq4, .nargs = 2,
                     .args = eqargs};
        Expr q = {.kind = EXPR_FUNC, .type = sl_type(TYPE_INT4), .fn = div4, .nargs = 2,
                  .args = divargs};
        Expr *caseargs[3] = {&cond, &zero, &q};
        Expr kase = {.kind = EXPR_CASE, .type = sl_type(TYPE_INT4), .nargs = 3,
                     .args = caseargs, .has_else = true};
        EvalCtx cx = {.arena = &a, .err = &err};
        Vector out;
        CHECK(ex_eval(&cx, &kase, &in, n, &out) == 0, "case: %s", err.message);
        bool ok = true;
        for (uint32_t i = 0; i < n && ok; i++) {
            if (i % 7 == 0)
                ok = vector_is_null(&out, i); /* NULL = 0 is not true: ELSE, 100 / NULL */
            else
                ok = !vector_is_null(&out, i) &&
                     out.v.i32[i] == (i % 10 == 0 ? 0 : 100 / (int32_t)(i % 10));
        }
        CHECK(ok, "CASE over the batch");

        Expr neq = {.kind = EXPR_FUNC, .type = sl_type(TYPE_BOOL), .fn = ne4, .nargs = 2,
                    .args = eqargs};
        Expr *andargs[2] = {&neq, &cond};
        Expr *condargs2[2] = {&q, &zero};
        Expr gt = {.kind = EXPR_FUNC, .type = sl_type(TYPE_BOOL), .fn = ne4, .nargs = 2,
                   .args = condargs2};
        andargs[1] = &gt;
        Expr and = {.kind = EXPR_AND, .type = sl_type(TYPE_BOOL), .nargs = 2, .args = andargs};
        CHECK(ex_eval(&cx, &and, &in, n, &out) == 0, "and: %s", err.message);
        ok = true;
        for (uint32_t i = 0; i < n && ok; i++) {
            if (i % 7 == 0)
                ok = vector_is_null(&out, i);
            else
                ok = !vector_is_null(&out, i) && out.v.b[i] == (i % 10 != 0);
        }
        CHECK(ok, "AND over the batch");
    }
    sl_error_clear(&err);
    arena_destroy(&a);
}

/* Answers that say which context asked: the role name and the table are
 * the context's argument (a string), a stream's rows its length. */
static char *hook_role_name(void *arg, int64_t oid, Arena *a)
{
    return arena_printf(a, "%s-%lld", (const char *)arg, (long long)oid);
}

static int hook_check(void *arg, const AclQuestion *q, SlError *err)
{
    (void)err;
    return q->object != NULL && strcmp(q->object, arg) == 0 ? ACL_YES : ACL_NO;
}

/* YES when asked about role 42 by oid, NO when asked about the current
 * role. */
static int hook_check_role(void *arg, const AclQuestion *q, SlError *err)
{
    (void)arg;
    (void)err;
    return !q->current_role && q->role == NULL && q->role_oid == 42 ? ACL_YES : ACL_NO;
}

static int hook_stats(void *arg, const char *name, size_t len, IngestStats *out, Arena *a)
{
    (void)name;
    (void)a;
    memset(out, 0, sizeof(*out));
    out->rows = (int64_t)(len + strlen(arg));
    return 1;
}

static const FuncDesc *func(const char *name, int nargs, SlTypeId arg0)
{
    const FuncDesc *c[8];
    int n = ex_func_candidates(name, false, nargs, c, 8);
    for (int i = 0; i < n; i++)
        if (c[i]->kargs[0] == arg0)
            return c[i];
    return NULL;
}

static Expr *text_const(Arena *a, const char *s)
{
    Expr *e = ARENA_NEW(a, Expr);
    e->kind = EXPR_CONST;
    e->type = sl_type(TYPE_TEXT);
    vector_init(&e->value, a, e->type, 1, true);
    e->value.v.str[0].ptr = s;
    e->value.v.str[0].len = (uint32_t)strlen(s);
    return e;
}

/* The privilege and stream functions read the answers of the context that
 * evaluates them: two contexts with their own arguments each get theirs
 * (no process-wide hook), a context without any fails the privilege
 * functions with 55000 and gives NULL counters. */
/* Constant folding (ex_fold_call, the function library's): a call of
 * constants gets the value the evaluator gives it, NULL for a strict
 * function of a NULL, the kernel's error, and XX000 for what is not a call
 * of constants. */
static int32_t *fold_int4(Arena *a, int32_t v, bool null, Expr *e)
{
    *e = (Expr){.kind = EXPR_CONST, .type = sl_type(TYPE_INT4)};
    vector_init(&e->value, a, e->type, 1, true);
    e->value.v.i32[0] = v;
    e->value.nulls[0] = null;
    return &e->value.v.i32[0];
}

static void test_fold(void)
{
    Arena a;
    arena_init(&a, 0);
    SlError err = {0};
    EvalCtx cx = {.arena = &a, .err = &err};
    Expr hundred, seven, null, zero, col = {.kind = EXPR_COLUMN, .type = sl_type(TYPE_INT4)};
    fold_int4(&a, 100, false, &hundred);
    fold_int4(&a, 7, false, &seven);
    fold_int4(&a, 0, true, &null);
    fold_int4(&a, 0, false, &zero);
    const FuncDesc *div[4] = {0}, *div4 = NULL;
    int nc = ex_func_candidates("/", true, 2, div, 4);
    for (int i = 0; i < nc && i < 4; i++)
        if (div[i]->args[0] == TYPE_INT4 && div[i]->args[1] == TYPE_INT4)
            div4 = div[i];
    CHECK(div4 != NULL, "int4 /");
    if (div4 == NULL)
        goto out;
    Expr *args[2] = {&hundred, &seven};
    Expr q = {.kind = EXPR_FUNC, .type = sl_type(TYPE_INT4), .fn = div4, .nargs = 2,
              .args = args};
    Vector f, v;
    CHECK(ex_fold_call(&cx, &q, &f) == 0 && ex_eval(&cx, &q, NULL, 1, &v) == 0, "100 / 7");
    CHECK(!vector_is_null(&f, 0) && f.v.i32[0] == 14 && !vector_is_null(&v, 0) &&
          v.v.i32[0] == 14, "100 / 7 folds to 14, as evaluated");
    args[1] = &null;
    CHECK(ex_fold_call(&cx, &q, &f) == 0 && vector_is_null(&f, 0), "100 / NULL folds to NULL");
    args[1] = &zero;
    CHECK(ex_fold_call(&cx, &q, &f) < 0 && strcmp(err.sqlstate, "22012") == 0,
          "100 / 0 fails as evaluated: %s", err.sqlstate);
    sl_error_clear(&err);
    args[1] = &col;
    CHECK(ex_fold_call(&cx, &q, &f) < 0 && strcmp(err.sqlstate, "XX000") == 0,
          "a column is not folded: %s", err.sqlstate);
    sl_error_clear(&err);
    CHECK(ex_fold_call(&cx, &hundred, &f) < 0 && strcmp(err.sqlstate, "XX000") == 0,
          "a constant is no call: %s", err.sqlstate);
    sl_error_clear(&err);

    /* a cast of a text literal; a NULL one */
    Expr txt = {.kind = EXPR_CONST, .type = sl_type(TYPE_TEXT)};
    vector_init(&txt.value, &a, txt.type, 1, true);
    txt.value.v.str[0] = (SlStr){"42", 2};
    Expr *carg[1] = {&txt};
    Expr cast = {.kind = EXPR_CAST, .type = sl_type(TYPE_INT4), .nargs = 1, .args = carg,
                 .cast = ex_cast_fn(TYPE_TEXT, TYPE_INT4, false)};
    CHECK(cast.cast != NULL && ex_fold_call(&cx, &cast, &f) == 0 && !vector_is_null(&f, 0) &&
          f.v.i32[0] == 42, "'42'::int4 folds to 42");
    txt.value.nulls[0] = 1;
    CHECK(ex_fold_call(&cx, &cast, &f) == 0 && vector_is_null(&f, 0), "NULL::int4 folds to NULL");

    /* a non-strict function sees its NULL arguments: concat('ab', NULL) */
    const FuncDesc *concat = ex_func_variadic("concat");
    CHECK(concat != NULL && (concat->flags & FUNC_NONSTRICT), "concat is non-strict");
    if (concat != NULL) {
        Expr ab = {.kind = EXPR_CONST, .type = sl_type(TYPE_TEXT)}, tnull = ab;
        vector_init(&ab.value, &a, ab.type, 1, true);
        ab.value.v.str[0] = (SlStr){"ab", 2};
        vector_init(&tnull.value, &a, tnull.type, 1, true);
        tnull.value.nulls[0] = 1;
        Expr *cargs[2] = {&ab, &tnull};
        Expr cc = {.kind = EXPR_FUNC, .type = sl_type(TYPE_TEXT), .fn = concat, .nargs = 2,
                   .args = cargs};
        CHECK(ex_fold_call(&cx, &cc, &f) == 0 && !vector_is_null(&f, 0) &&
              f.v.str[0].len == 2 && memcmp(f.v.str[0].ptr, "ab", 2) == 0,
              "concat('ab', NULL) folds to 'ab'");
    }
out:
    sl_error_clear(&err);
    arena_destroy(&a);
}

static void test_fn_hooks(void)
{
    Arena a;
    arena_init(&a, 0);
    SlError err = {0};
    const FuncDesc *userbyid = func("pg_get_userbyid", 1, TYPE_INT8);
    const FuncDesc *priv = func("has_table_privilege", 2, TYPE_TEXT);
    const FuncDesc *stat = func("sluice_stream_stat", 2, TYPE_TEXT);
    CHECK(userbyid && priv && stat, "the functions exist");
    if (!userbyid || !priv || !stat)
        return;
    Expr oid = {.kind = EXPR_CONST, .type = sl_type(TYPE_INT8)};
    vector_init(&oid.value, &a, oid.type, 1, true);
    oid.value.v.i64[0] = 10;
    Expr *uargs[1] = {&oid};
    Expr user = {.kind = EXPR_FUNC, .type = sl_type(TYPE_TEXT), .fn = userbyid, .nargs = 1,
                 .args = uargs};
    Expr *pargs[2] = {text_const(&a, "t1"), text_const(&a, "SELECT")};
    Expr has = {.kind = EXPR_FUNC, .type = sl_type(TYPE_BOOL), .fn = priv, .nargs = 2,
                .args = pargs};
    Expr *sargs[2] = {text_const(&a, "abc"), text_const(&a, "rows")};
    Expr rows = {.kind = EXPR_FUNC, .type = sl_type(TYPE_INT8), .fn = stat, .nargs = 2,
                 .args = sargs};

    static const ExAclHooks acl = {hook_check, hook_role_name};
    ExFnHooks h1 = {&acl, "t1", hook_stats, "x", 0}, h2 = {&acl, "t2", hook_stats, "xyz", 0};
    EvalCtx c1 = {.arena = &a, .err = &err, .hooks = &h1};
    EvalCtx c2 = {.arena = &a, .err = &err, .hooks = &h2};
    Vector out;
    CHECK(ex_eval(&c1, &user, NULL, 1, &out) == 0 && out.v.str[0].len == 5 &&
          memcmp(out.v.str[0].ptr, "t1-10", 5) == 0, "pg_get_userbyid in context 1");
    CHECK(ex_eval(&c2, &user, NULL, 1, &out) == 0 && out.v.str[0].len == 5 &&
          memcmp(out.v.str[0].ptr, "t2-10", 5) == 0, "pg_get_userbyid in context 2");
    CHECK(ex_eval(&c1, &has, NULL, 1, &out) == 0 && !vector_is_null(&out, 0) && out.v.b[0],
          "has_table_privilege in context 1");
    CHECK(ex_eval(&c2, &has, NULL, 1, &out) == 0 && !vector_is_null(&out, 0) && !out.v.b[0],
          "has_table_privilege in context 2");
    CHECK(ex_eval(&c1, &rows, NULL, 1, &out) == 0 && out.v.i64[0] == 4, "stream rows 1");
    CHECK(ex_eval(&c2, &rows, NULL, 1, &out) == 0 && out.v.i64[0] == 6, "stream rows 2");

    /* hooks naming a role (a continuous query's owner): the form without
     * a role asks about it, not about the running statement's */
    static const ExAclHooks by_role = {hook_check_role, hook_role_name};
    ExFnHooks owner = {&by_role, "t1", hook_stats, "x", 42}, session = owner;
    session.role = 0;
    EvalCtx co = {.arena = &a, .err = &err, .hooks = &owner};
    EvalCtx cs = {.arena = &a, .err = &err, .hooks = &session};
    CHECK(ex_eval(&co, &has, NULL, 1, &out) == 0 && !vector_is_null(&out, 0) && out.v.b[0],
          "has_table_privilege(t, p) asks about the hooks' role");
    CHECK(ex_eval(&cs, &has, NULL, 1, &out) == 0 && !vector_is_null(&out, 0) && !out.v.b[0],
          "has_table_privilege(t, p) without a hooks' role asks about the current role");

    /* a context without answers: a clear error, never a crash */
    ExFnHooks none = {0};
    EvalCtx bare = {.arena = &a, .err = &err}, empty = {.arena = &a, .err = &err, .hooks = &none};
    EvalCtx *ctxs[2] = {&bare, &empty};
    for (int i = 0; i < 2; i++) {
        CHECK(ex_eval(ctxs[i], &user, NULL, 1, &out) < 0 &&
              strcmp(err.sqlstate, "55000") == 0, "pg_get_userbyid without answers: %s",
              err.message ? err.message : "no error");
        sl_error_clear(&err);
        CHECK(ex_eval(ctxs[i], &has, NULL, 1, &out) < 0 &&
              strcmp(err.sqlstate, "55000") == 0, "has_table_privilege without answers");
        sl_error_clear(&err);
        CHECK(ex_eval(ctxs[i], &rows, NULL, 1, &out) == 0 && vector_is_null(&out, 0),
              "sluice_stream_stat without answers is NULL");
    }
    sl_error_clear(&err);
    arena_destroy(&a);
}

int main(void)
{
    test_values();
    test_names();
    test_errors();
    test_params();
    test_vectors();
    test_fold();
    test_fn_hooks();
    return unit_done("test_eval");
}
