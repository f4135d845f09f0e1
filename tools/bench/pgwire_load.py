#!/usr/bin/env python3
"""pgwire_load.py -- many concurrent connections running prepared queries.

    .venv/bin/python tools/bench/pgwire_load.py [--connections 1000]
        [--queries 100] [--sluiced build-rel/src/sluiced | --port PORT]
        [--auth trust|scram] [--tls]

Starts sluiced (a release build by default; --port uses a running server
instead) with --debug-loop-lag, opens N connections with asyncpg (at most
--connect-concurrency handshakes at a time), waits until all N are open,
then has every connection run --queries executions of one prepared statement
(`SELECT $1::int4 + 1`: Parse and Describe once, then Bind/Execute/Sync with
binary formats) concurrently.  Every result is checked; any failure makes
the exit status 1.  At the end the server is stopped with SIGTERM and its
"loop lag" log line (the worst and the percentile lateness of a 10 ms timer,
i.e. the longest the event loop was stalled) is reported with the client's
figures: connect time, query latency percentiles, throughput, the server's
peak RSS.  The open-file limit is raised to its hard limit first (each
connection is one descriptor on each side).

Everything runs on 127.0.0.1.
"""

import argparse
import asyncio
import os
import re
import resource
import signal
import ssl
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import asyncpg

REPO = Path(__file__).resolve().parents[2]


def percentile(values, q):
    if not values:
        return 0.0
    values = sorted(values)
    return values[min(len(values) - 1, int(q * len(values)))]


def raise_fd_limit(need):
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    want = hard if hard != resource.RLIM_INFINITY else max(need, soft)
    if soft < want:
        resource.setrlimit(resource.RLIMIT_NOFILE, (want, hard))
    soft = resource.getrlimit(resource.RLIMIT_NOFILE)[0]
    if soft < need:
        sys.exit(f"open-file limit {soft} is below the {need} needed: raise ulimit -n")
    return soft


def make_certs(d):
    subj = "/CN=127.0.0.1"
    subprocess.run(["openssl", "req", "-x509", "-newkey", "rsa:2048", "-nodes", "-days",
                    "1", "-subj", subj, "-addext", "subjectAltName=IP:127.0.0.1",
                    "-keyout", f"{d}/key.pem", "-out", f"{d}/cert.pem"],
                   check=True, capture_output=True)
    return f"{d}/cert.pem", f"{d}/key.pem"


def start_server(binary, workdir, args):
    log_path = Path(workdir) / "sluiced.log"
    log = open(log_path, "wb")
    proc = subprocess.Popen([binary, "--listen", "127.0.0.1", "--port", "0",
                             "--data-dir", f"{workdir}/data", "--debug-loop-lag",
                             "--max-connections", str(args.connections + 100),
                             *(["--config", f"{workdir}/sluiced.conf"] if args.config else [])],
                            stdout=log, stderr=subprocess.STDOUT)
    deadline = time.monotonic() + 30
    while time.monotonic() < deadline:
        m = re.search(r"ready.*psql -h \S+ -p (\d+)", log_path.read_text(errors="replace"))
        if m:
            return proc, int(m.group(1)), log_path
        if proc.poll() is not None:
            sys.exit(f"sluiced exited: {log_path.read_text()}")
        time.sleep(0.05)
    proc.kill()
    sys.exit("sluiced did not become ready")


async def run(args, port, tls_ctx):
    sem = asyncio.Semaphore(args.connect_concurrency)
    connect_times, latencies, failures = [], [], []
    user, password = ("bench", "bench-pw") if args.auth == "scram" else ("sluice", None)

    async def connect(i):
        async with sem:
            t0 = time.perf_counter()
            for attempt in range(5):
                try:
                    conn = await asyncpg.connect(host="127.0.0.1", port=port, user=user,
                                                 password=password, database="sluice",
                                                 ssl=tls_ctx or False, timeout=60)
                    break
                except (OSError, asyncio.TimeoutError) as exc:
                    if attempt == 4:
                        raise
                    failures.append(f"connect {i} retry: {exc!r}")
                    await asyncio.sleep(0.2 * (attempt + 1))
            connect_times.append(time.perf_counter() - t0)
            return conn

    t_connect = time.perf_counter()
    conns = await asyncio.gather(*(connect(i) for i in range(args.connections)),
                                 return_exceptions=True)
    t_connect = time.perf_counter() - t_connect
    bad = [c for c in conns if isinstance(c, BaseException)]
    conns = [c for c in conns if not isinstance(c, BaseException)]
    failures += [f"connect: {c!r}" for c in bad]

    async def work(conn, i):
        stmt = await conn.prepare("SELECT $1::int4 + 1")
        for k in range(args.queries):
            t0 = time.perf_counter()
            v = await stmt.fetchval(i * args.queries + k)
            latencies.append(time.perf_counter() - t0)
            if v != i * args.queries + k + 1:
                failures.append(f"conn {i} query {k}: {v}")

    t_work = time.perf_counter()
    results = await asyncio.gather(*(work(c, i) for i, c in enumerate(conns)),
                                   return_exceptions=True)
    t_work = time.perf_counter() - t_work
    failures += [f"work: {r!r}" for r in results if isinstance(r, BaseException)]
    await asyncio.gather(*(c.close() for c in conns), return_exceptions=True)
    return dict(connected=len(conns), t_connect=t_connect, t_work=t_work,
                connect_times=connect_times, latencies=latencies, failures=failures)


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[1])
    ap.add_argument("--connections", type=int, default=1000)
    ap.add_argument("--queries", type=int, default=100)
    ap.add_argument("--connect-concurrency", type=int, default=100)
    ap.add_argument("--sluiced", default=str(REPO / "build-rel" / "src" / "sluiced"))
    ap.add_argument("--port", type=int, help="use a running server instead")
    ap.add_argument("--auth", choices=["trust", "scram"], default="trust")
    ap.add_argument("--tls", action="store_true")
    args = ap.parse_args()
    args.config = args.auth == "scram" or args.tls

    limit = raise_fd_limit(args.connections * 2 + 200)
    workdir = tempfile.mkdtemp(prefix="sluice-bench-")
    tls_ctx = None
    proc = log_path = None
    try:
        if args.port:
            port = args.port
        else:
            lines = []
            if args.tls:
                cert, key = make_certs(workdir)
                lines += ["ssl = on", f"ssl_cert_file = '{cert}'", f"ssl_key_file = '{key}'"]
            if args.auth == "scram":
                lines += ["user.bench.password = 'bench-pw'",
                          "hba = 'host all bench 127.0.0.1/32 scram-sha-256'"]
            Path(workdir, "sluiced.conf").write_text("\n".join(lines) + "\n")
            proc, port, log_path = start_server(args.sluiced, workdir, args)
        if args.tls:
            tls_ctx = ssl.create_default_context()
            tls_ctx.check_hostname = False
            tls_ctx.verify_mode = ssl.CERT_NONE
        r = asyncio.run(run(args, port, tls_ctx))
        peak_rss = None
        if proc is not None:
            if proc.poll() is not None:
                sys.exit(f"sluiced exited with {proc.returncode} during the run; log:\n"
                         + log_path.read_text(errors="replace")[-3000:])
            status = Path(f"/proc/{proc.pid}/status").read_text()
            peak_rss = int(re.search(r"VmHWM:\s+(\d+)", status).group(1)) // 1024
            proc.send_signal(signal.SIGTERM)
            proc.wait(30)
    finally:
        if proc is not None and proc.poll() is None:
            proc.kill()
    total = len(r["latencies"])
    print(f"connections      {r['connected']}/{args.connections} "
          f"(auth {args.auth}, tls {'on' if args.tls else 'off'}, fd limit {limit})")
    print(f"connect phase    {r['t_connect']:.2f} s; per connection p50 "
          f"{percentile(r['connect_times'], .5) * 1e3:.1f} ms, p99 "
          f"{percentile(r['connect_times'], .99) * 1e3:.1f} ms")
    print(f"queries          {total} in {r['t_work']:.2f} s = "
          f"{total / r['t_work']:.0f} queries/s")
    print(f"query latency    p50 {percentile(r['latencies'], .5) * 1e3:.2f} ms, p99 "
          f"{percentile(r['latencies'], .99) * 1e3:.2f} ms, max "
          f"{max(r['latencies'], default=0) * 1e3:.2f} ms")
    if log_path is not None:
        m = re.search(r'msg="loop lag" (.*)', log_path.read_text(errors="replace"))
        print(f"server loop lag  {m.group(1) if m else '(no loop lag line)'}")
        print(f"server peak RSS  {peak_rss} MiB")
    if r["failures"]:
        print(f"FAILURES         {len(r['failures'])}; first: {r['failures'][:5]}")
    ok = (r["connected"] == args.connections
          and total == args.connections * args.queries
          and not [f for f in r["failures"] if "retry" not in f])
    print("result           " + ("ok" if ok else "FAILED"))
    sys.exit(0 if ok else 1)


if __name__ == "__main__":
    main()
