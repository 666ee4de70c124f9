"""Taking up a traversal: rebuilding a :class:`TraversalRun` from the store.

The same path serves a traversal this process just started (its definition
and records are handed over warm) and one another engine left behind after
a crash (everything is read back from the store: the stack, its target
definition, its resource rows and its nodes).
"""

from __future__ import annotations

from convection.common import collector_paused
from convection.convergence.config import EngineConfig
from convection.convergence.finish import rolls_back
from convection.convergence.operations import Warm
from convection.convergence.run import TraversalRun
from convection.convergence.templates import Definitions
from convection.convergence.view import StackView
from convection.kernel import Journal, Stop
from convection.resources import TypeRegistry
from convection.store import NodeRecord, StackRecord, Store, TraversalRecord


def take_up(
    traversal: TraversalRecord,
    services: tuple[Store, Journal[Store], TypeRegistry, EngineConfig],
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
    with collector_paused():  # a whole stack's records: see convection.common.gc
        view = StackView(records)
    run = TraversalRun(traversal, stack, definition, view, services=services)
    count_nodes(run, nodes)
    return run


def count_nodes(run: TraversalRun, nodes: list[NodeRecord]) -> None:
    """Set the run's tally from stored nodes, including a failure that was
    recorded before the engine that saw it died."""
    run.count(nodes)
    if run.tally.failure is not None and rolls_back(run):
        # As the engine that saw the failure did: run nothing more, end
        # the traversal and roll back.
        run.tally.stopping = run.tally.stopping or Stop.FAILED
