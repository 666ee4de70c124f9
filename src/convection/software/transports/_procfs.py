"""What ``/proc`` says about processes: their state, start time and group.

Used to tell when a killed process group is really gone (SIGKILL is
delivered asynchronously) and whether a recorded pid is still the process
that was recorded (pids are reused).
"""

from __future__ import annotations

import asyncio
import os
import time
from pathlib import Path


def stat_fields(pid: int) -> list[str] | None:
    """``/proc/PID/stat`` fields after the command name (state is [0]), or None."""
    try:
        text = Path(f"/proc/{pid}/stat").read_text()
    except OSError:
        return None
    return text[text.rindex(")") + 2 :].split()


def start_time(pid: int) -> int | None:
    """The kernel's start time of ``pid`` (clock ticks since boot)."""
    fields = stat_fields(pid)
    return int(fields[19]) if fields else None


def group_alive(pgid: int) -> bool:
    """Whether any live (non-zombie) process is in process group ``pgid``."""
    if not os.path.isdir("/proc"):
        try:
            os.killpg(pgid, 0)
        except (ProcessLookupError, PermissionError):
            return False
        return True
    with os.scandir("/proc") as entries:
        for entry in entries:
            if entry.name.isdigit():
                fields = stat_fields(int(entry.name))
                if fields and fields[0] != "Z" and int(fields[2]) == pgid:
                    return True
    return False


async def wait_group_gone(pgid: int, seconds: float) -> bool:
    """Poll until no live process is left in ``pgid``; False on timeout."""
    deadline = time.monotonic() + seconds
    while group_alive(pgid):
        if time.monotonic() >= deadline:
            return False
        await asyncio.sleep(0.02)
    return True
