"""AutoScalingGroup and ScalingPolicy against the plugin seam (the
engine-level tests are in tests/convergence/test_group.py)."""

from __future__ import annotations

from typing import Any

from convection.resources.api import InMemoryContext, Peer, SignalPeer
from convection.resources.heat.autoscaling import AutoScalingGroup, ScalingPolicy

from .test_resource_group import ChildStacks, drive, members, run


def asg_props(**values: Any) -> dict[str, Any]:
    raw = {"min_size": 1, "max_size": 5, "resource": {"type": "T", "properties": {"value": "a"}}}
    props, diags = AutoScalingGroup.validate({**raw, **values}, ("resources", "asg", "properties"))
    assert not [d for d in diags if d.is_error], diags
    return props


def test_size_rules_are_heats() -> None:
    _, diags = AutoScalingGroup.validate(
        {"min_size": 3, "max_size": 1, "resource": {"type": "T"}}, ("p",)
    )
    assert [d.message for d in diags] == ["MinSize can not be greater than MaxSize"]
    _, diags = AutoScalingGroup.validate(
        {"min_size": 1, "max_size": 2, "desired_capacity": 3, "resource": {"type": "T"}}, ("p",)
    )
    assert [d.message for d in diags] == ["DesiredCapacity must be between MinSize and MaxSize"]
    _, diags = ScalingPolicy.validate(
        {
            "auto_scaling_group_id": "g",
            "adjustment_type": "change_in_capacity",
            "scaling_adjustment": 1,
            "min_adjustment_step": 1,
        },
        ("resources", "up", "properties"),
    )
    assert [d.message for d in diags] == [
        "min_adjustment_step property should only be specified for adjustment_type "
        "with value percent_change_in_capacity."
    ]


def test_shrinking_removes_the_oldest_and_rolling_replaces_oldest_first() -> None:
    nested = ChildStacks()
    ctx = InMemoryContext(resource_name="asg", nested=nested, stack_timeout=3600)
    grown = asg_props(desired_capacity=3)
    run(drive(AutoScalingGroup(), "create", ctx, grown, nested))
    first = list(nested.applied[-1]["resources"])
    assert len(first) == 3 and len(set(first)) == 3
    ctx.previous_properties, ctx.operation_id = grown, "op-2"
    new = asg_props(desired_capacity=2, resource={"type": "T", "properties": {"value": "b"}})
    run(drive(AutoScalingGroup(), "update", ctx, new, nested))
    steps = [members(t) for t in nested.applied[1:]]
    # rolling_updates default: one at a time, oldest first; then the resize
    assert steps[0] == {first[0]: "b", first[1]: "a", first[2]: "a"}
    assert steps[2] == {first[0]: "b", first[1]: "b", first[2]: "b"}
    assert steps[-1] == {first[1]: "b", first[2]: "b"}  # the oldest went
    assert run(AutoScalingGroup().attribute(ctx, new, "current_size")) == 2


def test_policy_passes_the_adjustment_to_its_group_and_cools_down() -> None:
    group = Peer(
        "asg", "OS::Heat::AutoScalingGroup", "CREATE", "COMPLETE", "x", "s-asg-1", {}, {}, {}
    )
    ctx = InMemoryContext(resource_name="up", peers={"asg": group})
    props, _ = ScalingPolicy.validate(
        {
            "auto_scaling_group_id": "s-asg-1",
            "adjustment_type": "change_in_capacity",
            "scaling_adjustment": 2,
            "cooldown": 60,
        },
        ("p",),
    )
    sent = run(ScalingPolicy().signal(ctx, props, {"current": "alarm"}))
    assert sent == SignalPeer(
        "asg",
        {
            "adjustment": 2,
            "adjustment_type": "change_in_capacity",
            "min_adjustment_step": None,
            "cooldown": 60,
        },
    )
    assert run(ScalingPolicy().signal(ctx, props, {})) is None  # cooling down
    assert ctx.events[-1].endswith("due to cooldown, cooldown 60")
    assert run(ScalingPolicy().signal(ctx, props, {"current": "ok"})) is None
