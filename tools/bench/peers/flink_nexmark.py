#!/usr/bin/env python3
"""One Nexmark query on Apache Flink (PyFlink's Table API, local MiniCluster).

Run by tools/bench/nexmark_peers.py with tools/bench/peers/.venv-flink's
Python; by hand:

    .venv-flink/bin/python flink_nexmark.py --query q5 --bootstrap 127.0.0.1:PORT \
        --jars .jars-flink --out /tmp/x --cores 2 --heap 3g \
        --signature '{"keys": [...], "real": "col", "sums": [...]}'

Starts PyFlink's gateway JVM (-Xmx HEAP) in streaming mode with parallelism
CORES, state in RocksDB (or with --state memory on the heap), nexmark-flink's
mini-batch options and object reuse (pipeline.object-reuse), creates the Kafka tables person, auction and bid of flink/streams.sql
(bounded scans from the earliest to the latest offsets at start, 4-second
watermarks) and runs the last statement of flink/QUERY.sql:

- an INSERT (an insert-only result: q0-q3, q7, q8, q11) into CSV files under
  OUT; untimed, it reads them back;
- a SELECT (an updating result, which the filesystem sink refuses: q4, q5):
  collected through TableResult.collect(), each change applied as it comes
  (+I/+U add the row, -U/-D take it away), the rows left are the result.

The timed part is from submitting the statement to the job's end, the
collection included (it includes the local MiniCluster's start, which PyFlink
does per job); CPU time is this process's tree (Python and the JVM) over the
same span, from /proc.  The job's own net runtime (JobExecutionResult) is
reported beside it for an INSERT.

It prints the signature: count(*) and the sums the caller asks for over the
final rows whose column "real" is >= 0 (window queries emit each window's
row once, so the CSV rows are the final result).  The last line of stdout is
RESULT {json}.
"""

import calendar
import csv
import math
from collections import Counter
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

from runner import parse_args, timed_start, tree_cpu_seconds, tree_peak_rss_mib  # noqa: E402


def kafka_options(topic, bootstrap):
    """The WITH options of a bounded Kafka scan of TOPIC (JSON values)."""
    return (f"'connector' = 'kafka', 'topic' = '{topic}', "
            f"'properties.bootstrap.servers' = '{bootstrap}', "
            "'properties.group.id' = 'flink-nexmark', "
            "'scan.startup.mode' = 'earliest-offset', 'scan.bounded.mode' = 'latest-offset', "
            "'format' = 'json', 'json.timestamp-format.standard' = 'SQL'")


def statements(path, subst):
    """The ;-terminated statements of PATH, comments dropped, ${name}
    replaced by subst[name] and ${kafka:TOPIC} by kafka_options(TOPIC)."""
    text = "\n".join(line for line in path.read_text().splitlines()
                     if not line.lstrip().startswith("--"))
    text = re.sub(r"\$\{(\w+)(?::(\w+))?\}",
                  lambda m: kafka_options(m.group(2), subst["bootstrap"]) if m.group(2)
                  else subst[m.group(1)], text)
    return [s.strip() for s in text.split(";") if s.strip()]


def epoch_ms(value):
    """Milliseconds since 1970 of a UTC timestamp (a datetime, or the text
    Flink's CSV writes)."""
    dt = value if isinstance(value, datetime) else datetime.fromisoformat(value)
    return calendar.timegm(dt.timetuple()) * 1000 + dt.microsecond // 1000


def signature(rows, names, sig):
    """count(*) and SIG's sums over ROWS (lists of text from CSV, or of
    values from collect()) whose column sig["real"] is >= 0."""
    real = names.index(sig["real"])
    idx = [(kind, names.index(col)) for kind, col in sig["sums"]]
    count, sums = 0, [Decimal(0)] * len(idx)
    for row in rows:
        if row[real] in ("", None) or Decimal(str(row[real])) < 0:
            continue
        count += 1
        for i, (kind, c) in enumerate(idx):
            v = row[c]
            if v in ("", None):
                continue
            if kind == "sum_ms":
                sums[i] += epoch_ms(v)
            elif kind == "sum_floor":
                sums[i] += math.floor(Decimal(str(v)))
            else:
                sums[i] += Decimal(str(v))
    return [count, *sums]


def csv_rows(out):
    """Every row of every CSV file under OUT."""
    for f in sorted(p for p in Path(out).rglob("*") if p.is_file()):
        with open(f, newline="") as fh:
            yield from csv.reader(fh)


def collect_changelog(result):
    """The rows a collected changelog leaves: a multiset of tuples."""
    from pyflink.common import RowKind
    rows = Counter()
    with result.collect() as it:
        for r in it:
            key = tuple(r)
            if r.get_row_kind() in (RowKind.INSERT, RowKind.UPDATE_AFTER):
                rows[key] += 1
            else:
                rows[key] -= 1
                if rows[key] == 0:
                    del rows[key]
    if any(n < 0 for n in rows.values()):
        sys.exit("flink: the changelog retracted a row it never inserted")
    return list(rows.elements())


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
    # nexmark-flink's table options (its sql-client-defaults.yaml): updating
    # aggregates buffer their input and emit once per mini-batch.
    conf.set("state.backend.type", "rocksdb" if args.state == "rocksdb" else "hashmap")
    conf.set("table.exec.mini-batch.enabled", "true")
    conf.set("table.exec.mini-batch.allow-latency", "2s")
    conf.set("table.exec.mini-batch.size", "50000")
    conf.set("table.optimizer.distinct-agg.split.enabled", "true")
    # Throughput tuning a user would add (not in nexmark-flink's files):
    # chained operators hand records on without a defensive copy; Flink's
    # SQL operators do not keep or change the records they are handed.
    # (NEXMARK_FLINK_OBJECT_REUSE=false turns it off, for an A/B.)
    conf.set("pipeline.object-reuse",
             os.environ.get("NEXMARK_FLINK_OBJECT_REUSE", "true"))
    conf.set("pipeline.jars", ";".join(f"file://{p}" for p in
                                       sorted(Path(args.jars).resolve().glob("*.jar"))))
    subst = {"bootstrap": args.bootstrap, "out": str(out / "result")}
    stmts = statements(HERE / "flink" / "streams.sql", subst) + \
        statements(HERE / "flink" / f"{args.query}.sql", subst)
    last = stmts.pop()
    for s in stmts:
        env.execute_sql(s)
    insert = re.match(r"INSERT INTO (\w+)", last)

    cpu0, t0 = timed_start()
    res = env.execute_sql(last)
    net = None
    if insert:
        res.wait()
    else:
        rows = collect_changelog(res)
    wall, cpu = time.monotonic() - t0, tree_cpu_seconds(os.getpid()) - cpu0
    if insert:
        try:
            net = (res.get_job_client().get_job_execution_result().result()
                   .get_net_runtime() / 1e3)
        except Exception:  # the per-job MiniCluster may be gone: the figure is optional
            pass
        names = env.from_path(insert.group(1)).get_schema().get_field_names()
        rows = csv_rows(out / "result")
    else:
        names = res.get_table_schema().get_field_names()
    rss = tree_peak_rss_mib(os.getpid())
    sigv = signature(rows, names, sig)
    print("RESULT " + json.dumps({
        "engine": f"Flink {flink_version}", "wall_s": wall, "cpu_s": cpu,
        "net_runtime_s": net, "peak_rss_mib": rss,
        "signature": [str(v) for v in sigv],
    }), flush=True)


if __name__ == "__main__":
    main()
