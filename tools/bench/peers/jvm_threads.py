#!/usr/bin/env python3
"""Where a JVM's CPU time goes, by thread, watched from outside: JIT
compilers, garbage collection, the rest (the engine's own threads).

    python3 tools/bench/peers/jvm_threads.py --root PID [--log BENCH_STDERR]
        [--interval 0.5] [--out FILE]

Beside a running tools/bench/nexmark_peers.py (PID: its process): every
INTERVAL seconds it reads /proc/PID/task/TID/stat of every java process
under ROOT (the Spark driver, PyFlink's gateway, the Kafka broker) and keeps
each thread's latest user+system time.  When a JVM exits it prints one JSON
line (and appends it to --out): the JVM's kind (spark, flink, broker, from
its command line), what the bench was running when the JVM appeared (the
last "qN: ENGINE run K of R ..." line of --log), its life in seconds and its
CPU seconds split by thread name:

- jit: "C1 CompilerThre", "C2 CompilerThre" (HotSpot's JIT compilers)
- gc: "GC Thread#N", "G1 ..." (G1's parallel, concurrent and refinement
  threads) and "VM Thread" (safepoint operations, GC pauses among them)
- other: every other thread (the engine's tasks, Kafka clients, Netty,
  Python's Py4J gateway, ...)

Read-only: it only reads /proc, so it changes nothing in the bench's
figures but its own small CPU (not counted in them: it is no child of the
bench).  Threads that end between two reads lose at most their last
INTERVAL; the whole JVM life is counted, start-up included (the bench's
timed span starts after the SparkSession / TableEnvironment exist), so the
split is of the JVM's whole life, not of the timed span.
"""

import argparse
import json
import os
import re
import sys
import time
from pathlib import Path

TICKS = os.sysconf("SC_CLK_TCK")
RUN_RE = re.compile(r"^(q\d+): (\w+) run (\d+) of (\d+) \.\.\.$", re.M)


def stat(path):
    """(comm, ppid, utime + stime ticks) of a /proc/.../stat, or None."""
    try:
        text = Path(path).read_text()
    except OSError:
        return None
    comm = text[text.index("(") + 1:text.rindex(")")]
    fields = text.rsplit(")", 1)[1].split()
    return comm, int(fields[1]), int(fields[11]) + int(fields[12])


def kind_of(pid):
    try:
        cmd = Path(f"/proc/{pid}/cmdline").read_bytes().replace(b"\0", b" ").decode()
    except OSError:
        return "?"
    for needle, kind in (("kafka.Kafka", "broker"), ("org.apache.spark", "spark"),
                         ("pyspark", "spark"), ("flink", "flink")):
        if needle in cmd:
            return kind
    return "java"


def category(name):
    if name.startswith(("C1 CompilerThre", "C2 CompilerThre")):
        return "jit"
    if name.startswith(("GC Thread", "G1 ", "VM Thread")):
        return "gc"
    return "other"


def under(pid, root, parents):
    while pid and pid != root:
        pid = parents.get(pid)
    return pid == root


def last_run(log):
    """The bench's last 'qN: ENGINE run K of R ...' line, or None."""
    if not log:
        return None
    try:
        runs = RUN_RE.findall(Path(log).read_text(errors="replace"))
    except OSError:
        return None
    return " ".join(runs[-1][:2]) + f" run {runs[-1][2]}" if runs else None


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--root", type=int, required=True)
    ap.add_argument("--log", help="the bench's stderr (what it is running)")
    ap.add_argument("--interval", type=float, default=0.5)
    ap.add_argument("--out", help="also append each JVM's line to this file")
    args = ap.parse_args()
    jvms = {}  # pid -> {"kind", "run", "t0", "threads": {tid: (name, ticks)}}

    def report(pid):
        j = jvms.pop(pid)
        split = {"jit": 0, "gc": 0, "other": 0}
        for name, ticks in j["threads"].values():
            split[category(name)] += ticks
        line = {"kind": j["kind"], "run": j["run"], "life_s": round(time.monotonic() - j["t0"], 1),
                "cpu_s": round(sum(split.values()) / TICKS, 2),
                **{k: round(v / TICKS, 2) for k, v in split.items()}}
        print(json.dumps(line), flush=True)
        if args.out:
            with open(args.out, "a") as fh:
                fh.write(json.dumps(line) + "\n")

    while os.path.exists(f"/proc/{args.root}"):
        parents, comms = {}, {}
        for entry in os.listdir("/proc"):
            if entry.isdigit():
                st = stat(f"/proc/{entry}/stat")
                if st:
                    comms[int(entry)], parents[int(entry)] = st[0], st[1]
        live = {pid for pid, comm in comms.items()
                if comm == "java" and under(pid, args.root, parents)}
        for pid in live:
            j = jvms.setdefault(pid, {"kind": kind_of(pid), "run": last_run(args.log),
                                      "t0": time.monotonic(), "threads": {}})
            try:
                tids = os.listdir(f"/proc/{pid}/task")
            except OSError:
                continue
            for tid in tids:
                st = stat(f"/proc/{pid}/task/{tid}/stat")
                if st:
                    j["threads"][int(tid)] = (st[0], st[2])
        for pid in [p for p in jvms if p not in live]:
            report(pid)
        time.sleep(args.interval)
    for pid in list(jvms):
        report(pid)


if __name__ == "__main__":
    sys.exit(main())
