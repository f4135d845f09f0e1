"""The HTTP listener's address and authentication (issue 19, item 6).

- It listens on its own address, --http-listen, 127.0.0.1 by default
  whatever --listen is; an address that is not loopback needs a token.
- Without a token nobody is authenticated: the pages show names, statuses
  and figures, never a data value -- a failed query's error, which quotes
  the row it failed on, is hidden (it stays in sys.queries for roles that
  may read it).
- With http_token, every page but /healthz needs "Authorization: Bearer
  TOKEN" (401 otherwise, with WWW-Authenticate), and the error is shown to
  a request that carries it.

The failing query belongs to the unprivileged role u, whose data is the
secret; the readers are plain HTTP clients.  docs/operations.md ("The
HTTP listener") describes the behaviour.
"""

import re
import time
import urllib.error
import urllib.request

import pytest

from test_login_roles import start_raw as run_until_exit
from test_roles import connect_as, su

HTTP_READY_RE = re.compile(r"http ready\"? listen=(\S+):(\d+)(?: auth=(\w+))?")
TOKEN = "t0ken-of-the-tests-" + "x" * 12
SECRET = "s3cr3t-v4lue"


def http_ready(server):
    m = HTTP_READY_RE.search(server.log_text())
    assert m, "no 'http ready' line in the server log"
    return m.group(1), int(m.group(2)), m.group(3)


def get(port, path, token=None, scheme="Bearer", host="127.0.0.1"):
    req = urllib.request.Request(f"http://{host}:{port}{path}")
    if token is not None:
        req.add_header("Authorization", f"{scheme} {token}")
    try:
        with urllib.request.urlopen(req, timeout=30) as r:
            return r.status, r.headers, r.read().decode()
    except urllib.error.HTTPError as e:
        return e.code, e.headers, e.read().decode()


def failing_query(server):
    """u's continuous query whose batch fails on u's secret value; returns
    once sys.queries says failed (with the value in its error)."""
    with su(server) as admin:
        admin.execute("CREATE ROLE u LOGIN PASSWORD 'u-secret'")
    with connect_as(server, "u") as u:
        u.execute("CREATE STREAM raw (v TEXT)")
        u.execute("CREATE CONTINUOUS QUERY parse WITH (trigger = '0') AS "
                  "SELECT v::int AS n FROM raw")
        u.execute(f"INSERT INTO raw VALUES ('{SECRET}')")
        deadline = time.monotonic() + 30
        while time.monotonic() < deadline:
            row = u.execute("SELECT status, last_error FROM sys.queries "
                            "WHERE name = 'parse'").fetchone()
            if row[0] == "failed":
                assert SECRET in row[1]
                return
            time.sleep(0.1)
    pytest.fail(f"the query did not fail: {row}")


def test_http_listens_on_loopback_by_default_and_hides_data_values(sluiced):
    server = sluiced("--http-port", "0")
    host, port, auth = http_ready(server)
    failing_query(server)
    status, _, page = get(port, "/queries/parse")
    assert status == 200
    assert "failed" in page
    assert SECRET not in page
    assert "shown only to a request with the HTTP token" in page
    assert (host, auth) == ("127.0.0.1", "none")
    with su(server) as admin:
        assert admin.execute("SELECT setting FROM pg_settings "
                             "WHERE name = 'http_listen'").fetchone() == ("127.0.0.1",)
    for path in ("/", "/metrics", "/healthz"):
        status, _, body = get(port, path)
        assert status == 200 and SECRET not in body, path
    # a token sent to a server that has none authenticates nothing
    assert SECRET not in get(port, "/queries/parse", token=TOKEN)[2]


def test_sys_queries_shows_the_error_only_to_readers_of_the_query(sluiced):
    # the same rule over SQL: a role that may not read u's query does not
    # see the data its error quotes
    server = sluiced()
    failing_query(server)
    with su(server) as admin:
        admin.execute("CREATE ROLE v LOGIN")
        assert SECRET in admin.execute("SELECT last_error FROM sys.queries").fetchone()[0]
    with connect_as(server, "v") as v:
        assert v.execute("SELECT status, last_error FROM sys.queries "
                         "WHERE name = 'parse'").fetchone() == ("failed", None)
        with connect_as(server, "u") as u:
            u.execute("GRANT SELECT ON parse TO v")
        assert SECRET in v.execute("SELECT last_error FROM sys.queries").fetchone()[0]


def test_http_listen_is_its_own_address(sluiced):
    server = sluiced("--http-port", "0", "--http-listen", "127.0.0.2")
    host, port, _ = http_ready(server)
    assert host == "127.0.0.2"
    assert get(port, "/healthz", host="127.0.0.2")[0] == 200
    with pytest.raises(urllib.error.URLError):
        get(port, "/healthz", host="127.0.0.1")


def test_http_token_guards_every_page_but_healthz(sluiced):
    server = sluiced("--http-port", "0", config=f"http_token = '{TOKEN}'\n")
    _, port, auth = http_ready(server)
    assert auth == "token"
    assert TOKEN not in server.log_text()
    failing_query(server)
    assert get(port, "/healthz")[0] == 200
    for path in ("/", "/metrics", "/queries/parse", "/queries/nothing"):
        for token, scheme in ((None, "Bearer"), ("wrong" + TOKEN[5:], "Bearer"),
                              (TOKEN + "x", "Bearer"), (TOKEN[:-1], "Bearer"),
                              (TOKEN, "Basic")):
            status, headers, body = get(port, path, token=token, scheme=scheme)
            assert status == 401, (path, token, scheme)
            assert headers["WWW-Authenticate"] == 'Bearer realm="sluice"'
            assert SECRET not in body and "parse" not in body
    status, _, page = get(port, "/queries/parse", token=TOKEN)
    assert status == 200 and SECRET in page
    status, _, text = get(port, "/metrics", token=TOKEN)
    assert status == 200 and 'sluice_query_status{query="parse",status="failed"} 1' in text
    assert get(port, "/", token=TOKEN, scheme="bearer")[0] == 200


def test_http_refuses_a_non_loopback_address_without_a_token(tmp_path):
    # 192.0.2.1 (TEST-NET-1) is on no interface: nothing is bound there
    code, out = run_until_exit(tmp_path, "--http-port", "0", "--http-listen", "192.0.2.1")
    assert code != 0
    assert "refusing to serve HTTP on 192.0.2.1 without an HTTP token" in out
    code, out = run_until_exit(tmp_path, "--http-port", "0", "--http-token", "short")
    assert code != 0
    assert "the HTTP token is too short: 5 bytes, at least 16" in out
    # with a token the address is accepted (and its bind fails)
    code, out = run_until_exit(tmp_path, "--http-port", "0", "--http-listen", "192.0.2.1",
                               "--http-token", TOKEN)
    assert code != 0
    assert "refusing to serve" not in out and "cannot listen for HTTP on 192.0.2.1" in out
