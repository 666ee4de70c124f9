"""Collection functions: ``repeat``, ``map_merge``, ``map_replace``,
``filter``, ``list_concat`` and ``list_concat_unique``.

``repeat`` grew in three steps without changing its name: lists only
(2015-04-30), maps too (2016-10-14), and ``permutations: false`` to zip the
lists instead of taking their product (2017-09-01). A product of lists is
the easiest way to build a huge value from a small template, so ``repeat``
counts its items before making them and measures each one it makes.

Membership tests (``filter``, ``list_concat_unique``) use Python equality on
JSON values, as Heat does, through hashable stand-ins so that large lists do
not cost a quadratic scan.
"""

from __future__ import annotations

import itertools
import math
from collections.abc import Iterable
from typing import Any, ClassVar

from convection.common import Diagnostics
from convection.hot.functions.base import (
    ArgumentError,
    Function,
    Resolver,
    Scope,
    Shaped,
    key_error_text,
    limits_of,
    measure,
    python_type_name,
    resolve,
)


def _too_large(name: str, limit: int) -> str:
    return f'"{name}" would build a value larger than the limit of {limit} units'


#: Heat's example in its ``repeat`` syntax error, with its source's indent
#: (the name is written out, not the call's: Heat's text says ``repeat``).
_REPEAT_EXAMPLE = (
    "repeat:\n"
    "              template: This is %var%\n"
    "              for_each:\n"
    "                %var%: ['a', 'b', 'c']"
)


_DICT = object()
_LIST = object()


def freeze(value: Any) -> Any:
    """A hashable stand-in equal exactly when the JSON values are equal."""
    if isinstance(value, dict):
        return (_DICT, frozenset((k, freeze(v)) for k, v in value.items()))
    if isinstance(value, list):
        return (_LIST, tuple(freeze(v) for v in value))
    return value


class Repeat(Shaped):
    """``repeat: {template, for_each: {var: list}}`` (2015-04-30): one copy
    of the template per combination of the lists' items."""

    __slots__ = ()
    summary = "A function for iterating over a list of items."
    #: 2016-10-14: a map's keys may be iterated too.
    maps: ClassVar[bool] = False
    #: 2017-09-01: ``permutations`` chooses product (true) or zip (false).
    permutations_key: ClassVar[bool] = False

    def check(self, args: Any) -> None:
        if not isinstance(args, dict):
            raise ArgumentError(f'Arguments to "{self.name}" must be a map')
        if "for_each" not in args or "template" not in args:
            raise ArgumentError(key_error_text(f'"repeat" syntax should be {_REPEAT_EXAMPLE}'))
        if self.permutations_key and not isinstance(args.get("permutations", True), bool):
            raise ArgumentError(f'"permutations" should be boolean type for {self.name} function.')

    @property
    def _nested(self) -> bool:
        return bool(self.args.get("permutations", True)) if self.permutations_key else True

    def validate(self, scope: Scope, diags: Diagnostics) -> None:
        super().validate(scope, diags)
        if self.pending:
            return
        for_each = self.args["for_each"]
        if not isinstance(for_each, dict | Function):
            diags.error(f'The "for_each" argument to "{self.name}" must contain a map', self.path)

    def _loop_values(self, for_each: Any) -> tuple[list[str], list[Iterable[Any]]]:
        """The variables and what each iterates. Heat unpacks
        ``for_each.items()`` without a check, so a computed ``for_each``
        that is no map, or an empty one, fails with Python's words."""
        if not isinstance(for_each, dict):
            raise self.error(f"'{type(for_each).__name__}' object has no attribute 'items'")
        if not for_each:
            raise self.error("not enough values to unpack (expected 2, got 0)")
        maps = self.maps and self._nested
        kinds = "lists or maps" if maps else "lists"
        values: list[Iterable[Any]] = []
        for value in for_each.values():
            if value is None:
                values.append([])
            elif isinstance(value, list) or (maps and isinstance(value, dict)):
                values.append(list(value))
            else:
                raise self.error(
                    f'The values of the "for_each" argument to "{self.name}" must be {kinds}'
                )
        return list(for_each), values

    def _count(self, for_each: dict[str, Any], values: list[Any]) -> int:
        if self._nested:
            return math.prod(len(v) for v in values)
        lengths = {
            len(v) for v, raw in zip(values, for_each.values(), strict=True) if raw is not None
        }
        if len(lengths) > 1:
            raise self.error(
                f"For {self.name}, the length of for_each values should be equal if no nested loop."
            )
        return min((len(v) for v in values), default=0)

    def evaluate(self, resolver: Resolver) -> Any:
        for_each = resolve(self.args["for_each"], resolver)
        keys, values = self._loop_values(for_each)
        limit = limits_of(resolver).max_value_size
        if self._count(for_each, values) > limit:
            raise self.error(_too_large(self.name, limit))
        template = resolve(self.args["template"], resolver)
        combos = itertools.product(*values) if self._nested else zip(*values, strict=False)
        out: list[Any] = []
        budget = limit
        for combo in combos:
            item = self._replace(keys, combo, template, budget)
            budget -= measure(item, budget)
            if budget < 0:
                raise self.error(_too_large(self.name, limit))
            out.append(item)
        return out

    def _replace(self, keys: list[str], values: tuple[Any, ...], template: Any, budget: int) -> Any:
        """Heat replaces each variable in turn with ``str.replace``, so a
        later variable may match text an earlier value brought in, and a
        variable or value that is not a string fails in every string of the
        template with Python's words; anything but strings, lists and maps
        in the template is kept as it is."""
        if isinstance(template, str):
            for key, value in zip(keys, values, strict=True):
                self._check_replacement(key, value)
                if key in template:
                    grown = len(template) + template.count(key) * (len(value) - len(key))
                    if grown > budget:
                        raise self.error(_too_large(self.name, budget))
                    template = template.replace(key, value)
            return template
        if isinstance(template, list):
            return [self._replace(keys, values, item, budget) for item in template]
        if isinstance(template, dict):
            return {
                self._replace(keys, values, k, budget): self._replace(keys, values, v, budget)
                for k, v in template.items()
            }
        return template

    def _check_replacement(self, key: Any, value: Any) -> None:
        """Refuse, as ``template.replace(key, value)`` would, in its words."""
        for position, argument in ((1, key), (2, value)):
            if not isinstance(argument, str):
                raise self.error(
                    f"replace() argument {position} must be str, not {python_type_name(argument)}"
                )


class RepeatWithMap(Repeat):
    """``repeat`` from 2016-10-14: a map in ``for_each`` iterates its keys."""

    __slots__ = ()
    summary = "A function for iterating over a list of items or a dict of keys."
    maps = True


class RepeatWithNestedLoop(RepeatWithMap):
    """``repeat`` from 2017-09-01: ``permutations: false`` zips the lists
    (which must then be lists of one length) instead of nesting them."""

    __slots__ = ()
    permutations_key = True


class MapMerge(Function):
    """``map_merge: [map, ...]`` (2016-04-08): later keys win."""

    __slots__ = ()
    summary = "A function for merging maps."

    def result(self, resolver: Resolver) -> Any:
        args = resolve(self.args, resolver)
        if not isinstance(args, list | str):  # Heat accepts any sequence here
            raise self.error(
                f'Incorrect arguments to "{self.name}" should be: '
                f'"{self.name}" : [ {{ "key1": "val1" }}, {{ "key2": "val2" }} ]'
            )
        merged: dict[Any, Any] = {}
        for item in args:
            if item is None:
                continue
            if not isinstance(item, dict):
                raise self.error("Incorrect arguments: Items to merge must be maps.")
            merged.update(item)
        return merged


class MapReplace(Function):
    """``map_replace: [map, {keys: {old: new}, values: {old: new}}]``
    (2016-10-14). A key renamed onto another key is an error, not a merge."""

    __slots__ = ()
    summary = "A function for performing substitutions on maps."

    @property
    def _example(self) -> str:
        return (
            f'"{self.name}" : [ {{ "key1": "val1" }}, '
            '{"keys": {"key1": "key2"}, "values": {"val1": "val2"}}]'
        )

    def _map(self, value: Any) -> dict[Any, Any]:
        if value is None:
            return {}
        if not isinstance(value, dict):
            raise self.error(
                f'Incorrect arguments: to "{self.name}", arguments must be a list of maps. '
                f"Example:  {self._example}"
            )
        return value

    def _arguments(self, args: Any) -> tuple[dict[Any, Any], dict[Any, Any], dict[Any, Any]]:
        """The input map and the key and value replacements, checked in
        Heat's order: it pops the two maps off the front of the list,
        checking each as it is taken, and only then looks for more. A map in
        place of the list has no item 0, which Heat reports as the bare
        ``KeyError``: ``0``."""
        usage = f'Incorrect arguments to "{self.name}" should be: {self._example}'
        if isinstance(args, dict):
            if 0 in args:
                self._map(args[0])
            raise self.error(str(KeyError(0)))
        if not isinstance(args, list) or not args:
            raise self.error(usage)
        source = self._map(args[0])
        if len(args) < 2:
            raise self.error(usage)
        replacements = self._map(args[1])
        if len(args) > 2 or any(k not in ("keys", "values") for k in replacements):
            raise self.error(usage)
        keys = self._map(replacements.get("keys", {}))
        values = self._map(replacements.get("values", {}))
        return source, keys, values

    def result(self, resolver: Resolver) -> Any:
        source, keys, values = self._arguments(resolve(self.args, resolver))
        out: dict[Any, Any] = {}
        for key, value in source.items():
            new = keys.get(key)
            if new is None:
                new = key
            elif self._in(new, source) and new != key:
                raise self.error(f"key replacement {new} collides with a key in the input map")
            elif new in out:
                raise self.error(f"key replacement {new} collides with a key in the output map")
            try:
                out[new] = values.get(value, value)
            except TypeError:  # an unhashable value is never replaced
                out[new] = value
        return out

    def _in(self, key: Any, source: dict[Any, Any]) -> bool:
        """Whether a replacement key is in the input map; a list or map as
        the new key is unhashable, which Heat reports in Python's words."""
        try:
            return key in source
        except TypeError as exc:
            raise self.error(str(exc)) from None


class Filter(Shaped):
    """``filter: [values, list]`` (2017-02-24): the list without the values."""

    __slots__ = ()
    summary = "A function for filtering out values from lists."

    def check(self, args: Any) -> None:
        if not isinstance(args, list):
            raise ArgumentError(f'Argument to "{self.name}" must be a list')
        if len(args) != 2:
            raise ArgumentError(
                f'"{self.name}" expected 2 arguments of the form [values, sequence] '
                f"but got {len(args)} arguments instead"
            )

    def evaluate(self, resolver: Resolver) -> Any:
        sequence = resolve(self.args[1], resolver)
        if not sequence:
            return sequence
        if not isinstance(sequence, list):
            raise self.error(f'"{self.name}" only works with lists')
        values = resolve(self.args[0], resolver)
        if not values:
            return sequence
        if not isinstance(values, list):
            raise self.error(f'"{self.name}" filters a list of values')
        removed = {freeze(v) for v in values}
        return [item for item in sequence if freeze(item) not in removed]


class ListConcat(Function):
    """``list_concat: [list, ...]`` (2017-09-01)."""

    __slots__ = ()
    summary = "A function for extending lists."
    unique: ClassVar[bool] = False

    def result(self, resolver: Resolver) -> Any:
        args = resolve(self.args, resolver)
        if not isinstance(args, list):
            raise self.error(
                f'Incorrect arguments to "{self.name}" should be: '
                f'"{self.name}" : [ [ <value 1>, <value 2> ], [ <value 3>, <value 4> ] ]'
            )
        out: list[Any] = []
        for item in args:
            if item is None:
                continue
            if not isinstance(item, list):
                raise self.error("Incorrect arguments: Items to concat must be lists.")
            out.extend(item)
        return self._deduplicate(out) if self.unique else out

    @staticmethod
    def _deduplicate(items: list[Any]) -> list[Any]:
        """Each value once, where it last occurs. Heat's loop means this but
        can skip items while deleting; where its result is duplicate-free it
        is exactly this one."""
        seen: set[Any] = set()
        kept: list[Any] = []
        for item in reversed(items):
            key = freeze(item)
            if key not in seen:
                seen.add(key)
                kept.append(item)
        kept.reverse()
        return kept


class ListConcatUnique(ListConcat):
    """``list_concat_unique`` (2017-09-01): concatenated, without repeats."""

    __slots__ = ()
    summary = "A function for extending lists with unique items."
    unique = True
