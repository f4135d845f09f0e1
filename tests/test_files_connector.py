"""The files connector: a directory of JSON-lines or CSV files feeding a stream.

Each test creates a directory, a stream WITH (connector = 'files', ...), writes
files into it while the server runs, and polls (with generous deadlines, never
fixed sleeps) until the rows are in the stream and its dead-letter stream
<stream>_dead_letters.  Covered: 100,000 JSON lines with 1% malformed (exactly
99,000 rows and 1,000 dead letters with reason and position), CSV with a header,
new files appearing while running, a partial last line that waits for its
newline, each file read once across restarts (and across a SIGKILL),
on_error = 'fail' (a reading query gets the error) and 'skip' (counted),
DROP with the dead-letter stream, and a failed CREATE leaving nothing.
"""

import json
import re
import time

import psycopg
import pytest

DEADLINE = 120   # seconds: a loaded 2-core machine under ASan


def connect(server):
    return psycopg.connect(server.dsn, connect_timeout=10, autocommit=True)


def rows(server, sql, params=None):
    with connect(server) as conn:
        return conn.execute(sql, params).fetchall()


def wait_for(server, sql, want, deadline=DEADLINE):
    """Polls sql until it returns want; fails with the last answer."""
    end = time.monotonic() + deadline
    got = None
    while time.monotonic() < end:
        got = rows(server, sql)
        if got == want:
            return got
        time.sleep(0.1)
    pytest.fail(f"{sql!r}: waited {deadline} s for {want!r}, last got {got!r}")


def create_stream(server, name, columns, path, **options):
    """CREATE STREAM name (columns) WITH (connector = 'files', path, options)."""
    opts = "".join(f", {k} = {str(v).lower() if isinstance(v, bool) else repr(v)}"
                   for k, v in options.items())
    with connect(server) as conn:
        conn.execute(f"CREATE STREAM {name} ({columns}) WITH (connector = 'files', "
                     f"path = '{path}'{opts})")


def write(path, text, mode="w"):
    with open(path, mode) as f:
        f.write(text)
        f.flush()


def test_json_lines_one_percent_malformed(sluiced, tmp_path):
    """100,000 lines, 1% malformed: 99,000 rows and 1,000 dead letters."""
    server = sluiced()
    src = tmp_path / "in"
    src.mkdir()
    lines, bad = [], []
    pos = 0
    for i in range(100_000):
        if i % 100 == 37:
            kind = i // 100 % 3
            line = ('{"id": %d, "name": "x' % i if kind == 0 else
                    '{"id": "not a number", "name": "y"}' if kind == 1 else
                    'garbage %d' % i)
            bad.append((pos, line))
        else:
            line = json.dumps({"id": i, "name": f"n{i}", "extra": [1, 2]})
        lines.append(line)
        pos += len(line) + 1
    # written under another name, then renamed: the pattern only sees *.jsonl
    tmp = src / "part-0.tmp"
    write(tmp, "\n".join(lines) + "\n")
    create_stream(server, "events", "id BIGINT, name TEXT", src, format="json",
                  pattern="*.jsonl", poll_interval="100 ms")
    tmp.rename(src / "part-0.jsonl")
    wait_for(server, "SELECT count(*) FROM events", [(99_000,)])
    wait_for(server, "SELECT count(*) FROM events_dead_letters", [(1_000,)])
    assert rows(server, "SELECT count(DISTINCT id), min(id), max(id) FROM events") == [
        (99_000, 0, 99_999)]
    dead = rows(server, "SELECT byte_offset, source, reason, raw, "
                        "received_at IS NOT NULL FROM events_dead_letters ORDER BY byte_offset")
    assert [(d[0], bytes(d[3]).decode()) for d in dead] == bad
    assert all(d[1] == "part-0.jsonl" and d[2] and d[4] for d in dead)
    reasons = {d[2] for d in dead}
    assert any("id" in r for r in reasons), reasons
    # nothing read twice after a restart
    server.restart()
    # a file written after the restart is read after part-0.jsonl (name
    # order): once its row is in, part-0 has been looked at again
    write(src / "part-1.jsonl", json.dumps({"id": 100_000, "name": "after"}) + "\n")
    wait_for(server, "SELECT count(*) FROM events WHERE id = 100000", [(1,)])
    assert rows(server, "SELECT count(*) FROM events") == [(99_001,)]
    assert rows(server, "SELECT count(*) FROM events_dead_letters") == [(1_000,)]


def test_csv_new_files_and_partial_line(sluiced, tmp_path):
    server = sluiced()
    src = tmp_path / "csv"
    src.mkdir()
    write(src / "a.csv", "id,city,amount\n1,Berlin,1.5\n2,\"Paris, FR\",2\n")
    create_stream(server, "sales", "id INT, city TEXT, amount NUMERIC", src, format="csv",
                  header=True, poll_interval="100 ms")
    wait_for(server, "SELECT id, city, amount FROM sales ORDER BY id",
             [(1, "Berlin", 1.5), (2, "Paris, FR", 2)])
    # a new file appears while running; its last line has no newline yet
    write(src / "b.csv", "id,city,amount\n3,Rome,3\n4,Ma")
    wait_for(server, "SELECT count(*) FROM sales", [(3,)])
    # a line appended to a.csv is read by a later poll, which looks at b.csv
    # again (files in name order): once it is in, the partial line is not
    write(src / "a.csv", "7,Lima,7\n", mode="a")
    wait_for(server, "SELECT count(*) FROM sales WHERE id = 7", [(1,)])
    assert rows(server, "SELECT id FROM sales ORDER BY id") == [(1,), (2,), (3,), (7,)]
    write(src / "b.csv", "drid,4\n", mode="a")
    wait_for(server, "SELECT id, city FROM sales WHERE id = 4", [(4, "Madrid")])
    # a bad row goes to the dead letters with its file and byte position
    write(src / "c.csv", "id,city,amount\n5,Oslo,x\n6,Kyiv,6\n")
    wait_for(server, "SELECT count(*) FROM sales", [(6,)])
    assert rows(server, "SELECT source, byte_offset, raw "
                        "FROM sales_dead_letters") == [("c.csv", 15, b"5,Oslo,x")]


def test_each_file_read_once_across_restarts(sluiced, tmp_path):
    server = sluiced()
    src = tmp_path / "in"
    src.mkdir()
    create_stream(server, "s", "n INT", src, format="json", poll_interval="50 ms")
    total = 0
    for round_ in range(4):
        for k in range(3):
            write(src / f"f{round_}-{k}.json",
                  "".join('{"n": %d}\n' % (round_ * 1000 + k * 100 + j) for j in range(50)))
            total += 50
        wait_for(server, "SELECT count(*), count(DISTINCT n) FROM s", [(total, total)])
        if round_ % 2 == 0:
            server.restart()
        else:
            server.kill()
            server.start()
    wait_for(server, "SELECT count(*), count(DISTINCT n) FROM s", [(total, total)])
    # appending to a file already read reads only the new lines
    write(src / "f0-0.json", '{"n": 99999}\n', mode="a")
    total += 1
    wait_for(server, "SELECT count(*), count(DISTINCT n) FROM s", [(total, total)])


def test_on_error_fail_and_skip(sluiced, tmp_path):
    server = sluiced()
    fail_dir, skip_dir = tmp_path / "fail", tmp_path / "skip"
    fail_dir.mkdir()
    skip_dir.mkdir()
    body = '{"n": 1}\n{"n": 2}\n{"n": oops}\n{"n": 4}\n'
    write(fail_dir / "a.json", body)
    write(skip_dir / "a.json", body)
    create_stream(server, "f", "n INT", fail_dir, format="json", on_error="fail",
                  poll_interval="50 ms")
    create_stream(server, "k", "n INT", skip_dir, format="json", on_error="skip",
                  poll_interval="50 ms")
    # skip: the good rows, the bad one counted, no dead letter
    wait_for(server, "SELECT n FROM k ORDER BY n", [(1,), (2,), (4,)])
    assert rows(server, "SELECT count(*) FROM k_dead_letters") == [(0,)]
    wait_for(server, "SELECT sluice_stream_stat('k', 'skipped'), "
                     "sluice_stream_stat('k', 'dead_letters'), sluice_stream_stat('k', 'records'), "
                     "sluice_stream_status('k')", [(1, 0, 4, "running")])
    # fail: the rows before the bad record are in, then ingestion stops and a
    # reading query gets the error
    end = time.monotonic() + DEADLINE
    while True:
        try:
            rows(server, "SELECT count(*) FROM f")
        except psycopg.errors.InvalidTextRepresentation as e:
            assert 'ingestion of stream "f" failed' in str(e)
            assert 'file "a.json", position 18' in str(e)
            break
        assert time.monotonic() < end, "stream f never failed"
        time.sleep(0.1)
    (status, n, error), = rows(server, "SELECT sluice_stream_status('f'), "
                                      "sluice_stream_stat('f', 'rows'), sluice_stream_error('f')")
    assert (status, n) == ("failed", 2)
    assert error.startswith('file "a.json", position 18: invalid JSON'), error
    assert rows(server, "SELECT count(*) FROM f_dead_letters") == [(0,)]
    # the failure holds across a restart (the same record fails again)
    server.restart()
    end = time.monotonic() + DEADLINE
    while time.monotonic() < end:
        if rows(server, "SELECT sluice_stream_status('f')") == [("failed",)]:
            break
        time.sleep(0.1)
    with pytest.raises(psycopg.errors.InvalidTextRepresentation):
        rows(server, "SELECT * FROM f")
    with connect(server) as conn:
        conn.execute("DROP STREAM f")


def test_dead_letter_stream_lifecycle_and_bad_options(sluiced, tmp_path):
    server = sluiced()
    src = tmp_path / "in"
    src.mkdir()
    create_stream(server, "s", "n INT", src, format="json")
    with connect(server) as conn:
        assert conn.execute("SELECT * FROM s_dead_letters").fetchall() == []
        cols = [d.name for d in conn.execute("SELECT * FROM s_dead_letters").description]
        assert cols == ["raw", "source", "byte_offset", "reason", "received_at"]
        with pytest.raises(psycopg.errors.DependentObjectsStillExist):
            conn.execute("DROP STREAM s_dead_letters")
        conn.execute("DROP STREAM s")
        with pytest.raises(psycopg.errors.UndefinedTable):
            conn.execute("SELECT * FROM s_dead_letters")
        # a failed CREATE leaves nothing behind, not even the dead-letter stream
        for bad, code in [
            (f"path = '{src}/missing', format = 'json'", psycopg.errors.UndefinedFile),
            (f"path = '{src}', format = 'xml'", psycopg.errors.InvalidParameterValue),
            (f"path = '{src}', format = 'json', on_error = 'ignore'",
             psycopg.errors.InvalidParameterValue),
            (f"format = 'json'", psycopg.errors.InvalidParameterValue),
        ]:
            with pytest.raises(code):
                conn.execute(f"CREATE STREAM t (n INT) WITH (connector = 'files', {bad})")
            with pytest.raises(psycopg.errors.UndefinedTable):
                conn.execute("SELECT * FROM t")
            with pytest.raises(psycopg.errors.UndefinedTable):
                conn.execute("SELECT * FROM t_dead_letters")
        # the dead-letter stream's name is taken: the CREATE fails whole
        conn.execute("CREATE STREAM u_dead_letters (x INT)")
        with pytest.raises(psycopg.errors.DuplicateTable):
            conn.execute(f"CREATE STREAM u (n INT) WITH (connector = 'files', path = '{src}', "
                         f"format = 'json')")
        with pytest.raises(psycopg.errors.UndefinedTable):
            conn.execute("SELECT * FROM u")


@pytest.mark.parametrize("fault,mode", [("ingest_before_commit:2", "sync"),
                                        ("stream_append_before_write:3", "group")])
def test_killed_at_the_commit_of_a_round(sluiced, tmp_path, monkeypatch, fault, mode):
    """SIGKILL at a durable step of ingestion: every record lands exactly once.

    A fault point counts its hits per thread, and rounds run on the thread
    pool's (4) threads: 16 files give some thread enough commits to hit it."""
    server = sluiced(f"--commit-mode={mode}")
    src = tmp_path / "in"
    src.mkdir()
    create_stream(server, "s", "n INT", src, format="json", poll_interval="20 ms")
    server.stop()
    monkeypatch.setenv("SLUICE_FAULT", fault)
    server.start()
    monkeypatch.delenv("SLUICE_FAULT")
    total = 0
    for k in range(16):
        # one file at a time, each in a round (a commit) of its own, until
        # the fault point kills the server
        write(src / f"f{k}.json", "".join('{"n": %d}\n' % (k * 100 + j) for j in range(40)))
        total += 40
        end = time.monotonic() + DEADLINE
        while server.alive() and time.monotonic() < end:
            try:
                if rows(server, "SELECT count(*) FROM s") == [(total,)]:
                    break
            except psycopg.OperationalError:
                pass        # killed under the query
            time.sleep(0.02)
        if not server.alive():
            break
    assert not server.alive(), "the fault point was never reached"
    assert server.kill() == -9
    server.start()
    wait_for(server, "SELECT count(*), count(DISTINCT n) FROM s", [(total, total)])
    server.restart()
    wait_for(server, "SELECT count(*), count(DISTINCT n) FROM s", [(total, total)])


def test_records_larger_than_max_record_bytes(sluiced, tmp_path):
    """A record over max_record_bytes is a dead letter (its first bytes kept),
    also one longer than what a round reads at once (16 MiB); the lines after
    it are read as usual."""
    server = sluiced()
    src = tmp_path / "in"
    src.mkdir()
    huge = '{"n": 1, "pad": "' + "x" * (17 << 20) + '"}'
    big = '{"n": 2, "pad": "' + "y" * 5000 + '"}'
    write(src / "a.json", '{"n": 0}\n' + huge + "\n" + big + "\n" + '{"n": 3}\n')
    create_stream(server, "s", "n INT", src, format="json", max_record_bytes=4096,
                  poll_interval="50 ms")
    wait_for(server, "SELECT n FROM s ORDER BY n", [(0,), (3,)])
    dead = rows(server, "SELECT byte_offset, length(raw), reason FROM s_dead_letters "
                        "ORDER BY byte_offset")
    assert [(d[0], d[1]) for d in dead] == [(9, 4096), (9 + len(huge) + 1, len(big))]
    assert "exceeds max_record_bytes" in dead[0][2] and str(len(huge)) in dead[0][2]
    assert "max_record_bytes" in dead[1][2] or "too large" in dead[1][2], dead[1][2]


def test_continuous_query_over_a_files_stream(sluiced, tmp_path):
    """A continuous query reads a files stream as any stream, across files
    that appear while it runs and a restart."""
    server = sluiced()
    src = tmp_path / "in"
    src.mkdir()
    create_stream(server, "clicks", "user_id INT, url TEXT, ts TIMESTAMP", src,
                  format="csv", poll_interval="50 ms")
    with connect(server) as conn:
        conn.execute("CREATE CONTINUOUS QUERY per_user WITH (trigger = '100 ms') AS "
                     "SELECT user_id, count(*) AS n FROM clicks GROUP BY user_id")
    write(src / "1.csv", "1,/a,2024-01-01 00:00:01\n2,/b,2024-01-01 00:00:02\n1,/c,2024-01-01 "
                         "00:00:03\n")
    wait_for(server, "SELECT user_id, n FROM per_user ORDER BY user_id", [(1, 2), (2, 1)])
    server.restart()
    write(src / "2.csv", "2,/d,2024-01-01 00:00:04\n3,/e,2024-01-01 00:00:05\nbad line\n")
    wait_for(server, "SELECT user_id, n FROM per_user ORDER BY user_id", [(1, 2), (2, 2), (3, 1)])
    assert rows(server, "SELECT source, byte_offset FROM clicks_dead_letters") == [("2.csv", 50)]
    with connect(server) as conn:
        with pytest.raises(psycopg.errors.DependentObjectsStillExist):
            conn.execute("DROP STREAM clicks")
        conn.execute("DROP STREAM clicks CASCADE")
        with pytest.raises(psycopg.errors.UndefinedTable):
            conn.execute("SELECT * FROM per_user")


def test_continuous_query_over_a_failed_stream_fails(sluiced, tmp_path):
    """on_error = 'fail': a continuous query reading the stream fails too, with
    the ingestion error (the log says so; sys.queries will)."""
    server = sluiced()
    src = tmp_path / "in"
    src.mkdir()
    create_stream(server, "f", "n INT", src, format="json", on_error="fail",
                  poll_interval="50 ms")
    with connect(server) as conn:
        conn.execute("CREATE CONTINUOUS QUERY c WITH (trigger = '100 ms') AS "
                     "SELECT count(*) AS k FROM f")
    write(src / "a.json", '{"n": 1}\n{"n": x}\n')
    end = time.monotonic() + DEADLINE
    want = re.compile(r'continuous query failed.*query=c.*ingestion of stream \\?"f\\?" failed')
    while not want.search(server.log_text()):
        assert time.monotonic() < end, "the continuous query did not fail"
        time.sleep(0.1)


def test_many_small_files_one_write_per_round(sluiced, tmp_path):
    """A round commits the rows of all the files it read in one write: 500
    small files already there take a handful of appends, not 500."""
    server = sluiced()
    src = tmp_path / "in"
    src.mkdir()
    for k in range(500):
        write(src / f"f{k:04d}.csv", f"{k},a\n{k},b\n")
    create_stream(server, "s", "n INT, t TEXT", src, format="csv", poll_interval="50 ms")
    wait_for(server, "SELECT count(*), count(DISTINCT n) FROM s", [(1000, 500)])
    assert rows(server, "SELECT sluice_stream_stat('s', 'files')") == [(500,)]
    server.stop()
    m = re.findall(r"sluiced stopped.*appends=(\d+) writes=(\d+)", server.log_text())
    assert m and int(m[-1][0]) < 50, m
