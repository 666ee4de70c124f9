"""What every job shares: outcomes as values, resource state writes, and
driving a plugin action through its ``check_*_complete`` polls.

A job never raises for a resource failure: it returns the kernel's
:class:`~convection.kernel.Outcome` (TaskFlow's "failures are values"),
which the kernel journals together with the node's own bookkeeping in one
group-committed entry.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from datetime import UTC, datetime, timedelta
from typing import Any

from convection.common import JSON, Status
from convection.convergence.api_access import api_access
from convection.convergence.context import EngineContext
from convection.convergence.nested import EngineNestedStacks
from convection.convergence.run import TraversalRun
from convection.hot import resolve
from convection.kernel import Outcome
from convection.kernel import done as done  # jobs write lc.done(...)
from convection.resources import ResourceFailure, ResourcePlugin, Wait, WorkflowService
from convection.store import (
    AppendEvent,
    Change,
    NodeRecord,
    ResourceRecord,
    UpdateNode,
    UpdateResource,
)

STATE_CHANGED = "state changed"


def utcnow() -> datetime:
    return datetime.now(UTC)


def event(row: ResourceRecord, action: str, status: str, reason: str) -> AppendEvent:
    return AppendEvent.about(row, action, status, reason)


def state(
    row: ResourceRecord, action: str, status: str, reason: str = STATE_CHANGED, **extra: Any
) -> list[Change]:
    """A state change and its event: Heat writes one event per change."""
    fields = {"action": action, "status": status, "status_reason": reason, **extra}
    return [UpdateResource(row.id, fields), event(row, action, status, reason)]


def begin(
    run: TraversalRun,
    node: NodeRecord,
    row: ResourceRecord,
    action: str,
    progress: dict[str, JSON],
    **fields: Any,
) -> ResourceRecord:
    """Record ``<ACTION>_IN_PROGRESS`` (with ``fields`` of the row) and the
    node's progress, in one entry, ahead of the plugin call. It is posted,
    not awaited: it commits with the plugin's first durable write
    (``set_physical_id`` waits for the batch) or with the outcome, whichever
    comes first, which saves a transaction per wave. Either way a re-run
    finds the row, and the progress if it was written, and continues the
    same action on the same row instead of mistaking it for one an older
    operation abandoned.
    :func:`begin_durably` is for callers that need it written first."""
    run.journal.post(run.id, *_begin_changes(run, node, row, action, progress, fields))
    return row


async def begin_durably(
    run: TraversalRun,
    node: NodeRecord,
    row: ResourceRecord,
    action: str,
    progress: dict[str, JSON],
    **fields: Any,
) -> ResourceRecord:
    """:func:`begin`, returning once the entry is durable."""
    await run.journal.submit(run.id, *_begin_changes(run, node, row, action, progress, fields))
    return row


def _begin_changes(
    run: TraversalRun,
    node: NodeRecord,
    row: ResourceRecord,
    action: str,
    progress: dict[str, JSON],
    fields: Mapping[str, Any],
) -> tuple[list[Change], list[Change]]:
    """(facts, progress) of :func:`begin`."""
    marks: list[Change] = []
    if _needs_marker(node, progress):
        payload = {**node.payload, "progress": progress}
        marks.append(UpdateNode(run.id, node.key, {"payload": payload}))
    if (row.action, row.status) == (action, Status.IN_PROGRESS):
        return [], marks
    # The view is not told: no job reads a row's IN_PROGRESS state from it
    # (a re-run after a crash reads the store), and this runs per action.
    return state(row, action, Status.IN_PROGRESS, **fields), marks


def _needs_marker(node: NodeRecord, progress: Mapping[str, Any]) -> bool:
    """Only a decision made at run time needs its progress recorded: a
    re-run of a planned create or delete repeats the same action on the same
    row anyway, so 10,000 creates need not write 10,000 markers."""
    if node.kind == "update":
        return node.payload.get("action") != "CREATE" or progress.get("replaces") is not None
    return node.kind != "cleanup"


def failed(row: ResourceRecord, action: str, exc: BaseException | str) -> Outcome:
    reason = exc if isinstance(exc, str) else failure_reason(exc, row.name)
    facts = state(row, action, Status.FAILED, reason)
    return Outcome("failed", facts, failure=(action, reason))


def failure_reason(exc: BaseException, name: str) -> str:
    """Heat's resource status reason: ``<ErrorType>: resources.<name>: <message>``."""
    if isinstance(exc, ResourceFailure):
        below = f".{exc.path}" if exc.path else ""
        return f"{exc.error}: resources.{name}{below}: {exc.message}"
    return f"{type(exc).__name__}: resources.{name}: {exc}"


def context(
    run: TraversalRun,
    node: NodeRecord,
    row: ResourceRecord,
    action: str,
    previous: Mapping[str, Any] | None = None,
) -> EngineContext:
    """The plugin's context; ``operation_id`` is the same when this node is
    run again (crash, timer) and differs for any later action."""
    return EngineContext(
        row,
        stack_name=run.stack.name,
        action=action,
        operation_id=f"{run.id}:{node.key}:{action}",
        journal=run.journal,
        view=run.view,
        traversal_id=run.id,
        previous_properties=previous,
        update_policy=_update_policy(run, row.name),
        stack_timeout=run.config.timeout_mins(run.stack.timeout_mins) * 60,
        nested=None if run.hub is None else EngineNestedStacks(run, run.hub, row),
        secrets=run.secrets,
        api=api_access(run.store, run.config.api_url, run.stack),
        plugins=run.plugin,
        workflows=_workflows(run),
    )


def _workflows(run: TraversalRun) -> WorkflowService | None:
    """The stack's project's workflows, when the workflow layer joined the
    engine; an execution a job starts is taken up at once."""
    return None if run.workflows is None else run.workflows(run.stack.project, in_engine=True)


def _update_policy(run: TraversalRun, name: str) -> Mapping[str, Any] | None:
    """The resource's resolved ``update_policy`` (groups read it); only
    resources that declare one pay for resolving it."""
    rdef = run.definition.resources.get(name) if run.definition is not None else None
    if rdef is None or rdef.update_policy is None or run.resolver is None:
        return None
    value = resolve(rdef.update_policy, run.resolver)
    return value if isinstance(value, Mapping) else None


async def start(plugin: ResourcePlugin, op: str, ctx: EngineContext, props: Any) -> JSON:
    """Call the plugin's action method (create, update, delete, ...)."""
    return await getattr(plugin, op)(ctx, props)


async def poll(
    run: TraversalRun,
    plugin: ResourcePlugin,
    op: str,
    ctx: EngineContext,
    props: Any,
    token: JSON,
) -> datetime | None:
    """None when the action is complete, else when to poll again."""
    result = await getattr(plugin, f"check_{op}_complete")(ctx, props, token)
    if result:
        return None
    seconds = result.seconds if isinstance(result, Wait) else run.config.poll_seconds
    return utcnow() + timedelta(seconds=max(0.0, seconds))


def sleeping(due_at: datetime, resume: dict[str, JSON]) -> Outcome:
    return Outcome("sleeping", due_at=due_at, resume=resume)


async def outputs_of(
    plugin: ResourcePlugin, ctx: EngineContext, props: Any, read: Iterable[str] = ()
) -> tuple[JSON, dict[str, JSON]]:
    """The reference id, every declared attribute and every attribute the
    stack reads (``read``: see ``engine.attributes``), read once when an
    action completes and stored, so nothing calls the plugin to read them
    again (Heat's lesson: outputs resolved live took minutes)."""
    ref = await plugin.reference_id(ctx, props)
    attrs: dict[str, JSON] = {}
    for name in type(plugin).attributes_schema:
        attrs[name] = await plugin.attribute(ctx, props, name)
    for name in read:
        if name not in attrs:
            attrs[name] = await plugin.attribute(ctx, props, name)
    return ref, attrs
