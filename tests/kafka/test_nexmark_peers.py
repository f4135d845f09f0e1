"""tools/bench/nexmark_peers.py without Spark or Flink: its sluice side and
its cross-engine check.

- The sluice side over a real broker (the script starts and stops its own):
  for every query it runs -- q3 and q8 over the person and auction topics,
  the whole pipelines of q4, q5 and q7 -- the signature it reads from
  sluice's result table (count(*) and sums, the figures the peers are
  checked against) equals the same signature computed here in Python from
  nexmark_gen's JSON lines with nexmark-flink's semantics (q3's join
  unbounded, q4's winning bid between the auction's start and expiry, ...),
  in each of two runs, so the bench compares the peers with a right answer.
  The end markers the bench appends to each partition are in no signature.
- check() refuses a run whose engines or runs disagree, or that read fewer
  rows than were written, so a broken run cannot report a figure.
"""

import argparse
import json
import subprocess
import sys
import time
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


def expected_signatures(persons, auctions, bids):
    """Each query's signature (nexmark_peers.SIGNATURE) computed from the rows."""
    sig = {}
    sig["q0"] = [len(bids), sum(b["price"] for b in bids), sum(b["bidder"] for b in bids)]
    sig["q1"] = [len(bids), sum(Decimal("0.908") * b["price"] for b in bids),
                 sum(b["bidder"] for b in bids)]
    sel = [b for b in bids if b["auction"] % 123 == 0]
    sig["q2"] = [len(sel), sum(b["price"] for b in sel), sum(b["auction"] for b in sel)]
    # q3: nexmark-flink's unbounded join of auction and person.
    by_id = {p["id"]: p for p in persons}
    q3 = [a["id"] for a in auctions if a["category"] == 10 and a["seller"] in by_id
          and by_id[a["seller"]]["state"] in ("OR", "ID", "CA")]
    sig["q3"] = [len(q3), sum(q3)]
    # q4: each auction's highest bid between its start and its expiry, the
    # average of those per category (floor: Flink's BIGINT AVG).
    top = {}
    by_auction = {a["id"]: a for a in auctions}
    for b in bids:
        a = by_auction.get(b["auction"])
        if a and a["t"] <= b["t"] <= a["x"]:
            top[a["id"]] = max(top.get(a["id"], 0), b["price"])
    per_cat = defaultdict(list)
    for aid, final in top.items():
        per_cat[by_auction[aid]["category"]].append(final)
    sig["q4"] = [len(per_cat), sum(per_cat),
                 sum(sum(v) // len(v) for v in per_cat.values())]
    # q5: every window of 10 s that starts on a multiple of 2 s and holds the
    # bid; per window the auctions with the most bids.
    per = Counter()
    for b in bids:
        t = b["t"]
        first = (t // 2000) * 2000 - 8000
        for start in range(first, t + 1, 2000):
            per[(b["auction"], start)] += 1
    most = {}
    for (a, start), n in per.items():
        most[start] = max(most.get(start, 0), n)
    hot = [(a, n) for (a, start), n in per.items() if n >= most[start]]
    sig["q5"] = [len(hot), sum(n for _, n in hot), sum(a for a, _ in hot)]
    # q7: the bids whose price is the highest of a tumbling 10-second window
    # and whose time is in [window end - 10 s, window end], both included.
    wmax = {}
    for b in bids:
        end = (b["t"] // 10000) * 10000 + 10000
        wmax[end] = max(wmax.get(end, 0), b["price"])
    q7 = [b for b in bids for end in ((b["t"] // 10000) * 10000 + 10000,
                                      (b["t"] // 10000) * 10000)
          if end in wmax and end - 10000 <= b["t"] <= end and b["price"] == wmax[end]]
    sig["q7"] = [len(q7), sum(b["price"] for b in q7), sum(b["auction"] for b in q7),
                 sum(b["bidder"] for b in q7), sum(b["t"] for b in q7)]
    # q8: persons who opened an auction in the tumbling 10-second window in
    # which they registered, one row per person and window.
    sellers = {(a["seller"], a["t"] // 10000) for a in auctions}
    q8 = {(p["id"], p["t"] // 10000 * 10000) for p in persons
          if (p["id"], p["t"] // 10000) in sellers}
    sig["q8"] = [len(q8), sum(i for i, _ in q8), sum(w for _, w in q8)]
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


def gen_rows(table):
    lines = subprocess.run([gen_binary(), "--events", str(EVENTS), "--seed", "1",
                            "--first-event-rate", str(RATE), "--base-time-ms", str(BASE_MS),
                            "--table", table],
                           check=True, capture_output=True, text=True).stdout.splitlines()
    rows = [json.loads(line) for line in lines]
    for r in rows:
        r["t"] = epoch_ms(r["date_time"])
        if "expires" in r:
            r["x"] = epoch_ms(r["expires"])
    return rows


def test_sluice_side_matches_python(tmp_path):
    out = tmp_path / "figures.json"
    res = subprocess.run(
        [sys.executable, str(REPO / "tools" / "bench" / "nexmark_peers.py"),
         "--engines", "sluice", "--events", str(EVENTS), "--first-event-rate", str(RATE),
         "--base-time-ms", str(BASE_MS), "--batch", "5000", "--runs", "2",
         "--bin", sluiced_binary(), "--gen", gen_binary(), "--json", str(out)],
        capture_output=True, text=True, timeout=1800)
    assert res.returncode == 0, res.stdout + res.stderr
    figures = json.loads(out.read_text())
    persons, auctions, bids = gen_rows("person"), gen_rows("auction"), gen_rows("bid")
    assert figures["bids"] == len(bids) == nexmark_peers.nexmark_bids(EVENTS)
    # Each topic holds its rows and one end marker per partition (2).
    assert figures["counts"] == {"person": len(persons) + 2, "auction": len(auctions) + 2,
                                 "bid": len(bids) + 2}
    want = expected_signatures(persons, auctions, bids)
    assert set(figures["queries"]) == set(nexmark_peers.SIGNATURE)
    for q, fig in figures["queries"].items():
        assert fig["mismatch"] is None, q
        runs = fig["runs"]["sluice"]
        assert len(runs) == 2, q
        for r in runs:
            assert r["input_rows"] == nexmark_peers.SLUICE_SCANS.get(q, 1) * sum(
                figures["counts"][t] for t in nexmark_peers.TABLES[q]), q
            assert [Decimal(v) for v in r["signature"]] == want[q], q
            assert r["wall_s"] > 0 and r["cpu_s"] > 0, q
    # The queries that join or close windows have rows to compare.
    for q in ("q3", "q4", "q5", "q7", "q8"):
        assert want[q][0] > 0, q
    # The markdown table names every query with its figures.
    for q in nexmark_peers.SIGNATURE:
        assert f"| {q} |" in res.stdout


def result(sig, rows=None, sources=None):
    return {"engine": "x", "wall_s": 1.0, "cpu_s": 1.0, "input_rows": rows,
            "input_sources": sources, "signature": [str(v) for v in sig]}


def test_check_refuses_disagreement():
    check = nexmark_peers.check
    counts = {"person": 10, "auction": 30, "bid": 100}
    # sluice's q7, one query, reads bid twice (SLUICE_SCANS)
    same = {"sluice": [result([10, 5], rows=200)] * 2,
            "spark": [result([10, 5], sources=[["bid", 100], ["bid", 100]])],
            "flink": [result([10, "5.000"])]}
    assert check("q7", same, counts, 98) is None
    # One engine's result differs: no figure.
    other = dict(same, flink=[result([10, 6])])
    assert "flink" in check("q7", other, counts, 98)
    # Two runs of one engine differ.
    runs = dict(same, sluice=[result([10, 5], rows=200), result([11, 5], rows=200)])
    assert "sluice" in check("q7", runs, counts, 98)
    # An engine that read fewer rows than the topics hold.
    short = dict(same, sluice=[result([10, 5], rows=199)])
    assert "sluice read 199 of 200" in check("q7", short, counts, 98)
    once = dict(same, sluice=[result([10, 5], rows=100)])
    assert "sluice read 100 of 200" in check("q7", once, counts, 98)
    # A query over two topics reads both.
    assert check("q3", {"sluice": [result([3, 5], rows=40)]}, counts, 98) is None
    assert "read 30 of 40" in check("q3", {"sluice": [result([3, 5], rows=30)]}, counts, 98)
    # Spark counts a topic its plan scans twice (q7) twice: a whole multiple.
    twice = dict(same, spark=[result([10, 5], sources=[["bid", 200]])])
    assert check("q7", twice, counts, 98) is None
    # One of Spark's sources read less.
    spark_short = dict(same, spark=[result([10, 5], sources=[["bid", 100], ["bid", 97]])])
    assert "spark read 97 of 100 rows of bid" in check("q7", spark_short, counts, 98)
    # q0 and q1 must write one row per bid (end markers aside), even if all agree.
    assert "wrote 10 rows of 98" in check("q0", dict(same, sluice=[result([10, 5], rows=100)]),
                                          counts, 98)
    # A failed or refused engine is left out of the comparison.
    failed = dict(same, flink=[{"error": "exit 1"}], spark=[{"refused": "no"}])
    assert check("q7", failed, counts, 98) is None


def test_fixed_cost_table():
    """--fixed-from: each engine's CPU at the tiny run's events is taken off
    its CPU at N before events/s per core and the ratios; a cell whose runs
    failed or whose query mismatched in either file has no figure."""
    def fig(events, cpus, mismatch=None):
        return {"events": events, "runs": len(cpus["sluice"]),
                "engines": ["sluice", "spark", "flink"],
                "queries": {"q1": {"mismatch": mismatch, "runs": {
                    e: [dict(result([1, 2]), cpu_s=c) if c is not None else {"error": "x"}
                        for c in cs] for e, cs in cpus.items()}}}}

    big = fig(2_020_000, {"sluice": [2.1, 2.0, 2.3], "spark": [40.0, 30.0, 62.0],
                          "flink": [27.0, 29.0, 28.0]})
    small = fig(20_000, {"sluice": [0.05], "spark": [12.0], "flink": [None]})
    lines = nexmark_peers.fixed_cost_lines(big, small)
    assert lines[0].startswith("| query | sluice CPU at 20,000 events |")
    assert "sluice/spark per core without the fixed cost" in lines[0]
    row = lines[2].split(" | ")
    # sluice: median 2.1 s - 0.05 s; 2,000,000 events / 2.05 s.
    assert row[1] == "0.05 s" and row[2] == "976 k"
    # spark: median 40 s - 12 s = 28 s: 71 k per core; 28 / 2.05 = 13.7x.
    assert row[3] == "12.00 s" and row[4] == "71 k"
    assert "**13.7x**" in lines[2]
    # flink's tiny run failed: no figure and no ratio for it.
    assert "**" not in row[-1] and lines[2].count("**") == 2
    # A query that mismatched in either file is left out.
    assert len(nexmark_peers.fixed_cost_lines(
        big, fig(20_000, {"sluice": [0.05], "spark": [12.0], "flink": [9.0]},
                 mismatch="x"))) == 2


def test_table_of_a_run_cut_short():
    """A --json file written in the middle of a query (after each run) has
    cells with fewer runs and engines not run yet: the table gives the runs
    there are, "not run" for the others, and no ratio to a peer not run."""
    runs = {"sluice": [dict(result([1, 2]), cpu_s=2.0, wall_s=4.0),
                       dict(result([1, 2]), cpu_s=4.0, wall_s=4.0)],
            "spark": [dict(result([1, 2]), cpu_s=30.0, wall_s=20.0)], "flink": []}
    lines = nexmark_peers.table_lines(argparse.Namespace(events=3_000_000),
                                      ["sluice", "spark", "flink"], [("q4", runs, None)])
    row = lines[2]
    # sluice per core: the median of the 2 runs' rates (1.5 M and 750 k).
    assert "| 1.12 M (750 k–1.50 M) |" in row
    assert "**10.0x**" in row                     # 30 s / the median 3 s
    assert "| not run | | |" in row and row.endswith("| | |")


def test_stopped_run_is_a_lower_bound():
    """--peer-cap: a peer's run stopped unfinished is neither a failure nor
    a figure: check() leaves it out, the table gives its CPU and wall time
    so far as bounds ("> 600 s (stopped)", "< 17 k" per core) and the
    ratio as "> Nx" from the least over the cell's runs; so does the table
    without the fixed cost.  A cell with a failed run besides gets no bound."""
    stopped = {"stopped": True, "wall_s": 600.0, "cpu_s": 1200.0}
    runs = {"sluice": [dict(result([1, 2]), cpu_s=20.0, wall_s=25.0)],
            "spark": [dict(result([1, 2]), cpu_s=500.0, wall_s=300.0)],
            "flink": [stopped]}
    counts = {"person": 10, "auction": 30, "bid": 100}
    assert nexmark_peers.check("q7", runs, counts, 98) is None
    args = argparse.Namespace(events=20_000_000)
    engines = ["sluice", "spark", "flink"]
    row = nexmark_peers.table_lines(args, engines, [("q7", runs, None)])[2]
    assert "| > 600 s (stopped) | < 33 k | < 17 k |" in row
    assert "**25.0x** | 12.0x |" in row            # spark: finished, exact
    assert row.endswith("| **> 60.0x** | > 24.0x |")
    # Two runs, one finished, one stopped: the least CPU and wall bound it.
    two = dict(runs, flink=[dict(result([1, 2]), cpu_s=900.0, wall_s=700.0), stopped])
    row = nexmark_peers.table_lines(args, engines, [("q7", two, None)])[2]
    assert row.endswith("| **> 45.0x** | > 24.0x |")
    # A failed run in the cell: no bound, no ratio.
    bad = dict(runs, flink=[{"error": "exit 1"}, stopped])
    row = nexmark_peers.table_lines(args, engines, [("q7", bad, None)])[2]
    assert "| failed | | |" in row and row.endswith("| | |")
    # Without the fixed cost: 1,200 s - 10 s against 20 s - 0.05 s.
    fig = {"events": 20_000_000, "runs": 1, "engines": engines,
           "queries": {"q7": {"mismatch": None, "runs": runs}}}
    small = {"events": 20_000, "runs": 1, "engines": engines,
             "queries": {"q7": {"mismatch": None, "runs": {
                 "sluice": [dict(result([1, 2]), cpu_s=0.05)],
                 "spark": [dict(result([1, 2]), cpu_s=12.0)],
                 "flink": [dict(result([1, 2]), cpu_s=10.0)]}}}}
    row = nexmark_peers.fixed_cost_lines(fig, small)[2]
    assert "| 10.00 s | < 17 k |" in row and row.endswith("| **> 59.6x** |")


def test_session_cpu_seconds():
    """The CPU of a stopped peer is its session's, read from /proc: a
    session that burns CPU shows it, and a session with no process none."""
    proc = subprocess.Popen([sys.executable, "-c",
                             "import time\nt = time.process_time()\n"
                             "while time.process_time() - t < 0.5: pass\n"
                             "time.sleep(60)"], start_new_session=True)
    try:
        deadline = time.monotonic() + 30
        while nexmark_peers.session_cpu_seconds(proc.pid) < 0.4:
            assert time.monotonic() < deadline, "no CPU seen for the session"
            time.sleep(0.1)
    finally:
        proc.kill()
        proc.wait()
    assert nexmark_peers.session_cpu_seconds(proc.pid) == 0
