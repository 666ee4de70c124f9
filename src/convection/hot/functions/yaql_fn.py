"""``yaql: {expression, data}`` (2016-10-14; a condition function from
2017-09-01), sandboxed.

yaql runs user code inside the engine, so it runs under three budgets:
Heat's ``limit_iterators`` and ``memory_quota`` (which yaql enforces itself)
and a wall-clock deadline Heat does not have. yaql reads its options on every
function call and every collection it walks; the engine here answers those
reads from the evaluation in progress, so the same check enforces the
deadline without a thread or a signal. A single long builtin (one huge
regular expression match) can still overrun it; the quotas bound the rest.

A literal expression is parsed once, when the template is parsed, and a bad
one is an argument error then; an expression produced by another function
is parsed when evaluated, as Heat must too.
"""

from __future__ import annotations

import collections.abc  # yaql reads collections.abc without importing it
import threading
import time
from collections.abc import Iterator, Mapping
from contextlib import contextmanager
from typing import Any

import yaql
from yaql.language import exceptions as yaql_exceptions
from yaql.language import factory as yaql_factory

from convection.common import Limits, Path
from convection.hot.functions.base import (
    ArgumentError,
    Function,
    Resolver,
    Shaped,
    key_error_text,
    limits_of,
    resolve,
)

_ = collections.abc  # imported for its side effect on yaql

_ITERATORS = "yaql.limitIterators"
_MEMORY = "yaql.memoryQuota"


class _Timeout(Exception):
    """Raised from inside yaql when an evaluation's deadline has passed."""


class _Budget(threading.local):
    """The evaluation in progress on this thread, if any."""

    limits: Limits | None = None
    deadline: float = 0.0


_budget = _Budget()


class _Options(Mapping[str, Any]):
    """Engine options that answer from the current evaluation's budget."""

    def __init__(self, static: dict[str, Any]) -> None:
        self._static = static

    def __getitem__(self, key: str) -> Any:
        limits = _budget.limits
        if limits is None:
            return self._static[key]
        if time.monotonic() > _budget.deadline:
            raise _Timeout
        if key == _ITERATORS:
            return limits.yaql_limit_iterators
        if key == _MEMORY:
            return limits.yaql_memory_quota
        return self._static[key]

    def __iter__(self) -> Iterator[str]:
        return iter(self._static)

    def __len__(self) -> int:
        return len(self._static)


class _Engine(yaql_factory.YaqlEngine):  # type: ignore[misc]
    """A yaql engine whose options follow the evaluation in progress."""

    def __init__(self, base: Any, options: dict[str, Any]) -> None:
        super().__init__(base.lexer, base.parser, options, base.factory)
        self._budgeted = _Options(options)

    @property
    def options(self) -> Mapping[str, Any]:
        return self._budgeted


_STATIC_OPTIONS: dict[str, Any] = {
    _ITERATORS: Limits().yaql_limit_iterators,
    _MEMORY: Limits().yaql_memory_quota,
    # Heat's results are JSON: a set comes out as a list either way.
    "yaql.convertSetsToLists": True,
}
_engine: Any = None
_context: Any = None
_lock = threading.Lock()


def _parser() -> Any:
    """The shared engine; building yaql's grammar is slow, so it is built once."""
    global _engine, _context
    with _lock:
        if _engine is None:
            base = yaql.YaqlFactory().create(dict(_STATIC_OPTIONS))
            _engine = _Engine(base, dict(_STATIC_OPTIONS))
            _context = yaql.create_context()
    return _engine


@contextmanager
def _budgeted(limits: Limits) -> Iterator[None]:
    _budget.limits = limits
    _budget.deadline = time.monotonic() + limits.yaql_timeout
    try:
        yield
    finally:
        _budget.limits = None


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
            with _budgeted(limits):
                return statement.evaluate({"data": data}, _context.create_child_context())
        except _Timeout:
            raise self.error(
                f'"{self.name}" took longer than {limits.yaql_timeout} seconds'
            ) from None
        except yaql_exceptions.YaqlException as exc:
            raise self.error(str(exc)) from None
        except Exception as exc:  # user code: whatever it raises is its error
            raise self.error(f"{type(exc).__name__}: {exc}") from None
