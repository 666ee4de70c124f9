"""Mistral's REST API v2 under ``/v2``: one module per resource, each
with Mistral's routes, bodies, listing conventions and error bodies
(``../shared/MISTRAL-NOTES.md`` §6), over ``convection.workflows``'
operations, scoped to the caller's project as ``/v1`` is."""

from __future__ import annotations

from convection.api.routers.v2 import (
    action_executions,
    actions,
    cron_triggers,
    environments,
    executions,
    root,
    sub_executions,
    tasks,
    workbooks,
    workflows,
)

#: In the order they are registered: the catch-all ``fallback`` last.
ROUTERS = (
    root.router,
    workflows.router,
    workbooks.router,
    actions.router,
    executions.router,
    sub_executions.router,
    tasks.router,
    action_executions.router,
    cron_triggers.router,
    environments.router,
    root.fallback,
)

__all__ = ["ROUTERS"]
