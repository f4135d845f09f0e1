#!/usr/bin/env python3
"""Continuous-query throughput: a windowed count over datagen rows.

    tools/bench/cq_bench.py [--rows N] [--batch N] [--mode update|append] [--bin PATH]

Starts a release sluiced (build/src/sluiced: `meson setup build --buildtype=release`)
on a free loopback port with a temporary data directory, creates a datagen
stream of N rows (event times 1 ms apart, user_id random in 1..100), and a
continuous query

    SELECT window_start, user_id, count(*) FROM events
    GROUP BY WINDOW(ts, INTERVAL '10 seconds'), user_id

with trigger 'available_now' in batches of --batch rows.  It waits until the
result table counts every row, and reports events/s over the wall time and
per busy core (the server's user+system CPU time from /proc).  The figures
go to docs/benchmarks.md ("Continuous queries").
"""

import argparse
import os
import re
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import psycopg

REPO = Path(__file__).resolve().parents[2]


def cpu_seconds(pid):
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    ticks = os.sysconf("SC_CLK_TCK")
    return (int(fields[11]) + int(fields[12])) / ticks


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--rows", type=int, default=5_000_000)
    ap.add_argument("--batch", type=int, default=200_000)
    ap.add_argument("--mode", default="update", choices=["update", "append"])
    ap.add_argument("--bin", default=str(REPO / "build" / "src" / "sluiced"))
    args = ap.parse_args()

    work = Path(tempfile.mkdtemp(prefix="sluice-cq-bench-"))
    log = open(work / "sluiced.log", "wb")
    proc = subprocess.Popen([args.bin, "--port", "0", "--data-dir", str(work / "data"),
                             "--log-level", "info"], stdout=log, stderr=subprocess.STDOUT)
    try:
        port = None
        for _ in range(300):
            m = re.search(r"ready.*-p (\d+)", (work / "sluiced.log").read_text())
            if m:
                port = int(m.group(1))
                break
            time.sleep(0.05)
        if port is None:
            sys.exit("no ready line from sluiced:\n" + (work / "sluiced.log").read_text())
        dsn = f"host=127.0.0.1 port={port} user=sluice dbname=sluice"
        with psycopg.connect(dsn, autocommit=True) as c:
            c.execute(f"""CREATE STREAM events (user_id BIGINT, ts TIMESTAMP,
                WATERMARK FOR ts AS ts - INTERVAL '5 seconds')
                WITH (connector = 'datagen', rows_per_second = 1000000000,
                      number_of_rows = {args.rows}, seed = 1,
                      "fields.user_id.min" = 1, "fields.user_id.max" = 100,
                      "fields.ts.kind" = 'sequence', "fields.ts.start" = 0,
                      "fields.ts.step" = 1000)""")
            time.sleep(0.2)     # all rows are available after rows/1e9 s
            cpu0, t0 = cpu_seconds(proc.pid), time.monotonic()
            c.execute(f"""CREATE CONTINUOUS QUERY counts
                WITH (trigger = 'available_now', output_mode = '{args.mode}',
                      max_offsets_per_trigger = {args.batch})
                AS SELECT window_start, user_id, count(*) AS n FROM events
                   GROUP BY WINDOW(ts, INTERVAL '10 seconds'), user_id""")
            # In append mode the last windows stay open (no later event time).
            want = args.rows if args.mode == "update" else args.rows - 15_000
            while True:
                got = c.execute("SELECT coalesce(sum(n), 0) FROM counts").fetchone()[0]
                if got >= want:
                    break
                time.sleep(0.02)
            wall, cpu = time.monotonic() - t0, cpu_seconds(proc.pid) - cpu0
        print(f"rows {args.rows}, batches of {args.batch}, {args.mode} mode")
        print(f"  wall {wall:.2f} s: {args.rows / wall / 1e6:.2f} M events/s")
        print(f"  server CPU {cpu:.2f} s: {args.rows / cpu / 1e6:.2f} M events/s per busy core")
    finally:
        proc.send_signal(signal.SIGTERM)
        proc.wait(30)
        log.close()
        shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    main()
