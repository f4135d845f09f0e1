"""pgJDBC logs in as a role made with CREATE ROLE ... PASSWORD under a
scram-sha-256 hba rule and runs the same checks as test_jdbc.py in its three
modes; a wrong password is refused with 28P01 (catalog_role.py).
"""

import shutil

import pytest

from catalog_role import ROLE_CONFIG, check_catalog_role
from test_jdbc import CLASSPATH, JDBC_DIR, build


@pytest.mark.timeout(900)
def test_jdbc_logs_in_as_a_catalog_role_with_scram(sluiced):
    if shutil.which("java") is None or shutil.which("mvn") is None:
        pytest.skip("java or mvn is not installed")
    build()
    server = sluiced(config=ROLE_CONFIG)
    cp = f"{JDBC_DIR / 'target' / 'classes'}:{CLASSPATH.read_text().strip()}"
    check_catalog_role(["java", "-Xshare:auto", "-XX:TieredStopAtLevel=1", "-cp", cp,
                        "sluice.JdbcClient"], JDBC_DIR, server, "jdbc_role", "jdbc-role-pw",
                       ["extended", "binary", "simple"])
