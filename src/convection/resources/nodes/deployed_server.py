"""OS::Heat::DeployedServer: a server the engine does not reach; its agent does.

Heat's type for machines deployed outside OpenStack: the stack never logs
in to them; an agent on the machine polls for its deployments and reports
back. Here that agent is ``convection agent``, and this resource's work is
to mint the agent's credential and say how to start it:

* create mints one token narrowed to this server (``ctx.api``'s
  ``issue_server_token``: it may read this server's deployment metadata and
  report its deployments, nothing else) and keeps it in ``data``, so a
  re-run after a crash returns the same one;
* ``os_collect_config`` carries what the agent needs: a ``convection``
  section (``url``, ``project``, ``server_id``, ``token`` and the command
  line) and, for ``POLL_SERVER_HEAT``, Heat's own ``heat`` section keys;
* delete revokes the token.

Deployments whose ``server`` is this resource run in pull mode
(``resources/software/_pull.py``). The physical id is the server id the
deployments and the agent use. Heat's other transports (CFN, Swift TempURL,
Zaqar) need services Convection does not have; they are accepted so Heat
templates validate, and the agent works the same whichever is chosen.
"""

from __future__ import annotations

import shlex
import uuid
from collections.abc import Mapping
from typing import ClassVar, Final

from convection.common import JSON
from convection.hot import AllowedValues
from convection.resources._context import ResourceContext
from convection.resources._plugin import Properties, ResourceFailure, ResourcePlugin, Token
from convection.resources._schema import (
    AttributeSchema,
    AttributeType,
    PropertySchema,
    PropertyType,
)
from convection.resources.nodes._common import KIND_KEY
from convection.resources.software._pull import PULL_KIND

DEPLOYED_SERVER_TYPE: Final = "OS::Heat::DeployedServer"
TRANSPORTS: Final = ("POLL_SERVER_CFN", "POLL_SERVER_HEAT", "POLL_TEMP_URL", "ZAQAR_MESSAGE")
#: How often the agent polls, as os-collect-config's ``polling_interval``.
POLLING_INTERVAL: Final = 30
NEEDS_API: Final = (
    "DeployedServer needs the API: run under `convection server` or set api_url "
    "(its agent reaches the stack through the REST API)"
)


class DeployedServer(ResourcePlugin):
    """A server deployed outside Convection, configured by its own agent."""

    type_name = DEPLOYED_SERVER_TYPE
    properties_schema: ClassVar[Mapping[str, PropertySchema]] = {
        "name": PropertySchema(
            type=PropertyType.STRING, description="Server name.", update_allowed=True
        ),
        "metadata": PropertySchema(
            type=PropertyType.MAP,
            description="Arbitrary key/value metadata for this server (ignored, as in Heat).",
            update_allowed=True,
        ),
        "software_config_transport": PropertySchema(
            type=PropertyType.STRING,
            description="How the server receives its software configuration metadata.",
            default="POLL_SERVER_CFN",
            update_allowed=True,
            constraints=(AllowedValues(TRANSPORTS),),
        ),
        "deployment_swift_data": PropertySchema(
            type=PropertyType.MAP,
            description="Swift container and object for POLL_TEMP_URL (accepted; unused).",
            default={},
            update_allowed=True,
        ),
    }
    attributes_schema: ClassVar[Mapping[str, AttributeSchema]] = {
        "name": AttributeSchema("Name of the server.", AttributeType.STRING),
        "os_collect_config": AttributeSchema(
            "The configuration for the server's agent to reach the API and "
            "retrieve its deployment data.",
            AttributeType.MAP,
        ),
        "networks": AttributeSchema(
            "Nova's shape: a map of network name to addresses (none are known).",
            AttributeType.MAP,
        ),
    }

    async def create(self, ctx: ResourceContext, props: Properties) -> Token:
        if ctx.api is None:
            raise ResourceFailure(NEEDS_API)
        server_id = ctx.physical_id or str(
            uuid.uuid5(uuid.NAMESPACE_URL, f"convection:server:{ctx.physical_resource_name}")
        )
        if not isinstance(ctx.data.get("token"), str):
            token = ctx.api.issue_server_token(server_id)
            await ctx.set_data(
                {
                    KIND_KEY: PULL_KIND,
                    "token": token,
                    "url": ctx.api.url,
                    "project": ctx.api.project,
                    "name": props.get("name") or ctx.physical_resource_name,
                }
            )
        await ctx.set_physical_id(server_id)
        return None

    async def update(self, ctx: ResourceContext, props: Properties) -> Token:
        if props.get("name"):
            await ctx.set_data({**ctx.data, "name": props["name"]})
        return None

    async def delete(self, ctx: ResourceContext, props: Properties) -> Token:
        token = ctx.data.get("token")
        if isinstance(token, str) and ctx.api is not None:
            ctx.api.revoke_token(token)
        return None

    async def attribute(self, ctx: ResourceContext, props: Properties, name: str) -> JSON:
        if name == "name":
            return ctx.data.get("name")
        if name == "networks":
            return {}
        if name == "os_collect_config":
            return collect_config(ctx, props)
        return None


def collect_config(ctx: ResourceContext, props: Properties) -> JSON:
    """Heat's ``os_collect_config`` shape with a ``convection`` section."""
    data = ctx.data
    url, token, server_id = data.get("url"), data.get("token"), ctx.physical_id
    if not isinstance(url, str) or not isinstance(token, str) or server_id is None:
        return None
    endpoint = f"{url}/v1/{data.get('project')}"
    agent: dict[str, JSON] = {
        "url": endpoint,
        "project": data.get("project"),
        "server_id": server_id,
        "token": token,
        "command": shlex.join(
            ["convection", "agent", "--url", endpoint, "--server-id", server_id, "--token", token]
        ),
    }
    config: dict[str, JSON] = {
        "collectors": ["convection"],
        "polling_interval": POLLING_INTERVAL,
        "convection": agent,
    }
    if props.get("software_config_transport") == "POLL_SERVER_HEAT":
        config["collectors"] = ["heat", "convection"]
        config["heat"] = {
            "auth_url": f"{url}/v1",
            "project_id": data.get("project"),
            "user_id": server_id,
            "password": token,
            "stack_id": ctx.stack_id,
            "resource_name": ctx.resource_name,
        }
    return config
