"""COPY (SUBSCRIBE name [WITH (snapshot)]) TO STDOUT: a continuous query's
committed changes as COPY text lines (batch id, kind, the result's columns),
streamed as the batches commit.

- psql in a pseudo-terminal (pty.fork, as a user types) shows the line an
  INSERT causes, then Ctrl-C ends the COPY with 57014 and the session
  stays usable;
- psycopg 3's cursor.copy() reads several batches of an update-mode query
  with HAVING (inserts, updates and deletes: the retractions), checked
  against a model computed in Python from the rows inserted, and against
  the result table;
- the extended protocol (Describe says NoData, Execute starts the COPY),
  DROP of the query ending it with 57P01, options refused with 0A000;
- a client that stops reading: batches are held back, then the COPY ends
  with 53200 naming the limit, and the session goes on.
"""

import os
import pty
import re
import select
import signal
import time

import psycopg
import pytest

from pgwire_raw import Raw, bind, describe, error_fields, execute, parse, query, sync
from helpers import wait_for
from test_continuous_queries import WAIT, connect
from test_subscribe import read_to_ready, slow_subscriber, start_stream, take, wait_subscribed


class Pty:
    """psql (interactive, no readline, no pager) on a pseudo-terminal: the
    test types into it and reads what a user would see."""

    def __init__(self, dsn):
        env = dict(os.environ, LC_ALL="C", LANG="C", TERM="dumb", PAGER="",
                   PSQL_PAGER="", PGCONNECT_TIMEOUT="10", PGCLIENTENCODING="UTF8")
        pid, fd = pty.fork()
        if pid == 0:
            try:
                os.execvpe("psql", ["psql", dsn, "-X", "-n", "-P", "pager=off"], env)
            finally:
                os._exit(127)
        self.pid, self.fd, self.out = pid, fd, ""

    def type(self, text):
        os.write(self.fd, text.encode())

    def wait(self, pattern, timeout=WAIT):
        """Reads until pattern (a regex) appears after what was already
        matched; returns the match.  Fails after timeout seconds."""
        rx = re.compile(pattern, re.M)
        deadline = time.monotonic() + timeout
        while True:
            m = rx.search(self.out)
            if m:
                self.out = self.out[m.end():]
                return m
            left = deadline - time.monotonic()
            assert left > 0, f"psql did not show {pattern!r}; it showed:\n{self.out[-2000:]}"
            ready, _, _ = select.select([self.fd], [], [], min(left, 0.5))
            if ready:
                try:
                    data = os.read(self.fd, 65536)
                except OSError:
                    data = b""
                assert data, f"psql ended; it showed:\n{self.out[-2000:]}"
                self.out += data.decode(errors="replace").replace("\r\n", "\n")

    def close(self):
        try:
            os.kill(self.pid, signal.SIGKILL)
        except ProcessLookupError:
            pass
        os.waitpid(self.pid, 0)
        os.close(self.fd)


def test_psql_shows_copy_subscribe_rows_then_ctrl_c(server):
    with connect(server) as c:
        c.execute("CREATE STREAM clicks (user_id BIGINT, url TEXT)")
        c.execute("CREATE CONTINUOUS QUERY per_user WITH (trigger = '1 second') AS "
                  "SELECT user_id, count(*) AS n FROM clicks GROUP BY user_id")
        term = Pty(server.dsn)
        try:
            term.wait(r"=# ")
            term.type("COPY (SUBSCRIBE per_user) TO STDOUT;\n")
            wait_subscribed(server)
            c.execute("INSERT INTO clicks VALUES (7, 'a'), (7, 'b'), (8, 'c')")
            rows = set()
            while len(rows) < 2:
                rows.add(term.wait(r"^(\d+)\tinsert\t(\d+)\t(\d+)$").group(2, 3))
            assert rows == {("7", "2"), ("8", "1")}
            c.execute("INSERT INTO clicks VALUES (8, 'd')")
            assert term.wait(r"^\d+\tupdate\t8\t2$")
            term.type("\x03")       # Ctrl-C: psql sends a CancelRequest
            term.wait(r"ERROR:  canceling statement due to user request")
            term.type("SELECT 40 + 2 AS answer;\n")
            term.wait(r"^\s+42$")
            term.type("SELECT user_id, n FROM per_user ORDER BY user_id;\n")
            term.wait(r"^\s+7 \|\s+2\n\s+8 \|\s+2$")
            term.type("\\q\n")
            assert wait_for(lambda: os.waitpid(term.pid, os.WNOHANG)[0] == term.pid, True)
            term.pid = None
        finally:
            if term.pid is not None:
                term.close()
            else:
                os.close(term.fd)
    assert 'msg="subscribe ended"' in server.log_text()
    assert "sqlstate=57014" in server.log_text()


def test_psycopg_copy_batches_with_retractions(server):
    """Update mode with HAVING sum(v) > 0: a group enters (insert), changes
    (update), leaves (delete, with the row it had).  The feed is checked
    against a model of the query kept here, batch by batch."""
    with connect(server) as c:
        c.execute("CREATE STREAM ev (k TEXT, v BIGINT)")
        c.execute("CREATE CONTINUOUS QUERY pos WITH (trigger = '0', output_mode = 'update') AS "
                  "SELECT k, sum(v) AS s FROM ev GROUP BY k HAVING sum(v) > 0")
        c.execute("INSERT INTO ev VALUES ('a', 4)")
        assert wait_for(lambda: c.execute("SELECT k, s FROM pos").fetchall(), [("a", 4)])
        sub, rows, ended, t = start_stream(
            server.dsn, "COPY (SUBSCRIBE pos WITH (snapshot)) TO STDOUT", copy=True)
        wait_subscribed(server)
        sums = {"a": 4}
        # The snapshot: the result table's rows, as inserts.
        snap = take(rows, 1)
        assert [r[1:] for r in snap] == [("insert", "a", "4")]
        feed = {"a": 4}
        batches = [[("a", 3), ("b", 2), ("c", -1)],    # a update, b insert, c nothing
                   [("a", -10), ("c", 5)],             # a delete (7), c insert
                   [("b", 1), ("a", 20)],              # b update, a insert again
                   [("b", -3), ("c", -5), ("d", 1)]]   # b delete, c delete, d insert
        last_batch = int(snap[0][0])
        for step in batches:
            before = {k: s for k, s in sums.items() if s > 0}
            for k, v in step:
                sums[k] = sums.get(k, 0) + v
            after = {k: s for k, s in sums.items() if s > 0}
            want = set()
            for k in set(before) | set(after):
                if k in after and k not in before:
                    want.add(("insert", k, str(after[k])))
                elif k in before and k not in after:
                    want.add(("delete", k, str(before[k])))
                elif before[k] != after[k]:
                    want.add(("update", k, str(after[k])))
            c.execute("INSERT INTO ev VALUES " + ", ".join(["(%s, %s)"] * len(step)),
                      [x for kv in step for x in kv])
            got = take(rows, len(want))
            assert {r[1:] for r in got} == want
            ids = {int(r[0]) for r in got}
            assert len(ids) == 1 and ids.pop() > last_batch     # one batch, in order
            last_batch = int(got[0][0])
            for _, kind, k, s in got:
                if kind == "delete":
                    assert feed.pop(k) == int(s)
                else:
                    assert (k in feed) == (kind == "update")
                    feed[k] = int(s)
            assert feed == after
        assert dict(c.execute("SELECT k, s FROM pos").fetchall()) == feed
        sub.cancel()
        t.join(WAIT)
        assert not t.is_alive()
        assert len(ended) == 1 and isinstance(ended[0], psycopg.errors.QueryCanceled)
        assert sub.execute("SELECT 1").fetchone() == (1,)
        sub.close()


def test_copy_subscribe_extended_drop_and_refusals(server):
    with connect(server) as c:
        c.execute("CREATE STREAM ev (s TEXT)")
        c.execute("CREATE CONTINUOUS QUERY up WITH (trigger = '0') AS SELECT upper(s) AS u FROM ev")
        raw = Raw(server.port)
        raw.startup()
        raw.send(parse("COPY (SUBSCRIBE up) TO STDOUT"), bind(), describe(b"P"), execute(),
                 sync())
        assert raw.recv_msg()[0] == b"1"
        assert raw.recv_msg()[0] == b"2"
        assert raw.recv_msg()[0] == b"n"        # NoData: its rows are CopyData
        msg = raw.recv_msg()
        assert msg[0] == b"H" and msg[1] == b"\x00\x00\x03" + b"\x00\x00" * 3
        wait_subscribed(server)
        c.execute("INSERT INTO ev VALUES ('tab\there'), (NULL)")
        got = sorted(raw.recv_msg() for _ in range(2))
        assert [m[0] for m in got] == [b"d", b"d"]
        lines = sorted(m[1].decode().split("\t", 1)[1] for m in got)
        assert lines == sorted(["insert\t\\N\n", "insert\tTAB\\tHERE\n"])
        # DROP ends it with 57P01; then Sync's ReadyForQuery.
        c.execute("DROP CONTINUOUS QUERY up")
        msgs = raw.until_ready()
        assert [m[0] for m in msgs] == [b"E", b"Z"]
        assert error_fields(msgs[0][1])["C"] == "57P01"
        raw.send(query("SELECT 1"))
        assert [m[0] for m in raw.until_ready()] == [b"T", b"D", b"C", b"Z"]
        raw.close()
        for sql, code in [("COPY (SUBSCRIBE nope) TO STDOUT", "42704"),
                          ("COPY (SUBSCRIBE ev2) TO stdin", "0A000"),
                          ("COPY (SUBSCRIBE ev2) TO STDOUT (FORMAT csv)", "0A000"),
                          ("COPY (SUBSCRIBE ev2) TO STDOUT (FORMAT binary)", "0A000"),
                          ("COPY (SUBSCRIBE ev2 WITH (snap)) TO STDOUT", "42601")]:
            with pytest.raises(psycopg.Error) as e:
                c.execute(sql)
            assert e.value.sqlstate == code, sql


def test_copy_subscribe_slow_reader_ends_with_53200(sluiced):
    server = sluiced("--max-output-buffer", str(1 << 20))
    with connect(server) as c:
        raw = slow_subscriber(server, c, "COPY (SUBSCRIBE copy_big) TO STDOUT")
        # Batches of 256 KiB that the client does not read, one at a time.
        row = "x" * 1000
        n = 0
        while "sqlstate=53200" not in server.log_text():
            assert n < 400, "the COPY never fell behind"
            c.execute("INSERT INTO big SELECT %s FROM generate_series(1, 256)", (row,))
            n += 1
            assert wait_for(lambda: c.execute("SELECT count(*) FROM copy_big").fetchone()[0],
                            256 * n) == 256 * n
        assert n > 64       # more than SUBSCRIBE_COPY_PENDING batches were held back
        kinds, fields = read_to_ready(raw)
        assert fields["C"] == "53200" and "64 batches" in fields["M"], fields
        assert kinds[0] == b"H" and b"E" in kinds and kinds.count(b"d") >= 256
        assert kinds.count(b"d") % 256 == 0     # whole batches, never part of one
        raw.send(query("SELECT 1"))
        assert [m[0] for m in raw.until_ready()] == [b"T", b"D", b"C", b"Z"]
        raw.close()


def test_sigterm_ends_copy_subscribe_with_fatal(sluiced):
    server = sluiced()
    with connect(server) as c:
        c.execute("CREATE STREAM ev (s TEXT)")
        c.execute("CREATE CONTINUOUS QUERY up WITH (trigger = '0') AS SELECT upper(s) AS u FROM ev")
    raw = Raw(server.port)
    raw.startup()
    raw.send(query("COPY (SUBSCRIBE up) TO STDOUT"))
    assert raw.recv_msg()[0] == b"H"
    wait_subscribed(server)
    assert server.stop() == 0
    raw.sock.settimeout(WAIT)
    msg = raw.recv_msg()
    assert msg[0] == b"E", msg
    fields = error_fields(msg[1])
    assert fields["S"] == "FATAL" and fields["C"] == "57P01", fields
    assert raw.recv_msg() is None
    raw.close()


def test_copy_subscribe_as_a_plain_role_needs_select(server):
    """A role that is not a superuser: COPY (SUBSCRIBE q) TO STDOUT of a query
    it may not SELECT from is refused with 42501 before any row; once granted
    SELECT, it streams the changes as for the owner."""
    with connect(server) as c:
        c.execute("CREATE STREAM pr_ev (k TEXT, v BIGINT)")
        c.execute("CREATE CONTINUOUS QUERY pr_q WITH (trigger = '0') AS "
                  "SELECT k, sum(v) AS s FROM pr_ev GROUP BY k")
        c.execute("CREATE ROLE pr_reader LOGIN")
        dsn = server.dsn.replace("user=sluice", "user=pr_reader")
        assert "user=pr_reader" in dsn
        with psycopg.connect(dsn, autocommit=True) as r:
            with pytest.raises(psycopg.errors.InsufficientPrivilege):
                with r.cursor().copy("COPY (SUBSCRIBE pr_q) TO STDOUT") as cp:
                    for _ in cp:
                        break
        c.execute("GRANT SELECT ON pr_q TO pr_reader")
        sub, rows, ended, t = start_stream(dsn, "COPY (SUBSCRIBE pr_q) TO STDOUT", copy=True)
        wait_subscribed(server)
        c.execute("INSERT INTO pr_ev VALUES ('a', 2)")
        got = take(rows, 1)
        assert [r[1:] for r in got] == [("insert", "a", "2")]
        sub.cancel()
        t.join(WAIT)
        assert not t.is_alive()
        sub.close()
