"""One traversal as this engine runs it: what its jobs need, and its tally.

The store holds the truth (nodes, timers, resource rows); a
:class:`TraversalRun` holds what this process derived from it: the compiled
target definition, the resource view, and counters. Another process can
rebuild all of it from the store, which is how a traversal resumes.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from datetime import datetime
from typing import TYPE_CHECKING

from convection.definition import StackDefinition
from convection.engine.attributes import referenced_attributes
from convection.engine.config import EngineConfig
from convection.engine.context import hidden_texts
from convection.engine.facade import NestedResolver
from convection.engine.journal import Journal
from convection.engine.templates import load_definition
from convection.engine.view import StackView
from convection.hot.environment import is_template_name
from convection.plan.digest import digests
from convection.plan.resolve import RecordResolver
from convection.resources.api import ResourcePlugin
from convection.resources.heat.template_resource import template_type
from convection.resources.registry import TypeRegistry
from convection.store.api import StackRecord, Store, TraversalRecord

if TYPE_CHECKING:
    from convection.engine.nested import NestedHub


@dataclass(slots=True)
class Tally:
    """Counters the walker keeps per traversal."""

    #: Nodes not yet done, failed or skipped.
    remaining: int = 0
    #: Jobs of this traversal running in this engine.
    inflight: int = 0
    #: The first failure: (resource action, reason) for the stack's reason.
    failure: tuple[str, str] | None = None
    #: Check only: the first drifted resource's reason.
    check_failed: str | None = None
    #: Stop starting nodes (cancel, timeout, failure with rollback).
    stopping: str | None = None
    #: Node keys skipped because something they need failed.
    skipped: set[str] = field(default_factory=set)
    #: A node has waited at a hook (``engine.hooks``) or slept on a poll
    #: (a signal may wake it, ``engine.signal_wake``): look for wake timers
    #: other processes wrote.
    parked: bool = False


class TraversalRun:
    """Everything a job of one traversal may use; passed explicitly."""

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
        "successors",
        "tally",
        "traversal",
        "view",
    )

    def __init__(
        self,
        traversal: TraversalRecord,
        stack: StackRecord,
        definition: StackDefinition | None,
        view: StackView,
        *,
        services: tuple[Store, Journal, TypeRegistry, EngineConfig],
    ) -> None:
        self.traversal = traversal
        self.stack = stack
        self.definition = definition
        self.view = view
        self.store, self.journal, self.registry, self.config = services
        self.tally = Tally()
        #: node key -> successor keys; loaded when a failure needs them.
        self.successors: Mapping[str, tuple[str, ...]] | None = None
        self._plugins: dict[str, ResourcePlugin] = {}
        self._reads: dict[str, frozenset[str]] | None = None
        self._digests: dict[str, str] | None = None
        self._secrets: tuple[str, ...] | None = None
        #: Child stacks of this run's resources (set by the engine).
        self.hub: NestedHub | None = None
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

    @property
    def id(self) -> str:
        return self.traversal.id

    @property
    def deadline(self) -> datetime | None:
        return self.traversal.deadline

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

    def concurrency(self) -> int:
        per_stack = self.config.per_stack
        limit = per_stack.get(self.stack.id, per_stack.get(self.stack.name))
        return self.config.concurrency if limit is None else limit
