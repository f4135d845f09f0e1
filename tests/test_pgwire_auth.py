"""Authentication: hba rules and the trust, password, md5 and SCRAM-SHA-256
exchanges, byte by byte (tests/pgwire_raw.py) and with psql.

Users and rules come from the config file (docs/operations.md): lines
`user.NAME.password = SECRET` and `hba = 'TYPE DATABASE USER ADDRESS METHOD'`.
"""

import base64
import os
import struct

import pytest

from pgwire_raw import (Raw, cstr, error_fields, md5_secret, message, query,
                        scram_verifier, startup_packet)

PASSWORD = "s3cret pass"


def config(users, rules):
    lines = [f"user.{u}.password = '{secret}'" for u, secret in users.items()]
    lines += [f"hba = '{rule}'" for rule in rules]
    return "\n".join(lines) + "\n"


@pytest.fixture
def auth_server(sluiced):
    users = {
        "plain": PASSWORD,                              # stored in clear
        "hashed": md5_secret(PASSWORD, "hashed"),       # stored as md5
        "verifier": scram_verifier(PASSWORD),           # stored as SCRAM
    }
    rules = [
        "host all trusted 127.0.0.1/32 trust",
        "host all refused 127.0.0.1/32 reject",
        "host onlydb dbuser 127.0.0.1/32 trust",
        "host all plain,hashed,verifier,ghost 127.0.0.1/32 scram-sha-256",
        "host pw all 127.0.0.1/32 password",
        "host md5 all 127.0.0.1/32 md5",
        "host all all 10.0.0.0/8 trust",
    ]
    # Connections to database "pw" / "md5" use those methods for any user
    # (the rules above are tried in order).
    rules = rules[:3] + rules[4:6] + [rules[3]] + rules[6:]
    return sluiced(config=config(users, rules))


def auth_result(msgs):
    """'ok', or the SQLSTATE of the ErrorResponse that ended the startup."""
    if msgs and msgs[-1][0] == b"Z":
        return "ok"
    errors = [error_fields(body) for kind, body in msgs if kind == b"E"]
    return errors[-1]["C"] if errors else "closed"


def auth_requests(msgs):
    return [struct.unpack("!I", body[:4])[0] for kind, body in msgs if kind == b"R"]


def connect(server, user, database="sluice", password=None):
    raw = Raw(server.port)
    msgs = raw.startup(user=user, database=database, password=password)
    return raw, msgs


@pytest.mark.parametrize("user", ["plain", "hashed", "verifier"])
def test_scram_succeeds_for_every_kind_of_stored_secret_but_md5(auth_server, user):
    raw, msgs = connect(auth_server, user, password=PASSWORD)
    with raw:
        if user == "hashed":
            # An md5 hash cannot answer a SCRAM challenge (as in PostgreSQL).
            assert auth_result(msgs) == "28P01"
            return
        assert auth_result(msgs) == "ok", msgs
        assert auth_requests(msgs) == [10, 11, 12, 0]
        assert raw.server_signature_ok is True
        raw.send(query("SELECT 1"))
        assert raw.until_ready()[-1] == (b"Z", b"I")


@pytest.mark.parametrize("user", ["plain", "verifier", "ghost"])
def test_scram_wrong_password(auth_server, user):
    raw, msgs = connect(auth_server, user, password="wrong")
    with raw:
        assert auth_result(msgs) == "28P01"
        err = [error_fields(b) for k, b in msgs if k == b"E"][-1]
        assert err["S"] == "FATAL"
        assert err["M"] == f'password authentication failed for user "{user}"'
        # A user that does not exist goes through the same exchange.
        assert auth_requests(msgs) == [10, 11]
        assert raw.closed_by_server()


def test_scram_ignores_the_username_in_the_sasl_message(auth_server):
    # pgwire_raw sends "n=" (empty), as libpq does; the startup user counts.
    raw, msgs = connect(auth_server, "verifier", password=PASSWORD)
    with raw:
        assert auth_result(msgs) == "ok"


def scram_first(server, user, first):
    raw = Raw(server.port)
    raw.send(startup_packet({"user": user, "database": "sluice"}))
    kind, body = raw.recv_msg()
    assert kind == b"R" and struct.unpack("!I", body[:4])[0] == 10
    assert body[4:] == b"SCRAM-SHA-256\x00\x00"
    raw.send(message(b"p", cstr("SCRAM-SHA-256") + struct.pack("!i", len(first))
                     + first.encode()))
    return raw


def test_scram_refuses_channel_binding_it_did_not_offer(auth_server):
    with scram_first(auth_server, "verifier", "p=tls-server-end-point,,n=,r=abc") as raw:
        kind, body = raw.recv_msg()
        assert kind == b"E"
        assert error_fields(body)["C"] == "08P01"
        assert raw.closed_by_server()


def test_scram_wrong_nonce_in_final_message(auth_server):
    with scram_first(auth_server, "verifier", "n,,n=,r=clientnonce") as raw:
        kind, body = raw.recv_msg()
        assert kind == b"R" and struct.unpack("!I", body[:4])[0] == 11
        proof = base64.b64encode(os.urandom(32)).decode()
        raw.send(message(b"p", f"c=biws,r=othernonce,p={proof}".encode()))
        kind, body = raw.recv_msg()
        assert kind == b"E"
        assert error_fields(body)["C"] == "08P01"


def test_scram_server_first_message_shape(auth_server):
    with scram_first(auth_server, "verifier", "n,,n=,r=clientnonce") as raw:
        kind, body = raw.recv_msg()
        attrs = dict(kv.split("=", 1) for kv in body[4:].decode().split(","))
        assert attrs["r"].startswith("clientnonce")
        assert len(attrs["r"]) >= len("clientnonce") + 24     # 18 random bytes
        assert int(attrs["i"]) >= 4096
        assert base64.b64decode(attrs["s"])


def test_scram_nonce_differs_each_time(auth_server):
    nonces = set()
    for _ in range(3):
        with scram_first(auth_server, "verifier", "n,,n=,r=x") as raw:
            nonces.add(raw.recv_msg()[1])
    assert len(nonces) == 3


@pytest.mark.parametrize("user", ["plain", "hashed", "verifier"])
def test_password_method(auth_server, user):
    raw, msgs = connect(auth_server, user, database="pw", password=PASSWORD)
    with raw:
        assert auth_requests(msgs)[0] == 3
        assert auth_result(msgs) == "ok", msgs
    raw, msgs = connect(auth_server, user, database="pw", password=PASSWORD + "x")
    with raw:
        assert auth_result(msgs) == "28P01"


def test_password_method_refuses_an_empty_password(auth_server):
    raw, msgs = connect(auth_server, "plain", database="pw", password="")
    with raw:
        assert auth_result(msgs) == "28P01"


@pytest.mark.parametrize("user", ["plain", "hashed"])
def test_md5_method(auth_server, user):
    raw, msgs = connect(auth_server, user, database="md5", password=PASSWORD)
    with raw:
        assert auth_requests(msgs)[0] == 5
        assert auth_result(msgs) == "ok", msgs
    raw, msgs = connect(auth_server, user, database="md5", password="nope")
    with raw:
        assert auth_result(msgs) == "28P01"


def test_md5_method_with_a_scram_verifier_runs_scram(auth_server):
    raw, msgs = connect(auth_server, "verifier", database="md5", password=PASSWORD)
    with raw:
        assert auth_requests(msgs) == [10, 11, 12, 0]
        assert auth_result(msgs) == "ok"


def test_trust_and_reject(auth_server):
    raw, msgs = connect(auth_server, "trusted")
    with raw:
        assert auth_requests(msgs) == [0]
        assert auth_result(msgs) == "ok"
    raw, msgs = connect(auth_server, "refused")
    with raw:
        assert auth_result(msgs) == "28000"
        err = error_fields(msgs[-1][1])
        assert err["M"].startswith('pg_hba.conf rejects connection for host "127.0.0.1"')


def test_rule_for_another_database_does_not_match(auth_server):
    raw, msgs = connect(auth_server, "dbuser", database="onlydb")
    with raw:
        assert auth_result(msgs) == "ok"
    raw, msgs = connect(auth_server, "dbuser", database="otherdb")
    with raw:
        assert auth_result(msgs) == "28000"
        assert error_fields(msgs[-1][1])["M"] == (
            'no pg_hba.conf entry for host "127.0.0.1", user "dbuser", '
            'database "otherdb", no encryption')


def test_other_messages_during_authentication_are_refused(auth_server):
    with Raw(auth_server.port) as raw:
        raw.send(startup_packet({"user": "verifier", "database": "sluice"}))
        assert raw.recv_msg()[0] == b"R"
        raw.send(query("SELECT 1"))
        kind, body = raw.recv_msg()
        assert kind == b"E" and error_fields(body)["C"] == "08P01"
        assert raw.closed_by_server()


def test_oversized_password_message_is_refused(auth_server):
    with Raw(auth_server.port) as raw:
        raw.send(startup_packet({"user": "plain", "database": "pw"}))
        assert raw.recv_msg()[0] == b"R"
        raw.send(b"p" + struct.pack("!I", 1 << 20))
        kind, body = raw.recv_msg()
        assert kind == b"E" and error_fields(body)["C"] == "08P01"


def test_terminate_during_authentication(auth_server):
    with Raw(auth_server.port) as raw:
        raw.send(startup_packet({"user": "plain", "database": "pw"}))
        assert raw.recv_msg()[0] == b"R"
        raw.send(message(b"X"))
        assert raw.closed_by_server()
    assert auth_server.alive()


def test_no_rules_trusts_loopback(server):
    raw, msgs = connect(server, "anyone")
    with raw:
        assert auth_result(msgs) == "ok"


def test_rules_without_a_match_refuse(sluiced):
    server = sluiced(config=config({}, ["host all all 10.0.0.0/8 trust",
                                        "host all all ::1/128 trust"]))
    raw, msgs = connect(server, "sluice")
    with raw:
        assert auth_result(msgs) == "28000"
        assert "no pg_hba.conf entry" in error_fields(msgs[-1][1])["M"]


@pytest.mark.parametrize("rule", [
    "host all all 127.0.0.1/33 trust",
    "host all all not-an-address trust",
    "local all all trust",
    "host all all 127.0.0.1/32 kerberos",
    "hostgss all all 127.0.0.1/32 trust",
])
def test_bad_rule_stops_the_server_from_starting(sluiced, tmp_path, rule):
    from conftest import sluiced_refuses
    conf = tmp_path / "bad.conf"
    conf.write_text(f"hba = '{rule}'\n")
    res = sluiced_refuses(["--port", "0", "--data-dir", str(tmp_path / "d"),
                           "--config", str(conf)])
    assert res.returncode != 0
    assert "invalid hba rule" in res.stderr, res.stderr


def test_bad_scram_verifier_stops_the_server(tmp_path):
    from conftest import sluiced_refuses
    conf = tmp_path / "bad.conf"
    conf.write_text("user.x.password = 'SCRAM-SHA-256$4096:!!$a:b'\n")
    res = sluiced_refuses(["--port", "0", "--data-dir", str(tmp_path / "d"),
                           "--config", str(conf)])
    assert res.returncode != 0
    assert "invalid SCRAM verifier" in res.stderr, res.stderr


def test_hba_on_the_command_line_replaces_the_config_files(sluiced):
    server = sluiced("--hba", "host all all 127.0.0.1/32 reject",
                     config=config({}, ["host all all 127.0.0.1/32 trust"]))
    raw, msgs = connect(server, "sluice")
    with raw:
        assert auth_result(msgs) == "28000"


# ---------------------------------------------------------------- with psql

def psql_as(server, user, password, *args, database="sluice"):
    import subprocess
    env = dict(os.environ, LC_ALL="C", PGCONNECT_TIMEOUT="10", PGSSLMODE="disable")
    env.pop("PGPASSWORD", None)
    if password is not None:
        env["PGPASSWORD"] = password
    dsn = f"host=127.0.0.1 port={server.port} user={user} dbname={database}"
    res = subprocess.run(["psql", dsn, "-X", "-w", "-At", *args, "-c", "SELECT 1"],
                         capture_output=True, text=True, env=env, timeout=60,
                         stdin=subprocess.DEVNULL)
    return res.returncode, res.stdout.strip(), res.stderr


@pytest.mark.parametrize("user,database", [("verifier", "sluice"), ("plain", "sluice"),
                                           ("plain", "pw"), ("hashed", "md5"),
                                           ("trusted", "sluice")])
def test_psql_logs_in(auth_server, user, database):
    rc, out, err = psql_as(auth_server, user, PASSWORD, database=database)
    assert rc == 0, err
    assert out == "1"


def test_psql_wrong_password(auth_server):
    rc, out, err = psql_as(auth_server, "verifier", "bad")
    assert rc != 0
    assert 'FATAL:  password authentication failed for user "verifier"' in err
