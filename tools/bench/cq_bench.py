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
import time
from pathlib import Path

import psycopg

from benchsrv import Server, cpu_seconds

REPO = Path(__file__).resolve().parents[2]


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--rows", type=int, default=5_000_000)
    ap.add_argument("--batch", type=int, default=200_000)
    ap.add_argument("--mode", default="update", choices=["update", "append"])
    ap.add_argument("--bin", default=str(REPO / "build" / "src" / "sluiced"))
    args = ap.parse_args()

    with Server(args.bin, "--log-level", "info") as srv:
        dsn, proc = srv.dsn, srv.proc
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


if __name__ == "__main__":
    main()
