"""The floors of src/ (docs/architecture.md, "Floors"), checked by tools/check_layers.py.

    test_tree_keeps_its_floors     the real tree has no edge the tables forbid
    test_wrong_include_fails       a copy of the tree with a forbidden edge made on
                                   purpose fails, naming file:line and the edge: an
                                   include upwards, a ../ include into another
                                   folder, an extern declaration of another folder's
                                   function, a shared header declaring a function of
                                   a floor its own may not use, a library outside its
                                   wrapper, a header with no floor, and the
                                   edges whose exceptions are gone (a connector
                                   including the engine's deadletter.h, the
                                   analyzer including exec.h)
    test_unused_exception_fails    an exception that no edge uses fails
    test_tables_are_checked        a "may use" upwards in the table is refused

No server is started: the check reads source files only.
"""

import shutil
import subprocess
import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parent.parent
CHECK = REPO / "tools" / "check_layers.py"


def run_check(root):
    """(exit code, stdout + stderr) of the check over the tree at root."""
    p = subprocess.run([sys.executable, str(CHECK), str(root)], capture_output=True,
                       text=True, timeout=120)
    return p.returncode, p.stdout + p.stderr


def copy_tree(tmp_path):
    """A copy of what the check reads: src/, include/, docs/architecture.md."""
    root = tmp_path / "tree"
    shutil.copytree(REPO / "src", root / "src")
    shutil.copytree(REPO / "include", root / "include")
    (root / "docs").mkdir()
    shutil.copy(REPO / "docs" / "architecture.md", root / "docs" / "architecture.md")
    return root


def append_line(path, text):
    """Appends text as the last line of path; returns its line number."""
    body = path.read_text()
    if not body.endswith("\n"):
        body += "\n"
    path.write_text(body + text + "\n")
    return body.count("\n") + 1


def test_tree_keeps_its_floors():
    rc, out = run_check(REPO)
    assert rc == 0, out
    assert out == ""


# (what to add to which file, how the line the check must print starts); {line}
# is the added line's number.
BAD_EDGES = {
    "include upwards": (
        "src/util/arena.c", '#include "sluice/runtime.h"',
        'src/util/arena.c:{line}: util -> runtime: #include "sluice/runtime.h" '
        "(util may use: nothing)"),
    "private header upwards": (
        "src/state/state.c", '#include "sql/parser.h"',
        'src/state/state.c:{line}: state -> sql: #include "sql/parser.h" '
        "(state may use: "),
    "../ into another folder": (
        "src/catalog/catalog.c", '#include "../server/pgw.h"',
        'src/catalog/catalog.c:{line}: catalog -> server: #include "../server/pgw.h" '
        "reaches into another folder with ../"),
    "extern declaration": (
        "src/util/log.c", "extern int state_close(void *st);",
        "src/util/log.c:{line}: util -> state: declares state_close(), which "
        "src/state/state.c defines (util may use: nothing)"),
    "header declaring another floor's function": (
        "include/sluice/strbuf.h", "void state_close(void *st);",
        "include/sluice/strbuf.h:{line}: util -> state: declares state_close(), which "
        "src/state/state.c defines (util may use: nothing)"),
    "library outside its wrapper": (
        "src/exec/eval.c", "#include <rocksdb/c.h>",
        "src/exec/eval.c:{line}: exec -> rocksdb/c.h: #include <rocksdb/c.h> "
        "(only src/state/ may include it)"),
    "connector including the engine's dead letters": (
        "src/connectors/kafka_reader.c", '#include "sluice/deadletter.h"',
        'src/connectors/kafka_reader.c:{line}: connectors -> engine: '
        '#include "sluice/deadletter.h" (connectors may use: '),
    "analyzer including the executor": (
        "src/sql/analyze_int.h", '#include "sluice/exec.h"',
        'src/sql/analyze_int.h:{line}: sql -> exec: #include "sluice/exec.h" '
        "(sql may use: "),
    "header with no floor": (
        "src/util/log.c", '#include "sluice/nowhere.h"',
        'src/util/log.c:{line}: #include "sluice/nowhere.h": include/sluice/nowhere.h '
        "has no floor in the headers table of docs/architecture.md"),
}


@pytest.mark.parametrize("case", sorted(BAD_EDGES))
def test_wrong_include_fails(tmp_path, case):
    root = copy_tree(tmp_path)
    rel, text, expect = BAD_EDGES[case]
    line = append_line(root / rel, text)
    rc, out = run_check(root)
    assert rc == 1, out
    want = expect.format(line=line)
    assert any(s.startswith(want) for s in out.splitlines()), out
    assert "forbidden edge(s)" in out


def check_with_doc_edit(tmp_path, old, new):
    """(exit code, output) of the check over a copy whose architecture.md has
    its first `old` replaced by `new`."""
    root = copy_tree(tmp_path)
    doc = root / "docs" / "architecture.md"
    text = doc.read_text()
    assert old in text
    doc.write_text(text.replace(old, new, 1))
    return run_check(root)


def test_unused_exception_fails(tmp_path):
    """An exception whose edge is gone (or never was) must leave the table."""
    head = "|---|---|---|---|---|\n"
    rc, out = check_with_doc_edit(tmp_path, head, head + "| util | runtime | `src/util/log.c` "
                                  "| `sluice/runtime.h` | none |\n")
    assert rc == 1, out
    assert ("docs/architecture.md: the exception util -> runtime in "
            "src/util/log.c matches no edge any more: remove its row") in out.splitlines()


def test_tables_are_checked(tmp_path):
    """A floor may use only floors below it: the table itself is checked."""
    rc, out = check_with_doc_edit(tmp_path, "| util | `src/util/` | — |",
                                  "| util | `src/util/` | runtime |")
    assert rc == 2, out
    assert "floor util may use runtime, which is not below it" in out
