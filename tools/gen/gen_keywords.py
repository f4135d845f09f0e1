#!/usr/bin/env python3
"""Generate keywords.c from grammar/keywords.txt.

keywords.c holds the keyword table, sorted by text, and

    int sql_keyword_code(const char *z, int n);

which maps a lower-case word of n bytes to its token code (TK_<WORD> from the
Lemon-generated sql.h), or 0 when the word is not a keyword, and

    int sql_keyword_category(const char *z, int n);

which returns its category (SQL_KW_RESERVED ... from sql/keywords.h), -1 if none,
and

    const char *sql_keyword_nth(int i, int *category);

which walks the table in word order (NULL past its end), for pg_get_keywords().
When the grammar is given as a third argument, every unreserved keyword must
appear in its %fallback ID list (so it stays usable as a name), and no other.
Usage: gen_keywords.py keywords.txt keywords.c [sql.y]
"""
import re
import sys

CATEGORIES = {"reserved": "SQL_KW_RESERVED", "colname": "SQL_KW_COLNAME",
              "typefunc": "SQL_KW_TYPEFUNC", "unreserved": "SQL_KW_UNRESERVED"}


def fallback_words(grammar):
    text = open(grammar, encoding="utf-8").read()
    m = re.search(r"^%fallback\s+ID\s+([^.]*)\.", text, re.M)
    if not m:
        sys.exit(f"{grammar}: no %fallback ID list")
    return {w.lower() for w in m.group(1).split()}


def main():
    src, out = sys.argv[1:3]
    rows = []
    for lineno, line in enumerate(open(src, encoding="utf-8"), 1):
        line = line.split("#", 1)[0].strip()
        if not line:
            continue
        parts = line.split()
        if len(parts) != 2 or parts[1] not in CATEGORIES \
                or not re.fullmatch(r"[a-z_][a-z0-9_]*", parts[0]):
            sys.exit(f"{src}:{lineno}: expected 'word category'")
        rows.append((parts[0], parts[1]))
    words = [w for w, _ in rows]
    if len(set(words)) != len(words):
        sys.exit(f"{src}: duplicate keyword")
    if len(sys.argv) > 3:
        fb = fallback_words(sys.argv[3])
        unres = {w for w, c in rows if c == "unreserved"}
        if fb != unres:
            sys.exit(f"{src}: %fallback ID list differs from the unreserved keywords: "
                     f"missing {sorted(unres - fb)}, extra {sorted(fb - unres)}")
    rows.sort()
    with open(out, "w") as c:
        c.write("/* Generated from keywords.txt by gen_keywords.py; do not edit. */\n")
        c.write('#include <string.h>\n#include "sql.h"\n#include "sql/keywords.h"\n\n')
        c.write("static const struct { const char *word; unsigned char len; "
                "unsigned char category; short code; } keyword_table[] = {\n")
        for w, cat in rows:
            c.write(f'    {{"{w}", {len(w)}, {CATEGORIES[cat]}, TK_{w.upper()}}},\n')
        c.write("};\n\n")
        c.write("static int find(const char *z, int n)\n{\n")
        c.write("    int lo = 0, hi = (int)(sizeof(keyword_table) / sizeof(keyword_table[0])) - 1;\n")
        c.write("    while (lo <= hi) {\n")
        c.write("        int mid = (lo + hi) / 2;\n")
        c.write("        const char *w = keyword_table[mid].word;\n")
        c.write("        int wl = keyword_table[mid].len;\n")
        c.write("        int r = memcmp(z, w, (size_t)(n < wl ? n : wl));\n")
        c.write("        if (r == 0)\n            r = n - wl;\n")
        c.write("        if (r == 0)\n            return mid;\n")
        c.write("        if (r < 0)\n            hi = mid - 1;\n        else\n            lo = mid + 1;\n")
        c.write("    }\n    return -1;\n}\n\n")
        c.write("int sql_keyword_code(const char *z, int n)\n{\n")
        c.write("    int i = find(z, n);\n    return i < 0 ? 0 : keyword_table[i].code;\n}\n\n")
        c.write("int sql_keyword_category(const char *z, int n)\n{\n")
        c.write("    int i = find(z, n);\n    return i < 0 ? -1 : keyword_table[i].category;\n}\n\n")
        c.write("const char *sql_keyword_nth(int i, int *category)\n{\n")
        c.write("    if (i < 0 || i >= (int)(sizeof(keyword_table) / sizeof(keyword_table[0])))\n")
        c.write("        return NULL;\n")
        c.write("    *category = keyword_table[i].category;\n    return keyword_table[i].word;\n}\n")


if __name__ == "__main__":
    main()
