"""Starting an operation: a plan becomes a persisted traversal.

Every operation (create, update, delete, rollback, check, suspend, resume)
ends here: new resources get their rows up front in one transaction (as
Heat's convergence stores them INIT), the plan's nodes become node records
with pending counts and successors, and ``store.start_traversal`` points
the stack at the new traversal, superseding any running one. The engine
then finds it among the active traversals.
"""

from __future__ import annotations

import uuid
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from typing import Any

from convection.common import Action as StateAction
from convection.common import Status, collector_paused
from convection.convergence.config import EngineConfig
from convection.convergence.templates import Definitions
from convection.model import StackDefinition
from convection.plan import Action, Node, NodeKind, Plan, build_action_plan, build_plan
from convection.resources import TypeRegistry
from convection.store import (
    AppendEvent,
    NodeRecord,
    ResourceRecord,
    StackRecord,
    Store,
    TraversalRecord,
)

#: The id slot's setter (the record is frozen to everyone else).
_SET_ID: Callable[[ResourceRecord, int], None] = vars(ResourceRecord)["id"].__set__

#: The type Heat gives the stack's own events.
STACK_TYPE = "OS::Heat::Stack"


def stack_event(stack: StackRecord, action: str, status: str, reason: str) -> AppendEvent:
    """Heat records the stack's own state changes as events too."""
    return AppendEvent(stack.id, stack.name, STACK_TYPE, stack.id, action, status, reason)


@dataclass(slots=True)
class Warm:
    """What the starter already holds, handed to an engine in the same
    process so it need not load it again: traversal id -> (definition,
    resource records at the start)."""

    entries: dict[str, WarmEntry] = field(default_factory=dict)

    def take(self, traversal_id: str) -> WarmEntry | None:
        return self.entries.pop(traversal_id, None)


@dataclass(frozen=True, slots=True)
class WarmEntry:
    definition: StackDefinition | None
    records: list[ResourceRecord]
    nodes: list[NodeRecord]


@dataclass(frozen=True, slots=True, kw_only=True)
class Operation:
    """One operation to start on a stack."""

    stack: StackRecord
    action: str
    plan: Plan
    definition: StackDefinition | None
    stored: Sequence[ResourceRecord]
    template_id: int | None
    rollback_enabled: bool = False
    timeout_mins: int | None = None
    #: Extra stack fields to set with the start (parameters, tags, ...).
    stack_fields: Mapping[str, Any] = field(default_factory=dict)


def start_operation(store: Store, op: Operation, warm: Warm | None = None) -> str:
    """Persist ``op`` as the stack's traversal; returns the traversal id."""
    with collector_paused():  # 10,000s of records, and no cycles: see convection.common.gc
        return _start(store, op, warm)


def _start(store: Store, op: Operation, warm: Warm | None) -> str:
    rows = _allocate(store, op)
    traversal_id = str(uuid.uuid4())
    nodes = _node_records(traversal_id, op.plan, {r.name: r.id for r in rows})
    now = datetime.now(UTC)
    deadline = None if not op.timeout_mins else now + timedelta(minutes=op.timeout_mins)
    traversal = TraversalRecord(
        id=traversal_id,
        stack_id=op.stack.id,
        action=op.action,
        rollback_enabled=op.rollback_enabled,
        deadline=deadline,
        started_at=now,
    )
    fields = {
        "action": op.action,
        "status": Status.IN_PROGRESS,
        "status_reason": f"Stack {op.action} started",
        "template_id": op.template_id,
        **op.stack_fields,
    }
    store.start_traversal(traversal, nodes, fields)
    store.apply([stack_event(op.stack, op.action, Status.IN_PROGRESS, fields["status_reason"])])
    if warm is not None:
        warm.entries[traversal_id] = WarmEntry(op.definition, [*op.stored, *rows], nodes)
    return traversal_id


def _allocate(store: Store, op: Operation) -> list[ResourceRecord]:
    """Rows for resources that do not exist yet, in one transaction, so
    every update node knows its row and a retried create finds it."""
    if op.definition is None:
        return []
    new = [
        _new_row(op.stack.id, op.definition, n.name)
        for n in op.plan.nodes
        if n.action is Action.CREATE and n.resource_id is None
    ]
    if not new:
        return []
    ids = store.add_resources(new)
    for row, rid in zip(new, ids, strict=True):
        # The rows are ours alone until returned (stores copy what they
        # keep), so their ids are filled in place: a copy per row through
        # ``evolve`` was a tenth of allocating 10,000 rows.
        _SET_ID(row, rid)
    return new


def _new_row(stack_id: str, definition: StackDefinition, name: str) -> ResourceRecord:
    r = definition.resources[name]
    return ResourceRecord(
        id=0,
        stack_id=stack_id,
        name=name,
        type=r.resolved_type,
        template_type=r.type,
        action=StateAction.INIT,
        status=Status.COMPLETE,
        requires=r.requires,
        deletion_policy=r.deletion_policy,
    )


def _node_records(traversal_id: str, plan: Plan, allocated: Mapping[str, int]) -> list[NodeRecord]:
    successors: dict[str, list[str]] = {n.key: [] for n in plan.nodes}
    pending: dict[str, int] = dict.fromkeys(successors, 0)
    for later, earlier in plan.edges:
        successors[earlier].append(later)
        pending[later] += 1
    return [
        NodeRecord(
            traversal_id=traversal_id,
            key=n.key,
            kind=n.kind.value,
            resource_name=n.name,
            resource_id=n.resource_id if n.resource_id is not None else allocated.get(n.name),
            pending=pending[n.key],
            state="ready" if pending[n.key] == 0 else "waiting",
            successors=tuple(successors[n.key]),
            payload=_payload(n),
        )
        for n in plan.nodes
    ]


def _payload(n: Node) -> dict[str, Any]:
    payload: dict[str, Any] = {"action": n.action.name, "reason": n.reason}
    if n.mode is not None:
        payload["mode"] = n.mode.value
    if n.restore_id is not None:
        payload["restore_id"] = n.restore_id
    return payload


def delete_operation(
    stack: StackRecord,
    stored: Sequence[ResourceRecord],
    config: EngineConfig,
    definition: StackDefinition | None = None,
) -> Operation:
    """Delete every stored resource of ``stack``; ``definition`` only when
    its environment sets delete hooks (a delete needs no other)."""
    return Operation(
        stack=stack,
        action=StateAction.DELETE,
        plan=build_plan(None, stored, operation=StateAction.DELETE),
        definition=definition,
        stored=stored,
        template_id=stack.template_id,
        timeout_mins=config.timeout_mins(stack.timeout_mins),
    )


def whole_stack_operation(
    stack: StackRecord,
    stored: Sequence[ResourceRecord],
    kind: NodeKind,
    action: str,
    config: EngineConfig,
) -> Operation:
    """Check, suspend or resume every stored resource of ``stack``."""
    return Operation(
        stack=stack,
        action=action,
        plan=build_action_plan(kind, stored),
        definition=None,
        stored=stored,
        template_id=stack.template_id,
        timeout_mins=config.timeout_mins(stack.timeout_mins),
    )


def rollback_operation(
    store: Store,
    registry: TypeRegistry,
    definitions: Definitions,
    stack: StackRecord,
    config: EngineConfig,
) -> Operation:
    """Converge back to the last template the stack fully reached, or to
    nothing after a failed create (Heat's convergence rollback)."""
    stored = store.list_resources(stack.id)
    target = definitions.get(store, registry, stack, stack.prev_template_id)
    plan = build_plan(target, stored, registry, operation=StateAction.ROLLBACK, rollback=True)
    return Operation(
        stack=stack,
        action=StateAction.ROLLBACK,
        plan=plan,
        definition=target,
        stored=stored,
        template_id=stack.prev_template_id,
        timeout_mins=config.timeout_mins(stack.timeout_mins),
    )
