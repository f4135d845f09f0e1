#!/usr/bin/env python3
"""Recovery time of a continuous query with about 1 GB of aggregate state.

    tools/bench/recovery_bench.py [--state-gb 1.0] [--batch N] [--runs 3] [--bin PATH]

Starts a release sluiced (build/src/sluiced: `meson setup build
--buildtype=release`) on a free loopback port with a temporary data
directory, a datagen stream whose k is a sequence and a continuous query in
update mode

    SELECT k / 400 AS grp, count(*) AS n, approx_count_distinct(v) AS d
    FROM g GROUP BY k / 400

with trigger '0' in batches of --batch rows: every 400 rows make a new group
whose state is 4,096 HyperLogLog registers plus a count (4,136 bytes with
the group key), so the state grows by about 10 bytes per row while each
batch touches few groups.  Once the state holds --state-gb GB (groups x the
bytes of one state value; RocksDB compresses it on disk, and the size on
disk, result table included, is printed too), the server is killed with
SIGKILL in the middle of its work, restarted on the same data directory,
and timed:

    ready     from the start of the new process to its "ready" line
              (catalog, RocksDB open with its WAL replayed, queries started)
    resumed   from the start to the commit-log entry of the first batch the
              new process committed (the replay of the batch the kill cut,
              when there was one, or the next one)

--runs kills and restarts in a row.  The figures go to docs/benchmarks.md
("Recovery").
"""

import argparse
import re
import signal
import sqlite3
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import psycopg

REPO = Path(__file__).resolve().parents[2]
ROWS_PER_GROUP = 400
# One group's state value: u32 + the group key (row-encoded int8, 13 bytes
# with its header) + per aggregate u32 + state: count 8, HLL 4,096; the key
# 'Q' + oid + window end + key.
STATE_BYTES = 4 + 13 + 4 + 8 + 4 + 4096 + 5 + 8 + 9


def dir_bytes(path):
    return sum(p.stat().st_size for p in Path(path).rglob("*") if p.is_file())


def last_commit(data):
    """The newest committed batch of the query (-1: none), from the catalog."""
    try:
        db = sqlite3.connect(f"file:{data / 'catalog.db'}?mode=ro", uri=True, timeout=5)
        try:
            row = db.execute("SELECT max(batch_id) FROM cq_commits").fetchone()
        finally:
            db.close()
    except sqlite3.Error:
        return -1
    return -1 if row[0] is None else row[0]


class Server:
    def __init__(self, binary, work):
        self.binary, self.work = binary, work
        self.data = work / "data"
        self.log_path = work / "sluiced.log"
        self.port = 0
        self.proc = None

    def start(self):
        """Starts the server; returns seconds until its ready line."""
        offset = self.log_path.stat().st_size if self.log_path.exists() else 0
        log = open(self.log_path, "ab")
        t0 = time.monotonic()
        self.proc = subprocess.Popen(
            [self.binary, "--listen", "127.0.0.1", "--port", str(self.port),
             "--data-dir", str(self.data), "--log-level", "info"],
            stdout=log, stderr=subprocess.STDOUT)
        self.t_start = t0
        self.log_offset = offset
        while time.monotonic() - t0 < 600:
            with open(self.log_path, "rb") as f:
                f.seek(offset)
                m = re.search(rb"ready.*-p (\d+)", f.read())
            if m:
                self.port = int(m.group(1))
                return time.monotonic() - t0
            if self.proc.poll() is not None:
                sys.exit("sluiced exited:\n" + self.log_path.read_text()[-3000:])
            time.sleep(0.01)
        sys.exit("no ready line")

    @property
    def dsn(self):
        return f"host=127.0.0.1 port={self.port} user=sluice dbname=sluice"

    def kill(self):
        self.proc.send_signal(signal.SIGKILL)
        self.proc.wait()

    def stop(self):
        self.proc.terminate()
        self.proc.wait(60)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--state-gb", type=float, default=1.0)
    ap.add_argument("--batch", type=int, default=500_000)
    ap.add_argument("--runs", type=int, default=3)
    ap.add_argument("--bin", default=str(REPO / "build" / "src" / "sluiced"))
    args = ap.parse_args()

    work = Path(tempfile.mkdtemp(prefix="sluice-recovery-bench-"))
    srv = Server(args.bin, work)
    srv.start()
    try:
        with psycopg.connect(srv.dsn, autocommit=True) as c:
            c.execute("""CREATE STREAM g (k BIGINT, v BIGINT)
                WITH (connector = 'datagen', rows_per_second = 1000000000, seed = 1,
                      "fields.k.kind" = 'sequence', "fields.k.start" = 1,
                      "fields.v.min" = 1, "fields.v.max" = 1000000)""")
            c.execute(f"""CREATE CONTINUOUS QUERY agg
                WITH (trigger = '0', output_mode = 'update',
                      max_offsets_per_trigger = {args.batch})
                AS SELECT k / {ROWS_PER_GROUP} AS grp, count(*) AS n,
                          approx_count_distinct(v) AS d
                   FROM g GROUP BY k / {ROWS_PER_GROUP}""")
        target = args.state_gb * 1e9
        t0 = time.monotonic()
        while True:
            done = last_commit(srv.data)
            groups = (done + 1) * args.batch // ROWS_PER_GROUP
            state = groups * STATE_BYTES
            size = dir_bytes(srv.data / "state")
            print(f"  {time.monotonic() - t0:6.0f} s: batch {done}, {groups:,} groups, "
                  f"state {state / 1e9:5.2f} GB, {size / 1e9:5.2f} GB on disk", flush=True)
            if state >= target:
                break
            time.sleep(5)
        print(f"state built: {groups:,} groups, {state / 1e9:.2f} GB of state, "
              f"{size / 1e9:.2f} GB on disk, in {time.monotonic() - t0:.0f} s")
        for run in range(args.runs):
            time.sleep(1.0)         # a batch is in flight: the kill cuts it
            before = last_commit(srv.data)
            srv.kill()
            size = dir_bytes(srv.data / "state")
            ready = srv.start()
            while last_commit(srv.data) <= before:
                time.sleep(0.005)
            resumed = time.monotonic() - srv.t_start
            with open(srv.log_path, "rb") as f:
                f.seek(srv.log_offset)
                replayed = b"replaying batch" in f.read()
            print(f"run {run + 1}: {size / 1e9:.2f} GB, last commit before the kill "
                  f"{before}; ready {ready:.2f} s, first batch committed after "
                  f"{resumed:.2f} s ({'replayed the cut batch' if replayed else 'no replay'})")
        srv.stop()
    finally:
        if srv.proc and srv.proc.poll() is None:
            srv.kill()
        print(f"data left in {work} (remove it by hand)")


if __name__ == "__main__":
    main()
