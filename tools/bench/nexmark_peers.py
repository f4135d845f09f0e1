#!/usr/bin/env python3
"""Nexmark side by side: sluice, Apache Spark Structured Streaming and Apache
Flink on the same Kafka topics, in the same run.

    .venv/bin/python tools/bench/nexmark_peers.py [--events N] [--queries q0,q1,...]
        [--engines sluice,spark,flink] [--runs K] [--partitions 2] [--cores 2]
        [--heap 3g] [--peer-state rocksdb|memory] [--batch 200000] [--spark-max-offsets N]
        [--bin build-rel/src/sluiced] [--gen PATH] [--seed 1]
        [--base-time-ms MS] [--first-event-rate N] [--json FILE] [--peer-cap SECONDS]
    .venv/bin/python tools/bench/nexmark_peers.py --table-from FILE [--fixed-from SMALL]

1. Sets up what the peers need, once: tools/bench/peers/.venv-spark and
   .venv-flink (PyPI, versions pinned in requirements-spark.txt and
   requirements-flink.txt) and the Kafka connectors' jars from Maven
   Central (pom-spark.xml, pom-flink.xml -> .jars-spark, .jars-flink).
   All git-ignored; ./tools/test never needs them.
2. Starts a real broker (tools/kafka/broker.py) and writes N Nexmark events
   (release build-rel/tools/nexmark/nexmark_gen, seed --seed, from
   2026-01-01 at 10,000 events per second of event time) as JSON lines to
   three topics, `person`, `auction` and `bid` (1:3:46 of the events),
   round robin over --partitions partitions (each partition in event-time
   order), then one END MARKER at the end of every partition of every
   topic: a row an hour of event time after the last event, with negative
   ids that join nothing and pass no query's filter.  A Kafka stream never
   ends, so without it sluice's and Spark's watermarks would stop 4 s short
   of the last event, and the windows, sessions and joins of the last
   seconds (q4's last minute) would never be emitted, where Flink's bounded
   scan ends with a watermark of +infinity and emits them.  The marker
   moves every engine's watermark past every real event; the marker's own
   rows (its windows Flink closes at the end of input, q0's copy of it) are
   left out of the check: every signature counts only rows with
   SIGNATURE[q]["real"] >= 0.
3. For each query and each of the K runs (--runs), runs each engine in turn
   (never two at once), each in a fresh process reading the topics the
   query uses from their earliest offsets to their end:
   - sluice: a release sluiced, Kafka streams `person`, `auction`, `bid`
     with the columns and watermarks of tools/nexmark/queries/streams.sql,
     the file tools/nexmark/queries/qN.sql as it is -- one query, or the
     pipeline of queries that is q4, q5, q7 -- its first stage with trigger
     available_now and max_offsets_per_trigger --batch; timed from the
     CREATE until every stage is done (nexmark_queries.wait_done: the first
     finished, the later ones without lag); CPU: the server's, from /proc.
   - Spark (peers/spark_nexmark.py): PySpark local[CORES], Kafka sources,
     trigger availableNow, foreachBatch into Parquet files; a query Spark
     cannot run as one streaming query runs as a pipeline of streaming
     queries through Parquet folders (peers/spark/qN.sql says which and
     what Spark refuses otherwise).  A query Spark refuses altogether gets
     the cell "refused: ERROR".
   - Flink (peers/flink_nexmark.py): PyFlink local MiniCluster, parallelism
     CORES, bounded Kafka scans (earliest to latest offsets), nexmark-flink's
     SQL; append-only results into CSV files, updating ones (q4, q5)
     collected with their changes applied.
   The peers keep their state in RocksDB (--peer-state memory: on the JVM
   heap, their defaults).  The peers' CPU is their process tree's (Python +
   JVM) over the same span.
4. Checks that every engine computed the same result in every run:
   count(*) and sums over the final result rows (the query's SIGNATURE
   below), and that sluice and Spark read every row of the topics.  A query
   whose engines or runs disagree gets no figure (the table says MISMATCH)
   and the script exits 1.
5. Prints events/s (N over the wall time, Nexmark's convention: the
   generator's events, persons, auctions and bids) and events/s per busy
   core (N over the CPU time) per engine, medians over the K runs with
   their ranges, and the sluice/peer ratios of the medians, as a markdown
   table for docs/benchmarks.md ("Nexmark side by side").  --json FILE
   keeps every figure and signature, written after each run of each engine
   so that a run cut short keeps what it measured (a query cut short has
   fewer runs in some cells, "not run" in others); --table-from FILE prints
   its table.
6. --fixed-from SMALL (a --json file of a tiny run, e.g. --events 20000)
   adds a second table: each engine's CPU time at SMALL's events (its fixed
   cost per query: for the JVM engines class loading, planning, code
   generation and JIT, Flink's per-job MiniCluster) and the events/s per
   busy core without it, (N - n) / (CPU at N - CPU at n), with the ratios
   of those.  The whole-run figures above stay the headline.
7. --peer-cap SECONDS stops a peer's run still going after SECONDS (from
   its runner's start) instead of waiting for --timeout: Flink's q4 and q7
   keep every bid in their regular joins, and q7 probes every bid of a
   price at each window's maximum, so their cost grows faster than the
   events (q7: 12-17 minutes at 2 M events, hours at 10 M).  The CPU and
   wall time of its timed span so far (the runner prints the span's start,
   `TIMED`) are lower bounds on the whole run's: the table gives them as
   "> 716 s (stopped)", "< 9 k" per core and the ratio as "> 41.9x"; the
   run is neither a failure nor in the cross-engine check.
"""

import argparse
import hashlib
import json
import os
import re
import shutil
import signal
import statistics
import subprocess
import sys
import tempfile
import time
from datetime import datetime, timezone
from decimal import Decimal
from pathlib import Path

import psycopg
from confluent_kafka import Producer

from benchsrv import Server, cpu_seconds, nexmark_bids, nexmark_query_sql, run_until_done

REPO = Path(__file__).resolve().parents[2]
PEERS = REPO / "tools" / "bench" / "peers"
QUERIES = REPO / "tools" / "nexmark" / "queries"
sys.path.insert(0, str(REPO / "tools" / "kafka"))
sys.path.insert(0, str(REPO / "tools" / "nexmark"))
sys.path.insert(0, str(PEERS))

from broker import KafkaBroker  # noqa: E402
from nexmark_bench import kind_count  # noqa: E402  (TABLE's rows among N events)
from nexmark_queries import queries_of, wait_done  # noqa: E402
from runner import tree_peak_rss_mib  # noqa: E402

# What each engine's final result is checked by: count(*) plus these sums
# ("sum_ms": of a timestamp as milliseconds since 1970; "sum_floor": of
# floor(value), for q4's averages: Flink's AVG of BIGINT truncates, sluice's
# is numeric, Spark's double), over the rows whose column "real" is >= 0
# (not the end markers'), and the group keys of the update-mode queries
# (Spark's update-mode output keeps the last batch's row of each key).
SIGNATURE = {
    "q0": {"keys": [], "real": "bidder", "sums": [["sum", "price"], ["sum", "bidder"]]},
    "q1": {"keys": [], "real": "bidder", "sums": [["sum", "price"], ["sum", "bidder"]]},
    "q2": {"keys": [], "real": "auction", "sums": [["sum", "price"], ["sum", "auction"]]},
    "q3": {"keys": [], "real": "id", "sums": [["sum", "id"]]},
    "q4": {"keys": ["category"], "real": "category",
           "sums": [["sum", "category"], ["sum_floor", "avg_final"]]},
    "q5": {"keys": [], "real": "auction", "sums": [["sum", "num"], ["sum", "auction"]]},
    "q7": {"keys": [], "real": "auction",
           "sums": [["sum", "price"], ["sum", "auction"], ["sum", "bidder"],
                    ["sum_ms", "date_time"]]},
    "q8": {"keys": [], "real": "id", "sums": [["sum", "id"], ["sum_ms", "starttime"]]},
    "q11": {"keys": ["bidder", "window_start"], "real": "bidder",
            "sums": [["sum", "bid_count"], ["sum", "bidder"], ["sum_ms", "window_start"],
                     ["sum_ms", "window_end"]]},
}
# The topics each query reads (sluice: its first stage).
# The queries whose one statement reads its topic twice in sluice: q5 and
# q7 read bid as the aggregate's input and as the join's other side.
SLUICE_SCANS = {"q5": 2, "q7": 2}
TABLES = {"q0": ["bid"], "q1": ["bid"], "q2": ["bid"], "q3": ["auction", "person"],
          "q4": ["auction", "bid"], "q5": ["bid"], "q7": ["bid"], "q8": ["person", "auction"],
          "q11": ["bid"]}
TOPICS = ["person", "auction", "bid"]
ENGINES = ["sluice", "spark", "flink"]


def log(msg):
    print(msg, file=sys.stderr, flush=True)


# --------------------------------------------------------------------------
# Setup: the peers' virtual environments and jars
# --------------------------------------------------------------------------

def _stamped(dest, source):
    """Is DEST made from SOURCE as it is now (its sha256 in DEST/.stamp)?"""
    stamp = dest / ".stamp"
    digest = hashlib.sha256(source.read_bytes()).hexdigest()
    return stamp.is_file() and stamp.read_text().strip() == digest, digest


def ensure_venv(name):
    """tools/bench/peers/.venv-NAME with requirements-NAME.txt; its python."""
    venv, req = PEERS / f".venv-{name}", PEERS / f"requirements-{name}.txt"
    ok, digest = _stamped(venv, req)
    if not ok:
        log(f"peers: installing {req.name} into {venv} (PyPI, a few hundred MB)")
        subprocess.run(["python3", "-m", "venv", "--clear", str(venv)], check=True)
        subprocess.run([str(venv / "bin" / "pip"), "install", "-q", "-r", str(req)],
                       check=True)
        (venv / ".stamp").write_text(digest + "\n")
    return venv / "bin" / "python"


def ensure_jars(name):
    """tools/bench/peers/.jars-NAME from pom-NAME.xml (Maven Central)."""
    dest, pom = PEERS / f".jars-{name}", PEERS / f"pom-{name}.xml"
    ok, digest = _stamped(dest, pom)
    if not ok:
        log(f"peers: fetching {pom.name}'s jars with mvn")
        shutil.rmtree(dest, ignore_errors=True)
        subprocess.run([os.environ.get("MVN", "mvn"), "-q", "-B", "-Dstyle.color=never",
                        "-f", str(pom), "dependency:copy-dependencies",
                        "-DincludeScope=runtime", f"-DoutputDirectory={dest}"], check=True)
        (dest / ".stamp").write_text(digest + "\n")
    return dest


# --------------------------------------------------------------------------
# The topics
# --------------------------------------------------------------------------

def end_markers(events, base_ms, rate):
    """The end marker of each topic: an hour of event time after the last
    event, ids that match no other row's (a bid of auction -1, auction -2
    sold by -2, person -3) and values that pass no query's filter."""
    ms = base_ms + -(-events * 1000 // (rate or 10_000)) + 3_600_000
    t = datetime.fromtimestamp(ms / 1000, timezone.utc).strftime("%Y-%m-%d %H:%M:%S.%f")[:-3]
    return {
        "person": {"event_type": "person", "id": -3, "name": "end", "email_address": "end",
                   "credit_card": "end", "city": "end", "state": "end", "date_time": t,
                   "extra": "end"},
        "auction": {"event_type": "auction", "id": -2, "item_name": "end",
                    "description": "end", "initial_bid": 0, "reserve": 0, "date_time": t,
                    "expires": t, "seller": -2, "category": -1, "extra": "end"},
        "bid": {"event_type": "bid", "auction": -1, "bidder": -1, "price": -1,
                "channel": "end", "url": "end", "date_time": t, "extra": "end"},
    }


def produce_topics(broker, gen, events, seed, partitions, base_ms, rate=None):
    """Write the person, auction and bid rows of EVENTS Nexmark events to the
    topics of those names, round robin over PARTITIONS, and an end marker at
    the end of each partition; returns {topic: rows written, markers included}."""
    gen_args = ["--base-time-ms", str(base_ms)]
    if rate:
        gen_args += ["--first-event-rate", str(rate)]
    p = Producer({"bootstrap.servers": broker.bootstrap, "linger.ms": 20,
                  "batch.size": 1 << 20, "compression.type": "none",
                  "queue.buffering.max.messages": 1_000_000})

    def produce(topic, value, partition):
        while True:
            try:
                p.produce(topic, value, partition=partition)
                return
            except BufferError:
                p.poll(0.05)

    t0 = time.monotonic()
    counts = {}
    markers = end_markers(events, base_ms, rate)
    for topic in TOPICS:
        broker.create_topic(topic, partitions)
        gen_proc = subprocess.Popen([gen, "--events", str(events), "--seed", str(seed),
                                     "--table", topic, *gen_args],
                                    stdout=subprocess.PIPE, bufsize=1 << 20)
        n = 0
        for line in gen_proc.stdout:
            produce(topic, line.rstrip(b"\n"), n % partitions)
            n += 1
            if n % 10000 == 0:
                p.poll(0)
        if gen_proc.wait() != 0:
            sys.exit(f"nexmark_gen exited {gen_proc.returncode}")
        if n != kind_count(topic, events):
            sys.exit(f"nexmark_gen wrote {n} {topic} rows, not {kind_count(topic, events)}")
        for part in range(partitions):
            produce(topic, json.dumps(markers[topic]).encode(), part)
        counts[topic] = n + partitions
    if p.flush(300) != 0:
        sys.exit("the producer could not deliver every row")
    log(f"produced {events:,} events ({', '.join(f'{counts[t]:,} {t}' for t in TOPICS)}, "
        f"end markers included) in {time.monotonic() - t0:.1f} s")
    return counts


# --------------------------------------------------------------------------
# The engines
# --------------------------------------------------------------------------

def sluice_streams_ddl(bootstrap):
    """The streams of streams.sql (same columns and watermarks) over Kafka."""
    text = (QUERIES / "streams.sql").read_text()
    out = []
    for name, cols in re.findall(r"CREATE STREAM (\w+) \((.*?)\)\s*WITH", text, re.S):
        out.append(f"CREATE STREAM {name} ({cols}) WITH (connector = 'kafka', "
                   f"topic = '{name}', bootstrap_servers = '{bootstrap}', format = 'json', "
                   f"starting_offsets = 'earliest')")
    return out


def sluice_signature_sql(query, sig):
    cols = ["count(*)"]
    for kind, col in sig["sums"]:
        cols.append(f"sum(extract(epoch from {col}) * 1000)" if kind == "sum_ms"
                    else f"sum(floor({col}))" if kind == "sum_floor" else f"sum({col})")
    return f"SELECT {', '.join(cols)} FROM {query} WHERE {sig['real']} >= 0"


def sluice_query_sql(query, batch):
    """tools/nexmark/queries/QUERY.sql, its first stage with trigger
    available_now and max_offsets_per_trigger BATCH."""
    return nexmark_query_sql(
        query, f"trigger = 'available_now', max_offsets_per_trigger = {batch}")


def run_sluice(args, query, bootstrap):
    sql = sluice_query_sql(query, args.batch)
    stages = queries_of(sql)
    with Server(args.bin) as srv, psycopg.connect(srv.dsn, autocommit=True) as c:
        for ddl in sluice_streams_ddl(bootstrap):
            c.execute(ddl)
        first = stages[0][0]
        if len(stages) == 1:
            wall, cpu, row = run_until_done(c, srv.proc.pid, sql, query)
            if row[0] != "finished":
                return {"error": f"{row[0]}: {row[1]}"}
        else:
            # A pipeline (q4, q5, q7): until the first stage has finished and
            # the later ones have read everything (nexmark_queries.wait_done).
            cpu0, t0 = cpu_seconds(srv.proc.pid), time.monotonic()
            c.execute(sql)
            try:
                wait_done(c, stages, timeout=args.timeout, poll=0.1)
            except AssertionError as e:
                return {"error": str(e)}
            wall, cpu = time.monotonic() - t0, cpu_seconds(srv.proc.pid) - cpu0
        read = c.execute("SELECT input_rows FROM sys.queries WHERE name = %s",
                         (first,)).fetchone()[0]
        sigv = c.execute(sluice_signature_sql(query, SIGNATURE[query])).fetchone()
        ver = c.execute("SELECT version()").fetchone()[0]
        return {"engine": ver.split(" on ")[0], "wall_s": wall, "cpu_s": cpu,
                "peak_rss_mib": tree_peak_rss_mib(srv.proc.pid), "input_rows": read,
                "signature": [str(v) if v is not None else None for v in sigv]}


def session_cpu_seconds(sid):
    """CPU seconds of every live process of session SID (a peer runner
    started with start_new_session: itself, its JVM and their children),
    with their reaped children's, as runner.tree_cpu_seconds counts them."""
    tick, total = os.sysconf("SC_CLK_TCK"), 0
    for d in Path("/proc").iterdir():
        if not d.name.isdigit():
            continue
        try:
            f = (d / "stat").read_text().rsplit(")", 1)[1].split()
        except (OSError, IndexError):
            continue
        if int(f[3]) == sid:  # the fields after "(comm)": state ppid pgrp session ...
            total += sum(int(x) for x in f[11:15])
    return total / tick


def run_peer(args, engine, query, bootstrap, python, jars, work):
    out = Path(tempfile.mkdtemp(prefix=f"{engine}-{query}-", dir=work))
    cmd = [str(python), str(PEERS / f"{engine}_nexmark.py"), "--query", query,
           "--bootstrap", bootstrap, "--jars", str(jars), "--out", str(out),
           "--cores", str(args.cores), "--heap", args.heap, "--state", args.peer_state,
           "--signature", json.dumps(SIGNATURE[query])]
    if engine == "spark" and args.spark_max_offsets:
        cmd += ["--max-offsets", str(args.spark_max_offsets)]
    logf = out / "run.log"
    capped = args.peer_cap is not None and args.peer_cap < args.timeout
    with open(logf, "wb") as fh:
        # Its own process group: a failure or Ctrl-C here stops its JVM too.
        proc = subprocess.Popen(cmd, stdout=fh, stderr=subprocess.STDOUT,
                                start_new_session=True, cwd=out)
        try:
            rc = proc.wait(args.peer_cap if capped else args.timeout)
        except subprocess.TimeoutExpired:
            if not capped:
                os.killpg(proc.pid, 9)
                proc.wait()
                rc = "timeout"
            else:
                # --peer-cap: stopped unfinished; the CPU and wall time of
                # its timed span so far (from the runner's TIMED line) are
                # lower bounds on what the whole run would have taken.
                now, cpu = time.monotonic(), session_cpu_seconds(proc.pid)
                os.killpg(proc.pid, 9)
                proc.wait()
                m = re.search(r"^TIMED (.*)$", logf.read_text(errors="replace"), re.M)
                if not m:
                    return {"error": "stopped by --peer-cap before its timed span"}
                span = json.loads(m.group(1))
                shutil.rmtree(out, ignore_errors=True)
                return {"stopped": True, "wall_s": now - span["t0"],
                        "cpu_s": cpu - span["cpu0"]}
        except BaseException:
            os.killpg(proc.pid, 9)
            proc.wait()
            raise
        # The JVM is the runner's child: make sure nothing of the group is left.
        try:
            os.killpg(proc.pid, 9)
        except ProcessLookupError:
            pass
    text = logf.read_text(errors="replace")
    m = re.search(r"^RESULT (.*)$", text, re.M)
    if rc != 0 or not m:
        tail = "\n".join(text.splitlines()[-30:])
        return {"error": f"exit {rc}", "log": tail}
    res = json.loads(m.group(1))
    shutil.rmtree(out, ignore_errors=True)
    return res


# --------------------------------------------------------------------------
# Checks and the table
# --------------------------------------------------------------------------

def same(a, b):
    return len(a) == len(b) and all(
        (x is None and y is None) or
        (x is not None and y is not None and Decimal(x) == Decimal(y)) for x, y in zip(a, b))


def ran(r):
    """Did this run give a result (not failed, not refused, not stopped)?"""
    return "error" not in r and "refused" not in r and "stopped" not in r


def lower_bound(rs):
    """A cell whose runs all finished or were stopped by --peer-cap, one at
    least stopped: the least CPU and wall time over its runs, each a lower
    bound on the median's (a stopped run would have taken more).  Else
    None."""
    if not rs or not any("stopped" in r for r in rs) or \
            not all(ran(r) or "stopped" in r for r in rs):
        return None
    return min(r["cpu_s"] for r in rs), min(r["wall_s"] for r in rs)


def check(query, runs, counts, bids):
    """None if every run of every engine that ran agrees (and read every row
    of the topics the query reads, end markers included: COUNTS {topic:
    rows}), else why not.  RUNS: {engine: [result of each run]}; BIDS: the
    bids (no marker).  A result's input_rows (sluice: its first stage's) is
    the sum over the query's topics, times the scans of them (SLUICE_SCANS);
    input_sources (Spark: [[topic, rows]] per Kafka source) each
    one topic's, times the scans of it (Spark counts a source its plan
    reads twice, q7's bid, twice)."""
    ok = [(e, r) for e, rs in runs.items() for r in rs if ran(r)]
    rows_in = sum(counts[t] for t in TABLES[query])
    for e, r in ok:
        n = r.get("input_rows")
        if n is not None and n != rows_in * SLUICE_SCANS.get(query, 1):
            return f"{e} read {n} of {rows_in * SLUICE_SCANS.get(query, 1)} rows"
        for topic, n in r.get("input_sources") or []:
            if topic not in counts or n == 0 or n % counts[topic] != 0:
                return f"{e} read {n} of {counts.get(topic)} rows of {topic}"
    if query in ("q0", "q1"):
        for e, r in ok:
            if int(r["signature"][0]) != bids:
                return f"{e} wrote {r['signature'][0]} rows of {bids} bids"
    for (e0, r0), (e, r) in zip(ok, ok[1:]):
        if not same(r0["signature"], r["signature"]):
            return f"{e0} {r0['signature']} != {e} {r['signature']}"
    return None


def fmt_rate(v):
    return f"{v / 1e6:.2f} M" if v >= 1e6 else f"{v / 1e3:.0f} k"


def spread(values, fmt):
    """'median (min-max)' of VALUES, each formatted by FMT ("2.1 s (1.9-2.4)":
    the range without the unit when both ends have the median's)."""
    med, lo, hi = (fmt(v) for v in (statistics.median(values), min(values), max(values)))
    if len(values) == 1:
        return med
    unit = med.rsplit(" ", 1)[-1]
    if lo.endswith(" " + unit) and hi.endswith(" " + unit):
        lo, hi = lo.rsplit(" ", 1)[0], hi.rsplit(" ", 1)[0]
    return f"{med} ({lo}–{hi})"


def table_lines(args, engines, table):
    """The markdown table: per engine the median wall time, events/s and
    events/s per busy core over the runs (ranges in brackets), then the
    sluice/peer ratios of the median CPU and wall times."""
    head, rule = "| query |", "|---|"
    for e in engines:
        head += f" {e} wall | {e} events/s | {e} events/s per core |"
        rule += "---|---|---|"
    ratios = [e for e in engines[1:] if engines[0] == "sluice"]
    for e in ratios:
        head += f" **sluice/{e} per core** | sluice/{e} wall |"
        rule += "---|---|"
    lines = [head, rule]
    for q, runs, why in table:
        line = f"| {q} |"
        med, least = {}, {}
        for e in engines:
            rs = runs[e]
            bad = [r for r in rs if not ran(r)]
            if not rs:  # a run cut short before this engine's turn
                line += " not run | | |"
            elif lower_bound(rs) and e != "sluice":
                least[e] = lower_bound(rs)
                cpu, wall = least[e]
                line += (f" > {wall:.0f} s (stopped) | < {fmt_rate(args.events / wall)} | "
                         f"< {fmt_rate(args.events / cpu)} |")
            elif bad:
                r = bad[0]
                cell = (f"refused: {r['refused']}" if "refused" in r else "failed")
                line += f" {cell} | | |"
            elif why:
                line += " MISMATCH | | |"
            else:
                walls = [r["wall_s"] for r in rs]
                cpus = [r["cpu_s"] for r in rs]
                med[e] = (statistics.median(cpus), statistics.median(walls))
                line += (f" {spread(walls, lambda v: f'{v:.1f} s')} | "
                         f"{spread([args.events / w for w in walls], fmt_rate)} | "
                         f"{spread([args.events / c for c in cpus], fmt_rate)} |")
        for e in ratios:
            if "sluice" in med and e in med:
                line += (f" **{med[e][0] / med['sluice'][0]:.1f}x** | "
                         f"{med[e][1] / med['sluice'][1]:.1f}x |")
            elif "sluice" in med and e in least:
                line += (f" **> {least[e][0] / med['sluice'][0]:.1f}x** | "
                         f"> {least[e][1] / med['sluice'][1]:.1f}x |")
            else:
                line += " | |"
        lines.append(line)
    return lines


def median_cpu(rs):
    """The median CPU seconds of a cell's runs, or None if one did not run."""
    if not rs or not all(ran(r) for r in rs):
        return None
    return statistics.median(r["cpu_s"] for r in rs)


def fixed_cost_lines(fig, small):
    """The table without the fixed cost: FIG and SMALL are --json figures of
    the same queries at N and at a tiny n events.  Per engine its median CPU
    at n (the fixed cost) and (N - n) / (CPU at N - CPU at n) events/s per
    busy core; the ratios are the peers' CPU over sluice's, both less their
    CPU at n."""
    n, n0 = fig["events"], small["events"]
    engines = [e for e in fig["engines"] if e in small["engines"]]
    ratios = [e for e in engines[1:] if engines[0] == "sluice"]
    head = "| query |" + "".join(f" {e} CPU at {n0:,} events | {e} per core without it |"
                                 for e in engines)
    head += "".join(f" **sluice/{e} per core without the fixed cost** |" for e in ratios)
    lines = [head, "|---|" + "---|---|" * len(engines) + "---|" * len(ratios)]
    for q, v in fig["queries"].items():
        w = small["queries"].get(q)
        if w is None or v["mismatch"] or w["mismatch"]:
            continue
        line, net, least = f"| {q} |", {}, set()
        for e in engines:
            big, tiny = median_cpu(v["runs"].get(e)), median_cpu(w["runs"].get(e))
            if big is None and e != "sluice" and lower_bound(v["runs"].get(e)):
                big = lower_bound(v["runs"][e])[0]
                least.add(e)
            if big is None or tiny is None:
                line += " | |"
                continue
            line += f" {tiny:.2f} s |"
            if big > tiny:
                net[e] = big - tiny
                line += f" {'< ' if e in least else ''}{fmt_rate((n - n0) / net[e])} |"
            else:
                line += " (no more than at n) |"
        for e in ratios:
            line += (f" **{'> ' if e in least else ''}{net[e] / net['sluice']:.1f}x** |"
                     if e in net and "sluice" in net else " |")
        lines.append(line)
    return lines


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--events", type=int, default=2_000_000)
    ap.add_argument("--queries", default=",".join(SIGNATURE))
    ap.add_argument("--engines", default=",".join(ENGINES))
    ap.add_argument("--runs", type=int, default=1,
                    help="runs of each query on each engine (medians and ranges)")
    ap.add_argument("--partitions", type=int, default=2)
    ap.add_argument("--cores", type=int, default=2,
                    help="Spark's local[N], Flink's parallelism")
    ap.add_argument("--heap", default="3g", help="-Xmx of the Spark and Flink JVMs")
    ap.add_argument("--peer-state", default="rocksdb", choices=("rocksdb", "memory"),
                    help="the peers' state: in RocksDB (as sluice's and nexmark-flink's; "
                         "the joins of q4 and q7 keep millions of bids) or on the JVM heap")
    ap.add_argument("--batch", type=int, default=200_000,
                    help="sluice's max_offsets_per_trigger")
    ap.add_argument("--spark-max-offsets", type=int, default=0,
                    help="Spark's maxOffsetsPerTrigger (default none: one batch)")
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--base-time-ms", type=int, default=1767225600000,
                    help="the first event's time (default 2026-01-01 00:00 UTC)")
    ap.add_argument("--first-event-rate", type=int,
                    help="nexmark_gen's events per second of event time (default 10,000)")
    ap.add_argument("--json", help="also write every figure and signature to this file")
    ap.add_argument("--timeout", type=float,
                    help="seconds per run (default an hour per 2 million events, "
                         "at least an hour)")
    ap.add_argument("--peer-cap", type=float, metavar="SECONDS",
                    help="stop a peer's run still going after SECONDS of wall; its CPU by "
                         "then is a lower bound (the table's '> Nx'), not a failure")
    ap.add_argument("--bin", default=str(REPO / "build-rel" / "src" / "sluiced"))
    ap.add_argument("--gen", default=str(REPO / "build-rel" / "tools" / "nexmark" / "nexmark_gen"))
    ap.add_argument("--table-from", metavar="FILE",
                    help="only print the table of a --json file written before")
    ap.add_argument("--fixed-from", metavar="SMALL",
                    help="with --table-from: also the figures without the fixed cost, "
                         "SMALL being the --json file of a tiny run (--events 20000)")
    args = ap.parse_args()
    if args.table_from:
        table_from_json(args.table_from, args.fixed_from)
        return
    if args.fixed_from:
        sys.exit("--fixed-from goes with --table-from")
    if args.timeout is None:
        # Flink's q4 and q7 keep every bid in their join state: their time
        # grows faster than the events (390 s of wall for q7 at 2 M events).
        args.timeout = 3600 * max(1.0, args.events / 2_000_000)
    queries = args.queries.split(",")
    engines = args.engines.split(",")
    for q in queries:
        if q not in SIGNATURE:
            sys.exit(f"unknown query {q} (runnable: {', '.join(SIGNATURE)})")
    for e in engines:
        if e not in ENGINES:
            sys.exit(f"unknown engine {e} ({', '.join(ENGINES)})")
    if args.runs < 1:
        sys.exit("--runs must be 1 or more")
    for path in (args.bin, args.gen):
        if not os.access(path, os.X_OK):
            sys.exit(f"{path}: not built (meson setup build-rel --buildtype=release && "
                     f"meson compile -C build-rel)")

    # SIGTERM (and SIGINT, which a shell ignores in background jobs) stops
    # the run the way Ctrl-C does: the running engine's processes are
    # killed, the broker stopped, and --json keeps the runs done.
    def interrupt(signum, frame):
        raise KeyboardInterrupt(f"signal {signum}")
    signal.signal(signal.SIGTERM, interrupt)
    signal.signal(signal.SIGINT, interrupt)

    peer = {}
    for e in engines:
        if e != "sluice":
            peer[e] = (ensure_venv(e), ensure_jars(e))

    load0 = Path("/proc/loadavg").read_text().split()[:3]
    t_start = time.monotonic()
    work = Path(tempfile.mkdtemp(prefix="nexmark-peers-"))
    broker = KafkaBroker()
    table = []
    failed = False
    try:
        broker.start()
        counts = produce_topics(broker, args.gen, args.events, args.seed, args.partitions,
                                args.base_time_ms, args.first_event_rate)
        bids = counts["bid"] - args.partitions
        for q in queries:
            runs = {e: [] for e in engines}
            for k in range(args.runs):
                for e in engines:
                    log(f"{q}: {e} run {k + 1} of {args.runs} ...")
                    if e == "sluice":
                        r = run_sluice(args, q, broker.bootstrap)
                    else:
                        r = run_peer(args, e, q, broker.bootstrap, *peer[e], work)
                    r["load1"] = float(Path("/proc/loadavg").read_text().split()[0])
                    runs[e].append(r)
                    if "stopped" in r:
                        log(f"{q}: {e} stopped unfinished after {r['wall_s']:.0f} s "
                            f"(--peer-cap), cpu {r['cpu_s']:.2f} s so far: at most "
                            f"{fmt_rate(args.events / r['cpu_s'])} per busy core")
                    elif "refused" in r:
                        log(f"{q}: {e} refused: {r['refused']}")
                    elif "error" in r:
                        log(f"{q}: {e} FAILED: {r['error']}\n{r.get('log', '')}")
                        failed = True
                    else:
                        log(f"{q}: {e} {r['engine']}: wall {r['wall_s']:.2f} s, cpu "
                            f"{r['cpu_s']:.2f} s, {fmt_rate(args.events / r['wall_s'])} "
                            f"events/s, {fmt_rate(args.events / r['cpu_s'])} per busy core, "
                            f"signature {r['signature']}")
                    if args.json:  # after each run: a run cut short keeps what it did
                        write_json(args, engines, counts,
                                   table + [(q, runs, check(q, runs, counts, bids))],
                                   complete=False)
            why = check(q, runs, counts, bids)
            if why:
                log(f"{q}: MISMATCH: {why}")
                failed = True
            table.append((q, runs, why))
            if args.json:
                write_json(args, engines, counts, table, complete=False)
    finally:
        broker.stop()
        shutil.rmtree(work, ignore_errors=True)
    load1 = Path("/proc/loadavg").read_text().split()[:3]
    total = time.monotonic() - t_start

    versions = sorted({r["engine"] for _, rs, _ in table for runs in rs.values()
                       for r in runs if "engine" in r})
    print(f"\n{args.events:,} events ({', '.join(f'{counts[t] - args.partitions:,} {t}' for t in TOPICS)}) "
          f"as JSON in Kafka topics person, auction, bid, {args.partitions} partitions each, "
          f"plus an end marker per partition; {args.cores} cores (Spark local[{args.cores}], "
          f"Flink parallelism {args.cores}), JVM -Xmx{args.heap}, the peers' state in "
          f"{'RocksDB' if args.peer_state == 'rocksdb' else 'the heap'}; sluice batches of "
          f"{args.batch:,}; {', '.join(versions)}; {args.runs} run(s) of each query on "
          f"each engine, medians (ranges); load average before {' '.join(load0)}, after "
          f"{' '.join(load1)}; the whole bench took {total / 60:.1f} min\n")
    print("\n".join(table_lines(args, engines, table)))
    if args.json:
        write_json(args, engines, counts, table, complete=True)
    sys.exit(1 if failed else 0)


def write_json(args, engines, counts, table, complete):
    """Every figure and signature so far to --json (complete: the whole run)."""
    Path(args.json).write_text(json.dumps({
        "events": args.events, "bids": counts["bid"] - args.partitions, "counts": counts,
        "runs": args.runs, "engines": engines, "complete": complete,
        "queries": {q: {"runs": rs, "mismatch": why} for q, rs, why in table}}, indent=1))


def table_from_json(path, fixed_from=None):
    """The markdown table of a --json file (also of a run cut short); with
    FIXED_FROM (a tiny run's --json file) also the table without the fixed
    cost (fixed_cost_lines)."""
    fig = json.loads(Path(path).read_text())
    args = argparse.Namespace(events=fig["events"])
    table = [(q, v["runs"], v["mismatch"]) for q, v in fig["queries"].items()]
    loads = [r["load1"] for _, rs, _ in table for runs in rs.values() for r in runs
             if "load1" in r]
    print(f"{fig['events']:,} events, {fig['runs']} run(s) per cell"
          + ("" if fig["complete"] else ", cut short")
          + (f"; 1-minute load average after each run {min(loads):.1f}-{max(loads):.1f}"
             if loads else "") + "\n")
    print("\n".join(table_lines(args, fig["engines"], table)))
    if fixed_from:
        small = json.loads(Path(fixed_from).read_text())
        print(f"\nWithout the fixed cost: less each engine's median CPU time at "
              f"{small['events']:,} events ({small['runs']} run(s), {fixed_from})\n")
        print("\n".join(fixed_cost_lines(fig, small)))


if __name__ == "__main__":
    main()
