"""Prepared statements and portals per connection (issue 19, item 13).

They are kept by name in a hash table (src/server/names.c), so thousands on
one connection are found as fast as one; a connection may hold at most
max_prepared_statements named prepared statements, and as many named
portals (default 10,000): one more is refused with 53400
configuration_limit_exceeded, the connection goes on, and closing one
makes room.  The unnamed statement and portal never count.

No timing here: tools/bench is the place for speed.  These check the
limit and that the right statement answers among thousands.
"""

from pgwire_raw import (Raw, bind, close_msg, data_row, error_fields, execute, parse,
                        query, sync)
from test_continuous_queries import connect


def kinds(msgs):
    return [m[0] for m in msgs]


def test_thousands_of_named_statements_answer_correctly(sluiced):
    server = sluiced("--max-prepared-statements", "3000")
    n = 3000
    with Raw(server.port, timeout=60) as raw:
        raw.startup()
        raw.send(*[parse(f"SELECT {i} * 2 AS v, $1::text AS t", f"s{i}") for i in range(n)],
                 sync())
        msgs = raw.until_ready()
        assert kinds(msgs) == [b"1"] * n + [b"Z"]
        # Run them in another order, each with its own parameter.
        order = list(range(n - 1, -1, -7))
        raw.send(*[m for i in order for m in (bind([str(i).encode()], stmt=f"s{i}"),
                                              execute())], sync())
        msgs = raw.until_ready()
        rows = [data_row(b) for k, b in msgs if k == b"D"]
        assert rows == [[str(i * 2).encode(), str(i).encode()] for i in order]
        # Close half of them; the others still answer, the closed ones are gone.
        raw.send(*[close_msg(b"S", f"s{i}") for i in range(0, n, 2)], sync())
        assert kinds(raw.until_ready()) == [b"3"] * (n // 2) + [b"Z"]
        raw.send(bind([b"x"], stmt="s2999"), execute(), sync())
        assert data_row(raw.until_ready()[1][1]) == [b"5998", b"x"]
        raw.send(bind([b"x"], stmt="s2998"), execute(), sync())
        msgs = raw.until_ready()
        assert kinds(msgs) == [b"E", b"Z"]
        assert error_fields(msgs[0][1])["C"] == "26000"


def test_the_limit_refuses_one_more_with_53400(sluiced):
    server = sluiced("--max-prepared-statements", "50")
    with Raw(server.port) as raw:
        raw.startup()
        raw.send(*[parse(f"SELECT {i}", f"s{i}") for i in range(50)], sync())
        assert kinds(raw.until_ready()) == [b"1"] * 50 + [b"Z"]
        raw.send(parse("SELECT 50", "s50"), sync())
        msgs = raw.until_ready()
        assert kinds(msgs) == [b"E", b"Z"]
        f = error_fields(msgs[0][1])
        assert f["C"] == "53400"
        assert f["M"] == "too many prepared statements on this connection"
        assert "max_prepared_statements" in f["D"]
        # The unnamed statement does not count; the connection goes on.
        raw.send(parse("SELECT 'unnamed'"), bind(), execute(), sync())
        assert kinds(raw.until_ready()) == [b"1", b"2", b"D", b"C", b"Z"]
        raw.send(query("SELECT 1"))
        assert kinds(raw.until_ready()) == [b"T", b"D", b"C", b"Z"]
        # Closing one makes room for one.
        raw.send(close_msg(b"S", "s7"), parse("SELECT 50", "s50"), parse("SELECT 51", "s51"),
                 sync())
        msgs = raw.until_ready()
        assert kinds(msgs) == [b"3", b"1", b"E", b"Z"]
        assert error_fields(msgs[2][1])["C"] == "53400"
        # DEALLOCATE ALL empties the table.
        raw.send(query("DEALLOCATE ALL"))
        assert kinds(raw.until_ready()) == [b"C", b"Z"]
        raw.send(*[parse(f"SELECT {i}", f"t{i}") for i in range(50)], sync())
        assert kinds(raw.until_ready()) == [b"1"] * 50 + [b"Z"]
        # Named portals: within a transaction block they outlive Sync.
        raw.send(query("BEGIN"))
        assert kinds(raw.until_ready()) == [b"C", b"Z"]
        raw.send(*[bind(portal=f"p{i}", stmt="t1") for i in range(51)], sync())
        msgs = raw.until_ready()
        assert kinds(msgs) == [b"2"] * 50 + [b"E", b"Z"]
        f = error_fields(msgs[50][1])
        assert f["C"] == "53400" and f["M"] == "too many portals on this connection"
        raw.send(query("ROLLBACK"))
        assert kinds(raw.until_ready()) == [b"C", b"Z"]
        # A Sync outside the block drops them: there is room again.
        raw.send(sync())
        assert kinds(raw.until_ready()) == [b"Z"]
        raw.send(*[bind(portal=f"q{i}", stmt="t1") for i in range(50)],
                 execute("q49"), sync())
        msgs = raw.until_ready()
        assert kinds(msgs) == [b"2"] * 50 + [b"D", b"C", b"Z"]
        assert data_row(msgs[50][1]) == [b"1"]


def test_default_limit_and_psycopg(server):
    with connect(server) as c:
        assert c.execute("SELECT setting FROM sys.settings "
                         "WHERE name = 'max_prepared_statements'").fetchone() == ("10000",)
        # psycopg prepares named statements of its own: they work as before.
        for i in range(20):
            assert c.execute("SELECT %s::int + 1", (i,), prepare=True).fetchone() == (i + 1,)
