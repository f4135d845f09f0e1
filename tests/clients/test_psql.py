"""psql against sluiced: every authentication method over plain TCP and over
TLS (verify-full against the test CA), queries, and errors with SQLSTATEs.

psql 15 has no way to send parameters (\\bind came with 16), so it runs the
simple protocol only; the typed values are literals.
"""

import os
import subprocess

import pytest

from matrix import CASE_IDS, CASES, client_server  # noqa: F401 (fixture)
from conftest import USERS


def psql(server, user, transport, *args, password=None):
    env = dict(os.environ, LC_ALL="C", PGCONNECT_TIMEOUT="10")
    env.pop("PGPASSWORD", None)
    pw = USERS[user][1] if password is None else password
    if pw:
        env["PGPASSWORD"] = pw
    dsn = f"host=127.0.0.1 port={server.port} user={user} dbname=sluice"
    if transport == "tls":
        dsn += f" sslmode=verify-full sslrootcert={server.certs.ca}"
    else:
        dsn += " sslmode=disable"
    res = subprocess.run(["psql", dsn, "-X", "-w", "-At", "-v", "VERBOSITY=verbose",
                          *args], capture_output=True, text=True, env=env,
                         timeout=60, stdin=subprocess.DEVNULL)
    return res.returncode, res.stdout, res.stderr


@pytest.mark.parametrize("user,transport", CASES, ids=CASE_IDS)
def test_psql(client_server, user, transport):
    rc, out, err = psql(client_server, user, transport,
                        "-c", "SELECT 1",
                        "-c", "SELECT 1::int2, 2::int4, 3::int8, 1.5::float4, "
                              "2.5::float8, true, 'txt'::text, 12.50::numeric(6,2)",
                        "-F", ",")
    assert rc == 0, err
    assert out.splitlines() == ["1", "1,2,3,1.5,2.5,t,txt,12.50"]

    rc, out, err = psql(client_server, user, transport, "-c", "SELECT 1/0")
    assert rc != 0
    assert "ERROR:  22012: division by zero" in err, err
    rc, out, err = psql(client_server, user, transport, "-c", "SELEC 1")
    assert rc != 0
    assert 'ERROR:  42601: syntax error at or near "SELEC"' in err, err


@pytest.mark.parametrize("user", [u for u in USERS if USERS[u][0] != "trust"])
def test_psql_wrong_password(client_server, user):
    rc, out, err = psql(client_server, user, "tls", "-c", "SELECT 1", password="wrong")
    assert rc != 0
    assert f'FATAL:  password authentication failed for user "{user}"' in err, err
