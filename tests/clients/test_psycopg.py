"""psycopg 3 and psycopg2 against sluiced: every authentication method over
plain TCP and TLS (verify-full), simple and prepared queries with parameters
of every supported type in text and binary format, and typed errors.

psycopg 3 sends parameters with the extended protocol (%s text or binary as
psycopg picks, %t text, %b binary), can ask for binary results
(cursor(binary=True)) and prepares statements server-side (prepare=True).
psycopg2 interpolates parameters on the client and uses the simple protocol.
"""

from decimal import Decimal

import psycopg
import psycopg2
import psycopg2.errors
import pytest

from matrix import CASE_IDS, CASES, client_server  # noqa: F401 (fixture)
from conftest import USERS


def conninfo(server, user, transport, password=None):
    kw = dict(host="127.0.0.1", port=server.port, user=user, dbname="sluice",
              connect_timeout=10)
    pw = USERS[user][1] if password is None else password
    if pw:
        kw["password"] = pw
    if transport == "tls":
        kw.update(sslmode="verify-full", sslrootcert=str(server.certs.ca))
    else:
        kw["sslmode"] = "disable"
    return kw


TYPED = [
    ("int2", 7), ("int4", -42), ("int8", 9_000_000_000), ("float4", 1.5),
    ("float8", 2.25), ("bool", True), ("text", "héllo"), ("numeric", Decimal("12.345")),
]


@pytest.mark.parametrize("user,transport", CASES, ids=CASE_IDS)
def test_psycopg3(client_server, user, transport):
    with psycopg.connect(**conninfo(client_server, user, transport),
                         autocommit=True) as conn:
        assert conn.pgconn.ssl_in_use == (transport == "tls")
        assert conn.execute("SELECT 1").fetchall() == [(1,)]
        for typ, value in TYPED:
            for fmt in ("%t", "%b"):
                for binary in (False, True):
                    cur = conn.cursor(binary=binary)
                    got = cur.execute(f"SELECT {fmt}::{typ}", (value,)).fetchone()[0]
                    assert got == value, (typ, fmt, binary, got)
        # Server-side prepared statement, used several times.
        for i in range(3):
            cur = conn.execute("SELECT %s::int4 + 1, 'x' || %s::text", (i, str(i)),
                               prepare=True)
            assert cur.fetchone() == (i + 1, f"x{i}")
        # Typed errors, and the session goes on after each.
        with pytest.raises(psycopg.errors.DivisionByZero) as exc:
            conn.execute("SELECT 1/0")
        assert exc.value.diag.sqlstate == "22012"
        with pytest.raises(psycopg.errors.DivisionByZero):
            conn.execute("SELECT %s::int4 / 0", (1,))
        with pytest.raises(psycopg.errors.SyntaxError) as exc:
            conn.execute("SELEC 1")
        assert exc.value.diag.sqlstate == "42601"
        assert conn.execute("SELECT %s::int8", (5,)).fetchone() == (5,)


@pytest.mark.parametrize("user,transport", CASES, ids=CASE_IDS)
def test_psycopg2(client_server, user, transport):
    conn = psycopg2.connect(**conninfo(client_server, user, transport))
    try:
        conn.autocommit = True
        with conn.cursor() as cur:
            cur.execute("SELECT %s::int2, %s::int4, %s::int8, %s::float4, %s::float8, "
                        "%s::bool, %s::text, %s::numeric",
                        [v for _, v in TYPED])
            assert cur.fetchone() == tuple(v for _, v in TYPED)
            with pytest.raises(psycopg2.errors.DivisionByZero) as exc:
                cur.execute("SELECT 1/0")
            assert exc.value.pgcode == "22012"
            with pytest.raises(psycopg2.errors.SyntaxError) as exc:
                cur.execute("SELEC 1")
            assert exc.value.pgcode == "42601"
    finally:
        conn.close()


def test_psycopg3_transaction_mode(client_server):
    """Not autocommit: psycopg wraps statements in BEGIN ... COMMIT and reads
    the transaction status byte."""
    with psycopg.connect(**conninfo(client_server, "scram_u", "tls")) as conn:
        assert conn.execute("SELECT 1").fetchone() == (1,)
        assert conn.info.transaction_status == psycopg.pq.TransactionStatus.INTRANS
        with pytest.raises(psycopg.errors.DivisionByZero):
            conn.execute("SELECT 1/0")
        assert conn.info.transaction_status == psycopg.pq.TransactionStatus.INERROR
        with pytest.raises(psycopg.errors.InFailedSqlTransaction):
            conn.execute("SELECT 1")
        conn.rollback()
        assert conn.info.transaction_status == psycopg.pq.TransactionStatus.IDLE
        assert conn.execute("SELECT 2").fetchone() == (2,)
        conn.commit()


def test_psycopg3_pipeline_mode(client_server):
    with psycopg.connect(**conninfo(client_server, "md5_u", "plain"),
                         autocommit=True) as conn:
        with conn.pipeline():
            curs = [conn.execute("SELECT %s::int4 * 2", (i,)) for i in range(50)]
        assert [c.fetchone()[0] for c in curs] == [i * 2 for i in range(50)]


def test_psycopg3_server_side_cursor_fetches_in_pieces(client_server):
    """A named cursor: DECLARE is not in the SQL yet, so this checks the
    extended protocol's row limit the way libpq exposes it instead:
    single-row mode over Execute(maxrows=0) is what psycopg streams with."""
    with psycopg.connect(**conninfo(client_server, "trust_u", "plain"),
                         autocommit=True) as conn:
        cur = conn.cursor()
        rows = list(cur.stream("SELECT %s::int4", (7,)))
        assert rows == [(7,)]


@pytest.mark.parametrize("user", [u for u in USERS if USERS[u][0] != "trust"])
def test_psycopg3_wrong_password(client_server, user):
    with pytest.raises(psycopg.OperationalError, match="password authentication failed"):
        psycopg.connect(**conninfo(client_server, user, "plain", password="wrong"))
