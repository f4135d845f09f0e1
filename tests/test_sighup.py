"""SIGHUP reloads the config file's users and hba rules (issue 23, item 6).

A running server gets a new rule set and new passwords without a restart:
connections after the signal follow them, open sessions stay; a config file
with a bad rule or a bad SCRAM verifier keeps the old ones and logs why; a
change to any other setting is logged as needing a restart; --hba on the
command line keeps its rules across a reload (docs/operations.md, "Reload").
"""

import os
import signal

import psycopg
import pytest

from helpers import wait_for
from pgwire_raw import scram_verifier

OLD = "first pass"
NEW = "second pass"


def config(users, rules, extra=""):
    lines = [f"user.{u}.password = '{secret}'" for u, secret in users.items()]
    lines += [f"hba = '{rule}'" for rule in rules]
    return "\n".join(lines) + "\n" + extra


# The refusals, by the FATAL's text (psycopg gives no SQLSTATE for a failed
# connect): a reject rule and no rule (28000), a wrong password (28P01).
REFUSALS = {"pg_hba.conf rejects connection": "reject",
            "no pg_hba.conf entry": "no rule",
            "password authentication failed": "password"}


def login(server, user, password=None):
    """None when user gets in, else which refusal (REFUSALS) it got."""
    try:
        conn = psycopg.connect(host=server.host, port=server.port, user=user, dbname="sluice",
                               password=password, connect_timeout=10, autocommit=True)
    except psycopg.OperationalError as e:
        for text, kind in REFUSALS.items():
            if text in str(e):
                return kind
        raise
    with conn:
        assert conn.execute("SELECT 1").fetchone() == (1,)
    return None


def log_count(server, text):
    return server.log_path.read_text(errors="replace").count(text)


def reload(server, text):
    """Writes the config file, sends SIGHUP, waits for the log line that
    says how it went, one more than before; returns that line's kind."""
    ok, bad = log_count(server, "configuration reloaded"), log_count(server, "not reloaded")
    server.config_path.write_text(text)
    os.kill(server.proc.pid, signal.SIGHUP)
    got = wait_for(lambda: (log_count(server, "configuration reloaded") - ok,
                            log_count(server, "not reloaded") - bad),
                   (1, 0), timeout=20)
    if got == (1, 0):
        return "reloaded"
    assert got == (0, 1), got
    return "refused"


@pytest.fixture
def hup_server(sluiced):
    return sluiced(config=config({"alice": OLD}, [
        "host all alice 127.0.0.1/32 scram-sha-256",
        "host all sluice 127.0.0.1/32 trust",
        "host all bob 127.0.0.1/32 reject",
    ]))


def test_new_rules_and_passwords_apply_to_new_connections(hup_server):
    s = hup_server
    assert login(s, "alice", OLD) is None
    assert login(s, "bob") == "reject"
    # A session open across the reload keeps working.
    kept = psycopg.connect(host=s.host, port=s.port, user="alice", dbname="sluice",
                           password=OLD, autocommit=True)
    try:
        assert reload(s, config({"alice": scram_verifier(NEW)}, [
            "host all alice 127.0.0.1/32 scram-sha-256",
            "host all sluice 127.0.0.1/32 trust",
            "host all bob 127.0.0.1/32 trust",
        ])) == "reloaded"
        assert login(s, "alice", OLD) == "password"
        assert login(s, "alice", NEW) is None
        assert login(s, "bob") is None
        assert kept.execute("SELECT 2").fetchone() == (2,)
    finally:
        kept.close()
    # Rules removed: no rule matches carol now, and bob is rejected again.
    assert reload(s, config({}, ["host all sluice 127.0.0.1/32 trust",
                                 "host all bob 127.0.0.1/32 reject"])) == "reloaded"
    assert login(s, "bob") == "reject"
    assert login(s, "alice", NEW) == "no rule"


@pytest.mark.parametrize("bad", [
    "host all alice 127.0.0.1/33 trust",          # a bad prefix
    "host all alice 127.0.0.1/32 kerberos",       # an unknown method
    "hostx all alice 127.0.0.1/32 trust",         # an unknown type
])
def test_a_bad_rule_keeps_the_old_ones(hup_server, bad):
    s = hup_server
    assert reload(s, config({"alice": NEW}, ["host all sluice 127.0.0.1/32 trust",
                                             "host all bob 127.0.0.1/32 trust", bad])) == "refused"
    assert "invalid hba rule" in s.log_path.read_text()
    assert login(s, "bob") == "reject"           # the old reject rule still holds
    assert login(s, "alice", OLD) is None       # and the old password


def test_a_bad_verifier_keeps_the_old_ones(hup_server):
    s = hup_server
    assert reload(s, config({"alice": "SCRAM-SHA-256$4096:zz$bad:worse"},
                            ["host all alice 127.0.0.1/32 trust"])) == "refused"
    assert "invalid SCRAM verifier" in s.log_path.read_text()
    assert login(s, "alice", OLD) is None
    assert login(s, "bob") == "reject"


def test_a_file_that_does_not_parse_keeps_the_old_ones(hup_server):
    s = hup_server
    assert reload(s, "this line has no equals sign\n") == "refused"
    assert login(s, "alice", OLD) is None


def test_other_settings_are_logged_as_needing_a_restart(sluiced):
    users, rules = {"alice": OLD}, ["host all all 127.0.0.1/32 trust"]
    s = sluiced(config=config(users, rules, "max_connections = 50\nshutdown_timeout = 5\n"))
    assert reload(s, config(users, rules, "max_connections = 60\nshutdown_timeout = 5\n"
                                          "authentication_timeout = 9\n")) == "reloaded"
    log = s.log_path.read_text()
    assert "needs a restart parameter=max_connections" in log.replace('"', "")
    assert "parameter=authentication_timeout" in log
    assert "parameter=shutdown_timeout" not in log
    with psycopg.connect(host=s.host, port=s.port, user="sluice", dbname="sluice",
                         autocommit=True) as conn:
        assert conn.execute("SELECT setting FROM pg_settings "
                            "WHERE name = 'max_connections'").fetchone() == ("50",)


def test_command_line_rules_stay(sluiced):
    s = sluiced("--hba", "host all all 127.0.0.1/32 trust",
                config=config({}, ["host all all 127.0.0.1/32 reject"]))
    assert login(s, "sluice") is None
    assert reload(s, config({}, ["host all all 127.0.0.1/32 reject",
                                 "host all sluice 127.0.0.1/32 reject"])) == "reloaded"
    assert "hba_from=command-line" in s.log_path.read_text()
    assert login(s, "sluice") is None


def test_without_a_config_file_sighup_changes_nothing(sluiced):
    s = sluiced()
    os.kill(s.proc.pid, signal.SIGHUP)
    assert wait_for(lambda: log_count(s, "SIGHUP: nothing to reload"), 1, timeout=20) == 1
    assert login(s, "sluice") is None
