"""References: ``get_param``, ``get_resource``, ``get_attr``, ``get_file`` and
``resource_facade``.

These are the functions that tie a template together, so they are the ones
whose mistakes are caught statically: a parameter, resource or attribute
that does not exist is reported by ``validate`` with Heat's wording.
Everything Heat only notices while resolving (a path that leads nowhere, an
argument of the wrong type produced by another function, a ``get_file`` key
missing from ``files``) is left to ``result``, where Heat reports it too.

The resolver is asked only for whole values (a parameter, an attribute);
walking a path into them happens here, because Heat's rules for paths differ
between parameters and attributes and belong to the language, not to the
resolver.
"""

from __future__ import annotations

import abc
from collections.abc import Callable, Iterator, Mapping
from typing import Any, ClassVar, NoReturn, TypeGuard

from convection.common import Diagnostics, ExpressionError, Path, format_path
from convection.hot.functions.base import (
    ArgumentError,
    Function,
    Resolver,
    Scope,
    Shaped,
    resolve,
)

#: Heat's names for the resource sections a bad reference can sit in.
_SECTION_NAMES = {"properties": "Properties", "metadata": "Metadata"}
#: Every Heat resource has this attribute (the whole resource as the API shows it).
SHOW_ATTRIBUTE = "show"


def heat_location(path: Path) -> str:
    """Where a reference sits, spelled as Heat spells it in its messages
    (``web.Properties.networks[0].port``), so users recognise the error."""
    if len(path) >= 3 and path[0] == "resources":
        section = _SECTION_NAMES.get(str(path[2]), str(path[2]))
        return format_path((str(path[1]), section, *path[3:]))
    return format_path(path) or "unknown"  # Heat's word when it has no place


def reference_error(name: Any, path: Path) -> str:
    return f'The specified reference "{name}" (in {heat_location(path)}) is incorrect.'


def walk_parameter(value: Any, path: list[Any]) -> Any:
    """Heat's ``get_param`` path: a string key indexes a list when it reads
    as an integer, and any step that fails makes the whole result ``''``."""
    for key in path:
        if not isinstance(value, dict | list | str) or not isinstance(key, str | int):
            return ""
        if isinstance(value, list | str) and isinstance(key, str):
            try:
                key = int(key)
            except ValueError:
                return ""
        try:
            value = value[key]
        except (KeyError, IndexError, TypeError):
            return ""
    return value


class PathValue(abc.ABC):
    """A stored attribute that applies a ``get_attr`` path itself, as Heat's
    groups do (``[group, attr, key]`` is every member's ``attr[key]``, not
    the list's item): a resolver may hand one out, and the path is given
    to :meth:`select`, which returns plain data."""

    __slots__ = ()

    @abc.abstractmethod
    def select(self, path: list[Any]) -> Any:
        """The value at ``path`` below this attribute (``[]``: all of it)."""


def select_from_attribute(value: Any, path: list[Any]) -> Any:
    """Heat's attribute path: unlike parameters, keys are used as given, and
    a step that fails makes the whole result ``None``."""
    if isinstance(value, PathValue):
        return value.select(path)
    for key in path:
        if not isinstance(value, dict | list | str) or not isinstance(key, str | int):
            return None
        container: Any = value
        try:
            value = container[key]
        except (KeyError, IndexError, TypeError):
            return None
    return value


class GetParam(Function):
    """``get_param: name`` or ``get_param: [name, path...]``.

    Shape errors surface only when resolving, as in Heat, because the
    arguments may come from other functions; the one static check is the
    parameter's existence.
    """

    __slots__ = ()
    summary = "A function for resolving parameter references."

    def _static_name(self) -> str | None:
        head = self.args[0] if isinstance(self.args, list) and self.args else self.args
        return head if isinstance(head, str) else None

    def validate(self, scope: Scope, diags: Diagnostics) -> None:
        super().validate(scope, diags)
        name = self._static_name()
        if name is not None and not scope.has_parameter(name):
            diags.error(f"The Parameter ({name}) was not provided.", self.path)

    def result(self, resolver: Resolver) -> Any:
        args = resolve(self.args, resolver)
        if not args:
            raise self.error(f'Function "{self.name}" must have arguments')
        if isinstance(args, str):
            name, path = args, []
        elif isinstance(args, list):
            name, path = args[0], args[1:]
        else:
            raise self.error(f'Argument to "{self.name}" must be string or list')
        if not isinstance(name, str):
            raise self.error(f'Parameter name in "{self.name}" must be string')
        try:
            value = resolver.parameter(name)
        except KeyError:
            raise self.error(f"The Parameter ({name}) was not provided.") from None
        return walk_parameter(value, path)


class GetResource(Function):
    """``get_resource: name``: the reference id, and an ordering dependency."""

    __slots__ = ()
    summary = "A function for resolving resource references."

    def validate(self, scope: Scope, diags: Diagnostics) -> None:
        super().validate(scope, diags)
        name = self.args
        if isinstance(name, Function):
            return
        if not isinstance(name, str) or not scope.has_resource(name):
            diags.error(reference_error(name, self.path), self.path)

    def dependencies(self) -> Iterator[str]:
        yield from super().dependencies()
        if isinstance(self.args, str):
            yield self.args

    def result(self, resolver: Resolver) -> Any:
        name = resolve(self.args, resolver)
        try:
            return resolver.resource_id(name)
        except (KeyError, TypeError):
            raise self.error(reference_error(name, self.path)) from None


class GetAttr(Shaped):
    """``get_attr: [resource, attribute, path...]`` (before 2015-10-15 the
    attribute is required)."""

    __slots__ = ()
    summary = "A function for resolving resource attributes."
    #: 2015-10-15 and later: ``[resource]`` alone gives every attribute.
    allow_all: ClassVar[bool] = False

    def check(self, args: Any) -> None:
        if not isinstance(args, list):
            raise ArgumentError(f'Argument to "{self.name}" must be a list')
        if len(args) < 2:
            raise ArgumentError(
                f'Arguments to "{self.name}" must be of the form '
                "[resource_name, attribute, (path), ...]"
            )

    @property
    def _attribute(self) -> Any:
        return self.args[1] if len(self.args) > 1 else None

    def validate(self, scope: Scope, diags: Diagnostics) -> None:
        super().validate(scope, diags)
        if self.pending:
            return
        resource = self.args[0]
        if isinstance(resource, Function):
            return
        if not isinstance(resource, str) or not scope.has_resource(resource):
            diags.error(reference_error(resource, self.path), self.path)
            return
        attribute = self._attribute
        if attribute is None or isinstance(attribute, Function):
            return  # all attributes, or known only when resolving
        names = scope.attribute_names(resource)
        if names is None or attribute == SHOW_ATTRIBUTE:
            return
        if not isinstance(attribute, str) or attribute not in names:
            diags.error(
                f"The Referenced Attribute ({resource} {attribute}) is incorrect.", self.path
            )

    def dependencies(self) -> Iterator[str]:
        yield from super().dependencies()
        if not self.pending and isinstance(self.args[0], str):
            yield self.args[0]

    def evaluate(self, resolver: Resolver) -> Any:
        resource = resolve(self.args[0], resolver)
        attribute = resolve(self._attribute, resolver)
        path = resolve(list(self.args[2:]), resolver)
        try:
            value = resolver.attribute(resource, attribute)
        except (KeyError, TypeError) as exc:
            if exc.args and exc.args[0] == resource:
                raise self.error(reference_error(resource, self.path)) from None
            raise self.error(
                f"The Referenced Attribute ({resource} {attribute}) is incorrect."
            ) from None
        if attribute is None:
            return value
        return select_from_attribute(value, path)


class GetAttrAll(GetAttr):
    """``get_attr`` from 2015-10-15: ``[resource]`` alone is every attribute."""

    __slots__ = ()
    allow_all = True

    def check(self, args: Any) -> None:
        if not args:
            raise ArgumentError(
                f'Arguments to "{self.name}" can be of the next forms: '
                "[resource_name] or [resource_name, attribute, (path), ...]"
            )
        # Heat tests for a sequence, so a one-character string names a resource.
        if not isinstance(args, list | str):
            raise ArgumentError(f'Argument to "{self.name}" must be a list')
        if len(args) > 1:
            super().check(args)


class GetFile(Function):
    """``get_file: path``: the content the client sent in ``files``, looked
    up by the exact key: a relative path as written, or the URL heatclient
    fetched and keyed the content by.

    Heat's ``GetFile`` has no ``validate``: a key missing from ``files`` is
    found only when the call is resolved, so template validate accepts it
    and the stack fails where the value is used (an output then carries
    its ``output_error``). No static check here either.
    """

    __slots__ = ()
    summary = "A function for including a file inline."

    def _missing(self, name: str) -> str:
        return f'No content found in the "files" section for {self.name} path: {name}'

    def result(self, resolver: Resolver) -> Any:
        name = resolve(self.args, resolver)
        if not isinstance(name, str):
            raise self.error(f'Argument to "{self.name}" must be a string')
        content = resolver.file(name)
        if content is None:
            raise self.error(self._missing(name))
        return content


class ResourceFacade(Shaped):
    """``resource_facade: metadata | deletion_policy | update_policy``: data
    of the parent resource, from inside a provider template."""

    __slots__ = ()
    summary = "A function for retrieving data in a parent provider template."
    #: The spellings this function accepts, and the section each one reads.
    sections: ClassVar[dict[str, str]] = {
        "metadata": "metadata",
        "deletion_policy": "deletion_policy",
        "update_policy": "update_policy",
    }

    def check(self, args: Any) -> None:
        if not isinstance(args, str) or args not in self.sections:
            allowed = ", ".join(self.sections)
            raise ArgumentError(f'Incorrect arguments to "{self.name}" should be one of: {allowed}')

    def evaluate(self, resolver: Resolver) -> Any:
        return resolver.facade(self.sections[self.args])


# --- references whose resource name is computed --------------------------------


class _Unknown(Exception):
    """A value known only once resources exist (or a parameter without one)."""


class _NameResolver:
    """What a computed resource name may read while the graph is built:
    Heat resolves ``get_resource``'s and ``get_attr``'s name argument for
    its dependencies and validation (``function.resolve(self.args)`` in
    GetResource.dependencies, ``_res_name`` in GetAttThenSelect), when
    parameters and files are known and no resource has a value yet."""

    __slots__ = ("_files", "_parameter")

    def __init__(self, parameter: Callable[[str], Any], files: Mapping[str, str]) -> None:
        self._parameter = parameter
        self._files = files

    def parameter(self, name: str) -> Any:
        try:
            return self._parameter(name)
        except KeyError:  # no value (template-validate): nothing to resolve
            raise _Unknown(name) from None

    def resource_id(self, name: str) -> NoReturn:
        raise _Unknown(name)

    def attribute(self, resource: str, name: str | None) -> NoReturn:
        raise _Unknown(resource)

    def file(self, name: str) -> str | None:
        return self._files.get(name)

    def facade(self, section: str) -> NoReturn:
        raise _Unknown(section)


def _computed(fn: Function) -> TypeGuard[GetResource | GetAttr]:
    if isinstance(fn, GetResource):
        return isinstance(fn.args, Function)
    return (
        isinstance(fn, GetAttr)
        and not fn.pending
        and isinstance(fn.args, list)
        and any(isinstance(a, Function) for a in fn.args[:2])
    )


def _computed_calls(snippet: Any) -> Iterator[GetResource | GetAttr]:
    """Every get_resource and get_attr in ``snippet`` (arguments included)
    whose resource name, or attribute name, is itself a function."""
    pending = [snippet]
    while pending:
        item = pending.pop()
        if isinstance(item, Function):
            if _computed(item):
                yield item
            pending.append(item.args)
        elif isinstance(item, dict):
            pending.extend(item.values())
        elif isinstance(item, list):
            pending.extend(item)


def computed_references(
    snippet: Any,
    parameter: Callable[[str], Any],
    files: Mapping[str, str],
    scope: Scope,
    diags: Diagnostics,
) -> Iterator[str]:
    """The resources that get_resource and get_attr calls with a computed
    name (``get_resource: {get_param: which}``) refer to, as Heat finds
    them for the dependency graph; and, as Heat's validation, a resolved
    name that is no resource, or an attribute its type lacks, is an error.

    ``parameter`` reads a parameter's value (KeyError when it has none).
    A name that needs a resource's value (``get_attr`` inside) cannot be
    known before that resource exists: it adds no edge here, only the
    inner call's own, and is resolved when the stack runs.
    """
    resolver = _NameResolver(parameter, files)
    for call in _computed_calls(snippet):
        head = call.args if isinstance(call, GetResource) else call.args[0]
        if not isinstance(head, Function):
            # A static name is validate's and dependencies()'s; only the attribute is computed.
            if isinstance(call, GetAttr) and isinstance(head, str) and scope.has_resource(head):
                _check_attribute(call, head, resolver, scope, diags)
            continue
        try:
            name = resolve(head, resolver)
        except _Unknown:
            continue
        except ExpressionError as exc:
            diags.error(exc.message, exc.path or call.path)
            continue
        if not isinstance(name, str) or not scope.has_resource(name):
            diags.error(reference_error(name, call.path), call.path)
            continue
        yield name
        if isinstance(call, GetAttr):
            _check_attribute(call, name, resolver, scope, diags)


def _check_attribute(
    call: GetAttr, resource: str, resolver: _NameResolver, scope: Scope, diags: Diagnostics
) -> None:
    try:
        attribute = resolve(call.args[1] if len(call.args) > 1 else None, resolver)
    except (_Unknown, ExpressionError):
        return  # reported, if at all, when the stack runs
    names = scope.attribute_names(resource)
    if attribute is None or names is None or attribute == SHOW_ATTRIBUTE:
        return
    if not isinstance(attribute, str) or attribute not in names:
        diags.error(f"The Referenced Attribute ({resource} {attribute}) is incorrect.", call.path)
