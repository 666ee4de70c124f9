"""A traversal as one engine runs it: the kernel's part of the run's state.

The store holds the truth (the traversal row, its nodes and timers). A
:class:`Run` holds what this engine counted from it, and a front-end's
subclass adds what its jobs need (a stack's definition and resource view,
say). Another engine rebuilds both from the store: that is a take-up.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from datetime import datetime

from convection.runtime import DEFAULT_QUEUE
from convection.store import NodeRecord, TraversalRecord

#: Node states after which a node never runs again.
FINISHED = frozenset({"done", "failed", "skipped"})


class Stop:
    """Why a run starts no more nodes (``Tally.stopping``)."""

    #: The traversal's deadline passed: the run ends now.
    TIMEOUT = "timeout"
    #: A node failed and the front-end ends the run at once (a stack that
    #: rolls back). The value is the one stored traversals were left with.
    FAILED = "rollback"
    #: Cancelled: running nodes finish, nothing new starts.
    CANCELLED = "cancelled"
    #: The front-end no longer wants the traversal (a newer one replaced it).
    SUPERSEDED = "superseded"
    #: Not even a failure could be written: dropped, its lease left to lapse.
    BROKEN = "broken"
    #: Another engine took the lease: no longer ours to count or write.
    LOST = "lost"

    #: A run stopping for these is dropped, not finished.
    DROPPED = frozenset({SUPERSEDED, BROKEN, LOST})
    #: A run stopping for these ends although nodes remain.
    ENDS_NOW = frozenset({TIMEOUT, FAILED})


@dataclass(slots=True)
class Tally:
    """What the kernel counts per run."""

    #: Nodes not yet done, failed or skipped.
    remaining: int = 0
    #: Jobs of this run running in this engine.
    inflight: int = 0
    #: The first failure: (what failed, reason), for the front-end's ending.
    failure: tuple[str, str] | None = None
    #: The first finding of a node that is done all the same (a check's drift).
    finding: str | None = None
    #: Why no more nodes start (a :class:`Stop` value), or None.
    stopping: str | None = None
    #: Node keys skipped because something they need failed.
    skipped: set[str] = field(default_factory=set)
    #: A node sleeps or is parked: another process may wake it with a timer
    #: row this engine has not heard of, so timers are re-read each scan.
    parked: bool = False


class Run:
    """One traversal run by this engine. Front-ends subclass it."""

    __slots__ = ("successors", "tally", "traversal")

    def __init__(self, traversal: TraversalRecord) -> None:
        self.traversal = traversal
        self.tally = Tally()
        #: node key -> successor keys; loaded when a failure needs them.
        self.successors: Mapping[str, tuple[str, ...]] | None = None

    @property
    def id(self) -> str:
        return self.traversal.id

    @property
    def deadline(self) -> datetime | None:
        return self.traversal.deadline

    def concurrency(self) -> int | None:
        """This run's own bound on jobs at once (None: the engine's)."""
        return None

    def dormant(self) -> bool:
        """Whether the run waits on something only an outside act ends (a
        paused workflow): an ``--until-idle`` engine may then stop, leaving
        it to the next engine, as it would leave a traversal nobody started."""
        return False

    def refresh(self, nodes: Sequence[NodeRecord]) -> bool:
        """Read back from the store what jobs of ``nodes``, run elsewhere,
        wrote or will read (a worker before a job, an engine after jobs
        ended in workers), so this run can be used again without a whole
        take-up. False: this run cannot, take it up afresh."""
        return False

    def queue(self, node: NodeRecord) -> str:
        """The task queue whose workers may run ``node``'s job, when jobs
        run in workers (``convection worker --queue``): where the job's
        target is reachable. Nothing named: ``default``."""
        return DEFAULT_QUEUE

    def failure_of(self, node: NodeRecord) -> tuple[str, str]:
        """(what failed, reason) for a node stored as failed."""
        return self.traversal.action, f"{node.key} failed"

    def count(self, nodes: Sequence[NodeRecord]) -> None:
        """Set the tally from stored ``nodes``, including a failure that was
        recorded before the engine that saw it died."""
        tally = self.tally
        tally.remaining = sum(1 for n in nodes if n.state not in FINISHED)
        tally.skipped = {n.key for n in nodes if n.state == "skipped"}
        self.successors = {n.key: tuple(n.successors) for n in nodes}
        tally.parked = tally.parked or any(n.state == "sleeping" for n in nodes)
        if tally.failure is None:
            failed = next((n for n in nodes if n.state == "failed"), None)
            if failed is not None:
                tally.failure = self.failure_of(failed)
