#!/usr/bin/env python3
"""tools/bench/regex_bench.py -- the cost of a regular expression per row:
each query below over generate_series(1, 1000000), on two release sluiced
binaries (BEFORE and AFTER), runs interleaved; prints each run's wall time
and the median per binary.

    python3 tools/bench/regex_bench.py BEFORE_SLUICED AFTER_SLUICED [RUNS]
"""
import statistics
import sys
import time

import psycopg

sys.path.insert(0, __import__("os").path.dirname(__file__))
from benchsrv import Server  # noqa: E402

QUERIES = [
    r"SELECT count(*) FROM generate_series(1,1000000) g WHERE g::text ~ '^1[0-9]*5$'",
    r"SELECT count(*) FROM generate_series(1,1000000) g WHERE g::text ~* '(12|34)5'",
    r"SELECT count(*) FROM generate_series(1,1000000) g WHERE g::text ~ g::text",
]


def main():
    before, after = sys.argv[1], sys.argv[2]
    runs = int(sys.argv[3]) if len(sys.argv) > 3 else 5
    with Server(before) as b, Server(after) as a:
        conns = {"before": psycopg.connect(b.dsn, autocommit=True),
                 "after": psycopg.connect(a.dsn, autocommit=True)}
        for q in QUERIES:
            times = {"before": [], "after": []}
            answers = set()
            for _ in range(runs):
                for name, c in conns.items():
                    began = time.monotonic()
                    answers.add(c.execute(q).fetchone()[0])
                    times[name].append(time.monotonic() - began)
            print(q)
            for name, t in times.items():
                print(f"  {name:6} median {statistics.median(t):.3f} s  "
                      f"runs {' '.join(f'{x:.3f}' for x in t)}")
            if len(answers) != 1:
                print(f"  answers differ: {answers}")


if __name__ == "__main__":
    main()
