"""Refining "evaluate" where the new values are already known.

A resource is planned as *evaluate* when its definition changed or a
dependency moves. Often its new properties depend only on parameters and on
resources that do not move, so they can be resolved now, against stored
attributes, exactly as Heat's ``preview_update_stack`` does. Heat's rule
then decides: nothing changed (noop, and no node), every changed property is
``update_allowed`` (update in place), or replace. Values that depend on a
moving resource stay *evaluate*: the job decides when they are known.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping
from typing import Protocol

from convection.common import ConvectionError, Status
from convection.hot import resolve
from convection.model import StackDefinition
from convection.plan.decide import NODE_ACTIONS, Decisions, Stored
from convection.plan.model import Action, Change
from convection.plan.resolve import RecordResolver, Unknown
from convection.resources import ResourcePlugin, UpdateAction
from convection.store import ResourceRecord


class TypeSchemas(Protocol):
    """Resource type name -> plugin class (a ``TypeRegistry`` or a dict)."""

    def get(self, type_name: str, /) -> type[ResourcePlugin] | None: ...


_BY_UPDATE = {
    UpdateAction.NONE: Action.NOOP,
    UpdateAction.UPDATE: Action.UPDATE,
    UpdateAction.REPLACE: Action.REPLACE,
    UpdateAction.ERROR: Action.EVALUATE,
}


def decide_update(
    plugin: type[ResourcePlugin], row: ResourceRecord, properties: object, name: str
) -> tuple[Action, str]:
    """Heat's update rule on resolved ``properties`` against the stored ones.

    An invalid value or an immutable change stays EVALUATE with the reason:
    the job fails the resource with it, as Heat fails the update.
    """
    values, diags = plugin.validate(properties, ("resources", name, "properties"), strict=True)
    errors = [d for d in diags if d.is_error]
    if errors:
        return Action.EVALUATE, errors[0].message
    decision = plugin.decide_update(row.properties, values)
    return _BY_UPDATE[decision.action], decision.reason


def refine(
    definition: StackDefinition,
    stored: Stored,
    decisions: Decisions,
    schemas: TypeSchemas,
    hashes: Mapping[str, str],
) -> Decisions:
    """Decisions with every settleable EVALUATE settled, in dependency order
    (``decisions.changes`` lists the definition's resources that way), so a
    dependency settled as noop lets its dependents settle too."""
    moving = {c.name for c in decisions.changes if c.action in NODE_ACTIONS}
    stale = {r.name for r in stored.deposed if r.replaced_by is not None}
    resolver = RecordResolver(definition, stored.current.get, moving)
    out: list[Change] = []
    for c in decisions.changes:
        if c.action is Action.EVALUATE and stored.current[c.name].status != Status.COMPLETE:
            # a nested stack's owner left failed or interrupted (decide.py):
            # its child is converged again whatever its properties say
            c = dataclasses.replace(c, action=Action.UPDATE)
        elif c.action is Action.EVALUATE:
            row = stored.current[c.name]
            if row.definition_hash == hashes.get(c.name):
                c = _settle_by_dependencies(definition, c, moving, stale)
            else:
                c = _settle_by_values(definition, c, row, resolver, schemas)
            if c.action not in NODE_ACTIONS:
                moving.discard(c.name)
        out.append(c)
    return dataclasses.replace(decisions, changes=tuple(out))


def _settle_by_dependencies(
    definition: StackDefinition, c: Change, moving: set[str], stale: set[str]
) -> Change:
    requires = definition.resources[c.name].requires
    if any(d in moving or d in stale for d in requires):
        return c
    return dataclasses.replace(c, action=Action.NOOP, reason="unchanged")


def _settle_by_values(
    definition: StackDefinition,
    c: Change,
    row: ResourceRecord,
    resolver: RecordResolver,
    schemas: TypeSchemas,
) -> Change:
    plugin = schemas.get(c.type)
    if plugin is None:
        return c
    rdef = definition.resources[c.name]
    try:
        properties = resolve(rdef.properties, resolver)
        external = None if rdef.external_id is None else resolve(rdef.external_id, resolver)
    except Unknown as exc:
        return dataclasses.replace(c, reason=f"definition changed; {exc}")
    except ConvectionError as exc:
        return dataclasses.replace(c, reason=str(exc))
    if (None if external is None else str(external)) != row.external_id:
        # Heat's Resource.update refuses this before looking at properties:
        # the job fails it, so it keeps its node.
        return dataclasses.replace(c, reason="external_id changed")
    action, reason = decide_update(plugin, row, properties, c.name)
    if action is Action.NOOP:
        if row.template_type is not None and row.template_type != rdef.type:
            # The same class under another name (an alias): the row must
            # show the type as now written.
            return dataclasses.replace(c, reason="type as written changed")
        if tuple(row.requires) != definition.resources[c.name].requires:
            # Nothing to apply, but the stored dependencies must follow the
            # template, or a later delete would run in the wrong order.
            return dataclasses.replace(c, reason="dependencies changed")
        reason = "definition changed, but no property did"
    return dataclasses.replace(c, action=action, reason=reason)
