/*
 * redact.c -- statement text with its secrets hidden, for the catalog
 * views that show a relation's SQL (sys.streams, sys.sinks, sys.tables,
 * sys.queries, pg_get_viewdef).
 *
 *   sql_redact_secrets   the text with every `name = literal` whose name
 *                        says it is a secret (opts_is_secret) showing the
 *                        literal as '********'
 *
 * It lexes with the SQL tokenizer, so quotes, escapes, dollar quoting and
 * comments are read as the parser reads them: a literal is replaced where
 * it stands, whatever its spelling.  A dotted unquoted name
 * (kafka.sasl.password = ...) is judged by its last part.  Text that does
 * not lex is not shown at all.
 */
#include "sql/parser.h"
#include "sluice/expr.h"
#include "sluice/options.h"
#include "sluice/strbuf.h"
#include "sql.h"

const char *sql_redact_secrets(Arena *a, const char *sql)
{
    if (sql == NULL)
        return NULL;
    Arena scratch;
    arena_init(&scratch, 1024);
    Lexer lx;
    sql_lexer_init(&lx, &scratch, sql, (int)strlen(sql));
    StrBuf b;
    strbuf_init(&b);
    Token prev2 = {0}, prev = {0}, tok;
    int c2 = 0, c1 = 0, code, copied = 0;
    bool redacted = false;
    SlError err = {0};
    while ((code = sql_lex(&lx, &tok, &err)) > 0) {
        if (c1 == TK_EQ && c2 != 0 && c2 != TK_EQ && prev2.z != NULL &&
            opts_is_secret(prev2.z) &&
            (code == TK_STRING || code == TK_ICONST || code == TK_FCONST || code == TK_ID)) {
            strbuf_append(&b, sql + copied, (size_t)(tok.offset - copied));
            strbuf_puts(&b, "'" OPTS_MASK "'");
            copied = tok.offset + tok.len;
            redacted = true;
        }
        prev2 = prev;
        c2 = c1;
        prev = tok;
        c1 = code;
    }
    const char *out = sql;
    if (code < 0)
        out = NULL;
    else if (redacted) {
        strbuf_puts(&b, sql + copied);
        out = arena_strndup(a, b.data, b.len);
    }
    sl_error_clear(&err);
    strbuf_free(&b);
    arena_destroy(&scratch);
    return out;
}
