#!/usr/bin/env python3
"""Continuous-query throughput: a windowed count over datagen rows.

    tools/bench/cq_bench.py [--rows N] [--batch N] [--mode update|append]
                            [--window tumble|slide|session] [--bin PATH]

Starts a release sluiced (build/src/sluiced: `meson setup build --buildtype=release`)
on a free loopback port with a temporary data directory, creates a datagen
stream of N rows (event times 1 ms apart, user_id random in 1..100), and a
continuous query

    SELECT window_start, user_id, count(*) FROM events
    GROUP BY WINDOW(ts, INTERVAL '10 seconds'), user_id

with trigger 'available_now' in batches of --batch rows.  --window slide
groups by WINDOW(ts, INTERVAL '10 seconds', INTERVAL '1 second') instead
(ten windows per row; sliding windows are computed once per 1-second slice),
--window session by SESSION(ts, INTERVAL '1 second') (one session per user
and gap-free stretch).  It waits until every batch has committed, and reports
events/s over the wall time and per busy core (the server's user+system CPU
time from /proc), and the mean time per batch of each phase (plan, read,
execute, write, commit: see cq.h, CqProgress), read from the server's debug
log.  The figures go to docs/benchmarks.md ("Continuous queries").
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


def committed(work):
    """The fields of each "batch committed" line of query counts."""
    out = []
    for ln in (work / "sluiced.log").read_text(errors="replace").splitlines():
        if "batch committed" in ln and "query=counts " in ln:
            out.append({k: int(v) for k, v in re.findall(r"(\w+)=(-?\d+)\b", ln)})
    return out


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--rows", type=int, default=5_000_000)
    ap.add_argument("--batch", type=int, default=200_000)
    ap.add_argument("--mode", default="update", choices=["update", "append"])
    ap.add_argument("--window", default="tumble", choices=["tumble", "slide", "session"])
    ap.add_argument("--bin", default=str(REPO / "build" / "src" / "sluiced"))
    args = ap.parse_args()

    work = Path(tempfile.mkdtemp(prefix="sluice-cq-bench-"))
    log = open(work / "sluiced.log", "wb")
    proc = subprocess.Popen([args.bin, "--port", "0", "--data-dir", str(work / "data"),
                             "--log-level", "debug"], stdout=log, stderr=subprocess.STDOUT)
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
            group = {"tumble": "WINDOW(ts, INTERVAL '10 seconds')",
                     "slide": "WINDOW(ts, INTERVAL '10 seconds', INTERVAL '1 second')",
                     "session": "SESSION(ts, INTERVAL '1 second')"}[args.window]
            c.execute(f"""CREATE CONTINUOUS QUERY counts
                WITH (trigger = 'available_now', output_mode = '{args.mode}',
                      max_offsets_per_trigger = {args.batch})
                AS SELECT window_start, user_id, count(*) AS n FROM events
                   GROUP BY {group}, user_id""")
            nbatches = (args.rows + args.batch - 1) // args.batch
            while len(committed(work)) < nbatches:
                time.sleep(0.02)
            wall, cpu = time.monotonic() - t0, cpu_seconds(proc.pid) - cpu0
            if args.mode == "update" and args.window == "tumble":
                got = c.execute("SELECT coalesce(sum(n), 0) FROM counts").fetchone()[0]
                assert got == args.rows, f"counted {got} of {args.rows} rows"
        print(f"rows {args.rows}, batches of {args.batch}, {args.mode} mode, {args.window} windows")
        print(f"  wall {wall:.2f} s: {args.rows / wall / 1e6:.2f} M events/s")
        print(f"  server CPU {cpu:.2f} s: {args.rows / cpu / 1e6:.2f} M events/s per busy core")
        lines = committed(work)
        phases = ["plan_us", "read_us", "execute_us", "write_us", "commit_us", "total_us"]
        if lines and all(ph in lines[0] for ph in phases):
            means = {ph: sum(ln[ph] for ln in lines) / len(lines) / 1000 for ph in phases}
            print("  per batch (ms): " + ", ".join(f"{ph[:-3]} {means[ph]:.1f}" for ph in phases))
    finally:
        proc.send_signal(signal.SIGTERM)
        proc.wait(30)
        log.close()
        shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    main()
