"""What the three ``OS::Mistral::*`` types share: reaching the workflow
service, naming what they start, and turning its refusals into the
resource's failure reason.

Why deterministic execution ids: a plugin that starts an execution and is
killed before it recorded the id must not start a second one when the
engine calls it again. The id is derived from the resource and the
operation (``ctx.operation_id`` is the same on the re-run and new for
the next action), and the service returns the execution that already
has it (``WorkflowService.start_execution``).
"""

from __future__ import annotations

import uuid
from collections.abc import Awaitable, Callable, Mapping
from typing import Any, TypeVar

from convection.common import JSON, ConvectionError
from convection.resources._context import ResourceContext
from convection.resources._plugin import ResourceFailure
from convection.resources._workflows import Body, NoWorkflowService, WorkflowService
from convection.software import redact

T = TypeVar("T")

#: Mistral's states a lifecycle execution may still leave (Heat's
#: ``_check_execution``): keep waiting.
WAITING_STATES = frozenset({"IDLE", "RUNNING", "PAUSED"})
FAILED_STATES = frozenset({"ERROR", "CANCELLED"})

#: How long a poll of a running execution waits at first and at most: a
#: short workflow is seen done in a fraction of a second, a long one costs
#: one store read every few seconds.
FIRST_POLL_SECONDS = 0.2
MAX_POLL_SECONDS = 5.0


def service(ctx: ResourceContext, type_name: str) -> WorkflowService:
    found = ctx.workflows
    if found is None:
        raise ResourceFailure(str(NoWorkflowService(type_name)))
    return found


async def call(step: Awaitable[T]) -> T:
    """The service's answer, or its refusal as the resource's reason (Heat
    wraps every mistralclient error in ResourceFailure)."""
    try:
        return await step
    except ConvectionError as exc:
        raise ResourceFailure(str(exc)) from exc


#: Resource data: the operation that is making the resource's workflow or
#: trigger, written before it is made.
STORING = "storing"


async def make_once(
    ctx: ResourceContext,
    adopt: Callable[[], Awaitable[Body | None]],
    make: Callable[[], Awaitable[Body]],
) -> Body:
    """Make the named thing, or, when this same operation began making it
    before a crash, ``adopt`` what it made. A re-run of a failed create is
    a new operation: it never adopts a thing of that name somebody else
    owns, and is refused as Mistral refuses a taken name."""
    if ctx.data.get(STORING) == ctx.operation_id:
        found = await call(adopt())
        if found is not None:
            return found
    await ctx.set_data({**ctx.data, STORING: ctx.operation_id})
    try:
        return await call(make())
    except ResourceFailure:
        await ctx.set_data({k: v for k, v in ctx.data.items() if k != STORING})
        raise


def execution_id(ctx: ResourceContext, what: str = "") -> str:
    """The id of the execution this action (or signal) starts."""
    key = f"convection:mistral:{ctx.stack_id}:{ctx.resource_name}:{ctx.operation_id}:{what}"
    return str(uuid.uuid5(uuid.NAMESPACE_URL, key))


def poll_seconds(now: float, started: float | None) -> float:
    """Back off with the execution's age: a tenth of it, within bounds."""
    if started is None:
        return FIRST_POLL_SECONDS
    age = max(0.0, now - started)
    return min(MAX_POLL_SECONDS, max(FIRST_POLL_SECONDS, age / 10))


def execution_view(execution: Body) -> dict[str, Any]:
    """An execution as Heat's ``executions`` attribute lists it."""
    return {
        key: execution.get(key)
        for key in ("id", "workflow_name", "created_at", "updated_at", "state", "input", "output")
    }


def redacted(value: JSON, secrets: tuple[str, ...]) -> JSON:
    """``value`` with the stack's hidden parameter values masked wherever
    they appear: an attribute is API output, and a Workflow's input may
    carry a password from a hidden parameter (Heat shows it; we do not)."""
    if not secrets:
        return value
    if isinstance(value, str):
        return redact(value, secrets)
    if isinstance(value, Mapping):
        return {k: redacted(v, secrets) for k, v in value.items()}
    if isinstance(value, list):
        return [redacted(v, secrets) for v in value]
    return value
