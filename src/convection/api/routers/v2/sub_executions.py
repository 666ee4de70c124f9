"""An execution's tree: ``GET /v2/executions/<id>/report`` (Mistral's
execution report) and the sub-executions of an execution or a task
(``GET /v2/executions/<id>/executions``, ``GET /v2/tasks/<id>/executions``)."""

from __future__ import annotations

from fastapi import APIRouter

from convection.api.routers.v2._common import (
    PREFIX,
    Body,
    MistralRoute,
    Reader,
    StoreDep,
    bad_request,
    bool_param,
)
from convection.api.routers.v2.executions import shown
from convection.workflows import (
    execution_report,
    execution_sub_executions,
    task_sub_executions,
)

router = APIRouter(prefix=PREFIX, tags=["mistral: executions"], route_class=MistralRoute)


def _depth(value: str | None) -> int:
    """``max_depth``: an integer, negative for no limit (Mistral's -1)."""
    if value is None or value == "":
        return -1
    text = value.strip()
    if len(text) > 9 or not text.lstrip("-").isdigit():
        raise bad_request(f"Invalid input for field/attribute max_depth. Value: '{value}'.")
    return int(text)


@router.get("/executions/{execution_id}/report", summary="An execution's report")
def report(
    principal: Reader, store: StoreDep, execution_id: str, errors_only: str | None = None,
    max_depth: str | None = None, statistics_only: str | None = None,
) -> Body:  # fmt: skip
    return execution_report(
        store, principal.project, execution_id,
        errors_only=bool_param(errors_only, "errors_only"), max_depth=_depth(max_depth),
        statistics_only=bool_param(statistics_only, "statistics_only"),
    )  # fmt: skip


@router.get("/executions/{execution_id}/executions", summary="An execution and those below it")
def of_execution(
    principal: Reader, store: StoreDep, execution_id: str, errors_only: str | None = None,
    max_depth: str | None = None, include_output: str | None = None,
) -> Body:  # fmt: skip
    found = execution_sub_executions(
        store, principal.project, execution_id,
        errors_only=bool_param(errors_only, "errors_only"), max_depth=_depth(max_depth),
    )  # fmt: skip
    output = bool_param(include_output, "include_output")
    return {"executions": [shown(e, output=output) for e in found]}


@router.get("/tasks/{task_id}/executions", summary="A task's sub-workflow executions")
def of_task(
    principal: Reader, store: StoreDep, task_id: str, errors_only: str | None = None,
    max_depth: str | None = None, include_output: str | None = None,
) -> Body:  # fmt: skip
    found = task_sub_executions(
        store, principal.project, task_id,
        errors_only=bool_param(errors_only, "errors_only"), max_depth=_depth(max_depth),
    )  # fmt: skip
    output = bool_param(include_output, "include_output")
    return {"executions": [shown(e, output=output) for e in found]}
