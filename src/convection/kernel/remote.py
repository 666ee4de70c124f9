"""The engine's side of jobs that run in workers elsewhere.

Instead of running a claimed node's job on its own loop, an engine given
:class:`RemoteJobs` defers it to a task queue (``runtime.JobQueue``) on the
node's queue (``Run.queue``), carrying ids only: traversal, node, attempt.
A worker takes the node's lease over, runs the job and journals its
outcome (``kernel.worker``); the engine learns of the end from a notice or
from its scan and reads the node back.

The claim and the deferral are two writes, not one transaction. That is
safe because of the lease: a claimed node's lease is the engine's until a
worker takes it over, and the engine renews only what it holds
(``Store.renew_nodes``). An engine that dies between the claim and the
deferral renews nothing more, so the node's lease lapses, the node is
reclaimed as ready, and the next claim defers it at the next attempt; a
deferral that fails makes its nodes ready at once. A job delivered twice,
or after its node was re-run, finds the node no longer at its attempt and
does nothing.
"""

from __future__ import annotations

import asyncio
import logging
import time
from collections.abc import Sequence
from typing import Any, Protocol

from convection.kernel.ports import KernelStore
from convection.store import NodeRecord, UpdateNode

_log = logging.getLogger(__name__)


class Dispatch(Protocol):
    """Where deferred jobs go (``runtime.JobQueue`` satisfies it)."""

    async def defer(self, jobs: Sequence[tuple[str, str, dict[str, Any]]]) -> None:
        """``(queue, lock, arguments)``: a job whose lock a waiting job
        holds is not deferred twice."""
        ...


def job_args(node: NodeRecord, engine: str) -> dict[str, Any]:
    """A job's arguments: ids, its attempt, the engine whose claim it is
    (only a node still under that claim is taken: two deliveries of one job
    run it once), and when it was deferred (the queue wait ``/metrics``
    reports)."""
    return {
        "traversal_id": node.traversal_id,
        "key": node.key,
        "attempt": node.attempt,
        "engine": engine,
        "deferred_at": time.time(),
    }


def lock_of(node: NodeRecord) -> str:
    return f"{node.traversal_id}/{node.key}/{node.attempt}"


class RemoteJobs:
    """Jobs deferred and not yet seen to end, per (traversal, node)."""

    def __init__(
        self, dispatch: Dispatch, store: KernelStore, *, owner: str, lease_seconds: float
    ) -> None:
        self._dispatch = dispatch
        self._store = store
        self._owner = owner
        self._lease = lease_seconds
        self.waiting: dict[tuple[str, str], NodeRecord] = {}
        #: When each waiting job was last deferred, and to which queue.
        self._sent: dict[tuple[str, str], tuple[float, str]] = {}
        self._pending: list[tuple[str, NodeRecord]] = []
        self._heard: set[tuple[str, str]] = set()
        self._per: dict[str, int] = {}
        self._flushing = False
        self.peak = 0
        self.deferred = 0

    @property
    def running(self) -> int:
        return len(self.waiting)

    def defer(self, queue: str, node: NodeRecord) -> None:
        """Send ``node``'s job to ``queue`` this event-loop turn (one
        statement per queue for every job claimed in the turn)."""
        ident = (node.traversal_id, node.key)
        if ident not in self.waiting:  # else a re-run whose first end went unseen
            self._per[node.traversal_id] = self._per.get(node.traversal_id, 0) + 1
        self.waiting[ident] = node
        self.peak = max(self.peak, len(self.waiting))
        self._send(queue, node)

    def _send(self, queue: str, node: NodeRecord) -> None:
        self._sent[(node.traversal_id, node.key)] = (time.monotonic(), queue)
        self._pending.append((queue, node))
        if not self._flushing:
            self._flushing = True
            asyncio.get_running_loop().create_task(self._flush())

    async def _flush(self) -> None:
        await asyncio.sleep(0)  # let the rest of this turn's claims join
        self._flushing = False
        batch, self._pending = self._pending, []
        try:
            jobs = [(queue, lock_of(node), job_args(node, self._owner)) for queue, node in batch]
            await self._dispatch.defer(jobs)
            self.deferred += len(batch)
        except Exception:
            _log.exception("cannot defer %d job(s); their nodes are made ready again", len(batch))
            self._unclaim([node for _, node in batch])

    def _unclaim(self, nodes: list[NodeRecord]) -> None:
        fields = {"state": "ready", "lease_owner": None, "lease_until": None}
        for node in nodes:
            try:
                self._store.apply([UpdateNode(node.traversal_id, node.key, fields)])
            except Exception:  # the store is away too: the lease will lapse
                _log.exception("cannot unclaim %s/%s", node.traversal_id, node.key)
        # Seen as ended at the next settle: the node is no longer running.
        self._heard.update((n.traversal_id, n.key) for n in nodes)

    def _resend(self, node: NodeRecord) -> None:
        """A job deferred a lease ago whose node no worker took: its delivery
        may have gone to a worker that died between fetching it and taking
        the node (the queue thinks it runs; this engine renews the claim).
        Defer it again: if it still waits in the queue, the lock refuses the
        copy; if two copies run, only the first takes the node."""
        at, queue = self._sent.get((node.traversal_id, node.key), (0.0, "default"))
        if time.monotonic() - at >= self._lease:
            self._send(queue, node)
            if not self._flushing:
                self._flushing = True
                asyncio.get_running_loop().create_task(self._flush())

    def heard(self, traversal_id: str, key: str) -> bool:
        """A notice said this job ended; False if it is not one of ours."""
        if (traversal_id, key) not in self.waiting:
            return False
        self._heard.add((traversal_id, key))
        return True

    def outstanding(self, traversal_id: str) -> int:
        return self._per.get(traversal_id, 0)

    def _drop(self, traversal_id: str, key: str) -> None:
        del self.waiting[(traversal_id, key)]
        self._sent.pop((traversal_id, key), None)
        left = self._per[traversal_id] - 1
        if left:
            self._per[traversal_id] = left
        else:
            del self._per[traversal_id]

    def settle(self, *, every: bool) -> dict[str, list[NodeRecord]]:
        """Nodes whose jobs ended (as stored now), by traversal: those heard
        of, or (``every``: at a scan, for notices lost) all waiting ones."""
        keys = list(self.waiting) if every else [k for k in self._heard if k in self.waiting]
        self._heard.clear()
        if not keys:
            return {}
        by_traversal: dict[str, list[str]] = {}
        for tid, key in keys:
            by_traversal.setdefault(tid, []).append(key)
        ended: dict[str, list[NodeRecord]] = {}
        for tid, wanted in by_traversal.items():
            found = {n.key: n for n in self._store.get_nodes(tid, wanted)}
            for key in wanted:
                stored = found.get(key)
                sent = self.waiting[(tid, key)]
                running = stored is not None and stored.state == "running"
                if running and stored is not None and stored.attempt == sent.attempt:
                    if every and stored.lease_owner == self._owner:
                        self._resend(stored)
                    continue  # still running (or queued) at its attempt
                self._drop(tid, key)
                if stored is not None:  # else its traversal is gone
                    ended.setdefault(tid, []).append(stored)
        return ended
