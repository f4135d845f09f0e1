"""COPY over the simple query protocol: FROM STDIN (text and csv) into tables
and streams, TO STDOUT, errors that name the line and write nothing, CopyFail,
and the rest of a query string running after the copy ends.

Clients: psql (\\copy and piped COPY FROM STDIN), psycopg 3 (cursor.copy) and
messages built by hand (tests/pgwire_raw.py), where the test needs a
particular message sequence (COPY and a SELECT in one Query message).
"""

import subprocess
import threading
import time

import psycopg
import pytest

from pgwire_raw import Raw, bind, data_row, error_fields, execute, message, parse, query, sync


def psql(server, *commands, stdin=None):
    args = ["psql", server.dsn, "-X", "-v", "ON_ERROR_STOP=1", "-A", "-t"]
    for cmd in commands:
        args += ["-c", cmd]
    return subprocess.run(args, input=stdin, capture_output=True, text=True, timeout=60)


def test_psql_copy_csv_with_header_and_copy_out(server, tmp_path):
    csv = tmp_path / "t.csv"
    csv.write_text('id,name,score\n1,a,1.5\n2,"b, c",\n3,,2\n')
    r = psql(server, "CREATE TABLE t (id INT PRIMARY KEY, name TEXT, score FLOAT8)",
             f"\\copy t from '{csv}' with (format csv, header)",
             "SELECT id, name, score FROM t ORDER BY id")
    assert r.returncode == 0, r.stderr
    assert r.stdout.splitlines()[-4:] == ["COPY 3", "1|a|1.5", "2|b, c|", "3||2"]
    r = psql(server, "COPY t TO STDOUT")
    assert r.stdout.splitlines() == ["1\ta\t1.5", "2\tb, c\t\\N", "3\t\\N\t2"]
    r = psql(server, "COPY (SELECT id, name FROM t WHERE id < 3) TO STDOUT WITH (FORMAT csv, HEADER)")
    assert r.stdout.splitlines() == ["id,name", "1,a", '2,"b, c"']


def test_bad_row_names_its_line_and_writes_nothing(server):
    psql(server, "CREATE TABLE t (id INT PRIMARY KEY, name TEXT, score FLOAT8)")
    r = psql(server, "COPY t FROM STDIN", stdin="4\tx\t1\n5\tbad\tzz\n")
    assert r.returncode != 0
    assert 'invalid input syntax for type double precision: "zz"' in r.stderr
    assert 'COPY t, line 2, column score: "zz"' in r.stderr
    assert psql(server, "SELECT count(*) FROM t").stdout.strip() == "0"


def test_psycopg_copy_rows_into_a_stream_then_the_query_string_goes_on(server):
    with psycopg.connect(server.dsn, autocommit=True) as c:
        c.execute("CREATE STREAM s (k BIGINT, v TEXT)")
        with c.cursor() as cur:
            with cur.copy("COPY s (k, v) FROM STDIN") as cp:
                for i in range(100_000):
                    cp.write_row((i, f"v{i % 7}"))
        assert c.execute("SELECT count(*), sum(k) FROM s").fetchone() == (100_000, 4999950000)
        with c.cursor() as cur:
            with cur.copy("COPY s FROM STDIN WITH (FORMAT csv)") as cp:
                cp.write(b'1,"x"\n2,"y, z"\n')
        assert c.execute("SELECT count(*) FROM s WHERE k < 3 AND v LIKE '%y%'").fetchone() == (1,)


def test_copy_fail_from_the_client_writes_nothing(server):
    with psycopg.connect(server.dsn, autocommit=True) as c:
        c.execute("CREATE TABLE t (id INT PRIMARY KEY)")
        with pytest.raises(psycopg.errors.QueryCanceled):
            with c.cursor() as cur:
                with cur.copy("COPY t FROM STDIN") as cp:
                    cp.write_row((1,))
                    raise psycopg.errors.QueryCanceled("client gave up")
        assert c.execute("SELECT count(*) FROM t").fetchone() == (0,)


def test_statements_after_copy_in_one_query_string(server):
    """COPY and a SELECT sent as ONE simple Query message (psql would split
    them): the server answers CopyInResponse, takes the rows, completes the
    COPY, then runs the SELECT of the same string, which sees the copied
    rows, and ends with one ReadyForQuery."""
    r = psql(server, "CREATE TABLE t (id INT PRIMARY KEY)")
    assert r.returncode == 0
    with Raw(server.port, timeout=20) as cl:
        cl.startup()
        cl.send(query("COPY t FROM STDIN; SELECT count(*) FROM t"))
        got = next_messages(cl, b"G")
        assert [k for k, _ in got] == [b"G"], got
        cl.send(message(b"d", b"1\n2\n"), message(b"c"))
        msgs = cl.until_ready()
        assert [k for k, _ in msgs] == [b"C", b"T", b"D", b"C", b"Z"], msgs
        assert msgs[0][1] == b"COPY 2\x00"
        assert data_row(msgs[2][1]) == [b"2"]
        assert msgs[3][1] == b"SELECT 1\x00"
        assert msgs[4][1] == b"I"


def start_held_update(sluiced, tmp_path, rows, update_sql):
    """A server with table t (k INT PRIMARY KEY, v TEXT) holding rows, and a
    thread running update_sql held just before its commit (fault point
    modify_before_commit), holding the modify lock until the file hold is
    removed.  Returns (server, hold, thread, out); out["update"] gets the
    UPDATE's status once it ends."""
    hold = tmp_path / "hold"
    hold.write_text("")
    server = sluiced(env={"SLUICE_FAULT": "modify_before_commit:2:hold",
                          "SLUICE_FAULT_HOLD": str(hold)})
    with psycopg.connect(server.dsn, autocommit=True) as c:
        c.execute("CREATE TABLE t (k INT PRIMARY KEY, v TEXT)")
        c.execute(f"INSERT INTO t VALUES {rows}")   # the 1st point
    out = {}

    def update():
        with psycopg.connect(server.dsn, autocommit=True) as c:
            out["update"] = c.execute(update_sql).statusmessage

    up = threading.Thread(target=update)
    up.start()
    deadline = time.monotonic() + 30
    while "modify_before_commit reached, holding" not in server.log_text():
        if time.monotonic() > deadline:
            hold.unlink()
            up.join(30)
            raise AssertionError(server.log_text()[-2000:])
        time.sleep(0.05)
    return server, hold, up, out


def test_copy_into_a_table_waits_for_an_update_in_flight(sluiced, tmp_path):
    """COPY FROM into a table takes the lock that INSERT, UPDATE and DELETE
    take, so its key checks and write do not interleave with theirs.  An
    UPDATE that moves keys 1..3 to 11..13 is held just before its commit
    (fault point modify_before_commit, holding the lock); a COPY of key 11
    meanwhile waits -- the loop goes on answering, and a CancelRequest ends
    another such wait with 57014 -- and once the UPDATE commits it fails
    with 23505 and writes nothing.  (Without the lock the
    COPY saw no key 11, wrote it, and the UPDATE then overwrote it: both
    said they succeeded and the copied row was lost.)"""
    server, hold, up, out = start_held_update(sluiced, tmp_path, "(1, 'a'), (2, 'b'), (3, 'c')",
                                              "UPDATE t SET k = k + 10")

    def copy(key="copy", row="11\tcopied\n", conns=None):
        try:
            with psycopg.connect(server.dsn, autocommit=True) as c:
                if conns is not None:
                    conns.append(c)
                with c.cursor().copy("COPY t FROM STDIN") as cp:
                    cp.write(row)
                out[key] = "COPY 1"
        except psycopg.Error as e:
            out[key] = e.sqlstate

    cp = threading.Thread(target=copy)
    cp.start()
    cp.join(2)
    # a second COPY waiting for the lock is cancelled by its client (57014)
    conns = []
    cp2 = threading.Thread(target=copy, args=("cancelled", "12\tx\n", conns))
    cp2.start()
    try:
        assert cp.is_alive(), f"the COPY ended while the UPDATE held the lock: {out}"
        with psycopg.connect(server.dsn, autocommit=True) as c:    # the loop answers
            assert c.execute("SELECT 1").fetchone() == (1,)
        time.sleep(1)
        assert cp2.is_alive() and conns, out
        conns[0].cancel()
        cp2.join(10)
        assert out.pop("cancelled", None) == "57014", out
    finally:
        hold.unlink()
        up.join(30)
        cp.join(30)
        cp2.join(30)
    assert out == {"update": "UPDATE 3", "copy": "23505"}, out
    with psycopg.connect(server.dsn, autocommit=True) as c:
        assert c.execute("SELECT k, v FROM t ORDER BY k").fetchall() == \
            [(11, "a"), (12, "b"), (13, "c")]


# statement_timeout and COPY FROM STDIN (PostgreSQL: the timeout runs from
# the COPY's start, the wait for the client's data included, and ends it with
# 57014; the protocol then answers ErrorResponse, and ReadyForQuery at once
# after a simple Query, at the Sync after an Execute; the CopyData, CopyDone
# or CopyFail the client still sends is dropped).

TIMEOUT_MESSAGE = "canceling statement due to statement timeout"


def next_messages(cl, until=b"Z"):
    """Messages up to and including the first of type until."""
    msgs = []
    while True:
        m = cl.recv_msg()
        assert m is not None, f"the server closed the connection after {msgs}"
        msgs.append(m)
        if m[0] == until:
            return msgs


def copy_row_past_the_timeout(server, row, rel="t"):
    """A session with statement_timeout 1s COPYs row into rel, CopyDone
    included; asserts that the answer is 57014 for the timeout."""
    with Raw(server.port, timeout=20) as cl:
        cl.startup()
        cl.send(query("SET statement_timeout = '1s'"))
        cl.until_ready()
        cl.send(query(f"COPY {rel} FROM STDIN"))
        assert next_messages(cl, b"G")[-1][0] == b"G"
        cl.send(message(b"d", row), message(b"c"))
        msgs = cl.until_ready()
        errs = [error_fields(b) for k, b in msgs if k == b"E"]
        assert [(e["C"], e["M"]) for e in errs] == [("57014", TIMEOUT_MESSAGE)], msgs


@pytest.mark.parametrize("protocol", ["simple", "extended"])
def test_statement_timeout_ends_a_copy_whose_client_is_slow(server, protocol):
    """A client that starts COPY FROM STDIN into a table and sends its data
    slower than statement_timeout: the COPY ends with 57014 (statement
    timeout) while the client still sends, writes nothing, and the session
    goes on.  (On the old code the timer only ran for statements on a worker:
    the COPY went on for as long as the client sent, and wrote its rows.)"""
    with Raw(server.port, timeout=10) as cl:
        cl.startup()
        cl.send(query("CREATE TABLE t (id INT PRIMARY KEY)"))
        cl.until_ready()
        cl.send(query("SET statement_timeout = '300ms'"))
        cl.until_ready()
        if protocol == "simple":
            cl.send(query("COPY t FROM STDIN"))
        else:
            cl.send(parse("COPY t FROM STDIN"), bind(), execute())
        got = next_messages(cl, b"G")
        assert got[-1][0] == b"G", got
        cl.send(message(b"d", b"1\n"))
        # the client is slow: the timeout passes before its next row
        msgs = next_messages(cl, b"E")
        fields = error_fields(msgs[-1][1])
        assert (fields["C"], fields["M"]) == ("57014", TIMEOUT_MESSAGE), fields
        # what the client still sends for the COPY is dropped
        cl.send(message(b"d", b"2\n"), message(b"c"))
        if protocol == "extended":
            cl.send(sync())
        tail = cl.until_ready()
        assert [k for k, _ in tail] == [b"Z"], tail
        assert tail[-1][1] == b"I"
        cl.send(query("SET statement_timeout = 0"))
        cl.until_ready()
        cl.send(query("SELECT count(*) FROM t"))
        assert [data_row(b) for k, b in cl.until_ready() if k == b"D"] == [[b"0"]]
        # a COPY that ends within the timeout is not touched by it later
        cl.send(query("SET statement_timeout = '500ms'"))
        cl.until_ready()
        cl.send(query("COPY t FROM STDIN"))
        assert next_messages(cl, b"G")[-1][0] == b"G"
        cl.send(message(b"d", b"3\n"), message(b"c"))
        done = cl.until_ready()
        assert [k for k, _ in done] == [b"C", b"Z"], done
        time.sleep(1)
        cl.send(query("SELECT id FROM t"))
        assert [data_row(b) for k, b in cl.until_ready() if k == b"D"] == [[b"3"]]


def test_statement_timeout_ends_a_table_copy_waiting_for_the_lock(sluiced, tmp_path):
    """A COPY into a table whose CopyDone came while an UPDATE holds the
    modify lock (held at fault point modify_before_commit): statement_timeout
    ends its wait with 57014, the server answers at once (the UPDATE still
    holds the lock), and the COPY wrote nothing.  (On the old code only a
    CancelRequest or shutdown ended that wait.)"""
    server, hold, up, out = start_held_update(sluiced, tmp_path, "(1, 'a')",
                                              "UPDATE t SET v = 'b'")
    try:
        copy_row_past_the_timeout(server, b"2\tcopied\n")
        assert up.is_alive(), "the UPDATE ended: the COPY did not wait for the lock"
    finally:
        hold.unlink()
        up.join(30)
    assert out == {"update": "UPDATE 1"}, out
    with psycopg.connect(server.dsn, autocommit=True) as c:
        assert c.execute("SELECT k, v FROM t ORDER BY k").fetchall() == [(1, "b")]


def test_statement_timeout_ends_a_stream_copy_waiting_for_a_part(sluiced, tmp_path):
    """A COPY into a stream whose first part's write is held (fault point
    stream_append_before_write): statement_timeout ends the COPY with 57014
    at once, ReadyForQuery follows, the rest of the input is dropped, and
    the part being written stays (the detail counts its rows), as a COPY into
    a stream keeps the parts written before it failed.  (On the old code the
    COPY waited for the part's write however long, past the timeout.)"""
    hold = tmp_path / "hold"
    hold.write_text("")
    server = sluiced(env={"SLUICE_FAULT": "stream_append_before_write:1:hold",
                          "SLUICE_FAULT_HOLD": str(hold)})
    line = b"1,abcdefghijklmnopqrstuvwxyz0123456789\n"
    piece = line * ((16 << 10) // len(line))      # CopyData of 16 kB
    pieces = 32                                     # 512 kB: past a part
    try:
        with Raw(server.port, timeout=20) as cl:
            cl.startup()
            cl.send(query("CREATE STREAM s (a bigint, b text)"))
            cl.until_ready()
            cl.send(query("SET statement_mem = '1MB'"))     # parts of 128 kB
            cl.until_ready()
            cl.send(query("SET statement_timeout = '1s'"))
            cl.until_ready()
            cl.send(query("COPY s FROM STDIN (FORMAT csv)"))
            assert next_messages(cl, b"G")[-1][0] == b"G"
            cl.send(*[message(b"d", piece)] * pieces)
            msgs = cl.until_ready()
            errs = [error_fields(b) for k, b in msgs if k == b"E"]
            assert [(e["C"], e["M"]) for e in errs] == [("57014", TIMEOUT_MESSAGE)], msgs
            assert "fault point stream_append_before_write reached, holding" in \
                server.log_text()
            detail = errs[0].get("D", "")
            assert 'rows of this COPY were appended to stream "s"' in detail, detail
            kept = int(detail.split()[0])
            assert 0 < kept < pieces * (len(piece) // len(line))
            # the rest of that COPY is dropped; once the part is written the
            # session goes on, and the stream holds that part
            cl.send(message(b"d", piece), message(b"c"))
            hold.unlink()
            cl.send(query("SET statement_timeout = 0"))
            cl.until_ready()
            cl.send(query("SELECT count(*) FROM s"))
            assert [data_row(b) for k, b in cl.until_ready() if k == b"D"] == \
                [[str(kept).encode()]]
    finally:
        if hold.exists():
            hold.unlink()


def test_statement_timeout_ends_a_stream_copy_whose_last_part_is_queued(sluiced, tmp_path):
    """In group commit mode the last part of a COPY into a stream is written
    by the engine's pool; with its one worker held in a continuous query's
    batch (fault point batch_middle), that part waits in the queue.
    statement_timeout takes it out: 57014 at once, long before the worker
    is free, and the part is never written.  (On the old code the COPY
    waited for the worker however long, past its timeout.)"""
    hold = tmp_path / "hold"
    hold.write_text("")
    server = sluiced("--engine-workers=1", "--commit-mode=group",
                     env={"SLUICE_FAULT": "batch_middle:1:hold",
                          "SLUICE_FAULT_HOLD": str(hold)})
    try:
        with psycopg.connect(server.dsn, autocommit=True) as c:
            c.execute("CREATE STREAM s (a bigint, b text)")
            c.execute("CREATE CONTINUOUS QUERY q WITH (trigger = '0') AS "
                      "SELECT a, b FROM s")
            c.execute("INSERT INTO s VALUES (1, 'inserted')")
        wait = time.monotonic() + 30
        while "fault point batch_middle reached, holding" not in server.log_text():
            assert time.monotonic() < wait, "the batch never held the worker"
            time.sleep(0.1)
        started = time.monotonic()
        copy_row_past_the_timeout(server, b"2\tcopied\n", rel="s")
        assert time.monotonic() - started < 5
    finally:
        hold.unlink()
    with psycopg.connect(server.dsn, autocommit=True) as c:
        wait = time.monotonic() + 30
        while c.execute("SELECT count(*) FROM q").fetchone() != (1,):
            assert time.monotonic() < wait, "the held batch did not end"
            time.sleep(0.1)
        assert c.execute("SELECT a, b FROM s").fetchall() == [(1, "inserted")]


def test_statement_timeout_ends_a_table_copy_queued_for_a_worker(sluiced):
    """With statement_workers = 1 busy in pg_sleep, a COPY into a table whose
    CopyDone came waits in the statements' queue; statement_timeout takes it
    out of the queue: 57014 long before the sleep ends, and nothing written.
    (Without the queue's cancel it ended with 57014 only once the worker was
    free, 10 s past its timeout.)"""
    server = sluiced("--statement-workers=1")
    with psycopg.connect(server.dsn, autocommit=True) as c:
        c.execute("CREATE TABLE t (k INT PRIMARY KEY)")
    out = {}
    slept_at = []

    def sleep():
        with psycopg.connect(server.dsn, autocommit=True) as c:
            out["sleep"] = c.execute("SELECT pg_sleep(10)").fetchone()
            slept_at.append(time.monotonic())

    sl = threading.Thread(target=sleep)
    sl.start()
    try:
        time.sleep(0.5)     # the sleep holds the worker (asserted below)
        copy_row_past_the_timeout(server, b"7\n")
        answered_at = time.monotonic()
    finally:
        sl.join(30)
    assert out == {"sleep": ("",)}, out
    # answered from the queue, long before the worker was free
    assert slept_at[0] - answered_at > 4, (slept_at, answered_at)
    with psycopg.connect(server.dsn, autocommit=True) as c:
        assert c.execute("SELECT count(*) FROM t").fetchone() == (0,)
