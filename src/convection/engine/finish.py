"""Ending a traversal: the stack's final state, its outputs, and rollback.

Heat's reasons are kept word for word where users and scripts match them:
``Stack CREATE completed successfully``, ``Resource CREATE failed: ...``,
``Timed out``.
"""

from __future__ import annotations

from collections.abc import Callable
from datetime import UTC, datetime
from typing import Any

from convection.engine import lifecycle as lc
from convection.engine.nested_wake import child_secret, wake_owner
from convection.engine.operations import stack_event
from convection.engine.outputs import compute_outputs
from convection.engine.run import TraversalRun
from convection.states import Action, Status
from convection.store.api import (
    Change,
    DeleteTimers,
    NodeRecord,
    StaleTraversal,
    UpdateNode,
    UpdateStack,
    UpdateTraversal,
)

#: Converging actions that roll back on failure when rollback is enabled.
ROLLS_BACK = frozenset({Action.CREATE, Action.UPDATE})

#: Starts the rollback of a stack; (stack id) -> None. Given by the engine.
StartRollback = Callable[[str], None]


def final_state(run: TraversalRun) -> tuple[str, str]:
    """(status, reason) the stack ends with."""
    action, tally = run.traversal.action, run.tally
    if tally.stopping == "timeout":
        return Status.FAILED, "Timed out"
    if tally.failure is not None:
        failed_action, reason = tally.failure
        return Status.FAILED, f"Resource {failed_action} failed: {reason}"
    if tally.check_failed is not None:
        return Status.FAILED, f"Resource CHECK failed: {tally.check_failed}"
    return Status.COMPLETE, f"Stack {action} completed successfully"


def finish(run: TraversalRun, start_rollback: StartRollback) -> None:
    """Write the stack's final state; roll back if that is what it asks."""
    status, reason = final_state(run)
    now = datetime.now(UTC)
    changes: list[Change] = []
    if run.tally.stopping == "timeout":
        changes.extend(_abort_unfinished(run))
    fields: dict[str, Any] = {"status": status, "status_reason": reason}
    fields.update(_completion_fields(run, status, now))
    changes.append(UpdateStack(run.stack.id, fields))
    changes.append(stack_event(run.stack, run.traversal.action, status, reason))
    changes.append(UpdateTraversal(run.id, {"status": status, "finished_at": now}))
    try:
        run.store.apply(changes, traversal_id=run.id)
    except StaleTraversal:
        return
    if run.stack.parent_id is not None:
        _tell_owner(run, status)
    if (
        status == Status.FAILED
        and run.traversal.rollback_enabled
        and run.traversal.action in ROLLS_BACK
    ):
        start_rollback(run.stack.id)


def _tell_owner(run: TraversalRun, status: str) -> None:
    """A child stack ended: wake its owner's node, and a deleted child's
    resources no longer count toward the tree's limit."""
    stack = run.stack
    if run.traversal.action == Action.DELETE and status == Status.COMPLETE and stack.root_id:
        run.store.reserve_resources(stack.root_id, -stack.resource_count, -1)
    wakes = wake_owner(run.store, stack, run.traversal.action)
    if wakes:
        run.store.apply(wakes)


def _completion_fields(run: TraversalRun, status: str, now: datetime) -> dict[str, Any]:
    action = run.traversal.action
    if status != Status.COMPLETE:
        return {}
    if action == Action.DELETE:
        return {"deleted_at": now, "outputs": []}
    if action not in (Action.CREATE, Action.UPDATE, Action.ROLLBACK):
        return {}
    stack = run.store.get_stack_by_id(run.stack.id)
    template_id = stack.template_id if stack is not None else run.stack.template_id
    outputs: list[dict[str, Any]] = []
    if run.definition is not None:
        outputs = compute_outputs(
            run.definition, run.view.current, run.registry, child_secret(run.store, run.stack)
        )
    return {"prev_template_id": template_id, "outputs": outputs}


def _abort_unfinished(run: TraversalRun) -> list[Change]:
    """Timed out: nodes still waiting on a poll fail, and so do their
    resources, so nothing is left looking as if it were still going."""
    changes: list[Change] = []
    for node in run.store.list_nodes(run.id):
        if node.state not in ("sleeping", "running"):
            continue
        changes.append(DeleteTimers(run.id, node.key))
        changes.append(UpdateNode(run.id, node.key, {"state": "failed"}))
        row_id = _node_row(node)
        row = run.view.get(row_id) if row_id is not None else None
        if row is not None and row.status == Status.IN_PROGRESS:
            changes.extend(lc.state(row, row.action, Status.FAILED, "Timed out"))
    return changes


def _node_row(node: NodeRecord) -> int | None:
    progress = node.payload.get("progress")
    if isinstance(progress, dict) and isinstance(progress.get("row"), int):
        return int(progress["row"])
    return node.resource_id
