/*
 * keywords.h -- the keyword table generated from grammar/keywords.txt.
 *
 *   sql_keyword_code      lower-case word -> TK_ code, 0 if not a keyword
 *   sql_keyword_category  lower-case word -> SQL_KW_*, -1 if not a keyword
 *   sql_keyword_nth       the i-th keyword in word order and its category,
 *                         NULL past the end (pg_get_keywords())
 *
 * The table and both functions are in the build's keywords.c
 * (tools/gen/gen_keywords.py).
 */
#ifndef SLUICE_SQL_KEYWORDS_H
#define SLUICE_SQL_KEYWORDS_H

enum {
    SQL_KW_RESERVED,
    SQL_KW_COLNAME,
    SQL_KW_TYPEFUNC,
    SQL_KW_UNRESERVED
};

int sql_keyword_code(const char *z, int n);
int sql_keyword_category(const char *z, int n);
const char *sql_keyword_nth(int i, int *category);

#endif /* SLUICE_SQL_KEYWORDS_H */
