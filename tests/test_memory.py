"""Issue 19, item 10: no statement from any role takes the server's memory.

- Results stream: the rows of SELECT * FROM generate_series(1, 1e9) reach
  the client as they are computed, a client that stops reading holds the
  statement paused with the server's memory flat, and an Execute row limit
  suspends the portal without computing the rest (PortalSuspended).
- Every statement has a budget: statement_mem per statement and the
  server's --max-memory for all of them; past either the statement ends
  with 53200 out_of_memory and the server goes on serving.
- A regular expression whose bounded repetitions expand past what glibc's
  regcomp can hold is refused before compiling (2201B).
- COPY FROM STDIN keeps no more than a bounded piece of its input.

Everything runs as the plain LOGIN role u, never the superuser.
"""

import socket
import struct
import time

import psycopg
import pytest

from helpers import wait_for
from pgwire_raw import (CANCEL_REQUEST, Raw, bind, data_row, error_fields, execute, flush,
                        message, parse, query, sync)
from test_pgwire_limits import backend_key, rss_kib

HUGE_SERIES = "SELECT g FROM generate_series(1, 1000000000) g"


def make_role_u(server):
    with psycopg.connect(server.dsn, autocommit=True) as conn:
        conn.execute("CREATE ROLE u LOGIN PASSWORD 'pw-u'")


def connect_u(server):
    return psycopg.connect(f"host={server.host} port={server.port} user=u dbname=sluice "
                           "password=pw-u", autocommit=True)


def session_u(server):
    raw = Raw(server.port, timeout=10)
    msgs = raw.startup(user="u", password="pw-u")
    assert msgs[-1] == (b"Z", b"I"), msgs
    return raw


def select_1_answers(server):
    with connect_u(server) as other:
        started = time.monotonic()
        assert other.execute("SELECT 1").fetchall() == [(1,)]
        return time.monotonic() - started


def read_rows(raw, n):
    """The first n DataRows of the current result (anything else fails)."""
    rows = []
    while len(rows) < n:
        msg = raw.recv_msg()
        assert msg is not None, "server closed the connection"
        kind, body = msg
        if kind == b"D":
            rows.append(data_row(body))
        else:
            assert kind == b"T", (kind, body)
    return rows


@pytest.fixture
def mem_server(sluiced):
    server = sluiced()
    make_role_u(server)
    return server


@pytest.mark.timeout(120)
def test_huge_result_streams_and_pauses_for_a_slow_reader(mem_server):
    """The first rows of a billion-row result arrive at once; while the
    client reads nothing the statement waits with the server's memory flat;
    a CancelRequest then ends it (57014) and the session goes on.  (On the
    old code the whole result was built before the first row was sent: no
    row came within the timeout and the memory grew without bound.)"""
    server = mem_server
    raw = Raw(server.port, timeout=10)
    msgs = raw.startup(user="u", password="pw-u")
    pid, key = backend_key(msgs)
    raw.sock.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 65536)
    # a statement_timeout bounds the old code's blow-up in this test
    raw.send(query("SET statement_timeout = '6s'"))
    raw.until_ready()
    started = time.monotonic()
    raw.send(query(HUGE_SERIES))
    rows = read_rows(raw, 1000)
    assert rows[0] == [b"1"] and rows[-1] == [b"1000"]
    assert time.monotonic() - started < 5, "the first rows were not streamed"

    time.sleep(1.0)
    base = rss_kib(server.proc.pid)
    time.sleep(2.0)
    grown = rss_kib(server.proc.pid) - base
    assert grown < 64 * 1024, f"server grew by {grown >> 10} MiB while the client slept"
    assert select_1_answers(server) < 5

    with socket.create_connection((server.host, server.port), timeout=5) as c:
        c.sendall(struct.pack("!IIii", 16, CANCEL_REQUEST, pid, key))
    out = raw.until_ready()
    errors = [error_fields(b) for k, b in out if k == b"E"]
    assert errors and errors[0]["C"] == "57014", errors
    raw.send(query("SELECT 42"))
    out = raw.until_ready()
    assert [data_row(b) for k, b in out if k == b"D"] == [[b"42"]]
    raw.close()


@pytest.mark.timeout(120)
def test_execute_row_limit_suspends_the_portal_without_computing_the_rest(mem_server):
    """Execute(maxrows) over a billion rows answers PortalSuspended at once,
    and the next Execute goes on from where the first stopped."""
    server = mem_server
    raw = session_u(server)
    raw.send(query("SET statement_timeout = '6s'"))
    raw.until_ready()
    raw.send(query("BEGIN"))
    raw.until_ready()
    started = time.monotonic()
    raw.send(parse(HUGE_SERIES), bind(portal="p"), execute("p", maxrows=3), flush())
    got = []
    while True:
        kind, body = raw.recv_msg()
        got.append((kind, body))
        if kind in (b"s", b"C", b"E"):
            break
    assert time.monotonic() - started < 5, "the portal computed the whole result"
    assert [k for k, _ in got] == [b"1", b"2", b"D", b"D", b"D", b"s"], got
    assert [data_row(b) for k, b in got if k == b"D"] == [[b"1"], [b"2"], [b"3"]]
    time.sleep(1.0)
    base = rss_kib(server.proc.pid)
    time.sleep(1.0)
    assert rss_kib(server.proc.pid) - base < 32 * 1024

    raw.send(execute("p", maxrows=2), sync())
    out = raw.until_ready()
    assert [data_row(b) for k, b in out if k == b"D"] == [[b"4"], [b"5"]]
    assert [k for k, _ in out] == [b"D", b"D", b"s", b"Z"]
    # Close ends the statement; the session goes on.
    raw.send(query("COMMIT"))
    raw.until_ready()
    raw.send(query("SELECT 7"))
    out = raw.until_ready()
    assert [data_row(b) for k, b in out if k == b"D"] == [[b"7"]]
    raw.close()


def test_row_limit_on_a_statement_that_reads_the_loop(mem_server):
    """A SELECT over a system relation (run on the loop) suspends too, and
    its rows come out in order across Executes."""
    server = mem_server
    with connect_u(server) as conn:
        names = [r[0] for r in conn.execute("SELECT name FROM sys.settings").fetchall()]
    assert len(names) > 6
    raw = session_u(server)
    raw.send(parse("SELECT name FROM sys.settings"), bind(), execute(maxrows=4),
             execute(maxrows=0), sync())
    out = raw.until_ready()
    kinds = [k for k, _ in out]
    assert kinds[:7] == [b"1", b"2", b"D", b"D", b"D", b"D", b"s"], kinds
    got = [data_row(b)[0].decode() for k, b in out if k == b"D"]
    assert got == names
    (tag,) = [b for k, b in out if k == b"C"]
    assert tag == f"SELECT {len(names) - 4}".encode() + b"\x00"
    raw.close()


def assert_out_of_memory(conn, sql, bound):
    with pytest.raises(psycopg.Error) as exc:
        conn.execute(sql).fetchall()
    assert exc.value.sqlstate == "53200", (exc.value.sqlstate, str(exc.value))
    assert str(exc.value).startswith("out of memory")
    assert bound in exc.value.diag.message_detail, exc.value.diag.message_detail


CROSS_JOIN = "SELECT count(*) FROM " + ", ".join(
    f"(VALUES (1)) v{i}(x{i})" for i in range(600))


@pytest.mark.timeout(180)
@pytest.mark.parametrize("sql", [
    CROSS_JOIN,
    "SELECT length(repeat('x', 500000000))",
    "SELECT length(lpad('x', 200000000, 'ab'))",
    "SELECT count(*) FROM (SELECT g FROM generate_series(1, 20000000) g ORDER BY g DESC) s",
    "SELECT count(DISTINCT g) FROM generate_series(1, 20000000) g",
    "SELECT length(string_agg(repeat('y', 1000), ',')) FROM generate_series(1, 200000)",
    "SELECT count(*) FROM (SELECT sum(g) OVER (), pad FROM (SELECT g, repeat('x', 100) AS pad "
    "FROM generate_series(1, 2000000) g) t) s",
], ids=["cross-join-600", "repeat", "lpad", "sort", "distinct", "string_agg", "window"])
def test_statement_mem_ends_the_statement_not_the_server(mem_server, sql):
    server = mem_server
    with connect_u(server) as conn:
        conn.execute("SET statement_mem = '64MB'")
        assert conn.execute("SHOW statement_mem").fetchone() == ("64MB",)
        assert_out_of_memory(conn, sql, "statement_mem (64MB)")
        # the same session, and every other, goes on
        assert conn.execute("SELECT 1").fetchall() == [(1,)]
        assert select_1_answers(server) < 5
    assert server.alive()


def test_statement_mem_setting(mem_server):
    with connect_u(mem_server) as conn:
        assert conn.execute("SHOW statement_mem").fetchone() == ("1GB",)
        conn.execute("SET statement_mem = 2048")
        assert conn.execute("SHOW statement_mem").fetchone() == ("2MB",)
        conn.execute("SET statement_mem = '1536kB'")
        assert conn.execute("SHOW statement_mem").fetchone() == ("1536kB",)
        for bad, state in (("'64XB'", "22023"), ("'12'", "22023"), ("'abc'", "22023")):
            with pytest.raises(psycopg.Error) as exc:
                conn.execute(f"SET statement_mem = {bad}")
            assert exc.value.sqlstate == state, bad
        conn.execute("RESET statement_mem")
        # within the budget, the same statements answer
        assert conn.execute("SELECT length(repeat('x', 1000000))").fetchone() == (1000000,)
        assert conn.execute("SELECT count(*) FROM (VALUES (1)) a(x), (VALUES (2)) b(y)"
                            ).fetchone() == (1,)


@pytest.mark.timeout(120)
def test_max_memory_bounds_all_statements_together(sluiced):
    """--max-memory: a statement within its own statement_mem still ends
    with 53200 when all statements together would pass the server's bound."""
    server = sluiced("--max-memory", "64MB")
    make_role_u(server)
    with psycopg.connect(server.dsn, autocommit=True) as conn:
        rows = dict(conn.execute("SELECT name, setting FROM sys.settings").fetchall())
    assert rows["max_memory"] == str(64 << 20)
    with connect_u(server) as conn:
        assert_out_of_memory(conn, CROSS_JOIN, "max_memory (64MB)")
        assert conn.execute("SELECT 1").fetchall() == [(1,)]


WIDE_FROM = "SELECT count(*) FROM " + ", ".join(
    f"(VALUES (1)) v{i}(x{i})" for i in range(2000))


def prepare_wide(conn):
    """Parse of WIDE_FROM as the named statement "wide": "ok", or the
    SQLSTATE and the bound its detail names."""
    res = conn.pgconn.prepare(b"wide", WIDE_FROM.encode())
    if res.status == psycopg.pq.ExecStatus.COMMAND_OK:
        return "ok"
    state = res.error_field(psycopg.pq.DiagnosticField.SQLSTATE).decode()
    detail = (res.error_field(psycopg.pq.DiagnosticField.MESSAGE_DETAIL) or b"").decode()
    return f"{state} {detail[detail.find('max_memory'):].rstrip('.')}"


@pytest.mark.timeout(180)
def test_planning_is_bounded_by_statement_mem_and_max_memory(sluiced):
    """The analysis and plan of a statement count too: a FROM list of 2,000
    items plans to millions of columns (about 100 MB), which EXPLAIN alone
    builds.  Past statement_mem it ends with 53200 before running; and the
    plans that sessions hold at once count against --max-memory, so
    sessions preparing such statements together cannot pass it (before,
    25 of them held 2.7 GB under --max-memory 512MB)."""
    server = sluiced("--max-memory", "256MB")
    make_role_u(server)
    with connect_u(server) as conn:
        conn.execute("SET statement_mem = '32MB'")
        assert_out_of_memory(conn, "EXPLAIN " + WIDE_FROM, "statement_mem (32MB)")
        conn.execute("RESET statement_mem")
        plan = conn.execute("EXPLAIN " + WIDE_FROM).fetchall()
        assert len(plan) > 2000
        # a named prepared statement (Parse) holds its plan: two fit under
        # 256MB, the sessions that prepare more than that at once end with
        # 53200
        conns = [connect_u(server) for _ in range(6)]
        try:
            got = [prepare_wide(c) for c in conns]
            assert got[0] == "ok" and "53200 max_memory (256MB)" in got, got
        finally:
            for c in conns:
                c.close()
        # the plans went with their sessions (closed on the loop, soon
        # after the clients hang up): one prepares again
        assert wait_for(lambda: prepare_wide(conn), "ok", timeout=20) == "ok"
        assert conn.execute("SELECT 1").fetchall() == [(1,)]
    assert server.alive()


@pytest.mark.timeout(60)
def test_regex_too_complex_is_refused_before_compiling(mem_server):
    with connect_u(mem_server) as conn:
        started = time.monotonic()
        for pattern in ("((((((((((x{255}){255}){255}){255})))))))", "(x{1000}){1000}",
                        "((a|b{200}){200}|c){50}"):
            with pytest.raises(psycopg.Error) as exc:
                conn.execute(f"SELECT 'x' ~ '{pattern}'").fetchall()
            assert exc.value.sqlstate == "2201B"
            assert "regular expression is too complex" in str(exc.value)
        assert time.monotonic() - started < 5
        # bounded repetitions within the limit still match as before
        assert conn.execute(
            "SELECT 'xx' ~ '^(x{2}|y)$', 'xy' ~ '^(x{2}|y)$', 'abab' ~ '^(ab){1,3}$', "
            "'a{' ~ 'a[{]', 'x{' ~ 'x\\{'").fetchone() == (True, False, True, True, True)


COPY_LINE = b"1,abcdefghijklmnopqrstuvwxyz0123456789\n"


def copy_in(conn, sql, total_bytes, line=COPY_LINE):
    """COPY sql with total_bytes of lines, written in 1 MiB pieces."""
    piece = line * ((1 << 20) // len(line))
    with conn.cursor() as cur:
        with cur.copy(sql) as copy:
            sent = 0
            while sent < total_bytes:
                copy.write(piece)
                sent += len(piece)
    return sent // len(line)


def create_for_u(server, ddl):
    """Runs ddl (of a relation t) as the superuser and lets u read and insert."""
    with psycopg.connect(server.dsn, autocommit=True) as conn:
        conn.execute(ddl)
        conn.execute("GRANT SELECT, INSERT ON t TO u")


@pytest.mark.timeout(300)
def test_copy_into_table_past_statement_mem_loads_in_bounded_memory(mem_server):
    """A COPY into a table holds one part of its rows (the rest in run
    files, tests/test_copy_table.py), so 32 MB (four times the budget) load
    under statement_mem = 8MB; a key met twice is 23505 and writes nothing;
    a line larger than statement_mem is still 53200.  (On the old code it
    held every row to the end and the load ended with 53200.)"""
    server = mem_server
    create_for_u(server, "CREATE TABLE t (a bigint, b text)")
    with connect_u(server) as conn:
        conn.execute("SET statement_mem = '8MB'")
        rows = copy_in(conn, "COPY t FROM STDIN (FORMAT csv)", 32 << 20)
        conn.execute("RESET statement_mem")
        assert conn.execute("SELECT count(*), sum(a) FROM t").fetchone() == (rows, rows)
    with psycopg.connect(server.dsn, autocommit=True) as conn:
        conn.execute("DROP TABLE t")
    create_for_u(server, "CREATE TABLE t (a bigint PRIMARY KEY, b text)")
    with connect_u(server) as conn:
        conn.execute("SET statement_mem = '8MB'")
        with pytest.raises(psycopg.Error) as exc:
            copy_in(conn, "COPY t FROM STDIN (FORMAT csv)", 16 << 20)    # key 1 each line
        assert exc.value.sqlstate == "23505", str(exc.value)
        assert conn.execute("SELECT count(*) FROM t").fetchone() == (0,)
        with pytest.raises(psycopg.Error) as exc:
            with conn.cursor() as cur:
                with cur.copy("COPY t FROM STDIN (FORMAT csv)") as cp:
                    cp.write(b"2," + b"x" * (9 << 20) + b"\n")   # one line
        assert exc.value.sqlstate == "53200", str(exc.value)
        assert "statement_mem (8MB)" in exc.value.diag.message_detail
        assert "send smaller messages" in exc.value.diag.message_hint
        assert conn.execute("SELECT count(*) FROM t").fetchone() == (0,)
    assert select_1_answers(server) < 5


BINARY_ROW = struct.pack("!hiqi", 2, 8, 7, 36) + b"abcdefghijklmnopqrstuvwxyz0123456789"
BINARY_HEADER = b"PGCOPY\n\xff\r\n\x00" + struct.pack("!ii", 0, 0)


@pytest.mark.timeout(180)
@pytest.mark.parametrize("form", ["csv", "columns", "binary"])
def test_copy_into_stream_past_statement_mem_is_written_in_parts(mem_server, form):
    """A COPY into a stream writes its rows in parts as they come, so one
    eight times statement_mem loads whole: the fast path (csv, every column),
    a column list (the others NULL) and FORMAT binary.  (On the old code it
    held every row until CopyDone and ended with 53200.)"""
    server = mem_server
    create_for_u(server, "CREATE STREAM t (a bigint, b text, c int)")
    with connect_u(server) as conn:
        conn.execute("SET statement_mem = '8MB'")
        if form == "binary":
            piece = BINARY_ROW * ((1 << 20) // len(BINARY_ROW))
            with conn.cursor() as cur, cur.copy("COPY t (a, b) FROM STDIN (FORMAT binary)") as cp:
                cp.write(BINARY_HEADER)
                for _ in range(64):
                    cp.write(piece)
                cp.write(struct.pack("!h", -1))
            n = 64 * (len(piece) // len(BINARY_ROW))
        else:
            cols = "(a, b)" if form == "columns" else ""
            line = (b"1,abcdefghijklmnopqrstuvwxyz0123456789\n" if form == "columns"
                    else b"1,abcdefghijklmnopqrstuvwxyz0123456789,5\n")
            n = copy_in(conn, f"COPY t {cols} FROM STDIN (FORMAT csv)", 64 << 20, line=line)
        got = conn.execute("SELECT count(*), count(c), min(b) FROM t").fetchone()
    assert got == (n, n if form == "csv" else 0, "abcdefghijklmnopqrstuvwxyz0123456789")
    assert select_1_answers(server) < 5
@pytest.mark.timeout(180)
def test_stream_copy_failing_half_way_keeps_the_parts_written(mem_server):
    """A bad row after several parts ends the COPY with the row's error; the
    parts written before it stay, and the detail counts their rows.  A COPY
    that fits in one part stays all or nothing."""
    server = mem_server
    create_for_u(server, "CREATE STREAM t (a bigint, b text)")
    line = COPY_LINE
    piece = line * ((1 << 20) // len(line))
    with connect_u(server) as conn:
        conn.execute("SET statement_mem = '8MB'")      # parts of 1 MB
        with pytest.raises(psycopg.Error) as exc:
            with conn.cursor() as cur, cur.copy("COPY t FROM STDIN (FORMAT csv)") as cp:
                for _ in range(16):
                    cp.write(piece)
                cp.write(b"zz,bad\n")
        assert exc.value.sqlstate == "22P02", str(exc.value)
        detail = exc.value.diag.message_detail or ""
        assert "rows of this COPY were appended to stream \"t\"" in detail, detail
        written = int(detail.split()[0])
        assert 0 < written < 16 * (len(piece) // len(line))
        assert conn.execute("SELECT count(*) FROM t").fetchone() == (written,)
        # within one part: nothing
        with pytest.raises(psycopg.Error) as exc:
            with conn.cursor() as cur, cur.copy("COPY t FROM STDIN (FORMAT csv)") as cp:
                cp.write(line * 1000 + b"zz,bad\n")
        assert exc.value.sqlstate == "22P02"
        assert exc.value.diag.message_detail is None
        assert conn.execute("SELECT count(*) FROM t").fetchone() == (written,)


@pytest.mark.timeout(180)
def test_stream_copy_failed_by_the_client_counts_the_rows_kept(mem_server):
    """CopyFail after several parts: 57014, and the detail counts the rows
    that stay, exactly what the stream then holds."""
    server = mem_server
    create_for_u(server, "CREATE STREAM t (a bigint, b text)")
    piece = COPY_LINE * ((1 << 20) // len(COPY_LINE))
    raw = Raw(server.port, timeout=60)
    try:
        raw.startup(user="u", password="pw-u")
        raw.send(query("SET statement_mem = '8MB'"))
        raw.until_ready()
        raw.send(query("COPY t FROM STDIN (FORMAT csv)"))
        assert raw.recv_msg()[0] == b"G"
        for _ in range(16):
            raw.send(message(b"d", piece))
        raw.send(message(b"f", b"changed my mind\x00"))
        msgs = raw.until_ready()
        errors = [error_fields(body) for kind, body in msgs if kind == b"E"]
        assert len(errors) == 1 and errors[0]["C"] == "57014", msgs
        written = int(errors[0]["D"].split()[0])
        assert 0 < written < 16 * (len(piece) // len(COPY_LINE))
        raw.send(query("SELECT count(*) FROM t"))
        rows = [data_row(body) for kind, body in raw.until_ready() if kind == b"D"]
        assert rows == [[str(written).encode()]], rows
    finally:
        raw.close()


@pytest.mark.timeout(180)
def test_concurrent_copies_share_max_memory(sluiced):
    """Four COPYs at once under --max-memory 24MB, each of 20 MB: into a
    stream each holds one part (3 MB), into a table one part of its sort
    (the rest waits in its run files), so all four load whole, into either
    (on the old code, which held each COPY's rows to its end, two of them
    passed the limit and one ended with 53200 each time).  The server
    keeps serving."""
    import threading
    server = sluiced("--max-memory", "24MB")
    make_role_u(server)
    with psycopg.connect(server.dsn, autocommit=True) as conn:
        conn.execute("CREATE STREAM s (a bigint, b text)")
        conn.execute("CREATE TABLE t (a bigint, b text)")
        conn.execute("GRANT SELECT, INSERT ON s, t TO u")

    def four(target):
        results = []

        def one():
            try:
                with connect_u(server) as conn:
                    results.append(copy_in(conn, f"COPY {target} FROM STDIN (FORMAT csv)",
                                           20 << 20))
            except psycopg.Error as e:
                results.append(e.sqlstate)

        threads = [threading.Thread(target=one) for _ in range(4)]
        for t in threads:
            t.start()
        for t in threads:
            t.join(120)
        return results

    results = four("s")
    assert len(results) == 4 and all(isinstance(r, int) for r in results), results
    with connect_u(server) as conn:
        assert conn.execute("SELECT count(*) FROM s").fetchone() == (sum(results),)
    results = four("t")
    assert len(results) == 4 and all(isinstance(r, int) for r in results), results
    with connect_u(server) as conn:
        assert conn.execute("SELECT count(*) FROM t").fetchone() == (sum(results),)
    assert select_1_answers(server) < 5
    assert server.alive()


def test_result_held_on_the_loop_is_bounded_by_statement_mem(mem_server):
    """A statement over a system relation runs on the loop and cannot pause:
    its result is held whole, so it ends with 53200 once that passes
    statement_mem, and the session goes on."""
    with connect_u(mem_server) as conn:
        conn.execute("SET statement_mem = '8MB'")
        with pytest.raises(psycopg.Error) as exc:
            conn.execute("SELECT g FROM generate_series(1, 3000000) g, "
                         "(SELECT 1 FROM sys.settings LIMIT 1) s").fetchall()
        assert exc.value.sqlstate == "53200", str(exc.value)
        assert "held whole" in exc.value.diag.message_detail
        assert conn.execute("SELECT count(*) FROM (SELECT g FROM generate_series(1, 3000) g, "
                            "(SELECT 1 FROM sys.settings LIMIT 1) s) x").fetchone() == (3000,)


@pytest.mark.timeout(120)
def test_hang_ups_mid_result_and_mid_portal_free_everything(mem_server):
    """A client that hangs up while its result streams (a job parked for
    want of room, or running), and one that leaves a suspended portal
    behind (closed by Sync, or by hanging up): the server frees the runs
    (the ASan build reports any leak or use after free at the end) and goes
    on serving."""
    server = mem_server
    for rows in (10, 5000):
        raw = session_u(server)
        raw.sock.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 65536)
        raw.send(query(HUGE_SERIES))
        read_rows(raw, rows)
        time.sleep(0.5)
        raw.sock.close()
    # a suspended portal dropped by Sync outside a block
    raw = session_u(server)
    raw.send(parse(HUGE_SERIES), bind(), execute(maxrows=2), sync())
    out = raw.until_ready()
    assert [k for k, _ in out] == [b"1", b"2", b"D", b"D", b"s", b"Z"], out
    raw.send(execute(maxrows=2), sync())
    out = raw.until_ready()
    assert out[0][0] == b"E" and error_fields(out[0][1])["C"] == "34000", out
    # a suspended portal left behind by a hang-up
    raw.send(query("BEGIN"))
    raw.until_ready()
    raw.send(parse(HUGE_SERIES), bind(portal="p"), execute("p", maxrows=2), flush())
    assert [raw.recv_msg()[0] for _ in range(4)] == [b"1", b"2", b"D", b"D"]
    raw.sock.close()
    time.sleep(0.5)
    assert select_1_answers(server) < 5
    assert server.alive()


def test_row_limit_on_returning_and_explain(mem_server):
    """INSERT ... RETURNING and EXPLAIN under an Execute row limit: their rows
    (made at once) come out maxrows at a time, PostgreSQL's way."""
    server = mem_server
    with psycopg.connect(server.dsn, autocommit=True) as conn:
        conn.execute("CREATE TABLE r (k int PRIMARY KEY)")
        conn.execute("GRANT SELECT, INSERT ON r TO u")
    raw = session_u(server)
    raw.send(parse("INSERT INTO r SELECT g FROM generate_series(1, 5) g RETURNING k"), bind(),
             execute(maxrows=2), execute(maxrows=2), execute(maxrows=2), sync())
    out = raw.until_ready()
    assert [k for k, _ in out] == [b"1", b"2", b"D", b"D", b"s", b"D", b"D", b"s", b"D", b"C",
                                   b"Z"], out
    assert [data_row(b) for k, b in out if k == b"D"] == [[b"1"], [b"2"], [b"3"], [b"4"], [b"5"]]
    assert [b for k, b in out if k == b"C"] == [b"INSERT 0 5\x00"]
    raw.send(parse("EXPLAIN SELECT k FROM r WHERE k > 1 ORDER BY k"), bind(),
             execute(maxrows=1), execute(), sync())
    out = raw.until_ready()
    kinds = [k for k, _ in out]
    assert kinds[:4] == [b"1", b"2", b"D", b"s"] and kinds[-2:] == [b"C", b"Z"], out
    assert len([k for k in kinds if k == b"D"]) >= 3
    raw.close()
    with connect_u(server) as conn:
        assert conn.execute("SELECT count(*) FROM r").fetchone() == (5,)


def test_copy_to_is_bounded_by_statement_mem(mem_server):
    """COPY TO runs on a statement worker and pauses for the client, as a
    SELECT does: its output (14 MB here) is never held whole, so only its
    query's memory counts against statement_mem -- a sort past it ends with
    53200.  A COPY TO over a system relation runs on the loop and holds its
    whole output: past statement_mem, 53200 too."""
    with connect_u(mem_server) as conn:
        conn.execute("SET statement_mem = '4MB'")
        with conn.cursor() as cur:
            n = 0
            with cur.copy("COPY (SELECT g FROM generate_series(1, 2000000) g) TO STDOUT") as copy:
                for chunk in copy:
                    n += bytes(chunk).count(b"\n")
        assert n == 2_000_000
        for sql in ("COPY (SELECT g FROM generate_series(1, 2000000) g ORDER BY g DESC) "
                    "TO STDOUT",
                    "COPY (SELECT g, relname FROM pg_class, generate_series(1, 200000) g) "
                    "TO STDOUT"):
            with pytest.raises(psycopg.Error) as exc:
                with conn.cursor() as cur:
                    with cur.copy(sql) as copy:
                        for _ in copy:
                            pass
            assert exc.value.sqlstate == "53200", (sql, str(exc.value))
        with conn.cursor() as cur:
            with cur.copy("COPY (SELECT g FROM generate_series(1, 1000) g) TO STDOUT") as copy:
                data = b"".join(bytes(b) for b in copy)
        assert data.count(b"\n") == 1000


def test_kafka_topic_pattern_too_complex_is_refused(mem_server):
    """The other regcomp of a user's pattern: a Kafka stream's topic_pattern
    is bounded the same way (at CREATE, before compiling)."""
    with connect_u(mem_server) as conn:
        with pytest.raises(psycopg.Error) as exc:
            conn.execute("CREATE STREAM k (v text) WITH (connector = 'kafka', "
                         "topic_pattern = '((((x{255}){255}){255}){255})', "
                         "bootstrap_servers = '127.0.0.1:1', format = 'raw')")
        assert exc.value.sqlstate == "2201B", str(exc.value)
        assert "too complex" in str(exc.value)
        assert conn.execute("SELECT 1").fetchone() == (1,)
