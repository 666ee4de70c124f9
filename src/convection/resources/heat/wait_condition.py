"""Wait conditions: a resource that completes when its handle was signalled.

``OS::Heat::WaitCondition`` and ``AWS::CloudFormation::WaitCondition``, as
Heat has them (``heat/engine/resources/openstack/heat/wait_condition.py``,
``.../aws/cfn/wait_condition.py``). On every poll, in Heat's order:

1. past the deadline: fail with ``WaitConditionTimeout``, "N of COUNT
   received" plus the success reasons joined by ``;``;
2. any FAILURE signal: fail with ``WaitConditionFailure``, the failure
   reasons joined by ``;``;
3. at least ``count`` signals (all SUCCESS by now): done.

The wait never holds a worker: the deadline (start + ``timeout``) is stored
in ``data`` under the operation's id before the first poll, so a restarted
engine keeps the same deadline and a later update gets a fresh one, and a
poll that is not done answers :class:`Wait` with the time left. A signal
need not wait for that timer: ``Stacks.signal`` writes a wake timer for the
stack's sleeping nodes, so the next engine polls at once.

The handle's signals are read fresh from the store on every poll
(``ctx.peer``), so a signal stored by another process, or while no engine
ran, is seen.

Differences from Heat, and why:

* ``data`` is stored when the action completes, like every attribute here
  (Heat resolves it live, so signals sent after completion show up there).

Deleting a wait condition empties its handle's signals, as Heat's
``handle_delete`` does, so one removed and later added back on the same
handle waits for new signals. A plugin may read another resource but never
write it, so the wait condition asks (``ctx.reset_peer``) and the handle's
own plugin forgets them (``reset``).
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import Any, ClassVar

from convection.common import JSON, ConvectionError
from convection.hot import Range
from convection.resources._context import Peer, ResourceContext
from convection.resources._plugin import Poll, Properties, ResourcePlugin, Token, Wait
from convection.resources._schema import AttributeSchema, AttributeType, PropertySchema
from convection.resources._schema import PropertyType as PT
from convection.resources.heat.wait_condition_handle import (
    AWS_HANDLE_TYPES,
    FAILURE,
    HEAT_HANDLE_TYPES,
    SUCCESS,
    entries,
)

_TIMEOUT_RANGE = Range(min=1, max=43200)


class WaitConditionTimeout(ConvectionError):
    """Named as Heat's, since the class name leads the status reason
    (``WaitConditionTimeout: resources.NAME: 0 of 1 received``)."""


class WaitConditionFailure(ConvectionError):
    """A FAILURE signal arrived; the message is its reason (Heat's name)."""


class InvalidHandle(ConvectionError):
    """The handle property does not name a wait condition handle."""


class _WaitCondition(ResourcePlugin):
    #: Property names: (handle, timeout, count).
    NAMES: ClassVar[tuple[str, str, str]] = ("handle", "timeout", "count")
    #: The handle types this wait condition accepts.
    HANDLES: ClassVar[frozenset[str]] = HEAT_HANDLE_TYPES

    async def create(self, ctx: ResourceContext, props: Properties) -> Token:
        await self._handle(ctx, props)
        return await _start(ctx, float(props[self.NAMES[1]]))

    async def check_create_complete(
        self, ctx: ResourceContext, props: Properties, token: Token
    ) -> Poll:
        return await self._poll(ctx, props, token)

    async def update(self, ctx: ResourceContext, props: Properties) -> Token:
        """Only ``count`` updates in place; Heat then waits again from now."""
        await self._handle(ctx, props)
        return await _start(ctx, float(props[self.NAMES[1]]))

    async def check_update_complete(
        self, ctx: ResourceContext, props: Properties, token: Token
    ) -> Poll:
        return await self._poll(ctx, props, token)

    async def delete(self, ctx: ResourceContext, props: Properties) -> Token:
        """Heat's ``handle_delete``: the handle forgets its signals. A
        handle that is gone or is no handle (a create that failed on
        it) is left alone; asking again after a crash is harmless."""
        ref = props.get(self.NAMES[0])
        handle = None if ref is None else await ctx.peer(str(ref))
        if handle is not None and handle.type in HEAT_HANDLE_TYPES:
            await ctx.reset_peer(handle.name)
        return None

    async def attribute(self, ctx: ResourceContext, props: Properties, name: str) -> JSON:
        """Heat's ``data``: a JSON string mapping each signal id to its data."""
        handle = await ctx.peer(str(props.get(self.NAMES[0])))
        signals = entries(handle.data) if handle is not None else []
        return json.dumps({e["id"]: e.get("data") for e in signals})

    async def _handle(self, ctx: ResourceContext, props: Properties) -> Peer:
        ref = str(props[self.NAMES[0]])
        handle = await ctx.peer(ref)
        if handle is None or handle.type not in self.HANDLES:
            name = handle.name if handle is not None else ref
            raise InvalidHandle(self.invalid_handle(name))
        return handle

    def invalid_handle(self, name: str) -> str:
        return f"{name} is not a valid wait condition handle."

    async def _poll(self, ctx: ResourceContext, props: Properties, token: Token) -> Poll:
        handle = await self._handle(ctx, props)
        signals = entries(handle.data)
        count = int(props[self.NAMES[2]])
        deadline = float(token) if isinstance(token, int | float) else ctx.now()
        remaining = deadline - ctx.now()
        if remaining < 0:
            raise WaitConditionTimeout(_timeout_message(signals, count))
        failures = [str(e.get("reason")) for e in signals if e.get("status") != SUCCESS]
        if failures:
            raise WaitConditionFailure(";".join(failures))
        if len(signals) >= count:
            return True
        return Wait(max(remaining, 0.0))


def _timeout_message(signals: list[dict[str, Any]], count: int) -> str:
    reasons = [str(e.get("reason")) for e in signals if e.get("status") == SUCCESS]
    message = f"{len(reasons)} of {count} received"
    return f"{message} - {';'.join(reasons)}" if reasons else message


async def _start(ctx: ResourceContext, timeout: float) -> Token:
    """The deadline of this operation: the stored one on a re-run after a
    crash, else now + ``timeout``, stored before the first poll."""
    stored = ctx.data.get("wait")
    if isinstance(stored, Mapping) and stored.get("operation") == ctx.operation_id:
        deadline = stored.get("deadline")
        if isinstance(deadline, int | float):
            return float(deadline)
    deadline = ctx.now() + timeout
    await ctx.set_data({**ctx.data, "wait": {"operation": ctx.operation_id, "deadline": deadline}})
    return deadline


def _timeout_schema(kind: PT) -> PropertySchema:
    return PropertySchema(
        type=kind,
        description="The number of seconds to wait for the correct number of signals to arrive.",
        required=True,
        constraints=(_TIMEOUT_RANGE,),
    )


_HANDLE = PropertySchema(
    type=PT.STRING,
    description="A reference to the wait condition handle used to signal this wait condition.",
    required=True,
)
_COUNT = PropertySchema(
    type=PT.INTEGER,
    description="The number of success signals that must be received before the stack "
    "creation process continues.",
    default=1,
    constraints=(Range(min=1),),
    update_allowed=True,
)


class HeatWaitCondition(_WaitCondition):
    type_name = "OS::Heat::WaitCondition"
    properties_schema: ClassVar[Mapping[str, PropertySchema]] = {
        "handle": _HANDLE,
        "timeout": _timeout_schema(PT.NUMBER),
        "count": _COUNT,
    }
    attributes_schema: ClassVar[Mapping[str, AttributeSchema]] = {
        "data": AttributeSchema(
            "JSON string containing data associated with wait condition signals sent "
            "to the handle.",
            AttributeType.STRING,
        ),
    }


class AWSWaitCondition(_WaitCondition):
    """Heat's AWS flavour: capitalised names, an integer timeout, and only
    AWS-format handles. ``Handle`` is the handle's reference id: its
    pre-signed URL when the engine has an API URL, else its physical id;
    either is looked up among this stack's resources, so another stack's
    handle URL is refused as Heat refuses it."""

    type_name = "AWS::CloudFormation::WaitCondition"
    NAMES = ("Handle", "Timeout", "Count")
    HANDLES = AWS_HANDLE_TYPES
    properties_schema: ClassVar[Mapping[str, PropertySchema]] = {
        "Handle": _HANDLE,
        "Timeout": _timeout_schema(PT.INTEGER),
        "Count": _COUNT,
    }
    attributes_schema: ClassVar[Mapping[str, AttributeSchema]] = {
        "Data": AttributeSchema(
            "JSON serialized dict containing data associated with wait condition signals "
            "sent to the handle."
        ),
    }

    def invalid_handle(self, name: str) -> str:
        return f"WaitCondition invalid Handle {name}"


__all__ = [
    "FAILURE",
    "AWSWaitCondition",
    "HeatWaitCondition",
    "InvalidHandle",
    "WaitConditionFailure",
    "WaitConditionTimeout",
]
