"""SQLAlchemy 2 over psycopg 3, and pandas.read_sql, against sluiced: what a
user of SQLAlchemy (and of the tools built on it: pandas, Superset, Airflow)
does with a PostgreSQL server.

  - create_engine + connect: the dialect's first queries (version(),
    current_schema(), SHOW standard_conforming_strings, SHOW TRANSACTION
    ISOLATION LEVEL for the isolation level it reports, ...)
  - inspect(): schemas, table names, has_table, has_schema.  Column and key
    reflection (get_columns, get_pk_constraint, Table(autoload_with=...))
    is not here yet: its queries aggregate with ORDER BY inside the call
    (array_agg(x ORDER BY y)), which sluice refuses (0A000) until that lands
  - Core: a Table declared in Python, insert() with bound parameters (an
    executemany), select() with where / order_by / group_by / count / sum
  - ORM: a mapped class, a Session that adds objects, commits and queries
  - pandas.read_sql over a SELECT with parameters

The versions are pinned in tests/requirements.txt (SQLAlchemy, pandas).
Expected values are the rows the test itself wrote, not sluice's answers.
"""

from decimal import Decimal

import pandas
import pytest
from sqlalchemy import (BigInteger, Column, MetaData, Numeric, String, Table, create_engine,
                        func, insert, inspect, select, text)
from sqlalchemy.orm import DeclarativeBase, Mapped, Session, mapped_column

SETUP = """
CREATE TABLE users (user_id BIGINT PRIMARY KEY, country VARCHAR(2) NOT NULL,
                    score NUMERIC(10,2));
CREATE TABLE orders (order_id BIGINT PRIMARY KEY, user_id BIGINT NOT NULL, item TEXT);
CREATE STREAM clicks (user_id BIGINT, url TEXT, ts TIMESTAMP);
"""


@pytest.fixture(scope="module")
def engine(sluiced_module):
    server = sluiced_module()
    from conftest import run_psql
    rc, _, err = run_psql(server, SETUP)
    assert rc == 0, err
    eng = create_engine(
        f"postgresql+psycopg://sluice@127.0.0.1:{server.port}/sluice?sslmode=disable")
    yield eng
    eng.dispose()


def test_connect_dialect_queries(engine):
    with engine.connect() as conn:
        # what the dialect read at its first connect
        assert conn.dialect.server_version_info[:1] == (15,)
        assert conn.dialect.default_schema_name == "public"
        # SHOW TRANSACTION ISOLATION LEVEL, which get_isolation_level sends
        assert conn.get_isolation_level() == "READ COMMITTED"
        assert conn.default_isolation_level == "READ COMMITTED"
        assert conn.execute(text("SELECT 1 + 1")).scalar_one() == 2


def test_isolation_level_option(engine):
    # READ COMMITTED is what sluice gives; the dialect sets it with SET
    # SESSION CHARACTERISTICS AS TRANSACTION ISOLATION LEVEL, and reads it back
    with engine.connect().execution_options(isolation_level="READ COMMITTED") as conn:
        assert conn.get_isolation_level() == "READ COMMITTED"
    with engine.connect().execution_options(isolation_level="AUTOCOMMIT") as conn:
        assert conn.execute(text("SHOW transaction_isolation")).scalar_one() == "read committed"


def test_inspect(engine):
    insp = inspect(engine)
    assert "public" in insp.get_schema_names()
    assert {"users", "orders", "clicks"} <= set(insp.get_table_names())
    assert insp.has_table("users")
    assert not insp.has_table("no_such_table")
    assert insp.has_schema("public")


META = MetaData()
USERS = Table("users", META, Column("user_id", BigInteger, primary_key=True),
              Column("country", String(2), nullable=False), Column("score", Numeric(10, 2)))


def test_core_insert_select(engine):
    rows = [{"user_id": i, "country": c, "score": Decimal(s)}
            for i, c, s in [(1, "us", "10.50"), (2, "fr", "7.25"), (3, "us", "1.00")]]
    with engine.begin() as conn:
        conn.execute(insert(USERS), rows)
    with engine.connect() as conn:
        got = conn.execute(select(USERS).where(USERS.c.country == "us")
                           .order_by(USERS.c.user_id)).all()
        assert [tuple(r) for r in got] == [(1, "us", Decimal("10.50")), (3, "us", Decimal("1.00"))]
        n = conn.execute(select(func.count()).select_from(USERS)).scalar_one()
        assert n == 3
        total = conn.execute(select(func.sum(USERS.c.score))).scalar_one()
        assert total == Decimal("18.75")
        by_country = conn.execute(select(USERS.c.country, func.count().label("n"))
                                  .group_by(USERS.c.country)
                                  .order_by(USERS.c.country)).all()
        assert [tuple(r) for r in by_country] == [("fr", 1), ("us", 2)]


class Base(DeclarativeBase):
    pass


class Order(Base):
    __tablename__ = "orders"
    order_id: Mapped[int] = mapped_column(BigInteger, primary_key=True)
    user_id: Mapped[int] = mapped_column(BigInteger)
    item: Mapped[str] = mapped_column(String, nullable=True)


def test_orm(engine):
    with Session(engine) as session:
        session.add_all([Order(order_id=10, user_id=1, item="book"),
                         Order(order_id=11, user_id=2, item="pen"),
                         Order(order_id=12, user_id=1, item="ink")])
        session.commit()
    with Session(engine) as session:
        mine = session.scalars(select(Order).where(Order.user_id == 1)
                               .order_by(Order.order_id)).all()
        assert [(o.order_id, o.item) for o in mine] == [(10, "book"), (12, "ink")]
        pen = session.get(Order, 11)
        assert pen is not None and pen.item == "pen"
        pen.item = "pencil"
        session.commit()
    with Session(engine) as session:
        assert session.get(Order, 11).item == "pencil"


def test_pandas_read_sql(engine):
    with engine.begin() as conn:
        conn.execute(text("INSERT INTO clicks VALUES (1, 'a', TIMESTAMP '2024-01-01 00:00:00'), "
                          "(2, 'b', TIMESTAMP '2024-01-01 00:00:05'), "
                          "(1, 'c', TIMESTAMP '2024-01-01 00:00:09')"))
    df = pandas.read_sql(text("SELECT user_id, count(*) AS n FROM clicks WHERE ts >= :since "
                              "GROUP BY user_id ORDER BY user_id"),
                         engine, params={"since": "2024-01-01 00:00:00"})
    assert list(df.columns) == ["user_id", "n"]
    assert df.to_dict("records") == [{"user_id": 1, "n": 2}, {"user_id": 2, "n": 1}]
    df = pandas.read_sql(text("SELECT url, ts FROM clicks ORDER BY url"), engine)
    assert list(df["url"]) == ["a", "b", "c"]
    assert str(df["ts"].dtype).startswith("datetime64")
    assert str(df["ts"][2]) == "2024-01-01 00:00:09"
