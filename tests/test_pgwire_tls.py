"""TLS: SSLRequest, the handshake on the same socket, hostssl/hostnossl rules,
the refusal of bytes sent in clear after an SSLRequest (CVE-2021-23214), and
psql / psycopg with sslmode=require and verify-full against a throwaway CA
(the tls_certs fixture in conftest.py).
"""

import os
import ssl
import struct
import subprocess

import psycopg
import psycopg2
import pytest

from pgwire_raw import (GSSENC_REQUEST, Raw, data_row, error_fields, message, query,
                        startup_packet)


def tls_config(certs, extra=""):
    return (f"ssl = on\nssl_cert_file = '{certs.cert}'\nssl_key_file = '{certs.key}'\n"
            + extra)


@pytest.fixture
def tls_server(sluiced, tls_certs):
    return sluiced(config=tls_config(tls_certs))


def client_context(certs, verify=True):
    ctx = ssl.create_default_context(cafile=str(certs.ca))
    if not verify:
        ctx.check_hostname = False
        ctx.verify_mode = ssl.CERT_NONE
    return ctx


def psql_run(server, sql, **params):
    env = dict(os.environ, LC_ALL="C", PGCONNECT_TIMEOUT="10")
    env.pop("PGPASSWORD", None)
    conn = {"host": "127.0.0.1", "port": server.port, "user": "sluice",
            "dbname": "sluice", **params}
    dsn = " ".join(f"{k}={v}" for k, v in conn.items())
    res = subprocess.run(["psql", dsn, "-X", "-w", "-At", "-c", sql],
                         capture_output=True, text=True, env=env, timeout=60,
                         stdin=subprocess.DEVNULL)
    return res.returncode, res.stdout.strip(), res.stderr


def test_ssl_off_answers_n(server):
    with Raw(server.port) as raw:
        assert raw.ssl_request(None) == b"N"
        msgs = raw.startup()
        assert msgs[-1] == (b"Z", b"I")


def test_gssenc_request_answered_n(tls_server):
    with Raw(tls_server.port) as raw:
        raw.send(struct.pack("!II", 8, GSSENC_REQUEST))
        assert raw.sock.recv(1) == b"N"
        assert raw.startup()[-1] == (b"Z", b"I")


def test_raw_tls_session(tls_server, tls_certs):
    with Raw(tls_server.port) as raw:
        assert raw.ssl_request(client_context(tls_certs)) == b"S"
        assert raw.sock.version() in ("TLSv1.2", "TLSv1.3")
        msgs = raw.startup()
        assert msgs[-1] == (b"Z", b"I")
        raw.send(query("SELECT 'over tls'"))
        out = raw.until_ready()
        assert [data_row(b) for k, b in out if k == b"D"] == [[b"over tls"]]
    assert "tls=on" in tls_server.log_text()


def test_big_messages_over_tls(tls_server, tls_certs):
    """Messages larger than a TLS record (16 KiB) both ways."""
    value = "x" * 300_000
    with Raw(tls_server.port) as raw:
        raw.ssl_request(client_context(tls_certs))
        raw.startup()
        raw.send(*[query(f"SELECT '{value}'")] * 3)
        for _ in range(3):
            out = raw.until_ready()
            assert [data_row(b) for k, b in out if k == b"D"] == [[value.encode()]]


def test_bytes_after_ssl_request_are_refused(tls_server):
    """Data sent with the SSLRequest, before the handshake, was sent in clear:
    refused with a FATAL 08P01, in clear, and the connection closed."""
    with Raw(tls_server.port) as raw:
        raw.send(struct.pack("!II", 8, 80877103)
                 + startup_packet({"user": "sluice", "database": "sluice"}))
        kind, body = raw.recv_msg()
        assert kind == b"E"
        fields = error_fields(body)
        assert fields["S"] == "FATAL" and fields["C"] == "08P01"
        assert fields["M"] == "received unencrypted data after SSL request"
        assert raw.closed_by_server()
    assert tls_server.alive()


def test_second_ssl_request_inside_tls_is_refused(tls_server, tls_certs):
    with Raw(tls_server.port) as raw:
        raw.ssl_request(client_context(tls_certs))
        raw.send(struct.pack("!II", 8, 80877103))
        kind, body = raw.recv_msg()
        assert kind == b"E" and error_fields(body)["C"] == "08P01"


def test_garbage_instead_of_a_handshake(tls_server):
    for junk in [b"\x00" * 100, b"GET / HTTP/1.0\r\n\r\n", os.urandom(4096),
                 b"\x16\x03\x01\x00\x05hello"]:
        with Raw(tls_server.port, timeout=30) as raw:
            raw.send(struct.pack("!II", 8, 80877103))
            assert raw.sock.recv(1) == b"S"
            raw.send(junk)
            # the handshake fails: the server (after an alert, perhaps) closes
            assert raw.closed_by_server(), junk
    assert tls_server.alive()
    assert psql_run(tls_server, "SELECT 1", sslmode="require")[1] == "1"


def test_client_that_vanishes_mid_handshake(tls_server, tls_certs):
    with Raw(tls_server.port) as raw:
        raw.send(struct.pack("!II", 8, 80877103))
        assert raw.sock.recv(1) == b"S"
        raw.send(b"\x16\x03\x01\x02\x00\x01")      # the start of a ClientHello
    assert psql_run(tls_server, "SELECT 1", sslmode="require")[1] == "1"


@pytest.mark.parametrize("host", ["127.0.0.1", "localhost"])
def test_psql_verify_full(tls_server, tls_certs, host):
    rc, out, err = psql_run(tls_server, "SELECT 1", host=host, hostaddr="127.0.0.1",
                            sslmode="verify-full", sslrootcert=tls_certs.ca)
    assert rc == 0, err
    assert out == "1"


def test_psql_sslmode_require(tls_server):
    rc, out, err = psql_run(tls_server, "SELECT 2", sslmode="require")
    assert rc == 0, err
    assert out == "2"


def test_psql_refuses_a_certificate_from_another_ca(tls_server, tls_certs):
    rc, out, err = psql_run(tls_server, "SELECT 1", sslmode="verify-full",
                            sslrootcert=tls_certs.other_ca)
    assert rc != 0
    assert "certificate verify failed" in err, err


def test_psql_refuses_a_wrong_host_name(tls_server, tls_certs):
    rc, out, err = psql_run(tls_server, "SELECT 1", host="sluice.invalid",
                            hostaddr="127.0.0.1", sslmode="verify-full",
                            sslrootcert=tls_certs.ca)
    assert rc != 0
    assert "does not match host name" in err, err


def test_psql_require_against_a_server_without_ssl(server):
    rc, out, err = psql_run(server, "SELECT 1", sslmode="require")
    assert rc != 0
    assert "server does not support SSL" in err, err


def test_psycopg_verify_full(tls_server, tls_certs):
    with psycopg.connect(host="127.0.0.1", port=tls_server.port, user="sluice",
                         dbname="sluice", sslmode="verify-full",
                         sslrootcert=str(tls_certs.ca), connect_timeout=10,
                         autocommit=True) as conn:
        assert conn.pgconn.ssl_in_use
        assert conn.execute("SELECT %s::int4 + 1", (41,)).fetchall() == [(42,)]
        assert conn.execute("SELECT %b::text || 'b'", ("a",)).fetchall() == [("ab",)]


def test_psycopg2_require(tls_server):
    conn = psycopg2.connect(host="127.0.0.1", port=tls_server.port, user="sluice",
                            dbname="sluice", sslmode="require", connect_timeout=10)
    try:
        conn.autocommit = True
        with conn.cursor() as cur:
            cur.execute("SELECT %s::int8 * 2", (21,))
            assert cur.fetchall() == [(42,)]
    finally:
        conn.close()


def test_hostssl_requires_tls(sluiced, tls_certs):
    server = sluiced(config=tls_config(tls_certs,
                                       "hba = 'hostssl all all 127.0.0.1/32 trust'\n"))
    rc, out, err = psql_run(server, "SELECT 1", sslmode="disable")
    assert rc != 0
    assert 'no pg_hba.conf entry for host "127.0.0.1", user "sluice", ' \
           'database "sluice", no encryption' in err, err
    rc, out, err = psql_run(server, "SELECT 1", sslmode="require")
    assert rc == 0, err


def test_hostnossl_refuses_tls(sluiced, tls_certs):
    server = sluiced(config=tls_config(tls_certs,
                                       "hba = 'hostnossl all all 127.0.0.1/32 trust'\n"))
    rc, out, err = psql_run(server, "SELECT 1", sslmode="require")
    assert rc != 0
    assert "SSL encryption" in err, err
    rc, out, err = psql_run(server, "SELECT 1", sslmode="disable")
    assert rc == 0, err


def test_scram_over_tls(sluiced, tls_certs):
    from pgwire_raw import scram_verifier
    server = sluiced(config=tls_config(
        tls_certs, "user.u.password = '%s'\nhba = 'hostssl all u 127.0.0.1/32 "
        "scram-sha-256'\n" % scram_verifier("pw")))
    with Raw(server.port) as raw:
        raw.ssl_request(client_context(tls_certs))
        msgs = raw.startup(user="u", password="pw")
        assert msgs[-1] == (b"Z", b"I")
        assert raw.server_signature_ok


def test_ca_file_does_not_require_client_certificates(sluiced, tls_certs):
    server = sluiced(config=tls_config(tls_certs, f"ssl_ca_file = '{tls_certs.ca}'\n"))
    rc, out, err = psql_run(server, "SELECT 1", sslmode="verify-full",
                            sslrootcert=tls_certs.ca)
    assert rc == 0, err


@pytest.mark.parametrize("problem", ["missing cert", "key mismatch", "no key"])
def test_bad_tls_files_stop_the_server(tmp_path, tls_certs, problem):
    from conftest import sluiced_refuses
    cert, key = str(tls_certs.cert), str(tls_certs.key)
    if problem == "missing cert":
        cert = str(tmp_path / "nope.crt")
    elif problem == "key mismatch":
        subprocess.run(["openssl", "genrsa", "-out", str(tmp_path / "other.key"), "2048"],
                       check=True, capture_output=True)
        key = str(tmp_path / "other.key")
    args = ["--port", "0", "--data-dir", str(tmp_path / "d"),
            "--ssl", "on", "--ssl-cert-file", cert]
    if problem != "no key":
        args += ["--ssl-key-file", key]
    res = sluiced_refuses(args)
    assert res.returncode != 0
    assert "cannot start the server" in res.stderr, res.stderr


def test_terminate_over_tls_closes_cleanly(tls_server, tls_certs):
    with Raw(tls_server.port) as raw:
        raw.ssl_request(client_context(tls_certs))
        raw.startup()
        raw.send(message(b"X"))
        assert raw.closed_by_server()
