"""Transforms that add edges: the orderings Heat's convergence graph has.

Each transform states one reason for an ordering. Edges to nodes that do not
exist are dropped by :meth:`OpGraph.connect`, so the rules read as plain
sentences ("after the update of everything that requires it") without
checking which resources happen to change.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence

from convection.model import StackDefinition
from convection.plan.model import NodeKind, cleanup_key, update_key
from convection.plan.opgraph import OpGraph
from convection.store import ResourceRecord


class OrderUpdates:
    """update(A) after update(B) when A requires B in the new definition:
    A's properties are resolved against B's new reference id and
    attributes, which exist only once B's update has finished."""

    def __init__(self, definition: StackDefinition | None) -> None:
        self.definition = definition

    def apply(self, g: OpGraph) -> None:
        if self.definition is None:
            return
        for name, r in self.definition.resources.items():
            later = update_key(name)
            if later in g:  # a resource without a change has no node to order
                for dep in r.requires:
                    g.connect(later, update_key(dep))


class OrderCleanupAfterReplacement:
    """cleanup(old X) after update(X): the new version exists before the
    old one is removed (create before delete, as Heat replaces)."""

    def apply(self, g: OpGraph) -> None:
        for node in g.nodes:
            if node.kind is NodeKind.CLEANUP:
                g.connect(node.key, update_key(node.name))


class OrderCleanupAfterRequirers:
    """cleanup(old X) after update(Z) for every Z that requires X, in the
    new definition or as stored: Z must stop pointing at the old X before
    the old X goes. (Every such Z has an update node, because a resource
    whose dependency has a node is evaluated.)"""

    def __init__(
        self, definition: StackDefinition | None, current: Mapping[str, ResourceRecord]
    ) -> None:
        self.definition = definition
        self.current = current

    def apply(self, g: OpGraph) -> None:
        by_name = _cleanups_by_name(g)
        if not by_name:
            return
        if self.definition is not None:
            for name, r in self.definition.resources.items():
                _connect_all(g, update_key(name), r.requires, by_name)
        for name, row in self.current.items():
            _connect_all(g, update_key(name), row.requires, by_name)


class OrderCleanups:
    """cleanup(Y) after cleanup(Z) when stored Z required Y: deletes run in
    reverse dependency order, so nothing is deleted while a stored resource
    still uses it.

    Stored ``requires`` name resources, not versions, so old versions from
    templates that reversed a dependency could form a cycle; if they do,
    the orderings that start at deposed versions are dropped (the current
    versions keep theirs).
    """

    def __init__(self, rows: Sequence[ResourceRecord]) -> None:
        self.rows = rows

    def apply(self, g: OpGraph) -> None:
        by_name = _cleanups_by_name(g)
        from_deposed: list[tuple[str, str]] = []
        for row in self.rows:
            key = cleanup_key(row.id)
            if key not in g:
                continue
            for dep in row.requires:
                for target in by_name.get(dep, ()):
                    g.connect(target, key)
                    if not row.current:
                        from_deposed.append((target, key))
        if from_deposed and g.find_cycle() is not None:
            g.disconnect(from_deposed)


class OrderByDependencies:
    """Whole-stack actions: check and resume run in dependency order,
    suspend in reverse (Heat suspends dependents first)."""

    def __init__(self, kind: NodeKind, rows: Sequence[ResourceRecord], reverse: bool) -> None:
        self.kind = kind
        self.rows = rows
        self.reverse = reverse

    def apply(self, g: OpGraph) -> None:
        for row in self.rows:
            for dep in row.requires:
                mine, theirs = f"{self.kind.value}:{row.name}", f"{self.kind.value}:{dep}"
                if self.reverse:
                    g.connect(theirs, mine)
                else:
                    g.connect(mine, theirs)


def _cleanups_by_name(g: OpGraph) -> dict[str, list[str]]:
    out: dict[str, list[str]] = {}
    for node in g.nodes:
        if node.kind is NodeKind.CLEANUP:
            out.setdefault(node.name, []).append(node.key)
    return out


def _connect_all(
    g: OpGraph, update: str, names: Iterable[str], by_name: Mapping[str, list[str]]
) -> None:
    """Every cleanup of the named resources runs after ``update``."""
    if update not in g:
        return
    for name in names:
        for cleanup in by_name.get(name, ()):
            g.connect(cleanup, update)
