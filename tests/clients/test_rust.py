"""tokio-postgres (Rust, pinned in tests/clients/rust/Cargo.lock) against
sluiced: typed parameters in binary and in text format, binary results, the
simple query protocol, a prepared statement reused, a table written and read
back with parameters, NULLs and arrays both ways, transactions committed and
rolled back, and typed errors (SQLSTATEs) after which the connection goes
on.  The cases and what they expect are in tests/clients/rust/src/main.rs;
each prints "ok NAME" or "FAIL NAME: why".

The binary is built with `cargo build --offline --locked` (tools/deps.sh
deps_clients fetches the crates beforehand) and rebuilt only when a source,
Cargo.toml or Cargo.lock is newer than it.
"""

import os
import shutil
import subprocess
from pathlib import Path

import pytest

from drivers import build_stale

RUST_DIR = Path(__file__).parent / "rust"
BINARY = RUST_DIR / "target" / "debug" / "sluice-rust-client-test"
CASES = ["binary_params", "text_params", "simple_query", "prepared_reuse", "table_roundtrip",
         "nulls_arrays", "transaction", "typed_error"]


def build():
    sources = list((RUST_DIR / "src").glob("*.rs")) + [RUST_DIR / "Cargo.toml",
                                                        RUST_DIR / "Cargo.lock"]
    build_stale(BINARY, sources, ["cargo", "build", "--offline", "--locked", "-j2"], RUST_DIR)


@pytest.fixture(scope="module")
def rust_results(sluiced_module):
    if shutil.which("cargo") is None:
        pytest.skip("cargo is not installed")
    build()
    server = sluiced_module()
    res = subprocess.run([str(BINARY)], capture_output=True, text=True, timeout=240,
                         env=dict(os.environ, SLUICE_PORT=str(server.port)),
                         stdin=subprocess.DEVNULL)
    results = {}
    for line in res.stdout.splitlines():
        status, _, rest = line.partition(" ")
        name, _, why = rest.partition(": ")
        results[name] = (status, why)
    if not results:
        pytest.fail(f"the Rust driver printed nothing (exit {res.returncode})\n"
                    f"{res.stdout[-4000:]}\n{res.stderr[-4000:]}")
    return results


@pytest.mark.parametrize("case", CASES)
def test_tokio_postgres(rust_results, case):
    assert case in rust_results, f"no result for {case}: {sorted(rust_results)}"
    status, why = rust_results[case]
    assert status == "ok", why
