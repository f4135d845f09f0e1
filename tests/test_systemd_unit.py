"""tools/systemd: the unit's command line and the sample configuration file
start this sluiced, and `systemctl reload` (ExecReload: SIGHUP) reloads it
(issue 23, item 6; docs/operations.md, "Running as a service").

The unit's ExecStart is checked, then its options run as systemd would run
them, but for the binary (the one under test), the data directory (the
test's) and the port (a free one: the fixture's --port, which wins over the
sample's `port = 7433` as the command line always does).
"""

import configparser
import os
import shlex
import shutil
import signal
import subprocess
from pathlib import Path

import psycopg

from helpers import wait_for

ROOT = Path(__file__).resolve().parent.parent
UNIT = ROOT / "tools" / "systemd" / "sluiced.service"
SAMPLE = ROOT / "tools" / "systemd" / "sluiced.conf"


def unit():
    parser = configparser.ConfigParser(strict=False, interpolation=None)
    parser.optionxform = str
    parser.read(UNIT)
    return parser


def test_unit_and_sample_config_start_the_server(sluiced):
    service = unit()["Service"]
    args = shlex.split(service["ExecStart"])
    assert args[0] == "/usr/local/bin/sluiced"
    assert args[1:] == ["--config", "/etc/sluice/sluiced.conf", "--data-dir", "/var/lib/sluice"]
    assert service["ReadWritePaths"] == "/var/lib/sluice"
    assert service["ExecReload"] == "/bin/kill -HUP $MAINPID"
    assert service["KillSignal"] == "SIGTERM"
    # The fixture gives --listen, --port 0 and --data-dir; the config file is
    # the sample, unchanged; the command line wins over its port.
    s = sluiced(config=SAMPLE.read_text())
    with psycopg.connect(s.dsn, autocommit=True) as conn:
        settings = dict(conn.execute(
            "SELECT name, setting FROM pg_settings WHERE name IN "
            "('max_connections', 'shutdown_timeout')").fetchall())
        assert settings == {"max_connections": "1000", "shutdown_timeout": "10"}
    assert "hba_rules=2" in s.log_path.read_text()
    # systemctl reload: SIGHUP re-reads the file.
    os.kill(s.proc.pid, signal.SIGHUP)
    assert wait_for(lambda: s.log_path.read_text().count("configuration reloaded"), 1) == 1
    with psycopg.connect(s.dsn, autocommit=True) as conn:
        assert conn.execute("SELECT 1").fetchone() == (1,)


def test_every_sample_line_is_an_option(sluiced):
    """Each line of the sample, commented out or not, is an option this
    sluiced takes: uncommented, they start it (paths aside)."""
    lines = []
    for raw in SAMPLE.read_text().splitlines():
        line = raw.strip()
        if not line.startswith("#") or "=" not in line or line.startswith("# "):
            continue
        body = line[1:].split("  #")[0].strip()
        name = body.split("=")[0].strip()
        if name.startswith(("ssl", "user.", "http", "listen", "port", "data_dir", "files_root")):
            continue            # need files or change where the test connects
        lines.append(body)
    assert len(lines) >= 10, lines
    s = sluiced(config=SAMPLE.read_text() + "\n".join(lines) + "\n")
    with psycopg.connect(s.dsn, autocommit=True) as conn:
        assert conn.execute("SELECT 1").fetchone() == (1,)


def test_systemd_analyze_verifies_the_unit(tmp_path):
    analyze = shutil.which("systemd-analyze")
    assert analyze, "systemd-analyze missing (Debian's systemd package)"
    binary = Path(os.environ.get("SLUICE_BIN", "build-asan/src/sluiced")).resolve()
    text = UNIT.read_text().replace("/usr/local/bin/sluiced", str(binary))
    (tmp_path / "sluiced.service").write_text(text)
    r = subprocess.run([analyze, "verify", "--man=no", str(tmp_path / "sluiced.service")],
                       capture_output=True, text=True, timeout=60)
    # Lines about the running system (no systemd as PID 1 in a container) are
    # not about the unit; anything naming the unit file is.
    about = [l for l in (r.stdout + r.stderr).splitlines() if "sluiced.service" in l]
    assert about == [], about
