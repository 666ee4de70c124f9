"""One stack's traversal as this engine runs it: what its jobs need.

The store holds the truth (nodes, timers, resource rows); a
:class:`TraversalRun` holds what this process derived from it: the compiled
target definition and the resource view, beside the kernel's tally
(``kernel.Run``). Another process can rebuild all of it from the store,
which is how a traversal resumes.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from convection.common import ConvectionError, Status
from convection.convergence.attributes import referenced_attributes
from convection.convergence.config import EngineConfig
from convection.convergence.context import hidden_texts
from convection.convergence.facade import NestedResolver
from convection.convergence.hub import NestedHub
from convection.convergence.templates import load_definition
from convection.convergence.view import StackView
from convection.hot import dependencies, is_template_name, resolve
from convection.kernel import Journal, Run
from convection.model import ResourceDefinition, StackDefinition
from convection.plan import RecordResolver, digests
from convection.resources import ResourcePlugin, TypeRegistry, WorkflowsFor, template_type
from convection.store import NodeRecord, StackRecord, Store, TraversalRecord


class TraversalRun(Run):
    """Everything a job of one stack's traversal may use; passed explicitly."""

    __slots__ = (
        "_digests",
        "_plugins",
        "_reads",
        "_secrets",
        "config",
        "definition",
        "hub",
        "journal",
        "registry",
        "resolver",
        "stack",
        "store",
        "view",
        "workflows",
    )

    def __init__(
        self,
        traversal: TraversalRecord,
        stack: StackRecord,
        definition: StackDefinition | None,
        view: StackView,
        *,
        services: tuple[Store, Journal[Store], TypeRegistry, EngineConfig],
    ) -> None:
        super().__init__(traversal)
        self.stack = stack
        self.definition = definition
        self.view = view
        self.store, self.journal, self.registry, self.config = services
        self._plugins: dict[str, ResourcePlugin] = {}
        self._reads: dict[str, frozenset[str]] | None = None
        self._digests: dict[str, str] | None = None
        self._secrets: tuple[str, ...] | None = None
        #: Child stacks of this run's resources (set by the engine).
        self.hub: NestedHub | None = None
        #: The workflow service for OS::Mistral resources (set by the engine
        #: when the workflow layer is attached).
        self.workflows: WorkflowsFor | None = None
        self.resolver = None if definition is None else self._resolver(definition)

    def _resolver(self, definition: StackDefinition) -> RecordResolver:
        if self.stack.parent_id is None:
            return RecordResolver(definition, self.view.current)
        return NestedResolver(
            definition,
            self.view.current,
            stack=self.stack,
            store=self.store,
            load=lambda stack, tid: load_definition(self.store, self.registry, stack, tid),
        )

    def refresh(self, nodes: Sequence[NodeRecord]) -> bool:
        """Every version of the nodes' resources and of what they depend on,
        read again: all a stack job reads of other jobs' work, and all it
        writes of its own, in one query."""
        if self.definition is None:
            return False
        defs = self.definition.resources
        names: set[str] = set()
        for node in nodes:
            names.add(node.resource_name)
            rdef = defs.get(node.resource_name)
            if rdef is not None:
                names.update(rdef.requires)
        self.view.reload(names, self.store.list_resources(self.stack.id, names=names))
        return True

    def queue(self, node: NodeRecord) -> str:
        """The ``queue`` property of the node a resource runs on: its own
        (a server), or that of the server its ``server`` property names (a
        software deployment)."""
        defs = {} if self.definition is None else self.definition.resources
        rdef = defs.get(node.resource_name)
        if rdef is None or self.resolver is None:
            return super().queue(node)
        for name in (node.resource_name, *dependencies(_props(rdef).get("server"))):
            found = defs.get(name)
            expr = None if found is None else _props(found).get("queue")
            if expr is None:
                continue
            try:
                queue = resolve(expr, self.resolver)
            except ConvectionError:
                continue  # not resolvable yet: the default queue serves it
            if isinstance(queue, str) and queue:
                return queue
        return super().queue(node)

    def plugin(self, type_name: str) -> ResourcePlugin | None:
        """A (stateless) plugin instance for a type, or None if unknown."""
        found = self._plugins.get(type_name)
        if found is None:
            cls = self.registry.get(type_name)
            if cls is not None:
                found = cls()
            elif is_template_name(type_name):
                # A template resource: the type is a file of this stack.
                files = {} if self.definition is None else self.definition.template.files
                found = template_type(type_name, files.get(type_name))()
            else:
                return None
            self._plugins[type_name] = found
        return found

    def attributes_read(self, name: str) -> frozenset[str]:
        """Attribute names the definition reads of resource ``name``."""
        if self.definition is None:
            return frozenset()
        if self._reads is None:
            self._reads = referenced_attributes(self.definition)
        return self._reads.get(name, frozenset())

    @property
    def secrets(self) -> tuple[str, ...]:
        """The hidden parameters' texts for plugins to redact: the same for
        every job of the run, so worked out once, not per context."""
        if self._secrets is None:
            params = None if self.definition is None else self.definition.parameters
            self._secrets = () if params is None else hidden_texts(params)
        return self._secrets

    def digest(self, name: str) -> str:
        """The resource's definition digest. Kept per run: ``digests``
        remembers only the last few definitions, and a group's members are
        hundreds of runs taking turns, each of which hashed its whole
        definition again for every resource it finished."""
        assert self.definition is not None
        if self._digests is None:
            self._digests = digests(self.definition)
        return self._digests[name]

    def concurrency(self) -> int | None:
        per_stack = self.config.per_stack
        return per_stack.get(self.stack.id, per_stack.get(self.stack.name))

    def failure_of(self, node: NodeRecord) -> tuple[str, str]:
        """A failed node's resource row says what failed, if it failed."""
        row = self.view.get(node.resource_id) if node.resource_id is not None else None
        if row is not None and row.status == Status.FAILED:
            return row.action, row.status_reason
        return self.traversal.action, f"{node.resource_name} failed"


def _props(rdef: ResourceDefinition) -> Mapping[str, Any]:
    props = rdef.properties
    return props if isinstance(props, Mapping) else {}
