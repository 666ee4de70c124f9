"""Child stacks: what a plugin that owns a nested stack may ask of the engine.

A template resource, ``OS::Heat::Stack`` and the groups (ResourceGroup,
ResourceChain, AutoScalingGroup) are all one thing underneath: a resource
whose real-world object is another stack in the same store, run by the same
engine with its own traversal. The plugin never touches that stack; it
describes it (:class:`ChildStack`) and asks ``ctx.nested``
(:class:`NestedStacks`) to create, update or delete it and to report on it.

Why a narrow capability and not the service: a plugin must not be able to
reach other stacks, bypass the parent's limits or skip the recursion guard.
Everything here is scoped to the calling resource: the child is owned by it
(the store links owner stack, owner resource and nesting depth), compiled
with the parent's environment, and counted in the root stack's resources.

Crash safety follows the plugin contract in ``_context``: ``create`` is
idempotent for one resource version, so calling it again after ``kill -9``
returns the child that was already made; ``update`` and ``delete`` may be
repeated; reads are always fresh.

Waiting is done by the plugin's ``check_*_complete`` returning
:class:`~convection.resources._plugin.Wait`; the engine also wakes the owner
node when a child stack finishes, so the wait is usually cut short.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Protocol, runtime_checkable

from convection.common import JSON

#: Statuses of a child's last action (Heat's).
IN_PROGRESS = "IN_PROGRESS"
COMPLETE = "COMPLETE"
FAILED = "FAILED"


@dataclass(frozen=True, slots=True)
class ChildStack:
    """Everything that defines a child stack, as plain data.

    ``template`` is a HOT mapping or its text. ``files`` are the files the
    child's template may reference (``get_file``, nested template types),
    merged over the parent's. ``environment`` has Heat's environment shape
    and is merged over the parent's (the parent's registry and
    ``parameter_defaults`` reach the child, as in Heat). ``parameters`` are
    the child's parameter values.
    """

    template: Mapping[str, Any] | str
    files: Mapping[str, str] = field(default_factory=dict)
    environment: Mapping[str, Any] = field(default_factory=dict)
    parameters: Mapping[str, Any] = field(default_factory=dict)
    timeout_mins: int | None = None


@dataclass(frozen=True, slots=True)
class ChildState:
    """A child stack's last action and how it went (Heat's stack state)."""

    action: str
    status: str
    reason: str = ""
    #: The child's stack name (``<parent>-<resource>-<shortid>``).
    name: str = ""
    #: The project the child belongs to (its owner's): part of its ARN.
    project: str = ""

    @property
    def in_progress(self) -> bool:
        return self.status == IN_PROGRESS

    @property
    def complete(self) -> bool:
        return self.status == COMPLETE

    @property
    def failed(self) -> bool:
        return self.status == FAILED


@dataclass(frozen=True, slots=True)
class ChildResource:
    """One resource of a child stack (a group's member), as last stored.

    ``attributes`` holds the attributes the engine stored when the member's
    last action completed (its schema's and every name a template asks
    for)."""

    name: str
    type: str
    action: str
    status: str
    physical_id: str | None
    reference_id: JSON
    attributes: Mapping[str, JSON]


@runtime_checkable
class NestedStacks(Protocol):
    """Child stacks owned by the calling resource (``ctx.nested``)."""

    async def create(self, child: ChildStack) -> str:
        """Make the child stack and start its create; returns its id.

        Idempotent for this resource version: called again (a re-run after a
        crash) it returns the same child and starts nothing new. Raises
        :class:`~convection.resources._plugin.ResourceFailure` when the child
        is invalid, too deep, recursive or over the resource limit.
        """
        ...

    async def update(self, stack_id: str, child: ChildStack) -> None:
        """Converge the child stack to ``child`` in place (a new traversal)."""
        ...

    async def delete(self, stack_id: str) -> None:
        """Start deleting the child stack. A child already gone is fine."""
        ...

    async def state(self, stack_id: str) -> ChildState | None:
        """The child's state, or ``None`` when it no longer exists."""
        ...

    async def outputs(self, stack_id: str) -> Mapping[str, JSON]:
        """The child's stored outputs by name (an output that failed to
        resolve is absent)."""
        ...

    async def resources(self, stack_id: str) -> Sequence[ChildResource]:
        """The child's current resources, in name order."""
        ...

    async def act(self, stack_id: str, action: str) -> None:
        """Start a whole-stack ``SUSPEND``, ``RESUME`` or ``CHECK`` on the
        child (Heat's StackResource passes these actions down). Repeating
        it while that action is in progress starts nothing new."""
        ...
