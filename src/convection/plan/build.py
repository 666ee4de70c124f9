"""Building a plan: decide every resource, then run the graph steps.

:func:`steps` is the whole recipe for an operation graph, in order, like a
Terraform graph builder's ``Steps()``; each entry is one small transform.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable, Collection, Mapping, Sequence

from convection.common import collector_paused
from convection.hot import is_template_name
from convection.model import StackDefinition
from convection.plan.decide import Decisions, Stored, decide_all
from convection.plan.digest import digests
from convection.plan.model import Action, Change, NodeKind, Plan
from convection.plan.opgraph import OpGraph, Transform
from convection.plan.refine import TypeSchemas, refine
from convection.plan.transform_nodes import AddActionNodes, AddCleanupNodes, AddUpdateNodes
from convection.plan.transform_order import (
    OrderByDependencies,
    OrderCleanupAfterReplacement,
    OrderCleanupAfterRequirers,
    OrderCleanups,
    OrderUpdates,
)
from convection.store import ResourceRecord


def steps(
    definition: StackDefinition | None,
    stored: Stored,
    records: Sequence[ResourceRecord],
    decisions: Decisions,
) -> list[Transform]:
    return [
        # Nodes first: every ordering transform below connects existing
        # nodes only, so they must all be present.
        AddUpdateNodes(decisions.changes, decisions.restores),
        AddCleanupNodes(decisions.changes, decisions.deposed),
        # Updates among themselves: dependencies before dependents.
        OrderUpdates(definition),
        # Cleanups after updates: the replacement exists, and everything
        # that used the old version has moved off it, before it goes.
        OrderCleanupAfterReplacement(),
        OrderCleanupAfterRequirers(definition, stored.current),
        # Cleanups among themselves, last: reverse dependency order, with a
        # cycle check that needs every other edge already in place.
        OrderCleanups(records),
    ]


def build_plan(
    definition: StackDefinition | None,
    stored: Sequence[ResourceRecord],
    schemas: TypeSchemas | None = None,
    *,
    operation: str = "UPDATE",
    rollback: bool = False,
    visit: Collection[str] = (),
) -> Plan:
    """Compare ``stored`` resource versions with ``definition`` and plan the
    operation that converges the one to the other.

    ``definition=None`` converges to an empty template: a stack delete, or
    the rollback of a failed create. With ``schemas`` (resource type ->
    plugin class), changes whose new values are known without running
    anything are refined from "evaluate" to update, replace or noop, as a
    preview shows them. ``rollback`` lets old versions be restored.
    ``visit`` names resources that get an update node even when unchanged
    (Heat visits every resource, and a pre-update hook stops there).
    """
    with collector_paused():  # planning makes no reference cycles: see convection.common.gc
        return _build(definition, stored, schemas, operation, rollback, visit)


def _build(
    definition: StackDefinition | None,
    stored: Sequence[ResourceRecord],
    schemas: TypeSchemas | None,
    operation: str,
    rollback: bool,
    visit: Collection[str],
) -> Plan:
    split = Stored.split(stored)
    hashes = digests(definition) if definition is not None else {}
    decisions = decide_all(
        definition, split, hashes, rollback=rollback, replace_failed=_replace_failed(schemas)
    )
    if schemas is not None and definition is not None:
        decisions = refine(definition, split, decisions, schemas, hashes)
    if visit:
        decisions = _visit(decisions, frozenset(visit))
    g = OpGraph()
    for step in steps(definition, split, stored, decisions):
        step.apply(g)
    g.check_acyclic()
    return Plan(operation, decisions.changes, decisions.deposed, g.nodes, g.edges)


def _replace_failed(schemas: TypeSchemas | None) -> Callable[[str], bool]:
    """The plugin's ``replace_failed`` by type; template resources own a
    nested stack, so they are updated in place like any stack resource."""

    known: dict[str, bool] = {}  # a stack has few types and many resources

    def replace(type_name: str) -> bool:
        found = known.get(type_name)
        if found is None:
            plugin = schemas.get(type_name) if schemas is not None else None
            found = not is_template_name(type_name) if plugin is None else plugin.replace_failed
            known[type_name] = found
        return found

    return replace


def _visit(decisions: Decisions, names: frozenset[str]) -> Decisions:
    """Unchanged resources in ``names`` are evaluated (the job finds them
    unchanged). After every other decision, so nothing else moves."""
    changes = tuple(
        dataclasses.replace(c, action=Action.EVALUATE, reason="pre-update hook")
        if c.action is Action.NOOP and c.name in names
        else c
        for c in decisions.changes
    )
    return dataclasses.replace(decisions, changes=changes)


_ACTIONS: Mapping[NodeKind, tuple[Action, bool]] = {
    NodeKind.CHECK: (Action.CHECK, False),
    NodeKind.SUSPEND: (Action.SUSPEND, True),
    NodeKind.RESUME: (Action.RESUME, False),
}


def build_action_plan(kind: NodeKind, stored: Sequence[ResourceRecord]) -> Plan:
    """A whole-stack check, suspend or resume over the current versions."""
    action, reverse = _ACTIONS[kind]
    rows = tuple(Stored.split(stored).current.values())
    g = OpGraph()
    for step in (AddActionNodes(kind, action, rows), OrderByDependencies(kind, rows, reverse)):
        step.apply(g)
    changes = tuple(_action_change(row, action) for row in rows)
    return Plan(kind.value.upper(), changes, (), g.nodes, g.edges)


def _action_change(row: ResourceRecord, action: Action) -> Change:
    return Change(row.name, action, f"stack {action.word}", row.type, row.id)
