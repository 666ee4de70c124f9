"""The cleanup node's job: remove one stored resource version.

Heat's rules: ``deletion_policy: Retain`` and ``external_id`` resources are
forgotten, never deleted (Snapshot deletes here: there is nothing to
snapshot to); a version that turned out not to be replaced is kept. A delete runs through the
plugin's ``delete`` and its polls, like any other action, even for a row
that never left INIT: its create may have begun before a crash, and a
plugin's delete of something that does not exist is a success. Such a
row goes without events or state changes, as Heat drops a resource that
was never created (a rollback after a failed create shows no DELETE events
for what it never made). A stack delete stops at pre- and post-delete hooks
(``engine.hooks``).
"""

from __future__ import annotations

from typing import Any

from convection.common import JSON, Action, Status
from convection.convergence import hooks
from convection.convergence import lifecycle as lc
from convection.convergence.run import TraversalRun
from convection.kernel import Outcome
from convection.plan import CleanupMode
from convection.store import Change, DeleteResource, NodeRecord, ResourceRecord


async def run_cleanup(run: TraversalRun, node: NodeRecord) -> Outcome:
    assert node.resource_id is not None
    row = run.view.get(node.resource_id)
    if row is None:
        return lc.done()  # already gone (a re-run after its delete committed)
    if hooks.post_cleared(node):
        return lc.done([DeleteResource(row.id)])  # deleted before the post-delete hook
    # Never created: Heat removes the row without a trace (no events, no
    # state); the plugin's delete still runs, in case a create had begun.
    quiet = row.action == Action.INIT
    progress = node.payload.get("progress")
    if not isinstance(progress, dict):
        if node.payload.get("mode") != CleanupMode.DELETE and row.current:
            # Not replaced after all (or an unused replacement row was put
            # to use): only versions that are no longer current go.
            return lc.done()
        paused = hooks.before_delete(run, node, row)
        if paused is not None:
            return paused
        if row.external_id is not None or row.deletion_policy == "Retain":
            forget: list[Change] = [DeleteResource(row.id)] if quiet else _forget(row)
            return hooks.after_delete(run, node, row, lc.done(forget))
    plugin = run.plugin(row.type)
    if plugin is None and quiet and row.physical_id is None:
        return lc.done([DeleteResource(row.id)])  # never created, type gone
    if plugin is None:
        msg = f"The Resource Type ({row.type}) could not be found."
        return lc.failed(row, Action.DELETE, f"StackValidationFailed: resources.{row.name}: {msg}")
    progress = progress if isinstance(progress, dict) else {"op": "delete", "row": row.id}
    if not progress.get("polling") and not quiet:
        row = lc.begin(run, node, row, Action.DELETE, progress)
    ctx = lc.context(run, node, row, Action.DELETE)
    try:
        token: Any = progress.get("token")
        if not progress.get("polling"):
            token = await lc.start(plugin, "delete", ctx, row.properties)
        due = await lc.poll(run, plugin, "delete", ctx, row.properties, token)
    except Exception as exc:
        return lc.failed(ctx.row, Action.DELETE, exc)
    if due is not None:
        resume: dict[str, JSON] = {**progress, "token": token, "polling": True}
        return lc.sleeping(due, resume)
    if quiet:
        return lc.done([DeleteResource(row.id)])
    return hooks.after_delete(run, node, ctx.row, lc.done(_deleted(ctx.row)))


def _forget(row: ResourceRecord) -> list[Change]:
    """Retained or external: the events of a delete, the thing left alone."""
    return [
        lc.event(row, Action.DELETE, Status.IN_PROGRESS, lc.STATE_CHANGED),
        *_deleted(row),
    ]


def _deleted(row: ResourceRecord) -> list[Change]:
    return [lc.event(row, Action.DELETE, Status.COMPLETE, lc.STATE_CHANGED), DeleteResource(row.id)]
