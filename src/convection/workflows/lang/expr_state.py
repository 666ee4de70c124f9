"""The evaluation in progress: its budgets, its host, and its data.

An expression runs user code inside the engine, so every evaluation carries
budgets: yaql's own ``limitIterators`` and ``memoryQuota`` (``Limits``'
``yaql_*`` fields, as HOT's yaql uses them), a wall-clock deadline and a
cap on the size of any string it builds (``max_value_size``). Neither yaql
nor Jinja can be handed a budget per call, so the evaluation in progress
lives here, per thread, and the hooks both languages call back into
(yaql's option reads, the Jinja sandbox's calls, loops and operators) read
it. One check then serves both languages, without a thread or a signal.

The functions Mistral's expressions call that need engine data (``task()``,
``tasks()``, ``execution()``, ...) reach the engine through the
:class:`ExpressionHost` of the evaluation in progress; this module holds
that protocol so that the pure language imports no engine.

The budgets themselves are :mod:`convection.common.budget`, which HOT's
yaql function shares; this module adds the host and the data.
"""

from __future__ import annotations

import threading
from collections.abc import Iterator, Mapping, Sequence
from contextlib import contextmanager
from typing import Any, Protocol

from convection.common import Exceeded as Exceeded
from convection.common import Limits, budget, current_limits
from convection.common import check_bits as check_bits
from convection.common import check_count as check_count
from convection.common import check_length as check_length
from convection.common import check_time as check_time


class ExpressionHost(Protocol):
    """What Mistral's context functions read from the engine.

    The engine binds one host to each evaluation site (a task's input, its
    publish, a transition guard, the workflow's output), so the host knows
    the current workflow execution and task; expressions never see it.
    Every value returned is plain JSON-like data, which expressions only
    read (they are handed read-only views of it, never a copy).
    """

    def task(self, name: str | None) -> Mapping[str, Any] | None:
        """``task(name)``: with no name, or the current task's own name, the
        current task execution; otherwise the last execution of that name in
        this workflow execution, or None. The shape is Mistral's: ``id``,
        ``name``, ``spec``, ``state``, ``state_info``, ``result``,
        ``published``, ``type``, ``workflow_execution_id``, ``created_at``,
        ``updated_at``."""
        ...

    def tasks(
        self,
        workflow_execution_id: str | None,
        recursive: bool,
        state: str | None,
        flat: bool,
    ) -> Sequence[Mapping[str, Any]]:
        """``tasks(...)``: task executions shaped as :meth:`task` returns them.
        With no id, every task execution the caller may see; ``recursive``
        walks into sub-workflows (with an id); ``flat`` keeps action tasks
        and workflow tasks whose child's state differs from the task's."""
        ...

    def execution(self) -> Mapping[str, Any]:
        """``execution()``: ``id``, ``name``, ``spec``, ``input``, ``params``,
        ``created_at``, ``updated_at``, ``root_execution_id``."""
        ...

    def executions(
        self,
        execution_id: str | None,
        root_execution_id: str | None,
        state: str | None,
        from_time: str | None,
        to_time: str | None,
    ) -> Sequence[Mapping[str, Any]]:
        """``executions(...)``: workflow executions filtered by id, root id
        and state (equal) and ``from_time <= created_at < to_time``."""
        ...

    def env(self) -> Mapping[str, Any]:
        """``env()``: the root execution's environment (``{}`` if none)."""
        ...

    def global_context(self) -> Mapping[str, Any]:
        """The workflow execution's own context, which ``global(name)``
        reads: global publishes, ``vars``, ``openstack``, ``__execution``."""
        ...


class _State(threading.local):
    """The host and data of the evaluation in progress on this thread."""

    host: ExpressionHost | None = None
    data: Any = None


_state = _State()


@contextmanager
def evaluating(limits: Limits, host: ExpressionHost | None, data: Any) -> Iterator[None]:
    """Run the body as one evaluation: one deadline for all its expressions."""
    saved = (_state.host, _state.data)
    _state.host = host
    _state.data = data
    try:
        with budget(limits):
            yield
    finally:
        _state.host, _state.data = saved


def limits() -> Limits | None:
    """The budgets of the evaluation in progress (None outside one)."""
    return current_limits()


def host() -> ExpressionHost | None:
    return _state.host


def data() -> Any:
    """The data context of the evaluation in progress (frozen)."""
    return _state.data
