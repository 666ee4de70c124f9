"""The pages: server-rendered HTML shells that work as plain HTML, which
the page's script then makes live (graph, tables, side panel, stream)."""

from __future__ import annotations

from typing import Any

import yaml
from fastapi import APIRouter, Request, Response

from convection.dashboard.context import DashboardRoute, SignedIn, page
from convection.dashboard.stack_data import stack_rows
from convection.workflows import (
    get_execution,
    get_workflow,
    list_executions,
    list_workflows,
)

router = APIRouter(route_class=DashboardRoute, include_in_schema=False)

#: Rows a list page shows (newest first); the search narrows them.
LIST_LIMIT = 500
#: The stack statuses (and families) the list's filter offers.
STATUS_FILTERS = ("", "IN_PROGRESS", "COMPLETE", "FAILED", "CREATE_COMPLETE", "UPDATE_COMPLETE")


@router.get("/stacks")
def stacks_page(request: Request, caller: SignedIn, status: str = "", q: str = "") -> Response:
    rows = stack_rows(caller.stacks, caller.project, status[:64], q[:256])
    return page(
        request, "stacks.html", viewer=caller, stacks=rows[:LIST_LIMIT], total=len(rows),
        status=status, q=q, statuses=STATUS_FILTERS,
    )  # fmt: skip


@router.get("/stacks/{stack_id}")
def stack_page(request: Request, caller: SignedIn, stack_id: str) -> Response:
    stack = caller.stacks.show(caller.project, stack_id)
    return page(
        request, "stack.html", viewer=caller, stack=stack,
        outputs=caller.stacks.outputs(caller.project, stack["id"]),
    )  # fmt: skip


@router.get("/stacks/{stack_id}/update")
def update_page(request: Request, caller: SignedIn, stack_id: str) -> Response:
    stack = caller.stacks.identify(caller.project, stack_id)
    template = caller.stacks.template(caller.project, stack["id"])
    text = yaml.safe_dump(template, sort_keys=False, default_flow_style=False)
    return page(
        request, "update.html", viewer=caller, stack=stack, template=text, environment="",
        parameters="", existing=False, errors=[],
    )  # fmt: skip


@router.get("/stacks/{stack_id}/delete")
def delete_page(request: Request, caller: SignedIn, stack_id: str) -> Response:
    stack = caller.stacks.identify(caller.project, stack_id)
    return page(request, "delete.html", viewer=caller, stack=stack)


@router.get("/workflows")
def workflows_page(request: Request, caller: SignedIn, q: str = "") -> Response:
    rows = list_workflows(caller.store, caller.project, sort_keys=("name",))
    needle = q[:256].strip().lower()
    rows = [w for w in rows if not needle or needle in str(w["name"]).lower()]
    return page(request, "workflows.html", viewer=caller, workflows=rows[:LIST_LIMIT], q=q)


@router.get("/workflows/{workflow_id}")
def workflow_page(request: Request, caller: SignedIn, workflow_id: str) -> Response:
    workflow = get_workflow(caller.store, caller.project, workflow_id)
    return page(request, "workflow.html", viewer=caller, workflow=workflow)


@router.get("/executions")
def executions_page(request: Request, caller: SignedIn, state: str = "") -> Response:
    filters: dict[str, Any] | None = {"state": state[:32]} if state else None
    rows = list_executions(
        caller.store, caller.project, filters=filters, sort_dir="desc", limit=LIST_LIMIT
    )
    return page(request, "executions.html", viewer=caller, executions=rows, state=state)


@router.get("/executions/{execution_id}")
def execution_page(request: Request, caller: SignedIn, execution_id: str) -> Response:
    execution = get_execution(caller.store, caller.project, execution_id)
    return page(request, "execution.html", viewer=caller, execution=execution)
