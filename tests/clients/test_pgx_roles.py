"""pgx logs in as a role made with CREATE ROLE ... PASSWORD (a SCRAM verifier
in the catalog, not a config-file user) under a scram-sha-256 hba rule, and
runs the same checks as test_pgx.py in its three exec modes; a wrong password
is refused with 28P01.  The role is not a superuser: the checks need no
privilege on any relation.
"""

import json
import os
import shutil
import subprocess

import psycopg
import pytest

from matrix import parse_lines
from test_pgx import BINARY, GO_DIR, build

CONFIG = ("hba = 'host all sluice 127.0.0.1/32 trust'\n"
          "hba = 'host all all 127.0.0.1/32 scram-sha-256'\n")


@pytest.mark.timeout(900)
def test_pgx_logs_in_as_a_catalog_role_with_scram(sluiced):
    if shutil.which("go") is None:
        pytest.skip("go is not installed")
    build()
    server = sluiced(config=CONFIG)
    with psycopg.connect(server.dsn, autocommit=True) as c:
        c.execute("CREATE ROLE pgx_role LOGIN PASSWORD 'pgx-role-pw'")
    cases = [{"name": "catalog-scram", "user": "pgx_role", "password": "pgx-role-pw",
              "tls": False, "host": "127.0.0.1", "port": server.port, "ca": ""}]
    env = dict(os.environ, SLUICE_CASES=json.dumps(cases))
    res = subprocess.run([str(BINARY), "-test.run", "TestCases", "-test.v"], cwd=GO_DIR,
                         capture_output=True, text=True, timeout=240, env=env,
                         stdin=subprocess.DEVNULL)
    results = parse_lines(res.stdout)
    assert "catalog-scram" in results, res.stdout[-4000:] + res.stderr[-4000:]
    assert results["catalog-scram"]["ok"], results["catalog-scram"].get("error")
    assert results["catalog-scram"]["checks"] == ["cache_statement", "exec", "simple_protocol"]
    assert results["catalog-scram-wrong-password"]["ok"], \
        results["catalog-scram-wrong-password"].get("error")
    # The server saw SCRAM for this role (its log names the method on failure).
    assert 'user="pgx_role" method=scram-sha-256' in server.log_text()
