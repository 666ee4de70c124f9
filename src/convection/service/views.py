"""Records as Heat's API shows them: the dicts :mod:`convection.service.stacks` returns.

Field names are Heat's (``stack_status``, ``resource_status_reason``,
``output_key``...), so clients and scripts written for Heat read them as
they are. Every secret is redacted here, at the boundary: hidden parameter
values, outputs computed from secrets, and secret attributes.
"""

from __future__ import annotations

import copy
from collections.abc import Iterable, Mapping
from datetime import datetime
from typing import TYPE_CHECKING, Any

from convection.common import Action, Status, state_name
from convection.store import EventRecord, ResourceRecord, StackRecord, TemplateRecord

if TYPE_CHECKING:
    from convection.resources import TypeRegistry

#: Heat's mask for hidden values.
MASK = "******"


def iso(value: datetime | None) -> str | None:
    """Heat's timestamps: ISO 8601, seconds, no offset (UTC)."""
    return None if value is None else value.strftime("%Y-%m-%dT%H:%M:%SZ")


def masked_environment(
    environment: Mapping[str, Any], template: Mapping[str, Any]
) -> dict[str, Any]:
    """A stored environment as Heat's ``GET .../environment`` shows it:
    values of hidden parameters masked in ``parameters`` and
    ``parameter_defaults``."""
    out = copy.deepcopy(dict(environment))
    hidden = hidden_parameters(template)
    for section in ("parameters", "parameter_defaults"):
        values = out.get(section)
        if isinstance(values, dict):
            for name in hidden & values.keys():
                values[name] = MASK
    return out


def hidden_parameters(template: Mapping[str, Any]) -> frozenset[str]:
    params = template.get("parameters") or {}
    return frozenset(
        name for name, spec in params.items() if isinstance(spec, dict) and spec.get("hidden")
    )


def parameter_view(stack: StackRecord, template: TemplateRecord | None) -> dict[str, Any]:
    """Given values over template defaults, pseudo-parameters included,
    hidden values masked."""
    raw = template.template if template is not None else {}
    out: dict[str, Any] = {
        "OS::project_id": stack.project,
        "OS::stack_id": stack.id,
        "OS::stack_name": stack.name,
    }
    for name, spec in (raw.get("parameters") or {}).items():
        if isinstance(spec, dict) and "default" in spec:
            out[name] = spec["default"]
    out.update(stack.parameters)
    for name in hidden_parameters(raw):
        if name in out:
            out[name] = MASK
    return out


def output_view(output: Mapping[str, Any]) -> dict[str, Any]:
    out = {k: v for k, v in output.items() if k != "secret"}
    if output.get("secret") and out.get("output_value") is not None:
        out["output_value"] = MASK
    return out


def template_description(template: TemplateRecord | None) -> str:
    """Heat's template ``description``, "No description" when there is none."""
    raw = template.template if template is not None else {}
    return str(raw.get("description") or "No description")


def stack_summary(
    stack: StackRecord, template: TemplateRecord | None, *, description: str | None = None
) -> dict[str, Any]:
    """A stack as Heat lists it; ``description`` saves reading ``template``."""
    return {
        "id": stack.id,
        "stack_name": stack.name,
        "project": stack.project,
        "description": template_description(template) if description is None else description,
        "stack_status": state_name(stack.action, stack.status),
        "stack_status_reason": stack.status_reason,
        "creation_time": iso(stack.created_at),
        "updated_time": iso(stack.updated_at),
        "deletion_time": iso(stack.deleted_at),
        "tags": list(stack.tags) or None,
        "parent": stack.parent_id,
        # Heat's keystone user who created it, and the project of its stack
        # domain users: neither exists without Keystone.
        "stack_owner": None,
        "stack_user_project_id": None,
    }


def stack_detail(stack: StackRecord, template: TemplateRecord | None) -> dict[str, Any]:
    """Heat's stack show: the summary, plus parameters, outputs (none once
    the stack is DELETE_COMPLETE, as Heat) and the keys Heat always sends
    empty (``capabilities``, ``notification_topics``)."""
    out = stack_summary(stack, template)
    out.update(
        parameters=parameter_view(stack, template),
        disable_rollback=stack.disable_rollback,
        timeout_mins=stack.timeout_mins,
        template_description=out["description"],
        capabilities=[],
        notification_topics=[],
    )
    if (stack.action, stack.status) != (Action.DELETE, Status.COMPLETE):
        out["outputs"] = [output_view(o) for o in stack.outputs]
    return out


def required_by(rows: Iterable[ResourceRecord]) -> dict[str, list[str]]:
    out: dict[str, list[str]] = {}
    for r in rows:
        for dep in r.requires:
            out.setdefault(dep, []).append(r.name)
    return out


def resource_view(
    row: ResourceRecord,
    stack: StackRecord,
    needed_by: list[str],
    registry: TypeRegistry | None = None,
    *,
    detail: bool = False,
    secret: frozenset[str] = frozenset(),
) -> dict[str, Any]:
    """``secret``: attribute names to mask besides the plugin's own (a
    nested-stack owner's attributes that are its child's secret outputs)."""
    out: dict[str, Any] = {
        "resource_name": row.name,
        "logical_resource_id": row.name,
        "physical_resource_id": row.physical_id or "",
        "resource_type": row.type,
        "resource_status": state_name(row.action, row.status),
        "resource_status_reason": row.status_reason,
        "required_by": sorted(needed_by),
        "creation_time": iso(row.created_at),
        # Heat's updated_time is the creation time until the first update.
        "updated_time": iso(row.updated_at or row.created_at),
        "stack_name": stack.name,
        "stack_identity": stack.id,
    }
    if detail:
        out["attributes"] = _attributes(row, registry, secret)
    return out


def _attributes(
    row: ResourceRecord, registry: TypeRegistry | None, extra: frozenset[str]
) -> dict[str, Any]:
    plugin = registry.get(row.type) if registry is not None else None
    secret = (plugin.secret_attributes if plugin is not None else frozenset()) | extra
    return {k: MASK if k in secret and v is not None else v for k, v in row.attributes.items()}


def event_view(event: EventRecord) -> dict[str, Any]:
    return {
        "id": event.uuid,
        "event_time": iso(event.timestamp),
        "resource_name": event.resource_name,
        "logical_resource_id": event.resource_name,
        "physical_resource_id": event.physical_resource_id or "",
        "resource_type": event.resource_type,
        "resource_status": state_name(event.action, event.status),
        "resource_status_reason": event.reason,
    }
