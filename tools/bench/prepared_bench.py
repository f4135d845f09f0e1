#!/usr/bin/env python3
"""Many named prepared statements on one connection, and what another client
sees meanwhile (issue 19, item 13).

    tools/bench/prepared_bench.py [--statements N] [--bin PATH]

Starts sluiced (build/src/sluiced by default) on a free loopback port with
--max-prepared-statements N, then one connection sends N pipelined Parse
messages (`SELECT i`, named s0 ... sN-1) and a Sync, while another process
runs `SELECT 1` every 10 ms.  Reported: the wall time of the N Parses and
the slowest `SELECT 1` meanwhile (a connection handles its input for at
most 2 ms a loop turn, src/server/session.c; statements are found in a
hash table, src/server/names.c).
"""

import argparse
import multiprocessing
import sys
import time
from pathlib import Path

import psycopg

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT / "tests"))
sys.path.insert(0, str(ROOT / "tools" / "bench"))

from benchsrv import Server  # noqa: E402
from pgwire_raw import Raw, parse, sync  # noqa: E402


def pinger(dsn, stop, out):
    """SELECT 1 every 10 ms until stop; puts (slowest seconds, count)."""
    worst, n = 0.0, 0
    with psycopg.connect(dsn, autocommit=True) as c:
        while not stop.is_set():
            t = time.monotonic()
            c.execute("SELECT 1").fetchone()
            worst, n = max(worst, time.monotonic() - t), n + 1
            time.sleep(0.01)
    out.put((worst, n))


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--statements", type=int, default=20000)
    ap.add_argument("--bin", default=str(ROOT / "build" / "src" / "sluiced"))
    a = ap.parse_args()
    with Server(a.bin, "--max-prepared-statements", str(max(a.statements, 1))) as srv:
        port = int(srv.dsn.split("port=")[1].split()[0])
        stop, out = multiprocessing.Event(), multiprocessing.Queue()
        p = multiprocessing.Process(target=pinger, args=(srv.dsn, stop, out))
        p.start()
        batch = b"".join([parse(f"SELECT {i}", f"s{i}") for i in range(a.statements)] +
                         [sync()])
        time.sleep(0.5)
        with Raw(port, timeout=600) as raw:
            raw.startup()
            t = time.monotonic()
            raw.send(batch)
            msgs = raw.until_ready()
            wall = time.monotonic() - t
        stop.set()
        worst, n = out.get()
        p.join()
    errors = sum(1 for m in msgs if m[0] == b"E")
    print(f"{a.statements} Parses: {wall:.2f} s ({errors} errors); "
          f"slowest SELECT 1 of another client meanwhile: {worst * 1000:.0f} ms (of {n})")


if __name__ == "__main__":
    main()
