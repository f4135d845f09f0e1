"""/metrics against the shipped Grafana dashboard (issue 23, item 5).

Scenario: one server with the HTTP listener; a windowed aggregate over a
generated (datagen) stream, a files stream with one undecodable record, and
a query over an internal stream writing INTO a files sink.  /metrics is
scraped twice while batches run and parsed whole by Prometheus' own parser
(prometheus_client.parser); every metric a PromQL expression of
tools/grafana/sluice.json names must have samples; counters grow between
the scrapes; every family served is documented in docs/operations.md;
and, once the query is paused, the batch-duration histogram agrees with
what sys.query_progress and sys.queries say of the same batches (count,
sum of durations, input and output rows).  A batch run again after
its sink commit, or the state write after it, failed once (fault points
armed to fail) counts one retry for the query and one for the sink, and a
failure for the sink when its commit failed.  A scrape never waits for an
append that holds the state store's counters across its synced write.
"""
import json
import math
import pathlib
import re
import subprocess
import threading
import time

import psycopg
import pytest
from prometheus_client.parser import text_string_to_metric_families

from conftest import sluiced_binary
from test_http import get, http_port

ROOT = pathlib.Path(__file__).resolve().parent.parent
DASHBOARD = ROOT / "tools" / "grafana" / "sluice.json"
# Names in PromQL: our families and the process ones.
NAME_RE = re.compile(r"\b((?:sluice|process)_[a-z_]+)\b")


def dashboard_exprs():
    dash = json.loads(DASHBOARD.read_text())
    exprs = [t["expr"] for p in dash["panels"] for t in p["targets"]]
    assert exprs, "the dashboard plots nothing"
    return exprs


def scrape(port):
    """{sample name: [(labels, value)]} and {family name: type}, parsed by
    prometheus_client from the whole exposition."""
    status, headers, body = get(port, "/metrics")
    assert status == 200
    assert headers["Content-Type"].startswith("text/plain; version=0.0.4")
    samples, types = {}, {}
    for fam in text_string_to_metric_families(body):
        types[fam.name] = fam.type
        for s in fam.samples:
            samples.setdefault(s.name, []).append((s.labels, s.value))
    return samples, types


def one(samples, name, **labels):
    got = [v for lab, v in samples.get(name, [])
           if all(lab.get(k) == w for k, w in labels.items())]
    assert len(got) == 1, (name, labels, samples.get(name))
    return got[0]


def wait_for(fn, timeout=120):
    deadline = time.time() + timeout
    while True:
        got = fn()
        if got:
            return got
        assert time.time() < deadline, "timed out"
        time.sleep(0.1)


def test_every_dashboard_metric_exists_with_sane_values(sluiced, tmp_path):
    server = sluiced("--http-port", "0")
    port = http_port(server)
    indir, outdir = tmp_path / "in", tmp_path / "out"
    indir.mkdir()
    good = '{"n": 1}\n{"n": 2}\n'
    bad = '{"n": "not a number"}\n'
    (indir / "a.jsonl").write_text(good + bad)
    with psycopg.connect(server.dsn, autocommit=True) as c:
        c.execute("CREATE STREAM g (k bigint, ts timestamp, "
                  "WATERMARK FOR ts AS ts - INTERVAL '1 second') "
                  "WITH (connector = 'datagen', rows_per_second = 2000, "
                  "\"fields.k.min\" = 1, \"fields.k.max\" = 20)")
        c.execute("CREATE CONTINUOUS QUERY w WITH (trigger = '100 milliseconds') AS "
                  "SELECT window_start, k, count(*) AS n FROM g "
                  "GROUP BY WINDOW(ts, INTERVAL '1 second'), k")
        c.execute(f"CREATE STREAM f (n int) WITH (connector = 'files', path = '{indir}', "
                  "format = 'json')")
        c.execute("CREATE STREAM s (x int)")
        c.execute(f"CREATE SINK out WITH (connector = 'files', path = '{outdir}', "
                  "format = 'csv')")
        c.execute("CREATE CONTINUOUS QUERY into_out INTO out WITH (trigger = '0') AS "
                  "SELECT x FROM s WHERE x > 1")
        c.execute("INSERT INTO s VALUES (1), (2), (3)")

        def first_ready():
            samples, types = scrape(port)
            ok = (one(samples, "sluice_query_batches_total", query="w") >= 2
                  and one(samples, "sluice_sink_commits_total", sink="out",
                          query="into_out") >= 1
                  and one(samples, "sluice_stream_dead_letters_total", stream="f") == 1)
            return (samples, types) if ok else None

        first, types = wait_for(first_ready)
        batches0 = one(first, "sluice_query_batches_total", query="w")
        # Later batches grow the query's counters.
        second, types = wait_for(lambda: (lambda s: s if one(
            s[0], "sluice_query_batches_total", query="w") >= batches0 + 3 else None)(
                scrape(port)))
        for name in ("sluice_query_batches_total", "sluice_query_input_rows_total",
                     "sluice_query_output_rows_total",
                     "sluice_query_batch_duration_seconds_count"):
            assert one(second, name, query="w") > one(first, name, query="w"), name
        assert one(second, "sluice_uptime_seconds") > one(first, "sluice_uptime_seconds")

        # Every metric the dashboard plots is there, with finite values.
        for expr in dashboard_exprs():
            for name in NAME_RE.findall(expr):
                assert second.get(name), f"{name} (in {expr!r}) has no sample"
                for labels, v in second[name]:
                    assert math.isfinite(v), (name, labels, v)

        # Every family served is documented in docs/operations.md's table.
        ops = (ROOT / "docs" / "operations.md").read_text()
        for fam, typ in types.items():
            name = fam + "_total" if typ == "counter" else fam
            assert f"`{name}`" in ops, f"{name} is not in docs/operations.md"

        # Types as declared; counters and sizes are never negative.
        assert types["sluice_query_batch_duration_seconds"] == "histogram"
        for fam in ("sluice_query_batches", "sluice_query_input_rows",
                    "sluice_query_output_rows", "sluice_query_retries",
                    "sluice_stream_rows", "sluice_stream_dead_letters",
                    "sluice_stream_ingest_bytes", "sluice_sink_commits",
                    "sluice_sink_commit_failures", "sluice_sink_commit_retries"):
            assert types[fam] == "counter", fam
            assert all(v >= 0 for _, v in second[fam + "_total"])
        for fam in ("sluice_query_backlog_rows", "sluice_query_state_rows",
                    "sluice_query_state_bytes", "sluice_source_lag_records",
                    "sluice_query_status"):
            assert types[fam] == "gauge", fam
            assert all(v >= 0 for _, v in second[fam])

        # One status word at 1 per query.
        for q in ("w", "into_out"):
            on = [lab["status"] for lab, v in second["sluice_query_status"]
                  if lab["query"] == q and v == 1]
            assert on == ["running"], (q, on)
        (info_labels, info), = second["sluice_build_info"]
        assert info == 1 and re.fullmatch(r"\d+\.\d+\.\d+", info_labels["version"])
        # the commit sluiced --version prints (a checkout's hash, + if modified)
        version = subprocess.run([sluiced_binary(), "--version"], capture_output=True,
                                 text=True, check=True).stdout
        assert f"(commit {info_labels['commit']})" in version, (info_labels, version)
        assert one(second, "sluice_connections", phase="ready") >= 1
        # The generated source is read to its latest offset each batch.
        assert one(second, "sluice_source_lag_records", query="w", source="g",
                   partition="0") >= 0
        # The stream figures: two rows appended, one dead letter, every byte read.
        assert one(second, "sluice_stream_rows_total", stream="f") == 2
        assert one(second, "sluice_stream_rows_total", stream="s") == 3
        assert one(second, "sluice_stream_ingest_bytes_total", stream="f") == \
            len((good + bad).encode())
        assert one(second, "sluice_sink_commit_failures_total", sink="out",
                   query="into_out") == 0
        assert one(second, "sluice_query_output_rows_total", query="into_out") == 2

        # Paused, the query's batches are fixed: the histogram equals what
        # sys.query_progress and sys.queries say of them.
        c.execute("ALTER CONTINUOUS QUERY w PAUSE")
        final, _ = scrape(port)
        (last_batch,), = c.execute(
            "SELECT last_batch_id FROM sys.queries WHERE name = 'w'").fetchall()
        n, dur_ms, inp, outp = c.execute(
            "SELECT count(*), sum(duration_ms), sum(input_rows), sum(output_rows) "
            "FROM sys.query_progress WHERE query = 'w'").fetchone()
    assert n < 100, "sys.query_progress keeps the last 100 batches only"
    count = one(final, "sluice_query_batch_duration_seconds_count", query="w")
    assert count == n == last_batch + 1 == one(final, "sluice_query_batches_total", query="w")
    assert math.isclose(one(final, "sluice_query_batch_duration_seconds_sum", query="w"),
                        dur_ms / 1000, rel_tol=1e-9, abs_tol=1e-6)
    assert one(final, "sluice_query_input_rows_total", query="w") == inp
    assert one(final, "sluice_query_output_rows_total", query="w") == outp
    buckets = sorted(((float(lab["le"]), v) for lab, v in
                      final["sluice_query_batch_duration_seconds_bucket"]
                      if lab["query"] == "w"))
    assert buckets[0][0] == 0.001 and buckets[-2][0] == 60 and math.isinf(buckets[-1][0])
    assert all(a[1] <= b[1] for a, b in zip(buckets, buckets[1:]))
    assert buckets[-1][1] == count
    on = [lab["status"] for lab, v in final["sluice_query_status"]
          if lab["query"] == "w" and v == 1]
    assert on == ["paused"]


# (fault point, sink commits, sink failures): the sink's commit failing
# once, or the state write after it failing once; either way the batch is
# run again once (58030 is retried), and the sink sees it a second time.
RETRIED = [("sink_commit:1:fail", 1, 1), ("batch_state_commit:1:fail", 2, 0)]


@pytest.mark.parametrize("fault, commits, failures", RETRIED)
def test_a_retried_batch_is_counted_for_the_query_and_the_sink(sluiced, tmp_path, fault,
                                                                commits, failures):
    server = sluiced("--http-port", "0", env={"SLUICE_FAULT": fault})
    port = http_port(server)
    with psycopg.connect(server.dsn, autocommit=True) as c:
        c.execute("CREATE STREAM s (x int)")
        c.execute(f"CREATE SINK out WITH (connector = 'files', path = '{tmp_path / 'out'}', "
                  "format = 'csv')")
        c.execute("CREATE CONTINUOUS QUERY q INTO out WITH (trigger = '0') AS "
                  "SELECT x FROM s WHERE x > 1")
        c.execute("INSERT INTO s VALUES (1), (2), (3)")

        def committed():
            samples, _ = scrape(port)
            return samples if one(samples, "sluice_query_batches_total", query="q") == 1 \
                else None

        got = wait_for(committed)
        status = c.execute("SELECT status FROM sys.queries WHERE name = 'q'").fetchone()[0]
    assert status == "running"
    assert one(got, "sluice_query_retries_total", query="q") == 1
    assert one(got, "sluice_query_output_rows_total", query="q") == 2
    assert one(got, "sluice_query_batch_duration_seconds_count", query="q") == 1
    assert one(got, "sluice_sink_commits_total", sink="out", query="q") == commits
    assert one(got, "sluice_sink_commit_failures_total", sink="out", query="q") == failures
    assert one(got, "sluice_sink_commit_retries_total", sink="out", query="q") == 1


def test_a_scrape_does_not_wait_for_an_append_in_progress(sluiced, tmp_path):
    """An INSERT into a stream held (fault point stream_append_before_write)
    where it holds the store's counters, as across its synced write: a
    scrape still answers, with the stream's rows as of the last durable
    append, and shows the held rows once they are written."""
    hold = tmp_path / "hold"
    hold.write_text("")
    server = sluiced("--http-port", "0",
                     env={"SLUICE_FAULT": "stream_append_before_write:2:hold",
                          "SLUICE_FAULT_HOLD": str(hold)})
    port = http_port(server)
    try:
        with psycopg.connect(server.dsn, autocommit=True) as c:
            c.execute("CREATE STREAM s (x int)")
            c.execute("INSERT INTO s VALUES (1), (2), (3)")
        assert one(scrape(port)[0], "sluice_stream_rows_total", stream="s") == 3
        held = threading.Thread(target=lambda: psycopg.connect(
            server.dsn, autocommit=True).execute("INSERT INTO s VALUES (4), (5)"))
        held.start()
        wait_for(lambda: "fault point stream_append_before_write reached, holding"
                 in server.log_text())
        samples, _ = scrape(port)
        assert one(samples, "sluice_stream_rows_total", stream="s") == 3
        assert one(samples, "sluice_stream_appends_total") >= 1
        hold.unlink()
        held.join()
        assert one(scrape(port)[0], "sluice_stream_rows_total", stream="s") == 5
    finally:
        if hold.exists():
            hold.unlink()
