"""Arrays on the wire: psycopg 3 sends array parameters and reads array
results in PostgreSQL's text form and in its binary form (array_send /
array_recv: ndim, has-null flag, element OID, dimension and lower bound,
length-prefixed elements), and arrays stored in a table come back the same.

The expected values are the Python values psycopg was given (its own array
adapters are the independent model); the OIDs are PostgreSQL's pg_type
typarray values.
"""

import datetime
from decimal import Decimal

import psycopg
import pytest

CASES = [
    ("int2", [1, -2, None, 32767], 1005),
    ("int4", [1, 2, 3], 1007),
    ("int4", [None], 1007),
    ("int8", [9_000_000_000, -1], 1016),
    ("float8", [1.5, -0.25, 1e300], 1022),
    ("float4", [1.5, 2.25], 1021),
    ("bool", [True, False, None], 1000),
    ("text", ["a", "b c", 'q"uote', "back\\slash", "NULL", "", None, "{x,y}", "héllo"], 1009),
    ("varchar", ["x", "yz"], 1015),
    ("numeric", [Decimal("1.50"), Decimal("-12345678901234567890.123"), Decimal("0")], 1231),
    ("date", [datetime.date(2020, 1, 2), datetime.date(1999, 12, 31)], 1182),
    ("timestamp", [datetime.datetime(2020, 1, 2, 3, 4, 5, 600000)], 1115),
    ("bytea", [b"\x00\x01", b"", b"\xff"], 1001),
    ("interval", [datetime.timedelta(days=1, seconds=5)], 1187),
]
IDS = [f"{t}-{i}" for i, (t, _, _) in enumerate(CASES)]


def connect(server):
    return psycopg.connect(server.dsn, autocommit=True)


@pytest.mark.parametrize("typ,value,oid", CASES, ids=IDS)
def test_array_parameters_and_results(server, typ, value, oid):
    with connect(server) as conn:
        for fmt in ("%t", "%b"):
            for binary in (False, True):
                cur = conn.cursor(binary=binary)
                cur.execute(f"SELECT {fmt}::{typ}[]", (value,))
                assert cur.description[0].type_code == oid
                got = cur.fetchone()[0]
                if typ == "bytea":
                    got = [None if g is None else bytes(g) for g in got]
                assert got == value, (typ, fmt, binary, got)


def test_array_text_form(server):
    with connect(server) as conn:
        cur = conn.execute("SELECT %t::text[]::text", (["a b", 'c"d', None, "NULL", ""],))
        assert cur.fetchone()[0] == '{"a b","c\\"d",NULL,"NULL",""}'
        cur = conn.execute("SELECT '{}'::int4[]")
        assert cur.fetchone()[0] == []
        cur = conn.cursor(binary=True)
        cur.execute("SELECT '{}'::int4[], ARRAY[1,NULL]")
        assert cur.fetchone() == ([], [1, None])


def test_array_columns_round_trip(server):
    rows = [
        (1, [1, 2], ["x", "y z"], [Decimal("1.5")], [datetime.datetime(2021, 6, 7, 8, 9, 10)]),
        (2, [], [None, ""], [], None),
        (3, [None, 3], None, [Decimal("NaN")], []),
    ]
    with connect(server) as conn:
        conn.execute("CREATE TABLE wire_arr (id int PRIMARY KEY, a int[], b text[], "
                     "c numeric[], d timestamp[])")
        with conn.cursor() as cur:
            for k, row in enumerate(rows):
                fmt = "%b" if k % 2 else "%t"
                cur.execute(f"INSERT INTO wire_arr VALUES ({fmt}, {fmt}::int[], "
                            f"{fmt}::text[], {fmt}::numeric[], {fmt}::timestamp[])", row)
        for binary in (False, True):
            cur = conn.cursor(binary=binary)
            cur.execute("SELECT id, a, b, c, d FROM wire_arr ORDER BY id")
            got = cur.fetchall()
            assert [r[:3] for r in got] == [r[:3] for r in rows]
            assert got[0][3] == rows[0][3] and got[1][3] == []
            assert got[2][3][0].is_nan()
            assert [r[4] for r in got] == [r[4] for r in rows]
        # the element type of the column, as pg_attribute and RowDescription say
        cur = conn.execute("SELECT format_type(atttypid, atttypmod) FROM pg_attribute a "
                           "JOIN pg_class c ON a.attrelid = c.oid "
                           "WHERE c.relname = 'wire_arr' AND attnum > 1 ORDER BY attnum")
        assert [r[0] for r in cur] == ["integer[]", "text[]", "numeric[]",
                                       "timestamp without time zone[]"]
        # = ANY with an array parameter, in both formats
        for fmt in ("%t", "%b"):
            cur = conn.execute(f"SELECT id FROM wire_arr WHERE id = ANY({fmt}::int[]) "
                               "ORDER BY id", ([1, 3],))
            assert [r[0] for r in cur] == [1, 3]


def test_array_binary_errors(server):
    """A malformed binary array is 22P03; a two-dimensional one 0A000."""
    bad = [
        (b"\x00\x00\x00\x01\x00\x00\x00\x00\x00\x00\x00\x17", "22P03"),   # no dimension
        (b"\x00\x00\x00\x01\x00\x00\x00\x00\x00\x00\x00\x19"              # text OID in int4[]
         b"\x00\x00\x00\x01\x00\x00\x00\x01\x00\x00\x00\x01a", "22P03"),
        (b"\x00\x00\x00\x02\x00\x00\x00\x00\x00\x00\x00\x17"
         b"\x00\x00\x00\x01\x00\x00\x00\x01\x00\x00\x00\x01\x00\x00\x00\x01"
         b"\x00\x00\x00\x04\x00\x00\x00\x07", "0A000"),
    ]
    with connect(server) as conn:
        for data, state in bad:
            res = conn.pgconn.exec_params(b"SELECT $1::int4[]", [data], [1007], [1])
            assert res.error_field(psycopg.pq.DiagnosticField.SQLSTATE).decode() == state
        good = (b"\x00\x00\x00\x01\x00\x00\x00\x00\x00\x00\x00\x17"
                b"\x00\x00\x00\x02\x00\x00\x00\x01"
                b"\x00\x00\x00\x04\x00\x00\x00\x07\x00\x00\x00\x04\x00\x00\x00\x08")
        res = conn.pgconn.exec_params(b"SELECT $1::int4[]", [good], [1007], [1], 1)
        assert res.get_value(0, 0) == good
        res = conn.pgconn.exec_params(b"SELECT $1::int4[]::text", [good], [1007], [1])
        assert res.get_value(0, 0) == b"{7,8}"


def test_arrays_in_continuous_queries(server):
    """Arrays pass through a continuous query's filter and projection, and
    group as keys; the expected rows are computed here from the inserted
    values (the batch query over the stream must agree too)."""
    from helpers import wait_for

    events = [
        (1, ["a", "b"], [1, 2]),
        (2, ["c"], [3]),
        (3, ["b"], None),
        (4, ["a", "b"], []),
        (5, [], [None, 7]),
    ]
    with connect(server) as conn:
        conn.execute("CREATE STREAM ev (id bigint, tags text[], nums int[], ts timestamp)")
        conn.execute("CREATE CONTINUOUS QUERY ev_b WITH (trigger = '0') AS "
                     "SELECT id, tags, nums[1] AS first, array_append(nums, 0) AS nums0, "
                     "cardinality(tags) AS n FROM ev WHERE 'b' = ANY(tags)")
        conn.execute("CREATE CONTINUOUS QUERY ev_g WITH (trigger = '0', "
                     "output_mode = 'update') AS SELECT tags, count(*) AS n FROM ev "
                     "GROUP BY tags")
        for k, (i, tags, nums) in enumerate(events):
            fmt = "%b" if k % 2 else "%t"
            conn.execute(f"INSERT INTO ev VALUES ({fmt}, {fmt}, {fmt}, "
                         "'2026-01-01 00:00:00'::timestamp + %t * interval '1 second')",
                         (i, tags, nums, i))
        want_b = sorted(
            (i, tags, nums[0] if nums else None, (nums or []) + [0], len(tags))
            for i, tags, nums in events if "b" in tags)
        got = wait_for(lambda: sorted(tuple(r) for r in conn.execute(
            "SELECT id, tags, first, nums0, n FROM ev_b").fetchall()), want_b)
        assert got == want_b
        counts = {}
        for _, tags, _ in events:
            counts[tuple(tags)] = counts.get(tuple(tags), 0) + 1
        want_g = sorted((list(t), n) for t, n in counts.items())
        got = wait_for(lambda: sorted([list(r[0]), r[1]] for r in conn.execute(
            "SELECT tags, n FROM ev_g").fetchall()), [list(x) for x in want_g])
        assert got == [list(x) for x in want_g]
        batch = sorted([list(r[0]), r[1]] for r in conn.execute(
            "SELECT tags, count(*) FROM ev GROUP BY tags").fetchall())
        assert batch == [list(x) for x in want_g]
