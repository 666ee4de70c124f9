"""What the dashboard's buttons do: each a form post, checked for CSRF and
for a writer's role, then one call of the stack or workflow service, which
alone decides whether the operation is legal now. Each answers 303 back to
the page (post/redirect/get), or an error page naming the problem.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import Any

from fastapi import APIRouter, Request, Response
from fastapi.responses import RedirectResponse

from convection.common import InvalidInput, LimitExceeded
from convection.dashboard.context import Caller, DashboardRoute, Forbidden, SignedIn, page
from convection.dashboard.forms import Form, form_limit, read_form, update_inputs
from convection.dashboard.plan import plan_view
from convection.dashboard.session import csrf_ok
from convection.model import StackInputs
from convection.service import StackPatch
from convection.workflows import get_task, rerun_task, skip_task, update_execution

Inputs = StackInputs | StackPatch

router = APIRouter(route_class=DashboardRoute, include_in_schema=False)

#: A signal's JSON body, at most (Heat's signals are small documents).
MAX_SIGNAL = 64 * 1024
#: Small forms: a button's, a hook's, a signal's.
SMALL_FORM = MAX_SIGNAL + 4096

_STACK_ACTIONS: dict[str, Callable[[Caller, str], None]] = {
    "cancel": lambda c, sid: c.stacks.cancel_update(c.project, sid),
    "cancel-no-rollback": lambda c, sid: c.stacks.cancel_update(c.project, sid, rollback=False),
    "check": lambda c, sid: c.stacks.check(c.project, sid),
    "suspend": lambda c, sid: c.stacks.suspend(c.project, sid),
    "resume": lambda c, sid: c.stacks.resume(c.project, sid),
    "rollback": lambda c, sid: c.stacks.rollback(c.project, sid),
}
_EXECUTION_STATES = {"pause": "PAUSED", "resume": "RUNNING", "cancel": "CANCELLED"}


async def _writer_form(request: Request, caller: Caller, limit: int = SMALL_FORM) -> Form:
    form = await read_form(request, limit)
    if not csrf_ok(caller.session, form.get("csrf")):
        raise Forbidden("The form's security token is missing or stale: reload the page.")
    if not caller.identity.can_write:
        raise Forbidden("A reader's token can change nothing.")
    return form


def _back(path: str) -> Response:
    return RedirectResponse(path, status_code=303)


@router.post("/stacks/{stack_id}/actions/{action}")
async def stack_action(request: Request, caller: SignedIn, stack_id: str, action: str) -> Response:
    form = await _writer_form(request, caller)
    stack = caller.stacks.identify(caller.project, stack_id)
    if action == "delete":
        if form.get("confirm") != stack["stack_name"]:
            raise InvalidInput.single(
                f"confirm: type the stack's name ({stack['stack_name']}) to delete it."
            )
        caller.stacks.delete(caller.project, stack["id"])
        return _back(f"/stacks/{stack['id']}")
    run = _STACK_ACTIONS.get(action)
    if run is None:
        raise InvalidInput.single(f"Unknown stack action {action[:40]!r}.")
    run(caller, stack["id"])
    return _back(f"/stacks/{stack['id']}")


@router.post("/stacks/{stack_id}/preview")
async def preview(request: Request, caller: SignedIn, stack_id: str) -> Response:
    def show(stack: dict[str, Any], inputs: Inputs, form: Form) -> Response:
        changes = caller.stacks.preview_update(
            caller.project, stack["id"], inputs, existing=form.flag("existing")
        )
        return page(
            request, "plan.html", viewer=caller, stack=stack, plan=plan_view(changes),
            form=form.fields,
        )  # fmt: skip

    return await _with_update_form(request, caller, stack_id, show)


@router.post("/stacks/{stack_id}/update")
async def update(request: Request, caller: SignedIn, stack_id: str) -> Response:
    def apply(stack: dict[str, Any], inputs: Inputs, form: Form) -> Response:
        caller.stacks.update(caller.project, stack["id"], inputs, existing=form.flag("existing"))
        return _back(f"/stacks/{stack['id']}")

    return await _with_update_form(request, caller, stack_id, apply)


async def _with_update_form(
    request: Request,
    caller: Caller,
    stack_id: str,
    then: Callable[[dict[str, Any], Inputs, Form], Response],
) -> Response:
    """The update form's inputs handed to ``then``; an invalid template is
    shown on the form again, with what was typed kept and every problem
    located."""
    form = await _writer_form(request, caller, form_limit(caller.stacks.config.limits))
    stack = caller.stacks.identify(caller.project, stack_id)
    try:
        return then(stack, update_inputs(form, caller.stacks.config.limits), form)
    except InvalidInput as exc:
        return _update_form(request, caller, stack, form, exc)


def _update_form(
    request: Request, caller: Caller, stack: dict[str, Any], form: Form, exc: InvalidInput
) -> Response:
    code = 413 if isinstance(exc, LimitExceeded) else 400
    errors = [str(d) for d in exc.diagnostics] or [str(exc)]
    return page(
        request, "update.html", code, viewer=caller, stack=stack, template=form.get("template"),
        environment=form.get("environment"), parameters=form.get("parameters"),
        existing=form.flag("existing"), errors=errors,
    )  # fmt: skip


@router.post("/stacks/{stack_id}/resources/{name}/hook")
async def clear_hook(request: Request, caller: SignedIn, stack_id: str, name: str) -> Response:
    form = await _writer_form(request, caller)
    stack = caller.stacks.identify(caller.project, stack_id)
    caller.stacks.hook_clear(caller.project, stack["id"], name, form.get("hook"))
    return _back(f"/stacks/{stack['id']}")


@router.post("/stacks/{stack_id}/resources/{name}/signal")
async def signal(request: Request, caller: SignedIn, stack_id: str, name: str) -> Response:
    form = await _writer_form(request, caller)
    stack = caller.stacks.identify(caller.project, stack_id)
    caller.stacks.signal(caller.project, stack["id"], name, _signal_data(form.get("data")))
    return _back(f"/stacks/{stack['id']}")


def _signal_data(text: str) -> dict[str, Any]:
    if len(text) > MAX_SIGNAL:
        raise LimitExceeded.single(f"data: a signal is at most {MAX_SIGNAL} bytes.")
    if not text.strip():
        return {}
    try:
        data = json.loads(text)
    except json.JSONDecodeError as exc:
        raise InvalidInput.single(
            f"data:{exc.lineno}:{exc.colno}: not JSON ({exc.msg}); a signal is a JSON object."
        ) from None
    if not isinstance(data, dict):
        raise InvalidInput.single('data: a signal is a JSON object, such as {"status": "SUCCESS"}.')
    return data


@router.post("/executions/{execution_id}/actions/{action}")
async def execution_action(
    request: Request, caller: SignedIn, execution_id: str, action: str
) -> Response:
    await _writer_form(request, caller)
    state = _EXECUTION_STATES.get(action)
    if state is None:
        raise InvalidInput.single(f"Unknown execution action {action[:40]!r}.")
    update_execution(caller.store, caller.project, execution_id, state=state)
    return _back(f"/executions/{execution_id}")


@router.post("/executions/{execution_id}/tasks/{task_id}/{action}")
async def task_action(
    request: Request, caller: SignedIn, execution_id: str, task_id: str, action: str
) -> Response:
    await _writer_form(request, caller)
    task = get_task(caller.store, caller.project, task_id)
    if task["workflow_execution_id"] != execution_id:
        raise InvalidInput.single("That task is not one of this execution's.")
    if action == "rerun":
        rerun_task(caller.store, caller.project, task_id, reset=True)
    elif action == "skip":
        skip_task(caller.store, caller.project, task_id)
    else:
        raise InvalidInput.single(f"Unknown task action {action[:40]!r}.")
    return _back(f"/executions/{execution_id}")
