"""Operations, in Python. The CLI calls these in embedded mode and the REST
API will call the same ones; nothing else decides what is legal."""

from __future__ import annotations

from typing import Any

from convection.common import DEFAULT_LIMITS, JSON, Limits
from convection.hot import RESOURCE_REGISTRY, is_template_name, validate_output
from convection.model import Compiled, StackIdentity, StackInputs, compile_stack
from convection.resources import TypeRegistry, default_registry
from convection.service.children import child_inputs, compile_child

#: Heat's template ``description`` when the template gives none (its HOT
#: template's ``__getitem__`` default, for an absent or empty section).
NO_DESCRIPTION = "No description"


def validate_template(
    inputs: StackInputs,
    *,
    registry: TypeRegistry | None = None,
    limits: Limits = DEFAULT_LIMITS,
    show_nested: bool = False,
) -> tuple[dict[str, Any], Compiled]:
    """Heat's template-validate: the body Heat's API returns, and the compiled
    stack (for warnings and graphs). Raises InvalidInput listing every error.

    As in Heat, parameter values need not be given and property values are
    not checked (``strict_validate`` off); names and references are.
    ``show_nested`` adds Heat's ``NestedParameters``: for each resource with
    a child stack, the child's parameters as its owner would pass them
    (``Value``), recursively.
    """
    registry = registry or default_registry()
    catalog = registry.catalog(strict=False)
    compiled = compile_stack(inputs, catalog=catalog, strict=False, limits=limits)
    body = _parameters_body(compiled)
    if show_nested:
        body.update(_nested_parameters(compiled, registry, limits, "dummy", 0))
    body["Environment"] = _environment(compiled)
    return body, compiled


def _parameters_body(compiled: Compiled, *, nested: bool = False) -> dict[str, Any]:
    """Description, Parameters and ParameterGroups (Heat's
    ``validate_template`` and ``Stack.get_nested_parameters`` alike). A
    child's values are its owner's properties, read as Heat's template
    resource reads them (its property types come from these parameters)."""
    template = compiled.template
    env = compiled.environment
    supplied = dict(env.parameters)
    if nested:
        for name, schema in template.parameters.items():
            if name in supplied:
                supplied[name] = _as_property(schema.type, supplied[name])
    body: dict[str, Any] = {"Description": template.description or NO_DESCRIPTION}
    body.update(
        validate_output(
            template.parameters,
            template.parameter_groups,
            supplied=supplied,
            parameter_defaults=env.parameter_defaults,
        )
    )
    return body


def _as_property(param_type: str, value: Any) -> Any:
    """A value as the property Heat's template resource makes of a
    parameter of this type holds it: numbers and booleans written as
    text are read (a group member's ``%index%`` is the number 0, which
    validate then does not show as a ``Value``, as in Heat)."""
    if not isinstance(value, str):
        return value
    if param_type == "number":
        try:
            return int(value)
        except ValueError:
            try:
                return float(value)
            except ValueError:
                return value
    if param_type == "boolean" and value.lower() in ("true", "false"):
        return value.lower() == "true"
    return value


def _nested_parameters(
    compiled: Compiled, registry: TypeRegistry, limits: Limits, stack_name: str, depth: int
) -> dict[str, Any]:
    """Heat's ``Stack.get_nested_parameters``: ``{"NestedParameters": ...}``
    when any resource has a child stack, else nothing. A group shows one
    member (Heat sizes it to one for this)."""
    if depth >= limits.max_nested_stack_depth:
        return {}
    definition = compiled.definition
    found: dict[str, Any] = {}
    for name, rdef in definition.resources.items():
        identity = StackIdentity(f"{stack_name}-{name}", "None", _project(compiled))
        child = child_inputs(definition, name, registry, identity, one_member=True, limits=limits)
        nested = None if child is None else compile_child(child, registry, limits, checked=False)
        if nested is None:
            continue
        entry: dict[str, Any] = {"Type": rdef.type}
        entry.update(_parameters_body(nested, nested=True))
        entry.update(_nested_parameters(nested, registry, limits, identity.name, depth + 1))
        found[name] = entry
    return {"NestedParameters": found} if found else {}


def _project(compiled: Compiled) -> str:
    params = compiled.definition.parameters
    return params.identity[2]


def _environment(compiled: Compiled) -> dict[str, JSON]:
    """Heat's ``user_env_as_dict`` as validate returns it: after the stack
    was built, so a resource whose type is a template file written in the
    template (not mapped by the registry) has the entry Heat's registry
    makes for it on first look-up (``"web.yaml": "web.yaml"``)."""
    env = compiled.environment.user_env_as_dict()
    registry = env.get(RESOURCE_REGISTRY)
    if isinstance(registry, dict):
        for rdef in compiled.definition.resources.values():
            if is_template_name(rdef.type) and rdef.type not in registry:
                registry[rdef.type] = rdef.type
    return env
