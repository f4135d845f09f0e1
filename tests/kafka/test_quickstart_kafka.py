"""tests/kafka/test_quickstart_kafka.py - docs/quickstart.md's Kafka section
against a real broker.

The section's statements and shell lines run in page order, with the page's
broker address (127.0.0.1:9092) replaced by the test broker's and the topics
made as the page's `broker.py start --topic ...` makes them; the records
produced with `kcat -P` come back from the sink's topic, read with the
page's `kcat -C` line, as the page shows them.  (tests/test_quickstart.py
runs the rest of the page.)
"""

import re
import subprocess
import sys
from pathlib import Path

import psycopg

from kafka_helpers import Admin, broker_fixture, wait_for

REPO = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(REPO / "tests"))

from test_quickstart import QUICKSTART, page_steps  # noqa: E402

kafka = broker_fixture()
PAGE_BROKER = "127.0.0.1:9092"


def section_lines(page, title):
    """The line numbers (1-based) of the page's section `## title`."""
    lines = page.read_text().split("\n")
    start = next(i for i, t in enumerate(lines, 1) if t.startswith("## ") and title in t)
    end = next((i for i, t in enumerate(lines, 1) if i > start and t.startswith("## ")),
               len(lines) + 1)
    return range(start, end), lines


def test_quickstart_kafka_section(kafka, sluiced):
    span, lines = section_lines(QUICKSTART, "Kafka")
    for name, parts in re.findall(r"--topic (\w+):(\d+)", "\n".join(lines[i - 1] for i in span)):
        Admin(kafka.bootstrap).create_topic(name, int(parts))
    server = sluiced()
    checked = 0
    with psycopg.connect(server.dsn, autocommit=True) as conn:
        for kind, line, text in page_steps(QUICKSTART):
            if line not in span:
                continue
            text = text.replace(PAGE_BROKER, kafka.bootstrap)
            if kind == "sql":
                conn.execute(text)
            elif text.startswith("kcat -C"):
                shown = lines[line]         # the output line the page shows under it
                shown = shown.strip()

                def read():
                    res = subprocess.run(["bash", "-c", text], capture_output=True,
                                         text=True, timeout=60)
                    return res.stdout.strip()
                assert wait_for(read, shown) == shown
                checked += 1
            else:
                subprocess.run(["bash", "-c", text], check=True, timeout=60)
        conn.execute("DROP CONTINUOUS QUERY big_orders_q")
    assert checked == 1
