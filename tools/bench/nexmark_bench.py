#!/usr/bin/env python3
"""Nexmark throughput: each runnable query over N in-process events.

    tools/bench/nexmark_bench.py [--events N] [--batch N] [--queries q0,q1,...]
                                 [--bin PATH]

For each query of tools/nexmark/queries that sluice runs (q0, q1, q2, q5,
q7, q11), starts a release sluiced (build-rel/src/sluiced: `meson setup
build-rel --buildtype=release`) on a free loopback port with a fresh data
directory, creates the streams of streams.sql with number_of_events = N and
events_per_second = 0 (all events available at once), runs the query with
trigger 'available_now' in batches of --batch rows, and waits until
sys.queries says finished.  It reports, per query:

  - bid rows/s: the rows the query read (46/50 of N) over the wall time;
  - events/s: N over the wall time (Nexmark's convention: the generator's
    events, persons and auctions included, although only bids are made);
  - the same per busy core: over the server's user+system CPU time
    (/proc/<pid>/stat) instead of the wall time;
  - peak RSS of the server (VmHWM in /proc/<pid>/status).

The figures go to docs/benchmarks.md ("Nexmark").
"""

import argparse
import re
import sys
from pathlib import Path

import psycopg

from benchsrv import Server, nexmark_bids, nexmark_query_sql, run_until_done

REPO = Path(__file__).resolve().parents[2]
QUERIES = REPO / "tools" / "nexmark" / "queries"
RUNNABLE = ["q0", "q1", "q2", "q5", "q7", "q11"]


def peak_rss_mib(pid):
    m = re.search(r"VmHWM:\s+(\d+) kB", Path(f"/proc/{pid}/status").read_text())
    return int(m.group(1)) / 1024 if m else float("nan")


def run_query(binary, query, events, batch):
    with Server(binary) as srv, psycopg.connect(srv.dsn, autocommit=True) as c:
        streams = (QUERIES / "streams.sql").read_text().replace(
            "number_of_events = 10000000", f"number_of_events = {events}")
        c.execute(streams)
        wall, cpu, row = run_until_done(c, srv.proc.pid, nexmark_query_sql(query, batch),
                                        query)
        if row[0] != "finished":
            sys.exit(f"{query}: {row[0]}: {row[1]}")
        bids = nexmark_bids(events)
        if row[2] is not None and row[2] != bids:
            sys.exit(f"{query}: read {row[2]} rows of {bids}")
        return wall, cpu, bids, peak_rss_mib(srv.proc.pid)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--events", type=int, default=10_000_000)
    ap.add_argument("--batch", type=int, default=200_000)
    ap.add_argument("--queries", default=",".join(RUNNABLE))
    ap.add_argument("--bin", default=str(REPO / "build-rel" / "src" / "sluiced"))
    args = ap.parse_args()
    print(f"{args.events} events, batches of {args.batch} rows, {args.bin}")
    print(f"{'query':6} {'wall s':>8} {'cpu s':>8} {'bid rows/s':>12} {'events/s':>12} "
          f"{'events/s/core':>14} {'peak RSS MiB':>13}")
    for q in args.queries.split(","):
        wall, cpu, bids, rss = run_query(args.bin, q, args.events, args.batch)
        print(f"{q:6} {wall:8.2f} {cpu:8.2f} {bids / wall:12,.0f} {args.events / wall:12,.0f} "
              f"{args.events / cpu:14,.0f} {rss:13.0f}", flush=True)


if __name__ == "__main__":
    main()
