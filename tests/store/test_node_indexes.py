"""The partial indexes on traversal nodes are the ones claims and lease
reclaims use: the queries must name the state as a literal, or SQLite's
planner cannot prove the index covers them and scans instead."""

from __future__ import annotations

from pathlib import Path

import sqlalchemy as sa

from convection.store import _sql_statements as q
from convection.store.sql import SQLStore


def _plan(store: SQLStore, stmt: sa.ClauseElement, params: dict[str, object]) -> str:
    """SQLite's query plan of ``stmt`` (only the plan: values are dummies)."""
    db = store._db
    compiled = stmt.compile(dialect=db.engine.dialect)
    values = compiled.construct_params(params)
    args = tuple(values[name] for name in compiled.positiontup or ())
    with db.engine.connect() as conn:
        rows = conn.exec_driver_sql(f"EXPLAIN QUERY PLAN {compiled}", args).fetchall()
    return "\n".join(str(r[-1]) for r in rows)


def test_claims_and_reclaims_use_the_partial_indexes(tmp_path: Path) -> None:
    store = SQLStore(f"sqlite:///{tmp_path / 'stacks.db'}")
    try:
        now = "2026-01-01 00:00:00"
        claim = {"b_traversal_id": "t", "b_limit": 64, "b_owner": "me", "b_lease_until": now}
        assert "ix_traversal_nodes_ready" in _plan(store, q.CLAIM, claim)
        assert "ix_traversal_nodes_running" in _plan(store, q.RECLAIM, {"now": now})
    finally:
        store.close()
