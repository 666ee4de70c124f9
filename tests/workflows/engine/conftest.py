"""Workflow engine tests: real stores (memory, SQLite, PostgreSQL through
``tests/store/conftest.py``), the real engine and the real actions."""

from __future__ import annotations

import importlib.util
import textwrap
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from convection.service.stacks import Stacks
from convection.store.api import Store
from convection.workflows import (
    create_execution,
    create_workflows,
    engine_for,
    get_execution,
    list_tasks,
    wait_execution,
)

_spec = importlib.util.spec_from_file_location(
    "_store_conftest_wf", Path(__file__).parent.parent.parent / "store" / "conftest.py"
)
assert _spec is not None and _spec.loader is not None
_store_conftest = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(_store_conftest)

postgres_database = _store_conftest.postgres_database
store_url = _store_conftest.store_url
store_factory = _store_conftest.store_factory
store = _store_conftest.store

PROJECT = "demo"


class Runner:
    """Upload workflows, start executions, run the engine until they end."""

    def __init__(self, store: Store) -> None:
        self.store = store
        self.stacks = Stacks(store)
        engine_for(self.stacks)  # stacks.run_engine runs workflows too

    def upload(self, text: str) -> None:
        create_workflows(self.store, PROJECT, textwrap.dedent(text))

    def start(self, name: str, **kw: Any) -> str:
        return str(create_execution(self.store, PROJECT, name, **kw)["id"])

    def wait(self, execution_id: str, timeout: float = 30) -> dict[str, Any]:
        return wait_execution(self.stacks, execution_id, timeout=timeout)

    def run(self, text: str, name: str, **kw: Any) -> dict[str, Any]:
        self.upload(text)
        return self.wait(self.start(name, **kw))

    def show(self, execution_id: str) -> dict[str, Any]:
        return get_execution(self.store, PROJECT, execution_id)

    def tasks(self, execution_id: str) -> dict[str, dict[str, Any]]:
        """Each task's last execution, by name."""
        return {t["name"]: t for t in list_tasks(self.store, PROJECT, execution_id=execution_id)}


@pytest.fixture
def runner(store: Store) -> Iterator[Runner]:
    yield Runner(store)


@pytest.fixture
def sqlite_runner(tmp_path: Path) -> Iterator[Runner]:
    from convection.store.sql import SQLStore

    opened = SQLStore(f"sqlite:///{tmp_path / 'wf.db'}")
    yield Runner(opened)
    opened.close()
