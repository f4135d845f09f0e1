#!/usr/bin/env python3
"""Nexmark side by side: sluice, Apache Spark Structured Streaming and Apache
Flink on the same Kafka topic, in the same run.

    .venv/bin/python tools/bench/nexmark_peers.py [--events N] [--queries q0,q1,...]
        [--engines sluice,spark,flink] [--partitions 2] [--cores 2] [--heap 3g]
        [--batch 200000] [--spark-max-offsets N] [--bin build-rel/src/sluiced]
        [--gen PATH] [--seed 1] [--base-time-ms MS] [--first-event-rate N]
        [--json FILE]

1. Sets up what the peers need, once: tools/bench/peers/.venv-spark and
   .venv-flink (PyPI, versions pinned in requirements-spark.txt and
   requirements-flink.txt) and the Kafka connectors' jars from Maven
   Central (pom-spark.xml, pom-flink.xml -> .jars-spark, .jars-flink).
   All git-ignored; ./tools/test never needs them.
2. Starts a real broker (tools/kafka/broker.py) and writes the bids of N
   Nexmark events (release build-rel/tools/nexmark/nexmark_gen, seed
   --seed, from 2026-01-01 at 10,000 events per second of event time:
   46 in 50 events are bids) as JSON lines to the topic `bid`,
   round robin over --partitions partitions (each partition in event-time
   order).
3. For each query, runs each engine in turn (never two at once), each in
   a fresh process reading the topic from its earliest offset to its end:
   - sluice: a release sluiced, a Kafka stream `bid` with the columns and
     watermark of tools/nexmark/queries/streams.sql, the query of
     tools/nexmark/queries/qN.sql with trigger available_now and
     max_offsets_per_trigger --batch; timed from CREATE CONTINUOUS QUERY
     until sys.queries says finished; CPU: the server's, from /proc.
   - Spark (peers/spark_nexmark.py): PySpark local[CORES], Kafka source,
     trigger availableNow, foreachBatch into Parquet files.
   - Flink (peers/flink_nexmark.py): PyFlink local MiniCluster, parallelism
     CORES, a bounded Kafka scan (earliest to latest offsets), CSV files.
   The peers' CPU is their process tree's (Python + JVM) over the same span.
4. Checks that every engine computed the same result: count(*) and sums
   over the final result rows (the query's SIGNATURE below), and that
   sluice and Spark read every bid.  A query whose engines disagree gets no
   figure (the table says MISMATCH) and the script exits 1.
5. Prints events/s (N over the wall time, Nexmark's convention: the
   generator's events, persons and auctions included) and events/s per
   busy core (N over the CPU time) per engine, and the sluice/peer ratios,
   as a markdown table for docs/benchmarks.md ("Nexmark side by side").
"""

import argparse
import hashlib
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
import time
from decimal import Decimal
from pathlib import Path

import psycopg
from confluent_kafka import Producer

from benchsrv import Server, nexmark_bids, nexmark_query_sql, run_until_done

REPO = Path(__file__).resolve().parents[2]
PEERS = REPO / "tools" / "bench" / "peers"
QUERIES = REPO / "tools" / "nexmark" / "queries"
sys.path.insert(0, str(REPO / "tools" / "kafka"))
sys.path.insert(0, str(PEERS))

from broker import KafkaBroker  # noqa: E402
from runner import tree_peak_rss_mib  # noqa: E402

# What each engine's final result is checked by: count(*) plus these sums
# ("sum_ms": of a timestamp as milliseconds since 1970), and the group keys
# of the update-mode queries (Spark's update-mode output keeps the last
# batch's row of each key).
SIGNATURE = {
    "q0": {"keys": [], "sums": [["sum", "price"], ["sum", "bidder"]]},
    "q1": {"keys": [], "sums": [["sum", "price"], ["sum", "bidder"]]},
    "q2": {"keys": [], "sums": [["sum", "price"], ["sum", "auction"]]},
    "q5": {"keys": ["auction", "window_start"],
           "sums": [["sum", "num"], ["sum", "auction"], ["sum_ms", "window_start"]]},
    "q7": {"keys": ["window_start"],
           "sums": [["sum", "maxprice"], ["sum_ms", "window_start"]]},
    "q11": {"keys": ["bidder", "window_start"],
            "sums": [["sum", "bid_count"], ["sum", "bidder"], ["sum_ms", "window_start"],
                     ["sum_ms", "window_end"]]},
}
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
# The topic
# --------------------------------------------------------------------------

def produce_bids(broker, gen, events, seed, partitions, base_ms, rate=None):
    """Write the bids of EVENTS Nexmark events to topic `bid`; returns their count."""
    broker.create_topic("bid", partitions)
    gen_args = ["--base-time-ms", str(base_ms)]
    if rate:
        gen_args += ["--first-event-rate", str(rate)]
    p = Producer({"bootstrap.servers": broker.bootstrap, "linger.ms": 20,
                  "batch.size": 1 << 20, "compression.type": "none",
                  "queue.buffering.max.messages": 1_000_000})
    t0 = time.monotonic()
    gen_proc = subprocess.Popen([gen, "--events", str(events), "--seed", str(seed),
                                 "--table", "bid", *gen_args],
                                stdout=subprocess.PIPE, bufsize=1 << 20)
    n = 0
    for line in gen_proc.stdout:
        while True:
            try:
                p.produce("bid", line.rstrip(b"\n"), partition=n % partitions)
                break
            except BufferError:
                p.poll(0.05)
        n += 1
        if n % 10000 == 0:
            p.poll(0)
    if gen_proc.wait() != 0:
        sys.exit(f"nexmark_gen exited {gen_proc.returncode}")
    if p.flush(300) != 0:
        sys.exit("the producer could not deliver every bid")
    if n != nexmark_bids(events):
        sys.exit(f"nexmark_gen wrote {n} bids, not {nexmark_bids(events)}")
    log(f"produced {n:,} bids of {events:,} events in {time.monotonic() - t0:.1f} s")
    return n


# --------------------------------------------------------------------------
# The engines
# --------------------------------------------------------------------------

def sluice_stream_ddl(bootstrap):
    """The bid stream of streams.sql (same columns and watermark) over Kafka."""
    text = (QUERIES / "streams.sql").read_text()
    cols = re.search(r"CREATE STREAM bid \((.*?)\)\s*WITH", text, re.S).group(1)
    return (f"CREATE STREAM bid ({cols}) WITH (connector = 'kafka', topic = 'bid', "
            f"bootstrap_servers = '{bootstrap}', format = 'json', "
            f"starting_offsets = 'earliest')")


def sluice_signature_sql(query, sig):
    cols = ["count(*)"]
    for kind, col in sig["sums"]:
        cols.append(f"sum(extract(epoch from {col}) * 1000)" if kind == "sum_ms"
                    else f"sum({col})")
    return f"SELECT {', '.join(cols)} FROM {query}"


def sluice_query_sql(query, batch):
    """The query as the peers run it: peers/sluice/QUERY.sql where the peers
    stop at a first stage (q5, q7), else tools/nexmark/queries/QUERY.sql."""
    own = PEERS / "sluice"
    return nexmark_query_sql(
        query, f"trigger = 'available_now', max_offsets_per_trigger = {batch}",
        own if (own / f"{query}.sql").is_file() else QUERIES)


def run_sluice(args, query, bootstrap, bids):
    with Server(args.bin) as srv, psycopg.connect(srv.dsn, autocommit=True) as c:
        c.execute(sluice_stream_ddl(bootstrap))
        wall, cpu, row = run_until_done(c, srv.proc.pid, sluice_query_sql(query, args.batch),
                                        query)
        if row[0] != "finished":
            return {"error": f"{row[0]}: {row[1]}"}
        sigv = c.execute(sluice_signature_sql(query, SIGNATURE[query])).fetchone()
        ver = c.execute("SELECT version()").fetchone()[0]
        return {"engine": ver.split(" on ")[0], "wall_s": wall, "cpu_s": cpu,
                "peak_rss_mib": tree_peak_rss_mib(srv.proc.pid), "input_rows": row[2],
                "signature": [str(v) if v is not None else None for v in sigv]}


def run_peer(args, engine, query, bootstrap, python, jars, work):
    out = work / f"{engine}-{query}"
    out.mkdir()
    cmd = [str(python), str(PEERS / f"{engine}_nexmark.py"), "--query", query,
           "--bootstrap", bootstrap, "--topic", "bid", "--jars", str(jars), "--out", str(out),
           "--cores", str(args.cores), "--heap", args.heap,
           "--signature", json.dumps(SIGNATURE[query])]
    if engine == "spark" and args.spark_max_offsets:
        cmd += ["--max-offsets", str(args.spark_max_offsets)]
    logf = out / "run.log"
    with open(logf, "wb") as fh:
        # Its own process group: a failure or Ctrl-C here stops its JVM too.
        proc = subprocess.Popen(cmd, stdout=fh, stderr=subprocess.STDOUT,
                                start_new_session=True, cwd=out)
        try:
            rc = proc.wait(args.timeout)
        except BaseException:
            os.killpg(proc.pid, 9)
            proc.wait()
            if not isinstance(sys.exc_info()[1], subprocess.TimeoutExpired):
                raise
            rc = "timeout"
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


def check(query, results, bids):
    """None if every engine that ran agrees (and read every bid), else why not."""
    ok = {e: r for e, r in results.items() if "error" not in r}
    for e, r in ok.items():
        if r.get("input_rows") is not None and r["input_rows"] != bids:
            return f"{e} read {r['input_rows']} of {bids} bids"
    if query in ("q0", "q1") and ok:
        for e, r in ok.items():
            if int(r["signature"][0]) != bids:
                return f"{e} wrote {r['signature'][0]} rows of {bids} bids"
    engines = list(ok)
    for e in engines[1:]:
        if not same(ok[engines[0]]["signature"], ok[e]["signature"]):
            return (f"{engines[0]} {ok[engines[0]]['signature']} != "
                    f"{e} {ok[e]['signature']}")
    return None


def fmt_rate(v):
    return f"{v / 1e6:.2f} M" if v >= 1e6 else f"{v / 1e3:.0f} k"


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--events", type=int, default=2_000_000)
    ap.add_argument("--queries", default=",".join(SIGNATURE))
    ap.add_argument("--engines", default=",".join(ENGINES))
    ap.add_argument("--partitions", type=int, default=2)
    ap.add_argument("--cores", type=int, default=2,
                    help="Spark's local[N], Flink's parallelism")
    ap.add_argument("--heap", default="3g", help="-Xmx of the Spark and Flink JVMs")
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
    ap.add_argument("--timeout", type=float, default=1800, help="seconds per peer run")
    ap.add_argument("--bin", default=str(REPO / "build-rel" / "src" / "sluiced"))
    ap.add_argument("--gen", default=str(REPO / "build-rel" / "tools" / "nexmark" / "nexmark_gen"))
    args = ap.parse_args()
    queries = args.queries.split(",")
    engines = args.engines.split(",")
    for q in queries:
        if q not in SIGNATURE:
            sys.exit(f"unknown query {q} (runnable: {', '.join(SIGNATURE)})")
    for e in engines:
        if e not in ENGINES:
            sys.exit(f"unknown engine {e} ({', '.join(ENGINES)})")
    for path in (args.bin, args.gen):
        if not os.access(path, os.X_OK):
            sys.exit(f"{path}: not built (meson setup build-rel --buildtype=release && "
                     f"meson compile -C build-rel)")

    peer = {}
    for e in engines:
        if e != "sluice":
            peer[e] = (ensure_venv(e), ensure_jars(e))

    load0 = Path("/proc/loadavg").read_text().split()[:3]
    work = Path(tempfile.mkdtemp(prefix="nexmark-peers-"))
    broker = KafkaBroker()
    table = []
    failed = False
    try:
        broker.start()
        bids = produce_bids(broker, args.gen, args.events, args.seed, args.partitions,
                            args.base_time_ms, args.first_event_rate)
        for q in queries:
            results = {}
            for e in engines:
                log(f"{q}: {e} ...")
                if e == "sluice":
                    r = run_sluice(args, q, broker.bootstrap, bids)
                else:
                    r = run_peer(args, e, q, broker.bootstrap, *peer[e], work)
                results[e] = r
                if "error" in r:
                    log(f"{q}: {e} FAILED: {r['error']}\n{r.get('log', '')}")
                    failed = True
                else:
                    log(f"{q}: {e} {r['engine']}: wall {r['wall_s']:.2f} s, cpu "
                        f"{r['cpu_s']:.2f} s, {fmt_rate(args.events / r['wall_s'])} events/s, "
                        f"{fmt_rate(args.events / r['cpu_s'])} per busy core, signature "
                        f"{r['signature']}")
            why = check(q, results, bids)
            if why:
                log(f"{q}: MISMATCH: {why}")
                failed = True
            table.append((q, results, why))
    finally:
        broker.stop()
        shutil.rmtree(work, ignore_errors=True)
    load1 = Path("/proc/loadavg").read_text().split()[:3]

    versions = sorted({r["engine"] for _, rs, _ in table for r in rs.values() if "engine" in r})
    print(f"\n{args.events:,} events ({bids:,} bids) as JSON in Kafka topic `bid`, "
          f"{args.partitions} partitions; {args.cores} cores (Spark local[{args.cores}], "
          f"Flink parallelism {args.cores}), JVM -Xmx{args.heap}; sluice batches of "
          f"{args.batch:,}; {', '.join(versions)}; load average before "
          f"{' '.join(load0)}, after {' '.join(load1)}\n")
    head = "| query |"
    rule = "|---|"
    for e in engines:
        head += f" {e} wall | {e} events/s | {e} events/s per core |"
        rule += "---|---|---|"
    for e in engines[1:]:
        if engines[0] == "sluice":
            head += f" sluice/{e} per core | sluice/{e} wall |"
            rule += "---|---|"
    print(head)
    print(rule)
    for q, rs, why in table:
        line = f"| {q} |"
        for e in engines:
            r = rs[e]
            if "error" in r or why:
                line += f" {'failed' if 'error' in r else 'MISMATCH'} | | |"
            else:
                line += (f" {r['wall_s']:.1f} s | {fmt_rate(args.events / r['wall_s'])} | "
                         f"{fmt_rate(args.events / r['cpu_s'])} |")
        for e in engines[1:]:
            if engines[0] != "sluice":
                continue
            s, p = rs["sluice"], rs[e]
            if why or "error" in s or "error" in p:
                line += " | |"
            else:
                line += f" {p['cpu_s'] / s['cpu_s']:.1f}x | {p['wall_s'] / s['wall_s']:.1f}x |"
        print(line)
    if args.json:
        Path(args.json).write_text(json.dumps({
            "events": args.events, "bids": bids,
            "queries": {q: {"results": rs, "mismatch": why} for q, rs, why in table}},
            indent=1))
    sys.exit(1 if failed else 0)


if __name__ == "__main__":
    main()
