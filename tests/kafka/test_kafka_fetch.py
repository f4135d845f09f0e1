"""tests/kafka/test_kafka_fetch.py - the Kafka source's own Fetch path (fetch =
'direct', the default: src/connectors/kafka_fetch.c, docs/kafka-fetch.md) against
the librdkafka reader (fetch = 'librdkafka') and against what was produced, on a
real broker (one per module, tools/kafka/broker.py).

Covers: keys (NULL ones too), headers (NULL values, repeated names), timestamps
given by the producer, NULL values (tombstones) through every metadata column,
the same rows from both paths; transactional topics with aborted transactions
interleaved with committed ones on one partition, ranges of 3 offsets that end
at and inside control records, under read_committed and read_uncommitted;
topics compressed with gzip, lz4 and zstd read directly, snappy falling back to
librdkafka, and one partition whose batches change codec mid-range (the reader
falls back in the middle of a batch's ranges and still reads each record once);
the broker stopped while batches are being fetched and started again: every
record once; a SELECT's statement_timeout while the broker does not answer
ends it with 57014, with no fallback.  Which path read a batch is in the debug log line "kafka batch
read ... path=direct|librdkafka|fallback".
"""

import json
import os
import re
import signal
import threading
import time

import psycopg
import pytest
from confluent_kafka import Producer

from kafka_helpers import WAIT, Admin, broker_fixture, offset_log, produce, wait_for

kafka = broker_fixture()

T0_MS = 1767225600000       # 2026-01-01 00:00:00 UTC


def connect(server):
    return psycopg.connect(server.dsn, autocommit=True)


def make_query(c, name, cols, topic, bootstrap, extra=""):
    """A Kafka stream `name` over topic and a continuous query `<name>q` of all its
    columns."""
    c.execute(f"CREATE STREAM {name} ({cols}) WITH (connector = 'kafka', topic = '{topic}', "
              f"bootstrap_servers = '{bootstrap}'{extra})")
    c.execute(f"CREATE CONTINUOUS QUERY {name}q WITH (trigger = '0') AS SELECT * FROM {name}")


def totals(c, query):
    return c.execute(f"SELECT count(*), count(DISTINCT id), sum(id) FROM {query}").fetchone()


def paths(server, stream):
    """The paths the batches of a stream were read by, from the debug log."""
    return set(re.findall(rf"kafka batch read.*stream={stream} .*path=(\w+)",
                          server.log_text()))


def rows(c, sql):
    return sorted(tuple(r) for r in c.execute(sql).fetchall())


def expected_meta(recs, offsets):
    out = []
    for (part, key, value, headers, ts), off in zip(recs, offsets):
        if value is None:
            continue                    # a tombstone has no row in JSON
        h = {}
        for name, v in headers or []:
            h[name] = v.decode() if v is not None else None
        out.append((json.loads(value)["id"], key.decode() if key is not None else None,
                    part, off, ts, json.dumps(h, sort_keys=True)))
    return sorted(out)


@pytest.mark.parametrize("fetch", ["direct", "librdkafka"])
def test_metadata_columns(kafka, sluiced, fetch):
    """Keys, headers, producer timestamps, tombstones on 3 partitions: every
    metadata column as produced, batch after batch of 13 offsets."""
    topic = f"kf_meta_{fetch}"
    Admin(kafka.bootstrap).create_topic(topic, 3)
    recs = []
    for i in range(300):
        key = None if i % 7 == 0 else f"k{i}".encode()
        value = None if i % 23 == 5 else json.dumps({"id": i})
        headers = [] if i % 3 == 0 else [("a", f"x{i}".encode()), ("n", None)]
        if i % 11 == 0:
            headers = [("dup", b"1"), ("dup", b"2")]
        recs.append((i % 3, key, value, headers, T0_MS + i * 1001))
    p = Producer({"bootstrap.servers": kafka.bootstrap, "linger.ms": 20})
    offsets = [None] * len(recs)

    def report(i):
        def cb(err, msg):
            assert err is None, err
            offsets[i] = msg.offset()
        return cb

    for i, (part, key, value, headers, ts) in enumerate(recs):
        p.produce(topic, value=value, key=key, partition=part, headers=headers or None,
                  timestamp=ts, on_delivery=report(i))
        p.poll(0)
    assert p.flush(60) == 0
    server = sluiced("--log-level", "debug")
    with connect(server) as c:
        c.execute(f"CREATE STREAM km (id BIGINT, _key TEXT, _partition INT, _offset BIGINT, "
                  f"_timestamp TIMESTAMPTZ, _headers JSONB) WITH (connector = 'kafka', "
                  f"topic = '{topic}', bootstrap_servers = '{kafka.bootstrap}', "
                  f"fetch = '{fetch}', max_offsets_per_trigger = 13)")
        c.execute("CREATE CONTINUOUS QUERY kmq WITH (trigger = '0') AS SELECT id, _key AS k, "
                  "_partition AS p, _offset AS o, "
                  "(extract(epoch FROM _timestamp) * 1000)::bigint AS ts, "
                  "_headers::text AS h FROM km")
        want = expected_meta(recs, offsets)
        got = wait_for(lambda: len(c.execute("SELECT 1 FROM kmq").fetchall()), len(want))
        assert got == len(want)
        got = [(i, k, p, o, ts, json.dumps(json.loads(h), sort_keys=True))
               for i, k, p, o, ts, h in rows(c, "SELECT id, k, p, o, ts, h FROM kmq")]
        # Repeated header names: the JSON object keeps the last, as librdkafka's
        # reader always has.
        assert got == want
    assert paths(server, "km") == {fetch}


def produce_transactions(bootstrap, topic):
    """Partition 0: two transactional producers interleaved, A committing and B
    aborting in turn, then plain records; partition 1: a committed transaction
    then an aborted one.  Returns the ids that committed, and all ids."""
    a = Producer({"bootstrap.servers": bootstrap, "transactional.id": f"{topic}-a",
                  "linger.ms": 0})
    b = Producer({"bootstrap.servers": bootstrap, "transactional.id": f"{topic}-b",
                  "linger.ms": 0})
    a.init_transactions(60)
    b.init_transactions(60)
    committed, every = [], []
    n = 0
    for t in range(6):
        a.begin_transaction()
        b.begin_transaction()
        for _ in range(4):
            for prod, keep in ((a, t % 2 == 0), (b, t % 2 == 1)):
                prod.produce(topic, value=json.dumps({"id": n}), partition=0)
                prod.flush(30)
                every.append(n)
                if keep:
                    committed.append(n)
                n += 1
        if t % 2 == 0:
            b.abort_transaction(60)
            a.commit_transaction(60)
        else:
            a.abort_transaction(60)
            b.commit_transaction(60)
    for keep in (True, False):
        a.begin_transaction()
        for _ in range(5):
            a.produce(topic, value=json.dumps({"id": n}), partition=1)
            every.append(n)
            if keep:
                committed.append(n)
            n += 1
        a.flush(30)     # abort_transaction drops what was not sent yet
        if keep:
            a.commit_transaction(60)
        else:
            a.abort_transaction(60)
    plain = [(i % 2, None, json.dumps({"id": i})) for i in range(n, n + 10)]
    produce(bootstrap, topic, plain)
    committed += list(range(n, n + 10))
    every += list(range(n, n + 10))
    return sorted(committed), sorted(every)


@pytest.mark.parametrize("fetch", ["direct", "librdkafka"])
def test_transactions_aborted_and_control_records(kafka, sluiced, fetch):
    """Aborted transactions interleaved with committed ones: read_committed reads
    exactly the committed records, read_uncommitted all of them, with batches of
    3 offsets that end at and inside control records; the offsets logged cover
    each partition's log once, consecutively."""
    topic = f"kf_txn_{fetch}"
    Admin(kafka.bootstrap).create_topic(topic, 2)
    committed, every = produce_transactions(kafka.bootstrap, topic)
    server = sluiced("--log-level", "debug")
    with connect(server) as c:
        for name, iso in (("ktc", "read_committed"), ("ktu", "read_uncommitted")):
            c.execute(f"CREATE STREAM {name} (id BIGINT) WITH (connector = 'kafka', "
                      f"topic = '{topic}', bootstrap_servers = '{kafka.bootstrap}', "
                      f"fetch = '{fetch}', max_offsets_per_trigger = 3, "
                      f"read_timeout = '20 seconds', "
                      f"\"kafka.isolation.level\" = '{iso}')")
            c.execute(f"CREATE CONTINUOUS QUERY {name}q WITH (trigger = '0') AS "
                      f"SELECT id FROM {name}")
        for q, want in (("ktcq", committed), ("ktuq", every)):
            got = wait_for(lambda: sorted(r[0] for r in c.execute(f"SELECT id FROM {q}")),
                           want)
            assert got == want, q
    for q in ("ktcq", "ktuq"):
        log = offset_log(server, q)
        for (_, x), (_, y) in zip(log, log[1:]):
            assert {p["part"]: p["end"] for p in x} == {p["part"]: p["start"] for p in y}
        assert all(sum(p["end"] - p["start"] for p in parts) <= 3 for _, parts in log)
    assert paths(server, "ktc") == {fetch}
    assert paths(server, "ktu") == {fetch}
    assert "no records from Kafka" not in server.log_text()


@pytest.mark.parametrize("codec", ["gzip", "lz4", "zstd", "snappy"])
def test_compressed_topic(kafka, sluiced, codec):
    """A topic written in compressed batches: gzip, lz4 and zstd read by the
    direct path; snappy, which it does not read, by librdkafka after a
    fallback; every record once."""
    topic = f"kf_codec_{codec}"
    Admin(kafka.bootstrap).create_topic(topic, 2)
    recs = [(i % 2, None, json.dumps({"id": i, "pad": "x" * (i % 50)})) for i in range(2000)]
    produce(kafka.bootstrap, topic, recs, **{"compression.type": codec, "linger.ms": 50})
    server = sluiced("--log-level", "debug")
    with connect(server) as c:
        make_query(c, "kc", "id BIGINT, pad TEXT", topic, kafka.bootstrap,
                   ", max_offsets_per_trigger = 500")
        want = (2000, 2000, 1999 * 1000)
        assert wait_for(lambda: totals(c, "kcq"), want) == want
        assert c.execute("SELECT sum(length(pad)) FROM kcq").fetchone()[0] == \
            sum(i % 50 for i in range(2000))
    if codec == "snappy":
        assert paths(server, "kc") == {"fallback"}
        assert "sluice does not read" in server.log_text()
    else:
        assert paths(server, "kc") == {"direct"}


def test_codec_changes_mid_range_falls_back_mid_batch(kafka, sluiced):
    """One partition written gzip, then snappy, then zstd, read as one batch:
    the direct path reads the gzip records, falls back to librdkafka at the
    first snappy batch, which reads the rest from there; every record once."""
    topic = "kf_codec_mixed"
    Admin(kafka.bootstrap).create_topic(topic, 1)
    n = 0
    for codec in ("gzip", "snappy", "zstd"):
        produce(kafka.bootstrap, topic,
                [(0, None, json.dumps({"id": i})) for i in range(n, n + 300)],
                **{"compression.type": codec, "linger.ms": 50})
        n += 300
    server = sluiced("--log-level", "debug")
    with connect(server) as c:
        make_query(c, "kx", "id BIGINT", topic, kafka.bootstrap)
        want = (n, n, n * (n - 1) // 2)
        assert wait_for(lambda: totals(c, "kxq"), want) == want
    assert len(offset_log(server, "kxq")) == 1
    assert paths(server, "kx") == {"fallback"}
    text = server.log_text()
    assert "kafka fetch falls back to librdkafka" in text
    assert re.search(r"kafka batch read.*records=900 .*path=fallback fetches=[1-9]", text)


def test_broker_stopped_mid_fetch(kafka, sluiced):
    """The broker stops while a query reads 40,000 records in batches of 2,000
    and starts again on the same ports and data 3 s later: the batches after
    it fall back to librdkafka or reconnect, and every record is in the result
    once."""
    topic = "kf_halt"
    Admin(kafka.bootstrap).create_topic(topic, 2)
    total = 40000
    produce(kafka.bootstrap, topic,
            [(i % 2, None, json.dumps({"id": i, "pad": "y" * 40})) for i in range(total)])
    server = sluiced("--log-level", "debug")
    with connect(server) as c:
        make_query(c, "kh", "id BIGINT", topic, kafka.bootstrap,
                   ", max_offsets_per_trigger = 2000, read_timeout = '5 seconds'")
        deadline = time.monotonic() + WAIT
        while len(offset_log(server, "khq")) < 2 and time.monotonic() < deadline:
            time.sleep(0.05)
        kafka.halt()
        try:
            time.sleep(3)
        finally:
            kafka.resume()
        want = (total, total, total * (total - 1) // 2)
        assert wait_for(lambda: totals(c, "khq"), want) == want
    assert "direct" in paths(server, "kh")
    log = offset_log(server, "khq")
    assert sum(sum(p["end"] - p["start"] for p in parts) for _, parts in log) == total


def test_bad_fetch_option_is_refused(kafka, sluiced):
    """fetch takes 'direct' or 'librdkafka'; anything else is refused at CREATE
    (22023) with a hint, and no stream is made."""
    server = sluiced()
    with connect(server) as c:
        with pytest.raises(psycopg.errors.InvalidParameterValue) as e:
            c.execute(f"CREATE STREAM kb (id BIGINT) WITH (connector = 'kafka', topic = 't', "
                      f"bootstrap_servers = '{kafka.bootstrap}', fetch = 'fast')")
        assert 'invalid fetch "fast"' in str(e.value)
        assert "librdkafka" in e.value.diag.message_hint
        assert c.execute("SELECT count(*) FROM sys.streams WHERE name = 'kb'").fetchone()[0] == 0


def test_statement_timeout_during_a_direct_fetch_is_not_a_broker_failure(kafka, sluiced):
    """A SELECT's statement_timeout lands while the direct path waits on a
    broker that stopped answering (SIGSTOP: its sockets stay open): the SELECT
    ends with 57014 at once, and the reader does not take it for a broker
    failure -- no fallback to librdkafka (its WARN) for the cancel."""
    topic = "kf_cancel_direct"
    Admin(kafka.bootstrap).create_topic(topic, 1)
    total = 100000        # about 40 MB: ten Fetches of 4 MB
    produce(kafka.bootstrap, topic,
            [(0, None, json.dumps({"id": i, "pad": "z" * 380})) for i in range(total)])
    server = sluiced("--log-level", "debug")
    with connect(server) as c:
        c.execute(f"CREATE STREAM kc (id BIGINT, pad TEXT) WITH (connector = 'kafka', "
                  f"topic = '{topic}', bootstrap_servers = '{kafka.bootstrap}')")
    got = {}

    def select():
        with connect(server) as c:
            c.execute("SET statement_timeout = '4s'")
            try:
                got["rows"] = c.execute("SELECT count(*), max(length(pad)) FROM kc").fetchone()
            except psycopg.Error as e:
                got["sqlstate"] = e.sqlstate
            got["at"] = time.monotonic()

    t = threading.Thread(target=select)
    t.start()
    stopped = None
    try:
        deadline = time.monotonic() + WAIT
        while "kafka fetch connected" not in server.log_text() and time.monotonic() < deadline:
            time.sleep(0.01)
        os.killpg(kafka.proc.pid, signal.SIGSTOP)
        stopped = time.monotonic()
        t.join(WAIT)
    finally:
        os.killpg(kafka.proc.pid, signal.SIGCONT)
        t.join(WAIT)
    assert got.get("sqlstate") == "57014", got
    assert got["at"] - stopped < 6, got["at"] - stopped
    assert "kafka fetch falls back to librdkafka" not in server.log_text()
