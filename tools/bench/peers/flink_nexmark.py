#!/usr/bin/env python3
"""One Nexmark query on Apache Flink (PyFlink's Table API, local MiniCluster).

Run by tools/bench/nexmark_peers.py with tools/bench/peers/.venv-flink's
Python; by hand:

    .venv-flink/bin/python flink_nexmark.py --query q5 --bootstrap 127.0.0.1:PORT \
        --topic bid --jars .jars-flink --out /tmp/x --cores 2 --heap 3g \
        --signature '{"keys": [...], "sums": [...]}'

Starts PyFlink's gateway JVM (-Xmx HEAP) in streaming mode with parallelism
CORES, creates the Kafka table of flink/streams.sql (a bounded scan from the
earliest to the latest offsets at start, 4-second watermark) and runs the
INSERT of flink/QUERY.sql into CSV files under OUT.  The timed part is from
submitting the INSERT to the job's end (it includes the local MiniCluster's
start, which PyFlink does per job); CPU time is this process's tree (Python
and the JVM) over the same span, from /proc.  The job's own net runtime
(JobExecutionResult) is reported beside it.

Then, untimed, it reads the CSV files back and prints the signature:
count(*) and the sums the caller asks for (window queries emit each
window's row once, so the rows are the final result).  The last line of
stdout is RESULT {json}.
"""

import calendar
import csv
import json
import os
import re
import sys
import tempfile
import time
from datetime import datetime
from decimal import Decimal
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))

from runner import parse_args, tree_cpu_seconds, tree_peak_rss_mib  # noqa: E402


def statements(path, subst):
    """The ;-terminated statements of PATH, ${name} replaced, comments dropped."""
    text = re.sub(r"\$\{(\w+)\}", lambda m: subst[m.group(1)], path.read_text())
    text = "\n".join(line for line in text.splitlines() if not line.lstrip().startswith("--"))
    return [s.strip() for s in text.split(";") if s.strip()]


def epoch_ms(text):
    """Milliseconds since 1970 of a UTC timestamp as Flink's CSV writes it."""
    dt = datetime.fromisoformat(text)
    return calendar.timegm(dt.timetuple()) * 1000 + dt.microsecond // 1000


def signature(out, names, sig):
    """count(*) and SIG's sums over every CSV file under OUT."""
    idx = [(kind, names.index(col)) for kind, col in sig["sums"]]
    count, sums = 0, [Decimal(0)] * len(idx)
    for f in sorted(p for p in Path(out).rglob("*") if p.is_file()):
        with open(f, newline="") as fh:
            for row in csv.reader(fh):
                count += 1
                for i, (kind, c) in enumerate(idx):
                    v = row[c]
                    if v != "":
                        sums[i] += epoch_ms(v) if kind == "sum_ms" else Decimal(v)
    return [count, *sums]


def main():
    args = parse_args("Flink")
    sig = args.signature
    out = Path(args.out)
    os.environ["JVM_ARGS"] = f"-Xmx{args.heap}"
    os.environ.setdefault("FLINK_LOG_DIR", tempfile.mkdtemp(prefix="flink-log-", dir=out))

    from pyflink.table import EnvironmentSettings, TableEnvironment
    from pyflink.version import __version__ as flink_version

    env = TableEnvironment.create(EnvironmentSettings.in_streaming_mode())
    conf = env.get_config()
    conf.set("parallelism.default", str(args.cores))
    conf.set("pipeline.name", f"nexmark-{args.query}")
    conf.set("pipeline.jars", ";".join(f"file://{p}" for p in
                                       sorted(Path(args.jars).resolve().glob("*.jar"))))
    subst = {"topic": args.topic, "bootstrap": args.bootstrap, "out": str(out / "result")}
    stmts = statements(HERE / "flink" / "streams.sql", subst) + \
        statements(HERE / "flink" / f"{args.query}.sql", subst)
    insert = stmts.pop()
    for s in stmts:
        env.execute_sql(s)
    sink = re.match(r"INSERT INTO (\w+)", insert).group(1)
    names = env.from_path(sink).get_schema().get_field_names()

    cpu0, t0 = tree_cpu_seconds(os.getpid()), time.monotonic()
    res = env.execute_sql(insert)
    res.wait()
    wall, cpu = time.monotonic() - t0, tree_cpu_seconds(os.getpid()) - cpu0
    net = None
    try:
        net = res.get_job_client().get_job_execution_result().result().get_net_runtime() / 1e3
    except Exception:  # the per-job MiniCluster may be gone: the figure is optional
        pass
    rss = tree_peak_rss_mib(os.getpid())
    sigv = signature(out / "result", names, sig)
    print("RESULT " + json.dumps({
        "engine": f"Flink {flink_version}", "wall_s": wall, "cpu_s": cpu,
        "net_runtime_s": net, "peak_rss_mib": rss,
        "signature": [str(v) for v in sigv],
    }), flush=True)


if __name__ == "__main__":
    main()
