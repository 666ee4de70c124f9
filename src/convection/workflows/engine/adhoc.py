"""Actions run outside any workflow: Mistral's ``POST /v2/action_executions``
(``DefaultEngine.start_action``) and ``DELETE /v2/action_executions/<id>``.

The action is found and its input checked as a task's is (``actions.py``:
ad-hoc actions of the project over the registry, ``base-input`` layers,
the plugin's schema, secret parameters masked in the stored input).
Then, as Mistral dispatches it:

* ``run_sync``: it runs now and the finished execution is answered (an
  asynchronous action cannot: 400);
* not ``run_sync`` and (``save_result`` or an asynchronous action): a
  RUNNING row is written first and answered. An asynchronous action is
  started and left RUNNING, holding nothing, until its result comes
  through ``PUT /v2/action_executions/<id>`` (``complete_action_execution``);
  a synchronous one with ``save_result`` runs in the background of this
  process, its sleeps (``std.sleep``) as timers of the event loop;
* otherwise it runs now and nothing is stored (the answer has no id).

Not durable yet: a background run lost with its process leaves its row
RUNNING (Mistral's executor loss does the same until its heartbeat check
fails it); running it on the kernel needs a traversal kind whose owner is
an action execution (docs/workflows.md, "Action executions").
"""

from __future__ import annotations

import asyncio
from collections.abc import Mapping
from datetime import UTC, datetime
from typing import Any, Final

from convection.common import DEFAULT_LIMITS, Diagnostic, InvalidInput, Limits, NotFound
from convection.store import ActionExecutionRecord, Store, UpdateActionExecution
from convection.workflows.actions import (
    ActionRegistry,
    Failure,
    Outcome,
    Pending,
    RunContext,
    SignalOps,
    Sleep,
    StackOps,
    Success,
)
from convection.workflows.definitions import NotAllowed
from convection.workflows.engine import actions as act
from convection.workflows.engine import states
from convection.workflows.engine.launch import new_id
from convection.workflows.engine.operations import _action, action_execution_body

Body = dict[str, Any]

#: The longest ``timeout`` a caller may give, and the bound of a run
#: without one (a synchronous answer cannot wait longer than this).
MAX_TIMEOUT: Final = 3600.0
#: Runs in the background of this process, kept so they are not collected.
_BACKGROUND: set[asyncio.Task[None]] = set()


def _now() -> datetime:
    return datetime.now(UTC)


def _bad(message: str, *place: str) -> InvalidInput:
    return InvalidInput([Diagnostic(message, place)])


def checked_timeout(value: Any) -> float | None:
    """``params.timeout``: seconds, positive, at most :data:`MAX_TIMEOUT`."""
    if value is None or value == "":
        return None
    if isinstance(value, bool) or not isinstance(value, int | float | str):
        raise _bad(f"timeout must be a number of seconds, not {value!r}", "params", "timeout")
    try:
        seconds = float(value)
    except ValueError:
        message = f"timeout must be a number of seconds, not {value!r}"
        raise _bad(message, "params", "timeout") from None
    if not 0 < seconds <= MAX_TIMEOUT:
        raise _bad(f"timeout must be in (0, {MAX_TIMEOUT:g}] seconds", "params", "timeout")
    return seconds


async def start_action_execution(
    store: Store, registry: ActionRegistry, project: str, name: str, *,
    input: Mapping[str, Any] | None = None, namespace: str = "", run_sync: bool = False,
    save_result: bool = False, timeout: float | None = None,
    ports: Any = None, limits: Limits = DEFAULT_LIMITS,
) -> Body:  # fmt: skip
    """Run action ``name`` with ``input`` as Mistral's ``start_action``
    does (see the module's docstring); the action execution's body."""
    try:
        resolved = act.resolve(store, registry, project, name, None, namespace)
    except act.ActionError as exc:
        raise _bad(str(exc), "name") from None
    try:
        params = act.checked(resolved, act.base_input(resolved, dict(input or {}), {}))
    except act.ActionError as exc:
        raise _bad(str(exc), "input") from None
    is_sync = not resolved.plugin.is_async
    if run_sync and not is_sync:
        raise _bad("Action does not support synchronous execution.", "params", "run_sync")
    run = _Run(store, resolved, project, params, timeout, ports, limits)
    if not run_sync and (save_result or not is_sync):
        return await run.scheduled(is_sync)
    outcome = await run.outcome("")
    if save_result:
        return run.saved(outcome)
    return run.transient(outcome)


class _Run:
    """One action's run: its input, where it runs and how long it may take."""

    def __init__(
        self, store: Store, resolved: act.Resolved, project: str, params: dict[str, Any],
        timeout: float | None, ports: Any, limits: Limits,
    ) -> None:  # fmt: skip
        self.store = store
        self.resolved = resolved
        self.project = project
        self.params = params
        self.timeout = timeout or MAX_TIMEOUT
        self.ports = ports
        self.limits = limits

    def row(
        self, row_id: str, state: str, *, is_sync: bool = True,
        output: dict[str, Any] | None = None,
    ) -> ActionExecutionRecord:  # fmt: skip
        """The row as stored: secret parameters masked, as a task's are."""
        secret = self.resolved.plugin.secret_params()
        shown = {k: ("******" if k in secret else v) for k, v in self.params.items()}
        return ActionExecutionRecord(
            id=row_id, project=self.project, name=self.resolved.name, state=state,
            input=shown, is_sync=is_sync, created_at=_now(), accepted=output is not None,
            output=output or {},
        )  # fmt: skip

    def ctx(self, row_id: str) -> RunContext:
        stacks: StackOps | None = self.ports
        signals: SignalOps | None = self.ports
        return RunContext(
            action_execution_id=row_id, project=self.project, limits=self.limits,
            stacks=stacks, signals=signals,
        )  # fmt: skip

    async def outcome(self, row_id: str) -> Outcome:
        """Run to the end within the timeout: a sleep is the event loop's timer."""
        try:
            return await asyncio.wait_for(self._to_end(row_id), self.timeout)
        except TimeoutError:
            return Failure(f"Timeout after {int(self.timeout)} seconds")

    async def _to_end(self, row_id: str) -> Outcome:
        ctx = self.ctx(row_id)
        outcome = await act.start(self.resolved, ctx, self.params)
        while isinstance(outcome, Sleep):
            await asyncio.sleep(max(outcome.seconds, 0.0))
            outcome = await act.resume(self.resolved, ctx, self.params, outcome.state)
        return outcome

    async def scheduled(self, is_sync: bool) -> Body:
        row = self.row(new_id(), states.RUNNING, is_sync=is_sync)
        self.store.workflows.create_action_execution(row)
        if is_sync:
            task = asyncio.get_running_loop().create_task(self._background(row.id))
            _BACKGROUND.add(task)
            task.add_done_callback(_BACKGROUND.discard)
        else:
            first = await act.start(self.resolved, self.ctx(row.id), self.params)
            if not isinstance(first, Pending | Sleep):
                self._finish(row.id, first)
        return _body(self.store, row.id)

    async def _background(self, row_id: str) -> None:
        self._finish(row_id, await self.outcome(row_id))

    def _finish(self, row_id: str, outcome: Outcome) -> None:
        """The result, unless a completion through the API came first."""
        found = self.store.workflows.get_action_execution(row_id)
        if found is None or found.state != states.RUNNING:
            return
        state, output = _ended(outcome)
        fields = {"state": state, "accepted": True, "output": output}
        self.store.apply([UpdateActionExecution(row_id, fields)])

    def saved(self, outcome: Outcome) -> Body:
        state, output = _ended(outcome)
        row = self.row(new_id(), state, output=output)
        self.store.workflows.create_action_execution(row)
        return _body(self.store, row.id)

    def transient(self, outcome: Outcome) -> Body:
        """Mistral's answer for a run it did not store: no id."""
        state, output = _ended(outcome)
        body = action_execution_body(self.store, self.row("", state, output=output))
        body.update(id=None, created_at=None, updated_at=None)
        return body


def _ended(outcome: Outcome) -> tuple[str, dict[str, Any]]:
    if isinstance(outcome, Success):
        return states.SUCCESS, {"result": outcome.data}
    if isinstance(outcome, Failure):
        return states.ERROR, {"result": outcome.error}
    return states.ERROR, {"result": f"The action did not end: {type(outcome).__name__}"}


def _body(store: Store, row_id: str) -> Body:
    found = store.workflows.get_action_execution(row_id)
    if found is None:
        raise NotFound("action execution", row_id)
    return action_execution_body(store, found)


def delete_action_execution(
    store: Store, project: str, action_execution_id: str, *, allowed: bool
) -> None:
    """Mistral's delete: only when the server allows it
    (``[api] allow_action_execution_deletion``), only an ad-hoc one (no
    task) and only once it has ended. Another project's is not found
    before the guard is asked, so the guard tells nothing about it."""
    record = _action(store, project, action_execution_id)
    if not allowed:
        raise NotAllowed("Action execution deletion is not allowed.")
    if record.task_execution_id:
        raise NotAllowed("Only ad-hoc action execution can be deleted.")
    if record.state not in states.TERMINAL:
        raise NotAllowed("Only completed action execution can be deleted.")
    store.workflows.delete_action_execution(record.id)
