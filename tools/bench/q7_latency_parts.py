#!/usr/bin/env python3
"""Where the whole q7's window latency goes (docs/benchmarks-history.md, "The
join's kept rows in memory, its input in slices").

Needs q7 as the pipeline it was before it became one query (d90aa33's
tools/nexmark/queries/q7.sql: `git show d90aa33:tools/nexmark/queries/q7.sql
> DIR/q7.sql`), given with --query-dir DIR; tools/nexmark/queries/q7.sql
is one query now (nexmark_bench.py --latency --queries q7 measures it).

Runs the q7 pipeline (q7_max INTO q7_max_bids, then the join) with trigger
'0' at 10,000 events/s, like `nexmark_bench.py --latency --queries q7`, and
prints per closed window: when the q7_max batch that emitted it started and
its duration, when the join batch that matched it started and its
duration (and that batch's read_ms -- the probe of the kept rows --,
execute_ms -- keeping and evicting them -- and state_commit_ms), and the
arrival of its first row at a SUBSCRIBE client -- each in
ms after the creation of the event that closed the window (window end + 4
s).  sys.query_progress is polled every 0.1 s.  With --perf OUT, also
records the server with `perf record -e cpu-clock` (call graphs by frame
pointer) for the measured seconds.

    .venv/bin/python tools/bench/q7_latency_parts.py --bin build-rel/src/sluiced \\
        --seconds 45 [--perf /tmp/q7.data]
"""
import argparse
import subprocess
import sys
import threading
import time
from datetime import timezone
from pathlib import Path

import psycopg

sys.path.insert(0, str(Path(__file__).resolve().parent))
import nexmark_bench as nb  # noqa: E402


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--bin", default=str(nb.REPO / "build-rel" / "src" / "sluiced"))
    ap.add_argument("--seconds", type=float, default=45.0)
    ap.add_argument("--perf")
    ap.add_argument("--query-dir", type=Path, required=True,
                    help="a directory whose q7.sql is the two-stage pipeline")
    args = ap.parse_args()
    q7 = nb.nexmark_query_sql("q7", "trigger = '0'", args.query_dir)
    if "CREATE CONTINUOUS QUERY q7_max" not in q7:
        sys.exit(f"{args.query_dir}/q7.sql is not the q7_max pipeline (see --help)")
    rows, prog, ready = [], {}, []
    stop = threading.Event()
    with nb.Server(args.bin) as srv, psycopg.connect(srv.dsn, autocommit=True) as c:
        c.execute(nb.streams_sql(events_per_second=10000, first_event_rate=10000))

        def sub():
            with psycopg.connect(srv.dsn, autocommit=True) as conn:
                ready.append(conn)
                try:
                    for row in conn.cursor().stream("SUBSCRIBE q7"):
                        rows.append((time.time(), row))
                        if stop.is_set():
                            break
                except psycopg.errors.QueryCanceled:
                    pass

        c.execute(q7)
        t = threading.Thread(target=sub, daemon=True)
        t.start()
        time.sleep(3.0)
        perf = None
        if args.perf:
            perf = subprocess.Popen(["perf", "record", "-e", "cpu-clock", "-F", "2000",
                                     "--call-graph", "fp", "-o", args.perf,
                                     "-p", str(srv.proc.pid)],
                                    stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        with psycopg.connect(srv.dsn, autocommit=True) as p:
            end = time.time() + args.seconds
            while time.time() < end:
                for q, b, st, d, inp, rd, ex, wr in p.execute(
                        "SELECT query, batch_id, started_at, duration_ms, input_rows, "
                        "read_ms, execute_ms, state_commit_ms "
                        "FROM sys.query_progress WHERE output_rows > 0"):
                    prog[(q, b)] = (st.replace(tzinfo=timezone.utc).timestamp(), d, inp,
                                    rd, ex, wr)
                time.sleep(0.1)
        if perf is not None:
            perf.send_signal(2)
            perf.wait()
        batches = c.execute("SELECT name, last_batch_id + 1 FROM sys.queries").fetchall()
        stop.set()
        if ready:
            ready[0].cancel()
        t.join(30)
    first = {}
    for arrived, row in rows:
        dt = row[5].replace(tzinfo=timezone.utc).timestamp()
        first.setdefault((int(dt) // 10 + 1) * 10, arrived)
    print(f"batches {batches}; ms after the closing event:")
    print("window_end   max_start  max_ms  join_start  join_ms  join_rows  arrival"
          "  (join: read_ms  execute_ms  state_commit_ms)")
    nan = (float("nan"),) * 6
    for e, arrived in sorted(first.items()):
        close = e + 4
        m = min((v for (q, _), v in prog.items() if q == "q7_max" and v[0] >= close - 1),
                default=nan)
        j = min((v for (q, _), v in prog.items() if q == "q7" and v[0] >= close - 1),
                default=nan)
        print(f"{e}  {(m[0] - close) * 1e3:9.1f}  {m[1]:6.1f}  {(j[0] - close) * 1e3:10.1f}"
              f"  {j[1]:7.1f}  {j[2]:9}  {(arrived - close) * 1e3:7.1f}"
              f"  ({j[3]:.1f}  {j[4]:.1f}  {j[5]:.1f})")


if __name__ == "__main__":
    main()
