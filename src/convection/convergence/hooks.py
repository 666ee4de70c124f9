"""Breakpoints (Heat's hooks): a resource stops before or after an action
until a user clears the hook.

Heat blocks a worker in a loop that re-reads the resource's data until the
hook is gone. Here a hooked node *parks* instead: its job returns a
``paused`` outcome, the walker writes the node ``sleeping`` with no timer
row, and nothing holds a worker or a lease. The pause is a store row like
any other state, so it survives an engine restart.

Clearing one (``Stacks.hook_clear``, or a signal ``{unset_hook: ...}``)
needs no engine: it writes Heat's "Hook ... is cleared" event and a *wake
timer* (purpose ``hook:<type>``) in one transaction. An engine fires the
wake like a poll timer, but only while the node is still parked at that
hook, so a wake that comes twice, or after the node moved on, does
nothing. The node then runs again and finds the hook in ``hooks_passed``.

Where Heat stops (``heat/engine/resource.py``, ``_break_if_required``):

* pre-create / post-create: around a create, only when the stack action is
  CREATE (a replacement during an update is covered by pre-update);
* pre-update: before the update decision of every existing resource, even
  one that turns out unchanged; post-update: after an in-place update;
* pre-delete / post-delete: around a delete, only when the stack action is
  DELETE; a resource that was never created is not touched at all.

Resources with an ``external_id`` are adopted or left alone, never hooked.
"""

from __future__ import annotations

from typing import Any

from convection.common import Action, Status
from convection.convergence import lifecycle as lc
from convection.convergence.run import TraversalRun
from convection.hot import ResourceRegistry
from convection.kernel import Outcome
from convection.store import (
    AppendEvent,
    Change,
    DeleteResource,
    DeleteTimers,
    NodeRecord,
    ResourceRecord,
    Store,
    UpdateNode,
    UpdateResource,
)

#: Timer purpose prefix of a hook's wake-up (``hook:pre-create``).
WAKE_PURPOSE = "hook:"

#: The stack (and resource) action each hook type belongs to.
HOOK_ACTIONS = {
    "pre-create": Action.CREATE,
    "post-create": Action.CREATE,
    "pre-update": Action.UPDATE,
    "post-update": Action.UPDATE,
    "pre-delete": Action.DELETE,
    "post-delete": Action.DELETE,
}

#: Traversal actions in which Heat runs ``Resource.update`` (and its hooks).
_UPDATING = frozenset({Action.UPDATE, Action.ROLLBACK})


def paused_reason(hook: str) -> str:
    """Heat's event reason on reaching a hook (heatclient matches it)."""
    return f"{HOOK_ACTIONS[hook]} paused until Hook {hook} is cleared"


def cleared_reason(hook: str) -> str:
    return f"Hook {hook} is cleared"


def parked(node: NodeRecord) -> bool:
    """Whether ``node`` waits at a hook (a sleeping node with no timer)."""
    return node.state == "sleeping" and isinstance(node.payload.get("hook"), str)


def passed(node: NodeRecord, hook: str) -> bool:
    return hook in node.payload.get("hooks_passed", ())


def post_cleared(node: NodeRecord) -> bool:
    """A post-action hook was cleared: the action itself is already done."""
    return any(h.startswith("post-") for h in node.payload.get("hooks_passed", ()))


def _registry(run: TraversalRun) -> ResourceRegistry | None:
    return None if run.definition is None else run.definition.environment.resource_registry


def _hooked(run: TraversalRun, node: NodeRecord, name: str, hook: str) -> bool:
    registry = _registry(run)
    return registry is not None and registry.matches_hook(name, hook) and not passed(node, hook)


def pause(
    run: TraversalRun,
    node: NodeRecord,
    row: ResourceRecord,
    hook: str,
    state: tuple[str, str],
    done: Outcome | None = None,
) -> Outcome:
    """Park ``node`` at ``hook``; ``done`` is a finished action's outcome
    whose changes are written with the pause (post hooks)."""
    payload = {**node.payload, "hook": hook}
    fields = {"state": "sleeping", "lease_owner": None, "lease_until": None, "payload": payload}
    event = AppendEvent.about(row, state[0], state[1], paused_reason(hook))
    facts = [*(done.facts if done is not None else ()), event]
    progress = [*(done.progress if done is not None else ()), UpdateNode(run.id, node.key, fields)]
    return Outcome("paused", facts, progress)


def before_update(
    run: TraversalRun, node: NodeRecord, row: ResourceRecord, kind: str, external: Any
) -> Outcome | None:
    """pre-create before a create, pre-update before deciding an existing
    resource's update; None when there is nothing to stop at. ``kind`` is
    the update job's decision (a restricted replace of a type change fails
    before the hook in Heat, so it is not stopped here)."""
    if external is not None or run.definition is None:
        return None
    if kind == "create":
        if run.traversal.action != Action.CREATE:
            return None
        hook = "pre-create"
    else:
        if run.traversal.action not in _UPDATING or row.action == Action.INIT:
            return None
        new_type = run.definition.resources[row.name].resolved_type
        if kind == "restricted" and row.type != new_type:
            return None
        hook = "pre-update"
    if not _hooked(run, node, row.name, hook):
        return None
    return pause(run, node, row, hook, (row.action, row.status))


def after_action(
    run: TraversalRun,
    node: NodeRecord,
    row: ResourceRecord,
    action: str,
    replaces: int | None,
    done: Outcome,
) -> Outcome:
    """post-create after a create in a stack create, post-update after an
    in-place update; otherwise ``done`` as it is."""
    if action == Action.CREATE and replaces is None and run.traversal.action == Action.CREATE:
        hook = "post-create"
    elif action == Action.UPDATE and run.traversal.action in _UPDATING:
        hook = "post-update"
    else:
        return done
    if not _hooked(run, node, row.name, hook):
        return done
    return pause(run, node, row, hook, (action, Status.COMPLETE), done)


def _deleting(run: TraversalRun, row: ResourceRecord) -> bool:
    """Heat's delete hooks: a stack delete, of a resource that exists."""
    return (
        run.traversal.action == Action.DELETE
        and row.current
        and row.action != Action.INIT
        and (row.action, row.status) != (Action.DELETE, Status.COMPLETE)
    )


def before_delete(run: TraversalRun, node: NodeRecord, row: ResourceRecord) -> Outcome | None:
    if not _deleting(run, row) or not _hooked(run, node, row.name, "pre-delete"):
        return None
    return pause(run, node, row, "pre-delete", (row.action, row.status))


def after_delete(
    run: TraversalRun, node: NodeRecord, row: ResourceRecord, done: Outcome
) -> Outcome:
    """post-delete: the row stays (DELETE_COMPLETE) while the node waits, as
    Heat removes it only after the hook; it goes when the node runs again."""
    if not _deleting(run, row) or not _hooked(run, node, row.name, "post-delete"):
        return done
    kept = [c for c in done.facts if not isinstance(c, DeleteResource)]
    state = {"action": Action.DELETE, "status": Status.COMPLETE, "status_reason": lc.STATE_CHANGED}
    finished = Outcome("done", [*kept, UpdateResource(row.id, state)], list(done.progress))
    return pause(run, node, row, "post-delete", (Action.DELETE, Status.COMPLETE), finished)


def wake(store: Store, traversal_id: str, key: str, hook: str) -> list[Change]:
    """A due wake timer: the node becomes ready with the hook passed, if it
    is still parked at ``hook``; the timer goes either way."""
    changes: list[Change] = [DeleteTimers(traversal_id, key)]
    node = store.get_node(traversal_id, key)
    if node is None or not parked(node) or node.payload.get("hook") != hook:
        return changes
    payload = {k: v for k, v in node.payload.items() if k != "hook"}
    payload["hooks_passed"] = [*payload.get("hooks_passed", ()), hook]
    changes.append(UpdateNode(traversal_id, key, {"state": "ready", "payload": payload}))
    return changes
