"""What the continuous-query benchmarks share: a release sluiced on a free
loopback port with a temporary data directory, and the CPU time it used;
for the Nexmark benchmarks, a query of tools/nexmark/queries run to its end.

    with Server(binary, "--log-level", "debug") as srv:
        psycopg.connect(srv.dsn) ...
        cpu_seconds(srv.proc.pid)
        wall, cpu, (status, error, rows) = run_until_done(
            conn, srv.proc.pid, nexmark_query_sql("q5", "trigger = 'once'"), "q5")

Server's exit stops sluiced and ends the program (exit status 1, the log kept)
when it exited other than 0 or logged a sanitizer report (SANITIZER_RE).
"""

import os
import re
import shutil
import signal
import subprocess
import sys
import tempfile
import time
from pathlib import Path

SANITIZER_RE = re.compile(r"ERROR: AddressSanitizer|runtime error:|ERROR: LeakSanitizer")
NEXMARK_QUERIES = Path(__file__).resolve().parents[2] / "tools" / "nexmark" / "queries"


def cpu_seconds(pid):
    """User+system CPU seconds of a process, all its threads (/proc)."""
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    ticks = os.sysconf("SC_CLK_TCK")
    return (int(fields[11]) + int(fields[12])) / ticks


def nexmark_bids(events):
    """How many of the first EVENTS Nexmark events are bids (46 in each 50)."""
    return events // 50 * 46 + max(events % 50 - 4, 0)


def nexmark_query_sql(query, options, directory=NEXMARK_QUERIES):
    """DIRECTORY/QUERY.sql (tools/nexmark/queries by default) with its first
    `trigger = 'available_now'` -- the first stage of a pipeline -- replaced
    by OPTIONS (e.g. "trigger = 'available_now', max_offsets_per_trigger = N")."""
    return (directory / f"{query}.sql").read_text().replace(
        "trigger = 'available_now'", options, 1)


def run_until_done(conn, pid, sql, name):
    """Run SQL (which creates continuous query NAME) and wait until sys.queries
    no longer says running.  Returns (wall seconds, the server's CPU seconds,
    (status, last_error, input_rows))."""
    cpu0, t0 = cpu_seconds(pid), time.monotonic()
    conn.execute(sql)
    while True:
        row = conn.execute("SELECT status, last_error, input_rows FROM sys.queries "
                           "WHERE name = %s", (name,)).fetchone()
        if row[0] != "running":
            break
        time.sleep(0.05)
    return time.monotonic() - t0, cpu_seconds(pid) - cpu0, row


class Server:
    def __init__(self, binary, *args):
        self.binary, self.args = binary, list(args)

    def __enter__(self):
        self.work = Path(tempfile.mkdtemp(prefix="sluice-bench-"))
        self.log_path = self.work / "sluiced.log"
        self.log = open(self.log_path, "wb")
        self.proc = subprocess.Popen(
            [self.binary, "--port", "0", "--data-dir", str(self.work / "data"), *self.args],
            stdout=self.log, stderr=subprocess.STDOUT)
        port = None
        for _ in range(300):
            m = re.search(r"ready.*-p (\d+)", self.log_path.read_text())
            if m:
                port = int(m.group(1))
                break
            time.sleep(0.05)
        if port is None:
            self._stop()
            sys.exit("no ready line from sluiced:\n" + self.log_path.read_text())
        self.dsn = f"host=127.0.0.1 port={port} user=sluice dbname=sluice"
        return self

    def _stop(self):
        """SIGTERM, 30 s to exit, then SIGKILL; what went wrong, or None."""
        self.proc.send_signal(signal.SIGTERM)
        try:
            code = self.proc.wait(30)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            self.proc.wait()
            code = "SIGKILL: not stopped within 30 s of SIGTERM"
        self.log.close()
        problems = [] if code == 0 else [f"exit code {code}"]
        if SANITIZER_RE.search(self.log_path.read_text(errors="replace")):
            problems.append("a sanitizer report")
        return "; ".join(problems) or None

    def __exit__(self, *exc):
        """Stop the server; one that exits other than 0 or logged a sanitizer
        report (an ASan build: test_nexmark_bench.py) ends the bench with exit
        status 1 and its log kept."""
        problem = self._stop()
        if problem:
            tail = "\n".join(self.log_path.read_text(errors="replace").splitlines()[-60:])
            sys.exit(f"sluiced: {problem} (log {self.log_path}):\n{tail}")
        shutil.rmtree(self.work, ignore_errors=True)
