"""The engine: claims ready nodes, runs their jobs, journals the outcomes.

It knows nothing about what a node does: a table maps each node kind to a
job, and a job returns an :class:`Outcome` value. The walker's part is the
loop (Terraform's ``dag/walk.go`` shape):

* take up every active traversal in the store (a crashed engine's too);
* fire due timers, making sleeping nodes ready again;
* claim ready nodes under a lease, within the concurrency bounds, and start
  each job on the event loop;
* write each outcome with its node's state and its successors' release as
  one journal entry; entries of one event-loop turn share one transaction;
* on failure, skip everything downstream (the user sees the cause, not its
  echoes); when nothing is left, write the stack's final state.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
from collections.abc import Awaitable, Callable
from datetime import UTC, datetime, timedelta

from convection.engine import lifecycle as lc
from convection.engine._gc import full_collections_deferred
from convection.engine.config import EngineConfig
from convection.engine.finish import fail_without_rollback, final_state, finish_many, rolls_back
from convection.engine.job_action import run_check, run_resume, run_suspend
from convection.engine.job_cleanup import run_cleanup
from convection.engine.job_update import run_update
from convection.engine.journal import Journal
from convection.engine.leases import LOST, TraversalLeases
from convection.engine.lifecycle import Outcome
from convection.engine.nested import NestedHub
from convection.engine.operations import Warm, rollback_operation, start_operation
from convection.engine.run import TraversalRun
from convection.engine.takeup import count_nodes, take_up
from convection.engine.templates import Definitions
from convection.engine.timers import Timers
from convection.resources.registry import TypeRegistry
from convection.runtime.asyncio_executor import AsyncioExecutor
from convection.states import Action, Status
from convection.store.api import (
    AddTimer,
    Change,
    DeleteResource,
    NodeRecord,
    ReleaseSuccessors,
    StackRecord,
    StaleTraversal,
    Store,
    TraversalRecord,
    UpdateNode,
    UpdateResource,
    UpdateTraversal,
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


#: A node's outcome may be refused by the store this many times in a row
#: before the node fails; the count lives in its payload under UNRECORDED.
RECORD_ATTEMPTS = 3
UNRECORDED = "unrecorded"


def _now() -> datetime:
    return datetime.now(UTC)


class Engine:
    """Runs every active traversal of one store, in this process.

    Any number of engines (processes) may share a store: each traversal is
    run by one engine at a time, under a lease (engine.leases); nodes are
    claimed atomically under leases; a traversal whose engine died is taken
    up by the next one that scans once its lease lapsed.
    """

    def __init__(
        self,
        store: Store,
        registry: TypeRegistry,
        config: EngineConfig | None = None,
        *,
        definitions: Definitions | None = None,
        warm: Warm | None = None,
    ) -> None:
        self.store = store
        self.registry = registry
        self.config = config or EngineConfig()
        self.journal = Journal(store)
        self.definitions = definitions or Definitions()
        self.warm = warm or Warm()
        self.runs: dict[str, TraversalRun] = {}
        self.timers = Timers(store, self.journal)
        self.hub = NestedHub(
            self.definitions, self.warm, started=self._take_up_now, adopt=self._adopt_started
        )
        self.executor = AsyncioExecutor()
        self._claimed: dict[tuple[str, str], NodeRecord] = {}
        self._hungry: set[str] = set()
        self._type_slots: dict[str, asyncio.Semaphore] = {}
        self._wake: asyncio.Event | None = None
        self._last_scan = datetime.min.replace(tzinfo=UTC)
        self._last_lease = _now()
        self.leases = TraversalLeases(store, self.config)
        #: Active traversals another engine held at the last scan.
        self._foreign = False

    @property
    def peak(self) -> int:
        """Most jobs ever running at once (for tests of the bound)."""
        return self.executor.peak

    @property
    def services(self) -> tuple[Store, Journal, TypeRegistry, EngineConfig]:
        return self.store, self.journal, self.registry, self.config

    # -- the loop ------------------------------------------------------------

    def start(self) -> None:
        """Renew the leases of runs kept from a previous ``run`` (dropping
        those another engine took since), reclaim nodes whose engine died,
        and take up every active traversal."""
        self._renew_leases(_now())
        self._scan(force=True)

    async def run(self, *, until: Callable[[], bool] | None = None, idle_exit: bool = True) -> None:
        """Work until ``until()`` holds (or, with ``idle_exit``, until no
        traversal is active), then let running jobs finish and return."""
        self._wake = asyncio.Event()
        self._type_slots = {}  # asyncio primitives belong to one event loop
        self.journal.reset()
        with full_collections_deferred():  # see engine._gc
            self.start()
            await self._loop(until, idle_exit)
            await self._drain()
        # A clean stop: another engine may take our traversals up at once.
        self.leases.release(self.runs)

    async def _loop(self, until: Callable[[], bool] | None, idle_exit: bool) -> None:
        while True:
            self._scan()
            self.timers.fire(_now(), self.runs, self._hungry)
            self._dispatch()
            self._finish_ready()
            if until is not None and until():
                break
            if idle_exit and not self.runs and not self.executor.running:
                self._scan(force=True)  # a last look: work may have just started
                if not self.runs and not self._foreign:
                    break
            await self._sleep()

    async def _sleep(self) -> None:
        assert self._wake is not None
        timeout = self.config.scan_seconds
        due = self.timers.next_due(self.runs)
        if due is not None:
            timeout = min(timeout, max(0.0, (due - _now()).total_seconds()))
        if not self._wake.is_set() and timeout > 0:
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(self._wake.wait(), timeout)
        self._wake.clear()

    async def _drain(self) -> None:
        await self.executor.drain()
        self.journal.flush()
        self._finish_ready()

    # -- scanning: new traversals, supersedes, cancels, deadlines -------------

    def _scan(self, *, force: bool = False) -> None:
        now = _now()
        if not force and (now - self._last_scan).total_seconds() < self.config.scan_seconds:
            return
        self._last_scan = now
        if (now - self._last_lease).total_seconds() > self.config.lease_seconds / 3:
            self._renew_leases(now)
        self._foreign = False
        mine, others = self.store.scan_active(self.config.owner)
        active = set(mine)
        for tid in mine:
            if tid not in self.runs and (traversal := self.store.get_traversal(tid)) is not None:
                self._take(traversal, now)  # ours, yet not running here
        for traversal in others:
            active.add(traversal.id)
            if traversal.id not in self.runs:
                self._take(traversal, now)
        for run in list(self.runs.values()):
            if run.tally.stopping == LOST:
                continue
            if run.id in active:
                # Still IN_PROGRESS and its stack's: only the deadline can
                # have changed (no two reads per run per scan: with 1,000
                # child stacks running, that was most of a scan).
                _check_deadline(run, now)
            else:
                self._check_run(run, now)
        if any(run.tally.parked for run in self.runs.values()):
            # A hook may have been cleared by another process: its wake is
            # a timer row this engine has not heard of.
            self.timers.forget()

    def _take(self, traversal: TraversalRecord, now: datetime) -> None:
        """Take ``traversal`` up if no other engine holds its lease."""
        if self.leases.held_elsewhere(traversal, now) or not self.leases.take(traversal.id):
            self._foreign = True
            return
        run = take_up(traversal, self.services, self.definitions, self.warm)
        if run is None:
            self.leases.release([traversal.id])
        self._adopt(run)

    def _adopt(self, run: TraversalRun | None) -> None:
        if run is not None:
            run.hub = self.hub
            self.runs[run.id] = run
            self._hungry.add(run.id)
            self.timers.forget()

    def _take_up_now(self, traversal_id: str) -> None:
        """A job started a traversal (a child stack): run it without
        waiting for the next scan."""
        traversal = self.store.get_traversal(traversal_id)
        if traversal is None:
            return
        self.runs.pop(traversal_id, None)
        self._take(traversal, _now())
        if self._wake is not None:
            self._wake.set()

    def _adopt_started(self, traversal: TraversalRecord, stack: StackRecord) -> None:
        """A child stack a job of this engine just wrote, its lease already
        ours (``engine.nested``): run it at once from the warm hand-over,
        without reading back what was just written."""
        self.runs.pop(traversal.id, None)
        self._adopt(take_up(traversal, self.services, self.definitions, self.warm, stack=stack))
        if self._wake is not None:
            self._wake.set()

    def _check_run(self, run: TraversalRun, now: datetime) -> None:
        stack = self.store.get_stack_by_id(run.stack.id)
        if stack is None or stack.traversal_id != run.id:
            run.tally.stopping = "superseded"
            return
        traversal = self.store.get_traversal(run.id)
        if traversal is not None and traversal.status not in ("IN_PROGRESS", "CANCELLED"):
            run.tally.stopping = LOST  # another engine finished it: see engine.leases
            return
        if traversal is not None and traversal.status == "CANCELLED":
            if run.tally.stopping != "cancelled":
                run.tally.stopping = "cancelled"
                count_nodes(run, self.store.list_nodes(run.id))
            return
        if run.deadline is not None and now >= run.deadline and run.tally.stopping is None:
            run.tally.stopping = "timeout"

    def _renew_leases(self, now: datetime) -> None:
        self._last_lease = now
        until = now + timedelta(seconds=self.config.lease_seconds)
        for lost in self.leases.renew(self.runs, now):
            # Another engine took it up (we were held up past the lease):
            # its work is no longer ours to count or write.
            _log.warning("traversal %s: lease taken by another engine; dropping it", lost)
            self.runs[lost].tally.stopping = LOST
        for (tid, key), _node in self._claimed.items():
            if (run := self.runs.get(tid)) is not None and run.tally.stopping == LOST:
                continue
            self.journal.submit(tid, progress=[UpdateNode(tid, key, {"lease_until": until})])
        # Our own leases first: when the loop was held up past a lease (a
        # loaded machine), reclaiming first made this engine's own running
        # nodes ready, and it ran them a second time.
        self.journal.flush()
        self.store.reclaim_expired(now)
        self._hungry.update(self.runs)

    # -- dispatch --------------------------------------------------------------

    def _dispatch(self) -> None:
        """Claim ready nodes for the hungry runs, within the free slots, in
        rounds of one transaction each (``Store.claim_many``): a group's
        members are hundreds of small traversals, and a transaction per run
        per turn was a sixth of a member's cost."""
        free = self.config.concurrency - self.executor.running
        asked: set[str] = set()
        while free > 0:
            wanted = self._wanted(free, asked)
            if not wanted:
                return
            until = _now() + timedelta(seconds=self.config.lease_seconds)
            owner = self.config.owner
            if len(wanted) == 1:
                run, want = wanted[0]
                claimed = {run.id: self.store.claim_ready(run.id, owner, want, until)}
            else:
                claimed = self.store.claim_many([(r.id, n) for r, n in wanted], owner, until)
            for run, want in wanted:
                nodes = claimed.get(run.id, [])
                if len(nodes) < want:
                    self._hungry.discard(run.id)
                for node in nodes:
                    self._spawn(run, node)
                free -= len(nodes)

    def _wanted(self, free: int, asked: set[str]) -> list[tuple[TraversalRun, int]]:
        """(run, how many to claim) for hungry runs not asked yet this turn.
        A run is asked for no more than it has unfinished nodes not already
        running here, so one run cannot take a round's whole budget."""
        wanted: list[tuple[TraversalRun, int]] = []
        for run in list(self.runs.values()):
            if free <= 0:
                break
            stopping = run.tally.stopping
            if run.id in asked or run.id not in self._hungry:
                continue
            if stopping is not None and stopping != "cancelled":
                continue
            tally = run.tally
            want = min(
                free, run.concurrency() - tally.inflight, max(1, tally.remaining - tally.inflight)
            )
            if want <= 0:
                continue
            asked.add(run.id)
            wanted.append((run, want))
            free -= want
        return wanted

    def _spawn(self, run: TraversalRun, node: NodeRecord) -> None:
        run.tally.inflight += 1
        self._claimed[(run.id, node.key)] = node
        self.executor.submit((run.id, node.key), lambda: self._job(run, node))

    async def _job(self, run: TraversalRun, node: NodeRecord) -> None:
        try:
            outcome = await self._execute(run, node)
            if outcome is not None:
                try:
                    await self._record(run, node, outcome)
                except StaleTraversal:
                    raise
                except Exception as exc:
                    await self._unrecorded(run, node, exc)
        except StaleTraversal:
            run.tally.stopping = "superseded"
        except Exception:
            # Not even a failure could be written: this engine cannot make
            # progress on the traversal. Its lease will lapse and a later
            # take-up retries.
            _log.exception("traversal %s: cannot record %s", run.id, node.key)
            run.tally.stopping = "broken"
        finally:
            run.tally.inflight -= 1
            self._claimed.pop((run.id, node.key), None)
            if self._wake is not None:
                self._wake.set()

    async def _execute(self, run: TraversalRun, node: NodeRecord) -> Outcome | None:
        job = JOBS[node.kind]
        slots = self._slots_for(run, node)
        try:
            if slots is None:
                return await job(run, node)
            async with slots:
                return await job(run, node)
        except StaleTraversal:
            raise
        except Exception as exc:  # a bug in a job: fail the node, keep the engine
            reason = f"{type(exc).__name__}: {node.key}: {exc}"
            return Outcome("failed", failure=(run.traversal.action, reason))

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

    # -- recording outcomes ------------------------------------------------------

    async def _record(self, run: TraversalRun, node: NodeRecord, outcome: Outcome) -> None:
        """Journal ``outcome`` with the node's own state, then count it.

        Nothing is counted before the write succeeds: a write the store
        refuses leaves the tally as it was, for :meth:`_unrecorded`."""
        progress, skipped = self._bookkeeping(run, node, outcome)
        try:
            await self.journal.write(run.id, outcome.facts, progress)
        except StaleTraversal:
            _apply_to_view(run, outcome.facts)  # facts were kept
            raise
        _apply_to_view(run, outcome.facts)
        _apply_to_view(run, outcome.progress)
        tally = run.tally
        tally.skipped.update(skipped)
        if outcome.state == "done":
            tally.remaining -= 1
            if outcome.drifted is not None and tally.check_failed is None:
                tally.check_failed = outcome.drifted
            self._hungry.add(run.id)
            return
        if outcome.state in ("paused", "sleeping"):
            # Parked at a hook (the job parked the node itself, engine.hooks)
            # or sleeping on a poll: another process may wake it (a hook
            # clear, a signal: engine.signal_wake) with a timer row this
            # engine has not heard of.
            tally.parked = True
        elif outcome.state == "failed":
            tally.remaining -= 1 + len(skipped)
            tally.failure = tally.failure or outcome.failure
            if rolls_back(run):
                tally.stopping = tally.stopping or "rollback"
        self.timers.hint(outcome.due_at)

    def _bookkeeping(
        self, run: TraversalRun, node: NodeRecord, outcome: Outcome
    ) -> tuple[list[Change], list[str]]:
        """The node's own changes for ``outcome``, and the nodes a failure
        skips."""
        progress = list(outcome.progress)
        key = node.key
        if outcome.state == "sleeping":
            assert outcome.due_at is not None
            payload = {k: v for k, v in node.payload.items() if k != UNRECORDED}
            payload["progress"] = outcome.resume
            fields = {"state": "sleeping", "lease_owner": None, "lease_until": None}
            progress.append(UpdateNode(run.id, key, {**fields, "payload": payload}))
            progress.append(AddTimer(run.id, key, outcome.due_at))
        elif outcome.state == "done":
            progress.append(UpdateNode(run.id, key, {"state": "done", "lease_owner": None}))
            released = tuple(s for s in node.successors if s not in run.tally.skipped)
            if released:
                progress.append(ReleaseSuccessors(run.id, released))
        elif outcome.state == "failed":
            progress.append(UpdateNode(run.id, key, {"state": "failed", "lease_owner": None}))
            skipped = self._downstream(run, node)
            progress.extend(UpdateNode(run.id, k, {"state": "skipped"}) for k in skipped)
            return progress, skipped
        return progress, []

    def _downstream(self, run: TraversalRun, node: NodeRecord) -> list[str]:
        """Every node that (transitively) needs ``node`` and is not skipped yet."""
        if run.successors is None:
            nodes = self.store.list_nodes(run.id)
            run.successors = {n.key: tuple(n.successors) for n in nodes}
        stack, found = list(node.successors), dict[str, None]()
        while stack:
            key = stack.pop()
            if key in run.tally.skipped or key in found:
                continue
            found[key] = None
            stack.extend(run.successors.get(key, ()))
        return list(found)

    async def _unrecorded(self, run: TraversalRun, node: NodeRecord, exc: Exception) -> None:
        """The store refused a job's outcome (not a superseded traversal).

        The node is made ready again at once, its refusals counted in its
        payload, so the job runs again (jobs are idempotent: this is what a
        crash would lead to). After :data:`RECORD_ATTEMPTS` refusals in a
        row it fails, and with it the stack, naming the error; before, a
        refusal every lease period went on until the stack's timeout. If
        even that cannot be written, the store is out of reach: the run is
        dropped and its lease left to lapse."""
        count = int(node.payload.get(UNRECORDED, 0)) + 1
        _log.warning("traversal %s: cannot record %s (%d): %r", run.id, node.key, count, exc)
        if count < RECORD_ATTEMPTS:
            payload = {**node.payload, UNRECORDED: count}
            fields = {"state": "ready", "lease_owner": None, "lease_until": None}
            await self.journal.write(
                run.id, progress=[UpdateNode(run.id, node.key, {**fields, "payload": payload})]
            )
            self._hungry.add(run.id)
            return
        action = _action_of(run, node)
        reason = (
            f"{type(exc).__name__}: resources.{node.resource_name}: the outcome could not "
            f"be recorded ({count} attempts): {exc}"
        )
        row = run.view.get(node.resource_id) if node.resource_id is not None else None
        if row is not None:
            try:
                await self._record(run, node, lc.failed(row, action, reason))
                return
            except StaleTraversal:
                raise
            except Exception:  # the resource's own row is what the store refuses
                _log.exception("traversal %s: cannot fail %s's resource", run.id, node.key)
        await self._record(run, node, Outcome("failed", failure=(action, reason)))

    # -- finishing ----------------------------------------------------------------

    def _finish_ready(self) -> None:
        """End every run with nothing left to do. Their leases are renewed
        (to know they are still ours) and released together, two
        transactions for all of them: a group's members end by the hundred."""
        ending = [run for run in list(self.runs.values()) if self._ended(run)]
        if not ending:
            return
        lost = self.leases.renew([run.id for run in ending], _now())
        # Held up past the lease: another engine took those up.
        held = [run for run in ending if run.id not in lost]
        try:
            for run in held:
                if run.tally.stopping == "cancelled":
                    self.store.apply([UpdateTraversal(run.id, {"finished_at": _now()})])
            finishing = [r for r in held if r.tally.stopping != "cancelled"]
            for run in finishing:
                self.definitions.retain(run.stack.id, _still_needed(run))
                self.hub.compiles.forget(run.stack.id)
            finish_many(finishing, self._rollback)
            if any(run.stack.parent_id is not None for run in held):
                self.timers.forget()  # the owners' wakes (engine.nested_wake)
        finally:
            self.leases.release([run.id for run in held])

    def _ended(self, run: TraversalRun) -> bool:
        """Whether ``run`` is to be finished now; a run that is only to be
        dropped (superseded, broken, lost) is dropped here."""
        tally = run.tally
        if tally.inflight:
            return False
        if tally.stopping in ("superseded", "broken", LOST):
            del self.runs[run.id]
            return False
        if tally.remaining > 0 and tally.stopping not in ("timeout", "rollback"):
            return False
        del self.runs[run.id]
        return True

    def _rollback(self, run: TraversalRun) -> None:
        """Start the rollback of ``run``'s failed stack, which supersedes
        ``run``'s traversal (left in progress for it: engine.finish). If it
        cannot start, the stack ends failed with the reason, rather than
        being ended again at every scan."""
        stack = self.store.get_stack_by_id(run.stack.id)
        if stack is None or stack.traversal_id != run.id:
            return
        try:
            op = rollback_operation(self.store, self.registry, self.definitions, stack, self.config)
            start_operation(self.store, op, self.warm)
        except Exception as exc:
            _log.exception("stack %s: the rollback could not start", stack.id)
            fail_without_rollback(run, f"{type(exc).__name__}: rollback could not start: {exc}")
        self._scan(force=True)


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


def _check_deadline(run: TraversalRun, now: datetime) -> None:
    if run.deadline is not None and now >= run.deadline and run.tally.stopping is None:
        run.tally.stopping = "timeout"


def _action_of(run: TraversalRun, node: NodeRecord) -> str:
    """The resource action a node performs, for its failure reason."""
    if node.kind == "cleanup":
        return Action.DELETE
    if node.kind == "update":
        return Action.CREATE if node.payload.get("action") == "CREATE" else Action.UPDATE
    return node.kind.upper()


def _apply_to_view(run: TraversalRun, changes: list[Change]) -> None:
    for c in changes:
        if isinstance(c, UpdateResource):
            run.view.update(c.resource_id, c.fields)
        elif isinstance(c, DeleteResource):
            run.view.remove(c.resource_id)
