"""Timer rows: a poll that said "not yet" waits here, not in a worker.

A sleeping node holds no worker and no lease. When its timer is due, the
timer row is deleted and the node made ready again in one entry, and the
node is claimed like any other. A timer with a purpose of its own (a wake)
is the front-end's to fire. Engines sharing a store may read the same
due timer; the entry deletes the row by id and fails if it is already
gone, so exactly one engine fires it (a second firing could make a node
that is running again ready, and run its job twice at once). Timers of traversals that are no longer
active are dropped.
"""

from __future__ import annotations

from collections.abc import Mapping
from datetime import datetime, timedelta
from typing import Any

from convection.kernel.frontend import UNREAD, FrontEnd
from convection.kernel.journal import Journal
from convection.kernel.ports import KernelStore
from convection.kernel.run import Run, Stop
from convection.store import (
    Change,
    DeleteTimers,
    NodeRecord,
    TakeTimer,
    TimerRecord,
    UpdateNode,
)

#: Timers fired per pass; the rest wait for the next pass.
BATCH = 1000

#: The purpose of a plain poll's timer: the node is made ready again.
POLL = "poll"


class Timers:
    __slots__ = ("_frontend", "_hint", "_journal", "_store", "_unknown")

    def __init__(self, store: KernelStore, journal: Journal[Any], frontend: FrontEnd[Any]) -> None:
        self._store = store
        self._journal = journal
        self._frontend = frontend
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

    def next_due(self, runs: Mapping[str, Run]) -> datetime | None:
        if self._unknown and runs:
            self._hint = self._store.next_timer_due()
            self._unknown = False
        return self._hint

    def fire(self, now: datetime, runs: Mapping[str, Run], hungry: set[str]) -> None:
        """Make every due node of a running traversal ready again."""
        due_hint = self.next_due(runs)
        if due_hint is None or due_hint > now:
            return
        skipped = self.act(self._store.due_timers(now, BATCH), runs, hungry)
        self._journal.flush()
        self._hint = self._store.next_timer_due()
        if skipped and self._hint is not None and self._hint <= now:
            # Due timers we must leave alone: look again later, don't spin.
            self._hint = now + timedelta(seconds=0.2)

    def act(self, timers: list[TimerRecord], runs: Mapping[str, Run], hungry: set[str]) -> bool:
        """Queue what each of ``timers`` (read as due) does; whether some
        had to be left alone. Each firing takes its timer row (``TakeTimer``)
        in the same entry, so when another engine read and fired the same
        timer first, this entry fails and changes nothing."""
        skipped = False
        fired: set[tuple[str, str]] = set()
        read = self._read_nodes(timers, runs)
        for timer in timers:
            node = (timer.traversal_id, timer.node_key)
            if node in fired:
                # A node's poll and a wake both due: the first firing's
                # DeleteTimers takes this one too, and taking it again
                # would fail (and retry) that whole batch.
                continue
            fired.add(node)
            run = runs.get(timer.traversal_id)
            if run is None:
                skipped = self._orphan(timer) or skipped
                continue
            if run.tally.stopping not in (None, Stop.CANCELLED):
                skipped = True
                continue
            changes = None
            if timer.purpose != POLL:
                found = read.get(node, UNREAD)
                changes = self._frontend.fire_timer(run, timer, found)
            if changes is None:
                ready = UpdateNode(run.id, timer.node_key, {"state": "ready"})
                changes = [DeleteTimers(run.id, timer.node_key), ready]
            self._take(timer, changes)
            hungry.add(run.id)
        return skipped

    def _orphan(self, timer: TimerRecord) -> bool:
        """A due timer of a traversal no run here holds: dropped if its
        traversal is gone or unwanted; else left (whether it was left)."""
        traversal = self._store.get_traversal(timer.traversal_id)
        if traversal is None or traversal.status != "IN_PROGRESS":
            wanted = False
        else:
            wanted = self._frontend.wanted(traversal)
        if wanted:
            return True
        self._journal.submit(None, [DeleteTimers(timer.traversal_id, timer.node_key)])
        return False

    def _read_nodes(
        self, timers: list[TimerRecord], runs: Mapping[str, Run]
    ) -> dict[tuple[str, str], NodeRecord | None]:
        """The nodes that timers with a purpose address, read per traversal
        in one go when there are several: a group's members ending wake
        hundreds of their owner traversal's nodes per pass, a read each
        otherwise."""
        keys: dict[str, list[str]] = {}
        for t in timers:
            if t.traversal_id in runs and t.purpose != POLL:
                keys.setdefault(t.traversal_id, []).append(t.node_key)
        found: dict[tuple[str, str], NodeRecord | None] = {}
        for tid, wanted in keys.items():
            if len(wanted) < 2:
                continue
            found.update(((tid, k), None) for k in wanted)
            found.update(((tid, n.key), n) for n in self._store.get_nodes(tid, wanted))
        return found

    def _take(self, timer: TimerRecord, changes: list[Change]) -> None:
        """Journal ``changes`` if, and only if, this engine takes ``timer``.
        A timer another engine took fails the entry with ``NotFound``, which
        ``post`` drops: that engine did the work."""
        take = TakeTimer(timer.id, timer.traversal_id, timer.node_key)
        self._journal.post(timer.traversal_id, progress=[take, *changes])
