"""File-level mutable globals of src/ (docs/architecture.md, "Process-wide state"),
checked by tools/check_globals.py.

    test_build_lists_every_global   the build tools/test made (the directory of
                                    $SLUICE_BIN's src/) has exactly the globals
                                    the table lists
    test_unlisted_global_fails      a tiny object compiled here with a static,
                                    an extern, a static local, a thread-local and
                                    a non-const table of pointers: each is named
                                    until listed; const tables are not
    test_vanished_row_fails         a row naming a global no object has fails,
                                    unless its class says "(fault builds)"
    test_static_local_names         gcc's `names.0` and clang's `fn.names` are
                                    both the table's `names`

Builds nothing of sluice and starts no server: it reads object files.
"""

import importlib.util
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from conftest import sluiced_binary

REPO = Path(__file__).resolve().parent.parent
CHECK = REPO / "tools" / "check_globals.py"

spec = importlib.util.spec_from_file_location("check_globals", CHECK)
check_globals = importlib.util.module_from_spec(spec)
spec.loader.exec_module(check_globals)

SYNTHETIC = r"""
static int counter;
int exported = 3;
static _Thread_local int per_thread;
static const int lookup[2] = {1, 2};
static const char *names[] = {"a", "b"};
static const char *const cnames[] = {"c", "d"};

int fake_touch(int i)
{
    static int calls;
    calls++;
    counter++;
    per_thread++;
    return lookup[i & 1] + names[i & 1][0] + cnames[i & 1][0] + calls;
}
"""

HEAD = """# Architecture

## Process-wide state

| file | symbol | class | what it holds | why |
|---|---|---|---|---|
"""


def run_check(args):
    p = subprocess.run([sys.executable, str(CHECK)] + args, capture_output=True,
                       text=True, timeout=120)
    return p.returncode, p.stdout + p.stderr


@pytest.fixture
def fake_object(tmp_path):
    """An object named as meson names src/util/fake.c's."""
    cc = shutil.which("cc") or shutil.which("gcc") or shutil.which("clang")
    if cc is None:
        pytest.fail("no C compiler (cc) on PATH")
    src = tmp_path / "fake.c"
    src.write_text(SYNTHETIC)
    obj = tmp_path / "util_fake.c.o"
    subprocess.run([cc, "-std=c11", "-fPIC", "-O0", "-c", str(src), "-o", str(obj)],
                   check=True, timeout=60)
    return obj


def doc_with(tmp_path, rows):
    doc = tmp_path / "architecture.md"
    doc.write_text(HEAD + "".join("| `%s` | `%s` | %s | x | y |\n" % r for r in rows)
                   + "\n## Threads\n\n| `src/util/fake.c` | `outside` | stays | | |\n")
    return doc


def test_build_lists_every_global():
    build = Path(sluiced_binary()).parent.parent
    rc, out = run_check([str(build)])
    assert rc == 0, out
    assert out == ""


def test_unlisted_global_fails(tmp_path, fake_object):
    found = check_globals.objects_globals([fake_object])
    assert set(found) == {("src/util/fake.c", n)
                          for n in ("counter", "exported", "per_thread", "names", "calls")}

    rc, out = run_check(["--objects", str(fake_object), "--doc", str(doc_with(tmp_path, []))])
    assert rc == 1
    for name in ("counter", "exported", "per_thread", "names", "calls"):
        assert "src/util/fake.c: %s (" % name in out, out
    assert "fake.c: lookup" not in out and "fake.c: cnames" not in out
    # a row outside the section does not count
    assert "outside" not in out

    rows = [("src/util/fake.c", n, "stays")
            for n in ("counter", "exported", "per_thread", "names", "calls")]
    rc, out = run_check(["--objects", str(fake_object), "--doc", str(doc_with(tmp_path, rows))])
    assert rc == 0, out
    assert out == ""


def test_vanished_row_fails(tmp_path, fake_object):
    rows = [("src/util/fake.c", n, "stays")
            for n in ("counter", "exported", "per_thread", "names", "calls")]
    doc = doc_with(tmp_path, rows + [("src/util/fake.c", "gone", "moves")])
    rc, out = run_check(["--objects", str(fake_object), "--doc", str(doc)])
    assert rc == 1
    assert out.strip() == ("src/util/fake.c: gone: listed in \"Process-wide state\" but the "
                           "build has no such mutable global (remove its row)")

    doc = doc_with(tmp_path, rows + [("src/util/fake.c", "hits", "stays (fault builds)")])
    rc, out = run_check(["--objects", str(fake_object), "--doc", str(doc)])
    assert rc == 0, out


def test_static_local_names():
    assert check_globals.symbol_name("names.0") == "names"
    assert check_globals.symbol_name("fake_touch.calls") == "calls"
    assert check_globals.symbol_name("fake_touch.calls.2") == "calls"
    assert check_globals.symbol_name("g_cat") == "g_cat"
