"""tests/kafka/test_kafka_recovery.py - a Kafka stream through crashes and a broker
that goes away, against a real broker (one per module, tools/kafka/broker.py).

Covers: dead letters recorded exactly once per stream -- written in the batch's own
RocksDB write, keyed by (topic, partition, offset) -- through a SIGKILL after the
batch that read them (before its state commit, so the batch is replayed) and with
two queries reading the same stream; a broker stopped and started again on the same
ports and data while a query reads from it, and while a batch's Kafka transaction is
open (held at a fault point): the query retries (status 'retrying' with the error in
sys.queries) and resumes, and a read_committed consumer sees every output row
exactly once; closing the consumer of a deleted topic is bounded by close_timeout.
"""

import json
import time

import psycopg
import pytest

from kafka_helpers import (WAIT, Admin, broker_fixture, hold_before_state_commit,
                           kill_once_logged, produce, query_status, read_committed,
                           wait_for)

kafka = broker_fixture()


def connect(server):
    return psycopg.connect(server.dsn, autocommit=True)


def ids(lo, hi, parts):
    """Records {"id": i, "v": i} for i in [lo, hi), round robin over parts."""
    return [(i % parts, None, json.dumps({"id": i, "v": i})) for i in range(lo, hi)]


def make_stream(c, name, topic, bootstrap, extra=""):
    c.execute(f"CREATE STREAM {name} (id BIGINT, v BIGINT) WITH (connector = 'kafka', "
              f"topic = '{topic}', bootstrap_servers = '{bootstrap}'{extra})")


def make_pipeline(c, bootstrap, p, stream_extra="", sink_extra=""):
    """Stream {p}i over topic {p}_in -> query {p}q -> Kafka sink {p}o into topic
    {p}_out, keyed by id, progress topic {p}_progress."""
    make_stream(c, f"{p}i", f"{p}_in", bootstrap, stream_extra)
    c.execute(f"CREATE SINK {p}o WITH (connector = 'kafka', topic = '{p}_out', "
              f"bootstrap_servers = '{bootstrap}', key = 'id', "
              f"progress_topic = '{p}_progress'{sink_extra})")
    c.execute(f"CREATE CONTINUOUS QUERY {p}q INTO {p}o WITH (trigger = '100 ms') AS "
              f"SELECT id, v FROM {p}i")


def rows(conn, sql):
    try:
        return sorted(conn.execute(sql).fetchall())
    except psycopg.errors.UndefinedTable:
        return None


POISON = [(0, None, json.dumps({"id": 1, "v": 1})),
          (0, None, b'{"id": 2, "v": "not a number"}'),
          (0, None, json.dumps({"id": 3, "v": 3})),
          (0, None, b"not json at all{"),
          (0, None, json.dumps({"id": 5, "v": 5}))]


def test_dead_letters_once_through_a_kill_and_two_queries(kafka, sluiced, monkeypatch,
                                                         tmp_path):
    """The batch that read two poison records is killed before its state commit
    (held there until the loop has logged its offsets, which it writes while
    the batch runs); after the restart it is replayed, and a second query reads
    the same records: each poison record is in the dead letters once."""
    admin = Admin(kafka.bootstrap)
    admin.create_topic("dl_once", 1)
    produce(kafka.bootstrap, "dl_once", POISON)
    hold_before_state_commit(monkeypatch, tmp_path, 1)
    server = sluiced()
    with connect(server) as c:
        make_stream(c, "dlo", "dl_once", kafka.bootstrap)
        c.execute("CREATE CONTINUOUS QUERY dq1 WITH (trigger = '100 ms') AS "
                  "SELECT id, v FROM dlo")
    kill_once_logged(server, "dq1", 1)
    monkeypatch.delenv("SLUICE_FAULT")
    server.start()
    want = [(1, 1), (3, 3), (5, 5)]
    with connect(server) as c:
        assert wait_for(lambda: rows(c, "SELECT * FROM dq1"), want) == want
        # The replayed batch recorded them (nothing before the kill did).
        assert "replay" in server.log_text().lower()
        c.execute("CREATE CONTINUOUS QUERY dq2 WITH (trigger = '100 ms') AS "
                  "SELECT id, v * 10 AS w FROM dlo")
        want2 = [(1, 10), (3, 30), (5, 50)]
        assert wait_for(lambda: rows(c, "SELECT * FROM dq2"), want2) == want2
        # A later poison record, read by both queries, is recorded once too.
        produce(kafka.bootstrap, "dl_once", [(0, None, b"[1, 2"),
                                             (0, None, json.dumps({"id": 7, "v": 7}))])
        want = [(1, 1), (3, 3), (5, 5), (7, 7)]
        want2 = [(1, 10), (3, 30), (5, 50), (7, 70)]
        assert wait_for(lambda: rows(c, "SELECT * FROM dq1"), want) == want
        assert wait_for(lambda: rows(c, "SELECT * FROM dq2"), want2) == want2
        dead = c.execute("SELECT source, byte_offset, raw FROM dlo_dead_letters "
                         "ORDER BY byte_offset").fetchall()
        assert [(s, o, bytes(r)) for s, o, r in dead] == [
            ("kafka:dl_once/0", 1, b'{"id": 2, "v": "not a number"}'),
            ("kafka:dl_once/0", 3, b"not json at all{"),
            ("kafka:dl_once/0", 5, b"[1, 2")]
    assert "dead letters recorded before, not appended again" in server.log_text()
    # Once more after a clean restart: both queries go on, nothing is added.
    server.restart()
    with connect(server) as c:
        produce(kafka.bootstrap, "dl_once", [(0, None, json.dumps({"id": 8, "v": 8}))])
        assert wait_for(lambda: len(rows(c, "SELECT * FROM dq2")), 5) == 5
        assert c.execute("SELECT count(*) FROM dlo_dead_letters").fetchone()[0] == 3


def status(c, query):
    return c.execute("SELECT status, last_error FROM sys.queries WHERE name = %s",
                     (query,)).fetchone()


def wait_retrying(c, server, query, error, tries):
    """Waits until query is 'retrying' with error in last_error, and stays so
    while tries failed tries are logged (the broker is away)."""
    assert wait_for(lambda: status(c, query)[0], "retrying") == "retrying"
    assert error in status(c, query)[1], status(c, query)
    assert query_status(server, query)[0] == "retrying"
    deadline = time.monotonic() + WAIT
    while server.log_text().count("failed on a transient error, retrying") < tries:
        assert time.monotonic() < deadline, "no retries logged"
        assert status(c, query)[0] == "retrying", status(c, query)
        time.sleep(0.5)


def sink_rows(bootstrap, topic):
    return sorted(json.loads(v)["id"] for _, _, _, v in read_committed(bootstrap, topic))


def test_broker_away_and_back_is_retried_exactly_once(kafka, sluiced):
    """The broker stops while a batch needs it and starts again on the same ports and
    data: the query retries that batch (status 'retrying'), then resumes, and the sink
    holds every row once."""
    admin = Admin(kafka.bootstrap)
    admin.create_topic("br_in", 2)
    admin.create_topic("br_out", 1)
    produce(kafka.bootstrap, "br_in", ids(0, 100, 2))
    server = sluiced()
    with connect(server) as c:
        # The consumer stays assigned between batches and fetches ahead; with
        # queued.min.messages 1 and the records below written one per request,
        # it holds at most a few of them, so the next batch needs the broker.
        make_pipeline(c, kafka.bootstrap, "br", ", read_timeout = '2 seconds', "
                      "\"kafka.queued.min.messages\" = '1'")
        assert wait_for(lambda: sink_rows(kafka.bootstrap, "br_out"),
                        list(range(100))) == list(range(100))
        # Paused, the query's source still looks at the topic: let it see 100 more
        # records, then take the broker away and resume, so the next batch needs it.
        c.execute("ALTER CONTINUOUS QUERY brq PAUSE")
        for rec in ids(100, 200, 2):
            produce(kafka.bootstrap, "br_in", [rec])
        assert wait_for(lambda: c.execute(
            "SELECT sum(latest_offset) FROM sys.source_lag WHERE query = 'brq'").fetchone()[0],
            200) == 200
        kafka.halt()
        try:
            c.execute("ALTER CONTINUOUS QUERY brq RESUME")
            # A few tries while the broker is away; the query never fails.
            wait_retrying(c, server, "brq", "no records from Kafka", 3)
        finally:
            kafka.resume()
        want = list(range(200))
        assert wait_for(lambda: sink_rows(kafka.bootstrap, "br_out"), want) == want
        assert wait_for(lambda: status(c, "brq"), ("running", None)) == ("running", None)
        assert "micro-batch succeeded after retries" in server.log_text()
        # And on after it.
        produce(kafka.bootstrap, "br_in", ids(200, 250, 2))
        want = list(range(250))
        assert wait_for(lambda: sink_rows(kafka.bootstrap, "br_out"), want) == want
        time.sleep(1)
        assert sink_rows(kafka.bootstrap, "br_out") == want


def test_closing_a_consumer_of_a_deleted_topic_is_bounded(kafka, sluiced):
    """A query reads a topic that is then deleted (fail_on_data_loss = false, so it
    goes on); dropping it closes its consumer.  Debian 12's librdkafka 2.0.2 hangs in
    rd_kafka_destroy there (joining its main thread; seen in this test): the close
    waits close_timeout at most and logs which way it went; the server then stops
    cleanly with exit code 0."""
    admin = Admin(kafka.bootstrap)
    admin.create_topic("gone", 2)
    produce(kafka.bootstrap, "gone", ids(0, 20, 2))
    server = sluiced()
    with connect(server) as c:
        make_stream(c, "gs", "gone", kafka.bootstrap,
                    ", fail_on_data_loss = false, close_timeout = '2 seconds'")
        c.execute("CREATE CONTINUOUS QUERY gq WITH (trigger = '100 ms') AS "
                  "SELECT count(*) AS n FROM gs")
        assert wait_for(lambda: c.execute("SELECT n FROM gq").fetchone(), (20,)) == (20,)
        admin.delete_topic("gone")
        # The query goes on without the topic.
        time.sleep(2)
        assert query_status(server, "gq")[0] == "running"
        t0 = time.monotonic()
        c.execute("DROP CONTINUOUS QUERY gq")

        def outcome():
            log = server.log_text()
            return ('msg="kafka consumer closed" stream=gs' in log,
                    'msg="kafka consumer still closing, left behind" stream=gs' in log)
        deadline = time.monotonic() + WAIT
        while outcome() == (False, False) and time.monotonic() < deadline:
            time.sleep(0.1)
        took = time.monotonic() - t0
        closed, left = outcome()
        assert closed or left, "the consumer's close was not logged"
        # Bounded by close_timeout (2 s) plus the poller's last look (a metadata
        # request, 5 s at most) on this loaded machine.
        assert took < 20, took
        if left:
            assert "stream=gs waited_ms=2" in server.log_text()
        with pytest.raises(psycopg.Error) as e:
            c.execute("CREATE STREAM bad (a INT) WITH (connector = 'kafka', topic = 't', "
                      "bootstrap_servers = 'x:1', close_timeout = '-1 second')")
        assert 'invalid value for option "close_timeout"' in str(e.value)
    assert server.stop() == 0


@pytest.mark.parametrize("linger", [None, "2500"])
def test_sink_commit_with_the_broker_away_is_retried_exactly_once(kafka, sluiced, tmp_path,
                                                                  linger):
    """The broker goes away while a batch's Kafka transaction is open (held at the
    kafka_sink_before_commit fault point): commit_transaction times out, the batch is
    retried with a new producer until the broker is back, and every row is in the
    output once.  With linger.ms = 2.5 s (below message.timeout.ms, 2.9 s, which must
    stay below the transaction's timeout, 10 s: commit_transaction's longest wait) the
    records are still in the producer when the broker
    goes (killed: at once, before the linger ends): they fail delivery (timed out),
    which makes the commit an abortable error -- transient too, since every failure was
    a timeout."""
    p = "ts" if linger is None else "tl"
    admin = Admin(kafka.bootstrap)
    admin.create_topic(f"{p}_in", 1)
    admin.create_topic(f"{p}_out", 1)
    produce(kafka.bootstrap, f"{p}_in", ids(0, 50, 1))
    hold = tmp_path / "hold"
    hold.write_text("")
    server = sluiced(env={"SLUICE_FAULT": "kafka_sink_before_commit:hold",
                          "SLUICE_FAULT_HOLD": str(hold)})
    sink_extra = ", \"kafka.transaction.timeout.ms\" = '3000'"
    if linger is not None:
        sink_extra = (", \"kafka.transaction.timeout.ms\" = '10000', "
                      f"\"kafka.linger.ms\" = '{linger}', "
                      "\"kafka.message.timeout.ms\" = '2900'")
    with connect(server) as c:
        make_pipeline(c, kafka.bootstrap, p, ", read_timeout = '3 seconds'", sink_extra)
        deadline = time.monotonic() + WAIT
        while "fault point kafka_sink_before_commit reached, holding" not in server.log_text():
            assert time.monotonic() < deadline, "the sink never reached its commit"
            time.sleep(0.1)
        kafka.halt(kill=linger is not None)
        try:
            hold.unlink()
            wait_retrying(c, server, f"{p}q", "Kafka sink", 2)
        finally:
            kafka.resume()
        want = list(range(50))
        assert wait_for(lambda: sink_rows(kafka.bootstrap, f"{p}_out"), want) == want
        assert wait_for(lambda: status(c, f"{p}q"), ("running", None)) == ("running", None)
        time.sleep(1)
        assert sink_rows(kafka.bootstrap, f"{p}_out") == want
    log = server.log_text()
    assert "micro-batch succeeded after retries" in log
    assert log.count('msg="kafka sink ready"') >= 2
