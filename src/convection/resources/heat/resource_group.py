"""OS::Heat::ResourceGroup: ``count`` identically configured members in a
nested stack, Heat's properties, attributes and update semantics.

* Members are named "0", "1", ... skipping names removed by
  ``removal_policies`` (never reused; ``removal_policies_mode: update``
  forgets the old list). ``index_var`` in ``resource_def.properties``
  becomes the member's name.
* ``update_policy.rolling_update`` (when ``resource_def`` changes) and
  ``update_policy.batch_create`` apply the change in batches, highest
  indices first, keeping ``min_in_service`` members by growing the group
  temporarily, with ``pause_time`` between batches: a stored timer, never
  a sleep (see ``_group_rollout``). A policy whose pauses alone would reach
  the stack timeout is refused with Heat's error.
* A failed batch stops the rollout and fails the group; with rollback, the
  engine re-applies the previous properties, which runs the same rolling
  update back to the previous definition.

The batch arithmetic and member assembly are pure, in :mod:`convection.model.groups`.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, ClassVar

from convection.common import JSON, Diagnostic, Path
from convection.hot import AllowedValues, Length, Range
from convection.model import (
    DEFAULT_INDEX_VAR,
    REMOVAL_APPEND,
    REMOVAL_UPDATE,
    Member,
    MemberDefinitions,
    MemberNotFound,
    batch_create_batches,
    group_template,
    member_definition,
    member_names,
    resource_group_attribute,
    resource_group_batches,
    rolling_members,
    updated_blacklist,
)
from convection.resources._context import ResourceContext
from convection.resources._nested import ChildStack
from convection.resources._plugin import (
    Poll,
    Properties,
    ResourceFailure,
    Token,
)
from convection.resources._schema import (
    AttributeSchema,
    AttributeType,
    PropertySchema,
    PropertyType,
)
from convection.resources._validate import validate_properties
from convection.resources.heat import _group_rollout as ro
from convection.resources.heat.stack_resource import StackResourcePlugin

_MIN_ZERO = Range(min=0)
_MIN_ONE = Range(min=1)


def _int(description: str, default: int, minimum: Range) -> PropertySchema:
    return PropertySchema(
        type=PropertyType.INTEGER, description=description, default=default, constraints=(minimum,)
    )


def _pause(description: str) -> PropertySchema:
    return PropertySchema(
        type=PropertyType.NUMBER, description=description, default=0, constraints=(_MIN_ZERO,)
    )


ROLLING_UPDATE_SCHEMA: Mapping[str, PropertySchema] = {
    "min_in_service": _int(
        "The minimum number of resources in service while rolling updates are being executed.",
        0,
        _MIN_ZERO,
    ),
    "max_batch_size": _int("The maximum number of resources to replace at once.", 1, _MIN_ONE),
    "pause_time": _pause("The number of seconds to wait between batches of updates."),
}
BATCH_CREATE_SCHEMA: Mapping[str, PropertySchema] = {
    "max_batch_size": _int("The maximum number of resources to create at once.", 1, _MIN_ONE),
    "pause_time": _pause("The number of seconds to wait between batches."),
}
UPDATE_POLICY_SCHEMA: Mapping[str, PropertySchema] = {
    "rolling_update": PropertySchema(type=PropertyType.MAP, schema=ROLLING_UPDATE_SCHEMA),
    "batch_create": PropertySchema(type=PropertyType.MAP, schema=BATCH_CREATE_SCHEMA),
}


def update_policy(
    raw: Any, path: Path = ("update_policy",)
) -> tuple[dict[str, Any], list[Diagnostic]]:
    """The group's update policy with Heat's defaults filled in; a section
    that is absent stays absent (no rolling update, no batched create)."""
    if raw is None:
        return {}, []
    values, diags = validate_properties(UPDATE_POLICY_SCHEMA, raw, path)
    return {k: v for k, v in values.items() if v is not None}, diags


def policy_of(ctx: ResourceContext) -> dict[str, Any]:
    path = ("resources", ctx.resource_name, "update_policy")
    values, diags = update_policy(ctx.update_policy, path)
    errors = [d for d in diags if d.is_error]
    if errors:
        raise ResourceFailure(f"Invalid update policy: {errors[0]}")
    return values


class ResourceGroup(StackResourcePlugin):
    type_name = "OS::Heat::ResourceGroup"
    properties_schema: ClassVar[Mapping[str, PropertySchema]] = {
        "count": PropertySchema(
            type=PropertyType.INTEGER,
            description="The number of resources to create.",
            default=1,
            constraints=(_MIN_ZERO,),
            update_allowed=True,
        ),
        "index_var": PropertySchema(
            type=PropertyType.STRING,
            description=(
                "A variable that this resource will use to replace with the current index "
                "of a given resource in the group."
            ),
            default=DEFAULT_INDEX_VAR,
            constraints=(Length(min=3),),
        ),
        "resource_def": PropertySchema(
            type=PropertyType.MAP,
            description="Resource definition for the resources in the group.",
            required=True,
            update_allowed=True,
            schema={
                "type": PropertySchema(
                    type=PropertyType.STRING,
                    description="The type of the resources in the group.",
                    required=True,
                ),
                "properties": PropertySchema(
                    type=PropertyType.MAP,
                    description="Property values for the resources in the group.",
                ),
                "metadata": PropertySchema(
                    type=PropertyType.MAP,
                    description="Supplied metadata for the resources in the group.",
                ),
            },
        ),
        "removal_policies": PropertySchema(
            type=PropertyType.LIST,
            description="Policies for removal of resources on update.",
            default=[],
            update_allowed=True,
            schema=PropertySchema(
                type=PropertyType.MAP,
                schema={
                    "resource_list": PropertySchema(
                        type=PropertyType.LIST,
                        description=(
                            "List of resources to be removed when doing an update which "
                            "requires removal of specific resources."
                        ),
                        default=[],
                    )
                },
            ),
        ),
        "removal_policies_mode": PropertySchema(
            type=PropertyType.STRING,
            description="How to handle changes to removal_policies on update.",
            default=REMOVAL_APPEND,
            constraints=(AllowedValues((REMOVAL_APPEND, REMOVAL_UPDATE)),),
            update_allowed=True,
        ),
    }
    attributes_schema: ClassVar[Mapping[str, AttributeSchema]] = {
        "refs": AttributeSchema(
            "A list of resource IDs for the resources in the group.", type=AttributeType.LIST
        ),
        "refs_map": AttributeSchema(
            "A map of resource names to IDs for the resources in the group.",
            type=AttributeType.MAP,
        ),
        "attributes": AttributeSchema(
            "A map of resource names to the specified attribute of each individual resource.",
            type=AttributeType.MAP,
        ),
        "removed_rsrc_list": AttributeSchema(
            "A list of removed resource names.", type=AttributeType.LIST
        ),
    }

    @classmethod
    def attribute_names(cls) -> frozenset[str] | None:
        # Any member attribute, ``resource.N`` and ``resource.N.attr``.
        return None

    async def child(self, ctx: ResourceContext, props: Properties) -> ChildStack:
        """The whole group at once (what a create without batches makes)."""
        current = ro.Current([], frozenset(), list(ctx.data.get("blacklist") or []), "", 0)
        members = plan_members(props, ro.Step(ro.FULL), current)
        return ChildStack(template=group_template(members, [n for n, _ in members]))

    # -- create --------------------------------------------------------------

    async def create(self, ctx: ResourceContext, props: Properties) -> Token:
        blacklist = updated_blacklist(
            ctx.data.get("blacklist") or [],
            props["removal_policies_mode"],
            props["removal_policies"],
            [],
            None,
            created=False,
        )
        batch = policy_of(ctx).get("batch_create")
        steps = [ro.Step(ro.FULL)]
        pause, timeout = 0.0, ctx.stack_timeout
        if batch and props["count"]:
            steps, pause, timeout = ro.batched(
                batch_create_batches(props["count"], batch["max_batch_size"]),
                batch["pause_time"],
                ctx.stack_timeout,
            )
        await ro.begin(
            ctx, steps, pause=pause, timeout_seconds=timeout, extra={"blacklist": blacklist}
        )
        return None

    async def check_create_complete(
        self, ctx: ResourceContext, props: Properties, token: Token
    ) -> Poll:
        return await ro.advance(ctx, props, plan_members)

    # -- update --------------------------------------------------------------

    async def update(self, ctx: ResourceContext, props: Properties) -> Token:
        old = ctx.previous_properties or {}
        current = ro.members_of(ctx.data)
        views = await ro.member_views(ctx, [n for n, _ in current])
        blacklist = updated_blacklist(
            ctx.data.get("blacklist") or [],
            props["removal_policies_mode"],
            props["removal_policies"],
            [n for n, _ in current],
            {v.name: v.reference_id for v in views},
            created=True,
        )
        policy = policy_of(ctx).get("rolling_update")
        steps, pause, timeout = [ro.Step(ro.FULL)], 0.0, ctx.stack_timeout
        if policy and old.get("resource_def") != props["resource_def"]:
            failed = await ro.failed_members(ctx)
            live = [n for n, _ in current if n not in failed]
            size = len(current) - len(set(blacklist) & set(live))
            batches = list(
                resource_group_batches(
                    props["count"], size, policy["max_batch_size"], policy["min_in_service"]
                )
            )
            if batches:
                steps, pause, timeout = ro.batched(batches, policy["pause_time"], ctx.stack_timeout)
        await ro.begin(
            ctx, steps, pause=pause, timeout_seconds=timeout, extra={"blacklist": blacklist}
        )
        return None

    async def check_update_complete(
        self, ctx: ResourceContext, props: Properties, token: Token
    ) -> Poll:
        return await ro.advance(ctx, props, plan_members)

    # -- attributes -------------------------------------------------------------

    async def attribute(self, ctx: ResourceContext, props: Properties, name: str) -> JSON:
        blacklist = list(ctx.data.get("blacklist") or [])
        names = member_names(int(props.get("count") or 0), blacklist)
        views = await ro.member_views(ctx, names)
        try:
            return resource_group_attribute(name, views, ctx.resource_name, blacklist)
        except MemberNotFound:
            return None  # Heat fails the reader of a missing member, not the group


def plan_members(props: Properties, step: ro.Step, current: ro.Current) -> MemberDefinitions:
    """The members a step gives the child stack."""
    index_var, resource_def = props["index_var"], props["resource_def"]

    def customise(name: str) -> dict[str, Any]:
        return member_definition(resource_def, name, index_var)

    if step.kind == ro.FULL:
        return [(n, customise(n)) for n in member_names(props["count"], current.blacklist)]
    existing = [
        Member(name, definition, failed=name in current.failed, order=i)
        for i, (name, definition) in enumerate(current.members)
    ]
    defs, _ = rolling_members(
        existing, current.blacklist, props["count"], step.capacity, step.updates, customise
    )
    return defs
