"""The nexmark connector makes only the columns a continuous query reads
(src/runtime/incremental.c compute_need, nexmark_generate_cols): the rows
still hold the generator's values wherever the query looks -- a column
read only by WHERE, by an aggregate's FILTER, the partition key of a
per-partition watermark, and every column of the rows late_rows keeps --
checked against tools/nexmark/nexmark_gen's JSON lines.
"""

import calendar
import json
import subprocess
import time
from collections import Counter
from datetime import datetime, timedelta

import psycopg
import pytest

from test_nexmark import BASE_MS, gen_binary

EVENTS = 50_000
RATE = 200
WAIT = 600


def parse_ts(s):
    """nexmark_gen's timestamps (UTC, microseconds)."""
    return datetime.strptime(s, "%Y-%m-%d %H:%M:%S.%f")


def bid_stream(name, extra=""):
    return (f"CREATE STREAM {name} (auction bigint, bidder bigint, price bigint, channel text, "
            f"url text, date_time timestamp, extra text, "
            f"WATERMARK FOR date_time AS date_time - INTERVAL '4 seconds') "
            f"WITH (connector = 'nexmark', table = 'bid', seed = 5, "
            f"number_of_events = {EVENTS}, events_per_second = 0, "
            f"first_event_rate = {RATE}, base_time_ms = {BASE_MS}{extra})")


def gen_bids(*args):
    out = subprocess.run([gen_binary(), "--events", str(EVENTS), "--seed", "5", "--table", "bid",
                          "--first-event-rate", str(RATE), "--base-time-ms", str(BASE_MS),
                          *args], check=True, capture_output=True, text=True,
                         timeout=300).stdout
    bids = [json.loads(line) for line in out.splitlines()]
    for b in bids:
        b["date_time"] = parse_ts(b["date_time"])
    return bids


def wait_finished(c, names):
    deadline = time.monotonic() + WAIT
    while time.monotonic() < deadline:
        status = dict(c.execute("SELECT name, status FROM sys.queries").fetchall())
        if all(status.get(q) in ("finished", "failed") for q in names):
            break
        time.sleep(0.3)
    bad = c.execute("SELECT name, status, last_error FROM sys.queries "
                    "WHERE status <> 'finished'").fetchall()
    assert bad == [], bad


def window_of(t):
    s = calendar.timegm(t.utctimetuple()) // 10 * 10
    return datetime(1970, 1, 1) + timedelta(seconds=s)


def test_columns_read_only_by_where_and_filter(sluiced):
    server = sluiced()
    bids = gen_bids()
    with psycopg.connect(server.dsn, autocommit=True) as c:
        c.execute(bid_stream("bid"))
        c.execute("CREATE CONTINUOUS QUERY w WITH (trigger = 'available_now') AS "
                  "SELECT auction, price FROM bid "
                  "WHERE channel = 'Google' AND url LIKE '%/item.htm%'")
        c.execute("CREATE CONTINUOUS QUERY f WITH (trigger = 'available_now', "
                  "output_mode = 'update') AS "
                  "SELECT window_start, count(*) FILTER (WHERE extra LIKE 'a%') AS a, "
                  "sum(price) AS s FROM bid GROUP BY WINDOW(date_time, INTERVAL '10 seconds')")
        wait_finished(c, ["w", "f"])
        got_w = Counter(c.execute("SELECT auction, price FROM w").fetchall())
        got_f = {r[0]: (r[1], r[2]) for r in c.execute("SELECT window_start, a, s FROM f")}
    want_w = Counter((b["auction"], b["price"]) for b in bids
                     if b["channel"] == "Google" and "/item.htm" in b["url"])
    assert got_w == want_w and len(want_w) > 100
    want_f = {}
    for b in bids:
        a, s = want_f.get(window_of(b["date_time"]), (0, 0))
        want_f[window_of(b["date_time"])] = (a + b["extra"].startswith("a"), s + b["price"])
    assert got_f == want_f


def test_partition_key_not_selected_still_routes(sluiced):
    """Four watermark partitions by auction, a query that never reads
    auction: its windows close only if every partition's rows are seen."""
    server = sluiced()
    bids = gen_bids()
    with psycopg.connect(server.dsn, autocommit=True) as c:
        c.execute(bid_stream("bid", ", partitions = 4, partition_key = 'auction'"))
        c.execute("CREATE CONTINUOUS QUERY p WITH (trigger = 'available_now', "
                  "output_mode = 'append') AS "
                  "SELECT window_start, max(price) AS m FROM bid "
                  "GROUP BY WINDOW(date_time, INTERVAL '10 seconds')")
        wait_finished(c, ["p"])
        got = dict(c.execute("SELECT window_start, m FROM p").fetchall())
    want = {}
    for b in bids:
        w = window_of(b["date_time"])
        want[w] = max(want.get(w, 0), b["price"])
    # append mode: the windows the watermark has closed (all but the last few)
    assert len(got) >= len(want) - 2 and len(got) > 10
    assert all(want[w] == m for w, m in got.items())


def test_late_rows_keep_every_column(sluiced):
    server = sluiced()
    bids = gen_bids("--out-of-order-group-size", "20000")
    with psycopg.connect(server.dsn, autocommit=True) as c:
        c.execute(bid_stream("bid", ", out_of_order_group_size = 20000"))
        c.execute("CREATE STREAM bid_late (auction bigint, bidder bigint, price bigint, "
                  "channel text, url text, date_time timestamp, extra text)")
        c.execute("CREATE CONTINUOUS QUERY l WITH (trigger = 'available_now', "
                  "output_mode = 'append', late_rows = 'bid_late', "
                  "max_offsets_per_trigger = 2000) AS "
                  "SELECT window_start, count(*) AS n FROM bid "
                  "GROUP BY WINDOW(date_time, INTERVAL '10 seconds')")
        wait_finished(c, ["l"])
        late = c.execute("SELECT auction, bidder, price, channel, url, date_time, extra "
                         "FROM bid_late").fetchall()
    assert len(late) > 100
    keys = ("auction", "bidder", "price", "channel", "url", "date_time", "extra")
    every = Counter(tuple(b[k] for k in keys) for b in bids)
    assert all(None not in row for row in late)
    assert not (Counter(late) - every)


def gen_table(table, seed):
    out = subprocess.run([gen_binary(), "--events", str(EVENTS), "--seed", str(seed),
                          "--table", table, "--first-event-rate", str(RATE),
                          "--base-time-ms", str(BASE_MS)], check=True, capture_output=True,
                         text=True, timeout=300).stdout
    rows = [json.loads(line) for line in out.splitlines()]
    for r in rows:
        r["date_time"] = parse_ts(r["date_time"])
    return rows


def nexmark_stream(name, table, cols, seed):
    return (f"CREATE STREAM {name} ({cols}, "
            f"WATERMARK FOR date_time AS date_time - INTERVAL '4 seconds') "
            f"WITH (connector = 'nexmark', table = '{table}', seed = {seed}, "
            f"number_of_events = {EVENTS}, events_per_second = 0, "
            f"first_event_rate = {RATE}, base_time_ms = {BASE_MS})")


PERSON_COLS = ("id bigint, name text, email_address text, credit_card text, city text, "
               "state text, date_time timestamp, extra text")
AUCTION_COLS = ("id bigint, item_name text, description text, initial_bid bigint, "
                "reserve bigint, date_time timestamp, expires timestamp, seller bigint, "
                "category bigint, extra text")


def test_union_all_and_interval_join_read_their_columns(sluiced):
    """Over several inputs each stream makes the columns read above it: a
    UNION ALL filtered on a column its arms pass through, and an interval
    join whose key, time bound and WHERE read columns the result does not
    show."""
    server = sluiced()
    with psycopg.connect(server.dsn, autocommit=True) as c:
        c.execute(bid_stream("bid"))
        c.execute(bid_stream("bid9").replace("seed = 5", "seed = 9"))
        c.execute(nexmark_stream("person", "person", PERSON_COLS, 5))
        c.execute(nexmark_stream("auction", "auction", AUCTION_COLS, 5))
        c.execute("CREATE CONTINUOUS QUERY u WITH (trigger = 'available_now') AS "
                  "SELECT auction, price FROM (SELECT auction, price, channel FROM bid "
                  "UNION ALL SELECT auction, price, channel FROM bid9) x "
                  "WHERE channel = 'Apple'")
        c.execute("CREATE CONTINUOUS QUERY j WITH (trigger = 'available_now') AS "
                  "SELECT p.name, a.id FROM auction a JOIN person p ON a.seller = p.id "
                  "AND a.date_time BETWEEN p.date_time AND p.date_time + INTERVAL '10 seconds' "
                  "AND a.reserve > a.initial_bid + p.id * 1000 "
                  "WHERE p.state IN ('OR', 'ID', 'CA') AND a.category = 10")
        wait_finished(c, ["u", "j"])
        got_u = Counter(c.execute("SELECT auction, price FROM u").fetchall())
        got_j = Counter(c.execute("SELECT name, id FROM j").fetchall())
    bids = gen_bids() + gen_table("bid", 9)
    want_u = Counter((b["auction"], b["price"]) for b in bids if b["channel"] == "Apple")
    assert got_u == want_u and len(want_u) > 100
    persons = {p["id"]: p for p in gen_table("person", 5)}
    want_j = Counter()
    for a in gen_table("auction", 5):
        p = persons.get(a["seller"])
        if (p is not None and p["state"] in ("OR", "ID", "CA") and a["category"] == 10 and
                a["reserve"] > a["initial_bid"] + p["id"] * 1000 and
                p["date_time"] <= a["date_time"] <= p["date_time"] + timedelta(seconds=10)):
            want_j[(p["name"], a["id"])] += 1
    assert got_j == want_j and len(want_j) > 10
