"""OS::Heat::DeployedServer as a plugin: the agent's credential and config."""

from __future__ import annotations

import asyncio

import pytest

from convection.resources.api import ApiAccess, InMemoryContext, ResourceFailure
from convection.resources.nodes.deployed_server import NEEDS_API, DeployedServer

PROPS = {"software_config_transport": "POLL_SERVER_HEAT", "name": "edge-1"}


def test_without_the_api_create_says_what_is_needed() -> None:
    with pytest.raises(ResourceFailure) as failed:
        asyncio.run(DeployedServer().create(InMemoryContext(), PROPS))
    assert failed.value.message == NEEDS_API


def test_one_token_per_server_and_heats_collect_config_shape() -> None:
    minted: list[str] = []
    revoked: list[str] = []

    def issue(server_id: str) -> str:
        minted.append(server_id)
        return f"cvt_secret_{len(minted)}"

    api = ApiAccess("http://h:8004", "proj", lambda r: "x", issue, revoked.append)
    ctx = InMemoryContext(resource_name="server", api=api)
    plugin = DeployedServer()
    asyncio.run(plugin.create(ctx, PROPS))
    asyncio.run(plugin.create(ctx, PROPS))  # a re-run after a crash: no second token
    assert minted == [ctx.physical_id]
    occ = asyncio.run(plugin.attribute(ctx, PROPS, "os_collect_config"))
    assert isinstance(occ, dict)
    agent = occ["convection"]
    assert (agent["url"], agent["server_id"], agent["token"]) == (
        "http://h:8004/v1/proj",
        ctx.physical_id,
        "cvt_secret_1",
    )
    assert occ["heat"]["password"] == "cvt_secret_1" and occ["heat"]["resource_name"] == "server"
    assert asyncio.run(plugin.attribute(ctx, PROPS, "name")) == "edge-1"
    asyncio.run(plugin.delete(ctx, PROPS))
    assert revoked == ["cvt_secret_1"]
