"""``OS::Mistral::ExternalResource``: a resource Convection knows nothing
of, whose create, update, suspend, resume and delete are each a workflow.

As Heat's (``heat/engine/resources/openstack/mistral/external_resource.py``):
each action with a workflow under ``actions`` starts an execution of it
with the ``input`` property as input, ``description`` as its description
and the action's ``params``; once the resource has a physical id, the
outputs of its earlier executions are passed as
``params.env.heat_extresource_data`` (a workflow reads
``env().heat_extresource_data``). The action completes when the
execution does:

* IDLE, RUNNING or PAUSED: not yet, poll again on a timer (the wait is a
  timer row; no worker is held);
* SUCCESS: its output is merged into the stored outputs (the ``output``
  attribute, a JSON string as Heat's), and ``output.resource_id``, when
  present, becomes the physical id, else the execution's id does;
* ERROR or CANCELLED: the action fails with the execution's
  ``state_info``.

An action without a workflow is done at once. Changing an input named in
``replace_on_change_inputs`` replaces the resource instead of running the
UPDATE workflow; ``always_update`` runs it on every stack update, changed
or not. The update workflow is given the new input.

Crash safety: the execution's id is derived from the resource and the
operation, so the re-run of an action after ``kill -9`` finds the
execution it started rather than starting the workflow again.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from datetime import datetime
from typing import Any, ClassVar

from convection.common import JSON
from convection.resources._context import ResourceContext
from convection.resources._plugin import Poll, Properties, ResourceFailure, ResourcePlugin, Token
from convection.resources._plugin import Wait as WaitFor
from convection.resources._schema import AttributeSchema, AttributeType, PropertySchema
from convection.resources._schema import PropertyType as PT
from convection.resources._update import UpdateAction, UpdateDecision
from convection.resources.mistral._service import (
    FAILED_STATES,
    WAITING_STATES,
    call,
    execution_id,
    poll_seconds,
    service,
)

TYPE_NAME = "OS::Mistral::ExternalResource"
ACTIONS = ("CREATE", "UPDATE", "SUSPEND", "RESUME", "DELETE")
#: Resource data: the merged outputs of the executions so far.
OUTPUTS = "outputs"
#: Heat cuts a physical id taken from an output to this length.
MAX_ID = 255

_ACTION = PropertySchema(
    type=PT.MAP,
    description="The workflow to run for this action, and its params.",
    schema={
        "workflow": PropertySchema(type=PT.STRING, description="Workflow to run.", required=True),
        "params": PropertySchema(
            type=PT.MAP,
            description="Execution params; a reverse workflow needs 'task_name'.",
            default={},
        ),
    },
)


class MistralExternalResource(ResourcePlugin):
    type_name = TYPE_NAME
    #: ``always_update`` must be asked on every stack update.
    visit_on_update = True
    properties_schema: ClassVar[Mapping[str, PropertySchema]] = {
        "actions": PropertySchema(
            type=PT.MAP,
            description="The workflow each resource action runs.",
            required=True,
            schema=dict.fromkeys(ACTIONS, _ACTION),
        ),
        "input": PropertySchema(
            type=PT.MAP,
            description="The workflows' input.",
            default={},
            update_allowed=True,
        ),
        "description": PropertySchema(
            type=PT.STRING, description="The executions' description.", default="Heat managed"
        ),
        "replace_on_change_inputs": PropertySchema(
            type=PT.LIST,
            description="Inputs whose change replaces the resource instead of updating it.",
            default=[],
        ),
        "always_update": PropertySchema(
            type=PT.BOOLEAN,
            description="Run the UPDATE workflow on every stack update, changed or not.",
            default=False,
        ),
    }
    attributes_schema: ClassVar[Mapping[str, AttributeSchema]] = {
        "output": AttributeSchema(
            "The merged outputs of the executions, as a JSON string.", AttributeType.MAP
        ),
    }

    @classmethod
    def decide_update(cls, old: Properties, new: Properties) -> UpdateDecision:
        old_in, new_in = old.get("input") or {}, new.get("input") or {}
        for name in new.get("replace_on_change_inputs") or ():
            if old_in.get(name) != new_in.get(name):
                return UpdateDecision(
                    UpdateAction.REPLACE, f"input {name} is in replace_on_change_inputs"
                )
        decision = super().decide_update(old, new)
        if decision.action is UpdateAction.NONE and new.get("always_update"):
            return UpdateDecision(UpdateAction.UPDATE, "always_update")
        return decision

    async def create(self, ctx: ResourceContext, props: Properties) -> Token:
        return await self._start(ctx, props, "CREATE")

    async def update(self, ctx: ResourceContext, props: Properties) -> Token:
        return await self._start(ctx, props, "UPDATE")

    async def suspend(self, ctx: ResourceContext, props: Properties) -> Token:
        return await self._start(ctx, props, "SUSPEND")

    async def resume(self, ctx: ResourceContext, props: Properties) -> Token:
        return await self._start(ctx, props, "RESUME")

    async def delete(self, ctx: ResourceContext, props: Properties) -> Token:
        return await self._start(ctx, props, "DELETE")

    async def check_create_complete(
        self, ctx: ResourceContext, props: Properties, token: Token
    ) -> Poll:
        return await self._check(ctx, token)

    check_update_complete = check_create_complete
    check_suspend_complete = check_create_complete
    check_resume_complete = check_create_complete
    check_delete_complete = check_create_complete

    async def attribute(self, ctx: ResourceContext, props: Properties, name: str) -> JSON:
        if name == "output" and ctx.physical_id is not None:
            return json.dumps(_outputs(ctx.data))
        return None

    async def _start(self, ctx: ResourceContext, props: Properties, action: str) -> Token:
        chosen = (props.get("actions") or {}).get(action)
        if not chosen:
            return None
        params = dict(chosen.get("params") or {})
        if ctx.physical_id is not None:
            env = params.get("env")
            env = dict(env) if isinstance(env, Mapping) else {}
            params["env"] = {**env, "heat_extresource_data": _outputs(ctx.data)}
        run = await call(
            service(ctx, self.type_name).start_execution(
                chosen["workflow"],
                execution_id=execution_id(ctx, action),
                input=props.get("input") or {},
                params=params,
                description=str(props.get("description") or ""),
            )
        )
        return str(run["id"])

    async def _check(self, ctx: ResourceContext, token: Token) -> Poll:
        if not isinstance(token, str):
            return True  # the action has no workflow
        run = await call(service(ctx, self.type_name).get_execution(token))
        if run is None:
            raise ResourceFailure(f"Mistral execution {token} is gone")
        state = run.get("state")
        if state in WAITING_STATES:
            return WaitFor(poll_seconds(ctx.now(), _epoch(run.get("created_at"))))
        if state in FAILED_STATES:
            raise ResourceFailure(str(run.get("state_info") or f"execution {token} {state}"))
        if state != "SUCCESS":
            raise ResourceFailure(f"Mistral execution is in unknown state: {state}")
        await _record(ctx, token, run.get("output"))
        return True


async def _record(ctx: ResourceContext, token: str, output: Any) -> None:
    found = dict(output) if isinstance(output, Mapping) else {}
    merged = {**_outputs(ctx.data), **found}
    await ctx.set_data({**ctx.data, OUTPUTS: merged})
    physical = found.get("resource_id") or token
    await ctx.set_physical_id(str(physical)[:MAX_ID])


def _outputs(data: Mapping[str, JSON]) -> dict[str, Any]:
    found = data.get(OUTPUTS)
    return dict(found) if isinstance(found, Mapping) else {}


def _epoch(text: Any) -> float | None:
    """Mistral's ``created_at`` (``YYYY-MM-DD HH:MM:SS``, UTC) as seconds."""
    if not isinstance(text, str):
        return None
    try:
        return datetime.fromisoformat(text + "+00:00").timestamp()
    except ValueError:
        return None
