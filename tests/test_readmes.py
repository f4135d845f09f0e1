"""Each folder's README.md true to its folder (issue 20; docs/development.md).

    test_readmes_match_their_folders   every .c/.h file of src/<folder>/ (and of
                                       include/sluice/) is named in that folder's
                                       README.md, no file starts two of its list
                                       items, and every source file a README
                                       names exists
    test_missing_file_fails            on a copy: a file the README does not name
    test_vanished_file_fails           on a copy: a README naming a file that is gone
    test_file_listed_twice_fails       on a copy: a file that starts two list items

A README names a file in backquotes: `name.c`, or with its path (`src/x/name.c`,
`x/name.c`); a pattern (`format_*.c`) does not list a file, and must match one.
A name it gives for a file elsewhere resolves against the repository, src/,
include/, include/sluice/ and the other src/ folders, or is one of the files the
build generates (an `output:` of a meson.build) or a library header of
docs/architecture.md's libraries table.  No server is started.
"""

import re
import shutil
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
NAMED_RE = re.compile(r"`([A-Za-z0-9_./*-]+\.(?:c|h|y|py|txt))`")


def folders(root):
    """The folders whose README must list their files: src/*/ and include/sluice/."""
    out = sorted(p for p in (root / "src").iterdir()
                 if p.is_dir() and any(p.glob("*.[ch]")))
    out.append(root / "include" / "sluice")
    return out


def generated(root):
    """The names of the files the build generates (meson's output: lists)."""
    names = set()
    for mb in root.rglob("meson.build"):
        if any(part.startswith("build") for part in mb.relative_to(root).parts[:-1]):
            continue
        for m in re.finditer(r"output\s*:\s*(\[[^\]]*\]|'[^']*')", mb.read_text()):
            names.update(re.findall(r"'([^'@]+)'", m.group(1)))
    return names


def libraries(root):
    """The third-party headers of docs/architecture.md's libraries table, with
    their last parts (`librdkafka/rdkafka.h` may be named `rdkafka.h`)."""
    names = set()
    doc = root / "docs" / "architecture.md"
    for line in doc.read_text().splitlines() if doc.exists() else []:
        cells = line.split("|")
        if len(cells) > 3 and "only in" not in line and "`src/" in cells[2]:
            for h in re.findall(r"`([^`]+)`", cells[1]):
                parts = h.split("/")
                names.update("/".join(parts[i:]) for i in range(len(parts)))
    return names


def exists(root, folder, name):
    """Whether a name a README gives is a file: of the folder, by a path from
    the repository, src/ or include/, a header of include/sluice/, a file of
    another src/ folder, or a pattern that matches a file of the folder."""
    if "*" in name:
        return any(folder.glob(name)) or any(root.glob(name))
    places = [folder / name, root / name, root / "src" / name, root / "include" / name,
              root / "include" / "sluice" / name]
    if any(p.is_file() for p in places):
        return True
    return "/" not in name and any((root / "src").glob("*/" + name))


def problems(root):
    """Every disagreement between a folder and its README: 'path: message'."""
    root = Path(root)
    known = generated(root) | libraries(root)
    out = []
    for folder in folders(root):
        rel = folder.relative_to(root).as_posix()
        readme = folder / "README.md"
        if not readme.exists():
            out.append(f"{rel}/README.md: missing (it lists the folder's files)")
            continue
        named = NAMED_RE.findall(readme.read_text())
        listed = set()
        for n in named:
            if "/" not in n:
                listed.add(n)
            elif (root / n).parent == folder or (root / "src" / n).parent == folder:
                listed.add(Path(n).name)
        for f in sorted(folder.glob("*.[ch]")):
            if f.name not in listed:
                out.append(f"{rel}/README.md: does not name {f.name}, a file of {rel}/")
        items = re.findall(r"^\s*[-*] `([^`]+\.[ch])`", readme.read_text(), re.M)
        for n in sorted({n for n in items if items.count(n) > 1}):
            out.append(f"{rel}/README.md: lists {n} in {items.count(n)} items (one line a file)")
        for n in sorted(set(named)):
            if not exists(root, folder, n) and n not in known and Path(n).name not in known:
                out.append(f"{rel}/README.md: names `{n}`, which does not exist")
    return out


def test_readmes_match_their_folders():
    found = problems(REPO)
    assert found == [], "\n".join(found)


def copy_tree(tmp_path):
    """A copy of what the test reads: src/, include/, grammar/, docs/architecture.md."""
    root = tmp_path / "tree"
    for d in ("src", "include", "grammar"):
        shutil.copytree(REPO / d, root / d)
    (root / "docs").mkdir()
    shutil.copy(REPO / "docs" / "architecture.md", root / "docs" / "architecture.md")
    return root


def test_missing_file_fails(tmp_path):
    root = copy_tree(tmp_path)
    (root / "src" / "util" / "newthing.c").write_text("/* newthing.c -- a new file */\n")
    assert "src/util/README.md: does not name newthing.c, a file of src/util/" in problems(root)


def test_file_listed_twice_fails(tmp_path):
    root = copy_tree(tmp_path)
    readme = root / "src" / "util" / "README.md"
    readme.write_text(readme.read_text() + "\n- `crc32c.c` — again\n- `crc32c.c` — and again\n")
    found = problems(root)
    assert any(p.startswith("src/util/README.md: lists crc32c.c in ") for p in found), found


def test_vanished_file_fails(tmp_path):
    root = copy_tree(tmp_path)
    readme = root / "src" / "util" / "README.md"
    readme.write_text(readme.read_text() + "\n- `gone.c` — a file that is not there\n")
    assert "src/util/README.md: names `gone.c`, which does not exist" in problems(root)
