#!/usr/bin/env python3
"""Writes the tables of WITH options into docs/sql-reference.md.

    tools/options_docs.py [--check] [SLUICED]

The tables come from `sluiced --list-options` (src/catalog/relopts.c, the
one place each option is declared): each block between
`<!-- options: NAME -->` and `<!-- /options -->` in docs/sql-reference.md is
replaced with the table NAME.  With --check nothing is written and the exit
status is 1 when a block differs, or is missing on either side
(tests/test_options_table.py).
SLUICED defaults to $SLUICE_BIN, else build-asan/src/sluiced.
"""
import os
import re
import subprocess
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
DOC = REPO / "docs" / "sql-reference.md"
BLOCK = re.compile(r"<!-- options: ([a-z ]+) -->\n.*?<!-- /options -->\n", re.S)


def tables(sluiced):
    """{name: block text} from sluiced --list-options."""
    out = subprocess.run([sluiced, "--list-options"], capture_output=True, text=True,
                         timeout=60).stdout
    return {m.group(1): m.group(0) for m in BLOCK.finditer(out)}


def render(doc, blocks):
    """doc with each block replaced; the names of blocks the doc lacks."""
    seen = set()

    def sub(m):
        seen.add(m.group(1))
        return blocks.get(m.group(1), m.group(0))
    new = BLOCK.sub(sub, doc)
    return new, sorted(set(blocks) - seen), sorted(seen - set(blocks))


def main(argv):
    check = "--check" in argv
    args = [a for a in argv if a != "--check"]
    sluiced = args[0] if args else os.environ.get("SLUICE_BIN",
                                                  str(REPO / "build-asan/src/sluiced"))
    blocks = tables(sluiced)
    doc = DOC.read_text()
    new, missing, unknown = render(doc, blocks)
    for name in missing:
        print(f"docs/sql-reference.md has no block <!-- options: {name} -->", file=sys.stderr)
    for name in unknown:
        print(f"sluiced --list-options prints no table {name!r}", file=sys.stderr)
    if check:
        if new != doc:
            print("docs/sql-reference.md's option tables differ from sluiced --list-options: "
                  "run tools/options_docs.py", file=sys.stderr)
        return 1 if new != doc or missing or unknown else 0
    DOC.write_text(new)
    return 1 if missing or unknown else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
