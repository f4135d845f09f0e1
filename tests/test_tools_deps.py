"""tools/run installs only what building and running the server needs.

tools/deps.sh keeps two Debian package lists: DEPS_DEBIAN_PACKAGES (the
build and psql: what tools/run installs) and DEPS_TEST_DEBIAN_PACKAGES (what
only the tests use).  These checks read the lists as bash sees them and the
functions tools/run calls, so a test tool put back on tools/run's list, or
a test step called from tools/run, fails here (issue 23, item 7).
"""

import re
import subprocess
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent

# Programs and packages only a test needs (a test, a driver, a broker, a browser).
TEST_ONLY = {"clang", "kcat", "python3-venv", "openjdk-17-jre-headless", "maven",
             "chromium", "postgresql-15", "nodejs", "npm", "golang-go", "systemd"}
# What the build needs, whichever list it is on.
BUILD = {"build-essential", "pkg-config", "meson", "ninja-build", "lemon", "libuv1-dev",
         "librocksdb-dev", "libsqlite3-dev", "librdkafka-dev", "libssl-dev", "libpcre2-dev"}


def deps_lists():
    out = subprocess.run(
        ["bash", "-c", '. tools/deps.sh; echo "$DEPS_DEBIAN_PACKAGES"; echo ---; '
         'echo "$DEPS_TEST_DEBIAN_PACKAGES"'],
        cwd=ROOT, capture_output=True, text=True, check=True, timeout=30).stdout
    run, test = out.split("---")
    return set(run.split()), set(test.split())


def test_tools_run_list_has_no_test_tool():
    run, test = deps_lists()
    assert not run & TEST_ONLY, f"test-only packages on tools/run's list: {run & TEST_ONLY}"
    assert BUILD <= run, f"build packages missing from tools/run's list: {BUILD - run}"
    assert {"postgresql-15", "chromium", "maven", "openjdk-17-jre-headless"} <= test


def test_tools_run_calls_only_the_build_step():
    text = (ROOT / "tools" / "run").read_text()
    calls = set(re.findall(r"^\s*(deps_\w+)", text, re.M))
    assert calls == {"deps_debian"}, calls


def test_tools_test_installs_the_test_packages():
    text = (ROOT / "tools" / "test").read_text()
    calls = re.findall(r"^\s*(deps_\w+)", text, re.M)
    for step in ("deps_debian", "deps_test_debian", "deps_venv", "deps_sqllogictest"):
        assert step in calls, step
    assert calls.index("deps_test_debian") < calls.index("deps_venv")
