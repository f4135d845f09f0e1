/*
 * redact.c -- statement text with its secrets hidden, for the catalog
 * views that show a relation's SQL (sys.streams, sys.sinks, sys.tables,
 * sys.queries, pg_get_viewdef), pg_stat_activity and the log.
 *
 *   sql_redact_secrets   the text with every option `name = value` of a
 *                        WITH (...) list whose name says it is a secret
 *                        (opts_is_secret), and the string after PASSWORD
 *                        (CREATE / ALTER ROLE), showing it as '********'
 *   sql_redact_secrets_prefix  the same over the tokens that start in the
 *                        first max bytes only (pg_stat_activity and the
 *                        log keep 1 kB of a text: a huge INSERT is not
 *                        lexed whole)
 *
 * It lexes with the SQL tokenizer, so quotes, escapes, dollar quoting and
 * comments are read as the parser reads them.  Only the options of a
 * `WITH (` list (CREATE STREAM, SINK, TABLE, CONTINUOUS QUERY, COPY,
 * SUBSCRIBE: the grammar's only `WITH (`), at the list's own depth, are
 * judged: `token = 'x'` in a WHERE clause is data and stays.  A secret's
 * whole value up to the next `,` or `)` is replaced, however spelled: a
 * string, a number, `-123`, `true`, an identifier.  A dotted unquoted name
 * (kafka.sasl.password = ...) is judged by its last part.  Text that does
 * not lex is not shown at all.
 */
#include "sql/parser.h"
#include "sluice/expr.h"
#include "sluice/options.h"
#include "sluice/strbuf.h"
#include "sql.h"

/* The text of the tokens that start before max (up to the last one's
 * end), masked; the whole text when max is SIZE_MAX. */
static const char *redact(Arena *a, const char *sql, size_t max)
{
    if (sql == NULL)
        return NULL;
    Arena scratch;
    arena_init(&scratch, 1024);
    Lexer lx;
    int len = (int)strlen(sql), end = len, last = 0;
    sql_lexer_init(&lx, &scratch, sql, len);
    StrBuf b;
    strbuf_init(&b);
    Token prev2 = {0}, prev = {0}, tok;
    int c2 = 0, c1 = 0, code, copied = 0;
    int depth = 0;              /* parentheses open */
    int list = -1;              /* the depth inside a WITH ( list, or -1 */
    int from = -1, to = -1;     /* the secret value's text so far, or -1 */
    bool redacted = false;
    SlError err = {0};
    while ((code = sql_lex(&lx, &tok, &err)) > 0) {
        if ((size_t)tok.offset >= max) {
            /* this token and the rest are left out; between the last token
             * and max only blanks and comments (a statement file's opening
             * comment longer than max keeps its first max bytes) */
            end = last > (int)max ? last : (int)max;
            break;
        }
        last = tok.offset + tok.len;
        bool at_list = list >= 0 && depth == list;
        if (at_list && from >= 0 && (code == TK_COMMA || code == TK_RP)) {
            /* the end of a secret's value: all of it, however spelled */
            strbuf_append(&b, sql + copied, (size_t)(from - copied));
            strbuf_puts(&b, "'" OPTS_MASK "'");
            copied = to;
            redacted = true;
            from = -1;
        }
        if (code == TK_STRING && c1 == TK_PASSWORD) {
            /* CREATE / ALTER ROLE ... [ENCRYPTED] PASSWORD 'x' */
            strbuf_append(&b, sql + copied, (size_t)(tok.offset - copied));
            strbuf_puts(&b, "'" OPTS_MASK "'");
            copied = tok.offset + tok.len;
            redacted = true;
        } else if (code == TK_LP) {
            depth++;
            if (c1 == TK_WITH)
                list = depth;
        } else if (code == TK_RP) {
            if (depth == list)
                list = -1;
            if (depth > 0)
                depth--;
        } else if (code == TK_SEMI) {
            depth = 0;
            list = -1;
            from = -1;
        } else if (at_list && from < 0 && c1 == TK_EQ && c2 != 0 && c2 != TK_EQ &&
                   prev2.z != NULL && opts_is_secret(prev2.z)) {
            from = tok.offset;
        }
        if (from >= 0)
            to = tok.offset + tok.len;
        prev2 = prev;
        c2 = c1;
        prev = tok;
        c1 = code;
    }
    const char *out = sql;
    if (code < 0)
        out = NULL;
    else if (redacted || from >= 0 || end < len) {
        /* a list that the text leaves open (cut short) masks to its end */
        if (from >= 0) {
            strbuf_append(&b, sql + copied, (size_t)(from - copied));
            strbuf_puts(&b, "'" OPTS_MASK "'");
            copied = to;
        }
        if (copied < end)
            strbuf_append(&b, sql + copied, (size_t)(end - copied));
        out = arena_strndup(a, b.data, b.len);
    }
    sl_error_clear(&err);
    strbuf_free(&b);
    arena_destroy(&scratch);
    return out;
}

const char *sql_redact_secrets(Arena *a, const char *sql)
{
    return redact(a, sql, SIZE_MAX);
}

const char *sql_redact_secrets_prefix(Arena *a, const char *sql, size_t max)
{
    return redact(a, sql, max);
}
