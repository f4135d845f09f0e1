"""The librdkafka properties a role may set (issue 19, item 1).

`kafka.*` options go to librdkafka.  Some of its properties run a command
(sasl.kerberos.kinit.cmd), load a library (plugin.library.paths, dlopen()ed
the moment the property is set), or read and write files on the server host
(*.location, offset.store.path, ...).  A relation whose owner is not a
superuser may set only an allow-list of protocol, tuning and credential
properties (src/connectors/kafka_conf.c; docs/sql-reference.md, "Kafka
properties"); everything else is 42501 before librdkafka sees it, at CREATE
and again when the relation is opened.

The fuzz test tries every property name librdkafka knows -- its own
rd_kafka_conf_dump() and rd_kafka_topic_conf_dump() at run time, its
CONFIGURATION.md where the system has it, and the names below -- as the
plain role `u`, each with a value that would run a command or load a
library that leaves a file behind, and checks that nothing that reaches the
host is accepted and that no file appeared.  No broker is needed: the
refusal comes at CREATE.
"""

import ctypes
import ctypes.util
import gzip
import re
import subprocess
from pathlib import Path

from sec_helpers import connect, error_of, make_role, sqlstate

BROKER = "127.0.0.1:1"   # never contacted: CREATE does no I/O

# Names that act on the server host: none may be set by a non-superuser.
HOST_NAMES = [
    "sasl.kerberos.kinit.cmd", "sasl.kerberos.keytab", "sasl.kerberos.principal",
    "sasl.kerberos.service.name", "sasl.kerberos.min.time.before.relogin",
    "plugin.library.paths", "interceptors", "ssl.engine.location", "ssl.engine.id",
    "ssl.providers", "ssl.ca.location", "ssl.crl.location", "ssl.certificate.location",
    "ssl.key.location", "ssl.keystore.location", "ssl.ca.certificate.stores",
    "sasl.oauthbearer.method", "sasl.oauthbearer.token.endpoint.url",
    "sasl.oauthbearer.config", "enable.sasl.oauthbearer.unsecure.jwt",
    "offset.store.path", "offset.store.method", "debug", "log_level", "log.queue",
    "enable.random.seed", "internal.termination.signal", "test.mock.num.brokers",
    "transactional.id", "builtin.features", "opaque", "default_topic_conf",
]
# A name says it touches the host: files, commands, plugins, engines,
# certificates or keys by location, Kerberos, OAUTHBEARER token fetching,
# the server's log, callbacks, the mock cluster.
HOST_RE = re.compile(r"location|path|\.cmd$|keytab|kerberos|plugin|interceptor|engine|"
                     r"provider|offset\.store\.|certificate\.stores|oauthbearer|^debug$|^log|_cb$|termination|random|"
                     r"test\.mock|transactional\.id|builtin|opaque|default_topic_conf")


def librdkafka_names():
    """Every property name librdkafka lists: its dumps, CONFIGURATION.md when
    installed, and HOST_NAMES."""
    names = set(HOST_NAMES)
    lib = ctypes.CDLL(ctypes.util.find_library("rdkafka") or "librdkafka.so.1")
    for new, dump in (("rd_kafka_conf_new", "rd_kafka_conf_dump"),
                      ("rd_kafka_topic_conf_new", "rd_kafka_topic_conf_dump")):
        getattr(lib, new).restype = ctypes.c_void_p
        f = getattr(lib, dump)
        f.restype = ctypes.POINTER(ctypes.c_char_p)
        f.argtypes = [ctypes.c_void_p, ctypes.POINTER(ctypes.c_size_t)]
        n = ctypes.c_size_t()
        arr = f(getattr(lib, new)(), ctypes.byref(n))
        names.update(arr[i].decode() for i in range(0, n.value, 2))
    doc = Path("/usr/share/doc/librdkafka-dev/CONFIGURATION.md.gz")
    if doc.exists():
        for line in gzip.open(doc, "rt"):
            m = re.match(r"^([a-z][a-z0-9_.]*)\s*\|\s*[CP*]\s*\|", line)
            if m:
                names.add(m.group(1))
    return sorted(names)


def evil_library(tmp_path, sentinel):
    """A shared library whose constructor writes sentinel: loading it is
    running code."""
    src = tmp_path / "evil.c"
    src.write_text('#include <stdio.h>\n'
                   '__attribute__((constructor)) static void evil(void) {\n'
                   f'    FILE *f = fopen("{sentinel}", "w"); if (f) fclose(f);\n'
                   '}\n')
    lib = tmp_path / "evil.so"
    subprocess.run(["cc", "-shared", "-fPIC", "-o", str(lib), str(src)], check=True)
    return lib


def create_kafka(conn, name, **props):
    opts = ", ".join(f"\"kafka.{k}\" = '{v}'" for k, v in props.items())
    return (f"CREATE STREAM {name} (v text) WITH (connector = 'kafka', topic = 't', "
            f"bootstrap_servers = '{BROKER}', format = 'raw'{', ' + opts if opts else ''})")


def test_kinit_cmd_and_plugin_refused_for_role(sluiced, tmp_path):
    """The issue's two reproductions, as `u`: 42501 at CREATE, nothing ran."""
    server = sluiced()
    sentinel = tmp_path / "ran"
    lib = evil_library(tmp_path, sentinel)
    with make_role(server) as u:
        e = error_of(u, create_kafka(u, "krce", **{
            "security.protocol": "SASL_PLAINTEXT", "sasl.mechanisms": "GSSAPI",
            "sasl.kerberos.kinit.cmd": f"touch {sentinel}"}))
        assert e.sqlstate == "42501", e
        assert "kafka.sasl.kerberos.kinit.cmd" in str(e)
        e = error_of(u, create_kafka(u, "kplug", **{"plugin.library.paths": str(lib)}))
        assert e.sqlstate == "42501", e
        assert u.execute("SELECT count(*) FROM sys.streams WHERE name IN ('krce', 'kplug')"
                         ).fetchone() == (0,)
    assert not sentinel.exists(), "the server ran the role's command or library"


def test_sasl_mechanisms_for_role(sluiced):
    """SASL with GSSAPI (librdkafka's default mechanism) runs kinit; OAUTHBEARER
    fetches tokens: a role gets PLAIN and SCRAM only, and must name one."""
    server = sluiced("--kafka-allowed-hosts", BROKER)
    with make_role(server) as u:
        assert sqlstate(u, create_kafka(u, "k1", **{"security.protocol": "SASL_SSL"})) == "42501"
        assert sqlstate(u, create_kafka(u, "k2", **{"security.protocol": "sasl_plaintext",
                                                     "sasl.mechanism": "GSSAPI"})) == "42501"
        assert sqlstate(u, create_kafka(u, "k3", **{"security.protocol": "SASL_PLAINTEXT",
                                                     "sasl.mechanisms": "OAUTHBEARER"})) == "42501"
        for i, mech in enumerate(("PLAIN", "SCRAM-SHA-256", "scram-sha-512")):
            assert sqlstate(u, create_kafka(u, f"ok{i}", **{
                "security.protocol": "SASL_SSL", "sasl.mechanism": mech,
                "sasl.username": "a", "sasl.password": "b"})) is None, mech
        # plain tuning and TLS without files stay open to every role
        assert sqlstate(u, create_kafka(u, "tune", **{
            "security.protocol": "SSL", "fetch.max.bytes": "1048576", "client.id": "x",
            "enable.ssl.certificate.verification": "false"})) is None


def test_superuser_keeps_host_properties_and_owner_checked_at_open(sluiced):
    """A superuser may set them; a relation whose owner is no longer a
    superuser is refused where its configuration is built (the SELECT), not
    only at CREATE."""
    server = sluiced()
    with connect(server) as su:
        su.execute("CREATE ROLE w LOGIN SUPERUSER PASSWORD 'w-password-1'")
        with connect(server, "w", "w-password-1") as w:
            w.execute(create_kafka(w, "kw", **{"sasl.kerberos.service.name": "kafka"}))
        su.execute("ALTER ROLE w NOSUPERUSER")
        e = error_of(su, "SELECT * FROM kw")
        assert e.sqlstate == "42501", e
        su.execute(create_kafka(su, "ks", **{"sasl.kerberos.service.name": "kafka",
                                              "ssl.ca.location": "/nonexistent/ca.pem"}))


def test_fuzz_every_librdkafka_property(sluiced, tmp_path):
    """Every name librdkafka knows, and names it does not, as `u`: those that
    act on the host are 42501; the rest are accepted or refused for their
    value; no command ran and no library was loaded."""
    server = sluiced("--kafka-allowed-hosts", BROKER)
    sentinel = tmp_path / "ran"
    lib = evil_library(tmp_path, sentinel)
    names = librdkafka_names()
    assert len(names) > 100, names
    accepted, refused = [], []
    with make_role(server) as u:
        for i, name in enumerate(names + ["no.such.property", "x"]):
            value = f"touch {sentinel}" if name.endswith("cmd") else str(lib)
            state = sqlstate(u, create_kafka(u, f"f{i}", **{name: value}))
            if HOST_RE.search(name) or name in HOST_NAMES or name in ("no.such.property", "x"):
                assert state == "42501", (name, state)
            assert state in (None, "42501", "22023"), (name, state)
            (accepted if state is None else refused).append(name)
            if state is None:
                u.execute(f"DROP STREAM f{i}")
        # the same with a value librdkafka takes for most properties
        for i, name in enumerate(names):
            state = sqlstate(u, create_kafka(u, f"g{i}", **{name: "1"}))
            if HOST_RE.search(name) or name in HOST_NAMES:
                assert state == "42501", (name, state)
            if state is None:
                u.execute(f"DROP STREAM g{i}")
    assert not sentinel.exists(), "the server ran the role's command or library"
    assert "client.id" in accepted and "plugin.library.paths" in refused


def test_allowed_hosts_for_role(sluiced):
    """--kafka-allowed-hosts: a role names only the brokers listed (a host
    alone allows any port); a superuser any; sys.settings shows the list."""
    hosts = "127.0.0.1:1, kafka.internal, [::1]:9092"
    server = sluiced("--kafka-allowed-hosts", hosts)

    def create(conn, name, servers, extra=""):
        return sqlstate(conn, f"CREATE STREAM {name} (v text) WITH (connector = 'kafka', "
                              f"topic = 't', bootstrap_servers = '{servers}', "
                              f"format = 'raw'{extra})")

    with make_role(server) as u:
        assert create(u, "a1", "127.0.0.1:1") is None
        assert create(u, "a2", "KAFKA.internal:9093,127.0.0.1:1") is None
        assert create(u, "a3", "[::1]:9092") is None
        assert create(u, "a4", "SASL_SSL://kafka.internal:1") is None
        for i, servers in enumerate(("127.0.0.1:2", "127.0.0.1:1,10.0.0.1:22", "127.0.0.2:1",
                                     "[::1]:9093", "kafka.internal.evil:1", "localhost:1")):
            assert create(u, f"b{i}", servers) == "42501", servers
        assert create(u, "b9", "127.0.0.1:1",
                      ", \"kafka.bootstrap.servers\" = '10.0.0.1:22'") == "42501"
        assert create(u, "b10", "127.0.0.1:1",
                      ", \"kafka.metadata.broker.list\" = '10.0.0.1:22'") == "42501"
        assert u.execute("SELECT setting FROM sys.settings WHERE name = 'kafka_allowed_hosts'"
                         ).fetchone() == (hosts,)
    with connect(server) as su:
        assert create(su, "s1", "10.0.0.1:22") is None


def test_no_broker_for_role_without_allowed_hosts(sluiced):
    """Without --kafka-allowed-hosts a role names no broker at all (as
    without --files-root it uses no path): its Kafka stream and sink are
    42501 at CREATE, the hint names the option; a superuser's are created,
    and '*' opens every address to the role."""
    server = sluiced()
    with make_role(server) as u:
        e = error_of(u, create_kafka(u, "k1"))
        assert e.sqlstate == "42501", e
        assert "--kafka-allowed-hosts" in (e.diag.message_hint or ""), e.diag.message_hint
        e = error_of(u, f"CREATE SINK s1 WITH (connector = 'kafka', topic = 'out', "
                        f"bootstrap_servers = '{BROKER}')")
        assert e.sqlstate == "42501", e
        assert u.execute("SELECT count(*) FROM sys.streams WHERE name = 'k1'").fetchone() == (0,)
        assert u.execute("SELECT count(*) FROM sys.sinks WHERE name = 's1'").fetchone() == (0,)
    with connect(server) as su:
        su.execute(create_kafka(su, "k2"))
        assert su.execute("SELECT setting FROM sys.settings WHERE name = "
                          "'kafka_allowed_hosts'").fetchone() == ("",)
    server = sluiced("--kafka-allowed-hosts", "*")
    with make_role(server) as u:
        assert sqlstate(u, create_kafka(u, "k3")) is None
        assert sqlstate(u, create_kafka(u, "k4").replace(BROKER, "10.0.0.1:22")) is None


def test_sink_transactional_id_superuser_only(sluiced):
    """transactional_id names the producer that a sink fences and whose
    progress it reads: another sink's id (visible in sys.queries) would take
    that sink over.  A role gets 42501 at CREATE SINK (no broker contacted);
    its sink without the option, and a superuser's with it, are created."""
    server = sluiced("--kafka-allowed-hosts", BROKER)

    def sink(name, extra=""):
        return (f"CREATE SINK {name} WITH (connector = 'kafka', topic = 'out', "
                f"bootstrap_servers = '{BROKER}'{extra})")

    with make_role(server) as u:
        e = error_of(u, sink("s1", ", transactional_id = 'sluice-q-16384-1'"))
        assert e.sqlstate == "42501", e
        assert "transactional_id" in str(e)
        assert u.execute("SELECT count(*) FROM sys.sinks WHERE name = 's1'").fetchone() == (0,)
        assert sqlstate(u, sink("s2")) is None
    with connect(server) as su:
        assert sqlstate(su, sink("s3", ", transactional_id = 'mine'")) is None
