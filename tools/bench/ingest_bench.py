#!/usr/bin/env python3
"""Ingestion throughput: COPY of CSV rows into an internal stream, and INSERT from
concurrent clients, in both commit modes.

    tools/bench/ingest_bench.py [--rows N] [--clients N] [--inserts N] [--files-rows N]
                                [--bin PATH] [--only copy|insert|files] [--modes sync,group]

Starts a release sluiced (build/src/sluiced: `meson setup build --buildtype=release`)
on a free loopback port with a temporary data directory, once per commit mode
(--commit-mode=sync, then group).

COPY: N rows of CSV (default 10,000,000; an event id, a user id, a URL of 20-40
bytes, a timestamp; about 60 bytes a row) are generated once into a file under
/tmp, then sent with psql's \\copy (libpq streams the file) into
CREATE STREAM clicks (id BIGINT, user_id INT, url TEXT, ts TIMESTAMP).  Reported:
wall time, rows/s and MB/s over the wall time, and rows/s per busy core (the
server's user+system CPU time from /proc, which includes the RocksDB write).

INSERT: --clients connections (default 8), each making --inserts one-row INSERTs
(default 2,000) through psycopg, all at once.  Reported: rows/s and the RocksDB
writes the server logged (commit stats at shutdown).

FILES: --files-rows JSON lines (default 1,000,000, in 10 files, 1% malformed)
are put into a directory a files stream reads; timed from the rename of the
files into the stream's pattern until the stream and its dead letters count
every line.  Reported: lines/s and MB/s over the wall time.

Figures go to docs/benchmarks.md ("Ingestion").
"""

import argparse
import os
import random
import re
import shutil
import signal
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path

import psycopg

REPO = Path(__file__).resolve().parents[2]


def cpu_seconds(pid):
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    ticks = os.sysconf("SC_CLK_TCK")
    return (int(fields[11]) + int(fields[12])) / ticks


def make_csv(path, rows):
    """The CSV file, made once per row count (cached under /tmp)."""
    if path.exists():
        return
    rnd = random.Random(1)
    urls = [f"/page/{i}/" + "x" * rnd.randint(10, 30) for i in range(1000)]
    tmp = path.with_suffix(".part")
    with open(tmp, "w") as f:
        chunk = []
        for i in range(rows):
            s = i % 86400
            chunk.append(f"{i},{rnd.randint(1, 100000)},{urls[i % 1000]},"
                         f"2024-01-01 {s // 3600:02d}:{s // 60 % 60:02d}:{s % 60:02d}\n")
            if len(chunk) == 100_000:
                f.write("".join(chunk))
                chunk = []
        f.write("".join(chunk))
    tmp.rename(path)


class Server:
    def __init__(self, binary, mode):
        self.work = Path(tempfile.mkdtemp(prefix="sluice-ingest-bench-"))
        self.log_path = self.work / "sluiced.log"
        self.log = open(self.log_path, "wb")
        self.proc = subprocess.Popen(
            [binary, "--port", "0", "--data-dir", str(self.work / "data"),
             f"--commit-mode={mode}", "--max-message-size", str(1 << 26)],
            stdout=self.log, stderr=subprocess.STDOUT)
        for _ in range(300):
            m = re.search(r"ready.*-p (\d+)", self.log_path.read_text())
            if m:
                self.port = int(m.group(1))
                break
            time.sleep(0.05)
        else:
            sys.exit("no ready line from sluiced:\n" + self.log_path.read_text())
        self.dsn = f"host=127.0.0.1 port={self.port} user=sluice dbname=sluice"

    def stop(self):
        self.proc.send_signal(signal.SIGTERM)
        self.proc.wait(120)
        self.log.close()
        text = self.log_path.read_text()
        shutil.rmtree(self.work, ignore_errors=True)
        return text


def bench_copy(server, csv, rows):
    with psycopg.connect(server.dsn, autocommit=True) as c:
        c.execute("CREATE STREAM clicks (id BIGINT, user_id INT, url TEXT, ts TIMESTAMP)")
    size = csv.stat().st_size
    cpu0, t0 = cpu_seconds(server.proc.pid), time.monotonic()
    r = subprocess.run(["psql", server.dsn, "-X", "-v", "ON_ERROR_STOP=1", "-c",
                        f"\\copy clicks from '{csv}' with (format csv)"],
                       capture_output=True, text=True)
    wall, cpu = time.monotonic() - t0, cpu_seconds(server.proc.pid) - cpu0
    if r.returncode != 0 or f"COPY {rows}" not in r.stdout:
        sys.exit(f"COPY failed: {r.stdout} {r.stderr}")
    with psycopg.connect(server.dsn, autocommit=True) as c:
        assert c.execute("SELECT count(*) FROM clicks").fetchone()[0] == rows
    print(f"  COPY {rows} rows ({size / 1e6:.0f} MB): wall {wall:.2f} s, "
          f"{rows / wall / 1e6:.2f} M rows/s, {size / wall / 1e6:.0f} MB/s; "
          f"server CPU {cpu:.2f} s: {rows / cpu / 1e6:.2f} M rows/s per busy core")


def bench_insert(server, clients, inserts):
    with psycopg.connect(server.dsn, autocommit=True) as c:
        c.execute("CREATE STREAM hits (client INT, n INT, url TEXT)")
    errors = []
    start = threading.Barrier(clients + 1)

    def client(k):
        try:
            with psycopg.connect(server.dsn, autocommit=True) as c:
                start.wait()
                for n in range(inserts):
                    c.execute("INSERT INTO hits VALUES (%s, %s, '/some/page/url')", (k, n))
        except Exception as e:     # reported below
            errors.append(e)

    threads = [threading.Thread(target=client, args=(k,)) for k in range(clients)]
    for t in threads:
        t.start()
    start.wait()
    cpu0, t0 = cpu_seconds(server.proc.pid), time.monotonic()
    for t in threads:
        t.join()
    wall, cpu = time.monotonic() - t0, cpu_seconds(server.proc.pid) - cpu0
    if errors:
        sys.exit(f"INSERT failed: {errors[0]}")
    total = clients * inserts
    with psycopg.connect(server.dsn, autocommit=True) as c:
        assert c.execute("SELECT count(*) FROM hits").fetchone()[0] == total
    row_bytes = 4 + 4 + 15
    print(f"  INSERT {clients} clients x {inserts}: wall {wall:.2f} s, {total / wall:.0f} rows/s "
          f"({total * row_bytes / wall / 1e6:.2f} MB/s of values), server CPU {cpu:.2f} s")


def bench_files(server, rows):
    src = server.work / "files"
    src.mkdir()
    rnd = random.Random(2)
    size = 0
    per_file = rows // 10
    bad = 0
    for k in range(10):
        lines = []
        for i in range(k * per_file, (k + 1) * per_file):
            if i % 100 == 7:
                lines.append('{"id": %d, "user": oops}' % i)
                bad += 1
            else:
                lines.append('{"id": %d, "user": %d, "url": "/p/%d", "ts": "2024-01-01 00:%02d:%02d"}'
                             % (i, rnd.randint(1, 100000), i % 1000, i // 60 % 60, i % 60))
        text = "\n".join(lines) + "\n"
        size += len(text)
        (src / f"part-{k}.tmp").write_text(text)
    with psycopg.connect(server.dsn, autocommit=True) as c:
        c.execute(f"CREATE STREAM ev (id BIGINT, \"user\" INT, url TEXT, ts TIMESTAMP) WITH ("
                  f"connector = 'files', path = '{src}', format = 'json', "
                  f"pattern = '*.jsonl', poll_interval = '50 ms')")
        cpu0, t0 = cpu_seconds(server.proc.pid), time.monotonic()
        for k in range(10):
            (src / f"part-{k}.tmp").rename(src / f"part-{k}.jsonl")
        while True:
            n = c.execute("SELECT sluice_stream_stat('ev', 'records')").fetchone()[0]
            if n == rows:
                break
            time.sleep(0.02)
        wall, cpu = time.monotonic() - t0, cpu_seconds(server.proc.pid) - cpu0
        good = c.execute("SELECT count(*) FROM ev").fetchone()[0]
        dead = c.execute("SELECT count(*) FROM ev_dead_letters").fetchone()[0]
        assert (good, dead) == (rows - bad, bad), (good, dead)
    print(f"  FILES {rows} JSON lines in 10 files ({size / 1e6:.0f} MB, {bad} bad): "
          f"wall {wall:.2f} s, {rows / wall / 1e6:.2f} M lines/s, {size / wall / 1e6:.0f} MB/s; "
          f"server CPU {cpu:.2f} s: {rows / cpu / 1e6:.2f} M lines/s per busy core")


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--rows", type=int, default=10_000_000)
    ap.add_argument("--clients", type=int, default=8)
    ap.add_argument("--inserts", type=int, default=2000)
    ap.add_argument("--files-rows", type=int, default=1_000_000)
    ap.add_argument("--only", choices=["copy", "insert", "files"])
    ap.add_argument("--modes", default="sync,group")
    ap.add_argument("--bin", default=str(REPO / "build" / "src" / "sluiced"))
    args = ap.parse_args()
    csv = Path(tempfile.gettempdir()) / f"sluice-ingest-bench-{args.rows}.csv"
    if args.only in (None, "copy"):
        make_csv(csv, args.rows)
    for mode in args.modes.split(","):
        print(f"commit mode {mode}:")
        server = Server(args.bin, mode)
        try:
            if args.only in (None, "copy"):
                bench_copy(server, csv, args.rows)
            if args.only in (None, "insert"):
                bench_insert(server, args.clients, args.inserts)
            if args.only in (None, "files"):
                bench_files(server, args.files_rows)
        finally:
            log = server.stop()
        m = re.search(r"appends=(\d+) writes=(\d+)", log)
        if m:
            print(f"  server: {m.group(1)} appends in {m.group(2)} RocksDB writes")


if __name__ == "__main__":
    main()
