"""The extended query protocol, byte by byte (tests/pgwire_raw.py).

Execute row limits and PortalSuspended, pipelines of many Parse/Bind/Execute
before one Sync, skipping to Sync after an error, the transaction status byte
of ReadyForQuery (and 25P02 in a failed block), Describe of a statement with
inferred parameter types, and the binary format of every type.
"""

import struct
from decimal import Decimal

import pytest

from pgwire_raw import (Raw, bind, close_msg, data_row, describe, error_fields,
                        execute, flush, parse, query, sync)

OID = {"bool": 16, "int8": 20, "int2": 21, "int4": 23, "text": 25,
       "float4": 700, "float8": 701, "varchar": 1043, "numeric": 1700}


@pytest.fixture
def conn(server):
    with Raw(server.port) as raw:
        msgs = raw.startup()
        assert msgs[-1] == (b"Z", b"I"), msgs
        yield raw


def kinds(msgs):
    return b"".join(k for k, _ in msgs)


def test_execute_row_limit_suspends_then_completes(conn):
    conn.send(parse("SELECT 41 + 1 AS answer"), bind(), execute(maxrows=1),
              execute(maxrows=1), sync())
    msgs = conn.until_ready()
    # As PostgreSQL: maxrows reached -> PortalSuspended, even when no row is
    # left; the next Execute returns the rest (none) and "SELECT 0".
    assert kinds(msgs) == b"12DsCZ", msgs
    assert data_row(msgs[2][1]) == [b"42"]
    assert msgs[4][1] == b"SELECT 0\x00"
    assert msgs[5] == (b"Z", b"I")


def test_execute_row_limit_larger_than_result(conn):
    conn.send(parse("SELECT 'a' || 'b'"), bind(), execute(maxrows=10), sync())
    msgs = conn.until_ready()
    assert kinds(msgs) == b"12DCZ", msgs
    assert data_row(msgs[2][1]) == [b"ab"]
    assert msgs[3][1] == b"SELECT 1\x00"


def test_suspended_named_portal_survives_in_a_transaction(conn):
    conn.send(query("BEGIN"))
    assert conn.until_ready()[-1] == (b"Z", b"T")
    conn.send(parse("SELECT $1::int4 * 2", name="s1"),
              bind([b"21"], portal="p1", stmt="s1"), execute("p1", maxrows=1), sync())
    msgs = conn.until_ready()
    assert kinds(msgs) == b"12DsZ", msgs
    assert msgs[-1] == (b"Z", b"T")
    # The portal is still there after Sync, inside the block.
    conn.send(execute("p1", maxrows=1), sync())
    msgs = conn.until_ready()
    assert kinds(msgs) == b"CZ", msgs
    assert msgs[0][1] == b"SELECT 0\x00"
    conn.send(query("COMMIT"))
    assert conn.until_ready()[-1] == (b"Z", b"I")
    # COMMIT ended the transaction: at the next Sync outside a block the
    # portals are gone.
    conn.send(sync())
    conn.until_ready()
    conn.send(execute("p1"), sync())
    msgs = conn.until_ready()
    assert kinds(msgs) == b"EZ", msgs
    assert error_fields(msgs[0][1])["C"] == "34000"


def test_unnamed_portal_dropped_at_sync_outside_a_block(conn):
    conn.send(parse("SELECT 1"), bind(), execute(maxrows=1), sync())
    assert kinds(conn.until_ready()) == b"12DsZ"
    conn.send(execute(maxrows=1), sync())
    msgs = conn.until_ready()
    assert kinds(msgs) == b"EZ"
    assert error_fields(msgs[0][1])["C"] == "34000"


def test_pipeline_of_many_statements_before_one_sync(conn):
    n = 1000
    batch = []
    for i in range(n):
        batch += [parse("SELECT $1::int8 + 1"), bind([str(i).encode()]), execute()]
    conn.send(*batch, sync())
    msgs = conn.until_ready()
    assert kinds(msgs) == b"12DC" * n + b"Z"
    values = [int(data_row(body)[0]) for kind, body in msgs if kind == b"D"]
    assert values == [i + 1 for i in range(n)]


def test_pipeline_of_named_statements_and_portals(conn):
    n = 200
    msgs = [parse(f"SELECT {i} AS c{i}", name=f"s{i}") for i in range(n)]
    msgs += [bind(portal=f"p{i}", stmt=f"s{i}") for i in range(n)]
    msgs += [execute(f"p{i}") for i in reversed(range(n))]
    conn.send(*msgs, sync())
    out = conn.until_ready()
    assert kinds(out) == b"1" * n + b"2" * n + b"DC" * n + b"Z"
    values = [int(data_row(body)[0]) for kind, body in out if kind == b"D"]
    assert values == list(reversed(range(n)))


def test_error_skips_to_sync(conn):
    conn.send(parse("SELECT 1"), bind(), execute(),
              parse("SELECT 1/0"), bind(), execute(),          # error at Execute
              parse("SELECT 2"), bind(), execute(),            # skipped
              describe(b"S", "nope"), close_msg(b"S", "x"),    # skipped too
              sync(),
              parse("SELECT 3"), bind(), execute(), sync())
    first = conn.until_ready()
    assert kinds(first) == b"12DC12EZ", first
    assert error_fields(first[6][1])["C"] == "22012"
    assert first[-1] == (b"Z", b"I")
    second = conn.until_ready()
    assert kinds(second) == b"12DCZ"
    assert data_row(second[2][1]) == [b"3"]


def test_parse_error_skips_to_sync_and_flush_does_not_end_it(conn):
    conn.send(parse("SELEC 1"), bind(), execute(), flush())
    msg = conn.recv_msg()
    assert msg[0] == b"E"
    assert error_fields(msg[1])["C"] == "42601"
    conn.send(parse("SELECT 9"), bind(), execute(), sync())
    # Everything before Sync is still skipped.
    assert kinds(conn.until_ready()) == b"Z"


def test_transaction_status_byte(conn):
    def ready_after(*msgs):
        conn.send(*msgs)
        out = conn.until_ready()
        return out[-1][1], out

    assert ready_after(query("SELECT 1"))[0] == b"I"
    assert ready_after(query("BEGIN"))[0] == b"T"
    assert ready_after(query("SELECT 1"))[0] == b"T"
    status, out = ready_after(query("SELECT 1/0"))
    assert status == b"E"
    # In a failed block everything but COMMIT/ROLLBACK is refused.
    status, out = ready_after(query("SELECT 1"))
    assert status == b"E"
    assert error_fields(out[0][1])["C"] == "25P02"
    status, out = ready_after(parse("SELECT 1"), bind(), execute(), sync())
    assert status == b"E"
    assert error_fields(out[0][1])["C"] == "25P02"
    # COMMIT of a failed block is a ROLLBACK.
    status, out = ready_after(query("COMMIT"))
    assert status == b"I"
    assert (b"C", b"ROLLBACK\x00") in out
    # The extended protocol tracks the same states.
    assert ready_after(parse("BEGIN"), bind(), execute(), sync())[0] == b"T"
    assert ready_after(parse("SELECT 1"), bind(), execute(), sync())[0] == b"T"
    assert ready_after(parse("ROLLBACK"), bind(), execute(), sync())[0] == b"I"


def test_describe_statement_infers_parameter_types(conn):
    conn.send(parse("SELECT $1::int4 + 1 AS a, 'x' || $2 AS b, $3::numeric(10,2) AS c",
                    name="d"),
              describe(b"S", "d"), sync())
    msgs = conn.until_ready()
    assert kinds(msgs) == b"1tTZ", msgs
    body = msgs[1][1]
    n = struct.unpack("!H", body[:2])[0]
    oids = list(struct.unpack(f"!{n}I", body[2:]))
    assert oids == [OID["int4"], OID["text"], OID["numeric"]]
    # RowDescription: names and type OIDs.
    desc = msgs[2][1]
    cols, pos = [], 2
    for _ in range(struct.unpack("!H", desc[:2])[0]):
        end = desc.index(b"\x00", pos)
        name = desc[pos:end].decode()
        table, attnum, oid, size, typmod, fmt = struct.unpack("!IhIhih", desc[end + 1:end + 19])
        cols.append((name, oid, fmt))
        pos = end + 19
    assert cols == [("a", OID["int4"], 0), ("b", OID["text"], 0),
                    ("c", OID["numeric"], 0)]


def test_describe_statement_with_declared_parameter_types(conn):
    conn.send(parse("SELECT $1 AS x", oids=[OID["int8"]]), describe(b"S"), sync())
    msgs = conn.until_ready()
    assert kinds(msgs) == b"1tTZ", msgs
    assert msgs[1][1] == struct.pack("!HI", 1, OID["int8"])


def test_describe_portal_reports_result_formats(conn):
    conn.send(parse("SELECT 1::int4, 'a'::text"), bind(result_formats=[1, 0]),
              describe(b"P"), execute(), sync())
    msgs = conn.until_ready()
    assert kinds(msgs) == b"12TDCZ", msgs
    row = data_row(msgs[3][1])
    assert row == [struct.pack("!i", 1), b"a"]


BINARY_CASES = [
    ("SELECT true", b"\x01"),
    ("SELECT 7::int2", struct.pack("!h", 7)),
    ("SELECT -7::int4", struct.pack("!i", -7)),
    ("SELECT 9000000000::int8", struct.pack("!q", 9000000000)),
    ("SELECT 1.5::float4", struct.pack("!f", 1.5)),
    ("SELECT 2.25::float8", struct.pack("!d", 2.25)),
    ("SELECT 'héllo'::text", "héllo".encode()),
    ("SELECT 'v'::varchar(3)", b"v"),
]


@pytest.mark.parametrize("sql,expected", BINARY_CASES, ids=[c[0] for c in BINARY_CASES])
def test_binary_results(conn, sql, expected):
    conn.send(parse(sql), bind(result_formats=[1]), execute(), sync())
    msgs = conn.until_ready()
    assert kinds(msgs) == b"12DCZ", msgs
    assert data_row(msgs[2][1]) == [expected]


def decode_numeric(b):
    """PostgreSQL's numeric binary format to a Decimal (or a special string)."""
    ndigits, weight, sign, dscale = struct.unpack("!hhHH", b[:8])
    digits = struct.unpack(f"!{ndigits}h", b[8:8 + 2 * ndigits])
    if sign == 0xC000:
        return "NaN"
    if sign in (0xD000, 0xF000):
        return "Infinity" if sign == 0xD000 else "-Infinity"
    value = Decimal(0)
    for i, d in enumerate(digits):
        value += Decimal(d) * Decimal(10000) ** (weight - i)
    if sign == 0x4000:
        value = -value
    return value.quantize(Decimal(1).scaleb(-dscale)) if dscale else value, dscale


NUMERIC_CASES = ["0", "1", "-1", "12345.678", "0.0001", "-0.5", "10000", "123456789.000000001",
                 "99999999999999999999.5", "0.00000123", "1e20"]


@pytest.mark.parametrize("text", NUMERIC_CASES)
def test_numeric_binary_matches_text(conn, text):
    sql = f"SELECT '{text}'::numeric"
    conn.send(parse(sql), bind(result_formats=[0]), execute(),
              parse(sql), bind(result_formats=[1]), execute(), sync())
    msgs = conn.until_ready()
    assert kinds(msgs) == b"12DC12DCZ", msgs
    as_text = data_row(msgs[2][1])[0].decode()
    value, dscale = decode_numeric(data_row(msgs[6][1])[0])
    assert value == Decimal(as_text)
    # The display scale survives: str() shows as many decimals as the text.
    frac = as_text.split(".")[1] if "." in as_text else ""
    assert dscale == len(frac)


def test_numeric_binary_special_values(conn):
    conn.send(parse("SELECT 'NaN'::numeric, 'Infinity'::numeric, '-Infinity'::numeric"),
              bind(result_formats=[1]), execute(), sync())
    msgs = conn.until_ready()
    assert kinds(msgs) == b"12DCZ", msgs
    assert [decode_numeric(v) for v in data_row(msgs[2][1])] == [
        "NaN", "Infinity", "-Infinity"]


def test_binary_parameters(conn):
    conn.send(parse("SELECT $1::int4 + 1, $2::int8 * 2, $3::float8 / 2, NOT $4::bool, "
                    "$5::text || '!', $6::int2 + 1"),
              bind([struct.pack("!i", 41), struct.pack("!q", 21), struct.pack("!d", 5.0),
                    b"\x00", b"hi", struct.pack("!h", 1)],
                   param_formats=[1], result_formats=[0]),
              execute(), sync())
    msgs = conn.until_ready()
    assert kinds(msgs) == b"12DCZ", msgs
    assert data_row(msgs[2][1]) == [b"42", b"42", b"2.5", b"t", b"hi!", b"2"]


def test_null_parameter_and_result(conn):
    conn.send(parse("SELECT $1::int4"), bind([None]), execute(), sync())
    msgs = conn.until_ready()
    assert data_row(msgs[2][1]) == [None]


def test_bind_with_wrong_parameter_count_is_an_error(conn):
    conn.send(parse("SELECT $1::int4"), bind([]), execute(), sync())
    msgs = conn.until_ready()
    assert kinds(msgs) == b"1EZ", msgs
    assert error_fields(msgs[1][1])["C"] == "08P01"


def test_empty_query_in_extended_mode(conn):
    conn.send(parse(""), bind(), describe(b"P"), execute(), sync())
    assert kinds(conn.until_ready()) == b"12nIZ"
