"""Whole-stack action jobs: check, suspend and resume one resource.

Check is a finding, not an error: a drifted resource goes CHECK_FAILED but
its node is done, so every resource is checked (Heat aggregates check
failures) and the stack ends CHECK_FAILED. Suspend and resume fail like
any action, and their dependents are skipped.
"""

from __future__ import annotations

from typing import Any

from convection.common import JSON, Action, Status
from convection.convergence import lifecycle as lc
from convection.convergence.run import TraversalRun
from convection.kernel import Outcome
from convection.resources import ActionNotSupported
from convection.store import NodeRecord


async def run_check(run: TraversalRun, node: NodeRecord) -> Outcome:
    assert node.resource_id is not None
    row = run.view.get(node.resource_id)
    if row is None:
        return lc.done()
    plugin = run.plugin(row.type)
    if row.action == Action.INIT or plugin is None:
        reason = f"Can not check {row.name}, resource not created yet."
        if plugin is None:
            reason = f"The Resource Type ({row.type}) could not be found."
        return Outcome("done", lc.state(row, Action.CHECK, Status.FAILED, reason), finding=reason)
    progress = node.payload.get("progress")
    polling = isinstance(progress, dict) and bool(progress.get("polling"))
    started: dict[str, JSON] = {"op": "check", "row": row.id}
    if not polling:
        row = lc.begin(run, node, row, Action.CHECK, started)
    ctx = lc.context(run, node, row, Action.CHECK)
    try:
        drift = None if polling else await plugin.check(ctx, row.properties)
        # A check that runs elsewhere (a child stack's) is waited for on a timer.
        due = None if drift else await lc.poll(run, plugin, "check", ctx, row.properties, None)
        if due is not None:
            return lc.sleeping(due, {**started, "polling": True})
    except ActionNotSupported:
        reason = f"CHECK not supported for {row.type}"
        return lc.done(lc.state(ctx.row, Action.CHECK, Status.COMPLETE, reason))
    except Exception as exc:
        drift = lc.failure_reason(exc, row.name)
    if drift:
        facts = lc.state(ctx.row, Action.CHECK, Status.FAILED, drift)
        return Outcome("done", facts, finding=drift)
    return lc.done(lc.state(ctx.row, Action.CHECK, Status.COMPLETE, unhealthy=False))


async def run_suspend(run: TraversalRun, node: NodeRecord) -> Outcome:
    return await _toggle(run, node, "suspend", Action.SUSPEND)


async def run_resume(run: TraversalRun, node: NodeRecord) -> Outcome:
    return await _toggle(run, node, "resume", Action.RESUME)


async def _toggle(run: TraversalRun, node: NodeRecord, op: str, action: str) -> Outcome:
    assert node.resource_id is not None
    row = run.view.get(node.resource_id)
    if row is None:
        return lc.done()
    plugin = run.plugin(row.type)
    if plugin is None:
        return lc.failed(row, action, f"The Resource Type ({row.type}) could not be found.")
    progress = node.payload.get("progress")
    progress = progress if isinstance(progress, dict) else {"op": op, "row": row.id}
    if not progress.get("polling"):
        row = lc.begin(run, node, row, action, progress)
    ctx = lc.context(run, node, row, action)
    try:
        token: Any = progress.get("token")
        if not progress.get("polling"):
            token = await lc.start(plugin, op, ctx, row.properties)
        due = await lc.poll(run, plugin, op, ctx, row.properties, token)
    except Exception as exc:
        return lc.failed(ctx.row, action, exc)
    if due is not None:
        resume: dict[str, JSON] = {**progress, "token": token, "polling": True}
        return lc.sleeping(due, resume)
    return lc.done(lc.state(ctx.row, action, Status.COMPLETE))
