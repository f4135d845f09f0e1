"""tests/kafka/kafka_helpers.py - what the Kafka tests share.

    broker_fixture()        a module-scoped fixture: one real broker
                            (tools/kafka/broker.py) for the module, always stopped
    Admin(bootstrap)        create/delete topics, add partitions, group offsets
    produce(...)            records to chosen partitions, flushed; returns offsets
    read_committed(...)     every record of a topic, isolation.level=read_committed
                            (or read_uncommitted)
    wait_for(fn, want)      poll fn() with a generous deadline
    catalog_rows(server, sql)  read the server's SQLite catalog (offset log,
                            query status) read-only, while it runs
"""

import json
import sqlite3
import sys
import time
from pathlib import Path

import pytest
from confluent_kafka import Consumer, Producer, TopicPartition
from confluent_kafka.admin import AdminClient, NewPartitions, NewTopic

REPO = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(REPO / "tools" / "kafka"))

from broker import KafkaBroker  # noqa: E402

import helpers  # noqa: E402

WAIT = 90   # seconds: the suite runs on a loaded 2-core machine under ASan


def broker_fixture():
    @pytest.fixture(scope="module")
    def kafka():
        broker = KafkaBroker()
        try:
            broker.start()
            yield broker
        finally:
            broker.stop()
    return kafka


class Admin:
    def __init__(self, bootstrap):
        self.bootstrap = bootstrap
        self.client = AdminClient({"bootstrap.servers": bootstrap})

    def create_topic(self, name, partitions, config=None):
        fs = self.client.create_topics([NewTopic(name, partitions, 1, config=config or {})])
        fs[name].result(60)
        self.wait_partitions(name, partitions)

    def wait_partitions(self, name, partitions):
        deadline = time.monotonic() + WAIT
        while time.monotonic() < deadline:
            md = self.client.list_topics(name, timeout=10)
            t = md.topics.get(name)
            if t is not None and t.error is None and len(t.partitions) == partitions and \
                    all(p.leader >= 0 for p in t.partitions.values()):
                return
            time.sleep(0.2)
        raise AssertionError(f"topic {name} did not get {partitions} partitions")

    def add_partitions(self, name, total):
        fs = self.client.create_partitions([NewPartitions(name, total)])
        fs[name].result(60)
        self.wait_partitions(name, total)

    def delete_records(self, name, partition, before):
        fs = self.client.delete_records([TopicPartition(name, partition, before)])
        for f in fs.values():
            f.result(60)

    def delete_topic(self, name):
        fs = self.client.delete_topics([name])
        fs[name].result(60)

    def group_offsets(self, group, topic, partitions):
        c = Consumer({"bootstrap.servers": self.bootstrap, "group.id": group,
                      "enable.auto.commit": False})
        try:
            tps = c.committed([TopicPartition(topic, p) for p in range(partitions)], timeout=30)
            return {tp.partition: tp.offset for tp in tps}
        finally:
            c.close()


def produce(bootstrap, topic, records, **conf):
    """records: (partition, key, value[, headers]) tuples; value bytes/str/None.

    Returns the offsets given, in order."""
    p = Producer({"bootstrap.servers": bootstrap, "linger.ms": 5, **conf})
    offsets = [None] * len(records)

    def report(i):
        def cb(err, msg):
            assert err is None, err
            offsets[i] = msg.offset()
        return cb

    for i, rec in enumerate(records):
        part, key, value = rec[0], rec[1], rec[2]
        headers = rec[3] if len(rec) > 3 else None
        while True:
            try:
                p.produce(topic, value=value, key=key, partition=part, headers=headers,
                          on_delivery=report(i))
                break
            except BufferError:
                p.poll(0.1)
        p.poll(0)
    assert p.flush(60) == 0
    return offsets


def read_committed(bootstrap, topic, timeout=WAIT, isolation="read_committed"):
    """Every record of topic (all partitions) as (partition, offset, key, value),
    read with isolation.level=read_committed up to the last stable offsets
    (isolation="read_uncommitted": up to the high watermarks, the records of
    open and aborted transactions included)."""
    c = Consumer({"bootstrap.servers": bootstrap, "group.id": f"check-{time.time_ns()}",
                  "isolation.level": isolation, "enable.auto.commit": False,
                  "auto.offset.reset": "earliest", "enable.partition.eof": True})
    try:
        md = c.list_topics(topic, timeout=30)
        parts = sorted(md.topics[topic].partitions)
        c.assign([TopicPartition(topic, p, 0) for p in parts])
        out, eof = [], set()
        deadline = time.monotonic() + timeout
        while len(eof) < len(parts) and time.monotonic() < deadline:
            m = c.poll(0.5)
            if m is None:
                continue
            if m.error():
                if m.error().code() == -191:    # _PARTITION_EOF
                    eof.add(m.partition())
                    continue
                raise AssertionError(str(m.error()))
            eof.discard(m.partition())
            out.append((m.partition(), m.offset(), m.key(), m.value()))
        assert len(eof) == len(parts), "did not reach the end of every partition"
        return out
    finally:
        c.close()


def wait_for(fn, want, timeout=WAIT):
    return helpers.wait_for(fn, want, timeout, every=0.2)


def catalog_rows(server, sql, params=()):
    db = sqlite3.connect(f"file:{server.data_dir / 'catalog.db'}?mode=ro", uri=True,
                         timeout=30)
    try:
        return db.execute(sql, params).fetchall()
    finally:
        db.close()


def offset_log(server, query):
    """The offset log of query: [(batch_id, [ {oid, topic, part, start, end} ])]."""
    rows = catalog_rows(server, "SELECT o.batch_id, o.sources FROM cq_offsets o "
                        "JOIN relations r ON r.oid = o.query_oid WHERE r.name = ? "
                        "ORDER BY o.batch_id", (query,))
    return [(b, json.loads(s)) for b, s in rows]


def query_status(server, query):
    rows = catalog_rows(server, "SELECT s.status, s.last_error FROM cq_status s "
                        "JOIN relations r ON r.oid = s.query_oid WHERE r.name = ?", (query,))
    return rows[0] if rows else (None, None)


def hold_before_state_commit(monkeypatch, tmp_path, nth=1):
    """Arms the server started next to hold its nth batch before the state
    commit (SLUICE_FAULT=batch_before_state_commit:N:hold) while a file
    exists; pair with kill_once_logged."""
    hold = tmp_path / "hold"
    hold.write_text("")
    monkeypatch.setenv("SLUICE_FAULT", f"batch_before_state_commit:{nth}:hold")
    monkeypatch.setenv("SLUICE_FAULT_HOLD", str(hold))


def kill_once_logged(server, query, entries):
    """Waits until the held batch holds and the loop has logged its offsets
    (query's offset log has `entries` entries: the entry is written while
    the batch runs), then SIGKILLs the server: a batch logged but not
    committed, to be replayed."""
    assert wait_for(lambda: "fault point batch_before_state_commit reached, holding"
                    in server.log_text(), True), "the batch did not hold"
    assert wait_for(lambda: len(offset_log(server, query)), entries) == entries
    assert server.kill() == -9
