"""The CloudFormation functions (``heat/engine/cfn/functions.py``), and
:class:`Removed`, which later HOT versions put in their place.

Heat's HOT 2013-05-23 table has ``Fn::GetAZs``, ``Ref``, ``Fn::Select``,
``Fn::Join``, ``Fn::Split``, ``Fn::Replace``, ``Fn::Base64``,
``Fn::MemberListToMap`` and ``Fn::ResourceFacade`` (no ``Fn::GetAtt`` and
no ``Fn::FindInMap``). 2014-10-16 removes all of them but ``Fn::Select``,
and 2015-10-15 removes that too. A removed name is not plain data: it is an
error that says the function is not supported in this version.

CloudFormation-format templates have all of them, plus ``Fn::GetAtt``,
``Fn::FindInMap`` and (``AWSTemplateFormatVersion`` only) ``Fn::If`` with
the condition functions ``Fn::Equals``, ``Fn::Not``, ``Fn::And``,
``Fn::Or``, ``Fn::FindInMap`` and ``Ref`` of a parameter.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterator, Mapping
from itertools import groupby
from typing import Any, ClassVar

from convection.common import Diagnostics, Path
from convection.hot.functions.base import (
    ArgumentError,
    Function,
    FunctionTable,
    Resolver,
    Scope,
    Shaped,
    UnknownHook,
    parse,
    resolve,
    to_data,
)
from convection.hot.functions.conditionals import And, Equals, If, Or, condition_value
from convection.hot.functions.refs import GetAttr, ResourceFacade, reference_error
from convection.hot.functions.strings import Join, Replace


class Removed(Function):
    """A function of an older version that this version no longer has."""

    __slots__ = ()

    def _message(self) -> str:
        return (
            "The template version is invalid: "
            f"The function {self.name} is not supported in this version of HOT."
        )

    def validate(self, scope: Scope, diags: Diagnostics) -> None:
        diags.error(self._message(), self.path)

    def dependencies(self) -> Iterator[str]:
        return iter(())

    def result(self, resolver: Resolver) -> Any:
        raise self.error(self._message())


class GetAZs(Function):
    """``Fn::GetAZs: region``: the availability zones.

    Heat asks Nova; with no compute service it answers ``["nova"]``. A
    resolver that knows real zones offers ``availability_zones()``.
    """

    __slots__ = ()
    summary = "A function for retrieving the availability zones."

    def result(self, resolver: Resolver) -> Any:
        zones = getattr(resolver, "availability_zones", None)
        return list(zones()) if callable(zones) else ["nova"]


class Ref(Function):
    """``Ref: name``: a resource's reference id, or else a parameter's value.

    Which one depends on the template (a resource of that name wins, as in
    Heat), so ``validate`` decides and remembers it. Before validation, the
    name is reported as a dependency; the graph keeps only resource names.
    """

    __slots__ = ("_parameter",)
    summary = "A function for resolving parameters or resource references."

    def __init__(self, name: str, args: Any, path: Path) -> None:
        super().__init__(name, args, path)
        self._parameter = False

    def validate(self, scope: Scope, diags: Diagnostics) -> None:
        super().validate(scope, diags)
        name = self.args
        if isinstance(name, Function):
            return
        if isinstance(name, str) and scope.has_resource(name):
            self._parameter = False
        elif isinstance(name, str) and scope.has_parameter(name):
            self._parameter = True
        else:
            diags.error(reference_error(name, self.path), self.path)

    def dependencies(self) -> Iterator[str]:
        yield from super().dependencies()
        if isinstance(self.args, str) and not self._parameter:
            yield self.args

    def result(self, resolver: Resolver) -> Any:
        name = resolve(self.args, resolver)
        try:
            return resolver.parameter(name) if self._parameter else resolver.resource_id(name)
        except (KeyError, TypeError):
            raise self.error(reference_error(name, self.path)) from None


class Select(Shaped):
    """``Fn::Select: [index, list or map]``; a missing item is ``''``."""

    __slots__ = ()
    summary = "A function for selecting an item from a list or map."

    def check(self, args: Any) -> None:
        if not isinstance(args, list) or len(args) != 2:
            raise ArgumentError(
                f'Arguments to "{self.name}" must be of the form [index, collection]'
            )

    def evaluate(self, resolver: Resolver) -> Any:
        index = resolve(self.args[0], resolver)
        strings = resolve(self.args[1], resolver)
        if strings == "":  # an attribute not available yet: Heat passes it on
            return ""
        if isinstance(strings, str):  # serialized JSON, perhaps
            try:
                strings = json.loads(strings)
            except ValueError as exc:
                raise self.error(f'"{self.name}": {exc}') from None
        if isinstance(strings, dict):
            if not isinstance(index, str):
                raise self.error(f'Index to "{self.name}" must be a string')
            return strings.get(index, "")
        if isinstance(strings, list):
            return self._from_list(index, strings)
        if strings is None:
            return ""
        raise self.error(f"Arguments to {self.name} not fully resolved")

    def _from_list(self, index: Any, strings: list[Any]) -> Any:
        try:
            index = int(index)
        except (TypeError, ValueError):
            raise self.error(f'Index to "{self.name}" must be an integer') from None
        try:
            return strings[index]
        except IndexError:
            return ""


class CfnJoin(Join):
    """``Fn::Join: [delimiter, [strings]]``: list_join as in 2013-05-23."""

    __slots__ = ()


class Split(Shaped):
    """``Fn::Split: [delimiter, string]``."""

    __slots__ = ()
    summary = "A function for splitting strings."

    def check(self, args: Any) -> None:
        if not isinstance(args, list) or len(args) != 2:
            example = f'"{self.name}" : [ ",", "str1,str2"]'
            raise ArgumentError(f'Incorrect arguments to "{self.name}" should be: {example}')

    def evaluate(self, resolver: Resolver) -> Any:
        delim = self.args[0]  # Heat never resolves the delimiter
        text = resolve(self.args[1], resolver)
        if not isinstance(delim, str) or not delim:
            raise self.error(f"Delimiter for {self.name} must be string")
        if not isinstance(text, str):
            raise self.error(f"String to split must be string; got {type(text)}")
        return text.split(delim)


class CfnReplace(Replace):
    """``Fn::Replace: [{placeholder: value}, template]``."""

    __slots__ = ()

    def check(self, args: Any) -> None:
        if not isinstance(args, list) or len(args) != 2:
            example = (
                f'{{"{self.name}": [ {{"$var1": "foo", "%var2%": "bar"}}, "$var1 is %var2%"]}}'
            )
            raise ArgumentError(f'Incorrect arguments to "{self.name}" should be: {example}')
        if not isinstance(args[0], dict | Function):
            raise ArgumentError(f'"{self.name}" parameters must be a mapping')

    def _params_arg(self) -> Any:
        return self.args[0]

    def _template_arg(self) -> Any:
        return self.args[1]


class Base64(Function):
    """``Fn::Base64: string``: the string unchanged; Heat takes user data as
    plain text and keeps this only so CloudFormation-style templates work."""

    __slots__ = ()
    summary = "A placeholder function for converting to base64."

    def result(self, resolver: Resolver) -> Any:
        value = resolve(self.args, resolver)
        if not isinstance(value, str):
            raise self.error(f'"{self.name}" argument must be a string')
        return value


_MEMBER = re.compile(r"\.member\.([0-9]+)\.(.*)")


class MemberListToMap(Shaped):
    """``Fn::MemberListToMap: [key_name, value_name, ['.member.0.Name=k', ...]]``:
    the AWS query-string encoding of a map, decoded."""

    __slots__ = ()
    summary = "A function to convert lists with enumerated keys and values to mapping."

    def check(self, args: Any) -> None:
        if not isinstance(args, list) or len(args) != 3:
            raise ArgumentError(
                "Wrong Arguments try: "
                f"\"{{'{self.name}': ['Name', 'Value', "
                "['.member.0.Name=key', '.member.0.Value=door']]}\""
            )
        if not isinstance(args[0], str):
            raise ArgumentError(f"{self.name} Key Name must be a string")
        if not isinstance(args[1], str):
            raise ArgumentError(f"{self.name} Value Name must be a string")

    def evaluate(self, resolver: Resolver) -> Any:
        members = resolve(self.args[2], resolver)
        if not isinstance(members, list | dict | str):
            raise self.error("Member list must be a list")
        pairs: dict[str, str] = {}
        for item in members:
            if not isinstance(item, str):
                raise self.error("Member list items must be strings")
            key, sep, value = item.partition("=")
            if not sep:
                raise self.error(f"Member list item {item!r} has no '='")
            pairs[key] = value
        return self._decode(pairs)

    def _decode(self, pairs: dict[str, str]) -> dict[str, str]:
        found = []
        for name, value in pairs.items():
            match = _MEMBER.match(name)
            if match:
                found.append((int(match.group(1)), match.group(2), value))
        found.sort(key=lambda t: t[0])
        key_name, value_name = self.args[0], self.args[1]
        out: dict[str, str] = {}
        for _, group in groupby(found, key=lambda t: t[0]):
            member = {field: value for _, field, value in group}
            if key_name in member and value_name in member:
                out[member[key_name]] = member[value_name]
        return out


class CfnResourceFacade(ResourceFacade):
    """``Fn::ResourceFacade: Metadata | DeletionPolicy | UpdatePolicy``."""

    __slots__ = ()
    sections: ClassVar[dict[str, str]] = {
        "Metadata": "metadata",
        "DeletionPolicy": "deletion_policy",
        "UpdatePolicy": "update_policy",
    }


class GetAtt(GetAttr):
    """``Fn::GetAtt: [resource, attribute]``: exactly two arguments."""

    __slots__ = ()

    def check(self, args: Any) -> None:
        if not isinstance(args, list) or len(args) != 2:
            raise ArgumentError(
                f'Arguments to "{self.name}" must be of the form [resource_name, attribute]'
            )


class ParamRef(Function):
    """``Ref: parameter`` in a condition, where only parameters may be named."""

    __slots__ = ()
    summary = "A function for resolving parameter references."

    def validate(self, scope: Scope, diags: Diagnostics) -> None:
        super().validate(scope, diags)
        if isinstance(self.args, str) and not scope.has_parameter(self.args):
            diags.error(_unknown_reference(self.args), self.path)

    def result(self, resolver: Resolver) -> Any:
        name = resolve(self.args, resolver)
        try:
            return resolver.parameter(name)
        except (KeyError, TypeError):
            raise self.error(_unknown_reference(name)) from None


def _unknown_reference(name: Any) -> str:
    """Heat's ``InvalidTemplateReference(resource=name, key='unknown')``."""
    return f'The specified reference "{name}" (in unknown) is incorrect.'


class Mappings:
    """A template's ``Mappings`` section, carried inside each ``Fn::FindInMap``
    call so the call can be evaluated (and rebuilt after its macros expand)
    without a resolver that knows the template. A leaf to every tree walk."""

    __slots__ = ("data",)

    def __init__(self, data: Mapping[str, Any]) -> None:
        self.data = data

    def __eq__(self, other: object) -> bool:
        return isinstance(other, Mappings) and other.data == self.data

    def __hash__(self) -> int:
        return id(self.data)

    def __repr__(self) -> str:
        return f"<Mappings {sorted(self.data)}>"


class MappingTable(dict[str, type[Function]]):
    """A function table that also holds the template's mappings."""

    def __init__(self, table: FunctionTable, mappings: Mappings) -> None:
        super().__init__(table)
        self.mappings = mappings


class FindInMap(Shaped):
    """``Fn::FindInMap: [map_name, key, value]``: ``Mappings[map][key][value]``."""

    __slots__ = ()
    summary = "A function for resolving keys in the template mappings."

    @classmethod
    def parse_arguments(
        cls,
        args: Any,
        table: FunctionTable,
        diags: Diagnostics,
        path: Path,
        on_unknown: UnknownHook | None = None,
    ) -> Any:
        parsed = parse(args, table, diags, path, on_unknown=on_unknown)
        mappings = getattr(table, "mappings", None)
        if isinstance(parsed, list) and len(parsed) == 3 and isinstance(mappings, Mappings):
            return [*parsed, mappings]
        return parsed

    def check(self, args: Any) -> None:
        if not isinstance(args, list) or len(args) != 4 or not isinstance(args[3], Mappings):
            raise ArgumentError(
                f'Arguments to "{self.name}" must be of the form [map_name, key, value]'
            )

    def validate(self, scope: Scope, diags: Diagnostics) -> None:
        super().validate(scope, diags)
        if self.pending or any(isinstance(a, Function) for a in self.args[:3]):
            return  # known only once its arguments resolve
        try:
            self._find(self.args[0], self.args[1], self.args[2])
        except ArgumentError as exc:
            diags.error(str(exc), self.path)

    def evaluate(self, resolver: Resolver) -> Any:
        names = [resolve(a, resolver) for a in self.args[:3]]
        try:
            return self._find(*names)
        except ArgumentError as exc:
            raise self.error(str(exc)) from None

    def _find(self, mapping: Any, key: Any, value: Any) -> Any:
        found: Any = self.args[3].data
        for kind, name in (("mapping", mapping), ("key", key), ("value", value)):
            if not isinstance(found, Mapping) or not isinstance(name, str) or name not in found:
                raise ArgumentError(f'"{self.name}": {kind} {name!r} not found in Mappings')
            found = found[name]
        return found

    def to_data(self) -> dict[str, Any]:
        return {self.name: to_data(list(self.args[:3]))}


class CfnIf(If):
    """``Fn::If: [condition_name, value_if_true, value_if_false]``."""

    __slots__ = ()


class CfnEquals(Equals):
    """``Fn::Equals: [value_1, value_2]``."""

    __slots__ = ()


class CfnNot(Function):
    """``Fn::Not: [condition]``: a list of one condition."""

    __slots__ = ()
    summary = "A function that acts as a NOT operator on a condition."

    def __init__(self, name: str, args: Any, path: Path) -> None:
        super().__init__(name, args, path)
        if not isinstance(args, list) or len(args) != 1:
            raise ArgumentError(f'Arguments to "{name}" must be of the form: [condition]')

    def result(self, resolver: Resolver) -> Any:
        return not condition_value(self, resolve(self.args[0], resolver), resolver)


class CfnAnd(And):
    """``Fn::And: [condition, condition, ...]``."""

    __slots__ = ()


class CfnOr(Or):
    """``Fn::Or: [condition, condition, ...]``."""

    __slots__ = ()
