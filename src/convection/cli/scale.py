"""What ``convection engine`` and ``convection worker`` share besides
their work: a name that says where they run, the task queue, and their
background tasks (``kernel.presence``: notices and heartbeats)."""

from __future__ import annotations

import asyncio
import logging
import os
import socket
import uuid
from collections.abc import Coroutine
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from convection.runtime import JobQueue

_log = logging.getLogger(__name__)


def process_name(kind: str) -> str:
    """A lease owner that says where the process runs: ``worker-host-pid-xxxx``."""
    return f"{kind}-{socket.gethostname()}-{os.getpid()}-{uuid.uuid4().hex[:6]}"


async def open_queue(url: str) -> JobQueue:
    """The task queue on the store's database, its tables created if absent."""
    from convection.runtime import JobQueue
    from convection.store import libpq_url

    queue = JobQueue(libpq_url(url))
    await queue.open()
    await queue.ensure_schema()
    return queue


def background(*coroutines: Coroutine[Any, Any, None]) -> list[asyncio.Task[None]]:
    return [asyncio.ensure_future(c) for c in coroutines]
