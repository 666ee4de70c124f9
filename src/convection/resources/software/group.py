"""OS::Heat::SoftwareDeploymentGroup and OS::Heat::StructuredDeploymentGroup.

Heat makes a group a nested stack of one deployment per ``servers`` entry,
named by the entry's key. Convection has no group machinery for plugins yet,
so a group runs its members itself, concurrently, inside one resource, and
keeps one record per member in ``data.members``. Members follow the single
deployment's rules exactly (they share :mod:`._run`): each is judged alone,
re-run on UPDATE only when its config or inputs changed, and never twice
for one operation; on UPDATE a member whose key left ``servers`` gets its
DELETE action (when ``actions`` has it) and a new key gets CREATE.

Attributes are Heat's: ``deploy_stdouts``, ``deploy_stderrs`` and
``deploy_status_codes`` map member names to the member's value, and any
other name (a config output) maps member names to that output.

``update_policy`` is Heat's: ``batch_create`` on CREATE and
``rolling_update`` on UPDATE run ``max_batch_size`` members at a time with
``pause_time`` seconds between batches (a timer, never a sleep); without
them every member runs at once. A rolling update takes the members it
already holds last-first, as Heat updates the highest indices first.
"""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable, Mapping
from typing import Any, ClassVar

from convection.common import JSON
from convection.hot import Range
from convection.resources._context import Peer, ResourceContext
from convection.resources._plugin import (
    Poll,
    Properties,
    ResourceFailure,
    ResourcePlugin,
    Token,
    Wait,
)
from convection.resources._schema import (
    AttributeSchema,
    AttributeType,
    PropertySchema,
    PropertyType,
)
from convection.resources._validate import validate_properties
from convection.resources.nodes._common import KIND_KEY
from convection.resources.software import _pull
from convection.resources.software import _schemas as s
from convection.resources.software._node import TransportFactory
from convection.resources.software._run import Applied, Member, apply, new_deployment_id

_PLURAL = {
    "deploy_stdouts": "deploy_stdout",
    "deploy_stderrs": "deploy_stderr",
    "deploy_status_codes": "deploy_status_code",
}


class SoftwareDeploymentGroup(ResourcePlugin):
    """One config deployed to every server of a map, one member per key."""

    type_name = "OS::Heat::SoftwareDeploymentGroup"
    properties_schema: ClassVar[Mapping[str, PropertySchema]] = {
        "servers": s.SERVERS,
        "config": s.DEPLOY_CONFIG,
        "input_values": s.DEPLOY_INPUT_VALUES,
        "actions": s.DEPLOY_ACTIONS_PROP,
        "name": s.DEPLOY_NAME,
        "signal_transport": s.SIGNAL_TRANSPORT,
    }
    attributes_schema: ClassVar[Mapping[str, AttributeSchema]] = {
        "deploy_stdouts": AttributeSchema(
            "A map of Nova names and captured stdouts from the configuration execution "
            "to each server.",
            AttributeType.MAP,
        ),
        "deploy_stderrs": AttributeSchema(
            "A map of Nova names and captured stderrs from the configuration execution "
            "to each server.",
            AttributeType.MAP,
        ),
        "deploy_status_codes": AttributeSchema(
            "A map of Nova names and returned status code from the configuration execution.",
            AttributeType.MAP,
        ),
    }
    transport_factory: ClassVar[TransportFactory | None] = None

    @classmethod
    def attribute_names(cls) -> frozenset[str] | None:
        """Any name: a member's outputs are the group's attributes too."""
        return None

    async def _start(self, ctx: ResourceContext, props: Properties, action: str) -> Token:
        """Plan the action's member runs in batches, run the first batch, and
        leave the rest to the poll (a pause between batches is a timer)."""
        if ctx.data.get("op") == ctx.operation_id:
            failure = ctx.data.get("failure")  # recorded already: never run twice
            if isinstance(failure, Mapping):
                raise ResourceFailure(str(failure.get("reason")), path=str(failure.get("path")))
            return None
        run = ctx.data.get("run")
        if not (isinstance(run, Mapping) and run.get("op") == ctx.operation_id):
            if ctx.physical_id is None:
                if action != "CREATE":
                    return None
                await ctx.set_physical_id(new_deployment_id(ctx, ctx.resource_name))
            servers = {str(k): str(v) for k, v in (props.get("servers") or {}).items()}
            size, pause = batching(ctx, action)
            plan = _plan(action, servers, _members(ctx.data))
            run = {"op": ctx.operation_id, "batches": _split(plan, size), "next": 0}
            run["pause"], run["due"] = pause, 0.0
            await ctx.set_data({"members": dict(_members(ctx.data)), "run": run})
        return await self._advance(ctx, props)

    async def _advance(self, ctx: ResourceContext, props: Properties) -> Token:
        """Run the next batch when its pause is over; a token while more remain."""
        run = ctx.data.get("run")
        if not isinstance(run, Mapping) or run.get("op") != ctx.operation_id:
            return None
        batches, step = list(run.get("batches") or []), int(run.get("next") or 0)
        if step < len(batches):
            wait = await self._run_batch(ctx, props, batches[step])
            if wait is not None:  # pull members still wait for their agents
                return {"op": ctx.operation_id, "wait": wait}
            step += 1
        members = dict(_members(ctx.data))
        if step >= len(batches):
            await ctx.set_data({"members": members, "op": ctx.operation_id})
            return None
        pause = float(run.get("pause") or 0)
        later = {**run, "next": step, "due": ctx.now() + pause}
        await ctx.set_data({"members": members, "run": later})
        return {"op": ctx.operation_id}

    async def _poll(self, ctx: ResourceContext, props: Properties, token: Token) -> Poll:
        if token is None:
            return True
        run = ctx.data.get("run")
        if not isinstance(run, Mapping) or run.get("op") != ctx.operation_id:
            return True
        left = float(run.get("due") or 0) - ctx.now()
        if left > 0:
            return Wait(left)
        token = await self._advance(ctx, props)
        if isinstance(token, Mapping) and isinstance(token.get("wait"), int | float):
            return Wait(float(token["wait"]))
        return token is None

    async def _run_batch(self, ctx: ResourceContext, props: Properties, batch: Any) -> float | None:
        """Run one batch's members at once; record each as it ends. Called
        again while pull members wait: the seconds to sleep, or None once
        every member has its verdict."""
        members: dict[str, JSON] = dict(_members(ctx.data))
        run = ctx.data.get("run")
        lock = asyncio.Lock()

        async def keep(name: str, record: Mapping[str, JSON] | None) -> None:
            async with lock:
                if record is None:
                    members.pop(name, None)
                else:
                    members[name] = dict(record)
                await ctx.set_data({"members": members, "run": run})

        async def one(name: str, member_action: str, server: str) -> tuple[str, str | None, float]:
            previous = members.get(name)
            prev = previous if isinstance(previous, Mapping) else None
            if prev is not None and prev.get("op") == ctx.operation_id:
                failure = prev.get("failure")  # this member finished before a crash
                return name, failure if isinstance(failure, str) else None, 0.0
            peer = await ctx.peer(server)
            if member_action == "DELETE" and peer is None:
                applied = Applied(None)  # its server is gone: nothing to run
            elif peer is not None and peer.data.get(KIND_KEY) == _pull.PULL_KIND:
                member = self._member(ctx, name, server, prev)
                pulled = await self._member_pull(
                    ctx, props, member, member_action, peer, prev, keep
                )
                if isinstance(pulled, Wait):
                    return name, None, pulled.seconds
                applied = pulled
            else:
                applied = await self._member_run(ctx, props, name, member_action, server, prev)
            pull = prev.get("pull") if prev else None
            if member_action == "DELETE" and applied.failure is None:
                await _pull.forget(ctx, str(prev.get("id")) if prev else None, pull)
                await keep(name, None)
            elif applied.record is not None:
                record = {**applied.record, "op": ctx.operation_id, "pull": pull}
                await keep(name, {**record, "failure": applied.failure})
            return name, applied.failure, 0.0

        results = await asyncio.gather(*(one(str(n), str(a), str(v)) for n, a, v in batch))
        waits = [w for _, f, w in results if w > 0 and not f]
        if waits and not any(f for _, f, _ in results):
            return min(waits)
        failed = [(n, f) for n, f, _ in results if f]
        if failed:
            name, reason = failed[0]
            others = ", ".join(n for n, _ in failed[1:])
            failure = {
                "reason": reason + (f" (also failed: {others})" if others else ""),
                "path": f"resources.{name}",
            }
            await ctx.set_data({"members": members, "op": ctx.operation_id, "failure": failure})
            raise ResourceFailure(failure["reason"], path=failure["path"])
        return None

    def _member(
        self, ctx: ResourceContext, name: str, server: str, prev: Mapping[str, JSON] | None
    ) -> Member:
        ident = prev.get("id") if prev else None
        return Member(
            name=name,
            deployment_id=str(ident) if ident else new_deployment_id(ctx, name),
            server=server,
            where=f"resources.{ctx.resource_name}.properties.servers.{name}",
        )

    async def _member_pull(
        self,
        ctx: ResourceContext,
        props: Properties,
        member: Member,
        action: str,
        server: Peer,
        prev: Mapping[str, JSON] | None,
        keep: Callable[[str, Mapping[str, JSON] | None], Awaitable[None]],
    ) -> Applied | Wait:
        """A member on a DeployedServer: publish it for the server's agent,
        then wait for its report (``_pull``); the state lives in its record."""
        base = dict(prev or {"id": member.deployment_id, "server": member.server})

        async def keep_state(state: dict[str, JSON]) -> None:
            await keep(member.name, {**base, "pull": state})

        try:
            pull = _pull.waiting(ctx, prev.get("pull") if prev else None)
            if pull is not None:
                return await _pull.poll(ctx, member, pull)
            started = await _pull.start(
                ctx,
                member,
                props,
                action,
                server_id=server.physical_id or "",
                previous=prev,
                pull=None,
                keep=keep_state,
            )
        except ResourceFailure as exc:
            return Applied(dict(prev) if prev else None, exc.message)
        if isinstance(started, Applied):
            return started
        return Wait(min(started - ctx.now(), _pull.POLL_SECONDS))

    async def _member_run(
        self,
        ctx: ResourceContext,
        props: Properties,
        name: str,
        action: str,
        server: str,
        prev: Mapping[str, JSON] | None,
    ) -> Applied:
        member = self._member(ctx, name, server, prev)
        try:
            applied = await apply(
                ctx, member, props, action, previous=prev, factory=type(self).transport_factory
            )
        except ResourceFailure as exc:
            return Applied(dict(prev) if prev else None, exc.message)
        await _pull.push_row(ctx, member, props, action, applied)
        return applied

    async def create(self, ctx: ResourceContext, props: Properties) -> Token:
        return await self._start(ctx, props, "CREATE")

    async def check_create_complete(
        self, ctx: ResourceContext, props: Properties, token: Token
    ) -> Poll:
        return await self._poll(ctx, props, token)

    async def update(self, ctx: ResourceContext, props: Properties) -> Token:
        return await self._start(ctx, props, "UPDATE")

    async def check_update_complete(
        self, ctx: ResourceContext, props: Properties, token: Token
    ) -> Poll:
        return await self._poll(ctx, props, token)

    async def delete(self, ctx: ResourceContext, props: Properties) -> Token:
        return await self._start(ctx, props, "DELETE")

    async def suspend(self, ctx: ResourceContext, props: Properties) -> Token:
        return await self._start(ctx, props, "SUSPEND")

    async def resume(self, ctx: ResourceContext, props: Properties) -> Token:
        return await self._start(ctx, props, "RESUME")

    async def attribute(self, ctx: ResourceContext, props: Properties, name: str) -> JSON:
        """A map of member name to the member's attribute ``name``."""
        key = _PLURAL.get(name, name)
        out: dict[str, JSON] = {}
        for member, record in _members(ctx.data).items():
            outputs = record.get("outputs") if isinstance(record, Mapping) else None
            out[member] = outputs.get(key) if isinstance(outputs, Mapping) else None
        return out


def _members(data: Mapping[str, JSON]) -> Mapping[str, Any]:
    members = data.get("members")
    return members if isinstance(members, Mapping) else {}


def _plan(
    action: str, servers: Mapping[str, str], members: Mapping[str, Any]
) -> list[tuple[str, str, str]]:
    """``(member, action, server)`` for each member the action touches."""
    if action != "UPDATE":
        if action == "DELETE":
            return [
                (n, "DELETE", _server_of(members.get(n)) or servers.get(n, "")) for n in members
            ]
        return [(n, action, srv) for n, srv in servers.items()]
    # Heat updates the members it holds last-first; new ones come after.
    plan = [(n, "UPDATE", srv) for n, srv in reversed(list(servers.items())) if n in members]
    plan += [(n, "CREATE", srv) for n, srv in servers.items() if n not in members]
    gone = [(n, "DELETE", _server_of(members[n]) or "") for n in members if n not in servers]
    return plan + gone


def _split(plan: list[tuple[str, str, str]], size: int) -> list[list[list[str]]]:
    return [[list(m) for m in plan[i : i + size]] for i in range(0, len(plan), size)]


_BATCH_SCHEMA: Mapping[str, PropertySchema] = {
    "max_batch_size": PropertySchema(
        type=PropertyType.INTEGER,
        description="The maximum number of deployments to replace at once.",
        default=1,
        constraints=(Range(min=1),),
    ),
    "pause_time": PropertySchema(
        type=PropertyType.NUMBER,
        description="The number of seconds to wait between batches of updates.",
        default=0,
        constraints=(Range(min=0),),
    ),
}
_POLICY_SCHEMA: Mapping[str, PropertySchema] = {
    "rolling_update": PropertySchema(type=PropertyType.MAP, schema=_BATCH_SCHEMA),
    "batch_create": PropertySchema(type=PropertyType.MAP, schema=_BATCH_SCHEMA),
}
_POLICY_FOR = {"CREATE": "batch_create", "UPDATE": "rolling_update"}


def batching(ctx: ResourceContext, action: str) -> tuple[int, float]:
    """``(batch size, pause)`` for the action: Heat's ``batch_create`` on
    CREATE and ``rolling_update`` on UPDATE; otherwise every member at once."""
    raw = getattr(ctx, "update_policy", None)
    key = _POLICY_FOR.get(action)
    if raw is None or key is None:
        return _ALL, 0.0
    values, diags = validate_properties(_POLICY_SCHEMA, raw, ("update_policy",))
    errors = [d for d in diags if d.is_error]
    if errors:
        raise ResourceFailure(f"Invalid update policy: {errors[0]}")
    policy = values.get(key)
    if not isinstance(policy, Mapping):
        return _ALL, 0.0
    return int(policy.get("max_batch_size") or 1), float(policy.get("pause_time") or 0)


_ALL = 1 << 30


def _server_of(record: Any) -> str | None:
    server = record.get("server") if isinstance(record, Mapping) else None
    return server if isinstance(server, str) else None


class StructuredDeploymentGroup(SoftwareDeploymentGroup):
    """A group of StructuredDeployments: ``get_input`` substituted per member."""

    type_name = "OS::Heat::StructuredDeploymentGroup"
    properties_schema: ClassVar[Mapping[str, PropertySchema]] = {
        **SoftwareDeploymentGroup.properties_schema,
        "input_key": s.INPUT_KEY,
        "input_values_validate": s.INPUT_VALUES_VALIDATE,
    }


class SoftwareDeployments(SoftwareDeploymentGroup):
    """Heat's hidden old name for OS::Heat::SoftwareDeploymentGroup."""

    type_name = "OS::Heat::SoftwareDeployments"


class StructuredDeployments(StructuredDeploymentGroup):
    """Heat's deprecated old name for OS::Heat::StructuredDeploymentGroup."""

    type_name = "OS::Heat::StructuredDeployments"
