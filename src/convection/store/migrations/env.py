"""Alembic environment, run in code by :mod:`convection.store._sql_db`.

The caller hands over an open connection (already inside its transaction)
through ``config.attributes``; there is no ``alembic.ini`` and no URL here,
so migrating is the same code path as opening a store.
"""

from __future__ import annotations

from alembic import context
from sqlalchemy.engine import Connection

from convection.store.schema import metadata


def run_migrations_online() -> None:
    conn = context.config.attributes.get("connection")
    if not isinstance(conn, Connection):
        raise RuntimeError("convection migrations run through convection.store, with a connection")
    context.configure(
        connection=conn,
        target_metadata=metadata,
        # SQLite alters tables by copying them; batch mode does that for us.
        render_as_batch=conn.dialect.name == "sqlite",
        compare_type=True,
    )
    with context.begin_transaction():
        context.run_migrations()


if context.is_offline_mode():
    raise RuntimeError("offline (SQL script) migrations are not supported")
run_migrations_online()
