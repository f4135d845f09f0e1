"""What the driver tests under tests/clients/ share (imported by each).

    client_server   a fixture: one sluiced for the whole module, with TLS on and one user
                    per authentication method (conftest.USERS, auth_config)
    CASES           every (user, transport) pair the drivers connect with: the
                    four methods (trust, password, md5, scram-sha-256), each
                    over plain TCP (sslmode=disable) and over TLS checked
                    against the test CA (verify-full)
    case_json()     the cases as JSON, as the driver programs read them

Each driver program (node, go, java) gets the cases in the environment
(SLUICE_CASES) and prints one JSON line per case: {"case": ..., "ok": bool,
"checks": [...], "error": ...}; the pytest file asserts each case's line.
"""

import json

import pytest

from conftest import USERS, auth_config

CASES = [(user, transport) for user in USERS for transport in ("plain", "tls")]
CASE_IDS = [f"{USERS[u][0]}-{t}" for u, t in CASES]


@pytest.fixture(scope="module")
def client_server(sluiced_module, tls_certs):
    server = sluiced_module(config=auth_config(tls_certs))
    server.certs = tls_certs
    return server


def case_json(server, certs):
    return json.dumps([
        {"name": f"{USERS[u][0]}-{t}", "user": u, "password": USERS[u][1],
         "tls": t == "tls", "host": "127.0.0.1", "port": server.port,
         "ca": str(certs.ca)}
        for u, t in CASES])


def parse_lines(stdout):
    """The JSON lines of a driver program's output, by case name."""
    out = {}
    for line in stdout.splitlines():
        line = line.strip()
        if line.startswith("{"):
            obj = json.loads(line)
            out[obj["case"]] = obj
    return out
