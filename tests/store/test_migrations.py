"""Migrations: an empty database reaches head; head is exactly schema.py."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import pytest
import sqlalchemy as sa
from alembic.autogenerate import compare_metadata
from alembic.runtime.migration import MigrationContext
from alembic.script import ScriptDirectory

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
    from alembic import command

    with db.engine.begin() as conn:
        command.upgrade(alembic_config(conn), revision)


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
    ]


def test_head_revision_is_alembics_head() -> None:
    """A store skips Alembic when its schema is at ``head_revision``, which
    reads the migration file names: it must be the head Alembic computes."""
    assert head_revision() == ScriptDirectory.from_config(alembic_config()).get_current_head()
