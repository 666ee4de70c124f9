"""The engine behaviour suite runs on memory, SQLite and PostgreSQL.

Store fixtures come from ``tests/store/conftest.py`` (PostgreSQL is
required there unless ``CONVECTION_SKIP_POSTGRES=1``). Plugins are the real
Heat utility types plus fakes from ``convection.resources.testing``, the
plugin seam; nothing of our own is mocked.
"""

from __future__ import annotations

import asyncio
import importlib.util
import textwrap
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

from convection.convergence import EngineConfig
from convection.model.compiler import StackInputs
from convection.resources.api import (
    AttributeSchema,
    PropertySchema,
    PropertyType,
    ResourceFailure,
    Wait,
)
from convection.resources.registry import TypeRegistry, builtin_plugins
from convection.resources.testing import LEDGER_ENV, Call, fake_type
from convection.service.stacks import Stacks, StacksConfig
from convection.store.api import Store

_spec = importlib.util.spec_from_file_location(
    "_store_conftest", Path(__file__).parent.parent / "store" / "conftest.py"
)
assert _spec is not None and _spec.loader is not None
_store_conftest = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(_store_conftest)

postgres_database = _store_conftest.postgres_database
store_url = _store_conftest.store_url
store_factory = _store_conftest.store_factory
store = _store_conftest.store

HEADER = "heat_template_version: 2018-08-31\n"


class Recorder:
    """Backs the ``Test::Rec`` fake type: records every call in order and
    does what a test tells it (fail, drift, hold a slot for a while)."""

    def __init__(self) -> None:
        self.calls: list[tuple[str, str]] = []
        self.fail: dict[tuple[str, str], str] = {}
        self.drift: dict[str, str] = {}
        self.hold = 0.0
        self.running = 0
        self.peak = 0

    def ops(self, *kinds: str) -> list[tuple[str, str]]:
        return [c for c in self.calls if c[0] in kinds]

    async def __call__(self, call: Call) -> Any:
        name = call.ctx.resource_name
        if call.op in ("reference_id", "attribute"):
            return call.properties.get("value") if call.op == "attribute" else None
        if not call.op.startswith("check_"):
            self.calls.append((call.op, name))
        reason = self.fail.get((call.op, name))
        if reason is not None:
            raise ResourceFailure(reason)
        if call.op == "check":
            return self.drift.get(name)
        if call.op == "create" and self.hold:
            self.running += 1
            self.peak = max(self.peak, self.running)
            await asyncio.sleep(self.hold)
            self.running -= 1
        return None


REC_SCHEMA = {
    "value": PropertySchema(type=PropertyType.STRING, default="", update_allowed=True),
    "fixed": PropertySchema(type=PropertyType.STRING, default=""),
    "frozen": PropertySchema(type=PropertyType.STRING, default="", immutable=True),
    "wait": PropertySchema(type=PropertyType.NUMBER, default=0),
}


def wait_type(recorder: Recorder) -> Callable[[Call], Any]:
    """Like the recorder, but creates wait ``wait`` seconds on a timer."""

    async def handler(call: Call) -> Any:
        result = await recorder(call)
        if call.op == "check_create_complete" and call.properties.get("wait"):
            deadline = call.ctx.data.get("deadline")
            if deadline is None:
                await call.ctx.set_data({"deadline": call.ctx.now() + call.properties["wait"]})
                return Wait(call.properties["wait"])
            left = float(deadline) - call.ctx.now()
            return True if left <= 0 else Wait(left)
        return result

    return handler


class Env:
    """A Stacks service on the test's store, with helpers."""

    def __init__(self, store: Store, recorder: Recorder, config: EngineConfig) -> None:
        registry = TypeRegistry(builtin_plugins())
        registry.register(
            fake_type(
                "Test::Rec",
                wait_type(recorder),
                properties_schema=REC_SCHEMA,
                attributes_schema={"value": AttributeSchema("the value")},
            )
        )
        self.registry = registry
        self.store = store
        self.rec = recorder
        self.stacks = Stacks(store, registry, config=StacksConfig(engine=config))

    @staticmethod
    def inputs(text: str, **parameters: Any) -> StackInputs:
        return StackInputs.from_text(HEADER + textwrap.dedent(text), parameters=parameters)

    def create(self, text: str, name: str = "s", **kw: Any) -> str:
        params = kw.pop("parameters", {})
        return str(self.stacks.create("p", name, self.inputs(text, **params), **kw)["id"])

    def update(self, text: str, name: str = "s", **kw: Any) -> None:
        params = kw.pop("parameters", {})
        self.stacks.update("p", name, self.inputs(text, **params), **kw)

    def wait(self, name: str = "s") -> dict[str, Any]:
        stack = self.store.get_stack("p", name)
        assert stack is not None
        return self.stacks.wait(stack.id, timeout=60)

    def resources(self, name: str = "s") -> dict[str, dict[str, Any]]:
        return {r["resource_name"]: r for r in self.stacks.resources("p", name)}

    def status(self, name: str = "s") -> tuple[str, str]:
        shown = self.stacks.show("p", name)
        return shown["stack_status"], shown["stack_status_reason"]

    def run_until(self, predicate: Callable[[], bool]) -> None:
        self.stacks.run_engine(until=predicate, timeout=60)

    def resource_status(self, resource: str, name: str = "s") -> str:
        return str(self.resources(name)[resource]["resource_status"])


@pytest.fixture
def recorder() -> Recorder:
    return Recorder()


@pytest.fixture
def engine_config() -> EngineConfig:
    return EngineConfig(scan_seconds=0.05)


@pytest.fixture
def env(store: Store, recorder: Recorder, engine_config: EngineConfig) -> Env:
    return Env(store, recorder, engine_config)


@pytest.fixture
def memory_env(recorder: Recorder, engine_config: EngineConfig) -> Env:
    from convection.store.memory import MemoryStore

    return Env(MemoryStore(), recorder, engine_config)


@pytest.fixture
def ledger(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[Path]:
    path = tmp_path / "ledger.tsv"
    monkeypatch.setenv(LEDGER_ENV, str(path))
    yield path
