"""Every store test runs on memory, SQLite and PostgreSQL.

PostgreSQL is not optional: when it cannot be reached the tests FAIL, so CI
never goes green by silently skipping the scale-out store. Set
``CONVECTION_SKIP_POSTGRES=1`` to skip it on purpose (a laptop without
PostgreSQL). ``CONVECTION_TEST_PG`` overrides the server URL (default
``postgresql+psycopg://postgres@127.0.0.1:5432/postgres``: trust auth).

The PostgreSQL helpers (:func:`postgres_admin_url`, :func:`postgres_url`,
:func:`create_postgres_database`, :func:`drop_postgres_database`) are plain
functions so that other test packages can reuse them.
"""

from __future__ import annotations

import os
import uuid
from collections.abc import Callable, Iterator
from pathlib import Path

import psycopg
import pytest
from psycopg import sql
from sqlalchemy.engine import make_url

from convection.store.api import Store
from convection.store.memory import MemoryStore
from convection.store.schema import ALL_TABLES
from convection.store.sql import SQLStore

DEFAULT_PG = "postgresql+psycopg://postgres@127.0.0.1:5432/postgres"


def postgres_admin_url() -> str:
    """The server's maintenance database, where databases are created."""
    return os.environ.get("CONVECTION_TEST_PG", DEFAULT_PG)


def postgres_url(database: str) -> str:
    """A store URL for ``database`` on the test server."""
    url = make_url(postgres_admin_url()).set(drivername="postgresql+psycopg", database=database)
    return url.render_as_string(hide_password=False)


def _libpq(url: str) -> str:
    return make_url(url).set(drivername="postgresql").render_as_string(hide_password=False)


def postgres_unavailable() -> str | None:
    """Why PostgreSQL cannot be used, or None when it can."""
    try:
        with psycopg.connect(_libpq(postgres_admin_url()), connect_timeout=5):
            return None
    except psycopg.Error as exc:
        return f"PostgreSQL at {postgres_admin_url()} is unreachable: {exc}".strip()


def require_postgres() -> None:
    """Fail (or skip, when CONVECTION_SKIP_POSTGRES=1) without PostgreSQL."""
    reason = postgres_unavailable()
    if reason is None:
        return
    if os.environ.get("CONVECTION_SKIP_POSTGRES") == "1":
        pytest.skip(reason)
    pytest.fail(f"{reason}\nStart PostgreSQL or set CONVECTION_SKIP_POSTGRES=1 to skip it.")


def create_postgres_database(prefix: str = "convection_test") -> str:
    """Create a uniquely named, empty database; return its name."""
    name = f"{prefix}_{os.getpid()}_{uuid.uuid4().hex[:8]}"
    with psycopg.connect(_libpq(postgres_admin_url()), autocommit=True) as conn:
        conn.execute(sql.SQL("CREATE DATABASE {}").format(sql.Identifier(name)))
    return name


def drop_postgres_database(name: str) -> None:
    with psycopg.connect(_libpq(postgres_admin_url()), autocommit=True) as conn:
        conn.execute(
            sql.SQL("DROP DATABASE IF EXISTS {} WITH (FORCE)").format(sql.Identifier(name))
        )


def _truncate(url: str) -> None:
    tables = sql.SQL(", ").join(sql.Identifier(t.name) for t in ALL_TABLES)
    with psycopg.connect(_libpq(url), autocommit=True) as conn:
        conn.execute(sql.SQL("TRUNCATE {} RESTART IDENTITY CASCADE").format(tables))


@pytest.fixture(scope="session")
def postgres_database() -> Iterator[str]:
    """The URL of a database made for this test session, dropped after it."""
    require_postgres()
    name = create_postgres_database()
    try:
        yield postgres_url(name)
    finally:
        drop_postgres_database(name)


@pytest.fixture
def fresh_postgres_database() -> Iterator[Callable[[], str]]:
    """A factory of empty databases (URLs), all dropped after the test."""
    require_postgres()
    made: list[str] = []

    def make() -> str:
        made.append(create_postgres_database("convection_fresh"))
        return postgres_url(made[-1])

    yield make
    for name in made:
        drop_postgres_database(name)


BACKENDS = ("memory", "sqlite", "postgresql")


@pytest.fixture(params=BACKENDS)
def store_url(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[str]:
    """Where this test's store lives; PostgreSQL tables are emptied after it."""
    if request.param == "memory":
        yield "memory://"
    elif request.param == "sqlite":
        yield f"sqlite:///{tmp_path / 'store.db'}"
    else:
        url = request.getfixturevalue("postgres_database")
        yield url
        _truncate(url)


@pytest.fixture
def store_factory(store_url: str) -> Iterator[Callable[[], Store]]:
    """Open a store on this test's data; every call is one more independent
    instance (as another engine process would be), except for memory, which
    can only be shared."""
    shared = MemoryStore()
    opened: list[SQLStore] = []

    def open_() -> Store:
        if store_url == "memory://":
            return shared
        opened.append(SQLStore(store_url))
        return opened[-1]

    yield open_
    for s in opened:
        s.close()


@pytest.fixture
def store(store_factory: Callable[[], Store]) -> Store:
    return store_factory()
