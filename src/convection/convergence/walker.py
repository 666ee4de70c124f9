"""The stack engine: the kernel's walker with stacks as its front-end.

:class:`Engine` is what callers start (``convection engine``, the server's
engine thread, ``--wait``): the kernel (``convection.kernel.Kernel``) runs
the loop, :class:`~convection.convergence.frontend.StackFrontEnd` says what
stack traversals mean, and the :class:`NestedHub` lets jobs that start
child stacks hand them to this engine at once.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, cast

from convection.convergence.config import EngineConfig
from convection.convergence.frontend import JOBS, StackFrontEnd
from convection.convergence.hub import NestedHub
from convection.convergence.operations import Warm
from convection.convergence.run import TraversalRun
from convection.convergence.takeup import take_up
from convection.convergence.templates import Definitions
from convection.kernel import (
    Executor,
    FrontEnd,
    FrontEnds,
    Journal,
    Kernel,
    Run,
    Timers,
    TraversalLeases,
)
from convection.resources import TypeRegistry, WorkflowsFor
from convection.store import STACK, StackRecord, Store, TraversalRecord

__all__ = ["JOBS", "Engine"]


class Engine:
    """Runs every active stack traversal of one store, in this process.

    Any number of engines (processes) may share a store: each traversal is
    run by one engine at a time, under a lease (``kernel.leases``); nodes
    are claimed atomically under leases; a traversal whose engine died is
    taken up by the next one that scans once its lease lapsed.
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
        self.hub = NestedHub(
            self.definitions, self.warm, started=self._take_up_now, adopt=self._adopt_started
        )
        self.frontend = StackFrontEnd(
            self.journal,
            registry,
            self.config,
            definitions=self.definitions,
            warm=self.warm,
            hub=self.hub,
            rescan=self._rescan,
        )
        #: The kernel's front-ends by traversal kind: stacks here; another
        #: kind (workflow executions) joins with :meth:`register`, and then
        #: one kernel, one scan and one concurrency bound serve both.
        self.frontends: FrontEnds[Run] = FrontEnds({STACK: self.frontend})
        self.kernel: Kernel[Run, Store] = Kernel(self.journal, self.frontends, self.config)
        self._mixed = False

    def register(self, kind: str, frontend: FrontEnd[Any]) -> None:
        """Run traversals of ``kind`` in this engine's kernel too."""
        self.frontends.register(kind, frontend)
        self._mixed = True
        self.kernel.wake()

    def provide_workflows(self, workflows: WorkflowsFor) -> None:
        """Give stacks' ``OS::Mistral::*`` resources the workflow service
        (the workflow layer sits above this one and calls this)."""
        self.frontend.workflows = workflows

    @property
    def workflows(self) -> WorkflowsFor | None:
        return self.frontend.workflows

    @property
    def runs(self) -> dict[str, TraversalRun]:
        """The stack runs this engine holds (those of other kinds are the
        kernel's: ``kernel.runs``)."""
        if not self._mixed:  # only stacks: the kernel's own dict, no copy
            return cast("dict[str, TraversalRun]", self.kernel.runs)
        return {k: r for k, r in self.kernel.runs.items() if isinstance(r, TraversalRun)}

    @property
    def executor(self) -> Executor:
        return self.kernel.executor

    @property
    def leases(self) -> TraversalLeases:
        return self.kernel.leases

    @property
    def timers(self) -> Timers:
        return self.kernel.timers

    @property
    def peak(self) -> int:
        """Most jobs ever running at once (for tests of the bound)."""
        return self.kernel.executor.peak

    def start(self) -> None:
        """Take up every active traversal (see ``Kernel.start``)."""
        self.kernel.start()

    async def run(self, *, until: Callable[[], bool] | None = None, idle_exit: bool = True) -> None:
        """Work until ``until()`` holds (or, with ``idle_exit``, until no
        traversal is active), then let running jobs finish and return."""
        self.frontend.reset()
        await self.kernel.run(until=until, idle_exit=idle_exit)

    def _rescan(self) -> None:
        """Look for new work now (a rollback just started)."""
        self.kernel.scan(force=True)

    def _take_up_now(self, traversal_id: str) -> None:
        """A job started a traversal (a child stack): run it now."""
        self.kernel.take_up_now(traversal_id)

    def _adopt_started(self, traversal: TraversalRecord, stack: StackRecord) -> None:
        """A child stack a job of this engine just wrote, its lease already
        ours (``convergence.nested``): run it at once from the warm
        hand-over, without reading back what was just written."""
        self.kernel.runs.pop(traversal.id, None)
        services = self.frontend.services
        run = take_up(traversal, services, self.definitions, self.warm, stack=stack)
        if self.frontend.adopted(run) is not None:
            assert run is not None
            self.kernel.adopt(run)
