"""Run one derived config on one node, at most once: heat-agents' 55-heat-config.

The agent's rule, kept here: before running a hook it writes the derived
config to ``deployed/<id>.json``, so a deployment runs once *even if it
fails*, and after the hook it writes the signal it sends to
``deployed/<id>.notify.json``. Convection reads both on every call:

=================  ==================================================
notify present     the run finished earlier: its recorded outcome is
                   returned (``replayed``), nothing runs again
marker only        the run was interrupted (engine crash, lost SSH
                   connection, reboot): it runs again only when the
                   config says ``options: {rerun_safe: true}``; otherwise
                   :class:`DeploymentInterrupted` says why and how to force it
neither            a new run: marker, hook, notify, verdict
=================  ==================================================

Reading both and writing the marker when there is neither is one round
trip (:meth:`Transport.apply` with ``only_if_absent``), so the marker is on
the node before the hook is called. Over SSH a new run with outputs takes
four channels: that one, the script hook's run (its directories, old
outputs and script go with it), the outputs, the notify record.

The marker key is the derived config id, which the deployment makes from
its id and the engine's operation id (:func:`derived_config_id`): the same
for a job re-run after a crash, new for the next action.

The run's timeout is ``options.timeout`` (seconds) when the config sets it,
else the caller's default, :data:`DEFAULT_TIMEOUT` (30 minutes). Heat sets
no per-script limit: a hung script holds the deployment until the stack's
own timeout (60 minutes by default) fails everything at once. Half of that
fails the one deployment first, with its output, while leaving long
builds room; a config that needs longer says so.
"""

from __future__ import annotations

import functools
import json
import logging
import posixpath
import time
from collections.abc import Collection
from typing import Any, Final, Protocol, runtime_checkable

from convection.software.derived import (
    TIMEOUT_OPTION,
    DerivedConfig,
    resolve_component,
)
from convection.software.errors import DeploymentInterrupted, InvalidConfig
from convection.software.hooks import default_registry
from convection.software.hooks.base import HookRegistry, safe_id
from convection.software.outcome import (
    COMPLETE,
    STANDARD_OUTPUTS,
    DeployOutcome,
    DeployResult,
    outcome_of,
)
from convection.software.transports.base import FileBatch, FileWrite, Transport

DEFAULT_TIMEOUT: Final = 1800.0
DEPLOYED_DIR: Final = "deployed"

log = logging.getLogger("convection.software")


@runtime_checkable
class ServiceHost(Protocol):
    """A node that supervises services configs ask for (a local node)."""

    async def start_requested_services(self) -> list[str]: ...


@functools.cache
def _default_hooks() -> HookRegistry:
    """The default registry, built once per process (as the deployment
    resources do): scanning every installed distribution for entry points
    costs tens of milliseconds, more than a deployment's own work."""
    return default_registry()


def run_timeout(config: DerivedConfig, default: float) -> float:
    """``options.timeout`` when set (a positive number), else ``default``."""
    value = config.options.get(TIMEOUT_OPTION)
    if value is None:
        return default
    if isinstance(value, bool) or not isinstance(value, int | float) or value <= 0:
        raise InvalidConfig("must be a positive number of seconds", field="options.timeout")
    return float(value)


def marker_paths(workdir: str, config_id: str) -> tuple[str, str]:
    """``(marker, notify)`` paths of a deployment on its node."""
    base = posixpath.join(workdir, DEPLOYED_DIR, config_id)
    return base + ".json", base + ".notify.json"


async def deploy(
    derived: DerivedConfig,
    transport: Transport,
    *,
    hooks: HookRegistry | None = None,
    default_timeout: float = DEFAULT_TIMEOUT,
    secrets: Collection[str] = (),
) -> DeployOutcome:
    """Run ``derived`` on the node behind ``transport`` and judge the result.

    A failed run is an outcome with status FAILED; exceptions mean no result
    could be had (unreachable node, lost connection, an interrupted earlier
    run that is not safe to repeat). ``secrets`` are redacted from reasons,
    with the config's own secret inputs.
    """
    config_id = safe_id(derived)
    config = resolve_component(derived)
    if config is None:
        reason = f"no component config for action {derived.action}; nothing to run"
        return DeployOutcome(COMPLETE, reason, {k: None for k in STANDARD_OUTPUTS}, skipped=True)
    hook = (hooks or _default_hooks()).get(config.group)
    timeout = run_timeout(config, default_timeout)
    hidden = (*secrets, *config.secret_values())
    workdir = await transport.workdir()
    marker, notify = marker_paths(workdir, config_id)
    started: dict[str, Any] = {"config": config.to_json(), "digest": config.digest}
    started.update(attempt=1, started_at=time.time())
    # One round trip: read the record and the marker, and write the marker
    # only when there is neither (a new run). The marker is on the node
    # before the hook is even called.
    found = await transport.apply(
        FileBatch(
            make_dirs=(posixpath.join(workdir, DEPLOYED_DIR),),
            read=(notify, marker),
            write=(FileWrite(marker, json.dumps(started).encode()),),
            only_if_absent=True,
        )
    )
    recorded = found[notify]
    if recorded is not None:
        log.info(
            "deployment %s on %s already ran; using its record", config_id, transport.node_name
        )
        return outcome_of(
            _result_from_record(recorded), config.outputs, secrets=hidden, replayed=True
        )
    previous = found[marker]
    if previous is not None:
        started["attempt"] = _next_attempt(transport, config, marker, previous)
        await transport.put_file(marker, json.dumps(started).encode(), mode=0o600)
    log.info("deployment %s on %s: running hook %s", config_id, transport.node_name, config.group)
    result = await hook.run(config, transport, timeout=timeout)
    await transport.put_file(notify, json.dumps(_record(result)).encode(), mode=0o600)
    outcome = outcome_of(result, config.outputs, secrets=hidden)
    if outcome.ok and isinstance(transport, ServiceHost):
        await transport.start_requested_services()
    log.info("deployment %s on %s: %s", config_id, transport.node_name, outcome.status)
    return outcome


def _next_attempt(transport: Transport, config: DerivedConfig, marker: str, previous: bytes) -> int:
    """The attempt number of a rerun_safe re-run of an interrupted run."""
    if not config.rerun_safe:
        raise DeploymentInterrupted(config.id, transport.node_name, marker)
    log.info(
        "deployment %s on %s was interrupted; re-running (rerun_safe)",
        config.id,
        transport.node_name,
    )
    try:
        return int(json.loads(previous).get("attempt", 1)) + 1
    except (ValueError, AttributeError, TypeError):
        return 2


def _record(result: DeployResult) -> dict[str, Any]:
    return {
        "details": result.signal_details(),
        "timed_out": result.timed_out,
        "timeout": result.timeout,
        "truncated": result.truncated,
        "finished_at": time.time(),
    }


def _result_from_record(data: bytes) -> DeployResult:
    record = json.loads(data)
    details = dict(record.get("details") or {})
    status = details.pop("deploy_status_code", 0)
    return DeployResult(
        outputs={k: v for k, v in details.items() if k not in STANDARD_OUTPUTS},
        stdout=str(details.get("deploy_stdout") or ""),
        stderr=str(details.get("deploy_stderr") or ""),
        status_code=int(status or 0),
        timed_out=bool(record.get("timed_out")),
        truncated=bool(record.get("truncated")),
        timeout=record.get("timeout"),
    )
