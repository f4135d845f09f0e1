#!/usr/bin/env python3
"""Kafka throughput: Nexmark bids as JSON -> filter -> exactly-once Kafka sink.

    tools/bench/kafka_bench.py [--events N] [--partitions 8] [--batch N] [--bin PATH]
                               [--perf FILE]

Starts a real broker (tools/kafka/broker.py) and a release sluiced
(build/src/sluiced: `meson setup build --buildtype=release`), fills a topic of
8 partitions with N Nexmark-style bid records (about 200 bytes of JSON each:
auction, bidder, price, channel, url, date_time, extra), then creates

    CREATE STREAM bids (...) WITH (connector = 'kafka', format = 'json', ...)
    CREATE SINK out WITH (connector = 'kafka', topic = 'bids_out', key = 'auction')
    CREATE CONTINUOUS QUERY q INTO out WITH (trigger = '0', max_offsets_per_trigger = B)
      AS SELECT auction, bidder, price, date_time FROM bids WHERE price > 5000

and times from CREATE until the sink's progress topic names the batch whose
range ends at the topic's end (every record read, decoded, filtered and
written in committed transactions).  Reports events/s over the wall time and
per busy core (the server's user+system CPU time from /proc).  The figures go
to docs/benchmarks.md ("Kafka").  With --perf FILE, `perf record -e cpu-clock -g`
samples the server while the query runs (perf report -i FILE reads it).
"""

import argparse
import json
import os
import random
import re
import shutil
import signal
import sqlite3
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import psycopg
from confluent_kafka import Producer
from confluent_kafka.admin import AdminClient, NewTopic

REPO = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(REPO / "tools" / "kafka"))

from broker import KafkaBroker  # noqa: E402

CHANNELS = ["Google", "Facebook", "Baidu", "Apple"]


def cpu_seconds(pid):
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    ticks = os.sysconf("SC_CLK_TCK")
    return (int(fields[11]) + int(fields[12])) / ticks


def bid(i, rng):
    return json.dumps({
        "auction": 1000 + rng.randrange(1000), "bidder": 2000 + rng.randrange(10000),
        "price": rng.randrange(1, 10000), "channel": CHANNELS[i % 4],
        "url": f"https://www.nexmark.com/item/{rng.randrange(100000)}/bid",
        "date_time": f"2026-01-01 00:{(i // 60000) % 60:02d}:{(i // 1000) % 60:02d}."
                     f"{i % 1000:03d}",
        "extra": "x" * 40})


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--events", type=int, default=1_000_000)
    ap.add_argument("--partitions", type=int, default=8)
    ap.add_argument("--batch", type=int, default=200_000)
    ap.add_argument("--bin", default=str(REPO / "build" / "src" / "sluiced"))
    ap.add_argument("--perf", help="record a CPU profile of the server into this file")
    args = ap.parse_args()

    broker = KafkaBroker()
    work = Path(tempfile.mkdtemp(prefix="sluice-kafka-bench-"))
    proc = perf = None
    try:
        broker.start()
        admin = AdminClient({"bootstrap.servers": broker.bootstrap})
        for name, parts in (("bids", args.partitions), ("bids_out", args.partitions)):
            admin.create_topics([NewTopic(name, parts, 1)])[name].result(60)
        rng = random.Random(1)
        p = Producer({"bootstrap.servers": broker.bootstrap, "linger.ms": 20,
                      "batch.size": 1 << 20, "compression.type": "none"})
        t0 = time.monotonic()
        size = 0
        for i in range(args.events):
            v = bid(i, rng)
            size += len(v)
            while True:
                try:
                    p.produce("bids", v, partition=i % args.partitions)
                    break
                except BufferError:
                    p.poll(0.05)
            if i % 10000 == 0:
                p.poll(0)
        p.flush(120)
        print(f"produced {args.events} bids ({size / args.events:.0f} bytes each) in "
              f"{time.monotonic() - t0:.1f} s")

        log = open(work / "sluiced.log", "wb")
        proc = subprocess.Popen([args.bin, "--port", "0", "--data-dir", str(work / "data"),
                                 "--log-level", "info"], stdout=log, stderr=subprocess.STDOUT)
        port = None
        for _ in range(300):
            m = re.search(r"ready.*-p (\d+)", (work / "sluiced.log").read_text())
            if m:
                port = int(m.group(1))
                break
            time.sleep(0.05)
        if port is None:
            sys.exit("no ready line from sluiced")
        dsn = f"host=127.0.0.1 port={port} user=sluice dbname=sluice"
        with psycopg.connect(dsn, autocommit=True) as c:
            c.execute(f"""CREATE STREAM bids (auction BIGINT, bidder BIGINT, price BIGINT,
                channel TEXT, url TEXT, date_time TIMESTAMP, extra TEXT)
                WITH (connector = 'kafka', topic = 'bids', format = 'json',
                      bootstrap_servers = '{broker.bootstrap}')""")
            c.execute(f"""CREATE SINK out WITH (connector = 'kafka', topic = 'bids_out',
                bootstrap_servers = '{broker.bootstrap}', key = 'auction',
                "kafka.linger.ms" = '20')""")
            if args.perf:
                perf = subprocess.Popen(["perf", "record", "-q", "-e", "cpu-clock", "-F", "499",
                                         "-g", "-p", str(proc.pid), "-o", args.perf],
                                        stdout=subprocess.DEVNULL, stderr=subprocess.STDOUT)
                time.sleep(0.5)
            cpu0, t0 = cpu_seconds(proc.pid), time.monotonic()
            c.execute(f"""CREATE CONTINUOUS QUERY q INTO out
                WITH (trigger = '0', max_offsets_per_trigger = {args.batch})
                AS SELECT auction, bidder, price, date_time FROM bids WHERE price > 5000""")
            db = work / "data" / "catalog.db"
            while True:
                con = sqlite3.connect(f"file:{db}?mode=ro", uri=True, timeout=30)
                rows = con.execute("SELECT o.sources FROM cq_offsets o JOIN cq_commits c "
                                   "USING (query_oid, batch_id) ORDER BY batch_id DESC "
                                   "LIMIT 1").fetchall()
                con.close()
                done = sum(p["end"] for p in json.loads(rows[0][0])) if rows else 0
                if done >= args.events:
                    break
                if proc.poll() is not None:
                    sys.exit("sluiced exited")
                time.sleep(0.05)
            wall, cpu = time.monotonic() - t0, cpu_seconds(proc.pid) - cpu0
            if perf is not None:
                perf.send_signal(signal.SIGINT)
                perf.wait(60)
                perf = None
        print(f"events {args.events}, {args.partitions} partitions, batches of {args.batch}")
        print(f"  wall {wall:.2f} s: {args.events / wall / 1e3:.0f} k events/s")
        print(f"  server CPU {cpu:.2f} s: {args.events / cpu / 1e3:.0f} k events/s per "
              f"busy core")
    finally:
        if perf is not None:
            perf.send_signal(signal.SIGINT)
            perf.wait(60)
        if proc is not None:
            proc.send_signal(signal.SIGTERM)
            proc.wait(60)
        broker.stop()
        shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    main()
