"""OS::Heat::Delay: a pause placed in the dependency graph.

It waits ``min_wait`` seconds plus a random jitter of up to ``max_jitter *
jitter_multiplier`` seconds during the listed actions. Placed between two
resources, it delays the second one on create (and the first on delete).

The wait is a deadline, never a sleep: the action method records the
deadline in ``data`` (keyed by the operation, so a re-run after a crash finds
the same deadline and a later action gets a fresh one) and returns it as the
token; the poll answers :class:`Wait` with the time left, so the engine sets
one timer for the exact moment instead of polling.
"""

from __future__ import annotations

import random
from collections.abc import Mapping
from typing import ClassVar

from convection.common import Diagnostic, Path
from convection.hot import AllowedValues, Range
from convection.resources._context import ResourceContext
from convection.resources._plugin import Poll, Properties, ResourcePlugin, Token, Wait
from convection.resources._schema import PropertySchema, PropertyType

ACTIONS = ("CREATE", "DELETE", "SUSPEND", "RESUME")
_AT_LEAST_ZERO = Range(min=0)


class Delay(ResourcePlugin):
    type_name = "OS::Heat::Delay"
    properties_schema: ClassVar[Mapping[str, PropertySchema]] = {
        "min_wait": PropertySchema(
            type=PropertyType.NUMBER,
            description="Minimum time in seconds to wait during the specified actions.",
            default=0,
            constraints=(_AT_LEAST_ZERO,),
            update_allowed=True,
        ),
        "max_jitter": PropertySchema(
            type=PropertyType.NUMBER,
            description="Maximum jitter to add to the minimum wait time.",
            default=0,
            constraints=(_AT_LEAST_ZERO,),
            update_allowed=True,
        ),
        "jitter_multiplier": PropertySchema(
            type=PropertyType.NUMBER,
            description="Number of seconds to multiply the maximum jitter value by.",
            default=1.0,
            constraints=(_AT_LEAST_ZERO,),
            update_allowed=True,
        ),
        "actions": PropertySchema(
            type=PropertyType.LIST,
            description="Actions during which the delay will occur.",
            default=["CREATE"],
            constraints=(AllowedValues(ACTIONS),),
            update_allowed=True,
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
        # Heat checks this only under strict validation, and so do we.
        if not strict or stack_timeout is None:
            return []
        bounds = _bounds(values)
        if bounds is None:
            return []
        max_wait = bounds[0] + bounds[1]
        if max_wait <= stack_timeout:
            return []
        message = f"{cls.type_name} maximum delay {max_wait}s exceeds stack timeout."
        return [Diagnostic(message, path)]

    async def create(self, ctx: ResourceContext, props: Properties) -> Token:
        return await _start(ctx, props, "CREATE")

    async def check_create_complete(
        self, ctx: ResourceContext, props: Properties, token: Token
    ) -> Poll:
        return _poll(ctx, token)

    async def delete(self, ctx: ResourceContext, props: Properties) -> Token:
        return await _start(ctx, props, "DELETE")

    async def check_delete_complete(
        self, ctx: ResourceContext, props: Properties, token: Token
    ) -> Poll:
        return _poll(ctx, token)

    async def suspend(self, ctx: ResourceContext, props: Properties) -> Token:
        return await _start(ctx, props, "SUSPEND")

    async def check_suspend_complete(
        self, ctx: ResourceContext, props: Properties, token: Token
    ) -> Poll:
        return _poll(ctx, token)

    async def resume(self, ctx: ResourceContext, props: Properties) -> Token:
        return await _start(ctx, props, "RESUME")

    async def check_resume_complete(
        self, ctx: ResourceContext, props: Properties, token: Token
    ) -> Poll:
        return _poll(ctx, token)


def _bounds(props: Properties) -> tuple[float, float] | None:
    """(minimum wait, maximum jitter) in seconds, or None while unresolved."""
    min_wait, jitter, multiplier = (
        props.get("min_wait"),
        props.get("max_jitter"),
        props.get("jitter_multiplier"),
    )
    if not all(isinstance(v, int | float) for v in (min_wait, jitter, multiplier)):
        return None
    assert isinstance(min_wait, int | float)
    assert isinstance(jitter, int | float) and isinstance(multiplier, int | float)
    return float(min_wait), float(jitter) * float(multiplier)


def wait_seconds(props: Properties, action: str) -> float:
    """A randomised wait for ``action``: zero unless it is one of ``actions``."""
    bounds = _bounds(props)
    if bounds is None or action not in (props.get("actions") or ()):
        return 0.0
    # Jitter spreads a thundering herd; it needs no cryptographic strength.
    return bounds[0] + bounds[1] * random.random()


async def _start(ctx: ResourceContext, props: Properties, action: str) -> Token:
    stored = ctx.data.get("wait")
    if isinstance(stored, Mapping) and stored.get("operation") == ctx.operation_id:
        return stored.get("deadline")  # a re-run: the same deadline as before
    seconds = wait_seconds(props, action)
    if seconds <= 0:
        return None
    deadline = ctx.now() + seconds
    record = {"operation": ctx.operation_id, "action": action, "deadline": deadline}
    await ctx.set_data({**ctx.data, "wait": record})
    return deadline


def _poll(ctx: ResourceContext, token: Token) -> Poll:
    if not isinstance(token, int | float):
        return True
    remaining = float(token) - ctx.now()
    return True if remaining <= 0 else Wait(remaining)
