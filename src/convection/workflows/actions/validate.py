"""Checking an action's input before it runs.

Names first, as Mistral does (``validate_input`` of
``mistral/engine/utils.py`` and ``ActionDescriptorBase.check_parameters`` of
``mistral/actions/base.py``): the parameters that have no default and were
not given, and the given names the action does not take, in one message::

    Invalid input [name=std.echo, class=..., missing=['output'], unexpected=['x']]

Then types, which Mistral does not check (its actions fail later, inside
``run``): each value must be one of its parameter's JSON types. A value
that is still an expression (``<% ... %>``, ``{{ ... }}``) is not checked:
its type is known only when it is evaluated. No message holds a value, so
a secret cannot leak through one.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from convection.common import Diagnostics, Path
from convection.workflows.actions.base import ActionPlugin, InputParam
from convection.workflows.lang import is_expression


def validate_input(
    action: type[ActionPlugin] | ActionPlugin, params: Mapping[str, Any], path: Path = ()
) -> Diagnostics:
    """Every problem of ``params`` as input of ``action``, located under
    ``path`` (the task's ``input``, e.g. ``workflows.w.tasks.t.input``)."""
    diags = Diagnostics()
    schema = action.input_schema
    missing = [name for name, p in schema.items() if p.required and name not in params]
    unexpected = [name for name in params if name not in schema]
    if missing or unexpected:
        diags.error(_names_message(action, missing, unexpected), path)
    for name, value in params.items():
        param = schema.get(name)
        if param is not None and not _accepts(param, value):
            diags.error(_type_message(action, name, param, value), (*path, name))
    return diags


def _names_message(
    action: type[ActionPlugin] | ActionPlugin, missing: list[str], unexpected: list[str]
) -> str:
    message = f"Invalid input [name={action.name}, class={action.class_name()}"
    if missing:
        message += f", missing={missing}"
    if unexpected:
        message += f", unexpected={unexpected}"
    return message + "]"


def _type_message(
    action: type[ActionPlugin] | ActionPlugin, name: str, param: InputParam, value: Any
) -> str:
    expected = " or ".join(param.types)
    return (
        f"Invalid input [name={action.name}, class={action.class_name()}]: "
        f"'{name}' must be {expected}, not {json_type(value)}"
    )


def _accepts(param: InputParam, value: Any) -> bool:
    if isinstance(value, str) and is_expression(value):
        return True
    types = param.types
    if "any" in types or json_type(value) in types:
        return True
    return "number" in types and json_type(value) == "integer"


def json_type(value: Any) -> str:
    """The JSON name of a Python value's type."""
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "boolean"
    if isinstance(value, int):
        return "integer"
    if isinstance(value, float):
        return "number"
    if isinstance(value, str):
        return "string"
    if isinstance(value, list | tuple):
        return "array"
    if isinstance(value, Mapping):
        return "object"
    return type(value).__name__
