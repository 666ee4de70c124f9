"""Ending a traversal: the stack's final state, its outputs, and rollback.

Heat's reasons are kept word for word where users and scripts match them:
``Stack CREATE completed successfully``, ``Resource CREATE failed: ...``,
``Timed out``.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable, Sequence
from datetime import UTC, datetime
from typing import Any

from convection.common import Action, Status
from convection.convergence import lifecycle as lc
from convection.convergence.nested_wake import wake_owner
from convection.convergence.operations import stack_event
from convection.convergence.outputs import compute_outputs
from convection.convergence.run import TraversalRun
from convection.store import (
    Change,
    DeleteTimers,
    NodeRecord,
    StaleTraversal,
    UpdateNode,
    UpdateStack,
    UpdateTraversal,
)
from convection.tokens import Tokens

#: Converging actions that roll back on failure when rollback is enabled.
ROLLS_BACK = frozenset({Action.CREATE, Action.UPDATE})

#: Starts the rollback of a failed run's stack. Given by the engine.
StartRollback = Callable[[TraversalRun], None]


def final_state(run: TraversalRun) -> tuple[str, str]:
    """(status, reason) the stack ends with."""
    action, tally = run.traversal.action, run.tally
    if tally.stopping == "timeout":
        return Status.FAILED, "Timed out"
    if tally.failure is not None:
        failed_action, reason = tally.failure
        return Status.FAILED, f"Resource {failed_action} failed: {reason}"
    if tally.finding is not None:
        return Status.FAILED, f"Resource CHECK failed: {tally.finding}"
    return Status.COMPLETE, f"Stack {action} completed successfully"


def finish(run: TraversalRun, start_rollback: StartRollback) -> None:
    """Write the stack's final state; roll back if that is what it asks."""
    finish_many([run], start_rollback)


@dataclasses.dataclass(slots=True)
class _Ending:
    run: TraversalRun
    status: str
    fields: dict[str, Any]
    changes: list[Change]


def finish_many(runs: Sequence[TraversalRun], start_rollback: StartRollback) -> None:
    """:func:`finish` for every run of ``runs``, their final states written
    in one transaction (``Store.apply_many``): a group's members end by the
    hundred. If that fails, each is written on its own, as before."""
    if not runs:
        return
    ends = [_ending(run) for run in runs]
    if len(ends) == 1:
        stale = [_apply(ends[0])]
    else:
        try:
            stale = runs[0].store.apply_many([(e.run.id, e.changes) for e in ends])
        except Exception:  # one by one finds (and raises) the one at fault
            stale = [_apply(e) for e in ends]
    done = [end for end, left_out in zip(ends, stale, strict=True) if not left_out]
    _uncount(done)
    for end in done:
        _after(end, start_rollback)


def _uncount(ends: Sequence[_Ending]) -> None:
    """Deleted children's resources no longer count toward their tree's
    limit: one conditional UPDATE per root, not per child."""
    freed: dict[str, int] = {}
    for end in ends:
        stack = end.run.stack
        deleted = (end.run.traversal.action, end.status) == (Action.DELETE, Status.COMPLETE)
        if deleted and stack.parent_id is not None and stack.root_id:
            freed[stack.root_id] = freed.get(stack.root_id, 0) + stack.resource_count
    for root_id, count in freed.items():
        ends[0].run.store.reserve_resources(root_id, -count, -1)


def rolls_back(run: TraversalRun) -> bool:
    """Whether a failure of ``run`` is followed by a rollback."""
    return run.traversal.rollback_enabled and run.traversal.action in ROLLS_BACK


def _ending(run: TraversalRun) -> _Ending:
    """The final state's changes (nothing written yet but revoked tokens)."""
    status, reason = final_state(run)
    now = datetime.now(UTC)
    changes: list[Change] = []
    if run.tally.stopping == "timeout":
        changes.extend(_abort_unfinished(run))
    if status == Status.FAILED and rolls_back(run):
        # The failure is recorded (Heat's CREATE_FAILED event), but the
        # stack and its traversal stay IN_PROGRESS until the rollback's
        # start supersedes them: no reader sees a failed stack that is
        # about to roll back (a CLI waiting on it would stop there), and a
        # crash before the rollback starts leaves a traversal in progress,
        # which the next engine ends, and rolls back, again.
        if not _failure_recorded(run):
            changes.append(stack_event(run.stack, run.traversal.action, status, reason))
        return _Ending(run, status, {}, changes)
    fields: dict[str, Any] = {"status": status, "status_reason": reason}
    fields.update(_completion_fields(run, status, now))
    changes.append(UpdateStack(run.stack.id, fields))
    changes.append(stack_event(run.stack, run.traversal.action, status, reason))
    changes.append(UpdateTraversal(run.id, {"status": status, "finished_at": now}))
    if run.traversal.action == Action.DELETE and status == Status.COMPLETE:
        _revoke_tokens(run)
    if run.stack.parent_id is not None:
        changes.extend(_owner_wakes(run))  # in the same transaction: one less
    return _Ending(run, status, fields, changes)


def _apply(end: _Ending) -> bool:
    """Write one ending; whether its traversal was superseded meanwhile."""
    try:
        end.run.store.apply(end.changes, traversal_id=end.run.id)
    except StaleTraversal:
        return True
    return False


def _failure_recorded(run: TraversalRun) -> bool:
    """Whether an engine that died before the rollback started already
    wrote this failure's event: the stack's own last event (a handful per
    operation) is then ``<ACTION>_FAILED``, written since the traversal
    started."""
    own = run.store.list_events(run.stack.id, resource_name=run.stack.name)
    if not own:
        return False
    last, started = own[-1], run.traversal.started_at
    if started is not None and last.timestamp < started:
        return False
    return (last.action, last.status) == (run.traversal.action, Status.FAILED)


def _after(end: _Ending, start_rollback: StartRollback) -> None:
    run, status = end.run, end.status
    if run.stack.parent_id is not None:
        _tell_owner(run, end.fields)
    if status == Status.FAILED and rolls_back(run):
        start_rollback(run)


def fail_without_rollback(run: TraversalRun, why: str) -> None:
    """End ``run`` failed (stack and traversal) when its rollback cannot
    start; ``why`` follows the failure in the stack's reason."""
    _, reason = final_state(run)
    reason = f"{reason}; {why}"
    now = datetime.now(UTC)
    action = run.traversal.action
    changes: list[Change] = [
        UpdateStack(run.stack.id, {"status": Status.FAILED, "status_reason": reason}),
        stack_event(run.stack, action, Status.FAILED, reason),
        UpdateTraversal(run.id, {"status": Status.FAILED, "finished_at": now}),
    ]
    _apply(_Ending(run, Status.FAILED, {}, changes))


def _revoke_tokens(run: TraversalRun) -> None:
    """A deleted stack's narrowed tokens (signal URLs, agent credentials)
    die with it, as Heat deletes a stack's users. Done before the final
    state is written, not after: a crash in between leaves the stack to
    finish again (and revoke again, harmlessly), never a deleted stack with
    live tokens. Every delete ends here, a nested child's included."""
    Tokens(run.store).revoke_stack(run.stack.id)


def _owner_wakes(run: TraversalRun) -> list[Change]:
    """A child stack is ending: wake its owner's node (engine.nested_wake),
    addressed through what this engine knows of the owner if it started
    the child's action (``NestedHub.owners``)."""
    owner = None if run.hub is None else run.hub.owners.pop(run.stack.id, None)
    return wake_owner(run.store, run.stack, run.traversal.action, owner)


def _tell_owner(run: TraversalRun, fields: dict[str, Any]) -> None:
    """A child stack ended: its owner's poll may take the record just
    written instead of reading it (``NestedHub.remember``)."""
    if run.hub is not None:
        run.hub.remember(dataclasses.replace(run.stack, **fields))


def _completion_fields(run: TraversalRun, status: str, now: datetime) -> dict[str, Any]:
    action = run.traversal.action
    if status != Status.COMPLETE:
        return {}
    if action == Action.DELETE:
        return {"deleted_at": now, "outputs": []}
    if action not in (Action.CREATE, Action.UPDATE, Action.ROLLBACK):
        return {}
    # The run's own record: its template is the one the traversal was
    # started with (a later change of template starts a new traversal,
    # which makes this one stale), so reading the stack again only cost
    # a read per stack (a group's members end by the hundred).
    template_id = run.stack.template_id
    outputs: list[dict[str, Any]] = []
    if run.definition is not None:
        outputs = compute_outputs(run.definition, run.view.current, resolver=run.resolver)
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
