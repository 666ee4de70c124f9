"""What the software and nodes tests share: a Stacks service on an SQLite
file driven through one stack at a time, and the real sshd fixtures of
``tests/software`` (loaded from its conftest, which is not importable as a
package module)."""

from __future__ import annotations

import importlib.util
import sys
import textwrap
from pathlib import Path
from typing import Any

from convection.convergence import EngineConfig
from convection.model.compiler import StackInputs
from convection.resources.registry import TypeRegistry, builtin_plugins
from convection.service.stacks import Stacks, StacksConfig
from convection.store.api import ResourceRecord
from convection.store.sql import SQLStore

_spec = importlib.util.spec_from_file_location(
    "_resources_software_conftest", Path(__file__).parents[1] / "software" / "conftest.py"
)
assert _spec is not None and _spec.loader is not None
software = importlib.util.module_from_spec(_spec)
sys.modules[_spec.name] = software  # dataclasses look their module up
_spec.loader.exec_module(software)

HEADER = "heat_template_version: 2018-08-31\n"


class Env:
    """A Stacks service on an SQLite file, with helpers for one stack."""

    def __init__(self, db: Path) -> None:
        self.db = db
        self.store = SQLStore(f"sqlite:///{db}")
        self.stacks = Stacks(
            self.store,
            TypeRegistry(builtin_plugins()),
            config=StacksConfig(engine=EngineConfig(scan_seconds=0.05)),
        )

    @staticmethod
    def inputs(text: str, env: str | None = None, **parameters: Any) -> StackInputs:
        environments = [("env.yaml", textwrap.dedent(env))] if env else []
        return StackInputs.from_text(
            HEADER + textwrap.dedent(text), environments=environments, parameters=parameters
        )

    def create(
        self, text: str, name: str = "s", env: str | None = None, **parameters: Any
    ) -> dict[str, Any]:
        self.stacks.create("p", name, self.inputs(text, env, **parameters))
        return self.wait(name)

    def update(
        self, text: str, name: str = "s", env: str | None = None, **parameters: Any
    ) -> dict[str, Any]:
        self.stacks.update("p", name, self.inputs(text, env, **parameters))
        return self.wait(name)

    def create_failure(self, text: str, resource: str, **parameters: Any) -> str:
        """Create stack ``s``, which must fail; the reason ``resource`` gives."""
        shown = self.create(text, **parameters)
        assert shown["stack_status"] == "CREATE_FAILED", shown["stack_status_reason"]
        return str(self.resources()[resource]["resource_status_reason"])

    def check(self, name: str = "s") -> dict[str, Any]:
        self.stacks.check("p", name)
        return self.wait(name)

    def delete(self, name: str = "s") -> dict[str, Any]:
        self.stacks.delete("p", name)
        return self.wait(name)

    def wait(self, name: str = "s") -> dict[str, Any]:
        stack = self.store.get_stack("p", name)
        assert stack is not None
        return self.stacks.wait(stack.id, timeout=120)

    def status(self, name: str = "s") -> tuple[str, str]:
        shown = self.stacks.show("p", name)
        return shown["stack_status"], shown["stack_status_reason"]

    def resources(self, name: str = "s") -> dict[str, dict[str, Any]]:
        return {r["resource_name"]: r for r in self.stacks.resources("p", name)}

    def record(self, resource: str, name: str = "s") -> ResourceRecord:
        stack = self.store.get_stack("p", name)
        assert stack is not None
        rows = [r for r in self.store.list_resources(stack.id) if r.name == resource]
        return rows[-1]

    def attr(self, resource: str, attribute: str, name: str = "s") -> Any:
        return self.record(resource, name).attributes.get(attribute)

    def outputs(self, name: str = "s") -> dict[str, Any]:
        return {o["output_key"]: o.get("output_value") for o in self.stacks.outputs("p", name)}

    def events(self, name: str = "s") -> list[str]:
        return [str(e.get("resource_status_reason") or "") for e in self.stacks.events("p", name)]

    def close(self) -> None:
        self.store.close()
