"""Running a driver program for the driver tests: build once, run, collect.

    run_driver(cmd, server, cwd)  runs cmd with SLUICE_CASES in the environment
                                  and returns {case name: result} from the JSON
                                  lines it printed (matrix.parse_lines)
    assert_case(results, name)    fails the test with the driver's own error
    mvn_build(project, cls, sources, classpath)
                                  compiles a Maven project (offline first) when
                                  a source or the pom is newer than cls
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


def mvn_build(project, cls, sources, classpath):
    """Compiles the Maven project and writes its classpath to classpath, when
    cls is missing or older than a source or the pom (offline from ~/.m2
    first, then letting Maven fetch what is missing)."""
    newest = max([p.stat().st_mtime for p in sources] +
                 [(project / "pom.xml").stat().st_mtime])
    if (cls.exists() and classpath.exists() and cls.stat().st_mtime >= newest
            and classpath.stat().st_mtime >= newest):
        return
    cmd = ["mvn", "-B", "-q", "compile", "dependency:build-classpath",
           f"-Dmdep.outputFile={classpath}"]
    res = subprocess.run(["mvn", "-o", *cmd[1:]], cwd=project, capture_output=True,
                         text=True, timeout=600, stdin=subprocess.DEVNULL)
    if res.returncode != 0:     # not all in ~/.m2 yet: let Maven fetch it
        res = subprocess.run(cmd, cwd=project, capture_output=True, text=True,
                             timeout=600, stdin=subprocess.DEVNULL)
    if res.returncode != 0:
        pytest.fail(f"mvn failed:\n{res.stdout[-4000:]}\n{res.stderr[-4000:]}")
    cls.touch()


def assert_case(results, name, checks=None):
    assert name in results, f"no result for {name}: {sorted(results)}"
    result = results[name]
    assert result["ok"], result.get("error")
    if checks is not None:
        assert result["checks"] == checks
