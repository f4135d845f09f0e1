"""Continuous queries that read other continuous queries' result tables (an
MV on an MV; issue 21 item 4; docs/engine-graph.md, "Result tables as
inputs"), exactly once through SIGKILL, and DROP ... CASCADE over them.

Over two streams without watermarks (ev: k, v; ev2: k, w):

    a_cnt   per k: count and sum of v (the fixed shape: each change of a
            group is an update, read by its readers as the old row out and
            the new one in)
    a_w     per k: max(w) of ev2 (the fixed shape)
    a_dist  per k: count(DISTINCT v) (the operator graph: retractions)
    b_hist  per count n of a_cnt: how many keys have it (an aggregate over
            another query's aggregate)
    b_join  a_cnt JOIN a_w ON k (a join of two result tables)
    b_dist  per d of a_dist: how many keys (over a graph query)
    c_total the sum of b_hist's keys (three levels: = the number of keys)

The readers compare with a Python model of the same rows (the answer of
the batch query over everything loaded); readers lag their inputs by many
batches (max_offsets_per_trigger cuts the inputs' batches small, and a
reader reads every batch committed since its last).  A changelog lost or
applied twice shows as a wrong count (or a retraction of a row never
inserted, which fails the reader's batch).  Also: a reader created over a
running query (from a snapshot), far behind, over changes larger than a
chunk; DROP / CASCADE and REPLACE with readers, plain roles, refusals.
"""

import random
import time
from collections import Counter

import psycopg
import pytest
from conftest import crash_at_fault_point, kill_at_random
from test_crash_recovery import FAULT_POINTS as CRASH_POINTS

NKEYS = 30
N_EVENTS = 6_000
BATCH = 300
CONVERGE = 240

BASE = {
    "a_cnt": "SELECT k, count(*) AS n, sum(v) AS s FROM ev GROUP BY k",
    "a_w": "SELECT k, max(w) AS m FROM ev2 GROUP BY k",
    "a_dist": "SELECT k, count(DISTINCT v) AS d FROM ev GROUP BY k",
}
READERS = {
    "b_hist": "SELECT n, count(*) AS keys FROM a_cnt GROUP BY n",
    "b_join": "SELECT c.k, c.n, c.s, w.m FROM a_cnt c JOIN a_w w ON c.k = w.k",
    "b_dist": "SELECT d, count(*) AS keys FROM a_dist GROUP BY d",
    "c_total": "SELECT sum(keys) AS total, count(*) AS counts FROM b_hist",
}
QUERIES = {**BASE, **READERS}
# test_crash_recovery's points but its files sink's, each reached about
# six times as late as there: seven queries share the count, and the
# readers are then reading batches of their inputs.
FAULT_POINTS = [(p, n * 6) for p, n in CRASH_POINTS if not p.startswith("sink_")]


def make_events(seed, n=N_EVENTS):
    rng = random.Random(seed)
    ev = [(rng.randrange(NKEYS), rng.randrange(40)) for _ in range(n)]
    ev2 = [(rng.randrange(NKEYS + 5), rng.randrange(1000)) for _ in range(n // 3)]
    return ev, ev2


def model(ev, ev2):
    """Each reader's result table as a sorted row list."""
    n = Counter(k for k, _ in ev)
    s = Counter()
    for k, v in ev:
        s[k] += v
    m = {}
    for k, w in ev2:
        m[k] = max(m.get(k, w), w)
    d = {k: len({v for kk, v in ev if kk == k}) for k in n}
    hist = Counter(n.values())
    return {
        "b_hist": sorted(hist.items()),
        "b_join": sorted((k, n[k], s[k], m[k]) for k in n if k in m),
        "b_dist": sorted(Counter(d.values()).items()),
        "c_total": [(sum(hist.values()), len(hist))] if hist else [(None, 0)],
    }


def connect(server):
    return psycopg.connect(server.dsn, autocommit=True)


def create(c, names, batch=BATCH, paused=True):
    for name in names:
        c.execute(f"CREATE CONTINUOUS QUERY {name} WITH (trigger = '0',"
                  f" max_offsets_per_trigger = {batch}) AS {QUERIES[name]}")
        if paused:
            c.execute(f"ALTER CONTINUOUS QUERY {name} PAUSE")


def load(c, ev, ev2):
    for stream, cols, rows in (("ev", "k, v", ev), ("ev2", "k, w", ev2)):
        for i in range(0, len(rows), 1_000):
            with c.cursor().copy(f"COPY {stream} ({cols}) FROM STDIN") as cp:
                for r in rows[i:i + 1_000]:
                    cp.write_row(r)


def make_streams(c):
    c.execute("CREATE STREAM ev (k BIGINT, v BIGINT)")
    c.execute("CREATE STREAM ev2 (k BIGINT, w BIGINT)")


def start_hist(server, c):
    """a_cnt and its reader b_hist over three rows, caught up."""
    make_streams(c)
    create(c, ["a_cnt", "b_hist"], paused=False)
    load(c, [(1, 1), (2, 2), (2, 3)], [])
    want = {"b_hist": [(1, 1), (2, 1)]}
    assert converge(server, want) == want


def set_up(server, ev, ev2, batch=BATCH):
    with connect(server) as c:
        make_streams(c)
        create(c, QUERIES, batch)
        load(c, ev, ev2)


def resume_all(server):
    """RESUME every query; a fault point may kill the server meanwhile (the
    queries left paused are resumed after the restart)."""
    try:
        with connect(server) as c:
            for name in QUERIES:
                c.execute(f"ALTER CONTINUOUS QUERY {name} RESUME")
    except psycopg.OperationalError:
        pass            # the caller sees the server die


def outputs(server, names=READERS):
    with connect(server) as c:
        return {name: sorted(c.execute(f"SELECT * FROM {name}").fetchall()) for name in names}


def status(server):
    with connect(server) as c:
        return c.execute("SELECT name, status, last_error FROM sys.queries").fetchall()


def converge(server, want):
    deadline = time.monotonic() + CONVERGE
    while True:
        got = outputs(server, want)
        if got == want or time.monotonic() > deadline:
            return got
        time.sleep(0.25)


@pytest.fixture(scope="module")
def events():
    return make_events(4)


def test_readers_answer(sluiced, events):
    """Without faults: every reader equals the model; EXPLAIN names the
    result tables read as changelogs."""
    server = sluiced()
    ev, ev2 = events
    set_up(server, ev, ev2)
    resume_all(server)
    want = model(ev, ev2)
    assert converge(server, want) == want, status(server)
    with connect(server) as c:
        plan = "\n".join(r[0] for r in c.execute("EXPLAIN CONTINUOUS QUERY b_join").fetchall())
        assert "join (inner) on 1 key: unbounded [op 0, from query a_cnt, query a_w]" in plan, plan
        assert ("Source: continuous query a_cnt, its changelog (a snapshot of its result "
                "table, then each committed batch's changes, exactly once)") in plan, plan


def test_reader_created_over_a_running_query(sluiced, events):
    """A reader created after its input ran starts from a snapshot of its
    result table, then reads its changes: equal to the model before and
    after more rows come.  Its input stays in step after the reader's
    first batch (no batch of it is lost or doubled in between)."""
    server = sluiced()
    ev, ev2 = events
    half = len(ev) // 2
    with connect(server) as c:
        make_streams(c)
        create(c, BASE, paused=False)
        load(c, ev[:half], ev2[:half // 3])
        want_cnt = sorted(Counter(k for k, _ in ev[:half]).items())
        deadline = time.monotonic() + CONVERGE
        while (sorted(c.execute("SELECT k, n FROM a_cnt").fetchall()) != want_cnt and
               time.monotonic() < deadline):
            time.sleep(0.2)
        create(c, READERS, paused=False)
    want = model(ev[:half], ev2[:half // 3])
    assert converge(server, want) == want, status(server)
    with connect(server) as c:
        load(c, ev[half:], ev2[half // 3:])
    want = model(ev, ev2)
    assert converge(server, want) == want, status(server)


@pytest.mark.parametrize("point,hit", FAULT_POINTS, ids=[p for p, _ in FAULT_POINTS])
def test_crash_at_fault_point(sluiced, events, point, hit):
    """SIGKILL at each durable step of a batch (the first query to reach
    it: any of the inputs or readers), then a restart: every reader equals
    the model."""
    ev, ev2 = events
    want = model(ev, ev2)
    server = sluiced()
    set_up(server, ev, ev2)
    server.stop()
    crash_at_fault_point(server, point, hit, resume_all, CONVERGE)
    assert converge(server, want) == want, status(server)


def test_twenty_random_kills(sluiced, events):
    batch = 100
    ev, ev2 = events
    want = model(ev, ev2)
    server = sluiced()
    set_up(server, ev, ev2, batch)
    server.stop()
    kill_at_random(server, 20, random.Random(21), resume_all)
    assert converge(server, want) == want, status(server)


def error_of(fn):
    """(SQLSTATE, primary message, detail) fn() fails with; Nones if it succeeds."""
    try:
        fn()
    except psycopg.Error as e:
        return e.sqlstate, str(e).splitlines()[0], e.diag.message_detail
    return None, None, None


def test_drop_refuses_while_a_reader_exists(server):
    """DROP of a query (or of the stream under it) that another query reads
    is refused with 2BP01 naming the reader; CASCADE drops the readers, and
    the readers of theirs; one DROP naming a query and its reader drops
    both.  The last reader gone, its input drops its changelog."""
    with connect(server) as c:
        make_streams(c)
        create(c, QUERIES, paused=False)
        assert error_of(lambda: c.execute("DROP CONTINUOUS QUERY a_cnt")) == (
            "2BP01", "cannot drop continuous query a_cnt because other objects depend on it",
            "continuous query b_join depends on continuous query a_cnt")
        assert error_of(lambda: c.execute("DROP CONTINUOUS QUERY b_hist RESTRICT")) == (
            "2BP01", "cannot drop continuous query b_hist because other objects depend on it",
            "continuous query c_total depends on continuous query b_hist")
        # a query and its only reader in one DROP
        c.execute("DROP CONTINUOUS QUERY a_dist, b_dist")
        # CASCADE: b_hist, its reader c_total and b_join go with a_cnt
        c.execute("DROP CONTINUOUS QUERY a_cnt CASCADE")
        names = [r[0] for r in c.execute("SELECT name FROM sys.queries ORDER BY name")]
        assert names == ["a_w"], names
        # a stream's CASCADE follows readers of readers
        create(c, ["a_cnt", "b_hist", "c_total"], paused=False)
        assert error_of(lambda: c.execute("DROP STREAM ev")) == (
            "2BP01", "cannot drop stream ev because other objects depend on it",
            "continuous query a_cnt depends on stream ev")
        c.execute("DROP STREAM ev CASCADE")
        names = [r[0] for r in c.execute("SELECT name FROM sys.queries ORDER BY name")]
        assert names == ["a_w"], names


def test_changelog_goes_with_its_last_reader(server):
    """Once a query's last reader is dropped, its next batch drops its
    changelog; a new reader starts from a new snapshot of the result table
    (with the rows that came meanwhile) and then reads its changes."""
    with connect(server) as c:
        start_hist(server, c)
        c.execute("DROP CONTINUOUS QUERY b_hist")
        load(c, [(1, 5)], [])
        create(c, ["b_hist"], paused=False)
        want = {"b_hist": [(2, 2)]}
        assert converge(server, want) == want
        load(c, [(3, 5)], [])
        want = {"b_hist": [(1, 1), (2, 2)]}
        assert converge(server, want) == want


def test_plain_roles(server):
    """A role reads another's result table only with SELECT on it (42501
    without); the owner's DROP ... CASCADE may not drop another role's
    reader (42501), its owner may; the reader's owner may not drop the
    input."""
    from test_roles import connect_as, su
    with su(server) as admin:
        admin.execute("CREATE ROLE u LOGIN PASSWORD 'u-secret'")
        admin.execute("CREATE ROLE v LOGIN PASSWORD 'v-secret'")
        admin.execute("CREATE STREAM ev (k BIGINT, v BIGINT)")
        admin.execute("GRANT SELECT ON ev TO u")
        with connect_as(server, "u") as u, connect_as(server, "v") as v:
            u.execute(f"CREATE CONTINUOUS QUERY a_cnt WITH (trigger = '0') AS {BASE['a_cnt']}")
            assert error_of(lambda: v.execute(
                f"CREATE CONTINUOUS QUERY b_hist WITH (trigger = '0') AS {READERS['b_hist']}")
                )[:2] == ("42501", "permission denied for continuous query a_cnt")
            u.execute("GRANT SELECT ON a_cnt TO v")
            v.execute(f"CREATE CONTINUOUS QUERY b_hist WITH (trigger = '0') AS "
                      f"{READERS['b_hist']}")
            admin.execute("INSERT INTO ev VALUES (1, 1), (1, 2), (2, 3)")
            want = {"b_hist": [(1, 1), (2, 1)]}
            assert converge(server, want) == want
            assert error_of(lambda: v.execute("DROP CONTINUOUS QUERY a_cnt"))[:2] == (
                "42501", "must be owner of continuous query a_cnt")
            assert error_of(lambda: u.execute("DROP CONTINUOUS QUERY a_cnt CASCADE")) == (
                "42501", "must be owner of continuous query b_hist",
                "DROP ... CASCADE would drop continuous query b_hist, which depends on a_cnt "
                "and belongs to another role.")
            assert error_of(lambda: u.execute("DROP CONTINUOUS QUERY a_cnt"))[0] == "2BP01"
            v.execute("DROP CONTINUOUS QUERY b_hist")
            u.execute("DROP CONTINUOUS QUERY a_cnt")


def test_refusals(server):
    """Append mode or INTO a stream over a result table that retracts is
    refused naming the input; a query INTO a stream has no result table to
    read; a table on the operator graph is refused (never ignored)."""
    with connect(server) as c:
        make_streams(c)
        c.execute("CREATE STREAM outs (k BIGINT, n BIGINT)")
        c.execute("CREATE TABLE dim (k BIGINT PRIMARY KEY, name TEXT)")
        create(c, ["a_cnt"], paused=False)
        c.execute("CREATE CONTINUOUS QUERY a_into INTO outs AS SELECT k, v FROM ev")
        c.execute("CREATE CONTINUOUS QUERY a_app AS SELECT k, v FROM ev WHERE v > 0")
        assert error_of(lambda: c.execute(
            "CREATE CONTINUOUS QUERY r1 WITH (output_mode = 'append') AS "
            "SELECT k, n FROM a_cnt WHERE n > 1")) == (
            "0A000", "output_mode 'append' cannot hold for continuous query \"r1\": its input "
            "\"a_cnt\" (a continuous query whose aggregate in update mode (each change of a "
            "group retracts its row))", None)
        assert error_of(lambda: c.execute(
            "CREATE CONTINUOUS QUERY r2 INTO outs AS SELECT k, n FROM a_cnt"))[:2] == (
            "0A000", "continuous query \"r2\" cannot write INTO \"outs\": its input \"a_cnt\" "
            "(a continuous query whose aggregate in update mode (each change of a group "
            "retracts its row)), and a stream cannot take back a row")
        assert error_of(lambda: c.execute(
            "CREATE CONTINUOUS QUERY r3 AS SELECT k, count(*) AS n FROM a_into GROUP BY k")
            )[:2] == (
            "42809", "continuous query \"r3\" cannot read continuous query \"a_into\": it "
            "writes INTO \"outs\", and its result table stays empty")
        assert error_of(lambda: c.execute(
            "CREATE CONTINUOUS QUERY r4 AS SELECT d.name, count(*) AS n FROM a_cnt a "
            "JOIN dim d ON a.k = d.k GROUP BY d.name"))[:2] == (
            "0A000", "a table in a continuous query on the operator graph is not supported yet")
        # an append-only input: append mode and INTO hold
        c.execute("CREATE CONTINUOUS QUERY r5 WITH (output_mode = 'append') AS "
                  "SELECT k, v FROM a_app WHERE k > 0")
        c.execute("CREATE CONTINUOUS QUERY r6 INTO outs AS SELECT k, v AS n FROM a_app")
        c.execute("INSERT INTO ev VALUES (1, 5), (0, 6), (2, -1)")
        want = {"r5": [(1, 5)]}
        assert converge(server, want) == want


def test_replace_of_a_query_with_readers(server):
    """CREATE OR REPLACE of a query another reads: a change of options keeps
    its changelog going; a definition that rewrites its rows is refused
    (2BP01), as is one with other columns or reset."""
    with connect(server) as c:
        start_hist(server, c)
        c.execute(f"CREATE OR REPLACE CONTINUOUS QUERY a_cnt WITH (trigger = '10 ms') AS "
                  f"{BASE['a_cnt']}")
        load(c, [(1, 4)], [])
        want = {"b_hist": [(2, 2)]}
        assert converge(server, want) == want
        assert error_of(lambda: c.execute(
            "CREATE OR REPLACE CONTINUOUS QUERY a_cnt AS "
            "SELECT k, count(*) + 1 AS n, sum(v) AS s FROM ev GROUP BY k"))[:2] == (
            "2BP01", "cannot replace continuous query \"a_cnt\": continuous query \"b_hist\" "
            "reads its result table")
        assert error_of(lambda: c.execute(
            "CREATE OR REPLACE CONTINUOUS QUERY a_cnt WITH (reset = true) AS "
            f"{BASE['a_cnt']}"))[0] == "2BP01"
        # the reader itself: a change of options keeps its position
        c.execute(f"CREATE OR REPLACE CONTINUOUS QUERY b_hist WITH (trigger = '10 ms') AS "
                  f"{READERS['b_hist']}")
        load(c, [(3, 1)], [])
        want = {"b_hist": [(1, 1), (2, 2)]}
        assert converge(server, want) == want, status(server)
        with connect(server) as c2:
            rows = c2.execute("SELECT source, partition FROM sys.source_lag "
                              "WHERE query = 'b_hist' ORDER BY partition").fetchall()
        assert rows == [("a_cnt", 0), ("a_cnt", 1)], rows


def test_reader_far_behind(server, events):
    """A paused reader holds its input's changelog: its input runs twenty
    batches meanwhile (sys.source_lag shows the reader that far behind,
    sys.state the batches of changes kept), and once resumed the reader
    reads them all, each once; then the changes it read are let go."""
    ev, ev2 = events
    with connect(server) as c:
        make_streams(c)
        create(c, ["a_cnt", "b_hist"], paused=False)
        load(c, ev[:10], [])
        want = model(ev[:10], [])
        assert converge(server, {"b_hist": want["b_hist"]}) == {"b_hist": want["b_hist"]}
        c.execute("ALTER CONTINUOUS QUERY b_hist PAUSE")
        load(c, ev[10:], [])
        deadline = time.monotonic() + CONVERGE
        while time.monotonic() < deadline:
            lag = c.execute("SELECT lag FROM sys.source_lag "
                            "WHERE query = 'b_hist' AND partition = 0").fetchone()[0]
            if lag >= len(ev[10:]) // BATCH:
                break
            time.sleep(0.2)
        assert lag >= len(ev[10:]) // BATCH, lag
        # sys.state: a_cnt keeps those batches of changes for its reader
        kept = changelog_batches(c)
        assert kept >= len(ev[10:]) // BATCH, kept
        c.execute("ALTER CONTINUOUS QUERY b_hist RESUME")
        want = model(ev, [])
        assert converge(server, {"b_hist": want["b_hist"]}) == {"b_hist": want["b_hist"]}
        # the reader caught up: a_cnt's next batches let the changes go
        for extra in range(2):
            load(c, [(extra, 1)], [])
            time.sleep(0.5)
        want = model(ev + [(0, 1), (1, 1)], [])
        assert converge(server, {"b_hist": want["b_hist"]}) == {"b_hist": want["b_hist"]}
        assert changelog_batches(c) <= 3


def changelog_batches(c):
    """sys.state's changelog row of a_cnt: the batches of changes kept."""
    return c.execute("SELECT state_rows FROM sys.state WHERE query = 'a_cnt' "
                     "AND operator = 'changelog'").fetchone()[0]


def test_large_changes_span_chunks(server):
    """A snapshot and batches of changes larger than one changelog chunk
    (256 KiB: thousands of wide rows, every group updated at once) are read
    whole, each row once."""
    nkeys, pad = 6_000, "x" * 150
    with connect(server) as c:
        c.execute("CREATE STREAM wide (k BIGINT, p TEXT)")
        c.execute("CREATE CONTINUOUS QUERY w_a WITH (trigger = '0') AS "
                  "SELECT k, max(p) AS p, count(*) AS n FROM wide GROUP BY k")

        def load_round(tag):
            with c.cursor().copy("COPY wide (k, p) FROM STDIN") as cp:
                for k in range(nkeys):
                    cp.write_row((k, f"{pad}{tag}{k}"))

        load_round("a")
        deadline = time.monotonic() + CONVERGE
        while (c.execute("SELECT count(*) FROM w_a").fetchone()[0] < nkeys and
               time.monotonic() < deadline):
            time.sleep(0.2)
        # created over a result table of about 1 MB: its snapshot
        c.execute("CREATE CONTINUOUS QUERY w_b WITH (trigger = '0') AS "
                  "SELECT count(*) AS keys, sum(n) AS rows, min(p) AS lo, max(p) AS hi FROM w_a")
        want = {"w_b": [(nkeys, nkeys, f"{pad}a0", max(f"{pad}a{k}" for k in range(nkeys)))]}
        assert converge(server, want) == want, status(server)
        # every group updated in one batch: its old rows out, its new in
        load_round("b")
        want = {"w_b": [(nkeys, 2 * nkeys, f"{pad}b0", max(f"{pad}b{k}" for k in range(nkeys)))]}
        assert converge(server, want) == want, status(server)
