/*
 * test_tokenize.c -- the SQL tokenizer (src/sql/tokenize.c): token codes,
 * values, offsets, PostgreSQL's operator and literal rules, and its errors
 * with their SQLSTATE and position.  Everything is allocated in one arena,
 * destroyed at the end, so LeakSanitizer proves nothing leaks.
 */
#include "unit.h"
#include "sql/parser.h"
#include "sql.h"
#include "sluice/expr.h"

#include <stdio.h>


typedef struct Want {
    int         code;
    const char *value;  /* NULL: don't check */
    int         offset; /* -1: don't check */
} Want;

/* Tokenizes sql and compares with want[] (terminated by code 0). */
static void expect_tokens(const char *sql, const Want *want)
{
    Arena a;
    arena_init(&a, 0);
    Lexer lx;
    SlError err = {0};
    sql_lexer_init(&lx, &a, sql, (int)strlen(sql));
    for (int i = 0;; i++) {
        Token t;
        int code = sql_lex(&lx, &t, &err);
        CHECK(code == want[i].code, "%s: token %d is %d, want %d", sql, i, code, want[i].code);
        if (code != want[i].code || code <= 0)
            break;
        if (want[i].value)
            CHECK(t.n == (int)strlen(want[i].value) && memcmp(t.z, want[i].value, (size_t)t.n) == 0,
                  "%s: token %d value '%.*s', want '%s'", sql, i, t.n, t.z, want[i].value);
        if (want[i].offset >= 0)
            CHECK(t.offset == want[i].offset, "%s: token %d at %d, want %d", sql, i, t.offset,
                  want[i].offset);
    }
    sl_error_clear(&err);
    arena_destroy(&a);
}

/* Tokenizes sql to the end and expects an error. */
static void expect_error(const char *sql, const char *sqlstate, int position, const char *msg)
{
    Arena a;
    arena_init(&a, 0);
    Lexer lx;
    SlError err = {0};
    sql_lexer_init(&lx, &a, sql, (int)strlen(sql));
    Token t;
    int code;
    while ((code = sql_lex(&lx, &t, &err)) > 0)
        ;
    CHECK(code < 0, "%s: no error", sql);
    CHECK(strcmp(err.sqlstate, sqlstate) == 0, "%s: sqlstate %s, want %s", sql, err.sqlstate,
          sqlstate);
    CHECK(err.position == position, "%s: position %d, want %d", sql, err.position, position);
    if (msg)
        CHECK(err.message && strcmp(err.message, msg) == 0, "%s: message '%s', want '%s'", sql,
              err.message, msg);
    sl_error_clear(&err);
    arena_destroy(&a);
}

/* sql_redact_secrets (redact.c): the literal after `secret-name =` is
 * masked however it is spelled; other values and comments are kept.  With
 * max, sql_redact_secrets_prefix: the tokens that start before max. */
static void expect_redacted_max(const char *sql, size_t max, const char *want)
{
    Arena a;
    arena_init(&a, 256);
    const char *got = max == SIZE_MAX ? sql_redact_secrets(&a, sql)
                                      : sql_redact_secrets_prefix(&a, sql, max);
    CHECK((got == NULL && want == NULL) ||
          (got != NULL && want != NULL && strcmp(got, want) == 0),
          "%s (%zu): redacted to %s, want %s", sql, max, got ? got : "NULL",
          want ? want : "NULL");
    arena_destroy(&a);
}

static void expect_redacted(const char *sql, const char *want)
{
    expect_redacted_max(sql, SIZE_MAX, want);
}

static void test_redact(void)
{
    expect_redacted("CREATE STREAM s (a text) WITH (topic = 't')",
                    "CREATE STREAM s (a text) WITH (topic = 't')");
    expect_redacted("WITH (\"kafka.sasl.password\" = 'it''s', \"kafka.sasl.username\"='u')",
                    "WITH (\"kafka.sasl.password\" = '********', \"kafka.sasl.username\"='u')");
    expect_redacted("WITH ('ssl.key.password'=E'a\\'b' , token = $x$p w$x$, secret = 12.5)",
                    "WITH ('ssl.key.password'='********' , token = '********', "
                    "secret = '********')");
    expect_redacted("WITH (kafka.sasl.password = pw /* password = 'kept' */)",
                    "WITH (kafka.sasl.password = '********' /* password = 'kept' */)");
    expect_redacted("WITH (password = 'unterminated", NULL);
    /* every spelling of a value the grammar takes: signed numbers, booleans,
     * identifiers and keywords */
    expect_redacted("CREATE SINK k WITH (\"kafka.sasl.password\" = -123, topic = 't')",
                    "CREATE SINK k WITH (\"kafka.sasl.password\" = '********', topic = 't')");
    expect_redacted("CREATE SINK k WITH (secret = true, \"kafka.ssl.key.password\" = - 1.5)",
                    "CREATE SINK k WITH (secret = '********', "
                    "\"kafka.ssl.key.password\" = '********')");
    expect_redacted("CREATE SINK k WITH (token=false,password=on,a=1)",
                    "CREATE SINK k WITH (token='********',password='********',a=1)");
    /* outside a WITH ( list a secret-sounding name is a column: kept */
    expect_redacted("CREATE CONTINUOUS QUERY q WITH (trigger = '0', \"kafka.sasl.password\" = "
                    "x) AS SELECT * FROM s WHERE token = 'abc' AND f(password = 3)",
                    "CREATE CONTINUOUS QUERY q WITH (trigger = '0', \"kafka.sasl.password\" = "
                    "'********') AS SELECT * FROM s WHERE token = 'abc' AND f(password = 3)");
    expect_redacted("SELECT * FROM t WHERE secret = 'x'; CREATE SINK k WITH (secret = 'y')",
                    "SELECT * FROM t WHERE secret = 'x'; CREATE SINK k WITH (secret = '********')");
    expect_redacted("WITH (f = (password = 'kept'))", "WITH (f = (password = 'kept'))");
    /* a role's password, however quoted (pg_stat_activity and the log) */
    expect_redacted("CREATE ROLE r LOGIN PASSWORD 'it''s' VALID UNTIL 'infinity'",
                    "CREATE ROLE r LOGIN PASSWORD '********' VALID UNTIL 'infinity'");
    expect_redacted("ALTER ROLE r WITH ENCRYPTED PASSWORD $p$x'y$p$; ALTER USER s PASSWORD E'a'",
                    "ALTER ROLE r WITH ENCRYPTED PASSWORD '********'; "
                    "ALTER USER s PASSWORD '********'");
    expect_redacted("ALTER ROLE r PASSWORD NULL", "ALTER ROLE r PASSWORD NULL");
    expect_redacted("SELECT 1 WHERE password = 'x'", "SELECT 1 WHERE password = 'x'");
    expect_redacted("CREATE ROLE r PASSWORD 'unterminated", NULL);
}

static void test_redact_prefix(void)
{
    expect_redacted_max("SELECT 1", 100, "SELECT 1");
    /* the text after max is not read: an unterminated string there is fine */
    expect_redacted_max("INSERT INTO t VALUES ('a'), ('b", 26, "INSERT INTO t VALUES ('a')");
    /* a token that starts before max is whole */
    expect_redacted_max("SELECT 'abcdef', 2", 9, "SELECT 'abcdef'");
    /* a secret whose value crosses max is masked, one past it is not shown */
    expect_redacted_max("CREATE SINK k WITH (secret = 'abcdef', topic = 't')", 31,
                  "CREATE SINK k WITH (secret = '********'");
    expect_redacted_max("CREATE ROLE r PASSWORD 'abcdef'", 21, "CREATE ROLE r PASSWORD");
    expect_redacted_max("CREATE ROLE r PASSWORD 'abcdef' LOGIN", 25,
                  "CREATE ROLE r PASSWORD '********'");
    expect_redacted_max("SELECT 'unterminated", 100, NULL);
    /* an opening comment longer than max: its first max bytes, not "" */
    expect_redacted_max("/* a long comment */ SELECT 1", 10, "/* a long ");
}

int main(void)
{
    test_redact();
    test_redact_prefix();
    expect_tokens("SELECT Foo, \"Bar\"\"x\" FROM t;", (Want[]){
        {TK_SELECT, "select", 0}, {TK_ID, "foo", 7}, {TK_COMMA, ",", 10},
        {TK_ID, "Bar\"x", 12}, {TK_FROM, "from", 21}, {TK_ID, "t", 26}, {TK_SEMI, ";", 27},
        {0, NULL, -1}});
    /* numbers */
    expect_tokens("12 1.5 .5 1e10 1.e-3 1..2", (Want[]){
        {TK_ICONST, "12", 0}, {TK_FCONST, "1.5", 3}, {TK_FCONST, ".5", 7},
        {TK_FCONST, "1e10", 10}, {TK_FCONST, "1.e-3", 15}, {TK_ICONST, "1", 21},
        {TK_DOT_DOT, "..", 22}, {TK_ICONST, "2", 24}, {0, NULL, -1}});
    /* strings: '' escape, continuation across a newline, E'', dollar quotes */
    expect_tokens("'it''s' 'a'\n  'b' E'\\t\\x41\\101\\u00e9\\'' $$x$y$$ $t$a$$b$t$", (Want[]){
        {TK_STRING, "it's", 0}, {TK_STRING, "ab", 8}, {TK_STRING, "\tAA\xc3\xa9'", 18},
        {TK_STRING, "x$y", 40}, {TK_STRING, "a$$b", 48}, {0, NULL, -1}});
    /* two literals on one line do not concatenate */
    expect_tokens("'a' 'b'", (Want[]){{TK_STRING, "a", 0}, {TK_STRING, "b", 4}, {0, NULL, -1}});
    /* parameters, comments */
    expect_tokens("$1 -- comment\n /* a /* nested */ b */ $23", (Want[]){
        {TK_PARAM, "1", 0}, {TK_PARAM, "23", 38}, {0, NULL, -1}});
    /* operators: PostgreSQL's trailing +/- rule, multi-char tokens */
    expect_tokens("a=-1 a+-b a@-b a<=b a>=b a<>b a!=b a::int a||b a->>'k' a#>b a<=>b", (Want[]){
        {TK_ID, "a", 0}, {TK_EQ, "=", 1}, {TK_MINUS, "-", 2}, {TK_ICONST, "1", 3},
        {TK_ID, "a", 5}, {TK_PLUS, "+", 6}, {TK_MINUS, "-", 7}, {TK_ID, "b", 8},
        {TK_ID, "a", 10}, {TK_OP, "@-", 11}, {TK_ID, "b", 13},
        {TK_ID, "a", 15}, {TK_LE, "<=", 16}, {TK_ID, "b", 18},
        {TK_ID, "a", 20}, {TK_GE, ">=", 21}, {TK_ID, "b", 23},
        {TK_ID, "a", 25}, {TK_NE, "<>", 26}, {TK_ID, "b", 28},
        {TK_ID, "a", 30}, {TK_NE, "<>", 31}, {TK_ID, "b", 33},
        {TK_ID, "a", 35}, {TK_TYPECAST, "::", 36}, {TK_INT, "int", 38},
        {TK_ID, "a", 42}, {TK_OP, "||", 43}, {TK_ID, "b", 45},
        {TK_ID, "a", 47}, {TK_OP, "->>", 48}, {TK_STRING, "k", 51},
        {TK_ID, "a", 55}, {TK_OP, "#>", 56}, {TK_ID, "b", 58},
        {TK_ID, "a", 60}, {TK_OP, "<=>", 61}, {TK_ID, "b", 64}, {0, NULL, -1}});
    /* a comment start ends an operator */
    expect_tokens("1+--x\n2", (Want[]){
        {TK_ICONST, "1", 0}, {TK_PLUS, "+", 1}, {TK_ICONST, "2", 6}, {0, NULL, -1}});
    /* keywords are case-insensitive; non-keywords are IDs */
    expect_tokens("SeLeCt WINDOW Watermark xyz", (Want[]){
        {TK_SELECT, "select", 0}, {TK_WINDOW, "window", 7}, {TK_WATERMARK, "watermark", 14},
        {TK_ID, "xyz", 24}, {0, NULL, -1}});
    /* identifiers longer than 63 bytes are truncated */
    expect_tokens("aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa",
                  (Want[]){{TK_ID, "aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa", 0},
                           {0, NULL, -1}});
    /* errors: SQLSTATE 42601 at the token's 1-based position */
    expect_error("SELECT 'abc", "42601", 8, "unterminated quoted string at or near \"'abc\"");
    expect_error("SELECT /* x", "42601", 8, "unterminated /* comment at or near \"/* x\"");
    expect_error("SELECT \"ab", "42601", 8, "unterminated quoted identifier at or near \"\"ab\"");
    expect_error("SELECT 123abc", "42601", 8,
                 "trailing junk after numeric literal at or near \"123abc\"");
    expect_error("SELECT 1.5e", "42601", 8, "trailing junk after numeric literal at or near \"1.5e\"");
    expect_error("SELECT $1abc", "42601", 8, "trailing junk after parameter at or near \"$1abc\"");
    expect_error("SELECT $$abc", "42601", 8, "unterminated dollar-quoted string at or near \"$$abc\"");
    expect_error("SELECT \"\"", "42601", 8, "zero-length delimited identifier at or near \"\"\"\"");
    expect_error("SELECT E'\\000'", "22021", 0, NULL);
    expect_error("SELECT E'\\uD800'", "42601", 16,
                 "invalid Unicode surrogate pair at or near \"'\"");
    expect_error("SELECT e'\\u12'", "42601", 10, "invalid Unicode escape");
    return unit_done("test_tokenize");
}
