"""A process paused inside a transaction must not hold its row locks for
as long as the pause lasts: PostgreSQL ends a session idle in a
transaction after ``IDLE_IN_TRANSACTION_MS``, so the engine that took the
work over is not stalled behind it (the chaos harness found the stall)."""

from __future__ import annotations

import time

import pytest
import sqlalchemy as sa

from convection.store.sql import SQLStore


def test_a_session_left_idle_in_a_transaction_is_ended(
    postgres_database: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    from convection.store import _sql_db

    monkeypatch.setattr(_sql_db, "IDLE_IN_TRANSACTION_MS", 500)
    store = SQLStore(postgres_database)
    other = SQLStore(postgres_database)
    try:
        with store._db.engine.connect() as paused:
            shown = paused.execute(sa.text("SHOW idle_in_transaction_session_timeout"))
            assert shown.scalar_one() == "500ms"
            paused.execute(sa.text("SELECT 1 FROM stacks FOR UPDATE"))  # a transaction, open
            time.sleep(1.5)  # "paused" past the timeout
            with pytest.raises(sa.exc.DBAPIError):
                paused.execute(sa.text("SELECT 1"))
        assert other.list_stacks(None) == []  # nothing was left locked
    finally:
        store.close()
        other.close()
