"""What the Spark and Flink runners share (standard library only: they import
it from their own virtual environments): their command line, and the CPU
time of a process and all its descendants, from /proc.

    args = parse_args("spark")
    cpu0 = tree_cpu_seconds(os.getpid())
    ... run the job (the JVM is a child of this Python process) ...
    cpu = tree_cpu_seconds(os.getpid()) - cpu0

A process's user+system time counts all its threads; a child that exited
and was waited for is in its parent's cutime/cstime, which are added too,
so a short-lived helper (spark-submit's launcher) is not lost.
"""

import argparse
import json
import os
import time
from pathlib import Path

_TICKS = os.sysconf("SC_CLK_TCK")


def _stat(pid):
    """(ppid, utime + stime + cutime + cstime in ticks) of PID, or None."""
    try:
        text = Path(f"/proc/{pid}/stat").read_text()
    except OSError:
        return None
    fields = text.rsplit(")", 1)[1].split()
    # fields[0] is the state; ppid is field 4 of stat(5), utime..cstime 14..17.
    return int(fields[1]), sum(int(f) for f in fields[11:15])


def tree_cpu_seconds(root):
    """CPU seconds of ROOT and every live descendant (and their reaped children)."""
    parent, ticks = {}, {}
    for entry in os.listdir("/proc"):
        if entry.isdigit():
            st = _stat(int(entry))
            if st is not None:
                parent[int(entry)], ticks[int(entry)] = st
    total = 0
    for pid, t in ticks.items():
        p = pid
        while p and p != root:
            p = parent.get(p)
        if p == root:
            total += t
    return total / _TICKS


def timed_start():
    """The start of the timed span: (CPU seconds of this process's tree,
    time.monotonic()), also printed as a line `TIMED {"cpu0": ..., "t0":
    ...}` so that nexmark_peers.py --peer-cap can take a run it stops
    unfinished as a lower bound over the same span (the monotonic clock is
    the machine's)."""
    cpu0, t0 = tree_cpu_seconds(os.getpid()), time.monotonic()
    print("TIMED " + json.dumps({"cpu0": cpu0, "t0": t0}), flush=True)
    return cpu0, t0


def tree_peak_rss_mib(root):
    """Sum over ROOT's tree of each process's peak RSS (VmHWM), in MiB."""
    total = 0
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        pid = int(entry)
        p = pid
        while p and p != root:
            st = _stat(p)
            p = st[0] if st else None
        if p != root:
            continue
        try:
            for line in Path(f"/proc/{pid}/status").read_text().splitlines():
                if line.startswith("VmHWM:"):
                    total += int(line.split()[1])
        except OSError:
            pass
    return total / 1024


def parse_args(engine):
    """The runners' command line (tools/bench/nexmark_peers.py passes it)."""
    ap = argparse.ArgumentParser(description=f"One Nexmark query on {engine}")
    ap.add_argument("--query", required=True, help="q0, q1, ...: ENGINE/QUERY.sql")
    ap.add_argument("--bootstrap", required=True, help="the Kafka broker, host:port")
    ap.add_argument("--jars", required=True, help="folder of the Kafka connector's jars")
    ap.add_argument("--out", required=True, help="folder for the result files")
    ap.add_argument("--cores", type=int, default=2, help="local[N] / parallelism")
    ap.add_argument("--heap", default="3g", help="the JVM's -Xmx")
    ap.add_argument("--max-offsets", type=int, default=0,
                    help="Spark's maxOffsetsPerTrigger (0: none, one batch)")
    ap.add_argument("--state", default="rocksdb", choices=("rocksdb", "memory"),
                    help="state in RocksDB (Spark's RocksDBStateStoreProvider, Flink's "
                         "rocksdb backend) or on the JVM heap (their defaults)")
    ap.add_argument("--signature", required=True, type=json.loads,
                    help='JSON: {"keys": [...], "sums": [[kind, column], ...]}')
    return ap.parse_args()
