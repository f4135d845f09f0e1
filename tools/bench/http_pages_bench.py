#!/usr/bin/env python3
"""How fast the HTTP pages are served and loaded with many continuous queries.

    tools/bench/http_pages_bench.py [--queries N] [--requests N] [--loads N]
                                    [--bin PATH ...]

For each --bin (default build/src/sluiced; give two to compare a build
before and after a change in one run), starts sluiced on a free loopback
port with a temporary data directory and the HTTP listener, creates N
internal streams, each with a windowed count (trigger 1 second) over it,
feeds each 100 rows and waits until every query committed a batch (as
tools/bench/metrics_bench.py does); then, while the queries run:

- requests the overview (/) and a query's page (/queries/q0) --requests
  times each over plain HTTP and reports the wall time until the whole
  response is read (median, 90th percentile, max) and its bytes;
- loads the overview --loads times in headless Chromium (tests/chromium.py,
  Debian's chromium over the DevTools protocol) and reports the
  navigation's time to the load event (the page parsed, laid out, its
  script run), median and max.

The pages are drawn on the server's loop thread: the server's side of a
request is time the loop spends away from the sockets.  The figures go to
docs/benchmarks.md ("HTTP pages").
"""

import argparse
import statistics
import sys
import tempfile
import time
import urllib.request
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from benchsrv import Server  # noqa: E402
from metrics_bench import http_port, start_queries  # noqa: E402

REPO = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(REPO / "tests"))
from chromium import Browser  # noqa: E402


def fetch(port, path):
    with urllib.request.urlopen(f"http://127.0.0.1:{port}{path}", timeout=60) as r:
        return r.read()


def timed(port, path, n):
    fetch(port, path)   # warm
    times = []
    for _ in range(n):
        t0 = time.perf_counter()
        body = fetch(port, path)
        times.append(time.perf_counter() - t0)
    times.sort()
    return {"median_ms": statistics.median(times) * 1e3,
            "p90_ms": times[int(len(times) * 0.9)] * 1e3,
            "max_ms": times[-1] * 1e3, "bytes": len(body)}


def bench(binary, nqueries, nrequests, nloads):
    with Server(binary, "--http-port", "0") as srv:
        port = http_port(srv)
        start_queries(srv, nqueries)
        out = {"overview": timed(port, "/", nrequests),
               "query": timed(port, "/queries/q0", nrequests)}
        loads = []
        with tempfile.TemporaryDirectory() as profile, Browser(profile) as b:
            for _ in range(nloads + 1):
                b.load(f"http://127.0.0.1:{port}/?refresh=0")
                # links to the queries' pages (a build before the overview's
                # table has them too)
                rows = b.eval("document.querySelectorAll('a[href^=\"/queries/\"]').length")
                if rows != nqueries:
                    sys.exit(f"the overview links {rows} queries, not {nqueries}")
                loads.append(b.eval("(() => { const n = performance.getEntriesByType("
                                    "'navigation')[0]; return n.loadEventEnd - n.startTime; })()"))
        loads = sorted(loads[1:])   # the first warms the browser
        out["chromium"] = {"median_ms": statistics.median(loads), "max_ms": loads[-1]}
    return out


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--queries", type=int, default=100)
    ap.add_argument("--requests", type=int, default=100)
    ap.add_argument("--loads", type=int, default=10)
    ap.add_argument("--bin", action="append")
    a = ap.parse_args()
    for binary in a.bin or [str(REPO / "build" / "src" / "sluiced")]:
        r = bench(binary, a.queries, a.requests, a.loads)
        for page in ("overview", "query"):
            p = r[page]
            print(f"{binary}: {a.queries} queries, {page} page over HTTP, {a.requests} "
                  f"requests: median {p['median_ms']:.2f} ms, p90 {p['p90_ms']:.2f} ms, "
                  f"max {p['max_ms']:.2f} ms; {p['bytes']} bytes")
        c = r["chromium"]
        print(f"{binary}: {a.queries} queries, overview loaded in Chromium {a.loads} times: "
              f"median {c['median_ms']:.1f} ms, max {c['max_ms']:.1f} ms to the load event")


if __name__ == "__main__":
    main()
