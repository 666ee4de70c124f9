"""The plan as data: what will happen to each resource, and in which order.

Like Terraform's ``plans.Plan``, a :class:`Plan` is a plain frozen value. It is
built by :func:`convection.plan.build_plan`, rendered by
:mod:`convection.plan.text` and :mod:`convection.plan.preview`, encoded by
:mod:`convection.plan.codec`, and executed by the engine, which turns its
nodes into a persisted traversal. Nothing here runs anything.

There are two views of one plan:

* ``changes``: one :class:`Change` per resource name (and one per leftover
  old version, see :class:`Deposed`), each with an :class:`Action` and a
  reason a user can read;
* ``nodes`` and ``edges``: the operation graph, Heat convergence's "update"
  and "cleanup" nodes. A resource that does not change has no node at all,
  so a one-resource change of a 10,000-resource stack is a handful of nodes.
"""

from __future__ import annotations

import enum
from dataclasses import dataclass


class Action(enum.Enum):
    """What happens to one resource. Values are what the UI prints."""

    NOOP = "="
    CREATE = "+"
    #: Update in place (known without running anything).
    UPDATE = "~"
    #: The definition or a dependency changed: the job resolves the new
    #: properties and decides noop, update in place or replace (Heat's rule).
    EVALUATE = "?"
    #: Create a new version, then clean up the old one.
    REPLACE = "+/-"
    #: Rollback only: make a still existing old version current again.
    RESTORE = "<-"
    DELETE = "-"
    CHECK = "check"
    SUSPEND = "suspend"
    RESUME = "resume"

    @property
    def word(self) -> str:
        return self.name.lower()


class NodeKind(enum.StrEnum):
    """What a traversal node does; the engine maps each to a job."""

    UPDATE = "update"
    CLEANUP = "cleanup"
    CHECK = "check"
    SUSPEND = "suspend"
    RESUME = "resume"


class CleanupMode(enum.StrEnum):
    """Why a cleanup node exists, which decides whether it deletes."""

    #: The resource is gone from the template (or the stack is deleted).
    DELETE = "delete"
    #: An old version left by an earlier, unfinished operation.
    DEPOSED = "deposed"
    #: The stored version of a resource this plan may replace: deleted only
    #: if, when the node runs, a newer version has become current.
    IF_REPLACED = "if_replaced"


@dataclass(frozen=True, slots=True)
class Change:
    """The decision for one resource name.

    ``resource_id`` is the stored version the decision is about (``None`` for
    a resource that does not exist yet); ``type`` is the resource's type in
    the new definition (or the stored one when it is being deleted).
    """

    name: str
    action: Action
    reason: str
    type: str
    resource_id: int | None = None


@dataclass(frozen=True, slots=True)
class Deposed:
    """An old version of a resource that is no longer current and must go.

    The word is Terraform's: a replaced object still waiting for its
    destroy. Heat leaves such rows when an update fails or is superseded
    between creating a replacement and cleaning up the original.
    """

    name: str
    resource_id: int
    type: str
    reason: str


@dataclass(frozen=True, slots=True)
class Node:
    """One step of the operation graph."""

    key: str
    kind: NodeKind
    name: str
    action: Action
    reason: str
    #: The stored version the node works on: the current version for an
    #: update (``None`` when creating), the old version for a cleanup.
    resource_id: int | None = None
    #: Cleanup nodes only: when to delete.
    mode: CleanupMode | None = None
    #: Restore nodes only: the old version that becomes current again.
    restore_id: int | None = None


@dataclass(frozen=True, slots=True)
class Plan:
    """Everything an operation will do, decided before it starts.

    ``edges`` are ``(later, earlier)`` pairs of node keys, in the direction
    of :class:`convection.model.graph.Graph` (the requirer first).
    """

    operation: str
    changes: tuple[Change, ...]
    deposed: tuple[Deposed, ...]
    nodes: tuple[Node, ...]
    edges: tuple[tuple[str, str], ...]

    def change(self, name: str) -> Change:
        """The change for ``name``; KeyError when the plan has none."""
        for c in self.changes:
            if c.name == name:
                return c
        raise KeyError(name)

    def counts(self) -> dict[Action, int]:
        """How many resources each action touches (for summaries)."""
        out: dict[Action, int] = {}
        for c in self.changes:
            out[c.action] = out.get(c.action, 0) + 1
        return out


def update_key(name: str) -> str:
    return f"update:{name}"


def cleanup_key(resource_id: int) -> str:
    return f"cleanup:{resource_id}"


def action_key(kind: NodeKind, name: str) -> str:
    return f"{kind.value}:{name}"
