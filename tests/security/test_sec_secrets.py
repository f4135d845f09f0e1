"""Secrets in catalog views, messages and the log (issue 19, item 4).

Options whose names say they hold a secret (password, secret, token, a
private key: opts_is_secret in src/util/options.c) are stored, since the
connectors need them, but every view shows them as '********': the options
column and the CREATE statement's text of sys.streams, sys.sinks,
sys.tables and sys.queries, pg_get_viewdef, EXPLAIN -- to every role,
superusers too, as PostgreSQL never shows a user mapping's password.  The
test creates Kafka streams and sinks with secrets as `u` and as the
superuser, then reads every relation of sys, pg_catalog and
information_schema as both, and greps the answers and the server log (at
debug level) for the secrets.
"""

from sec_helpers import connect, error_of, make_role

BROKER = "127.0.0.1:1"   # never contacted
SECRETS = {
    "kafka.sasl.password": "Sasl-Pw-0a1b2c",
    "kafka.ssl.key.password": "Key-Pw-3d4e5f",
    "kafka.ssl.key.pem": "-----BEGIN PRIVATE KEY-----Pem-6a7b8c",
}
SU_SECRETS = {
    "kafka.sasl.oauthbearer.config": "principal=admin Oauth-Secret-9d0e1f",
    "kafka.ssl.keystore.password": "Keystore-Pw-2a3b4c",
}


def with_opts(opts):
    return ", ".join(f"\"{k}\" = '{v}'" for k, v in opts.items())


def relations(conn):
    return conn.execute(
        "SELECT n.nspname, c.relname FROM pg_class c JOIN pg_namespace n "
        "ON n.oid = c.relnamespace WHERE n.nspname IN ('sys', 'pg_catalog', "
        "'information_schema') ORDER BY 1, 2").fetchall()


def everything(conn):
    """The text of every row of every system relation, pg_get_viewdef of
    every relation, and EXPLAIN of the Kafka streams."""
    out = []
    rels = relations(conn)
    assert len(rels) > 20, rels
    for ns, rel in rels:
        out += [repr(r) for r in conn.execute(f'SELECT * FROM {ns}."{rel}"').fetchall()]
    out += [repr(r) for r in conn.execute(
        "SELECT pg_get_viewdef(oid) FROM pg_class").fetchall()]
    for name in ("ku", "ksu"):
        out += [repr(r) for r in conn.execute(f"EXPLAIN SELECT * FROM {name}").fetchall()]
    return "\n".join(out)


def test_secrets_masked_everywhere(sluiced):
    server = sluiced("--log-level", "debug", "--kafka-allowed-hosts", BROKER)
    with make_role(server) as u, connect(server) as su:
        u.execute("CREATE STREAM ku (v text) WITH (connector = 'kafka', topic = 't', "
                  f"bootstrap_servers = '{BROKER}', format = 'raw', "
                  "\"kafka.security.protocol\" = 'SASL_SSL', "
                  f"\"kafka.sasl.mechanism\" = 'PLAIN', {with_opts(SECRETS)})")
        u.execute(f"CREATE SINK sku WITH (connector = 'kafka', topic = 't', "
                  f"bootstrap_servers = '{BROKER}', {with_opts(SECRETS)})")
        su.execute("CREATE STREAM ksu (v text) WITH (connector = 'kafka', topic = 't', "
                   f"bootstrap_servers = '{BROKER}', format = 'raw', "
                   f"{with_opts(SECRETS)}, {with_opts(SU_SECRETS)})")
        su.execute("GRANT SELECT ON ksu TO u")
        # a refused statement does not echo them either
        e = error_of(u, "CREATE STREAM bad (v text) WITH (connector = 'kafka', topic = 't', "
                        f"bootstrap_servers = '{BROKER}', {with_opts(SECRETS)}, "
                        "\"kafka.no.such.property\" = 'x')")
        assert e.sqlstate in ("42501", "22023"), e
        assert not any(s in str(e) for s in SECRETS.values())
        for who, conn in (("u", u), ("superuser", su)):
            text = everything(conn)
            for secret in list(SECRETS.values()) + list(SU_SECRETS.values()):
                assert secret not in text, (who, secret)
        # the values are still there for the connectors, only masked
        opts = u.execute("SELECT options ->> 'kafka.sasl.password', sql FROM sys.streams "
                         "WHERE name = 'ku'").fetchone()
        assert opts[0] == "********", opts
        assert "'********'" in opts[1] and "SASL_SSL" in opts[1], opts
        opts = u.execute("SELECT options ->> 'kafka.ssl.key.password' FROM sys.sinks "
                         "WHERE name = 'sku'").fetchone()
        assert opts == ("********",), opts
    server.stop()
    log = server.log_text()
    for secret in list(SECRETS.values()) + list(SU_SECRETS.values()):
        assert secret not in log, secret


def test_every_spelling_masked_and_only_options(sluiced):
    """A secret option's value is masked however it is spelled (a negative
    number, a boolean, an identifier), and only in a WITH (...) option list:
    `token = 'abc'` in a continuous query's WHERE is data, shown as written
    in sys.queries and pg_get_viewdef."""
    server = sluiced("--kafka-allowed-hosts", BROKER)
    with make_role(server) as u:
        u.execute("CREATE STREAM kn (v text) WITH (connector = 'kafka', topic = 't', "
                  f"bootstrap_servers = '{BROKER}', format = 'raw', "
                  "\"kafka.sasl.password\" = -98765, \"kafka.ssl.key.password\" = true, "
                  "\"kafka.sasl.username\" = Name123)")
        sql, opts = u.execute("SELECT sql, options::text FROM sys.streams "
                              "WHERE name = 'kn'").fetchone()
        assert "98765" not in sql and "true" not in sql, sql
        assert sql.count("'********'") == 2 and "Name123" in sql, sql
        assert "98765" not in opts, opts
        u.execute("CREATE STREAM ev (token text, password int)")
        u.execute("CREATE CONTINUOUS QUERY q AS SELECT count(*) AS n FROM ev "
                  "WHERE token = 'abc' AND password = 42")
        sql, = u.execute("SELECT sql FROM sys.queries WHERE name = 'q'").fetchone()
        assert "token = 'abc'" in sql and "password = 42" in sql, sql
        assert "********" not in sql, sql
        view, = u.execute("SELECT pg_get_viewdef('q'::regclass)").fetchone()
        assert "token = 'abc'" in view, view
