"""tests/kafka/test_nexmark_kafka.py - nexmark_gen --kafka against a real
broker (one per module, tools/kafka/broker.py).

nexmark_gen writes the bids as JSON records to a 4-partition topic (it
makes the topic); a Kafka stream over that topic gives the same q1 and q2
results (tools/nexmark/queries) as the nexmark connector generating the same
events in-process.  Also: the records are the JSON lines nexmark_gen prints,
one per event, spread over the partitions by event number, with the event
time as the record timestamp; paced production (--events-per-second); and
bad options are refused.
"""

import json
import subprocess
import time
from pathlib import Path

import psycopg
import pytest
from confluent_kafka import Consumer, TopicPartition

from kafka_helpers import WAIT, Admin, broker_fixture
from test_nexmark import gen_binary

REPO = Path(__file__).resolve().parents[2]
QUERIES = REPO / "tools" / "nexmark" / "queries"
EVENTS = 20_000
BASE_MS = 1767225600000
RATE = 1000
GEN_OPTS = ["--events", str(EVENTS), "--seed", "7", "--first-event-rate", str(RATE),
            "--base-time-ms", str(BASE_MS)]

kafka = broker_fixture()


def gen(*args, check=True):
    return subprocess.run([gen_binary(), *args], capture_output=True, text=True, timeout=300,
                          check=check)


def read_topic(bootstrap, topic, partitions, want):
    """Every record of the topic: {partition: [(timestamp, value), ...]}."""
    c = Consumer({"bootstrap.servers": bootstrap, "group.id": "nexmark-test",
                  "enable.auto.commit": False, "auto.offset.reset": "earliest"})
    c.assign([TopicPartition(topic, p, 0) for p in range(partitions)])
    out = {p: [] for p in range(partitions)}
    deadline = time.monotonic() + WAIT
    n = 0
    while n < want and time.monotonic() < deadline:
        for m in c.consume(1000, 1.0):
            assert m.error() is None, m.error()
            out[m.partition()].append((m.timestamp()[1], m.value().decode()))
            n += 1
    c.close()
    return out


def test_bids_to_kafka_are_the_json_lines(kafka):
    r = gen(*GEN_OPTS, "--table", "bid", "--kafka", kafka.bootstrap, "--topic", "nx_lines",
            "--partitions", "3")
    assert f"{EVENTS // 50 * 46} records to nx_lines (3 partitions)" in r.stderr
    lines = gen(*GEN_OPTS).stdout.splitlines()
    got = read_topic(kafka.bootstrap, "nx_lines", 3, EVENTS // 50 * 46)
    for p in range(3):
        want = [line for n, line in enumerate(lines)
                if n % 3 == p and json.loads(line)["event_type"] == "bid"]
        assert [v for _, v in got[p]] == want
        times = [BASE_MS + n * 1000 // RATE for n in range(EVENTS)
                 if n % 3 == p and json.loads(lines[n])["event_type"] == "bid"]
        assert [t for t, _ in got[p]] == times


def test_paced_records(kafka):
    """--events-per-second with --kafka: the same records, produced no faster
    than the pace (a lower bound only)."""
    t0 = time.monotonic()
    gen("--events", "600", "--seed", "2", "--events-per-second", "300", "--kafka",
        kafka.bootstrap, "--topic", "nx_paced")
    assert time.monotonic() - t0 >= 1.95
    got = read_topic(kafka.bootstrap, "nx_paced", 1, 600)
    assert [v for _, v in got[0]] == gen("--events", "600", "--seed", "2").stdout.splitlines()


def test_bad_options_refused(kafka):
    assert gen("--kafka", kafka.bootstrap, check=False).returncode == 2     # no --topic
    assert gen("--topic", "x", check=False).returncode == 2                 # no --kafka
    Admin(kafka.bootstrap).create_topic("nx_two", 2)
    r = gen("--events", "10", "--kafka", kafka.bootstrap, "--topic", "nx_two",
            "--partitions", "5", check=False)
    assert r.returncode == 1
    assert "has 2 partitions, fewer than --partitions 5" in r.stderr


def wait_finished(c, names):
    deadline = time.monotonic() + WAIT * 3
    while time.monotonic() < deadline:
        st = dict(c.execute("SELECT name, status FROM sys.queries").fetchall())
        if all(st.get(q) in ("finished", "failed") for q in names):
            break
        time.sleep(0.5)
    rows = c.execute("SELECT name, status, last_error FROM sys.queries").fetchall()
    assert all(r[1] == "finished" for r in rows if r[0] in names), rows


def test_q1_q2_from_kafka_equal_in_process(kafka, sluiced):
    gen(*GEN_OPTS, "--table", "bid", "--kafka", kafka.bootstrap, "--topic", "nx_bid",
        "--partitions", "4")
    streams = (QUERIES / "streams.sql").read_text()
    bid_stream = streams[streams.index("CREATE STREAM bid"):]
    in_process = (bid_stream.replace("CREATE STREAM bid", "CREATE STREAM bid_gen")
                  .replace("seed = 1,", f"seed = 7, first_event_rate = {RATE}, "
                                        f"base_time_ms = {BASE_MS},")
                  .replace("number_of_events = 10000000", f"number_of_events = {EVENTS}"))
    from_kafka = (bid_stream[:bid_stream.index("WITH (connector")] +
                  f"WITH (connector = 'kafka', topic = 'nx_bid', "
                  f"bootstrap_servers = '{kafka.bootstrap}', format = 'json', "
                  f"starting_offsets = 'earliest');")
    server = sluiced()
    with psycopg.connect(server.dsn, autocommit=True) as c:
        c.execute(from_kafka)
        c.execute(in_process)
        names = []
        for q in ("q1", "q2"):
            sql = (QUERIES / f"{q}.sql").read_text()
            c.execute(sql)
            c.execute(sql.replace(f"QUERY {q} ", f"QUERY {q}_gen ")
                      .replace("FROM bid", "FROM bid_gen"))
            names += [q, f"{q}_gen"]
        wait_finished(c, names)
        for q in ("q1", "q2"):
            got = sorted(c.execute(f"SELECT * FROM {q}").fetchall())
            want = sorted(c.execute(f"SELECT * FROM {q}_gen").fetchall())
            assert len(want) > 0
            assert got == want, q
        assert len(c.execute("SELECT * FROM q1").fetchall()) == EVENTS // 50 * 46
        # the Kafka query read every partition
        parts = c.execute("SELECT partition, committed_offset FROM sys.source_lag "
                          "WHERE query = 'q1' ORDER BY 1").fetchall()
        assert [p for p, _ in parts] == [0, 1, 2, 3]
        assert sum(o for _, o in parts) == EVENTS // 50 * 46
