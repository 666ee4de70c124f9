"""Joining the workflow front-end to an engine: one kernel for stacks and
workflows (``convergence.Engine.register``)."""

from __future__ import annotations

import weakref
from typing import Any

from convection.convergence import Engine
from convection.service import Stacks
from convection.store import WORKFLOW
from convection.workflows.actions import ActionRegistry, ServicePorts, default_registry
from convection.workflows.engine import states
from convection.workflows.engine.cron_fire import cron_sweep
from convection.workflows.engine.frontend import WorkflowFrontEnd
from convection.workflows.engine.operations import get_execution
from convection.workflows.engine.services import Services
from convection.workflows.engine.stack_port import workflows_for

_ATTACHED: weakref.WeakKeyDictionary[Engine, WorkflowFrontEnd] = weakref.WeakKeyDictionary()


def attach(
    engine: Engine, *, registry: ActionRegistry | None = None, ports: Any = None
) -> WorkflowFrontEnd:
    """Run workflow executions in ``engine`` too (once per engine)."""
    found = _ATTACHED.get(engine)
    if found is not None:
        return found
    services = Services(
        store=engine.store,
        journal=engine.journal,
        registry=registry or default_registry(),
        stacks=ports,
        signals=ports,
        limits=engine.config.limits,
        take_up_now=engine.kernel.take_up_now,
    )
    frontend = WorkflowFrontEnd(services)
    engine.register(WORKFLOW, frontend)
    engine.provide_workflows(workflows_for(engine.store, engine.kernel.take_up_now))
    engine.kernel.add_sweep(cron_sweep(engine.store, engine.kernel.take_up_now))
    _ATTACHED[engine] = frontend
    return frontend


def engine_for(stacks: Stacks, *, registry: ActionRegistry | None = None) -> Engine:
    """``stacks``' engine, running workflows as well as stacks; the
    ``convection.stack.*`` actions drive this same service."""
    attach(stacks.engine, registry=registry, ports=ServicePorts(stacks))
    return stacks.engine


def wait_execution(
    stacks: Stacks, execution_id: str, *, until_idle: bool = False, timeout: float | None = None
) -> dict[str, Any]:
    """Run the embedded engine until the execution has ended (or, with
    ``until_idle``, until nothing is left to run); the execution's body."""
    engine_for(stacks)
    store = stacks.store
    found = store.workflows.get_execution(execution_id)
    if found is None:
        from convection.common import NotFound

        raise NotFound("workflow execution", execution_id)
    # Only these are kept while waiting: the row's input may be 10 MB.
    project, traversal_id = found.project, found.traversal_id or ""
    del found

    kernel = stacks.engine.kernel

    def ended() -> bool:
        run = kernel.runs.get(traversal_id)
        if run is not None and run.tally.remaining > 0 and not run.tally.parked:
            return False  # running here, nothing parked: no need to ask the store
        now = store.workflows.execution_state(execution_id)
        return now is None or now[0] in states.TERMINAL or now[0] == states.PAUSED

    stacks.run_engine(until=None if until_idle else ended, timeout=timeout)
    return get_execution(store, project, execution_id)
