"""Timer rows: a poll that said "not yet" waits here, not in a worker.

A sleeping node holds no worker and no lease. When its timer is due, the
timer row is deleted and the node made ready again in one entry, and the
node is claimed like any other. Timers of traversals that are no longer
active are dropped.
"""

from __future__ import annotations

from collections.abc import Mapping
from datetime import datetime, timedelta

from convection.engine.hooks import WAKE_PURPOSE, wake
from convection.engine.journal import Journal
from convection.engine.run import TraversalRun
from convection.store.api import DeleteTimers, Store, UpdateNode

#: Timers fired per pass; the rest wait for the next pass.
BATCH = 1000


class Timers:
    __slots__ = ("_hint", "_journal", "_store", "_unknown")

    def __init__(self, store: Store, journal: Journal) -> None:
        self._store = store
        self._journal = journal
        #: The earliest due time that may be waiting (None: no timer).
        self._hint: datetime | None = None
        #: Whether timers may exist that ``_hint`` does not account for.
        self._unknown = True

    def hint(self, due: datetime | None) -> None:
        """A timer was just added due at ``due``."""
        if due is not None and (self._hint is None or due < self._hint):
            self._hint = due

    def forget(self) -> None:
        """Ask the store next time (a traversal was taken up)."""
        self._unknown = True

    def next_due(self, runs: Mapping[str, TraversalRun]) -> datetime | None:
        if self._unknown and runs:
            self._hint = self._store.next_timer_due()
            self._unknown = False
        return self._hint

    def fire(self, now: datetime, runs: Mapping[str, TraversalRun], hungry: set[str]) -> None:
        """Make every due node of a running traversal ready again."""
        due_hint = self.next_due(runs)
        if due_hint is None or due_hint > now:
            return
        skipped = False
        for timer in self._store.due_timers(now, BATCH):
            run = runs.get(timer.traversal_id)
            if run is None:
                if self._store.get_traversal(timer.traversal_id) is None or not _active(
                    self._store, timer.traversal_id
                ):
                    self._journal.submit(None, [DeleteTimers(timer.traversal_id, timer.node_key)])
                else:
                    skipped = True
                continue
            if run.tally.stopping not in (None, "cancelled"):
                skipped = True
                continue
            if timer.purpose.startswith(WAKE_PURPOSE):
                hook = timer.purpose[len(WAKE_PURPOSE) :]
                woken = wake(self._store, run.id, timer.node_key, hook)
                self._journal.submit(run.id, progress=woken)
                hungry.add(run.id)
                continue
            ready = UpdateNode(run.id, timer.node_key, {"state": "ready"})
            self._journal.submit(run.id, progress=[DeleteTimers(run.id, timer.node_key), ready])
            hungry.add(run.id)
        self._journal.flush()
        self._hint = self._store.next_timer_due()
        if skipped and self._hint is not None and self._hint <= now:
            # Due timers we must leave alone: look again later, don't spin.
            self._hint = now + timedelta(seconds=0.2)


def _active(store: Store, traversal_id: str) -> bool:
    traversal = store.get_traversal(traversal_id)
    if traversal is None or traversal.status != "IN_PROGRESS":
        return False
    stack = store.get_stack_by_id(traversal.stack_id)
    return stack is not None and stack.traversal_id == traversal_id
