"""Signals as the stack service delivers them (Heat's ``resource signal``).

``Stacks.signal`` stores the signal first (so it is on record even if
delivery fails), then hands it to the resource's plugin here, outside any
traversal: a signal needs no engine. The plugin keeps what it learns in its
``data``; a resource that waits for it (a wait condition) reads that fresh
on its next poll, and :func:`wake` makes that poll come now rather than at
its timer.

Two signals to one resource may arrive at once, from two processes, and a
plugin's write replaces the whole ``data``: the later write could drop the
earlier signal. So deliveries to one resource take turns, in the order the
store numbered the signals: a signal waits until every earlier one to that
resource is consumed (delivered, or refused). A sender that dies between
storing and consuming would block the others, so after
:data:`TAKEOVER_SECONDS` the next sender delivers the orphan itself
(plugins make a repeated delivery of one signal, same ``operation_id``, a
no-op). As a last guard against writes from outside the signal path, a
delivery whose write was replaced meanwhile is delivered again.

The REST API's signal URL will be a thin layer over ``Stacks.signal``.
"""

from __future__ import annotations

import asyncio
import contextlib
import time
from collections.abc import Callable, Mapping
from typing import Any

from convection.common import (
    Action,
    ConvectionError,
    InvalidInput,
    NotSupported,
    ResourceActionNotSupported,
    ResourceNotAvailable,
)
from convection.convergence import EngineContext, StackView, signal_wakes
from convection.kernel import Journal
from convection.model import StackDefinition
from convection.resources import (
    ActionNotSupported,
    NestedStacks,
    ResourceFailure,
    ResourcePlugin,
    SignalPeer,
    TypeRegistry,
    WorkflowService,
)
from convection.store import (
    AppendEvent,
    ConsumeSignal,
    ResourceRecord,
    SignalRecord,
    StackRecord,
    StaleTraversal,
    Store,
    UpdateResource,
)

#: Makes ``ctx.nested`` for the signalled resource's row.
NestedFor = Callable[[ResourceRecord], NestedStacks]

#: Deliveries of one signal before the service stops re-checking its write.
ATTEMPTS = 5
#: How long a signal waits for earlier ones to the same resource before it
#: delivers them itself (their sender died between storing and consuming).
TAKEOVER_SECONDS = 10.0
#: How often a waiting signal looks whether its turn came.
TURN_POLL_SECONDS = 0.01


def visited_on_update(definition: StackDefinition, registry: TypeRegistry) -> frozenset[str]:
    """Resources every update must visit, changed or not: those whose type
    says so (``visit_on_update``: OS::Heat::UpdateWaitConditionHandle,
    replaced there so its signals start over), and everything that depends
    on them, which sees the replacement's new id (a wait condition is then
    replaced too, and waits for the new handle's signals)."""
    required_by: dict[str, list[str]] = {name: [] for name in definition.resources}
    found: list[str] = []
    for name, r in definition.resources.items():
        for dep in r.requires:
            required_by.setdefault(dep, []).append(name)
        plugin = registry.get(r.resolved_type)
        if plugin is not None and plugin.visit_on_update:
            found.append(name)
    seen = set(found)
    while found:
        for later in required_by.get(found.pop(), ()):
            if later not in seen:
                seen.add(later)
                found.append(later)
    return frozenset(seen)


def check_signalable(plugin: type[ResourcePlugin], row: ResourceRecord) -> None:
    """Refuse, before anything is stored, what Heat refuses."""
    if plugin.signal is ResourcePlugin.signal:
        raise ResourceActionNotSupported(
            f"Resource {row.name} ({row.type}) does not accept signals."
        )
    if row.action in (Action.SUSPEND, Action.DELETE):
        raise NotSupported(f"Signal resource during {row.action} is not supported.")
    if row.action == Action.INIT:
        raise ResourceNotAvailable(
            f"Resource {row.name} has not been created yet; it cannot take signals."
        )


def deliver(
    store: Store,
    plugin: type[ResourcePlugin],
    stack: StackRecord,
    row: ResourceRecord,
    signal_id: int,
    data: Mapping[str, Any],
    nested: NestedFor | None = None,
    workflows: WorkflowService | None = None,
    secrets: tuple[str, ...] = (),
) -> SignalPeer | None:
    """Hand the stored signal ``signal_id`` to the plugin, record its event,
    mark it consumed and wake the stack's sleeping nodes. Returns the signal
    the plugin passes on to another resource, if any (a scaling policy's
    adjustment for its group), for the service to deliver. ``nested`` gives
    the plugin ``ctx.nested`` (an AutoScalingGroup resizes its child)."""
    try:
        for earlier in _await_turn(store, stack, row, signal_id):
            _take_over(store, plugin, stack, row, earlier, nested, workflows)
        detail = asyncio.run(
            _deliver(store, plugin(), stack, row, signal_id, data, nested, workflows, secrets)
        )
    except BaseException:
        # Refused (or broken): still on record, but no longer pending, so
        # it never holds up the next signal to this resource.
        store.apply([ConsumeSignal(signal_id)])
        raise
    forward = detail if isinstance(detail, SignalPeer) else None
    reason = f"Signal: {detail}" if detail and forward is None else _details(data)
    event = AppendEvent.about(row, "SIGNAL", row.status, reason)
    store.apply([ConsumeSignal(signal_id), event])
    wake(store, stack)
    return forward


def _await_turn(
    store: Store, stack: StackRecord, row: ResourceRecord, signal_id: int
) -> list[SignalRecord]:
    """Wait until every earlier signal to this resource was delivered (they
    are consumed then), so deliveries to one resource never overlap.
    Returns the earlier ones still pending after :data:`TAKEOVER_SECONDS`:
    their sender died mid-delivery, and this one delivers them."""
    deadline = time.monotonic() + TAKEOVER_SECONDS
    while True:
        pending = store.pending_signals(stack.id, row.name)
        earlier = [s for s in pending if s.id < signal_id]
        if not earlier or time.monotonic() >= deadline:
            return earlier
        time.sleep(TURN_POLL_SECONDS)


def _take_over(
    store: Store,
    plugin: type[ResourcePlugin],
    stack: StackRecord,
    row: ResourceRecord,
    signal: SignalRecord,
    nested: NestedFor | None,
    workflows: WorkflowService | None,
) -> None:
    """Deliver a signal whose sender died before it was consumed (delivery
    is idempotent per signal: a part it did is not done twice)."""
    try:
        asyncio.run(
            _deliver(store, plugin(), stack, row, signal.id, signal.data, nested, workflows)
        )
        reason = "Signal: delivered after its sender stopped"
        event = AppendEvent.about(row, "SIGNAL", row.status, reason)
        store.apply([ConsumeSignal(signal.id), event])
    except ConvectionError:  # refused now: it was never delivered, nor will be
        store.apply([ConsumeSignal(signal.id)])


async def _deliver(
    store: Store,
    plugin: ResourcePlugin,
    stack: StackRecord,
    row: ResourceRecord,
    signal_id: int,
    data: Mapping[str, Any],
    nested: NestedFor | None = None,
    workflows: WorkflowService | None = None,
    secrets: tuple[str, ...] = (),
) -> str | SignalPeer | None:
    detail: str | SignalPeer | None = None
    for _ in range(ATTEMPTS):
        fresh = store.get_resource(row.id) or row
        ctx = EngineContext(
            fresh,
            stack_name=stack.name,
            action="SIGNAL",
            operation_id=f"signal:{signal_id}",
            journal=Journal(store),
            # The stack's rows, so ``ctx.peer`` finds another resource (a
            # scaling policy its group); signals are rare, the read is cheap.
            view=StackView(store.list_resources(stack.id, current_only=True)),
            nested=None if nested is None else nested(fresh),
            workflows=workflows,
            secrets=secrets,
        )
        try:
            detail = await plugin.signal(ctx, fresh.properties, dict(data))
        except ActionNotSupported as exc:
            raise ResourceActionNotSupported(
                f"Resource {row.name} ({row.type}) does not accept signals."
            ) from exc
        except ResourceFailure as exc:
            raise InvalidInput.single(exc.message) from exc
        after = store.get_resource(row.id)
        if after is None or after.data == ctx.row.data:
            break
    if type(plugin).signal_updates_attributes:
        await _refresh_attributes(store, plugin, ctx)
    return detail


async def _refresh_attributes(store: Store, plugin: ResourcePlugin, ctx: EngineContext) -> None:
    """Read the declared attributes again and store them beside the others
    (those only the stack reads stay as the last action left them)."""
    row = store.get_resource(ctx.row.id)
    if row is None:
        return
    attrs = dict(row.attributes)
    for name in type(plugin).attributes_schema:
        attrs[name] = await plugin.attribute(ctx, row.properties, name)
    if attrs != row.attributes:
        store.apply([UpdateResource(row.id, {"attributes": attrs})])


def _details(data: Mapping[str, Any]) -> str:
    """Heat's event reason for a signal its plugin did not describe."""
    if not data:
        return "No signal details provided"
    if all(k in data for k in ("previous", "current", "reason")):
        return "alarm state changed from {previous} to {current} ({reason})".format(**data)
    if "state" in data:
        return f"alarm state changed to {data['state']}"
    return "Unknown"


def wake(store: Store, stack: StackRecord) -> None:
    """Wake timers for the sleeping nodes of the stack's operation, if one
    runs; a traversal that moved on meanwhile needs none (its new nodes
    read the signal when they first poll)."""
    fresh = store.get_stack_by_id(stack.id)
    tid = fresh.traversal_id if fresh is not None else None
    if tid is None:
        return
    traversal = store.get_traversal(tid)
    if traversal is None or traversal.status != "IN_PROGRESS":
        return
    changes = signal_wakes(store, tid)
    if not changes:
        return
    with contextlib.suppress(StaleTraversal):
        store.apply(list(changes), traversal_id=tid)
