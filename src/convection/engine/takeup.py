"""Taking up a traversal: rebuilding a :class:`TraversalRun` from the store.

The same path serves a traversal this process just started (its definition
and records are handed over warm) and one another engine left behind after
a crash (everything is read back from the store: the stack, its target
definition, its resource rows and its nodes).
"""

from __future__ import annotations

from convection._gc import collector_paused
from convection.engine.config import EngineConfig
from convection.engine.finish import rolls_back
from convection.engine.hooks import parked
from convection.engine.journal import Journal
from convection.engine.operations import Warm
from convection.engine.run import TraversalRun
from convection.engine.templates import Definitions
from convection.engine.view import StackView
from convection.resources.registry import TypeRegistry
from convection.states import Status
from convection.store.api import NodeRecord, StackRecord, Store, TraversalRecord

FINISHED = frozenset({"done", "failed", "skipped"})


def take_up(
    traversal: TraversalRecord,
    services: tuple[Store, Journal, TypeRegistry, EngineConfig],
    definitions: Definitions,
    warm: Warm,
    *,
    stack: StackRecord | None = None,
) -> TraversalRun | None:
    """A run for ``traversal``, or None when its stack has moved on.
    ``stack``: its record as the caller just wrote it (not read again)."""
    store, _, registry, _ = services
    if stack is None:
        stack = store.get_stack_by_id(traversal.stack_id)
    if stack is None or stack.traversal_id != traversal.id:
        return None
    handed = warm.take(traversal.id)
    if handed is not None:
        definition, records, nodes = handed.definition, handed.records, handed.nodes
    else:
        definition = definitions.get(store, registry, stack, stack.template_id)
        records = store.list_resources(stack.id)
        nodes = store.list_nodes(traversal.id)
    with collector_paused():  # a whole stack's records: see convection._gc
        view = StackView(records)
    run = TraversalRun(traversal, stack, definition, view, services=services)
    count_nodes(run, nodes)
    return run


def count_nodes(run: TraversalRun, nodes: list[NodeRecord]) -> None:
    """Set the run's tally from stored nodes, including a failure that was
    recorded before the engine that saw it died."""
    tally = run.tally
    tally.remaining = sum(1 for n in nodes if n.state not in FINISHED)
    tally.skipped = {n.key for n in nodes if n.state == "skipped"}
    run.successors = {n.key: tuple(n.successors) for n in nodes}
    # Sleeping nodes too: a signal's wake (engine.signal_wake) may come.
    tally.parked = tally.parked or any(parked(n) or n.state == "sleeping" for n in nodes)
    for n in nodes:
        if n.state == "failed" and tally.failure is None:
            row = run.view.get(n.resource_id) if n.resource_id is not None else None
            if row is not None and row.status == Status.FAILED:
                tally.failure = (row.action, row.status_reason)
            else:
                tally.failure = (run.traversal.action, f"{n.resource_name} failed")
    if tally.failure is not None and rolls_back(run):
        # As the engine that saw the failure did: run nothing more, end
        # the traversal and roll back.
        tally.stopping = tally.stopping or "rollback"
