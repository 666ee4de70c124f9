"""The SQL engine and the transaction discipline of each backend.

SQLite (the embedded default):

* WAL journal with ``synchronous=NORMAL``. A committed transaction is in the
  WAL file before ``COMMIT`` returns, so it survives the death of the process
  (``kill -9``), which is the guarantee the engine relies on. The WAL is only
  fsynced at checkpoints, so a *power loss* or OS crash may lose the last
  few transactions, never corrupt the file; ``FULL`` would fsync every
  commit and cost an order of magnitude in commit latency.
* Write transactions open with ``BEGIN IMMEDIATE``: the write lock is taken
  up front, so two engines in two processes queue on ``busy_timeout``
  instead of one failing with "database is locked" when a read transaction
  tries to upgrade. pysqlite's own transaction handling is switched off
  (SQLAlchemy's documented recipe) so that we emit the BEGIN ourselves.
* Writers of one process also queue on a lock, so they wait in order rather
  than polling SQLite's busy handler.

PostgreSQL: READ COMMITTED; the statements that race (claims, the stale
check) carry their own row locks. A deadlock or serialization failure
rolls the whole transaction back, and it is simply run again.
"""

from __future__ import annotations

import contextlib
import threading
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import TYPE_CHECKING, Any, TypeVar

import sqlalchemy as sa
from sqlalchemy.engine import URL, Connection, Engine
from sqlalchemy.engine import make_url as sa_make_url

from convection.common import ConvectionError
from convection.store._fields import json_dumps, json_loads

if TYPE_CHECKING:
    from alembic.config import Config

T = TypeVar("T")

MIGRATIONS_DIR = Path(__file__).with_name("migrations")
BUSY_TIMEOUT_MS = 30_000
_RETRY_SQLSTATES = frozenset({"40P01", "40001"})  # deadlock, serialization failure
_RETRIES = 5
_BEGIN_OPTION = "convection_sqlite_begin"


def normalize_url(url: str) -> URL:
    """Pin the drivers we ship: pysqlite and psycopg 3."""
    parsed = sa_make_url(url)
    backend = parsed.get_backend_name()
    if backend == "postgresql":
        return parsed.set(drivername="postgresql+psycopg")
    if backend == "sqlite":
        if parsed.database in (None, "", ":memory:"):
            raise ValueError("an in-memory SQLite store cannot be shared; use memory://")
        return parsed.set(drivername="sqlite+pysqlite")
    raise ValueError(f"unsupported store URL {parsed.render_as_string(hide_password=True)}")


#: A PostgreSQL session idle inside a transaction this long is ended by the
#: server. Every transaction here is a few statements with no wait inside,
#: so only a paused or hung process (SIGSTOP, a partition mid-transaction)
#: gets there; ending it releases the row locks it holds, which would
#: otherwise stall the engine that took its work over (its node claims skip
#: locked rows) for as long as the pause lasts. Shorter than any lease.
IDLE_IN_TRANSACTION_MS = 10_000


def _sqlite_hooks(engine: Engine) -> None:
    @sa.event.listens_for(engine, "connect")
    def _on_connect(dbapi_conn: Any, _record: Any) -> None:
        dbapi_conn.isolation_level = None  # we emit BEGIN ourselves, below
        cursor = dbapi_conn.cursor()
        # busy_timeout first: switching to WAL needs the lock another
        # process may hold while it opens the same new file.
        cursor.execute(f"PRAGMA busy_timeout = {BUSY_TIMEOUT_MS}")
        cursor.execute("PRAGMA journal_mode = WAL")
        cursor.execute("PRAGMA synchronous = NORMAL")
        cursor.execute("PRAGMA foreign_keys = ON")
        cursor.close()

    @sa.event.listens_for(engine, "begin")
    def _on_begin(conn: Connection) -> None:
        mode = conn.get_execution_options().get(_BEGIN_OPTION, "DEFERRED")
        conn.exec_driver_sql(f"BEGIN {mode}")


def create_engine(url: URL) -> Engine:
    options: dict[str, Any] = {"json_serializer": json_dumps, "json_deserializer": json_loads}
    if url.get_backend_name() == "sqlite":
        Path(url.database or "").parent.mkdir(parents=True, exist_ok=True)
        engine = sa.create_engine(
            url,
            connect_args={"check_same_thread": False, "timeout": BUSY_TIMEOUT_MS / 1000},
            pool_size=4,
            max_overflow=8,
            **options,
        )
        _sqlite_hooks(engine)
        return engine
    idle = f"-c idle_in_transaction_session_timeout={IDLE_IN_TRANSACTION_MS}"
    return sa.create_engine(
        url,
        pool_pre_ping=True,
        pool_size=5,
        max_overflow=10,
        connect_args={"options": idle},
        **options,
    )


def _transient(exc: sa.exc.DBAPIError) -> bool:
    return getattr(exc.orig, "sqlstate", None) in _RETRY_SQLSTATES


@contextlib.contextmanager
def _unwrapped() -> Iterator[None]:
    """A value a bind processor refused (NaN in JSON, a naive datetime) is the
    caller's ValueError, as in the memory store, not an SQL error."""
    try:
        yield
    except sa.exc.StatementError as exc:
        if isinstance(exc, sa.exc.DBAPIError) or not isinstance(exc.orig, ValueError):
            raise
        raise exc.orig from None


class Database:
    """An engine plus the way to run one read or one write transaction."""

    def __init__(self, url: str) -> None:
        self.url = normalize_url(url)
        self.engine = create_engine(self.url)
        self.is_sqlite = self.url.get_backend_name() == "sqlite"
        self._write_lock = threading.Lock() if self.is_sqlite else contextlib.nullcontext()
        #: SQLite has one writer at a time anyway, so a process keeps one
        #: connection for writes (under the lock) and skips a pool checkout,
        #: which cost more than a small transaction itself.
        self._writer: Connection | None = None

    def read(self, fn: Callable[[Connection], T]) -> T:
        """Run ``fn`` in a read transaction: one consistent snapshot."""
        with _unwrapped(), self.engine.connect() as conn, conn.begin():
            return fn(conn)

    def write(self, fn: Callable[[Connection], T]) -> T:
        """Run ``fn`` in one write transaction; all of it commits or none."""
        for attempt in range(_RETRIES):
            try:
                with _unwrapped(), self._write_lock, self._begin_write() as conn:
                    return fn(conn)
            except sa.exc.DBAPIError as exc:
                if attempt + 1 == _RETRIES or not _transient(exc):
                    raise
        raise AssertionError("unreachable")

    @contextlib.contextmanager
    def _begin_write(self) -> Iterator[Connection]:
        if not self.is_sqlite:
            with self.engine.connect() as conn, conn.begin():
                yield conn
            return
        if self._writer is None or self._writer.closed or self._writer.invalidated:
            self._writer = self.engine.connect()
            self._writer.execution_options(**{_BEGIN_OPTION: "IMMEDIATE"})
        with self._writer.begin():
            yield self._writer

    def upgrade(self) -> None:
        """Migrate to head; a no-op when already there. Safe to race: SQLite
        serializes on BEGIN IMMEDIATE, PostgreSQL on an advisory lock."""

        found, head = self.revision(), head_revision()
        if found == head:
            return  # the common case, answered without importing Alembic
        if found is not None and found.isdigit() and found > head:
            raise ConvectionError(
                f"The store has schema revision {found}, newer than this Convection's "
                f"{head}: a newer Convection migrated it. Run that version (or a later "
                "one) against it."
            )
        self.migrate("head", create=True)

    def migrate(self, revision: str, *, down: bool = False, create: bool = False) -> None:
        """Run the migrations up (or ``down``) to ``revision`` in one
        transaction; with ``create``, an empty database is made at head
        from ``schema.py`` instead.

        On SQLite, foreign keys are off meanwhile and checked before the
        commit: batch mode alters a table by copying it, and dropping the
        old copy with foreign keys on would delete every row that cascades
        from it (a traversal's nodes and timers). The pragma cannot change
        inside a transaction, hence the connection of its own."""

        def run(conn: Connection) -> None:
            if not self.is_sqlite:
                conn.execute(sa.text("SELECT pg_advisory_xact_lock(7458123901)"))
            if create and not sa.inspect(conn).get_table_names():
                _create_at_head(conn)
                return
            from alembic import command

            config = alembic_config(conn)
            if down:
                command.downgrade(config, revision)
            else:
                command.upgrade(config, revision)
            if self.is_sqlite:
                broken = conn.exec_driver_sql("PRAGMA foreign_key_check").fetchall()
                if broken:
                    raise RuntimeError(f"migration to {revision} broke foreign keys: {broken[:5]}")

        if not self.is_sqlite:
            self.write(run)
            return
        with self._write_lock, self.engine.connect() as conn:
            # On the driver's connection: SQLAlchemy would begin a
            # transaction first, and there the pragma does nothing.
            raw = conn.connection.driver_connection
            assert raw is not None
            raw.execute("PRAGMA foreign_keys = OFF")
            try:
                conn.execution_options(**{_BEGIN_OPTION: "IMMEDIATE"})
                with _unwrapped(), conn.begin():
                    run(conn)
            finally:
                raw.execute("PRAGMA foreign_keys = ON")

    def revision(self) -> str | None:
        """The stored schema revision; None for a database never migrated."""
        try:
            found = self.read(lambda conn: conn.execute(_REVISION).scalar())
        except sa.exc.DBAPIError:  # no alembic_version table yet
            return None
        return None if found is None else str(found)

    def close(self) -> None:
        with self._write_lock:
            if self._writer is not None:
                self._writer.close()
                self._writer = None
        self.engine.dispose()


_REVISION = sa.text("SELECT version_num FROM alembic_version")


def head_revision() -> str:
    """The newest migration's revision, read off the file names
    (``NNNN_what.py`` holds revision ``NNNN``; a test holds Alembic to it).

    Why not ask Alembic: importing it (with Mako, and Pygments behind that)
    costs every process ~11 MB and ~80 ms, and a store opened on a current
    schema, which is nearly always, needs none of it."""
    names = (p.name for p in (MIGRATIONS_DIR / "versions").glob("[0-9]*_*.py"))
    return max(name.split("_", 1)[0] for name in names)


def _create_at_head(conn: Connection) -> None:
    """A new database: the tables as ``schema.py`` states them, stamped at
    the head revision (what Alembic's documentation recommends for a fresh
    database: ``create_all``, then ``stamp head``). A test holds the
    migrations to the same schema, so both ways end in equal databases."""
    from convection.store.schema import metadata

    metadata.create_all(conn)
    version = sa.table("alembic_version", sa.column("version_num", sa.String()))
    conn.execute(_CREATE_VERSION_TABLE)
    conn.execute(version.insert().values(version_num=head_revision()))


#: Alembic's own version table, as it creates it.
_CREATE_VERSION_TABLE = sa.text(
    "CREATE TABLE alembic_version (version_num VARCHAR(32) NOT NULL, "
    "CONSTRAINT alembic_version_pkc PRIMARY KEY (version_num))"
)


def alembic_config(conn: Connection | None = None) -> Config:
    """An Alembic config built in code: no alembic.ini is needed at run time."""
    from alembic.config import Config

    cfg = Config()
    cfg.set_main_option("script_location", str(MIGRATIONS_DIR))
    cfg.attributes["connection"] = conn
    return cfg
