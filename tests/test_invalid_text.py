"""Text that is not UTF-8 never gets in (docs/sql-reference.md, "Text and
encodings"): 22021 character_not_in_repertoire at every entry, dead letters
for connectors.

Covers: a files stream (JSON lines and CSV) fed invalid UTF-8, a lone
surrogate escape (\\ud800, \\udc00), a raw NUL and \\u0000 inside strings --
each such record a dead letter with its reason, the good ones rows, and the
rows read back as valid UTF-8 by a client; a Bind text parameter of bytes
ff ff ff in binary and in text format; SQL text with a raw invalid byte, and
E'\\xff'; COPY FROM STDIN with an invalid byte and with a \\xff escape;
jsonb input with invalid bytes; a startup packet whose user name or a
setting is not UTF-8 (FATAL; application_name is cleaned to ASCII instead,
as PostgreSQL does).  Each refusal is 22021 as the role u.
"""

import time

import psycopg
import pytest

import pgwire_raw as pw

DEADLINE = 120
PASSWORD = "pw-u-1"


def connect(server, user="sluice", password=None):
    return psycopg.connect(server.dsn.replace("user=sluice", f"user={user}"),
                           password=password, connect_timeout=10, autocommit=True)


def rows(server, sql):
    with connect(server) as c:
        return c.execute(sql).fetchall()


def wait_for(server, sql, want):
    end = time.monotonic() + DEADLINE
    got = None
    while time.monotonic() < end:
        got = rows(server, sql)
        if got == want:
            return
        time.sleep(0.1)
    pytest.fail(f"{sql!r}: waited for {want!r}, last got {got!r}")


@pytest.fixture
def server(sluiced):
    s = sluiced()
    with connect(s) as c:
        c.execute(f"CREATE ROLE u LOGIN PASSWORD '{PASSWORD}'")
        c.execute("CREATE TABLE t (id bigint PRIMARY KEY, s text, j jsonb)")
        c.execute("GRANT SELECT, INSERT ON t TO u")
    return s


def sqlstate(fn):
    try:
        fn()
    except psycopg.Error as e:
        return e.sqlstate
    return None


def test_files_stream_dead_letters_invalid_text(server, tmp_path):
    src = tmp_path / "in"
    src.mkdir()
    good = [b'{"id": 1, "s": "plain"}', b'{"id": 2, "s": "\\u00e9t\\u00e9 \\ud83d\\ude00"}',
            '{"id": 3, "s": "caf\u00e9"}'.encode()]
    bad = [b'{"id": 10, "s": "\xff\xff\xff"}',          # not UTF-8
           b'{"id": 11, "s": "\\ud800"}',               # lone high surrogate
           b'{"id": 12, "s": "x\\udc00y"}',             # lone low surrogate
           b'{"id": 13, "s": "a\x00b"}',                # raw NUL
           b'{"id": 14, "s": "a\\u0000b"}',             # escaped NUL
           b'{"id": 15, "s": "\xed\xa0\x80"}',          # a surrogate encoded in UTF-8
           b'{"id": 16, "other": "\xc0\xaf"}']          # overlong, in an unread field
    (src / "a.jsonl").write_bytes(b"\n".join(good[:2] + bad + good[2:]) + b"\n")
    (src / "b.csv").write_bytes(b"20,ok\n21,\xfe\n22,\xe2\x82\n23,fine\n")
    with connect(server) as c:
        c.execute(f"CREATE STREAM js (id bigint, s text) WITH (connector = 'files', "
                  f"path = '{src}', format = 'json', pattern = '*.jsonl', "
                  f"poll_interval = '100 ms')")
        c.execute(f"CREATE STREAM cs (id bigint, s text) WITH (connector = 'files', "
                  f"path = '{src}', format = 'csv', pattern = '*.csv', "
                  f"poll_interval = '100 ms')")
    wait_for(server, "SELECT count(*) FROM js_dead_letters", [(len(bad),)])
    wait_for(server, "SELECT count(*) FROM cs_dead_letters", [(2,)])
    # psycopg decodes every value as UTF-8: it would raise on a bad one
    assert rows(server, "SELECT id, s FROM js ORDER BY id") == [
        (1, "plain"), (2, "\u00e9t\u00e9 \U0001F600"), (3, "caf\u00e9")]
    assert rows(server, "SELECT id, s FROM cs ORDER BY id") == [(20, "ok"), (23, "fine")]
    dead = rows(server, "SELECT raw, reason FROM js_dead_letters ORDER BY byte_offset")
    assert [bytes(d[0]) for d in dead] == bad
    reasons = [d[1] for d in dead]
    assert "invalid byte sequence for encoding \"UTF8\": 0xff" in reasons[0]
    assert "surrogate" in reasons[1] and "surrogate" in reasons[2]
    assert "0x00" in reasons[3] and "\\u0000" in reasons[4]
    assert "0xed 0xa0 0x80" in reasons[5] and "0xc0 0xaf" in reasons[6]
    dead = rows(server, "SELECT raw, reason FROM cs_dead_letters ORDER BY byte_offset")
    assert [bytes(d[0]) for d in dead] == [b"21,\xfe", b"22,\xe2\x82"]
    assert all("invalid byte sequence" in d[1] for d in dead)


def raw_insert(server, value, fmt):
    """INSERT INTO t (id, s) VALUES (1, $1) as u over the extended protocol, $1
    sent as value in format fmt (0 text, 1 binary) with type text (oid 25):
    the ErrorResponse's fields, or None."""
    with pw.Raw(server.port) as r:
        r.startup(user="u", password=PASSWORD)
        r.send(pw.parse("INSERT INTO t (id, s) VALUES (1, $1)", oids=(25,)),
               pw.bind((value,), param_formats=(fmt,)), pw.execute(), pw.sync())
        for kind, body in r.until_ready():
            if kind == b"E":
                return pw.error_fields(body)
    return None


@pytest.mark.parametrize("fmt", [1, 0])
def test_bind_text_parameter_not_utf8(server, fmt):
    err = raw_insert(server, b"\xff\xff\xff", fmt)
    assert err is not None and err["C"] == "22021", err
    assert err["M"] == 'invalid byte sequence for encoding "UTF8": 0xff'
    assert raw_insert(server, "d\u00e9j\u00e0".encode(), fmt) is None
    assert rows(server, "SELECT s FROM t") == [("d\u00e9j\u00e0",)]


def test_sql_text_and_escapes_not_utf8(server):
    with pw.Raw(server.port) as r:
        r.startup(user="u", password=PASSWORD)
        for sql in (b"INSERT INTO t (id, s) VALUES (1, 'a\xffb')",
                    b"INSERT INTO t (id, s) VALUES (1, E'\\xff')",
                    b"INSERT INTO t (id, s) VALUES (1, E'\\355\\240\\200')",
                    b"INSERT INTO t (id, j) VALUES (1, '{\"a\": \"\xc3\"}')"):
            r.send(pw.query(sql))
            errs = [pw.error_fields(b) for k, b in r.until_ready() if k == b"E"]
            assert [e["C"] for e in errs] == ["22021"], (sql, errs)
    assert rows(server, "SELECT count(*) FROM t") == [(0,)]


@pytest.mark.parametrize("data", [b"1\t\xff\n", b"1\tab\\xffc\n", b"1\ta\\000b\n"])
def test_copy_not_utf8(server, data):
    with connect(server, "u", PASSWORD) as c:
        def copy():
            with c.cursor().copy("COPY t (id, s) FROM STDIN") as cp:
                cp.write(data)
        assert sqlstate(copy) == "22021"
    assert rows(server, "SELECT count(*) FROM t") == [(0,)]


@pytest.mark.parametrize("params", [{"user": b"u\xff"},
                                    {"user": "u", "DateStyle": b"ISO\xc3"}])
def test_startup_parameter_not_utf8(server, params):
    with pw.Raw(server.port) as r:
        msgs = r.startup(password=PASSWORD, **params)
        errs = [pw.error_fields(b) for k, b in msgs if k == b"E"]
        assert [e["C"] for e in errs] == ["22021"], msgs
        assert errs[0]["S"] == "FATAL"
    assert rows(server, "SELECT count(*) FROM pg_roles WHERE rolname LIKE 'u_%'") == [(0,)]
    with pw.Raw(server.port) as r:      # application_name: cleaned, as PostgreSQL
        msgs = r.startup(user="u", password=PASSWORD, application_name=b"app\xff")
        assert (b"S", b"application_name\x00app?\x00") in msgs, msgs
