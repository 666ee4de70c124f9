"""Turning a stored template back into a definition, with a small cache.

A traversal names its target through the stack (``template_id``); any
engine can compile it again from the store. The process that just compiled
it for planning puts the result in the cache, so it is not compiled twice.
"""

from __future__ import annotations

from collections import OrderedDict
from collections.abc import Collection

from convection.common import Limits
from convection.hot import Document, SourceMap
from convection.model import StackDefinition, StackIdentity, StackInputs, compile_stack
from convection.resources import TypeRegistry
from convection.store import StackRecord, Store

#: Stored templates were checked against the limits when they were given.
_NO_LIMITS = Limits(max_resources_per_stack=-1)


class Definitions:
    """template id -> compiled definition, least recently used dropped."""

    __slots__ = ("_cache", "_size")

    def __init__(self, size: int = 4) -> None:
        self._cache: OrderedDict[tuple[int, str], StackDefinition] = OrderedDict()
        self._size = size

    def put(self, template_id: int, stack_id: str, definition: StackDefinition) -> None:
        self._cache[(template_id, stack_id)] = definition
        self._cache.move_to_end((template_id, stack_id))
        while len(self._cache) > self._size:
            self._cache.popitem(last=False)

    def retain(self, stack_id: str, keep: Collection[int | None]) -> None:
        """Drop ``stack_id``'s definitions other than ``keep``: once an
        operation ended, only its stack's template and the one a rollback
        would go back to can be asked for again (anything else is compiled
        from the store if it is). A 10,000-resource definition holds its
        template's data and source map, about 15 MB, and the LRU bound
        alone kept up to four of them alive in a service."""
        for key in [k for k in self._cache if k[1] == stack_id and k[0] not in keep]:
            del self._cache[key]

    def get(
        self, store: Store, registry: TypeRegistry, stack: StackRecord, template_id: int | None
    ) -> StackDefinition | None:
        """The definition of ``template_id`` (None: the empty template)."""
        if template_id is None:
            return None
        key = (template_id, stack.id)
        found = self._cache.get(key)
        if found is None:
            found = load_definition(store, registry, stack, template_id)
            self.put(template_id, stack.id, found)
        return found


def load_definition(
    store: Store, registry: TypeRegistry, stack: StackRecord, template_id: int
) -> StackDefinition:
    record = store.get_template(template_id)
    inputs = StackInputs(
        Document("template", record.template, SourceMap("template")),
        (Document("environment", record.environment, SourceMap("environment")),),
        dict(record.files),
    )
    identity = StackIdentity(stack.name, stack.id, stack.project)
    # Its values were checked when it was given; checking them again could
    # only refuse a stack made before a check existed, which must still be
    # readable, updatable from and deletable.
    return compile_stack(
        inputs, identity=identity, catalog=registry.catalog(), limits=_NO_LIMITS, values=False
    ).definition
