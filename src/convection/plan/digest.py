"""A stable digest of a resource's definition, stored on its row.

Comparing digests is how a plan finds, in O(1) per resource, the resources
whose definition did not change: they get no node at all.

The digest hashes the *unresolved* definition (function calls stay calls),
with one refinement: a part of the tree that references no resource is
evaluated first. Otherwise a changed parameter value or ``get_file``
content would leave ``{get_param: size}`` looking the same, and the
resource would silently keep its old value. Parts that reference resources
stay unresolved: the engine resolves those against stored attributes when
the resource is evaluated.
"""

from __future__ import annotations

import hashlib
import json
from typing import Any, NoReturn

from convection.common import ConvectionError
from convection.hot import Function, resolve, to_data
from convection.model import ResourceDefinition, StackDefinition


class _NeedsResource(Exception):
    """Raised by the static resolver when a value depends on a resource."""


class StaticInputs:
    """Resolves what is known before any resource exists: parameters and
    files. Anything about a resource raises, so the caller keeps it
    unresolved."""

    __slots__ = ("_definition",)

    def __init__(self, definition: StackDefinition) -> None:
        self._definition = definition

    def parameter(self, name: str) -> Any:
        return self._definition.parameters.value(name)

    def resource_id(self, name: str) -> NoReturn:
        raise _NeedsResource(name)

    def attribute(self, resource: str, name: str | None) -> NoReturn:
        raise _NeedsResource(resource)

    def file(self, name: str) -> str | None:
        return self._definition.template.files.get(name)

    def facade(self, section: str) -> NoReturn:
        raise _NeedsResource(section)


def _form(tree: Any, inputs: StaticInputs | None) -> Any:
    """The hashable form of ``tree``: resource-free calls as their values."""
    if isinstance(tree, Function):
        if inputs is not None and next(tree.dependencies(), None) is None:
            try:
                return {"=": resolve(tree, inputs)}
            except (_NeedsResource, ConvectionError, KeyError, TypeError, ValueError):
                pass
        return {tree.name: _form(tree.args, inputs)}
    if isinstance(tree, dict):
        return {k: _form(v, inputs) for k, v in tree.items()}
    if isinstance(tree, list):
        return [_form(v, inputs) for v in tree]
    return tree


def digest(resource: ResourceDefinition, inputs: StaticInputs | None = None) -> str:
    """A hex digest that changes whenever the resource's definition, or a
    parameter or file it reads, changes. Without ``inputs`` calls are hashed
    as written (still stable, but blind to parameter values)."""
    body = [
        resource.type,
        resource.resolved_type,
        _form(resource.properties, inputs),
        _form(resource.metadata, inputs),
        list(resource.depends_on),
        resource.deletion_policy,
        to_data(resource.update_policy),
        _form(resource.external_id, inputs),
        resource.description,
    ]
    text = json.dumps(body, sort_keys=True, separators=(",", ":"), default=repr)
    return hashlib.blake2b(text.encode("utf-8"), digest_size=16).hexdigest()


#: The last few definitions' digests: the plan computes them and the engine
#: stores them, so a 10,000-resource create hashes each resource once.
_RECENT: list[tuple[StackDefinition, dict[str, str]]] = []


def digests(definition: StackDefinition) -> dict[str, str]:
    """Every resource's digest, with the definition's parameters and files.

    A definition compiled from its stack's previous one shares the resource
    definitions that did not change (see ``convection.model._recompile``); with
    the same parameter values and files, their digests are the ones already
    computed, so only the changed resources are hashed again."""
    for known, found in _RECENT:
        if known is definition:
            return found
    inputs = StaticInputs(definition)
    earlier = _sharing_inputs(definition)
    found = {}
    for name, r in definition.resources.items():
        if earlier is not None and earlier[0].resources.get(name) is r:
            found[name] = earlier[1][name]
        else:
            found[name] = digest(r, inputs)
    _RECENT.insert(0, (definition, found))
    del _RECENT[4:]
    return found


def _sharing_inputs(
    definition: StackDefinition,
) -> tuple[StackDefinition, dict[str, str]] | None:
    """A recent definition whose static inputs are this one's: the same
    parameter values object and equal files."""
    for known, found in _RECENT:
        if (
            known.parameters is definition.parameters
            and known.template.files == definition.template.files
        ):
            return known, found
    return None
