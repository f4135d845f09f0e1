"""docs/quickstart.md and the README's example, run as a new user would.

Every statement of the quickstart runs in page order against a fresh
server (started as `./tools/run --http-port ...` starts it), with the
page's shell steps (the files written for the files connector) run under
a temporary directory; what the page says you will see is checked as it
goes: the windowed query's rows, a live COPY (SUBSCRIBE) line, the query
page and the metrics, the files query's totals before and after a new
file.  Its Kafka section runs here with the broker address pointed at a
closed port (CREATE does no I/O) and for real, against the suite's broker,
in tests/kafka/test_quickstart_kafka.py.

The README's example runs too: its SELECT, sent after the INSERT, shows
the row once the query's next batch has committed (the README explains
the trigger), with the values the README shows.
"""

import datetime
import re
import subprocess
import urllib.request
from pathlib import Path

import psycopg

from helpers import wait_for
from test_doc_examples import closed_port, examples_of, rewrite
from test_subscribe import start_stream, take

REPO = Path(__file__).resolve().parent.parent
QUICKSTART = REPO / "docs" / "quickstart.md"
WAIT = 60
PAGE_DIR = "/tmp/sluice-quickstart"


def page_steps(page):
    """The page's steps in order: ("sql", line, sql), ("shell", line, command)
    for each `$ ` line, ("psql", line, sql) for each `sluice=# ` line."""
    steps = [("sql", line, sql) for ex in examples_of(page)
             for line, sql, _code, _msg in ex.statements]
    for i, text in enumerate(page.read_text().split("\n"), 1):
        if text.startswith("    $ "):
            steps.append(("shell", i, text[len("    $ "):]))
        elif text.startswith("    sluice=# "):
            steps.append(("psql", i, text[len("    sluice=# "):]))
    return sorted(steps, key=lambda s: s[1])


def http_get(port, path):
    with urllib.request.urlopen(f"http://127.0.0.1:{port}{path}", timeout=30) as r:
        return r.status, r.read().decode()


def first_copy_line(dsn, sql):
    """Runs a COPY (SUBSCRIBE ...) TO STDOUT and returns its first row (as
    text), then cancels it (psql's Ctrl-C); the connection must be usable
    after."""
    conn, rows, ended, t = start_stream(dsn, sql, copy=True)
    got = take(rows, 1, timeout=WAIT)
    assert got, "no live line"
    conn.cancel()
    t.join(WAIT)
    assert not t.is_alive() and isinstance(ended[0], psycopg.errors.QueryCanceled), ended
    assert conn.execute("SELECT 1").fetchone() == (1,)
    conn.close()
    return got[0]


def check_windows(conn):
    rows = conn.execute("SELECT window_start, window_end, url, clicks FROM clicks_per_url "
                        "ORDER BY window_start DESC, url LIMIT 3").fetchall()
    assert rows and len(rows) <= 3
    for start, end, url, clicks in rows:
        assert end - start == datetime.timedelta(seconds=10)
        assert url in ("/home", "/cart", "/buy") and clicks >= 1


def run_sql(conn, sql, tmp, kafka):
    cur = conn.execute(rewrite(sql, tmp, kafka))
    return cur.fetchall() if cur.description is not None else None


def test_quickstart_runs_as_written(sluiced, tmp_path):
    server = sluiced("--http-port", "0")
    http_port = int(re.search(r'msg="http ready" listen=127\.0\.0\.1:(\d+)',
                              server.log_text()).group(1))
    kafka = closed_port()
    local_dir = str(tmp_path / "fs" / PAGE_DIR.lstrip("/"))
    conn = psycopg.connect(server.dsn, autocommit=True)
    seen = set()
    try:
        for kind, line, text in page_steps(QUICKSTART):
            where = f"docs/quickstart.md:{line}"
            if kind == "sql":
                try:
                    rows = run_sql(conn, text, tmp_path, kafka)
                except psycopg.Error as e:
                    raise AssertionError(f"{where}: {text}\n  failed: {e.sqlstate} {e}")
                if text.startswith("CREATE CONTINUOUS QUERY clicks_per_url"):
                    # "a second after CREATE it has rows"
                    assert wait_for(lambda: conn.execute(
                        "SELECT count(*) > 0 FROM clicks_per_url").fetchone()[0], True,
                        timeout=WAIT), where
                    seen.add("windows")
                elif text.startswith("SELECT * FROM clicks_per_url"):
                    assert 1 <= len(rows) <= 3, (where, rows)
                    check_windows(conn)
                elif text.startswith("CREATE CONTINUOUS QUERY items"):
                    assert wait_for(lambda: conn.execute(
                        "SELECT * FROM items ORDER BY item").fetchall(),
                        [("ink", 12), ("pen", 3)], timeout=WAIT) == [("ink", 12), ("pen", 3)]
                    seen.add("files")
                elif text.startswith("SELECT * FROM items"):
                    want = [("ink", 12), ("pen", 8)]
                    assert wait_for(lambda: conn.execute(text.rstrip(";")).fetchall(), want,
                                    timeout=WAIT) == want, where
                    seen.add("files-new")
                elif text.startswith("SELECT name, status"):
                    assert ("clicks_per_url", "running", "1 second", "update") in rows, rows
                elif "FROM sys.query_progress" in text:
                    assert rows and all(r[1] >= 0 for r in rows), rows
            elif kind == "psql":
                row = first_copy_line(server.dsn, text.rstrip(";"))
                assert re.fullmatch(r"\d+", row[0]) and row[1] in ("insert", "update"), row
                assert len(row) == 6 and row[4] in ("/home", "/cart", "/buy"), row
                seen.add("live")
            elif "kcat" in text:
                continue        # the Kafka section's: tests/kafka/test_quickstart_kafka.py
            elif text.startswith(("./tools/run", "psql ")):
                continue        # the fixture started the server; psycopg is the psql
            elif text.startswith("curl"):
                url = re.search(r"http://127\.0\.0\.1:\d+(/\S*)", text).group(1)
                status, body = http_get(http_port, url)
                assert status == 200
                m = re.search(r'^sluice_query_input_rows_total\{query="clicks_per_url"\} (\d+)$',
                              body, re.M)
                assert m and int(m.group(1)) > 0, body[-2000:]
                assert 'sluice_query_status{query="clicks_per_url",status="running"} 1' in body
                for path in ("/", "/queries/clicks_per_url"):
                    status, page = http_get(http_port, path)
                    assert status == 200 and "clicks_per_url" in page, path
                seen.add("http")
            else:
                subprocess.run(["bash", "-c", text.replace(PAGE_DIR, local_dir)], check=True,
                               timeout=30)
    finally:
        conn.close()
    assert seen == {"windows", "live", "http", "files", "files-new"}, seen


def test_readme_example_shows_its_row(sluiced):
    server = sluiced()
    (ex,) = examples_of(REPO / "README.md")
    with psycopg.connect(server.dsn, autocommit=True) as conn:
        for _line, sql, _code, _msg in ex.statements:
            rows = run_sql(conn, sql, None, None)
        assert sql.startswith("SELECT * FROM clicks_per_user"), sql
        if not rows:
            # Sent in the same breath as the INSERT, before the query's next
            # batch: as the README says, the row is there a trigger later.
            query = sql.rstrip(";")
            assert wait_for(lambda: len(conn.execute(query).fetchall()), 1, timeout=WAIT) == 1
            rows = conn.execute(query).fetchall()
        assert len(rows) == 1, rows
        start, end, user_id, n = rows[0]
        assert (user_id, n) == (1, 1)
        assert end - start == datetime.timedelta(minutes=5)
        assert start.minute % 5 == 0 and start.second == 0 and start.microsecond == 0
