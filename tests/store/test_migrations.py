"""Migrations: an empty database reaches head; head is exactly schema.py."""

from __future__ import annotations

from collections.abc import Callable
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import pytest
import sqlalchemy as sa
from alembic.autogenerate import compare_metadata
from alembic.runtime.migration import MigrationContext
from alembic.script import ScriptDirectory

from convection.store import AddTimer, ExecutionRecord, NodeRecord, TraversalRecord
from convection.store._sql_db import Database, alembic_config, head_revision
from convection.store.schema import ALL_TABLES, metadata
from convection.store.sql import SQLStore

TABLES = {t.name for t in ALL_TABLES}


@pytest.fixture(params=["sqlite", "postgresql"])
def empty_url(request: pytest.FixtureRequest, tmp_path: Path) -> str:
    if request.param == "sqlite":
        return f"sqlite:///{tmp_path / 'empty.db'}"
    make: Callable[[], str] = request.getfixturevalue("fresh_postgres_database")
    return make()


def _state(db: Database) -> tuple[set[str], str | None, list[object]]:
    """Tables, the stamped revision, and autogenerate's diff against schema.py."""
    with db.engine.connect() as conn:
        context = MigrationContext.configure(conn, opts={"compare_type": True})
        return (
            set(sa.inspect(conn).get_table_names()),
            context.get_current_revision(),
            compare_metadata(context, metadata),
        )


def test_upgrade_creates_the_schema_and_is_idempotent(empty_url: str) -> None:
    head = ScriptDirectory.from_config(alembic_config()).get_current_head()
    db = Database(empty_url)
    try:
        assert _state(db)[0] == set()
        db.upgrade()
        tables, revision, diff = _state(db)
        assert tables == TABLES | {"alembic_version"}
        assert revision == head
        assert diff == [], "migrations at head differ from schema.py"
        db.upgrade()  # a second run changes nothing
        assert _state(db) == (tables, revision, [])
    finally:
        db.close()


def _migrate(db: Database, revision: str) -> None:
    """Run the migrations themselves (``Database.upgrade`` creates a new
    database from schema.py directly, and migrates only existing ones)."""
    db.migrate(revision)


def test_the_migrations_from_empty_reach_schema_py(empty_url: str) -> None:
    db = Database(empty_url)
    try:
        _migrate(db, "head")
        tables, revision, diff = _state(db)
        assert tables == TABLES | {"alembic_version"} and revision == head_revision()
        assert diff == [], "migrations at head differ from schema.py"
    finally:
        db.close()


def test_a_store_at_an_older_revision_is_migrated_to_head(empty_url: str) -> None:
    """An existing database (here at 0005) goes through the migrations."""
    db = Database(empty_url)
    try:
        _migrate(db, "0005")
        assert db.revision() == "0005"
        db.upgrade()
        _tables, revision, diff = _state(db)
        assert revision == head_revision() and diff == []
    finally:
        db.close()


def test_the_comparison_would_see_a_difference(empty_url: str) -> None:
    """Guard against a vacuous check: drop an index and autogenerate notices."""
    db = Database(empty_url)
    try:
        db.upgrade()
        with db.engine.begin() as conn:
            conn.execute(sa.text("DROP INDEX ix_timers_due_at"))
        diff = _state(db)[2]
        assert [op[0] for op in diff] == ["add_index"]  # type: ignore[index]
    finally:
        db.close()


def test_opening_a_store_migrates_it(empty_url: str) -> None:
    SQLStore(empty_url).close()
    SQLStore(empty_url).close()  # opening an up-to-date store is a no-op
    db = Database(empty_url)
    try:
        tables, revision, diff = _state(db)
        assert tables == TABLES | {"alembic_version"} and revision is not None and diff == []
    finally:
        db.close()


def test_migrations_ship_with_the_package() -> None:
    """What pyproject's package-data must include: the env, template and versions."""
    root = Path(alembic_config().get_main_option("script_location") or "")
    assert (root / "env.py").is_file()
    assert (root / "script.py.mako").is_file()
    assert sorted(p.name for p in (root / "versions").glob("*.py")) == [
        "0001_initial.py",
        "0002_nested_stacks.py",
        "0003_traversal_lease.py",
        "0004_api_tokens.py",
        "0005_software.py",
        "0006_partial_node_indexes.py",
        "0007_resource_template_type.py",
        "0008_workflows.py",
        "0009_environments_cron_triggers.py",
        "0010_processes.py",
    ]


def test_head_revision_is_alembics_head() -> None:
    """A store skips Alembic when its schema is at ``head_revision``, which
    reads the migration file names: it must be the head Alembic computes."""
    assert head_revision() == ScriptDirectory.from_config(alembic_config()).get_current_head()


def _rows_at_0007(db: Database) -> None:
    """A stack with a running traversal, a node and a timer, written as
    revision 0007 has them (not through schema.py, which is at head)."""
    now = datetime.now(UTC)
    if db.is_sqlite:
        now = now.replace(tzinfo=None)
    when = sa.DateTime(timezone=True)

    def table(name: str, *columns: sa.ColumnClause[Any]) -> sa.TableClause:
        return sa.table(name, *columns)

    c = sa.column
    stacks = table(
        "stacks", c("id"), c("project"), c("name"), c("action"), c("status"),
        c("status_reason"), c("traversal_id"), c("parameters", sa.JSON()),
        c("disable_rollback", sa.Boolean()), c("outputs", sa.JSON()), c("tags", sa.JSON()),
        c("created_at", when),
    )  # fmt: skip
    traversals = table(
        "traversals", c("id"), c("stack_id"), c("action"), c("status"),
        c("rollback_enabled", sa.Boolean()), c("started_at", when),
    )  # fmt: skip
    nodes = table(
        "traversal_nodes", c("traversal_id"), c("key"), c("kind"), c("resource_name"),
        c("pending", sa.Integer()), c("state"), c("successors", sa.JSON()),
        c("payload", sa.JSON()), c("attempt", sa.Integer()),
    )  # fmt: skip
    timers = table("timers", c("traversal_id"), c("node_key"), c("due_at", when), c("purpose"))
    with db.engine.begin() as conn:
        conn.execute(stacks.insert().values(
            id="s1", project="p", name="old", action="CREATE", status="IN_PROGRESS",
            status_reason="", traversal_id="t1", parameters={}, disable_rollback=True,
            outputs=[], tags=[], created_at=now,
        ))  # fmt: skip
        conn.execute(traversals.insert().values(
            id="t1", stack_id="s1", action="CREATE", status="IN_PROGRESS",
            rollback_enabled=False, started_at=now,
        ))  # fmt: skip
        conn.execute(nodes.insert().values(
            traversal_id="t1", key="a", kind="update", resource_name="a", pending=0,
            state="sleeping", successors=[], payload={"k": 1}, attempt=1,
        ))  # fmt: skip
        conn.execute(timers.insert().values(traversal_id="t1", node_key="a", due_at=now,
                                            purpose="poll"))  # fmt: skip


def _stack_rows_kept(store: SQLStore) -> None:
    traversal = store.get_traversal("t1")
    assert traversal is not None and traversal.stack_id == "s1"
    assert traversal.kind == "stack" and traversal.execution_id == ""
    assert [(n.key, n.state, n.payload) for n in store.list_nodes("t1")] == [
        ("a", "sleeping", {"k": 1})
    ]
    assert store.next_timer_due("t1") is not None
    assert [t.id for t in store.active_traversals()] == ["t1"]


def test_0008_keeps_a_stores_stacks_and_downgrades(empty_url: str) -> None:
    """Up from 0007 with a running stack (on SQLite the traversals table is
    copied: its nodes and timers must survive), workflow rows added, down
    again (they go, the stack's stay), and up again to exactly schema.py."""
    db = Database(empty_url)
    try:
        _migrate(db, "0007")
        _rows_at_0007(db)
        _migrate(db, "0008")
        assert db.revision() == "0008"
        store = SQLStore(empty_url)
        try:
            _stack_rows_kept(store)
            execution = ExecutionRecord(id="e1", project="p", workflow_id="w", workflow_name="w")
            traversal = TraversalRecord(id="wt", kind="workflow", execution_id="e1", action="RUN")
            node = NodeRecord(traversal_id="wt", key="t", kind="task", resource_name="t")
            store.workflows.create_execution(execution, traversal=traversal, nodes=[node])
            store.apply([AddTimer("wt", "t", datetime.now(UTC))])
            assert {t.id for t in store.active_traversals()} == {"t1", "wt"}
        finally:
            store.close()
        db.migrate("0007", down=True)
        assert db.revision() == "0007"
        with db.engine.connect() as conn:
            inspector = sa.inspect(conn)
            assert "workflow_executions" not in inspector.get_table_names()
            columns = {col["name"]: col for col in inspector.get_columns("traversals")}
            assert "kind" not in columns and not columns["stack_id"]["nullable"]
            left = conn.execute(sa.text("SELECT traversal_id FROM timers")).scalars().all()
            assert left == ["t1"]
        db.upgrade()
        _tables, revision, diff = _state(db)
        assert revision == head_revision() and diff == []
        store = SQLStore(empty_url)
        try:
            _stack_rows_kept(store)
        finally:
            store.close()
    finally:
        db.close()


def test_a_traversal_has_exactly_the_owner_its_kind_says(empty_url: str) -> None:
    """The CHECK constraint, below the store's own check."""
    store = SQLStore(empty_url)
    db = Database(empty_url)
    try:
        now = datetime.now(UTC)
        store.workflows.create_execution(
            ExecutionRecord(id="e1", project="p", workflow_id="w", workflow_name="w")
        )
        bad = {"id": "x", "action": "RUN", "status": "IN_PROGRESS", "rollback_enabled": False,
               "started_at": now, "kind": "workflow", "execution_id": None}  # fmt: skip
        from convection.store.schema import traversals

        with pytest.raises(sa.exc.IntegrityError), db.engine.begin() as conn:
            conn.execute(traversals.insert().values(bad))
        with pytest.raises(sa.exc.IntegrityError), db.engine.begin() as conn:
            conn.execute(traversals.insert().values({**bad, "kind": "stack", "execution_id": "e1"}))
    finally:
        db.close()
        store.close()


def test_a_store_migrated_by_a_newer_convection_is_refused_clearly(tmp_path: Path) -> None:
    """An older checkout on a newer schema says so, and changes nothing."""
    url = f"sqlite:///{tmp_path / 'newer.db'}"
    SQLStore(url).close()
    newer = f"{int(head_revision()) + 1:04d}"
    engine = sa.create_engine(url)
    with engine.begin() as conn:
        conn.execute(sa.text("UPDATE alembic_version SET version_num = :v"), {"v": newer})
    from convection.common import ConvectionError

    with pytest.raises(ConvectionError, match=f"schema revision {newer}, newer than"):
        SQLStore(url)
    with engine.connect() as conn:
        assert conn.execute(sa.text("SELECT version_num FROM alembic_version")).scalar() == newer
    engine.dispose()
