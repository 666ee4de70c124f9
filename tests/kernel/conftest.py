"""Store fixtures for the kernel suite: the store suite's (memory, SQLite
and PostgreSQL), so the kernel runs on each."""

from __future__ import annotations

import importlib.util
from pathlib import Path

_spec = importlib.util.spec_from_file_location(
    "_store_conftest_kernel", Path(__file__).parent.parent / "store" / "conftest.py"
)
assert _spec is not None and _spec.loader is not None
_store_conftest = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(_store_conftest)

postgres_database = _store_conftest.postgres_database
store_url = _store_conftest.store_url
store_factory = _store_conftest.store_factory
store = _store_conftest.store
