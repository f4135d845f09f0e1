"""Regular expressions with back references run on PCRE2 with a bound on
each match (src/functions/regex.c).  A match past the bound is 54001
"regular expression is too complex to match", in a fraction of a second;
statement_timeout stops one match from inside (PCRE2's callouts), and rows
under the bound are checked for cancel and statement_timeout one by one.  Before, glibc's regexec ran such patterns (fast for these two, hours
for others: test_statement_interrupts.py's regex_backref case).  Run as an
unprivileged role: any user can send such a pattern.  The truth values
themselves are in sql-tests/catalog.slt."""

import time

import psycopg
import pytest


@pytest.fixture
def user(server):
    with psycopg.connect(server.dsn, autocommit=True) as admin:
        admin.execute("CREATE ROLE u LOGIN PASSWORD 'pw-u'")
    with psycopg.connect(f"host={server.host} port={server.port} user=u dbname=sluice "
                         "password=pw-u", autocommit=True) as c:
        yield c


def test_a_match_past_the_bound_is_54001(user):
    # PCRE2 backtracks through 3^40 ways of reading the a's
    began = time.monotonic()
    with pytest.raises(psycopg.errors.StatementTooComplex) as e:
        user.execute(r"SELECT repeat('a', 40) || 'c' ~ '^(a|a|a)*\1$'")
    assert time.monotonic() - began < 3
    assert "regular expression is too complex to match" in str(e.value)
    assert e.value.diag.message_hint
    assert user.execute(r"SELECT 'abab' ~ '^(ab)\1$'").fetchone() == (True,)


def test_one_long_match_stops_at_statement_timeout(user):
    # one match that runs to the bound (54001 without a timeout, a second
    # or so under ASan) stops inside PCRE2 at a 100 ms statement_timeout:
    # 57014 well before the bound (the old code ran the match to its end)
    sql = r"SELECT repeat('a', 40) || 'c' ~ '^(a|a|a)*\1$'"
    began = time.monotonic()
    with pytest.raises(psycopg.errors.StatementTooComplex):
        user.execute(sql)
    bound = time.monotonic() - began
    user.execute("SET statement_timeout = '100ms'")
    began = time.monotonic()
    with pytest.raises(psycopg.errors.QueryCanceled) as e:
        user.execute(sql)
    took = time.monotonic() - began
    assert "canceling statement due to statement timeout" in str(e.value)
    assert took < 1.0, (took, bound)
    user.execute("SET statement_timeout = 0")
    assert user.execute(r"SELECT 'abab' ~ '^(ab)\1$'").fetchone() == (True,)


def test_rows_under_the_bound_stop_at_statement_timeout(user):
    # each row is about 0.06 s of backtracking (under the bound), 200 rows
    # 12 s: the statement ends at its timeout, between two rows
    user.execute("SET statement_timeout = '1s'")
    began = time.monotonic()
    with pytest.raises(psycopg.errors.QueryCanceled):
        user.execute(r"SELECT count(*) FROM generate_series(1, 200) g "
                     r"WHERE repeat('a', 12) || g::text ~ '^(a|a|a)*\1$'")
    assert time.monotonic() - began < 4
    user.execute("SET statement_timeout = 0")
    assert user.execute("SELECT 1").fetchone() == (1,)


@pytest.mark.parametrize("pattern, sqlstate", [
    (r"(a)\2", "2201B"),            # no group 2, as PostgreSQL
    (r"(a\1)", "2201B"),            # group 1 is not closed yet, as PostgreSQL
    # PostgreSQL's matcher gives these its own meaning ('' ~ '(a)?(\1?)' is
    # false there, 'a' ~ '^(a)(\1*){2}$' too): refused rather than answered
    (r"(a)?\1?", "0A000"),
    (r"(a)(\1*){2}", "0A000"),
    (r"(a)((b)\3)+", "0A000"),
    (r"(a)b*+\1", "2201B"),          # a quantifier on a quantifier, as PostgreSQL
    ("(a)\\1\\", "2201B"),         # a trailing backslash
    (r"(a)\m{2}\1", "2201B"),        # a quantifier on a constraint, as PostgreSQL
    (r"(a)(?=a){1,2}\1", "2201B"),
    (r"(*ACCEPT)(a)\1", "2201B"),   # PCRE2's verbs are not ARE syntax
    (r"(?>a)(a)\1", "2201B"),       # PCRE2's syntax, not ARE's: as PostgreSQL
    (r"(a)\1\Q", "2201B"),
    (r"(a)\12", "0A000"),          # multi-digit back references are not carried
])
def test_what_is_refused(user, pattern, sqlstate):
    with pytest.raises(psycopg.Error) as e:
        user.execute("SELECT 'aa' ~ %s", (pattern,))
    assert e.value.sqlstate == sqlstate, e.value


def test_a_topic_pattern_with_back_references_is_refused(user):
    """A Kafka stream's topic_pattern runs on glibc's regexec, in the
    poller's thread, over every topic name the broker lists: a back
    reference there could backtrack for hours, so it is refused at CREATE
    (before, it was taken)."""
    with pytest.raises(psycopg.errors.FeatureNotSupported) as e:
        user.execute(r"CREATE STREAM k (v text) WITH (connector = 'kafka', "
                     r"topic_pattern = '(a*)*(a*)*(a*)*(a*)*\1\2\3\4c', "
                     r"bootstrap_servers = '127.0.0.1:1', format = 'raw')")
    assert "back references" in str(e.value)
    assert user.execute("SELECT 1").fetchone() == (1,)


def test_a_topic_pattern_is_read_as_postgresql_reads_it(user):
    """topic_pattern is an ARE on the same engine as ~ (are.c): a pattern
    PostgreSQL refuses is 2201B at CREATE (before, glibc's regcomp read
    '\\k' as a 'k' and took it)."""
    for pattern in (r"bids_\k", r"bids_\d{1", r"(?z)bids"):
        with pytest.raises(psycopg.errors.InvalidRegularExpression) as e:
            user.execute("CREATE STREAM k (v text) WITH (connector = 'kafka', "
                         f"topic_pattern = '{pattern}', "
                         "bootstrap_servers = '127.0.0.1:1', format = 'raw')")
        assert "invalid topic_pattern" in str(e.value)
    assert user.execute("SELECT 1").fetchone() == (1,)


@pytest.mark.parametrize("sql", [
    # which group captured what is PostgreSQL's own choice (not PCRE2's):
    # refused rather than answered
    r"SELECT regexp_replace('abc', '(b)', '[\1]')",
    # the longest match of a pattern with back references: no DFA for it
    r"SELECT regexp_substr('abab', '(ab)\1')",
    r"SELECT regexp_count('abab', '(a)b\1')",
    # a group in an alternation or a repetition: PostgreSQL dissects a match
    # there by rules of its own (a group in a plain sequence is answered:
    # sql-tests/regex_match.slt, regex_dissect.slt)
    r"SELECT substring('abc' FROM '(a)|(b)')",
    r"SELECT regexp_match('abab', '(ab)+')",
])
def test_regexp_functions_refuse_what_they_cannot_answer_exactly(user, sql):
    with pytest.raises(psycopg.errors.FeatureNotSupported):
        user.execute(sql)
    assert user.execute("SELECT regexp_like('abab', '(ab)\\1')").fetchone() == (True,)
