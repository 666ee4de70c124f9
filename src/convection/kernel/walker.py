"""The kernel's walker: claims ready nodes, runs their jobs, journals outcomes.

It knows nothing about what a node does: its :class:`FrontEnd` runs a
node's job and returns an :class:`Outcome` value. The walker's part is the
loop (Terraform's ``dag/walk.go`` shape):

* take up every active traversal in the store (a crashed engine's too),
  each under a traversal lease (``leases``);
* fire due timers, making sleeping nodes ready again (``timers``);
* claim ready nodes under node leases, within the concurrency bounds, and
  start each job on the executor;
* write each outcome with its node's state and its successors' release as
  one journal entry; entries of one event-loop turn share one transaction;
* on failure, skip everything downstream (the user sees the cause, not its
  echoes); when nothing is left, hand the run to the front-end to end.
"""

from __future__ import annotations

import asyncio
import contextlib
import dataclasses
import logging
from collections.abc import Callable
from datetime import UTC, datetime, timedelta
from typing import Generic, TypeVar

from convection.kernel._gc import full_collections_deferred
from convection.kernel.executor import Executor
from convection.kernel.frontend import FrontEnd
from convection.kernel.journal import Journal, S
from convection.kernel.leases import TraversalLeases
from convection.kernel.outcome import Outcome
from convection.kernel.ports import KernelSettings
from convection.kernel.record import UNRECORDED, bookkeeping
from convection.kernel.remote import RemoteJobs
from convection.kernel.router import FrontEnds
from convection.kernel.run import Run, Stop
from convection.kernel.timers import Timers
from convection.runtime import AsyncioExecutor
from convection.store import (
    AddNodes,
    Change,
    FenceTraversal,
    NodeRecord,
    ReleaseSuccessors,
    StaleTraversal,
    TraversalRecord,
    UpdateNode,
    UpdateTraversal,
)

_log = logging.getLogger(__name__)

R = TypeVar("R", bound=Run)

#: A node's outcome may be refused by the store this many times in a row
#: before the node fails; the count lives in its payload under UNRECORDED.
RECORD_ATTEMPTS = 3

#: Seconds between turns of the loop after a failed one, doubling to the last.
_BACKOFF = (0.2, 0.5, 1.0, 2.0, 5.0)


def _now() -> datetime:
    return datetime.now(UTC)


class Kernel(Generic[R, S]):
    """Runs every active traversal of one store that its front-end wants.

    Any number of engines (processes) may share a store: each traversal is
    run by one engine at a time, under a lease; nodes are claimed
    atomically under leases; a traversal whose engine died is taken up by
    the next one that scans once its lease lapsed.
    """

    def __init__(
        self,
        journal: Journal[S],
        frontend: FrontEnd[R],
        config: KernelSettings,
        *,
        executor: Executor | None = None,
        remote: RemoteJobs | None = None,
    ) -> None:
        self.journal = journal
        self.store = journal.store
        self.frontend = frontend
        self.config = config
        self.runs: dict[str, R] = {}
        self.timers = Timers(self.store, journal, frontend)
        self.executor: Executor = executor or AsyncioExecutor()
        #: Set when jobs run in workers elsewhere (``kernel.remote``).
        self.remote = remote
        #: Set in a worker, which runs jobs and no loop: what its jobs start
        #: (a child stack, a sub-workflow) is handed to the engines.
        self.handoff: Callable[[str | None], None] | None = None
        self.leases = TraversalLeases(self.store, config)
        self._claimed: dict[tuple[str, str], NodeRecord] = {}
        self._hungry: set[str] = set()
        self._wake: asyncio.Event | None = None
        self._last_scan = datetime.min.replace(tzinfo=UTC)
        self._last_lease = _now()
        #: Active traversals another engine held at the last scan.
        self._foreign = False
        self._sweeps: list[Callable[[datetime], None]] = []
        #: Runs to take up afresh at the next settle (``heard``, ``reconnected``).
        self._stale: set[str] = set()
        #: Traversals taken up, and traversal leases lost to another engine
        #: (this process's heartbeat reports them: ``/metrics``).
        self.stats: dict[str, float] = {"takeups": 0.0, "lease_losses": 0.0}
        journal.fence = self._fence

    def _fence(self, traversal_id: str) -> FenceTraversal | None:
        """Every batch for a traversal this engine runs is written only
        while its lease is still this engine's (a worker's jobs are fenced
        per node instead)."""
        if self.handoff is not None or traversal_id not in self.runs:
            return None
        return FenceTraversal(traversal_id, self.config.owner)

    # -- the loop ------------------------------------------------------------

    def start(self) -> None:
        """Renew the leases of runs kept from a previous ``run`` (dropping
        those another engine took since), reclaim nodes whose engine died,
        and take up every active traversal."""
        self._renew_leases(_now())
        self.scan(force=True)

    async def run(self, *, until: Callable[[], bool] | None = None, idle_exit: bool = True) -> None:
        """Work until ``until()`` holds (or, with ``idle_exit``, until no
        traversal is active), then let running jobs finish and return."""
        self._wake = asyncio.Event()
        self.journal.reset()
        with full_collections_deferred():  # see kernel._gc
            self.start()
            await self._loop(until, idle_exit)
            await self._drain()
        # A clean stop: another engine may take our traversals up at once.
        self.leases.release(self.runs)

    async def _loop(self, until: Callable[[], bool] | None, idle_exit: bool) -> None:
        failures = 0
        while True:
            try:
                self._turn()
            except Exception:
                # The store out of reach (a database restart, a network
                # cut): nothing was half-written (every write is one
                # transaction), so the next turn just tries again.
                delay = _BACKOFF[min(failures, len(_BACKOFF) - 1)]
                failures += 1
                _log.exception("engine turn failed; again in %.1fs", delay)
                await asyncio.sleep(delay)
                self._last_scan = datetime.min.replace(tzinfo=UTC)
                continue
            failures = 0
            if until is not None and until():
                break
            if idle_exit and self._idle():
                self.scan(force=True)  # a last look: work may have just started
                if self._idle() and not self._foreign:
                    break
            await self._sleep()

    def _turn(self) -> None:
        self._settle(every=self.scan())
        self.timers.fire(_now(), self.runs, self._hungry)
        self._dispatch()
        self._finish_ready()

    def _idle(self) -> bool:
        """Nothing runs, and every run held is dormant (or none is held)."""
        if self._running():
            return False
        return all(run.dormant() for run in self.runs.values())

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

    def rescan_soon(self) -> None:
        """Another process announced work: look at the store now."""
        self._last_scan = datetime.min.replace(tzinfo=UTC)
        self.wake()

    def wake(self) -> None:
        """Run the loop again now rather than at its next scan."""
        if self._wake is not None:
            self._wake.set()

    async def _drain(self) -> None:
        await self.executor.drain()
        self.journal.flush()
        self._finish_ready()

    # -- scanning: new traversals, supersedes, cancels, deadlines -------------

    def scan(self, *, force: bool = False) -> bool:
        """Take up what became active, and see what changed of the runs;
        False if it was not time to look yet."""
        if self.handoff is not None:
            self.handoff(None)  # a worker: the engines look
            return False
        now = _now()
        if not force and (now - self._last_scan).total_seconds() < self.config.scan_seconds:
            return False
        self._last_scan = now
        if (now - self._last_lease).total_seconds() > self.config.lease_seconds / 3:
            self._renew_leases(now)
        self._foreign = False
        # A router asks only for the kinds it serves (kernel.router).
        kinds = self.frontend.kinds if isinstance(self.frontend, FrontEnds) else None
        mine, others = self.store.scan_active(self.config.owner, kinds)
        active = set(mine)
        for tid in mine:
            if tid not in self.runs and (traversal := self.store.get_traversal(tid)) is not None:
                self._take(traversal, now)  # ours, yet not running here
        for traversal in others:
            active.add(traversal.id)
            if traversal.id not in self.runs:
                self._take(traversal, now)
        for run in list(self.runs.values()):
            if run.tally.stopping == Stop.LOST:
                continue
            if run.id in active:
                # Still active: only the deadline can have changed (no reads
                # per run per scan: with 1,000 child stacks running, that
                # was most of a scan).
                _check_deadline(run, now)
            else:
                self._check_run(run, now)
        if any(run.tally.parked for run in self.runs.values()):
            # A node may have been woken by another process: its wake is a
            # timer row this engine has not heard of.
            self.timers.forget()
        self._sweep(now)
        return True

    def add_sweep(self, sweep: Callable[[datetime], None]) -> None:
        """Call ``sweep(now)`` at every scan: a front-end's look for work
        that starts outside any traversal (a workflow engine's due cron
        triggers). A sweep runs on the loop, so it must be short and cost
        what it finds (an indexed read of what is due), never a worker;
        what it starts, it hands to :meth:`take_up_now`."""
        self._sweeps.append(sweep)

    def _sweep(self, now: datetime) -> None:
        for sweep in self._sweeps:
            try:
                sweep(now)
            except Exception:  # a sweep's bug must not stop the engine
                _log.exception("sweep %r failed", sweep)

    def _take(self, traversal: TraversalRecord, now: datetime) -> None:
        """Take ``traversal`` up if no other engine holds its lease."""
        if self.leases.held_elsewhere(traversal, now) or not self.leases.take(traversal.id):
            self._foreign = True
            return
        run = self.frontend.take_up(traversal)
        if run is None:
            self.leases.release([traversal.id])
            return
        self.stats["takeups"] += 1
        self.adopt(run)

    def adopt(self, run: R) -> None:
        """Run ``run`` here: its lease is this engine's."""
        if self.handoff is not None:
            self.handoff(run.id)
            return
        self.runs[run.id] = run
        self._hungry.add(run.id)
        self.timers.forget()
        self.wake()

    def take_up_now(self, traversal_id: str) -> None:
        """A job started ``traversal_id``: run it without waiting for the
        next scan."""
        if self.handoff is not None:
            self.handoff(traversal_id)
            return
        traversal = self.store.get_traversal(traversal_id)
        if traversal is None:
            return
        self.runs.pop(traversal_id, None)
        self._take(traversal, _now())
        self.wake()

    def _check_run(self, run: R, now: datetime) -> None:
        tally = run.tally
        if not self.frontend.current(run):
            tally.stopping = Stop.SUPERSEDED
            return
        traversal = self.store.get_traversal(run.id)
        if traversal is not None and traversal.status not in ("IN_PROGRESS", "CANCELLED"):
            tally.stopping = Stop.LOST  # another engine finished it: see kernel.leases
            return
        if traversal is not None and traversal.status == "CANCELLED":
            if tally.stopping != Stop.CANCELLED:
                tally.stopping = Stop.CANCELLED
                self.recount(run)
            return
        _check_deadline(run, now)

    def recount(self, run: R) -> None:
        """Count ``run``'s nodes again from the store, ending it now if a
        failure is recorded that ends it (its engine died before it could)."""
        run.count(self.store.list_nodes(run.id))
        if run.tally.failure is not None and self.frontend.stops_on_failure(run):
            run.tally.stopping = run.tally.stopping or Stop.FAILED

    def _renew_leases(self, now: datetime) -> None:
        self._last_lease = now
        until = now + timedelta(seconds=self.config.lease_seconds)
        for lost in self.leases.renew(self.runs, now):
            # Another engine took it up (we were held up past the lease):
            # its work is no longer ours to count or write.
            _log.warning("traversal %s: lease taken by another engine; dropping it", lost)
            self.stats["lease_losses"] += 1
            self.runs[lost].tally.stopping = Stop.LOST
        for (tid, key), _node in self._claimed.items():
            if (run := self.runs.get(tid)) is not None and run.tally.stopping == Stop.LOST:
                continue
            self.journal.submit(tid, progress=[UpdateNode(tid, key, {"lease_until": until})])
        # Our own leases first: when the loop was held up past a lease (a
        # loaded machine), reclaiming first made this engine's own running
        # nodes ready, and it ran them a second time.
        self.journal.flush()
        if self.remote is not None:
            # What this engine claimed and no worker took over yet; never a
            # worker's lease (a paused worker's must lapse).
            self.store.renew_nodes(self.config.owner, until)
        self.store.reclaim_expired(now)
        self._hungry.update(self.runs)

    # -- dispatch --------------------------------------------------------------

    def _dispatch(self) -> None:
        """Claim ready nodes for the hungry runs, within the free slots, in
        rounds of one transaction each (``claim_many``): a group's members
        are hundreds of small traversals, and a transaction per run per
        turn was a sixth of a member's cost."""
        free = self.config.concurrency - self._running()
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

    def _wanted(self, free: int, asked: set[str]) -> list[tuple[R, int]]:
        """(run, how many to claim) for hungry runs not asked yet this turn.
        A run is asked for no more than it has unfinished nodes not already
        running here, so one run cannot take a round's whole budget."""
        wanted: list[tuple[R, int]] = []
        for run in list(self.runs.values()):
            if free <= 0:
                break
            stopping = run.tally.stopping
            if run.id in asked or run.id not in self._hungry:
                continue
            if stopping is not None and stopping != Stop.CANCELLED:
                continue
            tally = run.tally
            own = run.concurrency()
            bound = self.config.concurrency if own is None else own
            want = min(free, bound - tally.inflight, max(1, tally.remaining - tally.inflight))
            if want <= 0:
                continue
            asked.add(run.id)
            wanted.append((run, want))
            free -= want
        return wanted

    def _running(self) -> int:
        remote = 0 if self.remote is None else self.remote.running
        return self.executor.running + remote

    def _spawn(self, run: R, node: NodeRecord) -> None:
        run.tally.inflight += 1
        if self.remote is not None:
            self.remote.defer(run.queue(node), node)
            return
        self._claimed[(run.id, node.key)] = node
        self.executor.submit((run.id, node.key), lambda: self._job(run, node))

    async def _job(self, run: R, node: NodeRecord) -> None:
        try:
            outcome = await self.execute(run, node)
            try:
                await self._record(run, node, outcome)
            except StaleTraversal:
                raise
            except Exception as exc:
                await self._unrecorded(run, node, exc)
        except StaleTraversal:
            run.tally.stopping = Stop.SUPERSEDED
        except Exception:
            # Not even a failure could be written: this engine cannot make
            # progress on the traversal. Its lease will lapse and a later
            # take-up retries.
            _log.exception("traversal %s: cannot record %s", run.id, node.key)
            run.tally.stopping = Stop.BROKEN
        finally:
            run.tally.inflight -= 1
            self._claimed.pop((run.id, node.key), None)
            self.wake()

    async def execute(self, run: R, node: NodeRecord) -> Outcome:
        """Run ``node``'s job; a bug in it fails the node, not the engine."""
        try:
            return await self.frontend.run_job(run, node)
        except StaleTraversal:
            raise
        except Exception as exc:  # a bug in a job: fail the node, keep the engine
            reason = f"{type(exc).__name__}: {node.key}: {exc}"
            return Outcome("failed", failure=(run.traversal.action, reason))

    # -- recording outcomes ------------------------------------------------------

    async def _record(self, run: R, node: NodeRecord, outcome: Outcome) -> None:
        """Journal ``outcome`` with the node's own state, then count it.

        Nothing is counted before the write succeeds: a write the store
        refuses leaves the tally as it was, for :meth:`_unrecorded`."""
        progress, skipped = self._bookkeeping(run, node, outcome)
        eager = self._claim_eager(run, outcome, progress)
        try:
            await self.journal.write(run.id, outcome.facts, progress)
        except StaleTraversal:
            self.frontend.observe(run, outcome.facts)  # facts were kept
            raise
        self.frontend.observe(run, outcome.facts)
        self.frontend.observe(run, outcome.progress)
        tally = run.tally
        tally.skipped.update(skipped)
        if outcome.state == "done":
            tally.remaining -= 1
            if outcome.finding is not None and tally.finding is None:
                tally.finding = outcome.finding
            if not eager or _readies_others(progress, eager):
                self._hungry.add(run.id)
            for claimed in eager:
                self._spawn(run, claimed)
            return
        if outcome.state in ("paused", "sleeping"):
            # Parked (the job parked the node itself) or sleeping on a poll:
            # another process may wake it with a timer row this engine has
            # not heard of.
            tally.parked = True
        elif outcome.state == "failed":
            tally.remaining -= 1 + len(skipped)
            tally.failure = tally.failure or outcome.failure
            if self.frontend.stops_on_failure(run):
                tally.stopping = tally.stopping or Stop.FAILED
        self.timers.hint(outcome.due_at)

    def _claim_eager(self, run: R, outcome: Outcome, progress: list[Change]) -> list[NodeRecord]:
        """Claim, in the outcome's own write, the nodes it adds and asks to
        run at once, as many as free slots allow (the others stay ready
        for the next claim). Their ``AddNodes`` are rewritten as running
        under this engine's lease, attempt 1, as ``claim_ready`` would."""
        if not outcome.eager or outcome.state != "done" or run.tally.stopping is not None:
            return []
        own = run.concurrency()
        bound = self.config.concurrency if own is None else own
        free = min(self.config.concurrency - self._running(), bound - run.tally.inflight + 1)
        wanted = set(outcome.eager)
        until = _now() + timedelta(seconds=self.config.lease_seconds)
        claimed: list[NodeRecord] = []
        for i, change in enumerate(progress):
            if free <= len(claimed) or not isinstance(change, AddNodes):
                continue
            nodes = list(change.nodes)
            for j, new in enumerate(nodes):
                if new.key in wanted and new.state == "ready" and free > len(claimed):
                    nodes[j] = dataclasses.replace(
                        new, state="running", lease_owner=self.config.owner,
                        lease_until=until, attempt=new.attempt + 1,
                    )  # fmt: skip
                    claimed.append(nodes[j])
            progress[i] = AddNodes(change.traversal_id, tuple(nodes))
        return claimed

    def _bookkeeping(
        self, run: R, node: NodeRecord, outcome: Outcome
    ) -> tuple[list[Change], list[str]]:
        return bookkeeping(self.store, run, node, outcome)

    async def _unrecorded(self, run: R, node: NodeRecord, exc: Exception) -> None:
        """The store refused a job's outcome (not a superseded traversal).

        The node is made ready again at once, its refusals counted in its
        payload, so the job runs again (jobs are idempotent: this is what a
        crash would lead to). After :data:`RECORD_ATTEMPTS` refusals in a
        row it fails, as the front-end words it; before, a refusal every
        lease period went on until the traversal's timeout. If even that
        cannot be written, the store is out of reach: the run is dropped
        and its lease left to lapse."""
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
        problem = f"the outcome could not be recorded ({count} attempts): {exc}"
        *best, last = self.frontend.fail_node(run, node, exc, problem)
        for outcome in best:
            try:
                await self._record(run, node, outcome)
                return
            except StaleTraversal:
                raise
            except Exception:  # what this failure writes is what the store refuses
                _log.exception("traversal %s: cannot fail %s", run.id, node.key)
        await self._record(run, node, last)

    # -- jobs that ran in workers ------------------------------------------------

    def _settle(self, *, every: bool) -> None:
        """Take in the ends of jobs that ran in workers: each traversal with
        ended nodes is taken up afresh from the store, once per turn however
        many of its nodes ended (its worker journaled their outcomes, with
        whatever they added or skipped). At a scan (``every``), also every
        run that looks stuck: nothing in flight here, nothing to claim, yet
        unfinished nodes (running in a worker another engine deferred to,
        whose notice this engine missed)."""
        if self.remote is None:
            return
        ended = self.remote.settle(every=every)
        stale, self._stale = self._stale, set()
        if every:
            stale.update(tid for tid, run in self.runs.items() if _stuck(run, tid, self._hungry))
        for tid in stale.union(ended):
            run = self.runs.get(tid)
            if run is not None:
                self._refresh(run, ended.get(tid, []))

    def _refresh(self, run: R, ended: list[NodeRecord]) -> None:
        assert self.remote is not None
        if ended and run.refresh(ended):
            self._count_ended(run, ended)
            return
        stopping = run.tally.stopping
        traversal = self.store.get_traversal(run.id)
        fresh = None if traversal is None else self.frontend.take_up(traversal)
        if fresh is None:
            run.tally.inflight = self.remote.outstanding(run.id)
            run.tally.stopping = stopping or Stop.SUPERSEDED
            return
        fresh.tally.inflight = self.remote.outstanding(run.id)
        if stopping is not None and fresh.tally.stopping is None:
            fresh.tally.stopping = stopping
        self.runs[run.id] = fresh
        self._hungry.add(run.id)
        if any(n.state == "sleeping" for n in ended) or fresh.tally.parked:
            self.timers.forget()

    def _count_ended(self, run: R, ended: list[NodeRecord]) -> None:
        """Count the ends of ``run``'s jobs from the store: an indexed count
        of what is left (it covers what they added and skipped), and the
        first failure; no whole take-up."""
        assert self.remote is not None
        tally = run.tally
        tally.remaining = self.store.count_unfinished(run.id)
        tally.inflight = self.remote.outstanding(run.id)
        self._hungry.add(run.id)
        for node in ended:
            if node.state == "sleeping":
                tally.parked = True
                self.timers.forget()
            elif node.state == "failed" and tally.failure is None:
                tally.failure = run.failure_of(node)
                if self.frontend.stops_on_failure(run):
                    tally.stopping = tally.stopping or Stop.FAILED
            elif node.state == "skipped":
                tally.skipped.add(node.key)

    def heard(self, traversal_id: str, key: str) -> None:
        """A worker's notice: this job ended; look at once."""
        if self.remote is None:
            return
        if not self.remote.heard(traversal_id, key) and traversal_id in self.runs:
            self._stale.add(traversal_id)  # deferred by an engine before us
        self.wake()

    def reconnected(self) -> None:
        """Notices may have been lost while the listener was away: look at
        everything again."""
        self._stale.update(self.runs)
        self.rescan_soon()

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
                if run.tally.stopping == Stop.CANCELLED:
                    self.store.apply([UpdateTraversal(run.id, {"finished_at": _now()})])
            finishing = [r for r in held if r.tally.stopping != Stop.CANCELLED]
            if finishing and self.frontend.finish(finishing, _now()):
                self.timers.forget()
        finally:
            self.leases.release([run.id for run in held])

    def _ended(self, run: R) -> bool:
        """Whether ``run`` is to be finished now; a run that is only to be
        dropped (superseded, broken, lost) is dropped here."""
        tally = run.tally
        if tally.inflight:
            return False
        if tally.stopping in Stop.DROPPED:
            del self.runs[run.id]
            return False
        if tally.remaining > 0 and tally.stopping not in Stop.ENDS_NOW:
            return False
        del self.runs[run.id]
        return True


def _readies_others(progress: list[Change], eager: list[NodeRecord]) -> bool:
    """Whether a write makes nodes ready besides those it claimed at once
    (then the run must claim again; else a claim would find nothing)."""
    claimed = {n.key for n in eager}
    for change in progress:
        if isinstance(change, ReleaseSuccessors):
            return True
        if isinstance(change, AddNodes):
            if any(n.state == "ready" and n.key not in claimed for n in change.nodes):
                return True
        elif isinstance(change, UpdateNode) and change.fields.get("state") == "ready":
            return True
    return False


def _stuck(run: Run, tid: str, hungry: set[str]) -> bool:
    tally = run.tally
    return tid not in hungry and not tally.inflight and tally.remaining > 0 and not tally.parked


def _check_deadline(run: Run, now: datetime) -> None:
    if run.deadline is not None and now >= run.deadline and run.tally.stopping is None:
        run.tally.stopping = Stop.TIMEOUT
