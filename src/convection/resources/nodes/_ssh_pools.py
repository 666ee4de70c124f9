"""SSH connections shared by every deployment an event loop runs.

Why here and not per transport: a stack with fifty deployments on one host
should make one SSH connection, not fifty, and keep under sshd's
MaxSessions. :func:`convection.resources.nodes.transport_for` is called once
per deployment, so the pools outlive it: one per event loop (an asyncssh
connection belongs to its loop), per concurrency limit and pinned host key.
"""

from __future__ import annotations

import asyncio
import contextlib
import weakref
from typing import TYPE_CHECKING

if TYPE_CHECKING:  # imported on use: it brings asyncssh
    from convection.software import SSHPool

_POOLS: weakref.WeakKeyDictionary[
    asyncio.AbstractEventLoop, dict[tuple[int, str], tuple[SSHPool, asyncio.Task[None]]]
] = weakref.WeakKeyDictionary()


def shared_pool(sessions_per_host: int, host_key: str) -> SSHPool:
    """This loop's pool for hosts with this limit and pinned key."""
    loop = asyncio.get_running_loop()
    pools = _POOLS.setdefault(loop, {})
    key = (sessions_per_host, host_key)
    found = pools.get(key)
    if found is None:
        from convection.software import SSHPool

        pool = SSHPool(sessions_per_host=sessions_per_host)
        found = pools[key] = (pool, loop.create_task(_keep(pool)))
    return found[0]


async def _keep(pool: SSHPool) -> None:
    """Hold ``pool`` open for the life of its event loop.

    Why a task: connections are reused by every deployment the loop runs,
    so nothing owns their end. ``asyncio.run`` cancels leftover tasks as its
    loop finishes, and this one then closes the connections cleanly instead
    of leaving them to the garbage collector.
    """
    try:
        await asyncio.Event().wait()
    finally:
        await pool.close()


async def close_ssh_pools() -> None:
    """Close the connections this event loop's SSH hosts opened (at shutdown)."""
    pools = _POOLS.pop(asyncio.get_running_loop(), {})
    for _, keeper in pools.values():
        keeper.cancel()
    for _, keeper in pools.values():
        with contextlib.suppress(asyncio.CancelledError):
            await keeper
