"""ResourceGroup, ResourceChain and AutoScalingGroup against the plugin seam.

``ChildStacks`` below stands for ``ctx.nested``: it keeps each child's
template and state in memory, and a test finishes a child's action when it
wants, so the templates each batch applies can be read one by one. The
engine-level tests (tests/convergence/test_group*.py) run the same plugins on
real stores with real child stacks.
"""

from __future__ import annotations

import asyncio
import itertools
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

import pytest

from convection.resources.api import (
    ChildResource,
    ChildStack,
    ChildState,
    InMemoryContext,
    ResourceFailure,
    Wait,
)
from convection.resources.heat.resource_chain import ResourceChain
from convection.resources.heat.resource_group import ResourceGroup


@dataclass
class Child:
    template: Mapping[str, Any]
    state: ChildState
    failed: set[str] = field(default_factory=set)


@dataclass
class ChildStacks:
    children: dict[str, Child] = field(default_factory=dict)
    applied: list[Mapping[str, Any]] = field(default_factory=list)
    ids: itertools.count[int] = field(default_factory=itertools.count)

    async def create(self, child: ChildStack) -> str:
        stack_id = f"child-{next(self.ids)}"
        assert isinstance(child.template, Mapping)
        self.children[stack_id] = Child(child.template, ChildState("CREATE", "IN_PROGRESS"))
        self.applied.append(child.template)
        return stack_id

    async def update(self, stack_id: str, child: ChildStack) -> None:
        assert isinstance(child.template, Mapping)
        self.children[stack_id].template = child.template
        self.children[stack_id].state = ChildState("UPDATE", "IN_PROGRESS")
        self.applied.append(child.template)

    async def delete(self, stack_id: str) -> None:
        self.children[stack_id].state = ChildState("DELETE", "COMPLETE")

    async def state(self, stack_id: str) -> ChildState | None:
        found = self.children.get(stack_id)
        return found.state if found else None

    async def outputs(self, stack_id: str) -> Mapping[str, Any]:
        return {}

    async def resources(self, stack_id: str) -> Sequence[ChildResource]:
        child = self.children[stack_id]
        return [
            ChildResource(
                name,
                d["type"],
                "CREATE",
                "FAILED" if name in child.failed else "COMPLETE",
                f"id-{name}",
                f"id-{name}",
                {"value": (d.get("properties") or {}).get("value")},
            )
            for name, d in sorted(child.template["resources"].items())
        ]

    def finish(self, status: str = "COMPLETE", reason: str = "") -> None:
        for child in self.children.values():
            if child.state.in_progress:
                child.state = ChildState(child.state.action, status, reason)


def run(coro: Any) -> Any:
    return asyncio.run(coro)


def members(template: Mapping[str, Any]) -> dict[str, Any]:
    return {n: (d.get("properties") or {}).get("value") for n, d in template["resources"].items()}


def group_props(count: int, value: str, **extra: Any) -> dict[str, Any]:
    props, _ = ResourceGroup.validate(
        {"count": count, "resource_def": {"type": "T", "properties": {"value": value}}, **extra},
        ("resources", "g", "properties"),
    )
    return props


async def drive(
    plugin: Any, op: str, ctx: InMemoryContext, props: Any, nested: ChildStacks
) -> None:
    """Run an action to completion, finishing each child action at once and
    letting pauses pass (the clock is the test's)."""
    token = await getattr(plugin, op)(ctx, props)
    for _ in range(100):
        done = await getattr(plugin, f"check_{op}_complete")(ctx, props, token)
        if done:
            return
        running = any(c.state.in_progress for c in nested.children.values())
        if isinstance(done, Wait) and not running:
            ctx.clock = (lambda t: lambda: t)(ctx.now() + done.seconds)
        nested.finish()
    raise AssertionError("never finished")


def context(nested: ChildStacks, **kw: Any) -> InMemoryContext:
    return InMemoryContext(resource_name="g", nested=nested, stack_timeout=3600, **kw)


def test_create_names_members_and_substitutes_the_index() -> None:
    nested = ChildStacks()
    ctx = context(nested)
    props = group_props(3, "v-%index%")
    run(drive(ResourceGroup(), "create", ctx, props, nested))
    assert members(nested.applied[-1]) == {"0": "v-0", "1": "v-1", "2": "v-2"}
    assert ctx.physical_id == "child-0"
    assert run(ResourceGroup().attribute(ctx, props, "refs")) == ["id-0", "id-1", "id-2"]
    assert run(ResourceGroup().attribute(ctx, props, "value")) == ["v-0", "v-1", "v-2"]
    assert run(ResourceGroup().attribute(ctx, props, "resource.1.value")) == "v-1"


def test_batch_create_creates_in_batches_with_a_pause_between() -> None:
    nested = ChildStacks()
    policy = {"batch_create": {"max_batch_size": 2, "pause_time": 30}}
    ctx = context(nested, update_policy=policy)
    props = group_props(5, "v")
    start = ctx.now()
    run(drive(ResourceGroup(), "create", ctx, props, nested))
    assert [len(t["resources"]) for t in nested.applied] == [2, 4, 5]
    assert ctx.now() - start >= 60  # two pauses, spent on timers
    assert any("batch 3 of 3" in e for e in ctx.events)


def test_rolling_update_replaces_highest_indices_first_keeping_service() -> None:
    nested = ChildStacks()
    policy = {"rolling_update": {"max_batch_size": 2, "min_in_service": 4}}
    ctx = context(nested, update_policy=policy)
    old = group_props(4, "old")
    run(drive(ResourceGroup(), "create", ctx, old, nested))
    new = group_props(4, "new")
    ctx.previous_properties = old
    ctx.operation_id = "op-2"
    run(drive(ResourceGroup(), "update", ctx, new, nested))
    steps = [members(t) for t in nested.applied[1:]]
    # grow to 6 with two new members, then move the update down the indices
    assert steps[0] == {"0": "old", "1": "old", "2": "old", "3": "old", "4": "new", "5": "new"}
    assert steps[1]["3"] == steps[1]["2"] == "new" and steps[1]["0"] == "old"
    assert steps[-1] == {"0": "new", "1": "new", "2": "new", "3": "new"}
    assert all(sum(v in ("old", "new") for v in s.values()) >= 4 for s in steps)


def test_removal_policies_remove_named_members_and_never_reuse_names() -> None:
    nested = ChildStacks()
    ctx = context(nested)
    props = group_props(3, "v")
    run(drive(ResourceGroup(), "create", ctx, props, nested))
    ctx.previous_properties, ctx.operation_id = props, "op-2"
    shrunk = group_props(2, "v", removal_policies=[{"resource_list": ["id-1"]}])
    run(drive(ResourceGroup(), "update", ctx, shrunk, nested))
    assert sorted(members(nested.applied[-1])) == ["0", "2"]
    assert run(ResourceGroup().attribute(ctx, shrunk, "removed_rsrc_list")) == ["1"]
    ctx.previous_properties, ctx.operation_id = shrunk, "op-3"
    grown = group_props(3, "v")
    run(drive(ResourceGroup(), "update", ctx, grown, nested))
    assert sorted(members(nested.applied[-1])) == ["0", "2", "3"]  # "1" never again
    ctx.previous_properties, ctx.operation_id = grown, "op-4"
    reset = group_props(3, "v", removal_policies_mode="update")
    run(drive(ResourceGroup(), "update", ctx, reset, nested))
    assert sorted(members(nested.applied[-1])) == ["0", "1", "2"]


def test_a_policy_that_cannot_finish_in_time_is_refused() -> None:
    nested = ChildStacks()
    policy = {"rolling_update": {"max_batch_size": 1, "pause_time": 1800}}
    ctx = context(nested, update_policy=policy)
    old = group_props(3, "old")
    run(drive(ResourceGroup(), "create", ctx, old, nested))
    ctx.previous_properties, ctx.operation_id = old, "op-2"
    with pytest.raises(ValueError, match="will result in stack update timeout"):
        run(ResourceGroup().update(ctx, group_props(3, "new")))


def test_a_failed_batch_stops_the_rollout() -> None:
    nested = ChildStacks()
    ctx = context(nested, update_policy={"rolling_update": {"max_batch_size": 1}})
    old = group_props(3, "old")
    run(drive(ResourceGroup(), "create", ctx, old, nested))
    ctx.previous_properties, ctx.operation_id = old, "op-2"
    new = group_props(3, "new")
    run(ResourceGroup().update(ctx, new))
    assert not run(ResourceGroup().check_update_complete(ctx, new, None))
    nested.finish("FAILED", "Resource UPDATE failed: Error: resources.2: boom")
    with pytest.raises(ResourceFailure) as info:
        run(ResourceGroup().check_update_complete(ctx, new, None))
    assert info.value.message == "boom" and info.value.path == "resources.2"
    assert len(nested.applied) == 2  # the first batch only


def test_a_rerun_after_a_crash_continues_the_same_batch() -> None:
    nested = ChildStacks()
    ctx = context(nested, update_policy={"rolling_update": {"max_batch_size": 1}})
    old = group_props(2, "old")
    run(drive(ResourceGroup(), "create", ctx, old, nested))
    ctx.previous_properties, ctx.operation_id = old, "op-2"
    new = group_props(2, "new")
    run(ResourceGroup().update(ctx, new))
    run(ResourceGroup().check_update_complete(ctx, new, None))
    applied = len(nested.applied)
    # the engine dies; another runs the same node again: same operation id
    run(ResourceGroup().update(ctx, new))
    nested.finish()
    run(drive(ResourceGroup(), "update", ctx, new, nested))
    assert len(nested.applied) == applied + 1  # batch 2 once, batch 1 not again
    assert members(nested.applied[-1]) == {"0": "new", "1": "new"}


def test_chain_members_wait_for_each_other_unless_concurrent() -> None:
    nested = ChildStacks()
    ctx = context(nested)
    props, _ = ResourceChain.validate(
        {"resources": ["A", "B"], "resource_properties": {"value": "x"}}, ("p",)
    )
    run(drive(ResourceChain(), "create", ctx, props, nested))
    resources = nested.applied[-1]["resources"]
    assert resources["1"] == {"type": "B", "properties": {"value": "x"}, "depends_on": ["0"]}
    assert run(ResourceChain().attribute(ctx, props, "refs")) == ["id-0", "id-1"]
