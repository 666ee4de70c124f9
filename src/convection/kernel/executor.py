"""The executor seam: where a claimed node's job runs.

The kernel decides *what* runs (it claims nodes under leases and journals
their outcomes); an executor decides *where*. A job is named by ids only
(traversal id, node key) and reads what it needs from the store, so an
executor backed by a task queue can stand in for the in-process one
(``convection.runtime``) without the kernel changing.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from typing import Protocol


class Executor(Protocol):
    """``submit`` starts a job, ``drain`` waits for all of them."""

    @property
    def running(self) -> int: ...

    @property
    def peak(self) -> int: ...

    def submit(self, job_id: tuple[str, str], start: Callable[[], Awaitable[None]]) -> None: ...

    async def drain(self) -> None: ...
