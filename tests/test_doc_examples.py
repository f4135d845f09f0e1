"""Every SQL example in the docs runs as written.

README.md and docs/*.md show SQL as indented code blocks. A block is an
*example* when it starts with an SQL keyword (or psql's \\copy) and its
statements end with ';'; a block without ';' is a synopsis (grammar with
[ ] { } |) and is not run. Each page's examples run in page order on one
server (a fresh data directory per page), as the superuser, through
psycopg (simple query protocol, autocommit, one session per page), so an
example may use the objects an earlier one on the page made.

Inside an example:
  - a statement whose trailing comment starts with a SQLSTATE
    (`DROP STREAM bronze;   -- 2BP01 while ...`) must fail with that code;
  - lines `ERROR:  text` right after a statement: it must fail, and its
    message must start with text (DETAIL:/HINT: lines are shown, not
    checked);
  - any other lines that are not statements are the output the page shows
    (EXPLAIN's plan); they are not run.

Hidden context, as HTML comments in the markdown (invisible when rendered),
applies to the next example block:
  <!-- doctest: fresh -->              start it on a new server and session
  <!-- doctest: setup                  run these statements first
  SQL; ...
  -->
  <!-- doctest: file NAME              write NAME (for \\copy ... from 'NAME')
  contents
  -->
Paths: every `path = '/abs/dir'` option is moved under the test's temporary
directory (sources' directories are made first); Kafka bootstrap servers are
pointed at a loopback port where nothing listens (CREATE does no I/O; the
queries it starts retry). No other text is changed.
"""

import re
import socket
from pathlib import Path

import psycopg
import pytest

REPO = Path(__file__).resolve().parent.parent
PAGES = [REPO / "README.md"] + sorted((REPO / "docs").glob("*.md"))

STMT_START = re.compile(
    r"^(SELECT|CREATE|INSERT|DROP|ALTER|COPY|SUBSCRIBE|EXPLAIN|SET|SHOW|GRANT|"
    r"REVOKE|UPDATE|DELETE|WITH|VALUES|BEGIN|COMMIT|ROLLBACK|TABLE|RESET|"
    r"TRUNCATE|SAVEPOINT|RELEASE|\\copy)\b", re.I)
END = re.compile(r";\s*(--.*)?$")
SQLSTATE_COMMENT = re.compile(r"--\s*([0-9A-Z]{5})\b")
MARKER = re.compile(r"<!--\s*doctest:\s*(\w+)([^\n]*)\n?(.*?)-->", re.S)


class Example:
    def __init__(self, page, line):
        self.page, self.line = page, line
        self.fresh = False
        self.setup = []
        self.files = {}
        self.statements = []    # (line, sql, expected sqlstate, expected message)

    def where(self, line=None):
        return f"{self.page.relative_to(REPO)}:{line or self.line}"


def split_statements(lines, first_line):
    """(line, sql, sqlstate, message) for each statement of a block's lines."""
    out, cur, start = [], [], None
    for i, text in enumerate(lines):
        if not cur:
            if text.startswith("ERROR:") and out:
                ln, sql, code, _ = out[-1]
                out[-1] = (ln, sql, code, text[len("ERROR:"):].strip())
                continue
            if not STMT_START.match(text):
                continue            # shown output, DETAIL/HINT, a blank line
            start = first_line + i
            if text.startswith("\\copy"):
                out.append((start, text.strip(), None, None))
                continue
        cur.append(text)
        if END.search(text):
            sql = "\n".join(cur)
            m = SQLSTATE_COMMENT.search(text[text.rfind(";"):])
            code = m.group(1) if m and re.search(r"\d", m.group(1)) else None
            out.append((start, sql, code, None))
            cur = []
    if cur:
        return None                 # a statement without ';': a synopsis
    return out


def examples_of(page):
    """The page's example blocks, with the hidden context before each."""
    text = page.read_text()
    lines = text.split("\n")
    found = []
    pending = Example(page, 0)
    i = 0
    while i < len(lines):
        line = lines[i]
        if line.lstrip().startswith("<!--") and "doctest:" in line:
            j = i
            while "-->" not in lines[j]:
                j += 1
            m = MARKER.search("\n".join(lines[i:j + 1]))
            assert m, f"{page}:{i + 1}: malformed doctest marker"
            kind, arg, body = m.group(1), m.group(2).strip(), m.group(3)
            if kind == "fresh":
                pending.fresh = True
            elif kind == "setup":
                pending.setup.append(body)
            elif kind == "file":
                pending.files[arg] = body
            else:
                raise AssertionError(f"{page}:{i + 1}: unknown doctest marker {kind}")
            i = j + 1
            continue
        if line.startswith("    ") and (i == 0 or not lines[i - 1].strip()):
            indent = " " * (len(line) - len(line.lstrip()))
            j = i
            block = []
            while j < len(lines) and (lines[j].startswith(indent) or not lines[j].strip()):
                block.append(lines[j][len(indent):])
                j += 1
            while block and not block[-1].strip():
                block.pop()
            if block and STMT_START.match(block[0]):
                stmts = split_statements(block, i + 1)
                if stmts:
                    pending.line = i + 1
                    pending.statements = stmts
                    found.append(pending)
                    pending = Example(page, 0)
            i = j
            continue
        i += 1
    return found


def closed_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def rewrite(sql, tmp, kafka):
    """The statement with its file paths under tmp and Kafka at a closed port."""
    def move(m):
        p = Path(m.group(2))
        target = tmp / "fs" / p.relative_to("/") if p.is_absolute() else tmp / "fs" / p
        if "CREATE STREAM" in sql.upper():
            target.mkdir(parents=True, exist_ok=True)
        return f"{m.group(1)}'{target}'"
    sql = re.sub(r"(\bpath\s*=\s*)'([^']*)'", move, sql)
    return re.sub(r"(bootstrap_servers\s*=\s*)'[^']*'",
                  lambda m: f"{m.group(1)}'127.0.0.1:{kafka}'", sql)


def run_copy(conn, stmt, tmp):
    m = re.match(r"\\copy\s+(\w+)\s+from\s+'([^']+)'\s*(?:with\s*)?(\(.*\))?", stmt, re.I)
    assert m, f"cannot run {stmt!r}"
    data = (tmp / m.group(2)).read_bytes()
    with conn.cursor() as cur:
        with cur.copy(f"COPY {m.group(1)} FROM STDIN {m.group(3) or ''}") as cp:
            cp.write(data)


@pytest.mark.parametrize("page", [p for p in PAGES if examples_of(p)],
                         ids=lambda p: str(p.relative_to(REPO)))
def test_examples_run(page, sluiced, tmp_path):
    kafka = closed_port()
    conn = None
    ran = 0
    try:
        for ex in examples_of(page):
            if conn is None or ex.fresh:
                if conn is not None:
                    conn.close()
                server = sluiced()
                conn = psycopg.connect(server.dsn, autocommit=True)
            for name, body in ex.files.items():
                (tmp_path / name).write_text(body)
            for sql in ex.setup:
                try:
                    conn.execute(rewrite(sql, tmp_path, kafka))
                except psycopg.Error as e:
                    pytest.fail(f"{ex.where()}: the hidden setup failed: {e.sqlstate} {e}")
            for line, sql, code, message in ex.statements:
                where = ex.where(line)
                if sql.startswith("\\copy"):
                    run_copy(conn, sql, tmp_path)
                    ran += 1
                    continue
                try:
                    if re.match(r"COPY\b.*\bTO\s+STDOUT", sql, re.I | re.S):
                        with conn.cursor() as cur, cur.copy(sql) as cp:
                            assert b"".join(cp), f"{where}: COPY TO wrote nothing"
                        ran += 1
                        continue
                    cur = conn.execute(rewrite(sql, tmp_path, kafka))
                    if cur.description is not None:
                        cur.fetchall()
                except psycopg.Error as e:
                    if code is None and message is None:
                        pytest.fail(f"{where}: {sql}\n  failed: {e.sqlstate} {e}")
                    if code is not None:
                        assert e.sqlstate == code, f"{where}: {sql}\n  {e.sqlstate} {e}"
                    if message is not None:
                        assert e.diag.message_primary.startswith(message), \
                            f"{where}: {sql}\n  said {e.diag.message_primary!r}"
                else:
                    assert code is None and message is None, \
                        f"{where}: {sql}\n  succeeded; the page says it fails"
                ran += 1
    finally:
        if conn is not None:
            conn.close()
    assert ran > 0


def test_every_page_with_sql_has_examples():
    """The pages that show SQL are found, and their examples parse."""
    pages = {str(p.relative_to(REPO)) for p in PAGES if examples_of(p)}
    assert {"README.md", "docs/sql-reference.md", "docs/operations.md"} <= pages
    n = sum(len(ex.statements) for p in PAGES for ex in examples_of(p))
    assert n >= 100, n
