"""A resource's property values as a create can know them: Heat's
``Properties.validate(with_value=True)``.

Stack create, update and preview validate every resource with values before
accepting the request (``_parse_template_and_validate_stack`` in
heat/engine/service.py runs ``Stack.validate``, whose resources call
``Properties.validate(with_value=self.stack.strict_validate)``): each
property is resolved, so a function's value error (``str_split`` of a
number, a ``get_file`` key missing from ``files``) or a resolved value that
does not fit the schema refuses the request. Template validate
(``strict_validate`` off) resolves nothing, so neither does a non-strict
compile.

Here a call whose inputs are static (parameters, files, other static calls)
is replaced by its value, and a call that needs a resource is left as it
is: no resource exists before the create, so Heat resolves it to ``None``
or the resource's name, and skips the schema check of a property that
depends on one (``_find_deps_any_in_init`` in heat/engine/properties.py).
Such a property is checked as the template wrote it, as before; its static
calls are still evaluated, and their errors reported, as Heat's resolving
of the whole value does.

The result is only for checking: the definition keeps the calls, and the
engine resolves them again when the resource runs.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, NoReturn

from convection.common import ConvectionError, Diagnostic, ExpressionError, Limits
from convection.hot import MASK, Function, ParameterValues, resolve

#: What may hold a call; any other value is a leaf, left as it is.
_TREES = (dict, list, Function)
#: ``get_attr`` needs a resource, and resolves its path only once the
#: attribute has a value (``GetAttThenSelect.result``), which it never has
#: before the create: only its resource and attribute names are resolved.
_ATTRIBUTES = frozenset({"get_attr", "Fn::GetAtt"})


class _Unknown(Exception):
    """A value that exists only once a resource does."""


class _StaticResolver:
    """Parameters and files, known at create; resources, not yet. Notes
    whether a hidden parameter was read, so messages can mask it."""

    __slots__ = ("_files", "_parameters", "limits", "read", "secret")

    def __init__(self, parameters: ParameterValues, files: Mapping[str, str], limits: Limits):
        self._parameters = parameters
        self._files = files
        #: The stack's limits: functions read them (``limits_of``).
        self.limits = limits
        self.read = False
        self.secret = False

    def parameter(self, name: str) -> Any:
        try:
            value = self._parameters.value(name)
        except KeyError:  # no value: reported where the parameter is
            raise _Unknown(name) from None
        self.read = True
        self.secret = self.secret or self._parameters.is_hidden(name)
        return value

    def resource_id(self, name: str) -> NoReturn:
        raise _Unknown(name)

    def attribute(self, resource: str, name: str | None) -> NoReturn:
        raise _Unknown(resource)

    def file(self, name: str) -> str | None:
        return self._files.get(name)

    def facade(self, section: str) -> NoReturn:
        raise _Unknown(section)


class PropertyValues:
    """Evaluates the static calls of a stack's resources' properties, and
    remembers which resources read a parameter doing so: a definition shared
    by group members with other values is checked again for those."""

    __slots__ = ("_resolver", "read")

    def __init__(
        self, parameters: ParameterValues, files: Mapping[str, str], limits: Limits
    ) -> None:
        self._resolver = _StaticResolver(parameters, files, limits)
        #: Resources whose evaluation read a parameter.
        self.read: set[str] = set()

    def evaluate(self, name: str, properties: Any, errors: list[Diagnostic]) -> tuple[Any, bool]:
        """``properties`` to check with the type's schema, and whether a
        hidden parameter's value may be in them (messages must mask it).

        Each top-level property that depends on no resource is its value;
        the others are as written. Static calls' errors go to ``errors``,
        located at the call.
        """
        resolver = self._resolver
        resolver.read = resolver.secret = False
        checked: Any
        if isinstance(properties, dict):
            checked = _top_level(properties, resolver, errors)
        elif isinstance(properties, Function):
            value, unknown = _partial(properties, resolver, errors)
            checked = properties if unknown else value
        else:
            checked = properties
        if resolver.read:
            self.read.add(name)
        return checked, resolver.secret


def _top_level(
    properties: dict[str, Any], resolver: _StaticResolver, errors: list[Diagnostic]
) -> dict[str, Any]:
    """The properties with each one that needs no resource resolved; the
    same object when nothing was (most resources: no copy)."""
    out: dict[str, Any] | None = None
    for key, raw in properties.items():
        if not isinstance(raw, _TREES):
            continue
        value, unknown = _partial(raw, resolver, errors)
        if unknown or value is raw:
            continue
        if out is None:
            out = dict(properties)
        out[key] = value
    return properties if out is None else out


def _partial(node: Any, resolver: _StaticResolver, errors: list[Diagnostic]) -> tuple[Any, bool]:
    """``node`` with its static calls replaced by their values, and whether
    a call needing a resource (or a failed one) was left in it."""
    if isinstance(node, Function):
        return _call(node, resolver, errors)
    unknown = False
    if isinstance(node, dict):
        out: dict[str, Any] | None = None
        for key, item in node.items():
            if not isinstance(item, _TREES):
                continue
            value, inner = _partial(item, resolver, errors)
            unknown = unknown or inner
            if value is not item:
                out = dict(node) if out is None else out
                out[key] = value
        return (node if out is None else out), unknown
    if isinstance(node, list):
        items: list[Any] | None = None
        for i, item in enumerate(node):
            if not isinstance(item, _TREES):
                continue
            value, inner = _partial(item, resolver, errors)
            unknown = unknown or inner
            if value is not item:
                items = list(node) if items is None else items
                items[i] = value
        return (node if items is None else items), unknown
    return node, False


def _call(fn: Function, resolver: _StaticResolver, errors: list[Diagnostic]) -> tuple[Any, bool]:
    """A call's value; or the call itself, when it needs a resource (its
    static arguments are still evaluated, for their errors) or failed."""
    if fn.name in _ATTRIBUTES:  # always a resource's; its names are resolved first
        _partial(fn.args[:2] if isinstance(fn.args, list) else fn.args, resolver, errors)
        return fn, True
    try:
        return resolve(fn, resolver), False
    except _Unknown:
        _partial(fn.args, resolver, errors)
    except ExpressionError as exc:
        errors.append(Diagnostic(exc.message, exc.path or fn.path))
    except ConvectionError as exc:  # a limit, say: the call's own problem
        errors.append(Diagnostic(str(exc), fn.path))
    return fn, True


def masked(diagnostic: Diagnostic, secrets: tuple[str, ...]) -> Diagnostic:
    """``diagnostic`` with every hidden parameter's text shown as Heat
    shows a hidden value, ``******``."""
    message = diagnostic.message
    for text in secrets:
        message = message.replace(text, MASK)
    if message == diagnostic.message:
        return diagnostic
    return Diagnostic(
        message, diagnostic.path, diagnostic.mark, diagnostic.severity, diagnostic.upstream
    )
