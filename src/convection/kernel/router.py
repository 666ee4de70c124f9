"""One kernel, several front-ends: :class:`FrontEnds` routes by traversal kind.

A traversal row says what it is (``TraversalRecord.kind``: ``stack`` for a
stack's operation, ``workflow`` for a workflow execution's run). One
:class:`~convection.kernel.Kernel` given a :class:`FrontEnds` runs every
kind registered in it with one concurrency bound, one scan, one timer loop
and one journal; each call the kernel makes is handed to the front-end of
the run's (or traversal's) kind.

Kinds no front-end here serves are left alone, never dropped:

* the scan asks the store only for the registered kinds
  (``KernelStore.scan_active(owner, kinds)``), so no lease is taken;
* :meth:`wanted` answers True for a traversal of another kind, so its due
  timers stay for the engine that serves it (the stack front-end must not
  drop a workflow's retry timer as an orphan).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from datetime import datetime
from typing import Any, Generic, TypeVar, cast

from convection.kernel.frontend import FrontEnd
from convection.kernel.outcome import Outcome
from convection.kernel.run import Run
from convection.store import Change, NodeRecord, TimerRecord, TraversalRecord

R = TypeVar("R", bound=Run)


class FrontEnds(Generic[R]):
    """A :class:`FrontEnd` of front-ends, one per traversal kind.

    ``R`` is what the kernel holds: the common base of every registered
    front-end's runs (``Run`` when kinds mix; a stack-only engine keeps
    its ``TraversalRun``)."""

    def __init__(self, frontends: Mapping[str, FrontEnd[Any]] | None = None) -> None:
        self._by_kind: dict[str, FrontEnd[Any]] = dict(frontends or {})

    def register(self, kind: str, frontend: FrontEnd[Any]) -> None:
        """Serve ``kind`` with ``frontend`` from the next scan on."""
        if kind in self._by_kind:
            raise ValueError(f"traversals of kind {kind!r} already have a front-end")
        self._by_kind[kind] = frontend

    @property
    def kinds(self) -> frozenset[str]:
        return frozenset(self._by_kind)

    def of(self, kind: str) -> FrontEnd[Any] | None:
        return self._by_kind.get(kind)

    def _for(self, run: Run) -> FrontEnd[Any]:
        return self._by_kind[run.traversal.kind]

    # -- FrontEnd ------------------------------------------------------------------
    def take_up(self, traversal: TraversalRecord) -> R | None:
        frontend = self._by_kind.get(traversal.kind)
        return None if frontend is None else cast("R | None", frontend.take_up(traversal))

    def current(self, run: R) -> bool:
        return self._for(run).current(run)

    def wanted(self, traversal: TraversalRecord) -> bool:
        frontend = self._by_kind.get(traversal.kind)
        return True if frontend is None else frontend.wanted(traversal)

    async def run_job(self, run: R, node: NodeRecord) -> Outcome:
        return await self._for(run).run_job(run, node)

    def observe(self, run: R, changes: Sequence[Change]) -> None:
        self._for(run).observe(run, changes)

    def stops_on_failure(self, run: R) -> bool:
        return self._for(run).stops_on_failure(run)

    def fire_timer(
        self, run: R, timer: TimerRecord, node: NodeRecord | None
    ) -> list[Change] | None:
        return self._for(run).fire_timer(run, timer, node)

    def fail_node(
        self, run: R, node: NodeRecord, error: Exception, problem: str
    ) -> Sequence[Outcome]:
        return self._for(run).fail_node(run, node, error, problem)

    def finish(self, runs: Sequence[R], now: datetime) -> bool:
        """Each kind's runs to its own front-end, in one call each."""
        by_kind: dict[str, list[R]] = {}
        for run in runs:
            by_kind.setdefault(run.traversal.kind, []).append(run)
        woke = False
        for kind, mine in by_kind.items():
            woke = self._by_kind[kind].finish(mine, now) or woke
        return woke
