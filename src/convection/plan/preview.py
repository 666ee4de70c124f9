"""Preview: a rendering of a plan in the shape of Heat's preview API.

Heat's ``preview_update_stack`` answers ``{"unchanged": [...], "updated":
[...], "replaced": [...], "added": [...], "deleted": [...]}``, each entry a
resource as its API shows one. The plan has already refined "evaluate"
wherever stored attributes settle the new values (build it with
``schemas``); what is still open is listed as updated, with the reason
saying it is decided when the update runs.

A resource that owns a nested stack is always listed as updated, changed or
not: Heat's ``StackResource._needs_update`` (template resources, groups,
``AWS::CloudFormation::Stack``, and ``SoftwareDeploymentGroup``, a
``ResourceGroup`` there) and ``RemoteStack._needs_update``
(``OS::Heat::Stack``) return True whatever changed, so that the nested
stack's own resources decide (heat/engine/resources/stack_resource.py,
heat/engine/update.py ``StackUpdate.preview``).
"""

from __future__ import annotations

import dataclasses
import json
from collections.abc import Mapping, Sequence
from typing import Any

from convection.hot import is_template_name
from convection.model import StackDefinition
from convection.plan.decide import Stored
from convection.plan.model import Action, Change, Plan
from convection.plan.refine import TypeSchemas
from convection.store import ResourceRecord

PREVIEW_KEYS = ("unchanged", "updated", "replaced", "added", "deleted")

#: How Heat shows a hidden parameter's value.
MASK = "******"

#: Types that are a ``StackResource`` in Heat but whose plugin here runs its
#: members itself, with no nested stack (``resources/software/group.py``).
_HEAT_STACK_RESOURCES = frozenset(
    {
        "OS::Heat::SoftwareDeploymentGroup",
        "OS::Heat::StructuredDeploymentGroup",
        "OS::Heat::SoftwareDeployments",
        "OS::Heat::StructuredDeployments",
    }
)
#: Why an owner with nothing changed is listed as updated.
NESTED_REASON = "owns a nested stack: every update updates it, and its resources decide"

_BUCKET = {
    Action.NOOP: "unchanged",
    Action.UPDATE: "updated",
    Action.EVALUATE: "updated",
    Action.REPLACE: "replaced",
    Action.RESTORE: "replaced",
    Action.CREATE: "added",
    Action.DELETE: "deleted",
}


def always_updated(type_name: str, schemas: TypeSchemas) -> bool:
    """Whether Heat's ``_needs_update`` is always true for the type: it owns
    a nested stack (a template resource, or a plugin that says what its
    child stack is), or is one of Heat's stack resources Convection runs
    without one."""
    if is_template_name(type_name):
        return True
    plugin = schemas.get(type_name)
    if plugin is None:
        return False
    names = {type_name, plugin.type_name}
    return callable(getattr(plugin, "child", None)) or not names.isdisjoint(_HEAT_STACK_RESOURCES)


def preview(
    plan: Plan,
    definition: StackDefinition | None,
    stored: Sequence[ResourceRecord],
    *,
    stack_name: str = "",
    stack_id: str = "",
    schemas: TypeSchemas | None = None,
) -> dict[str, list[dict[str, Any]]]:
    """Every resource of the plan in Heat's preview buckets, with reasons.

    With ``schemas`` (type -> plugin class), a nested stack's owner the plan
    leaves unchanged is listed as updated, as Heat lists it (see the
    module's docstring); the plan itself is not changed."""
    current = Stored.split(stored).current
    required_by = _required_by(definition)
    out: dict[str, list[dict[str, Any]]] = {k: [] for k in PREVIEW_KEYS}
    for c in plan.changes:
        bucket = _BUCKET.get(c.action)
        if bucket is None:
            continue
        if c.action is Action.NOOP and schemas is not None and always_updated(c.type, schemas):
            bucket, c = "updated", dataclasses.replace(c, reason=NESTED_REASON)
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


def preview_parameters(definition: StackDefinition) -> dict[str, str]:
    """The ``parameters`` of Heat's stack preview (``format_stack``:
    ``stack.parameters.map(str)``): every parameter with a value, the
    pseudo-parameters (``OS::stack_id``, ``OS::stack_name``,
    ``OS::project_id``) included, each as Heat's parameter text: a hidden
    one masked, a list joined with commas, JSON as JSON, a boolean as
    Python writes it (``True``)."""
    values = definition.parameters
    schemas = definition.template.parameters
    out: dict[str, str] = {}
    for name in values.names():
        if values.is_hidden(name):
            out[name] = MASK
            continue
        schema = schemas.get(name)
        out[name] = _parameter_text(
            schema.type if schema is not None else "string", values.value(name)
        )
    return out


def _parameter_text(param_type: str, value: Any) -> str:
    if param_type == "comma_delimited_list" and isinstance(value, list):
        return ",".join(str(v) for v in value)
    if param_type == "json":
        return json.dumps(value)
    return str(value)


def stored_entries(
    stored: Sequence[ResourceRecord], reason: str, *, stack_name: str = "", stack_id: str = ""
) -> list[dict[str, Any]]:
    """The current resources of a stored stack as preview entries, each
    with ``reason``: a nested stack whose owner is deleted or replaced
    goes with it, and one whose owner is unchanged is left as it is."""
    current = Stored.split(stored).current
    required_by: dict[str, list[str]] = {}
    for row in current.values():
        for dep in row.requires:
            required_by.setdefault(dep, []).append(row.name)
    return [
        {
            "resource_name": row.name,
            "logical_resource_id": row.name,
            "resource_type": row.type,
            "physical_resource_id": row.physical_id or "",
            "resource_action": str(row.action),
            "resource_status": str(row.status),
            "resource_status_reason": row.status_reason,
            "required_by": sorted(required_by.get(row.name, ())),
            "description": "",
            "reason": reason,
            "stack_name": stack_name,
            "stack_identity": stack_id,
        }
        for row in sorted(current.values(), key=lambda r: r.name)
    ]
