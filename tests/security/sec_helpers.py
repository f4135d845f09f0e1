"""What the tests in tests/security share: connections as the bootstrap
superuser and as a plain LOGIN role, and the SQLSTATE a statement ends with.

The unprivileged role is made by the superuser with CREATE ROLE ... LOGIN
PASSWORD, never SUPERUSER, and logs in with that password (loopback logins
are trusted by default, so it is not asked for today).
"""

import psycopg

from helpers import sqlstate  # noqa: F401 (the tests import it from here)

ROLE = "u"
ROLE_PASSWORD = "u-password-1"


def connect(server, user="sluice", password=None):
    """A connection as user (the password, if given, for rules that ask)."""
    kw = {"password": password} if password is not None else {}
    return psycopg.connect(host=server.host, port=server.port, user=user, dbname="sluice",
                           autocommit=True, connect_timeout=10, sslmode="disable", **kw)


def make_role(server, name=ROLE):
    """CREATE ROLE name LOGIN (not a superuser); returns a connection as it."""
    with connect(server) as su:
        su.execute(f"CREATE ROLE {name} LOGIN PASSWORD '{ROLE_PASSWORD}'")
        row = su.execute("SELECT rolsuper FROM pg_roles WHERE rolname = %s", (name,)).fetchone()
        assert row == (False,), row
    return connect(server, name, ROLE_PASSWORD)


def error_of(conn, sql):
    """The psycopg error sql fails with (the test fails if it succeeds)."""
    try:
        conn.execute(sql)
    except psycopg.Error as e:
        return e
    raise AssertionError(f"succeeded, expected an error: {sql}")
