"""Where jobs run: implementations of the kernel's executor seam.

The embedded default is :class:`AsyncioExecutor`, jobs as tasks on the
engine's event loop. It imports nothing of Convection, not even the
kernel whose ``Executor`` protocol it satisfies.
"""

from convection.runtime.asyncio_executor import AsyncioExecutor

__all__ = ["AsyncioExecutor"]
