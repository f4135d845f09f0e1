#!/usr/bin/env python3
"""Nexmark: throughput, latency, peak RSS and state size of each query.

    tools/bench/nexmark_bench.py [--events N] [--batch N] [--queries q0,q1,...]
                                 [--bin PATH] [--source nexmark|kafka]
                                 [--latency] [--latency-rate R] [--latency-seconds S]
                                 [--triggers '0,1 second'] [--no-throughput]

Every query file of tools/nexmark/queries (q*.sql) whose CREATE is not
commented out is run, each against a fresh release sluiced
(build-rel/src/sluiced: `meson setup build-rel --buildtype=release`) on a
free loopback port with its own data directory.

Throughput: the streams of streams.sql with number_of_events = N and
events_per_second = 0 (all events available at once), the query with
trigger 'available_now' in batches of --batch rows (a pipeline's later
stages, trigger '0', too, unless --unbounded-later-stages), timed from
CREATE CONTINUOUS QUERY until every stage is done.  Per query:

  - events/s: N over the wall time (Nexmark's convention: the generator's
    events, persons and auctions included, whichever streams the query
    reads), and per busy core: over the server's user+system CPU time
    (/proc/<pid>/stat) instead;
  - peak RSS of the server (VmHWM in /proc/<pid>/status);
  - state: the rows of the query's operator state (sys.state) and the size
    of the data directory's RocksDB (state, result table, WAL) at the end.

--source kafka: the same events as JSON lines (tools/nexmark/nexmark_gen)
in one Kafka topic per table on a real broker (tools/kafka/broker.py),
produced before the server starts; the streams read them with the kafka
connector (format 'json'), everything else as above.

Latency (--latency): from an event's creation to the moment a client sees
its effect.  The generator runs paced, events_per_second = first_event_rate
= R (default 10,000/s, Nexmark's default rate), so event n of the stream is
created -- becomes readable -- at the stream's creation time + n/R, which is
also its event time (to the millisecond).  The query runs with the given
trigger ('0': back to back; '1 second') and min_batches_to_retain high
enough to keep every batch's offsets.  A client SUBSCRIBEs to the query and
notes, for each batch id, when the first row of that batch reaches it.
After 3 + S seconds (events created in the first 3 and the last 2 are left
out: warm-up, and batches still in flight at the end), the offset log
(catalog.db's cq_offsets, read-only) gives each batch's range of rows; each
row k of the range has its creation time from its event number, and its
latency is the batch's arrival time at the subscriber minus that time.
p50 and p99 are over every event of the batches seen (a batch that sends
the subscriber nothing -- no output -- is not counted; the report gives
the share of events counted).  The client and server share the clock.

A pipeline (q4, q5, q7) has no batches that map to event numbers; q7's
result rows are bids, final once their 10 s window has closed: for q7 a
row's latency is its arrival minus the time it became final: the end of its bid's window plus the bid
stream's watermark delay (PIPELINE_FINAL), over the rows final in the
measured span.

The figures go to docs/benchmarks.md ("Nexmark").
"""

import argparse
import json
import re
import sqlite3
import subprocess
import sys
import threading
import time
from datetime import timezone
from pathlib import Path

import psycopg

from benchsrv import Server, cpu_seconds, nexmark_query_sql

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "tools" / "nexmark"))
from nexmark_queries import queries_of, wait_done  # noqa: E402

REPO = Path(__file__).resolve().parents[2]
QUERIES = REPO / "tools" / "nexmark" / "queries"
TABLES = ("person", "auction", "bid")
DENOM = 50
KIND_RANGE = {"person": (0, 1), "auction": (1, 4), "bid": (4, 50)}


def runnable_queries():
    """The q*.sql files with a CREATE that is not commented out, by number."""
    out = []
    for f in QUERIES.glob("q*.sql"):
        if re.search(r"^\s*CREATE\s+CONTINUOUS\s+QUERY", f.read_text(), re.M | re.I):
            out.append(f.stem)
    return sorted(out, key=lambda q: int(q[1:]))


def kind_count(table, n):
    lo, hi = KIND_RANGE[table]
    return n // DENOM * (hi - lo) + min(max(n % DENOM - lo, 0), hi - lo)


def kind_event(table, k):
    lo, hi = KIND_RANGE[table]
    return k // (hi - lo) * DENOM + lo + k % (hi - lo)


def tables_read(sql):
    return [t for t in TABLES if re.search(rf"\b(FROM|JOIN)\s+{t}\b", sql, re.I)]


def peak_rss_mib(pid):
    m = re.search(r"VmHWM:\s+(\d+) kB", Path(f"/proc/{pid}/status").read_text())
    return int(m.group(1)) / 1024 if m else float("nan")


def dir_mib(path):
    return sum(f.stat().st_size for f in Path(path).rglob("*") if f.is_file()) / 2**20


def streams_sql(**opts):
    """streams.sql with its WITH options changed: number_of_events,
    events_per_second and extra options (first_event_rate=...)."""
    sql = (QUERIES / "streams.sql").read_text()
    new = ", ".join(f"{k} = {v}" for k, v in opts.items())
    return sql.replace("number_of_events = 10000000, events_per_second = 0", new)


# ---------------------------------------------------------------- Kafka source

class KafkaSource:
    """A broker holding the events of N as JSON, one topic per table."""

    def __init__(self, events):
        sys.path.insert(0, str(REPO / "tools" / "kafka"))
        from broker import KafkaBroker
        from confluent_kafka import Producer
        from confluent_kafka.admin import AdminClient, NewTopic
        self.broker = KafkaBroker()
        self.broker.start()
        admin = AdminClient({"bootstrap.servers": self.broker.bootstrap})
        for table in TABLES:    # one partition each: the events in order
            admin.create_topics([NewTopic(table, 1, 1)])[table].result(60)
        gen = REPO / "build-rel" / "tools" / "nexmark" / "nexmark_gen"
        p = Producer({"bootstrap.servers": self.broker.bootstrap, "linger.ms": 20,
                      "batch.size": 1 << 20})
        for table in TABLES:
            out = subprocess.Popen([str(gen), "--events", str(events), "--seed", "1",
                                    "--table", table], stdout=subprocess.PIPE)
            for line in out.stdout:
                while True:
                    try:
                        p.produce(table, line.rstrip(b"\n"))
                        break
                    except BufferError:
                        p.poll(0.05)
            out.wait()
        p.flush(300)

    def streams(self):
        sql = (QUERIES / "streams.sql").read_text()
        return re.sub(r"connector = 'nexmark', table = '(\w+)',[^)]*\)",
                      lambda m: f"connector = 'kafka', topic = '{m.group(1)}', format = 'json', "
                                f"bootstrap_servers = '{self.broker.bootstrap}')", sql)

    def stop(self):
        self.broker.stop()


# ------------------------------------------------------------------ throughput

def run_throughput(binary, query, events, batch, kafka, stage_batch=True):
    """One query file, a single query or a pipeline of them (q4, q5, q7:
    the first stage reads the Nexmark streams with trigger available_now,
    the later ones read its output with trigger '0'): timed from the CREATE
    until every stage is done (nexmark_queries.wait_done)."""
    sql = nexmark_query_sql(query, f"trigger = 'available_now', max_offsets_per_trigger = {batch}")
    if stage_batch:
        # The later stages of a pipeline (trigger '0') in batches of the same
        # size: a stage reading its input's whole backlog at once holds it
        # all in one batch (the peak RSS of a join's first batch).
        sql = sql.replace("trigger = '0'", f"trigger = '0', max_offsets_per_trigger = {batch}")
    stages = queries_of(sql)
    with Server(binary) as srv, psycopg.connect(srv.dsn, autocommit=True) as c:
        c.execute(kafka.streams() if kafka else
                  streams_sql(number_of_events=events, events_per_second=0))
        cpu0, t0 = cpu_seconds(srv.proc.pid), time.monotonic()
        c.execute(sql)
        try:
            wait_done(c, stages, timeout=7200, poll=0.2)
        except AssertionError as e:
            sys.exit(f"{query}: {e}")
        wall, cpu = time.monotonic() - t0, cpu_seconds(srv.proc.pid) - cpu0
        # The first stage reads the Nexmark streams, every row of them.
        first = stages[0][0]
        rows = sum(kind_count(t, events) for t in tables_read(sql))
        read = c.execute("SELECT input_rows FROM sys.queries WHERE name = %s",
                         (first,)).fetchone()[0]
        if read is not None and read != rows:
            sys.exit(f"{query}: {first} read {read} rows of {rows}")
        st = c.execute("SELECT sum(state_rows) FROM sys.state WHERE query = ANY(%s)",
                       ([n for n, _ in stages],)).fetchone()[0]
        return wall, cpu, rows, peak_rss_mib(srv.proc.pid), st or 0, \
            dir_mib(srv.work / "data" / "state")


# --------------------------------------------------------------------- latency

def subscribe(dsn, query, arrivals, ready, stop):
    """Notes the arrival time of each batch's first row (SUBSCRIBE)."""
    with psycopg.connect(dsn, autocommit=True) as conn:
        ready.append(conn)
        try:
            for row in conn.cursor().stream(f"SUBSCRIBE {query}"):
                arrivals.setdefault(row[0], time.time())
                if stop.is_set():
                    break
        except psycopg.errors.QueryCanceled:
            pass


# Pipelines whose result rows carry the time they became final: the last
# stage's rows of q7 are bids, each emitted once its 10 s window's maximum
# has arrived, which needs the window closed: q7_max's watermark (the bid
# stream's: max date_time less its delay, 4 s in streams.sql) reaching the
# window's end, i.e. the creation of the first bid at or after the window's
# end plus that delay.  So a row's latency is its arrival at the subscriber
# minus (the end of its bid's window -- date_time rounded up to 10 s -- plus
# the delay): from the creation (paced: = event time) of the event that
# made it final.
PIPELINE_FINAL = {"q7": ("date_time", 10.0, "bid")}


def watermark_delay(table):
    """The delay in seconds of table's WATERMARK in streams.sql."""
    sql = (QUERIES / "streams.sql").read_text()
    m = re.search(rf"CREATE STREAM {table} \(.*?WATERMARK FOR \w+ AS \w+ - "
                  rf"INTERVAL '(\d+) seconds?'", sql, re.S)
    return float(m.group(1))


def subscribe_rows(dsn, query, col, got, ready, stop):
    """Notes each row's arrival time and the value of column col (SUBSCRIBE)."""
    with psycopg.connect(dsn, autocommit=True) as conn:
        ready.append(conn)
        try:
            cur = conn.cursor()
            idx = None
            for row in cur.stream(f"SUBSCRIBE {query}"):
                if idx is None:
                    idx = [d.name for d in cur.description].index(col)
                got.append((time.time(), row[idx]))
                if stop.is_set():
                    break
        except psycopg.errors.QueryCanceled:
            pass


def run_pipeline_latency(binary, query, rate, seconds, trigger):
    """A pipeline's latency (PIPELINE_FINAL): per result row, its arrival
    minus the time it became final, over the rows final between 3 s after
    the start and 2 s before the end."""
    col, window, table = PIPELINE_FINAL[query]
    delay = watermark_delay(table)
    sql = nexmark_query_sql(query, f"trigger = '{trigger}', min_batches_to_retain = 100000000")
    warmup = 3.0
    with Server(binary) as srv, psycopg.connect(srv.dsn, autocommit=True) as c:
        c.execute(streams_sql(events_per_second=rate, first_event_rate=rate))
        c.execute(sql)
        got, ready, stop = [], [], threading.Event()
        t = threading.Thread(target=subscribe_rows,
                             args=(srv.dsn, query, col, got, ready, stop), daemon=True)
        t.start()
        t_sub = time.time()
        time.sleep(warmup + seconds)
        t_stop = time.time()
        stop.set()
        if ready:
            ready[0].cancel()
        t.join(30)
        bad = c.execute("SELECT name, status, last_error FROM sys.queries "
                        "WHERE status <> 'running'").fetchall()
        if bad:
            sys.exit(f"{query}: {bad}")
        rss = peak_rss_mib(srv.proc.pid)
    lat = []
    for arrived, dt in got:
        t_event = dt.replace(tzinfo=timezone.utc).timestamp()
        final = -(-t_event // window) * window + delay
        if t_sub + warmup <= final <= t_stop - 2.0:
            lat.append(arrived - final)
    lat.sort()
    if not lat:
        return None
    return (percentile(lat, 50) * 1e3, percentile(lat, 99) * 1e3, lat[-1] * 1e3, len(lat),
            rss)


def percentile(sorted_vals, p):
    return sorted_vals[min(len(sorted_vals) - 1, int(p / 100 * len(sorted_vals)))]


def run_latency(binary, query, rate, seconds, trigger):
    sql = nexmark_query_sql(query, f"trigger = '{trigger}', min_batches_to_retain = 100000000")
    warmup = 3.0
    with Server(binary) as srv, psycopg.connect(srv.dsn, autocommit=True) as c:
        c.execute(streams_sql(events_per_second=rate, first_event_rate=rate))
        c.execute(sql)
        arrivals, ready, stop = {}, [], threading.Event()
        t = threading.Thread(target=subscribe, args=(srv.dsn, query, arrivals, ready, stop),
                             daemon=True)
        t.start()
        t_sub = time.time()
        time.sleep(warmup + seconds)
        t_stop = time.time()
        stop.set()
        if ready:
            ready[0].cancel()
        t.join(30)
        status = c.execute("SELECT status, last_error FROM sys.queries WHERE name = %s",
                           (query,)).fetchone()
        if status[0] != "running":
            sys.exit(f"{query}: {status[0]}: {status[1]}")
        cat = sqlite3.connect(f"file:{srv.work / 'data' / 'catalog.db'}?mode=ro", uri=True,
                              timeout=30)
        created = dict(cat.execute("SELECT name, created_at FROM relations "
                                   "WHERE name IN ('person', 'auction', 'bid')").fetchall())
        qoid = cat.execute("SELECT oid FROM relations WHERE name = ?", (query,)).fetchone()[0]
        oids = dict(cat.execute("SELECT oid, name FROM relations").fetchall())
        batches = cat.execute("SELECT batch_id, sources FROM cq_offsets WHERE query_oid = ?",
                              (qoid,)).fetchall()
        cat.close()
        rss = peak_rss_mib(srv.proc.pid)
    lat, total = [], 0
    for batch_id, sources in batches:
        for s in json.loads(sources):
            table = oids.get(s["oid"])
            created_us = created[table]
            for k in range(s["start"], s["end"]):
                born = created_us / 1e6 + kind_event(table, k) / rate
                if born < t_sub + warmup or born > t_stop - 2.0:
                    continue
                total += 1
                if batch_id in arrivals:
                    lat.append(arrivals[batch_id] - born)
    lat.sort()
    if not lat:
        return None
    return (percentile(lat, 50) * 1e3, percentile(lat, 99) * 1e3, len(lat), total,
            len(arrivals), rss)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--events", type=int, default=10_000_000)
    ap.add_argument("--batch", type=int, default=200_000)
    ap.add_argument("--unbounded-later-stages", action="store_true",
                    help="a pipeline's later stages read all they can per batch")
    ap.add_argument("--queries", default=None, help="default: every runnable query file")
    ap.add_argument("--bin", default=str(REPO / "build-rel" / "src" / "sluiced"))
    ap.add_argument("--source", choices=("nexmark", "kafka"), default="nexmark")
    ap.add_argument("--latency", action="store_true")
    ap.add_argument("--no-throughput", action="store_true")
    ap.add_argument("--latency-rate", type=int, default=10_000)
    ap.add_argument("--latency-seconds", type=float, default=20.0)
    ap.add_argument("--triggers", default="0,1 second")
    args = ap.parse_args()
    queries = args.queries.split(",") if args.queries else runnable_queries()
    load = Path("/proc/loadavg").read_text().split()[:3]
    print(f"{args.bin}; load average {' '.join(load)}")
    if not args.no_throughput:
        kafka = KafkaSource(args.events) if args.source == "kafka" else None
        try:
            print(f"throughput: {args.events} events from {args.source}, batches of "
                  f"{args.batch} rows")
            print(f"{'query':6} {'wall s':>8} {'cpu s':>8} {'rows read':>10} {'events/s':>12} "
                  f"{'events/s/core':>14} {'peak RSS MiB':>13} {'state rows':>11} "
                  f"{'RocksDB MiB':>12}")
            for q in queries:
                wall, cpu, rows, rss, st, disk = run_throughput(
                    args.bin, q, args.events, args.batch, kafka,
                    stage_batch=not args.unbounded_later_stages)
                print(f"{q:6} {wall:8.2f} {cpu:8.2f} {rows:10} {args.events / wall:12,.0f} "
                      f"{(f'{args.events / cpu:,.0f}' if cpu > 0 else 'under a tick'):>14} {rss:13.0f} {st:11} {disk:12.1f}",
                      flush=True)
        finally:
            if kafka:
                kafka.stop()
    if args.latency:
        print(f"latency: {args.latency_rate} events/s paced, {args.latency_seconds:.0f} s "
              f"after 3 s of warm-up")
        print(f"{'query':6} {'trigger':>10} {'p50 ms':>9} {'p99 ms':>9} {'events':>9} "
              f"{'counted':>8} {'batches':>8} {'peak RSS MiB':>13}")
        for q in queries:
            if len(queries_of((QUERIES / f"{q}.sql").read_text())) > 1:
                # A pipeline's last stage reads its first stage's output, not
                # the events: its batches do not map to event numbers.  Its
                # rows may say when they became final (PIPELINE_FINAL).
                if q not in PIPELINE_FINAL:
                    print(f"{q:6} {'':>10} not measured: a pipeline of queries", flush=True)
                    continue
                for trig in args.triggers.split(","):
                    r = run_pipeline_latency(args.bin, q, args.latency_rate,
                                             args.latency_seconds, trig)
                    if r is None:
                        print(f"{q:6} {trig:>10} no output seen", flush=True)
                        continue
                    p50, p99, mx, n, rss = r
                    print(f"{q:6} {trig:>10} {p50:9.1f} {p99:9.1f} {n:9} rows, from their window's "
                          f"close (max {mx:.1f} ms) {rss:13.0f}", flush=True)
                continue
            for trig in args.triggers.split(","):
                r = run_latency(args.bin, q, args.latency_rate, args.latency_seconds, trig)
                if r is None:
                    print(f"{q:6} {trig:>10} no output seen", flush=True)
                    continue
                p50, p99, n, total, nb, rss = r
                print(f"{q:6} {trig:>10} {p50:9.1f} {p99:9.1f} {n:9} "
                      f"{100 * n / max(total, 1):7.1f}% {nb:8} {rss:13.0f}", flush=True)
    print(f"load average at the end {' '.join(Path('/proc/loadavg').read_text().split()[:3])}")


if __name__ == "__main__":
    main()
