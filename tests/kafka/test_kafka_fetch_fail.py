"""tests/kafka/test_kafka_fetch_fail.py - the direct Fetch path failing on
demand (SLUICE_FAULT=kafka_direct_fetch:N:fail, docs/development.md) and
readers of one Kafka stream at the same time, on a real broker (one for the
module, tools/kafka/broker.py).

Covers: the second Fetch of a batch failing after the first one's records
were read (12 MB on one partition, several Fetches a batch): the batch
falls back to librdkafka at the offsets reached and reads exactly its
range, every record once, and the next batches read directly again; the
same failing in every batch's first Fetch (all of each batch by
librdkafka); two queries and a UNION ALL of a stream with itself reading
one stream at the same time through librdkafka (fetch = 'librdkafka') and
through the direct path with a fallback: every query gets every record
once, none takes another's partitions (each input of each query has its own
consumer: see docs/kafka-fetch.md, "Readers").
"""

import json
import re

import psycopg

from kafka_helpers import Admin, broker_fixture, offset_log, produce, wait_for

kafka = broker_fixture()


def connect(server):
    return psycopg.connect(server.dsn, autocommit=True)


def totals(c, query):
    return c.execute(f"SELECT count(*), count(DISTINCT id), sum(id) FROM {query}").fetchone()


def reads(server, stream):
    """(records, path, fetches) of each batch read of a stream, from the debug log."""
    return [(int(n), p, int(f)) for n, p, f in re.findall(
        rf"kafka batch read.*stream={stream} records=(\d+) .*path=(\w+) fetches=(\d+)",
        server.log_text())]


def logged_records(server, query):
    """The records the offset log's batches of a query name, summed."""
    return sum(sum(p["end"] - p["start"] for p in parts) for _, parts in offset_log(server, query))


def test_a_direct_fetch_failing_mid_batch_falls_back_and_reads_the_range_once(kafka, sluiced):
    """12 MB on one partition in batches of 10,000 records (about 6 MB: two
    Fetches of at most 4 MiB each): the second Fetch fails, so the first
    batch falls back to librdkafka after reading the first Fetch's records
    directly; every record is in the result once, each batch read exactly
    its logged range, and the next batch reads directly again."""
    topic = "kff_mid"
    Admin(kafka.bootstrap).create_topic(topic, 1)
    total = 20000
    produce(kafka.bootstrap, topic,
            [(0, None, json.dumps({"id": i, "pad": "p" * 580})) for i in range(total)],
            **{"linger.ms": 50})
    server = sluiced("--log-level", "debug", env={"SLUICE_FAULT": "kafka_direct_fetch:2:fail"})
    with connect(server) as c:
        c.execute(f"CREATE STREAM kf (id BIGINT, pad TEXT) WITH (connector = 'kafka', "
                  f"topic = '{topic}', bootstrap_servers = '{kafka.bootstrap}', "
                  f"max_offsets_per_trigger = 10000)")
        c.execute("CREATE CONTINUOUS QUERY kfq WITH (trigger = '0') AS SELECT * FROM kf")
        want = (total, total, total * (total - 1) // 2)
        assert wait_for(lambda: totals(c, "kfq"), want) == want
        assert c.execute("SELECT sum(length(pad)) FROM kfq").fetchone()[0] == 580 * total
        got = c.execute("SELECT status, last_error FROM sys.queries WHERE name = 'kfq'").fetchone()
        assert tuple(got) == ("running", None)
    text = server.log_text()
    assert text.count("fault point kafka_direct_fetch reached, failing") == 1
    assert 'kafka fetch falls back to librdkafka" stream=kf reason="fault point' in text
    batches = reads(server, "kf")
    assert sum(n for n, _, _ in batches) == total
    # the first batch: one direct Fetch, then librdkafka; the others direct
    assert batches[0][1:] == ("fallback", 1), batches
    assert all(p == "direct" for _, p, _ in batches[1:]), batches
    assert len(offset_log(server, "kfq")) == len(batches) == 2
    assert logged_records(server, "kfq") == total


def test_every_first_fetch_failing_reads_every_batch_by_librdkafka(kafka, sluiced):
    """Every Fetch of the direct path fails: each batch falls back before it
    read anything directly, and librdkafka reads each batch's range."""
    topic = "kff_all"
    Admin(kafka.bootstrap).create_topic(topic, 3)
    total = 3000
    produce(kafka.bootstrap, topic, [(i % 3, None, json.dumps({"id": i})) for i in range(total)])
    server = sluiced("--log-level", "debug", env={"SLUICE_FAULT": "kafka_direct_fetch:1:failall"})
    with connect(server) as c:
        c.execute(f"CREATE STREAM ka (id BIGINT) WITH (connector = 'kafka', topic = '{topic}', "
                  f"bootstrap_servers = '{kafka.bootstrap}', max_offsets_per_trigger = 700)")
        c.execute("CREATE CONTINUOUS QUERY kaq WITH (trigger = '0') AS SELECT * FROM ka")
        want = (total, total, total * (total - 1) // 2)
        assert wait_for(lambda: totals(c, "kaq"), want) == want
    batches = reads(server, "ka")
    assert len(batches) >= 4 and all(b[1:] == ("fallback", 0) for b in batches), batches
    assert logged_records(server, "kaq") == total


def test_queries_reading_one_stream_at_once_each_read_their_ranges(kafka, sluiced):
    """Three queries over one stream of 4 partitions, their batches running
    at the same time on the thread pool with different batch sizes: one
    query reads the stream twice in each batch (UNION ALL, two readers open
    at once).  Through librdkafka (fetch = 'librdkafka', each reader assigns
    its ranges) and through the direct path with a fallback in the middle:
    each gets every record, the UNION ALL twice.  A reader that took another
    reader's partitions (rd_kafka_assign replaces a consumer's whole
    assignment) would leave a batch without records that the other read."""
    total = 8000
    for fetch, fault in (("librdkafka", None), ("direct", "kafka_direct_fetch:3:fail")):
        topic = f"kff_two_{fetch}"
        Admin(kafka.bootstrap).create_topic(topic, 4)
        produce(kafka.bootstrap, topic,
                [(i % 4, None, json.dumps({"id": i, "pad": "q" * 100})) for i in range(total)])
        server = sluiced("--log-level", "debug", env={"SLUICE_FAULT": fault} if fault else None)
        with connect(server) as c:
            c.execute(f"CREATE STREAM kt (id BIGINT, pad TEXT) WITH (connector = 'kafka', "
                      f"topic = '{topic}', bootstrap_servers = '{kafka.bootstrap}', "
                      f"fetch = '{fetch}')")
            c.execute("CREATE CONTINUOUS QUERY a WITH (trigger = '0', "
                      "max_offsets_per_trigger = 900) AS SELECT id FROM kt")
            c.execute("CREATE CONTINUOUS QUERY b WITH (trigger = '0', "
                      "max_offsets_per_trigger = 1300) AS SELECT id FROM kt WHERE id >= 0")
            c.execute("CREATE CONTINUOUS QUERY u WITH (trigger = '0', "
                      "max_offsets_per_trigger = 1100) AS "
                      "SELECT id FROM kt UNION ALL SELECT id + 1000000 AS id FROM kt")
            want = (total, total, total * (total - 1) // 2)
            for q in ("a", "b"):
                assert wait_for(lambda: totals(c, q), want) == want, (fetch, q)
            want_u = (2 * total, 2 * total, total * (total - 1) + 1000000 * total)
            assert wait_for(lambda: totals(c, "u"), want_u) == want_u, fetch
            for q in ("a", "b", "u"):
                got = c.execute("SELECT status FROM sys.queries WHERE name = %s",
                                (q,)).fetchone()[0]
                assert got == "running", (fetch, q)
        assert logged_records(server, "a") == total
        assert logged_records(server, "b") == total
        assert logged_records(server, "u") == 2 * total
        paths = {p for _, p, _ in reads(server, "kt")}
        assert paths == ({"librdkafka"} if fault is None else {"direct", "fallback"}), paths
        server.stop()
