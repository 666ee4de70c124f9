"""The worker's side of jobs an engine deferred (``kernel.remote``).

A worker runs no loop of its own over traversals. For each job it is
handed (traversal, node, attempt), it:

1. takes the node's lease over from the engine, if the node is still
   running at that attempt (else the job is stale: delivered twice, or
   re-run since), and renews it while the job runs;
2. rebuilds the node's traversal from the store with the front-end's own
   take-up, shared by the jobs that arrive together (``_Snapshots``);
3. runs the job as the engine would (``FrontEnd.run_job``), every write
   fenced by the node's attempt and this worker's lease (``journal.FENCE``);
4. journals the outcome exactly as the engine would (``kernel.record``),
   with a notice that wakes the engine waiting for it.

A worker that loses a lease (it was paused, or cut off, past the lease)
cancels that job; whatever it still tries to write is refused by the fence.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import time
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from typing import Any, Generic, TypeVar

from convection.kernel.journal import FENCE, S
from convection.kernel.outcome import Outcome
from convection.kernel.record import UNRECORDED, bookkeeping
from convection.kernel.run import Run
from convection.kernel.walker import RECORD_ATTEMPTS, Kernel
from convection.store import (
    DONE_CHANNEL,
    PROCESS_STATS,
    WORK_CHANNEL,
    FenceNode,
    NodeRecord,
    Notice,
    StaleNode,
    StaleTraversal,
    UpdateNode,
)

_log = logging.getLogger(__name__)

R = TypeVar("R", bound=Run)

#: Traversals a worker keeps taken up (the most recently used).
_SNAPSHOTS = 256


def _now() -> datetime:
    return datetime.now(UTC)


@dataclass(slots=True)
class _Snapshot(Generic[R]):
    """A traversal as taken up from the store; ``taken`` is None while the
    take-up is still to run (jobs arriving meanwhile share it)."""

    future: asyncio.Future[R | None]
    taken: float | None = None


@dataclass(slots=True)
class _Snapshots(Generic[R]):
    """Traversals taken up for jobs, shared by the jobs that arrive in one
    turn. A job needs a take-up made after it arrived: the dependencies it
    reads were recorded before its node was claimed, so such a take-up
    sees them, and an older one may not. A run that can read back just
    what one job needs (``Run.refresh``: a stack's) is taken up once and
    refreshed per job after that."""

    kernel: Kernel[Any, Any]
    cache: dict[str, _Snapshot[R]] = field(default_factory=dict)

    async def get(self, node: NodeRecord, arrived: float) -> R | None:
        traversal_id = node.traversal_id
        found = self.cache.get(traversal_id)
        if found is not None and (found.taken is None or found.taken >= arrived):
            return await asyncio.shield(found.future)
        if found is not None and found.future.done() and not found.future.exception():
            run = found.future.result()
            if run is not None and run.refresh([node]):
                return run  # what this job reads, read again: no whole take-up
        snapshot: _Snapshot[R] = _Snapshot(asyncio.get_running_loop().create_future())
        self.cache.pop(traversal_id, None)
        self.cache[traversal_id] = snapshot  # the newest last: the oldest go first
        while len(self.cache) > _SNAPSHOTS:
            del self.cache[next(iter(self.cache))]
        await asyncio.sleep(0)  # let this turn's other jobs of the traversal join
        snapshot.taken = time.monotonic()
        try:
            traversal = self.kernel.store.get_traversal(traversal_id)
            run = None if traversal is None else self.kernel.frontend.take_up(traversal)
        except Exception as exc:
            self.cache.pop(traversal_id, None)
            snapshot.future.set_exception(exc)
            raise
        snapshot.future.set_result(run)
        if run is None:
            self.cache.pop(traversal_id, None)
        return run


class Worker(Generic[R, S]):
    """Runs deferred jobs with ``kernel``'s front-ends, journal and store;
    the kernel's own loop never runs here (what jobs start is handed to
    the engines: :meth:`_handoff`)."""

    def __init__(self, kernel: Kernel[R, S]) -> None:
        self.kernel = kernel
        self.owner = kernel.config.owner
        kernel.handoff = self._handoff
        self.jobs: dict[tuple[str, str], asyncio.Task[None]] = {}
        self.stats: dict[str, float] = dict.fromkeys(PROCESS_STATS, 0.0)
        self._lost: set[tuple[str, str]] = set()
        #: Jobs whose outcome is durable (their lease was let go with it).
        self._recorded: set[tuple[str, str]] = set()
        #: Nodes whose lease this worker holds with no job running: a job
        #: that broke and could not hand its node back (the store away).
        self._orphans: dict[tuple[str, str], NodeRecord] = {}
        self._snapshots: _Snapshots[R] = _Snapshots(kernel)

    @property
    def running(self) -> int:
        return len(self.jobs)

    def _until(self) -> datetime:
        return _now() + timedelta(seconds=self.kernel.config.lease_seconds)

    async def handle(self, job: dict[str, Any]) -> None:
        """One deferred job (the task queue's handler)."""
        arrived = time.monotonic()
        tid, key, attempt = str(job["traversal_id"]), str(job["key"]), int(job["attempt"])
        deferred_at = job.get("deferred_at")
        engine = job.get("engine")
        node = self.kernel.store.take_node(
            tid, key, attempt, self.owner, self._until(),
            claimed_by=engine if isinstance(engine, str) else None,
        )  # fmt: skip
        if node is None:
            self.stats["stale_jobs"] += 1
            return
        if isinstance(deferred_at, int | float):
            self.stats["job_wait_seconds_sum"] += max(0.0, time.time() - deferred_at)
        task = asyncio.get_running_loop().create_task(self._job(node, arrived))
        self.jobs[(tid, key)] = task
        try:
            await asyncio.shield(task)
        except asyncio.CancelledError:
            if (tid, key) in self._lost:
                return
            task.cancel()  # this worker stops: hand the node back at once
            self._release(node)
            raise
        except Exception:
            _log.exception("%s/%s: the job broke; its node is handed back", tid, key)
            self._release(node)
        finally:
            self.jobs.pop((tid, key), None)
            self._lost.discard((tid, key))
            self._recorded.discard((tid, key))

    def _release(self, node: NodeRecord) -> None:
        """Make a node this worker holds ready again, for the next attempt
        (else its lease, renewed by this live worker, would never lapse).
        If the store is away, it is released at the next renewal."""
        ident = (node.traversal_id, node.key)
        fence = FenceNode(node.traversal_id, node.key, node.attempt, self.owner)
        fields = {"state": "ready", "lease_owner": None, "lease_until": None}
        done = Notice(DONE_CHANNEL, f"{node.traversal_id} {node.key}")
        try:
            self.kernel.store.apply([fence, UpdateNode(node.traversal_id, node.key, fields), done])
        except StaleNode:
            self._orphans.pop(ident, None)  # lost already: nothing to hand back
        except Exception:
            self._orphans[ident] = node
        else:
            self._orphans.pop(ident, None)

    async def _job(self, node: NodeRecord, arrived: float) -> None:
        tid, key = node.traversal_id, node.key
        started = time.monotonic()
        run = await self._snapshots.get(node, arrived)
        if run is None:
            return  # superseded or gone: the engines drop it too
        self.stats["takeups"] += 1
        FENCE.set(FenceNode(tid, key, node.attempt, self.owner))  # this task's context only
        try:
            outcome = await self.kernel.execute(run, node)
            await self._record(run, node, outcome)
            self.stats["jobs_failed" if outcome.state == "failed" else "jobs_done"] += 1
        except StaleNode:
            self.stats["stale_results"] += 1
            _log.warning(
                "%s/%s: attempt %d was re-run; its outcome refused", tid, key, node.attempt
            )
        except StaleTraversal:
            # Superseded meanwhile: the facts were kept, the rest is void.
            _log.info("%s/%s: traversal superseded; progress dropped", tid, key)
        finally:
            self.stats["job_seconds_sum"] += time.monotonic() - started

    async def _record(self, run: R, node: NodeRecord, outcome: Outcome) -> None:
        progress, _ = bookkeeping(self.kernel.store, run, node, outcome)
        progress.append(Notice(DONE_CHANNEL, f"{node.traversal_id} {node.key}"))
        journal = self.kernel.journal
        try:
            await journal.write(run.id, outcome.facts, progress)
        except (StaleNode, StaleTraversal):
            raise
        except Exception as exc:
            await self._unrecorded(run, node, exc)
            return
        self._recorded.add((node.traversal_id, node.key))
        self.kernel.frontend.observe(run, outcome.facts)
        self.kernel.frontend.observe(run, outcome.progress)

    async def _unrecorded(self, run: R, node: NodeRecord, exc: Exception) -> None:
        """The store refused the outcome: as the engine does, the node is
        made ready again (its job re-runs) until it was refused
        :data:`RECORD_ATTEMPTS` times, then fails as its front-end words it."""
        count = int(node.payload.get(UNRECORDED, 0)) + 1
        _log.warning("%s/%s: cannot record (%d): %r", run.id, node.key, count, exc)
        done = Notice(DONE_CHANNEL, f"{node.traversal_id} {node.key}")
        if count < RECORD_ATTEMPTS:
            fields = {"state": "ready", "lease_owner": None, "lease_until": None}
            change = UpdateNode(
                run.id, node.key, {**fields, "payload": {**node.payload, UNRECORDED: count}}
            )
            await self.kernel.journal.write(run.id, progress=[change, done])
            self._recorded.add((node.traversal_id, node.key))
            return
        problem = f"the outcome could not be recorded ({count} attempts): {exc}"
        last = self.kernel.frontend.fail_node(run, node, exc, problem)[-1]
        progress, _ = bookkeeping(self.kernel.store, run, node, last)
        await self.kernel.journal.write(run.id, last.facts, [*progress, done])
        self._recorded.add((node.traversal_id, node.key))

    async def keep_leases(self) -> None:
        """Renew the leases of running jobs; cancel those lost (another
        attempt owns the node now)."""
        every = self.kernel.config.lease_seconds / 3
        while True:
            await asyncio.sleep(every)
            try:
                held = self.kernel.store.renew_nodes(self.owner, self._until())
            except Exception as exc:  # the store is away: the fence will judge
                _log.warning("cannot renew leases: %r", exc)
                continue
            for ident, task in list(self.jobs.items()):
                if ident in held or task.done() or ident in self._recorded:
                    continue  # a recorded outcome let its lease go with it
                self.stats["lease_losses"] += 1
                self._lost.add(ident)
                _log.warning("%s/%s: lease lost; job cancelled", *ident)
                task.cancel()
            for ident in list(self._orphans):
                if ident not in held:
                    del self._orphans[ident]  # lapsed or re-run: no longer ours
                elif ident not in self.jobs:
                    self._release(self._orphans[ident])

    def _handoff(self, traversal_id: str | None) -> None:
        """A job started a traversal (a child stack, a sub-workflow) under
        this worker's name: release it to the engines and wake them."""
        store = self.kernel.store
        with contextlib.suppress(Exception):  # else its lease lapses, later
            if traversal_id is not None:
                store.release_traversals([traversal_id], self.owner)
            store.notify(WORK_CHANNEL)
