"""Fixtures for the integration tests: a live sluiced per test, and psql.

    sluiced            a factory: sluiced(*args, config=TEXT, env=DICT) starts a
                       server on a free port with a fresh data directory (TEXT as
                       its --config file, DICT added to its environment, e.g.
                       SLUICE_FAULT) and returns a Sluiced; every server it
                       started is stopped when the test ends, and the test FAILS if
                       one exited non-zero or logged a sanitizer report
    sluiced_module     the same factory for a whole test module (the servers stop,
                       and are checked, when the module's last test ends)
    server             one server started by that factory
    psql(server, sql)  runs psql -c SQL against a server: (rc, stdout, stderr)
    sluiced_refuses(args)  runs sluiced with args that must stop its start:
                       returns the CompletedProcess; FAILS the test unless it
                       exited on its own with 1 or 2 (main's refusals) and
                       printed no sanitizer report
    tls_certs          a throwaway CA and a server certificate for 127.0.0.1 and
                       localhost (openssl CLI), made once per session
    auth_config(certs) config text with TLS on and one user per authentication
                       method (USERS), for the client tests

The binary is $SLUICE_BIN (tools/test sets it), else build-asan/src/sluiced when
it was built, else build/src/sluiced.

Parallel runs (pytest-xdist; docs/development.md, "How the suite runs in
parallel"): SERIAL names the test files and tests that must run alone -- they
get the marker `serial`, and tools/test runs them in a second pytest with no
workers after `-m "not serial"` ran on several -- and
pytest_xdist_make_scheduler hands each test file to one worker whole (its
module-scoped servers and Kafka broker start once, as in a serial run), the
files of SLOW_FIRST first.
"""

import hashlib
import os
import re
import signal
import subprocess
import time
from pathlib import Path
from types import SimpleNamespace

import pytest

REPO = Path(__file__).resolve().parent.parent
READY_RE = re.compile(r"ready.*psql -h (\S+) -p (\d+)")
SANITIZER_RE = re.compile(
    r"ERROR: AddressSanitizer|runtime error:|ERROR: LeakSanitizer")
READY_TIMEOUT = 30
STOP_TIMEOUT = 20

# Test files ("tests/x.py") and tests ("tests/x.py::name", every parameter)
# that must run alone (marker `serial`), with the reason: CPU-heavy work, memory
# or disk limits, and bounds on how long something takes, which other tests'
# servers on the same cores would make fail or hold no meaning.
SERIAL = {
    "tests/test_nexmark.py": "Nexmark queries: CPU-heavy",
    "tests/test_nexmark_bench.py": "a benchmark: rates measured",
    "tests/test_nexmark_state.py": "Nexmark q5 three times side by side: CPU-heavy",
    "tests/test_state_bound.py": "10 million events: CPU-heavy",
    # test_memory.py: those that measure the server's RSS or bound how long
    # SELECT 1 (or a refusal) takes; its others check the server's own
    # accounting (statement_mem, --max-memory) and run in parallel
    "tests/test_memory.py::test_huge_result_streams_and_pauses_for_a_slow_reader":
        "the server's RSS measured flat; the first rows within 5 s",
    "tests/test_memory.py::test_execute_row_limit_suspends_the_portal_without_computing_the_rest":
        "the server's RSS measured; the portal suspended within 5 s",
    "tests/test_memory.py::test_statement_mem_ends_the_statement_not_the_server":
        "SELECT 1 answered within 5 s beside the statement",
    "tests/test_memory.py::test_regex_too_complex_is_refused_before_compiling":
        "refused within 5 s",
    "tests/test_memory.py::test_copy_into_table_past_statement_mem_loads_in_bounded_memory":
        "SELECT 1 answered within 5 s after 32 MB loaded",
    "tests/test_memory.py::test_copy_into_stream_past_statement_mem_is_written_in_parts":
        "SELECT 1 answered within 5 s after the copy",
    "tests/test_memory.py::test_concurrent_copies_share_max_memory":
        "four concurrent COPYs; SELECT 1 answered within 5 s",
    "tests/test_memory.py::test_hang_ups_mid_result_and_mid_portal_free_everything":
        "SELECT 1 answered within 5 s after the hang-ups",
    "tests/test_memory_prlimit.py": "address-space limit; 100 clients within 60 s",
    "tests/test_worker_pools.py": "pool timing: statements overlapping or not",
    "tests/test_statement_interrupts.py": "bounds on how long a statement runs",
    "tests/test_regex_backrefs.py": "a match refused within 1 s",
    "tests/test_cq_consistency.py::test_state_ttl_is_judged_when_a_key_is_touched_again":
        "state_ttl against wall-clock sleeps",
    "tests/test_pgwire_limits.py::test_client_that_stops_reading_is_not_buffered_without_bound":
        "20 queries within 10 s beside a stalled client; the server's RSS",
    "tests/kafka/test_kafka_recovery.py::"
    "test_sink_commit_with_the_broker_away_is_retried_exactly_once":
        "a 3 s Kafka transaction timeout against a halted broker",
}

# The files that take longest (seconds per file in a parallel run's junit,
# longest first): the workers start them first, so that no long file starts
# last and runs alone at the end.  A file not listed only starts after these.
SLOW_FIRST = [
    "tests/test_crash_recovery.py", "tests/test_copy_table.py",
    "tests/test_result_files.py", "tests/kafka/test_kafka_sink.py",
    "tests/kafka/test_kafka_roles.py", "tests/test_tools_run.py",
    "tests/kafka/test_kafka_recovery.py", "tests/kafka/test_nexmark_peers.py",
    "tests/kafka/test_kafka_source.py", "tests/kafka/test_kafka_fetch.py",
    "tests/test_join_probe.py", "tests/kafka/test_kafka_prefetch.py",
    "tests/clients/test_jdbc.py", "tests/test_nexmark_columns.py",
    "tests/test_batch_memory.py", "tests/test_continuous_windows.py",
    "tests/test_cq_consistency.py", "tests/test_layers.py",
    "tests/test_corruption.py", "tests/test_ownership.py",
    "tests/kafka/test_kafka_roundtrip.py", "tests/test_copy_crash.py",
    "tests/test_fault_fail.py", "tests/kafka/test_kafka_fetch_fail.py",
    "tests/test_disk_full.py", "tests/test_memory.py",
]


def sluiced_binary():
    """The server binary to test, as an absolute path."""
    if os.environ.get("SLUICE_BIN"):
        return str(Path(os.environ["SLUICE_BIN"]).resolve())
    for build in ("build-asan", "build"):
        path = REPO / build / "src" / "sluiced"
        if path.exists():
            return str(path)
    pytest.fail("no sluiced binary: build one (./tools/test) or set SLUICE_BIN")


def log_tail(path, lines=60):
    """The last lines of a log file, for a failure message."""
    try:
        text = Path(path).read_text(errors="replace")
    except OSError:
        return "(no log)"
    return "\n".join(text.splitlines()[-lines:])


class Sluiced:
    """One sluiced process, its data directory and its log.

    .host, .port, .dsn (a libpq connection string), .log_path, .data_dir, .proc,
    .env (variables added to the environment of the next start; change it
    between runs). All runs of one Sluiced (restart()) append to the same log
    file and use the same data directory and, after the first, the same port.
    """

    def __init__(self, binary, workdir, extra_args=(), config=None, env=None):
        self.binary = binary
        self.workdir = Path(workdir)
        self.data_dir = self.workdir / "data"
        self.log_path = self.workdir / "sluiced.log"
        self.extra_args = list(extra_args)
        if config is not None:
            self.workdir.mkdir(parents=True, exist_ok=True)
            self.config_path = self.workdir / "sluiced.conf"
            self.config_path.write_text(config)
            self.extra_args += ["--config", str(self.config_path)]
        self.host = "127.0.0.1"
        self.port = 0
        self.proc = None
        self.env = dict(env or {})
        self.problems = []    # exit codes and reports that fail the test

    @property
    def dsn(self):
        return f"host={self.host} port={self.port} user=sluice dbname=sluice"

    def log_text(self):
        try:
            return self.log_path.read_text(errors="replace")
        except OSError:
            return ""

    def start(self):
        """Start the server and wait for its ready line; returns self."""
        assert self.proc is None, "server already running"
        self.data_dir.mkdir(parents=True, exist_ok=True)
        args = [self.binary, "--listen", self.host, "--port", str(self.port),
                "--data-dir", str(self.data_dir), *self.extra_args]
        with open(self.log_path, "ab") as log:
            log.write(f"### started: {' '.join(args)}\n".encode())
            log.flush()
            offset = log.tell()
            self.proc = subprocess.Popen(args, stdin=subprocess.DEVNULL,
                                         stdout=log, stderr=subprocess.STDOUT,
                                         env=dict(os.environ, **self.env))
        deadline = time.monotonic() + READY_TIMEOUT
        while time.monotonic() < deadline:
            with open(self.log_path, "rb") as log:
                log.seek(offset)
                text = log.read().decode(errors="replace")
            match = READY_RE.search(text)
            if match:
                self.port = int(match.group(2))
                return self
            if self.proc.poll() is not None:
                code = self.proc.returncode
                self.proc = None
                pytest.fail(f"sluiced exited with code {code} before it was ready;"
                            f" log:\n{log_tail(self.log_path)}")
            time.sleep(0.05)
        self.kill()
        pytest.fail(f"sluiced not ready within {READY_TIMEOUT} s; log:\n"
                    f"{log_tail(self.log_path)}")

    def alive(self):
        return self.proc is not None and self.proc.poll() is None

    def stop(self):
        """SIGTERM, STOP_TIMEOUT s to exit, then SIGKILL; returns the exit code.

        A code other than 0 fails the test at teardown, as does a server that had
        already exited on its own with a code other than 0.
        """
        if self.proc is None:
            return None
        proc, self.proc = self.proc, None
        if proc.poll() is None:
            proc.send_signal(signal.SIGTERM)
            try:
                proc.wait(STOP_TIMEOUT)
            except subprocess.TimeoutExpired:
                self.problems.append(
                    f"did not exit within {STOP_TIMEOUT} s of SIGTERM: SIGKILL")
                proc.kill()
                proc.wait()
        code = proc.returncode
        if code != 0:
            self.problems.append(f"exited with code {code}")
        return code

    def kill(self):
        """SIGKILL, as a crash would; returns the exit code (-9)."""
        if self.proc is None:
            return None
        proc, self.proc = self.proc, None
        if proc.poll() is None:
            proc.kill()
        return proc.wait()

    def wait_exit(self, timeout):
        """Wait up to timeout s for a server that is expected to die on its own
        (a fault point); returns its exit code, or None if it is still running.
        The exit is not counted as a problem."""
        if self.proc is None:
            return None
        try:
            code = self.proc.wait(timeout)
        except subprocess.TimeoutExpired:
            return None
        self.proc = None
        return code

    def restart(self):
        """Stop (if running) and start again on the same data directory and port."""
        self.stop()
        return self.start()

    def psql(self, sql, *args, timeout=60):
        return run_psql(self, sql, *args, timeout=timeout)

    def check(self):
        """Stop the server and return what should fail the test, as text or None."""
        self.stop()
        problems = list(self.problems)
        try:
            if SANITIZER_RE.search(self.log_path.read_text(errors="replace")):
                problems.append("sanitizer report in the log")
        except OSError:
            pass
        if not problems:
            return None
        return (f"sluiced ({self.log_path}): {'; '.join(problems)}\n"
                f"--- log tail ---\n{log_tail(self.log_path)}")


def run_psql(server, sql, *args, timeout=60):
    """Run psql -c SQL against server; returns (rc, stdout, stderr).

    ON_ERROR_STOP is set and ~/.psqlrc ignored; extra args go before -c (e.g.
    "-At", or "-v", "VERBOSITY=verbose"). Messages are in English (LC_ALL=C).
    """
    env = dict(os.environ, LC_ALL="C", LANG="C", PGCONNECT_TIMEOUT="10")
    env.pop("PGPASSWORD", None)
    cmd = ["psql", server.dsn, "-X", "-w", "-v", "ON_ERROR_STOP=1", *args,
           "-c", sql]
    res = subprocess.run(cmd, capture_output=True, text=True, env=env,
                         timeout=timeout, stdin=subprocess.DEVNULL)
    return res.returncode, res.stdout, res.stderr


# The exit codes of a start that sluiced refuses: 2 for a bad option or config
# file (parse_args), 1 for a start that fails (main).  ASan and UBSan exit 1
# too, LeakSanitizer 23: their reports are looked for in the output.
REFUSED_EXIT_CODES = (1, 2)


def sluiced_refuses(args, env=None, timeout=30):
    """Run sluiced with ARGS (argv without the binary), a start it must refuse,
    and return the CompletedProcess (text stdout and stderr).  The test fails
    when the server does not exit within TIMEOUT seconds, exits by a signal or
    with a code other than REFUSED_EXIT_CODES, or logs a sanitizer report."""
    args = [sluiced_binary(), *args]
    proc = subprocess.Popen(args, stdin=subprocess.DEVNULL, stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, text=True,
                            env=dict(os.environ, **(env or {})))
    try:
        out, err = proc.communicate(timeout=timeout)
    except subprocess.TimeoutExpired:
        proc.kill()
        out, err = proc.communicate()
        pytest.fail(f"sluiced did not stop its start within {timeout} s:\n{out}{err}"[-4000:])
    text = out + err
    if SANITIZER_RE.search(text):
        pytest.fail(f"sanitizer report from sluiced:\n{text[-4000:]}", pytrace=False)
    if proc.returncode not in REFUSED_EXIT_CODES:
        pytest.fail(f"sluiced exited with {proc.returncode}, not one of "
                    f"{REFUSED_EXIT_CODES}:\n{text[-4000:]}", pytrace=False)
    return subprocess.CompletedProcess(args, proc.returncode, out, err)


def crash_at_fault_point(server, point, hit, resume, timeout):
    """Starts the stopped SERVER with SLUICE_FAULT=POINT:HIT, calls RESUME(server)
    (the queries' work begins), checks that it dies there by SIGKILL within
    TIMEOUT seconds, then starts it again without the fault and calls RESUME
    once more (a query the crash left paused)."""
    server.env["SLUICE_FAULT"] = f"{point}:{hit}"
    server.start()
    resume(server)
    code = server.wait_exit(timeout)
    assert code == -signal.SIGKILL, f"the server did not die at {point} (exit {code})"
    assert f"fault point {point} reached" in server.log_text()
    del server.env["SLUICE_FAULT"]
    server.start()
    resume(server)


def kill_at_random(server, runs, rng, resume):
    """RUNS times: starts the stopped SERVER, RESUME(server), kills it with
    SIGKILL after a random moment (up to 0.6 s, from RNG); then starts it for
    good and calls RESUME once more."""
    for _ in range(runs):
        server.start()
        resume(server)
        time.sleep(rng.uniform(0.0, 0.6))
        assert server.kill() == -signal.SIGKILL
    server.start()
    resume(server)


def _server_factory(workdir):
    """A factory of servers under workdir, and the list of those it started."""
    binary = sluiced_binary()
    servers = []

    def start(*extra_args, config=None, env=None):
        server = Sluiced(binary, workdir / f"sluiced{len(servers)}", extra_args,
                         config=config, env=env)
        servers.append(server)
        return server.start()

    return start, servers


def _check_servers(servers):
    failures = [p for p in (s.check() for s in servers) if p]
    if failures:
        pytest.fail("\n\n".join(failures), pytrace=False)


@pytest.fixture
def sluiced(tmp_path):
    """A factory of servers: sluiced(*extra_args, config=None, env=None) -> a
    started Sluiced."""
    start, servers = _server_factory(tmp_path)
    try:
        yield start
    finally:
        for server in servers:
            if server.alive():
                server.stop()
    _check_servers(servers)


@pytest.fixture(scope="module")
def sluiced_module(tmp_path_factory):
    """sluiced for a whole module: servers stop after its last test."""
    start, servers = _server_factory(tmp_path_factory.mktemp("sluiced-module"))
    try:
        yield start
    finally:
        for server in servers:
            if server.alive():
                server.stop()
    _check_servers(servers)


def _openssl(*args, cwd):
    subprocess.run(["openssl", *args], cwd=cwd, check=True, capture_output=True,
                   timeout=60)


def make_ca(directory, name):
    """A self-signed CA: (cert path, key path)."""
    directory.mkdir(parents=True, exist_ok=True)
    _openssl("req", "-x509", "-newkey", "rsa:2048", "-nodes", "-days", "2",
             "-subj", f"/CN={name}", "-keyout", "ca.key", "-out", "ca.crt",
             cwd=directory)
    return directory / "ca.crt", directory / "ca.key"


@pytest.fixture(scope="session")
def tls_certs(tmp_path_factory):
    """A CA and a server certificate it signed, for CN/SAN 127.0.0.1 and
    localhost; also an unrelated CA (other_ca) that a client must not accept
    the server's certificate with.  Attributes: ca, cert, key, other_ca, dir."""
    d = tmp_path_factory.mktemp("tls")
    ca, ca_key = make_ca(d, "sluice test CA")
    other_ca, _ = make_ca(d / "other", "some other CA")
    (d / "ext.cnf").write_text(
        "subjectAltName=IP:127.0.0.1,DNS:localhost\n"
        "basicConstraints=CA:FALSE\n"
        "keyUsage=digitalSignature,keyEncipherment\n"
        "extendedKeyUsage=serverAuth\n")
    _openssl("req", "-newkey", "rsa:2048", "-nodes", "-subj", "/CN=127.0.0.1",
             "-keyout", "server.key", "-out", "server.csr", cwd=d)
    _openssl("x509", "-req", "-in", "server.csr", "-CA", str(ca), "-CAkey",
             str(ca_key), "-CAcreateserial", "-days", "2", "-extfile", "ext.cnf",
             "-out", "server.crt", cwd=d)
    os.chmod(d / "server.key", 0o600)
    return SimpleNamespace(dir=d, ca=ca, cert=d / "server.crt", key=d / "server.key",
                           other_ca=other_ca)


# One user per authentication method, for the client tests: name -> (method,
# password, the secret stored in the config file).
def _scram_verifier(password, salt, iterations=4096):
    import base64
    import hmac
    salted = hashlib.pbkdf2_hmac("sha256", password.encode(), salt, iterations)
    client_key = hmac.new(salted, b"Client Key", "sha256").digest()
    server_key = hmac.new(salted, b"Server Key", "sha256").digest()
    b64 = lambda b: base64.b64encode(b).decode()  # noqa: E731
    return (f"SCRAM-SHA-256${iterations}:{b64(salt)}$"
            f"{b64(hashlib.sha256(client_key).digest())}:{b64(server_key)}")


USERS = {
    "trust_u": ("trust", "", None),
    "pw_u": ("password", "pw-secret", "pw-secret"),
    "md5_u": ("md5", "md5-secret",
              "md5" + hashlib.md5(b"md5-secret" + b"md5_u").hexdigest()),
    "scram_u": ("scram-sha-256", "scram-secret",
                _scram_verifier("scram-secret", b"sluice-test-salt")),
}


def auth_config(certs, extra=""):
    """Config text: TLS on with certs, USERS with their secrets, one hba rule
    per user and method (loopback only), and extra lines."""
    lines = ["ssl = on", f"ssl_cert_file = '{certs.cert}'",
             f"ssl_key_file = '{certs.key}'"]
    for user, (method, _, secret) in USERS.items():
        if secret is not None:
            lines.append(f"user.{user}.password = '{secret}'")
        lines.append(f"hba = 'host all {user} 127.0.0.1/32 {method}'")
    return "\n".join(lines) + "\n" + extra


@pytest.fixture
def server(sluiced):
    """One running sluiced."""
    return sluiced()


@pytest.fixture
def psql():
    """run_psql as a fixture: psql(server, sql, *args) -> (rc, stdout, stderr)."""
    return run_psql


def _repo_path(item):
    """The item's file as "tests/..."."""
    return Path(str(item.fspath)).resolve().relative_to(REPO).as_posix()


def pytest_collection_modifyitems(config, items):
    """Mark the tests SERIAL names `serial`; on an xdist worker, put the files
    of SLOW_FIRST first (the order the scheduler hands files out in)."""
    for item in items:
        path = _repo_path(item)
        reason = SERIAL.get(path) or SERIAL.get(f"{path}::{item.originalname}")
        if reason:
            item.add_marker(pytest.mark.serial(reason=reason))
    if hasattr(config, "workerinput"):
        rank = {path: i for i, path in enumerate(SLOW_FIRST)}
        items.sort(key=lambda item: rank.get(_repo_path(item), len(rank)))


@pytest.hookimpl(optionalhook=True)
def pytest_xdist_make_scheduler(config, log):
    """A test file to one worker whole, in the workers' collection order."""
    from xdist.scheduler import LoadScopeScheduling

    class FileScheduling(LoadScopeScheduling):
        def _split_scope(self, nodeid):
            return nodeid.split("::", 1)[0]

    config.option.loadscopereorder = False
    return FileScheduling(config, log)
