"""A process's presence among others on one PostgreSQL store: it hears
their notices (new work, its workers' ends) and beats its own row in
``processes`` (``convection status``, ``/metrics``). Engines, workers and
API servers all use it; on SQLite nothing else runs, and neither is used.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import os
import socket
from collections.abc import Callable, Sequence
from datetime import UTC, datetime
from typing import Any

from convection.kernel.walker import Kernel
from convection.store import (
    BEAT_SECONDS,
    DONE_CHANNEL,
    WORK_CHANNEL,
    ProcessRecord,
    Store,
    notices,
)

_log = logging.getLogger(__name__)


async def hear(url: str, kernel: Kernel[Any, Any]) -> None:
    """Wake ``kernel`` on new work and on its workers' ends, until cancelled."""
    async for notice in notices(url, (WORK_CHANNEL, DONE_CHANNEL), on_connect=kernel.reconnected):
        if notice.channel == DONE_CHANNEL:
            tid, _, key = notice.payload.partition(" ")
            kernel.heard(tid, key)
        else:
            kernel.rescan_soon()


async def beat(
    store: Store,
    *,
    owner: str,
    kind: str,
    queues: Sequence[str],
    concurrency: int,
    running: Callable[[], int],
    stats: Callable[[], dict[str, float]],
) -> None:
    """Write this process's row every few seconds until cancelled; forget
    it on the way out (a clean stop)."""
    started = datetime.now(UTC)
    host, pid = socket.gethostname(), os.getpid()
    try:
        while True:
            record = ProcessRecord(
                id=owner, kind=kind, host=host, pid=pid, queues=tuple(queues),
                concurrency=concurrency, running=running(), stats=stats(),
                started_at=started,
            )  # fmt: skip
            try:
                store.beat(record)
            except Exception as exc:  # the store is away: beat again later
                _log.warning("heartbeat: %r", exc)
            await asyncio.sleep(BEAT_SECONDS)
    finally:
        with contextlib.suppress(Exception):
            store.forget_process(owner)
