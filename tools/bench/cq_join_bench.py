#!/usr/bin/env python3
"""Continuous-query joins: throughput of a stream-table join and of a
stream-stream interval join over datagen rows.

    tools/bench/cq_join_bench.py [--rows N] [--batch N] [--kind table|interval] [--bin PATH]

Starts a release sluiced (build/src/sluiced: `meson setup build --buildtype=release`)
on a free loopback port with a temporary data directory.

  table:    a datagen stream `events` of N rows (user_id random in 1..1000,
            event times 1 ms apart) joined to a 1,000-row table `users`,
            counted per tier and 10-second window (update mode).
  interval: two datagen streams `imps` and `clks` of N rows each (ad random
            in 1..1000, event times 1 ms apart), joined on ad with
            clks.ts BETWEEN imps.ts AND imps.ts + 1 second, counted per
            10-second window (update mode); ~1 match per impression.

The query runs with trigger 'available_now' in batches of --batch rows per
input; the bench waits until the server's debug log shows every input row
read, and reports input rows/s over the wall time and per busy core (the
server's user+system CPU time from /proc), and the join's kept state after
the last batch.  Figures go to docs/benchmarks.md ("Continuous-query joins").
"""

import argparse
import re
import time
from pathlib import Path

import psycopg

from benchsrv import Server, cpu_seconds

REPO = Path(__file__).resolve().parents[2]
BATCH = re.compile(r'msg="batch committed" query=q batch=\d+ input_rows=(\d+) '
                   r'output_rows=\d+ late_rows=\d+ state_rows=(\d+)')


def datagen(name, cols, rows, seed, extra):
    return (f"CREATE STREAM {name} ({cols}) WITH (connector = 'datagen', "
            f"rows_per_second = 1000000000, number_of_rows = {rows}, seed = {seed}, "
            f"\"fields.ts.kind\" = 'sequence', \"fields.ts.start\" = 0, "
            f"\"fields.ts.step\" = 1000{extra})")


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--rows", type=int, default=1_000_000)
    ap.add_argument("--batch", type=int, default=100_000)
    ap.add_argument("--kind", default="table", choices=["table", "interval"])
    ap.add_argument("--bin", default=str(REPO / "build" / "src" / "sluiced"))
    args = ap.parse_args()

    with Server(args.bin, "--log-level", "debug") as srv:
        dsn, logpath, proc = srv.dsn, srv.log_path, srv.proc
        wm = ", WATERMARK FOR ts AS ts - INTERVAL '5 seconds'"
        with psycopg.connect(dsn, autocommit=True) as c:
            if args.kind == "table":
                c.execute("CREATE TABLE users (id BIGINT PRIMARY KEY, tier TEXT)")
                c.execute("INSERT INTO users VALUES " + ", ".join(
                    f"({i}, 'tier{i % 10}')" for i in range(1, 1001)))
                c.execute(datagen("events", "user_id BIGINT, ts TIMESTAMP" + wm, args.rows, 1,
                                  ', "fields.user_id.min" = 1, "fields.user_id.max" = 1000'))
                sql = ("SELECT window_start, u.tier, count(*) AS n FROM events e "
                       "JOIN users u ON u.id = e.user_id "
                       "GROUP BY WINDOW(e.ts, INTERVAL '10 seconds'), u.tier")
                total = args.rows
            else:
                for name, seed in (("imps", 1), ("clks", 2)):
                    c.execute(datagen(name, "ad BIGINT, ts TIMESTAMP" + wm, args.rows, seed,
                                      ', "fields.ad.min" = 1, "fields.ad.max" = 1000'))
                sql = ("SELECT window_start, count(*) AS n FROM imps i JOIN clks c "
                       "ON c.ad = i.ad AND c.ts BETWEEN i.ts AND i.ts + INTERVAL '1 second' "
                       "GROUP BY WINDOW(i.ts, INTERVAL '10 seconds')")
                total = 2 * args.rows
            time.sleep(0.2)     # all rows are available after rows/1e9 s
            cpu0, t0 = cpu_seconds(proc.pid), time.monotonic()
            c.execute(f"CREATE CONTINUOUS QUERY q WITH (trigger = 'available_now', "
                      f"output_mode = 'update', max_offsets_per_trigger = {args.batch}) "
                      f"AS {sql}")
            while True:
                done = BATCH.findall(logpath.read_text())
                if sum(int(r) for r, _ in done) >= total:
                    break
                time.sleep(0.05)
            wall, cpu = time.monotonic() - t0, cpu_seconds(proc.pid) - cpu0
            matches = c.execute("SELECT coalesce(sum(n), 0) FROM q").fetchone()[0]
        print(f"{args.kind} join: {args.rows} rows per input, batches of {args.batch}, "
              f"{len(done)} batches, {matches} joined rows, state after: {done[-1][1]} rows")
        print(f"  wall {wall:.2f} s: {total / wall / 1e6:.2f} M input rows/s")
        print(f"  server CPU {cpu:.2f} s: {total / cpu / 1e6:.2f} M input rows/s per busy core")


if __name__ == "__main__":
    main()
