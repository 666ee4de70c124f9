"""Stack outputs, computed once when an operation completes and stored.

Heat used to resolve outputs on every ``stack show``, which took minutes on
large stacks; here they are resolved from stored attributes at the end of
an operation. A value that fails to resolve keeps Heat's behaviour: the
output carries ``output_error`` and the stack is still COMPLETE.

Values that come from a hidden parameter or a plugin-declared secret
(attribute or reference id) are stored as they are and marked ``secret``,
so every view can redact them.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from convection.common import ConvectionError
from convection.hot import Function, resolve, to_data
from convection.model import StackDefinition
from convection.plan import Lookup, RecordResolver
from convection.resources import TypeRegistry

NO_DESCRIPTION = "No description given"


#: Whether attribute ``name`` (None: all) of a nested-stack owner comes
#: from a secret output of its child stack.
ChildSecret = Callable[[Any, "str | None"], bool]


def _never(_row: Any, _name: str | None) -> bool:
    return False


def compute_outputs(
    definition: StackDefinition,
    lookup: Lookup,
    registry: TypeRegistry,
    child_secret: ChildSecret = _never,
    resolver: RecordResolver | None = None,
) -> list[dict[str, Any]]:
    """``resolver``: the run's own, so a nested stack's ``resource_facade``
    reads its owner (Heat resolves it in outputs too)."""
    resolver = resolver or RecordResolver(definition, lookup)
    out: list[dict[str, Any]] = []
    for name, o in definition.outputs.items():
        entry: dict[str, Any] = {"output_key": name, "description": _description(o.description)}
        try:
            entry["output_value"] = resolve(o.value, resolver)
        except (ConvectionError, KeyError, TypeError, ValueError) as exc:
            entry["output_value"] = None
            entry["output_error"] = str(exc)
        if _is_secret(o.value, definition, lookup, (registry, child_secret)):
            entry["secret"] = True
        out.append(entry)
    return out


def _description(value: Any) -> Any:
    data = to_data(value)
    return NO_DESCRIPTION if data is None else data


def _is_secret(
    tree: Any, definition: StackDefinition, lookup: Lookup, reg: tuple[TypeRegistry, ChildSecret]
) -> bool:
    """Does the value read a hidden parameter or a secret of a resource?"""
    if isinstance(tree, Function):
        args = tree.args
        head = args[0] if isinstance(args, list) and args else args
        if tree.name == "get_param" and isinstance(head, str):
            if definition.parameters.is_hidden(head):
                return True
        elif (
            tree.name in ("get_attr", "get_resource")
            and isinstance(head, str)
            and _secret_of(tree.name, args, lookup(head), reg)
        ):
            return True
        return _is_secret(args, definition, lookup, reg)
    if isinstance(tree, dict):
        return any(_is_secret(v, definition, lookup, reg) for v in tree.values())
    if isinstance(tree, list):
        return any(_is_secret(v, definition, lookup, reg) for v in tree)
    return False


def _secret_of(fn: str, args: Any, row: Any, reg: tuple[TypeRegistry, ChildSecret]) -> bool:
    registry, child_secret = reg
    plugin = None if row is None else registry.get(row.type)
    attribute = args[1] if isinstance(args, list) and len(args) > 1 else None
    # A template resource's (or a nested stack's) attribute is the child's
    # output: secret when that output is.
    dynamic = plugin is None or attribute not in plugin.attributes_schema
    if (
        row is not None
        and fn == "get_attr"
        and (dynamic or attribute == "outputs")
        and child_secret(row, None if attribute == "outputs" else attribute)
    ):
        return True
    if plugin is None:
        return False
    if fn == "get_resource":
        return plugin.secret_reference_id
    if attribute is None:
        return bool(plugin.secret_attributes)
    return attribute in plugin.secret_attributes
