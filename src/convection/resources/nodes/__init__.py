"""Servers: the stack resources that stand for a node software runs on.

``Convection::Local::Node`` (:mod:`.local`) is a sandbox on this machine;
``Convection::SSH::Host`` (:mod:`.ssh`) is an existing machine over SSH.
Both accept OS::Nova::Server's properties (and ignore the ones that mean
nothing without Nova), so a template written for Nova with
``user_data_format: SOFTWARE_CONFIG`` runs once ``resource_registry`` maps
``OS::Nova::Server`` to either type (docs/software.md).

The seam for deployments is :func:`transport_for`: a deployment resource
finds its server with ``await ctx.peer(props["server"])`` and turns it into
the :class:`~convection.software.Transport` hooks run on. Everything a
transport needs is in the server's persisted ``data`` (written before the
server's create returned), so a deployment in another process, or after a
restart, reaches the same sandbox or the same pinned host key.
"""

from __future__ import annotations

from collections.abc import Mapping

from convection.resources._context import Peer
from convection.resources._plugin import ResourceFailure
from convection.resources.nodes._common import KIND_KEY, LOCAL_KIND, NOVA_PROPERTIES, SSH_KIND
from convection.resources.nodes._ssh_pools import close_ssh_pools
from convection.resources.nodes.local import LOCAL_NODE_TYPE, LocalNodeResource, local_transport
from convection.resources.nodes.ssh import SSH_HOST_TYPE, SSHHostResource, ssh_transport
from convection.software import Transport

#: The types :func:`transport_for` accepts as a deployment's server.
SERVER_TYPES = (LOCAL_NODE_TYPE, SSH_HOST_TYPE)


def transport_for(peer: Peer | None, *, server: str = "server") -> Transport:
    """The transport of the server ``peer`` (what ``ctx.peer(props["server"])``
    returned), ready to hand to :func:`convection.software.deploy`.

    Raises :class:`ResourceFailure` with a message for the user when
    ``peer`` is ``None`` (no such resource), is not a server type, or has
    not been created (no sandbox or pinned host key recorded yet).
    ``server`` is the property value, used in messages only.

    Cheap and synchronous: nothing connects until the transport is used.
    SSH transports share one connection per host per event loop, so call it
    from the loop that will use the transport (any coroutine does).
    """
    if peer is None:
        raise ResourceFailure(f"server {server!r} is not a resource of this stack")
    if peer.type not in SERVER_TYPES:
        raise ResourceFailure(
            f"resource {peer.name} is not a server: its type is {peer.type}, and a "
            f"deployment's server must be one of {', '.join(SERVER_TYPES)} (or "
            "OS::Nova::Server mapped to one of them in resource_registry)"
        )
    kind = _kind(peer.data)
    if kind is None:
        raise ResourceFailure(
            f"server {peer.name} ({peer.type}) is not ready: it is {peer.action}_"
            f"{peer.status} and has no node recorded yet"
        )
    if kind == LOCAL_KIND:
        return local_transport(peer)
    return ssh_transport(peer)


def _kind(data: Mapping[str, object]) -> str | None:
    kind = data.get(KIND_KEY)
    return kind if isinstance(kind, str) and kind in (LOCAL_KIND, SSH_KIND) else None


__all__ = [
    "LOCAL_NODE_TYPE",
    "NOVA_PROPERTIES",
    "SERVER_TYPES",
    "SSH_HOST_TYPE",
    "LocalNodeResource",
    "SSHHostResource",
    "close_ssh_pools",
    "transport_for",
]
