"""Preview: a rendering of a plan in the shape of Heat's preview API.

Heat's ``preview_update_stack`` answers ``{"unchanged": [...], "updated":
[...], "replaced": [...], "added": [...], "deleted": [...]}``, each entry a
resource as its API shows one. The plan has already refined "evaluate"
wherever stored attributes settle the new values (build it with
``schemas``); what is still open is listed as updated, with the reason
saying it is decided when the update runs.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from convection.model import StackDefinition
from convection.plan.decide import Stored
from convection.plan.model import Action, Change, Plan
from convection.store import ResourceRecord

PREVIEW_KEYS = ("unchanged", "updated", "replaced", "added", "deleted")

_BUCKET = {
    Action.NOOP: "unchanged",
    Action.UPDATE: "updated",
    Action.EVALUATE: "updated",
    Action.REPLACE: "replaced",
    Action.RESTORE: "replaced",
    Action.CREATE: "added",
    Action.DELETE: "deleted",
}


def preview(
    plan: Plan,
    definition: StackDefinition | None,
    stored: Sequence[ResourceRecord],
    *,
    stack_name: str = "",
    stack_id: str = "",
) -> dict[str, list[dict[str, Any]]]:
    """Every resource of the plan in Heat's preview buckets, with reasons."""
    current = Stored.split(stored).current
    required_by = _required_by(definition)
    out: dict[str, list[dict[str, Any]]] = {k: [] for k in PREVIEW_KEYS}
    for c in plan.changes:
        bucket = _BUCKET.get(c.action)
        if bucket is None:
            continue
        row = current.get(c.name)
        description = None
        if definition is not None and c.name in definition.resources:
            description = definition.resources[c.name].description
        entry = _entry(c, row, required_by.get(c.name, ()), description)
        entry.update(stack_name=stack_name, stack_identity=stack_id)
        out[bucket].append(entry)
    for d in plan.deposed:
        out["deleted"].append(
            {
                "resource_name": d.name,
                "logical_resource_id": d.name,
                "resource_type": d.type,
                "physical_resource_id": "",
                "reason": d.reason,
                "stack_name": stack_name,
                "stack_identity": stack_id,
            }
        )
    return out


def _entry(
    c: Change, row: ResourceRecord | None, required_by: Sequence[str], description: str | None
) -> dict[str, Any]:
    reason = c.reason
    if c.action is Action.EVALUATE:
        reason = f"{reason} (decided when the update runs)"
    return {
        "resource_name": c.name,
        "logical_resource_id": c.name,
        "resource_type": c.type,
        "physical_resource_id": (row.physical_id or "") if row is not None else "",
        "resource_action": str(row.action) if row is not None else "INIT",
        "resource_status": str(row.status) if row is not None else "COMPLETE",
        "resource_status_reason": row.status_reason if row is not None else "",
        "required_by": list(required_by),
        "description": description or "",
        "reason": reason,
    }


def _required_by(definition: StackDefinition | None) -> Mapping[str, tuple[str, ...]]:
    out: dict[str, list[str]] = {}
    if definition is not None:
        for name, r in definition.resources.items():
            for dep in r.requires:
                out.setdefault(dep, []).append(name)
    return {k: tuple(v) for k, v in out.items()}
