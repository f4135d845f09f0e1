"""COPY in the extended query protocol (Parse / Bind / Execute of COPY FROM
STDIN and TO STDOUT, raw messages), text format with HEADER, and COPY in and
out with psycopg2 (copy_expert) and asyncpg (copy_to_table,
copy_from_query, copy_from_table, and copy_records_to_table in the binary COPY
format with every column type).  psql and psycopg 3 are tests/test_copy.py's;
pgJDBC's CopyManager and pgx's CopyFrom are tests/clients'."""

import asyncio
import io
import struct

import asyncpg
import psycopg
import psycopg2

from pgwire_raw import (Raw, bind, data_row, error_fields, execute, message, parse,
                        query, sync)


def copy_data(b):
    return message(b"d", b)


def copy_done():
    return message(b"c")


def copy_fail(why):
    return message(b"f", why.encode() + b"\0")


def test_copy_in_and_out_over_the_extended_protocol(server):
    with Raw(server.port, timeout=30) as cl:
        cl.startup()
        cl.send(query("CREATE TABLE t (id INT PRIMARY KEY, name TEXT)"))
        cl.until_ready()
        cl.send(parse("COPY t FROM STDIN"), bind(), execute())
        msgs = [cl.recv_msg() for _ in range(3)]
        assert [m[0] for m in msgs] == [b"1", b"2", b"G"]
        cl.send(copy_data(b"1\tone\n2\t"), copy_data(b"two\n"), copy_done(), sync())
        msgs = cl.until_ready()
        assert (b"C", b"COPY 2\0") in msgs
        assert msgs[-1] == (b"Z", b"I")
        # COPY TO STDOUT
        cl.send(parse("COPY (SELECT id, name FROM t ORDER BY id) TO STDOUT WITH (FORMAT csv, HEADER)"),
                bind(), execute(), sync())
        msgs = cl.until_ready()
        kinds = [m[0] for m in msgs]
        assert kinds == [b"1", b"2", b"H", b"d", b"d", b"d", b"c", b"C", b"Z"]
        assert [m[1] for m in msgs if m[0] == b"d"] == [b"id,name\n", b"1,one\n", b"2,two\n"]
        # a bad row: the error, everything up to Sync skipped, nothing written
        cl.send(parse("COPY t FROM STDIN"), bind(), execute(), copy_data(b"3\tthree\nx\ty\n"),
                copy_done(), sync())
        msgs = cl.until_ready()
        errs = [error_fields(b) for k, b in msgs if k == b"E"]
        assert errs[0]["C"] == "22P02" and "line 2" in errs[0]["W"]
        assert msgs[-1] == (b"Z", b"I")
        # CopyFail
        cl.send(parse("COPY t FROM STDIN"), bind(), execute(), copy_data(b"4\tfour\n"),
                copy_fail("client gave up"), sync())
        msgs = cl.until_ready()
        errs = [error_fields(b) for k, b in msgs if k == b"E"]
        assert errs[0]["C"] == "57014"
        assert "client gave up" in errs[0]["M"]
        cl.send(query("SELECT count(*) FROM t"))
        assert [data_row(b) for k, b in cl.until_ready() if k == b"D"] == [[b"2"]]


def test_text_format_with_header(server):
    with psycopg.connect(server.dsn, autocommit=True) as c:
        c.execute("CREATE TABLE t (id INT PRIMARY KEY, name TEXT)")
        with c.cursor().copy("COPY t FROM STDIN WITH (HEADER)") as cp:
            cp.write("id\tname\n1\ta\n2\tb\n")
        assert c.execute("SELECT count(*) FROM t").fetchone() == (2,)
        out = io.StringIO()
        with c.cursor().copy("COPY t TO STDOUT WITH (FORMAT text, HEADER true)") as cp:
            for chunk in cp:
                out.write(bytes(chunk).decode())
        assert out.getvalue().splitlines() == ["id\tname", "1\ta", "2\tb"]


def test_psycopg2_copy_expert(server):
    conn = psycopg2.connect(server.dsn)
    try:
        conn.autocommit = True
        cur = conn.cursor()
        cur.execute("CREATE STREAM s (id BIGINT, name TEXT)")
        data = "".join(f"{i},name {i}\n" for i in range(5000))
        cur.copy_expert("COPY s FROM STDIN WITH (FORMAT csv)", io.StringIO(data))
        cur.execute("SELECT count(*), sum(id) FROM s")
        assert cur.fetchone() == (5000, sum(range(5000)))
        out = io.StringIO()
        cur.copy_expert("COPY (SELECT id, name FROM s WHERE id < 3 ORDER BY id) TO STDOUT", out)
        assert out.getvalue() == "0\tname 0\n1\tname 1\n2\tname 2\n"
    finally:
        conn.close()


def test_asyncpg_copy_in_and_out(server):
    async def main():
        conn = await asyncpg.connect(host=server.host, port=server.port, user="sluice",
                                     database="sluice")
        try:
            await conn.execute("CREATE TABLE t (id INT PRIMARY KEY, name TEXT, score FLOAT8)")
            csv = "".join(f"{i},n{i},{i / 2}\n" for i in range(1000)).encode()
            res = await conn.copy_to_table("t", source=io.BytesIO(csv), format="csv",
                                           columns=["id", "name", "score"])
            assert res == "COPY 1000"
            # copy_records_to_table: FORMAT binary, every column type
            await conn.execute("CREATE STREAM s (i INT, b BIGINT, f FLOAT8, n NUMERIC, t TEXT, "
                               "ok BOOL, d DATE, ts TIMESTAMP, tz TIMESTAMPTZ, iv INTERVAL, "
                               "by BYTEA, j JSONB)")
            import datetime as dt
            import decimal
            rec = (1, 2 ** 40, 0.5, decimal.Decimal("12.345"), "x\ty", True, dt.date(2024, 2, 29),
                   dt.datetime(2024, 1, 2, 3, 4, 5, 6), dt.datetime(2024, 1, 2, 3, 4, 5, tzinfo=dt.timezone.utc),
                   dt.timedelta(days=3, seconds=7), b"\x00\xff", '{"a": [1, 2]}')
            res = await conn.copy_records_to_table("s", records=[rec, (None,) * 12] * 500)
            assert res == "COPY 1000"
            row = await conn.fetchrow("SELECT * FROM s WHERE i = 1 LIMIT 1")
            assert tuple(row) == rec
            assert await conn.fetchval("SELECT count(*) FROM s WHERE i IS NULL AND j IS NULL") == 500
            buf = io.BytesIO()
            await conn.copy_from_query("SELECT id, name FROM t WHERE id < 2 ORDER BY id", output=buf)
            assert buf.getvalue() == b"0\tn0\n1\tn1\n"
            buf = io.BytesIO()
            await conn.copy_from_table("t", output=buf, format="csv")
            assert len(buf.getvalue().splitlines()) == 1000
        finally:
            await conn.close()
    asyncio.run(asyncio.wait_for(main(), 120))


def test_binary_copy_errors_are_clear_and_write_nothing(server):
    header = b"PGCOPY\n\xff\r\n\0" + struct.pack("!ii", 0, 0)
    row = struct.pack("!h", 2) + struct.pack("!i", 4) + struct.pack("!i", 7) + struct.pack("!i", 1) + b"x"
    with Raw(server.port, timeout=30) as cl:
        cl.startup()
        cl.send(query("CREATE TABLE t (id INT PRIMARY KEY, name TEXT)"))
        cl.until_ready()

        def copy_in(*chunks):
            cl.send(query("COPY t FROM STDIN (FORMAT binary)"))
            m = cl.recv_msg()
            assert m[0] == b"G" and m[1][0] == 1      # binary overall format
            cl.send(*[copy_data(c) for c in chunks], copy_done())
            msgs = cl.until_ready()
            return [error_fields(b) for k, b in msgs if k == b"E"], msgs

        errs, _ = copy_in(b"NOTPGCOPY" + b"\0" * 10)
        assert errs[0]["C"] == "22P04" and errs[0]["M"] == "COPY file signature not recognized"
        errs, _ = copy_in(header + struct.pack("!h", 3))
        assert errs[0]["M"] == "row field count is 3, expected 2"
        errs, _ = copy_in(header + struct.pack("!h", 2) + struct.pack("!i", 2) + b"ab"
                          + struct.pack("!i", -1))
        assert errs[0]["C"] == "22P03" and "column id" in errs[0]["W"]
        errs, _ = copy_in(header + row[:7])
        assert errs[0]["M"] == "unexpected EOF in COPY data"
        # a good one, split across CopyData messages, with the trailer
        errs, msgs = copy_in(header + row[:5], row[5:] + struct.pack("!h", -1))
        assert not errs and (b"C", b"COPY 1\0") in msgs
        cl.send(query("SELECT id, name FROM t"))
        assert [data_row(b) for k, b in cl.until_ready() if k == b"D"] == [[b"7", b"x"]]
