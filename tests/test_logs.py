"""Structured logs (issue 9): one line per event, key=value by default or
JSON with --log-format=json.  A server runs a continuous query (its name
with a space and quotes), a failing one (its error quotes the bad value)
and a SUBSCRIBE, at --log-level=debug; then every line it wrote is parsed,
in both formats, and the events are checked for their keys and values."""
import json
import re
import time
from datetime import datetime

import psycopg
import pytest

QUERY = 'say "hi" there'
LEVELS = {"debug", "info", "warn", "error"}
# key=value: msg first, then pairs whose values are bare or quoted with
# backslash escapes
TEXT_LINE = re.compile(r'ts=(\S+) level=(\w+) msg="((?:[^"\\]|\\.)*)"'
                       r'((?: [A-Za-z_][\w.]*=(?:"(?:[^"\\]|\\.)*"|[^\s"]*))*)')
TEXT_PAIR = re.compile(r' ([A-Za-z_][\w.]*)=(?:"((?:[^"\\]|\\.)*)"|([^\s"]*))')
ESCAPES = {"n": "\n", "r": "\r", "t": "\t"}


def unescape(s):
    def one(m):
        c = m.group(1)
        if c.startswith("u"):
            return chr(int(c[1:], 16))
        return ESCAPES.get(c, c)
    return re.sub(r"\\(u[0-9a-fA-F]{4}|.)", one, s)


def parse_text(line):
    m = TEXT_LINE.fullmatch(line)
    assert m, f"not a key=value line: {line!r}"
    event = {"ts": m.group(1), "level": m.group(2), "msg": unescape(m.group(3))}
    for k, quoted, bare in TEXT_PAIR.findall(m.group(4)):
        assert k not in event, f"key {k} twice: {line!r}"
        event[k] = unescape(quoted) if quoted or not bare else bare
    return event


def parse_json(line):
    event = json.loads(line)
    assert isinstance(event, dict), line
    assert all(isinstance(v, str) for v in event.values()), line
    return event


def run_workload(server):
    with psycopg.connect(server.dsn, autocommit=True, connect_timeout=10) as c:
        c.execute("CREATE STREAM ev (k text, ts timestamp, "
                  "WATERMARK FOR ts AS ts - INTERVAL '1 second')")
        c.execute(f'CREATE CONTINUOUS QUERY "{QUERY.replace(chr(34), chr(34) * 2)}" '
                  "WITH (trigger = '0', output_mode = 'update') AS "
                  "SELECT k, count(*) AS n FROM ev GROUP BY k")
        c.execute("CREATE CONTINUOUS QUERY casts WITH (trigger = '0') AS "
                  "SELECT k::int AS i FROM ev")
        c.execute("INSERT INTO ev VALUES ('1', '2026-01-01 00:00:00'), "
                  "('abc', '2026-01-01 00:00:01')")
        deadline = time.monotonic() + 60
        while c.execute("SELECT count(*) FROM sys.queries WHERE "
                        "(name = %s AND input_rows = 2) OR (name = 'casts' AND status = 'failed')",
                        (QUERY,)).fetchone()[0] < 2:
            assert time.monotonic() < deadline, "the batches did not run"
            time.sleep(0.1)
    server.stop()
    lines = [line for line in server.log_text().splitlines()
             if line and not line.startswith("### started:")]
    assert len(lines) >= 8, lines
    return lines


def check_events(events):
    for e in events:
        assert e["level"] in LEVELS, e
        assert e["msg"], e
        datetime.strptime(e["ts"], "%Y-%m-%dT%H:%M:%S.%fZ")
    by_msg = {}
    for e in events:
        by_msg.setdefault(e["msg"], []).append(e)
    for msg in ("sluiced ready", "session started", "continuous query created",
                "batch committed", "continuous query failed", "shutting down",
                "sluiced stopped"):
        assert msg in by_msg, f"no {msg!r} event in {sorted(by_msg)}"
    created = {e["query"]: e for e in by_msg["continuous query created"]}
    assert set(created) == {QUERY, "casts"}, created
    assert int(created[QUERY]["oid"]) > 0
    batch = next(e for e in by_msg["batch committed"] if e["query"] == QUERY)
    assert batch["level"] == "debug"
    assert int(batch["input_rows"]) == 2 and int(batch["state_rows"]) == 2, batch
    # the first batch (ids from 0) read both rows: two groups, two rows out
    # in update mode, none late (the watermark starts unknown)
    assert int(batch["batch"]) == 0, batch
    assert int(batch["output_rows"]) == 2 and int(batch["late_rows"]) == 0, batch
    # the parts are spans within the batch's total
    parts = [int(batch[k]) for k in ("plan_us", "read_us", "execute_us", "write_us",
                                     "commit_us")]
    assert all(p >= 0 for p in parts) and 0 < sum(parts) <= int(batch["total_us"]), batch
    failed = by_msg["continuous query failed"][0]
    assert failed["level"] == "error" and failed["query"] == "casts"
    assert failed["sqlstate"] == "22P02"
    assert failed["error"] == 'invalid input syntax for type integer: "abc"', failed
    session = by_msg["session started"][0]
    assert session["user"] == "sluice" and session["database"] == "sluice"


@pytest.mark.parametrize("fmt", ["json", "text"])
def test_every_log_line_parses(sluiced, fmt):
    server = sluiced("--log-format", fmt, "--log-level", "debug")
    lines = run_workload(server)
    parse = parse_json if fmt == "json" else parse_text
    events = [parse(line) for line in lines]
    if fmt == "json":
        # the key order of the text form: ts, level, msg first
        assert all(list(e)[:3] == ["ts", "level", "msg"] for e in events)
    else:
        assert not any(line.lstrip().startswith("{") for line in lines)
        # names bare when they can be (logfmt), quoted and escaped otherwise
        assert any('msg="continuous query created" query=casts ' in ln for ln in lines)
        assert any('msg="continuous query created" query="say \\"hi\\" there" ' in ln
                   for ln in lines)
    check_events(events)
