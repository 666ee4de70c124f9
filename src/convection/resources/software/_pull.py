"""Pull mode: a deployment whose server runs ``convection agent``.

Heat's own way. The engine cannot reach an ``OS::Heat::DeployedServer``
(behind NAT, or simply not ours to log in to), so the deployment does not
run anything: it writes the derived config and an IN_PROGRESS deployment
row (``ctx.software``), which the server's agent reads from
``GET /software_deployments/metadata/{server_id}``; the agent runs it with
the same hooks as push mode and reports with ``PUT
/software_deployments/{id}``. The resource meanwhile sleeps on a ``Wait``
timer, holding no worker, and polls the row; the PUT writes a wake for the
stack's sleeping nodes, so it polls again at once.

State in ``data["pull"]`` (written before the rows, so a re-run after a
crash finds it and keeps the same deadline): the operation, the deadline,
the derived config id, and the digest and inputs a finished run records.
The deadline is the config's ``options.timeout``, else the stack's timeout,
else :data:`~convection.software.DEFAULT_TIMEOUT`.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Mapping
from typing import Final

from convection.common import JSON
from convection.resources._context import ResourceContext, SoftwareRecords
from convection.resources._plugin import Properties, ResourceFailure, Wait
from convection.resources.software._run import (
    LOG_OUTPUTS,
    NOT_WAITING,
    Applied,
    Member,
    derive,
    load_source,
    replace_on_change,
)
from convection.software import (
    COMPLETE,
    DEFAULT_TIMEOUT,
    FAILED,
    DerivedConfig,
    InvalidConfig,
    redact,
    run_timeout,
    should_deploy,
)

#: ``data[KIND_KEY]`` of a server whose deployments are pulled by its agent.
PULL_KIND: Final = "pull"
#: Heat's status reason of a deployment waiting for its server.
DEPLOY_DATA_AVAILABLE: Final = "Deploy data available"
IN_PROGRESS: Final = "IN_PROGRESS"
#: The longest sleep between polls: a lost wake costs at most this.
POLL_SECONDS: Final = 30.0

#: Persists a deployment's pull state where its resource keeps it (a
#: deployment's ``data["pull"]``, a group member's record).
Keep = Callable[[dict[str, JSON]], Awaitable[None]]


def records(ctx: ResourceContext) -> SoftwareRecords:
    """The software rows, which pull mode cannot do without."""
    if ctx.software is None:
        raise ResourceFailure(
            "a deployment to an OS::Heat::DeployedServer needs the software API's "
            "records: run it under an engine with a store"
        )
    return ctx.software


def timeout_of(ctx: ResourceContext, derived: DerivedConfig) -> float:
    try:
        return run_timeout(derived, ctx.stack_timeout or DEFAULT_TIMEOUT)
    except InvalidConfig as exc:
        raise ResourceFailure(f"Property error: config.{exc}") from None


def _secret_input_names(ctx: ResourceContext, derived: DerivedConfig) -> tuple[str, ...]:
    """Inputs to mask when the derived config is shown: the config's secret
    inputs and any whose value holds a hidden parameter's value."""
    hidden = tuple(s for s in ctx.secrets if s)
    names = []
    for inp in derived.inputs:
        text = inp.value if isinstance(inp.value, str) else str(inp.value)
        if inp.name in derived.secret_inputs or any(s in text for s in hidden):
            names.append(inp.name)
    return tuple(names)


async def start(
    ctx: ResourceContext,
    member: Member,
    props: Properties,
    action: str,
    *,
    server_id: str,
    previous: Mapping[str, JSON] | None,
    pull: JSON,
    keep: Keep,
) -> Applied | float:
    """Publish ``action`` for the agent: the deadline to wait for, or an
    :class:`Applied` when there is nothing to wait for. ``pull`` is the
    state ``keep`` stored last (a re-run after a crash finds its own)."""
    source = await load_source(
        ctx, props.get("config"), f"resources.{ctx.resource_name}.properties.config"
    )
    if isinstance(pull, Mapping) and pull.get("op") == ctx.operation_id:
        # A re-run after a crash: same deadline; the rows again only if the
        # crash came before they were written (never over a reported row).
        if not await _published(ctx, member, pull):
            derived = derive(ctx, member, props, source, action)
            await _publish(ctx, member, derived, pull, no_signal=False)
        return float(pull.get("deadline") or ctx.now())
    if not should_deploy(source.config, action, props.get("actions") or ()):
        return Applied(None)
    derived = derive(ctx, member, props, source, action)
    if _unchanged(action, previous, derived):
        await ctx.emit(f"{member.name}: config and inputs unchanged; not run again")
        return Applied(dict(previous or {}))
    deadline = ctx.now() + timeout_of(ctx, derived)
    state: dict[str, JSON] = {
        "op": ctx.operation_id,
        "deadline": deadline,
        "config_id": derived.id,
        "server_id": server_id,
        "action": action,
        "digest": derived.digest,
        "inputs": {i.name: i.value for i in derived.inputs if not i.name.startswith("deploy_")},
        "input_values": dict(props.get("input_values") or {}),
        "previous_config": pull.get("config_id") if isinstance(pull, Mapping) else None,
    }
    await keep(state)  # before the rows: a re-run must find its deadline
    no_signal = props.get("signal_transport") == "NO_SIGNAL"
    await _publish(ctx, member, derived, state, no_signal=no_signal)
    if no_signal:
        await ctx.emit(f"{member.name}: {NOT_WAITING}")
        return Applied(_record(member, state, {}, COMPLETE))
    return deadline


def _unchanged(action: str, previous: Mapping[str, JSON] | None, derived: DerivedConfig) -> bool:
    """An UPDATE with nothing new to run (push mode's rule)."""
    if action != "UPDATE" or previous is None or replace_on_change(previous, derived):
        return False
    return bool(previous.get("digest") == derived.digest)


async def _publish(
    ctx: ResourceContext,
    member: Member,
    derived: DerivedConfig,
    state: Mapping[str, JSON],
    *,
    no_signal: bool,
) -> None:
    """Write the derived config and the deployment row the agent reads."""
    software = records(ctx)
    doc = derived.to_json()
    await software.save_config(derived.id, doc, secret_inputs=_secret_input_names(ctx, derived))
    previous = state.get("previous_config")
    if isinstance(previous, str) and previous != derived.id:
        await software.delete_config(previous)  # Heat drops the old derived config
    await software.save_deployment(
        member.deployment_id,
        server_id=str(state["server_id"]),
        config_id=derived.id,
        input_values=_mapping(state.get("input_values")),
        action=str(state["action"]),
        status=COMPLETE if no_signal else IN_PROGRESS,
        status_reason=NOT_WAITING if no_signal else DEPLOY_DATA_AVAILABLE,
    )


async def _published(ctx: ResourceContext, member: Member, pull: Mapping[str, JSON]) -> bool:
    row = await records(ctx).deployment(member.deployment_id)
    return row is not None and row.get("config_id") == pull.get("config_id")


def waiting(ctx: ResourceContext, pull: JSON) -> Mapping[str, JSON] | None:
    """The pull state if it is this operation's (a wait in progress)."""
    if isinstance(pull, Mapping) and pull.get("op") == ctx.operation_id:
        return pull
    return None


async def poll(ctx: ResourceContext, member: Member, pull: Mapping[str, JSON]) -> Applied | Wait:
    """The verdict once the agent reported (or the deadline passed), else
    how long to sleep."""
    row = await records(ctx).deployment(member.deployment_id)
    if row is None:
        raise ResourceFailure(f"{member.name}: its deployment record was deleted while waiting")
    status = row.get("status")
    if status in (COMPLETE, FAILED):
        return await _finish(ctx, member, pull, row)
    remaining = float(pull.get("deadline") or 0) - ctx.now()
    if remaining <= 0:
        reason = (
            f"Deployment to server failed: no result from server {pull.get('server_id')}'s "
            f"agent in time (waited for `convection agent` to report {member.name})"
        )
        await _save_result(ctx, member, pull, FAILED, reason, {})
        return Applied(_record(member, pull, {}, FAILED), reason)
    return Wait(min(remaining, POLL_SECONDS))


async def _finish(
    ctx: ResourceContext, member: Member, pull: Mapping[str, JSON], row: Mapping[str, JSON]
) -> Applied:
    outputs = dict(_mapping(row.get("output_values")))
    for key in LOG_OUTPUTS:
        text = outputs.get(key)
        if isinstance(text, str):
            outputs[key] = redact(text, ctx.secrets)
    status = str(row.get("status"))
    reason = redact(str(row.get("status_reason") or ""), ctx.secrets)
    # The agent reported stdout as it was; keep only the redacted copy.
    await _save_result(ctx, member, pull, status, reason, outputs)
    record = _record(member, pull, outputs, status)
    if status == FAILED:
        return Applied(record, f"Deployment to server failed: {reason}")
    return Applied(record)


async def _save_result(
    ctx: ResourceContext,
    member: Member,
    pull: Mapping[str, JSON],
    status: str,
    reason: str,
    outputs: Mapping[str, JSON],
) -> None:
    await records(ctx).save_deployment(
        member.deployment_id,
        server_id=str(pull.get("server_id")),
        config_id=str(pull.get("config_id")),
        input_values=_mapping(pull.get("input_values")),
        action=str(pull.get("action")),
        status=status,
        status_reason=reason,
        output_values=outputs,
    )


def _record(
    member: Member, pull: Mapping[str, JSON], outputs: Mapping[str, JSON], status: str
) -> dict[str, JSON]:
    """What the resource keeps, the same shape as push mode's record."""
    return {
        "id": member.deployment_id,
        "server": member.server,
        "digest": pull.get("digest"),
        "inputs": dict(_mapping(pull.get("inputs"))),
        "outputs": dict(outputs),
        "status": status,
    }


async def forget(ctx: ResourceContext, deployment_id: str | None, pull: JSON) -> None:
    """Delete the deployment's rows (its resource or member is deleted)."""
    if ctx.software is None or deployment_id is None:
        return
    if isinstance(pull, Mapping) and isinstance(pull.get("config_id"), str):
        await ctx.software.delete_config(str(pull["config_id"]))
    await ctx.software.delete_deployment(deployment_id)


async def push_row(
    ctx: ResourceContext, member: Member, props: Properties, action: str, applied: Applied
) -> None:
    """Show a push-mode run in Heat's software deployment API. The run is
    over, so the row is written once, with its verdict; its config is the
    source config (push mode has no agent to read a derived one)."""
    record = applied.record
    if ctx.software is None or record is None:
        return
    outputs = record.get("outputs")
    await ctx.software.save_deployment(
        member.deployment_id,
        server_id=member.server,
        config_id=str(props.get("config") or ""),
        input_values=dict(props.get("input_values") or {}),
        action=action,
        status=FAILED if applied.failure else str(record.get("status") or COMPLETE),
        status_reason=applied.failure or "Outputs received",
        output_values=outputs if isinstance(outputs, Mapping) else {},
    )


def _mapping(value: JSON) -> Mapping[str, JSON]:
    return value if isinstance(value, Mapping) else {}
