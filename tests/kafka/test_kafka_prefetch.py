"""tests/kafka/test_kafka_prefetch.py - the Kafka source's consumer kept assigned
from one batch to the next, against a real broker (one per module,
tools/kafka/broker.py).

A batch's reader leaves the consumer assigned, fetching on, and keeps the records
it took past its ranges for the next batch, which uses them when it starts where
the last one ended (src/connectors/kafka_reader.c, docs/architecture.md).  Covers:
batches of exactly max_offsets_per_trigger across partitions read with one
assignment, every record once, while more records arrive; a SIGKILL before a
batch's state commit, after which the replayed batch reads the same ranges from a
fresh consumer and every record is counted once; dead letters at batch edges once
each; ranges that end at transaction markers (offsets no record has), where the
next batch needs the end-of-file event an earlier one took.  Each test runs with
the librdkafka reader (fetch = 'librdkafka', what this file is about) and with the
direct Fetch path (the default, tests/kafka/test_kafka_fetch.py), which must read
the same batches.
"""

import json
import re
import time

import psycopg
import pytest
from confluent_kafka import Producer

from kafka_helpers import (WAIT, Admin, broker_fixture, hold_before_state_commit,
                           kill_once_logged, offset_log, produce, wait_for)

kafka = broker_fixture()


def connect(server):
    return psycopg.connect(server.dsn, autocommit=True)


def make_stream(c, name, topic, bootstrap, extra=""):
    c.execute(f"CREATE STREAM {name} (id BIGINT, v BIGINT) WITH (connector = 'kafka', "
              f"topic = '{topic}', bootstrap_servers = '{bootstrap}'{extra})")


def ids(lo, hi, parts):
    return [(i % parts, None, json.dumps({"id": i, "v": i})) for i in range(lo, hi)]


def totals(c, query):
    """(rows, distinct ids, sum of ids) of a query's result table."""
    try:
        return c.execute(f"SELECT count(*), count(DISTINCT id), coalesce(sum(id), 0) "
                         f"FROM {query}").fetchone()
    except psycopg.errors.UndefinedTable:
        return None


def want(n):
    return (n, n, n * (n - 1) // 2)


def batch_sizes(server, query):
    return [sum(p["end"] - p["start"] for p in parts) for _, parts in offset_log(server, query)]


def assert_consecutive(log):
    for (_, a), (_, b) in zip(log, log[1:]):
        assert {p["part"]: p["end"] for p in a} == {p["part"]: p["start"] for p in b}


@pytest.mark.parametrize("fetch", ["librdkafka", "direct"])
def test_capped_batches_share_one_assignment(kafka, sluiced, fetch):
    """2,000 records on 4 partitions in batches of 150: 14 batches, each starting
    where the last ended, read with one assignment of the consumer; then 1,000
    more while the query runs, still without assigning again.  The direct path
    (fetch = 'direct') reads the same batches without assigning at all."""
    admin = Admin(kafka.bootstrap)
    topic = f"pf_capped_{fetch}"
    admin.create_topic(topic, 4)
    produce(kafka.bootstrap, topic, ids(0, 2000, 4))
    server = sluiced("--log-level", "debug")
    with connect(server) as c:
        make_stream(c, "pfc", topic, kafka.bootstrap,
                    f", max_offsets_per_trigger = 150, fetch = '{fetch}'")
        c.execute("CREATE CONTINUOUS QUERY pfq WITH (trigger = '0') AS SELECT id, v FROM pfc")
        assert wait_for(lambda: totals(c, "pfq"), want(2000)) == want(2000)
        assert batch_sizes(server, "pfq")[:14] == [150] * 13 + [50]
        produce(kafka.bootstrap, topic, ids(2000, 3000, 4))
        assert wait_for(lambda: totals(c, "pfq"), want(3000)) == want(3000)
        assert c.execute("SELECT count(*) FROM pfq WHERE v <> id").fetchone()[0] == 0
    log = offset_log(server, "pfq")
    assert sum(batch_sizes(server, "pfq")) == 3000
    assert all(s <= 150 for s in batch_sizes(server, "pfq"))
    assert_consecutive(log)
    text = server.log_text()
    assigned = text.count("kafka consumer assigned")
    assert assigned == (1 if fetch == "librdkafka" else 0), assigned
    assert set(re.findall(r"kafka batch read.*path=(\w+)", text)) == {fetch}


@pytest.mark.parametrize("fetch", ["librdkafka", "direct"])
def test_replay_after_sigkill_reads_the_same_ranges(kafka, sluiced, monkeypatch, tmp_path,
                                                    fetch):
    """Killed before the third batch's state commit (its offsets logged, its
    records taken, the next ones prefetched): after the restart the batch is
    replayed over the logged ranges with a fresh consumer, every record once.
    The third batch holds before its state commit until its offset entry is
    in the log (the loop writes it while the batch runs), then the test kills
    the server."""
    admin = Admin(kafka.bootstrap)
    topic = f"pf_kill_{fetch}"
    admin.create_topic(topic, 3)
    produce(kafka.bootstrap, topic, ids(0, 1200, 3))
    hold_before_state_commit(monkeypatch, tmp_path, 3)
    server = sluiced()
    with connect(server) as c:
        make_stream(c, "pfk", topic, kafka.bootstrap,
                    f", max_offsets_per_trigger = 100, fetch = '{fetch}'")
        c.execute("CREATE CONTINUOUS QUERY pkq WITH (trigger = '0') AS "
                  "SELECT id, v FROM pfk")
    kill_once_logged(server, "pkq", 3)
    before = offset_log(server, "pkq")
    assert len(before) == 3
    monkeypatch.delenv("SLUICE_FAULT")
    server.start()
    with connect(server) as c:
        assert wait_for(lambda: totals(c, "pkq"), want(1200)) == want(1200)
    after = offset_log(server, "pkq")
    # The batches logged before the kill kept their ranges.
    assert after[:len(before)] == before
    assert sum(batch_sizes(server, "pkq")) == 1200
    assert_consecutive(after)
    assert "replay" in server.log_text().lower()


@pytest.mark.parametrize("fetch", ["librdkafka", "direct"])
def test_dead_letters_at_batch_edges_once(kafka, sluiced, fetch):
    """Poison records among good ones on 2 partitions, batches of 7 offsets: the
    poison ones are in the dead letters once each, the others in the result."""
    admin = Admin(kafka.bootstrap)
    topic = f"pf_dead_{fetch}"
    admin.create_topic(topic, 2)
    recs, good, bad = [], [], []
    for i in range(120):
        if i % 9 == 4:
            recs.append((i % 2, None, f'{{"id": {i}, "v": "x{i}"}}'))
            bad.append(i)
        else:
            recs.append((i % 2, None, json.dumps({"id": i, "v": i})))
            good.append(i)
    offsets = produce(kafka.bootstrap, topic, recs)
    server = sluiced()
    with connect(server) as c:
        make_stream(c, "pfd", topic, kafka.bootstrap,
                    f", max_offsets_per_trigger = 7, fetch = '{fetch}'")
        c.execute("CREATE CONTINUOUS QUERY pdq WITH (trigger = '0') AS SELECT id, v FROM pfd")
        assert wait_for(lambda: sorted(r[0] for r in c.execute("SELECT id FROM pdq")), good) \
            == good
        dead = c.execute("SELECT source, byte_offset, raw FROM pfd_dead_letters "
                         "ORDER BY 1, 2").fetchall()
    want_dead = sorted((f"kafka:{topic}/{i % 2}", offsets[i], recs[i][2].encode())
                       for i in bad)
    assert [(s, o, bytes(r)) for s, o, r in dead] == want_dead


@pytest.mark.parametrize("fetch", ["librdkafka", "direct"])
def test_ranges_ending_at_transaction_markers(kafka, sluiced, fetch):
    """Partition 0 written in transactions of 5 records (each commit marker takes
    an offset, so its log ends at a marker); partition 1 gets 10 records once the
    query runs and, 2 s later (the consumer has reached both ends and queued
    their end-of-file events), 300 more.  A reader still reading partition 1's
    later records takes partition 0's end-of-file event after finishing its
    range of partition 0, and the batch whose range ends at that end needs the
    event, for no record comes at its last offset.  With read_timeout 5 s, no
    batch waits for one."""
    admin = Admin(kafka.bootstrap)
    topic = f"pf_txn_{fetch}"
    admin.create_topic(topic, 2)
    p = Producer({"bootstrap.servers": kafka.bootstrap, "transactional.id": f"{topic}-test"})
    p.init_transactions(60)
    for t in range(30):
        p.begin_transaction()
        for i in range(t * 5, t * 5 + 5):
            p.produce(topic, value=json.dumps({"id": i, "v": i}), partition=0)
        p.commit_transaction(60)
    server = sluiced()
    with connect(server) as c:
        make_stream(c, "pft", topic, kafka.bootstrap,
                    f", max_offsets_per_trigger = 10, read_timeout = '5 seconds', "
                    f"fetch = '{fetch}'")
        c.execute("CREATE CONTINUOUS QUERY ptq WITH (trigger = '100 ms') AS "
                  "SELECT id, v FROM pft")
        assert wait_for(lambda: len(offset_log(server, "ptq")) > 0, True)
        produce(kafka.bootstrap, topic,
                [(1, None, json.dumps({"id": i, "v": i})) for i in range(150, 160)])
        time.sleep(2)
        produce(kafka.bootstrap, topic,
                [(1, None, json.dumps({"id": i, "v": i})) for i in range(160, 460)])
        assert wait_for(lambda: totals(c, "ptq"), want(460)) == want(460)
    assert sum(batch_sizes(server, "ptq")) == 180 + 310
    assert "no records from Kafka" not in server.log_text()
