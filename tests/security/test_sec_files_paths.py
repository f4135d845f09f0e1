"""Where the files connector reads and the files sink writes (issue 19,
items 2 and 3).

A directory path is resolved (symlinks followed) and checked for the
relation's owner at CREATE, again whenever it is opened (each ingest round,
each sink batch), and every file read is checked where its open really
landed: no ".." component for anyone, never the data directory (not even a
superuser's relation), and below --files-root for a role that is not a
superuser -- with no files root, such a role uses no path at all.  Refusals
are 42501 (src/runtime/hostaccess.c; docs/operations.md, "Files root").

The attacker is the plain role `u`; the "host's files" are a directory
outside the root holding a file that must never come back.
"""

import os
import time

import pytest

from conftest import sluiced_refuses

from sec_helpers import connect, error_of, make_role, sqlstate

SECRET = "root:$6$never-shown$:19000:0:99999:7:::"
WAIT = 20


def wait_rows(conn, sql, want, deadline=WAIT):
    end = time.monotonic() + deadline
    got = None
    while time.monotonic() < end:
        got = conn.execute(sql).fetchall()
        if got == want:
            return
        time.sleep(0.1)
    pytest.fail(f"{sql}: waited {deadline} s for {want}, got {got}")


def host_files(tmp_path):
    """outside/shadow holds SECRET; root/ is the files root."""
    outside = tmp_path / "outside"
    outside.mkdir()
    (outside / "shadow").write_text(SECRET + "\n")
    root = tmp_path / "root"
    root.mkdir()
    return root, outside


def stream_sql(name, path, pattern="*"):
    return (f"CREATE STREAM {name} (a text) WITH (connector = 'files', path = '{path}', "
            f"format = 'csv', pattern = '{pattern}', delimiter = '|', "
            f"poll_interval = '50 ms')")


def sink_sql(name, path):
    return f"CREATE SINK {name} WITH (connector = 'files', path = '{path}', format = 'csv')"


def all_text(conn):
    """Every row of every stream and its dead letters, as one string."""
    out = []
    for (name,) in conn.execute("SELECT name FROM sys.streams").fetchall():
        out += [str(r) for r in conn.execute(f"SELECT * FROM {name}").fetchall()]
    return "\n".join(out)


def test_files_source_without_root_is_superuser_only(sluiced, tmp_path):
    """The issue's /etc/shadow read, as `u` on a server without a files root;
    and the data directory, refused even to a superuser."""
    root, outside = host_files(tmp_path)
    server = sluiced()
    with make_role(server) as u:
        e = error_of(u, stream_sql("s", outside, "shadow"))
        assert e.sqlstate == "42501", e
        assert "--files-root" in (e.diag.message_hint or "")
        for path in (server.data_dir, server.data_dir / "state", f"{outside}/../outside"):
            assert sqlstate(u, stream_sql("s", path)) == "42501", path
        assert u.execute("SELECT count(*) FROM sys.streams").fetchone() == (0,)
    with connect(server) as su:
        for path in (server.data_dir, server.data_dir / "state"):
            e = error_of(su, stream_sql("s", path))
            assert e.sqlstate == "42501" and "data directory" in str(e), e
        su.execute(stream_sql("mine", outside, "shadow"))
        wait_rows(su, "SELECT a FROM mine", [(SECRET,)])


def test_files_source_inside_root_only(sluiced, tmp_path):
    """With --files-root: inside it works; "..", absolute paths outside, a
    symlinked directory and a symlinked file leading out do not."""
    root, outside = host_files(tmp_path)
    (root / "in").mkdir()
    (root / "in" / "a.csv").write_text("inside\n")
    os.symlink(outside / "shadow", root / "in" / "b.csv")      # a file leading out
    os.symlink(outside, root / "out")                           # a directory leading out
    server = sluiced("--files-root", str(root))
    with make_role(server) as u:
        u.execute(stream_sql("ok", root / "in"))
        wait_rows(u, "SELECT a FROM ok", [("inside",)])
        for path in (outside, root / "out", f"{root}/in/../../outside", "../../outside", "/"):
            e = error_of(u, stream_sql("s", path, "shadow"))
            assert e.sqlstate == "42501", (path, e)
        time.sleep(0.5)     # rounds that would have read b.csv
        assert SECRET not in all_text(u)
    assert "permission denied for files connector file" in server.log_text()


def test_files_source_directory_swapped_after_create(sluiced, tmp_path):
    """A directory accepted at CREATE and replaced by a symlink leading out:
    the next rounds refuse it."""
    root, outside = host_files(tmp_path)
    (root / "d").mkdir()
    server = sluiced("--files-root", str(root))
    with make_role(server) as u:
        u.execute(stream_sql("s", root / "d"))
        time.sleep(0.3)
        (root / "d").rmdir()
        os.symlink(outside, root / "d")
        time.sleep(1.0)
        assert u.execute("SELECT count(*) FROM s").fetchone() == (0,)
        assert SECRET not in all_text(u)
    assert "permission denied for files connector path" in server.log_text()


def test_files_sink_refused_outside_root(sluiced, tmp_path):
    """The issue's write anywhere, as `u`: absolute paths without a root,
    "..", the data directory; nothing is created."""
    root, outside = host_files(tmp_path)
    server = sluiced()
    target = outside / "made" / "by" / "u"
    rel = os.path.relpath(target, os.getcwd())
    with make_role(server) as u:
        for path in (target, "../../../" + str(target).lstrip("/"), rel, server.data_dir):
            e = error_of(u, sink_sql("evil", path))
            assert e.sqlstate == "42501", (path, e)
    with connect(server) as su:
        e = error_of(su, sink_sql("evil", server.data_dir / "x"))
        assert e.sqlstate == "42501", e
    assert not (outside / "made").exists()
    assert not (server.data_dir / "x").exists()


def test_files_sink_inside_root_and_swapped_after_create(sluiced, tmp_path):
    """Inside the root a role's sink is written; once its directory is a
    symlink leading out, the batch fails and nothing lands outside."""
    root, outside = host_files(tmp_path)
    server = sluiced("--files-root", str(root))
    with make_role(server) as u:
        u.execute("CREATE STREAM src (a text)")
        u.execute(sink_sql("good", root / "sinks" / "good"))
        u.execute("CREATE CONTINUOUS QUERY q INTO good WITH (trigger = '0') AS "
                  "SELECT a FROM src")
        u.execute("INSERT INTO src VALUES ('row1')")
        end = time.monotonic() + WAIT
        while time.monotonic() < end and not (root / "sinks" / "good" / "_manifest.jsonl").exists():
            time.sleep(0.1)
        assert (root / "sinks" / "good" / "_manifest.jsonl").exists()
        # swap the directory for a symlink to the host's files
        os.rename(root / "sinks" / "good", root / "sinks" / "old")
        os.symlink(outside, root / "sinks" / "good")
        u.execute("INSERT INTO src VALUES ('row2')")
        wait_rows(u, "SELECT status FROM sys.queries WHERE name = 'q'", [("failed",)])
        err = u.execute("SELECT last_error FROM sys.queries WHERE name = 'q'").fetchone()[0]
        assert "permission denied for files sink path" in err, err
    assert sorted(os.listdir(outside)) == ["shadow"]


def test_files_root_that_does_not_resolve_stops_the_start(tmp_path):
    """A files root is resolved once, at start: one that does not exist is a
    configuration error, not a silent "no root"."""
    res = sluiced_refuses(["--listen", "127.0.0.1", "--port", "0",
                           "--data-dir", str(tmp_path / "data"),
                           "--files-root", str(tmp_path / "missing")], timeout=60)
    assert res.returncode != 0
    out = res.stdout + res.stderr
    assert "cannot set up host access" in out and "files root" in out, out


def test_data_directory_that_does_not_resolve_stops_the_start(tmp_path):
    """The data directory is resolved once, at start, for the guard that keeps
    every connector out of it: when that fails (fault point host_data_dir,
    realpath's failure) the server does not start rather than run unguarded."""
    # a start that does not stop within 60 s ran without its data directory guard
    res = sluiced_refuses(["--listen", "127.0.0.1", "--port", "0",
                           "--data-dir", str(tmp_path / "data")],
                          env={"SLUICE_FAULT": "host_data_dir:fail"}, timeout=60)
    out = res.stdout + res.stderr
    assert "cannot set up host access" in out and "data directory" in out, out


def test_paths_outside_the_root_all_refused_alike(sluiced, tmp_path):
    """For `u` every path outside the files root gets the same 42501 and the
    same words, whatever is there: a file, nothing, a symlink loop (which
    does not resolve), the data directory.  Only the path it wrote differs."""
    root, outside = host_files(tmp_path)
    os.symlink("loop", outside / "loop")
    server = sluiced("--files-root", str(root))
    paths = [outside / "shadow", outside / "missing" / "x", outside / "loop" / "x",
             outside / "loop", server.data_dir, server.data_dir / "catalog.db"]
    with make_role(server) as u:
        for sql in (stream_sql, sink_sql):
            seen = set()
            for path in paths:
                e = error_of(u, sql("s", path))
                assert e.sqlstate == "42501", (path, e)
                seen.add((str(e).replace(str(path), "PATH"), e.diag.message_hint))
            assert len(seen) == 1, seen
            assert "outside the files root" in seen.pop()[0]


def test_data_directory_inside_the_root_stays_out_of_reach(sluiced, tmp_path):
    """A files root above the data directory: the data directory, and a
    symlink to it inside the root, are refused all the same, for the source
    and the sink."""
    (tmp_path / "in").mkdir()
    server = sluiced("--files-root", str(tmp_path))
    os.symlink(server.data_dir, tmp_path / "in" / "dd")
    with make_role(server) as u:
        for path in (server.data_dir, server.data_dir / "state", tmp_path / "in" / "dd"):
            for sql in (stream_sql("s", path), sink_sql("k", path)):
                e = error_of(u, sql)
                assert e.sqlstate == "42501" and "data directory" in str(e), (sql, e)
        u.execute(stream_sql("ok", tmp_path / "in"))


def test_files_source_refused_file_logged_once(sluiced, tmp_path):
    """A symlink in the directory is not followed (O_NOFOLLOW): one leading
    out is refused and logged once, not at every 50 ms poll; a FIFO does not
    hold the rounds up; the regular files beside them are read."""
    root, outside = host_files(tmp_path)
    (root / "in").mkdir()
    os.symlink(outside / "shadow", root / "in" / "b.csv")
    os.mkfifo(root / "in" / "c.csv")
    server = sluiced("--files-root", str(root))
    with make_role(server) as u:
        u.execute(stream_sql("s", root / "in"))
        time.sleep(1.0)     # about 20 rounds
        (root / "in" / "a.csv").write_text("inside\n")
        wait_rows(u, "SELECT a FROM s", [("inside",)])
        assert SECRET not in all_text(u)
    log = server.log_text()
    assert log.count("permission denied for files connector file") == 1, log[-3000:]


def test_files_sink_directory_swapped_after_the_batch_check(sluiced, tmp_path):
    """The swap in the window between a batch's directory check and its
    writes (held there at the sink_after_dir_check fault point): the batch
    file and the manifest line go through the descriptor the check judged,
    so they land in the directory renamed aside, never through the symlink.
    The next batch refuses the symlink (42501)."""
    root, outside = host_files(tmp_path)
    hold = tmp_path / "hold"
    hold.write_text("")
    server = sluiced("--files-root", str(root),
                     env={"SLUICE_FAULT": "sink_after_dir_check:hold",
                          "SLUICE_FAULT_HOLD": str(hold)})
    with make_role(server) as u:
        u.execute("CREATE STREAM src (a text)")
        u.execute(sink_sql("good", root / "sinks" / "good"))
        u.execute("CREATE CONTINUOUS QUERY q INTO good WITH (trigger = '0') AS "
                  "SELECT a FROM src")
        u.execute("INSERT INTO src VALUES ('row1')")
        end = time.monotonic() + WAIT
        while time.monotonic() < end and \
                "fault point sink_after_dir_check reached, holding" not in server.log_text():
            time.sleep(0.1)
        assert "fault point sink_after_dir_check reached, holding" in server.log_text()
        os.rename(root / "sinks" / "good", root / "sinks" / "old")
        os.symlink(outside, root / "sinks" / "good")
        hold.unlink()
        end = time.monotonic() + WAIT
        while time.monotonic() < end and not (root / "sinks" / "old" / "_manifest.jsonl").exists():
            time.sleep(0.1)
        assert sorted(os.listdir(outside)) == ["shadow"]
        assert "row1" in "".join(p.read_text() for p in (root / "sinks" / "old").glob("part-*"))
        u.execute("INSERT INTO src VALUES ('row2')")
        wait_rows(u, "SELECT status FROM sys.queries WHERE name = 'q'", [("failed",)])
    assert sorted(os.listdir(outside)) == ["shadow"]


def test_files_sink_missing_component_made_a_symlink(sluiced, tmp_path):
    """A component of the sink's path that does not exist yet, made a
    symlink leading out between the check and the mkdir -p (held at the
    sink_before_make_dirs fault point): mkdirat/openat with O_NOFOLLOW
    refuse it (42501) and no directory is made outside the root."""
    import threading
    root, outside = host_files(tmp_path)
    hold = tmp_path / "hold"
    hold.write_text("")
    server = sluiced("--files-root", str(root),
                     env={"SLUICE_FAULT": "sink_before_make_dirs:hold",
                          "SLUICE_FAULT_HOLD": str(hold)})
    result = []
    with make_role(server) as u:
        t = threading.Thread(target=lambda: result.append(
            sqlstate(u, sink_sql("evil", root / "a" / "b" / "c"))))
        t.start()
        end = time.monotonic() + WAIT
        while time.monotonic() < end and \
                "fault point sink_before_make_dirs reached, holding" not in server.log_text():
            time.sleep(0.1)
        assert "fault point sink_before_make_dirs reached, holding" in server.log_text()
        os.symlink(outside, root / "a")
        hold.unlink()
        t.join(WAIT)
        assert result == ["42501"], result
    assert sorted(os.listdir(outside)) == ["shadow"]
