#!/usr/bin/env python3
"""One Nexmark query on Apache Spark Structured Streaming (PySpark, local mode).

Run by tools/bench/nexmark_peers.py with tools/bench/peers/.venv-spark's
Python; not meant to be run by hand, but it can be:

    .venv-spark/bin/python spark_nexmark.py --query q5 --bootstrap 127.0.0.1:PORT \
        --topic bid --jars .jars-spark --out /tmp/x --cores 2 --heap 3g \
        --signature '{"keys": [...], "sums": [...]}'

Starts a SparkSession with master local[CORES] (the driver JVM with -Xmx
HEAP), a Kafka source over TOPIC from its earliest offsets, the JSON values
parsed into the bid columns with a 4-second watermark on date_time (as
sluice's stream), the view `bid`, and the query of spark/QUERY.sql over it,
written with trigger availableNow (every record there at start, then stop)
by foreachBatch into Parquet files under OUT (each row tagged with its batch
id), in the output mode of sluice's query (append without aggregation,
update with) unless the file says `-- output_mode: MODE`.  The timed part
is from start() to the end of awaitTermination(); CPU time is this
process's tree (the Python driver and its JVM) over the same span, from
/proc.

Then, untimed, it reads the Parquet files back and prints the signature:
count(*) and the sums the caller asks for, over the final result (for
update mode the last batch's row of each key, for complete mode the last
batch's rows).  The last line of stdout is RESULT {json}.
"""

import json
import os
import re
import sys
import time
from pathlib import Path

from pyspark.sql import SparkSession
from pyspark.sql import functions as F
from pyspark.sql.types import (LongType, StringType, StructField, StructType,
                               TimestampType)

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))

from runner import parse_args, tree_cpu_seconds, tree_peak_rss_mib  # noqa: E402

BID = StructType([
    StructField("auction", LongType()), StructField("bidder", LongType()),
    StructField("price", LongType()), StructField("channel", StringType()),
    StructField("url", StringType()), StructField("date_time", TimestampType()),
    StructField("extra", StringType()),
])


def signature_sql(table, sig, mode):
    """SELECT of count(*) and the sums of SIG over TABLE's final rows."""
    cols = ["count(*)"]
    for kind, col in sig["sums"]:
        cols.append(f"sum(unix_millis({col}))" if kind == "sum_ms" else f"sum({col})")
    src = table
    if mode == "complete":
        src = f"{table} WHERE _batch = (SELECT max(_batch) FROM {table})"
    elif mode == "update":
        keys = ", ".join(sig["keys"])
        src = (f"(SELECT *, row_number() OVER (PARTITION BY {keys} ORDER BY _batch DESC) "
               f"AS _rn FROM {table}) WHERE _rn = 1")
    return f"SELECT {', '.join(cols)} FROM {src}"


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
             .config("spark.local.dir", str(out / "tmp"))
             .config("spark.driver.bindAddress", "127.0.0.1")
             .config("spark.driver.host", "127.0.0.1")
             .getOrCreate())
    spark.sparkContext.setLogLevel("WARN")

    reader = (spark.readStream.format("kafka")
              .option("kafka.bootstrap.servers", args.bootstrap)
              .option("subscribe", args.topic)
              .option("startingOffsets", "earliest")
              .option("failOnDataLoss", "true"))
    if args.max_offsets:
        reader = reader.option("maxOffsetsPerTrigger", args.max_offsets)
    bid = (reader.load()
           .select(F.from_json(F.col("value").cast("string"), BID,
                               {"timestampFormat": "yyyy-MM-dd HH:mm:ss.SSS"}).alias("e"))
           .select("e.*")
           .withWatermark("date_time", "4 seconds"))
    bid.createOrReplaceTempView("bid")
    text = (HERE / "spark" / f"{args.query}.sql").read_text()
    result = spark.sql(text)
    m = re.search(r"^-- output_mode: (\w+)$", text, re.M)
    mode = m.group(1) if m else "update" if sig["keys"] else "append"

    parquet = str(out / "result")

    def write_batch(df, batch_id):
        df.withColumn("_batch", F.lit(batch_id)).write.mode("append").parquet(parquet)

    cpu0, t0 = tree_cpu_seconds(os.getpid()), time.monotonic()
    q = (result.writeStream.outputMode(mode)
         .trigger(availableNow=True)
         .option("checkpointLocation", str(out / "checkpoint"))
         .foreachBatch(write_batch)
         .start())
    q.awaitTermination()
    wall, cpu = time.monotonic() - t0, tree_cpu_seconds(os.getpid()) - cpu0
    if q.exception() is not None:
        sys.exit(f"spark: {args.query} failed: {q.exception()}")
    progress = q.recentProgress
    input_rows = sum(p["numInputRows"] for p in progress)
    batches = sum(1 for p in progress if p["numInputRows"] > 0)
    rss = tree_peak_rss_mib(os.getpid())

    spark.read.parquet(parquet).createOrReplaceTempView("result")
    row = spark.sql(signature_sql("result", sig, mode)).collect()[0]
    print("RESULT " + json.dumps({
        "engine": f"Spark {spark.version}", "wall_s": wall, "cpu_s": cpu,
        "peak_rss_mib": rss, "input_rows": input_rows, "batches": batches,
        "signature": [str(v) if v is not None else None for v in row],
    }), flush=True)
    spark.stop()


if __name__ == "__main__":
    main()
