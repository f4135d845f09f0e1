#!/usr/bin/env python3
"""The cost of a /metrics scrape with many continuous queries.

    tools/bench/metrics_bench.py [--queries N] [--scrapes N] [--bin PATH ...]

For each --bin (default build/src/sluiced; give two to compare a build
before and after a change in one run), starts sluiced on a free loopback
port with a temporary data directory and the HTTP listener, creates N
internal streams, each with a windowed count (trigger 1 second) over it,
feeds each 100 rows and waits until every query committed a batch; then
scrapes /metrics --scrapes times while the queries run, and reports the
scrape's wall time (median, 90th percentile, max), the bytes of the
exposition and its lines, and the server's CPU time per scrape.  The
scrape runs on the server's loop thread, so its time is time the loop
spends away from the sockets.  The figures go to docs/benchmarks.md
("/metrics").
"""

import argparse
import re
import statistics
import sys
import time
import urllib.request
from pathlib import Path

import psycopg

sys.path.insert(0, str(Path(__file__).resolve().parent))
from benchsrv import Server, cpu_seconds  # noqa: E402

REPO = Path(__file__).resolve().parents[2]


def http_port(srv):
    for _ in range(300):
        m = re.search(r"http ready\"? listen=\S+:(\d+)", srv.log_path.read_text())
        if m:
            return int(m.group(1))
        time.sleep(0.05)
    sys.exit("no 'http ready' line from sluiced")


def scrape(port):
    with urllib.request.urlopen(f"http://127.0.0.1:{port}/metrics", timeout=60) as r:
        return r.read()


def start_queries(srv, nqueries):
    """N streams s0.. with a windowed count q0.. over each (trigger 1
    second), fed 100 rows each; returns once every query committed a batch.
    (tools/bench/http_pages_bench.py starts the same.)"""
    with psycopg.connect(srv.dsn, autocommit=True) as c:
        for i in range(nqueries):
            c.execute(f"CREATE STREAM s{i} (k int, ts timestamp, "
                      "WATERMARK FOR ts AS ts - INTERVAL '1 second')")
            c.execute(f"CREATE CONTINUOUS QUERY q{i} WITH (trigger = '1 second') AS "
                      f"SELECT window_start, k, count(*) AS n FROM s{i} "
                      "GROUP BY WINDOW(ts, INTERVAL '10 seconds'), k")
            c.execute(f"INSERT INTO s{i} SELECT g % 10, TIMESTAMP '2026-01-01' + "
                      "g * INTERVAL '1 second' FROM generate_series(1, 100) AS g")
        while c.execute("SELECT count(*) FROM sys.queries WHERE last_batch_id >= 0"
                        ).fetchone()[0] < nqueries:
            time.sleep(0.2)


def bench(binary, nqueries, nscrapes):
    with Server(binary, "--http-port", "0") as srv:
        port = http_port(srv)
        start_queries(srv, nqueries)
        scrape(port)    # warm
        times, cpu0 = [], cpu_seconds(srv.proc.pid)
        for _ in range(nscrapes):
            t0 = time.perf_counter()
            body = scrape(port)
            times.append(time.perf_counter() - t0)
        cpu = cpu_seconds(srv.proc.pid) - cpu0
    times.sort()
    return {
        "median_ms": statistics.median(times) * 1e3,
        "p90_ms": times[int(len(times) * 0.9)] * 1e3,
        "max_ms": times[-1] * 1e3,
        "bytes": len(body),
        "lines": body.count(b"\n"),
        # the queries' batches run meanwhile: an upper bound
        "server_cpu_ms_per_scrape": cpu / nscrapes * 1e3,
    }


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--queries", type=int, default=100)
    ap.add_argument("--scrapes", type=int, default=200)
    ap.add_argument("--bin", action="append")
    a = ap.parse_args()
    for binary in a.bin or [str(REPO / "build" / "src" / "sluiced")]:
        r = bench(binary, a.queries, a.scrapes)
        print(f"{binary}: {a.queries} queries, {a.scrapes} scrapes: "
              f"median {r['median_ms']:.2f} ms, p90 {r['p90_ms']:.2f} ms, "
              f"max {r['max_ms']:.2f} ms; {r['bytes']} bytes, {r['lines']} lines; "
              f"server CPU <= {r['server_cpu_ms_per_scrape']:.2f} ms per scrape")


if __name__ == "__main__":
    main()
