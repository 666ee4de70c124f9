"""What an action is, as the workflow engine sees it.

An action is a class (:class:`ActionPlugin`) with a name, a typed input
schema and ``run``. ``run`` returns an :data:`Outcome`, a value that says
how the action ended *or how it waits*: the engine, not the action, owns
time. An action that must wait returns :class:`Sleep` (the engine parks
the task on a timer row and calls ``resume`` later) or :class:`Pending`
(someone completes the action execution through the API), so a wait never
holds a worker. Mistral's equivalents: ``mistral_lib.actions.Action``
(``run``, ``is_sync``), ``Result(data, error)`` (``mistral_lib/actions/
types.py``) and the execution context (``mistral_lib/actions/context.py``).
"""

from __future__ import annotations

import abc
import copy
import json
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any, ClassVar, Final, Protocol, TypeAlias

from convection.common import DEFAULT_LIMITS, Limits

#: The JSON types an input may be declared with ("any" accepts every value).
JSON_TYPES: Final = ("string", "integer", "number", "boolean", "array", "object", "null", "any")


@dataclass(frozen=True, slots=True)
class InputParam:
    """One parameter of an action's input.

    ``type`` names JSON types (one, or a tuple when several are accepted, as
    Mistral's actions take ``"5"`` where they want a number). A parameter
    is required exactly when it has no default, as in Mistral, where a
    parameter without a default is ``NotDefined``. ``secret`` marks a value
    the engine must redact wherever it shows an input (passwords, keys,
    tokens); actions themselves never put such a value in a result or error.
    """

    type: str | tuple[str, ...] = "any"
    required: bool = False
    default: Any = None
    description: str = ""
    secret: bool = False

    def __post_init__(self) -> None:
        unknown = [t for t in self.types if t not in JSON_TYPES]
        if unknown:
            raise ValueError(f"unknown JSON type(s) {unknown}; expected {list(JSON_TYPES)}")
        if self.required and self.default is not None:
            raise ValueError("a required parameter has no default")

    @property
    def types(self) -> tuple[str, ...]:
        return (self.type,) if isinstance(self.type, str) else self.type


# -- outcomes ----------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class Success:
    """The action succeeded; ``data`` is its result (``task(x).result``)."""

    data: Any = None


@dataclass(frozen=True, slots=True)
class Failure:
    """The action failed; ``error`` is Mistral's error result: the message of
    the exception Mistral would raise (a string), or the data an action
    returns as ``Result(error=...)`` (std.fail's ``error_data``, std.http's
    response of a bad status)."""

    error: Any


@dataclass(frozen=True, slots=True)
class Sleep:
    """Call ``resume(ctx, params, state)`` after ``seconds``. ``state`` must
    be JSON: the engine stores it on the timer row, so a wait survives a
    restart of the engine."""

    seconds: float
    state: Mapping[str, Any] = field(default_factory=dict)


@dataclass(frozen=True, slots=True)
class Pending:
    """An asynchronous action (Mistral's ``is_sync() == False``): the action
    execution stays RUNNING until it is completed through the API
    (``PUT /v2/action_executions/<id>``). ``state`` is kept for the record."""

    state: Mapping[str, Any] = field(default_factory=dict)


Outcome: TypeAlias = Success | Failure | Sleep | Pending


# -- what an action may read ---------------------------------------------------


class StackOps(Protocol):
    """The stack operations Convection's ``convection.stack.*`` actions use.

    Each returns at once (the operation runs in the engine); the action
    polls ``show`` on a timer. Results are Heat's API dicts."""

    async def create(
        self,
        project: str,
        name: str,
        template: str,
        parameters: Mapping[str, Any],
        environment: str | None,
        files: Mapping[str, str],
        timeout_mins: int | None,
    ) -> str:
        """Start creating a stack; its id."""
        ...

    async def update(
        self,
        project: str,
        name_or_id: str,
        template: str | None,
        parameters: Mapping[str, Any],
        environment: str | None,
        files: Mapping[str, str],
    ) -> str:
        """Start updating a stack (PATCH, reusing what is not given); its id."""
        ...

    async def delete(self, project: str, name_or_id: str) -> None:
        """Start deleting a stack."""
        ...

    async def show(self, project: str, name_or_id: str) -> Mapping[str, Any] | None:
        """The stack as Heat shows it, or None when there is no such stack."""
        ...

    async def outputs(self, project: str, name_or_id: str) -> Mapping[str, Any]:
        """The stack's outputs, ``{output_key: output_value}``."""
        ...


class SignalOps(Protocol):
    """Signals to resources (Heat's ``resource signal``)."""

    async def signal(self, project: str, stack: str, resource: str, data: Mapping[str, Any]) -> int:
        """Deliver ``data`` to ``resource`` of ``stack``; the stored signal's id."""
        ...


class ActionContext(Protocol):
    """What an action may know about where it runs (Mistral's
    ``context.execution``), and the services Convection's actions need.

    ``stacks`` and ``signals`` are None where no service is attached (an
    action run on its own, without a store)."""

    @property
    def execution_id(self) -> str: ...
    @property
    def task_id(self) -> str | None: ...
    @property
    def action_execution_id(self) -> str: ...
    @property
    def task_name(self) -> str | None: ...
    @property
    def workflow_name(self) -> str | None: ...
    @property
    def project(self) -> str: ...
    @property
    def callback_url(self) -> str | None: ...
    @property
    def limits(self) -> Limits: ...
    @property
    def stacks(self) -> StackOps | None: ...
    @property
    def signals(self) -> SignalOps | None: ...


@dataclass(frozen=True, slots=True, kw_only=True)
class RunContext:
    """A plain :class:`ActionContext`: what the engine builds per action
    execution, and what an action run on its own (``action-execution
    create``) gets."""

    execution_id: str = ""
    task_id: str | None = None
    action_execution_id: str = ""
    task_name: str | None = None
    workflow_name: str | None = None
    project: str = ""
    callback_url: str | None = None
    limits: Limits = DEFAULT_LIMITS
    stacks: StackOps | None = None
    signals: SignalOps | None = None


# -- the plugin base -------------------------------------------------------------


class ActionPlugin(abc.ABC):
    """The base of every action. Subclasses set the class variables and
    implement ``run``; a waiting action implements ``resume`` too.

    An instance holds no state between ``run`` and ``resume``: whatever a
    resume needs travels in the :class:`Sleep`'s ``state``, because the
    engine may resume on another process after a restart.
    """

    name: ClassVar[str]
    description: ClassVar[str] = ""
    input_schema: ClassVar[Mapping[str, InputParam]] = {}
    #: Running this action again after an interrupted run is harmless
    #: (Mistral's ``safe-rerun`` is the task's choice; this is the default hint).
    safe_to_rerun: ClassVar[bool] = False
    #: Returns :class:`Pending` from ``run`` (Mistral's ``is_sync() == False``).
    is_async: ClassVar[bool] = False

    @abc.abstractmethod
    async def run(self, ctx: ActionContext, params: Mapping[str, Any]) -> Outcome:
        """Do the action once: its result, its error, or a wait."""

    async def resume(
        self, ctx: ActionContext, params: Mapping[str, Any], state: Mapping[str, Any]
    ) -> Outcome:
        """After a :class:`Sleep`. An action that never sleeps is never
        resumed by the engine; asked anyway (a corrupt timer row), it fails
        the task with a reason rather than raising inside the engine."""
        return Failure(f"action {self.name} does not sleep, so it cannot be resumed")

    @classmethod
    def class_name(cls) -> str:
        """The name validation messages give as ``class=`` (Mistral gives the
        action's Python class)."""
        return f"{cls.__module__}.{cls.__qualname__}"

    @classmethod
    def secret_params(cls) -> frozenset[str]:
        """The inputs the engine must redact wherever it shows them."""
        return frozenset(k for k, p in cls.input_schema.items() if p.secret)


def arguments(
    action: type[ActionPlugin] | ActionPlugin, params: Mapping[str, Any]
) -> dict[str, Any]:
    """``params`` with the schema's defaults filled in (Mistral merges the
    defaults under the given input, never over it)."""
    schema = action.input_schema
    merged = {k: copy.deepcopy(p.default) for k, p in schema.items() if not p.required}
    merged.update(params)
    return merged


def input_text(action: type[ActionPlugin]) -> str:
    """An action's input as Mistral's API writes it (``get_arg_list_as_str``):
    required names, then ``name=<default as JSON>``, joined by ``, ``."""
    parts = []
    for name, param in action.input_schema.items():
        parts.append(name if param.required else f"{name}={json.dumps(param.default)}")
    return ", ".join(parts)
