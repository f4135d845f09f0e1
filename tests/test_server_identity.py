"""What a server says about itself before it serves (issue 23, item 6).

- `sluiced --version` names the version and the git commit it was built
  from (meson's vcs_tag, src/version.h.in); a source tree without .git
  says "unknown" (checked by configuring a copy of the tracked files
  without .git and generating only that header);
- a second server on a data directory that a running server holds is
  refused at once, naming the running server's pid, before it opens the
  catalog or the state store (no RocksDB LOCK error); the running server
  is untouched, and once it stops the directory starts again.
"""

import re
import shutil
import subprocess
from pathlib import Path

import psycopg
from conftest import sluiced_binary, sluiced_refuses

REPO = Path(__file__).resolve().parent.parent
VERSION_RE = re.compile(r"^sluiced (\d+\.\d+\.\d+) \(commit ([0-9a-f]{7,40}\+?|unknown)\)$")


def project_version():
    text = (REPO / "meson.build").read_text()
    return re.search(r"version: '([^']+)'", text).group(1)


def test_version_names_the_commit():
    out = subprocess.run([sluiced_binary(), "--version"], capture_output=True, text=True,
                         timeout=30, check=True).stdout.strip()
    m = VERSION_RE.match(out)
    assert m, out
    assert m.group(1) == project_version()
    commit = m.group(2).rstrip("+")
    if (REPO / ".git").exists() and commit != "unknown":
        # a commit of this repository (the one the binary was built from)
        assert subprocess.run(["git", "-C", str(REPO), "cat-file", "-e", commit + "^{commit}"],
                              capture_output=True).returncode == 0, out


def source_files():
    """The source tree's files, relative: git's list (tracked, and untracked
    not ignored) in a checkout, else every file outside the build folders."""
    if (REPO / ".git").exists():
        out = subprocess.run(["git", "-C", str(REPO), "ls-files", "-z", "--cached", "--others",
                              "--exclude-standard"], capture_output=True, check=True).stdout
        return [n for n in out.decode().split("\0") if n]
    skip = ("build", ".venv", "data", ".jars")
    return [str(p.relative_to(REPO)) for p in REPO.rglob("*")
            if p.is_file() and not any(part.startswith(skip) for part in p.relative_to(REPO).parts)]


def test_version_without_git_is_unknown(tmp_path):
    src = tmp_path / "src-copy"
    for name in source_files():
        path = REPO / name
        if path.is_file() and not path.is_symlink():
            (src / name).parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(path, src / name)
    assert not (src / ".git").exists()
    subprocess.run(["meson", "setup", str(tmp_path / "b")], cwd=src, capture_output=True,
                   check=True, timeout=300)
    subprocess.run(["ninja", "-C", str(tmp_path / "b"), "src/version.h"], capture_output=True,
                   check=True, timeout=120)
    header = (tmp_path / "b" / "src" / "version.h").read_text()
    assert '#define SLUICE_COMMIT "unknown"' in header


def test_second_server_on_the_same_data_dir_is_refused(sluiced):
    server = sluiced()
    with psycopg.connect(server.dsn, autocommit=True) as c:
        c.execute("CREATE TABLE t (k BIGINT PRIMARY KEY)")
        c.execute("INSERT INTO t VALUES (1)")
    res = sluiced_refuses(["--listen", "127.0.0.1", "--port", "0",
                           "--data-dir", str(server.data_dir)])
    text = res.stdout + res.stderr
    assert res.returncode == 1
    assert "refusing to start: another sluiced is running on this data directory" in text
    assert f"pid={server.proc.pid}" in text
    # Stopped before the catalog or the state store was opened.
    assert "LOCK" not in text and "catalog migrated" not in text
    assert "cannot open" not in text
    # The running server is untouched; once it stops, the directory starts again.
    with psycopg.connect(server.dsn, autocommit=True) as c:
        assert c.execute("SELECT k FROM t").fetchall() == [(1,)]
    server.restart()
    with psycopg.connect(server.dsn, autocommit=True) as c:
        assert c.execute("SELECT k FROM t").fetchall() == [(1,)]
