#!/usr/bin/env python3
"""tools/check_globals.py — every file-level mutable object of src/ must be listed.

    tools/check_globals.py BUILD_DIR [--doc docs/architecture.md]
    tools/check_globals.py --objects a.o b.a ... --doc FILE     (the test's entry)

Reads the object files of a build (BUILD_DIR/src/libsluice.a and
libsluice-parser.a) with `objdump -t` and lists every object symbol, static
or extern, static locals included, that lies in a writable section (.data,
.bss, .data.rel, .data.rel.local, and the thread-local .tdata/.tbss).
Objects in .rodata or .data.rel.ro are read-only and not counted, so a lookup
table declared without `const` (all the way: `const char *const`) counts as
mutable until it is made const. Sanitizer and compiler symbols (__asan*,
__odr_asan*, __ubsan*, __sancov*, .L*) are skipped.

Each object maps back to its source: meson names src/runtime/cq.c's object
`runtime_cq.c.o`, which becomes `src/runtime/cq.c`; a generated file's object
(`meson-generated_..`) becomes `build:<name>`. A static local `names` of a
function shows as `names.0` (gcc) or `function.names` (clang); the table names
it `names`.

The allowed list is the table of docs/architecture.md's section "Process-wide
state": rows `| `file` | `symbol` | class | ... |`. The check fails, naming
file and symbol, on a global the table does not list, and on a row that names
a global the build no longer has (unless its class ends in "(fault builds)":
only builds with -Dfault_injection=true have it; or "(debug builds)": builds
without NDEBUG, --buildtype=release drops it). Exit 0 and no output when both agree.

Exports (for tests/test_globals.py): objects_globals(paths), symbol_name(sym),
read_allowed(doc), compare(found, allowed).
"""

import argparse
import re
import subprocess
import sys
from pathlib import Path

MUTABLE_SECTIONS = {".data", ".bss", ".data.rel", ".data.rel.local", ".tdata", ".tbss"}
SKIP_PREFIXES = ("__asan", "__odr_asan", "___asan", "__ubsan", "__sancov", ".L")
SECTION_TITLE = "## Process-wide state"
# A row only some builds need: -Dfault_injection=true, or without NDEBUG.
OPTIONAL_CLASS = ("(fault builds)", "(debug builds)")

# objdump -t: address, 7 flag characters, section, tab, size, name
SYM_RE = re.compile(r"^([0-9a-f]+) (.{7}) (\S+)\t([0-9a-f]+) (.*)$")
ROW_RE = re.compile(r"^\|\s*`([^`]+)`\s*\|\s*`([^`]+)`\s*\|")


def source_of(obj_name):
    """src/<folder>/<file>.c for a meson object name, or build:<name>."""
    base = Path(obj_name).name
    if base.endswith(".o"):
        base = base[:-2]
    if base.startswith("meson-generated_"):
        rest = base[len("meson-generated_"):]
        rest = re.sub(r"^(\.\._)+", "", rest)
        return "build:" + rest.replace("_", "/", 1) if rest.startswith("grammar_") \
            else "build:" + rest
    folder, sep, rest = base.partition("_")
    if not sep:
        return "src/" + base
    return "src/%s/%s" % (folder, rest)


def symbol_name(sym):
    """The C name of an object symbol: gcc names a static local `names` of a
    function `names.0`, clang names it `function.names`."""
    sym = re.sub(r"\.\d+$", "", sym)
    return sym.rsplit(".", 1)[-1]


def objects_globals(paths):
    """{(source, symbol): section} of every mutable object in the object
    files or archives at paths."""
    found = {}
    for path in paths:
        out = subprocess.run(["objdump", "-t", str(path)], capture_output=True,
                             text=True, check=True).stdout
        member = Path(path).name
        for line in out.splitlines():
            if ":" in line and "file format" in line:
                member = line.split(":")[0].strip()
                continue
            m = SYM_RE.match(line)
            if not m:
                continue
            flags, section, name = m.group(2), m.group(3), m.group(5).strip()
            if section not in MUTABLE_SECTIONS:
                continue
            if flags[5] == "d" or flags[6] in "fF":    # section, file, function
                continue
            if not name or name.startswith(SKIP_PREFIXES):
                continue
            found[(source_of(member), symbol_name(name))] = section
    return found


def read_allowed(doc):
    """{(file, symbol): class} from the rows of the section "Process-wide state"."""
    allowed = {}
    inside = False
    for line in Path(doc).read_text().splitlines():
        if line.startswith("## "):
            inside = line.strip() == SECTION_TITLE
            continue
        if not inside:
            continue
        m = ROW_RE.match(line)
        if m:
            cells = [c.strip() for c in line.strip().strip("|").split("|")]
            allowed[(m.group(1), m.group(2))] = cells[2] if len(cells) > 2 else ""
    return allowed


def compare(found, allowed):
    """Lines naming each disagreement; empty when the table and build agree."""
    problems = []
    for key in sorted(found):
        if key not in allowed:
            problems.append("%s: %s (%s): a mutable global that docs/architecture.md, "
                            "\"Process-wide state\", does not list (a lookup table: "
                            "make it const; server state: a field of its context)"
                            % (key[0], key[1], found[key]))
    for key in sorted(allowed):
        if key not in found and not allowed[key].endswith(OPTIONAL_CLASS):
            problems.append("%s: %s: listed in \"Process-wide state\" but the build "
                            "has no such mutable global (remove its row)" % key)
    return problems


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("build", nargs="?", help="a meson build directory")
    ap.add_argument("--objects", nargs="+", help="object files or archives instead")
    ap.add_argument("--doc", default=str(Path(__file__).resolve().parent.parent
                                         / "docs" / "architecture.md"))
    ap.add_argument("--list", action="store_true", help="print what was found")
    args = ap.parse_args()
    if args.objects:
        paths = args.objects
    elif args.build:
        paths = [Path(args.build) / "src" / n for n in ("libsluice.a", "libsluice-parser.a")]
        missing = [str(p) for p in paths if not p.exists()]
        if missing:
            print("no %s: build %s first" % (", ".join(missing), args.build))
            return 2
    else:
        ap.error("give a build directory or --objects")
    found = objects_globals(paths)
    if args.list:
        for (src, name), section in sorted(found.items()):
            print("%s\t%s\t%s" % (src, name, section))
        return 0
    problems = compare(found, read_allowed(args.doc))
    for p in problems:
        print(p)
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
