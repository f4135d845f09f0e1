"""A driver logs in as a catalog role (CREATE ROLE ... PASSWORD: a SCRAM
verifier in the catalog, not a config-file user) under a scram-sha-256 hba
rule: what test_pgx_roles.py and test_jdbc_roles.py share.

    ROLE_CONFIG                      the rules: sluice trusted, everyone else SCRAM
    check_catalog_role(cmd, cwd, server, role, password, checks)
        makes the role (LOGIN, not a superuser), runs the driver program with
        one case for it over plain TCP, and asserts that the case passed its
        checks and that the wrong-password case was refused (28P01)
"""

import json
import os
import subprocess

import psycopg

from matrix import parse_lines

ROLE_CONFIG = ("hba = 'host all sluice 127.0.0.1/32 trust'\n"
               "hba = 'host all all 127.0.0.1/32 scram-sha-256'\n")


def check_catalog_role(cmd, cwd, server, role, password, checks):
    with psycopg.connect(server.dsn, autocommit=True) as c:
        c.execute(f"CREATE ROLE {role} LOGIN PASSWORD '{password}'")
    cases = [{"name": "catalog-scram", "user": role, "password": password,
              "tls": False, "host": "127.0.0.1", "port": server.port, "ca": ""}]
    res = subprocess.run(cmd, cwd=cwd, capture_output=True, text=True, timeout=240,
                         env=dict(os.environ, SLUICE_CASES=json.dumps(cases)),
                         stdin=subprocess.DEVNULL)
    results = parse_lines(res.stdout)
    assert "catalog-scram" in results, res.stdout[-4000:] + res.stderr[-4000:]
    assert results["catalog-scram"]["ok"], results["catalog-scram"].get("error")
    assert results["catalog-scram"]["checks"] == checks
    wrong = results["catalog-scram-wrong-password"]
    assert wrong["ok"], wrong.get("error")
    # The server ran SCRAM for this role (the refused attempt is logged).
    assert f'user="{role}" method=scram-sha-256' in server.log_text()
