"""The HTTP pages in headless Chromium (issue 23, item 4): the overview and
a query's page, loaded by Debian's chromium over the DevTools protocol
(tests/chromium.py), screenshot and checked.

- The pages load nothing but themselves (no script library, no CDN, no
  favicon): every request the browser makes is the page's own URL.
- Every plot has its axes labelled (axis titles and tick labels in the
  DOM, time ticks as clock times that do not overlap) and is drawn with
  data: the pixels of its plot area in the screenshot include each
  series' colour.
- The SQL, the plan (EXPLAIN CONTINUOUS QUERY) and the last error are on
  the page for a request with the HTTP token, highlighted for the error;
  without the token they are not (tests/test_http_auth.py's rule: a
  reader without the token sees names, statuses and figures only), nor
  are the sessions' client addresses.
- A query named like markup is shown as text: nothing it holds runs.
- With 100 queries the overview lists all of them (how fast it is served
  is tools/bench/http_pages_bench.py's figure, not a test's).

SLUICE_PAGES_SCREENSHOTS=DIR writes the overview's and a query page's
screenshots there (docs/http-overview.png and docs/http-query.png come from
such a run).  docs/operations.md ("The pages") describes the pages.
"""
import os
import re
import shutil
import threading
import time
import urllib.parse
from datetime import datetime, timezone

import psycopg

from chromium import Browser, read_png
from test_http_auth import SECRET, TOKEN, failing_query, get, http_ready
from test_query_progress import wait_for

MARKUP_NAME = "<script>document.title='x'</script><img src=x onerror=f()>"

# Per plot: the series whose colour must be in its plot area (the stacked
# phases of a batch count together as "bars").
PLOTS = {
    "rates": ["input rows/s", "processed rows/s"],
    "duration": ["bars", "trigger interval"],
    "watermark": ["watermark lag"],
    "backlog": ["backlog rows"],
    "state": ["state rows", "state bytes"],
}


def utc_now_sql():
    return datetime.now(timezone.utc).replace(tzinfo=None).isoformat(sep=" ")


def start_queries(server, tmp_path):
    """Streams, queries and a sink, fed for a few seconds; returns the
    admin connection, left open (it is one of the connections shown)."""
    conn = psycopg.connect(server.dsn, autocommit=True, application_name="pages-test")
    conn.execute("CREATE STREAM clicks (ts timestamp, user_id int, url text, "
                 "WATERMARK FOR ts AS ts - INTERVAL '2 seconds')")
    # At most 50 rows per 200 ms batch against up to 1000 rows/s: a backlog.
    conn.execute("CREATE CONTINUOUS QUERY clicks_per_user WITH (trigger = '200 milliseconds', "
                 "output_mode = 'update', max_offsets_per_trigger = 50) AS "
                 "SELECT window_start, user_id, count(*) AS n FROM clicks "
                 "GROUP BY WINDOW(ts, INTERVAL '10 seconds'), user_id")
    conn.execute(f"CREATE SINK to_files WITH (connector = 'files', path = '{tmp_path}/out')")
    conn.execute("CREATE CONTINUOUS QUERY buys INTO to_files WITH (trigger = '500 milliseconds') "
                 "AS SELECT user_id, url FROM clicks WHERE url = '/buy'")
    conn.execute("CREATE CONTINUOUS QUERY \"" + MARKUP_NAME.replace('"', '""') + "\" "
                 "WITH (trigger = '1 second') AS SELECT user_id FROM clicks")
    stop = threading.Event()

    def feed():
        with psycopg.connect(server.dsn, autocommit=True) as c:
            i = 0
            while not stop.is_set():
                now = utc_now_sql()
                c.execute("INSERT INTO clicks VALUES " + ", ".join(
                    f"(TIMESTAMP '{now}', {(i + j) % 300}, '{'/buy' if j % 10 == 0 else '/home'}')"
                    for j in range(100)))
                i += 100
                time.sleep(0.1)

    t = threading.Thread(target=feed)
    t.start()
    try:
        wait_for(conn, "SELECT count(*), max(backlog_rows) FROM sys.query_progress "
                       "WHERE query = 'clicks_per_user' AND input_rows > 0",
                 lambda r: r[0][0] >= 12 and r[0][1] > 0)
        wait_for(conn, "SELECT count(*) FROM sys.query_progress WHERE query = 'buys' "
                       "AND input_rows > 0", lambda r: r[0][0] >= 2)
    finally:
        stop.set()
        t.join()
    return conn


def url(port, name=None):
    """A page's URL; ?refresh=0: it does not reload itself under the test."""
    if name is None:
        return f"http://127.0.0.1:{port}/?refresh=0"
    return (f"http://127.0.0.1:{port}/queries/" + urllib.parse.quote(name, safe="")
            + "?refresh=0")


PLOT_DOM = """
(() => {
  const out = {};
  for (const div of document.querySelectorAll('div.chart')) {
    const svg = div.querySelector('svg');
    const area = svg.querySelector('rect.plot-area').getBoundingClientRect();
    const ticks = [...svg.querySelectorAll('text.tick')];
    const time = ticks.filter(t => /^\\d\\d:\\d\\d(:\\d\\d)?$/.test(t.textContent));
    let overlap = false;
    for (let i = 1; i < time.length; i++) {
      const a = time[i - 1].getBoundingClientRect(), b = time[i].getBoundingClientRect();
      if (a.right > b.left) overlap = true;
    }
    const box = svg.getBoundingClientRect();
    const clipped = ticks.concat([...svg.querySelectorAll('text.axis-label')]).some(t => {
      const r = t.getBoundingClientRect();
      return r.left < box.left || r.right > box.right || r.top < box.top || r.bottom > box.bottom;
    });
    const series = {};
    for (const l of svg.querySelectorAll('polyline.series'))
      series[l.dataset.series] = {color: l.getAttribute('stroke'),
                                  points: l.getAttribute('points').trim().split(/\\s+/)
                                           .filter(p => p).length};
    const bars = [...svg.querySelectorAll('g.bars')];
    if (bars.length)
      series['bars'] = {colors: bars.map(g => g.getAttribute('fill')),
                        points: bars.reduce((n, g) => n + g.children.length, 0)};
    out[div.id] = {
      area: [area.x + window.scrollX, area.y + window.scrollY, area.width, area.height],
      axisLabels: [...svg.querySelectorAll('text.axis-label')].map(t => t.textContent),
      valueTicks: ticks.length - time.length, timeTicks: time.length, overlap, clipped,
      minFont: Math.min(...ticks.map(t => parseFloat(getComputedStyle(t).fontSize))),
      series,
    };
  }
  return out;
})()
"""


def hex_rgb(color):
    return tuple(int(color[i:i + 2], 16) for i in (1, 3, 5))


def color_pixels(rows, rgb, tol=40):
    return sum(1 for row in rows for p in row
               if max(abs(p[0] - rgb[0]), abs(p[1] - rgb[1]), abs(p[2] - rgb[2])) <= tol)


def check_plots(browser):
    plots = browser.eval(PLOT_DOM)
    assert sorted(plots) == sorted(PLOTS), plots.keys()
    for plot, want in PLOTS.items():
        p = plots[plot]
        # readable axes: the time axis and each value axis titled, round
        # clock times that do not overlap, no label cut by the plot's edge,
        # values ticked, a legible size
        assert "time (UTC)" in p["axisLabels"], (plot, p)
        assert len(p["axisLabels"]) >= 2 and all(p["axisLabels"]), (plot, p)
        assert p["timeTicks"] >= 3 and not p["overlap"] and not p["clipped"], (plot, p)
        assert p["valueTicks"] >= 3, (plot, p)
        assert p["minFont"] >= 10, (plot, p)
        x, y, w, h = p["area"]
        png = browser.screenshot(clip=(x + 1, y + 1, w - 2, h - 2))
        width, height, rows = read_png(png)
        assert abs(width - (w - 2)) <= 1 and abs(height - (h - 2)) <= 1, (plot, width, height)
        for name in want:
            s = p["series"].get(name)
            assert s is not None and s["points"] >= 5, (plot, name, p["series"])
            colors = s.get("colors") or [s["color"]]
            drawn = sum(color_pixels(rows, hex_rgb(c)) for c in colors)
            # a line across the plot has hundreds of pixels of its colour
            assert drawn >= 50, (plot, name, drawn)


def save(png, name, tmp_path):
    (tmp_path / name).write_bytes(png)
    width, height, _ = read_png(png)
    assert width >= 800 and height >= 400
    where = os.environ.get("SLUICE_PAGES_SCREENSHOTS")
    if where:
        shutil.copy(tmp_path / name, os.path.join(where, name))


def test_pages_in_chromium_with_the_token(sluiced, tmp_path):
    server = sluiced("--http-port", "0", config=f"http_token = '{TOKEN}'\n")
    _, port, _ = http_ready(server)
    failing_query(server)
    conn = start_queries(server, tmp_path)
    try:
        with Browser(tmp_path / "chromium", width=1200, height=800,
                     headers={"Authorization": f"Bearer {TOKEN}"}) as b:
            assert b.load(url(port)) == 200
            overview = b.eval("""(() => ({
                server: document.querySelector('#server').textContent,
                queries: [...document.querySelectorAll('#queries tr.query')].map(
                    r => [...r.cells].map(c => c.textContent)),
                links: [...document.querySelectorAll('#queries tr.query a')].map(
                    a => a.getAttribute('href')),
                streams: [...document.querySelectorAll('#streams tr.stream')].map(
                    r => [...r.cells].map(c => c.textContent)),
                sinks: [...document.querySelectorAll('#sinks tr.sink')].map(
                    r => [...r.cells].map(c => c.textContent)),
                connections: [...document.querySelectorAll('#connections tr.connection')].map(
                    r => [...r.cells].map(c => c.textContent)),
                scripts: document.scripts.length, title: document.title,
                images: document.images.length}))()""")
            save(b.screenshot(), "http-overview.png", tmp_path)
            assert re.match(r"version \S+ \(\S+\) · up \S", overview["server"]), overview
            queries = {r[0]: r for r in overview["queries"]}
            assert sorted(queries) == sorted(["buys", "clicks_per_user", "parse", MARKUP_NAME])
            assert queries["parse"][1] == "failed"
            cpu = queries["clicks_per_user"]
            assert cpu[1] == "running" and cpu[2] in ("yes", "no")
            # input and processed rates, source lag, backlog, watermark lag, last batch
            assert float(cpu[8]) >= 12 and cpu[6] != "–" and cpu[7].endswith(" s"), cpu
            # the markup is text: no script of its ran, no image was made
            assert (overview["scripts"], overview["title"], overview["images"]) == (1, "sluice", 0)
            assert url(port, MARKUP_NAME).endswith(overview["links"][
                [r[0] for r in overview["queries"]].index(MARKUP_NAME)])
            streams = {r[0]: r for r in overview["streams"]}
            assert streams["clicks"][1] == "internal" and int(streams["clicks"][2]) >= 1200
            assert streams["raw"][4] == "–"      # no dead letters: it has none
            assert [s[:2] for s in overview["sinks"]] == [["to_files", "buys"]]
            assert int(overview["sinks"][0][2]) >= 2 and overview["sinks"][0][3] == "0"
            mine = [c for c in overview["connections"] if c[3] == "pages-test"]
            assert len(mine) == 1 and mine[0][1] == "sluice" and "127.0.0.1:" in mine[0][5]

            assert b.load(url(port, "clicks_per_user")) == 200
            page = b.eval("""(() => ({
                h1: document.querySelector('h1').textContent,
                sql: document.querySelector('#sql').textContent,
                plan: document.querySelector('#plan').textContent,
                operators: [...document.querySelectorAll('#operators tr.operator')].map(
                    r => [...r.cells].map(c => c.textContent)),
                sources: document.querySelector('#sources').textContent,
                error: document.querySelector('#last-error')}))()""")
            assert page["h1"] == "clicks_per_user"
            assert "GROUP BY WINDOW(ts, INTERVAL '10 seconds'), user_id" in page["sql"]
            assert "-> Aggregate (tumbling window)" in page["plan"]
            assert "Live: last batch " in page["plan"]
            assert page["operators"][0][0] == "aggregate" and int(page["operators"][0][1]) > 0
            assert "clicks" in page["sources"] and page["error"] is None
            check_plots(b)
            save(b.screenshot(), "http-query.png", tmp_path)

            assert b.load(url(port, "parse")) == 200
            err = b.eval("""(() => { const e = document.querySelector('#last-error');
                return [e.textContent, getComputedStyle(e).backgroundColor,
                        getComputedStyle(e).borderLeftColor]; })()""")
            assert SECRET in err[0] and err[0].startswith("Last error:"), err
            assert err[1] == "rgb(253, 236, 234)" and err[2] == "rgb(198, 40, 40)", err

            assert b.load(url(port, MARKUP_NAME)) == 200
            assert b.eval("[document.title, document.querySelector('h1').textContent, "
                          "document.scripts.length, document.images.length]") == \
                [MARKUP_NAME, MARKUP_NAME, 1, 0]
            # nothing was loaded but the pages themselves (not even a favicon)
            assert sorted(b.requests) == sorted([url(port), url(port, "clicks_per_user"),
                                                 url(port, "parse"), url(port, MARKUP_NAME)])
            assert b.load(url(port, "nothing")) == 404
    finally:
        conn.close()


def test_pages_without_the_token_show_no_text_of_a_query(sluiced, tmp_path):
    server = sluiced("--http-port", "0")
    _, port, auth = http_ready(server)
    assert auth == "none"
    failing_query(server)
    conn = start_queries(server, tmp_path)
    try:
        status, headers, page = get(port, "/queries/clicks_per_user")
        assert status == 200
        csp = headers["Content-Security-Policy"]
        assert "default-src 'none'" in csp and "script-src 'sha256-" in csp
        assert "GROUP BY" not in page and "Aggregate" not in page and "count(*)" not in page
        assert page.count("shown only to a request with the HTTP token") == 2
        # the figures are there: plots and the operators' state
        assert page.count('<rect class="plot-area"') == 5 and 'class="operator"' in page
        status, _, page = get(port, "/queries/parse")
        assert status == 200 and SECRET not in page and 'id="last-error"' in page
        status, _, page = get(port, "/")
        assert status == 200 and "pages-test" in page
        assert '<meta http-equiv="refresh" content="5">' in page
        assert 'href="/queries/clicks_per_user">' in page
        # ?refresh=N: its own period (0: none), kept in the links
        status, _, still = get(port, "/?refresh=0")
        assert 'http-equiv="refresh"' not in still
        assert 'href="/queries/clicks_per_user?refresh=0">' in still
        assert 'content="60"' in get(port, "/queries/buys?refresh=60")[2]
        assert "127.0.0.1:" not in page.split('id="connections"')[1]
        # the name is escaped in the text, the link and the title
        status, _, page = get(port, "/queries/" + urllib.parse.quote(MARKUP_NAME, safe=""))
        assert status == 200 and "<script>document" not in page and "<img" not in page
        assert "&lt;script&gt;document.title=&#39;x&#39;&lt;/script&gt;&lt;img src=x onerror=f()&gt;" in page
        with Browser(tmp_path / "chromium") as b:
            assert b.load(url(port, "clicks_per_user")) == 200
            check_plots(b)
    finally:
        conn.close()


def test_overview_lists_100_queries(sluiced, tmp_path):
    server = sluiced("--http-port", "0")
    _, port, _ = http_ready(server)
    names = [f"q{i:03d}" for i in range(100)]
    with psycopg.connect(server.dsn, autocommit=True) as conn:
        conn.execute("CREATE STREAM ev (k int)")
        for n in names:
            conn.execute(f"CREATE CONTINUOUS QUERY {n} WITH (trigger = '1 second') AS "
                         "SELECT k, count(*) AS c FROM ev GROUP BY k")
        conn.execute("INSERT INTO ev VALUES (1), (2), (3)")
        wait_for(conn, "SELECT count(*) FROM sys.queries WHERE input_rows = 3",
                 lambda r: r[0][0] == 100)
    with Browser(tmp_path / "chromium") as b:
        assert b.load(url(port)) == 200
        rows = b.eval("[...document.querySelectorAll('#queries tr.query')].map("
                      "r => [r.cells[0].textContent, r.cells[1].textContent, "
                      "r.cells[9].textContent])")
    assert sorted(r[0] for r in rows) == names
    assert all(r[1] == "running" and r[2] == "3" for r in rows), rows
