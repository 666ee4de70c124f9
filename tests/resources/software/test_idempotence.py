"""The deployment plugin's own crash-safety record, driven directly with a
context whose ``operation_id`` a test keeps (a job re-run after a crash) or
changes (the next action), on a real local node."""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any

import pytest

from convection.resources._context import InMemoryContext, Peer
from convection.resources._plugin import ResourceFailure, ResourcePlugin
from convection.resources.nodes import LocalNodeResource
from convection.resources.software import SoftwareConfig, SoftwareDeployment


def made(plugin: ResourcePlugin, name: str, props: dict[str, Any]) -> Peer:
    """Create a real resource and return it as another resource's peer."""
    ctx = InMemoryContext(resource_name=name)
    asyncio.run(plugin.create(ctx, props))
    return Peer(
        name,
        plugin.type_name,
        "CREATE",
        "COMPLETE",
        ctx.physical_id,
        ctx.physical_id,
        props,
        {},
        dict(ctx.data),
    )


def setup(log: Path, exit_code: int) -> tuple[dict[str, Any], dict[str, Peer]]:
    node = made(LocalNodeResource(), "node", {"name": None, "user": None, "environment": {}})
    script = f'#!/bin/sh\necho run >> "{log}"\nexit {exit_code}\n'
    config = made(SoftwareConfig(), "cfg", {"group": "script", "config": script})
    props = {
        "config": config.physical_id,
        "server": node.physical_id,
        "input_values": {},
        "actions": ["CREATE", "UPDATE"],
        "name": None,
        "signal_transport": "CFN_SIGNAL",
    }
    return props, {"node": node, "cfg": config}


def test_a_recorded_success_is_never_run_again(tmp_path: Path, node_root: Path) -> None:
    log = tmp_path / "log"
    props, peers = setup(log, 0)
    ctx = InMemoryContext(resource_name="dep", peers=peers, operation_id="op-1")
    plugin = SoftwareDeployment()
    asyncio.run(plugin.create(ctx, props))
    asyncio.run(plugin.create(ctx, props))  # the engine re-ran the job
    # lost the record (a crash before it was written): the node's result replays
    fresh = InMemoryContext(
        resource_name="dep", peers=peers, operation_id="op-1", physical_id=ctx.physical_id
    )
    asyncio.run(plugin.create(fresh, props))
    assert log.read_text().splitlines() == ["run"]
    assert fresh.data["last"]["outputs"]["deploy_status_code"] == 0  # type: ignore[index]


def test_a_recorded_failure_stays_a_failure(tmp_path: Path, node_root: Path) -> None:
    log = tmp_path / "log"
    props, peers = setup(log, 5)
    ctx = InMemoryContext(resource_name="dep", peers=peers, operation_id="op-1")
    plugin = SoftwareDeployment()
    with pytest.raises(ResourceFailure) as first:
        asyncio.run(plugin.create(ctx, props))
    with pytest.raises(ResourceFailure) as again:
        asyncio.run(plugin.create(ctx, props))
    assert again.value.message == first.value.message
    assert "non-zero status code: 5" in first.value.message
    assert log.read_text().splitlines() == ["run"]
