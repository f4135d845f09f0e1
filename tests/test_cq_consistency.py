"""What a continuous query's outputs promise whatever the timing of its
batches (issue 19, items 18-22):

- CREATE OR REPLACE that changes the result columns rewrites every row of
  the result table from the state (update and complete mode, over a stream
  with a WATERMARK), and is refused, naming the reason, where the state does
  not hold every row (append mode, closed windows, state_ttl); so is a
  change of HAVING or of an expression that keeps the columns there;
- state_ttl is judged per key when a row touches it again, so a key idle
  for longer than the ttl starts afresh whether or not a batch ran between;
- SUBSCRIBE's feed, replayed into a dict (insert: a new key, update: a key
  present, delete: the row present), equals the result table after every
  batch: merged and moved sessions, new sliding windows, keys state_ttl
  evicted;
- an aggregation in update or complete mode INTO a stream is refused
  (0A000) with a hint: the stream would hold every version of a group
  (unless the query says append_updates = true: then it does);
  a definition stored before that refusal still runs, as with
  append_updates = true, with a warning;
- so is one INTO a Kafka sink whose key does not hold every grouping
  column (no tombstone could take the former row back);
- falling_behind follows the backlog's trend over a window of batches, also
  when every other batch shrinks it;
- a SELECT waiting for the rewrite of a replaced query's rows fails with
  55000 when the server stops before the rewrite committed.
"""

import signal
import threading
import time

import psycopg
import pytest

from test_continuous_queries import connect, rows, ts, tsp
from test_continuous_queries import wait_for as wait_for_30
from test_subscribe import start_stream, take, wait_subscribed

WAIT = 60   # a loaded 2-core machine


def wait_for(fn, want, timeout=WAIT):
    return wait_for_30(fn, want, timeout)


def last_batch(c, name):
    got = c.execute("SELECT last_batch_id FROM sys.queries WHERE name = %s", (name,)).fetchone()
    return -1 if got is None or got[0] is None else got[0]


# --------------------------------------------------------------------------
# Item 18: CREATE OR REPLACE with other result columns


def make_r8(c):
    c.execute("CREATE STREAM r8 (k BIGINT, v BIGINT, ts TIMESTAMP,"
              " WATERMARK FOR ts AS ts - INTERVAL '5 seconds')")


def rewritten_rows(c):
    """The rows of q: a read waits for the first batch under the new
    definition to rewrite them (docs/engine.md, "Query evolution"); never
    XX001."""
    return rows(c, "SELECT * FROM q")


@pytest.mark.parametrize("mode", ["update", "complete"])
def test_replace_with_new_columns_rewrites_every_row_from_state(server, mode):
    with connect(server) as c:
        make_r8(c)
        c.execute(f"CREATE CONTINUOUS QUERY q WITH (trigger = '0', output_mode = '{mode}') AS "
                  "SELECT k, count(*) AS n, sum(v) AS s FROM r8 GROUP BY k")
        c.execute("INSERT INTO r8 VALUES (1, 10, %s), (2, 20, %s), (3, 30, %s), (1, 5, %s)",
                  (tsp(1), tsp(2), tsp(30), tsp(40)))
        want = [(1, 2, 15), (2, 1, 20), (3, 1, 30)]
        assert wait_for(lambda: rows(c, "SELECT * FROM q"), want) == want
        c.execute(f"CREATE OR REPLACE CONTINUOUS QUERY q WITH (trigger = '0', "
                  f"output_mode = '{mode}') AS "
                  "SELECT k, count(*) AS n, sum(v) AS s, k * 10 AS k10 FROM r8 GROUP BY k")
        # Every key, from the state, with the new column -- before any new row.
        want = [(1, 2, 15, 10), (2, 1, 20, 20), (3, 1, 30, 30)]
        assert wait_for(lambda: rewritten_rows(c), want) == want
        c.execute("INSERT INTO r8 VALUES (2, 1, %s)", (tsp(50),))
        want = [(1, 2, 15, 10), (2, 2, 21, 20), (3, 1, 30, 30)]
        assert wait_for(lambda: rows(c, "SELECT * FROM q"), want) == want
    server.restart()
    with connect(server) as c:
        assert rows(c, "SELECT * FROM q") == want


def test_select_right_after_replace_reads_the_new_definition_rows(server):
    """A SELECT of the result table between a CREATE OR REPLACE that changes
    its columns and the query's next batch (a slow trigger: the window is
    wide) answers with the rows of the new definition -- never XX001, never
    the former rows (it waits for the rewrite).  A reader on another
    connection all along sees the former rows or the new ones, whole."""
    trig = "trigger = '30 seconds', output_mode = 'update'"

    def rows(c, sql):     # unprepared: a prepared one whose columns change fails (0A000)
        return sorted(tuple(r) for r in c.execute(sql, prepare=False).fetchall())

    base = "SELECT k, count(*) AS n, sum(v) AS s{} FROM r8 GROUP BY k"
    plain = [(1, 2, 15), (2, 1, 20), (3, 1, 30)]
    wide = [(k, n, s, k * 10) for (k, n, s) in plain]
    with connect(server) as c, connect(server) as c2:
        make_r8(c)
        c.execute("CREATE CONTINUOUS QUERY q WITH (trigger = '0', output_mode = 'update') AS " +
                  base.format(""))
        c.execute("INSERT INTO r8 VALUES (1, 10, %s), (2, 20, %s), (3, 30, %s), (1, 5, %s)",
                  (tsp(1), tsp(2), tsp(30), tsp(40)))
        assert wait_for(lambda: rows(c, "SELECT * FROM q"), plain) == plain
        # From now on a batch comes every 30 s, but for the rewrites.

        stop = threading.Event()
        seen, errors = [], []

        def reader():
            while not stop.is_set():
                try:
                    got = rows(c2, "SELECT * FROM q")
                    if got not in (plain, wide):
                        errors.append(got)
                    seen.append(len(got[0]))
                except psycopg.errors.SerializationFailure:
                    pass    # analysed before a replacement, scanned after its rewrite
                except Exception as e:      # noqa: BLE001 -- XX001 above all
                    errors.append(e)

        t = threading.Thread(target=reader)
        t.start()
        try:
            for i in range(20):
                extra = ", k * 10 AS k10" if i % 2 == 0 else ""
                c.execute(f"CREATE OR REPLACE CONTINUOUS QUERY q WITH ({trig}) AS " +
                          base.format(extra))
                got = rows(c, "SELECT * FROM q")
                assert got == (wide if i % 2 == 0 else plain), f"replacement {i}"
        finally:
            stop.set()
            t.join()
        assert errors == []
        assert set(seen) <= {3, 4} and seen


def make_counted_q(c):
    """q counts the rows of r8 per k, over two keys, their rows written."""
    make_r8(c)
    c.execute("CREATE CONTINUOUS QUERY q WITH (trigger = '0') AS "
              "SELECT k, count(*) AS n FROM r8 GROUP BY k")
    c.execute("INSERT INTO r8 VALUES (1, 1, %s), (2, 1, %s)", (tsp(1), tsp(2)))
    assert wait_for(lambda: rows(c, "SELECT * FROM q"), [(1, 1), (2, 1)]) == [(1, 1), (2, 1)]


def test_prepared_select_after_replace_is_analysed_again(server):
    """A statement prepared before a CREATE OR REPLACE that keeps the oid
    is analysed again (never run with the former definition's entry): the
    result columns changed, so it fails as PostgreSQL's does (0A000); with
    the same columns it reads the rewritten rows."""
    with connect(server) as c:
        make_counted_q(c)
        star, cnt = "SELECT * FROM q", "SELECT count(*) FROM q"
        c.execute(star, prepare=True)
        assert c.execute(cnt, prepare=True).fetchone() == (2,)
        c.execute("CREATE OR REPLACE CONTINUOUS QUERY q WITH (trigger = '0') AS "
                  "SELECT k, count(*) AS n, k * 10 AS k10 FROM r8 GROUP BY k HAVING k > 1")
        with pytest.raises(psycopg.errors.FeatureNotSupported) as e:
            c.execute(star, prepare=True)
        assert "cached plan must not change result type" in str(e.value)
        assert c.execute(cnt, prepare=True).fetchone() == (1,)


def rewrite_held(sluiced, hold):
    """A server whose q has new columns and whose rewriting batch (its
    second) is held in its middle while the file hold exists."""
    srv = sluiced(env={"SLUICE_FAULT": "batch_middle:2:hold", "SLUICE_FAULT_HOLD": str(hold)})
    with connect(srv) as c:
        make_counted_q(c)       # batch 1
        hold.write_text("")
        c.execute("CREATE OR REPLACE CONTINUOUS QUERY q WITH (trigger = '0') AS "
                  "SELECT k, count(*) AS n, k * 10 AS k10 FROM r8 GROUP BY k")
    assert wait_for(lambda: "fault point batch_middle reached, holding" in srv.log_text(), True)
    return srv


def select_in_thread(srv):
    """SELECT * FROM q on a connection of its own, in a thread: (thread,
    a list that gets its rows or its error)."""
    out = []

    def run():
        try:
            with connect(srv) as c:
                out.append(rows(c, "SELECT * FROM q"))
        except psycopg.Error as e:
            out.append(e)
    t = threading.Thread(target=run)
    t.start()
    return t, out


def test_select_waits_for_a_held_rewrite_and_a_drop_ends_the_wait(sluiced, tmp_path):
    """The batch that rewrites the rows for new columns is held in its
    middle (a fault point): a SELECT of the new columns waits for it and
    answers with the rewritten rows once it commits; a SELECT waiting on
    such a rewrite when the query is dropped fails with 42P01 instead of
    reading the former rows."""
    hold = tmp_path / "hold"
    srv = rewrite_held(sluiced, hold)
    t, got = select_in_thread(srv)
    time.sleep(1)
    assert t.is_alive() and got == []       # waiting for the rewrite
    hold.unlink()
    t.join(WAIT)
    assert got == [[(1, 1, 10), (2, 1, 20)]]
    srv.stop()
    # A new server, to hold its second batch again.
    srv = rewrite_held(sluiced, hold)
    t, got = select_in_thread(srv)
    time.sleep(1)
    assert t.is_alive() and got == []
    with connect(srv) as c:
        c.execute("DROP CONTINUOUS QUERY q")
    t.join(WAIT)
    hold.unlink()
    assert len(got) == 1 and isinstance(got[0], psycopg.errors.UndefinedTable), got
    assert "was dropped or reset while this statement ran" in str(got[0])


def test_select_waiting_for_a_rewrite_when_the_server_stops_fails(sluiced):
    """The batch that rewrites the rows for new columns fails on a storage
    error (58030, a fault point) and waits to be tried again: a SELECT of
    the new columns waits for it.  The server stops meanwhile, so the
    rewrite will not come: the SELECT fails with 55000 naming that, and
    never reads the former definition's rows (when the layouts were
    forgotten at shutdown it read them with the new columns: XX001)."""
    srv = sluiced(env={"SLUICE_FAULT": "batch_state_commit:2:failall"})
    with connect(srv) as c:
        make_counted_q(c)       # batch 1
        c.execute("CREATE OR REPLACE CONTINUOUS QUERY q WITH (trigger = '0') AS "
                  "SELECT k, count(*) AS n, k * 10 AS k10 FROM r8 GROUP BY k")
        assert wait_for(lambda: c.execute("SELECT status FROM sys.queries WHERE name = 'q'")
                        .fetchone()[0], "retrying") == "retrying"
    t, got = select_in_thread(srv)
    time.sleep(0.5)
    assert t.is_alive() and got == []       # waiting for the rewrite
    srv.proc.send_signal(signal.SIGTERM)
    t.join(WAIT)
    assert len(got) == 1 and isinstance(got[0], psycopg.errors.ObjectNotInPrerequisiteState), got
    assert "the server is stopping" in str(got[0])
    code = srv.proc.wait(WAIT)
    srv.proc = None
    assert code == 0


def test_select_after_replace_of_a_paused_query_says_why(server):
    """Paused, the query cannot run the batch that rewrites its rows for
    new columns: a SELECT of the new columns fails with 55000 naming that
    (not XX001); RESUME rewrites them."""
    with connect(server) as c:
        make_counted_q(c)
        c.execute("ALTER CONTINUOUS QUERY q PAUSE")
        c.execute("CREATE OR REPLACE CONTINUOUS QUERY q WITH (trigger = '0') AS "
                  "SELECT k, count(*) AS n, k * 10 AS k10 FROM r8 GROUP BY k")
        with pytest.raises(psycopg.errors.ObjectNotInPrerequisiteState) as e:
            c.execute("SELECT * FROM q")
        assert "the query is paused" in str(e.value)
        assert "RESUME" in e.value.diag.message_hint
        c.execute("ALTER CONTINUOUS QUERY q RESUME")
        assert rows(c, "SELECT * FROM q") == [(1, 1, 10), (2, 1, 20)]


def test_subscribe_snapshot_after_replace_waits_for_the_rewrite(server):
    """SUBSCRIBE q WITH (snapshot) between a replacement with new columns
    and the batch that rewrites the rows (held off: the query is paused)
    gets its snapshot of the rewritten rows once that batch commits --
    not a failed read of the former rows and no snapshot at all."""
    with connect(server) as c:
        make_counted_q(c)
        c.execute("ALTER CONTINUOUS QUERY q PAUSE")
        c.execute("CREATE OR REPLACE CONTINUOUS QUERY q WITH (trigger = '0') AS "
                  "SELECT k, count(*) AS n, k * 10 AS k10 FROM r8 GROUP BY k")
        sub, got, ended, t = start_stream(server.dsn, "SUBSCRIBE q WITH (snapshot)")
        try:
            wait_subscribed(server)
            time.sleep(0.5)
            assert take(got, 1, timeout=0.5) == [] and ended == []
            c.execute("ALTER CONTINUOUS QUERY q RESUME")
            snap = sorted(take(got, 2), key=lambda r: r[2])
            assert [r[1:] for r in snap] == [("insert", 1, 1, 10), ("insert", 2, 1, 20)]
            assert "cannot read the result table for SUBSCRIBE" not in server.log_text()
        finally:
            sub.cancel()
            t.join(WAIT)
            sub.close()


def test_replace_refused_while_another_query_reads_the_result_table(server):
    """Query d joins q's result table: new columns for q (d would read the
    rewritten rows with the former columns: XX001, and fail) and reset =
    true (d would go on reading the former table) are refused with 2BP01
    naming d; a change that keeps the columns goes through, and d reads
    the rewritten rows."""
    with connect(server) as c:
        make_counted_q(c)
        c.execute("CREATE STREAM s2 (k BIGINT)")
        c.execute("CREATE CONTINUOUS QUERY d WITH (trigger = '0') AS "
                  "SELECT s2.k, q.n FROM s2 JOIN q ON s2.k = q.k")
        for opts, sel in [("", "SELECT k, count(*) AS n, k * 10 AS k10 FROM r8 GROUP BY k"),
                          (", reset = true", "SELECT k, count(*) AS n FROM r8 GROUP BY k")]:
            with pytest.raises(psycopg.errors.DependentObjectsStillExist) as e:
                c.execute(f"CREATE OR REPLACE CONTINUOUS QUERY q WITH (trigger = '0'{opts}) "
                          f"AS {sel}")
            assert 'continuous query "d" reads its result table' in str(e.value)
            assert 'Drop continuous query "d" first' in e.value.diag.message_hint
        c.execute("CREATE OR REPLACE CONTINUOUS QUERY q WITH (trigger = '0') AS "
                  "SELECT k, count(*) * 100 AS n FROM r8 GROUP BY k")
        assert wait_for(lambda: rows(c, "SELECT * FROM q"), [(1, 100), (2, 100)]) == \
            [(1, 100), (2, 100)]
        c.execute("INSERT INTO s2 VALUES (1)")
        assert wait_for(lambda: rows(c, "SELECT * FROM d"), [(1, 100)]) == [(1, 100)]
        assert rows(c, "SELECT name, status FROM sys.queries") == \
            [("d", "running"), ("q", "running")]


def test_replace_with_new_having_or_expression_rewrites_every_row(server):
    """The same columns, another HAVING and another expression for s: rows
    of groups no new row touches change too."""
    with connect(server) as c:
        make_r8(c)
        c.execute("CREATE CONTINUOUS QUERY q WITH (trigger = '0') AS "
                  "SELECT k, count(*) AS n, sum(v) AS s FROM r8 GROUP BY k HAVING count(*) > 1")
        c.execute("INSERT INTO r8 VALUES (1, 1, %s), (1, 2, %s), (2, 5, %s), (2, 5, %s), "
                  "(2, 5, %s), (3, 7, %s)", tuple(tsp(i) for i in range(6)))
        want = [(1, 2, 3), (2, 3, 15)]
        assert wait_for(lambda: rows(c, "SELECT * FROM q"), want) == want
        c.execute("CREATE OR REPLACE CONTINUOUS QUERY q WITH (trigger = '0') AS "
                  "SELECT k, count(*) AS n, sum(v) * 10 AS s FROM r8 GROUP BY k "
                  "HAVING count(*) > 2 OR k = 3")
        want = [(2, 3, 150), (3, 1, 70)]
        assert wait_for(lambda: rows(c, "SELECT * FROM q"), want) == want


@pytest.mark.parametrize("mode,create,replace,reason", [
    # closed windows: the watermark evicted their state, their rows stayed
    ("update",
     "SELECT window_start, window_end, k, count(*) AS n FROM r8 "
     "GROUP BY WINDOW(ts, INTERVAL '10 seconds'), k",
     "SELECT window_start, window_end, k, count(*) AS n, k * 10 AS k10 FROM r8 "
     "GROUP BY WINDOW(ts, INTERVAL '10 seconds'), k",
     "the watermark deletes a closed window's state while its row stays"),
    ("complete",
     "SELECT window_start, window_end, k, count(*) AS n FROM r8 "
     "GROUP BY WINDOW(ts, INTERVAL '10 seconds'), k",
     "SELECT window_start, window_end, k, count(*) AS n, k * 10 AS k10 FROM r8 "
     "GROUP BY WINDOW(ts, INTERVAL '10 seconds'), k",
     "the watermark deletes a closed window's state while its row stays"),
    ("append",
     "SELECT window_start, window_end, k, count(*) AS n FROM r8 "
     "GROUP BY WINDOW(ts, INTERVAL '10 seconds'), k",
     "SELECT window_start, window_end, k, count(*) AS n, k * 10 AS k10 FROM r8 "
     "GROUP BY WINDOW(ts, INTERVAL '10 seconds'), k",
     "in append mode a window's state is deleted once its row is written"),
    ("update', state_ttl = '1 hour",
     "SELECT k, count(*) AS n FROM r8 GROUP BY k",
     "SELECT k, count(*) AS n, k * 10 AS k10 FROM r8 GROUP BY k",
     "state_ttl deletes idle groups from its state while their rows stay"),
])
def test_replace_with_new_columns_refused_where_state_lacks_rows(server, mode, create,
                                                                  replace, reason):
    with connect(server) as c:
        make_r8(c)
        opts = f"trigger = '0', output_mode = '{mode}'"
        c.execute(f"CREATE CONTINUOUS QUERY q WITH ({opts}) AS {create}")
        # The window [0, 10) closes (watermark 25 s).
        c.execute("INSERT INTO r8 VALUES (1, 1, %s), (2, 1, %s), (1, 1, %s)",
                  (tsp(1), tsp(2), tsp(30)))
        assert wait_for(lambda: last_batch(c, "q") >= 0, True)
        before = wait_for(lambda: len(rows(c, "SELECT * FROM q")) >= 2, True) and \
            rows(c, "SELECT * FROM q")
        with pytest.raises(psycopg.errors.InvalidTableDefinition) as e:
            c.execute(f"CREATE OR REPLACE CONTINUOUS QUERY q WITH ({opts}) AS {replace}")
        assert "its rows cannot be rewritten from the state" in str(e.value)
        assert reason in e.value.diag.message_detail
        assert "reset = true" in e.value.diag.message_hint
        # Refused: the query and its rows are as they were.
        time.sleep(0.3)
        assert rows(c, "SELECT * FROM q") == before
        # reset = true is the way out.
        c.execute(f"CREATE OR REPLACE CONTINUOUS QUERY q WITH ({opts}, reset = true) "
                  f"AS {replace}")
        assert wait_for(lambda: all(len(r) == len(before[0]) + 1
                                    for r in rows(c, "SELECT * FROM q")) and
                        len(rows(c, "SELECT * FROM q")) > 0, True)


@pytest.mark.parametrize("opts,create,replace,reason", [
    # groups with 6 to 10 rows would stay in the result table
    ("output_mode = 'update', state_ttl = '1 hour'",
     "SELECT k, count(*) AS n FROM r8 GROUP BY k HAVING count(*) > 5",
     "SELECT k, count(*) AS n FROM r8 GROUP BY k HAVING count(*) > 10",
     "state_ttl deletes idle groups from its state while their rows stay"),
    # the x100 values would stay until each group is touched again
    ("output_mode = 'update', state_ttl = '1 hour'",
     "SELECT k, sum(v) * 100 AS c FROM r8 GROUP BY k",
     "SELECT k, sum(v) AS c FROM r8 GROUP BY k",
     "state_ttl deletes idle groups from its state while their rows stay"),
    ("output_mode = 'update'",
     "SELECT window_start, window_end, k, count(*) * 10 AS n FROM r8 "
     "GROUP BY WINDOW(ts, INTERVAL '10 seconds'), k",
     "SELECT window_start, window_end, k, count(*) AS n FROM r8 "
     "GROUP BY WINDOW(ts, INTERVAL '10 seconds'), k",
     "the watermark deletes a closed window's state while its row stays"),
])
def test_replace_with_new_having_or_expression_refused_where_state_lacks_rows(
        server, opts, create, replace, reason):
    """Same columns, another HAVING or expression: the rows the state does
    not hold could not be rewritten, so the change is refused (42P16)."""
    with connect(server) as c:
        make_r8(c)
        opts = f"trigger = '0', {opts}"
        c.execute(f"CREATE CONTINUOUS QUERY q WITH ({opts}) AS {create}")
        c.execute("INSERT INTO r8 VALUES " + ", ".join(["(1, 1, %s)"] * 7 + ["(2, 1, %s)"]),
                  tuple(tsp(i) for i in range(7)) + (tsp(30),))
        assert wait_for(lambda: last_batch(c, "q") >= 0, True)
        before = wait_for(lambda: len(rows(c, "SELECT * FROM q")) >= 1, True) and \
            rows(c, "SELECT * FROM q")
        with pytest.raises(psycopg.errors.InvalidTableDefinition) as e:
            c.execute(f"CREATE OR REPLACE CONTINUOUS QUERY q WITH ({opts}) AS {replace}")
        assert "its rows cannot be rewritten from the state" in str(e.value)
        assert reason in e.value.diag.message_detail
        assert "reset = true" in e.value.diag.message_hint
        time.sleep(0.3)
        assert rows(c, "SELECT * FROM q") == before
        # reset = true is the way out.
        c.execute(f"CREATE OR REPLACE CONTINUOUS QUERY q WITH ({opts}, reset = true) "
                  f"AS {replace}")
        assert c.execute("SELECT count(*) FROM sys.queries WHERE name = 'q'").fetchone() == (1,)


# --------------------------------------------------------------------------
# Item 19: state_ttl judged when a key is touched


def test_state_ttl_is_judged_when_a_key_is_touched_again(server):
    """The issue's case: (1,1), (1,2), 6 s idle, (1,3) under a 3 s ttl gives
    n = 1, whether no batch ran between (stream a) or one did (stream b,
    whose batch of key 3 evicts key 1)."""
    with connect(server) as c:
        for s in ("a", "b"):
            c.execute(f"CREATE STREAM r{s} (k BIGINT, v BIGINT)")
            c.execute(f"CREATE CONTINUOUS QUERY q{s} WITH (trigger = '0', "
                      f"state_ttl = '3 seconds') AS "
                      f"SELECT k, count(*) AS n, sum(v) AS s FROM r{s} GROUP BY k")
            c.execute(f"INSERT INTO r{s} VALUES (1, 1), (1, 2), (2, 1)")
        for s in ("a", "b"):
            want = [(1, 2, 3), (2, 1, 1)]
            assert wait_for(lambda: rows(c, f"SELECT * FROM q{s}"), want) == want
        time.sleep(3.5)
        c.execute("INSERT INTO rb VALUES (3, 1)")
        want = [(1, 2, 3), (2, 1, 1), (3, 1, 1)]
        assert wait_for(lambda: rows(c, "SELECT * FROM qb"), want) == want
        time.sleep(2.5)     # 6 s after keys 1 and 2 were last touched
        for s in ("a", "b"):
            before = last_batch(c, f"q{s}")
            c.execute(f"INSERT INTO r{s} VALUES (1, 3)")
            assert wait_for(lambda: last_batch(c, f"q{s}") > before, True)
        # Key 1 starts afresh in both; key 2's row stays as it was.
        assert rows(c, "SELECT * FROM qa") == [(1, 1, 3), (2, 1, 1)]
        assert rows(c, "SELECT * FROM qb") == [(1, 1, 3), (2, 1, 1), (3, 1, 1)]
        # The state holds what a later row would find: in qa key 1 (key 2
        # was evicted after the batch), in qb keys 1 and 3.
        state = dict(c.execute("SELECT query, state_rows FROM sys.state").fetchall())
        assert state == {"qa": 1, "qb": 2}
        # Within the ttl, key 1 goes on counting.
        c.execute("INSERT INTO ra VALUES (1, 4)")
        want = [(1, 2, 7), (2, 1, 1)]
        assert wait_for(lambda: rows(c, "SELECT * FROM qa"), want) == want


def test_distinct_state_ttl_is_judged_when_a_key_is_seen_again(server):
    """DISTINCT ON under state_ttl: a key seen again after the ttl, with no
    batch between, is a first occurrence again."""
    with connect(server) as c:
        c.execute("CREATE STREAM s (id BIGINT, v TEXT)")
        c.execute("CREATE CONTINUOUS QUERY d WITH (trigger = '0', state_ttl = '2 seconds') AS "
                  "SELECT DISTINCT ON (id) id, v FROM s")
        c.execute("INSERT INTO s VALUES (1, 'a')")
        assert wait_for(lambda: rows(c, "SELECT * FROM d"), [(1, "a")]) == [(1, "a")]
        time.sleep(3)
        before = last_batch(c, "d")
        c.execute("INSERT INTO s VALUES (1, 'b')")
        assert wait_for(lambda: last_batch(c, "d") > before, True)
        assert rows(c, "SELECT * FROM d") == [(1, "a"), (1, "b")]
        before = last_batch(c, "d")
        c.execute("INSERT INTO s VALUES (1, 'c')")      # within the ttl: a duplicate
        assert wait_for(lambda: last_batch(c, "d") > before, True)
        assert rows(c, "SELECT * FROM d") == [(1, "a"), (1, "b")]


# --------------------------------------------------------------------------
# Item 20: SUBSCRIBE's feed rebuilds the result table


class Model:
    """The result table rebuilt from a SUBSCRIBE feed; key(row) gives a
    row's key in the result table."""

    def __init__(self, key):
        self.key = key
        self.rows = {}

    def apply(self, change):
        kind, row = change[1], tuple(change[2:])
        k = self.key(row)
        if kind == "insert":
            assert k not in self.rows, f"insert of a row present: {change}, {self.rows[k]}"
            self.rows[k] = row
        elif kind == "update":
            assert k in self.rows, f"update of a row never inserted: {change}"
            self.rows[k] = row
        else:
            assert kind == "delete", change
            assert self.rows.get(k) == row, f"delete of a row not there: {change}"
            del self.rows[k]

    def table(self):
        return sorted(self.rows.values())


def check_feed(c, feed, model, name, timeout=WAIT):
    """Applies the changes that arrive until the model equals the table
    (which no batch changes meanwhile: the caller waited for its batch)."""
    deadline = time.monotonic() + timeout
    table = rows(c, f"SELECT * FROM {name}")
    while time.monotonic() < deadline:
        for ch in take(feed, 1000, timeout=0.3):
            model.apply(ch)
        if model.table() == table:
            return
    assert model.table() == table


def run_steps(server, c, name, key, steps, pause=0.0):
    """Subscribes to query name, runs each step (an execute's arguments,
    pause seconds apart) and checks the feed against the table after each
    step's batch; returns the model."""
    sub, feed, ended, t = start_stream(server.dsn, f"SUBSCRIBE {name}")
    try:
        wait_subscribed(server)
        model = Model(key)
        for i, step in enumerate(steps):
            if i > 0:
                time.sleep(pause)
            before = last_batch(c, name)
            c.execute(*step)
            assert wait_for(lambda: last_batch(c, name) > before, True)
            check_feed(c, feed, model, name)
        assert not ended, ended
        return model
    finally:
        sub.cancel()
        t.join(WAIT)
        sub.close()


def test_subscribe_feed_of_session_windows_rebuilds_the_table(server):
    with connect(server) as c:
        c.execute("CREATE STREAM ev (k BIGINT, ts TIMESTAMP,"
                  " WATERMARK FOR ts AS ts - INTERVAL '1 hour')")
        c.execute("CREATE CONTINUOUS QUERY s WITH (trigger = '0', output_mode = 'update') AS "
                  "SELECT window_start, window_end, k, count(*) AS n FROM ev "
                  "GROUP BY SESSION(ts, INTERVAL '3 seconds'), k")
        ins = "INSERT INTO ev VALUES " + ", ".join(["(%s, %s)"] * 2)
        model = run_steps(server, c, "s", lambda r: (r[2], r[0]), [
            # two sessions: [1, 4) and [6, 9)
            (ins, (1, tsp(1), 1, tsp(6))),
            # 3.5 bridges them: [1, 9) n=3, [6, 9) goes
            ("INSERT INTO ev VALUES (1, %s)", (tsp(3.5),)),
            # an earlier row moves the start: [0, 9) replaces [1, 9)
            ("INSERT INTO ev VALUES (1, %s)", (tsp(0),)),
            # another key, and a session that starts later
            (ins, (2, tsp(20), 1, tsp(30))),
            # a row that extends [30, 33) at its end: the same start, an update
            ("INSERT INTO ev VALUES (1, %s)", (tsp(32),)),
        ])
        assert model.table() == [(ts(0), ts(9), 1, 4), (ts(20), ts(23), 2, 1),
                                 (ts(30), ts(35), 1, 2)]


def test_subscribe_feed_of_sliding_windows_rebuilds_the_table(server):
    with connect(server) as c:
        c.execute("CREATE STREAM ev (k BIGINT, ts TIMESTAMP,"
                  " WATERMARK FOR ts AS ts - INTERVAL '1 hour')")
        c.execute("CREATE CONTINUOUS QUERY w WITH (trigger = '0', output_mode = 'update') AS "
                  "SELECT window_start, window_end, k, count(*) AS n FROM ev "
                  "GROUP BY WINDOW(ts, INTERVAL '10 seconds', INTERVAL '5 seconds'), k")
        model = run_steps(server, c, "w", lambda r: (r[0], r[2]), [
            ("INSERT INTO ev VALUES (1, %s)", (tsp(1),)),
            ("INSERT INTO ev VALUES (1, %s), (1, %s)", (tsp(6), tsp(12))),
            ("INSERT INTO ev VALUES (2, %s), (1, %s)", (tsp(7), tsp(2))),
        ])
        assert len(model.rows) == 6


def test_subscribe_feed_with_state_ttl_rebuilds_the_table(server):
    """A key state_ttl evicted has no state, but its row stayed: the next
    row for it is an update of that row, not an insert."""
    with connect(server) as c:
        c.execute("CREATE STREAM r (k BIGINT, v BIGINT)")
        c.execute("CREATE CONTINUOUS QUERY t WITH (trigger = '0', state_ttl = '2 seconds') AS "
                  "SELECT k, count(*) AS n FROM r GROUP BY k")
        model = run_steps(server, c, "t", lambda row: row[0], [
            ("INSERT INTO r VALUES (1, 1), (2, 1)",),
            ("INSERT INTO r VALUES (3, 1)",),       # evicts 1 and 2
            ("INSERT INTO r VALUES (1, 1)",),       # afresh; evicts 3
            ("INSERT INTO r VALUES (2, 1)",),       # afresh
        ], pause=2.5)
        assert model.table() == [(1, 1), (2, 1), (3, 1)]


# --------------------------------------------------------------------------
# Item 21: update-mode INTO a stream


@pytest.mark.parametrize("mode", ["", "output_mode = 'update'", "output_mode = 'complete'"])
def test_update_mode_into_a_stream_is_refused(server, mode):
    with connect(server) as c:
        c.execute("CREATE STREAM ev (k BIGINT, v BIGINT, ts TIMESTAMP,"
                  " WATERMARK FOR ts AS ts - INTERVAL '1 second')")
        c.execute("CREATE STREAM totals (k BIGINT, s NUMERIC)")
        opts = f"WITH ({mode})" if mode else ""
        with pytest.raises(psycopg.errors.FeatureNotSupported) as e:
            c.execute(f"CREATE CONTINUOUS QUERY q INTO totals {opts} AS "
                      "SELECT k, sum(v) AS s FROM ev GROUP BY k")
        assert 'cannot write INTO stream "totals"' in str(e.value)
        assert "output_mode = 'append'" in e.value.diag.message_hint
        assert c.execute("SELECT count(*) FROM sys.queries").fetchone() == (0,)


def test_update_mode_into_a_files_sink_is_refused(server, tmp_path):
    with connect(server) as c:
        c.execute("CREATE STREAM ev (k BIGINT, v BIGINT)")
        c.execute(f"CREATE SINK f WITH (connector = 'files', path = '{tmp_path / 'out'}', "
                  "format = 'csv')")
        with pytest.raises(psycopg.errors.FeatureNotSupported) as e:
            c.execute("CREATE CONTINUOUS QUERY q INTO f AS "
                      "SELECT k, sum(v) AS s FROM ev GROUP BY k")
        assert 'cannot write INTO sink "f"' in str(e.value)


KAFKA_SINK = ("CREATE SINK ko WITH (connector = 'kafka', topic = 't', "
              "bootstrap_servers = '127.0.0.1:9'{key})")


@pytest.mark.parametrize("key,select", [
    # no key: no tombstones, every version of a group appended unkeyed
    ("", "SELECT k, g, sum(v) AS s FROM ev GROUP BY k, g"),
    # a key that leaves out a grouping column merges different groups
    ("k", "SELECT k, g, sum(v) AS s FROM ev GROUP BY k, g"),
    # a grouping column only as an expression of it
    ("k10", "SELECT k * 10 AS k10, sum(v) AS s FROM ev GROUP BY k"),
    # a window's groups need window_start or window_end in the key
    ("k", "SELECT window_start, k, sum(v) AS s FROM ev "
          "GROUP BY WINDOW(ts, INTERVAL '10 seconds'), k"),
])
def test_update_mode_into_a_kafka_sink_without_a_group_key_is_refused(server, key, select):
    """No broker is contacted at CREATE SINK or CREATE CONTINUOUS QUERY."""
    with connect(server) as c:
        c.execute("CREATE STREAM ev (k BIGINT, g BIGINT, v BIGINT, ts TIMESTAMP)")
        c.execute(KAFKA_SINK.format(key=f", key = '{key}'" if key else ""))
        with pytest.raises(psycopg.errors.FeatureNotSupported) as e:
            c.execute(f"CREATE CONTINUOUS QUERY q INTO ko AS {select}")
        assert 'cannot write INTO sink "ko"' in str(e.value)
        assert "output_mode = 'append'" in e.value.diag.message_hint
        assert c.execute("SELECT count(*) FROM sys.queries").fetchone() == (0,)


@pytest.mark.parametrize("key,select", [
    ("k, g", "SELECT k, g, sum(v) AS s FROM ev GROUP BY k, g"),
    ("g,k", "SELECT k, g, sum(v) AS s FROM ev GROUP BY k, g"),
    ("window_start, k", "SELECT window_start, k, sum(v) AS s FROM ev "
                        "GROUP BY WINDOW(ts, INTERVAL '10 seconds'), k"),
])
def test_update_mode_into_a_kafka_sink_keyed_by_its_groups_is_accepted(server, key, select):
    with connect(server) as c:
        c.execute("CREATE STREAM ev (k BIGINT, g BIGINT, v BIGINT, ts TIMESTAMP)")
        c.execute(KAFKA_SINK.format(key=f", key = '{key}'"))
        c.execute(f"CREATE CONTINUOUS QUERY q INTO ko AS {select}")
        assert c.execute("SELECT count(*) FROM sys.queries").fetchone() == (1,)
        c.execute("DROP CONTINUOUS QUERY q")


def test_append_updates_appends_each_version_when_asked(server):
    """append_updates = true: the query says its readers keep the last row
    of each group; every changed group is appended each batch."""
    with connect(server) as c:
        c.execute("CREATE STREAM ev (k BIGINT, v BIGINT)")
        c.execute("CREATE STREAM versions (k BIGINT, s NUMERIC)")
        c.execute("CREATE CONTINUOUS QUERY q INTO versions WITH (trigger = '0', "
                  "append_updates = true) AS SELECT k, sum(v) AS s FROM ev GROUP BY k")
        c.execute("CREATE CONTINUOUS QUERY seen WITH (trigger = '0') AS "
                  "SELECT k, s FROM versions")
        c.execute("INSERT INTO ev VALUES (1, 1), (2, 5)")
        assert wait_for(lambda: rows(c, "SELECT * FROM seen"), [(1, 1), (2, 5)]) == [(1, 1), (2, 5)]
        c.execute("INSERT INTO ev VALUES (1, 2)")
        want = [(1, 1), (1, 3), (2, 5)]
        assert wait_for(lambda: rows(c, "SELECT * FROM seen"), want) == want


def test_stored_update_mode_into_a_stream_still_runs_after_an_upgrade(server):
    """A definition stored before the refusal (made here by dropping
    append_updates from the catalog while the server is down) still starts:
    it runs as with append_updates = true and logs a warning; it is not
    refused at boot."""
    import json
    import sqlite3
    with connect(server) as c:
        c.execute("CREATE STREAM ev (k BIGINT, v BIGINT)")
        c.execute("CREATE STREAM versions (k BIGINT, s NUMERIC)")
        c.execute("CREATE CONTINUOUS QUERY q INTO versions WITH (trigger = '0', "
                  "append_updates = true) AS SELECT k, sum(v) AS s FROM ev GROUP BY k")
        c.execute("CREATE CONTINUOUS QUERY seen WITH (trigger = '0') AS "
                  "SELECT k, s FROM versions")
    server.stop()
    db = sqlite3.connect(server.data_dir / "catalog.db")
    try:
        sql, opts = db.execute("SELECT sql, options FROM relations WHERE name = 'q'").fetchone()
        opts = json.loads(opts)
        assert opts.pop("append_updates") is not None
        sql = sql.replace(", append_updates = true", "")
        assert "append_updates" not in sql
        db.execute("UPDATE relations SET sql = ?, options = ? WHERE name = 'q'",
                   (sql, json.dumps(opts)))
        db.commit()
    finally:
        db.close()
    server.start()
    with connect(server) as c:
        assert c.execute("SELECT status FROM sys.queries WHERE name = 'q'").fetchone() == \
            ("running",)
        c.execute("INSERT INTO ev VALUES (1, 1), (2, 5)")
        assert wait_for(lambda: rows(c, "SELECT * FROM seen"), [(1, 1), (2, 5)]) == \
            [(1, 1), (2, 5)]
        c.execute("INSERT INTO ev VALUES (1, 2)")
        want = [(1, 1), (1, 3), (2, 5)]
        assert wait_for(lambda: rows(c, "SELECT * FROM seen"), want) == want
    assert "a stored continuous query appends each change of a group" in server.log_text()


def test_append_mode_windows_into_a_stream_are_written_once(server):
    """The refusal's way out: each window once, when it closes; a
    downstream sum counts every row once."""
    with connect(server) as c:
        c.execute("CREATE STREAM ev (k BIGINT, v BIGINT, ts TIMESTAMP,"
                  " WATERMARK FOR ts AS ts - INTERVAL '1 second')")
        c.execute("CREATE STREAM per_window (ws TIMESTAMP, k BIGINT, s NUMERIC)")
        c.execute("CREATE CONTINUOUS QUERY q INTO per_window WITH (trigger = '0', "
                  "output_mode = 'append') AS SELECT window_start, k, sum(v) AS s FROM ev "
                  "GROUP BY WINDOW(ts, INTERVAL '10 seconds'), k")
        c.execute("CREATE CONTINUOUS QUERY total WITH (trigger = '0') AS "
                  "SELECT k, sum(s) AS s FROM per_window GROUP BY k")
        for t, v in ((1, 1), (2, 2), (3, 3), (12, 4), (25, 5)):
            c.execute("INSERT INTO ev VALUES (1, %s, %s)", (v, tsp(t)))
        # [0, 10) and [10, 20) closed: 1+2+3 and 4; [20, 30) still open.
        assert wait_for(lambda: rows(c, "SELECT * FROM total"), [(1, 10)]) == [(1, 10)]


# --------------------------------------------------------------------------
# Item 22: falling_behind on the backlog's trend


def test_falling_behind_when_the_backlog_grows_in_a_sawtooth(server):
    """10 rows per batch; 30 more every second batch: the backlog shrinks by
    10 every other batch and grows by 20 in between (+5 a batch)."""
    with connect(server) as c:
        c.execute("CREATE STREAM ev (k BIGINT)")
        c.execute("CREATE CONTINUOUS QUERY slow WITH (trigger = '300 milliseconds', "
                  "max_offsets_per_trigger = 10) AS SELECT k FROM ev")
        behind = False
        seen = []
        for i in range(16):
            before = last_batch(c, "slow")
            c.execute("INSERT INTO ev SELECT * FROM generate_series(1, 30)")
            for _ in range(2):
                assert wait_for(lambda: last_batch(c, "slow") > before, True)
                before = last_batch(c, "slow")
            seen = [b for (b,) in c.execute(
                "SELECT backlog_rows FROM sys.query_progress WHERE query = 'slow' "
                "ORDER BY batch_id").fetchall()]
            behind = c.execute("SELECT falling_behind FROM sys.queries WHERE name = 'slow'"
                               ).fetchone()[0]
            if behind and i >= 8:
                break
        assert behind, seen
        # The backlog did shrink between growths: no three batches in a row
        # without a shrink, which the old rule needed.
        assert any(b < a for a, b in zip(seen, seen[1:])), seen
        assert seen[-1] > seen[len(seen) // 2] > 0, seen
        c.execute("ALTER CONTINUOUS QUERY slow PAUSE")
        assert c.execute("SELECT falling_behind FROM sys.queries WHERE name = 'slow'"
                         ).fetchone() == (False,)


def test_not_behind_while_the_backlog_drains(server):
    """A burst, then the query works it off: the backlog falls every batch."""
    with connect(server) as c:
        c.execute("CREATE STREAM ev (k BIGINT)")
        c.execute("CREATE CONTINUOUS QUERY q WITH (trigger = '100 milliseconds', "
                  "max_offsets_per_trigger = 10) AS SELECT k FROM ev")
        c.execute("INSERT INTO ev SELECT * FROM generate_series(1, 200)")
        samples = []
        deadline = time.monotonic() + WAIT
        while time.monotonic() < deadline:
            samples.append(c.execute("SELECT falling_behind FROM sys.queries "
                                     "WHERE name = 'q'").fetchone()[0])
            if c.execute("SELECT count(*) FROM q").fetchone()[0] == 200:
                break
            time.sleep(0.05)
        assert len(samples) > 10 and not any(samples), samples
