"""Issue 19, item 10's acceptance test: the server under `prlimit --as=2G`
survives each statement of the item, and 100 concurrent clients each
running one of them, while another client's SELECT 1 is answered
throughout.

The statements (all as the plain role u):
  series   SELECT * FROM generate_series(1, 1000000000): the client reads
           the first rows and hangs up (the result streams, so the server
           holds only what the socket holds)
  regex    SELECT 'x' ~ '((((((((((x{255}){255}){255}){255})))))))': 2201B
  cross    a cross join of 2,000 one-row VALUES: 53200
  copy     COPY FROM STDIN of 48 MiB into a stream (1 GiB alone, and four
           of 200 MiB at once under statement_mem = 64MB): done, since a
           COPY into a stream writes its rows in parts as they come

An AddressSanitizer binary cannot run under an address-space limit (its
shadow memory reserves terabytes), so this test runs a build without
sanitizers: $SLUICE_PLAIN_BIN, which tools/test builds (build-plain); under
plain pytest without it the test builds build-plain itself, and fails if it
cannot.  The server's --max-memory is left at its default, half the
address-space limit.
"""

import os
import socket
import subprocess
import threading
import time
from pathlib import Path

import psycopg
import pytest

from conftest import REPO, Sluiced
from pgwire_raw import Raw, query

LIMIT_BYTES = 2 << 30
CROSS_JOIN = "SELECT count(*) FROM " + ", ".join(
    f"(VALUES (1)) v{i}(x{i})" for i in range(2000))
REGEX = "SELECT 'x' ~ '((((((((((x{255}){255}){255}){255})))))))'"
SERIES = "SELECT * FROM generate_series(1, 1000000000)"
COPY_LINE = b"1,abcdefghijklmnopqrstuvwxyz0123456789\n"


def plain_binary():
    """The sluiced without sanitizers: $SLUICE_PLAIN_BIN, else build-plain."""
    if os.environ.get("SLUICE_PLAIN_BIN"):
        path = Path(os.environ["SLUICE_PLAIN_BIN"]).resolve()
        assert path.exists(), f"SLUICE_PLAIN_BIN={path} does not exist"
        return str(path)
    build = REPO / "build-plain"
    if not (build / "build.ninja").exists():
        subprocess.run(["meson", "setup", str(build), "--buildtype=debugoptimized"],
                       cwd=REPO, check=True, capture_output=True)
    done = subprocess.run(["meson", "compile", "-C", str(build), "sluiced"], cwd=REPO,
                          capture_output=True, text=True)
    assert done.returncode == 0, f"could not build build-plain:\n{done.stdout[-3000:]}"
    return str(build / "src" / "sluiced")


@pytest.fixture
def limited_server(tmp_path):
    """sluiced under prlimit --as=2G, stopped (and checked) at the end."""
    wrapper = tmp_path / "sluiced-prlimit"
    wrapper.write_text(f'#!/bin/sh\nexec prlimit --as={LIMIT_BYTES} -- '
                       f'"{plain_binary()}" "$@"\n')
    wrapper.chmod(0o755)
    server = Sluiced(str(wrapper), tmp_path / "server")
    try:
        server.start()
        with psycopg.connect(server.dsn, autocommit=True) as conn:
            conn.execute("CREATE ROLE u LOGIN PASSWORD 'pw-u'")
            conn.execute("CREATE STREAM t (a bigint, b text)")
            conn.execute("GRANT SELECT, INSERT ON t TO u")
        yield server
    finally:
        alive = server.alive()
        problem = server.check()     # SIGTERM: it must exit 0
        log = server.log_text()
    assert alive, f"the server died under prlimit:\n{log[-3000:]}"
    assert problem is None, problem
    assert "PANIC" not in log, log[-3000:]


def connect_u(server):
    return psycopg.connect(f"host={server.host} port={server.port} user=u dbname=sluice "
                           "password=pw-u", autocommit=True, connect_timeout=30)


def run_series(server):
    raw = Raw(server.port, timeout=30)
    try:
        raw.startup(user="u", password="pw-u")
        raw.send(query(SERIES))
        rows = 0
        while rows < 100:
            kind, _ = raw.recv_msg()
            rows += kind == b"D"
        return "rows"
    finally:
        raw.close()     # hang up mid-result


def run_sql(server, sql):
    with connect_u(server) as conn:
        try:
            conn.execute(sql).fetchall()
            return "ok"
        except psycopg.Error as e:
            return e.sqlstate


def run_copy(server, total=48 << 20, statement_mem=None):
    piece = COPY_LINE * ((1 << 20) // len(COPY_LINE))
    with connect_u(server) as conn:
        try:
            if statement_mem is not None:
                conn.execute(f"SET statement_mem = '{statement_mem}'")
            with conn.cursor() as cur:
                with cur.copy("COPY t FROM STDIN (FORMAT csv)") as copy:
                    for _ in range(total // len(piece)):
                        copy.write(piece)
            return "ok"
        except psycopg.Error as e:
            return e.sqlstate


KINDS = {
    "series": (run_series, {"rows"}),
    "regex": (lambda s: run_sql(s, REGEX), {"2201B"}),
    "cross": (lambda s: run_sql(s, CROSS_JOIN), {"53200"}),
    "copy": (run_copy, {"ok"}),
}


class Prober:
    """Runs SELECT 1 on its own connection every 0.1 s; keeps the slowest."""

    def __init__(self, server):
        self.conn = psycopg.connect(server.dsn, autocommit=True)
        self.worst = 0.0
        self.failures = []
        self.stop = threading.Event()
        self.thread = threading.Thread(target=self.run, daemon=True)
        self.thread.start()

    def run(self):
        while not self.stop.is_set():
            started = time.monotonic()
            try:
                assert self.conn.execute("SELECT 1").fetchone() == (1,)
            except Exception as e:      # noqa: BLE001 -- reported by the test
                self.failures.append(repr(e))
                return
            self.worst = max(self.worst, time.monotonic() - started)
            time.sleep(0.1)

    def close(self):
        self.stop.set()
        self.thread.join(30)
        self.conn.close()


@pytest.mark.timeout(240)
def test_each_statement_alone_under_2g(limited_server):
    server = limited_server
    for name, (fn, expected) in KINDS.items():
        assert fn(server) in expected, name
    assert run_copy(server, total=1 << 30) == "ok"
    with psycopg.connect(server.dsn, autocommit=True) as conn:
        assert conn.execute("SELECT 1").fetchone() == (1,)


def copy_rows(total):
    piece_rows = (1 << 20) // len(COPY_LINE)
    return (total // (piece_rows * len(COPY_LINE))) * piece_rows


@pytest.mark.timeout(300)
def test_four_concurrent_copies_past_statement_mem_under_2g(limited_server):
    """Four 200 MiB COPYs at once, each past its statement_mem of 64MB, all
    load whole while SELECT 1 is answered (on the old code each held its
    rows to the end and ended with 53200)."""
    server = limited_server
    with psycopg.connect(server.dsn, autocommit=True) as conn:
        before = conn.execute("SELECT count(*) FROM t").fetchone()[0]
    prober = Prober(server)
    results = []
    threads = [threading.Thread(target=lambda: results.append(
        run_copy(server, total=200 << 20, statement_mem="64MB")), daemon=True)
        for _ in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(240)
    prober.close()
    assert results == ["ok"] * 4, results
    assert not prober.failures, prober.failures
    assert prober.worst < 15, f"SELECT 1 waited {prober.worst:.1f} s"
    with psycopg.connect(server.dsn, autocommit=True) as conn:
        assert conn.execute("SELECT count(*) FROM t").fetchone() == (
            before + 4 * copy_rows(200 << 20),)


@pytest.mark.timeout(240)
def test_100_concurrent_clients_under_2g(limited_server):
    server = limited_server
    prober = Prober(server)
    results = {}
    lock = threading.Lock()

    def client(i):
        name = list(KINDS)[i % len(KINDS)]
        fn, _ = KINDS[name]
        try:
            got = fn(server)
        except Exception as e:          # noqa: BLE001 -- reported below
            got = repr(e)
        with lock:
            results[i] = (name, got)

    started = time.monotonic()
    threads = [threading.Thread(target=client, args=(i,), daemon=True) for i in range(100)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(180)
    elapsed = time.monotonic() - started
    prober.close()
    assert len(results) == 100, f"{100 - len(results)} clients did not finish"
    wrong = {i: r for i, r in results.items() if r[1] not in KINDS[r[0]][1]}
    assert not wrong, wrong
    assert not prober.failures, prober.failures
    assert prober.worst < 15, f"SELECT 1 waited {prober.worst:.1f} s"
    assert elapsed < 60, f"the 100 clients took {elapsed:.0f} s"
    with psycopg.connect(server.dsn, autocommit=True) as conn:
        assert conn.execute("SELECT 1").fetchone() == (1,)
