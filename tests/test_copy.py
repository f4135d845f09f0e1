"""COPY over the simple query protocol: FROM STDIN (text and csv) into tables
and streams, TO STDOUT, errors that name the line and write nothing, CopyFail,
and the rest of a query string running after the copy ends.

Clients: psql (\\copy and piped COPY FROM STDIN) and psycopg 3 (cursor.copy).
"""

import subprocess

import psycopg
import pytest


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
    r = psql(server, "CREATE TABLE t (id INT PRIMARY KEY)")
    assert r.returncode == 0
    r = subprocess.run(["psql", server.dsn, "-X", "-A", "-t"], capture_output=True, text=True,
                       input="COPY t FROM STDIN; SELECT count(*) FROM t;\n1\n2\n\\.\n",
                       timeout=60)
    assert r.returncode == 0, r.stderr
    assert r.stdout.splitlines()[-1] == "2"



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
    import threading
    import time

    hold = tmp_path / "hold"
    hold.write_text("")
    server = sluiced(env={"SLUICE_FAULT": "modify_before_commit:2:hold",
                          "SLUICE_FAULT_HOLD": str(hold)})
    with psycopg.connect(server.dsn, autocommit=True) as c:
        c.execute("CREATE TABLE t (k INT PRIMARY KEY, v TEXT)")
        c.execute("INSERT INTO t VALUES (1, 'a'), (2, 'b'), (3, 'c')")   # the 1st point
    out = {}

    def update():
        with psycopg.connect(server.dsn, autocommit=True) as c:
            out["update"] = c.execute("UPDATE t SET k = k + 10").statusmessage

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

    up = threading.Thread(target=update)
    up.start()
    deadline = time.monotonic() + 30
    while "modify_before_commit reached, holding" not in server.log_text():
        assert time.monotonic() < deadline, server.log_text()[-2000:]
        time.sleep(0.05)
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
