"""tests/kafka/test_kafka_columns.py - a Kafka JSON stream decodes only the columns a
continuous query reads (source_reader_need -> kafka_reader_need -> FmtSpec.need),
against a real broker (one per module, tools/kafka/broker.py).

Covers: a query reading a subset of a stream's columns (value and metadata) gives
the same values as a query reading all of them over the same records (a second
stream over the same topic) and as the records themselves; an aggregate that reads
one column; records malformed only in columns the query does not read (a wrong
type, a bad escape, bad JSON, \\u0000, a bad token) are still dead letters, with
the same reasons as when every column is read; and a query with late_rows still
routes whole rows (unread columns included) to its late stream.
"""

import json
from datetime import datetime, timedelta

import psycopg

from kafka_helpers import Admin, broker_fixture, produce, wait_for

kafka = broker_fixture()

T0 = datetime(2026, 1, 1)

COLS = ("id BIGINT, price BIGINT, channel TEXT, url TEXT, note TEXT, ts TIMESTAMP, "
        "_key TEXT, _partition INT, _offset BIGINT, _headers JSONB")


def connect(server):
    return psycopg.connect(server.dsn, autocommit=True)


def make_stream(c, name, bootstrap, topic, cols=COLS, extra=""):
    c.execute(f"CREATE STREAM {name} ({cols}) WITH (connector = 'kafka', topic = '{topic}', "
              f"format = 'json', bootstrap_servers = '{bootstrap}'{extra})")


def good_record(i):
    """A record with every column, in varied JSON: escapes, nested values in a
    text column, nulls, missing and extra fields.  Returns (value, expected row
    without the metadata)."""
    ts = T0 + timedelta(seconds=i, milliseconds=i * 7)
    v = {"id": i, "price": 100 * i + 1, "channel": ["Google", "Baidu", "Apple"][i % 3],
         "url": f"https://x.test/item/{i}?q=\"a\\b\"\t\u00e9", "ts": ts.isoformat(sep=" "),
         "extra": {"ignored": [i, {"deep": None}]}}
    note = f"note {i}"
    if i % 5 == 0:
        v["note"] = {"nested": [1, "two", None], "n": i}     # an object into TEXT
        note = json.dumps(v["note"])
    elif i % 5 == 1:
        v["note"] = None
        note = None
    elif i % 5 == 2:
        note = None                                            # missing
    else:
        v["note"] = note
    if i % 7 == 3:
        v["price"] = None
    row = (i, v["price"], v["channel"], v["url"], note, ts)
    return json.dumps(v, ensure_ascii=(i % 2 == 0)), row


# Records malformed only in columns a query reading id, ts and channel does not
# read: each must still be a dead letter.
POISON = [
    b'{"id": 900, "ts": "2026-01-01 00:00:01", "channel": "c", "price": "cheap"}',
    b'{"id": 901, "ts": "2026-01-01 00:00:01", "channel": "c", "url": "bad \\q escape"}',
    b'{"id": 902, "ts": "2026-01-01 00:00:01", "channel": "c", "note": {"a": [1, 2}}',
    b'{"id": 903, "ts": "2026-01-01 00:00:01", "channel": "c", "note": "nul \\u0000"}',
    b'{"id": 904, "ts": "2026-01-01 00:00:01", "channel": "c", "url": tru}',
]


def test_subset_equals_all_columns_and_dead_letters_unchanged(kafka, sluiced):
    admin = Admin(kafka.bootstrap)
    admin.create_topic("colsel", 2)
    recs, rows = [], {}
    for i in range(60):
        value, row = good_record(i)
        recs.append((i % 2, f"k{i}", value, [("h", f"v{i}".encode())]))
        rows[i] = row
    for j, p in enumerate(POISON):
        recs.insert(7 + 9 * j, (j % 2, None, p))
    offsets = produce(kafka.bootstrap, "colsel", recs)
    meta = {}       # id -> (key, partition, offset)
    for rec, off in zip(recs, offsets):
        try:
            i = json.loads(rec[2])["id"]
        except ValueError:
            continue
        meta[i] = (rec[1], rec[0], off)
    server = sluiced()
    with connect(server) as c:
        make_stream(c, "sub", kafka.bootstrap, "colsel")
        make_stream(c, "whole", kafka.bootstrap, "colsel")
        # Only the subset query over `sub` first, so its dead letters are its own.
        c.execute("CREATE CONTINUOUS QUERY qsub WITH (trigger = '100 ms') AS "
                  "SELECT id, ts, channel, _partition AS p FROM sub WHERE id % 4 <> 1")
        c.execute("CREATE CONTINUOUS QUERY qcount WITH (trigger = '100 ms') AS "
                  "SELECT count(*) AS n, sum(id) AS s, max(id) AS m FROM sub")
        want_sub = sorted((i, r[5], r[2], meta[i][1]) for i, r in rows.items() if i % 4 != 1)
        got = wait_for(lambda: sorted(c.execute("SELECT * FROM qsub").fetchall()), want_sub)
        assert got == want_sub
        want_count = [(60, sum(range(60)), 59)]
        assert wait_for(lambda: c.execute("SELECT * FROM qcount").fetchall(),
                        want_count) == want_count
        dead_sql = "SELECT raw, source, byte_offset, reason FROM {} ORDER BY 2, 3"
        want_raw = sorted(POISON)
        got = wait_for(lambda: sorted(bytes(r[0]) for r in c.execute(
            dead_sql.format("sub_dead_letters")).fetchall()), want_raw)
        assert got == want_raw
        dead_sub = [(bytes(r[0]), r[1], r[2], r[3])
                    for r in c.execute(dead_sql.format("sub_dead_letters")).fetchall()]
        reasons = [dict((d[0], d[3]) for d in dead_sub)[p] for p in POISON]
        assert 'field "price"' in reasons[0] and "bigint" in reasons[0], reasons
        assert "escape" in reasons[1] and "JSON" in reasons[2], reasons
        assert "u0000" in reasons[3] and "JSON" in reasons[4], reasons

        # Every column read, over the same records.
        c.execute("CREATE CONTINUOUS QUERY qall WITH (trigger = '100 ms') AS "
                  "SELECT id, price, channel, url, note, ts, _key AS k, _partition AS p, "
                  "_offset AS o, _headers ->> 'h' AS h FROM whole")
        want_all = sorted(r + meta[i] + (f"v{i}",) for i, r in rows.items())
        got = wait_for(lambda: sorted(c.execute("SELECT * FROM qall").fetchall()), want_all)
        assert got == want_all
        # The values the subset read are those of the query reading everything.
        assert sorted((r[0], r[5], r[2], r[7]) for r in got if r[0] % 4 != 1) == \
            sorted(c.execute("SELECT * FROM qsub").fetchall())
        # The same records are dead letters for the same reasons.
        dead_whole = wait_for(lambda: [(bytes(r[0]), r[1], r[2], r[3]) for r in c.execute(
            dead_sql.format("whole_dead_letters")).fetchall()], dead_sub)
        assert dead_whole == dead_sub


def test_late_rows_keep_unread_columns(kafka, sluiced):
    """A windowed count reads only ts; with late_rows the reader decodes every
    column, so the late stream gets whole rows."""
    admin = Admin(kafka.bootstrap)
    admin.create_topic("colsel_late", 1)

    def rec(i, sec):
        return (0, None, json.dumps({"id": i, "ts": (T0 + timedelta(seconds=sec))
                                     .isoformat(sep=" "), "url": f"u\\{i}", "price": i * 10}))
    server = sluiced()
    with connect(server) as c:
        make_stream(c, "lt", kafka.bootstrap, "colsel_late",
                    cols="id BIGINT, ts TIMESTAMP, url TEXT, price BIGINT, "
                         "WATERMARK FOR ts AS ts - INTERVAL '1 second'")
        c.execute("CREATE STREAM lt_late (id BIGINT, ts TIMESTAMP, url TEXT, price BIGINT)")
        c.execute("CREATE CONTINUOUS QUERY lw WITH (trigger = '100 ms', output_mode = 'append', "
                  "late_rows = 'lt_late') AS SELECT window_start, count(*) AS n FROM lt "
                  "GROUP BY WINDOW(ts, INTERVAL '10 seconds')")
        produce(kafka.bootstrap, "colsel_late", [rec(i, 2 * i) for i in range(12)])
        want = [(T0, 5), (T0 + timedelta(seconds=10), 5)]
        assert wait_for(lambda: c.execute("SELECT * FROM lw ORDER BY 1").fetchall(),
                        want) == want
        produce(kafka.bootstrap, "colsel_late", [rec(100, 3), rec(101, 25)])
        want_late = [(100, T0 + timedelta(seconds=3), "u\\100", 1000)]
        assert wait_for(lambda: c.execute("SELECT * FROM lt_late").fetchall(),
                        want_late) == want_late
