"""``resource_facade`` in a nested stack: data of the resource that owns it.

A provider template may read its owner's ``metadata``, ``deletion_policy``
and ``update_policy``. The child's resolver asks the owner's stack for them
only when a template uses the function: the owner's definition comes from
the definitions cache (or the store) and its expressions are resolved
against the owner's stored resources, read once per traversal.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from convection.common import ExpressionError
from convection.hot import resolve
from convection.model import StackDefinition
from convection.plan import Lookup, RecordResolver
from convection.store import ResourceRecord, StackRecord, Store

#: (stack, template id) -> its definition (``engine.templates.Definitions``).
LoadDefinition = Callable[[StackRecord, int], StackDefinition | None]


class NestedResolver(RecordResolver):
    """A :class:`RecordResolver` whose ``resource_facade`` reads the owner."""

    __slots__ = ("_facade", "_load", "_stack", "_store")

    def __init__(
        self,
        definition: StackDefinition,
        lookup: Lookup,
        *,
        stack: StackRecord,
        store: Store,
        load: LoadDefinition,
    ) -> None:
        super().__init__(definition, lookup)
        self._stack = stack
        self._store = store
        self._load = load
        self._facade: dict[str, Any] | None = None

    def facade(self, section: str) -> Any:
        if self._facade is None:
            self._facade = self._owner_facade()
        return self._facade.get(section)

    def _owner_facade(self) -> dict[str, Any]:
        owner = self._store.get_stack_by_id(self._stack.parent_id or "")
        name = self._stack.parent_resource
        if owner is None or owner.template_id is None or name is None:
            raise ExpressionError("resource_facade: the owning resource is gone")
        definition = self._load(owner, owner.template_id)
        rdef = None if definition is None else definition.resources.get(name)
        if definition is None or rdef is None:
            raise ExpressionError(f"resource_facade: the owning resource {name} is gone")
        rows: dict[str, ResourceRecord] = {
            r.name: r for r in self._store.list_resources(owner.id, current_only=True)
        }
        owner_resolver = RecordResolver(definition, rows.get)
        return {
            "metadata": resolve(rdef.metadata, owner_resolver) or {},
            "deletion_policy": rdef.deletion_policy,
            "update_policy": resolve(rdef.update_policy, owner_resolver) or {},
        }
