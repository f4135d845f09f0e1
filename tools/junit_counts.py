#!/usr/bin/env python3
"""tools/junit_counts.py JUNIT -- the counts tools/test prints for a pytest run.

Prints "PASSED FAILED SKIPPED" for the junit XML file pytest wrote (0 0 0 when
there is none or it does not parse).  A test with a <failure> or an <error>
(a fixture's teardown failing it -- a server's sanitizer report or exit code --
is an error) counts as failed.  Each skipped test is listed on stderr with its
reason; one skipped because a tool is missing (MISSING_TOOL: "go is not
installed", ...), which tools/deps.sh installs or the driver tests fetch,
counts as failed, so that nothing leaves the count unnoticed.

    python3 tools/junit_counts.py build-asan/pytest.xml
"""

import re
import sys
import xml.etree.ElementTree as ET

MISSING_TOOL = re.compile(
    r"not installed|not found|no such file|command not found|missing", re.I)


def counts(path, out=None):
    """(passed, failed, skipped) of the junit file PATH; skips listed on OUT
    (stderr)."""
    out = out or sys.stderr
    try:
        root = ET.parse(path).getroot()
    except (OSError, ET.ParseError):
        return 0, 0, 0
    ok = bad = skipped = 0
    for case in root.iter("testcase"):
        name = f"{case.get('classname', '')}::{case.get('name', '')}"
        skip = case.find("skipped")
        if case.find("failure") is not None or case.find("error") is not None:
            bad += 1
        elif skip is not None:
            reason = skip.get("message", "")
            if MISSING_TOOL.search(reason):
                print(f"FAILED (skipped for a missing tool that tools/deps.sh "
                      f"installs): {name}: {reason}", file=out)
                bad += 1
            else:
                print(f"skipped: {name}: {reason}", file=out)
                skipped += 1
        else:
            ok += 1
    return ok, bad, skipped


if __name__ == "__main__":
    if len(sys.argv) != 2:
        sys.exit(__doc__)
    print(*counts(sys.argv[1]))
