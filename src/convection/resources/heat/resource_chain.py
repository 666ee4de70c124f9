"""OS::Heat::ResourceChain: one member per type in ``resources``, all given
``resource_properties``; each waits for the one before it unless
``concurrent`` is true. Members are named "0", "1", ..., and the chain's
attributes are ResourceGroup's (``refs``, ``attributes``, ``resource.N``,
``resource.N.attr``, or any member attribute as a list).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, ClassVar

from convection.common import JSON
from convection.model import (
    MemberDefinitions,
    MemberNotFound,
    chain_template,
    resource_group_attribute,
)
from convection.resources._context import ResourceContext
from convection.resources._nested import ChildStack
from convection.resources._plugin import Poll, Properties, Token
from convection.resources._schema import (
    AttributeSchema,
    AttributeType,
    PropertySchema,
    PropertyType,
)
from convection.resources.heat import _group_rollout as ro
from convection.resources.heat.stack_resource import StackResourcePlugin


class ResourceChain(StackResourcePlugin):
    type_name = "OS::Heat::ResourceChain"
    properties_schema: ClassVar[Mapping[str, PropertySchema]] = {
        "resources": PropertySchema(
            type=PropertyType.LIST,
            description=(
                "The list of resource types to create. This list may contain type names "
                "or aliases defined in the resource registry."
            ),
            required=True,
            update_allowed=True,
        ),
        "concurrent": PropertySchema(
            type=PropertyType.BOOLEAN,
            description=(
                "If true, the resources in the chain will be created concurrently. If false "
                "or omitted, each resource will be treated as having a dependency on the "
                "previous resource in the list."
            ),
            default=False,
        ),
        "resource_properties": PropertySchema(
            type=PropertyType.MAP,
            description="Properties to pass to each resource being created in the chain.",
        ),
    }
    attributes_schema: ClassVar[Mapping[str, AttributeSchema]] = {
        "refs": AttributeSchema(
            "A list of resource IDs for the resources in the chain.", type=AttributeType.LIST
        ),
        "attributes": AttributeSchema(
            "A map of resource names to the specified attribute of each individual resource.",
            type=AttributeType.MAP,
        ),
    }

    @classmethod
    def attribute_names(cls) -> frozenset[str] | None:
        return None

    async def child(self, ctx: ResourceContext, props: Properties) -> ChildStack:
        return ChildStack(
            template=_template(props), timeout_mins=ro.child_timeout(ctx.stack_timeout)
        )

    async def create(self, ctx: ResourceContext, props: Properties) -> Token:
        await ro.begin(ctx, [ro.Step(ro.FULL)], timeout_seconds=ctx.stack_timeout)
        return None

    async def check_create_complete(
        self, ctx: ResourceContext, props: Properties, token: Token
    ) -> Poll:
        return await ro.advance(ctx, props, plan_chain)

    async def update(self, ctx: ResourceContext, props: Properties) -> Token:
        await ro.begin(ctx, [ro.Step(ro.FULL)], timeout_seconds=ctx.stack_timeout)
        return None

    async def check_update_complete(
        self, ctx: ResourceContext, props: Properties, token: Token
    ) -> Poll:
        return await ro.advance(ctx, props, plan_chain)

    async def attribute(self, ctx: ResourceContext, props: Properties, name: str) -> JSON:
        names = [str(i) for i in range(len(props.get("resources") or []))]
        views = await ro.member_views(ctx, names)
        try:
            return resource_group_attribute(name, views, ctx.resource_name)
        except MemberNotFound:
            return None


def _template(props: Properties) -> dict[str, Any]:
    types = [str(t) for t in props["resources"]]
    return chain_template(types, props.get("resource_properties"), props["concurrent"])


def plan_chain(props: Properties, step: ro.Step, current: ro.Current) -> MemberDefinitions:
    template = _template(props)
    return [(name, dict(defn)) for name, defn in template["resources"].items()]
