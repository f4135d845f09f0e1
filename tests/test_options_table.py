"""The table of WITH options (src/catalog/relopts.c) is the one place each
option is declared (issue 23, deliverable 2).  No server is started.

    test_docs_tables_match_the_table   docs/sql-reference.md's option tables
                                       are what `sluiced --list-options`
                                       prints (tools/options_docs.py)
    test_readers_read_declared_options every option name a reader in src/
                                       asks for (opts_get*, datagen's
                                       per-column options, the files
                                       connector's fields.COLUMN.path) is
                                       declared in the table
    test_declared_options_are_read     every option the table declares is
                                       read by some reader (none is
                                       accepted and ignored)
"""

import re
import subprocess
import sys
from pathlib import Path

from conftest import sluiced_binary

REPO = Path(__file__).resolve().parent.parent
READ_RE = re.compile(r'opts_get(?:_int|_double|_bool|_interval_us)?\(\s*[^,()]+,\s*"([^"]+)"')
COLUMN_RE = re.compile(r'col_option\(\s*name,\s*"([a-z_]+)"')
FIELDS_RE = re.compile(r'"fields\.%s\.([a-z_]+)"')
ROW_RE = re.compile(r"^\| `([^`]+)` \|", re.M)


def declared():
    out = subprocess.run([sluiced_binary(), "--list-options"], capture_output=True,
                         text=True, timeout=60, check=False).stdout
    names = set(ROW_RE.findall(out))
    assert "trigger" in names and "fields.COLUMN.kind" in names, out
    return names


def is_declared(name, names):
    if name in names:
        return True
    if name.startswith("kafka.") and "kafka.PROPERTY" in names:
        return True
    m = re.fullmatch(r"fields\.(?:COLUMN|%s|[^.]+)\.([a-z_]+)", name)
    return bool(m) and f"fields.COLUMN.{m.group(1)}" in names


def sources():
    for p in sorted((REPO / "src").rglob("*.c")):
        if p.name != "relopts.c":
            yield p, p.read_text()


def test_docs_tables_match_the_table():
    r = subprocess.run([sys.executable, str(REPO / "tools/options_docs.py"), "--check",
                        sluiced_binary()], capture_output=True, text=True, timeout=120)
    assert r.returncode == 0, r.stderr


def test_readers_read_declared_options():
    names = declared()
    read = []
    for p, text in sources():
        read += [(p, n) for n in READ_RE.findall(text)]
        read += [(p, f"fields.COLUMN.{n}") for n in COLUMN_RE.findall(text)]
        read += [(p, f"fields.COLUMN.{n}") for n in FIELDS_RE.findall(text)]
    assert len(read) > 60, read
    missing = sorted({f"{p.relative_to(REPO)}: {n}" for p, n in read
                      if not is_declared(n, names)})
    assert not missing, "read but not declared in src/catalog/relopts.c: " + ", ".join(missing)


def test_declared_options_are_read():
    text = "\n".join(t for _, t in sources())
    unread = []
    for name in sorted(declared()):
        if name == "kafka.PROPERTY":
            continue
        tail = name.split(".")[-1] if name.startswith("fields.COLUMN.") else name
        if f'"{tail}"' not in text and f'"fields.%s.{tail}"' not in text:
            unread.append(name)
    assert not unread, "declared but read nowhere: " + ", ".join(unread)
