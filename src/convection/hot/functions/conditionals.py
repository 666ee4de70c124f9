"""Conditions: ``if`` and the condition functions ``equals``, ``not``,
``and``, ``or`` and ``contains``.

A condition is a boolean, a condition function, or the *name* of another
condition: ``not: is_prod`` negates the condition ``is_prod``. Names are
looked up when evaluating, through a resolver that also answers
``condition(name)`` (see :class:`ConditionResolver`), because Heat evaluates
a condition only when something needs it, so a misspelt name in a condition
nobody uses is not an error.

``if`` is a :class:`Macro`: it is expanded when the stack definition is built
and conditions are known. Its first argument is parsed with the version's
*condition* table (a function that is not a condition function is invalid
there, as in Heat), the others with the ordinary one. From 2021-04-16 the
third argument may be left out: a false condition then removes the item that
holds the ``if`` (:data:`DROP`).
"""

from __future__ import annotations

from typing import Any, ClassVar, Protocol, cast

from convection.common import Diagnostics, ExpressionError, Path
from convection.hot.functions.base import (
    DROP,
    ArgumentError,
    ExpandContext,
    Function,
    FunctionTable,
    Macro,
    Resolver,
    Scope,
    Shaped,
    UnknownHook,
    parse,
    resolve,
    validate,
)


class ConditionResolver(Resolver, Protocol):
    """A resolver for evaluating conditions: it also knows condition values."""

    def condition(self, name: str) -> bool: ...


def invalid_condition(value: Any) -> str:
    return f'Invalid condition "{value}"'


def condition_value(fn: Function, value: Any, resolver: object) -> bool:
    """Heat's reading of a resolved condition: a bool is itself, ``None`` is
    true (no condition), and a string names another condition."""
    if isinstance(value, bool):
        return value
    if value is None:
        return True
    lookup = getattr(resolver, "condition", None)
    if not isinstance(value, str) or lookup is None:
        raise fn.error(invalid_condition(value))
    try:
        return bool(cast(ConditionResolver, resolver).condition(value))
    except ExpressionError as exc:
        if exc.path:
            raise
        raise fn.error(exc.message) from None


class If(Macro):
    """``if: [condition, value_if_true, value_if_false]`` (2016-10-14)."""

    __slots__ = ()
    summary = "A function to return corresponding value based on condition evaluation."
    #: The version's table for condition expressions; bound per version.
    conditions: ClassVar[FunctionTable] = {}
    #: 2021-04-16: ``value_if_false`` may be omitted.
    nullable: ClassVar[bool] = False

    @classmethod
    def parse_arguments(
        cls,
        args: Any,
        table: FunctionTable,
        diags: Diagnostics,
        path: Path,
        on_unknown: UnknownHook | None = None,
    ) -> Any:
        if not isinstance(args, list) or not args:
            return parse(args, table, diags, path, on_unknown=on_unknown)
        head = parse(args[0], cls.conditions, diags, (*path, 0), on_unknown=on_unknown)
        rest = [
            parse(v, table, diags, (*path, i), on_unknown=on_unknown)
            for i, v in enumerate(args[1:], start=1)
        ]
        return [head, *rest]

    def __init__(self, name: str, args: Any, path: Path) -> None:
        super().__init__(name, args, path)
        fewest = 2 if self.nullable else 3
        if not isinstance(args, list) or not fewest <= len(args) <= 3:
            raise ArgumentError(
                f'Arguments to "{name}" must be of the form: '
                "[condition_name, value_if_true, value_if_false]"
            )
        condition = args[0]
        if condition is not None and not isinstance(condition, bool | str | Function):
            raise ArgumentError(invalid_condition(condition))

    def validate(self, scope: Scope, diags: Diagnostics) -> None:
        condition = self.args[0]
        if isinstance(condition, str) and not scope.has_condition(condition):
            diags.error(invalid_condition(condition), self.path)
        validate(self.args, scope, diags)

    def expand(self, ctx: ExpandContext) -> Any:
        if self._truth(ctx):
            return self.args[1]
        return self.args[2] if len(self.args) == 3 else DROP

    def _truth(self, ctx: ExpandContext) -> bool:
        condition = self.args[0]
        if isinstance(condition, Function):
            if not hasattr(ctx, "parameter"):
                raise self.error("an inline condition needs a context that can resolve it")
            condition = resolve(condition, cast(Resolver, ctx))
        return condition_value(self, condition, ctx)


class IfNullable(If):
    """``if`` from 2021-04-16: without ``value_if_false``, a false condition
    drops the enclosing item, as if it had not been written."""

    __slots__ = ()
    nullable = True


class Equals(Shaped):
    """``equals: [a, b]``: Python equality of the resolved values, as in Heat."""

    __slots__ = ()
    summary = "A function for comparing whether two values are equal."

    def check(self, args: Any) -> None:
        if not isinstance(args, list) or len(args) != 2:
            raise ArgumentError(
                f'Arguments to "{self.name}" must be of the form: [value_1, value_2]'
            )

    def evaluate(self, resolver: Resolver) -> Any:
        return resolve(self.args[0], resolver) == resolve(self.args[1], resolver)


class Not(Function):
    """``not: condition``."""

    __slots__ = ()
    summary = "A function that acts as a NOT operator on a condition."

    def __init__(self, name: str, args: Any, path: Path) -> None:
        super().__init__(name, args, path)
        if args is None:
            raise ArgumentError(f'Argument to "{name}" must be a condition')

    def result(self, resolver: Resolver) -> Any:
        return not condition_value(self, resolve(self.args, resolver), resolver)


class And(Function):
    """``and: [condition, condition, ...]``: every argument is resolved
    first and names are looked up until one is false, as in Heat."""

    __slots__ = ()
    summary = "A function that acts as an AND operator on conditions."

    def __init__(self, name: str, args: Any, path: Path) -> None:
        super().__init__(name, args, path)
        if not isinstance(args, list):
            raise ArgumentError(f'Arguments to "{name}" must be a list of conditions')
        if len(args) < 2:
            raise ArgumentError(f'The minimum number of condition arguments to "{name}" is 2.')

    def result(self, resolver: Resolver) -> Any:
        values = resolve(self.args, resolver)
        return all(condition_value(self, v, resolver) for v in values)


class Or(And):
    """``or: [condition, condition, ...]``."""

    __slots__ = ()
    summary = "A function that acts as an OR operator on conditions."

    def result(self, resolver: Resolver) -> Any:
        values = resolve(self.args, resolver)
        return any(condition_value(self, v, resolver) for v in values)


class Contains(Shaped):
    """``contains: [value, sequence]`` (2017-09-01)."""

    __slots__ = ()
    summary = "A function for checking whether specific value is in sequence."

    def check(self, args: Any) -> None:
        if not args or not isinstance(args, list):
            raise ArgumentError(
                f'Incorrect arguments to "{self.name}" should be: '
                f'"{self.name}" : [ "value1", [ "value1", "value2"]]'
            )
        if len(args) != 2:
            raise ArgumentError(
                f'Arguments to "{self.name}" must be of the form: [value1, [value1, value2]]'
            )

    def evaluate(self, resolver: Resolver) -> Any:
        """Python's ``in``, as Heat's: a string is a sequence too, and
        looking for anything but a string in one fails in Python's words."""
        value = resolve(self.args[0], resolver)
        sequence = resolve(self.args[1], resolver)
        if not isinstance(sequence, list | str):
            raise self.error(f'Second argument to "{self.name}" should be a sequence.')
        try:
            return value in sequence
        except TypeError as exc:
            raise self.error(str(exc)) from None


class NotACondition(Function):
    """Stands for a function of the version that is not a condition function,
    in the conditions section or an ``if`` condition: Heat rejects it there."""

    __slots__ = ()

    @classmethod
    def parse_arguments(
        cls,
        args: Any,
        table: FunctionTable,
        diags: Diagnostics,
        path: Path,
        on_unknown: UnknownHook | None = None,
    ) -> Any:
        return args  # rejected whole; its arguments would only add noise

    def __init__(self, name: str, args: Any, path: Path) -> None:
        super().__init__(name, args, path)
        raise ArgumentError(f'The function "{name}" is invalid in this context')
