#!/usr/bin/env python3
"""Nexmark: throughput, latency, peak RSS and state size of each query.

    tools/bench/nexmark_bench.py [--events N] [--batch N] [--queries q0,q1,...]
                                 [--bin PATH [--bin PATH2 ...]] [--repeat N]
                                 [--source nexmark|kafka] [--perf PREFIX]
                                 [--latency] [--latency-rate R] [--latency-seconds S]
                                 [--triggers '0,1 second'] [--no-throughput]
                                 [--query-dir DIR]

Every query file of tools/nexmark/queries (q*.sql) whose CREATE is not
commented out is run, each against a fresh release sluiced
(build-rel/src/sluiced: `meson setup build-rel --buildtype=release`) on a
free loopback port with its own data directory.

Throughput: the streams of streams.sql with number_of_events = N,
events_per_second = 0 (all events available at once) and a fixed
base_time_ms (so every run reads the same events in the same windows;
left to the streams' creation time, the windows' alignment and with it
the state left at the end changed from run to run), the query with
trigger 'available_now' in batches of --batch rows (a pipeline's later
stages, trigger '0', too, unless --unbounded-later-stages), timed from CREATE
CONTINUOUS QUERY until sys.queries says finished.  Per query:

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

--query-dir DIR takes the query files from DIR instead of
tools/nexmark/queries (streams.sql stays tools/nexmark/queries'): e.g.
tools/nexmark/first_stages, whose q5.sql and q7.sql are the windowed
aggregates of q5 and q7 alone.

Several --bin (a before and an after build) and --repeat N run each query
N times with each binary in turn (before, after, before, after...), against
the same broker and topics with --source kafka, so that the machine's load
falls on both alike.  --perf PREFIX records a CPU profile of each throughput
run's server (perf record -e cpu-clock -F 499 -g --call-graph dwarf, from
CREATE to done) into PREFIX-<query>-<bin>-<run>.data.

q7 (the bids joined with the maximum price of their 10-second tumbling
window, emitted when the window closes: output_mode 'append') has no
per-event effect before its window closes: a window's rows are
determined when the first bid at or past its
end plus the bid stream's watermark delay (4 s) is created -- the event
that moves the watermark past the window's end -- and its latency is the
arrival of the window's first q7 row at the subscriber minus that moment
(event time is the creation time, to the millisecond).  One sample per
window, so one per 10 s of run: the report gives p50 and p99 over the
windows and their count (--latency-seconds 60 gives 5-6).  A pipeline's
stages (a q7.sql from --query-dir) all run with the trigger measured.

Each latency line is followed by what sys.query_progress says of the last
100 batches of the measured query (mean and max of duration and of each
phase, in ms) and how many batches it ran.

The figures go to docs/benchmarks.md ("Current figures", "Nexmark").
--write-docs [FILE] (default docs/benchmarks.md) writes them there itself:
the machine (CPU model, cores, memory, kernel, the load average before and
after), the date, the tree's commit, the command line, and the throughput
and latency tables in markdown, as the block between the markers
`<!-- nexmark_bench: latest run -->` and `<!-- /nexmark_bench -->`,
replaced at each run (placed the first time before the heading that
follows "### Nexmark: throughput, latency, memory and state per query").
"""

import argparse
import json
import os
import signal
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
# Throughput runs start event time here, not at the streams' creation: the
# same events fall into the same windows in every run, so results and state
# figures are comparable between runs and binaries (2026-01-01 00:00 UTC).
BASE_TIME_MS = 1767225600000


def runnable_queries(directory=QUERIES):
    """The q*.sql files with a CREATE that is not commented out, by number."""
    out = []
    for f in directory.glob("q*.sql"):
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


def first_stage_rows(sql, first, events):
    """The rows the first stage reads: each table's events once per scan of
    it in that stage's statement (a query on the operator graph may read a
    stream twice, as q7 in Flink's shape does)."""
    m = re.search(rf"CREATE\s+CONTINUOUS\s+QUERY\s+{first}\b(.*?)"
                  r"(?=CREATE\s+CONTINUOUS\s+QUERY|\Z)", sql, re.I | re.S)
    body = m.group(1) if m else sql
    return sum(kind_count(t, events) * len(re.findall(rf"\b(FROM|JOIN)\s+{t}\b", body, re.I))
               for t in TABLES)


def sys_seconds(pid):
    """The system part of cpu_seconds: where the kernel's copies show."""
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return int(fields[12]) / os.sysconf("SC_CLK_TCK")


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
                                    "--base-time-ms", str(BASE_TIME_MS),
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

def run_throughput(binary, query, events, batch, kafka, directory=QUERIES, perf=None,
                   stage_batch=True):
    """One query file, a single query or a pipeline of them (q4, q5, q7:
    the first stage reads the Nexmark streams with trigger available_now,
    the later ones read its output with trigger '0'): timed from the CREATE
    until every stage is done (nexmark_queries.wait_done)."""
    sql = nexmark_query_sql(query, f"trigger = 'available_now', max_offsets_per_trigger = {batch}",
                            directory)
    if stage_batch:
        # The later stages of a pipeline (trigger '0') in batches of the same
        # size: a stage reading its input's whole backlog at once holds it
        # all in one batch (the peak RSS of a join's first batch).
        sql = sql.replace("trigger = '0'", f"trigger = '0', max_offsets_per_trigger = {batch}")
    stages = queries_of(sql)
    with Server(binary) as srv, psycopg.connect(srv.dsn, autocommit=True) as c:
        c.execute(kafka.streams() if kafka else
                  streams_sql(number_of_events=events, events_per_second=0,
                              base_time_ms=BASE_TIME_MS))
        rec = None
        if perf:
            rec = subprocess.Popen(["perf", "record", "-q", "-e", "cpu-clock", "-F", "499", "-g",
                                    "--call-graph", "dwarf,16384", "-p", str(srv.proc.pid),
                                    "-o", perf], stdout=subprocess.DEVNULL)
            time.sleep(1)
        cpu0, sys0, t0 = cpu_seconds(srv.proc.pid), sys_seconds(srv.proc.pid), time.monotonic()
        c.execute(sql)
        try:
            wait_done(c, stages, timeout=7200, poll=0.2)
        except AssertionError as e:
            sys.exit(f"{query}: {e}")
        finally:
            if rec is not None:
                rec.send_signal(signal.SIGINT)
                rec.wait(120)
        wall, cpu = time.monotonic() - t0, cpu_seconds(srv.proc.pid) - cpu0
        sys_cpu = sys_seconds(srv.proc.pid) - sys0
        # The first stage reads the Nexmark streams, every row of them.
        first = stages[0][0]
        rows = sum(kind_count(t, events) for t in tables_read(sql))
        read = c.execute("SELECT input_rows FROM sys.queries WHERE name = %s",
                         (first,)).fetchone()[0]
        want = first_stage_rows(sql, first, events)
        if read is not None and read != want:
            sys.exit(f"{query}: {first} read {read} rows of {want}")
        st = c.execute("SELECT sum(state_rows) FROM sys.state WHERE query = ANY(%s)",
                       ([n for n, _ in stages],)).fetchone()[0]
        return wall, cpu, sys_cpu, rows, peak_rss_mib(srv.proc.pid), st or 0, \
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


def percentile(sorted_vals, p):
    return sorted_vals[min(len(sorted_vals) - 1, int(p / 100 * len(sorted_vals)))]


PHASES = ("duration_ms", "plan_ms", "read_ms", "execute_ms", "state_commit_ms",
          "commit_log_ms")


def progress_summary(conn, query):
    """Mean and max of each phase over the batches sys.query_progress keeps,
    and the query's last batch id (batches run = that + 1)."""
    cols = ", ".join(f"avg({p}), max({p})" for p in PHASES)
    row = conn.execute(f"SELECT count(*), {cols} FROM sys.query_progress "
                       "WHERE query = %s", (query,)).fetchone()
    last = conn.execute("SELECT last_batch_id FROM sys.queries WHERE name = %s",
                        (query,)).fetchone()[0]
    parts = [f"{p[:-3]} {row[1 + 2 * i] or 0:.2f}/{row[2 + 2 * i] or 0:.1f}"
             for i, p in enumerate(PHASES)]
    return f"batches {last + 1}; last {row[0]} (mean/max ms): " + ", ".join(parts)


def window_latency(binary, query, rate, seconds, trigger, window_s=10, delay_s=4):
    """q7 (one query, or the stages of a pipeline from --query-dir): per
    closed window, the arrival of its first row at the subscriber minus the
    creation of the event that closed it."""
    sql = nexmark_query_sql(query, f"trigger = '{trigger}'").replace(
        "trigger = '0'", f"trigger = '{trigger}'")
    rows = []
    with Server(binary) as srv, psycopg.connect(srv.dsn, autocommit=True) as c:
        c.execute(streams_sql(events_per_second=rate, first_event_rate=rate))
        ready, stop = [], threading.Event()

        def sub():
            with psycopg.connect(srv.dsn, autocommit=True) as conn:
                ready.append(conn)
                try:
                    for row in conn.cursor().stream(f"SUBSCRIBE {query}"):
                        rows.append((time.time(), row))
                        if stop.is_set():
                            break
                except psycopg.errors.QueryCanceled:
                    pass
        c.execute(sql)
        t = threading.Thread(target=sub, daemon=True)
        t.start()
        time.sleep(3.0 + seconds)
        stop.set()
        if ready:
            ready[0].cancel()
        t.join(30)
        status = c.execute("SELECT name, status, last_error FROM sys.queries").fetchall()
        for name, st, err in status:
            if st != "running":
                sys.exit(f"{name}: {st}: {err}")
        summary = progress_summary(c, query)
        rss = peak_rss_mib(srv.proc.pid)
    first = {}
    for arrived, row in rows:
        # q7's columns: auction, price, bidder, date_time, extra (+ batch, kind)
        dt = row[5].replace(tzinfo=timezone.utc).timestamp()
        end = (int(dt) // window_s + 1) * window_s    # [start, end) holds dt
        first.setdefault(end, arrived)
    lat = sorted(arrived - (end + delay_s) for end, arrived in first.items())
    if not lat:
        return None, summary
    return (percentile(lat, 50) * 1e3, percentile(lat, 99) * 1e3, len(lat), len(lat),
            len(first), rss), summary


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
        summary = progress_summary(c, query)
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
        return None, summary
    return (percentile(lat, 50) * 1e3, percentile(lat, 99) * 1e3, len(lat), total,
            len(arrivals), rss), summary


DOCS = REPO / "docs" / "benchmarks.md"
DOCS_BEGIN = "<!-- nexmark_bench: latest run -->"
DOCS_END = "<!-- /nexmark_bench -->"
DOCS_SECTION = "### Nexmark: throughput, latency, memory and state per query"


def machine_line():
    """The machine in words: CPU model, cores, memory, kernel."""
    model = "unknown CPU"
    for line in Path("/proc/cpuinfo").read_text().splitlines():
        if line.startswith("model name"):
            model = line.split(":", 1)[1].strip()
            break
    mem = 0
    for line in Path("/proc/meminfo").read_text().splitlines():
        if line.startswith("MemTotal:"):
            mem = int(line.split()[1]) / 2**20
    return (f"{os.cpu_count()} cores ({model}), {mem:.0f} GiB of memory, "
            f"Linux {os.uname().release}")


def git_rev():
    """The tree's commit, "-dirty" when tracked files differ from it."""
    def git(*args):
        return subprocess.run(["git", "-C", str(REPO), *args], capture_output=True,
                              text=True, check=True).stdout.strip()
    try:
        rev = git("rev-parse", "--short=7", "HEAD")
        return rev + ("-dirty" if git("status", "--porcelain", "--untracked-files=no") else "")
    except (OSError, subprocess.CalledProcessError):
        return "unknown"


def docs_block(meta, throughput, latency):
    """The markdown of one run: META (a dict: when, rev, command, machine,
    bins, load_before, load_after, events, source, batch), THROUGHPUT (dicts
    of the throughput rows) and LATENCY (dicts of the latency rows)."""
    lines = [DOCS_BEGIN, "#### The latest nexmark_bench run (written by --write-docs)", "",
             f"{meta['when']}, tree at {meta['rev']}; machine: {meta['machine']}; "
             f"1-minute load average {meta['load_before']} before, {meta['load_after']} "
             f"after; binaries: {', '.join(meta['bins'])}.", "",
             "    " + meta["command"], ""]
    if throughput:
        lines += [f"Throughput: {meta['events']:,} events from {meta['source']}, batches of "
                  f"{meta['batch']:,} rows.", "",
                  "| query | bin | wall s | CPU s | events/s | events/s per busy core "
                  "| peak RSS MiB | state rows | RocksDB MiB | load |",
                  "|---|---|---|---|---|---|---|---|---|---|"]
        for r in throughput:
            per_core = f"{meta['events'] / r['cpu']:,.0f}" if r["cpu"] > 0 else "under a tick"
            lines.append(f"| {r['query']} | {r['bin']} | {r['wall']:.2f} | {r['cpu']:.2f} | "
                         f"{meta['events'] / r['wall']:,.0f} | {per_core} | {r['rss']:.0f} | "
                         f"{r['state']} | {r['disk']:.1f} | {r['load']} |")
        lines.append("")
    if latency:
        lines += ["Latency: from an event's creation to its result at a subscriber (q7: per "
                  "closed window).", "",
                  "| query | trigger | p50 ms | p99 ms | samples | counted | batches | peak RSS MiB |",
                  "|---|---|---|---|---|---|---|---|"]
        for r in latency:
            if r.get("none"):
                lines.append(f"| {r['query']} | {r['trigger']} | {r['none']} | | | | | |")
            else:
                lines.append(f"| {r['query']} | {r['trigger']} | {r['p50']:.1f} | {r['p99']:.1f} | "
                             f"{r['n']} {r['what']} | {r['counted']:.1f}% | {r['batches']} | "
                             f"{r['rss']:.0f} |")
        lines.append("")
    lines.append(DOCS_END)
    return "\n".join(lines)


def write_docs(path, block):
    """Put BLOCK into the markdown file PATH: in place of the block between
    the markers if there is one, else before the next heading after
    DOCS_SECTION (the Nexmark table of "Current figures"), else at the end."""
    text = Path(path).read_text()
    if DOCS_BEGIN in text and DOCS_END in text:
        i, j = text.index(DOCS_BEGIN), text.index(DOCS_END) + len(DOCS_END)
        text = text[:i] + block + text[j:]
    elif DOCS_SECTION in text:
        at = text.find("\n#", text.index(DOCS_SECTION) + len(DOCS_SECTION))
        at = len(text) if at < 0 else at + 1
        text = text[:at] + block + "\n\n" + text[at:]
    else:
        text = text.rstrip("\n") + "\n\n" + block + "\n"
    Path(path).write_text(text)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--events", type=int, default=10_000_000)
    ap.add_argument("--batch", type=int, default=200_000)
    ap.add_argument("--unbounded-later-stages", action="store_true",
                    help="a pipeline's later stages read all they can per batch")
    ap.add_argument("--queries", default=None, help="default: every runnable query file")
    ap.add_argument("--bin", action="append", help="repeat to alternate binaries; default "
                    "build-rel/src/sluiced")
    ap.add_argument("--repeat", type=int, default=1)
    ap.add_argument("--perf", help="profile each throughput run into PREFIX-...data")
    ap.add_argument("--source", choices=("nexmark", "kafka"), default="nexmark")
    ap.add_argument("--latency", action="store_true")
    ap.add_argument("--no-throughput", action="store_true")
    ap.add_argument("--latency-rate", type=int, default=10_000)
    ap.add_argument("--latency-seconds", type=float, default=20.0)
    ap.add_argument("--triggers", default="0,1 second")
    ap.add_argument("--query-dir", type=Path, default=QUERIES,
                    help="the query files' directory (default tools/nexmark/queries)")
    ap.add_argument("--write-docs", nargs="?", const=str(DOCS), metavar="FILE",
                    help="also write the machine and the figures into FILE (default "
                         "docs/benchmarks.md), replacing the last run's block")
    args = ap.parse_args()
    if args.latency and args.latency_seconds <= 2:
        # The last 2 s are left out (batches still in flight): nothing to count.
        ap.error("--latency-seconds must be more than 2")
    throughput_rows, latency_rows = [], []
    bins = args.bin or [str(REPO / "build-rel" / "src" / "sluiced")]
    args.bin = bins[0]
    queries = args.queries.split(",") if args.queries else runnable_queries(args.query_dir)
    load = Path("/proc/loadavg").read_text().split()[:3]
    print(f"{', '.join(bins)}; load average {' '.join(load)}")
    if not args.no_throughput:
        kafka = KafkaSource(args.events) if args.source == "kafka" else None
        try:
            print(f"throughput: {args.events} events from {args.source}, batches of "
                  f"{args.batch} rows")
            print(f"{'query':6} {'bin':>3} {'wall s':>8} {'cpu s':>8} {'sys s':>6} {'rows read':>10} {'events/s':>12} "
                  f"{'events/s/core':>14} {'peak RSS MiB':>13} {'state rows':>11} "
                  f"{'RocksDB MiB':>12} {'load':>5}")
            for q, run, b in ((q, run, b) for q in queries for run in range(args.repeat)
                              for b in range(len(bins))):
                perf = f"{args.perf}-{q}-{b}-{run}.data" if args.perf else None
                wall, cpu, sys_cpu, rows, rss, st, disk = run_throughput(bins[b], q, args.events,
                                                                args.batch, kafka, args.query_dir, perf,
                    stage_batch=not args.unbounded_later_stages)
                throughput_rows.append({"query": q, "bin": b, "wall": wall, "cpu": cpu,
                                        "rss": rss, "state": st, "disk": disk,
                                        "load": Path("/proc/loadavg").read_text().split()[0]})
                print(f"{q:6} {b:3} {wall:8.2f} {cpu:8.2f} {sys_cpu:6.2f} {rows:10} {args.events / wall:12,.0f} "
                      f"{(f'{args.events / cpu:,.0f}' if cpu > 0 else 'under a tick'):>14} {rss:13.0f} {st:11} {disk:12.1f} "
                      f"{Path('/proc/loadavg').read_text().split()[0]:>5}",
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
            pipeline = len(queries_of((args.query_dir / f"{q}.sql").read_text())) > 1
            per_window = q == "q7"      # its rows come when a window closes
            if pipeline and not per_window:
                # A pipeline's last stage reads its first stage's output, not
                # the events: its batches do not map to event numbers.
                print(f"{q:6} {'':>10} not measured: a pipeline of queries", flush=True)
                latency_rows.append({"query": q, "trigger": "",
                                     "none": "not measured: a pipeline of queries"})
                continue
            for trig in args.triggers.split(","):
                run = window_latency if per_window else run_latency
                r, summary = run(args.bin, q, args.latency_rate, args.latency_seconds, trig)
                if r is None:
                    print(f"{q:6} {trig:>10} no output seen; {summary}", flush=True)
                    latency_rows.append({"query": q, "trigger": trig, "none": "no output seen"})
                    continue
                p50, p99, n, total, nb, rss = r
                what = "windows" if per_window else "events"
                latency_rows.append({"query": q, "trigger": trig, "p50": p50, "p99": p99,
                                     "n": n, "what": what, "counted": 100 * n / max(total, 1),
                                     "batches": nb, "rss": rss})
                print(f"{q:6} {trig:>10} {p50:9.1f} {p99:9.1f} {n:9} "
                      f"{100 * n / max(total, 1):7.1f}% {nb:8} {rss:13.0f}  ({what})",
                      flush=True)
                print(f"       {summary}", flush=True)
    load_after = Path("/proc/loadavg").read_text().split()[:3]
    print(f"load average at the end {' '.join(load_after)}")
    if args.write_docs:
        meta = {"when": time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime()), "rev": git_rev(),
                "command": " ".join(["tools/bench/nexmark_bench.py"] + sys.argv[1:]),
                "machine": machine_line(), "bins": bins, "load_before": " ".join(load),
                "load_after": " ".join(load_after), "events": args.events,
                "source": args.source, "batch": args.batch}
        write_docs(args.write_docs, docs_block(meta, throughput_rows, latency_rows))
        print(f"figures written to {args.write_docs}")


if __name__ == "__main__":
    main()
