"""The HTTP listener: /healthz, /metrics in the Prometheus text format, and
its refusals (issue 9).  The server is started with --http-port 0 and the
port read from its "http ready" log line."""
import re
import socket
import time
import urllib.error
import urllib.request

import psycopg
import pytest

HTTP_READY_RE = re.compile(r"http ready\"? listen=\S+:(\d+)")


def http_port(server):
    m = HTTP_READY_RE.search(server.log_text())
    assert m, "no 'http ready' line in the server log"
    return int(m.group(1))


def get(port, path, method="GET"):
    req = urllib.request.Request(f"http://127.0.0.1:{port}{path}", method=method)
    try:
        with urllib.request.urlopen(req, timeout=30) as r:
            return r.status, r.headers, r.read().decode()
    except urllib.error.HTTPError as e:
        return e.code, e.headers, e.read().decode()


def raw(port, data):
    with socket.create_connection(("127.0.0.1", port), timeout=30) as s:
        s.sendall(data)
        out = b""
        while True:
            chunk = s.recv(65536)
            if not chunk:
                return out
            out += chunk


SAMPLE_RE = re.compile(
    r'^([a-zA-Z_:][a-zA-Z0-9_:]*)(\{((?:[a-zA-Z_][a-zA-Z0-9_]*="(?:[^"\\]|\\.)*",?)*)\})?'
    r' (-?[0-9.e+]+|NaN|[+-]Inf)$')
LABEL_RE = re.compile(r'([a-zA-Z_][a-zA-Z0-9_]*)="((?:[^"\\]|\\.)*)"')


def parse_metrics(text):
    """Parses the text exposition format strictly: every family has HELP and
    TYPE before its samples, samples of a family are contiguous, and every
    line parses.  Returns {name: {"type": t, "samples": [(labels, value)]}}."""
    families = {}
    current = None
    assert text.endswith("\n")
    for line in text.splitlines():
        if line.startswith("# HELP "):
            name = line.split(" ", 3)[2]
            assert name not in families, f"family {name} twice"
            families[name] = {"type": None, "samples": []}
            current = name
        elif line.startswith("# TYPE "):
            _, _, name, typ = line.split(" ")
            assert name == current, f"TYPE of {name} not after its HELP"
            assert typ in ("counter", "gauge", "untyped", "histogram", "summary")
            families[name]["type"] = typ
        else:
            m = SAMPLE_RE.match(line)
            assert m, f"bad sample line: {line!r}"
            base = m.group(1)
            if families[current]["type"] == "histogram":
                # a histogram's series: NAME_bucket{le=...}, NAME_sum, NAME_count
                base = re.sub(r"_(bucket|sum|count)$", "", base)
            assert base == current, f"sample {m.group(1)} outside its family"
            labels = dict(LABEL_RE.findall(m.group(3) or ""))
            families[current]["samples"].append((labels, float(m.group(4))))
    return families


def value(families, name, **labels):
    for lab, v in families[name]["samples"]:
        if all(lab.get(k) == w for k, w in labels.items()):
            return v
    raise KeyError((name, labels))


def test_healthz_and_index(sluiced):
    server = sluiced("--http-port", "0")
    port = http_port(server)
    status, headers, body = get(port, "/healthz")
    assert (status, body) == (200, "ok\n")
    assert headers["Content-Length"] == "3"
    status, _, body = get(port, "/")
    assert status == 200 and "/metrics" in body
    status, _, body = get(port, "/healthz", method="HEAD")
    assert status == 200 and body == ""


def test_metrics_parse_and_follow_the_server(sluiced):
    server = sluiced("--http-port", "0")
    port = http_port(server)
    with psycopg.connect(server.dsn, autocommit=True) as conn:
        conn.execute("CREATE STREAM ev (ts timestamp, k int, WATERMARK FOR ts AS ts - INTERVAL '1 second')")
        conn.execute("CREATE CONTINUOUS QUERY counts WITH (trigger = '0') AS "
                     "SELECT k, count(*) AS n FROM ev GROUP BY k")
        rows = ", ".join(f"(TIMESTAMP '2026-01-01' + INTERVAL '{i} seconds', {i % 3})"
                         for i in range(1, 501))
        conn.execute(f"INSERT INTO ev VALUES {rows}")
        deadline = time.time() + 120
        while True:
            status, headers, body = get(port, "/metrics")
            assert status == 200
            assert headers["Content-Type"].startswith("text/plain; version=0.0.4")
            fam = parse_metrics(body)
            if value(fam, "sluice_query_input_rows_total", query="counts") == 500:
                break
            assert time.time() < deadline, body
            time.sleep(0.2)
        assert fam["sluice_query_input_rows_total"]["type"] == "counter"
        assert value(fam, "sluice_query_status", query="counts", status="running") == 1
        # the batch id the catalog gives (no input is left: no batch follows)
        last = conn.execute("SELECT last_batch_id FROM sys.queries "
                            "WHERE name = 'counts'").fetchone()[0]
        assert last is not None
        assert value(fam, "sluice_query_last_batch_id", query="counts") == last
        wm = value(fam, "sluice_query_watermark_seconds", query="counts")
        # 2026-01-01 00:08:20 minus the 1 s delay, in Unix seconds.
        assert wm == 1767225600 + 500 - 1
        # This connection is counted as ready; the limit is reported.
        assert value(fam, "sluice_connections", phase="ready") >= 1
        assert value(fam, "sluice_max_connections") == 1000
        assert value(fam, "process_resident_memory_bytes") > 1e6
        assert value(fam, "process_cpu_seconds_total") > 0
        conn.execute("ALTER CONTINUOUS QUERY counts PAUSE")
        fam = parse_metrics(get(port, "/metrics")[2])
        assert value(fam, "sluice_query_status", query="counts", status="paused") == 1


def test_label_values_are_escaped(sluiced):
    server = sluiced("--http-port", "0")
    port = http_port(server)
    with psycopg.connect(server.dsn, autocommit=True) as conn:
        conn.execute("CREATE STREAM s (x int)")
        conn.execute('CREATE CONTINUOUS QUERY "we\\ird""q" AS SELECT x FROM s')
    fam = parse_metrics(get(port, "/metrics")[2])
    assert value(fam, "sluice_query_last_batch_id", query='we\\\\ird\\"q') == -1


def test_bad_requests_are_refused_and_the_server_stays_up(sluiced):
    server = sluiced("--http-port", "0")
    port = http_port(server)
    assert get(port, "/nope")[0] == 404
    assert raw(port, b"POST /metrics HTTP/1.1\r\nHost: x\r\n\r\n").startswith(b"HTTP/1.1 405")
    assert raw(port, b"garbage\r\n\r\n").startswith(b"HTTP/1.1 400")
    assert raw(port, b"GET /%zz HTTP/1.1\r\n\r\n").startswith(b"HTTP/1.1 400")
    assert raw(port, b"GET /" + b"a" * 9000 + b" HTTP/1.1\r\n\r\n").startswith(b"HTTP/1.1 431")
    # A client that sends half a request and goes away.
    s = socket.create_connection(("127.0.0.1", port))
    s.sendall(b"GET /metr")
    s.close()
    assert get(port, "/healthz")[0] == 200
    with psycopg.connect(server.dsn) as conn:
        assert conn.execute("SELECT 1").fetchone() == (1,)


def test_http_is_off_by_default(sluiced):
    server = sluiced()
    assert HTTP_READY_RE.search(server.log_text()) is None
