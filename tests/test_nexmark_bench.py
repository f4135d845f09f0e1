"""tools/bench/nexmark_bench.py --write-docs: the bench writes its figures,
with the machine, into the benchmarks page itself.

The bench runs against the server under test (--bin) over a small number
of events: q2 and q0 for throughput, q0's latency with trigger '0'.  The
page gets one block between the markers, in "### Nexmark: throughput,
latency" of "Current figures", before the next heading: the machine (cores, CPU model, memory,
kernel), the tree's commit, the command, a throughput row per query with
its events/s and events/s per busy core, and the latency row.  A second
run replaces the block (one block, the new figures), and the text around
it is kept byte for byte.
"""

import os
import re
import subprocess
import sys
from pathlib import Path

from conftest import sluiced_binary

REPO = Path(__file__).resolve().parents[1]
BENCH = REPO / "tools" / "bench" / "nexmark_bench.py"
sys.path.insert(0, str(REPO / "tools" / "bench"))

import nexmark_bench  # noqa: E402

PAGE = """# Benchmarks

## Current figures

### Nexmark: throughput, latency, memory and state per query

How to rerun it.

### Nexmark side by side

Its figures.

## Method
"""


def bench(*args):
    out = subprocess.run([sys.executable, str(BENCH), "--bin", sluiced_binary(), *args],
                         capture_output=True, text=True, timeout=600, cwd=REPO)
    assert out.returncode == 0, out.stdout + out.stderr
    return out.stdout


def block_of(text):
    assert text.count(nexmark_bench.DOCS_BEGIN) == 1 and text.count(nexmark_bench.DOCS_END) == 1
    i = text.index(nexmark_bench.DOCS_BEGIN)
    return text[i:text.index(nexmark_bench.DOCS_END)]


def test_write_docs(tmp_path):
    page = tmp_path / "benchmarks.md"
    page.write_text(PAGE)
    out = bench("--events", "20000", "--queries", "q2,q0", "--latency",
                "--latency-seconds", "5", "--triggers", "0", "--write-docs", str(page))
    assert f"figures written to {page}" in out
    text = page.read_text()
    block = block_of(text)
    # Inside the Nexmark section, before the next heading; the rest of the
    # page unchanged.
    assert text.index("How to rerun it.") < text.index(block) < text.index("### Nexmark side by side")
    assert text.replace(block + nexmark_bench.DOCS_END + "\n\n", "") == PAGE
    assert f"machine: {os.cpu_count()} cores (" in block and "GiB of memory, Linux " in block
    rev = subprocess.run(["git", "-C", str(REPO), "rev-parse", "--short=7", "HEAD"],
                         capture_output=True, text=True).stdout.strip()
    assert re.search(rf"tree at ({rev}(-dirty)?|unknown);", block), block
    assert "tools/bench/nexmark_bench.py --bin" in block
    assert "Throughput: 20,000 events from nexmark, batches of 200,000 rows." in block
    # One row per query: wall, CPU, events/s = 20,000 / wall, per busy core.
    for q in ("q2", "q0"):
        row = re.search(rf"^\| {q} \| 0 \| ([0-9.]+) \| ([0-9.]+) \| ([0-9,]+) \| ([0-9,]+|under a tick) \|",
                        block, re.M)
        assert row, block
        wall, rate = float(row.group(1)), int(row.group(3).replace(",", ""))
        # The wall time is printed to 0.01 s: the rate within that rounding.
        assert wall > 0.005 and 20_000 / (wall + 0.005) - 1 <= rate <= 20_000 / (wall - 0.005) + 1
    lat = re.search(r"^\| q0 \| 0 \| ([0-9.]+) \| ([0-9.]+) \| (\d+) events \|", block, re.M)
    assert lat, block
    assert 0 < float(lat.group(1)) <= float(lat.group(2)) and int(lat.group(3)) > 0

    # A second run replaces the block.
    bench("--events", "20000", "--queries", "q2", "--write-docs", str(page))
    # A latency run whose span leaves no events to count is refused.
    out = subprocess.run([sys.executable, str(BENCH), "--latency", "--latency-seconds", "2"],
                         capture_output=True, text=True, timeout=60, cwd=REPO)
    assert out.returncode == 2 and "--latency-seconds must be more than 2" in out.stderr
    again = page.read_text()
    block2 = block_of(again)
    assert "| q2 | 0 |" in block2 and "| q0 |" not in block2 and "Latency" not in block2
    assert again.replace(block2 + nexmark_bench.DOCS_END + "\n\n", "") == PAGE


def test_write_docs_without_the_section(tmp_path):
    """A page without the Nexmark section gets the block at its end."""
    page = tmp_path / "other.md"
    page.write_text("# Other\n\ntext\n")
    nexmark_bench.write_docs(page, "BLOCK")
    assert page.read_text() == "# Other\n\ntext\n\nBLOCK\n"
