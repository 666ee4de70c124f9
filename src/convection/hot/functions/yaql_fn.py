"""``yaql: {expression, data}`` (2016-10-14; a condition function from
2017-09-01), sandboxed.

yaql runs user code inside the engine, so it runs under three budgets:
Heat's ``limit_iterators`` and ``memory_quota`` (which yaql enforces itself)
and a wall-clock deadline Heat does not have, all kept by
:mod:`convection.common.budget`, which Mistral's expressions share.

A literal expression is parsed once, when the template is parsed, and a bad
one is an argument error then; an expression produced by another function
is parsed when evaluated, as Heat must too.
"""

from __future__ import annotations

import threading
from typing import Any

import yaql
from yaql.language import exceptions as yaql_exceptions

from convection.common import (
    Exceeded,
    Path,
    budget,
    budgeted_yaql_engine,
    default_yaql_options,
)
from convection.hot.functions.base import (
    ArgumentError,
    Function,
    Resolver,
    Shaped,
    key_error_text,
    limits_of,
    resolve,
)

_engine: Any = None
_context: Any = None
_lock = threading.Lock()


def _parser() -> Any:
    """The shared engine; building yaql's grammar is slow, so it is built once."""
    global _engine, _context
    with _lock:
        if _engine is None:
            # Heat's results are JSON: a set comes out as a list either way.
            options = {**default_yaql_options(), "yaql.convertSetsToLists": True}
            _engine = budgeted_yaql_engine(options)
            _context = yaql.create_context()
    return _engine


def parse_expression(name: str, expression: Any) -> Any:
    """A parsed statement; :class:`ValueError` with Heat's wording if bad."""
    if not isinstance(expression, str):
        raise ValueError(f'The "expression" argument to {name} must contain a string.')
    try:
        return _parser()(expression)
    except yaql_exceptions.YaqlException as exc:
        raise ValueError(f"Bad expression {exc}.") from None


class Yaql(Shaped):
    """Evaluates a yaql expression over ``data`` (the root is ``$.data``)."""

    __slots__ = ("_statement",)
    summary = "A function for executing a yaql expression."

    def __init__(self, name: str, args: Any, path: Path) -> None:
        self._statement: Any = None
        super().__init__(name, args, path)

    def check(self, args: Any) -> None:
        if not isinstance(args, dict):
            raise ArgumentError(f'Arguments to "{self.name}" must be a map.')
        if "expression" not in args or set(args) - {"expression", "data"}:
            example = (
                f"{self.name}:\n"
                "              expression: $.data.var1.sum()\n"
                "              data:\n"
                "                var1: [3, 2, 1]"
            )
            raise ArgumentError(key_error_text(f'"{self.name}" syntax should be {example}'))
        expression = args["expression"]
        if not isinstance(expression, Function):
            try:
                self._statement = parse_expression(self.name, expression)
            except ValueError as exc:
                raise ArgumentError(str(exc)) from None

    def evaluate(self, resolver: Resolver) -> Any:
        statement = self._statement
        if statement is None:
            try:
                statement = parse_expression(self.name, resolve(self.args["expression"], resolver))
            except ValueError as exc:
                raise self.error(str(exc)) from None
        data = resolve(self.args.get("data", {}), resolver)
        limits = limits_of(resolver)
        try:
            with budget(limits):
                return statement.evaluate({"data": data}, _context.create_child_context())
        except Exceeded:
            raise self.error(
                f'"{self.name}" took longer than {limits.yaql_timeout} seconds'
            ) from None
        except yaql_exceptions.YaqlException as exc:
            raise self.error(str(exc)) from None
        except Exception as exc:  # user code: whatever it raises is its error
            raise self.error(f"{type(exc).__name__}: {exc}") from None
