"""Running a driver program for the driver tests: build once, run, collect.

    run_driver(cmd, server, cwd)  runs cmd with SLUICE_CASES in the environment
                                  and returns {case name: result} from the JSON
                                  lines it printed (matrix.parse_lines)
    assert_case(results, name)    fails the test with the driver's own error
"""

import os
import subprocess

import pytest

from matrix import case_json, parse_lines


def run_driver(cmd, server, cwd, timeout=240, env=None):
    environ = dict(os.environ, SLUICE_CASES=case_json(server, server.certs),
                   **(env or {}))
    res = subprocess.run(cmd, cwd=cwd, capture_output=True, text=True,
                         timeout=timeout, env=environ, stdin=subprocess.DEVNULL)
    results = parse_lines(res.stdout)
    if res.returncode != 0 or not results:
        pytest.fail(f"{' '.join(map(str, cmd))} exited {res.returncode}\n"
                    f"--- stdout ---\n{res.stdout[-4000:]}\n"
                    f"--- stderr ---\n{res.stderr[-4000:]}")
    return results


def assert_case(results, name, checks=None):
    assert name in results, f"no result for {name}: {sorted(results)}"
    result = results[name]
    assert result["ok"], result.get("error")
    if checks is not None:
        assert result["checks"] == checks
