"""Group commit: every change submitted in one event-loop turn is written in
one store transaction.

A job submits an *entry*: ``facts`` (what happened to real resources: state,
physical ids, events) and ``progress`` (the traversal's own bookkeeping:
node states, successors, timers). The whole batch is applied with the
traversal check. If the traversal was superseded meanwhile, the facts are
applied again on their own, because a physical id must never be lost, and
the submitters get :class:`StaleTraversal` so they stop.

Batching loses no crash guarantee: a job's entry is durable when its future
resolves, and a job whose entry never committed is simply run again.

A job a worker runs for an engine elsewhere is *fenced* (:data:`FENCE`):
every entry it submits carries a ``FenceNode``, so the store refuses all of
it once the node's lease was lost and the node re-run. The engine fences its
own batches the same way at the traversal's level (:attr:`Journal.fence`):
an engine held up past its lease (paused, partitioned) whose traversal was
taken up elsewhere has every write refused, facts included, from its first
write after it resumes, not only once it next renews its leases.
"""

from __future__ import annotations

import asyncio
import contextvars
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Generic, TypeVar

from convection.kernel.ports import KernelStore
from convection.store import Change, FenceNode, FenceTraversal, StaleTraversal

#: The store a journal writes to; its owner reads it back as its own type.
S = TypeVar("S", bound=KernelStore)

#: The fence of the job running in this task (set by a worker per job):
#: a context variable, so a job's every write carries it, however deep in a
#: plugin it is made, and no other job's does.
FENCE: contextvars.ContextVar[FenceNode | None] = contextvars.ContextVar("FENCE", default=None)


@dataclass(slots=True)
class _Entry:
    facts: Sequence[Change]
    progress: Sequence[Change]
    #: None for a posted entry: nobody waits on it (see ``post``).
    done: asyncio.Future[None] | None


class Journal(Generic[S]):
    __slots__ = ("_batches", "_scheduled", "_store", "commits", "fence")

    def __init__(self, store: S) -> None:
        self._store = store
        self._batches: dict[str | None, list[_Entry]] = {}
        self._scheduled = False
        #: Transactions written so far (for tests and benchmarks).
        self.commits = 0
        #: The fence of a batch for a traversal, set by the engine that
        #: holds traversal leases: None where this process holds none.
        self.fence: Callable[[str], FenceTraversal | None] = _unfenced

    @property
    def store(self) -> S:
        """For reads that must be fresh (a plugin's peers)."""
        return self._store

    def reset(self) -> None:
        """Forget entries queued on an event loop that is gone (a run that
        was cancelled): like a crash, their jobs will simply run again."""
        self._batches = {}
        self._scheduled = False

    def submit(
        self,
        traversal_id: str | None,
        facts: Sequence[Change] = (),
        progress: Sequence[Change] = (),
    ) -> asyncio.Future[None]:
        """Queue an entry for this turn's batch; the future resolves once it
        is durable (or fails with the store's error)."""
        loop = asyncio.get_running_loop()
        done = loop.create_future()
        self._queue(loop, traversal_id, _Entry(facts, progress, done))
        return done

    def post(
        self,
        traversal_id: str | None,
        facts: Sequence[Change] = (),
        progress: Sequence[Change] = (),
    ) -> None:
        """Queue an entry nobody waits for: it commits with this turn's
        batch, and a failure is dropped quietly (the entry's job learns of a
        superseded traversal from its next awaited write). No future: a job
        posts one or two entries per resource, and a future with a callback
        costs more than the entry."""
        self._queue(asyncio.get_running_loop(), traversal_id, _Entry(facts, progress, None))

    def _queue(
        self, loop: asyncio.AbstractEventLoop, traversal_id: str | None, entry: _Entry
    ) -> None:
        fence = FENCE.get()
        if fence is not None:
            entry.facts = (fence, *entry.facts)
        self._batches.setdefault(traversal_id, []).append(entry)
        if not self._scheduled:
            self._scheduled = True
            loop.call_soon(self.flush)

    async def write(
        self,
        traversal_id: str | None,
        facts: Sequence[Change] = (),
        progress: Sequence[Change] = (),
    ) -> None:
        await self.submit(traversal_id, facts, progress)

    def flush(self) -> None:
        """Write every queued entry: one transaction for all traversals, or
        (when that fails) one per traversal, which finds the entry at fault."""
        self._scheduled = False
        batches, self._batches = self._batches, {}
        if len(batches) > 1 and self._commit_all(batches):
            return
        for traversal_id, entries in batches.items():
            self._commit(traversal_id, entries)

    def _commit_all(self, batches: dict[str | None, list[_Entry]]) -> bool:
        """Every traversal's entries in one transaction (``Store.apply_many``):
        a group's members are hundreds of traversals, each with an entry
        or two per turn. False, and nothing written, if any change failed."""
        items = list(batches.items())
        changes = [
            (t, self._fenced(t, [c for e in es for c in (*e.facts, *e.progress)]))
            for t, es in items
        ]
        try:
            self.commits += 1
            stale = self._store.apply_many(changes)
        except Exception:
            return False
        for (traversal_id, entries), left_out in zip(items, stale, strict=True):
            if left_out:
                assert traversal_id is not None
                self._commit_facts(traversal_id, entries, StaleTraversal(traversal_id))
                continue
            _succeed(entries)
        return True

    def _commit(self, traversal_id: str | None, entries: list[_Entry]) -> None:
        changes = self._fenced(traversal_id, [c for e in entries for c in (*e.facts, *e.progress)])
        try:
            self.commits += 1
            self._store.apply(changes, traversal_id=traversal_id)
        except StaleTraversal as stale:
            self._commit_facts(traversal_id, entries, stale)
            return
        except Exception as exc:
            if len(entries) > 1:
                # One bad entry must not fail its batch-mates: retry alone.
                for e in entries:
                    self._commit(traversal_id, [e])
                return
            _fail(entries[0].done, exc)
            return
        _succeed(entries)

    def _commit_facts(
        self, traversal_id: str | None, entries: list[_Entry], stale: StaleTraversal
    ) -> None:
        facts = [c for e in entries for c in e.facts]
        try:
            if facts:
                self.commits += 1
                self._store.apply(self._fenced(traversal_id, facts))
        except Exception as exc:
            for e in entries:
                _fail(e.done, exc)
            return
        _succeed([e for e in entries if not e.progress])
        for e in entries:
            if e.progress:
                _fail(e.done, stale)

    def _fenced(self, traversal_id: str | None, changes: list[Change]) -> list[Change]:
        fence = self.fence(traversal_id) if traversal_id is not None else None
        return changes if fence is None else [fence, *changes]


def _unfenced(traversal_id: str) -> FenceTraversal | None:
    return None


def _succeed(entries: list[_Entry]) -> None:
    for e in entries:
        if e.done is not None and not e.done.done():
            e.done.set_result(None)


def _fail(future: asyncio.Future[None] | None, exc: BaseException) -> None:
    if future is not None and not future.done():
        future.set_exception(exc)
