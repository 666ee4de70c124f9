"""The embedded runtime: jobs as tasks on this process's event loop.

It implements the kernel's executor seam (``convection.kernel.Executor``)
without importing the kernel: the seam is a Protocol, and the runtime sits
below the kernel in the layers.
"""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable


class AsyncioExecutor:
    """Runs each job as an asyncio task; counts them for the walker's bound."""

    __slots__ = ("_tasks", "peak")

    def __init__(self) -> None:
        self._tasks: dict[tuple[str, str], asyncio.Task[None]] = {}
        #: Most jobs ever running at once (tests check the bound with it).
        self.peak = 0

    @property
    def running(self) -> int:
        return len(self._tasks)

    def submit(self, job_id: tuple[str, str], start: Callable[[], Awaitable[None]]) -> None:
        task = asyncio.get_running_loop().create_task(_run(start))
        self._tasks[job_id] = task
        self.peak = max(self.peak, len(self._tasks))
        task.add_done_callback(lambda _: self._tasks.pop(job_id, None))

    async def drain(self) -> None:
        """Wait until every submitted job (and any they submit) is done."""
        while self._tasks:
            await asyncio.gather(*list(self._tasks.values()), return_exceptions=True)


async def _run(start: Callable[[], Awaitable[None]]) -> None:
    await start()
