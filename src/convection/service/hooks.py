"""Hooks as the stack service sees them: clearing one, listing those pending.

The engine's half (where a node stops, and how it is woken) is
:mod:`convection.convergence.hooks`. Clearing follows Heat's resource signal
``{unset_hook: <type>}``: the hook type must be one Heat knows, and the
resource must be waiting at it, or the request fails as Heat's
``InvalidBreakPointHook`` does. A clear is written straight to the store
(the "Hook ... is cleared" event, a wake timer, the consumed signal, in one
transaction checked against the stack's traversal), so it needs no engine
and is never lost: whichever engine runs next fires the wake.

A hook in a nested stack is named by a path, as heatclient takes it
(``web/3``: the owning resources down the tree, then the resource): each
owner's physical id is its child stack, and the clear is that child's.

"Pending" is what heatclient's ``hook poll`` derives from events: a
resource whose last event about the hook is the pause, not the clear. Here
it is also a node parked in the stack's current traversal, so an old pause
event of a superseded operation never shows up.

Also here: which resources an update must visit for pre-update hooks,
whether a stored environment sets hooks at all (a delete then reads them),
and what a cancel does to a resource waiting at a hook.
"""

from __future__ import annotations

from collections.abc import Mapping
from datetime import UTC, datetime
from typing import Any

from convection.common import Action, ActionInProgress, InvalidInput, NotFound
from convection.convergence import (
    HOOK_ACTIONS,
    WAKE_PURPOSE,
    cleared_reason,
    parked,
    paused_reason,
)
from convection.model import StackDefinition
from convection.plan import cleanup_key, update_key
from convection.service.views import event_view
from convection.store import (
    AddTimer,
    AppendEvent,
    Change,
    ConsumeSignal,
    DeleteTimers,
    EventRecord,
    NodeRecord,
    ResourceRecord,
    StackRecord,
    StaleTraversal,
    Store,
    UpdateNode,
)


def describe(stack: StackRecord, row: ResourceRecord) -> str:
    """A resource as Heat names it in messages (``str(resource)``)."""
    physical = f" [{row.physical_id}]" if row.physical_id else ""
    return f'{row.type} "{row.name}"{physical} Stack "{stack.name}" [{stack.id}]'


def node_key(row: ResourceRecord, hook: str) -> str:
    """The node that stops at ``hook``: a delete's cleanup node, else the
    resource's update node."""
    return cleanup_key(row.id) if HOOK_ACTIONS[hook] == Action.DELETE else update_key(row.name)


def pending_event(store: Store, stack_id: str, name: str, hook: str) -> EventRecord | None:
    """The pause event of ``hook`` on resource ``name`` if no clear came after it."""
    found = None
    for e in store.list_events(stack_id, resource_name=name):
        if e.reason == paused_reason(hook):
            found = e
        elif e.reason == cleared_reason(hook):
            found = None
    return found


def clear(store: Store, stack: StackRecord, row: ResourceRecord, hook: str) -> int:
    """Clear ``hook`` on ``row``; returns the id of the stored signal."""
    what = describe(stack, row)
    if hook not in HOOK_ACTIONS:
        raise InvalidInput.single(f'Invalid hook type "{hook}" for {what}')
    traversal_id = stack.traversal_id
    key = node_key(row, hook)
    node = store.get_node(traversal_id, key) if traversal_id is not None else None
    waiting = node is not None and parked(node) and node.payload.get("hook") == hook
    if not waiting or pending_event(store, stack.id, row.name, hook) is None:
        raise InvalidInput.single(f'The "{hook}" hook is not defined on {what}')
    assert traversal_id is not None
    signal_id = store.add_signal(stack.id, row.name, {"unset_hook": hook})
    event = AppendEvent.about(row, row.action, row.status, cleared_reason(hook))
    wake = AddTimer(traversal_id, key, datetime.now(UTC), purpose=WAKE_PURPOSE + hook)
    try:
        store.apply([event, wake, ConsumeSignal(signal_id)], traversal_id=traversal_id)
    except StaleTraversal:
        raise ActionInProgress(
            f"Stack {stack.name} moved on to another operation; {hook} was not cleared."
        ) from None
    return signal_id


def stop_waiting(store: Store, stack: StackRecord, node: NodeRecord) -> list[Change]:
    """A cancel reaching a node parked at a hook: it is skipped, its wake
    (if a clear came) dropped, and Heat's event says the wait failed."""
    tid = node.traversal_id
    changes: list[Change] = [
        UpdateNode(tid, node.key, {"state": "skipped"}),
        DeleteTimers(tid, node.key),
    ]
    row = store.get_resource(node.resource_id) if node.resource_id is not None else None
    if row is not None:
        changes.append(
            AppendEvent.about(row, row.action, row.status, "Failure occurred while waiting.")
        )
    return changes


def resolve(store: Store, stack: StackRecord, path: str) -> tuple[StackRecord, ResourceRecord]:
    """The stack and resource a hook path (``web/3``, or just ``web``)
    names: every element but the last owns the nested stack the next one
    lives in. Errors name the place as ``resources.web.resources.3``."""
    names = [n for n in path.split("/") if n]
    if not names:
        raise InvalidInput.single(f'"{path}" names no resource')
    where: list[str] = []
    for owner in names[:-1]:
        where += ["resources", owner]
        stack = _child_of(store, stack, _row(store, stack, owner, where), where)
    if len(names) == 1:
        return stack, _row(store, stack, names[0], None)
    return stack, _row(store, stack, names[-1], [*where, "resources", names[-1]])


def _row(store: Store, stack: StackRecord, name: str, where: list[str] | None) -> ResourceRecord:
    """The current resource ``name``; ``where`` is its place in a path
    (None for a plain name, which fails as any resource lookup does)."""
    for row in store.list_resources(stack.id, current_only=True):
        if row.name == name:
            return row
    if where is None:
        raise NotFound("Resource", name)
    raise InvalidInput.single(
        f'The Resource ({name}) could not be found in stack "{stack.name}"', tuple(where)
    )


def _child_of(
    store: Store, stack: StackRecord, row: ResourceRecord, where: list[str]
) -> StackRecord:
    child = store.get_stack_by_id(row.physical_id) if row.physical_id else None
    if child is None or child.parent_id != stack.id:
        raise InvalidInput.single(
            f"{row.type} has no nested stack; in a hook path every name but the "
            "last must be a resource that owns one (a template resource, "
            "OS::Heat::Stack, a group)",
            tuple(where),
        )
    if child.deleted_at is not None:
        raise InvalidInput.single(f"its nested stack {child.name} is deleted", tuple(where))
    return child


def pending(store: Store, stack: StackRecord, nested_depth: int = 0) -> list[dict[str, Any]]:
    """Every hook the stack's operation waits at, as heatclient's ``hook
    poll`` lists them: the pause event (Heat's event fields), with the hook
    type and the stack's name. With ``nested_depth``, those of nested
    stacks that deep too; ``resource_path`` is what ``hook clear`` takes."""
    found: list[tuple[int, dict[str, Any]]] = []
    level: list[tuple[StackRecord, str]] = [(stack, "")]
    for depth in range(max(0, nested_depth) + 1):
        for each, prefix in level:
            found.extend(_pending_in(store, each, prefix))
        if depth == nested_depth or not level:
            break
        level = [
            (child, f"{prefix}{child.parent_resource}/")
            for each, prefix in level
            for child in store.list_stacks(
                each.project, parent_id=each.id, sort_keys=("name",), sort_dir="asc"
            )
        ]
    return [view for _, view in sorted(found, key=lambda item: item[0])]


def _pending_in(store: Store, stack: StackRecord, prefix: str) -> list[tuple[int, dict[str, Any]]]:
    if stack.traversal_id is None:
        return []
    found: list[tuple[int, dict[str, Any]]] = []
    for node in store.list_nodes(stack.traversal_id):
        if not parked(node):
            continue
        hook = str(node.payload["hook"])
        event = pending_event(store, stack.id, node.resource_name, hook)
        if event is not None:
            view = {
                **event_view(event),
                "hook_type": hook,
                "stack_name": stack.name,
                "resource_path": prefix + node.resource_name,
            }
            found.append((event.id, view))
    return found


def hooked(definition: StackDefinition, hook: str) -> frozenset[str]:
    """The resources of ``definition`` that ``hook`` is set on."""
    registry = definition.environment.resource_registry
    return frozenset(n for n in definition.resources if registry.matches_hook(n, hook))


def sets_hooks(environment: Mapping[str, Any]) -> bool:
    """Whether a stored environment sets any hook (cheap: no compile)."""
    registry = environment.get("resource_registry")
    resources = registry.get("resources") if isinstance(registry, dict) else None
    return isinstance(resources, dict) and _has_hooks(resources)


def _has_hooks(level: Mapping[str, Any]) -> bool:
    return any(
        key == "hooks" or (isinstance(value, dict) and _has_hooks(value))
        for key, value in level.items()
    )
