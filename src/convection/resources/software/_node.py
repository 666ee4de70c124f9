"""Finding the node a deployment runs on, and the hook registry it uses.

A deployment names its server with ``get_resource``; the server is another
resource of the same stack, read through ``ctx.peer``. Turning that peer
into a :class:`~convection.software.Transport` is the node types' business
(``convection.resources.nodes.transport_for``), so this module only adapts
what they return (a transport, an awaitable of one, or an async context
manager that closes a connection pool) to one ``async with``.
"""

from __future__ import annotations

import functools
import inspect
from collections.abc import AsyncIterator, Callable
from contextlib import asynccontextmanager
from typing import Any

from convection.resources._context import Peer, ResourceContext
from convection.resources._plugin import ResourceFailure
from convection.software import HookRegistry, Transport, default_registry

#: How a peer becomes a transport; ``None`` means the node types' own.
TransportFactory = Callable[[Peer], Any]


@functools.cache
def hook_registry() -> HookRegistry:
    """One registry per process: entry points load once, on first use."""
    return default_registry()


def _node_types_factory() -> TransportFactory:
    try:
        from convection.resources.nodes import transport_for
    except ImportError:
        raise ResourceFailure(
            "no node types are installed (convection.resources.nodes): a deployment "
            "needs a Convection::Local::Node or Convection::SSH::Host server"
        ) from None
    factory: TransportFactory = transport_for
    return factory


async def find_server(ctx: ResourceContext, ref: str, where: str) -> Peer:
    """The server resource ``ref`` names, or a clear error at ``where``."""
    peer = await ctx.peer(ref)
    if peer is None:
        raise ResourceFailure(
            f"Property error: {where}: {ref!r} is not a resource of this stack; a "
            "deployment's server must be a server resource in the same stack "
            "(get_resource: NAME)"
        )
    return peer


@asynccontextmanager
async def open_transport(
    peer: Peer, factory: TransportFactory | None = None
) -> AsyncIterator[Transport]:
    """A transport to ``peer``, open for the body of the ``with``."""
    made = (factory or _node_types_factory())(peer)
    if hasattr(made, "__aenter__"):
        async with made as transport:
            yield transport
        return
    if inspect.isawaitable(made):
        made = await made
    if not isinstance(made, Transport):
        raise ResourceFailure(f"resource {peer.name} ({peer.type}) is not a server")
    yield made
