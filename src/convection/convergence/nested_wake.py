"""What a child stack's end tells its owner: a wake.

The owner's node sleeps on a poll timer while its child runs. Rather than
wait for that timer, the end of the child's traversal writes a due-now
wake for the owner's node (the same wake a signal writes,
``engine.signal_wake``): harmless if the node is doing something else by
then, and needing no engine of the owner's in this process.
"""

from __future__ import annotations

from datetime import UTC, datetime

from convection.convergence import signal_wake
from convection.plan import NodeKind, action_key, update_key
from convection.store import AddTimer, Change, StackRecord, Store

#: Child actions whose owner waits in an action node, not an update node.
_ACTION_KINDS = {"CHECK": NodeKind.CHECK, "SUSPEND": NodeKind.SUSPEND, "RESUME": NodeKind.RESUME}


def wake_owner(
    store: Store, child: StackRecord, action: str, owner_node: tuple[str, str] | None = None
) -> list[Change]:
    """A due-now wake for the owner's node that waits on ``child``, so it
    need not wait for its poll timer. A wake that finds the node doing
    something else is dropped (``engine.signal_wake``). ``owner_node``:
    (traversal, key) of the node that started the child's action, when
    this process knows it (``NestedHub.owners``): no reads, and a delete's
    cleanup node, whose key the child cannot name, is woken too; if the
    owner has moved on since, the wake finds no waiting node."""
    if child.parent_id is None or child.parent_resource is None:
        return []
    now = datetime.now(UTC)
    if owner_node is not None:
        # Not read first: a wake that finds the node not waiting is dropped,
        # and the node started this action, so it is not parked at a hook.
        return [AddTimer(*owner_node, now, purpose=signal_wake.SIGNAL_PURPOSE)]
    owner = store.get_stack_by_id(child.parent_id)
    if owner is None or owner.traversal_id is None:
        return []
    owner_traversal, keys = owner.traversal_id, _keys(child.parent_resource, action)
    return [
        AddTimer(owner_traversal, key, now, purpose=signal_wake.SIGNAL_PURPOSE)
        for key in keys
        if _waits(store, owner_traversal, key)
    ]


def _keys(name: str, action: str) -> list[str]:
    kind = _ACTION_KINDS.get(action)
    return [update_key(name)] if kind is None else [action_key(kind, name)]


def _waits(store: Store, traversal_id: str, key: str) -> bool:
    node = store.get_node(traversal_id, key)
    return node is not None and (signal_wake.polling(node) or node.state == "running")
