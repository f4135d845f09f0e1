"""pgx v5 (Go, pinned in tests/clients/go/go.mod) against sluiced: every
authentication method over plain TCP and TLS (verify-full), in three exec
modes (cached prepared statements with binary formats, unnamed statements,
the simple protocol), typed parameters and results, a batch pipeline,
transactions with 25P02, typed errors, and a refused wrong password.

The test binary is built with `go test -c` once and rebuilt only when a Go
file, go.mod or go.sum is newer than it (the first build takes about a
minute; tools/deps.sh deps_clients downloads the modules beforehand).
"""

import shutil
from pathlib import Path

import pytest

from drivers import assert_case, build_stale, run_driver
from matrix import CASE_IDS, CASES, client_server  # noqa: F401 (fixture)
from conftest import USERS

GO_DIR = Path(__file__).parent / "go"
BINARY = GO_DIR / "pgxtest"


def build():
    sources = list(GO_DIR.glob("*.go")) + [GO_DIR / "go.mod", GO_DIR / "go.sum"]
    build_stale(BINARY, sources, ["go", "test", "-c", "-o", BINARY.name, "."], GO_DIR,
                timeout=600)


@pytest.fixture(scope="module")
def pgx_results(client_server):
    if shutil.which("go") is None:
        pytest.skip("go is not installed")
    build()
    return run_driver([str(BINARY), "-test.run", "TestCases", "-test.v"],
                      client_server, GO_DIR)


@pytest.mark.timeout(900)
@pytest.mark.parametrize("user,transport", CASES, ids=CASE_IDS)
def test_pgx(pgx_results, user, transport):
    assert_case(pgx_results, f"{USERS[user][0]}-{transport}",
                ["cache_statement", "exec", "simple_protocol"])


@pytest.mark.parametrize("user", [u for u in USERS if USERS[u][0] != "trust"])
def test_pgx_wrong_password(pgx_results, user):
    assert_case(pgx_results, f"{USERS[user][0]}-plain-wrong-password", ["refused"])


def test_pgx_cancel(pgx_results):
    """PgConn.CancelRequest while Exec runs: 57014, the connection goes on;
    a context that times out interrupts the statement (trust, plain TCP)."""
    assert_case(pgx_results, "trust-plain-cancel", ["cancel"])


def test_pgx_copy(pgx_results):
    """COPY FROM STDIN and TO STDOUT through the driver's copy API (trust, plain TCP)."""
    assert_case(pgx_results, "trust-plain-copy", ["copy"])
