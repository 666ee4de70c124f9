"""``--wait`` against a server: the server runs the engine, the CLI watches.

:class:`ServerWatch` stands where the embedded engine stands in
:func:`convection.cli.progress.wait_for`, so the same polling loop draws
the same progress in both modes; it does no work, it only returns once the
watch's stop condition holds. The loop backs off while nothing changes
(:func:`backoff`), since every poll is now HTTP requests to a shared server
rather than a read of a local file.
"""

from __future__ import annotations

from collections.abc import Callable, Coroutine
from typing import Any, Protocol


class Runner(Protocol):
    """What ``--wait`` runs while it polls: the embedded engine, or (against
    a server, which runs the engine) something that only waits."""

    def run(self, *, until: Callable[[], bool] | None = None) -> Coroutine[Any, Any, None]: ...


#: How often the stop condition is looked at (seconds); it is a flag, not a request.
CHECK_SECONDS = 0.05
#: Growth of the polling interval per poll that saw nothing new.
BACKOFF_FACTOR = 1.5


class ServerWatch:
    """The engine's stand-in when a server does the work."""

    async def run(self, *, until: Callable[[], bool] | None = None) -> None:
        import asyncio  # here: ``--wait``'s module is imported by every command

        while until is None or not until():
            await asyncio.sleep(CHECK_SECONDS)


def backoff(base: float, quiet_polls: int, ceiling: float) -> float:
    """The next polling interval: ``base`` after a change, growing by
    :data:`BACKOFF_FACTOR` per quiet poll up to ``ceiling``."""
    return min(ceiling, max(base, base * BACKOFF_FACTOR**quiet_polls))
