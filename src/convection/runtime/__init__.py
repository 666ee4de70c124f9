"""Where jobs run: implementations of the kernel's executor seam.

The embedded default is :class:`AsyncioExecutor`, jobs as tasks on the
engine's event loop; :class:`JobQueue` carries jobs to ``convection
worker`` processes on procrastinate (PostgreSQL). It imports nothing of Convection, not even the
kernel whose ``Executor`` protocol it satisfies.
"""

from convection.runtime.asyncio_executor import AsyncioExecutor
from convection.runtime.queue import DEFAULT_QUEUE, JobQueue

__all__ = ["DEFAULT_QUEUE", "AsyncioExecutor", "JobQueue"]
