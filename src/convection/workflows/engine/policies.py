"""A task's policies, evaluated when their hook runs (Mistral evaluates a
policy's expression against the task's context just before applying it,
then checks its type: ``Invalid data type in <Policy>``)."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from convection.workflows.engine.data import Host, Structural, evaluated, expression_context
from convection.workflows.engine.dispatch import with_items_names
from convection.workflows.engine.run import ExecutionRun, TaskMemory

_CLASS = {
    "wait-before": "WaitBeforePolicy",
    "wait-after": "WaitAfterPolicy",
    "timeout": "TimeoutPolicy",
    "pause-before": "PauseBeforePolicy",
    "concurrency": "ConcurrencyPolicy",
    "retry.count": "RetryPolicy",
    "retry.delay": "RetryPolicy",
    "fail-on": "FailOnPolicy",
}


def value(
    run: ExecutionRun, memory: TaskMemory, raw: Any, name: str, *, after: bool = False
) -> Any:
    if not isinstance(raw, str):
        return raw
    host = Host(run, memory, with_items_names(run))
    return evaluated(raw, expression_context(run, memory, after=after), host)


def number(run: ExecutionRun, memory: TaskMemory, raw: Any, name: str) -> float:
    got = value(run, memory, raw, name)
    if isinstance(got, bool) or not isinstance(got, int | float) or got < 0:
        raise Structural(
            f"Invalid data type in {_CLASS.get(name, name)}: {got!r}. Value(s) can be shown "
            f"after YAQL evaluating. If you use YAQL here, check the expression type."
        )
    return float(got)


def flag(run: ExecutionRun, memory: TaskMemory, raw: Any, *, after: bool = False) -> bool:
    return bool(value(run, memory, raw, "flag", after=after))


def seconds_text(value: float) -> str:
    """A delay as Mistral prints it (``[delay=10]``)."""
    return str(int(value)) if value == int(value) else str(value)


_ = Mapping
