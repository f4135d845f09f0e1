/*
 * tokenize.c -- the SQL tokenizer, lexing as PostgreSQL 15's scan.l does.
 *
 *   sql_lexer_init(lx, arena, sql, len)   start at the beginning of sql
 *   sql_lex(lx, &tok, err)                next token: TK_ code, 0 at end, -1 error
 *
 * A table maps each byte to a character class, and sql_lex() switches on the
 * class of the first byte.  What PostgreSQL does and we do too:
 *   - unquoted identifiers are lower-cased (ASCII only) and truncated to 63
 *     bytes; keywords come from the generated table (keywords.c);
 *   - "quoted identifiers" keep their case, "" is a quote;
 *   - numbers: 12 (TK_ICONST), 1.5 / .5 / 1e10 (TK_FCONST); a number
 *     followed by an identifier character is "trailing junk";
 *   - 'strings' with '' escapes; two literals separated by whitespace with a
 *     newline are one; E'...' with backslash escapes; $tag$...$tag$;
 *   - $n parameters; -- and nested slash-star comments;
 *   - operators: the longest run of operator characters, cut at a comment
 *     start, with trailing + and - trimmed as scan.l does; "::", "<=", ">=",
 *     "<>", "!=" (as "<>"), ":=", "=>" have tokens of their own.
 * Every token records its byte offset and length in the query string.
 * Errors are 42601 with the position of the token that failed.
 */
#include "sql/parser.h"
#include "sluice/strbuf.h"
#include "sluice/utf8.h"
#include "sql.h"

#include <stdio.h>

enum CharClass {
    CC_ILLEGAL = 0, /* anything else: a one-character token that no rule wants */
    CC_SPACE,       /* space \t \n \r \f */
    CC_DIGIT,
    CC_IDSTART,     /* A-Z a-z _ and bytes >= 0x80 */
    CC_QUOTE,       /* ' */
    CC_DQUOTE,      /* " */
    CC_DOLLAR,      /* $ */
    CC_DOT,         /* . */
    CC_COLON,       /* : */
    CC_SELF,        /* , ( ) [ ] ; single-character tokens */
    CC_OPCHAR,      /* ~ ! @ # ^ & | ` ? + - * / % < > = */
    CC_NUL,
};

/* Short names for the table below. */
#define XX CC_ILLEGAL
#define SP CC_SPACE
#define DG CC_DIGIT
#define ID CC_IDSTART
#define QT CC_QUOTE
#define DQ CC_DQUOTE
#define DL CC_DOLLAR
#define DT CC_DOT
#define CL CC_COLON
#define SF CC_SELF
#define OP CC_OPCHAR
#define NU CC_NUL

/* The class of each byte (constant, so the tokenizer is thread-safe). */
static const unsigned char char_class[256] = {
    NU, XX, XX, XX, XX, XX, XX, XX, XX, SP, SP, XX, SP, SP, XX, XX,
    XX, XX, XX, XX, XX, XX, XX, XX, XX, XX, XX, XX, XX, XX, XX, XX,
    SP, OP, DQ, OP, DL, OP, OP, QT, SF, SF, OP, OP, SF, OP, DT, OP,
    DG, DG, DG, DG, DG, DG, DG, DG, DG, DG, CL, SF, OP, OP, OP, OP,
    OP, ID, ID, ID, ID, ID, ID, ID, ID, ID, ID, ID, ID, ID, ID, ID,
    ID, ID, ID, ID, ID, ID, ID, ID, ID, ID, ID, SF, XX, SF, OP, ID,
    OP, ID, ID, ID, ID, ID, ID, ID, ID, ID, ID, ID, ID, ID, ID, ID,
    ID, ID, ID, ID, ID, ID, ID, ID, ID, ID, ID, XX, OP, XX, OP, XX,
    ID, ID, ID, ID, ID, ID, ID, ID, ID, ID, ID, ID, ID, ID, ID, ID,
    ID, ID, ID, ID, ID, ID, ID, ID, ID, ID, ID, ID, ID, ID, ID, ID,
    ID, ID, ID, ID, ID, ID, ID, ID, ID, ID, ID, ID, ID, ID, ID, ID,
    ID, ID, ID, ID, ID, ID, ID, ID, ID, ID, ID, ID, ID, ID, ID, ID,
    ID, ID, ID, ID, ID, ID, ID, ID, ID, ID, ID, ID, ID, ID, ID, ID,
    ID, ID, ID, ID, ID, ID, ID, ID, ID, ID, ID, ID, ID, ID, ID, ID,
    ID, ID, ID, ID, ID, ID, ID, ID, ID, ID, ID, ID, ID, ID, ID, ID,
    ID, ID, ID, ID, ID, ID, ID, ID, ID, ID, ID, ID, ID, ID, ID, ID,
};

#undef XX
#undef SP
#undef DG
#undef ID
#undef QT
#undef DQ
#undef DL
#undef DT
#undef CL
#undef SF
#undef OP
#undef NU

#define NAMEDATALEN 64

void sql_lexer_init(Lexer *lx, Arena *a, const char *sql, int len)
{
    lx->arena = a;
    lx->sql = sql;
    lx->len = len;
    lx->pos = 0;
}

static inline int peek(const Lexer *lx, int at)
{
    return at < lx->len ? (unsigned char)lx->sql[at] : -1;
}

static inline bool is_ident_cont(int c)
{
    return c >= 0 && (char_class[c] == CC_IDSTART || char_class[c] == CC_DIGIT || c == '$');
}

static inline bool is_space(int c)
{
    return c >= 0 && char_class[c] == CC_SPACE;
}

/* Records an error about the text from start to the end of the input (what
 * PostgreSQL shows for an unterminated token) or to `end`. */
static int lex_error(Lexer *lx, SlError *err, const char *what, int start, int end)
{
    int n = end - start;
    if (n > 200)
        n = 200;
    sl_error_at(err, ERRCODE_SYNTAX_ERROR, start, "%s at or near \"%.*s\"", what, n,
                lx->sql + start);
    return -1;
}

/* Skips whitespace and comments.  Returns 0, or -1 on an unterminated
 * comment. */
static int skip_space(Lexer *lx, SlError *err)
{
    for (;;) {
        int c = peek(lx, lx->pos);
        if (is_space(c)) {
            lx->pos++;
        } else if (c == '-' && peek(lx, lx->pos + 1) == '-') {
            while (lx->pos < lx->len && lx->sql[lx->pos] != '\n' && lx->sql[lx->pos] != '\r')
                lx->pos++;
        } else if (c == '/' && peek(lx, lx->pos + 1) == '*') {
            int start = lx->pos, depth = 1;
            lx->pos += 2;
            while (depth > 0) {
                if (lx->pos >= lx->len)
                    return lex_error(lx, err, "unterminated /* comment", start, lx->len);
                if (lx->sql[lx->pos] == '/' && peek(lx, lx->pos + 1) == '*') {
                    depth++;
                    lx->pos += 2;
                } else if (lx->sql[lx->pos] == '*' && peek(lx, lx->pos + 1) == '/') {
                    depth--;
                    lx->pos += 2;
                } else {
                    lx->pos++;
                }
            }
        } else {
            return 0;
        }
    }
}

/* After a closing quote: is there whitespace with a newline, then another
 * quote (scan.l's quotecontinue)?  Returns the position of that quote or -1. */
static int quote_continues(const Lexer *lx, int at)
{
    bool newline = false;
    while (at < lx->len) {
        int c = (unsigned char)lx->sql[at];
        if (c == ' ' || c == '\t' || c == '\f') {
            at++;
        } else if (c == '\n' || c == '\r') {
            newline = true;
            at++;
        } else if (c == '-' && peek(lx, at + 1) == '-') {
            while (at < lx->len && lx->sql[at] != '\n' && lx->sql[at] != '\r')
                at++;
        } else {
            break;
        }
    }
    return newline && peek(lx, at) == '\'' ? at : -1;
}

static void put_utf8(StrBuf *b, uint32_t cp)
{
    char u[4];
    int n;
    if (cp < 0x80) {
        u[0] = (char)cp;
        n = 1;
    } else if (cp < 0x800) {
        u[0] = (char)(0xC0 | (cp >> 6));
        u[1] = (char)(0x80 | (cp & 0x3F));
        n = 2;
    } else if (cp < 0x10000) {
        u[0] = (char)(0xE0 | (cp >> 12));
        u[1] = (char)(0x80 | ((cp >> 6) & 0x3F));
        u[2] = (char)(0x80 | (cp & 0x3F));
        n = 3;
    } else {
        u[0] = (char)(0xF0 | (cp >> 18));
        u[1] = (char)(0x80 | ((cp >> 12) & 0x3F));
        u[2] = (char)(0x80 | ((cp >> 6) & 0x3F));
        u[3] = (char)(0x80 | (cp & 0x3F));
        n = 4;
    }
    strbuf_append(b, u, (size_t)n);
}

/* Reads n hex digits at lx->pos into *cp; false if they are not there. */
static bool read_hex(Lexer *lx, int n, uint32_t *cp)
{
    uint32_t v = 0;
    for (int i = 0; i < n; i++) {
        int h = sl_hexval(peek(lx, lx->pos + i));
        if (h < 0)
            return false;
        v = v << 4 | (uint32_t)h;
    }
    lx->pos += n;
    *cp = v;
    return true;
}

/* Handles the backslash escape at lx->pos (just past the backslash) of an
 * E'' string.  *pair holds a pending high surrogate.  Returns 0 or -1. */
static int string_escape(Lexer *lx, StrBuf *b, uint32_t *pair, SlError *err)
{
    int esc_at = lx->pos - 1;
    int c = peek(lx, lx->pos);
    if (c == 'u' || c == 'U') {
        uint32_t cp;
        lx->pos++;
        if (!read_hex(lx, c == 'u' ? 4 : 8, &cp)) {
            sl_error_at(err, ERRCODE_SYNTAX_ERROR, esc_at, "invalid Unicode escape");
            sl_error_hint(err, "Unicode escapes must be \\uXXXX or \\UXXXXXXXX.");
            return -1;
        }
        if (cp >= 0xD800 && cp <= 0xDBFF) {
            if (*pair)
                return lex_error(lx, err, "invalid Unicode surrogate pair", esc_at,
                                 esc_at + 1);
            *pair = cp;
            return 0;
        }
        if (cp >= 0xDC00 && cp <= 0xDFFF) {
            if (!*pair)
                return lex_error(lx, err, "invalid Unicode surrogate pair", esc_at,
                                 esc_at + 1);
            cp = 0x10000 + ((*pair - 0xD800) << 10) + (cp - 0xDC00);
            *pair = 0;
        } else if (*pair) {
            return lex_error(lx, err, "invalid Unicode surrogate pair", esc_at, esc_at + 1);
        }
        if (cp == 0 || cp > 0x10FFFF)
            return lex_error(lx, err, "invalid Unicode escape value", esc_at, lx->pos);
        put_utf8(b, cp);
        return 0;
    }
    if (*pair)
        return lex_error(lx, err, "invalid Unicode surrogate pair", esc_at, esc_at + 1);
    if (c < 0)
        return 0; /* the caller reports the unterminated string */
    lx->pos++;
    char ch;
    switch (c) {
    case 'b': ch = '\b'; break;
    case 'f': ch = '\f'; break;
    case 'n': ch = '\n'; break;
    case 'r': ch = '\r'; break;
    case 't': ch = '\t'; break;
    case 'x': {
        int h1 = sl_hexval(peek(lx, lx->pos));
        if (h1 < 0) {
            ch = 'x';
            break;
        }
        lx->pos++;
        int h2 = sl_hexval(peek(lx, lx->pos));
        if (h2 >= 0) {
            lx->pos++;
            h1 = h1 * 16 + h2;
        }
        ch = (char)h1;
        break;
    }
    default:
        if (c >= '0' && c <= '7') {
            int v = c - '0';
            for (int i = 0; i < 2 && peek(lx, lx->pos) >= '0' && peek(lx, lx->pos) <= '7'; i++)
                v = v * 8 + (lx->sql[lx->pos++] - '0');
            ch = (char)v;
        } else {
            ch = (char)c;
        }
    }
    if (ch == 0)
        return sl_error(err, ERRCODE_CHARACTER_NOT_IN_REPERTOIRE,
                        "invalid byte sequence for encoding \"UTF8\": 0x00");
    strbuf_putc(b, ch);
    return 0;
}

/* A quoted string starting at lx->pos (the opening quote), extended by
 * quote continuation.  escapes: an E'' string.  The value goes to tok. */
static int lex_string(Lexer *lx, Token *tok, bool escapes, int start, SlError *err)
{
    StrBuf b;
    strbuf_init(&b);
    uint32_t pair = 0;
    lx->pos++; /* the opening quote */
    for (;;) {
        if (lx->pos >= lx->len) {
            strbuf_free(&b);
            return lex_error(lx, err, "unterminated quoted string", start, lx->len);
        }
        char c = lx->sql[lx->pos];
        if (pair && c != '\\') {
            strbuf_free(&b);
            return lex_error(lx, err, "invalid Unicode surrogate pair", lx->pos, lx->pos + 1);
        }
        if (c == '\'') {
            if (peek(lx, lx->pos + 1) == '\'') {
                strbuf_putc(&b, '\'');
                lx->pos += 2;
                continue;
            }
            int next = quote_continues(lx, lx->pos + 1);
            if (next >= 0) {
                lx->pos = next + 1;
                continue;
            }
            lx->pos++;
            break;
        }
        if (escapes && c == '\\') {
            lx->pos++;
            if (string_escape(lx, &b, &pair, err) < 0) {
                strbuf_free(&b);
                return -1;
            }
            continue;
        }
        strbuf_putc(&b, c);
        lx->pos++;
    }
    /* \ooo and \xhh make bytes of their own: they must still be UTF-8. */
    if (escapes && sl_utf8_check(b.data ? b.data : "", b.len, start, err) < 0) {
        strbuf_free(&b);
        return -1;
    }
    tok->z = arena_strndup(lx->arena, b.data ? b.data : "", b.len);
    tok->n = (int)b.len;
    strbuf_free(&b);
    return TK_STRING;
}

/* A $tag$...$tag$ string, or a $n parameter, at lx->pos. */
static int lex_dollar(Lexer *lx, Token *tok, int start, SlError *err)
{
    int c = peek(lx, start + 1);
    if (c >= '0' && c <= '9') {
        int p = start + 1;
        while (peek(lx, p) >= '0' && peek(lx, p) <= '9')
            p++;
        if (is_ident_cont(peek(lx, p))) {
            while (is_ident_cont(peek(lx, p)))
                p++;
            return lex_error(lx, err, "trailing junk after parameter", start, p);
        }
        lx->pos = p;
        tok->z = arena_strndup(lx->arena, lx->sql + start + 1, (size_t)(p - start - 1));
        tok->n = p - start - 1;
        return TK_PARAM;
    }
    /* $tag$: tag is [A-Za-z\200-\377_][A-Za-z\200-\377_0-9]* or empty */
    int p = start + 1;
    if (c >= 0 && char_class[c] == CC_IDSTART) {
        while (peek(lx, p) >= 0 && (char_class[peek(lx, p)] == CC_IDSTART ||
                                    char_class[peek(lx, p)] == CC_DIGIT))
            p++;
    }
    if (peek(lx, p) != '$') {
        /* not a delimiter: '$' on its own, which no rule accepts */
        lx->pos = start + 1;
        tok->z = "$";
        tok->n = 1;
        return TK_ILLEGAL;
    }
    int dlen = p + 1 - start;
    const char *delim = lx->sql + start;
    int body = p + 1;
    for (int q = body; q + dlen <= lx->len; q++) {
        if (lx->sql[q] == '$' && memcmp(lx->sql + q, delim, (size_t)dlen) == 0) {
            tok->z = arena_strndup(lx->arena, lx->sql + body, (size_t)(q - body));
            tok->n = q - body;
            lx->pos = q + dlen;
            return TK_STRING;
        }
    }
    return lex_error(lx, err, "unterminated dollar-quoted string", start, lx->len);
}

/* A number starting at lx->pos (a digit, or '.' then a digit). */
static int lex_number(Lexer *lx, Token *tok, int start, SlError *err)
{
    int p = start;
    int code = TK_ICONST;
    while (peek(lx, p) >= '0' && peek(lx, p) <= '9')
        p++;
    if (peek(lx, p) == '.') {
        if (peek(lx, p + 1) == '.') {
            /* "1..": the integer, then the dots (scan.l's decimalfail) */
            goto done;
        }
        code = TK_FCONST;
        p++;
        while (peek(lx, p) >= '0' && peek(lx, p) <= '9')
            p++;
    }
    if (peek(lx, p) == 'e' || peek(lx, p) == 'E') {
        int q = p + 1;
        if (peek(lx, q) == '+' || peek(lx, q) == '-')
            q++;
        if (peek(lx, q) >= '0' && peek(lx, q) <= '9') {
            while (peek(lx, q) >= '0' && peek(lx, q) <= '9')
                q++;
            code = TK_FCONST;
            p = q;
        } else if (q > p + 1) {
            /* 1e+ : realfail */
            return lex_error(lx, err, "trailing junk after numeric literal", start, q);
        }
    }
    if (peek(lx, p) >= 0 && char_class[peek(lx, p)] == CC_IDSTART) {
        while (is_ident_cont(peek(lx, p)))
            p++;
        return lex_error(lx, err, "trailing junk after numeric literal", start, p);
    }
done:
    lx->pos = p;
    tok->z = arena_strndup(lx->arena, lx->sql + start, (size_t)(p - start));
    tok->n = p - start;
    return code;
}

/* An identifier or keyword at lx->pos. */
static int lex_ident(Lexer *lx, Token *tok, int start)
{
    int p = start;
    while (is_ident_cont(peek(lx, p)))
        p++;
    int n = p - start;
    char *z = arena_strndup(lx->arena, lx->sql + start, (size_t)n);
    for (int i = 0; i < n; i++)
        if (z[i] >= 'A' && z[i] <= 'Z')
            z[i] = (char)(z[i] + ('a' - 'A'));
    lx->pos = p;
    int code = n < NAMEDATALEN ? sql_keyword_code(z, n) : 0;
    if (code == 0 && n >= NAMEDATALEN) {
        /* truncate to 63 bytes, on a UTF-8 character boundary */
        int k = NAMEDATALEN - 1;
        while (k > 0 && ((unsigned char)z[k] & 0xC0) == 0x80)
            k--;
        z[k] = '\0';
        n = k;
    }
    tok->z = z;
    tok->n = n;
    return code ? code : TK_ID;
}

/* A "quoted identifier" at lx->pos. */
static int lex_quoted_ident(Lexer *lx, Token *tok, int start, SlError *err)
{
    StrBuf b;
    strbuf_init(&b);
    int p = start + 1;
    for (;;) {
        if (p >= lx->len) {
            strbuf_free(&b);
            return lex_error(lx, err, "unterminated quoted identifier", start, lx->len);
        }
        if (lx->sql[p] == '"') {
            if (peek(lx, p + 1) == '"') {
                strbuf_putc(&b, '"');
                p += 2;
                continue;
            }
            p++;
            break;
        }
        strbuf_putc(&b, lx->sql[p++]);
    }
    if (b.len == 0) {
        strbuf_free(&b);
        return lex_error(lx, err, "zero-length delimited identifier", start, p);
    }
    size_t n = b.len;
    if (n >= NAMEDATALEN) {
        n = NAMEDATALEN - 1;
        while (n > 0 && ((unsigned char)b.data[n] & 0xC0) == 0x80)
            n--;
    }
    tok->z = arena_strndup(lx->arena, b.data, n);
    tok->n = (int)n;
    strbuf_free(&b);
    lx->pos = p;
    return TK_ID;
}

static int self_token(int c)
{
    switch (c) {
    case ',': return TK_COMMA;
    case '(': return TK_LP;
    case ')': return TK_RP;
    case '[': return TK_LBRACKET;
    case ']': return TK_RBRACKET;
    case ';': return TK_SEMI;
    case ':': return TK_COLON;
    case '.': return TK_DOT;
    case '+': return TK_PLUS;
    case '-': return TK_MINUS;
    case '*': return TK_STAR;
    case '/': return TK_SLASH;
    case '%': return TK_PERCENT;
    case '^': return TK_CARET;
    case '<': return TK_LT;
    case '>': return TK_GT;
    case '=': return TK_EQ;
    default:  return 0;
    }
}

/* An operator at lx->pos: scan.l's {operator} rule. */
static int lex_operator(Lexer *lx, Token *tok, int start, SlError *err)
{
    int p = start;
    while (peek(lx, p) >= 0 && char_class[peek(lx, p)] == CC_OPCHAR)
        p++;
    int n = p - start;
    const char *z = lx->sql + start;
    /* a comment start inside the run ends the operator */
    for (int i = 0; i + 1 < n; i++) {
        if ((z[i] == '/' && z[i + 1] == '*') || (z[i] == '-' && z[i + 1] == '-')) {
            n = i;
            break;
        }
    }
    int full = n;
    if (n > 1 && (z[n - 1] == '+' || z[n - 1] == '-')) {
        int ic;
        for (ic = n - 2; ic >= 0; ic--)
            if (strchr("~!@#^&|`?%", z[ic]))
                break;
        if (ic < 0) {
            do
                n--;
            while (n > 1 && (z[n - 1] == '+' || z[n - 1] == '-'));
        }
    }
    (void)full;
    lx->pos = start + n;
    tok->z = arena_strndup(lx->arena, z, (size_t)n);
    tok->n = n;
    if (n == 1) {
        int code = self_token(z[0]);
        if (code)
            return code;
    } else if (n == 2) {
        if (z[0] == '<' && z[1] == '=')
            return TK_LE;
        if (z[0] == '>' && z[1] == '=')
            return TK_GE;
        if (z[0] == '<' && z[1] == '>')
            return TK_NE;
        if (z[0] == '!' && z[1] == '=') {
            tok->z = "<>";
            return TK_NE;
        }
        if (z[0] == '=' && z[1] == '>')
            return TK_EQUALS_GREATER;
    }
    if (n >= NAMEDATALEN)
        return lex_error(lx, err, "operator too long", start, start + n);
    return TK_OP;
}

int sql_lex(Lexer *lx, Token *tok, SlError *err)
{
    if (skip_space(lx, err) < 0)
        return -1;
    int start = lx->pos;
    tok->offset = start;
    tok->len = 0;
    if (start >= lx->len) {
        tok->z = "";
        tok->n = 0;
        return 0;
    }
    int c = (unsigned char)lx->sql[start];
    int code;
    switch (char_class[c]) {
    case CC_DIGIT:
        code = lex_number(lx, tok, start, err);
        break;
    case CC_DOT:
        if (peek(lx, start + 1) >= '0' && peek(lx, start + 1) <= '9') {
            code = lex_number(lx, tok, start, err);
        } else if (peek(lx, start + 1) == '.') {
            lx->pos = start + 2;
            tok->z = "..";
            tok->n = 2;
            code = TK_DOT_DOT;
        } else {
            lx->pos = start + 1;
            tok->z = ".";
            tok->n = 1;
            code = TK_DOT;
        }
        break;
    case CC_IDSTART:
        if ((c == 'e' || c == 'E') && peek(lx, start + 1) == '\'') {
            lx->pos = start + 1;
            code = lex_string(lx, tok, true, start, err);
        } else if ((c == 'n' || c == 'N') && peek(lx, start + 1) == '\'') {
            lx->pos = start + 1;
            code = lex_string(lx, tok, false, start, err);
        } else {
            code = lex_ident(lx, tok, start);
        }
        break;
    case CC_QUOTE:
        code = lex_string(lx, tok, false, start, err);
        break;
    case CC_DQUOTE:
        code = lex_quoted_ident(lx, tok, start, err);
        break;
    case CC_DOLLAR:
        code = lex_dollar(lx, tok, start, err);
        break;
    case CC_COLON:
        if (peek(lx, start + 1) == ':') {
            lx->pos = start + 2;
            tok->z = "::";
            tok->n = 2;
            code = TK_TYPECAST;
        } else if (peek(lx, start + 1) == '=') {
            lx->pos = start + 2;
            tok->z = ":=";
            tok->n = 2;
            code = TK_COLON_EQUALS;
        } else {
            lx->pos = start + 1;
            tok->z = ":";
            tok->n = 1;
            code = TK_COLON;
        }
        break;
    case CC_SELF:
        lx->pos = start + 1;
        tok->z = arena_strndup(lx->arena, lx->sql + start, 1);
        tok->n = 1;
        code = self_token(c);
        break;
    case CC_OPCHAR:
        code = lex_operator(lx, tok, start, err);
        break;
    default:
        /* an illegal byte (or NUL): a token of its own that the grammar rejects */
        lx->pos = start + 1;
        tok->z = arena_strndup(lx->arena, lx->sql + start, 1);
        tok->n = 1;
        code = TK_ILLEGAL;
        break;
    }
    if (code < 0)
        return -1;
    tok->len = lx->pos - start;
    return code;
}
