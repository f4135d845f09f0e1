"""psql's describe commands against sluice's catalog emulation.

psql runs its own catalog queries (pg_catalog.pg_class, pg_namespace,
pg_database, pg_roles, OPERATOR(pg_catalog.~), correlated subqueries,
::regtype casts, generate_series, array subscripts, ...) for \\l, \\dt,
\\d, \\dn, \\du and \\d NAME of a table, a stream, a result table and
system tables; \\d+ (the list with each relation's size: pg_table_size,
pg_size_pretty), \\df and \\df+ (pg_proc, pg_language), \\sf (regproc,
regprocedure, pg_get_functiondef of a built-in function, as PostgreSQL 15
shows its own) and \\dT (pg_type; pg_enum for \\dT+);
the output is compared with the expected files under tests/expected/psql/,
with only what truly varies masked (timings).  Those files are golden:
written from sluice's own output, not PostgreSQL's, each opening with
GOLDEN_HEADER; `tools/golden.sh psql` rewrites them from the current output
(this file run with SLUICE_UPDATE_EXPECTED=1, which ./tools/test unsets),
and the diff is reviewed by hand.
"""

import os
import re
import subprocess
from pathlib import Path

import pytest

EXPECTED = Path(__file__).parent / "expected" / "psql"
GOLDEN_HEADER = ("-- golden: psql's output against sluice (tests/test_psql_catalog.py), written\n"
                 "-- from sluice's own output, not PostgreSQL's: tools/golden.sh psql rewrites it\n")

SETUP = """
CREATE TABLE users (user_id BIGINT PRIMARY KEY, country VARCHAR(2) NOT NULL, score NUMERIC(10,2));
CREATE STREAM clicks (user_id BIGINT, url TEXT, ts TIMESTAMP,
  WATERMARK FOR ts AS ts - INTERVAL '10 seconds');
CREATE CONTINUOUS QUERY clicks_per_user WITH (trigger = '1 hour', output_mode = 'update')
  AS SELECT user_id, count(*) AS n FROM clicks GROUP BY user_id;
"""


@pytest.fixture(scope="module")
def catalog_server(sluiced_module):
    server = sluiced_module()
    from conftest import run_psql
    rc, out, err = run_psql(server, SETUP)
    assert rc == 0, err
    return server


def mask(text):
    return re.sub(r"Time: \d+(\.\d+)? ms", "Time: N ms", text)


def check_expected(name, text):
    path = EXPECTED / f"{name}.out"
    if os.environ.get("SLUICE_UPDATE_EXPECTED"):
        path.write_text(GOLDEN_HEADER + text)
        return
    assert path.exists(), f"missing expected file {path}"
    saved = path.read_text()
    assert saved.startswith(GOLDEN_HEADER), f"{path} does not open with GOLDEN_HEADER"
    assert text == saved[len(GOLDEN_HEADER):], f"psql output differs from {path}"


@pytest.mark.parametrize("name,command", [
    ("l", r"\l"),
    ("dt", r"\dt"),
    ("d", r"\d"),
    ("dn", r"\dn"),
    ("dt_pattern", r"\dt u*"),
    ("du", r"\du"),
    ("d_table", r"\d users"),
    ("d_stream", r"\d clicks"),
    ("d_result_table", r"\d clicks_per_user"),
    ("d_pg_namespace", r"\d pg_namespace"),
    ("dfS_upper", r"\dfS upper"),
    ("d_plus_table", r"\d+ users"),
    ("d_plus_result_table", r"\d+ clicks_per_user"),
    ("d_plus_sys", r"\d+ sys.state"),
    ("d_sys_streams", r"\d sys.streams"),
    ("d_sys_queries", r"\d sys.queries"),
    ("d_plus", r"\d+"),
    ("df", r"\df"),
    ("df_plus_upper", r"\df+ upper"),
    ("sf_upper", r"\sf upper"),
    ("sf_plus_lower", r"\sf+ lower(text)"),
    ("dT", r"\dT"),
    ("dTS_int", r"\dTS int*"),
])
def test_psql_describe(catalog_server, psql, name, command):
    rc, out, err = psql(catalog_server, command)
    assert rc == 0, err
    assert err == ""
    check_expected(name, mask(out))


def psql_script(server, script):
    """Runs a psql script (meta-commands and queries) from stdin."""
    env = dict(os.environ, LC_ALL="C", LANG="C", PGCONNECT_TIMEOUT="10")
    res = subprocess.run(["psql", server.dsn, "-X", "-w", "-v", "ON_ERROR_STOP=1", "-f", "-"],
                         input=script, capture_output=True, text=True, env=env, timeout=60)
    return res.returncode, res.stdout, res.stderr


def test_psql_expanded_and_timing(catalog_server):
    # \x and \timing are psql's own; the query is an ordinary catalog query
    script = "\\x\n\\timing\nSELECT name, columns, primary_key FROM sys.tables;\n"
    rc, out, err = psql_script(catalog_server, script)
    assert rc == 0, err
    assert re.search(r"Time: \d+\.\d+ ms", out), out
    check_expected("x_timing", mask(out))


def test_psql_describe_streams_in_sys(catalog_server, psql):
    rc, out, err = psql(catalog_server, "SELECT name, row_count FROM sys.streams", "-At")
    assert rc == 0, err
    assert out.strip() == "clicks|0"
