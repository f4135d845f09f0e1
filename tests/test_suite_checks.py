"""The suite's own checks can fail (issue 26, items 6 and 8).

- tools/junit_counts.py, which gives tools/test its pytest counts: failures
  and errors (a fixture failing a test at teardown) count as failed, a skip is
  listed and counted, and a skip for a missing tool that tools/deps.sh
  installs (go, node, java, ...) counts as failed.
- conftest.sluiced_refuses, for the tests of starts that sluiced must refuse
  (bad options and config files): a server that exits 1 or 2 without a
  sanitizer report passes; one that prints a sanitizer report (ASan and UBSan
  exit 1 too), exits 23 (LeakSanitizer), dies by a signal, or does not stop
  fails the test.
- tools/bench/benchsrv.py's Server (the Nexmark benchmarks, which
  test_nexmark_bench.py and kafka/test_nexmark_peers.py run on the ASan
  build): a server that logs a sanitizer report or exits other than 0 ends
  the bench with a non-zero status.
The servers here are small shell scripts that act out each case; no sluiced
runs.
"""

import subprocess
import sys
from pathlib import Path

import pytest

import conftest

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO / "tools"))
sys.path.insert(0, str(REPO / "tools" / "bench"))

import junit_counts  # noqa: E402
import benchsrv  # noqa: E402

JUNIT = """<?xml version="1.0" encoding="utf-8"?>
<testsuites><testsuite name="pytest" errors="1" failures="1" skipped="3" tests="7">
<testcase classname="test_a" name="test_ok"/>
<testcase classname="test_a" name="test_ok2"/>
<testcase classname="test_a" name="test_fails"><failure message="assert 1 == 2"/></testcase>
<testcase classname="test_a" name="test_teardown">
  <error message="failed on teardown: sluiced: sanitizer report in the log"/></testcase>
<testcase classname="clients.test_pgx" name="test_pgx[trust]">
  <skipped type="pytest.skip" message="go is not installed"/></testcase>
<testcase classname="clients.test_jdbc" name="test_jdbc[md5]">
  <skipped type="pytest.skip" message="java or mvn is not installed"/></testcase>
<testcase classname="test_b" name="test_big">
  <skipped type="pytest.skip" message="SLUICE_BIG=1 runs it"/></testcase>
</testsuite></testsuites>
"""


def test_junit_counts_fail_a_skip_for_a_missing_tool(tmp_path, capsys):
    path = tmp_path / "pytest.xml"
    path.write_text(JUNIT)
    assert junit_counts.counts(path) == (2, 4, 1)
    err = capsys.readouterr().err
    assert "FAILED (skipped for a missing tool" in err and "go is not installed" in err
    assert "java or mvn is not installed" in err
    assert "skipped: test_b::test_big: SLUICE_BIG=1 runs it" in err
    # the command tools/test runs; no file (pytest never started) is 0 0 0
    out = subprocess.run([sys.executable, str(REPO / "tools" / "junit_counts.py"),
                          str(path)], capture_output=True, text=True, timeout=60)
    assert out.returncode == 0 and out.stdout.split() == ["2", "4", "1"]
    assert junit_counts.counts(tmp_path / "none.xml") == (0, 0, 0)


def fake_server(tmp_path, body):
    """A stand-in for sluiced: a shell script with BODY."""
    path = tmp_path / "fake-sluiced"
    path.write_text("#!/bin/sh\n" + body + "\n")
    path.chmod(0o755)
    return str(path)


@pytest.mark.parametrize("body,fails", [
    ("echo 'sluiced: bad value for --port: x' >&2; exit 2", None),
    ("echo 'cannot start the server' >&2; exit 1", None),
    ("echo '==1==ERROR: AddressSanitizer: heap-use-after-free' >&2; exit 1",
     "sanitizer report"),
    ("echo 'main.c:10:5: runtime error: signed integer overflow' >&2; exit 1",
     "sanitizer report"),
    ("echo 'cannot start the server' >&2; exit 23", "exited with 23"),
    ("kill -ABRT $$", "exited with -6"),
    ("exit 0", "exited with 0"),
    ("exec sleep 30", "did not stop its start"),
], ids=["bad-option", "start-fails", "asan", "ubsan", "lsan-exit", "abort", "exit-0",
        "hangs"])
def test_sluiced_refuses_fails_on_a_report_a_crash_or_no_refusal(
        tmp_path, monkeypatch, body, fails):
    monkeypatch.setenv("SLUICE_BIN", fake_server(tmp_path, body))
    if fails is None:
        res = conftest.sluiced_refuses(["--port", "0"], timeout=10)
        assert res.returncode in (1, 2)
        return
    with pytest.raises(pytest.fail.Exception, match=fails):
        conftest.sluiced_refuses(["--port", "0"], timeout=2)


READY = "echo 'sluiced ready: psql -h 127.0.0.1 -p 5999'"


@pytest.mark.parametrize("on_term,fails", [
    ("exit 0", None),
    ("echo '==1==ERROR: LeakSanitizer: detected memory leaks'; exit 0", "sanitizer report"),
    ("exit 1", "exit code 1"),
], ids=["clean", "leak-report", "exit-1"])
def test_bench_server_fails_on_a_report_or_exit_code(tmp_path, on_term, fails):
    binary = fake_server(tmp_path, f"on_term() {{ {on_term}; }}\ntrap on_term TERM\n"
                         f"{READY}\nwhile :; do sleep 0.1; done")
    server = benchsrv.Server(binary)
    server.__enter__()
    assert server.dsn.endswith("port=5999 user=sluice dbname=sluice")
    if fails is None:
        server.__exit__(None, None, None)
        assert not server.work.exists()
        return
    with pytest.raises(SystemExit, match=fails):
        server.__exit__(None, None, None)
    assert server.log_path.exists()    # kept for the reader
