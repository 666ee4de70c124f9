"""Convection::Local::Node: an isolated node on this machine.

The node is a :class:`~convection.software.LocalNode` sandbox: its own
directory tree, a clean environment, every command in its own process group,
optionally as another OS user, and supervised services that outlive the
deploy step that asked for them.

Where the sandbox lives is the operator's choice, not the template's:
``$CONVECTION_NODE_ROOT/<physical resource name>`` (default
``/var/lib/convection/nodes`` for a root engine, else
``~/.local/share/convection/nodes``). A template cannot name the directory,
because deleting the node removes it. The path is recorded in ``data``
before anything is made, so a crashed create finds the same sandbox again,
and delete removes the recorded path even if the setting changed since.
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from pathlib import Path
from typing import Any, ClassVar, Final

from convection.common import JSON
from convection.resources._context import Peer, ResourceContext
from convection.resources._plugin import Properties, ResourceFailure, ResourcePlugin, Token
from convection.resources._schema import (
    AttributeSchema,
    AttributeType,
    PropertySchema,
    PropertyType,
)
from convection.resources.nodes._common import (
    KIND_KEY,
    LOCAL_KIND,
    NAME_PROPERTY,
    NOVA_PROPERTIES,
    network_attributes,
    node_name,
    server_attributes,
)
from convection.software import LocalNode, NodeError, node_root, safe_dir_name

LOCAL_NODE_TYPE: Final = "Convection::Local::Node"
#: The address every local node has, and the network it is on.
LOCAL_ADDRESS: Final = "127.0.0.1"
LOCAL_NETWORK: Final = "local"


class LocalNodeResource(ResourcePlugin):
    """A sandboxed node on this machine. Physical id: the sandbox's directory name."""

    type_name = LOCAL_NODE_TYPE
    properties_schema: ClassVar[Mapping[str, PropertySchema]] = {
        **NOVA_PROPERTIES,
        "name": PropertySchema(
            type=PropertyType.STRING,
            description=NAME_PROPERTY.description,
            update_allowed=True,
        ),
        "user": PropertySchema(
            type=PropertyType.STRING,
            description="OS user the node's processes run as (the engine must run as "
            "root to use another user); default: the engine's user.",
        ),
        "environment": PropertySchema(
            type=PropertyType.MAP,
            description="Environment variables every process on the node gets.",
            default={},
            update_allowed=True,
        ),
    }
    attributes_schema: ClassVar[Mapping[str, AttributeSchema]] = server_attributes(
        {
            "sandbox": AttributeSchema(
                "The node's directory on this machine.", AttributeType.STRING
            ),
            "user": AttributeSchema(
                "The OS user the node's processes run as.", AttributeType.STRING
            ),
        }
    )

    async def create(self, ctx: ResourceContext, props: Properties) -> Token:
        environment = _environment(props)
        sandbox = str(ctx.data.get("sandbox") or _sandbox_path(ctx.physical_resource_name))
        record: dict[str, JSON] = {
            KIND_KEY: LOCAL_KIND,
            "sandbox": sandbox,
            "name": node_name(props, ctx.physical_resource_name),
            "user": props.get("user") or None,
            "environment": dict(environment),
        }
        node = _node(record)  # an unknown user fails here, before anything is made
        # Persist before making anything: a re-run after a crash finds this path.
        await ctx.set_data(record)
        await ctx.set_physical_id(os.path.basename(sandbox))
        await _failing(node.prepare())
        return None

    async def update(self, ctx: ResourceContext, props: Properties) -> Token:
        """Name and environment apply to the next command; Nova's properties are ignored."""
        record = dict(ctx.data)
        record["name"] = node_name(props, ctx.physical_resource_name)
        record["environment"] = dict(_environment(props))
        _node(record)
        await ctx.set_data(record)
        return None

    async def delete(self, ctx: ResourceContext, props: Properties) -> Token:
        """Stop every service the node runs, then remove the sandbox."""
        sandbox = ctx.data.get("sandbox")
        if not isinstance(sandbox, str):
            return None  # the create never got as far as choosing a sandbox
        _check_removable(sandbox)
        # No user: stopping and removing need only the engine's rights, and
        # a node whose OS user was removed since must still be deletable.
        node = LocalNode(sandbox, name=str(ctx.data.get("name") or ctx.resource_name))
        await _failing(node.delete())
        return None

    async def check(self, ctx: ResourceContext, props: Properties) -> str | None:
        sandbox = ctx.data.get("sandbox")
        if not isinstance(sandbox, str) or not os.path.isdir(sandbox):
            return f"the node's sandbox {sandbox} is missing"
        return None

    async def attribute(self, ctx: ResourceContext, props: Properties, name: str) -> JSON:
        return _attributes(ctx.data).get(name)


def _attributes(data: Mapping[str, JSON]) -> dict[str, JSON]:
    attrs: dict[str, JSON] = {
        "name": data.get("name"),
        "instance_name": data.get("name"),
        "sandbox": data.get("sandbox"),
        "user": data.get("user"),
        **network_attributes(LOCAL_ADDRESS, LOCAL_NETWORK),
    }
    attrs["show"] = dict(attrs)
    return attrs


def _environment(props: Properties) -> Mapping[str, str]:
    """The node's variables; numbers are written as a template author means
    them (``PGPORT: 5432``), anything else must be a string."""
    env: dict[str, str] = {}
    for name, value in (props.get("environment") or {}).items():
        if isinstance(value, int | float) and not isinstance(value, bool):
            value = str(value)
        if not isinstance(value, str):
            raise ResourceFailure(
                f"properties.environment.{name}: a string is expected, not {type(value).__name__}"
            )
        env[str(name)] = value
    return env


def _sandbox_path(physical_name: str) -> str:
    return str(node_root() / safe_dir_name(physical_name))


def _check_removable(sandbox: str) -> None:
    """Refuse to remove a path that cannot be a sandbox we made (a damaged record)."""
    path = Path(sandbox)
    if not path.is_absolute() or len(path.parts) < 3 or path.name in ("", ".", ".."):
        raise ResourceFailure(f"recorded sandbox {sandbox!r} is not a node directory")


def _node(record: Mapping[str, Any]) -> LocalNode:
    env = record.get("environment") or {}
    try:
        return LocalNode(
            str(record["sandbox"]),
            name=str(record["name"]),
            user=record.get("user") or None,
            env=env,
        )
    except NodeError as exc:
        raise ResourceFailure(str(exc)) from None
    except ValueError as exc:  # an environment name a process cannot carry
        raise ResourceFailure(f"properties.environment: {exc}") from None


async def _failing(action: Any) -> None:
    """Await a node action; its errors are the user's to read."""
    try:
        await action
    except NodeError as exc:
        raise ResourceFailure(str(exc)) from None
    except OSError as exc:
        raise ResourceFailure(f"node sandbox: {exc.strerror or exc}") from None


def local_transport(peer: Peer) -> LocalNode:
    """The sandbox of a created local node (the seam's local half)."""
    return _node(peer.data)
