#!/usr/bin/env python3
"""tools/check_layers.py -- the floors of src/ and the edges between them, checked.

    tools/check_layers.py [ROOT]        exit 0 when every edge is allowed, 1 and
                                        one line per forbidden edge otherwise
    tools/check_layers.py --edges       also list the edges the tree has, one
                                        line each (floor -> floor, first place)

Reads ONE place, docs/architecture.md, section "Floors" (under ROOT, the
repository by default), and its three tables:

    floors      floor | code today | may use     lowest floor first; "code today"
                names folders (`src/util/`) or files (`src/main.c`); a folder
                that holds several floors not yet split out of it is listed by
                each of them; "may use" lists the floors below it that it may
                include or call
    headers     header | floor                   every header of include/sluice/
                and the headers the build generates (errcodes.h, sql.h)
    libraries   header | only in                 third-party headers that one
                wrapper owns (rocksdb/c.h in src/state/, ...)
    exceptions  from | to | in | through | why   the upward edges the code still
                has, each allowed only in the files it names ("in") and only
                through the headers or functions it names ("through"), until
                the work it names removes it; an exception no edge uses is an
                error (its row must go)

and scans every src/**/*.c|h and include/sluice/*.h for edges:

  - #include "..." : a header of include/sluice/ has the floor of the headers
    table; a header of a src/ folder the lowest floor of that folder; the
    file's own folder is always allowed.  A file's floor is the highest floor
    of its folder (a folder holding floors not yet split out counts as the
    lowest of them for its includers and the highest for its own includes).
  - #include "../x/y.h" that leaves the file's folder: always forbidden (a
    way around the headers table).
  - `extern` declarations (and file-scope prototypes) in .c files of a
    function that another folder defines: an edge to that folder's floor, the
    way around an include; and each prototype of a header of include/sluice/:
    an edge from the header's floor to the floor of the folder that defines
    the function (so a header cannot be given a floor that is not its own).
  - #include <lib.h> of the libraries table outside the files it names.

A forbidden edge prints as
    src/util/x.c:12: util -> runtime: #include "sluice/runtime.h" (util may use: nothing)
A file the tables do not place, a header without a floor, or an edge upwards
in the table itself is an error too.  tests/test_layers.py runs it on the
tree and on a copy with a wrong include.
"""

import bisect
import fnmatch
import re
import sys
from pathlib import Path

SECTION = "## Floors"


class TableError(Exception):
    pass


def md_tables(text):
    """Every markdown table of text: a list of (header cells, [row cells])."""
    tables, cur = [], None
    for line in text.splitlines():
        s = line.strip()
        if s.startswith("|") and s.endswith("|"):
            cells = [c.strip() for c in s[1:-1].split("|")]
            if cur is None:
                cur = [cells, []]
                tables.append(cur)
            elif all(re.fullmatch(r":?-{3,}:?", c) for c in cells):
                continue
            else:
                cur[1].append(cells)
        else:
            cur = None
    return [(h, rows) for h, rows in tables]


def ticks(cell):
    """The `backticked` names of a table cell."""
    return re.findall(r"`([^`]+)`", cell)


def words(cell):
    """The floor names of a "may use" cell (commas or spaces; a dash: none)."""
    return [w for w in re.split(r"[,\s]+", cell.replace("`", "")) if w and w not in ("—", "-")]


class Layers:
    """The floors, their code, their edges and the headers' floors, as the doc says."""

    def __init__(self, root):
        self.root = Path(root)
        doc = self.root / "docs" / "architecture.md"
        text = doc.read_text()
        start = text.find("\n" + SECTION + "\n")
        if start < 0:
            raise TableError(f"{doc}: no section '{SECTION}'")
        end = text.find("\n## ", start + 1)
        section = text[start:end if end > 0 else len(text)]
        self.floors = []          # names, lowest first
        self.code = {}            # floor -> [path patterns]
        self.uses = {}            # floor -> set of floors
        self.headers = {}         # header name (sluice/x.h, errcodes.h) -> floor
        self.libs = {}            # <lib.h> -> [path patterns]
        self.exceptions = []      # [from, to, [path patterns], [headers], times used]
        for head, rows in md_tables(section):
            key = [h.lower() for h in head]
            if key[:3] == ["floor", "code today", "may use"]:
                for r in rows:
                    f = r[0].strip("` ")
                    self.floors.append(f)
                    self.code[f] = ticks(r[1])
                    self.uses[f] = set(words(r[2]))
            elif key[:2] == ["header", "floor"]:
                for r in rows:
                    for h in ticks(r[0]):
                        self.headers[h] = r[1].strip("` ")
            elif key[:4] == ["from", "to", "in", "through"]:
                for r in rows:
                    self.exceptions.append([r[0].strip("` "), r[1].strip("` "),
                                            ticks(r[2]), ticks(r[3]), 0])
            elif key[:2] == ["header", "only in"]:
                for r in rows:
                    for h in ticks(r[0]):
                        self.libs[h] = ticks(r[1])
        if not self.floors:
            raise TableError(f"{doc}: section '{SECTION}' has no floors table "
                             "(floor | code today | may use)")
        rank = {f: i for i, f in enumerate(self.floors)}
        self.rank = rank
        for f in self.floors:
            for u in self.uses[f]:
                if u not in rank:
                    raise TableError(f"{doc}: floor {f} may use {u}, which is no floor")
                if rank[u] >= rank[f]:
                    raise TableError(f"{doc}: floor {f} may use {u}, which is not below it")
        for a, b, pats, _, _ in self.exceptions:
            if a not in rank or b not in rank or not pats:
                raise TableError(f"{doc}: exception {a} -> {b}: no such floor, or no file named")
        for h, f in self.headers.items():
            if f not in rank:
                raise TableError(f"{doc}: header {h} has floor {f}, which is no floor")

    def floors_of(self, rel):
        """The floors whose code holds the file rel (a path under the root)."""
        out = []
        for f in self.floors:
            for pat in self.code[f]:
                if pat.endswith("/"):
                    if rel.startswith(pat) and "/" not in rel[len(pat):]:
                        out.append(f)
                        break
                elif fnmatch.fnmatchcase(rel, pat):
                    out.append(f)
                    break
        return out

    def file_floor(self, rel):
        """The floor a file includes and calls from: the highest of its folder's."""
        if rel.startswith("include/sluice/"):
            return self.headers.get("sluice/" + rel[len("include/sluice/"):])
        fl = self.floors_of(rel)
        return max(fl, key=self.rank.get) if fl else None

    def target_floor(self, rel):
        """The floor others reach when they include or call into rel: the lowest."""
        if rel.startswith("include/sluice/"):
            return self.headers.get("sluice/" + rel[len("include/sluice/"):])
        fl = self.floors_of(rel)
        return min(fl, key=self.rank.get) if fl else None

    def allowed(self, src, dst, rel=None, through=None):
        """Whether src may use dst; an exception may allow it in the file rel
        through the header (or function) named through."""
        if src == dst or dst in self.uses[src]:
            return True
        for ex in self.exceptions:
            if ex[0] == src and ex[1] == dst and rel is not None and \
                    any(fnmatch.fnmatchcase(rel, x) for x in ex[2]) and \
                    (not ex[3] or through in ex[3]):
                ex[4] += 1
                return True
        return False

    def may_use(self, f):
        return ", ".join(sorted(self.uses[f], key=self.rank.get)) or "nothing"


# --------------------------------------------------------------- C scanning

COMMENT_OR_LITERAL = re.compile(
    r"//[^\n]*|/\*.*?\*/|\"(?:\\.|[^\"\\\n])*\"|'(?:\\.|[^'\\\n])*'", re.S)


def strip_c(text):
    """text with comments and string/char literals blanked (newlines kept)."""
    def blank(m):
        t = m.group(0)
        if t[0] in "\"'":
            return t[0] + re.sub(r"[^\n]", " ", t[1:-1]) + t[-1]
        return re.sub(r"[^\n]", " ", t)
    return COMMENT_OR_LITERAL.sub(blank, text)


NOT_NAMES = {"if", "while", "for", "switch", "return", "sizeof", "__attribute__",
             "defined", "typeof", "__typeof__", "_Static_assert", "offsetof"}


def top_level(code):
    """(text, line, ends_with) of each top-level declaration or definition head.

    code has comments and strings blanked; preprocessor lines are skipped.
    ends_with is ';' for a declaration and '{' for a definition's head."""
    code = re.sub(r"(?m)^[ \t]*#(?:[^\n]*\\\n)*[^\n]*",
                  lambda m: "\n" * m.group(0).count("\n"), code)
    newlines = [i for i, c in enumerate(code) if c == "\n"]
    depth = paren = 0
    seg = 0                                   # where the current segment starts
    for m in re.finditer(r"[{}();]", code):
        ch, at = m.group(0), m.start()
        if depth == 0:
            if ch == "(":
                paren += 1
            elif ch == ")":
                paren -= 1
            elif (ch == ";" and paren == 0) or ch == "{":
                text = code[seg:at]
                stripped = text.lstrip()
                if stripped:
                    first = at - len(text) + (len(text) - len(stripped))
                    yield stripped, bisect.bisect_left(newlines, first) + 1, ch
                seg = at + 1
                if ch == "{":
                    depth = 1
        else:
            if ch == "{":
                depth += 1
            elif ch == "}":
                depth -= 1
                if depth == 0:
                    paren = 0
                    seg = at + 1


def func_name(decl):
    """The function a declaration or definition head names, or None."""
    for m in re.finditer(r"\b([A-Za-z_]\w*)\s*\(", decl):
        if m.group(1) not in NOT_NAMES:
            # `int (*fp)(void)` declares a pointer variable, not a function.
            if re.match(r"\s*\(\s*\*", decl[m.end() - 1:]):
                return None
            return m.group(1)
    return None


def definitions(code):
    """Names of the non-static functions a .c file defines."""
    out = set()
    for head, _, end in top_level(code):
        if end != "{" or "(" not in head or not head.rstrip().endswith(")"):
            continue
        if re.search(r"\b(static|typedef|struct|enum|union)\b", head.split("(")[0]) \
                or "=" in head.split("(")[0]:
            continue
        name = func_name(head)
        if name:
            out.add(name)
    return out


def declarations(code):
    """(name, line) of each function a .c file declares itself: file-scope
    prototypes that are not static, and `extern` declarations anywhere."""
    out = []
    for head, line, end in top_level(code):
        if end != ";" or "(" not in head:
            continue
        pre = head.split("(")[0]
        if re.search(r"\b(static|typedef)\b", pre) or "=" in pre:
            continue
        name = func_name(head)
        if name and re.match(r"\s*(extern\s+)?[A-Za-z_][\w\s\*]*\b" + name + r"\s*\(", head):
            out.append((name, line + head[:head.find(name)].count("\n")))
    seen = {n for n, _ in out}
    # Block-scope externs: `extern int f(void);` inside a function.
    for m in re.finditer(r"\bextern\b[^;{}]*?\b([A-Za-z_]\w*)\s*\(", code):
        line = code.count("\n", 0, m.start(1)) + 1
        if m.group(1) not in seen:
            out.append((m.group(1), line))
    return out


INCLUDE_RE = re.compile(r'^\s*#\s*include\s*([<"])([^>"]+)[>"]', re.M)


def scan(root, edges=None):
    """Every problem of the tree under root: a list of 'path:line: message'.
    edges, a dict, gets each edge seen (src floor, dst floor) -> its first place."""
    if edges is None:
        edges = {}
    root = Path(root)
    lay = Layers(root)
    files = sorted(p for p in (root / "src").rglob("*") if p.suffix in (".c", ".h"))
    files += sorted((root / "include" / "sluice").glob("*.h"))
    rel = {p: p.relative_to(root).as_posix() for p in files}
    texts = {p: p.read_text(errors="replace") for p in files}
    problems = []

    code = {p: strip_c(texts[p]) for p in files if p.suffix == ".c" or
            rel[p].startswith("include/")}
    defined_in = {}
    for p in files:
        if p.suffix == ".c":
            for name in definitions(code[p]):
                defined_in.setdefault(name, rel[p])

    for p in files:
        r = rel[p]
        src = lay.file_floor(r)
        if src is None:
            where = ("the headers table" if r.startswith("include/") else "the floors table")
            problems.append(f"{r}:1: no floor: add it to {where} of docs/architecture.md")
            continue
        folder = p.parent
        text = texts[p]
        for m in INCLUDE_RE.finditer(text):
            line = text.count("\n", 0, m.start()) + 1
            kind, name = m.group(1), m.group(2)
            shown = f'#include {kind}{name}{">" if kind == "<" else chr(34)}'
            if kind == "<":
                pats = lay.libs.get(name)
                if pats is not None and not any(
                        fnmatch.fnmatchcase(r, x) or (x.endswith("/") and r.startswith(x))
                        for x in pats):
                    problems.append(f"{r}:{line}: {src} -> {name}: {shown} "
                                    f"(only {', '.join(pats)} may include it)")
                continue
            if name.startswith("../") or "/../" in name:
                target = (folder / name).resolve()
                try:
                    trel = target.relative_to(root.resolve()).as_posix()
                except ValueError:
                    trel = name
                if target.parent != folder.resolve():
                    dst = lay.target_floor(trel) or "?"
                    problems.append(f"{r}:{line}: {src} -> {dst}: {shown} reaches into "
                                    f"another folder with ../ (include its header by the "
                                    f"include path, and only from a floor allowed to)")
                continue
            if (folder / name).exists() and "/" not in name:
                continue                                  # the file's own folder
            if name.startswith("sluice/"):
                dst = lay.headers.get(name)
                if dst is None:
                    problems.append(f"{r}:{line}: {shown}: include/{name} has no floor in "
                                    f"the headers table of docs/architecture.md")
                    continue
            elif (root / "src" / name).exists():
                trel = "src/" + name
                if Path(trel).parent == Path(r).parent:
                    continue
                dst = lay.target_floor(trel)
                if dst is None:
                    problems.append(f"{r}:{line}: {shown}: {trel} has no floor")
                    continue
            elif name in lay.headers:
                dst = lay.headers[name]                   # generated by the build
            else:
                problems.append(f"{r}:{line}: {shown}: no such header in include/, src/ or "
                                f"the headers table (generated headers are listed there)")
                continue
            edges.setdefault((src, dst), f"{r}:{line}")
            if not lay.allowed(src, dst, r, name):
                problems.append(f"{r}:{line}: {src} -> {dst}: {shown} "
                                f"({src} may use: {lay.may_use(src)})")

        # A .c file's own prototypes and externs, and a shared header's
        # prototypes: the functions they name belong to the floor of the file
        # that defines them (a header of one floor cannot declare another's).
        if p.suffix == ".c" or r.startswith("include/"):
            for name, line in declarations(code[p]):
                where = defined_in.get(name)
                if where is None or Path(where).parent == Path(r).parent:
                    continue
                dst = lay.target_floor(where)
                if dst is not None:
                    edges.setdefault((src, dst), f"{r}:{line}")
                if dst is None or lay.allowed(src, dst, r, name):
                    continue
                problems.append(f"{r}:{line}: {src} -> {dst}: declares {name}(), which "
                                f"{where} defines ({src} may use: {lay.may_use(src)})")
    for a, b, pats, _, used in lay.exceptions:
        if used == 0:
            problems.append(f"docs/architecture.md: the exception {a} -> {b} in "
                            f"{', '.join(pats)} matches no edge any more: remove its row")
    return problems


def main(argv):
    show_edges = "--edges" in argv
    argv = [a for a in argv if a != "--edges"]
    root = Path(argv[1]) if len(argv) > 1 else Path(__file__).resolve().parent.parent
    edges = {}
    try:
        problems = scan(root, edges)
        lay = Layers(root)
    except (TableError, OSError) as e:
        print(f"check_layers: {e}", file=sys.stderr)
        return 2
    if show_edges:
        for (a, b), where in sorted(edges.items(),
                                    key=lambda e: (lay.rank[e[0][0]], lay.rank[e[0][1]])):
            if a != b:
                print(f"edge {a} -> {b}  (first at {where})")
    for line in problems:
        print(line)
    if problems:
        print(f"check_layers: {len(problems)} forbidden edge(s); the floors and "
              f"their edges are in docs/architecture.md, '{SECTION[3:]}'", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
