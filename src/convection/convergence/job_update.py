"""The update node's job: bring one resource to its new definition.

1. resolve the properties against the stored attributes of its
   dependencies, and validate them with the plugin's schema;
2. decide, with Heat's rules, between create, update in place, replace,
   nothing, or a refused change;
3. drive the plugin action, sleeping on a timer between polls;
4. record the outcome: state, reference id, attributes, properties, digest.

A replacement creates a new row (``current=False``) and makes it current
when its create completes; the old row is left for its cleanup node.
"""

from __future__ import annotations

import dataclasses
from typing import Any

from convection.common import JSON, Action, ConvectionError, Status
from convection.convergence import hooks
from convection.convergence import lifecycle as lc
from convection.convergence.context import EngineContext
from convection.convergence.run import TraversalRun
from convection.hot import resolve
from convection.kernel import Outcome
from convection.model import ResourceDefinition
from convection.resources import ResourcePlugin, UpdateAction, changed_properties
from convection.store import Change, NodeRecord, ResourceRecord, UpdateResource


async def run_update(run: TraversalRun, node: NodeRecord) -> Outcome:
    assert run.definition is not None
    if hooks.post_cleared(node):
        return lc.done()  # the action was recorded when the post hook paused it
    rdef = run.definition.resources[node.resource_name]
    row = _row(run, node)
    plugin = run.plugin(rdef.resolved_type)
    if plugin is None:
        msg = f"The Resource Type ({rdef.resolved_type}) could not be found."
        return lc.failed(row, _action(row), f"StackValidationFailed: resources.{row.name}: {msg}")
    if node.payload.get("action") == "RESTORE" and "progress" not in node.payload:
        return _restore(run, node, row)
    values = _resolve(run, rdef, plugin)
    if isinstance(values, str):
        return lc.failed(row, _action(row), values)
    progress = node.payload.get("progress")
    if isinstance(progress, dict):
        return await _resume(run, node, plugin, values, progress)
    external = _external_id(run, rdef)
    kind, reason = _choose(run, node, row, plugin, values, external)
    paused = hooks.before_update(run, node, row, kind, external)
    if paused is not None:
        return paused
    if kind == "create" and external is not None:
        return await _adopt(run, node, plugin, row, values, str(external))
    if kind == "create":
        return await create_on(run, node, plugin, row, values, None)
    if kind == "update":
        return await update_on(run, node, plugin, row, values)
    if kind == "replace":
        new = _replacement(run, row, rdef)
        return await create_on(run, node, plugin, new, values, row.id)
    if kind == "noop":
        return lc.done(_settle(run, row, rdef))
    if kind == "restricted":
        return _refused(row, reason)
    return lc.failed(row, Action.UPDATE, reason)


def _rdef(run: TraversalRun, row: ResourceRecord) -> ResourceDefinition:
    assert run.definition is not None
    return run.definition.resources[row.name]


def _row(run: TraversalRun, node: NodeRecord) -> ResourceRecord:
    row = run.view.get(node.resource_id) if node.resource_id is not None else None
    if row is None:
        raise LookupError(f"resource {node.resource_name} #{node.resource_id} is not stored")
    return row


def _action(row: ResourceRecord) -> str:
    return Action.CREATE if row.action in (Action.INIT, Action.CREATE) else Action.UPDATE


def _resolve(run: TraversalRun, rdef: ResourceDefinition, plugin: ResourcePlugin) -> Any:
    """The validated property values, or the failure reason as a string."""
    assert run.resolver is not None
    try:
        props = resolve(rdef.properties, run.resolver)
    except ConvectionError as exc:
        return f"{type(exc).__name__}: resources.{rdef.name}: {exc}"
    values, diags = type(plugin).validate(props, ("resources", rdef.name, "properties"))
    errors = [d for d in diags if d.is_error]
    if errors:
        return f"StackValidationFailed: resources.{rdef.name}: Property error: {errors[0]}"
    return values


def _external_id(run: TraversalRun, rdef: ResourceDefinition) -> Any:
    if rdef.external_id is None:
        return None
    assert run.resolver is not None
    return resolve(rdef.external_id, run.resolver)


def _choose(
    run: TraversalRun,
    node: NodeRecord,
    row: ResourceRecord,
    plugin: ResourcePlugin,
    values: Any,
    external: Any,
) -> tuple[str, str]:
    """Heat's update decision, on resolved values."""
    planned = node.payload.get("action")
    if row.action == Action.INIT or planned == "CREATE":
        return "create", "new"
    # Heat's Resource.update checks external_id before anything else: a
    # change (added, removed or another id) fails the update, and an
    # external resource is never updated otherwise.
    if _text(external) != row.external_id:
        what = f"Update to property external_id of {row.name} ({row.type})"
        return "error", f"NotSupported: resources.{row.name}: {what} is not supported."
    if external is not None:
        return "noop", "external resource"
    if planned == "REPLACE" or _needs_replace(row, node, run, plugin):
        return _restricted(run, row, "replace")
    decision = type(plugin).decide_update(row.properties, values)
    if decision.action is UpdateAction.NONE and row.status != Status.COMPLETE:
        # a nested stack's owner left failed: converge its child again
        return _restricted(run, row, "update")
    if decision.action is UpdateAction.NONE:
        return "noop", decision.reason
    if decision.action is UpdateAction.UPDATE:
        return _restricted(run, row, "update")
    if decision.action is UpdateAction.REPLACE:
        return _restricted(run, row, "replace")
    return "error", _immutable_reason(row, plugin, values)


def _text(value: Any) -> str | None:
    return None if value is None else str(value)


async def _adopt(
    run: TraversalRun,
    node: NodeRecord,
    plugin: ResourcePlugin,
    row: ResourceRecord,
    values: Any,
    external: str,
) -> Outcome:
    """``external_id``: the thing exists already; record it, never create it
    (Heat adopts it). Its delete will only forget it."""
    progress: dict[str, JSON] = {"op": "adopt", "row": row.id, "replaces": None}
    row = lc.begin(run, node, row, Action.ADOPT, progress)
    ctx = lc.context(run, node, row, Action.ADOPT)
    await ctx.set_physical_id(external)
    return await finish(run, node, plugin, ctx.row, values, Action.ADOPT, None)


def _needs_replace(
    row: ResourceRecord, node: NodeRecord, run: TraversalRun, plugin: ResourcePlugin
) -> bool:
    assert run.definition is not None
    new_type = run.definition.resources[node.resource_name].resolved_type
    if row.type != new_type or row.unhealthy:
        return True
    if row.status not in (Status.FAILED, Status.IN_PROGRESS):
        return False
    # A nested stack's owner is updated in place (Heat's StackResource).
    return type(plugin).replace_failed or row.physical_id is None


def _restricted(run: TraversalRun, row: ResourceRecord, kind: str) -> tuple[str, str]:
    """Heat's restricted_actions: a needed update or replace becomes a failure."""
    assert run.definition is not None
    registry = run.definition.environment.resource_registry
    if kind in registry.restricted_actions_for(row.name):
        return "restricted", kind
    return kind, kind


def _refused(row: ResourceRecord, kind: str) -> Outcome:
    """A restricted update or replace, as Heat fails it: the resource keeps
    its state (a later unrestricted update still updates it in place); an
    ``UPDATE_FAILED`` event says why, and the stack fails with the error."""
    short = f"{kind} is restricted for resource."
    event = lc.event(row, Action.UPDATE, Status.FAILED, short)
    reason = f"ResourceActionRestricted: resources.{row.name}: {short}"
    return Outcome("failed", [event], failure=(Action.UPDATE, reason))


def _immutable_reason(row: ResourceRecord, plugin: ResourcePlugin, values: Any) -> str:
    schema = type(plugin).properties_schema
    names = [
        k for k in changed_properties(row.properties, values) if k in schema and schema[k].immutable
    ]
    what = f"Update to properties {', '.join(names)} of {row.name} ({row.type})"
    return f"NotSupported: resources.{row.name}: {what} is not supported."


def _replacement(
    run: TraversalRun, old: ResourceRecord, rdef: ResourceDefinition
) -> ResourceRecord:
    """A new row for the replacement; not current until its create completes."""
    unused = run.view.unstarted_replacement(old.id)
    if unused is not None:
        return unused
    record = ResourceRecord(
        id=0,
        stack_id=old.stack_id,
        name=old.name,
        type=rdef.resolved_type,
        template_type=rdef.type,
        action=Action.INIT,
        status=Status.COMPLETE,
        requires=rdef.requires,
        current=False,
        replaces=old.id,
        deletion_policy=rdef.deletion_policy,
    )
    new = dataclasses.replace(record, id=run.store.add_resource(record))
    run.view.put(new)
    return new


def _settle(run: TraversalRun, row: ResourceRecord, rdef: ResourceDefinition) -> list[Change]:
    """Nothing to apply, but the row must record the definition it now
    matches, so the next plan sees it unchanged."""
    fields: dict[str, Any] = {}
    if row.definition_hash != run.digest(row.name):
        fields["definition_hash"] = run.digest(row.name)
    if tuple(row.requires) != rdef.requires:
        fields["requires"] = rdef.requires
    if row.deletion_policy != rdef.deletion_policy:
        fields["deletion_policy"] = rdef.deletion_policy
    if row.template_type != rdef.type:  # an alias renamed, same class
        fields["template_type"] = rdef.type
    return [UpdateResource(row.id, fields)] if fields else []


def _restore(run: TraversalRun, node: NodeRecord, row: ResourceRecord) -> Outcome:
    """Rollback: the old version becomes current again; the newer one is
    left for its cleanup node (Heat restores rather than re-creating)."""
    old_id = node.payload.get("restore_id")
    assert isinstance(old_id, int)
    progress: list[Change] = [UpdateResource(old_id, {"current": True, "replaced_by": None})]
    if row.id != old_id:
        progress.append(UpdateResource(row.id, {"current": False, "replaced_by": old_id}))
    return lc.done(progress=progress)


async def create_on(
    run: TraversalRun,
    node: NodeRecord,
    plugin: ResourcePlugin,
    row: ResourceRecord,
    values: Any,
    replaces: int | None,
) -> Outcome:
    progress: dict[str, JSON] = {"op": "create", "row": row.id, "replaces": replaces}
    # The properties go with CREATE_IN_PROGRESS, as Heat stores them before
    # the create: a create cut short (a failure elsewhere stopping the run, a
    # crash, then a rollback or a delete) is deleted with what it was made of.
    made_of = {"properties": dict(values)} if not row.properties else {}
    if replaces is None:
        row = lc.begin(run, node, row, Action.CREATE, progress, **made_of)
    else:
        # The new row must be found by a re-run, or a crash here would make
        # the plugin create a second thing under another row's name.
        row = await lc.begin_durably(run, node, row, Action.CREATE, progress, **made_of)
    ctx = lc.context(run, node, row, Action.CREATE)
    try:
        token = await lc.start(plugin, "create", ctx, values)
        due = await lc.poll(run, plugin, "create", ctx, values, token)
    except Exception as exc:
        return lc.failed(ctx.row, Action.CREATE, exc)
    if due is not None:
        return lc.sleeping(due, {**progress, "token": token, "polling": True})
    return await finish(run, node, plugin, ctx.row, values, Action.CREATE, replaces, ctx)


async def update_on(
    run: TraversalRun, node: NodeRecord, plugin: ResourcePlugin, row: ResourceRecord, values: Any
) -> Outcome:
    progress: dict[str, JSON] = {"op": "update", "row": row.id, "replaces": None}
    row = lc.begin(run, node, row, Action.UPDATE, progress)
    ctx = lc.context(run, node, row, Action.UPDATE, row.properties)
    try:
        token = await lc.start(plugin, "update", ctx, values)
        due = await lc.poll(run, plugin, "update", ctx, values, token)
    except Exception as exc:
        return lc.failed(ctx.row, Action.UPDATE, exc)
    if due is not None:
        return lc.sleeping(due, {**progress, "token": token, "polling": True})
    return await finish(run, node, plugin, ctx.row, values, Action.UPDATE, None)


async def _resume(
    run: TraversalRun,
    node: NodeRecord,
    plugin: ResourcePlugin,
    values: Any,
    progress: dict[str, Any],
) -> Outcome:
    """Continue what an earlier run of this node started: poll again after a
    timer, or start the same action again after a crash (plugins make that
    safe: the row, its physical id and the operation id are the same)."""
    row = run.view.get(progress["row"])
    if row is None:
        raise LookupError(f"resource #{progress['row']} vanished under {node.key}")
    op, replaces = progress["op"], progress.get("replaces")
    if op == "adopt":
        return await _adopt(run, node, plugin, row, values, str(_external_id(run, _rdef(run, row))))
    if not progress.get("polling"):
        if op == "update":
            return await update_on(run, node, plugin, row, values)
        return await create_on(run, node, plugin, row, values, replaces)
    action = Action.UPDATE if op == "update" else Action.CREATE
    ctx = lc.context(run, node, row, action, row.properties if op == "update" else None)
    try:
        due = await lc.poll(run, plugin, op, ctx, values, progress.get("token"))
    except Exception as exc:
        return lc.failed(ctx.row, action, exc)
    if due is not None:
        return lc.sleeping(due, progress)
    return await finish(run, node, plugin, ctx.row, values, action, replaces)


async def finish(
    run: TraversalRun,
    node: NodeRecord,
    plugin: ResourcePlugin,
    row: ResourceRecord,
    values: Any,
    action: str,
    replaces: int | None,
    ctx: EngineContext | None = None,
) -> Outcome:
    """Record the completed action with everything others will read.

    ``ctx``: the action's own context, reused when it reads the same as a
    new one would (a create's: no previous properties), which saves
    building a second one per resource."""
    assert run.definition is not None
    rdef = run.definition.resources[row.name]
    if ctx is None or ctx.previous_properties is not None or ctx.row is not row:
        ctx = lc.context(run, node, row, action)
    try:
        ref, attrs = await lc.outputs_of(plugin, ctx, values, run.attributes_read(row.name))
    except Exception as exc:
        return lc.failed(row, action, exc)
    extra: dict[str, Any] = {}
    if ref != row.physical_id or row.reference_id is not None:
        # Stored only when it is not simply the physical id (the default).
        extra["reference_id"] = ref
    facts = lc.state(
        row,
        action,
        Status.COMPLETE,
        **extra,
        attributes=attrs,
        properties=dict(values),
        definition_hash=run.digest(row.name),
        requires=rdef.requires,
        deletion_policy=rdef.deletion_policy,
        external_id=_text(_external_id(run, rdef)),
        template_type=rdef.type,
        unhealthy=False,
    )
    progress: list[Change] = []
    if replaces is not None:
        progress.append(UpdateResource(row.id, {"current": True}))
        progress.append(UpdateResource(replaces, {"current": False, "replaced_by": row.id}))
    return hooks.after_action(run, node, row, action, replaces, lc.done(facts, progress))
