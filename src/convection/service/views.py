"""Records as Heat's API shows them: the dicts :mod:`convection.service.stacks` returns.

Field names are Heat's (``stack_status``, ``resource_status_reason``,
``output_key``...), so clients and scripts written for Heat read them as
they are. What Heat masks is masked here, at the boundary: the values of
hidden parameters (in ``parameters`` and the stored environment) and the
attributes a plugin declares secret. Outputs are shown as they resolved,
as Heat's ``format_stack_output`` does: a template author who writes an
output of a hidden parameter, or of a generated password, asked to see it.
"""

from __future__ import annotations

import copy
import json
from collections.abc import Iterable, Mapping
from datetime import datetime
from typing import TYPE_CHECKING, Any

from convection.common import Action, ConvectionError, Status, state_name
from convection.store import EventRecord, ResourceRecord, StackRecord, TemplateRecord

if TYPE_CHECKING:
    from convection.resources import TypeRegistry

#: Heat's mask for hidden values.
MASK = "******"


def iso(value: datetime | None) -> str | None:
    """Heat's timestamps: ISO 8601, seconds, no offset (UTC)."""
    return None if value is None else value.strftime("%Y-%m-%dT%H:%M:%SZ")


def masked_environment(
    environment: Mapping[str, Any],
    template: Mapping[str, Any],
    files: Mapping[str, str] | None = None,
) -> dict[str, Any]:
    """A stored environment as Heat's ``GET .../environment`` shows it:
    values of hidden parameters masked in ``parameters`` and
    ``parameter_defaults``. As Heat's ``all_param_schemata``, a name is
    judged by the stack's template, else by the templates among ``files``
    (nested ones: ``parameter_defaults`` reach them too)."""
    from convection.hot import parameter_specs  # only once there is a template to read

    out = copy.deepcopy(dict(environment))
    schemas = _file_parameter_schemas(files or {})
    schemas.update(parameter_specs(template))
    hidden = {n for n, spec in schemas.items() if spec["hidden"]}
    for section in ("parameters", "parameter_defaults"):
        values = out.get(section)
        if isinstance(values, dict):
            for name in hidden & values.keys():
                values[name] = MASK
    return out


#: Text that may be a template of either format: others are not parsed.
_TEMPLATE_MARKS = ("heat_template_version", "AWSTemplateFormatVersion", "HeatTemplateFormatVersion")


def _file_parameter_schemas(files: Mapping[str, str]) -> dict[str, dict[str, Any]]:
    """The parameters of the templates among ``files`` (HOT or
    CloudFormation), later files over earlier ones; other files (scripts,
    data) are skipped."""
    found: dict[str, dict[str, Any]] = {}
    for name, text in files.items():
        if not isinstance(text, str) or not any(m in text for m in _TEMPLATE_MARKS):
            continue
        from convection.hot import load, parameter_specs  # only once there is a template

        try:
            data = load(text, name).data
        except ConvectionError:
            continue
        if isinstance(data, Mapping) and any(m in data for m in _TEMPLATE_MARKS):
            found.update(parameter_specs(data))
    return found


def hidden_parameters(template: Mapping[str, Any]) -> frozenset[str]:
    from convection.hot import parameter_specs

    return frozenset(name for name, spec in parameter_specs(template).items() if spec["hidden"])


def parameter_view(stack: StackRecord, template: TemplateRecord | None) -> dict[str, str]:
    """Heat's stack show ``parameters`` (``Parameters.map(str)``): the
    pseudo-parameters, then every template parameter with a value, each as
    text, hidden ones as ``******``. A value is the one given, else the
    environment's ``parameter_defaults`` one, else the template default
    (``None`` at any level counts as not given, as in Heat)."""
    from convection.hot import is_cfn, parameter_specs, pseudo_parameters

    raw = template.template if template is not None else {}
    env = template.environment if template is not None else {}
    defaults = env.get("parameter_defaults") if isinstance(env, Mapping) else None
    defaults = defaults if isinstance(defaults, Mapping) else {}
    pseudo = pseudo_parameters(
        stack_name=stack.name, stack_id=stack.id, project_id=stack.project, cfn=is_cfn(raw)
    )
    out: dict[str, str] = dict(sorted(pseudo.items(), key=lambda kv: _PSEUDO_ORDER.get(kv[0], 9)))
    for name, spec in parameter_specs(raw).items():
        value = stack.parameters.get(name)
        for fallback in (defaults.get(name), spec["default"]):
            if value is None:
                value = fallback
        if value is not None:
            out[name] = MASK if spec["hidden"] else parameter_text(spec["type"], value)
    return out


#: The order stack show lists HOT's pseudo-parameters in, as Heat's.
_PSEUDO_ORDER = {"OS::stack_id": 0, "OS::project_id": 1, "OS::stack_name": 2}


def parameter_text(ptype: Any, value: Any) -> str:
    """A parameter's value as Heat's ``str(Parameter)`` writes it: read in
    its type first (a number ``"10"`` is ``10``, a boolean ``"yes"`` is
    ``True``), then lists joined with commas and JSON dumped."""
    from convection.hot import bool_from_string, str_to_num  # only where shown

    try:
        if ptype == "number":
            return str(str_to_num(value))
        if ptype == "boolean":
            return str(bool_from_string(str(value)))
        if ptype == "comma_delimited_list" and isinstance(value, list):
            return ",".join(str(x) for x in value)
        if ptype == "json":
            return json.dumps(json.loads(value) if isinstance(value, str) and value else value)
    except (TypeError, ValueError):
        # Values are checked against their type when a stack is created or
        # updated; one that does not read as its type was stored before
        # that check, and is shown as it was given.
        return str(value)
    return str(value)


def output_view(output: Mapping[str, Any]) -> dict[str, Any]:
    """An output as Heat shows it: the value as resolved, never masked.
    (Rows stored before this rule may carry a ``secret`` flag: dropped.)"""
    return {k: v for k, v in output.items() if k != "secret"}


def template_description(template: TemplateRecord | None) -> str:
    """Heat's template ``description``, "No description" when there is none."""
    from convection.hot import template_description as written

    raw = template.template if template is not None else {}
    return str(written(raw) or "No description")


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
) -> dict[str, Any]:
    """Heat's ``format_stack_resource``; with ``detail``, its attributes."""
    out: dict[str, Any] = {
        "resource_name": row.name,
        "logical_resource_id": row.name,
        "physical_resource_id": row.physical_id or "",
        # Heat shows the type as written (an alias, a template's name).
        "resource_type": row.shown_type,
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
        out["attributes"] = _attributes(row, registry)
    return out


def _attributes(row: ResourceRecord, registry: TypeRegistry | None) -> dict[str, Any]:
    """The stored attributes, as Heat's ``format_resource_attributes``
    shows them (no attribute of Heat's own types is masked: RandomString's
    ``value`` is shown), but for those a plugin declares secret."""
    plugin = registry.get(row.type) if registry is not None else None
    secret = plugin.secret_attributes if plugin is not None else frozenset()
    return {k: MASK if k in secret and v is not None else v for k, v in row.attributes.items()}


def secret_values(
    stack: StackRecord,
    template: TemplateRecord | None,
    rows: Iterable[ResourceRecord],
    registry: TypeRegistry | None,
) -> frozenset[str]:
    """Every value a view must never show of this stack: its hidden
    parameters' values (given, or from ``parameter_defaults`` or the
    template's default) and the secret attributes its plugins reported."""
    from convection.hot import parameter_specs

    raw = template.template if template is not None else {}
    env = template.environment if template is not None else {}
    defaults = env.get("parameter_defaults") if isinstance(env, Mapping) else None
    defaults = defaults if isinstance(defaults, Mapping) else {}
    found: set[str] = set()
    for name, spec in parameter_specs(raw).items():
        if spec["hidden"]:
            for value in (stack.parameters.get(name), defaults.get(name), spec["default"]):
                if value not in (None, ""):
                    found.add(str(value))
    for row in rows:
        plugin = registry.get(row.type) if registry is not None else None
        for key in plugin.secret_attributes if plugin is not None else ():
            value = row.attributes.get(key)
            if value not in (None, ""):
                found.add(str(value))
    return frozenset(found)


#: A secret shorter than this is masked only where it is a whole value:
#: masking every "1" in a document would hide everything and protect nothing.
_SUBSTRING_SECRET = 6


def redacted(value: Any, secrets: frozenset[str]) -> Any:
    """``value`` with every secret in it masked: a whole string that is
    one, and a longer secret anywhere inside a string (a password spliced
    into a script by ``str_replace``)."""
    if isinstance(value, Mapping):
        return {k: redacted(v, secrets) for k, v in value.items()}
    if isinstance(value, list):
        return [redacted(v, secrets) for v in value]
    if not isinstance(value, str) or not secrets:
        return value
    if value in secrets:
        return MASK
    for secret in secrets:
        if len(secret) >= _SUBSTRING_SECRET and secret in value:
            value = value.replace(secret, MASK)
    return value


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
