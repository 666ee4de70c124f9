"""``OS::Mistral::CronTrigger``: a workflow started on a schedule.

As Heat's (``heat/engine/resources/openstack/mistral/cron_trigger.py``):
create makes the trigger (Mistral's ``POST /v2/cron_triggers``, with its
checks and messages) and the physical id is its name; every property
change replaces it; delete deletes it, and one already gone (a trigger
whose count ran out is deleted by the service) is not an error. A re-run
after a crash finds the trigger of that name it made.

``next_execution_time`` and ``remaining_executions`` are read when the
resource's action completes and stored, as every attribute here is; the
live values are in ``convection cron-trigger show`` and ``GET
/v2/cron_triggers/NAME``.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import ClassVar

from convection.common import JSON, Diagnostic, Path
from convection.resources._context import ResourceContext
from convection.resources._plugin import Properties, ResourcePlugin, Token
from convection.resources._schema import AttributeSchema, AttributeType, PropertySchema
from convection.resources._schema import PropertyType as PT
from convection.resources._workflows import Body, WorkflowService
from convection.resources.mistral._service import STORING, call, make_once, service

TYPE_NAME = "OS::Mistral::CronTrigger"


class MistralCronTrigger(ResourcePlugin):
    type_name = TYPE_NAME
    properties_schema: ClassVar[Mapping[str, PropertySchema]] = {
        "name": PropertySchema(
            type=PT.STRING, description="Trigger name (default: the physical resource name)."
        ),
        "pattern": PropertySchema(type=PT.STRING, description="Cron expression."),
        "workflow": PropertySchema(
            type=PT.MAP,
            description="The workflow to start, and its input.",
            required=True,
            schema={
                "name": PropertySchema(
                    type=PT.STRING, description="Name of the workflow.", required=True
                ),
                "input": PropertySchema(type=PT.MAP, description="Input of the workflow."),
            },
        ),
        "first_time": PropertySchema(
            type=PT.STRING, description='Time of the first execution, "YYYY-MM-DD HH:MM" (UTC).'
        ),
        "count": PropertySchema(type=PT.INTEGER, description="How many executions in all."),
    }
    attributes_schema: ClassVar[Mapping[str, AttributeSchema]] = {
        "next_execution_time": AttributeSchema(
            'Time of the next execution, "YYYY-MM-DD HH:MM:SS".', AttributeType.STRING
        ),
        "remaining_executions": AttributeSchema(
            "Number of executions left.", AttributeType.INTEGER
        ),
    }

    @classmethod
    def validate_values(
        cls, values: Properties, path: Path, *, strict: bool, stack_timeout: float | None
    ) -> list[Diagnostic]:
        if values.get("pattern") is None and values.get("first_time") is None:
            message = (
                "At least one of the following properties must be specified: pattern, first_time."
            )
            return [Diagnostic(message, path)]
        return []

    async def create(self, ctx: ResourceContext, props: Properties) -> Token:
        if ctx.physical_id is not None:
            return None
        wf, name = service(ctx, self.type_name), trigger_name(ctx, props)
        made = await make_once(
            ctx, lambda: wf.get_cron_trigger(name), lambda: self._make(wf, name, props)
        )
        await ctx.set_physical_id(str(made["name"]))
        return None

    @staticmethod
    async def _make(wf: WorkflowService, name: str, props: Properties) -> Body:
        workflow = props.get("workflow") or {}
        return await wf.create_cron_trigger(
            name,
            str(workflow.get("name")),
            input=workflow.get("input") or {},
            params={},
            pattern=props.get("pattern"),
            first_time=props.get("first_time"),
            count=props.get("count"),
        )

    async def delete(self, ctx: ResourceContext, props: Properties) -> Token:
        name = ctx.physical_id or (trigger_name(ctx, props) if STORING in ctx.data else None)
        if name is not None:
            await call(service(ctx, self.type_name).delete_cron_trigger(name))
        return None

    async def attribute(self, ctx: ResourceContext, props: Properties, name: str) -> JSON:
        if ctx.physical_id is None or ctx.workflows is None:
            return None
        found = await ctx.workflows.get_cron_trigger(ctx.physical_id)
        if found is None:
            return ""  # Heat: a trigger gone reads as empty
        value: JSON = found.get(name)
        return value


def trigger_name(ctx: ResourceContext, props: Properties) -> str:
    return str(props.get("name") or ctx.physical_resource_name)
