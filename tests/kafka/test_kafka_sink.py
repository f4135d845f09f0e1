"""tests/kafka/test_kafka_sink.py - CREATE SINK ... WITH (connector = 'kafka') and
CREATE CONTINUOUS QUERY ... INTO it, against a real broker.

Covers: append output as JSON records keyed by the key columns, each batch one
transaction with its progress record; update mode as upserts with tombstones for
groups that leave the result, and for SESSION windows merged away or whose keyed
bound moved; refusals; and exactly-once: Kafka -> windowed
aggregation (a 5 s watermark delay over 60 s of event time, small batches: one
transaction each) -> Kafka sink, the input produced a step before each kill, the
server killed in turn just after a new progress record reaches the broker, at
kafka_sink_after_commit, and held at kafka_sink_before_commit until its progress
record is on the broker; once the query has committed past the end of the input,
read_committed must give every expected row exactly once and read_uncommitted
must show the aborted transactions (output rows and progress records of batches
written again), with a second server's sink on the same default progress
topic killed mid-transaction and left down; a transaction another producer leaves open
on a shared progress topic, with the direct recovery read and with fetch =
'librdkafka'.  The default size keeps ./tools/test short (50 kills); set
SLUICE_KAFKA_EOS_EVENTS=1000000 SLUICE_KAFKA_EOS_KILLS=100 for the issue's full run.
"""

import json
import os
import random
import re
import threading
import time
from collections import Counter
from datetime import datetime, timedelta

import psycopg
import pytest
from confluent_kafka import Consumer, KafkaException, Producer, TopicPartition

from kafka_helpers import WAIT, Admin, broker_fixture, produce, read_committed, wait_for

kafka = broker_fixture()

EOS_EVENTS = int(os.environ.get("SLUICE_KAFKA_EOS_EVENTS", "60000"))
EOS_KILLS = int(os.environ.get("SLUICE_KAFKA_EOS_KILLS", "50"))
# offsets per batch (max_offsets_per_trigger): 120 batches or more
EOS_BATCH = max(500, EOS_EVENTS // 120)


def connect(server):
    return psycopg.connect(server.dsn, autocommit=True)


def values(bootstrap, topic):
    return [(None if k is None else json.loads(k), None if v is None else json.loads(v))
            for _, _, k, v in read_committed(bootstrap, topic)]


def test_append_into_kafka_sink(kafka, sluiced):
    admin = Admin(kafka.bootstrap)
    admin.create_topic("sink_in", 3)
    admin.create_topic("sink_out", 2)
    produce(kafka.bootstrap, "sink_in", [(i % 3, None, json.dumps({"id": i, "v": i % 5}))
                                         for i in range(300)])
    server = sluiced()
    with connect(server) as c:
        c.execute(f"CREATE STREAM si (id BIGINT, v INT) WITH (connector = 'kafka', "
                  f"topic = 'sink_in', bootstrap_servers = '{kafka.bootstrap}')")
        c.execute(f"CREATE SINK so WITH (connector = 'kafka', topic = 'sink_out', "
                  f"bootstrap_servers = '{kafka.bootstrap}', format = 'json', key = 'id', "
                  f"progress_topic = 'sink_progress')")
        c.execute("CREATE CONTINUOUS QUERY big INTO so WITH (trigger = '100 ms') AS "
                  "SELECT id, v * 2 AS w, 'x' || id AS t FROM si WHERE v > 2")
        want = [({"id": i}, {"id": i, "w": (i % 5) * 2, "t": f"x{i}"})
                for i in range(300) if i % 5 > 2]
        got = wait_for(lambda: sorted(values(kafka.bootstrap, "sink_out"),
                                      key=lambda kv: kv[0]["id"]), want)
        assert got == want
        # Each batch's transaction carried a progress record naming it.
        prog = read_committed(kafka.bootstrap, "sink_progress")
        assert prog and all(k.startswith(b"sluice-big-") for _, _, k, _ in prog)
        assert len({k for _, _, k, _ in prog}) == 1
        batches = [json.loads(v)["batch"] for _, _, _, v in prog]
        assert batches == sorted(set(batches))
        # Dropping the sink while the query writes into it is refused.
        with pytest.raises(psycopg.Error) as e:
            c.execute("DROP SINK so")
        assert e.value.sqlstate == "2BP01"
        c.execute("DROP CONTINUOUS QUERY big")
        c.execute("DROP SINK so")


def test_update_mode_upserts_and_tombstones(kafka, sluiced):
    admin = Admin(kafka.bootstrap)
    admin.create_topic("ups_in", 1)
    admin.create_topic("ups_out", 1)
    server = sluiced()
    with connect(server) as c:
        c.execute(f"CREATE STREAM ui (k TEXT) WITH (connector = 'kafka', topic = 'ups_in', "
                  f"bootstrap_servers = '{kafka.bootstrap}')")
        c.execute(f"CREATE SINK uo WITH (connector = 'kafka', topic = 'ups_out', "
                  f"bootstrap_servers = '{kafka.bootstrap}', key = 'k')")
        c.execute("CREATE CONTINUOUS QUERY few INTO uo WITH (trigger = '100 ms', "
                  "output_mode = 'update') AS "
                  "SELECT k, count(*) AS n FROM ui GROUP BY k HAVING count(*) < 3")
        produce(kafka.bootstrap, "ups_in", [(0, None, json.dumps({"k": k})) for k in "aab"])

        def latest():
            last = {}
            for k, v in values(kafka.bootstrap, "ups_out"):
                last[k["k"]] = v
            return last
        want = {"a": {"k": "a", "n": 2}, "b": {"k": "b", "n": 1}}
        assert wait_for(latest, want) == want
        produce(kafka.bootstrap, "ups_in", [(0, None, json.dumps({"k": "a"}))])
        want = {"a": None, "b": {"k": "b", "n": 1}}
        assert wait_for(latest, want) == want


@pytest.mark.parametrize("key", ["k,window_start", "k,window_end"])
def test_session_windows_tombstone_merged_and_moved_sessions(kafka, sluiced, key):
    """Update mode INTO a sink keyed on the group key and a session's
    bound: rows at 1 s and 6 s (gap 3 s), then 3.5 s merges [1, 4) and
    [6, 9) into [1, 9): the key the vanished row had gets a tombstone in
    that batch's transaction, written before the merged row (whose key may
    be the same: keyed on window_end, [6, 9) and [1, 9) share 9), and so
    does the key of a session whose start (or end) moves.  The topic,
    compacted (the last record per key), equals the result table."""
    topic = "sess_" + key.split(",")[1]
    Admin(kafka.bootstrap).create_topic(topic, 1)
    server = sluiced()
    bound = key.split(",")[1]
    with connect(server) as c:
        c.execute("CREATE STREAM ev (k BIGINT, ts TIMESTAMP,"
                  " WATERMARK FOR ts AS ts - INTERVAL '1 hour')")
        c.execute(f"CREATE SINK so WITH (connector = 'kafka', topic = '{topic}', "
                  f"bootstrap_servers = '{kafka.bootstrap}', key = '{key}')")
        c.execute("CREATE CONTINUOUS QUERY s INTO so WITH (trigger = '100 ms', "
                  "output_mode = 'update') AS "
                  "SELECT k, window_start, window_end, count(*) AS n FROM ev "
                  "GROUP BY SESSION(ts, INTERVAL '3 seconds'), k")
        t0 = datetime(2026, 1, 1, 12, 0, 0)

        def at(sec):
            return (t0 + timedelta(seconds=sec)).isoformat(sep=" ")

        def batches():
            got = c.execute("SELECT last_batch_id FROM sys.queries WHERE name = 's'").fetchone()
            return -1 if got is None or got[0] is None else got[0]

        def records():
            return [(k[bound], v) for k, v in values(kafka.bootstrap, topic)]

        def compacted():
            last = {}
            for k, v in records():
                last[k] = None if v is None else (v["window_start"], v["window_end"], v["n"])
            return last

        def sessions(*rows):    # the result: one (start, end, n) per session
            return {at(s if bound == "window_start" else e): (at(s), at(e), n)
                    for s, e, n in rows}

        c.execute("INSERT INTO ev VALUES (1, %s), (1, %s)", (at(1), at(6)))
        want = sessions((1, 4, 1), (6, 9, 1))
        assert wait_for(compacted, want) == want
        n = len(records())
        c.execute("INSERT INTO ev VALUES (1, %s)", (at(3.5),))
        if bound == "window_start":
            # [6, 9) merged away; [1, 4) became [1, 9) under its key
            want = {at(1): (at(1), at(9), 3), at(6): None}
        else:
            # [1, 4)'s end moved to 9: 4 goes; [6, 9) merged away: its
            # tombstone, then the merged row under the same key 9
            want = {at(4): None, at(9): (at(1), at(9), 3)}
        assert wait_for(compacted, want) == want
        batch = records()[n:]
        tombs = sorted(k for k, v in batch if v is None)
        assert tombs == ([at(6)] if bound == "window_start" else [at(4), at(9)])
        # the tombstones come first: the merged row is the last record
        assert batch[-1] == (at(1 if bound == "window_start" else 9),
                             {"k": 1, "window_start": at(1), "window_end": at(9), "n": 3})
        # an earlier row moves the start: [0, 9)
        c.execute("INSERT INTO ev VALUES (1, %s)", (at(0),))
        if bound == "window_start":
            want = {at(0): (at(0), at(9), 4), at(1): None, at(6): None}
        else:
            want = {at(4): None, at(9): (at(0), at(9), 4)}
        assert wait_for(compacted, want) == want
        # the result table the same query keeps has exactly the live keys
        c.execute("CREATE CONTINUOUS QUERY t WITH (trigger = '0', output_mode = 'update') AS "
                  "SELECT k, window_start, window_end, count(*) AS n FROM ev "
                  "GROUP BY SESSION(ts, INTERVAL '3 seconds'), k")
        live = {k: v for k, v in want.items() if v is not None}
        table = lambda: {str(s if bound == "window_start" else e): (str(s), str(e), n)  # noqa: E731
                         for _, s, e, n in c.execute("SELECT * FROM t").fetchall()}
        assert wait_for(table, live) == live
        assert batches() >= 2


def test_sink_refusals(kafka, sluiced):
    server = sluiced()
    with connect(server) as c:
        with pytest.raises(psycopg.Error) as e:
            c.execute("CREATE SINK s1 WITH (connector = 'kafka', bootstrap_servers = 'x:1')")
        assert "needs a topic" in str(e.value)
        with pytest.raises(psycopg.Error) as e:
            c.execute("CREATE SINK s1 WITH (connector = 'kafka', topic = 't', "
                      "bootstrap_servers = 'x:1', format = 'avro')")
        assert 'invalid format "avro"' in str(e.value)
        with pytest.raises(psycopg.Error) as e:
            c.execute("CREATE SINK s1 WITH (connector = 'kafka', topic = 't', "
                      "bootstrap_servers = 'x:1', fetch = 'fast')")
        assert e.value.sqlstate == "22023" and 'invalid fetch "fast"' in str(e.value)
        c.execute("CREATE STREAM st (a INT)")
        c.execute("CREATE SINK s1 WITH (connector = 'kafka', topic = 't', "
                  "bootstrap_servers = 'x:1', key = 'nope')")
        with pytest.raises(psycopg.Error) as e:
            c.execute("CREATE CONTINUOUS QUERY q INTO s1 AS SELECT a FROM st")
        assert 'key column "nope" of sink "s1" is not a column of the query' in str(e.value)
        with pytest.raises(psycopg.Error) as e:
            c.execute("SELECT * FROM s1")
        assert "is a sink" in str(e.value)


# What the restart does with the batch killed at each point: replay it (the
# sink writes it again, or skips it), or nothing (state and output committed).
SINK_POINTS = {"kafka_sink_before_commit": "written", "kafka_sink_after_commit": "skipped",
               "batch_after_sink_commit": "skipped", "batch_after_deliver": None,
               "commit_log_before_write": None}


@pytest.mark.parametrize("point", list(SINK_POINTS))
def test_crash_at_sink_fault_point(kafka, sluiced, monkeypatch, point):
    """Killed around the first batch's Kafka commit: after a restart every row is there once.

    After the commit and before the state (the replay must be skipped), before
    it (the open transaction is aborted by the fencing, the replay writes it),
    and after the state, before the commit-log entry (subscribers already have
    the batch; nothing is replayed)."""
    admin = Admin(kafka.bootstrap)
    tin, tout = f"fp_in_{point}", f"fp_out_{point}"
    admin.create_topic(tin, 2)
    admin.create_topic(tout, 1)
    produce(kafka.bootstrap, tin, [(i % 2, None, json.dumps({"id": i, "v": i}))
                                   for i in range(100)])
    monkeypatch.setenv("SLUICE_FAULT", point)
    server = sluiced()
    with connect(server) as c:
        c.execute(f"CREATE STREAM fi (id BIGINT, v BIGINT) WITH (connector = 'kafka', "
                  f"topic = '{tin}', bootstrap_servers = '{kafka.bootstrap}')")
        c.execute(f"CREATE SINK fo WITH (connector = 'kafka', topic = '{tout}', "
                  f"bootstrap_servers = '{kafka.bootstrap}', key = 'id', "
                  f"progress_topic = 'fp_progress')")
        c.execute("CREATE CONTINUOUS QUERY fq INTO fo WITH (trigger = '0', "
                  "max_offsets_per_trigger = 10) AS SELECT id, v FROM fi")
    deadline = time.monotonic() + WAIT
    while server.proc.poll() is None and time.monotonic() < deadline:
        time.sleep(0.1)
    assert server.proc.poll() == -9, "the fault point did not kill the server"
    server.proc = None
    monkeypatch.delenv("SLUICE_FAULT")
    server.start()
    want = [({"id": i}, {"id": i, "v": i}) for i in range(100)]

    def got():
        return sorted(values(kafka.bootstrap, tout), key=lambda kv: kv[0]["id"])
    assert wait_for(got, want) == want
    time.sleep(1)   # nothing more arrives
    assert got() == want
    skipped = "batch already committed, skipped" in server.log_text()
    assert skipped == (SINK_POINTS[point] == "skipped")
    assert ("replaying batch" in server.log_text()) == (SINK_POINTS[point] is not None)


def open_foreign_transaction(bootstrap, topic, tid):
    """Another producer's transaction on topic, left open: a record of its
    own key, sent and not committed.  The caller aborts it (.abort())."""
    p = Producer({"bootstrap.servers": bootstrap, "transactional.id": tid,
                  "transaction.timeout.ms": 600000})
    p.init_transactions(60)
    p.begin_transaction()
    p.produce(topic, key=tid.encode(), value=json.dumps({"batch": 0}).encode(), partition=0)
    assert p.flush(60) == 0
    return p


def stable_and_high(bootstrap, topic):
    """(where read_committed stops, the high watermark) of partition 0."""
    u = Consumer({"bootstrap.servers": bootstrap, "group.id": f"hw-{time.time_ns()}",
                  "isolation.level": "read_uncommitted"})
    try:    # read_committed would answer with the last stable offset
        _, high = u.get_watermark_offsets(TopicPartition(topic, 0), timeout=30)
    finally:
        u.close()
    c = Consumer({"bootstrap.servers": bootstrap, "group.id": f"lso-{time.time_ns()}",
                  "isolation.level": "read_committed", "enable.partition.eof": True,
                  "enable.auto.commit": False})
    try:
        c.assign([TopicPartition(topic, 0, 0)])
        deadline = time.monotonic() + WAIT
        while time.monotonic() < deadline:
            m = c.poll(0.5)
            if m is not None and m.error() and m.error().code() == -191:   # _PARTITION_EOF
                return m.offset(), high
        raise AssertionError("read_committed did not reach its end")
    finally:
        c.close()


@pytest.mark.parametrize("fetch", ["direct", "librdkafka"])
def test_shared_progress_topic_with_stalled_transaction(kafka, sluiced, fetch):
    """Another producer's transaction stays open on the shared progress topic
    (a server killed mid-batch) after the sink's first batch; the sink's
    commits after it are hidden from read_committed.  Killed after its third
    batch's Kafka commit and before the state's, the restarted sink still
    finds that batch committed and skips its replay: every row once.  The
    direct read reads past the open transaction; fetch = 'librdkafka' waits
    until it ends (the test aborts it once the sink says it waits)."""
    admin = Admin(kafka.bootstrap)
    tin, tout, prog = f"stall_in_{fetch}", f"stall_out_{fetch}", f"stall_progress_{fetch}"
    admin.create_topic(tin, 1)
    admin.create_topic(tout, 1)
    admin.create_topic(prog, 1, {"cleanup.policy": "compact"})
    want = [({"id": i}, {"id": i}) for i in range(60)]

    def got():
        return sorted(values(kafka.bootstrap, tout), key=lambda kv: kv[0]["id"])
    produce(kafka.bootstrap, tin, [(0, None, json.dumps({"id": i})) for i in range(10)])
    server = sluiced(env={"SLUICE_FAULT": "kafka_sink_after_commit:3"})
    with connect(server) as c:
        c.execute(f"CREATE STREAM st (id BIGINT) WITH (connector = 'kafka', "
                  f"topic = '{tin}', bootstrap_servers = '{kafka.bootstrap}')")
        c.execute(f"CREATE SINK so WITH (connector = 'kafka', topic = '{tout}', "
                  f"bootstrap_servers = '{kafka.bootstrap}', key = 'id', "
                  f"progress_topic = '{prog}', fetch = '{fetch}')")
        c.execute("CREATE CONTINUOUS QUERY sq INTO so WITH (trigger = '0', "
                  "max_offsets_per_trigger = 10) AS SELECT id FROM st")
    assert wait_for(got, want[:10]) == want[:10]
    foreign = open_foreign_transaction(kafka.bootstrap, prog, f"stalled-{fetch}")
    try:
        produce(kafka.bootstrap, tin, [(0, None, json.dumps({"id": i})) for i in range(10, 60)])
        assert server.wait_exit(WAIT) == -9, "the fault point did not kill the server"
        # Batch 0's progress record and marker, the open transaction's record,
        # then batches 1 and 2 (record and marker each), all of them past it.
        stable, high = stable_and_high(kafka.bootstrap, prog)
        assert (stable, high) == (2, 7), (stable, high)
        server.env.pop("SLUICE_FAULT")
        server.start()
        if fetch == "librdkafka":
            assert wait_for(lambda: "held back by an open transaction, waiting"
                            in server.log_text(), True)
            foreign.abort_transaction(60)
        assert wait_for(got, want) == want
        time.sleep(1)   # nothing more arrives
        assert got() == want
        log = server.log_text()
        assert "committed_batch=2" in log
        assert "batch already committed, skipped" in log
        assert ("held back by an open transaction" in log) == (fetch == "librdkafka")
    finally:
        try:
            foreign.abort_transaction(60)
        except KafkaException:
            pass    # aborted above


T0 = datetime(2026, 1, 1)


def event(i):
    return {"id": i, "k": i % 10, "ts": (T0 + timedelta(milliseconds=i)).isoformat(sep=" ")}


def stall_progress_topic(kafka, sluiced, tmp_path):
    """A second server whose sink, on the default progress topic, is SIGKILLed
    in its first transaction after sending its records, and left down: its
    transaction stays open (a 15-minute transaction.timeout.ms), holding back
    the topic's last stable offset.  Returns (its transactional.id, the
    stable offset it holds)."""
    admin = Admin(kafka.bootstrap)
    admin.create_topic("eos_other_in", 1)
    admin.create_topic("eos_other_out", 1)
    produce(kafka.bootstrap, "eos_other_in", [(0, None, json.dumps({"id": i}))
                                              for i in range(10)])
    hold = tmp_path / "hold_other"
    hold.write_text("")
    other = sluiced(env={"SLUICE_FAULT": "kafka_sink_before_commit:1:hold",
                         "SLUICE_FAULT_HOLD": str(hold)})
    with connect(other) as c:
        c.execute(f"CREATE STREAM oi (id BIGINT) WITH (connector = 'kafka', "
                  f"topic = 'eos_other_in', bootstrap_servers = '{kafka.bootstrap}')")
        c.execute(f"CREATE SINK oo WITH (connector = 'kafka', topic = 'eos_other_out', "
                  f"bootstrap_servers = '{kafka.bootstrap}', "
                  f"\"kafka.transaction.timeout.ms\" = '900000')")
        c.execute("CREATE CONTINUOUS QUERY oq INTO oo WITH (trigger = '100 ms') AS "
                  "SELECT id FROM oi")
    assert wait_for(lambda: "fault point kafka_sink_before_commit reached, holding"
                    in other.log_text(), True), "the other sink did not hold"
    # Its progress record is on the broker, its transaction open.
    deadline = time.monotonic() + WAIT
    stable, high = stable_and_high(kafka.bootstrap, "sluice_progress")
    while stable == high and time.monotonic() < deadline:
        time.sleep(0.2)
        stable, high = stable_and_high(kafka.bootstrap, "sluice_progress")
    assert stable < high, "the other sink's transaction did not reach the broker"
    assert other.kill() == -9
    tid = re.search(r"transactional_id=(\S+)", other.log_text()).group(1)
    return tid, stable


@pytest.mark.timeout(3600)
def test_exactly_once_through_kills(kafka, sluiced, tmp_path):
    """Kafka -> 1-second windows per k -> Kafka through EOS_KILLS kills aimed
    at the sink's transactions (exactly_once_through_kills), sharing the
    default progress topic with a sink killed mid-transaction."""
    admin = Admin(kafka.bootstrap)
    admin.create_topic("eos_in", 8)
    admin.create_topic("eos_out", 4)
    rng = random.Random(int(os.environ.get("SLUICE_KAFKA_EOS_SEED", "8")))
    other_tid, stalled_at = stall_progress_topic(kafka, sluiced, tmp_path)
    try:
        exactly_once_through_kills(kafka, sluiced, rng, tmp_path)
        # The other transaction held the topic back all along.
        assert stable_and_high(kafka.bootstrap, "sluice_progress")[0] == stalled_at
    finally:
        # Fence the other sink's producer: its transaction is aborted.
        Producer({"bootstrap.servers": kafka.bootstrap,
                  "transactional.id": other_tid}).init_transactions(60)


def progress_high(watcher):
    """The high watermark of the default progress topic (one partition):
    it moves as soon as a batch's transaction has sent its progress record,
    before that transaction commits."""
    return watcher.get_watermark_offsets(TopicPartition("sluice_progress", 0), timeout=30)[1]


KILL_KINDS = ("sigkill", "after_commit", "before_commit")


def exactly_once_through_kills(kafka, sluiced, rng, tmp_path):
    """The kills, in turn: a SIGKILL aimed just after a new progress record
    appears on the broker (its transaction open or just committed); a kill
    at kafka_sink_after_commit (committed in Kafka, not in the state: the
    replay must find it committed); a kill at kafka_sink_before_commit (the
    transaction open: the restart aborts it and replays the batch).  The
    input is produced a step per kill, so batches with output run in every
    run; a 5-second watermark delay over 60 s of event time and batches of
    EOS_BATCH offsets make each window close in its own small batch, one
    transaction each.  Once the query has committed past the end of every
    input partition, the output read_committed must be exactly the expected
    rows, and read_uncommitted must show aborted transactions: replayed
    batches whose first progress record was never committed."""
    server = sluiced()
    with connect(server) as c:
        c.execute(f"CREATE STREAM eos (id BIGINT, k INT, ts TIMESTAMP, "
                  f"WATERMARK FOR ts AS ts - INTERVAL '5 seconds') WITH (connector = 'kafka', "
                  f"topic = 'eos_in', bootstrap_servers = '{kafka.bootstrap}')")
        c.execute(f"CREATE SINK eos_sink WITH (connector = 'kafka', topic = 'eos_out', "
                  f"bootstrap_servers = '{kafka.bootstrap}', key = 'window_start,k')")
        c.execute("CREATE CONTINUOUS QUERY eos_agg INTO eos_sink WITH (trigger = '100 ms', "
                  f"output_mode = 'append', max_offsets_per_trigger = {EOS_BATCH}) AS "
                  "SELECT window_start, window_end, k, count(*) AS n, sum(id) AS s "
                  "FROM eos GROUP BY WINDOW(ts, INTERVAL '1 second'), k")

    # Events in time order, round robin over the 8 partitions, a step before
    # each kill; the rest after the kills, then one event far ahead in time
    # on every partition, which closes every window.
    step = -(-EOS_EVENTS // (EOS_KILLS + 1))
    produced = 0

    def produce_step():
        nonlocal produced
        hi = min(EOS_EVENTS, produced + step)
        if hi > produced:
            produce(kafka.bootstrap, "eos_in",
                    [(i % 8, None, json.dumps(event(i))) for i in range(produced, hi)])
        produced = hi

    watcher = Consumer({"bootstrap.servers": kafka.bootstrap,
                        "group.id": f"eos-watch-{time.time_ns()}",
                        "isolation.level": "read_uncommitted"})
    hold = tmp_path / "hold_eos"
    hold.write_text("")
    kinds = Counter()

    def wait_progress_past(high):
        deadline = time.monotonic() + WAIT
        while progress_high(watcher) <= high:
            assert time.monotonic() < deadline, "no new progress record on the broker"
            time.sleep(0.005)

    try:
        high = None
        for kill in range(EOS_KILLS):
            kind = KILL_KINDS[kill % 3]
            if kind == "sigkill":
                high = progress_high(watcher)
                produce_step()
                wait_progress_past(high)
                time.sleep(rng.uniform(0, 0.02))
                assert server.kill() == -9, "the server had died on its own"
            elif kind == "after_commit":
                produce_step()
                code = server.wait_exit(WAIT)
                assert code == -9, f"the server did not die at kafka_sink_after_commit ({code})"
            else:
                # held before the commit until its progress record is on the
                # broker (high: the progress topic's end before this run)
                produce_step()
                n = kinds["before_commit"] + 1
                assert wait_for(lambda: server.log_text().count(
                    "fault point kafka_sink_before_commit reached, holding"), n) == n
                wait_progress_past(high)
                assert server.kill() == -9
            kinds[kind] += 1
            server.env.pop("SLUICE_FAULT", None)
            nxt = KILL_KINDS[(kill + 1) % 3]
            if kill + 1 < EOS_KILLS and nxt == "after_commit":
                server.env["SLUICE_FAULT"] = f"kafka_sink_after_commit:{rng.randint(1, 2)}"
            elif kill + 1 < EOS_KILLS and nxt == "before_commit":
                server.env["SLUICE_FAULT"] = "kafka_sink_before_commit:1:hold"
                server.env["SLUICE_FAULT_HOLD"] = str(hold)
                high = progress_high(watcher)
            server.start()
    finally:
        watcher.close()
    while produced < EOS_EVENTS:
        produce_step()

    # Settled: the query has committed a batch past the end of every input
    # partition (sys.source_lag's committed_offset moves after the batch's
    # Kafka commit and its state commit).  The event far ahead, which closes
    # every window, goes in only once every other event is read: a batch
    # that read it before another partition's last events would make those
    # late (the watermark is the batch's highest event time less the delay).
    def read_through(total):
        ends = Consumer({"bootstrap.servers": kafka.bootstrap,
                         "group.id": f"eos-end-{time.time_ns()}"})
        try:
            end = {p: ends.get_watermark_offsets(TopicPartition("eos_in", p), timeout=30)[1]
                   for p in range(8)}
        finally:
            ends.close()
        assert sum(end.values()) == total
        with connect(server) as c:
            def read():
                return dict(c.execute("SELECT partition, committed_offset FROM sys.source_lag "
                                      "WHERE query = 'eos_agg'").fetchall())
            assert wait_for(read, end, timeout=max(WAIT, EOS_EVENTS / 200)) == end

    read_through(EOS_EVENTS)
    far = EOS_EVENTS + 120000
    produce(kafka.bootstrap, "eos_in", [(p, None, json.dumps(
        {"id": -1, "k": -1, "ts": (T0 + timedelta(milliseconds=far)).isoformat(sep=" ")}))
        for p in range(8)])
    read_through(EOS_EVENTS + 8)
    log = server.log_text()
    assert log.count("fault point kafka_sink_after_commit reached") == kinds["after_commit"]
    assert log.count("fault point kafka_sink_before_commit reached") == kinds["before_commit"]
    assert sum(kinds.values()) == EOS_KILLS

    want = Counter()
    sums = {}
    for i in range(EOS_EVENTS):
        w = i // 1000
        want[(w, i % 10)] += 1
        sums[(w, i % 10)] = sums.get((w, i % 10), 0) + i
    expected = Counter()
    for (w, k), n in want.items():
        start = (T0 + timedelta(seconds=w)).isoformat(sep=" ")
        end = (T0 + timedelta(seconds=w + 1)).isoformat(sep=" ")
        expected[(start, end, k, n, sums[(w, k)])] += 1

    def output(isolation):
        recs = read_committed(kafka.bootstrap, "eos_out", isolation=isolation)
        return {(p, o): json.loads(v) for p, o, _, v in recs}

    committed = output("read_committed")
    got = Counter((v["window_start"], v["window_end"], v["k"], v["n"], v["s"])
                  for v in committed.values())
    missing = expected - got
    extra = got - expected
    assert not missing and not extra, (
        f"{EOS_KILLS} kills: {sum(missing.values())} rows missing, {sum(extra.values())} extra "
        f"(duplicates or wrong): missing {list(missing)[:5]} extra {list(extra)[:5]}")
    assert all(n == 1 for n in got.values())

    # The aborted transactions: batches whose progress record was written
    # twice (the first one's transaction aborted: a committed batch is never
    # written again), and the output records read_uncommitted shows and
    # read_committed does not (each a row the replay wrote again; a batch
    # that closed no window had none).
    uncommitted = output("read_uncommitted")
    assert committed.keys() <= uncommitted.keys()
    aborted = [uncommitted[po] for po in uncommitted.keys() - committed.keys()]
    assert all((v["window_start"], v["window_end"], v["k"], v["n"], v["s"]) in expected
               for v in aborted), aborted[:5]
    batches = Counter(json.loads(v)["batch"] for _, _, k, v in
                      read_committed(kafka.bootstrap, "sluice_progress",
                                     isolation="read_uncommitted")
                      if k.startswith(b"sluice-eos_agg-"))
    replayed = sorted(b for b, n in batches.items() if n > 1)
    print(f"kills {dict(kinds)}: {len(batches)} batches, {len(replayed)} written twice, "
          f"{len(aborted)} aborted output records")
    assert len(batches) >= EOS_EVENTS // EOS_BATCH, "too few batches: too few transactions"
    # Each kill held before a commit left its batch's transaction open on
    # the broker, with its progress record; the restart aborted it and
    # wrote the batch again (the kills between make each such batch a new
    # one: a run killed after a commit commits one at least).
    assert replayed, "no aborted transaction seen"
    assert len(replayed) >= kinds["before_commit"], (
        f"{len(replayed)} batches written twice, {kinds['before_commit']} kills "
        f"before a commit")
