"""tools/bench/nexmark_peers.py without Spark or Flink: its sluice side and
its cross-engine check.

- The sluice side over a real broker (the script starts and stops its own):
  for every query it runs, the signature it reads from sluice's result
  table (count(*) and sums, the figures the peers are checked against)
  equals the same signature computed here in Python from nexmark_gen's
  JSON lines, so the bench compares the peers with a right answer.
- check() refuses a run whose engines disagree, or that read fewer bids
  than were written, so a broken run cannot report a figure.
"""

import json
import subprocess
import sys
from collections import Counter, defaultdict
from datetime import datetime, timezone
from decimal import Decimal
from pathlib import Path

import pytest

from conftest import sluiced_binary

REPO = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(REPO / "tools" / "bench"))

import nexmark_peers  # noqa: E402

EVENTS = 20_000
RATE = 1_000          # events per second of event time: 20 s, several windows
BASE_MS = 1767225600000  # 2026-01-01 00:00:00 UTC


def gen_binary():
    for build in ("build-asan", "build", "build-rel"):
        path = REPO / build / "tools" / "nexmark" / "nexmark_gen"
        if path.exists():
            return str(path)
    pytest.fail("no nexmark_gen binary: build one (./tools/test)")


def epoch_ms(text):
    dt = datetime.strptime(text, "%Y-%m-%d %H:%M:%S.%f").replace(tzinfo=timezone.utc)
    return int(dt.timestamp() * 1000)


def expected_signatures(bids):
    """Each query's signature (nexmark_peers.SIGNATURE) computed from the bids."""
    sig = {}
    sig["q0"] = [len(bids), sum(b["price"] for b in bids), sum(b["bidder"] for b in bids)]
    sig["q1"] = [len(bids), sum(Decimal("0.908") * b["price"] for b in bids),
                 sum(b["bidder"] for b in bids)]
    sel = [b for b in bids if b["auction"] % 123 == 0]
    sig["q2"] = [len(sel), sum(b["price"] for b in sel), sum(b["auction"] for b in sel)]
    # q5: every window of 10 s that starts on a multiple of 2 s and holds the bid.
    per = Counter()
    for b in bids:
        t = b["t"]
        first = (t // 2000) * 2000 - 8000
        for start in range(first, t + 1, 2000):
            per[(b["auction"], start)] += 1
    sig["q5"] = [len(per), sum(per.values()), sum(a for a, _ in per),
                 sum(s for _, s in per)]
    # q7: the highest price per tumbling 10-second window.
    top = {}
    for b in bids:
        w = (b["t"] // 10000) * 10000
        top[w] = max(top.get(w, 0), b["price"])
    sig["q7"] = [len(top), sum(top.values()), sum(top)]
    # q11: sessions per bidder, a gap of 10 s or more ends one; end = last + gap.
    times = defaultdict(list)
    for b in bids:
        times[b["bidder"]].append(b["t"])
    sessions = []
    for bidder, ts in times.items():
        ts.sort()
        start, last, n = ts[0], ts[0], 1
        for t in ts[1:]:
            if t - last >= 10000:
                sessions.append((bidder, n, start, last + 10000))
                start, n = t, 0
            last, n = t, n + 1
        sessions.append((bidder, n, start, last + 10000))
    sig["q11"] = [len(sessions), sum(s[1] for s in sessions), sum(s[0] for s in sessions),
                  sum(s[2] for s in sessions), sum(s[3] for s in sessions)]
    return sig


def test_sluice_side_matches_python(tmp_path):
    out = tmp_path / "figures.json"
    res = subprocess.run(
        [sys.executable, str(REPO / "tools" / "bench" / "nexmark_peers.py"),
         "--engines", "sluice", "--events", str(EVENTS), "--first-event-rate", str(RATE),
         "--base-time-ms", str(BASE_MS), "--batch", "5000", "--bin", sluiced_binary(), "--gen", gen_binary(),
         "--json", str(out)],
        capture_output=True, text=True, timeout=900)
    assert res.returncode == 0, res.stdout + res.stderr
    figures = json.loads(out.read_text())
    lines = subprocess.run([gen_binary(), "--events", str(EVENTS), "--seed", "1",
                            "--first-event-rate", str(RATE), "--base-time-ms", str(BASE_MS),
                            "--table", "bid"],
                           check=True, capture_output=True, text=True).stdout.splitlines()
    bids = [json.loads(line) for line in lines]
    for b in bids:
        b["t"] = epoch_ms(b["date_time"])
    assert figures["bids"] == len(bids) == nexmark_peers.nexmark_bids(EVENTS)
    want = expected_signatures(bids)
    assert set(figures["queries"]) == set(nexmark_peers.SIGNATURE)
    for q, fig in figures["queries"].items():
        r = fig["results"]["sluice"]
        assert fig["mismatch"] is None, q
        assert r["input_rows"] == len(bids), q
        assert [Decimal(v) for v in r["signature"]] == want[q], q
        assert r["wall_s"] > 0 and r["cpu_s"] > 0, q
    # The markdown table names every query with its figures.
    for q in nexmark_peers.SIGNATURE:
        assert f"| {q} |" in res.stdout


def result(sig, rows=None):
    return {"engine": "x", "wall_s": 1.0, "cpu_s": 1.0, "input_rows": rows,
            "signature": [str(v) for v in sig]}


def test_check_refuses_disagreement():
    check = nexmark_peers.check
    same = {"sluice": result([10, 5], rows=100), "spark": result([10, 5], rows=100),
            "flink": result([10, "5.000"])}
    assert check("q7", same, 100) is None
    # One engine's result differs: no figure.
    other = dict(same, flink=result([10, 6]))
    assert "flink" in check("q7", other, 100)
    # An engine that read fewer bids than the topic holds.
    short = dict(same, spark=result([10, 5], rows=99))
    assert "spark read 99 of 100" in check("q7", short, 100)
    # q0 and q1 must write one row per bid, even if all engines agree.
    assert "wrote 10 rows of 100" in check("q0", same, 100)
    # A failed engine is left out of the comparison (and reported failed).
    failed = dict(same, flink={"error": "exit 1"})
    assert check("q7", failed, 100) is None
