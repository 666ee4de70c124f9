"""Stack convergence as a front-end of the kernel.

The kernel claims nodes, journals outcomes and keeps traversals alive
across crashes; this module says what that means for a stack:

* a traversal is a stack's current operation, taken up with its target
  definition and resource view (``takeup``) and unwanted once its stack
  points at another traversal;
* a node's job is an update, cleanup, check, suspend or resume of one
  resource (the ``JOBS`` table), within the per-type bounds;
* a failure ends the run at once when the stack rolls back (``finish``);
* hook and signal wakes are timers with purposes of their own;
* a run ends by writing the stack's final state and outputs, and maybe
  starting its rollback.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Awaitable, Callable, Sequence
from datetime import datetime

from convection.common import Action, Status
from convection.convergence import lifecycle as lc
from convection.convergence import signal_wake
from convection.convergence.config import EngineConfig
from convection.convergence.finish import (
    fail_without_rollback,
    final_state,
    finish_many,
    rolls_back,
)
from convection.convergence.hooks import WAKE_PURPOSE, wake
from convection.convergence.hub import NestedHub
from convection.convergence.job_action import run_check, run_resume, run_suspend
from convection.convergence.job_cleanup import run_cleanup
from convection.convergence.job_update import run_update
from convection.convergence.operations import Warm, rollback_operation, start_operation
from convection.convergence.run import TraversalRun
from convection.convergence.takeup import take_up
from convection.convergence.templates import Definitions
from convection.kernel import Journal, Outcome
from convection.resources import TypeRegistry, WorkflowsFor
from convection.store import (
    STACK,
    Change,
    DeleteResource,
    NodeRecord,
    Store,
    TimerRecord,
    TraversalRecord,
    UpdateResource,
)

_log = logging.getLogger(__name__)

Job = Callable[[TraversalRun, NodeRecord], Awaitable[Outcome]]

JOBS: dict[str, Job] = {
    "update": run_update,
    "cleanup": run_cleanup,
    "check": run_check,
    "suspend": run_suspend,
    "resume": run_resume,
}


class StackFrontEnd:
    """What stacks mean to the kernel (``kernel.FrontEnd[TraversalRun]``)."""

    def __init__(
        self,
        journal: Journal[Store],
        registry: TypeRegistry,
        config: EngineConfig,
        *,
        definitions: Definitions,
        warm: Warm,
        hub: NestedHub,
        rescan: Callable[[], None],
    ) -> None:
        self.store = journal.store
        self.services = (self.store, journal, registry, config)
        self.registry = registry
        self.config = config
        self.definitions = definitions
        self.warm = warm
        self.hub = hub
        #: Set by the workflow layer when it joins this engine (``attach``).
        self.workflows: WorkflowsFor | None = None
        #: Asks the kernel to look for new work at once (a rollback started).
        self._rescan = rescan
        self._type_slots: dict[str, asyncio.Semaphore] = {}

    def reset(self) -> None:
        """A new event loop: asyncio primitives belong to one loop."""
        self._type_slots = {}

    # -- taking up -------------------------------------------------------------

    def take_up(self, traversal: TraversalRecord) -> TraversalRun | None:
        return self.adopted(take_up(traversal, self.services, self.definitions, self.warm))

    def adopted(self, run: TraversalRun | None) -> TraversalRun | None:
        if run is not None:
            run.hub = self.hub
            run.workflows = self.workflows
        return run

    def current(self, run: TraversalRun) -> bool:
        stack = self.store.get_stack_by_id(run.stack.id)
        return stack is not None and stack.traversal_id == run.id

    def wanted(self, traversal: TraversalRecord) -> bool:
        if traversal.kind != STACK:
            return True  # another front-end's: its timers are not ours to drop
        stack = self.store.get_stack_by_id(traversal.stack_id)
        return stack is not None and stack.traversal_id == traversal.id

    # -- jobs --------------------------------------------------------------------

    async def run_job(self, run: TraversalRun, node: NodeRecord) -> Outcome:
        job = JOBS[node.kind]
        slots = self._slots_for(run, node)
        if slots is None:
            return await job(run, node)
        async with slots:
            return await job(run, node)

    def _slots_for(self, run: TraversalRun, node: NodeRecord) -> asyncio.Semaphore | None:
        if not self.config.per_type or node.resource_id is None:
            return None
        row = run.view.get(node.resource_id)
        limit = None if row is None else self.config.per_type.get(row.type)
        if row is None or limit is None:
            return None
        slots = self._type_slots.get(row.type)
        if slots is None:
            slots = self._type_slots[row.type] = asyncio.Semaphore(limit)
        return slots

    def observe(self, run: TraversalRun, changes: Sequence[Change]) -> None:
        for c in changes:
            if isinstance(c, UpdateResource):
                run.view.update(c.resource_id, c.fields)
            elif isinstance(c, DeleteResource):
                run.view.remove(c.resource_id)

    def stops_on_failure(self, run: TraversalRun) -> bool:
        return rolls_back(run)

    def fire_timer(
        self, run: TraversalRun, timer: TimerRecord, node: NodeRecord | None
    ) -> list[Change] | None:
        if timer.purpose.startswith(WAKE_PURPOSE):
            return wake(self.store, run.id, timer.node_key, timer.purpose[len(WAKE_PURPOSE) :])
        if signal_wake.is_wake(timer.purpose):
            return signal_wake.fire(self.store, run.id, timer.node_key, timer.purpose, node=node)
        return None

    def fail_node(
        self, run: TraversalRun, node: NodeRecord, error: Exception, problem: str
    ) -> list[Outcome]:
        action = _action_of(node)
        reason = f"{type(error).__name__}: resources.{node.resource_name}: {problem}"
        bare = Outcome("failed", failure=(action, reason))
        row = run.view.get(node.resource_id) if node.resource_id is not None else None
        return [bare] if row is None else [lc.failed(row, action, reason), bare]

    # -- ending ------------------------------------------------------------------

    def finish(self, runs: Sequence[TraversalRun], now: datetime) -> bool:
        for run in runs:
            self.definitions.retain(run.stack.id, _still_needed(run))
            self.hub.compiles.forget(run.stack.id)
        finish_many(runs, self._rollback)
        # A child ending wakes its owner (convergence.nested_wake).
        return any(run.stack.parent_id is not None for run in runs)

    def _rollback(self, run: TraversalRun) -> None:
        """Start the rollback of ``run``'s failed stack, which supersedes
        ``run``'s traversal (left in progress for it: convergence.finish).
        If it cannot start, the stack ends failed with the reason, rather
        than being ended again at every scan."""
        stack = self.store.get_stack_by_id(run.stack.id)
        if stack is None or stack.traversal_id != run.id:
            return
        try:
            op = rollback_operation(self.store, self.registry, self.definitions, stack, self.config)
            start_operation(self.store, op, self.warm)
        except Exception as exc:
            _log.exception("stack %s: the rollback could not start", stack.id)
            fail_without_rollback(run, f"{type(exc).__name__}: rollback could not start: {exc}")
        self._rescan()


def _still_needed(run: TraversalRun) -> tuple[int | None, ...]:
    """The templates of ``run``'s stack a later operation may compile once
    this one ends (``Definitions.retain``): none after a completed delete,
    the target after a completed converge, else the target and the
    rollback target."""
    status, _ = final_state(run)
    stack, action = run.stack, run.traversal.action
    if status == Status.COMPLETE and action == Action.DELETE:
        return ()
    if status == Status.COMPLETE and action in (Action.CREATE, Action.UPDATE, Action.ROLLBACK):
        return (stack.template_id,)
    return (stack.template_id, stack.prev_template_id)


def _action_of(node: NodeRecord) -> str:
    """The resource action a node performs, for its failure reason."""
    if node.kind == "cleanup":
        return Action.DELETE
    if node.kind == "update":
        return Action.CREATE if node.payload.get("action") == "CREATE" else Action.UPDATE
    return node.kind.upper()
