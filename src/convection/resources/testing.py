"""Fakes for the plugin seam, so engine tests need no real resources.

* :func:`fake_type` builds a plugin class from one plain function (sync or
  async) that receives every call, like httpx's ``MockTransport``. It
  records nothing itself; the function does what a test needs.
* :class:`ManualClock` and :func:`run_action` drive a plugin through an
  action and its polls without sleeping: the clock jumps by each ``Wait``.
* ``Convection::Test::Ledger`` (:class:`LedgerResource`) appends a line to a
  ledger file for every physical create and delete. Crash tests kill the
  engine at random points and then count lines: a physical thing created
  twice, or never deleted, shows up in the ledger.
"""

from __future__ import annotations

import asyncio
import inspect
import os
from collections.abc import Awaitable, Callable, Mapping
from dataclasses import dataclass
from typing import Any, ClassVar

from convection.common import JSON
from convection.resources._context import ResourceContext
from convection.resources._plugin import Poll, Properties, ResourcePlugin, Token, Wait
from convection.resources._schema import AttributeSchema, PropertySchema, PropertyType

# -- a plugin from a function -------------------------------------------------

#: The operations a fake's handler can receive.
OPERATIONS = (
    "create",
    "check_create_complete",
    "update",
    "check_update_complete",
    "delete",
    "check_delete_complete",
    "check",
    "suspend",
    "check_suspend_complete",
    "resume",
    "check_resume_complete",
    "signal",
    "reference_id",
    "attribute",
)


@dataclass(frozen=True, slots=True)
class Call:
    """One call into a fake plugin. ``arg`` is the token for a ``check_*``
    poll, the details for ``signal`` and the name for ``attribute``."""

    op: str
    ctx: ResourceContext
    properties: Properties
    arg: Any = None


Handler = Callable[[Call], Any]


class _FakePlugin(ResourcePlugin):
    """Sends every call to ``handler``. A handler result of ``None`` means
    "the default": done for a poll, no drift for ``check``, the physical id
    (or name) for ``reference_id``, and for ``create`` the physical id is set
    to ``ctx.physical_resource_name`` when none is stored."""

    handler: Handler | None = None

    async def _call(self, op: str, ctx: ResourceContext, props: Properties, arg: Any) -> Any:
        handler = type(self).handler
        if handler is None:
            return None
        result = handler(Call(op, ctx, props, arg))
        if inspect.isawaitable(result):
            result = await result
        return result

    async def _poll(self, op: str, ctx: ResourceContext, props: Properties, token: Token) -> Poll:
        result = await self._call(op, ctx, props, token)
        return True if result is None else result

    async def create(self, ctx: ResourceContext, props: Properties) -> Token:
        token = await self._call("create", ctx, props, None)
        if ctx.physical_id is None:
            await ctx.set_physical_id(ctx.physical_resource_name)
        return token

    async def check_create_complete(
        self, ctx: ResourceContext, props: Properties, token: Token
    ) -> Poll:
        return await self._poll("check_create_complete", ctx, props, token)

    async def update(self, ctx: ResourceContext, props: Properties) -> Token:
        return await self._call("update", ctx, props, None)

    async def check_update_complete(
        self, ctx: ResourceContext, props: Properties, token: Token
    ) -> Poll:
        return await self._poll("check_update_complete", ctx, props, token)

    async def delete(self, ctx: ResourceContext, props: Properties) -> Token:
        return await self._call("delete", ctx, props, None)

    async def check_delete_complete(
        self, ctx: ResourceContext, props: Properties, token: Token
    ) -> Poll:
        return await self._poll("check_delete_complete", ctx, props, token)

    async def check(self, ctx: ResourceContext, props: Properties) -> str | None:
        return await self._call("check", ctx, props, None)  # type: ignore[no-any-return]

    async def suspend(self, ctx: ResourceContext, props: Properties) -> Token:
        return await self._call("suspend", ctx, props, None)

    async def check_suspend_complete(
        self, ctx: ResourceContext, props: Properties, token: Token
    ) -> Poll:
        return await self._poll("check_suspend_complete", ctx, props, token)

    async def resume(self, ctx: ResourceContext, props: Properties) -> Token:
        return await self._call("resume", ctx, props, None)

    async def check_resume_complete(
        self, ctx: ResourceContext, props: Properties, token: Token
    ) -> Poll:
        return await self._poll("check_resume_complete", ctx, props, token)

    async def signal(self, ctx: ResourceContext, props: Properties, details: JSON) -> None:
        await self._call("signal", ctx, props, details)

    async def reference_id(self, ctx: ResourceContext, props: Properties) -> JSON:
        result = await self._call("reference_id", ctx, props, None)
        return await super().reference_id(ctx, props) if result is None else result

    async def attribute(self, ctx: ResourceContext, props: Properties, name: str) -> JSON:
        return await self._call("attribute", ctx, props, name)


def fake_type(
    type_name: str,
    handler: Handler | Callable[[Call], Awaitable[Any]] | None = None,
    *,
    properties_schema: Mapping[str, PropertySchema] | None = None,
    attributes_schema: Mapping[str, AttributeSchema] | None = None,
) -> type[ResourcePlugin]:
    """A plugin class named ``type_name`` whose every method calls ``handler``.

    Without ``properties_schema`` it accepts any properties and any
    attribute name, as OS::Heat::None does.
    """
    namespace: dict[str, Any] = {
        "type_name": type_name,
        # Read back through the class, so it stays a plain function, unbound.
        "handler": handler,
        "properties_schema": dict(properties_schema or {}),
        "attributes_schema": dict(attributes_schema or {}),
        "accepts_anything": properties_schema is None,
    }
    return type(f"Fake[{type_name}]", (_FakePlugin,), namespace)


# -- driving a plugin without sleeping ----------------------------------------


class ManualClock:
    """A clock that moves only when told; pass it as a context's ``clock``."""

    def __init__(self, start: float = 1_000_000.0) -> None:
        self.time = start

    def __call__(self) -> float:
        return self.time

    def advance(self, seconds: float) -> None:
        self.time += seconds


async def run_action(
    plugin: ResourcePlugin,
    action: str,
    ctx: ResourceContext,
    props: Properties,
    *,
    clock: ManualClock | None = None,
    step: float = 1.0,
    max_polls: int = 10_000,
) -> int:
    """Run ``action`` (create, update, delete, suspend, resume) to completion
    as the engine would, returning how many polls said "not yet". With a
    ``clock``, each ``Wait`` (or ``step`` for a plain ``False``) advances it."""
    token = await getattr(plugin, action)(ctx, props)
    check = getattr(plugin, f"check_{action}_complete")
    for polls in range(max_polls):
        result = await check(ctx, props, token)
        if result is True:
            return polls
        if clock is not None:
            clock.advance(result.seconds if isinstance(result, Wait) else step)
    raise AssertionError(f"{action} not complete after {max_polls} polls")


# -- the ledger type -----------------------------------------------------------

#: Where the ledger goes when the ``path`` property is not set.
LEDGER_ENV = "CONVECTION_TEST_LEDGER"


def read_ledger(path: str | os.PathLike[str]) -> list[tuple[str, str]]:
    """The ledger as (event, physical id) pairs, in order."""
    try:
        with open(path, encoding="utf-8") as f:
            lines = f.read().splitlines()
    except FileNotFoundError:
        return []
    return [(p[0], p[1]) for p in (line.split("\t") for line in lines) if len(p) >= 2]


def _append(path: str, line: str) -> None:
    # One small O_APPEND write is atomic; fsync so a kill -9 right after
    # cannot lose a line the test will look for.
    fd = os.open(path, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o644)
    try:
        os.write(fd, line.encode("utf-8"))
        os.fsync(fd)
    finally:
        os.close(fd)


class LedgerResource(ResourcePlugin):
    """Records each physical create and delete as a line in a ledger file.

    It behaves like a careful real plugin: the thing it "makes" is named
    ``ctx.physical_resource_name``, and before making it, it looks in the
    ledger for that name (as a cloud plugin would list by name), so even a
    crash between the append and ``set_physical_id`` does not make two.
    ``wait_secs`` holds the action open, giving crash tests a window.
    """

    type_name = "Convection::Test::Ledger"
    properties_schema: ClassVar[Mapping[str, PropertySchema]] = {
        "path": PropertySchema(
            type=PropertyType.STRING,
            description=f"The ledger file; defaults to ${LEDGER_ENV}.",
        ),
        "value": PropertySchema(
            type=PropertyType.STRING,
            description="Any value, exposed as the value attribute.",
            default="",
            update_allowed=True,
        ),
        "wait_secs": PropertySchema(
            type=PropertyType.NUMBER,
            description="Seconds each create and delete stays in progress.",
            default=0,
            update_allowed=True,
        ),
        "hold_secs": PropertySchema(
            type=PropertyType.NUMBER,
            description="Seconds each create holds its job before making the thing, as "
            "a call in flight does (wait_secs polls instead, holding nothing): the window "
            "in which tests pause or kill a worker.",
            default=0,
            update_allowed=True,
        ),
    }
    attributes_schema: ClassVar[Mapping[str, AttributeSchema]] = {
        "value": AttributeSchema("The value property.")
    }

    @staticmethod
    def ledger_path(props: Properties) -> str:
        path = props.get("path") or os.environ.get(LEDGER_ENV)
        if not path:
            raise RuntimeError(f"{LedgerResource.type_name} needs a path property or ${LEDGER_ENV}")
        return str(path)

    async def create(self, ctx: ResourceContext, props: Properties) -> Token:
        if ctx.physical_id is None and float(props.get("hold_secs") or 0) > 0:
            await asyncio.sleep(float(props["hold_secs"]))
        if ctx.physical_id is None:
            path, name = self.ledger_path(props), ctx.physical_resource_name
            if ("create", name) not in read_ledger(path):
                _append(path, f"create\t{name}\t{ctx.stack_name}\t{ctx.resource_name}\n")
            await ctx.set_physical_id(name)
        return await _deadline(ctx, props)

    async def check_create_complete(
        self, ctx: ResourceContext, props: Properties, token: Token
    ) -> Poll:
        return _until(ctx, token)

    async def delete(self, ctx: ResourceContext, props: Properties) -> Token:
        path = self.ledger_path(props)
        ledger = read_ledger(path)
        # No stored id: the create may have crashed after making the thing but
        # before recording it, so look it up by name, as a cloud plugin would.
        name = ctx.physical_id or ctx.physical_resource_name
        if ("create", name) in ledger and ("delete", name) not in ledger:
            _append(path, f"delete\t{name}\t{ctx.stack_name}\t{ctx.resource_name}\n")
        return await _deadline(ctx, props)

    async def check_delete_complete(
        self, ctx: ResourceContext, props: Properties, token: Token
    ) -> Poll:
        return _until(ctx, token)

    async def attribute(self, ctx: ResourceContext, props: Properties, name: str) -> JSON:
        return props.get("value") if name == "value" else None


async def _deadline(ctx: ResourceContext, props: Properties) -> Token:
    stored = ctx.data.get("wait")
    if isinstance(stored, Mapping) and stored.get("operation") == ctx.operation_id:
        return stored.get("deadline")
    seconds = float(props.get("wait_secs") or 0)
    if seconds <= 0:
        return None
    deadline = ctx.now() + seconds
    await ctx.set_data({**ctx.data, "wait": {"operation": ctx.operation_id, "deadline": deadline}})
    return deadline


def _until(ctx: ResourceContext, token: Token) -> Poll:
    if not isinstance(token, int | float):
        return True
    remaining = float(token) - ctx.now()
    return True if remaining <= 0 else Wait(remaining)
