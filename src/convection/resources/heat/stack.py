"""OS::Heat::Stack: a stack made from a template given as a property.

Heat's ``RemoteStack`` creates the stack through the Heat API of another
region; Convection has one region, so the child is a nested stack in the
same store, run by the same engine. ``context`` is accepted as Heat's
schema has it, but only the local region (no ``region_name``, or
:data:`LOCAL_REGION`) can be used.

As in Heat, every update of the parent updates the child stack (the child's
resources then decide whether they change), the reference id is the child's
stack id, and the attributes are ``stack_name`` and ``outputs``.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import ClassVar

from convection.common import JSON, Diagnostic, Path
from convection.resources._context import ResourceContext
from convection.resources._nested import ChildStack
from convection.resources._plugin import Properties, ResourceFailure
from convection.resources._schema import (
    AttributeSchema,
    AttributeType,
    PropertySchema,
    PropertyType,
)
from convection.resources._update import UpdateAction, UpdateDecision
from convection.resources.heat.stack_resource import StackResourcePlugin

#: The one region Convection has (Heat's default region name).
LOCAL_REGION = "RegionOne"


class Stack(StackResourcePlugin):
    type_name = "OS::Heat::Stack"
    #: Heat's ``_needs_update`` is always true: the child decides.
    visit_on_update = True
    properties_schema: ClassVar[Mapping[str, PropertySchema]] = {
        "context": PropertySchema(
            type=PropertyType.MAP,
            description="Context for this stack.",
            schema={
                "region_name": PropertySchema(
                    type=PropertyType.STRING,
                    description="Region name in which this stack will be created.",
                ),
                "ca_cert": PropertySchema(
                    type=PropertyType.STRING,
                    description="CA Cert for SSL.",
                ),
                "insecure": PropertySchema(
                    type=PropertyType.BOOLEAN,
                    description="If set, then the server's certificate will not be verified.",
                    default=False,
                ),
                "credential_secret_id": PropertySchema(
                    type=PropertyType.STRING,
                    description="A Barbican secret ID holding credentials for a remote cloud.",
                ),
            },
        ),
        "template": PropertySchema(
            type=PropertyType.STRING,
            description="Template that specifies the stack to be created as a resource.",
            required=True,
            update_allowed=True,
        ),
        "timeout": PropertySchema(
            type=PropertyType.INTEGER,
            description="Number of minutes to wait for this stack creation.",
            update_allowed=True,
        ),
        "parameters": PropertySchema(
            type=PropertyType.MAP,
            description="Set of parameters passed to this stack.",
            default={},
            update_allowed=True,
        ),
    }
    attributes_schema: ClassVar[Mapping[str, AttributeSchema]] = {
        "stack_name": AttributeSchema("Name of the stack.", type=AttributeType.STRING),
        "outputs": AttributeSchema(
            "A dict of key-value pairs output from the stack.", type=AttributeType.MAP
        ),
    }

    @classmethod
    def validate_values(
        cls,
        values: Properties,
        path: Path,
        *,
        strict: bool,
        stack_timeout: float | None,
    ) -> list[Diagnostic]:
        context = values.get("context")
        region = context.get("region_name") if isinstance(context, Mapping) else None
        if not isinstance(region, str) or region in ("", LOCAL_REGION):
            return []
        return [
            Diagnostic(
                f'Convection creates OS::Heat::Stack in the local region only ("{LOCAL_REGION}"); '
                f'region "{region}" is not supported',
                (*path, "context", "region_name"),
            )
        ]

    @classmethod
    def decide_update(cls, old: Properties, new: Properties) -> UpdateDecision:
        return UpdateDecision(UpdateAction.UPDATE, "the nested stack decides what changes")

    async def child(self, ctx: ResourceContext, props: Properties) -> ChildStack:
        template = props.get("template")
        if not isinstance(template, str):
            raise ResourceFailure("The property template must be a template's text")
        params = props.get("parameters") or {}
        timeout = props.get("timeout")
        return ChildStack(
            template=template,
            parameters=dict(params),
            timeout_mins=int(timeout) if timeout else None,
        )

    async def attribute(self, ctx: ResourceContext, props: Properties, name: str) -> JSON:
        if name == "outputs":
            return await self.outputs(ctx)
        if name == "stack_name":
            if ctx.physical_id is None:
                return None
            state = await ctx.nested.state(ctx.physical_id)
            return state.name if state is not None else None
        return await super().attribute(ctx, props, name)
