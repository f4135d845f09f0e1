"""Session parameters: SET / SHOW / RESET, SET LOCAL, SHOW ALL, set_config()
and current_setting(), ParameterStatus on change, TimeZone in timestamptz
input and output, and PostgreSQL's errors (42704, 22023, 55P02)."""

import psycopg
import pytest

from pgwire_raw import Raw, error_fields, query


def test_set_show_reset_round_trip(server):
    with psycopg.connect(server.dsn, autocommit=True) as c:
        assert c.execute("SHOW TimeZone").fetchone() == ("UTC",)
        cur = c.execute("SHOW timezone")
        assert cur.description[0].name == "TimeZone"
        c.execute("SET TimeZone = 'europe/berlin'")
        assert c.execute("SHOW TIME ZONE").fetchone() == ("Europe/Berlin",)
        c.execute("SET statement_timeout TO '90s'")
        assert c.execute("SHOW statement_timeout").fetchone() == ("90s",)
        c.execute("SET statement_timeout = 60000")
        assert c.execute("SHOW statement_timeout").fetchone() == ("1min",)
        c.execute("SET search_path = foo, \"Bar\", public")
        assert c.execute("SHOW search_path").fetchone() == ('foo, "Bar", public',)
        c.execute("SET extra_float_digits = 0")
        assert c.execute("SELECT 0.1::float8 + 0.2::float8").fetchone()[0] == pytest.approx(0.3)
        c.execute("RESET statement_timeout")
        assert c.execute("SHOW statement_timeout").fetchone() == ("0",)
        c.execute("SET TimeZone TO DEFAULT")
        assert c.execute("SHOW TimeZone").fetchone() == ("UTC",)
        c.execute("SET application_name = 'app one'")
        c.execute("RESET ALL")
        assert c.execute("SHOW search_path").fetchone() == ('"$user", public',)
        assert c.execute("SHOW server_version").fetchone() == ("15.0",)


def test_show_all_lists_every_parameter_sorted(server):
    with psycopg.connect(server.dsn, autocommit=True) as c:
        cur = c.execute("SHOW ALL")
        assert [d.name for d in cur.description] == ["name", "setting", "description"]
        rows = cur.fetchall()
        names = [r[0] for r in rows]
        assert names == sorted(names, key=str.lower)
        for want in ("application_name", "client_encoding", "DateStyle", "IntervalStyle",
                     "TimeZone", "search_path", "extra_float_digits", "statement_timeout",
                     "idle_session_timeout", "idle_in_transaction_session_timeout",
                     "standard_conforming_strings", "server_version", "server_encoding",
                     "integer_datetimes", "is_superuser", "session_authorization"):
            assert want in names
        assert dict((r[0], r[1]) for r in rows)["session_authorization"] == "sluice"


def test_errors_carry_postgres_sqlstates_and_messages(server):
    with psycopg.connect(server.dsn, autocommit=True) as c:
        with pytest.raises(psycopg.errors.UndefinedObject) as e:
            c.execute("SET no_such_thing = 1")
        assert str(e.value).startswith('unrecognized configuration parameter "no_such_thing"')
        with pytest.raises(psycopg.errors.UndefinedObject):
            c.execute("SHOW no_such_thing")
        with pytest.raises(psycopg.errors.InvalidParameterValue) as e:
            c.execute("SET TimeZone = 'Mars/Olympus_Mons'")
        assert 'invalid value for parameter "TimeZone": "Mars/Olympus_Mons"' in str(e.value)
        with pytest.raises(psycopg.errors.InvalidParameterValue) as e:
            c.execute("SET extra_float_digits = 10")
        assert 'outside the valid range for parameter "extra_float_digits" (-15 .. 3)' in str(e.value)
        with pytest.raises(psycopg.errors.InvalidParameterValue) as e:
            c.execute("SET statement_timeout = '5 parsecs'")
        assert e.value.diag.message_hint.startswith("Valid units for this parameter are")
        with pytest.raises(psycopg.errors.InvalidParameterValue):
            c.execute("SET IntervalStyle = 'nonsense'")
        with pytest.raises(psycopg.errors.CantChangeRuntimeParam) as e:
            c.execute("SET server_version = '16'")
        assert str(e.value).startswith('parameter "server_version" cannot be changed')
        with pytest.raises(psycopg.errors.SyntaxError):
            c.execute("SET TimeZone = 'UTC', 'GMT'")
        # the session is intact after all that
        assert c.execute("SHOW TimeZone").fetchone() == ("UTC",)


def test_set_local_and_rollback(server):
    with psycopg.connect(server.dsn, autocommit=True) as c:
        c.execute("BEGIN")
        c.execute("SET LOCAL TimeZone = 'Asia/Tokyo'")
        assert c.execute("SHOW TimeZone").fetchone() == ("Asia/Tokyo",)
        c.execute("COMMIT")
        assert c.execute("SHOW TimeZone").fetchone() == ("UTC",)
        # a plain SET in a block that rolls back is undone
        c.execute("BEGIN")
        c.execute("SET TimeZone = 'Asia/Tokyo'")
        c.execute("ROLLBACK")
        assert c.execute("SHOW TimeZone").fetchone() == ("UTC",)
        # ... and kept when it commits
        c.execute("BEGIN")
        c.execute("SET TimeZone = 'Asia/Tokyo'")
        c.execute("COMMIT")
        assert c.execute("SHOW TimeZone").fetchone() == ("Asia/Tokyo",)
        # SET LOCAL outside a block: a WARNING, and no effect
        notices = []
        c.add_notice_handler(lambda d: notices.append((d.severity, d.sqlstate, d.message_primary)))
        c.execute("SET LOCAL TimeZone = 'UTC'")
        assert notices == [("WARNING", "25P01", "SET LOCAL can only be used in transaction blocks")]
        assert c.execute("SHOW TimeZone").fetchone() == ("Asia/Tokyo",)


def test_set_config_and_current_setting(server):
    with psycopg.connect(server.dsn, autocommit=True) as c:
        assert c.execute("SELECT current_setting('TimeZone')").fetchone() == ("UTC",)
        assert c.execute("SELECT set_config('TimeZone', 'America/New_York', false)").fetchone() == (
            "America/New_York",)
        assert c.execute("SHOW TimeZone").fetchone() == ("America/New_York",)
        assert c.info.parameter_status("TimeZone") == "America/New_York"
        assert c.execute("SELECT current_setting('no_such', true)").fetchone() == (None,)
        with pytest.raises(psycopg.errors.UndefinedObject):
            c.execute("SELECT current_setting('no_such')")
        with pytest.raises(psycopg.errors.CantChangeRuntimeParam):
            c.execute("SELECT set_config('server_version', '1', false)")
        c.execute("BEGIN")
        c.execute("SELECT set_config('statement_timeout', '3s', true)")
        assert c.execute("SELECT current_setting('statement_timeout')").fetchone() == ("3s",)
        c.execute("COMMIT")
        assert c.execute("SELECT current_setting('statement_timeout')").fetchone() == ("0",)


def test_timezone_changes_timestamptz_input_output_and_functions(server):
    with psycopg.connect(server.dsn, autocommit=True) as c:
        c.execute("SET TimeZone = 'Europe/Berlin'")
        row = c.execute(
            "SELECT '2024-06-01 12:00:00+00'::timestamptz::text,"
            " '2024-06-01 12:00:00'::timestamptz::text,"
            " '2024-01-15 12:00:00+00'::timestamptz::text,"
            " date_trunc('day', '2024-06-01 01:00:00+00'::timestamptz)::text,"
            " extract(hour FROM '2024-06-01 12:00:00+00'::timestamptz),"
            " '2024-06-01 23:30:00+00'::timestamptz::date::text,"
            " '2024-06-01 12:00:00+00'::timestamptz::timestamp::text,"
            " '2024-06-01 12:00:00'::timestamp::timestamptz::text").fetchone()
        assert row == ("2024-06-01 14:00:00+02", "2024-06-01 12:00:00+02",
                       "2024-01-15 13:00:00+01", "2024-06-01 00:00:00+02", 14,
                       "2024-06-02", "2024-06-01 14:00:00", "2024-06-01 12:00:00+02")
        c.execute("SET TimeZone = 'Asia/Kolkata'")
        assert c.execute("SELECT '2024-06-01 00:00:00+00'::timestamptz::text").fetchone() == (
            "2024-06-01 05:30:00+05:30",)
        c.execute("SET TimeZone = 'UTC'")
        assert c.execute("SELECT '2024-06-01 12:00:00+02'::timestamptz::text").fetchone() == (
            "2024-06-01 10:00:00+00",)


def test_parameter_status_is_sent_exactly_when_a_reported_parameter_changes(server):
    with Raw(server.port) as cl:
        start = cl.startup()
        status = dict(m[1][:-1].split(b"\0") for m in start if m[0] == b"S")
        assert status[b"TimeZone"] == b"UTC"
        assert status[b"server_version"] == b"15.0"
        assert status[b"application_name"] == b""

        def statuses(sql):
            cl.send(query(sql))
            return [tuple(m[1][:-1].split(b"\0")) for m in cl.until_ready()
                    if m[0] == b"S"]

        assert statuses("SET TimeZone = 'Asia/Tokyo'") == [(b"TimeZone", b"Asia/Tokyo")]
        assert statuses("SET TimeZone = 'Asia/Tokyo'") == []        # no change
        assert statuses("SET statement_timeout = 1000") == []       # not a reported one
        assert statuses("SET application_name = 'x'; SET application_name = 'y'") == [
            (b"application_name", b"y")]
        assert statuses("BEGIN; SET LOCAL TimeZone = 'UTC'") == [(b"TimeZone", b"UTC")]
        assert statuses("COMMIT") == [(b"TimeZone", b"Asia/Tokyo")]
        assert statuses("SELECT set_config('DateStyle', 'iso, dmy', false)") == [
            (b"DateStyle", b"ISO, DMY")]
        cl.send(query("SET DateStyle = 'nonsense'"))
        msgs = cl.until_ready()
        err = [error_fields(m[1]) for m in msgs if m[0] == b"E"][0]
        assert err["C"] == "22023"
        assert not [m for m in msgs if m[0] == b"S"]


def test_startup_options_set_parameters(server):
    conninfo = server.dsn + " options='-c TimeZone=Asia/Tokyo -c statement_timeout=5s'"
    with psycopg.connect(conninfo, autocommit=True) as c:
        assert c.info.parameter_status("TimeZone") == "Asia/Tokyo"
        assert c.execute("SHOW statement_timeout").fetchone() == ("5s",)
        # RESET goes back to the startup value, as in PostgreSQL
        c.execute("SET TimeZone = 'UTC'")
        c.execute("RESET TimeZone")
        assert c.execute("SHOW TimeZone").fetchone() == ("Asia/Tokyo",)
    with pytest.raises(psycopg.OperationalError) as e:
        psycopg.connect(server.dsn + " options='-c TimeZone=Nowhere/Special'")
    assert "invalid value for parameter" in str(e.value)
