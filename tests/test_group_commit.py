"""--commit-mode=group: concurrent clients' appends share fsyncs, each
acknowledged only once durable.

In group mode an INSERT into a stream (or a COPY into one) encodes its rows on
the event loop and hands the durable write to the thread pool; the session
answers when the write is done and only then reads its next message.  Checked
here: 8 clients over the extended protocol (psycopg) and the simple protocol
(psql, several statements in one string, a COPY in the middle) all get their
rows in, in order per client, with fewer RocksDB writes than appends (the
server's shutdown line counts them); statements after a deferred INSERT see its
rows; a client that disconnects while its append is in flight costs nothing;
/metrics counts the store's appends and writes as they grow, the same figures
as the shutdown line.
"""

import re
import subprocess
import threading

import psycopg

from test_http import get, http_port, parse_metrics, value

CLIENTS = 8
INSERTS = 150


def connect(server):
    return psycopg.connect(server.dsn, connect_timeout=10, autocommit=True)


def results(out):
    """psql's output lines without the command tags."""
    return [line for line in out.splitlines() if line[:1].isdigit()]


def commit_counts(server):
    m = re.findall(r"sluiced stopped.*appends=(\d+) writes=(\d+)", server.log_text())
    assert m, "no shutdown line"
    return int(m[-1][0]), int(m[-1][1])


def test_concurrent_inserts_share_fsyncs(sluiced):
    server = sluiced("--commit-mode=group")
    with connect(server) as conn:
        conn.execute("CREATE STREAM hits (client INT, n INT, url TEXT)")
    errors = []
    start = threading.Barrier(CLIENTS)

    def client(k):
        try:
            with connect(server) as conn:
                start.wait()
                for n in range(INSERTS):
                    conn.execute("INSERT INTO hits VALUES (%s, %s, '/p')", (k, n))
                    if n % 50 == 49:
                        # a read after an acknowledged INSERT sees it
                        got = conn.execute("SELECT count(*) FROM hits WHERE client = %s",
                                           (k,)).fetchone()[0]
                        assert got == n + 1, (k, n, got)
        except Exception as e:      # reported below
            errors.append(e)

    threads = [threading.Thread(target=client, args=(k,)) for k in range(CLIENTS)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(300)
    assert not errors, errors[0]
    with connect(server) as conn:
        assert conn.execute("SELECT count(*), count(DISTINCT client * 100000 + n) FROM hits").fetchone() \
            == (CLIENTS * INSERTS, CLIENTS * INSERTS)
        # per client, in the order it inserted (offsets follow acknowledgements)
        rows = conn.execute("SELECT client, n FROM hits").fetchall()
    for k in range(CLIENTS):
        assert [n for c, n in rows if c == k] == list(range(INSERTS))
    server.stop()
    appends, writes = commit_counts(server)
    assert appends == CLIENTS * INSERTS
    assert writes < appends, (appends, writes)


def test_metrics_count_the_stores_appends_and_writes(sluiced):
    server = sluiced("--commit-mode=group", "--http-port", "0")
    port = http_port(server)

    def counts():
        fam = parse_metrics(get(port, "/metrics")[2])
        assert fam["sluice_stream_appends_total"]["type"] == "counter"
        assert fam["sluice_stream_writes_total"]["type"] == "counter"
        return (value(fam, "sluice_stream_appends_total"),
                value(fam, "sluice_stream_writes_total"))

    assert counts() == (0, 0)
    with connect(server) as conn:
        conn.execute("CREATE STREAM hits (client INT, n INT)")
    start = threading.Barrier(4)
    errors = []

    def client(k):
        try:
            with connect(server) as conn:
                start.wait()
                for n in range(40):
                    conn.execute("INSERT INTO hits VALUES (%s, %s)", (k, n))
        except Exception as e:      # reported below
            errors.append(e)

    threads = [threading.Thread(target=client, args=(k,)) for k in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(300)
    assert not errors, errors[0]
    appends, writes = counts()
    assert appends == 160 and 0 < writes <= appends, (appends, writes)
    with connect(server) as conn:
        conn.execute("INSERT INTO hits VALUES (9, 9), (9, 10)")    # one append
    final = counts()
    assert final[0] == 161 and final[1] > writes, final
    server.stop()
    assert commit_counts(server) == final


def test_simple_protocol_statements_and_copy_after_deferred_appends(sluiced):
    server = sluiced("--commit-mode=group")
    sql = ("CREATE STREAM s (x INT); INSERT INTO s VALUES (1); INSERT INTO s VALUES (2), (3); "
           "SELECT count(*) FROM s; INSERT INTO s SELECT x + 10 FROM s; SELECT sum(x) FROM s")
    r = subprocess.run(["psql", server.dsn, "-X", "-At", "-v", "ON_ERROR_STOP=1", "-c", sql],
                       capture_output=True, text=True, timeout=60)
    assert r.returncode == 0, r.stderr
    assert results(r.stdout) == ["3", "42"]
    r = subprocess.run(["psql", server.dsn, "-X", "-At", "-v", "ON_ERROR_STOP=1",
                        "-c", "COPY s FROM STDIN", "-c", "SELECT count(*), sum(x) FROM s"],
                       input="100\n200\n", capture_output=True, text=True, timeout=60)
    assert r.returncode == 0, r.stderr
    assert results(r.stdout) == ["8|342"]
    # an error after a deferred INSERT in the same string ends the string
    r = subprocess.run(["psql", server.dsn, "-X", "-At", "-c",
                        "INSERT INTO s VALUES (1000); SELECT 1/0; INSERT INTO s VALUES (2000)"],
                       capture_output=True, text=True, timeout=60)
    assert "division by zero" in r.stderr
    with connect(server) as conn:
        assert conn.execute("SELECT count(*), max(x) FROM s").fetchone() == (9, 1000)
        # RETURNING is answered after the append, as in sync mode
        assert conn.execute("INSERT INTO s VALUES (7) RETURNING x").fetchall() == [(7,)]


def test_client_gone_while_its_append_is_in_flight(sluiced):
    server = sluiced("--commit-mode=group", "--group-commit-window=200000")
    with connect(server) as conn:
        conn.execute("CREATE STREAM s (x INT)")
    # the 0.2 s window keeps the append in flight while the client leaves
    p = subprocess.Popen(["psql", server.dsn, "-X", "-c", "INSERT INTO s VALUES (1)"],
                         stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    try:
        p.wait(0.1)
    except subprocess.TimeoutExpired:
        p.kill()
        p.wait()
    with connect(server) as conn:
        conn.execute("INSERT INTO s VALUES (2)")
        assert conn.execute("SELECT count(*) FROM s WHERE x = 2").fetchone() == (1,)
