"""pgx logs in as a role made with CREATE ROLE ... PASSWORD under a
scram-sha-256 hba rule and runs the same checks as test_pgx.py in its three
exec modes; a wrong password is refused with 28P01 (catalog_role.py).
"""

import shutil

import pytest

from catalog_role import ROLE_CONFIG, check_catalog_role
from test_pgx import BINARY, GO_DIR, build


@pytest.mark.timeout(900)
def test_pgx_logs_in_as_a_catalog_role_with_scram(sluiced):
    if shutil.which("go") is None:
        pytest.skip("go is not installed")
    build()
    server = sluiced(config=ROLE_CONFIG)
    check_catalog_role([str(BINARY), "-test.run", "TestCases", "-test.v"], GO_DIR, server,
                       "pgx_role", "pgx-role-pw", ["cache_statement", "exec", "simple_protocol"])
