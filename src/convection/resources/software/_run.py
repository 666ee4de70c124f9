"""One action of one deployment on one node: derive, run, judge, record.

Shared by SoftwareDeployment and every member of a deployment group. The
record it returns is what the resource keeps in ``data``; the library keeps
the other half of the crash-safety story on the node (a marker before the
hook runs, the result after it), keyed by the derived config id, which is
made from the deployment id and the engine's ``operation_id``. So:

* a job re-run after a crash, for an action whose record is in ``data``,
  runs nothing (the plugin checks ``op`` first);
* one whose node has the result replays it without running again;
* one whose node has only the marker was interrupted: it runs again only
  when the config says ``options: {rerun_safe: true}``, else it fails
  with the library's :class:`DeploymentInterrupted` text, which says why.
"""

from __future__ import annotations

import uuid
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from convection.common import JSON
from convection.resources._context import ResourceContext
from convection.resources._plugin import Properties, ResourceFailure
from convection.resources.software._node import (
    TransportFactory,
    find_server,
    hook_registry,
    open_transport,
)
from convection.resources.software.config import stored_config
from convection.software import (
    DeployContext,
    DeployOutcome,
    DerivedConfig,
    HookNotFound,
    InputMissing,
    InvalidConfig,
    SoftwareError,
    SourceConfig,
    Substitution,
    build_derived_config,
    deploy,
    derived_config_id,
    redact,
    should_deploy,
    stack_path,
)

#: The run's captured streams, shown as attributes: a script that echoes a
#: hidden parameter given as an input must not put it on show.
LOG_OUTPUTS = ("deploy_stdout", "deploy_stderr")
NOT_WAITING = "Not waiting for outputs signal"


@dataclass(frozen=True, slots=True)
class Member:
    """One deployment: a SoftwareDeployment, or one member of a group.

    ``name`` is its ``deploy_resource_name``; ``where`` is the property path
    errors about its server name (``resources.X.properties.server``).
    """

    name: str
    deployment_id: str
    server: str
    where: str


@dataclass(frozen=True, slots=True)
class Source:
    """A deployment's source config and the resource that holds it."""

    config: SourceConfig
    resource: str | None


def new_deployment_id(ctx: ResourceContext, name: str) -> str:
    """The same id when a create is re-run after a crash."""
    key = f"convection:deployment:{ctx.physical_resource_name}:{name}"
    return str(uuid.uuid5(uuid.NAMESPACE_URL, key))


async def load_source(ctx: ResourceContext, ref: Any, where: str) -> Source:
    """The config the ``config`` property names (Heat: an empty config when unset)."""
    if not ref:
        return Source(SourceConfig(), None)
    peer = await ctx.peer(str(ref))
    doc = stored_config(peer.data) if peer is not None else None
    if peer is None or doc is None:
        raise ResourceFailure(
            f"Property error: {where}: {ref!r} is not a software config of this stack "
            "(get_resource of an OS::Heat::SoftwareConfig or a type derived from it)"
        )
    try:
        return Source(SourceConfig.from_json(doc), peer.name)
    except InvalidConfig as exc:
        raise ResourceFailure(f"Property error: resources.{peer.name}.properties.{exc}") from None


def derive(
    ctx: ResourceContext,
    member: Member,
    props: Properties,
    source: Source,
    action: str,
) -> DerivedConfig:
    """Heat's derived config for ``action``, keyed for this operation."""
    structured = "input_key" in props
    substitution = (
        Substitution(
            props.get("input_key") or "get_input", props.get("input_values_validate") or "LAX"
        )
        if structured
        else None
    )
    context = DeployContext(
        server_id=member.server,
        action=action,
        stack_id=stack_path(ctx.stack_name, ctx.stack_id),
        resource_name=member.name,
        signal_transport=props.get("signal_transport") or "CFN_SIGNAL",
    )
    try:
        return build_derived_config(
            source.config,
            context,
            config_id=derived_config_id(member.deployment_id, ctx.operation_id),
            input_values=props.get("input_values") or {},
            name=props.get("name"),
            physical_resource_name=ctx.physical_resource_name,
            substitution=substitution,
        )
    except (InputMissing, InvalidConfig) as exc:
        raise ResourceFailure(
            f"Property error: resources.{ctx.resource_name}.properties.input_values: {exc}"
        ) from None


async def run_on_node(
    ctx: ResourceContext,
    member: Member,
    derived: DerivedConfig,
    source: Source,
    factory: TransportFactory | None,
) -> DeployOutcome:
    """Run ``derived`` on the member's server; errors become clear failures."""
    peer = await find_server(ctx, member.server, member.where)
    user_data_format = peer.properties.get("user_data_format")
    if user_data_format not in (None, "SOFTWARE_CONFIG"):
        raise ResourceFailure(
            f"Resource {member.server}'s property user_data_format should be set to "
            "SOFTWARE_CONFIG since there are software deployments on it."
        )
    try:
        async with open_transport(peer, factory) as transport:
            return await deploy(derived, transport, hooks=hook_registry(), secrets=ctx.secrets)
    except HookNotFound as exc:
        where = f"resources.{source.resource}.properties.group" if source.resource else "group"
        raise ResourceFailure(f"Property error: {where}: {exc}") from None
    except SoftwareError as exc:
        raise ResourceFailure(f"Deployment to server failed: {exc}") from None


def replace_on_change(previous: Mapping[str, JSON] | None, derived: DerivedConfig) -> list[str]:
    """Inputs marked ``replace_on_change`` whose value changed since the last run."""
    before = previous.get("inputs") if previous else None
    if not isinstance(before, Mapping):
        return []
    return [
        i.name
        for i in derived.inputs
        if i.replace_on_change and i.name in before and before[i.name] != i.value
    ]


def record_of(
    member: Member,
    derived: DerivedConfig,
    outcome: DeployOutcome | None,
    no_signal: bool,
    secrets: tuple[str, ...] = (),
) -> dict[str, JSON]:
    """What the resource keeps of one run: enough to answer get_attr and to
    tell whether an UPDATE has anything new to run. The captured streams are
    kept with the hidden parameters' values (and the config's secret
    inputs) redacted; declared outputs are data for later steps, kept as
    the script wrote them."""
    outputs: dict[str, JSON] = {}
    if outcome is not None and not no_signal:
        outputs = dict(outcome.output_values)
        hidden = (*secrets, *derived.secret_values())
        for key in LOG_OUTPUTS:
            text = outputs.get(key)
            if isinstance(text, str):
                outputs[key] = redact(text, hidden)
    return {
        "id": member.deployment_id,
        "server": member.server,
        "digest": derived.digest,
        "inputs": {i.name: i.value for i in derived.inputs if not i.name.startswith("deploy_")},
        "outputs": outputs,
        "status": outcome.status if outcome is not None else "COMPLETE",
    }


@dataclass(frozen=True, slots=True)
class Applied:
    """The result of :func:`apply`: the new record (``None``: nothing ran and
    nothing changed), and a failure reason when the run failed."""

    record: dict[str, JSON] | None
    failure: str | None = None


async def apply(
    ctx: ResourceContext,
    member: Member,
    props: Properties,
    action: str,
    *,
    previous: Mapping[str, JSON] | None,
    factory: TransportFactory | None,
) -> Applied:
    """Run ``action`` for one deployment when Heat would, and judge it."""
    source = await load_source(
        ctx, props.get("config"), f"resources.{ctx.resource_name}.properties.config"
    )
    if not should_deploy(source.config, action, props.get("actions") or ()):
        return Applied(None)
    derived = derive(ctx, member, props, source, action)
    if action == "UPDATE" and previous is not None:
        changed = replace_on_change(previous, derived)
        if changed:
            member = Member(member.name, _replacement_id(member, ctx), member.server, member.where)
            await ctx.emit(
                f"{member.name}: input {', '.join(changed)} changed and is marked "
                "replace_on_change: deploying it as a new deployment (CREATE)"
            )
            derived = derive(ctx, member, props, source, "CREATE")
        elif previous.get("digest") == derived.digest:
            await ctx.emit(f"{member.name}: config and inputs unchanged; not run again")
            return Applied(dict(previous))
    outcome = await run_on_node(ctx, member, derived, source, factory)
    no_signal = props.get("signal_transport") == "NO_SIGNAL"
    record = record_of(member, derived, outcome, no_signal, ctx.secrets)
    if no_signal:
        await ctx.emit(f"{member.name}: {NOT_WAITING} (the run ended {outcome.status})")
        return Applied(record)
    if not outcome.ok:
        return Applied(record, f"Deployment to server failed: {outcome.status_reason}")
    return Applied(record)


def _replacement_id(member: Member, ctx: ResourceContext) -> str:
    key = f"convection:deployment:{member.deployment_id}:{ctx.operation_id}"
    return str(uuid.uuid5(uuid.NAMESPACE_URL, key))
