#!/usr/bin/env python3
"""One Nexmark query on Apache Spark Structured Streaming (PySpark, local mode).

Run by tools/bench/nexmark_peers.py with tools/bench/peers/.venv-spark's
Python; not meant to be run by hand, but it can be:

    .venv-spark/bin/python spark_nexmark.py --query q5 --bootstrap 127.0.0.1:PORT \
        --jars .jars-spark --out /tmp/x --cores 2 --heap 3g \
        --signature '{"keys": [...], "real": "col", "sums": [...]}'

Starts a SparkSession with master local[CORES] (the driver JVM with -Xmx
HEAP; state in RocksDB, RocksDBStateStoreProvider, or with --state memory on
the heap, HDFSBackedStateStoreProvider) and the views `person`, `auction` and `bid`: Kafka sources over the
topics of those names from their earliest offsets, the JSON values parsed
into the columns of tools/nexmark/queries/streams.sql with a 4-second
watermark on date_time (as sluice's streams); a query reads the views it
names.  spark/QUERY.sql is one query, or a pipeline of them (Spark cannot
run some Nexmark queries as one streaming query: the file says what it
refuses), each stage a SELECT after a line

    -- stage: NAME MODE [watermark COLUMN 'DELAY']

Every stage but the last is written in MODE by foreachBatch into Parquet
files (Spark's file sink would take append mode only) and read by the later
stages as a streaming view NAME (Spark's file source), with that watermark.  Each stage runs with trigger availableNow (every record
there at its start, then stop), one after the other.  The last stage (or
the only query) is written by foreachBatch into Parquet files under OUT
(each row tagged with its batch id), in MODE, or for a file without stages
in the output mode of sluice's query (append without aggregation, update
with) unless the file says `-- output_mode: MODE`.  The timed part is from
the first start() to the end of the last awaitTermination(); CPU time is
this process's tree (the Python driver and its JVM) over the same span,
from /proc.

Then, untimed, it reads the Parquet files back and prints the signature:
count(*) and the sums the caller asks for, over the final result (for
update mode the last batch's row of each key, for complete mode the last
batch's rows) whose column "real" is >= 0.  The last line of stdout is
RESULT {json}; a query Spark refuses (an AnalysisException when the query
is planned or started) prints RESULT {"refused": "the error"} and exits 0.
"""

import json
import os
import re
import sys
import time
from pathlib import Path

from pyspark.sql import SparkSession
from pyspark.errors import AnalysisException, StreamingQueryException
from pyspark.sql import functions as F
from pyspark.sql.types import (LongType, StringType, StructField, StructType,
                               TimestampType)

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))

from runner import parse_args, timed_start, tree_cpu_seconds, tree_peak_rss_mib  # noqa: E402

def _schema(cols):
    return StructType([StructField(n, LongType() if t == "bigint" else
                                   TimestampType() if t == "timestamp" else StringType())
                       for n, t in (c.split() for c in cols.split(","))])


# The columns of tools/nexmark/queries/streams.sql.
TABLES = {
    "person": _schema("id bigint, name text, email_address text, credit_card text, "
                      "city text, state text, date_time timestamp, extra text"),
    "auction": _schema("id bigint, item_name text, description text, initial_bid bigint, "
                       "reserve bigint, date_time timestamp, expires timestamp, "
                       "seller bigint, category bigint, extra text"),
    "bid": _schema("auction bigint, bidder bigint, price bigint, channel text, url text, "
                   "date_time timestamp, extra text"),
}
STAGE_RE = re.compile(r"^-- stage: (\w+) (\w+)(?: watermark (\w+) '([^']*)')?$", re.M)


def signature_sql(table, sig, mode):
    """SELECT of count(*) and the sums of SIG over TABLE's final rows."""
    cols = ["count(*)"]
    for kind, col in sig["sums"]:
        cols.append(f"sum(unix_millis({col}))" if kind == "sum_ms" else
                    f"sum(floor({col}))" if kind == "sum_floor" else f"sum({col})")
    src = f"SELECT * FROM {table}"
    if mode == "complete":
        src += f" WHERE _batch = (SELECT max(_batch) FROM {table})"
    elif mode == "update":
        keys = ", ".join(sig["keys"])
        src = (f"SELECT * FROM (SELECT *, row_number() OVER (PARTITION BY {keys} "
               f"ORDER BY _batch DESC) AS _rn FROM {table}) WHERE _rn = 1")
    return f"SELECT {', '.join(cols)} FROM ({src}) WHERE {sig['real']} >= 0"


def stages_of(text, sig):
    """[(name, mode, watermark or None, sql)] of a query file: its stages,
    or the one query (named "result") in its output mode."""
    heads = list(STAGE_RE.finditer(text))
    if not heads:
        m = re.search(r"^-- output_mode: (\w+)$", text, re.M)
        mode = m.group(1) if m else "update" if sig["keys"] else "append"
        return [("result", mode, None, text)]
    out = []
    for i, h in enumerate(heads):
        body = text[h.end():heads[i + 1].start() if i + 1 < len(heads) else len(text)]
        wm = (h.group(3), h.group(4)) if h.group(3) else None
        out.append((h.group(1), h.group(2), wm, body.strip().rstrip(";")))
    return out


def main():
    args = parse_args("Spark Structured Streaming")
    sig = args.signature
    out = Path(args.out)

    jars = sorted(str(p) for p in Path(args.jars).glob("*.jar"))
    spark = (SparkSession.builder.master(f"local[{args.cores}]")
             .appName(f"nexmark-{args.query}")
             .config("spark.jars", ",".join(jars))
             .config("spark.driver.memory", args.heap)
             .config("spark.sql.shuffle.partitions", str(args.cores))
             .config("spark.sql.session.timeZone", "UTC")
             .config("spark.ui.enabled", "false")
             .config("spark.ui.showConsoleProgress", "false")
             # Every batch's progress is kept (the rows each source read are
             # summed from it), not only the last 100: --max-offsets may
             # make more batches.
             .config("spark.sql.streaming.numRecentProgressUpdates", "1000000")
             .config("spark.local.dir", str(out / "tmp"))
             .config("spark.driver.bindAddress", "127.0.0.1")
             .config("spark.driver.host", "127.0.0.1")
             .config("spark.sql.streaming.stateStore.providerClass",
                     "org.apache.spark.sql.execution.streaming.state.RocksDBStateStoreProvider"
                     if args.state == "rocksdb" else
                     "org.apache.spark.sql.execution.streaming.state.HDFSBackedStateStoreProvider")
             # Spark's docs advise it with RocksDB: each batch's commit writes
             # the changes instead of uploading a snapshot of the state.
             .config("spark.sql.streaming.stateStore.rocksdb.changelogCheckpointing.enabled",
                     "true")
             .getOrCreate())
    spark.sparkContext.setLogLevel("WARN")

    for table, schema in TABLES.items():
        reader = (spark.readStream.format("kafka")
                  .option("kafka.bootstrap.servers", args.bootstrap)
                  .option("subscribe", table)
                  .option("startingOffsets", "earliest")
                  .option("failOnDataLoss", "true"))
        if args.max_offsets:
            reader = reader.option("maxOffsetsPerTrigger", args.max_offsets)
        (reader.load()
         .select(F.from_json(F.col("value").cast("string"), schema,
                             {"timestampFormat": "yyyy-MM-dd HH:mm:ss.SSS"}).alias("e"))
         .select("e.*")
         .withWatermark("date_time", "4 seconds")
         .createOrReplaceTempView(table))
    stages = stages_of((HERE / "spark" / f"{args.query}.sql").read_text(), sig)
    parquet = str(out / "result")

    def write_batch(df, batch_id):
        df.withColumn("_batch", F.lit(batch_id)).write.mode("append").parquet(parquet)

    cpu0, t0 = timed_start()
    input_sources = batches = None
    try:
        for i, (name, mode, wm, sql) in enumerate(stages):
            result = spark.sql(sql)
            w = result.writeStream.outputMode(mode).trigger(availableNow=True).option(
                "checkpointLocation", str(out / f"checkpoint-{name}"))
            last = i == len(stages) - 1
            if last:
                q = w.foreachBatch(write_batch).start()
            else:
                # foreachBatch, not the file sink: that takes append mode only.
                folder = out / name
                folder.mkdir()
                q = w.foreachBatch(lambda df, _, f=str(folder):
                                   df.write.mode("append").parquet(f)).start()
            try:
                q.awaitTermination()
            except StreamingQueryException:
                pass
            err = q.exception()
            if err is not None:
                # A plan Spark refuses is sometimes only found when the
                # first batch is planned: its AnalysisException comes
                # wrapped in the query's exception.
                m = re.search(r"AnalysisException: (.*)", str(err))
                if m:
                    raise AnalysisException(m.group(1)) from None
                sys.exit(f"spark: {args.query} stage {name} failed: {err}")
            progress = q.recentProgress
            if i == 0:  # the stage that reads Kafka: what each source read
                sources = {}
                for p in progress:
                    for k, src in enumerate(p["sources"]):
                        m = re.search(r"Subscribe\[(\w+)\]", src["description"])
                        key = (k, m.group(1) if m else src["description"])
                        sources[key] = sources.get(key, 0) + src["numInputRows"]
                input_sources = [[t, n] for (_, t), n in sorted(sources.items())]
            if last:
                batches = sum(1 for p in progress if p["numInputRows"] > 0)
            else:
                view = spark.readStream.schema(result.schema).parquet(str(out / name))
                if wm:
                    view = view.withWatermark(*wm)
                view.createOrReplaceTempView(name)
    except AnalysisException as e:
        refusal = " ".join(str(e).split())
        print(f"spark refuses {args.query}: {refusal}", flush=True)
        print("RESULT " + json.dumps({"refused": refusal[:300]}), flush=True)
        spark.stop()
        return
    wall, cpu = time.monotonic() - t0, tree_cpu_seconds(os.getpid()) - cpu0
    rss = tree_peak_rss_mib(os.getpid())

    spark.read.parquet(parquet).createOrReplaceTempView("result_rows")
    row = spark.sql(signature_sql("result_rows", sig, stages[-1][1])).collect()[0]
    print("RESULT " + json.dumps({
        "engine": f"Spark {spark.version}", "wall_s": wall, "cpu_s": cpu,
        "peak_rss_mib": rss, "input_sources": input_sources, "batches": batches,
        "stages": len(stages),
        "signature": [str(v) if v is not None else None for v in row],
    }), flush=True)
    spark.stop()


if __name__ == "__main__":
    main()
