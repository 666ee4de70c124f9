"""Helpers for plan tests: compile a template, and fake what a finished
operation would have stored for it (no engine, no store)."""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping
from typing import Any

import pytest

from convection.hot.functions.base import resolve
from convection.model.compiler import StackInputs, compile_stack
from convection.model.definition import StackDefinition
from convection.plan import RecordResolver, digests
from convection.resources.registry import TypeRegistry, default_registry
from convection.store.api import ResourceRecord

REGISTRY = default_registry()

HEADER = "heat_template_version: 2018-08-31\n"


def compile_text(text: str, parameters: Mapping[str, Any] | None = None) -> StackDefinition:
    inputs = StackInputs.from_text(HEADER + text, parameters=parameters)
    return compile_stack(inputs, catalog=REGISTRY.catalog()).definition


def stored(
    definition: StackDefinition, first_id: int = 1, registry: TypeRegistry = REGISTRY
) -> list[ResourceRecord]:
    """Rows as a successful operation on ``definition`` leaves them."""
    rows: dict[str, ResourceRecord] = {}
    hashes = digests(definition)
    resolver = RecordResolver(definition, rows.get)
    order = sorted(definition.resources, key=lambda n: len(_closure(definition, n)))
    for i, name in enumerate(order):
        r = definition.resources[name]
        plugin = registry.get(r.resolved_type)
        assert plugin is not None
        values, _ = plugin.validate(resolve(r.properties, resolver), ())
        rows[name] = ResourceRecord(
            id=first_id + i,
            stack_id="stack",
            name=name,
            type=r.resolved_type,
            action="CREATE",
            status="COMPLETE",
            physical_id=f"{name}-phys",
            reference_id=f"{name}-ref",
            properties=values,
            attributes={"output": values.get("value")},
            definition_hash=hashes[name],
            requires=r.requires,
        )
    return sorted(rows.values(), key=lambda r: r.id)


def _closure(definition: StackDefinition, name: str) -> set[str]:
    seen: set[str] = set()
    todo = [name]
    while todo:
        for dep in definition.resources[todo.pop()].requires:
            if dep not in seen:
                seen.add(dep)
                todo.append(dep)
    return seen


def replace_row(rows: list[ResourceRecord], name: str, **fields: Any) -> list[ResourceRecord]:
    return [dataclasses.replace(r, **fields) if r.name == name else r for r in rows]


class Kit:
    """The helpers above, as a fixture (tests import nothing from here)."""

    registry = REGISTRY
    compile = staticmethod(compile_text)
    stored = staticmethod(stored)
    replace_row = staticmethod(replace_row)


@pytest.fixture
def kit() -> Kit:
    return Kit()
