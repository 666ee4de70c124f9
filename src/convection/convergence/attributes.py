"""Which attributes of each resource a stack reads, so the engine stores them.

A plugin's ``attributes_schema`` lists the attributes a type always has,
but a template resource's attributes are its nested outputs and a group's
include ``resource.0.name``: names no class declares. When an action
completes, the engine stores the schema's attributes plus every name the
definition reads with ``get_attr`` on that resource (in any resource's
properties or metadata, or in an output). One pass over the definition,
done once per traversal: O(references), never per resource.

A name computed at run time (``get_attr: [group, {get_param: which}]``)
cannot be known here; such templates read what was stored.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

from convection.hot import Function
from convection.model import StackDefinition

GET_ATTR = frozenset({"get_attr", "Fn::GetAtt"})


def referenced_attributes(definition: StackDefinition) -> dict[str, frozenset[str]]:
    """resource name -> the attribute names the definition reads of it."""
    found: dict[str, set[str]] = {}
    trees: list[Any] = [o.value for o in definition.outputs.values()]
    for rdef in definition.resources.values():
        trees.append(rdef.properties)
        trees.append(rdef.metadata)
    for tree in trees:
        for resource, attribute in _reads(tree):
            found.setdefault(resource, set()).add(attribute)
    return {name: frozenset(names) for name, names in found.items()}


def _reads(tree: Any) -> Iterator[tuple[str, str]]:
    stack = [tree]
    while stack:
        node = stack.pop()
        if isinstance(node, Function):
            pair = _get_attr(node)
            if pair is not None:
                yield pair
                yield from _member_attribute(node.args)
            stack.append(node.args)
        elif isinstance(node, dict):
            stack.extend(node.values())
        elif isinstance(node, list | tuple):
            stack.extend(node)


def _get_attr(fn: Function) -> tuple[str, str] | None:
    if fn.name not in GET_ATTR:
        return None
    args = fn.args
    if not isinstance(args, list) or len(args) < 2:
        return None
    resource, attribute = args[0], args[1]
    if isinstance(resource, str) and isinstance(attribute, str):
        return resource, attribute
    return None


def _member_attribute(args: list[Any]) -> Iterator[tuple[str, str]]:
    """``[group, resource.N, attr, ...]`` reads member N's ``attr``: Heat
    applies the path to the member, so the group stores it as
    ``resource.N.attr`` too (``groups.attributes.path_value``)."""
    attribute, path = args[1], args[2:]
    member = attribute.startswith("resource.") and attribute.count(".") == 1
    if member and path and isinstance(path[0], str):
        yield args[0], f"{attribute}.{path[0]}"
