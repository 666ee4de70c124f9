"""One poll of the agent, and the loop around it.

For each config in its server's metadata (Heat's order: by config name)
that it has not reported: run it with the push mode's hooks, then report
the verdict to the deployment that holds that config, if that deployment
still waits (IN_PROGRESS; Heat likewise ignores a signal to a deployment
that is not). A config without a deployment (yet) is left for the next
poll: its run is recorded on the node, so it is not run again.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Mapping
from dataclasses import dataclass
from types import MappingProxyType

from convection.agent.client import AgentClient, AgentHttpError
from convection.agent.state import AgentState
from convection.common import JSON
from convection.software import (
    FAILED,
    DeployOutcome,
    DerivedConfig,
    DerivedInput,
    HookRegistry,
    InvalidConfig,
    LocalNode,
    SoftwareError,
    SourceConfig,
    default_registry,
    deploy,
)

log = logging.getLogger("convection.agent")

IN_PROGRESS = "IN_PROGRESS"


def parse_derived(doc: Mapping[str, JSON]) -> DerivedConfig:
    """A metadata item (Heat's ``format_software_config`` of a derived
    config) as the :class:`DerivedConfig` the hooks take."""
    config_id = doc.get("id")
    if not isinstance(config_id, str):
        raise InvalidConfig("must be a string", field="id")
    source = SourceConfig.from_json(doc)
    inputs = tuple(_input(i) for i in doc.get("inputs") or [] if isinstance(i, Mapping))
    return DerivedConfig(
        id=config_id,
        name=str(doc.get("name") or ""),
        group=source.group,
        config=source.config,
        options=MappingProxyType(dict(source.options)),
        inputs=inputs,
        outputs=source.outputs,
        secret_inputs=frozenset({"deploy_password"}),
    )


def _input(item: Mapping[str, JSON]) -> DerivedInput:
    description = item.get("description")
    return DerivedInput(
        name=str(item.get("name")),
        value=item.get("value"),
        type=str(item.get("type") or "String"),
        description=description if isinstance(description, str) else None,
        default=item.get("default"),
        replace_on_change=bool(item.get("replace_on_change", False)),
    )


@dataclass
class Agent:
    """The pull agent of one server."""

    client: AgentClient
    state: AgentState
    hooks: HookRegistry | None = None

    def __post_init__(self) -> None:
        self.node = LocalNode(self.state.node_root, name=self.client.server_id)
        self.hooks = self.hooks or default_registry()

    async def poll_once(self) -> int:
        """Run and report what is new; the number of configs run."""
        configs = self.client.metadata()
        pending = [c for c in configs if not self.state.reported(str(c.get("id")))]
        if not pending:
            return 0
        by_config = {str(d.get("config_id")): d for d in self.client.deployments()}
        for doc in pending:
            await self._handle(doc, by_config.get(str(doc.get("id"))))
        return len(pending)

    async def _handle(self, doc: Mapping[str, JSON], deployment: Mapping[str, JSON] | None) -> None:
        config_id = str(doc.get("id"))
        if deployment is None:
            log.info("config %s has no deployment yet; next poll", config_id)
            return
        outcome = await self._run(doc)
        deployment_id = str(deployment.get("id"))
        if deployment.get("status") == IN_PROGRESS:
            self.client.report(
                deployment_id,
                {
                    "status": outcome.status,
                    "status_reason": outcome.status_reason,
                    "output_values": dict(outcome.output_values),
                },
            )
        self.state.mark_reported(config_id, deployment_id, outcome.status)
        log.info("deployment %s (config %s): %s", deployment_id, config_id, outcome.status)

    async def _run(self, doc: Mapping[str, JSON]) -> DeployOutcome:
        """The verdict of running ``doc``; errors (a bad config, a run cut
        short by an earlier crash) are a FAILED verdict with their reason."""
        try:
            derived = parse_derived(doc)
            return await deploy(derived, self.node, hooks=self.hooks)
        except (SoftwareError, InvalidConfig) as exc:
            return DeployOutcome(FAILED, str(exc), {})

    async def run(self, *, interval: float, once: bool = False) -> None:
        """Poll until cancelled (or once); an unreachable API is retried."""
        while True:
            try:
                await self.poll_once()
            except AgentHttpError as exc:
                if once:
                    raise
                log.warning("poll failed: %s; retrying in %.0f s", exc, interval)
            if once:
                return
            await asyncio.sleep(interval)
