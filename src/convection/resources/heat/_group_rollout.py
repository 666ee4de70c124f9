"""Driving a group's child stack through a list of steps, durably.

ResourceGroup, ResourceChain and AutoScalingGroup all do the same thing at
run time: apply one child template, wait for the child stack, maybe pause,
apply the next. Heat runs that loop in a worker (``TaskRunner`` and a
sleeping ``pause_between_batch``); here it is a small state record in the
resource's ``data``, advanced by ``check_*_complete`` polls, so a pause is a
timer and a crash resumes at the same step.

The record (``data["rollout"]``) says which operation it belongs to (a new
action starts a new one; a re-run of the same action continues it), the
steps, the current step and its phase:

* ``apply``: build this step's members (once: ``planned`` marks a step
  whose members are stored already), then create or update the child;
* ``wait``: poll the child's state; a failure stops the rollout;
* ``pause``: wait ``pause`` seconds before the next batch.

Member definitions are kept in ``data`` deduplicated (a group has one or
two distinct definitions, however many members), in creation order, which
is Heat's member order.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from convection.common import JSON
from convection.model import Batch, MemberDefinitions, MemberView, group_template, update_timeout
from convection.resources._context import ResourceContext
from convection.resources._nested import ChildStack
from convection.resources._plugin import Poll, Properties, ResourceFailure, Wait
from convection.resources.heat.stack_resource import StackResourcePlugin, nested_failure

#: Poll interval while the child runs; its end wakes the node sooner.
POLL_SECONDS = StackResourcePlugin.poll_seconds

#: A step replaces the whole membership with the wanted one.
FULL = "full"
#: A step of a rolling update (or batched create).
BATCH = "batch"
#: An AutoScalingGroup resize: same definitions, another size.
RESIZE = "resize"


@dataclass(frozen=True, slots=True)
class Step:
    kind: str
    capacity: int = 0
    updates: int = 0

    def encode(self) -> list[JSON]:
        return [self.kind, self.capacity, self.updates]

    @classmethod
    def decode(cls, raw: Sequence[Any]) -> Step:
        return cls(str(raw[0]), int(raw[1]), int(raw[2]))


@dataclass(frozen=True, slots=True)
class Current:
    """What a planner knows when it builds a step's members."""

    members: MemberDefinitions
    failed: frozenset[str]
    blacklist: Sequence[str]
    #: A stable seed for new member names (AutoScalingGroup).
    seed: str
    #: How many names were made from ``seed`` so far.
    made: int


#: Builds one step's members from the properties and what the group has.
Planner = Callable[[Properties, Step, Current], MemberDefinitions]


def members_of(data: Mapping[str, Any]) -> MemberDefinitions:
    """The member definitions stored in ``data``, in creation order."""
    defs = data.get("defs") or []
    return [(str(name), dict(defs[index])) for name, index in data.get("members") or []]


def encode_members(members: MemberDefinitions) -> dict[str, JSON]:
    defs: list[dict[str, Any]] = []
    pairs: list[list[JSON]] = []
    for name, definition in members:
        if definition not in defs:
            defs.append(definition)
        pairs.append([name, defs.index(definition)])
    return {"defs": defs, "members": pairs}


def merge_order(old: MemberDefinitions, new: MemberDefinitions) -> MemberDefinitions:
    """``new`` in creation order: members kept from ``old`` first, in their
    old order, then the new ones in the order the planner made them."""
    wanted = dict(new)
    kept = [(n, wanted[n]) for n, _ in old if n in wanted]
    seen = {n for n, _ in kept}
    return kept + [(n, d) for n, d in new if n not in seen]


def child_timeout(seconds: float | None) -> int | None:
    return None if seconds is None else max(1, math.ceil(seconds / 60))


def batched(
    batches: Iterable[Batch], pause_time: float, stack_timeout: float | None
) -> tuple[list[Step], float, float | None]:
    """A batched rollout's steps, its pause between batches and the child's
    timeout: Heat's ``_update_timeout``, the stack timeout less the pauses
    (a ValueError with Heat's text when the pauses alone reach it)."""
    steps = [Step(BATCH, b.capacity, b.updates) for b in batches]
    pause = float(pause_time)
    if stack_timeout is None:
        return steps, pause, None
    return steps, pause, update_timeout(len(steps), pause, stack_timeout)


async def begin(
    ctx: ResourceContext,
    steps: Sequence[Step],
    *,
    pause: float = 0,
    timeout_seconds: float | None = None,
    extra: Mapping[str, JSON] | None = None,
) -> None:
    """Record a new rollout for this operation; a re-run keeps the one it
    recorded before (and so the step it reached)."""
    current = ctx.data.get("rollout")
    if isinstance(current, Mapping) and current.get("op") == ctx.operation_id:
        return
    rollout = {
        "op": ctx.operation_id,
        "steps": [s.encode() for s in steps],
        "at": 0,
        "phase": "apply",
        "planned": -1,
        "pause": pause,
        "timeout": child_timeout(timeout_seconds),
        "until": None,
    }
    await ctx.set_data({**ctx.data, **(extra or {}), "rollout": rollout})


async def advance(ctx: ResourceContext, props: Properties, planner: Planner) -> Poll:
    """Move the rollout on as far as it can go now."""
    while True:
        rollout = ctx.data.get("rollout")
        if not isinstance(rollout, Mapping) or rollout.get("op") != ctx.operation_id:
            return True
        steps = [Step.decode(s) for s in rollout["steps"]]
        at = int(rollout["at"])
        if at >= len(steps):
            return True
        phase = rollout["phase"]
        if phase == "apply":
            await _apply(ctx, props, planner, rollout, steps, at)
        elif phase == "wait":
            if not await _child_done(ctx, str(rollout.get("expect") or "UPDATE")):
                return Wait(POLL_SECONDS)
            pause = float(rollout.get("pause") or 0)
            more_batches = at + 1 < len(steps) and steps[at + 1].kind == BATCH
            if steps[at].kind == BATCH and more_batches and pause > 0:
                await _save(ctx, rollout, phase="pause", until=ctx.now() + pause)
            else:
                await _save(ctx, rollout, phase="apply", at=at + 1)
        else:
            left = float(rollout["until"]) - ctx.now()
            if left > 0:
                return Wait(left)
            await _save(ctx, rollout, phase="apply", at=at + 1)


async def _save(ctx: ResourceContext, rollout: Mapping[str, Any], **changes: JSON) -> None:
    await ctx.set_data({**ctx.data, "rollout": {**rollout, **changes}})


async def _apply(
    ctx: ResourceContext,
    props: Properties,
    planner: Planner,
    rollout: Mapping[str, Any],
    steps: Sequence[Step],
    at: int,
) -> None:
    if rollout.get("planned") != at:
        old = members_of(ctx.data)
        current = Current(
            members=old,
            failed=await failed_members(ctx),
            blacklist=list(ctx.data.get("blacklist") or []),
            seed=str(ctx.data.get("seed") or ctx.operation_id),
            made=int(ctx.data.get("made") or 0),
        )
        new = merge_order(old, planner(props, steps[at], current))
        made = current.made + sum(1 for n, _ in new if n not in dict(old))
        if len(steps) > 1:
            # before the write below, so the event commits with it
            await ctx.emit(f"Applying batch {at + 1} of {len(steps)} ({len(new)} members)")
        await ctx.set_data(
            {
                **ctx.data,
                **encode_members(new),
                "made": made,
                "rollout": {**rollout, "planned": at},
            }
        )
    members = members_of(ctx.data)
    child = ChildStack(
        template=group_template(members, [n for n, _ in members]),
        timeout_mins=rollout.get("timeout"),
    )
    stack_id, expect = ctx.physical_id, "UPDATE"
    if stack_id is None:
        stack_id, expect = await ctx.nested.create(child), "CREATE"
        await ctx.set_physical_id(stack_id)
    else:
        await ctx.nested.update(stack_id, child)
    await _save(ctx, dict(ctx.data["rollout"]), phase="wait", expect=expect)


async def _child_done(ctx: ResourceContext, expect: str) -> bool:
    """True when the child's ``expect`` action completed; raises the child's
    failure as the group's (Heat's path below the group kept)."""
    if ctx.physical_id is None:
        raise ResourceFailure("the group's nested stack was never created")
    state = await ctx.nested.state(ctx.physical_id)
    if state is None:
        raise ResourceFailure(f"the nested stack {ctx.physical_id} is gone")
    if state.in_progress:
        return False
    if state.failed:
        raise nested_failure(state)
    return state.action == expect  # otherwise the action has not begun yet


async def failed_members(ctx: ResourceContext) -> frozenset[str]:
    if ctx.physical_id is None:
        return frozenset()
    rows = await ctx.nested.resources(ctx.physical_id)
    return frozenset(r.name for r in rows if r.status == "FAILED")


async def member_views(
    ctx: ResourceContext, names: Sequence[str] | None = None
) -> list[MemberView]:
    """The members as stored in the child, in ``names`` order (a name with
    no member yet has no reference and no attributes), or, without
    ``names``, in creation order skipping failed members."""
    rows = await ctx.nested.resources(ctx.physical_id) if ctx.physical_id else []
    found = {r.name: r for r in rows}
    if names is None:
        order = [n for n, _ in members_of(ctx.data)]
        names = [n for n in order if n in found and found[n].status != "FAILED"]
    out = []
    for name in names:
        row = found.get(name)
        if row is None:
            out.append(MemberView(name))
        else:
            out.append(MemberView(name, row.reference_id, dict(row.attributes)))
    return out
