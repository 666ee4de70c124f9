"""Evaluating the conditions section.

Conditions may refer to other conditions by name (``not: is_prod``); each is
evaluated at most once, and a circular definition is an error naming it, as
in Heat. Values are booleans; anything else is an invalid definition.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any

from convection.common import ExpressionError
from convection.hot import functions
from convection.hot.functions.base import Function

_IN_PROGRESS = object()


class Conditions:
    """Lazily evaluated, memoised condition values.

    It is also the resolver the condition functions see: ``parameter`` comes
    from the stack's values and ``condition`` recurses into this table.
    """

    def __init__(self, definitions: Mapping[str, Any], parameter: Callable[[str], Any]) -> None:
        self._definitions = definitions
        self._parameter = parameter
        self._values: dict[str, object] = {}

    def names(self) -> frozenset[str]:
        return frozenset(self._definitions)

    def __contains__(self, name: object) -> bool:
        return name in self._definitions

    # -- Resolver (the subset condition functions use) -------------------
    def parameter(self, name: str) -> Any:
        return self._parameter(name)

    def condition(self, name: str) -> bool:
        return self.is_enabled(name)

    def resource_id(self, name: str) -> Any:
        raise ExpressionError(f'The function "get_resource" is invalid in conditions ({name})')

    def attribute(self, resource: str, name: str | None) -> Any:
        raise ExpressionError(f'The function "get_attr" is invalid in conditions ({resource})')

    def file(self, name: str) -> str | None:
        return None

    def facade(self, section: str) -> Any:
        raise ExpressionError('The function "resource_facade" is invalid in conditions')

    # -- evaluation ------------------------------------------------------
    def is_enabled(self, condition: Any) -> bool:
        """``None`` (no condition) is enabled; a bool is itself; a string
        names a condition; a function is evaluated."""
        if condition is None:
            return True
        if isinstance(condition, bool):
            return condition
        if isinstance(condition, Function):
            return self._check("<inline>", functions.resolve(condition, self))
        if not isinstance(condition, str) or condition not in self._definitions:
            raise ExpressionError(f'Invalid condition "{condition}"')
        value = self._values.get(condition)
        if value is _IN_PROGRESS:
            raise ExpressionError(f'Circular definition for condition "{condition}"')
        if value is None:
            self._values[condition] = _IN_PROGRESS
            try:
                value = self._evaluate(condition)
            finally:
                if self._values.get(condition) is _IN_PROGRESS:
                    del self._values[condition]
            self._values[condition] = value
        return bool(value)

    def _evaluate(self, name: str) -> bool:
        definition = self._definitions[name]
        resolved = functions.resolve(definition, self)
        return self._check(name, resolved)

    @staticmethod
    def _check(name: str, value: Any) -> bool:
        if not isinstance(value, bool):
            raise ExpressionError(f'The definition of condition "{name}" is invalid: {value}')
        return value
