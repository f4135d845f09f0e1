"""tests/kafka/test_kafka_roles.py - Kafka streams of roles that are not superusers,
against a real broker (issue 19, item 1; docs/sql-reference.md "Kafka properties").

The refusals are tested without a broker in tests/security/test_sec_kafka_options.py;
here, what stays allowed works end to end: a plain role's stream with properties of
the allow-list, on a server whose --kafka-allowed-hosts names the broker, is read; a
superuser's stream with a superuser-only property is read by a role granted SELECT
(the owner's rights count where the configuration is built, not the reader's).
"""

import json
import re

import psycopg
from confluent_kafka import Producer
from confluent_kafka.admin import AdminClient, NewTopic

from kafka_helpers import (WAIT, Admin, KafkaBroker, broker_fixture, produce, read_committed,
                           wait_for)

kafka = broker_fixture()


def connect(server, user="sluice", password=None):
    kw = {"password": password} if password else {}
    return psycopg.connect(host=server.host, port=server.port, user=user, dbname="sluice",
                           autocommit=True, connect_timeout=10, sslmode="disable", **kw)


def test_role_streams_read_with_allowed_properties(kafka, sluiced):
    Admin(kafka.bootstrap).create_topic("roles", 2)
    produce(kafka.bootstrap, "roles", [(i % 2, None, json.dumps({"id": i})) for i in range(20)])
    server = sluiced("--kafka-allowed-hosts", kafka.bootstrap)
    with connect(server) as su:
        su.execute("CREATE ROLE u LOGIN PASSWORD 'u-password-1'")
        su.execute("CREATE STREAM mine (id BIGINT) WITH (connector = 'kafka', topic = 'roles', "
                   f"bootstrap_servers = '{kafka.bootstrap}', "
                   "\"kafka.log.connection.close\" = 'false')")
        su.execute("GRANT SELECT ON mine TO u")
        with connect(server, "u", "u-password-1") as u:
            u.execute("CREATE STREAM yours (id BIGINT) WITH (connector = 'kafka', "
                      f"topic = 'roles', bootstrap_servers = '{kafka.bootstrap}', "
                      "\"kafka.client.id\" = 'u-client', \"kafka.fetch.wait.max.ms\" = '50', "
                      "fetch = 'librdkafka')")
            assert u.execute("SELECT count(*), sum(id) FROM yours").fetchone() == (20, 190)
            assert u.execute("SELECT count(*) FROM mine").fetchone() == (20,)
            try:
                u.execute("CREATE STREAM theirs (id BIGINT) WITH (connector = 'kafka', "
                          f"topic = 'roles', bootstrap_servers = '{kafka.bootstrap}', "
                          "\"kafka.log.connection.close\" = 'false')")
                raise AssertionError("a superuser-only property was accepted")
            except psycopg.errors.InsufficientPrivilege:
                pass


def test_brokers_named_by_metadata_are_checked_too(kafka, sluiced):
    """The broker advertises 127.0.0.1:PORT; a role allowed only localhost:PORT
    reaches the bootstrap server by that name but no broker the metadata
    names: its SELECT fails and the log says which address was refused.  With
    both names listed it reads."""
    Admin(kafka.bootstrap).create_topic("redirect", 1)
    produce(kafka.bootstrap, "redirect", [(0, None, json.dumps({"id": i})) for i in range(5)])
    port = kafka.bootstrap.rsplit(":", 1)[1]
    for allowed, works in ((f"localhost:{port}", False),
                           (f"localhost:{port},127.0.0.1:{port}", True)):
        server = sluiced("--kafka-allowed-hosts", allowed)
        with connect(server) as su:
            su.execute("CREATE ROLE u LOGIN PASSWORD 'u-password-1'")
        with connect(server, "u", "u-password-1") as u:
            for fetch in ("direct", "librdkafka"):
                u.execute(f"CREATE STREAM r_{fetch} (id BIGINT) WITH (connector = 'kafka', "
                          f"topic = 'redirect', bootstrap_servers = 'localhost:{port}', "
                          f"read_timeout = '5 seconds', fetch = '{fetch}')")
                if works:
                    assert u.execute(f"SELECT count(*) FROM r_{fetch}").fetchone() == (5,)
                else:
                    try:
                        u.execute(f"SELECT count(*) FROM r_{fetch}")
                        raise AssertionError(f"{fetch}: read through a broker not allowed")
                    except psycopg.Error:
                        pass
        if not works:
            assert f'kafka broker refused" address="127.0.0.1:{port}"' in server.log_text() \
                or f"address=\"127.0.0.1:{port}\"" in server.log_text(), server.log_text()[-3000:]


def test_role_sink_reads_its_progress_through_the_allowed_broker(kafka, sluiced):
    """A plain role's exactly-once sink, on a server whose
    --kafka-allowed-hosts names the broker as it advertises itself: killed
    after its second batch's Kafka commit and before the state's, the
    restarted sink reads its progress topic directly (a connection checked
    against the list like every other) and skips that batch: every row
    once, no broker refused."""
    admin = Admin(kafka.bootstrap)
    admin.create_topic("role_sink_out", 1)
    admin.create_topic("role_sink_progress", 1, {"cleanup.policy": "compact"})
    server = sluiced("--kafka-allowed-hosts", kafka.bootstrap,
                     env={"SLUICE_FAULT": "kafka_sink_after_commit:2"})
    with connect(server) as su:
        su.execute("CREATE ROLE u LOGIN PASSWORD 'u-password-1'")
    with connect(server, "u", "u-password-1") as u:
        u.execute("CREATE STREAM ev (id BIGINT)")
        u.execute(f"CREATE SINK ko WITH (connector = 'kafka', topic = 'role_sink_out', "
                  f"bootstrap_servers = '{kafka.bootstrap}', key = 'id', "
                  f"progress_topic = 'role_sink_progress')")
        u.execute("CREATE CONTINUOUS QUERY uq INTO ko WITH (trigger = '0') AS "
                  "SELECT id FROM ev")
        u.execute("INSERT INTO ev SELECT g FROM generate_series(1, 5) g")

        def ids():
            return sorted(json.loads(v)["id"] for _, _, _, v in
                          read_committed(kafka.bootstrap, "role_sink_out"))
        assert wait_for(ids, [1, 2, 3, 4, 5]) == [1, 2, 3, 4, 5]
        u.execute("INSERT INTO ev SELECT g FROM generate_series(6, 10) g")
    assert server.wait_exit(WAIT) == -9, "the fault point did not kill the server"
    server.env.pop("SLUICE_FAULT")
    server.start()
    want = list(range(1, 11))
    assert wait_for(ids, want) == want
    wait_for(lambda: "batch already committed, skipped" in server.log_text(), True)
    log = server.log_text()
    assert "batch already committed, skipped" in log, log[-3000:]
    assert "committed_batch=" in log and "read by librdkafka" not in log, log[-3000:]
    assert "kafka broker refused" not in log, log[-3000:]


class JoiningBroker(KafkaBroker):
    """A second node of first's cluster: a broker only (node.id 2), whose
    controller is first's, on a port of its own."""

    def __init__(self, first):
        super().__init__()
        self.first = first

    def _write_config(self):
        super()._write_config()
        path = self.workdir / "server.properties"
        props = dict(line.split("=", 1) for line in path.read_text().splitlines() if line)
        props.update({"process.roles": "broker", "node.id": "2",
                      "controller.quorum.voters": f"1@127.0.0.1:{self.first.controller_port}",
                      "listeners": f"PLAINTEXT://127.0.0.1:{self.port}"})
        path.write_text("".join(f"{k}={v}\n" for k, v in props.items()))

    def _format_storage(self):
        meta = (self.first.workdir / "data" / "meta.properties").read_text()
        (cluster,) = re.findall(r"^cluster\.id=(\S+)$", meta, re.M)
        res = self._run_tool("kafka.tools.StorageTool",
                             ["format", "-t", cluster, "-c",
                              str(self.workdir / "server.properties")])
        assert res.returncode == 0, res.stdout


def test_sink_progress_read_checks_its_leader_against_allowed_hosts(sluiced):
    """A sink's progress topic led by a broker off --kafka-allowed-hosts:
    the sink checks the leader the metadata names before anything reads
    the topic.  A cluster of two brokers: the transaction coordinator and
    the sink's topic on broker 1 (on the list), the progress topic led by
    broker 2 (not on it).  A plain role's query into the sink fails 42501
    naming broker 2, and writes nothing.  (Before the check, librdkafka's
    resolver refused broker 2 first, and the query failed with "Local: Bad
    message format" or "no answer creating the progress topic".)"""
    first = KafkaBroker()
    second = JoiningBroker(first)
    try:
        first.start()
        # the transaction log (one partition) and the sink's topic while
        # broker 1 is alone: their leader is broker 1
        p = Producer({"bootstrap.servers": first.bootstrap, "transactional.id": "warm-up"})
        p.init_transactions(WAIT)
        del p
        Admin(first.bootstrap).create_topic("out", 1)
        second.start()
        admin = AdminClient({"bootstrap.servers": first.bootstrap})
        fs = admin.create_topics([NewTopic("prog", num_partitions=1, replication_factor=-1,
                                           replica_assignment=[[2]],
                                           config={"cleanup.policy": "compact"})])
        fs["prog"].result(60)
        Admin(first.bootstrap).wait_partitions("prog", 1)
        # a record on it: the sink reads it (an empty topic is not read)
        produce(first.bootstrap, "prog", [(0, "another-sink", json.dumps({"batch": 0}))])
        server = sluiced("--kafka-allowed-hosts", first.bootstrap)
        with connect(server) as su:
            su.execute("CREATE ROLE u LOGIN PASSWORD 'pw-u'")
            su.execute("CREATE STREAM s (a bigint)")
            su.execute("GRANT SELECT, INSERT ON s TO u")
        with connect(server, "u", "pw-u") as u:
            u.execute(f"CREATE SINK k WITH (connector = 'kafka', topic = 'out', "
                      f"bootstrap_servers = '{first.bootstrap}', format = 'json', "
                      f"progress_topic = 'prog')")
            u.execute("CREATE CONTINUOUS QUERY q INTO k WITH (trigger = '1 second') AS "
                      "SELECT a FROM s")
            u.execute("INSERT INTO s SELECT g FROM generate_series(1, 10) g")
            want = f'permission denied to connect "k" to Kafka broker "127.0.0.1:{second.port}"'
            refused = wait_for(lambda: want in (u.execute(
                "SELECT last_error FROM sys.queries WHERE name = 'q'").fetchone()[0] or ""), True)
            assert refused, u.execute("SELECT status, last_error FROM sys.queries").fetchall()
        assert read_committed(first.bootstrap, "out", timeout=10) == []
    finally:
        second.stop()
        first.stop()
