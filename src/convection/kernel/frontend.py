"""The interface a front-end implements to run its traversals on the kernel.

The kernel knows traversals, nodes, leases, timers and the journal; it does
not know what a node means. A front-end (stack convergence now, workflow
executions next) tells it, through one object of this protocol:

* what a traversal is when an engine takes it up (:meth:`take_up`), and
  whether it is still wanted (:meth:`current`);
* how a node's job runs (:meth:`run_job`), and what a job's recorded
  changes mean for the run's state in memory (:meth:`observe`);
* whether a failure ends the run at once (:meth:`stops_on_failure`);
* what a due timer with a purpose of its own does (:meth:`fire_timer`);
* how a failed node and a finished run are written (:meth:`fail_node`,
  :meth:`finish`).
"""

from __future__ import annotations

from collections.abc import Sequence
from datetime import datetime
from typing import Protocol, TypeVar

from convection.kernel.outcome import Outcome
from convection.kernel.run import Run
from convection.store import Change, NodeRecord, TimerRecord, TraversalRecord

R = TypeVar("R", bound=Run)

#: ``fire_timer``'s ``node`` when the kernel did not read it.
UNREAD = NodeRecord(traversal_id="", key="", kind="", resource_name="")


class FrontEnd(Protocol[R]):
    def take_up(self, traversal: TraversalRecord) -> R | None:
        """A run for ``traversal``, rebuilt from the store; None when it is
        no longer wanted (its owner moved on)."""
        ...

    def current(self, run: R) -> bool:
        """Whether ``run``'s traversal is still the one its owner wants;
        asked of runs that are no longer active in the store."""
        ...

    def wanted(self, traversal: TraversalRecord) -> bool:
        """Whether a traversal no engine runs here still wants its timers."""
        ...

    async def run_job(self, run: R, node: NodeRecord) -> Outcome:
        """Run ``node``'s job (a job's own failure is an Outcome, not a raise)."""
        ...

    def observe(self, run: R, changes: Sequence[Change]) -> None:
        """``changes`` are durable: bring the run's memory up to date."""
        ...

    def stops_on_failure(self, run: R) -> bool:
        """Whether a failed node ends ``run`` at once (``Stop.FAILED``)."""
        ...

    def fire_timer(
        self, run: R, timer: TimerRecord, node: NodeRecord | None
    ) -> list[Change] | None:
        """The changes a due timer makes, or None for a plain poll (the
        node becomes ready). ``node`` is the node as just read, None if it
        is gone, or :data:`UNREAD`."""
        ...

    def fail_node(
        self, run: R, node: NodeRecord, error: Exception, problem: str
    ) -> Sequence[Outcome]:
        """The failure of a node whose outcome the store kept refusing
        (``problem`` says so), as outcomes to try in turn: the last one must
        write nothing but the node's own failure."""
        ...

    def finish(self, runs: Sequence[R], now: datetime) -> bool:
        """Write the end of every run of ``runs`` (leases held); whether
        timers may have been added meanwhile (a child waking its owner)."""
        ...
