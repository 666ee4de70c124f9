"""OS::Heat::SoftwareDeployment and OS::Heat::StructuredDeployment.

Heat's deployment writes a derived config for its server and waits for the
server's agent to signal the result. Here the engine is the agent: the
action method runs the derived config on the node through its transport
and judges the result with Heat's rules, so the resource completes (or
fails, with the tail of stderr) when the action method returns.

Why the run happens inside the action method rather than in a poll: the
library's :func:`~convection.software.deploy` runs a hook to its end and has
no detached mode to poll (a result file the poll could read while the hook
runs elsewhere). The run holds its engine worker for the script's length;
the run's own timeout (``options.timeout``, 30 minutes by default) bounds it.

Idempotence: ``data.op`` is the ``operation_id`` of the last action whose
result is recorded; the same operation never runs again. Below that, the
node's marker files decide (see :mod:`._run`).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, ClassVar

from convection.common import JSON
from convection.resources._context import ResourceContext
from convection.resources._plugin import (
    Poll,
    Properties,
    ResourceFailure,
    ResourcePlugin,
    Token,
)
from convection.resources._schema import AttributeSchema, AttributeType, PropertySchema
from convection.resources.nodes._common import KIND_KEY
from convection.resources.software import _pull
from convection.resources.software import _schemas as s
from convection.resources.software._node import TransportFactory
from convection.resources.software._run import Applied, Member, apply, new_deployment_id

STANDARD_ATTRIBUTES: Mapping[str, AttributeSchema] = {
    "deploy_stdout": AttributeSchema(
        "Captured stdout from the configuration execution.", AttributeType.STRING
    ),
    "deploy_stderr": AttributeSchema(
        "Captured stderr from the configuration execution.", AttributeType.STRING
    ),
    "deploy_status_code": AttributeSchema(
        "Returned status code from the configuration execution.", AttributeType.STRING
    ),
}


class SoftwareDeployment(ResourcePlugin):
    """Associates a server with a config and runs it there on the chosen actions."""

    type_name = "OS::Heat::SoftwareDeployment"
    properties_schema: ClassVar[Mapping[str, PropertySchema]] = {
        "config": s.DEPLOY_CONFIG,
        "server": s.DEPLOY_SERVER,
        "input_values": s.DEPLOY_INPUT_VALUES,
        "actions": s.DEPLOY_ACTIONS_PROP,
        "name": s.DEPLOY_NAME,
        "signal_transport": s.SIGNAL_TRANSPORT,
    }
    attributes_schema: ClassVar[Mapping[str, AttributeSchema]] = STANDARD_ATTRIBUTES
    #: How a server peer becomes a transport; ``None``: the node types' own
    #: (``convection.resources.nodes.transport_for``). Tests may set another.
    transport_factory: ClassVar[TransportFactory | None] = None

    @classmethod
    def attribute_names(cls) -> frozenset[str] | None:
        """Any name: the config's outputs are attributes, and the config is
        not known when the template is validated (Heat checks at run time)."""
        return None

    def _member(self, ctx: ResourceContext, props: Properties, deployment_id: str) -> Member:
        return Member(
            name=ctx.resource_name,
            deployment_id=deployment_id,
            server=str(props.get("server") or ""),
            where=f"resources.{ctx.resource_name}.properties.server",
        )

    async def _act(self, ctx: ResourceContext, props: Properties, action: str) -> Token:
        if ctx.data.get("op") == ctx.operation_id:
            # this action's result is already recorded: never run twice
            failure = ctx.data.get("failure")
            if isinstance(failure, str):
                raise ResourceFailure(failure)
            return None
        deployment_id = ctx.physical_id
        if deployment_id is None:
            if action != "CREATE":
                return None  # never created: nothing to run on delete
            deployment_id = new_deployment_id(ctx, ctx.resource_name)
            await ctx.set_physical_id(deployment_id)  # persist before the run
        previous = ctx.data.get("last")
        member = self._member(ctx, props, deployment_id)
        last = previous if isinstance(previous, Mapping) else None
        server = await ctx.peer(member.server)
        if server is not None and server.data.get(KIND_KEY) == _pull.PULL_KIND:
            started = await _pull.start(
                ctx,
                member,
                props,
                action,
                server_id=server.physical_id or "",
                previous=last,
                pull=ctx.data.get("pull"),
                keep=lambda state: ctx.set_data({**ctx.data, "pull": state}),
            )
            if isinstance(started, float):
                return {"pull_deadline": started}  # the agent runs it; poll
            return await self._recorded(ctx, started, previous, deployment_id)
        applied = await apply(
            ctx, member, props, action, previous=last, factory=type(self).transport_factory
        )
        await _pull.push_row(ctx, member, props, action, applied)
        return await self._recorded(ctx, applied, previous, deployment_id)

    async def _recorded(
        self, ctx: ResourceContext, applied: Applied, previous: JSON, deployment_id: str
    ) -> None:
        """Keep the action's result under its operation id; raise its failure."""
        record = applied.record if applied.record is not None else previous
        await ctx.set_data(
            {**ctx.data, "op": ctx.operation_id, "last": record, "failure": applied.failure}
        )
        new_id = record.get("id") if isinstance(record, Mapping) else None
        if isinstance(new_id, str) and new_id != deployment_id:
            await ctx.set_physical_id(new_id)
        if applied.failure is not None:
            raise ResourceFailure(applied.failure)

    async def _check(self, ctx: ResourceContext, props: Properties) -> Poll:
        """Pull mode's wait for the agent's report; push mode is done."""
        if ctx.data.get("op") == ctx.operation_id:
            failure = ctx.data.get("failure")
            if isinstance(failure, str):
                raise ResourceFailure(failure)
            return True
        pull = _pull.waiting(ctx, ctx.data.get("pull"))
        if ctx.physical_id is None or pull is None:
            return True
        result = await _pull.poll(ctx, self._member(ctx, props, ctx.physical_id), pull)
        if isinstance(result, Applied):
            await self._recorded(ctx, result, ctx.data.get("last"), ctx.physical_id)
            return True
        return result

    async def create(self, ctx: ResourceContext, props: Properties) -> Token:
        return await self._act(ctx, props, "CREATE")

    async def check_create_complete(
        self, ctx: ResourceContext, props: Properties, token: Token
    ) -> Poll:
        return await self._check(ctx, props)

    async def update(self, ctx: ResourceContext, props: Properties) -> Token:
        return await self._act(ctx, props, "UPDATE")

    async def check_update_complete(
        self, ctx: ResourceContext, props: Properties, token: Token
    ) -> Poll:
        return await self._check(ctx, props)

    async def delete(self, ctx: ResourceContext, props: Properties) -> Token:
        if await ctx.peer(str(props.get("server") or "")) is None:
            # Heat: a deployment whose server is gone is simply deleted
            await _pull.forget(ctx, ctx.physical_id, ctx.data.get("pull"))
            return None
        token = await self._act(ctx, props, "DELETE")
        if token is None:
            await _pull.forget(ctx, ctx.physical_id, ctx.data.get("pull"))
        return token

    async def check_delete_complete(
        self, ctx: ResourceContext, props: Properties, token: Token
    ) -> Poll:
        done = await self._check(ctx, props)
        if done is True:
            await _pull.forget(ctx, ctx.physical_id, ctx.data.get("pull"))
        return done

    async def suspend(self, ctx: ResourceContext, props: Properties) -> Token:
        return await self._act(ctx, props, "SUSPEND")

    async def check_suspend_complete(
        self, ctx: ResourceContext, props: Properties, token: Token
    ) -> Poll:
        return await self._check(ctx, props)

    async def resume(self, ctx: ResourceContext, props: Properties) -> Token:
        return await self._act(ctx, props, "RESUME")

    async def check_resume_complete(
        self, ctx: ResourceContext, props: Properties, token: Token
    ) -> Poll:
        return await self._check(ctx, props)

    async def attribute(self, ctx: ResourceContext, props: Properties, name: str) -> JSON:
        """Heat's ``get_attribute``: the deployment's output values by name."""
        return _output(ctx.data.get("last"), name)


def _output(record: Any, name: str) -> JSON:
    if not isinstance(record, Mapping):
        return None
    outputs = record.get("outputs")
    return outputs.get(name) if isinstance(outputs, Mapping) else None


class StructuredDeployment(SoftwareDeployment):
    """A SoftwareDeployment that substitutes ``get_input`` (or ``input_key``)
    in a StructuredConfig's map before the node sees it."""

    type_name = "OS::Heat::StructuredDeployment"
    properties_schema: ClassVar[Mapping[str, PropertySchema]] = {
        **SoftwareDeployment.properties_schema,
        "input_key": s.INPUT_KEY,
        "input_values_validate": s.INPUT_VALUES_VALIDATE,
    }
