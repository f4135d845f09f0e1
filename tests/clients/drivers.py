"""Running a driver program for the driver tests: build once, run, collect.

    run_driver(cmd, server, cwd)  runs cmd with SLUICE_CASES in the environment
                                  and returns {case name: result} from the JSON
                                  lines it printed (matrix.parse_lines)
    assert_case(results, name)    fails the test with the driver's own error
    mvn_build(project, cls, sources, classpath)
                                  compiles a Maven project (offline first) when
                                  a source or the pom is newer than cls
    java_main(cls_name, *args)    builds tests/clients/jdbc and runs one of its
                                  main classes (sluice.NAME), returning stdout
    build_stale(binary, sources, cmd, cwd)
                                  runs a build command when binary is missing
                                  or older than a source (go test -c, cargo)
"""

import os
import shutil
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


JDBC_DIR = os.path.join(os.path.dirname(os.path.abspath(__file__)), "jdbc")


def java_main(cls_name, *args):
    """Builds tests/clients/jdbc (mvn_build) and runs its main class
    sluice.<cls_name> with args; fails the test unless it exits 0, and
    returns its stdout."""
    from pathlib import Path
    if shutil.which("java") is None or shutil.which("mvn") is None:
        pytest.skip("java or mvn is not installed")
    project = Path(JDBC_DIR)
    sources = list((project / "src" / "main" / "java" / "sluice").glob("*.java"))
    classpath = project / "target" / "classpath.txt"
    mvn_build(project, project / "target" / "classes" / "sluice" / f"{cls_name}.class",
              sources, classpath)
    cp = f"{project / 'target' / 'classes'}:{classpath.read_text().strip()}"
    res = subprocess.run(["java", "-Xshare:auto", "-XX:TieredStopAtLevel=1", "-cp", cp,
                          f"sluice.{cls_name}", *map(str, args)], capture_output=True,
                         text=True, timeout=240, stdin=subprocess.DEVNULL)
    assert res.returncode == 0, f"{res.stdout[-3000:]}\n{res.stderr[-3000:]}"
    return res.stdout


def build_stale(binary, sources, cmd, cwd, timeout=900):
    """Runs cmd in cwd when binary is missing or older than one of sources;
    fails the test with its output when it fails."""
    if binary.exists() and all(binary.stat().st_mtime >= s.stat().st_mtime for s in sources):
        return
    res = subprocess.run(cmd, cwd=cwd, capture_output=True, text=True, timeout=timeout,
                         stdin=subprocess.DEVNULL)
    if res.returncode != 0:
        pytest.fail(f"{' '.join(cmd)} failed:\n{res.stdout[-4000:]}\n{res.stderr[-4000:]}")
