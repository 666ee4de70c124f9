"""Evaluating a definition's expressions against stored resource records.

One resolver serves three callers: preview (stored state, before anything
runs), plan refinement, and the engine's jobs and outputs (the state the
traversal has reached). It looks resources up through a function, so each
evaluation reads only the records it references: O(own dependencies), never
the whole stack.
"""

from __future__ import annotations

from collections.abc import Callable, Collection
from typing import Any, NoReturn

from convection.common import ExpressionError
from convection.model import StackDefinition, path_value
from convection.store import ResourceRecord

Lookup = Callable[[str], ResourceRecord | None]


class Unknown(Exception):
    """A value that is not known yet (its resource is about to change)."""

    def __init__(self, resource: str) -> None:
        self.resource = resource
        super().__init__(f"{resource} is not known until it is updated")


def reference_id(row: ResourceRecord) -> Any:
    """Heat's rule: the plugin's reference id, else the physical id, else
    the logical name (a resource that was never created)."""
    if row.reference_id is not None:
        return row.reference_id
    return row.physical_id if row.physical_id is not None else row.name


class RecordResolver:
    """A :class:`convection.hot.functions.base.Resolver` over records.

    ``unknown`` names resources whose values are not settled (preview and
    refinement pass the resources that have nodes); asking about one raises
    :class:`Unknown`, which callers catch to say "decided at run time".
    """

    __slots__ = ("_definition", "_lookup", "_unknown")

    def __init__(
        self, definition: StackDefinition, lookup: Lookup, unknown: Collection[str] = ()
    ) -> None:
        self._definition = definition
        self._lookup = lookup
        self._unknown = unknown

    def _row(self, name: str) -> ResourceRecord:
        if name in self._unknown:
            raise Unknown(name)
        row = self._lookup(name)
        if row is None:
            raise KeyError(name)
        return row

    def parameter(self, name: str) -> Any:
        return self._definition.parameters.value(name)

    def resource_id(self, name: str) -> Any:
        return reference_id(self._row(name))

    def attribute(self, resource: str, name: str | None) -> Any:
        row = self._row(resource)
        if name is None:
            return dict(row.attributes)
        if name == "show":
            return row.attributes.get("show", dict(row.attributes))
        return path_value(row.type, name, row.attributes)

    def file(self, name: str) -> str | None:
        return self._definition.template.files.get(name)

    def facade(self, section: str) -> NoReturn:
        raise ExpressionError("resource_facade is only valid in a nested stack's template")
