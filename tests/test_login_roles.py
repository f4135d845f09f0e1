"""Who a login becomes, and what the catalog keeps to check it (issue 19,
items 7 and 8).

- A user name the server has no role for, let in by a `trust` rule (or a
  config-file password), gets a plain LOGIN role at its first login, never
  a superuser: it can then do only what any role can.
- `--listen` on an address that is not loopback, without hba rules, does
  not start the server (without rules only loopback clients get in).
- Without an md5 hba rule the catalog keeps only SCRAM-SHA-256 verifiers: no
  md5 hash is made, one given as the password is refused, and those stored
  while md5 rules existed are dropped at start; so a leaked catalog gives
  nothing to log in with (pass-the-hash), which it does while md5 rules are
  configured.

docs/operations.md ("Authentication") describes the behaviour.
"""

import hashlib
import sqlite3
import struct

import psycopg
import pytest

from conftest import sluiced_refuses
from pgwire_raw import Raw, cstr, message, startup_packet
from test_roles import connect_as, su
from test_roles import sqlstate_of as error_of


def md5_hash(password, user):
    return "md5" + hashlib.md5((password + user).encode()).hexdigest()


def pass_the_hash(server, user, stolen):
    """Logs in as user knowing only its stored md5 hash (not the password):
    answers an md5 challenge with md5(hash || salt).  Returns the first
    authentication request code and whether the login succeeded."""
    with Raw(server.port) as raw:
        raw.send(startup_packet({"user": user, "database": "sluice"}))
        kind, body = raw.recv_msg()
        if kind != b"R":
            return None, False
        code = struct.unpack("!I", body[:4])[0]
        if code != 5:
            return code, False
        outer = hashlib.md5(stolen[3:].encode() + body[4:8]).hexdigest()
        raw.send(message(b"p", cstr("md5" + outer)))
        while True:
            msg = raw.recv_msg()
            if msg is None or msg[0] == b"E":
                return code, False
            if msg[0] == b"Z":
                return code, True


def catalog_md5(server, role):
    con = sqlite3.connect(server.data_dir / "catalog.db")
    try:
        row = con.execute("SELECT password, password_md5 FROM roles WHERE name = ?",
                          (role,)).fetchone()
    finally:
        con.close()
    return row


def catalog_bytes(server):
    return b"".join(p.read_bytes() for p in server.data_dir.glob("catalog.db*"))


def hba_config(*rules):
    return "".join(f"hba = '{r}'\n" for r in rules)


TRUST_SLUICE = "host all sluice 127.0.0.1/32 trust"
SCRAM_ALL = "host all all 127.0.0.1/32 scram-sha-256"
MD5_ALL = "host all all 127.0.0.1/32 md5"


# ------------------------------------------------------------ item 7

def test_first_login_under_trust_is_a_plain_login_role(sluiced):
    server = sluiced("--hba", "host all all 127.0.0.1/32 trust")
    with su(server) as admin:
        admin.execute("CREATE STREAM s (x INT)")
        admin.execute("CREATE TABLE t (k INT PRIMARY KEY)")
    with connect_as(server, "newcomer") as u:
        assert u.info.parameter_status("is_superuser") == "off"
        assert u.execute("SELECT rolsuper, rolcanlogin, rolcreaterole, rolcreatedb "
                         "FROM pg_roles WHERE rolname = 'newcomer'").fetchone() == \
            (False, True, False, False)
        assert error_of(lambda: u.execute("CREATE ROLE evil SUPERUSER LOGIN")) == "42501"
        assert error_of(lambda: u.execute("CREATE ROLE other LOGIN")) == "42501"
        assert error_of(lambda: u.execute("SELECT * FROM s")) == "42501"
        assert error_of(lambda: u.execute("INSERT INTO t VALUES (1)")) == "42501"
        assert error_of(lambda: u.execute("DROP STREAM s")) == "42501"
        assert error_of(lambda: u.execute("ALTER ROLE newcomer SUPERUSER")) == "42501"
        # what any role may do
        u.execute("CREATE TABLE mine (k INT PRIMARY KEY)")
        u.execute("INSERT INTO mine VALUES (1)")
    assert "role created at first login" in server.log_text()
    # the bootstrap superuser is still the superuser it was
    with su(server) as admin:
        assert admin.info.parameter_status("is_superuser") == "on"


def test_the_bootstrap_name_after_a_rename_gets_no_superuser(sluiced):
    server = sluiced("--hba", "host all all 127.0.0.1/32 trust")
    with su(server) as admin:
        admin.execute("CREATE ROLE boss SUPERUSER LOGIN")
    with connect_as(server, "boss") as boss:
        boss.execute("ALTER ROLE sluice RENAME TO admin")
    # "sluice" is now an unknown name: a plain role, not the bootstrap one
    with connect_as(server, "sluice") as c:
        assert c.info.parameter_status("is_superuser") == "off"
        assert error_of(lambda: c.execute("CREATE ROLE x")) == "42501"
    with connect_as(server, "admin") as c:
        assert c.info.parameter_status("is_superuser") == "on"


def start_raw(tmp_path, *args):
    """Runs sluiced with args, a start it must refuse (conftest.sluiced_refuses:
    exit 1 or 2 within 30 s, no sanitizer report); (exit code, output)."""
    res = sluiced_refuses(["--port", "0", "--data-dir", str(tmp_path / "data"), *args])
    return res.returncode, res.stdout + res.stderr


def test_non_loopback_listen_without_rules_refuses_to_start(tmp_path):
    # 192.0.2.1 (TEST-NET-1) is on no interface: nothing is ever bound on a
    # non-loopback address, whichever way the check goes.
    code, out = start_raw(tmp_path, "--listen", "192.0.2.1")
    assert code != 0
    assert "refusing to listen on 192.0.2.1 without hba rules" in out
    assert "hostssl all all 0.0.0.0/0 scram-sha-256" in out      # the hint
    # with rules the check passes (and the bind of that address fails)
    code, out = start_raw(tmp_path, "--listen", "192.0.2.1", "--hba", SCRAM_ALL)
    assert code != 0
    assert "refusing to listen" not in out
    assert "cannot start the server" in out


# ------------------------------------------------------------ item 8

def test_without_md5_rules_only_scram_verifiers_are_stored(sluiced):
    server = sluiced(config=hba_config(TRUST_SLUICE, SCRAM_ALL))
    with su(server) as admin:
        admin.execute("CREATE ROLE u LOGIN PASSWORD 'u-secret-1'")
    stolen = md5_hash("u-secret-1", "u")
    # u changes its own password; a hash given as the password is refused
    with connect_as(server, "u", "u-secret-1") as u:
        with pytest.raises(psycopg.errors.InvalidParameterValue) as e:
            u.execute(f"ALTER ROLE u PASSWORD '{md5_hash('u-secret-2', 'u')}'")
        assert str(e.value).splitlines()[0] == \
            "a password given as an md5 hash cannot be stored: no hba rule uses md5"
        u.execute("ALTER ROLE u PASSWORD 'u-secret-2'")
    stolen2 = md5_hash("u-secret-2", "u")
    # the server asks for SCRAM: an md5 hash is of no use
    assert pass_the_hash(server, "u", stolen2) == (10, False)
    with connect_as(server, "u", "u-secret-2") as u:
        assert u.execute("SELECT current_user").fetchone() == ("u",)
    server.stop()
    scram, md5 = catalog_md5(server, "u")
    assert scram.startswith("SCRAM-SHA-256$4096:") and md5 is None
    raw = catalog_bytes(server)
    assert stolen[3:].encode() not in raw and stolen2[3:].encode() not in raw
    server.start()


def test_md5_hashes_are_dropped_at_a_start_without_md5_rules(sluiced):
    server = sluiced(config=hba_config(TRUST_SLUICE, MD5_ALL))
    with su(server) as admin:
        admin.execute("CREATE ROLE u LOGIN PASSWORD 'u-secret'")
        admin.execute(f"CREATE ROLE w LOGIN PASSWORD '{md5_hash('w-secret', 'w')}'")
    stolen = md5_hash("u-secret", "u")
    # With an md5 rule configured the hash is kept, and it is a password:
    # this is the risk md5 rules carry.
    assert catalog_md5(server, "u")[1] == stolen
    assert pass_the_hash(server, "u", stolen) == (5, True)
    # Restarted with SCRAM rules only: the hashes go.
    server.stop()
    server.config_path.write_text(hba_config(TRUST_SLUICE, SCRAM_ALL))
    server.start()
    assert 'msg="md5 password hashes dropped" roles=2' in server.log_text()
    assert 'msg="role left without a password" role="w"' in server.log_text()
    assert pass_the_hash(server, "u", stolen) == (10, False)
    with connect_as(server, "u", "u-secret") as u:
        assert u.execute("SELECT current_user").fetchone() == ("u",)
    with pytest.raises(psycopg.OperationalError, match="password authentication failed"):
        connect_as(server, "w", "w-secret")
    server.stop()
    assert catalog_md5(server, "u")[1] is None
    assert catalog_md5(server, "w") == (None, None)
    assert stolen[3:].encode() not in catalog_bytes(server)
    server.start()
