"""tests/kafka/test_kafka_source.py - CREATE STREAM ... WITH (connector = 'kafka')
against a real broker (one per module, tools/kafka/broker.py).

Covers: 8 partitions read by a continuous query, with the metadata columns and the
positions committed to the consumer group; partitions added while the query runs;
starting_offsets earliest, latest and a per-partition map; max_offsets_per_trigger
honoured batch by batch (read back from the offset log); a poison record in
<stream>_dead_letters; a deleted topic failing the query with a clear error (and
skipped with fail_on_data_loss = false); CSV and raw formats with _key, _headers and
_timestamp; values, keys and headers that are not UTF-8 as dead letters; errors at
CREATE for bad options.
"""

import json
import threading
import time

import psycopg
import pytest

from kafka_helpers import (WAIT, Admin, broker_fixture, offset_log, produce, query_status,
                           wait_for)

kafka = broker_fixture()


def connect(server):
    return psycopg.connect(server.dsn, autocommit=True)


def scalar(conn, sql):
    try:
        row = conn.execute(sql).fetchone()
    except psycopg.errors.UndefinedTable:
        return None
    return row[0] if row else None


def make_stream(c, name, bootstrap, topic, extra="", cols="id BIGINT, v BIGINT"):
    c.execute(f"CREATE STREAM {name} ({cols}) WITH (connector = 'kafka', topic = '{topic}', "
              f"bootstrap_servers = '{bootstrap}'{extra})")


def test_eight_partitions_with_metadata_and_group_commits(kafka, sluiced):
    admin = Admin(kafka.bootstrap)
    admin.create_topic("eight", 8)
    recs = [(i % 8, f"k{i}", json.dumps({"id": i, "v": i * 10})) for i in range(4000)]
    offsets = produce(kafka.bootstrap, "eight", recs)
    server = sluiced()
    with connect(server) as c:
        make_stream(c, "ev", kafka.bootstrap, "eight",
                    cols="id BIGINT, v BIGINT, _partition INT, _offset BIGINT, _key TEXT")
        c.execute("CREATE CONTINUOUS QUERY per_part WITH (trigger = '100 ms') AS "
                  "SELECT _partition AS p, count(*) AS n, sum(v) AS s, max(_offset) AS last, "
                  "min(_key) AS k FROM ev GROUP BY _partition")
        want = []
        for p in range(8):
            ids = [i for i in range(4000) if i % 8 == p]
            want.append((p, len(ids), sum(i * 10 for i in ids),
                         max(offsets[i] for i in ids), min(f"k{i}" for i in ids)))
        got = wait_for(lambda: sorted(c.execute("SELECT * FROM per_part").fetchall()), want)
        assert got == want
        # sys.source_lag: a row per partition; paused, the lag shows new records.
        lag = ("SELECT source, topic, partition, committed_offset, latest_offset, lag, "
               "last_poll IS NOT NULL FROM sys.source_lag WHERE query = 'per_part' "
               "ORDER BY partition")
        want = [("ev", "eight", p, 500, 500, 0, True) for p in range(8)]
        assert wait_for(lambda: c.execute(lag).fetchall(), want) == want
        c.execute("ALTER CONTINUOUS QUERY per_part PAUSE")
        produce(kafka.bootstrap, "eight", [(p, None, json.dumps({"id": 0, "v": 0}))
                                           for p in range(8) for _ in range(1 + p)])
        want = [("ev", "eight", p, 500, 501 + p, 1 + p, True) for p in range(8)]
        assert wait_for(lambda: c.execute(lag).fetchall(), want) == want
        c.execute("ALTER CONTINUOUS QUERY per_part RESUME")
        want = [("ev", "eight", p, 501 + p, 501 + p, 0, True) for p in range(8)]
        assert wait_for(lambda: c.execute(lag).fetchall(), want) == want
    # The positions reach the consumer group, for outside lag tools.
    ends = {p: 501 + p for p in range(8)}
    assert wait_for(lambda: admin.group_offsets("sluice-per_part", "eight", 8), ends) == ends


def test_partitions_added_mid_run(kafka, sluiced):
    admin = Admin(kafka.bootstrap)
    admin.create_topic("grows", 2)
    produce(kafka.bootstrap, "grows", [(i % 2, None, json.dumps({"id": i, "v": 1}))
                                       for i in range(100)])
    server = sluiced()
    with connect(server) as c:
        make_stream(c, "g", kafka.bootstrap, "grows", cols="id BIGINT, v BIGINT, _partition INT")
        c.execute("CREATE CONTINUOUS QUERY gq WITH (trigger = '100 ms') AS "
                  "SELECT _partition AS p, count(*) AS n FROM g GROUP BY _partition")
        want = [(0, 50), (1, 50)]
        assert wait_for(lambda: sorted(c.execute("SELECT * FROM gq").fetchall()), want) == want
        admin.add_partitions("grows", 5)
        produce(kafka.bootstrap, "grows", [(p, None, json.dumps({"id": p, "v": 1}))
                                           for p in range(5) for _ in range(7)])
        want = [(0, 57), (1, 57), (2, 7), (3, 7), (4, 7)]
        assert wait_for(lambda: sorted(c.execute("SELECT * FROM gq").fetchall()), want) == want


def test_starting_offsets_each_form(kafka, sluiced):
    admin = Admin(kafka.bootstrap)
    admin.create_topic("starts", 2)
    produce(kafka.bootstrap, "starts", [(p, None, json.dumps({"id": i, "v": 1}))
                                        for p in range(2) for i in range(50)])
    server = sluiced()
    with connect(server) as c:
        make_stream(c, "s_early", kafka.bootstrap, "starts", ", starting_offsets = 'earliest'")
        make_stream(c, "s_late", kafka.bootstrap, "starts", ", starting_offsets = 'latest'")
        make_stream(c, "s_map", kafka.bootstrap, "starts",
                    ", starting_offsets = '{\"starts\": {\"0\": 10, \"1\": -2}}'")
        make_stream(c, "s_map_latest", kafka.bootstrap, "starts",
                    ", starting_offsets = '{\"starts\": {\"0\": -1, \"1\": 45}}'")
        for s in ("s_early", "s_late", "s_map", "s_map_latest"):
            c.execute(f"CREATE CONTINUOUS QUERY q_{s} WITH (trigger = '100 ms') AS "
                      f"SELECT count(*) AS n FROM {s}")
        # 'latest' is fixed when the query first learns the partitions.
        assert wait_for(lambda: server.log_text().count("source partitions added"), 4) == 4
        assert wait_for(lambda: scalar(c, "SELECT n FROM q_s_early"), 100) == 100
        assert wait_for(lambda: scalar(c, "SELECT n FROM q_s_map"), 90) == 90
        assert wait_for(lambda: scalar(c, "SELECT n FROM q_s_map_latest"), 5) == 5
        assert scalar(c, "SELECT n FROM q_s_late") is None
        produce(kafka.bootstrap, "starts", [(p, None, json.dumps({"id": 0, "v": 1}))
                                            for p in range(2) for _ in range(3)])
        assert wait_for(lambda: scalar(c, "SELECT n FROM q_s_late"), 6) == 6
        assert wait_for(lambda: scalar(c, "SELECT n FROM q_s_early"), 106) == 106
        assert wait_for(lambda: scalar(c, "SELECT n FROM q_s_map"), 96) == 96
        assert wait_for(lambda: scalar(c, "SELECT n FROM q_s_map_latest"), 11) == 11


def test_max_offsets_per_trigger_batch_by_batch(kafka, sluiced):
    admin = Admin(kafka.bootstrap)
    admin.create_topic("capped", 4)
    produce(kafka.bootstrap, "capped", [(i % 4, None, json.dumps({"id": i, "v": 1}))
                                        for i in range(1030)])
    server = sluiced()
    with connect(server) as c:
        make_stream(c, "cs", kafka.bootstrap, "capped", ", max_offsets_per_trigger = 100")
        c.execute("CREATE CONTINUOUS QUERY capq WITH (trigger = '0') AS "
                  "SELECT count(*) AS n FROM cs")
        assert wait_for(lambda: scalar(c, "SELECT n FROM capq"), 1030) == 1030
    # The offset log's last entry may land just after the result rows
    # (docs/architecture.md, "Recovery").
    want = [100] * 10 + [30]
    sizes = wait_for(lambda: [sum(p["end"] - p["start"] for p in parts)
                              for _, parts in offset_log(server, "capq")], want)
    assert sizes == want, sizes
    log = offset_log(server, "capq")
    assert all(len(parts) == 4 for _, parts in log)
    # Consecutive: each batch starts where the one before ended.
    for (_, a), (_, b) in zip(log, log[1:]):
        assert {p["part"]: p["end"] for p in a} == {p["part"]: p["start"] for p in b}


def test_poison_record_goes_to_dead_letters(kafka, sluiced):
    admin = Admin(kafka.bootstrap)
    admin.create_topic("poison", 1)
    recs = [(0, None, json.dumps({"id": 1, "v": 1})),
            (0, None, b'{"id": 2, "v": "not a number"}'),
            (0, None, b"not json at all{"),
            (0, None, json.dumps({"id": 4, "v": 4}))]
    produce(kafka.bootstrap, "poison", recs)
    server = sluiced()
    with connect(server) as c:
        make_stream(c, "ps", kafka.bootstrap, "poison")
        c.execute("CREATE CONTINUOUS QUERY pq WITH (trigger = '100 ms') AS "
                  "SELECT id, v FROM ps")
        want = [(1, 1), (4, 4)]
        assert wait_for(lambda: sorted(c.execute("SELECT * FROM pq").fetchall()), want) == want
        dead = c.execute("SELECT raw, source, byte_offset, reason FROM ps_dead_letters "
                         "ORDER BY 3").fetchall()
        assert [(bytes(r[0]), r[1], r[2]) for r in dead] == [
            (b'{"id": 2, "v": "not a number"}', "kafka:poison/0", 1),
            (b"not json at all{", "kafka:poison/0", 2)]
        assert "v" in dead[0][3] and dead[1][3]
        # The query goes on after them.
        produce(kafka.bootstrap, "poison", [(0, None, json.dumps({"id": 5, "v": 5}))])
        want = [(1, 1), (4, 4), (5, 5)]
        assert wait_for(lambda: sorted(c.execute("SELECT * FROM pq").fetchall()), want) == want
        c.execute("DROP CONTINUOUS QUERY pq")
        c.execute("DROP STREAM ps")
        assert scalar(c, "SELECT count(*) FROM ps_dead_letters") is None


def test_deleted_topic_fails_the_query_clearly(kafka, sluiced):
    admin = Admin(kafka.bootstrap)
    admin.create_topic("doomed", 2)
    admin.create_topic("doomed2", 2)
    produce(kafka.bootstrap, "doomed", [(i % 2, None, json.dumps({"id": i, "v": 1}))
                                        for i in range(10)])
    produce(kafka.bootstrap, "doomed2", [(i % 2, None, json.dumps({"id": i, "v": 1}))
                                         for i in range(10)])
    server = sluiced()
    with connect(server) as c:
        make_stream(c, "ds", kafka.bootstrap, "doomed")
        make_stream(c, "ds2", kafka.bootstrap, "doomed2", ", fail_on_data_loss = false")
        c.execute("CREATE CONTINUOUS QUERY dq WITH (trigger = '100 ms') AS "
                  "SELECT count(*) AS n FROM ds")
        c.execute("CREATE CONTINUOUS QUERY dq2 WITH (trigger = '100 ms') AS "
                  "SELECT count(*) AS n FROM ds2")
        assert wait_for(lambda: scalar(c, "SELECT n FROM dq"), 10) == 10
        assert wait_for(lambda: scalar(c, "SELECT n FROM dq2"), 10) == 10
        admin.delete_topic("doomed")
        admin.delete_topic("doomed2")
        status = wait_for(lambda: query_status(server, "dq")[0], "failed")
        assert status == "failed"
        err = query_status(server, "dq")[1]
        assert 'Kafka topic "doomed" of stream "ds" does not exist' in err, err
        # fail_on_data_loss = false: the query goes on.
        assert query_status(server, "dq2")[0] == "running"
        assert scalar(c, "SELECT n FROM dq") == 10


def test_csv_and_raw_with_key_headers_timestamp(kafka, sluiced):
    admin = Admin(kafka.bootstrap)
    admin.create_topic("csvt", 1)
    admin.create_topic("rawt", 1)
    produce(kafka.bootstrap, "csvt", [(0, "a", "1,hello"), (0, "b", '2,"with, comma"'),
                                      (0, "c", "x,bad")])
    produce(kafka.bootstrap, "rawt", [(0, "k1", b"payload one", [("h", b"v1")]),
                                      (0, None, None)])
    server = sluiced()
    with connect(server) as c:
        make_stream(c, "cv", kafka.bootstrap, "csvt", ", format = 'csv'",
                    cols="n INT, t TEXT, _key TEXT")
        make_stream(c, "rw", kafka.bootstrap, "rawt", ", format = 'raw'",
                    cols="body TEXT, _key TEXT, _headers JSONB, _timestamp TIMESTAMPTZ, "
                         "_offset BIGINT")
        c.execute("CREATE CONTINUOUS QUERY cvq WITH (trigger = '100 ms') AS "
                  "SELECT n, t, _key AS k FROM cv")
        c.execute("CREATE CONTINUOUS QUERY rwq WITH (trigger = '100 ms') AS "
                  "SELECT body, _key AS k, _headers ->> 'h' AS h, "
                  "_timestamp > now() - INTERVAL '1 hour' AS recent, _offset AS o FROM rw")
        want = [(1, "hello", "a"), (2, "with, comma", "b")]
        assert wait_for(lambda: sorted(c.execute("SELECT * FROM cvq").fetchall()), want) == want
        assert wait_for(lambda: scalar(c, "SELECT count(*) FROM cv_dead_letters"), 1) == 1
        want = [("payload one", "k1", "v1", True, 0), (None, None, None, True, 1)]
        got = wait_for(lambda: sorted(c.execute("SELECT * FROM rwq").fetchall(),
                                      key=lambda r: r[4]), want)
        assert got == want


def test_text_that_is_not_utf8_is_a_dead_letter(kafka, sluiced):
    """A raw value, a key or a header that is not UTF-8, bound for a text or
    jsonb column, makes its record a dead letter (issue 19, item 16); the same
    bytes go into a bytea column as they are; JSON records with a lone
    surrogate escape or invalid bytes are dead letters too."""
    admin = Admin(kafka.bootstrap)
    admin.create_topic("badtext", 1)
    admin.create_topic("badjson", 1)
    produce(kafka.bootstrap, "badtext", [
        (0, "k0", b"good", [("h", b"v")]),
        (0, "k1", b"\xff\xfe", [("h", b"v")]),
        (0, b"\xc3", b"bad key", [("h", b"v")]),
        (0, "k3", b"bad header", [("h", b"\xed\xa0\x80")]),
        (0, "k4", b"also good", [("h", b"w")])])
    produce(kafka.bootstrap, "badjson", [
        (0, None, b'{"id": 1, "s": "ok"}'), (0, None, b'{"id": 2, "s": "\\ud800"}'),
        (0, None, b'{"id": 3, "s": "\xff"}'), (0, None, b'{"id": 4, "s": "fine"}')])
    server = sluiced()
    with connect(server) as c:
        make_stream(c, "bt", kafka.bootstrap, "badtext", ", format = 'raw'",
                    cols="body TEXT, _key TEXT, _headers JSONB, _offset BIGINT")
        make_stream(c, "bb", kafka.bootstrap, "badtext", ", format = 'raw'",
                    cols="body BYTEA, _offset BIGINT")
        make_stream(c, "bj", kafka.bootstrap, "badjson", ", format = 'json'",
                    cols="id BIGINT, s TEXT")
        c.execute("CREATE CONTINUOUS QUERY btq WITH (trigger = '100 ms') AS "
                  "SELECT _offset AS o, body, _key AS k, _headers ->> 'h' AS h FROM bt")
        c.execute("CREATE CONTINUOUS QUERY bbq WITH (trigger = '100 ms') AS "
                  "SELECT _offset AS o, body FROM bb")
        c.execute("CREATE CONTINUOUS QUERY bjq WITH (trigger = '100 ms') AS "
                  "SELECT id, s FROM bj")
        assert wait_for(lambda: scalar(c, "SELECT count(*) FROM bt_dead_letters"), 3) == 3
        want = [(0, "good", "k0", "v"), (4, "also good", "k4", "w")]
        assert wait_for(lambda: sorted(c.execute("SELECT * FROM btq").fetchall()), want) == want
        dead = c.execute("SELECT byte_offset, raw, reason FROM bt_dead_letters "
                         "ORDER BY byte_offset").fetchall()
        assert [(d[0], bytes(d[1])) for d in dead] == [
            (1, b"\xff\xfe"), (2, b"bad key"), (3, b"bad header")]
        assert "value: invalid byte sequence" in dead[0][2]
        assert "key: invalid byte sequence" in dead[1][2]
        assert "headers: invalid byte sequence" in dead[2][2]
        assert wait_for(lambda: scalar(c, "SELECT count(*) FROM bbq"), 5) == 5
        assert bytes(scalar(c, "SELECT body FROM bbq WHERE o = 1")) == b"\xff\xfe"
        want = [(1, "ok"), (4, "fine")]
        assert wait_for(lambda: sorted(c.execute("SELECT * FROM bjq").fetchall()), want) == want
        assert scalar(c, "SELECT count(*) FROM bj_dead_letters") == 2


def test_bad_options_are_refused_at_create(kafka, sluiced):
    server = sluiced()
    with connect(server) as c:
        bad = [
            ("WITH (connector = 'kafka', bootstrap_servers = 'x:1')", "needs a topic"),
            ("WITH (connector = 'kafka', topic = 't')", "bootstrap_servers"),
            ("WITH (connector = 'kafka', topic = 't', bootstrap_servers = 'x:1', "
             "format = 'xml')", 'invalid format "xml"'),
            ("WITH (connector = 'kafka', topic = 't', bootstrap_servers = 'x:1', "
             "\"kafka.no.such.property\" = '1')", "kafka.no.such.property"),
            ("WITH (connector = 'kafka', topic = 't', bootstrap_servers = 'x:1', "
             "starting_offsets = '{bad')", "invalid starting_offsets"),
        ]
        for opts, msg in bad:
            with pytest.raises(psycopg.Error) as e:
                c.execute(f"CREATE STREAM bad (a INT) {opts}")
            assert msg in str(e.value), (opts, str(e.value))
            assert e.value.sqlstate == "22023"
        with pytest.raises(psycopg.Error) as e:
            c.execute("CREATE STREAM bad (a INT, _offset TEXT) WITH (connector = 'kafka', "
                      "topic = 't', bootstrap_servers = 'x:1')")
        assert "metadata column \"_offset\" must be of type bigint" in str(e.value)
        # A property librdkafka accepts passes through.
        c.execute("CREATE STREAM good (a INT) WITH (connector = 'kafka', topic = 't', "
                  "bootstrap_servers = 'x:1', \"kafka.fetch.wait.max.ms\" = '50')")


def test_plain_select_reads_earliest_to_high_watermark(kafka, sluiced):
    admin = Admin(kafka.bootstrap)
    admin.create_topic("plain", 3)
    produce(kafka.bootstrap, "plain", [(i % 3, None, json.dumps({"id": i, "v": i}))
                                       for i in range(30)])
    server = sluiced()
    with connect(server) as c:
        # starting_offsets is for continuous queries; SELECT reads everything.
        make_stream(c, "pl", kafka.bootstrap, "plain", ", starting_offsets = 'latest'",
                    cols="id BIGINT, v BIGINT, _partition INT")
        got = c.execute("SELECT count(*), sum(v), count(DISTINCT _partition) FROM pl").fetchone()
        assert got == (30, sum(range(30)), 3)
        produce(kafka.bootstrap, "plain", [(0, None, json.dumps({"id": 99, "v": 1}))])
        assert c.execute("SELECT count(*) FROM pl").fetchone()[0] == 31
        assert c.execute("SELECT id FROM pl WHERE id > 28 ORDER BY id").fetchall() == \
            [(29,), (99,)]


def test_topics_list_and_pattern_with_a_new_topic(kafka, sluiced):
    admin = Admin(kafka.bootstrap)
    for t in ("pat_a", "pat_b", "other"):
        admin.create_topic(t, 2)
    for t in ("pat_a", "pat_b", "other"):
        produce(kafka.bootstrap, t, [(i % 2, None, json.dumps({"id": i, "v": 1}))
                                     for i in range(10)])
    server = sluiced()
    with connect(server) as c:
        c.execute(f"CREATE STREAM tl (id BIGINT, v BIGINT) WITH (connector = 'kafka', "
                  f"topics = 'pat_a, other', bootstrap_servers = '{kafka.bootstrap}')")
        c.execute(f"CREATE STREAM tp (id BIGINT, v BIGINT) WITH (connector = 'kafka', "
                  f"topic_pattern = 'pat_.*', bootstrap_servers = '{kafka.bootstrap}')")
        c.execute("CREATE CONTINUOUS QUERY tlq WITH (trigger = '100 ms') AS "
                  "SELECT count(*) AS n FROM tl")
        c.execute("CREATE CONTINUOUS QUERY tpq WITH (trigger = '100 ms') AS "
                  "SELECT count(*) AS n FROM tp")
        assert wait_for(lambda: scalar(c, "SELECT n FROM tlq"), 20) == 20
        assert wait_for(lambda: scalar(c, "SELECT n FROM tpq"), 20) == 20
        # A topic that starts to match while the query runs is read from its start.
        admin.create_topic("pat_c", 1)
        produce(kafka.bootstrap, "pat_c", [(0, None, json.dumps({"id": 1, "v": 1}))] * 5)
        assert wait_for(lambda: scalar(c, "SELECT n FROM tpq"), 25) == 25
        assert scalar(c, "SELECT n FROM tlq") == 20
        want = {"pat_a", "pat_b", "pat_c"}
        topics = wait_for(lambda: {p["topic"] for _, parts in offset_log(server, "tpq")
                                   for p in parts}, want)
        assert topics == want


def test_lost_offsets_fail_or_are_skipped(kafka, sluiced):
    """Records deleted (retention, DeleteRecords) before a query read them."""
    admin = Admin(kafka.bootstrap)
    admin.create_topic("lossy", 1)
    produce(kafka.bootstrap, "lossy", [(0, None, json.dumps({"id": i, "v": 1}))
                                       for i in range(10)])
    server = sluiced()
    with connect(server) as c:
        make_stream(c, "ls", kafka.bootstrap, "lossy")
        make_stream(c, "ls2", kafka.bootstrap, "lossy", ", fail_on_data_loss = false")
        c.execute("CREATE CONTINUOUS QUERY lq WITH (trigger = '100 ms') AS "
                  "SELECT count(*) AS n FROM ls")
        c.execute("CREATE CONTINUOUS QUERY lq2 WITH (trigger = '100 ms') AS "
                  "SELECT count(*) AS n FROM ls2")
        assert wait_for(lambda: scalar(c, "SELECT n FROM lq"), 10) == 10
        assert wait_for(lambda: scalar(c, "SELECT n FROM lq2"), 10) == 10
        c.execute("ALTER CONTINUOUS QUERY lq PAUSE")
        c.execute("ALTER CONTINUOUS QUERY lq2 PAUSE")
        produce(kafka.bootstrap, "lossy", [(0, None, json.dumps({"id": i, "v": 1}))
                                           for i in range(10, 20)])
        admin.delete_records("lossy", 0, 15)      # offsets 10..14 are gone unread
        # Whether the plan sees the new low watermark first (the poller) or the
        # batch runs into it (the consumer), the outcome is the same.
        c.execute("ALTER CONTINUOUS QUERY lq RESUME")
        c.execute("ALTER CONTINUOUS QUERY lq2 RESUME")
        assert wait_for(lambda: query_status(server, "lq")[0], "failed") == "failed"
        err = query_status(server, "lq")[1]
        assert "Kafka partition lossy/0 of stream \"ls\"" in err and \
            "records were lost" in err, err
        # fail_on_data_loss = false: skipped to 15, the rest read.
        assert wait_for(lambda: scalar(c, "SELECT n FROM lq2"), 15) == 15
        assert query_status(server, "lq2")[0] == "running"
        assert "kafka records lost, skipped" in server.log_text()


def test_union_all_of_kafka_and_internal_stream_composes_offsets(kafka, sluiced):
    """A query over two inputs, a Kafka stream of 4 partitions and an internal
    stream, UNION ALL: each input keeps its own per-partition offsets, the
    offset log names each range's input, a kill and restart replay or resume
    without counting a row twice, and sys.source_lag has a row per input and
    partition."""
    admin = Admin(kafka.bootstrap)
    admin.create_topic("mixed", 4)
    produce(kafka.bootstrap, "mixed", [(i % 4, None, json.dumps({"id": i, "v": 1}))
                                       for i in range(400)])
    server = sluiced()
    with connect(server) as c:
        make_stream(c, "km", kafka.bootstrap, "mixed")
        c.execute("CREATE STREAM im (id BIGINT, v BIGINT)")
        c.execute("INSERT INTO im SELECT g, 10 FROM generate_series(1, 100) g")
        c.execute("CREATE CONTINUOUS QUERY mix WITH (trigger = '100 ms', "
                  "output_mode = 'update') AS SELECT src, count(*) AS n, sum(v) AS s FROM "
                  "(SELECT 'k' AS src, v FROM km UNION ALL SELECT 'i', v FROM im) x GROUP BY src")
        want = [("i", 100, 1000), ("k", 400, 400)]
        got = wait_for(lambda: sorted(c.execute("SELECT * FROM mix").fetchall()), want)
        assert got == want
        lag = ("SELECT source, topic, partition, committed_offset, lag FROM sys.source_lag "
               "WHERE query = 'mix' ORDER BY source, partition")
        want_lag = [("im", None, 0, 100, 0)] + [("km", "mixed", p, 100, 0) for p in range(4)]
        assert wait_for(lambda: c.execute(lag).fetchall(), want_lag) == want_lag
    log = offset_log(server, "mix")
    assert log, "no offset log"
    for _, parts in log:
        # every range names its input; input 0 is the Kafka stream (4 partitions)
        assert {p["input"] for p in parts} == {0, 1}, parts
        assert sorted(p["part"] for p in parts if p["input"] == 0) == [0, 1, 2, 3], parts
        assert all("topic" in p for p in parts if p["input"] == 0), parts
        assert [p["part"] for p in parts if p["input"] == 1] == [0], parts
    ends = {}
    for _, parts in log:
        for p in parts:
            ends[(p["input"], p["part"])] = p["end"]
    assert ends == {(0, 0): 100, (0, 1): 100, (0, 2): 100, (0, 3): 100, (1, 0): 100}, ends

    # A crash, more input on both sides, a restart: nothing counted twice.
    server.kill()
    produce(kafka.bootstrap, "mixed", [(i % 4, None, json.dumps({"id": i, "v": 1}))
                                       for i in range(40)])
    server.start()
    with connect(server) as c:
        c.execute("INSERT INTO im SELECT g, 10 FROM generate_series(1, 5) g")
        want = [("i", 105, 1050), ("k", 440, 440)]
        got = wait_for(lambda: sorted(c.execute("SELECT * FROM mix").fetchall()), want)
        assert got == want


def test_watermark_per_kafka_partition_with_idle_timeout(kafka, sluiced):
    """WITH (partitions = 2, partition_key = '_partition', idle_timeout) on a
    Kafka stream: each Kafka partition has its own watermark, combined by
    minimum, so a partition that stopped early holds the window open until it
    has been idle for idle_timeout -- not before."""
    import time
    from datetime import datetime, timedelta
    t0 = datetime(2026, 1, 1)

    def rec(part, sec):
        return (part, None, json.dumps({"id": sec, "ts": (t0 + timedelta(seconds=sec))
                                        .isoformat(sep=" ")}))
    admin = Admin(kafka.bootstrap)
    admin.create_topic("wm2", 2)
    server = sluiced()
    with connect(server) as c:
        make_stream(c, "kw", kafka.bootstrap, "wm2",
                    ", partitions = 2, partition_key = '_partition', idle_timeout = '8 seconds'",
                    cols="id BIGINT, ts TIMESTAMP, _partition INT, "
                         "WATERMARK FOR ts AS ts - INTERVAL '1 second'")
        c.execute("CREATE CONTINUOUS QUERY kwin WITH (trigger = '100 ms', output_mode = 'append') "
                  "AS SELECT window_start, count(*) AS n FROM kw "
                  "GROUP BY WINDOW(ts, INTERVAL '10 seconds')")
        # partition 1 says one thing early; partition 0 runs far ahead
        produce(kafka.bootstrap, "wm2", [rec(1, 2), rec(0, 1), rec(0, 5), rec(0, 30)])
        silent_since = time.monotonic()
        lag = "SELECT partition, committed_offset FROM sys.source_lag WHERE query = 'kwin' " \
              "ORDER BY partition"
        assert wait_for(lambda: c.execute(lag).fetchall(), [(0, 3), (1, 1)]) == [(0, 3), (1, 1)]
        time.sleep(1)
        if time.monotonic() - silent_since < 7:
            # read, but partition 1 (at 00:00:02) still holds the watermark
            assert c.execute("SELECT * FROM kwin").fetchall() == []
        want = [(t0, 3)]
        assert wait_for(lambda: c.execute("SELECT * FROM kwin").fetchall(), want) == want
        assert time.monotonic() - silent_since >= 8


def test_plain_select_closes_its_scan_on_its_worker(kafka, sluiced, tmp_path):
    """The close of a SELECT's Kafka scan joins the poller (up to 1 s) and
    waits for the consumer to be destroyed (up to 3 s): it runs on the
    statement's worker when the result ends, never on the loop.  Held
    there (fault point kafka_source_close), another client's SELECT 1 is
    still answered at once.  Eight statement workers: SELECT 1 does not
    wait for a free one."""
    Admin(kafka.bootstrap).create_topic("closing", 1)
    produce(kafka.bootstrap, "closing", [(0, None, json.dumps({"id": i, "v": i}))
                                         for i in range(10)])
    server = sluiced("--statement-workers", "8")
    with connect(server) as c:
        make_stream(c, "cl", kafka.bootstrap, "closing")
    server.stop()
    hold = tmp_path / "hold"
    hold.write_text("")
    server.env = {"SLUICE_FAULT": "kafka_source_close:hold", "SLUICE_FAULT_HOLD": str(hold)}
    server.start()
    out, one = {}, {}

    def count():
        with connect(server) as c:
            out["value"] = c.execute("SELECT count(*) FROM cl").fetchone()[0]

    other = connect(server)
    t = threading.Thread(target=count, daemon=True)
    t1 = threading.Thread(target=lambda: one.update(value=other.execute("SELECT 1").fetchone()),
                          daemon=True)
    try:
        t.start()
        assert wait_for(lambda: "fault point kafka_source_close reached, holding"
                        in server.log_text(), True), "the scan was never closed"
        began = time.monotonic()
        t1.start()
        t1.join(2)
        assert one == {"value": (1,)}, "SELECT 1 not answered while the close is held"
        assert time.monotonic() - began < 0.5
    finally:
        hold.unlink()
    t.join(WAIT)
    t1.join(WAIT)
    other.close()
    assert out == {"value": 10}


def test_suspended_kafka_portal_is_closed_off_the_loop(kafka, sluiced, tmp_path):
    """A portal suspended by an Execute row limit keeps its Kafka scan open;
    the Sync that drops it hands the close to the statement pool, so the
    loop does not wait for it: held at kafka_source_close, another
    client's SELECT 1 is still answered at once."""
    from pgwire_raw import Raw, bind, execute, flush, parse, sync
    Admin(kafka.bootstrap).create_topic("suspended", 1)
    produce(kafka.bootstrap, "suspended", [(0, None, json.dumps({"id": i, "v": i}))
                                           for i in range(10)])
    server = sluiced("--statement-workers", "8")
    with connect(server) as c:
        make_stream(c, "su", kafka.bootstrap, "suspended")
    server.stop()
    hold = tmp_path / "hold"
    hold.write_text("")
    server.env = {"SLUICE_FAULT": "kafka_source_close:hold", "SLUICE_FAULT_HOLD": str(hold)}
    server.start()
    other = connect(server)
    raw = Raw(server.port, timeout=WAIT)
    raw.startup()
    raw.send(parse("SELECT id FROM su"), bind(), execute("", 1), flush())
    kinds = []
    while not kinds or kinds[-1] != b"s":
        kinds.append(raw.recv_msg()[0])
    assert kinds == [b"1", b"2", b"D", b"s"]
    one = {}
    t1 = threading.Thread(target=lambda: one.update(value=other.execute("SELECT 1").fetchone()),
                          daemon=True)
    try:
        raw.send(sync())
        assert wait_for(lambda: "fault point kafka_source_close reached, holding"
                        in server.log_text(), True), "the portal's scan was never closed"
        began = time.monotonic()
        t1.start()
        t1.join(2)
        assert one == {"value": (1,)}, "SELECT 1 not answered while the close is held"
        assert time.monotonic() - began < 0.5
    finally:
        hold.unlink()
    assert raw.until_ready()[-1][0] == b"Z"
    raw.close()
    t1.join(WAIT)
    other.close()
