"""sys.query_progress, falling_behind in sys.queries and /metrics, and the
per-query page with plots rendered in headless Chromium (issue 9)."""
import re
import subprocess
import threading
import time
import urllib.error
import urllib.request
from datetime import datetime, timedelta, timezone

import psycopg

from chromium import chromium_path
from test_http import http_port, parse_metrics, value

T0 = datetime(2026, 1, 1)


def rows_sql(start, n, step_s=1, key_mod=3, distinct_keys=False):
    return ", ".join(
        f"(TIMESTAMP '{(T0 + timedelta(seconds=(start + i) * step_s)).isoformat(sep=' ')}', "
        f"{start + i if distinct_keys else i % key_mod})"
        for i in range(n))


def wait_for(conn, sql, pred, timeout=120):
    deadline = time.time() + timeout
    while True:
        rows = conn.execute(sql).fetchall()
        if pred(rows):
            return rows
        assert time.time() < deadline, f"timed out waiting on {sql}: {rows}"
        time.sleep(0.1)


def utc(naive):
    return naive.replace(tzinfo=timezone.utc)


def test_query_progress_rows_follow_the_batches(sluiced):
    server = sluiced()
    with psycopg.connect(server.dsn, autocommit=True) as conn:
        conn.execute("SET TimeZone = 'UTC'")
        conn.execute("CREATE STREAM ev (ts timestamp, k int, "
                     "WATERMARK FOR ts AS ts - INTERVAL '10 seconds')")
        conn.execute("CREATE CONTINUOUS QUERY wc WITH (trigger = '0', output_mode = 'update') AS "
                     "SELECT window_start, k, count(*) AS n FROM ev "
                     "GROUP BY WINDOW(ts, INTERVAL '1 minute'), k")
        # Three appends, each its own batch: wait for each to commit.
        for chunk, (start, n) in enumerate([(0, 100), (100, 50), (150, 30)]):
            conn.execute(f"INSERT INTO ev VALUES {rows_sql(start, n)}")
            wait_for(conn, "SELECT sum(input_rows) FROM sys.query_progress WHERE query = 'wc'",
                     lambda r, want=start + n: r[0][0] == want)
        # One late row: its minute closed long ago (watermark 00:02:49).
        conn.execute("INSERT INTO ev VALUES (TIMESTAMP '2026-01-01 00:00:05', 1)")
        rows = wait_for(conn,
                        "SELECT batch_id, input_rows, late_rows, output_rows, state_rows, "
                        "min_event_time, max_event_time, watermark, duration_ms, plan_ms, "
                        "read_ms, execute_ms, sink_commit_ms, state_commit_ms, commit_log_ms, "
                        "trigger_ms, input_rows_per_second, processed_rows_per_second, "
                        "backlog_rows, started_at "
                        "FROM sys.query_progress WHERE query = 'wc' ORDER BY batch_id",
                        lambda r: sum(x[1] for x in r) == 181)
    assert [r[0] for r in rows] == list(range(len(rows)))
    data = [r for r in rows if r[1] > 0]
    assert [r[1] for r in data] == [100, 50, 30, 1]
    assert [r[2] for r in data] == [0, 0, 0, 1]
    # Update mode: the groups changed in the batch (minutes x keys).
    assert data[0][3] == 2 * 3          # 00:00 and 00:01, keys 0..2
    # State after the batch: minute 00:00 closed (watermark 00:01:29) and
    # left the state; 00:01 with its 3 keys stays.
    assert data[0][4] == 3
    first = data[0]
    assert first[5] == utc(T0)
    assert first[6] == utc(T0 + timedelta(seconds=99))
    assert first[7] == utc(T0 + timedelta(seconds=89))          # max - 10 s
    assert data[2][7] == utc(T0 + timedelta(seconds=169))
    for r in data:
        duration, phases = r[8], r[9:15]
        assert all(p >= 0 for p in phases)
        assert duration >= sum(phases) * 0.999
        assert r[12] == 0                # no files sink
        assert r[13] > 0                 # the synced RocksDB write
        assert r[15] == 0                # trigger '0'
        assert r[17] > 0
        assert r[18] == 0                # nothing left behind
    assert rows[0][16] is None          # no batch before the first
    assert data[1][16] > 0


def test_falling_behind_when_input_outruns_the_query(sluiced):
    server = sluiced()
    with psycopg.connect(server.dsn, autocommit=True) as conn:
        conn.execute("CREATE STREAM ev (ts timestamp, k int)")
        # 10 rows per 50 ms batch at most: 200 rows/s.
        conn.execute("CREATE CONTINUOUS QUERY slow WITH (trigger = '50 milliseconds', "
                     "max_offsets_per_trigger = 10) AS SELECT k FROM ev")
        conn.execute("CREATE CONTINUOUS QUERY fast WITH (trigger = '0') AS SELECT k FROM ev")
        stop = threading.Event()

        def feed():
            with psycopg.connect(server.dsn, autocommit=True) as c:
                i = 0
                while not stop.is_set():
                    c.execute(f"INSERT INTO ev VALUES {rows_sql(i, 100)}")
                    i += 100
                    time.sleep(0.02)

        t = threading.Thread(target=feed)
        t.start()
        try:
            rows = wait_for(conn, "SELECT name, falling_behind FROM sys.queries ORDER BY name",
                            lambda r: dict(r).get("slow") is True)
        finally:
            stop.set()
            t.join()
        progress = conn.execute("SELECT backlog_rows FROM sys.query_progress "
                                "WHERE query = 'slow' ORDER BY batch_id DESC LIMIT 3").fetchall()
        assert all(b[0] > 0 for b in progress)
        # Once the feed stops, the fast query has caught up and is not behind.
        wait_for(conn, "SELECT falling_behind FROM sys.queries WHERE name = 'fast'",
                 lambda r: r[0][0] is False)
        conn.execute("ALTER CONTINUOUS QUERY slow PAUSE")
        assert conn.execute("SELECT falling_behind FROM sys.queries WHERE name = 'slow'"
                            ).fetchone() == (False,)


def test_metrics_show_late_rows_and_falling_behind(sluiced):
    server = sluiced("--http-port", "0")
    port = http_port(server)
    with psycopg.connect(server.dsn, autocommit=True) as conn:
        conn.execute("CREATE STREAM ev (ts timestamp, k int, "
                     "WATERMARK FOR ts AS ts - INTERVAL '1 second')")
        conn.execute("CREATE CONTINUOUS QUERY c WITH (trigger = '0') AS "
                     "SELECT window_start, count(*) AS n FROM ev "
                     "GROUP BY WINDOW(ts, INTERVAL '10 seconds')")
        conn.execute(f"INSERT INTO ev VALUES {rows_sql(0, 60)}")
        wait_for(conn, "SELECT input_rows FROM sys.queries WHERE name = 'c'",
                 lambda r: r[0][0] == 60)
        conn.execute("INSERT INTO ev VALUES (TIMESTAMP '2026-01-01 00:00:01', 0)")
        wait_for(conn, "SELECT input_rows FROM sys.queries WHERE name = 'c'",
                 lambda r: r[0][0] == 61)
    with urllib.request.urlopen(f"http://127.0.0.1:{port}/metrics", timeout=30) as r:
        fam = parse_metrics(r.read().decode())
    assert value(fam, "sluice_query_late_rows_total", query="c") == 1
    assert value(fam, "sluice_query_falling_behind", query="c") == 0


def render(url, tmp_path):
    """The page's DOM after Chromium loaded it and ran its script."""
    out = subprocess.run(
        [chromium_path(), "--headless", "--no-sandbox", "--disable-gpu", "--no-first-run",
         f"--user-data-dir={tmp_path / 'chromium'}", "--virtual-time-budget=3000",
         "--dump-dom", url],
        capture_output=True, text=True, timeout=120)
    assert out.returncode == 0, out.stderr[-2000:]
    return out.stdout


def test_query_page_draws_its_plots_in_chromium(sluiced, tmp_path):
    server = sluiced("--http-port", "0")
    port = http_port(server)
    with psycopg.connect(server.dsn, autocommit=True) as conn:
        conn.execute("CREATE STREAM ev (ts timestamp, k int, "
                     "WATERMARK FOR ts AS ts - INTERVAL '5 seconds')")
        # unwindowed, a new key per row: the state grows with every append
        conn.execute("CREATE CONTINUOUS QUERY \"per key\" WITH (trigger = '100 milliseconds', "
                     "output_mode = 'update') AS SELECT k, count(*) AS n FROM ev GROUP BY k")
        for i in range(6):
            conn.execute(f"INSERT INTO ev VALUES {rows_sql(i * 200, 200, distinct_keys=True)}")
            wait_for(conn, "SELECT input_rows FROM sys.queries WHERE name = 'per key'",
                     lambda r, want=(i + 1) * 200: r[0][0] == want)
    index = render(f"http://127.0.0.1:{port}/", tmp_path)
    assert 'href="/queries/per%20key"' in index
    dom = render(f"http://127.0.0.1:{port}/queries/per%20key", tmp_path)
    assert "<h1>per key</h1>" in dom
    for chart in ("rates", "duration", "watermark", "state"):
        m = re.search(rf'<div class="chart" id="{chart}">(.*?)</div></div>', dom, re.S)
        assert m, f"chart {chart} missing"
        lines = re.findall(r'<polyline[^>]*data-series="([^"]+)"[^>]*points="([^"]*)"'
                           r'[^>]*data-drawn-length="([0-9.]+)"', m.group(1))
        assert lines, f"chart {chart} has no drawn lines"
        for series, points, drawn in lines:
            if series == "input rows/s":
                assert len(points.split()) >= 5, (chart, series, points)
            else:
                assert len(points.split()) >= 6, (chart, series, points)
            # The browser laid the line out: it has a length on screen.
            assert float(drawn) > 0, (chart, series)
    # The state plot rises: 200 new keys per append.
    state = re.search(r'data-series="state rows"[^>]*points="([^"]*)"', dom).group(1)
    ys = [float(p.split(",")[1]) for p in state.split()]
    assert ys[-1] < ys[0]          # SVG y grows downwards
    try:
        urllib.request.urlopen(f"http://127.0.0.1:{port}/queries/nope", timeout=30)
        raise AssertionError("a missing query's page was served")
    except urllib.error.HTTPError as e:
        assert e.code == 404
