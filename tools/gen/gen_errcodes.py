#!/usr/bin/env python3
"""Generate errcodes.h and errcodes.c from src/util/errcodes.txt.

errcodes.h defines each ERRCODE_* as its five-character SQLSTATE string;
errcodes.c holds the table from SQLSTATE to condition name, sorted by code.
Usage: gen_errcodes.py errcodes.txt errcodes.h errcodes.c
"""
import re
import sys


def main():
    src, out_h, out_c = sys.argv[1:4]
    rows = []
    for lineno, line in enumerate(open(src, encoding="utf-8"), 1):
        line = line.strip()
        if not line or line.startswith("#"):
            continue
        parts = line.split()
        if len(parts) != 3 or not re.fullmatch(r"[0-9A-Z]{5}", parts[0]):
            sys.exit(f"{src}:{lineno}: expected 'SQLSTATE ERRCODE_NAME condition'")
        rows.append(parts)
    codes = [r[0] for r in rows]
    if len(set(codes)) != len(codes):
        sys.exit(f"{src}: duplicate SQLSTATE")
    with open(out_h, "w") as h:
        h.write("/* Generated from errcodes.txt by gen_errcodes.py; do not edit. */\n")
        h.write("#ifndef SLUICE_ERRCODES_H\n#define SLUICE_ERRCODES_H\n\n")
        for code, name, _ in rows:
            h.write(f'#define {name} "{code}"\n')
        h.write("\n/* The condition name of a SQLSTATE, or NULL if unknown. */\n")
        h.write("const char *errcode_condition_name(const char *sqlstate);\n")
        h.write("\n#endif\n")
    with open(out_c, "w") as c:
        c.write("/* Generated from errcodes.txt by gen_errcodes.py; do not edit. */\n")
        c.write('#include <string.h>\n#include <stdlib.h>\n#include "errcodes.h"\n\n')
        c.write("static const struct { const char *code, *name; } errcode_table[] = {\n")
        for code, _, cond in sorted(rows):
            c.write(f'    {{"{code}", "{cond}"}},\n')
        c.write("};\n\n")
        c.write("static int cmp(const void *k, const void *e)\n{\n")
        c.write("    return strcmp((const char *)k, *(const char *const *)e);\n}\n\n")
        c.write("const char *errcode_condition_name(const char *sqlstate)\n{\n")
        c.write("    const char *const *e = bsearch(sqlstate, errcode_table,\n")
        c.write("        sizeof(errcode_table) / sizeof(errcode_table[0]),\n")
        c.write("        sizeof(errcode_table[0]), cmp);\n")
        c.write("    return e ? e[1] : NULL;\n}\n")


if __name__ == "__main__":
    main()
