"""YAQL as Mistral runs it (``mistral/expressions/yaql_expression.py``),
budgeted as HOT's yaql is.

Mistral's engine: ``YaqlFactory(keyword_operator='=>',
allow_delegates=False)``, the standard library of ``yaql.create_context()``
with Mistral's functions registered in it, the data context as ``$`` and
its ``__env``, ``__execution`` and ``__task_execution`` as variables of
the same names. Its results are unboxed (frozen dicts to dicts, iterators
to lists); sets stay sets (``convert_sets_to_lists=False``).

Budgets: yaql's ``limitIterators`` and ``memoryQuota`` and a deadline, all
read through :class:`convection.common.BudgetedOptions` (shared with HOT's yaql),
plus checks on the three integer operations that can build a number too
large to hold in one step (``*``, ``pow``, ``shiftBitsLeft``), which yaql
leaves unbounded. A single long builtin (one huge regular expression
match) can still overrun the deadline; the quotas bound the rest.
"""

from __future__ import annotations

import collections.abc  # yaql reads collections.abc without importing it
import functools
import inspect
import re
import threading
from collections.abc import Callable, Mapping
from typing import Any, Final

import yaql
from yaql.language import exceptions as yaql_exceptions
from yaql.language import specs, yaqltypes

from convection.common import budgeted_yaql_engine, default_yaql_options
from convection.workflows.lang.expr_data import freeze, thaw
from convection.workflows.lang.expr_errors import yaql_failure
from convection.workflows.lang.expr_functions import FUNCTIONS
from convection.workflows.lang.expr_state import check_bits

_ = collections.abc  # imported for its side effect on yaql

#: Mistral's ``[yaql]`` defaults, but the budgets, which come from Limits,
#: and the output conversion, which :func:`thaw` does without copying.
_STATIC_OPTIONS: Final[dict[str, Any]] = {
    **default_yaql_options(),
    "yaql.convertSetsToLists": False,
    "yaql.iterableDicts": False,
    "yaql.convertOutputData": False,
}

#: Variables Mistral copies from the data context into the yaql context.
_SPECIAL: Final = ("__env", "__execution", "__task_execution")


class _Shared:
    """The engine and root context, built once (yaql's grammar is slow to
    build); parsing shares ply's lexer, so it is serialised."""

    def __init__(self) -> None:
        self.engine = budgeted_yaql_engine(
            _STATIC_OPTIONS, keyword_operator="=>", allow_delegates=False
        )
        self.root = _root_context()
        self.parse_lock = threading.Lock()


_shared: _Shared | None = None
_build_lock = threading.Lock()


def _get() -> _Shared:
    global _shared
    with _build_lock:
        if _shared is None:
            _shared = _Shared()
    return _shared


def _root_context() -> Any:
    context = yaql.create_context()
    for name, function in FUNCTIONS.items():
        context.register_function(_adapted(function), name=name)
    budgets = context.create_child_context()
    for function in _BOUNDED:
        budgets.register_function(function)
    return budgets


def _adapted(function: Callable[..., Any]) -> Callable[..., Any]:
    """A Mistral function as yaql calls it: arguments unwrapped, result viewed.

    The adapter carries the function's signature, which yaql reads for the
    parameter names (``tasks(workflowExecutionId => ...)`` as in Mistral).
    """

    def call(*args: Any, **kwargs: Any) -> Any:
        plain = [thaw(a) for a in args]
        named = {k: thaw(v) for k, v in kwargs.items()}
        return freeze(function(*plain, **named))

    call.__signature__ = inspect.signature(function)  # type: ignore[attr-defined]
    call.__name__ = function.__name__
    return call


def _multiply(left: Any, right: Any) -> Any:
    if isinstance(left, int) and isinstance(right, int):
        check_bits(abs(left).bit_length() + abs(right).bit_length())
    return left * right


def _power(a: Any, b: Any, c: Any = None) -> Any:
    if c is None and isinstance(a, int) and isinstance(b, int) and b > 0 and abs(a) > 1:
        check_bits(abs(a).bit_length() * b)
    return pow(a, b, c)


def _shift_left(value: int, bits_number: int) -> int:
    check_bits(abs(value).bit_length() + bits_number)
    return value << bits_number


def _typed(function: Callable[..., Any], name: str, **types: Any) -> Callable[..., Any]:
    """Declare yaql parameter types without yaql's (untyped) decorators."""
    for parameter, value_type in types.items():
        function = specs.parameter(parameter, value_type)(function)
    return specs.name(name)(function)  # type: ignore[no-any-return]


_BOUNDED: Final = (
    _typed(_multiply, "#operator_*", left=yaqltypes.Number(), right=yaqltypes.Number()),
    _typed(
        _power,
        "pow",
        a=yaqltypes.Number(),
        b=yaqltypes.Number(),
        c=yaqltypes.Number(nullable=True),
    ),
    _typed(_shift_left, "shiftBitsLeft", value=int, bits_number=int),
)


@functools.lru_cache(maxsize=8192)
def parsed(expression: str) -> tuple[Any, str | None]:
    """``(statement, None)``, or ``(None, message)`` with yaql's wording.

    Mistral's ``YAQLEvaluator.validate`` turns yaql's errors and the
    ``KeyError``, ``ValueError`` and ``TypeError`` its parser can raise
    into the grammar error's message.
    """
    shared = _get()
    try:
        with shared.parse_lock:
            return shared.engine(expression), None
    except (yaql_exceptions.YaqlException, KeyError, ValueError, TypeError) as exc:
        return None, str(getattr(exc, "message", exc))


def evaluate(expression: str, data: Any) -> Any:
    """The value of one expression (the text inside ``<% %>``, stripped)
    against the frozen data context, or Mistral's evaluation error."""
    try:
        return _evaluate(expression, data)
    except Exception as exc:  # user code: whatever it raises is its error
        raise yaql_failure(expression, exc) from None


def _evaluate(expression: str, data: Any) -> Any:
    keys = _path(expression)
    if keys is not None:
        found = _lookup(data, keys)
        if found is not _MISSING:
            return thaw(found)
    statement, error = parsed(expression)
    if statement is None:
        raise _GrammarError(error)
    context = _get().root.create_child_context()
    context["$"] = data
    if isinstance(data, Mapping):
        for name in _SPECIAL:
            context[name] = data.get(name)
    return thaw(statement.evaluate(context=context))


#: ``$`` and ``$.a.b``: yaql's keyword access (``d[key]``) on mappings, the
#: commonest expression of all, read without yaql's ~150 us of dispatch.
_PATH_EXPRESSION: Final = re.compile(r"\$((?:\.(?!__)[^\W\d]\w*)*)")
_MISSING: Final = object()


@functools.lru_cache(maxsize=8192)
def _path(expression: str) -> tuple[str, ...] | None:
    found = _PATH_EXPRESSION.fullmatch(expression)
    return tuple(found.group(1).split(".")[1:]) if found else None


def _lookup(data: Any, keys: tuple[str, ...]) -> Any:
    """The value at ``keys`` through mappings only; anything else (a list,
    a missing key) is left to yaql, which says what it says about it."""
    for key in keys:
        if not isinstance(data, Mapping) or key not in data:
            return _MISSING
        data = data[key]
    return data


class _GrammarError(Exception):
    """A parse error met while evaluating: its message is yaql's."""
