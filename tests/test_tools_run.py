"""./tools/run, as a user runs it: build the release binary, start the server,
connect with psql.

The acceptance of the foundation issue: after ./tools/run, `psql ... -c 'SELECT 1'`
prints 1 and `SELEC 1` gives SQLSTATE 42601 with a caret under SELEC.  The test
passes --port 0 and a temporary --data-dir (tools/run hands extra arguments to
sluiced, and later options win), so it never collides with a server a developer
runs on 7433, and stops the server with Ctrl-C (SIGINT) as a user would.
"""

import os
import re
import signal
import subprocess
import time

import pytest

from conftest import REPO, READY_RE, log_tail

BUILD_AND_START_TIMEOUT = 900


@pytest.mark.timeout(BUILD_AND_START_TIMEOUT + 120)
def test_tools_run_starts_a_server_psql_can_use(tmp_path):
    log = tmp_path / "run.log"
    with open(log, "wb") as out:
        proc = subprocess.Popen(
            [str(REPO / "tools" / "run"), "--port", "0", "--data-dir", str(tmp_path / "data")],
            stdout=out, stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL,
            start_new_session=True)
    try:
        port = None
        deadline = time.monotonic() + BUILD_AND_START_TIMEOUT
        while time.monotonic() < deadline and port is None:
            m = READY_RE.search(log.read_text(errors="replace"))
            if m:
                port = m.group(2)
                break
            assert proc.poll() is None, "tools/run exited:\n" + log_tail(log)
            time.sleep(0.5)
        assert port, "no ready line from tools/run:\n" + log_tail(log)
        assert (tmp_path / "data" / "catalog.db").exists()
        assert (tmp_path / "data" / "state").is_dir()

        dsn = f"host=127.0.0.1 port={port} user=sluice dbname=sluice"
        ok = subprocess.run(["psql", dsn, "-X", "-A", "-t", "-c", "SELECT 1"],
                            capture_output=True, text=True, timeout=30)
        assert ok.returncode == 0 and ok.stdout.strip() == "1", ok

        bad = subprocess.run(["psql", dsn, "-X", "-v", "VERBOSITY=verbose", "-c", "SELEC 1"],
                             capture_output=True, text=True, timeout=30)
        assert bad.returncode != 0
        assert "ERROR:  42601: syntax error at or near \"SELEC\"" in bad.stderr, bad.stderr
        lines = bad.stderr.splitlines()
        i = next(k for k, line in enumerate(lines) if line.startswith("LINE 1: SELEC 1"))
        assert lines[i + 1] == " " * len("LINE 1: ") + "^", bad.stderr
    finally:
        if proc.poll() is None:
            os.killpg(proc.pid, signal.SIGINT)
            try:
                proc.wait(timeout=30)
            except subprocess.TimeoutExpired:
                os.killpg(proc.pid, signal.SIGKILL)
                proc.wait()
    assert proc.returncode == 0, "sluiced did not stop cleanly:\n" + log_tail(log)
    assert not re.search(r"ERROR: AddressSanitizer|runtime error:", log.read_text())
