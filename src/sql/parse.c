/*
 * parse.c -- drives the Lemon parser over the tokenizer's tokens.
 *
 *   sql_parse(arena, sql, len, &stmts, err)   query string -> List of RawStmt
 *
 * One query string may hold several statements separated by ';'; a SEMI is
 * fed after the last token so the last one needs none, and empty statements
 * are skipped.  Like gram.y's lexer filter (parser.c), the driver looks one
 * token ahead to turn NOT before BETWEEN/IN/LIKE/ILIKE/SIMILAR into NOT_LA, WITH
 * before TIME into WITH_LA, and WINDOW before a name into WINDOW_LA (the
 * WINDOW clause: WINDOW is unreserved, and after a table a default reduce
 * would otherwise let it fall back to an alias).  Also here: the grammar's error callbacks, which
 * record PostgreSQL's messages ("syntax error at or near ...", "at end of
 * input") with the offending token's position.
 */
#include "sql/parser.h"
#include "sluice/utf8.h"
#include "sql.h"

#include <stdlib.h>

/* The Lemon-generated entry points (sql.c); lemon -m would declare them. */
void *sqlParserAlloc(void *(*mallocProc)(size_t), Parse *p);
void  sqlParserFree(void *parser, void (*freeProc)(void *));
void  sqlParser(void *parser, int major, Token minor);

void parse_syntax_error(Parse *p, int major, const Token *tok)
{
    if (sl_error_set(p->err))
        return;
    if (tok->offset >= p->len || (major == TK_SEMI && tok->len == 0)) {
        sl_error_at(p->err, ERRCODE_SYNTAX_ERROR, p->len, "syntax error at end of input");
        return;
    }
    int n = tok->len > 0 ? tok->len : 1;
    if (n > 200)
        n = 200;
    sl_error_at(p->err, ERRCODE_SYNTAX_ERROR, tok->offset, "syntax error at or near \"%.*s\"",
                n, p->sql + tok->offset);
}

void parse_stack_overflow(Parse *p)
{
    sl_error(p->err, ERRCODE_STATEMENT_TOO_COMPLEX, "statement too complex");
    p->failed = true;
}

void parse_add_stmt(Parse *p, Node *stmt, const Token *semi)
{
    RawStmt *rs = ARENA_NEW(p->arena, RawStmt);
    rs->stmt = stmt;
    rs->start = stmt->location; /* every statement's node is at its first token */
    rs->end = semi->offset;
    p->stmts = list_append(p->arena, p->stmts, rs);
}

static void *parser_malloc(size_t n)
{
    return sl_malloc(n);
}

int sql_parse(Arena *a, const char *sql, int len, List **stmts, SlError *err)
{
    /* The text must be UTF-8 before anything reads it: a literal copied
     * from it becomes a value as it is (PostgreSQL's pg_verifymbstr). */
    size_t bad = sl_utf8_invalid(sql, (size_t)len);
    if (bad < (size_t)len) {
        char msg[96];
        sl_utf8_message(sql + bad, (size_t)len - bad, msg, sizeof(msg));
        return sl_error_at(err, ERRCODE_CHARACTER_NOT_IN_REPERTOIRE, (int)bad, "%s", msg);
    }
    Parse p = {.arena = a, .sql = sql, .len = len, .err = err};
    Lexer lx;
    sql_lexer_init(&lx, a, sql, len);
    void *parser = sqlParserAlloc(parser_malloc, &p);

    Token tok, next;
    int code = sql_lex(&lx, &tok, err);
    int next_code = 0;
    bool have_next = false;
    while (code > 0 && !p.failed && !sl_error_set(err)) {
        if (code == TK_NOT || code == TK_WITH || code == TK_WINDOW) {
            next_code = sql_lex(&lx, &next, err);
            have_next = true;
            if (next_code < 0)
                break;
            if (code == TK_NOT && (next_code == TK_BETWEEN || next_code == TK_IN ||
                                   next_code == TK_LIKE || next_code == TK_ILIKE ||
                                   next_code == TK_SIMILAR))
                code = TK_NOT_LA;
            else if (code == TK_WITH && (next_code == TK_TIME || next_code == TK_ORDINALITY))
                code = TK_WITH_LA;
            else if (code == TK_WINDOW && next_code == TK_ID)
                code = TK_WINDOW_LA;
        }
        if (code == TK_SOME)
            code = TK_ANY;      /* x = SOME (a) is x = ANY (a) */
        sqlParser(parser, code, tok);
        if (have_next) {
            tok = next;
            code = next_code;
            have_next = false;
        } else {
            code = sql_lex(&lx, &tok, err);
        }
    }
    if (code == 0 && !p.failed && !sl_error_set(err)) {
        /* the virtual SEMI at the end, then the end of input */
        Token end = {.z = "", .n = 0, .offset = len, .len = 0};
        sqlParser(parser, TK_SEMI, end);
        if (!p.failed)
            sqlParser(parser, 0, end);
    }
    sqlParserFree(parser, sl_free);
    if (sl_error_set(err)) {
        *stmts = NULL;
        return -1;
    }
    if (p.failed) {
        /* the grammar failed without reporting: never expected, but say so */
        sl_error(err, ERRCODE_SYNTAX_ERROR, "syntax error");
        *stmts = NULL;
        return -1;
    }
    *stmts = p.stmts;
    return 0;
}
