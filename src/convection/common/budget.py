"""Budgets for the user code the engine evaluates: HOT's ``yaql`` function
and Mistral's YAQL and Jinja expressions.

Neither yaql nor Jinja can be handed a budget per call, so the evaluation in
progress lives here, per thread, and the hooks the languages call back into
read it: yaql reads its options on every function call and for every
collection it walks (:class:`BudgetedOptions` answers those reads and checks
the deadline there), and a Jinja sandbox checks in its calls, loops and
operators. One deadline then holds without a thread or a signal; yaql's own
``limitIterators`` and ``memoryQuota`` come from the same :class:`Limits`.

A single long builtin (one huge regular expression match) can still overrun
the deadline; the quotas bound the rest.
"""

from __future__ import annotations

import collections.abc  # yaql reads collections.abc without importing it
import threading
import time
from collections.abc import Iterator, Mapping
from contextlib import contextmanager
from typing import Any, Final

from convection.common.limits import Limits

_ = collections.abc  # imported for its side effect on yaql

#: yaql's option names for its own two budgets.
YAQL_ITERATORS: Final = "yaql.limitIterators"
YAQL_MEMORY: Final = "yaql.memoryQuota"


class Exceeded(Exception):
    """A budget of the evaluation in progress ran out; the message says which.

    Raised from inside yaql or Jinja; the caller turns it into its language's
    evaluation error, like any other failure of the expression.
    """


class _State(threading.local):
    limits: Limits | None = None
    deadline: float = 0.0


_state = _State()


@contextmanager
def budget(limits: Limits) -> Iterator[None]:
    """Run the body as one evaluation under ``limits``: one deadline for all
    it evaluates. Nested evaluations restore the outer one when they end."""
    saved = (_state.limits, _state.deadline)
    _state.limits = limits
    _state.deadline = time.monotonic() + limits.yaql_timeout
    try:
        yield
    finally:
        _state.limits, _state.deadline = saved


def current_limits() -> Limits | None:
    """The limits of the evaluation in progress (None outside one)."""
    return _state.limits


def check_time() -> None:
    """Stop the evaluation once its deadline has passed."""
    current = _state.limits
    if current is not None and time.monotonic() > _state.deadline:
        raise Exceeded(f"the evaluation took longer than {current.yaql_timeout} seconds")


def check_length(size: int) -> None:
    """Refuse a string (or an estimate of one) longer than the output cap."""
    current = _state.limits
    if current is not None and size > current.max_value_size:
        raise Exceeded(f"the result would be longer than {current.max_value_size} characters")


def check_count(count: int) -> None:
    """Refuse a collection longer than yaql's ``limitIterators``, in its words."""
    current = _state.limits
    if current is not None and 0 <= current.yaql_limit_iterators < count:
        raise Exceeded(f"Collection length exceeds {current.yaql_limit_iterators} elements")


def check_bits(bits: int) -> None:
    """Refuse an integer too large to hold (``10 ** 10 ** 9`` in one step)."""
    current = _state.limits
    if current is not None and bits > 8 * current.max_value_size:
        raise Exceeded(f"the number would be longer than {current.max_value_size} bytes")


class BudgetedOptions(Mapping[str, Any]):
    """yaql engine options that answer from the evaluation in progress."""

    def __init__(self, static: Mapping[str, Any]) -> None:
        self._static = dict(static)

    def __getitem__(self, key: str) -> Any:
        current = _state.limits
        if current is None:
            return self._static[key]
        check_time()
        if key == YAQL_ITERATORS:
            return current.yaql_limit_iterators
        if key == YAQL_MEMORY:
            return current.yaql_memory_quota
        return self._static[key]

    def __iter__(self) -> Iterator[str]:
        return iter(self._static)

    def __len__(self) -> int:
        return len(self._static)


def budgeted_yaql_engine(options: Mapping[str, Any], **factory_options: Any) -> Any:
    """A yaql engine whose options follow the evaluation in progress.

    ``options`` are the static ones (the budgets' entries are only defaults
    outside an evaluation); ``factory_options`` go to ``yaql.YaqlFactory``
    (Mistral's ``keyword_operator='=>'``, ``allow_delegates=False``). yaql is
    imported here, on first use: building its grammar is slow, and most
    processes never need it.
    """
    import yaql
    from yaql.language import factory

    base = yaql.YaqlFactory(**factory_options).create(dict(options))

    class _Engine(factory.YaqlEngine):  # type: ignore[misc]
        def __init__(self) -> None:
            super().__init__(base.lexer, base.parser, dict(options), base.factory)
            self._budgeted = BudgetedOptions(options)

        @property
        def options(self) -> Mapping[str, Any]:
            return self._budgeted

    return _Engine()


def default_yaql_options() -> dict[str, Any]:
    """The budget entries of a yaql engine's static options, from the
    default :class:`Limits`."""
    defaults = Limits()
    return {YAQL_ITERATORS: defaults.yaql_limit_iterators, YAQL_MEMORY: defaults.yaql_memory_quota}
