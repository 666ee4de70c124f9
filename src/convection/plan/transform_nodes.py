"""Transforms that add nodes: update nodes for resources that change, and
cleanup nodes for versions that may have to go (Heat convergence's two
node kinds)."""

from __future__ import annotations

from collections.abc import Mapping, Sequence

from convection.plan.decide import NODE_ACTIONS
from convection.plan.model import (
    Action,
    Change,
    CleanupMode,
    Deposed,
    Node,
    NodeKind,
    action_key,
    cleanup_key,
    update_key,
)
from convection.plan.opgraph import OpGraph
from convection.store import ResourceRecord


class AddUpdateNodes:
    """One update node per resource that is created, evaluated, replaced or
    restored. Unchanged resources get none: that is what keeps a small
    update of a big stack small."""

    def __init__(self, changes: Sequence[Change], restores: Mapping[str, int]) -> None:
        self.changes = changes
        self.restores = restores

    def apply(self, g: OpGraph) -> None:
        for c in self.changes:
            if c.action in NODE_ACTIONS:
                g.add(
                    Node(
                        update_key(c.name),
                        NodeKind.UPDATE,
                        c.name,
                        c.action,
                        c.reason,
                        resource_id=c.resource_id,
                        restore_id=self.restores.get(c.name),
                    )
                )


class AddCleanupNodes:
    """A cleanup node for every stored version that may have to go:

    * a resource deleted from the template: delete it;
    * a deposed old version: delete it;
    * the current version of a resource that has an update node: delete it
      only if, by the time the node runs, it is no longer current (the
      update replaced it). Giving every such version a node up front lets a
      job decide "replace" on resolved values without changing the graph.
    """

    def __init__(self, changes: Sequence[Change], deposed: Sequence[Deposed]) -> None:
        self.changes = changes
        self.deposed = deposed

    def apply(self, g: OpGraph) -> None:
        for c in self.changes:
            if c.resource_id is None:
                continue
            if c.action is Action.DELETE:
                mode = CleanupMode.DELETE
            elif c.action in NODE_ACTIONS and c.action is not Action.CREATE:
                mode = CleanupMode.IF_REPLACED
            else:
                continue
            g.add(_cleanup(c.name, c.resource_id, c.reason, mode))
        for d in self.deposed:
            g.add(_cleanup(d.name, d.resource_id, d.reason, CleanupMode.DEPOSED))


def _cleanup(name: str, resource_id: int, reason: str, mode: CleanupMode) -> Node:
    return Node(
        cleanup_key(resource_id),
        NodeKind.CLEANUP,
        name,
        Action.DELETE,
        reason,
        resource_id=resource_id,
        mode=mode,
    )


class AddActionNodes:
    """One node per current resource for a whole-stack action (check,
    suspend, resume); these plans have no update or cleanup nodes."""

    def __init__(self, kind: NodeKind, action: Action, rows: Sequence[ResourceRecord]) -> None:
        self.kind = kind
        self.action = action
        self.rows = rows

    def apply(self, g: OpGraph) -> None:
        for row in self.rows:
            g.add(
                Node(
                    action_key(self.kind, row.name),
                    self.kind,
                    row.name,
                    self.action,
                    f"stack {self.action.word}",
                    resource_id=row.id,
                )
            )
