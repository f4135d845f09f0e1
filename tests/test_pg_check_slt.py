"""tools/pg_check_slt.py can fail (issue 26, item 7): the check that runs the
PostgreSQL-derived .slt files against a real PostgreSQL 15 in every
./tools/test.

- An expectation that differs from PostgreSQL's answer (rows, a count, a
  SQLSTATE, an error's message, an error where PostgreSQL succeeds) fails
  the file, with FILE:LINE, the expectation and PostgreSQL's answer; a file
  that agrees passes; a record marked "# sluice only" is not run.
- A file that does not say whether it is checked fails; a "not checked" one
  is not run.
- No PostgreSQL (PGBIN elsewhere) fails every checked file.
- tools/pg_slt.py puts PostgreSQL's answer back into the drifted records.
- --audit lists the "sluice only" records PostgreSQL agrees with.
- The private cluster is gone when the check ends, also when it is stopped
  with SIGTERM.
The files here are small ones made for each case; PostgreSQL 15 comes from
tools/deps.sh (a missing one fails these tests, as it fails ./tools/test).
"""

import os
import signal
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[1]
CHECK = REPO / "tools" / "pg_check_slt.py"
FILL = REPO / "tools" / "pg_slt.py"

GOOD = """\
# postgres: checked -- a file the tests make

statement ok
CREATE TABLE t (a int, b text)

statement count 3
INSERT INTO t VALUES (2, 'x y'), (1, ''), (3, NULL)

query IT rowsort
SELECT a, b FROM t
----
1 (empty)
2 x y
3 NULL

query I valuesort
SELECT a FROM t
----
1
2
3

statement error (22012)
SELECT 1 / 0

statement error relation "nope" does not exist
SELECT * FROM nope

# sluice only: PostgreSQL has no streams
statement ok
CREATE STREAM s (a int)
"""

# (the line of the record, what replaces the good text there)
FAULTS = [
    ("statement count 3\n", "statement count 4\n"),          # a count
    ("2 x y\n", "2 x z\n"),                                   # a value
    ("statement error (22012)\n", "statement error (22003)\n"),  # a SQLSTATE
    ('statement error relation "nope" does not exist\n',
     'statement error relation "nope" is missing\n'),         # a message
]


@pytest.fixture
def workdir():
    """A directory PostgreSQL, run as the user postgres when we are root, can
    reach (pytest's tmp_path is private to root): the cluster goes under it."""
    path = Path(tempfile.mkdtemp(prefix="pgcheck-test."))
    path.chmod(0o755)
    yield path
    subprocess.run(["rm", "-rf", str(path)], check=False)


def check(workdir, *files, env=None):
    env = dict(os.environ, TMPDIR=str(workdir), **(env or {}))
    return subprocess.run([sys.executable, str(CHECK), *map(str, files)], capture_output=True,
                          text=True, env=env, timeout=300, cwd=REPO)


def write(workdir, name, text):
    path = workdir / name
    path.write_text(text)
    return path


def leftover_clusters(workdir):
    return [p for p in workdir.iterdir() if p.name.startswith("sluice-pgcheck.")]


def test_a_file_that_agrees_with_postgresql_passes(workdir):
    path = write(workdir, "good.slt", GOOD)
    res = check(workdir, path)
    assert res.returncode == 0, res.stdout + res.stderr
    assert f"{path}: 6 records checked, 1 sluice only, 0 differ" in res.stdout
    assert res.stdout.splitlines()[-1] == "1 passed, 0 failed"
    assert leftover_clusters(workdir) == []


@pytest.mark.parametrize("good,bad", FAULTS, ids=["count", "value", "sqlstate", "message"])
def test_an_expectation_that_differs_from_postgresql_fails(workdir, good, bad):
    assert good in GOOD
    text = GOOD.replace(good, bad)
    path = write(workdir, "drift.slt", text)
    res = check(workdir, path)
    assert res.returncode == 1, res.stdout + res.stderr
    # the record's first line, as FILE:LINE
    line = text[:text.index(bad)].count("\n") + 1
    while not text.split("\n")[line - 1].startswith(("query", "statement")):
        line -= 1
    assert f"{path}:{line}: " in res.stdout, res.stdout
    assert "PostgreSQL 15:" in res.stdout and "expected:" in res.stdout
    assert f"{path}: 6 records checked, 1 sluice only, 1 differ" in res.stdout
    assert res.stdout.splitlines()[-1] == "0 passed, 1 failed"


def test_an_error_where_postgresql_succeeds_fails(workdir):
    path = write(workdir, "noerror.slt", GOOD.replace("SELECT 1 / 0", "SELECT 1 / 1"))
    res = check(workdir, path)
    assert res.returncode == 1
    assert "an error with SQLSTATE 22012" in res.stdout and "no error, rows [['1']]" in res.stdout


def test_the_sluice_only_mark_is_what_keeps_a_record_away(workdir):
    path = write(workdir, "unmarked.slt", GOOD.replace("# sluice only: PostgreSQL has no streams\n", ""))
    res = check(workdir, path)
    assert res.returncode == 1
    assert 'syntax error at or near "STREAM"' in res.stdout


def test_a_file_must_say_whether_it_is_checked(workdir):
    bare = write(workdir, "bare.slt", GOOD.replace("# postgres: checked -- a file the tests make\n", ""))
    own = write(workdir, "own.slt", "# postgres: not checked -- sluice's own\n\n"
                "statement ok\nCREATE STREAM s (a int)\n")
    res = check(workdir, bare, own)
    assert res.returncode == 1
    assert f"{bare}:1: no '# postgres: checked | not checked | golden' line" in res.stdout
    assert f"{own}: postgres: not checked (not run against PostgreSQL)" in res.stdout
    assert res.stdout.splitlines()[-1] == "0 passed, 1 failed"


def test_no_postgresql_fails(workdir):
    path = write(workdir, "good.slt", GOOD)
    res = check(workdir, path, path, env={"PGBIN": str(workdir / "no-postgresql")})
    assert res.returncode == 1
    assert "PostgreSQL 15 not found" in res.stdout
    assert res.stdout.splitlines()[-1] == "0 passed, 2 failed"


def test_pg_slt_puts_postgresqls_answers_back(workdir):
    text = GOOD
    for good, bad in FAULTS:
        text = text.replace(good, bad)
    path = write(workdir, "fill.slt", text)
    env = dict(os.environ, TMPDIR=str(workdir))
    res = subprocess.run([sys.executable, str(FILL), str(path)], capture_output=True, text=True,
                         env=env, timeout=300)
    assert res.returncode == 0, res.stdout + res.stderr
    assert "4 updated" in res.stdout
    filled = path.read_text()
    assert "statement count 3\n" in filled and "2 x y\n" in filled and "statement error (22012)\n" in filled
    assert 'statement error relation "nope" does not exist\n' in filled
    assert check(workdir, path).returncode == 0


def test_sigterm_stops_the_cluster(workdir):
    # many records, so that the check is still running when it is stopped
    body = "".join(f"query I\nSELECT {k}\n----\n{k}\n\n" for k in range(20000))
    path = write(workdir, "long.slt", "# postgres: checked -- long\n\n" + body)
    env = dict(os.environ, TMPDIR=str(workdir))
    proc = subprocess.Popen([sys.executable, str(CHECK), str(path)], stdout=subprocess.PIPE,
                            stderr=subprocess.STDOUT, text=True, env=env, cwd=REPO)
    try:
        # wait for the server: its pid file in the cluster's directory
        for _ in range(600):
            dirs = leftover_clusters(workdir)
            if dirs and (dirs[0] / "data" / "postmaster.pid").exists():
                break
            assert proc.poll() is None, proc.stdout.read()
            time.sleep(0.1)
        else:
            pytest.fail("the check never started PostgreSQL")
        pid = int((dirs[0] / "data" / "postmaster.pid").read_text().split()[0])
        proc.send_signal(signal.SIGTERM)
        out, _ = proc.communicate(timeout=120)
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
    assert proc.returncode == 143, out
    assert leftover_clusters(workdir) == []
    assert not Path(f"/proc/{pid}").exists(), "the postmaster outlived the check"


def test_audit_lists_the_sluice_only_marks_postgresql_agrees_with(workdir):
    text = GOOD.replace("statement error (22012)\n", "# sluice only: needless\nstatement error (22012)\n")
    path = write(workdir, "audit.slt", text)
    res = check(workdir, "--audit", path)
    assert res.returncode == 0, res.stdout + res.stderr
    line = text.split("\n").index("statement error (22012)") + 1
    agreed = [x for x in res.stdout.splitlines() if "marked sluice only" in x]
    assert agreed == [f"{path}:{line}: marked sluice only, but PostgreSQL 15 gives what it "
                      "expects: SELECT 1 / 0"], res.stdout
