"""node-postgres (npm pg, pinned in tests/clients/node/package-lock.json)
against sluiced: every authentication method over plain TCP and TLS
(verify-full), parameters in text, results in text and binary, a named
prepared statement, typed errors, and a refused wrong password.

The module comes from `npm ci` (tools/deps.sh deps_clients, or this file
when node_modules is missing); without node the tests skip.
"""

import shutil
import subprocess
from pathlib import Path

import pytest

from drivers import assert_case, run_driver
from matrix import CASE_IDS, CASES, client_server  # noqa: F401 (fixture)
from conftest import USERS

NODE_DIR = Path(__file__).parent / "node"


@pytest.fixture(scope="module")
def node_results(client_server):
    if shutil.which("node") is None:
        pytest.skip("node is not installed")
    # every module of package.json: a checkout from before one was added
    # has node_modules without it
    if not all((NODE_DIR / "node_modules" / m).is_dir() for m in ("pg", "pg-copy-streams")):
        res = subprocess.run(["npm", "ci", "--no-audit", "--no-fund", "--loglevel=error"],
                             cwd=NODE_DIR, capture_output=True, text=True, timeout=600,
                             stdin=subprocess.DEVNULL)
        if res.returncode != 0:
            pytest.fail(f"npm ci failed:\n{res.stdout}\n{res.stderr}")
    return run_driver(["node", "client.js"], client_server, NODE_DIR)


@pytest.mark.parametrize("user,transport", CASES, ids=CASE_IDS)
def test_node_pg(node_results, user, transport):
    assert_case(node_results, f"{USERS[user][0]}-{transport}",
                ["connect", "simple", "params", "prepared", "errors"])


@pytest.mark.parametrize("user", [u for u in USERS if USERS[u][0] != "trust"])
def test_node_pg_wrong_password(node_results, user):
    assert_case(node_results, f"{USERS[user][0]}-plain-wrong-password", ["refused"])


def test_node_pg_copy_streams_and_cancel(node_results):
    """pg-copy-streams COPY FROM STDIN / TO STDOUT, and client.cancel() of a
    running pg_sleep (57014) (trust, plain TCP)."""
    assert_case(node_results, "trust-plain-copy-cancel", ["copy", "cancel"])
