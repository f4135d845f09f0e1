"""pgJDBC (org.postgresql:postgresql, pinned in tests/clients/jdbc/pom.xml)
against sluiced: every authentication method over plain TCP and TLS
(verify-full), in three modes (extended with prepareThreshold, server-prepared
with binary results from the first execution, the simple protocol), typed
parameters and results, a fetch size (Execute row limits), transactions with
25P02, typed errors, and a refused wrong password.

Maven compiles the class and writes the classpath once (offline, from
~/.m2, which tools/deps.sh deps_clients fills); it runs again only when the
pom or the source is newer than the compiled class.
"""

import shutil
from pathlib import Path

import pytest

from drivers import assert_case, mvn_build, run_driver
from matrix import CASE_IDS, CASES, client_server  # noqa: F401 (fixture)
from conftest import USERS

JDBC_DIR = Path(__file__).parent / "jdbc"
SOURCE = JDBC_DIR / "src" / "main" / "java" / "sluice" / "JdbcClient.java"
CLASS = JDBC_DIR / "target" / "classes" / "sluice" / "JdbcClient.class"
CLASSPATH = JDBC_DIR / "target" / "classpath.txt"


def build():
    mvn_build(JDBC_DIR, CLASS, [SOURCE], CLASSPATH)


@pytest.fixture(scope="module")
def jdbc_results(client_server):
    if shutil.which("java") is None or shutil.which("mvn") is None:
        pytest.skip("java or mvn is not installed")
    build()
    cp = f"{JDBC_DIR / 'target' / 'classes'}:{CLASSPATH.read_text().strip()}"
    return run_driver(["java", "-Xshare:auto", "-XX:TieredStopAtLevel=1", "-cp", cp,
                       "sluice.JdbcClient"], client_server, JDBC_DIR)


@pytest.mark.timeout(900)
@pytest.mark.parametrize("user,transport", CASES, ids=CASE_IDS)
def test_jdbc(jdbc_results, user, transport):
    assert_case(jdbc_results, f"{USERS[user][0]}-{transport}",
                ["extended", "binary", "simple"])


@pytest.mark.parametrize("user", [u for u in USERS if USERS[u][0] != "trust"])
def test_jdbc_wrong_password(jdbc_results, user):
    assert_case(jdbc_results, f"{USERS[user][0]}-plain-wrong-password", ["refused"])


def test_jdbc_statement_cancel(jdbc_results):
    """Statement.cancel() from another thread: 57014, and the connection
    goes on (trust over plain TCP)."""
    assert_case(jdbc_results, "trust-plain-cancel", ["cancel"])


def test_jdbc_copy(jdbc_results):
    """COPY FROM STDIN and TO STDOUT through the driver's copy API (trust, plain TCP)."""
    assert_case(jdbc_results, "trust-plain-copy", ["copy"])
