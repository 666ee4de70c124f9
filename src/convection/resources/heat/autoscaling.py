"""OS::Heat::AutoScalingGroup and OS::Heat::ScalingPolicy.

The group keeps ``desired_capacity`` (else ``min_size``) members of one
``resource`` definition in a nested stack, named with short ids and
ordered by age (the oldest go first when it shrinks). A change to
``resource`` is rolled out with ``rolling_updates`` (Heat's InstanceGroup
batch arithmetic), then the group is resized to its desired capacity.

Scaling: a POST to the policy's ``alarm_url`` (pre-signed) or ``signal_url``
(with a token), or ``convection stack resource signal STACK POLICY``, reaches
the policy, which checks the alarm state and its own cooldown and then asks the
service to signal its group (:class:`SignalPeer`) with the adjustment. The
group checks that it is COMPLETE, computes the new capacity (clamped to
``min_size``/``max_size``), checks its cooldown and starts resizing its
child stack. Heat's signal URL is then only a way to reach the same
``Stacks.signal`` call.

Differences from Heat, and why:

* Heat resizes inside the signal handler, blocking a worker until the
  nested update ends. Here the signal starts the child's update and
  returns; the cooldown starts when the group next looks (a signal, an
  update) and finds the resize finished. The stored attributes
  (``current_size``, ``refs``) are those of the group's last action.
* A policy's own cooldown starts when it forwards the adjustment, even if
  the group then declines it (Heat starts it only on a size change); the
  group's cooldown, which binds every policy, follows Heat exactly.
"""

from __future__ import annotations

from collections.abc import Mapping
from datetime import UTC, datetime
from typing import Any, ClassVar

from convection.common import JSON, Diagnostic, Path
from convection.hot import AllowedValues, Range
from convection.model import (
    ADJUSTMENT_TYPES,
    CHANGE_IN_CAPACITY,
    EXACT_CAPACITY,
    PERCENT_CHANGE_IN_CAPACITY,
    Member,
    MemberDefinitions,
    MemberNotFound,
    NoActionRequired,
    calculate_new_capacity,
    check_scaling_allowed,
    finished_scaling,
    group_template,
    member_definitions,
    ordered,
    scaled_definition,
    scaling_group_attribute,
    scaling_group_batches,
    short_id,
)
from convection.resources import signal_urls
from convection.resources._context import ResourceContext
from convection.resources._nested import ChildStack
from convection.resources._plugin import (
    Poll,
    Properties,
    ResourceFailure,
    ResourcePlugin,
    SignalPeer,
    Token,
)
from convection.resources._schema import (
    AttributeSchema,
    AttributeType,
    PropertySchema,
    PropertyType,
)
from convection.resources.heat import _group_rollout as ro
from convection.resources.heat.stack_resource import StackResourcePlugin

_MIN_ZERO = Range(min=0)


def _size(description: str) -> PropertySchema:
    return PropertySchema(
        type=PropertyType.INTEGER,
        description=description,
        required=True,
        update_allowed=True,
        constraints=(_MIN_ZERO,),
    )


class AutoScalingGroup(StackResourcePlugin):
    type_name = "OS::Heat::AutoScalingGroup"
    properties_schema: ClassVar[Mapping[str, PropertySchema]] = {
        "resource": PropertySchema(
            type=PropertyType.MAP,
            description="Resource definition for the resources in the group, in HOT format.",
            required=True,
            update_allowed=True,
        ),
        "max_size": _size("Maximum number of resources in the group."),
        "min_size": _size("Minimum number of resources in the group."),
        "cooldown": PropertySchema(
            type=PropertyType.INTEGER,
            description="Cooldown period, in seconds.",
            update_allowed=True,
        ),
        "desired_capacity": PropertySchema(
            type=PropertyType.INTEGER,
            description="Desired initial number of resources.",
            update_allowed=True,
        ),
        "rolling_updates": PropertySchema(
            type=PropertyType.MAP,
            description="Policy for rolling updates for this scaling group.",
            update_allowed=True,
            default={"min_in_service": 0, "max_batch_size": 1, "pause_time": 0},
            schema={
                "min_in_service": PropertySchema(
                    type=PropertyType.INTEGER, default=0, constraints=(_MIN_ZERO,)
                ),
                "max_batch_size": PropertySchema(
                    type=PropertyType.INTEGER, default=1, constraints=(Range(min=1),)
                ),
                "pause_time": PropertySchema(
                    type=PropertyType.NUMBER, default=0, constraints=(_MIN_ZERO,)
                ),
            },
        ),
    }
    attributes_schema: ClassVar[Mapping[str, AttributeSchema]] = {
        "outputs": AttributeSchema(
            "A map of resource names to the specified attribute of each individual resource.",
            type=AttributeType.MAP,
        ),
        "outputs_list": AttributeSchema(
            "A list of the specified attribute of each individual resource.",
            type=AttributeType.LIST,
        ),
        "current_size": AttributeSchema(
            "The current size of AutoscalingResourceGroup.", type=AttributeType.INTEGER
        ),
        "refs": AttributeSchema(
            "A list of resource IDs for the resources in the group.", type=AttributeType.LIST
        ),
        "refs_map": AttributeSchema(
            "A map of resource names to IDs for the resources in the group.",
            type=AttributeType.MAP,
        ),
    }

    @classmethod
    def attribute_names(cls) -> frozenset[str] | None:
        return None  # ``resource.N`` and ``resource.N.attr`` too

    @classmethod
    def validate_values(
        cls, values: Properties, path: Path, *, strict: bool, stack_timeout: float | None
    ) -> list[Diagnostic]:
        low, high, want = (
            values.get("min_size"),
            values.get("max_size"),
            values.get("desired_capacity"),
        )
        if not (isinstance(low, int) and isinstance(high, int)):
            return []
        if high < low:
            return [Diagnostic("MinSize can not be greater than MaxSize", path)]
        if isinstance(want, int) and not low <= want <= high:
            return [Diagnostic("DesiredCapacity must be between MinSize and MaxSize", path)]
        return []

    async def child(self, ctx: ResourceContext, props: Properties) -> ChildStack:
        """The group at its initial size (Heat's ``child_template``)."""
        size = props.get("desired_capacity") or props["min_size"]
        current = ro.Current(ro.members_of(ctx.data), frozenset(), [], ctx.operation_id, 0)
        members = plan_scaled(props, ro.Step(ro.RESIZE, size, 0), current)
        return ChildStack(template=group_template(members, [n for n, _ in members]))

    async def create(self, ctx: ResourceContext, props: Properties) -> Token:
        size = props.get("desired_capacity") or props["min_size"]
        steps = [ro.Step(ro.RESIZE, size, 0)]
        await ro.begin(
            ctx, steps, timeout_seconds=ctx.stack_timeout, extra={"seed": ctx.operation_id}
        )
        return None

    async def check_create_complete(
        self, ctx: ResourceContext, props: Properties, token: Token
    ) -> Poll:
        return await _finish_scaling(ctx, props, await ro.advance(ctx, props, plan_scaled))

    async def update(self, ctx: ResourceContext, props: Properties) -> Token:
        old = ctx.previous_properties or {}
        failed = await ro.failed_members(ctx)
        members = [n for n, _ in ro.members_of(ctx.data)]
        steps: list[ro.Step] = []
        pause, timeout = 0.0, ctx.stack_timeout
        if old.get("resource") != props["resource"]:
            policy = props["rolling_updates"]
            batches = scaling_group_batches(
                len(members), policy["max_batch_size"], policy["min_in_service"]
            )
            steps, pause, timeout = ro.batched(batches, policy["pause_time"], timeout)
        capacity = len([n for n in members if n not in failed])
        target = calculate_new_capacity(
            capacity,
            props.get("desired_capacity") or capacity,
            EXACT_CAPACITY,
            None,
            props["min_size"],
            props["max_size"],
        )
        steps.append(ro.Step(ro.RESIZE, target, 0))
        await ro.begin(ctx, steps, pause=pause, timeout_seconds=timeout)
        return None

    async def check_update_complete(
        self, ctx: ResourceContext, props: Properties, token: Token
    ) -> Poll:
        return await _finish_scaling(ctx, props, await ro.advance(ctx, props, plan_scaled))

    async def reference_id(self, ctx: ResourceContext, props: Properties) -> JSON:
        # Heat: the physical resource name, which scaling policies name.
        return ctx.physical_resource_name

    async def attribute(self, ctx: ResourceContext, props: Properties, name: str) -> JSON:
        views = await ro.member_views(ctx)
        try:
            return scaling_group_attribute(name, views, ctx.resource_name)
        except MemberNotFound:
            return None

    async def signal(self, ctx: ResourceContext, props: Properties, details: JSON) -> str:
        """An adjustment from a ScalingPolicy (Heat's ``adjust``); returns
        what happened, for the signal's event."""
        if not isinstance(details, Mapping) or "adjustment" not in details:
            raise ResourceFailure(
                f"{self.type_name} takes an adjustment signal: "
                "{adjustment, adjustment_type, min_adjustment_step, cooldown}"
            )
        await _settle_resize(ctx)
        me = await ctx.peer(ctx.resource_name)
        if me is None or me.status != "COMPLETE":
            return (
                f"{ctx.resource_name} NOT performing scaling adjustment, "
                "when status is not COMPLETE"
            )
        return await _adjust(ctx, props, details)


async def _adjust(ctx: ResourceContext, props: Properties, details: Mapping[str, Any]) -> str:
    failed = await ro.failed_members(ctx)
    capacity = len([n for n, _ in ro.members_of(ctx.data) if n not in failed])
    kind = str(details.get("adjustment_type") or CHANGE_IN_CAPACITY)
    adjustment = details["adjustment"]
    target = calculate_new_capacity(
        capacity,
        adjustment,
        kind,
        details.get("min_adjustment_step"),
        props["min_size"],
        props["max_size"],
    )
    if target == capacity:
        return (
            f"{ctx.resource_name} NOT performing scaling adjustment, "
            "as there is no change in capacity."
        )
    cooldown = details.get("cooldown")
    if cooldown is None:
        cooldown = props.get("cooldown")
    try:
        state = check_scaling_allowed(_cooldown(ctx), cooldown, _now(ctx), ctx.resource_name)
    except NoActionRequired as exc:
        return str(exc)
    resize = {"reason": f"{kind} : {adjustment}", "cooldown": cooldown}
    await ctx.set_data({**ctx.data, "cooldown": state, "resize": resize})
    await ro.begin(ctx, [ro.Step(ro.RESIZE, target, 0)], timeout_seconds=ctx.stack_timeout)
    await ro.advance(ctx, props, plan_scaled)  # starts the child's update; never waits
    return f"Start resizing the group {ctx.resource_name} from {capacity} to {target}"


async def _settle_resize(ctx: ResourceContext) -> None:
    """Finish the bookkeeping of a signal-driven resize that has ended
    since: start the cooldown when the size changed, clear the mark."""
    resize = ctx.data.get("resize")
    if not isinstance(resize, Mapping) or ctx.physical_id is None:
        return
    state = await ctx.nested.state(ctx.physical_id)
    if state is not None and state.in_progress:
        return
    changed = state is not None and state.complete
    cooldown = finished_scaling(
        _cooldown(ctx),
        resize.get("cooldown"),
        str(resize.get("reason")),
        _now(ctx),
        size_changed=changed,
    )
    data = {k: v for k, v in ctx.data.items() if k != "resize"}
    await ctx.set_data({**data, "cooldown": cooldown})


async def _finish_scaling(ctx: ResourceContext, props: Properties, done: Poll) -> Poll:
    """After a create or update: the group's size is exact now, and its
    cooldown starts (Heat's ``check_*_complete``)."""
    if not done:
        return done
    size = len(ro.members_of(ctx.data))
    state = finished_scaling(
        _cooldown(ctx), props.get("cooldown"), f"{EXACT_CAPACITY} : {size}", _now(ctx)
    )
    data = {k: v for k, v in ctx.data.items() if k != "resize"}
    await ctx.set_data({**data, "cooldown": state})
    return True


def _cooldown(ctx: ResourceContext) -> dict[str, Any]:
    state = ctx.data.get("cooldown")
    return dict(state) if isinstance(state, Mapping) else {}


def _now(ctx: ResourceContext) -> datetime:
    return datetime.fromtimestamp(ctx.now(), UTC)


def plan_scaled(props: Properties, step: ro.Step, current: ro.Current) -> MemberDefinitions:
    """Heat's ``_create_template(capacity, num_replace)``: the oldest (and
    failed) members are replaced or removed first; new ones get fresh names."""
    definition = scaled_definition(props["resource"])
    failed = current.failed
    old = ordered(
        (Member(n, d, failed=n in failed, order=i) for i, (n, d) in enumerate(current.members)),
        include_failed=True,
    )
    counter = iter(range(current.made, current.made + step.capacity + 1))

    def new_name() -> str:
        return short_id(current.seed, next(counter))

    return member_definitions(
        [(m.name, m.definition) for m in old],
        step.capacity,
        step.updates,
        new_name,
        lambda name: dict(definition),
    )


class ScalingPolicy(ResourcePlugin):
    type_name = "OS::Heat::ScalingPolicy"
    properties_schema: ClassVar[Mapping[str, PropertySchema]] = {
        "auto_scaling_group_id": PropertySchema(
            type=PropertyType.STRING,
            description="AutoScaling group ID to apply policy to.",
            required=True,
        ),
        "scaling_adjustment": PropertySchema(
            type=PropertyType.NUMBER,
            description="Size of adjustment.",
            required=True,
            update_allowed=True,
        ),
        "adjustment_type": PropertySchema(
            type=PropertyType.STRING,
            description="Type of adjustment (absolute or percentage).",
            required=True,
            update_allowed=True,
            constraints=(AllowedValues(ADJUSTMENT_TYPES),),
        ),
        "cooldown": PropertySchema(
            type=PropertyType.NUMBER,
            description="Cooldown period, in seconds.",
            update_allowed=True,
        ),
        "min_adjustment_step": PropertySchema(
            type=PropertyType.INTEGER,
            description=(
                "Minimum number of resources that are added or removed when the AutoScaling "
                "group scales up or down. This can be used only when specifying "
                "percent_change_in_capacity for the adjustment_type property."
            ),
            update_allowed=True,
            constraints=(_MIN_ZERO,),
        ),
    }
    attributes_schema: ClassVar[Mapping[str, AttributeSchema]] = {
        "alarm_url": AttributeSchema(
            "A signed url to handle the alarm.", type=AttributeType.STRING
        ),
        "signal_url": AttributeSchema(
            "A url to handle the alarm using native API.", type=AttributeType.STRING
        ),
    }

    @classmethod
    def validate_values(
        cls, values: Properties, path: Path, *, strict: bool, stack_timeout: float | None
    ) -> list[Diagnostic]:
        kind, step = values.get("adjustment_type"), values.get("min_adjustment_step")
        if step is not None and isinstance(kind, str) and kind != PERCENT_CHANGE_IN_CAPACITY:
            message = (
                "min_adjustment_step property should only be specified for adjustment_type "
                f"with value {PERCENT_CHANGE_IN_CAPACITY}."
            )
            return [Diagnostic(message, (*path, "min_adjustment_step"))]
        return []

    async def create(self, ctx: ResourceContext, props: Properties) -> Token:
        await signal_urls.ensure(ctx)  # the token in alarm_url, minted once
        if ctx.physical_id is None:
            await ctx.set_physical_id(ctx.physical_resource_name)
        return None

    async def delete(self, ctx: ResourceContext, props: Properties) -> Token:
        """Revoke the policy's signal token: its URLs must die with it."""
        signal_urls.revoke(ctx)
        return None

    async def attribute(self, ctx: ResourceContext, props: Properties, name: str) -> JSON:
        """Heat's ``alarm_url`` (pre-signed: POST with no header) and
        ``signal_url`` (the native endpoint, with an ``X-Auth-Token``);
        None without an API URL, as no URL would reach this policy."""
        cred = signal_urls.stored(ctx.data)
        if cred is None:
            return None
        where = (ctx.stack_name, ctx.stack_id, ctx.resource_name)
        if name == "alarm_url":
            return signal_urls.presigned_url(cred, signal_urls.SIGNAL, *where)
        if name == "signal_url":
            return signal_urls.heat_signal_url(cred, *where)
        return None

    async def signal(
        self, ctx: ResourceContext, props: Properties, details: JSON
    ) -> SignalPeer | None:
        """An alarm: adjust the group unless the alarm is not firing or the
        policy is cooling down (then the signal is recorded and ignored)."""
        state = "alarm"
        if isinstance(details, Mapping):
            state = str(details.get("current", details.get("state", "alarm"))).lower()
        if state != "alarm":
            await ctx.emit(f"Alarm {ctx.resource_name}, new state {state}: no scaling action")
            return None
        cooldown = props.get("cooldown")
        now = datetime.fromtimestamp(ctx.now(), UTC)
        try:
            check_scaling_allowed(_cooldown(ctx), cooldown, now, ctx.resource_name)
        except NoActionRequired as exc:
            await ctx.emit(str(exc))
            return None
        group_ref = str(props["auto_scaling_group_id"])
        group = await ctx.peer(group_ref)
        if group is None:
            raise ResourceFailure(
                f'Alarm {ctx.resource_name} could not find scaling group named "{group_ref}"'
            )
        reason = f"{props['adjustment_type']} : {props['scaling_adjustment']}"
        state_after = finished_scaling(_cooldown(ctx), cooldown, reason, now)
        await ctx.set_data({**ctx.data, "cooldown": state_after})
        return SignalPeer(
            group.name,
            {
                "adjustment": props["scaling_adjustment"],
                "adjustment_type": props["adjustment_type"],
                "min_adjustment_step": props.get("min_adjustment_step"),
                "cooldown": cooldown,
            },
        )
