"""COPY FROM STDIN into a table in bounded memory, all or nothing.

A COPY into a table holds about one part of its rows (128 kB under
statement_mem = 1MB): the rest waits, sorted by key, in run files under
<data_dir>/state/bulk, and at the end the rows go into the table in one
atomic step (RocksDB table files ingested at once).  These tests load many
times statement_mem, as an unprivileged role, and check that:

- the table then holds exactly the rows (count and sums computed here);
- a bad last line, a key met twice in the input or already stored (23505)
  leave the table as it was;
- a SIGKILL before the ingest (fault point state_ingest_before) leaves the
  table as before after a restart, one right after it leaves it complete,
  and one at a random moment leaves it one or the other;
- a cancel or statement_timeout once the keys are checked, or a client
  gone mid-input, leave it as it was;
- a disk too full for its table files refuses it (53100), writing nothing;
- a reader sees the table before or after the COPY, never a part, and an
  INSERT waits for the COPY's key checks and write (the modify lock);
- a table without a primary key gets row ids that later INSERTs do not
  reuse, after a restart too;
- no temporary file is left, after an error or a crash.
"""

import os
import re
import threading
import time

import psycopg
import pytest

PASSWORD = "pw-u"
N_BIG = 800_003         # rows of the big copy: about 50 MB of CSV
PAD = "x" * 40


def setup(server, ddl="CREATE TABLE t (k bigint PRIMARY KEY, v bigint, pad text)"):
    with psycopg.connect(server.dsn, autocommit=True) as c:
        c.execute(f"CREATE ROLE u LOGIN PASSWORD '{PASSWORD}'")
        c.execute(ddl)
        c.execute("GRANT SELECT, INSERT ON t TO u")


def user(server):
    c = psycopg.connect(server.dsn.replace("user=sluice", "user=u"), password=PASSWORD,
                        autocommit=True)
    c.execute("SET statement_mem = '1MB'")
    return c


def key(i, n=N_BIG):
    """The i-th key: a permutation of 0..n-1, so that the input is far from
    key order and the sort has work to do."""
    return (i * 7919) % n


def lines(n, start=0, last=None):
    """CSV of rows (key(i), i, pad) for i in [start, n), in 64 kB blocks."""
    out = []
    size = 0
    for i in range(start, n):
        s = f"{key(i, n)},{i},{PAD}\n"
        out.append(s)
        size += len(s)
        if size >= 64 << 10:
            yield "".join(out)
            out, size = [], 0
    if last is not None:
        out.append(last)
    if out:
        yield "".join(out)


def chunked(text, size=64 << 10):
    return [text[i:i + size] for i in range(0, len(text), size)]


def copy(conn, blocks, sql="COPY t FROM STDIN WITH (FORMAT csv)"):
    with conn.cursor() as cur:
        with cur.copy(sql) as cp:
            for b in blocks:
                cp.write(b)
        return cur.statusmessage


def held_server(sluiced, tmp_path, point):
    """A server whose fault point holds while the returned file exists,
    with table t and role u."""
    hold = tmp_path / "hold"
    hold.write_text("")
    server = sluiced(env={"SLUICE_FAULT": f"{point}:hold", "SLUICE_FAULT_HOLD": str(hold)})
    setup(server)
    return server, hold


def bulk_files(server):
    d = server.data_dir / "state" / "bulk"
    return sorted(os.listdir(d)) if d.exists() else []


def copy_in_thread(server, n):
    """Role u's COPY of lines(n) into t, started in a thread: (thread, out),
    out["copy"] its tag or SQLSTATE once it ended."""
    out = {}

    def run_copy():
        try:
            with user(server) as u:
                out["copy"] = copy(u, lines(n))
        except psycopg.Error as e:
            out["copy"] = e.sqlstate

    t = threading.Thread(target=run_copy)
    t.start()
    return t, out


def sqlstate_of(fn):
    with pytest.raises(psycopg.Error) as exc:
        fn()
    d = exc.value.diag
    return exc.value.sqlstate, " | ".join(str(x) for x in (d.message_primary, d.message_detail,
                                                          d.context) if x)


@pytest.mark.timeout(600)
def test_copy_many_times_statement_mem_into_a_table(sluiced):
    server = sluiced()
    setup(server)
    with user(server) as u:
        u.execute("INSERT INTO t VALUES (-1, -1, 'before')")
        assert copy(u, lines(N_BIG)) == f"COPY {N_BIG}"
        u.execute("RESET statement_mem")    # for the checks' scans
        got = u.execute("SELECT count(*), sum(k), sum(v), min(k), max(k), "
                        "sum(length(pad)) FROM t WHERE k >= 0").fetchone()
        assert got == (N_BIG, sum(range(N_BIG)), sum(range(N_BIG)), 0, N_BIG - 1,
                       len(PAD) * N_BIG)
        # each row where it belongs: v's key is key(v)
        assert u.execute("SELECT count(*) FROM t WHERE k >= 0 AND k <> (v * 7919) % "
                         f"{N_BIG}").fetchone() == (0,)
        assert u.execute("SELECT v, pad FROM t WHERE k = -1").fetchone() == (-1, "before")
        # the table goes on as an ordinary one
        u.execute(f"INSERT INTO t VALUES ({N_BIG}, 0, 'after')")
        assert sqlstate_of(lambda: u.execute("INSERT INTO t VALUES (5, 0, 'dup')"))[0] == \
            "23505"
        assert u.execute("SELECT count(*) FROM t").fetchone() == (N_BIG + 2,)
    assert bulk_files(server) == []
    assert "copy loaded" not in server.log_text() or "rows=800003" in server.log_text()


@pytest.mark.timeout(600)
def test_bad_last_line_after_40mb_leaves_the_table_unchanged(sluiced):
    server = sluiced()
    setup(server)
    n = 640_000         # 40 MB
    with user(server) as u:
        u.execute("INSERT INTO t SELECT g, g, 'old' FROM generate_series(1000000, 1000099) g")
        state, msg = sqlstate_of(lambda: copy(u, lines(n, last="1000200,notanumber,z\n")))
        assert state == "22P02", msg
        assert f"line {n + 1}" in msg, msg
        assert u.execute("SELECT count(*), min(k), max(k), sum(v) FROM t").fetchone() == \
            (100, 1000000, 1000099, sum(range(1000000, 1000100)))
    assert bulk_files(server) == []


@pytest.mark.timeout(300)
def test_duplicate_key_within_the_input_or_stored_is_23505_and_writes_nothing(sluiced):
    server = sluiced()
    setup(server)
    n = 100_000         # about 6 MB: many runs
    with user(server) as u:
        u.execute("INSERT INTO t VALUES (-5, 0, 'stored')")
        # the first row's key again as the last row: in two different runs
        state, msg = sqlstate_of(lambda: copy(u, lines(n, last=f"{key(0, n)},7,again\n")))
        assert state == "23505", msg
        assert f"Key (k)=({key(0, n)}) already exists" in msg, msg
        # a key stored already, in the middle of the input
        mid = list(lines(n))
        mid.insert(len(mid) // 2, "-5,1,copied\n")
        state, msg = sqlstate_of(lambda: copy(u, mid))
        assert state == "23505", msg
        assert "Key (k)=(-5) already exists" in msg, msg
        assert u.execute("SELECT k, v, pad FROM t").fetchall() == [(-5, 0, "stored")]
        # NOT NULL as INSERT checks it
        state, msg = sqlstate_of(lambda: copy(u, lines(n, last=",1,null key\n")))
        assert state == "23502", msg
        assert u.execute("SELECT count(*) FROM t").fetchone() == (1,)
        # and the same input without the duplicate loads
        assert copy(u, lines(n)) == f"COPY {n}"
        assert u.execute("SELECT count(*), sum(k) FROM t").fetchone() == \
            (n + 1, sum(range(n)) - 5)
    assert bulk_files(server) == []


@pytest.mark.timeout(300)
@pytest.mark.parametrize("point,complete", [("state_ingest_before", False),
                                            ("state_ingest_after", True)])
@pytest.mark.parametrize("n", [100_000, 100])
def test_sigkill_around_the_ingest(sluiced, point, complete, n):
    """Killed with its run and table files written, just before the ingest:
    after a restart the table is as before and the files are gone.  Killed
    just after it: the table holds every copied row.  (100 rows fit in one
    part: they are one synced write batch, killed around it.)"""
    server = sluiced(env={"SLUICE_FAULT": point})
    setup(server)
    with user(server) as u:
        u.execute("INSERT INTO t SELECT g, g, 'old' FROM generate_series(-100, -1) g")
        with pytest.raises(psycopg.OperationalError):
            copy(u, lines(n))
    assert server.wait_exit(30) is not None, "the server was not killed at the fault point"
    assert f"fault point {point} reached, killing" in server.log_text()
    if not complete and n > 1000:
        # what the copy left: its table files, not ingested
        assert [f for f in bulk_files(server) if f.endswith(".sst")], bulk_files(server)
    server.env = {}
    server.start()
    assert bulk_files(server) == []
    with user(server) as u:
        want = (n + 100, sum(range(n)) - 5050) if complete else (100, -5050)
        assert u.execute("SELECT count(*), sum(k) FROM t").fetchone() == want
        # the table takes rows again, and the copy can be run again
        if not complete:
            assert copy(u, lines(n)) == f"COPY {n}"
            assert u.execute("SELECT count(*) FROM t").fetchone() == (n + 100,)


@pytest.mark.timeout(300)
def test_readers_see_before_or_after_and_insert_waits(sluiced, tmp_path):
    """The COPY is held just before its ingest (it holds the modify lock
    then): readers see the table as before, an INSERT waits; once it goes
    on, readers see every row and the INSERT of a copied key is 23505."""
    server, hold = held_server(sluiced, tmp_path, "state_ingest_before")
    n = 100_000
    out = {}

    def run_insert():
        try:
            with user(server) as u:
                u.execute(f"INSERT INTO t VALUES ({key(5, n)}, 0, 'late')")
                out["insert"] = "INSERT"
        except psycopg.Error as e:
            out["insert"] = e.sqlstate

    counts = set()
    stop = threading.Event()

    def read():
        with user(server) as u:
            while not stop.is_set():
                counts.add(u.execute("SELECT count(*), sum(k) FROM t").fetchone())

    with user(server) as u:
        u.execute("INSERT INTO t SELECT g, g, 'old' FROM generate_series(-10, -1) g")
    reader = threading.Thread(target=read)
    reader.start()
    cp, copied = copy_in_thread(server, n)
    ins = None
    try:
        deadline = time.monotonic() + 120
        while "state_ingest_before reached, holding" not in server.log_text():
            assert time.monotonic() < deadline and cp.is_alive(), out
            time.sleep(0.05)
        ins = threading.Thread(target=run_insert)
        ins.start()
        ins.join(1.5)
        assert ins.is_alive(), f"the INSERT did not wait for the COPY: {out}"
        with user(server) as u:
            assert u.execute("SELECT count(*) FROM t").fetchone() == (10,)
    finally:
        hold.unlink()
        cp.join(60)
        if ins is not None:
            ins.join(60)
        stop.set()
        reader.join(60)
    out.update(copied)
    assert out == {"copy": f"COPY {n}", "insert": "23505"}, out
    before, after = (10, -55), (n + 10, sum(range(n)) - 55)
    assert counts <= {before, after} and before in counts, counts
    with user(server) as u:
        assert u.execute("SELECT count(*), sum(k) FROM t").fetchone() == after
    assert bulk_files(server) == []


@pytest.mark.timeout(300)
def test_table_without_a_key_counts_its_rows_as_insert_does(sluiced):
    server = sluiced()
    setup(server, "CREATE TABLE t (a bigint, b text)")
    n = 100_000
    data = [f"{i},r{i}\n" for i in range(n)]
    with user(server) as u:
        u.execute("INSERT INTO t VALUES (-1, 'first')")
        assert copy(u, chunked("".join(data))) == f"COPY {n}"
        u.execute("INSERT INTO t VALUES (-2, 'second')")
        assert copy(u, ["".join(data[:10])]) == "COPY 10"
        u.execute("SET statement_mem = '64MB'")     # for count(DISTINCT)
        assert u.execute("SELECT count(*), count(DISTINCT a), sum(a) FROM t").fetchone() == \
            (n + 12, n + 2, sum(range(n)) + sum(range(10)) - 3)
    server.restart()
    with user(server) as u:
        u.execute("INSERT INTO t VALUES (-3, 'third')")
        assert u.execute("SELECT count(*), sum(a) FROM t").fetchone() == \
            (n + 13, sum(range(n)) + sum(range(10)) - 6)


def test_duplicate_key_of_a_small_copy_names_the_key(sluiced):
    """The error of a table's COPY, written by a statement worker, reaches
    the client whole: the detail names the key (it was dropped)."""
    server = sluiced()
    setup(server)
    with user(server) as u:
        u.execute("INSERT INTO t VALUES (7, 0, 'stored')")
        state, msg = sqlstate_of(lambda: copy(u, ["1,1,a\n7,2,b\n"]))
        assert state == "23505", msg
        assert "Key (k)=(7) already exists." in msg, msg
        assert u.execute("SELECT count(*) FROM t").fetchone() == (1,)


@pytest.mark.timeout(300)
@pytest.mark.parametrize("how", ["cancel", "statement_timeout"])
def test_cancel_or_timeout_after_the_key_checks_writes_nothing(sluiced, tmp_path, how):
    """The COPY is held once its keys are checked (fault point
    copy_table_checked, on a statement worker, the modify lock held); a
    CancelRequest or statement_timeout meanwhile ends it with 57014 and
    the table stays as it was."""
    server, hold = held_server(sluiced, tmp_path, "copy_table_checked")
    n = 20_000
    out, conns = {}, []

    def run_copy():
        try:
            with user(server) as u:
                conns.append(u)
                if how == "statement_timeout":
                    u.execute("SET statement_timeout = '3s'")
                out["start"] = time.monotonic()
                out["copy"] = copy(u, lines(n))
        except psycopg.Error as e:
            out["copy"] = e.sqlstate

    with user(server) as u:
        u.execute("INSERT INTO t VALUES (-1, 0, 'old')")
    cp = threading.Thread(target=run_copy)
    cp.start()
    try:
        deadline = time.monotonic() + 120
        while "copy_table_checked reached, holding" not in server.log_text():
            assert time.monotonic() < deadline and cp.is_alive(), out
            time.sleep(0.05)
        if how == "cancel":
            conns[0].cancel()
        else:
            time.sleep(max(0.0, out["start"] + 3.5 - time.monotonic()))
        time.sleep(0.5)
    finally:
        hold.unlink()
        cp.join(60)
    assert out.get("copy") == "57014", out
    with user(server) as u:
        assert u.execute("SELECT k, v, pad FROM t").fetchall() == [(-1, 0, "old")]
    assert bulk_files(server) == []


def run_files(server):
    """The run files the server holds open (unlinked, so only /proc shows
    them)."""
    fd_dir = f"/proc/{server.proc.pid}/fd"
    out = []
    for fd in os.listdir(fd_dir):
        try:
            target = os.readlink(os.path.join(fd_dir, fd))
        except OSError:
            continue
        if "/bulk/run-" in target:
            out.append(target)
    return out


@pytest.mark.timeout(300)
def test_client_gone_mid_copy_leaves_the_table_and_no_file(sluiced):
    """A client that sends 6 MB of a COPY (runs spilled, held only by their
    open descriptors) and then drops its connection: the table stays as it
    was and the run files are gone with the COPY."""
    from pgwire_raw import Raw, message, query
    server = sluiced()
    setup(server)
    with user(server) as u:
        u.execute("INSERT INTO t VALUES (-1, 0, 'old')")
    with Raw(server.port, timeout=20) as cl:
        cl.startup(user="u", password=PASSWORD)
        cl.send(query("SET statement_mem = '1MB'"))
        cl.until_ready()
        cl.send(query("COPY t FROM STDIN WITH (FORMAT csv)"))
        for b in lines(100_000):
            cl.send(message(b"d", b.encode()))
        # the rows the server read are in run files: unlinked, still open
        deadline = time.monotonic() + 60
        while len(run_files(server)) < 2:
            assert time.monotonic() < deadline, server.log_text()[-2000:]
            time.sleep(0.05)
        assert all(f.endswith("(deleted)") for f in run_files(server)), run_files(server)
    deadline = time.monotonic() + 30
    while run_files(server):
        assert time.monotonic() < deadline, run_files(server)
        time.sleep(0.05)
    with user(server) as u:
        assert u.execute("SELECT k, v, pad FROM t").fetchall() == [(-1, 0, "old")]
    assert bulk_files(server) == []


@pytest.mark.timeout(600)
def test_sigkill_at_random_moments_leaves_before_or_complete(sluiced):
    """Six rounds: a COPY of 200,000 rows (many runs) killed with SIGKILL at
    a random moment -- reading, spilling, merging, writing table files or
    ingesting -- then the server restarted: the table holds the rows before
    the COPY or all of them, never a part, and no file is left."""
    import random
    rnd = random.Random(20261207)
    server = sluiced()
    setup(server)
    n = 200_000
    with user(server) as u:
        u.execute("INSERT INTO t SELECT g, g, 'old' FROM generate_series(-10, -1) g")
    rows, keysum = 10, -55
    for round_ in range(6):
        base = (round_ + 1) * 10_000_000
        done = {}
        data = chunked("".join(f"{base + key(i, n)},{i},{PAD}\n" for i in range(n)))

        def run_copy():
            try:
                with user(server) as u:
                    done["copy"] = copy(u, data)
            except psycopg.Error:
                pass

        t = threading.Thread(target=run_copy)
        t.start()
        time.sleep(0.3 + round_ * 0.8 + rnd.uniform(0, 0.8))     # 0.3 s to 5.1 s
        server.kill()
        t.join(60)
        server.start()
        assert bulk_files(server) == []
        with user(server) as u:
            u.execute("RESET statement_mem")
            got = u.execute("SELECT count(*), sum(k) FROM t").fetchone()
        whole = (rows + n, keysum + n * base + sum(range(n)))
        assert got in ((rows, keysum), whole), (round_, got, done)
        if "copy" in done:
            assert got == whole, (round_, got, done)
        rows, keysum = got
    # an uninterrupted COPY loads
    with user(server) as u:
        assert copy(u, lines(n)) == f"COPY {n}"


@pytest.mark.timeout(300)
def test_disk_too_full_for_the_table_files_is_53100_and_writes_nothing(sluiced, tmp_path):
    """With 20 MB free above the state store's 64 MiB reserve, a COPY whose
    runs fit but whose table file (up to 64 MiB) would not is refused with
    53100 before it writes one, leaving the table and no file; once space
    is freed the same COPY loads."""
    from test_disk_full import fill_leaving, mount_tmpfs
    gen = mount_tmpfs(tmp_path, "400m")
    mnt = next(gen)
    try:
        server = sluiced("--data-dir", str(mnt / "data"))
        server.data_dir = mnt / "data"
        setup(server)
        n = 100_000
        with user(server) as u:
            u.execute("INSERT INTO t VALUES (-1, 0, 'old')")
            filler = mnt / "filler"
            fill_leaving(filler, (64 << 20) + (20 << 20))
            state, msg = sqlstate_of(lambda: copy(u, lines(n)))
            assert state == "53100", msg
            assert u.execute("SELECT count(*) FROM t").fetchone() == (1,)
            assert bulk_files(server) == []
            filler.unlink()
            assert copy(u, lines(n)) == f"COPY {n}"
            assert u.execute("SELECT count(*) FROM t").fetchone() == (n + 1,)
        server.stop()
    finally:
        next(gen, None)


# (COPY statement, its input, SQLSTATE, message, detail, context): what
# PostgreSQL 15 answers (tools/pg_oracle.sh, SHOW_CONTEXT always) over
# CREATE TABLE c (a int PRIMARY KEY, b text NOT NULL, c int) holding (7, 'k', 7).
# A key error names the line of the row whose insert failed (the later one
# of a pair, the row meeting a stored key), without its text; a NOT NULL
# error the line with its text.
COPY_CONTEXT_CASES = [
    ("COPY c FROM STDIN", "1\tx\t1\n2\ty\t2\n1\tz\t3\n", "23505",
     'duplicate key value violates unique constraint "c_pkey"',
     "Key (a)=(1) already exists.", "COPY c, line 3"),
    ("COPY c FROM STDIN WITH (FORMAT csv)", "3,p,1\n1,q,2\n7,r,3\n", "23505",
     'duplicate key value violates unique constraint "c_pkey"',
     "Key (a)=(7) already exists.", "COPY c, line 3"),
    ("COPY c FROM STDIN", "1\tx\t1\n2\t\\N\t2\n", "23502",
     'null value in column "b" of relation "c" violates not-null constraint',
     "Failing row contains (2, null, 2).", 'COPY c, line 2: "2\t\\N\t2"'),
    ("COPY c (a, b) FROM STDIN WITH (FORMAT csv, HEADER true)", "a,b\n5,p\n6,\n", "23502",
     'null value in column "b" of relation "c" violates not-null constraint',
     "Failing row contains (6, null, null).", 'COPY c, line 3: "6,"'),
    ("COPY c (a, c) FROM STDIN WITH (FORMAT csv)", "10,1\n", "23502",
     'null value in column "b" of relation "c" violates not-null constraint',
     "Failing row contains (10, null, 1).", 'COPY c, line 1: "10,1"'),
]


@pytest.mark.parametrize("case", range(len(COPY_CONTEXT_CASES)))
def test_key_and_not_null_errors_name_the_line_as_postgresql(sluiced, case):
    """A table COPY's 23505 and 23502 carry PostgreSQL's CONTEXT line (the
    input's line number; for NOT NULL the line's text), also when the bad
    row is far into a big input that went through the sort's run files."""
    sql, text, state, message, detail, context = COPY_CONTEXT_CASES[case]
    server = sluiced()
    with psycopg.connect(server.dsn, autocommit=True) as c:
        c.execute("CREATE TABLE c (a int PRIMARY KEY, b text NOT NULL, c int)")
        c.execute("INSERT INTO c VALUES (7, 'k', 7)")
        with pytest.raises(psycopg.Error) as e:
            copy(c, [text], sql)
        d = e.value.diag
        assert (e.value.sqlstate, d.message_primary, d.message_detail, d.context) == \
            (state, message, detail, context)
        if "(a, c)" in sql:
            return          # every row of a big input would fail at its first line
        # the same error past 200,000 rows (parts of 1 MB through run files)
        c.execute("SET statement_mem = '1MB'")
        sep = "," if "csv" in sql else "\t"
        head, rest = text.split("\n", 1) if "HEADER" in sql else ("", text)
        big = "".join(f"{100 + i}{sep}v{sep}{i}\n" if "(a, b)" not in sql
                      else f"{100 + i}{sep}v\n" for i in range(200_000))
        big = (head + "\n" if head else "") + big + rest
        with pytest.raises(psycopg.Error) as e:
            copy(c, chunked(big), sql)
        d = e.value.diag
        want = re.sub(r"line (\d+)", lambda m: f"line {int(m.group(1)) + 200_000}", context)
        assert (e.value.sqlstate, d.message_primary, d.context) == (state, message, want)
        assert c.execute("SELECT count(*) FROM c").fetchone() == (1,)


def test_a_table_copy_sorts_its_parts_off_the_loop(sluiced, tmp_path):
    """A table COPY's parts are sorted into run files on a statements'
    worker, the session reading no more input meanwhile: held in that sort
    (fault point copy_table_part), the server answers another client, and
    once it goes on every row is loaded.  (On the loop, the hold stopped
    every client.)"""
    server, hold = held_server(sluiced, tmp_path, "copy_table_part")
    n = 60_000          # several parts of 1 MB (statement_mem 1MB)
    cp, out = copy_in_thread(server, n)
    try:
        deadline = time.monotonic() + 120
        while "copy_table_part reached, holding" not in server.log_text():
            assert time.monotonic() < deadline and cp.is_alive(), out
            time.sleep(0.05)
        got = {}
        other = threading.Thread(target=lambda: got.update(
            one=psycopg.connect(server.dsn, autocommit=True).execute("SELECT 1").fetchone()))
        other.start()
        other.join(60)
        assert got == {"one": (1,)}, "another client was not answered while the sort was held"
    finally:
        hold.unlink()
        cp.join(120)
    assert out == {"copy": f"COPY {n}"}, out
    with user(server) as u:
        assert u.execute("SELECT count(*), sum(v) FROM t").fetchone() == (n, sum(range(n)))
